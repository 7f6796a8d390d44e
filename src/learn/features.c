/* features.c - HSDAG input features per coarsened group: op type, output shape, node id, degree,
 * node fractal dimension and Wasserman-Faust closeness.
 * Not here: the learned embedding of the features (model.c); coarsening itself (coarsen.c).
 * Entry points: hsdag_features_compute/free, hsdag_features_op_index, hsdag_struct_measures. */
#include "hsdag/features.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* ---- fixed op vocabulary: the op types that dominate CNN and transformer graphs ----
 * Several spellings map to one slot; anything else goes to the last ("other") slot. */
static const struct {
    const char *name;
    int32_t slot;
} op_vocab[] = {
    {"conv", 0},
    {"convolution", 0},
    {"conv2d", 0},
    {"groupconvolution", 1},
    {"convtranspose", 1},
    {"matmul", 2},
    {"gemm", 2},
    {"linear", 2},
    {"fullyconnected", 2},
    {"einsum", 2},
    {"add", 3},
    {"sum", 3},
    {"mul", 4},
    {"multiply", 4},
    {"sub", 5},
    {"subtract", 5},
    {"div", 6},
    {"divide", 6},
    {"relu", 7},
    {"sigmoid", 8},
    {"tanh", 8},
    {"gelu", 9},
    {"erf", 9},
    {"softmax", 10},
    {"logsoftmax", 10},
    {"maxpool", 11},
    {"averagepool", 12},
    {"avgpool", 12},
    {"globalaveragepool", 12},
    {"reducemean", 13},
    {"reducesum", 13},
    {"batchnormalization", 14},
    {"batchnorminference", 14},
    {"layernormalization", 15},
    {"mvn", 15},
    {"concat", 16},
    {"reshape", 17},
    {"flatten", 17},
    {"squeeze", 17},
    {"unsqueeze", 17},
    {"transpose", 18},
    {"gather", 19},
    {"slice", 20},
    {"stridedslice", 20},
    {"split", 20},
    {"variadicsplit", 20},
    {"constant", 21},
    {"parameter", 22},
    {"input", 22},
    {"result", 23},
    {"output", 23},
    {"identity", 24},
    {"shape", 25},
    {"shapeof", 25},
    {"pow", 26},
    {"power", 26},
    {"sqrt", 26},
    {"clip", 27},
    {"clamp", 27},
    {"pad", 28},
    {"cast", 29},
    {"convert", 29},
    {"where", 30},
    {"select", 30},
    {"dropout", 24},
};
#define OP_SLOTS 31 /* + 1 "other" */
#define OPTYPE_WIDTH (HSDAG_OP_CLASS_COUNT_ + OP_SLOTS + 1)
#define SHAPE_WIDTH 4

int32_t hsdag_features_op_index(const char *op)
{
    char low[32];
    size_t n = 0;
    if (!op) return OP_SLOTS;
    for (; op[n] && n < sizeof low - 1; n++) low[n] = (char)tolower((unsigned char)op[n]);
    if (op[n]) return OP_SLOTS;
    low[n] = 0;
    for (size_t i = 0; i < sizeof op_vocab / sizeof op_vocab[0]; i++)
        if (strcmp(low, op_vocab[i].name) == 0) return op_vocab[i].slot;
    return OP_SLOTS;
}

const char *hsdag_feat_kind_name(hsdag_feat_kind k)
{
    static const char *names[HSDAG_FEAT_KINDS_] = {"optype", "shape", "id", "degree", "nfd", "closeness"};
    return (k >= 0 && k < HSDAG_FEAT_KINDS_) ? names[k] : "?";
}

int32_t hsdag_features_kind_width(hsdag_feat_kind k)
{
    switch (k) {
    case HSDAG_FEAT_OPTYPE:
        return OPTYPE_WIDTH;
    case HSDAG_FEAT_SHAPE:
        return SHAPE_WIDTH;
    case HSDAG_FEAT_DEGREE:
        return 2;
    default:
        return 1;
    }
}

hsdag_features_config hsdag_features_config_default(void)
{
    return (hsdag_features_config){.kinds = HSDAG_FEAT_ALL};
}

void hsdag_features_free(hsdag_features *f)
{
    if (!f) return;
    hsdag_free(f->x);
    f->x = NULL;
}

/* ---- structural measures ---- */

/* Least-squares slope of y on x over k points. */
static double ls_slope(const double *x, const double *y, int32_t k)
{
    double mx = 0, my = 0;
    for (int32_t i = 0; i < k; i++) mx += x[i], my += y[i];
    mx /= k;
    my /= k;
    double sxy = 0, sxx = 0;
    for (int32_t i = 0; i < k; i++) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
    return sxx > 0 ? sxy / sxx : 0.0;
}

int hsdag_struct_measures(double *nfd, double *closeness, int32_t n, const int32_t *out_off,
                          const int32_t *out_dst, const int32_t *in_off, const int32_t *in_src, hsdag_err *e)
{
    hsdag_struct_opts o = hsdag_struct_opts_default();
    return hsdag_struct_measures_opts(nfd, closeness, n, out_off, out_dst, in_off, in_src, &o, e);
}

hsdag_struct_opts hsdag_struct_opts_default(void)
{
    return (hsdag_struct_opts){.exact_max = 4096, .nfd_radius = 8, .nfd_visits = 512, .pivots = 64};
}

/* Undirected BFS from s, stopping after radius rmax (0 = none) or once `visits` nodes are reached (0 = none;
 * the radius in progress is then dropped, so every N(r) kept is exact); returns the NFD from N(r). */
static double nfd_one(int32_t s, int32_t rmax, int32_t visits, const int32_t *out_off, const int32_t *out_dst,
                      const int32_t *in_off, const int32_t *in_src, int32_t *dist, int32_t *queue,
                      int32_t *cnt, double *lx, double *ly)
{
    int32_t qh = 0, qt = 0, maxd = 0, full = 0;
    dist[s] = 0;
    queue[qt++] = s;
    cnt[0] = 1;
    while (qh < qt && !full) {
        int32_t x = queue[qh++];
        if (rmax > 0 && dist[x] >= rmax) break;
        for (int pass = 0; pass < 2 && !full; pass++) {
            const int32_t *o = pass ? in_off : out_off, *a = pass ? in_src : out_dst;
            for (int32_t k = o[x]; k < o[x + 1]; k++) {
                int32_t y = a[k];
                if (dist[y] >= 0) continue;
                dist[y] = dist[x] + 1;
                if (dist[y] > maxd) cnt[++maxd] = 0;
                cnt[dist[y]]++;
                queue[qt++] = y;
                if (visits > 0 && qt >= visits) {
                    full = 1;
                    break;
                }
            }
        }
    }
    if (full) maxd--; /* the last radius was cut short */
    int32_t k = 0, within = cnt[0];
    for (int32_t r = 1; r <= maxd; r++) {
        within += cnt[r];
        lx[k] = log((double)r);
        ly[k] = log((double)within);
        k++;
    }
    for (int32_t i = 0; i < qt; i++) dist[queue[i]] = -1;
    return k >= 2 ? ls_slope(lx, ly, k) : 0.0;
}

/* Directed BFS along `off/adj` from s; adds each reached node's distance to tot[] and 1 to reach[]. */
static void bfs_acc(int32_t s, const int32_t *off, const int32_t *adj, int32_t *dist, int32_t *queue,
                    double *tot, double *reach)
{
    int32_t qh = 0, qt = 0;
    dist[s] = 0;
    queue[qt++] = s;
    while (qh < qt) {
        int32_t x = queue[qh++];
        for (int32_t k = off[x]; k < off[x + 1]; k++) {
            int32_t y = adj[k];
            if (dist[y] >= 0) continue;
            dist[y] = dist[x] + 1;
            tot[y] += dist[y];
            reach[y] += 1;
            queue[qt++] = y;
        }
    }
    for (int32_t i = 0; i < qt; i++) dist[queue[i]] = -1;
}

int hsdag_struct_measures_opts(double *nfd, double *closeness, int32_t n, const int32_t *out_off,
                               const int32_t *out_dst, const int32_t *in_off, const int32_t *in_src,
                               const hsdag_struct_opts *o, hsdag_err *e)
{
    size_t sz = (size_t)(n > 0 ? n : 1);
    int exact = n <= o->exact_max;
    int32_t *dist = hsdag_malloc(sizeof(int32_t) * sz), *queue = hsdag_malloc(sizeof(int32_t) * sz);
    int32_t *cnt = hsdag_malloc(sizeof(int32_t) * (sz + 1));
    double *lx = hsdag_malloc(sizeof(double) * (sz + 1)), *ly = hsdag_malloc(sizeof(double) * (sz + 1));
    double *tot = exact ? NULL : hsdag_calloc(sz, sizeof(double)),
           *reach = exact ? NULL : hsdag_calloc(sz, sizeof(double));
    int rc = 0;
    if (!dist || !queue || !cnt || !lx || !ly || (!exact && (!tot || !reach))) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "features: out of memory (%d groups, %zu bytes each)", (int)n,
                           sizeof(double) * sz);
        goto done;
    }
    for (int32_t i = 0; i < n; i++) dist[i] = -1;
    if (nfd)
        for (int32_t s = 0; s < n; s++)
            nfd[s] = nfd_one(s, exact ? 0 : o->nfd_radius, exact ? 0 : o->nfd_visits, out_off, out_dst,
                             in_off, in_src, dist, queue, cnt, lx, ly);
    if (closeness && exact) {
        for (int32_t s = 0; s < n; s++) {
            /* distances *to* s: BFS over incoming edges (networkx uses G.reverse() for directed graphs) */
            int32_t qh = 0, qt = 0;
            double t = 0;
            dist[s] = 0;
            queue[qt++] = s;
            while (qh < qt) {
                int32_t x = queue[qh++];
                for (int32_t k = in_off[x]; k < in_off[x + 1]; k++) {
                    int32_t y = in_src[k];
                    if (dist[y] >= 0) continue;
                    dist[y] = dist[x] + 1;
                    t += dist[y];
                    queue[qt++] = y;
                }
            }
            double c = 0;
            if (t > 0 && n > 1) c = ((double)(qt - 1) / t) * ((double)(qt - 1) / (double)(n - 1));
            closeness[s] = c;
            for (int32_t i = 0; i < qt; i++) dist[queue[i]] = -1;
        }
    } else if (closeness) {
        /* sampled (Eppstein-Wang): forward BFS from k pivots spread evenly over the topological order; the
         * pivots reaching u stand for all nodes reaching u, so (r - 1) ~ n hits / k and the sum of distances
         * ~ n sum / k, and C(u) = ((r-1) / sum) ((r-1) / (n-1)) is estimated from hits and sums */
        int32_t k = o->pivots < n ? o->pivots : n;
        for (int32_t i = 0; i < k; i++)
            bfs_acc((int32_t)(((int64_t)i * n + n / 2) / k), out_off, out_dst, dist, queue, tot, reach);
        double scale = (double)n / (double)k;
        for (int32_t u = 0; u < n; u++) {
            double r1 = reach[u] * scale, t = tot[u] * scale;
            closeness[u] = t > 0 && n > 1 ? (r1 / t) * (r1 / (double)(n - 1)) : 0.0;
        }
    }
done:
    hsdag_free(dist);
    hsdag_free(queue);
    hsdag_free(cnt);
    hsdag_free(lx);
    hsdag_free(ly);
    hsdag_free(tot);
    hsdag_free(reach);
    return rc;
}

/* ---- the feature matrix ---- */

int hsdag_features_compute(hsdag_features *f, const hsdag_graph *g, const hsdag_coarse *c,
                           const hsdag_features_config *cfg, hsdag_err *e)
{
    memset(f, 0, sizeof *f);
    unsigned kinds = cfg->kinds & HSDAG_FEAT_ALL;
    if (!kinds) return hsdag_err_set(e, HSDAG_EINVAL, "features: every feature kind is switched off");
    int32_t n = c->n_groups, dim = 0;
    for (int k = 0; k < HSDAG_FEAT_KINDS_; k++) {
        f->kind_off[k] = dim;
        f->kind_dim[k] = (kinds >> k & 1u) ? hsdag_features_kind_width((hsdag_feat_kind)k) : 0;
        dim += f->kind_dim[k];
    }
    f->n = n;
    f->dim = dim;
    double *nfd = NULL, *clo = NULL;
    f->x = hsdag_calloc((size_t)(n ? n : 1) * (size_t)dim, sizeof(float));
    int want_nfd = (kinds >> HSDAG_FEAT_NFD) & 1u, want_clo = (kinds >> HSDAG_FEAT_CLOSENESS) & 1u;
    if (want_nfd) nfd = hsdag_malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (want_clo) clo = hsdag_malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!f->x || (want_nfd && !nfd) || (want_clo && !clo)) {
        hsdag_free(nfd);
        hsdag_free(clo);
        hsdag_features_free(f);
        return hsdag_err_set(e, HSDAG_ENOMEM, "features: out of memory (%d groups)", (int)n);
    }
    if (want_nfd || want_clo) {
        int rc = hsdag_struct_measures(nfd, clo, n, c->out_off, c->out_dst, c->in_off, c->in_src, e);
        if (rc < 0) {
            hsdag_free(nfd);
            hsdag_free(clo);
            hsdag_features_free(f);
            return rc;
        }
    }
    for (int32_t k = 0; k < n; k++) {
        float *row = f->x + (size_t)k * (size_t)dim;
        int32_t m = c->off[k + 1] - c->off[k];
        float inv = 1.0f / (float)m;
        for (int32_t j = c->off[k]; j < c->off[k + 1]; j++) {
            int32_t v = c->ops[j];
            if (f->kind_dim[HSDAG_FEAT_OPTYPE]) {
                float *o = row + f->kind_off[HSDAG_FEAT_OPTYPE];
                int32_t cls = g->opclass[v] < HSDAG_OP_CLASS_COUNT_ ? g->opclass[v] : 0;
                o[cls] += inv;
                o[HSDAG_OP_CLASS_COUNT_ + hsdag_features_op_index(g->op[v])] += inv;
            }
            if (f->kind_dim[HSDAG_FEAT_SHAPE] && g->out_shape_off[v + 1] > g->out_shape_off[v]) {
                float *o = row + f->kind_off[HSDAG_FEAT_SHAPE];
                int32_t s = g->out_shape_off[v];
                int32_t rank = g->shape_rank[s];
                for (int32_t d = 0; d < SHAPE_WIDTH && d < rank; d++) {
                    int64_t dv = g->shape_dims[g->shape_dim_off[s] + d];
                    if (dv > 0) o[d] += inv * (float)log1p((double)dv);
                }
            }
        }
        if (f->kind_dim[HSDAG_FEAT_ID])
            row[f->kind_off[HSDAG_FEAT_ID]] = n > 1 ? (float)k / (float)(n - 1) : 0.0f;
        if (f->kind_dim[HSDAG_FEAT_DEGREE]) {
            row[f->kind_off[HSDAG_FEAT_DEGREE]] = (float)log1p((double)(c->in_off[k + 1] - c->in_off[k]));
            row[f->kind_off[HSDAG_FEAT_DEGREE] + 1] =
                (float)log1p((double)(c->out_off[k + 1] - c->out_off[k]));
        }
        if (want_nfd) row[f->kind_off[HSDAG_FEAT_NFD]] = (float)nfd[k];
        if (want_clo) row[f->kind_off[HSDAG_FEAT_CLOSENESS]] = (float)clo[k];
    }
    hsdag_free(nfd);
    hsdag_free(clo);
    return 0;
}
