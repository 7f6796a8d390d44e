/* lnodes.h - private helpers of the learned baselines (Placeto, the RNN placer): the decision units (the
 * co-location groups, merged into at most a given number of contiguous runs) and the measurement
 * bookkeeping (budget, best placement, when it was found).
 * Not here: any network (placeto.c, rnnplace.c) or the HSDAG learner (train.c, model.c).
 * Entry points: lnodes_create/free/expand, ltrack_init/free/eval. */
#ifndef HSDAG_LEARN_LNODES_H
#define HSDAG_LEARN_LNODES_H

#include "hsdag/features.h"
#include "hsdag/learn.h"
#include "hsdag/place.h"

/* The decision units of one graph. Units are runs of consecutive co-location groups (hsdag_coarsen, so in
 * topological order); when there are more groups than max_units, the runs are cut at the quantiles of a
 * weight that is half the groups' mean op cost (problem->mean_cost) and half their count, giving at most
 * max_units units. Invariants: unit edges a -> b have a < b (the unit graph is a DAG in index order),
 * unique, sorted; ops of a unit ascend. */
typedef struct lnodes {
    int32_t n, n_ops, m, n_groups;
    int32_t *unit_of;           /* [n_ops] */
    int32_t *off, *ops;         /* [n + 1], [n_ops] unit -> ops */
    int32_t *out_off, *out_dst; /* [n + 1], [m] */
    int32_t *in_off, *in_src;   /* [n + 1], [m] */
} lnodes;

/* max_units <= 0: one unit per group. no_coarsen: groups are single ops. */
int lnodes_create(lnodes **out, const hsdag_place_problem *p, int32_t max_units, int no_coarsen,
                  hsdag_err *e);
void lnodes_free(lnodes *u); /* NULL is a no-op */
/* op_dev[v] = unit_dev[unit_of[v]] */
void lnodes_expand(const lnodes *u, int32_t *op_dev, const int32_t *unit_dev);

/* Measurement bookkeeping: every placement a learned baseline measures goes through ltrack_eval. */
typedef struct ltrack {
    hsdag_learn_eval_fn eval;
    void *ctx;
    int32_t n_ops;
    double penalty;  /* an infeasible placement counts as this many times slower (>= 1) */
    int64_t evals;   /* measurements so far */
    int32_t *best;   /* [n_ops] best feasible placement */
    double best_lat; /* its latency (INFINITY if none) */
    int64_t best_at; /* the measurement (1-based) that found it, 0 if none */
    double best_s;   /* seconds from ltrack_init to that measurement */
    double t0;
} ltrack;

int ltrack_init(ltrack *t, int32_t n_ops, hsdag_learn_eval_fn eval, void *ctx, double penalty, hsdag_err *e);
void ltrack_free(ltrack *t);
/* Measures op_dev; *lat gets the latency, *feas the verdict and *cost the latency the learner sees (times
 * penalty when infeasible). Keeps the best feasible one. Errors: the oracle's, or EEXTERNAL for a latency
 * that is not positive and finite. */
int ltrack_eval(ltrack *t, const int32_t *op_dev, double *lat, int *feas, double *cost, hsdag_err *e);

#endif
