/* codec.c - little-endian put/get with bounds checks, FNV-1a 64, and the magic/version/checksum frame of
 *   every binary file.
 * Not here: any file's fields (their owners write them: nn/params.c, learn/train.c, learn/pacml_ppo.c,
 *   cluster/train_run.c).
 * Entry points: hsdag_fnv1a64, hsdag_put_*, hsdag_rd_make/left, hsdag_get_*, hsdag_frame_begin/end/open/
 *   version (include/hsdag/codec.h).
 */
#include "hsdag/codec.h"

#include <string.h>

uint64_t hsdag_fnv1a64(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= HSDAG_FNV64_PRIME;
    }
    return h;
}

/* ---- writers ---- */

static void le_store(unsigned char *c, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) c[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t le_load(const unsigned char *c, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)c[i] << (8 * i);
    return v;
}

void hsdag_put_bytes(hsdag_buf *b, const void *p, size_t n)
{
    hsdag_buf_append(b, (const char *)p, n);
}

void hsdag_put_u8(hsdag_buf *b, uint8_t v)
{
    hsdag_buf_append(b, (const char *)&v, 1);
}

void hsdag_put_u32(hsdag_buf *b, uint32_t v)
{
    unsigned char c[4];
    le_store(c, v, 4);
    hsdag_buf_append(b, (const char *)c, 4);
}

void hsdag_put_u64(hsdag_buf *b, uint64_t v)
{
    unsigned char c[8];
    le_store(c, v, 8);
    hsdag_buf_append(b, (const char *)c, 8);
}

void hsdag_put_i32(hsdag_buf *b, int32_t v)
{
    hsdag_put_u32(b, (uint32_t)v);
}

void hsdag_put_i64(hsdag_buf *b, int64_t v)
{
    hsdag_put_u64(b, (uint64_t)v);
}

void hsdag_put_f32(hsdag_buf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    hsdag_put_u32(b, u);
}

void hsdag_put_f64(hsdag_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    hsdag_put_u64(b, u);
}

/* through a stack chunk, so the buffer grows once per 4 KiB and not once per float */
void hsdag_put_f32s(hsdag_buf *b, const float *f, size_t n)
{
    unsigned char c[4096];
    while (n > 0) {
        size_t k = n < sizeof c / 4 ? n : sizeof c / 4;
        for (size_t i = 0; i < k; i++) {
            uint32_t u;
            memcpy(&u, &f[i], 4);
            le_store(c + 4 * i, u, 4);
        }
        hsdag_buf_append(b, (const char *)c, 4 * k);
        f += k;
        n -= k;
    }
}

void hsdag_put_str(hsdag_buf *b, const char *s)
{
    size_t n = strlen(s);
    hsdag_put_u32(b, (uint32_t)n);
    hsdag_buf_append(b, s, n);
}

/* ---- reader ---- */

hsdag_rd hsdag_rd_make(const void *p, size_t len)
{
    hsdag_rd r = {p, len, 0, 0};
    return r;
}

size_t hsdag_rd_left(const hsdag_rd *r)
{
    return r->bad ? 0 : r->len - r->pos;
}

const void *hsdag_get_view(hsdag_rd *r, size_t n)
{
    if (r->bad || r->len - r->pos < n) {
        r->bad = 1;
        return NULL;
    }
    const void *v = r->p + r->pos;
    r->pos += n;
    return v;
}

static uint64_t get_le(hsdag_rd *r, int n)
{
    const unsigned char *c = hsdag_get_view(r, (size_t)n);
    return c ? le_load(c, n) : 0;
}

uint8_t hsdag_get_u8(hsdag_rd *r)
{
    return (uint8_t)get_le(r, 1);
}

uint32_t hsdag_get_u32(hsdag_rd *r)
{
    return (uint32_t)get_le(r, 4);
}

uint64_t hsdag_get_u64(hsdag_rd *r)
{
    return get_le(r, 8);
}

int32_t hsdag_get_i32(hsdag_rd *r)
{
    return (int32_t)hsdag_get_u32(r);
}

int64_t hsdag_get_i64(hsdag_rd *r)
{
    return (int64_t)hsdag_get_u64(r);
}

float hsdag_get_f32(hsdag_rd *r)
{
    uint32_t u = hsdag_get_u32(r);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

double hsdag_get_f64(hsdag_rd *r)
{
    uint64_t u = hsdag_get_u64(r);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

void hsdag_get_bytes(hsdag_rd *r, void *out, size_t n)
{
    const void *v = hsdag_get_view(r, n);
    if (v && n) memcpy(out, v, n);
}

void hsdag_get_f32s(hsdag_rd *r, float *f, size_t n)
{
    if (n > SIZE_MAX / 4) {
        r->bad = 1;
        return;
    }
    const unsigned char *c = hsdag_get_view(r, 4 * n);
    if (!c) return;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)le_load(c + 4 * i, 4);
        memcpy(&f[i], &u, 4);
    }
}

void hsdag_get_str(hsdag_rd *r, char *out, size_t cap)
{
    uint32_t n = hsdag_get_u32(r);
    if (cap) out[0] = 0;
    if (r->bad || (size_t)n >= cap) {
        r->bad = 1;
        return;
    }
    hsdag_get_bytes(r, out, n);
    out[r->bad ? 0 : n] = 0;
}

/* ---- frames ---- */

/* the checksum covers version, reserved word and length (bytes 8..23), then the payload */
static uint64_t frame_sum(const unsigned char *h, size_t n)
{
    return hsdag_fnv1a64(hsdag_fnv1a64(HSDAG_FNV64_BASIS, h + 8, 16), h + HSDAG_FRAME_HEADER, n);
}

size_t hsdag_frame_begin(hsdag_buf *b, const char magic[8], uint32_t version)
{
    size_t at = b->len;
    hsdag_buf_append(b, magic, 8);
    hsdag_put_u32(b, version);
    hsdag_put_u32(b, 0);
    hsdag_put_u64(b, 0); /* payload length, filled by hsdag_frame_end */
    hsdag_put_u64(b, 0); /* checksum */
    return at;
}

int hsdag_frame_end(hsdag_buf *b, size_t at)
{
    if (b->oom || b->len < at + HSDAG_FRAME_HEADER) return HSDAG_ENOMEM;
    unsigned char *h = (unsigned char *)b->data + at;
    size_t n = b->len - at - HSDAG_FRAME_HEADER;
    le_store(h + 16, (uint64_t)n, 8);
    le_store(h + 24, frame_sum(h, n), 8);
    return 0;
}

uint32_t hsdag_frame_version(const void *buf, size_t len, const char magic[8])
{
    if (len < 12 || memcmp(buf, magic, 8) != 0) return 0;
    return (uint32_t)le_load((const unsigned char *)buf + 8, 4);
}

int hsdag_frame_open(hsdag_rd *payload, uint32_t *version, size_t *used, const void *buf, size_t len,
                     const char magic[8], const char *what, hsdag_err *e)
{
    const unsigned char *s = buf;
    char name[9];
    memcpy(name, magic, 8);
    name[8] = 0;
    if (!what) what = "<buffer>";
    if (len < 8 || memcmp(s, magic, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: not an %s file (bad magic)", what, name);
    if (len < HSDAG_FRAME_HEADER) return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated header", what);
    uint64_t n = le_load(s + 16, 8), sum = le_load(s + 24, 8);
    if (n > len - HSDAG_FRAME_HEADER)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: truncated (%zu of %llu payload bytes)", what,
                             len - HSDAG_FRAME_HEADER, (unsigned long long)n);
    if (frame_sum(s, (size_t)n) != sum || le_load(s + 12, 4) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: checksum mismatch (corrupt file)", what);
    *version = (uint32_t)le_load(s + 8, 4);
    *payload = hsdag_rd_make(s + HSDAG_FRAME_HEADER, (size_t)n);
    if (used) *used = HSDAG_FRAME_HEADER + (size_t)n;
    return 0;
}
