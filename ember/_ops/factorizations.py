"""Matrix functions and decompositions behind `ember.linalg`: inv, det, slogdet, solve, lstsq, cholesky,
qr, svd / svdvals, eigh / eigvalsh, pinv, matrix_rank, matrix_power.

Kernels are NumPy's LAPACK wrappers (batched over leading dims); derivatives follow NOTE [ Decomposition
gradients ] in linalg_ext.py and are written in ember ops.
"""

import numpy as np

from .. import _dtypes, return_types
from .._argparse import call_error
from .._dispatch import MATMUL, _modes, defop, dispatch, dtype_word, not_implemented
from .._grad_state import state as _grad_state
from .._meta import broadcast_error, broadcast_shapes, lapack_strides, meta_array, no_data, no_meta_kernel, real_dtype
from .._tensor import Tensor, _wrap
from ._util import finish_out, method, per_sample, public, typed
from .lapack import getrf, getrs, has_nan, potrf, raise_for_info

# ---- accepted dtypes -----------------------------------------------------------------------------------
# LAPACK takes float32, float64, complex64 and complex128. What torch raises for the others differs per
# function: for float16 / bfloat16 (first) and for integers and bool (second), declared here once.


def _not_float(name):
    return lambda d, A: RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                                     f"{dtype_word(d)}")


def _low_precision(name):
    return lambda d, A: RuntimeError(f"{name}: Low precision dtypes not supported. Got {dtype_word(d)}")


def _kernel(name):
    return lambda d, A: not_implemented(name, d)


def _pinv_error(d, A):
    return RuntimeError(f"linalg.pinv({dtype_word(d)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                        "dimensions of float, double, cfloat or cdouble types")


def _gels_error(d, A):
    return RuntimeError("This function doesn't handle types other than float and double")


_LINALG_DTYPES = frozenset({"float32", "float64", "complex64", "complex128"})
_LINALG_ERRORS = {  # name: (float16 / bfloat16 error, integer / bool error)
    "inv": (_low_precision("linalg.inv"), _not_float("linalg.inv")),
    "slogdet": (_low_precision("linalg.slogdet"), _not_float("linalg.slogdet")),
    "logdet": (_low_precision("logdet"), _not_float("logdet")),
    "matrix_norm": (_low_precision("linalg.matrix_norm"), _not_float("linalg.matrix_norm")),
    "det": (_kernel("lu_cpu"), _not_float("linalg.det")),
    "solve": (_kernel("lu_cpu"), _not_float("linalg.solve")),
    "cholesky": (_kernel("cholesky_cpu"), _not_float("linalg.cholesky")),
    "eigh": (_kernel("linalg_eigh_cpu"), _kernel("linalg_eigh_cpu")),
    "eigvalsh": (_kernel("linalg_eigh_cpu"), _kernel("linalg_eigh_cpu")),
    "svd": (_kernel("linalg_svd_cpu"), _not_float("linalg.svd")),
    "qr": (_kernel("geqrf_cpu"), _not_float("linalg.qr")),
    "pinv": (_pinv_error, _pinv_error),
    "lstsq": (_gels_error, _gels_error),
    "matrix_rank": (_gels_error, _gels_error),
}


def require_linalg_dtype(name, A, low_ok=False):
    """Raise torch's error for `name` unless LAPACK takes A's dtype (or, with `low_ok`, it is a
    float16 / bfloat16 that the function computes without LAPACK)."""
    try:
        d = A.dtype
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if d.name not in _LINALG_DTYPES and not (low_ok and d.name in ("float16", "bfloat16")):
        low, other = _LINALG_ERRORS[name]
        raise (low if d.name in ("float16", "bfloat16") else other)(d, A)


def _check_square(name, A):
    try:
        if A.dim() < 2:
            raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    require_linalg_dtype(name, A)


def _eye_like(A):
    from .creation import eye

    return eye(A.shape[-1], dtype=A.dtype, device=A.device)


def _sym(X):
    return (X + X.mT) * 0.5


def _colmajor(x):
    """LAPACK results as torch lays them out: each matrix column-major (strides (..., 1, rows))."""
    if x.ndim < 2:
        return np.ascontiguousarray(x)
    t = np.swapaxes(x, -1, -2)
    out = np.empty(t.shape, x.dtype)  # (a fresh array: torch's strides for size-1 dims too)
    out[...] = t
    return np.swapaxes(out, -1, -2)


# ---- inv, det, slogdet, solve -------------------------------------------------------------------------


_SINGULAR_INV = ("The diagonal element {} is zero, the inversion could not be completed because the input "
                 "matrix is singular.")


def _lapack_meta(shape, dtype):
    """A LAPACK result on meta: torch's layout for it (column-major matrices, see `lapack_strides`)."""
    return meta_array(shape, dtype, lapack_strides(shape))


def _info_meta(batch):
    return meta_array(tuple(batch), _dtypes.int32)


@defop("linalg_inv_ex", "LinalgInvExBackward0", MATMUL, saves="none", save_output=True)
def _inv_ex(a, check):  # check: None, or the name an error names
    # NumPy's LAPACK first; getrf's info and LAPACK's partial results only when a matrix is singular
    # (NOTE [ LAPACK errors ] in lapack.py)
    if np.isfinite(a).all():  # (LAPACK's infinities and NaNs come from the reference path)
        try:
            return _colmajor(np.linalg.inv(a)), np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:
            pass
    lu, piv, info = getrf(a)
    if check:
        raise_for_info(info, a.ndim > 2, check, _SINGULAR_INV.format)
    return _colmajor(getrs(lu, piv, np.eye(a.shape[-1], dtype=a.dtype))), info


_inv_ex.meta_(lambda a, check: (_lapack_meta(tuple(a.shape), a._data.dtype), _info_meta(a.shape[:-2])))


@_inv_ex.derivative_
def _(grads, a, check, *, out):
    return -(out[0].mT @ grads[0] @ out[0].mT)


def inv_ex(A, *, check_errors=False, out=None):
    """The inverse and LAPACK's info code per matrix (0, or the first zero pivot of A's LU factors)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_inv_ex", inv_ex, A, check_errors=check_errors, out=out)
    _check_square("inv", A)
    return finish_out(
        return_types.linalg_inv_ex(*dispatch(_inv_ex, (A,), ("linalg.inv_ex" if check_errors else None,))), out)


def inv(A, *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_inv", inv, A, out=out)
    from ._util import finish_out

    _check_square("inv", A)
    return finish_out(dispatch(_inv_ex, (A,), ("linalg.inv",))[0], out)


@defop("linalg_det", "LinalgDetBackward0", MATMUL, save_output=True)
def _det(a):
    if not np.isfinite(a).all():  # LAPACK's pivots decide where a NaN or an infinity goes
        diag, perm_sign = _lu_diagonal(a)
        with np.errstate(all="ignore"):
            return np.asarray(np.prod(diag, -1) * perm_sign)
    with np.errstate(all="ignore"):  # (np.linalg is NumPy Python: its warnings escape ember's filter)
        return np.asarray(np.linalg.det(a))


_det.meta_(lambda a: meta_array(tuple(a.shape)[:-2], a._data.dtype))


def _lu_diagonal(a):
    """U's diagonal and the permutation's sign (+1 / -1) of getrf's factors, as torch's det uses them."""
    lu, piv, _ = getrf(a)
    swaps = (piv != np.arange(1, piv.shape[-1] + 1, dtype=np.int32)).sum(-1)
    return np.diagonal(lu, 0, -2, -1), np.where(swaps % 2, -1, 1).astype(a.dtype)


@_det.derivative_
def _(g, a, *, out):
    # g det(A) A^-T (defined for invertible A)
    return (g * out).unsqueeze(-1).unsqueeze(-1) * inv(a).mT


def det(A, *, out=None):
    from ._util import finish_out

    _check_square("det", A)
    return finish_out(dispatch(_det, (A,)), out)


@defop("linalg_slogdet", "LinalgSlogdetBackward0", MATMUL)
def _slogdet(a):
    with np.errstate(all="ignore"):
        if not np.isfinite(a).all():
            diag, perm_sign = _lu_diagonal(a)
            unit = np.sign(diag) if diag.dtype.kind == "f" else diag / np.where(diag == 0, 1, np.abs(diag))
            unit = np.where(np.isnan(diag), 0, unit)  # (torch's sgn: 0 for NaN, 1 for inf)
            logabs = np.sum(np.log(np.abs(diag)), -1)
            return np.asarray(np.prod(unit, -1) * perm_sign), np.asarray(logabs.real)
        sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabs)


_slogdet.meta_(lambda a: (meta_array(tuple(a.shape)[:-2], a._data.dtype),
                          meta_array(tuple(a.shape)[:-2], real_dtype(a._data.dtype))))


@_slogdet.derivative_
def _(grads, a):
    g = grads[1]
    return g.unsqueeze(-1).unsqueeze(-1) * inv(a).mT


def slogdet(A, *, out=None):
    _check_square("slogdet", A)
    return finish_out(return_types.linalg_slogdet(*dispatch(_slogdet, (A,))), out)


@defop("linalg_solve_ex", "LinalgSolveExBackward0", MATMUL, "same", save_output=True)
def _solve_ex(a, b, vector, check):
    bm = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    x = None
    if np.isfinite(a).all() and np.isfinite(bm).all():
        try:
            x, info = np.linalg.solve(a, bm), np.zeros(batch, np.int32)
        except np.linalg.LinAlgError:
            pass
    if x is None:
        lu, piv, info = getrf(np.broadcast_to(a, batch + a.shape[-2:]))
        if check:
            raise_for_info(info, len(batch) > 0, check,
                           lambda k: "The solver failed because the input matrix is singular.")
        x = getrs(lu, piv, bm)
    return (x[..., 0] if vector else _colmajor(x)), info


@_solve_ex.meta_
def _(a, b, vector, check):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if vector:
        batch = broadcast_shapes(sa[:-2], sb[:-1])
        shape = batch + sb[-1:]
    else:
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        shape = batch + sb[-2:]
    return _lapack_meta(shape, _dtypes.result_dtype([a, b])), _info_meta(batch)


@_solve_ex.derivative_
def _(grads, a, b, vector, check, *, out):
    g, x = grads[0], out[0]
    gb = solve(a.mT, g)
    if vector:
        return -(gb.unsqueeze(-1) * x.unsqueeze(-2)), gb
    return -(gb @ x.mT), gb


def _solve_args(A, B, left):
    try:
        if A.dtype is not B.dtype and (A.is_floating_point() or A.is_complex()):
            raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                               f"{dtype_word(A.dtype)} and B of type {dtype_word(B.dtype)} instead")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    _check_square("solve", A)
    if not left:
        A, B = A.mT, B.mT
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    rows = B.shape[-1] if vector else B.shape[-2]
    if rows != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({_s(A.shape)} and {_s(tuple(B.shape) + ((1,) if vector else ()))})")
    return A, B, vector


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """The solution of AX = B and LAPACK's info code per matrix (0, or A's first zero pivot)."""
    A2, B2, vector = _solve_args(A, B, left)
    check = "ember.linalg.solve_ex" if check_errors else None
    x, info = dispatch(_solve_ex, (A2, B2), (vector, check))
    return finish_out(return_types.linalg_solve_ex(x if left else x.mT, info), out)


def solve(A, B, *, left=True, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_solve", solve, A, B, left=left, out=out)
    from ._util import finish_out

    A2, B2, vector = _solve_args(A, B, left)
    x = dispatch(_solve_ex, (A2, B2), (vector, "ember.linalg.solve"))[0]
    return finish_out(x if left else x.mT, out)


def _s(shape):
    return "x".join(map(str, shape))


# ---- lstsq, cholesky, qr ----------------------------------------------------------------------------------


def lstsq(A, B, rcond=None, *, driver=None):
    # the min-norm least-squares solution is pinv(A) @ B, which differentiates through pinv
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_lstsq", lstsq, A, B, rcond, driver=driver)
        r = per_sample(lstsq, (A, B, rcond), {"driver": driver})
        if r is not NotImplemented:  # (NOTE [ Composites that read data under vmap ] in _util.py)
            return r
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    try:
        if B.dim() < 1:
            raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if A.dtype is not B.dtype:
        raise RuntimeError("torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {dtype_word(A.dtype)} and other's dtype {dtype_word(B.dtype)}")
    if not 0 <= A.dim() - B.dim() <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vec = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vec else B
    if A.shape[-2] != Bm.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    require_linalg_dtype("lstsq", A)
    drv = "gelsy" if driver is None else driver  # torch's default on the CPU
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not (no_data(A) or no_data(Bm)):  # (meta tensors have no values to fail on)
        _lstsq_errors(A._data, Bm._data, drv)
    X = dispatch(_lstsq, (A, Bm), (rcond,))
    rank, sv, residuals = _lstsq_extras(A._data, Bm._data, X._data, rcond, drv)
    if (_grad_state.enabled and (A._requires_grad or Bm._requires_grad) or (  # NOTE [ lstsq's residuals ]
            A._fw_grad is not None or Bm._fw_grad is not None)) and not (drv == "gels" and A.shape[-1] == 0):
        residuals = dispatch(_lstsq_residuals, (A, Bm, X), (residuals.numel() > 0,))
    return return_types.linalg_lstsq(X.squeeze(-1) if vec else X, residuals, rank, sv)


# NOTE [ lstsq's residuals ]
# torch differentiates lstsq's residuals too (the same LinalgLstsqBackward0 node as the solution's, even when
# they are empty). Where they are not (m > n, full rank, not gelsy), the solution X minimizes |A X - B|^2, so
# (with R = A X - B) their gradients are 2 (R * w) X^H for A and -2 R * w for B, w a residual's gradient
# (torch's numbers; the path through X adds nothing at the minimum). Computed apart from the solution, only
# where grad mode is on and A or B requires grad, or carries a tangent: other calls keep them as values.
@defop("linalg_lstsq_residuals", "LinalgLstsqBackward0", MATMUL)
def _lstsq_residuals(a, b, x, nonempty):
    real = np.finfo(a.dtype).dtype
    if not nonempty:
        return np.empty((0,), real)
    with np.errstate(all="ignore"):
        return np.asarray((np.abs(a @ x - b) ** 2).sum(-2)).astype(real)


@_lstsq_residuals.derivative_
def _(g, a, b, x, nonempty):
    if not nonempty:
        return None, None, None
    w = g.unsqueeze(-2).to(x.dtype)
    r = (a @ x - b) * w
    return 2 * r @ x.mH, -2 * r, None


_LSTSQ_ASSERT = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                 'BatchLinearAlgebra.cpp":1613, please report a bug to PyTorch. ')


def _lstsq_errors(a, b, driver):
    """torch's failures of lstsq on its CPU build (NOTE [ LAPACK errors ]): MKL rejects a NaN in A or B
    (and gelsd an infinity in A) as an illegal argument, which torch reports as a failed internal assert
    naming the argument; gels (QR) fails on a matrix without full rank with the first zero on R's diagonal."""
    a_arg, b_arg = (5, 7) if driver == "gels" else (4, 6)
    bad_a = has_nan(a) | (~np.isfinite(a).all(axis=(-2, -1)) if driver == "gelsd" else False)
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:  # (torch's words for batch dims that do not broadcast)
        raise broadcast_error([a.shape[:-2], b.shape[:-2]]) from None
    bad_b = np.broadcast_to(has_nan(b), batch)
    code = np.where(np.broadcast_to(bad_a, batch), a_arg, np.where(bad_b, b_arg, 0))
    raise_for_info(code, len(batch) > 0, "ember.linalg.lstsq", lambda k: f"Argument {k} has illegal value. "
                   "Most certainly there is a bug in the implementation calling the backend library.",
                   error=lambda text: RuntimeError(_LSTSQ_ASSERT + text))
    if driver == "gels":
        m, n = a.shape[-2:]
        with np.errstate(all="ignore"):
            r = np.linalg.qr(a if m >= n else np.swapaxes(a, -1, -2).conj(), mode="r")
        d = np.diagonal(r, 0, -2, -1)
        if not d.shape[-1]:  # (an empty matrix has full rank)
            return
        zero = d == 0
        info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0)
        raise_for_info(info, a.ndim > 2, "ember.linalg.lstsq", lambda k: "The least squares solution could "
                       f"not be computed because the input matrix does not have full rank (error code: {k}).")


def _lstsq_extras(a, b, x, rcond, driver):
    """What LAPACK's drivers report besides the solution, as torch returns them: the rank (all but gels),
    the singular values (gelsd, gelss) and, when m > n and A has full rank, the squared residual norms
    (all but gelsy)."""
    m, n = a.shape[-2:]
    real = np.finfo(a.dtype).dtype  # residuals and singular values are real for complex A too
    empty = _wrap(np.empty((0,), real))
    rank = _wrap(np.empty((0,), np.int64))
    full = True
    if driver != "gels":
        s = svd_arrays(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), compute_uv=False)
        tol = (np.finfo(a.dtype).eps * max(m, n) if rcond is None else rcond) * s[..., :1]
        r = (s > tol).sum(-1).astype(np.int64)
        rank = _wrap(np.asarray(r))
        full = bool(np.all(r == min(m, n)))
    sv = _wrap(svd_arrays(a, compute_uv=False)) if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if driver != "gelsy" and m > n and full:
        with np.errstate(all="ignore"):
            residuals = _wrap(np.asarray((np.abs(a @ x - b) ** 2).sum(-2)).astype(real))
        if driver == "gels" and n == 0:  # (LAPACK's gels returns at once for no columns: zeros)
            residuals = _wrap(np.zeros(residuals.shape, real))
    return rank, sv, residuals


@defop("linalg_lstsq", "LinalgLstsqBackward0", MATMUL, "same")
def _lstsq(a, b, rcond):
    with np.errstate(all="ignore"):
        x = pinv_array(a, 0.0, 1e-15 if rcond is None else rcond, False) @ b
    # torch's solution is the top of LAPACK's column-major max(m, n)-row right-hand side
    m, n = a.shape[-2:]
    buf = _colmajor(np.zeros(x.shape[:-2] + (max(m, n), x.shape[-1]), x.dtype))
    buf[..., :n, :] = x
    return buf[..., :n, :]


@_lstsq.meta_
def _(a, b, rcond):  # torch has no meta kernel for lstsq (its rank and residuals depend on the data)
    raise no_meta_kernel("linalg_lstsq.out")


@_lstsq.derivative_
def _(g, a, b, rcond):
    p = pinv(a)
    return _pinv_grad(g @ b.mT, a, p), p.mT @ g


def _pinv_grad(gp, a, p):
    """The gradient of A for pinv(A) = P given dL/dP (Golub & Pereyra)."""
    m, n = a.shape[-2], a.shape[-1]
    eye_m, eye_n = _eye(m, a.dtype), _eye(n, a.dtype)
    pt = p.mT
    return (-(pt @ gp @ pt) + (eye_m - a @ p) @ gp.mT @ p @ pt + pt @ p @ gp.mT @ (eye_n - p @ a))


def _eye(n, dtype):
    from .creation import eye

    return eye(n, dtype=dtype)


_NOT_PD = ("The factorization could not be completed because the input is not positive-definite (the leading "
           "minor of order {} is not positive-definite).")


@defop("linalg_cholesky_ex", "LinalgCholeskyExBackward0", MATMUL, saves="none", save_output=True)
def _cholesky_ex(a, upper, check):
    src = np.swapaxes(a, -1, -2).conj() if upper else a  # U^H U = A reads A's upper triangle
    L = None
    if np.isfinite(a).all():
        try:
            L, info = np.linalg.cholesky(src), np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:
            pass
    if L is None:
        L, info = potrf(src)
        if check:
            raise_for_info(info, a.ndim > 2, check, _NOT_PD.format)
    return _colmajor(np.swapaxes(L, -1, -2).conj()) if upper else _colmajor(L), info


_cholesky_ex.meta_(lambda a, upper, check: (_lapack_meta(tuple(a.shape), a._data.dtype),
                                             _info_meta(a.shape[:-2])))


@_cholesky_ex.derivative_
def _(grads, a, upper, check, *, out):
    g = grads[0]
    L = out[0].mT if upper else out[0]
    gl = g.mT if upper else g
    phi = (L.mT @ gl).tril()
    phi = phi - phi.diagonal(0, -2, -1).diag_embed() * 0.5
    linv = inv(L)
    return _sym(linv.mT @ phi @ linv)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """The Cholesky factor and LAPACK's info code per matrix (0, or the order of the first leading minor
    that is not positive-definite; the factor then holds what LAPACK left)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_cholesky_ex", cholesky_ex, A, upper=upper, check_errors=check_errors,
                                 out=out)
    _check_square("cholesky", A)
    check = "linalg.cholesky_ex" if check_errors else None
    return finish_out(
        return_types.linalg_cholesky_ex(*dispatch(_cholesky_ex, (A,), (bool(upper), check))), out)


@typed
def cholesky(A, *, upper: bool = False, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_cholesky", cholesky, A, upper=upper, out=out)
    from ._util import finish_out

    _check_square("cholesky", A)
    return finish_out(dispatch(_cholesky_ex, (A,), (bool(upper), "linalg.cholesky"))[0], out)


@defop("linalg_qr", "LinalgQrBackward0", MATMUL, saves="none", save_output=True)
def _qr(a, mode):
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        return np.empty((0,), a.dtype), _colmajor(r)
    return _colmajor(q), _colmajor(r)


@_qr.meta_
def _(a, mode):
    *batch, m, n = a.shape
    k = m if mode == "complete" else min(m, n)
    r = _lapack_meta((*batch, k, n), a._data.dtype)
    return (meta_array((0,), a._data.dtype) if mode == "r" else _lapack_meta((*batch, m, k), a._data.dtype)), r


@_qr.derivative_
def _(grads, a, mode, *, out):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and out[1].shape[-2] > out[1].shape[-1]:  # (R is m x n)
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    gq, gr = grads
    q, r = out
    m = (r @ gr.mT) - (gq.mT @ q)
    copyltu = m.tril(-1) + m.tril(-1).mT + m.diagonal(0, -2, -1).diag_embed()
    b = gq + q @ copyltu
    return solve(r, b.mT).mT  # b R^-T


def qr(A, mode="reduced", *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_qr", qr, A, mode, out=out)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    try:
        if A.dim() < 2:
            raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_linalg_dtype("qr", A)
    return finish_out(return_types.linalg_qr(*dispatch(_qr, (A,), (mode,))), out)


@defop("geqrf", "GeqrfBackward0", MATMUL, saves="none")
def _geqrf(a):
    """LAPACK's geqrf (NumPy's `qr(mode="raw")`, transposed back): the Householder reflectors below the
    diagonal with R on and above it, column-major as LAPACK writes them, and the reflectors' scales tau."""
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])  # (not -1: ambiguous for an empty matrix)
    hs, taus = zip(*(np.linalg.qr(m, mode="raw") for m in flat)) if flat.shape[0] and a.size else ((), ())
    h = np.stack([h.T for h in hs]).reshape(a.shape) if hs else a.copy()
    k = min(a.shape[-2:])
    tau = np.stack(taus).reshape(a.shape[:-2] + (k,)) if taus else np.zeros(a.shape[:-2] + (k,), a.dtype)
    return _colmajor(h.astype(a.dtype, copy=False)), np.ascontiguousarray(tau.astype(a.dtype, copy=False))


@_geqrf.meta_
def _(a):
    shape = tuple(a.shape)
    return _lapack_meta(shape, a.dtype), meta_array(shape[:-2] + (min(shape[-2:]),), a.dtype)


@_geqrf.derivative_
def _(grads, a):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@method()
def geqrf(input, *, out=None):
    """torch.geqrf: the (a, tau) of LAPACK's QR factorisation (see `householder_product` for Q)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("geqrf", geqrf, input, out=out)
    from ._util import finish_out

    try:
        if input.dim() < 2:
            raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype.itemsize == 2:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{dtype_word(input.dtype)}'")
    return finish_out(return_types.geqrf(*dispatch(_geqrf, (input,))), out)


# ---- svd and eigh -----------------------------------------------------------------------------------------


_SVD_NAN = "The algorithm failed to converge because the input matrix contained non-finite values."


def _per_matrix(fn, a, outs):
    """`fn` over a batch, NaN outputs for each matrix holding a NaN or an infinity (what LAPACK gives in
    torch) or one NumPy fails on (then one matrix at a time). `outs` are the output shapes per matrix."""
    bad = ~np.isfinite(a).all(axis=(-2, -1))
    if bad.any():
        with np.errstate(all="ignore"):
            res = _per_matrix(fn, np.where(bad[..., None, None], 0, a), outs)
        return tuple(np.where(bad.reshape(bad.shape + (1,) * len(o[0])), np.nan, r).astype(r.dtype)
                     for r, o in zip(res, outs))
    try:
        return fn(a)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    results = []
    for m in flat:
        try:
            results.append(fn(m))
        except np.linalg.LinAlgError:
            results.append(tuple(np.full(shape, np.nan, dt) for shape, dt in outs))
    return tuple(np.stack([r[i] for r in results]).reshape(a.shape[:-2] + outs[i][0])
                 for i in range(len(outs)))


def svd_arrays(a, full=False, compute_uv=True):
    """(U, S, Vh) of each matrix (S alone without `compute_uv`) with torch's failures: a NaN fails as MKL's
    input check fails (NOTE [ LAPACK errors ]); an infinity gives NaNs."""
    raise_for_info(has_nan(a), a.ndim > 2, "linalg.svd", lambda k: _SVD_NAN)
    m, n = a.shape[-2:]
    k = min(m, n)
    real = np.finfo(a.dtype).dtype
    with np.errstate(all="ignore"):  # (NumPy's float32 SVD runs in double: a singular value past float32's
        if not compute_uv:           # max overflows to inf on the way back, as MKL's float32 routine gives)
            return _per_matrix(lambda x: (np.linalg.svd(x, compute_uv=False),), a, [((k,), real)])[0]
        mu, nv = (m, n) if full else (k, k)
        return _per_matrix(lambda x: tuple(np.linalg.svd(x, full_matrices=full)), a,
                           [((m, mu), a.dtype), ((k,), real), ((nv, n), a.dtype)])


def eigh_arrays(a, uplo="L", compute_v=True):
    """(eigenvalues, eigenvectors) of each Hermitian matrix; a matrix LAPACK cannot handle (a NaN or an
    infinity) gives NaNs, as torch's CPU build does."""
    n = a.shape[-1]
    real = np.finfo(a.dtype).dtype
    if not compute_v:
        return _per_matrix(lambda x: (np.linalg.eigvalsh(x, UPLO=uplo),), a, [((n,), real)])[0]
    return _per_matrix(lambda x: tuple(np.linalg.eigh(x, UPLO=uplo)), a, [((n,), real), ((n, n), a.dtype)])


@defop("linalg_svd", "LinalgSvdBackward0", MATMUL, saves="meta", save_output=True)
def _svd(a, full):
    u, s, vh = svd_arrays(a, full)
    return _colmajor(u), s, _colmajor(vh)  # LAPACK's column-major U and V^H, as torch's CPU kernel gives


@_svd.meta_
def _(a, full):  # U column-major, V^H row-major: torch's meta function (its CPU kernel gives V^H column-major)
    *batch, m, n = a.shape
    k = min(m, n)
    dt = a._data.dtype
    return (_lapack_meta((*batch, m, m if full else k), dt), meta_array((*batch, k), real_dtype(dt)),
            meta_array((*batch, n if full else k, n), dt))


@_svd.derivative_
def _(grads, a, full, *, out):
    gu, gs, gvh = grads
    u, s, vh = out
    v, gv = vh.mT, (gvh.mT if gvh is not None else None)
    ss = s.unsqueeze(-2)
    diff = ss * ss - s.unsqueeze(-1) * s.unsqueeze(-1)  # F_ij = 1 / (s_j^2 - s_i^2)
    eye = _eye(s.shape[-1], s.dtype)
    f = (1 / (diff + eye)) * (1 - eye)
    sd = s.diag_embed()
    term = (gs.diag_embed() if gs is not None else 0)
    if gu is not None:
        ju = f * (u.mT @ gu - gu.mT @ u)
        term = term + (ju @ sd)
    if gv is not None:
        jv = f * (v.mT @ gv - gv.mT @ v)
        term = term + (sd @ jv)
    r = u @ term @ vh
    m, n = a.shape[-2], a.shape[-1]
    sinv = (1 / s).diag_embed()
    if gu is not None and m > s.shape[-1]:
        r = r + (_eye(m, a.dtype) - u @ u.mT) @ gu @ sinv @ vh
    if gv is not None and n > s.shape[-1]:
        r = r + u @ sinv @ gv.mT @ (_eye(n, a.dtype) - v @ v.mT)
    return r


def svd(A, full_matrices=True, *, driver=None, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_svd", svd, A, full_matrices, driver=driver, out=out)
    try:
        if A.dim() < 2:
            raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_linalg_dtype("svd", A)
    return finish_out(return_types.linalg_svd(*dispatch(_svd, (A,), (bool(full_matrices),))), out)


def svdvals(A, *, driver=None, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_svdvals", svdvals, A, driver=driver, out=out)
    try:
        if A.dim() < 2:  # (linalg_svdvals runs linalg_svd's checks: the rank first, then the dtype)
            raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    except AttributeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_linalg_dtype("svd", A)
    return finish_out(dispatch(_svd, (A,), (False,))[1], out)


@defop("linalg_eigh", "LinalgEighBackward0", MATMUL, saves="none", save_output=True)
def _eigh(a, uplo):
    w, v = eigh_arrays(a, uplo)
    return w, _colmajor(v)


_eigh.meta_(lambda a, uplo: (meta_array(tuple(a.shape)[:-1], real_dtype(a._data.dtype)),
                             _lapack_meta(tuple(a.shape), a._data.dtype)))


@_eigh.derivative_
def _(grads, a, uplo, *, out):
    gl, gv = grads
    lam, v = out
    eye = _eye(lam.shape[-1], lam.dtype)
    inner = gl.diag_embed() if gl is not None else lam.diag_embed() * 0
    if gv is not None:
        diff = lam.unsqueeze(-2) - lam.unsqueeze(-1)  # l_j - l_i
        f = (1 / (diff + eye)) * (1 - eye)
        inner = inner + f * (v.mT @ gv)
    return _sym(v @ inner @ v.mT)


# NOTE [ eigh of a NaN matrix ]
# MKL's symmetric eigensolvers fail on a NaN in the triangle they read (an inf passes): torch raises
# LinAlgError with the solver's info, which for an n-by-n matrix (n >= 3) is n - 1 for eigh (syevd with
# vectors) and n - 2 for eigvalsh (the values-only path); matrices of 1 or 2 rows come back NaN. NumPy's
# eigh returns NaN for all, so ember checks the triangle first (an O(n^2) pass beside an O(n^3) solve).
# Without it, lobpcg on a NaN matrix ran its 1000 iterations (minutes) where torch stops at once.
def _eigh_nan_check(A, uplo, values_only):
    a = A._data
    n = a.shape[-1] if a.ndim >= 2 else 0
    if type(a) is not np.ndarray or n < 3 or a.dtype.kind not in "fc":
        return
    tri = np.tril(a) if str(uplo).upper() == "L" else np.triu(a)
    bad = has_nan(tri).reshape(-1)
    if bad.any():
        code = n - 2 if values_only else n - 1
        raise_for_info(np.where(bad, code, 0), a.ndim > 2, "linalg.eigh", lambda c: (
            "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
            f"repeated eigenvalues (error code: {c})."))


def eigh(A, UPLO="L", *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_eigh", eigh, A, UPLO, out=out)
    _check_square("eigh", A)
    _eigh_nan_check(A, UPLO, False)
    return finish_out(return_types.linalg_eigh(*dispatch(_eigh, (A,), (UPLO,))), out)


def eigvalsh(A, UPLO="L", *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_eigvalsh", eigvalsh, A, UPLO, out=out)
    _check_square("eigvalsh", A)
    _eigh_nan_check(A, UPLO, True)
    return finish_out(dispatch(_eigh, (A,), (UPLO,))[0], out)


# ---- composites ------------------------------------------------------------------------------------------


def pinv_array(a, atol, rtol, hermitian):
    # torch's formula: singular values at most max(atol, rtol * largest) count as zero
    if hermitian:
        w, v = eigh_arrays(a)
        s, u, vh = np.abs(w), v * np.sign(w)[..., None, :], np.swapaxes(v, -1, -2).conj()
    else:
        u, s, vh = svd_arrays(a)
    if np.isnan(s).any():  # a matrix with an infinity: every singular value drops, the result is zero
        u, vh = np.where(np.isnan(u), 0, u), np.where(np.isnan(vh), 0, vh)
    try:
        with np.errstate(all="ignore"):
            top = np.max(s, -1, keepdims=True, initial=0)
            if np.isnan(s).any():  # (the largest singular value is NaN where one is, as in torch)
                top = np.where(np.isnan(s).any(-1, keepdims=True), np.nan, top)
            tol = np.maximum(atol, rtol * top)
            sinv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0).astype(s.dtype)
            return (np.swapaxes(vh, -1, -2).conj() * sinv[..., None, :]) @ np.swapaxes(u, -1, -2).conj()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@defop("linalg_pinv", "LinalgPinvBackward0", MATMUL, saves="all", save_output=True)
def _pinv(a, atol, rtol, hermitian):
    return pinv_array(a, atol, rtol, hermitian)


_pinv.meta_(lambda a, atol, rtol, hermitian: meta_array(tuple(a.shape)[:-2] + (a.shape[-1], a.shape[-2]),
                                                        a._data.dtype))


@_pinv.derivative_
def _(g, a, atol, rtol, hermitian, *, out):
    return _pinv_grad(g, a, out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    try:
        if A.dim() < 2:
            raise RuntimeError(f"linalg.pinv({dtype_word(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or "
                               "more dimensions of float, double, cfloat or cdouble types")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_linalg_dtype("pinv", A)
    eps = np.finfo(A._data.dtype).eps if A._data.dtype.kind == "f" else 1e-7
    r = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else max(A.shape[-2:]) * eps)
    return finish_out(dispatch(_pinv, (A,), (float(atol or 0.0), float(r), bool(hermitian))), out)


@defop("linalg_matrix_rank", None, MATMUL)  # not differentiable (an integer result)
def _matrix_rank(a, atol, rtol, hermitian):
    s = svd_arrays(a, compute_uv=False) if not hermitian else np.abs(eigh_arrays(a, compute_v=False))
    smax = s.max(-1, keepdims=True, initial=0)
    smax = np.where(np.isnan(s).any(-1, keepdims=True), np.nan, smax)  # (NaN propagates, as in torch)
    eps = np.finfo(a.dtype).eps
    rt = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else max(a.shape[-2:]) * eps)
    tol = np.maximum(atol or 0.0, rt * smax)
    return np.asarray((s > tol).sum(-1)).astype(np.int64)


_matrix_rank.meta_(lambda a, atol, rtol, hermitian: meta_array(tuple(a.shape)[:-2], _dtypes.int64))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_matrix_rank", matrix_rank, A, atol=atol, rtol=rtol,
                                 hermitian=hermitian, out=out)
    try:
        if A.dim() < 2:
            raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_linalg_dtype("matrix_rank", A)
    return finish_out(dispatch(_matrix_rank, (A,), (atol, rtol, hermitian)), out)


@typed
def matrix_power(A, n: int, *, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices" if A.dim() >= 2 else
                           "linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if n == 0:
        if A.dtype.name == "bool":
            return finish_out(_eye_like(A).expand(A.shape).contiguous(), out)
        return finish_out(A * 0 + _eye_like(A), out)
    if n == 3:  # torch's association, which rounds differently from the binary powering below
        return finish_out((A @ A) @ A, out)
    base = A if n > 0 else inv(A)
    k = abs(n)
    result = None
    while k:
        if k & 1:
            result = base if result is None else result @ base
        k >>= 1
        if k:
            base = base @ base
    return finish_out(result, out)


Tensor.inverse = lambda self: inv(self)
Tensor.det = lambda self: det(self)
Tensor.slogdet = lambda self: slogdet(self)
Tensor.pinverse = lambda self, rcond=1e-15: _torch_pinverse(self, rcond)
Tensor.matrix_power = lambda self, n: matrix_power(self, n)
def logdet(A):
    """log det(A): nan for a negative determinant, -inf for a singular matrix (as torch)."""
    try:
        if A.dim() >= 2:
            require_linalg_dtype("logdet", A)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    sign, logabs = slogdet(A)
    if A.is_complex():  # log of the complex determinant: log|det| + i arg(det)
        return logabs + (sign.imag + 0.0).atan2(sign.real) * 1j  # (+0: a sign of -1 gives +pi, as torch)
    return logabs.masked_fill(sign < 0, float("nan"))




# torch.* spellings of the linalg functions: torch names their argument `input` (linalg's `A`), and
# torch.slogdet returns return_types.slogdet (linalg.slogdet: linalg_slogdet).
def _torch_det(input):
    return det(input)


def _torch_inverse(input, *, out=None):
    return inv(input, out=out)


def _torch_slogdet(input, *, out=None):
    return finish_out(return_types.slogdet(*slogdet(input)), out)


def _torch_pinverse(input, rcond=1e-15):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("pinverse", _torch_pinverse, input, rcond)
    return pinv(input, rtol=rcond)


def _torch_matrix_power(input, n, *, out=None):
    return matrix_power(input, n, out=out)


def _torch_logdet(input):
    return logdet(input)


for _f in (_torch_det, _torch_inverse, _torch_slogdet, _torch_pinverse, _torch_matrix_power, _torch_logdet):
    _f.__name__ = _f.__name__[len("_torch_"):]
    public[_f.__name__] = _f
Tensor.slogdet = lambda self: _torch_slogdet(self)
Tensor.logdet = logdet
