/* cmd_train.c - the 'hsdag train' subcommand: trains the HSDAG placer on the simulator or an external
 * measurement command, with a progress bar, learning curve, best placement and resumable checkpoints.
 * Not here: the learner (src/learn), the simulator or placers. Entry points: cmd_train. */
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
    cli_args a;
    cli_args_init(&a, CMD_TRAIN);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    if (!a.measure_cmd && (cli_given(&a, measure_timeout) || cli_given(&a, measure_retries)))
        return cli_usage_error(a.name, "--%s applies with --measure-cmd only",
                               cli_given(&a, measure_timeout) ? "measure-timeout" : "measure-retries");
    const char *dir;
    if ((rc = cli_run_dir(&a, &dir)) != CLI_OK) return rc;
    hsdag_learn_config cfg = hsdag_learn_config_default();
    cfg.episodes = (int32_t)a.episodes;
    cfg.steps = (int32_t)a.steps;
    cfg.seed = (uint64_t)a.seed;
    cfg.lr = (float)a.lr;
    cfg.levels = (int32_t)a.levels;
    cfg.min_clusters = (int32_t)a.min_clusters;
    cfg.baseline = a.baseline;
    cfg.entropy = a.entropy;
    cfg.infeasible_penalty = a.penalty;
    hsdag_nn_gnn_kind_parse(&cfg.gnn, a.gnn, NULL); /* one of the table's choices */
    if (a.no_shape) cfg.features &= ~(1u << HSDAG_FEAT_SHAPE);
    if (a.no_id) cfg.features &= ~(1u << HSDAG_FEAT_ID);
    if (a.no_struct) cfg.features &= ~HSDAG_FEAT_STRUCT;
    cfg.no_coarsen = a.no_coarsen;
    hsdag_err e = {0};
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    hsdag_measure *meas = NULL;
    char *ck = NULL;
    int st;
    if ((rc = simcli_load(&a, &s)) != CLI_OK) goto done;
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    if (a.measure_cmd) { /* the oracle is a library module: no shell, the path is an argument of its own */
        char mpath[4096];
        snprintf(mpath, sizeof mpath, "%s/measure_placement.json", dir);
        hsdag_measure_config mcfg = hsdag_measure_config_default();
        mcfg.cmd = a.measure_cmd;
        mcfg.path = mpath;
        mcfg.timeout_s = a.measure_timeout;
        mcfg.retries = (int32_t)a.measure_retries;
        if ((st = hsdag_measure_create(&meas, &mcfg, s.g, s.devs, &e)) < 0) goto fail;
    }
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
        goto fail;
    }
    if ((st = hsdag_learn_create(&L, s.g, s.devs->n, &cfg, &e)) < 0) goto fail;
    if (a.resume) {
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
    prog_ctx pc = {.L = L, .dir = dir};
    int32_t done_eps;
    hsdag_learn_curve(L, &done_eps);
    cli_progress_start(&pc.bar, "train", cfg.episodes, a.json || a.quiet);
    cli_progress_update(&pc.bar, done_eps, "");
    if (a.measure_cmd)
        st = hsdag_learn_train(L, hsdag_measure_eval, meas, on_episode, &pc, &e);
    else
        st = hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, on_episode, &pc, &e);
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
    hsdag_learn_best(L, NULL, &before, NULL);
    if (a.polish && (st = hsdag_learn_polish(L, p, cfg.seed, 0, &polished, &e)) < 0) goto fail;
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
    /* score the best with the simulator too (with --measure-cmd the latency above is measured) */
    hsdag_place_result pr;
    if ((st = hsdag_place_score(p, best, &pr, &e)) < 0) goto fail;
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
                                      .cfg = &cfg,
                                      .measured = a.measure_cmd != NULL,
                                      .learned_s = before,
                                      .polished_s = polished,
                                      .wall_s = train_s,
                                      .out_dir = dir,
                                      .out = a.out};
        hsdag_learn_run_write_json(&b, L, p, &pr, &info);
        rc = cli_write_out(a.name, "-", &b);
        hsdag_buf_free(&b);
    } else {
        int32_t per[HSDAG_MAX_DEVICES] = {0};
        for (int32_t v = 0; v < s.g->n_nodes; v++) per[best[v]]++;
        printf("method      hsdag (%d episodes x %d steps, %d groups, seed %ld)\n", (int)cfg.episodes,
               (int)cfg.steps, (int)hsdag_learn_groups(L), a.seed);
        printf("devices     %s (%s semantics)\n", s.devs->name ? s.devs->name : "",
               hsdag_semantics_name(p->sem));
        printf("latency     %.6g ms (best at episode %d)%s\n", lat * 1e3, (int)best_ep,
               isnan(polished) ? "" : " after polish");
        if (!isnan(polished)) printf("learned     %.6g ms before polish\n", before * 1e3);
        printf("lower bound %.6g ms (%s)\n", pr.lower_bound_s * 1e3, pr.lower_bound_rule);
        printf("evaluated   %lld placements in %.3f s\n", (long long)hsdag_learn_evals(L), train_s);
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
    hsdag_free(ck);
    hsdag_measure_free(meas);
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    simcli_free(&s);
    return rc;
}
