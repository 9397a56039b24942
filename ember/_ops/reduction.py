"""Reductions: sum, mean, max/min (whole tensor or along a dim), amax/amin, argmax/argmin.

Integer and bool sums accumulate in int64 and half-precision sums in float32, as torch does.
"""

import numpy as np

from .. import _dtypes, return_types
from .._argparse import call_error
from .._dispatch import FLOATING, INTEGRAL, REAL, REDUCTION, defop, dispatch, dtype_word
from .._meta import reduction_meta
from ._util import finish_out, method, wrap_dims


def _nd(t):
    """The number of dims a `dim` argument is wrapped against (a 0-d tensor accepts dim 0 and -1)."""
    return t._data.ndim or 1


def _keep_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _unreduce(g, a, dims, keepdim):
    """Broadcast a reduced gradient back over the input's shape."""
    if not keepdim and dims:
        g = g.reshape(_keep_shape(a.shape, dims))
    return g.expand(a.shape)


def _canonical(x):
    """Reductions return C-contiguous results with torch's strides (NumPy keeps its input's order and odd
    strides on size-1 dims)."""
    x = np.asarray(x, order="C")
    return x.reshape(-1).reshape(x.shape) if x.ndim > 1 else x


def _acc_dtype(a, dtype):
    """(accumulate in, return as) NumPy dtypes for a sum of array `a`."""
    if dtype is not None:
        d = _dtypes.to_numpy(dtype)
        return d, d
    if a.dtype.kind in "biu":
        return np.dtype(np.int64), np.dtype(np.int64)
    if a.dtype.itemsize == 2:  # float16, bfloat16
        return np.dtype(np.float32), a.dtype
    return a.dtype, a.dtype


# NOTE [ Reductions call ufunc methods ]
# Kernels call `np.add.reduce` rather than `np.sum` (and `np_mean` rather than `np.mean`): NumPy charges a
# floating-point warning to the innermost Python frame, which for `np.sum` is NumPy's own wrapper module,
# where ember's warnings filter cannot tell ember's call from a user's (NOTE [ Floating-point warnings ]).
# Called directly, the ufunc charges the ember kernel, whose warnings the filter hides. (It is faster too.)


def np_mean(a, axis=None, keepdims=False, dtype=None):
    """np.mean's arithmetic (a sum, then one true division in the sum's dtype), charged to ember's frame."""
    s = np.add.reduce(a, axis=axis, dtype=dtype, keepdims=keepdims)
    if axis is None:
        n = a.size
    else:
        n = 1
        for d in (axis,) if isinstance(axis, int) else axis:
            n *= a.shape[d]
    return np.true_divide(s, n)


@defop("sum", "SumBackward0", REDUCTION, saves="meta")
def _sum_all(a, dtype):
    if dtype is None and a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return np.asarray(np.add.reduce(a, axis=None))  # np.sum's wrapper costs more than a tiny sum
    acc, out = _acc_dtype(a, dtype)
    return np.asarray(np.add.reduce(a, axis=None, dtype=acc)).astype(out, copy=False)


@_sum_all.derivative_
def _(g, a, dtype):
    return g.expand(a.shape)


def _sum_meta(a, dims=None, keepdim=False, dtype=None):
    return reduction_meta(a, dims, keepdim, _acc_dtype(a._data, dtype)[1])


_sum_all.meta_(lambda a, dtype: _sum_meta(a, dtype=dtype))


@defop("sum", "SumBackward1", REDUCTION, saves="meta", overload="dim_IntList")
def _sum_dim(a, dims, keepdim, dtype):
    acc, out = _acc_dtype(a, dtype)
    return _canonical(np.add.reduce(a, axis=dims, keepdims=keepdim, dtype=acc)).astype(out, copy=False)


@_sum_dim.derivative_
def _(g, a, dims, keepdim, dtype):
    return _unreduce(g, a, dims, keepdim)


_sum_dim.meta_(_sum_meta)


def _dims(input, dim, keepdim=False):
    """`dim` normalized to a tuple of dims (None: all); a `keepdim` that is not a bool is refused here, where
    the reduction's arguments are sorted out anyway (NumPy would take a str as true; NOTE [ Argument types on
    the error path ], ember/_argparse.py)."""
    try:
        if keepdim is not False and keepdim is not True:
            raise call_error(TypeError(f"argument 'keepdim' must be bool, not {type(keepdim).__name__}"))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n = input._data.ndim
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    dims = wrap_dims(dim, n)  # (a 0-d tensor takes dims -1 and 0, as torch's wrap, and reduces over none)
    return dims if n else ()


@method()
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001
    if dim is None and not keepdim and dtype is None and out is None:  # x.sum(): no arguments to sort out
        return dispatch(_sum_all, (input,), (None,))
    dims = _dims(input, dim, keepdim)
    if dims is None:
        r = dispatch(_sum_all, (input,), (dtype,))
        if keepdim:
            r = r.reshape((1,) * input._data.ndim)
    else:
        r = dispatch(_sum_dim, (input,), (dims, keepdim, dtype))
    return finish_out(r, out)


@defop("mean", "MeanBackward0", REDUCTION, saves="meta")
def _mean_all(a, dtype):
    acc, out = _acc_dtype(a, dtype)
    return np.asarray(np_mean(a, dtype=acc)).astype(out, copy=False)


@_mean_all.derivative_
def _(g, a, dtype):
    n = a.numel()
    return g.expand(a.shape) / n if n else g.expand(a.shape)


_mean_all.meta_(lambda a, dtype: _sum_meta(a, dtype=dtype))


@defop("mean", "MeanBackward1", REDUCTION, saves="meta", overload="dim")
def _mean_dim(a, dims, keepdim, dtype):
    acc, out = _acc_dtype(a, dtype)
    return _canonical(np_mean(a, axis=dims, keepdims=keepdim, dtype=acc)).astype(out, copy=False)


@_mean_dim.derivative_
def _(g, a, dims, keepdim, dtype):
    n = 1
    for d in dims:
        n *= a.shape[d]
    return _unreduce(g, a, dims, keepdim) / n if n else _unreduce(g, a, dims, keepdim)


_mean_dim.meta_(_sum_meta)


@method()
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    try:
        d = dtype or input.dtype
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {dtype_word(d)}")
    dims = _dims(input, dim, keepdim)
    if dims is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            r = dispatch(_mean_all, (input,), (dtype,))
        if keepdim:
            r = r.reshape((1,) * input._data.ndim)
    else:
        r = dispatch(_mean_dim, (input,), (dims, keepdim, dtype))
    return finish_out(r, out)


# ---- max / min -----------------------------------------------------------------------------------------


def evenly_distribute(g, a, *, out):
    """torch's evenly_distribute_backward (max(), min(), median()): ties share the gradient evenly, a NaN
    result's goes to the NaN elements, and the others get zero (not g * 0, which an infinite g makes NaN)."""
    mask = (a == out) | ((a != a) & (out != out))
    return (g / mask.sum()).where(mask, g.new_zeros(()))


def _extreme_all(name, fn):
    op = defop(name, name.capitalize() + "Backward1", REDUCTION, save_output=True, dtypes=REAL,
               error=f"{name}_all")(
        lambda a: np.asarray(fn(a)))

    op.derivative_(evenly_distribute)
    op.meta_(lambda a: reduction_meta(a, None, False))
    return op


_max_all = _extreme_all("max", np.max)
_min_all = _extreme_all("min", np.min)


def _extreme_dim(name, argfn):
    def kernel(a, dim, keepdim):
        idx = argfn(a, axis=dim, keepdims=True)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            idx, vals = idx.squeeze(dim), vals.squeeze(dim)
        return vals, idx.astype(np.int64, copy=False)
    op = defop(name, name.capitalize() + "Backward0", REDUCTION, saves="meta", save_output=True, dtypes=REAL,
               error=lambda d, *args: RuntimeError(f"{name}(): does not support complex input"), overload="dim")(kernel)

    @op.derivative_
    def _(grads, a, dim, keepdim, *, out):
        from .indexing import scatter_into_zeros

        g, idx = grads[0], out[1]
        if not keepdim:
            g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
        return scatter_into_zeros(g, idx, dim, a.shape)
    op.meta_(values_indices_meta)
    return op


def values_indices_meta(a, dim, keepdim):
    """The (values, int64 indices) pair a reduction along `dim` returns (max.dim, median.dim, mode)."""
    return reduction_meta(a, dim, keepdim, None, _dtypes.int64)


_max_dim = _extreme_dim("max", np.argmax)
_min_dim = _extreme_dim("min", np.argmin)


def _check_nonempty(input, name, dim=None):
    try:
        if input._data.size == 0:
            if dim is None:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                   "Specify the reduction dim with the 'dim' argument.")
            d = wrap_dims(dim, _nd(input))[0]
            if input._data.ndim and input._data.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def _max_min(name, all_op, dim_op, pair_fn, rtype):
    def fn(input, dim=None, keepdim: bool = False, *, out=None, other=None):
        from .._tensor import Tensor

        if other is not None:  # (max(input, other=t): the elementwise overload by keyword)
            dim = other
        if isinstance(dim, Tensor):
            return pair_fn(input, dim, out=out)
        _check_nonempty(input, name, dim)
        if dim is None:
            return finish_out(dispatch(all_op, (input,)), out)
        d = wrap_dims(dim, _nd(input))[0]
        if input._data.ndim == 0:
            return finish_out(rtype(input.clone(), _zeros_like_long(input)), out)
        return finish_out(rtype(*dispatch(dim_op, (input,), (d, keepdim))), out)
    fn.__name__ = name
    return method()(fn)


def _zeros_like_long(t):
    return t.new_zeros(t.shape, dtype=_dtypes.int64)  # (on t's device: a meta t gets a meta result)


def _maximum(a, b, out=None):
    from .pointwise import maximum
    return maximum(a, b, out=out)


def _minimum(a, b, out=None):
    from .pointwise import minimum
    return minimum(a, b, out=out)


max = _max_min("max", _max_all, _max_dim, _maximum, return_types.max)  # noqa: A001
min = _max_min("min", _min_all, _min_dim, _minimum, return_types.min)  # noqa: A001


def _amax_op(name, fn):
    op = defop(name, name.capitalize() + "Backward0", REDUCTION, save_output=True, dtypes=REAL,
               error=f"{name[1:]}_values_cpu")(
        lambda a, dims, keepdim: _canonical(fn(a, axis=dims, keepdims=keepdim)))

    @op.derivative_
    def _(g, a, dims, keepdim, *, out):
        if not keepdim:
            g, out = g.reshape(_keep_shape(a.shape, dims)), out.reshape(_keep_shape(a.shape, dims))
        mask = a == out
        return g * mask / mask.sum(dims, keepdim=True)
    op.meta_(lambda a, dims, keepdim: reduction_meta(a, dims, keepdim))
    return op


_amax, _amin = _amax_op("amax", np.max), _amax_op("amin", np.min)


@method()
def amax(input, dim=(), keepdim: bool = False, *, out=None):
    try:
        dims = wrap_dims(dim, _nd(input)) if dim != () else tuple(range(input._data.ndim))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for d in dims if dims and dim != () else (None,):  # (torch checks each reduced dim)
        _check_nonempty(input, "amax", d)
    return finish_out(dispatch(_amax, (input,), (dims if input._data.ndim else None, keepdim)), out)


@method()
def amin(input, dim=(), keepdim: bool = False, *, out=None):
    try:
        dims = wrap_dims(dim, _nd(input)) if dim != () else tuple(range(input._data.ndim))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for d in dims if dims and dim != () else (None,):  # (torch checks each reduced dim)
        _check_nonempty(input, "amin", d)
    return finish_out(dispatch(_amin, (input,), (dims if input._data.ndim else None, keepdim)), out)


def _arg(name, fn):
    def error(d, *args):
        return RuntimeError(f"{name}(): does not support {'complex' if d.is_complex else 'bool'} input")
    op = defop(name, None, REDUCTION, dtypes=INTEGRAL | FLOATING, error=error)(
        lambda a, dim, keepdim: np.asarray(fn(a, axis=dim, keepdims=keepdim)).astype(np.int64, copy=False))
    op.meta_(lambda a, dim, keepdim: reduction_meta(a, dim, keepdim, _dtypes.int64))

    def public_fn(input, dim=None, keepdim=False, *, out=None):
        try:
            if dim is None and input._data.size == 0:  # (torch's arg-reductions say it as an IndexError)
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        _check_nonempty(input, name, dim)
        if dim is None:
            r = dispatch(op, (input.reshape(-1),), (0, False))
            if keepdim:
                r = r.reshape((1,) * input._data.ndim)
            return finish_out(r, out)
        d = wrap_dims(dim, _nd(input))[0]
        if input._data.ndim == 0:
            if input.dtype.is_complex or input.dtype is _dtypes.bool:  # (the kernel's dtype check still comes first)
                raise error(input.dtype)
            return _zeros_like_long(input)
        return finish_out(dispatch(op, (input,), (d, keepdim)), out)
    public_fn.__name__ = name
    return method()(public_fn)


argmax = _arg("argmax", np.argmax)
argmin = _arg("argmin", np.argmin)
