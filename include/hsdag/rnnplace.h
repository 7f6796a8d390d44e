/* rnnplace.h - the RNN placer of Mirhoseini et al. (ICML 2017), the "RNN-based" baseline of the HSDAG paper:
 * a sequence-to-sequence policy over the co-located groups (an LSTM encoder over the group sequence fed with
 * op-type embeddings, output shape and adjacency; an LSTM decoder with additive attention that emits one
 * device per group), trained with REINFORCE and a moving-average baseline.
 * Not here: the LSTM / attention / embedding kernels (nn.h), Placeto (placeto.h), the HSDAG learner
 * (learn.h); the details, and the reward bug of the HSDAG reference's copy of this baseline, are in
 * docs/baselines.md.
 * Entry points: hsdag_rnnplace_config_default, hsdag_rnnplace_create/free/train/best/evals/units/params,
 *   hsdag_rnnplace_place, hsdag_rnnplace_register_methods, hsdag_rnnplace_debug_loss.
 *
 * Usage (error handling shortened):
 *   hsdag_rnnplace_config cfg = hsdag_rnnplace_config_default();     // 500 measurements, reward -sqrt(latency)
 *   hsdag_rnnplace *R; hsdag_place_problem *prob; hsdag_err e = {0};
 *   if (hsdag_place_problem_create(&prob, g, devs, NULL, &e) < 0) return;
 *   hsdag_rnnplace_create(&R, prob, &cfg, &e);
 *   hsdag_rnnplace_train(R, hsdag_learn_sim_eval, prob->sim, cfg.budget, &e);
 *   const int32_t *best; double lat; hsdag_rnnplace_best(R, &best, &lat, NULL, NULL);
 *   hsdag_rnnplace_free(R); hsdag_place_problem_free(prob);
 */
#ifndef HSDAG_RNNPLACE_H
#define HSDAG_RNNPLACE_H

#include "hsdag/learn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reward of one measured placement (latency in ms; an infeasible one counts infeasible_penalty times
 * slower). */
typedef enum hsdag_rnnplace_reward {
    HSDAG_RNNPLACE_REWARD_NEG_SQRT = 0, /* Mirhoseini et al.: R = -sqrt(latency) */
    HSDAG_RNNPLACE_REWARD_INV,          /* R = 1 / latency (HSDAG's own reward) */
    HSDAG_RNNPLACE_REWARD_SQRT_BUG      /* R = +sqrt(latency): the HSDAG reference's RNN baseline, which
                                         * reinforces SLOWER placements; only to reproduce that bug */
} hsdag_rnnplace_reward;
/* "neg-sqrt", "inv", "sqrt-bug" -> the enum; 0 or EINVAL. */
HSDAG_API int hsdag_rnnplace_reward_parse(hsdag_rnnplace_reward *out, const char *s, hsdag_err *e);
HSDAG_API const char *hsdag_rnnplace_reward_name(hsdag_rnnplace_reward r);

typedef struct hsdag_rnnplace_config {
    int64_t budget;               /* measurements (500); used by hsdag_rnnplace_place */
    uint64_t seed;                /* parameters and sampling (1) */
    int32_t hidden;               /* LSTM width (64) */
    int32_t embed;                /* op-type and device embedding width (16) */
    int32_t attn;                 /* attention width (32) */
    int32_t max_units;            /* groups merged to at most this many (256, the hierarchical planner's 256
                                * groups); 0 = one unit per group */
    int no_coarsen;               /* 1: groups are single ops */
    float lr;                     /* Adam learning rate (3e-3) */
    int32_t samples;              /* placements sampled per update (10) */
    double baseline_decay;        /* b <- decay b + (1 - decay) R after every sample (0.9) */
    double entropy;               /* entropy bonus weight (0) */
    hsdag_rnnplace_reward reward; /* NEG_SQRT */
    double infeasible_penalty;    /* 10 */
} hsdag_rnnplace_config;
HSDAG_API hsdag_rnnplace_config hsdag_rnnplace_config_default(void);

typedef struct hsdag_rnnplace hsdag_rnnplace;
/* Groups p's graph and builds the network (parameters from cfg->seed). p is borrowed. Errors: EINVAL (bad
 * config, 0 or > 64 devices), ELIMIT (so many units that the attention cache would pass 64 M floats: set
 * max_units), ENOMEM. */
HSDAG_API int hsdag_rnnplace_create(hsdag_rnnplace **out, hsdag_place_problem *p,
                                    const hsdag_rnnplace_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_rnnplace_free(hsdag_rnnplace *R); /* NULL is a no-op */
/* Samples, measures and updates until max_evals more measurements were made: each update draws cfg.samples
 * placements from one encoder pass (the last update may have fewer) and takes one Adam step on
 * -mean_s (R_s - b) sum_t log pi(a_t) - entropy sum_t H_t. Returns 0 or the oracle's / an internal status. */
HSDAG_API int hsdag_rnnplace_train(hsdag_rnnplace *R, hsdag_learn_eval_fn eval, void *ctx, int64_t max_evals,
                                   hsdag_err *e);
/* The most likely device for every unit in turn (no measurement): device[n_ops]. */
HSDAG_API int hsdag_rnnplace_greedy(hsdag_rnnplace *R, int32_t *device, hsdag_err *e);
/* As hsdag_placeto_best. */
HSDAG_API void hsdag_rnnplace_best(const hsdag_rnnplace *R, const int32_t **device, double *latency_s,
                                   int64_t *at_eval, double *at_s);
HSDAG_API int64_t hsdag_rnnplace_evals(const hsdag_rnnplace *R);
HSDAG_API int32_t hsdag_rnnplace_units(const hsdag_rnnplace *R);
HSDAG_API int32_t hsdag_rnnplace_updates(const hsdag_rnnplace *R);
HSDAG_API const int32_t *hsdag_rnnplace_unit_of(const hsdag_rnnplace *R); /* [n_ops] */
/* The learning curve: mean latency (seconds, infeasible ones times the penalty) of each update's samples. */
HSDAG_API const double *hsdag_rnnplace_curve(const hsdag_rnnplace *R, int32_t *n_updates);
HSDAG_API hsdag_nn_params *hsdag_rnnplace_params(hsdag_rnnplace *R);

/* The registry entry: trains with the defaults for 500 measurements on p->sim (seed o->seed). */
HSDAG_API int hsdag_rnnplace_place(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                                   hsdag_place_report *r, hsdag_err *e);
/* Adds "rnn" to the placer registry (idempotent). */
HSDAG_API int hsdag_rnnplace_register_methods(hsdag_err *e);

/* ---- for tests: the sequence loss for finite differences ----
 * loss = -sum_t log pi(a_t) - entropy_w sum_t H_t over the decoder steps with the devices actions[units]
 * fed back (teacher forcing); actions[0] < 0: they are sampled from seed and written. With grad = 1 the
 * parameter gradient (through decoder, attention and encoder) is written to the grad block (zeroed first). */
HSDAG_API int hsdag_rnnplace_debug_loss(hsdag_rnnplace *R, uint64_t seed, int32_t *actions, double entropy_w,
                                        int grad, double *loss, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
