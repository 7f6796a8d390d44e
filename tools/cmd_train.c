/* cmd_train.c - the 'hsdag train' subcommand: trains the HSDAG placer on the simulator or an external
 * measurement command, with a progress bar, learning curve, best placement and resumable checkpoints.
 * Not here: the learner (src/learn), the simulator or placers; 'train --graphs' (cmd_pretrain.c, handed over
 * to here). Entry points: cmd_train. */
#include "hsdag/learn.h"
#include "hsdag/measure.h"
#include "simcli.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

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
    hsdag_buf_printf(&b, "episode,mean_latency_ms,best_latency_ms,entropy,return,clusters,feasible\n");
    for (int32_t i = 0; i < n; i++)
        hsdag_buf_printf(&b, "%d,%.9g,%.9g,%.9g,%.9g,%d,%.4g\n", (int)r[i].episode, r[i].mean_latency_s * 1e3,
                         r[i].best_latency_s * 1e3, r[i].entropy, r[i].reward, (int)r[i].clusters,
                         r[i].feasible_frac);
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

/* Options that only make sense with another one, and pairs that contradict each other: usage errors. */
static int check_combinations(const cli_args *a)
{
    static const struct {
        size_t opt, needs;
        const char *opt_name, *needs_name;
    } needs[] = {
        {offsetof(cli_args, measure_timeout), offsetof(cli_args, measure_cmd), "measure-timeout",
         "measure-cmd"},
        {offsetof(cli_args, measure_retries), offsetof(cli_args, measure_cmd), "measure-retries",
         "measure-cmd"},
        {offsetof(cli_args, no_measure_memo), offsetof(cli_args, measure_cmd), "no-measure-memo",
         "measure-cmd"},
        {offsetof(cli_args, polish_evals), offsetof(cli_args, polish), "polish-evals", "polish"},
        {offsetof(cli_args, imitate_steps), offsetof(cli_args, warm_start), "imitate-steps", "warm-start"},
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        if (cli_given_off(a, needs[i].opt) && !cli_given_off(a, needs[i].needs))
            return cli_usage_error(a->name, "--%s applies with --%s only", needs[i].opt_name,
                                   needs[i].needs_name);
    static const struct {
        size_t x, y;
        const char *xn, *yn;
    } both[] = {
        {offsetof(cli_args, fixed_clusters), offsetof(cli_args, dynamic_clusters), "fixed-clusters",
         "dynamic-clusters"},
        {offsetof(cli_args, inherit), offsetof(cli_args, no_inherit), "inherit", "no-inherit"},
        {offsetof(cli_args, state_update), offsetof(cli_args, no_state_update), "state-update",
         "no-state-update"},
        {offsetof(cli_args, budget), offsetof(cli_args, episodes), "budget", "episodes"},
        {offsetof(cli_args, warm_start), offsetof(cli_args, resume), "warm-start", "resume"},
    };
    if (a->measure_cmd && cli_given(a, noise))
        return cli_usage_error(a->name,
                               "--noise applies to the simulator's measurements, not to --measure-cmd");
    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++)
        if (cli_given_off(a, both[i].x) && cli_given_off(a, both[i].y))
            return cli_usage_error(a->name, "--%s and --%s contradict each other: give one", both[i].xn,
                                   both[i].yn);
    return CLI_OK;
}

/* The learner's configuration: the paper's (--paper) or the project's defaults, then every option given. */
static hsdag_learn_config train_config(const cli_args *a)
{
    hsdag_learn_config cfg = a->paper ? hsdag_learn_config_paper() : hsdag_learn_config_default();
#define GIVEN(f) cli_given(a, f)
    if (GIVEN(episodes)) cfg.episodes = (int32_t)a->episodes;
    if (GIVEN(steps)) cfg.steps = (int32_t)a->steps;
    if (GIVEN(samples)) cfg.samples = (int32_t)a->samples;
    cfg.seed = (uint64_t)a->seed; /* the one seed default of every command */
    if (GIVEN(lr)) cfg.lr = (float)a->lr;
    if (GIVEN(levels)) cfg.levels = (int32_t)a->levels;
    if (GIVEN(min_clusters)) cfg.min_clusters = (int32_t)a->min_clusters;
    if (GIVEN(baseline)) cfg.baseline = (hsdag_learn_baseline)cli_learn_baseline(a->baseline);
    if (GIVEN(update)) cfg.update = (hsdag_learn_update)cli_learn_update(a->update);
    if (GIVEN(reward)) cfg.reward = (hsdag_learn_reward)cli_learn_reward(a->reward);
    if (GIVEN(normalize)) cfg.normalize = cli_learn_normalize(a->normalize);
    if (GIVEN(epochs)) cfg.epochs = (int32_t)a->epochs;
    if (GIVEN(clip)) cfg.clip = a->clip;
    if (GIVEN(dropout)) cfg.dropout = (float)a->dropout;
    if (GIVEN(entropy)) cfg.entropy = cfg.entropy_end = a->entropy; /* --entropy alone: a constant weight */
    if (GIVEN(entropy_end)) cfg.entropy_end = a->entropy_end;
    if (GIVEN(min_groups)) cfg.min_groups = (int32_t)a->min_groups;
    if (GIVEN(max_groups)) cfg.max_groups = (int32_t)a->max_groups;
    if (GIVEN(group_mem)) cfg.group_mem_frac = a->group_mem;
    if (GIVEN(weight_units)) cfg.weight_unit_frac = a->weight_units;
    if (GIVEN(imitate_steps)) cfg.imitate_steps = (int32_t)a->imitate_steps;
    if (GIVEN(sil)) cfg.sil = a->sil;
    if (GIVEN(sil_elite)) cfg.sil_elite = (int32_t)a->sil_elite;
    if (GIVEN(offset_lr)) cfg.offset_lr = a->offset_lr;
    if (GIVEN(penalty)) cfg.infeasible_penalty = a->penalty;
    if (GIVEN(gnn)) hsdag_nn_gnn_kind_parse(&cfg.gnn, a->gnn, NULL); /* one of the table's choices */
#undef GIVEN
    if (a->fixed_clusters) cfg.fixed_clusters = 1;
    if (a->dynamic_clusters) cfg.fixed_clusters = 0;
    if (a->inherit) cfg.inherit = 1;
    if (a->no_inherit) cfg.inherit = 0;
    if (a->state_update) cfg.state_update = 1;
    if (a->no_state_update) cfg.state_update = 0;
    if (a->no_memory_mask) cfg.memory_mask = 0;
    cfg.features = cli_learn_features(a, cfg.features);
    if (a->no_coarsen) cfg.no_coarsen = 1;
    if (cli_given(a, budget)) cfg.episodes = hsdag_learn_episodes_for(&cfg, a->budget);
    return cfg;
}

/* --warm-start M: the imitation start from M's placement (auto: the best cheap heuristic, measured through
 * the oracle). warm[n] gets it; *lat its measurement, *from its name, *evals the measurements spent. */
static int warm_start(const cli_args *a, hsdag_place_problem *p, hsdag_place_oracle *orc,
                      hsdag_learn_eval_fn evalf, void *evalc, int32_t *warm, double *lat, int *feas,
                      const char **from, int64_t *evals, hsdag_err *e)
{
    hsdag_place_opts po = hsdag_place_opts_default();
    po.seed = (uint64_t)a->seed;
    int st;
    if (strcmp(a->warm_start, "auto") == 0) {
        int64_t before = orc->evals;
        st = hsdag_learn_warm_start(p, orc, &po, warm, lat, feas, from, e);
        *evals = orc->evals - before;
        return st;
    }
    hsdag_place_result wr;
    if ((st = hsdag_place_run(p, a->warm_start, &po, warm, &wr, e)) < 0) return st;
    *from = a->warm_start;
    *evals = 1;
    return evalf(evalc, warm, lat, feas, e);
}

int cmd_train(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--graphs") == 0) /* train --graphs LIST: one policy, cmd_pretrain.c */
        return cmd_pretrain(argc - 1, argv + 1);
    cli_args a;
    cli_args_init(&a, CMD_TRAIN);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    if ((rc = check_combinations(&a)) != CLI_OK) return rc;
    const char *dir;
    int resume = 0;
    if ((rc = cli_run_dir(&a, &dir, &resume)) != CLI_OK) return rc;
    hsdag_learn_config cfg = train_config(&a);
    hsdag_err e = {0};
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    hsdag_measure *meas = NULL;
    char *ck = NULL;
    int32_t *warm = NULL;
    int st;
    if ((rc = simcli_load(&a, &s)) != CLI_OK) goto done;
    if (a.warm_start && strcmp(a.warm_start, "auto") != 0 && !hsdag_place_method_find(a.warm_start) &&
        hsdag_place_single_device(s.devs, a.warm_start) < 0) {
        rc = cli_usage_error(a.name, "--warm-start: unknown method '%s' (auto, a method or a device)",
                             a.warm_start);
        goto done;
    }
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    if (a.measure_cmd) { /* the oracle is a library module: no shell, the path is an argument of its own */
        char mpath[4096];
        snprintf(mpath, sizeof mpath, "%s/measure_placement.json", dir);
        hsdag_measure_config mcfg = hsdag_measure_config_default();
        mcfg.cmd = a.measure_cmd;
        mcfg.path = mpath;
        mcfg.timeout_s = a.measure_timeout;
        mcfg.retries = (int32_t)a.measure_retries;
        mcfg.memo = !a.no_measure_memo;
        if ((st = hsdag_measure_create(&meas, &mcfg, s.g, s.devs, &e)) < 0) goto fail;
    }
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
        goto fail;
    }
    /* --paper (the episode update): the paper's learner, blind to colour classes and to ops a device may not
     * run; otherwise the learner is made for the problem */
    if ((st = cfg.update == HSDAG_LEARN_EPISODE ? hsdag_learn_create(&L, s.g, s.devs->n, &cfg, &e)
                                                : hsdag_learn_create_problem(&L, p, &cfg, &e)) < 0)
        goto fail;
    if (resume) {
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
        if ((st = hsdag_read_file(&ck, &len, path, 0, &e)) < 0) goto fail;
        if ((st = hsdag_learn_load(L, ck, len, &e)) < 0) {
            hsdag_err_prefix(&e, path);
            goto fail;
        }
    }
    double t0 = hsdag_now();
    hsdag_place_oracle orc;
    hsdag_place_oracle_init(&orc, p, a.noise, cfg.seed);
    hsdag_learn_eval_fn evalf = a.measure_cmd ? hsdag_measure_eval : hsdag_place_oracle_eval;
    void *evalc = a.measure_cmd ? (void *)meas : (void *)&orc;
    /* imitation warm start from a heuristic's placement (measured, counted) */
    const char *warm_from = NULL;
    double warm_lat = NAN;
    int32_t imit_steps = 0;
    int64_t warm_evals = 0;
    if (a.warm_start) {
        int warm_feas = 0;
        double prob;
        if (!(warm = hsdag_malloc(sizeof(int32_t) * (size_t)(s.g->n_nodes ? s.g->n_nodes : 1)))) {
            st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
            goto fail;
        }
        if ((st = warm_start(&a, p, &orc, evalf, evalc, warm, &warm_lat, &warm_feas, &warm_from, &warm_evals,
                             &e)) < 0 ||
            (st = hsdag_learn_imitate(L, warm, &imit_steps, &prob, &e)) < 0)
            goto fail;
        if (warm_feas) hsdag_learn_offer(L, warm, warm_lat);
    }
    prog_ctx pc = {.L = L, .dir = dir};
    int32_t done_eps;
    hsdag_learn_curve(L, &done_eps);
    cli_progress_start(&pc.bar, "train", cfg.episodes, a.json || a.quiet);
    cli_progress_update(&pc.bar, done_eps, "");
    st = hsdag_learn_train(L, evalf, evalc, on_episode, &pc, &e);
    cli_progress_end(&pc.bar);
    if (pc.failed) {
        e = pc.e;
        st = e.status ? e.status : HSDAG_EIO;
        rc = cli_fail(a.name, st, &e);
        rc = CLI_FAIL; /* a write failed during the run */
        goto done;
    }
    if (st < 0) {
        /* keep what we have: curve, checkpoint and best placement so far */
        write_curve(dir, L, &pc.e);
        goto fail;
    }
    double polished = NAN, before;
    int64_t polish_evals = 0;
    hsdag_learn_best(L, NULL, &before, NULL);
    if (a.polish && (st = hsdag_learn_polish_noisy(L, p, cfg.seed, a.polish_evals, a.noise, &polished,
                                                   &polish_evals, &e)) < 0)
        goto fail;
    double train_s = hsdag_now() - t0;
    const int32_t *best;
    double lat;
    int32_t best_ep;
    hsdag_learn_best(L, &best, &lat, &best_ep);
    if (!best) {
        st = hsdag_err_set(&e, HSDAG_EINFEASIBLE, "%s: no feasible placement among %lld sampled", s.model,
                           (long long)hsdag_learn_evals(L));
        rc = cli_fail(a.name, st, &e);
        rc = CLI_FAIL; /* the computation found nothing: not bad input */
        goto done;
    }
    /* the noise-free latency of the placement returned (with --measure-cmd: the measured one; the simulator's
     * estimate is simulated_ms) */
    hsdag_place_result pr;
    if ((st = hsdag_place_score(p, best, &pr, &e)) < 0) goto fail;
    double out_s = a.measure_cmd ? lat : pr.latency_s;
    const hsdag_learn_config *cf = hsdag_learn_get_config(L);
    long long evaluated = (long long)(hsdag_learn_evals(L) + warm_evals + polish_evals);
    int64_t runs = 0, repeats = 0;
    if (meas) hsdag_measure_counts(meas, &runs, &repeats);
    char path[4096];
    snprintf(path, sizeof path, "%s/best_placement.json", dir);
    simcli_outputs o = simcli_outputs_of(&a);
    simcli_outputs in_dir = {.out = path};
    if ((rc = simcli_write_outputs(&s, p, best, &in_dir)) != CLI_OK ||
        (rc = simcli_write_outputs(&s, p, best, &o)) != CLI_OK)
        goto done;
    if (a.json) {
        hsdag_buf b = {0};
        hsdag_learn_json_info info = {.model = s.model,
                                      .cfg = cf,
                                      .measured = a.measure_cmd != NULL,
                                      .latency_s = out_s,
                                      .learned_s = before,
                                      .polished_s = polished,
                                      .noise = a.noise,
                                      .warm_start = warm_from,
                                      .warm_start_s = warm_lat,
                                      .warm_evals = warm_evals,
                                      .polish_evals = polish_evals,
                                      .wall_s = train_s,
                                      .out_dir = dir,
                                      .out = a.out,
                                      .measure_runs = runs};
        hsdag_learn_run_write_json(&b, L, p, &pr, &info);
        rc = cli_write_out(a.name, "-", &b);
        hsdag_buf_free(&b);
    } else {
        int32_t per[HSDAG_MAX_DEVICES] = {0};
        for (int32_t v = 0; v < s.g->n_nodes; v++) per[best[v]]++;
        printf("method      hsdag%s (%d episodes x %d steps x %d samples, %d groups, seed %ld)\n",
               cf->update == HSDAG_LEARN_EPISODE ? " --paper" : "", (int)cf->episodes, (int)cf->steps,
               (int)cf->samples, (int)hsdag_learn_groups(L), a.seed);
        printf("devices     %s (%s semantics)\n", s.devs->name ? s.devs->name : "",
               hsdag_semantics_name(p->sem));
        printf("latency     %.6g ms (best at episode %d)%s\n", out_s * 1e3, (int)best_ep,
               isnan(polished) ? "" : " after polish");
        if (warm_from)
            printf("warm start  %s, %.6g ms measured, %d imitation steps\n", warm_from, warm_lat * 1e3,
                   (int)imit_steps);
        if (!isnan(polished)) printf("learned     %.6g ms before polish\n", before * 1e3);
        printf("lower bound %.6g ms (%s)\n", pr.lower_bound_s * 1e3, pr.lower_bound_rule);
        printf("evaluated   %lld placements in %.3f s", evaluated, train_s);
        if (meas)
            printf(" (%lld measured by the command, %lld repeats answered from its memo)", (long long)runs,
                   (long long)repeats);
        printf("\n");
        printf("ops         ");
        for (int32_t d = 0; d < s.devs->n; d++)
            printf("%s%s %d", d ? ", " : "", s.devs->dev[d].name, (int)per[d]);
        printf("\nwrote       %s/best_placement.json, curve.csv, checkpoint.bin\n", dir);
        rc = CLI_OK;
    }
    goto done;
fail:
    rc = cli_fail(a.name, st, &e);
done:
    hsdag_free(warm);
    hsdag_free(ck);
    hsdag_measure_free(meas);
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    simcli_free(&s);
    return rc;
}
