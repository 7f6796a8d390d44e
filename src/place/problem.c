/* problem.c - the placement problem (groups, memory, mean costs), running and scoring a method, lower bounds.
 * Not here: any placer's algorithm (the other files of src/place) or the simulator itself (src/sim).
 * Entry points: hsdag_place_problem_create/free, hsdag_place_run/score/lower_bound/caps_bind,
 *               hsdag_place_single_device, hsdag_place_sequential_cost, place_* helpers (place_int.h). */
#include "place_int.h"

#include <ctype.h>

hsdag_place_opts hsdag_place_opts_default(void)
{
    return (hsdag_place_opts){.seed = 1,
                              .time_limit_s = 0,
                              .max_evals = 0,
                              .init = NULL,
                              .device = -1,
                              .budget = 0,
                              .noise = 0,
                              .time_limit_cpu = 0,
                              .ilp_iterations = 0};
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

/* ---- blocks: strongly connected components of the graph of groups ---- */

/* Tarjan's algorithm, iterative. adj is the group graph in CSR (off/dst, duplicates allowed); comp[gi]
 * receives a component number in completion order. Scratch: idx, low, stk, cs_node, cs_edge [ng]. */
static int32_t scc_tarjan(int32_t ng, const int32_t *off, const int32_t *dst, int32_t *comp, int32_t *idx,
                          int32_t *low, int32_t *stk, int32_t *cs_node, int32_t *cs_edge)
{
    int32_t next = 0, sp = 0, nc = 0;
    for (int32_t v = 0; v < ng; v++) idx[v] = -1, comp[v] = -1;
    for (int32_t r = 0; r < ng; r++) {
        if (idx[r] >= 0) continue;
        int32_t cp = 0;
        cs_node[cp] = r, cs_edge[cp++] = off[r];
        idx[r] = low[r] = next++;
        stk[sp++] = r;
        while (cp > 0) {
            int32_t v = cs_node[cp - 1];
            if (cs_edge[cp - 1] < off[v + 1]) {
                int32_t w = dst[cs_edge[cp - 1]++];
                if (idx[w] < 0) {
                    idx[w] = low[w] = next++;
                    stk[sp++] = w;
                    cs_node[cp] = w, cs_edge[cp++] = off[w];
                } else if (comp[w] < 0 && idx[w] < low[v]) {
                    low[v] = idx[w]; /* w is on the stack */
                }
                continue;
            }
            cp--;
            if (cp > 0 && low[v] < low[cs_node[cp - 1]]) low[cs_node[cp - 1]] = low[v];
            if (low[v] == idx[v]) {
                int32_t w;
                do {
                    w = stk[--sp];
                    comp[w] = nc;
                } while (w != v);
                nc++;
            }
        }
    }
    return nc;
}

/* The contiguity graph of the groups (what "contiguous" means for a split, docs/placers.md): an edge between
 * two forward nodes (not HSDAG_NF_BACKWARD) links their groups; a backward edge touching a group that has
 * no forward node links the two groups the other way round (the backward pass mirrors the forward one:
 * Tarnawski et al. give such a group an artificial forward node with mirrored edges). Self-loops dropped.
 * ce_src/ce_dst get the groups, ce_seq the edge's edge_seq; returns the count, or -1 on ENOMEM. */
static int32_t problem_contig_edges(const hsdag_place_problem *p, int32_t **src, int32_t **dst, int32_t **seq)
{
    const hsdag_graph *g = p->g;
    int32_t m = g->n_edges, ne = 0;
    uint8_t *has_fwd = hsdag_calloc((size_t)(p->n_groups ? p->n_groups : 1), 1);
    *src = hsdag_malloc((size_t)(m ? m : 1) * sizeof **src);
    *dst = hsdag_malloc((size_t)(m ? m : 1) * sizeof **dst);
    *seq = hsdag_malloc((size_t)(m ? m : 1) * sizeof **seq);
    if (!has_fwd || !*src || !*dst || !*seq) {
        hsdag_free(has_fwd);
        return -1;
    }
    for (int32_t v = 0; v < p->n; v++)
        if (!(g->flags[v] & HSDAG_NF_BACKWARD)) has_fwd[p->group[v]] = 1;
    for (int32_t k = 0; k < m; k++) {
        int32_t u = g->edge_src[k], w = g->out_dst[k], a = p->group[u], b = p->group[w];
        int bu = (g->flags[u] & HSDAG_NF_BACKWARD) != 0, bw = (g->flags[w] & HSDAG_NF_BACKWARD) != 0;
        if (a == b) continue;
        if (!bu && !bw) {
            (*src)[ne] = a, (*dst)[ne] = b;
        } else if (bu && bw && (!has_fwd[a] || !has_fwd[b])) {
            (*src)[ne] = b, (*dst)[ne] = a;
        } else {
            continue;
        }
        (*seq)[ne++] = g->edge_seq[k];
    }
    hsdag_free(has_fwd);
    return ne;
}

/* The depth-first topological order of the blocks (see blk_order in place.h) over the ne contiguity edges. */
static int problem_block_order(hsdag_place_problem *p, int32_t ne, const int32_t *csrc, const int32_t *cdst,
                               const int32_t *cseq)
{
    int32_t nb = p->n_blocks, m = p->g->n_edges;
    int32_t *by_seq = hsdag_malloc((size_t)(m ? m : 1) * sizeof *by_seq);
    int32_t *eoff = hsdag_calloc((size_t)nb + 1, sizeof *eoff);
    int32_t *elist = hsdag_malloc((size_t)(ne ? ne : 1) * sizeof *elist);
    int32_t *indeg = hsdag_calloc((size_t)(nb ? nb : 1), sizeof *indeg);
    int32_t *stk = hsdag_malloc((size_t)(nb ? nb : 1) * sizeof *stk);
    int rc = (!by_seq || !eoff || !elist || !indeg || !stk) ? HSDAG_ENOMEM : 0;
    if (rc == 0) {
        for (int32_t k = 0; k < m; k++) by_seq[k] = -1;
        for (int32_t i = 0; i < ne; i++) by_seq[cseq[i]] = i; /* edge_seq is a permutation */
        for (int32_t i = 0; i < ne; i++) {
            int32_t a = p->block[csrc[i]], b = p->block[cdst[i]];
            if (a != b) eoff[a + 1]++, indeg[b]++;
        }
        for (int32_t b = 0; b < nb; b++) eoff[b + 1] += eoff[b];
        for (int32_t b = 0; b < nb; b++) stk[b] = eoff[b]; /* fill cursors for now */
        for (int32_t k = 0; k < m; k++) {                  /* in edge_seq order */
            int32_t i = by_seq[k];
            if (i < 0) continue;
            int32_t a = p->block[csrc[i]], b = p->block[cdst[i]];
            if (a != b) elist[stk[a]++] = b;
        }
        int32_t sp = 0, no = 0;
        for (int32_t b = 0; b < nb; b++)
            if (indeg[b] == 0) stk[sp++] = b;
        while (sp > 0) {
            int32_t b = stk[--sp];
            p->blk_order[no++] = b;
            for (int32_t i = eoff[b]; i < eoff[b + 1]; i++)
                if (--indeg[elist[i]] == 0) stk[sp++] = elist[i];
        }
        HSDAG_ASSERT(no == nb); /* the block graph is acyclic by construction */
    }
    hsdag_free(by_seq);
    hsdag_free(eoff);
    hsdag_free(elist);
    hsdag_free(indeg);
    hsdag_free(stk);
    return rc;
}

static int i32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* blk_pred / blk_succ from the contiguity edges (deduplicated, ascending). */
static int problem_block_adjacency(hsdag_place_problem *p, int32_t ne, const int32_t *csrc,
                                   const int32_t *cdst)
{
    int32_t nb = p->n_blocks;
    for (int dir = 0; dir < 2; dir++) {
        int32_t *off = hsdag_arena_alloc(p->arena, ((size_t)nb + 1) * sizeof *off);
        int32_t *lst = hsdag_arena_alloc(p->arena, (size_t)(ne > 0 ? ne : 1) * sizeof *lst);
        int32_t *fill = hsdag_malloc((size_t)(nb ? nb : 1) * sizeof *fill);
        if (!off || !lst || !fill) {
            hsdag_free(fill);
            return HSDAG_ENOMEM;
        }
        for (int32_t i = 0; i < ne; i++) {
            int32_t a = p->block[csrc[i]], b = p->block[cdst[i]];
            if (a != b) off[(dir ? a : b) + 1]++;
        }
        for (int32_t b = 0; b < nb; b++) off[b + 1] += off[b];
        for (int32_t b = 0; b < nb; b++) fill[b] = off[b];
        for (int32_t i = 0; i < ne; i++) {
            int32_t a = p->block[csrc[i]], b = p->block[cdst[i]];
            if (a != b) lst[fill[dir ? a : b]++] = dir ? b : a;
        }
        /* sort and deduplicate each list in place, compacting the CSR */
        int32_t w = 0;
        for (int32_t b = 0; b < nb; b++) {
            int32_t lo = off[b], hi = fill[b], start = w;
            qsort(lst + lo, (size_t)(hi - lo), sizeof *lst, i32_cmp);
            for (int32_t i = lo; i < hi; i++)
                if (i == lo || lst[i] != lst[i - 1]) lst[w++] = lst[i];
            off[b] = start;
        }
        off[nb] = w;
        hsdag_free(fill);
        if (dir) {
            p->blk_succ_off = off;
            p->blk_succ = lst;
        } else {
            p->blk_pred_off = off;
            p->blk_pred = lst;
        }
    }
    return 0;
}

static int problem_blocks(hsdag_place_problem *p)
{
    int32_t ng = p->n_groups, n1 = ng ? ng : 1;
    int32_t *csrc = NULL, *cdst = NULL, *cseq = NULL;
    int32_t ne = problem_contig_edges(p, &csrc, &cdst, &cseq);
    int32_t *off = hsdag_calloc((size_t)ng + 1, sizeof *off);
    int32_t *dst = hsdag_malloc((size_t)(ne > 0 ? ne : 1) * sizeof *dst);
    int32_t *comp = hsdag_malloc((size_t)n1 * sizeof *comp), *idx = hsdag_malloc((size_t)n1 * sizeof *idx);
    int32_t *low = hsdag_malloc((size_t)n1 * sizeof *low), *stk = hsdag_malloc((size_t)n1 * sizeof *stk);
    int32_t *csn = hsdag_malloc((size_t)n1 * sizeof *csn), *cse = hsdag_malloc((size_t)n1 * sizeof *cse);
    int rc = HSDAG_ENOMEM;
    if (ne < 0 || !off || !dst || !comp || !idx || !low || !stk || !csn || !cse) goto done;
    for (int32_t i = 0; i < ne; i++) off[csrc[i] + 1]++;
    for (int32_t gi = 0; gi < ng; gi++) off[gi + 1] += off[gi];
    for (int32_t gi = 0; gi < ng; gi++) idx[gi] = off[gi];
    for (int32_t i = 0; i < ne; i++) dst[idx[csrc[i]]++] = cdst[i];
    int32_t nc = scc_tarjan(ng, off, dst, comp, idx, low, stk, csn, cse);
    /* renumber components by their smallest group: idx[c] = new id */
    for (int32_t c = 0; c < nc; c++) idx[c] = -1;
    int32_t nb = 0;
    for (int32_t gi = 0; gi < ng; gi++)
        if (idx[comp[gi]] < 0) idx[comp[gi]] = nb++;
    p->n_blocks = nb;
    p->block = hsdag_arena_alloc(p->arena, (size_t)n1 * sizeof *p->block);
    p->blk_off = hsdag_arena_alloc(p->arena, ((size_t)nb + 1) * sizeof *p->blk_off);
    p->blk_grp = hsdag_arena_alloc(p->arena, (size_t)n1 * sizeof *p->blk_grp);
    p->blk_mem = hsdag_arena_alloc(p->arena, (size_t)(nb ? nb : 1) * sizeof *p->blk_mem);
    p->blk_allowed = hsdag_arena_alloc(p->arena, (size_t)(nb ? nb : 1) * sizeof *p->blk_allowed);
    p->blk_order = hsdag_arena_alloc(p->arena, (size_t)(nb ? nb : 1) * sizeof *p->blk_order);
    if (!p->block || !p->blk_off || !p->blk_grp || !p->blk_mem || !p->blk_allowed || !p->blk_order) goto done;
    for (int32_t b = 0; b < nb; b++) p->blk_allowed[b] = ~(uint64_t)0;
    for (int32_t gi = 0; gi < ng; gi++) {
        int32_t b = idx[comp[gi]];
        p->block[gi] = b;
        p->blk_off[b + 1]++;
        p->blk_mem[b] += p->grp_mem[gi];
        p->blk_allowed[b] &= p->group_allowed[gi];
    }
    for (int32_t b = 0; b < nb; b++) p->blk_off[b + 1] += p->blk_off[b];
    for (int32_t b = 0; b < nb; b++) low[b] = p->blk_off[b];
    for (int32_t gi = 0; gi < ng; gi++) p->blk_grp[low[p->block[gi]]++] = gi;
    rc = problem_block_order(p, ne, csrc, cdst, cseq);
    if (rc == 0) rc = problem_block_adjacency(p, ne, csrc, cdst);
done:
    hsdag_free(csrc);
    hsdag_free(cdst);
    hsdag_free(cseq);
    hsdag_free(off);
    hsdag_free(dst);
    hsdag_free(comp);
    hsdag_free(idx);
    hsdag_free(low);
    hsdag_free(stk);
    hsdag_free(csn);
    hsdag_free(cse);
    return rc;
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
    p->obj = hsdag_sim_objective(p->sim);
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
    if (rc == 0) rc = problem_blocks(p);
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

int hsdag_place_caps_bind(uint64_t *bound, hsdag_place_problem *p, hsdag_err *e)
{
    *bound = 0;
    int32_t *dev = hsdag_alloc_n((size_t)p->n, sizeof *dev, "place", e);
    if (!dev) return HSDAG_ENOMEM;
    for (int32_t d = 0; d < p->k; d++) {
        if (!(p->cap[d] < INFINITY)) continue;
        for (int32_t v = 0; v < p->n; v++) dev[v] = d;
        hsdag_sim_result r;
        if (hsdag_sim_run(p->sim, dev, &r) == 0 && r.excess_bytes[d] > 0) *bound |= (uint64_t)1 << d;
    }
    hsdag_free(dev);
    return 0;
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
    s.latency_s = r.objective_s;
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

int hsdag_place_bound_compute(hsdag_bound *out, const hsdag_costs *c, hsdag_semantics sem,
                              hsdag_objective obj, int placers, hsdag_err *e)
{
    int rc = hsdag_bound_objective(out, c, sem, obj, placers ? hsdag_place_bound_exact : NULL, NULL, e);
    if (rc < 0 || !placers || out->objective != HSDAG_OBJ_LATENCY) return rc;
    double m = NAN;
    rc = hsdag_place_bound_memory(&m, c, out->semantics, e);
    if (rc < 0 && rc != HSDAG_EUNSUPPORTED) return rc;
    out->memory_s = m;
    if (m > out->lower_s) {
        out->lower_s = m;
        out->rule = "mincut-memory";
    }
    return 0;
}

int hsdag_place_lower_bound(hsdag_place_problem *p, hsdag_bound *out, hsdag_err *e)
{
    place_problem_priv *pp = (place_problem_priv *)p;
    if (!pp->bound_ready) {
        int rc = hsdag_place_bound_compute(&pp->bound, p->c, p->sem, p->obj, 1, e);
        if (rc < 0) return rc;
        pp->bound_ready = 1;
    }
    if (out) *out = pp->bound;
    return 0;
}

int hsdag_place_contiguous(hsdag_place_problem *p, const int32_t *device)
{
    if (p->sem != HSDAG_SEM_TARNAWSKI) return 0;
    if (p->obj == HSDAG_OBJ_LATENCY) return place_tw_in_class(p, device);
    /* throughput: blocks whole, then the devices' graph over the block edges acyclic */
    uint64_t succ[HSDAG_MAX_DEVICES] = {0}, present = 0;
    int32_t nb = p->n_blocks;
    for (int32_t b = 0; b < nb; b++) {
        int32_t d = -1;
        for (int32_t j = p->blk_off[b]; j < p->blk_off[b + 1]; j++) {
            int32_t gi = p->blk_grp[j];
            for (int32_t t = p->grp_off[gi]; t < p->grp_off[gi + 1]; t++) {
                int32_t x = device[p->grp_node[t]];
                if (d >= 0 && x != d) return 0;
                d = x;
            }
        }
        if (d < 0) continue;
        present |= (uint64_t)1 << d;
        for (int32_t j = p->blk_succ_off[b]; j < p->blk_succ_off[b + 1]; j++) {
            int32_t w = p->blk_succ[j];
            int32_t x = device[p->grp_node[p->grp_off[p->blk_grp[p->blk_off[w]]]]];
            if (x != d) succ[d] |= (uint64_t)1 << x;
        }
    }
    for (uint64_t left = present;
         left;) { /* drop a device no remaining device points to, until none is left */
        int32_t pick = -1;
        for (uint64_t m = left; m && pick < 0; m &= m - 1) {
            int32_t d = __builtin_ctzll(m), pointed = 0;
            for (uint64_t q = left; q && !pointed; q &= q - 1) pointed = (succ[__builtin_ctzll(q)] >> d) & 1u;
            if (!pointed) pick = d;
        }
        if (pick < 0) return 0;
        left &= ~((uint64_t)1 << pick);
    }
    return 1;
}

/* Simulates device and fills r's scoring fields (latency, objective, feasibility, contiguity, bound, gap,
 * sim); leaves the rest. */
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
    r->contiguous = hsdag_place_contiguous(p, device); /* first: it may run the simulator */
    rc = hsdag_sim_run(p->sim, device, &r->sim);
    if (rc < 0) return hsdag_err_set(e, rc, "place: simulator rejected the placement");
    r->latency_s = r->sim.makespan_s;
    r->objective_s = r->sim.objective_s;
    r->feasible = r->sim.feasible;
    r->lower_bound_s = b.lower_s;
    r->lower_bound_rule = b.rule;
    if (b.lower_s > 0)
        r->gap = (r->objective_s - b.lower_s) / b.lower_s;
    else
        r->gap = r->objective_s > 0 ? NAN : 0.0;
    return 0;
}

int hsdag_place_score(hsdag_place_problem *p, const int32_t *device, hsdag_place_result *r, hsdag_err *e)
{
    memset(r, 0, sizeof *r);
    r->rep.bound_s = r->rep.objective_s = r->rep.lp_cpu_s = r->rep.branch_and_cut_cpu_s = NAN;
    return place_score_fields(p, device, r, e);
}

int hsdag_place_run(hsdag_place_problem *p, const char *method, const hsdag_place_opts *o, int32_t *device,
                    hsdag_place_result *r, hsdag_err *e)
{
    hsdag_place_opts opts = o ? *o : hsdag_place_opts_default();
    memset(r, 0, sizeof *r);
    r->method = method;
    r->rep.bound_s = r->rep.objective_s = r->rep.lp_cpu_s = r->rep.branch_and_cut_cpu_s = NAN;
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
    double t0 = hsdag_now(), c0 = hsdag_cpu_now();
    int rc = fn(p, &opts, device, &r->rep, e);
    r->place_s = hsdag_now() - t0;
    r->cpu_s = hsdag_cpu_now() - c0;
    if (rc < 0) return rc;
    for (int32_t v = 0; v < p->n; v++)
        if (device[v] < 0 || device[v] >= p->k)
            return hsdag_err_set(e, HSDAG_ESOLVER, "place: %s: node '%s' left without a valid device", method,
                                 p->g->name[v]);
    return place_score_fields(p, device, r, e);
}

/* ---- the sequential formula ---- */

double place_seq_add(const hsdag_costs *c, const int32_t *device, int32_t u, double t)
{
    const hsdag_graph *g = c->g;
    int32_t a = device[u];
    t += c->node_s[(size_t)u * (size_t)c->n_devices + (size_t)a];
    uint64_t seen = 0;
    for (int32_t j = g->out_off[u]; j < g->out_off[u + 1]; j++) {
        int32_t b = device[g->out_dst[j]];
        if (b == a || ((seen >> b) & 1u)) continue;
        seen |= (uint64_t)1 << b;
        t += hsdag_costs_xfer_s(c, u, a, b);
    }
    return t;
}

double hsdag_place_sequential_cost(const hsdag_costs *c, const int32_t *device)
{
    double t = 0;
    for (int32_t u = 0; u < c->g->n_nodes; u++) t = place_seq_add(c, device, u, t);
    return t;
}
