/* jsonw.c - the writer every result document goes through: one JSON object with "schema" first, members
 * joined by ", ", arrays of objects one element per line, numbers in their shortest round-trip form.
 * Not here: what a document holds (each module's result writer: place/result_json.c, ...) or reading JSON.
 * Entry points: hsdag_jw_begin, hsdag_jw_str/num/int/bool/null, hsdag_jw_object/array/close, hsdag_jw_end.
 */
#include "hsdag/common.h"

#include <string.h>

/* Separator and key before a member; container = the member opens an object or array. */
static void jw_key(hsdag_jw *w, const char *key, int container)
{
    HSDAG_ASSERT(w->depth >= 1 && w->depth < HSDAG_JW_DEPTH);
    int d = w->depth;
    if (w->is_arr[d] && container) {
        hsdag_buf_printf(w->b, "%s\n%*s", w->n[d] ? "," : "", 2 * (d - 1), "");
        w->lines[d] = 1;
    } else if (w->n[d]) {
        hsdag_buf_append(w->b, ", ", 2);
    }
    w->n[d]++;
    if (!w->is_arr[d]) {
        HSDAG_ASSERT(key != NULL);
        hsdag_buf_json_str(w->b, key);
        hsdag_buf_append(w->b, ": ", 2);
    }
}

static void jw_open(hsdag_jw *w, const char *key, int arr)
{
    jw_key(w, key, 1);
    hsdag_buf_append(w->b, arr ? "[" : "{", 1);
    w->depth++;
    HSDAG_ASSERT(w->depth < HSDAG_JW_DEPTH);
    w->n[w->depth] = 0;
    w->is_arr[w->depth] = (unsigned char)arr;
    w->lines[w->depth] = 0;
}

void hsdag_jw_begin(hsdag_jw *w, hsdag_buf *b, const char *schema)
{
    memset(w, 0, sizeof *w);
    w->b = b;
    hsdag_buf_append(b, "{", 1);
    w->depth = 1;
    hsdag_jw_str(w, "schema", schema);
}

void hsdag_jw_str(hsdag_jw *w, const char *key, const char *s)
{
    jw_key(w, key, 0);
    if (s)
        hsdag_buf_json_str(w->b, s);
    else
        hsdag_buf_append(w->b, "null", 4);
}

void hsdag_jw_num(hsdag_jw *w, const char *key, double v)
{
    jw_key(w, key, 0);
    hsdag_buf_double(w->b, v);
}

void hsdag_jw_int(hsdag_jw *w, const char *key, long long v)
{
    jw_key(w, key, 0);
    hsdag_buf_printf(w->b, "%lld", v);
}

void hsdag_jw_bool(hsdag_jw *w, const char *key, int v)
{
    jw_key(w, key, 0);
    hsdag_buf_printf(w->b, "%s", v ? "true" : "false");
}

void hsdag_jw_null(hsdag_jw *w, const char *key)
{
    jw_key(w, key, 0);
    hsdag_buf_append(w->b, "null", 4);
}

void hsdag_jw_object(hsdag_jw *w, const char *key)
{
    jw_open(w, key, 0);
}

void hsdag_jw_array(hsdag_jw *w, const char *key)
{
    jw_open(w, key, 1);
}

void hsdag_jw_close(hsdag_jw *w)
{
    HSDAG_ASSERT(w->depth >= 1);
    int d = w->depth;
    if (w->lines[d]) hsdag_buf_printf(w->b, "\n%*s", 2 * (d - 2), "");
    hsdag_buf_append(w->b, w->is_arr[d] ? "]" : "}", 1);
    w->depth--;
}

int hsdag_jw_end(hsdag_jw *w)
{
    while (w->depth > 0) hsdag_jw_close(w);
    hsdag_buf_append(w->b, "\n", 1);
    return w->b->oom ? HSDAG_ENOMEM : 0;
}
