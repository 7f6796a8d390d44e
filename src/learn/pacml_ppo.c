/* pacml_ppo.c - PPO for the PAC-ML policy: rollouts of whole episodes through the hsdag_pacml_env
 *   callbacks, GAE, clipped-objective minibatch epochs with Adam and gradient clipping, adaptive KL, greedy
 *   evaluation, checkpoints and policy files.
 * Not here: the network and its loss gradient (pacml_gnn.c); the RAMP environment and its adapter
 *   (src/cluster/); printing and CLI options (tools/).
 * Entry points: hsdag_pacml_gae, hsdag_pacml_episode, hsdag_pacml_trainer_*, hsdag_pacml_policy_*.
 */
#include "hsdag/codec.h"
#include "pacml_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void hsdag_pacml_gae(const float *reward, const float *value, int32_t len, double gamma, double lambda,
                     float *adv, float *ret)
{
    double a = 0;
    for (int32_t t = len - 1; t >= 0; t--) {
        double vnext = t + 1 < len ? value[t + 1] : 0.0;
        double delta = reward[t] + gamma * vnext - value[t];
        a = delta + gamma * lambda * a;
        adv[t] = (float)a;
        ret[t] = (float)(a + value[t]);
    }
}

hsdag_pacml_train_config hsdag_pacml_train_config_default(void)
{
    hsdag_pacml_train_config c;
    memset(&c, 0, sizeof c);
    c.seed = 0;
    c.iterations = 60;
    c.episodes_per_iter = 4;
    c.epochs = 8;
    c.minibatch = 128;
    c.gamma = 0.997;
    c.lambda = 0.95;
    c.lr = 2.785e-4f;
    c.grad_clip = 1.5f;
    c.kl_target = 0.001f;
    c.loss.clip = 0.18f;
    c.loss.vf_coeff = 0.5f;
    c.loss.ent_coeff = 0.003f;
    c.loss.kl_coeff = 0.01f;
    c.eval_episodes = 3;
    c.net = hsdag_pacml_net_config_default();
    return c;
}

struct hsdag_pacml_trainer {
    hsdag_pacml_env env; /* ctx borrowed */
    hsdag_pacml_train_config c;
    hsdag_pacml_net *net;
    hsdag_rng rng;
    int32_t iter;
    int64_t steps, episodes;
    float kl_coeff;
    double best_eval;
    int32_t best_iter;
    hsdag_buf best_img;
    double wall_prev, t0;
    hsdag_pacml_sample *s;
    int32_t cap;
    float *rew, *val, *adv, *ret;
    int32_t *perm;
};

int hsdag_pacml_trainer_create(hsdag_pacml_trainer **out, const hsdag_pacml_env *env,
                               const hsdag_pacml_train_config *c, hsdag_err *e)
{
    *out = NULL;
    if (c->iterations < 0 || c->episodes_per_iter < 1 || c->epochs < 1 || c->minibatch < 1 ||
        !(c->gamma > 0) || !(c->gamma < 1) || !(c->lambda >= 0) || !(c->lambda <= 1) || !(c->lr > 0) ||
        c->eval_episodes < 0 || !(c->loss.clip > 0))
        return hsdag_err_set(e, HSDAG_EINVAL, "pacml train: configuration out of range");
    hsdag_pacml_trainer *t = hsdag_calloc(1, sizeof *t);
    if (!t) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml train: out of memory");
    t->env = *env;
    t->c = *c;
    int rc = hsdag_pacml_net_create(&t->net, env->jobs, env->n_jobs, &c->net, c->seed, e);
    if (rc < 0) {
        hsdag_free(t);
        return rc;
    }
    hsdag_rng_seed(&t->rng, c->seed ^ 0x5eed5eedULL);
    t->kl_coeff = c->loss.kl_coeff;
    t->best_eval = INFINITY;
    t->t0 = hsdag_now();
    *out = t;
    return 0;
}

void hsdag_pacml_trainer_free(hsdag_pacml_trainer *t)
{
    if (!t) return;
    hsdag_pacml_net_free(t->net);
    hsdag_buf_free(&t->best_img);
    hsdag_free(t->s);
    hsdag_free(t->rew);
    hsdag_free(t->perm);
    hsdag_free(t);
}

int32_t hsdag_pacml_trainer_iteration(const hsdag_pacml_trainer *t)
{
    return t->iter;
}
int32_t hsdag_pacml_trainer_total(const hsdag_pacml_trainer *t)
{
    return t->c.iterations;
}
const hsdag_pacml_train_config *hsdag_pacml_trainer_config(const hsdag_pacml_trainer *t)
{
    return &t->c;
}
hsdag_pacml_net *hsdag_pacml_trainer_net(hsdag_pacml_trainer *t)
{
    return t->net;
}
double hsdag_pacml_trainer_best(const hsdag_pacml_trainer *t, int32_t *best_iter)
{
    if (best_iter) *best_iter = t->best_iter;
    return t->best_eval;
}

static int pp_reserve(hsdag_pacml_trainer *t, int32_t need, hsdag_err *e)
{
    if (need <= t->cap) return 0;
    int32_t cap = t->cap ? t->cap : 4096;
    while (cap < need) cap *= 2;
    hsdag_pacml_sample *s = hsdag_realloc(t->s, (size_t)cap * sizeof *s);
    if (!s) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml train: out of memory");
    t->s = s;
    float *f = hsdag_realloc(t->rew, (size_t)cap * 4 * sizeof(float));
    if (!f) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml train: out of memory");
    t->rew = f;
    int32_t *p = hsdag_realloc(t->perm, (size_t)cap * sizeof(int32_t));
    if (!p) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml train: out of memory");
    t->perm = p;
    t->cap = cap;
    return 0;
}

/* The k-th training episode's seed: far from the evaluation (1799+) and report (0, 1, 2) seeds. */
static uint64_t pp_episode_seed(uint64_t seed, int64_t k)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)k + 0x1000000ULL;
    z ^= z >> 31;
    return z | (1ULL << 40);
}

int hsdag_pacml_episode(const hsdag_pacml_env *env, hsdag_pacml_net *n, int greedy, uint64_t seed,
                        hsdag_err *e)
{
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed ^ 0xac7ULL);
    hsdag_pacml_mask_mode mode = hsdag_pacml_net_config_get(n)->mask_mode;
    env->reset(env->ctx, seed);
    while (!env->done(env->ctx)) {
        hsdag_pacml_obs o;
        env->observe(env->ctx, mode, &o);
        int a = hsdag_pacml_net_act(n, &o, greedy, &rng);
        double r;
        int rc = env->step(env->ctx, a, &r);
        if (rc < 0) return hsdag_err_set(e, rc, "pacml: episode step failed");
    }
    return 0;
}

/* ---- one PPO iteration, step by step ---- */

/* Collects whole episodes with the current (sampling) policy into t->s[0..*n), with GAE per episode; the
 * training blocking rate and return go to st. */
static int pp_collect(hsdag_pacml_trainer *t, int32_t *n, hsdag_pacml_iter_stats *st, hsdag_err *e)
{
    const hsdag_pacml_train_config *c = &t->c;
    double rscale = 1.0 - c->gamma;
    int32_t N = 0;
    for (int32_t ep = 0; ep < c->episodes_per_iter; ep++) {
        const hsdag_pacml_env *env = &t->env;
        env->reset(env->ctx, pp_episode_seed(c->seed, t->episodes++));
        int32_t start = N;
        while (!env->done(env->ctx)) {
            int rc = pp_reserve(t, N + 1, e);
            if (rc < 0) return rc;
            hsdag_pacml_obs ob;
            env->observe(env->ctx, c->net.mask_mode, &ob);
            const hsdag_pacml_obs *o = &ob;
            hsdag_pacml_sample *s = &t->s[N];
            s->model = o->model;
            memcpy(s->gfeat, o->graph_feat, sizeof s->gfeat);
            memcpy(s->mask, o->mask, sizeof s->mask);
            float v;
            hsdag_pacml_net_eval(t->net, o, s->lp_old, &v);
            int32_t a = 0;
            if (hsdag_nn_categorical_sample_logits(&a, NULL, s->lp_old, o->mask, PM_NA, &t->rng) < 0) a = 0;
            s->action = a;
            s->v_old = v;
            double r;
            if ((rc = env->step(env->ctx, a, &r)) < 0)
                return hsdag_err_set(e, rc, "pacml train: step failed");
            s->reward = (float)r;
            t->rew[N] = (float)(r * rscale);
            N++;
        }
        int32_t len = N - start;
        float *val = t->rew + t->cap, *adv = val + t->cap, *ret = adv + t->cap;
        for (int32_t i = 0; i < len; i++) val[i] = t->s[start + i].v_old;
        hsdag_pacml_gae(t->rew + start, val, len, c->gamma, c->lambda, adv, ret);
        for (int32_t i = 0; i < len; i++) {
            t->s[start + i].adv = adv[i];
            t->s[start + i].ret = ret[i];
        }
        double blocking = 0, ret_sum = 0;
        env->episode_end(env->ctx, &blocking, &ret_sum);
        st->train_blocking += blocking / c->episodes_per_iter;
        st->train_return += ret_sum / c->episodes_per_iter;
    }
    *n = N;
    return 0;
}

/* Standardises the advantages over the batch (RLlib PPO does the same). */
static void pp_standardise(hsdag_pacml_trainer *t, int32_t N)
{
    double mu = 0, sd = 0;
    for (int32_t i = 0; i < N; i++) mu += t->s[i].adv;
    mu /= N;
    for (int32_t i = 0; i < N; i++) sd += (t->s[i].adv - mu) * (t->s[i].adv - mu);
    sd = sqrt(sd / N) + 1e-8;
    for (int32_t i = 0; i < N; i++) t->s[i].adv = (float)((t->s[i].adv - mu) / sd);
}

/* Epochs of shuffled minibatches with Adam; the last epoch's means go to st, then RLlib's adaptive KL
 * coefficient. */
static int pp_epochs(hsdag_pacml_trainer *t, int32_t N, hsdag_pacml_iter_stats *st, hsdag_err *e)
{
    const hsdag_pacml_train_config *c = &t->c;
    double vscale = 1.0 / (1.0 - c->gamma);
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = c->lr;
    ac.clip_norm = c->grad_clip;
    hsdag_pacml_loss_config lc = c->loss;
    lc.kl_coeff = t->kl_coeff;
    for (int32_t i = 0; i < N; i++) t->perm[i] = i;
    double sum_kl = 0, sum_ent = 0, sum_vl = 0, sum_pl = 0, sum_cf = 0, sum_gn = 0;
    int64_t nmb = 0, nlast = 0;
    for (int32_t ep = 0; ep < c->epochs; ep++) {
        for (int32_t i = N - 1; i > 0; i--) {
            int32_t j = (int32_t)hsdag_rng_below(&t->rng, (uint32_t)i + 1);
            int32_t tmp = t->perm[i];
            t->perm[i] = t->perm[j];
            t->perm[j] = tmp;
        }
        for (int32_t off = 0; off < N; off += c->minibatch) {
            int32_t m = N - off < c->minibatch ? N - off : c->minibatch;
            hsdag_pacml_loss_stats ls;
            int rc = hsdag_pacml_net_loss(t->net, &lc, t->s, t->perm + off, m, 1, &ls, e);
            if (rc < 0) return rc;
            hsdag_nn_adam_stats as;
            hsdag_nn_adam_step(hsdag_pacml_net_params(t->net), &ac, &as);
            hsdag_pacml_net_touch(t->net);
            nmb++;
            sum_gn += as.grad_norm;
            if (ep == c->epochs - 1) {
                sum_kl += ls.kl;
                sum_ent += ls.entropy;
                sum_vl += ls.value_loss;
                sum_pl += ls.policy_loss;
                sum_cf += ls.clip_frac;
                nlast++;
            }
        }
    }
    if (nlast) {
        st->kl = sum_kl / nlast;
        st->entropy = sum_ent / nlast;
        st->value_loss = sum_vl / nlast * vscale * vscale; /* in return units^2 */
        st->policy_loss = sum_pl / nlast;
        st->clip_frac = sum_cf / nlast;
    }
    st->grad_norm = nmb ? sum_gn / nmb : 0;
    st->kl_coeff = t->kl_coeff;
    if (c->kl_target > 0) { /* RLlib's adaptive KL coefficient */
        if (st->kl > 2.0 * c->kl_target)
            t->kl_coeff *= 1.5f;
        else if (st->kl < 0.5 * c->kl_target)
            t->kl_coeff *= 0.5f;
    }
    return 0;
}

int pm_evaluate(double *mean, const hsdag_pacml_env *env, pm_episode_fn episode, void *net, int32_t n,
                hsdag_err *e)
{
    double sum = 0;
    for (int32_t k = 0; k < n; k++) {
        int rc = episode(env, net, PM_EVAL_SEED + (uint64_t)k, e);
        if (rc < 0) return rc;
        double blocking = 0, ret_sum = 0;
        env->episode_end(env->ctx, &blocking, &ret_sum);
        sum += blocking;
    }
    *mean = sum / n;
    return 0;
}

static int pp_episode(const hsdag_pacml_env *env, void *net, uint64_t seed, hsdag_err *e)
{
    return hsdag_pacml_episode(env, net, 1, seed, e);
}

/* Greedy evaluation on the evaluation seeds; a new best is kept as a policy image. */
static int pp_evaluate(hsdag_pacml_trainer *t, hsdag_pacml_iter_stats *st, hsdag_err *e)
{
    const hsdag_pacml_train_config *c = &t->c;
    st->eval_blocking = NAN;
    if (c->eval_episodes <= 0) return 0;
    int rc = pm_evaluate(&st->eval_blocking, &t->env, pp_episode, t->net, c->eval_episodes, e);
    if (rc < 0) return rc;
    if (st->eval_blocking < t->best_eval) {
        t->best_eval = st->eval_blocking;
        t->best_iter = t->iter;
        t->best_img.len = 0;
        rc = hsdag_pacml_policy_save(t->net, t->env.beta, t->env.time_unit_fix,
                                     (float)(1.0 / (1.0 - c->gamma)), &t->best_img, e);
        if (rc < 0) return rc;
    }
    return 0;
}

int hsdag_pacml_trainer_iterate(hsdag_pacml_trainer *t, hsdag_pacml_iter_stats *st, hsdag_err *e)
{
    hsdag_pacml_iter_stats z = {0};
    *st = z;
    int32_t N = 0;
    int rc = pp_collect(t, &N, st, e);
    if (rc < 0) return rc;
    t->steps += N;
    pp_standardise(t, N);
    if ((rc = pp_epochs(t, N, st, e)) < 0) return rc;
    t->iter++;
    if ((rc = pp_evaluate(t, st, e)) < 0) return rc;
    st->iteration = t->iter;
    st->steps = t->steps;
    st->wall_s = t->wall_prev + (hsdag_now() - t->t0);
    return 0;
}

int hsdag_pacml_trainer_save_best(const hsdag_pacml_trainer *t, hsdag_buf *out, hsdag_err *e)
{
    if (t->best_img.len) {
        hsdag_buf_append(out, t->best_img.data, t->best_img.len);
        return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory") : 0;
    }
    return hsdag_pacml_policy_save(t->net, t->env.beta, t->env.time_unit_fix,
                                   (float)(1.0 / (1.0 - t->c.gamma)), out, e);
}

/* ---- policy files ----
 * Version 2: a codec frame "HSPACML\0" v2 whose payload is the body below. Version 1 (before the codec):
 * magic, u32 1, the same body, then u64 FNV-1a 64 with the one-digit-short basis (HSDAG_FNV64_BASIS_V1)
 * of everything before it; the shipped policies/pacml/beta_X.bin are version 1 and still load.
 * Body: beta u8, time_unit_fix u8, 2 zero bytes, net config 6 x i32, value scale f32, n_tensors u32,
 * count u64, per tensor (rows i32, cols i32, name_len u32, name), the parameter values as float32. */

#define PP_POLICY_MAGIC "HSPACML"
#define PP_POLICY_VERSION 2u
#define PP_STATE_MAGIC "HSPACPP"
#define PP_STATE_VERSION 2u

int hsdag_pacml_policy_save(const hsdag_pacml_net *n, char beta, int time_unit_fix, float value_scale,
                            hsdag_buf *out, hsdag_err *e)
{
    const hsdag_pacml_net_config *c = hsdag_pacml_net_config_get(n);
    hsdag_nn_params *p = hsdag_pacml_net_params((hsdag_pacml_net *)n);
    size_t at = hsdag_frame_begin(out, PP_POLICY_MAGIC, PP_POLICY_VERSION);
    unsigned char hdr[4] = {(unsigned char)beta, (unsigned char)(time_unit_fix ? 1 : 0), 0, 0};
    hsdag_put_bytes(out, hdr, 4);
    int32_t cf[6] = {c->fc_hidden, c->msg_half, c->hidden1, c->node_out, c->graph_out, (int32_t)c->mask_mode};
    for (int i = 0; i < 6; i++) hsdag_put_i32(out, cf[i]);
    hsdag_put_f32(out, value_scale);
    pm_put_table(out, p);
    pm_put_values(out, p);
    return hsdag_frame_end(out, at) < 0 ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory") : 0;
}

void pm_put_table(hsdag_buf *out, hsdag_nn_params *p)
{
    int32_t nt = hsdag_nn_params_n_tensors(p);
    hsdag_put_u32(out, (uint32_t)nt);
    hsdag_put_u64(out, hsdag_nn_params_count(p));
    for (int32_t t = 0; t < nt; t++) { /* the tensor table, checked on load */
        hsdag_put_i32(out, hsdag_nn_params_rows(p, t));
        hsdag_put_i32(out, hsdag_nn_params_cols(p, t));
        hsdag_put_str(out, hsdag_nn_params_name(p, t));
    }
}

void pm_put_values(hsdag_buf *out, hsdag_nn_params *p)
{
    hsdag_put_f32s(out, hsdag_nn_params_value(p, -1), hsdag_nn_params_count(p)); /* values only, no Adam */
}

int pm_get_table(hsdag_rd *r, hsdag_nn_params *p, const char *what, hsdag_err *e)
{
    uint32_t nt = hsdag_get_u32(r);
    uint64_t cnt = hsdag_get_u64(r);
    if (r->bad) return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated tensor table", what);
    if (nt != (uint32_t)hsdag_nn_params_n_tensors(p) || cnt != hsdag_nn_params_count(p))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %u tensors / %llu floats, the network has %d / %zu", what,
                             nt, (unsigned long long)cnt, hsdag_nn_params_n_tensors(p),
                             hsdag_nn_params_count(p));
    for (uint32_t t = 0; t < nt; t++) {
        char name[64];
        int32_t rows = hsdag_get_i32(r), cols = hsdag_get_i32(r);
        hsdag_get_str(r, name, sizeof name);
        const char *want = hsdag_nn_params_name(p, (int32_t)t);
        if (r->bad) return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated tensor table", what);
        if (strcmp(name, want) || rows != hsdag_nn_params_rows(p, (int32_t)t) ||
            cols != hsdag_nn_params_cols(p, (int32_t)t))
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: tensor %u is '%s' (%d x %d), expected '%s'", what, t,
                                 name, rows, cols, want);
    }
    return 0;
}

int pm_get_values(hsdag_rd *r, hsdag_nn_params *p, const char *what, hsdag_err *e)
{
    size_t cnt = hsdag_nn_params_count(p);
    if (hsdag_rd_left(r) < cnt * sizeof(float))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated values", what);
    float *val = hsdag_nn_params_value(p, -1);
    hsdag_get_f32s(r, val, cnt);
    for (size_t i = 0; i < cnt; i++)
        if (!isfinite(val[i])) return hsdag_err_set(e, HSDAG_EPARSE, "%s: non-finite parameter value", what);
    return 0;
}

/* Reads a policy body from r (version 1 images also check their trailing checksum, which covers buf from
 * the start); builds the network for jobs and fills its values. */
static int pp_policy_body(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs, hsdag_rd *r,
                          int v1, const void *buf, const char *what, char *beta_out, int *tuf_out,
                          float *vs_out, hsdag_err *e)
{
    unsigned char hdr[4];
    int32_t cf[6];
    hsdag_get_bytes(r, hdr, 4);
    for (int i = 0; i < 6; i++) cf[i] = hsdag_get_i32(r);
    float vs = hsdag_get_f32(r);
    if (r->bad) return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated header", what);
    if (hdr[0] < 'A' || hdr[0] > 'D' || hdr[1] > 1)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: bad beta/time-unit fields", what);
    hsdag_pacml_net_config c = {cf[0], cf[1], cf[2], cf[3], cf[4], (hsdag_pacml_mask_mode)cf[5]};
    hsdag_pacml_net *n = NULL;
    int rc = hsdag_pacml_net_create(&n, jobs, n_jobs, &c, 0, e);
    if (rc < 0) {
        hsdag_err_prefix(e, what);
        return rc == HSDAG_EINVAL ? HSDAG_EPARSE : rc;
    }
    hsdag_nn_params *p = hsdag_pacml_net_params(n);
    rc = pm_get_table(r, p, what, e);
    size_t vbytes = hsdag_nn_params_count(p) * sizeof(float);
    if (rc == 0 && hsdag_rd_left(r) < vbytes + (v1 ? 8 : 0))
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated values", what);
    if (rc == 0 && v1) {
        hsdag_rd sr = *r;
        sr.pos += vbytes;
        if (hsdag_get_u64(&sr) != hsdag_fnv1a64(HSDAG_FNV64_BASIS_V1, buf, r->pos + vbytes))
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: checksum mismatch (corrupt file)", what);
    }
    if (rc == 0) rc = pm_get_values(r, p, what, e);
    if (rc < 0) {
        hsdag_pacml_net_free(n);
        return rc;
    }
    if (v1) hsdag_get_u64(r); /* the checksum, verified above */
    hsdag_pacml_net_touch(n);
    if (beta_out) *beta_out = (char)hdr[0];
    if (tuf_out) *tuf_out = hdr[1];
    if (vs_out) *vs_out = vs;
    *out = n;
    return 0;
}

/* Parses a policy image (version 1 or 2); *used gets the bytes consumed. */
static int pp_policy_parse(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                           const void *buf, size_t len, const char *what, size_t *used, char *beta_out,
                           int *tuf_out, float *vs_out, hsdag_err *e)
{
    if (len < 8 || memcmp(buf, PP_POLICY_MAGIC, 8))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: not a PAC-ML policy file (bad magic)", what);
    hsdag_rd r;
    int rc;
    if (hsdag_frame_version(buf, len, PP_POLICY_MAGIC) == 1) {
        r = hsdag_rd_make(buf, len);
        r.pos = 12;
        rc = pp_policy_body(out, jobs, n_jobs, &r, 1, buf, what, beta_out, tuf_out, vs_out, e);
        if (rc == 0) *used = r.pos;
        return rc;
    }
    uint32_t ver = 0;
    size_t fsize = 0;
    if ((rc = hsdag_frame_open(&r, &ver, &fsize, buf, len, PP_POLICY_MAGIC, what, e)) < 0) return rc;
    if (ver != PP_POLICY_VERSION)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: unsupported version %u", what, ver);
    rc = pp_policy_body(out, jobs, n_jobs, &r, 0, buf, what, beta_out, tuf_out, vs_out, e);
    if (rc == 0 && hsdag_rd_left(&r)) {
        hsdag_pacml_net_free(*out);
        *out = NULL;
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: %zu bytes after the values", what, hsdag_rd_left(&r));
    }
    if (rc == 0) *used = fsize;
    return rc;
}

int hsdag_pacml_policy_parse(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                             const void *buf, size_t len, const char *what, char *beta_out, int *tuf_out,
                             hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    size_t used = 0;
    int rc = pp_policy_parse(out, jobs, n_jobs, buf, len, what, &used, beta_out, tuf_out, NULL, e);
    if (rc == 0 && used != len) {
        hsdag_pacml_net_free(*out);
        *out = NULL;
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: %zu trailing bytes after the policy", what, len - used);
    }
    return rc;
}

int hsdag_pacml_policy_load(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                            const char *path, char *beta_out, int *tuf_out, hsdag_err *e)
{
    *out = NULL;
    char file[4096];
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        snprintf(file, sizeof file, "%s/policy.bin", path);
    else
        snprintf(file, sizeof file, "%s", path);
    char *data = NULL;
    size_t len = 0;
    int rc = hsdag_read_file(&data, &len, file, (size_t)64 << 20, e);
    if (rc < 0) return rc;
    rc = hsdag_pacml_policy_parse(out, jobs, n_jobs, data, len, file, beta_out, tuf_out, e);
    hsdag_free(data);
    return rc;
}

int hsdag_pacml_policy_find(char *path, size_t cap, char beta, int time_unit_fix, hsdag_err *e)
{
    char fname[64], what[96];
    snprintf(fname, sizeof fname, "policies/pacml/beta_%c%s.bin", beta, time_unit_fix ? "_tuf" : "");
    snprintf(what, sizeof what, "shipped PAC-ML policy for beta %c%s", beta,
             time_unit_fix ? " with --time-unit-fix" : "");
    return hsdag_data_find(path, cap, fname, what, e);
}

/* ---- trainer state ----
 * Version 2: a codec frame "HSPACPP\0" v2 (the training configuration field by field, RNG, counters, KL
 * coefficient, best evaluation, wall time, the best policy image), then the network's parameter image with
 * Adam state (hsdag_nn_params_save, its own frame). Version 1 (before the codec): magic, u32 1, the
 * configuration and RNG as raw host structs, the counters, the best image, then a parameter image; still
 * read (on the host that wrote it, as before). */

static void pp_put_config(hsdag_buf *b, const hsdag_pacml_train_config *c)
{
    hsdag_put_u64(b, c->seed);
    hsdag_put_i32(b, c->iterations);
    hsdag_put_i32(b, c->episodes_per_iter);
    hsdag_put_i32(b, c->epochs);
    hsdag_put_i32(b, c->minibatch);
    hsdag_put_f64(b, c->gamma);
    hsdag_put_f64(b, c->lambda);
    hsdag_put_f32(b, c->lr);
    hsdag_put_f32(b, c->grad_clip);
    hsdag_put_f32(b, c->kl_target);
    hsdag_put_f32(b, c->loss.clip);
    hsdag_put_f32(b, c->loss.vf_coeff);
    hsdag_put_f32(b, c->loss.ent_coeff);
    hsdag_put_f32(b, c->loss.kl_coeff);
    hsdag_put_i32(b, c->eval_episodes);
    hsdag_put_i32(b, c->net.fc_hidden);
    hsdag_put_i32(b, c->net.msg_half);
    hsdag_put_i32(b, c->net.hidden1);
    hsdag_put_i32(b, c->net.node_out);
    hsdag_put_i32(b, c->net.graph_out);
    hsdag_put_i32(b, (int32_t)c->net.mask_mode);
}

static void pp_get_config(hsdag_rd *r, hsdag_pacml_train_config *c)
{
    memset(c, 0, sizeof *c);
    c->seed = hsdag_get_u64(r);
    c->iterations = hsdag_get_i32(r);
    c->episodes_per_iter = hsdag_get_i32(r);
    c->epochs = hsdag_get_i32(r);
    c->minibatch = hsdag_get_i32(r);
    c->gamma = hsdag_get_f64(r);
    c->lambda = hsdag_get_f64(r);
    c->lr = hsdag_get_f32(r);
    c->grad_clip = hsdag_get_f32(r);
    c->kl_target = hsdag_get_f32(r);
    c->loss.clip = hsdag_get_f32(r);
    c->loss.vf_coeff = hsdag_get_f32(r);
    c->loss.ent_coeff = hsdag_get_f32(r);
    c->loss.kl_coeff = hsdag_get_f32(r);
    c->eval_episodes = hsdag_get_i32(r);
    c->net.fc_hidden = hsdag_get_i32(r);
    c->net.msg_half = hsdag_get_i32(r);
    c->net.hidden1 = hsdag_get_i32(r);
    c->net.node_out = hsdag_get_i32(r);
    c->net.graph_out = hsdag_get_i32(r);
    c->net.mask_mode = (hsdag_pacml_mask_mode)hsdag_get_i32(r);
}

const char *hsdag_pacml_train_config_diff(const hsdag_pacml_train_config *a,
                                          const hsdag_pacml_train_config *b)
{
#define PP_DIFF(f, name) \
    if (memcmp(&a->f, &b->f, sizeof a->f)) return name
    PP_DIFF(seed, "seed");
    PP_DIFF(iterations, "iterations");
    PP_DIFF(episodes_per_iter, "batch-episodes");
    PP_DIFF(epochs, "epochs");
    PP_DIFF(minibatch, "minibatch");
    PP_DIFF(gamma, "gamma");
    PP_DIFF(lambda, "lambda");
    PP_DIFF(lr, "lr");
    PP_DIFF(grad_clip, "grad-clip");
    PP_DIFF(kl_target, "kl-target");
    PP_DIFF(loss.clip, "clip");
    PP_DIFF(loss.vf_coeff, "vf");
    PP_DIFF(loss.ent_coeff, "entropy");
    PP_DIFF(loss.kl_coeff, "kl");
    PP_DIFF(eval_episodes, "eval-episodes");
    PP_DIFF(net.fc_hidden, "hidden");
    PP_DIFF(net.msg_half, "msg-half");
    PP_DIFF(net.hidden1, "hidden1");
    PP_DIFF(net.node_out, "node-out");
    PP_DIFF(net.graph_out, "graph-out");
    PP_DIFF(net.mask_mode, "mask");
#undef PP_DIFF
    return NULL;
}

int hsdag_pacml_trainer_save(const hsdag_pacml_trainer *t, hsdag_buf *out, hsdag_err *e)
{
    size_t at = hsdag_frame_begin(out, PP_STATE_MAGIC, PP_STATE_VERSION);
    pp_put_config(out, &t->c);
    for (int i = 0; i < 4; i++) hsdag_put_u64(out, t->rng.s[i]);
    hsdag_put_i32(out, t->iter);
    hsdag_put_i64(out, t->steps);
    hsdag_put_i64(out, t->episodes);
    hsdag_put_f32(out, t->kl_coeff);
    hsdag_put_f64(out, t->best_eval);
    hsdag_put_i32(out, t->best_iter);
    hsdag_put_f64(out, t->wall_prev + (hsdag_now() - t->t0));
    hsdag_put_u64(out, t->best_img.len);
    hsdag_put_bytes(out, t->best_img.data, t->best_img.len);
    if (hsdag_frame_end(out, at) < 0) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    int rc = hsdag_nn_params_save(hsdag_pacml_net_params(t->net), out, e);
    if (rc < 0) return rc;
    return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory") : 0;
}

/* What a trainer state holds besides the network. */
typedef struct pp_state {
    hsdag_pacml_train_config c;
    hsdag_rng rng;
    int32_t iter, best_iter;
    int64_t steps, episodes;
    float kl;
    double best, wall;
    const void *img; /* best policy image inside the buffer */
    uint64_t bl;
    size_t params_pos;
} pp_state;

static int pp_state_read(pp_state *s, const void *buf, size_t len, hsdag_err *e)
{
    hsdag_rd r;
    if (hsdag_frame_version(buf, len, PP_STATE_MAGIC) == 1) { /* raw host structs, no checksum */
        r = hsdag_rd_make(buf, len);
        r.pos = 12;
        hsdag_get_bytes(&r, &s->c, sizeof s->c);
        hsdag_get_bytes(&r, &s->rng, sizeof s->rng);
        hsdag_get_bytes(&r, &s->iter, 4);
        hsdag_get_bytes(&r, &s->steps, 8);
        hsdag_get_bytes(&r, &s->episodes, 8);
        hsdag_get_bytes(&r, &s->kl, 4);
        hsdag_get_bytes(&r, &s->best, 8);
        hsdag_get_bytes(&r, &s->best_iter, 4);
        hsdag_get_bytes(&r, &s->wall, 8);
        hsdag_get_bytes(&r, &s->bl, 8);
    } else {
        uint32_t ver = 0;
        int rc =
            hsdag_frame_open(&r, &ver, &s->params_pos, buf, len, PP_STATE_MAGIC, "trainer checkpoint", e);
        if (rc < 0) return rc;
        if (ver != PP_STATE_VERSION)
            return hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: unsupported version %u", ver);
        pp_get_config(&r, &s->c);
        for (int i = 0; i < 4; i++) s->rng.s[i] = hsdag_get_u64(&r);
        s->iter = hsdag_get_i32(&r);
        s->steps = hsdag_get_i64(&r);
        s->episodes = hsdag_get_i64(&r);
        s->kl = hsdag_get_f32(&r);
        s->best = hsdag_get_f64(&r);
        s->best_iter = hsdag_get_i32(&r);
        s->wall = hsdag_get_f64(&r);
        s->bl = hsdag_get_u64(&r);
    }
    if (r.bad || s->bl > hsdag_rd_left(&r))
        return hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: truncated or unsupported version");
    s->img = hsdag_get_view(&r, (size_t)s->bl);
    if (s->params_pos == 0) {
        s->params_pos = r.pos; /* version 1: the parameter image follows */
    } else if (hsdag_rd_left(&r)) {
        return hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: %zu stray bytes", hsdag_rd_left(&r));
    }
    return 0;
}

/* Keeps the best policy image of a restored state, rewritten in the current version if it is older. */
static int pp_keep_best(hsdag_pacml_trainer *t, const void *img, size_t len, hsdag_err *e)
{
    if (hsdag_frame_version(img, len, PP_POLICY_MAGIC) == PP_POLICY_VERSION) {
        hsdag_buf_append(&t->best_img, (const char *)img, len);
        return t->best_img.oom ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory") : 0;
    }
    hsdag_pacml_net *n = NULL;
    char beta = 0;
    int tuf = 0;
    float vs = 0;
    size_t used = 0;
    int rc = pp_policy_parse(&n, t->env.jobs, t->env.n_jobs, img, len, "trainer checkpoint: best policy",
                             &used, &beta, &tuf, &vs, e);
    if (rc == 0 && used != len)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: best policy: trailing bytes");
    if (rc == 0) rc = hsdag_pacml_policy_save(n, beta, tuf, vs, &t->best_img, e);
    hsdag_pacml_net_free(n);
    return rc;
}

int hsdag_pacml_trainer_restore(hsdag_pacml_trainer **out, const hsdag_pacml_env *env, const void *buf,
                                size_t len, int32_t iterations, hsdag_err *e)
{
    *out = NULL;
    if (len < 8 || memcmp(buf, PP_STATE_MAGIC, 8))
        return hsdag_err_set(e, HSDAG_EPARSE, "not a PAC-ML trainer checkpoint (bad magic)");
    pp_state s;
    memset(&s, 0, sizeof s);
    int rc = pp_state_read(&s, buf, len, e);
    if (rc < 0) return rc;
    if (iterations >= 0) s.c.iterations = iterations;
    hsdag_pacml_trainer *t = NULL;
    rc = hsdag_pacml_trainer_create(&t, env, &s.c, e);
    if (rc < 0) return rc == HSDAG_EINVAL ? HSDAG_EPARSE : rc;
    size_t used = 0;
    rc = hsdag_nn_params_load(hsdag_pacml_net_params(t->net), (const unsigned char *)buf + s.params_pos,
                              len - s.params_pos, &used, e);
    if (rc == 0 && s.params_pos + used != len)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: trailing bytes");
    if (rc == 0 && s.bl) rc = pp_keep_best(t, s.img, (size_t)s.bl, e);
    if (rc < 0) {
        hsdag_pacml_trainer_free(t);
        return rc;
    }
    hsdag_pacml_net_touch(t->net);
    t->rng = s.rng;
    t->iter = s.iter;
    t->steps = s.steps;
    t->episodes = s.episodes;
    t->kl_coeff = s.kl;
    t->best_eval = s.best;
    t->best_iter = s.best_iter;
    t->wall_prev = s.wall;
    *out = t;
    return 0;
}
