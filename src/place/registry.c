/* registry.c - the table of placement methods: name, function, one-line summary, what each respects.
 * Not here: the algorithms (one file each in src/place) or single-device specs (resolved by hsdag_place_run).
 * Entry points: hsdag_place_methods, hsdag_place_method_find. To add a method, append one row below. */
#include "hsdag/hsdag.h"
#include "place_int.h"

#define R HSDAG_PLACE_RESPECTS
#define I HSDAG_PLACE_IGNORES
#define P HSDAG_PLACE_PARTIAL

static const hsdag_place_method methods[] = {
    {"random", place_random, "each colour class on a uniformly random allowed device with room (seeded)", R,
     R, 1},
    {"round-robin", place_round_robin,
     "colour classes in topological order, cycling over allowed devices with room", R, R, 1},
    {"m-topo", place_mtopo,
     "Baechi m-TOPO: topological order, fill each device up to an equal share of memory (capped by capacity)",
     R, R, 1},
    {"m-etf", place_metf,
     "Baechi m-ETF: earliest (op, device) start time first among ready ops, devices without room skipped", R,
     R, 1},
    {"m-sct", place_msct,
     "Baechi m-SCT: LP relaxation (GLPK) picks a favourite child per op, then m-ETF keeping favourites "
     "together",
     R, R, 1},
    {"heft", place_heft,
     "HEFT: upward rank on mean costs, earliest finish time with insertion; skips full devices", R, R, 1},
    {"metis", place_metis,
     "METIS k-way partition (libmetis) weighted by op cost and transfer time; ignores precedence and memory "
     "caps",
     I, R, 1},
    {"greedy-tarnawski", place_greedy_tarnawski,
     "Tarnawski et al.'s greedy: fill accelerators with colour classes in topological order under the memory "
     "cap",
     R, R, 1},
    {"mincut", place_mincut,
     "exact optimum on two devices under sequential semantics (s-t min cut); memory caps not expressible", I,
     R, 1},
    {"ilp", place_ilp,
     "exact MILP (GLPK), time-limited, proven gap: sequential latency (memory caps, colour classes); "
     "concurrent "
     "without link contention up to 30 ops",
     R, R, 1},
    {"dp", place_pipeline_dp,
     "exact contiguous max-load (Tarnawski et al.'s throughput DP over ideals, pruned, bounded memory); "
     "tarnawski semantics",
     R, R, 1},
    {"pipedream", place_pipedream,
     "PipeDream-style DP: the best max-load split of one linear chain of the blocks; tarnawski semantics", R,
     R, 1},
    {"local-search", place_local_search,
     "moves single classes and topological segments while simulated latency improves, seeded restarts", R, R,
     1},
    {"hsdag", hsdag_learn_place,
     "HSDAG (NeurIPS 2024): GCN + graph-parsing pooling + REINFORCE, 25 x 20 simulated placements "
     "(src/learn)",
     P, P, 1},
};

#undef R
#undef I
#undef P

const hsdag_place_method *hsdag_place_methods(int32_t *count)
{
    if (count) *count = (int32_t)(sizeof methods / sizeof methods[0]);
    return methods;
}

const hsdag_place_method *hsdag_place_method_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, name) == 0) return &methods[i];
    return NULL;
}
