/* learn.h - the HSDAG learner: features -> GCN encoder -> Graph Parsing Network pooling -> per-cluster
 * device policy, trained with REINFORCE on a latency oracle (the simulator, or any callback).
 * Not here: the NN kernels (nn.h), the simulator (sim.h), classic placers (place.h; the learner plugs into
 * their registry through hsdag_learn_register_methods).
 * Entry points: hsdag_learn_config_default, hsdag_learn_create/free, hsdag_learn_train,
 * hsdag_learn_save/load,
 *               hsdag_learn_best, hsdag_learn_curve, hsdag_learn_place, hsdag_learn_sim_eval.
 *
 * Usage:
 *   hsdag_learn_config cfg = hsdag_learn_config_default();     // the paper: 25 episodes x 20 steps, seed 42
 *   hsdag_learn *L; hsdag_err e = {0};
 *   if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) ...
 *   hsdag_learn_train(L, my_eval, my_ctx, NULL, NULL, &e);      // my_eval(ctx, device[n_nodes], &lat, &ok,
 * e)
 *   const int32_t *best; double lat; hsdag_learn_best(L, &best, &lat, NULL);
 *   hsdag_buf ck = {0}; hsdag_learn_save(L, &ck, &e);          // resume later with hsdag_learn_load
 *   hsdag_learn_free(L);
 */
#ifndef HSDAG_LEARN_H
#define HSDAG_LEARN_H

#include "hsdag/features.h"
#include "hsdag/nn.h"
#include "hsdag/place.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every default is the paper's setting unless marked "option". */
typedef struct hsdag_learn_config {
    int32_t episodes;      /* 25 (total; a resumed learner continues up to this count) */
    int32_t steps;         /* 20 placements per episode */
    uint64_t seed;         /* 42 */
    float lr;              /* Adam learning rate, 1e-3 */
    double gamma;          /* discount, 0.95: R = sum_i gamma^i r_{T-1-i} */
    int32_t hidden;        /* 128 */
    int32_t embed;         /* width each feature kind is embedded to, 16 */
    float dropout;         /* 0.2 */
    hsdag_nn_gnn_kind gnn; /* GCN (the ablation: GAT, GIN, SAGE) */
    unsigned features;     /* HSDAG_FEAT_ALL (ablation: switch kinds off) */
    int no_coarsen;        /* option: 1 = one group per op */
    int32_t levels;        /* GPN parsing levels, 1 (level 1 is always applied) */
    int32_t min_clusters;  /* a further level is applied only if it leaves >= this many clusters;
                                * 0 = 2 x devices */
    int baseline;          /* option: subtract a moving average of R (decay baseline_decay); 0 = paper */
    double baseline_decay; /* 0.9 */
    double entropy;        /* option: entropy bonus weight (per-cluster mean entropy summed over steps); 0 */
    double infeasible_penalty; /* reward of an infeasible placement = 1 / (penalty x its latency); 10 */
} hsdag_learn_config;
hsdag_learn_config hsdag_learn_config_default(void);

/* The latency oracle: device[n_nodes] -> *latency_s (> 0) and *feasible. Return 0, or a negative status
 * with e set (training stops with that status; the best placement so far is kept). */
typedef int (*hsdag_learn_eval_fn)(void *ctx, const int32_t *device, double *latency_s, int *feasible,
                                   hsdag_err *e);

/* One row of the learning curve (one episode). */
typedef struct hsdag_learn_row {
    int32_t episode;       /* 0-based */
    double mean_latency_s; /* mean over the episode's placements (infeasible ones included as simulated) */
    double best_latency_s; /* best feasible so far (INFINITY if none yet) */
    double entropy;        /* mean per-cluster policy entropy over the episode (nats) */
    double reward;         /* the episode's discounted return R */
    int32_t clusters;      /* clusters of the episode's last step */
} hsdag_learn_row;

/* Called after every episode (and after loading nothing else). Return nonzero to stop training early
 * (hsdag_learn_train then returns 1). */
typedef int (*hsdag_learn_progress_fn)(void *ctx, const hsdag_learn_row *row, int32_t episodes_total);

typedef struct hsdag_learn hsdag_learn;

/* Coarsens g, computes features and builds the model (parameters initialised from cfg->seed). g is
 * borrowed. */
int hsdag_learn_create(hsdag_learn **out, const hsdag_graph *g, int32_t n_devices,
                       const hsdag_learn_config *cfg, hsdag_err *e);
void hsdag_learn_free(hsdag_learn *L); /* NULL is a no-op */

/* Trains until cfg->episodes episodes are done (continuing from a loaded checkpoint). Returns 0 when done,
 * 1 when progress asked to stop, or the oracle's / an internal error status. */
int hsdag_learn_train(hsdag_learn *L, hsdag_learn_eval_fn eval, void *eval_ctx,
                      hsdag_learn_progress_fn progress, void *progress_ctx, hsdag_err *e);
/* Sets the episode target (e.g. a resumed run asked for more episodes). */
void hsdag_learn_set_episodes(hsdag_learn *L, int32_t episodes);

/* Best feasible placement so far (NULL and INFINITY if none), its latency and episode (-1 if none). */
void hsdag_learn_best(const hsdag_learn *L, const int32_t **device, double *latency_s, int32_t *episode);
/* Replaces the best placement (e.g. after a local-search polish) if latency_s is lower. */
void hsdag_learn_offer(hsdag_learn *L, const int32_t *device, double latency_s);
const hsdag_learn_row *hsdag_learn_curve(const hsdag_learn *L, int32_t *n_rows);
int64_t hsdag_learn_evals(const hsdag_learn *L);      /* placements evaluated so far */
int32_t hsdag_learn_groups(const hsdag_learn *L);     /* groups after coarsening */
size_t hsdag_learn_param_count(const hsdag_learn *L); /* floats in the parameter block */

/* Checkpoint: configuration fingerprint, episode counter, RNG state, baseline, best placement, curve,
 * then the parameter block with Adam state (hsdag_nn_params_save). Loading into a learner created with the
 * same graph and configuration (episodes may differ) continues bit-identically. Errors: EPARSE (bad or
 * truncated image), EINVAL (made for another graph or configuration; the message says which field). */
int hsdag_learn_save(const hsdag_learn *L, hsdag_buf *out, hsdag_err *e);
int hsdag_learn_load(hsdag_learn *L, const void *buf, size_t len, hsdag_err *e);

/* ---- glue to the simulator and the placer registry (src/learn/glue.c) ---- */
/* An hsdag_learn_eval_fn over a simulator: ctx is an hsdag_sim *. */
int hsdag_learn_sim_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible, hsdag_err *e);
/* local-search polish from the learner's best placement on p (simulator latency); offers the result back.
 * *polished_s gets the polished latency (NAN if there was no feasible placement to start from). */
int hsdag_learn_polish(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed, int64_t max_evals,
                       double *polished_s, hsdag_err *e);
/* The registry entry (hsdag_place_fn): trains with the defaults (seed o->seed) on p->sim, writes the best
 * placement. */
int hsdag_learn_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e);
/* Adds every learned placer of this layer to the placer registry (hsdag_place_register): "hsdag", after the
 * built-in methods. Idempotent (a second call is a no-op); not thread-safe. Called by the CLI's main() and by
 * any program that wants the learned methods in hsdag_place_methods / hsdag_place_run. Returns 0 or the
 * registry's error. */
int hsdag_learn_register_methods(hsdag_err *e);

/* ---- one forward pass, for tests (finite-difference check of the whole policy loss) ----
 * Runs one step with the current state and given RNG seed, dropout off, and returns the policy loss
 * loss = -sum_c log pi(a_c) - entropy_w * sum_c H_c for the sampled actions a_c (re-used when actions is
 * non-NULL). With grad = 1 the parameter gradient is written to the learner's gradient block
 * (hsdag_learn_params). */
int hsdag_learn_debug_loss(hsdag_learn *L, uint64_t seed, int32_t *actions, int32_t *n_clusters,
                           double entropy_w, int grad, double *loss, hsdag_err *e);
hsdag_nn_params *hsdag_learn_params(hsdag_learn *L);

#ifdef __cplusplus
}
#endif
#endif
