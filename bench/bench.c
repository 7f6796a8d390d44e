/* bench.c - `make bench`: import time of every bundled model (and of a generated 7,000-node
 * Swin-T-class ONNX graph), medians of repeated runs on one core, printed as a table.
 * Not here: correctness checks (tests/) or timed assertions: these machines are shared and noisy.
 * Entry points: main; bench_imports, plus one bench_* section per module. */
#include "hsdag/nn.h"
#include "hsdag/io.h"
#include "onnx.pb-c.h"

#include <dirent.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* CPU time of this thread, seconds: robust against other processes on a shared 2-core machine. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Times hsdag_load on an in-memory buffer: median over `runs` runs, seconds. */
static double time_load(const char *buf, size_t len, const char *what, int runs, int32_t *nodes)
{
    double t[64];
    if (runs > 64) runs = 64;
    for (int r = 0; r < runs; r++) {
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        double t0 = cpu_now();
        int rc = hsdag_load(&g, buf, len, HSDAG_FMT_UNKNOWN, what, &e);
        t[r] = cpu_now() - t0;
        if (rc < 0) {
            fprintf(stderr, "bench: %s\n", e.msg);
            return NAN;
        }
        *nodes = g->n_nodes;
        hsdag_graph_free(g);
    }
    return median(t, runs);
}

static void bench_file(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    if (hsdag_read_file(&buf, &len, path, 0, &e) < 0) return;
    int32_t nodes = 0;
    double s = time_load(buf, len, path, 21, &nodes);
    if (!isnan(s)) printf("| %-62s | %7d | %9.3f |\n", path, (int)nodes, s * 1e3);
    hsdag_free(buf);
}

static int path_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bench_dir(const char *dir, const char *ext)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256) {
        size_t l = strlen(de->d_name), el = strlen(ext);
        if (l > el && strcmp(de->d_name + l - el, ext) == 0) {
            size_t pl = strlen(dir) + l + 2;
            names[n] = malloc(pl);
            snprintf(names[n], pl, "%s/%s", dir, de->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, path_cmp);
    for (int i = 0; i < n; i++) {
        bench_file(names[i]);
        free(names[i]);
    }
}

/* ---- a generated 7,000-node transformer-style ONNX graph (Swin-T class) ---- */
static Onnx__ValueInfoProto *vinfo(const char *name, int rank, const int64_t *dims)
{
    Onnx__ValueInfoProto *v = calloc(1, sizeof *v);
    Onnx__TypeProto *t = calloc(1, sizeof *t);
    Onnx__TypeProto__Tensor *tt = calloc(1, sizeof *tt);
    Onnx__TensorShapeProto *sh = calloc(1, sizeof *sh);
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank;
    sh->dim = calloc((size_t)rank, sizeof *sh->dim);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = calloc(1, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        sh->dim[i] = d;
    }
    tt->has_elem_type = 1;
    tt->elem_type = 1; /* FLOAT */
    tt->shape = sh;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    v->name = strdup(name);
    v->type = t;
    return v;
}

static uint8_t *make_big_onnx(int target_nodes, size_t *len)
{
    static const char *ops[] = {"MatMul", "Add", "ReduceMean", "Sub",       "Mul",
                                "Sqrt",   "Div", "Softmax",    "Transpose", "Reshape"};
    const int nops = (int)(sizeof ops / sizeof ops[0]);
    Onnx__ModelProto m;
    Onnx__GraphProto *grp = calloc(1, sizeof *grp), gr;
    onnx__model_proto__init(&m);
    onnx__graph_proto__init(&gr);
    m.has_ir_version = 1;
    m.ir_version = 8;
    m.graph = grp;
    gr.name = strdup("swin_class_7k");
    gr.n_node = (size_t)target_nodes;
    gr.node = calloc(gr.n_node, sizeof *gr.node);
    gr.n_value_info = gr.n_node;
    gr.value_info = calloc(gr.n_node, sizeof *gr.value_info);
    int64_t dims[3] = {1, 196, 384};
    char in0[32], in1[32], out[32];
    for (int i = 0; i < target_nodes; i++) {
        Onnx__NodeProto *nd = calloc(1, sizeof *nd);
        onnx__node_proto__init(nd);
        const char *op = ops[i % nops];
        snprintf(out, sizeof out, "t%d", i);
        snprintf(in0, sizeof in0, i ? "t%d" : "x", i - 1);
        snprintf(in1, sizeof in1, "t%d", i >= 7 ? i - 7 : 0); /* residual-style skip edges */
        int two = (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 ||
                   strcmp(op, "Div") == 0) &&
                  i >= 7;
        nd->n_input = two ? 2 : 1;
        nd->input = calloc(2, sizeof *nd->input);
        nd->input[0] = strdup(in0);
        if (two) nd->input[1] = strdup(in1);
        nd->n_output = 1;
        nd->output = calloc(1, sizeof *nd->output);
        nd->output[0] = strdup(out);
        char nm[32];
        snprintf(nm, sizeof nm, "%s_%d", op, i);
        nd->name = strdup(nm);
        nd->op_type = strdup(op);
        gr.node[i] = nd;
        gr.value_info[i] = vinfo(out, 3, dims);
    }
    Onnx__ValueInfoProto *x = vinfo("x", 3, dims);
    gr.n_input = 1;
    gr.input = &x;
    *grp = gr;
    *len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*len);
    onnx__model_proto__pack(&m, buf);
    grp->input = NULL;
    grp->n_input = 0;
    onnx__graph_proto__free_unpacked(grp, NULL); /* frees the nodes, strings and value_info we made */
    onnx__value_info_proto__free_unpacked(x, NULL);
    return buf;
}

static void bench_imports(void)
{
    printf("\n### Import time (median of 21 runs, thread CPU time, one core)\n\n");
    printf("| %-62s | %7s | %9s |\n", "file", "nodes", "ms");
    printf("|%s|%s|%s|\n", "----------------------------------------------------------------", "---------",
           "-----------");
    bench_dir("tests/data/onnx", ".onnx");
    bench_dir("tests/data/onnx-light", ".onnx");
    bench_dir("tests/data/openvino", ".xml");
    bench_dir("tests/data/pacml", ".txt");
    bench_dir("tests/data/tarnawski/latency-inputs/OperatorGraphs", ".json");
    bench_dir("tests/data/nncf", ".dot");
    size_t len = 0;
    uint8_t *big = make_big_onnx(7000, &len);
    int32_t nodes = 0;
    double s = time_load((const char *)big, len, "generated 7,000-node Swin-T-class ONNX", 21, &nodes);
    if (!isnan(s))
        printf("| %-62s | %7d | %9.3f |\n", "(generated) 7,000-node Swin-T-class ONNX", (int)nodes, s * 1e3);
    free(big);
    printf("\nTargets: ResNet-50 ONNX < 5 ms; 7,000-node graph < 50 ms.\n");
}

void bench_sim(void);     /* bench_sim.c: simulator evaluations per second */
void bench_place(void);   /* bench_place.c: time to place per method */
void bench_learn(void);   /* bench_learn.c: HSDAG training budget */
void bench_cluster(void); /* bench_learn.c: PAC-ML episode */

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    hsdag_nn_set_threads(1); /* as the CLI does: the library never sets it */
    printf("# hsdag benchmark\n");
    bench_imports();
    bench_sim();
    bench_place();
    bench_learn();
    bench_cluster();
    return 0;
}
