/* pairs.c - weighted (a, b) pairs sorted and merged: the edge list of a graph contracted by a grouping
 * (coarsening, METIS's class graph, the coarsened drawing) is built by collecting one pair per crossing edge
 * and merging equal pairs; and the one qsort comparator of doubles.
 * Not here: building CSR from the merged list (each caller needs its own layout).
 * Entry points: hsdag_pairs_merge, hsdag_cmp_double.
 */
#include "hsdag/common.h"

static int pairs_cmp(const void *x, const void *y)
{
    const hsdag_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

int32_t hsdag_pairs_merge(hsdag_pair *p, int32_t n, int32_t *count)
{
    qsort(p, (size_t)n, sizeof *p, pairs_cmp);
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        if (m > 0 && p[m - 1].a == p[i].a && p[m - 1].b == p[i].b) {
            p[m - 1].w += p[i].w;
            if (count) count[m - 1]++;
            continue;
        }
        if (count) count[m] = 1;
        p[m++] = p[i];
    }
    return m;
}

int hsdag_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
