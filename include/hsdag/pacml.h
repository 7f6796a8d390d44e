/* pacml.h - the learned PAC-ML policy: the spec's mean-pool GNN (2 rounds over node, edge and graph
 *   features) with policy and value heads on the shared NN core, a PPO trainer, and policy files.
 * Not here: the RAMP cluster environment (cluster.h). The learner never sees it: it steps any environment
 *   through the plain-data interface below (hsdag_pacml_job, hsdag_pacml_obs, hsdag_pacml_env callbacks),
 *   which the cluster module fills (hsdag_cluster_pacml_env); the NN kernels (nn.h); any CLI printing.
 * Entry points: hsdag_pacml_net_* (network, act, loss), hsdag_pacml_gae, hsdag_pacml_episode,
 *   hsdag_pacml_trainer_* (PPO), hsdag_pacml_policy_* (policy files, lookup of shipped policies).
 *
 * Usage (with the RAMP environment of cluster.h; error handling shortened):
 *   hsdag_err e = {0};
 *   hsdag_pacml_env pe; hsdag_cluster_pacml_env(&pe, env);       // callbacks over an hsdag_cluster
 *   hsdag_pacml_train_config tc = hsdag_pacml_train_config_default();
 *   hsdag_pacml_trainer *t;
 *   if (hsdag_pacml_trainer_create(&t, &pe, &tc, &e) < 0) return;
 *   hsdag_pacml_iter_stats st;
 *   while (hsdag_pacml_trainer_iteration(t) < tc.iterations) hsdag_pacml_trainer_iterate(t, &st, &e);
 *   hsdag_buf pol = {0}; hsdag_pacml_trainer_save_best(t, &pol, &e);   // a policy file image
 *   hsdag_pacml_trainer_free(t);
 *
 * The network (docs/pacml-learning.md, /work spec pacml.md section 2):
 *   round r = 1, 2 over the job graph (2n nodes, edges src -> dst):
 *     a_v = ReLU(Lin(LN(z_v)) -> 16)  (node module),  b_e = ReLU(Lin(LN(x_e)) -> 16) (edge module)
 *     messages into v: [a_src(e) | b_e] for every edge e into v, plus the self message [a_v | 0]
 *     z'_v = mean over v's messages of ReLU(Lin(LN32(message)) -> 64 (round 1) or 16 (round 2))
 *   readout: emb = [mean_v z''_v (16) | Lin(LN34(graph features ++ action mask)) -> 8]   (24)
 *   policy:  logits = Lin(ReLU(Lin(emb) -> 256)) -> 17; log(mask) added (masked = -inf)
 *   value:   v = Lin(ReLU(Lin(emb) -> 256)) -> 1, in units of 1 / (1 - gamma) (returns are scaled)
 * Node and edge features are fixed per job model, so the GNN part depends only on (model, params):
 * it is computed once per model and parameter version and shared by every decision of that model
 * (exact, not an approximation); gradients of all samples of a model are summed before one GNN
 * backward pass.
 */
#ifndef HSDAG_PACML_H
#define HSDAG_PACML_H

#include "hsdag/graph.h"
#include "hsdag/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HSDAG_PACML_EMB 24 /* 16 pooled node embedding + 8 graph module */

/* ---- what the learner sees of an environment ---- */
#define HSDAG_PACML_MAX_DEGREE 16                          /* largest partition degree an action asks for */
#define HSDAG_PACML_N_ACTIONS (HSDAG_PACML_MAX_DEGREE + 1) /* 0 = do not place, 1..16 = max degree */
#define HSDAG_PACML_NODE_FEATS 5
#define HSDAG_PACML_EDGE_FEATS 2
#define HSDAG_PACML_GRAPH_FEATS 17 /* followed by the action mask */
#define HSDAG_PACML_OBS_FEATS (HSDAG_PACML_GRAPH_FEATS + HSDAG_PACML_N_ACTIONS) /* 34 */

/* A job model the network embeds; the network copies what it needs at create time. */
typedef struct hsdag_pacml_job {
    const char *name;
    const hsdag_graph *g;   /* the job graph: its edges (edge_src -> out_dst) carry the messages */
    const float *node_feat; /* [g->n_nodes * HSDAG_PACML_NODE_FEATS] */
    const float *edge_feat; /* [g->n_edges * HSDAG_PACML_EDGE_FEATS], in edge-id order */
} hsdag_pacml_job;

/* One decision: which job model is waiting, which actions are valid, and the graph features. */
typedef struct hsdag_pacml_obs {
    int32_t model;                           /* index into the environment's jobs */
    uint8_t mask[HSDAG_PACML_N_ACTIONS];     /* valid actions (mask[0] = 1) */
    float graph_feat[HSDAG_PACML_OBS_FEATS]; /* 17 graph features ++ the 17-value mask */
} hsdag_pacml_obs;

/* The policy's action mask (its log(mask) is added to the logits; the same 17 values replace the mask part
 * of the graph features, so the network sees what it may choose):
 *  SPEC      - the environment's mask: {0} + {1,2,4,6,8,16} up to the free workers (pacml.md section 1);
 *  PLACE     - SPEC and the RAMP first-fit placer finds a block now (hsdag_cluster_try_place), so no
 *              "no block" failures are chosen blindly: the spec's observation cannot show fragmentation;
 *  PLACE_JCT - PLACE and the cached lookahead JCT meets the job's deadline (jct[a] <= beta JCT_seq).
 * Action 0 (do not place) is always allowed. PLACE and PLACE_JCT are our additions
 * (docs/pacml-learning.md). The environment applies the mask (hsdag_pacml_env.observe). */
typedef enum hsdag_pacml_mask_mode {
    HSDAG_PACML_MASK_SPEC = 0,
    HSDAG_PACML_MASK_PLACE = 1,
    HSDAG_PACML_MASK_PLACE_JCT = 2
} hsdag_pacml_mask_mode;
/* Parses "spec", "place", "place-jct" into *out; returns 0 or HSDAG_EINVAL (message in e). */
HSDAG_API int hsdag_pacml_mask_parse(hsdag_pacml_mask_mode *out, const char *s, hsdag_err *e);

/* An environment the trainer and hsdag_pacml_episode step: plain data plus callbacks on ctx (borrowed, must
 * outlive every user). The RAMP cluster fills one with hsdag_cluster_pacml_env (cluster.h); a test can
 * write its own. Episodes are deterministic in the seed given to reset. */
struct hsdag_pacml_xobs;
typedef struct hsdag_pacml_env {
    void *ctx;
    int32_t n_jobs;
    const hsdag_pacml_job *jobs; /* [n_jobs], valid as long as ctx */
    char beta;                   /* the training distribution, recorded in policy files ('A'..'D') */
    int time_unit_fix;           /* likewise (0 or 1) */
    void (*reset)(void *ctx, uint64_t seed); /* starts an episode */
    int (*done)(void *ctx);                  /* 1 once the episode has ended */
    /* the current decision with the mask of mode; called only while !done */
    void (*observe)(void *ctx, hsdag_pacml_mask_mode mode, hsdag_pacml_obs *o);
    /* applies a valid action; *reward = +1 / -1; returns 0 or a negative status */
    int (*step)(void *ctx, int action, double *reward);
    /* after done: the episode's blocking rate and return (sum of rewards) */
    void (*episode_end)(void *ctx, double *blocking_rate, double *ret);
    /* Optional (NULL / 0 = none; the DQN needs them, PPO ignores them): features the spec's observation lacks,
     * n_xstate per decision and n_xaction per action (at most HSDAG_PACML_XSTATE_MAX / _XACTION_MAX), with
     * the spec's observation and mask of mode in x->o. possible[a] = 1 for the actions that can ever be
     * valid (the DQN keeps features for those only; all 0 = every action). */
    int32_t n_xstate, n_xaction;
    uint8_t possible[HSDAG_PACML_N_ACTIONS];
    void (*observe_x)(void *ctx, hsdag_pacml_mask_mode mode, struct hsdag_pacml_xobs *x);
} hsdag_pacml_env;

/* A decision with the extended features (hsdag_pacml_env.observe_x). */
#define HSDAG_PACML_XSTATE_MAX 640 /* enough for the per-server features of a 512-server cluster */
#define HSDAG_PACML_XACTION_MAX 32
typedef struct hsdag_pacml_xobs {
    hsdag_pacml_obs o;
    float state[HSDAG_PACML_XSTATE_MAX];
    float action[HSDAG_PACML_N_ACTIONS][HSDAG_PACML_XACTION_MAX]; /* rows of masked actions are unused */
} hsdag_pacml_xobs;

/* ---- network ---- */
typedef struct hsdag_pacml_net_config {
    int32_t fc_hidden; /* width of the policy and value hidden layers (256, the spec's fcnet_hiddens) */
    int32_t msg_half;  /* width of the node and edge modules (16 = out_features_msg / 2) */
    int32_t hidden1;   /* reduce output of round 1 (64) */
    int32_t node_out;  /* reduce output of round 2 = pooled node embedding (16) */
    int32_t graph_out; /* graph module output (8) */
    hsdag_pacml_mask_mode mask_mode; /* which actions the policy may take (SPEC = the spec's mask) */
} hsdag_pacml_net_config;
HSDAG_API hsdag_pacml_net_config hsdag_pacml_net_config_default(void);

typedef struct hsdag_pacml_net hsdag_pacml_net;

/* Builds the network for jobs[n_jobs] (their graph structure and node/edge features are copied once) and
 * initialises the parameters from seed. c NULL = the defaults. Returns 0, EINVAL (bad config) or ENOMEM. */
HSDAG_API int hsdag_pacml_net_create(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                                     const hsdag_pacml_net_config *c, uint64_t seed, hsdag_err *e);
HSDAG_API void hsdag_pacml_net_free(hsdag_pacml_net *n);
HSDAG_API hsdag_nn_params *hsdag_pacml_net_params(hsdag_pacml_net *n);
HSDAG_API const hsdag_pacml_net_config *hsdag_pacml_net_config_get(const hsdag_pacml_net *n);
/* Call after changing parameter values (Adam step, load): the cached per-model embeddings are stale. */
HSDAG_API void hsdag_pacml_net_touch(hsdag_pacml_net *n);

/* One observation: lp (17) log-probabilities (masked actions -inf) and *value (raw head units: the
 * trainer scales rewards by (1 - gamma), so value * 1 / (1 - gamma) estimates the discounted return). */
HSDAG_API void hsdag_pacml_net_eval(hsdag_pacml_net *n, const hsdag_pacml_obs *o, float *lp, float *value);
/* Picks an action for an observation (its mask is final): greedy = 1 takes the most probable valid action
 * (evaluation), else samples one (one rng draw). Never returns a masked action. */
HSDAG_API int hsdag_pacml_net_act(hsdag_pacml_net *n, const hsdag_pacml_obs *o, int greedy, hsdag_rng *rng);
/* One episode of env with the net acting on observations of its own mask mode: reset(seed), then act and
 * step until done (greedy = 0 samples with an rng seeded from seed). Returns 0 or the step's status. */
HSDAG_API int hsdag_pacml_episode(const hsdag_pacml_env *env, hsdag_pacml_net *n, int greedy, uint64_t seed,
                                  hsdag_err *e);

/* ---- PPO loss on a batch of samples (exposed for the gradient test) ---- */
typedef struct hsdag_pacml_sample {
    int32_t model;                      /* job model index */
    int32_t action;                     /* taken action (valid under mask) */
    float gfeat[HSDAG_PACML_OBS_FEATS]; /* 17 graph features ++ mask */
    uint8_t mask[HSDAG_PACML_N_ACTIONS];
    float lp_old[HSDAG_PACML_N_ACTIONS]; /* behaviour log-probs (-inf masked) */
    float v_old;                         /* behaviour value (raw head units) */
    float adv;                           /* advantage (already standardised) */
    float ret;                           /* value target (raw head units) */
    float reward;                        /* +1 / -1 */
} hsdag_pacml_sample;

typedef struct hsdag_pacml_loss_config {
    float clip;      /* PPO ratio clip epsilon (0.18, tuned config) */
    float vf_coeff;  /* value loss weight (0.5) */
    float ent_coeff; /* entropy bonus weight (0.003) */
    float kl_coeff;  /* weight of KL(old || new) (0.01; adapted by the trainer) */
} hsdag_pacml_loss_config;

typedef struct hsdag_pacml_loss_stats {
    double loss, policy_loss, value_loss, entropy, kl, clip_frac;
} hsdag_pacml_loss_stats;

/* Loss of samples idx[0..m) (idx NULL = 0..m):  L = -mean(min(r A, clip(r, 1-eps, 1+eps) A))
 *   + vf * mean(0.5 (v - ret)^2) - ent * mean(H) + kl * mean(KL(old || new)),  r = exp(lp(a) - lp_old(a)).
 * grad != 0: zeroes the parameter gradients and writes dL/dtheta into the params' grad block.
 * Returns 0 or ENOMEM (scratch growth on a larger batch than before). */
HSDAG_API int hsdag_pacml_net_loss(hsdag_pacml_net *n, const hsdag_pacml_loss_config *c,
                                   const hsdag_pacml_sample *s, const int32_t *idx, int32_t m, int grad,
                                   hsdag_pacml_loss_stats *st, hsdag_err *e);

/* Generalised advantage estimation over one episode of len steps (terminal at the end, V = 0 after it):
 * delta_t = r_t + gamma v_{t+1} - v_t, A_t = delta_t + gamma lambda A_{t+1}, ret_t = A_t + v_t. */
HSDAG_API void hsdag_pacml_gae(const float *reward, const float *value, int32_t len, double gamma,
                               double lambda, float *adv, float *ret);

/* ---- PPO trainer ---- */
typedef struct hsdag_pacml_train_config {
    uint64_t seed;             /* network init, sampling, minibatch order and training episodes */
    int32_t iterations;        /* PPO iterations (default 60) */
    int32_t episodes_per_iter; /* full 1001-job episodes collected per iteration (default 4: ~4000 steps) */
    int32_t epochs;            /* SGD passes over the iteration's batch (default 8; tuned RLlib config: 50) */
    int32_t minibatch;         /* samples per Adam step (128) */
    double gamma;              /* 0.997 */
    double lambda;             /* GAE lambda (0.95) */
    float lr;                  /* Adam learning rate (2.785e-4) */
    float grad_clip;           /* global gradient norm clip (1.5) */
    float kl_target;           /* adaptive KL target (0.001, tuned); <= 0 keeps kl_coeff fixed */
    hsdag_pacml_loss_config loss;
    int32_t eval_episodes; /* greedy evaluation episodes per iteration on seeds 1799, 1800, ... (3) */
    hsdag_pacml_net_config net;
} hsdag_pacml_train_config;
HSDAG_API hsdag_pacml_train_config hsdag_pacml_train_config_default(void);

/* One row of the learning curve. */
typedef struct hsdag_pacml_iter_stats {
    int32_t iteration;     /* 1-based */
    int64_t steps;         /* decisions collected so far */
    double train_blocking; /* mean blocking rate of the iteration's (sampled) training episodes */
    double train_return;   /* mean episode return (accepted - rejected at decision) */
    double eval_blocking;  /* mean greedy blocking rate on the evaluation seeds */
    double entropy, value_loss, policy_loss, kl, kl_coeff, clip_frac, grad_norm;
    double wall_s; /* since the trainer was created (includes resumed time) */
} hsdag_pacml_iter_stats;

typedef struct hsdag_pacml_trainer hsdag_pacml_trainer;
/* env is copied; its ctx is borrowed and must outlive the trainer. env->beta and env->time_unit_fix are
 * recorded in the policy images. */
HSDAG_API int hsdag_pacml_trainer_create(hsdag_pacml_trainer **out, const hsdag_pacml_env *env,
                                         const hsdag_pacml_train_config *c, hsdag_err *e);
HSDAG_API void hsdag_pacml_trainer_free(hsdag_pacml_trainer *t);
/* Runs one PPO iteration (collect, GAE, epochs of minibatch Adam, adapt KL, greedy evaluation). */
HSDAG_API int hsdag_pacml_trainer_iterate(hsdag_pacml_trainer *t, hsdag_pacml_iter_stats *st, hsdag_err *e);
HSDAG_API int32_t hsdag_pacml_trainer_iteration(const hsdag_pacml_trainer *t); /* iterations done */
HSDAG_API hsdag_pacml_net *hsdag_pacml_trainer_net(hsdag_pacml_trainer *t);
/* Best evaluation blocking rate so far and a policy image of that network (hsdag_pacml_policy_save
 * format). */
HSDAG_API double hsdag_pacml_trainer_best(const hsdag_pacml_trainer *t, int32_t *best_iter);
HSDAG_API int hsdag_pacml_trainer_save_best(const hsdag_pacml_trainer *t, hsdag_buf *out, hsdag_err *e);
/* Full training state (network + Adam, best snapshot, RNG, counters, KL coefficient, the configuration field
 * by field): a codec frame "HSPACPP\0" v2 followed by the parameter image. */
HSDAG_API int hsdag_pacml_trainer_save(const hsdag_pacml_trainer *t, hsdag_buf *out, hsdag_err *e);
/* Creates a trainer from a state saved by hsdag_pacml_trainer_save (same build; env made with the same
 * configuration); it continues bit-identically. iterations >= 0 replaces the saved total. EPARSE if
 * corrupt or truncated, ENOMEM. */
HSDAG_API int hsdag_pacml_trainer_restore(hsdag_pacml_trainer **out, const hsdag_pacml_env *env,
                                          const void *buf, size_t len, int32_t iterations, hsdag_err *e);
/* Total iterations the trainer was configured for. */
HSDAG_API int32_t hsdag_pacml_trainer_total(const hsdag_pacml_trainer *t);
HSDAG_API const hsdag_pacml_train_config *hsdag_pacml_trainer_config(const hsdag_pacml_trainer *t);
/* The name of the first field in which a and b differ ("seed", "lr", "hidden", "mask", ...; the option
 * names of `hsdag cluster train`), or NULL if they are equal. */
HSDAG_API const char *hsdag_pacml_train_config_diff(const hsdag_pacml_train_config *a,
                                                    const hsdag_pacml_train_config *b);
/* The "hsdag-cluster-training-run/1" document (src/learn/run_json.c; docs/formats.md, "Result JSON"):
 * algo "ppo", beta, the trainer's seed, iterations done, training episodes, decisions collected (last->steps), the best greedy evaluation and
 * its iteration, wall time (last->wall_s) and the run directory. */
HSDAG_API int hsdag_pacml_run_write_json(hsdag_buf *out, const hsdag_pacml_trainer *t, char beta,
                                         const hsdag_pacml_iter_stats *last, const char *out_dir);

/* ---- DQN: a Q-network on the same GNN, with the environment's extended features ---- */
/* Q(s, a) = head([pool(model) | graph module(34 spec features) | xstate | one-hot(a) | xaction(a)]), the head
 * LN -> Linear(h1) -> ReLU -> Linear(h2) -> ReLU -> Linear(1), shared by every action (docs/pacml-learning.md).
 * The GNN (pool) and the graph module are the spec's, as in the PPO network. */
typedef struct hsdag_pacml_qnet_config {
    int32_t msg_half, hidden1, node_out, graph_out; /* GNN and graph module widths (16, 64, 16, 8) */
    int32_t n_xstate, n_xaction;                    /* the environment's extended features */
    int32_t h1, h2;                                 /* head widths (128, 64) */
    hsdag_pacml_mask_mode mask_mode;                /* the actions the policy may take (PLACE_JCT) */
} hsdag_pacml_qnet_config;
HSDAG_API hsdag_pacml_qnet_config hsdag_pacml_qnet_config_default(void); /* n_xstate = n_xaction = 0 */

typedef struct hsdag_pacml_qnet hsdag_pacml_qnet;
HSDAG_API int hsdag_pacml_qnet_create(hsdag_pacml_qnet **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                                      const hsdag_pacml_qnet_config *c, uint64_t seed, hsdag_err *e);
HSDAG_API void hsdag_pacml_qnet_free(hsdag_pacml_qnet *n);
HSDAG_API hsdag_nn_params *hsdag_pacml_qnet_params(hsdag_pacml_qnet *n);
HSDAG_API const hsdag_pacml_qnet_config *hsdag_pacml_qnet_config_get(const hsdag_pacml_qnet *n);
/* Call after changing parameter values (Adam step, load, copy): the cached embeddings are stale. */
HSDAG_API void hsdag_pacml_qnet_touch(hsdag_pacml_qnet *n);

/* A batch of Q evaluations in plain data: n_samples decisions (model, 34 spec features, n_xstate extended
 * state features each) and rows (sample, action, n_xaction features) to evaluate. */
typedef struct hsdag_pacml_qbatch {
    int32_t n_samples;
    const int32_t *model; /* [n_samples] */
    const float *gfeat;   /* [n_samples * HSDAG_PACML_OBS_FEATS] */
    const float *xstate;  /* [n_samples * n_xstate] */
    int32_t n_rows;
    const int32_t *row_sample; /* [n_rows] */
    const int32_t *row_action; /* [n_rows] */
    const float *xaction;      /* [n_rows * n_xaction] */
} hsdag_pacml_qbatch;
/* q[n_rows]. 0 or ENOMEM. */
HSDAG_API int hsdag_pacml_qnet_forward(hsdag_pacml_qnet *n, const hsdag_pacml_qbatch *b, float *q,
                                       hsdag_err *e);
/* L = sum_r weight[r] * 0.5 * (q[r] - target[r])^2 / n_rows over the batch's rows (weight NULL = 1); *loss
 * (optional) gets L, td[r] (optional) q[r] - target[r]. grad != 0: zeroes the parameter gradients and
 * writes dL/dtheta (every tensor, the GNN's too). 0 or ENOMEM. */
HSDAG_API int hsdag_pacml_qnet_loss(hsdag_pacml_qnet *n, const hsdag_pacml_qbatch *b, const float *target,
                                    const float *weight, int grad, double *loss, float *td, hsdag_err *e);
/* Q-values of one decision (q[a] = -inf for masked a) and the greedy action: the masked argmax (ties to the
 * smaller action). Returns the action, or 0 when out of memory. */
HSDAG_API int hsdag_pacml_qnet_act(hsdag_pacml_qnet *n, const hsdag_pacml_xobs *x, float *q);
/* One greedy episode of env (which must have observe_x with the net's feature sizes). 0 or a status. */
HSDAG_API int hsdag_pacml_qnet_episode(const hsdag_pacml_env *env, hsdag_pacml_qnet *n, uint64_t seed,
                                       hsdag_err *e);

/* DQN trainer: epsilon-greedy episodes, n-step double-Q targets from a target network, a replay buffer
 * (uniform or proportional prioritised, as Ape-X), Adam; greedy evaluation on seeds 1799.. keeps the best. */
typedef struct hsdag_pacml_dqn_config {
    uint64_t seed;           /* initial weights, exploration, replay sampling, training episodes */
    int32_t episodes;        /* training episodes in total */
    int32_t eval_every;      /* episodes per iteration; each iteration ends with a greedy evaluation */
    int32_t eval_episodes;   /* greedy evaluation episodes (seeds 1799, 1800, ...) */
    double gamma;            /* discount per decision (0.99) */
    int32_t n_step;          /* n-step returns (3, the paper's Ape-X) */
    float lr, lr_end;        /* Adam learning rate, decayed linearly to lr * lr_end over the run */
    float grad_clip;         /* global gradient norm clip (10) */
    int32_t batch;           /* transitions per update (64) */
    int32_t train_every;     /* decisions per update (2) */
    int32_t replay;          /* replay capacity in decisions (100,000) */
    int32_t learning_starts; /* decisions before the first update (5,000) */
    int32_t target_every;    /* updates between target-network copies (2,000) */
    float per_alpha;         /* prioritised replay exponent (0 = uniform) */
    float per_beta;          /* importance-weight exponent at the start, annealed to 1 */
    float eps_start, eps_end;
    int64_t eps_decay; /* decisions over which epsilon falls linearly */
    hsdag_pacml_qnet_config net;
} hsdag_pacml_dqn_config;
HSDAG_API hsdag_pacml_dqn_config hsdag_pacml_dqn_config_default(void);

typedef struct hsdag_pacml_dqn_stats {
    int32_t iteration;     /* 1-based */
    int64_t episodes;      /* training episodes so far */
    int64_t steps;         /* decisions so far */
    int64_t updates;       /* Adam steps so far */
    double train_blocking; /* mean blocking rate of the iteration's (epsilon-greedy) episodes */
    double eval_blocking;  /* mean greedy blocking rate on the evaluation seeds */
    double epsilon;        /* at the end of the iteration */
    double loss;           /* mean TD loss of the iteration's updates (scaled reward units^2) */
    double q_mean;         /* mean Q of the taken actions in the updates, in return units */
    double lr;
    double wall_s; /* since the trainer was created */
} hsdag_pacml_dqn_stats;

typedef struct hsdag_pacml_dqn hsdag_pacml_dqn;
/* env is copied (its ctx borrowed) and must have observe_x; c->net's feature sizes are taken from env. */
HSDAG_API int hsdag_pacml_dqn_create(hsdag_pacml_dqn **out, const hsdag_pacml_env *env,
                                     const hsdag_pacml_dqn_config *c, hsdag_err *e);
HSDAG_API void hsdag_pacml_dqn_free(hsdag_pacml_dqn *t);
/* One iteration: eval_every episodes with their updates, then the greedy evaluation. */
HSDAG_API int hsdag_pacml_dqn_iterate(hsdag_pacml_dqn *t, hsdag_pacml_dqn_stats *st, hsdag_err *e);
HSDAG_API int32_t hsdag_pacml_dqn_iteration(const hsdag_pacml_dqn *t);
HSDAG_API int32_t hsdag_pacml_dqn_total(const hsdag_pacml_dqn *t); /* iterations of the configured episodes */
HSDAG_API hsdag_pacml_qnet *hsdag_pacml_dqn_net(hsdag_pacml_dqn *t);
HSDAG_API double hsdag_pacml_dqn_best(const hsdag_pacml_dqn *t, int32_t *best_iter);
/* The policy file image of the best network so far (hsdag_pacml_qpolicy_save). */
HSDAG_API int hsdag_pacml_dqn_save_best(const hsdag_pacml_dqn *t, hsdag_buf *out, hsdag_err *e);
/* The "hsdag-cluster-training-run/1" document of a DQN run (src/learn/run_json.c): algo "dqn", also its
 * training episodes; the seed is the config's. */
HSDAG_API int hsdag_pacml_dqn_run_write_json(hsdag_buf *out, const hsdag_pacml_dqn *t,
                                             const hsdag_pacml_dqn_config *c, char beta,
                                             const hsdag_pacml_dqn_stats *last, const char *out_dir);

/* DQN policy files: magic "HSPACDQN", version, beta, time-unit fix, the Q-network config, the tensor table,
 * float32 values, FNV-1a 64 checksum. */
HSDAG_API int hsdag_pacml_qpolicy_save(const hsdag_pacml_qnet *n, char beta, int time_unit_fix,
                                       hsdag_buf *out, hsdag_err *e);
/* Parses a DQN policy image for jobs[n_jobs]; `what` names it in messages. EPARSE or ENOMEM. */
HSDAG_API int hsdag_pacml_qpolicy_parse(hsdag_pacml_qnet **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                                        const void *buf, size_t len, const char *what, char *beta_out,
                                        int *tuf_out, hsdag_err *e);
/* 1 if buf starts like a DQN policy file (its magic), else 0. */
HSDAG_API int hsdag_pacml_qpolicy_is(const void *buf, size_t len);

/* ---- policy files (policies/pacml/beta_X.bin, DIR/policy.bin) ---- */
/* Image (codec.h frame "HSPACML\0" version 2): beta char + time_unit_fix u8 + 2 pad, net config 6 x i32,
 * value scale f32, n_tensors u32, count u64, per tensor (rows i32, cols i32, name_len u32, name), the
 * parameter values as float32 (no optimiser state). Version-1 files (the shipped policies among them) load
 * too. */
HSDAG_API int hsdag_pacml_policy_save(const hsdag_pacml_net *n, char beta, int time_unit_fix,
                                      float value_scale, hsdag_buf *out, hsdag_err *e);
/* Parses a policy image buf[0..len) (version 1 or 2) for jobs[n_jobs]; `what` names it in messages.
 * beta_out / tuf_out (optional) get what the policy was trained on. EPARSE (bad magic, truncated, checksum,
 * a network that does not fit the jobs, trailing bytes) or ENOMEM. Fuzz target: fuzz/fuzz_pacml_policy.c. */
HSDAG_API int hsdag_pacml_policy_parse(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                                       const void *buf, size_t len, const char *what, char *beta_out,
                                       int *tuf_out, hsdag_err *e);
/* Loads a policy file for jobs[n_jobs]: path is a file or a directory holding policy.bin. beta_out /
 * tuf_out (optional) get what the policy was trained on. EIO, EPARSE or EINVAL with the path named. */
HSDAG_API int hsdag_pacml_policy_load(hsdag_pacml_net **out, const hsdag_pacml_job *jobs, int32_t n_jobs,
                                      const char *path, char *beta_out, int *tuf_out, hsdag_err *e);
/* The shipped policy for beta (and --time-unit-fix: beta_X_tuf.bin): the first existing of
 * $HSDAG_DATA/policies/pacml/F, <dir of the running binary>/../policies/pacml/F,
 * <dir of the running binary>/../share/hsdag/policies/pacml/F, HSDAG_SHARE_DIR/policies/pacml/F
 * (compile-time, default /usr/local/share/hsdag). EIO naming every place tried if none exists. */
HSDAG_API int hsdag_pacml_policy_find(char *path, size_t cap, char beta, int time_unit_fix, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
