"""Every op of the OpInfo table (tests/ops/op_db*.py) through AOT autograd (`aot_function` with the min-cut
partitioner and identity compilers: what backend="aot_eager" runs): the compiled forward and the gradients
its backward graph gives equal torch's eager ones (the first sample of each op, float64 where accepted, so
the gradients are checked; values, shapes, dtypes and the outputs' strides).

The function is traced on fake tensors into one joint forward-and-backward graph, functionalized and split;
every in-place write (to an input, through a view, by a foreach kernel) must come back, and the backward
graph must accept the gradients autograd hands it at run time. An op whose output shape, or a Python value
its function reads, depends on the data cannot be traced without data: there ember refuses, and torch's own
`make_fx(tracing_mode="fake")` must refuse too or need the data as well (an unbacked symbol: `.item()` or a
data-sized output, which torch.compile's capture turns into a graph break by default).
EMBER_SLOW_TESTS=1 runs every sample; `tools/aot_opinfo.py` prints the same check as a report.
"""

import os
import sys

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import DataDependentOutputException as TorchDataDependent
from torch._subclasses.fake_tensor import DynamicOutputShapeException as TorchDynamicShape
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops"))

from compare import check, to_torch  # noqa: E402
from op_db import OPS  # noqa: E402

import ember  # noqa: E402
from ember._functorch.aot_autograd import aot_function, nop  # noqa: E402
from ember._functorch.partitioners import min_cut_rematerialization_partition  # noqa: E402
from ember._subclasses.fake_tensor import (  # noqa: E402
    DataDependentOutputException,
    DynamicOutputShapeException,
)

ALL_SAMPLES = bool(os.environ.get("EMBER_SLOW_TESTS"))
_NEEDS_DATA = (DynamicOutputShapeException, DataDependentOutputException)


def _body(op, sample):
    return lambda lib, *xs: op.fn(lib, *xs, **sample.kwargs)


def _aot(op, sample):
    """`fn(lib, *inputs)`: torch runs the op eagerly, ember through AOT autograd over the tensor inputs."""
    body = _body(op, sample)

    def fn(lib, *inputs):
        if lib is not ember:
            return body(lib, *inputs)
        where = [i for i, x in enumerate(inputs) if isinstance(x, ember.Tensor)]

        def traced(*tensors):
            args = list(inputs)
            for i, t in zip(where, tensors):
                args[i] = t
            return body(ember, *args)
        compiled = aot_function(traced, nop, nop, partition_fn=min_cut_rematerialization_partition)
        return compiled(*[inputs[i] for i in where])
    return fn


def _torch_refuses_without_data(op, sample):
    """torch's make_fx on fake tensors refuses the same call (the data decides a shape or a Python value)."""
    body = _body(op, sample)
    inputs = [to_torch(x) for x in sample.inputs]
    where = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)]

    def traced(*tensors):
        args = list(inputs)
        for i, t in zip(where, tensors):
            args[i] = t
        return body(torch, *args)
    try:
        gm = torch_make_fx(traced, tracing_mode="fake")(*[inputs[i] for i in where])
    except (TorchDataDependent, TorchDynamicShape, GuardOnDataDependentSymNode):
        return
    # torch traced it only by reading a value from the data into a symbol (`.item()` or a data-sized output)
    assert any(n.target is torch.ops.aten._local_scalar_dense.default or _unbacked(n.meta.get("val"))
               for n in gm.graph.nodes), "torch traces this op without its data; ember refused"


def _unbacked(val):
    vals = val if isinstance(val, (tuple, list)) else [val]
    return any(isinstance(v, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in v.shape)
               for v in vals)


@pytest.mark.parametrize("op", OPS, ids=[op.id for op in OPS])
def test_aot_op_matches_torch(op):
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    samples = op.samples(dtype, np.random.default_rng(0))
    for s in samples if ALL_SAMPLES else samples[:1]:
        grad = None
        if op.grad and dtype == "float64":
            grad = [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]
            if op.grad_inputs is not None:
                grad = [i for i in grad if i in op.grad_inputs]
        try:
            check(_aot(op, s), *s.inputs, grad=grad, rtol=op.rtol, atol=op.atol, check_stride=op.strides)
        except _NEEDS_DATA:
            _torch_refuses_without_data(op, s)


def test_cond_picks_its_branch_when_the_graph_runs():
    """One AOT graph of a `cond` on a tensor predicate (traced on fakes: one node, NOTE [ cond under a
    tracer ]) serves both predicate values, forward and gradients, as torch's cond under its
    aot_function does."""
    from functorch.compile import aot_function as torch_aot_function
    from functorch.compile import nop as torch_nop

    def fn(lib, x):
        return lib.cond(x.sum() > 0, lambda t: t.sin() * t, lambda t: t.cos() * 2, (x,))

    compiled = {ember: aot_function(lambda x: fn(ember, x), nop),
                torch: torch_aot_function(lambda x: fn(torch, x), torch_nop)}
    for sign in (1, -1, 1):
        x = sign * np.abs(np.random.default_rng(0).standard_normal(5))
        check(lambda lib, t: compiled[lib](t), x, grad=[0])
    assert len(compiled[ember].cache) == 1
