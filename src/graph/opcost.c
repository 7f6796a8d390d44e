/* opcost.c - op classification (ONNX, OpenVINO, PyTorch/PipeDream and NNCF spellings) and FLOP estimates from
 * shapes.
 * Not here: parsing files, measured latencies, device speeds (sim); no shape inference (shapes come from the
 * importer).
 * Entry points: hsdag_opclass_of, hsdag_opclass_name, hsdag_opcost_estimate.
 *
 * Rules (multiply-add = 2 FLOPs; elems = product of dims; any unknown dim needed by a rule gives 0 FLOPs):
 *   Conv                 2 * out_elems * prod(W[1:])      (W = weight input; grouped conv needs no group
 * factor:
 *                                                          W[1] is already C_in/group)
 *   GroupConvolution     2 * out_elems * prod(W[2:])      (OpenVINO weight layout [G, C_out/G, C_in/G, k...])
 *   ConvTranspose        2 * in_elems * prod(W[1:])       (W = [C_in, C_out/group, k...]; OpenVINO
 *                                                          ConvolutionBackpropData likewise, the group form
 * uses W[2:])
 *   MatMul/Linear/FC     2 * out_elems * K                (K = A's last dim, or A[-2] with trans_a; else from
 * B)
 *   Gemm                 2 * M * N * K                    (transA/transB honoured; C not counted)
 *   Einsum               2 * prod(all distinct index sizes) for >= 2 operands, prod(...) for one operand;
 *                        "..." spans get one index per broadcast position; 0 if unparsable
 *   LSTM/GRU/RNN (ONNX)  2 * seq * batch * (elems(W) + elems(R))   (gate matmuls only)
 *   elementwise          out_elems (x4 for transcendental ops: Exp, Log, Tanh, Sigmoid, Erf, Gelu, Pow, Sqrt,
 * ...)
 *   pooling              out_elems * window; the window is max(1, in_elems / out_elems) because
 * hsdag_opcost_in
 *                        carries no kernel: exact for global and non-overlapping pools, low for overlapping
 *                        ones (importers that know kernel_shape may override)
 *   norms, softmax       5 * elems (out, else input 0)
 *   reductions           in_elems
 *   data movement, bookkeeping: 0;  unknown ops: 0 with known = 0 (byte-only cost)
 * Bookkeeping (zero cost, no compute at inference): Constant, Identity, Shape, Size, Parameter, Result,
 * Const,
 * ShapeOf, Dropout (an identity at inference), graph-input/-output/constant markers of NNCF and torch.fx.
 * Names match exactly first (ONNX/OpenVINO CamelCase, where case carries meaning: ONNX "Sum", "Mean", "Max"
 * are
 * elementwise, torch "sum", "mean", "max" are reductions), then case-insensitively with '_', '.', '-' removed
 * and any "(...)" argument list, "aten::"-style namespace and trailing '_' (in-place torch ops) dropped. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "hsdag/graph.h"

/* FLOP rule within a class. */
typedef enum opcost_rule {
    OPCOST_R_NONE = 0,
    OPCOST_R_CONV,   /* weight at wslot, prod(W[1:]) */
    OPCOST_R_GCONV,  /* OpenVINO GroupConvolution, prod(W[2:]) */
    OPCOST_R_CONVT,  /* transposed, in_elems * prod(W[1:]) */
    OPCOST_R_GCONVT, /* OpenVINO GroupConvolutionBackpropData, in_elems * prod(W[2:]) */
    OPCOST_R_MATMUL, /* A @ B, B at wslot */
    OPCOST_R_LINEAR, /* x @ W^T, W = [N, K] at wslot */
    OPCOST_R_GEMM,
    OPCOST_R_EINSUM,
    OPCOST_R_RNN, /* ONNX LSTM/GRU/RNN: X, W, R */
    OPCOST_R_ELEM,
    OPCOST_R_ELEM4, /* transcendental elementwise */
    OPCOST_R_POOL,
    OPCOST_R_NORM, /* 5 * elems (norms and softmax) */
    OPCOST_R_REDUCE,
    OPCOST_R_ZERO
} opcost_rule;

typedef struct opcost_entry {
    const char *name;
    uint8_t cls;   /* hsdag_opclass */
    uint8_t rule;  /* opcost_rule */
    uint8_t wslot; /* input slot of the weight / second operand */
} opcost_entry;

#define E_(n, c, r)                      \
    {                                    \
        n, HSDAG_OP_##c, OPCOST_R_##r, 1 \
    }
#define EW_(n, c, r, w)                  \
    {                                    \
        n, HSDAG_OP_##c, OPCOST_R_##r, w \
    }

/* ---- exact-case table: ONNX and OpenVINO op types (sorted by strcmp for bsearch) ---- */
static const opcost_entry opcost_exact[] = {
    E_("Abs", ELEMWISE, ELEM),
    E_("Acos", ELEMWISE, ELEM4),
    E_("Acosh", ELEMWISE, ELEM4),
    E_("Add", ELEMWISE, ELEM),
    E_("And", ELEMWISE, ELEM),
    E_("ArgMax", REDUCE, REDUCE),
    E_("ArgMin", REDUCE, REDUCE),
    E_("Asin", ELEMWISE, ELEM4),
    E_("Asinh", ELEMWISE, ELEM4),
    E_("Atan", ELEMWISE, ELEM4),
    E_("Atanh", ELEMWISE, ELEM4),
    E_("AveragePool", POOL, POOL),
    E_("AvgPool", POOL, POOL),
    E_("BatchNormInference", NORM, NORM),
    E_("BatchNormalization", NORM, NORM),
    E_("BiasGelu", ELEMWISE, ELEM4),
    E_("BitShift", ELEMWISE, ELEM),
    E_("BitwiseAnd", ELEMWISE, ELEM),
    E_("BitwiseNot", ELEMWISE, ELEM),
    E_("BitwiseOr", ELEMWISE, ELEM),
    E_("BitwiseXor", ELEMWISE, ELEM),
    E_("Broadcast", DATAMOVE, ZERO),
    E_("Cast", ELEMWISE, ELEM),
    E_("CastLike", ELEMWISE, ELEM),
    E_("Ceil", ELEMWISE, ELEM),
    E_("Ceiling", ELEMWISE, ELEM),
    E_("Celu", ELEMWISE, ELEM4),
    E_("Clamp", ELEMWISE, ELEM),
    E_("Clip", ELEMWISE, ELEM),
    E_("Compress", DATAMOVE, ZERO),
    E_("Concat", DATAMOVE, ZERO),
    E_("Const", BOOKKEEPING, ZERO),
    E_("Constant", BOOKKEEPING, ZERO),
    E_("ConstantOfShape", DATAMOVE, ZERO),
    E_("Conv", CONV, CONV),
    EW_("ConvInteger", CONV, CONV, 1),
    E_("ConvTranspose", CONV, CONVT),
    E_("Convert", ELEMWISE, ELEM),
    E_("ConvertLike", ELEMWISE, ELEM),
    E_("Convolution", CONV, CONV),
    E_("ConvolutionBackpropData", CONV, CONVT),
    E_("Cos", ELEMWISE, ELEM4),
    E_("Cosh", ELEMWISE, ELEM4),
    E_("CumSum", ELEMWISE, ELEM),
    E_("DepthToSpace", DATAMOVE, ZERO),
    E_("DequantizeLinear", ELEMWISE, ELEM),
    E_("Div", ELEMWISE, ELEM),
    E_("Divide", ELEMWISE, ELEM),
    E_("Dropout", BOOKKEEPING, ZERO),
    E_("DynamicQuantizeLinear", ELEMWISE, ELEM),
    E_("Einsum", MATMUL, EINSUM),
    E_("Elu", ELEMWISE, ELEM4),
    E_("Equal", ELEMWISE, ELEM),
    E_("Erf", ELEMWISE, ELEM4),
    E_("Exp", ELEMWISE, ELEM4),
    E_("Expand", DATAMOVE, ZERO),
    E_("FakeQuantize", ELEMWISE, ELEM),
    E_("FastGelu", ELEMWISE, ELEM4),
    E_("Flatten", DATAMOVE, ZERO),
    E_("Floor", ELEMWISE, ELEM),
    E_("FloorMod", ELEMWISE, ELEM),
    E_("FullyConnected", MATMUL, LINEAR),
    E_("FusedConv", CONV, CONV),
    E_("FusedMatMul", MATMUL, MATMUL),
    E_("GRU", MATMUL, RNN),
    E_("Gather", DATAMOVE, ZERO),
    E_("GatherElements", DATAMOVE, ZERO),
    E_("GatherND", DATAMOVE, ZERO),
    E_("Gelu", ELEMWISE, ELEM4),
    E_("Gemm", MATMUL, GEMM),
    E_("GlobalAveragePool", POOL, POOL),
    E_("GlobalLpPool", POOL, POOL),
    E_("GlobalMaxPool", POOL, POOL),
    E_("Greater", ELEMWISE, ELEM),
    E_("GreaterEqual", ELEMWISE, ELEM),
    E_("GreaterOrEqual", ELEMWISE, ELEM),
    E_("GroupConvolution", CONV, GCONV),
    E_("GroupConvolutionBackpropData", CONV, GCONVT),
    E_("GroupNormalization", NORM, NORM),
    E_("HSigmoid", ELEMWISE, ELEM),
    E_("HSwish", ELEMWISE, ELEM),
    E_("HardSigmoid", ELEMWISE, ELEM),
    E_("HardSwish", ELEMWISE, ELEM),
    E_("Hardmax", SOFTMAX, NORM),
    E_("Identity", BOOKKEEPING, ZERO),
    E_("InstanceNormalization", NORM, NORM),
    E_("Interpolate", DATAMOVE, ZERO),
    E_("IsInf", ELEMWISE, ELEM),
    E_("IsNaN", ELEMWISE, ELEM),
    E_("LRN", NORM, NORM),
    E_("LSTM", MATMUL, RNN),
    E_("LayerNormalization", NORM, NORM),
    E_("LeakyRelu", ELEMWISE, ELEM),
    E_("Less", ELEMWISE, ELEM),
    E_("LessEqual", ELEMWISE, ELEM),
    E_("LessOrEqual", ELEMWISE, ELEM),
    E_("Log", ELEMWISE, ELEM4),
    E_("LogSoftmax", SOFTMAX, NORM),
    E_("LogicalAnd", ELEMWISE, ELEM),
    E_("LogicalNot", ELEMWISE, ELEM),
    E_("LogicalOr", ELEMWISE, ELEM),
    E_("LogicalXor", ELEMWISE, ELEM),
    E_("LpNormalization", NORM, NORM),
    E_("LpPool", POOL, POOL),
    E_("MVN", NORM, NORM),
    E_("MatMul", MATMUL, MATMUL),
    EW_("MatMulInteger", MATMUL, MATMUL, 1),
    E_("Max", ELEMWISE, ELEM),
    E_("MaxPool", POOL, POOL),
    E_("MaxUnpool", DATAMOVE, ZERO),
    E_("Maximum", ELEMWISE, ELEM),
    E_("Mean", ELEMWISE, ELEM),
    E_("MeanVarianceNormalization", NORM, NORM),
    E_("Min", ELEMWISE, ELEM),
    E_("Minimum", ELEMWISE, ELEM),
    E_("Mish", ELEMWISE, ELEM4),
    E_("Mod", ELEMWISE, ELEM),
    E_("Mul", ELEMWISE, ELEM),
    E_("Multiply", ELEMWISE, ELEM),
    E_("Neg", ELEMWISE, ELEM),
    E_("Negative", ELEMWISE, ELEM),
    E_("NonZero", DATAMOVE, ZERO),
    E_("NormalizeL2", NORM, NORM),
    E_("Not", ELEMWISE, ELEM),
    E_("NotEqual", ELEMWISE, ELEM),
    E_("OneHot", DATAMOVE, ZERO),
    E_("Or", ELEMWISE, ELEM),
    E_("PRelu", ELEMWISE, ELEM),
    E_("Pad", DATAMOVE, ZERO),
    E_("Parameter", BOOKKEEPING, ZERO),
    E_("Pow", ELEMWISE, ELEM4),
    E_("Power", ELEMWISE, ELEM4),
    E_("QLinearAdd", ELEMWISE, ELEM),
    EW_("QLinearConv", CONV, CONV, 3),
    EW_("QLinearMatMul", MATMUL, MATMUL, 3),
    E_("QLinearMul", ELEMWISE, ELEM),
    E_("QuantizeLinear", ELEMWISE, ELEM),
    E_("RNN", MATMUL, RNN),
    E_("Range", DATAMOVE, ZERO),
    E_("Reciprocal", ELEMWISE, ELEM),
    E_("ReduceL1", REDUCE, REDUCE),
    E_("ReduceL2", REDUCE, REDUCE),
    E_("ReduceLogSum", REDUCE, REDUCE),
    E_("ReduceLogSumExp", REDUCE, REDUCE),
    E_("ReduceLogicalAnd", REDUCE, REDUCE),
    E_("ReduceLogicalOr", REDUCE, REDUCE),
    E_("ReduceMax", REDUCE, REDUCE),
    E_("ReduceMean", REDUCE, REDUCE),
    E_("ReduceMin", REDUCE, REDUCE),
    E_("ReduceProd", REDUCE, REDUCE),
    E_("ReduceSum", REDUCE, REDUCE),
    E_("ReduceSumSquare", REDUCE, REDUCE),
    E_("Relu", ELEMWISE, ELEM),
    E_("Reshape", DATAMOVE, ZERO),
    E_("Resize", DATAMOVE, ZERO),
    E_("Result", BOOKKEEPING, ZERO),
    E_("Reverse", DATAMOVE, ZERO),
    E_("ReverseSequence", DATAMOVE, ZERO),
    E_("Roll", DATAMOVE, ZERO),
    E_("Round", ELEMWISE, ELEM),
    E_("Scatter", DATAMOVE, ZERO),
    E_("ScatterElements", DATAMOVE, ZERO),
    E_("ScatterElementsUpdate", DATAMOVE, ZERO),
    E_("ScatterND", DATAMOVE, ZERO),
    E_("ScatterNDUpdate", DATAMOVE, ZERO),
    E_("ScatterUpdate", DATAMOVE, ZERO),
    E_("Select", ELEMWISE, ELEM),
    E_("Selu", ELEMWISE, ELEM4),
    E_("Shape", BOOKKEEPING, ZERO),
    E_("ShapeOf", BOOKKEEPING, ZERO),
    E_("ShuffleChannels", DATAMOVE, ZERO),
    E_("Sigmoid", ELEMWISE, ELEM4),
    E_("Sign", ELEMWISE, ELEM),
    E_("Sin", ELEMWISE, ELEM4),
    E_("Sinh", ELEMWISE, ELEM4),
    E_("Size", BOOKKEEPING, ZERO),
    E_("SkipLayerNormalization", NORM, NORM),
    E_("Slice", DATAMOVE, ZERO),
    E_("SoftMax", SOFTMAX, NORM),
    E_("SoftPlus", ELEMWISE, ELEM4),
    E_("SoftSign", ELEMWISE, ELEM4),
    E_("Softmax", SOFTMAX, NORM),
    E_("Softplus", ELEMWISE, ELEM4),
    E_("Softsign", ELEMWISE, ELEM4),
    E_("SpaceToDepth", DATAMOVE, ZERO),
    E_("Split", DATAMOVE, ZERO),
    E_("Sqrt", ELEMWISE, ELEM4),
    E_("SquaredDifference", ELEMWISE, ELEM),
    E_("Squeeze", DATAMOVE, ZERO),
    E_("StridedSlice", DATAMOVE, ZERO),
    E_("Sub", ELEMWISE, ELEM),
    E_("Subtract", ELEMWISE, ELEM),
    E_("Sum", ELEMWISE, ELEM),
    E_("Swish", ELEMWISE, ELEM4),
    E_("Tan", ELEMWISE, ELEM4),
    E_("Tanh", ELEMWISE, ELEM4),
    E_("ThresholdedRelu", ELEMWISE, ELEM),
    E_("Tile", DATAMOVE, ZERO),
    E_("TopK", REDUCE, REDUCE),
    E_("Transpose", DATAMOVE, ZERO),
    E_("Trilu", DATAMOVE, ZERO),
    E_("Unsqueeze", DATAMOVE, ZERO),
    E_("Upsample", DATAMOVE, ZERO),
    E_("VariadicSplit", DATAMOVE, ZERO),
    E_("Where", ELEMWISE, ELEM),
    E_("Xor", ELEMWISE, ELEM),
};

/* ---- normalised table (lowercase, no '_', '.', '-'): PyTorch / PipeDream / NNCF / torch.fx spellings
 * (sorted by strcmp). Every exact-table name is also tried lowercased against the exact table. ---- */
static const opcost_entry opcost_norm[] = {
    E_("adaptiveavgpool1d", POOL, POOL),
    E_("adaptiveavgpool2d", POOL, POOL),
    E_("adaptiveavgpool3d", POOL, POOL),
    E_("adaptivemaxpool2d", POOL, POOL),
    E_("add", ELEMWISE, ELEM),
    E_("addmm", MATMUL, MATMUL),
    E_("alias", BOOKKEEPING, ZERO),
    E_("avgpool1d", POOL, POOL),
    E_("avgpool2d", POOL, POOL),
    E_("avgpool3d", POOL, POOL),
    E_("baddbmm", MATMUL, MATMUL),
    E_("batchnorm", NORM, NORM),
    E_("batchnorm1d", NORM, NORM),
    E_("batchnorm2d", NORM, NORM),
    E_("batchnorm3d", NORM, NORM),
    E_("bmm", MATMUL, MATMUL),
    E_("cat", DATAMOVE, ZERO),
    E_("chunk", DATAMOVE, ZERO),
    E_("clamp", ELEMWISE, ELEM),
    E_("clampmin", ELEMWISE, ELEM),
    E_("clone", DATAMOVE, ZERO),
    E_("concat", DATAMOVE, ZERO),
    E_("const", BOOKKEEPING, ZERO),
    E_("constant", BOOKKEEPING, ZERO),
    E_("contiguous", DATAMOVE, ZERO),
    E_("conv1d", CONV, CONV),
    E_("conv2d", CONV, CONV),
    E_("conv3d", CONV, CONV),
    E_("convtranspose1d", CONV, CONVT),
    E_("convtranspose2d", CONV, CONVT),
    E_("convtranspose3d", CONV, CONVT),
    E_("detach", BOOKKEEPING, ZERO),
    E_("div", ELEMWISE, ELEM),
    E_("dropout", BOOKKEEPING, ZERO),
    E_("dropout2d", BOOKKEEPING, ZERO),
    E_("einsum", MATMUL, EINSUM),
    E_("embedding", DATAMOVE, ZERO),
    E_("eq", ELEMWISE, ELEM),
    E_("exp", ELEMWISE, ELEM4),
    E_("expand", DATAMOVE, ZERO),
    E_("expandas", DATAMOVE, ZERO),
    E_("fill", DATAMOVE, ZERO),
    E_("flatten", DATAMOVE, ZERO),
    E_("gelu", ELEMWISE, ELEM4),
    E_("getattr", BOOKKEEPING, ZERO),
    E_("getitem", DATAMOVE, ZERO),
    E_("groupnorm", NORM, NORM),
    E_("hardsigmoid", ELEMWISE, ELEM),
    E_("hardswish", ELEMWISE, ELEM),
    E_("hardtanh", ELEMWISE, ELEM),
    E_("identity", BOOKKEEPING, ZERO),
    E_("index", DATAMOVE, ZERO),
    E_("input", BOOKKEEPING, ZERO),
    E_("instancenorm2d", NORM, NORM),
    E_("layernorm", NORM, NORM),
    E_("leakyrelu", ELEMWISE, ELEM),
    E_("liftfreshcopy", BOOKKEEPING, ZERO),
    E_("linalgvectornorm", REDUCE, REDUCE),
    E_("linear", MATMUL, LINEAR),
    E_("logsoftmax", SOFTMAX, NORM),
    E_("lstm", MATMUL, RNN),
    E_("maskedfill", ELEMWISE, ELEM),
    E_("matmul", MATMUL, MATMUL),
    E_("max", REDUCE, REDUCE),
    E_("maxpool1d", POOL, POOL),
    E_("maxpool2d", POOL, POOL),
    E_("maxpool3d", POOL, POOL),
    E_("mean", REDUCE, REDUCE),
    E_("min", REDUCE, REDUCE),
    E_("mm", MATMUL, MATMUL),
    E_("mul", ELEMWISE, ELEM),
    E_("ne", ELEMWISE, ELEM),
    E_("newzeros", DATAMOVE, ZERO),
    E_("nncfmodelconst", BOOKKEEPING, ZERO),
    E_("nncfmodelinput", BOOKKEEPING, ZERO),
    E_("nncfmodeloutput", BOOKKEEPING, ZERO),
    E_("output", BOOKKEEPING, ZERO),
    E_("pad", DATAMOVE, ZERO),
    E_("permute", DATAMOVE, ZERO),
    E_("placeholder", BOOKKEEPING, ZERO),
    E_("relu", ELEMWISE, ELEM),
    E_("relu6", ELEMWISE, ELEM),
    E_("reshape", DATAMOVE, ZERO),
    E_("roll", DATAMOVE, ZERO),
    E_("rsqrt", ELEMWISE, ELEM4),
    E_("scaleddotproductattention", UNKNOWN, NONE),
    E_("select", DATAMOVE, ZERO),
    E_("sigmoid", ELEMWISE, ELEM4),
    E_("silu", ELEMWISE, ELEM4),
    E_("size", BOOKKEEPING, ZERO),
    E_("slice", DATAMOVE, ZERO),
    E_("softmax", SOFTMAX, NORM),
    E_("split", DATAMOVE, ZERO),
    E_("sqrt", ELEMWISE, ELEM4),
    E_("squeeze", DATAMOVE, ZERO),
    E_("sub", ELEMWISE, ELEM),
    E_("sum", REDUCE, REDUCE),
    E_("tanh", ELEMWISE, ELEM4),
    E_("transpose", DATAMOVE, ZERO),
    E_("unflatten", DATAMOVE, ZERO),
    E_("unsqueeze", DATAMOVE, ZERO),
    E_("upsample", DATAMOVE, ZERO),
    E_("view", DATAMOVE, ZERO),
    E_("zero", DATAMOVE, ZERO),
    E_("zeros", DATAMOVE, ZERO),
};
#undef E_
#undef EW_

#define OPCOST_N(t) (sizeof(t) / sizeof((t)[0]))
#define OPCOST_KEYMAX 64

static int opcost_entry_cmp(const void *key, const void *ent)
{
    return strcmp((const char *)key, ((const opcost_entry *)ent)->name);
}

static const opcost_entry *opcost_find(const opcost_entry *t, size_t n, const char *key)
{
    return bsearch(key, t, n, sizeof(*t), opcost_entry_cmp);
}

/* Normalises an op spelling into key[OPCOST_KEYMAX]; returns 0 if it does not fit or is empty. */
static int opcost_normalise(const char *op, char *key)
{
    const char *s = op;
    const char *ns = strstr(op, "::"); /* "aten::conv2d" */
    if (ns) s = ns + 2;
    while (*s == ' ' || *s == '\t' || *s == '_') s++;
    size_t k = 0;
    for (; *s && *s != '(' && *s != ' ' && *s != '['; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '_' || c == '.' || c == '-') continue;
        if (k + 1 >= OPCOST_KEYMAX) return 0;
        key[k++] = (char)tolower(c);
    }
    key[k] = '\0';
    return k > 0;
}

static const opcost_entry *opcost_lookup(const char *op)
{
    if (!op || !*op) return NULL;
    const opcost_entry *e = opcost_find(opcost_exact, OPCOST_N(opcost_exact), op);
    if (e) return e;
    char key[OPCOST_KEYMAX];
    if (!opcost_normalise(op, key)) return NULL;
    e = opcost_find(opcost_norm, OPCOST_N(opcost_norm), key);
    if (e) return e;
    /* PipeDream "Input0", "Input1", ...: graph inputs */
    if (strncmp(key, "input", 5) == 0) {
        const char *d = key + 5;
        while (*d >= '0' && *d <= '9') d++;
        if (*d == '\0') return opcost_find(opcost_norm, OPCOST_N(opcost_norm), "input");
    }
    /* case-insensitive match of an exact-table name ("CONV", "relu", "batch_normalization") */
    for (size_t i = 0; i < OPCOST_N(opcost_exact); i++) {
        const char *a = opcost_exact[i].name, *b = key;
        while (*a && *b && tolower((unsigned char)*a) == *b) a++, b++;
        if (!*a && !*b) return &opcost_exact[i];
    }
    return NULL;
}

hsdag_opclass hsdag_opclass_of(const char *op)
{
    const opcost_entry *e = opcost_lookup(op);
    return e ? (hsdag_opclass)e->cls : HSDAG_OP_UNKNOWN;
}

const char *hsdag_opclass_name(hsdag_opclass c)
{
    switch (c) {
    case HSDAG_OP_UNKNOWN:
        return "unknown";
    case HSDAG_OP_BOOKKEEPING:
        return "bookkeeping";
    case HSDAG_OP_CONV:
        return "conv";
    case HSDAG_OP_MATMUL:
        return "matmul";
    case HSDAG_OP_ELEMWISE:
        return "elementwise";
    case HSDAG_OP_POOL:
        return "pool";
    case HSDAG_OP_NORM:
        return "norm";
    case HSDAG_OP_SOFTMAX:
        return "softmax";
    case HSDAG_OP_REDUCE:
        return "reduce";
    case HSDAG_OP_DATAMOVE:
        return "datamove";
    default:
        return "?";
    }
}

/* ---- shape helpers: -1 means unknown ---- */
static double opcost_elems(const hsdag_shape_ref *s)
{
    if (!s || s->rank < 0 || (s->rank > 0 && !s->dims)) return -1;
    double n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0) return -1;
        n *= (double)s->dims[i];
    }
    return n;
}

/* Product of dims[from:], -1 if unknown or the rank is too small. */
static double opcost_tail(const hsdag_shape_ref *s, int from)
{
    if (!s || s->rank < from || (s->rank > 0 && !s->dims)) return -1;
    double n = 1;
    for (int i = from; i < s->rank; i++) {
        if (s->dims[i] < 0) return -1;
        n *= (double)s->dims[i];
    }
    return n;
}

/* dims[i] counted from the end when i < 0; -1 if absent or unknown. */
static double opcost_dim(const hsdag_shape_ref *s, int i)
{
    if (!s || s->rank <= 0 || !s->dims) return -1;
    int k = i < 0 ? s->rank + i : i;
    if (k < 0 || k >= s->rank) return -1;
    return s->dims[k] < 0 ? -1 : (double)s->dims[k];
}

static const hsdag_shape_ref *opcost_in(const hsdag_opcost_in *in, int k)
{
    return (in->in && k >= 0 && k < in->n_in) ? &in->in[k] : NULL;
}

static const hsdag_shape_ref *opcost_out0(const hsdag_opcost_in *in)
{
    return (in->out && in->n_out > 0) ? &in->out[0] : NULL;
}

/* Output elements, falling back to the largest input (elementwise broadcast). */
static double opcost_out_elems(const hsdag_opcost_in *in, int fallback)
{
    double o = opcost_elems(opcost_out0(in));
    if (o >= 0 || !fallback) return o;
    double best = -1;
    for (int k = 0; k < in->n_in; k++) {
        double e = opcost_elems(opcost_in(in, k));
        if (e > best) best = e;
    }
    return best;
}

static double opcost_pos(double x)
{
    return x > 0 ? x : 0;
}

static double opcost_matmul(const hsdag_opcost_in *in, const opcost_entry *ent)
{
    const hsdag_shape_ref *a = opcost_in(in, 0), *b = opcost_in(in, ent->wslot);
    double k = -1;
    if (a && a->rank == 1)
        k = opcost_dim(a, 0);
    else if (a && a->rank >= 2)
        k = opcost_dim(a, in->trans_a ? -2 : -1);
    if (k < 0 && b) {
        if (ent->rule == OPCOST_R_LINEAR)
            k = opcost_dim(b, -1);
        else if (b->rank == 1)
            k = opcost_dim(b, 0);
        else
            k = opcost_dim(b, in->trans_b ? -1 : -2);
    }
    double out = opcost_elems(opcost_out0(in));
    if (out < 0 && a && b && k > 0 && b->rank >= 1 && b->rank <= 2) {
        /* no output shape: rows of A times columns of a 1-D/2-D B */
        double ea = opcost_elems(a), n;
        if (ent->rule == OPCOST_R_LINEAR)
            n = b->rank == 2 ? opcost_dim(b, 0) : 1;
        else
            n = b->rank == 2 ? opcost_dim(b, in->trans_b ? -2 : -1) : 1;
        if (ea >= 0 && n >= 0) out = ea / k * n;
    }
    if (k < 0 || out < 0) return 0;
    return 2.0 * out * k;
}

static double opcost_gemm(const hsdag_opcost_in *in)
{
    const hsdag_shape_ref *a = opcost_in(in, 0), *b = opcost_in(in, 1), *y = opcost_out0(in);
    double m = -1, n = -1, k = -1;
    if (a && a->rank == 2) {
        m = opcost_dim(a, in->trans_a ? 1 : 0);
        k = opcost_dim(a, in->trans_a ? 0 : 1);
    }
    if (b && b->rank == 2) {
        if (k < 0) k = opcost_dim(b, in->trans_b ? 1 : 0);
        n = opcost_dim(b, in->trans_b ? 0 : 1);
    }
    if (y && y->rank == 2) {
        if (m < 0) m = opcost_dim(y, 0);
        if (n < 0) n = opcost_dim(y, 1);
    }
    if (m < 0 || n < 0 || k < 0) return 0;
    return 2.0 * m * n * k;
}

/* Einsum: index letters (and "..." positions) -> sizes from the operand shapes. */
#define OPCOST_EIN_IDX (52 + HSDAG_MAX_RANK)
static double opcost_einsum(const hsdag_opcost_in *in)
{
    const char *eq = in->equation;
    if (!eq || in->n_in < 1) return 0;
    double size[OPCOST_EIN_IDX];
    for (int i = 0; i < OPCOST_EIN_IDX; i++) size[i] = -2; /* -2 = index not used */
    int op = 0;
    const char *p = eq;
    while (op < in->n_in) {
        /* one operand term: letters and at most one "..." */
        int idx[HSDAG_MAX_RANK + 1], nidx = 0, ell = -1;
        while (*p == ' ') p++;
        while (*p && *p != ',' && *p != '-') {
            if (*p == ' ') {
                p++;
                continue;
            }
            if (p[0] == '.' && p[1] == '.' && p[2] == '.') {
                if (ell >= 0) return 0;
                ell = nidx;
                p += 3;
                continue;
            }
            int c = (unsigned char)*p, id;
            if (c >= 'a' && c <= 'z')
                id = c - 'a';
            else if (c >= 'A' && c <= 'Z')
                id = 26 + c - 'A';
            else
                return 0;
            if (nidx >= HSDAG_MAX_RANK) return 0;
            idx[nidx++] = id;
            p++;
        }
        const hsdag_shape_ref *s = opcost_in(in, op);
        if (!s || s->rank < 0 || (s->rank > 0 && !s->dims)) return 0;
        int n_ell = s->rank - nidx;
        if (n_ell < 0 || (ell < 0 && n_ell != 0)) return 0;
        for (int d = 0; d < s->rank; d++) {
            int id;
            if (ell >= 0 && d >= ell && d < ell + n_ell)
                id = 52 + (n_ell - 1 - (d - ell)); /* aligned right */
            else
                id = idx[d < ell || ell < 0 ? d : d - n_ell];
            if (id >= OPCOST_EIN_IDX) return 0;
            double v = s->dims[d] < 0 ? -1 : (double)s->dims[d];
            if (v < 0) return 0;
            if (size[id] < v) size[id] = v; /* broadcast: 1 against n gives n */
        }
        op++;
        if (*p == ',')
            p++;
        else
            break;
    }
    while (*p == ' ') p++;
    if (op != in->n_in || (*p && *p != '-')) return 0; /* operand count must match the terms */
    double prod = 1;
    for (int i = 0; i < OPCOST_EIN_IDX; i++)
        if (size[i] >= 0) prod *= size[i];
    return in->n_in >= 2 ? 2.0 * prod : prod;
}

static double opcost_rnn(const hsdag_opcost_in *in)
{
    const hsdag_shape_ref *x = opcost_in(in, 0);
    double w = opcost_elems(opcost_in(in, 1)), r = opcost_elems(opcost_in(in, 2));
    double seq = opcost_dim(x, 0), batch = opcost_dim(x, 1);
    if (!x || x->rank != 3 || w < 0 || r < 0 || seq < 0 || batch < 0) return 0;
    return 2.0 * seq * batch * (w + r);
}

hsdag_opcost hsdag_opcost_estimate(const hsdag_opcost_in *in)
{
    hsdag_opcost r = {0, HSDAG_OP_UNKNOWN, 0};
    const opcost_entry *ent = in ? opcost_lookup(in->op) : NULL;
    if (!ent) return r;
    r.opclass = (hsdag_opclass)ent->cls;
    r.known = ent->cls != HSDAG_OP_UNKNOWN;
    double f = 0;
    const hsdag_shape_ref *w = opcost_in(in, ent->wslot);
    switch ((opcost_rule)ent->rule) {
    case OPCOST_R_CONV: {
        double o = opcost_elems(opcost_out0(in)), t = opcost_tail(w, 1);
        if (o >= 0 && t >= 0) f = 2.0 * o * t;
        break;
    }
    case OPCOST_R_GCONV: {
        double o = opcost_elems(opcost_out0(in)), t = opcost_tail(w, 2);
        if (o >= 0 && t >= 0) f = 2.0 * o * t;
        break;
    }
    case OPCOST_R_CONVT:
    case OPCOST_R_GCONVT: {
        double i0 = opcost_elems(opcost_in(in, 0));
        double t = opcost_tail(w, ent->rule == OPCOST_R_CONVT ? 1 : 2);
        if (i0 >= 0 && t >= 0) f = 2.0 * i0 * t;
        break;
    }
    case OPCOST_R_MATMUL:
    case OPCOST_R_LINEAR:
        f = opcost_matmul(in, ent);
        break;
    case OPCOST_R_GEMM:
        f = opcost_gemm(in);
        break;
    case OPCOST_R_EINSUM:
        f = opcost_einsum(in);
        break;
    case OPCOST_R_RNN:
        f = opcost_rnn(in);
        break;
    case OPCOST_R_ELEM:
        f = opcost_pos(opcost_out_elems(in, 1));
        break;
    case OPCOST_R_ELEM4:
        f = 4.0 * opcost_pos(opcost_out_elems(in, 1));
        break;
    case OPCOST_R_POOL: {
        double o = opcost_elems(opcost_out0(in)), i0 = opcost_elems(opcost_in(in, 0));
        if (o >= 0 && i0 >= 0) f = o > 0 ? o * fmax(1.0, i0 / o) : 0;
        break;
    }
    case OPCOST_R_NORM: {
        double e = opcost_elems(opcost_out0(in));
        if (e < 0) e = opcost_elems(opcost_in(in, 0));
        f = 5.0 * opcost_pos(e);
        break;
    }
    case OPCOST_R_REDUCE:
        f = opcost_pos(opcost_elems(opcost_in(in, 0)));
        break;
    case OPCOST_R_NONE:
    case OPCOST_R_ZERO:
        f = 0;
        break;
    }
    r.flops = isfinite(f) ? f : 0;
    return r;
}
