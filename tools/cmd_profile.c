/* cmd_profile.c - 'hsdag profile': runs an ONNX model under ONNX Runtime on this CPU through the bridge script
 * (scripts/ort-profile.js, Node.js + onnxruntime-node), writes the per-op profile CSV and checks shapes.
 * Not here: the attribution of ORT's kernels (the bridge), reading its JSON and comparing shapes (the library,
 * hsdag/ortprof.h). The library never starts a process; this file does.
 * Entry points: cmd_profile. */
#include "cli.h"
#include "hsdag/io.h"
#include "hsdag/ortprof.h"
#include "opt.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the bridge: find it, run it, collect its output ---- */
static int find_bridge(char *out, size_t cap)
{
    const char *env = getenv("HSDAG_ORT_BRIDGE");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    return hsdag_data_find(out, cap, "scripts/ort-profile.js", "ONNX Runtime bridge", NULL);
}

static int read_fd_all(int fd, char **buf, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    if (!b) return -1;
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t k = read(fd, b + n, cap - n - 1);
        if (k < 0) {
            free(b);
            return -1;
        }
        if (k == 0) break;
        n += (size_t)k;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

static int temp_fd(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/hsdag-profile-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0) unlink(path);
    return fd;
}

/* Last non-empty line of s without the bridge's "ort-profile: " prefix (in place). */
static const char *last_line(char *s)
{
    char *end = s + strlen(s);
    while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ')) *--end = 0;
    char *nl = strrchr(s, '\n');
    char *line = nl ? nl + 1 : s;
    if (strncmp(line, "ort-profile: ", 13) == 0) line += 13;
    return line;
}

/* Runs node BRIDGE args...; on success *json holds its stdout. Returns CLI_OK or an exit code (printed). */
static int run_bridge(char *const *argv, char **json, size_t *len)
{
    int fo = temp_fd(), fe = temp_fd();
    if (fo < 0 || fe < 0) {
        fprintf(stderr, "hsdag profile: cannot create a temporary file\n");
        if (fo >= 0) close(fo);
        if (fe >= 0) close(fe);
        return CLI_FAIL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fo);
        close(fe);
        fprintf(stderr, "hsdag profile: cannot start a process\n");
        return CLI_FAIL;
    }
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st = 0, rc = CLI_OK;
    while (waitpid(pid, &st, 0) < 0) {}
    char *err = NULL;
    size_t elen = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (read_fd_all(fe, &err, &elen) < 0) err = NULL;
        if (code == 127)
            fprintf(stderr,
                    "hsdag profile: ONNX Runtime is not usable: cannot run '%s' (Node.js missing? run "
                    "scripts/install-deps or set HSDAG_NODE)\n",
                    argv[0]);
        else
            fprintf(stderr, "hsdag profile: %s\n",
                    err && *err ? last_line(err) : "the ONNX Runtime bridge failed");
        rc = (code == 2 || code == 3 || code == 127) ? CLI_BADINPUT : CLI_FAIL;
    } else if (read_fd_all(fo, json, len) < 0) {
        fprintf(stderr, "hsdag profile: out of memory reading the bridge's output\n");
        rc = CLI_FAIL;
    }
    free(err);
    close(fo);
    close(fe);
    return rc;
}

/* ---- report ---- */
static void op_histogram(hsdag_buf *b, const hsdag_graph *g, const hsdag_ortprof *p, int status)
{
    /* op types in first-seen order with counts (at most 12 shown) */
    const char *ops[12];
    int cnt[12], n = 0, more = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        if (p->status[v] != status) continue;
        int k = 0;
        while (k < n && ops[k] != g->op[v]) k++; /* ops are interned */
        if (k == n) {
            if (n == 12) {
                more++;
                continue;
            }
            ops[n] = g->op[v];
            cnt[n++] = 0;
        }
        cnt[k]++;
    }
    for (int k = 0; k < n; k++) hsdag_buf_printf(b, "%s%s %d", k ? ", " : " (", ops[k], cnt[k]);
    if (more) hsdag_buf_printf(b, ", ... %d more", more);
    if (n) hsdag_buf_printf(b, ")");
}

static void report_table(hsdag_buf *b, const char *path, const hsdag_graph *g, const hsdag_ortprof *p,
                         double wall)
{
    hsdag_buf_printf(b, "model           %s (%d nodes)\n", path, (int)g->n_nodes);
    hsdag_buf_printf(b, "runtime         ONNX Runtime %s, CPU, %d thread(s), optimisation %s\n",
                     p->ort_version, (int)p->threads, p->opt);
    hsdag_buf_printf(b, "end-to-end      %.3f ms (median of %d runs after %d warm-up runs, %s clock",
                     p->median_ms, (int)p->runs, (int)p->warmup, p->clock);
    if (isfinite(p->median_wall_ms) && isfinite(p->median_cpu_ms))
        hsdag_buf_printf(b, "; wall %.3f ms, CPU time %.3f ms", p->median_wall_ms, p->median_cpu_ms);
    hsdag_buf_printf(b, ")\n");
    hsdag_buf_printf(b, "kernels         %.3f ms (sum of per-kernel medians, profiled session%s)\n",
                     p->kernel_ms, strcmp(p->clock, "cpu") == 0 ? ", scaled to CPU time" : "");
    static const char *const what[HSDAG_ORT_STATUS_COUNT_] = {
        "time of one ORT kernel", "into the kernel of a later or earlier node, 0 ms",
        "at session creation, 0 ms", "by ORT's graph optimiser, 0 ms"};
    static const char *const label[HSDAG_ORT_STATUS_COUNT_] = {"kernel nodes", "fused", "folded", "removed"};
    for (int s = 0; s < HSDAG_ORT_STATUS_COUNT_; s++) {
        hsdag_buf_printf(b, "%-15s %d, %s", label[s], (int)p->n_status[s], what[s]);
        op_histogram(b, g, p, s);
        hsdag_buf_printf(b, "\n");
    }
    if (p->n_orphans)
        hsdag_buf_printf(
            b, "layout kernels  %d (%.3f ms) without an original node: given to the next kernel's node\n",
            (int)p->n_orphans, p->orphan_ms);
    if (p->has_shapes) {
        hsdag_buf_printf(
            b, "shapes          %d outputs compared with ORT: %d differences (%d unknown to hsdag)\n",
            (int)p->n_shapes_checked, (int)p->n_shape_diffs, (int)p->n_shape_unknown);
        for (int32_t i = 0; i < p->n_diff_list && i < 30; i++) {
            const hsdag_ort_shape_diff *d = &p->diffs[i];
            hsdag_buf_printf(b, "  %s (%s) output %d: hsdag %s, ORT %s\n", g->name[d->node], g->op[d->node],
                             (int)d->output, d->hsdag, d->ort);
        }
        if (p->n_shape_diffs > 30) hsdag_buf_printf(b, "  ... %d more\n", (int)(p->n_shape_diffs - 30));
    }
    hsdag_buf_printf(b, "wall time       %.2f s\n", wall);
}

int cmd_profile(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_PROFILE);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    long runs = a.runs, warmup = a.warmup, threads = a.threads;
    const char *out = a.csv, *opt = a.opt_level, *weights = a.weights, *device = a.device;
    const char *clk = a.clock ? a.clock : threads == 1 ? "cpu" : "wall";
    int check = a.check_shapes, json = a.json;
    if (!*device || strchr(device, ',') || strchr(device, '\n'))
        return cli_usage_error(a.name, "--device '%s' is not a device name (no commas or newlines)", device);
    if (strcmp(clk, "cpu") == 0 && threads != 1)
        return cli_usage_error(a.name, "--clock cpu needs --threads 1 (CPU time sums the threads)");
    char seed[24];
    snprintf(seed, sizeof seed, "%ld", a.seed);
    const char *path = a.pos[0];
    double t0 = hsdag_now();
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    rc = hsdag_load_file(&g, path, HSDAG_FMT_UNKNOWN, &e);
    if (rc < 0) return cli_fail("profile", rc, &e);
    if (g->meta.format != HSDAG_FMT_ONNX) {
        hsdag_graph_free(g);
        fprintf(stderr, "hsdag profile: %s: not an ONNX model (ONNX Runtime runs .onnx files only)\n", path);
        return CLI_BADINPUT;
    }
    char bridge[4096];
    if (find_bridge(bridge, sizeof bridge) < 0) {
        hsdag_graph_free(g);
        fprintf(
            stderr,
            "hsdag profile: the ONNX Runtime bridge ort-profile.js is not installed (make install, or set "
            "HSDAG_ORT_BRIDGE)\n");
        return CLI_BADINPUT;
    }
    char a_runs[24], a_warm[24], a_thr[24];
    snprintf(a_runs, sizeof a_runs, "%ld", runs);
    snprintf(a_warm, sizeof a_warm, "%ld", warmup);
    snprintf(a_thr, sizeof a_thr, "%ld", threads);
    const char *node = getenv("HSDAG_NODE");
    char *args[28];
    int na = 0;
    args[na++] = (char *)(node && *node ? node : "node");
    args[na++] = bridge;
    args[na++] = "--model";
    args[na++] = (char *)path;
    args[na++] = "--runs";
    args[na++] = a_runs;
    args[na++] = "--warmup";
    args[na++] = a_warm;
    args[na++] = "--threads";
    args[na++] = a_thr;
    args[na++] = "--opt";
    args[na++] = (char *)opt;
    args[na++] = "--weights";
    args[na++] = (char *)weights;
    args[na++] = "--clock";
    args[na++] = (char *)clk;
    args[na++] = "--seed";
    args[na++] = seed;
    if (check) args[na++] = "--check-shapes";
    args[na] = NULL;
    if (isatty(2) && !a.quiet)
        fprintf(stderr, "profiling %s with ONNX Runtime (%ld + %ld runs)...\n", path, warmup, runs);
    char *js = NULL;
    size_t jlen = 0;
    hsdag_ortprof *p = NULL;
    hsdag_buf b = {0};
    rc = run_bridge(args, &js, &jlen);
    if (rc != CLI_OK) goto done;
    if ((rc = hsdag_ortprof_parse(&p, js, jlen, "ort-profile.js output", g, &e)) < 0) {
        rc = cli_fail("profile", rc, &e);
        goto done;
    }
    if (out) {
        hsdag_buf csv = {0};
        hsdag_ortprof_write_csv(&csv, p, g, device);
        rc = cli_write_out("profile", out, &csv);
        hsdag_buf_free(&csv);
        if (rc != CLI_OK) goto done;
    }
    double wall = hsdag_now() - t0;
    if (json)
        hsdag_ortprof_write_json(&b, p, g, path, wall);
    else
        report_table(&b, path, g, p, wall);
    rc = cli_write_out("profile", "-", &b);
    if (rc == CLI_OK && check && p->n_shape_diffs > 0) {
        fprintf(stderr, "hsdag profile: %s: %d output shapes differ from ONNX Runtime's\n", path,
                (int)p->n_shape_diffs);
        rc = CLI_FAIL;
    }
done:
    hsdag_buf_free(&b);
    hsdag_ortprof_free(p);
    free(js);
    hsdag_graph_free(g);
    return rc;
}
