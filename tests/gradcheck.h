/* gradcheck.h - finite-difference gradient checking: in double precision for the nn tests' kernels, and in
 *   float for a learner's whole policy loss (the HSDAG learner, Placeto, the RNN placer).
 * Not here: the reference layers themselves (each test writes its own naive double version).
 * Entry points: gc_check (compare an analytic float gradient with central differences of a double
 *   loss), gc_rand_f, gc_f2d, gc_maxrel; gc_model, gc_sumsq (the whole-model check).
 *
 * Method: every kernel has a naive double-precision reference forward in the test. The loss is
 * L = sum_i c_i y_i with fixed random c, evaluated in double; the numeric gradient is
 * (L(t + h) - L(t - h)) / 2h with h = 1e-5 (truncation ~h^2, rounding ~1e-16/h: both < 1e-9
 * relative). The float backward kernel, fed dy = c, must match it to GC_TOL relative to the
 * largest numeric gradient entry of that tensor (float accumulation error is ~1e-6 of that). */
#ifndef HSDAG_TEST_GRADCHECK_H
#define HSDAG_TEST_GRADCHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hsdag/common.h"
#include "hsdag/nn.h"

#define GC_H 1e-5
#define GC_TOL 1e-4

typedef double (*gc_loss)(void *ctx);

/* Fills f (n) with U(lo, hi) floats. */
static inline void gc_rand_f(float *f, size_t n, hsdag_rng *r, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) f[i] = (float)(lo + (hi - lo) * hsdag_rng_uniform(r));
}

/* Copies floats to doubles (exact). */
static inline void gc_f2d(double *d, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] = (double)f[i];
}

/* max_i |a_i - b_i| / max(max_i |b_i|, floor) */
static inline double gc_maxrel(const float *a, const double *b, size_t n, double floor_)
{
    double me = 0.0, mb = floor_;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (e > me || e != e) me = e != e ? INFINITY : e;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    return me / mb;
}

/* Central differences of f w.r.t. each entry of t (n, double, perturbed in place and restored),
 * compared with the analytic gradient ga (n). Prints the worst entry when over GC_TOL.
 * Returns the relative error (max abs difference / max |numeric|, floor 1e-6). */
static inline double gc_check(const char *what, double *t, size_t n, const float *ga, gc_loss f, void *ctx)
{
    double *gn = calloc(n ? n : 1, sizeof(double));
    if (!gn) return INFINITY;
    for (size_t i = 0; i < n; i++) {
        double s = t[i];
        t[i] = s + GC_H;
        double lp = f(ctx);
        t[i] = s - GC_H;
        double lm = f(ctx);
        t[i] = s;
        gn[i] = (lp - lm) / (2 * GC_H);
    }
    double err = gc_maxrel(ga, gn, n, 1e-6);
    if (!(err <= GC_TOL)) {
        size_t worst = 0;
        double we = -1;
        for (size_t i = 0; i < n; i++)
            if (fabs(ga[i] - gn[i]) > we) {
                we = fabs(ga[i] - gn[i]);
                worst = i;
            }
        fprintf(stderr, "  gradcheck %s: rel err %.3g at [%zu]: analytic %.9g numeric %.9g\n", what, err,
                worst, (double)ga[worst], gn[worst]);
    }
    free(gn);
    return err;
}

/* ---- the whole-model check: a learner's policy loss w.r.t. its float parameters ----
 * The parameters are floats, so h = 1e-3 and an entry's error is |num - ana| / max(1, |num| + |ana|); it is
 * off above GC_MODEL_TOL. */
#define GC_MODEL_H 1e-3f
#define GC_MODEL_TOL 2e-2

/* The loss at the parameters' current values into *loss; a negative return skips the entry (the loss is
 * not differentiable there). */
typedef int (*gc_model_loss)(void *ctx, double *loss);
/* Whether entry i is checked (NULL: every one). */
typedef int (*gc_model_want)(size_t i);

typedef struct gc_tally {
    int checked, bad; /* entries compared, entries off */
    double worst;     /* the largest error */
} gc_tally;

/* Central differences of loss at the entries start, start + step, ... of P's value block that want accepts,
 * against ana (the analytic gradient: a copy, as the losses overwrite P's gradient); adds to t.
 * HSDAG_TEST_VERBOSE=1 names each entry that is off and its tensor (what: the model). */
static inline void gc_model(gc_tally *t, hsdag_nn_params *P, const float *ana, size_t start, size_t step,
                            gc_model_want want, gc_model_loss loss, void *ctx, const char *what)
{
    float *val = hsdag_nn_params_value(P, -1);
    size_t np = hsdag_nn_params_count(P);
    for (size_t i = start; i < np; i += step) {
        if (want && !want(i)) continue;
        float old = val[i];
        double lp = 0, lm = 0;
        val[i] = old + GC_MODEL_H;
        int r1 = loss(ctx, &lp);
        val[i] = old - GC_MODEL_H;
        int r2 = loss(ctx, &lm);
        val[i] = old;
        if (r1 < 0 || r2 < 0) continue;
        double num = (lp - lm) / 2e-3, err = fabs(num - ana[i]) / fmax(1.0, fabs(num) + fabs(ana[i]));
        t->checked++;
        if (err > t->worst) t->worst = err;
        if (err > GC_MODEL_TOL) {
            t->bad++;
            if (getenv("HSDAG_TEST_VERBOSE")) {
                const char *tn = "?";
                for (int32_t k = 0; k < hsdag_nn_params_n_tensors(P); k++)
                    if (hsdag_nn_params_offset(P, k) <= i) tn = hsdag_nn_params_name(P, k);
                fprintf(stderr, "  %s param %zu (%s): numeric %.6g analytic %.6g\n", what, i, tn, num,
                        ana[i]);
            }
        }
    }
}

/* sum of squares of g (n), in double: a gradient that is not trivially zero has it above ~0 */
static inline double gc_sumsq(const float *g, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)g[i] * g[i];
    return s;
}
#endif
