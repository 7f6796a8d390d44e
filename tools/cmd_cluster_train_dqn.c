/* cmd_cluster_train_dqn.c - 'hsdag cluster train --algo dqn': trains the PAC-ML Q-network with DQN for one
 *   beta distribution; writes DIR/curve.csv and DIR/policy.bin (the best greedy evaluation so far).
 * Not here: the Q-network, replay and trainer (src/learn/pacml_dqn.c), the features (src/cluster/pacml_env.c),
 *   PPO training (cmd_cluster_train.c). Evaluation is 'hsdag cluster run --policy learned:DIR'.
 * Entry points: cmd_cluster_train_dqn (called by cmd_cluster_train for --algo dqn, options parsed by the
 *   table, tools/opt.c).
 */
#include "cli.h"
#include "cluster_train.h"
#include "hsdag/cluster.h"
#include "hsdag/io.h"
#include "hsdag/pacml.h"
#include "opt.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* The table's values into the cluster and DQN configurations; what the table cannot check is checked here. */
static int cq_setup(const cli_args *a, hsdag_cluster_config *cc, hsdag_pacml_dqn_config *dc,
                    int32_t *iterations)
{
    *cc = hsdag_cluster_config_default();
    *dc = hsdag_pacml_dqn_config_default();
    cc->beta = a->beta[0];
    cc->time_unit_fix = a->time_unit_fix;
    cc->horizon = a->horizon;
    cc->interarrival = a->interarrival;
    dc->seed = (uint64_t)a->seed;
    *iterations = (int32_t)a->iterations;
    dc->eval_every = (int32_t)a->batch_episodes;
    dc->eval_episodes = (int32_t)a->eval_episodes;
    dc->gamma = a->gamma;
    dc->n_step = (int32_t)a->n_step;
    dc->lr = (float)a->lr;
    dc->lr_end = (float)a->lr_end;
    dc->grad_clip = (float)a->grad_clip;
    dc->batch = (int32_t)a->batch;
    dc->train_every = (int32_t)a->train_every;
    dc->replay = (int32_t)a->replay;
    dc->learning_starts = (int32_t)a->learning_starts;
    dc->target_every = (int32_t)a->target_every;
    dc->per_alpha = (float)a->per_alpha;
    dc->per_beta = (float)a->per_beta;
    dc->eps_start = (float)a->eps_start;
    dc->eps_end = (float)a->eps_end;
    dc->eps_decay = a->eps_decay;
    hsdag_pacml_mask_parse(&dc->net.mask_mode, a->mask, NULL); /* one of the table's choices */
    long h1, h2;
    char extra;
    if (sscanf(a->head, "%ld,%ld%c", &h1, &h2, &extra) != 2 || h1 < 1 || h1 > 4096 || h2 < 1 || h2 > 4096)
        return cli_usage_error(a->name, "--head '%s' is not H1,H2 (integers in [1, 4096])", a->head);
    dc->net.h1 = (int32_t)h1;
    dc->net.h2 = (int32_t)h2;
    if (cc->horizon / cc->interarrival > 1e7)
        return cli_usage_error(a->name, "--horizon / --interarrival is %.3g arrivals, above 1e7",
                               cc->horizon / cc->interarrival);
    if ((int64_t)*iterations * dc->eval_every > 100000000)
        return cli_usage_error(a->name, "--iterations x --batch-episodes is above 1e8 episodes");
    dc->episodes = *iterations * dc->eval_every;
    return CLI_OK;
}

int cmd_cluster_train_dqn(const cli_args *a)
{
    struct {
        hsdag_cluster_config cc;
        hsdag_pacml_dqn_config dc;
        int32_t iterations;
        const char *out;
    } o;
    int rc = cq_setup(a, &o.cc, &o.dc, &o.iterations);
    if (rc != CLI_OK) return rc;
    if ((rc = cli_run_dir(a, &o.out, NULL)) != CLI_OK) return rc;
    hsdag_err e = {0};
    hsdag_cluster *env = NULL;
    hsdag_pacml_dqn *t = NULL;
    hsdag_buf curve = {0}, img = {0};
    if ((rc = hsdag_cluster_create(&env, &o.cc, NULL, NULL, 0, &e)) < 0) goto fail;
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env_x(&pe, env);
    if ((rc = hsdag_pacml_dqn_create(&t, &pe, &o.dc, &e)) < 0) goto fail;
    if (mkdir(o.out, 0777) < 0 && errno != EEXIST) {
        rc = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", o.out, strerror(errno));
        goto fail;
    }
    hsdag_buf_printf(
        &curve,
        "iteration,episodes,steps,updates,train_blocking,eval_blocking,epsilon,loss,q_mean,lr,wall_s\n");
    cli_progress pg;
    cli_progress_start(&pg, "train", o.iterations, a->quiet || a->json);
    hsdag_pacml_dqn_stats s = {0};
    while (hsdag_pacml_dqn_iteration(t) < o.iterations) {
        if ((rc = hsdag_pacml_dqn_iterate(t, &s, &e)) < 0) break;
        hsdag_buf_printf(&curve, "%d,%lld,%lld,%lld,%.6f,%.6f,%.4f,%.6g,%.5g,%.4g,%.2f\n", s.iteration,
                         (long long)s.episodes, (long long)s.steps, (long long)s.updates, s.train_blocking,
                         s.eval_blocking, s.epsilon, s.loss, s.q_mean, s.lr, s.wall_s);
        img.len = 0;
        if ((rc = hsdag_pacml_dqn_save_best(t, &img, &e)) == 0) rc = ct_write(o.out, "policy.bin", &img, &e);
        if (rc == 0) rc = ct_write(o.out, "curve.csv", &curve, &e);
        if (rc < 0) break;
        char extra[96];
        snprintf(extra, sizeof extra, "train %.3f eval %.3f best %.3f", s.train_blocking, s.eval_blocking,
                 hsdag_pacml_dqn_best(t, NULL));
        cli_progress_update(&pg, hsdag_pacml_dqn_iteration(t), extra);
    }
    cli_progress_end(&pg);
    if (rc < 0) goto fail;
    {
        int32_t bi = 0;
        double best = hsdag_pacml_dqn_best(t, &bi);
        hsdag_buf b = {0};
        if (a->json) {
            hsdag_pacml_dqn_run_write_json(&b, t, &o.dc, o.cc.beta, &s, o.out);
        } else {
            hsdag_buf_printf(
                &b,
                "trained %d iterations (%lld episodes, %lld decisions, %.1f s); best greedy eval "
                "blocking %.4f at iteration %d\npolicy: %s/policy.bin  curve: %s/curve.csv\n",
                hsdag_pacml_dqn_iteration(t), (long long)s.episodes, (long long)s.steps, s.wall_s, best, bi,
                o.out, o.out);
        }
        rc = cli_write_out(a->name, "-", &b);
        hsdag_buf_free(&b);
    }
    goto done;
fail:
    rc = cli_fail(a->name, rc, &e);
done:
    hsdag_pacml_dqn_free(t);
    hsdag_cluster_free(env);
    hsdag_buf_free(&curve);
    hsdag_buf_free(&img);
    return rc;
}
