/* test_rnn.c - the sequence kernels (LSTM cell, additive attention, mean embedding bag) against naive double
 * references, and every backward against double-precision central differences (gradcheck.h).
 * Not here: dense or graph kernels (test_nn.c, test_gnn.c); the learners built on these (test_baselines.c).
 * Entry point: main. Tolerances: forward float vs double <= 1e-5 relative; backward <= GC_TOL. */
#include <string.h>

#include "check.h"
#include "gradcheck.h"
#include "hsdag/nn.h"

#define FWD_TOL 1e-5
#define PRE 0.25f /* gradient buffers start here: backward kernels must ADD */

static void pre(float *g, size_t n)
{
    for (size_t i = 0; i < n; i++) g[i] = PRE;
}
static void unpre(float *g, size_t n)
{
    for (size_t i = 0; i < n; i++) g[i] -= PRE;
}

static double dsig(double v)
{
    return 1.0 / (1.0 + exp(-v));
}

/* ---- LSTM cell ---- */

enum { LN = 3, LIN = 5, LH = 4 };
typedef struct lctx {
    double x[LN * LIN], h0[LN * LH], c0[LN * LH], wx[4 * LH * LIN], wh[4 * LH * LH], b[4 * LH];
    double ch[LN * LH], cc[LN * LH]; /* loss weights of h1 and c1 */
    double h1[LN * LH], c1[LN * LH];
    int use_h0, use_c0;
} lctx;

static void ref_lstm(lctx *c)
{
    for (int i = 0; i < LN; i++)
        for (int j = 0; j < LH; j++) {
            double z[4];
            for (int q = 0; q < 4; q++) {
                int r = q * LH + j;
                double s = c->b[r];
                for (int k = 0; k < LIN; k++) s += c->x[i * LIN + k] * c->wx[r * LIN + k];
                if (c->use_h0)
                    for (int k = 0; k < LH; k++) s += c->h0[i * LH + k] * c->wh[r * LH + k];
                z[q] = s;
            }
            double ig = dsig(z[0]), fg = dsig(z[1]), gg = tanh(z[2]), og = dsig(z[3]);
            double cv = ig * gg + (c->use_c0 ? fg * c->c0[i * LH + j] : 0.0);
            c->c1[i * LH + j] = cv;
            c->h1[i * LH + j] = og * tanh(cv);
        }
}

static double lstm_loss(void *p)
{
    lctx *c = p;
    ref_lstm(c);
    double L = 0;
    for (int i = 0; i < LN * LH; i++) L += c->ch[i] * c->h1[i] + c->cc[i] * c->c1[i];
    return L;
}

static int lgrad_ok(const char *what, double *t, size_t n, float *ga, lctx *c)
{
    unpre(ga, n);
    return gc_check(what, t, n, ga, lstm_loss, c) <= GC_TOL;
}

static void test_lstm(hsdag_rng *r, int use_h0, int use_c0)
{
    static lctx c;
    float x[LN * LIN], h0[LN * LH], c0[LN * LH], wx[4 * LH * LIN], wh[4 * LH * LH], b[4 * LH];
    float ch[LN * LH], cc[LN * LH], h1[LN * LH], c1[LN * LH], cache[LN * 5 * LH], dz[LN * 4 * LH];
    float dx[LN * LIN], dh0[LN * LH], dc0[LN * LH], dwx[4 * LH * LIN], dwh[4 * LH * LH], db[4 * LH];
    gc_rand_f(x, LN * LIN, r, -1, 1);
    gc_rand_f(h0, LN * LH, r, -1, 1);
    gc_rand_f(c0, LN * LH, r, -1, 1);
    gc_rand_f(wx, 4 * LH * LIN, r, -0.8, 0.8);
    gc_rand_f(wh, 4 * LH * LH, r, -0.8, 0.8);
    gc_rand_f(b, 4 * LH, r, -0.5, 0.5);
    gc_rand_f(ch, LN * LH, r, -1, 1);
    gc_rand_f(cc, LN * LH, r, -1, 1);
    gc_f2d(c.x, x, LN * LIN);
    gc_f2d(c.h0, h0, LN * LH);
    gc_f2d(c.c0, c0, LN * LH);
    gc_f2d(c.wx, wx, 4 * LH * LIN);
    gc_f2d(c.wh, wh, 4 * LH * LH);
    gc_f2d(c.b, b, 4 * LH);
    gc_f2d(c.ch, ch, LN * LH);
    gc_f2d(c.cc, cc, LN * LH);
    c.use_h0 = use_h0;
    c.use_c0 = use_c0;
    hsdag_nn_lstm_cell_forward(h1, c1, cache, x, use_h0 ? h0 : NULL, use_c0 ? c0 : NULL, wx, wh, b, LN, LIN,
                               LH);
    ref_lstm(&c);
    CHECK(gc_maxrel(h1, c.h1, LN * LH, 1) <= FWD_TOL);
    CHECK(gc_maxrel(c1, c.c1, LN * LH, 1) <= FWD_TOL);
    pre(dx, LN * LIN);
    pre(dh0, LN * LH);
    pre(dc0, LN * LH);
    pre(dwx, 4 * LH * LIN);
    pre(dwh, 4 * LH * LH);
    pre(db, 4 * LH);
    hsdag_nn_lstm_cell_backward(dx, dh0, dc0, dwx, dwh, db, dz, ch, cc, cache, x, use_h0 ? h0 : NULL,
                                use_c0 ? c0 : NULL, wx, wh, LN, LIN, LH);
    CHECK(lgrad_ok("lstm dx", c.x, LN * LIN, dx, &c));
    CHECK(lgrad_ok("lstm dwx", c.wx, 4 * LH * LIN, dwx, &c));
    CHECK(lgrad_ok("lstm db", c.b, 4 * LH, db, &c));
    if (use_h0) {
        CHECK(lgrad_ok("lstm dh0", c.h0, LN * LH, dh0, &c));
        CHECK(lgrad_ok("lstm dwh", c.wh, 4 * LH * LH, dwh, &c));
    } else { /* untouched without h0 */
        unpre(dh0, LN * LH);
        unpre(dwh, 4 * LH * LH);
        int zero = 1;
        for (int i = 0; i < LN * LH; i++) zero &= dh0[i] == 0.0f;
        for (int i = 0; i < 4 * LH * LH; i++) zero &= dwh[i] == 0.0f;
        CHECK(zero);
    }
    if (use_c0) CHECK(lgrad_ok("lstm dc0", c.c0, LN * LH, dc0, &c));
    /* NULL dh1 / dc1 mean zero gradients: the sum of the two one-sided calls is the full one */
    float ex[LN * LIN];
    memset(ex, 0, sizeof ex);
    hsdag_nn_lstm_cell_backward(ex, NULL, NULL, NULL, NULL, NULL, dz, ch, NULL, cache, x, use_h0 ? h0 : NULL,
                                use_c0 ? c0 : NULL, wx, wh, LN, LIN, LH);
    hsdag_nn_lstm_cell_backward(ex, NULL, NULL, NULL, NULL, NULL, dz, NULL, cc, cache, x, use_h0 ? h0 : NULL,
                                use_c0 ? c0 : NULL, wx, wh, LN, LIN, LH);
    double exd[LN * LIN];
    gc_f2d(exd, dx, LN * LIN);
    CHECK(gc_maxrel(ex, exd, LN * LIN, 1e-6) <= 1e-5);
}

/* ---- additive attention ---- */

enum { AM = 3, AN = 5, AA = 6, AD = 3 }; /* a = 6: one 4-lane block and a tail */
typedef struct actx {
    double qp[AM * AA], kp[AN * AA], v[AA], vals[AN * AD], cw[AM * AD], ctx[AM * AD], alpha[AM * AN];
} actx;

static void ref_attn(actx *c)
{
    for (int k = 0; k < AM; k++) {
        double s[AN], mx = -INFINITY, tot = 0;
        for (int j = 0; j < AN; j++) {
            s[j] = 0;
            for (int t = 0; t < AA; t++) s[j] += c->v[t] * tanh(c->kp[j * AA + t] + c->qp[k * AA + t]);
            if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j < AN; j++) tot += exp(s[j] - mx);
        for (int j = 0; j < AN; j++) c->alpha[k * AN + j] = exp(s[j] - mx) / tot;
        for (int d = 0; d < AD; d++) {
            double acc = 0;
            for (int j = 0; j < AN; j++) acc += c->alpha[k * AN + j] * c->vals[j * AD + d];
            c->ctx[k * AD + d] = acc;
        }
    }
}

static double attn_loss(void *p)
{
    actx *c = p;
    ref_attn(c);
    double L = 0;
    for (int i = 0; i < AM * AD; i++) L += c->cw[i] * c->ctx[i];
    return L;
}

static int agrad_ok(const char *what, double *t, size_t n, float *ga, actx *c)
{
    unpre(ga, n);
    return gc_check(what, t, n, ga, attn_loss, c) <= GC_TOL;
}

static void test_attention(hsdag_rng *r, int cached, double range)
{
    static actx c;
    float qp[AM * AA], kp[AN * AA], v[AA], vals[AN * AD], cw[AM * AD], ctx[AM * AD], alpha[AM * AN];
    float dqp[AM * AA], dkp[AN * AA], dv[AA], dvals[AN * AD], scratch[AN + AA], tc[AM * AN * AA];
    gc_rand_f(qp, AM * AA, r, -range, range);
    gc_rand_f(kp, AN * AA, r, -range, range);
    gc_rand_f(v, AA, r, -1.5, 1.5);
    gc_rand_f(vals, AN * AD, r, -1, 1);
    gc_rand_f(cw, AM * AD, r, -1, 1);
    gc_f2d(c.qp, qp, AM * AA);
    gc_f2d(c.kp, kp, AN * AA);
    gc_f2d(c.v, v, AA);
    gc_f2d(c.vals, vals, AN * AD);
    gc_f2d(c.cw, cw, AM * AD);
    hsdag_nn_attention_forward(ctx, alpha, cached ? tc : NULL, qp, kp, v, vals, AM, AN, AA, AD);
    ref_attn(&c);
    CHECK(gc_maxrel(ctx, c.ctx, AM * AD, 1) <= FWD_TOL);
    CHECK(gc_maxrel(alpha, c.alpha, AM * AN, 1) <= FWD_TOL);
    if (cached) { /* the cached tanh values themselves, including saturated ones */
        double worst = 0;
        for (int k = 0; k < AM; k++)
            for (int j = 0; j < AN; j++)
                for (int t = 0; t < AA; t++) {
                    double ref = tanh((double)kp[j * AA + t] + (double)qp[k * AA + t]);
                    worst = fmax(worst, fabs(tc[(k * AN + j) * AA + t] - ref));
                }
        CHECK(worst < 3e-7);
    }
    if (range > 3) return; /* saturated: finite differences are meaningless there */
    pre(dqp, AM * AA);
    pre(dkp, AN * AA);
    pre(dv, AA);
    pre(dvals, AN * AD);
    hsdag_nn_attention_backward(dqp, dkp, dv, dvals, scratch, cw, alpha, cached ? tc : NULL, qp, kp, v, vals,
                                AM, AN, AA, AD);
    CHECK(agrad_ok("attention dqp", c.qp, AM * AA, dqp, &c));
    CHECK(agrad_ok("attention dkp", c.kp, AN * AA, dkp, &c));
    CHECK(agrad_ok("attention dv", c.v, AA, dv, &c));
    CHECK(agrad_ok("attention dvals", c.vals, AN * AD, dvals, &c));
}

/* ---- embedding bag ---- */

enum { ER = 6, ED = 3, EB = 4 };
static const int32_t bag_off[EB + 1] = {0, 1, 4, 4, 7};
static const int32_t bag_idx[7] = {2, 0, 5, 0, 1, 1, 3}; /* a repeated index, an empty bag */
typedef struct ectx {
    double table[ER * ED], cw[EB * ED], y[EB * ED];
} ectx;

static double bag_loss(void *p)
{
    ectx *c = p;
    double L = 0;
    for (int b = 0; b < EB; b++) {
        int n = bag_off[b + 1] - bag_off[b];
        for (int d = 0; d < ED; d++) {
            double s = 0;
            for (int k = bag_off[b]; k < bag_off[b + 1]; k++) s += c->table[bag_idx[k] * ED + d];
            c->y[b * ED + d] = n ? s / n : 0.0;
            L += c->cw[b * ED + d] * c->y[b * ED + d];
        }
    }
    return L;
}

static void test_embedding_bag(hsdag_rng *r)
{
    ectx c;
    float table[ER * ED], cw[EB * ED], y[EB * ED], dt[ER * ED];
    gc_rand_f(table, ER * ED, r, -1, 1);
    gc_rand_f(cw, EB * ED, r, -1, 1);
    gc_f2d(c.table, table, ER * ED);
    gc_f2d(c.cw, cw, EB * ED);
    hsdag_nn_embedding_bag_forward(y, table, bag_off, bag_idx, EB, ED);
    bag_loss(&c);
    CHECK(gc_maxrel(y, c.y, EB * ED, 1) <= FWD_TOL);
    CHECK(y[2 * ED] == 0.0f && y[2 * ED + 1] == 0.0f); /* the empty bag */
    pre(dt, ER * ED);
    hsdag_nn_embedding_bag_backward(dt, cw, bag_off, bag_idx, EB, ED);
    unpre(dt, ER * ED);
    CHECK(gc_check("embedding_bag dtable", c.table, ER * ED, dt, bag_loss, &c) <= GC_TOL);
}

static double maxrel_ff(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)b[i]));
        if (d > m) m = d;
    }
    return m;
}

/* One-row paths (GEMV / rank-1 update): the row Linear against the 1-row Linear (finite-difference checked in
 * test_nn.c), and the LSTM cell at n = 1 against row 0 of the n = LN cell checked above. */
static void test_one_row(hsdag_rng *r)
{
    enum { IN = 7, OUT = 5 };
    float x[IN], w[OUT * IN], b[OUT], dy[OUT], y1[OUT], y2[OUT];
    float dx1[IN], dx2[IN], dw1[OUT * IN], dw2[OUT * IN], db1[OUT], db2[OUT];
    gc_rand_f(x, IN, r, -1, 1);
    gc_rand_f(w, OUT * IN, r, -1, 1);
    gc_rand_f(b, OUT, r, -1, 1);
    gc_rand_f(dy, OUT, r, -1, 1);
    hsdag_nn_linear_forward(y1, x, w, b, 1, IN, OUT);
    hsdag_nn_linear_row_forward(y2, x, w, b, IN, OUT);
    CHECK(maxrel_ff(y2, y1, OUT) <= FWD_TOL);
    hsdag_nn_linear_row_forward(y2, x, w, NULL, IN, OUT);
    hsdag_nn_linear_forward(y1, x, w, NULL, 1, IN, OUT);
    CHECK(maxrel_ff(y2, y1, OUT) <= FWD_TOL);
    pre(dx1, IN), pre(dx2, IN), pre(dw1, OUT * IN), pre(dw2, OUT * IN), pre(db1, OUT), pre(db2, OUT);
    hsdag_nn_linear_backward(dx1, dw1, db1, dy, x, w, 1, IN, OUT);
    hsdag_nn_linear_row_backward(dx2, dw2, db2, dy, x, w, IN, OUT);
    CHECK(maxrel_ff(dx2, dx1, IN) <= FWD_TOL && maxrel_ff(dw2, dw1, OUT * IN) <= FWD_TOL &&
          maxrel_ff(db2, db1, OUT) <= FWD_TOL);

    float lx[LN * LIN], h0[LN * LH], c0[LN * LH], wx[4 * LH * LIN], wh[4 * LH * LH], lb[4 * LH];
    float h1[LN * LH], c1[LN * LH], cache[LN * 5 * LH], dh[LN * LH], dz[LN * 4 * LH];
    float dxa[LN * LIN], dxb[LIN], dwa[4 * LH * LIN], dwb[4 * LH * LIN], dha[LN * LH], dhb[LH];
    gc_rand_f(lx, LN * LIN, r, -1, 1);
    gc_rand_f(h0, LN * LH, r, -1, 1);
    gc_rand_f(c0, LN * LH, r, -1, 1);
    gc_rand_f(wx, 4 * LH * LIN, r, -1, 1);
    gc_rand_f(wh, 4 * LH * LH, r, -1, 1);
    gc_rand_f(lb, 4 * LH, r, -1, 1);
    gc_rand_f(dh, LN * LH, r, -1, 1);
    memset(dh + LH, 0, sizeof(float) * (LN - 1) * LH); /* only row 0 carries gradient */
    float h1b[LH], c1b[LH], cacheb[5 * LH];
    hsdag_nn_lstm_cell_forward(h1, c1, cache, lx, h0, c0, wx, wh, lb, LN, LIN, LH);
    hsdag_nn_lstm_cell_forward(h1b, c1b, cacheb, lx, h0, c0, wx, wh, lb, 1, LIN, LH);
    CHECK(maxrel_ff(h1b, h1, LH) <= FWD_TOL && maxrel_ff(c1b, c1, LH) <= FWD_TOL);
    memset(dxa, 0, sizeof dxa), memset(dxb, 0, sizeof dxb), memset(dwa, 0, sizeof dwa);
    memset(dwb, 0, sizeof dwb), memset(dha, 0, sizeof dha), memset(dhb, 0, sizeof dhb);
    hsdag_nn_lstm_cell_backward(dxa, dha, NULL, dwa, NULL, NULL, dz, dh, NULL, cache, lx, h0, c0, wx, wh, LN,
                                LIN, LH);
    hsdag_nn_lstm_cell_backward(dxb, dhb, NULL, dwb, NULL, NULL, dz, dh, NULL, cacheb, lx, h0, c0, wx, wh, 1,
                                LIN, LH);
    CHECK(maxrel_ff(dxb, dxa, LIN) <= FWD_TOL && maxrel_ff(dhb, dha, LH) <= FWD_TOL &&
          maxrel_ff(dwb, dwa, 4 * LH * LIN) <= FWD_TOL);
}

/* The LSTM registration helper: names, shapes and the PyTorch init range. */
static void test_lstm_add(void)
{
    hsdag_nn_params *p;
    hsdag_err e = {0};
    CHECK(hsdag_nn_params_create(&p, NULL) == 0);
    hsdag_nn_lstm l;
    CHECK(hsdag_nn_lstm_add(p, &l, "enc", 7, 16, &e) == 0);
    CHECK(hsdag_nn_lstm_add(p, &l, "enc", 7, 16, &e) < 0); /* names are unique */
    CHECK_EQ_INT(hsdag_nn_params_rows(p, l.wx), 64);
    CHECK_EQ_INT(hsdag_nn_params_cols(p, l.wx), 7);
    CHECK_EQ_INT(hsdag_nn_params_cols(p, l.wh), 16);
    CHECK_EQ_INT(hsdag_nn_params_cols(p, l.b), 64);
    hsdag_rng r;
    hsdag_rng_seed(&r, 5);
    CHECK(hsdag_nn_params_alloc(p, &r, &e) == 0);
    const float *w = hsdag_nn_params_value(p, l.wh);
    int in_range = 1;
    for (int i = 0; i < 64 * 16; i++) in_range &= fabsf(w[i]) <= 0.25f;
    CHECK(in_range);
    hsdag_nn_params_free(p);
}

int main(void)
{
    hsdag_nn_set_threads(1);
    hsdag_rng r;
    hsdag_rng_seed(&r, 77);
    test_lstm(&r, 1, 1);
    test_lstm(&r, 0, 0);
    test_lstm(&r, 1, 0);
    test_attention(&r, 0, 1);
    test_attention(&r, 1, 1);
    test_attention(&r, 1, 6); /* |kp + qp| up to 12: the clamp at 9 */
    test_embedding_bag(&r);
    test_one_row(&r);
    test_lstm_add();
    return check_summary("test_rnn");
}
