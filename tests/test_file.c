/* test_file.c - tests of the file helpers (src/core/file.c): atomic replacement keeps mode, refuses
 * directories, read-only files and symlinks out of the directory, never follows a symlink planted at a
 * predictable temp name, leaves no temp file behind, removes dead writers' temp files and keeps live ones;
 * the pre-checks of output files and run directories; the data path (hsdag_data_find).
 * Not here: which command writes what (tests/cli/outputs.sh). Entry points: main.
 */
#include "check.h"

#include "hsdag/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[256];

static const char *at(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, name);
    return buf[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int same_text(const char *path, const char *want)
{
    char *b = NULL;
    size_t n = 0;
    hsdag_err e = {0};
    if (hsdag_read_file(&b, &n, path, 0, &e) < 0) return 0;
    int ok = n == strlen(want) && memcmp(b, want, n) == 0;
    hsdag_free(b);
    return ok;
}

/* Entries of dir whose name contains "hsdag-tmp". */
static int temp_count(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *de; (de = readdir(d));) n += strstr(de->d_name, "hsdag-tmp") != NULL;
    closedir(d);
    return n;
}

static pid_t dead_pid(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

static int write_text(const char *path, const char *text, hsdag_err *e)
{
    memset(e, 0, sizeof *e);
    return hsdag_write_file_atomic(path, text, strlen(text), e);
}

static void test_basic(void)
{
    hsdag_err e;
    CHECK_EQ_INT(write_text(at("a.json"), "one\n", &e), 0);
    CHECK(same_text(at("a.json"), "one\n"));
    struct stat st;
    mode_t mask = umask(022);
    umask(mask);
    CHECK(stat(at("a.json"), &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
    /* replacing keeps the old mode */
    chmod(at("a.json"), 0640);
    CHECK_EQ_INT(write_text(at("a.json"), "two\n", &e), 0);
    CHECK(same_text(at("a.json"), "two\n"));
    CHECK(stat(at("a.json"), &st) == 0 && (st.st_mode & 0777) == 0640);
    CHECK_EQ_INT(temp_count(root), 0);
    /* an empty file */
    CHECK_EQ_INT(hsdag_write_file_atomic(at("empty"), "", 0, &e), 0);
    CHECK(stat(at("empty"), &st) == 0 && st.st_size == 0);
}

static void test_refusals(void)
{
    hsdag_err e;
    /* a read-only file is not replaced, even by root */
    put(at("ro.json"), "keep\n");
    chmod(at("ro.json"), 0444);
    CHECK(write_text(at("ro.json"), "new\n", &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "ro.json: is not writable") != NULL);
    CHECK(same_text(at("ro.json"), "keep\n"));
    CHECK(hsdag_out_check(at("ro.json"), &e) == HSDAG_EINVAL);
    /* a directory */
    CHECK(write_text(root, "x", &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "is a directory") != NULL);
    CHECK(hsdag_out_check(root, &e) == HSDAG_EINVAL);
    /* a missing directory: the message names the file, never a temp file */
    CHECK(write_text(at("no/such/p.json"), "x", &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "p.json: directory") != NULL && strstr(e.msg, "does not exist") != NULL);
    CHECK(strstr(e.msg, "hsdag-tmp") == NULL && strstr(e.msg, ".tmp") == NULL);
    CHECK(hsdag_out_check(at("no/such/p.json"), &e) == HSDAG_EINVAL);
    CHECK(hsdag_out_check(at("fine.json"), &e) == 0);
    CHECK(hsdag_out_check("", &e) == HSDAG_EINVAL);
    CHECK(hsdag_out_check(at("dir/"), &e) == HSDAG_EINVAL);
    /* a special file */
    CHECK(hsdag_out_check("/dev/null", &e) == HSDAG_EINVAL);
    CHECK_EQ_INT(temp_count(root), 0);
}

static void test_symlinks(void)
{
    hsdag_err e;
    char outside[512];
    snprintf(outside, sizeof outside, "%s-victim", root);
    put(outside, "victim\n");
    /* the old predictable temp name, planted as a symlink: never followed */
    char planted[600];
    snprintf(planted, sizeof planted, "%s.tmp%ld", at("p.json"), (long)getpid());
    CHECK(symlink(outside, planted) == 0);
    CHECK_EQ_INT(write_text(at("p.json"), "placement\n", &e), 0);
    CHECK(same_text(outside, "victim\n"));
    CHECK(same_text(at("p.json"), "placement\n"));
    unlink(planted);
    /* a symlink out of the directory is refused */
    CHECK(symlink(outside, at("out.json")) == 0);
    CHECK(write_text(at("out.json"), "x", &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "symbolic link out of its directory") != NULL);
    CHECK(hsdag_out_check(at("out.json"), &e) == HSDAG_EINVAL);
    CHECK(same_text(outside, "victim\n"));
    /* a dangling one too */
    CHECK(symlink("nowhere", at("dangling.json")) == 0);
    CHECK(write_text(at("dangling.json"), "x", &e) == HSDAG_EINVAL);
    /* one within the directory is followed: the target changes, the link stays */
    put(at("real.json"), "old\n");
    CHECK(symlink("real.json", at("link.json")) == 0);
    CHECK_EQ_INT(write_text(at("link.json"), "new\n", &e), 0);
    struct stat st;
    CHECK(lstat(at("link.json"), &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(same_text(at("real.json"), "new\n"));
    unlink(outside);
    CHECK_EQ_INT(temp_count(root), 0);
}

static void test_stale(void)
{
    hsdag_err e;
    char name[512];
    /* a dead writer's temp file goes; a live writer's (our parent) and a locked one stay */
    snprintf(name, sizeof name, ".c.bin~hsdag-tmp-%ld-AbC123", (long)dead_pid());
    put(at(name), "half a checkpoint");
    char live[512];
    snprintf(live, sizeof live, ".c.bin~hsdag-tmp-%ld-XyZ789", (long)getppid());
    put(at(live), "being written");
    char locked[512];
    snprintf(locked, sizeof locked, ".d.bin~hsdag-tmp-%ld-LoCk00", (long)dead_pid());
    put(at(locked), "held");
    int lfd = open(at(locked), O_RDONLY);
    CHECK(lfd >= 0 && flock(lfd, LOCK_EX) == 0);
    char other[512]; /* not our pattern: never touched */
    snprintf(other, sizeof other, ".c.bin.tmp%ld", (long)dead_pid());
    put(at(other), "someone else's");
    CHECK_EQ_INT(temp_count(root), 3);
    CHECK_EQ_INT(write_text(at("c.bin"), "checkpoint", &e), 0);
    CHECK(access(at(name), F_OK) != 0);
    CHECK(access(at(live), F_OK) == 0);
    CHECK(access(at(locked), F_OK) == 0);
    CHECK(access(at(other), F_OK) == 0);
    close(lfd);
    unlink(at(live));
    unlink(at(locked));
    unlink(at(other));
}

static void test_dir_check(void)
{
    hsdag_err e;
    int n = -1;
    CHECK_EQ_INT(hsdag_out_dir_check(&n, at("run"), &e), 0);
    CHECK_EQ_INT(n, 0);
    CHECK(hsdag_out_dir_check(&n, at("no/run"), &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "does not exist") != NULL);
    CHECK(hsdag_out_dir_check(&n, at("a.json"), &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "not a directory") != NULL);
    CHECK(mkdir(at("run"), 0777) == 0);
    CHECK_EQ_INT(hsdag_out_dir_check(&n, at("run"), &e), 0);
    CHECK_EQ_INT(n, 0);
    /* only a dead writer's temp file: cleaned, so the directory counts as empty */
    char name[512];
    snprintf(name, sizeof name, "run/.checkpoint.bin~hsdag-tmp-%ld-QwErTy", (long)dead_pid());
    put(at(name), "x");
    CHECK_EQ_INT(hsdag_out_dir_check(&n, at("run"), &e), 0);
    CHECK_EQ_INT(n, 0);
    put(at("run/curve.csv"), "episode\n");
    CHECK_EQ_INT(hsdag_out_dir_check(&n, at("run/"), &e), 0);
    CHECK_EQ_INT(n, 1);
}

/* The data path (what the CLI's profiler bridge and the shipped policies are found on): $HSDAG_DATA first,
 * then beside the binary; never the working directory; a miss names every place tried. */
static void test_data_find(void)
{
    hsdag_err e = {0};
    char path[4096], cwd[4096], want[600];
    CHECK(mkdir(at("data"), 0777) == 0 && mkdir(at("data/scripts"), 0777) == 0);
    CHECK(mkdir(at("cwd"), 0777) == 0 && mkdir(at("cwd/scripts"), 0777) == 0);
    put(at("data/scripts/bridge.js"), "//");
    put(at("cwd/scripts/only-here.js"), "//");
    const char *old = getenv("HSDAG_DATA");
    char saved[4096] = "";
    if (old) snprintf(saved, sizeof saved, "%s", old);
    setenv("HSDAG_DATA", at("data"), 1);
    CHECK_EQ_INT(hsdag_data_find(path, sizeof path, "scripts/bridge.js", "bridge", &e), 0);
    snprintf(want, sizeof want, "%s/data/scripts/bridge.js", root);
    CHECK(strcmp(path, want) == 0);
    CHECK(hsdag_data_find(path, 8, "scripts/bridge.js", "bridge", &e) == HSDAG_EINVAL); /* path too short */
    /* a file planted in the working directory is not picked up */
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(at("cwd")) == 0);
    CHECK(hsdag_data_find(path, sizeof path, "scripts/only-here.js", "the test script", &e) == HSDAG_EIO);
    CHECK(strstr(e.msg, "no the test script (tried ") == e.msg && strstr(e.msg, "data/scripts/only-here.js"));
    CHECK(strstr(e.msg, "(tried ./") == NULL && strstr(e.msg, ", ./") == NULL && strchr(e.msg, '\n') == NULL);
    CHECK(chdir(cwd) == 0);
    if (old)
        setenv("HSDAG_DATA", saved, 1);
    else
        unsetenv("HSDAG_DATA");
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/hsdag-test-file-XXXXXX");
    if (!mkdtemp(root)) return 1;
    test_basic();
    test_refusals();
    test_symlinks();
    test_stale();
    test_dir_check();
    test_data_find();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return check_summary("test_file");
}
