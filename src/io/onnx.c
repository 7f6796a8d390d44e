/* onnx.c - ONNX ModelProto importer: protobuf-c (code generated at build time from Debian's onnx.proto) into
 * the graph IR.
 * Not here: shape inference (onnx_infer.c), weight values (only small int64/int32 tensors are read, for shape
 * arithmetic), subgraph bodies (If/Loop/Scan stay one opaque node), non-default-domain op semantics, writing
 * ONNX.
 * Entry points: hsdag_onnx_read.
 *
 * Mapping (every rule below is tested on the bundled exports in tests/test_onnx.c):
 *  - nodes: every graph.node entry in file order, Constant and Identity included (meta.file_nodes =
 * len(graph.node)).
 *    Graph inputs, initializers and graph outputs are tensors, not nodes.
 *  - edges: one per distinct (producer node, consumer node) pair linked by at least one tensor; its bytes are
 * the
 *    sum over the distinct tensors linking the pair (a tensor consumed twice by one node counts once).
 * Tensors of
 *    unknown shape carry 0 bytes. meta.file_edges = number of such pairs.
 *  - control flow: an If/Loop/Scan node stays one opaque node; names its body subgraphs read from the outer
 *    graph become edges into it (ONNX names are SSA across scopes, so a body never shadows an outer name).
 *  - shapes and dtypes: initializer dims, then graph inputs, then value_info and graph outputs (first wins);
 *    Constant outputs from the value attribute (authoritative); then onnx_infer.c fills in what the file
 * leaves
 *    unknown (torch exports lose shapes after the first Reshape fed by computed shapes; onnx-light files have
 * no
 *    value_info at all). Symbolic or missing dims are -1. Each node output keeps its dtype and shape in the
 * IR.
 *  - weights: every initializer, and every graph input that is not an initializer and not a data input. A
 * graph
 *    input is a data input when its dtype is integer/bool, its shape is not fully static, or some node reads
 * it in
 *    an activation slot (slot 0 of a conv, matmul/gemm, pooling, norm, softmax or reduction op, slot 1 =
 * indices of
 *    Gather*); if that marks none, the first such graph input is the data input. This keeps torch exports
 * with
 *    export_params=False right: their weights reach Conv/Gemm weight slots, Gather tables, or go through
 *    Transpose/Add/Mul/Expand/Identity, while "input" feeds a Conv and BERT's "input_ids" are int64 Gather
 * indices.
 *  - parameter bytes of a node = bytes of the distinct weight tensors it reads. A weight read by several
 * nodes is
 *    charged to each of them (each device that runs a reader must hold it), so summed node parameter bytes
 * count a
 *    shared weight once per reader. Constant node values are activations (out_bytes), not parameters.
 *  - FLOPs: hsdag_opcost_estimate with the input shapes in ONNX input order, output shapes, group,
 * transA/transB
 *    and the Einsum equation; pooling with a kernel_shape attribute uses out_elems * prod(kernel_shape).
 *  - folded: a node computed from constants only (initializers that cannot be fed, weights of weight-free
 *    exports, outputs of folded nodes; Shape/Size of a static shape) gets HSDAG_NF_FOLDED | HSDAG_NF_BOOKKEEPING:
 *    runtimes evaluate it once at load, so it costs nothing at inference.
 *  - unknown ops (custom domains, control flow, ops outside the cost table) get 0 FLOPs and
 * HSDAG_NF_UNKNOWN_OP;
 *    their edges still carry bytes when the shapes are known.
 *  - limits: protobuf-c allocation goes through hsdag_malloc with a budget tied to the file size; message
 * nesting is
 *    checked on the wire before decoding (protobuf-c recurses without a limit); ranks above HSDAG_MAX_RANK
 * and
 *    tensors above HSDAG_MAX_ELEMS elements are rejected (HSDAG_ELIMIT); nothing is allocated per tensor
 * element. */
#include <math.h>
#include <string.h>

#include "hsdag/graph.h"
#include "hsdag/io.h"
#include "onnx_internal.h"

#define ONNX_MAX_DEPTH 64 /* protobuf message nesting accepted before decoding */

/* ---- protobuf-c allocator: a bump arena over hsdag_malloc'd chunks, with a byte budget ----
 * Decoding makes one allocation per string and message; bumping and dropping the chunks at the end (instead
 * of
 * malloc/free per object and protobuf-c's free walk) halves the decode cost. Under ASan every allocation is
 * unpoisoned separately between poisoned red zones, so overruns still trap. */
#if defined(__SANITIZE_ADDRESS__)
#define ONNX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ONNX_ASAN 1
#endif
#endif
#ifdef ONNX_ASAN
#include <sanitizer/asan_interface.h>
#define ONNX_REDZONE 16
#else
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ONNX_REDZONE 0
#endif

typedef struct onnx_chunk {
    struct onnx_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
} onnx_chunk;

typedef struct onnx_pool {
    onnx_chunk *head;
    size_t next_size; /* size of the next chunk (doubles up to 4 MiB) */
    size_t used, cap; /* bytes handed out, budget */
    int over;         /* set once the budget refused a request */
    int oom;          /* set once hsdag_malloc failed */
} onnx_pool;

static void *onnx_pool_alloc(void *ud, size_t n)
{
    onnx_pool *p = ud;
    size_t need = ((n + 15) & ~(size_t)15) + ONNX_REDZONE;
    if (n > p->cap || need > p->cap - p->used) {
        p->over = 1;
        return NULL;
    }
    onnx_chunk *c = p->head;
    if (!c || c->size - c->used < need) {
        size_t size = p->next_size > need ? p->next_size : need;
        c = hsdag_malloc(sizeof *c + size);
        if (!c) {
            p->oom = 1;
            return NULL;
        }
        c->size = size;
        c->used = 0;
        c->next = p->head;
        p->head = c;
        ASAN_POISON_MEMORY_REGION(c->data, size);
        if (p->next_size < ((size_t)4 << 20)) p->next_size *= 2;
    }
    unsigned char *q = c->data + c->used;
    c->used += need;
    p->used += need;
    ASAN_UNPOISON_MEMORY_REGION(q, n);
    return q;
}

static void onnx_pool_free(void *ud, void *ptr)
{
    (void)ud;
    (void)ptr; /* released with the whole pool */
}

static void onnx_pool_release(onnx_pool *p)
{
    while (p->head) {
        onnx_chunk *c = p->head;
        p->head = c->next;
        ASAN_UNPOISON_MEMORY_REGION(c->data, c->size);
        hsdag_free(c);
    }
}

/* ---- wire pre-scan: nesting depth of message fields, guided by the generated descriptors ---- */
static int onnx_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *v)
{
    uint64_t x = 0;
    for (int s = 0; s < 64 && *i < len; s += 7) {
        uint8_t c = p[(*i)++];
        x |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* Returns the deepest message nesting found (stops counting past ONNX_MAX_DEPTH). Malformed wire data ends
 * the scan of that message only: protobuf-c rejects it before recursing into it. */
static int onnx_wire_depth(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d, int depth)
{
    int best = depth;
    size_t i = 0;
    while (i < len && best <= ONNX_MAX_DEPTH) {
        uint64_t key, v;
        if (!onnx_varint(p, len, &i, &key)) break;
        switch (key & 7) {
        case 0:
            if (!onnx_varint(p, len, &i, &v)) return best;
            break;
        case 1:
            if (len - i < 8) return best;
            i += 8;
            break;
        case 5:
            if (len - i < 4) return best;
            i += 4;
            break;
        case 2: {
            if (!onnx_varint(p, len, &i, &v) || v > len - i) return best;
            uint64_t tag = key >> 3;
            const ProtobufCFieldDescriptor *f =
                tag <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)tag) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                int dd = onnx_wire_depth(p + i, (size_t)v, f->descriptor, depth + 1);
                if (dd > best) best = dd;
            }
            i += (size_t)v;
            break;
        }
        default:
            return best;
        }
    }
    return best;
}

/* ---- tensors by name ---- */
static const char *onnx_str(const char *s)
{
    return s ? s : "";
}

hsdag_dtype onnx_dtype(int32_t t)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        return HSDAG_DT_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
        return HSDAG_DT_U8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
        return HSDAG_DT_I8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
        return HSDAG_DT_U16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
        return HSDAG_DT_I16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
        return HSDAG_DT_I32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        return HSDAG_DT_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
        return HSDAG_DT_BOOL;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
        return HSDAG_DT_F16;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        return HSDAG_DT_F64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
        return HSDAG_DT_U32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
        return HSDAG_DT_U64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16:
        return HSDAG_DT_BF16;
    case 21:
        return HSDAG_DT_U4; /* UINT4 (onnx >= 1.16) */
    case 22:
        return HSDAG_DT_I4; /* INT4 */
    default:
        return HSDAG_DT_UNKNOWN; /* string, complex, float8 */
    }
}

static int onnx_dtype_is_int(hsdag_dtype t)
{
    return t == HSDAG_DT_I8 || t == HSDAG_DT_U8 || t == HSDAG_DT_I16 || t == HSDAG_DT_U16 ||
           t == HSDAG_DT_I32 || t == HSDAG_DT_U32 || t == HSDAG_DT_I64 || t == HSDAG_DT_U64 ||
           t == HSDAG_DT_BOOL || t == HSDAG_DT_I4 || t == HSDAG_DT_U4 || t == HSDAG_DT_U1;
}

int32_t onnx_tensor_find(const onnx_reader *r, const char *name)
{
    if (!name || !*name) return -1;
    return hsdag_strmap_get(r->map, name, strlen(name));
}

/* Finds or creates the tensor `name`; returns its index or a negative status. */
static int32_t onnx_tensor_get(onnx_reader *r, const char *name)
{
    size_t len = strlen(name);
    int32_t id = hsdag_strmap_get(r->map, name, len);
    if (id >= 0) return id;
    if (r->nt >= (size_t)INT32_MAX - 1)
        return hsdag_err_set(r->e, HSDAG_ELIMIT, "%s: too many tensors", r->what);
    if (hsdag_grow((void **)&r->t, &r->cap_t, r->nt + 1, sizeof *r->t) < 0 ||
        hsdag_strmap_put(r->map, name, len, (int32_t)r->nt) < 0)
        return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    onnx_tensor *t = &r->t[r->nt];
    memset(t, 0, sizeof *t);
    t->producer = -1;
    t->stamp = -1;
    t->nval = -1;
    t->rank = -1;
    t->bytes = -1;
    return (int32_t)r->nt++;
}

/* Sets the shape of tensor id (dims may hold -1 for unknown). Checks rank and element limits. */
int onnx_tensor_shape(onnx_reader *r, int32_t id, const char *name, hsdag_dtype dt, int64_t rank,
                      const int64_t *dims)
{
    onnx_tensor *t = &r->t[id];
    t->flags |= ONNX_T_SHAPED;
    t->dtype = (uint8_t)dt;
    if (rank < 0) return 0;
    if (rank > HSDAG_MAX_RANK)
        return hsdag_err_set(r->e, HSDAG_ELIMIT, "%s: tensor '%.200s': rank %lld exceeds the limit of %d",
                             r->what, name, (long long)rank, HSDAG_MAX_RANK);
    if (hsdag_grow((void **)&r->dims, &r->cap_d, r->nd + (size_t)rank + 1, sizeof *r->dims) < 0)
        return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    double known = 1;
    int all = 1;
    t->dim_off = (int32_t)r->nd;
    t->rank = (int8_t)rank;
    for (int64_t i = 0; i < rank; i++) {
        int64_t d = dims[i] < 0 ? -1 : dims[i];
        r->dims[r->nd++] = d;
        if (d < 0)
            all = 0;
        else
            known *= (double)d;
    }
    if (known > HSDAG_MAX_ELEMS)
        return hsdag_err_set(r->e, HSDAG_ELIMIT, "%s: tensor '%.200s': shape has %.3g elements (limit %.0e)",
                             r->what, name, known, (double)HSDAG_MAX_ELEMS);
    t->bytes = all ? known * hsdag_dtype_bytes(dt) : -1;
    return 0;
}

/* Shape from a TypeProto (tensor or sparse tensor); other types keep an unknown shape. */
static int onnx_tensor_type(onnx_reader *r, int32_t id, const char *name, const Onnx__TypeProto *tp)
{
    const Onnx__TensorShapeProto *sh = NULL;
    int32_t et = 0;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type) {
        et = tp->tensor_type->elem_type;
        sh = tp->tensor_type->shape;
    } else if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE && tp->sparse_tensor_type) {
        et = tp->sparse_tensor_type->elem_type;
        sh = tp->sparse_tensor_type->shape;
    }
    if (!sh) return onnx_tensor_shape(r, id, name, onnx_dtype(et), -1, NULL);
    if (sh->n_dim > HSDAG_MAX_RANK)
        return hsdag_err_set(r->e, HSDAG_ELIMIT, "%s: tensor '%.200s': rank %zu exceeds the limit of %d",
                             r->what, name, sh->n_dim, HSDAG_MAX_RANK);
    int64_t dims[HSDAG_MAX_RANK];
    for (size_t i = 0; i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
        dims[i] =
            (d && d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) ? d->dim_value : -1;
    }
    return onnx_tensor_shape(r, id, name, onnx_dtype(et), (int64_t)sh->n_dim, dims);
}

static int onnx_tensorproto_shape(onnx_reader *r, int32_t id, const char *name, const Onnx__TensorProto *tp)
{
    if (tp->n_dims > HSDAG_MAX_RANK)
        return hsdag_err_set(r->e, HSDAG_ELIMIT, "%s: tensor '%.200s': rank %zu exceeds the limit of %d",
                             r->what, name, tp->n_dims, HSDAG_MAX_RANK);
    return onnx_tensor_shape(r, id, name, onnx_dtype(tp->data_type), (int64_t)tp->n_dims, tp->dims);
}

int onnx_tensor_values(onnx_reader *r, int32_t id, const int64_t *v, int n)
{
    HSDAG_ASSERT(n >= 0 && n <= ONNX_MAX_VALUES);
    if (hsdag_grow((void **)&r->vals, &r->cap_v, r->nv + (size_t)n + 1, sizeof *r->vals) < 0)
        return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    r->t[id].val_off = (int32_t)r->nv;
    r->t[id].nval = (int16_t)n;
    for (int i = 0; i < n; i++) r->vals[r->nv++] = v[i];
    return 0;
}

int onnx_tensorproto_ints(const Onnx__TensorProto *tp, int64_t *v, int max)
{
    size_t n = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || tp->dims[i] > max) return -1;
        n *= (size_t)tp->dims[i];
        if (n > (size_t)max) return -1;
    }
    int w = tp->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64   ? 8
            : tp->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4
                                                                    : 0;
    if (!w) return -1;
    if (w == 8 && tp->n_int64_data == n) {
        for (size_t i = 0; i < n; i++) v[i] = tp->int64_data[i];
    } else if (w == 4 && tp->n_int32_data == n) {
        for (size_t i = 0; i < n; i++) v[i] = tp->int32_data[i];
    } else if (tp->has_raw_data && tp->raw_data.len == n * (size_t)w) {
        for (size_t i = 0; i < n; i++) { /* little-endian on the wire */
            uint64_t x = 0;
            for (int b = w - 1; b >= 0; b--) x = (x << 8) | tp->raw_data.data[i * (size_t)w + (size_t)b];
            v[i] = w == 8 ? (int64_t)x : (int64_t)(int32_t)(uint32_t)x;
        }
    } else {
        return -1;
    }
    return (int)n;
}

/* Tracks the values of a small int64/int32 tensor (shape arithmetic); anything else is left untracked. */
static int onnx_tensorproto_values(onnx_reader *r, int32_t id, const Onnx__TensorProto *tp)
{
    int64_t v[ONNX_MAX_VALUES];
    int n = onnx_tensorproto_ints(tp, v, ONNX_MAX_VALUES);
    return n < 0 ? 0 : onnx_tensor_values(r, id, v, n);
}

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_attribute; i++)
        if (nd->attribute[i] && nd->attribute[i]->name && strcmp(nd->attribute[i]->name, name) == 0)
            return nd->attribute[i];
    return NULL;
}

int64_t onnx_attr_int(const Onnx__NodeProto *nd, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = onnx_attr(nd, name);
    return (a && a->has_i) ? a->i : dflt;
}

static const char *onnx_node_label(const Onnx__NodeProto *nd)
{
    return (nd->name && *nd->name) ? nd->name : onnx_str(nd->op_type);
}

/* Output shape of a Constant node from its value attribute. */
static int onnx_constant_shape(onnx_reader *r, int32_t id, const char *name, const Onnx__NodeProto *nd)
{
    for (size_t i = 0; i < nd->n_attribute; i++) {
        const Onnx__AttributeProto *a = nd->attribute[i];
        if (!a || !a->name) continue;
        int64_t n;
        if (strcmp(a->name, "value") == 0 && a->t) {
            int rc = onnx_tensorproto_shape(r, id, name, a->t);
            return rc < 0 ? rc : onnx_tensorproto_values(r, id, a->t);
        }
        if (strcmp(a->name, "sparse_value") == 0 && a->sparse_tensor) {
            const Onnx__SparseTensorProto *sp = a->sparse_tensor;
            if (sp->n_dims > HSDAG_MAX_RANK)
                return hsdag_err_set(r->e, HSDAG_ELIMIT,
                                     "%s: tensor '%.200s': rank %zu exceeds the limit of %d", r->what, name,
                                     sp->n_dims, HSDAG_MAX_RANK);
            return onnx_tensor_shape(r, id, name,
                                     sp->values ? onnx_dtype(sp->values->data_type) : HSDAG_DT_UNKNOWN,
                                     (int64_t)sp->n_dims, sp->dims);
        }
        if (strcmp(a->name, "value_float") == 0) return onnx_tensor_shape(r, id, name, HSDAG_DT_F32, 0, NULL);
        if (strcmp(a->name, "value_int") == 0) {
            int rc = onnx_tensor_shape(r, id, name, HSDAG_DT_I64, 0, NULL);
            return rc < 0 || !a->has_i ? rc : onnx_tensor_values(r, id, &a->i, 1);
        }
        if (strcmp(a->name, "value_string") == 0)
            return onnx_tensor_shape(r, id, name, HSDAG_DT_UNKNOWN, 0, NULL);
        if (strcmp(a->name, "value_floats") == 0) {
            n = (int64_t)a->n_floats;
            return onnx_tensor_shape(r, id, name, HSDAG_DT_F32, 1, &n);
        }
        if (strcmp(a->name, "value_ints") == 0) {
            n = (int64_t)a->n_ints;
            int rc = onnx_tensor_shape(r, id, name, HSDAG_DT_I64, 1, &n);
            return rc < 0 || n > ONNX_MAX_VALUES ? rc : onnx_tensor_values(r, id, a->ints, (int)n);
        }
        if (strcmp(a->name, "value_strings") == 0) {
            n = (int64_t)a->n_strings;
            return onnx_tensor_shape(r, id, name, HSDAG_DT_UNKNOWN, 1, &n);
        }
    }
    return 0;
}

/* ---- pass 1: tensors, producers, shapes ---- */
static int onnx_collect(onnx_reader *r, const Onnx__GraphProto *g)
{
    int rc;
    int32_t id;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *tp = g->initializer[i];
        if (!tp || !tp->name || !*tp->name) continue;
        if ((id = onnx_tensor_get(r, tp->name)) < 0) return id;
        r->t[id].flags |= ONNX_T_INIT;
        if (r->t[id].flags & ONNX_T_SHAPED) continue; /* repeated initializer name: first wins */
        if ((rc = onnx_tensorproto_shape(r, id, tp->name, tp)) < 0 ||
            (rc = onnx_tensorproto_values(r, id, tp)) < 0)
            return rc;
    }
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (!vi || !vi->name || !*vi->name) continue;
        if ((id = onnx_tensor_get(r, vi->name)) < 0) return id;
        r->t[id].flags |= ONNX_T_INPUT;
        if (!(r->t[id].flags & ONNX_T_SHAPED) && (rc = onnx_tensor_type(r, id, vi->name, vi->type)) < 0)
            return rc;
    }
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        for (size_t k = 0; k < nd->n_output; k++) {
            const char *nm = nd->output[k];
            if (!nm || !*nm) continue; /* optional output left out */
            if ((id = onnx_tensor_get(r, nm)) < 0) return id;
            onnx_tensor *t = &r->t[id];
            if (t->producer >= 0)
                return hsdag_err_set(r->e, HSDAG_EPARSE,
                                     "%s: node '%.200s': tensor '%.200s' is also produced by node #%d",
                                     r->what, onnx_node_label(nd), nm, (int)t->producer);
            if (t->flags & (ONNX_T_INIT | ONNX_T_INPUT))
                return hsdag_err_set(
                    r->e, HSDAG_EPARSE,
                    "%s: node '%.200s': output '%.200s' redefines a graph input or initializer", r->what,
                    onnx_node_label(nd), nm);
            t->producer = (int32_t)v;
        }
    }
    const Onnx__ValueInfoProto *const *lists[2] = {(const Onnx__ValueInfoProto *const *)g->value_info,
                                                   (const Onnx__ValueInfoProto *const *)g->output};
    size_t counts[2] = {g->n_value_info, g->n_output};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            const Onnx__ValueInfoProto *vi = lists[l][i];
            if (!vi || (id = onnx_tensor_find(r, vi->name)) < 0 || (r->t[id].flags & ONNX_T_SHAPED)) continue;
            if ((rc = onnx_tensor_type(r, id, vi->name, vi->type)) < 0) return rc;
        }
    /* Constant values (authoritative) */
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        if (strcmp(nd->op_type, "Constant") != 0 || nd->n_output < 1 ||
            (id = onnx_tensor_find(r, nd->output[0])) < 0)
            continue;
        if ((rc = onnx_constant_shape(r, id, nd->output[0], nd)) < 0) return rc;
    }
    return 0;
}

/* Resolves every node input and output name to a tensor id once. */
static int onnx_resolve(onnx_reader *r, const Onnx__GraphProto *g)
{
    size_t total = 0;
    r->io_off = hsdag_malloc((g->n_node + 1) * sizeof *r->io_off);
    if (!r->io_off) return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    for (size_t v = 0; v < g->n_node; v++) {
        r->io_off[v] = total;
        total += g->node[v]->n_input + g->node[v]->n_output;
    }
    r->io_off[g->n_node] = total;
    r->io_ids = hsdag_malloc((total ? total : 1) * sizeof *r->io_ids);
    if (!r->io_ids) return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        int32_t *ids = r->io_ids + r->io_off[v];
        for (size_t k = 0; k < nd->n_input; k++) ids[k] = onnx_tensor_find(r, nd->input[k]);
        for (size_t k = 0; k < nd->n_output; k++) ids[nd->n_input + k] = onnx_tensor_find(r, nd->output[k]);
    }
    return 0;
}

/* ---- pass 2: which graph inputs are weights ---- */
static int onnx_is_activation_slot(const char *op, size_t k)
{
    if (k == 1 && strncmp(op, "Gather", 6) == 0) return 1; /* indices */
    if (k != 0) return 0;
    switch (hsdag_opclass_of(op)) {
    case HSDAG_OP_CONV:
    case HSDAG_OP_POOL:
    case HSDAG_OP_NORM:
    case HSDAG_OP_SOFTMAX:
    case HSDAG_OP_REDUCE:
        return 1;
    case HSDAG_OP_MATMUL:
        return strcmp(op, "Einsum") != 0;
    default:
        return 0;
    }
}

static void onnx_mark_weights(onnx_reader *r, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < r->nt; i++) {
        onnx_tensor *t = &r->t[i];
        if ((t->flags & (ONNX_T_INPUT | ONNX_T_INIT)) != ONNX_T_INPUT) continue;
        if (onnx_dtype_is_int((hsdag_dtype)t->dtype) || t->bytes < 0) t->flags |= ONNX_T_DATA;
    }
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        for (size_t k = 0; k < nd->n_input; k++) {
            int32_t id = onnx_io(r, v, nd, k, 0);
            if (id >= 0 && onnx_is_activation_slot(nd->op_type, k)) r->t[id].flags |= ONNX_T_DATA;
        }
    }
    int32_t first = -1, any_data = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        int32_t id = g->input[i] ? onnx_tensor_find(r, g->input[i]->name) : -1;
        if (id < 0 || (r->t[id].flags & ONNX_T_INIT)) continue;
        if (first < 0) first = id;
        if (r->t[id].flags & ONNX_T_DATA) any_data = 1;
    }
    if (!any_data && first >= 0) r->t[first].flags |= ONNX_T_DATA;
    for (size_t i = 0; i < r->nt; i++) {
        onnx_tensor *t = &r->t[i];
        if ((t->flags & ONNX_T_INIT) || ((t->flags & ONNX_T_INPUT) && !(t->flags & ONNX_T_DATA)))
            t->flags |= ONNX_T_WEIGHT;
    }
}

/* ---- pass 2b: nodes a runtime constant-folds at load (HSDAG_NF_FOLDED) ----
 * A default-domain, deterministic, non-control-flow node whose every input is a constant, or Shape/Size of a tensor
 * of static shape. Constants: initializers that are not also graph inputs (from IR version 4 on those may be fed),
 * the weights of weight-free exports (graph inputs only because their values were left out: deployed, they are
 * initializers, and e.g. the Transpose of a MatMul weight is folded), and outputs of folded nodes. */
static int onnx_foldable_op(const Onnx__NodeProto *nd)
{
    static const char *const never[] = {"If",
                                        "Loop",
                                        "Scan",
                                        "RandomNormal",
                                        "RandomNormalLike",
                                        "RandomUniform",
                                        "RandomUniformLike",
                                        "Multinomial",
                                        "Bernoulli",
                                        "SequenceConstruct"};
    if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx") != 0) return 0;
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (strcmp(nd->op_type, never[i]) == 0) return 0;
    return 1;
}

static void onnx_mark_folded(onnx_reader *r, const Onnx__GraphProto *g, int64_t ir_version, uint8_t *folded)
{
    /* before IR version 4 every initializer had to be listed as an input and could not be fed (ORT's rule) */
    for (size_t i = 0; i < r->nt; i++)
        if (((r->t[i].flags & ONNX_T_INIT) && (!(r->t[i].flags & ONNX_T_INPUT) || ir_version < 4)) ||
            (r->t[i].flags & (ONNX_T_INPUT | ONNX_T_WEIGHT)) == (ONNX_T_INPUT | ONNX_T_WEIGHT))
            r->t[i].flags |= ONNX_T_CONST;
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        folded[v] = 0;
        if (!onnx_foldable_op(nd) || nd->n_output == 0) continue;
        int shape_op = strcmp(nd->op_type, "Shape") == 0 || strcmp(nd->op_type, "Size") == 0;
        int all = nd->n_input > 0 || strcmp(nd->op_type, "Constant") == 0;
        for (size_t k = 0; k < nd->n_input && all; k++) {
            if (!nd->input[k] || !*nd->input[k]) continue; /* optional input left out */
            int32_t id = onnx_io(r, v, nd, k, 0);
            if (id < 0) {
                all = 0;
            } else if (shape_op) {
                const onnx_tensor *t = &r->t[id];
                all = t->rank >= 0;
                for (int d = 0; all && d < t->rank; d++) all = r->dims[t->dim_off + d] >= 0;
            } else {
                all = (r->t[id].flags & ONNX_T_CONST) != 0;
            }
        }
        if (!all) continue;
        folded[v] = 1;
        for (size_t k = 0; k < nd->n_output; k++) {
            int32_t id = onnx_io(r, v, nd, k, 1);
            if (id >= 0) r->t[id].flags |= ONNX_T_CONST;
        }
    }
}

/* ---- pass 3: nodes, costs, edges ---- */
static hsdag_shape_ref onnx_ref(const onnx_reader *r, int32_t id)
{
    hsdag_shape_ref s = {-1, NULL};
    if (id >= 0 && r->t[id].rank >= 0) {
        s.rank = r->t[id].rank;
        s.dims = r->dims + r->t[id].dim_off;
    }
    return s;
}

static int onnx_edge(onnx_reader *r, hsdag_gb *b, int32_t id, int32_t v)
{
    onnx_tensor *t = &r->t[id];
    if (t->producer < 0 || t->stamp == v) return 0;
    t->stamp = v;
    if (r->pair_stamp[t->producer] != v) {
        r->pair_stamp[t->producer] = v;
        r->pairs++;
    }
    if (hsdag_gb_add_edge(b, t->producer, v, t->bytes > 0 ? t->bytes : 0) < 0)
        return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    return 0;
}

/* Outer-scope names read by the bodies of control-flow node v become edges into v. */
static int onnx_captures(onnx_reader *r, hsdag_gb *b, const Onnx__GraphProto *sub, int32_t v, int depth)
{
    int rc;
    if (!sub || depth > ONNX_MAX_DEPTH) return 0;
    for (size_t i = 0; i < sub->n_node; i++) {
        const Onnx__NodeProto *nd = sub->node[i];
        for (size_t k = 0; k < nd->n_input; k++) {
            int32_t id = onnx_tensor_find(r, nd->input[k]);
            if (id >= 0 && (rc = onnx_edge(r, b, id, v)) < 0) return rc;
        }
        for (size_t a = 0; a < nd->n_attribute; a++) {
            const Onnx__AttributeProto *at = nd->attribute[a];
            if (!at) continue;
            if ((rc = onnx_captures(r, b, at->g, v, depth + 1)) < 0) return rc;
            for (size_t j = 0; j < at->n_graphs; j++)
                if ((rc = onnx_captures(r, b, at->graphs[j], v, depth + 1)) < 0) return rc;
        }
    }
    return 0;
}

static int onnx_node_cost(onnx_reader *r, hsdag_gb *b, const Onnx__NodeProto *nd, int32_t v)
{
    size_t need = nd->n_input + nd->n_output + 1;
    if (hsdag_grow((void **)&r->refs, &r->cap_refs, need, sizeof *r->refs) < 0)
        return hsdag_err_set(r->e, HSDAG_ENOMEM, "%s: out of memory", r->what);
    hsdag_shape_ref *ins = r->refs, *outs = r->refs + nd->n_input;
    double param = 0;
    for (size_t k = 0; k < nd->n_input; k++) {
        int32_t id = onnx_io(r, (size_t)v, nd, k, 0);
        ins[k] = onnx_ref(r, id);
        if (id < 0 || !(r->t[id].flags & ONNX_T_WEIGHT)) continue;
        /* a weight read twice by one node counts once: stamped -2 - v here (onnx_edge, which runs after
         * every node's cost, stamps v), not found by rescanning the inputs (a Sum of 200,000 graph inputs
         * took 19 s) */
        if (r->t[id].stamp == -2 - v) continue;
        r->t[id].stamp = -2 - v;
        if (r->t[id].bytes > 0) param += r->t[id].bytes;
    }
    for (size_t k = 0; k < nd->n_output; k++) outs[k] = onnx_ref(r, onnx_io(r, (size_t)v, nd, k, 1));
    const Onnx__AttributeProto *eq = onnx_attr(nd, "equation");
    char eqbuf[256];
    const char *eqs = NULL;
    if (eq && eq->has_s && eq->s.len < sizeof eqbuf) {
        memcpy(eqbuf, eq->s.data, eq->s.len);
        eqbuf[eq->s.len] = '\0';
        eqs = eqbuf;
    }
    hsdag_opcost_in ci = {
        .op = nd->op_type,
        .n_in = nd->n_input > INT32_MAX ? 0 : (int)nd->n_input,
        .in = ins,
        .n_out = nd->n_output > INT32_MAX ? 0 : (int)nd->n_output,
        .out = outs,
        .group = onnx_attr_int(nd, "group", 1),
        .equation = eqs,
        .trans_a = onnx_attr_int(nd, "transA", 0) != 0,
        .trans_b = onnx_attr_int(nd, "transB", 0) != 0,
    };
    hsdag_opcost c = hsdag_opcost_estimate(&ci);
    const Onnx__AttributeProto *ks = onnx_attr(nd, "kernel_shape");
    if (c.opclass == HSDAG_OP_POOL && ks && ks->n_ints > 0 && nd->n_output > 0) {
        double win = 1, oe = 1;
        for (size_t i = 0; i < ks->n_ints; i++) win *= ks->ints[i] > 0 ? (double)ks->ints[i] : NAN;
        for (int i = 0; outs[0].rank >= 0 && i < outs[0].rank; i++)
            oe *= outs[0].dims[i] >= 0 ? (double)outs[0].dims[i] : NAN;
        if (outs[0].rank >= 0 && isfinite(win) && isfinite(oe)) c.flops = oe * win;
    }
    hsdag_gb_set_flops(b, v, c.flops);
    hsdag_gb_set_param_bytes(b, v, param);
    hsdag_gb_set_opclass(b, v, c.opclass);
    return 0;
}

static int onnx_build(onnx_reader *r, hsdag_gb *b, const Onnx__GraphProto *g, const uint8_t *folded)
{
    int rc;
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        int32_t idx = hsdag_gb_add_node(b, nd->name, nd->op_type);
        if (idx < 0) return hsdag_err_set(r->e, idx, "%s: node #%zu: %s", r->what, v, hsdag_status_str(idx));
        HSDAG_ASSERT((size_t)idx == v);
        for (size_t k = 0; k < nd->n_output; k++) {
            int32_t id = onnx_io(r, v, nd, k, 1);
            if (id < 0) continue;
            const onnx_tensor *t = &r->t[id];
            rc = hsdag_gb_add_output(b, idx, (hsdag_dtype)t->dtype, t->rank,
                                     t->rank > 0 ? r->dims + t->dim_off : NULL);
            if (rc < 0)
                return hsdag_err_set(r->e, rc, "%s: node '%.200s': %s", r->what, onnx_node_label(nd),
                                     hsdag_status_str(rc));
        }
        if ((rc = onnx_node_cost(r, b, nd, idx)) < 0) return rc;
        if (folded[v]) hsdag_gb_set_flags(b, idx, HSDAG_NF_FOLDED | HSDAG_NF_BOOKKEEPING);
    }
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        for (size_t k = 0; k < nd->n_input; k++) {
            const char *nm = nd->input[k];
            if (!nm || !*nm) continue; /* optional input left out */
            int32_t id = onnx_io(r, v, nd, k, 0);
            if (id < 0)
                return hsdag_err_set(
                    r->e, HSDAG_EDANGLING,
                    "%s: node '%.200s': input '%.200s' is not produced by any node, graph input or "
                    "initializer",
                    r->what, onnx_node_label(nd), nm);
            if ((rc = onnx_edge(r, b, id, (int32_t)v)) < 0) return rc;
        }
        for (size_t a = 0; a < nd->n_attribute; a++) {
            const Onnx__AttributeProto *at = nd->attribute[a];
            if (!at) continue;
            if ((rc = onnx_captures(r, b, at->g, (int32_t)v, 1)) < 0) return rc;
            for (size_t j = 0; j < at->n_graphs; j++)
                if ((rc = onnx_captures(r, b, at->graphs[j], (int32_t)v, 1)) < 0) return rc;
        }
    }
    return 0;
}

static int onnx_check(onnx_reader *r, const Onnx__ModelProto *m)
{
    const Onnx__GraphProto *g = m->graph;
    if (!g) return hsdag_err_set(r->e, HSDAG_EPARSE, "%s: not an ONNX model (no graph)", r->what);
    if (g->n_node == 0) return hsdag_err_set(r->e, HSDAG_EPARSE, "%s: ONNX graph has no nodes", r->what);
    if (g->n_node > HSDAG_MAX_NODES)
        return hsdag_err_set(r->e, HSDAG_ELIMIT, "%s: %zu nodes exceed the limit of %d", r->what, g->n_node,
                             HSDAG_MAX_NODES);
    for (size_t v = 0; v < g->n_node; v++)
        if (!g->node[v]->op_type || !*g->node[v]->op_type)
            return hsdag_err_set(r->e, HSDAG_EPARSE, "%s: node #%zu ('%.200s') has no op_type", r->what, v,
                                 onnx_str(g->node[v]->name));
    return 0;
}

int hsdag_onnx_read(hsdag_graph **out, const void *buf, size_t len, const char *what, hsdag_err *e)
{
    *out = NULL;
    onnx_reader r = {.what = what ? what : "<buffer>", .e = e};
    onnx_pool pool = {.next_size = (size_t)64 << 10};
    Onnx__ModelProto *m = NULL;
    hsdag_gb *b = NULL;
    uint8_t *folded = NULL;
    int rc;
    if (!buf && len) return hsdag_err_set(e, HSDAG_EINVAL, "%s: no buffer", r.what);
    if (len > HSDAG_MAX_FILE_BYTES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: %zu bytes exceed the %zu-byte limit", r.what, len,
                             (size_t)HSDAG_MAX_FILE_BYTES);
    if (onnx_wire_depth(buf, len, &onnx__model_proto__descriptor, 0) > ONNX_MAX_DEPTH)
        return hsdag_err_set(e, HSDAG_ELIMIT, "%s: protobuf messages nested deeper than %d levels", r.what,
                             ONNX_MAX_DEPTH);
    /* decoded size is bounded by the input: ~64x for hostile streams of tiny messages, ~1x for weights */
    size_t lin = len * 64 + ((size_t)16 << 20), big = len * 2 + ((size_t)512 << 20);
    pool.cap = lin < big ? lin : big;
    ProtobufCAllocator alloc = {onnx_pool_alloc, onnx_pool_free, &pool};
    m = onnx__model_proto__unpack(&alloc, len, buf);
    if (!m) {
        onnx_pool_release(&pool);
        if (pool.oom) return hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory while decoding", r.what);
        if (pool.over)
            return hsdag_err_set(e, HSDAG_ELIMIT, "%s: decoding needs more than %zu bytes of memory", r.what,
                                 pool.cap);
        return hsdag_err_set(e, HSDAG_EPARSE, "%s: not a valid ONNX protobuf (truncated or corrupt)", r.what);
    }
    if ((rc = onnx_check(&r, m)) < 0) goto done;
    const Onnx__GraphProto *g = m->graph;
    r.map = hsdag_strmap_create();
    r.pair_stamp = hsdag_malloc(g->n_node * sizeof *r.pair_stamp);
    b = hsdag_gb_create();
    if (!r.map || !r.pair_stamp || !b) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", r.what);
        goto done;
    }
    for (size_t v = 0; v < g->n_node; v++) r.pair_stamp[v] = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = m->opset_import[i];
        if (op && op->has_version && (!op->domain || !*op->domain || strcmp(op->domain, "ai.onnx") == 0))
            r.opset = (op->version > 0 && op->version <= INT32_MAX) ? op->version : 0;
    }
    if ((rc = onnx_collect(&r, g)) < 0 || (rc = onnx_resolve(&r, g)) < 0 || (rc = onnx_infer_run(&r, g)) < 0)
        goto done;
    onnx_mark_weights(&r, g);
    if (!(folded = hsdag_malloc(g->n_node + 1))) {
        rc = hsdag_err_set(e, HSDAG_ENOMEM, "%s: out of memory", r.what);
        goto done;
    }
    onnx_mark_folded(&r, g, m->has_ir_version ? m->ir_version : 0, folded);
    if ((rc = onnx_build(&r, b, g, folded)) < 0) goto done;

    hsdag_graph_meta meta = {
        .format = HSDAG_FMT_ONNX,
        .file_nodes = (int64_t)g->n_node,
        .file_edges = r.pairs,
        .ir_version = (m->has_ir_version && m->ir_version >= 0 && m->ir_version <= INT32_MAX)
                          ? (int32_t)m->ir_version
                          : -1,
        .opset = r.opset > 0 ? (int32_t)r.opset : -1,
        .max_accels = -1,
        .max_cpus = -1,
        .max_size_per_accel = NAN,
        .name = onnx_str(g->name),
    };
    hsdag_gb_set_meta(b, &meta);
    if ((rc = hsdag_gb_finish(b, out, e)) < 0) hsdag_err_prefix(e, r.what);
done:
    hsdag_gb_free(b);
    hsdag_strmap_free(r.map);
    hsdag_free(r.t);
    hsdag_free(r.dims);
    hsdag_free(r.vals);
    hsdag_free(r.io_ids);
    hsdag_free(r.io_off);
    hsdag_free(r.refs);
    hsdag_free(r.pair_stamp);
    hsdag_free(folded);
    onnx_pool_release(&pool); /* frees m and everything protobuf-c allocated */
    return rc < 0 ? rc : 0;
}
