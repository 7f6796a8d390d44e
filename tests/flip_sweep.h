/* flip_sweep.h - the corruption sweep of a binary image loader, shared by the tests of every binary file:
 * flip one bit at a spread of byte positions (every byte of the first 64, then every stride-th) and count
 * the corrupted copies the loader accepted (a checksummed format accepts none).
 * Not here: assertions (each test states its own). Entry points: flip_sweep_run. */
#ifndef HSDAG_TEST_FLIP_SWEEP_H
#define HSDAG_TEST_FLIP_SWEEP_H
#include "hsdag/common.h"

#include <stdio.h>
#include <string.h>

/* load: 0 if it accepted the image; anything else is a rejection. */
typedef int (*flip_loader_fn)(void *ctx, const void *buf, size_t len);

/* Returns how many corrupted copies load accepted; *tried (optional) gets how many it saw. The first accepted
 * position is printed. */
static int flip_sweep_run(const void *img, size_t len, size_t stride, flip_loader_fn load, void *ctx,
                          int *tried)
{
    unsigned char *c = hsdag_malloc(len ? len : 1);
    int accepted = 0, n = 0;
    if (!c) return -1;
    for (size_t i = 0; i < len; i += i < 64 ? 1 : stride) {
        memcpy(c, img, len);
        c[i] ^= (unsigned char)(1u << (i % 8));
        n++;
        if (load(ctx, c, len) == 0) {
            if (!accepted)
                fprintf(stderr, "flip_sweep: byte %zu bit %zu flipped and still accepted\n", i, i % 8);
            accepted++;
        }
    }
    hsdag_free(c);
    if (tried) *tried = n;
    return accepted;
}

#endif
