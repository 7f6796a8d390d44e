/* fuzz_mutate.h - the input decoding shared by the checkpoint fuzz targets: an input is either a raw image,
 * or a few bit flips and a truncation applied to a valid image the target made at start-up, so the fuzzer
 * reaches past magic and version checks without a seed corpus of one build's files; with bit 0 of the
 * first byte set, the checksums of the codec frames (codec.h) are recomputed after the flips, so the
 * parsers behind the checksum see the flipped fields too.
 * Not here: any format (the targets know theirs); not part of the library.
 * Entry points: fz_mutate. */
#ifndef HSDAG_FUZZ_MUTATE_H
#define HSDAG_FUZZ_MUTATE_H

#include "hsdag/codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fz_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Recomputes the checksum of every complete frame, back to back from the start:
 * magic[8] | u32 version | u32 0 | u64 payload bytes | u64 checksum | payload. */
static void fz_fix_frames(unsigned char *img, size_t len)
{
    size_t at = 0;
    while (len - at >= 32) {
        uint64_t n = fz_le64(img + at + 16);
        if (n > len - at - 32) return;
        uint64_t h = hsdag_fnv1a64(HSDAG_FNV64_BASIS, img + at + 8, 16);
        h = hsdag_fnv1a64(h, img + at + 32, (size_t)n);
        for (int i = 0; i < 8; i++) img[at + 24 + i] = (unsigned char)(h >> (8 * i));
        at += 32 + (size_t)n;
    }
}

/* Input byte 0: 0-127 = data[1..] is the image; 128-255 = mutate template (tlen bytes): bytes 1-4 give the
 * kept length (modulo tlen + 1, when byte 4's top bit is set; else all), then each 5 bytes (u32 offset modulo
 * the kept length, u8 xor mask) flip bits; bit 0 of byte 0: fix the frames' checksums afterwards.
 * Returns a malloc'ed image (*len bytes), or NULL when the input is empty. */
static unsigned char *fz_mutate(const uint8_t *data, size_t size, const unsigned char *tmpl, size_t tlen,
                                size_t *len)
{
    if (size == 0) return NULL;
    if (data[0] < 128 || !tmpl || !tlen) {
        *len = size - 1;
        unsigned char *img = malloc(size);
        if (img && size > 1) memcpy(img, data + 1, size - 1);
        return img;
    }
    size_t keep = tlen;
    if (size >= 5) {
        uint32_t k =
            (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
        keep = (data[4] & 0x80) ? k % (tlen + 1) : tlen; /* most inputs keep the whole image */
    }
    unsigned char *img = malloc(keep + 1);
    if (!img) return NULL;
    memcpy(img, tmpl, keep);
    for (size_t i = 5; keep && i + 5 <= size; i += 5) {
        uint32_t at = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16 |
                      (uint32_t)data[i + 3] << 24;
        img[at % keep] ^= data[i + 4];
    }
    if (data[0] & 1) fz_fix_frames(img, keep);
    *len = keep;
    return img;
}

#endif
