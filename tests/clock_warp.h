/* clock_warp.h - the --cpu-time check shared by the placer tests: a method that reads a time limit, run with
 * time_limit_cpu while the wall clock races ahead (hsdag_clock_warp, a loaded machine at its extreme), must
 * give what it gives on a quiet clock; on the wall clock the same race must end it early (else the check
 * could not fail). Not here: what the methods compute (each test states that).
 * Entry points: warp_check (include check.h first). */
#ifndef HSDAG_TEST_CLOCK_WARP_H
#define HSDAG_TEST_CLOCK_WARP_H
#include "hsdag/place.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARP_STEP_S 1000.0 /* seconds the wall clock gains at every reading: beyond any time limit used */

typedef struct warp_run {
    int rc;
    int32_t *dev;
    hsdag_place_result r;
    char msg[sizeof(hsdag_err){0}.msg]; /* the note, or the error message */
} warp_run;

static inline void warp_one(warp_run *w, hsdag_place_problem *p, const char *method, hsdag_place_opts o,
                            int cpu, double step_s)
{
    hsdag_err e = {0};
    w->dev = calloc((size_t)p->n + 1, sizeof *w->dev);
    o.time_limit_cpu = cpu;
    hsdag_clock_warp(step_s);
    w->rc = w->dev ? hsdag_place_run(p, method, &o, w->dev, &w->r, &e) : HSDAG_ENOMEM;
    hsdag_clock_warp(0);
    snprintf(w->msg, sizeof w->msg, "%s", w->rc == 0 ? w->r.rep.note : e.msg);
}

/* Same outcome: status, and when it ran, placement, objective, optimality, bound and note, bit for bit. */
static inline int warp_same(const warp_run *a, const warp_run *b, int32_t n)
{
    if (a->rc != b->rc || strcmp(a->msg, b->msg) != 0) return 0;
    if (a->rc != 0) return 1;
    const hsdag_place_report *x = &a->r.rep, *y = &b->r.rep;
    int bound_same = x->bound_s == y->bound_s || (isnan(x->bound_s) && isnan(y->bound_s));
    return memcmp(a->dev, b->dev, (size_t)n * sizeof *a->dev) == 0 && a->r.objective_s == b->r.objective_s &&
           x->optimal == y->optimal && bound_same;
}

/* method on p with o (its time limit well above the quiet run's CPU time): the CPU-clock run under the race
 * equals the quiet one; the wall-clock run under the race does not. */
static inline void warp_check(hsdag_place_problem *p, const char *method, hsdag_place_opts o)
{
    warp_run quiet, raced, wall;
    warp_one(&quiet, p, method, o, 1, 0);
    warp_one(&raced, p, method, o, 1, WARP_STEP_S);
    warp_one(&wall, p, method, o, 0, WARP_STEP_S);
    int same = warp_same(&quiet, &raced, p->n), bites = !warp_same(&quiet, &wall, p->n);
    if (!same || !bites)
        fprintf(stderr, "%s --cpu-time: quiet %d \"%s\", raced %d \"%s\", wall clock raced %d \"%s\"\n",
                method, quiet.rc, quiet.msg, raced.rc, raced.msg, wall.rc, wall.msg);
    CHECK(quiet.rc == 0);
    CHECK(same);
    CHECK(bites);
    free(quiet.dev);
    free(raced.dev);
    free(wall.dev);
}
#endif
