/* pipedream.c - reader of PipeDream profiler graph.txt files and the PAC-ML/ddls mirrored job graph.
 * Not here: file detection (io.c), splitting or scheduling jobs (src/cluster/); the op description is kept
 *   only as an op type (text before the first '('), never interpreted further.
 * Entry points: hsdag_pipedream_read, hsdag_pipedream_mirror.
 *
 * Grammar (docs/pacml.md, shared spec §3), one record per LF-separated line, no blank lines:
 *   node<ID> -- <description> -- forward_compute_time=<f>, backward_compute_time=<f>,
 *       activation_size=<f or [f; f; ...]>, parameter_size=<f>[ -- stage_id=<int>]
 *   \tnode<U> -- node<V>
 * Node lines come first, ids are exactly 1..n, edges are unique. A final LF is tolerated. */
#include "hsdag/io.h"

#include <math.h>
#include <string.h>

#define PD_SEP " -- "
#define PD_SEP_LEN 4

typedef struct pd_node {
    int32_t id;
    int32_t line;
    const char *desc; /* points into the buffer */
    size_t desc_len;
    double fwd, bwd, act, param;
    int32_t n_act;  /* elements of the activation list (1 for a plain number) */
    size_t act_off; /* first element in pd_parse.acts */
} pd_node;

typedef struct pd_edge {
    int32_t u, v, line;
} pd_edge;

typedef struct pd_parse {
    const char *what;
    pd_node *nodes;
    size_t n_nodes, cap_nodes;
    pd_edge *edges;
    size_t n_edges, cap_edges;
    double *acts;
    size_t n_acts, cap_acts;
} pd_parse;

static void pd_parse_free(pd_parse *p)
{
    hsdag_free(p->nodes);
    hsdag_free(p->edges);
    hsdag_free(p->acts);
}

/* Strict non-negative decimal: digits [ '.' digits ] [ e[+-]digits ]; no sign, no inf/nan, finite.
 * Consumes from *s up to end; returns 0 and advances *s, or -1. */
static int pd_number(const char **s, const char *end, double *out)
{
    const char *p = *s;
    char tmp[64];
    size_t k = 0;
    int digits = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (!digits) return -1;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        if (q < end && (*q == '+' || *q == '-')) q++;
        int ed = 0;
        while (q < end && *q >= '0' && *q <= '9') {
            q++;
            ed++;
        }
        if (!ed) return -1;
        p = q;
    }
    k = (size_t)(p - *s);
    if (k >= sizeof tmp) return -1;
    memcpy(tmp, *s, k);
    tmp[k] = '\0';
    double v = strtod(tmp, NULL);
    if (!isfinite(v)) return -1;
    *out = v;
    *s = p;
    return 0;
}

/* "node<ID>" with 1 <= ID <= HSDAG_MAX_NODES, decimal without sign or leading zero. */
static int pd_id(const char **s, const char *end, int32_t *out)
{
    const char *p = *s;
    if (end - p < 5 || memcmp(p, "node", 4) != 0) return -1;
    p += 4;
    if (p >= end || *p < '1' || *p > '9') return -1;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > HSDAG_MAX_NODES) return -2;
        p++;
    }
    *out = (int32_t)v;
    *s = p;
    return 0;
}

static int pd_expect(const char **s, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - *s) < n || memcmp(*s, lit, n) != 0) return -1;
    *s += n;
    return 0;
}

static const char *pd_find_sep(const char *p, const char *end)
{
    for (; end - p >= PD_SEP_LEN; p++)
        if (memcmp(p, PD_SEP, PD_SEP_LEN) == 0) return p;
    return NULL;
}

static int pd_bad(pd_parse *p, hsdag_err *e, int line, const char *msg)
{
    return hsdag_err_set(e, HSDAG_EPARSE, "%s: line %d: %s", p->what, line, msg);
}

static int pd_field(pd_parse *p, const char **s, const char *end, const char *key, double *v, int line,
                    hsdag_err *e)
{
    char msg[96];
    if (pd_expect(s, end, key) < 0) {
        snprintf(msg, sizeof msg, "expected '%s'", key);
        return pd_bad(p, e, line, msg);
    }
    if (pd_number(s, end, v) < 0) {
        snprintf(msg, sizeof msg, "'%s' is not a non-negative decimal number", key);
        return pd_bad(p, e, line, msg);
    }
    return 0;
}

static int pd_node_line(pd_parse *p, const char *s, const char *end, int line, hsdag_err *e)
{
    pd_node nd;
    memset(&nd, 0, sizeof nd);
    nd.line = line;
    int rc = pd_id(&s, end, &nd.id);
    if (rc == -2)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %d: node id exceeds %d", p->what, line,
                             HSDAG_MAX_NODES);
    if (rc < 0)
        return pd_bad(p, e, line, "node line must start with 'node<ID>' (ID a positive decimal integer)");
    if (pd_expect(&s, end, PD_SEP) < 0) return pd_bad(p, e, line, "expected ' -- ' after the node id");
    const char *sep2 = pd_find_sep(s, end);
    if (!sep2) return pd_bad(p, e, line, "expected a second ' -- ' after the op description");
    nd.desc = s;
    nd.desc_len = (size_t)(sep2 - s);
    s = sep2 + PD_SEP_LEN;
    if (pd_field(p, &s, end, "forward_compute_time=", &nd.fwd, line, e) < 0)
        return e ? e->status : HSDAG_EPARSE;
    if (pd_expect(&s, end, ", ") < 0) return pd_bad(p, e, line, "expected ', ' after forward_compute_time");
    if (pd_field(p, &s, end, "backward_compute_time=", &nd.bwd, line, e) < 0)
        return e ? e->status : HSDAG_EPARSE;
    if (pd_expect(&s, end, ", ") < 0) return pd_bad(p, e, line, "expected ', ' after backward_compute_time");
    if (pd_expect(&s, end, "activation_size=") < 0) return pd_bad(p, e, line, "expected 'activation_size='");
    nd.act_off = p->n_acts;
    if (s < end && *s == '[') {
        s++;
        for (;;) {
            double v;
            if (pd_number(&s, end, &v) < 0)
                return pd_bad(p, e, line, "activation list element is not a non-negative decimal number");
            if (hsdag_grow((void **)&p->acts, &p->cap_acts, p->n_acts + 1, sizeof(double)) < 0)
                return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
            p->acts[p->n_acts++] = v;
            nd.act += v;
            nd.n_act++;
            if (s < end && *s == ']') {
                s++;
                break;
            }
            if (pd_expect(&s, end, "; ") < 0)
                return pd_bad(p, e, line, "expected '; ' or ']' in the activation list");
        }
    } else {
        double v;
        if (pd_number(&s, end, &v) < 0)
            return pd_bad(p, e, line, "'activation_size=' is not a non-negative decimal number or a [list]");
        if (hsdag_grow((void **)&p->acts, &p->cap_acts, p->n_acts + 1, sizeof(double)) < 0)
            return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
        p->acts[p->n_acts++] = v;
        nd.act = v;
        nd.n_act = 1;
    }
    if (pd_expect(&s, end, ", ") < 0) return pd_bad(p, e, line, "expected ', ' after activation_size");
    if (pd_field(p, &s, end, "parameter_size=", &nd.param, line, e) < 0) return e ? e->status : HSDAG_EPARSE;
    if (s < end) {
        /* optional PipeDream partitioner annotation: " -- stage_id=<int>" */
        double st;
        if (pd_expect(&s, end, PD_SEP "stage_id=") < 0 || pd_number(&s, end, &st) < 0 || s != end)
            return pd_bad(p, e, line, "unexpected text after parameter_size");
    }
    if (!(nd.act <= HSDAG_MAX_ELEMS) || !(nd.param <= HSDAG_MAX_ELEMS))
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %d: %s %.4g B is above the %.4g B limit", p->what,
                             line, nd.act > HSDAG_MAX_ELEMS ? "activation_size" : "parameter_size",
                             nd.act > HSDAG_MAX_ELEMS ? nd.act : nd.param, (double)HSDAG_MAX_ELEMS);
    if (hsdag_grow((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(pd_node)) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
    p->nodes[p->n_nodes++] = nd;
    return 0;
}

static int pd_edge_line(pd_parse *p, const char *s, const char *end, int line, hsdag_err *e)
{
    pd_edge ed;
    ed.line = line;
    s++; /* TAB */
    int rc = pd_id(&s, end, &ed.u);
    if (rc == -2)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %d: node id exceeds %d", p->what, line,
                             HSDAG_MAX_NODES);
    if (rc < 0) return pd_bad(p, e, line, "edge line must be '\\tnode<U> -- node<V>'");
    if (pd_expect(&s, end, PD_SEP) < 0)
        return pd_bad(p, e, line, "expected ' -- ' between the edge's node ids");
    rc = pd_id(&s, end, &ed.v);
    if (rc == -2)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %d: node id exceeds %d", p->what, line,
                             HSDAG_MAX_NODES);
    if (rc < 0 || s != end) return pd_bad(p, e, line, "edge line must be '\\tnode<U> -- node<V>'");
    if (p->n_edges >= (size_t)HSDAG_MAX_EDGES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: line %d: more than %d edges", p->what, line,
                             HSDAG_MAX_EDGES);
    if (hsdag_grow((void **)&p->edges, &p->cap_edges, p->n_edges + 1, sizeof(pd_edge)) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
    p->edges[p->n_edges++] = ed;
    return 0;
}

static int pd_edge_cmp(const void *a, const void *b)
{
    const pd_edge *x = a, *y = b;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Op type from a description: text before the first '(' (trimmed), e.g. "Conv2d(3, 64, ...)" -> "Conv2d". */
static void pd_op_type(const pd_node *nd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n < nd->desc_len && nd->desc[n] != '(') n++;
    while (n > 0 && nd->desc[n - 1] == ' ') n--;
    size_t st = 0;
    while (st < n && nd->desc[st] == ' ') st++;
    if (n - st >= cap) n = st + cap - 1;
    memcpy(buf, nd->desc + st, n - st);
    buf[n - st] = '\0';
    if (!buf[0]) snprintf(buf, cap, "Unknown");
}

static int pd_build(pd_parse *p, hsdag_graph **out, hsdag_err *e)
{
    int32_t n = (int32_t)p->n_nodes;
    int32_t *slot = hsdag_malloc(((size_t)n + 1) * sizeof(int32_t)); /* id -> parsed node */
    hsdag_gb *b = hsdag_gb_create();
    int rc = 0;
    if (!slot || !b) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
        goto done;
    }
    for (int32_t i = 0; i <= n; i++) slot[i] = -1;
    for (int32_t k = 0; k < n; k++) {
        const pd_node *nd = &p->nodes[k];
        if (nd->id > n) {
            rc = hsdag_err_set(e, HSDAG_EPARSE,
                               "%s: line %d: node id %d outside 1..%d (ids must be 1..number of node lines)",
                               p->what, nd->line, nd->id, n);
            goto done;
        }
        if (slot[nd->id] >= 0) {
            rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: line %d: duplicate node id %d (first on line %d)",
                               p->what, nd->line, nd->id, p->nodes[slot[nd->id]].line);
            goto done;
        }
        slot[nd->id] = k;
    }
    for (size_t k = 0; k < p->n_edges; k++) {
        const pd_edge *ed = &p->edges[k];
        int32_t bad = ed->u > n ? ed->u : ed->v > n ? ed->v : 0;
        if (bad) {
            rc = hsdag_err_set(e, HSDAG_EDANGLING,
                               "%s: line %d: edge refers to node%d, which has no node line", p->what,
                               ed->line, bad);
            goto done;
        }
        if (ed->u == ed->v) {
            rc = hsdag_err_set(e, HSDAG_ECYCLE, "%s: line %d: self-loop on node%d", p->what, ed->line, ed->u);
            goto done;
        }
    }
    {
        pd_edge *sorted = hsdag_malloc((p->n_edges + 1) * sizeof(pd_edge));
        if (!sorted) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
            goto done;
        }
        if (p->n_edges) memcpy(sorted, p->edges, p->n_edges * sizeof(pd_edge));
        qsort(sorted, p->n_edges, sizeof(pd_edge), pd_edge_cmp);
        for (size_t k = 1; k < p->n_edges; k++)
            if (sorted[k].u == sorted[k - 1].u && sorted[k].v == sorted[k - 1].v) {
                rc = hsdag_err_set(e, HSDAG_EPARSE,
                                   "%s: line %d: duplicate edge node%d -> node%d (first on line %d)", p->what,
                                   sorted[k].line, sorted[k].u, sorted[k].v, sorted[k - 1].line);
                hsdag_free(sorted);
                goto done;
            }
        hsdag_free(sorted);
    }
    /* nodes in id order, so a file whose edges go from lower to higher ids keeps index = id - 1 */
    for (int32_t id = 1; id <= n; id++) {
        const pd_node *nd = &p->nodes[slot[id]];
        char name[32], op[128];
        snprintf(name, sizeof name, "node%d", id);
        pd_op_type(nd, op, sizeof op);
        int32_t v = hsdag_gb_add_node(b, name, op);
        if (v < 0) {
            rc = hsdag_err_set(e, v, "%s: out of memory", p->what);
            goto done;
        }
        hsdag_gb_set_file_id(b, v, id);
        hsdag_gb_set_cost(b, v, HSDAG_COST_ACCEL, nd->fwd);
        hsdag_gb_set_cost(b, v, HSDAG_COST_BWD, nd->bwd);
        hsdag_gb_set_param_bytes(b, v, nd->param);
        hsdag_gb_set_mem_bytes(b, v, nd->act + nd->param);
        if (nd->desc_len >= 5 && memcmp(nd->desc, "Input", 5) == 0) hsdag_gb_set_flags(b, v, HSDAG_NF_INPUT);
        for (int32_t j = 0; j < nd->n_act; j++) {
            int64_t dim = (int64_t)llround(p->acts[nd->act_off + (size_t)j]); /* bytes as a u8 vector */
            if (hsdag_gb_add_output(b, v, HSDAG_DT_U8, 1, &dim) < 0) {
                rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
                goto done;
            }
        }
    }
    for (size_t k = 0; k < p->n_edges; k++) {
        const pd_edge *ed = &p->edges[k];
        if (hsdag_gb_add_edge(b, ed->u - 1, ed->v - 1, p->nodes[slot[ed->u]].act) < 0) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", p->what);
            goto done;
        }
    }
    {
        hsdag_graph_meta m;
        memset(&m, 0, sizeof m);
        m.format = HSDAG_FMT_PIPEDREAM;
        m.file_nodes = n;
        m.file_edges = (int64_t)p->n_edges;
        m.ir_version = -1;
        m.opset = -1;
        m.max_accels = -1;
        m.max_cpus = -1;
        m.max_size_per_accel = NAN;
        m.name = "";
        hsdag_gb_set_meta(b, &m);
    }
    rc = hsdag_gb_finish(b, out, e);
    if (rc < 0) hsdag_err_prefix(e, p->what);
done:
    hsdag_gb_free(b);
    hsdag_free(slot);
    return rc;
}

int hsdag_pipedream_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    pd_parse p;
    memset(&p, 0, sizeof p);
    p.what = what ? what : "<buffer>";
    *out = NULL;
    if (!buf && len) return hsdag_err_set(e, HSDAG_EINVAL, "%s: no buffer", p.what);
    if (len > HSDAG_MAX_FILE_BYTES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: file larger than 1 GiB", p.what);
    const char *s = buf, *end = s + len;
    if (len && end[-1] == '\n') end--; /* a final LF is tolerated */
    int line = 0, in_edges = 0, rc = 0;
    if (s == end) return hsdag_err_set(e, HSDAG_EPARSE, "%s: empty file: no node lines", p.what);
    while (s <= end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        line++;
        if (line > HSDAG_MAX_NODES + HSDAG_MAX_EDGES) {
            rc = hsdag_err_set(e, HSDAG_ELIMIT, "%s: too many lines", p.what);
            break;
        }
        if (memchr(s, '\0', (size_t)(le - s)) || memchr(s, '\r', (size_t)(le - s))) {
            rc = pd_bad(&p, e, line, "NUL or CR byte (expected plain ASCII with LF line ends)");
            break;
        }
        if (le == s) {
            rc = pd_bad(&p, e, line, "empty line");
            break;
        }
        if (*s == '\t') {
            in_edges = 1;
            rc = pd_edge_line(&p, s, le, line, e);
        } else if (in_edges) {
            rc = pd_bad(&p, e, line, "node line after the edge lines (expected '\\tnode<U> -- node<V>')");
        } else {
            rc = pd_node_line(&p, s, le, line, e);
        }
        if (rc < 0) break;
        if (!nl) break;
        s = nl + 1;
    }
    if (rc == 0 && p.n_nodes == 0) rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: no node lines", p.what);
    if (rc == 0) rc = pd_build(&p, out, e);
    pd_parse_free(&p);
    return rc;
}

int hsdag_pipedream_mirror(hsdag_graph **out, const hsdag_graph *fwd, hsdag_err *e)
{
    *out = NULL;
    if (!fwd || fwd->n_nodes < 1) return hsdag_err_set(e, HSDAG_EINVAL, "mirror: empty forward graph");
    int32_t n = fwd->n_nodes;
    if (n > HSDAG_MAX_NODES / 2 || fwd->n_edges > (HSDAG_MAX_EDGES - 1) / 2)
        return hsdag_err_set(e, HSDAG_ELIMIT, "mirror: graph too large to mirror");
    int32_t *by_id = hsdag_malloc(((size_t)n + 1) * sizeof(int32_t)); /* file id -> fwd node index */
    hsdag_gb *b = hsdag_gb_create();
    int rc = 0;
    if (!by_id || !b) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "mirror: out of memory");
        goto done;
    }
    for (int32_t i = 0; i <= n; i++) by_id[i] = -1;
    for (int32_t v = 0; v < n; v++) {
        int32_t id = fwd->file_id[v];
        if (id < 1 || id > n || by_id[id] >= 0) {
            rc = hsdag_err_set(e, HSDAG_EINVAL, "mirror: node '%s': file ids must be exactly 1..%d",
                               fwd->name[v], n);
            goto done;
        }
        by_id[id] = v;
    }
    /* builder index: forward id i -> i-1; backward id b (n+1..2n) -> b-1; all edges go from lower to higher
     * id */
    for (int32_t id = 1; id <= 2 * n; id++) {
        int backward = id > n;
        int32_t v = by_id[backward ? 2 * n - id + 1 : id];
        char name[32];
        snprintf(name, sizeof name, "node%d", id);
        int32_t x = hsdag_gb_add_node(b, name, fwd->op[v]);
        if (x < 0) {
            rc = hsdag_err_set(e, x, "mirror: out of memory");
            goto done;
        }
        const double *c = &fwd->cost_ms[(size_t)v * HSDAG_COST_KINDS_];
        hsdag_gb_set_file_id(b, x, id);
        hsdag_gb_set_cost(b, x, HSDAG_COST_ACCEL, backward ? c[HSDAG_COST_BWD] : c[HSDAG_COST_ACCEL]);
        hsdag_gb_set_param_bytes(b, x, fwd->param_bytes[v]);
        hsdag_gb_set_mem_bytes(b, x, fwd->mem_bytes[v]);
        hsdag_gb_set_flags(
            b, x, (fwd->flags[v] & ~(uint32_t)HSDAG_NF_RENAMED) | (backward ? HSDAG_NF_BACKWARD : 0));
        int64_t dim = (int64_t)llround(fwd->out_bytes[v]);
        if (hsdag_gb_add_output(b, x, HSDAG_DT_U8, 1, &dim) < 0) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "mirror: out of memory");
            goto done;
        }
    }
    for (int32_t k = 0; k < fwd->n_edges; k++) {
        int32_t u = fwd->file_id[fwd->edge_src[k]], v = fwd->file_id[fwd->out_dst[k]];
        if (hsdag_gb_add_edge(b, u - 1, v - 1, fwd->out_bytes[fwd->edge_src[k]]) < 0 ||
            hsdag_gb_add_edge(b, 2 * n - (v - 1) - 1, 2 * n - (u - 1) - 1, fwd->out_bytes[fwd->out_dst[k]]) <
                0) {
            rc = hsdag_err_set(e, HSDAG_ENOMEM, "mirror: out of memory");
            goto done;
        }
    }
    if (hsdag_gb_add_edge(b, n - 1, n, fwd->out_bytes[by_id[n]]) < 0) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "mirror: out of memory");
        goto done;
    }
    hsdag_gb_set_meta(b, &fwd->meta);
    rc = hsdag_gb_finish(b, out, e);
    if (rc < 0) hsdag_err_prefix(e, "mirror");
done:
    hsdag_gb_free(b);
    hsdag_free(by_id);
    return rc;
}
