/* registry.c - the table of placement methods: name, function, one-line summary, what each respects. The
 *   built-in methods of src/place come first; higher layers append theirs with hsdag_place_register.
 * Not here: the algorithms (one file each in src/place), single-device specs (resolved by hsdag_place_run),
 *   any learned method (src/learn registers them: hsdag_learn_register_methods).
 * Entry points: hsdag_place_methods, hsdag_place_method_find, hsdag_place_register. To add a built-in
 *   method, append one row below. */
#include "place_int.h"

#define R HSDAG_PLACE_RESPECTS
#define I HSDAG_PLACE_IGNORES
#define P HSDAG_PLACE_PARTIAL

static const hsdag_place_method builtin[] = {
    {"random", place_random, "each colour class on a uniformly random allowed device with room (seeded)", R,
     R, 1, 0},
    {"round-robin", place_round_robin,
     "colour classes in topological order, cycling over allowed devices with room", R, R, 1, 0},
    {"m-topo", place_mtopo,
     "Baechi m-TOPO: topological order, fill each device up to an equal share of memory (capped by capacity)",
     R, R, 1, 0},
    {"m-etf", place_metf,
     "Baechi m-ETF: earliest (op, device) start time first among ready ops, devices without room skipped", R,
     R, 1, 0},
    {"m-sct", place_msct,
     "Baechi m-SCT: LP relaxation (GLPK) picks a favourite child per op, then m-ETF keeping favourites "
     "together",
     R, R, 1, 0},
    {"heft", place_heft,
     "HEFT: upward rank on mean costs, earliest finish time with insertion; skips full devices", R, R, 1, 0},
    {"metis", place_metis,
     "METIS k-way partition (libmetis) weighted by op cost and transfer time; ignores precedence and memory "
     "caps",
     I, R, 1, 0},
    {"greedy-tarnawski", place_greedy_tarnawski,
     "Tarnawski et al.'s greedy: fill accelerators with colour classes in topological order under the memory "
     "cap",
     R, R, 1, 0},
    {"mincut", place_mincut,
     "exact optimum on two devices under sequential semantics (s-t min cut); memory caps not expressible", I,
     R, 1, 0},
    {"ilp", place_ilp,
     "exact MILP (GLPK), time-limited (or --ilp-iterations), proven gap: sequential latency (memory caps, "
     "colour classes); "
     "concurrent without link contention up to 30 ops; tarnawski: their latency IP, the contiguous "
     "throughput IP",
     R, R, 1, HSDAG_PLACE_USES_TIME_LIMIT | HSDAG_PLACE_USES_CPU_TIME | HSDAG_PLACE_USES_ILP_ITERATIONS},
    {"dp", place_pipeline_dp,
     "exact contiguous max-load (Tarnawski et al.'s throughput DP over ideals, pruned, bounded memory); "
     "tarnawski semantics",
     R, R, 1, HSDAG_PLACE_USES_TIME_LIMIT | HSDAG_PLACE_USES_CPU_TIME},
    {"pipedream", place_pipedream,
     "PipeDream-style DP: the best max-load split of one linear chain of the blocks; tarnawski semantics", R,
     R, 1, HSDAG_PLACE_USES_TIME_LIMIT | HSDAG_PLACE_USES_CPU_TIME},
    {"local-search", place_local_search,
     "moves classes, topological segments, whole blocks (spilling what overflows) and the same classes at "
     "every repeat of a structure (twins) while the simulated objective improves, seeded restarts",
     R, R, 1,
     HSDAG_PLACE_USES_TIME_LIMIT | HSDAG_PLACE_USES_CPU_TIME | HSDAG_PLACE_USES_MAX_EVALS |
         HSDAG_PLACE_USES_INIT},
    {"bb-random", place_bb_random,
     "black-box random search: uniformly random placements, --budget measurements (default 500), the best "
     "kept",
     I, R, 1, HSDAG_PLACE_USES_BUDGET},
    {"bb-local", place_bb_local,
     "black-box first-improvement local search from a random placement, one class per move, --budget "
     "measurements (default 500)",
     I, R, 1, HSDAG_PLACE_USES_BUDGET},
};
#define N_BUILTIN ((int32_t)(sizeof builtin / sizeof builtin[0]))

#undef R
#undef I
#undef P

/* The table: the built-ins, then what hsdag_place_register appended (no lock: register before starting
 * threads). */
static hsdag_place_method methods[HSDAG_PLACE_MAX_METHODS];
static int32_t n_methods;

static void reg_init(void)
{
    if (n_methods) return;
    memcpy(methods, builtin, sizeof builtin);
    n_methods = N_BUILTIN;
}

const hsdag_place_method *hsdag_place_methods(int32_t *count)
{
    reg_init();
    if (count) *count = n_methods;
    return methods;
}

const hsdag_place_method *hsdag_place_method_find(const char *name)
{
    if (!name) return NULL;
    reg_init();
    for (int32_t i = 0; i < n_methods; i++)
        if (strcmp(methods[i].name, name) == 0) return &methods[i];
    return NULL;
}

int hsdag_place_register(const hsdag_place_method *m, hsdag_err *e)
{
    if (!m || !m->name || !m->name[0] || !m->fn || !m->summary)
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "place registry: a method needs a name, a function and a summary");
    const hsdag_place_method *old = hsdag_place_method_find(m->name);
    if (old) {
        if (old->fn == m->fn) return 0; /* registered before: idempotent */
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "place registry: '%s' is already registered with another function", m->name);
    }
    if (n_methods == HSDAG_PLACE_MAX_METHODS)
        return hsdag_err_set(e, HSDAG_ELIMIT, "place registry: more than %d methods",
                             HSDAG_PLACE_MAX_METHODS);
    methods[n_methods++] = *m;
    return 0;
}
