/* jsonin.c - strict json-c parsing and typed field getters for the JSON readers.
 * Not here: any format's schema; no JSON writing (writers use hsdag_buf helpers).
 * Entry points: hsdag_jsonin_parse and the hsdag_jsonin_* getters (src/io/jsonin.h). */
#include "jsonin.h"

#include "hsdag/io.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *ji_what(const char *what)
{
    return what ? what : "<buffer>";
}

/* Writes "what: ctx: name problem" (ctx omitted when empty). */
static int ji_fail(hsdag_err *e, int status, const char *what, const char *ctx, const char *name,
                   const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
static int ji_fail(hsdag_err *e, int status, const char *what, const char *ctx, const char *name,
                   const char *fmt, ...)
{
    char problem[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    if (ctx && *ctx) return hsdag_err_set(e, status, "%s: %s: %s %s", ji_what(what), ctx, name, problem);
    return hsdag_err_set(e, status, "%s: %s %s", ji_what(what), name, problem);
}

/* 1 when json_tokener_parse_ex returned no object and no error for s[0..end) other than the literal null:
 * json-c's way of reporting a failed allocation. */
static int ji_oom(const json_object *o, enum json_tokener_error jerr, const char *s, size_t end)
{
    if (o || jerr != json_tokener_success) return 0;
    size_t a = 0;
    while (a < end && (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' || s[a] == '\r')) a++;
    while (end > a && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\n' || s[end - 1] == '\r'))
        end--;
    return !(end - a == 4 && memcmp(s + a, "null", 4) == 0);
}

int hsdag_jsonin_parse(const void *buf, size_t len, int max_depth, const char *what, json_object **out,
                       hsdag_err *e)
{
    *out = NULL;
    const char *s = (const char *)buf;
    if (len > HSDAG_MAX_FILE_BYTES || len > (size_t)INT_MAX)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: JSON text of %zu bytes is too large", ji_what(what), len);
    if (len == 0 || !s) return hsdag_err_set(e, HSDAG_EPARSE, "%s: empty input", ji_what(what));
    const char *nul = memchr(s, '\0', len);
    if (nul)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: NUL byte at offset %zu (not a JSON text)", ji_what(what),
                             (size_t)(nul - s));
    json_tokener *tok = json_tokener_new_ex(max_depth);
    if (!tok) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", ji_what(what));
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(tok, s, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (o && jerr == json_tokener_success) {
        while (end < len && (s[end] == ' ' || s[end] == '\t' || s[end] == '\n' || s[end] == '\r')) end++;
        if (end == len) {
            *out = o;
            return 0;
        }
        json_object_put(o);
        jerr = json_tokener_error_parse_unexpected;
    } else if (o) {
        json_object_put(o);
    }
    if (end > len) end = len;
    if (ji_oom(o, jerr, s, end))
        return hsdag_err_set(e, HSDAG_ENOMEM,
                             "%s: out of memory while parsing the JSON text (at byte %zu of %zu)",
                             ji_what(what), end, len);
    if (!o && jerr == json_tokener_success)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: the JSON text is null, not an object", ji_what(what));
    size_t line = 1, col = 1;
    for (size_t i = 0; i < end; i++) {
        if (s[i] == '\n')
            line++, col = 1;
        else
            col++;
    }
    if (jerr == json_tokener_continue)
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: JSON text ends early (truncated?) at line %zu",
                             ji_what(what), line);
    if (jerr == json_tokener_error_depth)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: JSON nesting deeper than %d at line %zu, column %zu",
                             ji_what(what), max_depth, line, col);
    return hsdag_err_set(e, HSDAG_EPARSE, "%s: JSON syntax error at line %zu, column %zu: %s", ji_what(what),
                         line, col, json_tokener_error_desc(jerr));
}

/* ---- value-level conversions ---- */

int hsdag_jsonin_value_number(json_object *v, double lo, double hi, double *out, const char *what,
                              const char *ctx, const char *name, hsdag_err *e)
{
    double d;
    json_type t = json_object_get_type(v);
    if (t == json_type_int) {
        int64_t i = json_object_get_int64(v);
        /* json-c clamps overflowing integer literals to the int64 limits (or keeps them as uint64,
         * which get_int64 clamps): treat both ends as overflow. */
        if (i == INT64_MAX || i == INT64_MIN)
            return ji_fail(e, HSDAG_ELIMIT, what, ctx, name, "is an integer too large to represent");
        d = (double)i;
    } else if (t == json_type_double) {
        d = json_object_get_double(v);
        if (!isfinite(d)) return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is not a finite number");
    } else {
        return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is not a number (%s)", json_type_to_name(t));
    }
    if (d < lo) {
        if (lo == 0) return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is negative (%.17g)", d);
        return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is below %.17g (%.17g)", lo, d);
    }
    if (d > hi) return ji_fail(e, HSDAG_ELIMIT, what, ctx, name, "is too large (%.17g > %.17g)", d, hi);
    *out = d;
    return 0;
}

int hsdag_jsonin_value_int(json_object *v, int64_t lo, int64_t hi, int64_t *out, const char *what,
                           const char *ctx, const char *name, hsdag_err *e)
{
    int64_t i;
    json_type t = json_object_get_type(v);
    if (t == json_type_int) {
        i = json_object_get_int64(v);
        if (i == INT64_MAX || i == INT64_MIN)
            return ji_fail(e, HSDAG_ELIMIT, what, ctx, name, "is an integer too large to represent");
    } else if (t == json_type_double) {
        double d = json_object_get_double(v);
        if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e18)
            return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is not an integer");
        i = (int64_t)d;
    } else {
        return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is not an integer (%s)", json_type_to_name(t));
    }
    if (i < lo) {
        if (lo == 0) return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is negative (%lld)", (long long)i);
        return ji_fail(e, HSDAG_EPARSE, what, ctx, name, "is below %lld (%lld)", (long long)lo, (long long)i);
    }
    if (i > hi)
        return ji_fail(e, HSDAG_ELIMIT, what, ctx, name, "is too large (%lld > %lld)", (long long)i,
                       (long long)hi);
    *out = i;
    return 0;
}

/* ---- keyed getters ---- */

/* Finds key: 0 with *v set, 1 if absent/null-accepted (nothing stored), <0 on error. */
static int ji_lookup(json_object *obj, const char *key, unsigned flags, json_object **v, const char *what,
                     const char *ctx, hsdag_err *e)
{
    *v = NULL;
    if (!json_object_object_get_ex(obj, key, v)) {
        if (flags & HSDAG_JI_REQUIRED) return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "is missing");
        return 1;
    }
    if (*v == NULL) {
        if (flags & HSDAG_JI_NULLABLE) return 1;
        return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "is null");
    }
    return 0;
}

int hsdag_jsonin_number(json_object *obj, const char *key, unsigned flags, double lo, double hi, double *out,
                        const char *what, const char *ctx, hsdag_err *e)
{
    json_object *v;
    int rc = ji_lookup(obj, key, flags, &v, what, ctx, e);
    if (rc == 1 && json_object_object_get_ex(obj, key, NULL)) *out = NAN; /* present and null */
    if (rc != 0) return rc;
    return hsdag_jsonin_value_number(v, lo, hi, out, what, ctx, key, e);
}

int hsdag_jsonin_int(json_object *obj, const char *key, unsigned flags, int64_t lo, int64_t hi, int64_t *out,
                     const char *what, const char *ctx, hsdag_err *e)
{
    json_object *v;
    int rc = ji_lookup(obj, key, flags, &v, what, ctx, e);
    if (rc != 0) return rc;
    return hsdag_jsonin_value_int(v, lo, hi, out, what, ctx, key, e);
}

int hsdag_jsonin_bool(json_object *obj, const char *key, unsigned flags, int *out, const char *what,
                      const char *ctx, hsdag_err *e)
{
    json_object *v;
    int rc = ji_lookup(obj, key, flags, &v, what, ctx, e);
    if (rc != 0) return rc;
    json_type t = json_object_get_type(v);
    if (t == json_type_boolean) {
        *out = json_object_get_boolean(v) ? 1 : 0;
        return 0;
    }
    if (t == json_type_int) {
        int64_t i = json_object_get_int64(v);
        if (i == 0 || i == 1) {
            *out = (int)i;
            return 0;
        }
    }
    return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "is not a boolean (true/false/0/1)");
}

int hsdag_jsonin_string(json_object *obj, const char *key, unsigned flags, const char **out, const char *what,
                        const char *ctx, hsdag_err *e)
{
    json_object *v;
    int rc = ji_lookup(obj, key, flags, &v, what, ctx, e);
    if (rc != 0) return rc;
    if (!json_object_is_type(v, json_type_string))
        return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "is not a string (%s)",
                       json_type_to_name(json_object_get_type(v)));
    const char *s = json_object_get_string(v);
    if ((size_t)json_object_get_string_len(v) != strlen(s))
        return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "contains a NUL character");
    *out = s;
    return 0;
}

int hsdag_jsonin_array(json_object *obj, const char *key, unsigned flags, json_object **out, size_t *n,
                       const char *what, const char *ctx, hsdag_err *e)
{
    json_object *v;
    int rc = ji_lookup(obj, key, flags, &v, what, ctx, e);
    if (rc != 0) return rc;
    if (!json_object_is_type(v, json_type_array))
        return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "is not an array (%s)",
                       json_type_to_name(json_object_get_type(v)));
    *out = v;
    *n = json_object_array_length(v);
    return 0;
}

int hsdag_jsonin_object(json_object *obj, const char *key, unsigned flags, json_object **out,
                        const char *what, const char *ctx, hsdag_err *e)
{
    json_object *v;
    int rc = ji_lookup(obj, key, flags, &v, what, ctx, e);
    if (rc != 0) return rc;
    if (!json_object_is_type(v, json_type_object))
        return ji_fail(e, HSDAG_EPARSE, what, ctx, key, "is not an object (%s)",
                       json_type_to_name(json_object_get_type(v)));
    *out = v;
    return 0;
}

int hsdag_jsonin_keys_allowed(json_object *obj, const char *const *allowed, const char *what, const char *ctx,
                              hsdag_err *e)
{
    json_object_object_foreach(obj, key, val)
    {
        (void)val;
        int ok = 0;
        for (int i = 0; allowed[i] && !ok; i++) ok = strcmp(key, allowed[i]) == 0;
        if (!ok) {
            if (ctx && *ctx)
                return hsdag_err_set(e, HSDAG_EPARSE, "%s: %s: unknown key '%.80s'", ji_what(what), ctx, key);
            return hsdag_err_set(e, HSDAG_EPARSE, "%s: unknown key '%.80s'", ji_what(what), key);
        }
    }
    return 0;
}

/* ---- keys: duplicate checks and lookups ---- */

static int ji_key_cmp(const void *a, const void *b)
{
    const hsdag_jsonin_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int32_t hsdag_jsonin_keys_sort_dup(hsdag_jsonin_key *k, size_t n, int32_t *earlier)
{
    if (n > 1) qsort(k, n, sizeof *k, ji_key_cmp);
    int32_t best = -1;
    for (size_t i = 1; i < n; i++)
        if (k[i].key == k[i - 1].key && (best < 0 || k[i].idx < best)) {
            best = k[i].idx;
            *earlier = k[i - 1].idx;
        }
    return best;
}

int32_t hsdag_jsonin_keys_find(const hsdag_jsonin_key *k, size_t n, int64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && k[lo].key == key) ? k[lo].idx : -1;
}

int hsdag_jsonin_edges_unique(hsdag_jsonin_key *pairs, size_t m, json_object *edges, const char *src_key,
                              const char *dst_key, const char *what, hsdag_err *e)
{
    int32_t earlier = -1, dup = hsdag_jsonin_keys_sort_dup(pairs, m, &earlier);
    if (dup < 0) return 0;
    json_object *ed = json_object_array_get_idx(edges, (size_t)dup);
    return hsdag_err_set(e, HSDAG_EPARSE, "%s: edges[%d] (%d -> %d): duplicate edge (also edges[%d])",
                         ji_what(what), dup, json_object_get_int(json_object_object_get(ed, src_key)),
                         json_object_get_int(json_object_object_get(ed, dst_key)), earlier);
}
