/* placeto.h - Placeto (Addanki et al., NeurIPS 2019) as a baseline of the HSDAG paper: an MDP that visits the
 * decision units of a graph one by one in topological order and picks each one's device given the current
 * placement; node embeddings by message passing forward and backward over the DAG, then aggregation over the
 * current unit's parents (ancestors), children (descendants) and parallel units; REINFORCE with the
 * incremental reward and a per-step baseline. The policy does not depend on the graph, so one policy can be
 * trained on several graphs and place unseen ones.
 * Not here: the NN kernels (nn.h), the HSDAG learner (learn.h), the simulator (sim.h); the details and
 * departures are in docs/baselines.md.
 * Entry points: hsdag_placeto_config_default, hsdag_placeto_policy_create/free/save/load,
 *   hsdag_placeto_create/free/train/greedy/greedy_fit/best/evals/units, hsdag_placeto_place,
 *   hsdag_placeto_register_methods, hsdag_placeto_debug_loss.
 *
 * Usage (one graph, the simulator as the oracle; error handling shortened):
 *   hsdag_placeto_config cfg = hsdag_placeto_config_default();         // 500 measurements, seed 1
 *   hsdag_placeto_policy *pol; hsdag_placeto *P; hsdag_place_problem *prob; hsdag_err e = {0};
 *   if (hsdag_place_problem_create(&prob, g, devs, NULL, &e) < 0) return;
 *   hsdag_placeto_policy_create(&pol, prob->k, &cfg, &e);
 *   hsdag_placeto_create(&P, prob, &cfg, &e);
 *   hsdag_placeto_train(P, pol, hsdag_learn_sim_eval, prob->sim, cfg.budget, -1, &e);
 *   const int32_t *best; double lat; hsdag_placeto_best(P, &best, &lat, NULL, NULL);
 *   hsdag_placeto_free(P); hsdag_placeto_policy_free(pol); hsdag_place_problem_free(prob);
 */
#ifndef HSDAG_PLACETO_H
#define HSDAG_PLACETO_H

#include "hsdag/learn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where each episode starts. */
typedef enum hsdag_placeto_init {
    HSDAG_PLACETO_INIT_RANDOM = 0, /* Placeto's default: one random placement, drawn once per graph */
    HSDAG_PLACETO_INIT_DEVICE0,    /* every unit on device 0 (Placeto's "zero placement") */
    HSDAG_PLACETO_INIT_BEST        /* the best placement measured so far (random until there is one) */
} hsdag_placeto_init;

typedef struct hsdag_placeto_config {
    int64_t budget;          /* measurements (500, the HSDAG paper's 25 x 20); used by hsdag_placeto_place */
    uint64_t seed;           /* parameters, the start placement and sampling (1) */
    int32_t hidden;          /* embedding width H (16); aggregators 2H, classifier 8H -> 16H -> 8H -> K */
    int32_t max_units;       /* decision units = groups merged to at most this many (32); 0 = one per group */
    int no_coarsen;          /* 1: groups are single ops (then merged to max_units) */
    float lr;                /* Adam learning rate (1e-3) */
    double gamma;            /* discount of the incremental rewards (1: the return is the episode's gain) */
    int32_t baseline_window; /* baseline of step t = mean return at step t over the last W episodes (10) */
    double entropy;          /* entropy bonus weight (0) */
    hsdag_placeto_init init; /* RANDOM */
    double infeasible_penalty; /* an infeasible placement counts as this many times slower (10) */
} hsdag_placeto_config;
HSDAG_API hsdag_placeto_config hsdag_placeto_config_default(void);

/* ---- the policy: parameters and Adam state, for a number of devices, independent of any graph ---- */
typedef struct hsdag_placeto_policy hsdag_placeto_policy;
/* Parameters initialised from cfg->seed (Glorot weights, zero biases as the reference). Errors: EINVAL (bad
 * width or device count 1..64), ENOMEM. */
HSDAG_API int hsdag_placeto_policy_create(hsdag_placeto_policy **out, int32_t n_devices,
                                          const hsdag_placeto_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_placeto_policy_free(hsdag_placeto_policy *pol); /* NULL is a no-op */
HSDAG_API int32_t hsdag_placeto_policy_devices(const hsdag_placeto_policy *pol);
HSDAG_API hsdag_nn_params *hsdag_placeto_policy_params(hsdag_placeto_policy *pol);
/* The parameter image (hsdag_nn_params_save: values, Adam state, checksum). load needs a policy made with
 * the same devices and hidden width (EINVAL naming the mismatch; EPARSE for a bad image). */
HSDAG_API int hsdag_placeto_policy_save(const hsdag_placeto_policy *pol, hsdag_buf *out, hsdag_err *e);
HSDAG_API int hsdag_placeto_policy_load(hsdag_placeto_policy *pol, const void *buf, size_t len, hsdag_err *e);

/* ---- one graph's MDP: decision units, features, start placement, baselines, the best placement ---- */
typedef struct hsdag_placeto hsdag_placeto;
/* p is borrowed (its graph, devices and cost table give the features). */
HSDAG_API int hsdag_placeto_create(hsdag_placeto **out, hsdag_place_problem *p,
                                   const hsdag_placeto_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_placeto_free(hsdag_placeto *P); /* NULL is a no-op */
/* Runs episodes (one per pass over the units; a measurement after every step, plus one for a start
 * placement not measured before) until max_evals more measurements were made or max_episodes complete
 * episodes ran (< 0 = no limit); one Adam step on pol after each complete episode. An episode cut by the
 * budget is not learned from, but its measurements count and its placements compete for the best.
 * pol must have the problem's device count (EINVAL). Returns 0 or the oracle's / an internal status. */
HSDAG_API int hsdag_placeto_train(hsdag_placeto *P, hsdag_placeto_policy *pol, hsdag_learn_eval_fn eval,
                                  void *ctx, int64_t max_evals, int32_t max_episodes, hsdag_err *e);
/* One episode with the most likely device at every step, from the start placement, without measuring
 * anything: device[n_ops] gets the final placement (the zero-shot placement of an unseen graph). */
HSDAG_API int hsdag_placeto_greedy(hsdag_placeto *P, hsdag_placeto_policy *pol, int32_t *device,
                                   hsdag_err *e);
/* The same, then made to fit the memory caps with sim's memory walk (no latency read, nothing counted): while a
 * device is over its capacity, the decisions there that the policy gave up least per byte freed move to their
 * next-best device (each at most once; the same pass as hsdag_learn_greedy_fit). *moved = decisions moved. */
HSDAG_API int hsdag_placeto_greedy_fit(hsdag_placeto *P, hsdag_placeto_policy *pol, hsdag_sim *sim,
                                       int32_t *device, int32_t *moved, hsdag_err *e);
/* Best feasible placement measured so far (NULL, INFINITY if none), the measurement that found it (1-based,
 * 0 if none) and the seconds from hsdag_placeto_create to it. Any output may be NULL. */
HSDAG_API void hsdag_placeto_best(const hsdag_placeto *P, const int32_t **device, double *latency_s,
                                  int64_t *at_eval, double *at_s);
HSDAG_API int64_t hsdag_placeto_evals(const hsdag_placeto *P);
HSDAG_API int32_t hsdag_placeto_units(const hsdag_placeto *P);
HSDAG_API const int32_t *
hsdag_placeto_unit_of(const hsdag_placeto *P);                    /* [n_ops] the decision unit of each op */
HSDAG_API int32_t hsdag_placeto_episodes(const hsdag_placeto *P); /* complete episodes learned from */

/* The registry entry (hsdag_place_fn): trains a fresh policy with the defaults for 500 measurements on
 * p->sim (seed o->seed) and writes the best placement (HEFT's when nothing feasible was measured, said in the
 * note). */
HSDAG_API int hsdag_placeto_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                                  hsdag_place_report *r, hsdag_err *e);
/* Adds "placeto" to the placer registry (idempotent; call before threads start, as the CLI's main does). */
HSDAG_API int hsdag_placeto_register_methods(hsdag_err *e);

/* ---- for tests: the policy loss at one state, for finite differences ----
 * The state: a placement drawn from seed, units before `step` marked done, unit `step` current. loss =
 * -log pi(action) - entropy_w H(pi); with grad = 1 the parameter gradient is written to pol's grad block
 * (zeroed first). *action < 0: the most likely device is used and written back. */
HSDAG_API int hsdag_placeto_debug_loss(hsdag_placeto *P, hsdag_placeto_policy *pol, uint64_t seed,
                                       int32_t step, int32_t *action, double entropy_w, int grad,
                                       double *loss, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
