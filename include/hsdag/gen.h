/* gen.h - generated computation graphs: GPT-style transformer decoders at any scale (prefill or one decode step)
 * and seeded random DAGs for tests and benchmarks.
 * Not here: weights or numerics (structure, shapes, FLOPs, weight and tensor bytes only), file writing (io.h).
 * Entry points: hsdag_gen_transformer_config_default, hsdag_gen_transformer, hsdag_gen_random_config_default,
 * hsdag_gen_random.
 *
 * Usage:
 *   hsdag_gen_transformer_config c = hsdag_gen_transformer_config_default();
 *   c.layers = 24; c.hidden = 1024; c.heads = 16; c.kv_heads = 4; c.seq = 512;
 *   hsdag_graph *g; hsdag_err e = {0};
 *   if (hsdag_gen_transformer(&g, &c, &e) < 0) puts(e.msg);   // "transformer: hidden 1000 ..."
 *   printf("%d ops\n", g->n_nodes);
 *   hsdag_graph_free(g);
 */
#ifndef HSDAG_GEN_H
#define HSDAG_GEN_H

#include "hsdag/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pre-LayerNorm GPT-style decoder as torch.onnx.export writes it (opset 17), one node per ONNX op that a
 * runtime executes (docs/formats.md, "Generated graphs"): token and position embeddings (Gather, Gather,
 * Add); per block LayerNormalization, Q/K/V projections (MatMul + bias Add), head split (Reshape,
 * Transpose), with GQA the K/V head repeat (Unsqueeze, Expand, Reshape), scores (Transpose, MatMul, Mul),
 * the causal mask (Add, prefill only), Softmax, MatMul, head merge (Transpose, Reshape), output projection,
 * residual Add, LayerNormalization, MLP up projection, erf GELU (Div, Erf, Add, Mul, Mul), down projection,
 * residual Add; a final LayerNormalization and the LM head MatMul.
 * Invariants of a valid config: hidden % heads == 0, heads % kv_heads == 0, every count >= 1. */
typedef struct hsdag_gen_transformer_config {
    int32_t layers;    /* decoder blocks */
    int64_t hidden;    /* model width d */
    int32_t heads;     /* query heads */
    int32_t kv_heads;  /* key/value heads (GQA, MQA = 1); 0 = heads */
    int64_t ffn;       /* MLP width; 0 = 4 * hidden */
    int64_t seq;       /* prefill: prompt tokens per sequence; decode: tokens already in the KV cache */
    int64_t vocab;     /* vocabulary size */
    int64_t batch;     /* sequences */
    int decode;        /* 0: prefill of seq tokens; 1: one decode step (one new token per sequence) */
    int tied;          /* the LM head reads the token-embedding table (one weight node feeds both) */
    int bias;          /* projections carry a bias Add (GPT-2 style); 0: bias-free (Llama style) */
    hsdag_dtype dtype; /* weights, activations and KV cache */
    const char *name;  /* graph name, NULL = derived from the config */
} hsdag_gen_transformer_config;

/* 12 layers, hidden 768, 12 heads, kv_heads 0, ffn 0, seq 512, vocab 50257, batch 1, prefill, untied, bias,
 * f16. */
HSDAG_API hsdag_gen_transformer_config hsdag_gen_transformer_config_default(void);

/* Ops the config gives (without building anything): for choosing layers to reach a target size. -1 if the
 * config is invalid. */
HSDAG_API int64_t hsdag_gen_transformer_ops(const hsdag_gen_transformer_config *c);

/* Builds the decoder. FLOPs come from hsdag_opcost_estimate on the ops' shapes (the rules the ONNX reader
 * applies), weight bytes are the parameters each op reads, edge bytes the tensors carried. KV cache: in
 * prefill each block's K and V after the head split are the cache written, in decode each block's two
 * Concat nodes append the new token to the cache read (param_bytes = the cache read) and both hold the
 * whole cache as resident memory (mem_bytes). Errors: HSDAG_EINVAL for a bad config, HSDAG_ELIMIT above
 * HSDAG_MAX_NODES ops or HSDAG_MAX_ELEMS elements in one tensor, HSDAG_ENOMEM. */
HSDAG_API int hsdag_gen_transformer(hsdag_graph **out, const hsdag_gen_transformer_config *c, hsdag_err *e);

/* A seeded random DAG: node v > 0 takes its inputs from distinct nodes among the `window` before it (about
 * `degree` of them on average, 1% of the nodes are extra sources); ops from a fixed mix (MatMul, Add, Relu,
 * Softmax, LayerNormalization, Transpose; sources are Parameter) with [1, 128, w] outputs, w in 256..4096,
 * FLOPs from hsdag_opcost_estimate, MatMul weights as parameter bytes. Same seed, same graph. */
typedef struct hsdag_gen_random_config {
    int32_t nodes;  /* >= 1 */
    double degree;  /* mean in-degree, in [1, 16] */
    int32_t window; /* >= 1 */
    uint64_t seed;  /* RNG seed */
    hsdag_dtype dtype;
    const char *name; /* graph name, NULL = derived from the config */
} hsdag_gen_random_config;

/* 1000 nodes, degree 2, window 64, seed 0, f32. */
HSDAG_API hsdag_gen_random_config hsdag_gen_random_config_default(void);
HSDAG_API int hsdag_gen_random(hsdag_graph **out, const hsdag_gen_random_config *c, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
