/* common.h - status codes, error buffer, allocation wrapper, arena, RNG, a string map and a binary heap.
 * Not here: anything about graphs or devices; this is the base every module stands on.
 * Entry points: hsdag_err_set, hsdag_status_str, hsdag_malloc, hsdag_arena_*, hsdag_rng_*, hsdag_strmap_*,
 *   hsdag_heap_*.
 *
 * Usage:
 *   hsdag_err e = {0};
 *   hsdag_arena *a = hsdag_arena_create(0);
 *   char *s = hsdag_arena_strdup(a, "conv1");
 *   hsdag_rng r; hsdag_rng_seed(&r, 42); double u = hsdag_rng_uniform(&r);
 *   int rc = s ? 0 : hsdag_err_set(&e, HSDAG_ENOMEM, "%s: out of memory", "names");
 *   if (rc < 0) fprintf(stderr, "%s\n", e.msg);       // one line, the caller's buffer
 *   printf("%s %.3f\n", s, u);
 *   hsdag_arena_free(a);
 */
#ifndef HSDAG_COMMON_H
#define HSDAG_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the library ABI ----
 * libhsdag is built with -fvisibility=hidden: only declarations marked HSDAG_API (the public headers' own)
 * are exported from libhsdag.so; everything else, the generated protobuf-c code included, stays inside.
 * HSDAG_VERSION is the library version (libhsdag.so.0.MINOR.PATCH, SONAME libhsdag.so.0); before 1.0 a change of
 * a public struct's layout bumps MINOR (0.2.0: hsdag_place_opts.time_limit_cpu, hsdag_place_result.cpu_s,
 * hsdag_place_report.lp_cpu_s and branch_and_cut_cpu_s, hsdag_cluster_metrics' refusal counters; 0.3.0:
 * hsdag_place_opts.ilp_iterations, hsdag_bound.comm_path_s; 0.4.0: hsdag_bound.windows_s; 0.5.0:
 * hsdag_measure_config.memo, hsdag_learn_json_info.measure_runs). */
#if defined(__GNUC__) || defined(__clang__)
#define HSDAG_API __attribute__((visibility("default")))
#else
#define HSDAG_API
#endif
#define HSDAG_VERSION "0.5.0"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes: one X-macro gives the enum and hsdag_status_str() ---- */
#define HSDAG_STATUS_LIST(X)                                   \
    X(HSDAG_OK, 0, "ok")                                       \
    X(HSDAG_ENOMEM, -1, "out of memory")                       \
    X(HSDAG_EIO, -2, "I/O error")                              \
    X(HSDAG_EPARSE, -3, "parse error")                         \
    X(HSDAG_EINVAL, -4, "invalid argument")                    \
    X(HSDAG_ECYCLE, -5, "graph has a cycle")                   \
    X(HSDAG_EDANGLING, -6, "dangling reference")               \
    X(HSDAG_ELIMIT, -7, "size limit exceeded")                 \
    X(HSDAG_EFORMAT, -8, "unknown or unsupported file format") \
    X(HSDAG_EUNSUPPORTED, -9, "unsupported feature")           \
    X(HSDAG_EINFEASIBLE, -10, "infeasible")                    \
    X(HSDAG_ESOLVER, -11, "solver failure")                    \
    X(HSDAG_EEXTERNAL, -12, "external command failed")

#define HSDAG_STATUS_ENUM_(name, val, msg) name = val,
typedef enum { HSDAG_STATUS_LIST(HSDAG_STATUS_ENUM_) HSDAG_STATUS_MIN_ = -100 } hsdag_status;
#undef HSDAG_STATUS_ENUM_

HSDAG_API const char *hsdag_status_str(int status);

/* Error details live in a caller-owned buffer. msg is always NUL-terminated. */
typedef struct hsdag_err {
    int status;    /* last status written, 0 if none */
    char msg[512]; /* one line, no trailing newline */
} hsdag_err;

/* Writes "fmt..." into e (if e != NULL) and returns status, so callers can
 * `return hsdag_err_set(e, HSDAG_EPARSE, "%s: line %d: ...", path, line);` */
HSDAG_API int hsdag_err_set(hsdag_err *e, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prefixes an existing message: "prefix: old message" (used by file wrappers to add the path). */
HSDAG_API void hsdag_err_prefix(hsdag_err *e, const char *prefix);

/* ---- assertions: our own bugs only, never bad input; always on ---- */
HSDAG_API void hsdag_assert_fail_(const char *expr, const char *file, int line);
#define HSDAG_ASSERT(c) ((c) ? (void)0 : hsdag_assert_fail_(#c, __FILE__, __LINE__))

/* ---- allocation: every allocation goes through these so tests can inject failures ---- */
HSDAG_API void *hsdag_malloc(size_t n);
HSDAG_API void *hsdag_calloc(size_t count, size_t size);
HSDAG_API void *hsdag_realloc(void *p, size_t n);
HSDAG_API void hsdag_free(void *p);
/* Test hook: the n-th allocation from now fails (n >= 1); 0 disables. Not thread-safe by design. */
HSDAG_API void hsdag_alloc_fail_after(long n);
/* count elements of size bytes each, zeroed (one byte when count is 0), or NULL with HSDAG_ENOMEM and
 * "who: out of memory (N bytes)" in e: the one "allocate an array or say so" helper. Several arrays checked
 * once: pass a local hsdag_err and test its status. */
HSDAG_API void *hsdag_alloc_n(size_t count, size_t size, const char *who, hsdag_err *e);

/* Grows a dynamic array *pp of *cap elements of size elem so that it can hold need elements.
 * Returns 0 or HSDAG_ENOMEM (the old array stays valid). */
HSDAG_API int hsdag_grow(void **pp, size_t *cap, size_t need, size_t elem);

/* ---- arena: graph-lifetime memory, freed by one call ---- */
typedef struct hsdag_arena hsdag_arena;
HSDAG_API hsdag_arena *hsdag_arena_create(size_t chunk_bytes); /* 0 = default (64 KiB); NULL on ENOMEM */
HSDAG_API void *hsdag_arena_alloc(hsdag_arena *a, size_t n);   /* 16-byte aligned, zeroed; NULL on ENOMEM */
HSDAG_API char *hsdag_arena_strdup(hsdag_arena *a, const char *s);
HSDAG_API char *hsdag_arena_strndup(hsdag_arena *a, const char *s, size_t n);
HSDAG_API void hsdag_arena_free(hsdag_arena *a); /* NULL is a no-op */

/* ---- RNG: xoshiro256**, seeded through splitmix64; passed explicitly, never global ---- */
typedef struct hsdag_rng {
    uint64_t s[4];
} hsdag_rng;
HSDAG_API void hsdag_rng_seed(hsdag_rng *r, uint64_t seed);
/* The xoshiro256** step, the only copy of it: hsdag_rng_u64 is this function. Inline so that a hot loop
 * (dropout masks) can run it on a local copy of the state, kept in registers, and store the copy back. */
static inline uint64_t hsdag_rng_next(hsdag_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}
HSDAG_API uint64_t hsdag_rng_u64(hsdag_rng *r);
HSDAG_API double hsdag_rng_uniform(hsdag_rng *r);             /* [0, 1) with 53 random bits */
HSDAG_API uint32_t hsdag_rng_below(hsdag_rng *r, uint32_t n); /* uniform in [0, n), n > 0, unbiased */
HSDAG_API double hsdag_rng_normal(hsdag_rng *r); /* standard normal (Box-Muller, no cached state) */

/* ---- string -> int32 map (open addressing, FNV-1a); keys are copied into the map's arena ---- */
typedef struct hsdag_strmap hsdag_strmap;
HSDAG_API hsdag_strmap *hsdag_strmap_create(void);
HSDAG_API void hsdag_strmap_free(hsdag_strmap *m);
/* Returns the value for key or -1 if absent. */
HSDAG_API int32_t hsdag_strmap_get(const hsdag_strmap *m, const char *key, size_t keylen);
/* Inserts key -> val. Returns 0 if inserted, 1 if the key already existed (value left unchanged),
 * HSDAG_ENOMEM on failure. */
HSDAG_API int hsdag_strmap_put(hsdag_strmap *m, const char *key, size_t keylen, int32_t val);
/* As hsdag_strmap_put, but the key is not copied: its bytes must stay unchanged while the map lives. */
HSDAG_API int hsdag_strmap_put_borrowed(hsdag_strmap *m, const char *key, size_t keylen, int32_t val);
/* Room for n keys without rebuilding the table (a map about to take n keys: sized once). 0 or HSDAG_ENOMEM. */
HSDAG_API int hsdag_strmap_reserve(hsdag_strmap *m, size_t n);
HSDAG_API int32_t hsdag_strmap_count(const hsdag_strmap *m);

/* ---- binary min-heap of fixed-size items (src/core/heap.c), the one heap of the library ----
 * Items are copied in and out; less(a, b, ctx) != 0 when a goes before b. Pops follow a strict order when
 * less is a total order (ties make the order depend on the push sequence only: still deterministic). */
typedef int (*hsdag_heap_less_fn)(const void *a, const void *b, void *ctx);
typedef struct hsdag_heap {
    unsigned char *a;    /* [cap * size] */
    size_t n, cap, size; /* items held, capacity in items, bytes per item (1..64) */
    int owned;           /* 1: a is the heap's (grown on push, freed by hsdag_heap_free) */
    hsdag_heap_less_fn less;
    void *ctx;
} hsdag_heap;
/* storage: the caller's array of cap items (never grown or freed), or NULL (the heap allocates as it grows). */
HSDAG_API void hsdag_heap_init(hsdag_heap *h, size_t item_size, void *storage, size_t cap,
                               hsdag_heap_less_fn less, void *ctx);
/* 0, or HSDAG_ENOMEM (own storage could not grow) / HSDAG_ELIMIT (the caller's storage is full). */
HSDAG_API int hsdag_heap_push(hsdag_heap *h, const void *item);
/* Removes the least item into *out (h->n > 0). */
HSDAG_API void hsdag_heap_pop(hsdag_heap *h, void *out);
/* The least item, in place (valid until the next push or pop), or NULL when empty. */
HSDAG_API const void *hsdag_heap_top(const hsdag_heap *h);
HSDAG_API void hsdag_heap_free(hsdag_heap *h); /* frees own storage; the heap is empty afterwards */

/* ---- weighted pairs (src/core/pairs.c) ---- */
typedef struct hsdag_pair {
    int32_t a, b;
    double w;
} hsdag_pair;
/* Sorts p[n] by (a, b) and merges equal pairs, summing w (in sorted order); count[i] (may be NULL, else
 * n slots) gets how many pairs merged into the i-th. Returns the number of distinct pairs, now first in p. */
HSDAG_API int32_t hsdag_pairs_merge(hsdag_pair *p, int32_t n, int32_t *count);
/* qsort comparator of doubles, ascending (-1, 0, 1; for NaN-free arrays). */
HSDAG_API int hsdag_cmp_double(const void *a, const void *b);

/* ---- files (src/core/file.c; the rules: docs/formats.md, "Writing files") ---- */
/* Reads a whole file (max_bytes cap; 0 = 1 GiB). *buf is NUL-terminated (not counted in *len). */
HSDAG_API int hsdag_read_file(char **buf, size_t *len, const char *path, size_t max_bytes, hsdag_err *e);
/* Checks, before any work, that hsdag_write_file_atomic(path) can succeed: path is not a directory, not a
 * special file, not a read-only file, not a symlink out of its directory (nor a dangling one), and its
 * directory exists and takes new files. Returns 0 or HSDAG_EINVAL / HSDAG_EIO with a one-line message that
 * names path. */
HSDAG_API int hsdag_out_check(const char *path, hsdag_err *e);
/* The same for a run directory: dir exists and is a writable directory, or can be created in an existing
 * writable parent. *n_entries (may be NULL) = entries in it (0 if it does not exist yet), after removing
 * stale temporary files of ours. */
HSDAG_API int hsdag_out_dir_check(int *n_entries, const char *dir, hsdag_err *e);
/* Replaces path atomically: a temp file made by mkstemp (O_EXCL, mode 0600) in path's directory, written,
 * given the old file's mode (and owner where permitted) or 0666 minus the umask, fsynced and renamed over
 * path; the directory is then fsynced. A symlink within the directory is followed (its target is replaced);
 * one leading elsewhere is refused, as are a read-only file and a directory (the hsdag_out_check rules).
 * Temp files of writers that died are removed first. Messages name path, never the temp file. */
HSDAG_API int hsdag_write_file_atomic(const char *path, const void *buf, size_t len, hsdag_err *e);
/* Finds a data file shipped with hsdag (rel as in the source tree, e.g. "policies/pacml/beta_A.bin",
 * "scripts/ort-profile.js"): the first readable of $HSDAG_DATA/rel, <dir of the running binary>/../rel (the
 * build tree), <dir of the running binary>/../share/hsdag/rel, HSDAG_SHARE_DIR/rel (compile-time, default
 * /usr/local/share/hsdag); never the working directory. path (cap bytes) gets it. Errors: EIO naming every
 * place tried (what names the file in the message), EINVAL if path is too short. */
HSDAG_API int hsdag_data_find(char *path, size_t cap, const char *rel, const char *what, hsdag_err *e);

/* ---- growable string buffer (for writers: JSON, DOT, CSV) ---- */
typedef struct hsdag_buf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    int oom; /* set once an append failed; later appends are no-ops */
} hsdag_buf;
HSDAG_API void hsdag_buf_printf(hsdag_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
HSDAG_API void hsdag_buf_append(hsdag_buf *b, const char *s, size_t n);
HSDAG_API void hsdag_buf_json_str(hsdag_buf *b, const char *s); /* appends a quoted, escaped JSON string */
HSDAG_API void hsdag_buf_double(hsdag_buf *b, double v); /* shortest text that round-trips (%.17g fallback) */
HSDAG_API void hsdag_buf_free(hsdag_buf *b);

/* ---- JSON writer for result documents (src/core/jsonw.c; the schemas: docs/formats.md, "Result JSON") ----
 * One object per document with a "schema" key first; "key": value pairs joined by ", "; in an array whose
 * elements are objects or arrays each element starts a line. Keys are escaped like strings (device and op
 * names from files may be keys). Inside an array pass key = NULL. Usage:
 *   hsdag_jw w; hsdag_jw_begin(&w, &buf, "hsdag-bound/1");
 *   hsdag_jw_num(&w, "lower_bound_ms", ms); hsdag_jw_array(&w, "methods"); hsdag_jw_object(&w, NULL); ...
 *   int rc = hsdag_jw_end(&w);                                   // closes what is open; 0 or HSDAG_ENOMEM */
#define HSDAG_JW_DEPTH 8
typedef struct hsdag_jw {
    hsdag_buf *b;
    int depth;                 /* containers open; 1 = inside the document's object */
    int32_t n[HSDAG_JW_DEPTH]; /* members written at each depth */
    unsigned char is_arr[HSDAG_JW_DEPTH];
    unsigned char lines[HSDAG_JW_DEPTH]; /* an array whose elements went on their own lines */
} hsdag_jw;
HSDAG_API void hsdag_jw_begin(hsdag_jw *w, hsdag_buf *b, const char *schema);
HSDAG_API void hsdag_jw_str(hsdag_jw *w, const char *key, const char *s); /* NULL -> null */
HSDAG_API void hsdag_jw_num(hsdag_jw *w, const char *key,
                            double v); /* shortest round trip; NaN, inf -> null */
HSDAG_API void hsdag_jw_int(hsdag_jw *w, const char *key, long long v);
HSDAG_API void hsdag_jw_bool(hsdag_jw *w, const char *key, int v);
HSDAG_API void hsdag_jw_null(hsdag_jw *w, const char *key);
HSDAG_API void hsdag_jw_object(hsdag_jw *w, const char *key); /* opens an object */
HSDAG_API void hsdag_jw_array(hsdag_jw *w, const char *key);  /* opens an array */
HSDAG_API void hsdag_jw_close(hsdag_jw *w);                   /* closes the innermost open container */
HSDAG_API int hsdag_jw_end(hsdag_jw *w); /* closes all, appends "\n"; 0 or HSDAG_ENOMEM */

/* Monotonic wall clock in seconds. */
HSDAG_API double hsdag_now(void);
/* Test hook: every later hsdag_now reading returns step_s seconds more than the one before it would have
 * (the wall clock races ahead of the CPU clock, as on a loaded machine: any wall interval that holds a
 * reading lasts at least step_s); 0 stops the race, keeping the offset so far. Not thread-safe by design. */
HSDAG_API void hsdag_clock_warp(double step_s);
/* The calling thread's CPU time in seconds (user + system): what a time limit counts on a shared machine,
 * where wall time depends on everyone else's load. */
HSDAG_API double hsdag_cpu_now(void);

#ifdef __cplusplus
}
#endif
#endif
