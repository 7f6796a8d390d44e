/* file.c - the project's one way to read and write files: whole-file reads, output-path checks made before
 * any work starts, and atomic replacement (mkstemp in the target's directory, fsync, rename) that never
 * follows a symlink out of that directory, never replaces a read-only file and cleans up its own stale
 * temporary files.
 * Not here: formats (src/io) or what a command writes where (tools/). No message ever names a temp file.
 * Entry points: hsdag_read_file, hsdag_out_check, hsdag_out_dir_check, hsdag_write_file_atomic,
 * hsdag_data_find.
 */
#include "hsdag/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Temp files are "<dir>/.<base>~hsdag-tmp-<pid>-XXXXXX": hidden, recognisable by any later write into the
 * same directory, and carrying the writer's pid so a dead writer's file can be told from a live one's. */
#define FILE_TMP_TAG "~hsdag-tmp-"

/* ---- installed data ---- */
#ifndef HSDAG_SHARE_DIR
#define HSDAG_SHARE_DIR "/usr/local/share/hsdag"
#endif

int hsdag_data_find(char *path, size_t cap, const char *rel, const char *what, hsdag_err *e)
{
    char exe[2048] = "", tried[2048] = "";
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *sl = strrchr(exe, '/');
        if (sl) *sl = 0;
    } else {
        exe[0] = 0;
    }
    const char *env = getenv("HSDAG_DATA");
    char cand[4][4096];
    int nc = 0;
    /* never the working directory: a checked-out tree there could plant a policy, or the profiler's script */
    if (env && *env) snprintf(cand[nc++], sizeof cand[0], "%s/%s", env, rel);
    if (exe[0]) {
        snprintf(cand[nc++], sizeof cand[0], "%s/../%s", exe, rel);
        snprintf(cand[nc++], sizeof cand[0], "%s/../share/hsdag/%s", exe, rel);
    }
    snprintf(cand[nc++], sizeof cand[0], "%s/%s", HSDAG_SHARE_DIR, rel);
    for (int i = 0; i < nc; i++) {
        if (access(cand[i], R_OK) == 0) {
            if (strlen(cand[i]) >= cap) return hsdag_err_set(e, HSDAG_EINVAL, "%s: path too long", what);
            strcpy(path, cand[i]);
            return 0;
        }
        size_t tl = strlen(tried);
        snprintf(tried + tl, sizeof tried - tl, "%s%s", i ? ", " : "", cand[i]);
    }
    return hsdag_err_set(e, HSDAG_EIO, "no %s (tried %s; set HSDAG_DATA)", what, tried);
}

/* ---- reading ---- */
int hsdag_read_file(char **buf, size_t *len, const char *path, size_t max_bytes, hsdag_err *e)
{
    *buf = NULL;
    *len = 0;
    if (!max_bytes) max_bytes = (size_t)1 << 30;
    FILE *f = fopen(path, "rb");
    if (!f) return hsdag_err_set(e, HSDAG_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return hsdag_err_set(e, HSDAG_EIO, "%s: is a directory", path);
    }
    size_t cap = 0, n = 0;
    char *b = NULL;
    int rc = 0;
    for (;;) {
        if (hsdag_grow((void **)&b, &cap, n + 65536 + 1, 1) < 0) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory reading file", path);
            break;
        }
        size_t got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (n > max_bytes) {
            rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: file larger than %zu bytes", path, max_bytes);
            break;
        }
        if (got == 0) {
            if (ferror(f)) rc = hsdag_err_set(e, HSDAG_EIO, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        hsdag_free(b);
        return rc;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

/* ---- path pieces ---- */

/* dir = everything before the last '/' ("." if none, "/" for "/x"); base = the rest. 0 or -1 (too long,
 * empty base). */
static int file_split(const char *path, char *dir, char *base)
{
    size_t n = strlen(path);
    if (n == 0 || n >= PATH_MAX || path[n - 1] == '/') return -1;
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
        strcpy(base, path);
    } else {
        size_t dl = (size_t)(slash - path);
        if (dl == 0) dl = 1; /* "/x" */
        memcpy(dir, path, dl);
        dir[dl] = 0;
        strcpy(base, slash + 1);
    }
    return 0;
}

/* 1 if the process may write st's file: its mode bits for root (root bypasses permissions, yet a file
 * someone made read-only is not to be replaced), access(2) otherwise. */
static int file_writable(const char *path, const struct stat *st)
{
    if (geteuid() == 0) return (st->st_mode & 0222) != 0;
    return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/* Resolves path to the file a write really replaces: path itself, or the target of a symlink that stays in
 * path's directory. *exists tells whether it exists; *st is its stat then. Returns 0 or a status. */
static int file_resolve(const char *path, char *target, int *exists, struct stat *st, hsdag_err *e)
{
    char dir[PATH_MAX], base[PATH_MAX];
    if (file_split(path, dir, base) < 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "%s: not a file name (empty, too long or ending in '/')", path);
    struct stat ls;
    *exists = 0;
    strcpy(target, path);
    if (lstat(path, &ls) < 0) {
        if (errno != ENOENT) return hsdag_err_set(e, HSDAG_EIO, "%s: %s", path, strerror(errno));
    } else if (S_ISLNK(ls.st_mode)) {
        char real_dir[PATH_MAX], real[PATH_MAX], rdir[PATH_MAX], rbase[PATH_MAX];
        if (!realpath(dir, real_dir))
            return hsdag_err_set(e, HSDAG_EIO, "%s: directory %s: %s", path, dir, strerror(errno));
        if (!realpath(path, real))
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "%s: is a symbolic link to a missing file; refusing to follow it", path);
        if (file_split(real, rdir, rbase) < 0 || strcmp(rdir, real_dir) != 0)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "%s: is a symbolic link out of its directory; refusing to follow it", path);
        strcpy(target, real);
        if (stat(target, st) < 0) return hsdag_err_set(e, HSDAG_EIO, "%s: %s", path, strerror(errno));
        *exists = 1;
    } else {
        *st = ls;
        *exists = 1;
    }
    if (*exists) {
        if (S_ISDIR(st->st_mode)) return hsdag_err_set(e, HSDAG_EINVAL, "%s: is a directory", path);
        if (!S_ISREG(st->st_mode))
            return hsdag_err_set(e, HSDAG_EINVAL, "%s: is not a regular file; refusing to replace it", path);
        if (!file_writable(target, st))
            return hsdag_err_set(e, HSDAG_EINVAL, "%s: is not writable (mode %03o); refusing to replace it",
                                 path, (unsigned)(st->st_mode & 0777));
    }
    return 0;
}

/* The directory that will hold a new file: it exists, is a directory, and we may create files in it. */
static int file_dir_ok(const char *path, const char *dir, hsdag_err *e)
{
    struct stat ds;
    if (stat(dir, &ds) < 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "%s: directory %s does not exist", path, dir);
    if (!S_ISDIR(ds.st_mode)) return hsdag_err_set(e, HSDAG_EINVAL, "%s: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) < 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "%s: cannot create files in %s: %s", path, dir,
                             strerror(errno));
    return 0;
}

int hsdag_out_check(const char *path, hsdag_err *e)
{
    if (!path || !*path) return hsdag_err_set(e, HSDAG_EINVAL, "empty output file name");
    char target[PATH_MAX], dir[PATH_MAX], base[PATH_MAX];
    struct stat st;
    int exists, rc = file_resolve(path, target, &exists, &st, e);
    if (rc < 0) return rc;
    if (file_split(target, dir, base) < 0) return hsdag_err_set(e, HSDAG_EINVAL, "%s: bad file name", path);
    return file_dir_ok(path, dir, e);
}

/* ---- stale temp files ---- */

/* pid of a temp-file name of ours, or -1 if name is not one ("...~hsdag-tmp-<pid>-XXXXXX"). */
static long file_tmp_pid(const char *name)
{
    if (name[0] != '.') return -1;
    const char *t = strstr(name, FILE_TMP_TAG), *next;
    if (!t) return -1;
    while ((next = strstr(t + 1, FILE_TMP_TAG))) t = next; /* the base may contain the tag itself */
    const char *p = t + strlen(FILE_TMP_TAG);
    long pid = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++) pid = pid * 10 + (*p - '0');
    if (!digits || *p != '-' || strlen(p + 1) != 6) return -1;
    return pid;
}

/* Removes temp files left in dir by writers that died (kill -9, power loss before the rename): our name
 * pattern, a pid that no longer exists, a regular file owned by us and not locked by anyone. A live writer
 * holds an flock on its temp file from mkstemp to rename, so a reused pid or another pid namespace never
 * loses a file being written. Best effort: errors are ignored. */
static void file_clean_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    int dfd = dirfd(d);
    for (struct dirent *de; (de = readdir(d));) {
        long pid = file_tmp_pid(de->d_name);
        if (pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dfd, de->d_name, 0);
        close(fd);
    }
    closedir(d);
}

/* The mode a newly created file gets (0666 minus the umask), read without changing the umask: a library
 * call must not touch process-wide state. */
static mode_t file_new_mode(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        unsigned m;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "Umask: %o", &m) == 1) {
                mask = (mode_t)m;
                break;
            }
        fclose(f);
    }
    return 0666 & ~mask;
}

int hsdag_out_dir_check(int *n_entries, const char *dir, hsdag_err *e)
{
    if (n_entries) *n_entries = 0;
    if (!dir || !*dir) return hsdag_err_set(e, HSDAG_EINVAL, "empty output directory name");
    struct stat st;
    if (stat(dir, &st) < 0) {
        if (errno != ENOENT) return hsdag_err_set(e, HSDAG_EIO, "%s: %s", dir, strerror(errno));
        /* to be created: its parent must take it */
        char parent[PATH_MAX], base[PATH_MAX], trimmed[PATH_MAX];
        size_t n = strlen(dir);
        if (n >= PATH_MAX) return hsdag_err_set(e, HSDAG_EINVAL, "%s: path too long", dir);
        strcpy(trimmed, dir);
        while (n > 1 && trimmed[n - 1] == '/') trimmed[--n] = 0;
        if (file_split(trimmed, parent, base) < 0)
            return hsdag_err_set(e, HSDAG_EINVAL, "%s: not a directory name", dir);
        return file_dir_ok(dir, parent, e);
    }
    if (!S_ISDIR(st.st_mode)) return hsdag_err_set(e, HSDAG_EINVAL, "%s: exists and is not a directory", dir);
    if (access(dir, W_OK | X_OK) < 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "%s: cannot create files in it: %s", dir, strerror(errno));
    file_clean_stale(dir);
    DIR *d = opendir(dir);
    if (!d) return hsdag_err_set(e, HSDAG_EIO, "%s: cannot list: %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
    closedir(d);
    if (n_entries) *n_entries = n;
    return 0;
}

/* ---- atomic write ---- */

static int file_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int hsdag_write_file_atomic(const char *path, const void *buf, size_t len, hsdag_err *e)
{
    if (!path || !*path) return hsdag_err_set(e, HSDAG_EINVAL, "empty output file name");
    char target[PATH_MAX], dir[PATH_MAX], base[PATH_MAX], tmp[PATH_MAX + 64];
    struct stat st;
    int exists, rc = file_resolve(path, target, &exists, &st, e);
    if (rc < 0) return rc;
    if (file_split(target, dir, base) < 0) return hsdag_err_set(e, HSDAG_EINVAL, "%s: bad file name", path);
    if ((rc = file_dir_ok(path, dir, e)) < 0) return rc;
    file_clean_stale(dir);
    /* keep the temp name within NAME_MAX: a shortened base still shows whose file it is */
    if (snprintf(tmp, sizeof tmp, "%s/.%.180s" FILE_TMP_TAG "%ld-XXXXXX", dir, base, (long)getpid()) >=
        (int)sizeof tmp)
        return hsdag_err_set(e, HSDAG_EINVAL, "%s: path too long", path);
    int fd = mkstemp(tmp); /* O_EXCL, mode 0600: never opens anything planted at a predictable name */
    if (fd < 0)
        return hsdag_err_set(e, HSDAG_EIO, "%s: cannot create a file in %s: %s", path, dir, strerror(errno));
    flock(fd, LOCK_EX); /* tells file_clean_stale that a live writer owns this file */
    mode_t mode = exists ? (st.st_mode & 07777) : file_new_mode();
    if (exists && (st.st_uid != geteuid() || st.st_gid != getegid()))
        (void)!fchown(fd, st.st_uid, st.st_gid); /* keeps owner and group where permitted (root) */
    if (file_write_all(fd, buf, len) < 0)
        rc = hsdag_err_set(e, HSDAG_EIO, "%s: write failed: %s", path, strerror(errno));
    else if (fchmod(fd, mode) < 0)
        rc = hsdag_err_set(e, HSDAG_EIO, "%s: cannot set its mode: %s", path, strerror(errno));
    else if (fsync(fd) < 0)
        rc = hsdag_err_set(e, HSDAG_EIO, "%s: fsync failed: %s", path, strerror(errno));
    if (close(fd) < 0 && rc == 0)
        rc = hsdag_err_set(e, HSDAG_EIO, "%s: write failed: %s", path, strerror(errno));
    if (rc == 0 && rename(tmp, target) < 0)
        rc = hsdag_err_set(e, HSDAG_EIO, "%s: cannot replace it: %s", path, strerror(errno));
    if (rc < 0) {
        unlink(tmp);
        return rc;
    }
    /* the rename itself is durable once the directory is synced */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}
