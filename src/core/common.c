/* common.c - status strings, error buffer, allocation wrapper with fault injection, arena, RNG,
 * string map and the growable text buffer.
 * Not here: anything graph-specific; reading and writing files (file.c). Entry points: see include/hsdag/common.h. */
#include "hsdag/codec.h"
#include "hsdag/common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- status and errors ---- */
const char *hsdag_status_str(int status)
{
#define HSDAG_STATUS_CASE_(name, val, msg) \
    case val:                              \
        return msg;
    switch (status) {
        HSDAG_STATUS_LIST(HSDAG_STATUS_CASE_)
    default:
        return "unknown status";
    }
#undef HSDAG_STATUS_CASE_
}

/* Control characters (from names and paths quoted in a message: newlines, tabs, terminal escapes)
 * become spaces, so a message is one printable line. */
static void err_oneline(char *s)
{
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) *p = ' ';
}

int hsdag_err_set(hsdag_err *e, int status, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        err_oneline(e->msg);
        e->status = status;
    }
    return status;
}

void hsdag_err_prefix(hsdag_err *e, const char *prefix)
{
    if (!e || !prefix) return;
    char tmp[sizeof e->msg];
    size_t pl = strlen(prefix);
    if (pl < sizeof e->msg) { /* already prefixed (compared as err_oneline wrote it) */
        size_t i = 0;
        for (; i < pl; i++) {
            unsigned char c = (unsigned char)prefix[i];
            if ((unsigned char)e->msg[i] != ((c < 0x20 || c == 0x7f) ? ' ' : c)) break;
        }
        if (i == pl && e->msg[pl] == ':') return;
    }
    memcpy(tmp, e->msg, sizeof tmp);
    size_t n = pl < sizeof e->msg - 3 ? pl : sizeof e->msg - 3;
    memcpy(e->msg, prefix, n);
    memcpy(e->msg + n, ": ", 2);
    size_t rest = sizeof e->msg - n - 3;
    size_t tl = strnlen(tmp, sizeof tmp);
    if (tl > rest) tl = rest;
    memcpy(e->msg + n + 2, tmp, tl);
    e->msg[n + 2 + tl] = 0;
    err_oneline(e->msg);
}

void hsdag_assert_fail_(const char *expr, const char *file, int line)
{
    fprintf(stderr, "hsdag: internal error: assertion '%s' failed at %s:%d\n", expr, file, line);
    abort();
}

/* ---- allocation ---- */
static long alloc_fail_countdown; /* test hook only; 0 = off */

static int alloc_should_fail(void)
{
    if (alloc_fail_countdown <= 0) return 0;
    return --alloc_fail_countdown == 0;
}

void hsdag_alloc_fail_after(long n)
{
    alloc_fail_countdown = n > 0 ? n : 0;
}

void *hsdag_malloc(size_t n)
{
    if (alloc_should_fail()) return NULL;
    return malloc(n ? n : 1);
}

void *hsdag_calloc(size_t count, size_t size)
{
    if (alloc_should_fail()) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

void *hsdag_alloc_n(size_t count, size_t size, const char *who, hsdag_err *e)
{
    void *p = hsdag_calloc(count, size);
    if (!p) hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory (%zu bytes)", who, count * size);
    return p;
}

void *hsdag_realloc(void *p, size_t n)
{
    if (alloc_should_fail()) return NULL;
    return realloc(p, n ? n : 1);
}

void hsdag_free(void *p)
{
    free(p);
}

int hsdag_grow(void **pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2) return HSDAG_ENOMEM;
        nc *= 2;
    }
    if (elem && nc > SIZE_MAX / elem) return HSDAG_ENOMEM;
    void *np = hsdag_realloc(*pp, nc * elem);
    if (!np) return HSDAG_ENOMEM;
    *pp = np;
    *cap = nc;
    return 0;
}

/* ---- arena ---- */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} arena_chunk;

struct hsdag_arena {
    arena_chunk *head;
    size_t chunk_bytes;
};

hsdag_arena *hsdag_arena_create(size_t chunk_bytes)
{
    hsdag_arena *a = hsdag_calloc(1, sizeof *a);
    if (!a) return NULL;
    a->chunk_bytes = chunk_bytes ? chunk_bytes : (size_t)64 << 10;
    return a;
}

void *hsdag_arena_alloc(hsdag_arena *a, size_t n)
{
    if (n > SIZE_MAX - 64) return NULL;
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    arena_chunk *c = a->head;
    if (!c || c->size - c->used < n) {
        size_t sz = n > a->chunk_bytes ? n : a->chunk_bytes;
        c = hsdag_malloc(sizeof *c + sz);
        if (!c) return NULL;
        c->size = sz;
        c->used = 0;
        /* a big one-off block goes behind the head so the head's free space stays usable */
        if (a->head && n > a->chunk_bytes) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *hsdag_arena_strndup(hsdag_arena *a, const char *s, size_t n)
{
    char *d = hsdag_arena_alloc(a, n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *hsdag_arena_strdup(hsdag_arena *a, const char *s)
{
    return hsdag_arena_strndup(a, s, strlen(s));
}

void hsdag_arena_free(hsdag_arena *a)
{
    if (!a) return;
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *n = c->next;
        hsdag_free(c);
        c = n;
    }
    hsdag_free(a);
}

/* ---- RNG: xoshiro256** (Blackman & Vigna), seeded by splitmix64 ---- */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void hsdag_rng_seed(hsdag_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

uint64_t hsdag_rng_u64(hsdag_rng *r)
{
    return hsdag_rng_next(r); /* the step itself is in common.h */
}

double hsdag_rng_uniform(hsdag_rng *r)
{
    return (double)(hsdag_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint32_t hsdag_rng_below(hsdag_rng *r, uint32_t n)
{
    HSDAG_ASSERT(n > 0);
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = hsdag_rng_u64(r);
    while (x >= lim);
    return (uint32_t)(x % n);
}

double hsdag_rng_normal(hsdag_rng *r)
{
    double u1 = hsdag_rng_uniform(r), u2 = hsdag_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- string map ---- */
typedef struct strmap_slot { /* 24 bytes: at 10^6 keys the table is 2^21 slots, every lookup a cache miss */
    const char *key;
    uint64_t hash;
    uint32_t len;
    int32_t val;
} strmap_slot;

struct hsdag_strmap {
    strmap_slot *slots;
    size_t cap; /* power of two */
    int32_t count;
    hsdag_arena *keys;
};

static uint64_t fnv1a(const char *s, size_t n)
{
    return hsdag_fnv1a64(HSDAG_FNV64_BASIS, s, n); /* the one FNV-1a (codec.c); order-free: never iterated */
}

hsdag_strmap *hsdag_strmap_create(void)
{
    hsdag_strmap *m = hsdag_calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cap = 64;
    m->slots = hsdag_calloc(m->cap, sizeof *m->slots);
    m->keys = hsdag_arena_create(0);
    if (!m->slots || !m->keys) {
        hsdag_strmap_free(m);
        return NULL;
    }
    return m;
}

void hsdag_strmap_free(hsdag_strmap *m)
{
    if (!m) return;
    hsdag_free(m->slots);
    hsdag_arena_free(m->keys);
    hsdag_free(m);
}

/* the slot holding key (hash h), or the empty slot where it would go */
static strmap_slot *strmap_find(const hsdag_strmap *m, const char *key, size_t keylen, uint64_t h)
{
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        strmap_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && s->len == keylen && memcmp(s->key, key, keylen) == 0)) return s;
    }
}

int32_t hsdag_strmap_get(const hsdag_strmap *m, const char *key, size_t keylen)
{
    const strmap_slot *s = strmap_find(m, key, keylen, fnv1a(key, keylen));
    return s->key ? s->val : -1;
}

/* the table rebuilt with room for n keys at most half full (never shrunk). 0 or HSDAG_ENOMEM. */
static int strmap_resize(hsdag_strmap *m, size_t n)
{
    size_t nc = m->cap;
    if (n > SIZE_MAX / 4) return HSDAG_ENOMEM; /* n * 2 below must not wrap */
    while (n * 2 > nc) {
        if (nc > SIZE_MAX / 2 / sizeof *m->slots) return HSDAG_ENOMEM;
        nc *= 2;
    }
    if (nc == m->cap) return 0;
    strmap_slot *ns = hsdag_calloc(nc, sizeof *ns);
    if (!ns) return HSDAG_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key) continue;
        size_t j = m->slots[i].hash & (nc - 1);
        while (ns[j].key) j = (j + 1) & (nc - 1);
        ns[j] = m->slots[i];
    }
    hsdag_free(m->slots);
    m->slots = ns;
    m->cap = nc;
    return 0;
}

int hsdag_strmap_reserve(hsdag_strmap *m, size_t n)
{
    return strmap_resize(m, n);
}

/* put with the key copied into the map's arena (copy) or kept as the caller's pointer */
static int strmap_put(hsdag_strmap *m, const char *key, size_t keylen, int32_t val, int copy)
{
    if (keylen > UINT32_MAX) return HSDAG_ENOMEM;
    uint64_t h = fnv1a(key, keylen);
    strmap_slot *s = strmap_find(m, key, keylen, h);
    if (s->key) return 1;
    if ((size_t)(m->count + 1) * 2 > m->cap) {
        if (strmap_resize(m, (size_t)m->count + 1) < 0) return HSDAG_ENOMEM;
        s = strmap_find(m, key, keylen, h);
    }
    const char *k = copy ? hsdag_arena_strndup(m->keys, key, keylen) : key;
    if (!k) return HSDAG_ENOMEM;
    *s = (strmap_slot){k, h, (uint32_t)keylen, val};
    m->count++;
    return 0;
}

int hsdag_strmap_put(hsdag_strmap *m, const char *key, size_t keylen, int32_t val)
{
    return strmap_put(m, key, keylen, val, 1);
}

int hsdag_strmap_put_borrowed(hsdag_strmap *m, const char *key, size_t keylen, int32_t val)
{
    return strmap_put(m, key, keylen, val, 0);
}

int32_t hsdag_strmap_count(const hsdag_strmap *m)
{
    return m->count;
}

/* ---- text buffer ---- */
static int buf_reserve(hsdag_buf *b, size_t extra)
{
    if (b->oom) return -1;
    if (hsdag_grow((void **)&b->data, &b->cap, b->len + extra + 1, 1) < 0) {
        b->oom = 1;
        return -1;
    }
    return 0;
}

void hsdag_buf_append(hsdag_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) < 0) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void hsdag_buf_printf(hsdag_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(b, (size_t)n) < 0) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void hsdag_buf_json_str(hsdag_buf *b, const char *s)
{
    hsdag_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            hsdag_buf_append(b, "\\\"", 2);
            break;
        case '\\':
            hsdag_buf_append(b, "\\\\", 2);
            break;
        case '\n':
            hsdag_buf_append(b, "\\n", 2);
            break;
        case '\r':
            hsdag_buf_append(b, "\\r", 2);
            break;
        case '\t':
            hsdag_buf_append(b, "\\t", 2);
            break;
        default:
            if (*p < 0x20)
                hsdag_buf_printf(b, "\\u%04x", *p);
            else
                hsdag_buf_append(b, (const char *)p, 1);
        }
    }
    hsdag_buf_append(b, "\"", 1);
}

void hsdag_buf_double(hsdag_buf *b, double v)
{
    if (isnan(v) || isinf(v)) {
        hsdag_buf_append(b, "null", 4);
        return;
    }
    char tmp[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break;
    }
    hsdag_buf_append(b, tmp, strlen(tmp));
}

void hsdag_buf_free(hsdag_buf *b)
{
    hsdag_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

static double clock_warp_step, clock_warp_total; /* test hook only (hsdag_clock_warp); 0 = off */

void hsdag_clock_warp(double step_s)
{
    clock_warp_step = step_s > 0 ? step_s : 0;
}

double hsdag_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (clock_warp_step != 0)
        clock_warp_total += clock_warp_step; /* no write when off: threads may call this */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + clock_warp_total;
}

double hsdag_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
