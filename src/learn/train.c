/* train.c - the HSDAG learner: REINFORCE episodes over the policy network, state updates between steps,
 * best-placement tracking, learning curve and bit-exact checkpoints.
 * Not here: the network (model.c), rewards from the simulator or a command (glue.c, measure in the CLI).
 * Entry points: hsdag_learn_config_default, hsdag_learn_create/free/train/save/load/best/curve/... */
#include "hsdag/codec.h"
#include "model.h"

#include <math.h>
#include <string.h>

hsdag_learn_config hsdag_learn_config_default(void)
{
    return (hsdag_learn_config){
        .episodes = 25,
        .steps = 20,
        .seed = 42,
        .lr = 1e-3f,
        .gamma = 0.95,
        .hidden = 128,
        .embed = 16,
        .dropout = 0.2f,
        .gnn = HSDAG_NN_GNN_GCN,
        .features = HSDAG_FEAT_ALL,
        .no_coarsen = 0,
        .levels = 1,
        .min_clusters = 0,
        .baseline = 0,
        .baseline_decay = 0.9,
        .entropy = 0.0,
        .infeasible_penalty = 10.0,
    };
}

struct hsdag_learn {
    hsdag_learn_config cfg;
    const hsdag_graph *g;
    lmodel *M;
    int32_t n_nodes, n_groups, K, H;
    hsdag_rng rng;
    int32_t episode; /* episodes done */
    int64_t evals;
    double baseline;
    int baseline_set;
    int32_t *best; /* [n_nodes] */
    double best_lat;
    int32_t best_episode;
    hsdag_learn_row *curve;
    size_t curve_cap;
    int32_t n_curve;
    /* scratch */
    float *D;              /* (n_groups, H) state delta */
    float *g_logp, *g_ent; /* gradient accumulators, param-block sized */
    int32_t *gdev, *odev;  /* group devices, op devices */
    float *dlogp;          /* (n_groups, K) */
    float *ent;            /* (n_groups) */
};

void hsdag_learn_free(hsdag_learn *L)
{
    if (!L) return;
    lmodel_free(L->M);
    hsdag_free(L->best);
    hsdag_free(L->curve);
    hsdag_free(L->D);
    hsdag_free(L->g_logp);
    hsdag_free(L->g_ent);
    hsdag_free(L->gdev);
    hsdag_free(L->odev);
    hsdag_free(L->dlogp);
    hsdag_free(L->ent);
    hsdag_free(L);
}

static int cfg_check(const hsdag_learn_config *c, int32_t K, hsdag_err *e)
{
    if (c->episodes < 0 || c->episodes > 10000000)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: episodes %d out of range", (int)c->episodes);
    if (c->steps < 1 || c->steps > 100000)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: steps %d out of range", (int)c->steps);
    if (c->hidden < 1 || c->hidden > 4096 || c->embed < 1 || c->embed > 4096)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: hidden/embed width out of range");
    if (!(c->dropout >= 0 && c->dropout < 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: dropout must be in [0, 1)");
    if (!(c->gamma >= 0 && c->gamma <= 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: gamma must be in [0, 1]");
    if (!(c->lr > 0) || !(c->infeasible_penalty >= 1) || !(c->entropy >= 0) ||
        !(c->baseline_decay >= 0 && c->baseline_decay < 1))
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "hsdag: lr, entropy, baseline decay or infeasible penalty out of range");
    if (c->levels < 1 || c->levels > 16)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: levels must be in 1..16");
    if (c->min_clusters < 0) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: min-clusters must be >= 0");
    if (K < 1 || K > 64) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: %d devices (need 1..64)", (int)K);
    return 0;
}

int hsdag_learn_create(hsdag_learn **out, const hsdag_graph *g, int32_t n_devices,
                       const hsdag_learn_config *cfg, hsdag_err *e)
{
    *out = NULL;
    int rc = cfg_check(cfg, n_devices, e);
    if (rc < 0) return rc;
    if (g->n_nodes < 1) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: the graph has no nodes");
    hsdag_learn *L = hsdag_calloc(1, sizeof *L);
    if (!L) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    L->cfg = *cfg;
    L->g = g;
    L->K = n_devices;
    L->H = cfg->hidden;
    L->n_nodes = g->n_nodes;
    hsdag_rng_seed(&L->rng, cfg->seed);
    if ((rc = lmodel_create(&L->M, g, n_devices, cfg, &L->rng, e)) < 0) goto fail;
    L->n_groups = lmodel_coarse(L->M)->n_groups;
    size_t np = hsdag_nn_params_count(lmodel_params(L->M));
    L->best = hsdag_malloc(sizeof(int32_t) * (size_t)L->n_nodes);
    L->D = hsdag_malloc(sizeof(float) * (size_t)L->n_groups * (size_t)L->H);
    L->g_logp = hsdag_malloc(sizeof(float) * np);
    L->g_ent = hsdag_malloc(sizeof(float) * np);
    L->gdev = hsdag_malloc(sizeof(int32_t) * (size_t)L->n_groups);
    L->odev = hsdag_malloc(sizeof(int32_t) * (size_t)L->n_nodes);
    L->dlogp = hsdag_malloc(sizeof(float) * (size_t)L->n_groups * (size_t)L->K);
    L->ent = hsdag_malloc(sizeof(float) * (size_t)L->n_groups);
    if (!L->best || !L->D || !L->g_logp || !L->g_ent || !L->gdev || !L->odev || !L->dlogp || !L->ent) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
        goto fail;
    }
    L->best_lat = INFINITY;
    L->best_episode = -1;
    *out = L;
    return 0;
fail:
    hsdag_learn_free(L);
    return rc;
}

void hsdag_learn_best(const hsdag_learn *L, const int32_t **device, double *latency_s, int32_t *episode)
{
    if (device) *device = L->best_episode >= 0 || isfinite(L->best_lat) ? L->best : NULL;
    if (latency_s) *latency_s = L->best_lat;
    if (episode) *episode = L->best_episode;
}

void hsdag_learn_offer(hsdag_learn *L, const int32_t *device, double latency_s)
{
    if (!(latency_s < L->best_lat)) return;
    L->best_lat = latency_s;
    memcpy(L->best, device, sizeof(int32_t) * (size_t)L->n_nodes);
}

const hsdag_learn_row *hsdag_learn_curve(const hsdag_learn *L, int32_t *n_rows)
{
    *n_rows = L->n_curve;
    return L->curve;
}
int64_t hsdag_learn_evals(const hsdag_learn *L)
{
    return L->evals;
}
int32_t hsdag_learn_groups(const hsdag_learn *L)
{
    return L->n_groups;
}
size_t hsdag_learn_param_count(const hsdag_learn *L)
{
    return hsdag_nn_params_count(lmodel_params(L->M));
}
hsdag_nn_params *hsdag_learn_params(hsdag_learn *L)
{
    return lmodel_params(L->M);
}

/* ---- one episode ---- */

/* y += a x, four independent lanes per iteration (GCC -O2 leaves the plain loop scalar); elementwise, so the
 * result is the same as the plain loop's. */
static void axpy_(float *restrict y, float a, const float *restrict x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        y[i] += a * x[i];
        y[i + 1] += a * x[i + 1];
        y[i + 2] += a * x[i + 2];
        y[i + 3] += a * x[i + 3];
    }
    for (; i < n; i++) y[i] += a * x[i];
}

/* Adds the step's log-prob gradient (and entropy gradient) into the accumulators. */
/* direct: the episode's log-prob gradient accumulates straight into the param grad block (weight 1, no
 * entropy term: the kernels accumulate, so no per-step zeroing and copying of the whole block). */
static int step_grads(hsdag_learn *L, lstep *st, const int32_t *act, float w_logp, int want_ent, int direct,
                      hsdag_err *e)
{
    hsdag_nn_params *P = lmodel_params(L->M);
    size_t np = hsdag_nn_params_count(P);
    int32_t C = st->n_clusters, K = L->K;
    float *G = hsdag_nn_params_grad(P, -1);
    if (direct) {
        memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
        for (int32_t c = 0; c < C; c++) L->dlogp[(size_t)c * K + act[c]] = 1.0f;
        return lmodel_step_backward(L->M, st, L->dlogp, e);
    }
    hsdag_nn_params_zero_grad(P);
    memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
    for (int32_t c = 0; c < C; c++) L->dlogp[(size_t)c * K + act[c]] = 1.0f;
    int rc = lmodel_step_backward(L->M, st, L->dlogp, e);
    if (rc < 0) return rc;
    axpy_(L->g_logp, w_logp, G, np);
    if (!want_ent) return 0;
    hsdag_nn_params_zero_grad(P);
    memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
    for (int32_t c = 0; c < C; c++) L->ent[c] = 1.0f / (float)C; /* d(mean entropy) / dH_c */
    hsdag_nn_entropy_backward(L->dlogp, L->ent, st->logp, C, K);
    if ((rc = lmodel_step_backward(L->M, st, L->dlogp, e)) < 0) return rc;
    axpy_(L->g_ent, 1.0f, G, np);
    return 0;
}

static int curve_push(hsdag_learn *L, const hsdag_learn_row *row)
{
    if (hsdag_grow((void **)&L->curve, &L->curve_cap, (size_t)L->n_curve + 1, sizeof *row) < 0)
        return HSDAG_ENOMEM;
    L->curve[L->n_curve++] = *row;
    return 0;
}

static int run_episode(hsdag_learn *L, hsdag_learn_eval_fn eval, void *ctx, hsdag_learn_row *row,
                       hsdag_err *e)
{
    const hsdag_learn_config *cfg = &L->cfg;
    hsdag_nn_params *P = lmodel_params(L->M);
    size_t np = hsdag_nn_params_count(P);
    int32_t T = cfg->steps, K = L->K, H = L->H;
    const hsdag_coarse *co = lmodel_coarse(L->M);
    memset(L->D, 0, sizeof(float) * (size_t)L->n_groups * H);
    /* without a baseline and an entropy term every step has weight 1: gradients accumulate in place */
    int direct = !cfg->baseline && !(cfg->entropy > 0);
    if (direct)
        hsdag_nn_params_zero_grad(P);
    else {
        memset(L->g_logp, 0, sizeof(float) * np);
        memset(L->g_ent, 0, sizeof(float) * np);
    }
    double R = 0, lat_sum = 0, ent_sum = 0;
    int rc = 0;
    int32_t *a = hsdag_malloc(sizeof(int32_t) * (size_t)L->n_groups);
    if (!a) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    lmodel_params_frozen(L->M, 1); /* the parameters change only in the Adam step after the loop */
    for (int32_t t = 0; t < T; t++) {
        lstep st;
        if ((rc = lmodel_step_forward(L->M, &st, L->D, 1, &L->rng, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        int32_t C = st.n_clusters;
        for (int32_t c = 0; c < C; c++) {
            rc = hsdag_nn_categorical_sample_logits(&a[c], NULL, st.logp + (size_t)c * K, NULL, K, &L->rng);
            if (rc < 0) {
                rc = hsdag_err_set(e, HSDAG_ESOLVER, "hsdag: policy has no valid device (NaN parameters?)");
                break;
            }
        }
        if (rc < 0) {
            lmodel_step_end(&st);
            break;
        }
        hsdag_nn_entropy_forward(L->ent, st.logp, C, K);
        double hm = 0;
        for (int32_t c = 0; c < C; c++) hm += L->ent[c];
        ent_sum += hm / C;
        for (int32_t v = 0; v < L->n_groups; v++) L->gdev[v] = a[st.cluster[v]];
        hsdag_coarsen_expand(co, L->odev, L->gdev);
        double lat = 0;
        int feas = 0;
        if ((rc = eval(ctx, L->odev, &lat, &feas, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        L->evals++;
        if (!(lat > 0) || !isfinite(lat)) {
            rc = hsdag_err_set(e, HSDAG_EEXTERNAL, "hsdag: the latency oracle returned %g s", lat);
            lmodel_step_end(&st);
            break;
        }
        lat_sum += lat;
        if (feas && lat < L->best_lat) {
            L->best_lat = lat;
            L->best_episode = L->episode;
            memcpy(L->best, L->odev, sizeof(int32_t) * (size_t)L->n_nodes);
        }
        /* reward 1 / latency in ms; infeasible placements are penalised */
        double r = 1.0 / (lat * 1e3 * (feas ? 1.0 : cfg->infeasible_penalty));
        R = cfg->gamma * R + r; /* after T steps: sum_i gamma^i r_{T-1-i} */
        /* paper: every step's log-prob is weighted by the episode return R (applied at the end);
         * option: per-step advantage r_t - b with a moving-average baseline b of step rewards */
        float w = 1.0f;
        if (cfg->baseline) {
            if (!L->baseline_set) {
                L->baseline = r;
                L->baseline_set = 1;
            }
            w = (float)(r - L->baseline);
            L->baseline = cfg->baseline_decay * L->baseline + (1 - cfg->baseline_decay) * r;
        }
        rc = step_grads(L, &st, a, w, cfg->entropy > 0, direct, e);
        if (rc < 0) {
            lmodel_step_end(&st);
            break;
        }
        /* state update x_v += h_cluster(v) (constant for later steps) */
        for (int32_t v = 0; v < L->n_groups; v++) {
            const float *h = st.hc + (size_t)st.cluster[v] * H;
            float *d = L->D + (size_t)v * H;
            for (int32_t j = 0; j < H; j++) d[j] += h[j];
        }
        row->clusters = C;
        lmodel_step_end(&st);
    }
    lmodel_params_frozen(L->M, 0);
    hsdag_free(a);
    if (rc < 0) return rc;
    /* loss = -R sum_t log pi_t (or -sum_t (r_t - b) log pi_t) - entropy * sum_t mean H_t; one Adam step */
    double adv = cfg->baseline ? 1.0 : R;
    float *G = hsdag_nn_params_grad(P, -1);
    float ca = (float)-adv, ce = (float)-cfg->entropy;
    if (direct) /* = ca * g_logp + ce * 0 exactly */
        for (size_t i = 0; i < np; i++) G[i] = ca * G[i];
    else
        for (size_t i = 0; i < np; i++) G[i] = ca * L->g_logp[i] + ce * L->g_ent[i];
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = cfg->lr;
    hsdag_nn_adam_step(P, &ac, NULL);
    row->episode = L->episode;
    row->mean_latency_s = lat_sum / T;
    row->best_latency_s = L->best_lat;
    row->entropy = ent_sum / T;
    row->reward = R;
    return 0;
}

int hsdag_learn_train(hsdag_learn *L, hsdag_learn_eval_fn eval, void *eval_ctx,
                      hsdag_learn_progress_fn progress, void *progress_ctx, hsdag_err *e)
{
    while (L->episode < L->cfg.episodes) {
        hsdag_learn_row row = {0};
        int rc = run_episode(L, eval, eval_ctx, &row, e);
        if (rc < 0) return rc;
        if (curve_push(L, &row) < 0) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
        L->episode++;
        if (progress && progress(progress_ctx, &row, L->cfg.episodes)) return 1;
    }
    return 0;
}

/* ---- checkpoints ----
 * Version 2: a codec frame "HSDAGLRN" v2 (fingerprint, counters, RNG, baseline, best placement, curve),
 * then the parameter image (hsdag_nn_params_save, its own frame). Version 1 (before the codec): magic,
 * u64 1, the same fields as u64 / f64 words, u64 FNV-1a 64 with the one-digit-short basis
 * (HSDAG_FNV64_BASIS_V1) of everything before it, then a version-1 parameter image; still read. */

#define CK_MAGIC "HSDAGLRN"
#define CK_VERSION 2u

/* What must match for a checkpoint to continue bit-identically. */
static void fingerprint(const hsdag_learn *L, uint64_t fp[12])
{
    const hsdag_learn_config *c = &L->cfg;
    double lr = c->lr, dr = c->dropout;
    uint64_t u;
    fp[0] = (uint64_t)L->n_nodes;
    fp[1] = (uint64_t)L->n_groups;
    fp[2] = (uint64_t)L->K;
    fp[3] = c->seed;
    fp[4] = (uint64_t)c->steps;
    memcpy(&u, &lr, 8);
    fp[5] = u ^ ((uint64_t)c->hidden << 1) ^ ((uint64_t)c->embed << 17);
    memcpy(&u, &dr, 8);
    fp[6] = u ^ ((uint64_t)c->gnn << 3) ^ ((uint64_t)c->features << 7) ^ ((uint64_t)c->no_coarsen << 20);
    fp[7] = (uint64_t)c->levels | ((uint64_t)(uint32_t)c->min_clusters << 32);
    fp[8] = (uint64_t)c->baseline;
    memcpy(&fp[9], &c->entropy, 8);
    memcpy(&fp[10], &c->gamma, 8);
    memcpy(&fp[11], &c->infeasible_penalty, 8);
}

static const char *fp_names[12] = {"nodes",
                                   "groups",
                                   "devices",
                                   "seed",
                                   "steps",
                                   "lr/hidden/embed",
                                   "dropout/gnn/features/coarsening",
                                   "levels/min-clusters",
                                   "baseline",
                                   "entropy",
                                   "gamma",
                                   "infeasible penalty"};

int hsdag_learn_save(const hsdag_learn *L, hsdag_buf *out, hsdag_err *e)
{
    /* reserve the whole checkpoint once (header, placement, curve, params with Adam state, tensor names)
     * instead of growing through a doubling series of reallocations and copies */
    size_t need = out->len + 8192 + (size_t)L->n_nodes * 4 + (size_t)L->n_curve * 40 +
                  hsdag_nn_params_count(lmodel_params(L->M)) * 12;
    if (!out->oom && hsdag_grow((void **)&out->data, &out->cap, need, 1) < 0) out->oom = 1;
    uint64_t fp[12];
    fingerprint(L, fp);
    size_t at = hsdag_frame_begin(out, CK_MAGIC, CK_VERSION);
    for (int i = 0; i < 12; i++) hsdag_put_u64(out, fp[i]);
    hsdag_put_i32(out, L->episode);
    hsdag_put_i64(out, L->evals);
    for (int i = 0; i < 4; i++) hsdag_put_u64(out, L->rng.s[i]);
    hsdag_put_f64(out, L->baseline);
    hsdag_put_u8(out, (uint8_t)(L->baseline_set != 0));
    hsdag_put_f64(out, L->best_lat);
    hsdag_put_i32(out, L->best_episode);
    for (int32_t v = 0; v < L->n_nodes; v++) hsdag_put_i32(out, L->best[v]);
    hsdag_put_i32(out, L->n_curve);
    for (int32_t i = 0; i < L->n_curve; i++) {
        const hsdag_learn_row *r = &L->curve[i];
        hsdag_put_i32(out, r->episode);
        hsdag_put_f64(out, r->mean_latency_s);
        hsdag_put_f64(out, r->best_latency_s);
        hsdag_put_f64(out, r->entropy);
        hsdag_put_f64(out, r->reward);
        hsdag_put_i32(out, r->clusters);
    }
    if (hsdag_frame_end(out, at) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory writing a checkpoint");
    int rc = hsdag_nn_params_save(lmodel_params(L->M), out, e);
    if (rc < 0) return rc;
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory writing a checkpoint");
    return 0;
}

/* A checkpoint's fields, read before anything is committed to the learner. */
typedef struct ck_state {
    uint64_t fp[12];
    int32_t episode, best_ep, n_curve;
    int64_t evals;
    hsdag_rng rng;
    double baseline, best_lat;
    int bset;
    int32_t *best;          /* [n_nodes] */
    hsdag_learn_row *curve; /* [n_curve] */
    size_t curve_cap;
    size_t params_pos; /* where the parameter image starts */
} ck_state;

/* Version 1: u64 words; the checksum (basis HSDAG_FNV64_BASIS_V1) follows the curve. */
static int ck_read_v1(ck_state *c, const hsdag_learn *L, const void *buf, size_t len, hsdag_err *e)
{
    hsdag_rd r = hsdag_rd_make(buf, len);
    /* verify the checksum before trusting any field: header 192 bytes, best placement, curve, checksum */
    size_t head = 192;
    if (len < head || (size_t)L->n_nodes > (len - head) / 8 - 1)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: truncated");
    r.pos = head + (size_t)L->n_nodes * 8;
    uint64_t nc = hsdag_get_u64(&r);
    if (r.bad || nc > (uint64_t)INT32_MAX || nc > (len - r.pos) / 48 || (size_t)nc * 48 + 8 > len - r.pos)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: truncated or inconsistent curve");
    size_t sum_end = r.pos + (size_t)nc * 48;
    hsdag_rd sr = hsdag_rd_make(buf, len);
    sr.pos = sum_end;
    if (hsdag_get_u64(&sr) != hsdag_fnv1a64(HSDAG_FNV64_BASIS_V1, buf, sum_end) || sr.bad)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: checksum mismatch (corrupt file)");
    c->params_pos = sr.pos;
    if (nc && hsdag_grow((void **)&c->curve, &c->curve_cap, (size_t)nc, sizeof *c->curve) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    c->n_curve = (int32_t)nc;
    for (int32_t i = 0; i < c->n_curve; i++) {
        hsdag_learn_row *w = &c->curve[i];
        w->episode = (int32_t)hsdag_get_u64(&r);
        w->mean_latency_s = hsdag_get_f64(&r);
        w->best_latency_s = hsdag_get_f64(&r);
        w->entropy = hsdag_get_f64(&r);
        w->reward = hsdag_get_f64(&r);
        w->clusters = (int32_t)hsdag_get_u64(&r);
    }
    r.pos = 16;
    for (int i = 0; i < 12; i++) c->fp[i] = hsdag_get_u64(&r);
    c->episode = (int32_t)hsdag_get_u64(&r);
    c->evals = (int64_t)hsdag_get_u64(&r);
    for (int i = 0; i < 4; i++) c->rng.s[i] = hsdag_get_u64(&r);
    c->baseline = hsdag_get_f64(&r);
    c->bset = (int)hsdag_get_u64(&r);
    c->best_lat = hsdag_get_f64(&r);
    c->best_ep = (int32_t)(int64_t)hsdag_get_u64(&r);
    for (int32_t v = 0; v < L->n_nodes; v++) {
        uint64_t d = hsdag_get_u64(&r);
        c->best[v] = d < (uint64_t)L->K ? (int32_t)d : -1;
    }
    return r.bad ? hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: truncated") : 0;
}

static int ck_read_v2(ck_state *c, const hsdag_learn *L, const void *buf, size_t len, hsdag_err *e)
{
    hsdag_rd r;
    uint32_t ver = 0;
    int rc = hsdag_frame_open(&r, &ver, &c->params_pos, buf, len, CK_MAGIC, "checkpoint", e);
    if (rc < 0) return rc;
    if (ver != CK_VERSION)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: version %u, expected 1 or %u", ver, CK_VERSION);
    for (int i = 0; i < 12; i++) c->fp[i] = hsdag_get_u64(&r);
    c->episode = hsdag_get_i32(&r);
    c->evals = hsdag_get_i64(&r);
    for (int i = 0; i < 4; i++) c->rng.s[i] = hsdag_get_u64(&r);
    c->baseline = hsdag_get_f64(&r);
    c->bset = hsdag_get_u8(&r);
    c->best_lat = hsdag_get_f64(&r);
    c->best_ep = hsdag_get_i32(&r);
    if (r.bad || hsdag_rd_left(&r) / 4 < (size_t)L->n_nodes)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: truncated");
    for (int32_t v = 0; v < L->n_nodes; v++) {
        int32_t d = hsdag_get_i32(&r);
        c->best[v] = d >= 0 && d < L->K ? d : -1;
    }
    int32_t nc = hsdag_get_i32(&r);
    if (r.bad || nc < 0 || (size_t)nc != hsdag_rd_left(&r) / 40 || hsdag_rd_left(&r) % 40)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: truncated or inconsistent curve");
    if (nc && hsdag_grow((void **)&c->curve, &c->curve_cap, (size_t)nc, sizeof *c->curve) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    c->n_curve = nc;
    for (int32_t i = 0; i < nc; i++) {
        hsdag_learn_row *w = &c->curve[i];
        w->episode = hsdag_get_i32(&r);
        w->mean_latency_s = hsdag_get_f64(&r);
        w->best_latency_s = hsdag_get_f64(&r);
        w->entropy = hsdag_get_f64(&r);
        w->reward = hsdag_get_f64(&r);
        w->clusters = hsdag_get_i32(&r);
    }
    return 0;
}

int hsdag_learn_load(hsdag_learn *L, const void *buf, size_t len, hsdag_err *e)
{
    if (len < 12 || memcmp(buf, CK_MAGIC, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: not an hsdag learner checkpoint (bad magic)");
    ck_state c;
    memset(&c, 0, sizeof c);
    c.best = hsdag_malloc(sizeof(int32_t) * (size_t)(L->n_nodes ? L->n_nodes : 1));
    if (!c.best) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    int rc = hsdag_frame_version(buf, len, CK_MAGIC) == 1 ? ck_read_v1(&c, L, buf, len, e)
                                                          : ck_read_v2(&c, L, buf, len, e);
    if (rc < 0) goto done;
    uint64_t fp[12];
    fingerprint(L, fp);
    for (int i = 0; i < 12; i++)
        if (c.fp[i] != fp[i]) {
            rc = hsdag_err_set(e, HSDAG_EINVAL,
                               "checkpoint: made with a different %s (graph or options differ)", fp_names[i]);
            goto done;
        }
    for (int32_t v = 0; v < L->n_nodes; v++)
        if (c.best[v] < 0) {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: device index out of range");
            goto done;
        }
    if (c.n_curve > c.episode) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: inconsistent curve");
        goto done;
    }
    size_t used = 0;
    rc = hsdag_nn_params_load(lmodel_params(L->M), (const unsigned char *)buf + c.params_pos,
                              len - c.params_pos, &used, e);
    if (rc < 0) goto done;
    /* commit */
    memcpy(L->best, c.best, sizeof(int32_t) * (size_t)L->n_nodes);
    hsdag_free(L->curve);
    L->curve = c.curve;
    L->curve_cap = c.curve_cap;
    c.curve = NULL;
    L->n_curve = c.n_curve;
    L->episode = c.episode;
    L->evals = c.evals;
    L->rng = c.rng;
    L->baseline = c.baseline;
    L->baseline_set = c.bset;
    L->best_lat = c.best_lat;
    L->best_episode = c.best_ep;
done:
    hsdag_free(c.best);
    hsdag_free(c.curve);
    return rc;
}

/* ---- debug: the whole policy loss for finite differences ---- */

int hsdag_learn_debug_loss(hsdag_learn *L, uint64_t seed, int32_t *actions, int32_t *n_clusters,
                           double entropy_w, int grad, double *loss, hsdag_err *e)
{
    hsdag_rng rng;
    hsdag_rng_seed(&rng, seed);
    lstep st;
    /* a fixed, nonzero state delta so the state-update path is exercised */
    for (size_t i = 0; i < (size_t)L->n_groups * L->H; i++) L->D[i] = 0.05f * (float)((i * 7) % 11) - 0.25f;
    int rc = lmodel_step_forward(L->M, &st, L->D, 0, &rng, e);
    if (rc < 0) {
        lmodel_step_end(&st);
        return rc;
    }
    int32_t C = st.n_clusters, K = L->K;
    if (*n_clusters <= 0) {
        for (int32_t c = 0; c < C; c++)
            hsdag_nn_categorical_sample_logits(&actions[c], NULL, st.logp + (size_t)c * K, NULL, K, &rng);
        *n_clusters = C;
    } else if (*n_clusters != C) {
        lmodel_step_end(&st);
        return hsdag_err_set(e, HSDAG_EINVAL, "debug: cluster count changed (%d -> %d)", (int)*n_clusters,
                             (int)C);
    }
    double lsum = 0;
    hsdag_nn_entropy_forward(L->ent, st.logp, C, K);
    for (int32_t c = 0; c < C; c++)
        lsum += -(double)st.logp[(size_t)c * K + actions[c]] - entropy_w * L->ent[c];
    *loss = lsum;
    if (grad) {
        hsdag_nn_params_zero_grad(lmodel_params(L->M));
        memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
        for (int32_t c = 0; c < C; c++) L->dlogp[(size_t)c * K + actions[c]] = -1.0f;
        for (int32_t c = 0; c < C; c++) L->ent[c] = (float)-entropy_w;
        hsdag_nn_entropy_backward(L->dlogp, L->ent, st.logp, C, K);
        rc = lmodel_step_backward(L->M, &st, L->dlogp, e);
    }
    lmodel_step_end(&st);
    return rc;
}
