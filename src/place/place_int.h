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
/* The clock a time limit counts (hsdag_place_opts.time_limit_cpu): the thread's CPU time or wall time. */
static inline double place_clock(int cpu)
{
    return cpu ? hsdag_cpu_now() : hsdag_now();
}
/* The end of a time limit, on the clock it counts (place_clock). */
typedef struct place_deadline {
    double at; /* seconds on that clock */
    int cpu;   /* hsdag_place_opts.time_limit_cpu */
} place_deadline;
/* Now plus o's time limit (default_s when o gives none), on o's clock. */
static inline place_deadline place_deadline_in(const hsdag_place_opts *o, double default_s)
{
    place_deadline d = {.cpu = o->time_limit_cpu};
    d.at = place_clock(d.cpu) + (o->time_limit_s > 0 ? o->time_limit_s : default_s);
    return d;
}
static inline int place_deadline_passed(place_deadline d)
{
    return place_clock(d.cpu) > d.at;
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
    double excess;    /* max_excess_bytes + a large count penalty for unsupported ops / split classes */
    double latency_s; /* the problem's objective (latency or max-load), seconds */
} place_score;
place_score place_evaluate(hsdag_place_problem *p, const int32_t *device);
int place_score_better(place_score a, place_score b); /* a strictly better than b */
/* Memory used per device by a full placement (sum of p->mem). used[k]. */
void place_memory_used(const hsdag_place_problem *p, const int32_t *device, double *used);

/* The sequential formula's term of node u (hsdag_place_sequential_cost sums them in node order): t + u's cost
 * on its device + one copy per other device holding a consumer, added in that order (the simulator's). */
double place_seq_add(const hsdag_costs *c, const int32_t *device, int32_t u, double t);

/* ---- the sequential latency, move by move (seqdelta.c) ----
 * Keeps every node's place_seq_add term under a committed placement; the change a move makes to the sum is
 * the change of the terms of the moved nodes and of their producers (a term reads its node's device and its
 * consumers' devices), O(their degrees). Usage: init, reset(dev); per move: delta(dev after the move, the
 * moved nodes), then commit() if the move is kept; reset again after any change not passed to delta. */
typedef struct place_seqdelta {
    const hsdag_costs *c;
    double *term;    /* [n] the committed terms */
    double *fresh;   /* [n] the last delta's new terms, in the order of aff */
    int32_t *aff;    /* [n] the nodes whose terms the last delta recomputed */
    uint32_t *stamp; /* [n] epoch of the delta that last listed a node in aff */
    uint32_t epoch;
    int32_t naff;
} place_seqdelta;
int place_seqdelta_init(place_seqdelta *sd, const hsdag_costs *c); /* 0 or HSDAG_ENOMEM */
void place_seqdelta_reset(place_seqdelta *sd, const int32_t *device);
/* The sequential latency of device minus that of the committed placement, where device differs from it at
 * most at moved[0..nmoved) (repeats allowed). */
double place_seqdelta_delta(place_seqdelta *sd, const int32_t *device, const int32_t *moved, int32_t nmoved);
void place_seqdelta_commit(place_seqdelta *sd); /* the last delta's placement becomes the committed one */
void place_seqdelta_free(place_seqdelta *sd);

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
/* pipeline.c: the exact contiguous throughput DP ("dp") and the PipeDream-style chain DP ("pipedream") */
int place_pipeline_dp(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e);
int place_pipedream(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                    hsdag_err *e);
/* The pipeline model shared with the throughput MILP: units = blocks in blk_order (every predecessor of a
 * unit has a smaller index), their costs on the (interchangeable) accelerators and CPUs, and each node's
 * communication cost. Needs tarnawski semantics (else HSDAG_EUNSUPPORTED). */
enum { PL_OK_ACC = 1, PL_OK_CPU = 2 };
typedef struct place_pl_model {
    hsdag_place_problem *p;
    int32_t nu;                 /* units: blocks, zero-cost leaves merged into their neighbour */
    int32_t n_merged;           /* blocks merged away */
    int32_t *unode_off, *unode; /* [nu + 1], [n]: the nodes of each unit */
    int32_t *unit_of;           /* [n] */
    int32_t *pos;               /* [n_blocks] block -> unit */
    int32_t *pred_off, *pred;   /* [nu + 1]: units with a contiguity edge into the unit (smaller indices) */
    double *w_acc, *w_cpu;      /* [nu] seconds on one accelerator / one CPU */
    double *size;               /* [nu] bytes (p->mem) */
    uint8_t *ok;                /* [nu] PL_OK_* */
    double *comm;               /* [n] seconds: hsdag_costs_host_xfer_s on an accelerator */
    int32_t *outdeg;            /* [n] out-edges of each node */
    int32_t k, l;               /* accelerators usable (max_accels_used), CPUs */
    int32_t acc_dev[HSDAG_MAX_DEVICES], cpu_dev[HSDAG_MAX_DEVICES];
    double cap_acc, cap_cpu; /* bytes (INFINITY = unlimited) */
} place_pl_model;
int place_pl_model_create(hsdag_place_problem *p, place_pl_model *m, hsdag_err *e);
void place_pl_model_free(place_pl_model *m);
/* ilp_tput.c: the contiguous throughput MILP (chain of ideals), started from the chain DP. */
int place_ilp_throughput(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                         hsdag_place_report *r, hsdag_err *e);
/* ilp_tw.c: Tarnawski et al.'s latency MILP over contiguous splits, from a start placement in that class. */
int place_ilp_tarnawski(hsdag_place_problem *p, const hsdag_place_opts *o, const int32_t *start,
                        int32_t *device, hsdag_place_report *r, hsdag_err *e);
/* Is dev a contiguous split for the latency model (each accelerator one contiguous piece, no cycle among
 * the pieces; CPU nodes anywhere)? */
int place_tw_in_class(hsdag_place_problem *p, const int32_t *dev);
int place_local_search(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                       hsdag_place_report *r, hsdag_err *e);

/* ---- MILP helpers (ilp.c), shared by the sequential and concurrent models ---- */
struct glp_tree;
typedef struct place_ilp_cb {
    double bound;       /* best bound seen (objective units), -INFINITY if none */
    const double *heur; /* [ncols + 1] a feasible start for GLPK's heuristic hook, or NULL */
    int heur_given;
    double cpu_end; /* > 0: stop branch-and-cut once the thread's CPU time (hsdag_cpu_now) passes it */
    int it_end;     /* > 0: stop it once the problem's simplex iteration count (glp_get_it_cnt) plus
                     * rows / ILP_CALL_ROWS per callback call (ilp.c) reaches it */
    int64_t calls;  /* callback calls so far */
} place_ilp_cb;
void place_ilp_callback(struct glp_tree *tree, void *info); /* GLPK cb_func; info is a place_ilp_cb */
struct glp_prob;
/* glp_simplex (messages off) until end on the clock of cpu (place_clock). Wall clock: one call with GLPK's
 * tm_lim. CPU clock (GLPK has neither a CPU limit nor a simplex callback): slices of ILP_SLICE_ITERATIONS
 * iterations (it_lim counts per call) without a wall limit, each resumed from the basis the last one left,
 * until solved or the CPU time is spent (then GLP_ETMLIM), so it can run one slice past end. The slices end
 * at the same iterations however loaded the machine: while the limit is not reached the LP's path, and its
 * result, do not depend on the load (a wall-time cap would end them where the load puts them). Returns
 * glp_simplex's code. */
int place_ilp_simplex(struct glp_prob *lp, double end, int cpu);
/* glp_intopt (messages off, the callback place_ilp_callback with cb) for left seconds on the clock of cpu:
 * GLPK's tm_lim (wall time), or on the CPU clock the callback's stop (cb->cpu_end); with cb->it_end > 0 no
 * clock at all, only the callback's stop at that iteration count. cuts: PLACE_ILP_*. */
enum { PLACE_ILP_MIR = 1, PLACE_ILP_GMI = 2 };
int place_ilp_intopt(struct glp_prob *lp, double left, int cpu, unsigned cuts, place_ilp_cb *cb);
/* One run of a warm-started minimisation whose objective is in units of the start's value (so the start is
 * 1): scaling (small models only), the LP relaxation with 70% of the time left until deadline, then
 * branch-and-cut with the rest, the callback tracking the bound and handing GLPK cb->heur. deadline is on
 * the clock of cpu (place_clock; place_ilp_simplex, place_ilp_intopt). */
typedef struct place_ilp_run {
    int lp_ok;          /* the LP relaxation was solved */
    int sr, lp_status;  /* glp_simplex's return and status */
    int ir, mip_status; /* glp_intopt's return and status (GLP_UNDEF if not run) */
    double obj, bound;  /* incumbent and bound in model units (obj NAN if GLPK has no integer solution) */
    double lp_cpu_s, mip_cpu_s; /* CPU seconds (hsdag_cpu_now) in the LP relaxation (scaling included) and in
                                 * branch-and-cut (NAN if not run): hsdag_place_report's fields */
} place_ilp_run;
struct glp_prob;
void place_ilp_solve(struct glp_prob *lp, double deadline, int cpu, int cuts, place_ilp_cb *cb,
                     place_ilp_run *out);
/* Fills r from a run: start_s = the start's value in seconds (the model unit), obj_s = the incumbent kept;
 * the bound holds for every contiguous split (bound_contiguous). */
void place_ilp_report(hsdag_place_report *r, const place_ilp_run *run, double start_s, double obj_s);

/* One warm-started MILP whose objective is in units of its start's value (ilp_tw.c, ilp_tput.c), run
 * through place_glpk_call: build the model into lp, check it (place_glpk_prepare), give up when building took
 * half the time limit, take the start's column values from fill, solve (place_ilp_solve), hand a better
 * solution's column values to decode, and fill the report (place_ilp_report; when GLPK
 * fails internally: the start, without a bound). Returns 0 or build's / the memory's error. */
typedef struct place_milp {
    int (*build)(void *ctx, struct glp_prob *lp, hsdag_err *e);
    int (*fill)(void *ctx, double *x); /* x[1..ncols] = the start: 0, or -1 (no start for the solver) */
    void (*decode)(void *ctx,
                   const double *x); /* a better solution x[1..ncols] into the caller's placement */
    void *ctx;
    int cuts;          /* GLPK's MIR and Gomory cuts */
    int cpu;           /* t0 and tl are on the CPU clock (place_clock) */
    double t0, tl, ub; /* seconds: start time, time limit, the start's objective value (the model unit) */
    hsdag_place_report *r;
} place_milp;
int place_milp_run(const place_milp *mr, hsdag_err *e);

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
