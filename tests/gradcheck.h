/* gradcheck.h - finite-difference gradient checking in double precision for the nn tests.
 * Not here: the reference layers themselves (each test writes its own naive double version).
 * Entry points: gc_check (compare an analytic float gradient with central differences of a double
 *   loss), gc_rand_f, gc_f2d, gc_maxrel.
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

#define GC_H 1e-5
#define GC_TOL 1e-4

typedef double (*gc_loss)(void *ctx);

/* Fills f (n) with U(lo, hi) floats. */
static void gc_rand_f(float *f, size_t n, hsdag_rng *r, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) f[i] = (float)(lo + (hi - lo) * hsdag_rng_uniform(r));
}

/* Copies floats to doubles (exact). */
static void gc_f2d(double *d, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) d[i] = (double)f[i];
}

/* max_i |a_i - b_i| / max(max_i |b_i|, floor) */
static double gc_maxrel(const float *a, const double *b, size_t n, double floor_)
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
static double gc_check(const char *what, double *t, size_t n, const float *ga, gc_loss f, void *ctx)
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
#endif
