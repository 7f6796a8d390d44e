/* jsonstream.h - a pull tokenizer over a JSON text in memory or read from a file piece by piece, for readers that
 * build their result as they go (no document tree): strings decoded into one reused buffer, numbers classified as
 * json-c does (integer or double), values skipped by depth.
 * Not here: any schema (json.c reads hsdag JSON with it); error messages: it only says STOP, and a reader that
 * stops hands the text to its json-c tree reader, which finds the first problem and words it (jsonin.h).
 * Entry points: hsdag_jstream_init/_init_file/free, _peek, _open, _more, _key, _key_index, _string, _number, _null,
 * _skip, _end. */
#ifndef HSDAG_IO_JSONSTREAM_H
#define HSDAG_IO_JSONSTREAM_H

#include <stdio.h>

#include "hsdag/common.h"

/* Returned (> 0) by every call that meets something it does not take: a syntax error, or a construct left to
 * json-c (surrogate escapes, raw control characters in strings, integers at or beyond the int64 limits, numbers
 * beyond the double range, nesting deeper than HSDAG_JSTREAM_MAX_DEPTH). */
#define HSDAG_JSTREAM_STOP 2 /* not 1: hsdag_jstream_more answers 1 for "one more element" */
#define HSDAG_JSTREAM_MAX_DEPTH \
    12 /* below json-c's limit in the readers (16): a text taken here json-c takes */

/* Invariants: p <= end; str holds the last decoded string, NUL-terminated, str_len bytes before the NUL.
 * Read from a file (f set), [p, end) is the current piece of buf: whole lines (it ends just after a newline, or at
 * the end of the file), so no token is cut in two; a raw newline inside a string is STOP anyway. */
typedef struct hsdag_jstream {
    const char *p, *end;
    int depth;
    int oom; /* the string or the piece buffer could not grow (STOP was returned) */
    char *str;
    size_t str_len, str_cap;
    FILE *f;   /* NULL for a text in memory */
    char *buf; /* the pieces; [end, buf + fill) is read but not handed out yet (no newline in it) */
    size_t fill, buf_cap, total, max_bytes;
    int eof, bad_file; /* bad_file: a read error or more than max_bytes (the text then ends early) */
} hsdag_jstream;

/* A number as json-c types it: integer (no fraction, no exponent) or double. */
typedef struct hsdag_jnum {
    int is_int;
    int64_t i;
    double d;
} hsdag_jnum;

void hsdag_jstream_init(hsdag_jstream *s, const void *buf, size_t len);
/* The text of f from its current position, read in pieces of about `piece` bytes (more for a longer line), at
 * most max_bytes in all; the caller opens and closes f. Check bad_file and oom after the last call. */
void hsdag_jstream_init_file(hsdag_jstream *s, FILE *f, size_t piece, size_t max_bytes);
void hsdag_jstream_free(hsdag_jstream *s);
/* The next character after blanks (space, tab, CR, LF), not consumed; -1 at the end of the text. */
int hsdag_jstream_peek(hsdag_jstream *s);
/* Consumes '{' or '[' (c) and enters it. */
int hsdag_jstream_open(hsdag_jstream *s, char c);
/* Inside a container closed by `close` ('}' or ']'): 1 if another element follows (its ',' consumed), 0 if the
 * container ends here (closed and left), or STOP. *first is 1 before the first element and cleared here. */
int hsdag_jstream_more(hsdag_jstream *s, char close, int *first);
/* An object key and its ':'; the key is s->str. */
int hsdag_jstream_key(hsdag_jstream *s);
/* An object key and its ':', looked up among keys[0..n) (trying keys[hint] first, then the ones after it):
 * *k its index, or -1 for a key not among them. s->str is not set. The keys may not hold '"', '\\' or control
 * characters. */
int hsdag_jstream_key_index(hsdag_jstream *s, const char *const *keys, int n, int hint, int *k);
/* A string value into s->str (escapes decoded to UTF-8 as json-c does; \u0000 is STOP). */
int hsdag_jstream_string(hsdag_jstream *s);
int hsdag_jstream_number(hsdag_jstream *s, hsdag_jnum *n);
/* Consumes the literal null. */
int hsdag_jstream_null(hsdag_jstream *s);
/* Skips one value of any kind. */
int hsdag_jstream_skip(hsdag_jstream *s);
/* 0 if only blanks are left, else STOP. */
int hsdag_jstream_end(hsdag_jstream *s);

#endif
