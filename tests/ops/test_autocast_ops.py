"""Every op of the OpInfo table (all op_db*.py files) under CPU autocast, against torch.

Each entry's float32 samples (or its first dtype's) run inside `autocast("cpu", dtype=bfloat16)` and
`dtype=float16` in ember and in torch: the outputs' dtypes must be torch's exactly (the per-op policy of
ember/amp/autocast_mode.py), and their values torch's within the output dtype's rounding (compare.py's
tolerance for that dtype, not an entry's own tolerance, which is set for its full-precision runs). An op
torch refuses under autocast must fail in ember with torch's exception and message.
The "mixed" variant gives the first floating input in the lower precision already, as an activation
computed under autocast arrives at the next layer beside float32 weights; it runs for the ops autocast
casts (those of torch's CPU policy table), since for the others autocast changes nothing and mixed dtypes
are the plain forward tests' matter.
"""

import ml_dtypes
import numpy as np
import pytest
from compare import check
from op_db import OPS

from ember.amp.autocast_mode import CPU_POLICY

_BY_ID = {op.id: op for op in OPS}


def _torch_name(op_name):
    """The torch op an OpInfo entry calls, as torch's autocast table names it."""
    name = op_name.split(".")[-1] if op_name.startswith(("nn.functional.", "Tensor.")) else op_name
    name = name.replace("linalg.", "linalg_").replace("fft.", "fft_")
    for cand in (name, name + "_loss", name + ".input", "linalg_" + name):
        if cand in CPU_POLICY:
            return cand
    return None


_CAST = [i for i, op in _BY_ID.items() if _torch_name(op.name) is not None]


def _sample_dtype(op):
    return "float32" if "float32" in op.dtypes else op.dtypes[0]


def _lowered(inputs, low):
    """The inputs with the first floating array in dtype `low` (its values rounded to it)."""
    out, done = [], False
    for x in inputs:
        if not done and isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.dtype.itemsize == 4:
            x = np.ascontiguousarray(x.astype(ml_dtypes.bfloat16 if low == "bfloat16" else np.float16))
            done = True  # (C-contiguous, as compare.py gives torch a bfloat16 array)
        out.append(x)
    return out


_PARAMS = [pytest.param(name, low, variant, id=f"{name}-{low}-{variant}") for name in _BY_ID
           for variant in (("plain", "mixed") if name in _CAST else ("plain",)) for low in ("bfloat16", "float16")]


@pytest.mark.parametrize("name,low,variant", _PARAMS)
def test_autocast_forward(name, low, variant):
    op = _BY_ID[name]
    for s in op.samples(_sample_dtype(op), np.random.default_rng(0)):
        inputs = s.inputs if variant == "plain" else _lowered(s.inputs, low)
        def fn(lib, *inputs, s=s):
            with lib.autocast("cpu", dtype=getattr(lib, low)):
                return op.fn(lib, *inputs, **s.kwargs)
        check(fn, *inputs, check_stride=op.strides)
