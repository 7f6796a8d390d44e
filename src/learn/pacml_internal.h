/* pacml_internal.h - what the PAC-ML learners of src/learn share (not installed): the spec's 2-round
 *   mean-pool GNN over the job models, whose tensors live in the caller's parameter set, and the LayerNorm ->
 *   Linear module it is built from.
 * Not here: any head or loss (pacml_gnn.c: PPO policy and value heads; pacml_dqn.c: the Q-network).
 * Entry points: pm_mod_add/forward/backward, pm_gnn_add/free/touch/pool/backward, pm_carve (scratch
 *   tensors), pm_evaluate (greedy validation), pm_put_table/values and pm_get_table/values (the tensor
 *   table and float32 values of a policy file, pacml_ppo.c).
 */
#ifndef HSDAG_PACML_INTERNAL_H
#define HSDAG_PACML_INTERNAL_H

#include "hsdag/codec.h"
#include "hsdag/pacml.h"

#define PM_EPS 1e-5f                 /* LayerNorm eps (PyTorch default) */
#define PM_NA HSDAG_PACML_N_ACTIONS  /* 17 partition degrees, 0 = do not place */
#define PM_GF HSDAG_PACML_OBS_FEATS  /* 34 graph features */
#define PM_NF HSDAG_PACML_NODE_FEATS /* node features */
#define PM_EF HSDAG_PACML_EDGE_FEATS /* edge features */
#define PM_EVAL_SEED 1799            /* the reference's test seed; evaluation episodes use 1799, 1800, ... */

/* The spec's GNN and graph-module widths, the default of both learners' networks: out_features_msg / 2,
 * the reduce outputs of rounds 1 and 2 (the pooled node embedding), the graph module's output. */
#define PM_MSG_HALF 16
#define PM_HIDDEN1 64
#define PM_NODE_OUT 16
#define PM_GRAPH_OUT 8

/* Scratch tensors carved out of one float block. */
typedef struct pm_slice {
    float **p;    /* set to the slice */
    size_t width; /* floats per row */
} pm_slice;

/* Points each *s[k].p at its own rows x s[k].width floats of *block, one after the other. The block is grown
 * first if *cap (in rows of the slices' total width) is under rows: to max(rows, min_rows) rows, its
 * contents not kept. 0, or -1 (out of memory; the old block stays and the pointers are not set). */
int pm_carve(float **block, int32_t *cap, int32_t rows, int32_t min_rows, const pm_slice *s, int32_t n);

/* One greedy episode of a learner's network on the environment, from the episode seed. */
typedef int (*pm_episode_fn)(const hsdag_pacml_env *env, void *net, uint64_t seed, hsdag_err *e);

/* The mean blocking rate of n greedy episodes on the evaluation seeds PM_EVAL_SEED, PM_EVAL_SEED + 1, ...
 * (the validation set of both trainers). 0 or the episode's error. */
int pm_evaluate(double *mean, const hsdag_pacml_env *env, pm_episode_fn episode, void *net, int32_t n,
                hsdag_err *e);

typedef struct pm_mod { /* LayerNorm -> Linear */
    hsdag_nn_layernorm ln;
    hsdag_nn_linear lin;
} pm_mod;

/* Registers "<name>_ln" (in) and "<name>" (in -> out, with bias) in p. */
int pm_mod_add(hsdag_nn_params *p, pm_mod *m, const char *name, int32_t in, int32_t out, hsdag_err *e);
/* y (rows, out) = ReLU?(Lin(LN(x))); the LayerNorm's outputs go to xn/mean/rstd. */
void pm_mod_forward(hsdag_nn_params *p, const pm_mod *m, float *y, float *xn, float *mean, float *rstd,
                    const float *x, int32_t rows, int relu);
/* Backward of pm_mod_forward: dy is dL/dy (post-ReLU if relu), dypre and dxn are scratch; dx += (or NULL). */
void pm_mod_backward(hsdag_nn_params *p, const pm_mod *m, float *dx, const float *dy, float *dypre,
                     float *dxn, const float *y, const float *xn, const float *mean, const float *rstd,
                     const float *x, int32_t rows, int relu);

typedef struct pm_model pm_model; /* one job model's structure and forward cache (pacml_gnn.c) */

/* The GNN over n_models job graphs (/work spec pacml.md section 2): per model, its pooled node embedding
 * depends only on the parameters, so it is computed once per parameter version. */
typedef struct pm_gnn {
    hsdag_nn_params *p; /* borrowed: the owner's parameter set */
    int32_t msg_half, hidden1, node_out;
    pm_mod node[2], edge[2], red[2];
    int32_t n_models;
    pm_model *m;
    uint64_t version;
    int32_t max_n, max_ne;
    float *gs; /* backward scratch: 13 slots of gs_slot floats */
    size_t gs_slot;
    float *dpool;  /* [n_models * node_out] */
    uint8_t *used; /* [n_models] */
} pm_gnn;

/* Registers the GNN's tensors in p ("r1.node", "r1.edge", "r1.reduce", then round 2; call before
 * hsdag_nn_params_alloc) and copies the jobs' graph structure and features. 0 or ENOMEM. */
int pm_gnn_add(pm_gnn *g, hsdag_nn_params *p, int32_t msg_half, int32_t hidden1, int32_t node_out,
               const hsdag_pacml_job *jobs, int32_t n_jobs, hsdag_err *e);
void pm_gnn_free(pm_gnn *g);
/* Marks every cached embedding stale (after a parameter change). */
void pm_gnn_touch(pm_gnn *g);
/* The pooled embedding (node_out floats) of a model, computed if stale. */
const float *pm_gnn_pool(pm_gnn *g, int32_t model);
/* Accumulates parameter gradients from dL/dpool rows (B x node_out) of samples of model[0..B): the rows of
 * one model are summed, then one backward pass per model. The caches must be current. */
void pm_gnn_backward(pm_gnn *g, const int32_t *model, const float *dpool, int32_t B);

/* A policy file's parameters (codec.h): the tensor table (count, floats, then rows, cols and name of each
 * tensor) and the float32 values, no optimiser state. The readers check the table against p's (EPARSE naming
 * the first mismatch, with `what` first) and that every value is finite. */
void pm_put_table(hsdag_buf *out, hsdag_nn_params *p);
void pm_put_values(hsdag_buf *out, hsdag_nn_params *p);
int pm_get_table(hsdag_rd *r, hsdag_nn_params *p, const char *what, hsdag_err *e);
int pm_get_values(hsdag_rd *r, hsdag_nn_params *p, const char *what, hsdag_err *e);

#endif
