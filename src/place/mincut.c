/* mincut.c - the exact two-device optimum under sequential semantics as an s-t minimum cut (own Dinic
 * max-flow).
 * Not here: memory capacities (a cut cannot express them: the placer reports an overflow, the ILP handles
 * them)
 *           and any other semantics (the cut is then only a heuristic).
 * Entry points: hsdag_place_mincut_solve, hsdag_place_bound_exact, hsdag_place_bound_memory, place_mincut.
 *
 * The network (source side = device 0, sink side = device 1):
 *   s -> v  capacity node_s[v, 1]  (cut when v is on device 1)   v -> t  capacity node_s[v, 0];
 *   an op v may not run on device 1: s -> v infinite; not on device 0: v -> t infinite;
 *   a tensor u with one consumer w: u -> w capacity xfer(u, 0, 1) and w -> u capacity xfer(u, 1, 0);
 *   a tensor u with several consumers pays once per direction through two auxiliary nodes:
 *     u -> a0 capacity xfer(u, 0, 1), a0 -> w infinite for every consumer w  (any consumer on 1 forces a0 to
 * 1)
 *     b1 -> u capacity xfer(u, 1, 0), w -> b1 infinite for every consumer w  (any consumer on 0 forces b1 to
 * 0);
 *   members of a colour class are chained with infinite edges both ways.
 * For every placement the cheapest cut consistent with it costs exactly its sequential latency, so the
 * minimum
 * cut is the optimum. */
#include "place_int.h"

/* ---- Dinic on a forward-star graph; edge e and e ^ 1 are a pair ---- */
typedef struct flownet {
    int32_t nv, ne, cap_e;
    int32_t *head, *nxt, *to, *level, *it, *queue, *stack;
    double *cap;
} flownet;

static int fn_init(flownet *f, int32_t nv, int32_t max_edges)
{
    memset(f, 0, sizeof *f);
    f->nv = nv;
    f->cap_e = 2 * max_edges;
    f->head = hsdag_malloc((size_t)nv * sizeof *f->head);
    f->level = hsdag_malloc((size_t)nv * sizeof *f->level);
    f->it = hsdag_malloc((size_t)nv * sizeof *f->it);
    f->queue = hsdag_malloc((size_t)nv * sizeof *f->queue);
    f->stack = hsdag_malloc((size_t)nv * sizeof *f->stack);
    f->nxt = hsdag_malloc((size_t)f->cap_e * sizeof *f->nxt);
    f->to = hsdag_malloc((size_t)f->cap_e * sizeof *f->to);
    f->cap = hsdag_malloc((size_t)f->cap_e * sizeof *f->cap);
    if (!f->head || !f->level || !f->it || !f->queue || !f->stack || !f->nxt || !f->to || !f->cap)
        return HSDAG_ENOMEM;
    for (int32_t i = 0; i < nv; i++) f->head[i] = -1;
    return 0;
}

static void fn_free(flownet *f)
{
    hsdag_free(f->head);
    hsdag_free(f->level);
    hsdag_free(f->it);
    hsdag_free(f->queue);
    hsdag_free(f->stack);
    hsdag_free(f->nxt);
    hsdag_free(f->to);
    hsdag_free(f->cap);
}

static void fn_add(flownet *f, int32_t u, int32_t v, double c)
{
    if (!(c > 0)) return;
    HSDAG_ASSERT(f->ne + 2 <= f->cap_e);
    int32_t e = f->ne;
    f->to[e] = v, f->cap[e] = c, f->nxt[e] = f->head[u], f->head[u] = e;
    f->to[e + 1] = u, f->cap[e + 1] = 0, f->nxt[e + 1] = f->head[v], f->head[v] = e + 1;
    f->ne += 2;
}

/* Levels by breadth-first search from s over edges with residual capacity; 1 if t is reached. With to_t, the
 * search stops at t's level: the nodes beyond it are on no path of the level graph, so the phase's augmenting
 * paths are the same (Dinic's usual cut-off; at 10^6 ops the full search was a tenth of every command). Without
 * it (the final search), level >= 0 marks every node reachable from s. */
static int fn_bfs(flownet *f, int32_t s, int32_t t, double eps, int to_t)
{
    for (int32_t i = 0; i < f->nv; i++) f->level[i] = -1;
    int32_t qh = 0, qt = 0;
    f->level[s] = 0;
    f->queue[qt++] = s;
    while (qh < qt) {
        int32_t u = f->queue[qh++];
        if (to_t && f->level[t] >= 0 && f->level[u] >= f->level[t]) break;
        for (int32_t e = f->head[u]; e >= 0; e = f->nxt[e])
            if (f->cap[e] > eps && f->level[f->to[e]] < 0) {
                f->level[f->to[e]] = f->level[u] + 1;
                f->queue[qt++] = f->to[e];
            }
    }
    return f->level[t] >= 0;
}

static double fn_maxflow(flownet *f, int32_t s, int32_t t, double eps)
{
    double total = 0;
    while (fn_bfs(f, s, t, eps, 1)) {
        for (int32_t i = 0; i < f->nv; i++) f->it[i] = f->head[i];
        int32_t top = 0, u = s;
        for (;;) {
            if (u == t) {
                double push = INFINITY;
                for (int32_t i = 0; i < top; i++) push = fmin(push, f->cap[f->stack[i]]);
                for (int32_t i = 0; i < top; i++) {
                    f->cap[f->stack[i]] -= push;
                    f->cap[f->stack[i] ^ 1] += push;
                }
                total += push;
                top = 0;
                u = s;
                continue;
            }
            int32_t e = f->it[u];
            while (e >= 0 && !(f->cap[e] > eps && f->level[f->to[e]] == f->level[u] + 1)) e = f->nxt[e];
            f->it[u] = e;
            if (e >= 0) {
                f->stack[top++] = e;
                u = f->to[e];
                continue;
            }
            f->level[u] = -1; /* dead end for this phase */
            if (top == 0) break;
            int32_t back = f->stack[--top];
            u = f->to[back ^ 1];
            f->it[u] = f->nxt[f->it[u]];
        }
    }
    return total;
}

/* ---- colour classes as a "next member" chain ---- */
typedef struct mc_key {
    int32_t color, node;
} mc_key;

static int mc_key_cmp(const void *a, const void *b)
{
    const mc_key *x = a, *y = b;
    if (x->color != y->color) return x->color < y->color ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* The sum of every finite capacity of the network: both costs of every node (with pen[2 v + d] when pen is
 * not NULL) and both transfers of every tensor; 4x it stands for infinity. */
static double mc_finite(const hsdag_costs *c, const double *pen)
{
    double finite = 0;
    for (int32_t v = 0; v < c->n_nodes; v++) {
        finite += c->node_s[2 * (size_t)v] + c->node_s[2 * (size_t)v + 1];
        finite += hsdag_costs_xfer_s(c, v, 0, 1) + hsdag_costs_xfer_s(c, v, 1, 0);
        if (pen) finite += pen[2 * (size_t)v] + pen[2 * (size_t)v + 1];
    }
    return finite;
}

/* The minimum cut with pen[2 v + d] (NULL: none) added to node v's cost on device d: device[] gets the
 * cheapest placement of latency + penalties, opt_s (may be NULL) its latency alone. */
static int mc_solve(const hsdag_costs *c, const double *pen, int32_t *device, double *opt_s, hsdag_err *e)
{
    const hsdag_graph *g = c->g;
    if (c->n_devices != 2)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED,
                             "mincut: needs exactly two devices (this set has %d); use ilp",
                             (int)c->n_devices);
    int32_t n = g->n_nodes, s = n, t = n + 1, naux = 0;
    for (int32_t u = 0; u < n; u++) naux += (g->out_off[u + 1] - g->out_off[u] >= 2) ? 2 : 0;
    int32_t nv = n + 2 + naux;
    int32_t max_edges = 2 * n + 2 * g->n_edges + naux + 2 * n;
    flownet f;
    mc_key *keys = NULL;
    int32_t *dev = device;
    int rc = fn_init(&f, nv, max_edges);
    if (rc < 0) goto oom;
    if (!dev && !(dev = hsdag_malloc((size_t)(n ? n : 1) * sizeof *dev))) goto oom;
    /* infinity above every cut of finite edges, penalties included; the flow tolerance from the costs alone */
    const double finite = mc_finite(c, NULL), big = 4 * (pen ? mc_finite(c, pen) : finite) + 1.0,
                 eps = 1e-13 * (finite + 1e-300);
    for (int32_t v = 0; v < n; v++) {
        double p0 = pen ? pen[2 * (size_t)v] : 0, p1 = pen ? pen[2 * (size_t)v + 1] : 0;
        fn_add(&f, s, v, c->allowed[2 * (size_t)v + 1] ? c->node_s[2 * (size_t)v + 1] + p1 : big);
        fn_add(&f, v, t, c->allowed[2 * (size_t)v] ? c->node_s[2 * (size_t)v] + p0 : big);
    }
    int32_t aux = n + 2;
    for (int32_t u = 0; u < n; u++) {
        int32_t deg = g->out_off[u + 1] - g->out_off[u];
        double x01 = hsdag_costs_xfer_s(c, u, 0, 1), x10 = hsdag_costs_xfer_s(c, u, 1, 0);
        if (deg == 1) {
            int32_t w = g->out_dst[g->out_off[u]];
            fn_add(&f, u, w, x01);
            fn_add(&f, w, u, x10);
        } else if (deg >= 2) {
            int32_t a0 = aux++, b1 = aux++;
            fn_add(&f, u, a0, x01);
            fn_add(&f, b1, u, x10);
            for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
                if (x01 > 0) fn_add(&f, a0, g->out_dst[j], big);
                if (x10 > 0) fn_add(&f, g->out_dst[j], b1, big);
            }
        }
    }
    int32_t nc = 0;
    for (int32_t v = 0; v < n; v++) nc += g->color[v] >= 0;
    if (nc > 1) {
        if (!(keys = hsdag_malloc((size_t)nc * sizeof *keys))) goto oom;
        nc = 0;
        for (int32_t v = 0; v < n; v++)
            if (g->color[v] >= 0) keys[nc++] = (mc_key){g->color[v], v};
        qsort(keys, (size_t)nc, sizeof *keys, mc_key_cmp);
        for (int32_t i = 1; i < nc; i++)
            if (keys[i].color == keys[i - 1].color) {
                fn_add(&f, keys[i - 1].node, keys[i].node, big);
                fn_add(&f, keys[i].node, keys[i - 1].node, big);
            }
    }
    double flow = fn_maxflow(&f, s, t, eps);
    if (flow >= big) {
        rc = hsdag_err_set(e, HSDAG_EINFEASIBLE,
                           "mincut: no placement keeps every colour class on a device all "
                           "of its ops may run on");
        goto done;
    }
    /* source side = nodes still reachable from s in the residual network (fn_bfs leaves their level >= 0) */
    fn_bfs(&f, s, t, eps, 0);
    for (int32_t v = 0; v < n; v++) dev[v] = f.level[v] >= 0 ? 0 : 1;
    if (opt_s) *opt_s = hsdag_place_sequential_cost(c, dev);
    rc = 0;
    goto done;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "mincut: out of memory");
done:
    if (dev != device) hsdag_free(dev);
    hsdag_free(keys);
    fn_free(&f);
    return rc;
}

int hsdag_place_mincut_solve(const hsdag_costs *c, int32_t *device, double *opt_s, hsdag_err *e)
{
    return mc_solve(c, NULL, device, opt_s, e);
}

/* One device's Lagrangian bound: max over lambda >= 0 of min over placements of latency + lambda (static
 * bytes on d - cap), by bisection on the subgradient (the minimiser's static bytes on d minus cap). pen and dev
 * are scratch of 2 n and n. */
static int mc_memory_one(const hsdag_costs *c, int32_t d, double cap, double *pen, int32_t *dev, double *best,
                         hsdag_err *e)
{
    int32_t n = c->n_nodes;
    double finite = mc_finite(c, NULL), smin = INFINITY, lo = 0, hi;
    for (int32_t v = 0; v < n; v++)
        if (c->static_bytes[v] > 0 && c->static_bytes[v] < smin) smin = c->static_bytes[v];
    if (!isfinite(smin)) return 0;
    hi = 2 * (finite + 1e-300) / smin; /* past it no static byte is worth keeping on d */
    for (int it = 0; it < 60; it++) {
        double lam = it == 0 ? hi : 0.5 * (lo + hi), used = 0, t;
        for (int32_t v = 0; v < n; v++) {
            pen[2 * (size_t)v + d] = lam * c->static_bytes[v];
            pen[2 * (size_t)v + 1 - d] = 0;
        }
        int rc = mc_solve(c, pen, dev, &t, e);
        if (rc < 0) return rc == HSDAG_EINFEASIBLE ? 0 : rc;
        for (int32_t v = 0; v < n; v++) used += dev[v] == d ? c->static_bytes[v] : 0;
        double val = t + lam * (used - cap);
        if (it == 0 && used > cap) return 0; /* the forced ops alone overflow d: no feasible placement */
        if (it > 0 && val > *best) *best = val;
        if (it > 0 && used > cap)
            lo = lam;
        else if (it > 0)
            hi = lam;
    }
    return 0;
}

int hsdag_place_bound_memory(double *bound_s, const hsdag_costs *c, hsdag_semantics sem, hsdag_err *e)
{
    *bound_s = NAN;
    if (sem != HSDAG_SEM_SEQUENTIAL || c->n_devices != 2)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "memory bound: only sequential semantics on two devices");
    if (c->n_nodes >
        HSDAG_PLACE_MEMORY_BOUND_MAX_NODES) /* 60 cuts: 1.7 CPU s at 10,000 ops, about 90 at 100,000 */
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "memory bound: graphs of at most %d ops",
                             HSDAG_PLACE_MEMORY_BOUND_MAX_NODES);
    int32_t n = c->n_nodes;
    hsdag_err le = {0};
    double *pen = hsdag_alloc_n(2 * (size_t)n + 1, sizeof *pen, "memory bound", &le), best = -INFINITY;
    int32_t *dev = hsdag_alloc_n((size_t)n + 1, sizeof *dev, "memory bound", &le);
    int rc = le.status < 0 ? hsdag_err_set(e, le.status, "%s", le.msg) : 0;
    for (int32_t d = 0; d < 2 && rc == 0; d++) {
        double cap = c->devs->dev[d].mem_capacity, all = 0;
        for (int32_t v = 0; v < n; v++) all += c->allowed[2 * (size_t)v + d] ? c->static_bytes[v] : 0;
        if (cap > 0 && all > cap) rc = mc_memory_one(c, d, cap, pen, dev, &best, e);
    }
    if (rc == 0 && isfinite(best)) *bound_s = best;
    hsdag_free(pen);
    hsdag_free(dev);
    return rc;
}

int hsdag_place_bound_exact(void *ctx, double *opt_s, const hsdag_costs *c, hsdag_semantics sem, hsdag_err *e)
{
    (void)ctx;
    if (sem != HSDAG_SEM_SEQUENTIAL || c->n_devices != 2)
        return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "exact bound: only sequential semantics on two devices");
    int rc = hsdag_place_mincut_solve(c, NULL, opt_s, e);
    if (rc == HSDAG_EINFEASIBLE) return hsdag_err_set(e, HSDAG_EUNSUPPORTED, "exact bound: no feasible cut");
    return rc;
}

int place_mincut(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                 hsdag_err *e)
{
    (void)o;
    double opt;
    int rc = hsdag_place_mincut_solve(p->c, device, &opt, e);
    if (rc < 0) return rc;
    double used[HSDAG_MAX_DEVICES];
    place_memory_used(p, device, used);
    int over = -1;
    for (int32_t d = 0; d < p->k && over < 0; d++)
        if (used[d] > p->cap[d]) over = d;
    r->objective_s = opt;
    if (p->sem == HSDAG_SEM_SEQUENTIAL) r->bound_s = opt;
    r->optimal = p->sem == HSDAG_SEM_SEQUENTIAL && over < 0;
    if (over >= 0)
        snprintf(
            r->note, sizeof r->note,
            "memory: the optimal cut puts %.0f bytes on %s (capacity %.0f); a cut cannot express capacities, "
            "use ilp",
            used[over], p->devs->dev[over].name, p->cap[over]);
    else if (p->sem != HSDAG_SEM_SEQUENTIAL)
        snprintf(r->note, sizeof r->note, "optimal for sequential semantics only; here (%s) a heuristic",
                 hsdag_semantics_name(p->sem));
    return 0;
}
