/* suite.c - reader of benchmark suite files (bench/NAME.suite): one placement instance per line, with the
 *           best known latency and how it was obtained.
 * Not here: running an instance (the compare command does, with the library's placers).
 * Entry points: hsdag_suite_parse, hsdag_suite_read_file, hsdag_suite_free. */
#include "hsdag/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUITE_MAX_ENTRIES 4096
#define SUITE_MAX_LINE 4096
#define SUITE_MAX_TOKENS 64

void hsdag_suite_free(hsdag_suite *s)
{
    if (s) hsdag_arena_free(s->arena);
}

static int bad(hsdag_err *e, const char *what, int32_t line, const char *msg, const char *tok)
{
    return hsdag_err_set(e, HSDAG_EPARSE, "%s:%d: %s%s%.60s%s", what, (int)line, msg, tok ? " '" : "",
                         tok ? tok : "", tok ? "'" : "");
}

/* Splits one line (NUL-terminated copy) into tokens in place; returns the count or -1 if too many. */
static int tokenize(char *s, char **tok)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        if (!*s || *s == '#') return n;
        if (n == SUITE_MAX_TOKENS) return -1;
        tok[n++] = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#') s++;
        if (*s == '#') {
            *s = 0;
            return n;
        }
        if (*s) *s++ = 0;
    }
}

static int parse_entry(hsdag_suite *S, hsdag_suite_entry *en, char **tok, int nt, const char *what,
                       int32_t line, hsdag_err *e)
{
    memset(en, 0, sizeof *en);
    en->line = line;
    if (nt < 4) return bad(e, what, line, "expected NAME BEST_MS HOW MODEL [options]", NULL);
    for (int i = 0; i < nt; i++) {
        tok[i] = hsdag_arena_strdup(S->arena, tok[i]);
        if (!tok[i]) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    }
    en->name = tok[0];
    if (strcmp(tok[1], "-") == 0) {
        en->best_ms = NAN;
    } else {
        char *end;
        en->best_ms = strtod(tok[1], &end);
        if (*end || !(en->best_ms > 0) || !isfinite(en->best_ms))
            return bad(e, what, line, "BEST_MS is not a positive number or '-':", tok[1]);
    }
    en->how = tok[2];
    en->model = tok[3];
    if (en->model[0] == '-') return bad(e, what, line, "MODEL expected, got an option", tok[3]);
    for (int i = 4; i < nt; i++) {
        const char *o = tok[i];
        if (i + 1 >= nt) return bad(e, what, line, "option without a value:", o);
        const char *v = tok[++i];
        if (strcmp(o, "--devices") == 0)
            en->devices = v;
        else if (strcmp(o, "--semantics") == 0)
            en->semantics = v;
        else if (strcmp(o, "--costs") == 0)
            en->costs = v;
        else if (strcmp(o, "--mem") == 0) {
            if (en->n_mem == 16) return bad(e, what, line, "more than 16 --mem", NULL);
            en->mem[en->n_mem++] = v;
        } else
            return bad(e, what, line, "unknown option", o);
    }
    for (int32_t k = 0; k < S->n; k++)
        if (strcmp(S->entry[k].name, en->name) == 0) return bad(e, what, line, "duplicate name", en->name);
    return 0;
}

int hsdag_suite_parse(hsdag_suite **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    if (!buf && len) return hsdag_err_set(e, HSDAG_EINVAL, "%s: NULL buffer", what);
    hsdag_arena *a = hsdag_arena_create(0);
    hsdag_suite *S = a ? hsdag_arena_alloc(a, sizeof *S) : NULL;
    if (!S) {
        hsdag_arena_free(a);
        return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
    }
    S->arena = a;
    size_t cap = 0;
    hsdag_suite_entry *ent = NULL;
    const char *p = buf, *end = p ? p + len : p;
    char lb[SUITE_MAX_LINE + 1], *tok[SUITE_MAX_TOKENS];
    int rc = 0;
    for (int32_t line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (ll > SUITE_MAX_LINE) {
            rc = bad(e, what, line, "line longer than 4096 bytes", NULL);
            break;
        }
        if (memchr(p, 0, ll)) {
            rc = bad(e, what, line, "NUL byte", NULL);
            break;
        }
        memcpy(lb, p, ll);
        lb[ll] = 0;
        p += ll + (nl ? 1 : 0);
        int nt = tokenize(lb, tok);
        if (nt < 0) {
            rc = bad(e, what, line, "more than 64 tokens", NULL);
            break;
        }
        if (nt == 0) continue;
        if (S->n == SUITE_MAX_ENTRIES) {
            rc = bad(e, what, line, "more than 4096 entries", NULL);
            break;
        }
        if (hsdag_grow((void **)&ent, &cap, (size_t)S->n + 1, sizeof *ent) < 0) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
            break;
        }
        S->entry = ent;
        if ((rc = parse_entry(S, &ent[S->n], tok, nt, what, line, e)) < 0) break;
        S->n++;
    }
    if (rc == 0 && S->n == 0) rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: no entries", what);
    if (rc == 0 && S->n) {
        /* move the entries into the arena so one call frees everything */
        hsdag_suite_entry *dst = hsdag_arena_alloc(a, (size_t)S->n * sizeof *dst);
        if (!dst)
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
        else
            memcpy(dst, ent, (size_t)S->n * sizeof *dst);
        S->entry = dst;
    }
    hsdag_free(ent);
    if (rc < 0) {
        hsdag_arena_free(a);
        return rc;
    }
    *out = S;
    return 0;
}

int hsdag_suite_read_file(hsdag_suite **out, const char *path, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = hsdag_read_file(&buf, &len, path, (size_t)16 << 20, e);
    if (rc < 0) return rc;
    rc = hsdag_suite_parse(out, buf, len, path, e);
    hsdag_free(buf);
    return rc;
}
