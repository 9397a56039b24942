"""Every op of the OpInfo table (all op_db*.py files) under CPU autocast, against torch.

Each entry's float32 samples (or its first dtype's) run inside `autocast("cpu", dtype=bfloat16)` and
`dtype=float16` in ember and in torch: the outputs' dtypes must be torch's exactly (the per-op policy of
ember/amp/autocast_mode.py), and their values torch's within the output dtype's rounding (compare.py's
tolerance for it). An op torch refuses under autocast must fail in ember with torch's exception and message.
"""

import numpy as np
import pytest
from compare import check
from op_db import OPS

_BY_ID = {op.id: op for op in OPS}


def _sample_dtype(op):
    return "float32" if "float32" in op.dtypes else op.dtypes[0]


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(_BY_ID))
def test_autocast_forward(name, low):
    op = _BY_ID[name]
    for s in op.samples(_sample_dtype(op), np.random.default_rng(0)):
        def fn(lib, *inputs, s=s):
            with lib.autocast("cpu", dtype=getattr(lib, low)):
                return op.fn(lib, *inputs, **s.kwargs)
        check(fn, *s.inputs, rtol=op.rtol, atol=op.atol, check_stride=op.strides)
