/* cmd_pretrain.c - 'hsdag train --graphs LIST' (its options: tools/opt.c, CMD_PRETRAIN): trains one HSDAG or
 * Placeto policy over several graphs (each also under every --mem-also cap) and writes it as a policy file
 * (with the command that trained it), plus a CSV of the per-graph progress, in the run directory.
 * Not here: the training (src/learn/pretrain.c) or single-graph training (cmd_train.c, which hands over to
 * this file when --graphs comes first). Entry points: cmd_pretrain. */
#include "hsdag/pretrain.h"
#include "simcli.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* The pre-training configuration: the library's defaults, then every option given. */
static int pretrain_config(const cli_args *a, hsdag_pretrain_config *cfg)
{
    *cfg = hsdag_pretrain_config_default();
    if (a->paper) cfg->hsdag = hsdag_learn_config_paper();
    if (hsdag_policy_method_parse(&cfg->method, a->method, NULL) < 0)
        return cli_usage_error(a->name, "--method '%s' is not hsdag or placeto", a->method);
    if (a->warm_start && strcmp(a->warm_start, "auto") != 0 && strcmp(a->warm_start, "none") != 0)
        return cli_usage_error(a->name, "--warm-start '%s': train --graphs takes auto or none",
                               a->warm_start);
    int placeto = cfg->method == HSDAG_POLICY_PLACETO;
    static const struct {
        size_t off;
        const char *name;
        int placeto;
    } only[] = {{offsetof(cli_args, paper), "paper", 0},
                {offsetof(cli_args, steps), "steps", 0},
                {offsetof(cli_args, samples), "samples", 0},
                {offsetof(cli_args, gnn), "gnn", 0},
                {offsetof(cli_args, no_shape), "no-shape", 0},
                {offsetof(cli_args, no_id), "no-id", 0},
                {offsetof(cli_args, no_struct), "no-struct", 0},
                {offsetof(cli_args, no_coarsen), "no-coarsen", 0},
                {offsetof(cli_args, cost_features), "cost-features", 0},
                {offsetof(cli_args, no_cost_features), "no-cost-features", 0},
                {offsetof(cli_args, levels), "levels", 0},
                {offsetof(cli_args, min_clusters), "min-clusters", 0},
                {offsetof(cli_args, weight_units), "weight-units", 0},
                {offsetof(cli_args, warm_start), "warm-start", 0},
                {offsetof(cli_args, units), "units", 1}};
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
        if (cli_given_off(a, only[i].off) && only[i].placeto != placeto)
            return cli_usage_error(a->name, "--%s applies with --method %s only", only[i].name,
                                   only[i].placeto ? "placeto" : "hsdag");
    if (a->cost_features && a->no_cost_features)
        return cli_usage_error(a->name, "--cost-features and --no-cost-features: give one");
    cfg->seed = cfg->hsdag.seed = cfg->placeto.seed = (uint64_t)a->seed; /* the one seed default: 0 */
    if (cli_given(a, lr)) cfg->hsdag.lr = cfg->placeto.lr = (float)a->lr;
    if (cli_given(a, entropy)) cfg->hsdag.entropy = cfg->placeto.entropy = a->entropy;
    if (cli_given(a, rounds)) cfg->rounds = (int32_t)a->rounds;
    if (cli_given(a, steps)) cfg->hsdag.steps = (int32_t)a->steps;
    if (cli_given(a, samples)) cfg->hsdag.samples = (int32_t)a->samples;
    if (cli_given(a, levels)) cfg->hsdag.levels = (int32_t)a->levels;
    if (cli_given(a, min_clusters)) cfg->hsdag.min_clusters = (int32_t)a->min_clusters;
    if (cli_given(a, weight_units)) cfg->hsdag.weight_unit_frac = a->weight_units;
    if (cli_given(a, units)) cfg->placeto.max_units = (int32_t)a->units;
    if (cli_given(a, gnn)) hsdag_nn_gnn_kind_parse(&cfg->hsdag.gnn, a->gnn, NULL); /* one of the choices */
    cfg->hsdag.features = cli_learn_features(a, cfg->hsdag.features);
    if (a->no_coarsen) cfg->hsdag.no_coarsen = 1;
    if (a->warm_start) cfg->warm_start = strcmp(a->warm_start, "none") != 0;
    if ((a->paper && !a->warm_start) || placeto) cfg->warm_start = 0; /* rewards alone */
    /* more rounds after the imitation made the held-out placements worse (docs/baselines.md); without it, the
     * rewards are all there is */
    if (!cli_given(a, rounds) && !cfg->warm_start) cfg->rounds = 10;
    return CLI_OK;
}

/* One extra cap of --mem-also: DEV and one of its sizes, pointing into the argument. */
typedef struct cap_variant {
    const char *dev, *size;
    int dev_len, size_len;
} cap_variant;

/* The extra caps, one per size of every --mem-also DEV=SIZE,SIZE,... value, in order: *nv of them. */
static int mem_variants(const cli_args *a, cap_variant *var, int32_t *nv)
{
    *nv = 0;
    for (int k = 0; k < a->mem_also.n; k++) {
        const char *v = a->mem_also.v[k], *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1])
            return cli_usage_error(a->name, "--mem-also '%s': expected DEV=SIZE,...", v);
        for (const char *s = eq + 1; *s;) {
            int sl = (int)strcspn(s, ",");
            if (!sl) return cli_usage_error(a->name, "--mem-also '%s': an empty SIZE", v);
            if (*nv == 255) return cli_usage_error(a->name, "--mem-also: more than 255 caps");
            var[(*nv)++] = (cap_variant){v, s, (int)(eq - v), sl};
            s += sl + (s[sl] == ',');
        }
    }
    return CLI_OK;
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
    if (round < 0)
        snprintf(extra, sizeof extra, "imitation targets");
    else
        snprintf(extra, sizeof extra, "round %d", (int)round + 1);
    cli_progress_update(&p->bar, ++p->steps, extra);
    return 0;
}

int cmd_pretrain(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_PRETRAIN);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    hsdag_pretrain_config cfg;
    if ((rc = pretrain_config(&a, &cfg)) != CLI_OK) return rc;
    const char *dir;
    if ((rc = cli_run_dir(&a, &dir, NULL)) != CLI_OK) return rc;
    const char *devices = a.devices ? a.devices : "cpu-gpu";
    hsdag_err e = {0};
    int st = 0;
    /* split the list; every graph is trained once with the --mem caps alone, then once per --mem-also cap */
    char *list = NULL;
    const char *names[256], *label[256];
    size_t off[256]; /* an extra cap's label "FILE@DEV=SIZE" in txt; its spec for --mem is "DEV=SIZE" */
    cap_variant var[255];
    hsdag_buf txt = {0};
    hsdag_graph *g[256] = {0};
    hsdag_devices *d[256] = {0};
    hsdag_place_problem *p[256] = {0};
    int32_t n = 0, nf = 0, nv = 0;
    hsdag_policy *pol = NULL;
    prog pg = {0};
    hsdag_buf note = {0}, b = {0};
    size_t ll = strlen(a.pos[0]);
    if (!(list = hsdag_malloc(ll + 1))) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(list, a.pos[0], ll + 1);
    for (char *s = list, *tok; (tok = strsep(&s, ","));) {
        if (!*tok) continue;
        if (nf == 256) {
            rc = cli_usage_error(a.name, "LIST: more than 256 models");
            goto done;
        }
        names[nf++] = tok;
    }
    if (nf == 0) {
        rc = cli_usage_error(a.name, "LIST names no model");
        goto done;
    }
    if ((rc = mem_variants(&a, var, &nv)) != CLI_OK) goto done;
    if ((int64_t)nf * (nv + 1) > 256) {
        rc = cli_usage_error(a.name, "LIST and --mem-also: %lld graphs to train on, more than 256",
                             (long long)nf * (nv + 1));
        goto done;
    }
    n = nf * (nv + 1);
    /* problem i: graph i % nf, with extra cap i / nf - 1 from i = nf on */
    for (int32_t i = nf; i < n; i++) {
        const cap_variant *c = &var[i / nf - 1];
        off[i] = txt.len;
        hsdag_buf_printf(&txt, "%s@%.*s=%.*s", names[i % nf], c->dev_len, c->dev, c->size_len, c->size);
        hsdag_buf_append(&txt, "", 1);
    }
    if (txt.oom) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < n; i++) label[i] = i < nf ? names[i] : txt.data + off[i];
    double t0 = hsdag_now();
    for (int32_t i = 0; i < n; i++) {
        if (i < nf && (st = hsdag_load_file(&g[i], names[i], HSDAG_FMT_UNKNOWN, &e)) < 0) goto fail;
        const hsdag_graph *gi = g[i % nf];
        if ((st = hsdag_devices_load(&d[i], devices, gi, &e)) < 0) goto fail;
        hsdag_sim_config sc = hsdag_sim_config_default();
        for (int k = 0; k < a.mem.n; k++) /* --mem caps, in order: P% of what this graph needs */
            if ((st = hsdag_devices_mem_override(d[i], gi, &sc, a.mem.v[k], &e)) < 0) goto fail;
        const char *spec = i < nf ? NULL : label[i] + strlen(names[i % nf]) + 1; /* after "FILE@" */
        if (spec && (st = hsdag_devices_mem_override(d[i], gi, &sc, spec, &e)) < 0) {
            hsdag_err_prefix(&e, "--mem-also"); /* the library's message names the spec as --mem's */
            goto fail;
        }
        if ((st = hsdag_place_problem_create(&p[i], gi, d[i], &sc, &e)) < 0) goto fail;
    }
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
        goto fail;
    }
    pg.n = n;
    pg.names = label;
    if (!(pg.best = hsdag_malloc(sizeof(double) * (size_t)n))) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < n; i++) pg.best[i] = INFINITY;
    hsdag_buf_printf(&pg.csv, "round,model,best_latency_ms\n");
    cli_progress_start(&pg.bar, "pretrain", (long)(cfg.rounds + (cfg.warm_start != 0)) * n,
                       a.json || a.quiet);
    st = hsdag_pretrain_train(&pol, p, n, &cfg, on_step, &pg, &e);
    cli_progress_end(&pg.bar);
    if (st < 0) goto fail;
    /* the note: the command that trained it */
    hsdag_buf_printf(&note, "hsdag train"); /* argv[0] is "--graphs" */
    for (int i = 0; i < argc; i++) hsdag_buf_printf(&note, " %s", argv[i]);
    if (note.oom || (st = hsdag_policy_set_meta(pol, d[0]->name ? d[0]->name : devices, note.data, &e)) < 0) {
        if (!st) st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/policy.bin", dir);
    if ((st = hsdag_policy_save(pol, &b, &e)) < 0 ||
        (st = hsdag_write_file_atomic(path, b.data, b.len, &e)) < 0)
        goto fail;
    snprintf(path, sizeof path, "%s/progress.csv", dir);
    if (pg.csv.oom) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    if ((st = hsdag_write_file_atomic(path, pg.csv.data, pg.csv.len, &e)) < 0) goto fail;
    double wall = hsdag_now() - t0;
    if (a.json) {
        hsdag_buf j = {0};
        snprintf(path, sizeof path, "%s/policy.bin", dir);
        hsdag_pretrain_json_info info = {.method = hsdag_policy_method_name(cfg.method),
                                         .devices = devices,
                                         .policy = path,
                                         .out_dir = dir,
                                         .seed = a.seed,
                                         .rounds = cfg.rounds,
                                         .n = n,
                                         .models = label,
                                         .best_s = pg.best,
                                         .wall_s = wall};
        if (hsdag_pretrain_run_write_json(&j, &info) < 0) j.oom = 1;
        rc = cli_write_out(a.name, "-", &j);
        hsdag_buf_free(&j);
        goto done;
    } else {
        printf("policy      %s/policy.bin (%s, %s, %d round%s over %d graphs, %.1f s)\n", dir,
               hsdag_policy_method_name(cfg.method), devices, (int)cfg.rounds, cfg.rounds == 1 ? "" : "s",
               (int)n, wall);
        for (int32_t i = 0; i < n; i++)
            printf("  %-40s best during training %.6g ms\n", label[i], pg.best[i] * 1e3);
    }
    rc = CLI_OK;
    goto done;
fail:
    rc = cli_fail(a.name, st, &e);
done:
    for (int32_t i = 0; i < n; i++) {
        hsdag_place_problem_free(p[i]);
        hsdag_devices_free(d[i]);
    }
    for (int32_t i = 0; i < nf; i++) hsdag_graph_free(g[i]);
    hsdag_policy_free(pol);
    hsdag_free(pg.best);
    hsdag_buf_free(&pg.csv);
    hsdag_buf_free(&note);
    hsdag_buf_free(&b);
    hsdag_free(list);
    hsdag_buf_free(&txt);
    return rc;
}
