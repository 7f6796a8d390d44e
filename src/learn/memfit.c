/* memfit.c - the fitting pass of a learned one-pass placement (memfit.h): moves the decisions the policy
 * likes least per byte freed off an over-full device until the simulator's memory walk reports no excess.
 * Not here: any network or sampling (train.c, placeto.c).
 * Entry points: memfit_run. */
#include "memfit.h"

#include <stdlib.h>

/* A unit that may move, and the order it moves in (smaller key first, ties: lower unit). */
typedef struct fit_cand {
    int tier; /* 0: the policy would rather be elsewhere (key: the margin), 1: key = margin per byte freed */
    double key;
    int32_t c;
} fit_cand;

static int fit_cand_cmp(const void *x, const void *y)
{
    const fit_cand *a = x, *b = y;
    if (a->tier != b->tier) return a->tier - b->tier;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->c > b->c) - (a->c < b->c);
}

int memfit_run(const memfit_units *u, hsdag_sim *sim, int32_t *a, int32_t *device, int32_t *moved,
               hsdag_err *e)
{
    int32_t K = u->K, C = u->C;
    /* per unit: target device, moved flag; the candidates */
    int32_t *to = hsdag_alloc_n((size_t)(C ? C : 1), 2 * sizeof(int32_t), u->who, e);
    fit_cand *cand = hsdag_alloc_n((size_t)(C ? C : 1), sizeof *cand, u->who, e);
    int rc = 0;
    if (!to || !cand) {
        rc = HSDAG_ENOMEM;
        goto done;
    }
    int32_t *gone = to + C;
    double used[HSDAG_MAX_DEVICES] = {0};
    for (int32_t c = 0; c < C; c++) used[a[c]] += u->mem[c], gone[c] = 0;
    for (;;) {
        u->expand(u->ctx, a, device);
        hsdag_sim_result r;
        if ((rc = hsdag_sim_run(sim, device, &r)) < 0) {
            rc = hsdag_err_set(e, rc, "%s: the simulator failed on the one-pass placement", u->who);
            break;
        }
        int32_t d = -1;
        for (int32_t x = 0; x < K; x++)
            if (r.excess_bytes[x] > 0 && (d < 0 || r.excess_bytes[x] > r.excess_bytes[d])) d = x;
        if (d < 0) break;
        int32_t n = 0;
        for (int32_t c = 0; c < C; c++) {
            if (a[c] != d || gone[c]) continue;
            const float *lp = u->logp + (size_t)c * K;
            int32_t bx = -1, room = 0;
            for (int32_t x = 0; x < K; x++) {
                if (x == d || (u->mask && !u->mask[(size_t)c * K + x])) continue;
                int fits = !u->cap || used[x] + u->mem[c] <= u->cap[x];
                if (bx < 0 || (fits && !room) || (fits == room && lp[x] > lp[bx])) bx = x, room = fits;
            }
            if (bx < 0) continue;
            double m = (double)lp[d] - (double)lp[bx];
            to[c] = bx;
            cand[n++] = m <= 0 ? (fit_cand){0, m, c} : (fit_cand){1, m / (u->frees[c] + 1.0), c};
        }
        if (n == 0) break; /* nothing left to move */
        qsort(cand, (size_t)n, sizeof *cand, fit_cand_cmp);
        double freed = 0;
        for (int32_t i = 0; i < n && (i == 0 || freed < r.excess_bytes[d]); i++) {
            int32_t c = cand[i].c;
            used[d] -= u->mem[c];
            used[to[c]] += u->mem[c];
            freed += u->frees[c];
            a[c] = to[c];
            gone[c] = 1;
            ++*moved;
        }
    }
done:
    hsdag_free(to);
    hsdag_free(cand);
    return rc;
}
