/* place.h - placers: every classic method (single device, random, Baechi m-TOPO/m-ETF/m-SCT, HEFT, METIS,
 *           Tarnawski's greedy, local search) and the exact ones (two-device min cut, MILP), behind one
 * registry.
 * Not here: scoring (sim.h), placement files (placement.h), the learned HSDAG placer (learn module; it adds
 *           itself to the registry with hsdag_place_register, through hsdag_learn_register_methods).
 * Entry points: hsdag_place_problem_create/free, hsdag_place_methods/method_find/register, hsdag_place_run,
 *               hsdag_place_lower_bound, hsdag_place_bound_exact, hsdag_place_bound_contiguous,
 *               hsdag_place_mincut_solve, hsdag_place_caps_bind.
 *
 * Usage:
 *   hsdag_place_problem *p; hsdag_err e = {0};
 *   hsdag_sim_config sc = hsdag_sim_config_default();            // semantics AUTO = the device set's default
 *   if (hsdag_place_problem_create(&p, g, devs, &sc, &e) < 0) return;
 *   int32_t *dev = hsdag_malloc(g->n_nodes * sizeof *dev);
 *   hsdag_place_opts o = hsdag_place_opts_default();             // seed 1, method default time limits
 *   hsdag_place_result r;
 *   if (hsdag_place_run(p, "heft", &o, dev, &r, &e) < 0) puts(e.msg);  // or "mincut", "ilp", "GPU", ...
 *   printf("%s %.3f ms (bound %.3f, gap %.1f%%)\n", r.method, r.latency_s * 1e3, r.lower_bound_s * 1e3,
 *          100 * r.gap);
 *   hsdag_free(dev); hsdag_place_problem_free(p);
 */
#ifndef HSDAG_PLACE_H
#define HSDAG_PLACE_H

#include "hsdag/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the problem every placer sees ----
 * Plain data built once per (graph, device set, semantics) by hsdag_place_problem_create only (private state,
 * such as the lower bound's cache, lives behind it); placers read it and may run p->sim.
 * Invariants: n == g->n_nodes, k == devs->n; groups partition the nodes (a group = one colour class, or a
 * single node without a class), group ids follow the first member's topological index, members ascend;
 * group_allowed[gi] has bit d set iff every member may run on d (never 0: a class no device can host
 * gets its first CPU, or device 0, and is infeasible in the simulator); cap[d] = INFINITY when unlimited. */
typedef struct hsdag_place_problem {
    const hsdag_graph *g;
    const hsdag_devices *devs;
    const hsdag_costs *c; /* the simulator's cost table (seconds) */
    hsdag_sim *sim;       /* owned; the evaluator of every placement */
    hsdag_semantics sem;  /* what sim runs (never AUTO) */
    hsdag_objective obj;  /* what the placers minimise and the bound bounds (the sim config's objective) */
    int32_t n, k;
    int32_t cpu; /* first CPU device, -1 if none */
    double *mem; /* [n] bytes a node keeps on its device for capacity checks: static + activation */
    double *cap; /* [k] bytes */
    int32_t n_groups;
    int32_t *group;          /* [n] group of each node */
    int32_t *grp_off;        /* [n_groups + 1] CSR into grp_node */
    int32_t *grp_node;       /* [n] */
    double *grp_mem;         /* [n_groups] sum of mem over members */
    uint64_t *group_allowed; /* [n_groups] device bit mask */
    double *mean_cost;       /* [n] mean node_s over allowed devices (HEFT's w-bar) */
    double *mean_xfer;       /* [n] mean transfer time of the node's output over ordered device pairs */
    int32_t dev_rank
        [HSDAG_MAX_DEVICES]; /* 0 = the device with the least total work (sum of node_s): tie-breaks */
    /* blocks: the strongly connected components of the contiguity graph of the groups (two colour classes
     * that reach each other both ways). The contiguity graph has the edges between forward nodes, plus the
     * backward edges that touch a group without forward nodes, reversed (the backward pass mirrors the
     * forward one); on an inference graph it is the graph of groups. Splitting a block over devices makes
     * some device's node set non-contiguous, so the contiguity-aware methods (Tarnawski's greedy, the
     * pipeline DP, the MILPs, local search's block moves) treat a block as one unit. Block ids follow their
     * smallest group id; members ascend. */
    int32_t n_blocks;
    int32_t *block;        /* [n_groups] block of each group */
    int32_t *blk_off;      /* [n_blocks + 1] CSR into blk_grp */
    int32_t *blk_grp;      /* [n_groups] */
    double *blk_mem;       /* [n_blocks] sum of grp_mem */
    uint64_t *blk_allowed; /* [n_blocks] devices every member may run on (0 = none) */
    /* [n_blocks] a topological order of the blocks, depth first as in Tarnawski et al.'s greedy: a stack of
     * ready blocks, seeded with the sources in increasing id; a finished block pushes each successor that
     * becomes ready in the order of the graph's edge_seq (the file's edge order). */
    int32_t *blk_order;
    int32_t *blk_pred_off, *blk_pred; /* [n_blocks + 1], CSR: blocks with a contiguity edge into the block */
    int32_t *blk_succ_off, *blk_succ; /* [n_blocks + 1], CSR: blocks it has a contiguity edge to (both
                                       * distinct and ascending) */
    hsdag_arena *arena;
} hsdag_place_problem;

/* The longest time (an op on a device, a tensor over a link) a problem may hold: larger ones, from absurd
 * costs or a device file's tiny rates, are refused with HSDAG_ELIMIT (no solver can scale them). */
#define HSDAG_PLACE_MAX_S 1e13
/* g and devs are borrowed and must outlive p. cfg NULL = hsdag_sim_config_default(). */
HSDAG_API int hsdag_place_problem_create(hsdag_place_problem **out, const hsdag_graph *g,
                                         const hsdag_devices *devs, const hsdag_sim_config *cfg,
                                         hsdag_err *e);
HSDAG_API void hsdag_place_problem_free(hsdag_place_problem *p); /* NULL is a no-op */
/* Which memory caps bind: bit d of *bound is set when device d cannot run the whole graph alone (the
 * simulator's memory walk with every op there exceeds its capacity). Runs p's simulator (earlier results'
 * arrays are overwritten). 0 or ENOMEM. */
HSDAG_API int hsdag_place_caps_bind(uint64_t *bound, hsdag_place_problem *p, hsdag_err *e);

/* ---- options and what a placer reports ---- */
typedef struct hsdag_place_opts {
    uint64_t seed; /* random, metis, local-search (and anything else stochastic) */
    double
        time_limit_s; /* ilp, pipedream (10 s), dp (60 s), local-search (10 s, a safety stop); <= 0 = default */
    int64_t max_evals;      /* local-search: simulator evaluations budget (default 20000); <= 0 = default */
    const int32_t *init;    /* local-search start [n] (NULL = the best of the cheap placers) */
    int32_t device;         /* single-device methods: the device (set by hsdag_place_run from the name) */
    int64_t budget;         /* black-box methods (bb-*, the learned placers): measurements; <= 0 = 500, the
                             * HSDAG paper's 25 x 20 */
    double noise;           /* black-box methods: sigma of the multiplicative log-normal measurement noise
                             * exp(sigma z), z ~ N(0, 1) seeded from seed (0 = exact measurements) */
    int time_limit_cpu;     /* 1: time_limit_s counts the calling thread's CPU time (hsdag_cpu_now), not wall
                             * time, in every method that reads it (HSDAG_PLACE_USES_CPU_TIME: ilp under every
                             * semantics with its starts, LP and branch-and-cut; dp; pipedream; local-search);
                             * for measuring on a shared machine */
    int64_t ilp_iterations; /* ilp under sequential semantics: > 0 = a budget of GLPK simplex iterations (the
                             * LP relaxation and branch-and-cut together) in place of time_limit_s, so the
                             * same input gives the same placement however fast or loaded the machine (the
                             * hsdag warm start's MILP); 0 = the clock */
} hsdag_place_opts;
HSDAG_API hsdag_place_opts hsdag_place_opts_default(void);

typedef struct hsdag_place_report {
    double bound_s;       /* a lower bound the method proved for its own model (ilp, mincut), NAN if none */
    int bound_contiguous; /* 1: bound_s holds for contiguous splits only (docs/placers.md), not every one */
    double objective_s;   /* the method's own objective value (mincut/ilp: sequential latency), NAN if none */
    int optimal;          /* 1 if the method proved optimality for the problem it solved */
    int64_t evals; /* simulator evaluations / measurements used (local-search, bb-*, the learned placers) */
    int32_t best_episode; /* learned placers: episode of the best placement (0-based); -1 otherwise */
    double lp_cpu_s;      /* MILPs: the thread's CPU seconds in the LP relaxation (scaling included), NAN if
                           * none was solved or tried */
    double branch_and_cut_cpu_s; /* MILPs: its CPU seconds in branch-and-cut, NAN if it did not run */
    char note[256]; /* one line for the user: what was ignored, a fallback taken, ... ("" if none); the same
                     * for the same input and seed (timings go in the fields above) */
} hsdag_place_report;

/* A placer: writes device[p->n] (indices into p->devs). Return 0 or a negative status with e set
 * (HSDAG_EUNSUPPORTED when the method does not apply, e.g. mincut on three devices). r is pre-cleared:
 * bound_s = objective_s = lp_cpu_s = branch_and_cut_cpu_s = NAN, best_episode = -1, everything else 0. */
typedef int (*hsdag_place_fn)(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                              hsdag_place_report *r, hsdag_err *e);

typedef enum hsdag_place_respect {
    HSDAG_PLACE_IGNORES = 0,  /* the constraint is not looked at (the simulator still reports violations) */
    HSDAG_PLACE_RESPECTS = 1, /* never violated when it can be met */
    HSDAG_PLACE_PARTIAL = 2   /* tried, not guaranteed (see the method's summary) */
} hsdag_place_respect;

/* One registry row. A built-in method of src/place is one line of the table in src/place/registry.c; a
 * method of a higher layer (the learned "hsdag", src/learn) registers itself with hsdag_place_register. */
typedef struct hsdag_place_method {
    const char *name;
    hsdag_place_fn fn;
    const char *summary;        /* one line for --help */
    hsdag_place_respect memory; /* device memory capacities */
    hsdag_place_respect color;  /* colour classes (co-location) and ops a device may not run */
    int in_compare;             /* run by `hsdag compare` when no --methods is given */
    unsigned uses;              /* the hsdag_place_opts it reads (HSDAG_PLACE_USES_*), besides the seed */
} hsdag_place_method;
/* hsdag_place_method.uses: which options change what a method does (the CLI refuses an option no method it
 * runs reads). The seed is not listed: any method may use it. */
enum {
    HSDAG_PLACE_USES_TIME_LIMIT = 1u << 0, /* time_limit_s */
    HSDAG_PLACE_USES_MAX_EVALS = 1u << 1,  /* max_evals */
    HSDAG_PLACE_USES_BUDGET = 1u << 2,     /* budget and noise (a black-box oracle's measurements) */
    HSDAG_PLACE_USES_INIT = 1u << 3,       /* init */
    HSDAG_PLACE_USES_CPU_TIME = 1u << 4,   /* time_limit_cpu: time_limit_s counted on the thread's CPU clock
                                            * throughout (every built-in that reads time_limit_s); a method
                                            * without it must not be given --cpu-time (the CLI refuses it) */
    HSDAG_PLACE_USES_ILP_ITERATIONS = 1u << 5 /* ilp_iterations */
};

/* The registry, in display order: the built-in methods, then the registered ones in registration order. */
HSDAG_API const hsdag_place_method *hsdag_place_methods(int32_t *count);
/* A registered method by exact name, or NULL. */
HSDAG_API const hsdag_place_method *hsdag_place_method_find(const char *name);
/* Appends a method (copied; name and summary must outlive the process, e.g. string literals). Idempotent:
 * registering the same name with the same function again is a no-op returning 0. Errors: HSDAG_EINVAL (no
 * name, function or summary; the name is taken by another function), HSDAG_ELIMIT (more than
 * HSDAG_PLACE_MAX_METHODS). Process-wide and not thread-safe: register at start-up, before any thread uses
 * the registry. The learned placers are registered by hsdag_learn_register_methods (learn.h), which the CLI
 * calls in main(). */
#define HSDAG_PLACE_MAX_METHODS 64
HSDAG_API int hsdag_place_register(const hsdag_place_method *m, hsdag_err *e);

/* ---- running a method and scoring it ---- */
typedef struct hsdag_place_result {
    const char *method; /* the name asked for */
    double latency_s;   /* simulated makespan of the placement */
    double objective_s; /* the problem's objective: latency_s, or the max-load for throughput */
    int feasible;       /* simulator's verdict (memory, unsupported ops, colour classes, accelerator count) */
    double lower_bound_s;         /* hsdag_place_lower_bound */
    const char *lower_bound_rule; /* its rule ("exact", "critical-path", ...; static storage) */
    double gap;     /* (objective - bound) / bound; 0 when both are 0; NAN when bound is 0 < objective */
    double place_s; /* wall seconds spent in the placer (not counting the scoring run) */
    double cpu_s;   /* the calling thread's CPU seconds in the placer (hsdag_cpu_now; 0 if not measured) */
    int contiguous; /* hsdag_place_contiguous: bounds with rep.bound_contiguous apply to it */
    hsdag_place_report rep; /* what the placer said */
    hsdag_sim_result sim;   /* the scoring run; its arrays are valid until the next run on p->sim */
} hsdag_place_result;

/* Runs `method` (a registry name; or a single-device spec: "cpu-only", "gpu-only", "<kind>-only", a device
 * name, "<device>-only"), scores it with p->sim and the lower bound. device[p->n] receives the placement.
 * Errors: HSDAG_EINVAL for an unknown method name (the message lists what is accepted), or the placer's
 * own. */
HSDAG_API int hsdag_place_run(hsdag_place_problem *p, const char *method, const hsdag_place_opts *o,
                              int32_t *device, hsdag_place_result *r, hsdag_err *e);
/* Is device a contiguous split, the class over which the exact solvers' bounds hold (bound_contiguous)?
 * Latency (tarnawski semantics): every accelerator's node set is one contiguous piece and the pieces and CPU
 * nodes form no cycle. Throughput: every device's set is contiguous in the contiguity graph (blocks whole)
 * and the devices form no cycle, i.e. the split is a chain of ideals. Other semantics: 0. */
HSDAG_API int hsdag_place_contiguous(hsdag_place_problem *p, const int32_t *device);
/* Scores an existing placement the same way; r is cleared first (method NULL, place_s = 0, an empty report
 * with bound_s = objective_s = NAN). */
HSDAG_API int hsdag_place_score(hsdag_place_problem *p, const int32_t *device, hsdag_place_result *r,
                                hsdag_err *e);
/* ---- result JSON (docs/formats.md, "Result JSON") ---- */
typedef struct hsdag_place_json_info {
    const char *model;            /* the input as the user named it */
    const char *method;           /* the method asked for; NULL when the placement was given (simulate) */
    const char *placement;        /* the placement spec or file that was given (simulate); NULL otherwise */
    const char *placement_format; /* its format (hsdag_placement_format_name); NULL otherwise */
    int64_t seed;                 /* the seed the method got; < 0 = none (a given placement) */
    double evals_per_s; /* simulator evaluations per CPU second when measured (simulate --repeat), else NAN */
} hsdag_place_json_info;
/* The "hsdag-placement-result/1" document of one placement: the costs head (hsdag_costs_write_json_head),
 * how it was placed, its simulated latency, feasibility, lower bound and gap, and per-device ops, busy time
 * and memory. r is a result of hsdag_place_run or hsdag_place_score on p with device. 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_place_result_write_json(hsdag_buf *out, const hsdag_place_problem *p,
                                            const int32_t *device, const hsdag_place_result *r,
                                            const hsdag_place_json_info *info);
/* One row of a comparison: the method, its status (0, or the error it failed with) and message, and its
 * result when status == 0. */
typedef struct hsdag_place_compare_row {
    const char *method;
    int status;
    const char *error; /* one line when status < 0, else NULL */
    hsdag_place_result r;
} hsdag_place_compare_row;
/* The exact solvers' bounds over contiguous splits (ilp under tarnawski latency, dp under throughput) among
 * the rows that ran: the largest (rep.bound_contiguous), or NAN when none proved one. */
HSDAG_API double hsdag_place_rows_contiguous_bound(const hsdag_place_compare_row *rows, int32_t n_rows);
/* That bound also holds for every row whose placement is a contiguous split (r.contiguous): those rows take
 * it as lower_bound_s (rule "contiguous") and gap where it is tighter. Returns it, or NAN. */
HSDAG_API double hsdag_place_rows_apply_contiguous_bound(hsdag_place_compare_row *rows, int32_t n_rows);
/* The "hsdag-comparison/1" document: the costs head, the seed, the lower bound b (hsdag_place_lower_bound
 * of p) and one object per row. */
HSDAG_API int hsdag_place_compare_write_json(hsdag_buf *out, const hsdag_place_problem *p,
                                             const hsdag_bound *b, const hsdag_place_compare_row *rows,
                                             int32_t n_rows, const hsdag_place_json_info *info);

/* The "hsdag-suite-comparison/1" document of a benchmark suite (compare --suite), written one instance at a
 * time: _begin opens it (suite name, seed, budget, noise) in out, each _instance adds one instance's
 * comparison (its name, best known latency in ms or NAN and how it was obtained, then the head and the
 * members of "hsdag-comparison/1"), hsdag_jw_end(w) closes it (0 or HSDAG_ENOMEM). */
HSDAG_API void hsdag_place_suite_json_begin(hsdag_jw *w, hsdag_buf *out, const char *suite, int64_t seed,
                                            int64_t budget, double noise);
HSDAG_API void hsdag_place_suite_json_instance(hsdag_jw *w, const char *name, double best_known_ms,
                                               const char *how, const hsdag_place_problem *p,
                                               const hsdag_bound *b, const hsdag_place_compare_row *rows,
                                               int32_t n_rows, const hsdag_place_json_info *info);

/* Resolves a single-device spec to a device index, or -1 when name is not one. */
HSDAG_API int32_t hsdag_place_single_device(const hsdag_devices *devs, const char *name);

/* ---- the black-box oracle: what a learned placer or a black-box search sees ----
 * One measurement of a placement = its simulated latency times exp(noise z) (z ~ N(0, 1) from rng; the
 * factor is 1 without noise) and the simulator's feasibility verdict. The latency of an infeasible placement
 * is reported too (a real machine would only report the failure); every caller treats a feasible
 * measurement as better than any infeasible one. Counts every measurement. */
typedef struct hsdag_place_oracle {
    hsdag_place_problem *p;
    double noise;  /* sigma, >= 0 */
    hsdag_rng rng; /* the noise stream */
    int64_t evals; /* measurements made */
} hsdag_place_oracle;
HSDAG_API void hsdag_place_oracle_init(hsdag_place_oracle *o, hsdag_place_problem *p, double noise,
                                       uint64_t seed);
/* Signature of hsdag_learn_eval_fn; ctx is an hsdag_place_oracle *. Fails only on a device index out of
 * range (EINVAL). */
HSDAG_API int hsdag_place_oracle_eval(void *ctx, const int32_t *device, double *latency_s, int *feasible,
                                      hsdag_err *e);

/* ---- lower bounds ----
 * The valid lower bound on p->obj of any feasible placement under p->sem: hsdag_place_bound_compute with the
 * placers. Cached in p. */
HSDAG_API int hsdag_place_lower_bound(hsdag_place_problem *p, hsdag_bound *out, hsdag_err *e);
/* hsdag_bound_objective, and with placers != 0 the placers' terms: hsdag_place_bound_exact as the exact hook
 * (latency, sequential on two devices: the min-cut optimum) and hsdag_place_bound_memory (out->memory_s, rule
 * "mincut-memory" where it is the largest). placers = 0: the simulator's terms alone (bound --no-exact). */
HSDAG_API int hsdag_place_bound_compute(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem,
                                        hsdag_objective obj, int placers, hsdag_err *e);
/* The exact hook for hsdag_bound_compute (signature hsdag_bound_exact_fn; ctx unused, may be NULL):
 * sequential semantics on exactly two devices -> the min-cut optimum in seconds, with colour classes and
 * allowed devices enforced and memory capacities ignored (a relaxation, so a valid bound). Anything else
 * -> HSDAG_EUNSUPPORTED. */
HSDAG_API int hsdag_place_bound_exact(void *ctx, double *opt_s, const hsdag_costs *c, hsdag_semantics sem,
                                      hsdag_err *e);
/* The min-cut bound with memory caps (sequential semantics on two devices): a feasible placement keeps the
 * static bytes on each device within its capacity, so for every lambda >= 0 the minimum over all placements
 * of latency + lambda (static bytes on d - capacity of d) is a lower bound on the capped optimum (a
 * Lagrangian relaxation, each term a minimum cut); *bound_s = its maximum over lambda for each capped device
 * (bisection, 60 cuts each), NAN when no capacity binds. Returns 0, HSDAG_EUNSUPPORTED elsewhere and above
 * HSDAG_PLACE_MEMORY_BOUND_MAX_NODES ops (60 cuts: 1.7 CPU s at 10,000, about 90 at 100,000), or HSDAG_ENOMEM. */
#define HSDAG_PLACE_MEMORY_BOUND_MAX_NODES 10000
HSDAG_API int hsdag_place_bound_memory(double *bound_s, const hsdag_costs *c, hsdag_semantics sem,
                                       hsdag_err *e);
/* The bound over contiguous splits (each accelerator one contiguous subgraph; tarnawski semantics only): the
 * exact solver of p->obj over that class ("dp" for throughput, "ilp" for latency) run with a time limit of
 * time_limit_s (<= 0 = the method's default). *bound_s = its proven bound, NAN if it proved none; *method = the
 * solver's name; note[note_len] = its report line. Returns 0, HSDAG_EUNSUPPORTED under another semantics, or
 * the solver's error. */
HSDAG_API int hsdag_place_bound_contiguous(double *bound_s, const char **method, char *note, size_t note_len,
                                           hsdag_place_problem *p, double time_limit_s, hsdag_err *e);

/* ---- the exact two-device sequential optimum (exposed for tests and the bound) ----
 * Minimises sum_v node_s[v, dev v] + sum over (tensor u, other device b holding a consumer) xfer(u, dev u, b)
 * over all placements on devices {0, 1} of c->devs, with colour classes kept together and forbidden
 * (node, device) pairs excluded. device may be NULL (value only). Memory is not modelled.
 * Returns 0, HSDAG_EUNSUPPORTED unless c->n_devices == 2, HSDAG_EINFEASIBLE if the constraints admit no
 * placement (a colour class that neither device can host), HSDAG_ENOMEM. */
HSDAG_API int hsdag_place_mincut_solve(const hsdag_costs *c, int32_t *device, double *opt_s, hsdag_err *e);

/* Sequential latency of a placement straight from the cost table (the formula above); used to cross-check. */
HSDAG_API double hsdag_place_sequential_cost(const hsdag_costs *c, const int32_t *device);

#ifdef __cplusplus
}
#endif
#endif
