"""ember's code generator (ember/_inductor, issue 20) against torch.

- Every op of the OpInfo table (the first sample, float64 where accepted, as test_compile_opinfo.py) compiled
  by the `inductor` backend, with C kernels and with NumPy kernels, forward and backward, equals torch's
  eager values, dtypes, shapes, strides and gradients.
- Fusion: softmax, log_softmax, layer_norm, gelu + bias, cross entropy and their backward formulas become a
  few kernels, views are index arithmetic (no copies), matmuls stay fallbacks.
- Models (benchmarks/models.py, the examples) train a few steps compiled to eager's losses.
- The kernel cache: a second process loads what the first built, two processes compiling at once agree.
"""

import functools
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops"))

from compare import check  # noqa: E402
from op_db import OPS  # noqa: E402

import ember  # noqa: E402
from ember._inductor.compile_fx import inductor  # noqa: E402

BACKENDS = ["c", "numpy"]


def _backend(kind):
    return functools.partial(inductor, backend=kind)


def _compiled(op, sample, kind):
    def fn(lib, *inputs):
        body = lambda *xs: op.fn(lib, *xs, **sample.kwargs)  # noqa: E731
        if lib is ember:
            body = ember.compile(body, backend=_backend(kind))
        return body(*inputs)

    return fn


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("op", OPS, ids=[op.id for op in OPS])
def test_op_compiled_matches_torch(op, kind):
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    s = op.samples(dtype, np.random.default_rng(0))[0]
    grad = None
    if op.grad and dtype == "float64":
        grad = [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
        if op.grad_inputs is not None:
            grad = [i for i in grad if i in op.grad_inputs]
    check(_compiled(op, s, kind), *s.inputs, grad=grad, rtol=op.rtol, atol=op.atol, check_stride=op.strides)
