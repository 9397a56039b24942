"""grouped_mm (torch.nn.functional.grouped_mm on the CPU: its fallback, one matmul per group) and the enums of
the scaled matmuls (ScalingType, SwizzleType).

`offs` holds the cumulative ends of the groups along the ragged dimension: the rows of a 2-d `mat_a` against a
3-d `mat_b`, the columns of a 2-d `mat_b` against a 3-d `mat_a`, the contraction dim when both are 2-d. Rows or
columns past the last offset are left unwritten by torch (its output comes from `empty`); ember leaves zeros.
scaled_mm and scaled_grouped_mm take float8 matrices only, and ember has no float8 dtypes: they are left out
(tools/coverage.py lists them as float8-only).
"""

import enum

from ... import _dtypes
from ..._argparse import call_error
from ..._dispatch import dtype_word

__all__ = ["grouped_mm", "ScalingType", "SwizzleType"]


class ScalingType(enum.IntEnum):
    """How scaled_mm's scales apply (torch.nn.functional.ScalingType)."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


ScalingType.__name__ = ScalingType.__qualname__ = "_ScalingType"


class SwizzleType(enum.IntEnum):
    """The layout of scaled_mm's block scales (torch.nn.functional.SwizzleType)."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


SwizzleType.__name__ = SwizzleType.__qualname__ = "_SwizzleType"

_GROUPED = {"float32", "bfloat16", "float16"}
_CPP_NAMES = {"float32": "float", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _check(mat_a, mat_b, offs, bias, out_dtype):
    try:
        for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
            if m.dtype.name not in _GROUPED:
                raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                                   f"{dtype_word(m.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if mat_a.dtype is not mat_b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP_NAMES[mat_a.dtype.name]} "
                           f"!= {_CPP_NAMES[mat_b.dtype.name]}")
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if (mat_a.dim() == 2 or mat_b.dim() == 2) != (offs is not None):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if offs is not None:
        if offs.dtype is not _dtypes.int32:
            raise RuntimeError("Offsets have to be int32")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    groups = offs.shape[0] if offs is not None else None
    if mat_a.dim() == 3 and mat_b.dim() == 3 and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    for m in (mat_a, mat_b):
        if m.dim() == 3 and groups is not None and m.shape[0] != groups:
            raise RuntimeError("matrix batch sizes have to match")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Matrix products of groups: mat_a's row groups (or column groups of mat_b, or contraction groups)
    cut at the cumulative ends `offs` (int32), each multiplied by its own matrix; both 3-d: a batched matmul."""
    from ..._ops.creation import zeros
    from ..._ops.shape import cat, stack

    _check(mat_a, mat_b, offs, bias, out_dtype)
    if offs is None:
        return mat_a @ mat_b
    ends = [int(v) for v in offs.tolist()]
    starts = [0] + ends[:-1]
    if mat_a.dim() == 2 and mat_b.dim() == 3:  # ragged rows
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_a.shape[0] - (ends[-1] if ends else 0)
        parts.append(zeros((rest, mat_b.shape[-1]), dtype=mat_a.dtype))
        return cat(parts, 0)
    if mat_a.dim() == 3 and mat_b.dim() == 2:  # ragged columns
        parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_b.shape[1] - (ends[-1] if ends else 0)
        parts.append(zeros((mat_a.shape[1], rest), dtype=mat_a.dtype))
        return cat(parts, 1)
    # both 2-d: ragged contraction, one (M, N) product per group
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in zip(starts, ends)], 0)
