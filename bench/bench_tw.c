/* bench_tw.c - `make bench` section: the Tarnawski benchmark's solvers. (1) The exact contiguous throughput DP
 * on the 16 throughput workloads, side by side with Tarnawski et al.'s dp.exe when TARNAWSKI_DP names it
 * (runs alternate, both as child processes, CPU time of the child from wait4, medians); (2) both objectives
 * on a generated 10,000-op graph: heuristics' time and the exact solvers' gap within their time limit.
 * Not here: correctness (tests/test_tw_methods.c); their code is never built or read by the project: point
 * TARNAWSKI_DP at a binary built beside it (README of bench/ in docs/placers.md).
 * Entry points: bench_tarnawski. */
#include "hsdag/io.h"
#include "hsdag/place.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TW_DIR "tests/data/tarnawski/throughput-inputs/"
#define TW_THEIR_LIMIT_S 60                           /* the target's budget, for theirs too */
#define TW_THEIR_MEM_BYTES (2.0 * 1024 * 1024 * 1024) /* and its 2 GB */

static const char *const tw_files[] = {
    "LayerGraphs/bert24_inference.json",      "LayerGraphs/bert24_training.json",
    "LayerGraphs/gnmt_inference.json",        "LayerGraphs/gnmt_training.json",
    "LayerGraphs/inceptionv3_inference.json", "LayerGraphs/inceptionv3_training.json",
    "LayerGraphs/resnet50_inference.json",    "LayerGraphs/resnet50_training.json",
    "OperatorGraphs/bert_L-12_training.json", "OperatorGraphs/bert_l-12_inference.json",
    "OperatorGraphs/bert_l-3_inference.json", "OperatorGraphs/bert_l-3_training.json",
    "OperatorGraphs/bert_l-6_inference.json", "OperatorGraphs/bert_l-6_training.json",
    "OperatorGraphs/resnet50_inference.json", "OperatorGraphs/resnet50_training.json",
};

static int tw_dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double tw_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, tw_dcmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs argv with stdin from `in` and stdout/stderr to /dev/null, within limit_s wall seconds, cpu_s CPU seconds
 * (0 = none) and mem bytes of address space (0 = none). Returns the child's CPU seconds (user + system), -1 if
 * it failed (out of memory), -2 on a time limit. */
static double tw_child(char *const *argv, const char *in, double limit_s, double mem, double cpu_s)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fi = open(in, O_RDONLY), fo = open("/dev/null", O_WRONLY);
        if (fi < 0 || fo < 0) _exit(127);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fo, 2);
        if (mem > 0) {
            struct rlimit rl = {(rlim_t)mem, (rlim_t)mem};
            setrlimit(RLIMIT_AS, &rl);
        }
        if (cpu_s > 0) { /* CPU seconds, not wall: the shared machine's load does not count against it */
            struct rlimit rl = {(rlim_t)cpu_s, (rlim_t)cpu_s + 1};
            setrlimit(RLIMIT_CPU, &rl);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid) break;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > limit_s) {
            kill(pid, SIGKILL);
            wait4(pid, &status, 0, &ru);
            return -2;
        }
        usleep(2000);
    }
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) return -2;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static void tw_fmt(char *out, size_t n, double s)
{
    if (s == -2)
        snprintf(out, n, "> %d s CPU", TW_THEIR_LIMIT_S);
    else if (s < 0)
        snprintf(out, n, "failed (2 GB)");
    else
        snprintf(out, n, "%.3f", s);
}

static void bench_tw_dp(void)
{
    const char *theirs = getenv("TARNAWSKI_DP");
    const char *rs = getenv("TARNAWSKI_RUNS");
    int runs = rs ? atoi(rs) : 3;
    if (runs < 1 || runs > 15) runs = 3;
    char self[512];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return;
    self[sl] = 0;
    char *slash = strrchr(self, '/');
    if (slash) snprintf(slash + 1, sizeof self - (size_t)(slash + 1 - self), "hsdag");
    printf("\n## Tarnawski throughput DP: CPU seconds per run (child processes, wait4), median of %d, runs "
           "alternating\n\n",
           runs);
    if (!theirs)
        printf("(set TARNAWSKI_DP=/path/to/their/dp.exe, built beside the project with g++ -O3 "
               "throughput-dp/dp.cpp, to time theirs side by side)\n\n");
    printf("| %-42s | %10s | %14s | %7s |\n", "workload", "hsdag dp", "their dp.exe", "speed-up");
    printf("|--------------------------------------------|------------|----------------|---------|\n");
    for (size_t i = 0; i < sizeof tw_files / sizeof tw_files[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, TW_DIR "%s", tw_files[i]);
        double ours[15], them[15];
        int nt = 0, no = 0, fail = 0;
        for (int r = 0; r < runs; r++) {
            char *oa[] = {self,          "place",      path,           "--method", "dp",
                          "--objective", "throughput", "--time-limit", "60",       NULL};
            double o = tw_child(oa, "/dev/null", 1200, 0, 0);
            if (o >= 0) ours[no++] = o;
            if (theirs && !fail) {
                char *ta[] = {(char *)theirs, NULL};
                double t = tw_child(ta, path, 20 * TW_THEIR_LIMIT_S, TW_THEIR_MEM_BYTES, TW_THEIR_LIMIT_S);
                if (t < 0)
                    fail = (int)t, nt = 0;
                else
                    them[nt++] = t;
            }
        }
        double mo = no ? tw_median(ours, no) : -1, mt = fail ? fail : (nt ? tw_median(them, nt) : -3);
        char a[32], b[32], c[32] = "";
        tw_fmt(a, sizeof a, mo);
        if (mt == -3)
            snprintf(b, sizeof b, "-");
        else
            tw_fmt(b, sizeof b, mt);
        if (mo > 0 && mt > 0) snprintf(c, sizeof c, "%.1fx", mt / mo);
        printf("| %-42s | %10s | %14s | %7s |\n", tw_files[i], a, b, c);
        fflush(stdout);
    }
    printf(
        "\nTheirs runs with the target's budget (%d s wall, %.0f GB of address space); a run that fails or "
        "is killed is not repeated. Ours includes reading the file and the chain DP that starts it.\n",
        TW_THEIR_LIMIT_S, TW_THEIR_MEM_BYTES / (1024.0 * 1024 * 1024));
}

/* One node of the generated graph. */
static int32_t tw_node(hsdag_gb *b, int32_t *cnt, double *total, double cpu, double fpga, double size,
                       int32_t cc)
{
    char nm[24];
    snprintf(nm, sizeof nm, "n%d", (int)*cnt);
    int32_t v = hsdag_gb_add_node(b, nm, "Measured");
    hsdag_gb_set_opclass(b, v, HSDAG_OP_UNKNOWN);
    hsdag_gb_set_cost(b, v, HSDAG_COST_CPU, cpu);
    hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, fpga);
    hsdag_gb_set_mem_bytes(b, v, size);
    hsdag_gb_set_color(b, v, cc);
    hsdag_gb_set_file_id(b, v, (*cnt)++);
    *total += size;
    return v;
}

/* A BERT-like operator graph of about n ops: layers of three parallel branches of three ops (each op with a
 * weight node in its colour class), a join and a residual add; costs and sizes drawn like the bundled op
 * graphs; k accelerators of capacity total / 5, one CPU. Deterministic for a seed. */
static hsdag_graph *tw_generate(int32_t n, uint64_t seed, int32_t k)
{
    hsdag_rng r;
    hsdag_rng_seed(&r, seed);
    hsdag_gb *b = hsdag_gb_create();
    double total = 0;
    int32_t cnt = 0, color = 0;
#define U(lo, hi) ((lo) + ((hi) - (lo)) * hsdag_rng_uniform(&r))
#define NODE(cpu, fpga, size, cc) tw_node(b, &cnt, &total, (cpu), (fpga), (size), (cc))
    double *xcost = hsdag_malloc(((size_t)n + 16) * sizeof *xcost);
    int32_t prev = NODE(0.1, 0.01, 0, -1);
    xcost[prev] = U(0.05, 3.0);
    while (cnt < n - 12) {
        int32_t heads[3];
        for (int br = 0; br < 3; br++) {
            int32_t x = prev;
            for (int t = 0; t < 3; t++) {
                int32_t w = NODE(U(0.5, 20), U(0.02, 1.0), U(1e6, 2e7), color);
                int32_t wt = NODE(0.0, 0.0, U(1e6, 3e7), color);
                color++;
                xcost[w] = U(0.05, 3.0), xcost[wt] = U(0.05, 3.0);
                hsdag_gb_add_edge_ex(b, x, w, xcost[x] * 2147483.648, xcost[x]);
                hsdag_gb_add_edge_ex(b, wt, w, xcost[wt] * 2147483.648, xcost[wt]);
                x = w;
            }
            heads[br] = x;
        }
        int32_t j = NODE(U(0.5, 5), U(0.02, 0.3), U(1e5, 5e6), -1);
        xcost[j] = U(0.05, 3.0);
        for (int br = 0; br < 3; br++)
            hsdag_gb_add_edge_ex(b, heads[br], j, xcost[heads[br]] * 2147483.648, xcost[heads[br]]);
        int32_t a = NODE(0.2, 0.01, 1e5, -1);
        xcost[a] = U(0.05, 3.0);
        hsdag_gb_add_edge_ex(b, j, a, xcost[j] * 2147483.648, xcost[j]);
        hsdag_gb_add_edge_ex(b, prev, a, xcost[prev] * 2147483.648, xcost[prev]);
        prev = a;
    }
#undef NODE
#undef U
    hsdag_free(xcost);
    hsdag_graph_meta meta = {.format = HSDAG_FMT_TARNAWSKI,
                             .file_nodes = cnt,
                             .file_edges = -1,
                             .ir_version = -1,
                             .opset = -1,
                             .max_accels = k,
                             .max_cpus = 1,
                             .max_size_per_accel = total / 5,
                             .name = "generated"};
    hsdag_gb_set_meta(b, &meta);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "bench_tw: %s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

static double tw_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench_tw_scale(void)
{
    hsdag_graph *g = tw_generate(10000, 1, 8);
    if (!g) return;
    printf("\n## Tarnawski model on a generated %d-op graph (8 accelerators of total/5 bytes, 1 CPU): wall "
           "seconds, objective, gap to the bound the method or the problem gives\n\n",
           (int)g->n_nodes);
    printf("| %-10s | %-16s | %9s | %12s | %9s |\n", "objective", "method", "seconds", "objective ms", "gap");
    printf("|------------|------------------|-----------|--------------|-----------|\n");
    static const struct {
        const char *m;
        double tl;
    } ms[] = {{"greedy-tarnawski", 0}, {"heft", 0}, {"m-topo", 0}, {"pipedream", 10},
              {"local-search", 1},     {"dp", 10},  {"ilp", 10}};
    for (int obj = 0; obj < 2; obj++) {
        hsdag_devices *d = NULL;
        hsdag_place_problem *p = NULL;
        hsdag_err e = {0};
        hsdag_sim_config sc = hsdag_sim_config_default();
        sc.objective = obj ? HSDAG_OBJ_THROUGHPUT : HSDAG_OBJ_LATENCY;
        if (hsdag_devices_preset(&d, "tarnawski", g, &e) < 0 ||
            hsdag_place_problem_create(&p, g, d, &sc, &e) < 0) {
            fprintf(stderr, "bench_tw: %s\n", e.msg);
            hsdag_devices_free(d);
            continue;
        }
        int32_t *dev = hsdag_malloc((size_t)g->n_nodes * sizeof *dev);
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            hsdag_place_opts o = hsdag_place_opts_default();
            o.time_limit_s = ms[i].tl;
            hsdag_place_result r;
            double t0 = tw_wall();
            int rc = hsdag_place_run(p, ms[i].m, &o, dev, &r, &e);
            double dt = tw_wall() - t0;
            if (rc < 0) {
                printf("| %-10s | %-16s | %9.3f | %12s | %9s |\n", obj ? "throughput" : "latency", ms[i].m,
                       dt, "n/a", "");
                continue;
            }
            double bound = r.lower_bound_s;
            if (r.rep.bound_contiguous && r.rep.bound_s > bound) bound = r.rep.bound_s;
            char gap[32];
            snprintf(gap, sizeof gap, "%.1f%%%s", 100 * (r.objective_s - bound) / bound,
                     r.rep.bound_contiguous && r.rep.bound_s > r.lower_bound_s ? " c" : "");
            printf("| %-10s | %-16s | %9.3f | %12.2f | %9s |\n", obj ? "throughput" : "latency", ms[i].m, dt,
                   r.objective_s * 1e3, gap);
            fflush(stdout);
        }
        hsdag_free(dev);
        hsdag_place_problem_free(p);
        hsdag_devices_free(d);
    }
    hsdag_graph_free(g);
    printf(
        "\nTime limits: pipedream/dp/ilp 10 s, local-search 1 s (a time stop). Gap 'c': against the method's "
        "own bound over contiguous splits; else against the bound for every placement (critical path, or "
        "max-class / work per device).\n");
}

void bench_tarnawski(void)
{
    bench_tw_dp();
    bench_tw_scale();
}
