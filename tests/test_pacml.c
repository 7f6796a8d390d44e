/* test_pacml.c - tests of the learned PAC-ML policy: the whole PPO loss gradient against central
 *   differences of an independent double-precision reference, GAE by hand, masking, determinism,
 *   checkpoint and policy-file round trips, and a short training run that beats the random policy.
 * Not here: the cluster simulator's own rules (test_cluster.c) or the NN kernels (test_nn.c, test_gnn.c).
 * Entry points: main.
 */
#include "check.h"
#include "flip_sweep.h"
#include "gradcheck.h"
#include "oom_sweep.h"
#include "hsdag/cluster.h"
#include "hsdag/io.h"
#include "hsdag/pacml.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NA HSDAG_CLUSTER_N_ACTIONS
#define GF (HSDAG_CLUSTER_GRAPH_FEATS + HSDAG_CLUSTER_N_ACTIONS)

/* two tiny PipeDream graphs (diamond and chain) for the full-parameter gradient check */
static const char *tiny_a = "node1 -- Input -- forward_compute_time=0.500, backward_compute_time=0.000, "
                            "activation_size=100.0, parameter_size=0.0\n"
                            "node2 -- Conv -- forward_compute_time=2.000, backward_compute_time=3.000, "
                            "activation_size=50.0, parameter_size=20.0\n"
                            "node3 -- ReLU -- forward_compute_time=1.000, backward_compute_time=1.500, "
                            "activation_size=60.0, parameter_size=0.0\n"
                            "node4 -- Linear -- forward_compute_time=0.200, backward_compute_time=0.300, "
                            "activation_size=10.0, parameter_size=30.0\n"
                            "\tnode1 -- node2\n\tnode1 -- node3\n\tnode2 -- node4\n\tnode3 -- node4";
static const char *tiny_b = "node1 -- Input -- forward_compute_time=0.100, backward_compute_time=0.000, "
                            "activation_size=40.0, parameter_size=0.0\n"
                            "node2 -- Conv -- forward_compute_time=4.000, backward_compute_time=5.000, "
                            "activation_size=30.0, parameter_size=70.0\n"
                            "node3 -- Linear -- forward_compute_time=0.700, backward_compute_time=0.900, "
                            "activation_size=5.0, parameter_size=90.0\n"
                            "\tnode1 -- node2\n\tnode2 -- node3";

static hsdag_cluster *tiny_env(void)
{
    hsdag_err e = {0};
    hsdag_graph *g[2] = {NULL, NULL};
    const char *names[2] = {"tiny_a", "tiny_b"};
    const char *txt[2] = {tiny_a, tiny_b};
    for (int i = 0; i < 2; i++)
        if (hsdag_pipedream_read(&g[i], txt[i], strlen(txt[i]), names[i], &e) < 0) {
            fprintf(stderr, "tiny graph: %s\n", e.msg);
            return NULL;
        }
    hsdag_cluster_config c = hsdag_cluster_config_default();
    c.horizon = 20000;
    hsdag_cluster *env = NULL;
    if (hsdag_cluster_create(&env, &c, (const hsdag_graph *const *)g, names, 2, &e) < 0)
        fprintf(stderr, "tiny env: %s\n", e.msg);
    hsdag_graph_free(g[0]);
    hsdag_graph_free(g[1]);
    return env;
}

/* The network for env's job models (through the learner's plain-data view of the env). */
static int net_for(hsdag_pacml_net **out, hsdag_cluster *env, const hsdag_pacml_net_config *c, uint64_t seed,
                   hsdag_err *e)
{
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, env);
    return hsdag_pacml_net_create(out, pe.jobs, pe.n_jobs, c, seed, e);
}

static hsdag_cluster *builtin_env(char beta, double horizon)
{
    hsdag_err e = {0};
    hsdag_cluster_config c = hsdag_cluster_config_default();
    c.beta = beta;
    c.horizon = horizon;
    hsdag_cluster *env = NULL;
    if (hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e) < 0) fprintf(stderr, "env: %s\n", e.msg);
    return env;
}

/* ======================= double-precision reference of network + loss ======================= */

typedef struct ref {
    hsdag_nn_params *p;
    const hsdag_cluster *env;
    hsdag_pacml_net_config c;
    double *v; /* double copy of the whole value block (perturbed by the check) */
    const hsdag_pacml_sample *s;
    int32_t ns;
    hsdag_pacml_loss_config lc;
} ref;

static const double *rp(const ref *r, const char *name)
{
    int32_t id = hsdag_nn_params_find(r->p, name);
    if (id < 0) {
        fprintf(stderr, "no tensor %s\n", name);
        exit(1);
    }
    return r->v + hsdag_nn_params_offset(r->p, id);
}

/* y (n, out) = [ReLU] Lin(LN(x)) with the tensors of module `name` */
static void ref_mod(const ref *r, const char *name, double *y, const double *x, int n, int in, int out,
                    int relu)
{
    char b1[64], b2[64], b3[64], b4[64];
    snprintf(b1, sizeof b1, "%s_ln.g", name);
    snprintf(b2, sizeof b2, "%s_ln.b", name);
    snprintf(b3, sizeof b3, "%s.w", name);
    snprintf(b4, sizeof b4, "%s.b", name);
    const double *g = rp(r, b1), *bb = rp(r, b2), *w = rp(r, b3), *bias = rp(r, b4);
    double *xn = malloc(sizeof(double) * (size_t)in);
    for (int i = 0; i < n; i++) {
        const double *xr = x + (size_t)i * in;
        double m = 0, var = 0;
        for (int j = 0; j < in; j++) m += xr[j];
        m /= in;
        for (int j = 0; j < in; j++) var += (xr[j] - m) * (xr[j] - m);
        var /= in;
        double s = 1.0 / sqrt(var + 1e-5);
        for (int j = 0; j < in; j++) xn[j] = (xr[j] - m) * s * g[j] + bb[j];
        for (int o = 0; o < out; o++) {
            double acc = bias[o];
            for (int j = 0; j < in; j++) acc += w[(size_t)o * in + j] * xn[j];
            y[(size_t)i * out + o] = relu && acc < 0 ? 0 : acc;
        }
    }
    free(xn);
}

static void ref_lin(const ref *r, const char *name, double *y, const double *x, int in, int out, int relu)
{
    char b1[64], b2[64];
    snprintf(b1, sizeof b1, "%s.w", name);
    snprintf(b2, sizeof b2, "%s.b", name);
    const double *w = rp(r, b1), *b = rp(r, b2);
    for (int o = 0; o < out; o++) {
        double acc = b[o];
        for (int j = 0; j < in; j++) acc += w[(size_t)o * in + j] * x[j];
        y[o] = relu && acc < 0 ? 0 : acc;
    }
}

/* pooled node embedding of model m */
static void ref_gnn(const ref *r, int32_t mi, double *pool)
{
    const hsdag_cluster_model *m = hsdag_cluster_model_get(r->env, mi);
    const hsdag_graph *g = m->job;
    int n = g->n_nodes, ne = g->n_edges, h = r->c.msg_half, nm = n + ne;
    int din[2] = {HSDAG_CLUSTER_NODE_FEATS, r->c.hidden1}, dout[2] = {r->c.hidden1, r->c.node_out};
    double *z = malloc(sizeof(double) * (size_t)n * 64), *xe = malloc(sizeof(double) * (size_t)ne * 2);
    double *a = malloc(sizeof(double) * (size_t)n * h), *b = malloc(sizeof(double) * (size_t)ne * h);
    double *msg = malloc(sizeof(double) * (size_t)nm * 2 * h),
           *red = malloc(sizeof(double) * (size_t)nm * 64);
    double *cnt = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n * HSDAG_CLUSTER_NODE_FEATS; i++) z[i] = m->node_feat[i];
    for (int i = 0; i < ne * 2; i++) xe[i] = m->edge_feat[i];
    for (int rd = 0; rd < 2; rd++) {
        char nm1[32], nm2[32], nm3[32];
        snprintf(nm1, sizeof nm1, "r%d.node", rd + 1);
        snprintf(nm2, sizeof nm2, "r%d.edge", rd + 1);
        snprintf(nm3, sizeof nm3, "r%d.reduce", rd + 1);
        ref_mod(r, nm1, a, z, n, din[rd], h, 1);
        ref_mod(r, nm2, b, xe, ne, 2, h, 1);
        for (int k = 0; k < ne; k++)
            for (int j = 0; j < h; j++) {
                msg[(size_t)k * 2 * h + j] = a[(size_t)g->edge_src[k] * h + j];
                msg[(size_t)k * 2 * h + h + j] = b[(size_t)k * h + j];
            }
        for (int v = 0; v < n; v++)
            for (int j = 0; j < h; j++) {
                msg[(size_t)(ne + v) * 2 * h + j] = a[(size_t)v * h + j];
                msg[(size_t)(ne + v) * 2 * h + h + j] = 0;
            }
        ref_mod(r, nm3, red, msg, nm, 2 * h, dout[rd], 1);
        for (int i = 0; i < n * dout[rd]; i++) z[i] = 0;
        for (int v = 0; v < n; v++) cnt[v] = 1; /* self message */
        for (int k = 0; k < ne; k++) cnt[g->out_dst[k]] += 1;
        for (int k = 0; k < nm; k++) {
            int v = k < ne ? g->out_dst[k] : k - ne;
            for (int j = 0; j < dout[rd]; j++)
                z[(size_t)v * dout[rd] + j] += red[(size_t)k * dout[rd] + j] / cnt[v];
        }
    }
    for (int j = 0; j < r->c.node_out; j++) {
        pool[j] = 0;
        for (int v = 0; v < n; v++) pool[j] += z[(size_t)v * r->c.node_out + j] / n;
    }
    free(z);
    free(xe);
    free(a);
    free(b);
    free(msg);
    free(red);
    free(cnt);
}

/* lp (17) and value of one sample from the double parameters */
static void ref_heads(const ref *r, const hsdag_pacml_sample *s, const double *pool, double *lp, double *v)
{
    int no = r->c.node_out, go = r->c.graph_out, H = r->c.fc_hidden;
    double gf[GF], emb[128], h1[4096], logit[NA], hv[4096];
    for (int j = 0; j < GF; j++) gf[j] = s->gfeat[j];
    for (int j = 0; j < no; j++) emb[j] = pool[j];
    ref_mod(r, "graph", emb + no, gf, 1, GF, go, 0);
    ref_lin(r, "pi1", h1, emb, no + go, H, 1);
    ref_lin(r, "pi2", logit, h1, H, NA, 0);
    double mx = -INFINITY, se = 0;
    for (int j = 0; j < NA; j++)
        if (s->mask[j] && logit[j] > mx) mx = logit[j];
    for (int j = 0; j < NA; j++)
        if (s->mask[j]) se += exp(logit[j] - mx);
    for (int j = 0; j < NA; j++) lp[j] = s->mask[j] ? logit[j] - mx - log(se) : -INFINITY;
    ref_lin(r, "v1", hv, emb, no + go, H, 1);
    ref_lin(r, "v2", v, hv, H, 1, 0);
}

static double ref_loss(void *ctx)
{
    const ref *r = ctx;
    int32_t nmod = hsdag_cluster_n_models(r->env);
    double pools[16][64];
    for (int32_t m = 0; m < nmod && m < 16; m++) ref_gnn(r, m, pools[m]);
    double pl = 0, vl = 0, ent = 0, kl = 0, inv = 1.0 / r->ns, eps = r->lc.clip;
    for (int32_t i = 0; i < r->ns; i++) {
        const hsdag_pacml_sample *s = &r->s[i];
        double lp[NA], v;
        ref_heads(r, s, pools[s->model], lp, &v);
        double ratio = exp(lp[s->action] - s->lp_old[s->action]);
        double cr = ratio < 1 - eps ? 1 - eps : ratio > 1 + eps ? 1 + eps : ratio;
        double a1 = ratio * s->adv, a2 = cr * s->adv;
        pl -= (a1 < a2 ? a1 : a2) * inv;
        for (int j = 0; j < NA; j++)
            if (s->mask[j]) {
                ent -= exp(lp[j]) * lp[j] * inv;
                kl += exp((double)s->lp_old[j]) * ((double)s->lp_old[j] - lp[j]) * inv;
            }
        vl += 0.5 * (v - s->ret) * (v - s->ret) * inv;
    }
    return pl + r->lc.vf_coeff * vl - r->lc.ent_coeff * ent + r->lc.kl_coeff * kl;
}

/* Random samples whose ratios stay >= 0.03 away from the clip boundaries (the loss is smooth there). */
static void make_samples(hsdag_pacml_net *net, const hsdag_cluster *env, hsdag_pacml_sample *s, int ns,
                         hsdag_rng *rng)
{
    int32_t nmod = hsdag_cluster_n_models(env);
    for (int i = 0; i < ns; i++) {
        hsdag_pacml_sample *x = &s[i];
        memset(x, 0, sizeof *x);
        x->model = i % nmod;
        gc_rand_f(x->gfeat, HSDAG_CLUSTER_GRAPH_FEATS, rng, 0.0, 1.0);
        x->mask[0] = 1;
        for (int j = 1; j < NA; j++) x->mask[j] = hsdag_rng_uniform(rng) < 0.5;
        for (int j = 0; j < NA; j++) x->gfeat[HSDAG_CLUSTER_GRAPH_FEATS + j] = x->mask[j];
        hsdag_pacml_obs o;
        memset(&o, 0, sizeof o);
        o.model = x->model;
        memcpy(o.mask, x->mask, NA);
        memcpy(o.graph_feat, x->gfeat, sizeof o.graph_feat);
        float lp[NA], v;
        hsdag_pacml_net_eval(net, &o, lp, &v);
        do {
            x->action = (int32_t)hsdag_rng_below(rng, NA);
        } while (!x->mask[x->action]);
        for (;;) { /* behaviour policy = a perturbed copy of the current one */
            double q[NA], mx = -INFINITY, se = 0;
            for (int j = 0; j < NA; j++) {
                q[j] = x->mask[j] ? lp[j] + 0.6 * (hsdag_rng_uniform(rng) - 0.5) : -INFINITY;
                if (q[j] > mx) mx = q[j];
            }
            for (int j = 0; j < NA; j++)
                if (x->mask[j]) se += exp(q[j] - mx);
            for (int j = 0; j < NA; j++) x->lp_old[j] = x->mask[j] ? (float)(q[j] - mx - log(se)) : -INFINITY;
            double ratio = exp((double)lp[x->action] - x->lp_old[x->action]);
            if (fabs(ratio - 0.82) > 0.03 && fabs(ratio - 1.18) > 0.03) break;
        }
        x->adv = (float)(2 * hsdag_rng_uniform(rng) - 1);
        x->ret = (float)(2 * hsdag_rng_uniform(rng) - 1);
        x->v_old = v;
    }
}

/* Central differences of f at k random entries of t[off .. off+len) (perturbed and restored) against the
 * analytic gradient ga: max |difference| / max |numeric| (floor 1e-6). */
static double fd_sampled(const char *what, double *t, size_t off, size_t len, const float *ga, int k,
                         gc_loss f, void *ctx, hsdag_rng *rng)
{
    double gn_max = 1e-6, diff = 0;
    for (int j = 0; j < k; j++) {
        size_t i = off + hsdag_rng_below(rng, (uint32_t)len);
        double sv = t[i];
        t[i] = sv + GC_H;
        double lp = f(ctx);
        t[i] = sv - GC_H;
        double lm = f(ctx);
        t[i] = sv;
        double gn = (lp - lm) / (2 * GC_H);
        if (fabs(gn) > gn_max) gn_max = fabs(gn);
        if (fabs(gn - ga[i]) > diff) diff = fabs(gn - ga[i]);
    }
    double err = diff / gn_max;
    if (err > GC_TOL) fprintf(stderr, "  gradcheck %s: rel err %.3g (sampled)\n", what, err);
    return err;
}

/* FD of the double reference vs the analytic float gradient for every tensor. per_tensor < 0: all
 * entries, else that many random entries per tensor. Returns the worst relative error. */
static double check_loss_grad(hsdag_cluster *env, const hsdag_pacml_net_config *nc, int ns, int per_tensor,
                              double *loss_diff)
{
    hsdag_err e = {0};
    hsdag_pacml_net *net = NULL;
    if (net_for(&net, env, nc, 7, &e) < 0) {
        fprintf(stderr, "net: %s\n", e.msg);
        return INFINITY;
    }
    hsdag_nn_params *p = hsdag_pacml_net_params(net);
    hsdag_rng rng;
    hsdag_rng_seed(&rng, 11);
    /* move every parameter off its initial value (LayerNorm gains 1 / biases 0 are special points) */
    float *val = hsdag_nn_params_value(p, -1);
    size_t cnt = hsdag_nn_params_count(p);
    for (size_t i = 0; i < cnt; i++) val[i] += (float)(0.2 * (hsdag_rng_uniform(&rng) - 0.5));
    hsdag_pacml_net_touch(net);
    hsdag_pacml_sample s[12];
    make_samples(net, env, s, ns, &rng);
    hsdag_pacml_loss_config lc = {0.18f, 0.5f, 0.05f,
                                  0.3f}; /* larger weights than default: every term matters */
    hsdag_pacml_loss_stats st;
    if (hsdag_pacml_net_loss(net, &lc, s, NULL, ns, 1, &st, &e) < 0) return INFINITY;
    ref r = {p, env, *nc, NULL, s, ns, lc};
    r.v = malloc(sizeof(double) * cnt);
    gc_f2d(r.v, val, cnt);
    *loss_diff = fabs(ref_loss(&r) - st.loss);
    double worst = 0;
    const float *grad = hsdag_nn_params_grad(p, -1);
    for (int32_t t = 0; t < hsdag_nn_params_n_tensors(p); t++) {
        size_t off = hsdag_nn_params_offset(p, t);
        size_t len = (size_t)hsdag_nn_params_rows(p, t) * (size_t)hsdag_nn_params_cols(p, t);
        double err;
        if (per_tensor < 0 || (size_t)per_tensor >= len) {
            err = gc_check(hsdag_nn_params_name(p, t), r.v + off, len, grad + off, ref_loss, &r);
        } else {
            err = fd_sampled(hsdag_nn_params_name(p, t), r.v, off, len, grad, per_tensor, ref_loss, &r, &rng);
        }
        if (err > worst || err != err) worst = err != err ? INFINITY : err;
    }
    free(r.v);
    hsdag_pacml_net_free(net);
    return worst;
}

static void test_gradcheck(void)
{
    hsdag_cluster *env = tiny_env();
    CHECK(env != NULL);
    if (!env) return;
    hsdag_pacml_net_config small = {6, 4, 5, 3, 2, HSDAG_PACML_MASK_SPEC};
    double ld = 0;
    double err = check_loss_grad(env, &small, 8, -1, &ld);
    printf("  PPO loss gradient, small net, all parameters: max rel err %.3g (loss float vs double %.2g)\n",
           err, ld);
    CHECK(err < GC_TOL);
    CHECK(ld < 1e-5);
    hsdag_cluster_free(env);
    /* the default (spec) widths on the five real graphs, 6 random entries of every tensor */
    env = builtin_env('A', 20000);
    CHECK(env != NULL);
    if (!env) return;
    hsdag_pacml_net_config def = hsdag_pacml_net_config_default();
    err = check_loss_grad(env, &def, 10, 6, &ld);
    printf("  PPO loss gradient, spec net on the 5 graphs (sampled entries): max rel err %.3g (loss diff "
           "%.2g)\n",
           err, ld);
    CHECK(err < GC_TOL);
    CHECK(ld < 1e-4);
    hsdag_cluster_free(env);
}

static void test_gae(void)
{
    /* hand computation: gamma 0.9, lambda 0.8
     * t=2: delta = 1 - (-0.1) = 1.1, A = 1.1, ret = 1.0
     * t=1: delta = -1 + 0.9 (-0.1) - 0.2 = -1.29, A = -1.29 + 0.72 * 1.1 = -0.498, ret = -0.298
     * t=0: delta = 1 + 0.9 * 0.2 - 0.5 = 0.68, A = 0.68 + 0.72 (-0.498) = 0.32144, ret = 0.82144 */
    float r[3] = {1, -1, 1}, v[3] = {0.5f, 0.2f, -0.1f}, adv[3], ret[3];
    hsdag_pacml_gae(r, v, 3, 0.9, 0.8, adv, ret);
    CHECK_NEAR(adv[2], 1.1, 1e-6);
    CHECK_NEAR(adv[1], -0.498, 1e-6);
    CHECK_NEAR(adv[0], 0.32144, 1e-6);
    CHECK_NEAR(ret[2], 1.0, 1e-6);
    CHECK_NEAR(ret[1], -0.298, 1e-6);
    CHECK_NEAR(ret[0], 0.82144, 1e-6);
    /* lambda = 1: plain discounted returns when values are 0 */
    float z[3] = {0, 0, 0};
    hsdag_pacml_gae(r, z, 3, 0.5, 1.0, adv, ret);
    CHECK_NEAR(ret[0], 1 - 0.5 + 0.25, 1e-6);
}

static void test_masking(void)
{
    hsdag_cluster *env = builtin_env('B', 50000);
    CHECK(env != NULL);
    if (!env) return;
    hsdag_err e = {0};
    hsdag_pacml_net *net = NULL;
    CHECK(net_for(&net, env, NULL, 3, &e) == 0);
    if (!net) return;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, 5);
    /* bias the logits hard towards action 16 and 10 (invalid: no RAMP block shape) */
    hsdag_nn_params *p = hsdag_pacml_net_params(net);
    float *b = hsdag_nn_params_value(p, hsdag_nn_params_find(p, "pi2.b"));
    b[16] = 8.f;
    b[10] = 20.f;
    hsdag_pacml_net_touch(net);
    int bad = 0, n = 0, n16 = 0;
    for (int ep = 0; ep < 3; ep++) {
        hsdag_cluster_reset(env, 100 + (uint64_t)ep);
        while (!hsdag_cluster_done(env)) {
            const hsdag_cluster_obs *co = hsdag_cluster_observe(env);
            hsdag_pacml_obs o;
            hsdag_cluster_pacml_observe(&o, env, HSDAG_PACML_MASK_SPEC);
            CHECK(!memcmp(o.mask, co->mask, NA) && o.model == co->model);
            int a = hsdag_pacml_net_act(net, &o, ep == 2, &rng);
            if (!co->mask[a]) bad++;
            float lp[NA], v;
            hsdag_pacml_net_eval(net, &o, lp, &v);
            for (int j = 0; j < NA; j++)
                if (!co->mask[j] && !(lp[j] == -INFINITY)) bad++;
            n16 += a == 16;
            n++;
            hsdag_cluster_step(env, a, NULL);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(n > 100);
    CHECK(n16 > 0); /* the valid preferred action is taken when it is valid */
    hsdag_pacml_net_free(net);
    hsdag_cluster_free(env);
}

static hsdag_pacml_train_config tiny_train(uint64_t seed)
{
    hsdag_pacml_train_config c = hsdag_pacml_train_config_default();
    c.seed = seed;
    c.episodes_per_iter = 2;
    c.epochs = 2;
    c.minibatch = 64;
    c.eval_episodes = 1;
    c.net.fc_hidden = 32;
    return c;
}

static int same_params(hsdag_pacml_net *a, hsdag_pacml_net *b)
{
    hsdag_nn_params *pa = hsdag_pacml_net_params(a), *pb = hsdag_pacml_net_params(b);
    return hsdag_nn_params_count(pa) == hsdag_nn_params_count(pb) &&
           !memcmp(hsdag_nn_params_value(pa, -1), hsdag_nn_params_value(pb, -1),
                   hsdag_nn_params_count(pa) * sizeof(float));
}

static void test_determinism_and_checkpoint(void)
{
    hsdag_cluster *env = builtin_env('C', 30000);
    CHECK(env != NULL);
    if (!env) return;
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, env);
    hsdag_err e = {0};
    hsdag_pacml_train_config c = tiny_train(42);
    hsdag_pacml_trainer *t1 = NULL, *t2 = NULL, *t3 = NULL;
    CHECK(hsdag_pacml_trainer_create(&t1, &pe, &c, &e) == 0);
    CHECK(hsdag_pacml_trainer_create(&t2, &pe, &c, &e) == 0);
    if (!t1 || !t2) return;
    hsdag_pacml_iter_stats s1, s2, s3;
    for (int i = 0; i < 2; i++) {
        CHECK(hsdag_pacml_trainer_iterate(t1, &s1, &e) == 0);
        CHECK(hsdag_pacml_trainer_iterate(t2, &s2, &e) == 0);
        CHECK(s1.train_blocking == s2.train_blocking && s1.entropy == s2.entropy &&
              s1.value_loss == s2.value_loss && s1.eval_blocking == s2.eval_blocking && s1.steps == s2.steps);
    }
    CHECK(same_params(hsdag_pacml_trainer_net(t1), hsdag_pacml_trainer_net(t2)));
    /* another seed gives other weights */
    hsdag_pacml_train_config c9 = tiny_train(9);
    CHECK(hsdag_pacml_trainer_create(&t3, &pe, &c9, &e) == 0);
    CHECK(!same_params(hsdag_pacml_trainer_net(t1), hsdag_pacml_trainer_net(t3)));
    hsdag_pacml_trainer_free(t3);
    t3 = NULL;
    /* checkpoint after 2 iterations, restore, and continue both: identical third iteration */
    hsdag_buf ck = {0};
    CHECK(hsdag_pacml_trainer_save(t1, &ck, &e) == 0);
    CHECK(hsdag_pacml_trainer_restore(&t3, &pe, ck.data, ck.len, -1, &e) == 0);
    if (t3) {
        CHECK_EQ_INT(hsdag_pacml_trainer_iteration(t3), 2);
        CHECK(hsdag_pacml_trainer_iterate(t1, &s1, &e) == 0);
        CHECK(hsdag_pacml_trainer_iterate(t3, &s3, &e) == 0);
        CHECK(s1.train_blocking == s3.train_blocking && s1.entropy == s3.entropy && s1.kl == s3.kl &&
              s1.eval_blocking == s3.eval_blocking && s1.steps == s3.steps);
        CHECK(same_params(hsdag_pacml_trainer_net(t1), hsdag_pacml_trainer_net(t3)));
    }
    /* corrupt / truncated checkpoints are refused */
    hsdag_pacml_trainer *t4 = NULL;
    CHECK(hsdag_pacml_trainer_restore(&t4, &pe, ck.data, ck.len / 2, -1, &e) == HSDAG_EPARSE);
    ck.data[0] ^= 1;
    CHECK(hsdag_pacml_trainer_restore(&t4, &pe, ck.data, ck.len, -1, &e) == HSDAG_EPARSE);
    CHECK(t4 == NULL);
    hsdag_buf_free(&ck);
    /* policy file round trip: same log-probabilities on live observations */
    hsdag_buf pol = {0};
    CHECK(hsdag_pacml_policy_save(hsdag_pacml_trainer_net(t1), 'C', 0, 333.f, &pol, &e) == 0);
    char path[] = "/tmp/hsdag_test_pacml_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        CHECK(hsdag_write_file_atomic(path, pol.data, pol.len, &e) == 0);
        hsdag_pacml_net *ln = NULL;
        char beta = 0;
        int tuf = -1;
        CHECK(hsdag_pacml_policy_load(&ln, pe.jobs, pe.n_jobs, path, &beta, &tuf, &e) == 0);
        CHECK(beta == 'C' && tuf == 0);
        if (ln) {
            CHECK(same_params(ln, hsdag_pacml_trainer_net(t1)));
            hsdag_cluster_reset(env, 3);
            int diff = 0;
            for (int k = 0; k < 20 && !hsdag_cluster_done(env); k++) {
                hsdag_pacml_obs o;
                hsdag_cluster_pacml_observe(&o, env, HSDAG_PACML_MASK_SPEC);
                float a[NA], b[NA], va, vb;
                hsdag_pacml_net_eval(ln, &o, a, &va);
                hsdag_pacml_net_eval(hsdag_pacml_trainer_net(t1), &o, b, &vb);
                diff += memcmp(a, b, sizeof a) != 0 || va != vb;
                hsdag_cluster_step(env, 1, NULL);
            }
            CHECK_EQ_INT(diff, 0);
            /* the library run entry point on the file gives the same metrics as the loaded net */
            hsdag_cluster_metrics m1, m2;
            hsdag_cluster_policy lp;
            char spec[300];
            snprintf(spec, sizeof spec, "learned:%s", path);
            CHECK(hsdag_cluster_policy_parse(&lp, spec, &e) == 0);
            CHECK(hsdag_cluster_run(env, &lp, 0, &m1, &e) == 0);
            CHECK(hsdag_cluster_run_net(env, ln, 1, 0, &m2, &e) == 0);
            CHECK(m1.jobs_blocked == m2.jobs_blocked && m1.jobs_arrived == m2.jobs_arrived);
            hsdag_pacml_net_free(ln);
        }
        /* bad files */
        pol.data[pol.len - 3] ^= 0x40; /* checksum */
        CHECK(hsdag_write_file_atomic(path, pol.data, pol.len, &e) == 0);
        CHECK(hsdag_pacml_policy_load(&ln, pe.jobs, pe.n_jobs, path, NULL, NULL, &e) == HSDAG_EPARSE);
        CHECK(hsdag_write_file_atomic(path, "HSPACML", 8, &e) == 0);
        CHECK(hsdag_pacml_policy_load(&ln, pe.jobs, pe.n_jobs, path, NULL, NULL, &e) == HSDAG_EPARSE);
        CHECK(hsdag_pacml_policy_load(&ln, pe.jobs, pe.n_jobs, "/nonexistent/policy.bin", NULL, NULL, &e) ==
              HSDAG_EIO);
        unlink(path);
    }
    hsdag_buf_free(&pol);
    hsdag_pacml_trainer_free(t1);
    hsdag_pacml_trainer_free(t2);
    hsdag_pacml_trainer_free(t3);
    hsdag_cluster_free(env);
}

/* A short run on beta D (loose deadlines), 201-job episodes: the greedy policy after a few iterations
 * must block fewer jobs than the random policy on held-out episodes, and the sampled policy must improve. */
static void test_tiny_training(void)
{
    hsdag_cluster *env = builtin_env('D', 200000);
    CHECK(env != NULL);
    if (!env) return;
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, env);
    hsdag_err e = {0};
    hsdag_pacml_train_config c = tiny_train(1);
    c.iterations = 6;
    c.episodes_per_iter = 4;
    c.epochs = 4;
    c.lr = 1e-3f;
    hsdag_pacml_trainer *t = NULL;
    CHECK(hsdag_pacml_trainer_create(&t, &pe, &c, &e) == 0);
    if (!t) return;
    hsdag_pacml_iter_stats s, first = {0};
    for (int i = 0; i < c.iterations; i++) {
        CHECK(hsdag_pacml_trainer_iterate(t, &s, &e) == 0);
        if (i == 0) first = s;
    }
    double learned = 0, rnd = 0;
    hsdag_cluster_policy rp;
    CHECK(hsdag_cluster_policy_parse(&rp, "random", &e) == 0);
    for (uint64_t seed = 0; seed < 3; seed++) {
        hsdag_cluster_metrics m;
        CHECK(hsdag_cluster_run_net(env, hsdag_pacml_trainer_net(t), 1, seed, &m, &e) == 0);
        learned += m.blocking_rate / 3;
        CHECK(hsdag_cluster_run(env, &rp, seed, &m, &e) == 0);
        rnd += m.blocking_rate / 3;
    }
    printf("  tiny training (beta D, 201 jobs, %d iterations): sampled blocking %.3f -> %.3f; greedy %.3f vs "
           "random %.3f\n",
           c.iterations, first.train_blocking, s.train_blocking, learned, rnd);
    CHECK(s.train_blocking < first.train_blocking);
    CHECK(learned < rnd);
    hsdag_pacml_trainer_free(t);
    hsdag_cluster_free(env);
}

/* ---- the learner on an environment of its own: the hsdag_pacml_env interface needs no cluster ----
 * A toy env: 12 decisions per episode on one 3-node job, actions 0..2 valid, reward +1 for action 1. */
typedef struct toy {
    int t, good, steps;
    uint64_t seed;
} toy;
static void toy_reset(void *ctx, uint64_t seed)
{
    toy *x = ctx;
    x->t = 0;
    x->good = 0;
    x->seed = seed;
}
static int toy_done(void *ctx)
{
    return ((toy *)ctx)->t >= 12;
}
static void toy_observe(void *ctx, hsdag_pacml_mask_mode mode, hsdag_pacml_obs *o)
{
    toy *x = ctx;
    (void)mode;
    memset(o, 0, sizeof *o);
    for (int a = 0; a < 3; a++) o->mask[a] = o->graph_feat[HSDAG_PACML_GRAPH_FEATS + a] = 1;
    o->graph_feat[0] = (float)x->t / 12.f;
}
static int toy_step(void *ctx, int action, double *reward)
{
    toy *x = ctx;
    if (action < 0 || action > 2) return HSDAG_EINVAL;
    *reward = action == 1 ? 1 : -1;
    x->good += action == 1;
    x->t++;
    x->steps++;
    return 0;
}
static void toy_end(void *ctx, double *blocking_rate, double *ret)
{
    toy *x = ctx;
    *blocking_rate = 1.0 - x->good / 12.0;
    *ret = 2.0 * x->good - 12.0;
}

static void test_own_env(void)
{
    hsdag_err e = {0};
    hsdag_gb *b = hsdag_gb_create();
    int32_t u = hsdag_gb_add_node(b, "u", "Conv"), v = hsdag_gb_add_node(b, "v", "Relu"),
            w = hsdag_gb_add_node(b, "w", "Add");
    hsdag_gb_add_edge(b, u, v, 1);
    hsdag_gb_add_edge(b, v, w, 1);
    hsdag_graph *g = NULL;
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), 0);
    hsdag_gb_free(b);
    if (!g) return;
    float nf[3 * HSDAG_PACML_NODE_FEATS], ef[2 * HSDAG_PACML_EDGE_FEATS];
    for (int i = 0; i < 3 * HSDAG_PACML_NODE_FEATS; i++) nf[i] = 0.1f * (float)i;
    for (int i = 0; i < 2 * HSDAG_PACML_EDGE_FEATS; i++) ef[i] = 0.5f;
    hsdag_pacml_job job = {"toy", g, nf, ef};
    toy x = {0};
    hsdag_pacml_env pe = {.ctx = &x,
                          .n_jobs = 1,
                          .jobs = &job,
                          .beta = 'A',
                          .reset = toy_reset,
                          .done = toy_done,
                          .observe = toy_observe,
                          .step = toy_step,
                          .episode_end = toy_end};
    hsdag_pacml_train_config c = tiny_train(5);
    c.episodes_per_iter = 3;
    c.minibatch = 12;
    c.lr = 3e-3f;
    c.epochs = 4;
    hsdag_pacml_trainer *t = NULL;
    CHECK_EQ_INT(hsdag_pacml_trainer_create(&t, &pe, &c, &e), 0);
    if (t) {
        hsdag_pacml_iter_stats st, first = {0};
        for (int i = 0; i < 8; i++) {
            CHECK_EQ_INT(hsdag_pacml_trainer_iterate(t, &st, &e), 0);
            if (i == 0) first = st;
        }
        /* 8 iterations x (3 sampled + 1 greedy evaluation) episodes x 12 decisions, all through the callbacks */
        CHECK_EQ_INT(x.steps, 8 * 4 * 12);
        CHECK(st.steps == 8 * 3 * 12);
        CHECK(st.train_return > first.train_return); /* it learns that action 1 pays */
        CHECK_EQ_INT(hsdag_pacml_episode(&pe, hsdag_pacml_trainer_net(t), 1, 9, &e), 0);
        CHECK(x.t == 12);
        hsdag_pacml_trainer_free(t);
    }
    hsdag_graph_free(g);
}

/* ---- allocation failures: the trainer (create, iterate, save, restore) and policy files on the toy env ---- */
typedef struct pacml_oom {
    const hsdag_pacml_env *pe;
    hsdag_pacml_train_config c;
} pacml_oom;

static int pacml_oom_call(void *ctx, hsdag_err *e)
{
    const pacml_oom *o = ctx;
    hsdag_pacml_trainer *t = NULL, *t2 = NULL;
    hsdag_pacml_net *n = NULL;
    hsdag_buf st = {0}, pol = {0};
    hsdag_pacml_iter_stats s;
    int rc = hsdag_pacml_trainer_create(&t, o->pe, &o->c, e);
    if (rc == 0) rc = hsdag_pacml_trainer_iterate(t, &s, e);
    if (rc == 0) rc = hsdag_pacml_trainer_save(t, &st, e);
    if (rc == 0) rc = hsdag_pacml_trainer_restore(&t2, o->pe, st.data, st.len, -1, e);
    if (rc == 0) rc = hsdag_pacml_trainer_save_best(t, &pol, e);
    if (rc == 0)
        rc = hsdag_pacml_policy_parse(&n, o->pe->jobs, o->pe->n_jobs, pol.data, pol.len, "p", NULL, NULL, e);
    hsdag_pacml_net_free(n);
    hsdag_buf_free(&st);
    hsdag_buf_free(&pol);
    hsdag_pacml_trainer_free(t);
    hsdag_pacml_trainer_free(t2);
    return rc;
}

static void test_oom(void)
{
    hsdag_err e = {0};
    hsdag_gb *b = hsdag_gb_create();
    int32_t u = hsdag_gb_add_node(b, "u", "Conv"), v = hsdag_gb_add_node(b, "v", "Relu");
    hsdag_gb_add_edge(b, u, v, 1);
    hsdag_graph *g = NULL;
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), 0);
    hsdag_gb_free(b);
    if (!g) return;
    float nf[2 * HSDAG_PACML_NODE_FEATS] = {0.5f}, ef[HSDAG_PACML_EDGE_FEATS] = {0.25f};
    hsdag_pacml_job job = {"toy", g, nf, ef};
    toy x = {0};
    hsdag_pacml_env pe = {.ctx = &x,
                          .n_jobs = 1,
                          .jobs = &job,
                          .beta = 'B',
                          .reset = toy_reset,
                          .done = toy_done,
                          .observe = toy_observe,
                          .step = toy_step,
                          .episode_end = toy_end};
    pacml_oom o = {&pe, tiny_train(3)};
    o.c.episodes_per_iter = 1;
    o.c.epochs = 1;
    o.c.minibatch = 8;
    o.c.net.fc_hidden = 4;
    oom_sweep s = oom_sweep_call(pacml_oom_call, &o, 100000, 1);
    CHECK(s.ok && s.oom > 0);
    CHECK_EQ_INT(s.other, 0);
    CHECK_EQ_INT(s.oom_bad_msg, 0);
    hsdag_graph_free(g);
}

/* ---- files of earlier builds load; every flipped bit is refused ---- */
static int policy_parse_copy(void *ctx, const void *buf, size_t len)
{
    const hsdag_pacml_env *pe = ctx;
    hsdag_err e = {0};
    hsdag_pacml_net *n = NULL;
    int rc = hsdag_pacml_policy_parse(&n, pe->jobs, pe->n_jobs, buf, len, "p", NULL, NULL, &e);
    hsdag_pacml_net_free(n);
    return rc;
}

static int run_load_copy(void *ctx, const void *buf, size_t len)
{
    (void)ctx;
    hsdag_err e = {0};
    hsdag_cluster *env = NULL;
    hsdag_pacml_trainer *t = NULL;
    hsdag_cluster_config cc;
    int rc = hsdag_cluster_train_load(&env, &t, &cc, buf, len, -1, "run", &e);
    hsdag_pacml_trainer_free(t);
    hsdag_cluster_free(env);
    return rc;
}

static void test_old_files(void)
{
    hsdag_err e = {0};
    char *run = NULL, *want = NULL;
    size_t len = 0, wlen = 0;
    CHECK_EQ_INT(hsdag_read_file(&run, &len, "tests/data/legacy/pacml_run_v1.bin", 0, &e), 0);
    CHECK_EQ_INT(hsdag_read_file(&want, &wlen, "tests/data/legacy/pacml_run_v1.expect", 0, &e), 0);
    if (!run || !want) return;
    /* a run state of the build before the codec: the configuration comes back, the run continues exactly */
    hsdag_cluster *env = NULL, *env2 = NULL;
    hsdag_pacml_trainer *t = NULL, *t2 = NULL;
    hsdag_cluster_config cc, cc2;
    CHECK_EQ_INT(hsdag_cluster_train_load(&env, &t, &cc, run, len, -1, "run_v1", &e), 0);
    if (!t) {
        fprintf(stderr, "%s\n", e.msg);
        goto done;
    }
    CHECK(cc.beta == 'C' && cc.horizon == 20000 && hsdag_pacml_trainer_iteration(t) == 1);
    CHECK_EQ_INT(hsdag_pacml_trainer_config(t)->net.mask_mode, HSDAG_PACML_MASK_PLACE);
    /* read old, write new: save the restored run in version 2 and continue both */
    hsdag_buf b = {0};
    CHECK_EQ_INT(hsdag_cluster_train_save(&b, &cc, t, &e), 0);
    CHECK(b.len > 12 && memcmp(b.data, "HSPACRUN", 8) == 0 && ((const unsigned char *)b.data)[8] == 2);
    CHECK_EQ_INT(hsdag_cluster_train_load(&env2, &t2, &cc2, b.data, b.len, -1, "run_v2", &e), 0);
    CHECK(hsdag_cluster_config_diff(&cc, &cc2) == NULL);
    CHECK(t2 && hsdag_pacml_train_config_diff(hsdag_pacml_trainer_config(t),
                                              hsdag_pacml_trainer_config(t2)) == NULL);
    hsdag_pacml_iter_stats st, st2;
    CHECK_EQ_INT(hsdag_pacml_trainer_iterate(t, &st, &e), 0);
    if (t2) CHECK_EQ_INT(hsdag_pacml_trainer_iterate(t2, &st2, &e), 0);
    char got[512];
    snprintf(got, sizeof got, "%d %lld %a %a %a %a %a %a %a %a %a %a\n", st.iteration, (long long)st.steps,
             st.train_blocking, st.train_return, st.eval_blocking, st.entropy, st.value_loss, st.policy_loss,
             st.kl, st.kl_coeff, st.clip_frac, st.grad_norm);
    if (strcmp(got, want)) fprintf(stderr, "old run continued: %swant               %s", got, want);
    CHECK(strcmp(got, want) == 0); /* bit-identical to the uninterrupted run of the build that wrote it */
    if (t2)
        CHECK(st2.train_blocking == st.train_blocking && st2.eval_blocking == st.eval_blocking &&
              st2.entropy == st.entropy && st2.grad_norm == st.grad_norm);
    /* the best policy of a restored old run is written in the current version */
    hsdag_buf pol = {0};
    CHECK_EQ_INT(hsdag_pacml_trainer_save_best(t, &pol, &e), 0);
    CHECK(pol.len > 12 && ((const unsigned char *)pol.data)[8] == 2);
    /* a changed configuration is named */
    hsdag_cluster_config other = cc;
    other.horizon = 30000;
    CHECK(hsdag_cluster_config_diff(&cc, &other) &&
          !strcmp(hsdag_cluster_config_diff(&cc, &other), "horizon"));
    /* flipped bits in the version-2 run (a sample of positions: each load builds an env) */
    int tried = 0;
    CHECK_EQ_INT(flip_sweep_run(b.data, b.len, b.len / 24 + 1, run_load_copy, NULL, &tried), 0);
    CHECK(tried >= 64);
    /* (version-1 run states carried the configuration as a raw struct without a checksum: a flipped padding
     * byte there went unnoticed, which is why version 2 exists; they are only read, never written) */
    hsdag_buf_free(&b);
    hsdag_buf_free(&pol);
    /* PPO policies: the version-1 fixture, every shipped PPO policy (version 1: the time-unit-fix ones and
     * the reference-unit ones kept in ppo/), and their version-2 rewrites */
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, env);
    char tmp[] = "/tmp/hsdag_test_pacml_polXXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    const char *files[] = {"tests/data/legacy/pacml_policy_v1.bin", "policies/pacml/ppo/beta_A.bin",
                           "policies/pacml/ppo/beta_B.bin",         "policies/pacml/ppo/beta_C.bin",
                           "policies/pacml/ppo/beta_D.bin",         "policies/pacml/beta_A_tuf.bin",
                           "policies/pacml/beta_B_tuf.bin",         "policies/pacml/beta_C_tuf.bin",
                           "policies/pacml/beta_D_tuf.bin"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        hsdag_pacml_net *n = NULL, *n2 = NULL;
        char beta = 0;
        int tuf = -1;
        int rc = hsdag_pacml_policy_load(&n, pe.jobs, pe.n_jobs, files[i], &beta, &tuf, &e);
        if (rc < 0) fprintf(stderr, "%s\n", e.msg);
        CHECK_EQ_INT(rc, 0);
        if (!n) continue;
        CHECK(i == 0 || (beta == "ABCDABCD"[i - 1] && tuf == (i > 4)));
        hsdag_buf v2 = {0};
        CHECK_EQ_INT(hsdag_pacml_policy_save(n, beta, tuf, 333.f, &v2, &e), 0);
        CHECK_EQ_INT(hsdag_write_file_atomic(tmp, v2.data, v2.len, &e), 0);
        CHECK_EQ_INT(hsdag_pacml_policy_load(&n2, pe.jobs, pe.n_jobs, tmp, NULL, NULL, &e), 0);
        if (n2) CHECK(same_params(n, n2));
        if (i < 2) { /* a full sweep of one version-1 and one version-2 image */
            char *img = NULL;
            size_t il = 0;
            CHECK_EQ_INT(hsdag_read_file(&img, &il, files[i], 0, &e), 0);
            CHECK_EQ_INT(flip_sweep_run(img, il, il / 200 + 1, policy_parse_copy, &pe, NULL), 0);
            CHECK_EQ_INT(flip_sweep_run(v2.data, v2.len, v2.len / 200 + 1, policy_parse_copy, &pe, NULL), 0);
            hsdag_free(img);
        }
        hsdag_buf_free(&v2);
        hsdag_pacml_net_free(n);
        hsdag_pacml_net_free(n2);
    }
    unlink(tmp);
    /* the shipped reference-unit policies are DQN files for their beta */
    for (int bi = 0; bi < 4; bi++) {
        char path[64];
        snprintf(path, sizeof path, "policies/pacml/beta_%c.bin", 'A' + bi);
        char *img = NULL;
        size_t il = 0;
        CHECK_EQ_INT(hsdag_read_file(&img, &il, path, 0, &e), 0);
        if (!img) continue;
        hsdag_pacml_env px;
        hsdag_cluster_pacml_env_x(&px, env);
        hsdag_pacml_qnet *q = NULL;
        char beta = 0;
        int tuf = -1;
        CHECK(hsdag_pacml_qpolicy_is(img, il));
        CHECK_EQ_INT(hsdag_pacml_qpolicy_parse(&q, px.jobs, px.n_jobs, img, il, path, &beta, &tuf, &e), 0);
        CHECK(beta == 'A' + bi && tuf == 0);
        if (q) CHECK_EQ_INT(hsdag_pacml_qnet_config_get(q)->n_xstate, px.n_xstate);
        hsdag_pacml_qnet_free(q);
        hsdag_free(img);
    }
done:
    hsdag_pacml_trainer_free(t);
    hsdag_pacml_trainer_free(t2);
    hsdag_cluster_free(env);
    hsdag_cluster_free(env2);
    hsdag_free(run);
    hsdag_free(want);
}

/* ======================= DQN: the Q-network's loss gradient and the trainer ======================= */

typedef struct qref {
    ref r; /* r.c carries the GNN widths for ref_gnn */
    hsdag_pacml_qnet_config qc;
    const hsdag_pacml_qbatch *b;
    const float *target, *weight;
} qref;

static double qref_loss(void *ctx)
{
    const qref *q = ctx;
    const ref *r = &q->r;
    const hsdag_pacml_qbatch *b = q->b;
    int32_t nmod = hsdag_cluster_n_models(r->env), no = q->qc.node_out, go = q->qc.graph_out,
            ns = q->qc.n_xstate, na = q->qc.n_xaction, h1 = q->qc.h1, h2 = q->qc.h2;
    int32_t D = no + go + ns + NA + na;
    double pools[16][64], L = 0;
    for (int32_t m = 0; m < nmod && m < 16; m++) ref_gnn(r, m, pools[m]);
    double *x = malloc(sizeof(double) * (size_t)D), *a1 = malloc(sizeof(double) * (size_t)h1),
           *a2 = malloc(sizeof(double) * (size_t)h2);
    for (int32_t i = 0; i < b->n_rows; i++) {
        int32_t s = b->row_sample[i];
        double gf[GF];
        for (int j = 0; j < GF; j++) gf[j] = b->gfeat[(size_t)s * GF + j];
        for (int j = 0; j < no; j++) x[j] = pools[b->model[s]][j];
        ref_mod(r, "graph", x + no, gf, 1, GF, go, 0);
        for (int j = 0; j < ns; j++) x[no + go + j] = b->xstate[(size_t)s * ns + j];
        for (int j = 0; j < NA; j++) x[no + go + ns + j] = j == b->row_action[i];
        for (int j = 0; j < na; j++) x[no + go + ns + NA + j] = b->xaction[(size_t)i * na + j];
        ref_mod(r, "q1", a1, x, 1, D, h1, 1);
        ref_lin(r, "q2", a2, a1, h1, h2, 1);
        double qv;
        ref_lin(r, "q3", &qv, a2, h2, 1, 0);
        double d = qv - q->target[i];
        L += q->weight[i] * 0.5 * d * d / b->n_rows;
    }
    free(x);
    free(a1);
    free(a2);
    return L;
}

/* FD of the double reference against the analytic gradient of hsdag_pacml_qnet_loss, every tensor (all
 * entries, or per_tensor random ones). Returns the worst relative error. */
static double check_qloss_grad(hsdag_cluster *env, const hsdag_pacml_qnet_config *qc, int per_tensor,
                               double *loss_diff)
{
    hsdag_err e = {0};
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env(&pe, env);
    hsdag_pacml_qnet *net = NULL;
    if (hsdag_pacml_qnet_create(&net, pe.jobs, pe.n_jobs, qc, 5, &e) < 0) {
        fprintf(stderr, "qnet: %s\n", e.msg);
        return INFINITY;
    }
    hsdag_nn_params *p = hsdag_pacml_qnet_params(net);
    hsdag_rng rng;
    hsdag_rng_seed(&rng, 13);
    float *val = hsdag_nn_params_value(p, -1);
    size_t cnt = hsdag_nn_params_count(p);
    for (size_t i = 0; i < cnt; i++) val[i] += (float)(0.2 * (hsdag_rng_uniform(&rng) - 0.5));
    hsdag_pacml_qnet_touch(net);
    enum { S = 7, R = 12 };
    int32_t model[S], rs[R], ra[R], nmod = hsdag_cluster_n_models(env);
    float gf[S * GF], xs[S * 64], xa[R * 32], tg[R], w[R];
    for (int i = 0; i < S; i++) model[i] = i % nmod;
    gc_rand_f(gf, S * GF, &rng, 0.0, 1.0);
    gc_rand_f(xs, (size_t)S * qc->n_xstate, &rng, 0.0, 1.0);
    gc_rand_f(xa, (size_t)R * qc->n_xaction, &rng, 0.0, 1.0);
    gc_rand_f(tg, R, &rng, -1.0, 1.0);
    gc_rand_f(w, R, &rng, 0.2, 1.0);
    for (int i = 0; i < R; i++) {
        rs[i] = i % S;
        ra[i] = (int32_t)hsdag_rng_below(&rng, NA);
    }
    hsdag_pacml_qbatch b = {S, model, gf, xs, R, rs, ra, xa};
    double L = 0;
    if (hsdag_pacml_qnet_loss(net, &b, tg, w, 1, &L, NULL, &e) < 0) return INFINITY;
    qref q;
    memset(&q, 0, sizeof q);
    q.r.p = p;
    q.r.env = env;
    q.r.c.msg_half = qc->msg_half;
    q.r.c.hidden1 = qc->hidden1;
    q.r.c.node_out = qc->node_out;
    q.qc = *qc;
    q.b = &b;
    q.target = tg;
    q.weight = w;
    q.r.v = malloc(sizeof(double) * cnt);
    gc_f2d(q.r.v, val, cnt);
    *loss_diff = fabs(qref_loss(&q) - L);
    double worst = 0;
    const float *grad = hsdag_nn_params_grad(p, -1);
    for (int32_t t = 0; t < hsdag_nn_params_n_tensors(p); t++) {
        size_t off = hsdag_nn_params_offset(p, t);
        size_t len = (size_t)hsdag_nn_params_rows(p, t) * (size_t)hsdag_nn_params_cols(p, t);
        double err;
        if (per_tensor < 0 || (size_t)per_tensor >= len) {
            err = gc_check(hsdag_nn_params_name(p, t), q.r.v + off, len, grad + off, qref_loss, &q);
        } else {
            err = fd_sampled(hsdag_nn_params_name(p, t), q.r.v, off, len, grad, per_tensor, qref_loss, &q,
                             &rng);
        }
        if (err > worst || err != err) worst = err != err ? INFINITY : err;
    }
    free(q.r.v);
    hsdag_pacml_qnet_free(net);
    return worst;
}

static void test_dqn_gradcheck(void)
{
    hsdag_cluster *env = tiny_env();
    CHECK(env != NULL);
    if (!env) return;
    hsdag_pacml_qnet_config small = {4, 5, 3, 2, 5, 3, 6, 4, HSDAG_PACML_MASK_PLACE_JCT};
    double ld = 0, err = check_qloss_grad(env, &small, -1, &ld);
    printf(
        "  DQN TD-loss gradient, small net, all parameters: max rel err %.3g (loss float vs double %.2g)\n",
        err, ld);
    CHECK(err < GC_TOL);
    CHECK(ld < 1e-6);
    hsdag_cluster_free(env);
    /* the widths used for the shipped policies on the five real graphs, with the cluster's feature sizes */
    env = builtin_env('C', 20000);
    CHECK(env != NULL);
    if (!env) return;
    hsdag_pacml_env pe;
    hsdag_cluster_pacml_env_x(&pe, env);
    hsdag_pacml_qnet_config def = hsdag_pacml_qnet_config_default();
    def.n_xstate = pe.n_xstate < 64 ? pe.n_xstate : 64;
    def.n_xaction = pe.n_xaction;
    err = check_qloss_grad(env, &def, 6, &ld);
    printf(
        "  DQN TD-loss gradient, default net on the 5 graphs (sampled entries): max rel err %.3g (loss diff "
        "%.2g)\n",
        err, ld);
    CHECK(err < GC_TOL);
    CHECK(ld < 1e-5);
    hsdag_cluster_free(env);
}

/* The DQN on the toy env (no cluster): it learns that action 1 pays; the same seed gives the same policy
 * file; a policy file round trip gives the same Q-values; a flipped byte or a cut file is refused. */
static void toy_observe_x(void *ctx, hsdag_pacml_mask_mode mode, hsdag_pacml_xobs *x)
{
    toy *t = ctx;
    toy_observe(ctx, mode, &x->o);
    x->state[0] = (float)t->t / 12.f;
    for (int a = 0; a < NA; a++) x->action[a][0] = (float)a / 2.f;
}

static void test_dqn_toy(void)
{
    hsdag_err e = {0};
    hsdag_gb *b = hsdag_gb_create();
    int32_t u = hsdag_gb_add_node(b, "u", "Conv"), v = hsdag_gb_add_node(b, "v", "Relu");
    hsdag_gb_add_edge(b, u, v, 1);
    hsdag_graph *g = NULL;
    CHECK_EQ_INT(hsdag_gb_finish(b, &g, &e), 0);
    hsdag_gb_free(b);
    if (!g) return;
    float nf[2 * HSDAG_PACML_NODE_FEATS], ef[HSDAG_PACML_EDGE_FEATS] = {0.5f, 1.f};
    for (int i = 0; i < 2 * HSDAG_PACML_NODE_FEATS; i++) nf[i] = 0.1f * (float)i;
    hsdag_pacml_job job = {"toy", g, nf, ef};
    toy x = {0};
    hsdag_pacml_env pe = {.ctx = &x,
                          .n_jobs = 1,
                          .jobs = &job,
                          .beta = 'B',
                          .reset = toy_reset,
                          .done = toy_done,
                          .observe = toy_observe,
                          .step = toy_step,
                          .episode_end = toy_end,
                          .n_xstate = 1,
                          .n_xaction = 1,
                          .observe_x = toy_observe_x};
    pe.possible[0] = pe.possible[1] = pe.possible[2] = 1;
    hsdag_pacml_dqn_config c = hsdag_pacml_dqn_config_default();
    c.episodes = 40;
    c.eval_every = 10;
    c.eval_episodes = 2;
    c.batch = 16;
    c.replay = 200;
    c.learning_starts = 48;
    c.target_every = 20;
    c.eps_decay = 200;
    c.lr = 3e-3f;
    c.net.h1 = 16;
    c.net.h2 = 8;
    hsdag_buf img[2] = {{0}, {0}};
    for (int run = 0; run < 2; run++) {
        hsdag_pacml_dqn *t = NULL;
        CHECK_EQ_INT(hsdag_pacml_dqn_create(&t, &pe, &c, &e), 0);
        if (!t) break;
        hsdag_pacml_dqn_stats st;
        while (hsdag_pacml_dqn_iteration(t) < hsdag_pacml_dqn_total(t))
            CHECK_EQ_INT(hsdag_pacml_dqn_iterate(t, &st, &e), 0);
        CHECK_EQ_INT(st.episodes, 40);
        CHECK(st.eval_blocking < 0.1);                              /* greedy: action 1 nearly always */
        CHECK(hsdag_pacml_dqn_iterate(t, &st, &e) == HSDAG_EINVAL); /* complete */
        CHECK_EQ_INT(hsdag_pacml_dqn_save_best(t, &img[run], &e), 0);
        hsdag_pacml_dqn_free(t);
    }
    CHECK(img[0].len > 0 && img[0].len == img[1].len && !memcmp(img[0].data, img[1].data, img[0].len));
    hsdag_pacml_qnet *n = NULL;
    char beta = 0;
    int tuf = -1;
    CHECK(hsdag_pacml_qpolicy_is(img[0].data, img[0].len));
    CHECK_EQ_INT(hsdag_pacml_qpolicy_parse(&n, &job, 1, img[0].data, img[0].len, "toy.bin", &beta, &tuf, &e),
                 0);
    CHECK(beta == 'B' && tuf == 0);
    if (n) {
        hsdag_pacml_xobs xo;
        memset(&xo, 0, sizeof xo);
        toy_reset(&x, 0);
        toy_observe_x(&x, HSDAG_PACML_MASK_SPEC, &xo);
        float q[NA];
        CHECK_EQ_INT(hsdag_pacml_qnet_act(n, &xo, q), 1);
        CHECK(q[1] > q[0] && q[1] > q[2] && q[3] == -INFINITY);
        xo.o.mask[1] = 0; /* the masked argmax never returns a masked action */
        CHECK(hsdag_pacml_qnet_act(n, &xo, NULL) != 1);
        hsdag_pacml_qnet_free(n);
    }
    img[0].data[img[0].len / 2] ^= 0x40;
    CHECK_EQ_INT(hsdag_pacml_qpolicy_parse(&n, &job, 1, img[0].data, img[0].len, "toy.bin", NULL, NULL, &e),
                 HSDAG_EPARSE);
    CHECK(strstr(e.msg, "checksum") != NULL);
    CHECK_EQ_INT(hsdag_pacml_qpolicy_parse(&n, &job, 1, img[1].data, 40, "toy.bin", NULL, NULL, &e),
                 HSDAG_EPARSE);
    CHECK(n == NULL);
    hsdag_buf_free(&img[0]);
    hsdag_buf_free(&img[1]);
    /* an env without the extended observation is refused */
    pe.observe_x = NULL;
    hsdag_pacml_dqn *t = NULL;
    CHECK_EQ_INT(hsdag_pacml_dqn_create(&t, &pe, &c, &e), HSDAG_EINVAL);
    hsdag_graph_free(g);
}

int main(void)
{
    hsdag_nn_set_threads(1);
    test_gae();
    test_gradcheck();
    test_masking();
    test_determinism_and_checkpoint();
    test_tiny_training();
    test_own_env();
    test_old_files();
    test_oom();
    test_dqn_gradcheck();
    test_dqn_toy();
    return check_summary("test_pacml");
}
