/* gnn.c - graph kernels: the message-passing adjacency (self-loops, GCN/sum/mean weights), sparse
 * aggregation, gather, segment pooling, and the GCN/GAT/GIN/GraphSAGE layers behind one handle.
 * Not here: graph pooling decisions (GPN parsing is the learner's), dense kernels (layers.c).
 * Entry points: hsdag_nn_adj_*, hsdag_nn_spmm_*, hsdag_nn_gather_*, hsdag_nn_segment_*, hsdag_nn_gnn_*.
 */
#include "hsdag/nn.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- vector helpers: blocks of 8 with restrict so GCC's -O2 SLP vectoriser emits SIMD (its
 * loop vectoriser is off at -O2); the remainder runs scalar ---- */

/* y (d) += a * x (d) */
static inline void axpy_(float *restrict y, const float *restrict x, float a, int32_t d)
{
    int32_t f = 0;
    for (; f + 8 <= d; f += 8) {
        float *yb = y + f;
        const float *xb = x + f;
        yb[0] += a * xb[0];
        yb[1] += a * xb[1];
        yb[2] += a * xb[2];
        yb[3] += a * xb[3];
        yb[4] += a * xb[4];
        yb[5] += a * xb[5];
        yb[6] += a * xb[6];
        yb[7] += a * xb[7];
    }
    for (; f < d; f++) y[f] += a * x[f];
}

/* y (d) += x (d) */
static inline void acc_(float *restrict y, const float *restrict x, int32_t d)
{
    int32_t f = 0;
    for (; f + 8 <= d; f += 8) {
        float *yb = y + f;
        const float *xb = x + f;
        yb[0] += xb[0];
        yb[1] += xb[1];
        yb[2] += xb[2];
        yb[3] += xb[3];
        yb[4] += xb[4];
        yb[5] += xb[5];
        yb[6] += xb[6];
        yb[7] += xb[7];
    }
    for (; f < d; f++) y[f] += x[f];
}

/* ---- adjacency ---- */

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Builds from edge pairs; the common core of both constructors. */
static int adj_build(hsdag_nn_adj **out, int32_t n, int64_t m, const int32_t *src, const int32_t *dst,
                     const int32_t *csr_off, unsigned flags, hsdag_err *e)
{
    *out = NULL;
    int sym = (flags & HSDAG_NN_ADJ_SYMMETRIC) != 0;
    int rc = 0;
    int64_t *cnt = NULL;
    int32_t *tmp = NULL;
    if (n <= 0) return hsdag_err_set(e, HSDAG_EINVAL, "nn adjacency: %d nodes (need > 0)", n);
    if (m < 0) return hsdag_err_set(e, HSDAG_EINVAL, "nn adjacency: %lld edges", (long long)m);
    int64_t cap = (int64_t)n + (sym ? 2 : 1) * m;
    if (cap > INT32_MAX) return hsdag_err_set(e, HSDAG_ELIMIT, "nn adjacency: more than 2^31 entries");
    cnt = hsdag_calloc((size_t)n + 1, sizeof(int64_t));
    tmp = hsdag_malloc((size_t)cap * sizeof(int32_t));
    if (!cnt || !tmp) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "nn adjacency: out of memory");
        goto done;
    }
    /* pass 1: validate and count per receiver (self included) */
    int32_t row = 0;
    for (int64_t k = 0; k < m; k++) {
        int32_t s, d;
        if (csr_off) {
            while (row < n && k >= csr_off[row + 1]) row++;
            s = row;
        } else
            s = src[k];
        d = dst[k];
        if (s < 0 || s >= n || d < 0 || d >= n) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "nn adjacency: edge %lld: node %d -> %d out of range [0, %d)",
                               (long long)k, s, d, n);
            goto done;
        }
        if (s == d) continue;
        cnt[d + 1]++;
        if (sym) cnt[s + 1]++;
    }
    for (int32_t i = 0; i < n; i++) cnt[i + 1] += cnt[i] + 1; /* +1: the self entry */
    /* pass 2: fill (cnt[i] is the write cursor of row i, self goes first) */
    for (int32_t i = 0; i < n; i++) tmp[cnt[i]++] = i;
    row = 0;
    for (int64_t k = 0; k < m; k++) {
        int32_t s;
        if (csr_off) {
            while (row < n && k >= csr_off[row + 1]) row++;
            s = row;
        } else
            s = src[k];
        int32_t d = dst[k];
        if (s == d) continue;
        tmp[cnt[d]++] = s;
        if (sym) tmp[cnt[s]++] = d;
    }
    /* cnt[i] is now the end of row i, which starts at the old cnt[i-1] (0 for i = 0). Sort each row,
     * drop duplicates and compact all rows to the front (writes never pass unread entries);
     * afterwards cnt[i] is the new end of row i. */
    int64_t nnz = 0, start = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t en = cnt[i];
        qsort(tmp + start, (size_t)(en - start), sizeof(int32_t), cmp_i32);
        for (int64_t k = start; k < en; k++)
            if (k == start || tmp[k] != tmp[k - 1]) tmp[nnz++] = tmp[k];
        start = en;
        cnt[i] = nnz;
    }
    /* one allocation: struct, off, idx, self, then 3 weight arrays */
    size_t bytes = sizeof(hsdag_nn_adj) + ((size_t)n + 1 + (size_t)nnz + (size_t)n) * sizeof(int32_t) +
                   3 * (size_t)nnz * sizeof(float);
    hsdag_nn_adj *a = hsdag_malloc(bytes);
    if (!a) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "nn adjacency: out of memory");
        goto done;
    }
    a->n = n;
    a->nnz = (int32_t)nnz;
    a->off = (int32_t *)(a + 1);
    a->idx = a->off + n + 1;
    a->self = a->idx + nnz;
    a->w_gcn = (float *)(a->self + n);
    a->w_sum = a->w_gcn + nnz;
    a->w_mean = a->w_sum + nnz;
    a->off[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        a->off[i + 1] = (int32_t)cnt[i];
        a->self[i] = -1;
        for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
            a->idx[k] = tmp[k];
            if (tmp[k] == i) a->self[i] = k;
        }
        HSDAG_ASSERT(a->self[i] >= 0);
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t di = a->off[i + 1] - a->off[i];
        float inv_mean = di > 1 ? 1.0f / (float)(di - 1) : 0.0f;
        for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
            int32_t j = a->idx[k], dj = a->off[j + 1] - a->off[j];
            a->w_gcn[k] = (float)(1.0 / sqrt((double)di * (double)dj));
            a->w_sum[k] = j == i ? 0.0f : 1.0f;
            a->w_mean[k] = j == i ? 0.0f : inv_mean;
        }
    }
    *out = a;
done:
    hsdag_free(cnt);
    hsdag_free(tmp);
    return rc;
}

int hsdag_nn_adj_create(hsdag_nn_adj **out, int32_t n, int32_t m, const int32_t *src, const int32_t *dst,
                        unsigned flags, hsdag_err *e)
{
    return adj_build(out, n, m, src, dst, NULL, flags, e);
}

int hsdag_nn_adj_create_csr(hsdag_nn_adj **out, int32_t n, const int32_t *off, const int32_t *dst,
                            unsigned flags, hsdag_err *e)
{
    *out = NULL;
    if (n <= 0) return hsdag_err_set(e, HSDAG_EINVAL, "nn adjacency: %d nodes (need > 0)", n);
    if (off[0] != 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn adjacency: CSR offsets start at %d, not 0", off[0]);
    for (int32_t i = 0; i < n; i++)
        if (off[i + 1] < off[i])
            return hsdag_err_set(e, HSDAG_EINVAL, "nn adjacency: CSR offsets decrease at node %d", i);
    return adj_build(out, n, off[n], NULL, dst, off, flags, e);
}

void hsdag_nn_adj_free(hsdag_nn_adj *a)
{
    hsdag_free(a);
}

/* ---- sparse aggregation ---- */

void hsdag_nn_spmm_forward(float *y, const float *x, const hsdag_nn_adj *a, const float *w, int32_t d)
{
    // y (n, d), x (n, d), w (nnz)
    for (int32_t i = 0; i < a->n; i++) {
        float *yr = y + (size_t)i * d;
        memset(yr, 0, (size_t)d * sizeof(float));
        for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
            float wk = w[k];
            if (wk == 0.0f) continue;
            axpy_(yr, x + (size_t)a->idx[k] * d, wk, d);
        }
    }
}

void hsdag_nn_spmm_backward(float *dx, const float *dy, const hsdag_nn_adj *a, const float *w, int32_t d)
{
    // dx (n, d), dy (n, d), w (nnz)
    for (int32_t i = 0; i < a->n; i++) {
        const float *gr = dy + (size_t)i * d;
        for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
            float wk = w[k];
            if (wk == 0.0f) continue;
            axpy_(dx + (size_t)a->idx[k] * d, gr, wk, d);
        }
    }
}

/* ---- gather and segment pooling ---- */

void hsdag_nn_gather_forward(float *y, const float *x, const int32_t *idx, int32_t m, int32_t d)
{
    // y (m, d), x (n, d), idx (m)
    for (int32_t k = 0; k < m; k++)
        memcpy(y + (size_t)k * d, x + (size_t)idx[k] * d, (size_t)d * sizeof(float));
}

void hsdag_nn_gather_backward(float *dx, const float *dy, const int32_t *idx, int32_t m, int32_t d)
{
    for (int32_t k = 0; k < m; k++) {
        acc_(dx + (size_t)idx[k] * d, dy + (size_t)k * d, d);
    }
}

void hsdag_nn_segment_sum_forward(float *y, const float *x, const int32_t *seg, int32_t n, int32_t d,
                                  int32_t nseg)
{
    // y (nseg, d), x (n, d), seg (n)
    memset(y, 0, (size_t)nseg * (size_t)d * sizeof(float));
    for (int32_t i = 0; i < n; i++) {
        HSDAG_ASSERT(seg[i] >= 0 && seg[i] < nseg);
        acc_(y + (size_t)seg[i] * d, x + (size_t)i * d, d);
    }
}

void hsdag_nn_segment_sum_backward(float *dx, const float *dy, const int32_t *seg, int32_t n, int32_t d)
{
    for (int32_t i = 0; i < n; i++) {
        acc_(dx + (size_t)i * d, dy + (size_t)seg[i] * d, d);
    }
}

void hsdag_nn_segment_mean_forward(float *y, float *inv_count, const float *x, const int32_t *seg, int32_t n,
                                   int32_t d, int32_t nseg)
{
    // y (nseg, d), inv_count (nseg), x (n, d), seg (n) or NULL (then nseg = 1)
    HSDAG_ASSERT(seg || nseg == 1);
    memset(y, 0, (size_t)nseg * (size_t)d * sizeof(float));
    memset(inv_count, 0, (size_t)nseg * sizeof(float));
    for (int32_t i = 0; i < n; i++) {
        int32_t c = seg ? seg[i] : 0;
        HSDAG_ASSERT(c >= 0 && c < nseg);
        inv_count[c] += 1.0f;
        acc_(y + (size_t)c * d, x + (size_t)i * d, d);
    }
    for (int32_t c = 0; c < nseg; c++) {
        float ic = inv_count[c] > 0.0f ? 1.0f / inv_count[c] : 0.0f;
        inv_count[c] = ic;
        for (int32_t f = 0; f < d; f++) y[(size_t)c * d + f] *= ic;
    }
}

void hsdag_nn_segment_mean_backward(float *dx, const float *dy, const float *inv_count, const int32_t *seg,
                                    int32_t n, int32_t d)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t c = seg ? seg[i] : 0;
        axpy_(dx + (size_t)i * d, dy + (size_t)c * d, inv_count[c], d);
    }
}

/* ---- GNN layers ---- */

/* Invariants: tensor ids refer to the params the layer was created with; unused ids are -1;
 * scratch holds scratch_cap floats and is reused by every call (never part of the result). */
struct hsdag_nn_gnn {
    hsdag_nn_gnn_config c;
    int32_t w, b, a_src, a_dst, w2, b2,
        eps; /* GCN/GAT/GIN: w,b; GAT: a_*; GIN: w2,b2,eps; SAGE: w=self, w2=neigh */
    float *scratch;
    size_t scratch_cap;
};

hsdag_nn_gnn_config hsdag_nn_gnn_config_default(void)
{
    return (hsdag_nn_gnn_config){
        .kind = HSDAG_NN_GNN_GCN,
        .in = 0,
        .out = 0,
        .heads = 1,
        .gat_slope = 0.2f,
        .gin_eps = 0.0f,
        .gin_train_eps = 0,
    };
}

static const char *const kind_names_[] = {"gcn", "gat", "gin", "sage"};

const char *hsdag_nn_gnn_kind_name(hsdag_nn_gnn_kind k)
{
    return (unsigned)k < 4 ? kind_names_[k] : "?";
}

int hsdag_nn_gnn_kind_parse(hsdag_nn_gnn_kind *out, const char *s, hsdag_err *e)
{
    for (int k = 0; k < 4; k++)
        if (strcmp(s, kind_names_[k]) == 0) {
            *out = (hsdag_nn_gnn_kind)k;
            return 0;
        }
    if (strcmp(s, "graphsage") == 0) {
        *out = HSDAG_NN_GNN_SAGE;
        return 0;
    }
    return hsdag_err_set(e, HSDAG_EINVAL, "gnn '%.40s': gcn, gat, gin or sage", s);
}

static int reg(hsdag_nn_params *p, int32_t *id, const char *name, const char *suf, int32_t r, int32_t c,
               hsdag_nn_init init, float scale, hsdag_err *e)
{
    char full[80];
    int k = snprintf(full, sizeof full, "%s.%s", name, suf);
    if (k < 0 || (size_t)k >= sizeof full)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn gnn '%s': name too long", name);
    int32_t t = hsdag_nn_params_add(p, full, r, c, init, scale, e);
    if (t < 0) return t;
    *id = t;
    return 0;
}

int hsdag_nn_gnn_create(hsdag_nn_gnn **out, hsdag_nn_params *p, const char *name,
                        const hsdag_nn_gnn_config *cfg, hsdag_err *e)
{
    *out = NULL;
    const hsdag_nn_gnn_config *c = cfg;
    if ((unsigned)c->kind > HSDAG_NN_GNN_SAGE)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn gnn '%s': unknown kind %d", name, (int)c->kind);
    if (c->in <= 0 || c->out <= 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn gnn '%s': widths in=%d out=%d must be > 0", name, c->in,
                             c->out);
    if (c->kind == HSDAG_NN_GNN_GAT && (c->heads <= 0 || c->out % c->heads != 0))
        return hsdag_err_set(e, HSDAG_EINVAL, "nn gnn '%s': GAT heads=%d must divide out=%d", name, c->heads,
                             c->out);
    hsdag_nn_gnn *g = hsdag_calloc(1, sizeof *g);
    if (!g) return hsdag_err_set(e, HSDAG_ENOMEM, "nn gnn '%s': out of memory", name);
    g->c = *c;
    if (c->kind != HSDAG_NN_GNN_GAT) g->c.heads = 1;
    g->w = g->b = g->a_src = g->a_dst = g->w2 = g->b2 = g->eps = -1;
    float bs = (float)(1.0 / sqrt((double)c->in));
    int rc = 0;
    switch (c->kind) {
    case HSDAG_NN_GNN_GCN:
        /* PyG GCNConv: glorot weight, zero bias */
        if ((rc = reg(p, &g->w, name, "w", c->out, c->in, HSDAG_NN_INIT_GLOROT, 0, e)) < 0) break;
        rc = reg(p, &g->b, name, "b", 1, c->out, HSDAG_NN_INIT_ZERO, 0, e);
        break;
    case HSDAG_NN_GNN_GAT: {
        int32_t f = c->out / c->heads;
        if ((rc = reg(p, &g->w, name, "w", c->out, c->in, HSDAG_NN_INIT_GLOROT, 0, e)) < 0) break;
        if ((rc = reg(p, &g->a_src, name, "a_src", c->heads, f, HSDAG_NN_INIT_GLOROT, 0, e)) < 0) break;
        if ((rc = reg(p, &g->a_dst, name, "a_dst", c->heads, f, HSDAG_NN_INIT_GLOROT, 0, e)) < 0) break;
        rc = reg(p, &g->b, name, "b", 1, c->out, HSDAG_NN_INIT_ZERO, 0, e);
        break;
    }
    case HSDAG_NN_GNN_GIN:
        if ((rc = reg(p, &g->w, name, "w1", c->out, c->in, HSDAG_NN_INIT_LINEAR, 0, e)) < 0) break;
        if ((rc = reg(p, &g->b, name, "b1", 1, c->out, HSDAG_NN_INIT_UNIFORM, bs, e)) < 0) break;
        if ((rc = reg(p, &g->w2, name, "w2", c->out, c->out, HSDAG_NN_INIT_LINEAR, 0, e)) < 0) break;
        if ((rc = reg(p, &g->b2, name, "b2", 1, c->out, HSDAG_NN_INIT_UNIFORM,
                      (float)(1.0 / sqrt((double)c->out)), e)) < 0)
            break;
        if (c->gin_train_eps) rc = reg(p, &g->eps, name, "eps", 1, 1, HSDAG_NN_INIT_CONST, c->gin_eps, e);
        break;
    case HSDAG_NN_GNN_SAGE:
        if ((rc = reg(p, &g->w, name, "w_self", c->out, c->in, HSDAG_NN_INIT_LINEAR, 0, e)) < 0) break;
        if ((rc = reg(p, &g->w2, name, "w_neigh", c->out, c->in, HSDAG_NN_INIT_LINEAR, 0, e)) < 0) break;
        rc = reg(p, &g->b, name, "b", 1, c->out, HSDAG_NN_INIT_UNIFORM, bs, e);
        break;
    }
    if (rc < 0) {
        hsdag_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void hsdag_nn_gnn_free(hsdag_nn_gnn *g)
{
    if (!g) return;
    hsdag_free(g->scratch);
    hsdag_free(g);
}

size_t hsdag_nn_gnn_cache_floats(const hsdag_nn_gnn *g, int32_t n, int32_t nnz)
{
    size_t N = (size_t)n, in = (size_t)g->c.in, out = (size_t)g->c.out, H = (size_t)g->c.heads;
    switch (g->c.kind) {
    case HSDAG_NN_GNN_GCN:
        return 0;
    case HSDAG_NN_GNN_GAT:
        return N * out + 2 * N * H + (size_t)nnz * H; /* z, s_src, s_dst, alpha */
    case HSDAG_NN_GNN_GIN:
        return N * in + N * out; /* h, r */
    case HSDAG_NN_GNN_SAGE:
        return N * in; /* neighbour mean */
    }
    return 0;
}

static size_t scratch_floats(const hsdag_nn_gnn *g, int32_t n, int32_t nnz)
{
    size_t N = (size_t)n, in = (size_t)g->c.in, out = (size_t)g->c.out, H = (size_t)g->c.heads;
    switch (g->c.kind) {
    case HSDAG_NN_GNN_GCN:
        return g->c.in < g->c.out ? 2 * N * in : N * out;
    case HSDAG_NN_GNN_GAT:
        return N * out + 2 * N * H + (size_t)nnz * H; /* dz, ds_src, ds_dst, dalpha */
    case HSDAG_NN_GNN_GIN:
        return 2 * N * out + N * in; /* dr, du, dh */
    case HSDAG_NN_GNN_SAGE:
        return N * in; /* d(mean) */
    }
    return 0;
}

int hsdag_nn_gnn_reserve(hsdag_nn_gnn *g, int32_t n, int32_t nnz, hsdag_err *e)
{
    size_t need = scratch_floats(g, n, nnz);
    if (need <= g->scratch_cap) return 0;
    float *s = hsdag_realloc(g->scratch, need * sizeof(float));
    if (!s) return hsdag_err_set(e, HSDAG_ENOMEM, "nn gnn: out of memory for %zu scratch floats", need);
    g->scratch = s;
    g->scratch_cap = need;
    return 0;
}

/* per-head attention scores s (n, H) = sum_f z[i, h*F + f] a[h, f] */
static void head_dot(float *s, const float *z, const float *a, int32_t n, int32_t H, int32_t F)
{
    for (int32_t i = 0; i < n; i++)
        for (int32_t h = 0; h < H; h++) {
            const float *zr = z + (size_t)i * H * F + (size_t)h * F, *ar = a + (size_t)h * F;
            float acc = 0.0f;
            for (int32_t f = 0; f < F; f++) acc += zr[f] * ar[f];
            s[(size_t)i * H + h] = acc;
        }
}

static void gat_forward(hsdag_nn_gnn *g, hsdag_nn_params *p, float *y, float *cache, const float *x,
                        const hsdag_nn_adj *a)
{
    int32_t n = a->n, H = g->c.heads, D = g->c.out, F = D / H;
    float slope = g->c.gat_slope;
    float *z = cache, *ss = z + (size_t)n * D, *sd = ss + (size_t)n * H, *al = sd + (size_t)n * H;
    const float *b = hsdag_nn_params_value(p, g->b);
    hsdag_nn_linear_forward(z, x, hsdag_nn_params_value(p, g->w), NULL, n, g->c.in, D);
    head_dot(ss, z, hsdag_nn_params_value(p, g->a_src), n, H, F);
    head_dot(sd, z, hsdag_nn_params_value(p, g->a_dst), n, H, F);
    for (int32_t i = 0; i < n; i++) {
        float *yr = y + (size_t)i * D;
        memcpy(yr, b, (size_t)D * sizeof(float));
        for (int32_t h = 0; h < H; h++) {
            float mx = -INFINITY, sum = 0.0f;
            for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
                float ev = sd[(size_t)i * H + h] + ss[(size_t)a->idx[k] * H + h];
                ev = ev > 0.0f ? ev : slope * ev;
                al[(size_t)k * H + h] = ev;
                if (ev > mx) mx = ev;
            }
            for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
                float v = expf(al[(size_t)k * H + h] - mx);
                al[(size_t)k * H + h] = v;
                sum += v;
            }
            for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
                float w = al[(size_t)k * H + h] / sum;
                al[(size_t)k * H + h] = w;
                const float *zr = z + (size_t)a->idx[k] * D + (size_t)h * F;
                for (int32_t f = 0; f < F; f++) yr[(size_t)h * F + f] += w * zr[f];
            }
        }
    }
}

static void gat_backward(hsdag_nn_gnn *g, hsdag_nn_params *p, float *dx, const float *dy, const float *cache,
                         const float *x, const hsdag_nn_adj *a)
{
    int32_t n = a->n, H = g->c.heads, D = g->c.out, F = D / H;
    float slope = g->c.gat_slope;
    const float *z = cache, *ss = z + (size_t)n * D, *sd = ss + (size_t)n * H, *al = sd + (size_t)n * H;
    float *dz = g->scratch, *dss = dz + (size_t)n * D, *dsd = dss + (size_t)n * H, *dal = dsd + (size_t)n * H;
    memset(dz, 0, ((size_t)n * D + 2 * (size_t)n * H) * sizeof(float));
    const float *asrc = hsdag_nn_params_value(p, g->a_src), *adst = hsdag_nn_params_value(p, g->a_dst);
    float *gb = hsdag_nn_params_grad(p, g->b);
    float *gas = hsdag_nn_params_grad(p, g->a_src), *gad = hsdag_nn_params_grad(p, g->a_dst);
    for (int32_t i = 0; i < n; i++) {
        const float *gy = dy + (size_t)i * D;
        acc_(gb, gy, D);
        for (int32_t h = 0; h < H; h++) {
            const float *gyh = gy + (size_t)h * F;
            float dot = 0.0f;
            for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
                int32_t j = a->idx[k];
                const float *zr = z + (size_t)j * D + (size_t)h * F;
                float *dzr = dz + (size_t)j * D + (size_t)h * F;
                float w = al[(size_t)k * H + h], da = 0.0f;
                for (int32_t f = 0; f < F; f++) {
                    da += gyh[f] * zr[f];
                    dzr[f] += w * gyh[f];
                }
                dal[(size_t)k * H + h] = da;
                dot += w * da;
            }
            for (int32_t k = a->off[i]; k < a->off[i + 1]; k++) {
                int32_t j = a->idx[k];
                float de = al[(size_t)k * H + h] * (dal[(size_t)k * H + h] - dot);
                float pre = sd[(size_t)i * H + h] + ss[(size_t)j * H + h];
                float dp = pre > 0.0f ? de : slope * de;
                dsd[(size_t)i * H + h] += dp;
                dss[(size_t)j * H + h] += dp;
            }
        }
    }
    /* scores s = z a: dz += ds a, da += ds z */
    for (int32_t j = 0; j < n; j++)
        for (int32_t h = 0; h < H; h++) {
            float vs = dss[(size_t)j * H + h], vd = dsd[(size_t)j * H + h];
            const float *zr = z + (size_t)j * D + (size_t)h * F;
            float *dzr = dz + (size_t)j * D + (size_t)h * F;
            for (int32_t f = 0; f < F; f++) {
                dzr[f] += vs * asrc[(size_t)h * F + f] + vd * adst[(size_t)h * F + f];
                gas[(size_t)h * F + f] += vs * zr[f];
                gad[(size_t)h * F + f] += vd * zr[f];
            }
        }
    hsdag_nn_linear_backward(dx, hsdag_nn_params_grad(p, g->w), NULL, dz, x, hsdag_nn_params_value(p, g->w),
                             n, g->c.in, D);
}

static float gin_eps(const hsdag_nn_gnn *g, hsdag_nn_params *p)
{
    return g->eps >= 0 ? hsdag_nn_params_value(p, g->eps)[0] : g->c.gin_eps;
}

int hsdag_nn_gnn_forward(hsdag_nn_gnn *g, hsdag_nn_params *p, float *y, float *cache, const float *x,
                         const hsdag_nn_adj *a, hsdag_err *e)
{
    // y (n, out), cache (cache_floats), x (n, in)
    int rc = hsdag_nn_gnn_reserve(g, a->n, a->nnz, e);
    if (rc < 0) return rc;
    int32_t n = a->n, in = g->c.in, out = g->c.out;
    const float *w = hsdag_nn_params_value(p, g->w), *b = hsdag_nn_params_value(p, g->b);
    switch (g->c.kind) {
    case HSDAG_NN_GNN_GCN:
        if (in < out) { /* aggregate at the narrower width */
            hsdag_nn_spmm_forward(g->scratch, x, a, a->w_gcn, in);
            hsdag_nn_linear_forward(y, g->scratch, w, b, n, in, out);
        } else {
            hsdag_nn_linear_forward(g->scratch, x, w, NULL, n, in, out);
            hsdag_nn_spmm_forward(y, g->scratch, a, a->w_gcn, out);
            for (int32_t i = 0; i < n; i++) acc_(y + (size_t)i * out, b, out);
        }
        break;
    case HSDAG_NN_GNN_GAT:
        gat_forward(g, p, y, cache, x, a);
        break;
    case HSDAG_NN_GNN_GIN: {
        float *h = cache, *r = cache + (size_t)n * in, c1 = 1.0f + gin_eps(g, p);
        hsdag_nn_spmm_forward(h, x, a, a->w_sum, in);
        for (size_t i = 0; i < (size_t)n * in; i++) h[i] += c1 * x[i];
        hsdag_nn_linear_forward(r, h, w, b, n, in, out);
        hsdag_nn_relu_forward(r, r, (size_t)n * out);
        hsdag_nn_linear_forward(y, r, hsdag_nn_params_value(p, g->w2), hsdag_nn_params_value(p, g->b2), n,
                                out, out);
        break;
    }
    case HSDAG_NN_GNN_SAGE: {
        float *mn = cache;
        hsdag_nn_spmm_forward(mn, x, a, a->w_mean, in);
        hsdag_nn_linear_forward(y, x, w, b, n, in, out);
        /* y += mean W_neigh^T */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, mn, in,
                    hsdag_nn_params_value(p, g->w2), in, 1.0f, y, out);
        break;
    }
    }
    return 0;
}

int hsdag_nn_gnn_backward(hsdag_nn_gnn *g, hsdag_nn_params *p, float *dx, const float *dy, const float *cache,
                          const float *x, const hsdag_nn_adj *a, hsdag_err *e)
{
    // dx (n, in) or NULL, dy (n, out), cache and x as in forward
    int rc = hsdag_nn_gnn_reserve(g, a->n, a->nnz, e);
    if (rc < 0) return rc;
    int32_t n = a->n, in = g->c.in, out = g->c.out;
    size_t nin = (size_t)n * in, nout = (size_t)n * out;
    const float *w = hsdag_nn_params_value(p, g->w);
    float *gw = hsdag_nn_params_grad(p, g->w), *gb = hsdag_nn_params_grad(p, g->b);
    float *s = g->scratch;
    switch (g->c.kind) {
    case HSDAG_NN_GNN_GCN:
        if (in < out) { /* y = (A x) W^T + b: recompute A x, then dS = dy W, dx += A^T dS */
            float *ax = s, *ds = s + nin;
            hsdag_nn_spmm_forward(ax, x, a, a->w_gcn, in);
            memset(ds, 0, nin * sizeof(float));
            hsdag_nn_linear_backward(dx ? ds : NULL, gw, gb, dy, ax, w, n, in, out);
            if (dx) hsdag_nn_spmm_backward(dx, ds, a, a->w_gcn, in);
        } else { /* y = A (x W^T) + b: dZ = A^T dy */
            memset(s, 0, nout * sizeof(float));
            hsdag_nn_spmm_backward(s, dy, a, a->w_gcn, out);
            hsdag_nn_linear_backward(dx, gw, NULL, s, x, w, n, in, out);
            for (int32_t i = 0; i < n; i++) acc_(gb, dy + (size_t)i * out, out);
        }
        break;
    case HSDAG_NN_GNN_GAT:
        gat_backward(g, p, dx, dy, cache, x, a);
        break;
    case HSDAG_NN_GNN_GIN: {
        const float *h = cache, *r = cache + nin;
        float *dr = s, *du = s + nout, *dh = s + 2 * nout;
        memset(s, 0, (2 * nout + nin) * sizeof(float));
        hsdag_nn_linear_backward(dr, hsdag_nn_params_grad(p, g->w2), hsdag_nn_params_grad(p, g->b2), dy, r,
                                 hsdag_nn_params_value(p, g->w2), n, out, out);
        hsdag_nn_relu_backward(du, dr, r, nout);
        int need_dh = dx || g->eps >= 0;
        hsdag_nn_linear_backward(need_dh ? dh : NULL, gw, gb, du, h, w, n, in, out);
        if (g->eps >= 0) {
            float acc = 0.0f;
            for (size_t i = 0; i < nin; i++) acc += dh[i] * x[i];
            hsdag_nn_params_grad(p, g->eps)[0] += acc;
        }
        if (dx) {
            float c1 = 1.0f + gin_eps(g, p);
            for (size_t i = 0; i < nin; i++) dx[i] += c1 * dh[i];
            hsdag_nn_spmm_backward(dx, dh, a, a->w_sum, in);
        }
        break;
    }
    case HSDAG_NN_GNN_SAGE: {
        const float *mn = cache;
        hsdag_nn_linear_backward(dx, gw, gb, dy, x, w, n, in, out);
        float *dm = s;
        if (dx) memset(dm, 0, nin * sizeof(float));
        hsdag_nn_linear_backward(dx ? dm : NULL, hsdag_nn_params_grad(p, g->w2), NULL, dy, mn,
                                 hsdag_nn_params_value(p, g->w2), n, in, out);
        if (dx) hsdag_nn_spmm_backward(dx, dm, a, a->w_mean, in);
        break;
    }
    }
    return 0;
}
