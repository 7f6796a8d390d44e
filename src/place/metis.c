/* metis.c - k-way graph partitioning with libmetis as a placer (the baseline of Mirhoseini et al. and
 * Tarnawski et al.).
 * Not here: precedence (METIS sees an undirected weighted graph, so the parts may ping-pong along a path) and
 *           memory capacities (parts are balanced by compute, not capped by bytes).
 * Entry points: place_metis. */
#include "place_int.h"

#include <metis.h>

/* Fastest device of class gi among those it may use. */
static int32_t mt_fastest(const hsdag_place_problem *p, int32_t gi)
{
    int32_t best = -1;
    double bc = INFINITY;
    for (int32_t d = 0; d < p->k; d++) {
        if (!place_group_ok(p, gi, d)) continue;
        double c = place_group_cost(p, gi, d);
        if (c < bc) bc = c, best = d;
    }
    return best >= 0 ? best : place_group_fallback(p, gi);
}

/* Vertices = colour classes weighted by mean op cost; edges = tensors between classes weighted by mean
 * transfer
 * time (both scaled to integers); target part weights proportional to each device's speed over the whole
 * graph. */
int place_metis(hsdag_place_problem *p, const hsdag_place_opts *o, int32_t *device, hsdag_place_report *r,
                hsdag_err *e)
{
    const hsdag_graph *g = p->g;
    int32_t ng = p->n_groups, k = p->k, ne = 0;
    if (k == 1 || ng <= k) {
        for (int32_t gi = 0; gi < ng; gi++) place_group_set(p, device, gi, mt_fastest(p, gi));
        return 0;
    }
    int rc = 0;
    hsdag_pair *ed = hsdag_malloc((size_t)(2 * g->n_edges + 1) * sizeof *ed);
    idx_t *xadj = hsdag_malloc((size_t)(ng + 1) * sizeof *xadj);
    idx_t *adj = hsdag_malloc((size_t)(2 * g->n_edges + 1) * sizeof *adj);
    idx_t *adjw = hsdag_malloc((size_t)(2 * g->n_edges + 1) * sizeof *adjw);
    idx_t *vw = hsdag_malloc((size_t)ng * sizeof *vw), *part = hsdag_malloc((size_t)ng * sizeof *part);
    real_t *tp = hsdag_malloc((size_t)k * sizeof *tp);
    if (!ed || !xadj || !adj || !adjw || !vw || !part || !tp) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "metis: out of memory");
        goto done;
    }
    double wsum = 0, csum = 0;
    for (int32_t kk = 0; kk < g->n_edges; kk++) {
        int32_t u = g->edge_src[kk], a = p->group[u], b = p->group[g->out_dst[kk]];
        if (a == b) continue;
        ed[ne++] = (hsdag_pair){a, b, p->mean_xfer[u]};
        ed[ne++] = (hsdag_pair){b, a, p->mean_xfer[u]};
        wsum += 2 * p->mean_xfer[u];
    }
    for (int32_t v = 0; v < p->n; v++) csum += p->mean_cost[v];
    int32_t na = hsdag_pairs_merge(ed, ne, NULL);
    for (int32_t gi = 0; gi <= ng; gi++) xadj[gi] = 0;
    for (int32_t i = 0; i < na; i++) xadj[ed[i].a + 1]++;
    for (int32_t gi = 0; gi < ng; gi++) xadj[gi + 1] += xadj[gi];
    for (int32_t i = 0; i < na; i++) {
        adj[i] = ed[i].b; /* sorted by a, so position i is the CSR slot */
        adjw[i] = (idx_t)(1 + (wsum > 0 ? ed[i].w / wsum * 1e7 : 0));
    }
    for (int32_t gi = 0; gi < ng; gi++) {
        double c = 0;
        for (int32_t i = p->grp_off[gi]; i < p->grp_off[gi + 1]; i++) c += p->mean_cost[p->grp_node[i]];
        vw[gi] = (idx_t)(1 + (csum > 0 ? c / csum * 1e7 : 0));
    }
    /* parts: the devices at least a quarter as fast as the fastest over the whole graph (a much slower device
     * would get a sliver, which METIS handles badly and which never pays), at most one per 4 classes */
    double work[HSDAG_MAX_DEVICES], fastest = INFINITY, ssum = 0;
    int32_t pd[HSDAG_MAX_DEVICES], npd = 0;
    for (int32_t d = 0; d < k; d++) {
        work[d] = 0;
        for (int32_t v = 0; v < p->n; v++) work[d] += place_cost(p, v, d);
        if (work[d] < fastest) fastest = work[d];
    }
    for (int32_t rnk = 0; rnk < k; rnk++)
        for (int32_t d = 0; d < k; d++)
            if (p->dev_rank[d] == rnk && work[d] <= 4 * fastest && npd < (ng / 4 > 2 ? ng / 4 : 2))
                pd[npd++] = d;
    if (npd < 2) {
        for (int32_t gi = 0; gi < ng; gi++) place_group_set(p, device, gi, mt_fastest(p, gi));
        snprintf(r->note, sizeof r->note,
                 "one device is more than 4x faster than the others: all on the fastest");
        goto done;
    }
    for (int32_t i = 0; i < npd; i++) {
        tp[i] = (real_t)(work[pd[i]] > 0 ? 1.0 / work[pd[i]] : 1.0);
        ssum += tp[i];
    }
    for (int32_t i = 0; i < npd; i++) tp[i] = (real_t)(tp[i] / ssum);
    idx_t opts[METIS_NOPTIONS], nv = ng, ncon = 1, np = npd, cut = 0;
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_SEED] = (idx_t)(o->seed & 0x7fffffff);
    opts[METIS_OPTION_NUMBERING] = 0;
    int mr = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vw, NULL, adjw, &np, tp, NULL, opts, &cut, part);
    if (mr != METIS_OK) {
        rc = hsdag_err_set(e, HSDAG_ESOLVER, "metis: METIS_PartGraphKway failed (code %d)", mr);
        goto done;
    }
    int moved = 0;
    for (int32_t gi = 0; gi < ng; gi++) {
        int32_t d = part[gi] >= 0 && part[gi] < npd ? pd[part[gi]] : -1;
        if (d < 0 || !place_group_ok(p, gi, d)) d = mt_fastest(p, gi), moved++;
        place_group_set(p, device, gi, d);
    }
    snprintf(r->note, sizeof r->note,
             "precedence and memory caps ignored; %d parts; %d classes moved off a part "
             "they may not run on",
             (int)npd, moved);
done:
    hsdag_free(ed);
    hsdag_free(xadj);
    hsdag_free(adj);
    hsdag_free(adjw);
    hsdag_free(vw);
    hsdag_free(part);
    hsdag_free(tp);
    return rc;
}
