/* train.c - the HSDAG learner: REINFORCE episodes over the policy network, state updates between steps,
 * best-placement tracking, learning curve and bit-exact checkpoints.
 * Not here: the network (model.c), rewards from the simulator or a command (glue.c, measure in the CLI).
 * Entry points: hsdag_learn_config_default, hsdag_learn_create/free/train/save/load/best/curve/... */
#include "hsdag/codec.h"
#include "memfit.h"
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hsdag_learn_config hsdag_learn_config_paper(void)
{
    return (hsdag_learn_config){
        .episodes = 25,
        .steps = 20,
        .samples = 1,
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
        .fixed_clusters = 0,
        .state_update = 1,
        .inherit = 0,
        .inherit_init = 0.0,
        .memory_mask = 0,
        .min_groups = 0,
        .max_groups = 0,
        .group_mem_frac = 0.0,
        .update = HSDAG_LEARN_EPISODE,
        .baseline = HSDAG_LEARN_BASE_NONE,
        .baseline_decay = 0.9,
        .reward = HSDAG_LEARN_REWARD_INV,
        .normalize = 0,
        .epochs = 1,
        .clip = 0.2,
        .entropy = 0.0,
        .entropy_end = 0.0,
        .entropy_decay = 500,
        .infeasible_penalty = 10.0,
        .sil = 0.0,
        .sil_elite = 0,
        .offset_lr = 0.0,
        .imitate_steps = 0,
        .imitate_prob = 0.9,
        .weight_unit_frac = 0.0,
    };
}

hsdag_learn_config hsdag_learn_config_default(void)
{
    hsdag_learn_config c = hsdag_learn_config_paper();
    c.steps = 2;
    c.samples = 10;
    c.dropout = 0.0f;
    c.fixed_clusters = 1;
    c.state_update = 0;
    c.inherit = 1;
    c.memory_mask = 1;
    c.min_groups = 64;
    c.max_groups = 4096;
    c.group_mem_frac = 0.125;
    /* pooling that leaves fewer than 32 decisions is not applied (the groups are the decisions): the paper's
     * 2 x devices let GPN merge a 48-group graph into 11 clusters that cannot express the good placements
     * (docs/hsdag.md, "The default learner") */
    c.min_clusters = 32;
    c.update = HSDAG_LEARN_STEP;
    c.baseline = HSDAG_LEARN_BASE_LOO;
    c.reward = HSDAG_LEARN_REWARD_LOG;
    c.normalize = 2;
    c.epochs = 2;
    c.clip = 0.2;
    c.entropy = 0.01;
    c.entropy_end = 0.0;
    c.sil = 1.0;
    c.sil_elite = 4;
    c.offset_lr = 0.1;
    c.imitate_steps = 50;
    /* under a memory cap, a weight fed through an op of its own is a decision of its own: pooled into its
     * consumer's cluster it could not stay on the host while the consumer runs on the accelerator, the
     * optimum of ViT-B/16 and BERT-base at GPU=50% (learned-only 35.3 -> 16.9 ms and 25.7 -> 17.5 ms;
     * docs/hsdag.md, "The default learner") */
    c.weight_unit_frac = 0.01;
    return c;
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
    double ref_lat; /* REWARD_LOG: the first measured latency (s), 0 until then */
    double run_var; /* normalize 2: moving average of the steps' reward variances, 0 until the first */
    int32_t *best;  /* [n_nodes] */
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
    int32_t *acts;         /* (samples, n_groups) actions per cluster of a step's samples */
    float *old_lp;         /* (samples, n_groups) their log-probabilities when sampled */
    double *rew, *adv;     /* (samples) */
    /* per decision unit (n_groups at most): main predecessor unit (-1 none), decision order, root group */
    int32_t *upred, *uorder, *uroot;
    float *dq;             /* d loss / d inherit logit */
    float *new_lp;         /* a replayed sample's log-probabilities */
    double *ug, *umem;     /* per-unit gradient weights; static bytes per unit */
    const double *gstatic; /* (n_groups) static bytes per group (memory masks; the model's), NULL = none */
    double *cap;           /* (K) memory capacities (INFINITY = none), NULL = no memory masks */
    /* self-imitation (cfg.sil): the best distinct feasible samples so far, as unit actions, best first */
    int32_t *elite;            /* (sil_elite, n_groups) */
    double *elite_r;           /* (sil_elite) their rewards */
    int32_t n_elite, elite_c;  /* samples held; units per sample (the fixed clusters' count) */
    double step_mean, step_sd; /* the last step's mean reward and its advantages' divisor (0: none) */
    /* per-decision offsets (cfg.offset_lr): this graph's own logit per unit and device, and inherit logit per
     * unit, added to the network's; their own Adam block */
    hsdag_nn_params *off;
    float *lpo; /* (n_groups, K) log-softmax of the network's log-probabilities + offsets, over the mask */
    float *qo;  /* (n_groups) inherit logits + offsets */
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
    hsdag_free(L->acts);
    hsdag_free(L->old_lp);
    hsdag_free(L->rew);
    hsdag_free(L->adv);
    hsdag_free(L->upred);
    hsdag_free(L->uorder);
    hsdag_free(L->uroot);
    hsdag_free(L->dq);
    hsdag_free(L->new_lp);
    hsdag_free(L->ug);
    hsdag_free(L->umem);
    hsdag_free(L->cap);
    hsdag_free(L->elite);
    hsdag_free(L->elite_r);
    hsdag_nn_params_free(L->off);
    hsdag_free(L->lpo);
    hsdag_free(L->qo);
    hsdag_free(L);
}

static int cfg_check(const hsdag_learn_config *c, int32_t K, hsdag_err *e)
{
    if (c->episodes < 0 || c->episodes > 10000000)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: episodes %d out of range", (int)c->episodes);
    if (c->steps < 1 || c->steps > 100000)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: steps %d out of range", (int)c->steps);
    if (c->samples < 1 || c->samples > 4096)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: samples %d out of range (1..4096)", (int)c->samples);
    if (c->hidden < 1 || c->hidden > 4096 || c->embed < 1 || c->embed > 4096)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: hidden/embed width out of range");
    if (!(c->dropout >= 0 && c->dropout < 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: dropout must be in [0, 1)");
    if (!(c->gamma >= 0 && c->gamma <= 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: gamma must be in [0, 1]");
    if (!(c->lr > 0) || !(c->infeasible_penalty >= 1) || !(c->entropy >= 0) || !(c->entropy_end >= 0) ||
        !(c->baseline_decay >= 0 && c->baseline_decay < 1))
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "hsdag: lr, entropy, baseline decay or infeasible penalty out of range");
    if (c->levels < 0 || c->levels > 16)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: levels must be in 0..16");
    if (c->min_clusters < 0) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: min-clusters must be >= 0");
    if (K < 1 || K > 64) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: %d devices (need 1..64)", (int)K);
    if ((unsigned)c->update > HSDAG_LEARN_STEP || (unsigned)c->baseline > HSDAG_LEARN_BASE_LOO ||
        (unsigned)c->reward > HSDAG_LEARN_REWARD_LOG)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: unknown update, baseline or reward kind");
    if (c->update == HSDAG_LEARN_EPISODE && (c->samples != 1 || c->baseline == HSDAG_LEARN_BASE_LOO))
        return hsdag_err_set(
            e, HSDAG_EINVAL,
            "hsdag: the episode update (the paper's) samples one placement per step and has no "
            "leave-one-out baseline");
    if (c->baseline == HSDAG_LEARN_BASE_LOO && c->samples < 2)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: the leave-one-out baseline needs samples >= 2");
    if (c->epochs < 1 || c->epochs > 100 || !(c->clip > 0 && c->clip < 10))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: epochs must be in 1..100 and clip in (0, 10)");
    if (c->normalize < 0 || c->normalize > 2)
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: normalize must be 0, 1 or 2");
    if (c->min_groups < 0 || c->max_groups < 0 || !(c->group_mem_frac >= 0 && c->group_mem_frac <= 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: min groups must be >= 0 and group memory in [0, 1]");
    if (!(c->weight_unit_frac >= 0 && c->weight_unit_frac <= 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: the weight-unit fraction must be in [0, 1]");
    if (c->entropy_decay < 0) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: entropy decay must be >= 0");
    if (!(c->sil >= 0 && c->sil <= 1000) || c->sil_elite < 0 || c->sil_elite > 1024 ||
        !(c->offset_lr >= 0 && c->offset_lr <= 100))
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "hsdag: self-imitation weight, elite size or offset learning rate out of range");
    if ((c->sil > 0 && c->sil_elite > 0) || c->offset_lr > 0)
        if (c->update != HSDAG_LEARN_STEP || !c->fixed_clusters)
            return hsdag_err_set(
                e, HSDAG_EINVAL,
                "hsdag: self-imitation and per-decision offsets need the step update and fixed "
                "clusters: add --sil 0 --offset-lr 0");
    if (c->imitate_steps < 0 || c->imitate_steps > 100000 || !(c->imitate_prob > 0 && c->imitate_prob <= 1))
        return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: imitation steps or probability out of range");
    return 0;
}

static int learn_create(hsdag_learn **out, const hsdag_graph *g, int32_t n_devices,
                        const hsdag_learn_config *cfg, const hsdag_place_problem *p, hsdag_err *e);

int hsdag_learn_create(hsdag_learn **out, const hsdag_graph *g, int32_t n_devices,
                       const hsdag_learn_config *cfg, hsdag_err *e)
{
    return learn_create(out, g, n_devices, cfg, NULL, e);
}

int hsdag_learn_create_problem(hsdag_learn **out, const hsdag_place_problem *p, const hsdag_learn_config *cfg,
                               hsdag_err *e)
{
    return learn_create(out, p->g, p->k, cfg, p, e);
}

/* With cfg.memory_mask: each group's static bytes and each device's capacity, for the sampler's masks. */
static int memory_tables(hsdag_learn *L, const hsdag_place_problem *p, hsdag_err *e)
{
    if (!(L->gstatic = lmodel_group_static(L->M))) return 0; /* nothing is capped */
    L->cap = hsdag_malloc(sizeof(double) * (size_t)L->K);
    if (!L->cap)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)",
                             sizeof(double) * (size_t)L->K);
    /* activations: under the sequential and concurrent models an op's inputs and output are live on its device
     * while it runs, so each capped device keeps room for the largest such working set among the graph's ops
     * that it could hold at all (one larger than the capacity runs elsewhere; tarnawski counts static bytes
     * only) */
    double ws[HSDAG_MAX_DEVICES] = {0};
    if (p->sem != HSDAG_SEM_TARNAWSKI)
        for (int32_t v = 0; v < L->n_nodes; v++) {
            double w = p->c->act_bytes[v];
            for (int32_t k = L->g->in_off[v]; k < L->g->in_off[v + 1]; k++)
                w += L->g->edge_bytes[L->g->in_eid[k]];
            for (int32_t d = 0; d < L->K; d++)
                if (w > ws[d] && w <= p->cap[d]) ws[d] = w;
        }
    for (int32_t d = 0; d < L->K; d++) L->cap[d] = p->cap[d] - ws[d];
    return 0;
}

static int learn_create(hsdag_learn **out, const hsdag_graph *g, int32_t n_devices,
                        const hsdag_learn_config *cfg, const hsdag_place_problem *p, hsdag_err *e)
{
    const uint8_t *allowed = p ? p->c->allowed : NULL;
    *out = NULL;
    int rc = cfg_check(cfg, n_devices, e);
    if (rc < 0) return rc;
    if (g->n_nodes < 1) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: the graph has no nodes");
    hsdag_learn *L = hsdag_calloc(1, sizeof *L);
    if (!L) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)", sizeof *L);
    L->cfg = *cfg;
    L->g = g;
    L->K = n_devices;
    L->H = cfg->hidden;
    L->n_nodes = g->n_nodes;
    hsdag_rng_seed(&L->rng, cfg->seed);
    /* coarsening: colour classes in one group; with min_groups, a group closes at n / min_groups ops; with
     * group_mem_frac, at that fraction of the smallest capacity in static bytes (a chain like AlexNet's would
     * otherwise be one group: one decision for the whole model) */
    hsdag_coarsen_opts co = {.disable = cfg->no_coarsen, .colocate = p ? p->group : NULL};
    if (cfg->min_groups > 0) co.max_ops = (g->n_nodes + cfg->min_groups - 1) / cfg->min_groups;
    co.max_groups = cfg->max_groups;
    if (p && cfg->group_mem_frac > 0) {
        double mc = lmodel_min_capacity(p);
        if (isfinite(mc)) {
            co.bytes = p->c->static_bytes;
            co.max_bytes = cfg->group_mem_frac * mc;
        }
    }
    if ((rc = lmodel_create(&L->M, g, n_devices, cfg, &co, allowed, p, &L->rng, e)) < 0) goto fail;
    if (cfg->fixed_clusters && (rc = lmodel_fix_clusters(L->M, e)) < 0) goto fail;
    L->n_groups = lmodel_coarse(L->M)->n_groups;
    size_t np = hsdag_nn_params_count(lmodel_params(L->M)), ng = (size_t)L->n_groups,
           sg = (size_t)cfg->samples * ng;
    struct {
        void **p;
        size_t bytes;
    } al[] = {{(void **)&L->best, sizeof(int32_t) * (size_t)L->n_nodes},
              {(void **)&L->D, sizeof(float) * ng * (size_t)L->H},
              {(void **)&L->g_logp, sizeof(float) * np},
              {(void **)&L->g_ent, sizeof(float) * np},
              {(void **)&L->gdev, sizeof(int32_t) * ng},
              {(void **)&L->odev, sizeof(int32_t) * (size_t)L->n_nodes},
              {(void **)&L->dlogp, sizeof(float) * ng * (size_t)L->K},
              {(void **)&L->ent, sizeof(float) * ng},
              {(void **)&L->acts, sizeof(int32_t) * sg},
              {(void **)&L->old_lp, sizeof(float) * sg},
              {(void **)&L->rew, sizeof(double) * (size_t)cfg->samples},
              {(void **)&L->upred, sizeof(int32_t) * ng},
              {(void **)&L->uorder, sizeof(int32_t) * ng},
              {(void **)&L->uroot, sizeof(int32_t) * ng},
              {(void **)&L->dq, sizeof(float) * ng},
              {(void **)&L->new_lp, sizeof(float) * ng},
              {(void **)&L->ug, sizeof(double) * ng},
              {(void **)&L->umem, sizeof(double) * ng},
              {(void **)&L->adv, sizeof(double) * (size_t)cfg->samples}};
    for (size_t i = 0; i < sizeof al / sizeof al[0]; i++) {
        *al[i].p = hsdag_calloc(1, al[i].bytes); /* zeroed: a checkpoint saved before any feasible sample
                                                  * writes L->best, so its bytes must be defined */
        if (!*al[i].p) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)", al[i].bytes);
            goto fail;
        }
    }
    if (p && cfg->memory_mask && (rc = memory_tables(L, p, e)) < 0) goto fail;
    if (cfg->offset_lr > 0) {
        /* the offsets start at 0: the network's policy, which a pre-trained one keeps at its first sample */
        if ((rc = hsdag_nn_params_create(&L->off, e)) < 0 ||
            (rc = hsdag_nn_params_add(L->off, "device_offset", L->n_groups, L->K, HSDAG_NN_INIT_CONST, 0.0f,
                                      e)) < 0 ||
            (rc = hsdag_nn_params_add(L->off, "inherit_offset", L->n_groups, 1, HSDAG_NN_INIT_CONST, 0.0f,
                                      e)) < 0 ||
            (rc = hsdag_nn_params_alloc(L->off, &L->rng, e)) < 0)
            goto fail;
        L->lpo = hsdag_calloc(ng * (size_t)L->K, sizeof(float));
        L->qo = hsdag_calloc(ng, sizeof(float));
        if (!L->lpo || !L->qo) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)", ng * (size_t)L->K * 4);
            goto fail;
        }
    }
    if (cfg->sil > 0 && cfg->sil_elite > 0) {
        L->elite = hsdag_calloc((size_t)cfg->sil_elite * ng, sizeof(int32_t));
        L->elite_r = hsdag_calloc((size_t)cfg->sil_elite, sizeof(double));
        if (!L->elite || !L->elite_r) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory (%zu bytes)",
                               (size_t)cfg->sil_elite * ng * sizeof(int32_t));
            goto fail;
        }
    }
    L->best_lat = INFINITY;
    L->best_episode = -1;
    *out = L;
    return 0;
fail:
    hsdag_learn_free(L);
    return rc;
}

void hsdag_learn_set_episodes(hsdag_learn *L, int32_t episodes)
{
    L->cfg.episodes = episodes;
}

void hsdag_learn_best(const hsdag_learn *L, const int32_t **device, double *latency_s, int32_t *episode)
{
    if (device) *device = isfinite(L->best_lat) ? L->best : NULL;
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
hsdag_nn_params *hsdag_learn_offsets(hsdag_learn *L)
{
    return L->off;
}
const hsdag_learn_config *hsdag_learn_get_config(const hsdag_learn *L)
{
    return &L->cfg;
}

/* ---- shared by both updates ---- */

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

/* Samples one device per cluster of st into a[C]. */
static int sample_actions(hsdag_learn *L, const lstep *st, int32_t *a, hsdag_err *e)
{
    for (int32_t c = 0; c < st->n_clusters; c++)
        if (hsdag_nn_categorical_sample_logits(&a[c], NULL, st->logp + (size_t)c * L->K, NULL, L->K,
                                               &L->rng) < 0)
            return hsdag_err_set(e, HSDAG_ESOLVER, "hsdag: policy has no valid device (NaN parameters?)");
    return 0;
}

/* Measures the placement of cluster actions a under st's clusters (into L->odev); keeps the best. */
static int measure(hsdag_learn *L, const lstep *st, const int32_t *a, hsdag_learn_eval_fn eval, void *ctx,
                   double *lat, int *feas, hsdag_err *e)
{
    const uint8_t *gm = lmodel_group_mask(L->M);
    int32_t K = L->K;
    for (int32_t v = 0; v < L->n_groups; v++) {
        int32_t d = a[st->cluster[v]];
        if (gm && !gm[(size_t)v * K + d]) /* a cluster of groups with no common device: this one moves */
            for (int32_t x = 0; x < K; x++)
                if (gm[(size_t)v * K + x]) {
                    d = x;
                    break;
                }
        L->gdev[v] = d;
    }
    hsdag_coarsen_expand(lmodel_coarse(L->M), L->odev, L->gdev);
    *lat = 0;
    *feas = 0;
    int rc = eval(ctx, L->odev, lat, feas, e);
    if (rc < 0) return rc;
    L->evals++;
    if (!(*lat > 0) || !isfinite(*lat))
        return hsdag_err_set(e, HSDAG_EEXTERNAL, "hsdag: the latency oracle returned %g s", *lat);
    if (*feas && *lat < L->best_lat) {
        L->best_lat = *lat;
        L->best_episode = L->episode;
        memcpy(L->best, L->odev, sizeof(int32_t) * (size_t)L->n_nodes);
    }
    return 0;
}

/* ---- the decision units' policy (STEP update) ----
 * A unit is a cluster of st (a group without pooling); units are decided in the order of their roots (first
 * groups). Unit c may use the devices of its mask: those st->mask allows that still have room for the
 * unit's static bytes given the units decided before it (cfg.memory_mask and a learner made for a problem;
 * when none has room, every allowed device). Its own distribution is pi_c renormalised over the mask. With
 * cfg.inherit, c keeps the device of its main predecessor unit pred(c) with probability s_c = sigmoid(q_c):
 *   P(a_c = d) = s_c [d == a_pred] + (1 - s_c) pi_c(d | mask)   (when a_pred is in the mask; else pi_c(d | mask)).
 * pred(c) is the unit, with a lower root, of c's heaviest incoming group edge, so it is always decided first.
 * The masks depend on earlier decisions only, so a sample's log-probability is replayed exactly. */
static void unit_preds(hsdag_learn *L, const lstep *st)
{
    const hsdag_coarse *co = lmodel_coarse(L->M);
    int32_t C = st->n_clusters, N = L->n_groups;
    for (int32_t c = 0; c < C; c++) L->uroot[c] = INT32_MAX, L->upred[c] = -1, L->umem[c] = 0;
    for (int32_t v = 0; v < N; v++) {
        int32_t c = st->cluster[v];
        if (v < L->uroot[c]) L->uroot[c] = v;
        if (L->gstatic) L->umem[c] += L->gstatic[v];
    }
    /* order by root: a pass over groups meets each unit first at its root */
    int32_t k = 0;
    for (int32_t v = 0; v < N; v++)
        if (L->uroot[st->cluster[v]] == v) L->uorder[k++] = st->cluster[v];
    if (!L->cfg.inherit) return;
    /* the heaviest edge into each unit from a unit with a lower root (ties: the first such edge) */
    float *best = L->dq; /* scratch: the weight of the chosen edge */
    for (int32_t c = 0; c < C; c++) best[c] = -1.0f;
    for (int32_t a = 0; a < N; a++)
        for (int32_t j = co->out_off[a]; j < co->out_off[a + 1]; j++) {
            int32_t b = co->out_dst[j], ca = st->cluster[a], cb = st->cluster[b];
            if (ca == cb || L->uroot[ca] >= L->uroot[cb]) continue;
            float w = (float)co->edge_bytes[j];
            if (w > best[cb]) {
                best[cb] = w;
                L->upred[cb] = ca;
            }
        }
}

static double sigm(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* The devices unit c may use given the bytes used so far (bit d). */
static uint64_t unit_mask(const hsdag_learn *L, const lstep *st, int32_t c, const double *used)
{
    int32_t K = L->K;
    uint64_t allowed = 0, room = 0;
    for (int32_t d = 0; d < K; d++) {
        if (st->mask && !st->mask[(size_t)c * K + d]) continue;
        allowed |= (uint64_t)1 << d;
        if (!L->cap || used[d] + L->umem[c] <= L->cap[d]) room |= (uint64_t)1 << d;
    }
    return room ? room : allowed;
}

/* One unit's decision a[c] under mask m: its log-probability, and with g != 0 the gradient g * d lp /
 * d(logp_c, q_c) added to dlogp, dq. */
static double unit_step(const hsdag_learn *L, const lstep *st, const int32_t *a, int32_t c, uint64_t m,
                        double g, float *dlogp, float *dq)
{
    int32_t K = L->K;
    const float *lp = st->logp + (size_t)c * K;
    double mx = -INFINITY, z = 0;
    for (int32_t d = 0; d < K; d++)
        if ((m >> d) & 1u && lp[d] > mx) mx = lp[d];
    for (int32_t d = 0; d < K; d++)
        if ((m >> d) & 1u) z += exp((double)lp[d] - mx);
    double pa = ((m >> a[c]) & 1u) ? exp((double)lp[a[c]] - mx) / z : 0.0; /* pi_c(a | mask) */
    int32_t p = L->upred[c];
    int inh = st->q && p >= 0 && ((m >> a[p]) & 1u);
    double sg = inh ? sigm(st->q[c]) : 0.0, same = inh && a[p] == a[c];
    double pr = sg * same + (1 - sg) * pa;
    if (!(pr > 1e-300)) pr = 1e-300;
    if (g != 0) {
        /* d lp / d logp[d'] = (1 - s) pa ([d' = a] - pi(d' | mask)) / P over the mask */
        double w = g * (1 - sg) * pa / pr;
        if (w != 0)
            for (int32_t d = 0; d < K; d++)
                if ((m >> d) & 1u)
                    dlogp[(size_t)c * K + d] += (float)(w * ((d == a[c]) - exp((double)lp[d] - mx) / z));
        if (inh) dq[c] += (float)(g * sg * (1 - sg) * (same - pa) / pr);
    }
    return log(pr);
}

/* Replays sample a in unit order: lp_out[c] (optional) gets each decision's log-probability; with g
 * (optional, per unit) the gradient sum_c g[c] d lp_c is added to dlogp, dq. */
static void sample_replay(hsdag_learn *L, const lstep *st, const int32_t *a, float *lp_out, const double *g)
{
    double used[HSDAG_MAX_DEVICES] = {0};
    for (int32_t i = 0; i < st->n_clusters; i++) {
        int32_t c = L->uorder[i];
        uint64_t m = unit_mask(L, st, c, used);
        double lp = unit_step(L, st, a, c, m, g ? g[c] : 0.0, L->dlogp, L->dq);
        if (lp_out) lp_out[c] = (float)lp;
        used[a[c]] += L->umem[c];
    }
}

/* Draws a sample into a[C] in unit order. */
static int sample_units(hsdag_learn *L, const lstep *st, int32_t *a, hsdag_err *e)
{
    double used[HSDAG_MAX_DEVICES] = {0};
    int32_t K = L->K;
    float lg[HSDAG_MAX_DEVICES];
    for (int32_t i = 0; i < st->n_clusters; i++) {
        int32_t c = L->uorder[i], p = L->upred[c];
        uint64_t m = unit_mask(L, st, c, used);
        if (st->q && p >= 0 && ((m >> a[p]) & 1u) && hsdag_rng_uniform(&L->rng) < sigm(st->q[c])) {
            a[c] = a[p];
        } else {
            for (int32_t d = 0; d < K; d++) lg[d] = ((m >> d) & 1u) ? st->logp[(size_t)c * K + d] : -INFINITY;
            if (hsdag_nn_categorical_sample_logits(&a[c], NULL, lg, NULL, K, &L->rng) < 0)
                return hsdag_err_set(e, HSDAG_ESOLVER, "hsdag: policy has no valid device (NaN parameters?)");
        }
        used[a[c]] += L->umem[c];
    }
    return 0;
}

/* The reward of one measurement; infeasible placements count as penalty x slower. */
static double reward_of(hsdag_learn *L, double lat, int feas)
{
    double l = lat * (feas ? 1.0 : L->cfg.infeasible_penalty);
    if (L->cfg.reward == HSDAG_LEARN_REWARD_INV) return 1.0 / (l * 1e3);
    if (!(L->ref_lat > 0)) L->ref_lat = lat;
    return -log(l / L->ref_lat);
}

/* x_v += h_cluster(v) (constant for later steps) */
static void state_update(hsdag_learn *L, const lstep *st)
{
    int32_t H = L->H;
    for (int32_t v = 0; v < L->n_groups; v++) {
        const float *h = st->hc + (size_t)st->cluster[v] * H;
        float *d = L->D + (size_t)v * H;
        for (int32_t j = 0; j < H; j++) d[j] += h[j];
    }
}

static double entropy_mean(hsdag_learn *L, const lstep *st)
{
    int32_t C = st->n_clusters;
    hsdag_nn_entropy_forward(L->ent, st->logp, C, L->K);
    double hm = 0;
    for (int32_t c = 0; c < C; c++) hm += L->ent[c];
    return C ? hm / C : 0.0;
}

/* The entropy weight now: linear from cfg.entropy to cfg.entropy_end over the first entropy_decay
 * placements, then entropy_end. */
static double entropy_weight(const hsdag_learn *L)
{
    const hsdag_learn_config *c = &L->cfg;
    double t = c->entropy_decay > 0 ? (double)L->evals / (double)c->entropy_decay : 1.0;
    if (t > 1) t = 1;
    return c->entropy + (c->entropy_end - c->entropy) * t;
}

/* ---- the paper's episode update (HSDAG_LEARN_EPISODE) ---- */

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
        return lmodel_step_backward(L->M, st, L->dlogp, NULL, e);
    }
    hsdag_nn_params_zero_grad(P);
    memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
    for (int32_t c = 0; c < C; c++) L->dlogp[(size_t)c * K + act[c]] = 1.0f;
    int rc = lmodel_step_backward(L->M, st, L->dlogp, NULL, e);
    if (rc < 0) return rc;
    axpy_(L->g_logp, w_logp, G, np);
    if (!want_ent) return 0;
    hsdag_nn_params_zero_grad(P);
    memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
    for (int32_t c = 0; c < C; c++) L->ent[c] = 1.0f / (float)C; /* d(mean entropy) / dH_c */
    hsdag_nn_entropy_backward(L->dlogp, L->ent, st->logp, C, K);
    if ((rc = lmodel_step_backward(L->M, st, L->dlogp, NULL, e)) < 0) return rc;
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

static int run_episode_paper(hsdag_learn *L, hsdag_learn_eval_fn eval, void *ctx, hsdag_learn_row *row,
                             hsdag_err *e)
{
    const hsdag_learn_config *cfg = &L->cfg;
    hsdag_nn_params *P = lmodel_params(L->M);
    size_t np = hsdag_nn_params_count(P);
    int32_t T = cfg->steps;
    double ew = entropy_weight(L);
    memset(L->D, 0, sizeof(float) * (size_t)L->n_groups * L->H);
    /* without a baseline and an entropy term every step has weight 1: gradients accumulate in place */
    int direct = cfg->baseline == HSDAG_LEARN_BASE_NONE && !(ew > 0);
    if (direct)
        hsdag_nn_params_zero_grad(P);
    else {
        memset(L->g_logp, 0, sizeof(float) * np);
        memset(L->g_ent, 0, sizeof(float) * np);
    }
    double R = 0, lat_sum = 0, ent_sum = 0, feas_sum = 0;
    int rc = 0;
    int32_t *a = L->acts;
    lmodel_params_frozen(L->M, 1); /* the parameters change only in the Adam step after the loop */
    for (int32_t t = 0; t < T; t++) {
        lstep st;
        if ((rc = lmodel_step_forward(L->M, &st, cfg->state_update ? L->D : NULL, 1, &L->rng, e)) < 0 ||
            (rc = sample_actions(L, &st, a, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        ent_sum += entropy_mean(L, &st);
        double lat;
        int feas;
        if ((rc = measure(L, &st, a, eval, ctx, &lat, &feas, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        lat_sum += lat * (feas ? 1.0 : cfg->infeasible_penalty);
        feas_sum += feas;
        double r = reward_of(L, lat, feas);
        R = cfg->gamma * R + r; /* after T steps: sum_i gamma^i r_{T-1-i} */
        /* paper: every step's log-prob is weighted by the episode return R (applied at the end);
         * option: per-step advantage r_t - b with a moving-average baseline b of step rewards */
        float w = 1.0f;
        if (cfg->baseline == HSDAG_LEARN_BASE_MOVING) {
            if (!L->baseline_set) {
                L->baseline = r;
                L->baseline_set = 1;
            }
            w = (float)(r - L->baseline);
            L->baseline = cfg->baseline_decay * L->baseline + (1 - cfg->baseline_decay) * r;
        }
        if ((rc = step_grads(L, &st, a, w, ew > 0, direct, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        if (cfg->state_update) state_update(L, &st);
        row->clusters = st.n_clusters;
        lmodel_step_end(&st);
    }
    lmodel_params_frozen(L->M, 0);
    if (rc < 0) return rc;
    /* loss = -R sum_t log pi_t (or -sum_t (r_t - b) log pi_t) - entropy * sum_t mean H_t; one Adam step */
    double adv = cfg->baseline == HSDAG_LEARN_BASE_MOVING ? 1.0 : R;
    float *G = hsdag_nn_params_grad(P, -1);
    float ca = (float)-adv, ce = (float)-ew;
    if (direct) /* = ca * g_logp + ce * 0 exactly */
        for (size_t i = 0; i < np; i++) G[i] = ca * G[i];
    else
        for (size_t i = 0; i < np; i++) G[i] = ca * L->g_logp[i] + ce * L->g_ent[i];
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = cfg->lr;
    hsdag_nn_adam_step(P, &ac, NULL);
    row->mean_latency_s = lat_sum / T;
    row->feasible_frac = feas_sum / T;
    row->entropy = ent_sum / T;
    row->reward = R;
    return 0;
}

/* ---- the per-step update (HSDAG_LEARN_STEP): samples, advantages, clipped epochs ---- */

/* ---- per-decision offsets (cfg.offset_lr) ----
 * The policy of unit c is softmax over its mask of (log pi_c + o_c), and its inherit logit q_c + u_c: the
 * network's policy, shifted by offsets this graph learns alone (at their own, larger rate: a decision the
 * shared network can only move through its 148k weights moves here directly). Forward next to backward. */

/* y[K] <- its log-softmax over the entries that are not -inf (they stay -inf). */
static void log_normalise(float *y, int32_t K)
{
    double mx = -INFINITY, z = 0;
    for (int32_t d = 0; d < K; d++)
        if (y[d] > mx) mx = y[d];
    for (int32_t d = 0; d < K; d++)
        if (y[d] != -INFINITY) z += exp((double)y[d] - mx);
    double lz = mx + log(z);
    for (int32_t d = 0; d < K; d++)
        if (y[d] != -INFINITY) y[d] = (float)((double)y[d] - lz);
}

/* Points st's log-probabilities and inherit logits at the offset ones (nothing without offsets). */
static void offsets_forward(hsdag_learn *L, lstep *st)
{
    if (!L->off) return;
    int32_t C = st->n_clusters, K = L->K;
    const float *o = hsdag_nn_params_value(L->off, 0), *u = hsdag_nn_params_value(L->off, 1);
    for (int32_t c = 0; c < C; c++) {
        const float *lp = st->logp + (size_t)c * K;
        float *y = L->lpo + (size_t)c * K;
        for (int32_t d = 0; d < K; d++) y[d] = lp[d] == -INFINITY ? -INFINITY : lp[d] + o[(size_t)c * K + d];
        log_normalise(y, K);
    }
    st->logp = L->lpo;
    if (st->q) {
        for (int32_t c = 0; c < C; c++) L->qo[c] = st->q[c] + u[c];
        st->q = L->qo;
    }
}

/* dlogp (C, K: d loss / d the offset log-probabilities) becomes d loss / d (log pi + o), whose rows sum to
 * 0, so the network's log-softmax backward passes it through unchanged; it and dq (may be NULL) are added to
 * the offsets' gradients. */
static void offsets_backward(hsdag_learn *L, const lstep *st, float *dlogp, const float *dq)
{
    if (!L->off) return;
    int32_t C = st->n_clusters, K = L->K;
    float *go = hsdag_nn_params_grad(L->off, 0), *gu = hsdag_nn_params_grad(L->off, 1);
    for (int32_t c = 0; c < C; c++) {
        float *dl = dlogp + (size_t)c * K;
        const float *lp = st->logp + (size_t)c * K;
        double s = 0;
        for (int32_t d = 0; d < K; d++) s += dl[d];
        for (int32_t d = 0; d < K; d++) {
            if (lp[d] != -INFINITY) dl[d] -= (float)(exp((double)lp[d]) * s);
            go[(size_t)c * K + d] += dl[d];
        }
        if (dq && st->q) gu[c] += dq[c];
    }
}

static void offsets_step(hsdag_learn *L)
{
    if (!L->off) return;
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = (float)L->cfg.offset_lr;
    hsdag_nn_adam_step(L->off, &ac, NULL);
    hsdag_nn_params_zero_grad(L->off);
}

/* Advantages of the step's S samples from L->rew into L->adv. */
static void advantages(hsdag_learn *L, int32_t S)
{
    const hsdag_learn_config *cfg = &L->cfg;
    double sum = 0, mean, var = 0;
    for (int32_t i = 0; i < S; i++) sum += L->rew[i];
    mean = sum / S;
    for (int32_t i = 0; i < S; i++) {
        double r = L->rew[i], a = r;
        if (cfg->baseline == HSDAG_LEARN_BASE_LOO) {
            a = r - (sum - r) / (S - 1);
        } else if (cfg->baseline == HSDAG_LEARN_BASE_MOVING) {
            if (!L->baseline_set) {
                L->baseline = r;
                L->baseline_set = 1;
            }
            a = r - L->baseline;
            L->baseline = cfg->baseline_decay * L->baseline + (1 - cfg->baseline_decay) * r;
        }
        L->adv[i] = a;
        var += (r - mean) * (r - mean);
    }
    L->step_mean = mean;
    L->step_sd = 1.0;
    if (cfg->normalize && S > 1) {
        /* 1: this step's standard deviation; 2: a moving average (decay 0.9) of the steps' variances, so that
         * once a policy has converged its samples' small (or noise-only) differences stay small */
        double v = var / (S - 1);
        if (cfg->normalize == 2) {
            L->run_var = L->run_var > 0 ? 0.9 * L->run_var + 0.1 * v : v;
            v = L->run_var;
        }
        double sd = sqrt(v);
        L->step_sd = sd > 1e-12 ? sd : 0.0;
        for (int32_t i = 0; i < S; i++) L->adv[i] = sd > 1e-12 ? L->adv[i] / sd : 0.0;
    }
}

/* d loss / d(logp, q) of the clipped surrogate loss = -(1/(S C)) sum_i sum_c min(rho A_i, clip(rho) A_i) over
 * the decisions c of sample i, rho = P(a_ic) / P_old(a_ic), minus the entropy bonus ew (1/C) sum_c H(pi_c). */
static void surrogate_grad(hsdag_learn *L, const lstep *st, int32_t S, int epoch, double ew)
{
    int32_t C = st->n_clusters, K = L->K;
    double clip = L->cfg.clip;
    memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
    memset(L->dq, 0, sizeof(float) * (size_t)C);
    double scale = 1.0 / ((double)S * (double)C);
    for (int32_t i = 0; i < S; i++) {
        double A = L->adv[i];
        if (A == 0) continue;
        const int32_t *a = L->acts + (size_t)i * C;
        const float *olp = L->old_lp + (size_t)i * C;
        if (epoch) sample_replay(L, st, a, L->new_lp, NULL);
        for (int32_t c = 0; c < C; c++) {
            double rho = epoch ? exp((double)L->new_lp[c] - (double)olp[c]) : 1.0;
            /* clipped: no gradient */
            L->ug[c] = ((A > 0 && rho > 1 + clip) || (A < 0 && rho < 1 - clip)) ? 0.0 : -A * rho * scale;
        }
        sample_replay(L, st, a, NULL, L->ug);
    }
    /* self-imitation (Oh et al. 2018): each kept sample better than the step's mean reward counts as cfg.sil
     * more samples of advantage (r_e - mean) / sd, unclipped (it was measured, under an older policy) */
    for (int32_t j = 0; j < L->n_elite && L->step_sd > 0 && L->elite_c == C; j++) {
        double A = (L->elite_r[j] - L->step_mean) / L->step_sd;
        if (!(A > 0)) continue;
        for (int32_t c = 0; c < C; c++) L->ug[c] = -L->cfg.sil * A * scale;
        sample_replay(L, st, L->elite + (size_t)j * C, NULL, L->ug);
    }
    if (ew > 0) {
        for (int32_t c = 0; c < C; c++) L->ent[c] = (float)(-ew / C);
        hsdag_nn_entropy_backward(L->dlogp, L->ent, st->logp, C, K);
    }
}

static int update_step(hsdag_learn *L, lstep *st, int32_t S, double ew, hsdag_err *e)
{
    hsdag_nn_params *P = lmodel_params(L->M);
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = L->cfg.lr;
    hsdag_nn_params_zero_grad(P);
    surrogate_grad(L, st, S, 0, ew);
    offsets_backward(L, st, L->dlogp, st->q ? L->dq : NULL);
    int rc = lmodel_step_backward(L->M, st, L->dlogp, st->q ? L->dq : NULL, e);
    if (rc < 0) return rc;
    hsdag_nn_adam_step(P, &ac, NULL);
    offsets_step(L);
    return 0;
}

/* Offers the unit actions a[C] of a feasible sample of reward r to the self-imitation samples: the
 * cfg.sil_elite best distinct ones, best first (ties: the earlier stays ahead). */
static void elite_offer(hsdag_learn *L, const int32_t *a, int32_t C, double r)
{
    int32_t E = L->elite ? L->cfg.sil_elite : 0;
    if (E <= 0) return;
    L->elite_c = C;
    for (int32_t j = 0; j < L->n_elite; j++)
        if (!memcmp(L->elite + (size_t)j * C, a, sizeof(int32_t) * (size_t)C)) return;
    if (L->n_elite == E && !(r > L->elite_r[E - 1])) return;
    int32_t j = L->n_elite < E ? L->n_elite++ : E - 1;
    for (; j > 0 && L->elite_r[j - 1] < r; j--) {
        L->elite_r[j] = L->elite_r[j - 1];
        memcpy(L->elite + (size_t)j * C, L->elite + (size_t)(j - 1) * C, sizeof(int32_t) * (size_t)C);
    }
    L->elite_r[j] = r;
    memcpy(L->elite + (size_t)j * C, a, sizeof(int32_t) * (size_t)C);
}

static int run_episode_step(hsdag_learn *L, hsdag_learn_eval_fn eval, void *ctx, hsdag_learn_row *row,
                            hsdag_err *e)
{
    const hsdag_learn_config *cfg = &L->cfg;
    hsdag_nn_params *P = lmodel_params(L->M);
    int32_t T = cfg->steps, S = cfg->samples;
    int train = cfg->dropout > 0;
    double lat_sum = 0, ent_sum = 0, rew_sum = 0, feas_sum = 0;
    int rc = 0;
    memset(L->D, 0, sizeof(float) * (size_t)L->n_groups * L->H);
    for (int32_t t = 0; t < T && rc == 0; t++) {
        lstep st;
        double ew = entropy_weight(L);
        if ((rc = lmodel_step_forward(L->M, &st, cfg->state_update ? L->D : NULL, train, &L->rng, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        int32_t C = st.n_clusters;
        offsets_forward(L, &st);
        ent_sum += entropy_mean(L, &st);
        unit_preds(L, &st);
        for (int32_t i = 0; i < S && rc == 0; i++) {
            int32_t *a = L->acts + (size_t)i * C;
            float *olp = L->old_lp + (size_t)i * C;
            double lat;
            int feas;
            if ((rc = sample_units(L, &st, a, e)) < 0 ||
                (rc = measure(L, &st, a, eval, ctx, &lat, &feas, e)) < 0)
                break;
            sample_replay(L, &st, a, olp, NULL);
            lat_sum += lat * (feas ? 1.0 : cfg->infeasible_penalty);
            feas_sum += feas;
            L->rew[i] = reward_of(L, lat, 1);
            L->adv[i] = feas; /* the flags, until advantages() overwrites them */
        }
        if (rc < 0) {
            lmodel_step_end(&st);
            break;
        }
        /* an infeasible sample ranks below every sample of its step: the worst reward of the step minus
         * ln(penalty) for the log reward (a fixed factor on its latency could still beat slow feasible ones) */
        double rmin = INFINITY;
        for (int32_t i = 0; i < S; i++) rmin = fmin(rmin, L->rew[i]);
        for (int32_t i = 0; i < S; i++) {
            if (L->adv[i] == 0)
                L->rew[i] = cfg->reward == HSDAG_LEARN_REWARD_LOG ? rmin - log(cfg->infeasible_penalty)
                                                                  : rmin / cfg->infeasible_penalty;
            rew_sum += L->rew[i];
        }
        for (int32_t i = 0; i < S; i++)
            if (L->adv[i] != 0) elite_offer(L, L->acts + (size_t)i * C, C, L->rew[i]);
        advantages(L, S);
        /* epoch 0 differentiates the sampling pass itself (ratio 1); later epochs run a fresh pass with the
         * updated parameters and clip each decision's ratio */
        rc = update_step(L, &st, S, ew, e);
        if (rc == 0 && cfg->state_update) state_update(L, &st);
        row->clusters = C;
        lmodel_step_end(&st);
        for (int32_t ep = 1; ep < cfg->epochs && rc == 0; ep++) {
            lstep s2;
            if ((rc = lmodel_step_forward(L->M, &s2, cfg->state_update ? L->D : NULL, train, &L->rng, e)) ==
                0) {
                if (s2.n_clusters != C) { /* the parse changed under the update: stop this step's epochs */
                    lmodel_step_end(&s2);
                    break;
                }
                offsets_forward(L, &s2);
                hsdag_nn_params_zero_grad(P);
                surrogate_grad(L, &s2, S, ep, ew);
                offsets_backward(L, &s2, L->dlogp, s2.q ? L->dq : NULL);
                rc = lmodel_step_backward(L->M, &s2, L->dlogp, s2.q ? L->dq : NULL, e);
                if (rc == 0) {
                    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
                    ac.lr = cfg->lr;
                    hsdag_nn_adam_step(P, &ac, NULL);
                    offsets_step(L);
                }
            }
            lmodel_step_end(&s2);
        }
    }
    if (rc < 0) return rc;
    row->mean_latency_s = lat_sum / ((double)T * S);
    row->feasible_frac = feas_sum / ((double)T * S);
    row->entropy = ent_sum / T;
    row->reward = rew_sum / ((double)T * S);
    return 0;
}

int hsdag_learn_train(hsdag_learn *L, hsdag_learn_eval_fn eval, void *eval_ctx,
                      hsdag_learn_progress_fn progress, void *progress_ctx, hsdag_err *e)
{
    while (L->episode < L->cfg.episodes) {
        hsdag_learn_row row = {0};
        int rc = L->cfg.update == HSDAG_LEARN_EPISODE ? run_episode_paper(L, eval, eval_ctx, &row, e)
                                                      : run_episode_step(L, eval, eval_ctx, &row, e);
        if (rc < 0) return rc;
        row.episode = L->episode;
        row.best_latency_s = L->best_lat;
        if (curve_push(L, &row) < 0) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
        L->episode++;
        if (progress && progress(progress_ctx, &row, L->cfg.episodes)) return 1;
    }
    return 0;
}

/* ---- imitation warm start ---- */

int hsdag_learn_imitate(hsdag_learn *L, const int32_t *op_device, int32_t *steps_done, double *prob,
                        hsdag_err *e)
{
    const hsdag_coarse *co = lmodel_coarse(L->M);
    int32_t K = L->K, N = L->n_groups;
    *steps_done = 0;
    *prob = NAN;
    /* the target of a group: the device most of its ops have (ties: lower index) */
    int32_t cnt[HSDAG_MAX_DEVICES];
    for (int32_t k = 0; k < N; k++) {
        memset(cnt, 0, sizeof(int32_t) * (size_t)K);
        for (int32_t j = co->off[k]; j < co->off[k + 1]; j++) {
            int32_t d = op_device[co->ops[j]];
            if (d < 0 || d >= K)
                return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: imitation target device %d", (int)d);
            cnt[d]++;
        }
        int32_t b = 0;
        for (int32_t d = 1; d < K; d++)
            if (cnt[d] > cnt[b]) b = d;
        L->gdev[k] = b;
    }
    hsdag_nn_params *P = lmodel_params(L->M);
    hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
    ac.lr = L->cfg.lr;
    int rc = 0;
    int32_t *tgt = L->acts; /* per cluster: the device most of its ops' groups want */
    for (int32_t t = 0; t <= L->cfg.imitate_steps && rc == 0; t++) {
        lstep st;
        if ((rc = lmodel_step_forward(L->M, &st, NULL, 0, NULL, e)) < 0) {
            lmodel_step_end(&st);
            break;
        }
        offsets_forward(L, &st);
        int32_t C = st.n_clusters;
        /* cluster targets by op count of their groups' targets (reuse dlogp as the tally) */
        memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
        for (int32_t k = 0; k < N; k++)
            L->dlogp[(size_t)st.cluster[k] * K + L->gdev[k]] += (float)(co->off[k + 1] - co->off[k]);
        for (int32_t c = 0; c < C; c++) {
            int32_t b = -1;
            for (int32_t d = 0; d < K; d++)
                if ((!st.mask || st.mask[(size_t)c * K + d]) &&
                    (b < 0 || L->dlogp[(size_t)c * K + d] > L->dlogp[(size_t)c * K + b]))
                    b = d;
            tgt[c] = b < 0 ? 0 : b;
        }
        /* the probability of each unit's target given its predecessor's target (teacher forcing) */
        unit_preds(L, &st);
        sample_replay(L, &st, tgt, L->new_lp, NULL);
        double pm = 0;
        for (int32_t c = 0; c < C; c++) pm += exp((double)L->new_lp[c]);
        pm /= C;
        *prob = pm;
        if (pm >= L->cfg.imitate_prob || t == L->cfg.imitate_steps) {
            lmodel_step_end(&st);
            break;
        }
        /* loss = -(1/C) sum_c log P(target_c) */
        memset(L->dlogp, 0, sizeof(float) * (size_t)C * K);
        memset(L->dq, 0, sizeof(float) * (size_t)C);
        for (int32_t c = 0; c < C; c++) L->ug[c] = -1.0 / C;
        sample_replay(L, &st, tgt, NULL, L->ug);
        hsdag_nn_params_zero_grad(P);
        offsets_backward(L, &st, L->dlogp, st.q ? L->dq : NULL);
        rc = lmodel_step_backward(L->M, &st, L->dlogp, st.q ? L->dq : NULL, e);
        if (rc == 0) {
            hsdag_nn_adam_step(P, &ac, NULL);
            offsets_step(L);
        }
        lmodel_step_end(&st);
        (*steps_done)++;
    }
    return rc;
}

/* ---- checkpoints ----
 * Version 3: a codec frame "HSDAGLRN" v3 (fingerprint, counters, RNG, baseline, reference latency, reward
 * variance, best placement, curve with feasible fractions); version 2 the same without those fields and with
 * the 12-word fingerprint of the paper learner,
 * then the parameter image (hsdag_nn_params_save, its own frame). Version 1 (before the codec): magic,
 * u64 1, the same fields as u64 / f64 words, u64 FNV-1a 64 with the one-digit-short basis
 * (HSDAG_FNV64_BASIS_V1) of everything before it, then a version-1 parameter image; still read. */

#define CK_MAGIC "HSDAGLRN"
#define CK_VERSION 4u

/* Version 4's word for self-imitation and the offsets; a version-3 checkpoint had neither (0, 0, 0). */
static uint64_t fp_sil(double sil, int32_t elite, double offset_lr)
{
    uint64_t a, b;
    memcpy(&a, &sil, 8);
    memcpy(&b, &offset_lr, 8);
    return a ^ (b * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)elite << 40);
}

/* What must match for a checkpoint to continue bit-identically. */
#define FP_N 19
/* The weight units' share of the fingerprint: 0 where they change nothing (no group kept apart), so a
 * checkpoint from before the option continues wherever it does not apply. */
static uint64_t fp_weight_units(const hsdag_learn *L)
{
    uint64_t wu = 0;
    if (lmodel_apart(L->M)) memcpy(&wu, &L->cfg.weight_unit_frac, 8);
    return wu * 0xc2b2ae3d27d4eb4full;
}

static void fingerprint(const hsdag_learn *L, uint64_t fp[FP_N])
{
    const hsdag_learn_config *c = &L->cfg;
    double lr = c->lr, dr = c->dropout;
    uint64_t u;
    fp[0] = (uint64_t)L->n_nodes;
    fp[1] = (uint64_t)L->n_groups;
    fp[2] = (uint64_t)L->K;
    fp[3] = c->seed;
    fp[4] = (uint64_t)c->steps | ((uint64_t)c->samples << 32);
    memcpy(&u, &lr, 8);
    fp[5] = u ^ ((uint64_t)c->hidden << 1) ^ ((uint64_t)c->embed << 17);
    memcpy(&u, &dr, 8);
    fp[6] = u ^ ((uint64_t)c->gnn << 3) ^ ((uint64_t)c->features << 7) ^ ((uint64_t)c->no_coarsen << 20);
    fp[7] = (uint64_t)c->levels | ((uint64_t)(uint32_t)c->min_clusters << 32);
    fp[8] = (uint64_t)c->baseline | ((uint64_t)c->update << 8) | ((uint64_t)c->reward << 16) |
            ((uint64_t)c->normalize << 24) | ((uint64_t)c->fixed_clusters << 32) |
            ((uint64_t)c->state_update << 40) | ((uint64_t)(uint32_t)c->epochs << 48) |
            ((uint64_t)c->inherit << 63) | ((uint64_t)c->memory_mask << 62);
    memcpy(&fp[9], &c->entropy, 8);
    memcpy(&fp[10], &c->gamma, 8);
    memcpy(&fp[11], &c->infeasible_penalty, 8);
    memcpy(&fp[12], &c->entropy_end, 8);
    memcpy(&fp[13], &c->clip, 8);
    memcpy(&fp[14], &c->baseline_decay, 8);
    {
        uint64_t ii;
        memcpy(&ii, &c->inherit_init, 8);
        fp[14] ^= ii * 0x9e3779b97f4a7c15ull;
    }
    fp[15] = (uint64_t)(uint32_t)c->imitate_steps | ((uint64_t)(uint32_t)c->min_groups << 32);
    fp[15] ^= (uint64_t)(uint32_t)c->max_groups * 0x9e3779b97f4a7c15ull;
    memcpy(&fp[16], &c->imitate_prob, 8);
    {
        uint64_t gm;
        memcpy(&gm, &c->group_mem_frac, 8);
        fp[16] ^= gm * 0x9e3779b97f4a7c15ull ^ fp_weight_units(L);
    }
    fp[17] = 0x48534441474c4e32ull ^ ((uint64_t)c->entropy_decay << 1); /* "HSDAGLN2" ^ the entropy decay */
    fp[18] = fp_sil(c->sil, c->sil_elite, c->offset_lr);
}

static const char *fp_names[FP_N] = {"nodes",
                                     "groups",
                                     "devices",
                                     "seed",
                                     "steps/samples",
                                     "lr/hidden/embed",
                                     "dropout/gnn/features/coarsening",
                                     "levels/min-clusters",
                                     "baseline/update/reward/normalize/clusters/state/epochs/inherit",
                                     "entropy",
                                     "gamma",
                                     "infeasible penalty",
                                     "entropy end",
                                     "clip",
                                     "baseline decay/inherit init",
                                     "imitation steps/min groups",
                                     "imitation probability/group memory/weight units",
                                     "learner version/entropy decay",
                                     "self-imitation/offsets"};

/* The fingerprint of versions 1 and 2 (the paper learner of earlier builds). */
static void fingerprint_v2(const hsdag_learn *L, uint64_t fp[12])
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

static const char *fp_names_v2[12] = {"nodes",
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
    size_t need = out->len + 8192 + (size_t)L->n_nodes * 4 + (size_t)L->n_curve * 48 +
                  hsdag_nn_params_count(lmodel_params(L->M)) * 12 +
                  (size_t)L->n_elite * ((size_t)L->elite_c * 4 + 8) +
                  (L->off ? hsdag_nn_params_count(L->off) * 12 : 0);
    if (!out->oom && hsdag_grow((void **)&out->data, &out->cap, need, 1) < 0) out->oom = 1;
    uint64_t fp[FP_N];
    fingerprint(L, fp);
    size_t at = hsdag_frame_begin(out, CK_MAGIC, CK_VERSION);
    for (int i = 0; i < FP_N; i++) hsdag_put_u64(out, fp[i]);
    hsdag_put_i32(out, L->episode);
    hsdag_put_i64(out, L->evals);
    for (int i = 0; i < 4; i++) hsdag_put_u64(out, L->rng.s[i]);
    hsdag_put_f64(out, L->baseline);
    hsdag_put_u8(out, (uint8_t)(L->baseline_set != 0));
    hsdag_put_f64(out, L->ref_lat);
    hsdag_put_f64(out, L->run_var);
    hsdag_put_f64(out, L->best_lat);
    hsdag_put_i32(out, L->best_episode);
    for (int32_t v = 0; v < L->n_nodes; v++) hsdag_put_i32(out, L->best[v]);
    /* version 4: the self-imitation samples (count, units each, rewards, unit actions) */
    hsdag_put_i32(out, L->n_elite);
    hsdag_put_i32(out, L->elite_c);
    for (int32_t j = 0; j < L->n_elite; j++) hsdag_put_f64(out, L->elite_r[j]);
    for (size_t i = 0; i < (size_t)L->n_elite * (size_t)L->elite_c; i++) hsdag_put_i32(out, L->elite[i]);
    hsdag_put_i32(out, L->n_curve);
    for (int32_t i = 0; i < L->n_curve; i++) {
        const hsdag_learn_row *r = &L->curve[i];
        hsdag_put_i32(out, r->episode);
        hsdag_put_f64(out, r->mean_latency_s);
        hsdag_put_f64(out, r->best_latency_s);
        hsdag_put_f64(out, r->entropy);
        hsdag_put_f64(out, r->reward);
        hsdag_put_i32(out, r->clusters);
        if (CK_VERSION >= 3) hsdag_put_f64(out, r->feasible_frac);
    }
    if (hsdag_frame_end(out, at) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory writing a checkpoint");
    int rc = hsdag_nn_params_save(lmodel_params(L->M), out, e);
    if (rc == 0 && L->off) rc = hsdag_nn_params_save(L->off, out, e); /* version 4: then the offsets */
    if (rc < 0) return rc;
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory writing a checkpoint");
    return 0;
}

/* A checkpoint's fields, read before anything is committed to the learner. */
typedef struct ck_state {
    uint32_t version;
    uint64_t fp[FP_N]; /* versions 1, 2: the first 12 of fingerprint_v2 */
    double ref_lat, run_var;
    int32_t episode, best_ep, n_curve;
    int64_t evals;
    hsdag_rng rng;
    double baseline, best_lat;
    int bset;
    int32_t *best; /* [n_nodes] */
    int32_t n_elite, elite_c;
    double *elite_r;        /* [n_elite] (version 4) */
    int32_t *elite;         /* [n_elite * elite_c] */
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
        w->feasible_frac = 1.0; /* not in v1 (as for v2) */
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
    if (ver < 2 || ver > CK_VERSION)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: version %u, expected 1 to %u", ver, CK_VERSION);
    c->version = ver;
    int nfp = ver == 2 ? 12 : ver == 3 ? 18 : FP_N;
    size_t row = ver == 2 ? 40 : 48;
    for (int i = 0; i < nfp; i++) c->fp[i] = hsdag_get_u64(&r);
    c->episode = hsdag_get_i32(&r);
    c->evals = hsdag_get_i64(&r);
    for (int i = 0; i < 4; i++) c->rng.s[i] = hsdag_get_u64(&r);
    c->baseline = hsdag_get_f64(&r);
    c->bset = hsdag_get_u8(&r);
    if (ver >= 3) {
        c->ref_lat = hsdag_get_f64(&r);
        c->run_var = hsdag_get_f64(&r);
    }
    c->best_lat = hsdag_get_f64(&r);
    c->best_ep = hsdag_get_i32(&r);
    if (r.bad || hsdag_rd_left(&r) / 4 < (size_t)L->n_nodes)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: truncated");
    for (int32_t v = 0; v < L->n_nodes; v++) {
        int32_t d = hsdag_get_i32(&r);
        c->best[v] = d >= 0 && d < L->K ? d : -1;
    }
    if (ver >= 4) {
        c->n_elite = hsdag_get_i32(&r);
        c->elite_c = hsdag_get_i32(&r);
        /* against the configuration only once the fingerprint has matched (hsdag_learn_load) */
        if (r.bad || c->n_elite < 0 || c->n_elite > 1024 || c->elite_c < 0 || c->elite_c > L->n_groups ||
            (c->n_elite > 0 && c->elite_c < 1) || hsdag_rd_left(&r) < (size_t)c->n_elite * 8 ||
            (hsdag_rd_left(&r) - (size_t)c->n_elite * 8) / 4 < (size_t)c->n_elite * (size_t)c->elite_c)
            return hsdag_err_set(e, HSDAG_EPARSE,
                                 "checkpoint: truncated or inconsistent self-imitation samples");
        size_t na = (size_t)c->n_elite * (size_t)c->elite_c;
        c->elite_r = hsdag_malloc(sizeof(double) * (size_t)(c->n_elite ? c->n_elite : 1));
        c->elite = hsdag_malloc(sizeof(int32_t) * (na ? na : 1));
        if (!c->elite_r || !c->elite) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
        for (int32_t j = 0; j < c->n_elite; j++) c->elite_r[j] = hsdag_get_f64(&r);
        for (size_t i = 0; i < na; i++) {
            int32_t d = hsdag_get_i32(&r);
            if (d < 0 || d >= L->K)
                return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: device index out of range");
            c->elite[i] = d;
        }
    }
    int32_t nc = hsdag_get_i32(&r);
    if (r.bad || nc < 0 || (size_t)nc != hsdag_rd_left(&r) / row || hsdag_rd_left(&r) % row)
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
        w->feasible_frac = ver >= 3 ? hsdag_get_f64(&r) : 1.0;
    }
    return 0;
}

/* The largest latency (s) and reward a checkpoint may hold: far beyond any real run (a latency of ~3e10
 * years; 1 / latency in ms of a femtosecond placement is 1e12), so a value past them is a corrupt field. */
#define CK_MAX_LAT_S 1e18
#define CK_MAX_REWARD 1e15
#define CK_MAX_VAR 1e30

/* Range checks on the learner's state in c, like the parameter image's (nn.c): every value finite and of
 * the sign and size a run can produce, so that a flipped bit behind a re-made checksum is refused at load
 * instead of turning the next update into NaN. Returns 0 or HSDAG_EPARSE naming the field. */
static int ck_check_values(const ck_state *c, const hsdag_learn *L, hsdag_err *e)
{
    const hsdag_learn_config *cfg = &L->cfg;
    const char *bad = NULL;
    if (c->episode < 0 || c->evals < 0)
        bad = "episode or evaluation count";
    else if (c->bset != 0 && c->bset != 1)
        bad = "baseline flag";
    else if (!(fabs(c->baseline) <= CK_MAX_REWARD) || (!c->bset && c->baseline != 0) ||
             (cfg->reward == HSDAG_LEARN_REWARD_INV && c->baseline < 0))
        bad = "baseline";
    else if (!(c->ref_lat == 0 || (c->ref_lat > 0 && c->ref_lat <= CK_MAX_LAT_S)) ||
             (cfg->reward != HSDAG_LEARN_REWARD_LOG && c->ref_lat != 0))
        bad = "reference latency";
    else if (!(c->run_var >= 0 && c->run_var <= CK_MAX_VAR) || (cfg->normalize != 2 && c->run_var != 0))
        bad = "reward variance";
    else if (!(c->best_lat > 0 && (c->best_lat <= CK_MAX_LAT_S || c->best_lat == INFINITY)))
        bad = "best latency";
    else if (c->best_ep < -1 || c->best_ep > c->episode)
        bad = "best episode";
    for (int32_t j = 0; !bad && j < c->n_elite; j++)
        if (!(fabs(c->elite_r[j]) <= CK_MAX_REWARD)) bad = "self-imitation reward";
    for (int32_t i = 0; !bad && i < c->n_curve; i++) {
        const hsdag_learn_row *w = &c->curve[i];
        if (w->episode < 0 || w->episode >= c->episode || w->clusters < 0 ||
            !(w->mean_latency_s >= 0 && w->mean_latency_s <= CK_MAX_LAT_S * cfg->infeasible_penalty) ||
            !(w->best_latency_s > 0 &&
              (w->best_latency_s <= CK_MAX_LAT_S || w->best_latency_s == INFINITY)) ||
            !(w->entropy >= 0 && w->entropy <= 1e3) || !(fabs(w->reward) <= CK_MAX_REWARD) ||
            !(w->feasible_frac >= 0 && w->feasible_frac <= 1))
            bad = "curve row";
    }
    return bad ? hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: %s out of range (corrupt file)", bad) : 0;
}

int hsdag_learn_load(hsdag_learn *L, const void *buf, size_t len, hsdag_err *e)
{
    if (len < 12 || memcmp(buf, CK_MAGIC, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: not an hsdag learner checkpoint (bad magic)");
    ck_state c;
    memset(&c, 0, sizeof c);
    c.best = hsdag_malloc(sizeof(int32_t) * (size_t)(L->n_nodes ? L->n_nodes : 1));
    if (!c.best) return hsdag_err_set(e, HSDAG_ENOMEM, "hsdag: out of memory");
    int v1 = hsdag_frame_version(buf, len, CK_MAGIC) == 1;
    int rc = v1 ? ck_read_v1(&c, L, buf, len, e) : ck_read_v2(&c, L, buf, len, e);
    if (rc < 0) goto done;
    if (v1) c.version = 1;
    if (c.version == 3) c.fp[18] = fp_sil(0.0, 0, 0.0); /* before self-imitation and offsets */
    uint64_t fp[FP_N];
    if (c.version < 3) {
        /* an earlier build's checkpoint: its learner is the paper's, so only a paper learner continues it */
        hsdag_learn_config pc = hsdag_learn_config_paper(), mc = L->cfg;
        pc.episodes = mc.episodes, pc.steps = mc.steps, pc.seed = mc.seed, pc.lr = mc.lr, pc.gamma = mc.gamma;
        pc.hidden = mc.hidden, pc.embed = mc.embed, pc.dropout = mc.dropout, pc.gnn = mc.gnn;
        pc.features = mc.features, pc.no_coarsen = mc.no_coarsen, pc.levels = mc.levels;
        pc.min_clusters = mc.min_clusters, pc.baseline = mc.baseline, pc.entropy = mc.entropy;
        pc.entropy_end = mc.entropy_end, pc.infeasible_penalty = mc.infeasible_penalty;
        hsdag_learn P = *L;
        P.cfg = pc;
        uint64_t a[FP_N], b[FP_N];
        fingerprint(&P, a);
        fingerprint(L, b);
        if (memcmp(a, b, sizeof a) != 0) {
            rc = hsdag_err_set(
                e, HSDAG_EINVAL,
                "checkpoint: written by an earlier build's (paper) learner: continue it with --paper");
            goto done;
        }
        fingerprint_v2(L, fp);
        for (int i = 0; i < 12; i++)
            if (c.fp[i] != fp[i]) {
                rc = hsdag_err_set(e, HSDAG_EINVAL,
                                   "checkpoint: made with a different %s (graph or options differ)",
                                   fp_names_v2[i]);
                goto done;
            }
    } else {
        fingerprint(L, fp);
        /* min-clusters 0 means 2 x devices: equal in effect, equal here */
        uint32_t mc_ck = (uint32_t)(c.fp[7] >> 32), mc_now = (uint32_t)(fp[7] >> 32),
                 k2 = 2u * (uint32_t)L->K;
        if ((uint32_t)c.fp[7] == (uint32_t)fp[7] && (mc_ck ? mc_ck : k2) == (mc_now ? mc_now : k2))
            c.fp[7] = fp[7];
        /* the options whose defaults changed since the checkpoint was written get one message that names
         * them all; any other difference is reported by name */
        int hint = 0;
        for (int i = 0; i < FP_N; i++) {
            if (c.fp[i] == fp[i]) continue;
            if ((i == 7 && (uint32_t)c.fp[7] == (uint32_t)fp[7]) || (i == 18 && c.version == 3)) {
                hint |= i == 7 ? 1 : 2;
                continue;
            }
            if (i == 16 && (c.fp[16] ^ fp_weight_units(L)) == fp[16]) { /* written without weight units */
                hint |= 4;
                continue;
            }
            rc = hsdag_err_set(e, HSDAG_EINVAL,
                               "checkpoint: made with a different %s (graph or options differ)", fp_names[i]);
            goto done;
        }
        if (hint) {
            char mc[40] = "";
            if (hint & 1) snprintf(mc, sizeof mc, " --min-clusters %u", mc_ck ? mc_ck : k2);
            rc = hsdag_err_set(
                e, HSDAG_EINVAL, "checkpoint: written with other defaults%s: continue it with%s%s%s",
                hint & 2 ? " (before self-imitation and per-decision offsets)" : "",
                hint & 2 ? " --sil 0 --offset-lr 0" : "", mc, hint & 4 ? " --weight-units 0" : "");
            goto done;
        }
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
    if (c.n_elite > (L->elite ? L->cfg.sil_elite : 0)) {
        rc = hsdag_err_set(e, HSDAG_EPARSE, "checkpoint: more self-imitation samples than the learner keeps");
        goto done;
    }
    if ((rc = ck_check_values(&c, L, e)) < 0) goto done;
    size_t used = 0;
    hsdag_buf keep = {0}; /* the network as it was, in case the offsets' image after it is bad */
    if (L->off && (rc = hsdag_nn_params_save(lmodel_params(L->M), &keep, e)) < 0) {
        hsdag_buf_free(&keep);
        goto done;
    }
    rc = hsdag_nn_params_load(lmodel_params(L->M), (const unsigned char *)buf + c.params_pos,
                              len - c.params_pos, &used, e);
    if (rc == 0 && L->off) {
        size_t at = c.params_pos + used;
        rc = hsdag_nn_params_load(L->off, (const unsigned char *)buf + at, len - at, NULL, e);
        if (rc < 0) hsdag_nn_params_load(lmodel_params(L->M), keep.data, keep.len, NULL, NULL);
    }
    hsdag_buf_free(&keep);
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
    L->ref_lat = c.ref_lat;
    L->run_var = c.run_var;
    L->best_lat = c.best_lat;
    L->best_episode = c.best_ep;
    L->n_elite = c.n_elite;
    L->elite_c = c.elite_c;
    if (c.n_elite) {
        memcpy(L->elite_r, c.elite_r, sizeof(double) * (size_t)c.n_elite);
        memcpy(L->elite, c.elite, sizeof(int32_t) * (size_t)c.n_elite * (size_t)c.elite_c);
    }
done:
    hsdag_free(c.best);
    hsdag_free(c.elite_r);
    hsdag_free(c.elite);
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
    offsets_forward(L, &st);
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
        if (L->off) hsdag_nn_params_zero_grad(L->off);
        offsets_backward(L, &st, L->dlogp, NULL);
        rc = lmodel_step_backward(L->M, &st, L->dlogp, NULL, e);
    }
    lmodel_step_end(&st);
    return rc;
}

/* ---- the most likely placement (one forward pass, nothing measured; added by the `learned` branch for
 * zero-shot placement with a pre-trained policy, src/learn/pretrain.c) ---- */

/* The groups' devices of the unit actions a[C], as measure() places them, expanded to device[n_nodes]. */
static void units_expand(hsdag_learn *L, const lstep *st, const int32_t *a, int32_t *device)
{
    int32_t K = L->K;
    const uint8_t *gm = lmodel_group_mask(L->M);
    for (int32_t v = 0; v < L->n_groups; v++) {
        int32_t d = a[st->cluster[v]];
        if (gm && !gm[(size_t)v * K + d])
            for (int32_t x = 0; x < K; x++)
                if (gm[(size_t)v * K + x]) {
                    d = x;
                    break;
                }
        L->gdev[v] = d;
    }
    hsdag_coarsen_expand(lmodel_coarse(L->M), device, L->gdev);
}

/* The device of largest P(a_c = d) = s [d == a_pred] + (1 - s) pi_c(d | mask) per unit in root order, as
 * sample_units, ties to the lower index. */
static int greedy_units(hsdag_learn *L, const lstep *st, int32_t *a, hsdag_err *e)
{
    int32_t K = L->K;
    double used[HSDAG_MAX_DEVICES] = {0};
    for (int32_t i = 0; i < st->n_clusters; i++) {
        int32_t c = L->uorder[i], p = L->upred[c];
        uint64_t m = unit_mask(L, st, c, used);
        const float *lp = st->logp + (size_t)c * K;
        double mx = -INFINITY, z = 0;
        for (int32_t d = 0; d < K; d++)
            if ((m >> d) & 1u && lp[d] > mx) mx = lp[d];
        for (int32_t d = 0; d < K; d++)
            if ((m >> d) & 1u) z += exp((double)lp[d] - mx);
        int inh = st->q && p >= 0 && ((m >> a[p]) & 1u);
        double sg = inh ? sigm(st->q[c]) : 0.0, best = -1.0;
        int32_t bd = -1;
        for (int32_t d = 0; d < K; d++) {
            if (!((m >> d) & 1u)) continue;
            double pd = sg * (inh && d == a[p]) + (1 - sg) * exp((double)lp[d] - mx) / z;
            if (pd > best) best = pd, bd = d;
        }
        if (bd < 0 || !(z > 0))
            return hsdag_err_set(e, HSDAG_ESOLVER, "hsdag: policy has no valid device (NaN parameters?)");
        a[c] = bd;
        used[bd] += L->umem[c];
    }
    return 0;
}

/* The fitting pass of hsdag_learn_greedy_fit on the greedy unit actions a (memfit.h): the margins are the raw
 * network's log-probabilities, the room the learner's static budget, a move frees a unit's static and output
 * bytes. */
typedef struct fit_ctx {
    hsdag_learn *L;
    const lstep *st;
} fit_ctx;
static void fit_expand(void *ctx, const int32_t *a, int32_t *device)
{
    fit_ctx *f = ctx;
    units_expand(f->L, f->st, a, device);
}
static int fit_units(hsdag_learn *L, const lstep *st, hsdag_sim *sim, int32_t *a, int32_t *device,
                     int32_t *moved, hsdag_err *e)
{
    int32_t C = st->n_clusters;
    double *frees = hsdag_alloc_n((size_t)(C ? C : 1), sizeof(double), "hsdag", e);
    if (!frees) return HSDAG_ENOMEM;
    const hsdag_coarse *co = lmodel_coarse(L->M);
    for (int32_t c = 0; c < C; c++) frees[c] = L->umem[c];
    for (int32_t v = 0; v < L->n_nodes; v++) frees[st->cluster[co->group_of[v]]] += L->g->out_bytes[v];
    fit_ctx f = {L, st};
    memfit_units u = {.C = C,
                      .K = L->K,
                      .mem = L->umem,
                      .frees = frees,
                      .logp = st->logp,
                      .mask = st->mask,
                      .cap = L->cap,
                      .expand = fit_expand,
                      .ctx = &f,
                      .who = "hsdag"};
    int rc = memfit_run(&u, sim, a, device, moved, e);
    hsdag_free(frees);
    return rc;
}

/* The forward pass of an ensemble (hsdag_learn_greedy_fit_mean): one per parameter set vals[m] (m >= 1), each left
 * ended but the last's (st: its clusters and masks), whose log-probabilities and inherit logits st now points
 * at the members' mean in mlp[n_groups * K] and mq[n_groups] (log-probabilities renormalised over the mask).
 * L's own parameters are put back. EINVAL when the members cut the graph into different decisions. */
static int mean_forward(hsdag_learn *L, const float *const *vals, int32_t m, lstep *st, float *mlp, float *mq,
                        int32_t *clus, hsdag_err *e)
{
    hsdag_nn_params *P = lmodel_params(L->M);
    size_t cnt = hsdag_nn_params_count(P);
    int32_t K = L->K, N = L->n_groups;
    float *keep = hsdag_alloc_n(cnt ? cnt : 1, sizeof(float), "hsdag", e);
    if (!keep) return HSDAG_ENOMEM;
    memcpy(keep, hsdag_nn_params_value(P, -1), sizeof(float) * cnt);
    int rc = 0;
    int32_t C = 0;
    for (int32_t i = 0; i < m && rc == 0; i++) {
        memcpy(hsdag_nn_params_value(P, -1), vals[i], sizeof(float) * cnt);
        lmodel_params_frozen(L->M, 0); /* the cached encoder prefix was another member's */
        if ((rc = lmodel_step_forward(L->M, st, NULL, 0, NULL, e)) < 0) {
            lmodel_step_end(st);
            break;
        }
        if (i == 0) {
            C = st->n_clusters;
            memcpy(clus, st->cluster, sizeof(int32_t) * (size_t)N);
            memset(mlp, 0, sizeof(float) * (size_t)C * K);
            memset(mq, 0, sizeof(float) * (size_t)C);
        } else if (st->n_clusters != C || memcmp(clus, st->cluster, sizeof(int32_t) * (size_t)N) != 0) {
            rc =
                hsdag_err_set(e, HSDAG_EINVAL,
                              "hsdag: ensemble member %d cuts the graph into other decisions than member 0's "
                              "(members need one decision per group: --levels 0)",
                              (int)i);
        }
        for (size_t j = 0; rc == 0 && j < (size_t)C * K; j++) mlp[j] += st->logp[j] / (float)m;
        for (int32_t c = 0; rc == 0 && st->q && c < C; c++) mq[c] += st->q[c] / (float)m;
        if (i + 1 < m || rc < 0) lmodel_step_end(st); /* the last member's step stays open for the decode */
    }
    memcpy(hsdag_nn_params_value(P, -1), keep, sizeof(float) * cnt);
    lmodel_params_frozen(L->M, 0);
    hsdag_free(keep);
    if (rc < 0) return rc;
    for (int32_t c = 0; c < C; c++) log_normalise(mlp + (size_t)c * K, K); /* the normalised geometric mean */
    st->logp = mlp;
    if (st->q) st->q = mq;
    return 0;
}

/* One forward pass (dropout off, a zero state; with vals, the mean of m members': mean_forward), then the
 * greedy (rng NULL) or a sampled unit action per decision drawn from rng; the learner's own stream and state
 * are left as they were. With sim (greedy only), the fitting pass of hsdag_learn_greedy_fit. */
static int policy_place(hsdag_learn *L, const float *const *vals, int32_t m, hsdag_rng *rng, hsdag_sim *sim,
                        int32_t *device, int32_t *moved, hsdag_err *e)
{
    lstep st;
    float *mlp = NULL, *mq = NULL;
    int32_t *clus = NULL;
    int rc;
    if (vals) {
        size_t N = (size_t)(L->n_groups ? L->n_groups : 1);
        mlp = hsdag_alloc_n(N * (size_t)L->K, sizeof(float), "hsdag", e);
        mq = hsdag_alloc_n(N, sizeof(float), "hsdag", e);
        clus = hsdag_alloc_n(N, sizeof(int32_t), "hsdag", e);
        rc = mlp && mq && clus ? mean_forward(L, vals, m, &st, mlp, mq, clus, e) : HSDAG_ENOMEM;
        if (rc < 0) {
            hsdag_free(mlp);
            hsdag_free(mq);
            hsdag_free(clus);
            return rc;
        }
    } else
        rc = lmodel_step_forward(L->M, &st, NULL, 0, NULL, e);
    if (rc == 0) {
        offsets_forward(L, &st);
        unit_preds(L, &st);
        if (rng) {
            hsdag_rng keep = L->rng;
            L->rng = *rng;
            rc = sample_units(L, &st, L->acts, e);
            *rng = L->rng;
            L->rng = keep;
        } else {
            rc = greedy_units(L, &st, L->acts, e);
        }
    }
    if (rc == 0) {
        if (sim)
            rc = fit_units(L, &st, sim, L->acts, device, moved, e);
        else
            units_expand(L, &st, L->acts, device);
    }
    lmodel_step_end(&st);
    hsdag_free(mlp);
    hsdag_free(mq);
    hsdag_free(clus);
    return rc;
}

int hsdag_learn_greedy(hsdag_learn *L, int32_t *device, hsdag_err *e)
{
    return policy_place(L, NULL, 0, NULL, NULL, device, NULL, e);
}

int hsdag_learn_greedy_fit(hsdag_learn *L, hsdag_sim *sim, int32_t *device, int32_t *moved, hsdag_err *e)
{
    *moved = 0;
    return policy_place(L, NULL, 0, NULL, sim, device, moved, e);
}

int hsdag_learn_greedy_fit_mean(hsdag_learn *L, const float *const *values, int32_t m, hsdag_sim *sim,
                                int32_t *device, int32_t *moved, hsdag_err *e)
{
    *moved = 0;
    if (m < 0) return hsdag_err_set(e, HSDAG_EINVAL, "hsdag: ensemble of %d members", (int)m);
    return policy_place(L, m > 0 ? values : NULL, m, NULL, sim, device, moved, e);
}

int hsdag_learn_sample(hsdag_learn *L, hsdag_rng *rng, int32_t *device, hsdag_err *e)
{
    return policy_place(L, NULL, 0, rng, NULL, device, NULL, e);
}
