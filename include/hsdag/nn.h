/* nn.h - a small hand-written neural-network core: one contiguous parameter block, dense and graph
 * kernels with forward/backward side by side, a categorical sampler, entropy, Adam and checkpoints.
 * Not here: autograd, models or losses of a particular learner (HSDAG/PAC-ML compose these kernels).
 * Entry points: hsdag_nn_params_*, hsdag_nn_adam_*, hsdag_nn_<kernel>_forward/_backward,
 *   hsdag_nn_adj_*, hsdag_nn_gnn_*, hsdag_nn_categorical_*, hsdag_nn_entropy_*.
 *
 * Usage (a 2-layer MLP trained with Adam; error handling shortened; the program sets the thread count):
 *   enum { N = 8 };                                        // rows (samples)
 *   static float x[N * 16], h[N * 128], z[N * 4], logp[N * 4], dlogp[N * 4], dz[N * 4], dh[N * 128],
 *       du[N * 128];
 *   hsdag_err e = {0};
 *   hsdag_nn_params *p;
 *   if (hsdag_nn_params_create(&p, &e) < 0) return;
 *   hsdag_nn_linear l1, l2;
 *   hsdag_nn_linear_add(p, &l1, "l1", 16, 128, 1, &e);     // register shapes first ...
 *   hsdag_nn_linear_add(p, &l2, "l2", 128, 4, 1, &e);
 *   hsdag_rng r; hsdag_rng_seed(&r, 42);
 *   hsdag_nn_params_alloc(p, &r, &e);                      // ... then ONE allocation, initialised
 *   float *(*W)(hsdag_nn_params *, int32_t) = hsdag_nn_params_value, *(*G)(hsdag_nn_params *, int32_t) =
 *       hsdag_nn_params_grad;
 *   // forward: h (N,128), logp (N,4)
 *   hsdag_nn_linear_forward(h, x, W(p, l1.w), W(p, l1.b), N, 16, 128);
 *   hsdag_nn_relu_forward(h, h, N * 128);
 *   hsdag_nn_linear_forward(z, h, W(p, l2.w), W(p, l2.b), N, 128, 4);
 *   hsdag_nn_log_softmax_forward(logp, z, NULL, N, 4);
 *   // backward: dlogp holds dLoss/dlogp; backward kernels ACCUMULATE (+=) into zeroed buffers
 *   hsdag_nn_params_zero_grad(p);
 *   memset(dz, 0, sizeof dz); memset(dh, 0, sizeof dh); memset(du, 0, sizeof du);
 *   hsdag_nn_log_softmax_backward(dz, dlogp, logp, N, 4);
 *   hsdag_nn_linear_backward(dh, G(p, l2.w), G(p, l2.b), dz, h, W(p, l2.w), N, 128, 4);
 *   hsdag_nn_relu_backward(du, dh, h, N * 128);            // h is ReLU's output (in place above)
 *   hsdag_nn_linear_backward(NULL, G(p, l1.w), G(p, l1.b), du, x, W(p, l1.w), N, 16, 128);
 *   hsdag_nn_adam_config ac = hsdag_nn_adam_config_default();
 *   hsdag_nn_adam_step(p, &ac, NULL);
 *   hsdag_nn_params_free(p);
 *
 * Conventions:
 *  - Tensors are row-major float arrays; shapes are stated as (rows, cols) in comments.
 *  - Kernel arguments: outputs, then inputs, then sizes. Forward kernels OVERWRITE their outputs;
 *    backward kernels ACCUMULATE (+=) into their gradient outputs (so a tensor used twice gets the
 *    sum). A NULL gradient output means "not needed" (e.g. dx of the input layer). A gradient
 *    output must not alias any input of the same call (forward outputs may alias inputs where
 *    stated). Bad sizes or a dropout p outside [0, 1) are caller bugs (asserted), not statuses.
 *  - Linear weights use the PyTorch layout W (out, in): y = x W^T + b.
 *  - Graph kernels take a hsdag_nn_adj: row i lists the nodes whose messages node i receives.
 *  - Kernels never allocate. Objects (params, adj, gnn) allocate at create/alloc time only; a gnn
 *    layer grows its scratch once when it first sees a larger graph.
 *  - Determinism: no threads of our own, no hash order; call hsdag_nn_set_threads(1) once so
 *    OpenBLAS uses one thread (its sgemm is deterministic for a fixed thread count). Sums are in
 *    index order; scatter-style backward passes (spmm, gather, segment) add rows in index order.
 *  - Checkpoint fuzz target: fuzz/fuzz_nnckpt.c.
 */
#ifndef HSDAG_NN_H
#define HSDAG_NN_H

#include "hsdag/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the number of OpenBLAS threads. Process-wide, so it is the program's explicit choice: the library
 * never calls it (the CLI's main sets 1). 1 is recommended: small matrices gain nothing from threads on a
 * shared machine and results stay bit-identical run to run. */
HSDAG_API void hsdag_nn_set_threads(int n);

/* ======================================================================================
 * ---- parameter set: register tensors by shape, then one allocation ----
 * ====================================================================================== */

/* How a tensor is initialised by hsdag_nn_params_alloc (in registration order, one RNG stream). */
typedef enum {
    HSDAG_NN_INIT_ZERO = 0, /* 0 */
    HSDAG_NN_INIT_ONE,      /* 1 (LayerNorm gains) */
    HSDAG_NN_INIT_UNIFORM,  /* U(-scale, scale) */
    HSDAG_NN_INIT_NORMAL,   /* N(0, scale^2) */
    HSDAG_NN_INIT_LINEAR,   /* PyTorch nn.Linear default: U(-1/sqrt(cols), 1/sqrt(cols)); scale ignored */
    HSDAG_NN_INIT_GLOROT,   /* U(-a, a), a = sqrt(6 / (rows + cols)); scale ignored */
    HSDAG_NN_INIT_CONST     /* every entry = scale */
} hsdag_nn_init;

/* Opaque. Invariants: tensors are registered before alloc and never after; after alloc the blocks
 * value, grad, adam_m, adam_v each hold count() floats in the same layout, tensor t at offset(t). */
typedef struct hsdag_nn_params hsdag_nn_params;

HSDAG_API int hsdag_nn_params_create(hsdag_nn_params **out, hsdag_err *e); /* 0 or HSDAG_ENOMEM */
HSDAG_API void hsdag_nn_params_free(hsdag_nn_params *p);                   /* NULL is a no-op */

/* Registers a (rows, cols) tensor; returns its id (>= 0) or a negative status (EINVAL if p is
 * already allocated, the name is empty/longer than 63 bytes or already used, or a size is <= 0;
 * ELIMIT past 2^31 floats; ENOMEM). name is copied. */
HSDAG_API int32_t hsdag_nn_params_add(hsdag_nn_params *p, const char *name, int32_t rows, int32_t cols,
                                      hsdag_nn_init init, float scale, hsdag_err *e);
/* Allocates value, grad, Adam m and v in one block, initialises values from rng (in registration
 * order), zeroes grad/m/v and the Adam step. Returns 0, EINVAL (already allocated) or ENOMEM. */
HSDAG_API int hsdag_nn_params_alloc(hsdag_nn_params *p, hsdag_rng *rng, hsdag_err *e);

HSDAG_API int32_t hsdag_nn_params_n_tensors(const hsdag_nn_params *p);
HSDAG_API size_t hsdag_nn_params_count(const hsdag_nn_params *p); /* total floats in one block */
HSDAG_API int32_t hsdag_nn_params_find(const hsdag_nn_params *p, const char *name); /* id or -1 */
HSDAG_API const char *hsdag_nn_params_name(const hsdag_nn_params *p, int32_t id);
HSDAG_API int32_t hsdag_nn_params_rows(const hsdag_nn_params *p, int32_t id);
HSDAG_API int32_t hsdag_nn_params_cols(const hsdag_nn_params *p, int32_t id);
HSDAG_API size_t hsdag_nn_params_offset(const hsdag_nn_params *p, int32_t id); /* in floats */
/* Pointers into the blocks (valid after alloc until free). Whole blocks: id = -1 gives the start. */
HSDAG_API float *hsdag_nn_params_value(hsdag_nn_params *p, int32_t id);
HSDAG_API float *hsdag_nn_params_grad(hsdag_nn_params *p, int32_t id);
HSDAG_API void hsdag_nn_params_zero_grad(hsdag_nn_params *p);
HSDAG_API int64_t hsdag_nn_params_step(const hsdag_nn_params *p); /* Adam steps taken so far */

/* Copies the values (not grads, not Adam state) of src into dst, e.g. a DQN target network or a
 * snapshot of the best policy. The tensor tables must match (names and shapes); EINVAL otherwise,
 * naming the first mismatch. Both sets must be allocated. */
HSDAG_API int hsdag_nn_params_copy_values(hsdag_nn_params *dst, const hsdag_nn_params *src, hsdag_err *e);

/* Checkpoint: appends to out a binary image through the wire codec (codec.h): a frame "HSDAGNN\0"
 * version 2 (magic, version, length, checksum) whose payload is n_tensors u32, count u64, adam step i64,
 * per tensor (rows i32, cols i32, name_len u32, name bytes), then value, adam m, adam v as float32 arrays
 * (grad is not saved). Version-1 images (the same fields after magic + u32 1, FNV-1a 64 at the end) load
 * too. Returns 0, EINVAL (not allocated) or ENOMEM (out->oom). */
HSDAG_API int hsdag_nn_params_save(const hsdag_nn_params *p, hsdag_buf *out, hsdag_err *e);
/* Restores values, Adam m/v and step from buf. The tensor table (count, names, shapes) must match
 * p exactly. *used (optional) gets the bytes consumed, so an image can be embedded in a larger
 * file. Returns 0, EPARSE (bad magic/truncated/checksum) or EINVAL (shape mismatch), with a
 * message naming the tensor. p is left unchanged on error. */
HSDAG_API int hsdag_nn_params_load(hsdag_nn_params *p, const void *buf, size_t len, size_t *used,
                                   hsdag_err *e);

/* ---- Adam over the whole block in one loop ---- */
typedef struct hsdag_nn_adam_config {
    float lr;           /* learning rate (default 1e-3) */
    float beta1, beta2; /* 0.9, 0.999 */
    float eps;          /* 1e-8 */
    float weight_decay; /* 0 = off; L2 added to the gradient (torch.optim.Adam) unless decoupled */
    int decoupled;      /* 1 = AdamW: value -= lr * weight_decay * value, separately from Adam */
    float clip_norm;    /* > 0: scale all gradients so their global L2 norm is <= clip_norm */
} hsdag_nn_adam_config;
HSDAG_API hsdag_nn_adam_config hsdag_nn_adam_config_default(void);

typedef struct hsdag_nn_adam_stats {
    double grad_norm; /* global L2 norm of the gradient before clipping */
    double scale;     /* clipping factor applied (1 when not clipped) */
} hsdag_nn_adam_stats;
/* One bias-corrected Adam step: increments the step count, updates value from grad. Does not zero
 * grad. stats may be NULL. p must be allocated. Non-finite gradients are applied as they are
 * (check stats->grad_norm if that matters). */
HSDAG_API void hsdag_nn_adam_step(hsdag_nn_params *p, const hsdag_nn_adam_config *c,
                                  hsdag_nn_adam_stats *stats);

/* ---- layer parameter helpers: register the usual tensors under "<name>.w" / "<name>.b" ---- */
typedef struct hsdag_nn_linear {
    int32_t w, b; /* tensor ids; b = -1 without bias. w is (out, in), b is (1, out) */
    int32_t in, out;
} hsdag_nn_linear;
/* W: HSDAG_NN_INIT_LINEAR, b: U(-1/sqrt(in), 1/sqrt(in)) as PyTorch. Returns 0 or a status. */
HSDAG_API int hsdag_nn_linear_add(hsdag_nn_params *p, hsdag_nn_linear *l, const char *name, int32_t in,
                                  int32_t out, int bias, hsdag_err *e);
typedef struct hsdag_nn_layernorm {
    int32_t g, b; /* gain (1, d) initialised to 1, bias (1, d) initialised to 0 */
    int32_t d;
} hsdag_nn_layernorm;
HSDAG_API int hsdag_nn_layernorm_add(hsdag_nn_params *p, hsdag_nn_layernorm *l, const char *name, int32_t d,
                                     hsdag_err *e);

/* ======================================================================================
 * ---- dense kernels (src/nn/layers.c) ----
 * ====================================================================================== */

/* y (n, out) = x (n, in) W^T + b; w (out, in), b (out) or NULL. y must not alias x. */
HSDAG_API void hsdag_nn_linear_forward(float *y, const float *x, const float *w, const float *b, int32_t n,
                                       int32_t in, int32_t out);
/* dx (n, in) += dy W; dw (out, in) += dy^T x; db (out) += sum_rows dy. Any of dx, dw, db may be NULL. */
HSDAG_API void hsdag_nn_linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x,
                                        const float *w, int32_t n, int32_t in, int32_t out);

/* y (len) = max(x, 0); y may equal x. */
HSDAG_API void hsdag_nn_relu_forward(float *y, const float *x, size_t len);
/* dx (len) += dy * (y > 0), y = the forward OUTPUT. dx must not alias dy (it accumulates). */
HSDAG_API void hsdag_nn_relu_backward(float *dx, const float *dy, const float *y, size_t len);

/* y (len) = x > 0 ? x : slope * x; y may equal x. */
HSDAG_API void hsdag_nn_leaky_relu_forward(float *y, const float *x, float slope, size_t len);
/* dx (len) += dy * (x > 0 ? 1 : slope), x = the forward INPUT. */
HSDAG_API void hsdag_nn_leaky_relu_backward(float *dx, const float *dy, const float *x, float slope,
                                            size_t len);

/* y (len) = 1 / (1 + exp(-x)); y may equal x. */
HSDAG_API void hsdag_nn_sigmoid_forward(float *y, const float *x, size_t len);
/* dx (len) += dy * y (1 - y), y = the forward OUTPUT. */
HSDAG_API void hsdag_nn_sigmoid_backward(float *dx, const float *dy, const float *y, size_t len);

/* Residual connection. y (len) = a + b; y may equal a or b. */
HSDAG_API void hsdag_nn_add_forward(float *y, const float *a, const float *b, size_t len);
/* da += dy; db += dy (either may be NULL). */
HSDAG_API void hsdag_nn_add_backward(float *da, float *db, const float *dy, size_t len);

/* Elementwise product (e.g. h_u ⊙ h_v). y (len) = a * b. */
HSDAG_API void hsdag_nn_mul_forward(float *y, const float *a, const float *b, size_t len);
/* da += dy * b; db += dy * a (either may be NULL). */
HSDAG_API void hsdag_nn_mul_backward(float *da, float *db, const float *dy, const float *a, const float *b,
                                     size_t len);

/* Row scaling. y (n, d) = x (n, d) * s (n) row-wise. */
HSDAG_API void hsdag_nn_rowscale_forward(float *y, const float *x, const float *s, int32_t n, int32_t d);
/* dx (n, d) += dy * s; ds (n) += sum_cols dy * x (either may be NULL). */
HSDAG_API void hsdag_nn_rowscale_backward(float *dx, float *ds, const float *dy, const float *x,
                                          const float *s, int32_t n, int32_t d);

/* Column concatenation. y (n, da + db) = [a (n, da) | b (n, db)]. */
HSDAG_API void hsdag_nn_concat_forward(float *y, const float *a, const float *b, int32_t n, int32_t da,
                                       int32_t db);
/* dA (n, da) += left part of dy; dB (n, db) += right part (either may be NULL). */
HSDAG_API void hsdag_nn_concat_backward(float *dA, float *dB, const float *dy, int32_t n, int32_t da,
                                        int32_t db);

/* LayerNorm with affine: y = (x - mean) * rstd * g + b per row, rstd = 1/sqrt(var + eps) with the
 * biased variance (as PyTorch). y (n, d), mean (n), rstd (n) are outputs (mean/rstd are the cache
 * for backward); x (n, d), g (d), b (d). y may not alias x. */
HSDAG_API void hsdag_nn_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *g,
                                          const float *b, int32_t n, int32_t d, float eps);
/* dx (n, d) += ..., dg (d) += ..., db (d) += ... (any may be NULL); x, mean, rstd from forward. */
HSDAG_API void hsdag_nn_layernorm_backward(float *dx, float *dg, float *db, const float *dy, const float *x,
                                           const float *mean, const float *rstd, const float *g, int32_t n,
                                           int32_t d);

/* Inverted dropout. train: mask[i] = (u_i >= p) / (1 - p), y = x * mask, where u_i are 32-bit uniforms
 * u_i = w / 2^32 taken in index order from hsdag_rng_u64 draws, the low half of each draw first (so
 * ceil(len / 2) draws; an element is kept with probability 1 - ceil(p 2^32) / 2^32, within 2^-32 of 1 - p).
 * Eval (train = 0): y = x, mask = 1, rng untouched. 0 <= p < 1.
 * y (len), mask (len) outputs; y may equal x. */
HSDAG_API void hsdag_nn_dropout_forward(float *y, float *mask, const float *x, float p, int train,
                                        hsdag_rng *rng, size_t len);
/* dx (len) += dy * mask. */
HSDAG_API void hsdag_nn_dropout_backward(float *dx, const float *dy, const float *mask, size_t len);

/* Row softmax. p (n, k) = softmax(x (n, k)) per row. mask (n, k) optional (NULL = all valid):
 * entries with mask 0 get probability 0, exactly as logits of -inf. x may also hold -INFINITY
 * itself. A row with no valid entry gives all zeros. p may equal x. */
HSDAG_API void hsdag_nn_softmax_forward(float *p, const float *x, const uint8_t *mask, int32_t n, int32_t k);
/* dx (n, k) += p * (dp - sum_j p_j dp_j); masked (p = 0) entries get nothing. */
HSDAG_API void hsdag_nn_softmax_backward(float *dx, const float *dp, const float *p, int32_t n, int32_t k);

/* Row log-softmax. lp (n, k) = x - logsumexp(x) per row; masked entries (mask 0 or x = -inf) get
 * -INFINITY. A row with no valid entry gives all -INFINITY. lp may equal x. */
HSDAG_API void hsdag_nn_log_softmax_forward(float *lp, const float *x, const uint8_t *mask, int32_t n,
                                            int32_t k);
/* dx (n, k) += dlp - exp(lp) * sum_j dlp_j, summing and writing only entries with lp > -inf. */
HSDAG_API void hsdag_nn_log_softmax_backward(float *dx, const float *dlp, const float *lp, int32_t n,
                                             int32_t k);

/* ---- categorical distribution over the k entries of one row ---- */
/* Samples from softmax(logits) restricted to mask (NULL = all valid; logits of -inf are invalid
 * too). One hsdag_rng_uniform draw; the CDF is accumulated in double in index order. *idx gets the
 * index, *logp (optional) its log-probability. Returns 0 or HSDAG_EINVAL if no entry is valid. */
HSDAG_API int hsdag_nn_categorical_sample_logits(int32_t *idx, float *logp, const float *logits,
                                                 const uint8_t *mask, int32_t k, hsdag_rng *rng);
/* Same from probabilities (need not be normalised; entries <= 0 or masked are never drawn). */
HSDAG_API int hsdag_nn_categorical_sample_probs(int32_t *idx, float *logp, const float *probs,
                                                const uint8_t *mask, int32_t k, hsdag_rng *rng);
/* Greedy choice (evaluation): the valid index of largest logit, lowest index on ties. EINVAL if none. */
HSDAG_API int hsdag_nn_categorical_argmax(int32_t *idx, const float *logits, const uint8_t *mask, int32_t k);

/* Entropy per row from log-probabilities: h (n) = -sum_j exp(lp_j) lp_j over lp_j > -inf. */
HSDAG_API void hsdag_nn_entropy_forward(float *h, const float *lp, int32_t n, int32_t k);
/* Gradient w.r.t. the log-probabilities: dlp (n, k) += dh * (-exp(lp) (lp + 1)) on valid entries.
 * Chained through hsdag_nn_log_softmax_backward this gives dH/dlogit_j = -p_j (lp_j + H). */
HSDAG_API void hsdag_nn_entropy_backward(float *dlp, const float *dh, const float *lp, int32_t n, int32_t k);

/* ======================================================================================
 * ---- graph kernels (src/nn/gnn.c) ----
 * ====================================================================================== */

/* Build options for hsdag_nn_adj_create. */
enum {
    HSDAG_NN_ADJ_SYMMETRIC = 1 /* use A + A^T (the GCN/HSDAG convention on DAGs) */
};

/* A message-passing adjacency: plain data, made by hsdag_nn_adj_create, freed by hsdag_nn_adj_free.
 * Invariants: row i (receiver) holds idx[off[i] .. off[i+1]-1], sorted ascending, no duplicates,
 * ALWAYS including i itself exactly once (at position self[i]); 0 <= idx < n. Per entry weights:
 *   w_gcn  = 1 / sqrt(d_i d_j), d = row length (neighbours + self): D^-1/2 (A+I) D^-1/2;
 *   w_sum  = 1 for neighbours, 0 for the self entry (GIN's sum);
 *   w_mean = 1 / (row length - 1) for neighbours, 0 for self (SAGE's mean; 0 for isolated nodes). */
typedef struct hsdag_nn_adj {
    int32_t n;     /* nodes */
    int32_t nnz;   /* entries incl. n self-loops */
    int32_t *off;  /* [n + 1] */
    int32_t *idx;  /* [nnz] senders */
    int32_t *self; /* [n] CSR slot of the self entry of row i */
    float *w_gcn;  /* [nnz] */
    float *w_sum;  /* [nnz] */
    float *w_mean; /* [nnz] */
} hsdag_nn_adj;

/* Builds the adjacency of n nodes from m directed edges src[k] -> dst[k] (receiver dst). Self-edges
 * and duplicates in the input are ignored. flags: HSDAG_NN_ADJ_SYMMETRIC. Returns 0, EINVAL
 * (n <= 0 or an id out of range, named in e) or ENOMEM. One allocation. */
HSDAG_API int hsdag_nn_adj_create(hsdag_nn_adj **out, int32_t n, int32_t m, const int32_t *src,
                                  const int32_t *dst, unsigned flags, hsdag_err *e);
/* Same from a CSR of out-edges (off [n+1], dst [off[n]]), e.g. hsdag_graph's out_off/out_dst. */
HSDAG_API int hsdag_nn_adj_create_csr(hsdag_nn_adj **out, int32_t n, const int32_t *off, const int32_t *dst,
                                      unsigned flags, hsdag_err *e);
HSDAG_API void hsdag_nn_adj_free(hsdag_nn_adj *a);

/* Sparse aggregation with per-entry weights w (one of adj->w_gcn / w_sum / w_mean or any [nnz]):
 * y (n, d) = sum_k w[k] x[idx[k]] over row i's entries. */
HSDAG_API void hsdag_nn_spmm_forward(float *y, const float *x, const hsdag_nn_adj *a, const float *w,
                                     int32_t d);
/* dx (n, d) += A_w^T dy (scatter; works for non-symmetric weights). */
HSDAG_API void hsdag_nn_spmm_backward(float *dx, const float *dy, const hsdag_nn_adj *a, const float *w,
                                      int32_t d);

/* Row gather. y (m, d) = x[idx[k]] for k < m; idx values in [0, n). */
HSDAG_API void hsdag_nn_gather_forward(float *y, const float *x, const int32_t *idx, int32_t m, int32_t d);
/* dx[idx[k]] += dy[k] (dx has the n rows of x). */
HSDAG_API void hsdag_nn_gather_backward(float *dx, const float *dy, const int32_t *idx, int32_t m, int32_t d);

/* Segment-sum pooling: y (nseg, d) = sum of rows i of x (n, d) with seg[i] = c; seg[i] in [0, nseg).
 * Rows are added in index order (deterministic). Empty segments give 0. */
HSDAG_API void hsdag_nn_segment_sum_forward(float *y, const float *x, const int32_t *seg, int32_t n,
                                            int32_t d, int32_t nseg);
/* dx[i] += dy[seg[i]]. */
HSDAG_API void hsdag_nn_segment_sum_backward(float *dx, const float *dy, const int32_t *seg, int32_t n,
                                             int32_t d);
/* Segment-mean pooling: y = segment sum / count; inv_count (nseg) is an output (cache for backward,
 * 0 for empty segments). seg = NULL pools all rows into one (nseg must then be 1). */
HSDAG_API void hsdag_nn_segment_mean_forward(float *y, float *inv_count, const float *x, const int32_t *seg,
                                             int32_t n, int32_t d, int32_t nseg);
/* dx[i] += dy[seg[i]] * inv_count[seg[i]]. */
HSDAG_API void hsdag_nn_segment_mean_backward(float *dx, const float *dy, const float *inv_count,
                                              const int32_t *seg, int32_t n, int32_t d);

/* ---- GNN layers: GCN / GAT / GIN / GraphSAGE behind one handle (the paper's ablation switch) ----
 * GCN : y = Â x W^T + b,  Â = adj->w_gcn (D^-1/2 (A+I) D^-1/2).           params W (out,in), b
 * GAT : per head h: z = x W_h^T; e_ij = LeakyReLU(a_dst_h·z_i + a_src_h·z_j) over j in row i
 *       (self included); alpha = softmax_j(e_ij); y_i,h = sum_j alpha_ij z_j + b_h. Heads are
 *       concatenated: out = heads * (out / heads).       params W (out,in), a_src, a_dst (heads, out/heads),
 * b
 * GIN : y = W2 ReLU(W1 ((1 + eps) x_i + sum_{j in N(i)} x_j) + b1) + b2 (hidden width = out);
 *       eps is a trained scalar when gin_train_eps, else fixed at gin_eps.
 *                                         params W1 (out,in), b1, W2 (out,out), b2 [, eps (1,1)]
 * SAGE: y = W_self x_i + W_neigh mean_{j in N(i)} x_j + b (mean of 0 neighbours = 0).
 *                                                           params W_self, W_neigh (out,in), b
 * No activation, dropout or normalisation after the layer: compose those with the dense kernels.
 * The caller owns the per-call cache (written by forward, read by backward) so several forward
 * passes (e.g. the 20 steps of an episode) can be back-propagated later. */
typedef enum {
    HSDAG_NN_GNN_GCN = 0,
    HSDAG_NN_GNN_GAT,
    HSDAG_NN_GNN_GIN,
    HSDAG_NN_GNN_SAGE
} hsdag_nn_gnn_kind;

typedef struct hsdag_nn_gnn_config {
    hsdag_nn_gnn_kind kind; /* default GCN */
    int32_t in, out;        /* feature widths (required, > 0) */
    int32_t heads;          /* GAT heads; out % heads == 0 (default 1) */
    float gat_slope;        /* GAT LeakyReLU negative slope (default 0.2) */
    float gin_eps;          /* GIN initial/fixed eps (default 0) */
    int gin_train_eps;      /* 1 = eps is a parameter (default 0: GIN-0) */
} hsdag_nn_gnn_config;
HSDAG_API hsdag_nn_gnn_config hsdag_nn_gnn_config_default(void);
/* Parses "gcn", "gat", "gin", "sage" (or "graphsage"); returns 0 or EINVAL. */
HSDAG_API int hsdag_nn_gnn_kind_parse(hsdag_nn_gnn_kind *out, const char *s, hsdag_err *e);
HSDAG_API const char *hsdag_nn_gnn_kind_name(hsdag_nn_gnn_kind k);

typedef struct hsdag_nn_gnn hsdag_nn_gnn;
/* Registers the layer's tensors in p as "<name>.<tensor>" (p must not be allocated yet). */
HSDAG_API int hsdag_nn_gnn_create(hsdag_nn_gnn **out, hsdag_nn_params *p, const char *name,
                                  const hsdag_nn_gnn_config *cfg, hsdag_err *e);
HSDAG_API void hsdag_nn_gnn_free(hsdag_nn_gnn *g);
/* Floats of per-call cache needed for a graph of n nodes and nnz adjacency entries (may be 0). */
HSDAG_API size_t hsdag_nn_gnn_cache_floats(const hsdag_nn_gnn *g, int32_t n, int32_t nnz);
/* y (n, out) from x (n, in); cache gets cache_floats(n, nnz) floats (may be NULL if that is 0).
 * Returns 0 or ENOMEM (scratch growth; only when a larger graph than before is seen). */
HSDAG_API int hsdag_nn_gnn_forward(hsdag_nn_gnn *g, hsdag_nn_params *p, float *y, float *cache,
                                   const float *x, const hsdag_nn_adj *a, hsdag_err *e);
/* dx (n, in) += ... (may be NULL); parameter gradients += into p's grad block. x and cache exactly
 * as given to / written by the matching forward. Returns 0 or ENOMEM. */
HSDAG_API int hsdag_nn_gnn_backward(hsdag_nn_gnn *g, hsdag_nn_params *p, float *dx, const float *dy,
                                    const float *cache, const float *x, const hsdag_nn_adj *a, hsdag_err *e);
/* Pre-sizes the scratch for graphs up to n nodes / nnz entries so forward/backward never allocate. */
HSDAG_API int hsdag_nn_gnn_reserve(hsdag_nn_gnn *g, int32_t n, int32_t nnz, hsdag_err *e);

#ifdef __cplusplus
}
#endif
#endif
