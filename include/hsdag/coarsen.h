/* coarsen.h - co-location coarsening: in-degree-1 ops join their predecessor's group, and the group graph as
 *   a CSR DAG (the HSDAG learner's groups, the Placeto and RNN placers' units).
 * Not here: anything per group beyond its ops and edges (features.h computes the learner's features).
 * Entry points: hsdag_coarsen_create(_opts), hsdag_coarsen_free, hsdag_coarsen_expand.
 *
 * Usage:
 *   hsdag_coarse *c; hsdag_err e = {0};
 *   if (hsdag_coarsen_create(&c, g, 0, &e) < 0) return;   // in-degree-1 nodes join their predecessor
 *   int32_t *gd = hsdag_calloc((size_t)c->n_groups, sizeof *gd);      // a device per group
 *   int32_t *dev = hsdag_calloc((size_t)g->n_nodes, sizeof *dev);
 *   hsdag_coarsen_expand(c, dev, gd);                     // dev[op] = gd[group_of[op]]
 *   hsdag_coarsen_free(c);
 */
#ifndef HSDAG_COARSEN_H
#define HSDAG_COARSEN_H

#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- co-location coarsening ----
 * Walk nodes in topological order: a node with in-degree exactly 1 joins the group of its single
 * predecessor; a node with in-degree 0 or >= 2 starts a new group. Groups are out-trees, numbered in
 * the order their roots appear, and every group edge A -> B has A < B (B's root has in-degree >= 2),
 * so the group graph is a DAG in topological order.
 * Invariants: group_of[v] in [0, n_groups); members of group k are ops[off[k] .. off[k+1]-1] in
 * increasing node order, the first one is the root; the group graph has unique edges sorted by
 * (src, dst), out-CSR slot k is edge k; in-CSR is sorted by source. */
typedef struct hsdag_coarse {
    int32_t n_nodes, n_groups, n_edges;
    int32_t *group_of;  /* [n_nodes] op -> group */
    int32_t *off;       /* [n_groups + 1] group -> ops CSR */
    int32_t *ops;       /* [n_nodes] */
    int32_t *out_off;   /* [n_groups + 1] group graph, by source */
    int32_t *out_dst;   /* [n_edges] */
    int32_t *edge_src;  /* [n_edges] */
    double *edge_bytes; /* [n_edges] sum of the op edges it stands for */
    int32_t *in_off;    /* [n_groups + 1] by destination */
    int32_t *in_src;    /* [n_edges] */
    int32_t n_und;      /* the undirected group graph: unique pairs und_u[k] < und_v[k], sorted */
    int32_t *und_u, *und_v;
} hsdag_coarse;

/* Builds the coarsening of g. disable = 1 gives one group per op (the ablation "no coarsening").
 * Returns 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_coarsen_create(hsdag_coarse **out, const hsdag_graph *g, int disable, hsdag_err *e);
/* Options of hsdag_coarsen_create_opts (zeroed = hsdag_coarsen_create's rule). */
typedef struct hsdag_coarsen_opts {
    int disable;             /* 1 = one group per op */
    const int32_t *colocate; /* [n_nodes] or NULL: ops with the same id >= 0 (< n_nodes, e.g. a colour class)
                              * land in one group: groups are then the components of both rules, numbered by
                              * their first op; such merges can join groups both ways, so the "A < B" invariant
                              * of group edges holds only without colocate */
    int32_t max_ops;         /* > 0: an op starts a new group instead of joining one of this many ops */
    const double *bytes;     /* [n_nodes] bytes per op for max_bytes (e.g. static bytes), or NULL */
    double max_bytes;        /* > 0: ... or one whose bytes would then exceed this */
    int32_t max_groups; /* > 0: then runs of consecutive groups are merged until at most this many are left
                              * (linear; keeps the learner's cost bounded on huge graphs) */
} hsdag_coarsen_opts;
HSDAG_API int hsdag_coarsen_create_opts(hsdag_coarse **out, const hsdag_graph *g, const hsdag_coarsen_opts *o,
                                        hsdag_err *e);
HSDAG_API void hsdag_coarsen_free(hsdag_coarse *c); /* NULL is a no-op */
/* Expands a per-group value to a per-op value: op_dev[v] = group_dev[group_of[v]]. */
HSDAG_API void hsdag_coarsen_expand(const hsdag_coarse *c, int32_t *op_dev, const int32_t *group_dev);

#ifdef __cplusplus
}
#endif
#endif
