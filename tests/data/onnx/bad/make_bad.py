#!/usr/bin/python3
# make_bad.py - writes the hand-made bad ONNX files of this folder (python3-onnx helpers, no checker).
# Not here: the tests (tests/cli/onnx.sh runs `hsdag info` on each file and expects exit 2).
# Usage: cd tests/data/onnx/bad && /usr/bin/python3 make_bad.py
from onnx import helper as h, TensorProto as T

def save(name, nodes, inputs, outputs=(), inits=()):
    g = h.make_graph(nodes, name, list(inputs), list(outputs), initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    open(name + '.onnx', 'wb').write(m.SerializeToString())

x = h.make_tensor_value_info('x', T.FLOAT, [1, 4])
save('shape_1e12', [h.make_node('Relu', ['big'], ['y'])], [h.make_tensor_value_info('big', T.FLOAT, [1000000, 1000000])])
save('rank17', [h.make_node('Relu', ['r'], ['y'])], [h.make_tensor_value_info('r', T.FLOAT, [1] * 17)])
save('cycle', [h.make_node('Relu', ['b'], ['a'], name='first'), h.make_node('Relu', ['a'], ['b'], name='second')], [x])
save('dangling', [h.make_node('Relu', ['nowhere'], ['y'], name='orphan')], [x])
save('dup_output', [h.make_node('Relu', ['x'], ['y'], name='one'), h.make_node('Relu', ['x'], ['y'], name='two')], [x])
save('no_graph_nodes', [], [x])
# If bodies nested 40 deep (120 protobuf message levels; one branch each, or the file doubles per level)
body = h.make_graph([h.make_node('Relu', ['x'], ['y'])], 'leaf', [], [h.make_tensor_value_info('y', T.FLOAT, None)])
for d in range(40):
    body = h.make_graph([h.make_node('If', ['c'], ['o%d' % d], then_branch=body)], 'b%d' % d, [],
                        [h.make_tensor_value_info('o%d' % d, T.FLOAT, None)])
m = h.make_model(body, opset_imports=[h.make_opsetid('', 17)])
open('deep_nesting.onnx', 'wb').write(m.SerializeToString())
# valid for hsdag (an unknown op is a byte-only node) but ONNX Runtime has no kernel for it: `hsdag profile`
# must fail with one line and exit 2 (tests/cli/profile.sh)
save('ort_unknown_op', [h.make_node('NoSuchOp', ['x'], ['y'], name='mystery')], [x],
     [h.make_tensor_value_info('y', T.FLOAT, [1, 4])])
