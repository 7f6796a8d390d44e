/* vec4.h - the 4-lane float/int vectors (GNU C vector extensions, also in clang; SSE2 on x86-64, generic
 *   elsewhere) the nn kernels' hot elementwise loops are written with: GCC -O2 leaves those loops scalar.
 * Not here: any kernel (layers.c, rnn.c); loads and stores go through memcpy (unaligned), nothing aligns.
 * Entry points: v4f_, v4i_, ld4_, st4_, hsum4_. */
#ifndef HSDAG_NN_VEC4_H
#define HSDAG_NN_VEC4_H

#include <stdint.h>
#include <string.h>

typedef float v4f_ __attribute__((vector_size(16)));
typedef int32_t v4i_ __attribute__((vector_size(16)));

static inline v4f_ ld4_(const float *p)
{
    v4f_ v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st4_(float *p, v4f_ v)
{
    memcpy(p, &v, sizeof v);
}

/* the lanes' sum, pairwise: (a0 + a1) + (a2 + a3) */
static inline float hsum4_(v4f_ a)
{
    return (a[0] + a[1]) + (a[2] + a[3]);
}

#endif
