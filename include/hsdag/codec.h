/* codec.h - the one wire codec of every binary file hsdag writes: little-endian put/get with bounds checks,
 *   FNV-1a 64, and the frame that gives each file its magic, version and checksum.
 * Not here: any file's layout (each owner writes its own fields with these calls: nn.h parameter images,
 *   learn.h checkpoints, pacml.h policies and trainer state, cluster.h training runs); text formats (io.h).
 * Entry points: hsdag_fnv1a64, hsdag_put_*, hsdag_rd / hsdag_get_*, hsdag_frame_begin/end/open.
 *
 * Usage:
 *   hsdag_buf b = {0};
 *   size_t at = hsdag_frame_begin(&b, "HSDAGXYZ", 2);          // 8-byte magic, version
 *   hsdag_put_u32(&b, 7); hsdag_put_f64(&b, 0.5); hsdag_put_str(&b, "name");
 *   if (hsdag_frame_end(&b, at) < 0) return;                   // fills length + checksum; ENOMEM
 *   hsdag_rd r; uint32_t ver; size_t used; hsdag_err e = {0};
 *   if (hsdag_frame_open(&r, &ver, &used, b.data, b.len, "HSDAGXYZ", "x.bin", &e) < 0) puts(e.msg);
 *   uint32_t seven = hsdag_get_u32(&r); double half = hsdag_get_f64(&r);
 *   if (r.bad || seven != 7 || half != 0.5) puts("a get ran past the payload");
 *   hsdag_buf_free(&b);
 *
 * Frame (all little-endian): magic[8] | u32 version | u32 0 | u64 payload bytes | u64 checksum | payload;
 * the checksum is FNV-1a 64 (standard basis) over the version, zero and length fields, then the payload,
 * so a flipped bit anywhere but in the magic reads as "checksum mismatch". A file is one frame or several back to back (hsdag_frame_open reports the frame's
 * size). Version 1 files predate the frame; their readers live with their owners and are kept so old files
 * still load (several used the offset basis HSDAG_FNV64_BASIS_V1, one digit short of the standard one).
 */
#ifndef HSDAG_CODEC_H
#define HSDAG_CODEC_H

#include "hsdag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- FNV-1a 64 ---- */
#define HSDAG_FNV64_BASIS 0xcbf29ce484222325ull /* the standard offset basis, 14695981039346656037 */
#define HSDAG_FNV64_PRIME 0x100000001b3ull
/* The basis the version-1 learner checkpoints, PAC-ML policies and the string map used: the standard one
 * with its last digit dropped (1469598103934665603). Only for reading those old files. */
#define HSDAG_FNV64_BASIS_V1 1469598103934665603ull
/* Continues an FNV-1a 64 hash h over n bytes (start with h = HSDAG_FNV64_BASIS). */
HSDAG_API uint64_t hsdag_fnv1a64(uint64_t h, const void *p, size_t n);

/* ---- writers: append to b; a failed append sets b->oom and later ones are no-ops (hsdag_buf) ---- */
HSDAG_API void hsdag_put_u8(hsdag_buf *b, uint8_t v);
HSDAG_API void hsdag_put_u32(hsdag_buf *b, uint32_t v);
HSDAG_API void hsdag_put_u64(hsdag_buf *b, uint64_t v);
HSDAG_API void hsdag_put_i32(hsdag_buf *b, int32_t v);
HSDAG_API void hsdag_put_i64(hsdag_buf *b, int64_t v);
HSDAG_API void hsdag_put_f32(hsdag_buf *b, float v); /* IEEE bits */
HSDAG_API void hsdag_put_f64(hsdag_buf *b, double v);
HSDAG_API void hsdag_put_bytes(hsdag_buf *b, const void *p, size_t n);
HSDAG_API void hsdag_put_f32s(hsdag_buf *b, const float *f,
                              size_t n);                   /* n floats, converted in 4 KiB chunks */
HSDAG_API void hsdag_put_str(hsdag_buf *b, const char *s); /* u32 length, then the bytes (no NUL) */

/* ---- reader: every get checks the bounds; past the end it returns 0 (or copies nothing) and sets bad ---- */
typedef struct hsdag_rd {
    const unsigned char *p;
    size_t len, pos;
    int bad; /* set once a get ran past len; sticky */
} hsdag_rd;
HSDAG_API hsdag_rd hsdag_rd_make(const void *p, size_t len);
HSDAG_API size_t hsdag_rd_left(const hsdag_rd *r); /* bytes not read yet (0 once bad) */
HSDAG_API uint8_t hsdag_get_u8(hsdag_rd *r);
HSDAG_API uint32_t hsdag_get_u32(hsdag_rd *r);
HSDAG_API uint64_t hsdag_get_u64(hsdag_rd *r);
HSDAG_API int32_t hsdag_get_i32(hsdag_rd *r);
HSDAG_API int64_t hsdag_get_i64(hsdag_rd *r);
HSDAG_API float hsdag_get_f32(hsdag_rd *r);
HSDAG_API double hsdag_get_f64(hsdag_rd *r);
HSDAG_API void hsdag_get_bytes(hsdag_rd *r, void *out, size_t n);
HSDAG_API void hsdag_get_f32s(hsdag_rd *r, float *f, size_t n);
/* A pointer to the next n bytes (advancing past them), or NULL and bad if fewer are left. */
HSDAG_API const void *hsdag_get_view(hsdag_rd *r, size_t n);
/* A u32-length string into out[cap] (NUL-terminated); bad if truncated or longer than cap - 1. */
HSDAG_API void hsdag_get_str(hsdag_rd *r, char *out, size_t cap);

/* ---- frames ---- */
#define HSDAG_FRAME_HEADER 32 /* bytes before the payload */
/* Appends a frame header for magic (8 bytes, e.g. "HSDAGNN\0") and version with room for the length and
 * checksum; returns the frame's offset in b, to give to hsdag_frame_end after the payload is appended. */
HSDAG_API size_t hsdag_frame_begin(hsdag_buf *b, const char magic[8], uint32_t version);
/* Fills in the payload length and checksum of the frame at offset `at`. Returns 0 or HSDAG_ENOMEM (b->oom:
 * something was not appended). */
HSDAG_API int hsdag_frame_end(hsdag_buf *b, size_t at);
/* Version of the image at buf if it starts with magic (8 bytes), else 0. Reads the u32 after the magic, so
 * it also tells version-1 (pre-frame) images of the same magic apart. */
HSDAG_API uint32_t hsdag_frame_version(const void *buf, size_t len, const char magic[8]);
/* Opens the frame at buf: checks the magic, the length and the checksum, and sets *payload to read the
 * payload; *version gets the version, *used (optional) the frame's size in bytes (header + payload).
 * Errors, all HSDAG_EPARSE with `what` (a path) first: "not a <magic> file (bad magic)", "truncated",
 * "checksum mismatch (corrupt file)". The caller checks the version it got. */
HSDAG_API int hsdag_frame_open(hsdag_rd *payload, uint32_t *version, size_t *used, const void *buf,
                               size_t len, const char magic[8], const char *what, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
