#!/usr/bin/python3
# expect.py - independent reference numbers for tests/test_onnx.c, computed with the Debian python3-onnx package.
# Not here: anything the tests run (tests need no python); rerun by hand when the rules in src/io/onnx.c change.
# Usage: /usr/bin/python3 tests/data/onnx/expect.py [--infer] tests/data/onnx/*.onnx tests/data/onnx-light/*.onnx
#   without --infer: shapes as the files give them; with --infer: missing shapes from onnx.shape_inference
#   (CNNs) or from running the graph in numpy (the transformer exports, where onnx's own inference stops at the
#   first Reshape fed by computed shapes).
import sys, math
import onnx
import onnx.numpy_helper
import onnx.shape_inference

BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}
INTS = {2, 3, 4, 5, 6, 7, 9, 12, 13}
CONV = {'Conv'}; MATMUL = {'MatMul', 'Gemm'}
POOL = {'MaxPool', 'AveragePool', 'GlobalAveragePool'}
NORM = {'BatchNormalization', 'LRN', 'Softmax'}
REDUCE = {'ReduceMean'}
ELEM = {'Relu', 'Add', 'Sub', 'Mul', 'Div', 'Clip', 'Sum', 'Equal', 'Where'}
ELEM4 = {'Pow', 'Sqrt', 'Erf', 'Tanh'}
ZERO = {'Identity', 'Constant', 'Shape', 'Dropout', 'Flatten', 'Reshape', 'Transpose', 'Concat', 'Gather',
        'Slice', 'Unsqueeze', 'ConstantOfShape', 'Expand', 'Pad'}

def shape_of(tp):
    t = tp.tensor_type
    if not t.HasField('shape'):
        return t.elem_type, None
    return t.elem_type, [d.dim_value if d.HasField('dim_value') else -1 for d in t.shape.dim]

def run_numpy(m):
    """Executes the graph with numpy on zero-filled inputs (data and weights) and returns {name: (elem_type, dims)}.
    Only the ops of the bundled transformer exports; float results are meaningless, shapes and int values exact."""
    import numpy as np
    from onnx import numpy_helper, helper, mapping
    g = m.graph
    env = {}
    for i in g.input:
        t = i.type.tensor_type
        env[i.name] = np.zeros([d.dim_value for d in t.shape.dim], dtype=mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type])
    for i in g.initializer: env[i.name] = numpy_helper.to_array(i)
    for n in g.node:
        at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        x = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == 'Constant': y = numpy_helper.to_array(at['value'])
        elif op == 'Identity': y = x[0]
        elif op == 'Conv':
            N, C, H, W = x[0].shape; M, _, kh, kw = x[1].shape; sh, sw = at['strides']
            p = at.get('pads', [0, 0, 0, 0])
            y = np.zeros((N, M, (H + p[0] + p[2] - kh) // sh + 1, (W + p[1] + p[3] - kw) // sw + 1), np.float32)
        elif op == 'Reshape':
            shp = [int(v) for v in x[1]]
            shp = [x[0].shape[i] if v == 0 else v for i, v in enumerate(shp)]
            y = x[0].reshape(shp)
        elif op == 'Transpose': y = np.transpose(x[0], at.get('perm'))
        elif op == 'Concat': y = np.concatenate(x, axis=at['axis'])
        elif op == 'Unsqueeze': y = np.expand_dims(x[0], tuple(int(a) for a in x[1]))
        elif op == 'Shape': y = np.array(x[0].shape, np.int64)
        elif op == 'ConstantOfShape':
            v = numpy_helper.to_array(at['value']) if 'value' in at else np.zeros(1, np.float32)
            y = np.full([int(d) for d in x[0]], v.reshape(-1)[0], v.dtype)
        elif op in ('Add', 'Sub', 'Mul', 'Pow', 'Equal'):
            f = {'Add': np.add, 'Sub': np.subtract, 'Mul': np.multiply, 'Pow': np.power, 'Equal': np.equal}[op]
            y = f(x[0], x[1])
        elif op == 'Div': y = x[0] // x[1] if x[0].dtype.kind == 'i' else np.zeros(np.broadcast_shapes(x[0].shape, x[1].shape), x[0].dtype)
        elif op == 'Where': y = np.where(x[0], x[1], x[2])
        elif op == 'Expand': y = x[0] * np.ones([int(d) for d in x[1]], x[0].dtype)
        elif op == 'ReduceMean': y = np.mean(x[0], axis=tuple(at['axes']), keepdims=bool(at.get('keepdims', 1)))
        elif op in ('Sqrt', 'Erf', 'Tanh', 'Softmax'): y = np.zeros_like(x[0])
        elif op == 'MatMul': y = np.matmul(x[0], x[1])
        elif op == 'Gemm':
            a = x[0].T if at.get('transA', 0) else x[0]; b = x[1].T if at.get('transB', 0) else x[1]
            y = a @ b + (x[2] if len(x) > 2 else 0)
        elif op == 'Gather': y = np.take(x[0], x[1], axis=at.get('axis', 0))
        elif op == 'Slice':
            axes = [int(a) for a in x[3]] if len(x) > 3 else list(range(len(x[1])))
            sl = [slice(None)] * x[0].ndim
            for st, en, ax in zip(x[1], x[2], axes): sl[ax] = slice(int(st), int(en))
            y = x[0][tuple(sl)]
        else: raise SystemExit('run_numpy: op %s not covered' % op)
        env[n.output[0]] = np.asarray(y)
    inv = {}
    for k, v in sorted(mapping.TENSOR_TYPE_TO_NP_TYPE.items()): inv.setdefault(v, k)  # float32 -> FLOAT, not BFLOAT16
    return {k: (inv.get(v.dtype, 1), list(v.shape)) for k, v in env.items()}

def run(path):
    m = onnx.load(path); g = m.graph
    if '--infer' in sys.argv:
        if any(n.op_type == 'MatMul' for n in g.node):
            exact = run_numpy(m)
        else:
            m = onnx.shape_inference.infer_shapes(m); g = m.graph; exact = {}
    else:
        exact = {}
    shapes = dict(exact)
    for i in g.initializer: shapes.setdefault(i.name, (i.data_type, list(i.dims)))
    for i in g.input: shapes.setdefault(i.name, shape_of(i.type))
    for vi in list(g.value_info) + list(g.output): shapes.setdefault(vi.name, shape_of(vi.type))
    consts = {i.name: i for i in g.initializer}
    for n in g.node:
        if n.op_type == 'Constant':
            a = n.attribute[0]
            assert a.name == 'value', a.name
            shapes[n.output[0]] = (a.t.data_type, list(a.t.dims)); consts[n.output[0]] = a.t
    for n in g.node:
        if n.op_type == 'ConstantOfShape' and n.input[0] in consts:
            vals = list(onnx.numpy_helper.to_array(consts[n.input[0]]))
            dt = 1
            for a in n.attribute:
                if a.name == 'value': dt = a.t.data_type
            shapes[n.output[0]] = (dt, [int(v) for v in vals])
    def elems(name):
        s = shapes.get(name)
        if not s or s[1] is None or any(d < 0 for d in s[1]): return None
        return math.prod(s[1])
    def nbytes(name):
        e = elems(name)
        return None if e is None else e * BYTES.get(shapes[name][0], 4)
    inits = {i.name for i in g.initializer}
    data = set()
    ginputs = [i.name for i in g.input if i.name not in inits]
    for nm in ginputs:
        dt, sh = shapes[nm]
        if dt in INTS or sh is None or any(d < 0 for d in sh): data.add(nm)
    for n in g.node:
        for k, nm in enumerate(n.input):
            if nm in ginputs and ((k == 0 and n.op_type in CONV | MATMUL | POOL | NORM | REDUCE) or
                                  (k == 1 and n.op_type.startswith('Gather'))):
                data.add(nm)
    if ginputs and not data: data.add(ginputs[0])
    weights = inits | (set(ginputs) - data)
    producer = {}
    for v, n in enumerate(g.node):
        for o in n.output:
            if o: producer[o] = v
    pairs = {}
    for v, n in enumerate(g.node):
        for nm in set(n.input):
            if nm in producer:
                pairs.setdefault((producer[nm], v), 0)
                pairs[(producer[nm], v)] += nbytes(nm) or 0
    param = 0; flops = 0; unknown = 0; mm = 0
    for n in g.node:
        for nm in set(n.input):
            if nm in weights: param += nbytes(nm) or 0
        op = n.op_type
        at = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        out = elems(n.output[0]) if n.output else None
        f = 0
        if op == 'Conv':
            w = shapes.get(n.input[1])
            if out is not None and w and w[1] is not None: f = 2 * out * math.prod(w[1][1:])
        elif op == 'MatMul':
            a = (shapes.get(n.input[0]) or (0, None))[1]
            if out is not None and a and a[-1] >= 0: f = 2 * out * a[-1]
        elif op == 'Gemm':
            a = (shapes.get(n.input[0]) or (0, None))[1]; b = (shapes.get(n.input[1]) or (0, None))[1]
            y = (shapes.get(n.output[0]) or (0, None))[1]
            ta, tb = at.get('transA', 0), at.get('transB', 0)
            M = K = N = -1
            if a and len(a) == 2: M, K = (a[1], a[0]) if ta else (a[0], a[1])
            if b and len(b) == 2:
                if K < 0: K = b[1] if tb else b[0]
                N = b[0] if tb else b[1]
            if y and len(y) == 2:
                if M < 0: M = y[0]
                if N < 0: N = y[1]
            if min(M, N, K) >= 0: f = 2 * M * N * K
        elif op in POOL:
            i0 = elems(n.input[0])
            if out is not None and 'kernel_shape' in at: f = out * math.prod(at['kernel_shape'])
            elif out is not None and i0 is not None: f = out * max(1, i0 / out)
        elif op in NORM: f = 5 * (out if out is not None else (elems(n.input[0]) or 0))
        elif op in REDUCE: f = elems(n.input[0]) or 0
        elif op in ELEM:
            f = out if out is not None else max([elems(x) or 0 for x in n.input] + [0])
        elif op in ELEM4:
            f = 4 * (out if out is not None else max([elems(x) or 0 for x in n.input] + [0]))
        elif op in ZERO: f = 0
        else: unknown += 1
        flops += f
        if op in CONV | MATMUL: mm += f
    uniq = sum(nbytes(w) or 0 for w in weights)
    # bookkeeping: the zero-cost op types, plus every node a runtime constant-folds at load (all inputs constant:
    # initializers not fed as inputs (any initializer before IR version 4), weights of weight-free exports,
    # Constant outputs, outputs of folded nodes; or Shape/Size of a static shape)
    fed = {i.name for i in g.input} if m.ir_version >= 4 else set()
    const = {i.name for i in g.initializer if i.name not in fed} | set(weights)  # weights: deployed as initializers
    never = {'If', 'Loop', 'Scan', 'RandomNormal', 'RandomNormalLike', 'RandomUniform', 'RandomUniformLike',
             'Multinomial', 'Bernoulli', 'SequenceConstruct'}
    book = 0
    for n in g.node:
        ins = [x for x in n.input if x]
        if n.op_type in ('Shape', 'Size'):
            folded = all(elems(x) is not None for x in ins)
        else:
            folded = n.op_type == 'Constant' or (len(ins) > 0 and all(x in const for x in ins))
        folded = folded and n.domain in ('', 'ai.onnx') and n.op_type not in never and len(n.output) > 0
        if folded: const.update(n.output)
        book += folded or n.op_type in ('Identity', 'Constant', 'Dropout', 'Shape')
    print('%-24s nodes %5d pairs %5d param %10d flops %12d unknown %d book %4d edge_bytes %11d convmm %12d'
          ' unique_weight_bytes %d' % (path.split('/')[-1], len(g.node), len(pairs), param, flops, unknown, book,
                                       sum(pairs.values()), mm, uniq))

for p in sys.argv[1:]:
    if not p.startswith('--'): run(p)
