/* sim_concurrent.c - the concurrent semantics: list scheduling per device by priority, FIFO link
 *   resources, events ordered by (time, sequence number).
 * Not here: the set-up and the per-run setup the semantics share (sim.c), the other semantics.
 * Entry points: sim_run_concurrent (sim_internal.h).
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

/* ---- concurrent: list scheduling per device, FIFO link resources, events by (time, seq) ----
 * One function with every hot array in a local restrict pointer: the run does a few hundred thousand small
 * steps, and through `s->...` each of them reloaded its pointers after every store. The helpers below are
 * always inlined into run_concurrent and take its local context, which the compiler keeps in registers. */

/* Per-device state of a concurrent run, in one record per device (one pointer for the hot loop instead of
 * six). */
typedef struct cc_dev {
    double live, act_peak, busy; /* live activation bytes, their peak, seconds of ops started */
    int32_t running;             /* running op, -1 idle */
    int32_t stamp, first; /* op_done: the node whose copy to this device was last set up, and its slot */
    int32_t pad_;
} cc_dev;

typedef struct cc_ctx {
    hsdag_sim *s;
    hsdag_sim_result *r;
    const int32_t *restrict dev, *restrict in_off, *restrict in_src, *restrict in_eid,
                                                                         *restrict out_off,
                                                                             *restrict out_dst,
                                                                                 *restrict edge_src,
                                                                                     *restrict rank,
                                                                                         *restrict prio_node,
                                                                                             *restrict res_of;
    const double *restrict node_s, *restrict act, *restrict xby;
    int32_t *restrict pend,
        *restrict own_ref, *restrict copy_ref, *restrict slot_of_edge,
                                                   *restrict xq_next, *restrict xq_head, *restrict xq_tail;
    uint8_t *restrict res_busy;
    double *restrict fin, *restrict st;
    cc_dev *restrict dv;
    uint64_t *restrict rq_bits;
    sim_event *restrict ev;
    size_t rq_words;
    int32_t rq_levels, rq_top, D, ev_len;
    uint64_t seq, dirty;
    double mk, xs, xb;
    int64_t nx;
} cc_ctx;

/* Pending events, at most one per device and per link resource (a handful): kept sorted by (t, seq) from the
 * latest to the earliest, so the next event is the last one. An insertion shifts the entries that come after
 * it, at most D + R of them, usually none or one - cheaper than a heap at these sizes, and the order is the
 * same total order, so the schedule is identical. */
SIM_INLINE void cc_ev_push(cc_ctx *x, double t, int32_t who)
{
    sim_event *restrict ev = x->ev;
    int32_t i = x->ev_len++;
    sim_event e = {t, x->seq++, who};
    /* e has the largest seq so far: every entry with an earlier or equal time pops before it */
    while (i > 0 && ev[i - 1].t <= t) {
        ev[i] = ev[i - 1];
        i--;
    }
    ev[i] = e;
}

SIM_INLINE sim_event cc_ev_pop(cc_ctx *x)
{
    return x->ev[--x->ev_len];
}

SIM_INLINE double cc_ev_next_t(const cc_ctx *x)
{
    return x->ev[x->ev_len - 1].t;
}

/* Ready sets: one hierarchical bitset of priority ranks per device (64-ary: a set bit in level l+1 says the
 * word below is non-empty), so push and pop-min cost O(log_64 V) with no comparisons. The top level is one
 * word: the set is empty iff it is zero. Every pushed rank is popped within a run, so the bitsets are empty
 * again at its end. */
SIM_INLINE void cc_rq_push(cc_ctx *x, int32_t d, int32_t v)
{
    uint64_t *restrict w = x->rq_bits + (size_t)d * x->rq_words;
    uint32_t key = (uint32_t)x->rank[v];
    x->dirty |= (uint64_t)1 << d;
    if (x->rq_levels == 2) { /* V <= 4096: one word of word flags */
        w[key >> 6] |= (uint64_t)1 << (key & 63);
        w[x->rq_top] |= (uint64_t)1 << (key >> 6);
        return;
    }
    const int32_t *lvl = x->s->rq_lvl_off;
    for (int l = 0, nl = x->rq_levels; l < nl; l++) {
        uint64_t *word = w + lvl[l] + (key >> 6), before = *word;
        *word = before | (uint64_t)1 << (key & 63);
        if (before) break; /* the levels above already know this word is non-empty */
        key >>= 6;
    }
}

SIM_INLINE int32_t cc_rq_pop(cc_ctx *x, int32_t d)
{
    uint64_t *restrict w = x->rq_bits + (size_t)d * x->rq_words;
    if (x->rq_levels == 2) {
        uint64_t t = w[x->rq_top];
        uint32_t hi = (uint32_t)__builtin_ctzll(t);
        uint64_t b = w[hi];
        uint32_t lo = (uint32_t)__builtin_ctzll(b);
        b &= b - 1;
        w[hi] = b;
        if (!b) w[x->rq_top] = t & (t - 1);
        return x->prio_node[hi << 6 | lo];
    }
    const int32_t *lvl = x->s->rq_lvl_off;
    uint32_t idx = 0;
    for (int l = x->rq_levels - 1; l >= 0; l--) idx = (idx << 6) | (uint32_t)__builtin_ctzll(w[lvl[l] + idx]);
    uint32_t key = idx;
    for (int l = 0, nl = x->rq_levels; l < nl; l++) {
        uint64_t *word = w + lvl[l] + (key >> 6);
        uint64_t nw = *word & ~((uint64_t)1 << (key & 63));
        *word = nw;
        if (nw) break;
        key >>= 6;
    }
    return x->prio_node[idx];
}

SIM_INLINE void cc_mem_alloc(cc_ctx *x, int32_t d, double bytes)
{
    double y = x->dv[d].live + bytes;
    x->dv[d].live = y;
    if (y > x->dv[d].act_peak) x->dv[d].act_peak = y;
}

static SIM_COLD void cc_trace(cc_ctx *x, double t0, double t1, int32_t u, int32_t d, int32_t d2)
{
    sim_trace_xfer(x->s, t0, t1, u, d, d2);
}

SIM_INLINE void cc_xfer_start(cc_ctx *x, int32_t slot, double now)
{
    int32_t u = x->edge_src[slot], d = x->dev[u], d2 = x->dev[x->out_dst[slot]];
    double t = hsdag_costs_xfer_s(x->s->costs, u, d, d2), b = x->xby[u];
    x->res_busy[x->res_of[d * x->D + d2]] = 1;
    cc_mem_alloc(x, d2, b);
    x->xs += t;
    x->xb += b;
    x->nx++;
    if (x->s->record) cc_trace(x, now, now + t, u, d, d2);
    cc_ev_push(x, now + t, -slot - 1);
}

SIM_INLINE void cc_xfer_request(cc_ctx *x, int32_t slot, int32_t u, int32_t d, int32_t d2, double now)
{
    int32_t res = x->res_of[d * x->D + d2];
    (void)u;
    if (!x->res_busy[res]) {
        cc_xfer_start(x, slot, now);
        return;
    }
    x->xq_next[slot] = -1;
    if (x->xq_head[res] < 0)
        x->xq_head[res] = slot;
    else
        x->xq_next[x->xq_tail[res]] = slot;
    x->xq_tail[res] = slot;
}

/* Op v finished on its device: free what it was the last reader of, wake its local consumers, request one
 * copy
 * per other consuming device. The copy slots and reader counts of v's output are set up here, the first
 * moment
 * they are needed (consumers cannot finish before v has). */
SIM_INLINE void cc_op_done(cc_ctx *x, int32_t v, int32_t d, double now)
{
    const int32_t *restrict dev = x->dev;
    int32_t own = 0;
    x->fin[v] = now;
    if (now > x->mk) x->mk = now;
    x->dv[d].running = -1;
    x->dirty |= (uint64_t)1 << d;
    double L = x->dv[d].live;
    for (int32_t k = x->in_off[v], ke = x->in_off[v + 1]; k < ke; k++) {
        int32_t u = x->in_src[k];
        if (dev[u] == d) {
            if (--x->own_ref[u] == 0) L -= x->act[u];
        } else {
            int32_t slot = x->slot_of_edge[x->in_eid[k]];
            if (--x->copy_ref[slot] == 0) L -= x->xby[u];
        }
    }
    x->dv[d].live = L;
    for (int32_t k = x->out_off[v], ke = x->out_off[v + 1]; k < ke; k++) {
        int32_t w = x->out_dst[k], dw = dev[w];
        if (dw == d) {
            own++; /* slot_of_edge[k] stays unset: only edges between devices read it */
            if (--x->pend[w] == 0) cc_rq_push(x, d, w);
        } else if (x->dv[dw].stamp != v) { /* one copy serves every consumer on dw */
            x->dv[dw].stamp = v;
            x->dv[dw].first = k;
            x->slot_of_edge[k] = k;
            x->copy_ref[k] = 1;
            own++; /* the copy reads the original while in flight */
            cc_xfer_request(x, k, v, d, dw, now);
        } else {
            int32_t slot = x->dv[dw].first;
            x->slot_of_edge[k] = slot;
            x->copy_ref[slot]++;
        }
    }
    x->own_ref[v] = own;
}

SIM_INLINE void cc_xfer_done(cc_ctx *x, int32_t slot, double now)
{
    int32_t u = x->edge_src[slot], d = x->dev[u], d2 = x->dev[x->out_dst[slot]];
    int32_t res = x->res_of[d * x->D + d2];
    x->res_busy[res] = 0;
    if (--x->own_ref[u] == 0) x->dv[d].live -= x->act[u];
    /* the consumers this copy serves: every edge of u to d2 from the slot's (the first such edge) on */
    for (int32_t k = slot, ke = x->out_off[u + 1]; k < ke; k++) {
        int32_t w = x->out_dst[k];
        if (x->dev[w] == d2 && --x->pend[w] == 0) cc_rq_push(x, d2, w);
    }
    int32_t nxt = x->xq_head[res];
    if (nxt >= 0) {
        x->xq_head[res] = x->xq_next[nxt];
        cc_xfer_start(x, nxt, now);
    }
}

/* Starts the best ready op on an idle device. Zero-cost ops (bookkeeping) complete on the spot, without an
 * event, and the next ready op is considered. */
SIM_INLINE void cc_try_start(cc_ctx *x, int32_t d, double now)
{
    const uint64_t *top = x->rq_bits + (size_t)d * x->rq_words + x->rq_top;
    const double *restrict node_s = x->node_s;
    const int32_t D = x->D;
    if (x->dv[d].running >= 0) return;
    while (*top) {
        int32_t v = cc_rq_pop(x, d);
        double cost = node_s[(size_t)v * D + d];
        x->st[v] = now;
        cc_mem_alloc(x, d, x->act[v]);
        if (cost > 0) {
            x->dv[d].running = v;
            x->dv[d].busy += cost;
            cc_ev_push(x, now + cost, v);
            return;
        }
        if (cost != 0) x->dv[d].busy += cost; /* adding a zero never changes the sum's bits */
        cc_op_done(x, v, d, now);
    }
}

/* The concurrent run with its own prepass (static memory, unsupported ops, accelerators used, in-degrees and
 * the
 * initially ready ops), which also checks every device index. Returns 0 or HSDAG_EINVAL (nothing written). */
SIM_NOINLINE int sim_run_concurrent(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    for (int32_t d = 0; d < D; d++) s->static_sum[d] = 0;
    /* the prepass: checks each index; static bytes per device summed in node order (bit-identical to one
     * array update per node), the current device's sum in a register while consecutive nodes stay on it */
    uint64_t used = 0;
    {
        const int32_t *restrict dv = dev;
        const double *restrict stat = c->static_bytes;
        double *restrict ssum = s->static_sum;
        int32_t cd = V > 0 ? dv[0] : 0;
        double S = 0;
        for (int32_t v = 0; v < V; v++) {
            int32_t d = dv[v];
            if ((uint32_t)d >= (uint32_t)D) return HSDAG_EINVAL; /* negative ones become huge */
            if (d != cd) {
                ssum[cd] = S;
                cd = d;
                S = ssum[d];
            }
            S += stat[v];
            used |= (uint64_t)1 << d;
        }
        if (V > 0) ssum[cd] = S;
    }
    cc_dev devst[HSDAG_MAX_DEVICES];
    cc_ctx x = {.s = s,
                .r = r,
                .dev = dev,
                .in_off = g->in_off,
                .in_src = g->in_src,
                .in_eid = g->in_eid,
                .out_off = g->out_off,
                .out_dst = g->out_dst,
                .edge_src = g->edge_src,
                .rank = s->prio_rank,
                .prio_node = s->prio_node,
                .res_of = s->res_of,
                .node_s = c->node_s,
                .act = c->act_bytes,
                .xby = c->xfer_bytes,
                .pend = s->pend,
                .own_ref = s->own_ref,
                .copy_ref = s->copy_ref,
                .slot_of_edge = s->slot_of_edge,
                .xq_next = s->xq_next,
                .xq_head = s->xq_head,
                .xq_tail = s->xq_tail,
                .res_busy = s->res_busy,
                .fin = s->fin,
                .st = s->st,
                .dv = devst,
                .rq_bits = s->rq_bits,
                .ev = s->ev,
                .rq_words = (size_t)s->rq_words,
                .rq_levels = s->rq_levels,
                .rq_top = s->rq_lvl_off[s->rq_levels - 1],
                .D = D};
    for (int32_t d = 0; d < D; d++) {
        s->peak[d] = s->excess[d] = 0;
        devst[d] = (cc_dev){.live = 0, .act_peak = 0, .busy = 0, .running = -1, .stamp = -1, .first = 0};
    }
    for (int32_t q = 0; q < s->R; q++) s->xq_head[q] = -1, s->res_busy[q] = 0;
    memcpy(s->pend, s->indeg, (size_t)V * sizeof *s->pend);
    for (int32_t i = 0; i < s->n_sources; i++) cc_rq_push(&x, dev[s->sources[i]], s->sources[i]);
    sim_run_bind(s, dev, r);
    sim_run_tally(s, dev, used, r);
    double now = 0;
    for (;;) {
        while (x.dirty) {
            int32_t d = __builtin_ctzll(x.dirty);
            x.dirty &= x.dirty - 1;
            cc_try_start(&x, d, now);
        }
        if (x.ev_len == 0) break;
        sim_event e = cc_ev_pop(&x);
        now = e.t;
        for (;;) {
            if (e.who >= 0)
                cc_op_done(&x, e.who, dev[e.who], now);
            else
                cc_xfer_done(&x, -e.who - 1, now);
            if (x.ev_len == 0 || cc_ev_next_t(&x) != now) break;
            e = cc_ev_pop(&x);
        }
    }
    for (int32_t d = 0; d < D; d++)
        s->live[d] = devst[d].live, s->act_peak[d] = devst[d].act_peak, s->busy[d] = devst[d].busy;
    r->makespan_s = x.mk;
    r->xfer_s = x.xs;
    r->xfer_bytes = x.xb;
    r->n_xfers = x.nx;
    return 0;
}
