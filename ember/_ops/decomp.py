"""Matrix functions and decompositions behind `ember.linalg`: inv, det, slogdet, solve, lstsq, cholesky,
qr, svd / svdvals, eigh / eigvalsh, pinv, matrix_rank, matrix_power.

Kernels are NumPy's LAPACK wrappers (batched over leading dims); derivatives follow NOTE [ Decomposition
gradients ] in linalg_ext.py and are written in ember ops.
"""

import numpy as np

from .. import _dtypes, return_types
from .._dispatch import MATMUL, defop, dispatch, dtype_word, not_implemented
from .._meta import broadcast_shapes, lapack_strides, meta_array, no_meta_kernel, real_dtype
from .._tensor import Tensor, _wrap
from ._util import method, public

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
    d = A.dtype
    if d.name not in _LINALG_DTYPES and not (low_ok and d.name in ("float16", "bfloat16")):
        low, other = _LINALG_ERRORS[name]
        raise (low if d.name in ("float16", "bfloat16") else other)(d, A)


def _check_square(name, A):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
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
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


# ---- inv, det, slogdet, solve -------------------------------------------------------------------------


@defop("linalg_inv", "LinalgInvExBackward0", MATMUL, saves="none", save_output=True)
def _inv(a):
    try:
        return _colmajor(np.linalg.inv(a))
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed "
                           "because the input matrix is singular.") from None


def _lapack_meta(shape, dtype):
    """A LAPACK result on meta: torch's layout for it (column-major matrices, see `lapack_strides`)."""
    return meta_array(shape, dtype, lapack_strides(shape))


_inv.meta_(lambda a: _lapack_meta(tuple(a.shape), a._data.dtype))


@_inv.derivative_
def _(g, a, *, out):
    return -(out.mT @ g @ out.mT)


def inv(A, *, out=None):
    from ._util import finish_out

    _check_square("inv", A)
    return finish_out(dispatch(_inv, (A,)), out)


@defop("linalg_det", "LinalgDetBackward0", MATMUL, save_output=True)
def _det(a):
    with np.errstate(all="ignore"):  # (np.linalg is NumPy Python: its warnings escape ember's filter)
        return np.asarray(np.linalg.det(a))


_det.meta_(lambda a: meta_array(tuple(a.shape)[:-2], a._data.dtype))


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
    return return_types.slogdet(*dispatch(_slogdet, (A,)))


@defop("linalg_solve", "LinalgSolveExBackward0", MATMUL, "same", save_output=True)
def _solve(a, b, vector):
    try:
        if vector:
            return np.linalg.solve(a, b[..., None])[..., 0]
        return _colmajor(np.linalg.solve(a, b))
    except np.linalg.LinAlgError:
        raise RuntimeError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None


@_solve.meta_
def _(a, b, vector):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if vector:
        shape = broadcast_shapes(sa[:-2], sb[:-1]) + sb[-1:]
    else:
        shape = broadcast_shapes(sa[:-2], sb[:-2]) + sb[-2:]
    return _lapack_meta(shape, _dtypes.result_dtype([a, b]))


@_solve.derivative_
def _(g, a, b, vector, *, out):
    gb = solve(a.mT, g)
    if vector:
        return -(gb.unsqueeze(-1) * out.unsqueeze(-2)), gb
    return -(gb @ out.mT), gb


def solve(A, B, *, left=True, out=None):
    from ._util import finish_out

    _check_square("solve", A)
    if not left:
        return finish_out(solve(A.mT, B.mT).mT, out)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    rows = B.shape[-1] if vector else B.shape[-2]
    if rows != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({_s(A.shape)} and {_s(tuple(B.shape) + ((1,) if vector else ()))})")
    return finish_out(dispatch(_solve, (A, B), (vector,)), out)


def _s(shape):
    return "x".join(map(str, shape))


# ---- lstsq, cholesky, qr ----------------------------------------------------------------------------------


def lstsq(A, B, rcond=None, *, driver=None):
    # the min-norm least-squares solution is pinv(A) @ B, which differentiates through pinv
    vec = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vec else B
    if A.shape[-2] != Bm.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    require_linalg_dtype("lstsq", A)
    drv = "gelsy" if driver is None else driver  # torch's default on the CPU
    if drv not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    X = dispatch(_lstsq, (A, Bm), (rcond,))
    rank, sv, residuals = _lstsq_extras(A._data, Bm._data, X._data, rcond, drv)
    return return_types.linalg_lstsq(X.squeeze(-1) if vec else X, residuals, rank, sv)


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
        s = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        tol = (np.finfo(a.dtype).eps * max(m, n) if rcond is None else rcond) * s[..., :1]
        r = (s > tol).sum(-1).astype(np.int64)
        rank = _wrap(np.asarray(r))
        full = bool(np.all(r == min(m, n)))
    sv = _wrap(np.linalg.svd(a, compute_uv=False)) if driver in ("gelsd", "gelss") else empty
    residuals = empty
    if driver != "gelsy" and m > n and full:
        residuals = _wrap(np.asarray((np.abs(a @ x - b) ** 2).sum(-2)).astype(real))
    return rank, sv, residuals


@defop("linalg_lstsq", "LinalgLstsqBackward0", MATMUL, "same")
def _lstsq(a, b, rcond):
    return _colmajor(np.linalg.pinv(a, rcond=1e-15 if rcond is None else rcond) @ b)


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


@defop("linalg_cholesky", "LinalgCholeskyExBackward0", MATMUL, saves="none", save_output=True)
def _cholesky(a, upper):
    try:
        L = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.cholesky: The factorization could not be completed because the input is not "
                           "positive-definite (the leading minor of order 1 is not positive-definite).") from None
    return _colmajor(np.swapaxes(L, -1, -2)) if upper else _colmajor(L)


_cholesky.meta_(lambda a, upper: _lapack_meta(tuple(a.shape), a._data.dtype))


@_cholesky.derivative_
def _(g, a, upper, *, out):
    L = out.mT if upper else out
    gl = g.mT if upper else g
    phi = (L.mT @ gl).tril()
    phi = phi - phi.diagonal(0, -2, -1).diag_embed() * 0.5
    linv = inv(L)
    return _sym(linv.mT @ phi @ linv)


def cholesky(A, *, upper=False, out=None):
    from ._util import finish_out

    _check_square("cholesky", A)
    return finish_out(dispatch(_cholesky, (A,), (upper,)), out)


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
    gq, gr = grads
    q, r = out
    m = (r @ gr.mT) - (gq.mT @ q)
    copyltu = m.tril(-1) + m.tril(-1).mT + m.diagonal(0, -2, -1).diag_embed()
    b = gq + q @ copyltu
    return solve(r, b.mT).mT  # b R^-T


def qr(A, mode="reduced", *, out=None):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    if A.dim() < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    require_linalg_dtype("qr", A)
    return return_types.qr(*dispatch(_qr, (A,), (mode,)))


@defop("geqrf", "GeqrfBackward0", MATMUL, saves="none")
def _geqrf(a):
    """LAPACK's geqrf (NumPy's `qr(mode="raw")`, transposed back): the Householder reflectors below the
    diagonal with R on and above it, column-major as LAPACK writes them, and the reflectors' scales tau."""
    flat = a.reshape((-1,) + a.shape[-2:])
    hs, taus = zip(*(np.linalg.qr(m, mode="raw") for m in flat)) if flat.shape[0] else ((), ())
    h = np.stack([h.T for h in hs]).reshape(a.shape) if hs else a.copy()
    k = min(a.shape[-2:])
    tau = np.stack(taus).reshape(a.shape[:-2] + (k,)) if taus else np.zeros(a.shape[:-2] + (k,), a.dtype)
    return _colmajor(h.astype(a.dtype, copy=False)), np.ascontiguousarray(tau.astype(a.dtype, copy=False))


@_geqrf.meta_
def _(a):
    from .._meta import meta_array

    shape = tuple(a.shape)
    m, n = shape[-2:]
    batch = shape[:-2]
    mat = (1, m)  # each matrix column-major, batches dense after it
    strides = tuple(int(np.prod(batch[i + 1:], dtype=np.int64)) * m * n for i in range(len(batch))) + mat
    k = min(m, n)
    return meta_array(shape, a.dtype, strides), meta_array(batch + (k,), a.dtype)


@_geqrf.derivative_
def _(grads, a):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@method()
def geqrf(input, *, out=None):
    """torch.geqrf: the (a, tau) of LAPACK's QR factorisation (see `householder_product` for Q)."""
    from ._util import finish_out

    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or input.dtype.itemsize == 2:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{dtype_word(input.dtype)}'")
    return finish_out(return_types.geqrf(*dispatch(_geqrf, (input,))), out)


# ---- svd and eigh -----------------------------------------------------------------------------------------


@defop("linalg_svd", "LinalgSvdBackward0", MATMUL, saves="meta", save_output=True)
def _svd(a, full):
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    return u, s, vh


@_svd.meta_
def _(a, full):  # U column-major, V^H row-major (the transpose of LAPACK's column-major V), as torch's
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
    if A.dim() < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    require_linalg_dtype("svd", A)
    return return_types.svd(*dispatch(_svd, (A,), (bool(full_matrices),)))


def svdvals(A, *, driver=None, out=None):
    require_linalg_dtype("svd", A)
    return dispatch(_svd, (A,), (False,))[1]


@defop("linalg_eigh", "LinalgEighBackward0", MATMUL, saves="none", save_output=True)
def _eigh(a, uplo):
    w, v = np.linalg.eigh(a, UPLO=uplo)
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


def eigh(A, UPLO="L", *, out=None):
    _check_square("eigh", A)
    return return_types.eigh(*dispatch(_eigh, (A,), (UPLO,)))


def eigvalsh(A, UPLO="L", *, out=None):
    _check_square("eigvalsh", A)
    return dispatch(_eigh, (A,), (UPLO,))[0]


# ---- composites ------------------------------------------------------------------------------------------


@defop("linalg_pinv", "LinalgPinvBackward0", MATMUL, saves="all", save_output=True)
def _pinv(a, rtol, hermitian):
    return np.linalg.pinv(a, rcond=rtol, hermitian=hermitian)


_pinv.meta_(lambda a, rtol, hermitian: meta_array(tuple(a.shape)[:-2] + (a.shape[-1], a.shape[-2]),
                                                  a._data.dtype))


@_pinv.derivative_
def _(g, a, rtol, hermitian, *, out):
    return _pinv_grad(g, a, out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.pinv({dtype_word(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    require_linalg_dtype("pinv", A)
    eps = np.finfo(A._data.dtype).eps if A._data.dtype.kind == "f" else 1e-7
    r = rtol if rtol is not None else (0.0 if atol is not None else max(A.shape[-2:]) * eps)
    return dispatch(_pinv, (A,), (r, hermitian))


@defop("linalg_matrix_rank", None, MATMUL)  # not differentiable (an integer result)
def _matrix_rank(a, atol, rtol, hermitian):
    s = np.linalg.svd(a, compute_uv=False) if not hermitian else np.abs(np.linalg.eigvalsh(a))
    smax = s.max(-1, keepdims=True, initial=0)
    eps = np.finfo(a.dtype).eps
    rt = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else max(a.shape[-2:]) * eps)
    tol = np.maximum(atol or 0.0, rt * smax)
    return np.asarray((s > tol).sum(-1)).astype(np.int64)


_matrix_rank.meta_(lambda a, atol, rtol, hermitian: meta_array(tuple(a.shape)[:-2], _dtypes.int64))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    require_linalg_dtype("matrix_rank", A)
    return dispatch(_matrix_rank, (A,), (atol, rtol, hermitian))


def matrix_power(A, n, *, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices" if A.dim() >= 2 else
                           "linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if n == 0:
        if A.dtype.name == "bool":
            return _eye_like(A).expand(A.shape).contiguous()
        return A * 0 + _eye_like(A)  # (still part of the graph, as torch's result is)
    if n == 3:  # torch's association, which rounds differently from the binary powering below
        return (A @ A) @ A
    base = A if n > 0 else inv(A)
    k = abs(n)
    result = None
    while k:
        if k & 1:
            result = base if result is None else result @ base
        k >>= 1
        if k:
            base = base @ base
    return result


Tensor.inverse = lambda self: inv(self)
Tensor.det = lambda self: det(self)
Tensor.slogdet = lambda self: slogdet(self)
Tensor.pinverse = lambda self, rcond=1e-15: pinv(self, rtol=rcond)
Tensor.matrix_power = lambda self, n: matrix_power(self, n)
def logdet(A):
    """log det(A): nan for a negative determinant, -inf for a singular matrix (as torch)."""
    if A.dim() >= 2:
        require_linalg_dtype("logdet", A)
    sign, logabs = slogdet(A)
    if A.is_complex():  # log of the complex determinant: log|det| + i arg(det)
        return logabs + (sign.imag + 0.0).atan2(sign.real) * 1j  # (+0: a sign of -1 gives +pi, as torch)
    return logabs.masked_fill(sign < 0, float("nan"))


public.update(inverse=inv, det=det, slogdet=slogdet, pinverse=lambda A, rcond=1e-15: pinv(A, rtol=rcond),
              matrix_power=matrix_power, logdet=logdet)
Tensor.logdet = logdet
