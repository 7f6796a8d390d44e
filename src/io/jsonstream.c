/* jsonstream.c - the pull tokenizer behind the streaming JSON readers: one pass over the text, nothing kept but
 * the last string, STOP on anything a json-c strict parse might see differently.
 * Not here: schemas and messages (json.c, jsonin.c).
 * Entry points: hsdag_jstream_* (src/io/jsonstream.h). */
#include "jsonstream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STOP HSDAG_JSTREAM_STOP

void hsdag_jstream_init(hsdag_jstream *s, const void *buf, size_t len)
{
    memset(s, 0, sizeof *s);
    s->p = buf ? (const char *)buf : "";
    s->end = s->p + (buf ? len : 0);
}

void hsdag_jstream_init_file(hsdag_jstream *s, FILE *f, size_t piece, size_t max_bytes)
{
    hsdag_jstream_init(s, NULL, 0);
    s->f = f;
    s->buf_cap = piece ? piece : 1;
    s->max_bytes = max_bytes;
}

void hsdag_jstream_free(hsdag_jstream *s)
{
    hsdag_free(s->str);
    hsdag_free(s->buf);
    s->str = s->buf = NULL;
    s->str_cap = s->str_len = s->buf_cap = s->fill = 0;
}

/* One fread into buf's free room (allocated or doubled first when full). 0, or -1 with oom or bad_file set. */
static int js_read_more(hsdag_jstream *s)
{
    if (!s->buf || s->fill == s->buf_cap) {
        size_t cap = s->buf ? s->buf_cap : 0, need = s->buf ? s->buf_cap + 1 : s->buf_cap;
        if (hsdag_grow((void **)&s->buf, &cap, need, 1) < 0) return s->oom = 1, -1;
        s->buf_cap = cap;
    }
    size_t got = fread(s->buf + s->fill, 1, s->buf_cap - s->fill, s->f);
    s->fill += got;
    s->total += got;
    if (s->total > s->max_bytes || (got == 0 && ferror(s->f))) return s->bad_file = 1, -1;
    if (got == 0) s->eof = 1;
    return 0;
}

/* The next piece once [p, end) is used up: the unread rest moved to the front, then read until the buffer holds
 * a newline (the piece ends after the last one) or the file ends. 1 if a piece is there, 0 if none. */
static int js_refill(hsdag_jstream *s)
{
    size_t cut = 0;
    if (s->buf) {
        size_t rest = (size_t)(s->buf + s->fill - s->end);
        memmove(s->buf, s->end, rest);
        s->fill = rest;
    }
    for (;;) {
        if (!s->eof && js_read_more(s) < 0) break;
        for (cut = s->fill; cut > 0 && s->buf[cut - 1] != '\n'; cut--) {}
        if (cut > 0 || s->eof) break;
    }
    if (s->oom || s->bad_file)
        cut = 0;
    else if (cut == 0)
        cut = s->fill; /* the end of the file */
    s->p = s->end = s->buf ? s->buf : "";
    s->end += cut;
    return cut > 0;
}

/* js_ws at the end of a piece of a file: the next pieces until a non-blank byte or the end of the text. Apart from
 * js_ws so that js_ws stays small enough to be inlined (with this loop in it, it was not: a sixth of all reading). */
static void js_ws_refill(hsdag_jstream *s)
{
    while (js_refill(s)) {
        const char *p = s->p, *end = s->end;
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++;
        s->p = p;
        if (p < end) return;
    }
}

static inline void js_ws(hsdag_jstream *s)
{
    const char *p = s->p, *end = s->end;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++;
    s->p = p;
    if (p == end && s->f) js_ws_refill(s);
}

int hsdag_jstream_peek(hsdag_jstream *s)
{
    js_ws(s);
    return s->p < s->end ? (unsigned char)*s->p : -1;
}

int hsdag_jstream_open(hsdag_jstream *s, char c)
{
    if (hsdag_jstream_peek(s) != (unsigned char)c || s->depth >= HSDAG_JSTREAM_MAX_DEPTH) return STOP;
    s->p++;
    s->depth++;
    return 0;
}

int hsdag_jstream_more(hsdag_jstream *s, char close, int *first)
{
    int c = hsdag_jstream_peek(s);
    if (c == (unsigned char)close) {
        s->p++;
        s->depth--;
        return 0;
    }
    if (!*first) {
        if (c != ',') return STOP;
        s->p++;
    }
    *first = 0;
    return 1;
}

static int js_reserve(hsdag_jstream *s, size_t n)
{
    if (n + 1 <= s->str_cap) return 0;
    if (hsdag_grow((void **)&s->str, &s->str_cap, n + 1, 1) < 0) {
        s->oom = 1;
        return STOP;
    }
    return 0;
}

static int js_hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* The slow path: a string with escapes, from its opening quote's successor p. */
static int js_string_escaped(hsdag_jstream *s, const char *p)
{
    const char *end = s->end;
    size_t n = 0;
    for (;;) {
        if (p >= end) return STOP;
        unsigned char c = (unsigned char)*p;
        if (js_reserve(s, n + 4)) return STOP;
        if (c == '"') break;
        if (c < 0x20) return STOP; /* json-c passes raw control characters; left to it */
        if (c != '\\') {
            s->str[n++] = (char)c;
            p++;
            continue;
        }
        if (end - p < 2) return STOP;
        char x = p[1];
        p += 2;
        switch (x) {
        case '"':
        case '\\':
        case '/':
            s->str[n++] = x;
            break;
        case 'b':
            s->str[n++] = '\b';
            break;
        case 'f':
            s->str[n++] = '\f';
            break;
        case 'n':
            s->str[n++] = '\n';
            break;
        case 'r':
            s->str[n++] = '\r';
            break;
        case 't':
            s->str[n++] = '\t';
            break;
        case 'u': {
            unsigned u;
            if (end - p < 4 || js_hex4(p, &u) < 0) return STOP;
            p += 4;
            if (u == 0 || (u >= 0xD800 && u <= 0xDFFF)) return STOP; /* NUL; surrogates: json-c's own rules */
            if (u < 0x80) {
                s->str[n++] = (char)u;
            } else if (u < 0x800) {
                s->str[n++] = (char)(0xC0 | (u >> 6));
                s->str[n++] = (char)(0x80 | (u & 0x3F));
            } else {
                s->str[n++] = (char)(0xE0 | (u >> 12));
                s->str[n++] = (char)(0x80 | ((u >> 6) & 0x3F));
                s->str[n++] = (char)(0x80 | (u & 0x3F));
            }
            break;
        }
        default:
            return STOP;
        }
    }
    s->str[n] = 0;
    s->str_len = n;
    s->p = p + 1;
    return 0;
}

/* The first byte in [p, end) that ends a plain run of string bytes ('"', '\\' or a control character), or end.
 * Eight bytes at a time where the byte order allows: a byte is flagged by the has-zero-byte trick on w ^ '"',
 * w ^ '\\' and w - 0x20; a false flag needs a borrow from a lower flagged byte, so the lowest flag is exact. */
static const char *js_plain_end(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (end - p >= 8) {
        uint64_t w, q, b;
        memcpy(&w, p, 8);
        q = w ^ (ones * '"');
        b = w ^ (ones * '\\');
        uint64_t hit = (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w)) & highs;
        if (hit) return p + (__builtin_ctzll(hit) >> 3);
        p += 8;
    }
#endif
    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
    return p;
}

int hsdag_jstream_string(hsdag_jstream *s)
{
    if (hsdag_jstream_peek(s) != '"') return STOP;
    const char *p = s->p + 1, *end = s->end, *q = js_plain_end(p, end);
    if (q >= end) return STOP;
    if (*q != '"') return js_string_escaped(s, p);
    size_t n = (size_t)(q - p);
    if (js_reserve(s, n)) return STOP;
    memcpy(s->str, p, n);
    s->str[n] = 0;
    s->str_len = n;
    s->p = q + 1;
    return 0;
}

int hsdag_jstream_key(hsdag_jstream *s)
{
    if (hsdag_jstream_string(s)) return STOP;
    if (hsdag_jstream_peek(s) != ':') return STOP;
    s->p++;
    return 0;
}

/* The bytes from p on spell key and its closing quote (key holds no '"', '\\' or control character, as every key
 * of the readers): their count, else 0. */
static size_t js_key_at(const char *key, const char *p, const char *end)
{
    size_t j = 0;
    for (; key[j]; j++)
        if (p + j >= end || p[j] != key[j]) return 0;
    return p + j < end && p[j] == '"' ? j + 1 : 0;
}

int hsdag_jstream_key_index(hsdag_jstream *s, const char *const *keys, int n, int hint, int *k)
{
    if (hsdag_jstream_peek(s) != '"') return STOP;
    const char *p = s->p + 1, *end = s->end;
    size_t used = 0;
    *k = -1;
    for (int j = 0; j < n && !used; j++) { /* the key as written, no escapes: matched in place */
        int i = hint + j < n ? hint + j : hint + j - n;
        if ((used = js_key_at(keys[i], p, end)) != 0) *k = i;
    }
    if (used) {
        s->p = p + used;
    } else { /* unknown, or written with escapes */
        if (hsdag_jstream_string(s)) return STOP;
        for (int i = 0; i < n && *k < 0; i++)
            if (strcmp(s->str, keys[i]) == 0) *k = i;
    }
    if (hsdag_jstream_peek(s) != ':') return STOP;
    s->p++;
    return 0;
}

static int js_digit(char c)
{
    return c >= '0' && c <= '9';
}

int hsdag_jstream_number(hsdag_jstream *s, hsdag_jnum *n)
{
    js_ws(s);
    const char *p = s->p, *q = p, *end = s->end;
    int neg = 0;
    if (q < end && *q == '-') neg = 1, q++;
    if (q >= end || !js_digit(*q)) return STOP;
    uint64_t mag = 0;
    int big = 0;
    if (*q == '0') {
        q++;
    } else {
        const char *d0 = q;
        for (; q < end && js_digit(*q); q++) mag = mag * 10 + (unsigned)(*q - '0');
        big = q - d0 > 19; /* 19 digits always fit in 64 bits; 20 or more are at least 10^19 > INT64_MAX */
    }
    int frac = 0;
    if (q < end && *q == '.') {
        q++;
        if (q >= end || !js_digit(*q)) return STOP;
        while (q < end && js_digit(*q)) q++;
        frac = 1;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (q >= end || !js_digit(*q)) return STOP;
        while (q < end && js_digit(*q)) q++;
        frac = 1;
    }
    if (!frac) {
        /* json-c clamps out-of-range integers to the int64 limits, which the readers refuse: STOP there */
        if (big || mag >= (uint64_t)INT64_MAX) return STOP;
        n->is_int = 1;
        n->i = neg ? -(int64_t)mag : (int64_t)mag;
        n->d = (double)n->i;
        s->p = q;
        return 0;
    }
    char tmp[64];
    size_t len = (size_t)(q - p);
    if (len >= sizeof tmp) return STOP;
    memcpy(tmp, p, len);
    tmp[len] = 0;
    char *stop = NULL;
    double d = strtod(tmp, &stop); /* as json-c: correctly rounded, subnormals and underflow to 0 kept */
    if (stop != tmp + len || !isfinite(d)) return STOP;
    n->is_int = 0;
    n->i = 0;
    n->d = d;
    s->p = q;
    return 0;
}

static int js_word(hsdag_jstream *s, const char *w, size_t n)
{
    js_ws(s);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0) return STOP;
    s->p += n;
    return 0;
}

int hsdag_jstream_null(hsdag_jstream *s)
{
    return js_word(s, "null", 4);
}

int hsdag_jstream_skip(hsdag_jstream *s)
{
    hsdag_jnum num;
    int c = hsdag_jstream_peek(s), first = 1, r;
    switch (c) {
    case '"':
        return hsdag_jstream_string(s);
    case 'n':
        return js_word(s, "null", 4);
    case 't':
        return js_word(s, "true", 4);
    case 'f':
        return js_word(s, "false", 5);
    case '{':
        if (hsdag_jstream_open(s, '{')) return STOP;
        while ((r = hsdag_jstream_more(s, '}', &first)) == 1)
            if (hsdag_jstream_key(s) || hsdag_jstream_skip(s)) return STOP;
        return r;
    case '[':
        if (hsdag_jstream_open(s, '[')) return STOP;
        while ((r = hsdag_jstream_more(s, ']', &first)) == 1)
            if (hsdag_jstream_skip(s)) return STOP;
        return r;
    default:
        return hsdag_jstream_number(s, &num);
    }
}

int hsdag_jstream_end(hsdag_jstream *s)
{
    return hsdag_jstream_peek(s) == -1 ? 0 : STOP;
}
