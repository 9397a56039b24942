"""More reductions: prod, nansum, nanmean, std/var (and their _mean pairs), logsumexp, all/any,
count_nonzero, aminmax, median/nanmedian, mode, quantile/nanquantile.

`dim` is an int or a tuple (None: every dim) and `keepdim` keeps reduced dims as size 1, as in torch;
derivatives broadcast the gradient back with `_unreduce` (reduction.py).
"""

import math

import numpy as np

from .. import _dtypes, return_types
from .._argparse import call_error
from .._dispatch import FLOATING, INTEGRAL, REAL, REDUCTION, _modes, defop, dispatch, dtype_word
from .._meta import no_data, reduction_meta
from .._tensor import Tensor
from ._util import finish_out, method, per_sample, typed, wrap_dim, wrap_dims
from .reduction import (
    _acc_dtype,
    _sum_meta,
    _unreduce,
    _zeros_like_long,
    evenly_distribute,
    np_mean,
    values_indices_meta,
)
from .sorting import sortable


def _all_dims(input, dim):
    """Reduced dims as a tuple (every dim when `dim` is None or empty)."""
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(n))
    dims = wrap_dims(dim, n if n else 1)
    return dims if n else ()


def canonical(x):
    """A C-contiguous array with torch's strides (NumPy leaves odd strides on size-1 dims)."""
    x = np.asarray(x, order="C")
    return x.reshape(-1).reshape(x.shape) if x.ndim > 1 else x


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


# ---- prod ---------------------------------------------------------------------------------------------


@defop("prod", "ProdBackward1", REDUCTION, save_output=True)
def _prod(a, dims, keepdim, dtype):
    if dims and a.dtype.itemsize == 2 and a.dtype.kind not in "iu" \
            and (dtype is None or _dtypes.to_numpy(dtype) == a.dtype):  # NOTE [ prod of half types ]
        return _prod_half(a, dims, keepdim)
    acc, out = _acc_dtype(a, dtype)
    return canonical(np.multiply.reduce(a, axis=dims, keepdims=keepdim, dtype=acc)).astype(out, copy=False)


# NOTE [ prod of half types ]
# Unlike sum and mean, torch's CPU prod of float16/bfloat16 multiplies in the input's own dtype, each step
# rounded: [300, 300, 1/256] gives inf, and 6e-05 * 6e-05 underflows to 0. NumPy's half reduce keeps a float32
# accumulator inside its loop, so the product is `multiply.accumulate` (which rounds each step) along the
# reduced dims put last, in their order, read at its end. (torch's vectorized loop keeps 4 vectors of
# partial products once a contiguous reduced run reaches 4 vector widths, 64 float16 lanes on AVX2, a width
# that depends on the machine: there the last bits can differ, as they did with a float32 accumulator.)
def _prod_half(a, dims, keepdim):
    keep = [d for d in range(a.ndim) if d not in dims]
    kept = [a.shape[d] for d in keep]
    n = math.prod(a.shape[d] for d in dims)
    moved = np.transpose(a, keep + list(dims)).reshape(kept + [n])
    if n == 0:
        r = np.ones(kept, a.dtype)
    else:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            r = np.multiply.accumulate(moved, axis=-1)[..., -1].copy()
    if keepdim:
        r = r.reshape([1 if d in dims else a.shape[d] for d in range(a.ndim)])
    return canonical(np.asarray(r))


def _prod_others(a, dim):
    """For each element, the product of the others along `dim` (zero-safe: exclusive cumprods)."""
    from .creation import ones_like

    ones = ones_like(a.narrow(dim, 0, 1))
    n = a.shape[dim]
    left = ones if n == 1 else _cat([ones, a.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    rev = a.flip(dim)
    right = ones if n == 1 else _cat([ones, rev.narrow(dim, 0, n - 1)], dim).cumprod(dim).flip(dim)
    return left * right


def _cat(ts, dim):
    from .shape import cat

    return cat(ts, dim)


@_prod.derivative_
def _(g, a, dims, keepdim, dtype, *, out):
    g = _unreduce(g, a, dims, keepdim)
    if a.numel() == 0:
        return g
    if len(dims) == 1:
        return g * _prod_others(a, dims[0])
    flat = a.movedim(dims, tuple(range(a.dim() - len(dims), a.dim())))
    flat = flat.reshape(flat.shape[:a.dim() - len(dims)] + (-1,))
    others = _prod_others(flat, -1).reshape(a.movedim(dims, tuple(range(a.dim() - len(dims), a.dim()))).shape)
    return g * others.movedim(tuple(range(a.dim() - len(dims), a.dim())), dims)


_prod_all = defop("prod", "ProdBackward0", REDUCTION, save_output=True, overload="all")(_prod.kernel)
_prod_all.derivative_(_prod.derivative)
_prod.meta_(_sum_meta)
_prod_all.meta_(_sum_meta)


@method()
def prod(input, dim=None, keepdim: bool = False, *, dtype=None, out=None):
    try:
        if dim is not None and not isinstance(dim, int):
            raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    try:
        if dim is None:
            return finish_out(dispatch(_prod_all, (input,), (tuple(range(input._data.ndim)), False, dtype)), out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    d = wrap_dim(dim, input._data.ndim)
    return finish_out(dispatch(_prod, (input,), ((d,) if input._data.ndim else (), keepdim, dtype)), out)


# ---- nan-ignoring sums -----------------------------------------------------------------------------------


@defop("nansum", "NansumBackward0", REDUCTION, dtypes=REAL,
       error=lambda d, *args: RuntimeError("nansum on CPU does not support complex inputs"))
def _nansum(a, dims, keepdim, dtype):
    acc, out = _acc_dtype(a, dtype)
    if a.dtype.kind == "V":
        a = a.astype(acc)  # (NumPy keeps the NaNs of bfloat16 through isnan-free paths)
    if a.dtype.kind in "fc":  # (np.nansum's arithmetic, charged to this frame: NOTE [ Reductions call ufunc methods ])
        a = np.where(np.isnan(a), 0, a)
    return canonical(np.add.reduce(a, axis=dims, keepdims=keepdim, dtype=acc)).astype(out, copy=False)


@_nansum.derivative_
def _(g, a, dims, keepdim, dtype):
    return _unreduce(g, a, dims, keepdim).masked_fill(a.isnan(), 0.0)


_nansum.meta_(_sum_meta)


@method()
def nansum(input, dim=None, keepdim: bool = False, *, dtype=None, out=None):
    return finish_out(dispatch(_nansum, (input,), (_all_dims(input, dim), keepdim, dtype)), out)


@method()
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    try:
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                               f"{dtype_word(input.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    count = (~input.isnan()).sum(dim, keepdim) if dim is not None else (~input.isnan()).sum()
    if dim is None and keepdim:
        count = count.reshape((1,) * input._data.ndim)
    return finish_out(input.nansum(dim, keepdim, dtype=dtype) / count, out)


# ---- variance and standard deviation ---------------------------------------------------------------------


def _var_kernel(a, dims, correction, keepdim):
    # np.var's arithmetic written out: np.var warns "Degrees of freedom <= 0" from NumPy's own frame, where
    # ember's filter cannot hide it (NOTE [ Reductions call ufunc methods ] in reduction.py)
    half = a.dtype.itemsize == 2 and a.dtype.kind != "i"  # float16, bfloat16: computed in float32
    w = a.astype(np.float32) if half else a
    with np.errstate(all="ignore"):
        d = w - np_mean(w, axis=dims, keepdims=True)
        sq = (d * np.conjugate(d)).real if d.dtype.kind == "c" else d * d
        n = a.size if dims is None else int(np.prod([a.shape[i] for i in ((dims,) if isinstance(dims, int) else dims)]))
        r = np.true_divide(np.add.reduce(sq, axis=dims, keepdims=keepdim), max(n - correction, 0))
    return canonical(r.astype(a.dtype) if half else r)


@defop("var", "VarBackward0", REDUCTION)
def _var(a, dims, correction, keepdim):
    return _var_kernel(a, dims, correction, keepdim)


@_var.derivative_
def _(g, a, dims, correction, keepdim):
    n = _numel(a.shape, dims)
    scale = 2.0 / (n - correction) if n != correction else float("inf")
    return _unreduce(g, a, dims, keepdim) * (a - a.mean(dims, keepdim=True)) * scale


@defop("std", "StdBackward0", REDUCTION, save_output=True)
def _std(a, dims, correction, keepdim):
    return np.sqrt(_var_kernel(a, dims, correction, keepdim))


@_std.derivative_
def _(g, a, dims, correction, keepdim, *, out):
    n = _numel(a.shape, dims)
    g = _unreduce(g, a, dims, keepdim)
    o = _unreduce(out, a, dims, keepdim)
    return (g * (a - a.mean(dims, keepdim=True)) / (o * (n - correction))).masked_fill(o == 0, 0.0)


def _var_meta(a, dims, correction, keepdim, with_mean=False):
    """var and std are real for complex inputs; var_mean and std_mean add the mean, in the input's dtype."""
    real = a.dtype.to_real() if a.dtype.is_complex else None
    return reduction_meta(a, dims, keepdim, real, *((None,) if with_mean else ()))


_var.meta_(_var_meta)
_std.meta_(_var_meta)


def _var_args(name, input, dim, unbiased, keepdim, correction):
    """Resolve torch's overloads: (dim, unbiased, keepdim), (unbiased), (dim, *, correction, keepdim)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: Cannot pass both unbiased and correction")
    corr = correction if correction is not None else (1 if unbiased is None or unbiased else 0)
    try:
        d = input.dtype
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not (d.is_floating_point or d.is_complex):
        who = name if name.endswith("_mean") else "std and var"
        raise RuntimeError(f"{who} only support floating point and complex dtypes")
    dims = _all_dims(input, dim)
    if _numel(input._data.shape, dims) - corr <= 0:
        import warnings

        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, float(corr), keepdim


@method()
def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None, out=None):
    dims, corr, keepdim = _var_args("var", input, dim, unbiased, keepdim, correction)
    return finish_out(dispatch(_var, (input,), (dims, corr, keepdim)), out)


@method()
def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None, out=None):
    dims, corr, keepdim = _var_args("std", input, dim, unbiased, keepdim, correction)
    return finish_out(dispatch(_std, (input,), (dims, corr, keepdim)), out)


def _pair_op(name, node, kernel, first_grad):
    op = defop(name, node, REDUCTION, save_output=True)(
        lambda a, dims, corr, keepdim: (kernel(a, dims, corr, keepdim),
                                        canonical(np_mean(a, axis=dims, keepdims=keepdim))))

    @op.derivative_
    def _(grads, a, dims, corr, keepdim, *, out):
        g0, g1 = grads
        total = first_grad(g0, a, dims, corr, keepdim, out[0])
        n = _numel(a.shape, dims)
        return total + _unreduce(g1, a, dims, keepdim) / n
    op.meta_(lambda a, dims, corr, keepdim: _var_meta(a, dims, corr, keepdim, with_mean=True))
    return op


_var_mean = _pair_op("var_mean", "VarMeanBackward0", _var_kernel,
                     lambda g, a, dims, corr, keepdim, o: _var.derivative(g, a, dims, corr, keepdim))
_std_mean = _pair_op("std_mean", "StdMeanBackward0", lambda *a: np.sqrt(_var_kernel(*a)),
                     lambda g, a, dims, corr, keepdim, o: _std.derivative(g, a, dims, corr, keepdim, out=o))


@typed
def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    args = _var_args("var_mean", input, dim, unbiased, keepdim, correction)
    return tuple(dispatch(_var_mean, (input,), args))  # (a plain tuple, as torch's)


@typed
def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    args = _var_args("std_mean", input, dim, unbiased, keepdim, correction)
    return tuple(dispatch(_std_mean, (input,), args))


method(top=True)(var_mean)
method(top=True)(std_mean)
del Tensor.var_mean, Tensor.std_mean  # torch has them as functions only

# ---- logsumexp ---------------------------------------------------------------------------------------


@defop("logsumexp", "LogsumexpBackward0", REDUCTION, "float", save_output=True)
def _logsumexp(a, dims, keepdim):
    if a.size == 0:
        return np.log(np.sum(np.exp(a), axis=dims, keepdims=keepdim))
    m = np.max(a, axis=dims, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        r = np.log(np.sum(np.exp(a - m), axis=dims, keepdims=True)) + m
    return canonical(r if keepdim else np.squeeze(r, axis=dims))


@_logsumexp.derivative_
def _(g, a, dims, keepdim, *, out):
    return _unreduce(g, a, dims, keepdim) * (a - _unreduce(out, a, dims, keepdim)).exp()


_logsumexp.meta_(reduction_meta)


@method()
def logsumexp(input, dim=None, keepdim: bool = False, *, out=None):
    if dim is None:
        raise TypeError('logsumexp() missing 1 required positional arguments: "dim"')
    if input._data.dtype.kind in "biu":
        input = input.to(_dtypes.get_default_dtype())
    return finish_out(dispatch(_logsumexp, (input,), (_all_dims(input, dim), keepdim)), out)


# ---- boolean reductions and counting -----------------------------------------------------------------


def _bool_reduce(name, fn):
    op = defop(name, None, REDUCTION)(
        lambda a, dims, keepdim: canonical(fn(a, axis=dims, keepdims=keepdim)).astype(
            np.uint8 if a.dtype == np.uint8 else np.bool_))
    op.meta_(lambda a, dims, keepdim: reduction_meta(
        a, dims, keepdim, _dtypes.uint8 if a.dtype is _dtypes.uint8 else _dtypes.bool))

    def public_fn(input, dim=None, keepdim=False, *, out=None):
        dims = _all_dims(input, dim)
        r = dispatch(op, (input,), (dims, keepdim))
        if dim is None and keepdim is False:
            r = r.reshape(())
        return finish_out(r, out)
    public_fn.__name__ = name
    return method()(public_fn)


all = _bool_reduce("all", np.all)  # noqa: A001 - torch's names
any = _bool_reduce("any", np.any)  # noqa: A001


@defop("count_nonzero", None, REDUCTION)  # not differentiable
def _count_nonzero(a, dims):
    return np.asarray(np.count_nonzero(a, axis=dims)).astype(np.int64)


_count_nonzero.meta_(lambda a, dims: reduction_meta(a, dims, False, _dtypes.int64))


@method()
def count_nonzero(input, *dims, dim=None):
    if dims:  # (Tensor.count_nonzero(0, 1))
        dim = dims[0] if len(dims) == 1 else dims
    return dispatch(_count_nonzero, (input,), (_all_dims(input, dim),))


@defop("aminmax", "AminmaxBackward0", REDUCTION, save_output=True, dtypes=REAL, error="aminmax_cpu")
def _aminmax(a, dims, keepdim):
    return canonical(np.min(a, axis=dims, keepdims=keepdim)), canonical(np.max(a, axis=dims, keepdims=keepdim))


@_aminmax.derivative_
def _(grads, a, dims, keepdim, *, out):
    total = None
    for g, o in zip(grads, out):
        if g is None:
            continue
        mask = a == _unreduce(o, a, dims, keepdim)
        part = _unreduce(g, a, dims, keepdim) * mask / mask.sum(dims, keepdim=True)
        total = part if total is None else total + part
    return total


_aminmax.meta_(lambda a, dims, keepdim: reduction_meta(a, dims, keepdim, None, None))


@method()
def aminmax(input, *, dim=None, keepdim: bool = False, out=None):
    try:
        if input._data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    dims = _all_dims(input, dim)
    r = dispatch(_aminmax, (input,), (dims, keepdim))
    if dim is None and keepdim:
        r = tuple(x.reshape((1,) * input._data.ndim) for x in r)
    return finish_out(return_types.aminmax(*r), out)


# ---- order statistics: median, nanmedian, mode, quantile ---------------------------------------------------


def _median_index(a, dim, ignore_nan):
    """Index along `dim` of torch's (lower) median of each slice; NaN slices give the first NaN."""
    a = sortable(a)
    order = np.argsort(a, axis=dim, kind="stable")  # NaNs sort last
    nan = np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, np.bool_)
    count = a.shape[dim] - nan.sum(axis=dim, keepdims=True)
    if ignore_nan:
        k = np.maximum(count - 1, 0) // 2
    else:
        k = np.where(count < a.shape[dim], count, (a.shape[dim] - 1) // 2)
    return np.take_along_axis(order, k, axis=dim)


def _median_dim_op(name, node, ignore_nan):
    def kernel(a, dim, keepdim):
        idx = _median_index(a, dim, ignore_nan)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            idx, vals = idx.squeeze(dim), vals.squeeze(dim)
        return canonical(vals), canonical(idx.astype(np.int64))
    op = defop(name, node, REDUCTION, saves="meta", save_output=True, dtypes=INTEGRAL | FLOATING,
               error="median_out", overload="dim")(kernel)
    op.derivative_(_to_indices)
    op.meta_(values_indices_meta)
    return op


def _to_indices(grads, a, dim, keepdim, *, out):
    """The derivative of a (values, indices) reduction along `dim`: the value grads go to the indices."""
    from .indexing import scatter_into_zeros

    g, idx = grads[0], out[1]
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return scatter_into_zeros(g, idx, dim, a.shape)


def _median_all_op(name, node, ignore_nan):
    op = defop(name, node, REDUCTION, save_output=True, dtypes=INTEGRAL | FLOATING, error="median_cpu")(
        lambda a: np.take_along_axis(a.reshape(-1), _median_index(a.reshape(-1), 0, ignore_nan), 0).reshape(()))
    op.derivative_(evenly_distribute)
    op.meta_(lambda a: reduction_meta(a, None, False))
    return op


def _median_fn(name, ignore_nan, rtype):
    all_op = _median_all_op(name, name.capitalize() + "Backward0", ignore_nan)
    dim_op = _median_dim_op(name, name.capitalize() + "Backward1", ignore_nan)

    def fn(input, dim=None, keepdim: bool = False, *, out=None):
        try:
            if dim is None:
                if input._data.size == 0:
                    return finish_out(input.new_full((), float("nan")), out)
                return finish_out(dispatch(all_op, (input,)), out)
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        d = wrap_dim(dim, input._data.ndim)
        if input._data.ndim == 0:
            return finish_out(rtype(input.clone(), _zeros_like_long(input)), out)
        try:
            if input._data.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        return finish_out(rtype(*dispatch(dim_op, (input,), (d, keepdim))), out)
    fn.__name__ = name
    return method()(fn)


median = _median_fn("median", False, return_types.median)
nanmedian = _median_fn("nanmedian", True, return_types.nanmedian)


@defop("mode", "ModeBackward0", REDUCTION, saves="meta", save_output=True, dtypes=REAL, error="mode_cpu")
def _mode(a, dim, keepdim):
    b = np.moveaxis(a, dim, -1)
    shape = b.shape
    b = b.reshape(-1, shape[-1])
    s = np.sort(b, axis=1)
    n = s.shape[1]
    pos = np.arange(n)
    start = np.ones(s.shape, np.bool_)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    first = np.maximum.accumulate(np.where(start, pos, 0), axis=1)
    run = pos - first + 1  # the length of the run of equal values ending here
    best = np.argmax(run == run.max(axis=1, keepdims=True), axis=1)  # the smallest most frequent value
    vals = s[np.arange(s.shape[0]), best]
    # the index is the last of the mode's run in std::sort's order (See NOTE [ torch's mode ])
    from .sorting import _argsort

    perm = _argsort(b, 1, False, stable=False)
    hit = np.take_along_axis(b, perm, axis=1) == vals[:, None]
    idx = perm[np.arange(b.shape[0]), n - 1 - np.argmax(hit[:, ::-1], axis=1)] if n else best
    if b.dtype.kind in "fV":
        vals, idx = vals.copy(), idx.copy()
        for r in np.flatnonzero(np.isnan(b.astype(np.float32)).any(axis=1)).tolist():
            vals[r], idx[r] = _mode_nan_row(b[r])
    vals, idx = vals.reshape(shape[:-1]), idx.reshape(shape[:-1]).astype(np.int64)
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


# NOTE [ torch's mode ]
# torch's CPU mode sorts (value, index) pairs with std::sort comparing values with `<`, then scans for the
# longest run of equal values (`!=` ends a run; the first longest wins) and returns the index of the run's
# last pair. Without NaNs that order is torch's unstable sort's (See NOTE [ torch's unstable sort order ]).
# With NaNs `<` is no strict weak order and std::sort leaves NaNs where its steps happen to put them
# (each NaN its own run), so such rows replay std::sort on the values themselves in Python.


def _mode_nan_row(row):
    from ._stdsort import std_sort_py

    k, p = std_sort_py(row.tolist())
    best, best_i, run = 0, 0, 0
    for i in range(len(k)):
        run += 1
        if i == len(k) - 1 or k[i] != k[i + 1]:
            if run > best:
                best, best_i = run, i
            run = 0
    return k[best_i], p[best_i]


_mode.derivative_(_to_indices)
_mode.meta_(values_indices_meta)


@method()
def mode(input, dim=-1, keepdim: bool = False, *, out=None):
    try:
        if input._data.ndim == 0:
            return finish_out(return_types.mode(input.clone(), _zeros_like_long(input)), out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    d = wrap_dim(dim, input._data.ndim)
    if input._data.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    return finish_out(return_types.mode(*dispatch(_mode, (input,), (d, keepdim))), out)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    from .creation import tensor

    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    qt = tensor(q, dtype=input.dtype, device=input.device) if scalar_q else q
    if qt._data.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if input.dtype not in (_dtypes.float32, _dtypes.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if qt.dtype is not input.dtype:
        raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
    if scalar_q and not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if not (scalar_q or no_data(qt)) and ((qt < 0) | (qt > 1)).any():  # (a meta q has no values to check)
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, input._data.ndim)
    if x._data.ndim == 0:
        x = x.reshape(1)
    s = x.sort(d).values
    n = s.shape[d]
    nan = s.isnan()
    valid = (n - nan.sum(d, keepdim=True)) if ignore_nan else (~nan.any(d, keepdim=True)).long() * n
    qv = qt.reshape(-1)
    rank = qv.reshape((-1,) + (1,) * s.dim()) * (valid - 1).clamp(min=0).to(s.dtype)
    if interpolation == "lower":
        rank = rank.floor()
    elif interpolation == "higher":
        rank = rank.ceil()
    elif interpolation == "nearest":
        rank = rank.round()
    lo = rank.floor().to(_dtypes.int64).clamp(0, max(n - 1, 0))
    hi = rank.ceil().to(_dtypes.int64).clamp(0, max(n - 1, 0))
    sx = s.unsqueeze(0).expand((qv.shape[0],) + tuple(s.shape))
    a, b = sx.gather(d + 1, lo), sx.gather(d + 1, hi)
    w = rank - rank.floor()
    r = a.lerp(b, 0.5) if interpolation == "midpoint" else a + (b - a) * w
    empty = valid == 0
    if no_data(empty) or empty.any():
        r = r.masked_fill(empty, float("nan"))
    if keepdim:
        if dim is None:
            r = r.reshape((qv.shape[0],) + (1,) * input._data.ndim)
    else:
        r = r.squeeze(d + 1)
    if scalar_q or qt._data.ndim == 0:
        return r.squeeze(0)
    t = r.movedim(0, -1)  # torch's layout: q is the innermost dim, the others dense outside it (with
    out = t.new_empty(t.shape)  # size-1 dims: `contiguous()` would keep t's strides for them)
    return out.copy_(t).movedim(-1, 0)


@method()
def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation="linear", out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("quantile", quantile, input, q, dim, keepdim, interpolation=interpolation,
                                 out=out)
        r = per_sample(_quantile, (input, q, dim, keepdim, interpolation, False, "quantile"))
        if r is not NotImplemented:  # (NOTE [ Composites that read data under vmap ] in _util.py)
            return finish_out(r, out)
    return finish_out(_quantile(input, q, dim, keepdim, interpolation, False, "quantile"), out)


@method()
def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation="linear", out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("nanquantile", nanquantile, input, q, dim, keepdim,
                                 interpolation=interpolation, out=out)
        r = per_sample(_quantile, (input, q, dim, keepdim, interpolation, True, "nanquantile"))
        if r is not NotImplemented:  # (NOTE [ Composites that read data under vmap ] in _util.py)
            return finish_out(r, out)
    return finish_out(_quantile(input, q, dim, keepdim, interpolation, True, "nanquantile"), out)

