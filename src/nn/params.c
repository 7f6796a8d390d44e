/* params.c - the parameter set (one contiguous block for values, grads, Adam m and v), Adam,
 * checkpoint save/load and the Linear/LayerNorm registration helpers.
 * Not here: the kernels (layers.c, gnn.c); no per-tensor optimiser options.
 * Entry points: hsdag_nn_params_*, hsdag_nn_adam_*, hsdag_nn_linear_add, hsdag_nn_layernorm_add.
 */
#include "hsdag/codec.h"
#include "hsdag/nn.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#define NAME_MAX_ 63
#define MAX_FLOATS_ ((size_t)1 << 31)
#define CKPT_VERSION_ 2u /* version 1 (before the codec frame) is still read */

typedef struct tensor {
    char name[NAME_MAX_ + 1];
    int32_t rows, cols;
    size_t offset; /* floats from the block start */
    hsdag_nn_init init;
    float scale;
} tensor;

/* Invariants: block == NULL until alloc; then block holds 4 * count floats:
 * value [0, count), grad [count, 2count), m [2count, 3count), v [3count, 4count). */
struct hsdag_nn_params {
    tensor *t;
    size_t n_t, cap_t;
    size_t count;
    float *block;
    float *value, *grad, *m, *v;
    int64_t step;
};

void hsdag_nn_set_threads(int n)
{
    openblas_set_num_threads(n > 0 ? n : 1);
}

int hsdag_nn_params_create(hsdag_nn_params **out, hsdag_err *e)
{
    *out = hsdag_calloc(1, sizeof(hsdag_nn_params));
    return *out ? 0 : hsdag_err_set(e, HSDAG_ENOMEM, "nn params: out of memory");
}

void hsdag_nn_params_free(hsdag_nn_params *p)
{
    if (!p) return;
    hsdag_free(p->t);
    hsdag_free(p->block);
    hsdag_free(p);
}

int32_t hsdag_nn_params_find(const hsdag_nn_params *p, const char *name)
{
    for (size_t i = 0; i < p->n_t; i++)
        if (strcmp(p->t[i].name, name) == 0) return (int32_t)i;
    return -1;
}

int32_t hsdag_nn_params_add(hsdag_nn_params *p, const char *name, int32_t rows, int32_t cols,
                            hsdag_nn_init init, float scale, hsdag_err *e)
{
    if (p->block)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: tensor '%s': set already allocated", name);
    size_t len = strlen(name);
    if (len == 0 || len > NAME_MAX_)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: tensor '%s': name empty or over %d bytes", name,
                             NAME_MAX_);
    if (rows <= 0 || cols <= 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: tensor '%s': bad shape (%d, %d)", name, rows, cols);
    if (hsdag_nn_params_find(p, name) >= 0)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: tensor '%s': name already used", name);
    size_t sz = (size_t)rows * (size_t)cols;
    if (sz > MAX_FLOATS_ || p->count + sz > MAX_FLOATS_)
        return hsdag_err_set(e, HSDAG_ELIMIT, "nn params: tensor '%s': more than 2^31 floats", name);
    if (hsdag_grow((void **)&p->t, &p->cap_t, p->n_t + 1, sizeof(tensor)) < 0)
        return hsdag_err_set(e, HSDAG_ENOMEM, "nn params: tensor '%s': out of memory", name);
    tensor *t = &p->t[p->n_t];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, len + 1);
    t->rows = rows;
    t->cols = cols;
    /* keep every tensor 16-float (64-byte) aligned within the block */
    t->offset = p->count;
    t->init = init;
    t->scale = scale;
    p->count += (sz + 15) & ~(size_t)15;
    return (int32_t)p->n_t++;
}

static void init_tensor(float *v, const tensor *t, hsdag_rng *rng)
{
    size_t sz = (size_t)t->rows * (size_t)t->cols;
    double a = t->scale;
    switch (t->init) {
    case HSDAG_NN_INIT_ZERO:
        break; /* block is calloc'ed */
    case HSDAG_NN_INIT_ONE:
        for (size_t i = 0; i < sz; i++) v[i] = 1.0f;
        break;
    case HSDAG_NN_INIT_CONST:
        for (size_t i = 0; i < sz; i++) v[i] = t->scale;
        break;
    case HSDAG_NN_INIT_NORMAL:
        for (size_t i = 0; i < sz; i++) v[i] = (float)(a * hsdag_rng_normal(rng));
        break;
    case HSDAG_NN_INIT_LINEAR:
    case HSDAG_NN_INIT_GLOROT:
    case HSDAG_NN_INIT_UNIFORM:
        if (t->init == HSDAG_NN_INIT_LINEAR) a = 1.0 / sqrt((double)t->cols);
        if (t->init == HSDAG_NN_INIT_GLOROT) a = sqrt(6.0 / (double)(t->rows + t->cols));
        for (size_t i = 0; i < sz; i++) v[i] = (float)(a * (2.0 * hsdag_rng_uniform(rng) - 1.0));
        break;
    }
}

int hsdag_nn_params_alloc(hsdag_nn_params *p, hsdag_rng *rng, hsdag_err *e)
{
    if (p->block) return hsdag_err_set(e, HSDAG_EINVAL, "nn params: already allocated");
    size_t c = p->count ? p->count : 16;
    p->block = hsdag_calloc(4 * c, sizeof(float));
    if (!p->block) return hsdag_err_set(e, HSDAG_ENOMEM, "nn params: out of memory for %zu floats", 4 * c);
    p->value = p->block;
    p->grad = p->block + c;
    p->m = p->block + 2 * c;
    p->v = p->block + 3 * c;
    p->step = 0;
    for (size_t i = 0; i < p->n_t; i++) init_tensor(p->value + p->t[i].offset, &p->t[i], rng);
    return 0;
}

int32_t hsdag_nn_params_n_tensors(const hsdag_nn_params *p)
{
    return (int32_t)p->n_t;
}
size_t hsdag_nn_params_count(const hsdag_nn_params *p)
{
    return p->count;
}
int64_t hsdag_nn_params_step(const hsdag_nn_params *p)
{
    return p->step;
}

const char *hsdag_nn_params_name(const hsdag_nn_params *p, int32_t id)
{
    HSDAG_ASSERT(id >= 0 && (size_t)id < p->n_t);
    return p->t[id].name;
}
int32_t hsdag_nn_params_rows(const hsdag_nn_params *p, int32_t id)
{
    HSDAG_ASSERT(id >= 0 && (size_t)id < p->n_t);
    return p->t[id].rows;
}
int32_t hsdag_nn_params_cols(const hsdag_nn_params *p, int32_t id)
{
    HSDAG_ASSERT(id >= 0 && (size_t)id < p->n_t);
    return p->t[id].cols;
}
size_t hsdag_nn_params_offset(const hsdag_nn_params *p, int32_t id)
{
    HSDAG_ASSERT(id >= 0 && (size_t)id < p->n_t);
    return p->t[id].offset;
}

float *hsdag_nn_params_value(hsdag_nn_params *p, int32_t id)
{
    HSDAG_ASSERT(p->block && id >= -1 && (id < 0 || (size_t)id < p->n_t));
    return id < 0 ? p->value : p->value + p->t[id].offset;
}

float *hsdag_nn_params_grad(hsdag_nn_params *p, int32_t id)
{
    HSDAG_ASSERT(p->block && id >= -1 && (id < 0 || (size_t)id < p->n_t));
    return id < 0 ? p->grad : p->grad + p->t[id].offset;
}

void hsdag_nn_params_zero_grad(hsdag_nn_params *p)
{
    HSDAG_ASSERT(p->block);
    memset(p->grad, 0, p->count * sizeof(float));
}

int hsdag_nn_params_copy_values(hsdag_nn_params *dst, const hsdag_nn_params *src, hsdag_err *e)
{
    if (!dst->block || !src->block)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: copy: set not allocated");
    if (dst->n_t != src->n_t || dst->count != src->count)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: copy: %zu tensors / %zu floats vs %zu / %zu",
                             src->n_t, src->count, dst->n_t, dst->count);
    for (size_t i = 0; i < src->n_t; i++) {
        const tensor *a = &src->t[i], *b = &dst->t[i];
        if (strcmp(a->name, b->name) != 0 || a->rows != b->rows || a->cols != b->cols)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "nn params: copy: tensor %zu: '%s' (%d, %d) vs '%s' (%d, %d)", i, a->name,
                                 a->rows, a->cols, b->name, b->rows, b->cols);
    }
    memcpy(dst->value, src->value, src->count * sizeof(float));
    return 0;
}

/* ---- Adam ---- */

hsdag_nn_adam_config hsdag_nn_adam_config_default(void)
{
    return (hsdag_nn_adam_config){
        .lr = 1e-3f,
        .beta1 = 0.9f,
        .beta2 = 0.999f,
        .eps = 1e-8f,
        .weight_decay = 0.0f,
        .decoupled = 0,
        .clip_norm = 0.0f,
    };
}

void hsdag_nn_adam_step(hsdag_nn_params *p, const hsdag_nn_adam_config *c, hsdag_nn_adam_stats *stats)
{
    HSDAG_ASSERT(p->block);
    size_t n = p->count;
    float *w = p->value, *g = p->grad, *m = p->m, *v = p->v;
    double ss = 0.0; /* sequential double sum: deterministic */
    for (size_t i = 0; i < n; i++) ss += (double)g[i] * (double)g[i];
    double norm = sqrt(ss), scale = 1.0;
    if (c->clip_norm > 0 && norm > c->clip_norm) scale = c->clip_norm / (norm + 1e-6);
    p->step++;
    float b1 = c->beta1, b2 = c->beta2, lr = c->lr, eps = c->eps, wd = c->weight_decay;
    float bc1 = (float)(1.0 - pow(b1, (double)p->step));
    float bc2 = (float)(1.0 - pow(b2, (double)p->step));
    float sc = (float)scale;
    int l2 = wd != 0.0f && !c->decoupled, dec = wd != 0.0f && c->decoupled;
    for (size_t i = 0; i < n; i++) {
        float gi = g[i] * sc;
        if (l2) gi += wd * w[i];
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        float mh = m[i] / bc1, vh = v[i] / bc2;
        if (dec) w[i] -= lr * wd * w[i];
        w[i] -= lr * mh / (sqrtf(vh) + eps);
    }
    if (stats) {
        stats->grad_norm = norm;
        stats->scale = scale;
    }
}

/* ---- layer helpers ---- */

static int add_named(hsdag_nn_params *p, int32_t *id, const char *name, const char *suffix, int32_t rows,
                     int32_t cols, hsdag_nn_init init, float scale, hsdag_err *e)
{
    char full[NAME_MAX_ + 2];
    int k = snprintf(full, sizeof full, "%s.%s", name, suffix);
    if (k < 0 || k > NAME_MAX_)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn params: tensor '%s.%s': name over %d bytes", name, suffix,
                             NAME_MAX_);
    int32_t r = hsdag_nn_params_add(p, full, rows, cols, init, scale, e);
    if (r < 0) return r;
    *id = r;
    return 0;
}

int hsdag_nn_linear_add(hsdag_nn_params *p, hsdag_nn_linear *l, const char *name, int32_t in, int32_t out,
                        int bias, hsdag_err *e)
{
    l->in = in;
    l->out = out;
    l->b = -1;
    int rc = add_named(p, &l->w, name, "w", out, in, HSDAG_NN_INIT_LINEAR, 0.0f, e);
    if (rc < 0 || !bias) return rc;
    return add_named(p, &l->b, name, "b", 1, out, HSDAG_NN_INIT_UNIFORM, (float)(1.0 / sqrt((double)in)), e);
}

int hsdag_nn_layernorm_add(hsdag_nn_params *p, hsdag_nn_layernorm *l, const char *name, int32_t d,
                           hsdag_err *e)
{
    l->d = d;
    int rc = add_named(p, &l->g, name, "g", 1, d, HSDAG_NN_INIT_ONE, 0.0f, e);
    if (rc < 0) return rc;
    return add_named(p, &l->b, name, "b", 1, d, HSDAG_NN_INIT_ZERO, 0.0f, e);
}

/* ---- checkpoint: the core wire codec (codec.h), independent of the host ----
 * Version 2: a frame "HSDAGNN\0" v2 whose payload is the body below. Version 1 (before the frame):
 * magic, u32 1, the same body, then u64 FNV-1a 64 (standard basis) of everything before it; still read.
 * Body: u32 n_tensors, u64 count, i64 adam step, per tensor (i32 rows, i32 cols, u32 name_len, name),
 * then value, adam m, adam v as float32 arrays (count each). */

static const char ckpt_magic_[8] = {'H', 'S', 'D', 'A', 'G', 'N', 'N', 0};

int hsdag_nn_params_save(const hsdag_nn_params *p, hsdag_buf *out, hsdag_err *e)
{
    if (!p->block) return hsdag_err_set(e, HSDAG_EINVAL, "nn params: save: set not allocated");
    size_t at = hsdag_frame_begin(out, ckpt_magic_, CKPT_VERSION_);
    hsdag_put_u32(out, (uint32_t)p->n_t);
    hsdag_put_u64(out, (uint64_t)p->count);
    hsdag_put_i64(out, p->step);
    for (size_t i = 0; i < p->n_t; i++) {
        const tensor *t = &p->t[i];
        hsdag_put_i32(out, t->rows);
        hsdag_put_i32(out, t->cols);
        hsdag_put_str(out, t->name);
    }
    hsdag_put_f32s(out, p->value, p->count);
    hsdag_put_f32s(out, p->m, p->count);
    hsdag_put_f32s(out, p->v, p->count);
    if (hsdag_frame_end(out, at) < 0) return hsdag_err_set(e, HSDAG_ENOMEM, "nn params: save: out of memory");
    return 0;
}

/* Checks the body's header and tensor table against p (nothing is written to p); r is left at the floats. */
static int ckpt_table(const hsdag_nn_params *p, hsdag_rd *r, int64_t *step, hsdag_err *e)
{
    uint32_t nt = hsdag_get_u32(r);
    uint64_t count = hsdag_get_u64(r);
    *step = hsdag_get_i64(r);
    if (r->bad) return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: truncated header");
    if (*step < 0) /* Adam's bias correction divides by 1 - beta^step: 0 after the next step's increment */
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: negative optimiser step %lld",
                             (long long)*step);
    if (nt != p->n_t)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: %u tensors, model has %zu", nt, p->n_t);
    if (count != p->count)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: %llu floats, model has %zu",
                             (unsigned long long)count, p->count);
    for (size_t i = 0; i < p->n_t; i++) {
        const tensor *t = &p->t[i];
        int32_t rows = hsdag_get_i32(r), cols = hsdag_get_i32(r);
        uint32_t nl = hsdag_get_u32(r);
        if (r->bad) return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: tensor %zu: truncated table", i);
        if (nl > NAME_MAX_ || hsdag_rd_left(r) < nl)
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: tensor %zu: bad name length %u", i, nl);
        const char *name = hsdag_get_view(r, nl);
        if (nl != strlen(t->name) || memcmp(name, t->name, nl) != 0)
            return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: tensor %zu: name '%.*s', model has '%s'", i,
                                 (int)nl, name, t->name);
        if (rows != t->rows || cols != t->cols)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "nn checkpoint: tensor '%s': shape (%u, %u), model has (%d, %d)", t->name,
                                 (unsigned)rows, (unsigned)cols, t->rows, t->cols);
    }
    if (hsdag_rd_left(r) < 3 * p->count * 4)
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: truncated data (%zu of %zu bytes)",
                             hsdag_rd_left(r), 3 * p->count * 4);
    return 0;
}

int hsdag_nn_params_load(hsdag_nn_params *p, const void *buf, size_t len, size_t *used, hsdag_err *e)
{
    if (!p->block) return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: parameter set not allocated");
    uint32_t ver = hsdag_frame_version(buf, len, ckpt_magic_);
    if (len < 8 || memcmp(buf, ckpt_magic_, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: bad magic (not a parameter image)");
    hsdag_rd r;
    size_t end = 0;
    int64_t step = 0;
    int rc;
    if (ver == 1) { /* the image before the frame: body after the version, checksum after the body */
        r = hsdag_rd_make(buf, len);
        r.pos = 12;
        if ((rc = ckpt_table(p, &r, &step, e)) < 0) return rc;
        size_t body_end = r.pos + 3 * p->count * 4;
        hsdag_rd cr = hsdag_rd_make(buf, len);
        cr.pos = body_end;
        uint64_t sum = hsdag_get_u64(&cr);
        if (cr.bad) return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: truncated checksum");
        if (sum != hsdag_fnv1a64(HSDAG_FNV64_BASIS, buf, body_end))
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: checksum mismatch (corrupt image)");
        end = cr.pos;
    } else {
        uint32_t v = 0;
        if ((rc = hsdag_frame_open(&r, &v, &end, buf, len, ckpt_magic_, "nn checkpoint", e)) < 0) return rc;
        if (v != CKPT_VERSION_)
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: version %u, expected 1 or %u", v,
                                 CKPT_VERSION_);
        if ((rc = ckpt_table(p, &r, &step, e)) < 0) return rc;
        if (hsdag_rd_left(&r) != 3 * p->count * 4)
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: %zu bytes after the data",
                                 hsdag_rd_left(&r) - 3 * p->count * 4);
    }
    /* Every number in range, checked before any is stored: weights within +-1e8 (Adam moves a weight by
     * about lr per step, so training never comes near), first moments within +-1e15, second moments in
     * [0, 1e30]. A corrupt file with a re-made checksum does (fuzz_learnckpt: one weight of -1.7e38 made
     * the next forward pass NaN). */
    hsdag_rd c = r;
    for (size_t i = 0; i < 3 * p->count; i++) {
        float x = hsdag_get_f32(&c);
        if (!(i < p->count ? fabsf(x) <= 1e8f : i < 2 * p->count ? fabsf(x) <= 1e15f : x >= 0 && x <= 1e30f))
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: %s %zu is %g",
                                 i < p->count       ? "weight"
                                 : i < 2 * p->count ? "first moment"
                                                    : "second moment",
                                 i % p->count, (double)x);
    }
    hsdag_get_f32s(&r, p->value, p->count);
    hsdag_get_f32s(&r, p->m, p->count);
    hsdag_get_f32s(&r, p->v, p->count);
    p->step = step;
    if (used) *used = end;
    return 0;
}
