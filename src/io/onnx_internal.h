/* onnx_internal.h - state shared by the ONNX reader (onnx.c) and its shape inference (onnx_infer.c).
 * Not here: anything public (io.h holds hsdag_onnx_read); nothing outside src/io/onnx*.c includes this.
 * Entry points: onnx_tensor_find, onnx_tensor_shape, onnx_tensor_values, onnx_attr*, onnx_infer_run. */
#ifndef HSDAG_ONNX_INTERNAL_H
#define HSDAG_ONNX_INTERNAL_H

#include "hsdag/graph.h"
#include "onnx.pb-c.h"

#define ONNX_MAX_VALUES 64  /* int64 values tracked per tensor (shape arithmetic) */
#define ONNX_VUNK INT64_MIN /* an element of a tracked value that is not known */

enum {
    ONNX_T_INIT = 1u << 0,   /* initializer */
    ONNX_T_INPUT = 1u << 1,  /* listed in graph.input */
    ONNX_T_SHAPED = 1u << 2, /* dtype/shape set (rank may still be -1) */
    ONNX_T_DATA = 1u << 3,   /* graph input that is a data input */
    ONNX_T_WEIGHT = 1u << 4,
    ONNX_T_CONST = 1u << 5 /* a constant: initializer that is not a graph input, or output of a folded node */
};

/* One named tensor. Invariant: rank >= 0 implies dims at onnx_reader.dims[dim_off .. dim_off+rank-1];
 * nval >= 0 implies its int64 values (row-major, ONNX_VUNK where unknown) at vals[val_off ..]. */
typedef struct onnx_tensor {
    int32_t producer; /* node index, -1 for graph inputs and initializers */
    int32_t dim_off;
    int32_t val_off;
    int32_t stamp; /* dedupe per node: v = edge to consumer v added, -2 - v = weight counted for v */
    int16_t nval;  /* -1 = value not tracked */
    int8_t rank;   /* -1 = unknown */
    uint8_t dtype; /* hsdag_dtype */
    uint8_t flags; /* ONNX_T_* */
    double bytes;  /* -1 = unknown */
} onnx_tensor;

typedef struct onnx_reader {
    const char *what;
    hsdag_err *e;
    int64_t opset;     /* default-domain opset, 0 if none */
    hsdag_strmap *map; /* name -> tensor index */
    onnx_tensor *t;
    size_t nt, cap_t;
    int64_t *dims;
    size_t nd, cap_d;
    int64_t *vals;
    size_t nv, cap_v;
    hsdag_shape_ref *refs; /* scratch for opcost */
    size_t cap_refs;
    int32_t *pair_stamp; /* per node: last consumer that counted an edge pair from it */
    /* tensor ids of every node's inputs and outputs, resolved once (-1 = empty or unknown name):
     * node v's inputs are io_ids[io_off[v] .. +n_input-1], its outputs follow them */
    int32_t *io_ids;
    size_t *io_off;
    const int32_t *cur; /* io_ids of the node being inferred */
    int64_t pairs;
} onnx_reader;

int32_t onnx_tensor_find(const onnx_reader *r, const char *name);
/* Tensor id of input k (out = 0) or output k (out = 1) of node v. */
static inline int32_t onnx_io(const onnx_reader *r, size_t v, const Onnx__NodeProto *nd, size_t k, int out)
{
    if (out) return k < nd->n_output ? r->io_ids[r->io_off[v] + nd->n_input + k] : -1;
    return k < nd->n_input ? r->io_ids[r->io_off[v] + k] : -1;
}
/* Sets dtype and shape of tensor id (dims may hold -1); checks HSDAG_MAX_RANK and HSDAG_MAX_ELEMS. */
int onnx_tensor_shape(onnx_reader *r, int32_t id, const char *name, hsdag_dtype dt, int64_t rank,
                      const int64_t *dims);
/* Records n int64 values of tensor id (n <= ONNX_MAX_VALUES). */
int onnx_tensor_values(onnx_reader *r, int32_t id, const int64_t *v, int n);
/* Reads the values of an int64/int32 tensor of at most max elements; returns the count or -1. */
int onnx_tensorproto_ints(const Onnx__TensorProto *tp, int64_t *v, int max);
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *nd, const char *name);
int64_t onnx_attr_int(const Onnx__NodeProto *nd, const char *name, int64_t dflt);
hsdag_dtype onnx_dtype(int32_t onnx_elem_type);

/* Fills in output shapes (and small int64 values) that the file leaves unknown, in node order. */
int onnx_infer_run(onnx_reader *r, const Onnx__GraphProto *g);

#endif
