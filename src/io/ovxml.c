/* ovxml.c - OpenVINO IR v10/v11 .xml reader: <layer>s become nodes, <edge>s become edges (libxml2 DOM).
 * Not here: the .bin weights file (only shapes and precisions are read), IR v7 and older, DTDs/entities.
 * Entry points: hsdag_ovxml_read.
 *
 * Rules (what the numbers mean):
 *  - every <layer> is a node (Parameter, Const and Result included); file_id = the layer id;
 *    meta.file_nodes = number of <layer>s, meta.file_edges = number of <edge> elements;
 *  - output tensors: each <output><port> in document order, precision from the port's `precision`
 *    (FP32, FP16, I64, ...), else from <data element_type=...>; dims -1 (or "?", "a..b") are dynamic;
 *  - edge bytes = bytes of the from-port's tensor (0 if a dim is dynamic); <edge>s that carry the same
 *    from-port to the same layer (x*x) count that tensor once; different ports between the same two
 *    layers are summed by the builder into one IR edge;
 *  - parameter bytes: a Const layer's bytes (its output tensor, stored precision) go to the first
 *    non-constant layer that reads it, directly or through constant-only layers such as the
 *    decompression Convert (rule in constw.h); Const layers stay nodes (bookkeeping, zero cost);
 *  - FLOPs: hsdag_opcost_estimate on the <input> port shapes in port-id order and the <output>
 *    shapes (GroupConvolution weights stay in OpenVINO layout [G, O/G, I/G, k...], group = G; MatMul
 *    transpose_a/transpose_b go to trans_a/trans_b); MaxPool/AvgPool use the <data kernel> window:
 *    out_elems x prod(kernel); constant-valued layers (the Convert of compressed weights) are folded
 *    when the model is compiled and cost 0 FLOPs.
 * Security: no network (XML_PARSE_NONET), no entity substitution (no XML_PARSE_NOENT), no DTD loading
 * (no XML_PARSE_DTDLOAD), and any DOCTYPE is refused by the prescan before libxml2 reads it (and, should
 * one get past it, stops the parser at once: SAX internalSubset hook), so an entity bomb or an external
 * entity is rejected before any entity is declared. Input capped at
 * HSDAG_OVXML_MAX_BYTES. libxml2's own error printing is replaced by a per-context handler that keeps
 * the first error for our one-line message.
 */
#include "hsdag/io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "constw.h"
#include "ioutil.h"

#define HSDAG_OVXML_MAX_BYTES ((size_t)512 << 20) /* 512 MiB of XML; the DOM costs several times that */

/* ---- parse state ---- */
typedef struct ovxml_port {
    int32_t layer;  /* layer index (file order) */
    int64_t id;     /* port id */
    uint8_t is_out; /* 1 = <output>, 0 = <input> */
    int8_t rank;
    uint8_t dtype;   /* hsdag_dtype */
    int32_t dim_off; /* into dims */
    double bytes;    /* tensor bytes, 0 if a dim is dynamic */
} ovxml_port;

typedef struct ovxml_layer {
    int64_t id;
    const char *name; /* points into the DOM */
    const char *type;
    xmlNodePtr node;
    int32_t port_off, port_end; /* this layer's ports: sorted[port_off .. port_end) by (is_out, id) */
} ovxml_layer;

typedef struct ovxml_edge {
    int32_t u, v;  /* layer indices */
    int32_t uport; /* port index of the from-port */
} ovxml_edge;

typedef struct ovxml_ctx {
    const char *what;
    hsdag_err *e;
    ovxml_layer *layers;
    size_t n_layers, cap_layers;
    ovxml_port *ports;
    size_t n_ports, cap_ports;
    int32_t *sorted; /* port indices, grouped by layer, sorted by (is_out, id) inside a layer */
    int64_t *dims;
    size_t n_dims, cap_dims;
    ovxml_edge *edges;
    size_t n_edges, cap_edges;
    hsdag_strmap *ids; /* decimal layer id -> layer index */
} ovxml_ctx;

/* What the libxml2 callbacks collect (lives in ctxt->_private). */
typedef struct ovxml_xmlstate {
    int has_dtd;
    int have_error;
    int line;
    char msg[256];
} ovxml_xmlstate;

/* ---- libxml2 hooks ---- */
static void ovxml_xml_on_error(void *user, xmlErrorPtr err)
{
    xmlParserCtxtPtr c = user;
    ovxml_xmlstate *st = c ? c->_private : NULL;
    if (!st || !err || err->level < XML_ERR_ERROR || st->have_error) return;
    st->have_error = 1;
    st->line = err->line;
    /* no xmlStopParser here: called from this handler it crashes libxml2 2.9.14 in xmlSwitchToEncoding (an
     * EBCDIC declaration, tests/hostile); the prescan keeps entity declarations away instead */
    snprintf(st->msg, sizeof st->msg, "%s", err->message ? err->message : "unknown error");
    size_t l = strlen(st->msg);
    while (l > 0 && (st->msg[l - 1] == '\n' || st->msg[l - 1] == ' ')) st->msg[--l] = 0;
}

/* A DOCTYPE is the only way to declare entities: refuse it before any declaration is read. */
static void ovxml_xml_on_doctype(void *user, const xmlChar *name, const xmlChar *ext_id,
                                 const xmlChar *sys_id)
{
    (void)name;
    (void)ext_id;
    (void)sys_id;
    xmlParserCtxtPtr c = user;
    ovxml_xmlstate *st = c->_private;
    st->has_dtd = 1;
    st->line = c->input ? c->input->line : 0;
    xmlStopParser(c);
}

/* ---- small DOM helpers (no allocation: attribute text points into the DOM) ---- */
static const char *ovxml_attr(xmlNodePtr n, const char *name)
{
    for (xmlAttrPtr a = n->properties; a; a = a->next) {
        if (strcmp((const char *)a->name, name) != 0) continue;
        if (a->children && a->children->type == XML_TEXT_NODE && !a->children->next)
            return (const char *)a->children->content;
        return ""; /* empty or unusual value */
    }
    return NULL;
}

static int ovxml_is(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNodePtr ovxml_child(xmlNodePtr n, const char *name)
{
    for (xmlNodePtr c = n->children; c; c = c->next)
        if (ovxml_is(c, name)) return c;
    return NULL;
}

/* Text of an element with a single text child ("" if none, NULL if it has element children). */
static const char *ovxml_text(xmlNodePtr n)
{
    const char *t = "";
    for (xmlNodePtr c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE) {
            if (*t) return NULL;
            t = (const char *)c->content;
        } else if (c->type != XML_COMMENT_NODE) {
            return NULL;
        }
    }
    return t;
}

static int ovxml_bool(const char *s)
{
    return s && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "1") == 0);
}

static long ovxml_line(xmlNodePtr n)
{
    return n ? xmlGetLineNo(n) : -1;
}

/* "layer id=5 'conv1'" prefix for messages about a layer. */
static int ovxml_fail_layer(ovxml_ctx *c, const ovxml_layer *l, int status, const char *problem,
                            const char *detail)
{
    return hsdag_err_set(c->e, status, "%s: layer id=%lld '%.120s': %s%s", c->what, (long long)l->id,
                         l->name ? l->name : "", problem, detail ? detail : "");
}

/* ---- ports ---- */
static int ovxml_port_read(ovxml_ctx *c, int32_t li, xmlNodePtr pn, int is_out, const char *dt_fallback)
{
    ovxml_layer *l = &c->layers[li];
    char buf[160];
    int64_t pid;
    if (hsdag_ioutil_parse_i64(ovxml_attr(pn, "id"), &pid) < 0) {
        snprintf(buf, sizeof buf, " (line %ld)", ovxml_line(pn));
        return ovxml_fail_layer(c, l, HSDAG_EPARSE, "port without a valid integer id", buf);
    }
    if (hsdag_grow((void **)&c->ports, &c->cap_ports, c->n_ports + 1, sizeof *c->ports) < 0)
        return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    ovxml_port *p = &c->ports[c->n_ports];
    memset(p, 0, sizeof *p);
    p->layer = li;
    p->id = pid;
    p->is_out = (uint8_t)is_out;
    p->dim_off = (int32_t)c->n_dims;
    const char *prec = ovxml_attr(pn, "precision");
    hsdag_dtype dt = HSDAG_DT_UNKNOWN;
    if (prec && *prec) dt = hsdag_dtype_parse(prec);
    if (dt == HSDAG_DT_UNKNOWN && dt_fallback && *dt_fallback) dt = hsdag_dtype_parse(dt_fallback);
    p->dtype = (uint8_t)dt;
    int rank = 0;
    for (xmlNodePtr d = pn->children; d; d = d->next) {
        if (!ovxml_is(d, "dim")) continue;
        const char *t = ovxml_text(d);
        int64_t v;
        if (t && (strchr(t, '?') || strstr(t, ".."))) {
            v = -1; /* "?" or an interval "1..128": dynamic */
        } else if (hsdag_ioutil_parse_i64(t, &v) < 0 || v < -1) {
            snprintf(buf, sizeof buf, "%s port %lld: bad dim '%.40s' (line %ld)", is_out ? "output" : "input",
                     (long long)pid, t ? t : "<element>", ovxml_line(d));
            return ovxml_fail_layer(c, l, HSDAG_EPARSE, buf, NULL);
        }
        if (rank >= HSDAG_MAX_RANK) {
            snprintf(buf, sizeof buf, "%s port %lld: rank above %d", is_out ? "output" : "input",
                     (long long)pid, HSDAG_MAX_RANK);
            return ovxml_fail_layer(c, l, HSDAG_ELIMIT, buf, NULL);
        }
        if (hsdag_grow((void **)&c->dims, &c->cap_dims, c->n_dims + 1, sizeof *c->dims) < 0)
            return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
        c->dims[c->n_dims++] = v;
        rank++;
    }
    double elems = rank ? hsdag_ioutil_shape_elems(c->dims + p->dim_off, rank) : 1.0;
    if (elems > HSDAG_MAX_ELEMS) {
        snprintf(buf, sizeof buf, "%s port %lld: shape has %.3g elements (limit %.3g)",
                 is_out ? "output" : "input", (long long)pid, elems, (double)HSDAG_MAX_ELEMS);
        return ovxml_fail_layer(c, l, HSDAG_ELIMIT, buf, NULL);
    }
    p->rank = (int8_t)rank;
    p->bytes = elems < 0 ? 0.0 : elems * hsdag_dtype_bytes(dt);
    c->n_ports++;
    return 0;
}

static int ovxml_port_cmp(const void *a, const void *b, const ovxml_port *ports)
{
    const ovxml_port *x = &ports[*(const int32_t *)a], *y = &ports[*(const int32_t *)b];
    if (x->is_out != y->is_out) return x->is_out < y->is_out ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return 0;
}

/* qsort has no context argument in C11: sort each layer's small range by insertion (ranges are short
 * in real files; a hostile file with a huge port list pays O(k log k) through the merge below). */
static void ovxml_ports_sort(int32_t *idx, int32_t n, const ovxml_port *ports, int32_t *tmp)
{
    if (n < 2) return;
    if (n <= 16) {
        for (int32_t i = 1; i < n; i++) {
            int32_t x = idx[i], j = i;
            while (j > 0 && ovxml_port_cmp(&idx[j - 1], &x, ports) > 0) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = x;
        }
        return;
    }
    int32_t h = n / 2;
    ovxml_ports_sort(idx, h, ports, tmp);
    ovxml_ports_sort(idx + h, n - h, ports, tmp);
    int32_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = ovxml_port_cmp(&idx[j], &idx[i], ports) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

/* Port index of (layer, is_out, id) or -1. */
static int32_t ovxml_port_find(const ovxml_ctx *c, int32_t li, int is_out, int64_t id)
{
    int32_t lo = c->layers[li].port_off, hi = c->layers[li].port_end;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const ovxml_port *p = &c->ports[c->sorted[mid]];
        int cmp = p->is_out != is_out ? (p->is_out < is_out ? -1 : 1) : (p->id < id ? -1 : p->id > id);
        if (cmp == 0) return c->sorted[mid];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* ---- layers and edges ---- */
static int ovxml_layer_read(ovxml_ctx *c, xmlNodePtr ln)
{
    int64_t id;
    if (c->n_layers >= (size_t)HSDAG_MAX_NODES)
        return hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: more than %d layers", c->what, HSDAG_MAX_NODES);
    const char *ids = ovxml_attr(ln, "id");
    if (hsdag_ioutil_parse_i64(ids, &id) < 0 || id < 0 || id > INT32_MAX)
        return hsdag_err_set(c->e, HSDAG_EPARSE,
                             "%s: line %ld: <layer> id '%.40s' is not an integer in [0, %d]", c->what,
                             ovxml_line(ln), ids ? ids : "(missing)", INT32_MAX);
    if (hsdag_grow((void **)&c->layers, &c->cap_layers, c->n_layers + 1, sizeof *c->layers) < 0)
        return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    int32_t li = (int32_t)c->n_layers;
    ovxml_layer *l = &c->layers[li];
    memset(l, 0, sizeof *l);
    l->id = id;
    l->node = ln;
    l->name = ovxml_attr(ln, "name");
    l->type = ovxml_attr(ln, "type");
    c->n_layers++;
    if (!l->type || !*l->type) return ovxml_fail_layer(c, l, HSDAG_EPARSE, "missing type", NULL);
    char key[32];
    int kl = snprintf(key, sizeof key, "%lld", (long long)id);
    int rc = hsdag_strmap_put(c->ids, key, (size_t)kl, li);
    if (rc < 0) return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    if (rc == 1) return ovxml_fail_layer(c, l, HSDAG_EPARSE, "duplicate layer id", NULL);

    xmlNodePtr data = ovxml_child(ln, "data");
    const char *dt_fallback = data ? ovxml_attr(data, "element_type") : NULL;
    l->port_off = (int32_t)c->n_ports;
    for (xmlNodePtr s = ln->children; s; s = s->next) {
        int is_out = ovxml_is(s, "output");
        if (!is_out && !ovxml_is(s, "input")) continue;
        for (xmlNodePtr pn = s->children; pn; pn = pn->next) {
            if (!ovxml_is(pn, "port")) continue;
            rc = ovxml_port_read(c, li, pn, is_out, is_out ? dt_fallback : NULL);
            if (rc < 0) return rc;
        }
    }
    l->port_end = (int32_t)c->n_ports;
    return 0;
}

static int ovxml_edge_read(ovxml_ctx *c, xmlNodePtr en)
{
    static const char *const names[4] = {"from-layer", "from-port", "to-layer", "to-port"};
    int64_t v[4];
    for (int i = 0; i < 4; i++) {
        const char *s = ovxml_attr(en, names[i]);
        if (hsdag_ioutil_parse_i64(s, &v[i]) < 0)
            return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: line %ld: <edge> %s '%.40s' is not an integer",
                                 c->what, ovxml_line(en), names[i], s ? s : "(missing)");
    }
    if (c->n_edges >= (size_t)HSDAG_MAX_EDGES)
        return hsdag_err_set(c->e, HSDAG_ELIMIT, "%s: more than %d edges", c->what, HSDAG_MAX_EDGES);
    int32_t li[2];
    for (int i = 0; i < 2; i++) {
        char key[32];
        int kl = snprintf(key, sizeof key, "%lld", (long long)v[2 * i]);
        li[i] = hsdag_strmap_get(c->ids, key, (size_t)kl);
        if (li[i] < 0)
            return hsdag_err_set(c->e, HSDAG_EDANGLING, "%s: line %ld: <edge> %s=%lld: no such layer",
                                 c->what, ovxml_line(en), names[2 * i], (long long)v[2 * i]);
    }
    int32_t up = ovxml_port_find(c, li[0], 1, v[1]);
    if (up < 0)
        return hsdag_err_set(c->e, HSDAG_EDANGLING,
                             "%s: line %ld: <edge> from layer id=%lld '%.120s': no output port %lld", c->what,
                             ovxml_line(en), (long long)v[0],
                             c->layers[li[0]].name ? c->layers[li[0]].name : "", (long long)v[1]);
    if (ovxml_port_find(c, li[1], 0, v[3]) < 0)
        return hsdag_err_set(c->e, HSDAG_EDANGLING,
                             "%s: line %ld: <edge> to layer id=%lld '%.120s': no input port %lld", c->what,
                             ovxml_line(en), (long long)v[2],
                             c->layers[li[1]].name ? c->layers[li[1]].name : "", (long long)v[3]);
    if (hsdag_grow((void **)&c->edges, &c->cap_edges, c->n_edges + 1, sizeof *c->edges) < 0)
        return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    c->edges[c->n_edges++] = (ovxml_edge){li[0], li[1], up};
    return 0;
}

static int ovxml_edge_cmp(const void *a, const void *b)
{
    const ovxml_edge *x = a, *y = b;
    if (x->u != y->u) return x->u < y->u ? -1 : 1;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    if (x->uport != y->uport) return x->uport < y->uport ? -1 : 1;
    return 0;
}

/* ---- FLOPs of one layer through the shared cost table ---- */
/* Product of a kernel attribute "3,3" (-1 if absent or malformed). */
static double ovxml_kernel_elems(const char *s)
{
    if (!s || !*s) return -1;
    double p = 1.0;
    int k = 0;
    while (*s) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno == ERANGE || v <= 0 || ++k > HSDAG_MAX_RANK) return -1;
        p *= (double)v;
        s = end;
        while (*s == ' ') s++;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return k > 0 ? p : -1;
}

static hsdag_opcost ovxml_layer_cost(const ovxml_ctx *c, const ovxml_layer *l, hsdag_shape_ref *refs)
{
    int n_in = 0, n_out = 0;
    for (int32_t k = l->port_off; k < l->port_end; k++)
        if (!c->ports[c->sorted[k]].is_out) n_in++;
    /* sorted: inputs by id, then outputs by id */
    for (int32_t k = l->port_off; k < l->port_end; k++) {
        const ovxml_port *p = &c->ports[c->sorted[k]];
        refs[k - l->port_off] = (hsdag_shape_ref){p->rank, c->dims ? c->dims + p->dim_off : NULL};
        if (p->is_out) n_out++;
    }
    hsdag_opcost_in in;
    memset(&in, 0, sizeof in);
    in.op = l->type;
    in.n_in = n_in;
    in.in = refs;
    in.n_out = n_out;
    in.out = refs + n_in;
    xmlNodePtr data = ovxml_child(l->node, "data");
    int grouped =
        strcmp(l->type, "GroupConvolution") == 0 || strcmp(l->type, "GroupConvolutionBackpropData") == 0;
    if (grouped && n_in >= 2 && refs[1].rank >= 3 && refs[1].dims[0] > 0) in.group = refs[1].dims[0];
    if (data && strcmp(l->type, "MatMul") == 0) {
        in.trans_a = ovxml_bool(ovxml_attr(data, "transpose_a"));
        in.trans_b = ovxml_bool(ovxml_attr(data, "transpose_b"));
    }
    if (data && strcmp(l->type, "Einsum") == 0) in.equation = ovxml_attr(data, "equation");
    hsdag_opcost oc = hsdag_opcost_estimate(&in);
    /* pooling: the cost table guesses the window from in/out sizes; the IR states the kernel */
    if (data && n_out >= 1 && (strcmp(l->type, "MaxPool") == 0 || strcmp(l->type, "AvgPool") == 0)) {
        double win = ovxml_kernel_elems(ovxml_attr(data, "kernel")), o = 1.0;
        for (int i = 0; i < refs[n_in].rank && o >= 0; i++)
            o = refs[n_in].dims[i] < 0 ? -1.0 : o * (double)refs[n_in].dims[i];
        if (win > 0 && o >= 0) oc.flops = o * win;
    }
    return oc;
}

/* ---- building ---- */
static int ovxml_build(ovxml_ctx *c, xmlNodePtr net, hsdag_graph **out)
{
    int rc = HSDAG_ENOMEM, brc = 0;
    hsdag_gb *b = NULL;
    int32_t *src = NULL, *dst = NULL;
    uint8_t *is_const = NULL, *cv = NULL;
    double *cbytes = NULL, *param = NULL;
    hsdag_shape_ref *refs = NULL;
    int32_t n = (int32_t)c->n_layers, m = 0, max_ports = 0;

    b = hsdag_gb_create();
    src = hsdag_malloc((c->n_edges + 1) * sizeof *src);
    dst = hsdag_malloc((c->n_edges + 1) * sizeof *dst);
    is_const = hsdag_calloc((size_t)n + 1, 1);
    cv = hsdag_calloc((size_t)n + 1, 1);
    cbytes = hsdag_calloc((size_t)n + 1, sizeof *cbytes);
    param = hsdag_calloc((size_t)n + 1, sizeof *param);
    if (!b || !src || !dst || !is_const || !cv || !cbytes || !param) goto oom;

    /* nodes and their output tensors (document order) */
    for (int32_t i = 0; i < n; i++) {
        const ovxml_layer *l = &c->layers[i];
        int32_t v = hsdag_gb_add_node(b, l->name, l->type);
        if (v < 0) {
            brc = v;
            goto builder;
        }
        HSDAG_ASSERT(v == i);
        hsdag_gb_set_file_id(b, v, (int32_t)l->id);
        if (strcmp(l->type, "Parameter") == 0) hsdag_gb_set_flags(b, v, HSDAG_NF_INPUT);
        if (strcmp(l->type, "Result") == 0) hsdag_gb_set_flags(b, v, HSDAG_NF_OUTPUT);
        is_const[i] = strcmp(l->type, "Const") == 0 || strcmp(l->type, "Constant") == 0;
        if (l->port_end - l->port_off > max_ports) max_ports = l->port_end - l->port_off;
        for (int32_t k = l->port_off; k < l->port_end; k++) {
            const ovxml_port *p = &c->ports[k]; /* document order */
            if (!p->is_out) continue;
            brc = hsdag_gb_add_output(b, v, (hsdag_dtype)p->dtype, p->rank,
                                      c->dims ? c->dims + p->dim_off : NULL);
            if (brc < 0) goto builder;
            cbytes[i] += p->bytes;
        }
    }

    /* edges: one builder edge per distinct (from-layer, from-port, to-layer) */
    if (c->n_edges > 1) qsort(c->edges, c->n_edges, sizeof *c->edges, ovxml_edge_cmp);
    for (size_t k = 0; k < c->n_edges; k++) {
        const ovxml_edge *ed = &c->edges[k];
        if (k > 0 && ovxml_edge_cmp(ed, &c->edges[k - 1]) == 0) continue;
        brc = hsdag_gb_add_edge(b, ed->u, ed->v, c->ports[ed->uport].bytes);
        if (brc < 0) goto builder;
        src[m] = ed->u;
        dst[m] = ed->v;
        m++;
    }

    /* parameter bytes and FLOPs */
    if (hsdag_constw_attribute(n, m, src, dst, is_const, cbytes, cv, param) < 0) goto oom;
    refs = hsdag_malloc(((size_t)max_ports + 1) * sizeof *refs);
    if (!refs) goto oom;
    for (int32_t i = 0; i < n; i++) {
        hsdag_gb_set_param_bytes(b, i, param[i]);
        hsdag_opcost oc = ovxml_layer_cost(c, &c->layers[i], refs);
        hsdag_gb_set_opclass(b, i, oc.opclass);
        hsdag_gb_set_flops(b, i, cv[i] ? 0.0 : oc.flops);
    }

    hsdag_graph_meta meta;
    hsdag_ioutil_meta_init(&meta, HSDAG_FMT_OVXML);
    meta.file_nodes = (int64_t)c->n_layers;
    meta.file_edges = (int64_t)c->n_edges;
    int64_t ver = -1;
    if (hsdag_ioutil_parse_i64(ovxml_attr(net, "version"), &ver) < 0) ver = -1;
    meta.ir_version = (int32_t)ver;
    const char *nm = ovxml_attr(net, "name");
    meta.name = nm ? nm : "";
    hsdag_gb_set_meta(b, &meta);

    rc = hsdag_gb_finish(b, out, c->e);
    if (rc < 0) hsdag_err_prefix(c->e, c->what);
    goto done;
oom:
    brc = HSDAG_ENOMEM;
builder:
    rc = hsdag_ioutil_builder_fail(c->e, c->what, brc);
done:
    hsdag_gb_free(b);
    hsdag_free(src);
    hsdag_free(dst);
    hsdag_free(is_const);
    hsdag_free(cv);
    hsdag_free(cbytes);
    hsdag_free(param);
    hsdag_free(refs);
    return rc;
}

/* Walks <net>: <layers>, then <edges>; everything else (meta_data, rt_info, statistics) is skipped. */
static int ovxml_net_read(ovxml_ctx *c, xmlNodePtr net, hsdag_graph **out)
{
    int rc;
    if (!net || !ovxml_is(net, "net"))
        return hsdag_err_set(c->e, HSDAG_EFORMAT,
                             "%s: root element is <%.40s>, not <net> (not an OpenVINO IR)", c->what,
                             net ? (const char *)net->name : "none");
    int64_t ver;
    const char *vs = ovxml_attr(net, "version");
    if (hsdag_ioutil_parse_i64(vs, &ver) < 0)
        return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: <net> version '%.40s' is not an integer", c->what,
                             vs ? vs : "(missing)");
    if (ver < 10 || ver > 11)
        return hsdag_err_set(c->e, HSDAG_EUNSUPPORTED,
                             "%s: IR version %lld is not supported (only 10 and 11)", c->what,
                             (long long)ver);
    xmlNodePtr layers = ovxml_child(net, "layers"), edges = ovxml_child(net, "edges");
    if (!layers) return hsdag_err_set(c->e, HSDAG_EPARSE, "%s: <net> has no <layers>", c->what);
    for (xmlNodePtr ln = layers->children; ln; ln = ln->next) {
        if (!ovxml_is(ln, "layer")) continue;
        if ((rc = ovxml_layer_read(c, ln)) < 0) return rc;
    }
    /* per-layer port index, sorted by (is_out, id); duplicate port ids are an error */
    c->sorted = hsdag_malloc((c->n_ports + 1) * sizeof *c->sorted);
    int32_t *tmp = hsdag_malloc((c->n_ports + 1) * sizeof *tmp);
    if (!c->sorted || !tmp) {
        hsdag_free(tmp);
        return hsdag_err_set(c->e, HSDAG_ENOMEM, "%s: out of memory", c->what);
    }
    for (size_t k = 0; k < c->n_ports; k++) c->sorted[k] = (int32_t)k;
    for (size_t i = 0; i < c->n_layers; i++) {
        ovxml_layer *l = &c->layers[i];
        ovxml_ports_sort(c->sorted + l->port_off, l->port_end - l->port_off, c->ports, tmp);
        for (int32_t k = l->port_off + 1; k < l->port_end; k++)
            if (ovxml_port_cmp(&c->sorted[k - 1], &c->sorted[k], c->ports) == 0) {
                char buf[64];
                snprintf(buf, sizeof buf, "%lld", (long long)c->ports[c->sorted[k]].id);
                hsdag_free(tmp);
                return ovxml_fail_layer(c, l, HSDAG_EPARSE, "duplicate port id ", buf);
            }
    }
    hsdag_free(tmp);
    if (edges)
        for (xmlNodePtr en = edges->children; en; en = en->next) {
            if (!ovxml_is(en, "edge")) continue;
            if ((rc = ovxml_edge_read(c, en)) < 0) return rc;
        }
    return ovxml_build(c, net, out);
}

/* ---- the pre-scan: what libxml2 would take quadratic time on, refused before it parses ----
 * libxml2 checks an element's attributes for duplicates pairwise: one element with 100,000 attributes
 * (1 MB) took 16 s. OpenVINO elements have a handful; more than OVXML_MAX_ATTRS is refused. The scan
 * reads bytes, so the text must be in an ASCII-compatible encoding: a NUL byte (UTF-16, UCS-4) is
 * refused too (OpenVINO writes UTF-8). */
#define OVXML_MAX_ATTRS 256

static size_t ovxml_skip_to(const char *s, size_t n, size_t i, const char *end)
{
    size_t k = strlen(end);
    for (; i + k <= n; i++)
        if (memcmp(s + i, end, k) == 0) return i + k;
    return n;
}

static int ovxml_prescan(const char *s, size_t n, const char *what, hsdag_err *e)
{
    const char *nul = memchr(s, 0, n);
    if (nul)
        return hsdag_err_set(
            e, HSDAG_EPARSE,
            "%s: NUL byte at offset %zu (OpenVINO IR is UTF-8 text; UTF-16 and UCS-4 are not read)", what,
            (size_t)(nul - s));
    size_t line = 1, i = 0;
    while (i < n) {
        if (s[i] == '\n') line++;
        if (s[i] != '<') {
            i++;
            continue;
        }
        size_t j;
        if (i + 9 <= n && strncasecmp(s + i, "<!DOCTYPE", 9) == 0) /* before libxml2 reads any of it */
            return hsdag_err_set(
                e, HSDAG_EUNSUPPORTED,
                "%s: line %zu: document has a DOCTYPE; DTDs and entity declarations are refused "
                "(entity expansion and external entities are disabled)",
                what, line);
        if (i + 4 <= n && memcmp(s + i, "<!--", 4) == 0)
            j = ovxml_skip_to(s, n, i + 4, "-->");
        else if (i + 9 <= n && memcmp(s + i, "<![CDATA[", 9) == 0)
            j = ovxml_skip_to(s, n, i + 9, "]]>");
        else if (i + 2 <= n && s[i + 1] == '?')
            j = ovxml_skip_to(s, n, i + 2, "?>");
        else { /* a tag: attributes are the '=' outside quoted values */
            long attrs = 0;
            char q = 0;
            for (j = i + 1; j < n; j++) {
                if (q) {
                    if (s[j] == q) q = 0;
                } else if (s[j] == '"' || s[j] == '\'') {
                    q = s[j];
                } else if (s[j] == '=') {
                    attrs++;
                } else if (s[j] == '>') {
                    j++;
                    break;
                }
            }
            if (attrs > OVXML_MAX_ATTRS)
                return hsdag_err_set(e, HSDAG_ELIMIT,
                                     "%s: line %zu: an element with %ld attributes (limit %d)", what, line,
                                     attrs, OVXML_MAX_ATTRS);
        }
        for (size_t k = i; k < j && k < n; k++) line += s[k] == '\n';
        i = j > i ? j : i + 1;
    }
    return 0;
}

/* libxml2 reports some failures (encoding conversion, I/O) through its process-wide handlers, not the
 * context's: they are routed to the context's handler for the duration of a read (both are per thread
 * in libxml2), so nothing is printed and the first error becomes the message. */
static void ovxml_xml_generic_silent(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

int hsdag_ovxml_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    int rc;
    ovxml_ctx c;
    ovxml_xmlstate st;
    xmlParserCtxtPtr px = NULL;
    xmlDocPtr doc = NULL;
    memset(&c, 0, sizeof c);
    memset(&st, 0, sizeof st);
    c.what = what ? what : "<buffer>";
    c.e = e;
    if (out) *out = NULL;
    if (!buf || !out) return hsdag_err_set(e, HSDAG_EINVAL, "%s: no buffer or output", c.what);
    if (len > HSDAG_OVXML_MAX_BYTES || len > (size_t)INT_MAX)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu bytes is above the OpenVINO IR limit of %zu", c.what,
                             len, HSDAG_OVXML_MAX_BYTES);
    if (len == 0) return hsdag_err_set(e, HSDAG_EPARSE, "%s: empty file", c.what);
    if ((rc = ovxml_prescan(buf, len, c.what, e)) < 0) return rc;

    px = xmlNewParserCtxt();
    c.ids = hsdag_strmap_create();
    if (!px || !c.ids) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", c.what);
        goto done;
    }
    px->_private = &st;
    px->sax->serror = ovxml_xml_on_error;
    px->sax->error = NULL;
    px->sax->warning = NULL;
    px->sax->internalSubset = ovxml_xml_on_doctype;
    px->vctxt.error = NULL;
    px->vctxt.warning = NULL;
    xmlGenericErrorFunc old_generic = xmlGenericError;
    void *old_generic_ctx = xmlGenericErrorContext;
    xmlStructuredErrorFunc old_structured = xmlStructuredError;
    void *old_structured_ctx = xmlStructuredErrorContext;
    xmlSetGenericErrorFunc(NULL, ovxml_xml_generic_silent);
    xmlSetStructuredErrorFunc(px, ovxml_xml_on_error);
    doc = xmlCtxtReadMemory(px, buf, (int)len, NULL, NULL,
                            XML_PARSE_NONET | XML_PARSE_BIG_LINES | XML_PARSE_NOBLANKS);
    xmlSetStructuredErrorFunc(old_structured_ctx, old_structured);
    xmlSetGenericErrorFunc(old_generic_ctx, old_generic);
    if (st.has_dtd || (doc && (doc->intSubset || doc->extSubset))) {
        rc = hsdag_err_set(e, HSDAG_EUNSUPPORTED,
                           "%s: line %d: document has a DOCTYPE; DTDs and entity declarations are refused "
                           "(entity expansion and external entities are disabled)",
                           c.what, st.line);
        goto done;
    }
    if (!doc || st.have_error || !px->wellFormed) {
        char at[32] = "";
        if (st.have_error && st.line > 0) snprintf(at, sizeof at, "line %d: ", st.line);
        rc = hsdag_err_set(e, HSDAG_EPARSE, "%s: %sXML error: %s", c.what, at,
                           st.have_error ? st.msg : "not well-formed");
        goto done;
    }
    rc = ovxml_net_read(&c, xmlDocGetRootElement(doc), out);
done:
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(px);
    hsdag_strmap_free(c.ids);
    hsdag_free(c.layers);
    hsdag_free(c.ports);
    hsdag_free(c.sorted);
    hsdag_free(c.dims);
    hsdag_free(c.edges);
    return rc;
}
