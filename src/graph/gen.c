/* gen.c - generated graphs: a GPT-style decoder op by op as torch.onnx.export writes it (prefill or one decode
 *         step, GQA, tied embeddings, KV cache as memory) and seeded random DAGs, built through the builder.
 * Not here: FLOP rules (opcost.c: every op's FLOPs come from hsdag_opcost_estimate), file formats (src/io).
 * Entry points: hsdag_gen_transformer, hsdag_gen_transformer_ops, hsdag_gen_random and their config defaults. */
#include "hsdag/gen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the emitter: one op = one node, its output tensor, one edge per input tensor ---- */

#define GEN_RANK 5

/* A tensor produced by a node (node -1: a weight or a graph input, never an edge). */
typedef struct gen_ten {
    int32_t node;
    int rank;
    int64_t d[GEN_RANK];
} gen_ten;

typedef struct gen_ctx {
    hsdag_gb *b;
    double esz; /* bytes per element */
    hsdag_dtype dt;
    int rc; /* first failure; every later op is a no-op */
    const char *prefix;
} gen_ctx;

static gen_ten gen_shape(int rank, const int64_t *d)
{
    gen_ten t = {-1, rank, {0}};
    for (int i = 0; i < rank; i++) t.d[i] = d[i];
    return t;
}

static double gen_elems(const gen_ten *t)
{
    double n = 1;
    for (int i = 0; i < t->rank; i++) n *= (double)t->d[i];
    return n;
}

/* One op. in[0..n_in) are its inputs in op order: those with node >= 0 become edges, all of them (weights
 * included) feed the FLOP estimate. param: weight bytes read; mem: resident bytes (NAN = none given). */
static gen_ten gen_op(gen_ctx *g, const char *name, const char *op, gen_ten out, const gen_ten *in, int n_in,
                      double param, double mem)
{
    out.node = -1;
    if (g->rc < 0) return out;
    if (gen_elems(&out) > HSDAG_MAX_ELEMS) {
        g->rc = HSDAG_ELIMIT;
        return out;
    }
    char full[160];
    snprintf(full, sizeof full, "%s%s", g->prefix, name);
    int32_t v = hsdag_gb_add_node(g->b, full, op);
    if (v < 0) {
        g->rc = v;
        return out;
    }
    hsdag_shape_ref refs[4], oref = {out.rank, out.d};
    HSDAG_ASSERT(n_in <= 4);
    for (int i = 0; i < n_in; i++) refs[i] = (hsdag_shape_ref){in[i].rank, in[i].d};
    hsdag_opcost_in ci = {.op = op, .n_in = n_in, .in = refs, .n_out = 1, .out = &oref};
    hsdag_gb_set_flops(g->b, v, hsdag_opcost_estimate(&ci).flops);
    hsdag_gb_set_param_bytes(g->b, v, param);
    hsdag_gb_set_mem_bytes(g->b, v, mem);
    int rc = hsdag_gb_add_output(g->b, v, g->dt, out.rank, out.d);
    for (int i = 0; i < n_in && rc == 0; i++)
        if (in[i].node >= 0) rc = hsdag_gb_add_edge(g->b, in[i].node, v, gen_elems(&in[i]) * g->esz);
    if (rc < 0) g->rc = rc;
    out.node = v;
    return out;
}

/* out = in with its shape replaced (Reshape, Transpose, Unsqueeze, Expand: data movement, 0 FLOPs) */
static gen_ten gen_move(gen_ctx *g, const char *name, const char *op, const gen_ten *x, int rank,
                        const int64_t *d)
{
    return gen_op(g, name, op, gen_shape(rank, d), x, 1, 0, NAN);
}

/* elementwise op on x (and an optional second input y, or a broadcast constant when y is NULL) */
static gen_ten gen_elem(gen_ctx *g, const char *name, const char *op, const gen_ten *x, const gen_ten *y,
                        double param)
{
    gen_ten in[2] = {*x, y ? *y : gen_shape(0, NULL)};
    return gen_op(g, name, op, gen_shape(x->rank, x->d), in, 2, param, NAN);
}

/* nn.Linear on the last axis: MatMul(x, W[din, dout]) and, with bias, Add(., b[dout]) */
static gen_ten gen_linear(gen_ctx *g, const char *name, const gen_ten *x, int64_t dout, int bias)
{
    int64_t din = x->d[x->rank - 1];
    gen_ten out = gen_shape(x->rank, x->d), in[2] = {*x, gen_shape(2, (int64_t[]){din, dout})};
    out.d[x->rank - 1] = dout;
    char nm[96];
    snprintf(nm, sizeof nm, "%s.MatMul", name);
    gen_ten y = gen_op(g, nm, "MatMul", out, in, 2, (double)din * (double)dout * g->esz, NAN);
    if (!bias) return y;
    snprintf(nm, sizeof nm, "%s.Add", name);
    gen_ten bvec = gen_shape(1, (int64_t[]){dout});
    return gen_elem(g, nm, "Add", &y, &bvec, (double)dout * g->esz);
}

static gen_ten gen_layernorm(gen_ctx *g, const char *name, const gen_ten *x)
{
    int64_t d = x->d[x->rank - 1];
    gen_ten in[3] = {*x, gen_shape(1, &d), gen_shape(1, &d)};
    return gen_op(g, name, "LayerNormalization", gen_shape(x->rank, x->d), in, 3, 2.0 * (double)d * g->esz,
                  NAN);
}

/* ---- the decoder ---- */

hsdag_gen_transformer_config hsdag_gen_transformer_config_default(void)
{
    return (hsdag_gen_transformer_config){.layers = 12,
                                          .hidden = 768,
                                          .heads = 12,
                                          .kv_heads = 0,
                                          .ffn = 0,
                                          .seq = 512,
                                          .vocab = 50257,
                                          .batch = 1,
                                          .decode = 0,
                                          .tied = 0,
                                          .bias = 1,
                                          .dtype = HSDAG_DT_F16,
                                          .name = NULL};
}

typedef struct gen_tf {
    int64_t B, T, D, H, KVH, HD, G, F, V, P, Tk; /* T new tokens, P cached, Tk = keys attended */
    int decode, bias;
} gen_tf;

static int gen_tf_check(const hsdag_gen_transformer_config *c, gen_tf *t, hsdag_err *e)
{
    memset(t, 0, sizeof *t);
    int64_t kvh = c->kv_heads > 0 ? c->kv_heads : c->heads;
    if (c->layers < 1 || c->hidden < 1 || c->heads < 1 || c->seq < 1 || c->vocab < 1 || c->batch < 1 ||
        c->ffn < 0 || c->kv_heads < 0)
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "transformer: layers, hidden, heads, seq, vocab and batch must be at least 1");
    if (c->hidden % c->heads)
        return hsdag_err_set(e, HSDAG_EINVAL, "transformer: hidden %lld is not a multiple of heads %d",
                             (long long)c->hidden, (int)c->heads);
    if (c->heads % kvh)
        return hsdag_err_set(e, HSDAG_EINVAL, "transformer: heads %d is not a multiple of kv_heads %lld",
                             (int)c->heads, (long long)kvh);
    if (c->dtype <= HSDAG_DT_UNKNOWN || c->dtype >= HSDAG_DT_COUNT_)
        return hsdag_err_set(e, HSDAG_EINVAL, "transformer: no element type");
    t->B = c->batch;
    t->D = c->hidden;
    t->H = c->heads;
    t->KVH = kvh;
    t->HD = c->hidden / c->heads;
    t->G = t->H / kvh;
    t->F = c->ffn > 0 ? c->ffn : 4 * c->hidden;
    t->V = c->vocab;
    t->decode = c->decode != 0;
    t->bias = c->bias != 0;
    t->T = t->decode ? 1 : c->seq;
    t->P = t->decode ? c->seq : 0;
    t->Tk = t->P + t->T;
    return 0;
}

/* ops of one block and of the rest (embeddings, final norm, head, the tied table's node) */
static void gen_tf_counts(const gen_tf *t, int tied, int64_t *per_block, int64_t *rest)
{
    int64_t lin = t->bias ? 2 : 1;
    *per_block = 1 + 6 * lin + 3 * 2 /* q, k, v projections + split */ + (t->decode ? 2 : 0) +
                 (t->G > 1 ? 6 : 0) + 3 /* K^T, scores, scale */ + (t->decode ? 0 : 1) + 1 + 1 + 2 + 1 + 1 +
                 5 + 1;
    *rest = 3 + 1 + 1 + (tied ? 1 : 0);
}

int64_t hsdag_gen_transformer_ops(const hsdag_gen_transformer_config *c)
{
    gen_tf t;
    hsdag_err e = {0};
    if (gen_tf_check(c, &t, &e) < 0) return -1;
    int64_t pb, rest;
    gen_tf_counts(&t, c->tied, &pb, &rest);
    return pb * c->layers + rest;
}

/* [B, n, heads, HD] -> [B, heads, n, HD] after a projection of width heads * HD */
static gen_ten gen_heads(gen_ctx *g, const gen_tf *t, const char *nm, const gen_ten *x, int64_t heads)
{
    char a[64];
    snprintf(a, sizeof a, "%s.Reshape", nm);
    gen_ten r = gen_move(g, a, "Reshape", x, 4, (int64_t[]){t->B, t->T, heads, t->HD});
    snprintf(a, sizeof a, "%s.Transpose", nm);
    return gen_move(g, a, "Transpose", &r, 4, (int64_t[]){t->B, heads, t->T, t->HD});
}

/* K or V of one block, [B, H, Tk, HD]: projection, head split, the cache (written in prefill, appended to in
 * decode) and the GQA repeat */
static gen_ten gen_kv(gen_ctx *g, const gen_tf *t, const char *which, const gen_ten *h)
{
    char nm[64];
    snprintf(nm, sizeof nm, "attn.%s", which);
    gen_ten x = gen_linear(g, nm, h, t->KVH * t->HD, t->bias);
    gen_ten c = gen_heads(g, t, nm, &x, t->KVH);
    if (g->rc == 0 && !t->decode) /* the K/V written for later steps stay resident: the KV cache */
        hsdag_gb_set_mem_bytes(g->b, c.node, gen_elems(&c) * g->esz);
    if (t->decode) {
        gen_ten past = gen_shape(4, (int64_t[]){t->B, t->KVH, t->P, t->HD}), in[2] = {past, c};
        double pbytes = gen_elems(&past) * g->esz;
        gen_ten out = gen_shape(4, (int64_t[]){t->B, t->KVH, t->Tk, t->HD});
        snprintf(nm, sizeof nm, "attn.%s.cache.Concat", which);
        c = gen_op(g, nm, "Concat", out, in, 2, pbytes, gen_elems(&out) * g->esz);
    }
    if (t->G == 1) return c;
    snprintf(nm, sizeof nm, "attn.%s.repeat.Unsqueeze", which);
    gen_ten u = gen_move(g, nm, "Unsqueeze", &c, 5, (int64_t[]){t->B, t->KVH, 1, t->Tk, t->HD});
    snprintf(nm, sizeof nm, "attn.%s.repeat.Expand", which);
    gen_ten ex = gen_move(g, nm, "Expand", &u, 5, (int64_t[]){t->B, t->KVH, t->G, t->Tk, t->HD});
    snprintf(nm, sizeof nm, "attn.%s.repeat.Reshape", which);
    return gen_move(g, nm, "Reshape", &ex, 4, (int64_t[]){t->B, t->H, t->Tk, t->HD});
}

static gen_ten gen_attention(gen_ctx *g, const gen_tf *t, const gen_ten *h)
{
    gen_ten x = gen_linear(g, "attn.q", h, t->D, t->bias);
    gen_ten q = gen_heads(g, t, "attn.q", &x, t->H);
    gen_ten k = gen_kv(g, t, "k", h);
    gen_ten v = gen_kv(g, t, "v", h);
    gen_ten kt = gen_move(g, "attn.k.Transpose", "Transpose", &k, 4, (int64_t[]){t->B, t->H, t->HD, t->Tk});
    gen_ten in[2] = {q, kt};
    gen_ten s = gen_op(g, "attn.scores.MatMul", "MatMul", gen_shape(4, (int64_t[]){t->B, t->H, t->T, t->Tk}),
                       in, 2, 0, NAN);
    s = gen_elem(g, "attn.scale.Mul", "Mul", &s, NULL, 0);
    if (!t->decode) { /* the causal mask, a [T, Tk] constant */
        gen_ten mask = gen_shape(2, (int64_t[]){t->T, t->Tk});
        s = gen_elem(g, "attn.mask.Add", "Add", &s, &mask, gen_elems(&mask) * g->esz);
    }
    gen_ten a = gen_op(g, "attn.Softmax", "Softmax", gen_shape(s.rank, s.d), &s, 1, 0, NAN);
    in[0] = a;
    in[1] = v;
    gen_ten y = gen_op(g, "attn.context.MatMul", "MatMul", gen_shape(4, (int64_t[]){t->B, t->H, t->T, t->HD}),
                       in, 2, 0, NAN);
    y = gen_move(g, "attn.merge.Transpose", "Transpose", &y, 4, (int64_t[]){t->B, t->T, t->H, t->HD});
    y = gen_move(g, "attn.merge.Reshape", "Reshape", &y, 3, (int64_t[]){t->B, t->T, t->D});
    return gen_linear(g, "attn.o", &y, t->D, t->bias);
}

/* GELU as torch exports the exact (erf) form before opset 20: x * (erf(x / sqrt 2) + 1) * 0.5 */
static gen_ten gen_mlp(gen_ctx *g, const gen_tf *t, const gen_ten *h)
{
    gen_ten u = gen_linear(g, "mlp.up", h, t->F, t->bias);
    gen_ten d = gen_elem(g, "mlp.gelu.Div", "Div", &u, NULL, 0);
    gen_ten er = gen_op(g, "mlp.gelu.Erf", "Erf", gen_shape(d.rank, d.d), &d, 1, 0, NAN);
    gen_ten a = gen_elem(g, "mlp.gelu.Add", "Add", &er, NULL, 0);
    gen_ten m = gen_elem(g, "mlp.gelu.Mul", "Mul", &u, &a, 0);
    m = gen_elem(g, "mlp.gelu.Mul_1", "Mul", &m, NULL, 0);
    return gen_linear(g, "mlp.down", &m, t->D, t->bias);
}

static gen_ten gen_block(gen_ctx *g, const gen_tf *t, const gen_ten *x)
{
    gen_ten h = gen_layernorm(g, "ln1", x);
    gen_ten o = gen_attention(g, t, &h);
    gen_ten r = gen_elem(g, "residual1.Add", "Add", x, &o, 0);
    h = gen_layernorm(g, "ln2", &r);
    gen_ten m = gen_mlp(g, t, &h);
    return gen_elem(g, "residual2.Add", "Add", &r, &m, 0);
}

static int gen_finish(gen_ctx *g, hsdag_gb *b, const char *name, hsdag_graph **out, const char *what,
                      hsdag_err *e)
{
    if (g->rc < 0) {
        if (g->rc == HSDAG_ELIMIT)
            return hsdag_err_set(e, g->rc,
                                 "%s: a tensor or the graph exceeds the limits (%d nodes, %g elements)", what,
                                 HSDAG_MAX_NODES, HSDAG_MAX_ELEMS);
        return hsdag_err_set(e, g->rc, "%s: %s", what, hsdag_status_str(g->rc));
    }
    hsdag_graph_meta m;
    memset(&m, 0, sizeof m);
    m.format = HSDAG_FMT_BUILT;
    m.file_nodes = m.file_edges = -1;
    m.ir_version = m.opset = -1;
    m.max_accels = m.max_cpus = -1;
    m.max_size_per_accel = NAN;
    m.name = name;
    hsdag_gb_set_meta(b, &m);
    return hsdag_gb_finish(b, out, e);
}

int hsdag_gen_transformer(hsdag_graph **out, const hsdag_gen_transformer_config *c, hsdag_err *e)
{
    *out = NULL;
    gen_tf t;
    int rc = gen_tf_check(c, &t, e);
    if (rc < 0) return rc;
    int64_t ops = hsdag_gen_transformer_ops(c);
    if (ops > HSDAG_MAX_NODES)
        return hsdag_err_set(e, HSDAG_ELIMIT, "transformer: %lld ops exceed the limit of %d", (long long)ops,
                             HSDAG_MAX_NODES);
    hsdag_gb *b = hsdag_gb_create();
    if (!b) return hsdag_err_set(e, HSDAG_ENOMEM, "transformer: out of memory");
    gen_ctx g = {.b = b, .esz = hsdag_dtype_bytes(c->dtype), .dt = c->dtype, .prefix = ""};
    const gen_tf *tp = &t;
    int64_t act[3] = {t.B, t.T, t.D}, npos = c->seq + t.decode;
    double table = (double)t.V * (double)t.D * g.esz;
    gen_ten ids = gen_shape(2, (int64_t[]){t.B, t.T}), wte = gen_shape(2, (int64_t[]){t.V, t.D});
    if (c->tied) /* one weight node feeds the embedding and the head: apart, the table is copied */
        wte = gen_op(&g, "wte", "Parameter", wte, NULL, 0, table, NAN);
    gen_ten in[2] = {wte, ids};
    gen_ten tok =
        gen_op(&g, "embed.tokens.Gather", "Gather", gen_shape(3, act), in, 2, c->tied ? 0 : table, NAN);
    in[0] = gen_shape(2, (int64_t[]){npos, t.D});
    gen_ten pos = gen_op(&g, "embed.positions.Gather", "Gather", gen_shape(3, act), in, 2,
                         (double)npos * (double)t.D * g.esz, NAN);
    gen_ten x = gen_elem(&g, "embed.Add", "Add", &tok, &pos, 0);
    char prefix[48];
    for (int32_t l = 0; l < c->layers && g.rc == 0; l++) {
        snprintf(prefix, sizeof prefix, "blocks.%d.", (int)l);
        g.prefix = prefix;
        x = gen_block(&g, tp, &x);
    }
    g.prefix = "";
    x = gen_layernorm(&g, "ln_f", &x);
    in[0] = x;
    in[1] = c->tied ? wte : gen_shape(2, (int64_t[]){t.D, t.V});
    if (c->tied) in[1].rank = 2, in[1].d[0] = t.D, in[1].d[1] = t.V; /* read transposed: [D, V] */
    gen_ten logits = gen_op(&g, "lm_head.MatMul", "MatMul", gen_shape(3, (int64_t[]){t.B, t.T, t.V}), in, 2,
                            c->tied ? 0 : table, NAN);
    if (g.rc == 0) hsdag_gb_set_flags(b, logits.node, HSDAG_NF_OUTPUT);
    char name[160];
    if (c->name)
        snprintf(name, sizeof name, "%s", c->name);
    else
        snprintf(name, sizeof name, "gpt-L%d-d%lld-h%d-kv%lld-s%lld-%s", (int)c->layers, (long long)t.D,
                 (int)t.H, (long long)t.KVH, (long long)c->seq, t.decode ? "decode" : "prefill");
    rc = gen_finish(&g, b, name, out, "transformer", e);
    hsdag_gb_free(b);
    return rc;
}

/* ---- random DAGs ---- */

hsdag_gen_random_config hsdag_gen_random_config_default(void)
{
    return (hsdag_gen_random_config){
        .nodes = 1000, .degree = 2.0, .window = 64, .seed = 0, .dtype = HSDAG_DT_F32, .name = NULL};
}

int hsdag_gen_random(hsdag_graph **out, const hsdag_gen_random_config *c, hsdag_err *e)
{
    static const char *const ops[] = {
        "MatMul",   "MatMul", "MatMul", "Add", "Add", "Relu", "Relu", "Softmax", "LayerNormalization",
        "Transpose"};
    static const int64_t widths[] = {256, 512, 1024, 2048, 4096};
    *out = NULL;
    if (c->nodes < 1 || c->nodes > HSDAG_MAX_NODES || c->window < 1 || !(c->degree >= 1 && c->degree <= 16))
        return hsdag_err_set(e, HSDAG_EINVAL,
                             "random-dag: nodes must be in 1..%d, window at least 1, degree in [1, 16]",
                             HSDAG_MAX_NODES);
    if (c->dtype <= HSDAG_DT_UNKNOWN || c->dtype >= HSDAG_DT_COUNT_)
        return hsdag_err_set(e, HSDAG_EINVAL, "random-dag: no element type");
    hsdag_gb *b = hsdag_gb_create();
    int64_t *w = hsdag_malloc((size_t)c->nodes * sizeof *w);
    if (!b || !w) {
        hsdag_gb_free(b);
        hsdag_free(w);
        return hsdag_err_set(e, HSDAG_ENOMEM, "random-dag: out of memory");
    }
    gen_ctx g = {.b = b, .esz = hsdag_dtype_bytes(c->dtype), .dt = c->dtype, .prefix = ""};
    hsdag_rng rng;
    hsdag_rng_seed(&rng, c->seed);
    int32_t maxk = (int32_t)ceil(2 * c->degree - 1);
    for (int32_t v = 0; v < c->nodes && g.rc == 0; v++) {
        int32_t lo = v > c->window ? v - c->window : 0, avail = v - lo, k = 0;
        if (v > 0 && hsdag_rng_uniform(&rng) >= 0.01) k = 1 + (int32_t)hsdag_rng_below(&rng, (uint32_t)maxk);
        if (k > avail) k = avail;
        if (k > 4) k = 4;
        gen_ten in[4];
        int32_t pick[4];
        for (int32_t i = 0; i < k; i++) { /* distinct predecessors: rejection among at most 4 */
            int32_t u, dup;
            do {
                u = lo + (int32_t)hsdag_rng_below(&rng, (uint32_t)avail);
                dup = 0;
                for (int32_t j = 0; j < i; j++) dup |= pick[j] == u;
            } while (dup);
            pick[i] = u;
            in[i] = gen_shape(3, (int64_t[]){1, 128, w[u]});
            in[i].node = u;
        }
        const char *op = k ? ops[hsdag_rng_below(&rng, sizeof ops / sizeof *ops)] : "Parameter";
        int64_t width = widths[hsdag_rng_below(&rng, sizeof widths / sizeof *widths)],
                win = k ? in[0].d[2] : width;
        double param = 0;
        gen_ten o;
        if (strcmp(op, "MatMul") == 0) {
            param = (double)win * (double)width * g.esz;
        } else if (k) {
            width = win; /* shape-preserving ops */
        }
        o = gen_shape(3, (int64_t[]){1, 128, width});
        char nm[32];
        snprintf(nm, sizeof nm, "n%d", (int)v);
        gen_ten ins[5];
        int n_in = 0;
        for (int32_t i = 0; i < k; i++) ins[n_in++] = in[i];
        if (param > 0) { /* the weight, for the FLOP estimate: inputs beyond the first are edges only */
            ins[1] = gen_shape(2, (int64_t[]){win, width});
            n_in = 2;
        }
        /* edges from every picked predecessor; the estimate sees the op's own inputs */
        gen_ten r = gen_op(&g, nm, op, o, ins, n_in > 4 ? 4 : n_in, param, NAN);
        for (int32_t i = (param > 0 ? 1 : n_in); i < k && g.rc == 0; i++)
            if ((g.rc = hsdag_gb_add_edge(b, pick[i], r.node, gen_elems(&in[i]) * g.esz)) > 0) g.rc = 0;
        w[v] = width;
    }
    char name[160];
    if (c->name)
        snprintf(name, sizeof name, "%s", c->name);
    else
        snprintf(name, sizeof name, "random-%d-seed%llu", (int)c->nodes, (unsigned long long)c->seed);
    int rc = gen_finish(&g, b, name, out, "random-dag", e);
    hsdag_gb_free(b);
    hsdag_free(w);
    return rc;
}
