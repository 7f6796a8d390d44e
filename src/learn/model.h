/* model.h - private interface of the HSDAG policy network (src/learn/model.c), used by train.c.
 * Not here: the REINFORCE loop, checkpoints or rewards (train.c).
 * Entry points: lmodel_create/free, lmodel_params_frozen, lmodel_step_forward/backward, lmodel_step_end,
 *               lmodel_fix_clusters. */
#ifndef HSDAG_LEARN_MODEL_H
#define HSDAG_LEARN_MODEL_H

#include "hsdag/learn.h"

/* The network's parameters and the fixed per-graph inputs. */
typedef struct lmodel lmodel;

/* One step's forward state (caches for backward), valid until lmodel_step_end. */
typedef struct lstep {
    int32_t n_clusters;     /* clusters of the last applied level */
    int32_t levels;         /* levels applied */
    const int32_t *cluster; /* [n_groups] group -> final cluster */
    const float *logp;      /* [n_clusters * K] log-probabilities */
    const float *hc;        /* [n_clusters * H] final cluster features (the state update) */
    const uint8_t *mask; /* [n_clusters * K] devices each cluster may use (logp is -inf elsewhere), or NULL */
    const float *q;      /* [n_clusters] inherit logits (cfg->inherit), or NULL */
    void *priv;
} lstep;

/* co (optional, NULL = cfg->no_coarsen alone): how the graph is coarsened into groups (colour classes, group
 * limits); allowed [n_nodes * n_devices] (optional): 0 where an op may not run on a device, masked out of the
 * policy; p (optional): the problem whose cost table gives the cost kind (cfg->features & HSDAG_LEARN_FEAT_COST;
 * without p that kind is off) and whose caps and static bytes pick the weight units (cfg->weight_unit_frac). */
int lmodel_create(lmodel **out, const hsdag_graph *g, int32_t n_devices, const hsdag_learn_config *cfg,
                  const hsdag_coarsen_opts *co, const uint8_t *allowed, const hsdag_place_problem *p,
                  hsdag_rng *init_rng, hsdag_err *e);
/* (n_groups, K) devices each group may use, NULL when every device is allowed. */
const uint8_t *lmodel_group_mask(const lmodel *M);
/* The smallest device capacity of p in bytes (INFINITY when no device is capped). */
double lmodel_min_capacity(const hsdag_place_problem *p);
/* (n_groups) static bytes (weights) per group, NULL when the problem caps no device (or without a problem). */
const double *lmodel_group_static(const lmodel *M);
/* The groups graph parsing keeps apart (cfg->weight_unit_frac; NULL = none, the option then changes nothing). */
const uint8_t *lmodel_apart(const lmodel *M);
void lmodel_free(lmodel *M);
hsdag_nn_params *lmodel_params(lmodel *M);
/* frozen = 1 promises the parameter values do not change until lmodel_params_frozen(M, 0): the encoder's
 * dropout-free prefix is then computed once and reused by later steps. Either call drops that cache. */
void lmodel_params_frozen(lmodel *M, int frozen);
const hsdag_coarse *lmodel_coarse(const lmodel *M);

/* Forward pass on state delta D (n_groups, H), dropout drawn from rng when train. */
int lmodel_step_forward(lmodel *M, lstep *st, const float *D, int train, hsdag_rng *rng, hsdag_err *e);
/* Backward from dlogp (n_clusters, K) and dq (n_clusters, the inherit logits; NULL = 0): parameter
 * gradients ACCUMULATE into the param grad block. */
int lmodel_step_backward(lmodel *M, lstep *st, const float *dlogp, const float *dq, hsdag_err *e);
void lmodel_step_end(lstep *st);
/* Decides the GPN clusters once (a dropout-free forward pass with the current parameters and a zero state)
 * and makes every later step reuse them; edge scores still scale cluster features and get gradients. */
int lmodel_fix_clusters(lmodel *M, hsdag_err *e);

#endif
