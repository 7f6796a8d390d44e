/* cmd_pretrain.c - 'hsdag train --graphs LIST': trains one HSDAG or Placeto policy over several graphs and
 * writes it as a policy file (with the command that trained it), plus a CSV of the per-graph progress.
 * Not here: the training (src/learn/pretrain.c) or single-graph training (cmd_train.c, which hands over to
 * this file when it sees --graphs). Entry points: cmd_pretrain. */
#include "cli.h"
#include "hsdag/io.h"
#include "hsdag/pretrain.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

typedef struct pre_args {
    const char *graphs, *devices, *out;
    hsdag_pretrain_config cfg;
    cli_mem mem;
    int json;
} pre_args;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: hsdag train --graphs M1,M2,... [--devices D] [--method hsdag|placeto] [options]\n\n"
        "Trains ONE policy over all the graphs: every round runs one episode on each graph (in a shuffled\n"
        "order), each continuing the same parameters. The policy places unseen graphs with\n"
        "'hsdag place MODEL --method M --policy DIR/policy.bin [--budget N]'. Reward: the simulator.\n\n"
        "options:\n"
        "  --graphs LIST     comma-separated model files (required)\n"
        "  --devices D       device preset or JSON file, the same for every graph (default "
        "cpu-gpu)\n" CLI_MEM_HELP
        "                    (applied to each graph: GPU=50%% is half of what that graph needs)\n"
        "  --method M        hsdag (default) or placeto\n"
        "  --rounds N        passes over the graphs (default 10)\n"
        "  --seed S          parameters, sampling and the order of graphs (default 1)\n"
        "  --lr X            Adam learning rate (default 1e-3)\n"
        "  --entropy X       entropy bonus weight (default 0)\n"
        "  hsdag only:  --paper (the paper's REINFORCE instead of the project's learner; before the\n"
        "               options below), --steps N, --samples N, --gnn KIND, --no-shape, --no-id,\n"
        "               --no-struct, --levels L, --min-clusters K,\n"
        "               --warm-start (first imitate each graph's best cheap heuristic: single devices,\n"
        "               HEFT, m-ETF, greedy-tarnawski; measured and counted)\n"
        "  placeto only: --units N (decision units per graph, default 32)\n"
        "  --out DIR         writes DIR/policy.bin and DIR/progress.csv (default hsdag-pretrain)\n"
        "  --json            print a JSON summary\n"
        "  --help            this text\n");
}

static int parse(int argc, char **argv, pre_args *a)
{
    enum {
        O_GRAPHS = 1000,
        O_DEV,
        O_METHOD,
        O_ROUNDS,
        O_SEED,
        O_LR,
        O_ENT,
        O_STEPS,
        O_PAPER,
        O_WARM,
        O_SAMPLES,
        O_GNN,
        O_NOSHAPE,
        O_NOID,
        O_NOSTRUCT,
        O_LEV,
        O_MINC,
        O_UNITS,
        O_MEM,
        O_OUT,
        O_JSON,
        O_HELP
    };
    static const struct option opts[] = {{"graphs", 1, 0, O_GRAPHS},
                                         {"devices", 1, 0, O_DEV},
                                         {"method", 1, 0, O_METHOD},
                                         {"rounds", 1, 0, O_ROUNDS},
                                         {"seed", 1, 0, O_SEED},
                                         {"lr", 1, 0, O_LR},
                                         {"entropy", 1, 0, O_ENT},
                                         {"steps", 1, 0, O_STEPS},
                                         {"paper", 0, 0, O_PAPER},
                                         {"warm-start", 0, 0, O_WARM},
                                         {"samples", 1, 0, O_SAMPLES},
                                         {"gnn", 1, 0, O_GNN},
                                         {"no-shape", 0, 0, O_NOSHAPE},
                                         {"no-id", 0, 0, O_NOID},
                                         {"no-struct", 0, 0, O_NOSTRUCT},
                                         {"levels", 1, 0, O_LEV},
                                         {"min-clusters", 1, 0, O_MINC},
                                         {"units", 1, 0, O_UNITS},
                                         {"mem", 1, 0, O_MEM},
                                         {"out", 1, 0, O_OUT},
                                         {"json", 0, 0, O_JSON},
                                         {"help", 0, 0, O_HELP},
                                         {0, 0, 0, 0}};
    long l;
    double d;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) { /* also after --graphs, which would take it as its list */
            usage(stdout);
            return -1;
        }
    for (int i = 1; i < argc; i++) /* --paper first, so that the options after it still apply */
        if (strcmp(argv[i], "--paper") == 0) a->cfg.hsdag = hsdag_learn_config_paper();
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case O_GRAPHS:
            a->graphs = optarg;
            break;
        case O_DEV:
            a->devices = optarg;
            break;
        case O_METHOD:
            if (hsdag_policy_method_parse(&a->cfg.method, optarg, NULL) < 0)
                return cli_usage_error("train", "bad --method '%s' (hsdag or placeto)", optarg);
            break;
        case O_ROUNDS:
            if (cli_parse_int(optarg, 1, 1000000, &l))
                return cli_usage_error("train", "bad --rounds '%s'", optarg);
            a->cfg.rounds = (int32_t)l;
            break;
        case O_SEED:
            if (cli_parse_int(optarg, 0, 0x7fffffffffffffffL, &l))
                return cli_usage_error("train", "bad --seed '%s'", optarg);
            a->cfg.seed = a->cfg.hsdag.seed = a->cfg.placeto.seed = (uint64_t)l;
            break;
        case O_LR:
            if (cli_parse_double(optarg, 1e-9, 10, &d))
                return cli_usage_error("train", "bad --lr '%s'", optarg);
            a->cfg.hsdag.lr = a->cfg.placeto.lr = (float)d;
            break;
        case O_ENT:
            if (cli_parse_double(optarg, 0, 1e6, &d))
                return cli_usage_error("train", "bad --entropy '%s'", optarg);
            a->cfg.hsdag.entropy = a->cfg.placeto.entropy = d;
            break;
        case O_STEPS:
            if (cli_parse_int(optarg, 1, 100000, &l))
                return cli_usage_error("train", "bad --steps '%s'", optarg);
            a->cfg.hsdag.steps = (int32_t)l;
            break;
        case O_PAPER: /* applied before the loop */
            break;
        case O_WARM:
            a->cfg.warm_start = 1;
            break;
        case O_SAMPLES:
            if (cli_parse_int(optarg, 1, 100000, &l))
                return cli_usage_error("train", "bad --samples '%s'", optarg);
            a->cfg.hsdag.samples = (int32_t)l;
            break;
        case O_GNN:
            if (hsdag_nn_gnn_kind_parse(&a->cfg.hsdag.gnn, optarg, NULL) < 0)
                return cli_usage_error("train", "bad --gnn '%s' (gcn, gat, gin, sage)", optarg);
            break;
        case O_NOSHAPE:
            a->cfg.hsdag.features &= ~(1u << HSDAG_FEAT_SHAPE);
            break;
        case O_NOID:
            a->cfg.hsdag.features &= ~(1u << HSDAG_FEAT_ID);
            break;
        case O_NOSTRUCT:
            a->cfg.hsdag.features &= ~HSDAG_FEAT_STRUCT;
            break;
        case O_LEV:
            if (cli_parse_int(optarg, 1, 16, &l))
                return cli_usage_error("train", "bad --levels '%s'", optarg);
            a->cfg.hsdag.levels = (int32_t)l;
            break;
        case O_MINC:
            if (cli_parse_int(optarg, 1, 1000000000, &l))
                return cli_usage_error("train", "bad --min-clusters '%s'", optarg);
            a->cfg.hsdag.min_clusters = (int32_t)l;
            break;
        case O_UNITS:
            if (cli_parse_int(optarg, 0, 1000000, &l))
                return cli_usage_error("train", "bad --units '%s'", optarg);
            a->cfg.placeto.max_units = (int32_t)l;
            break;
        case O_MEM:
            if (cli_mem_add("train", &a->mem, optarg)) return CLI_BADINPUT;
            break;
        case O_OUT:
            a->out = optarg;
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
    if (optind != argc)
        return cli_usage_error("train", "unexpected argument '%s' (models go in --graphs)", argv[optind]);
    if (!a->graphs || !*a->graphs) return cli_usage_error("train", "--graphs needs a comma-separated list");
    if (!a->out) a->out = "hsdag-pretrain";
    if (!a->devices) a->devices = "cpu-gpu";
    return 0;
}

typedef struct prog {
    cli_progress bar;
    int32_t n;
    long steps;
    double *best; /* [n] */
    hsdag_buf csv;
    const char *const *names;
} prog;

static int on_step(void *ctx, int32_t round, int32_t graph, double lat)
{
    prog *p = ctx;
    p->best[graph] = lat;
    hsdag_buf_printf(&p->csv, "%d,%s,%.9g\n", (int)round, p->names[graph], lat * 1e3);
    char extra[64];
    snprintf(extra, sizeof extra, "round %d", (int)round + 1);
    cli_progress_update(&p->bar, ++p->steps, extra);
    return 0;
}

int cmd_pretrain(int argc, char **argv)
{
    pre_args a = {.cfg = hsdag_pretrain_config_default()};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? CLI_OK : rc;
    hsdag_err e = {0};
    int st = 0;
    /* split the list */
    char *list = NULL;
    const char *names[256];
    hsdag_graph *g[256] = {0};
    hsdag_devices *d[256] = {0};
    hsdag_place_problem *p[256] = {0};
    int32_t n = 0;
    hsdag_policy *pol = NULL;
    prog pg = {0};
    hsdag_buf note = {0}, b = {0};
    size_t ll = strlen(a.graphs);
    if (!(list = hsdag_malloc(ll + 1))) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(list, a.graphs, ll + 1);
    for (char *s = list, *tok; (tok = strsep(&s, ","));) {
        if (!*tok) continue;
        if (n == 256) {
            rc = cli_usage_error("train", "--graphs: more than 256 models");
            goto done;
        }
        names[n++] = tok;
    }
    if (n == 0) {
        rc = cli_usage_error("train", "--graphs needs at least one model");
        goto done;
    }
    double t0 = hsdag_now();
    for (int32_t i = 0; i < n; i++) {
        if ((st = hsdag_load_file(&g[i], names[i], HSDAG_FMT_UNKNOWN, &e)) < 0) goto fail;
        if ((st = hsdag_devices_load(&d[i], a.devices, g[i], &e)) < 0) goto fail;
        hsdag_sim_config sc = hsdag_sim_config_default();
        if ((st = cli_mem_apply(&a.mem, d[i], g[i], &sc, &e)) < 0) goto fail;
        if ((st = hsdag_place_problem_create(&p[i], g[i], d[i], NULL, &e)) < 0) goto fail;
    }
    if (mkdir(a.out, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", a.out, strerror(errno));
        goto fail;
    }
    pg.n = n;
    pg.names = names;
    if (!(pg.best = hsdag_malloc(sizeof(double) * (size_t)n))) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < n; i++) pg.best[i] = INFINITY;
    hsdag_buf_printf(&pg.csv, "round,model,best_latency_ms\n");
    cli_progress_start(&pg.bar, "pretrain", (long)a.cfg.rounds * n, a.json);
    st = hsdag_pretrain_train(&pol, p, n, &a.cfg, on_step, &pg, &e);
    cli_progress_end(&pg.bar);
    if (st < 0) goto fail;
    /* the note: the command that trained it */
    hsdag_buf_printf(&note, "hsdag");
    for (int i = 0; i < argc; i++) hsdag_buf_printf(&note, " %s", argv[i]);
    if (note.oom ||
        (st = hsdag_policy_set_meta(pol, d[0]->name ? d[0]->name : a.devices, note.data, &e)) < 0) {
        if (!st) st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/policy.bin", a.out);
    if ((st = hsdag_policy_save(pol, &b, &e)) < 0 ||
        (st = hsdag_write_file_atomic(path, b.data, b.len, &e)) < 0)
        goto fail;
    snprintf(path, sizeof path, "%s/progress.csv", a.out);
    if (pg.csv.oom) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    if ((st = hsdag_write_file_atomic(path, pg.csv.data, pg.csv.len, &e)) < 0) goto fail;
    double wall = hsdag_now() - t0;
    if (a.json) {
        hsdag_buf j = {0};
        hsdag_buf_printf(&j, "{\"method\": \"%s\", \"devices\": ", hsdag_policy_method_name(a.cfg.method));
        hsdag_buf_json_str(&j, a.devices);
        hsdag_buf_printf(&j, ", \"rounds\": %d, \"policy\": ", (int)a.cfg.rounds);
        snprintf(path, sizeof path, "%s/policy.bin", a.out);
        hsdag_buf_json_str(&j, path);
        hsdag_buf_printf(&j, ", \"wall_s\": ");
        hsdag_buf_double(&j, wall);
        hsdag_buf_printf(&j, ", \"graphs\": [");
        for (int32_t i = 0; i < n; i++) {
            hsdag_buf_printf(&j, "%s{\"model\": ", i ? ", " : "");
            hsdag_buf_json_str(&j, names[i]);
            hsdag_buf_printf(&j, ", \"best_latency_ms\": ");
            if (isfinite(pg.best[i]))
                hsdag_buf_double(&j, pg.best[i] * 1e3);
            else
                hsdag_buf_printf(&j, "null");
            hsdag_buf_printf(&j, "}");
        }
        hsdag_buf_printf(&j, "]}\n");
        if (j.data) fputs(j.data, stdout);
        hsdag_buf_free(&j);
    } else {
        printf("policy      %s/policy.bin (%s, %s, %d rounds over %d graphs, %.1f s)\n", a.out,
               hsdag_policy_method_name(a.cfg.method), a.devices, (int)a.cfg.rounds, (int)n, wall);
        for (int32_t i = 0; i < n; i++)
            printf("  %-40s best during training %.6g ms\n", names[i], pg.best[i] * 1e3);
    }
    rc = CLI_OK;
    goto done;
fail:
    rc = cli_fail("train", st, &e);
done:
    for (int32_t i = 0; i < n; i++) {
        hsdag_place_problem_free(p[i]);
        hsdag_devices_free(d[i]);
        hsdag_graph_free(g[i]);
    }
    hsdag_policy_free(pol);
    hsdag_free(pg.best);
    hsdag_buf_free(&pg.csv);
    hsdag_buf_free(&note);
    hsdag_buf_free(&b);
    hsdag_free(list);
    return rc;
}
