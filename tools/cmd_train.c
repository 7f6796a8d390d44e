/* cmd_train.c - the 'hsdag train' subcommand: trains the HSDAG placer on the simulator or an external
 * measurement command, with a progress bar, learning curve, best placement and resumable checkpoints.
 * Not here: the learner (src/learn), the simulator or placers. Entry points: cmd_train. */
#include "hsdag/learn.h"
#include "simcli.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
    hsdag_nn_gnn_kind_parse(a.gnn, &cfg.gnn); /* one of the table's choices */
    if (a.no_shape) cfg.features &= ~(1u << HSDAG_FEAT_SHAPE);
    if (a.no_id) cfg.features &= ~(1u << HSDAG_FEAT_ID);
    if (a.no_struct) cfg.features &= ~HSDAG_FEAT_STRUCT;
    cfg.no_coarsen = a.no_coarsen;
    hsdag_err e = {0};
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    char *ck = NULL;
    int st;
    hsdag_nn_set_threads(1);
    if ((rc = simcli_load(&a, &s)) != CLI_OK) goto done;
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
        goto fail;
    }
    if ((st = hsdag_learn_create(&L, s.g, s.devs->n, &cfg, &e)) < 0) goto fail;
    if (a.resume) {
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
        if ((st = hsdag_read_file(path, &ck, &len, 0, &e)) < 0) goto fail;
        if ((st = hsdag_learn_load(L, ck, len, &e)) < 0) {
            hsdag_err_prefix(&e, path);
            goto fail;
        }
    }
    double t0 = hsdag_now();
    measure_ctx mc = {.cmd = a.measure_cmd,
                      .dir = dir,
                      .g = s.g,
                      .devs = s.devs,
                      .timeout = a.measure_timeout,
                      .retries = a.measure_retries};
    snprintf(mc.path, sizeof mc.path, "%s/measure_placement.json", dir);
    prog_ctx pc = {.L = L, .dir = dir};
    int32_t done_eps;
    hsdag_learn_curve(L, &done_eps);
    cli_progress_start(&pc.bar, "train", cfg.episodes, a.json || a.quiet);
    cli_progress_update(&pc.bar, done_eps, "");
    if (a.measure_cmd)
        st = hsdag_learn_train(L, measure_eval, &mc, on_episode, &pc, &e);
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
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    simcli_free(&s);
    return rc;
}
