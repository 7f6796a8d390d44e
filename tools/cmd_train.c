/* cmd_train.c - the 'hsdag train' subcommand: trains the HSDAG placer on the simulator or an external
 * measurement command, with a progress bar, learning curve, best placement and resumable checkpoints.
 * Not here: the learner (src/learn), the simulator or placers. Entry points: cmd_train. */
#include "cli.h"
#include "hsdag/learn.h"
#include "hsdag/io.h"
#include "hsdag/placement.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct train_args {
    const char *model, *devices, *out, *resume, *measure_cmd, *semantics;
    hsdag_learn_config cfg;
    int json, polish, episodes_set;
    double measure_timeout;
    long measure_retries;
} train_args;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: hsdag train MODEL [options]\n\n"
        "Trains the HSDAG placer (features -> GCN -> graph-parsing pooling -> per-cluster device policy,\n"
        "REINFORCE) and keeps the best placement seen. Reward: 1 / latency from the simulator, or from\n"
        "--measure-cmd. Every episode writes DIR/curve.csv and DIR/checkpoint.bin (atomically).\n\n"
        "options:\n"
        "  --devices D        device preset or JSON file (default: cpu-gpu, or tarnawski for Tarnawski "
        "graphs)\n"
        "  --semantics S      sequential | concurrent | tarnawski | auto (default: the device set's)\n"
        "  --episodes N       episodes (default 25; with --resume: the new total)\n"
        "  --steps N          placements per episode (default 20)\n"
        "  --seed S           random seed (default 42)\n"
        "  --lr X             Adam learning rate (default 1e-3)\n"
        "  --levels L         graph-parsing levels (default 1)\n"
        "  --min-clusters K   apply a parsing level only if it leaves >= K clusters (default 2 x devices)\n"
        "  --baseline         option: per-step advantage against a moving-average baseline\n"
        "  --entropy X        option: entropy bonus weight (default 0)\n"
        "  --polish           option: local-search polish of the best placement at the end (simulator)\n"
        "  --gnn KIND         gcn | gat | gin | sage (default gcn)\n"
        "  --no-shape         ablation: drop the output-shape features\n"
        "  --no-id            ablation: drop the node-id feature\n"
        "  --no-struct        ablation: drop degree, fractal dimension and closeness\n"
        "  --no-coarsen       ablation: no co-location coarsening (one group per op)\n"
        "  --penalty X        infeasible placements are rewarded as X times slower (default 10)\n"
        "  --measure-cmd CMD  reward from an external program: CMD with {placement} replaced by the path of\n"
        "                     a placement JSON; the last number it prints on stdout is the latency in "
        "seconds\n"
        "  --measure-timeout S  seconds per measurement (default 600)\n"
        "  --measure-retries N  retries of a failed measurement (default 2)\n"
        "  --out DIR          output directory (default hsdag-train)\n"
        "  --resume DIR       continue from DIR/checkpoint.bin (bit-identical to an uninterrupted run)\n"
        "  --json             print a JSON summary\n"
        "  --help             this text\n");
}

static int parse_args(int argc, char **argv, train_args *a)
{
    enum {
        O_DEV = 1000,
        O_SEM,
        O_EP,
        O_STEPS,
        O_SEED,
        O_LR,
        O_LEV,
        O_MINC,
        O_BASE,
        O_ENT,
        O_POL,
        O_GNN,
        O_NOSHAPE,
        O_NOID,
        O_NOSTRUCT,
        O_NOCOARSEN,
        O_PEN,
        O_MCMD,
        O_MTIME,
        O_MRET,
        O_OUT,
        O_RESUME,
        O_JSON,
        O_HELP
    };
    static const struct option opts[] = {{"devices", 1, 0, O_DEV},
                                         {"semantics", 1, 0, O_SEM},
                                         {"episodes", 1, 0, O_EP},
                                         {"steps", 1, 0, O_STEPS},
                                         {"seed", 1, 0, O_SEED},
                                         {"lr", 1, 0, O_LR},
                                         {"levels", 1, 0, O_LEV},
                                         {"min-clusters", 1, 0, O_MINC},
                                         {"baseline", 0, 0, O_BASE},
                                         {"entropy", 1, 0, O_ENT},
                                         {"polish", 0, 0, O_POL},
                                         {"gnn", 1, 0, O_GNN},
                                         {"no-shape", 0, 0, O_NOSHAPE},
                                         {"no-id", 0, 0, O_NOID},
                                         {"no-struct", 0, 0, O_NOSTRUCT},
                                         {"no-coarsen", 0, 0, O_NOCOARSEN},
                                         {"penalty", 1, 0, O_PEN},
                                         {"measure-cmd", 1, 0, O_MCMD},
                                         {"measure-timeout", 1, 0, O_MTIME},
                                         {"measure-retries", 1, 0, O_MRET},
                                         {"out", 1, 0, O_OUT},
                                         {"resume", 1, 0, O_RESUME},
                                         {"json", 0, 0, O_JSON},
                                         {"help", 0, 0, O_HELP},
                                         {0, 0, 0, 0}};
    long l;
    double d;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_DEV:
            a->devices = optarg;
            break;
        case O_SEM:
            a->semantics = optarg;
            break;
        case O_EP:
            if (cli_parse_int(optarg, 0, 10000000, &l))
                return cli_usage_error("train", "bad --episodes '%s'", optarg);
            a->cfg.episodes = (int32_t)l;
            a->episodes_set = 1;
            break;
        case O_STEPS:
            if (cli_parse_int(optarg, 1, 100000, &l))
                return cli_usage_error("train", "bad --steps '%s'", optarg);
            a->cfg.steps = (int32_t)l;
            break;
        case O_SEED:
            if (cli_parse_int(optarg, 0, 0x7fffffffffffffffL, &l))
                return cli_usage_error("train", "bad --seed '%s'", optarg);
            a->cfg.seed = (uint64_t)l;
            break;
        case O_LR:
            if (cli_parse_double(optarg, 1e-9, 10, &d))
                return cli_usage_error("train", "bad --lr '%s'", optarg);
            a->cfg.lr = (float)d;
            break;
        case O_LEV:
            if (cli_parse_int(optarg, 1, 16, &l))
                return cli_usage_error("train", "bad --levels '%s' (1..16)", optarg);
            a->cfg.levels = (int32_t)l;
            break;
        case O_MINC:
            if (cli_parse_int(optarg, 1, 1000000000, &l))
                return cli_usage_error("train", "bad --min-clusters '%s'", optarg);
            a->cfg.min_clusters = (int32_t)l;
            break;
        case O_BASE:
            a->cfg.baseline = 1;
            break;
        case O_ENT:
            if (cli_parse_double(optarg, 0, 1e6, &d))
                return cli_usage_error("train", "bad --entropy '%s'", optarg);
            a->cfg.entropy = d;
            break;
        case O_POL:
            a->polish = 1;
            break;
        case O_GNN:
            if (hsdag_nn_gnn_kind_parse(optarg, &a->cfg.gnn) < 0)
                return cli_usage_error("train", "bad --gnn '%s' (gcn, gat, gin, sage)", optarg);
            break;
        case O_NOSHAPE:
            a->cfg.features &= ~(1u << HSDAG_FEAT_SHAPE);
            break;
        case O_NOID:
            a->cfg.features &= ~(1u << HSDAG_FEAT_ID);
            break;
        case O_NOSTRUCT:
            a->cfg.features &= ~HSDAG_FEAT_STRUCT;
            break;
        case O_NOCOARSEN:
            a->cfg.no_coarsen = 1;
            break;
        case O_PEN:
            if (cli_parse_double(optarg, 1, 1e12, &d))
                return cli_usage_error("train", "bad --penalty '%s' (>= 1)", optarg);
            a->cfg.infeasible_penalty = d;
            break;
        case O_MCMD:
            a->measure_cmd = optarg;
            break;
        case O_MTIME:
            if (cli_parse_double(optarg, 0.001, 1e6, &d))
                return cli_usage_error("train", "bad --measure-timeout '%s'", optarg);
            a->measure_timeout = d;
            break;
        case O_MRET:
            if (cli_parse_int(optarg, 0, 100, &l))
                return cli_usage_error("train", "bad --measure-retries '%s'", optarg);
            a->measure_retries = l;
            break;
        case O_OUT:
            a->out = optarg;
            break;
        case O_RESUME:
            a->resume = optarg;
            break;
        case O_JSON:
            a->json = 1;
            break;
        case O_HELP:
            usage(stdout);
            return -1;
        default:
            return cli_usage_error("train", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc) return cli_usage_error("train", "expected exactly one MODEL");
    a->model = argv[optind];
    if (a->resume && !a->out) a->out = a->resume;
    if (!a->out) a->out = "hsdag-train";
    return 0;
}

/* ---- external measurement ---- */

typedef struct measure_ctx {
    const char *cmd, *dir;
    const hsdag_graph *g;
    const hsdag_devices *devs;
    double timeout;
    long retries;
    char path[4096];
} measure_ctx;

/* Runs sh -c cmd once; reads stdout; returns 0 and *lat, or a status with e set. */
static int measure_once(measure_ctx *m, const char *cmd, double *lat, hsdag_err *e)
{
    int fd[2];
    if (pipe(fd) < 0) return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char out[8192];
    size_t n = 0;
    double deadline = hsdag_now() + m->timeout;
    int timed_out = 0;
    for (;;) {
        double left = deadline - hsdag_now();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {.fd = fd[0], .events = POLLIN};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        char tmp[1024];
        ssize_t k = read(fd[0], tmp, sizeof tmp);
        if (k <= 0) break;
        /* keep the tail: the latency is the last number printed */
        for (ssize_t i = 0; i < k; i++) {
            if (n == sizeof out - 1) {
                memmove(out, out + sizeof out / 2, sizeof out / 2 - 1);
                n = sizeof out / 2 - 1;
            }
            out[n++] = tmp[i];
        }
    }
    close(fd[0]);
    if (timed_out) kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (timed_out)
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: '%s' timed out after %g s", m->cmd, m->timeout);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "measure: '%s' failed (exit status %d)", m->cmd,
                             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    out[n] = 0;
    /* last token that parses completely as a number */
    double val = NAN;
    char *save = NULL;
    for (char *t = strtok_r(out, " \t\r\n,;", &save); t; t = strtok_r(NULL, " \t\r\n,;", &save)) {
        char *end;
        double v = strtod(t, &end);
        if (*end == 0 && end != t) val = v;
    }
    if (!(val > 0) || !isfinite(val))
        return hsdag_err_set(e, HSDAG_EEXTERNAL,
                             "measure: '%s' printed no positive latency (seconds) on stdout", m->cmd);
    *lat = val;
    return 0;
}

static int measure_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e)
{
    measure_ctx *m = ctx;
    hsdag_buf b = {0};
    int rc = hsdag_placement_write_json(m->g, m->devs, device, &b);
    if (rc == 0 && b.oom) rc = HSDAG_ENOMEM;
    if (rc == 0) rc = hsdag_write_file_atomic(m->path, b.data, b.len, e);
    hsdag_buf_free(&b);
    if (rc < 0) return hsdag_err_set(e, rc, "measure: cannot write %s", m->path);
    /* substitute {placement} (single-quoted path); append the path if there is no placeholder */
    hsdag_buf cmd = {0};
    const char *s = m->cmd, *hit;
    int subst = 0;
    while ((hit = strstr(s, "{placement}"))) {
        hsdag_buf_append(&cmd, s, (size_t)(hit - s));
        hsdag_buf_printf(&cmd, "'%s'", m->path);
        s = hit + strlen("{placement}");
        subst = 1;
    }
    hsdag_buf_printf(&cmd, "%s", s);
    if (!subst) hsdag_buf_printf(&cmd, " '%s'", m->path);
    if (cmd.oom) {
        hsdag_buf_free(&cmd);
        return hsdag_err_set(e, HSDAG_ENOMEM, "measure: out of memory");
    }
    for (long attempt = 0; attempt <= m->retries; attempt++) {
        rc = measure_once(m, cmd.data, latency_s, e);
        if (rc == 0) break;
    }
    hsdag_buf_free(&cmd);
    *feasible = 1;
    return rc;
}

/* ---- outputs ---- */

typedef struct prog_ctx {
    cli_progress bar;
    hsdag_learn *L;
    const char *dir;
    int failed;
    hsdag_err e;
} prog_ctx;

static int write_curve(const char *dir, const hsdag_learn *L, hsdag_err *e)
{
    int32_t n;
    const hsdag_learn_row *r = hsdag_learn_curve(L, &n);
    hsdag_buf b = {0};
    hsdag_buf_printf(&b, "episode,mean_latency_ms,best_latency_ms,entropy,return,clusters\n");
    for (int32_t i = 0; i < n; i++)
        hsdag_buf_printf(&b, "%d,%.9g,%.9g,%.9g,%.9g,%d\n", (int)r[i].episode, r[i].mean_latency_s * 1e3,
                         r[i].best_latency_s * 1e3, r[i].entropy, r[i].reward, (int)r[i].clusters);
    char path[4096];
    snprintf(path, sizeof path, "%s/curve.csv", dir);
    int rc = b.oom ? hsdag_err_set(e, HSDAG_ENOMEM, "out of memory")
                   : hsdag_write_file_atomic(path, b.data, b.len, e);
    hsdag_buf_free(&b);
    return rc;
}

static int write_checkpoint(const char *dir, const hsdag_learn *L, hsdag_err *e)
{
    hsdag_buf b = {0};
    int rc = hsdag_learn_save(L, &b, e);
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
    if (rc == 0) rc = hsdag_write_file_atomic(path, b.data, b.len, e);
    hsdag_buf_free(&b);
    return rc;
}

static int on_episode(void *ctx, const hsdag_learn_row *row, int32_t total)
{
    prog_ctx *pc = ctx;
    char extra[96];
    snprintf(extra, sizeof extra, "best %.4g ms", row->best_latency_s * 1e3);
    cli_progress_update(&pc->bar, row->episode + 1, extra);
    (void)total;
    if (write_curve(pc->dir, pc->L, &pc->e) < 0 || write_checkpoint(pc->dir, pc->L, &pc->e) < 0) {
        pc->failed = 1;
        return 1;
    }
    return 0;
}

int cmd_train(int argc, char **argv)
{
    train_args a = {.cfg = hsdag_learn_config_default(), .measure_timeout = 600, .measure_retries = 2};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? CLI_OK : rc;
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    char *ck = NULL;
    int st;
    double t0 = hsdag_now();
    hsdag_nn_set_threads(1);
    if ((st = hsdag_load_file(a.model, HSDAG_FMT_UNKNOWN, &g, &e)) < 0) goto fail;
    if ((st = hsdag_devices_load(a.devices, g, &devs, &e)) < 0) goto fail;
    hsdag_sim_config sc = hsdag_sim_config_default();
    if (a.semantics && hsdag_semantics_parse(a.semantics, &sc.semantics) < 0) {
        rc = cli_usage_error("train", "bad --semantics '%s'", a.semantics);
        goto done;
    }
    if ((st = hsdag_place_problem_create(&p, g, devs, &sc, &e)) < 0) goto fail;
    if (mkdir(a.out, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", a.out, strerror(errno));
        goto fail;
    }
    if ((st = hsdag_learn_create(&L, g, devs->n, &a.cfg, &e)) < 0) goto fail;
    if (a.resume) {
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%s/checkpoint.bin", a.resume);
        if ((st = hsdag_read_file(path, &ck, &len, 0, &e)) < 0) goto fail;
        if ((st = hsdag_learn_load(L, ck, len, &e)) < 0) {
            hsdag_err_prefix(&e, path);
            goto fail;
        }
    }
    measure_ctx mc = {.cmd = a.measure_cmd,
                      .dir = a.out,
                      .g = g,
                      .devs = devs,
                      .timeout = a.measure_timeout,
                      .retries = a.measure_retries};
    snprintf(mc.path, sizeof mc.path, "%s/measure_placement.json", a.out);
    prog_ctx pc = {.L = L, .dir = a.out};
    int32_t done_eps;
    hsdag_learn_curve(L, &done_eps);
    cli_progress_start(&pc.bar, "train", a.cfg.episodes, a.json);
    cli_progress_update(&pc.bar, done_eps, "");
    if (a.measure_cmd)
        st = hsdag_learn_train(L, measure_eval, &mc, on_episode, &pc, &e);
    else
        st = hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, on_episode, &pc, &e);
    cli_progress_end(&pc.bar);
    if (pc.failed) {
        e = pc.e;
        st = e.status ? e.status : HSDAG_EIO;
        goto fail;
    }
    if (st < 0) {
        /* keep what we have: curve, checkpoint and best placement so far */
        write_curve(a.out, L, &pc.e);
        goto fail;
    }
    double train_s = hsdag_now() - t0, polished = NAN, before;
    hsdag_learn_best(L, NULL, &before, NULL);
    if (a.polish && (st = hsdag_learn_polish(L, p, a.cfg.seed, 0, &polished, &e)) < 0) goto fail;
    const int32_t *best;
    double lat;
    int32_t best_ep;
    hsdag_learn_best(L, &best, &lat, &best_ep);
    if (!best) {
        st = hsdag_err_set(&e, HSDAG_EINFEASIBLE, "%s: no feasible placement among %lld sampled", a.model,
                           (long long)hsdag_learn_evals(L));
        goto fail;
    }
    /* score the best with the simulator too (with --measure-cmd the latency above is measured) */
    hsdag_place_result pr;
    if ((st = hsdag_place_score(p, best, &pr, &e)) < 0) goto fail;
    hsdag_buf b = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/best_placement.json", a.out);
    if ((st = hsdag_placement_write_json(g, devs, best, &b)) < 0 ||
        (st = hsdag_write_file_atomic(path, b.data, b.len, &e)) < 0) {
        hsdag_buf_free(&b);
        goto fail;
    }
    hsdag_buf_free(&b);
    double wall = hsdag_now() - t0;
    int32_t per[HSDAG_MAX_DEVICES] = {0};
    for (int32_t v = 0; v < g->n_nodes; v++) per[best[v]]++;
    if (a.json) {
        hsdag_buf_printf(&b, "{\"method\": \"hsdag\", \"model\": ");
        hsdag_buf_json_str(&b, a.model);
        hsdag_buf_printf(&b, ", \"devices\": ");
        hsdag_buf_json_str(&b, devs->name ? devs->name : "");
        hsdag_buf_printf(&b, ", \"semantics\": \"%s\", \"latency_ms\": ", hsdag_semantics_name(p->sem));
        hsdag_buf_double(&b, lat * 1e3);
        hsdag_buf_printf(&b, ", \"simulated_ms\": ");
        hsdag_buf_double(&b, pr.latency_s * 1e3);
        hsdag_buf_printf(&b, ", \"learned_ms\": ");
        hsdag_buf_double(&b, before * 1e3);
        hsdag_buf_printf(&b, ", \"polished_ms\": ");
        if (isnan(polished))
            hsdag_buf_printf(&b, "null");
        else
            hsdag_buf_double(&b, polished * 1e3);
        hsdag_buf_printf(&b, ", \"lower_bound_ms\": ");
        hsdag_buf_double(&b, pr.lower_bound_s * 1e3);
        hsdag_buf_printf(
            &b,
            ", \"feasible\": %s, \"best_episode\": %d, \"placements_evaluated\": %lld, \"episodes\": %d, "
            "\"steps\": %d, \"groups\": %d, \"params\": %zu, \"train_s\": ",
            pr.feasible ? "true" : "false", (int)best_ep, (long long)hsdag_learn_evals(L),
            (int)a.cfg.episodes, (int)a.cfg.steps, (int)hsdag_learn_groups(L), hsdag_learn_param_count(L));
        hsdag_buf_double(&b, train_s);
        hsdag_buf_printf(&b, ", \"wall_s\": ");
        hsdag_buf_double(&b, wall);
        hsdag_buf_printf(&b, ", \"out\": ");
        hsdag_buf_json_str(&b, a.out);
        hsdag_buf_printf(&b, "}\n");
        rc = cli_write_out("train", "-", &b);
        hsdag_buf_free(&b);
    } else {
        printf("method      hsdag (%d episodes x %d steps, %d groups)\n", (int)a.cfg.episodes,
               (int)a.cfg.steps, (int)hsdag_learn_groups(L));
        printf("devices     %s (%s semantics)\n", devs->name ? devs->name : "", hsdag_semantics_name(p->sem));
        printf("latency     %.6g ms (best at episode %d)%s\n", lat * 1e3, (int)best_ep,
               isnan(polished) ? "" : " after polish");
        if (!isnan(polished)) printf("learned     %.6g ms before polish\n", before * 1e3);
        printf("lower bound %.6g ms\n", pr.lower_bound_s * 1e3);
        printf("evaluated   %lld placements in %.3f s\n", (long long)hsdag_learn_evals(L), wall);
        printf("ops         ");
        for (int32_t d = 0; d < devs->n; d++)
            printf("%s%s %d", d ? ", " : "", devs->dev[d].name, (int)per[d]);
        printf("\nwrote       %s/best_placement.json, curve.csv, checkpoint.bin\n", a.out);
        rc = CLI_OK;
    }
    goto done;
fail:
    rc = cli_fail("train", st, &e);
done:
    hsdag_free(ck);
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
    return rc;
}
