/* sim.c - the latency simulator: sequential (OpenVINO HETERO), concurrent (list scheduling with link
 * resources)
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

const hsdag_costs *hsdag_sim_costs(const hsdag_sim *s)
{
    return s->costs;
}
hsdag_semantics hsdag_sim_semantics(const hsdag_sim *s)
{
    return s->sem;
}

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

/* HEFT upward rank (hsdag_costs_upward_rank): mean cost over allowed devices + max over successors of
 * (mean transfer + their rank); devices pick ready ops by descending rank, ties by node index. */
static int sim_priorities(hsdag_sim *s)
{
    const int32_t V = s->V;
    if (s->prio == HSDAG_PRIO_TOPO) {
        for (int32_t v = 0; v < V; v++) s->prio_rank[v] = s->prio_node[v] = v;
        return 0;
    }
    rank_item *it = hsdag_malloc(((size_t)V + 1) * sizeof *it);
    double *rk = hsdag_malloc(3 * ((size_t)V + 1) * sizeof *rk);
    if (!it || !rk) {
        hsdag_free(it);
        hsdag_free(rk);
        return HSDAG_ENOMEM;
    }
    double *w = rk + V + 1, *xm = w + V + 1;
    hsdag_costs_means(w, xm, s->costs);
    hsdag_costs_upward_rank(rk, s->g, w, xm);
    for (int32_t v = 0; v < V; v++) {
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

#define SIM_ALLOC(ptr, count)                                                \
    do {                                                                     \
        (ptr) = hsdag_arena_alloc(a, ((size_t)(count) + 1) * sizeof *(ptr)); \
        if (!(ptr)) goto oom;                                                \
    } while (0)

int hsdag_sim_create(hsdag_sim **out, const hsdag_graph *g, const hsdag_devices *devs,
                     const hsdag_sim_config *cfg, hsdag_err *e)
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
    SIM_ALLOC(s->indeg, V);
    SIM_ALLOC(s->sources, V);
    s->n_sources = 0;
    for (int32_t v = 0; v < V; v++) {
        s->indeg[v] = g->in_off[v + 1] - g->in_off[v];
        if (s->indeg[v] == 0) s->sources[s->n_sources++] = v;
    }
    /* ready bitsets: level sizes ceil(V / 64), ceil(that / 64), ... down to one word */
    s->rq_levels = 0;
    s->rq_words = 0;
    for (int64_t n = V > 1 ? V : 1;;) {
        int64_t words = (n + 63) / 64;
        s->rq_lvl_off[s->rq_levels++] = (int32_t)s->rq_words;
        s->rq_words += words;
        if (words == 1 && s->rq_levels >= 2) break; /* at least two levels: the common case has a fast path */
        n = words;
    }
    s->rq_bits = hsdag_arena_alloc(a, (size_t)D * (size_t)s->rq_words * sizeof *s->rq_bits);
    if (!s->rq_bits) goto oom;
    SIM_ALLOC(s->ev, D + R + 1);
    SIM_ALLOC(s->xq_next, E);
    SIM_ALLOC(s->xq_head, R);
    SIM_ALLOC(s->xq_tail, R);
    SIM_ALLOC(s->res_busy, R);
    SIM_ALLOC(s->dp, V);
    SIM_ALLOC(s->unit, V);
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
        if (s->color_dev[k] < 0)
            s->color_dev[k] = d;
        else if (s->color_dev[k] != d && !s->color_bad[k])
            s->color_bad[k] = 1, viol++;
    }
    return viol;
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

/* ---- sequential: one op at a time in topological order, copies right after the producer ----
 * One pass over the nodes does everything (the reward loop of the learners runs this): the prepass's work,
 * the copy slots of the node's output, its copies, and releasing its inputs. */

#if defined(__GNUC__)
#define SIM_COLD __attribute__((noinline, cold))
#else
#define SIM_COLD
#endif

/* The copy of v's output from d to dw (rare next to the ops: kept out of the hot loop's registers). Returns
 * the
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

static void run_sequential(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
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

/* ---- concurrent: list scheduling per device, FIFO link resources, events by (time, seq) ----
 * One function with every hot array in a local restrict pointer: the run does a few hundred thousand small
 * steps, and through `s->...` each of them reloaded its pointers after every store. The helpers below are
 * always inlined into run_concurrent and take its local context, which the compiler keeps in registers. */

#if defined(__GNUC__)
#define SIM_INLINE static inline __attribute__((always_inline))
#define SIM_NOINLINE __attribute__((noinline))
#else
#define SIM_INLINE static inline
#define SIM_NOINLINE
#endif

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
    trace_xfer(x->s, t0, t1, u, d, d2);
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
static SIM_NOINLINE int run_concurrent(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
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
    int32_t unsup = 0, acc = 0;
    if (!s->all_allowed)
        for (int32_t v = 0; v < V; v++) unsup += !c->allowed[(size_t)v * D + dev[v]];
    for (int32_t d = 0; d < D; d++) acc += !s->is_cpu[d] && ((used >> d) & 1);
    memset(r, 0, sizeof *r);
    r->n_devices = D;
    r->n_unsupported = unsup;
    r->n_color_violations = run_colors(s, dev);
    r->accels_used = acc;
    s->n_tx = 0;
    s->dev = dev;
    if (s->record) memcpy(s->tr_dev, dev, (size_t)V * sizeof *dev);
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

/* The tarnawski run with its own prepass (checks the indices; static memory, unsupported ops, colours, the
 * first
 * and last node of each device). Returns 0 or HSDAG_EINVAL (nothing written to the result). */
static SIM_NOINLINE int run_tarnawski(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const hsdag_graph *g = s->g;
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    const int32_t *restrict dv = dev, *restrict in_off = g->in_off, *restrict in_src = g->in_src,
                            *restrict out_off = g->out_off, *restrict out_dst = g->out_dst;
    const double *restrict node_s = c->node_s, *restrict xby = c->xfer_bytes;
    int32_t *restrict unit = s->unit, *restrict udeg = s->udeg, *restrict queue = s->queue;
    int32_t *restrict blk_start = s->blk_start, *restrict blk_end = s->blk_end,
                      *restrict blk_nodes = s->blk_nodes;
    uint8_t *restrict done = s->done;
    uint32_t *restrict mark = s->mark;
    double *restrict fin = s->fin, *restrict st = s->st, *restrict busy = s->busy;
    for (int32_t d = 0; d < D; d++) {
        s->busy[d] = s->peak[d] = s->excess[d] = s->live[d] = s->static_sum[d] = s->act_peak[d] = 0;
        s->first_on[d] = s->last_on[d] = -1;
    }
    /* the prepass (per-device sums in node order, the current device's in a register while it lasts) */
    uint64_t used = 0;
    {
        const double *restrict stat = c->static_bytes;
        double *restrict ssum = s->static_sum;
        int32_t *restrict first_on = s->first_on, *restrict last_on = s->last_on;
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
    }
    int32_t unsup = 0, acc = 0;
    if (!s->all_allowed)
        for (int32_t v = 0; v < V; v++) unsup += !c->allowed[(size_t)v * D + dv[v]];
    for (int32_t d = 0; d < D; d++) acc += !s->is_cpu[d] && ((used >> d) & 1);
    memset(r, 0, sizeof *r);
    r->n_devices = D;
    r->n_unsupported = unsup;
    r->n_color_violations = run_colors(s, dev);
    r->accels_used = acc;
    s->n_tx = 0;
    s->dev = dev;
    if (s->record) memcpy(s->tr_dev, dev, (size_t)V * sizeof *dev);

    int32_t nb = tw_blocks(s, dev);
    /* members of each block in topological order (counting sort over the counts tw_blocks made) */
    for (int32_t b = 0, o = 0; b < nb; b++) {
        int32_t n = blk_end[b];
        blk_start[b] = blk_end[b] = o;
        o += n;
    }
    /* one pass: place block members and find the ready CPU nodes in index order. In-degrees of units in the
     * contracted graph: a CPU node is its own unit, so each of its in-edges comes from another unit and its
     * in-degree is the node's; tw_blocks counted each block's in-edges from outside it. */
    int32_t qh = 0, qt = 0, blocks = 0, cuts = 0, left = V, cursor = 0;
    const int32_t *restrict indeg = s->indeg;
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
    double mk = 0, xs = 0, xb = 0;
    int64_t nx = 0;
    while (left > 0) {
        if (qh == qt) { /* stalled on a cycle of blocks */
            qh = qt = 0;
            queue[qt++] = V + tw_cut(s, &cursor, &nb);
            cuts++;
        }
        int32_t x = queue[qh++];
        if (x < V) { /* a CPU node */
            double m = 0;
            for (int32_t k = in_off[x], ke = in_off[x + 1]; k < ke; k++)
                if (fin[in_src[k]] > m) m = fin[in_src[k]];
            int32_t d = dv[x];
            double cost = node_s[(size_t)x * D + d], f = m + cost;
            st[x] = m;
            fin[x] = f;
            done[x] = 1;
            left--;
            busy[d] += cost;
            if (f > mk) mk = f;
            for (int32_t k = out_off[x], ke = out_off[x + 1]; k < ke; k++) {
                int32_t uw = unit[out_dst[k]];
                if (uw != x && --udeg[uw] == 0) queue[qt++] = uw;
            }
            continue;
        }
        int32_t b = x - V, a = s->blk_dev[b], bs = blk_start[b], be = blk_end[b];
        uint32_t gen = tw_gen(s);
        double maxp = 0, in_c = 0, out_c = 0, work = 0;
        for (int32_t i = bs; i < be; i++) {
            int32_t v = blk_nodes[i];
            for (int32_t k = in_off[v], ke = in_off[v + 1]; k < ke; k++) {
                int32_t u = in_src[k];
                if (unit[u] == x || mark[u] == gen) continue;
                mark[u] = gen;
                in_c += tw_comm(s, u, a);
                xb += xby[u];
                nx++;
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
                if (--udeg[uw] == 0) queue[qt++] = uw;
            }
            if (leaves) {
                out_c += tw_comm(s, v, a);
                xb += xby[v];
                nx++;
            }
        }
        double f = maxp + in_c + work + out_c, t = maxp + in_c;
        for (int32_t i = bs; i < be; i++) {
            int32_t v = blk_nodes[i];
            st[v] = t;
            t += node_s[(size_t)v * D + a];
            fin[v] = f;
            done[v] = 1;
        }
        left -= be - bs;
        if (in_c > 0) trace_xfer(s, maxp, maxp + in_c, -1 - b, s->host >= 0 ? s->host : a, a);
        if (out_c > 0) trace_xfer(s, f - out_c, f, -1 - b, a, s->host >= 0 ? s->host : a);
        busy[a] += work;
        xs += in_c + out_c;
        blocks++;
        if (f > mk) mk = f;
    }
    r->makespan_s = mk;
    r->xfer_s = xs;
    r->xfer_bytes = xb;
    r->n_xfers = nx;
    r->n_blocks = blocks;
    r->n_cycle_cuts = cuts;
    return 0;
}

int hsdag_sim_run(hsdag_sim *s, const int32_t *device, hsdag_sim_result *out)
{
    int rc;
    if (s->sem == HSDAG_SEM_CONCURRENT || s->sem == HSDAG_SEM_TARNAWSKI) {
        /* each checks the indices and resets in its own prepass */
        rc = s->sem == HSDAG_SEM_CONCURRENT ? run_concurrent(s, device, out) : run_tarnawski(s, device, out);
        if (rc < 0) return rc;
        run_finish(s, out, s->sem == HSDAG_SEM_CONCURRENT);
        return 0;
    }
    rc = run_reset(s, device, out);
    if (rc < 0) return rc;
    run_sequential(s, device, out);
    run_finish(s, out, 1);
    return 0;
}
