/* pacml_ppo.c - PPO for the PAC-ML policy: rollouts of whole episodes through the hsdag_pacml_env
 *   callbacks, GAE, clipped-objective minibatch epochs with Adam and gradient clipping, adaptive KL, greedy
 *   evaluation, checkpoints and policy files.
 * Not here: the network and its loss gradient (pacml_gnn.c); the RAMP environment and its adapter
 *   (src/cluster/); printing and CLI options (tools/).
 * Entry points: hsdag_pacml_gae, hsdag_pacml_episode, hsdag_pacml_trainer_*, hsdag_pacml_policy_*.
 */
#include "hsdag/pacml.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HSDAG_SHARE_DIR
#define HSDAG_SHARE_DIR "/usr/local/share/hsdag"
#endif

#define PP_NA HSDAG_PACML_N_ACTIONS
#define PP_EVAL_SEED 1799 /* the reference's test seed; evaluation episodes use 1799, 1800, ... */

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
    hsdag_nn_set_threads(1);
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

int hsdag_pacml_trainer_iterate(hsdag_pacml_trainer *t, hsdag_pacml_iter_stats *st, hsdag_err *e)
{
    const hsdag_pacml_train_config *c = &t->c;
    hsdag_pacml_iter_stats z = {0};
    *st = z;
    int32_t N = 0;
    double vscale = 1.0 / (1.0 - c->gamma), rscale = 1.0 - c->gamma;
    /* ---- collect whole episodes with the current (sampling) policy ---- */
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
            if (hsdag_nn_categorical_sample_logits(&a, NULL, s->lp_old, o->mask, PP_NA, &t->rng) < 0) a = 0;
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
    t->steps += N;
    /* standardise advantages over the batch (RLlib PPO does the same) */
    double mu = 0, sd = 0;
    for (int32_t i = 0; i < N; i++) mu += t->s[i].adv;
    mu /= N;
    for (int32_t i = 0; i < N; i++) sd += (t->s[i].adv - mu) * (t->s[i].adv - mu);
    sd = sqrt(sd / N) + 1e-8;
    for (int32_t i = 0; i < N; i++) t->s[i].adv = (float)((t->s[i].adv - mu) / sd);
    /* ---- epochs of shuffled minibatches ---- */
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
    t->iter++;
    /* ---- greedy evaluation ---- */
    st->eval_blocking = NAN;
    if (c->eval_episodes > 0) {
        double sum = 0;
        for (int32_t k = 0; k < c->eval_episodes; k++) {
            int rc = hsdag_pacml_episode(&t->env, t->net, 1, PP_EVAL_SEED + (uint64_t)k, e);
            if (rc < 0) return rc;
            double blocking = 0, ret_sum = 0;
            t->env.episode_end(t->env.ctx, &blocking, &ret_sum);
            sum += blocking;
        }
        st->eval_blocking = sum / c->eval_episodes;
        if (st->eval_blocking < t->best_eval) {
            t->best_eval = st->eval_blocking;
            t->best_iter = t->iter;
            t->best_img.len = 0;
            int rc = hsdag_pacml_policy_save(t->net, t->env.beta, t->env.time_unit_fix, (float)vscale,
                                             &t->best_img, e);
            if (rc < 0) return rc;
        }
    }
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

/* ---- little-endian serialisation helpers ---- */
static void pp_put(hsdag_buf *b, const void *p, size_t n)
{
    hsdag_buf_append(b, (const char *)p, n); /* the hosts we build for are little-endian (asserted below) */
}
typedef struct pp_rd {
    const unsigned char *p;
    size_t len, pos;
} pp_rd;
static int pp_get(pp_rd *r, void *out, size_t n)
{
    if (r->len - r->pos < n) return -1;
    memcpy(out, r->p + r->pos, n);
    r->pos += n;
    return 0;
}
static int pp_little_endian(void)
{
    uint16_t x = 1;
    unsigned char c;
    memcpy(&c, &x, 1);
    return c == 1;
}

#define PP_POLICY_MAGIC "HSPACML"
#define PP_STATE_MAGIC "HSPACPP"

static uint64_t pp_fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int hsdag_pacml_policy_save(const hsdag_pacml_net *n, char beta, int time_unit_fix, float value_scale,
                            hsdag_buf *out, hsdag_err *e)
{
    HSDAG_ASSERT(pp_little_endian());
    const hsdag_pacml_net_config *c = hsdag_pacml_net_config_get(n);
    hsdag_nn_params *p = hsdag_pacml_net_params((hsdag_pacml_net *)n);
    size_t start = out->len;
    uint32_t ver = 1, nt = (uint32_t)hsdag_nn_params_n_tensors(p);
    uint64_t cnt = hsdag_nn_params_count(p);
    unsigned char hdr[4] = {(unsigned char)beta, (unsigned char)(time_unit_fix ? 1 : 0), 0, 0};
    int32_t cf[6] = {c->fc_hidden, c->msg_half, c->hidden1, c->node_out, c->graph_out, c->mask_mode};
    pp_put(out, PP_POLICY_MAGIC, 8);
    pp_put(out, &ver, 4);
    pp_put(out, hdr, 4);
    pp_put(out, cf, sizeof cf);
    pp_put(out, &value_scale, 4);
    pp_put(out, &nt, 4);
    pp_put(out, &cnt, 8);
    for (uint32_t t = 0; t < nt; t++) { /* the tensor table, checked on load */
        const char *name = hsdag_nn_params_name(p, (int32_t)t);
        uint32_t len = (uint32_t)strlen(name);
        int32_t rc2[2] = {hsdag_nn_params_rows(p, (int32_t)t), hsdag_nn_params_cols(p, (int32_t)t)};
        pp_put(out, rc2, 8);
        pp_put(out, &len, 4);
        pp_put(out, name, len);
    }
    pp_put(out, hsdag_nn_params_value(p, -1), (size_t)cnt * sizeof(float)); /* values only: no Adam state */
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    uint64_t h = pp_fnv((const unsigned char *)out->data + start, out->len - start);
    pp_put(out, &h, 8);
    return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory") : 0;
}

/* Parses a policy image; *used gets the bytes consumed. */
static int pp_policy_parse(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                           const void *buf, size_t len, const char *what, size_t *used, char *beta_out,
                           int *tuf_out, hsdag_err *e)
{
    pp_rd r = {buf, len, 0};
    char magic[8];
    uint32_t ver;
    unsigned char hdr[4];
    int32_t cf[6];
    float vs;
    if (pp_get(&r, magic, 8) < 0 || memcmp(magic, PP_POLICY_MAGIC, 8))
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: not a PAC-ML policy file (bad magic)", what);
    if (pp_get(&r, &ver, 4) < 0 || pp_get(&r, hdr, 4) < 0 || pp_get(&r, cf, sizeof cf) < 0 ||
        pp_get(&r, &vs, 4) < 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated header", what);
    if (ver != 1) return hsdag_err_set(e, HSDAG_EPARSE, "%s: unsupported version %u", what, ver);
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
    uint32_t nt = 0;
    uint64_t cnt = 0;
    rc = 0;
    if (pp_get(&r, &nt, 4) < 0 || pp_get(&r, &cnt, 8) < 0)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated tensor table", what);
    else if (nt != (uint32_t)hsdag_nn_params_n_tensors(p) || cnt != hsdag_nn_params_count(p))
        rc =
            hsdag_err_set(e, HSDAG_EPARSE, "%s: %u tensors / %llu floats, the network has %d / %zu", what, nt,
                          (unsigned long long)cnt, hsdag_nn_params_n_tensors(p), hsdag_nn_params_count(p));
    for (uint32_t t = 0; rc == 0 && t < nt; t++) {
        int32_t rc2[2];
        uint32_t nlen;
        char name[64];
        const char *want = hsdag_nn_params_name(p, (int32_t)t);
        if (pp_get(&r, rc2, 8) < 0 || pp_get(&r, &nlen, 4) < 0 || nlen >= sizeof name ||
            pp_get(&r, name, nlen) < 0) {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated tensor table", what);
            break;
        }
        name[nlen] = 0;
        if (strcmp(name, want) || rc2[0] != hsdag_nn_params_rows(p, (int32_t)t) ||
            rc2[1] != hsdag_nn_params_cols(p, (int32_t)t))
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: tensor %u is '%s' (%d x %d), expected '%s'", what, t,
                               name, rc2[0], rc2[1], want);
    }
    size_t vbytes = (size_t)cnt * sizeof(float);
    if (rc == 0 && r.len - r.pos < vbytes + 8)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated values", what);
    if (rc == 0) {
        uint64_t h, want = pp_fnv(r.p, r.pos + vbytes);
        memcpy(&h, r.p + r.pos + vbytes, 8);
        if (h != want) rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: checksum mismatch (corrupt file)", what);
    }
    if (rc < 0) {
        hsdag_pacml_net_free(n);
        return rc;
    }
    float *val = hsdag_nn_params_value(p, -1);
    memcpy(val, r.p + r.pos, vbytes);
    for (size_t i = 0; i < cnt; i++)
        if (!isfinite(val[i])) {
            hsdag_pacml_net_free(n);
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: non-finite parameter value", what);
        }
    size_t u = vbytes + 8;
    hsdag_pacml_net_touch(n);
    if (used) *used = r.pos + u;
    if (beta_out) *beta_out = (char)hdr[0];
    if (tuf_out) *tuf_out = hdr[1];
    *out = n;
    return 0;
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
    int rc = hsdag_read_file(file, &data, &len, (size_t)64 << 20, e);
    if (rc < 0) return rc;
    size_t used = 0;
    rc = pp_policy_parse(out, jobs, n_jobs, data, len, file, &used, beta_out, tuf_out, e);
    if (rc == 0 && used != len) {
        hsdag_pacml_net_free(*out);
        *out = NULL;
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: %zu trailing bytes after the policy", file, len - used);
    }
    hsdag_free(data);
    return rc;
}

int hsdag_pacml_policy_find(char beta, int time_unit_fix, char *path, size_t cap, hsdag_err *e)
{
    char fname[64], tried[1024] = "";
    snprintf(fname, sizeof fname, "policies/pacml/beta_%c%s.bin", beta, time_unit_fix ? "_tuf" : "");
    char exe[2048] = "";
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *sl = strrchr(exe, '/');
        if (sl) *sl = 0;
    } else {
        exe[0] = 0;
    }
    const char *env = getenv("HSDAG_DATA");
    char cand[5][4096];
    int nc = 0;
    if (env && *env) snprintf(cand[nc++], sizeof cand[0], "%s/%s", env, fname);
    snprintf(cand[nc++], sizeof cand[0], "./%s", fname);
    if (exe[0]) {
        snprintf(cand[nc++], sizeof cand[0], "%s/../%s", exe, fname);
        snprintf(cand[nc++], sizeof cand[0], "%s/../share/hsdag/%s", exe, fname);
    }
    snprintf(cand[nc++], sizeof cand[0], "%s/%s", HSDAG_SHARE_DIR, fname);
    for (int i = 0; i < nc; i++) {
        if (access(cand[i], R_OK) == 0) {
            if (strlen(cand[i]) >= cap) return hsdag_err_set(e, HSDAG_EINVAL, "pacml: policy path too long");
            strcpy(path, cand[i]);
            return 0;
        }
        size_t tl = strlen(tried);
        snprintf(tried + tl, sizeof tried - tl, "%s%s", i ? ", " : "", cand[i]);
    }
    return hsdag_err_set(e, HSDAG_EIO, "no shipped PAC-ML policy for beta %c%s (tried %s; set HSDAG_DATA)",
                         beta, time_unit_fix ? " with --time-unit-fix" : "", tried);
}

/* ---- trainer state ---- */

int hsdag_pacml_trainer_save(const hsdag_pacml_trainer *t, hsdag_buf *out, hsdag_err *e)
{
    HSDAG_ASSERT(pp_little_endian());
    uint32_t ver = 1;
    const hsdag_pacml_train_config *c = &t->c;
    pp_put(out, PP_STATE_MAGIC, 8);
    pp_put(out, &ver, 4);
    pp_put(out, c, sizeof *c); /* plain struct of numbers: same build reads it back */
    pp_put(out, &t->rng, sizeof t->rng);
    pp_put(out, &t->iter, sizeof t->iter);
    pp_put(out, &t->steps, sizeof t->steps);
    pp_put(out, &t->episodes, sizeof t->episodes);
    pp_put(out, &t->kl_coeff, sizeof t->kl_coeff);
    pp_put(out, &t->best_eval, sizeof t->best_eval);
    pp_put(out, &t->best_iter, sizeof t->best_iter);
    double wall = t->wall_prev + (hsdag_now() - t->t0);
    pp_put(out, &wall, sizeof wall);
    uint64_t bl = t->best_img.len;
    pp_put(out, &bl, 8);
    if (bl) pp_put(out, t->best_img.data, bl);
    int rc = hsdag_nn_params_save(hsdag_pacml_net_params(t->net), out, e);
    if (rc < 0) return rc;
    return out->oom ? hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory") : 0;
}

int hsdag_pacml_trainer_restore(hsdag_pacml_trainer **out, const hsdag_pacml_env *env, const void *buf,
                                size_t len, int32_t iterations, hsdag_err *e)
{
    *out = NULL;
    pp_rd r = {buf, len, 0};
    char magic[8];
    uint32_t ver;
    hsdag_pacml_train_config c;
    hsdag_rng rng;
    int32_t iter, best_iter;
    int64_t steps, episodes;
    float kl;
    double best, wall;
    uint64_t bl;
    if (pp_get(&r, magic, 8) < 0 || memcmp(magic, PP_STATE_MAGIC, 8))
        return hsdag_err_set(e, HSDAG_EPARSE, "not a PAC-ML trainer checkpoint (bad magic)");
    if (pp_get(&r, &ver, 4) < 0 || ver != 1 || pp_get(&r, &c, sizeof c) < 0 ||
        pp_get(&r, &rng, sizeof rng) < 0 || pp_get(&r, &iter, 4) < 0 || pp_get(&r, &steps, 8) < 0 ||
        pp_get(&r, &episodes, 8) < 0 || pp_get(&r, &kl, 4) < 0 || pp_get(&r, &best, 8) < 0 ||
        pp_get(&r, &best_iter, 4) < 0 || pp_get(&r, &wall, 8) < 0 || pp_get(&r, &bl, 8) < 0 ||
        bl > r.len - r.pos)
        return hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: truncated or unsupported version");
    if (iterations >= 0) c.iterations = iterations;
    hsdag_pacml_trainer *t = NULL;
    int rc = hsdag_pacml_trainer_create(&t, env, &c, e);
    if (rc < 0) return rc == HSDAG_EINVAL ? HSDAG_EPARSE : rc;
    const unsigned char *img = r.p + r.pos;
    r.pos += bl;
    size_t used = 0;
    rc = hsdag_nn_params_load(hsdag_pacml_net_params(t->net), r.p + r.pos, r.len - r.pos, &used, e);
    if (rc == 0 && r.pos + used != len)
        rc = hsdag_err_set(e, HSDAG_EPARSE, "trainer checkpoint: trailing bytes");
    if (rc == 0 && bl) {
        hsdag_buf_append(&t->best_img, (const char *)img, bl);
        if (t->best_img.oom) rc = hsdag_err_set(e, HSDAG_ENOMEM, "pacml: out of memory");
    }
    if (rc < 0) {
        hsdag_pacml_trainer_free(t);
        return rc;
    }
    hsdag_pacml_net_touch(t->net);
    t->rng = rng;
    t->iter = iter;
    t->steps = steps;
    t->episodes = episodes;
    t->kl_coeff = kl;
    t->best_eval = best;
    t->best_iter = best_iter;
    t->wall_prev = wall;
    *out = t;
    return 0;
}
