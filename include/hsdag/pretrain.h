/* pretrain.h - one policy for many graphs: trains one HSDAG or Placeto policy over a set of graphs, keeps it in
 * a policy file, and places an unseen graph with it in one forward pass (no measurement) or by fine-tuning it
 * with a budget of measurements. Shipped policies (one per device preset, and for some presets an ensemble
 * trained under a memory cap) are found by hsdag_policy_find and hsdag_policy_find_shipped.
 * Not here: the learners themselves (learn.h, placeto.h); the policies' features are already independent of
 * the graph's size and of its op types (unseen ops share the vocabulary's "other" slot).
 * Entry points: hsdag_pretrain_config_default, hsdag_pretrain_train, hsdag_policy_save/load/free/find,
 *   hsdag_policy_find_shipped,
 *   hsdag_policy_method/devices/preset/note, hsdag_policy_place, hsdag_policy_place_ensemble.
 *
 * Usage (error handling shortened):
 *   hsdag_pretrain_config cfg = hsdag_pretrain_config_default();      // HSDAG: imitation, 1 round
 *   hsdag_policy *pol; hsdag_place_problem *probs[1], *unseen; hsdag_err e = {0};
 *   if (hsdag_place_problem_create(&probs[0], g, devs, NULL, &e) < 0) return; // one per training graph
 *   hsdag_pretrain_train(&pol, probs, 1, &cfg, NULL, NULL, &e);
 *   hsdag_buf b = {0}; hsdag_policy_save(pol, &b, &e);                 // write b to a file
 *   unseen = probs[0];                                                 // a graph it was not trained on
 *   int32_t *dev = calloc((size_t)unseen->n, sizeof *dev); hsdag_policy_result r;
 *   hsdag_policy_place(pol, unseen, 0, 1, hsdag_learn_sim_eval, unseen->sim, dev, &r, &e); // zero-shot
 *   free(dev); hsdag_free(b.data); hsdag_policy_free(pol); hsdag_place_problem_free(probs[0]);
 */
#ifndef HSDAG_PRETRAIN_H
#define HSDAG_PRETRAIN_H

#include "hsdag/learn.h"
#include "hsdag/placeto.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hsdag_policy_method {
    HSDAG_POLICY_HSDAG = 0, /* the HSDAG learner's network (learn.h) */
    HSDAG_POLICY_PLACETO    /* Placeto's (placeto.h) */
} hsdag_policy_method;
HSDAG_API const char *hsdag_policy_method_name(hsdag_policy_method m); /* "hsdag", "placeto" */
HSDAG_API int hsdag_policy_method_parse(hsdag_policy_method *out, const char *s, hsdag_err *e);

typedef struct hsdag_pretrain_config {
    hsdag_policy_method method; /* HSDAG */
    hsdag_learn_config hsdag;   /* the HSDAG learner (episodes ignored: one per graph per round); the default:
                                   * one decision per group (levels 0), features | HSDAG_LEARN_FEAT_COST */
    hsdag_placeto_config placeto; /* Placeto (budget ignored: one episode per graph per round) */
    int32_t rounds;               /* passes over the graphs, in an order shuffled per round from seed (1) */
    /* HSDAG: 1 = before round 0, imitation rounds: each graph's target is its hsdag_learn_warm_start
     * placement (the best of its heuristics and, under a memory cap or on more than two devices, the
     * iteration-budgeted MILP; each training graph's own, with its simulator; a graph without a feasible one
     * is not imitated), then imitate_rounds passes over the graphs in a shuffled order, imitate_steps
     * cross-entropy steps on each per pass (1) */
    int warm_start;
    int32_t imitate_rounds; /* (50; Placeto: no warm start) */
    int32_t imitate_steps;  /* (2) */
    uint64_t seed;          /* the order (1) */
} hsdag_pretrain_config;
HSDAG_API hsdag_pretrain_config hsdag_pretrain_config_default(void);

/* A trained policy: the method, its network settings, the device count, and the parameters. */
typedef struct hsdag_policy hsdag_policy;

/* After every (round, graph) episode: latency_s is the best feasible latency found on that graph so far
 * (INFINITY if none); with warm_start, first once per graph with round -1 and its imitation target's latency.
 * Return nonzero to stop (hsdag_pretrain_train then returns 1 with the policy so far). */
typedef int (*hsdag_pretrain_progress_fn)(void *ctx, int32_t round, int32_t graph, double latency_s);

/* Trains one policy over probs[n] (all with the same number of devices; EINVAL otherwise). Each round runs
 * one episode on every graph, in a shuffled order, each continuing the same parameters and Adam state.
 * The simulator of each problem is the reward. Returns 0, 1 (stopped by progress) or a status. */
HSDAG_API int hsdag_pretrain_train(hsdag_policy **out, hsdag_place_problem *const *probs, int32_t n,
                                   const hsdag_pretrain_config *cfg, hsdag_pretrain_progress_fn progress,
                                   void *pctx, hsdag_err *e);
HSDAG_API void hsdag_policy_free(hsdag_policy *pol); /* NULL is a no-op */

HSDAG_API hsdag_policy_method hsdag_policy_method_of(const hsdag_policy *pol);
HSDAG_API int32_t hsdag_policy_devices(const hsdag_policy *pol);
/* The device preset (or file) name the policy was trained for, and a free-form note (the training command);
 * set_meta copies them (NULL keeps the old value). */
HSDAG_API const char *hsdag_policy_preset(const hsdag_policy *pol);
HSDAG_API const char *hsdag_policy_note(const hsdag_policy *pol);
HSDAG_API int hsdag_policy_set_meta(hsdag_policy *pol, const char *preset, const char *note, hsdag_err *e);

/* Policy file (little-endian): magic "HSDAGPOL", version u32, method u32, devices u32, the network settings,
 * preset and note (u32 length + bytes each), the tensor count u32 and a fingerprint u64 of the tensor table
 * (names and shapes), the value count u64 and the float32 values (no optimiser state: fine-tuning starts a
 * fresh Adam), then an FNV-1a 64 checksum of everything before it. */
HSDAG_API int hsdag_policy_save(const hsdag_policy *pol, hsdag_buf *out, hsdag_err *e);
/* EPARSE naming what is wrong (magic, version, truncation, checksum), ENOMEM. `what` names the input. */
HSDAG_API int hsdag_policy_load(hsdag_policy **out, const void *buf, size_t len, const char *what,
                                hsdag_err *e);
HSDAG_API int hsdag_policy_read_file(hsdag_policy **out, const char *path, hsdag_err *e);
/* The shipped policy of a method for a device preset: policies/<method>/<preset>.bin on the data path
 * (hsdag_data_find). EIO if there is none, or if preset is no file name (a device file's "../x"). */
HSDAG_API int hsdag_policy_find(char *path, size_t cap, hsdag_policy_method m, const char *preset,
                                hsdag_err *e);
/* The most policies one ensemble takes (place --policy A,B,...; a shipped capped ensemble). */
#define HSDAG_POLICY_MAX_ENSEMBLE 16
/* The shipped policies for problem p: *n file paths in list (cap bytes), each NUL-terminated, one after the
 * other (an ensemble when *n > 1; paths may hold commas). The preset's policy is hsdag_policy_find's file;
 * when p's caps bind on an accelerator (hsdag_place_caps_bind: it cannot run the whole model alone) and that
 * file's directory holds them, the ensemble trained under a cap instead: <preset>.capped.<i>.bin for i = 0,
 * 1, ... up to the first missing one (at most HSDAG_POLICY_MAX_ENSEMBLE). *capped (may be NULL): 1 = the capped ensemble, -1 = the
 * caps bind on an accelerator but there is none (the list is the uncapped policy), 0 = they do not. EIO if
 * there is no policy (or a member cannot be checked), EINVAL if list is too short, ENOMEM; *n is then 0 or
 * partial. Runs p's simulator (hsdag_place_caps_bind). */
HSDAG_API int hsdag_policy_find_shipped(char *list, size_t cap, int32_t *n, int *capped,
                                        hsdag_policy_method m, hsdag_place_problem *p, hsdag_err *e);

/* The JSON document of one 'hsdag train --graphs' run ("hsdag-pretraining-run/1"; keys: docs/formats.md).
 * models[n] and best_s[n] (the best latency seen during training per graph, INFINITY = none feasible). */
typedef struct hsdag_pretrain_json_info {
    const char *method, *devices, *policy, *out_dir;
    long long seed;
    int32_t rounds, n;
    const char *const *models;
    const double *best_s;
    double wall_s;
} hsdag_pretrain_json_info;
/* Appends the document to out: 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_pretrain_run_write_json(hsdag_buf *out, const hsdag_pretrain_json_info *info);

typedef struct hsdag_policy_result {
    int64_t evals;       /* measurements made (0 for a zero-shot placement) */
    double greedy_s;     /* latency of the one-pass placement (NAN when not measured: budget 0) */
    int greedy_feasible; /* its verdict (when measured) */
    double best_s;       /* the returned placement's measured latency (NAN with budget 0) */
    int64_t best_at;     /* the measurement that found it (1 = the one-pass placement; 0 with budget 0) */
    int32_t fit_moved;   /* decisions the one-pass placement moved to fit the memory caps
                          * (hsdag_learn_greedy_fit, hsdag_placeto_greedy_fit) */
} hsdag_policy_result;

/* Places p with the policy. budget 0: one forward pass, the most likely device everywhere, nothing measured
 * (zero-shot); HSDAG then fits it under the memory caps with p's simulator's memory walk
 * (hsdag_learn_greedy_fit: no latency is read). budget N > 0: the one-pass placement is measured first, then a copy of the policy is
 * fine-tuned on p with the remaining measurements (HSDAG: whole episodes of cfg steps, then what is left
 * drawn from the fine-tuned policy: exactly N measurements; Placeto: its episodes), and the best measured placement is returned. device[p->n]. The policy itself is not changed.
 * Errors: EINVAL (the policy was made for another device count), the oracle's, ENOMEM. */
HSDAG_API int hsdag_policy_place(const hsdag_policy *pol, hsdag_place_problem *p, int64_t budget,
                                 uint64_t seed, hsdag_learn_eval_fn eval, void *ctx, int32_t *device,
                                 hsdag_policy_result *r, hsdag_err *e);

/* hsdag_policy_place with an ensemble of m HSDAG policies (1 to 64) of one network (the same devices,
 * features, levels and tensors; e.g. 'train --graphs' with several seeds): the one-pass placement decides
 * every group on the normalised mean of the members' log-probabilities (hsdag_learn_greedy_fit_mean), then
 * fits it as hsdag_policy_place does; with budget N > 0 that placement is the first measurement and pols[0]
 * is the one fine-tuned. m = 1 is hsdag_policy_place. EINVAL: Placeto members, other networks. */
HSDAG_API int hsdag_policy_place_ensemble(const hsdag_policy *const *pols, int32_t m, hsdag_place_problem *p,
                                          int64_t budget, uint64_t seed, hsdag_learn_eval_fn eval, void *ctx,
                                          int32_t *device, hsdag_policy_result *r, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
