/* learn.h - the HSDAG learner: features -> GCN encoder -> Graph Parsing Network pooling -> per-cluster
 * device policy, trained with REINFORCE on a latency oracle (the simulator, or any callback).
 * Not here: the NN kernels (nn.h), the simulator (sim.h), classic placers (place.h; the learner plugs into
 * their registry through hsdag_learn_register_methods).
 * Entry points: hsdag_learn_config_default/paper, hsdag_learn_create/free, hsdag_learn_train,
 *               hsdag_learn_imitate, hsdag_learn_save/load, hsdag_learn_best, hsdag_learn_curve,
 *               hsdag_learn_place(_learned, _paper), hsdag_learn_sim_eval, hsdag_learn_run_write_json.
 *
 * Usage:
 *   hsdag_learn_config cfg = hsdag_learn_config_default();     // the paper: 25 episodes x 20 steps, seed 42
 *   hsdag_learn *L; hsdag_err e = {0};
 *   if (hsdag_learn_create(&L, g, devs->n, &cfg, &e) < 0) return;
 *   hsdag_learn_train(L, my_eval, my_ctx, NULL, NULL, &e);      // my_eval(ctx, device, &lat, &ok, e)
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

/* How the policy gradient is formed. */
typedef enum hsdag_learn_update {
    HSDAG_LEARN_EPISODE =
        0,           /* the paper: loss -R sum_t sum_c log pi over the episode, one Adam step per episode */
    HSDAG_LEARN_STEP /* one update per step from that step's samples' advantages (PPO-style epochs) */
} hsdag_learn_update;
typedef enum hsdag_learn_baseline {
    HSDAG_LEARN_BASE_NONE = 0, /* the paper */
    HSDAG_LEARN_BASE_MOVING, /* per-step r_t - b, b a moving average of step rewards (decay baseline_decay) */
    HSDAG_LEARN_BASE_LOO     /* leave-one-out over the step's samples: r_i - mean of the others */
} hsdag_learn_baseline;
/* A feature kind beyond features.h's, for a learner made for a problem: what its cost table says of each group
 * (time on each device over its fastest, its share of the time, its bytes against each capacity, the bytes
 * of the groups before it, what leaving it costs), every column scale-free. Off by default. */
#define HSDAG_LEARN_FEAT_COST (1u << 16)

typedef enum hsdag_learn_reward {
    HSDAG_LEARN_REWARD_INV = 0, /* the paper: r = 1 / latency in ms */
    HSDAG_LEARN_REWARD_LOG      /* r = -ln(latency / first measured latency): scale-free per graph */
} hsdag_learn_reward;

/* The defaults (hsdag_learn_config_default) are the project's learner, chosen by the measurements in
 * docs/hsdag.md; hsdag_learn_config_paper() is the paper's algorithm exactly (the --paper mode). Fields
 * marked "paper:" give the paper's value. */
typedef struct hsdag_learn_config {
    int32_t episodes;      /* 25 (total; a resumed learner continues up to this count) */
    int32_t steps;         /* policy evaluations per episode; paper: 20 */
    int32_t samples;       /* placements sampled per step from one forward pass; paper: 1 */
    uint64_t seed;         /* paper: 42 */
    float lr;              /* Adam learning rate; paper: 1e-3 */
    double gamma;          /* discount, 0.95: R = sum_i gamma^i r_{T-1-i} (EPISODE update) */
    int32_t hidden;        /* 128 */
    int32_t embed;         /* width each feature kind is embedded to, 16 */
    float dropout;         /* paper: 0.2 (active while sampling) */
    hsdag_nn_gnn_kind gnn; /* GCN (the ablation: GAT, GIN, SAGE) */
    unsigned features;     /* HSDAG_FEAT_ALL (ablation: switch kinds off); | HSDAG_LEARN_FEAT_COST */
    int no_coarsen;        /* option: 1 = one group per op */
    int32_t min_groups;    /* > 0: coarsening groups close at n_ops / min_groups ops, so a chain is not one
                            * decision (paper: 0, no limit) */
    double group_mem_frac; /* > 0: ... and at this fraction of the smallest device capacity in static bytes */
    int32_t max_groups; /* > 0: at most this many groups, runs of consecutive ones merged (huge graphs; paper:
                            * 0) */
    int32_t levels;     /* GPN parsing levels; 0 = no pooling (one decision per group); paper: 1 */
    int32_t min_clusters; /* a level is applied only if it leaves >= this many clusters; 0 = 2 x devices
                           * (paper); default 32 */
    int fixed_clusters;   /* 1 = decide the clusters once from the initial network (paper: 0, every step) */
    int state_update;     /* 1 = x_v += h_cluster(v) after each step of an episode (paper: 1) */
    int inherit;          /* 1 = each cluster keeps its main predecessor's device with a learned probability
                            * sigmoid(q), else samples its own (contiguous blocks); paper: 0 */
    double inherit_init;  /* the initial inherit logit q (0: probability 1/2) */
    int memory_mask; /* 1 = (a learner made for a problem) a device is offered to a cluster only while its
                            * capacity holds the static bytes of the clusters already put there; paper: 0 */
    hsdag_learn_update update;     /* paper: EPISODE */
    hsdag_learn_baseline baseline; /* paper: NONE */
    double baseline_decay;         /* MOVING: 0.9 */
    hsdag_learn_reward reward;     /* paper: INV */
    int normalize; /* STEP: divide the advantages by the reward standard deviation: 1 = of the step, 2 = a moving
                    * average (decay 0.9) of the steps' variances; 0 = do not */
    int32_t epochs;            /* STEP: gradient epochs per step on its samples (PPO); 1 = plain */
    double clip;               /* STEP, epochs > 1: PPO ratio clip per decision, e.g. 0.2 */
    double entropy;            /* entropy bonus weight at the start (per-cluster mean entropy); paper: 0 */
    double entropy_end;        /* ... decayed linearly to this over the first entropy_decay placements */
    int64_t entropy_decay;     /* placements of the decay (500; not tied to episodes, so a run resumed with
                                * more episodes repeats the shorter run exactly) */
    double infeasible_penalty; /* reward of an infeasible placement = that of penalty x its latency; 10 */
    double sil;                /* STEP + fixed clusters: self-imitation weight: the sil_elite best distinct
                                * feasible samples so far join every update, each as sil more samples of
                                * its advantage over the step's mean when positive; 0 = off (paper) */
    int32_t sil_elite;         /* ... how many are kept (0 = off) */
    double offset_lr;      /* STEP + fixed clusters: > 0 = per-decision offsets, this graph's own logit per
                                * unit and device and inherit logit per unit, added to the network's and
                                * trained by their own Adam at this rate; 0 = off (paper) */
    int32_t imitate_steps; /* hsdag_learn_imitate: Adam steps of cross-entropy towards the start */
    double imitate_prob;   /* ... stopping once the mean probability of the start's devices reaches it */
    /* > 0, levels > 0, a learner made for a problem with a capped device (a finite capacity, a preset's own
     * included): a group with no inputs whose static bytes exceed this fraction of the smallest capacity (a
     * weight that reaches its consumer through an op of its own, such as the Transpose before a MatMul) stays
     * a decision unit of its own: graph parsing never merges it, so a placement can keep the weight on the
     * host and its consumer on the accelerator; paper: 0; default 0.01 */
    double weight_unit_frac;
} hsdag_learn_config;
HSDAG_API hsdag_learn_config hsdag_learn_config_default(void);
HSDAG_API hsdag_learn_config hsdag_learn_config_paper(void);

/* The latency oracle: device[n_nodes] -> *latency_s (> 0) and *feasible. Return 0, or a negative status
 * with e set (training stops with that status; the best placement so far is kept). */
typedef int (*hsdag_learn_eval_fn)(void *ctx, const int32_t *device, double *latency_s, int *feasible,
                                   hsdag_err *e);

/* One row of the learning curve (one episode). */
typedef struct hsdag_learn_row {
    int32_t episode;       /* 0-based */
    double mean_latency_s; /* mean over the episode's placements, an infeasible one counted as penalty x its
                            * latency (what its reward sees) */
    double feasible_frac;  /* fraction of the episode's placements that were feasible */
    double best_latency_s; /* best feasible so far (INFINITY if none yet) */
    double entropy;        /* mean per-cluster policy entropy over the episode (nats) */
    double reward;         /* EPISODE update: the discounted return R; STEP: the mean reward of its samples */
    int32_t clusters;      /* clusters of the episode's last step */
} hsdag_learn_row;

/* Called after every episode (and after loading nothing else). Return nonzero to stop training early
 * (hsdag_learn_train then returns 1). */
typedef int (*hsdag_learn_progress_fn)(void *ctx, const hsdag_learn_row *row, int32_t episodes_total);

typedef struct hsdag_learn hsdag_learn;

/* Coarsens g, computes features and builds the model (parameters initialised from cfg->seed). g is
 * borrowed. */
HSDAG_API int hsdag_learn_create(hsdag_learn **out, const hsdag_graph *g, int32_t n_devices,
                                 const hsdag_learn_config *cfg, hsdag_err *e);
/* The same for a placement problem: p->g and p->k, with its constraints built into the policy: each
 * colour class (p->group) lies in one group, and a group never gets a device one of its ops may not run on
 * (p->c->allowed). p is borrowed (its graph must outlive L). */
HSDAG_API int hsdag_learn_create_problem(hsdag_learn **out, const hsdag_place_problem *p,
                                         const hsdag_learn_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_learn_free(hsdag_learn *L); /* NULL is a no-op */

/* Trains until cfg->episodes episodes are done (continuing from a loaded checkpoint). Returns 0 when done,
 * 1 when progress asked to stop, or the oracle's / an internal error status. */
HSDAG_API int hsdag_learn_train(hsdag_learn *L, hsdag_learn_eval_fn eval, void *eval_ctx,
                                hsdag_learn_progress_fn progress, void *progress_ctx, hsdag_err *e);

/* Sets the episode target (multi-graph pre-training runs one more episode per round, pretrain.c). */
HSDAG_API void hsdag_learn_set_episodes(hsdag_learn *L, int32_t episodes);

/* Best feasible placement so far (NULL and INFINITY if none), its latency and episode (-1 if none). */
HSDAG_API void hsdag_learn_best(const hsdag_learn *L, const int32_t **device, double *latency_s,
                                int32_t *episode);
/* The most likely placement under the current parameters, nothing measured (zero-shot placement with a
 * pre-trained policy): one forward pass (dropout off, a zero state), then in the sampling order the device of
 * largest probability per decision (memory masks and inheritance as in sampling). device[n_nodes]. */
HSDAG_API int hsdag_learn_greedy(hsdag_learn *L, int32_t *device, hsdag_err *e);
/* hsdag_learn_greedy, made to fit: while sim's memory walk (hsdag_sim_run; its latency is not used, and
 * nothing is counted as a measurement) finds a device over its capacity, the decisions placed there that the
 * policy likes least against their best other device move to it (one with room for their static bytes if
 * any), enough of them to cover the excess, each decision at most once. *moved gets how many moved. What
 * still does not fit when nothing is left to move is returned as it is (the caller's evaluation says so). */
HSDAG_API int hsdag_learn_greedy_fit(hsdag_learn *L, hsdag_sim *sim, int32_t *device, int32_t *moved,
                                     hsdag_err *e);
/* hsdag_learn_greedy_fit for an ensemble: values[m] are m parameter sets of L's network (hsdag_nn_params_count
 * floats each; e.g. pre-trained policies of several seeds), and every decision takes the normalised mean of
 * their log-probabilities (a product of experts) and the mean of their inherit logits. L's own parameters are
 * left as they were. The members must cut the graph into the same decisions (one per group, as pre-training
 * does; EINVAL otherwise). m = 0: hsdag_learn_greedy_fit. */
HSDAG_API int hsdag_learn_greedy_fit_mean(hsdag_learn *L, const float *const *values, int32_t m,
                                          hsdag_sim *sim, int32_t *device, int32_t *moved, hsdag_err *e);
/* A placement drawn from the current policy as training samples it, from rng (the learner's own stream and
 * state are untouched): the same forward pass as hsdag_learn_greedy, then one sample per decision. */
HSDAG_API int hsdag_learn_sample(hsdag_learn *L, hsdag_rng *rng, int32_t *device, hsdag_err *e);
/* Imitation warm start: cfg.imitate_steps Adam steps of cross-entropy that make every cluster's policy put
 * its ops where op_device[n_nodes] has most of them (a heuristic's placement), stopping early once the mean
 * probability of those devices reaches cfg.imitate_prob. No measurement is made. *steps_done gets the steps
 * taken, *prob the final mean probability. Returns 0 or a status. */
HSDAG_API int hsdag_learn_imitate(hsdag_learn *L, const int32_t *op_device, int32_t *steps_done, double *prob,
                                  hsdag_err *e);
HSDAG_API const hsdag_learn_config *hsdag_learn_get_config(const hsdag_learn *L);
/* Replaces the best placement (e.g. after a local-search polish) if latency_s is lower. */
HSDAG_API void hsdag_learn_offer(hsdag_learn *L, const int32_t *device, double latency_s);
HSDAG_API const hsdag_learn_row *hsdag_learn_curve(const hsdag_learn *L, int32_t *n_rows);
HSDAG_API int64_t hsdag_learn_evals(const hsdag_learn *L);      /* placements evaluated so far */
HSDAG_API int32_t hsdag_learn_groups(const hsdag_learn *L);     /* groups after coarsening */
HSDAG_API size_t hsdag_learn_param_count(const hsdag_learn *L); /* floats in the parameter block */

/* Checkpoint (codec.h frame "HSDAGLRN" version 2): configuration fingerprint, episode counter, RNG state,
 * baseline, best placement, curve, then the parameter block with Adam state (hsdag_nn_params_save).
 * Version-1 checkpoints of earlier builds load too. Loading into a learner created with the
 * same graph and configuration (episodes may differ) continues bit-identically. Errors: EPARSE (bad or
 * truncated image, or a state value out of range: non-finite, of the wrong sign or absurdly large), EINVAL
 * (made for another graph or configuration; the message says which field). */
HSDAG_API int hsdag_learn_save(const hsdag_learn *L, hsdag_buf *out, hsdag_err *e);
HSDAG_API int hsdag_learn_load(hsdag_learn *L, const void *buf, size_t len, hsdag_err *e);

/* ---- glue to the simulator and the placer registry (src/learn/glue.c) ---- */
/* An hsdag_learn_eval_fn over a simulator: ctx is an hsdag_sim *. */
HSDAG_API int hsdag_learn_sim_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible,
                                   hsdag_err *e);
/* local-search polish from the learner's best placement on p (simulator latency); offers the result back.
 * *polished_s gets the polished latency (NAN if there was no feasible placement to start from). */
HSDAG_API int hsdag_learn_polish(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed, int64_t max_evals,
                                 double *polished_s, hsdag_err *e);
/* The polish with measurement noise (sigma, as the oracle's) and the evaluations it used (may be NULL). */
HSDAG_API int hsdag_learn_polish_noisy(hsdag_learn *L, hsdag_place_problem *p, uint64_t seed,
                                       int64_t max_evals, double noise, double *polished_s, int64_t *evals,
                                       hsdag_err *e);
/* The warm start of the default placer: the best by measurement through orc (each one counted) of every
 * single device (ops a device may not run on their first allowed device), HEFT, m-ETF, m-SCT, METIS (o's
 * seed), greedy-tarnawski and, on two devices, the min cut: every heuristic row of `hsdag compare`'s table;
 * under sequential semantics with a memory cap or more than two devices, on models of up to 2,000 ops, also
 * the MILP on 20,000 simplex iterations (o->ilp_iterations: no clock, so bit-identical). device[p->n] gets
 * it, *lat / *feas its measurement, *from its name. */
HSDAG_API int hsdag_learn_warm_start(hsdag_place_problem *p, hsdag_place_oracle *orc,
                                     const hsdag_place_opts *o, int32_t *device, double *lat, int *feas,
                                     const char **from, hsdag_err *e);
/* The registry entries (hsdag_place_fn), each with o->budget placements (default 500), o->noise, o->seed:
 *   hsdag          the default: the warm start (hsdag_learn_warm_start), imitated; o->budget learned
 *                  placements; local search from its own start with o's seed (the `local-search` row exactly)
 *                  and from the best so far; then the policy-guided iterated local search (perturb the best
 *                  with a fraction of blocks from a placement drawn from the policy, polish 2,000
 *                  evaluations, keep if better). Each local-search phase has HSDAG_LEARN_POLISH_EVALS
 *                  evaluations; o->max_evals > 0 caps the whole run instead (what learning leaves is split
 *                  in three). Returns the best placement measured; every measurement is counted in evals;
 *                  the note says what each part gave;
 *   hsdag-learned  the default learner alone: no warm start, no polish;
 *   hsdag-paper    the paper's algorithm exactly (hsdag_learn_config_paper, budget / 20 episodes).
 * hsdag_learn_register_methods adds them to the placer registry. */
HSDAG_API int hsdag_learn_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                                hsdag_place_report *r, hsdag_err *e);
HSDAG_API int hsdag_learn_place_learned(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                                        hsdag_place_report *r, hsdag_err *e);
HSDAG_API int hsdag_learn_place_paper(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                                      hsdag_place_report *r, hsdag_err *e);
/* Adds every learned placer of this layer to the placer registry (hsdag_place_register): "hsdag",
 * "hsdag-learned", "hsdag-paper", after the built-in methods. Idempotent (a second call is a no-op); not
 * thread-safe. Called by the CLI's main() and by any program that wants the learned methods in
 * hsdag_place_methods / hsdag_place_run. Returns 0 or the registry's error. */
HSDAG_API int hsdag_learn_register_methods(hsdag_err *e);
/* Evaluations of each of the default placer's three local-search phases (local-search's own default). */
#define HSDAG_LEARN_POLISH_EVALS 20000
/* Episodes that give at least `budget` placements with cfg's steps x samples per episode. */
HSDAG_API int32_t hsdag_learn_episodes_for(const hsdag_learn_config *cfg, int64_t budget);

/* ---- result JSON (src/learn/run_json.c; docs/formats.md, "Result JSON") ---- */
typedef struct hsdag_learn_json_info {
    const char *model;             /* the input as the user named it */
    const hsdag_learn_config *cfg; /* the run's configuration (hsdag_learn_get_config) */
    int measured;                  /* 1: latencies came from an external measurement, not the simulator */
    double latency_s;              /* the best placement's latency: noise-free simulated, or measured */
    double learned_s;              /* best latency before any polish, as the oracle saw it */
    double polished_s;             /* after the local-search polish, NAN without one */
    double noise;                  /* the oracle's noise sigma (0: none) */
    const char *warm_start;        /* the warm start's method, NULL without one */
    double warm_start_s;           /* its measured latency (NAN without one) */
    int64_t warm_evals;            /* measurements the warm start spent */
    int64_t polish_evals;          /* simulator evaluations the polish spent */
    double wall_s;                 /* seconds of training and polishing */
    const char *out_dir;           /* the run directory */
    const char *out;               /* the extra placement file written, or NULL */
    int64_t measure_runs;          /* measured: the command's runs (the other evaluations repeated a placement
                                    * it had measured: hsdag_measure_counts); otherwise unused */
} hsdag_learn_json_info;
/* The "hsdag-training-run/1" document: the costs head, the best placement's latency (info->latency_s), as
 * the oracle saw it (measured_ms) and simulated (best = hsdag_place_score of it on p), the bound, the
 * configuration, every evaluation spent and the outputs. 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_learn_run_write_json(hsdag_buf *out, const hsdag_learn *L, const hsdag_place_problem *p,
                                         const hsdag_place_result *best, const hsdag_learn_json_info *info);

/* ---- one forward pass, for tests (finite-difference check of the whole policy loss) ----
 * Runs one step with the current state and given RNG seed, dropout off, and returns the policy loss
 * loss = -sum_c log pi(a_c) - entropy_w * sum_c H_c for the sampled actions a_c (re-used when actions is
 * non-NULL). With grad = 1 the parameter gradient is written to the learner's gradient block
 * (hsdag_learn_params). */
HSDAG_API int hsdag_learn_debug_loss(hsdag_learn *L, uint64_t seed, int32_t *actions, int32_t *n_clusters,
                                     double entropy_w, int grad, double *loss, hsdag_err *e);
HSDAG_API hsdag_nn_params *hsdag_learn_params(hsdag_learn *L);
/* The per-decision offsets (tensors "device_offset" (groups, K) and "inherit_offset" (groups, 1); only the
 * first n_clusters rows are used), or NULL when cfg.offset_lr is 0. hsdag_learn_debug_loss applies them and,
 * with grad, writes their gradient too. */
HSDAG_API hsdag_nn_params *hsdag_learn_offsets(hsdag_learn *L);

#ifdef __cplusplus
}
#endif
#endif
