"""A user's script: quick start, multi-output op, attrs, gradients, a training step."""
import numpy as np

from tfops_py import DT_FLOAT, AddSymbolicGradients, ClientSession, Scope, errors, ops

root = Scope.NewRootScope()
x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, ops.Placeholder.Shape([2, 2]))
w = ops.Variable(root.WithOpName("w"), [2, 2], DT_FLOAT)
init = ops.Assign(root, w, np.ones((2, 2), np.float32))
y = ops.MatMul(root.WithOpName("y"), x, w, ops.MatMul.TransposeB(True).TransposeA(False))
z = ops.Add(root, y, 1.0)
m = ops.Any(root, ops.Greater(root, z, 3.0), [0, 1], keep_dims=False)
loss = ops.Sum(root, ops.Square(root, z), [0, 1])
(dw,) = AddSymbolicGradients(root, [loss], [w])
step = ops.ApplyGradientDescent(root, w, 0.1, dw)
bn = ops.FusedBatchNormV3(root, ops.Const(root, np.ones((1, 2, 2, 3), np.float32)), [1.0, 1.0, 1.0],
                          [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0],
                          ops.FusedBatchNormV3.Epsilon(1e-3).IsTraining(False))
parts = ops.Split(root, 0, x, 2)
first = parts[0]
name: str = y.operation.name()
grad = ops.internal.AvgPoolGrad(root, [1, 4, 4, 1], np.ones((1, 2, 2, 1), np.float32), [1, 2, 2, 1], [1, 2, 2, 1],
                                "VALID")
session = ClientSession(root)
session.Run({}, [], [init])
out, bn_y = session.Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [z, bn.y])
session.Run({x: np.eye(2, dtype=np.float32)}, [], [step])
try:
    session.Run([ops.Placeholder(root, DT_FLOAT)])
except errors.InvalidArgumentError as e:
    print(e.node_name, out.shape, m.operation.name(), bn_y.shape, first, name, grad.output)
