/* sim_tarnawski.c - the tarnawski semantics (Tarnawski et al.'s computeLatency): accelerator subgraphs
 *   contracted into contiguous blocks, then their latency formula; CPUs unbounded.
 * Not here: the set-up and the per-run setup the semantics share (sim.c), the other semantics.
 * Entry points: sim_run_tarnawski (sim_internal.h).
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

/* ---- tarnawski: contract accelerator subgraphs into contiguous blocks, then their latency formula ----
 * Per run: unit[v] is v for a node on a CPU and V + b for a node of accelerator block b; the contracted graph
 * is over units. Hot arrays are local restrict pointers (see the concurrent section). */

/* Communication time of node u's output to or from accelerator a through host memory. */
SIM_INLINE double tw_comm(const hsdag_sim *s, int32_t u, int32_t a)
{
    const hsdag_costs *c = s->costs;
    double f = c->file_xfer_s[u];
    if (!isnan(f)) return f;
    if (s->host < 0) return 0.0;
    int32_t k = a * s->D + s->host;
    return c->link_lat_s[k] + c->xfer_bytes[u] * c->link_inv_bw[k];
}

/* Cuts each accelerator's node set into contiguous pieces by the longest-path DP (the number of times a path
 * re-enters the set before reaching the node), sets unit[] and counts each block's members into blk_end[];
 * returns the number of block ids used. */
static int32_t tw_blocks(hsdag_sim *s, const int32_t *restrict dev)
{
    const hsdag_graph *g = s->g;
    const int32_t V = s->V;
    const int32_t *restrict in_off = g->in_off, *restrict in_src = g->in_src;
    int32_t *restrict dp = s->dp, *restrict unit = s->unit, *restrict cnt = s->blk_end,
                      *restrict udeg = s->udeg + V;
    int32_t nb = 0;
    for (int32_t a = 0; a < s->D; a++) {
        if (s->is_cpu[a] || s->first_on[a] < 0) continue;
        int32_t lo = s->first_on[a], hi = s->last_on[a], maxdp = 1;
        cnt[nb] = udeg[nb] = 0;
        for (int32_t v = lo; v <= hi; v++) {
            int32_t m = 0, k = in_off[v], ke = in_off[v + 1];
            if (dev[v] == a) {
                /* same: inputs from a's nodes with dp == m, i.e. from v's own block; the others enter it */
                int32_t same = 0, n = ke - k;
                m = 1;
                for (; k < ke; k++) {
                    int32_t u = in_src[k];
                    if (u < lo) continue;
                    int32_t on = dev[u] == a, x = dp[u] + !on;
                    if (x > m)
                        m = x, same = on;
                    else if (x == m)
                        same += on;
                }
                while (maxdp < m) {
                    cnt[nb + maxdp] = udeg[nb + maxdp] = 0;
                    maxdp++;
                }
                unit[v] = V + nb + m - 1;
                cnt[nb + m - 1]++;
                udeg[nb + m - 1] += n - same;
            } else {
                for (; k < ke; k++) {
                    int32_t u = in_src[k];
                    if (u >= lo && dp[u] > m) m = dp[u];
                }
            }
            dp[v] = m;
        }
        for (int32_t b = nb; b < nb + maxdp; b++) s->blk_dev[b] = a;
        nb += maxdp;
    }
    return nb;
}

static uint32_t tw_gen(hsdag_sim *s)
{
    if (++s->gen == 0) {
        memset(s->mark, 0, (size_t)s->V * sizeof *s->mark);
        s->gen = 1;
    }
    return s->gen;
}

/* The contracted graph can have a cycle although every piece is contiguous on its own (a1 -> b1 and b2 -> a2
 * with {a1, a2} and {b1, b2} on two accelerators); Tarnawski et al.'s tool rejects such a split. We extend
 * their model instead: take the lowest unfinished node x (it is in a stalled block b, and ready); cut from b
 * the members whose predecessors are all finished or in that part (x among them) into a new block. The cut
 * block has no unfinished predecessor, so progress is guaranteed; splits without a cycle never get here.
 * Returns the new block id. */
static int32_t tw_cut(hsdag_sim *s, int32_t *cursor, int32_t *nb)
{
    const hsdag_graph *g = s->g;
    const int32_t V = s->V;
    int32_t *unit = s->unit;
    while (s->done[*cursor]) (*cursor)++;
    int32_t x = *cursor, b = unit[x] - V;
    HSDAG_ASSERT(b >= 0);
    uint32_t gen = tw_gen(s);
    int32_t lo = s->blk_start[b], hi = s->blk_end[b], nr = 0;
    for (int32_t i = lo; i < hi; i++) {
        int32_t v = s->blk_nodes[i], ok = 1;
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1] && ok; k++) {
            int32_t u = g->in_src[k];
            ok = unit[u] == V + b ? s->mark[u] == gen : s->done[u];
        }
        if (ok) s->mark[v] = gen, nr++;
    }
    HSDAG_ASSERT(nr > 0 && nr < hi - lo);
    /* stable partition: the ready part first (queue as scratch) */
    int32_t *tmp = s->queue + 2 * V, w = lo, t = 0;
    for (int32_t i = lo; i < hi; i++) {
        int32_t v = s->blk_nodes[i];
        if (s->mark[v] == gen)
            s->blk_nodes[w++] = v;
        else
            tmp[t++] = v;
    }
    memcpy(s->blk_nodes + w, tmp, (size_t)t * sizeof *tmp);
    int32_t nbk = (*nb)++;
    s->blk_start[nbk] = lo;
    s->blk_end[nbk] = lo + nr;
    s->blk_dev[nbk] = s->blk_dev[b];
    s->blk_start[b] = lo + nr;
    for (int32_t i = lo; i < lo + nr; i++) unit[s->blk_nodes[i]] = V + nbk;
    /* the rest now also waits for the cut part */
    int32_t deg = 0;
    for (int32_t i = lo + nr; i < hi; i++) {
        int32_t v = s->blk_nodes[i];
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int32_t u = g->in_src[k];
            deg += unit[u] != V + b && !s->done[u];
        }
    }
    s->udeg[V + b] = deg;
    s->udeg[V + nbk] = 0;
    return nbk;
}

/* The prepass (per-device sums in node order, the current device's in a register while it lasts; the first
 * and last node of each device; units reset). Returns HSDAG_EINVAL for a device index out of range. */
static int tw_prepass(hsdag_sim *s, const int32_t *restrict dv, uint64_t *used_out)
{
    const int32_t V = s->V, D = s->D;
    for (int32_t d = 0; d < D; d++) {
        s->busy[d] = s->peak[d] = s->excess[d] = s->live[d] = s->static_sum[d] = s->act_peak[d] = 0;
        s->first_on[d] = s->last_on[d] = -1;
    }
    uint64_t used = 0;
    const double *restrict stat = s->costs->static_bytes;
    double *restrict ssum = s->static_sum;
    int32_t *restrict first_on = s->first_on, *restrict last_on = s->last_on, *restrict unit = s->unit;
    uint8_t *restrict done = s->done;
    int32_t cd = -1;
    double S = 0;
    for (int32_t v = 0; v < V; v++) {
        int32_t d = dv[v];
        if ((uint32_t)d >= (uint32_t)D) return HSDAG_EINVAL; /* negative ones become huge */
        if (d != cd) {
            if (cd >= 0) ssum[cd] = S, last_on[cd] = v - 1;
            cd = d;
            S = ssum[d];
            if (first_on[d] < 0) first_on[d] = v;
            used |= (uint64_t)1 << d;
        }
        S += stat[v];
        unit[v] = v;
        done[v] = 0;
    }
    if (cd >= 0) ssum[cd] = S, last_on[cd] = V - 1;
    *used_out = used;
    return 0;
}

/* Members of each block in topological order (counting sort over the counts tw_blocks made), and the ready
 * units: CPU nodes without inputs in index order, then blocks without inputs. In-degrees of units in the
 * contracted graph: a CPU node is its own unit, so each of its in-edges comes from another unit and its
 * in-degree is the node's; tw_blocks counted each block's in-edges from outside it. Returns the queue
 * length. */
static int32_t tw_ready(hsdag_sim *s, int32_t nb)
{
    const int32_t V = s->V;
    int32_t *restrict unit = s->unit, *restrict udeg = s->udeg, *restrict queue = s->queue;
    int32_t *restrict blk_start = s->blk_start, *restrict blk_end = s->blk_end,
                      *restrict blk_nodes = s->blk_nodes;
    const int32_t *restrict indeg = s->indeg;
    for (int32_t b = 0, o = 0; b < nb; b++) {
        int32_t n = blk_end[b];
        blk_start[b] = blk_end[b] = o;
        o += n;
    }
    int32_t qt = 0;
    for (int32_t v = 0; v < V; v++) {
        int32_t uu = unit[v];
        if (uu < V) {
            udeg[v] = indeg[v];
            if (indeg[v] == 0) queue[qt++] = v;
        } else {
            blk_nodes[blk_end[uu - V]++] = v;
        }
    }
    for (int32_t b = 0; b < nb; b++)
        if (blk_end[b] > blk_start[b] && udeg[V + b] == 0) queue[qt++] = V + b;
    return qt;
}

/* What the loop accumulates: makespan, transfer seconds and bytes and count, the queue's tail. */
typedef struct tw_acc {
    double mk, xs, xb;
    int64_t nx;
    int32_t qt;
} tw_acc;

/* A CPU node x: starts when its last input finishes, unbounded CPUs. */
SIM_INLINE void tw_cpu(hsdag_sim *s, int32_t x, const int32_t *restrict dv, tw_acc *acc)
{
    const hsdag_graph *g = s->g;
    const int32_t *restrict in_off = g->in_off, *restrict in_src = g->in_src, *restrict out_off = g->out_off,
                            *restrict out_dst = g->out_dst;
    double *restrict fin = s->fin;
    double m = 0;
    for (int32_t k = in_off[x], ke = in_off[x + 1]; k < ke; k++)
        if (fin[in_src[k]] > m) m = fin[in_src[k]];
    int32_t d = dv[x];
    double cost = s->costs->node_s[(size_t)x * s->D + d], f = m + cost;
    s->st[x] = m;
    fin[x] = f;
    s->done[x] = 1;
    s->busy[d] += cost;
    if (f > acc->mk) acc->mk = f;
    for (int32_t k = out_off[x], ke = out_off[x + 1]; k < ke; k++) {
        int32_t uw = s->unit[out_dst[k]];
        if (uw != x && --s->udeg[uw] == 0) s->queue[acc->qt++] = uw;
    }
}

/* An accelerator block b (unit x = V + b): its inputs arrive (once per producer), its members run one after
 * the other, its outputs leave (once per producer read outside). Returns its member count. */
SIM_INLINE int32_t tw_block(hsdag_sim *s, int32_t x, tw_acc *acc)
{
    const hsdag_graph *g = s->g;
    const int32_t D = s->D, V = s->V;
    const int32_t *restrict in_off = g->in_off, *restrict in_src = g->in_src, *restrict out_off = g->out_off,
                            *restrict out_dst = g->out_dst;
    const double *restrict node_s = s->costs->node_s, *restrict xby = s->costs->xfer_bytes;
    int32_t *restrict unit = s->unit, *restrict udeg = s->udeg, *restrict queue = s->queue;
    uint32_t *restrict mark = s->mark;
    double *restrict fin = s->fin;
    int32_t b = x - V, a = s->blk_dev[b], bs = s->blk_start[b], be = s->blk_end[b];
    const int32_t *restrict blk_nodes = s->blk_nodes;
    uint32_t gen = tw_gen(s);
    double maxp = 0, in_c = 0, out_c = 0, work = 0;
    for (int32_t i = bs; i < be; i++) {
        int32_t v = blk_nodes[i];
        for (int32_t k = in_off[v], ke = in_off[v + 1]; k < ke; k++) {
            int32_t u = in_src[k];
            if (unit[u] == x || mark[u] == gen) continue;
            mark[u] = gen;
            in_c += tw_comm(s, u, a);
            acc->xb += xby[u];
            acc->nx++;
            if (fin[u] > maxp) maxp = fin[u];
        }
        work += node_s[(size_t)v * D + a];
        /* v's output leaves the block once however many consumers outside read it; the consumers' units
         * lose an input (the queue order is the same as after the block's finish: nothing else queues) */
        int leaves = 0;
        for (int32_t k = out_off[v], ke = out_off[v + 1]; k < ke; k++) {
            int32_t uw = unit[out_dst[k]];
            if (uw == x) continue;
            leaves = 1;
            if (--udeg[uw] == 0) queue[acc->qt++] = uw;
        }
        if (leaves) {
            out_c += tw_comm(s, v, a);
            acc->xb += xby[v];
            acc->nx++;
        }
    }
    double f = maxp + in_c + work + out_c, t = maxp + in_c;
    for (int32_t i = bs; i < be; i++) {
        int32_t v = blk_nodes[i];
        s->st[v] = t;
        t += node_s[(size_t)v * D + a];
        fin[v] = f;
        s->done[v] = 1;
    }
    if (in_c > 0) sim_trace_xfer(s, maxp, maxp + in_c, -1 - b, s->host >= 0 ? s->host : a, a);
    if (out_c > 0) sim_trace_xfer(s, f - out_c, f, -1 - b, a, s->host >= 0 ? s->host : a);
    s->busy[a] += work;
    acc->xs += in_c + out_c;
    if (f > acc->mk) acc->mk = f;
    return be - bs;
}

/* The tarnawski run with its own prepass (checks the indices; static memory, unsupported ops, colours, the
 * first and last node of each device). Returns 0 or HSDAG_EINVAL (nothing written to the result). */
SIM_NOINLINE int sim_run_tarnawski(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    uint64_t used = 0;
    if (tw_prepass(s, dev, &used) < 0) return HSDAG_EINVAL;
    sim_run_bind(s, dev, r);
    sim_run_tally(s, dev, used, r);
    int32_t nb = tw_blocks(s, dev);
    tw_acc acc = {0, 0, 0, 0, tw_ready(s, nb)};
    int32_t qh = 0, blocks = 0, cuts = 0, left = s->V, cursor = 0;
    while (left > 0) {
        if (qh == acc.qt) { /* stalled on a cycle of blocks */
            qh = acc.qt = 0;
            s->queue[acc.qt++] = s->V + tw_cut(s, &cursor, &nb);
            cuts++;
        }
        int32_t x = s->queue[qh++];
        if (x < s->V) {
            tw_cpu(s, x, dev, &acc);
            left--;
        } else {
            left -= tw_block(s, x, &acc);
            blocks++;
        }
    }
    r->makespan_s = acc.mk;
    r->xfer_s = acc.xs;
    r->xfer_bytes = acc.xb;
    r->n_xfers = acc.nx;
    r->n_blocks = blocks;
    r->n_cycle_cuts = cuts;
    return 0;
}
