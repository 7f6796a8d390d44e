/* sim_sequential.c - the sequential semantics (OpenVINO HETERO): one op at a time in topological order,
 *   each copy right after its producer, memory by reference counts.
 * Not here: the set-up and the per-run setup the semantics share (sim.c), the other semantics.
 * Entry points: sim_run_sequential (sim_internal.h).
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

/* ---- sequential: one op at a time in topological order, copies right after the producer ----
 * One pass over the nodes does everything (the reward loop of the learners runs this): the prepass's work,
 * the copy slots of the node's output, its copies, and releasing its inputs. */

/* The copy of v's output from d to dw (rare next to the ops: kept out of the hot loop's registers). Returns
 * the
 * time after the copy. */
static SIM_COLD double seq_copy(hsdag_sim *s, int32_t v, int32_t d, int32_t dw, double t)
{
    const hsdag_costs *c = s->costs;
    double xt = hsdag_costs_xfer_s(c, v, d, dw), b = c->xfer_bytes[v];
    sim_trace_xfer(s, t, t + xt, v, d, dw);
    s->acc_xs += xt;
    s->acc_xb += b;
    s->acc_nx++;
    double y = s->live[dw] + b;
    s->live[dw] = y;
    if (y > s->act_peak[dw]) s->act_peak[dw] = y;
    return t + xt;
}

/* Node v with several consumers: one copy per other device, and the last reader of each tensor on each device
 * gets its bytes in free_at. Consumers come in increasing index order, so the last one seen is the last
 * reader.
 * *L is the live activation bytes on v's device. Returns the time after the copies. */
static double seq_fanout(hsdag_sim *s, int32_t v, int32_t d, const int32_t *dv, double t, double *L)
{
    const sim_node *nd = &s->nodes[v];
    const int32_t *out_dst = s->g->out_dst;
    int32_t *stamp = s->slot_stamp, *lastc = s->last_on, *touched = s->first_on;
    int32_t lastloc = -1, nt = 0;
    for (int32_t k = nd->out_begin; k < nd->out_end; k++) {
        int32_t w = out_dst[k], dw = dv[w];
        if (dw == d) {
            lastloc = w;
            continue;
        }
        if (stamp[dw] != v) { /* the first consumer on dw: one copy serves all of them */
            stamp[dw] = v;
            touched[nt++] = dw;
            t = seq_copy(s, v, d, dw, t);
        }
        lastc[dw] = w;
    }
    if (lastloc >= 0)
        s->free_at[lastloc] += nd->act;
    else
        *L -= nd->act; /* only copies read it, and they are made */
    for (int32_t i = 0; i < nt; i++) s->free_at[lastc[touched[i]]] += nd->xby;
    return t;
}

void sim_run_sequential(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    /* restrict: the scratch arrays never alias the graph or each other, so nothing is reloaded after a
     * store */
    const sim_node *restrict nodes = s->nodes;
    const int32_t *restrict out_dst = s->g->out_dst, *restrict dv = dev;
    const double *restrict node_s = c->node_s;
    double *restrict free_at = s->free_at;
    for (int32_t d = 0; d < D; d++) s->slot_stamp[d] = -1;
    s->acc_xs = s->acc_xb = 0;
    s->acc_nx = 0;
    double t = 0;
    /* the current device's accumulators live in registers while consecutive ops stay on it (placements are
     * mostly runs); copies only ever touch other devices, frees only the current one */
    int32_t cd = V > 0 ? dev[0] : 0;
    uint64_t used = V > 0 ? (uint64_t)1 << cd : 0;
    double L = 0, P = 0, B = 0, S = 0;
    for (int32_t v = 0; v < V; v++) {
        const sim_node *nd = &nodes[v];
        int32_t d = dv[v];
        if (d != cd) {
            s->live[cd] = L, s->act_peak[cd] = P, s->busy[cd] = B, s->static_sum[cd] = S;
            cd = d;
            used |= (uint64_t)1 << d;
            L = s->live[d], P = s->act_peak[d], B = s->busy[d], S = s->static_sum[d];
        }
        S += nd->stat;
        double cost = node_s[(size_t)v * D + d];
        if (s->record) s->st[v] = t, s->fin[v] = t + cost;
        t += cost;
        B += cost;
        L += nd->act;
        if (L > P) P = L;
        int32_t k = nd->out_begin, ke = nd->out_end;
        if (ke - k == 1) { /* the common case: one consumer */
            int32_t w = out_dst[k], dw = dv[w];
            if (dw == d) {
                free_at[w] += nd->act; /* freed once w has run */
            } else {
                t = seq_copy(s, v, d, dw, t);
                free_at[w] += nd->xby;
                L -= nd->act; /* only the copy read it */
            }
        } else if (ke > k) {
            t = seq_fanout(s, v, d, dv, t, &L);
        }
        /* bytes this node was the last reader of on its device: outputs and copies */
        L -= free_at[v];
        free_at[v] = 0; /* every entry is consumed exactly once per run: zero again for the next */
    }
    if (V > 0) s->live[cd] = L, s->act_peak[cd] = P, s->busy[cd] = B, s->static_sum[cd] = S;
    sim_run_tally(s, dev, used, r);
    r->makespan_s = t;
    r->xfer_s = s->acc_xs;
    r->xfer_bytes = s->acc_xb;
    r->n_xfers = s->acc_nx;
}
