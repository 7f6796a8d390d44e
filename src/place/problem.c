/* problem.c - the placement problem (groups, memory, mean costs), running and scoring a method, lower bounds.
 * Not here: any placer's algorithm (the other files of src/place) or the simulator itself (src/sim).
 * Entry points: hsdag_place_problem_create/free, hsdag_place_run/score, hsdag_place_lower_bound,
 *               hsdag_place_single_device, hsdag_place_sequential_cost, place_* helpers (place_int.h). */
#include "place_int.h"

#include <ctype.h>

hsdag_place_opts hsdag_place_opts_default(void)
{
    return (hsdag_place_opts){
        .seed = 1, .time_limit_s = 0, .max_evals = 0, .init = NULL, .device = -1, .budget = 0, .noise = 0};
}

/* ---- colour classes -> groups ---- */

typedef struct color_key {
    int32_t color, node;
} color_key;

static int color_key_cmp(const void *a, const void *b)
{
    const color_key *x = a, *y = b;
    if (x->color != y->color) return x->color < y->color ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static int problem_groups(hsdag_place_problem *p)
{
    const hsdag_graph *g = p->g;
    int32_t n = p->n, nc = 0;
    for (int32_t v = 0; v < n; v++) nc += g->color[v] >= 0;
    color_key *keys = hsdag_malloc((size_t)(nc ? nc : 1) * sizeof *keys);
    int32_t *rep = hsdag_malloc((size_t)(n ? n : 1) * sizeof *rep);
    if (!keys || !rep) {
        hsdag_free(keys);
        hsdag_free(rep);
        return HSDAG_ENOMEM;
    }
    nc = 0;
    for (int32_t v = 0; v < n; v++) {
        rep[v] = v;
        if (g->color[v] >= 0) keys[nc++] = (color_key){g->color[v], v};
    }
    qsort(keys, (size_t)nc, sizeof *keys, color_key_cmp);
    for (int32_t i = 1; i < nc; i++)
        if (keys[i].color == keys[i - 1].color) rep[keys[i].node] = rep[keys[i - 1].node];
    hsdag_free(keys);
    p->n_groups = 0;
    for (int32_t v = 0; v < n; v++) p->group[v] = rep[v] == v ? p->n_groups++ : p->group[rep[v]];
    hsdag_free(rep);
    return 0;
}

/* Every time a placer sees must be a finite number of seconds no solver has trouble scaling: graphs are
 * range-checked at load (graph.h), but a device file can still turn them into 1e21 s (HSDAG_PLACE_MAX_S). */
static int problem_ranges(const hsdag_place_problem *p, hsdag_err *e)
{
    const hsdag_costs *c = p->c;
    for (int32_t v = 0; v < p->n; v++)
        for (int32_t a = 0; a < p->k; a++) {
            double t = place_cost(p, v, a);
            if (!(t >= 0 && t <= HSDAG_PLACE_MAX_S))
                return hsdag_err_set(
                    e, HSDAG_ELIMIT,
                    "place: node '%.100s' takes %.6g s on device '%.40s' (limit %.6g s): check "
                    "the graph's costs and the device set",
                    p->g->name[v], t, p->devs->dev[a].name, HSDAG_PLACE_MAX_S);
            for (int32_t b = 0; b < p->k; b++) {
                t = hsdag_costs_xfer_s(c, v, a, b);
                if (!(t >= 0 && t <= HSDAG_PLACE_MAX_S))
                    return hsdag_err_set(
                        e, HSDAG_ELIMIT,
                        "place: the output of node '%.100s' takes %.6g s from device '%.40s' to "
                        "'%.40s' (limit %.6g s): check the graph's sizes and the device set's links",
                        p->g->name[v], t, p->devs->dev[a].name, p->devs->dev[b].name, HSDAG_PLACE_MAX_S);
            }
        }
    return 0;
}

static int problem_tables(hsdag_place_problem *p)
{
    int32_t n = p->n, k = p->k, ng;
    const hsdag_costs *c = p->c;
    int rc = problem_groups(p);
    if (rc < 0) return rc;
    ng = p->n_groups;
    p->grp_off = hsdag_arena_alloc(p->arena, (size_t)(ng + 1) * sizeof *p->grp_off);
    p->grp_node = hsdag_arena_alloc(p->arena, (size_t)(n ? n : 1) * sizeof *p->grp_node);
    p->grp_mem = hsdag_arena_alloc(p->arena, (size_t)(ng ? ng : 1) * sizeof *p->grp_mem);
    p->group_allowed = hsdag_arena_alloc(p->arena, (size_t)(ng ? ng : 1) * sizeof *p->group_allowed);
    if (!p->grp_off || !p->grp_node || !p->grp_mem || !p->group_allowed) return HSDAG_ENOMEM;
    uint64_t all = k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
    for (int32_t gi = 0; gi < ng; gi++) p->group_allowed[gi] = all;
    for (int32_t v = 0; v < n; v++) {
        int32_t gi = p->group[v];
        p->grp_off[gi + 1]++;
        p->mem[v] = c->static_bytes[v] + c->act_bytes[v];
        if (!(p->mem[v] >= 0)) p->mem[v] = 0; /* NAN or negative sizes never block a device */
        p->grp_mem[gi] += p->mem[v];
        uint64_t m = 0;
        for (int32_t d = 0; d < k; d++)
            if (c->allowed[(size_t)v * (size_t)k + (size_t)d]) m |= (uint64_t)1 << d;
        p->group_allowed[gi] &= m;
    }
    for (int32_t gi = 0; gi < ng; gi++) {
        p->grp_off[gi + 1] += p->grp_off[gi];
        if (!p->group_allowed[gi]) p->group_allowed[gi] = (uint64_t)1 << (p->cpu >= 0 ? p->cpu : 0);
    }
    int32_t *fill = hsdag_calloc((size_t)(ng ? ng : 1), sizeof *fill);
    if (!fill) return HSDAG_ENOMEM;
    for (int32_t v = 0; v < n; v++) p->grp_node[p->grp_off[p->group[v]] + fill[p->group[v]]++] = v;
    hsdag_free(fill);
    hsdag_costs_means(p->mean_cost, p->mean_xfer, c);
    for (int32_t d = 0; d < k; d++)
        p->cap[d] = p->devs->dev[d].mem_capacity > 0 ? p->devs->dev[d].mem_capacity : INFINITY;
    double work[HSDAG_MAX_DEVICES] = {0};
    for (int32_t v = 0; v < n; v++)
        for (int32_t d = 0; d < k; d++) work[d] += place_cost(p, v, d);
    for (int32_t d = 0; d < k; d++) {
        p->dev_rank[d] = 0;
        for (int32_t x = 0; x < k; x++) p->dev_rank[d] += work[x] < work[d] || (work[x] == work[d] && x < d);
    }
    return 0;
}

int hsdag_place_problem_create(hsdag_place_problem **out, const hsdag_graph *g, const hsdag_devices *devs,
                               const hsdag_sim_config *cfg, hsdag_err *e)
{
    *out = NULL;
    hsdag_sim_config dc = hsdag_sim_config_default();
    place_problem_priv *pp = hsdag_calloc(1, sizeof *pp);
    if (!pp) return hsdag_err_set(e, HSDAG_ENOMEM, "place: out of memory");
    hsdag_place_problem *p = &pp->pub;
    int rc = hsdag_sim_create(&p->sim, g, devs, cfg ? cfg : &dc, e);
    if (rc < 0) goto fail;
    p->g = g;
    p->devs = devs;
    p->c = hsdag_sim_costs(p->sim);
    p->sem = hsdag_sim_semantics(p->sim);
    p->n = g->n_nodes;
    p->k = devs->n;
    p->cpu = hsdag_devices_first_of(devs, HSDAG_DEV_CPU);
    p->arena = hsdag_arena_create(0);
    rc = HSDAG_ENOMEM;
    if (!p->arena) goto oom;
    size_t n1 = (size_t)(p->n ? p->n : 1);
    p->mem = hsdag_arena_alloc(p->arena, n1 * sizeof *p->mem);
    p->cap = hsdag_arena_alloc(p->arena, (size_t)p->k * sizeof *p->cap);
    p->group = hsdag_arena_alloc(p->arena, n1 * sizeof *p->group);
    p->mean_cost = hsdag_arena_alloc(p->arena, n1 * sizeof *p->mean_cost);
    p->mean_xfer = hsdag_arena_alloc(p->arena, n1 * sizeof *p->mean_xfer);
    if (!p->mem || !p->cap || !p->group || !p->mean_cost || !p->mean_xfer) goto oom;
    rc = problem_tables(p);
    if (rc < 0) goto oom;
    if ((rc = problem_ranges(p, e)) < 0) goto fail;
    *out = p;
    return 0;
oom:
    hsdag_err_set(e, rc, "place: out of memory");
fail:
    hsdag_place_problem_free(p);
    return rc;
}

void hsdag_place_problem_free(hsdag_place_problem *p)
{
    if (!p) return;
    hsdag_sim_free(p->sim);
    hsdag_arena_free(p->arena);
    hsdag_free(p);
}

/* ---- helpers for the placers ---- */

int32_t place_group_fallback(const hsdag_place_problem *p, int32_t gi)
{
    for (int32_t d = 0; d < p->k; d++)
        if (place_group_ok(p, gi, d)) return d;
    return 0;
}

void place_group_set(const hsdag_place_problem *p, int32_t *device, int32_t gi, int32_t d)
{
    for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) device[p->grp_node[i]] = d;
}

double place_group_cost(const hsdag_place_problem *p, int32_t gi, int32_t d)
{
    double s = 0;
    for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) s += place_cost(p, p->grp_node[i], d);
    return s;
}

void place_memory_used(const hsdag_place_problem *p, const int32_t *device, double *used)
{
    for (int32_t d = 0; d < p->k; d++) used[d] = 0;
    for (int32_t v = 0; v < p->n; v++) used[device[v]] += p->mem[v];
}

place_score place_evaluate(hsdag_place_problem *p, const int32_t *device)
{
    hsdag_sim_result r;
    place_score s = {0, INFINITY, INFINITY};
    if (hsdag_sim_run(p->sim, device, &r) < 0) return s;
    s.feasible = r.feasible;
    s.latency_s = r.makespan_s;
    s.excess =
        r.feasible ? 0 : r.max_excess_bytes + 1e30 * (double)(r.n_unsupported + r.n_color_violations) + 1e29;
    return s;
}

int place_score_better(place_score a, place_score b)
{
    if (a.feasible != b.feasible) return a.feasible;
    if (!a.feasible && a.excess != b.excess) return a.excess < b.excess;
    /* relative tolerance so float noise in the simulator never counts as an improvement */
    return a.latency_s < b.latency_s - 1e-12 * (fabs(b.latency_s) + 1e-30);
}

/* ---- single-device specs ---- */

static int name_ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]) || !a[i]) return 0;
    return b[n] == 0;
}

int32_t hsdag_place_single_device(const hsdag_devices *devs, const char *name)
{
    if (!name || !*name) return -1;
    size_t len = strlen(name);
    if (len > 5 && strcmp(name + len - 5, "-only") == 0) {
        len -= 5;
        for (int k = 0; k < HSDAG_DEV_KIND_COUNT_; k++)
            if (name_ieq(name, hsdag_devkind_name((hsdag_devkind)k), len)) {
                int32_t d = hsdag_devices_first_of(devs, (hsdag_devkind)k);
                if (d >= 0) return d;
            }
        for (int32_t d = 0; d < devs->n; d++)
            if (name_ieq(name, devs->dev[d].name, len)) return d;
        return -1;
    }
    return hsdag_devices_find(devs, name);
}

/* ---- scoring ---- */

int hsdag_place_lower_bound(hsdag_place_problem *p, hsdag_bound *out, hsdag_err *e)
{
    place_problem_priv *pp = (place_problem_priv *)p;
    if (!pp->bound_ready) {
        int rc = hsdag_bound_compute(&pp->bound, p->c, p->sem, hsdag_place_bound_exact, NULL, e);
        if (rc < 0) return rc;
        pp->bound_ready = 1;
    }
    if (out) *out = pp->bound;
    return 0;
}

/* Simulates device and fills r's scoring fields (latency, feasibility, bound, gap, sim); leaves the rest. */
static int place_score_fields(hsdag_place_problem *p, const int32_t *device, hsdag_place_result *r,
                              hsdag_err *e)
{
    for (int32_t v = 0; v < p->n; v++)
        if (device[v] < 0 || device[v] >= p->k)
            return hsdag_err_set(e, HSDAG_EINVAL, "place: node '%s': device index %d out of range",
                                 p->g->name[v], (int)device[v]);
    hsdag_bound b;
    int rc = hsdag_place_lower_bound(p, &b, e);
    if (rc < 0) return rc;
    rc = hsdag_sim_run(p->sim, device, &r->sim);
    if (rc < 0) return hsdag_err_set(e, rc, "place: simulator rejected the placement");
    r->latency_s = r->sim.makespan_s;
    r->feasible = r->sim.feasible;
    r->lower_bound_s = b.lower_s;
    r->lower_bound_rule = b.rule;
    if (b.lower_s > 0)
        r->gap = (r->latency_s - b.lower_s) / b.lower_s;
    else
        r->gap = r->latency_s > 0 ? NAN : 0.0;
    return 0;
}

int hsdag_place_score(hsdag_place_problem *p, const int32_t *device, hsdag_place_result *r, hsdag_err *e)
{
    memset(r, 0, sizeof *r);
    r->rep.bound_s = r->rep.objective_s = NAN;
    return place_score_fields(p, device, r, e);
}

int hsdag_place_run(hsdag_place_problem *p, const char *method, const hsdag_place_opts *o, int32_t *device,
                    hsdag_place_result *r, hsdag_err *e)
{
    hsdag_place_opts opts = o ? *o : hsdag_place_opts_default();
    memset(r, 0, sizeof *r);
    r->method = method;
    r->rep.bound_s = r->rep.objective_s = NAN;
    r->rep.best_episode = -1;
    const hsdag_place_method *m = hsdag_place_method_find(method);
    hsdag_place_fn fn = m ? m->fn : NULL;
    if (!fn) {
        int32_t d = hsdag_place_single_device(p->devs, method);
        if (d < 0) {
            hsdag_buf b = {0};
            int32_t cnt;
            const hsdag_place_method *all = hsdag_place_methods(&cnt);
            for (int32_t i = 0; i < cnt; i++) hsdag_buf_printf(&b, "%s%s", i ? ", " : "", all[i].name);
            hsdag_err_set(e, HSDAG_EINVAL,
                          "place: unknown method '%s' (methods: %s; or cpu-only, gpu-only, a device name)",
                          method, b.data ? b.data : "");
            hsdag_buf_free(&b);
            return HSDAG_EINVAL;
        }
        opts.device = d;
        fn = place_single;
    }
    for (int32_t v = 0; v < p->n; v++) device[v] = -1;
    double t0 = hsdag_now();
    int rc = fn(p, &opts, device, &r->rep, e);
    r->place_s = hsdag_now() - t0;
    if (rc < 0) return rc;
    for (int32_t v = 0; v < p->n; v++)
        if (device[v] < 0 || device[v] >= p->k)
            return hsdag_err_set(e, HSDAG_ESOLVER, "place: %s: node '%s' left without a valid device", method,
                                 p->g->name[v]);
    return place_score_fields(p, device, r, e);
}

/* ---- the sequential formula ---- */

double hsdag_place_sequential_cost(const hsdag_costs *c, const int32_t *device)
{
    const hsdag_graph *g = c->g;
    int32_t k = c->n_devices;
    double t = 0;
    for (int32_t u = 0; u < g->n_nodes; u++) {
        int32_t a = device[u];
        t += c->node_s[(size_t)u * (size_t)k + (size_t)a];
        uint64_t seen = 0;
        for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
            int32_t b = device[g->out_dst[j]];
            if (b == a || ((seen >> b) & 1u)) continue;
            seen |= (uint64_t)1 << b;
            t += hsdag_costs_xfer_s(c, u, a, b);
        }
    }
    return t;
}
