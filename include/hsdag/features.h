/* features.h - the graph side of HSDAG: structural features per co-location group (coarsen.h), and the
 * discrete step of Graph Parsing Network pooling (dominant edges -> clusters -> pooled adjacency).
 * Not here: anything learned (edge scores come in as numbers; the networks live in src/learn/model.c); the
 *   coarsening itself (a graph mechanism: coarsen.h, src/graph/coarsen.c).
 * Entry points: hsdag_features_compute/free, hsdag_gpn_parse/free.
 *
 * Usage:
 *   hsdag_coarse *c; hsdag_err e = {0};
 *   if (hsdag_coarsen_create(&c, g, 0, &e) < 0) return;   // in-degree-1 nodes join their predecessor
 *   hsdag_features_config fc = hsdag_features_config_default();
 *   hsdag_features f;
 *   hsdag_features_compute(&f, g, c, &fc, &e);        // f.x is (c->n_groups, f.dim), kinds side by side
 *   // edge scores s[k] for the m undirected edges (u[k], w[k]) of a graph of n nodes:
 *   int32_t n = 3, m = 2, u[2] = {0, 1}, w[2] = {1, 2};
 *   float sc[2] = {0.9f, 0.1f};
 *   hsdag_gpn_parse_result pr;
 *   hsdag_gpn_parse(&pr, n, m, u, w, sc, &e);          // pr.cluster[node], pooled edges pr.pu / pr.pv
 *   hsdag_gpn_parse_free(&pr); hsdag_features_free(&f); hsdag_coarsen_free(c);
 */
#ifndef HSDAG_FEATURES_H
#define HSDAG_FEATURES_H

#include "hsdag/coarsen.h"
#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- features per group ----
 * Kinds (each switchable; the learner embeds each present kind to the same width, then concatenates):
 *   OPTYPE    mean over members of [one-hot opclass (11) | one-hot op name over a fixed vocabulary (+
 * other)];
 *   SHAPE     first output's first 4 dims, log(1 + d) (unknown or missing dims 0), mean over members;
 *   ID        group index / (n_groups - 1) (the reference feeds the raw integer);
 *   DEGREE    log(1 + in-degree), log(1 + out-degree) in the group graph;
 *   NFD       node fractal dimension on the undirected group graph (BFS; slope of log N(r) on log r);
 *   CLOSENESS Wasserman-Faust closeness on incoming distances (networkx closeness_centrality, directed). */
typedef enum hsdag_feat_kind {
    HSDAG_FEAT_OPTYPE = 0,
    HSDAG_FEAT_SHAPE,
    HSDAG_FEAT_ID,
    HSDAG_FEAT_DEGREE,
    HSDAG_FEAT_NFD,
    HSDAG_FEAT_CLOSENESS,
    HSDAG_FEAT_KINDS_
} hsdag_feat_kind;
#define HSDAG_FEAT_ALL ((1u << HSDAG_FEAT_KINDS_) - 1u)
#define HSDAG_FEAT_STRUCT ((1u << HSDAG_FEAT_DEGREE) | (1u << HSDAG_FEAT_NFD) | (1u << HSDAG_FEAT_CLOSENESS))
HSDAG_API const char *
hsdag_feat_kind_name(hsdag_feat_kind k); /* "optype", "shape", "id", "degree", "nfd", "closeness" */

typedef struct hsdag_features_config {
    unsigned kinds; /* bit set of 1u << hsdag_feat_kind (default HSDAG_FEAT_ALL) */
} hsdag_features_config;
HSDAG_API hsdag_features_config hsdag_features_config_default(void);

/* Invariants: x is (n, dim) row-major; kind k occupies columns kind_off[k] .. kind_off[k] + kind_dim[k] - 1;
 * kind_dim[k] == 0 for a switched-off kind; every value is finite. */
typedef struct hsdag_features {
    int32_t n, dim;
    int32_t kind_off[HSDAG_FEAT_KINDS_];
    int32_t kind_dim[HSDAG_FEAT_KINDS_];
    float *x; /* [n * dim] */
} hsdag_features;

/* Widths of each kind (independent of the graph). */
HSDAG_API int32_t hsdag_features_kind_width(hsdag_feat_kind k);
/* Index of op string `op` in the fixed op vocabulary (case-insensitive, spellings of ONNX, OpenVINO and
 * PyTorch), or the "other" slot. Exposed for tests. */
HSDAG_API int32_t hsdag_features_op_index(const char *op);

/* Computes features of c's groups. At least one kind must be on (else HSDAG_EINVAL). */
HSDAG_API int hsdag_features_compute(hsdag_features *f, const hsdag_graph *g, const hsdag_coarse *c,
                                     const hsdag_features_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_features_free(hsdag_features *f);

/* Structural measures on a CSR DAG of n nodes (out-CSR and in-CSR as in hsdag_coarse), exposed for tests:
 * nfd[v] (undirected BFS) and closeness[v] (incoming distances, Wasserman-Faust). Either may be NULL. */
HSDAG_API int hsdag_struct_measures(double *nfd, double *closeness, int32_t n, const int32_t *out_off,
                                    const int32_t *out_dst, const int32_t *in_off, const int32_t *in_src,
                                    hsdag_err *e);
/* Up to exact_max groups the measures are exact (all-pairs BFS, O(V (V + E))); above, near-linear:
 * NFD from a BFS stopped at radius nfd_radius or after nfd_visits nodes (the radius cut short is dropped),
 * closeness sampled from `pivots` forward BFS (Eppstein-Wang), O(pivots (V + E)). docs/hsdag.md measures what
 * the approximation changes. */
typedef struct hsdag_struct_opts {
    int32_t exact_max;  /* 4096 (the default learner never has more groups: --max-groups) */
    int32_t nfd_radius; /* 8 */
    int32_t nfd_visits; /* 512 */
    int32_t pivots;     /* 64 */
} hsdag_struct_opts;
HSDAG_API hsdag_struct_opts hsdag_struct_opts_default(void);
HSDAG_API int hsdag_struct_measures_opts(double *nfd, double *closeness, int32_t n, const int32_t *out_off,
                                         const int32_t *out_dst, const int32_t *in_off, const int32_t *in_src,
                                         const hsdag_struct_opts *o, hsdag_err *e);

/* ---- GPN parsing (the discrete part of Graph Parsing Network pooling) ----
 * Input: n nodes, m undirected edges (u[k], v[k]), u != v, no duplicates, with scores s[k].
 * Each node keeps its dominant edge: the incident edge of highest score, ties by lower edge index. An edge
 * whose score is NaN is never dominant (the caller's way to keep both its ends out of a merge along it).
 * Clusters = connected components of the dominant edges (union-find). Cluster ids: dominant edges are
 * visited by (score desc, edge index asc) and each component gets the next id when first met; nodes
 * without scored edges follow as singletons in node order. Every node with a scored edge is in a cluster of
 * size >= 2.
 * Output pooled graph: the cluster pairs joined by at least one edge, no self-loops, unique, (a < b),
 * sorted; intra[k] = 1 if edge k lies inside a cluster. */
typedef struct hsdag_gpn_parse_result {
    int32_t n_clusters;
    int32_t *cluster;     /* [n] node -> cluster */
    uint8_t *intra;       /* [m] edge k inside one cluster */
    int32_t *intra_count; /* [n_clusters] edges inside each cluster */
    int32_t m_pooled;
    int32_t *pu, *pv; /* [m_pooled] pooled undirected edges, pu < pv */
} hsdag_gpn_parse_result;

HSDAG_API int hsdag_gpn_parse(hsdag_gpn_parse_result *r, int32_t n, int32_t m, const int32_t *u,
                              const int32_t *v, const float *s, hsdag_err *e);
HSDAG_API void hsdag_gpn_parse_free(hsdag_gpn_parse_result *r);

#ifdef __cplusplus
}
#endif
#endif
