"""nn layers, functionals, losses and optimizer steps under FakeTensorMode, held to torch's FakeTensorMode.

The rows are test_meta_nn's (every layer family, forward and, where the row asks, backward). Each runs with
the layer built inside the fake mode (its parameters are fakes) on fake inputs: every output and every
gradient left on a parameter or input must have torch's shape, dtype, strides and device (cpu), and a
row torch refuses must fail with the same exception class (or both with a data-dependence exception).
"""

import numpy as np
import pytest
import torch
from test_meta_nn import ROWS, _array, _flat
from torch._subclasses.fake_tensor import FakeTensorMode as TorchFakeMode

import ember
from ember._subclasses.fake_tensor import FakeTensorMode

_DATA = ("DynamicOutputShapeException", "DataDependentOutputException")


def _desc(t):
    if isinstance(t, (ember.Tensor, torch.Tensor)):
        return (tuple(t.shape), str(t.dtype).split(".")[-1], t.stride(), t.device.type)
    return type(t).__name__


def _kind(e):
    return type(e).__name__ if type(e).__name__ in _DATA else "error"


class _Real:
    """No mode: the row on real tensors (what a fake run that torch cannot do is held to)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def from_tensor(self, t):
        return t


def _run(lib, row, real=False):
    _, build, specs, call, backward = row
    rng = np.random.default_rng(0)
    arrays = [_array(rng, s) for s in specs]
    mode = _Real() if real else TorchFakeMode(allow_non_fake_inputs=True) if lib is torch else \
        FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        try:
            lib.manual_seed(0)
            module = build(lib.nn) if build is not None else None
            inputs = [mode.from_tensor(lib.from_numpy(a)) for a in arrays]
            for t, s in zip(inputs, specs):
                if backward and s[0] in "fd":
                    t.requires_grad_()
            out = call(lib, module, *inputs)
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return _kind(e), None
        fwd = [_desc(t) for t in _flat(out)]
        if not backward:
            return fwd, None
        outs = [t for t in _flat(out) if isinstance(t, (ember.Tensor, torch.Tensor)) and t.requires_grad]
        try:
            lib.autograd.backward(outs, [lib.empty_like(t) for t in outs])
        except Exception as e:  # noqa: BLE001
            return fwd, _kind(e)
        leaves = (list(module.named_parameters()) if module is not None else []) + \
            [(f"input{i}", t) for i, t in enumerate(inputs) if t.requires_grad]
        return fwd, [(name, None if t.grad is None else _desc(t.grad)) for name, t in leaves]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_fake_nn_matches_torch(row):
    t, e = _run(torch, row), _run(ember, row)
    if t[0] in _DATA and e != t:
        # torch's fake mode needs the data here; ember's needs it too, or answers as its kernel does
        assert e[0] in _DATA or e == _run(ember, row, real=True), f"{row[0]}: ember fake {e} != ember kernel"
    else:
        assert e == t, f"{row[0]}: ember {e} != torch {t}"
