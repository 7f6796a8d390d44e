/* test_nn.c - dense kernels checked against naive double references and double-precision central
 * differences; parameter set, Adam, checkpoints, dropout, sampler and entropy.
 * Not here: graph kernels and the composed network (test_gnn.c).
 * Entry point: main. Tolerances: forward float vs double reference <= 1e-5 relative, backward vs
 * finite differences <= GC_TOL (1e-4) relative to the tensor's largest gradient (gradcheck.h). */
#include <string.h>

#include "check.h"
#include "flip_sweep.h"
#include "gradcheck.h"
#include "hsdag/codec.h"
#include "hsdag/nn.h"

#define FWD_TOL 1e-5
#define PRE 0.25f /* gradients start here: the backward must ADD, the check subtracts it again */

/* ---- reference context: inputs in double, loss = sum c_i y_i ---- */
typedef struct ctx {
    int32_t n, in, out, d, k;
    double *x, *w, *b, *g, *a2, *s;
    const float *dmask;  /* dropout mask (constant of the function) */
    const uint8_t *mask; /* softmax mask */
    double eps, slope;
    double *c, *y;
    size_t ny;
    void (*ref)(struct ctx *);
} ctx;

static double loss(void *p)
{
    ctx *c = p;
    c->ref(c);
    double L = 0.0;
    for (size_t i = 0; i < c->ny; i++)
        if (c->c[i] != 0.0) L += c->c[i] * c->y[i];
    return L;
}

static void pre(float *g, size_t n)
{
    for (size_t i = 0; i < n; i++) g[i] = PRE;
}
static void unpre(float *g, size_t n)
{
    for (size_t i = 0; i < n; i++) g[i] -= PRE;
}

/* runs gc_check after removing the PRE offset */
static int grad_ok(const char *what, double *t, size_t n, float *ga, ctx *c)
{
    unpre(ga, n);
    return gc_check(what, t, n, ga, loss, c) <= GC_TOL;
}

/* ---- naive double references ---- */
static void ref_linear(ctx *c)
{
    for (int32_t i = 0; i < c->n; i++)
        for (int32_t o = 0; o < c->out; o++) {
            double a = c->b ? c->b[o] : 0.0;
            for (int32_t j = 0; j < c->in; j++) a += c->x[i * c->in + j] * c->w[o * c->in + j];
            c->y[i * c->out + o] = a;
        }
}
static void ref_relu(ctx *c)
{
    for (size_t i = 0; i < c->ny; i++) c->y[i] = c->x[i] > 0 ? c->x[i] : 0;
}
static void ref_leaky(ctx *c)
{
    for (size_t i = 0; i < c->ny; i++) c->y[i] = c->x[i] > 0 ? c->x[i] : c->slope * c->x[i];
}
static void ref_sigmoid(ctx *c)
{
    for (size_t i = 0; i < c->ny; i++) c->y[i] = 1.0 / (1.0 + exp(-c->x[i]));
}
static void ref_add(ctx *c)
{
    for (size_t i = 0; i < c->ny; i++) c->y[i] = c->x[i] + c->a2[i];
}
static void ref_mul(ctx *c)
{
    for (size_t i = 0; i < c->ny; i++) c->y[i] = c->x[i] * c->a2[i];
}
static void ref_rowscale(ctx *c)
{
    for (int32_t i = 0; i < c->n; i++)
        for (int32_t j = 0; j < c->d; j++) c->y[i * c->d + j] = c->x[i * c->d + j] * c->s[i];
}
static void ref_concat(ctx *c)
{
    int32_t w = c->d + c->k;
    for (int32_t i = 0; i < c->n; i++) {
        for (int32_t j = 0; j < c->d; j++) c->y[i * w + j] = c->x[i * c->d + j];
        for (int32_t j = 0; j < c->k; j++) c->y[i * w + c->d + j] = c->a2[i * c->k + j];
    }
}
static void ref_layernorm(ctx *c)
{
    for (int32_t i = 0; i < c->n; i++) {
        const double *x = c->x + i * c->d;
        double m = 0, v = 0;
        for (int32_t j = 0; j < c->d; j++) m += x[j];
        m /= c->d;
        for (int32_t j = 0; j < c->d; j++) v += (x[j] - m) * (x[j] - m);
        v /= c->d;
        for (int32_t j = 0; j < c->d; j++)
            c->y[i * c->d + j] = (x[j] - m) / sqrt(v + c->eps) * c->g[j] + c->b[j];
    }
}
static void ref_dropout(ctx *c)
{
    for (size_t i = 0; i < c->ny; i++) c->y[i] = c->x[i] * c->dmask[i];
}
static int ref_valid(const ctx *c, size_t i)
{
    return !c->mask || c->mask[i];
}
/* log-softmax rows of c->x into out (n, k); masked -> -inf */
static void ref_lsm_rows(const ctx *c, double *out)
{
    for (int32_t i = 0; i < c->n; i++) {
        double mx = -INFINITY, s = 0;
        for (int32_t j = 0; j < c->k; j++)
            if (ref_valid(c, (size_t)(i * c->k + j)) && c->x[i * c->k + j] > mx) mx = c->x[i * c->k + j];
        for (int32_t j = 0; j < c->k; j++)
            if (ref_valid(c, (size_t)(i * c->k + j))) s += exp(c->x[i * c->k + j] - mx);
        for (int32_t j = 0; j < c->k; j++)
            out[i * c->k + j] =
                ref_valid(c, (size_t)(i * c->k + j)) ? c->x[i * c->k + j] - mx - log(s) : -INFINITY;
    }
}
static void ref_log_softmax(ctx *c)
{
    ref_lsm_rows(c, c->y);
}
static void ref_softmax(ctx *c)
{
    ref_lsm_rows(c, c->y);
    for (size_t i = 0; i < c->ny; i++) c->y[i] = exp(c->y[i]);
}
static void ref_entropy(ctx *c) /* y (n) = H(softmax(x)) */
{
    double lp[64];
    HSDAG_ASSERT(c->n * c->k <= 64);
    ref_lsm_rows(c, lp);
    for (int32_t i = 0; i < c->n; i++) {
        double h = 0;
        for (int32_t j = 0; j < c->k; j++)
            if (lp[i * c->k + j] != -INFINITY) h -= exp(lp[i * c->k + j]) * lp[i * c->k + j];
        c->y[i] = h;
    }
}

/* ---- dense kernel tests ---- */

static void test_linear(hsdag_rng *r, int bias)
{
    enum { N = 5, IN = 7, OUT = 4 };
    float x[N * IN], w[OUT * IN], b[OUT], y[N * OUT], cf[N * OUT], dx[N * IN], dw[OUT * IN], db[OUT];
    double xd[N * IN], wd[OUT * IN], bd[OUT], cd[N * OUT], yd[N * OUT];
    gc_rand_f(x, N * IN, r, -1, 1);
    gc_rand_f(w, OUT * IN, r, -1, 1);
    gc_rand_f(b, OUT, r, -1, 1);
    gc_rand_f(cf, N * OUT, r, -1, 1);
    gc_f2d(xd, x, N * IN);
    gc_f2d(wd, w, OUT * IN);
    gc_f2d(bd, b, OUT);
    gc_f2d(cd, cf, N * OUT);
    ctx c = {.n = N,
             .in = IN,
             .out = OUT,
             .x = xd,
             .w = wd,
             .b = bias ? bd : NULL,
             .c = cd,
             .y = yd,
             .ny = N * OUT,
             .ref = ref_linear};
    hsdag_nn_linear_forward(y, x, w, bias ? b : NULL, N, IN, OUT);
    ref_linear(&c);
    CHECK(gc_maxrel(y, yd, N * OUT, 1) <= FWD_TOL);
    pre(dx, N * IN);
    pre(dw, OUT * IN);
    pre(db, OUT);
    hsdag_nn_linear_backward(dx, dw, bias ? db : NULL, cf, x, w, N, IN, OUT);
    CHECK(grad_ok("linear dx", xd, N * IN, dx, &c));
    CHECK(grad_ok("linear dw", wd, OUT * IN, dw, &c));
    if (bias) CHECK(grad_ok("linear db", bd, OUT, db, &c));
    /* NULL outputs are skipped, not written */
    float dx2[N * IN];
    pre(dx2, N * IN);
    hsdag_nn_linear_backward(NULL, NULL, NULL, cf, x, w, N, IN, OUT);
    hsdag_nn_linear_backward(dx2, NULL, NULL, cf, x, w, N, IN, OUT);
    unpre(dx2, N * IN);
    CHECK(memcmp(dx, dx2, sizeof dx) == 0);
}

/* pointwise kernels: x in (-2, 2) away from the kinks */
static void test_pointwise(hsdag_rng *r)
{
    enum { L = 40 };
    float x[L], a2[L], y[L], cf[L], dx[L], da[L];
    double xd[L], ad[L], cd[L], yd[L];
    gc_rand_f(x, L, r, -2, 2);
    for (int i = 0; i < L; i++)
        if (fabsf(x[i]) < 0.05f) x[i] = 0.5f;
    gc_rand_f(a2, L, r, -2, 2);
    gc_rand_f(cf, L, r, -1, 1);
    gc_f2d(xd, x, L);
    gc_f2d(ad, a2, L);
    gc_f2d(cd, cf, L);
    ctx c = {.x = xd, .a2 = ad, .c = cd, .y = yd, .ny = L, .slope = 0.2};

    c.ref = ref_relu;
    hsdag_nn_relu_forward(y, x, L);
    ref_relu(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    pre(dx, L);
    hsdag_nn_relu_backward(dx, cf, y, L);
    CHECK(grad_ok("relu", xd, L, dx, &c));

    c.ref = ref_leaky;
    hsdag_nn_leaky_relu_forward(y, x, 0.2f, L);
    ref_leaky(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    pre(dx, L);
    hsdag_nn_leaky_relu_backward(dx, cf, x, 0.2f, L);
    CHECK(grad_ok("leaky_relu", xd, L, dx, &c));

    c.ref = ref_sigmoid;
    hsdag_nn_sigmoid_forward(y, x, L);
    ref_sigmoid(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    pre(dx, L);
    hsdag_nn_sigmoid_backward(dx, cf, y, L);
    CHECK(grad_ok("sigmoid", xd, L, dx, &c));
    float big[2] = {-100.0f, 100.0f}, sb[2];
    hsdag_nn_sigmoid_forward(sb, big, 2);
    CHECK(sb[0] >= 0.0f && sb[0] < 1e-30f && sb[1] == 1.0f);

    c.ref = ref_add;
    hsdag_nn_add_forward(y, x, a2, L);
    ref_add(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    pre(dx, L);
    pre(da, L);
    hsdag_nn_add_backward(dx, da, cf, L);
    CHECK(grad_ok("add a", xd, L, dx, &c));
    CHECK(grad_ok("add b", ad, L, da, &c));

    c.ref = ref_mul;
    hsdag_nn_mul_forward(y, x, a2, L);
    ref_mul(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    pre(dx, L);
    pre(da, L);
    hsdag_nn_mul_backward(dx, da, cf, x, a2, L);
    CHECK(grad_ok("mul a", xd, L, dx, &c));
    CHECK(grad_ok("mul b", ad, L, da, &c));

    /* rowscale: (8, 5) by s (8) */
    float s[8], ds[8];
    double sd[8];
    gc_rand_f(s, 8, r, -2, 2);
    gc_f2d(sd, s, 8);
    c.n = 8;
    c.d = 5;
    c.s = sd;
    c.ref = ref_rowscale;
    hsdag_nn_rowscale_forward(y, x, s, 8, 5);
    ref_rowscale(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    pre(dx, L);
    pre(ds, 8);
    hsdag_nn_rowscale_backward(dx, ds, cf, x, s, 8, 5);
    CHECK(grad_ok("rowscale x", xd, L, dx, &c));
    CHECK(grad_ok("rowscale s", sd, 8, ds, &c));

    /* concat: a (5, 3) | b (5, 5) -> (5, 8) */
    c.n = 5;
    c.d = 3;
    c.k = 5;
    c.ref = ref_concat;
    hsdag_nn_concat_forward(y, x, a2, 5, 3, 5);
    ref_concat(&c);
    CHECK(gc_maxrel(y, yd, L, 1) <= FWD_TOL);
    CHECK(y[8] == x[3] && y[11] == a2[5]);
    pre(dx, 15);
    pre(da, 25);
    hsdag_nn_concat_backward(dx, da, cf, 5, 3, 5);
    CHECK(grad_ok("concat a", xd, 15, dx, &c));
    CHECK(grad_ok("concat b", ad, 25, da, &c));
}

static void test_layernorm(hsdag_rng *r)
{
    enum { N = 4, D = 9 };
    float x[N * D], g[D], b[D], y[N * D], mean[N], rstd[N], cf[N * D], dx[N * D], dg[D], db[D];
    double xd[N * D], gd[D], bd[D], cd[N * D], yd[N * D];
    gc_rand_f(x, N * D, r, -2, 3);
    gc_rand_f(g, D, r, 0.5, 1.5);
    gc_rand_f(b, D, r, -0.5, 0.5);
    gc_rand_f(cf, N * D, r, -1, 1);
    gc_f2d(xd, x, N * D);
    gc_f2d(gd, g, D);
    gc_f2d(bd, b, D);
    gc_f2d(cd, cf, N * D);
    ctx c = {.n = N,
             .d = D,
             .x = xd,
             .g = gd,
             .b = bd,
             .eps = 1e-5,
             .c = cd,
             .y = yd,
             .ny = N * D,
             .ref = ref_layernorm};
    hsdag_nn_layernorm_forward(y, mean, rstd, x, g, b, N, D, 1e-5f);
    ref_layernorm(&c);
    CHECK(gc_maxrel(y, yd, N * D, 1) <= FWD_TOL);
    pre(dx, N * D);
    pre(dg, D);
    pre(db, D);
    hsdag_nn_layernorm_backward(dx, dg, db, cf, x, mean, rstd, g, N, D);
    CHECK(grad_ok("layernorm x", xd, N * D, dx, &c));
    CHECK(grad_ok("layernorm g", gd, D, dg, &c));
    CHECK(grad_ok("layernorm b", bd, D, db, &c));
}

static void test_dropout(hsdag_rng *r)
{
    enum { L = 4000 };
    static float x[L], y[L], mask[L], cf[L], dx[L], y2[L], mask2[L];
    static double xd[L], cd[L], yd[L];
    gc_rand_f(x, L, r, -1, 1);
    gc_rand_f(cf, L, r, -1, 1);
    hsdag_rng r1, r2;
    hsdag_rng_seed(&r1, 7);
    hsdag_rng_seed(&r2, 7);
    hsdag_nn_dropout_forward(y, mask, x, 0.2f, 1, &r1, L);
    hsdag_nn_dropout_forward(y2, mask2, x, 0.2f, 1, &r2, L);
    CHECK(memcmp(y, y2, sizeof y) == 0 && memcmp(mask, mask2, sizeof mask) == 0);
    int zeros = 0, bad = 0;
    for (int i = 0; i < L; i++) {
        if (mask[i] == 0.0f)
            zeros++;
        else if (mask[i] != 1.0f / 0.8f)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(zeros > 720 && zeros < 880); /* 800 expected, sd ~25 */
    gc_f2d(xd, x, 40);
    gc_f2d(cd, cf, 40);
    ctx c = {.x = xd, .dmask = mask, .c = cd, .y = yd, .ny = 40, .ref = ref_dropout};
    ref_dropout(&c);
    CHECK(gc_maxrel(y, yd, 40, 1) <= FWD_TOL);
    pre(dx, 40);
    hsdag_nn_dropout_backward(dx, cf, mask, 40);
    CHECK(grad_ok("dropout", xd, 40, dx, &c));
    /* eval: identity, mask 1, rng untouched */
    hsdag_rng before = r1;
    hsdag_nn_dropout_forward(y, mask, x, 0.2f, 0, &r1, L);
    CHECK(memcmp(y, x, sizeof y) == 0 && mask[0] == 1.0f && mask[L - 1] == 1.0f);
    CHECK(memcmp(&before, &r1, sizeof r1) == 0);
}

static void test_softmax(hsdag_rng *r, int masked)
{
    enum { N = 3, K = 6 };
    float x[N * K], p[N * K], lp[N * K], cf[N * K], dx[N * K];
    double xd[N * K], cd[N * K], yd[N * K];
    uint8_t mask[N * K];
    gc_rand_f(x, N * K, r, -3, 3);
    gc_rand_f(cf, N * K, r, -1, 1);
    for (int i = 0; i < N * K; i++) mask[i] = !masked || (i % 3 != 1);
    for (int i = 0; i < N * K; i++)
        if (!mask[i]) cf[i] = 0.0f; /* the loss never reads masked outputs */
    gc_f2d(xd, x, N * K);
    gc_f2d(cd, cf, N * K);
    ctx c = {.n = N, .k = K, .x = xd, .mask = masked ? mask : NULL, .c = cd, .y = yd, .ny = N * K};
    const uint8_t *m = masked ? mask : NULL;

    c.ref = ref_softmax;
    hsdag_nn_softmax_forward(p, x, m, N, K);
    ref_softmax(&c);
    CHECK(gc_maxrel(p, yd, N * K, 1) <= FWD_TOL);
    double s0 = 0;
    for (int j = 0; j < K; j++) s0 += p[j];
    CHECK_NEAR(s0, 1.0, 1e-6);
    if (masked) CHECK(p[1] == 0.0f && p[4] == 0.0f);
    pre(dx, N * K);
    hsdag_nn_softmax_backward(dx, cf, p, N, K);
    CHECK(grad_ok(masked ? "softmax masked" : "softmax", xd, N * K, dx, &c));

    c.ref = ref_log_softmax;
    hsdag_nn_log_softmax_forward(lp, x, m, N, K);
    ref_log_softmax(&c);
    int inf_ok = 1;
    for (int i = 0; i < N * K; i++) {
        if (!mask[i])
            inf_ok &= lp[i] == -INFINITY;
        else
            inf_ok &= fabs(lp[i] - yd[i]) <= FWD_TOL * 10;
    }
    CHECK(inf_ok);
    pre(dx, N * K);
    hsdag_nn_log_softmax_backward(dx, cf, lp, N, K);
    CHECK(grad_ok(masked ? "log_softmax masked" : "log_softmax", xd, N * K, dx, &c));
    if (masked) CHECK(dx[1] == 0.0f); /* untouched (PRE removed) */

    /* entropy of softmax(x): entropy_backward then log_softmax_backward gives d/dx */
    float h[N], dh[N], dlp[N * K];
    double hd[N], chd[N];
    gc_rand_f(dh, N, r, -1, 1);
    gc_f2d(chd, dh, N);
    ctx ce = c;
    ce.c = chd;
    ce.y = hd;
    ce.ny = N;
    ce.ref = ref_entropy;
    hsdag_nn_entropy_forward(h, lp, N, K);
    ref_entropy(&ce);
    CHECK(gc_maxrel(h, hd, N, 1) <= FWD_TOL);
    memset(dlp, 0, sizeof dlp);
    hsdag_nn_entropy_backward(dlp, dh, lp, N, K);
    pre(dx, N * K);
    hsdag_nn_log_softmax_backward(dx, dlp, lp, N, K);
    CHECK(grad_ok(masked ? "entropy masked" : "entropy", xd, N * K, dx, &ce));
    /* closed form: dH/dx_j = -p_j (lp_j + H) */
    int cf_ok = 1;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < K; j++)
            if (lp[i * K + j] != -INFINITY) {
                double want = dh[i] * -exp(lp[i * K + j]) * (lp[i * K + j] + h[i]);
                cf_ok &= fabs(dx[i * K + j] - want) <= 1e-5;
            }
    CHECK(cf_ok);
    if (!masked) { /* uniform logits: entropy = log K */
        float z[K] = {0}, lz[K], hz;
        hsdag_nn_log_softmax_forward(lz, z, NULL, 1, K);
        hsdag_nn_entropy_forward(&hz, lz, 1, K);
        CHECK_NEAR(hz, log(K), 1e-6);
    }
}

static void test_softmax_edge(void)
{
    float x[3] = {-INFINITY, 2.0f, -INFINITY}, p[3], lp[3];
    uint8_t none[3] = {0, 0, 0};
    hsdag_nn_softmax_forward(p, x, NULL, 1, 3);
    CHECK(p[0] == 0.0f && p[1] == 1.0f && p[2] == 0.0f);
    hsdag_nn_log_softmax_forward(lp, x, NULL, 1, 3);
    CHECK(lp[0] == -INFINITY && lp[1] == 0.0f);
    hsdag_nn_softmax_forward(p, x, none, 1, 3);
    CHECK(p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.0f);
    float big[2] = {1000.0f, 999.0f};
    hsdag_nn_softmax_forward(p, big, NULL, 1, 2);
    CHECK_NEAR(p[0], 1.0 / (1.0 + exp(-1.0)), 1e-6);
}

/* ---- categorical sampling ---- */

static void test_sampler(void)
{
    enum { K = 5, DRAWS = 40000 };
    float logits[K] = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f}, lp[K];
    uint8_t mask[K] = {1, 1, 1, 0, 1};
    hsdag_nn_log_softmax_forward(lp, logits, mask, 1, K);
    hsdag_rng r;
    hsdag_rng_seed(&r, 123);
    int cnt[K] = {0}, logp_ok = 1, valid = 1;
    for (int t = 0; t < DRAWS; t++) {
        int32_t idx = -1;
        float l = 0;
        if (hsdag_nn_categorical_sample_logits(&idx, &l, logits, mask, K, &r) != 0 || idx < 0 || idx >= K) {
            valid = 0;
            break;
        }
        cnt[idx]++;
        logp_ok &= fabsf(l - lp[idx]) <= 1e-6f;
    }
    CHECK(valid && logp_ok);
    CHECK_EQ_INT(cnt[3], 0);
    int freq_ok = 1;
    for (int j = 0; j < K; j++) {
        double pj = mask[j] ? exp(lp[j]) : 0.0, sd = sqrt(pj * (1 - pj) / DRAWS) + 1e-9;
        freq_ok &= fabs(cnt[j] / (double)DRAWS - pj) <= 5 * sd;
    }
    CHECK(freq_ok);
    /* same seed, same draws */
    hsdag_rng r1, r2;
    hsdag_rng_seed(&r1, 9);
    hsdag_rng_seed(&r2, 9);
    int same = 1;
    for (int t = 0; t < 100; t++) {
        int32_t a, b;
        hsdag_nn_categorical_sample_logits(&a, NULL, logits, NULL, K, &r1);
        hsdag_nn_categorical_sample_logits(&b, NULL, logits, NULL, K, &r2);
        same &= a == b;
    }
    CHECK(same);
    /* from probabilities, unnormalised; masked and zero entries never drawn */
    float probs[K] = {2.0f, 0.0f, 1.0f, 1.0f, 4.0f};
    int pc[K] = {0};
    for (int t = 0; t < DRAWS; t++) {
        int32_t idx;
        float l;
        hsdag_nn_categorical_sample_probs(&idx, &l, probs, mask, K, &r);
        pc[idx]++;
        if (t == 0) CHECK_NEAR(l, log(probs[idx] / 7.0), 1e-6);
    }
    CHECK(pc[1] == 0 && pc[3] == 0);
    CHECK_NEAR(pc[4] / (double)DRAWS, 4.0 / 7.0, 0.015);
    /* nothing valid */
    uint8_t none[K] = {0};
    int32_t idx;
    CHECK_EQ_INT(hsdag_nn_categorical_sample_logits(&idx, NULL, logits, none, K, &r), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_nn_categorical_sample_probs(&idx, NULL, probs, none, K, &r), HSDAG_EINVAL);
    float allinf[2] = {-INFINITY, -INFINITY};
    CHECK_EQ_INT(hsdag_nn_categorical_sample_logits(&idx, NULL, allinf, NULL, 2, &r), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_nn_categorical_argmax(&idx, logits, mask, K), 0);
    CHECK_EQ_INT(idx, 2);
    mask[2] = 0;
    hsdag_nn_categorical_argmax(&idx, logits, mask, K);
    CHECK_EQ_INT(idx, 4);
    CHECK_EQ_INT(hsdag_nn_categorical_argmax(&idx, logits, none, K), HSDAG_EINVAL);
}

/* ---- parameter set ---- */

static void test_params(void)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    CHECK_EQ_INT(hsdag_nn_params_create(&p, NULL), 0);
    hsdag_nn_linear l;
    hsdag_nn_layernorm ln;
    CHECK_EQ_INT(hsdag_nn_linear_add(p, &l, "enc", 10, 300, 1, &e), 0);
    CHECK_EQ_INT(hsdag_nn_layernorm_add(p, &ln, "ln", 300, &e), 0);
    int32_t u = hsdag_nn_params_add(p, "u", 3, 3, HSDAG_NN_INIT_UNIFORM, 0.5f, &e);
    int32_t nrm = hsdag_nn_params_add(p, "n", 100, 100, HSDAG_NN_INIT_NORMAL, 2.0f, &e);
    int32_t k = hsdag_nn_params_add(p, "k", 1, 2, HSDAG_NN_INIT_CONST, 0.75f, &e);
    CHECK(u >= 0 && nrm >= 0 && k >= 0);
    CHECK_EQ_INT(hsdag_nn_params_add(p, "u", 1, 1, HSDAG_NN_INIT_ZERO, 0, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "'u'") != NULL);
    CHECK_EQ_INT(hsdag_nn_params_add(p, "z", 0, 4, HSDAG_NN_INIT_ZERO, 0, &e), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_nn_params_add(p, "", 1, 4, HSDAG_NN_INIT_ZERO, 0, &e), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_nn_params_add(p, "big", 65536, 65536, HSDAG_NN_INIT_ZERO, 0, &e), HSDAG_ELIMIT);
    CHECK_EQ_INT(hsdag_nn_params_n_tensors(p), 7);
    CHECK_EQ_INT(hsdag_nn_params_find(p, "enc.w"), l.w);
    CHECK_EQ_INT(hsdag_nn_params_find(p, "ln.g"), ln.g);
    CHECK_EQ_INT(hsdag_nn_params_find(p, "nope"), -1);
    CHECK_EQ_INT(hsdag_nn_params_rows(p, l.w), 300);
    CHECK_EQ_INT(hsdag_nn_params_cols(p, l.w), 10);
    /* layout: tensors in order, 16-float aligned, no overlap */
    size_t prev_end = 0;
    int layout_ok = 1;
    for (int32_t t = 0; t < hsdag_nn_params_n_tensors(p); t++) {
        size_t off = hsdag_nn_params_offset(p, t);
        layout_ok &= off % 16 == 0 && off >= prev_end;
        prev_end = off + (size_t)hsdag_nn_params_rows(p, t) * (size_t)hsdag_nn_params_cols(p, t);
    }
    CHECK(layout_ok && hsdag_nn_params_count(p) >= prev_end);
    hsdag_rng r;
    hsdag_rng_seed(&r, 42);
    CHECK_EQ_INT(hsdag_nn_params_alloc(p, &r, &e), 0);
    CHECK_EQ_INT(hsdag_nn_params_alloc(p, &r, &e), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_nn_params_add(p, "late", 1, 1, HSDAG_NN_INIT_ZERO, 0, &e), HSDAG_EINVAL);
    /* initialisations */
    const float *w = hsdag_nn_params_value(p, l.w), *b = hsdag_nn_params_value(p, l.b);
    float lim = 1.0f / sqrtf(10.0f), mx = 0;
    for (int i = 0; i < 3000; i++) mx = fmaxf(mx, fabsf(w[i]));
    CHECK(mx <= lim && mx > 0.9f * lim);
    mx = 0;
    for (int i = 0; i < 300; i++) mx = fmaxf(mx, fabsf(b[i]));
    CHECK(mx <= lim && mx > 0.5f * lim);
    CHECK(hsdag_nn_params_value(p, ln.g)[299] == 1.0f && hsdag_nn_params_value(p, ln.b)[5] == 0.0f);
    CHECK(hsdag_nn_params_value(p, k)[1] == 0.75f);
    double s = 0, s2 = 0;
    const float *nv = hsdag_nn_params_value(p, nrm);
    for (int i = 0; i < 10000; i++) {
        s += nv[i];
        s2 += (double)nv[i] * nv[i];
    }
    CHECK_NEAR(s / 10000, 0.0, 0.06);
    CHECK_NEAR(sqrt(s2 / 10000), 2.0, 0.06);
    /* same seed -> identical block */
    hsdag_nn_params *q = NULL;
    hsdag_nn_params_create(&q, NULL);
    hsdag_nn_linear l2;
    hsdag_nn_layernorm ln2;
    hsdag_nn_linear_add(q, &l2, "enc", 10, 300, 1, &e);
    hsdag_nn_layernorm_add(q, &ln2, "ln", 300, &e);
    hsdag_nn_params_add(q, "u", 3, 3, HSDAG_NN_INIT_UNIFORM, 0.5f, &e);
    hsdag_nn_params_add(q, "n", 100, 100, HSDAG_NN_INIT_NORMAL, 2.0f, &e);
    hsdag_nn_params_add(q, "k", 1, 2, HSDAG_NN_INIT_CONST, 0.75f, &e);
    hsdag_rng_seed(&r, 42);
    hsdag_nn_params_alloc(q, &r, &e);
    CHECK(memcmp(hsdag_nn_params_value(p, -1), hsdag_nn_params_value(q, -1),
                 hsdag_nn_params_count(p) * sizeof(float)) == 0);
    /* zero grad */
    hsdag_nn_params_grad(p, u)[2] = 5.0f;
    hsdag_nn_params_zero_grad(p);
    CHECK(hsdag_nn_params_grad(p, u)[2] == 0.0f);
    hsdag_nn_params_free(p);
    hsdag_nn_params_free(q);
    hsdag_nn_params_free(NULL);
    /* allocation failures are reported, never crash or leak */
    for (long f = 1; f <= 3; f++) {
        hsdag_nn_params *z = NULL;
        hsdag_alloc_fail_after(f);
        int rc = hsdag_nn_params_create(&z, NULL);
        int32_t id = rc == 0 ? hsdag_nn_params_add(z, "a", 4, 4, HSDAG_NN_INIT_ZERO, 0, &e) : rc;
        int rc2 = id >= 0 ? hsdag_nn_params_alloc(z, &r, &e) : id;
        hsdag_alloc_fail_after(0);
        CHECK_EQ_INT(rc2, HSDAG_ENOMEM);
        hsdag_nn_params_free(z);
    }
}

/* ---- Adam against a double reference ---- */

static void test_adam(void)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_params_create(&p, NULL);
    int32_t a = hsdag_nn_params_add(p, "a", 3, 5, HSDAG_NN_INIT_UNIFORM, 1.0f, &e);
    int32_t b = hsdag_nn_params_add(p, "b", 1, 7, HSDAG_NN_INIT_UNIFORM, 1.0f, &e);
    hsdag_rng r;
    hsdag_rng_seed(&r, 5);
    hsdag_nn_params_alloc(p, &r, &e);
    hsdag_nn_adam_config c = hsdag_nn_adam_config_default();
    c.lr = 0.01f;
    c.weight_decay = 0.1f;
    c.clip_norm = 1.0f;
    /* reference over the 22 real entries; targets t: loss sum (w - t)^2 */
    double w[22], m[22] = {0}, v[22] = {0}, t[22];
    float *wa = hsdag_nn_params_value(p, a), *wb = hsdag_nn_params_value(p, b);
    for (int i = 0; i < 22; i++) {
        w[i] = i < 15 ? wa[i] : wb[i - 15];
        t[i] = 0.1 * i - 1.0;
    }
    int ok = 1;
    for (int step = 1; step <= 5; step++) {
        hsdag_nn_params_zero_grad(p);
        float *ga = hsdag_nn_params_grad(p, a), *gb = hsdag_nn_params_grad(p, b);
        float *va = hsdag_nn_params_value(p, a), *vb = hsdag_nn_params_value(p, b);
        double g[22], ss = 0;
        for (int i = 0; i < 22; i++) {
            float wi = i < 15 ? va[i] : vb[i - 15];
            float gi = 2.0f * (wi - (float)t[i]);
            if (i < 15)
                ga[i] = gi;
            else
                gb[i - 15] = gi;
            g[i] = gi;
            ss += g[i] * g[i];
        }
        double nrm = sqrt(ss), sc = nrm > 1.0 ? 1.0 / (nrm + 1e-6) : 1.0;
        hsdag_nn_adam_stats st;
        hsdag_nn_adam_step(p, &c, &st);
        ok &= fabs(st.grad_norm - nrm) <= 1e-9 * nrm && fabs(st.scale - sc) <= 1e-12;
        for (int i = 0; i < 22; i++) {
            double gi = g[i] * sc + 0.1 * w[i];
            m[i] = 0.9 * m[i] + 0.1 * gi;
            v[i] = 0.999 * v[i] + 0.001 * gi * gi;
            double mh = m[i] / (1 - pow(0.9, step)), vh = v[i] / (1 - pow(0.999, step));
            w[i] -= 0.01 * mh / (sqrt(vh) + 1e-8);
            float got = i < 15 ? va[i] : vb[i - 15];
            ok &= fabs(got - w[i]) <= 1e-6;
        }
    }
    CHECK(ok);
    CHECK_EQ_INT(hsdag_nn_params_step(p), 5);
    /* AdamW: decoupled decay on a zero gradient shrinks the value by lr * wd exactly */
    {
        hsdag_nn_params *z = NULL;
        hsdag_nn_params_create(&z, NULL);
        int32_t zt = hsdag_nn_params_add(z, "z", 1, 4, HSDAG_NN_INIT_CONST, 2.0f, &e);
        hsdag_nn_params_alloc(z, &r, &e);
        c = hsdag_nn_adam_config_default();
        c.weight_decay = 0.5f;
        c.decoupled = 1;
        hsdag_nn_adam_step(z, &c, NULL);
        CHECK_NEAR(hsdag_nn_params_value(z, zt)[3], 2.0 * (1 - 1e-3 * 0.5), 1e-6);
        hsdag_nn_params_free(z);
    }
    /* converges on the quadratic */
    c = hsdag_nn_adam_config_default();
    c.lr = 0.05f;
    for (int it = 0; it < 2000; it++) {
        hsdag_nn_params_zero_grad(p);
        for (int i = 0; i < 15; i++)
            hsdag_nn_params_grad(p, a)[i] = 2.0f * (hsdag_nn_params_value(p, a)[i] - (float)t[i]);
        hsdag_nn_adam_step(p, &c, NULL);
    }
    double worst = 0;
    for (int i = 0; i < 15; i++) worst = fmax(worst, fabs(hsdag_nn_params_value(p, a)[i] - t[i]));
    CHECK(worst < 1e-3);
    hsdag_nn_params_free(p);
}

/* ---- checkpoints ---- */

static hsdag_nn_params *make_set(int variant, uint64_t seed)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_params_create(&p, NULL);
    hsdag_nn_linear l;
    hsdag_nn_linear_add(p, &l, "l", 6, variant == 1 ? 5 : 4, 1, &e);
    hsdag_nn_params_add(p, variant == 2 ? "other" : "x", 2, 3, HSDAG_NN_INIT_NORMAL, 1.0f, &e);
    hsdag_rng r;
    hsdag_rng_seed(&r, seed);
    hsdag_nn_params_alloc(p, &r, &e);
    return p;
}

static void test_checkpoint(void)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = make_set(0, 1), *q = make_set(0, 2);
    /* some Adam state */
    for (int s = 0; s < 3; s++) {
        float *g = hsdag_nn_params_grad(p, -1);
        for (size_t i = 0; i < hsdag_nn_params_count(p); i++) g[i] = (float)i * 0.01f - 0.1f;
        hsdag_nn_adam_config c = hsdag_nn_adam_config_default();
        hsdag_nn_adam_step(p, &c, NULL);
    }
    hsdag_buf b = {0};
    hsdag_buf_append(&b, "prefix", 6); /* images can be embedded */
    CHECK_EQ_INT(hsdag_nn_params_save(p, &b, &e), 0);
    size_t used = 0;
    CHECK_EQ_INT(hsdag_nn_params_load(q, b.data + 6, b.len - 6, &used, &e), 0);
    CHECK_EQ_INT(used, b.len - 6);
    CHECK_EQ_INT(hsdag_nn_params_step(q), 3);
    CHECK(memcmp(hsdag_nn_params_value(p, -1), hsdag_nn_params_value(q, -1),
                 hsdag_nn_params_count(p) * sizeof(float)) == 0);
    /* identical Adam state: one more identical step gives identical values */
    hsdag_nn_adam_config c = hsdag_nn_adam_config_default();
    hsdag_nn_params_zero_grad(p);
    hsdag_nn_params_grad(p, 0)[1] = 0.5f;
    hsdag_nn_params_grad(q, 0)[1] = 0.5f;
    hsdag_nn_adam_step(p, &c, NULL);
    hsdag_nn_adam_step(q, &c, NULL);
    CHECK(memcmp(hsdag_nn_params_value(p, -1), hsdag_nn_params_value(q, -1),
                 hsdag_nn_params_count(p) * sizeof(float)) == 0);
    /* little-endian codec frame (magic, version 2, 0, length, checksum), then n_tensors (3), count, step,
     * and the first tensor's rows (4) and cols (6) */
    const unsigned char *img = (const unsigned char *)b.data + 6;
    CHECK(memcmp(img, "HSDAGNN", 7) == 0 && img[8] == 2 && img[9] == 0 && img[12] == 0 && img[32] == 3);
    CHECK(img[52] == 4 && img[53] == 0 && img[56] == 6);
    /* copy values between matching sets only */
    hsdag_nn_params *cp = make_set(0, 9), *cbad = make_set(2, 9);
    CHECK_EQ_INT(hsdag_nn_params_copy_values(cp, p, &e), 0);
    CHECK(memcmp(hsdag_nn_params_value(p, -1), hsdag_nn_params_value(cp, -1),
                 hsdag_nn_params_count(p) * sizeof(float)) == 0);
    CHECK_EQ_INT(hsdag_nn_params_step(cp), 0); /* Adam state is not copied */
    CHECK_EQ_INT(hsdag_nn_params_copy_values(cbad, p, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "other") != NULL);
    hsdag_nn_params_free(cp);
    hsdag_nn_params_free(cbad);
    /* errors: truncation, corruption, shape and name mismatch; target left unchanged */
    hsdag_nn_params *t1 = make_set(1, 3), *t2 = make_set(2, 3), *t0 = make_set(0, 3);
    float keep = hsdag_nn_params_value(t0, 0)[0];
    CHECK_EQ_INT(hsdag_nn_params_load(t1, img, b.len - 6, NULL, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "'l.w'") != NULL || strstr(e.msg, "floats") != NULL);
    CHECK_EQ_INT(hsdag_nn_params_load(t2, img, b.len - 6, NULL, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "other") != NULL);
    int trunc_ok = 1;
    for (size_t cut = 0; cut < b.len - 6; cut += 7)
        trunc_ok &= hsdag_nn_params_load(t0, img, cut, NULL, &e) == HSDAG_EPARSE;
    CHECK(trunc_ok);
    char *bad = malloc(b.len);
    memcpy(bad, img, b.len - 6);
    bad[100] ^= 1;
    CHECK_EQ_INT(hsdag_nn_params_load(t0, bad, b.len - 6, NULL, &e), HSDAG_EPARSE);
    CHECK(strstr(e.msg, "checksum") != NULL);
    bad[100] ^= 1;
    bad[0] = 'X';
    CHECK_EQ_INT(hsdag_nn_params_load(t0, bad, b.len - 6, NULL, &e), HSDAG_EPARSE);
    CHECK(hsdag_nn_params_value(t0, 0)[0] == keep && hsdag_nn_params_step(t0) == 0);
    /* numbers out of range behind a re-made checksum (fuzz_learnckpt: a weight of -1.7e38 loaded, and the
     * next forward pass was NaN): the first weight, the last second moment, the Adam step; t0 unchanged */
    {
        size_t n = b.len - 6, data = n - 12 * hsdag_nn_params_count(p);
        const struct {
            size_t at;
            float x;
            const char *what;
        } cases[] = {{data, -1.7e38f, "weight 0"},
                     {data, NAN, "weight 0"},
                     {data, 2e8f, "weight 0"},
                     {n - 4, -1.0f, "second moment"},
                     {n - 4, INFINITY, "second moment"}};
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            hsdag_buf fb = {0};
            hsdag_buf_append(&fb, (const char *)img, n);
            memcpy(fb.data + cases[i].at, &cases[i].x, 4);
            CHECK_EQ_INT(hsdag_frame_end(&fb, 0), 0);
            CHECK_EQ_INT(hsdag_nn_params_load(t0, fb.data, n, NULL, &e), HSDAG_EPARSE);
            CHECK(strstr(e.msg, cases[i].what) != NULL);
            CHECK(hsdag_nn_params_value(t0, 0)[0] == keep && hsdag_nn_params_step(t0) == 0);
            hsdag_buf_free(&fb);
        }
        hsdag_buf fb = {0};
        hsdag_buf_append(&fb, (const char *)img, n);
        memset(fb.data + 44, 0xff, 8); /* the step: -1 */
        CHECK_EQ_INT(hsdag_frame_end(&fb, 0), 0);
        CHECK_EQ_INT(hsdag_nn_params_load(t0, fb.data, n, NULL, &e), HSDAG_EPARSE);
        CHECK(strstr(e.msg, "negative optimiser step") != NULL);
        hsdag_buf_free(&fb);
    }
    free(bad);
    hsdag_buf_free(&b);
    hsdag_nn_params_free(p);
    hsdag_nn_params_free(q);
    hsdag_nn_params_free(t0);
    hsdag_nn_params_free(t1);
    hsdag_nn_params_free(t2);
}

/* ---- version-1 images still load; a flipped bit anywhere is refused ---- */
static hsdag_nn_params *legacy_model(void)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_linear l;
    hsdag_rng r;
    hsdag_rng_seed(&r, 99);
    if (hsdag_nn_params_create(&p, NULL) < 0) return NULL;
    if (hsdag_nn_linear_add(p, &l, "l1", 3, 2, 1, &e) < 0 || hsdag_nn_params_alloc(p, &r, &e) < 0) {
        hsdag_nn_params_free(p);
        return NULL;
    }
    return p;
}

static int load_into(void *set, const void *buf, size_t len)
{
    hsdag_err e = {0};
    return hsdag_nn_params_load(set, buf, len, NULL, &e);
}

static void test_checkpoint_versions(void)
{
    hsdag_err e = {0};
    char *v1 = NULL;
    size_t len = 0;
    CHECK_EQ_INT(hsdag_read_file(&v1, &len, "tests/data/legacy/nn_v1.bin", 0, &e), 0);
    hsdag_nn_params *p = legacy_model(), *q = legacy_model();
    if (!v1 || !p || !q) return;
    size_t used = 0;
    CHECK_EQ_INT(hsdag_nn_params_load(p, v1, len, &used, &e), 0);
    CHECK_EQ_INT(used, len);
    CHECK_EQ_INT(hsdag_nn_params_step(p), 1);
    /* read old, write new: the version-2 image restores the same values and Adam step */
    hsdag_buf b = {0};
    CHECK_EQ_INT(hsdag_nn_params_save(p, &b, &e), 0);
    CHECK(b.len > 12 && ((const unsigned char *)b.data)[8] == 2);
    CHECK_EQ_INT(hsdag_nn_params_load(q, b.data, b.len, &used, &e), 0);
    CHECK_EQ_INT(used, b.len);
    CHECK_EQ_INT(hsdag_nn_params_step(q), 1);
    CHECK(memcmp(hsdag_nn_params_value(p, -1), hsdag_nn_params_value(q, -1),
                 hsdag_nn_params_count(p) * sizeof(float)) == 0);
    int n1 = 0, n2 = 0;
    CHECK_EQ_INT(flip_sweep_run(v1, len, 1, load_into, q, &n1), 0);
    CHECK_EQ_INT(flip_sweep_run(b.data, b.len, 1, load_into, q, &n2), 0);
    CHECK(n1 == (int)len && n2 == (int)b.len);
    hsdag_buf_free(&b);
    hsdag_free(v1);
    hsdag_nn_params_free(p);
    hsdag_nn_params_free(q);
}

/* the checker itself must be able to fail: a 1% error in one entry is caught */
static void test_checker_fails(hsdag_rng *r)
{
    enum { N = 3, IN = 4, OUT = 2 };
    float x[N * IN], w[OUT * IN], cf[N * OUT], dw[OUT * IN] = {0};
    double xd[N * IN], wd[OUT * IN], cd[N * OUT], yd[N * OUT];
    gc_rand_f(x, N * IN, r, -1, 1);
    gc_rand_f(w, OUT * IN, r, -1, 1);
    gc_rand_f(cf, N * OUT, r, -1, 1);
    gc_f2d(xd, x, N * IN);
    gc_f2d(wd, w, OUT * IN);
    gc_f2d(cd, cf, N * OUT);
    ctx c = {
        .n = N, .in = IN, .out = OUT, .x = xd, .w = wd, .c = cd, .y = yd, .ny = N * OUT, .ref = ref_linear};
    hsdag_nn_linear_backward(NULL, dw, NULL, cf, x, w, N, IN, OUT);
    float mx = 0;
    for (int i = 0; i < OUT * IN; i++) mx = fmaxf(mx, fabsf(dw[i]));
    dw[3] += 0.01f * mx;
    fprintf(stderr, "(expected gradcheck failure follows)\n");
    CHECK(gc_check("deliberately wrong", wd, OUT * IN, dw, loss, &c) > GC_TOL);
}

int main(void)
{
    hsdag_nn_set_threads(1);
    hsdag_rng r;
    hsdag_rng_seed(&r, 2024);
    test_linear(&r, 1);
    test_linear(&r, 0);
    test_pointwise(&r);
    test_layernorm(&r);
    test_dropout(&r);
    test_softmax(&r, 0);
    test_softmax(&r, 1);
    test_softmax_edge();
    test_sampler();
    test_params();
    test_adam();
    test_checkpoint();
    test_checkpoint_versions();
    test_checker_fails(&r);
    return check_summary("test_nn");
}
