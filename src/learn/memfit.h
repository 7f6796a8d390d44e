/* memfit.h - private: the fitting pass that makes a learned one-pass placement fit the memory caps, shared by
 * the HSDAG learner (train.c) and Placeto (placeto.c): the simulator's memory walk, no latency read.
 * Not here: the policies that give the unit actions and their log-probabilities.
 * Entry points: memfit_run. */
#ifndef HSDAG_LEARN_MEMFIT_H
#define HSDAG_LEARN_MEMFIT_H

#include "hsdag/sim.h"

/* Writes device[n_ops] from the unit actions a[C]. */
typedef void (*memfit_expand_fn)(void *ctx, const int32_t *a, int32_t *device);

/* The decision units of a one-pass placement and what the policy thought of them. */
typedef struct memfit_units {
    int32_t C, K;
    const double *mem;   /* [C] static bytes a unit keeps on its device (the room check) */
    const double *frees; /* [C] bytes moving the unit frees (static and output bytes; the order) */
    const float *logp;   /* [C * K] the policy's log-probabilities */
    const uint8_t *mask; /* [C * K] devices each unit may use, or NULL (every one) */
    const double *cap;   /* [K] static room per device, or NULL (none) */
    memfit_expand_fn expand;
    void *ctx;
    const char *who; /* the method, for the error message */
} memfit_units;

/* While sim reports a device d over its capacity, units on d move to their best other device x (one they may
 * use with room for their bytes, else any they may use), cheapest first: the policy's margin log pi_c(d) -
 * log pi_c(x) per byte the move frees, a unit the policy would rather have elsewhere before any; as many as
 * cover the excess, one at least, each unit at most once; then the placement is walked again. Stops when
 * nothing is over or nothing is left to move (the caller's evaluation then says it does not fit). a is
 * updated, device[] holds its expansion, *moved counts the moves (added to). 0, or a negative status. */
int memfit_run(const memfit_units *u, hsdag_sim *sim, int32_t *a, int32_t *device, int32_t *moved,
               hsdag_err *e);

#endif
