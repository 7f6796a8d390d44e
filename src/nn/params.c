/* params.c - the parameter set (one contiguous block for values, grads, Adam m and v), Adam,
 * checkpoint save/load and the Linear/LayerNorm registration helpers.
 * Not here: the kernels (layers.c, gnn.c); no per-tensor optimiser options.
 * Entry points: hsdag_nn_params_*, hsdag_nn_adam_*, hsdag_nn_linear_add, hsdag_nn_layernorm_add,
 *   hsdag_nn_lstm_add.
 */
#include "hsdag/nn.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#define NAME_MAX_ 63
#define MAX_FLOATS_ ((size_t)1 << 31)
#define CKPT_VERSION_ 1u

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

int hsdag_nn_params_create(hsdag_nn_params **out)
{
    *out = hsdag_calloc(1, sizeof(hsdag_nn_params));
    return *out ? 0 : HSDAG_ENOMEM;
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

int hsdag_nn_lstm_add(hsdag_nn_params *p, hsdag_nn_lstm *l, const char *name, int32_t in, int32_t hid,
                      hsdag_err *e)
{
    l->in = in;
    l->hid = hid;
    float k = (float)(1.0 / sqrt((double)(hid > 0 ? hid : 1)));
    int rc = add_named(p, &l->wx, name, "wx", 4 * hid, in, HSDAG_NN_INIT_UNIFORM, k, e);
    if (rc == 0) rc = add_named(p, &l->wh, name, "wh", 4 * hid, hid, HSDAG_NN_INIT_UNIFORM, k, e);
    if (rc == 0) rc = add_named(p, &l->b, name, "b", 1, 4 * hid, HSDAG_NN_INIT_UNIFORM, k, e);
    return rc;
}

/* ---- checkpoint: explicit little-endian bytes, independent of the host ---- */

static const char ckpt_magic_[8] = {'H', 'S', 'D', 'A', 'G', 'N', 'N', 0};

static void put_u32(hsdag_buf *b, uint32_t x)
{
    unsigned char c[4] = {(unsigned char)x, (unsigned char)(x >> 8), (unsigned char)(x >> 16),
                          (unsigned char)(x >> 24)};
    hsdag_buf_append(b, (const char *)c, 4);
}

static void put_u64(hsdag_buf *b, uint64_t x)
{
    put_u32(b, (uint32_t)x);
    put_u32(b, (uint32_t)(x >> 32));
}

/* little-endian bytes, converted through a stack chunk so the buffer grows once per 4 KiB, not per float */
static void put_floats(hsdag_buf *b, const float *f, size_t n)
{
    unsigned char c[4096];
    while (n > 0) {
        size_t k = n < sizeof c / 4 ? n : sizeof c / 4;
        for (size_t i = 0; i < k; i++) {
            uint32_t u;
            memcpy(&u, &f[i], 4);
            c[4 * i] = (unsigned char)u;
            c[4 * i + 1] = (unsigned char)(u >> 8);
            c[4 * i + 2] = (unsigned char)(u >> 16);
            c[4 * i + 3] = (unsigned char)(u >> 24);
        }
        hsdag_buf_append(b, (const char *)c, 4 * k);
        f += k;
        n -= k;
    }
}

static uint64_t fnv1a(const unsigned char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

int hsdag_nn_params_save(const hsdag_nn_params *p, hsdag_buf *out, hsdag_err *e)
{
    if (!p->block) return hsdag_err_set(e, HSDAG_EINVAL, "nn params: save: set not allocated");
    size_t start = out->len;
    hsdag_buf_append(out, ckpt_magic_, 8);
    put_u32(out, CKPT_VERSION_);
    put_u32(out, (uint32_t)p->n_t);
    put_u64(out, (uint64_t)p->count);
    put_u64(out, (uint64_t)p->step);
    for (size_t i = 0; i < p->n_t; i++) {
        const tensor *t = &p->t[i];
        put_u32(out, (uint32_t)t->rows);
        put_u32(out, (uint32_t)t->cols);
        uint32_t nl = (uint32_t)strlen(t->name);
        put_u32(out, nl);
        hsdag_buf_append(out, t->name, nl);
    }
    put_floats(out, p->value, p->count);
    put_floats(out, p->m, p->count);
    put_floats(out, p->v, p->count);
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "nn params: save: out of memory");
    put_u64(out, fnv1a((const unsigned char *)out->data + start, out->len - start));
    if (out->oom) return hsdag_err_set(e, HSDAG_ENOMEM, "nn params: save: out of memory");
    return 0;
}

typedef struct reader {
    const unsigned char *s;
    size_t len, pos;
} reader;

static int get_u32(reader *r, uint32_t *x)
{
    if (r->len - r->pos < 4) return -1;
    const unsigned char *c = r->s + r->pos;
    *x = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
    r->pos += 4;
    return 0;
}

static int get_u64(reader *r, uint64_t *x)
{
    uint32_t lo, hi;
    if (get_u32(r, &lo) < 0 || get_u32(r, &hi) < 0) return -1;
    *x = (uint64_t)hi << 32 | lo;
    return 0;
}

static void get_floats(reader *r, float *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u = 0;
        get_u32(r, &u); /* length checked by the caller */
        memcpy(&f[i], &u, 4);
    }
}

int hsdag_nn_params_load(hsdag_nn_params *p, const void *buf, size_t len, size_t *used, hsdag_err *e)
{
    if (!p->block) return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: parameter set not allocated");
    reader r = {buf, len, 0};
    uint32_t ver, nt, rows, cols, nl;
    uint64_t count, step;
    if (len < 8 || memcmp(buf, ckpt_magic_, 8) != 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: bad magic (not a parameter image)");
    r.pos = 8;
    if (get_u32(&r, &ver) < 0 || get_u32(&r, &nt) < 0 || get_u64(&r, &count) < 0 || get_u64(&r, &step) < 0)
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: truncated header");
    if (ver != CKPT_VERSION_)
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: version %u, expected %u", ver, CKPT_VERSION_);
    if (nt != p->n_t)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: %u tensors, model has %zu", nt, p->n_t);
    if (count != p->count)
        return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: %llu floats, model has %zu",
                             (unsigned long long)count, p->count);
    for (size_t i = 0; i < p->n_t; i++) {
        const tensor *t = &p->t[i];
        if (get_u32(&r, &rows) < 0 || get_u32(&r, &cols) < 0 || get_u32(&r, &nl) < 0)
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: tensor %zu: truncated table", i);
        if (nl > NAME_MAX_ || r.len - r.pos < nl)
            return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: tensor %zu: bad name length %u", i, nl);
        if (nl != strlen(t->name) || memcmp(r.s + r.pos, t->name, nl) != 0)
            return hsdag_err_set(e, HSDAG_EINVAL, "nn checkpoint: tensor %zu: name '%.*s', model has '%s'", i,
                                 (int)nl, (const char *)r.s + r.pos, t->name);
        r.pos += nl;
        if ((int32_t)rows != t->rows || (int32_t)cols != t->cols)
            return hsdag_err_set(e, HSDAG_EINVAL,
                                 "nn checkpoint: tensor '%s': shape (%u, %u), model has (%d, %d)", t->name,
                                 rows, cols, t->rows, t->cols);
    }
    size_t need = 3 * p->count * 4 + 8;
    if (r.len - r.pos < need)
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: truncated data (%zu of %zu bytes)",
                             r.len - r.pos, need);
    size_t data_at = r.pos;
    reader rc = {buf, len, data_at + 3 * p->count * 4};
    uint64_t sum;
    get_u64(&rc, &sum);
    if (sum != fnv1a(r.s, rc.pos - 8))
        return hsdag_err_set(e, HSDAG_EPARSE, "nn checkpoint: checksum mismatch (corrupt image)");
    get_floats(&r, p->value, p->count);
    get_floats(&r, p->m, p->count);
    get_floats(&r, p->v, p->count);
    p->step = (int64_t)step;
    if (used) *used = rc.pos;
    return 0;
}
