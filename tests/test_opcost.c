/* test_opcost.c - op classification across spellings and every FLOP rule of hsdag_opcost_estimate on hand
 * shapes.
 * Not here: importers (test_onnx.c feeds real shapes through the same rules).
 * Entry points: main. */
#include <string.h>

#include "check.h"
#include "hsdag/graph.h"

#define S(...) ((const int64_t[]){__VA_ARGS__})
#define R(n, ...) ((hsdag_shape_ref){n, (const int64_t[]){__VA_ARGS__}})

static double est(const char *op, int n_in, const hsdag_shape_ref *in, int n_out, const hsdag_shape_ref *out)
{
    hsdag_opcost_in ci = {.op = op, .n_in = n_in, .in = in, .n_out = n_out, .out = out};
    return hsdag_opcost_estimate(&ci).flops;
}

static void test_classes(void)
{
    struct {
        const char *op;
        hsdag_opclass c;
    } t[] = {
        /* ONNX */
        {"Conv", HSDAG_OP_CONV},
        {"ConvTranspose", HSDAG_OP_CONV},
        {"MatMul", HSDAG_OP_MATMUL},
        {"Gemm", HSDAG_OP_MATMUL},
        {"Einsum", HSDAG_OP_MATMUL},
        {"Relu", HSDAG_OP_ELEMWISE},
        {"Add", HSDAG_OP_ELEMWISE},
        {"Cast", HSDAG_OP_ELEMWISE},
        {"Sum", HSDAG_OP_ELEMWISE},
        {"MaxPool", HSDAG_OP_POOL},
        {"GlobalAveragePool", HSDAG_OP_POOL},
        {"BatchNormalization", HSDAG_OP_NORM},
        {"LayerNormalization", HSDAG_OP_NORM},
        {"LRN", HSDAG_OP_NORM},
        {"Softmax", HSDAG_OP_SOFTMAX},
        {"LogSoftmax", HSDAG_OP_SOFTMAX},
        {"ReduceMean", HSDAG_OP_REDUCE},
        {"Concat", HSDAG_OP_DATAMOVE},
        {"Reshape", HSDAG_OP_DATAMOVE},
        {"Transpose", HSDAG_OP_DATAMOVE},
        {"Gather", HSDAG_OP_DATAMOVE},
        {"Slice", HSDAG_OP_DATAMOVE},
        {"Flatten", HSDAG_OP_DATAMOVE},
        {"Constant", HSDAG_OP_BOOKKEEPING},
        {"Identity", HSDAG_OP_BOOKKEEPING},
        {"Shape", HSDAG_OP_BOOKKEEPING},
        {"Dropout", HSDAG_OP_BOOKKEEPING},
        {"If", HSDAG_OP_UNKNOWN},
        {"FooBar", HSDAG_OP_UNKNOWN},
        /* OpenVINO */
        {"Convolution", HSDAG_OP_CONV},
        {"GroupConvolution", HSDAG_OP_CONV},
        {"Multiply", HSDAG_OP_ELEMWISE},
        {"ReLU", HSDAG_OP_ELEMWISE},
        {"AvgPool", HSDAG_OP_POOL},
        {"SoftMax", HSDAG_OP_SOFTMAX},
        {"MVN", HSDAG_OP_NORM},
        {"Const", HSDAG_OP_BOOKKEEPING},
        {"Parameter", HSDAG_OP_BOOKKEEPING},
        {"Result", HSDAG_OP_BOOKKEEPING},
        {"ShapeOf", HSDAG_OP_BOOKKEEPING},
        {"StridedSlice", HSDAG_OP_DATAMOVE},
        {"Interpolate", HSDAG_OP_DATAMOVE},
        {"Squeeze", HSDAG_OP_DATAMOVE},
        {"FakeQuantize", HSDAG_OP_ELEMWISE},
        /* PyTorch / PipeDream layer descriptions */
        {"Conv2d(3, 64, kernel_size=(11, 11), stride=(4, 4), padding=(2, 2))", HSDAG_OP_CONV},
        {"ReLU(inplace)", HSDAG_OP_ELEMWISE},
        {"MaxPool2d(kernel_size=3, stride=2)", HSDAG_OP_POOL},
        {"Linear(in_features=9216, out_features=4096, bias=True)", HSDAG_OP_MATMUL},
        {"BatchNorm2d(512, eps=1e-05)", HSDAG_OP_NORM},
        {"Dropout(p=0.5)", HSDAG_OP_BOOKKEEPING},
        {"View(-1)", HSDAG_OP_DATAMOVE},
        {"Input0", HSDAG_OP_BOOKKEEPING},
        {"Input()", HSDAG_OP_BOOKKEEPING},
        {"__getitem__", HSDAG_OP_DATAMOVE},
        {"LSTM(1024, 1024)", HSDAG_OP_MATMUL},
        {"RecurrentAttention", HSDAG_OP_UNKNOWN},
        /* NNCF / torch.fx */
        {"conv2d", HSDAG_OP_CONV},
        {"max_pool2d", HSDAG_OP_POOL},
        {"batch_norm", HSDAG_OP_NORM},
        {"layer_norm", HSDAG_OP_NORM},
        {"__add__", HSDAG_OP_ELEMWISE},
        {"relu_", HSDAG_OP_ELEMWISE},
        {"sum", HSDAG_OP_REDUCE},
        {"mean", HSDAG_OP_REDUCE},
        {"nncf_model_input", HSDAG_OP_BOOKKEEPING},
        {"get_attr", HSDAG_OP_BOOKKEEPING},
        {"aten::linear", HSDAG_OP_MATMUL},
        {"adaptive_avg_pool2d", HSDAG_OP_POOL},
        {"scaled_dot_product_attention", HSDAG_OP_UNKNOWN},
        /* case-insensitive fallback */
        {"CONV", HSDAG_OP_CONV},
        {"batchnormalization", HSDAG_OP_NORM},
        {"", HSDAG_OP_UNKNOWN},
        {NULL, HSDAG_OP_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        hsdag_opclass c = hsdag_opclass_of(t[i].op);
        if (c != t[i].c)
            fprintf(stderr, "  '%s' -> %s\n", t[i].op ? t[i].op : "(null)", hsdag_opclass_name(c));
        CHECK_EQ_INT(c, t[i].c);
    }
    CHECK_STR(hsdag_opclass_name(HSDAG_OP_CONV), "conv");
    CHECK_STR(hsdag_opclass_name(HSDAG_OP_BOOKKEEPING), "bookkeeping");
    CHECK_STR(hsdag_opclass_name(HSDAG_OP_DATAMOVE), "datamove");
    hsdag_opcost_in u = {.op = "FooBar"};
    hsdag_opcost c = hsdag_opcost_estimate(&u);
    CHECK(c.known == 0 && c.flops == 0 && c.opclass == HSDAG_OP_UNKNOWN);
    hsdag_opcost_in k = {.op = "Identity"};
    c = hsdag_opcost_estimate(&k);
    CHECK(c.known == 1 && c.flops == 0 && c.opclass == HSDAG_OP_BOOKKEEPING);
}

static void test_conv(void)
{
    /* x[1,3,224,224] * w[64,3,7,7] stride 2 -> [1,64,112,112] */
    hsdag_shape_ref in[] = {R(4, 1, 3, 224, 224), R(4, 64, 3, 7, 7), R(1, 64)},
                    out[] = {R(4, 1, 64, 112, 112)};
    CHECK_NEAR(est("Conv", 3, in, 1, out), 2.0 * 64 * 112 * 112 * 3 * 49, 0);
    /* depthwise: w[32,1,3,3], group 32: no group factor needed */
    hsdag_shape_ref din[] = {R(4, 1, 32, 56, 56), R(4, 32, 1, 3, 3)}, dout[] = {R(4, 1, 32, 56, 56)};
    CHECK_NEAR(est("Conv", 2, din, 1, dout), 2.0 * 32 * 56 * 56 * 9, 0);
    /* OpenVINO GroupConvolution w[G=32, 1, 1, 3, 3] */
    hsdag_shape_ref gin[] = {R(4, 1, 32, 56, 56), R(5, 32, 1, 1, 3, 3)};
    CHECK_NEAR(est("GroupConvolution", 2, gin, 1, dout), 2.0 * 32 * 56 * 56 * 9, 0);
    /* ConvTranspose x[1,16,8,8] w[16,8,4,4] -> [1,8,16,16]: 2 * in_elems * prod(w[1:]) */
    hsdag_shape_ref tin[] = {R(4, 1, 16, 8, 8), R(4, 16, 8, 4, 4)}, tout[] = {R(4, 1, 8, 16, 16)};
    CHECK_NEAR(est("ConvTranspose", 2, tin, 1, tout), 2.0 * 16 * 64 * 8 * 16, 0);
    /* unknown output dim: 0 */
    hsdag_shape_ref uout[] = {R(4, -1, 64, 112, 112)};
    CHECK_NEAR(est("Conv", 2, in, 1, uout), 0, 0);
    /* QLinearConv: weight at input 3 */
    hsdag_shape_ref qin[] = {R(4, 1, 3, 8, 8), R(0, 0), R(0, 0), R(4, 4, 3, 3, 3)},
                    qout[] = {R(4, 1, 4, 6, 6)};
    CHECK_NEAR(est("QLinearConv", 4, qin, 1, qout), 2.0 * 4 * 36 * 27, 0);
}

static void test_matmul(void)
{
    hsdag_shape_ref in[] = {R(3, 12, 197, 64), R(3, 12, 64, 197)}, out[] = {R(3, 12, 197, 197)};
    CHECK_NEAR(est("MatMul", 2, in, 1, out), 2.0 * 12 * 197 * 197 * 64, 0);
    /* no output shape: from A and a 2-D B */
    hsdag_shape_ref in2[] = {R(3, 128, 1, 768), R(2, 768, 2304)};
    CHECK_NEAR(est("MatMul", 2, in2, 0, NULL), 2.0 * 128 * 2304 * 768, 0);
    /* Gemm transB: A[1,2048] B[1000,2048] */
    hsdag_shape_ref gin[] = {R(2, 1, 2048), R(2, 1000, 2048), R(1, 1000)}, gout[] = {R(2, 1, 1000)};
    hsdag_opcost_in ci = {.op = "Gemm", .n_in = 3, .in = gin, .n_out = 1, .out = gout, .trans_b = 1};
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 2.0 * 2048 * 1000, 0);
    /* Gemm transA: A[64,10] is K x M */
    hsdag_shape_ref ain[] = {R(2, 64, 10), R(2, 64, 5)};
    hsdag_opcost_in ca = {.op = "Gemm", .n_in = 2, .in = ain, .trans_a = 1};
    CHECK_NEAR(hsdag_opcost_estimate(&ca).flops, 2.0 * 10 * 5 * 64, 0);
    /* Linear (PyTorch / NNCF): x[8,512] W[1000,512] */
    hsdag_shape_ref lin[] = {R(2, 8, 512), R(2, 1000, 512)}, lout[] = {R(2, 8, 1000)};
    CHECK_NEAR(est("linear", 2, lin, 1, lout), 2.0 * 8 * 1000 * 512, 0);
    CHECK_NEAR(est("linear", 2, lin, 0, NULL), 2.0 * 8 * 1000 * 512, 0);
    /* ONNX LSTM: X[seq 10, batch 2, in 32], W[1, 4*64, 32], R[1, 4*64, 64] */
    hsdag_shape_ref rin[] = {R(3, 10, 2, 32), R(3, 1, 256, 32), R(3, 1, 256, 64)};
    CHECK_NEAR(est("LSTM", 3, rin, 0, NULL), 2.0 * 10 * 2 * (256 * 32 + 256 * 64), 0);
}

static void test_einsum(void)
{
    hsdag_shape_ref in[] = {R(3, 2, 3, 4), R(3, 2, 4, 5)};
    hsdag_opcost_in ci = {.op = "Einsum", .n_in = 2, .in = in, .equation = "bij,bjk->bik"};
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 2.0 * 2 * 3 * 4 * 5, 0);
    ci.equation = "b i j , b j k -> b i k"; /* spaces allowed */
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 2.0 * 2 * 3 * 4 * 5, 0);
    ci.equation = "...ij,...jk->...ik"; /* ellipsis spans the batch dim */
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 2.0 * 2 * 3 * 4 * 5, 0);
    hsdag_shape_ref bin[] = {R(3, 1, 3, 4), R(3, 7, 4, 5)}; /* broadcast b: 1 against 7 */
    ci.in = bin;
    ci.equation = "bij,bjk->bik";
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 2.0 * 7 * 3 * 4 * 5, 0);
    ci.in = in;
    ci.equation = "bij,bjk,kl->bil"; /* three terms, two operands: unparsable */
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 0, 0);
    ci.equation = "bi?,bjk->bik";
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 0, 0);
    ci.equation = NULL;
    CHECK_NEAR(hsdag_opcost_estimate(&ci).flops, 0, 0);
    hsdag_shape_ref one[] = {R(2, 6, 7)}; /* one operand (a transpose): prod, no factor 2 */
    hsdag_opcost_in c1 = {.op = "Einsum", .n_in = 1, .in = one, .equation = "ij->ji"};
    CHECK_NEAR(hsdag_opcost_estimate(&c1).flops, 42, 0);
}

static void test_elementwise_and_rest(void)
{
    hsdag_shape_ref x[] = {R(3, 2, 3, 4), R(1, 4)}, y[] = {R(3, 2, 3, 4)};
    CHECK_NEAR(est("Add", 2, x, 1, y), 24, 0);
    CHECK_NEAR(est("Add", 2, x, 0, NULL), 24, 0); /* largest input when the output is unknown */
    CHECK_NEAR(est("Relu", 1, x, 1, y), 24, 0);
    CHECK_NEAR(est("Erf", 1, x, 1, y), 96, 0); /* transcendental x4 */
    CHECK_NEAR(est("Sigmoid", 1, x, 1, y), 96, 0);
    CHECK_NEAR(est("Softmax", 1, x, 1, y), 120, 0); /* 5 per element */
    CHECK_NEAR(est("LayerNormalization", 1, x, 1, y), 120, 0);
    CHECK_NEAR(est("ReduceMean", 1, x, 0, NULL), 24, 0); /* in_elems */
    CHECK_NEAR(est("Reshape", 1, x, 1, y), 0, 0);
    CHECK_NEAR(est("Constant", 0, NULL, 1, y), 0, 0);
    /* pooling: window from in/out elements (no kernel in hsdag_opcost_in) */
    hsdag_shape_ref pin[] = {R(4, 1, 64, 8, 8)}, pout[] = {R(4, 1, 64, 1, 1)}, pout2[] = {R(4, 1, 64, 4, 4)};
    CHECK_NEAR(est("GlobalAveragePool", 1, pin, 1, pout), 64.0 * 64, 0);
    CHECK_NEAR(est("MaxPool", 1, pin, 1, pout2), 64.0 * 16 * 4, 0);
    /* unknown shapes: 0, known stays 1 */
    hsdag_shape_ref unk[] = {{-1, NULL}};
    hsdag_opcost_in ci = {.op = "Relu", .n_in = 1, .in = unk, .n_out = 1, .out = unk};
    hsdag_opcost c = hsdag_opcost_estimate(&ci);
    CHECK(c.flops == 0 && c.known == 1);
    /* the estimator itself takes any finite shape (importers enforce HSDAG_MAX_ELEMS) */
    hsdag_shape_ref big[] = {R(2, 1000000, 1000000)};
    CHECK_NEAR(est("Relu", 1, big, 1, big), 1e12, 0);
}

int main(void)
{
    test_classes();
    test_conv();
    test_matmul();
    test_einsum();
    test_elementwise_and_rest();
    return check_summary("test_opcost");
}
