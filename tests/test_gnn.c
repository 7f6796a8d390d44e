/* test_gnn.c - graph kernels: adjacency construction on hand-made graphs, sparse aggregation,
 * gather and segment pooling, the GCN/GAT/GIN/SAGE layers against dense double references with
 * central finite differences, and a composed network checked end to end.
 * Not here: dense kernels, params, Adam, sampler (test_nn.c). Entry point: main.
 * Tolerances: forward float vs dense double reference <= 1e-5 relative; gradients <= GC_TOL (1e-4)
 * relative to the tensor's largest gradient (see gradcheck.h). */
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "hsdag/nn.h"

#define FWD_TOL 1e-5

/* The test graph: 8 nodes, a small DAG with a duplicate edge and a self-edge (both ignored) and an
 * isolated node 7. Edges src -> dst. */
enum { GN = 8, GM = 11 };
static const int32_t g_src[GM] = {0, 0, 1, 2, 2, 3, 4, 1, 0, 5, 3};
static const int32_t g_dst[GM] = {1, 2, 3, 3, 4, 5, 5, 3, 6, 6, 3};

/* dense receiver-major adjacency A[i][j] = 1 if j sends to i (no diagonal) */
static void dense_adj(double *A, int sym)
{
    memset(A, 0, sizeof(double) * GN * GN);
    for (int k = 0; k < GM; k++) {
        int s = g_src[k], d = g_dst[k];
        if (s == d) continue;
        A[d * GN + s] = 1;
        if (sym) A[s * GN + d] = 1;
    }
}

static void test_adj(void)
{
    hsdag_err e = {0};
    hsdag_nn_adj *a = NULL, *b = NULL, *s = NULL;
    CHECK_EQ_INT(hsdag_nn_adj_create(&a, GN, GM, g_src, g_dst, 0, &e), 0);
    /* directed: unique non-self edges = 9, plus 8 self entries */
    CHECK_EQ_INT(a->nnz, 9 + GN);
    /* row 3 receives from 1 and 2, plus self: [1, 2, 3] */
    CHECK_EQ_INT(a->off[4] - a->off[3], 3);
    CHECK(a->idx[a->off[3]] == 1 && a->idx[a->off[3] + 1] == 2 && a->idx[a->off[3] + 2] == 3);
    CHECK_EQ_INT(a->self[3], a->off[3] + 2);
    CHECK_EQ_INT(a->off[1] - a->off[0], 1); /* node 0 receives nothing */
    CHECK_EQ_INT(a->off[8] - a->off[7], 1); /* isolated */
    /* weights: row 3 has d=3, node 1 has d=2 (receives from 0), node 3 itself d=3 */
    CHECK_NEAR(a->w_gcn[a->off[3]], 1.0 / sqrt(3.0 * 2.0), 1e-7);
    CHECK_NEAR(a->w_gcn[a->self[3]], 1.0 / 3.0, 1e-7);
    CHECK(a->w_sum[a->self[3]] == 0.0f && a->w_sum[a->off[3]] == 1.0f);
    CHECK_NEAR(a->w_mean[a->off[3]], 0.5, 1e-7);
    CHECK(a->w_mean[a->self[7]] == 0.0f);
    /* symmetric: 18 entries + 8 self; row 3 = [1, 2, 3, 5] */
    CHECK_EQ_INT(hsdag_nn_adj_create(&s, GN, GM, g_src, g_dst, HSDAG_NN_ADJ_SYMMETRIC, &e), 0);
    CHECK_EQ_INT(s->nnz, 18 + GN);
    CHECK_EQ_INT(s->off[4] - s->off[3], 4);
    CHECK(s->idx[s->off[3] + 3] == 5);
    int sym = 1; /* w_gcn symmetric as a matrix */
    for (int i = 0; i < GN; i++)
        for (int k = s->off[i]; k < s->off[i + 1]; k++) {
            int j = s->idx[k], found = 0;
            for (int q = s->off[j]; q < s->off[j + 1]; q++)
                if (s->idx[q] == i) found = s->w_gcn[q] == s->w_gcn[k];
            sym &= found;
        }
    CHECK(sym);
    /* from a CSR of out-edges: the same structure */
    int32_t off[GN + 1] = {0}, dst[GM], cur[GN + 1];
    for (int k = 0; k < GM; k++) off[g_src[k] + 1]++;
    for (int i = 0; i < GN; i++) off[i + 1] += off[i];
    memcpy(cur, off, sizeof cur);
    for (int k = 0; k < GM; k++) dst[cur[g_src[k]]++] = g_dst[k];
    CHECK_EQ_INT(hsdag_nn_adj_create_csr(&b, GN, off, dst, HSDAG_NN_ADJ_SYMMETRIC, &e), 0);
    CHECK(b->nnz == s->nnz && memcmp(b->idx, s->idx, (size_t)s->nnz * 4) == 0 &&
          memcmp(b->w_gcn, s->w_gcn, (size_t)s->nnz * 4) == 0);
    hsdag_nn_adj_free(b);
    /* bad input */
    int32_t bs[1] = {0}, bd[1] = {9};
    CHECK_EQ_INT(hsdag_nn_adj_create(&b, GN, 1, bs, bd, 0, &e), HSDAG_EINVAL);
    CHECK(b == NULL && strstr(e.msg, "edge 0") != NULL);
    CHECK_EQ_INT(hsdag_nn_adj_create(&b, 0, 0, bs, bd, 0, &e), HSDAG_EINVAL);
    int32_t badoff[3] = {0, 2, 1};
    CHECK_EQ_INT(hsdag_nn_adj_create_csr(&b, 2, badoff, dst, 0, &e), HSDAG_EINVAL);
    for (long f = 1; f <= 3; f++) {
        hsdag_alloc_fail_after(f);
        int rc = hsdag_nn_adj_create(&b, GN, GM, g_src, g_dst, 0, &e);
        hsdag_alloc_fail_after(0);
        CHECK_EQ_INT(rc, HSDAG_ENOMEM);
        CHECK(b == NULL);
    }
    /* a graph with no edges: only self entries */
    CHECK_EQ_INT(hsdag_nn_adj_create(&b, 3, 0, NULL, NULL, HSDAG_NN_ADJ_SYMMETRIC, &e), 0);
    CHECK(b->nnz == 3 && b->w_gcn[1] == 1.0f);
    hsdag_nn_adj_free(b);
    hsdag_nn_adj_free(a);
    hsdag_nn_adj_free(s);
    hsdag_nn_adj_free(NULL);
}

/* random multigraphs (duplicates, self-edges) against a dense construction */
static void test_adj_random(hsdag_rng *r)
{
    enum { N = 40, M = 300 };
    int32_t src[M], dst[M];
    static unsigned char Dm[N][N];
    for (int sym = 0; sym <= 1; sym++) {
        for (int k = 0; k < M; k++) {
            src[k] = (int32_t)hsdag_rng_below(r, N);
            dst[k] = (int32_t)hsdag_rng_below(r, k % 7 == 0 ? 5 : N); /* crowd a few receivers */
        }
        memset(Dm, 0, sizeof Dm);
        for (int k = 0; k < M; k++) {
            Dm[dst[k]][src[k]] = 1;
            if (sym) Dm[src[k]][dst[k]] = 1;
        }
        for (int i = 0; i < N; i++) Dm[i][i] = 1;
        hsdag_err e = {0};
        hsdag_nn_adj *a = NULL;
        CHECK_EQ_INT(hsdag_nn_adj_create(&a, N, M, src, dst, sym ? HSDAG_NN_ADJ_SYMMETRIC : 0, &e), 0);
        int ok = 1, total = 0;
        for (int i = 0; i < N; i++) {
            int k = a->off[i], di = 0;
            for (int j = 0; j < N; j++) di += Dm[i][j];
            for (int j = 0; j < N; j++) {
                if (!Dm[i][j]) continue;
                total++;
                int dj = 0;
                for (int q = 0; q < N; q++) dj += Dm[j][q];
                ok &= k < a->off[i + 1] && a->idx[k] == j;
                ok &= fabs(a->w_gcn[k] - 1.0 / sqrt((double)di * dj)) <= 1e-7;
                ok &= a->w_mean[k] == (j == i ? 0.0f : 1.0f / (float)(di - 1));
                if (j == i) ok &= a->self[i] == k;
                k++;
            }
            ok &= k == a->off[i + 1];
        }
        CHECK(ok);
        CHECK_EQ_INT(a->nnz, total);
        hsdag_nn_adj_free(a);
    }
}

/* ---- simple kernels: spmm, gather, segment sum/mean ---- */
typedef struct sctx {
    int kind; /* 0 spmm (dense W), 1 gather, 2 segment sum, 3 segment mean */
    int32_t n, d, m, nseg;
    const double *W; /* dense (n, n) for spmm */
    const int32_t *idx;
    double *x, *c, *y;
    size_t ny;
} sctx;

static double sloss(void *p)
{
    sctx *s = p;
    memset(s->y, 0, s->ny * sizeof(double));
    if (s->kind == 0) {
        for (int i = 0; i < s->n; i++)
            for (int j = 0; j < s->n; j++)
                for (int f = 0; f < s->d; f++) s->y[i * s->d + f] += s->W[i * s->n + j] * s->x[j * s->d + f];
    } else if (s->kind == 1) {
        for (int k = 0; k < s->m; k++)
            for (int f = 0; f < s->d; f++) s->y[k * s->d + f] = s->x[s->idx[k] * s->d + f];
    } else {
        double cnt[16] = {0};
        for (int i = 0; i < s->n; i++) {
            cnt[s->idx[i]] += 1;
            for (int f = 0; f < s->d; f++) s->y[s->idx[i] * s->d + f] += s->x[i * s->d + f];
        }
        if (s->kind == 3)
            for (int c = 0; c < s->nseg; c++)
                for (int f = 0; f < s->d; f++) s->y[c * s->d + f] /= cnt[c] > 0 ? cnt[c] : 1;
    }
    double L = 0;
    for (size_t i = 0; i < s->ny; i++) L += s->c[i] * s->y[i];
    return L;
}

static void test_simple_kernels(hsdag_rng *r)
{
    enum { D = 3 };
    hsdag_err e = {0};
    hsdag_nn_adj *a = NULL;
    hsdag_nn_adj_create(&a, GN, GM, g_src, g_dst, 0, &e); /* directed: Â is not symmetric */
    float x[GN * D], y[GN * D], cf[GN * D], dx[GN * D];
    double xd[GN * D], cd[GN * D], yd[GN * D], W[GN * GN] = {0};
    gc_rand_f(x, GN * D, r, -1, 1);
    gc_rand_f(cf, GN * D, r, -1, 1);
    gc_f2d(xd, x, GN * D);
    gc_f2d(cd, cf, GN * D);
    for (int i = 0; i < GN; i++)
        for (int k = a->off[i]; k < a->off[i + 1]; k++) W[i * GN + a->idx[k]] = a->w_gcn[k];
    sctx s = {.kind = 0, .n = GN, .d = D, .W = W, .x = xd, .c = cd, .y = yd, .ny = GN * D};
    hsdag_nn_spmm_forward(y, x, a, a->w_gcn, D);
    sloss(&s);
    CHECK(gc_maxrel(y, yd, GN * D, 1) <= FWD_TOL);
    memset(dx, 0, sizeof dx);
    hsdag_nn_spmm_backward(dx, cf, a, a->w_gcn, D);
    CHECK(gc_check("spmm", xd, GN * D, dx, sloss, &s) <= GC_TOL);

    /* gather 5 rows with a repeat (gradients add up) */
    int32_t gi[5] = {3, 0, 3, 7, 1};
    s = (sctx){.kind = 1, .n = GN, .d = D, .m = 5, .idx = gi, .x = xd, .c = cd, .y = yd, .ny = 5 * D};
    hsdag_nn_gather_forward(y, x, gi, 5, D);
    sloss(&s);
    CHECK(gc_maxrel(y, yd, 5 * D, 1) <= FWD_TOL);
    memset(dx, 0, sizeof dx);
    hsdag_nn_gather_backward(dx, cf, gi, 5, D);
    CHECK(gc_check("gather", xd, GN * D, dx, sloss, &s) <= GC_TOL);

    /* segments: 8 rows into 4 clusters, cluster 2 empty */
    int32_t seg[GN] = {0, 1, 1, 3, 0, 3, 3, 1};
    float inv[4];
    s = (sctx){.kind = 2, .n = GN, .d = D, .nseg = 4, .idx = seg, .x = xd, .c = cd, .y = yd, .ny = 4 * D};
    hsdag_nn_segment_sum_forward(y, x, seg, GN, D, 4);
    sloss(&s);
    CHECK(gc_maxrel(y, yd, 4 * D, 1) <= FWD_TOL);
    CHECK(y[2 * D] == 0.0f);
    memset(dx, 0, sizeof dx);
    hsdag_nn_segment_sum_backward(dx, cf, seg, GN, D);
    CHECK(gc_check("segment_sum", xd, GN * D, dx, sloss, &s) <= GC_TOL);
    s.kind = 3;
    hsdag_nn_segment_mean_forward(y, inv, x, seg, GN, D, 4);
    sloss(&s);
    CHECK(gc_maxrel(y, yd, 4 * D, 1) <= FWD_TOL);
    CHECK(inv[2] == 0.0f && fabsf(inv[1] - 1.0f / 3.0f) < 1e-7f);
    memset(dx, 0, sizeof dx);
    hsdag_nn_segment_mean_backward(dx, cf, inv, seg, GN, D);
    CHECK(gc_check("segment_mean", xd, GN * D, dx, sloss, &s) <= GC_TOL);
    /* mean of all rows (seg NULL) */
    float all[D], inv1;
    hsdag_nn_segment_mean_forward(all, &inv1, x, NULL, GN, D, 1);
    double want = 0;
    for (int i = 0; i < GN; i++) want += x[i * D + 1];
    CHECK_NEAR(all[1], want / GN, 1e-6);
    hsdag_nn_adj_free(a);
}

/* ---- GNN layers against dense double references ---- */
typedef struct gctx {
    hsdag_nn_gnn_kind kind;
    int32_t n, in, out, heads;
    double slope, eps_fixed;
    const double *A;
    double *x, *pv; /* input and a double copy of the whole parameter block */
    size_t ow, ob, oa_src, oa_dst, ow2, ob2, oeps;
    int has_eps;
    double *c, *y;
    size_t ny;
} gctx;

static void ref_lin(double *y, const double *x, const double *w, const double *b, int n, int in, int out)
{
    for (int i = 0; i < n; i++)
        for (int o = 0; o < out; o++) {
            double s = b ? b[o] : 0;
            for (int j = 0; j < in; j++) s += x[i * in + j] * w[o * in + j];
            y[i * out + o] = s;
        }
}

static void ref_gnn(gctx *g, double *y, const double *x)
{
    int n = g->n, in = g->in, out = g->out;
    const double *A = g->A, *W = g->pv + g->ow, *B = g->pv + g->ob;
    static double z[64 * 64], h[64 * 64], r2[64 * 64];
    switch (g->kind) {
    case HSDAG_NN_GNN_GCN: {
        double deg[64];
        for (int i = 0; i < n; i++) {
            deg[i] = 1;
            for (int j = 0; j < n; j++) deg[i] += A[i * n + j];
        }
        ref_lin(z, x, W, NULL, n, in, out);
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out; o++) {
                double s = B[o];
                for (int j = 0; j < n; j++) {
                    double aij = A[i * n + j] + (i == j);
                    if (aij != 0) s += aij / sqrt(deg[i] * deg[j]) * z[j * out + o];
                }
                y[i * out + o] = s;
            }
        break;
    }
    case HSDAG_NN_GNN_GAT: {
        int H = g->heads, F = out / H;
        const double *as = g->pv + g->oa_src, *ad = g->pv + g->oa_dst;
        ref_lin(z, x, W, NULL, n, in, out);
        for (int i = 0; i < n; i++)
            for (int hh = 0; hh < H; hh++) {
                double ev[64], mx = -INFINITY, sum = 0;
                for (int j = 0; j < n; j++) {
                    ev[j] = -INFINITY;
                    if (!(A[i * n + j] != 0 || i == j)) continue;
                    double s = 0;
                    for (int f = 0; f < F; f++)
                        s += ad[hh * F + f] * z[i * out + hh * F + f] +
                             as[hh * F + f] * z[j * out + hh * F + f];
                    ev[j] = s > 0 ? s : g->slope * s;
                    if (ev[j] > mx) mx = ev[j];
                }
                for (int j = 0; j < n; j++) sum += ev[j] == -INFINITY ? 0 : exp(ev[j] - mx);
                for (int f = 0; f < F; f++) {
                    double s = B[hh * F + f];
                    for (int j = 0; j < n; j++)
                        if (ev[j] != -INFINITY) s += exp(ev[j] - mx) / sum * z[j * out + hh * F + f];
                    y[i * out + hh * F + f] = s;
                }
            }
        break;
    }
    case HSDAG_NN_GNN_GIN: {
        double eps = g->has_eps ? g->pv[g->oeps] : g->eps_fixed;
        for (int i = 0; i < n; i++)
            for (int f = 0; f < in; f++) {
                double s = (1 + eps) * x[i * in + f];
                for (int j = 0; j < n; j++) s += A[i * n + j] * x[j * in + f];
                h[i * in + f] = s;
            }
        ref_lin(r2, h, W, B, n, in, out);
        for (int i = 0; i < n * out; i++) r2[i] = r2[i] > 0 ? r2[i] : 0;
        ref_lin(y, r2, g->pv + g->ow2, g->pv + g->ob2, n, out, out);
        break;
    }
    case HSDAG_NN_GNN_SAGE:
        for (int i = 0; i < n; i++) {
            double cnt = 0;
            for (int j = 0; j < n; j++) cnt += A[i * n + j];
            for (int f = 0; f < in; f++) {
                double s = 0;
                for (int j = 0; j < n; j++) s += A[i * n + j] * x[j * in + f];
                h[i * in + f] = cnt > 0 ? s / cnt : 0;
            }
        }
        ref_lin(y, x, W, B, n, in, out);
        ref_lin(z, h, g->pv + g->ow2, NULL, n, in, out);
        for (int i = 0; i < n * out; i++) y[i] += z[i];
        break;
    }
}

static double gloss(void *p)
{
    gctx *g = p;
    ref_gnn(g, g->y, g->x);
    double L = 0;
    for (size_t i = 0; i < g->ny; i++) L += g->c[i] * g->y[i];
    return L;
}

static size_t off_of(hsdag_nn_params *p, const char *name, int *found)
{
    int32_t id = hsdag_nn_params_find(p, name);
    if (found) *found = id >= 0;
    return id >= 0 ? hsdag_nn_params_offset(p, id) : 0;
}

static void test_gnn_layer(hsdag_rng *r, hsdag_nn_gnn_kind kind, int32_t in, int32_t out, int32_t heads,
                           int sym)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_gnn *g = NULL;
    hsdag_nn_adj *a = NULL;
    char label[64];
    snprintf(label, sizeof label, "%s in=%d out=%d heads=%d sym=%d", hsdag_nn_gnn_kind_name(kind), in, out,
             heads, sym);
    hsdag_nn_params_create(&p, NULL);
    hsdag_nn_gnn_config cfg = hsdag_nn_gnn_config_default();
    cfg.kind = kind;
    cfg.in = in;
    cfg.out = out;
    cfg.heads = heads;
    cfg.gin_train_eps = 1;
    cfg.gin_eps = 0.3f;
    CHECK_EQ_INT(hsdag_nn_gnn_create(&g, p, "L", &cfg, &e), 0);
    hsdag_nn_params_alloc(p, r, &e);
    /* biases are zero-initialised for GCN/GAT: make them random so they are exercised */
    float *pvf = hsdag_nn_params_value(p, -1);
    size_t cnt = hsdag_nn_params_count(p);
    for (int32_t t = 0; t < hsdag_nn_params_n_tensors(p); t++) {
        const char *nm = hsdag_nn_params_name(p, t);
        if (strstr(nm, ".b") || strstr(nm, ".a_")) {
            size_t o = hsdag_nn_params_offset(p, t),
                   k = (size_t)hsdag_nn_params_rows(p, t) * hsdag_nn_params_cols(p, t);
            gc_rand_f(pvf + o, k, r, -0.5, 0.5);
        }
    }
    CHECK_EQ_INT(hsdag_nn_adj_create(&a, GN, GM, g_src, g_dst, sym ? HSDAG_NN_ADJ_SYMMETRIC : 0, &e), 0);
    size_t nx = (size_t)GN * in, ny = (size_t)GN * out, nc = hsdag_nn_gnn_cache_floats(g, a->n, a->nnz);
    float *x = malloc(nx * 4), *y = malloc(ny * 4), *cf = malloc(ny * 4), *dx = calloc(nx, 4);
    float *cache = malloc((nc ? nc : 1) * 4);
    double *xd = malloc(nx * 8), *cd = malloc(ny * 8), *yd = malloc(ny * 8), *pv = malloc(cnt * 8);
    double A[GN * GN];
    dense_adj(A, sym);
    gc_rand_f(x, nx, r, -1, 1);
    gc_rand_f(cf, ny, r, -1, 1);
    gc_f2d(xd, x, nx);
    gc_f2d(cd, cf, ny);
    gc_f2d(pv, pvf, cnt);
    int fe = 0;
    gctx c = {.kind = kind,
              .n = GN,
              .in = in,
              .out = out,
              .heads = heads,
              .slope = 0.2,
              .eps_fixed = 0.3,
              .A = A,
              .x = xd,
              .pv = pv,
              .c = cd,
              .y = yd,
              .ny = ny};
    c.ow = off_of(p,
                  kind == HSDAG_NN_GNN_GIN    ? "L.w1"
                  : kind == HSDAG_NN_GNN_SAGE ? "L.w_self"
                                              : "L.w",
                  NULL);
    c.ob = off_of(p, kind == HSDAG_NN_GNN_GIN ? "L.b1" : "L.b", NULL);
    c.oa_src = off_of(p, "L.a_src", NULL);
    c.oa_dst = off_of(p, "L.a_dst", NULL);
    c.ow2 = off_of(p, kind == HSDAG_NN_GNN_SAGE ? "L.w_neigh" : "L.w2", NULL);
    c.ob2 = off_of(p, "L.b2", NULL);
    c.oeps = off_of(p, "L.eps", &fe);
    c.has_eps = fe;
    CHECK_EQ_INT(hsdag_nn_gnn_forward(g, p, y, cache, x, a, &e), 0);
    ref_gnn(&c, yd, xd);
    double fe_err = gc_maxrel(y, yd, ny, 1);
    if (fe_err > FWD_TOL) fprintf(stderr, "  %s: forward rel err %.3g\n", label, fe_err);
    CHECK(fe_err <= FWD_TOL);
    hsdag_nn_params_zero_grad(p);
    float *gr = hsdag_nn_params_grad(p, -1);
    for (size_t i = 0; i < cnt; i++) gr[i] = 0.25f; /* backward must accumulate */
    CHECK_EQ_INT(hsdag_nn_gnn_backward(g, p, dx, cf, cache, x, a, &e), 0);
    for (size_t i = 0; i < cnt; i++) gr[i] -= 0.25f;
    CHECK(gc_check(label, xd, nx, dx, gloss, &c) <= GC_TOL);
    for (int32_t t = 0; t < hsdag_nn_params_n_tensors(p); t++) {
        char what[128];
        snprintf(what, sizeof what, "%s %s", label, hsdag_nn_params_name(p, t));
        size_t o = hsdag_nn_params_offset(p, t),
               k = (size_t)hsdag_nn_params_rows(p, t) * hsdag_nn_params_cols(p, t);
        CHECK(gc_check(what, pv + o, k, gr + o, gloss, &c) <= GC_TOL);
    }
    /* dx = NULL path gives the same parameter gradients */
    float *g1 = malloc(cnt * 4);
    memcpy(g1, gr, cnt * 4);
    hsdag_nn_params_zero_grad(p);
    hsdag_nn_gnn_backward(g, p, NULL, cf, cache, x, a, &e);
    int same = 1;
    for (size_t i = 0; i < cnt; i++) same &= fabsf(gr[i] - g1[i]) <= 1e-6f * (1 + fabsf(g1[i]));
    CHECK(same);
    free(g1);
    free(x);
    free(y);
    free(cf);
    free(dx);
    free(cache);
    free(xd);
    free(cd);
    free(yd);
    free(pv);
    hsdag_nn_adj_free(a);
    hsdag_nn_gnn_free(g);
    hsdag_nn_params_free(p);
}

static void test_gnn_config(void)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_gnn *g = NULL;
    hsdag_nn_params_create(&p, NULL);
    hsdag_nn_gnn_config c = hsdag_nn_gnn_config_default();
    CHECK_EQ_INT(hsdag_nn_gnn_create(&g, p, "a", &c, &e), HSDAG_EINVAL); /* widths 0 */
    c.in = 4;
    c.out = 6;
    c.kind = HSDAG_NN_GNN_GAT;
    c.heads = 4;
    CHECK_EQ_INT(hsdag_nn_gnn_create(&g, p, "a", &c, &e), HSDAG_EINVAL);
    CHECK(g == NULL && strstr(e.msg, "heads") != NULL);
    hsdag_nn_gnn_kind k;
    CHECK(hsdag_nn_gnn_kind_parse(&k, "gat", NULL) == 0 && k == HSDAG_NN_GNN_GAT);
    CHECK(hsdag_nn_gnn_kind_parse(&k, "graphsage", NULL) == 0 && k == HSDAG_NN_GNN_SAGE);
    CHECK_EQ_INT(hsdag_nn_gnn_kind_parse(&k, "gcnn", NULL), HSDAG_EINVAL);
    CHECK_STR(hsdag_nn_gnn_kind_name(HSDAG_NN_GNN_GIN), "gin");
    hsdag_nn_params_free(p);
}

/* ---- a composed network, end to end:
 * h0 = ReLU(x W1^T + b1); h1 = ReLU(GCN(h0)); h2 = LayerNorm(h0 + h1) (residual);
 * pooled = segment_sum(h2, cluster); logits = pooled W2^T + b2; lp = log_softmax(logits);
 * loss = -sum_c lp[c, target_c] (NLL). Finite differences on every parameter and on x. */
enum { CN = GN, CIN = 5, CH = 6, CK = 3, CS = 3 };
static const int32_t c_seg[CN] = {0, 0, 1, 1, 2, 2, 2, 1};
static const int32_t c_tgt[CS] = {2, 0, 1};

typedef struct cctx {
    double *x, *pv;
    const double *A;
    size_t ow1, ob1, owg, obg, olg, olb, ow2, ob2;
} cctx;

static double closs(void *p)
{
    cctx *c = p;
    double h0[CN * CH], h1[CN * CH], pooled[CS * CH] = {0}, lg[CS * CK];
    ref_lin(h0, c->x, c->pv + c->ow1, c->pv + c->ob1, CN, CIN, CH);
    for (int i = 0; i < CN * CH; i++) h0[i] = h0[i] > 0 ? h0[i] : 0;
    gctx g = {.kind = HSDAG_NN_GNN_GCN,
              .n = CN,
              .in = CH,
              .out = CH,
              .A = c->A,
              .pv = c->pv,
              .ow = c->owg,
              .ob = c->obg};
    ref_gnn(&g, h1, h0);
    for (int i = 0; i < CN * CH; i++) h1[i] = (h1[i] > 0 ? h1[i] : 0) + h0[i];
    for (int i = 0; i < CN; i++) {
        double m = 0, v = 0;
        for (int f = 0; f < CH; f++) m += h1[i * CH + f];
        m /= CH;
        for (int f = 0; f < CH; f++) v += (h1[i * CH + f] - m) * (h1[i * CH + f] - m);
        v /= CH;
        for (int f = 0; f < CH; f++)
            pooled[c_seg[i] * CH + f] +=
                (h1[i * CH + f] - m) / sqrt(v + 1e-5) * c->pv[c->olg + f] + c->pv[c->olb + f];
    }
    ref_lin(lg, pooled, c->pv + c->ow2, c->pv + c->ob2, CS, CH, CK);
    double L = 0;
    for (int s = 0; s < CS; s++) {
        double mx = -INFINITY, z = 0;
        for (int k = 0; k < CK; k++) mx = fmax(mx, lg[s * CK + k]);
        for (int k = 0; k < CK; k++) z += exp(lg[s * CK + k] - mx);
        L -= lg[s * CK + c_tgt[s]] - mx - log(z);
    }
    return L;
}

static void test_composed(hsdag_rng *r, uint64_t seed, float *grads_out, float *loss_out)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_gnn *g = NULL;
    hsdag_nn_adj *a = NULL;
    hsdag_nn_linear l1, l2;
    hsdag_nn_layernorm ln;
    hsdag_nn_params_create(&p, NULL);
    hsdag_nn_linear_add(p, &l1, "in", CIN, CH, 1, &e);
    hsdag_nn_gnn_config gc = hsdag_nn_gnn_config_default();
    gc.in = gc.out = CH;
    hsdag_nn_gnn_create(&g, p, "gcn", &gc, &e);
    hsdag_nn_layernorm_add(p, &ln, "ln", CH, &e);
    hsdag_nn_linear_add(p, &l2, "out", CH, CK, 1, &e);
    hsdag_rng pr;
    hsdag_rng_seed(&pr, seed);
    CHECK_EQ_INT(hsdag_nn_params_alloc(p, &pr, &e), 0);
    size_t cnt = hsdag_nn_params_count(p);
    float *pvf = hsdag_nn_params_value(p, -1);
    /* non-trivial gcn bias and LN affine */
    gc_rand_f(hsdag_nn_params_value(p, hsdag_nn_params_find(p, "gcn.b")), CH, &pr, -0.3, 0.3);
    gc_rand_f(hsdag_nn_params_value(p, ln.g), CH, &pr, 0.5, 1.5);
    gc_rand_f(hsdag_nn_params_value(p, ln.b), CH, &pr, -0.3, 0.3);
    hsdag_nn_adj_create(&a, CN, GM, g_src, g_dst, HSDAG_NN_ADJ_SYMMETRIC, &e);
    hsdag_nn_gnn_reserve(g, CN, a->nnz, &e);

    /* float forward; buffers allocated once */
    float x[CN * CIN], h0[CN * CH], h1[CN * CH], hs[CN * CH], h2[CN * CH], mean[CN], rstd[CN];
    float pooled[CS * CH], lg[CS * CK], lp[CS * CK];
    gc_rand_f(x, CN * CIN, &pr, -1, 1);
    hsdag_nn_linear_forward(h0, x, hsdag_nn_params_value(p, l1.w), hsdag_nn_params_value(p, l1.b), CN, CIN,
                            CH);
    hsdag_nn_relu_forward(h0, h0, CN * CH);
    hsdag_nn_gnn_forward(g, p, h1, NULL, h0, a, &e);
    hsdag_nn_relu_forward(h1, h1, CN * CH);
    hsdag_nn_add_forward(hs, h0, h1, CN * CH);
    hsdag_nn_layernorm_forward(h2, mean, rstd, hs, hsdag_nn_params_value(p, ln.g),
                               hsdag_nn_params_value(p, ln.b), CN, CH, 1e-5f);
    hsdag_nn_segment_sum_forward(pooled, h2, c_seg, CN, CH, CS);
    hsdag_nn_linear_forward(lg, pooled, hsdag_nn_params_value(p, l2.w), hsdag_nn_params_value(p, l2.b), CS,
                            CH, CK);
    hsdag_nn_log_softmax_forward(lp, lg, NULL, CS, CK);
    float L = 0;
    for (int s = 0; s < CS; s++) L -= lp[s * CK + c_tgt[s]];

    /* float backward */
    float dlp[CS * CK] = {0}, dlg[CS * CK] = {0}, dpooled[CS * CH] = {0}, dh2[CN * CH] = {0},
                   dhs[CN * CH] = {0};
    float dh1[CN * CH] = {0}, dh1p[CN * CH] = {0}, dh0[CN * CH] = {0}, dh0p[CN * CH] = {0},
                   dx[CN * CIN] = {0};
    hsdag_nn_params_zero_grad(p);
    for (int s = 0; s < CS; s++) dlp[s * CK + c_tgt[s]] = -1.0f;
    hsdag_nn_log_softmax_backward(dlg, dlp, lp, CS, CK);
    hsdag_nn_linear_backward(dpooled, hsdag_nn_params_grad(p, l2.w), hsdag_nn_params_grad(p, l2.b), dlg,
                             pooled, hsdag_nn_params_value(p, l2.w), CS, CH, CK);
    hsdag_nn_segment_sum_backward(dh2, dpooled, c_seg, CN, CH);
    hsdag_nn_layernorm_backward(dhs, hsdag_nn_params_grad(p, ln.g), hsdag_nn_params_grad(p, ln.b), dh2, hs,
                                mean, rstd, hsdag_nn_params_value(p, ln.g), CN, CH);
    hsdag_nn_add_backward(dh0, dh1, dhs, CN * CH);
    hsdag_nn_relu_backward(dh1p, dh1, h1, CN * CH);
    hsdag_nn_gnn_backward(g, p, dh0, dh1p, NULL, h0, a, &e);
    hsdag_nn_relu_backward(dh0p, dh0, h0, CN * CH);
    hsdag_nn_linear_backward(dx, hsdag_nn_params_grad(p, l1.w), hsdag_nn_params_grad(p, l1.b), dh0p, x,
                             hsdag_nn_params_value(p, l1.w), CN, CIN, CH);

    if (grads_out) { /* determinism run: just report */
        memcpy(grads_out, hsdag_nn_params_grad(p, -1), cnt * 4);
        *loss_out = L;
    } else {
        double A[GN * GN], xd[CN * CIN], *pv = malloc(cnt * 8);
        dense_adj(A, 1);
        gc_f2d(xd, x, CN * CIN);
        gc_f2d(pv, pvf, cnt);
        cctx c = {.x = xd,
                  .pv = pv,
                  .A = A,
                  .ow1 = off_of(p, "in.w", NULL),
                  .ob1 = off_of(p, "in.b", NULL),
                  .owg = off_of(p, "gcn.w", NULL),
                  .obg = off_of(p, "gcn.b", NULL),
                  .olg = off_of(p, "ln.g", NULL),
                  .olb = off_of(p, "ln.b", NULL),
                  .ow2 = off_of(p, "out.w", NULL),
                  .ob2 = off_of(p, "out.b", NULL)};
        CHECK_NEAR(L, closs(&c), 1e-5 * (1 + fabs(closs(&c))));
        float *gr = hsdag_nn_params_grad(p, -1);
        CHECK(gc_check("composed dx", xd, CN * CIN, dx, closs, &c) <= GC_TOL);
        for (int32_t t = 0; t < hsdag_nn_params_n_tensors(p); t++) {
            char what[96];
            snprintf(what, sizeof what, "composed %s", hsdag_nn_params_name(p, t));
            size_t o = hsdag_nn_params_offset(p, t),
                   k = (size_t)hsdag_nn_params_rows(p, t) * hsdag_nn_params_cols(p, t);
            CHECK(gc_check(what, pv + o, k, gr + o, closs, &c) <= GC_TOL);
        }
        /* the whole block at once (padding included: its gradient must be exactly 0) */
        CHECK(gc_check("composed all", pv, cnt, gr, closs, &c) <= GC_TOL);
        free(pv);
    }
    (void)r;
    hsdag_nn_adj_free(a);
    hsdag_nn_gnn_free(g);
    hsdag_nn_params_free(p);
}

static void test_determinism(void)
{
    static float g1[4096], g2[4096];
    float l1, l2;
    test_composed(NULL, 77, g1, &l1);
    test_composed(NULL, 77, g2, &l2);
    CHECK(memcmp(&l1, &l2, sizeof l1) == 0);
    CHECK(memcmp(g1, g2, sizeof g1) == 0);
    CHECK(g1[0] != 0.0f);
}

int main(void)
{
    hsdag_nn_set_threads(1);
    hsdag_rng r;
    hsdag_rng_seed(&r, 4242);
    test_adj();
    test_adj_random(&r);
    test_simple_kernels(&r);
    test_gnn_config();
    for (int sym = 0; sym <= 1; sym++) {
        test_gnn_layer(&r, HSDAG_NN_GNN_GCN, 5, 4, 1, sym); /* transform, then aggregate */
        test_gnn_layer(&r, HSDAG_NN_GNN_GCN, 3, 6, 1, sym); /* aggregate, then transform */
        test_gnn_layer(&r, HSDAG_NN_GNN_GAT, 5, 4, 1, sym);
        test_gnn_layer(&r, HSDAG_NN_GNN_GAT, 4, 6, 3, sym);
        test_gnn_layer(&r, HSDAG_NN_GNN_GIN, 5, 4, 1, sym);
        test_gnn_layer(&r, HSDAG_NN_GNN_SAGE, 5, 4, 1, sym);
    }
    test_composed(&r, 11, NULL, NULL);
    test_determinism();
    return check_summary("test_gnn");
}
