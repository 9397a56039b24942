"""`make_tensor`: a tensor of a shape, dtype and device filled with values drawn uniformly, as torch's.

The values come from `randint` (bool and integer dtypes) or `uniform_` (floating and complex ones, a complex
tensor filled through `view_as_real`), so after the same seed they are torch's numbers.
"""

import collections.abc
import math
import warnings

from .. import _dtypes, _naming

__all__ = ["make_tensor"]


def _finfo(dtype):
    import ml_dtypes
    import numpy as np

    np_dtype = _dtypes.to_numpy(dtype)
    return ml_dtypes.finfo(np_dtype) if np_dtype.kind == "V" else np.finfo(np_dtype)


def _iinfo(dtype):
    import numpy as np

    return np.iinfo(_dtypes.to_numpy(dtype))


def _uniform_random_(t, low, high):
    if high - low >= float(_finfo(t.dtype).max):
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    r"""Creates a tensor of the given ``shape``, ``device`` and ``dtype``, filled with values drawn uniformly
    from ``[low, high)``.

    ``low`` and ``high`` outside the dtype's finite range are clamped to it. When ``None`` they default
    by dtype: bool ``[0, 2)``, unsigned integers ``[0, 10)``, signed integers ``[-9, 10)``, floating and
    complex ``[-9, 9)``.

    Args:
        shape: an integer sequence, or integers.
        dtype (ember.dtype): the dtype of the result.
        device (str or ember.device): its device.
        low, high (Number, optional): the range, inclusive below and exclusive above.
        requires_grad (bool): whether autograd records operations on it (floating and complex only).
        noncontiguous (bool): make it non-contiguous (ignored under two elements); not with ``memory_format``.
        exclude_zero (bool): replace zeros by 1 (bool, integers) or the dtype's ``tiny`` (floating, complex).
        memory_format (ember.memory_format, optional): its memory format.

    Raises:
        ValueError: ``requires_grad`` for an integral dtype, ``low >= high``, a NaN bound, or both
            ``noncontiguous`` and ``memory_format``. TypeError: a dtype it does not support.

    Example::

        >>> make_tensor((3,), device="cpu", dtype=ember.float32, low=-1, high=1)
    """
    import ember as torch

    integral = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16,
                torch.uint32, torch.uint64]
    floating = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
    complex_ = [torch.complex64, torch.complex128]

    def modify_low_high(low, high, *, lowest_inclusive, highest_exclusive, default_low, default_high):
        low = low if low is not None else default_low
        high = high if high is not None else default_high
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
        elif low == high and dtype in floating + complex_:
            warnings.warn(_naming.named(
                "Passing `low==high` to `ember.testing.make_tensor` for floating or complex types "
                "is deprecated since 2.1 and will be removed in 2.3. Use `ember.full(...)` instead."),
                FutureWarning, stacklevel=3)
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest_inclusive or low >= highest_exclusive:
            raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                             f"but {dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
        low = min(max(low, lowest_inclusive), highest_exclusive)
        high = min(max(high, lowest_inclusive), highest_exclusive)
        if dtype in integral:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got {noncontiguous=} and {memory_format=}")
    if requires_grad and dtype in integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is torch.bool:
        low, high = modify_low_high(low, high, lowest_inclusive=0, highest_exclusive=2, default_low=0,
                                    default_high=2)
        result = torch.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in integral:
        info = _iinfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=int(info.min),
                                    highest_exclusive=int(info.max) + (1 if dtype is not torch.int64 else 0),
                                    default_low=-9, default_high=10)
        result = torch.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in floating + complex_:
        info = _finfo(dtype)
        low, high = modify_low_high(low, high, lowest_inclusive=float(info.min),
                                    highest_exclusive=float(info.max), default_low=-9, default_high=9)
        result = torch.empty(shape, device=device, dtype=dtype)
        _uniform_random_(torch.view_as_real(result) if dtype in complex_ else result, low, high)
    else:
        raise TypeError(_naming.named(f"The requested dtype '{dtype}' is not supported by "
                                      "ember.testing.make_tensor().") + " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dtype in integral else float(_finfo(dtype).tiny)
    if dtype in floating + complex_:
        result.requires_grad = requires_grad
    return result
