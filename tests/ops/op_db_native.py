"""OpInfo entries for the ops the native kernel runtime added (issue 18): softmax's and log_softmax's
backward ops, which torch exposes as `torch._softmax_backward_data` / `torch._log_softmax_backward_data`
(NOTE [ Softmax backward is an op ] in ember/_ops/nn_ops.py), and silu's, `torch.ops.aten.silu_backward` (NOTE
[ silu's backward kernel ]; torch gives that op no derivative, and ember refuses it alike). The
ported ops' own entries are in op_db.py; tests/test_native.py runs them through the C kernels."""

from op_db import FLOAT, HALF, Sample, add, arr, same


def _backward_samples(dtype, rng):
    return [Sample(arr(rng, (3, 4), dtype), arr(rng, (3, 4), dtype, 0.05, 0.9), 1),
            Sample(arr(rng, (3, 4), dtype), arr(rng, (3, 4), dtype, 0.05, 0.9), 0),
            Sample(arr(rng, (2, 3, 5), dtype), arr(rng, (2, 3, 5), dtype, 0.05, 0.9), -1),
            Sample(arr(rng, ("T", 3, 4), dtype), arr(rng, (3, 4), dtype, 0.05, 0.9), -1),
            Sample(arr(rng, (0, 3), dtype), arr(rng, (0, 3), dtype), 1)]


def _log_backward_samples(dtype, rng):  # (a log_softmax output is negative)
    return [Sample(g, -1 - y, dim) if g.size else Sample(g, y, dim)
            for g, y, dim in (s.inputs for s in _backward_samples(dtype, rng))]


for _name, _gen in (("_softmax_backward_data", _backward_samples),
                    ("_log_softmax_backward_data", _log_backward_samples)):
    add(_name, fn=lambda lib, g, y, dim, _n=_name: getattr(lib, _n)(g, y, dim, g.dtype), samples=_gen,
        dtypes=FLOAT + HALF)


def _grad_and_input(shape):
    return lambda dtype, rng: Sample(arr(rng, shape, dtype), arr(rng, shape, dtype, -6, 6))


add("silu_backward", fn=lambda lib, g, x: lib.ops.aten.silu_backward(g, x), dtypes=FLOAT + HALF + ("complex64",),
    grad=False, samples=same(*(_grad_and_input(s) for s in ((3, 4), ("T", 4, 3), (2, 3, 5), (), (0, 3)))))
