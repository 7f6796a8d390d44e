/* place_int.h - private helpers shared by the placers in src/place (not installed, not public API).
 * Not here: any placer's algorithm; the public API is include/hsdag/place.h.
 * Entry points: place_* helpers and the hsdag_place_fn of every built-in method (registered in
 * registry.c). */
#ifndef HSDAG_PLACE_INT_H
#define HSDAG_PLACE_INT_H

#include "hsdag/place.h"

#include <math.h>
#include <string.h>

/* ---- the problem as problem.c allocates it: the public struct, then what callers do not see ---- */
typedef struct place_problem_priv {
    hsdag_place_problem pub; /* first: a hsdag_place_problem * points here */
    int bound_ready;         /* hsdag_place_lower_bound's cache */
    hsdag_bound bound;
} place_problem_priv;

/* ---- helpers (problem.c) ---- */
static inline double place_cost(const hsdag_place_problem *p, int32_t v, int32_t d)
{
    return p->c->node_s[(size_t)v * (size_t)p->k + (size_t)d];
}
static inline int place_group_ok(const hsdag_place_problem *p, int32_t gi, int32_t d)
{
    return (int)((p->group_allowed[gi] >> d) & 1u);
}
/* Device to use when nothing else fits a group: its first allowed device. */
int32_t place_group_fallback(const hsdag_place_problem *p, int32_t gi);
/* Puts every member of group gi on d. */
void place_group_set(const hsdag_place_problem *p, int32_t *device, int32_t gi, int32_t d);
/* Cost of group gi on device d (sum of members' node_s). */
double place_group_cost(const hsdag_place_problem *p, int32_t gi, int32_t d);
/* Simulated objective for search: infeasible placements rank after feasible ones (by excess bytes), then
 * latency. */
typedef struct place_score {
    int feasible;
    double excess; /* max_excess_bytes + a large count penalty for unsupported ops / split classes */
    double latency_s;
} place_score;
place_score place_evaluate(hsdag_place_problem *p, const int32_t *device);
int place_score_better(place_score a, place_score b); /* a strictly better than b */
/* Memory used per device by a full placement (sum of p->mem). used[k]. */
void place_memory_used(const hsdag_place_problem *p, const int32_t *device, double *used);

/* ---- list scheduling engine (list.c): HEFT, m-ETF, m-SCT ---- */
/* ---- built-in methods ---- */
int place_single(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                 hsdag_err *e);
int place_random(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                 hsdag_err *e);
int place_round_robin(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e);
int place_mtopo(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                hsdag_err *e);
int place_metf(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
               hsdag_err *e);
int place_msct(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
               hsdag_err *e);
int place_heft(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
               hsdag_err *e);
int place_metis(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                hsdag_err *e);
int place_greedy_tarnawski(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                           hsdag_place_report *r, hsdag_err *e);
int place_mincut(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                 hsdag_err *e);
int place_ilp(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
              hsdag_err *e);
/* ilp_conc.c: the concurrent-semantics MILP for graphs up to 30 ops, from a start placement start[n]. */
int place_ilp_concurrent(hsdag_place_problem *p, const hsdag_place_opts *o, const int32_t *start,
                         int32_t *device, hsdag_place_report *r, hsdag_err *e);
int place_bb_random(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                    hsdag_err *e);
int place_bb_local(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                   hsdag_err *e);
int place_local_search(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                       hsdag_place_report *r, hsdag_err *e);

/* ---- MILP helpers (ilp.c), shared by the sequential and concurrent models ---- */
struct glp_tree;
typedef struct place_ilp_cb {
    double bound;       /* best bound seen (objective units), -INFINITY if none */
    const double *heur; /* [ncols + 1] a feasible start for GLPK's heuristic hook, or NULL */
    int heur_given;
} place_ilp_cb;
void place_ilp_callback(struct glp_tree *tree, void *info); /* GLPK cb_func; info is a place_ilp_cb */

/* ---- GLPK (glpk.c): every placer's GLPK work goes through these ---- */
/* Runs fn(ctx, e), the GLPK part of a placer, with GLPK's error hook and a silent terminal: an internal GLPK
 * error returns HSDAG_ESOLVER ("who: GLPK failed internally (...)") instead of aborting, after glp_free_env
 * has freed every GLPK object of the call. fn's other memory must be reachable from ctx (the caller frees
 * it), scratch inside fn may come from glp_alloc. Calls do not nest. Returns fn's status otherwise. */
int place_glpk_call(int (*fn)(void *ctx, hsdag_err *e), void *ctx, const char *who, hsdag_err *e);
/* Checks a built model before solving: every bound and coefficient finite and at most 1e17 in magnitude
 * (else HSDAG_ELIMIT naming the row or column); values below 1e-12 are rounded to 0. */
struct glp_prob;
int place_glpk_prepare(struct glp_prob *lp, const char *who, hsdag_err *e);

#endif
