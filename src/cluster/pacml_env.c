/* pacml_env.c - the RAMP environment as the PAC-ML learner sees it: the hsdag_pacml_env callbacks over an
 *   hsdag_cluster, masked observations, and episodes of a learned policy (a loaded net or a policy file).
 * Not here: the network, PPO and policy files (src/learn/pacml_*.c, which never include cluster.h); the
 *   env's own rules (env.c, ramp.c).
 * Entry points: hsdag_cluster_pacml_env, hsdag_cluster_pacml_observe, hsdag_cluster_run_net, cl_pacml_run.
 */
#include "cluster_internal.h"

#include <string.h>

/* the learner's plain-data interface is sized for this environment */
_Static_assert(HSDAG_CLUSTER_N_ACTIONS == HSDAG_PACML_N_ACTIONS, "action count");
_Static_assert(HSDAG_CLUSTER_MAX_DEGREE == HSDAG_PACML_MAX_DEGREE, "max degree");
_Static_assert(HSDAG_CLUSTER_NODE_FEATS == HSDAG_PACML_NODE_FEATS, "node features");
_Static_assert(HSDAG_CLUSTER_EDGE_FEATS == HSDAG_PACML_EDGE_FEATS, "edge features");
_Static_assert(HSDAG_CLUSTER_GRAPH_FEATS == HSDAG_PACML_GRAPH_FEATS, "graph features");

void hsdag_cluster_pacml_observe(hsdag_pacml_obs *out, const hsdag_cluster *env, hsdag_pacml_mask_mode mode)
{
    const hsdag_cluster_obs *o = hsdag_cluster_observe(env);
    out->model = o->model;
    memcpy(out->mask, o->mask, sizeof out->mask);
    memcpy(out->graph_feat, o->graph_feat, sizeof out->graph_feat);
    if (mode == HSDAG_PACML_MASK_SPEC) return;
    for (int a = 1; a < HSDAG_PACML_N_ACTIONS; a++) {
        if (!out->mask[a]) continue;
        if (mode == HSDAG_PACML_MASK_PLACE_JCT && !(o->m->jct[a] <= o->max_jct))
            out->mask[a] = 0;
        else if (hsdag_cluster_try_place(env, a) < 0)
            out->mask[a] = 0;
    }
    for (int a = 0; a < HSDAG_PACML_N_ACTIONS; a++)
        out->graph_feat[HSDAG_PACML_GRAPH_FEATS + a] = out->mask[a];
}

/* ---- the callbacks ---- */
static void pe_reset(void *ctx, uint64_t seed)
{
    hsdag_cluster_reset(ctx, seed);
}
static int pe_done(void *ctx)
{
    return hsdag_cluster_done(ctx);
}
static void pe_observe(void *ctx, hsdag_pacml_mask_mode mode, hsdag_pacml_obs *o)
{
    hsdag_cluster_pacml_observe(o, ctx, mode);
}
static int pe_step(void *ctx, int action, double *reward)
{
    return hsdag_cluster_step(ctx, action, reward);
}
static void pe_episode_end(void *ctx, double *blocking_rate, double *ret)
{
    hsdag_cluster_metrics m;
    hsdag_cluster_metrics_get(ctx, &m);
    *blocking_rate = m.blocking_rate;
    *ret = m.return_;
}

void hsdag_cluster_pacml_env(hsdag_pacml_env *out, hsdag_cluster *env)
{
    const hsdag_cluster_config *c = hsdag_cluster_config_get(env);
    memset(out, 0, sizeof *out);
    out->ctx = env;
    out->n_jobs = hsdag_cluster_n_models(env);
    out->jobs = cl_env_jobs(env);
    out->beta = c->beta;
    out->time_unit_fix = c->time_unit_fix;
    out->reset = pe_reset;
    out->done = pe_done;
    out->observe = pe_observe;
    out->step = pe_step;
    out->episode_end = pe_episode_end;
}

/* ---- learned episodes ---- */
int hsdag_cluster_run_net(hsdag_cluster *env, hsdag_pacml_net *n, int greedy, uint64_t seed,
                          hsdag_cluster_metrics *m, hsdag_err *e)
{
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, env);
    int rc = hsdag_pacml_episode(&pe, n, greedy, seed, e);
    if (rc < 0) return rc;
    hsdag_cluster_metrics_get(env, m);
    return 0;
}

int cl_pacml_run(hsdag_cluster *env, const char *path, uint64_t seed, hsdag_cluster_metrics *m, hsdag_err *e)
{
    const hsdag_cluster_config *cc = hsdag_cluster_config_get(env);
    char found[4096];
    int rc;
    if (!path || !*path) {
        if ((rc = hsdag_pacml_policy_find(cc->beta, cc->time_unit_fix, found, sizeof found, e)) < 0)
            return rc;
        path = found;
    }
    hsdag_nn_set_threads(1);
    hsdag_pacml_net *n = NULL;
    char pb = 0;
    int ptuf = 0;
    if ((rc = hsdag_pacml_policy_load(&n, cl_env_jobs(env), hsdag_cluster_n_models(env), path, &pb, &ptuf,
                                      e)) < 0)
        return rc;
    if (pb != cc->beta || ptuf != (cc->time_unit_fix != 0)) {
        hsdag_pacml_net_free(n);
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "%s: policy trained for beta %c%s, but this run is beta %c%s: give the matching "
                             "--beta / --time-unit-fix or train a policy for this setting",
                             path, pb, ptuf ? " with --time-unit-fix" : " in reference units", cc->beta,
                             cc->time_unit_fix ? " with --time-unit-fix" : " in reference units");
    }
    rc = hsdag_cluster_run_net(env, n, 1, seed, m, e);
    hsdag_pacml_net_free(n);
    return rc;
}
