/* onnx_infer.c - ONNX shape inference for what the file leaves out, with small int64 value propagation
 * (Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains of torch exports).
 * Not here: float values (so no Resize/Upsample by float scales, no Range over floats), Einsum with "..." or an implicit output, TopK,
 * NonZero, control flow, non-default domains;
 * no per-element work beyond ONNX_MAX_VALUES integers. Entry points: onnx_infer_run.
 *
 * One pass in node order (ONNX requires topologically sorted nodes; in an unsorted file some shapes stay
 * unknown).
 * A shape the file gives wins; an inferred shape only fills the file's unknown dims of the same rank. */
#include <string.h>

#include "onnx_internal.h"

typedef struct ish {
    int rank; /* -1 = unknown */
    int64_t d[HSDAG_MAX_RANK];
} ish;

typedef enum infer_op {
    IOP_NONE = 0,
    IOP_SAME,
    IOP_BCAST,
    IOP_CMP,
    IOP_WHERE,
    IOP_CAST,
    IOP_CASTLIKE,
    IOP_CONV,
    IOP_CONVT,
    IOP_POOL,
    IOP_GPOOL,
    IOP_GEMM,
    IOP_MATMUL,
    IOP_FLATTEN,
    IOP_RESHAPE,
    IOP_TRANSPOSE,
    IOP_CONCAT,
    IOP_UNSQUEEZE,
    IOP_SQUEEZE,
    IOP_GATHER,
    IOP_SLICE,
    IOP_REDUCE,
    IOP_ARGREDUCE,
    IOP_SPLIT,
    IOP_SHAPE,
    IOP_SIZE,
    IOP_EXPAND,
    IOP_PAD,
    IOP_TILE,
    IOP_CONSTSHAPE,
    IOP_DROPOUT,
    IOP_NOT,
    IOP_EINSUM,
    IOP_RANGE,
    IOP_RESIZE
} infer_op;

typedef struct infer_entry {
    const char *name;
    infer_op op;
} infer_entry;

/* sorted by strcmp */
static const infer_entry infer_table[] = {
    {"Abs", IOP_SAME},
    {"Acos", IOP_SAME},
    {"Add", IOP_BCAST},
    {"And", IOP_CMP},
    {"ArgMax", IOP_ARGREDUCE},
    {"ArgMin", IOP_ARGREDUCE},
    {"Asin", IOP_SAME},
    {"Atan", IOP_SAME},
    {"AveragePool", IOP_POOL},
    {"BatchNormalization", IOP_SAME},
    {"BitShift", IOP_BCAST},
    {"Cast", IOP_CAST},
    {"CastLike", IOP_CASTLIKE},
    {"Ceil", IOP_SAME},
    {"Celu", IOP_SAME},
    {"Clip", IOP_SAME},
    {"Concat", IOP_CONCAT},
    {"ConstantOfShape", IOP_CONSTSHAPE},
    {"Conv", IOP_CONV},
    {"ConvInteger", IOP_CONV},
    {"ConvTranspose", IOP_CONVT},
    {"Cos", IOP_SAME},
    {"CumSum", IOP_SAME},
    {"Div", IOP_BCAST},
    {"Dropout", IOP_DROPOUT},
    {"Einsum", IOP_EINSUM},
    {"Elu", IOP_SAME},
    {"Equal", IOP_CMP},
    {"Erf", IOP_SAME},
    {"Exp", IOP_SAME},
    {"Expand", IOP_EXPAND},
    {"Flatten", IOP_FLATTEN},
    {"Floor", IOP_SAME},
    {"Gather", IOP_GATHER},
    {"Gelu", IOP_SAME},
    {"Gemm", IOP_GEMM},
    {"GlobalAveragePool", IOP_GPOOL},
    {"GlobalLpPool", IOP_GPOOL},
    {"GlobalMaxPool", IOP_GPOOL},
    {"Greater", IOP_CMP},
    {"GreaterOrEqual", IOP_CMP},
    {"HardSigmoid", IOP_SAME},
    {"HardSwish", IOP_SAME},
    {"Hardmax", IOP_SAME},
    {"Identity", IOP_SAME},
    {"InstanceNormalization", IOP_SAME},
    {"IsInf", IOP_NOT},
    {"IsNaN", IOP_NOT},
    {"LRN", IOP_SAME},
    {"LayerNormalization", IOP_SAME},
    {"LeakyRelu", IOP_SAME},
    {"Less", IOP_CMP},
    {"LessOrEqual", IOP_CMP},
    {"Log", IOP_SAME},
    {"LogSoftmax", IOP_SAME},
    {"LpNormalization", IOP_SAME},
    {"LpPool", IOP_POOL},
    {"MatMul", IOP_MATMUL},
    {"MatMulInteger", IOP_MATMUL},
    {"Max", IOP_BCAST},
    {"MaxPool", IOP_POOL},
    {"Mean", IOP_BCAST},
    {"MeanVarianceNormalization", IOP_SAME},
    {"Min", IOP_BCAST},
    {"Mish", IOP_SAME},
    {"Mod", IOP_BCAST},
    {"Mul", IOP_BCAST},
    {"Neg", IOP_SAME},
    {"Not", IOP_NOT},
    {"Or", IOP_CMP},
    {"PRelu", IOP_BCAST},
    {"Pad", IOP_PAD},
    {"Pow", IOP_BCAST},
    {"Range", IOP_RANGE},
    {"Reciprocal", IOP_SAME},
    {"ReduceL1", IOP_REDUCE},
    {"ReduceL2", IOP_REDUCE},
    {"ReduceLogSum", IOP_REDUCE},
    {"ReduceLogSumExp", IOP_REDUCE},
    {"ReduceMax", IOP_REDUCE},
    {"ReduceMean", IOP_REDUCE},
    {"ReduceMin", IOP_REDUCE},
    {"ReduceProd", IOP_REDUCE},
    {"ReduceSum", IOP_REDUCE},
    {"ReduceSumSquare", IOP_REDUCE},
    {"Relu", IOP_SAME},
    {"Reshape", IOP_RESHAPE},
    {"Resize", IOP_RESIZE},
    {"Round", IOP_SAME},
    {"Scatter", IOP_SAME},
    {"ScatterElements", IOP_SAME},
    {"ScatterND", IOP_SAME},
    {"Selu", IOP_SAME},
    {"Shape", IOP_SHAPE},
    {"Sigmoid", IOP_SAME},
    {"Sign", IOP_SAME},
    {"Sin", IOP_SAME},
    {"Size", IOP_SIZE},
    {"Slice", IOP_SLICE},
    {"Softmax", IOP_SAME},
    {"Softplus", IOP_SAME},
    {"Softsign", IOP_SAME},
    {"Split", IOP_SPLIT},
    {"Sqrt", IOP_SAME},
    {"Squeeze", IOP_SQUEEZE},
    {"Sub", IOP_BCAST},
    {"Sum", IOP_BCAST},
    {"Tan", IOP_SAME},
    {"Tanh", IOP_SAME},
    {"ThresholdedRelu", IOP_SAME},
    {"Tile", IOP_TILE},
    {"Transpose", IOP_TRANSPOSE},
    {"Trilu", IOP_SAME},
    {"Unsqueeze", IOP_UNSQUEEZE},
    {"Where", IOP_WHERE},
    {"Xor", IOP_CMP},
};

static int infer_cmp(const void *k, const void *e)
{
    return strcmp(k, ((const infer_entry *)e)->name);
}

static infer_op infer_lookup(const char *op)
{
    const infer_entry *e =
        bsearch(op, infer_table, sizeof infer_table / sizeof infer_table[0], sizeof *infer_table, infer_cmp);
    return e ? e->op : IOP_NONE;
}

/* ---- small helpers ---- */
#define INFER_DIM_MAX ((int64_t)1 << 53) /* larger products are treated as unknown */

static int64_t infer_mul(int64_t a, int64_t b)
{
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > INFER_DIM_MAX / a) return -1;
    return a * b;
}

/* |x| small enough that sums of a few such values cannot overflow */
static int infer_sane(int64_t x)
{
    return x >= -INFER_DIM_MAX && x <= INFER_DIM_MAX;
}

static int64_t infer_prod(const ish *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p = infer_mul(p, s->d[i]);
    return p;
}

static int32_t infer_tid(const onnx_reader *r, const Onnx__NodeProto *nd, size_t k, int out)
{
    if (out) return k < nd->n_output ? r->cur[nd->n_input + k] : -1;
    return k < nd->n_input ? r->cur[k] : -1;
}

static int infer_in(const onnx_reader *r, const Onnx__NodeProto *nd, size_t k, ish *s)
{
    int32_t id = infer_tid(r, nd, k, 0);
    s->rank = -1;
    if (id < 0 || r->t[id].rank < 0) return 0;
    s->rank = r->t[id].rank;
    memcpy(s->d, r->dims + r->t[id].dim_off, (size_t)s->rank * sizeof *s->d);
    return 1;
}

static hsdag_dtype infer_dtype(const onnx_reader *r, const Onnx__NodeProto *nd, size_t k)
{
    int32_t id = infer_tid(r, nd, k, 0);
    return id < 0 ? HSDAG_DT_UNKNOWN : (hsdag_dtype)r->t[id].dtype;
}

/* Values of input k (n elements) or 0 if not tracked. */
static int infer_vals(const onnx_reader *r, const Onnx__NodeProto *nd, size_t k, int64_t *v, int *n)
{
    int32_t id = infer_tid(r, nd, k, 0);
    if (id < 0 || r->t[id].nval < 0) return 0;
    *n = r->t[id].nval;
    memcpy(v, r->vals + r->t[id].val_off, (size_t)*n * sizeof *v);
    return 1;
}

static int infer_all_known(const int64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] == ONNX_VUNK) return 0;
    return 1;
}

static int infer_attr_ints(const Onnx__NodeProto *nd, const char *name, int64_t *out, int max)
{
    const Onnx__AttributeProto *a = onnx_attr(nd, name);
    if (!a || a->n_ints > (size_t)max) return -1;
    for (size_t i = 0; i < a->n_ints; i++) out[i] = a->ints[i];
    return (int)a->n_ints;
}

static int infer_attr_is(const Onnx__NodeProto *nd, const char *name, const char *val)
{
    const Onnx__AttributeProto *a = onnx_attr(nd, name);
    size_t n = strlen(val);
    return a && a->has_s && a->s.len == n && memcmp(a->s.data, val, n) == 0;
}

/* Normalises axis a for rank r; -1 if out of range. */
static int infer_axis(int64_t a, int r)
{
    if (a < 0) a += r;
    return (a >= 0 && a < r) ? (int)a : -1;
}

static int infer_is_int(hsdag_dtype t)
{
    return t == HSDAG_DT_I64 || t == HSDAG_DT_I32 || t == HSDAG_DT_I16 || t == HSDAG_DT_I8 ||
           t == HSDAG_DT_U8 || t == HSDAG_DT_U16 || t == HSDAG_DT_U32 || t == HSDAG_DT_U64 ||
           t == HSDAG_DT_BOOL;
}

/* Sets output k: an unshaped output takes s; a shaped one of the same rank gets its unknown dims filled. */
static int infer_out(onnx_reader *r, const Onnx__NodeProto *nd, size_t k, hsdag_dtype dt, const ish *s)
{
    int32_t id = infer_tid(r, nd, k, 1);
    if (id < 0 || s->rank < 0 || s->rank > HSDAG_MAX_RANK) return 0;
    onnx_tensor *t = &r->t[id];
    if (t->dtype != HSDAG_DT_UNKNOWN) dt = (hsdag_dtype)t->dtype;
    if (t->rank < 0) return onnx_tensor_shape(r, id, nd->output[k], dt, s->rank, s->d);
    if (t->rank != s->rank) return 0;
    ish m = *s;
    int changed = 0;
    for (int i = 0; i < s->rank; i++) {
        int64_t f = r->dims[t->dim_off + i];
        if (f >= 0)
            m.d[i] = f;
        else if (m.d[i] >= 0)
            changed = 1;
    }
    return changed ? onnx_tensor_shape(r, id, nd->output[k], dt, m.rank, m.d) : 0;
}

static int infer_out_vals(onnx_reader *r, const Onnx__NodeProto *nd, size_t k, const int64_t *v, int n)
{
    int32_t id = infer_tid(r, nd, k, 1);
    if (id < 0 || n < 0 || n > ONNX_MAX_VALUES || r->t[id].nval >= 0) return 0;
    if (!infer_is_int((hsdag_dtype)r->t[id].dtype)) return 0;
    return onnx_tensor_values(r, id, v, n);
}

/* Elements of a shape if known and small enough to track values, else -1. */
static int infer_small(const ish *s)
{
    if (s->rank < 0) return -1;
    int64_t p = infer_prod(s, 0, s->rank);
    return (p >= 0 && p <= ONNX_MAX_VALUES) ? (int)p : -1;
}

/* numpy broadcast of a and b into o; 0 if a rank is unknown. */
static int infer_bcast(const ish *a, const ish *b, ish *o)
{
    if (a->rank < 0 || b->rank < 0) return 0;
    int r = a->rank > b->rank ? a->rank : b->rank;
    ish t;
    t.rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
        if (x == 1)
            t.d[i] = y;
        else if (y == 1)
            t.d[i] = x;
        else if (x < 0)
            t.d[i] = y;
        else
            t.d[i] = x; /* y unknown or equal (a mismatch is the file's problem) */
    }
    *o = t;
    return 1;
}

/* ---- value arithmetic over a broadcast (out has at most ONNX_MAX_VALUES elements) ---- */
static int64_t infer_apply(const char *op, int64_t x, int64_t y)
{
    if (x == ONNX_VUNK || y == ONNX_VUNK) return ONNX_VUNK;
    int64_t z;
    if (strcmp(op, "Add") == 0) return __builtin_add_overflow(x, y, &z) ? ONNX_VUNK : z;
    if (strcmp(op, "Sub") == 0) return __builtin_sub_overflow(x, y, &z) ? ONNX_VUNK : z;
    if (strcmp(op, "Mul") == 0) return __builtin_mul_overflow(x, y, &z) ? ONNX_VUNK : z;
    if (strcmp(op, "Div") == 0) return (y == 0 || (x == INT64_MIN && y == -1)) ? ONNX_VUNK : x / y;
    if (strcmp(op, "Mod") == 0) { /* fmod = 0 (integers): the result takes the divisor's sign, as in Python */
        if (y == 0 || (x == INT64_MIN && y == -1)) return ONNX_VUNK;
        z = x % y;
        return (z != 0 && ((z < 0) != (y < 0))) ? z + y : z;
    }
    if (strcmp(op, "Max") == 0) return x > y ? x : y;
    if (strcmp(op, "Min") == 0) return x < y ? x : y;
    if (strcmp(op, "Equal") == 0) return x == y;
    if (strcmp(op, "Less") == 0) return x < y;
    if (strcmp(op, "Greater") == 0) return x > y;
    return ONNX_VUNK;
}

/* Flat index into input shape s of output multi-index idx (rank o->rank), numpy broadcasting. */
static int infer_bidx(const ish *o, const ish *s, const int64_t *idx)
{
    int64_t f = 0;
    for (int i = 0; i < s->rank; i++) {
        int oi = i + (o->rank - s->rank);
        int64_t c = s->d[i] == 1 ? 0 : idx[oi];
        f = f * s->d[i] + c;
    }
    return (int)f;
}

static void infer_unflat(const ish *o, int flat, int64_t *idx)
{
    for (int i = o->rank - 1; i >= 0; i--) {
        idx[i] = o->d[i] > 0 ? flat % o->d[i] : 0;
        flat = o->d[i] > 0 ? (int)(flat / o->d[i]) : 0;
    }
}

static int infer_elem_vals(onnx_reader *r, const Onnx__NodeProto *nd, const ish *o)
{
    int n = infer_small(o);
    if (n < 0 || nd->n_input < 1 || nd->n_input > 3) return 0;
    int64_t in[3][ONNX_MAX_VALUES], out[ONNX_MAX_VALUES], idx[HSDAG_MAX_RANK];
    ish s[3];
    int cnt;
    for (size_t k = 0; k < nd->n_input; k++) {
        if (!infer_vals(r, nd, k, in[k], &cnt) || !infer_in(r, nd, k, &s[k]) || infer_small(&s[k]) != cnt)
            return 0;
        if (s[k].rank > o->rank) return 0;
    }
    int where = strcmp(nd->op_type, "Where") == 0;
    if (where && nd->n_input != 3) return 0;
    if (!where && nd->n_input != 2) return 0;
    for (int f = 0; f < n; f++) {
        infer_unflat(o, f, idx);
        int64_t a = in[0][infer_bidx(o, &s[0], idx)], b = in[1][infer_bidx(o, &s[1], idx)];
        if (where) {
            int64_t c = in[2][infer_bidx(o, &s[2], idx)];
            out[f] = a == ONNX_VUNK ? ONNX_VUNK : (a ? b : c);
        } else {
            out[f] = infer_apply(nd->op_type, a, b);
        }
    }
    return infer_out_vals(r, nd, 0, out, n);
}

/* ---- conv and pooling geometry ---- */
static int infer_spatial(const Onnx__NodeProto *nd, const ish *x, const int64_t *kern, int transposed,
                         int ceil_mode, ish *o)
{
    int ns = x->rank - 2;
    int64_t st[HSDAG_MAX_RANK], dil[HSDAG_MAX_RANK], pads[2 * HSDAG_MAX_RANK], opad[HSDAG_MAX_RANK];
    if (infer_attr_ints(nd, "strides", st, ns) != ns)
        for (int i = 0; i < ns; i++) st[i] = 1;
    if (infer_attr_ints(nd, "dilations", dil, ns) != ns)
        for (int i = 0; i < ns; i++) dil[i] = 1;
    if (infer_attr_ints(nd, "pads", pads, 2 * ns) != 2 * ns)
        for (int i = 0; i < 2 * ns; i++) pads[i] = 0;
    if (infer_attr_ints(nd, "output_padding", opad, ns) != ns)
        for (int i = 0; i < ns; i++) opad[i] = 0;
    int same = infer_attr_is(nd, "auto_pad", "SAME_UPPER") || infer_attr_is(nd, "auto_pad", "SAME_LOWER");
    int valid = infer_attr_is(nd, "auto_pad", "VALID");
    for (int i = 0; i < ns; i++) {
        int64_t in = x->d[2 + i], k = kern ? kern[i] : -1, s = st[i], d = dil[i];
        o->d[2 + i] = -1;
        if (in < 0 || s <= 0 || d <= 0 || s > INFER_DIM_MAX || d > INFER_DIM_MAX) continue;
        if (!infer_sane(pads[i]) || !infer_sane(pads[ns + i]) || !infer_sane(opad[i]) || in > INFER_DIM_MAX)
            continue;
        if (transposed) {
            if (same) {
                o->d[2 + i] = infer_mul(in, s);
                continue;
            }
            if (k <= 0 || k > INFER_DIM_MAX || in == 0) continue;
            int64_t ek = infer_mul(k - 1, d), v = infer_mul(s, in - 1);
            if (v < 0 || ek < 0) continue;
            ek += 1;
            v = v + opad[i] + ek - pads[i] - pads[ns + i];
            o->d[2 + i] = v >= 0 ? v : -1;
            continue;
        }
        if (same) {
            o->d[2 + i] = (in + s - 1) / s;
            continue;
        }
        if (k <= 0 || k > INFER_DIM_MAX) continue;
        int64_t ek = infer_mul(k - 1, d);
        if (ek < 0) continue;
        ek += 1;
        int64_t span = in - ek + (valid ? 0 : pads[i] + pads[ns + i]);
        if (span < 0 || span > INFER_DIM_MAX) continue;
        o->d[2 + i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    }
    return 1;
}

static int infer_conv(onnx_reader *r, const Onnx__NodeProto *nd, infer_op op)
{
    ish x, w, o;
    if (!infer_in(r, nd, 0, &x) || x.rank < 3) return 0;
    int ns = x.rank - 2;
    int64_t kern[HSDAG_MAX_RANK], *kp = kern;
    int have_w = op != IOP_POOL && infer_in(r, nd, 1, &w);
    if (infer_attr_ints(nd, "kernel_shape", kern, ns) != ns) {
        if (op != IOP_POOL && have_w && w.rank == x.rank)
            memcpy(kern, w.d + 2, (size_t)ns * sizeof *kern);
        else
            kp = NULL;
    }
    o.rank = x.rank;
    o.d[0] = x.d[0];
    if (op == IOP_POOL)
        o.d[1] = x.d[1];
    else if (op == IOP_CONV)
        o.d[1] = (have_w && w.rank >= 1) ? w.d[0] : -1;
    else
        o.d[1] = (have_w && w.rank >= 2) ? infer_mul(w.d[1], onnx_attr_int(nd, "group", 1)) : -1;
    infer_spatial(nd, &x, kp, op == IOP_CONVT, op == IOP_POOL && onnx_attr_int(nd, "ceil_mode", 0) != 0, &o);
    if (op == IOP_CONVT) {
        int64_t osh[HSDAG_MAX_RANK];
        if (infer_attr_ints(nd, "output_shape", osh, ns) == ns)
            memcpy(o.d + 2, osh, (size_t)ns * sizeof *osh);
    }
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    if (rc < 0 || op != IOP_POOL || nd->n_output < 2) return rc;
    return infer_out(r, nd, 1, HSDAG_DT_I64, &o); /* MaxPool indices */
}

/* ---- per-op rules ---- */
static int infer_matmul(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish a, b, o, ba, bb, bo;
    if (!infer_in(r, nd, 0, &a) || !infer_in(r, nd, 1, &b) || a.rank < 1 || b.rank < 1) return 0;
    ba.rank = a.rank >= 2 ? a.rank - 2 : 0;
    bb.rank = b.rank >= 2 ? b.rank - 2 : 0;
    memcpy(ba.d, a.d, (size_t)ba.rank * sizeof *a.d);
    memcpy(bb.d, b.d, (size_t)bb.rank * sizeof *b.d);
    infer_bcast(&ba, &bb, &bo);
    o = bo;
    if (a.rank >= 2) o.d[o.rank++] = a.d[a.rank - 2];
    if (b.rank >= 2) {
        if (o.rank >= HSDAG_MAX_RANK) return 0;
        o.d[o.rank++] = b.d[b.rank - 1];
    }
    hsdag_dtype dt = strcmp(nd->op_type, "MatMulInteger") == 0 ? HSDAG_DT_I32 : infer_dtype(r, nd, 0);
    return infer_out(r, nd, 0, dt, &o);
}

static int infer_gemm(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish a, b, o;
    if (!infer_in(r, nd, 0, &a) || !infer_in(r, nd, 1, &b) || a.rank != 2 || b.rank != 2) return 0;
    o.rank = 2;
    o.d[0] = onnx_attr_int(nd, "transA", 0) ? a.d[1] : a.d[0];
    o.d[1] = onnx_attr_int(nd, "transB", 0) ? b.d[0] : b.d[1];
    return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
}

static int infer_reshape(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    int64_t v[ONNX_MAX_VALUES];
    int n, have_x = infer_in(r, nd, 0, &x);
    if (!infer_vals(r, nd, 1, v, &n) || n > HSDAG_MAX_RANK) return 0;
    int allowzero = onnx_attr_int(nd, "allowzero", 0) != 0, infer_at = -1;
    o.rank = n;
    for (int i = 0; i < n; i++) {
        if (v[i] == ONNX_VUNK)
            o.d[i] = -1;
        else if (v[i] == 0 && !allowzero)
            o.d[i] = (have_x && i < x.rank) ? x.d[i] : -1;
        else if (v[i] == -1 && infer_at < 0) {
            infer_at = i;
            o.d[i] = -1;
        } else if (v[i] < 0)
            return 0;
        else
            o.d[i] = v[i];
    }
    if (infer_at >= 0 && have_x) {
        int64_t total = infer_prod(&x, 0, x.rank), rest = 1;
        for (int i = 0; i < n; i++)
            if (i != infer_at) rest = infer_mul(rest, o.d[i]);
        if (total >= 0 && rest > 0 && total % rest == 0) o.d[infer_at] = total / rest;
    }
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    if (rc < 0) return rc;
    int cnt;
    if (infer_vals(r, nd, 0, v, &cnt) && infer_small(&o) == cnt) return infer_out_vals(r, nd, 0, v, cnt);
    return 0;
}

static int infer_transpose(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    int64_t perm[HSDAG_MAX_RANK];
    if (!infer_in(r, nd, 0, &x)) return 0;
    int np = infer_attr_ints(nd, "perm", perm, HSDAG_MAX_RANK);
    if (np < 0) {
        np = x.rank;
        for (int i = 0; i < np; i++) perm[i] = np - 1 - i;
    }
    if (np != x.rank) return 0;
    o.rank = x.rank;
    for (int i = 0; i < np; i++) {
        int p = infer_axis(perm[i], x.rank);
        if (p < 0) return 0;
        o.d[i] = x.d[p];
        perm[i] = p;
    }
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    int64_t v[ONNX_MAX_VALUES], ov[ONNX_MAX_VALUES], idx[HSDAG_MAX_RANK];
    int n, m = infer_small(&o);
    if (rc < 0 || m < 0 || !infer_vals(r, nd, 0, v, &n) || n != m) return rc;
    for (int f = 0; f < m; f++) { /* output index idx reads input index with idx[i] on axis perm[i] */
        infer_unflat(&o, f, idx);
        int64_t flat = 0;
        for (int a = 0; a < x.rank; a++) {
            int64_t k = 0;
            for (int i = 0; i < np; i++)
                if (perm[i] == a) k = idx[i];
            flat = flat * x.d[a] + k;
        }
        ov[f] = v[flat];
    }
    return infer_out_vals(r, nd, 0, ov, m);
}

static int infer_concat(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    if (nd->n_input < 1 || !infer_in(r, nd, 0, &o)) return 0;
    int ax = infer_axis(onnx_attr_int(nd, "axis", 0), o.rank);
    if (ax < 0) return 0;
    for (size_t k = 1; k < nd->n_input; k++) {
        if (!infer_in(r, nd, k, &x) || x.rank != o.rank) return 0;
        for (int i = 0; i < o.rank; i++) {
            if (i == ax)
                o.d[i] = (o.d[i] < 0 || x.d[i] < 0 || o.d[i] > INFER_DIM_MAX || x.d[i] > INFER_DIM_MAX)
                             ? -1
                             : o.d[i] + x.d[i];
            else if (o.d[i] < 0)
                o.d[i] = x.d[i];
        }
    }
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    if (rc < 0 || ax != 0) return rc;
    /* axis 0 of row-major tensors: the values simply follow each other */
    int64_t all[ONNX_MAX_VALUES], v[ONNX_MAX_VALUES];
    int total = 0, n;
    for (size_t k = 0; k < nd->n_input; k++) {
        if (!infer_vals(r, nd, k, v, &n) || total + n > ONNX_MAX_VALUES) return 0;
        memcpy(all + total, v, (size_t)n * sizeof *v);
        total += n;
    }
    return infer_small(&o) == total ? infer_out_vals(r, nd, 0, all, total) : 0;
}

/* axes of (Un)Squeeze / Reduce: attribute before opset 13 (18 for most reductions), input 1 after. */
static int infer_axes(onnx_reader *r, const Onnx__NodeProto *nd, int64_t *ax)
{
    int n = infer_attr_ints(nd, "axes", ax, HSDAG_MAX_RANK);
    if (n >= 0) return n;
    if (nd->n_input >= 2 && nd->input[1] && *nd->input[1]) {
        if (!infer_vals(r, nd, 1, ax, &n) || n > HSDAG_MAX_RANK || !infer_all_known(ax, n)) return -2;
        return n;
    }
    return -1; /* no axes given */
}

static int infer_copy_vals(onnx_reader *r, const Onnx__NodeProto *nd, const ish *o)
{
    int64_t v[ONNX_MAX_VALUES];
    int n;
    if (infer_vals(r, nd, 0, v, &n) && infer_small(o) == n) return infer_out_vals(r, nd, 0, v, n);
    return 0;
}

static int infer_unsqueeze(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    int64_t ax[HSDAG_MAX_RANK];
    if (!infer_in(r, nd, 0, &x)) return 0;
    int na = infer_axes(r, nd, ax);
    if (na < 0 || x.rank + na > HSDAG_MAX_RANK) return 0;
    o.rank = x.rank + na;
    int mark[HSDAG_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
        int a = infer_axis(ax[i], o.rank);
        if (a < 0 || mark[a]) return 0;
        mark[a] = 1;
    }
    for (int i = 0, j = 0; i < o.rank; i++) o.d[i] = mark[i] ? 1 : x.d[j++];
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    return rc < 0 ? rc : infer_copy_vals(r, nd, &o);
}

static int infer_squeeze(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    int64_t ax[HSDAG_MAX_RANK];
    if (!infer_in(r, nd, 0, &x)) return 0;
    int na = infer_axes(r, nd, ax), mark[HSDAG_MAX_RANK] = {0};
    if (na == -2) return 0;
    if (na < 0) {
        for (int i = 0; i < x.rank; i++) {
            if (x.d[i] < 0) return 0;
            mark[i] = x.d[i] == 1;
        }
    } else {
        for (int i = 0; i < na; i++) {
            int a = infer_axis(ax[i], x.rank);
            if (a < 0) return 0;
            mark[a] = 1;
        }
    }
    o.rank = 0;
    for (int i = 0; i < x.rank; i++)
        if (!mark[i]) o.d[o.rank++] = x.d[i];
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    return rc < 0 ? rc : infer_copy_vals(r, nd, &o);
}

static int infer_gather(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, ind, o;
    if (!infer_in(r, nd, 0, &x) || !infer_in(r, nd, 1, &ind) || x.rank < 1) return 0;
    int ax = infer_axis(onnx_attr_int(nd, "axis", 0), x.rank);
    if (ax < 0 || x.rank - 1 + ind.rank > HSDAG_MAX_RANK) return 0;
    o.rank = 0;
    for (int i = 0; i < ax; i++) o.d[o.rank++] = x.d[i];
    for (int i = 0; i < ind.rank; i++) o.d[o.rank++] = ind.d[i];
    for (int i = ax + 1; i < x.rank; i++) o.d[o.rank++] = x.d[i];
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    if (rc < 0 || x.rank != 1) return rc;
    int64_t dv[ONNX_MAX_VALUES], iv[ONNX_MAX_VALUES], ov[ONNX_MAX_VALUES];
    int nd_, ni;
    if (!infer_vals(r, nd, 0, dv, &nd_) || !infer_vals(r, nd, 1, iv, &ni) || infer_small(&o) != ni) return 0;
    for (int i = 0; i < ni; i++) {
        int64_t k = iv[i];
        if (k == ONNX_VUNK) return 0;
        if (k < 0) k += nd_;
        if (k < 0 || k >= nd_) return 0;
        ov[i] = dv[k];
    }
    return infer_out_vals(r, nd, 0, ov, ni);
}

static int infer_slice(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    int64_t st[ONNX_MAX_VALUES], en[ONNX_MAX_VALUES], ax[ONNX_MAX_VALUES], sp[ONNX_MAX_VALUES];
    int ns, ne, na, nsp;
    if (!infer_in(r, nd, 0, &x)) return 0;
    if (r->opset > 0 && r->opset < 10) {
        ns = infer_attr_ints(nd, "starts", st, HSDAG_MAX_RANK);
        ne = infer_attr_ints(nd, "ends", en, HSDAG_MAX_RANK);
        na = infer_attr_ints(nd, "axes", ax, HSDAG_MAX_RANK);
        nsp = -1;
    } else {
        if (!infer_vals(r, nd, 1, st, &ns) || !infer_vals(r, nd, 2, en, &ne)) return 0;
        if (nd->n_input < 4 || !*nd->input[3])
            na = -1;
        else if (!infer_vals(r, nd, 3, ax, &na))
            return 0;
        if (nd->n_input < 5 || !*nd->input[4])
            nsp = -1;
        else if (!infer_vals(r, nd, 4, sp, &nsp))
            return 0;
    }
    if (ns < 0 || ns != ne || ns > HSDAG_MAX_RANK || (na >= 0 && na != ns) || (nsp >= 0 && nsp != ns))
        return 0;
    o = x;
    int64_t b[HSDAG_MAX_RANK], stp[HSDAG_MAX_RANK]; /* per axis: first element taken and step */
    for (int a = 0; a < x.rank; a++) b[a] = 0, stp[a] = 1;
    for (int i = 0; i < ns; i++) {
        int a = na >= 0 ? (ax[i] == ONNX_VUNK ? -1 : infer_axis(ax[i], x.rank)) : (i < x.rank ? i : -1);
        int64_t step = nsp >= 0 ? sp[i] : 1, s = st[i], e = en[i];
        if (a < 0 || step == 0 || step == ONNX_VUNK || s == ONNX_VUNK || e == ONNX_VUNK) return 0;
        int64_t dim = x.d[a];
        if (dim < 0) {
            o.d[a] = -1;
            continue;
        }
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        int64_t len;
        if (step > 0) {
            s = s < 0 ? 0 : (s > dim ? dim : s);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            len = e > s ? (e - s - 1) / step + 1 : 0;
        } else {
            s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            len = s > e ? (s - e - 1) / (-step) + 1 : 0;
        }
        o.d[a] = len;
        b[a] = s;
        stp[a] = step;
    }
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    if (rc < 0) return rc;
    /* values: output element idx reads input element b + idx * step on every axis */
    int64_t v[ONNX_MAX_VALUES], ov[ONNX_MAX_VALUES], idx[HSDAG_MAX_RANK];
    int n, m = infer_small(&o);
    if (m < 0 || !infer_vals(r, nd, 0, v, &n) || infer_small(&x) != n) return 0;
    for (int f = 0; f < m; f++) {
        infer_unflat(&o, f, idx);
        int64_t flat = 0;
        for (int a = 0; a < x.rank; a++) {
            int64_t k = b[a] + idx[a] * stp[a];
            if (k < 0 || k >= x.d[a]) return 0;
            flat = flat * x.d[a] + k;
        }
        ov[f] = v[flat];
    }
    return infer_out_vals(r, nd, 0, ov, m);
}

static int infer_reduce(onnx_reader *r, const Onnx__NodeProto *nd, int arg)
{
    ish x, o;
    int64_t ax[HSDAG_MAX_RANK];
    if (!infer_in(r, nd, 0, &x)) return 0;
    int keep = onnx_attr_int(nd, "keepdims", 1) != 0, na, mark[HSDAG_MAX_RANK] = {0};
    if (arg) {
        ax[0] = onnx_attr_int(nd, "axis", 0);
        na = 1;
    } else {
        na = infer_axes(r, nd, ax);
        if (na == -2) return 0;
        if (na <= 0 && onnx_attr_int(nd, "noop_with_empty_axes", 0))
            return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &x);
    }
    if (na <= 0) {
        for (int i = 0; i < x.rank; i++) mark[i] = 1;
    } else {
        for (int i = 0; i < na; i++) {
            int a = infer_axis(ax[i], x.rank);
            if (a < 0) return 0;
            mark[a] = 1;
        }
    }
    o.rank = 0;
    for (int i = 0; i < x.rank; i++) {
        if (!mark[i])
            o.d[o.rank++] = x.d[i];
        else if (keep)
            o.d[o.rank++] = 1;
    }
    return infer_out(r, nd, 0, arg ? HSDAG_DT_I64 : infer_dtype(r, nd, 0), &o);
}

static int infer_split(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x;
    int64_t sp[ONNX_MAX_VALUES];
    if (!infer_in(r, nd, 0, &x) || nd->n_output < 1) return 0;
    int ax = infer_axis(onnx_attr_int(nd, "axis", 0), x.rank), n = -1;
    if (ax < 0) return 0;
    n = infer_attr_ints(nd, "split", sp, ONNX_MAX_VALUES);
    if (n < 0 && nd->n_input >= 2 && *nd->input[1] && !infer_vals(r, nd, 1, sp, &n)) return 0;
    if (n >= 0 && (size_t)n != nd->n_output) return 0;
    for (size_t k = 0; k < nd->n_output; k++) {
        ish o = x;
        if (n >= 0)
            o.d[ax] = sp[k] == ONNX_VUNK || sp[k] < 0 ? -1 : sp[k];
        else
            o.d[ax] =
                (x.d[ax] >= 0 && x.d[ax] % (int64_t)nd->n_output == 0) ? x.d[ax] / (int64_t)nd->n_output : -1;
        int rc = infer_out(r, nd, k, infer_dtype(r, nd, 0), &o);
        if (rc < 0) return rc;
    }
    return 0;
}

static int infer_shape_op(onnx_reader *r, const Onnx__NodeProto *nd, int size)
{
    ish x, o;
    if (!infer_in(r, nd, 0, &x)) return 0;
    int64_t v[HSDAG_MAX_RANK];
    if (size) {
        o.rank = 0;
        int rc = infer_out(r, nd, 0, HSDAG_DT_I64, &o);
        int64_t p = infer_prod(&x, 0, x.rank);
        return (rc < 0 || p < 0) ? rc : infer_out_vals(r, nd, 0, &p, 1);
    }
    int64_t s = onnx_attr_int(nd, "start", 0), e = onnx_attr_int(nd, "end", x.rank);
    if (s < 0) s += x.rank;
    if (e < 0) e += x.rank;
    s = s < 0 ? 0 : (s > x.rank ? x.rank : s);
    e = e < 0 ? 0 : (e > x.rank ? x.rank : e);
    int n = e > s ? (int)(e - s) : 0;
    for (int i = 0; i < n; i++) v[i] = x.d[s + i] < 0 ? ONNX_VUNK : x.d[s + i];
    o.rank = 1;
    o.d[0] = n;
    int rc = infer_out(r, nd, 0, HSDAG_DT_I64, &o);
    return rc < 0 ? rc : infer_out_vals(r, nd, 0, v, n);
}

static int infer_expand(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, s, o;
    int64_t v[ONNX_MAX_VALUES];
    int n;
    if (!infer_in(r, nd, 0, &x) || !infer_vals(r, nd, 1, v, &n) || n > HSDAG_MAX_RANK) return 0;
    s.rank = n;
    for (int i = 0; i < n; i++) s.d[i] = (v[i] == ONNX_VUNK || v[i] < 0) ? -1 : v[i];
    if (!infer_bcast(&x, &s, &o)) return 0;
    return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
}

static int infer_pad_tile(onnx_reader *r, const Onnx__NodeProto *nd, int tile)
{
    ish x, o;
    int64_t v[ONNX_MAX_VALUES];
    int n = -1;
    if (!infer_in(r, nd, 0, &x)) return 0;
    if (!tile) n = infer_attr_ints(nd, "pads", v, ONNX_MAX_VALUES);
    if (n < 0 && !infer_vals(r, nd, 1, v, &n)) return 0;
    if (n != (tile ? x.rank : 2 * x.rank) || !infer_all_known(v, n)) return 0;
    o = x;
    for (int i = 0; i < x.rank; i++) {
        if (x.d[i] < 0) continue;
        if (tile)
            o.d[i] = infer_mul(x.d[i], v[i]);
        else if (!infer_sane(x.d[i]) || !infer_sane(v[i]) || !infer_sane(v[x.rank + i]))
            o.d[i] = -1;
        else
            o.d[i] = x.d[i] + v[i] + v[x.rank + i] >= 0 ? x.d[i] + v[i] + v[x.rank + i] : -1;
    }
    return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
}

static int infer_constshape(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish o;
    int64_t v[ONNX_MAX_VALUES], fill = 0;
    int n;
    if (!infer_vals(r, nd, 0, v, &n) || n > HSDAG_MAX_RANK) return 0;
    o.rank = n;
    for (int i = 0; i < n; i++) o.d[i] = (v[i] == ONNX_VUNK || v[i] < 0) ? -1 : v[i];
    const Onnx__AttributeProto *a = onnx_attr(nd, "value");
    hsdag_dtype dt = (a && a->t) ? onnx_dtype(a->t->data_type) : HSDAG_DT_F32;
    int rc = infer_out(r, nd, 0, dt, &o);
    int cnt = infer_small(&o);
    if (rc < 0 || cnt < 0 || !infer_is_int(dt)) return rc;
    if (a && a->t && onnx_tensorproto_ints(a->t, &fill, 1) != 1) return 0;
    for (int i = 0; i < cnt; i++) v[i] = fill;
    return infer_out_vals(r, nd, 0, v, cnt);
}

/* Einsum with an explicit "->" output and no ellipsis: each output letter takes its size from the
 * operands. */
static int infer_einsum(onnx_reader *r, const Onnx__NodeProto *nd)
{
    const Onnx__AttributeProto *a = onnx_attr(nd, "equation");
    if (!a || !a->has_s || a->s.len > 256) return 0;
    int64_t size[128];
    for (int i = 0; i < 128; i++) size[i] = -2;
    size_t k = 0, i = 0, len = a->s.len;
    const uint8_t *p = a->s.data;
    ish x;
    int pos = 0, have = 0;
    for (; i < len; i++) {
        uint8_t c = p[i];
        if (c == ' ') continue;
        if (c == ',' || c == '-') {
            if (have && pos != x.rank) return 0;
            if (c == '-') break;
            k++, pos = 0, have = 0;
            continue;
        }
        if (c == '.' || c >= 128) return 0;
        if (!have) {
            if (!infer_in(r, nd, k, &x)) return 0;
            have = 1;
        }
        if (pos >= x.rank) return 0;
        if (size[c] < 0 || size[c] == 1) size[c] = x.d[pos];
        pos++;
    }
    if (i + 1 >= len || p[i + 1] != '>' || k + 1 != nd->n_input) return 0;
    ish o;
    o.rank = 0;
    for (i += 2; i < len; i++) {
        uint8_t c = p[i];
        if (c == ' ') continue;
        if (c >= 128 || size[c] == -2 || o.rank >= HSDAG_MAX_RANK) return 0;
        o.d[o.rank++] = size[c];
    }
    return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
}

/* Range(start, limit, delta) of known integer scalars: max(ceil((limit - start) / delta), 0) elements. */
static int infer_range(onnx_reader *r, const Onnx__NodeProto *nd)
{
    int64_t a[ONNX_MAX_VALUES], l[ONNX_MAX_VALUES], d[ONNX_MAX_VALUES];
    int na, nl, ndl;
    if (nd->n_input < 3 || !infer_vals(r, nd, 0, a, &na) || !infer_vals(r, nd, 1, l, &nl) ||
        !infer_vals(r, nd, 2, d, &ndl) || na != 1 || nl != 1 || ndl != 1 || !infer_all_known(a, 1) ||
        !infer_all_known(l, 1) || !infer_all_known(d, 1) || d[0] == 0 || !infer_sane(a[0]) ||
        !infer_sane(l[0]) || !infer_sane(d[0]))
        return 0;
    int64_t span = l[0] - a[0], n = d[0] > 0 ? (span + d[0] - 1) / d[0] : (span + d[0] + 1) / d[0];
    if (n < 0) n = 0;
    ish o = {.rank = 1, .d = {n}};
    int rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
    if (rc < 0 || n > ONNX_MAX_VALUES) return rc;
    int64_t v[ONNX_MAX_VALUES];
    for (int64_t i = 0; i < n; i++) v[i] = a[0] + i * d[0];
    return infer_out_vals(r, nd, 0, v, (int)n);
}

/* Resize(X, roi, scales, sizes) with known integer sizes (opset 11+; scales are floats, not tracked). */
static int infer_resize(onnx_reader *r, const Onnx__NodeProto *nd)
{
    ish x, o;
    int64_t v[ONNX_MAX_VALUES];
    int n;
    if (!infer_in(r, nd, 0, &x) || nd->n_input < 4 || !*nd->input[3] || !infer_vals(r, nd, 3, v, &n) ||
        n != x.rank || onnx_attr(nd, "axes"))
        return 0;
    o.rank = n;
    for (int i = 0; i < n; i++) o.d[i] = (v[i] == ONNX_VUNK || v[i] < 0) ? -1 : v[i];
    return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o);
}

static int infer_node(onnx_reader *r, const Onnx__NodeProto *nd)
{
    infer_op op = infer_lookup(nd->op_type);
    ish x, y, o;
    int rc;
    switch (op) {
    case IOP_NONE:
        return 0;
    case IOP_SAME:
    case IOP_NOT:
    case IOP_CAST:
    case IOP_CASTLIKE:
    case IOP_DROPOUT: {
        if (!infer_in(r, nd, 0, &x)) return 0;
        hsdag_dtype dt = infer_dtype(r, nd, 0);
        if (op == IOP_NOT) dt = HSDAG_DT_BOOL;
        if (op == IOP_CAST) {
            const Onnx__AttributeProto *to = onnx_attr(nd, "to");
            dt = (to && to->has_i && to->i >= 0 && to->i <= INT32_MAX) ? onnx_dtype((int32_t)to->i)
                                                                       : HSDAG_DT_UNKNOWN;
        }
        if (op == IOP_CASTLIKE) dt = infer_dtype(r, nd, 1);
        if ((rc = infer_out(r, nd, 0, dt, &x)) < 0) return rc;
        if (op == IOP_DROPOUT && (rc = infer_out(r, nd, 1, HSDAG_DT_BOOL, &x)) < 0) return rc;
        if (strcmp(nd->op_type, "Identity") == 0 || op == IOP_CAST) return infer_copy_vals(r, nd, &x);
        return 0;
    }
    case IOP_BCAST:
    case IOP_CMP:
    case IOP_WHERE: {
        if (nd->n_input < 1 || !infer_in(r, nd, 0, &o)) return 0;
        for (size_t k = 1; k < nd->n_input; k++)
            if (!infer_in(r, nd, k, &y) || !infer_bcast(&o, &y, &o)) return 0;
        hsdag_dtype dt = op == IOP_CMP ? HSDAG_DT_BOOL : infer_dtype(r, nd, op == IOP_WHERE ? 1 : 0);
        if (op == IOP_CMP && strncmp(nd->op_type, "Bit", 3) == 0) dt = infer_dtype(r, nd, 0);
        if ((rc = infer_out(r, nd, 0, dt, &o)) < 0) return rc;
        return infer_elem_vals(r, nd, &o);
    }
    case IOP_CONV:
    case IOP_CONVT:
    case IOP_POOL:
        return infer_conv(r, nd, op);
    case IOP_GPOOL:
        if (!infer_in(r, nd, 0, &x) || x.rank < 3) return 0;
        for (int i = 2; i < x.rank; i++) x.d[i] = 1;
        return infer_out(r, nd, 0, infer_dtype(r, nd, 0), &x);
    case IOP_GEMM:
        return infer_gemm(r, nd);
    case IOP_MATMUL:
        return infer_matmul(r, nd);
    case IOP_FLATTEN: {
        if (!infer_in(r, nd, 0, &x)) return 0;
        int64_t a = onnx_attr_int(nd, "axis", 1);
        if (a < 0) a += x.rank;
        if (a < 0 || a > x.rank) return 0;
        o.rank = 2;
        o.d[0] = infer_prod(&x, 0, (int)a);
        o.d[1] = infer_prod(&x, (int)a, x.rank);
        if ((rc = infer_out(r, nd, 0, infer_dtype(r, nd, 0), &o)) < 0) return rc;
        return infer_copy_vals(r, nd, &o);
    }
    case IOP_RESHAPE:
        return infer_reshape(r, nd);
    case IOP_TRANSPOSE:
        return infer_transpose(r, nd);
    case IOP_CONCAT:
        return infer_concat(r, nd);
    case IOP_UNSQUEEZE:
        return infer_unsqueeze(r, nd);
    case IOP_SQUEEZE:
        return infer_squeeze(r, nd);
    case IOP_GATHER:
        return infer_gather(r, nd);
    case IOP_SLICE:
        return infer_slice(r, nd);
    case IOP_REDUCE:
        return infer_reduce(r, nd, 0);
    case IOP_ARGREDUCE:
        return infer_reduce(r, nd, 1);
    case IOP_SPLIT:
        return infer_split(r, nd);
    case IOP_SHAPE:
        return infer_shape_op(r, nd, 0);
    case IOP_SIZE:
        return infer_shape_op(r, nd, 1);
    case IOP_EXPAND:
        return infer_expand(r, nd);
    case IOP_PAD:
        return infer_pad_tile(r, nd, 0);
    case IOP_TILE:
        return infer_pad_tile(r, nd, 1);
    case IOP_CONSTSHAPE:
        return infer_constshape(r, nd);
    case IOP_EINSUM:
        return infer_einsum(r, nd);
    case IOP_RANGE:
        return infer_range(r, nd);
    case IOP_RESIZE:
        return infer_resize(r, nd);
    }
    return 0;
}

int onnx_infer_run(onnx_reader *r, const Onnx__GraphProto *g)
{
    for (size_t v = 0; v < g->n_node; v++) {
        const Onnx__NodeProto *nd = g->node[v];
        if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx") != 0) continue;
        r->cur = r->io_ids + r->io_off[v];
        int rc = infer_node(r, nd);
        if (rc < 0) return rc;
    }
    return 0;
}
