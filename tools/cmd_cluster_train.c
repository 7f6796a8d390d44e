/* cmd_cluster_train.c - 'hsdag cluster train': trains the PAC-ML GNN policy with PPO for one beta
 *   distribution; writes DIR/curve.csv, DIR/checkpoint.bin (resumable) and DIR/policy.bin (best).
 * Not here: the network and PPO (src/learn/pacml_*.c); evaluation is 'hsdag cluster run --policy
 * learned:DIR'.
 * Entry points: cmd_cluster_train (argv[0] = "train"; wired from cmd_cluster).
 */
#include "cli.h"
#include "hsdag/cluster.h"
#include "opt.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#define CT_RUN_MAGIC "HSPACRUN"

typedef struct ct_opts {
    hsdag_cluster_config cc;
    hsdag_pacml_train_config tc;
} ct_opts;

/* The table's values into the cluster and training configurations. */
static void ct_setup(const cli_args *a, ct_opts *o)
{
    o->cc = hsdag_cluster_config_default();
    o->tc = hsdag_pacml_train_config_default();
    o->cc.beta = a->beta[0];
    o->cc.time_unit_fix = a->time_unit_fix;
    o->cc.horizon = a->horizon;
    o->cc.interarrival = a->interarrival;
    o->tc.seed = (uint64_t)a->seed;
    o->tc.iterations = (int32_t)a->iterations;
    o->tc.episodes_per_iter = (int32_t)a->batch_episodes;
    o->tc.epochs = (int32_t)a->epochs;
    o->tc.minibatch = (int32_t)a->minibatch;
    o->tc.lr = (float)a->lr;
    o->tc.loss.clip = (float)a->clip;
    o->tc.gamma = a->gamma;
    o->tc.lambda = a->lambda;
    o->tc.loss.ent_coeff = (float)a->entropy;
    o->tc.loss.vf_coeff = (float)a->vf;
    o->tc.loss.kl_coeff = (float)a->kl;
    o->tc.kl_target = (float)a->kl_target;
    o->tc.grad_clip = (float)a->grad_clip;
    o->tc.net.fc_hidden = (int32_t)a->hidden;
    o->tc.eval_episodes = (int32_t)a->eval_episodes;
    hsdag_pacml_mask_parse(&o->tc.net.mask_mode, a->mask, NULL); /* one of the table's choices */
}

static int ct_join(char *dst, size_t cap, const char *dir, const char *name)
{
    return snprintf(dst, cap, "%s/%s", dir, name) < (int)cap ? 0 : -1;
}

static int ct_write(const char *dir, const char *name, const hsdag_buf *b, hsdag_err *e)
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

int cmd_cluster_train(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_CLUSTER_TRAIN);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    const char *dir;
    if ((rc = cli_run_dir(&a, &dir)) != CLI_OK) return rc;
    ct_opts o;
    memset(&o, 0, sizeof o);
    ct_setup(&a, &o);
    if (o.cc.horizon / o.cc.interarrival > 1e7)
        return cli_usage_error(a.name, "--horizon / --interarrival is %.3g arrivals, above 1e7",
                               o.cc.horizon / o.cc.interarrival);
    hsdag_err e = {0};
    char path[4096];
    char *ck = NULL, *curve_old = NULL;
    size_t ck_len = 0, curve_len = 0;
    hsdag_cluster *env = NULL;
    hsdag_pacml_env pe;
    hsdag_pacml_trainer *t = NULL;
    hsdag_buf curve = {0}, img = {0};
    if (ct_join(path, sizeof path, dir, "checkpoint.bin") < 0)
        return cli_usage_error(a.name, "'%s': path too long", dir);
    if (a.resume) {
        if ((rc = hsdag_read_file(path, &ck, &ck_len, (size_t)256 << 20, &e)) < 0)
            return cli_fail(a.name, rc, &e);
        size_t hl = 8 + sizeof(uint32_t) + sizeof o.cc;
        uint32_t sz = 0;
        if (ck_len < hl || memcmp(ck, CT_RUN_MAGIC, 8) || (memcpy(&sz, ck + 8, 4), sz != sizeof o.cc)) {
            hsdag_free(ck);
            hsdag_err_set(&e, HSDAG_EPARSE,
                          "%s: not a checkpoint of 'hsdag cluster train' (or of another build)", path);
            return cli_fail(a.name, HSDAG_EPARSE, &e);
        }
        memcpy(&o.cc, ck + 12, sizeof o.cc);
        if ((rc = hsdag_cluster_create(&o.cc, NULL, NULL, 0, &env, &e)) < 0) goto fail;
        hsdag_cluster_pacml_env(&pe, env);
        if ((rc = hsdag_pacml_trainer_restore(&t, &pe, ck + hl, ck_len - hl,
                                              cli_given(&a, iterations) ? o.tc.iterations : -1, &e)) < 0) {
            hsdag_err_prefix(&e, path);
            goto fail;
        }
        char cp[4096];
        if (ct_join(cp, sizeof cp, dir, "curve.csv") == 0 &&
            hsdag_read_file(cp, &curve_old, &curve_len, 0, NULL) == 0) {
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
        if ((rc = hsdag_cluster_create(&o.cc, NULL, NULL, 0, &env, &e)) < 0) goto fail;
        hsdag_cluster_pacml_env(&pe, env);
        if ((rc = hsdag_pacml_trainer_create(&t, &pe, &o.tc, &e)) < 0) goto fail;
    }
    if (!curve.len)
        hsdag_buf_printf(&curve,
                         "iteration,steps,train_blocking,train_return,eval_blocking,entropy,value_loss,"
                         "policy_loss,kl,kl_coeff,clip_frac,grad_norm,wall_s\n");
    int32_t total = hsdag_pacml_trainer_total(t);
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
        /* checkpoint = run header (cluster config) + trainer state; all writes atomic */
        hsdag_buf ckb = {0};
        uint32_t sz = (uint32_t)sizeof o.cc;
        hsdag_buf_append(&ckb, CT_RUN_MAGIC, 8);
        hsdag_buf_append(&ckb, (const char *)&sz, 4);
        hsdag_buf_append(&ckb, (const char *)&o.cc, sizeof o.cc);
        if (rc == 0) rc = hsdag_pacml_trainer_save(t, &ckb, &e);
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
