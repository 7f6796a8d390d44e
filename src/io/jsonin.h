/* jsonin.h - internal helpers shared by every JSON reader (Tarnawski, hsdag JSON, splits, device sets,
 * placements): a strict,
 * depth-limited json-c parse and typed field getters that write one-line "what: ctx: key problem" errors.
 * Not here: any format's schema (tarnawski.c, json.c, split.c) and not a public API (src/io only).
 * Entry points: hsdag_jsonin_parse, hsdag_jsonin_number, hsdag_jsonin_int, hsdag_jsonin_bool,
 * hsdag_jsonin_string,
 * hsdag_jsonin_array, hsdag_jsonin_object, hsdag_jsonin_keys_allowed, hsdag_jsonin_keys_sort_dup,
 * hsdag_jsonin_keys_find,
 * hsdag_jsonin_edges_unique. */
#ifndef HSDAG_SRC_IO_JSONIN_H
#define HSDAG_SRC_IO_JSONIN_H

#include "hsdag/graph.h"

#include <json-c/json.h>

/* Getter flags. */
enum {
    HSDAG_JI_REQUIRED = 1u << 0, /* absent key is an error */
    HSDAG_JI_NULLABLE = 1u << 1  /* JSON null is accepted (numbers: NAN) */
};

/* Parses buf[0..len) as exactly one JSON value (trailing whitespace allowed): json-c strict mode,
 * nesting at most max_depth, no NUL bytes, len <= HSDAG_MAX_FILE_BYTES. *out is owned by the caller
 * (json_object_put). Errors: HSDAG_EPARSE "what: JSON syntax error at line L, byte B: ...". */
int hsdag_jsonin_parse(const void *buf, size_t len, int max_depth, const char *what, json_object **out,
                       hsdag_err *e);

/* Each getter looks up key in obj (a JSON object). Returns 0 if a value was stored, 1 if the key is
 * absent (or null with NULLABLE; numbers then get NAN) and nothing else was stored, or a negative status
 * with "what: ctx: key <problem>" in e. */
/* A finite number in [lo, hi] (JSON int or double; NaN/Infinity literals and overflowing ints rejected). */
int hsdag_jsonin_number(json_object *obj, const char *key, unsigned flags, double lo, double hi, double *out,
                        const char *what, const char *ctx, hsdag_err *e);
/* An integer in [lo, hi] (a JSON int, or a double with an integral value). */
int hsdag_jsonin_int(json_object *obj, const char *key, unsigned flags, int64_t lo, int64_t hi, int64_t *out,
                     const char *what, const char *ctx, hsdag_err *e);
/* true/false, or the integers 0/1. */
int hsdag_jsonin_bool(json_object *obj, const char *key, unsigned flags, int *out, const char *what,
                      const char *ctx, hsdag_err *e);
/* A string without NUL characters; *out points into obj (valid while obj lives). */
int hsdag_jsonin_string(json_object *obj, const char *key, unsigned flags, const char **out, const char *what,
                        const char *ctx, hsdag_err *e);
/* An array (*out, *n set) or an object; type checks only. */
int hsdag_jsonin_array(json_object *obj, const char *key, unsigned flags, json_object **out, size_t *n,
                       const char *what, const char *ctx, hsdag_err *e);
int hsdag_jsonin_object(json_object *obj, const char *key, unsigned flags, json_object **out,
                        const char *what, const char *ctx, hsdag_err *e);

/* Checks that obj (a JSON object) has only keys from allowed (NULL-terminated): else HSDAG_EPARSE with
 * "what: ctx: unknown key 'k'". */
int hsdag_jsonin_keys_allowed(json_object *obj, const char *const *allowed, const char *what, const char *ctx,
                              hsdag_err *e);

/* Value-level versions used for array elements: `name` describes the element in messages ("nodes[3]"). */
int hsdag_jsonin_value_number(json_object *v, double lo, double hi, double *out, const char *what,
                              const char *ctx, const char *name, hsdag_err *e);
int hsdag_jsonin_value_int(json_object *v, int64_t lo, int64_t hi, int64_t *out, const char *what,
                           const char *ctx, const char *name, hsdag_err *e);

/* (key, array position) records for the readers' duplicate checks and id lookups (node ids, edge ends). */
typedef struct hsdag_jsonin_key {
    int64_t key;
    int32_t idx;
} hsdag_jsonin_key;
/* Sorts k[0..n) by (key, idx). Returns the first position in array order whose key repeats an earlier
 * element's, with *earlier set to that element's position, or -1 if all keys are distinct. */
int32_t hsdag_jsonin_keys_sort_dup(hsdag_jsonin_key *k, size_t n, int32_t *earlier);
/* Duplicate-edge check of an edges[] array: pairs[k] = (src << 32 | dst, k) for every edge. 0 if the
 * pairs are distinct, else HSDAG_EPARSE with "what: edges[i] (s -> d): duplicate edge (also edges[j])"
 * for the first repeat in file order, its ends quoted from the keys src_key and dst_key of edges[i]. */
int hsdag_jsonin_edges_unique(hsdag_jsonin_key *pairs, size_t m, json_object *edges, const char *src_key,
                              const char *dst_key, const char *what, hsdag_err *e);
/* idx of key in k[0..n) sorted by hsdag_jsonin_keys_sort_dup (binary search), or -1. */
int32_t hsdag_jsonin_keys_find(const hsdag_jsonin_key *k, size_t n, int64_t key);

#endif
