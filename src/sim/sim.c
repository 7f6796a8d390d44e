/* sim.c - the latency simulator: sequential (OpenVINO HETERO), concurrent (list scheduling with link resources)
 * and tarnawski (Tarnawski et al.'s computeLatency), over a precomputed cost table.
 * Not here: the cost model (costs.c), bounds (bound.c), trace output (trace.c). A run allocates nothing.
 * Entry points: hsdag_sim_config_default, hsdag_sim_create/run/free/costs/semantics/set_semantics.
 */
#include "sim_internal.h"

#include <math.h>
#include <string.h>

hsdag_sim_config hsdag_sim_config_default(void)
{
    return (hsdag_sim_config){.semantics = HSDAG_SEM_AUTO,
                              .priority = HSDAG_PRIO_UPWARD_RANK,
                              .costs = hsdag_costs_config_default(),
                              .record_trace = 0};
}

void hsdag_sim_free(hsdag_sim *s)
{
    if (!s) return;
    hsdag_costs_free(s->costs);
    hsdag_arena_free(s->arena);
}

const hsdag_costs *hsdag_sim_costs(const hsdag_sim *s) { return s->costs; }
hsdag_semantics hsdag_sim_semantics(const hsdag_sim *s) { return s->sem; }

void hsdag_sim_set_semantics(hsdag_sim *s, hsdag_semantics sem)
{
    s->sem = (sem == HSDAG_SEM_AUTO || sem < 0 || sem >= HSDAG_SEM_COUNT_) ? s->devs->semantics : sem;
}

/* ---- setup ---- */

typedef struct rank_item {
    double r;
    int32_t v;
} rank_item;

static int rank_cmp(const void *a, const void *b)
{
    const rank_item *x = a, *y = b;
    if (x->r > y->r) return -1;
    if (x->r < y->r) return 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* HEFT upward rank: mean cost over allowed devices + max over successors of (mean transfer + their rank). */
static int sim_priorities(hsdag_sim *s)
{
    const hsdag_graph *g = s->g;
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    if (s->prio == HSDAG_PRIO_TOPO) {
        for (int32_t v = 0; v < V; v++) s->prio_rank[v] = s->prio_node[v] = v;
        return 0;
    }
    rank_item *it = hsdag_malloc(((size_t)V + 1) * sizeof *it);
    double *rk = hsdag_malloc(((size_t)V + 1) * sizeof *rk);
    if (!it || !rk) {
        hsdag_free(it);
        hsdag_free(rk);
        return HSDAG_ENOMEM;
    }
    for (int32_t v = V - 1; v >= 0; v--) {
        double sum = 0, all = 0;
        int n = 0;
        for (int32_t d = 0; d < D; d++) {
            double t = c->node_s[(size_t)v * D + d];
            all += t;
            if (c->allowed[(size_t)v * D + d]) sum += t, n++;
        }
        double w = n ? sum / n : all / D;
        double xm = 0;
        if (D > 1) {
            for (int32_t a = 0; a < D; a++)
                for (int32_t b = 0; b < D; b++)
                    if (a != b) xm += hsdag_costs_xfer_s(c, v, a, b);
            xm /= (double)D * (double)(D - 1);
        }
        double best = 0;
        for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
            double r = xm + rk[g->out_dst[k]];
            if (r > best) best = r;
        }
        rk[v] = w + best;
        it[v].r = rk[v];
        it[v].v = v;
    }
    qsort(it, (size_t)V, sizeof *it, rank_cmp);
    for (int32_t i = 0; i < V; i++) s->prio_rank[it[i].v] = i, s->prio_node[i] = it[i].v;
    hsdag_free(it);
    hsdag_free(rk);
    return 0;
}

typedef struct color_item {
    int32_t color, v;
} color_item;

static int color_cmp(const void *a, const void *b)
{
    const color_item *x = a, *y = b;
    if (x->color != y->color) return (x->color > y->color) - (x->color < y->color);
    return (x->v > y->v) - (x->v < y->v);
}

/* Dense colour ids so a run can check co-location with a flat array. */
static int sim_colors(hsdag_sim *s)
{
    const hsdag_graph *g = s->g;
    int32_t n = 0;
    for (int32_t v = 0; v < s->V; v++) {
        s->color_id[v] = -1;
        if (g->color[v] >= 0) n++;
    }
    s->n_colors = 0;
    if (!n) return 0;
    color_item *it = hsdag_malloc((size_t)n * sizeof *it);
    if (!it) return HSDAG_ENOMEM;
    n = 0;
    for (int32_t v = 0; v < s->V; v++)
        if (g->color[v] >= 0) it[n].color = g->color[v], it[n].v = v, n++;
    qsort(it, (size_t)n, sizeof *it, color_cmp);
    int32_t id = -1;
    for (int32_t i = 0; i < n; i++) {
        if (i == 0 || it[i].color != it[i - 1].color) id++;
        s->color_id[it[i].v] = id;
    }
    s->n_colors = id + 1;
    hsdag_free(it);
    return 0;
}

#define SIM_ALLOC(ptr, count)                                                              \
    do {                                                                                   \
        (ptr) = hsdag_arena_alloc(a, ((size_t)(count) + 1) * sizeof *(ptr));               \
        if (!(ptr)) goto oom;                                                              \
    } while (0)

int hsdag_sim_create(hsdag_sim **out, const hsdag_graph *g, const hsdag_devices *devs, const hsdag_sim_config *cfg,
                     hsdag_err *e)
{
    *out = NULL;
    hsdag_sim_config def = hsdag_sim_config_default();
    if (!cfg) cfg = &def;
    if (!g || !devs) return hsdag_err_set(e, HSDAG_EINVAL, "simulate: no graph or no devices");
    if (cfg->semantics != HSDAG_SEM_AUTO && (cfg->semantics < 0 || cfg->semantics >= HSDAG_SEM_COUNT_))
        return hsdag_err_set(e, HSDAG_EINVAL, "simulate: unknown semantics %d", (int)cfg->semantics);
    hsdag_arena *a = hsdag_arena_create(0);
    if (!a) return hsdag_err_set(e, HSDAG_ENOMEM, "simulate: out of memory");
    hsdag_sim *s = hsdag_arena_alloc(a, sizeof *s);
    if (!s) {
        hsdag_arena_free(a);
        return hsdag_err_set(e, HSDAG_ENOMEM, "simulate: out of memory");
    }
    s->arena = a;
    int rc = hsdag_costs_create(&s->costs, g, devs, &cfg->costs, e);
    if (rc < 0) {
        hsdag_arena_free(a);
        return rc;
    }
    s->g = g;
    s->devs = devs;
    s->prio = cfg->priority;
    s->record = cfg->record_trace;
    hsdag_sim_set_semantics(s, cfg->semantics);
    const int32_t V = g->n_nodes, E = g->n_edges, D = devs->n;
    s->V = V;
    s->E = E;
    s->D = D;
    s->R = devs->n_resources;
    const int32_t R = s->R;

    SIM_ALLOC(s->prio_rank, V);
    SIM_ALLOC(s->prio_node, V);
    SIM_ALLOC(s->color_id, V);
    SIM_ALLOC(s->res_of, (size_t)D * D);
    SIM_ALLOC(s->is_cpu, D);
    SIM_ALLOC(s->busy, D);
    SIM_ALLOC(s->peak, D);
    SIM_ALLOC(s->excess, D);
    SIM_ALLOC(s->live, D);
    SIM_ALLOC(s->static_sum, D);
    SIM_ALLOC(s->act_peak, D);
    SIM_ALLOC(s->fin, V);
    SIM_ALLOC(s->st, V);
    SIM_ALLOC(s->own_ref, V);
    SIM_ALLOC(s->copy_ref, E);
    SIM_ALLOC(s->slot_of_edge, E);
    SIM_ALLOC(s->slot_first, D);
    SIM_ALLOC(s->slot_stamp, D);
    SIM_ALLOC(s->first_on, D);
    SIM_ALLOC(s->last_on, D);
    SIM_ALLOC(s->free_at, V); /* zeroed by the arena; every run leaves it zero */
    SIM_ALLOC(s->nodes, V);
    for (int32_t v = 0; v < V; v++) {
        s->nodes[v].act = s->costs->act_bytes[v];
        s->nodes[v].xby = s->costs->xfer_bytes[v];
        s->nodes[v].stat = s->costs->static_bytes[v];
        s->nodes[v].out_begin = g->out_off[v];
        s->nodes[v].out_end = g->out_off[v + 1];
    }
    SIM_ALLOC(s->pend, V);
    /* ready bitsets: level sizes ceil(V / 64), ceil(that / 64), ... down to one word */
    s->rq_levels = 0;
    s->rq_words = 0;
    for (int64_t n = V > 1 ? V : 1;;) {
        int64_t words = (n + 63) / 64;
        s->rq_lvl_off[s->rq_levels++] = (int32_t)s->rq_words;
        s->rq_words += words;
        if (words == 1) break;
        n = words;
    }
    s->rq_bits = hsdag_arena_alloc(a, (size_t)D * (size_t)s->rq_words * sizeof *s->rq_bits);
    if (!s->rq_bits) goto oom;
    SIM_ALLOC(s->rq_len, D);
    SIM_ALLOC(s->running, D);
    SIM_ALLOC(s->ev, D + R + 1);
    SIM_ALLOC(s->xq_next, E);
    SIM_ALLOC(s->xq_head, R);
    SIM_ALLOC(s->xq_tail, R);
    SIM_ALLOC(s->res_busy, R);
    SIM_ALLOC(s->dp, V);
    SIM_ALLOC(s->blk, V);
    SIM_ALLOC(s->udeg, 3 * (size_t)V);
    SIM_ALLOC(s->blk_start, 2 * (size_t)V);
    SIM_ALLOC(s->blk_end, 2 * (size_t)V);
    SIM_ALLOC(s->blk_nodes, V);
    SIM_ALLOC(s->blk_dev, 2 * (size_t)V);
    SIM_ALLOC(s->queue, 3 * (size_t)V);
    SIM_ALLOC(s->done, V);
    SIM_ALLOC(s->mark, V);
    if (s->record) {
        s->cap_tx = E + 2 * V + 1;
        SIM_ALLOC(s->tr_dev, V);
        SIM_ALLOC(s->tx_start, s->cap_tx);
        SIM_ALLOC(s->tx_end, s->cap_tx);
        SIM_ALLOC(s->tx_node, s->cap_tx);
        SIM_ALLOC(s->tx_src, s->cap_tx);
        SIM_ALLOC(s->tx_dst, s->cap_tx);
    }
    s->host = -1;
    for (int32_t d = 0; d < D; d++) {
        s->is_cpu[d] = devs->dev[d].kind == HSDAG_DEV_CPU;
        if (s->is_cpu[d] && s->host < 0) s->host = d;
        for (int32_t b = 0; b < D; b++) s->res_of[d * D + b] = d == b ? -1 : devs->link[d * D + b].resource;
    }
    s->all_allowed = 1;
    for (size_t i = 0; i < (size_t)V * (size_t)D; i++) s->all_allowed &= s->costs->allowed[i];
    if (sim_colors(s) < 0) goto oom;
    if (s->n_colors) {
        SIM_ALLOC(s->color_dev, s->n_colors);
        SIM_ALLOC(s->color_bad, s->n_colors);
    }
    if (sim_priorities(s) < 0) goto oom;
    *out = s;
    return 0;
oom:
    hsdag_sim_free(s);
    return hsdag_err_set(e, HSDAG_ENOMEM, "simulate: out of memory for %d nodes", (int)V);
}

/* ---- shared per-run pieces ---- */

static void mem_alloc(hsdag_sim *s, int32_t d, double bytes)
{
    double x = s->live[d] + bytes;
    s->live[d] = x;
    if (x > s->act_peak[d]) s->act_peak[d] = x;
}

static void trace_xfer(hsdag_sim *s, double t0, double t1, int32_t node, int32_t src, int32_t dst)
{
    if (!s->record || s->n_tx >= s->cap_tx) return;
    int32_t i = s->n_tx++;
    s->tx_start[i] = t0;
    s->tx_end[i] = t1;
    s->tx_node[i] = node;
    s->tx_src[i] = src;
    s->tx_dst[i] = dst;
}

/* Resets the per-run state and checks every device index. Returns 0 or HSDAG_EINVAL. */
static int run_reset(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const int32_t V = s->V, D = s->D;
    uint32_t mx = 0; /* the largest index as unsigned: negative ones become huge */
    for (int32_t v = 0; v < V; v++) mx = (uint32_t)dev[v] > mx ? (uint32_t)dev[v] : mx;
    if (V > 0 && mx >= (uint32_t)D) return HSDAG_EINVAL;
    for (int32_t d = 0; d < D; d++) {
        s->busy[d] = s->peak[d] = s->excess[d] = s->live[d] = s->static_sum[d] = s->act_peak[d] = 0;
        s->first_on[d] = s->last_on[d] = -1;
    }
    memset(r, 0, sizeof *r);
    r->n_devices = D;
    s->n_tx = 0;
    s->dev = dev;
    if (s->record) memcpy(s->tr_dev, dev, (size_t)V * sizeof *dev);
    return 0;
}

/* Colour classes split over devices, each counted once. */
static int32_t run_colors(hsdag_sim *s, const int32_t *dev)
{
    if (!s->n_colors) return 0;
    for (int32_t k = 0; k < s->n_colors; k++) s->color_dev[k] = -1, s->color_bad[k] = 0;
    int32_t viol = 0;
    for (int32_t v = 0; v < s->V; v++) {
        int32_t k = s->color_id[v], d = dev[v];
        if (k < 0) continue;
        if (s->color_dev[k] < 0) s->color_dev[k] = d;
        else if (s->color_dev[k] != d && !s->color_bad[k]) s->color_bad[k] = 1, viol++;
    }
    return viol;
}

/* What every semantics reports the same way: static memory, unsupported ops, colour classes, the first and last
 * node of each device and the accelerators used. (The sequential run computes these in its own single pass.) */
static void run_prepass(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const int32_t V = s->V, D = s->D;
    const hsdag_costs *c = s->costs;
    int32_t unsup = 0;
    for (int32_t v = 0; v < V; v++) {
        int32_t d = dev[v];
        s->static_sum[d] += c->static_bytes[v];
        unsup += !c->allowed[(size_t)v * D + d];
        if (s->first_on[d] < 0) s->first_on[d] = v;
        s->last_on[d] = v;
    }
    int32_t used = 0;
    for (int32_t d = 0; d < D; d++) used += !s->is_cpu[d] && s->first_on[d] >= 0;
    r->n_unsupported = unsup;
    r->n_color_violations = run_colors(s, dev);
    r->accels_used = used;
}

static void run_finish(hsdag_sim *s, hsdag_sim_result *r, int with_acts)
{
    double mx = 0;
    for (int32_t d = 0; d < s->D; d++) {
        s->peak[d] = s->static_sum[d] + (with_acts ? s->act_peak[d] : 0);
        double cap = s->devs->dev[d].mem_capacity;
        s->excess[d] = (cap > 0 && s->peak[d] > cap) ? s->peak[d] - cap : 0;
        if (s->excess[d] > mx) mx = s->excess[d];
    }
    r->semantics = s->sem;
    r->busy_s = s->busy;
    r->peak_mem_bytes = s->peak;
    r->excess_bytes = s->excess;
    r->max_excess_bytes = mx;
    int over = s->devs->max_accels_used >= 0 && r->accels_used > s->devs->max_accels_used;
    r->feasible = mx <= 0 && r->n_unsupported == 0 && r->n_color_violations == 0 && !over;
    s->have_run = 1;
    s->ran = s->sem;
}

/* Node v finished on d: its inputs lose a reader; free what nobody reads any more. */
static void release_inputs(hsdag_sim *s, const int32_t *dev, int32_t v)
{
    const hsdag_graph *g = s->g;
    const hsdag_costs *c = s->costs;
    int32_t d = dev[v];
    for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
        int32_t u = g->in_src[k];
        if (dev[u] == d) {
            if (--s->own_ref[u] == 0) s->live[d] -= c->act_bytes[u];
        } else {
            int32_t slot = s->slot_of_edge[g->in_eid[k]];
            if (--s->copy_ref[slot] == 0) s->live[d] -= c->xfer_bytes[u];
        }
    }
}

/* ---- sequential: one op at a time in topological order, copies right after the producer ----
 * One pass over the nodes does everything (the reward loop of the learners runs this): the prepass's work,
 * the copy slots of the node's output, its copies, and releasing its inputs. */

#if defined(__GNUC__)
#define SIM_COLD __attribute__((noinline, cold))
#else
#define SIM_COLD
#endif

/* The copy of v's output from d to dw (rare next to the ops: kept out of the hot loop's registers). Returns the
 * time after the copy. */
static SIM_COLD double seq_copy(hsdag_sim *s, int32_t v, int32_t d, int32_t dw, double t)
{
    const hsdag_costs *c = s->costs;
    double xt = hsdag_costs_xfer_s(c, v, d, dw), b = c->xfer_bytes[v];
    trace_xfer(s, t, t + xt, v, d, dw);
    s->acc_xs += xt;
    s->acc_xb += b;
    s->acc_nx++;
    double y = s->live[dw] + b;
    s->live[dw] = y;
    if (y > s->act_peak[dw]) s->act_peak[dw] = y;
    return t + xt;
}

/* Node v with several consumers: one copy per other device, and the last reader of each tensor on each device
 * gets its bytes in free_at. Consumers come in increasing index order, so the last one seen is the last reader.
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
    if (lastloc >= 0) s->free_at[lastloc] += nd->act;
    else *L -= nd->act; /* only copies read it, and they are made */
    for (int32_t i = 0; i < nt; i++) s->free_at[lastc[touched[i]]] += nd->xby;
    return t;
}

static void run_sequential(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    /* restrict: the scratch arrays never alias the graph or each other, so nothing is reloaded after a store */
    const sim_node *restrict nodes = s->nodes;
    const int32_t *restrict out_dst = s->g->out_dst, *restrict dv = dev;
    const double *restrict node_s = c->node_s;
    double *restrict free_at = s->free_at;
    for (int32_t d = 0; d < D; d++) s->slot_stamp[d] = -1;
    s->acc_xs = s->acc_xb = 0;
    s->acc_nx = 0;
    int32_t unsup = 0;
    if (!s->all_allowed)
        for (int32_t v = 0; v < V; v++) unsup += !c->allowed[(size_t)v * D + dev[v]];
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
    int32_t acc = 0;
    for (int32_t d = 0; d < D; d++) acc += !s->is_cpu[d] && ((used >> d) & 1);
    r->n_unsupported = unsup;
    r->n_color_violations = run_colors(s, dev);
    r->accels_used = acc;
    r->makespan_s = t;
    r->xfer_s = s->acc_xs;
    r->xfer_bytes = s->acc_xb;
    r->n_xfers = s->acc_nx;
}

/* ---- concurrent: list scheduling per device, FIFO link resources, events by (time, seq) ---- */

static int ev_less(const sim_event *a, const sim_event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(hsdag_sim *s, double t, int32_t who)
{
    int32_t i = s->ev_len++;
    sim_event x = {t, s->seq++, who};
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!ev_less(&x, &s->ev[p])) break;
        s->ev[i] = s->ev[p];
        i = p;
    }
    s->ev[i] = x;
}

static sim_event ev_pop(hsdag_sim *s)
{
    sim_event top = s->ev[0], x = s->ev[--s->ev_len];
    int32_t n = s->ev_len, i = 0;
    for (;;) {
        int32_t l = 2 * i + 1, m = i;
        const sim_event *best = &x;
        if (l < n && ev_less(&s->ev[l], best)) m = l, best = &s->ev[l];
        if (l + 1 < n && ev_less(&s->ev[l + 1], best)) m = l + 1;
        if (m == i) break;
        s->ev[i] = s->ev[m];
        i = m;
    }
    if (n > 0) s->ev[i] = x;
    return top;
}

/* Ready sets: one hierarchical bitset of priority ranks per device (64-ary: a set bit in level l+1 says the
 * word below is non-empty), so push and pop-min cost O(log_64 V) with no comparisons. Every pushed rank is
 * popped within a run, so the bitsets are empty again at its end. */
static void rq_push(hsdag_sim *s, int32_t d, int32_t v)
{
    uint64_t *w = s->rq_bits + (size_t)d * (size_t)s->rq_words;
    uint32_t key = (uint32_t)s->prio_rank[v];
    for (int l = 0; l < s->rq_levels; l++) {
        uint64_t *word = w + s->rq_lvl_off[l] + (key >> 6), before = *word;
        *word = before | (uint64_t)1 << (key & 63);
        if (before) break; /* the levels above already know this word is non-empty */
        key >>= 6;
    }
    s->rq_len[d]++;
    s->dirty |= (uint64_t)1 << d;
}

static int32_t rq_pop(hsdag_sim *s, int32_t d)
{
    uint64_t *w = s->rq_bits + (size_t)d * (size_t)s->rq_words;
    uint32_t idx = 0;
    for (int l = s->rq_levels - 1; l >= 0; l--) idx = (idx << 6) | (uint32_t)__builtin_ctzll(w[s->rq_lvl_off[l] + idx]);
    uint32_t key = idx;
    for (int l = 0; l < s->rq_levels; l++) {
        uint64_t *word = w + s->rq_lvl_off[l] + (key >> 6);
        *word &= ~((uint64_t)1 << (key & 63));
        if (*word) break;
        key >>= 6;
    }
    s->rq_len[d]--;
    return s->prio_node[idx];
}

static void xfer_start(hsdag_sim *s, int32_t slot, double now, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const hsdag_costs *c = s->costs;
    int32_t u = g->edge_src[slot], d = s->dev[u], d2 = s->dev[g->out_dst[slot]];
    double x = hsdag_costs_xfer_s(c, u, d, d2);
    s->res_busy[s->res_of[d * s->D + d2]] = 1;
    mem_alloc(s, d2, c->xfer_bytes[u]);
    r->xfer_s += x;
    r->xfer_bytes += c->xfer_bytes[u];
    r->n_xfers++;
    trace_xfer(s, now, now + x, u, d, d2);
    ev_push(s, now + x, -slot - 1);
}

static void xfer_request(hsdag_sim *s, int32_t slot, double now, hsdag_sim_result *r)
{
    int32_t u = s->g->edge_src[slot];
    int32_t res = s->res_of[s->dev[u] * s->D + s->dev[s->g->out_dst[slot]]];
    if (!s->res_busy[res]) {
        xfer_start(s, slot, now, r);
        return;
    }
    s->xq_next[slot] = -1;
    if (s->xq_head[res] < 0) s->xq_head[res] = slot;
    else s->xq_next[s->xq_tail[res]] = slot;
    s->xq_tail[res] = slot;
}

/* Op v finished: free what it was the last reader of, wake its local consumers, request one copy per other
 * consuming device. The copy slots and reader counts of v's output are set up here, the first moment they are
 * needed (consumers cannot finish before v has). */
static void op_done(hsdag_sim *s, int32_t v, double now, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const int32_t *dev = s->dev;
    int32_t d = dev[v], own = 0;
    s->fin[v] = now;
    if (now > s->mk) s->mk = now;
    s->running[d] = -1;
    s->dirty |= (uint64_t)1 << d;
    release_inputs(s, dev, v);
    for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
        int32_t w = g->out_dst[k], dw = dev[w];
        if (dw == d) {
            own++;
            s->slot_of_edge[k] = -1;
            if (--s->pend[w] == 0) rq_push(s, d, w);
        } else if (s->slot_stamp[dw] != v) { /* one copy serves every consumer on dw */
            s->slot_stamp[dw] = v;
            s->slot_first[dw] = k;
            s->slot_of_edge[k] = k;
            s->copy_ref[k] = 1;
            own++; /* the copy reads the original while in flight */
            xfer_request(s, k, now, r);
        } else {
            int32_t slot = s->slot_first[dw];
            s->slot_of_edge[k] = slot;
            s->copy_ref[slot]++;
        }
    }
    s->own_ref[v] = own;
}

static void xfer_done(hsdag_sim *s, int32_t slot, double now, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const int32_t *dev = s->dev;
    int32_t u = g->edge_src[slot], d = dev[u], d2 = dev[g->out_dst[slot]];
    int32_t res = s->res_of[d * s->D + d2];
    s->res_busy[res] = 0;
    if (--s->own_ref[u] == 0) s->live[d] -= s->costs->act_bytes[u];
    for (int32_t k = slot; k < g->out_off[u + 1]; k++) {
        int32_t w = g->out_dst[k];
        if (s->slot_of_edge[k] == slot && --s->pend[w] == 0) rq_push(s, d2, w);
    }
    int32_t nxt = s->xq_head[res];
    if (nxt >= 0) {
        s->xq_head[res] = s->xq_next[nxt];
        xfer_start(s, nxt, now, r);
    }
}

/* Starts the best ready op on an idle device. Zero-cost ops (bookkeeping) complete on the spot, without an
 * event, and the next ready op is considered. */
static void try_start(hsdag_sim *s, int32_t d, double now, hsdag_sim_result *r)
{
    const hsdag_costs *c = s->costs;
    while (s->running[d] < 0 && s->rq_len[d] > 0) {
        int32_t v = rq_pop(s, d);
        double cost = c->node_s[(size_t)v * s->D + d];
        s->running[d] = v;
        s->st[v] = now;
        s->busy[d] += cost;
        mem_alloc(s, d, c->act_bytes[v]);
        if (cost > 0) {
            ev_push(s, now + cost, v);
            return;
        }
        op_done(s, v, now, r);
    }
}

static void run_concurrent(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const int32_t V = s->V, D = s->D;
    for (int32_t d = 0; d < D; d++) s->rq_len[d] = 0, s->running[d] = -1, s->slot_stamp[d] = -1;
    s->mk = 0;
    for (int32_t q = 0; q < s->R; q++) s->xq_head[q] = -1, s->res_busy[q] = 0;
    s->ev_len = 0;
    s->seq = 0;
    s->dirty = 0;
    for (int32_t v = 0; v < V; v++) {
        s->pend[v] = g->in_off[v + 1] - g->in_off[v];
        if (s->pend[v] == 0) rq_push(s, dev[v], v);
    }
    double now = 0;
    for (;;) {
        while (s->dirty) {
            int32_t d = __builtin_ctzll(s->dirty);
            s->dirty &= s->dirty - 1;
            try_start(s, d, now, r);
        }
        if (s->ev_len == 0) break;
        sim_event ev = ev_pop(s);
        now = ev.t;
        for (;;) {
            if (ev.who >= 0) op_done(s, ev.who, now, r);
            else xfer_done(s, -ev.who - 1, now, r);
            if (s->ev_len == 0 || s->ev[0].t != now) break;
            ev = ev_pop(s);
        }
    }
    r->makespan_s = s->mk;
}

/* ---- tarnawski: contract accelerator subgraphs into contiguous blocks, then their latency formula ---- */

/* Communication time of node u's output to or from accelerator a through host memory. */
static double tw_comm(const hsdag_sim *s, int32_t u, int32_t a)
{
    const hsdag_costs *c = s->costs;
    if (!isnan(c->file_xfer_s[u])) return c->file_xfer_s[u];
    if (s->host < 0) return 0.0;
    int32_t k = a * s->D + s->host;
    return c->link_lat_s[k] + c->xfer_bytes[u] * c->link_inv_bw[k];
}

/* Cuts each accelerator's node set into contiguous pieces by the longest-path DP (the number of times a path
 * re-enters the set before reaching the node); returns the number of block ids used (some may be empty). */
static int32_t tw_blocks(hsdag_sim *s, const int32_t *dev)
{
    const hsdag_graph *g = s->g;
    int32_t nb = 0;
    for (int32_t v = 0; v < s->V; v++) s->blk[v] = -1;
    for (int32_t a = 0; a < s->D; a++) {
        if (s->is_cpu[a] || s->first_on[a] < 0) continue;
        int32_t lo = s->first_on[a], hi = s->last_on[a], maxdp = 1;
        for (int32_t v = lo; v <= hi; v++) {
            int in = dev[v] == a, m = in;
            for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
                int32_t u = g->in_src[k];
                if (u < lo) {
                    if (in && m < 1) m = 1;
                    continue;
                }
                int x = s->dp[u] + (in && dev[u] != a);
                if (x > m) m = x;
            }
            s->dp[v] = m;
            if (in) {
                s->blk[v] = nb + m - 1;
                s->blk_dev[nb + m - 1] = a;
                if (m > maxdp) maxdp = m;
            }
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

#define TW_UNIT(s, x) ((s)->blk[x] >= 0 ? (s)->V + (s)->blk[x] : (x))

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
    while (s->done[*cursor]) (*cursor)++;
    int32_t x = *cursor, b = s->blk[x];
    HSDAG_ASSERT(b >= 0);
    uint32_t gen = tw_gen(s);
    int32_t lo = s->blk_start[b], hi = s->blk_end[b], nr = 0;
    for (int32_t i = lo; i < hi; i++) {
        int32_t v = s->blk_nodes[i], ok = 1;
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1] && ok; k++) {
            int32_t u = g->in_src[k];
            ok = s->blk[u] == b ? s->mark[u] == gen : s->done[u];
        }
        if (ok) s->mark[v] = gen, nr++;
    }
    HSDAG_ASSERT(nr > 0 && nr < hi - lo);
    /* stable partition: the ready part first (queue as scratch) */
    int32_t *tmp = s->queue + 2 * V, w = lo, t = 0;
    for (int32_t i = lo; i < hi; i++) {
        int32_t v = s->blk_nodes[i];
        if (s->mark[v] == gen) s->blk_nodes[w++] = v;
        else tmp[t++] = v;
    }
    memcpy(s->blk_nodes + w, tmp, (size_t)t * sizeof *tmp);
    int32_t nbk = (*nb)++;
    s->blk_start[nbk] = lo;
    s->blk_end[nbk] = lo + nr;
    s->blk_dev[nbk] = s->blk_dev[b];
    s->blk_start[b] = lo + nr;
    for (int32_t i = lo; i < lo + nr; i++) s->blk[s->blk_nodes[i]] = nbk;
    /* the rest now also waits for the cut part */
    int32_t deg = 0;
    for (int32_t i = lo + nr; i < hi; i++) {
        int32_t v = s->blk_nodes[i];
        for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
            int32_t u = g->in_src[k];
            deg += s->blk[u] != b && !s->done[u];
        }
    }
    s->udeg[V + b] = deg;
    s->udeg[V + nbk] = 0;
    return nbk;
}

static void run_tarnawski(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    int32_t nb = tw_blocks(s, dev);
    /* members of each block in topological order (counting sort) */
    for (int32_t b = 0; b < nb; b++) s->blk_end[b] = 0;
    for (int32_t v = 0; v < V; v++) {
        s->done[v] = 0;
        if (s->blk[v] >= 0) s->blk_end[s->blk[v]]++;
    }
    for (int32_t b = 0, o = 0; b < nb; b++) {
        s->blk_start[b] = o;
        o += s->blk_end[b];
        s->blk_end[b] = s->blk_start[b];
    }
    for (int32_t v = 0; v < V; v++)
        if (s->blk[v] >= 0) s->blk_nodes[s->blk_end[s->blk[v]]++] = v;
    /* unit of v: v itself on a CPU, V + block on an accelerator; in-degrees in the contracted graph */
    for (int32_t x = 0; x < V + nb; x++) s->udeg[x] = 0;
    for (int32_t k = 0; k < s->E; k++) {
        int32_t uu = TW_UNIT(s, g->edge_src[k]), uw = TW_UNIT(s, g->out_dst[k]);
        if (uu != uw) s->udeg[uw]++;
    }
    int32_t qh = 0, qt = 0, blocks = 0, cuts = 0, left = V, cursor = 0;
    for (int32_t v = 0; v < V; v++)
        if (s->blk[v] < 0 && s->udeg[v] == 0) s->queue[qt++] = v;
    for (int32_t b = 0; b < nb; b++)
        if (s->blk_end[b] > s->blk_start[b] && s->udeg[V + b] == 0) s->queue[qt++] = V + b;
    double mk = 0, xs = 0, xb = 0;
    int64_t nx = 0;
    while (left > 0) {
        if (qh == qt) { /* stalled on a cycle of blocks */
            qh = qt = 0;
            s->queue[qt++] = V + tw_cut(s, &cursor, &nb);
            cuts++;
        }
        int32_t x = s->queue[qh++];
        if (x < V) { /* a CPU node */
            double m = 0;
            for (int32_t k = g->in_off[x]; k < g->in_off[x + 1]; k++)
                if (s->fin[g->in_src[k]] > m) m = s->fin[g->in_src[k]];
            double cost = c->node_s[(size_t)x * D + dev[x]];
            s->st[x] = m;
            s->fin[x] = m + cost;
            s->done[x] = 1;
            left--;
            s->busy[dev[x]] += cost;
            if (s->fin[x] > mk) mk = s->fin[x];
            for (int32_t k = g->out_off[x]; k < g->out_off[x + 1]; k++) {
                int32_t uw = TW_UNIT(s, g->out_dst[k]);
                if (uw != x && --s->udeg[uw] == 0) s->queue[qt++] = uw;
            }
            continue;
        }
        int32_t b = x - V, a = s->blk_dev[b];
        uint32_t gen = tw_gen(s);
        double maxp = 0, in_c = 0, out_c = 0, work = 0;
        for (int32_t i = s->blk_start[b]; i < s->blk_end[b]; i++) {
            int32_t v = s->blk_nodes[i];
            for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
                int32_t u = g->in_src[k];
                if (s->blk[u] == b || s->mark[u] == gen) continue;
                s->mark[u] = gen;
                in_c += tw_comm(s, u, a);
                xb += c->xfer_bytes[u];
                nx++;
                if (s->fin[u] > maxp) maxp = s->fin[u];
            }
            work += c->node_s[(size_t)v * D + a];
            for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++)
                if (s->blk[g->out_dst[k]] != b) {
                    out_c += tw_comm(s, v, a);
                    xb += c->xfer_bytes[v];
                    nx++;
                    break;
                }
        }
        double f = maxp + in_c + work + out_c, t = maxp + in_c;
        for (int32_t i = s->blk_start[b]; i < s->blk_end[b]; i++) {
            int32_t v = s->blk_nodes[i];
            s->st[v] = t;
            t += c->node_s[(size_t)v * D + a];
            s->fin[v] = f;
            s->done[v] = 1;
            left--;
        }
        if (in_c > 0) trace_xfer(s, maxp, maxp + in_c, -1 - b, s->host >= 0 ? s->host : a, a);
        if (out_c > 0) trace_xfer(s, f - out_c, f, -1 - b, a, s->host >= 0 ? s->host : a);
        s->busy[a] += work;
        xs += in_c + out_c;
        blocks++;
        if (f > mk) mk = f;
        for (int32_t i = s->blk_start[b]; i < s->blk_end[b]; i++) {
            int32_t v = s->blk_nodes[i];
            for (int32_t k = g->out_off[v]; k < g->out_off[v + 1]; k++) {
                int32_t uw = TW_UNIT(s, g->out_dst[k]);
                if (uw != x && --s->udeg[uw] == 0) s->queue[qt++] = uw;
            }
        }
    }
    r->makespan_s = mk;
    r->xfer_s = xs;
    r->xfer_bytes = xb;
    r->n_xfers = nx;
    r->n_blocks = blocks;
    r->n_cycle_cuts = cuts;
}

int hsdag_sim_run(hsdag_sim *s, const int32_t *device, hsdag_sim_result *out)
{
    int rc = run_reset(s, device, out);
    if (rc < 0) return rc;
    switch (s->sem) {
    case HSDAG_SEM_CONCURRENT:
        run_prepass(s, device, out);
        run_concurrent(s, device, out);
        run_finish(s, out, 1);
        break;
    case HSDAG_SEM_TARNAWSKI:
        run_prepass(s, device, out);
        run_tarnawski(s, device, out);
        run_finish(s, out, 0);
        break;
    default:
        run_sequential(s, device, out);
        run_finish(s, out, 1);
        break;
    }
    return 0;
}
