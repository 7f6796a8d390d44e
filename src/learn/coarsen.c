/* coarsen.c - co-location coarsening (in-degree-1 merge) and the group graph as a CSR DAG.
 * Not here: features of the groups (features.c) or anything learned.
 * Entry points: hsdag_coarsen_create, hsdag_coarsen_free, hsdag_coarsen_expand. */
#include "hsdag/features.h"

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
    hsdag_free(c);
}

void hsdag_coarsen_expand(const hsdag_coarse *c, int32_t *op_dev, const int32_t *group_dev)
{
    for (int32_t v = 0; v < c->n_nodes; v++) op_dev[v] = group_dev[c->group_of[v]];
}

int hsdag_coarsen_create(hsdag_coarse **out, const hsdag_graph *g, int disable, hsdag_err *e)
{
    *out = NULL;
    int32_t n = g->n_nodes;
    hsdag_pair *ge = NULL;
    hsdag_coarse *c = hsdag_calloc(1, sizeof *c);
    if (!c) goto oom;
    c->n_nodes = n;
    c->group_of = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    c->off = hsdag_calloc((size_t)n + 2, sizeof(int32_t));
    c->ops = hsdag_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!c->group_of || !c->off || !c->ops) goto oom;

    /* topological order is node order, so the predecessor's group is already known */
    int32_t ng = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t indeg = g->in_off[v + 1] - g->in_off[v];
        if (!disable && indeg == 1)
            c->group_of[v] = c->group_of[g->in_src[g->in_off[v]]];
        else
            c->group_of[v] = ng++;
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

    /* group edges: every op edge between different groups, merged */
    int32_t m = 0;
    ge = hsdag_malloc(sizeof(hsdag_pair) * (size_t)(g->n_edges ? g->n_edges : 1));
    if (!ge) goto oom;
    for (int32_t k = 0; k < g->n_edges; k++) {
        int32_t a = c->group_of[g->edge_src[k]], b = c->group_of[g->out_dst[k]];
        if (a == b) continue;
        HSDAG_ASSERT(a < b);
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
    if (!c->out_off || !c->in_off || !c->out_dst || !c->edge_src || !c->edge_bytes || !c->in_src) goto oom;
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
        if (!fill) goto oom;
        memcpy(fill, c->in_off, sizeof(int32_t) * (size_t)ng);
        for (int32_t k = 0; k < mu; k++) c->in_src[fill[ge[k].b]++] = ge[k].a;
        hsdag_free(fill);
    }
    hsdag_free(ge);
    *out = c;
    return 0;
oom:
    hsdag_free(ge);
    hsdag_coarsen_free(c);
    return hsdag_err_set(e, HSDAG_ENOMEM, "coarsen: out of memory (%d nodes)", (int)n);
}
