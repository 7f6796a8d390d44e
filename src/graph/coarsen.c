/* coarsen.c - co-location coarsening (in-degree-1 merge) and the group graph as a CSR DAG.
 * Not here: features of the groups (src/learn/features.c) or anything learned.
 * Entry points: hsdag_coarsen_create(_opts), hsdag_coarsen_free, hsdag_coarsen_expand. */
#include "hsdag/coarsen.h"

#include <string.h>

void hsdag_coarsen_free(hsdag_coarse *c)
{
    if (!c) return;
    hsdag_free(c->group_of);
    hsdag_free(c->off);
    hsdag_free(c->ops);
    hsdag_free(c->out_off);
    hsdag_free(c->out_dst);
    hsdag_free(c->edge_src);
    hsdag_free(c->edge_bytes);
    hsdag_free(c->in_off);
    hsdag_free(c->in_src);
    hsdag_free(c->und_u);
    hsdag_free(c->und_v);
    hsdag_free(c);
}

void hsdag_coarsen_expand(const hsdag_coarse *c, int32_t *op_dev, const int32_t *group_dev)
{
    for (int32_t v = 0; v < c->n_nodes; v++) op_dev[v] = group_dev[c->group_of[v]];
}

static int32_t uf_find(int32_t *par, int32_t x)
{
    while (par[x] != x) x = par[x] = par[par[x]];
    return x;
}

/* Merges the groups of ops that share a colocate id (union-find), then renumbers the groups in the order of
 * their first op, so numbering stays deterministic and root-first. Returns the new group count or -1 (ENOMEM). */
static int32_t merge_colocated(int32_t *group_of, int32_t n, int32_t ng, const int32_t *colocate)
{
    int32_t *par = hsdag_malloc(sizeof(int32_t) * (size_t)(ng ? ng : 1));
    int32_t *first = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1)); /* colocate id -> a group */
    int32_t *ren = hsdag_malloc(sizeof(int32_t) * (size_t)(ng ? ng : 1));
    int32_t k = -1;
    if (par && first && ren) {
        for (int32_t i = 0; i < ng; i++) par[i] = i, ren[i] = -1;
        for (int32_t v = 0; v < n; v++) first[v] = -1;
        for (int32_t v = 0; v < n; v++) {
            int32_t cl = colocate[v];
            if (cl < 0 || cl >= n) continue;
            if (first[cl] < 0) {
                first[cl] = group_of[v];
                continue;
            }
            int32_t a = uf_find(par, first[cl]), b = uf_find(par, group_of[v]);
            if (a != b) par[a > b ? a : b] = a < b ? a : b;
        }
        k = 0;
        for (int32_t v = 0; v < n; v++) {
            int32_t r = uf_find(par, group_of[v]);
            if (ren[r] < 0) ren[r] = k++;
            group_of[v] = ren[r];
        }
    }
    hsdag_free(par);
    hsdag_free(first);
    hsdag_free(ren);
    return k;
}

/* The group graph of c's grouping of g: out- and in-CSR of the merged group edges, and the undirected pairs.
 * colocated: groups were merged by co-location (edges may then go both ways). 0 or HSDAG_ENOMEM. */
static int coarse_edges(hsdag_coarse *c, const hsdag_graph *g, int colocated)
{
    int32_t ng = c->n_groups;
    /* group edges: every op edge between different groups, merged */
    int32_t m = 0;
    hsdag_pair *ge = hsdag_malloc(sizeof(hsdag_pair) * (size_t)(g->n_edges ? g->n_edges : 1));
    if (!ge) goto fail;
    for (int32_t k = 0; k < g->n_edges; k++) {
        int32_t a = c->group_of[g->edge_src[k]], b = c->group_of[g->out_dst[k]];
        if (a == b) continue;
        HSDAG_ASSERT(a < b || colocated);
        ge[m].a = a;
        ge[m].b = b;
        ge[m].w = g->edge_bytes ? g->edge_bytes[k] : 0.0;
        m++;
    }
    int32_t mu = hsdag_pairs_merge(ge, m, NULL);
    c->n_edges = mu;
    size_t me = (size_t)(mu ? mu : 1);
    c->out_off = hsdag_calloc((size_t)ng + 1, sizeof(int32_t));
    c->in_off = hsdag_calloc((size_t)ng + 2, sizeof(int32_t));
    c->out_dst = hsdag_malloc(sizeof(int32_t) * me);
    c->edge_src = hsdag_malloc(sizeof(int32_t) * me);
    c->edge_bytes = hsdag_malloc(sizeof(double) * me);
    c->in_src = hsdag_malloc(sizeof(int32_t) * me);
    if (!c->out_off || !c->in_off || !c->out_dst || !c->edge_src || !c->edge_bytes || !c->in_src) goto fail;
    for (int32_t k = 0; k < mu; k++) {
        c->out_off[ge[k].a + 1]++;
        c->in_off[ge[k].b + 1]++;
        c->out_dst[k] = ge[k].b;
        c->edge_src[k] = ge[k].a;
        c->edge_bytes[k] = ge[k].w;
    }
    for (int32_t k = 0; k < ng; k++) {
        c->out_off[k + 1] += c->out_off[k];
        c->in_off[k + 1] += c->in_off[k];
    }
    {
        /* edges are sorted by source, so filling by destination keeps sources ascending */
        int32_t *fill = hsdag_malloc(sizeof(int32_t) * (size_t)(ng ? ng : 1));
        if (!fill) goto fail;
        memcpy(fill, c->in_off, sizeof(int32_t) * (size_t)ng);
        for (int32_t k = 0; k < mu; k++) c->in_src[fill[ge[k].b]++] = ge[k].a;
        hsdag_free(fill);
    }
    /* the undirected edges: unique pairs a < b (both directions exist only after co-location merges) */
    for (int32_t k = 0; k < mu; k++)
        if (ge[k].a > ge[k].b) {
            int32_t t = ge[k].a;
            ge[k].a = ge[k].b;
            ge[k].b = t;
        }
    c->n_und = hsdag_pairs_merge(ge, mu, NULL);
    c->und_u = hsdag_malloc(sizeof(int32_t) * me);
    c->und_v = hsdag_malloc(sizeof(int32_t) * me);
    if (!c->und_u || !c->und_v) goto fail;
    for (int32_t k = 0; k < c->n_und; k++) {
        c->und_u[k] = ge[k].a;
        c->und_v[k] = ge[k].b;
    }
    hsdag_free(ge);
    return 0;
fail:
    hsdag_free(ge);
    return HSDAG_ENOMEM;
}

int hsdag_coarsen_create(hsdag_coarse **out, const hsdag_graph *g, int disable, hsdag_err *e)
{
    hsdag_coarsen_opts o = {.disable = disable};
    return hsdag_coarsen_create_opts(out, g, &o, e);
}

int hsdag_coarsen_create_opts(hsdag_coarse **out, const hsdag_graph *g, const hsdag_coarsen_opts *o,
                              hsdag_err *e)
{
    *out = NULL;
    int32_t n = g->n_nodes;
    const int32_t *colocate = o->colocate;
    int32_t *gops = NULL;
    double *gbytes = NULL;
    hsdag_coarse *c = hsdag_calloc(1, sizeof *c);
    if (!c) goto oom;
    c->n_nodes = n;
    c->group_of = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    c->off = hsdag_calloc((size_t)n + 2, sizeof(int32_t));
    c->ops = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    gops = hsdag_calloc((size_t)n + 1, sizeof(int32_t));
    gbytes = hsdag_calloc((size_t)n + 1, sizeof(double));
    if (!c->group_of || !c->off || !c->ops || !gops || !gbytes) goto oom;

    /* topological order is node order, so the predecessor's group is already known; a group closes at its
     * op or byte limit (the op then starts a group of its own: groups stay out-trees) */
    int32_t ng = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t indeg = g->in_off[v + 1] - g->in_off[v];
        double b = o->bytes && o->bytes[v] > 0 ? o->bytes[v] : 0.0;
        int32_t gp = indeg == 1 ? c->group_of[g->in_src[g->in_off[v]]] : -1;
        if (!o->disable && gp >= 0 && (o->max_ops <= 0 || gops[gp] < o->max_ops) &&
            (!(o->max_bytes > 0) || gbytes[gp] + b <= o->max_bytes))
            c->group_of[v] = gp;
        else
            c->group_of[v] = ng++;
        gops[c->group_of[v]]++;
        gbytes[c->group_of[v]] += b;
    }
    hsdag_free(gops);
    hsdag_free(gbytes);
    gops = NULL;
    gbytes = NULL;
    if (colocate && (ng = merge_colocated(c->group_of, n, ng, colocate)) < 0) goto oom;
    if (o->max_groups > 0 && ng > o->max_groups) {
        /* runs of consecutive groups become one: ids follow the topological order of their roots, so every
         * edge still goes from a run to the same or a later one */
        int32_t per = (ng + o->max_groups - 1) / o->max_groups;
        for (int32_t v = 0; v < n; v++) c->group_of[v] /= per;
        ng = (ng + per - 1) / per;
    }
    c->n_groups = ng;
    /* group -> ops CSR by counting sort (members stay in node order, root first) */
    for (int32_t v = 0; v < n; v++) c->off[c->group_of[v] + 1]++;
    for (int32_t k = 0; k < ng; k++) c->off[k + 1] += c->off[k];
    {
        int32_t *fill = hsdag_malloc(sizeof(int32_t) * (size_t)(ng ? ng : 1));
        if (!fill) goto oom;
        memcpy(fill, c->off, sizeof(int32_t) * (size_t)ng);
        for (int32_t v = 0; v < n; v++) c->ops[fill[c->group_of[v]]++] = v;
        hsdag_free(fill);
    }

    if (coarse_edges(c, g, colocate != NULL) < 0) goto oom;
    *out = c;
    return 0;
oom:
    hsdag_free(gops);
    hsdag_free(gbytes);
    hsdag_coarsen_free(c);
    return hsdag_err_set(e, HSDAG_ENOMEM, "coarsen: out of memory (%d nodes)", (int)n);
}
