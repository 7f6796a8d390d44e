/* pacml_dqn.c - DQN for the PAC-ML partitioning policy: a Q-network on the spec's GNN with the environment's
 *   extended per-decision and per-action features, its TD loss with the full backward pass, a replay buffer
 *   (uniform or proportional prioritised, Ape-X style), n-step double-Q targets from a target network, the
 *   epsilon-greedy trainer with greedy evaluation, and DQN policy files.
 * Not here: the GNN itself (pacml_gnn.c, shared through pacml_internal.h); the environment and its features
 *   (src/cluster/pacml_env.c); PPO (pacml_ppo.c); CLI printing.
 * Entry points: hsdag_pacml_qnet_*, hsdag_pacml_dqn_*, hsdag_pacml_qpolicy_*.
 */
#include "pacml_internal.h"

#include <math.h>
#include <string.h>

/* ======================= the Q-network ======================= */

struct hsdag_pacml_qnet {
    hsdag_pacml_qnet_config c;
    hsdag_nn_params *p;
    pm_gnn gnn;
    pm_mod graph, q1; /* graph module (34 -> graph_out); head input LN -> Linear(d -> h1) */
    hsdag_nn_linear q2, q3;
    int32_t d; /* head input width */
    /* scratch, grown on demand: slices of the per-sample block bs and the per-row block br (pm_carve) */
    float *bs, *br;
    int32_t cap_s, cap_r;
    size_t cap_m;                             /* rmodel's */
    float *g, *gn, *gmean, *grstd, *dg, *dgn; /* per sample */
    float *x, *xn, *xmean, *xrstd, *a1, *a2, *q, *dq, *da2, *da2p, *da1, *da1p, *dxn, *dx,
        *dpool; /* per row */
    int32_t *rmodel;
};

hsdag_pacml_qnet_config hsdag_pacml_qnet_config_default(void)
{
    hsdag_pacml_qnet_config c = {
        PM_MSG_HALF, PM_HIDDEN1, PM_NODE_OUT, PM_GRAPH_OUT, 0, 0, 128, 64, HSDAG_PACML_MASK_PLACE_JCT};
    return c;
}

#define QV(n, id) hsdag_nn_params_value((n)->p, (id))
#define QG(n, id) hsdag_nn_params_grad((n)->p, (id))

int hsdag_pacml_qnet_create(hsdag_pacml_qnet **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                            const hsdag_pacml_qnet_config *cfg, uint64_t seed, hsdag_err *e)
{
    *out = NULL;
    hsdag_pacml_qnet_config c = cfg ? *cfg : hsdag_pacml_qnet_config_default();
    if (c.msg_half < 1 || c.msg_half > 256 || c.hidden1 < 1 || c.hidden1 > 1024 || c.node_out < 1 ||
        c.node_out > 64 || c.graph_out < 1 || c.graph_out > 256 || c.n_xstate < 0 ||
        c.n_xstate > HSDAG_PACML_XSTATE_MAX || c.n_xaction < 0 || c.n_xaction > HSDAG_PACML_XACTION_MAX ||
        c.h1 < 1 || c.h1 > 4096 || c.h2 < 1 || c.h2 > 4096 || (int)c.mask_mode < 0 ||
        c.mask_mode > HSDAG_PACML_MASK_PLACE_JCT || n_jobs < 0 || (n_jobs && !jobs))
        return hsdag_err_set(e, HSDAG_EINVAL, "pacml dqn: network config out of range");
    hsdag_pacml_qnet *n = hsdag_calloc(1, sizeof *n);
    if (!n) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory");
    n->c = c;
    n->d = c.node_out + c.graph_out + c.n_xstate + PM_NA + c.n_xaction;
    int rc = hsdag_nn_params_create(&n->p, e);
    if (rc < 0) {
        hsdag_free(n);
        return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory");
    }
    if ((rc = pm_gnn_add(&n->gnn, n->p, c.msg_half, c.hidden1, c.node_out, jobs, n_jobs, e)) < 0 ||
        (rc = pm_mod_add(n->p, &n->graph, "graph", PM_GF, c.graph_out, e)) < 0 ||
        (rc = pm_mod_add(n->p, &n->q1, "q1", n->d, c.h1, e)) < 0 ||
        (rc = hsdag_nn_linear_add(n->p, &n->q2, "q2", c.h1, c.h2, 1, e)) < 0 ||
        (rc = hsdag_nn_linear_add(n->p, &n->q3, "q3", c.h2, 1, 1, e)) < 0)
        goto fail;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed);
    if ((rc = hsdag_nn_params_alloc(n->p, &rng, e)) < 0) goto fail;
    {
        float *w = QV(n, n->q3.w); /* Q starts near 0 */
        for (int32_t i = 0; i < c.h2; i++) w[i] *= 0.1f;
    }
    *out = n;
    return 0;
fail:
    hsdag_pacml_qnet_free(n);
    return rc;
}

static void dq_scratch_free(hsdag_pacml_qnet *n)
{
    hsdag_free(n->bs);
    hsdag_free(n->br);
    hsdag_free(n->rmodel);
    n->bs = n->br = NULL;
    n->rmodel = NULL;
    n->cap_s = n->cap_r = n->cap_m = 0;
}

void hsdag_pacml_qnet_free(hsdag_pacml_qnet *n)
{
    if (!n) return;
    pm_gnn_free(&n->gnn);
    dq_scratch_free(n);
    hsdag_nn_params_free(n->p);
    hsdag_free(n);
}

hsdag_nn_params *hsdag_pacml_qnet_params(hsdag_pacml_qnet *n)
{
    return n->p;
}
const hsdag_pacml_qnet_config *hsdag_pacml_qnet_config_get(const hsdag_pacml_qnet *n)
{
    return &n->c;
}
void hsdag_pacml_qnet_touch(hsdag_pacml_qnet *n)
{
    pm_gnn_touch(&n->gnn);
}

/* Points the scratch tensors at S sample rows and R action rows (grown if short). */
static int dq_reserve(hsdag_pacml_qnet *n, int32_t S, int32_t R, hsdag_err *e)
{
    const hsdag_pacml_qnet_config *c = &n->c;
    size_t go = (size_t)c->graph_out, d = (size_t)n->d, h1 = (size_t)c->h1, h2 = (size_t)c->h2;
    const pm_slice ss[] = {{&n->g, go},    {&n->gn, PM_GF}, {&n->gmean, 1},
                           {&n->grstd, 1}, {&n->dg, go},    {&n->dgn, PM_GF}};
    const pm_slice sr[] = {
        {&n->x, d},    {&n->xn, d},    {&n->xmean, 1}, {&n->xrstd, 1}, {&n->a1, h1},
        {&n->a2, h2},  {&n->q, 1},     {&n->dq, 1},    {&n->da2, h2},  {&n->da2p, h2},
        {&n->da1, h1}, {&n->da1p, h1}, {&n->dxn, d},   {&n->dx, d},    {&n->dpool, (size_t)c->node_out}};
    if (pm_carve(&n->bs, &n->cap_s, S, 64, ss, (int32_t)(sizeof ss / sizeof ss[0])) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: batch of %d: out of memory", S);
    if (hsdag_grow((void **)&n->rmodel, &n->cap_m, (size_t)R, sizeof(int32_t)) < 0 ||
        pm_carve(&n->br, &n->cap_r, R, 256, sr, (int32_t)(sizeof sr / sizeof sr[0])) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: %d rows: out of memory", R);
    return 0;
}

/* Forward of the batch into the scratch (q in n->q). */
static int dq_forward(hsdag_pacml_qnet *n, const hsdag_pacml_qbatch *b, hsdag_err *e)
{
    const hsdag_pacml_qnet_config *c = &n->c;
    int32_t S = b->n_samples, R = b->n_rows, no = c->node_out, go = c->graph_out, ns = c->n_xstate,
            na = c->n_xaction, D = n->d;
    int rc = dq_reserve(n, S, R, e);
    if (rc < 0) return rc;
    if (S > 0) pm_mod_forward(n->p, &n->graph, n->g, n->gn, n->gmean, n->grstd, b->gfeat, S, 0);
    for (int32_t r = 0; r < R; r++) {
        int32_t s = b->row_sample[r], a = b->row_action[r];
        float *x = n->x + (size_t)r * D;
        n->rmodel[r] = b->model[s];
        memcpy(x, pm_gnn_pool(&n->gnn, b->model[s]), (size_t)no * sizeof(float));
        memcpy(x + no, n->g + (size_t)s * go, (size_t)go * sizeof(float));
        if (ns) memcpy(x + no + go, b->xstate + (size_t)s * ns, (size_t)ns * sizeof(float));
        float *oh = x + no + go + ns;
        memset(oh, 0, PM_NA * sizeof(float));
        oh[a] = 1.f;
        if (na) memcpy(oh + PM_NA, b->xaction + (size_t)r * na, (size_t)na * sizeof(float));
    }
    if (R == 0) return 0;
    pm_mod_forward(n->p, &n->q1, n->a1, n->xn, n->xmean, n->xrstd, n->x, R, 1);
    hsdag_nn_linear_forward(n->a2, n->a1, QV(n, n->q2.w), QV(n, n->q2.b), R, c->h1, c->h2);
    hsdag_nn_relu_forward(n->a2, n->a2, (size_t)R * c->h2);
    hsdag_nn_linear_forward(n->q, n->a2, QV(n, n->q3.w), QV(n, n->q3.b), R, c->h2, 1);
    return 0;
}

int hsdag_pacml_qnet_forward(hsdag_pacml_qnet *n, const hsdag_pacml_qbatch *b, float *q, hsdag_err *e)
{
    int rc = dq_forward(n, b, e);
    if (rc < 0) return rc;
    memcpy(q, n->q, (size_t)b->n_rows * sizeof(float));
    return 0;
}

int hsdag_pacml_qnet_loss(hsdag_pacml_qnet *n, const hsdag_pacml_qbatch *b, const float *target,
                          const float *weight, int grad, double *loss, float *td, hsdag_err *e)
{
    int rc = dq_forward(n, b, e);
    if (rc < 0) return rc;
    const hsdag_pacml_qnet_config *c = &n->c;
    int32_t S = b->n_samples, R = b->n_rows, no = c->node_out, go = c->graph_out, D = n->d;
    double L = 0, inv = R > 0 ? 1.0 / R : 0.0;
    for (int32_t r = 0; r < R; r++) {
        double w = weight ? weight[r] : 1.0, d = (double)n->q[r] - (double)target[r];
        L += w * 0.5 * d * d * inv;
        n->dq[r] = (float)(w * d * inv);
        if (td) td[r] = (float)d;
    }
    if (loss) *loss = L;
    if (!grad) return 0;
    hsdag_nn_params_zero_grad(n->p);
    if (R == 0) return 0;
    memset(n->da2, 0, (size_t)R * c->h2 * sizeof(float));
    hsdag_nn_linear_backward(n->da2, QG(n, n->q3.w), QG(n, n->q3.b), n->dq, n->a2, QV(n, n->q3.w), R, c->h2,
                             1);
    memset(n->da2p, 0, (size_t)R * c->h2 * sizeof(float));
    hsdag_nn_relu_backward(n->da2p, n->da2, n->a2, (size_t)R * c->h2);
    memset(n->da1, 0, (size_t)R * c->h1 * sizeof(float));
    hsdag_nn_linear_backward(n->da1, QG(n, n->q2.w), QG(n, n->q2.b), n->da2p, n->a1, QV(n, n->q2.w), R, c->h1,
                             c->h2);
    memset(n->dx, 0, (size_t)R * D * sizeof(float));
    pm_mod_backward(n->p, &n->q1, n->dx, n->da1, n->da1p, n->dxn, n->a1, n->xn, n->xmean, n->xrstd, n->x, R,
                    1);
    /* the input's pooled-embedding and graph-module parts flow back; the features are data */
    memset(n->dg, 0, (size_t)S * go * sizeof(float));
    for (int32_t r = 0; r < R; r++) {
        const float *dx = n->dx + (size_t)r * D;
        memcpy(n->dpool + (size_t)r * no, dx, (size_t)no * sizeof(float));
        float *dg = n->dg + (size_t)b->row_sample[r] * go;
        for (int32_t j = 0; j < go; j++) dg[j] += dx[no + j];
    }
    if (S > 0)
        pm_mod_backward(n->p, &n->graph, NULL, n->dg, NULL, n->dgn, n->g, n->gn, n->gmean, n->grstd, b->gfeat,
                        S, 0);
    pm_gnn_backward(&n->gnn, n->rmodel, n->dpool, R);
    return 0;
}

/* Rows of the valid actions of one decision: fills a 1-sample batch. */
static int32_t dq_rows_of(const hsdag_pacml_xobs *x, int32_t na, int32_t *row_action, float *xaction)
{
    int32_t R = 0;
    for (int a = 0; a < PM_NA; a++)
        if (x->o.mask[a]) {
            row_action[R] = a;
            if (na) memcpy(xaction + (size_t)R * na, x->action[a], (size_t)na * sizeof(float));
            R++;
        }
    return R;
}

int hsdag_pacml_qnet_act(hsdag_pacml_qnet *n, const hsdag_pacml_xobs *x, float *q)
{
    int32_t na = n->c.n_xaction, ra[PM_NA];
    float xa[PM_NA * HSDAG_PACML_XACTION_MAX];
    int32_t R = dq_rows_of(x, na, ra, xa);
    int32_t rs[PM_NA] = {0};
    hsdag_pacml_qbatch b = {1, &x->o.model, x->o.graph_feat, x->state, R, rs, ra, xa};
    if (q)
        for (int a = 0; a < PM_NA; a++) q[a] = -INFINITY;
    if (R == 0 || dq_forward(n, &b, NULL) < 0) return 0;
    int32_t best = 0;
    for (int32_t r = 1; r < R; r++)
        if (n->q[r] > n->q[best]) best = r;
    if (q)
        for (int32_t r = 0; r < R; r++) q[ra[r]] = n->q[r];
    return ra[best];
}

int hsdag_pacml_qnet_episode(const hsdag_pacml_env *env, hsdag_pacml_qnet *n, uint64_t seed, hsdag_err *e)
{
    if (!env->observe_x || env->n_xstate != n->c.n_xstate || env->n_xaction != n->c.n_xaction)
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "pacml dqn: the environment's features (%d state, %d per action) do not fit the "
                             "network (%d, %d)",
                             env->observe_x ? env->n_xstate : -1, env->observe_x ? env->n_xaction : -1,
                             n->c.n_xstate, n->c.n_xaction);
    hsdag_pacml_xobs *x = hsdag_malloc(sizeof *x);
    if (!x) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory");
    env->reset(env->ctx, seed);
    int rc = 0;
    while (!env->done(env->ctx)) {
        env->observe_x(env->ctx, n->c.mask_mode, x);
        double r;
        if ((rc = env->step(env->ctx, hsdag_pacml_qnet_act(n, x, NULL), &r)) < 0) {
            rc = hsdag_err_set(e, rc, "pacml dqn: episode step failed");
            break;
        }
    }
    hsdag_free(x);
    return rc;
}

/* ======================= replay buffer ======================= */

typedef struct dq_replay {
    int32_t cap, head, count;
    int32_t K;           /* actions kept per decision (the env's possible ones) */
    int32_t poss[PM_NA]; /* their action ids */
    int32_t ns, na;      /* feature sizes */
    int32_t *model;      /* [cap] */
    float *gfeat;        /* [cap * 34] */
    float *xstate;       /* [cap * ns] */
    uint8_t *valid;      /* [cap * K] */
    float *xact;         /* [cap * K * na] */
    int8_t *act;         /* [cap] index into poss */
    float *rew;          /* [cap] scaled reward */
    uint8_t *done;       /* [cap] last decision of its episode */
    double *tree;        /* [2 * tcap] sum tree of priorities (leaves tcap..) */
    int32_t tcap;
    double maxp;
} dq_replay;

static void dq_replay_free(dq_replay *r)
{
    hsdag_free(r->model);
    hsdag_free(r->gfeat);
    hsdag_free(r->xstate);
    hsdag_free(r->valid);
    hsdag_free(r->xact);
    hsdag_free(r->act);
    hsdag_free(r->rew);
    hsdag_free(r->done);
    hsdag_free(r->tree);
    memset(r, 0, sizeof *r);
}

static int dq_replay_init(dq_replay *r, int32_t cap, const hsdag_pacml_env *env, int prio, hsdag_err *e)
{
    memset(r, 0, sizeof *r);
    r->cap = cap;
    int any = 0;
    for (int a = 0; a < PM_NA; a++) any |= env->possible[a];
    for (int a = 0; a < PM_NA; a++)
        if (!any || env->possible[a] || a == 0) r->poss[r->K++] = a;
    r->ns = env->n_xstate;
    r->na = env->n_xaction;
    size_t C = (size_t)cap;
    r->model = hsdag_malloc(C * sizeof(int32_t));
    r->gfeat = hsdag_malloc(C * PM_GF * sizeof(float));
    r->xstate = hsdag_malloc((C * r->ns + 1) * sizeof(float));
    r->valid = hsdag_malloc(C * r->K);
    r->xact = hsdag_malloc((C * r->K * r->na + 1) * sizeof(float));
    r->act = hsdag_malloc(C);
    r->rew = hsdag_malloc(C * sizeof(float));
    r->done = hsdag_malloc(C);
    if (prio) {
        r->tcap = 1;
        while (r->tcap < cap) r->tcap *= 2;
        r->tree = hsdag_calloc(2 * (size_t)r->tcap, sizeof(double));
        r->maxp = 1.0;
    }
    if (!r->model || !r->gfeat || !r->xstate || !r->valid || !r->xact || !r->act || !r->rew || !r->done ||
        (prio && !r->tree)) {
        dq_replay_free(r);
        return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: replay of %d decisions: out of memory", cap);
    }
    return 0;
}

static void dq_tree_set(dq_replay *r, int32_t i, double p)
{
    int64_t x = (int64_t)r->tcap + i;
    double d = p - r->tree[x];
    for (; x >= 1; x /= 2) r->tree[x] += d;
}

/* Appends a decision; its action and reward are filled by dq_replay_finish. */
static int32_t dq_replay_push(dq_replay *r, const hsdag_pacml_xobs *x)
{
    int32_t i = r->head;
    r->model[i] = x->o.model;
    memcpy(r->gfeat + (size_t)i * PM_GF, x->o.graph_feat, PM_GF * sizeof(float));
    if (r->ns) memcpy(r->xstate + (size_t)i * r->ns, x->state, (size_t)r->ns * sizeof(float));
    for (int32_t k = 0; k < r->K; k++) {
        int a = r->poss[k];
        r->valid[(size_t)i * r->K + k] = x->o.mask[a];
        if (r->na)
            memcpy(r->xact + ((size_t)i * r->K + k) * r->na, x->action[a], (size_t)r->na * sizeof(float));
    }
    r->head = (r->head + 1) % r->cap;
    if (r->count < r->cap) r->count++;
    if (r->tree) dq_tree_set(r, i, r->maxp);
    return i;
}

/* ======================= trainer ======================= */

hsdag_pacml_dqn_config hsdag_pacml_dqn_config_default(void)
{
    hsdag_pacml_dqn_config c;
    memset(&c, 0, sizeof c);
    c.seed = 0;
    c.episodes = 2000;
    c.eval_every = 20;
    c.eval_episodes = 5;
    c.gamma = 0.99;
    c.n_step = 3;
    c.lr = 5e-4f;
    c.lr_end = 0.1f;
    c.grad_clip = 10.f;
    c.batch = 64;
    c.train_every = 2;
    c.replay = 100000;
    c.learning_starts = 5000;
    c.target_every = 2000;
    c.per_alpha = 0.6f;
    c.per_beta = 0.4f;
    c.eps_start = 1.0f;
    c.eps_end = 0.02f;
    c.eps_decay = 200000;
    c.net = hsdag_pacml_qnet_config_default();
    return c;
}

struct hsdag_pacml_dqn {
    hsdag_pacml_env env;
    hsdag_pacml_dqn_config c;
    hsdag_pacml_qnet *net, *tgt;
    dq_replay rb;
    hsdag_rng rng;
    int32_t iter;
    int64_t steps, episodes, updates;
    double best_eval;
    int32_t best_iter;
    hsdag_buf best_img;
    double t0;
    hsdag_pacml_xobs *x;
    /* update scratch, in the arena */
    hsdag_arena *scratch;
    int32_t *idx, *s_model, *n_model, *row_s, *row_a, *nrow_s, *nrow_a, *nstart, *ncount;
    float *s_gf, *s_xs, *row_xa, *n_gf, *n_xs, *nrow_xa, *qon, *qtg, *target, *weight, *td, *disc;
    uint8_t *boot;
    double *isw;
};

void hsdag_pacml_dqn_free(hsdag_pacml_dqn *t)
{
    if (!t) return;
    hsdag_pacml_qnet_free(t->net);
    hsdag_pacml_qnet_free(t->tgt);
    dq_replay_free(&t->rb);
    hsdag_buf_free(&t->best_img);
    hsdag_arena_free(t->scratch);
    hsdag_free(t);
}

/* The update's scratch (batch-sized, fixed for the run) and the decision buffer, all in one arena. */
static int dq_scratch_init(hsdag_pacml_dqn *t, hsdag_err *e)
{
    size_t B = (size_t)t->c.batch, K = (size_t)t->rb.K, ns = (size_t)t->env.n_xstate,
           na = (size_t)t->env.n_xaction, i4 = sizeof(int32_t), f4 = sizeof(float);
    hsdag_arena *a = t->scratch = hsdag_arena_create(0);
    if (!a) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory");
#define DQ_A(field, n)        \
    {                         \
        (void **)&t->field, n \
    }
    const struct {
        void **p;
        size_t bytes;
    } arr[] = {DQ_A(x, sizeof *t->x),
               DQ_A(idx, B * i4),
               DQ_A(s_model, B * i4),
               DQ_A(n_model, B * i4),
               DQ_A(row_s, B * i4),
               DQ_A(row_a, B * i4),
               DQ_A(nrow_s, B * K * i4),
               DQ_A(nrow_a, B * K * i4),
               DQ_A(nstart, B * i4),
               DQ_A(ncount, B * i4),
               DQ_A(s_gf, B * PM_GF * f4),
               DQ_A(n_gf, B * PM_GF * f4),
               DQ_A(s_xs, B * ns * f4),
               DQ_A(n_xs, B * ns * f4),
               DQ_A(row_xa, B * na * f4),
               DQ_A(nrow_xa, B * K * na * f4),
               DQ_A(qon, B * K * f4),
               DQ_A(qtg, B * K * f4),
               DQ_A(target, B * f4),
               DQ_A(weight, B * f4),
               DQ_A(td, B * f4),
               DQ_A(disc, B * f4),
               DQ_A(boot, B),
               DQ_A(isw, B * sizeof(double))};
#undef DQ_A
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++)
        if (!(*arr[k].p = hsdag_arena_alloc(a, arr[k].bytes)))
            return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory");
    return 0;
}

int hsdag_pacml_dqn_create(hsdag_pacml_dqn **out, const hsdag_pacml_env *env,
                           const hsdag_pacml_dqn_config *cfg, hsdag_err *e)
{
    *out = NULL;
    hsdag_pacml_dqn_config c = cfg ? *cfg : hsdag_pacml_dqn_config_default();
    if (!env->observe_x)
        return hsdag_err_set(e, HSDAG_EINVAL, "pacml dqn: the environment gives no extended observation");
    if (c.episodes < 1 || c.eval_every < 1 || c.eval_episodes < 0 || !(c.gamma > 0) || !(c.gamma < 1) ||
        c.n_step < 1 || c.n_step > 64 || !(c.lr > 0) || !(c.lr_end > 0) || !(c.grad_clip >= 0) ||
        c.batch < 1 || c.batch > 65536 || c.train_every < 1 || c.replay < 2 || c.learning_starts < 0 ||
        c.target_every < 1 || !(c.per_alpha >= 0) || !(c.per_beta >= 0) || !(c.eps_start >= 0) ||
        !(c.eps_end >= 0) || c.eps_decay < 1)
        return hsdag_err_set(e, HSDAG_EINVAL, "pacml dqn: configuration out of range");
    c.net.n_xstate = env->n_xstate;
    c.net.n_xaction = env->n_xaction;
    hsdag_nn_set_threads(1);
    hsdag_pacml_dqn *t = hsdag_calloc(1, sizeof *t);
    if (!t) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory");
    t->env = *env;
    t->c = c;
    int rc;
    if ((rc = hsdag_pacml_qnet_create(&t->net, env->jobs, env->n_jobs, &c.net, c.seed, e)) < 0 ||
        (rc = hsdag_pacml_qnet_create(&t->tgt, env->jobs, env->n_jobs, &c.net, c.seed, e)) < 0 ||
        (rc = dq_replay_init(&t->rb, c.replay, env, c.per_alpha > 0, e)) < 0)
        goto fail;
    hsdag_rng_seed(&t->rng, c.seed ^ 0xd09e5eedULL);
    t->best_eval = INFINITY;
    t->t0 = hsdag_now();
    if ((rc = dq_scratch_init(t, e)) < 0) goto fail;
    /* the target network starts as a copy */
    if ((rc = hsdag_nn_params_copy_values(t->tgt->p, t->net->p, e)) < 0) goto fail;
    hsdag_pacml_qnet_touch(t->tgt);
    *out = t;
    return 0;
fail:
    hsdag_pacml_dqn_free(t);
    return rc;
}

int32_t hsdag_pacml_dqn_iteration(const hsdag_pacml_dqn *t)
{
    return t->iter;
}
int32_t hsdag_pacml_dqn_total(const hsdag_pacml_dqn *t)
{
    return (t->c.episodes + t->c.eval_every - 1) / t->c.eval_every;
}
hsdag_pacml_qnet *hsdag_pacml_dqn_net(hsdag_pacml_dqn *t)
{
    return t->net;
}
double hsdag_pacml_dqn_best(const hsdag_pacml_dqn *t, int32_t *best_iter)
{
    if (best_iter) *best_iter = t->best_iter;
    return t->best_eval;
}

/* The k-th training episode's seed: never a report (0, 1, 2) or evaluation (1799+) seed. */
static uint64_t dq_episode_seed(uint64_t seed, int64_t k)
{
    uint64_t z = seed * 0xD1B54A32D192ED03ULL + (uint64_t)k + 0x2000000ULL;
    z ^= z >> 29;
    return z | (1ULL << 41);
}

/* Draws the b-th sample's decision index (proportional to priority, or uniform) and its importance
 * weight into t->isw[b]. */
static int32_t dq_draw(hsdag_pacml_dqn *t, int32_t b, double beta)
{
    dq_replay *rb = &t->rb;
    int32_t B = t->c.batch, i;
    if (!rb->tree) {
        int32_t oldest = (rb->head - rb->count + rb->cap) % rb->cap;
        t->isw[b] = 1.0;
        return (oldest + (int32_t)hsdag_rng_below(&t->rng, (uint32_t)rb->count)) % rb->cap;
    }
    double u = (b + hsdag_rng_uniform(&t->rng)) / B * rb->tree[1];
    int64_t x = 1;
    while (x < rb->tcap) {
        if (u < rb->tree[2 * x] || rb->tree[2 * x + 1] <= 0) {
            x = 2 * x;
        } else {
            u -= rb->tree[2 * x];
            x = 2 * x + 1;
        }
    }
    i = (int32_t)(x - rb->tcap);
    if (i >= rb->count) i = rb->count - 1;
    double P = rb->tree[(int64_t)rb->tcap + i] / rb->tree[1];
    t->isw[b] = P > 0 ? pow((double)rb->count * P, -beta) : 1.0;
    return i;
}

/* Fills sample b from decision i: its n-step return, the taken action's row, and the valid action rows of
 * its bootstrap state (appended at *nrows). */
static void dq_fill(hsdag_pacml_dqn *t, int32_t b, int32_t i, int32_t *nrows)
{
    dq_replay *rb = &t->rb;
    const hsdag_pacml_dqn_config *c = &t->c;
    int32_t K = rb->K, ns = rb->ns, na = rb->na, cap = rb->cap;
    /* n-step return; whole episodes are in the buffer, so i's episode ends within it */
    double R = 0, g = 1;
    int32_t j = i, term = 0;
    for (int32_t k = 0; k < c->n_step; k++) {
        j = (i + k) % cap;
        R += g * rb->rew[j];
        g *= c->gamma;
        if (rb->done[j]) {
            term = 1;
            break;
        }
    }
    t->target[b] = (float)R;
    t->disc[b] = (float)g;
    t->boot[b] = !term;
    /* the taken action's row */
    t->s_model[b] = rb->model[i];
    memcpy(t->s_gf + (size_t)b * PM_GF, rb->gfeat + (size_t)i * PM_GF, PM_GF * sizeof(float));
    if (ns) memcpy(t->s_xs + (size_t)b * ns, rb->xstate + (size_t)i * ns, (size_t)ns * sizeof(float));
    int32_t ak = rb->act[i];
    t->row_s[b] = b;
    t->row_a[b] = rb->poss[ak];
    if (na)
        memcpy(t->row_xa + (size_t)b * na, rb->xact + ((size_t)i * K + ak) * na, (size_t)na * sizeof(float));
    /* the bootstrap state's valid rows */
    int32_t nx = (j + 1) % cap;
    t->nstart[b] = *nrows;
    t->ncount[b] = 0;
    t->n_model[b] = rb->model[nx];
    memcpy(t->n_gf + (size_t)b * PM_GF, rb->gfeat + (size_t)nx * PM_GF, PM_GF * sizeof(float));
    if (ns) memcpy(t->n_xs + (size_t)b * ns, rb->xstate + (size_t)nx * ns, (size_t)ns * sizeof(float));
    if (term) return;
    for (int32_t k = 0; k < K; k++)
        if (rb->valid[(size_t)nx * K + k]) {
            int32_t r = (*nrows)++;
            t->nrow_s[r] = b;
            t->nrow_a[r] = rb->poss[k];
            if (na)
                memcpy(t->nrow_xa + (size_t)r * na, rb->xact + ((size_t)nx * K + k) * na,
                       (size_t)na * sizeof(float));
            t->ncount[b]++;
        }
}

/* Adds the bootstrap value to each sample's target (double Q: the online net picks, the target net values)
 * and sets the normalised importance weights. */
static int dq_targets(hsdag_pacml_dqn *t, int32_t nrows, double wmax, hsdag_err *e)
{
    int32_t B = t->c.batch;
    int rc;
    if (nrows) {
        hsdag_pacml_qbatch nb = {B, t->n_model, t->n_gf, t->n_xs, nrows, t->nrow_s, t->nrow_a, t->nrow_xa};
        if ((rc = hsdag_pacml_qnet_forward(t->net, &nb, t->qon, e)) < 0) return rc;
        if ((rc = hsdag_pacml_qnet_forward(t->tgt, &nb, t->qtg, e)) < 0) return rc;
    }
    for (int32_t b = 0; b < B; b++) {
        t->weight[b] = (float)(t->isw[b] / wmax);
        if (!t->boot[b] || !t->ncount[b]) continue;
        int32_t s0 = t->nstart[b], best = s0;
        for (int32_t r = s0 + 1; r < s0 + t->ncount[b]; r++)
            if (t->qon[r] > t->qon[best]) best = r;
        t->target[b] += t->disc[b] * t->qtg[best];
    }
    return 0;
}

/* One update: sample, n-step double-Q targets, TD loss, Adam, priorities, target sync. */
static int dq_update(hsdag_pacml_dqn *t, double progress, hsdag_nn_adam_config *ac, double *loss_sum,
                     double *q_sum, hsdag_err *e)
{
    dq_replay *rb = &t->rb;
    const hsdag_pacml_dqn_config *c = &t->c;
    int32_t B = c->batch;
    double beta = c->per_beta + (1.0 - c->per_beta) * progress, wmax = 0;
    int32_t nrows = 0;
    for (int32_t b = 0; b < B; b++) {
        int32_t i = dq_draw(t, b, beta);
        if (t->isw[b] > wmax) wmax = t->isw[b];
        t->idx[b] = i;
        dq_fill(t, b, i, &nrows);
    }
    int rc = dq_targets(t, nrows, wmax, e);
    if (rc < 0) return rc;
    hsdag_pacml_qbatch sb = {B, t->s_model, t->s_gf, t->s_xs, B, t->row_s, t->row_a, t->row_xa};
    double L = 0;
    if ((rc = hsdag_pacml_qnet_loss(t->net, &sb, t->target, t->weight, 1, &L, t->td, e)) < 0) return rc;
    hsdag_nn_adam_step(t->net->p, ac, NULL);
    hsdag_pacml_qnet_touch(t->net);
    t->updates++;
    *loss_sum += L;
    for (int32_t b = 0; b < B; b++) *q_sum += (double)t->target[b] + (double)t->td[b];
    if (rb->tree) {
        double vscale = 1.0 / (1.0 - c->gamma);
        for (int32_t b = 0; b < B; b++) {
            double p = pow(fabs((double)t->td[b]) * vscale + 1e-3, c->per_alpha);
            if (p > rb->maxp) rb->maxp = p;
            dq_tree_set(rb, t->idx[b], p);
        }
    }
    if (t->updates % c->target_every == 0) {
        if ((rc = hsdag_nn_params_copy_values(t->tgt->p, t->net->p, e)) < 0) return rc;
        hsdag_pacml_qnet_touch(t->tgt);
    }
    return 0;
}

static int dq_episode(const hsdag_pacml_env *env, void *net, uint64_t seed, hsdag_err *e)
{
    return hsdag_pacml_qnet_episode(env, net, seed, e);
}

int hsdag_pacml_dqn_iterate(hsdag_pacml_dqn *t, hsdag_pacml_dqn_stats *st, hsdag_err *e)
{
    const hsdag_pacml_dqn_config *c = &t->c;
    const hsdag_pacml_env *env = &t->env;
    memset(st, 0, sizeof *st);
    if (t->episodes >= c->episodes) return hsdag_err_set(e, HSDAG_EINVAL, "pacml dqn: training is complete");
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.clip_norm = c->grad_clip;
    double rscale = 1.0 - c->gamma, loss_sum = 0, q_sum = 0, eps = c->eps_start;
    int64_t up0 = t->updates;
    int32_t n_ep = 0;
    int rc = 0;
    for (; n_ep < c->eval_every && t->episodes < c->episodes; n_ep++) {
        env->reset(env->ctx, dq_episode_seed(c->seed, t->episodes));
        int64_t added = 0;
        while (!env->done(env->ctx)) {
            env->observe_x(env->ctx, c->net.mask_mode, t->x);
            double frac = (double)t->steps / (double)c->eps_decay;
            eps = c->eps_start + (c->eps_end - c->eps_start) * (frac < 1 ? frac : 1);
            int a;
            if (hsdag_rng_uniform(&t->rng) < eps) {
                int v[PM_NA], nv = 0;
                for (int k = 0; k < PM_NA; k++)
                    if (t->x->o.mask[k]) v[nv++] = k;
                a = nv ? v[hsdag_rng_below(&t->rng, (uint32_t)nv)] : 0;
            } else {
                a = hsdag_pacml_qnet_act(t->net, t->x, NULL);
            }
            int32_t i = dq_replay_push(&t->rb, t->x);
            int8_t ak = 0;
            for (int32_t k = 0; k < t->rb.K; k++)
                if (t->rb.poss[k] == a) ak = (int8_t)k;
            t->rb.act[i] = ak;
            double r;
            if ((rc = env->step(env->ctx, a, &r)) < 0) return hsdag_err_set(e, rc, "pacml dqn: step failed");
            t->rb.rew[i] = (float)(r * rscale);
            t->rb.done[i] = (uint8_t)env->done(env->ctx);
            t->steps++;
            added++;
        }
        double br, ret;
        env->episode_end(env->ctx, &br, &ret);
        st->train_blocking += br;
        t->episodes++;
        /* the updates this episode's decisions pay for (whole episodes are in the buffer before any) */
        if (t->rb.count >= c->learning_starts && t->rb.count >= c->batch) {
            double progress = (double)t->episodes / c->episodes;
            ac.lr = (float)(c->lr * (1.0 - (1.0 - c->lr_end) * progress));
            for (int64_t u = 0; u < added / c->train_every; u++)
                if ((rc = dq_update(t, progress, &ac, &loss_sum, &q_sum, e)) < 0) return rc;
        }
        st->lr = ac.lr;
    }
    st->train_blocking /= n_ep;
    int64_t nu = t->updates - up0;
    st->loss = nu ? loss_sum / nu : 0;
    st->q_mean = nu ? q_sum / ((double)nu * c->batch) / rscale : 0;
    st->epsilon = eps;
    t->iter++;
    st->eval_blocking = NAN;
    if (c->eval_episodes > 0) {
        if ((rc = pm_evaluate(&st->eval_blocking, env, dq_episode, t->net, c->eval_episodes, e)) < 0)
            return rc;
        if (st->eval_blocking < t->best_eval) {
            t->best_eval = st->eval_blocking;
            t->best_iter = t->iter;
            t->best_img.len = 0;
            if ((rc = hsdag_pacml_qpolicy_save(t->net, env->beta, env->time_unit_fix, &t->best_img, e)) < 0)
                return rc;
        }
    }
    st->iteration = t->iter;
    st->episodes = t->episodes;
    st->steps = t->steps;
    st->updates = t->updates;
    st->wall_s = hsdag_now() - t->t0;
    return 0;
}

int hsdag_pacml_dqn_save_best(const hsdag_pacml_dqn *t, hsdag_buf *out, hsdag_err *e)
{
    if (t->best_img.len) {
        hsdag_buf_append(out, t->best_img.data, t->best_img.len);
        return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory") : 0;
    }
    return hsdag_pacml_qpolicy_save(t->net, t->env.beta, t->env.time_unit_fix, out, e);
}

/* ======================= policy files ======================= */

#define DQ_MAGIC "HSPACDQN"
#define DQ_VERSION 1u

int hsdag_pacml_qpolicy_is(const void *buf, size_t len)
{
    return len >= 8 && !memcmp(buf, DQ_MAGIC, 8);
}

int hsdag_pacml_qpolicy_save(const hsdag_pacml_qnet *n, char beta, int time_unit_fix, hsdag_buf *out,
                             hsdag_err *e)
{
    const hsdag_pacml_qnet_config *c = &n->c;
    size_t at = hsdag_frame_begin(out, DQ_MAGIC, DQ_VERSION);
    hsdag_put_u8(out, (uint8_t)beta);
    hsdag_put_u8(out, (uint8_t)(time_unit_fix ? 1 : 0));
    int32_t cf[9] = {c->msg_half,  c->hidden1, c->node_out, c->graph_out,         c->n_xstate,
                     c->n_xaction, c->h1,      c->h2,       (int32_t)c->mask_mode};
    for (int i = 0; i < 9; i++) hsdag_put_i32(out, cf[i]);
    pm_put_table(out, n->p);
    pm_put_values(out, n->p);
    return hsdag_frame_end(out, at) < 0 ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml dqn: out of memory") : 0;
}

int hsdag_pacml_qpolicy_parse(hsdag_pacml_qnet **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                              const void *buf, size_t len, const char *what, char *beta_out, int *tuf_out,
                              hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    hsdag_rd r;
    uint32_t ver = 0;
    size_t used = 0;
    int rc = hsdag_frame_open(&r, &ver, &used, buf, len, DQ_MAGIC, what, e); /* magic, length, checksum */
    if (rc < 0) return rc;
    if (ver != DQ_VERSION) return hsdag_err_set(e, HSDAG_EPARSE, "%s: unsupported version %u", what, ver);
    if (used != len)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %zu bytes after the policy", what, len - used);
    uint8_t beta = hsdag_get_u8(&r), tuf = hsdag_get_u8(&r);
    int32_t cf[9];
    for (int i = 0; i < 9; i++) cf[i] = hsdag_get_i32(&r);
    if (r.bad) return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated header", what);
    if (beta < 'A' || beta > 'D' || tuf > 1)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: bad beta/time-unit fields", what);
    hsdag_pacml_qnet_config c = {
        cf[0], cf[1], cf[2], cf[3], cf[4], cf[5], cf[6], cf[7], (hsdag_pacml_mask_mode)cf[8]};
    hsdag_pacml_qnet *n = NULL;
    if ((rc = hsdag_pacml_qnet_create(&n, jobs, n_jobs, &c, 0, e)) < 0) {
        hsdag_err_prefix(e, what);
        return rc == HSDAG_EINVAL ? HSDAG_EPARSE : rc;
    }
    if ((rc = pm_get_table(&r, n->p, what, e)) == 0) rc = pm_get_values(&r, n->p, what, e);
    if (rc == 0 && hsdag_rd_left(&r))
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: %zu bytes after the values", what, hsdag_rd_left(&r));
    if (rc < 0) {
        hsdag_pacml_qnet_free(n);
        return rc;
    }
    hsdag_pacml_qnet_touch(n);
    if (beta_out) *beta_out = (char)beta;
    if (tuf_out) *tuf_out = tuf;
    *out = n;
    return 0;
}
