/* cmd_cluster_train.c - 'hsdag cluster train': trains the PAC-ML GNN policy with PPO for one beta
 *   distribution; writes DIR/curve.csv, DIR/checkpoint.bin (resumable) and DIR/policy.bin (best). Parses
 *   the options of both algorithms and hands --algo dqn to cmd_cluster_train_dqn.c.
 * Not here: the network and PPO (src/learn/pacml_*.c), DQN training (cmd_cluster_train_dqn.c); evaluation
 *   is 'hsdag cluster run --policy learned:DIR'.
 * Entry points: cmd_cluster_train (argv[0] = "train"; wired from cmd_cluster), ct_write.
 */
#include "cli.h"
#include "cluster_train.h"
#include "hsdag/cluster.h"
#include "opt.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

typedef struct ct_opts {
    hsdag_cluster_config cc;
    hsdag_pacml_train_config tc;
} ct_opts;

/* The table's values into the cluster and training configurations: every option (a new run), or only the
 * options on the command line, over a restored run's configuration (only_given = 1). */
static void ct_setup(const cli_args *a, ct_opts *o, int only_given)
{
#define CT_SET(field, lhs, value)                                \
    do {                                                         \
        if (!only_given || cli_given(a, field)) (lhs) = (value); \
    } while (0)
    CT_SET(beta, o->cc.beta, a->beta[0]);
    CT_SET(time_unit_fix, o->cc.time_unit_fix, a->time_unit_fix);
    CT_SET(horizon, o->cc.horizon, a->horizon);
    CT_SET(interarrival, o->cc.interarrival, a->interarrival);
    CT_SET(seed, o->tc.seed, (uint64_t)a->seed);
    CT_SET(iterations, o->tc.iterations, (int32_t)a->iterations);
    CT_SET(batch_episodes, o->tc.episodes_per_iter, (int32_t)a->batch_episodes);
    CT_SET(epochs, o->tc.epochs, (int32_t)a->epochs);
    CT_SET(minibatch, o->tc.minibatch, (int32_t)a->minibatch);
    CT_SET(lr, o->tc.lr, (float)a->lr);
    CT_SET(clip, o->tc.loss.clip, (float)a->clip);
    CT_SET(gamma, o->tc.gamma, a->gamma);
    CT_SET(lambda, o->tc.lambda, a->lambda);
    CT_SET(entropy, o->tc.loss.ent_coeff, (float)a->entropy);
    CT_SET(vf, o->tc.loss.vf_coeff, (float)a->vf);
    CT_SET(kl, o->tc.loss.kl_coeff, (float)a->kl);
    CT_SET(kl_target, o->tc.kl_target, (float)a->kl_target);
    CT_SET(grad_clip, o->tc.grad_clip, (float)a->grad_clip);
    CT_SET(hidden, o->tc.net.fc_hidden, (int32_t)a->hidden);
    CT_SET(eval_episodes, o->tc.eval_episodes, (int32_t)a->eval_episodes);
    if (!only_given || cli_given(a, mask))
        hsdag_pacml_mask_parse(&o->tc.net.mask_mode, a->mask, NULL); /* one of the table's choices */
#undef CT_SET
}

static int ct_join(char *dst, size_t cap, const char *dir, const char *name)
{
    return snprintf(dst, cap, "%s/%s", dir, name) < (int)cap ? 0 : -1;
}

int ct_write(const char *dir, const char *name, const hsdag_buf *b, hsdag_err *e)
{
    char p[4096];
    if (ct_join(p, sizeof p, dir, name) < 0) return hsdag_err_set(e, HSDAG_EINVAL, "%s: path too long", dir);
    if (b->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p);
    return hsdag_write_file_atomic(p, b->len ? b->data : "", b->len, e);
}

static void ct_curve_row(hsdag_buf *b, const hsdag_pacml_iter_stats *s)
{
    hsdag_buf_printf(b, "%d,%lld,%.6f,%.2f,%.6f,%.6f,%.6g,%.6g,%.6g,%.6g,%.4f,%.5g,%.2f\n", s->iteration,
                     (long long)s->steps, s->train_blocking, s->train_return, s->eval_blocking, s->entropy,
                     s->value_loss, s->policy_loss, s->kl, s->kl_coeff, s->clip_frac, s->grad_norm,
                     s->wall_s);
}

/* --resume continues a run as it was: options given again must agree with the checkpoint's. The given
 * options are applied on top of the restored configuration; any field they change is refused. */
static int ct_same_run(const cli_args *a, const ct_opts *o, const char *path, hsdag_err *e)
{
    ct_opts chk = *o;
    ct_setup(a, &chk, 1);
    chk.tc.iterations = o->tc.iterations;
    const char *f = hsdag_cluster_config_diff(&chk.cc, &o->cc);
    if (!f) f = hsdag_pacml_train_config_diff(&chk.tc, &o->tc);
    if (!f) return 0;
    return hsdag_err_set(e, HSDAG_EINVAL,
                         "%s: the run was made with another --%s; --resume continues it as it was (drop the "
                         "option, or train into a new --out-dir)",
                         path, f);
}

/* The options only one algorithm reads: given with the other, an error naming the algorithm. */
static int ct_algo_options(const cli_args *a, int dqn)
{
    static const struct {
        size_t off;
        const char *name;
        int dqn;
    } only[] = {
        {offsetof(cli_args, epochs), "epochs", 0},
        {offsetof(cli_args, minibatch), "minibatch", 0},
        {offsetof(cli_args, clip), "clip", 0},
        {offsetof(cli_args, lambda), "lambda", 0},
        {offsetof(cli_args, vf), "vf", 0},
        {offsetof(cli_args, kl), "kl", 0},
        {offsetof(cli_args, kl_target), "kl-target", 0},
        {offsetof(cli_args, hidden), "hidden", 0},
        {offsetof(cli_args, entropy), "entropy", 0},
        {offsetof(cli_args, resume), "resume", 0},
        {offsetof(cli_args, n_step), "n-step", 1},
        {offsetof(cli_args, lr_end), "lr-end", 1},
        {offsetof(cli_args, batch), "batch", 1},
        {offsetof(cli_args, train_every), "train-every", 1},
        {offsetof(cli_args, replay), "replay", 1},
        {offsetof(cli_args, learning_starts), "learning-starts", 1},
        {offsetof(cli_args, target_every), "target-every", 1},
        {offsetof(cli_args, per_alpha), "per-alpha", 1},
        {offsetof(cli_args, per_beta), "per-beta", 1},
        {offsetof(cli_args, eps_start), "eps-start", 1},
        {offsetof(cli_args, eps_end), "eps-end", 1},
        {offsetof(cli_args, eps_decay), "eps-decay", 1},
        {offsetof(cli_args, head), "head", 1},
    };
    for (size_t i = 0; i < sizeof only / sizeof only[0]; i++)
        if (only[i].dqn != dqn && cli_given_off(a, only[i].off))
            return cli_usage_error(a->name, "--%s does not apply to --algo %s (an option of --algo %s)",
                                   only[i].name, dqn ? "dqn" : "ppo", dqn ? "ppo" : "dqn");
    return CLI_OK;
}

/* --algo dqn on the command line (looked for before parsing, so that --help shows DQN's defaults). */
static int ct_wants_dqn(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--algo=dqn") ||
            (!strcmp(argv[i], "--algo") && i + 1 < argc && !strcmp(argv[i + 1], "dqn")))
            return 1;
    }
    return 0;
}

/* DQN's defaults for the options both algorithms take. */
static void ct_dqn_defaults(cli_args *a)
{
    hsdag_pacml_dqn_config q = hsdag_pacml_dqn_config_default();
    a->iterations = 100;
    a->batch_episodes = q.eval_every;
    a->eval_episodes = q.eval_episodes;
    a->gamma = q.gamma;
    a->lr = q.lr;
    a->grad_clip = q.grad_clip;
    static const char *const mask[] = {"spec", "place", "place-jct"}; /* hsdag_pacml_mask_mode's order */
    a->mask = mask[q.net.mask_mode];
}

int cmd_cluster_train(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_CLUSTER_TRAIN);
    if (ct_wants_dqn(argc, argv)) ct_dqn_defaults(&a);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    int dqn = !strcmp(a.algo, "dqn");
    if ((rc = ct_algo_options(&a, dqn)) != CLI_OK) return rc;
    if (dqn) return cmd_cluster_train_dqn(&a);
    const char *dir;
    int resume = 0;
    if ((rc = cli_run_dir(&a, &dir, &resume)) != CLI_OK) return rc;
    ct_opts o;
    memset(&o, 0, sizeof o);
    o.cc = hsdag_cluster_config_default();
    o.tc = hsdag_pacml_train_config_default();
    ct_setup(&a, &o, 0);
    if (o.cc.horizon / o.cc.interarrival > 1e7)
        return cli_usage_error(a.name, "--horizon / --interarrival is %.3g arrivals, above 1e7",
                               o.cc.horizon / o.cc.interarrival);
    hsdag_err e = {0};
    char path[4096];
    char *ck = NULL, *curve_old = NULL;
    size_t ck_len = 0, curve_len = 0;
    hsdag_cluster *env = NULL;
    hsdag_pacml_trainer *t = NULL;
    hsdag_buf curve = {0}, img = {0};
    if (ct_join(path, sizeof path, dir, "checkpoint.bin") < 0)
        return cli_usage_error(a.name, "'%s': path too long", dir);
    if (resume) {
        if ((rc = hsdag_read_file(&ck, &ck_len, path, (size_t)256 << 20, &e)) < 0)
            return cli_fail(a.name, rc, &e);
        if ((rc = hsdag_cluster_train_load(&env, &t, &o.cc, ck, ck_len,
                                           cli_given(&a, iterations) ? o.tc.iterations : -1, path, &e)) < 0)
            goto fail;
        o.tc = *hsdag_pacml_trainer_config(t);
        if ((rc = ct_same_run(&a, &o, path, &e)) < 0) goto fail;
        char cp[4096];
        if (ct_join(cp, sizeof cp, dir, "curve.csv") == 0 &&
            hsdag_read_file(&curve_old, &curve_len, cp, 0, NULL) == 0) {
            /* keep the header and the rows of the iterations the checkpoint covers */
            int32_t done = hsdag_pacml_trainer_iteration(t), lines = 0;
            size_t keep = 0;
            for (size_t i = 0; i < curve_len; i++)
                if (curve_old[i] == '\n' && ++lines == done + 1) {
                    keep = i + 1;
                    break;
                }
            if (lines == done + 1) hsdag_buf_append(&curve, curve_old, keep);
        }
    } else {
        if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
            hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
            return cli_fail(a.name, HSDAG_EIO, &e);
        }
        if ((rc = hsdag_cluster_create(&env, &o.cc, NULL, NULL, 0, &e)) < 0) goto fail;
        hsdag_pacml_env pe;
        hsdag_cluster_pacml_env(&pe, env);
        if ((rc = hsdag_pacml_trainer_create(&t, &pe, &o.tc, &e)) < 0) goto fail;
    }
    if (!curve.len)
        hsdag_buf_printf(&curve,
                         "iteration,steps,train_blocking,train_return,eval_blocking,entropy,value_loss,"
                         "policy_loss,kl,kl_coeff,clip_frac,grad_norm,wall_s\n");
    int32_t total = hsdag_pacml_trainer_total(t);
    if (resume && hsdag_pacml_trainer_iteration(t) > total) {
        rc = cli_usage_error(a.name, "%s has %d iterations already: give --iterations at least that", dir,
                             hsdag_pacml_trainer_iteration(t));
        goto done;
    }
    cli_progress pg;
    cli_progress_start(&pg, "train", total, a.quiet || a.json);
    hsdag_pacml_iter_stats s = {0};
    while (hsdag_pacml_trainer_iteration(t) < total) {
        if ((rc = hsdag_pacml_trainer_iterate(t, &s, &e)) < 0) break;
        ct_curve_row(&curve, &s);
        /* curve first, checkpoint last: a kill in between leaves a curve with rows the resumed run drops and
         * recomputes identically, never a checkpoint ahead of its curve */
        rc = ct_write(dir, "curve.csv", &curve, &e);
        img.len = 0;
        if (rc == 0) rc = hsdag_pacml_trainer_save_best(t, &img, &e);
        if (rc == 0) rc = ct_write(dir, "policy.bin", &img, &e);
        /* checkpoint = the cluster configuration + the trainer state (the library's run format); atomic */
        hsdag_buf ckb = {0};
        if (rc == 0) rc = hsdag_cluster_train_save(&ckb, &o.cc, t, &e);
        if (rc == 0) rc = ct_write(dir, "checkpoint.bin", &ckb, &e);
        hsdag_buf_free(&ckb);
        if (rc < 0) break;
        char extra[96];
        int32_t bi;
        double best = hsdag_pacml_trainer_best(t, &bi);
        snprintf(extra, sizeof extra, "train %.3f eval %.3f best %.3f", s.train_blocking, s.eval_blocking,
                 best);
        cli_progress_update(&pg, hsdag_pacml_trainer_iteration(t), extra);
    }
    cli_progress_end(&pg);
    if (rc < 0) goto fail;
    {
        int32_t bi = 0;
        double best = hsdag_pacml_trainer_best(t, &bi);
        hsdag_buf b = {0};
        if (a.json) {
            hsdag_pacml_run_write_json(&b, t, o.cc.beta, &s, dir);
        } else {
            hsdag_buf_printf(&b,
                             "trained %d iterations (%lld decisions, %.1f s); best greedy eval blocking %.4f "
                             "at iteration %d\n"
                             "policy: %s/policy.bin  curve: %s/curve.csv  checkpoint: %s/checkpoint.bin\n",
                             hsdag_pacml_trainer_iteration(t), (long long)s.steps, s.wall_s, best, bi, dir,
                             dir, dir);
        }
        rc = cli_write_out(a.name, "-", &b);
        hsdag_buf_free(&b);
    }
    goto done;
fail:
    rc = cli_fail(a.name, rc, &e);
done:
    hsdag_pacml_trainer_free(t);
    hsdag_cluster_free(env);
    hsdag_buf_free(&curve);
    hsdag_buf_free(&img);
    hsdag_free(ck);
    hsdag_free(curve_old);
    return rc;
}
