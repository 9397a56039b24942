"""Meta rules over the whole OpInfo table (NOTE [ Meta payloads ]).

Every sample of every op runs on meta tensors (shape, dtype and strides, no data) in ember and in torch,
and must give torch's meta outputs or torch's error class. Where torch has no meta kernel for an op, ember's
meta outputs are held to ember's own kernel on real data instead (which test_ops holds to torch). Ops whose
output shape depends on the data (tag `dynamic_output_shape`) refuse meta inputs, as torch's do.
"""

import numpy as np
import pytest
import torch
from compare import to_ember, to_torch
from op_db import OPS

import ember

_BY_NAME = {op.id: op for op in OPS}


def _inputs(lib, inputs, meta):
    conv = to_ember if lib is ember else to_torch
    return [(conv(x).to("meta") if meta else conv(x)) if isinstance(x, np.ndarray) else x for x in inputs]


def _outcome(lib, op, sample, meta=True):
    try:
        out = op.fn(lib, *_inputs(lib, sample.inputs, meta), **sample.kwargs)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    flat = list(out) if isinstance(out, (tuple, list)) else [out]
    return [(tuple(t.shape), str(t.dtype).split(".")[-1], t.stride(), "meta" if meta else t.device.type)
            if isinstance(t, (ember.Tensor, torch.Tensor)) else type(t).__name__ for t in flat]


@pytest.mark.parametrize("name", [op.id for op in OPS])
def test_meta(name):
    op = _BY_NAME[name]
    for dtype in op.dtypes:
        for s in op.samples(dtype, np.random.default_rng(0)):
            t = _outcome(torch, op, s)
            e = _outcome(ember, op, s)
            if t == "NotImplementedError" and e != t:  # torch has no meta kernel: hold ember to its kernel
                real = _outcome(ember, op, s, meta=False)
                real = [r[:3] + ("meta",) if isinstance(r, tuple) else r for r in real] \
                    if isinstance(real, list) else real
                assert e == real, f"{name} {dtype}: ember meta {e} != ember kernel {real}"
            else:
                assert e == t, f"{name} {dtype}: ember {e} != torch {t}"
