/* simple.c - the cheap placers: one device, random, round-robin, Baechi's m-TOPO and Tarnawski's greedy.
 * Not here: schedulers that look at time (list.c), partitioners (metis.c), exact solvers (mincut.c, ilp.c).
 * Entry points: place_single, place_random, place_round_robin, place_mtopo, place_greedy_tarnawski. */
#include "place_int.h"

/* Every op on o->device, even ops that device may not run or that overflow it (the simulator then reports
 * the placement infeasible): this is the baseline the paper compares against. */
int place_single(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                 hsdag_err *e)
{
    if (o->device < 0 || o->device >= p->k) return hsdag_err_set(e, HSDAG_EINVAL, "place: no such device");
    for (int32_t v = 0; v < p->n; v++) device[v] = o->device;
    int bad = 0;
    for (int32_t gi = 0; gi < p->n_groups && !bad; gi++) bad = !place_group_ok(p, gi, o->device);
    if (bad)
        snprintf(r->note, sizeof r->note, "some ops may not run on %s: placement kept as asked (infeasible)",
                 p->devs->dev[o->device].name);
    return 0;
}

static int fits(const hsdag_place_problem *p, const double *used, int32_t gi, int32_t d)
{
    return place_group_ok(p, gi, d) && used[d] + p->grp_mem[gi] <= p->cap[d];
}

/* Allowed device with the most free memory (ties: lower index); the last resort of every placer here. */
static int32_t roomiest(const hsdag_place_problem *p, const double *used, int32_t gi, hsdag_place_report *r)
{
    int32_t best = -1;
    for (int32_t d = 0; d < p->k; d++)
        if (place_group_ok(p, gi, d) && (best < 0 || p->cap[d] - used[d] > p->cap[best] - used[best]))
            best = d;
    if (best < 0) best = place_group_fallback(p, gi);
    if (used[best] + p->grp_mem[gi] > p->cap[best] && !r->note[0])
        snprintf(r->note, sizeof r->note, "memory: op '%s' fits on no allowed device; placed on the roomiest",
                 p->g->name[p->grp_node[p->grp_off[gi]]]);
    return best;
}

static void assign(const hsdag_place_problem *p, int32_t *device, double *used, int32_t gi, int32_t d)
{
    place_group_set(p, device, gi, d);
    used[d] += p->grp_mem[gi];
}

int place_random(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                 hsdag_err *e)
{
    double used[HSDAG_MAX_DEVICES] = {0};
    int32_t cand[HSDAG_MAX_DEVICES];
    hsdag_rng rng;
    hsdag_rng_seed(&rng, o->seed);
    (void)e;
    for (int32_t gi = 0; gi < p->n_groups; gi++) {
        int32_t nc = 0;
        for (int32_t d = 0; d < p->k; d++)
            if (fits(p, used, gi, d)) cand[nc++] = d;
        int32_t d = nc ? cand[hsdag_rng_below(&rng, (uint32_t)nc)] : roomiest(p, used, gi, r);
        assign(p, device, used, gi, d);
    }
    return 0;
}

int place_round_robin(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e)
{
    double used[HSDAG_MAX_DEVICES] = {0};
    int32_t next = 0;
    (void)o;
    (void)e;
    for (int32_t gi = 0; gi < p->n_groups; gi++) {
        int32_t d = -1;
        for (int32_t i = 0; i < p->k && d < 0; i++)
            if (fits(p, used, gi, (next + i) % p->k)) d = (next + i) % p->k;
        if (d < 0)
            d = roomiest(p, used, gi, r);
        else
            next = (d + 1) % p->k;
        assign(p, device, used, gi, d);
    }
    return 0;
}

/* Baechi's m-TOPO: walk the topological order and fill device 0, 1, ... each up to an equal share of the
 * total memory (never above its capacity; the last device up to its capacity). A class the current device
 * may not run goes to the roomiest allowed device without moving the cursor. */
int place_mtopo(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                hsdag_err *e)
{
    double used[HSDAG_MAX_DEVICES] = {0}, lim[HSDAG_MAX_DEVICES], total = 0;
    (void)o;
    (void)e;
    for (int32_t gi = 0; gi < p->n_groups; gi++) total += p->grp_mem[gi];
    for (int32_t d = 0; d < p->k; d++) {
        double share = total / p->k;
        lim[d] = d == p->k - 1 ? p->cap[d] : fmin(p->cap[d], share);
    }
    int32_t cur = 0;
    for (int32_t gi = 0; gi < p->n_groups; gi++) {
        int32_t d = -1;
        if (place_group_ok(p, gi, cur)) {
            while (cur < p->k - 1 && used[cur] + p->grp_mem[gi] > lim[cur] && used[cur] > 0) cur++;
            if (place_group_ok(p, gi, cur) && used[cur] + p->grp_mem[gi] <= p->cap[cur]) d = cur;
        }
        if (d < 0) {
            for (int32_t x = 0; x < p->k && d < 0; x++)
                if (fits(p, used, gi, x) && used[x] + p->grp_mem[gi] <= lim[x]) d = x;
            if (d < 0) d = roomiest(p, used, gi, r);
        }
        assign(p, device, used, gi, d);
    }
    return 0;
}

/* Puts every member of block b on d. */
static void assign_block(const hsdag_place_problem *p, int32_t *device, double *used, int32_t b, int32_t d)
{
    for (int32_t i = p->blk_off[b]; i < p->blk_off[b + 1]; i++) assign(p, device, used, p->blk_grp[i], d);
}

static int block_fits(const hsdag_place_problem *p, const double *used, int32_t b, int32_t d)
{
    return ((p->blk_allowed[b] >> d) & 1u) && used[d] + p->blk_mem[b] <= p->cap[d];
}

/* Tarnawski et al.'s latency greedy (latency-greedy/greedy.cpp), exactly: the blocks (colour classes fused
 * when they reach each other both ways) in their depth-first topological order (blk_order); consecutive
 * blocks fill the current accelerator while they fit under its memory cap; a block that does not fit closes
 * it and opens the next accelerator if it fits there empty, else it goes to the CPU (so a block too large for
 * any accelerator also closes the current one, as in their code); once the accelerators are used up,
 * everything goes to the CPU. The accelerators are the non-CPU devices, at most devs->max_accels_used of
 * them. One generalisation: a block that may not run on the next accelerator (Tarnawski supportedOnFpga =
 * false; their greedy does not look at it) is treated like one that does not fit. */
int place_greedy_tarnawski(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                           hsdag_place_report *r, hsdag_err *e)
{
    double used[HSDAG_MAX_DEVICES] = {0};
    int32_t acc[HSDAG_MAX_DEVICES], na = 0, cur = -1, open = 0, on_cpu = 0;
    (void)o;
    (void)e;
    for (int32_t d = 0; d < p->k; d++)
        if (p->devs->dev[d].kind != HSDAG_DEV_CPU) acc[na++] = d;
    if (p->devs->max_accels_used >= 0 && na > p->devs->max_accels_used) na = p->devs->max_accels_used;
    for (int32_t i = 0; i < p->n_blocks; i++) {
        int32_t b = p->blk_order[i];
        if (open && block_fits(p, used, b, acc[cur])) {
            assign_block(p, device, used, b, acc[cur]);
            continue;
        }
        open = 0;
        if (cur + 1 < na && block_fits(p, used, b, acc[cur + 1])) {
            cur++;
            open = 1;
            assign_block(p, device, used, b, acc[cur]);
            continue;
        }
        /* to the CPU; a block that cannot run there (possible with hand-written device sets) goes group by
         * group to the roomiest allowed device */
        on_cpu++;
        for (int32_t j = p->blk_off[b]; j < p->blk_off[b + 1]; j++) {
            int32_t gi = p->blk_grp[j];
            int32_t d = p->cpu >= 0 && fits(p, used, gi, p->cpu) ? p->cpu : roomiest(p, used, gi, r);
            assign(p, device, used, gi, d);
        }
    }
    if (!r->note[0])
        snprintf(r->note, sizeof r->note, "%d of %d blocks on accelerators (%d used), %d on the CPU",
                 (int)(p->n_blocks - on_cpu), (int)p->n_blocks, (int)(cur + 1), (int)on_cpu);
    return 0;
}
