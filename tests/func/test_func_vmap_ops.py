"""vmap over the whole OpInfo table (tests/ops/op_db*.py), against torch.vmap.

Each op's first samples (first dtype) are batched two ways: a new leading dim (in_dims=0) and a new last
dim (in_dims=-1), two samples per batch drawn from two seeds. ember.func.vmap must give torch.func.vmap's
result (values, shape, dtype). Where torch's vmap refuses (an op with a dynamic output shape, a random op
under randomness="error", an op that calls .item(), an op over lists of tensors, an out= op, requires_grad_()
inside the function), ember must refuse with the same exception class and message.
"""

import os
import sys

import numpy as np
import pytest
import torch
from compare import assert_same, normalize_message, to_ember, to_torch

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "ops"))
from op_db import OPS  # noqa: E402

_BY_ID = {op.id: op for op in OPS}
N_SAMPLES = 2

def _batched(samples_a, samples_b, dim):
    """The two draws' array inputs stacked along `dim` (the other inputs taken from the first draw)."""
    out = []
    for sa, sb in zip(samples_a, samples_b):
        if len(sa.inputs) != len(sb.inputs) or any(
            isinstance(a, np.ndarray) != isinstance(b, np.ndarray)
            or isinstance(a, np.ndarray)
            and a.shape != b.shape
            for a, b in zip(sa.inputs, sb.inputs)
        ):
            continue
        arrays = [
            np.stack([a, b], axis=dim) if isinstance(a, np.ndarray) else None
            for a, b in zip(sa.inputs, sb.inputs)
        ]
        if any(a is not None for a in arrays):
            out.append((sa, arrays))
    return out


def _call(lib, op, sample, arrays, dim, vmapped=True):
    conv = to_ember if lib is ember else to_torch
    tensors = [conv(a) for a in arrays if a is not None]
    in_dims = tuple(dim for a in arrays if a is not None)

    def f(*ts):
        it = iter(ts)
        args = [next(it) if a is not None else x for a, x in zip(arrays, sample.inputs)]
        return op.fn(lib, *args, **sample.kwargs)

    if vmapped:
        return lib.func.vmap(f, in_dims=in_dims)(*tensors)
    per = [f(*[t.select(dim, i) for t in tensors]) for i in range(2)]  # the loop vmap must equal
    if isinstance(per[0], (tuple, list)):
        return type(per[0])(lib.stack([p[i] for p in per], 0) for i in range(len(per[0])))
    return lib.stack(per, 0)


def _outcome(lib, *args, **kwargs):
    try:
        return _call(lib, *args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - the class is compared
        return None, e


@pytest.mark.parametrize("name", sorted(_BY_ID))
def test_vmap_op(name):
    _check_op(name)


def _check_op(name):
    op = _BY_ID[name]
    dtype = op.dtypes[0]
    sa = op.samples(dtype, np.random.default_rng(0))[:N_SAMPLES]
    sb = op.samples(dtype, np.random.default_rng(1))[:N_SAMPLES]
    for dim in (0, -1):
        for sample, arrays in _batched(sa, sb, dim):
            t, terr = _outcome(torch, op, sample, arrays, dim)
            e, eerr = _outcome(ember, op, sample, arrays, dim)
            where = f"{name} {dtype} in_dims={dim} shapes={[None if a is None else a.shape for a in arrays]}"
            if terr is None:
                assert eerr is None, (
                    f"{where}: ember raised {type(eerr).__name__}({eerr}); torch gave a result"
                )
                assert_same(e, t, rtol=op.rtol, atol=op.atol, check_stride=False, path=where)
            else:  # torch's vmap refuses: ember's refuses with its class and message
                assert eerr is not None, f"{where}: torch raised {type(terr).__name__}({terr}); ember ran"
                assert type(eerr).__name__ == type(terr).__name__, (
                    f"{where}: ember raised {type(eerr).__name__}({eerr}), "
                    f"torch {type(terr).__name__}({terr})"
                )
                tm, em = normalize_message(str(terr)), normalize_message(str(eerr))
                assert em == tm, f"{where}: message differs:\n ember: {em}\n torch: {tm}"

