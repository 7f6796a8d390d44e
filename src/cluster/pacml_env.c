/* pacml_env.c - the RAMP environment as the PAC-ML learner sees it: the hsdag_pacml_env callbacks over an
 *   hsdag_cluster, masked observations, and episodes of a learned policy (a loaded net or a policy file).
 * Not here: the network, PPO and policy files (src/learn/pacml_*.c, which never include cluster.h); the
 *   env's own rules (env.c, ramp.c).
 * Entry points: hsdag_cluster_pacml_env, hsdag_cluster_pacml_observe, hsdag_cluster_run_net, cl_pacml_run.
 */
#include "cluster_internal.h"

#include "hsdag/io.h"

#include <string.h>
#include <sys/stat.h>

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

/* ---- the extended observation (DQN) ---- */
#define PX_FUT 6
#define PX_NSTATE_FIXED (2 + PX_FUT)
#define PX_NACTION 16
static const double px_fut[PX_FUT] = {1, 2, 4, 8, 16, 32};
static const int px_blocks[5] = {2, 4, 6, 8, 16};

static int px_block_free(const hsdag_cluster_config *c, const uint8_t *busy, int k)
{
    int32_t out[HSDAG_CLUSTER_MAX_DEGREE];
    return hsdag_ramp_find_block(out, c->n_cgs, c->n_racks, c->n_servers, busy, k) == 1;
}

static void pe_observe_x(void *ctx, hsdag_pacml_mask_mode mode, hsdag_pacml_xobs *x)
{
    const hsdag_cluster *env = ctx;
    const hsdag_cluster_config *c = hsdag_cluster_config_get(env);
    const hsdag_cluster_obs *o = hsdag_cluster_observe(env);
    hsdag_cluster_pacml_observe(&x->o, env, mode);
    int32_t W = c->n_cgs * c->n_racks * c->n_servers;
    double until[HSDAG_CLUSTER_MAX_SERVERS], S = 0, now = o->now, H = c->horizon, T = c->interarrival;
    for (int32_t i = 0; i < hsdag_cluster_n_models(env); i++)
        if (hsdag_cluster_model_get(env, i)->jct_seq > S) S = hsdag_cluster_model_get(env, i)->jct_seq;
    if (!(S > 0)) S = 1;
    hsdag_cluster_server_until(env, until);
    float *f = x->state;
    *f++ = H > 0 ? (float)((H - now) / H) : 0.f;
    *f++ = (float)o->free_workers / (float)W;
    for (int q = 0; q < PX_FUT; q++) {
        int32_t nf = 0;
        for (int32_t s = 0; s < W; s++) nf += until[s] <= now + px_fut[q] * T;
        *f++ = (float)nf / (float)W;
    }
    for (int32_t s = 0; s < W; s++) {
        double r = (until[s] - now) / S;
        *f++ = (float)(r < 0 ? 0 : r > 1 ? 1 : r);
    }
    for (int a = 0; a < HSDAG_PACML_N_ACTIONS; a++) {
        float *p = x->action[a];
        if (!x->o.mask[a]) {
            memset(p, 0, PX_NACTION * sizeof(float));
            continue;
        }
        uint8_t used[HSDAG_CLUSTER_MAX_SERVERS], busy[HSDAG_CLUSTER_MAX_SERVERS];
        int32_t ns = 0;
        if (a > 0) ns = hsdag_cluster_try_place_servers(env, a, used);
        if (a == 0 || ns < 0) { /* place nothing (or a spec-mask action the placer cannot place) */
            memset(used, 0, (size_t)W);
            ns = 0;
        }
        double jct = a > 0 && ns > 0 ? o->m->jct[a] : 0.0;
        int32_t nf = 0;
        for (int32_t s = 0; s < W; s++) {
            busy[s] = until[s] > now || used[s];
            nf += !busy[s];
        }
        *p++ = (float)(jct / S);
        *p++ = (float)ns / (float)W;
        *p++ = (float)(ns * jct / (W * S));
        *p++ = ns > 0 && now + jct > H;
        *p++ = (float)nf / (float)W;
        for (int q = 0; q < 5; q++) *p++ = (float)px_block_free(c, busy, px_blocks[q]);
        static const double later[3] = {2, 8, 32}, later16[3] = {2, 4, 8};
        for (int q = 0; q < 3; q++) {
            double t = now + later[q] * T;
            int32_t n2 = 0;
            for (int32_t s = 0; s < W; s++) n2 += !(until[s] > t || (used[s] && now + jct > t));
            *p++ = (float)n2 / (float)W;
        }
        for (int q = 0; q < 3; q++) {
            double t = now + later16[q] * T;
            for (int32_t s = 0; s < W; s++) busy[s] = until[s] > t || (used[s] && now + jct > t);
            *p++ = (float)px_block_free(c, busy, HSDAG_CLUSTER_MAX_DEGREE);
        }
    }
}

static int pe_step_x(void *ctx, int action, double *reward)
{
    hsdag_cluster *env = ctx;
    const hsdag_cluster_obs *o = hsdag_cluster_observe(env);
    double end = o && action > 0 && action < HSDAG_CLUSTER_N_ACTIONS ? o->now + o->m->jct[action] : 0.0;
    int rc = hsdag_cluster_step(env, action, reward);
    if (rc == 0 && reward && *reward > 0 && end > hsdag_cluster_config_get(env)->horizon) *reward = -1.0;
    return rc;
}

void hsdag_cluster_pacml_env_x(hsdag_pacml_env *out, hsdag_cluster *env)
{
    hsdag_cluster_pacml_env(out, env);
    const hsdag_cluster_config *c = hsdag_cluster_config_get(env);
    int32_t W = c->n_cgs * c->n_racks * c->n_servers;
    out->n_xstate = PX_NSTATE_FIXED + W;
    out->n_xaction = PX_NACTION;
    out->possible[0] = 1;
    for (int a = 1; a < HSDAG_PACML_N_ACTIONS; a++)
        out->possible[a] =
            a <= W && (a == 1 || a % 2 == 0) && cl_degree_has_shape(c->n_cgs, c->n_racks, c->n_servers, a);
    out->observe_x = pe_observe_x;
    out->step = pe_step_x;
}

_Static_assert(PX_NSTATE_FIXED + HSDAG_CLUSTER_MAX_SERVERS <= HSDAG_PACML_XSTATE_MAX, "extended state size");
_Static_assert(PX_NACTION <= HSDAG_PACML_XACTION_MAX, "extended action size");

int hsdag_cluster_run_qnet(hsdag_cluster *env, hsdag_pacml_qnet *n, uint64_t seed, hsdag_cluster_metrics *m,
                           hsdag_err *e)
{
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env_x(&pe, env);
    int rc = hsdag_pacml_qnet_episode(&pe, n, seed, e);
    if (rc < 0) return rc;
    hsdag_cluster_metrics_get(env, m);
    return 0;
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
    char found[4096], file[4200];
    int rc;
    if (!path || !*path) {
        if ((rc = hsdag_pacml_policy_find(found, sizeof found, cc->beta, cc->time_unit_fix, e)) < 0)
            return rc;
        path = found;
    }
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) { /* DIR/policy.bin, else DIR/beta_X[_tuf].bin */
        snprintf(file, sizeof file, "%s/policy.bin", path);
        if (stat(file, &sb) != 0)
            snprintf(file, sizeof file, "%s/beta_%c%s.bin", path, cc->beta, cc->time_unit_fix ? "_tuf" : "");
    } else {
        snprintf(file, sizeof file, "%s", path);
    }
    char *data = NULL;
    size_t len = 0;
    if ((rc = hsdag_read_file(&data, &len, file, (size_t)64 << 20, e)) < 0) return rc;
    hsdag_nn_set_threads(1);
    hsdag_pacml_net *n = NULL;
    hsdag_pacml_qnet *q = NULL;
    char pb = 0;
    int ptuf = 0;
    if (hsdag_pacml_qpolicy_is(data, len))
        rc = hsdag_pacml_qpolicy_parse(&q, cl_env_jobs(env), hsdag_cluster_n_models(env), data, len, file,
                                       &pb, &ptuf, e);
    else
        rc = hsdag_pacml_policy_parse(&n, cl_env_jobs(env), hsdag_cluster_n_models(env), data, len, file, &pb,
                                      &ptuf, e);
    hsdag_free(data);
    if (rc < 0) return rc;
    if (pb != cc->beta || ptuf != (cc->time_unit_fix != 0)) {
        hsdag_pacml_net_free(n);
        hsdag_pacml_qnet_free(q);
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "%s: policy trained for beta %c%s, but this run is beta %c%s: give the matching "
                             "--beta / --time-unit-fix or train a policy for this setting",
                             file, pb, ptuf ? " with --time-unit-fix" : " in reference units", cc->beta,
                             cc->time_unit_fix ? " with --time-unit-fix" : " in reference units");
    }
    rc = q ? hsdag_cluster_run_qnet(env, q, seed, m, e) : hsdag_cluster_run_net(env, n, 1, seed, m, e);
    hsdag_pacml_net_free(n);
    hsdag_pacml_qnet_free(q);
    return rc;
}
