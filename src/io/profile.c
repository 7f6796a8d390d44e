/* profile.c - the per-op per-device profile CSV reader ("node,device,ms" lines, '#' comments, an optional
 * header line).
 * Not here: applying a profile to the cost table (src/sim/costs.c).
 * Entry points: hsdag_profile_parse/read_file/free/count/entries/what/fused_count/fused.
 */
#include "hsdag/devices.h"

#include <errno.h>
#include <math.h>
#include <string.h>

struct hsdag_profile {
    hsdag_arena *arena;
    hsdag_profile_entry *ent;
    int32_t n, cap;
    const char *what;
    /* "#fused,<node>,<anchor>" comment lines (written by hsdag profile): the text after "#fused," */
    const char **fused;
    int32_t n_fused, cap_fused;
};

void hsdag_profile_free(hsdag_profile *p)
{
    if (!p) return;
    hsdag_free(p->ent);
    hsdag_free(p->fused);
    hsdag_arena_free(p->arena);
    hsdag_free(p);
}

int32_t hsdag_profile_count(const hsdag_profile *p)
{
    return p ? p->n : 0;
}

const hsdag_profile_entry *hsdag_profile_entries(const hsdag_profile *p, int32_t *n)
{
    *n = p ? p->n : 0;
    return p ? p->ent : NULL;
}

int32_t hsdag_profile_fused_count(const hsdag_profile *p)
{
    return p ? p->n_fused : 0;
}

const char *hsdag_profile_fused(const hsdag_profile *p, int32_t i)
{
    return (p && i >= 0 && i < p->n_fused) ? p->fused[i] : NULL;
}

const char *hsdag_profile_what(const hsdag_profile *p)
{
    return p ? p->what : "<buffer>";
}

static const char *trim(char *s, size_t *n)
{
    while (*n && (s[0] == ' ' || s[0] == '\t')) s++, (*n)--;
    while (*n && (s[*n - 1] == ' ' || s[*n - 1] == '\t' || s[*n - 1] == '\r')) (*n)--;
    if (*n >= 2 && s[0] == '"' && s[*n - 1] == '"') s++, *n -= 2; /* "name" (no escaped quotes inside) */
    return s;
}

#define PROF_MAX_LINES 50000000

int hsdag_profile_parse(hsdag_profile **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    what = what ? what : "<buffer>";
    hsdag_profile *p = hsdag_calloc(1, sizeof *p);
    char *line = NULL;
    int rc = 0;
    if (!p || !(p->arena = hsdag_arena_create(0))) goto oom;
    p->what = hsdag_arena_strdup(p->arena, what);
    const char *s = buf, *end = s + len;
    int32_t lineno = 0;
    size_t cap_line = 0;
    int header_done = 0;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        lineno++;
        if (lineno > PROF_MAX_LINES) {
            rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: more than %d lines", what, PROF_MAX_LINES);
            goto fail;
        }
        if (n + 1 > cap_line) {
            char *nb = hsdag_realloc(line, n + 1);
            if (!nb) goto oom;
            line = nb;
            cap_line = n + 1;
        }
        memcpy(line, s, n);
        line[n] = 0;
        s = nl ? nl + 1 : end;
        if (memchr(line, 0, n)) {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: line %d: NUL byte", what, (int)lineno);
            goto fail;
        }
        size_t tn = n;
        const char *t = trim(line, &tn);
        if (tn > 7 && strncmp(t, "#fused,", 7) == 0) {
            if (p->n_fused == p->cap_fused) {
                size_t cap = (size_t)p->cap_fused;
                if (hsdag_grow((void **)&p->fused, &cap, (size_t)p->n_fused + 1, sizeof *p->fused) < 0)
                    goto oom;
                p->cap_fused = (int32_t)(cap > INT32_MAX ? INT32_MAX : cap);
            }
            if (!(p->fused[p->n_fused] = hsdag_arena_strndup(p->arena, t + 7, tn - 7))) goto oom;
            p->n_fused++;
            continue;
        }
        if (tn == 0 || t[0] == '#') continue;
        /* split from the right: node names may contain commas, device names and numbers do not */
        char *c2 = strrchr(line, ',');
        if (!c2) goto bad;
        *c2 = 0;
        char *c1 = strrchr(line, ',');
        if (!c1) goto bad;
        *c1 = 0;
        size_t n0 = strlen(line), n1 = strlen(c1 + 1), n2 = strlen(c2 + 1);
        const char *f0 = trim(line, &n0), *f1 = trim(c1 + 1, &n1), *f2 = trim(c2 + 1, &n2);
        char num[64];
        if (n2 == 0 || n2 >= sizeof num) goto badnum;
        memcpy(num, f2, n2);
        num[n2] = 0;
        char *ep;
        errno = 0;
        double ms = strtod(num, &ep);
        if (*ep || errno || !isfinite(ms) || ms < 0) {
            if (ep == num && !header_done && p->n == 0) { /* one header line ("node,device,ms") first */
                header_done = 1;
                continue;
            }
            goto badnum;
        }
        if (n0 == 0 || n1 == 0) goto bad;
        if (ms > HSDAG_MAX_COST_MS) {
            rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %d: %.6g ms is above the limit of %.6g ms", what,
                               (int)lineno, ms, HSDAG_MAX_COST_MS);
            goto fail;
        }
        header_done = 1;
        if (p->n == p->cap) {
            size_t cap = (size_t)p->cap;
            if (hsdag_grow((void **)&p->ent, &cap, (size_t)p->n + 1, sizeof *p->ent) < 0) goto oom;
            p->cap = (int32_t)(cap > INT32_MAX ? INT32_MAX : cap);
        }
        hsdag_profile_entry *en = &p->ent[p->n];
        en->node = hsdag_arena_strndup(p->arena, f0, n0);
        en->device = hsdag_arena_strndup(p->arena, f1, n1);
        en->ms = ms;
        en->line = lineno;
        if (!en->node || !en->device) goto oom;
        p->n++;
        continue;
    bad:
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: line %d: expected 'node,device,ms'", what, (int)lineno);
        goto fail;
    badnum:
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: line %d: '%.40s' is not a time in ms >= 0", what,
                           (int)lineno, c2 ? c2 + 1 : "");
        goto fail;
    }
    hsdag_free(line);
    *out = p;
    return 0;
oom:
    rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", what);
fail:
    hsdag_free(line);
    hsdag_profile_free(p);
    return rc;
}

int hsdag_profile_read_file(hsdag_profile **out, const char *path, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = hsdag_read_file(&buf, &len, path, 0, e);
    if (rc < 0) return rc;
    rc = hsdag_profile_parse(out, buf, len, path, e);
    hsdag_free(buf);
    return rc;
}
