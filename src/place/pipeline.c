/* pipeline.c - the exact contiguous throughput (max-load) optimum: a DP over the ideals (downsets) of the
 *              block graph, as Tarnawski et al.'s throughput DP, with pruning and bounded memory; and the
 *              PipeDream-style DP over one linear chain of the blocks.
 * Not here: the throughput MILP (ilp_tput.c), scoring (every placement is simulated like any other).
 * Entry points: place_pipeline_dp ("dp"), place_pipedream ("pipedream"), place_pl_model_* (for the MILP).
 *
 * The problem (docs/placers.md, "The throughput objective"). A contiguous split is a chain of ideals
 * {} = I0 < I1 < ... < Im = all blocks; segment j = Ij \ I(j-1) runs on its own device. Its load is
 *   accelerator: sum of its ops' accelerator costs + sum over nodes u with an edge across the segment's
 *                boundary (u inside with a consumer outside, or u outside with a consumer inside) of
 *                hsdag_costs_host_xfer_s(u); infinite when its bytes exceed the accelerator's capacity or an
 *                op may not run there;
 *   CPU:         sum of its ops' CPU costs (CPUs pay no communication);
 * and the objective is the largest load. At most k accelerators (devs->max_accels_used) and l CPUs.
 *   dp[c][f][I] = the least max-load of a chain covering I with at most c CPU and f accelerator segments
 *               = min over J < I of max(dp[c-1][f][J], cpu(I \ J)) and max(dp[c][f-1][J], acc(I \ J)).
 * Their code materialises every pair (J, I) with its cost, which on Layer Inception-V3 (36,596 ideals,
 * about 670 million pairs) does not fit in 10 GB. Here the pairs are never stored: for each I the sub-ideals
 * J are walked depth first (remove one maximal block at a time, each J visited once), the segment's
 * costs are updated incrementally as blocks join it, and a branch stops as soon as the segment's compute
 * alone reaches the incumbent (compute and bytes only grow as the segment grows; communication is >= 0).
 * The incumbent comes from the chain DP, which is exact over the prefixes of one topological order.
 * Memory: the ideals (a bitset each), their immediate sub-ideals and the dp table; capped by
 * HSDAG_PL_MEMORY_BYTES, beyond which (or beyond the time limit) the chain DP's split is returned with the
 * generic bound and the note says so. */
#include "place_int.h"

#include <stdlib.h>

#define PL_MEMORY_BYTES (1536.0 * 1024 * 1024) /* ideals + links + dp table: well inside the 2 GB target */

/* ---- the model: blocks in topological order with their costs ---- */

static int pl_i32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int32_t pl_root(int32_t *root, int32_t b)
{
    while (root[b] != b) b = root[b] = root[root[b]];
    return b;
}

/* Zero-cost leaves: a block whose ops cost nothing on every device, whose only neighbour in the contiguity
 * graph is one block w and whose edges (either way, forward and backward) all lead to w, is merged into w
 * (root[b] = w), repeatedly. This never raises the optimum: in any contiguous split, moving the leaf to w's
 * device keeps the chain of ideals valid (the leaf's only constraint is w), removes the leaf's transfers from
 * both sides and adds no compute; it adds the leaf's bytes to w's device, so a leaf with bytes is merged only
 * when memory cannot bind (all ops together fit on one accelerator). Tarnawski et al.'s DP merges the same
 * leaves (its "trivial node optimizations"), bytes or not. */
static int pl_merge_leaves(const hsdag_place_problem *p, int32_t *root)
{
    const hsdag_graph *g = p->g;
    int32_t nb = p->n_blocks;
    int32_t *next = hsdag_malloc((size_t)(nb ? nb : 1) * sizeof *next),
            *last = hsdag_malloc((size_t)(nb ? nb : 1) * sizeof *last);
    if (!next || !last) {
        hsdag_free(next);
        hsdag_free(last);
        return HSDAG_ENOMEM;
    }
    double total = 0, cap = INFINITY;
    for (int32_t v = 0; v < p->n; v++) total += p->mem[v];
    for (int32_t d = 0; d < p->k; d++)
        if (p->cap[d] < cap) cap = p->cap[d];
    int mem_free = total <= cap;
    for (int32_t b = 0; b < nb; b++) root[b] = b, next[b] = -1, last[b] = b;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t b = 0; b < nb; b++) {
            if (root[b] != b) continue;
            int32_t nbr = -1, ok = 1;
            double bytes = 0;
            for (int32_t x = b; x >= 0 && ok; x = next[x]) { /* the blocks merged into b so far */
                for (int dir = 0; dir < 2 && ok; dir++) {
                    const int32_t *off = dir ? p->blk_succ_off : p->blk_pred_off;
                    const int32_t *lst = dir ? p->blk_succ : p->blk_pred;
                    for (int32_t j = off[x]; j < off[x + 1] && ok; j++) {
                        int32_t y = pl_root(root, lst[j]);
                        if (y == b) continue;
                        if (nbr < 0) nbr = y;
                        ok = y == nbr;
                    }
                }
                for (int32_t j = p->blk_off[x]; j < p->blk_off[x + 1] && ok; j++) {
                    int32_t gi = p->blk_grp[j];
                    for (int32_t t = p->grp_off[gi]; t < p->grp_off[gi + 1] && ok; t++) {
                        int32_t v = p->grp_node[t];
                        bytes += p->mem[v];
                        for (int32_t d = 0; d < p->k && ok; d++) ok = place_cost(p, v, d) == 0;
                        for (int dir = 0; dir < 2 && ok; dir++) {
                            int32_t lo = dir ? g->out_off[v] : g->in_off[v],
                                    hi = dir ? g->out_off[v + 1] : g->in_off[v + 1];
                            for (int32_t k = lo; k < hi && ok; k++) {
                                int32_t y =
                                    pl_root(root, p->block[p->group[dir ? g->out_dst[k] : g->in_src[k]]]);
                                if (y == b) continue;
                                if (nbr < 0) nbr = y;
                                ok = y == nbr;
                            }
                        }
                    }
                }
            }
            if (!ok || nbr < 0 || (bytes > 0 && !mem_free)) continue;
            root[b] = nbr;
            next[last[nbr]] = b; /* append b's members to nbr's list */
            last[nbr] = last[b];
            changed = 1;
        }
    }
    for (int32_t b = 0; b < nb; b++) root[b] = pl_root(root, b);
    hsdag_free(next);
    hsdag_free(last);
    return 0;
}

int place_pl_model_create(hsdag_place_problem *p, place_pl_model *m, hsdag_err *e)
{
    const hsdag_costs *c = p->c;
    memset(m, 0, sizeof *m);
    m->p = p;
    int32_t na = 0, nc = 0;
    for (int32_t d = 0; d < p->k; d++) {
        if (p->devs->dev[d].kind == HSDAG_DEV_CPU)
            m->cpu_dev[nc++] = d;
        else
            m->acc_dev[na++] = d;
    }
    if (p->devs->max_accels_used >= 0 && na > p->devs->max_accels_used) na = p->devs->max_accels_used;
    m->k = na;
    m->l = nc;
    /* the DP counts devices of each kind: they must be interchangeable */
    for (int kind = 0; kind < 2; kind++) {
        const int32_t *list = kind ? m->acc_dev : m->cpu_dev;
        int32_t cnt = kind ? na : nc;
        for (int32_t i = 1; i < cnt; i++) {
            int32_t a = list[0], b = list[i];
            int same = p->cap[a] == p->cap[b];
            for (int32_t v = 0; v < p->n && same; v++)
                same = place_cost(p, v, a) == place_cost(p, v, b) &&
                       c->allowed[(size_t)v * p->k + a] == c->allowed[(size_t)v * p->k + b] &&
                       (!kind || hsdag_costs_host_xfer_s(c, v, a) == hsdag_costs_host_xfer_s(c, v, b));
            if (!same)
                return hsdag_err_set(e, HSDAG_EUNSUPPORTED,
                                     "pipeline: %s and %s differ; the DP needs interchangeable devices of "
                                     "each kind",
                                     p->devs->dev[a].name, p->devs->dev[b].name);
        }
    }
    int32_t nb = p->n_blocks, n = p->n;
    size_t n1 = (size_t)(n ? n : 1), b1 = (size_t)(nb ? nb : 1);
    int32_t *root = hsdag_malloc(b1 * sizeof *root), *uid = hsdag_malloc(b1 * sizeof *uid);
    m->unode_off = hsdag_calloc(b1 + 1, sizeof *m->unode_off);
    m->unode = hsdag_malloc(n1 * sizeof *m->unode);
    m->unit_of = hsdag_malloc(n1 * sizeof *m->unit_of);
    m->pos = hsdag_malloc(b1 * sizeof *m->pos);
    m->pred_off = hsdag_calloc(b1 + 1, sizeof *m->pred_off);
    m->pred = hsdag_malloc((size_t)(p->blk_pred_off[nb] ? p->blk_pred_off[nb] : 1) * sizeof *m->pred);
    m->w_acc = hsdag_calloc(b1, sizeof *m->w_acc);
    m->w_cpu = hsdag_calloc(b1, sizeof *m->w_cpu);
    m->size = hsdag_calloc(b1, sizeof *m->size);
    m->ok = hsdag_calloc(b1, sizeof *m->ok);
    m->comm = hsdag_malloc(n1 * sizeof *m->comm);
    m->outdeg = hsdag_malloc(n1 * sizeof *m->outdeg);
    if (!m->outdeg || !root || !uid || !m->unode_off || !m->unode || !m->unit_of || !m->pos || !m->pred_off ||
        !m->pred || !m->w_acc || !m->w_cpu || !m->size || !m->ok || !m->comm) {
        hsdag_free(root);
        hsdag_free(uid);
        place_pl_model_free(m);
        return hsdag_err_set(e, HSDAG_ENOMEM, "pipeline: out of memory");
    }
    if (pl_merge_leaves(p, root) < 0) {
        hsdag_free(root);
        hsdag_free(uid);
        place_pl_model_free(m);
        return hsdag_err_set(e, HSDAG_ENOMEM, "pipeline: out of memory");
    }
    /* units = the roots, in blk_order (a merged leaf sits at its neighbour's place: still topological) */
    int32_t nu = 0;
    for (int32_t i = 0; i < nb; i++) {
        int32_t b = p->blk_order[i];
        if (root[b] == b) uid[b] = nu++;
    }
    for (int32_t b = 0; b < nb; b++) m->pos[b] = uid[root[b]];
    m->nu = nu;
    m->n_merged = nb - nu;
    for (int32_t v = 0; v < n; v++) {
        int32_t u = m->pos[p->block[p->group[v]]];
        m->unit_of[v] = u;
        m->unode_off[u + 1]++;
    }
    for (int32_t u = 0; u < nu; u++) m->unode_off[u + 1] += m->unode_off[u];
    for (int32_t u = 0; u < nu; u++) uid[u] = m->unode_off[u]; /* fill cursors */
    for (int32_t v = 0; v < n; v++) m->unode[uid[m->unit_of[v]]++] = v;
    /* unit predecessors: distinct, ascending (mark by the unit being filled) */
    for (int32_t u = 0; u < nu; u++) uid[u] = -1;
    int32_t w = 0;
    for (int32_t u = 0; u < nu; u++) {
        m->pred_off[u] = w;
        for (int32_t t = m->unode_off[u]; t < m->unode_off[u + 1]; t++) {
            int32_t b = p->block[p->group[m->unode[t]]];
            if (t > m->unode_off[u] && b == p->block[p->group[m->unode[t - 1]]]) continue;
            for (int32_t j = p->blk_pred_off[b]; j < p->blk_pred_off[b + 1]; j++) {
                int32_t q = m->pos[p->blk_pred[j]];
                if (q == u || uid[q] == u) continue;
                uid[q] = u;
                HSDAG_ASSERT(q < u);
                m->pred[w++] = q;
            }
        }
        qsort(m->pred + m->pred_off[u], (size_t)(w - m->pred_off[u]), sizeof *m->pred, pl_i32_cmp);
    }
    m->pred_off[nu] = w;
    hsdag_free(root);
    hsdag_free(uid);
    int32_t a0 = na ? m->acc_dev[0] : -1, c0 = nc ? m->cpu_dev[0] : -1;
    m->cap_acc = a0 >= 0 ? p->cap[a0] : 0;
    m->cap_cpu = c0 >= 0 ? p->cap[c0] : 0;
    for (int32_t u = 0; u < nu; u++) {
        uint8_t ok = (a0 >= 0 ? PL_OK_ACC : 0) | (c0 >= 0 ? PL_OK_CPU : 0);
        for (int32_t t = m->unode_off[u]; t < m->unode_off[u + 1]; t++) {
            int32_t v = m->unode[t];
            if (a0 >= 0) {
                m->w_acc[u] += place_cost(p, v, a0);
                if (!c->allowed[(size_t)v * p->k + a0]) ok &= (uint8_t)~PL_OK_ACC;
            }
            if (c0 >= 0) {
                m->w_cpu[u] += place_cost(p, v, c0);
                if (!c->allowed[(size_t)v * p->k + c0]) ok &= (uint8_t)~PL_OK_CPU;
            }
            m->size[u] += p->mem[v];
        }
        m->ok[u] = ok;
    }
    for (int32_t v = 0; v < n; v++) {
        m->comm[v] = a0 >= 0 ? hsdag_costs_host_xfer_s(c, v, a0) : 0;
        m->outdeg[v] = p->g->out_off[v + 1] - p->g->out_off[v];
    }
    return 0;
}

void place_pl_model_free(place_pl_model *m)
{
    hsdag_free(m->unode_off);
    hsdag_free(m->unode);
    hsdag_free(m->unit_of);
    hsdag_free(m->pos);
    hsdag_free(m->pred_off);
    hsdag_free(m->pred);
    hsdag_free(m->w_acc);
    hsdag_free(m->w_cpu);
    hsdag_free(m->size);
    hsdag_free(m->ok);
    hsdag_free(m->comm);
    hsdag_free(m->outdeg);
    memset(m, 0, sizeof *m);
}

/* ---- one segment, grown and shrunk a unit at a time ----
 * in_s[v]: v is in the segment; succ_in[u]: u's out-edges that land in the segment. A node u counts in the
 * communication when (in_s[u] and succ_in[u] < outdeg[u]) or (!in_s[u] and succ_in[u] > 0). */
typedef struct pl_seg {
    const place_pl_model *m;
    uint8_t *in_s;    /* [n] */
    int32_t *succ_in; /* [n] */
    double w_acc, w_cpu, size, comm;
    int32_t bad_acc, bad_cpu; /* units in the segment that may not run on an accelerator / a CPU */
} pl_seg;

static int seg_init(pl_seg *s, const place_pl_model *m)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    size_t n1 = (size_t)(m->p->n ? m->p->n : 1);
    s->in_s = hsdag_calloc(n1, 1);
    s->succ_in = hsdag_calloc(n1, sizeof *s->succ_in);
    return s->in_s && s->succ_in ? 0 : HSDAG_ENOMEM;
}

static void seg_free(pl_seg *s)
{
    hsdag_free(s->in_s);
    hsdag_free(s->succ_in);
}

/* Zeroes the float sums once the segment is empty again (the adds and removes leave rounding noise). */
static void seg_reset(pl_seg *s)
{
    s->w_acc = s->w_cpu = s->size = s->comm = 0;
}

static inline int seg_counts(const uint8_t *in_s, const int32_t *succ_in, const int32_t *outdeg, int32_t u)
{
    return in_s[u] ? succ_in[u] < outdeg[u] : succ_in[u] > 0;
}

/* dir = +1 adds unit u to the segment, -1 removes it. The hot loop of both DPs. */
static void seg_move(pl_seg *s, int32_t u, int dir)
{
    const place_pl_model *m = s->m;
    const hsdag_graph *g = m->p->g;
    const int32_t *restrict in_off = g->in_off, *restrict in_src = g->in_src, *restrict outdeg = m->outdeg;
    const int32_t *restrict unode = m->unode;
    const double *restrict comm = m->comm;
    uint8_t *restrict in_s = s->in_s;
    int32_t *restrict succ_in = s->succ_in;
    double cm = s->comm;
    for (int32_t t = m->unode_off[u], te = m->unode_off[u + 1]; t < te; t++) {
        int32_t x = unode[t];
        int before = seg_counts(in_s, succ_in, outdeg, x);
        in_s[x] = dir > 0;
        int after = seg_counts(in_s, succ_in, outdeg, x);
        if (after != before) cm += comm[x] * (after - before);
        for (int32_t k = in_off[x], ke = in_off[x + 1]; k < ke; k++) {
            int32_t y = in_src[k];
            int b = seg_counts(in_s, succ_in, outdeg, y);
            succ_in[y] += dir;
            int a = seg_counts(in_s, succ_in, outdeg, y);
            if (a != b) cm += comm[y] * (a - b);
        }
    }
    s->comm = cm;
    s->w_acc += dir * m->w_acc[u];
    s->w_cpu += dir * m->w_cpu[u];
    s->size += dir * m->size[u];
    s->bad_acc += dir * !(m->ok[u] & PL_OK_ACC);
    s->bad_cpu += dir * !(m->ok[u] & PL_OK_CPU);
}

/* The loads of the current segment on an accelerator and on a CPU (INFINITY where it may not go). */
static inline double seg_acc(const pl_seg *s)
{
    const place_pl_model *m = s->m;
    if (!m->k || s->bad_acc || (m->cap_acc < INFINITY && s->size > m->cap_acc)) return INFINITY;
    return s->w_acc + (s->comm > 0 ? s->comm : 0);
}
static inline double seg_cpu(const pl_seg *s)
{
    const place_pl_model *m = s->m;
    if (!m->l || s->bad_cpu || (m->cap_cpu < INFINITY && s->size > m->cap_cpu)) return INFINITY;
    return s->w_cpu;
}
/* Can a larger segment still be useful below bound? (compute and bytes only grow) */
static inline int seg_alive(const pl_seg *s, double bound)
{
    const place_pl_model *m = s->m;
    int acc = m->k && !s->bad_acc && !(m->cap_acc < INFINITY && s->size > m->cap_acc) && s->w_acc < bound;
    int cpu = m->l && !s->bad_cpu && !(m->cap_cpu < INFINITY && s->size > m->cap_cpu) && s->w_cpu < bound;
    return acc || cpu;
}

/* ---- writing a chain of segments as a placement ---- */

/* seg_of_unit[u] = segment index, seg_acc_flag[j] = 1 for an accelerator segment; devices in chain order. */
static void pl_place(const place_pl_model *m, const int32_t *seg_of_unit, const uint8_t *is_acc, int32_t nseg,
                     int32_t *device)
{
    int32_t dev_of_seg[HSDAG_MAX_DEVICES * 2], na = 0, nc = 0;
    for (int32_t j = 0; j < nseg && j < HSDAG_MAX_DEVICES * 2; j++)
        dev_of_seg[j] = is_acc[j] ? m->acc_dev[na++] : m->cpu_dev[nc++];
    for (int32_t u = 0; u < m->nu; u++)
        for (int32_t t = m->unode_off[u]; t < m->unode_off[u + 1]; t++)
            device[m->unode[t]] = dev_of_seg[seg_of_unit[u]];
}

/* ---- the chain DP: segments are ranges of units 0..nu-1 (their topological order) ----
 * f[j][c][a] = least max-load covering units [0, j) with at most c CPU and a accelerator segments. Ranges
 * [i, j) grow from each end j downwards and stop when their compute reaches the bound. Writes the split into
 * device (may be NULL) and returns its max-load (INFINITY if there is none below the bound). */
enum { PL_NONE = 0, PL_SEG_ACC, PL_SEG_CPU, PL_DROP_ACC, PL_DROP_CPU };

static double pl_chain(const place_pl_model *m, pl_seg *s, double bound, int32_t *device, int *timed_out,
                       place_deadline deadline)
{
    int32_t nu = m->nu, K = m->k, L = m->l, C = (L + 1) * (K + 1);
    size_t cells = ((size_t)nu + 1) * (size_t)C;
    double *f = hsdag_malloc(cells * sizeof *f);
    int32_t *from = hsdag_malloc(cells * sizeof *from);
    uint8_t *kind = hsdag_malloc(cells);
    int32_t *seg_of = hsdag_malloc((size_t)(nu ? nu : 1) * sizeof *seg_of);
    double best = INFINITY;
    if (!f || !from || !kind || !seg_of) goto done;
    for (int32_t c = 0; c < C; c++) f[c] = 0, kind[c] = PL_NONE;
    for (int32_t j = 1; j <= nu; j++) {
        double *fj = f + (size_t)j * C;
        int32_t *bj = from + (size_t)j * C;
        uint8_t *kj = kind + (size_t)j * C;
        for (int32_t c = 0; c < C; c++) fj[c] = INFINITY, kj[c] = PL_NONE;
        if ((j & 63) == 0 && place_deadline_passed(deadline)) {
            *timed_out = 1;
            goto done;
        }
        int32_t i = j - 1;
        for (; i >= 0; i--) {
            seg_move(s, i, +1);
            if (!seg_alive(s, bound)) break;
            const double *fi = f + (size_t)i * C;
            if (!(fi[C - 1] < bound)) continue; /* no split of [0, i) below the bound: nothing to extend */
            double acc = seg_acc(s), cpu = seg_cpu(s);
            for (int32_t c = 0; c <= L; c++)
                for (int32_t a = 0; a <= K; a++) {
                    int32_t at = c * (K + 1) + a;
                    if (a > 0 && acc < bound) {
                        double v = fmax(fi[at - 1], acc);
                        if (v < fj[at]) fj[at] = v, bj[at] = i, kj[at] = PL_SEG_ACC;
                    }
                    if (c > 0 && cpu < bound) {
                        double v = fmax(fi[at - (K + 1)], cpu);
                        if (v < fj[at]) fj[at] = v, bj[at] = i, kj[at] = PL_SEG_CPU;
                    }
                }
        }
        for (int32_t x = i < 0 ? 0 : i; x < j; x++) seg_move(s, x, -1);
        seg_reset(s);
        for (int32_t c = 0; c <= L; c++) /* devices may stay unused */
            for (int32_t a = 0; a <= K; a++) {
                int32_t at = c * (K + 1) + a;
                if (a > 0 && fj[at - 1] < fj[at]) fj[at] = fj[at - 1], kj[at] = PL_DROP_ACC;
                if (c > 0 && fj[at - (K + 1)] < fj[at]) fj[at] = fj[at - (K + 1)], kj[at] = PL_DROP_CPU;
            }
    }
    best = f[(size_t)nu * C + C - 1];
    if (best < INFINITY && device) {
        uint8_t is_acc[2 * HSDAG_MAX_DEVICES];
        int32_t starts[2 * HSDAG_MAX_DEVICES], nseg = 0, j = nu, at = C - 1;
        while (j > 0) {
            uint8_t kd = kind[(size_t)j * C + at];
            HSDAG_ASSERT(kd != PL_NONE && nseg < 2 * HSDAG_MAX_DEVICES);
            if (kd == PL_DROP_ACC || kd == PL_DROP_CPU) {
                at -= kd == PL_DROP_ACC ? 1 : K + 1;
                continue;
            }
            int32_t i = from[(size_t)j * C + at];
            is_acc[nseg] = kd == PL_SEG_ACC;
            starts[nseg++] = i;
            at -= kd == PL_SEG_ACC ? 1 : K + 1;
            j = i;
        }
        /* segments were collected last first: number them in chain order */
        for (int32_t x = 0; x < nseg; x++) {
            int32_t lo = starts[x], hi = x ? starts[x - 1] : nu;
            for (int32_t u = lo; u < hi; u++) seg_of[u] = nseg - 1 - x;
        }
        for (int32_t x = 0; x < nseg / 2; x++) {
            uint8_t t = is_acc[x];
            is_acc[x] = is_acc[nseg - 1 - x], is_acc[nseg - 1 - x] = t;
        }
        pl_place(m, seg_of, is_acc, nseg, device);
    }
done:
    hsdag_free(f);
    hsdag_free(from);
    hsdag_free(kind);
    hsdag_free(seg_of);
    return best;
}

/* ---- the ideals ---- */

typedef struct pl_ideals {
    int32_t W;      /* words per bitset */
    int32_t n, cap; /* ideals, allocated */
    uint64_t *bits; /* [cap * W] */
    double *wacc;   /* [cap] accelerator compute of the ideal's units (summed along its discovery) */
    int32_t *tab;   /* open addressing, -1 = empty */
    int32_t tab_mask;
    int32_t *lk_off;  /* [n + 1] CSR of immediate sub-ideals */
    int32_t *lk_unit; /* the unit removed */
    int32_t *lk_to;   /* the sub-ideal */
    int64_t n_links;
} pl_ideals;

static uint64_t pl_hash(const uint64_t *x, int32_t W)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int32_t i = 0; i < W; i++) {
        h ^= x[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 31);
}

static int32_t pl_find(const pl_ideals *id, const uint64_t *x)
{
    for (uint64_t h = pl_hash(x, id->W) & (uint64_t)id->tab_mask;; h = (h + 1) & (uint64_t)id->tab_mask) {
        int32_t t = id->tab[h];
        if (t < 0 || memcmp(id->bits + (size_t)t * id->W, x, (size_t)id->W * 8) == 0) return t;
    }
}

static void pl_tab_insert(pl_ideals *id, int32_t t)
{
    uint64_t h = pl_hash(id->bits + (size_t)t * id->W, id->W) & (uint64_t)id->tab_mask;
    while (id->tab[h] >= 0) h = (h + 1) & (uint64_t)id->tab_mask;
    id->tab[h] = t;
}

static void pl_ideals_free(pl_ideals *id)
{
    hsdag_free(id->bits);
    hsdag_free(id->wacc);
    hsdag_free(id->tab);
    hsdag_free(id->lk_off);
    hsdag_free(id->lk_unit);
    hsdag_free(id->lk_to);
}

/* Enumerates every ideal breadth first from the empty one (so ids ascend with size and a sub-ideal has a
 * smaller id than its super-ideals) and their immediate sub-ideals. Returns 0, HSDAG_ELIMIT when the memory
 * budget would be exceeded (bytes_per_dp: the dp table's bytes per ideal), HSDAG_ETIMEOUT-like HSDAG_ELIMIT
 * with *timed_out set at the deadline, or HSDAG_ENOMEM. */
static int pl_enumerate(const place_pl_model *m, pl_ideals *id, double bytes_per_dp, place_deadline deadline,
                        int *timed_out)
{
    int32_t nu = m->nu, W = (nu + 63) / 64 ? (nu + 63) / 64 : 1;
    memset(id, 0, sizeof *id);
    id->W = W;
    id->cap = 1024;
    id->bits = hsdag_calloc((size_t)id->cap * W, sizeof *id->bits);
    id->wacc = hsdag_calloc((size_t)id->cap, sizeof *id->wacc);
    id->tab_mask = 2047;
    id->tab = hsdag_malloc(2048 * sizeof *id->tab);
    /* links as (child, unit, parent) triples first, CSR at the end */
    int64_t lcap = 4096, nl = 0;
    int32_t *lc = hsdag_malloc((size_t)lcap * sizeof *lc), *lu = hsdag_malloc((size_t)lcap * sizeof *lu),
            *lp = hsdag_malloc((size_t)lcap * sizeof *lp);
    uint64_t *x = hsdag_malloc((size_t)W * sizeof *x);
    int rc = 0;
    if (!id->bits || !id->wacc || !id->tab || !lc || !lu || !lp || !x) goto oom;
    for (int32_t i = 0; i < 2048; i++) id->tab[i] = -1;
    id->n = 1; /* the empty ideal, id 0 */
    pl_tab_insert(id, 0);
    for (int32_t t = 0; t < id->n; t++) {
        if ((t & 255) == 0 && place_deadline_passed(deadline)) {
            *timed_out = 1;
            rc = HSDAG_ELIMIT;
            goto done;
        }
        const uint64_t *I = id->bits + (size_t)t * W;
        int32_t first = 0;
        while (first < nu && ((I[first >> 6] >> (first & 63)) & 1u)) first++;
        for (int32_t u = first; u < nu; u++) {
            if ((I[u >> 6] >> (u & 63)) & 1u) continue;
            int ready = 1;
            for (int32_t q = m->pred_off[u]; q < m->pred_off[u + 1] && ready; q++)
                ready = (I[m->pred[q] >> 6] >> (m->pred[q] & 63)) & 1u;
            if (!ready) continue;
            memcpy(x, I, (size_t)W * 8);
            x[u >> 6] |= (uint64_t)1 << (u & 63);
            int32_t c = pl_find(id, x);
            if (c < 0) {
                double bytes = (double)(id->n + 1) * (8.0 * W + 16 + 4 + bytes_per_dp) + 12.0 * (double)nl;
                if (bytes > PL_MEMORY_BYTES || id->n == INT32_MAX / 2) {
                    rc = HSDAG_ELIMIT;
                    goto done;
                }
                if (id->n == id->cap) {
                    uint64_t *nb = hsdag_realloc(id->bits, (size_t)id->cap * 2 * W * sizeof *nb);
                    if (!nb) goto oom;
                    id->bits = nb;
                    double *nw = hsdag_realloc(id->wacc, (size_t)id->cap * 2 * sizeof *nw);
                    if (!nw) goto oom;
                    id->wacc = nw;
                    id->cap *= 2;
                    I = id->bits + (size_t)t * W;
                }
                c = id->n++;
                memcpy(id->bits + (size_t)c * W, x, (size_t)W * 8);
                id->wacc[c] = id->wacc[t] + m->w_acc[u];
                if ((int64_t)id->n * 2 > (int64_t)id->tab_mask + 1) { /* keep the load under one half */
                    int32_t size = (id->tab_mask + 1) * 2;
                    int32_t *nt = hsdag_malloc((size_t)size * sizeof *nt);
                    if (!nt) goto oom;
                    hsdag_free(id->tab);
                    id->tab = nt;
                    id->tab_mask = size - 1;
                    for (int32_t i = 0; i < size; i++) nt[i] = -1;
                    for (int32_t i = 0; i < id->n; i++) pl_tab_insert(id, i);
                } else {
                    pl_tab_insert(id, c);
                }
            }
            if (nl == lcap) {
                lcap *= 2;
                int32_t *a = hsdag_realloc(lc, (size_t)lcap * sizeof *a);
                if (a) lc = a;
                int32_t *b = hsdag_realloc(lu, (size_t)lcap * sizeof *b);
                if (b) lu = b;
                int32_t *d = hsdag_realloc(lp, (size_t)lcap * sizeof *d);
                if (d) lp = d;
                if (!a || !b || !d) goto oom;
            }
            lc[nl] = c, lu[nl] = u, lp[nl++] = t;
        }
    }
    /* CSR of the links by child */
    id->n_links = nl;
    id->lk_off = hsdag_calloc((size_t)id->n + 1, sizeof *id->lk_off);
    id->lk_unit = hsdag_malloc((size_t)(nl ? nl : 1) * sizeof *id->lk_unit);
    id->lk_to = hsdag_malloc((size_t)(nl ? nl : 1) * sizeof *id->lk_to);
    if (!id->lk_off || !id->lk_unit || !id->lk_to) goto oom;
    for (int64_t i = 0; i < nl; i++) id->lk_off[lc[i] + 1]++;
    for (int32_t t = 0; t < id->n; t++) id->lk_off[t + 1] += id->lk_off[t];
    for (int64_t i = 0; i < nl; i++) {
        int32_t at = id->lk_off[lc[i]]++;
        id->lk_unit[at] = lu[i];
        id->lk_to[at] = lp[i];
    }
    for (int32_t t = id->n; t > 0; t--) id->lk_off[t] = id->lk_off[t - 1];
    id->lk_off[0] = 0;
    goto done;
oom:
    rc = HSDAG_ENOMEM;
done:
    hsdag_free(lc);
    hsdag_free(lu);
    hsdag_free(lp);
    hsdag_free(x);
    return rc;
}

/* ---- the DP over the ideals ---- */

typedef struct pl_dfs {
    int32_t *stk_id, *stk_lk; /* [nu + 1] the walk: an ideal and its next link */
    uint32_t *seen;           /* [n ideals] visit stamps */
    uint32_t gen;
} pl_dfs;

/* Walks the sub-ideals J of I with I \ J still useful below bound; calls visit(J) for each J != I with the
 * segment s = I \ J. visit returns nonzero to stop the walk (used by the backtrack). Returns that value. */
typedef int (*pl_visit_fn)(void *ctx, int32_t J, const pl_seg *s);

static int pl_walk(const pl_ideals *id, pl_dfs *w, pl_seg *s, int32_t I, double bound, pl_visit_fn visit,
                   void *ctx, int64_t *steps)
{
    if (++w->gen == 0) {
        memset(w->seen, 0, (size_t)id->n * sizeof *w->seen);
        w->gen = 1;
    }
    int32_t sp = 0, stop = 0;
    w->stk_id[0] = I;
    w->stk_lk[0] = id->lk_off[I];
    w->seen[I] = w->gen;
    while (sp >= 0 && !stop) {
        int32_t J = w->stk_id[sp], li = w->stk_lk[sp];
        if (li >= id->lk_off[J + 1]) { /* done with J: take its unit out of the segment */
            if (sp > 0) {
                int32_t parent = w->stk_id[sp - 1];
                seg_move(s, id->lk_unit[w->stk_lk[sp - 1] - 1], -1);
                (void)parent;
            }
            sp--;
            continue;
        }
        w->stk_lk[sp] = li + 1;
        int32_t Jn = id->lk_to[li];
        if (w->seen[Jn] == w->gen) continue;
        w->seen[Jn] = w->gen;
        seg_move(s, id->lk_unit[li], +1);
        (*steps)++;
        if (!seg_alive(s, bound)) {
            seg_move(s, id->lk_unit[li], -1);
            continue;
        }
        stop = visit(ctx, Jn, s);
        sp++;
        w->stk_id[sp] = Jn;
        w->stk_lk[sp] = id->lk_off[Jn];
    }
    /* unwind whatever is still in the segment (a stop from visit) */
    for (; sp > 0; sp--) seg_move(s, id->lk_unit[w->stk_lk[sp - 1] - 1], -1);
    seg_reset(s);
    return stop;
}

typedef struct pl_dp {
    const place_pl_model *m;
    double *dp;     /* [n ideals * C] */
    uint8_t *alive; /* [n ideals] dp[J][all devices] < bound: J can start a useful segment (cache-friendly) */
    int32_t C, K, L;
    int32_t I;
    double bound;
    /* backtrack */
    double target;
    int32_t at, found_J, found_acc;
} pl_dp;

static int pl_relax(void *ctx, int32_t J, const pl_seg *s)
{
    pl_dp *d = ctx;
    if (!d->alive[J]) return 0; /* J cannot start a chain below the incumbent */
    const double *dj = d->dp + (size_t)J * d->C;
    double *di = d->dp + (size_t)d->I * d->C;
    double acc = seg_acc(s), cpu = seg_cpu(s);
    int32_t K = d->K, K1 = K + 1, C = d->C;
    if (acc < d->bound)
        for (int32_t at = 0; at < C; at++) {
            if (at % K1 == 0) continue; /* a = 0: no accelerator to take it */
            double v = dj[at - 1] > acc ? dj[at - 1] : acc;
            if (v < di[at]) di[at] = v;
        }
    if (cpu < d->bound)
        for (int32_t at = K1; at < C; at++) {
            double v = dj[at - K1] > cpu ? dj[at - K1] : cpu;
            if (v < di[at]) di[at] = v;
        }
    return 0;
}

/* Backtrack: the first sub-ideal whose transition reaches dp[I][at] (ties: the first in walk order). */
static int pl_match(void *ctx, int32_t J, const pl_seg *s)
{
    pl_dp *d = ctx;
    const double *dj = d->dp + (size_t)J * d->C;
    int32_t K = d->K, a = d->at % (K + 1), c = d->at / (K + 1);
    double tol = d->target * 1e-12 + 1e-300;
    double acc = seg_acc(s), cpu = seg_cpu(s);
    if (a > 0 && acc < INFINITY && fmax(dj[d->at - 1], acc) <= d->target + tol) {
        d->found_J = J, d->found_acc = 1;
        return 1;
    }
    if (c > 0 && cpu < INFINITY && fmax(dj[d->at - (K + 1)], cpu) <= d->target + tol) {
        d->found_J = J, d->found_acc = 0;
        return 1;
    }
    return 0;
}

/* Can a chain below ub pass through an ideal whose units have accelerator compute wi, the rest wr? Each
 * accelerator segment carries less than ub of accelerator compute; a CPU segment less than ub of CPU compute,
 * hence less than r * ub of accelerator compute (r = the largest accelerator / CPU compute ratio of a unit
 * that may run on a CPU). So some split of the devices must cover both sides. Communication only adds. */
static int pl_split_ok(const place_pl_model *m, double wi, double wr, double ub, double r)
{
    double slack = 1 + 1e-9;
    for (int32_t c = 0; c <= m->l; c++)
        for (int32_t f = 0; f <= m->k; f++) {
            double ci = (f + c * r) * ub * slack, cr = ((m->k - f) + (m->l - c) * r) * ub * slack;
            if ((wi <= 0 || wi < ci) && (wr <= 0 || wr < cr)) return 1;
        }
    return 0;
}

/* Runs the DP below bound. Returns 0 and *best (INFINITY when nothing beats bound, with device untouched),
 * HSDAG_ELIMIT (memory budget or time limit; *why says which), HSDAG_ENOMEM. */
static int pl_ideal_dp(const place_pl_model *m, pl_seg *s, double bound, place_deadline deadline,
                       int32_t *device, double *best, int64_t *n_ideals, int64_t *n_steps, const char **why)
{
    int32_t K = m->k, L = m->l, C = (L + 1) * (K + 1), nu = m->nu;
    pl_ideals id;
    pl_dfs w = {0};
    pl_dp d = {.m = m, .C = C, .K = K, .L = L, .bound = bound};
    int timed_out = 0;
    *best = INFINITY;
    *why = "";
    int rc = pl_enumerate(m, &id, 8.0 * C, deadline, &timed_out);
    *n_ideals = id.n;
    if (rc == HSDAG_ELIMIT) {
        *why = timed_out ? "time limit while enumerating the ideals" : "memory budget: too many ideals";
        goto done;
    }
    if (rc < 0) goto done;
    d.dp = hsdag_malloc((size_t)id.n * (size_t)C * sizeof *d.dp);
    d.alive = hsdag_calloc((size_t)id.n, 1);
    w.stk_id = hsdag_malloc(((size_t)nu + 2) * sizeof *w.stk_id);
    w.stk_lk = hsdag_malloc(((size_t)nu + 2) * sizeof *w.stk_lk);
    w.seen = hsdag_calloc((size_t)id.n, sizeof *w.seen);
    if (!d.dp || !d.alive || !w.stk_id || !w.stk_lk || !w.seen) {
        rc = HSDAG_ENOMEM;
        goto done;
    }
    for (int32_t c = 0; c < C; c++) d.dp[c] = 0;
    d.alive[0] = 1;
    int64_t steps = 0;
    double r = 0, wall = 0;
    for (int32_t u = 0; u < nu; u++) {
        wall += m->w_acc[u];
        if (!(m->ok[u] & PL_OK_CPU)) continue;
        if (m->w_cpu[u] > 0)
            r = fmax(r, m->w_acc[u] / m->w_cpu[u]);
        else if (m->w_acc[u] > 0)
            r = 1e300; /* a CPU carries this one for free: no CPU term in the bound */
    }
    int prune = K > 0 && r < 1e300;
    for (int32_t I = 1; I < id.n; I++) {
        double *di = d.dp + (size_t)I * C;
        for (int32_t c = 0; c < C; c++) di[c] = INFINITY;
        if (prune && !pl_split_ok(m, id.wacc[I], wall - id.wacc[I], bound, r)) continue;
        d.I = I;
        pl_walk(&id, &w, s, I, bound, pl_relax, &d, &steps);
        for (int32_t c = 0; c <= L; c++) /* devices may stay unused */
            for (int32_t a = 0; a <= K; a++) {
                int32_t at = c * (K + 1) + a;
                if (a > 0 && di[at - 1] < di[at]) di[at] = di[at - 1];
                if (c > 0 && di[at - (K + 1)] < di[at]) di[at] = di[at - (K + 1)];
            }
        d.alive[I] = di[C - 1] < bound;
        if ((I & 63) == 0 && place_deadline_passed(deadline)) {
            *n_steps = steps;
            *why = "time limit in the DP";
            rc = HSDAG_ELIMIT;
            goto done;
        }
    }
    *n_steps = steps;
    int32_t full = id.n - 1; /* breadth first: the full set is discovered last */
    *best = d.dp[(size_t)full * C + C - 1];
    if (!(*best < bound) || !device) goto done;
    /* backtrack from (full, all devices) */
    int32_t *seg_of = hsdag_malloc((size_t)(nu ? nu : 1) * sizeof *seg_of);
    uint8_t is_acc[2 * HSDAG_MAX_DEVICES];
    int32_t nseg = 0, cur = full, at = C - 1;
    if (!seg_of) {
        rc = HSDAG_ENOMEM;
        goto done;
    }
    const uint64_t *bits = id.bits;
    while (cur != 0) {
        double v = d.dp[(size_t)cur * C + at];
        int32_t a = at % (K + 1), c = at / (K + 1);
        if (a > 0 && d.dp[(size_t)cur * C + at - 1] <= v) {
            at -= 1;
            continue;
        }
        if (c > 0 && d.dp[(size_t)cur * C + at - (K + 1)] <= v) {
            at -= K + 1;
            continue;
        }
        d.I = cur, d.at = at, d.target = v, d.found_J = -1;
        pl_walk(&id, &w, s, cur, v * (1 + 1e-9) + 1e-300, pl_match, &d, &steps);
        HSDAG_ASSERT(d.found_J >= 0 && nseg < 2 * HSDAG_MAX_DEVICES);
        /* units of cur \ J form segment nseg (numbered last first) */
        for (int32_t u = 0; u < nu; u++) {
            int in_cur = (bits[(size_t)cur * id.W + (u >> 6)] >> (u & 63)) & 1u;
            int in_j = (bits[(size_t)d.found_J * id.W + (u >> 6)] >> (u & 63)) & 1u;
            if (in_cur && !in_j) seg_of[u] = nseg;
        }
        is_acc[nseg++] = (uint8_t)d.found_acc;
        at -= d.found_acc ? 1 : K + 1;
        cur = d.found_J;
    }
    for (int32_t u = 0; u < nu; u++) seg_of[u] = nseg - 1 - seg_of[u];
    for (int32_t x = 0; x < nseg / 2; x++) {
        uint8_t t = is_acc[x];
        is_acc[x] = is_acc[nseg - 1 - x], is_acc[nseg - 1 - x] = t;
    }
    pl_place(m, seg_of, is_acc, nseg, device);
    hsdag_free(seg_of);
done:
    pl_ideals_free(&id);
    hsdag_free(d.dp);
    hsdag_free(d.alive);
    hsdag_free(w.stk_id);
    hsdag_free(w.stk_lk);
    hsdag_free(w.seen);
    return rc;
}

/* ---- the placers ---- */

/* The chain DP over the blocks' topological order, from a bound just above the generic lower bound, raised
 * until a split exists (each run is exact below its bound). Returns the max-load or INFINITY. */
static double pl_chain_search(hsdag_place_problem *p, const place_pl_model *m, pl_seg *s, int32_t *device,
                              place_deadline deadline, int *timed_out)
{
    hsdag_bound b;
    double lo = 0;
    if (hsdag_bound_objective(&b, p->c, p->sem, HSDAG_OBJ_THROUGHPUT, NULL, NULL, NULL) == 0) lo = b.lower_s;
    double total = 0;
    for (int32_t u = 0; u < m->nu; u++)
        total += m->w_acc[u] < m->w_cpu[u] || !m->l ? m->w_acc[u] : m->w_cpu[u];
    double bound = fmax(lo, 1e-12) * 1.25;
    for (int tries = 0; tries < 200 && !*timed_out; tries++) {
        double v = pl_chain(m, s, bound, device, timed_out, deadline);
        if (v < INFINITY) return v;
        if (bound > 4 * (total + 1))
            bound = INFINITY; /* last try: no pruning at all */
        else
            bound *= 1.5;
        if (bound == INFINITY) {
            v = pl_chain(m, s, bound, device, timed_out, deadline);
            return v;
        }
    }
    return INFINITY;
}

/* What both placers start from: the model, its segment, the deadline and the chain DP's split. */
typedef struct pl_run {
    place_pl_model m;
    pl_seg s;
    place_deadline deadline; /* o's time limit on o's clock */
    int timed_out;           /* the chain search ran out of time */
    double chain; /* the chain DP's max-load (its split is in the caller's device), INFINITY when none */
} pl_run;

/* Builds the model and its segment, sets the deadline (o's time limit, else default_limit_s) and runs the
 * chain search into device. 0, or a status with nothing left to free; after 0, pl_run_free. */
static int pl_run_start(pl_run *run, hsdag_place_problem *p, const hsdag_place_opts *o,
                        double default_limit_s, int32_t *device, const char *who, hsdag_err *e)
{
    int rc = place_pl_model_create(p, &run->m, e);
    if (rc < 0) return rc;
    if ((rc = seg_init(&run->s, &run->m)) < 0) {
        place_pl_model_free(&run->m);
        return hsdag_err_set(e, rc, "%s: out of memory", who);
    }
    run->timed_out = 0;
    run->deadline = place_deadline_in(o, default_limit_s);
    run->chain = pl_chain_search(p, &run->m, &run->s, device, run->deadline, &run->timed_out);
    return 0;
}

static void pl_run_free(pl_run *run)
{
    seg_free(&run->s);
    place_pl_model_free(&run->m);
}

/* The error when no split was found: the time ran out, or none fits (what says which kind of split). */
static int pl_no_split(const pl_run *run, const char *who, const char *what, hsdag_err *e)
{
    return hsdag_err_set(e, run->timed_out ? HSDAG_ESOLVER : HSDAG_EINFEASIBLE, "%s: %s", who,
                         run->timed_out ? "time limit before a split was found" : what);
}

int place_pipedream(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                    hsdag_err *e)
{
    pl_run run;
    int rc = pl_run_start(&run, p, o, 10.0, device, "pipedream", e);
    if (rc < 0) return rc;
    double v = run.chain;
    if (v < INFINITY) {
        r->objective_s = v;
        snprintf(r->note, sizeof r->note, "max-load %.6g ms over one chain of %d blocks%s%s", v * 1e3,
                 (int)run.m.nu, p->obj == HSDAG_OBJ_LATENCY ? " (throughput split, scored by latency)" : "",
                 p->sem != HSDAG_SEM_TARNAWSKI ? " (tarnawski's load model: a heuristic here)" : "");
    } else {
        rc = pl_no_split(&run, "pipedream", "no chain split fits the devices (a block fits on no device)", e);
    }
    pl_run_free(&run);
    return rc;
}

int place_pipeline_dp(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device,
                      hsdag_place_report *r, hsdag_err *e)
{
    pl_run run;
    int rc = pl_run_start(&run, p, o, 60.0, device, "dp", e);
    if (rc < 0) return rc;
    double ub = run.chain;
    const char *inc = "the chain DP's split";
    if (!(ub < INFINITY) && run.timed_out && p->obj == HSDAG_OBJ_THROUGHPUT) {
        /* no chain split in time (a big graph): the greedy's, when it is contiguous, is the incumbent */
        hsdag_place_report gr = {.bound_s = NAN, .objective_s = NAN};
        hsdag_place_opts go = hsdag_place_opts_default();
        if (place_greedy_tarnawski(p, &go, device, &gr, NULL) == 0 && hsdag_place_contiguous(p, device)) {
            place_score gs = place_evaluate(p, device);
            if (gs.feasible) ub = gs.latency_s, inc = "the greedy's split (no chain split in time)";
        }
    }
    if (!(ub < INFINITY)) {
        rc = pl_no_split(&run, "dp", "no contiguous split fits the devices (a block fits on no device)", e);
        goto done;
    }
    double best = INFINITY;
    int64_t n_ideals = 0, steps = 0;
    const char *why = "";
    int32_t *dev2 = hsdag_alloc_n((size_t)p->n, sizeof *dev2, "dp", e);
    if (!dev2) {
        rc = HSDAG_ENOMEM;
        goto done;
    }
    rc = run.m.nu ? pl_ideal_dp(&run.m, &run.s, ub, run.deadline, dev2, &best, &n_ideals, &steps, &why) : 0;
    if (rc == HSDAG_ENOMEM) {
        hsdag_free(dev2);
        rc = hsdag_err_set(e, rc, "dp: out of memory");
        goto done;
    }
    if (rc == 0 && best < ub) {
        memcpy(device, dev2, (size_t)p->n * sizeof *device);
        ub = best;
    }
    hsdag_free(dev2);
    r->objective_s = ub;
    const char *lat = p->obj == HSDAG_OBJ_LATENCY ? "; a throughput split, scored by latency" : "";
    if (p->sem != HSDAG_SEM_TARNAWSKI)
        lat = "; its model is tarnawski's load (a heuristic under this semantics)";
    if (rc == 0) {
        int exact = p->sem == HSDAG_SEM_TARNAWSKI && p->obj == HSDAG_OBJ_THROUGHPUT;
        r->bound_s = exact ? ub : NAN;
        r->bound_contiguous = exact;
        r->optimal = exact;
        snprintf(r->note, sizeof r->note,
                 "exact contiguous max-load %.6g ms: %lld ideals, %lld sub-ideal steps, chain DP start %s%s",
                 ub * 1e3, (long long)n_ideals, (long long)steps, best < INFINITY ? "improved" : "optimal",
                 lat);
    } else {
        hsdag_bound b;
        if (p->sem == HSDAG_SEM_TARNAWSKI &&
            hsdag_bound_objective(&b, p->c, p->sem, HSDAG_OBJ_THROUGHPUT, NULL, NULL, NULL) == 0)
            r->bound_s = b.lower_s;
        snprintf(r->note, sizeof r->note,
                 "not exact (%s after %lld ideals): %s, max-load %.6g ms, bound %.6g ms%s", why,
                 (long long)n_ideals, inc, ub * 1e3, r->bound_s * 1e3, lat);
        rc = 0;
    }
done:
    pl_run_free(&run);
    return rc;
}
