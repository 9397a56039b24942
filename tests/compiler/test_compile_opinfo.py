"""Every op of the OpInfo table (tests/ops/op_db*.py) through `ember.compile`: the compiled call gives
torch's eager results and gradients (the first sample of each op, float64 where it is accepted).

Capture either puts the op in a graph or, where the op needs data (`nonzero`, boolean masks), breaks the
graph and runs it eagerly; either way the result must be torch's. EMBER_SLOW_TESTS=1 runs every sample.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops"))

from compare import check  # noqa: E402
from op_db import OPS  # noqa: E402

import ember  # noqa: E402

ALL_SAMPLES = bool(os.environ.get("EMBER_SLOW_TESTS"))


def _compiled(op, sample):
    def fn(lib, *inputs):
        body = lambda *xs: op.fn(lib, *xs, **sample.kwargs)  # noqa: E731
        if lib is ember:
            body = ember.compile(body, backend="eager")
        return body(*inputs)

    return fn


@pytest.mark.parametrize("op", OPS, ids=[op.id for op in OPS])
def test_compiled_op_matches_torch(op):
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    samples = op.samples(dtype, np.random.default_rng(0))
    for s in samples if ALL_SAMPLES else samples[:1]:
        grad = None
        if op.grad and dtype == "float64":
            grad = [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
            if op.grad_inputs is not None:
                grad = [i for i in grad if i in op.grad_inputs]
        check(_compiled(op, s), *s.inputs, grad=grad, rtol=op.rtol, atol=op.atol, check_stride=op.strides)
