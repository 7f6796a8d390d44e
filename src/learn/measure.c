/* measure.c - the measurement oracle: writes a placement file, runs an external program without a shell
 *   (posix_spawnp, its own process group), reads the latency it prints, with a timeout and retries.
 * Not here: option parsing (tools/cmd_train.c) or the simulator's oracle (glue.c).
 * Entry points: hsdag_measure_config_default, hsdag_measure_create/free/eval/counts/argv
 *   (include/hsdag/measure.h).
 */
#include "hsdag/measure.h"
#include "hsdag/placement.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct hsdag_measure {
    hsdag_measure_config c;
    const hsdag_graph *g;
    const hsdag_devices *devs;
    char *cmd, *path;
    char **argv; /* [argc + 1] */
    int32_t argc;
    hsdag_arena *arena; /* words, path, command */
    /* the memo (c.memo): placement (one byte per node) -> index into lat, in the order measured */
    hsdag_strmap *memo;
    char *key;   /* [n_nodes] scratch */
    double *lat; /* [cap] */
    size_t cap;
    int64_t runs, repeats;
};

#define MEASURE_MEMO_BYTES ((size_t)256 << 20)

hsdag_measure_config hsdag_measure_config_default(void)
{
    return (hsdag_measure_config){.cmd = NULL, .path = NULL, .timeout_s = 600, .retries = 2, .memo = 1};
}

void hsdag_measure_free(hsdag_measure *m)
{
    if (!m) return;
    hsdag_free(m->argv);
    hsdag_strmap_free(m->memo);
    hsdag_free(m->key);
    hsdag_free(m->lat);
    hsdag_arena_free(m->arena);
    hsdag_free(m);
}

void hsdag_measure_counts(const hsdag_measure *m, int64_t *runs, int64_t *repeats)
{
    if (runs) *runs = m->runs;
    if (repeats) *repeats = m->repeats;
}

/* ---- the command line: words as a shell splits them, nothing else of a shell ---- */

/* Splits s into words in buf (NUL-separated, s's length + 1 is enough); returns the word count or -1 for an
 * unterminated quote. */
static int32_t split_words(const char *s, char *buf)
{
    int32_t n = 0;
    char *w = buf;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        if (!*s) break;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
            if (*s == '\'') {
                const char *q = strchr(s + 1, '\'');
                if (!q) return -1;
                memcpy(w, s + 1, (size_t)(q - s - 1));
                w += q - s - 1;
                s = q + 1;
            } else if (*s == '"') {
                for (s++; *s && *s != '"'; s++) {
                    if (*s == '\\' && (s[1] == '"' || s[1] == '\\' || s[1] == '$' || s[1] == '`')) s++;
                    *w++ = *s;
                }
                if (!*s) return -1;
                s++;
            } else if (*s == '\\') {
                if (!s[1]) return -1;
                *w++ = s[1];
                s += 2;
            } else {
                *w++ = *s++;
            }
        }
        *w++ = 0;
        n++;
    }
    return n;
}

/* The word with every placeholder replaced by path (in the arena). */
static char *subst_word(hsdag_arena *a, const char *word, const char *path, int *hit)
{
    static const char *const ph[] = {"{placement}", "{}"};
    hsdag_buf b = {0};
    const char *s = word;
    while (*s) {
        int k = -1;
        for (int i = 0; i < 2 && k < 0; i++)
            if (strncmp(s, ph[i], strlen(ph[i])) == 0) k = i;
        if (k >= 0) {
            hsdag_buf_append(&b, path, strlen(path));
            s += strlen(ph[k]);
            *hit = 1;
        } else {
            hsdag_buf_append(&b, s, 1);
            s++;
        }
    }
    char *r = b.oom ? NULL : hsdag_arena_strndup(a, b.data ? b.data : "", b.len);
    hsdag_buf_free(&b);
    return r;
}

int hsdag_measure_create(hsdag_measure **out, const hsdag_measure_config *c, const hsdag_graph *g,
                         const hsdag_devices *devs, hsdag_err *e)
{
    *out = NULL;
    if (!c || !c->cmd || !c->path || !c->path[0])
        return hsdag_err_set(e, HSDAG_EINVAL, "measure: a command and a placement path are needed");
    if (!(c->timeout_s > 0) || c->retries < 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "measure: timeout must be > 0 and retries >= 0");
    hsdag_measure *m = hsdag_calloc(1, sizeof *m);
    if (!m || !(m->arena = hsdag_arena_create(0))) goto oom;
    m->c = *c;
    m->g = g;
    m->devs = devs;
    m->cmd = hsdag_arena_strdup(m->arena, c->cmd);
    m->path = hsdag_arena_strdup(m->arena, c->path);
    char *words = hsdag_arena_alloc(m->arena, strlen(c->cmd) + 1);
    if (!m->cmd || !m->path || !words) goto oom;
    int32_t n = split_words(c->cmd, words);
    if (n < 0) {
        hsdag_measure_free(m);
        return hsdag_err_set(e, HSDAG_EINVAL, "measure: '%.200s': unterminated quote", c->cmd);
    }
    if (n == 0) {
        hsdag_measure_free(m);
        return hsdag_err_set(e, HSDAG_EINVAL, "measure: empty command");
    }
    m->argv = hsdag_calloc((size_t)n + 2, sizeof *m->argv);
    if (!m->argv) goto oom;
    int hit = 0;
    for (const char *w = words; m->argc < n; w += strlen(w) + 1)
        if (!(m->argv[m->argc++] = subst_word(m->arena, w, m->path, &hit))) goto oom;
    if (!hit) m->argv[m->argc++] = m->path; /* no placeholder: the path is the last argument */
    if (c->memo && g && g->n_nodes > 0 &&
        (!(m->memo = hsdag_strmap_create()) || !(m->key = hsdag_malloc((size_t)g->n_nodes))))
        goto oom;
    *out = m;
    return 0;
oom:
    hsdag_measure_free(m);
    return hsdag_err_set(e, HSDAG_ENOMEM, "measure: out of memory");
}

const char *const *hsdag_measure_argv(const hsdag_measure *m, int32_t *argc)
{
    if (argc) *argc = m->argc;
    return (const char *const *)m->argv;
}

/* ---- one run ---- */

/* Reads the child's stdout until EOF or the deadline, keeping the tail (the latency is the last number
 * printed). Returns 1 on timeout. */
static int read_tail(int fd, double deadline, char *out, size_t cap, size_t *n)
{
    for (;;) {
        double left = deadline - hsdag_now();
        if (left <= 0) return 1;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char tmp[1024];
        ssize_t k = read(fd, tmp, sizeof tmp);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        for (ssize_t i = 0; i < k; i++) {
            if (*n == cap - 1) {
                memmove(out, out + cap / 2, cap / 2 - 1);
                *n = cap / 2 - 1;
            }
            out[(*n)++] = tmp[i];
        }
    }
}

/* The last token of out that parses completely as a number, or NAN. */
static double last_number(char *out)
{
    double val = NAN;
    char *save = NULL;
    for (char *t = strtok_r(out, " \t\r\n,;", &save); t; t = strtok_r(NULL, " \t\r\n,;", &save)) {
        char *end;
        double v = strtod(t, &end);
        if (*end == 0 && end != t) val = v;
    }
    return val;
}

static int measure_once(hsdag_measure *m, double *lat, hsdag_err *e)
{
    int fd[2];
    if (pipe(fd) < 0) return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP); /* its own process group, killed as a whole */
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    int err = posix_spawnp(&pid, m->argv[0], &fa, &at, m->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fd[1]);
    if (err) {
        close(fd[0]);
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: cannot run '%.200s': %s", m->argv[0],
                             strerror(err));
    }
    char out[8192];
    size_t n = 0;
    int timed_out = read_tail(fd[0], hsdag_now() + m->c.timeout_s, out, sizeof out, &n);
    close(fd[0]);
    if (timed_out) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (timed_out)
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: '%s' timed out after %g s", m->cmd,
                             m->c.timeout_s);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: '%s' failed (exit status %d)", m->cmd,
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    out[n] = 0;
    double val = last_number(out);
    if (!(val > 0) || !isfinite(val))
        return hsdag_err_set(e, HSDAG_EEXTERNAL,
                             "measure: '%s' printed no positive latency (seconds) on stdout", m->cmd);
    *lat = val;
    return 0;
}

/* The memo's index of device[] (its key left in m->key), or -1. */
static int32_t memo_find(hsdag_measure *m, const int32_t *device)
{
    if (!m->memo) return -1;
    for (int32_t v = 0; v < m->g->n_nodes; v++) m->key[v] = (char)device[v]; /* < HSDAG_MAX_DEVICES */
    return hsdag_strmap_get(m->memo, m->key, (size_t)m->g->n_nodes);
}

/* Remembers m->key -> lat; a full memo (MEASURE_MEMO_BYTES) or no memory only means later repeats run again. */
static void memo_put(hsdag_measure *m, double lat)
{
    if (!m->memo) return;
    int32_t i = hsdag_strmap_count(m->memo);
    if ((size_t)(i + 1) * (size_t)m->g->n_nodes > MEASURE_MEMO_BYTES) return;
    if (hsdag_grow((void **)&m->lat, &m->cap, (size_t)i + 1, sizeof *m->lat) < 0) return;
    if (hsdag_strmap_put(m->memo, m->key, (size_t)m->g->n_nodes, i) == 0) m->lat[i] = lat;
}

int hsdag_measure_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e)
{
    hsdag_measure *m = ctx;
    int32_t hit = memo_find(m, device);
    if (hit >= 0) {
        *latency_s = m->lat[hit];
        *feasible = 1;
        m->repeats++;
        return 0;
    }
    hsdag_buf b = {0};
    int rc = hsdag_placement_write_json(&b, m->g, m->devs, device);
    if (rc == 0 && b.oom) rc = HSDAG_ENOMEM;
    if (rc == 0) rc = hsdag_write_file_atomic(m->path, b.data, b.len, e);
    hsdag_buf_free(&b);
    if (rc < 0)
        return hsdag_err_set(e, rc == HSDAG_ENOMEM ? rc : HSDAG_EIO, "measure: cannot write %s", m->path);
    for (int32_t attempt = 0; attempt <= m->c.retries; attempt++) {
        rc = measure_once(m, latency_s, e);
        if (rc == 0) break;
    }
    *feasible = 1;
    if (rc == 0) {
        m->runs++;
        memo_put(m, *latency_s);
    }
    return rc;
}
