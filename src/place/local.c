/* local.c - local search on the simulator: move one colour class, a run of consecutive classes in topological
 *           order, a whole "light component" (ops with tiny outputs connected by tiny tensors, e.g. the shape
 *           arithmetic of transformer exports) or the same classes at every repeat of a structure ("twins",
 *           e.g. the layers of a transformer) to another device while the simulated latency improves;
 *           seeded restarts from perturbations.
 * Not here: any cost model of its own: every kept move is scored by p->sim under p->sem; under sequential
 *           latency the moves are screened first by the change of the sequential sum (seqdelta.c).
 * Entry points: place_local_search.
 * Deterministic for a seed while the evaluation budget (max_evals), not the time limit, ends the search. */
#include "place_int.h"

#include "hsdag/codec.h"

typedef struct ls_state {
    hsdag_place_problem *p;
    int32_t *cur;       /* [n] current placement */
    int32_t *save_node; /* [n] undo buffer */
    int32_t *save_dev;
    int32_t nsave;
    place_score score;
    int64_t evals, max_evals; /* moves scored (by a delta or a simulation) and full starts */
    int64_t sims;             /* of which full simulations */
    int64_t kept;             /* moves kept */
    place_deadline deadline;
    double used[HSDAG_MAX_DEVICES]; /* bytes on each device (p->mem), kept in step with cur */
    int32_t n_comp;                 /* light components of 2..LS_COMP_MAX nodes */
    int32_t *comp_off;              /* [n_comp + 1] CSR into comp_node */
    int32_t *comp_node;             /* [n] at most */
    int32_t n_twin;                 /* twin classes: groups of one structural signature, 2 or more */
    int32_t *twin_off;              /* [n_twin + 1] CSR into twin_grp */
    int32_t *twin_grp;              /* [n_groups] at most, ascending within a class */
    int cap_binds;                  /* some device cannot hold the whole model's bytes (p->mem) */
    double noise;   /* o->noise: every score is a noisy measurement (latency x exp(noise z)) */
    hsdag_rng nrng; /* its stream */
    int inc;        /* screen moves with sd (sequential latency, no noise) */
    place_seqdelta sd;
    int stat_ok;                    /* every static size is a number >= 0: stat[] screens memory */
    double stat[HSDAG_MAX_DEVICES]; /* static bytes on each device, kept in step with cur */
} ls_state;

/* One scoring of dev: the simulator's, with the measurement noise of o->noise when asked for. */
static place_score ls_eval(ls_state *s, const int32_t *dev)
{
    s->sims++;
    place_score sc = place_evaluate(s->p, dev);
    if (s->noise > 0) sc.latency_s *= exp(s->noise * hsdag_rng_normal(&s->nrng));
    return sc;
}

#define LS_LIGHT_BYTES 4096.0 /* an op whose outputs total at most this is "light" */
#define LS_COMP_MAX 512       /* larger light components are left to the other moves */

static int ls_out_of_budget(const ls_state *s)
{
    return s->evals >= s->max_evals || ((s->evals & 63) == 0 && place_deadline_passed(s->deadline));
}

/* Puts node v on d, keeping the undo record and the memory sums. */
static void ls_set(ls_state *s, int32_t v, int32_t d)
{
    s->save_node[s->nsave] = v;
    s->save_dev[s->nsave++] = s->cur[v];
    s->used[s->cur[v]] -= s->p->mem[v];
    s->used[d] += s->p->mem[v];
    s->stat[s->cur[v]] -= s->p->c->static_bytes[v];
    s->stat[d] += s->p->c->static_bytes[v];
    s->cur[v] = d;
}

/* After cur changed wholesale: the memory sums and the delta's terms from scratch. */
static void ls_resync(ls_state *s)
{
    const hsdag_place_problem *p = s->p;
    place_memory_used(p, s->cur, s->used);
    for (int32_t d = 0; d < p->k; d++) s->stat[d] = 0;
    for (int32_t v = 0; v < p->n; v++) s->stat[s->cur[v]] += p->c->static_bytes[v];
    if (s->inc) place_seqdelta_reset(&s->sd, s->cur);
}

/* Moves classes [g0, g1) that may run on d to d; returns how many nodes changed (undo kept in save_*). */
static int32_t ls_apply(ls_state *s, int32_t g0, int32_t g1, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    s->nsave = 0;
    for (int32_t gi = g0; gi < g1; gi++) {
        if (!place_group_ok(p, gi, d)) continue;
        for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) {
            int32_t v = p->grp_node[i];
            if (s->cur[v] == d) continue;
            ls_set(s, v, d);
        }
    }
    return s->nsave;
}

static int32_t uf_find(int32_t *par, int32_t x)
{
    while (par[x] != x) x = par[x] = par[par[x]];
    return x;
}

/* Light components: connected components (edge direction ignored) of the subgraph of light ops, i.e. ops
 * whose
 * outputs total at most LS_LIGHT_BYTES. Moving one op of such a chain pays a transfer on each side, moving
 * the
 * whole component pays only where it meets heavy ops, so single moves get stuck where component moves do not.
 * Components are numbered by their first node in topological order; members ascend. Returns 0 or ENOMEM. */
static int ls_comps_build(ls_state *s)
{
    const hsdag_graph *g = s->p->g;
    int32_t n = g->n_nodes, nc = 0;
    int32_t *par = hsdag_malloc(((size_t)n + 1) * sizeof *par),
            *size = hsdag_calloc((size_t)n + 1, sizeof *size);
    int32_t *id = hsdag_malloc(((size_t)n + 1) * sizeof *id);
    s->comp_off = hsdag_malloc(((size_t)n + 2) * sizeof *s->comp_off);
    s->comp_node = hsdag_malloc(((size_t)n + 1) * sizeof *s->comp_node);
    int rc = (!par || !size || !id || !s->comp_off || !s->comp_node) ? HSDAG_ENOMEM : 0;
    if (rc == 0) {
        for (int32_t v = 0; v < n; v++) par[v] = v;
        for (int32_t u = 0; u < n; u++) {
            if (g->out_bytes[u] > LS_LIGHT_BYTES) continue;
            for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++) {
                int32_t v = g->out_dst[k];
                if (g->out_bytes[v] > LS_LIGHT_BYTES) continue;
                int32_t a = uf_find(par, u), b = uf_find(par, v);
                if (a != b) par[a > b ? a : b] = a < b ? a : b; /* root = smallest node: deterministic */
            }
        }
        for (int32_t v = 0; v < n; v++) size[uf_find(par, v)]++;
        for (int32_t v = 0; v < n; v++) id[v] = -1;
        for (int32_t v = 0; v < n; v++) {
            int32_t r = uf_find(par, v);
            if (size[r] >= 2 && size[r] <= LS_COMP_MAX && r == v) id[r] = nc++;
        }
        /* counting sort of members by component; size[] is reused as each component's fill cursor */
        for (int32_t c = 0; c <= nc; c++) s->comp_off[c] = 0;
        for (int32_t v = 0; v < n; v++) {
            int32_t c = id[uf_find(par, v)];
            if (c >= 0) s->comp_off[c + 1]++;
        }
        for (int32_t c = 0; c < nc; c++) s->comp_off[c + 1] += s->comp_off[c];
        for (int32_t c = 0; c < nc; c++) size[c] = s->comp_off[c];
        for (int32_t v = 0; v < n; v++) {
            int32_t c = id[uf_find(par, v)];
            if (c >= 0) s->comp_node[size[c]++] = v;
        }
        s->n_comp = nc;
    }
    hsdag_free(par);
    hsdag_free(size);
    hsdag_free(id);
    return rc;
}

/* Moves the classes of the members of light component c that may run on d to d (undo kept in save_*). */
static int32_t ls_apply_comp(ls_state *s, int32_t c, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    s->nsave = 0;
    for (int32_t i = s->comp_off[c]; i < s->comp_off[c + 1]; i++) {
        int32_t gi = p->group[s->comp_node[i]];
        if (!place_group_ok(p, gi, d)) continue;
        for (int32_t j = p->grp_off[gi]; j < p->grp_off[gi + 1]; j++) {
            int32_t u = p->grp_node[j];
            if (s->cur[u] == d) continue;
            ls_set(s, u, d);
        }
    }
    return s->nsave;
}

/* ---- twin moves: one move made at every repeat of a structure at once (the layers of a transformer, the
 * modules of a CNN stage). Where a model repeats a block, the move that helps one copy helps each, and
 * first-improvement descent finds it once instead of once per copy. ---- */
#define LS_TWIN_ROUNDS 3 /* rounds of neighbourhood hashing (Weisfeiler-Lehman): a twin matches 3 hops out */

/* x hashed with a salt (FNV-1a over both): the terms of the neighbourhood sums. */
static uint64_t ls_mix(uint64_t x, uint64_t salt)
{
    const uint64_t a[2] = {x, salt};
    return hsdag_fnv1a64(HSDAG_FNV64_BASIS, a, sizeof a);
}

typedef struct ls_sig {
    uint64_t h;
    int32_t g;
} ls_sig;

static int ls_sig_cmp(const void *a, const void *b)
{
    const ls_sig *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return (x->g > y->g) - (x->g < y->g);
}

/* Twin classes: groups whose members' ops, output bytes, costs and allowed devices agree, and whose
 * neighbourhoods agree for LS_TWIN_ROUNDS hops (a commutative sum of the neighbours' hashed signatures, in
 * and out kept apart). Classes of 2 or more groups, members ascending; numbered by their first group. */
static int ls_twins_build(ls_state *s)
{
    const hsdag_place_problem *p = s->p;
    const hsdag_graph *g = p->g;
    int32_t ng = p->n_groups, k = p->k;
    uint64_t *h = hsdag_malloc(((size_t)ng + 1) * sizeof *h),
             *nh = hsdag_malloc(((size_t)ng + 1) * sizeof *nh);
    ls_sig *sig = hsdag_malloc(((size_t)ng + 1) * sizeof *sig);
    s->twin_off = hsdag_malloc(((size_t)ng + 2) * sizeof *s->twin_off);
    s->twin_grp = hsdag_malloc(((size_t)ng + 1) * sizeof *s->twin_grp);
    int rc = (!h || !nh || !sig || !s->twin_off || !s->twin_grp) ? HSDAG_ENOMEM : 0;
    for (int32_t gi = 0; rc == 0 && gi < ng; gi++) {
        uint64_t x = hsdag_fnv1a64(HSDAG_FNV64_BASIS, &p->group_allowed[gi], sizeof p->group_allowed[gi]);
        for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) {
            int32_t v = p->grp_node[i];
            const char *op = g->op[v] ? g->op[v] : "";
            x = hsdag_fnv1a64(x, op, strlen(op) + 1);
            x = hsdag_fnv1a64(x, &g->out_bytes[v], sizeof g->out_bytes[v]);
            x = hsdag_fnv1a64(x, &p->c->node_s[(size_t)v * k], (size_t)k * sizeof *p->c->node_s);
        }
        h[gi] = x;
    }
    for (int r = 0; rc == 0 && r < LS_TWIN_ROUNDS; r++) {
        for (int32_t gi = 0; gi < ng; gi++) {
            uint64_t in = 0, out = 0;
            for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) {
                int32_t v = p->grp_node[i];
                for (int32_t e = g->in_off[v]; e < g->in_off[v + 1]; e++)
                    if (p->group[g->in_src[e]] != gi) in += ls_mix(h[p->group[g->in_src[e]]], 1);
                for (int32_t e = g->out_off[v]; e < g->out_off[v + 1]; e++)
                    if (p->group[g->out_dst[e]] != gi) out += ls_mix(h[p->group[g->out_dst[e]]], 2);
            }
            nh[gi] = ls_mix(h[gi], ls_mix(in, out));
        }
        uint64_t *t = h;
        h = nh, nh = t;
    }
    int32_t nt = 0, m = 0;
    if (rc == 0) {
        for (int32_t gi = 0; gi < ng; gi++) sig[gi] = (ls_sig){h[gi], gi};
        qsort(sig, (size_t)ng, sizeof *sig, ls_sig_cmp);
        /* the runs of equal hash of 2 or more (members ascend: sorted by (hash, group)), each member keyed by
         * (the run's first group, itself), then sorted by that key: classes by first member */
        for (int32_t a = 0, b; a < ng; a = b) {
            for (b = a + 1; b < ng && sig[b].h == sig[a].h; b++) {}
            if (b - a < 2) continue;
            uint64_t first = (uint64_t)(uint32_t)sig[a].g << 32;
            for (int32_t i = a; i < b; i++) sig[m++] = (ls_sig){first | (uint32_t)sig[i].g, sig[i].g};
        }
        qsort(sig, (size_t)m, sizeof *sig, ls_sig_cmp);
        s->twin_off[0] = 0;
        nt = 0;
        for (int32_t i = 0; i < m; i++) {
            if (i > 0 && (sig[i].h >> 32) != (sig[i - 1].h >> 32)) s->twin_off[++nt] = i;
            s->twin_grp[i] = sig[i].g;
        }
        if (m > 0) s->twin_off[++nt] = m;
        s->n_twin = nt;
    }
    hsdag_free(h), hsdag_free(nh), hsdag_free(sig);
    return rc;
}

/* Moves the classes [t, t + w) for every member t of twin class c that may run on d to d (undo kept). */
static int32_t ls_apply_twin(ls_state *s, int32_t c, int32_t w, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    s->nsave = 0;
    for (int32_t i = s->twin_off[c]; i < s->twin_off[c + 1]; i++) {
        int32_t g0 = s->twin_grp[i], g1 = g0 + w > p->n_groups ? p->n_groups : g0 + w;
        for (int32_t gi = g0; gi < g1; gi++) {
            if (!place_group_ok(p, gi, d)) continue;
            for (int32_t j = p->grp_off[gi]; j < p->grp_off[gi + 1]; j++)
                if (s->cur[p->grp_node[j]] != d) ls_set(s, p->grp_node[j], d);
        }
    }
    return s->nsave;
}

static void ls_undo(ls_state *s)
{
    for (int32_t i = s->nsave - 1; i >= 0; i--) {
        int32_t v = s->save_node[i];
        s->used[s->cur[v]] -= s->p->mem[v];
        s->used[s->save_dev[i]] += s->p->mem[v];
        s->stat[s->cur[v]] -= s->p->c->static_bytes[v];
        s->stat[s->save_dev[i]] += s->p->c->static_bytes[v];
        s->cur[v] = s->save_dev[i];
    }
    s->nsave = 0;
}

static int ls_keep_if_better(ls_state *s, int32_t moved);

/* ---- block moves: whole blocks (colour classes fused when they reach each other), windows of the blocks'
 * depth-first order and shifts of the boundary between two devices along it, with Tarnawski's greedy's way
 * of making room: what overflows the target spills to the next device of the order ---- */

static int32_t ls_block_dev(const ls_state *s, int32_t b)
{
    const hsdag_place_problem *p = s->p;
    return s->cur[p->grp_node[p->grp_off[p->blk_grp[p->blk_off[b]]]]];
}

/* Moves block b to d (the groups of b that may run on d), recording the undo. */
static void ls_move_block(ls_state *s, int32_t b, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    for (int32_t j = p->blk_off[b]; j < p->blk_off[b + 1]; j++) {
        int32_t gi = p->blk_grp[j];
        if (!place_group_ok(p, gi, d)) continue;
        for (int32_t t = p->grp_off[gi]; t < p->grp_off[gi + 1]; t++) {
            int32_t v = p->grp_node[t];
            if (s->cur[v] != d) ls_set(s, v, d);
        }
    }
}

/* Where a block spilled from d goes: the device of its neighbour in the order on the far side (if not d and
 * it has room), else the first accelerator holding nothing, else the first CPU, else the roomiest device. */
static int32_t ls_spill_target(const ls_state *s, int32_t i, int dir, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    int32_t b = p->blk_order[i], j = i + dir;
    if (j >= 0 && j < p->n_blocks) {
        int32_t e = ls_block_dev(s, p->blk_order[j]);
        if (e != d && ((p->blk_allowed[b] >> e) & 1u) && s->used[e] + p->blk_mem[b] <= p->cap[e]) return e;
    }
    int32_t na = 0;
    for (int32_t x = 0; x < p->k; x++) {
        if (p->devs->dev[x].kind == HSDAG_DEV_CPU || x == d) continue;
        if (p->devs->max_accels_used >= 0 && ++na > p->devs->max_accels_used) break;
        if (s->used[x] == 0 && ((p->blk_allowed[b] >> x) & 1u) && p->blk_mem[b] <= p->cap[x]) return x;
    }
    if (p->cpu >= 0 && p->cpu != d && ((p->blk_allowed[b] >> p->cpu) & 1u)) return p->cpu;
    int32_t best = -1;
    for (int32_t x = 0; x < p->k; x++)
        if (x != d && ((p->blk_allowed[b] >> x) & 1u) &&
            (best < 0 || p->cap[x] - s->used[x] > p->cap[best] - s->used[best]))
            best = x;
    return best;
}

/* After moving the window [i0, i1) of the order onto d: while d overflows, spill d's blocks outside the
 * window, the farthest after it first (to the device that follows them), then the farthest before it. */
static void ls_spill(ls_state *s, int32_t i0, int32_t i1, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    for (int32_t i = p->n_blocks - 1; i >= i1 && s->used[d] > p->cap[d]; i--) {
        int32_t b = p->blk_order[i];
        if (ls_block_dev(s, b) != d) continue;
        int32_t x = ls_spill_target(s, i, +1, d);
        if (x >= 0) ls_move_block(s, b, x);
    }
    for (int32_t i = 0; i < i0 && s->used[d] > p->cap[d]; i++) {
        int32_t b = p->blk_order[i];
        if (ls_block_dev(s, b) != d) continue;
        int32_t x = ls_spill_target(s, i, -1, d);
        if (x >= 0) ls_move_block(s, b, x);
    }
}

/* Moves the blocks at positions [i0, i1) of the order to d and spills what no longer fits. */
static int32_t ls_apply_window(ls_state *s, int32_t i0, int32_t i1, int32_t d)
{
    const hsdag_place_problem *p = s->p;
    s->nsave = 0;
    for (int32_t i = i0; i < i1; i++) ls_move_block(s, p->blk_order[i], d);
    if (s->nsave && s->used[d] > p->cap[d]) ls_spill(s, i0, i1, d);
    return s->nsave;
}

/* Windows of 1, 2, 4 and 8 blocks of the order to every device, then the boundaries: where consecutive
 * blocks sit on different devices, the last t blocks before it go to the device after it and the first t
 * after it to the device before (t = 1, 2, 4, 8). Returns whether anything improved. */
static int ls_descend_blocks(ls_state *s, hsdag_rng *rng)
{
    static const int32_t widths[] = {1, 2, 4, 8};
    const hsdag_place_problem *p = s->p;
    int32_t nb = p->n_blocks, off = nb ? (int32_t)hsdag_rng_below(rng, (uint32_t)nb) : 0;
    int improved = 0;
    for (int32_t t = 0; t < nb && !ls_out_of_budget(s); t++) {
        int32_t i = (off + t) % nb;
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            int32_t i1 = i + widths[w] > nb ? nb : i + widths[w];
            if (widths[w] > 1 && i1 - i < widths[w]) continue;
            for (int32_t d = 0; d < p->k && !ls_out_of_budget(s); d++)
                improved |= ls_keep_if_better(s, ls_apply_window(s, i, i1, d));
        }
        if (i + 1 >= nb) continue;
        int32_t da = ls_block_dev(s, p->blk_order[i]), db = ls_block_dev(s, p->blk_order[i + 1]);
        if (da == db) continue;
        for (size_t w = 0; w < sizeof widths / sizeof widths[0] && !ls_out_of_budget(s); w++) {
            int32_t lo = i + 1 - widths[w] < 0 ? 0 : i + 1 - widths[w];
            int32_t hi = i + 1 + widths[w] > nb ? nb : i + 1 + widths[w];
            improved |= ls_keep_if_better(s, ls_apply_window(s, lo, i + 1, db));
            improved |= ls_keep_if_better(s, ls_apply_window(s, i + 1, hi, da));
        }
    }
    return improved;
}

#define LS_SCREEN_TOL 0.5e-12 /* below place_score_better's 1e-12: rounding never screens out a gain */

/* Whether the static bytes alone already overflow a device (then the simulator's peak does too). */
static int ls_static_over(const ls_state *s)
{
    if (!s->stat_ok) return 0;
    for (int32_t d = 0; d < s->p->k; d++)
        if (s->stat[d] > s->p->cap[d] * (1 + 1e-9)) return 1;
    return 0;
}

/* Scores the move just applied (save_* holds its undo); keeps it if it improves the score. Under the
 * screen, from a feasible placement, only a move whose sequential delta gains and whose static bytes fit
 * is simulated: any other cannot be better (place_score_better: feasible first, then latency). */
static int ls_keep_if_better(ls_state *s, int32_t moved)
{
    if (!moved) return 0;
    s->evals++;
    if (s->inc) {
        double dl = place_seqdelta_delta(&s->sd, s->cur, s->save_node, s->nsave);
        if (s->score.feasible && (!(dl < -LS_SCREEN_TOL * fabs(s->score.latency_s)) || ls_static_over(s))) {
            ls_undo(s);
            return 0;
        }
    }
    place_score sc = ls_eval(s, s->cur);
    if (place_score_better(sc, s->score)) {
        s->score = sc;
        s->kept++;
        if (s->inc) place_seqdelta_commit(&s->sd);
        return 1;
    }
    ls_undo(s);
    return 0;
}

/* Tries moving classes [g0, g1) to d. */
static int ls_try(ls_state *s, int32_t g0, int32_t g1, int32_t d)
{
    return ls_keep_if_better(s, ls_apply(s, g0, g1, d));
}

/* One pass of twin moves from a seeded offset; returns whether anything improved. */
static int ls_descend_twins(ls_state *s, hsdag_rng *rng)
{
    int32_t nt = s->n_twin, off = nt ? (int32_t)hsdag_rng_below(rng, (uint32_t)nt) : 0;
    int improved = 0;
    for (int32_t t = 0; t < nt && !ls_out_of_budget(s); t++)
        for (int32_t w = 1; w <= 4; w *= 4)
            for (int32_t d = 0; d < s->p->k && !ls_out_of_budget(s); d++)
                improved |= ls_keep_if_better(s, ls_apply_twin(s, (off + t) % nt, w, d));
    return improved;
}

/* First-improvement descent over twin moves (a class, or the window of 4 from it, at every twin at once),
 * windows of 1, 4 and 16 consecutive classes, light components and block moves, starting each pass at a seeded
 * offset, until a whole pass improves nothing or the budget runs out. Twin moves come first, the big moves
 * before the small ones, unless a memory cap can bind: there the copies compete for the capped device's bytes,
 * a twin move spends them on every copy at once, and moving classes one at a time first places them where they
 * gain the most (on mem50-inception_v3, twins first left local search at 6.9 ms against 4.9 without twins;
 * last, at 4.9), so twin moves come last. */
static void ls_descend(ls_state *s, hsdag_rng *rng)
{
    static const int32_t widths[] = {1, 4, 16};
    const hsdag_place_problem *p = s->p;
    int32_t ng = p->n_groups;
    for (int improved = 1; improved && !ls_out_of_budget(s);) {
        improved = 0;
        if (!s->cap_binds) improved |= ls_descend_twins(s, rng);
        int32_t off = ng ? (int32_t)hsdag_rng_below(rng, (uint32_t)ng) : 0;
        for (int32_t t = 0; t < ng && !ls_out_of_budget(s); t++) {
            int32_t g0 = (off + t) % ng;
            for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
                if (widths[w] > 1 && (g0 % widths[w]) != 0) continue; /* windows aligned to their width */
                int32_t g1 = g0 + widths[w] > ng ? ng : g0 + widths[w];
                if (widths[w] > 1 && g1 - g0 < 2) continue;
                for (int32_t d = 0; d < p->k && !ls_out_of_budget(s); d++) improved |= ls_try(s, g0, g1, d);
            }
        }
        int32_t nc = s->n_comp, coff = nc ? (int32_t)hsdag_rng_below(rng, (uint32_t)nc) : 0;
        for (int32_t t = 0; t < nc && !ls_out_of_budget(s); t++)
            for (int32_t d = 0; d < p->k && !ls_out_of_budget(s); d++)
                improved |= ls_keep_if_better(s, ls_apply_comp(s, (coff + t) % nc, d));
        improved |= ls_descend_blocks(s, rng);
        if (s->cap_binds) improved |= ls_descend_twins(s, rng);
    }
}

/* The start when no --init is given: the best of every single device (classes a device may not run go to
 * their
 * first allowed device), HEFT, Tarnawski's greedy and, on two devices, the min cut. */
static int ls_start(hsdag_place_problem *p, int32_t *best, int32_t *tmp, ls_state *s, hsdag_err *e)
{
    place_score bs = {0, INFINITY, INFINITY};
    hsdag_place_opts o = hsdag_place_opts_default();
    for (int32_t d = 0; d < p->k + 3; d++) {
        hsdag_place_report rep = {.bound_s = NAN, .objective_s = NAN};
        int rc = 0;
        if (d < p->k) {
            for (int32_t gi = 0; gi < p->n_groups; gi++)
                place_group_set(p, tmp, gi, place_group_ok(p, gi, d) ? d : place_group_fallback(p, gi));
        } else if (d == p->k) {
            rc = place_heft(p, &o, tmp, &rep, e);
        } else if (d == p->k + 1) {
            rc = place_greedy_tarnawski(p, &o, tmp, &rep, e);
        } else {
            if (p->k != 2) continue;
            rc = hsdag_place_mincut_solve(p->c, tmp, NULL, NULL);
            if (rc < 0) continue;
        }
        if (rc < 0) return rc;
        place_score sc = ls_eval(s, tmp);
        s->evals++;
        if (place_score_better(sc, bs) || bs.latency_s == INFINITY) {
            bs = sc;
            memcpy(best, tmp, (size_t)p->n * sizeof *tmp);
        }
    }
    return 0;
}

/* Seeded restarts from perturbations of the best (about 5% of the classes, at least one, to a random allowed
 * device), each followed by a descent, until the budget runs out; *bscore/best keep the best. */
static int ls_restarts(ls_state *s, int32_t *best, place_score *bscore, hsdag_rng *rng)
{
    const hsdag_place_problem *p = s->p;
    int restarts = 0;
    while (!ls_out_of_budget(s) && p->k > 1 && p->n_groups > 0) {
        memcpy(s->cur, best, (size_t)p->n * sizeof *best);
        for (int32_t gi = 0; gi < p->n_groups; gi++) {
            if (hsdag_rng_uniform(rng) >= 0.05) continue;
            int32_t d = (int32_t)hsdag_rng_below(rng, (uint32_t)p->k);
            if (place_group_ok(p, gi, d)) place_group_set(p, s->cur, gi, d);
        }
        ls_resync(s);
        s->score = ls_eval(s, s->cur);
        s->evals++;
        ls_descend(s, rng);
        restarts++;
        if (place_score_better(s->score, *bscore)) {
            *bscore = s->score;
            memcpy(best, s->cur, (size_t)p->n * sizeof *best);
        }
    }
    return restarts;
}

/* The screen's set-up: on under sequential latency without measurement noise (a noisy score is not a sum). */
static int ls_screen_init(ls_state *s)
{
    const hsdag_place_problem *p = s->p;
    s->stat_ok = 1;
    for (int32_t v = 0; v < p->n; v++)
        if (!(p->c->static_bytes[v] >= 0)) s->stat_ok = 0;
    s->inc = p->sem == HSDAG_SEM_SEQUENTIAL && p->obj == HSDAG_OBJ_LATENCY && s->noise == 0;
    return s->inc ? place_seqdelta_init(&s->sd, p->c) : 0;
}

int place_local_search(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                       hsdag_place_report *r, hsdag_err *e)
{
    size_t n1 = (size_t)(p->n ? p->n : 1);
    ls_state s = {.p = p, .noise = o->noise > 0 ? o->noise : 0};
    hsdag_rng_seed(&s.nrng, o->seed ^ 0x6e6f697365ull); /* the oracle's noise stream (blackbox.c) */
    int32_t *best = hsdag_malloc(n1 * sizeof *best);
    s.cur = hsdag_malloc(n1 * sizeof *s.cur);
    /* a compound block move may move a node twice (into the window, then spilled): 2n undo entries */
    s.save_node = hsdag_malloc(2 * n1 * sizeof *s.save_node);
    s.save_dev = hsdag_malloc(2 * n1 * sizeof *s.save_dev);
    int rc = 0;
    if (!best || !s.cur || !s.save_node || !s.save_dev || ls_comps_build(&s) < 0 || ls_twins_build(&s) < 0 ||
        ls_screen_init(&s) < 0) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "local-search: out of memory");
        goto done;
    }
    double bytes = 0;
    for (int32_t v = 0; v < p->n; v++) bytes += p->mem[v];
    for (int32_t d = 0; d < p->k; d++) s.cap_binds |= p->cap[d] < bytes;
    s.max_evals = o->max_evals > 0 ? o->max_evals : 20000;
    s.deadline = place_deadline_in(o, 10.0);
    if (o->init) {
        for (int32_t v = 0; v < p->n; v++)
            if (o->init[v] < 0 || o->init[v] >= p->k) {
                rc = hsdag_err_set(e, HSDAG_EINVAL, "local-search: init: node '%s': device %d out of range",
                                   p->g->name[v], (int)o->init[v]);
                goto done;
            }
        memcpy(best, o->init, n1 * sizeof *best);
    } else if ((rc = ls_start(p, best, s.cur, &s, e)) < 0) {
        goto done;
    }
    hsdag_rng rng;
    hsdag_rng_seed(&rng, o->seed);
    memcpy(s.cur, best, (size_t)p->n * sizeof *best);
    ls_resync(&s);
    s.score = ls_eval(&s, s.cur);
    s.evals++;
    ls_descend(&s, &rng);
    place_score bscore = s.score;
    memcpy(best, s.cur, (size_t)p->n * sizeof *best);
    int restarts = ls_restarts(&s, best, &bscore, &rng);
    memcpy(device, best, (size_t)p->n * sizeof *best);
    r->evals = s.evals;
    r->objective_s = bscore.latency_s;
    snprintf(r->note, sizeof r->note,
             "%lld evaluations (%lld full simulations%s), %lld moves kept, %d restarts, %d twin classes%s",
             (long long)s.evals, (long long)s.sims, s.inc ? ", the rest sequential deltas" : "",
             (long long)s.kept, restarts, (int)s.n_twin,
             s.evals < s.max_evals ? " (stopped by the time limit: not reproducible)" : "");
done:
    place_seqdelta_free(&s.sd);
    hsdag_free(s.comp_off);
    hsdag_free(s.comp_node);
    hsdag_free(s.twin_off);
    hsdag_free(s.twin_grp);
    hsdag_free(best);
    hsdag_free(s.cur);
    hsdag_free(s.save_node);
    hsdag_free(s.save_dev);
    return rc;
}
