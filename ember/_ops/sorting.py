"""Sorting and searching: sort, argsort, msort, topk, kthvalue, unique, unique_consecutive, searchsorted,
bucketize, bincount, histc.

NaN sorts as the largest value (torch's order), which is also NumPy's, so ascending sorts agree; a stable
descending sort is an ascending sort of the reversed input, reversed back (ties keep input order). The
default `stable=False` puts ties where torch's std::sort does (See NOTE [ torch's unstable sort order ]).
"""

import numpy as np

from .. import _dtypes, return_types
from .._argparse import call_error
from .._dispatch import (
    BOOL,
    FALLBACK,
    FLOATING,
    INDEXING,
    INTEGRAL,
    NOT_IMPLEMENTED,
    REAL,
    _modes,
    defop,
    dispatch,
    not_implemented,
    require_dtype,
    require_op_dtype,
)
from .._meta import MetaArray, like_strides, meta_array, no_meta_kernel
from .._tensor import Tensor
from ._stdsort import order_ranks, quick_select_index, topk_perm, unstable_argsort
from ._util import finish_out, method, wrap_dim
from .reduction import _canonical

_RADIX_MIN = 32768  # torch's GRAIN_SIZE: from here fbgemm's (stable) radix sort takes 1-D integer sorts



def sortable(a):
    """`a` as NumPy sorts it in torch's order: bfloat16 (whose NaNs NumPy does not sort last) as float32."""
    return a.astype(np.float32) if a.dtype.kind == "V" else a


def _argsort(a, dim, descending, stable=True):
    a = sortable(a)
    if not descending:
        idx = np.argsort(a, axis=dim, kind="stable")
    else:
        rev = np.argsort(np.flip(a, dim), axis=dim, kind="stable")
        idx = np.flip(a.shape[dim] - 1 - rev, dim)
    if stable or (a.ndim == 1 and not descending and a.dtype.kind in "iu" and a.size >= _RADIX_MIN):
        return idx
    return unstable_argsort(a, dim, descending, idx)


def _gather_grad(grads, a, dim, *params, out):
    from .indexing import scatter_into_zeros

    if a.dim() == 0:
        return grads[0]
    return scatter_into_zeros(grads[0], out[1], dim, a.shape)


@defop("sort", "SortBackward0", INDEXING, saves="meta", save_output=True, dtypes=REAL,
       error=lambda d, *args: RuntimeError(" Sort does not support complex dtypes on CPU"))
def _sort(a, dim, descending, stable):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _argsort(a, dim, descending, stable)
    return _like(a, np.take_along_axis(a, idx, axis=dim)), _like(a, idx, np.int64)


def _like(a, r, dtype=None):
    """`r` laid out in memory like `a` (torch's sort keeps its input's strides)."""
    out = np.empty_like(a, dtype=dtype or a.dtype)
    out[...] = r
    return out


_sort.derivative_(_gather_grad)


@_sort.meta_
def _(a, dim, descending, stable):
    st = like_strides(a)  # (torch's sort lays its outputs out like its input)
    return meta_array(a.shape, a._data.dtype, st), meta_array(a.shape, _dtypes.int64, st)


def _select_meta(a, shape):
    """Values and int64 indices of `shape`, contiguous: what topk and kthvalue return."""
    return meta_array(shape, a._data.dtype), meta_array(shape, _dtypes.int64)


@method()
def sort(input, dim=-1, descending: bool = False, *, stable: "bool | None" = False, out=None):
    if isinstance(dim, bool):
        raise TypeError("sort(): argument 'dim' must be int, not bool")
    try:
        d = wrap_dim(dim, input._data.ndim)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(return_types.sort(*dispatch(_sort, (input,), (d, descending, bool(stable)))), out)


@defop("argsort", None, INDEXING)  # not differentiable
def _argsort_op(a, dim, descending, stable):
    if a.ndim == 0:
        return np.zeros((), np.int64)
    return _like(a, _argsort(a, dim, descending, stable), np.int64)


_argsort_op.meta_(lambda a, dim, descending, stable: meta_array(a.shape, _dtypes.int64, like_strides(a)))


@method()
def argsort(input, dim=-1, descending: bool = False, *, stable: bool = False, out=None):
    try:
        d = wrap_dim(dim, input._data.ndim)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_op_dtype(_sort, input.dtype)
    return finish_out(dispatch(_argsort_op, (input,), (d, descending, bool(stable))), out)


@method()
def msort(input, *, out=None):
    return finish_out(sort(input, 0).values, out)


def _topk_error(d, *args):
    return RuntimeError(" topk does not support complex dtypes on CPU" if d.is_complex else
                        "topk does not support bool dtypes on CPU")


@defop("topk", "TopkBackward0", INDEXING, saves="meta", save_output=True, dtypes=INTEGRAL | FLOATING,
       error=_topk_error)
def _topk(a, k, dim, largest, sorted_=True):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    b = np.moveaxis(a, dim, -1)
    rows = b.reshape(-1, b.shape[-1])
    idx = _topk_rows(rows, k, largest, sorted_)
    idx = np.moveaxis(idx.reshape(b.shape[:-1] + (k,)), -1, dim)
    return _canonical(np.take_along_axis(a, idx, axis=dim)), _canonical(idx)


def _topk_rows(rows, k, largest, sorted_):
    """torch's topk indices of each row (See NOTE [ torch's topk and kthvalue tie order ])."""
    n = rows.shape[1]
    h = min(k + 1, n)  # the first k + 1 in stable comparator order decide whether ties matter
    key = None
    if 0 < h < n // 8 and rows.dtype.kind in "fiu":
        if not largest:
            key = rows
        elif rows.dtype.kind in "iu":
            key = ~rows
        elif not np.isnan(rows).any():
            key = -rows
    if key is not None:  # partition first: O(n) instead of a full sort
        part = np.sort(np.argpartition(key, h - 1, axis=1)[:, :h], axis=1)
        head = np.take_along_axis(part, _argsort(np.take_along_axis(rows, part, axis=1), 1, largest), axis=1)
    else:
        head = _argsort(rows, 1, largest)[:, :h]
    out = head[:, :k].astype(np.int64)
    if k == 0:
        return out
    if not sorted_ and k * 64 > n:
        replay = np.arange(rows.shape[0])  # nth_element's arrangement is the answer
    else:
        vals = np.take_along_axis(rows, head, axis=1)
        same = vals[:, 1:] == vals[:, :-1]
        if vals.dtype.kind in "fV":
            nan = np.isnan(vals.astype(np.float32))
            same |= nan[:, 1:] & nan[:, :-1]
        replay = np.flatnonzero(same.any(axis=1))
    if replay.size:
        sub = rows[replay]
        keys, _ = order_ranks(sub, _argsort(sub, 1, largest))
        out[replay] = [topk_perm(r, k, sorted_) for r in keys.tolist()]
    return out


@_topk.derivative_
def _(grads, a, k, dim, largest, sorted_=True, *, out):
    return _gather_grad(grads, a, dim, out=out)


@_topk.meta_
def _(a, k, dim, largest, sorted_=True):
    shape = list(a.shape)
    if shape:
        shape[dim] = k
    return _select_meta(a, shape)


@method()
def topk(input, k: int, dim=-1, largest: bool = True, sorted: bool = True, *, out=None):  # noqa: A002
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    return finish_out(return_types.topk(*dispatch(_topk, (input,), (k, d, largest, bool(sorted)))), out)


@defop("kthvalue", "KthvalueBackward0", INDEXING, saves="meta", save_output=True, dtypes=INTEGRAL | FLOATING,
       error="kthvalue_cpu")
def _kthvalue(a, k, dim, keepdim):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    b = np.moveaxis(a, dim, -1)
    rows = b.reshape(-1, b.shape[-1])
    order = np.argsort(sortable(rows), axis=1, kind="stable")  # ascending, NaN last: kthvalue's comparator order
    try:
        idx = order[:, k - 1].copy()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    keys, same = order_ranks(rows, order)
    tied = np.zeros(rows.shape[0], bool)  # the k-th value occurs more than once: the selection decides
    if k - 2 >= 0:
        tied |= same[:, k - 2]
    if k - 1 < same.shape[1]:
        tied |= same[:, k - 1]
    for r in np.flatnonzero(tied).tolist():
        idx[r] = quick_select_index(keys[r].tolist(), k - 1)
    idx = idx.reshape(b.shape[:-1] + (1,))
    idx = np.moveaxis(idx, -1, dim)
    vals = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return _canonical(vals), _canonical(idx.astype(np.int64))


@_kthvalue.derivative_
def _(grads, a, k, dim, keepdim, *, out):
    from .indexing import scatter_into_zeros

    g, idx = grads[0], out[1]
    if a.dim() == 0:
        return g
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return scatter_into_zeros(g, idx, dim, a.shape)


@_kthvalue.meta_
def _(a, k, dim, keepdim):
    shape = list(a.shape)
    if shape:
        shape[dim:dim + 1] = [1] if keepdim else []
    return _select_meta(a, shape)


@method()
def kthvalue(input, k: int, dim=-1, keepdim: bool = False, *, out=None):
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    try:
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(return_types.kthvalue(*dispatch(_kthvalue, (input,), (k, d, keepdim))), out)


# ---- unique ---------------------------------------------------------------------------------------------


# NOTE [ unique is one op ]
# unique and unique_consecutive are dispatched as one op each (values, inverse, counts: torch's
# _unique2 / unique_consecutive schemas), whatever the flags; the public function returns the outputs
# its flags ask for. Their output shapes depend on the data (tag dynamic_output_shape); not differentiable.

def _unique_result(out, return_inverse, return_counts):
    vals, inv, counts = out
    res = [vals]
    if return_inverse:
        res.append(inv)
    if return_counts:
        res.append(counts)
    return res[0] if len(res) == 1 else tuple(res)


@defop("unique", None, INDEXING, tags=("dynamic_output_shape",))
def _unique(a, dim):
    if dim is None:
        # (NaNs are all distinct, as in torch)
        vals, inv, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
        if a.dtype.itemsize == 2 and a.dtype.kind in "fV" and a.size > 16:
            _nan_slots_in_sort_order(a.reshape(-1), inv)
        return vals, inv.reshape(a.shape).astype(np.int64), counts.astype(np.int64)
    vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True, axis=dim, equal_nan=False)
    return np.ascontiguousarray(vals), inv.reshape(-1).astype(np.int64), counts.astype(np.int64)


def _nan_slots_in_sort_order(flat, inv):
    """torch's unique of float16/bfloat16 numbers its NaNs (each its own value) in the order its unstable sort
    leaves them (measured; float32/float64 go another way, NumPy's order); `inv` is fixed in place."""
    nan = np.isnan(flat.astype(np.float32))
    if nan.sum() > 1:
        perm = _argsort(flat, 0, False, stable=False)
        order = perm[nan[perm]]
        inv.reshape(-1)[order] = np.sort(inv.reshape(-1)[nan])


@method()
def unique(input, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: "int | None" = None):
    require_dtype(input, REAL, "unique" if dim is None else "unique_dim")
    a = input._data
    d = None
    if dim is not None:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, a.ndim)
        _unique_dim_check(a, d)
    return _unique_result(dispatch(_unique, (input,), (d,)), return_inverse, return_counts)


def _unique_dim_check(a, d):
    """torch's checks of an empty input to unique or unique_consecutive along dim `d` (its dim templates)."""
    if a.size == 0:
        if a.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                               "applied")
        if a.shape.count(0) != 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be "
                               "applied ")


@method()
def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim: "int | None" = None):
    require_dtype(input, REAL, "unique_dim" if dim is not None and input.dim() > 1 else "unique")
    if dim is not None and input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = None if dim is None else wrap_dim(dim, input._data.ndim)
    if d is not None:
        _unique_dim_check(input._data, d)
    return _unique_result(dispatch(_unique_consecutive, (input,), (d,)), return_inverse, return_counts)


@defop("unique_consecutive", None, INDEXING, tags=("dynamic_output_shape",))
def _unique_consecutive(a, d):
    if d is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape, np.bool_)
        change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(a.shape)
    else:
        b = np.moveaxis(a, d, 0).reshape(a.shape[d], a.size // max(a.shape[d], 1))  # (-1 fails on 0 rows)
        change = np.ones(b.shape[0], np.bool_)
        change[1:] = (b[1:] != b[:-1]).any(axis=1)
        vals = np.ascontiguousarray(np.compress(change, a, axis=d))
        inv = np.cumsum(change) - 1
    counts = np.diff(np.append(np.flatnonzero(change), change.size))
    return vals, inv.astype(np.int64), counts.astype(np.int64)


# NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py: torch's derivatives.yaml has
# `not_implemented` for unique's values (its inverse and counts are integers, never differentiable)
_unique.refuses_(NOT_IMPLEMENTED, lambda params: "_unique2" if params[0] is None else "unique_dim",
                 lambda params: "Unique2Backward0" if params[0] is None else "UniqueDimBackward0")
_unique_consecutive.refuses_(NOT_IMPLEMENTED, "unique_consecutive", "UniqueConsecutiveBackward0")


@_unique.meta_
def _(a, dim):
    raise no_meta_kernel("_unique2" if dim is None else "unique_dim")  # (how many values is data)


@_unique_consecutive.meta_
def _(a, dim):
    raise no_meta_kernel("unique_consecutive")


# ---- searching and counting ---------------------------------------------------------------------------


def _search_rows(seq, vals, side, sorter=None):
    """np.searchsorted row by row over the leading dims (the innermost dim is the sorted one)."""
    if seq.ndim == 1:
        s = seq if sorter is None else seq[sorter]
        return np.searchsorted(s, vals, side=side)
    try:
        s2 = seq.reshape(-1, seq.shape[-1])
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    v2 = vals.reshape(-1, vals.shape[-1])
    srt = None if sorter is None else sorter.reshape(-1, sorter.shape[-1])
    out = np.empty(v2.shape, np.int64)
    for i in range(s2.shape[0]):
        row = s2[i] if srt is None else s2[i][srt[i]]
        out[i] = np.searchsorted(row, v2[i], side=side)
    return out.reshape(vals.shape)


_SEARCH = INTEGRAL | FLOATING  # searchsorted / bucketize: values and boundaries


@method(top=True)
def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False, side=None,
                 sorter=None, out=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    for t in (input, sorted_sequence):
        if isinstance(t, Tensor):
            require_dtype(t, _SEARCH, "searchsorted_out_cpu")
    if sorter is not None and sorter.shape != sorted_sequence.shape:
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(sorted_sequence.shape)} and got sorter tensor {list(sorter.shape)}")
    seq = sorted_sequence._data
    scalar = not isinstance(input, Tensor)
    vals = np.asarray(input) if scalar else input._data
    if seq.ndim != 1 and vals.ndim == 0:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim > 1 and (scalar or vals.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
    r = dispatch(_searchsorted, (sorted_sequence, input, sorter), ("right" if right else "left", out_int32))
    return finish_out(r, out)


# inputs: (sorted_sequence, values (a tensor or a number), sorter or None)
@defop("searchsorted", None, INDEXING)
def _searchsorted(seq, vals, sorter, side, out_int32):
    r = _search_rows(seq, np.asarray(vals), side, sorter)
    return np.asarray(r).astype(np.int32 if out_int32 else np.int64)


def _search_meta(vals, out_int32):
    """searchsorted and bucketize: an index per value, contiguous (torch's meta)."""
    shape = tuple(vals.shape) if isinstance(vals, Tensor) else ()
    return meta_array(shape, _dtypes.int32 if out_int32 else _dtypes.int64)


_searchsorted.meta_(lambda seq, vals, sorter, side, out_int32: _search_meta(vals, out_int32))


del Tensor.searchsorted  # a function only in torch


@method()
def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False, out=None):
    try:
        if boundaries._data.ndim != 1:
            raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for t in (input, boundaries):
        if isinstance(t, Tensor):
            require_dtype(t, _SEARCH, "searchsorted_out_cpu")
    r = dispatch(_bucketize, (input, boundaries), ("right" if right else "left", out_int32))
    return finish_out(r, out)


@defop("bucketize", None, INDEXING)  # inputs: (values (a tensor or a number), boundaries)
def _bucketize(vals, boundaries, side, out_int32):
    r = np.searchsorted(boundaries, np.asarray(vals), side=side)
    return np.asarray(r).astype(np.int32 if out_int32 else np.int64)


_bucketize.meta_(lambda vals, boundaries, side, out_int32: _search_meta(vals, out_int32))


@method()
def bincount(input, weights=None, minlength=0):
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]: before the dtype check, as torch's autograd fallback
        from ..autograd._jvp import check_composite
        check_composite("bincount", input, weights)
    require_dtype(input, INTEGRAL, "bincount_cpu")
    a = input._data
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.size and type(a) is not MetaArray and a.min() < 0:  # (a meta input has no values to check)
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and weights._data.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return dispatch(_bincount, (input, weights), (minlength,))


@defop("bincount", None, INDEXING, tags=("dynamic_output_shape",))  # inputs: (input, weights or None)
def _bincount(a, w, minlength):
    if w is None:
        return np.bincount(a, minlength=minlength).astype(np.int64)
    out_dtype = w.dtype if w.dtype == np.float32 else np.float64
    return np.bincount(a, weights=w.astype(np.float64), minlength=minlength).astype(out_dtype)


def _histc_error(d, lo, hi):
    """histc's first refusal, in torch's order: the min/max cast, their linspace, then the histogram."""
    if d.is_complex:  # (the range of an unbounded histogram comes first)
        return not_implemented("aminmax_cpu" if lo == hi else "histogram_cpu", d)
    if d.name in BOOL:
        return not_implemented("linspace_cpu", d)
    if d.name == "uint8" and (lo < 0 or hi < 0):
        return RuntimeError("value cannot be converted to type uint8_t without overflow")
    return not_implemented("histogram_cpu", d)


_bincount.refuses_(FALLBACK, "bincount")  # (its weights: NOTE [ What torch's autograd refuses ])


@_bincount.meta_
def _(a, w, minlength):
    raise no_meta_kernel("bincount")  # (its length is the largest value)


@method()
def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002 - torch's names
    if isinstance(bins, int) and bins <= 0:  # (torch's first check, before any dtype's)
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")  # (torch's words)
    require_dtype(input, FLOATING, lambda d: _histc_error(d, min, max))
    a = input._data
    if a.dtype.kind == "V":
        return finish_out(histc(input.float(), bins, min, max).to(input.dtype), out)
    return finish_out(dispatch(_histc, (input,), (bins, float(min), float(max))), out)


@defop("histc", None, INDEXING)  # not differentiable
def _histc(a, bins, lo, hi):
    from_data = lo == hi and a.size
    if from_data:
        lo, hi = float(a.min()), float(a.max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        # (C++ prints the NaN that torch's min/max reductions make as "-nan")
        word = lambda v: ("-nan" if from_data or np.signbit(v) else "nan") if v != v else f"{v:g}"  # noqa: E731
        raise RuntimeError(f"torch.histc: range of [{word(lo)}, {word(hi)}] is not finite")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    x = a.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    with np.errstate(all="ignore"):  # (in the input's dtype, as torch's kernel computes a bin)
        span = np.asarray(hi, x.dtype) - np.asarray(lo, x.dtype)
        f = (x - np.asarray(lo, x.dtype)) * bins / span
    if not np.isfinite(span):  # torch's bin edges overflow to NaN: no element is inside them
        return np.zeros(bins, a.dtype)
    # a position that overflowed (a range near the dtype's max) casts to INT64_MIN in C++: torch's clamp
    # puts it in bin 0
    pos = np.where(np.isfinite(f) & (f < 2.0 ** 62), f, -1).astype(np.int64)
    pos = np.clip(pos, 0, bins - 1)
    return np.bincount(pos, minlength=bins).astype(a.dtype)


@_histc.meta_
def _(a, bins, lo, hi):
    if hi < lo:
        raise RuntimeError("histc(): max must be larger than min")
    return meta_array((bins,), a._data.dtype)
