/* test_coarsen.c - co-location coarsening, structural features and GPN parsing on hand-made graphs.
 * Not here: anything learned (test_learn.c). Every expected value is worked out by hand in a comment.
 * Entry points: main. */
#include "check.h"
#include "hsdag/features.h"
#include "hsdag/io.h"

#include <math.h>
#include <stdlib.h>

static hsdag_graph *build(int n, const char *const *ops, int m, const int *src, const int *dst)
{
    hsdag_gb *b = hsdag_gb_create();
    char name[16];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "n%d", i);
        hsdag_gb_add_node(b, name, ops ? ops[i] : "Relu");
        int64_t dims[4] = {1, 64, 8, 8};
        hsdag_gb_add_output(b, i, HSDAG_DT_F32, 4, dims);
    }
    for (int k = 0; k < m; k++) hsdag_gb_add_edge(b, src[k], dst[k], 100.0 * (k + 1));
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "build: %s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

static void test_coarsen_diamond(void)
{
    /* a0 -> b1 -> {c2, d3} -> e4 -> f5: in-degrees 0,1,1,1,2,1, so groups {0,1,2,3} and {4,5}. */
    int src[] = {0, 1, 1, 2, 3, 4}, dst[] = {1, 2, 3, 4, 4, 5};
    hsdag_graph *g = build(6, NULL, 6, src, dst);
    CHECK(g != NULL);
    hsdag_coarse *c = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_coarsen_create(&c, g, 0, &e), 0);
    CHECK_EQ_INT(c->n_groups, 2);
    int want[] = {0, 0, 0, 0, 1, 1};
    for (int v = 0; v < 6; v++) CHECK_EQ_INT(c->group_of[v], want[v]);
    CHECK_EQ_INT(c->off[1], 4);
    CHECK_EQ_INT(c->ops[4], 4); /* root of group 1 first */
    CHECK_EQ_INT(c->n_edges, 1);
    CHECK_EQ_INT(c->edge_src[0], 0);
    CHECK_EQ_INT(c->out_dst[0], 1);
    CHECK_NEAR(c->edge_bytes[0], 400.0 + 500.0, 1e-9); /* edges 2->4 and 3->4 merged */
    CHECK_EQ_INT(c->in_src[c->in_off[1]], 0);
    int32_t gd[2] = {7, 9}, od[6];
    hsdag_coarsen_expand(c, od, gd);
    CHECK_EQ_INT(od[3], 7);
    CHECK_EQ_INT(od[5], 9);
    hsdag_coarsen_free(c);

    /* disabled: one group per op, group graph = op graph */
    CHECK_EQ_INT(hsdag_coarsen_create(&c, g, 1, &e), 0);
    CHECK_EQ_INT(c->n_groups, 6);
    CHECK_EQ_INT(c->n_edges, 6);
    hsdag_coarsen_free(c);
    hsdag_graph_free(g);
}

static void test_coarsen_two_sources(void)
{
    /* x0, y1 -> z2 -> w3 ; y1 -> q4 : groups {0}, {1, 4}, {2, 3}; edges 0->2, 1->2 */
    int src[] = {0, 1, 2, 1}, dst[] = {2, 2, 3, 4};
    hsdag_graph *g = build(5, NULL, 4, src, dst);
    hsdag_coarse *c = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_coarsen_create(&c, g, 0, &e), 0);
    CHECK_EQ_INT(c->n_groups, 3);
    /* node order after topological sort is insertion order here (all edges go forward) */
    CHECK_EQ_INT(c->group_of[0], 0);
    CHECK_EQ_INT(c->group_of[1], 1);
    CHECK_EQ_INT(c->group_of[4], 1);
    CHECK_EQ_INT(c->group_of[2], 2);
    CHECK_EQ_INT(c->group_of[3], 2);
    CHECK_EQ_INT(c->n_edges, 2);
    for (int k = 0; k < c->n_edges; k++) CHECK(c->edge_src[k] < c->out_dst[k]); /* group DAG stays ordered */
    CHECK_EQ_INT(c->in_off[3] - c->in_off[2], 2);
    hsdag_coarsen_free(c);
    hsdag_graph_free(g);
}

static void test_coarsen_opts(void)
{
    /* chain 0 -> 1 -> ... -> 9 (one group by the rule) and a side branch 10 -> 9 (so 9 starts a group):
     * max_ops 3 cuts the chain 0..8 into {0,1,2} {3,4,5} {6,7,8}, then {9} and {10} */
    int src[11], dst[11], m = 0;
    for (int i = 0; i < 9; i++) src[m] = i, dst[m++] = i + 1;
    src[m] = 10, dst[m++] = 9;
    hsdag_graph *g = build(11, NULL, m, src, dst);
    hsdag_coarse *c = NULL;
    hsdag_err e = {0};
    hsdag_coarsen_opts o = {.max_ops = 3};
    CHECK_EQ_INT(hsdag_coarsen_create_opts(&c, g, &o, &e), 0);
    if (c) {
        CHECK_EQ_INT(c->n_groups, 5);
        for (int v = 0; v < 9; v++) CHECK_EQ_INT(c->group_of[v], c->group_of[v - v % 3]);
        CHECK(c->group_of[0] != c->group_of[3] && c->group_of[3] != c->group_of[6]);
        for (int32_t k = 0; k < c->n_edges; k++) CHECK(c->edge_src[k] < c->out_dst[k]);
    }
    hsdag_coarsen_free(c);
    /* byte limit: every op weighs 1, limit 2: pairs */
    double bytes[11] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    hsdag_coarsen_opts ob = {.bytes = bytes, .max_bytes = 2};
    CHECK_EQ_INT(hsdag_coarsen_create_opts(&c, g, &ob, &e), 0);
    if (c) CHECK_EQ_INT(c->group_of[0] == c->group_of[1] && c->group_of[1] != c->group_of[2], 1);
    hsdag_coarsen_free(c);
    /* colocate: ops 2 and 10 in one class join their groups; ids renumbered by first op */
    int32_t col[11];
    for (int v = 0; v < 11; v++) col[v] = -1;
    col[2] = col[10] = 5;
    hsdag_coarsen_opts oc = {.max_ops = 3, .colocate = col};
    CHECK_EQ_INT(hsdag_coarsen_create_opts(&c, g, &oc, &e), 0);
    if (c) {
        CHECK_EQ_INT(c->n_groups, 4);
        CHECK_EQ_INT(c->group_of[2], c->group_of[10]);
        CHECK_EQ_INT(c->group_of[0], 0);
        /* undirected pairs are unique and ordered */
        for (int32_t k = 0; k < c->n_und; k++) CHECK(c->und_u[k] < c->und_v[k]);
        for (int32_t k = 1; k < c->n_und; k++)
            CHECK(c->und_u[k - 1] < c->und_u[k] ||
                  (c->und_u[k - 1] == c->und_u[k] && c->und_v[k - 1] < c->und_v[k]));
    }
    hsdag_coarsen_free(c);
    /* max_groups 2: 11 ops in rule groups {0..8}, {9}, {10} -> runs of 2 consecutive groups */
    hsdag_coarsen_opts og = {.max_groups = 2};
    CHECK_EQ_INT(hsdag_coarsen_create_opts(&c, g, &og, &e), 0);
    if (c) {
        CHECK(c->n_groups <= 2);
        for (int32_t k = 0; k < c->n_edges; k++) CHECK(c->edge_src[k] < c->out_dst[k]);
    }
    hsdag_coarsen_free(c);
    hsdag_graph_free(g);
}

static void test_struct_approx(void)
{
    /* the near-linear path: closeness sampled with every node a pivot equals the exact one; NFD with an
     * unreachable radius cap equals the exact one */
    int src[] = {0, 1, 1, 2, 3, 4, 5, 5}, dst[] = {1, 2, 3, 4, 4, 5, 6, 7};
    hsdag_graph *g = build(8, NULL, 8, src, dst);
    hsdag_err e = {0};
    double n1[8], c1[8], n2[8], c2[8];
    hsdag_struct_opts o = hsdag_struct_opts_default();
    CHECK_EQ_INT(hsdag_struct_measures_opts(n1, c1, 8, g->out_off, g->out_dst, g->in_off, g->in_src, &o, &e),
                 0);
    o.exact_max = 0;
    o.pivots = 8;
    o.nfd_radius = 100;
    o.nfd_visits = 100;
    CHECK_EQ_INT(hsdag_struct_measures_opts(n2, c2, 8, g->out_off, g->out_dst, g->in_off, g->in_src, &o, &e),
                 0);
    for (int v = 0; v < 8; v++) {
        CHECK_NEAR(n1[v], n2[v], 1e-12);
        CHECK_NEAR(c1[v], c2[v], 1e-12);
    }
    hsdag_graph_free(g);
}

static void test_struct_measures(void)
{
    /* path 0 -> 1 -> 2: networkx closeness_centrality = {0: 0, 1: 0.5, 2: 2/3} */
    int32_t oo[] = {0, 1, 2, 2}, od[] = {1, 2}, io[] = {0, 0, 1, 2}, is[] = {0, 1};
    double nfd[3], clo[3];
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_struct_measures(nfd, clo, 3, oo, od, io, is, &e), 0);
    CHECK_NEAR(clo[0], 0.0, 1e-12);
    CHECK_NEAR(clo[1], 0.5, 1e-12);
    CHECK_NEAR(clo[2], 2.0 / 3.0, 1e-12);
    /* NFD of node 0: N(1) = 2, N(2) = 3 -> slope log(3/2) / log 2; node 1 has only radius 1 -> 0 */
    CHECK_NEAR(nfd[0], log(1.5) / log(2.0), 1e-12);
    CHECK_NEAR(nfd[1], 0.0, 1e-12);

    /* star 0 -> {1,2,3,4}: leaf: N(1) = 2, N(2) = 5 -> log(2.5) / log 2; closeness of a leaf = 1 * (1/4) */
    int32_t so[] = {0, 4, 4, 4, 4, 4}, sd[] = {1, 2, 3, 4}, si_off[] = {0, 0, 1, 2, 3, 4},
            si[] = {0, 0, 0, 0};
    double n5[5], c5[5];
    CHECK_EQ_INT(hsdag_struct_measures(n5, c5, 5, so, sd, si_off, si, &e), 0);
    CHECK_NEAR(n5[0], 0.0, 1e-12);
    CHECK_NEAR(n5[3], log(2.5) / log(2.0), 1e-12);
    CHECK_NEAR(c5[3], 0.25, 1e-12);
    CHECK_NEAR(c5[0], 0.0, 1e-12);
}

static void test_features(void)
{
    const char *ops[] = {"Parameter", "Conv", "Relu", "MaxPool", "Add", "Result"};
    int src[] = {0, 1, 1, 2, 3, 4}, dst[] = {1, 2, 3, 4, 4, 5};
    hsdag_graph *g = build(6, ops, 6, src, dst);
    hsdag_coarse *c = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_coarsen_create(&c, g, 0, &e), 0);
    hsdag_features_config fc = hsdag_features_config_default();
    hsdag_features f;
    CHECK_EQ_INT(hsdag_features_compute(&f, g, c, &fc, &e), 0);
    CHECK_EQ_INT(f.n, 2);
    int32_t ow = hsdag_features_kind_width(HSDAG_FEAT_OPTYPE);
    CHECK_EQ_INT(f.dim, ow + 4 + 1 + 2 + 1 + 1);
    /* group 0 = {Parameter, Conv, Relu, MaxPool}: each op-name slot 1/4, opclass sums to 1 */
    const float *r0 = f.x + f.kind_off[HSDAG_FEAT_OPTYPE];
    double cls = 0, names = 0;
    for (int i = 0; i < HSDAG_OP_CLASS_COUNT_; i++) cls += r0[i];
    for (int i = HSDAG_OP_CLASS_COUNT_; i < ow; i++) names += r0[i];
    CHECK_NEAR(cls, 1.0, 1e-6);
    CHECK_NEAR(names, 1.0, 1e-6);
    CHECK_NEAR(r0[HSDAG_OP_CLASS_COUNT_ + hsdag_features_op_index("Conv")], 0.25, 1e-6);
    CHECK_EQ_INT(hsdag_features_op_index("Convolution"), hsdag_features_op_index("conv"));
    CHECK(hsdag_features_op_index("NoSuchOp") != hsdag_features_op_index("Relu"));
    /* shape: dims {1, 64, 8, 8} -> log1p */
    CHECK_NEAR(f.x[f.kind_off[HSDAG_FEAT_SHAPE] + 1], log1p(64.0), 1e-5);
    CHECK_NEAR(f.x[f.dim + f.kind_off[HSDAG_FEAT_ID]], 1.0, 1e-7);
    CHECK_NEAR(f.x[f.dim + f.kind_off[HSDAG_FEAT_DEGREE]], log1p(1.0), 1e-6);
    CHECK_NEAR(f.x[f.dim + f.kind_off[HSDAG_FEAT_CLOSENESS]], 1.0, 1e-6);
    hsdag_features_free(&f);

    fc.kinds = HSDAG_FEAT_ALL & ~HSDAG_FEAT_STRUCT & ~(1u << HSDAG_FEAT_ID);
    CHECK_EQ_INT(hsdag_features_compute(&f, g, c, &fc, &e), 0);
    CHECK_EQ_INT(f.dim, ow + 4);
    CHECK_EQ_INT(f.kind_dim[HSDAG_FEAT_NFD], 0);
    hsdag_features_free(&f);
    fc.kinds = 0;
    CHECK_EQ_INT(hsdag_features_compute(&f, g, c, &fc, &e), HSDAG_EINVAL);
    hsdag_coarsen_free(c);
    hsdag_graph_free(g);
}

static void test_parse(void)
{
    hsdag_err e = {0};
    hsdag_gpn_parse_result r;
    /* path 0-1-2-3, scores .9 .1 .8: dominant edges e0 (nodes 0, 1) and e2 (nodes 2, 3) */
    int32_t u1[] = {0, 1, 2}, v1[] = {1, 2, 3};
    float s1[] = {0.9f, 0.1f, 0.8f};
    CHECK_EQ_INT(hsdag_gpn_parse(&r, 4, 3, u1, v1, s1, &e), 0);
    CHECK_EQ_INT(r.n_clusters, 2);
    CHECK_EQ_INT(r.cluster[0], 0);
    CHECK_EQ_INT(r.cluster[1], 0);
    CHECK_EQ_INT(r.cluster[2], 1);
    CHECK_EQ_INT(r.cluster[3], 1);
    CHECK_EQ_INT(r.m_pooled, 1);
    CHECK_EQ_INT(r.pu[0], 0);
    CHECK_EQ_INT(r.pv[0], 1);
    CHECK_EQ_INT(r.intra[1], 0);
    CHECK_EQ_INT(r.intra_count[0], 1);
    hsdag_gpn_parse_free(&r);

    /* chain 0-1-2-3-4, scores .2 .9 .3 .95: dominant e0 (node 0), e1 (1, 2), e3 (3, 4);
     * by score: e3 -> cluster 0 = {3, 4}, e1 -> cluster 1 = {0, 1, 2} (e0 joins it); isolated 5 -> 2 */
    int32_t u2[] = {0, 1, 2, 3}, v2[] = {1, 2, 3, 4};
    float s2[] = {0.2f, 0.9f, 0.3f, 0.95f};
    CHECK_EQ_INT(hsdag_gpn_parse(&r, 6, 4, u2, v2, s2, &e), 0);
    CHECK_EQ_INT(r.n_clusters, 3);
    int want2[] = {1, 1, 1, 0, 0, 2};
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(r.cluster[i], want2[i]);
    CHECK_EQ_INT(r.intra_count[1], 2);
    CHECK_EQ_INT(r.intra_count[0], 1);
    CHECK_EQ_INT(r.intra_count[2], 0);
    CHECK_EQ_INT(r.m_pooled, 1); /* e2 joins clusters 1 and 0 */
    hsdag_gpn_parse_free(&r);

    /* ties: triangle with equal scores, node 0 and 1 keep e0 (lowest index), node 2 keeps e1:
     * all three in one cluster; two triangles joined by a weak edge stay two clusters */
    int32_t u3[] = {0, 1, 0, 3, 4, 3, 2}, v3[] = {1, 2, 2, 4, 5, 5, 3};
    float s3[] = {0.5f, 0.5f, 0.5f, 0.7f, 0.7f, 0.7f, 0.1f};
    CHECK_EQ_INT(hsdag_gpn_parse(&r, 6, 7, u3, v3, s3, &e), 0);
    CHECK_EQ_INT(r.n_clusters, 2);
    int want3[] = {1, 1, 1, 0, 0, 0};
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(r.cluster[i], want3[i]);
    CHECK_EQ_INT(r.intra_count[0], 3);
    CHECK_EQ_INT(r.intra[6], 0);
    CHECK_EQ_INT(r.m_pooled, 1);
    hsdag_gpn_parse_free(&r);

    /* NaN-scored edges are never dominant: on path 0-1-2-3 with scores .9 NaN NaN, node 2 is kept apart
     * (a singleton after the component {0, 1}); node 3, whose only edge is NaN, too; both pooled edges remain */
    float s4[] = {0.9f, NAN, NAN};
    CHECK_EQ_INT(hsdag_gpn_parse(&r, 4, 3, u1, v1, s4, &e), 0);
    CHECK_EQ_INT(r.n_clusters, 3);
    int want4[] = {0, 0, 1, 2};
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(r.cluster[i], want4[i]);
    CHECK_EQ_INT(r.m_pooled, 2);
    CHECK_EQ_INT(r.intra[0], 1);
    CHECK_EQ_INT(r.intra[1] + r.intra[2], 0);
    hsdag_gpn_parse_free(&r);
    /* every edge NaN: all singletons in node order */
    float s5[] = {NAN, NAN, NAN};
    CHECK_EQ_INT(hsdag_gpn_parse(&r, 4, 3, u1, v1, s5, &e), 0);
    CHECK_EQ_INT(r.n_clusters, 4);
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(r.cluster[i], i);
    CHECK_EQ_INT(r.m_pooled, 3);
    hsdag_gpn_parse_free(&r);

    /* bad input */
    int32_t ub[] = {0}, vb[] = {0};
    float sb[] = {1};
    CHECK_EQ_INT(hsdag_gpn_parse(&r, 2, 1, ub, vb, sb, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "self-loop") != NULL);
}

/* The bundled torchvision ResNet-50 / Inception-V3 exports: every group is an out-tree whose non-root members
 * have in-degree 1 with the predecessor in the group, roots have in-degree != 1, the group DAG is ordered,
 * features are finite. Group counts are this importer's graphs (169 ops -> 111 groups, 316 -> 196). */
static void test_real(const char *path, int32_t want_nodes, int32_t want_groups)
{
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    CHECK_EQ_INT(hsdag_read_file(&buf, &len, path, 0, &e), 0);
    CHECK_EQ_INT(hsdag_onnx_read(&g, buf, len, path, &e), 0);
    hsdag_free(buf);
    if (!g) return;
    CHECK_EQ_INT(g->n_nodes, want_nodes);
    hsdag_coarse *c = NULL;
    CHECK_EQ_INT(hsdag_coarsen_create(&c, g, 0, &e), 0);
    CHECK_EQ_INT(c->n_groups, want_groups);
    int bad = 0;
    for (int32_t k = 0; k < c->n_groups; k++)
        for (int32_t j = c->off[k]; j < c->off[k + 1]; j++) {
            int32_t v = c->ops[j], indeg = g->in_off[v + 1] - g->in_off[v];
            if (j == c->off[k])
                bad += indeg == 1;
            else
                bad += indeg != 1 || c->group_of[g->in_src[g->in_off[v]]] != k;
        }
    CHECK_EQ_INT(bad, 0);
    for (int32_t k = 0; k < c->n_edges; k++) CHECK(c->edge_src[k] < c->out_dst[k]);
    int32_t roots = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) roots += (g->in_off[v + 1] - g->in_off[v]) != 1;
    CHECK_EQ_INT(roots, c->n_groups);
    hsdag_features_config fc = hsdag_features_config_default();
    hsdag_features f;
    CHECK_EQ_INT(hsdag_features_compute(&f, g, c, &fc, &e), 0);
    int finite = 1;
    for (size_t i = 0; i < (size_t)f.n * (size_t)f.dim; i++) finite &= isfinite(f.x[i]) != 0;
    CHECK(finite);
    hsdag_features_free(&f);
    hsdag_coarsen_free(c);
    hsdag_graph_free(g);
}

int main(void)
{
    test_coarsen_opts();
    test_struct_approx();
    test_real("tests/data/onnx/resnet50.onnx", 169, 111);
    test_real("tests/data/onnx/inception_v3.onnx", 316, 196);
    test_coarsen_diamond();
    test_coarsen_two_sources();
    test_struct_measures();
    test_features();
    test_parse();
    return check_summary("test_coarsen");
}
