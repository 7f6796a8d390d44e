/* sim.c - the latency simulator's set-up (priorities, colour classes, every buffer a run needs), the
 *   per-run setup the three semantics share, and the dispatch of a run to its semantics.
 * Not here: the semantics themselves (sim_sequential.c, sim_concurrent.c, sim_tarnawski.c), the cost model
 *   (costs.c), bounds (bound.c), trace output (trace.c). A run allocates nothing.
 * Entry points: hsdag_sim_config_default, hsdag_sim_create/run/free/costs/semantics/set_semantics,
 *   hsdag_priority_name/parse, sim_run_reset/bind/tally/finish (sim_internal.h).
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

static const char *const priority_names[] = {"rank", "topo"};

const char *hsdag_priority_name(hsdag_priority p)
{
    return p >= 0 && p <= HSDAG_PRIO_TOPO ? priority_names[p] : NULL;
}

int hsdag_priority_parse(hsdag_priority *out, const char *s, hsdag_err *e)
{
    for (int i = 0; s && i <= HSDAG_PRIO_TOPO; i++)
        if (strcmp(s, priority_names[i]) == 0) {
            *out = (hsdag_priority)i;
            return 0;
        }
    return hsdag_err_set(e, HSDAG_EINVAL, "priority '%.40s': not one of the accepted names", s ? s : "");
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

/* Result arrays, memory reference counts and the packed per-node records every semantics reads. */
static int sim_alloc_common(hsdag_sim *s)
{
    hsdag_arena *a = s->arena;
    const hsdag_graph *g = s->g;
    const int32_t V = s->V, E = s->E, D = s->D;
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
    return 0;
oom:
    return -1;
}

/* The concurrent run's in-degrees, sources, ready bitsets, events and link queues. */
static int sim_alloc_concurrent(hsdag_sim *s)
{
    hsdag_arena *a = s->arena;
    const hsdag_graph *g = s->g;
    const int32_t V = s->V, E = s->E, D = s->D, R = s->R;
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
    return 0;
oom:
    return -1;
}

/* The tarnawski run's units and blocks, and the trace records (record_trace). */
static int sim_alloc_tarnawski_trace(hsdag_sim *s)
{
    hsdag_arena *a = s->arena;
    const int32_t V = s->V, E = s->E;
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
    return 0;
oom:
    return -1;
}

/* Device facts: CPUs, the host, link resources, whether every op may run everywhere; colour classes. */
static int sim_devices_colors(hsdag_sim *s)
{
    hsdag_arena *a = s->arena;
    const hsdag_devices *devs = s->devs;
    const int32_t V = s->V, D = s->D;
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
    return 0;
oom:
    return -1;
}

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
    s->V = g->n_nodes;
    s->E = g->n_edges;
    s->D = devs->n;
    s->R = devs->n_resources;
    if (sim_alloc_common(s) < 0 || sim_alloc_concurrent(s) < 0 || sim_alloc_tarnawski_trace(s) < 0 ||
        sim_devices_colors(s) < 0 || sim_priorities(s) < 0) {
        int32_t V = s->V;
        hsdag_sim_free(s);
        return hsdag_err_set(e, HSDAG_ENOMEM, "simulate: out of memory for %d nodes", (int)V);
    }
    *out = s;
    return 0;
}

/* ---- the per-run setup every semantics shares (sim_internal.h) ---- */

/* The result cleared and the placement bound to the run (for the trace): the first thing every run does
 * after checking the indices. */
void sim_run_bind(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    memset(r, 0, sizeof *r);
    r->n_devices = s->D;
    s->n_tx = 0;
    s->dev = dev;
    if (s->record) memcpy(s->tr_dev, dev, (size_t)s->V * sizeof *dev);
}

/* Resets the per-device state and checks every device index (the sequential run; the others fuse the check
 * into their prepass). Returns 0 or HSDAG_EINVAL. */
int sim_run_reset(hsdag_sim *s, const int32_t *dev, hsdag_sim_result *r)
{
    const int32_t V = s->V, D = s->D;
    uint32_t mx = 0; /* the largest index as unsigned: negative ones become huge */
    for (int32_t v = 0; v < V; v++) mx = (uint32_t)dev[v] > mx ? (uint32_t)dev[v] : mx;
    if (V > 0 && mx >= (uint32_t)D) return HSDAG_EINVAL;
    for (int32_t d = 0; d < D; d++) {
        s->busy[d] = s->peak[d] = s->excess[d] = s->live[d] = s->static_sum[d] = s->act_peak[d] = 0;
        s->first_on[d] = s->last_on[d] = -1;
    }
    sim_run_bind(s, dev, r);
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

/* What every semantics counts the same way: ops on devices that may not run them, colour classes split, and
 * accelerators holding ops (used: the bit set of devices the placement uses). */
void sim_run_tally(hsdag_sim *s, const int32_t *dev, uint64_t used, hsdag_sim_result *r)
{
    const hsdag_costs *c = s->costs;
    const int32_t V = s->V, D = s->D;
    int32_t unsup = 0, acc = 0;
    if (!s->all_allowed)
        for (int32_t v = 0; v < V; v++) unsup += !c->allowed[(size_t)v * D + dev[v]];
    for (int32_t d = 0; d < D; d++) acc += !s->is_cpu[d] && ((used >> d) & 1);
    r->n_unsupported = unsup;
    r->n_color_violations = run_colors(s, dev);
    r->accels_used = acc;
}

/* Peaks, excess over capacity and the verdict, after the semantics' own run. */
void sim_run_finish(hsdag_sim *s, hsdag_sim_result *r, int with_acts)
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

int hsdag_sim_run(hsdag_sim *s, const int32_t *device, hsdag_sim_result *out)
{
    int rc;
    if (s->sem == HSDAG_SEM_CONCURRENT || s->sem == HSDAG_SEM_TARNAWSKI) {
        /* each checks the indices and resets in its own prepass */
        rc = s->sem == HSDAG_SEM_CONCURRENT ? sim_run_concurrent(s, device, out)
                                            : sim_run_tarnawski(s, device, out);
        if (rc < 0) return rc;
        sim_run_finish(s, out, s->sem == HSDAG_SEM_CONCURRENT);
        return 0;
    }
    rc = sim_run_reset(s, device, out);
    if (rc < 0) return rc;
    sim_run_sequential(s, device, out);
    sim_run_finish(s, out, 1);
    return 0;
}
