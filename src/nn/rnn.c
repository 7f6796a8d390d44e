/* rnn.c - sequence kernels: the LSTM cell, additive (Bahdanau) attention and the mean embedding bag, each
 * _forward next to its _backward (the layers of the Mirhoseini et al. RNN placer and of Placeto's inputs).
 * Not here: unrolling over a sequence (the caller loops over time and keeps one cache per step), parameter
 * storage (params.c: hsdag_nn_lstm_add); nothing here allocates.
 * Entry points: hsdag_nn_lstm_cell_forward/backward, hsdag_nn_attention_forward/backward,
 *   hsdag_nn_embedding_bag_forward/backward. */
#include "hsdag/nn.h"
#include "vec4.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- LSTM cell ---- */

void hsdag_nn_lstm_cell_forward(float *h1, float *c1, float *cache, const float *x, const float *h0,
                                const float *c0, const float *wx, const float *wh, const float *b, int32_t n,
                                int32_t in, int32_t hid)
{
    // h1 (n, hid), c1 (n, hid), cache (n, 5 hid), x (n, in), h0 (n, hid) or NULL, c0 (n, hid) or NULL,
    // wx (4 hid, in), wh (4 hid, hid), b (4 hid) or NULL
    if (n <= 0) return;
    int32_t g4 = 4 * hid;
    /* pre-activations z (n, 4 hid) in the first 4 hid columns of each cache row: sgemm with ldc = 5 hid */
    for (int32_t i = 0; i < n; i++) {
        float *z = cache + (size_t)i * 5 * hid;
        if (b)
            memcpy(z, b, sizeof(float) * (size_t)g4);
        else
            memset(z, 0, sizeof(float) * (size_t)g4);
    }
    if (n == 1) { /* one step: GEMVs (OpenBLAS's GEMM packs its operands even for one row) */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, g4, in, 1.0f, wx, in, x, 1, 1.0f, cache, 1);
        if (h0) cblas_sgemv(CblasRowMajor, CblasNoTrans, g4, hid, 1.0f, wh, hid, h0, 1, 1.0f, cache, 1);
    } else {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, g4, in, 1.0f, x, in, wx, in, 1.0f, cache,
                    5 * hid);
        if (h0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, g4, hid, 1.0f, h0, hid, wh, hid, 1.0f,
                        cache, 5 * hid);
    }
    for (int32_t i = 0; i < n; i++) {
        float *z = cache + (size_t)i * 5 * hid;
        float *gi = z, *gf = z + hid, *gg = z + 2 * hid, *go = z + 3 * hid, *tc = z + 4 * hid;
        float *hr = h1 + (size_t)i * hid, *cr = c1 + (size_t)i * hid;
        const float *cp = c0 ? c0 + (size_t)i * hid : NULL;
        /* the gates through layers.c's activations, in place: input and forget (adjacent), cell, output */
        hsdag_nn_sigmoid_forward(gi, gi, (size_t)2 * hid);
        hsdag_nn_tanh_forward(gg, gg, (size_t)hid);
        hsdag_nn_sigmoid_forward(go, go, (size_t)hid);
        for (int32_t j = 0; j < hid; j++) cr[j] = gi[j] * gg[j] + (cp ? gf[j] * cp[j] : 0.0f);
        hsdag_nn_tanh_forward(tc, cr, (size_t)hid);
        hsdag_nn_mul_forward(hr, go, tc, (size_t)hid);
    }
}

void hsdag_nn_lstm_cell_backward(float *dx, float *dh0, float *dc0, float *dwx, float *dwh, float *db,
                                 float *dz, const float *dh1, const float *dc1, const float *cache,
                                 const float *x, const float *h0, const float *c0, const float *wx,
                                 const float *wh, int32_t n, int32_t in, int32_t hid)
{
    // dz (n, 4 hid) scratch, overwritten; dh1, dc1 (n, hid) or NULL; the rest as in forward
    if (n <= 0) return;
    int32_t g4 = 4 * hid;
    for (int32_t i = 0; i < n; i++) {
        const float *z = cache + (size_t)i * 5 * hid;
        const float *gi = z, *gf = z + hid, *gg = z + 2 * hid, *go = z + 3 * hid, *tc = z + 4 * hid;
        const float *gh = dh1 ? dh1 + (size_t)i * hid : NULL, *gc = dc1 ? dc1 + (size_t)i * hid : NULL;
        const float *cp = c0 ? c0 + (size_t)i * hid : NULL;
        float *d = dz + (size_t)i * g4;
        for (int32_t j = 0; j < hid; j++) {
            float dhj = gh ? gh[j] : 0.0f;
            float dc = (gc ? gc[j] : 0.0f) + dhj * go[j] * (1.0f - tc[j] * tc[j]);
            float cprev = cp ? cp[j] : 0.0f;
            d[j] = dc * gg[j] * gi[j] * (1.0f - gi[j]);
            d[hid + j] = dc * cprev * gf[j] * (1.0f - gf[j]);
            d[2 * hid + j] = dc * gi[j] * (1.0f - gg[j] * gg[j]);
            d[3 * hid + j] = dhj * tc[j] * go[j] * (1.0f - go[j]);
            if (dc0) dc0[(size_t)i * hid + j] += dc * gf[j];
        }
    }
    if (n == 1) {
        hsdag_nn_linear_row_backward(dx, dwx, db, dz, x, wx, in, g4);
        if (h0) hsdag_nn_linear_row_backward(dh0, dwh, NULL, dz, h0, wh, hid, g4);
        return;
    }
    hsdag_nn_linear_backward(dx, dwx, db, dz, x, wx, n, in, g4);
    if (h0) hsdag_nn_linear_backward(dh0, dwh, NULL, dz, h0, wh, n, hid, g4);
}

/* ---- additive attention ---- */

/* tanh of 4 lanes: sign(x) (1 - t) / (1 + t), t = exp(-2 |x|) with |x| clamped to 9 (tanh(9) rounds to 1).
 * exp(y), y in [-18, 0]: y = k ln 2 + f, |f| <= ln2 / 2 (Cody-Waite split of ln 2), e^f by its degree-6
 * Taylor polynomial (truncation < 2e-7 relative), times 2^k through the exponent bits. Absolute error of the
 * result < 3e-7 (checked against tanh in tests/test_rnn.c); 1 - t loses relative precision only where
 * tanh(x) ~ x is tiny. The attention spends most of its time here: libm's tanhf is ~6x slower. */
static inline v4f_ tanh4_(v4f_ x)
{
    const v4f_ zero = {0, 0, 0, 0}, one = {1, 1, 1, 1};
    v4i_ neg = x < zero;
    v4f_ ax = (v4f_)((v4i_)x & ~(v4i_){INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN});
    v4i_ big = ax > (v4f_){9, 9, 9, 9};
    ax = (v4f_)(((v4i_)ax & ~big) | ((v4i_)(v4f_){9, 9, 9, 9} & big));
    v4f_ y = ax * -2.0f;
    v4f_ kf = y * 1.44269504088896341f - 0.5f; /* y <= 0: truncation rounds to nearest */
    v4i_ k = __builtin_convertvector(kf, v4i_);
    kf = __builtin_convertvector(k, v4f_);
    v4f_ f = y - kf * 0.693359375f - kf * -2.12194440e-4f;
    v4f_ p = zero + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    v4f_ t = p * (v4f_)((k + 127) << 23);
    v4f_ r = (one - t) / (one + t);
    return (v4f_)((v4i_)r ^ (neg & (v4i_){INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN}));
}

/* th (a) = tanh(k + q); returns v . th. a is any length (a tail of fewer than 4 lanes is padded). */
static float score_(float *th, const float *k, const float *q, const float *v, int32_t a)
{
    v4f_ acc = {0, 0, 0, 0};
    int32_t t = 0;
    for (; t + 4 <= a; t += 4) {
        v4f_ h = tanh4_(ld4_(k + t) + ld4_(q + t));
        st4_(th + t, h);
        acc += h * ld4_(v + t);
    }
    float s = hsum4_(acc);
    if (t < a) {
        float kb[4] = {0}, qb[4] = {0}, hb[4];
        memcpy(kb, k + t, sizeof(float) * (size_t)(a - t));
        memcpy(qb, q + t, sizeof(float) * (size_t)(a - t));
        st4_(hb, tanh4_(ld4_(kb) + ld4_(qb)));
        for (int32_t i = t; i < a; i++) {
            th[i] = hb[i - t];
            s += th[i] * v[i];
        }
    }
    return s;
}

void hsdag_nn_attention_forward(float *ctx, float *alpha, float *tcache, const float *qp, const float *kp,
                                const float *v, const float *vals, int32_t m, int32_t n, int32_t a,
                                int32_t dv)
{
    // ctx (m, dv), alpha (m, n), tcache (m, n, a) or NULL, qp (m, a), kp (n, a), v (a), vals (n, dv)
    if (m <= 0) return;
    float th[64];
    for (int32_t k = 0; k < m; k++) {
        const float *q = qp + (size_t)k * a;
        float *al = alpha + (size_t)k * n;
        for (int32_t j = 0; j < n; j++) {
            const float *kr = kp + (size_t)j * a;
            float *tc = tcache ? tcache + ((size_t)k * n + j) * a : NULL;
            if (tc) {
                al[j] = score_(tc, kr, q, v, a);
                continue;
            }
            float s = 0.0f;
            for (int32_t t0 = 0; t0 < a; t0 += 64) { /* no cache: chunks of 64 through a stack buffer */
                int32_t w = a - t0 < 64 ? a - t0 : 64;
                s += score_(th, kr + t0, q + t0, v + t0, w);
            }
            al[j] = s;
        }
    }
    hsdag_nn_softmax_forward(alpha, alpha, NULL, m, n);
    if (n <= 0)
        memset(ctx, 0, sizeof(float) * (size_t)m * (size_t)dv);
    else if (m == 1) /* one query (a decoder step): a GEMV, much cheaper than a 1-row GEMM in OpenBLAS */
        cblas_sgemv(CblasRowMajor, CblasTrans, n, dv, 1.0f, vals, dv, alpha, 1, 0.0f, ctx, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, dv, n, 1.0f, alpha, n, vals, dv, 0.0f, ctx,
                    dv);
}

void hsdag_nn_attention_backward(float *dqp, float *dkp, float *dvv, float *dvals, float *scratch,
                                 const float *dctx, const float *alpha, const float *tcache, const float *qp,
                                 const float *kp, const float *v, const float *vals, int32_t m, int32_t n,
                                 int32_t a, int32_t dv)
{
    // scratch (n + a) overwritten; dqp (m, a), dkp (n, a), dvv (a), dvals (n, dv): each += or NULL
    if (m <= 0 || n <= 0) return;
    if (dvals) {
        if (m == 1)
            cblas_sger(CblasRowMajor, n, dv, 1.0f, alpha, 1, dctx, 1, dvals, dv);
        else
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, dv, m, 1.0f, alpha, n, dctx, dv, 1.0f,
                        dvals, dv);
    }
    float *dal = scratch, *th = scratch + n;
    for (int32_t k = 0; k < m; k++) {
        const float *al = alpha + (size_t)k * n, *gc = dctx + (size_t)k * dv, *q = qp + (size_t)k * a;
        /* dalpha_j = dctx_k . vals_j, then the softmax backward: ds_j = alpha_j (dalpha_j - sum alpha dalpha) */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, dv, 1.0f, vals, dv, gc, 1, 0.0f, dal, 1);
        float dot = 0.0f;
        for (int32_t j = 0; j < n; j++) dot += al[j] * dal[j];
        for (int32_t j = 0; j < n; j++) {
            float ds = al[j] * (dal[j] - dot);
            if (ds == 0.0f) continue;
            const float *kr = kp + (size_t)j * a;
            const float *h = th;
            if (tcache)
                h = tcache + ((size_t)k * n + j) * a;
            else /* recompute tanh(kp_j + qp_k) */
                (void)score_(th, kr, q, v, a);
            float *gk = dkp ? dkp + (size_t)j * a : NULL, *gq = dqp ? dqp + (size_t)k * a : NULL;
            int32_t t = 0;
            for (; t + 4 <= a; t += 4) {
                v4f_ h4 = ld4_(h + t), du = ds * ld4_(v + t) * (1.0f - h4 * h4);
                if (dvv) st4_(dvv + t, ld4_(dvv + t) + ds * h4);
                if (gk) st4_(gk + t, ld4_(gk + t) + du);
                if (gq) st4_(gq + t, ld4_(gq + t) + du);
            }
            for (; t < a; t++) {
                float du = ds * v[t] * (1.0f - h[t] * h[t]);
                if (dvv) dvv[t] += ds * h[t];
                if (gk) gk[t] += du;
                if (gq) gq[t] += du;
            }
        }
    }
}

/* ---- mean embedding bag ---- */

void hsdag_nn_embedding_bag_forward(float *y, const float *table, const int32_t *off, const int32_t *idx,
                                    int32_t nb, int32_t d)
{
    // y (nb, d), table (rows, d), off (nb + 1), idx (off[nb]) in [0, rows)
    for (int32_t b = 0; b < nb; b++) {
        float *yr = y + (size_t)b * d;
        memset(yr, 0, sizeof(float) * (size_t)d);
        int32_t cnt = off[b + 1] - off[b];
        for (int32_t k = off[b]; k < off[b + 1]; k++) {
            const float *t = table + (size_t)idx[k] * d;
            for (int32_t j = 0; j < d; j++) yr[j] += t[j];
        }
        if (cnt > 1) {
            float inv = 1.0f / (float)cnt;
            for (int32_t j = 0; j < d; j++) yr[j] *= inv;
        }
    }
}

void hsdag_nn_embedding_bag_backward(float *dtable, const float *dy, const int32_t *off, const int32_t *idx,
                                     int32_t nb, int32_t d)
{
    for (int32_t b = 0; b < nb; b++) {
        int32_t cnt = off[b + 1] - off[b];
        if (cnt <= 0) continue;
        float inv = 1.0f / (float)cnt;
        const float *g = dy + (size_t)b * d;
        for (int32_t k = off[b]; k < off[b + 1]; k++) {
            float *t = dtable + (size_t)idx[k] * d;
            for (int32_t j = 0; j < d; j++) t[j] += g[j] * inv;
        }
    }
}
