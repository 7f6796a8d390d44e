/* layers.c - dense kernels (Linear via cblas_sgemm, activations incl. tanh, LayerNorm, dropout, softmax,
 * log-softmax), the categorical sampler and the entropy; each _forward next to its _backward.
 * Not here: graph kernels (gnn.c), parameter storage (params.c); nothing here allocates.
 * Entry points: hsdag_nn_<kernel>_forward/_backward, hsdag_nn_categorical_*, hsdag_nn_entropy_*.
 */
#include "hsdag/nn.h"
#include "vec4.h" /* the hot elementwise loops are written with 4-lane vectors */

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- Linear ---- */

void hsdag_nn_linear_forward(float *y, const float *x, const float *w, const float *b, int32_t n, int32_t in,
                             int32_t out)
{
    // y (n, out), x (n, in), w (out, in), b (out)
    if (n <= 0) return;
    float beta = 0.0f;
    if (b) { /* start from the bias rows and let sgemm accumulate (beta = 1) */
        for (int32_t i = 0; i < n; i++) memcpy(y + (size_t)i * out, b, (size_t)out * sizeof(float));
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0f, x, in, w, in, beta, y, out);
}

void hsdag_nn_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                              const float *w, int32_t n, int32_t in, int32_t out)
{
    // dx (n, in), dw (out, in), db (out), dy (n, out)
    if (n <= 0) return;
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, out, 1.0f, dy, out, w, in, 1.0f, dx,
                    in);
    if (dw)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, n, 1.0f, dy, out, x, in, 1.0f, dw, in);
    if (db) /* column sums as a GEMV with a vector of ones would need a buffer: plain loop */
        for (int32_t i = 0; i < n; i++) {
            const float *r = dy + (size_t)i * out;
            int32_t j = 0;
            for (; j + 4 <= out; j += 4) st4_(db + j, ld4_(db + j) + ld4_(r + j));
            for (; j < out; j++) db[j] += r[j];
        }
}

/* One row (a recurrent step): GEMV and a rank-1 update, as OpenBLAS's GEMM packs its operands even for one
 * row. Same values as the n = 1 Linear up to float rounding (kept apart so that the GEMM callers stay
 * bit-identical to their earlier runs). */
void hsdag_nn_linear_row_forward(float *y, const float *x, const float *w, const float *b, int32_t in,
                                 int32_t out)
{
    if (b) memcpy(y, b, (size_t)out * sizeof(float));
    cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, w, in, x, 1, b ? 1.0f : 0.0f, y, 1);
}

void hsdag_nn_linear_row_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                                  const float *w, int32_t in, int32_t out)
{
    if (dx) cblas_sgemv(CblasRowMajor, CblasTrans, out, in, 1.0f, w, in, dy, 1, 1.0f, dx, 1);
    if (dw) cblas_sger(CblasRowMajor, out, in, 1.0f, dy, 1, x, 1, dw, in);
    if (db)
        for (int32_t j = 0; j < out; j++) db[j] += dy[j];
}

/* ---- pointwise ---- */

/* ReLU runs on random-sign data, where a data-dependent branch mispredicts half the time and GCC -O2
 * emits one for `x > 0 ? x : 0`: so clear the bits with a mask built from the sign bit (exact:
 * negatives and -0 become +0, positives and +NaN pass). */
void hsdag_nn_relu_forward(float *y, const float *x, size_t len)
{
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        v4i_ u = (v4i_)ld4_(x + i);
        u &= ~(u >> 31); /* arithmetic shift: all ones for a set sign bit */
        st4_(y + i, (v4f_)u);
    }
    for (; i < len; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        u &= (u >> 31) - 1u;
        memcpy(&y[i], &u, 4);
    }
}

void hsdag_nn_relu_backward(float *restrict dx, const float *restrict dy, const float *restrict y, size_t len)
{
    size_t i = 0;
    const v4f_ zero = {0.0f, 0.0f, 0.0f, 0.0f};
    for (; i + 4 <= len; i += 4) {
        v4i_ keep = ld4_(y + i) > zero;
        v4f_ g = (v4f_)((v4i_)ld4_(dy + i) & keep);
        st4_(dx + i, ld4_(dx + i) + g);
    }
    for (; i < len; i++) {
        uint32_t u, keep = 0u - (uint32_t)(y[i] > 0.0f);
        memcpy(&u, &dy[i], 4);
        u &= keep;
        float g;
        memcpy(&g, &u, 4);
        dx[i] += g;
    }
}

void hsdag_nn_leaky_relu_forward(float *y, const float *x, float slope, size_t len)
{
    for (size_t i = 0; i < len; i++) y[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

void hsdag_nn_leaky_relu_backward(float *dx, const float *dy, const float *x, float slope, size_t len)
{
    for (size_t i = 0; i < len; i++) dx[i] += x[i] > 0.0f ? dy[i] : slope * dy[i];
}

void hsdag_nn_sigmoid_forward(float *y, const float *x, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        /* stable for large |x|: never exp of a large positive number */
        float v = x[i];
        if (v >= 0.0f)
            y[i] = 1.0f / (1.0f + expf(-v));
        else {
            float z = expf(v);
            y[i] = z / (1.0f + z);
        }
    }
}

void hsdag_nn_sigmoid_backward(float *dx, const float *dy, const float *y, size_t len)
{
    for (size_t i = 0; i < len; i++) dx[i] += dy[i] * y[i] * (1.0f - y[i]);
}

void hsdag_nn_tanh_forward(float *y, const float *x, size_t len)
{
    for (size_t i = 0; i < len; i++) y[i] = tanhf(x[i]);
}

void hsdag_nn_tanh_backward(float *dx, const float *dy, const float *y, size_t len)
{
    for (size_t i = 0; i < len; i++) dx[i] += dy[i] * (1.0f - y[i] * y[i]);
}

void hsdag_nn_add_forward(float *y, const float *a, const float *b, size_t len)
{
    size_t i = 0;
    for (; i + 4 <= len; i += 4) st4_(y + i, ld4_(a + i) + ld4_(b + i));
    for (; i < len; i++) y[i] = a[i] + b[i];
}

static void acc_(float *d, const float *s, size_t len)
{
    size_t i = 0;
    for (; i + 4 <= len; i += 4) st4_(d + i, ld4_(d + i) + ld4_(s + i));
    for (; i < len; i++) d[i] += s[i];
}

void hsdag_nn_add_backward(float *da, float *db, const float *dy, size_t len)
{
    if (da) acc_(da, dy, len);
    if (db) acc_(db, dy, len);
}

void hsdag_nn_mul_forward(float *y, const float *a, const float *b, size_t len)
{
    size_t i = 0;
    for (; i + 4 <= len; i += 4) st4_(y + i, ld4_(a + i) * ld4_(b + i));
    for (; i < len; i++) y[i] = a[i] * b[i];
}

void hsdag_nn_mul_backward(float *da, float *db, const float *dy, const float *a, const float *b, size_t len)
{
    if (da) {
        size_t i = 0;
        for (; i + 4 <= len; i += 4) st4_(da + i, ld4_(da + i) + ld4_(dy + i) * ld4_(b + i));
        for (; i < len; i++) da[i] += dy[i] * b[i];
    }
    if (db) {
        size_t i = 0;
        for (; i + 4 <= len; i += 4) st4_(db + i, ld4_(db + i) + ld4_(dy + i) * ld4_(a + i));
        for (; i < len; i++) db[i] += dy[i] * a[i];
    }
}

void hsdag_nn_rowscale_forward(float *y, const float *x, const float *s, int32_t n, int32_t d)
{
    // y (n, d), x (n, d), s (n)
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < d; j++) y[(size_t)i * d + j] = x[(size_t)i * d + j] * s[i];
}

void hsdag_nn_rowscale_backward(float *dx, float *ds, const float *dy, const float *x, const float *s,
                                int32_t n, int32_t d)
{
    for (int32_t i = 0; i < n; i++) {
        const float *gy = dy + (size_t)i * d, *xr = x + (size_t)i * d;
        if (dx)
            for (int32_t j = 0; j < d; j++) dx[(size_t)i * d + j] += gy[j] * s[i];
        if (ds) {
            float acc = 0.0f;
            for (int32_t j = 0; j < d; j++) acc += gy[j] * xr[j];
            ds[i] += acc;
        }
    }
}

void hsdag_nn_concat_forward(float *y, const float *a, const float *b, int32_t n, int32_t da, int32_t db)
{
    // y (n, da + db), a (n, da), b (n, db)
    size_t w = (size_t)da + (size_t)db;
    for (int32_t i = 0; i < n; i++) {
        memcpy(y + i * w, a + (size_t)i * da, (size_t)da * sizeof(float));
        memcpy(y + i * w + da, b + (size_t)i * db, (size_t)db * sizeof(float));
    }
}

void hsdag_nn_concat_backward(float *dA, float *dB, const float *dy, int32_t n, int32_t da, int32_t db)
{
    size_t w = (size_t)da + (size_t)db;
    for (int32_t i = 0; i < n; i++) {
        const float *g = dy + i * w;
        if (dA)
            for (int32_t j = 0; j < da; j++) dA[(size_t)i * da + j] += g[j];
        if (dB)
            for (int32_t j = 0; j < db; j++) dB[(size_t)i * db + j] += g[da + j];
    }
}

/* ---- LayerNorm ---- */

/* Row sums run in 8 lanes (two 4-lane accumulators) summed pairwise at the end: a fixed order, so
 * deterministic, and not one long dependency chain. */
void hsdag_nn_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g,
                                const float *b, int32_t n, int32_t d, float eps)
{
    // y (n, d), mean (n), rstd (n), x (n, d), g (d), b (d)
    const v4f_ zero = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int32_t i = 0; i < n; i++) {
        const float *xr = x + (size_t)i * d;
        float *yr = y + (size_t)i * d;
        v4f_ a0 = zero, a1 = zero;
        int32_t j = 0;
        for (; j + 8 <= d; j += 8) {
            a0 += ld4_(xr + j);
            a1 += ld4_(xr + j + 4);
        }
        float m = hsum4_(a0 + a1);
        for (; j < d; j++) m += xr[j];
        m /= (float)d;
        /* two-pass variance: no cancellation */
        a0 = zero, a1 = zero;
        for (j = 0; j + 8 <= d; j += 8) {
            v4f_ c0 = ld4_(xr + j) - m, c1 = ld4_(xr + j + 4) - m;
            a0 += c0 * c0;
            a1 += c1 * c1;
        }
        float v = hsum4_(a0 + a1);
        for (; j < d; j++) v += (xr[j] - m) * (xr[j] - m);
        v /= (float)d;
        float s = 1.0f / sqrtf(v + eps);
        for (j = 0; j + 4 <= d; j += 4) st4_(yr + j, (ld4_(xr + j) - m) * s * ld4_(g + j) + ld4_(b + j));
        for (; j < d; j++) yr[j] = (xr[j] - m) * s * g[j] + b[j];
        mean[i] = m;
        rstd[i] = s;
    }
}

void hsdag_nn_layernorm_backward(float *dx, float *dg, float *db, const float *dy, const float *x,
                                 const float *mean, const float *rstd, const float *g, int32_t n, int32_t d)
{
    // dx (n, d), dg (d), db (d), dy (n, d)
    const v4f_ zero = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int32_t i = 0; i < n; i++) {
        const float *xr = x + (size_t)i * d, *gy = dy + (size_t)i * d;
        float m = mean[i], s = rstd[i];
        /* dxhat = dy * g; dx = s * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) */
        v4f_ s1 = zero, s2 = zero;
        int32_t j = 0;
        for (; j + 4 <= d; j += 4) {
            v4f_ xh = (ld4_(xr + j) - m) * s, gj = ld4_(gy + j), dxh = gj * ld4_(g + j);
            s1 += dxh;
            s2 += dxh * xh;
            if (dg) st4_(dg + j, ld4_(dg + j) + gj * xh);
            if (db) st4_(db + j, ld4_(db + j) + gj);
        }
        float sum1 = hsum4_(s1), sum2 = hsum4_(s2);
        for (; j < d; j++) {
            float xh = (xr[j] - m) * s, dxh = gy[j] * g[j];
            sum1 += dxh;
            sum2 += dxh * xh;
            if (dg) dg[j] += gy[j] * xh;
            if (db) db[j] += gy[j];
        }
        if (!dx) continue;
        sum1 /= (float)d;
        sum2 /= (float)d;
        float *gx = dx + (size_t)i * d;
        for (j = 0; j + 4 <= d; j += 4) {
            v4f_ xh = (ld4_(xr + j) - m) * s;
            st4_(gx + j, ld4_(gx + j) + s * (ld4_(gy + j) * ld4_(g + j) - sum1 - xh * sum2));
        }
        for (; j < d; j++) {
            float xh = (xr[j] - m) * s;
            gx[j] += s * (gy[j] * g[j] - sum1 - xh * sum2);
        }
    }
}

/* ---- Dropout ---- */

/* Element i is kept iff its 32-bit uniform w_i / 2^32 >= p, decided on the integer: w_i >= ceil(p 2^32)
 * (exact: p 2^32 is exact in double and < 2^32 since p < 1). Two elements per xoshiro256** draw (low half
 * first); the draw is the core's hsdag_rng_next (common.h) on a local copy of the state, so the compiler
 * keeps the state in registers. */
void hsdag_nn_dropout_forward(float *y, float *mask, const float *x, float p, int train, hsdag_rng *rng,
                              size_t len)
{
    // y (len), mask (len), x (len)
    HSDAG_ASSERT(p >= 0.0f && p < 1.0f);
    if (!train || p == 0.0f) {
        for (size_t i = 0; i < len; i++) mask[i] = 1.0f;
        if (y != x) memmove(y, x, len * sizeof(float));
        return;
    }
    float keep = 1.0f / (1.0f - p);
    uint32_t thr = (uint32_t)ceil((double)p * 0x1.0p32), kb;
    memcpy(&kb, &keep, 4);
    hsdag_rng st = *rng;
    for (size_t i = 0; i < len; i += 2) {
        uint64_t r = hsdag_rng_next(&st);
        /* branch-free select (a branch here mispredicts on every p-th element): keep's bits or +0 */
        uint32_t b0 = kb & (0u - (uint32_t)((uint32_t)r >= thr)),
                 b1 = kb & (0u - (uint32_t)((uint32_t)(r >> 32) >= thr));
        float m0, m1;
        memcpy(&m0, &b0, 4);
        memcpy(&m1, &b1, 4);
        mask[i] = m0;
        y[i] = x[i] * m0;
        if (i + 1 < len) {
            mask[i + 1] = m1;
            y[i + 1] = x[i + 1] * m1;
        }
    }
    *rng = st;
}

void hsdag_nn_dropout_backward(float *dx, const float *dy, const float *mask, size_t len)
{
    size_t i = 0;
    for (; i + 4 <= len; i += 4) st4_(dx + i, ld4_(dx + i) + ld4_(dy + i) * ld4_(mask + i));
    for (; i < len; i++) dx[i] += dy[i] * mask[i];
}

/* ---- softmax / log-softmax over rows ---- */

static int valid_(const float *x, const uint8_t *mask, size_t i)
{
    return (!mask || mask[i]) && x[i] != -INFINITY;
}

/* max over the valid entries of row x (k); -INFINITY when none */
static float row_max_(const float *x, const uint8_t *mask, int32_t k)
{
    float mx = -INFINITY;
    for (int32_t j = 0; j < k; j++)
        if (valid_(x, mask, (size_t)j) && x[j] > mx) mx = x[j];
    return mx;
}

void hsdag_nn_softmax_forward(float *p, const float *x, const uint8_t *mask, int32_t n, int32_t k)
{
    // p (n, k), x (n, k), mask (n, k) or NULL
    for (int32_t i = 0; i < n; i++) {
        const float *xr = x + (size_t)i * k;
        const uint8_t *mr = mask ? mask + (size_t)i * k : NULL;
        float *pr = p + (size_t)i * k;
        float mx = row_max_(xr, mr, k);
        if (mx == -INFINITY) {
            for (int32_t j = 0; j < k; j++) pr[j] = 0.0f;
            continue;
        }
        float sum = 0.0f;
        for (int32_t j = 0; j < k; j++) {
            float v = valid_(xr, mr, (size_t)j) ? expf(xr[j] - mx) : 0.0f;
            pr[j] = v;
            sum += v;
        }
        for (int32_t j = 0; j < k; j++) pr[j] /= sum;
    }
}

void hsdag_nn_softmax_backward(float *dx, const float *dp, const float *p, int32_t n, int32_t k)
{
    // dx (n, k), dp (n, k), p (n, k)
    for (int32_t i = 0; i < n; i++) {
        const float *pr = p + (size_t)i * k, *g = dp + (size_t)i * k;
        float dot = 0.0f;
        for (int32_t j = 0; j < k; j++) dot += pr[j] * g[j];
        for (int32_t j = 0; j < k; j++) dx[(size_t)i * k + j] += pr[j] * (g[j] - dot);
    }
}

void hsdag_nn_log_softmax_forward(float *lp, const float *x, const uint8_t *mask, int32_t n, int32_t k)
{
    // lp (n, k), x (n, k), mask (n, k) or NULL
    for (int32_t i = 0; i < n; i++) {
        const float *xr = x + (size_t)i * k;
        const uint8_t *mr = mask ? mask + (size_t)i * k : NULL;
        float *lr = lp + (size_t)i * k;
        float mx = row_max_(xr, mr, k);
        if (mx == -INFINITY) {
            for (int32_t j = 0; j < k; j++) lr[j] = -INFINITY;
            continue;
        }
        float sum = 0.0f;
        for (int32_t j = 0; j < k; j++)
            if (valid_(xr, mr, (size_t)j)) sum += expf(xr[j] - mx);
        float lse = mx + logf(sum);
        for (int32_t j = 0; j < k; j++) lr[j] = valid_(xr, mr, (size_t)j) ? xr[j] - lse : -INFINITY;
    }
}

void hsdag_nn_log_softmax_backward(float *dx, const float *dlp, const float *lp, int32_t n, int32_t k)
{
    // dx (n, k), dlp (n, k), lp (n, k)
    for (int32_t i = 0; i < n; i++) {
        const float *lr = lp + (size_t)i * k, *g = dlp + (size_t)i * k;
        float sum = 0.0f;
        for (int32_t j = 0; j < k; j++)
            if (lr[j] != -INFINITY) sum += g[j];
        for (int32_t j = 0; j < k; j++)
            if (lr[j] != -INFINITY) dx[(size_t)i * k + j] += g[j] - expf(lr[j]) * sum;
    }
}

/* ---- categorical sampling ---- */

int hsdag_nn_categorical_sample_logits(int32_t *idx, float *logp, const float *logits, const uint8_t *mask,
                                       int32_t k, hsdag_rng *rng)
{
    float mx = row_max_(logits, mask, k);
    if (mx == -INFINITY || !(mx == mx)) return HSDAG_EINVAL;
    /* weights exp(logit - max) in double, recomputed in a second pass instead of stored, so no
     * buffer is needed; the last valid index absorbs rounding in the CDF */
    double tot = 0.0;
    for (int32_t j = 0; j < k; j++)
        if (valid_(logits, mask, (size_t)j)) tot += exp((double)logits[j] - mx);
    double u = hsdag_rng_uniform(rng) * tot, c = 0.0;
    int32_t pick = -1;
    for (int32_t j = 0; j < k; j++) {
        if (!valid_(logits, mask, (size_t)j)) continue;
        double wj = exp((double)logits[j] - mx);
        if (wj <= 0.0) continue;
        pick = j;
        c += wj;
        if (u < c) break;
    }
    HSDAG_ASSERT(pick >= 0);
    *idx = pick;
    if (logp) *logp = (float)((double)logits[pick] - mx - log(tot));
    return 0;
}

int hsdag_nn_categorical_sample_probs(int32_t *idx, float *logp, const float *probs, const uint8_t *mask,
                                      int32_t k, hsdag_rng *rng)
{
    double tot = 0.0;
    for (int32_t j = 0; j < k; j++)
        if ((!mask || mask[j]) && probs[j] > 0.0f) tot += probs[j];
    if (!(tot > 0.0) || isinf(tot)) return HSDAG_EINVAL;
    double u = hsdag_rng_uniform(rng) * tot, c = 0.0;
    int32_t pick = -1;
    for (int32_t j = 0; j < k; j++) {
        if ((mask && !mask[j]) || !(probs[j] > 0.0f)) continue;
        pick = j;
        c += probs[j];
        if (u < c) break;
    }
    HSDAG_ASSERT(pick >= 0);
    *idx = pick;
    if (logp) *logp = (float)log((double)probs[pick] / tot);
    return 0;
}

int hsdag_nn_categorical_argmax(int32_t *idx, const float *logits, const uint8_t *mask, int32_t k)
{
    int32_t best = -1;
    for (int32_t j = 0; j < k; j++)
        if (valid_(logits, mask, (size_t)j) && (best < 0 || logits[j] > logits[best])) best = j;
    if (best < 0) return HSDAG_EINVAL;
    *idx = best;
    return 0;
}

/* ---- entropy ---- */

void hsdag_nn_entropy_forward(float *h, const float *lp, int32_t n, int32_t k)
{
    // h (n), lp (n, k)
    for (int32_t i = 0; i < n; i++) {
        const float *lr = lp + (size_t)i * k;
        float s = 0.0f;
        for (int32_t j = 0; j < k; j++)
            if (lr[j] != -INFINITY) s -= expf(lr[j]) * lr[j];
        h[i] = s;
    }
}

void hsdag_nn_entropy_backward(float *dlp, const float *dh, const float *lp, int32_t n, int32_t k)
{
    // dlp (n, k), dh (n), lp (n, k)
    for (int32_t i = 0; i < n; i++) {
        const float *lr = lp + (size_t)i * k;
        for (int32_t j = 0; j < k; j++)
            if (lr[j] != -INFINITY) dlp[(size_t)i * k + j] += -dh[i] * expf(lr[j]) * (lr[j] + 1.0f);
    }
}
