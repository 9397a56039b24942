"""Matrix functions and decompositions behind `ember.linalg`: inv, det, slogdet, solve, lstsq, cholesky,
qr, svd / svdvals, eigh / eigvalsh, pinv, matrix_rank, matrix_power.

Kernels are NumPy's LAPACK wrappers (batched over leading dims); derivatives follow NOTE [ Decomposition
gradients ] in linalg_ext.py and are written in ember ops.
"""

import numpy as np

from .. import return_types
from .._dispatch import MATMUL, defop, dispatch, dtype_word
from .._tensor import Tensor, _wrap
from ._util import method, public


def _check_square(name, A):
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype.itemsize == 2:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtype_word(A.dtype)}")


def _eye_like(A):
    from .creation import eye

    return eye(A.shape[-1], dtype=A.dtype)


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
    empty = _wrap(np.empty((0,), a.dtype))
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
        residuals = _wrap(np.asarray(((a @ x - b) ** 2).sum(-2)).astype(a.dtype))
    return rank, sv, residuals


@defop("linalg_lstsq", "LinalgLstsqBackward0", MATMUL, "same")
def _lstsq(a, b, rcond):
    return _colmajor(np.linalg.pinv(a, rcond=1e-15 if rcond is None else rcond) @ b)


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
    return return_types.svd(*dispatch(_svd, (A,), (bool(full_matrices),)))


def svdvals(A, *, driver=None, out=None):
    return dispatch(_svd, (A,), (False,))[1]


@defop("linalg_eigh", "LinalgEighBackward0", MATMUL, saves="none", save_output=True)
def _eigh(a, uplo):
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, _colmajor(v)


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


@_pinv.derivative_
def _(g, a, rtol, hermitian, *, out):
    return _pinv_grad(g, a, out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if A.dim() < 2:
        raise RuntimeError("linalg.pinv: The input tensor A must have at least 2 dimensions.")
    eps = np.finfo(A._data.dtype).eps if A._data.dtype.kind == "f" else 1e-7
    r = rtol if rtol is not None else (0.0 if atol is not None else max(A.shape[-2:]) * eps)
    return dispatch(_pinv, (A,), (r, hermitian))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor A must have at least 2 dimensions.")
    s = np.linalg.svd(A._data, compute_uv=False) if not hermitian else np.abs(np.linalg.eigvalsh(A._data))
    smax = s.max(-1, keepdims=True, initial=0)
    eps = np.finfo(A._data.dtype).eps
    rt = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else max(A.shape[-2:]) * eps)
    tol = np.maximum(atol or 0.0, rt * smax)
    return _wrap(np.asarray((s > tol).sum(-1)).astype(np.int64))


def matrix_power(A, n, *, out=None):
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices" if A.dim() >= 2 else
                           "linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if n == 0:
        return A * 0 + _eye_like(A)  # (still part of the graph, as torch's result is)
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
    sign, logabs = slogdet(A)
    return logabs.masked_fill(sign < 0, float("nan"))


public.update(inverse=inv, det=det, slogdet=slogdet, pinverse=lambda A, rcond=1e-15: pinv(A, rtol=rcond),
              matrix_power=matrix_power, logdet=logdet)
Tensor.logdet = logdet
