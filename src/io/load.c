/* load.c - format detection by content and the dispatcher over the per-format readers; a large hsdag JSON file
 * is read in pieces by the streaming reader rather than whole.
 * Not here: parsing itself (one file per format in src/io/).
 * Entry points: hsdag_detect, hsdag_load, hsdag_load_file. */
#include "hsdag/io.h"
#include "ioutil.h"
#include "json_int.h"
#include "jsonstream.h"

#include <stdio.h>
#include <string.h>

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    /* UTF-8 byte-order mark */
    if (end - p >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
        (unsigned char)p[2] == 0xBF)
        p += 3;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

/* Skips blanks and DOT comments (C and C++ style, '#' lines) in front of a DOT graph keyword. */
static const char *skip_dot_comments(const char *p, const char *end)
{
    for (;;) {
        p = skip_ws(p, end);
        if (end - p >= 2 && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (end - q >= 2 && !(q[0] == '*' && q[1] == '/')) q++;
            if (end - q < 2) return end;
            p = q + 2;
        } else if ((end - p >= 2 && p[0] == '/' && p[1] == '/') || (p < end && p[0] == '#')) {
            while (p < end && *p != '\n') p++;
        } else {
            return p;
        }
    }
}

/* memmem over a bounded prefix */
static int has(const char *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    if (k > n) return 0;
    for (size_t i = 0; i + k <= n; i++)
        if (p[i] == needle[0] && memcmp(p + i, needle, k) == 0) return 1;
    return 0;
}

static int ext_is(const char *path, const char *ext)
{
    if (!path) return 0;
    size_t pl = strlen(path), el = strlen(ext);
    if (pl < el) return 0;
    for (size_t i = 0; i < el; i++) {
        char c = path[pl - el + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != ext[i]) return 0;
    }
    return 1;
}

hsdag_format hsdag_detect(const void *buf, size_t len, const char *path)
{
    if (!buf) { /* NULL + 0 is undefined behaviour: an absent buffer is an empty one */
        buf = "";
        len = 0;
    }
    const char *s = buf, *end = s + len;
    const char *p = skip_ws(s, end);
    size_t head = (size_t)(end - p) < 65536 ? (size_t)(end - p) : 65536;
    if (p < end && *p == '{') {
        if (has(p, head, "\"hsdag-graph\"")) return HSDAG_FMT_JSON;
        if (has(p, head, "\"cpuLatency\"") || has(p, head, "\"maxFPGAs\"") || has(p, head, "\"fpgaLatency\""))
            return HSDAG_FMT_TARNAWSKI;
        if (ext_is(path, ".json")) return HSDAG_FMT_JSON;
        return HSDAG_FMT_UNKNOWN;
    }
    if (p < end && *p == '<') {
        if (has(p, head, "<net")) return HSDAG_FMT_OVXML;
        return ext_is(path, ".xml") ? HSDAG_FMT_OVXML : HSDAG_FMT_UNKNOWN;
    }
    const char *d = skip_dot_comments(p, end);
    if (end - d >= 7 &&
        (memcmp(d, "digraph", 7) == 0 || memcmp(d, "strict", 6) == 0 || memcmp(d, "graph", 5) == 0))
        return HSDAG_FMT_DOT;
    if (head >= 5 && memcmp(p, "node", 4) == 0 && p[4] >= '0' && p[4] <= '9' && has(p, head, " -- "))
        return HSDAG_FMT_PIPEDREAM;
    /* ONNX ModelProto starts with field 1 (ir_version, varint: tag 0x08) in every exporter we know;
     * other leading fields (producer_name 0x12, graph 0x3a, opset_import 0x42) are also accepted. */
    if (len > 0) {
        unsigned char c = (unsigned char)s[0];
        if (c == 0x08 || c == 0x12 || c == 0x1a || c == 0x3a || c == 0x42) return HSDAG_FMT_ONNX;
    }
    if (ext_is(path, ".onnx")) return HSDAG_FMT_ONNX;
    if (ext_is(path, ".dot") || ext_is(path, ".gv")) return HSDAG_FMT_DOT;
    if (ext_is(path, ".txt")) return HSDAG_FMT_PIPEDREAM;
    return HSDAG_FMT_UNKNOWN;
}

int hsdag_load(hsdag_graph **out, const void *buf, size_t len, hsdag_format fmt, const char *what,
               hsdag_err *e)
{
    *out = NULL;
    if (!what) what = "<buffer>";
    if (!buf && len) return hsdag_err_set(e, HSDAG_EINVAL, "%s: no buffer for %zu bytes", what, len);
    if (!buf) buf = "";
    if (len > HSDAG_MAX_FILE_BYTES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: input larger than 1 GiB", what);
    if (fmt == HSDAG_FMT_UNKNOWN) fmt = hsdag_detect(buf, len, what);
    /* A UTF-8 byte-order mark (left by some editors) belongs to no text format, and json-c and cgraph
     * reject it as a syntax error; detection already looks past it. */
    const unsigned char *u = buf;
    if (fmt != HSDAG_FMT_ONNX && len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF) {
        buf = u + 3;
        len -= 3;
    }
    switch (fmt) {
    case HSDAG_FMT_ONNX:
        return hsdag_onnx_read(out, buf, len, what, e);
    case HSDAG_FMT_OVXML:
        return hsdag_ovxml_read(out, buf, len, what, e);
    case HSDAG_FMT_PIPEDREAM:
        return hsdag_pipedream_read(out, buf, len, what, e);
    case HSDAG_FMT_TARNAWSKI:
        return hsdag_tarnawski_read(out, buf, len, what, e);
    case HSDAG_FMT_JSON:
        return hsdag_json_read(out, buf, len, what, e);
    case HSDAG_FMT_DOT:
        return hsdag_dot_read(out, buf, len, what, e);
    default:
        return hsdag_err_set(e, HSDAG_EFORMAT,
                             "%s: unrecognised format (expected ONNX, OpenVINO IR .xml, PipeDream graph.txt, "
                             "Tarnawski JSON, hsdag JSON or DOT)",
                             what);
    }
}

/* A large file (hsdag_ioutil_open_pieces) that hsdag_detect calls hsdag JSON from its first 64 KiB (all detection
 * looks at) read by the streaming reader in pieces: 0 with *out set, HSDAG_ENOMEM with e set, or 1: not taken
 * (another kind of file, a read problem, or a text the streaming reader leaves to json-c): the caller reads the
 * file whole, which gives every message. */
static int load_json_pieces(hsdag_graph **out, const char *path, hsdag_format fmt, hsdag_err *e)
{
    const size_t head_len = 65536;
    FILE *f;
    if (fmt != HSDAG_FMT_UNKNOWN && fmt != HSDAG_FMT_JSON) return 1;
    char *head = hsdag_malloc(head_len);
    if (!head) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", path); /* never swallowed */
    int rc = 1, open = hsdag_ioutil_open_pieces(&f, head, head_len, path, HSDAG_MAX_FILE_BYTES);
    int json = open && (fmt == HSDAG_FMT_JSON || hsdag_detect(head, head_len, path) == HSDAG_FMT_JSON);
    hsdag_free(head);
    if (!open) return 1;
    if (json) {
        rc = hsdag_json_read_file_stream(out, f, HSDAG_IOUTIL_PIECE);
        if (rc == HSDAG_ENOMEM) hsdag_err_set(e, rc, "%s: out of memory", path);
        if (rc == HSDAG_JSTREAM_STOP) rc = 1;
    }
    fclose(f);
    return rc;
}

int hsdag_load_file(hsdag_graph **out, const char *path, hsdag_format fmt, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    int st = load_json_pieces(out, path, fmt, e);
    if (st != 1) return st;
    int rc = hsdag_read_file(&buf, &len, path, HSDAG_MAX_FILE_BYTES, e);
    if (rc < 0) return rc;
    rc = hsdag_load(out, buf, len, fmt, path, e);
    hsdag_free(buf);
    return rc;
}
