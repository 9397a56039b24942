"""Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp; and diff.

NOTE [ Zero-safe cumprod gradient ]
d out_k / d a_i = prod_{j <= k, j != i} a_j. Dividing the output by a_i breaks at zeros, so when the
input holds a zero the gradient is built from the input with a_i replaced by 1, one copy per i (an n x n
problem, only ever on the slow path): sum_k>=i g_k * cumprod(a with a_i = 1)_k. Without zeros the
classic reverse-cumsum formula is used. Both are ember ops, so the result differentiates again.
"""

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import COMPLEX, FLOATING, REAL, REDUCTION, defop, dispatch
from .._meta import meta_array, no_data
from .._native import ops as _native
from ._util import finish_out, method, wrap_dim
from .reduction import _acc_dtype, _canonical


def _scan_dtype(a, dtype):
    acc, out = _acc_dtype(a, dtype)
    return out if acc.kind in "iub" or out.kind in "iub" else acc


def _scan_out(x, a, dtype):
    """A scan computed wide (float16 in float32) returned in its result dtype, as torch does."""
    out = _acc_dtype(a, dtype)[1]
    return x if x.dtype == out else x.astype(out)


# NOTE [ float32 scans accumulate in double ]
# torch's CPU cumsum/cumprod kernel accumulates in `acc_type<scalar_t, false>`, which is double for float
# (and complex<double> for complex<float>; float for float16/bfloat16), rounding each output once: a float32
# running sum in NumPy differs from it in most elements of a long row. So a scan whose result is float32 (or
# complex64) accumulates in float64 (complex128). Large C-contiguous float32 scans take the native kernel
# (ember/_native/scan.c), the same arithmetic in one pass without the float64 temporary.
_WIDER = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128)}
_F32 = np.dtype(np.float32)


def _scan(ufunc, a, dim, dtype):
    acc = _scan_dtype(a, dtype)
    wide = _WIDER.get(acc)
    if wide is not None and _acc_dtype(a, dtype)[1] == acc:  # (not float32 as float16's accumulator)
        if a.dtype == _F32:
            done = _native.scan(a, dim, ufunc is np.multiply)
            if done is not None:
                return done
        acc = wide
    # (the ufunc method, not np.cumsum: See NOTE [ Reductions call ufunc methods ] in reduction.py)
    return _scan_out(_canonical(ufunc.accumulate(a, axis=dim, dtype=acc)), a, dtype)


def _scan_meta(a, dim, dtype=None):
    """Scans keep their input's shape; the result is contiguous, in the reduction's result dtype."""
    return meta_array(a.shape, _acc_dtype(a._data, dtype)[1])


@defop("cumsum", "CumsumBackward0", REDUCTION, saves="meta")
def _cumsum(a, dim, dtype):
    if a.ndim == 0:
        return a.astype(_acc_dtype(a, dtype)[1])
    return _scan(np.add, a, dim, dtype)


@_cumsum.derivative_
def _(g, a, dim, dtype):
    if g.dim() == 0:
        return g
    return g.flip(dim).cumsum(dim).flip(dim)


_cumsum.meta_(_scan_meta)


def _scan_dim(input, dim):
    return wrap_dim(dim, input._data.ndim)


@method()
def cumsum(input, dim, *, dtype=None, out=None):
    return finish_out(dispatch(_cumsum, (input,), (_scan_dim(input, dim), dtype)), out)


@defop("cumprod", "CumprodBackward0", REDUCTION, save_output=True)
def _cumprod(a, dim, dtype):
    if a.ndim == 0:
        return a.astype(_acc_dtype(a, dtype)[1])
    return _scan(np.multiply, a, dim, dtype)


@_cumprod.derivative_
def _(g, a, dim, dtype, *, out):
    if a.dim() == 0 or a.numel() == 0:
        return g
    # the quotient form needs no zero in a; without data (a fake, under a tracer) that cannot be asked, and
    # the zero-safe form below is used, as torch's cumprod_backward does for tensor subclasses
    if not no_data(a) and not (a == 0).any():
        return (g * out).flip(dim).cumsum(dim).flip(dim) / a
    from .creation import eye

    n = a.shape[dim]
    x = a.movedim(dim, -1)
    eye_n = eye(n, dtype=_bool_dtype())
    rows = x.unsqueeze(-2).expand(x.shape[:-1] + (n, n)).masked_fill(eye_n, 1.0)  # row i: a with a_i = 1
    later = eye(n, dtype=a.dtype).cumsum(1)  # later[i, k] = 1 where k >= i
    gx = g.movedim(dim, -1).unsqueeze(-2)
    return (rows.cumprod(-1) * gx * later).sum(-1).movedim(-1, dim)


_cumprod.meta_(_scan_meta)


def _bool_dtype():
    from .. import _dtypes

    return _dtypes.bool


@method()
def cumprod(input, dim, *, dtype=None, out=None):
    return finish_out(dispatch(_cumprod, (input,), (_scan_dim(input, dim), dtype)), out)


def _cumext_op(name, ufunc):
    def kernel(a, dim):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        vals = ufunc.accumulate(a, axis=dim)
        shape = [1] * a.ndim
        shape[dim] = a.shape[dim]
        pos = np.arange(a.shape[dim]).reshape(shape)
        hit = a == vals
        if a.dtype.kind == "f":
            hit |= np.isnan(a)
        idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=dim)
        return _canonical(vals), _canonical(idx.astype(np.int64))
    op = defop(name, name.capitalize() + "Backward0", REDUCTION, saves="meta", save_output=True, dtypes=REAL,
               error=f"{name}_cpu")(kernel)

    @op.derivative_
    def _(grads, a, dim, *, out):
        from .indexing import scatter_into_zeros

        if a.dim() == 0:
            return grads[0]
        return scatter_into_zeros(grads[0], out[1], dim, a.shape)

    op.meta_(lambda a, dim: (meta_array(a.shape, a._data.dtype), meta_array(a.shape, _dtypes.int64)))
    return op


_cummax = _cumext_op("cummax", np.maximum)
_cummin = _cumext_op("cummin", np.minimum)


@method()
def cummax(input, dim, *, out=None):
    from .. import return_types

    return finish_out(return_types.cummax(*dispatch(_cummax, (input,), (_scan_dim(input, dim),))), out)


@method()
def cummin(input, dim, *, out=None):
    from .. import return_types

    return finish_out(return_types.cummin(*dispatch(_cummin, (input,), (_scan_dim(input, dim),))), out)


@defop("logcumsumexp", "LogcumsumexpBackward0", REDUCTION, "same", save_output=True,
       dtypes=FLOATING | COMPLEX, error="logcumsumexp_out_cpu")
def _logcumsumexp(a, dim):
    if a.ndim == 0:
        return a.copy()
    with np.errstate(all="ignore"):
        if a.dtype.kind == "c":  # log(cumsum(exp(a - top))) + top, top the largest real part of the slice
            top = np.max(a.real, axis=dim, keepdims=True)
            top = np.where(np.isfinite(top), top, 0)
            return _canonical(np.log(np.cumsum(np.exp(a - top), axis=dim)) + top)
        return _canonical(np.logaddexp.accumulate(a, axis=dim))


@_logcumsumexp.derivative_
def _(g, a, dim, *, out):
    # grad_i = sum_{k >= i} g_k exp(a_i - out_k), scaled by the last (largest) output to stay in range
    if a.dim() == 0:
        return g
    top = out.narrow(dim, out.shape[dim] - 1, 1) if out.numel() else out
    top = top.masked_fill(~top.isfinite(), 0.0)
    return (a - top).exp() * (g * (top - out).exp()).flip(dim).cumsum(dim).flip(dim)


@_logcumsumexp.meta_
def _(a, dim):
    floating = a.is_floating_point() or a.is_complex()
    return meta_array(a.shape, a.dtype if floating else _dtypes.get_default_dtype())


@method()
def logcumsumexp(input, dim, *, out=None):
    return finish_out(dispatch(_logcumsumexp, (input,), (_scan_dim(input, dim),)), out)


@method()
def diff(input, n: int = 1, dim=-1, prepend=None, append=None, *, out=None):
    try:
        if input._data.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        if n < 0:
            raise RuntimeError(f"order must be non-negative but got {n}")
        d = wrap_dim(dim, input._data.ndim)
        x = input
        if prepend is not None or append is not None:
            from .shape import cat

            x = cat([t for t in (prepend, input, append) if t is not None], d)
        for _ in range(n):
            size = x.shape[d]
            if size == 0:
                break
            x = x.narrow(d, 1, size - 1) - x.narrow(d, 0, size - 1) if x.dtype.name != "bool" else \
                x.narrow(d, 1, size - 1) ^ x.narrow(d, 0, size - 1)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(x, out) if out is not None else x

