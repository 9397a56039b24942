"""The rest of torch.linalg: eig / eigvals, matrix_exp, householder_product (torch.orgqr), torch.ormqr, cond,
vecdot, vander, diagonal, tensorinv, tensorsolve, and torch's older torch.qr and torch.svd.

eig and matrix_exp are ops (NumPy's LAPACK geev; scaling and squaring with a degree-13 Padé approximant);
the products of Householder reflectors are written in ember ops, so autograd differentiates them.
"""

import numpy as np

from .. import _dtypes, return_types
from .._argparse import call_error
from .._dispatch import MATMUL, _modes, defop, dispatch, dtype_word, not_implemented
from .._meta import meta_array, no_data
from ._util import finish_out, method, public, typed
from .factorizations import _colmajor, _inv_ex, inv_ex, require_linalg_dtype, solve, svdvals
from .lu import _square, deprecated, finish_outs

_LAPACK = frozenset({"float32", "float64", "complex64", "complex128"})
_COMPLEX = {"float32": _dtypes.complex64, "float64": _dtypes.complex128, "complex64": _dtypes.complex64,
            "complex128": _dtypes.complex128}


def _eye(n, m, like):
    from .creation import eye

    return eye(n, m, dtype=like.dtype, device=like.device)


# ---- eig, eigvals ---------------------------------------------------------------------------------------


def _eig_dtype_error(d, *args):
    if d.is_floating_point:  # float16 / bfloat16
        return not_implemented("linalg_eig_out_cpu", d)
    return RuntimeError(f"Unknown Complex ScalarType for {dtype_word(d)}")


@defop("linalg_eig", "LinalgEigBackward0", MATMUL, saves="none", save_output=True, dtypes=_LAPACK,
       error=_eig_dtype_error, tags=("not_holomorphic",))
def _eig(a, check):
    # check: eig refuses a non-finite input; eigvals hands it to LAPACK, which gives NaNs (here: the NaNs)
    bad = ~np.isfinite(a).all(axis=(-2, -1))
    if check and bad.any():
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    ct = np.result_type(a.dtype, np.complex64)
    if a.shape[-1] == 0:
        return np.empty(a.shape[:-1], ct), _colmajor(np.empty(a.shape, ct))
    w, v = np.linalg.eig(np.where(bad[..., None, None], 0, a))  # LAPACK's geev: unit-norm eigenvectors
    w, v = w.astype(ct), v.astype(ct)                             # whose largest component is real
    if bad.any():
        w[bad], v[bad] = np.nan, np.nan
    return w, _colmajor(v)


@_eig.meta_
def _(a, check):
    shape = tuple(a.shape)
    ct = _COMPLEX[a.dtype.name]
    if a.device.type == "cpu":  # a fake tensor: torch's meta function gives the CPU kernel's column-major
        return meta_array(shape[:-1], ct), meta_array(shape, ct, _column_major(shape))
    return meta_array(shape[:-1], ct), meta_array(shape, ct)  # (torch's meta function: row-major vectors)


def _column_major(shape):
    n, m = shape[-1], shape[-2]
    batch, acc = [], m * n
    for d in reversed(shape[:-2]):
        batch.append(acc)
        acc *= d
    return tuple(reversed(batch)) + (1, m)


_EIG_PHASE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to multiplication by "
              "e^{i phi}. The specified loss function depends on this quantity, so it is ill-defined.")


@_eig.derivative_
def _(grads, a, check, *, out):  # torch's linalg_eig_backward, in its conjugate convention
    gL, gV = grads
    L, V = out
    Vh = V.mH
    if gV is None:
        return solve(Vh, gL.unsqueeze(-1) * Vh)
    Lc = L.conj()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + _eye(L.shape[-1], L.shape[-1], L)
    VhgV = Vh @ gV
    diag = VhgV.diagonal(0, -2, -1)
    if not no_data(diag) and not bool((diag.imag.abs() <= 1e-2).all()):  # (torch skips it for subclasses)
        raise RuntimeError(_EIG_PHASE)
    VhgV = VhgV - Vh @ (V * diag.real.unsqueeze(-2))
    gA = VhgV / E
    if gL is not None:
        gA = gA + gL.diag_embed()
    return solve(Vh, gA @ Vh)


def eig(A, *, out=None):
    """Eigenvalues and eigenvectors of a square matrix (complex; eigenvectors of unit norm, as LAPACK's)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_eig", eig, A, out=out)
    try:
        if A.dim() < 2:
            raise RuntimeError("linalg.eig: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    _square("linalg.eig", A)
    return finish_outs(return_types.linalg_eig(*dispatch(_eig, (A,), (True,))), out, return_types.linalg_eig)


def eigvals(A, *, out=None):
    """The eigenvalues of a square matrix (complex)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_eigvals", eigvals, A, out=out)
    try:
        if A.dim() < 2:
            raise RuntimeError("linalg.eigvals: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    _square("linalg.eigvals", A)
    # (torch differentiates eigvals through eig, which refuses a non-finite input)
    return finish_out(dispatch(_eig, (A,), (A.requires_grad,))[0], out)


# ---- matrix_exp --------------------------------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the [13/13] Padé
# approximant after scaling A by 2^-s so that its 1-norm is at most theta_13, then s squarings.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0,
           960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm_array(a):
    """exp of each square matrix in `a`, computed in double precision and rounded once to a's dtype."""
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    x = a.astype(wide)
    n = x.shape[-1]
    if n == 0 or x.size == 0:
        return np.empty(a.shape, a.dtype)
    with np.errstate(all="ignore"):
        norm = np.abs(x).sum(-2).max(-1)
        s = np.where(norm > _THETA13, np.ceil(np.log2(np.where(norm > 0, norm, 1) / _THETA13)), 0)
        s = np.where(np.isfinite(s), s, 0).astype(np.int64)
        x = x / (2.0 ** s)[..., None, None]
        b = _PADE13
        eye = np.eye(n, dtype=wide)
        x2 = x @ x
        x4 = x2 @ x2
        x6 = x4 @ x2
        u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye)
        v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
        r = _solve_or_nan(v - u, v + u)
        for i in range(int(s.max(initial=0))):
            r = np.where((s > i)[..., None, None], r @ r, r)
    return r.astype(a.dtype)


def _solve_or_nan(p, q):
    """p^-1 q per matrix; NaNs for a matrix NumPy cannot solve (non-finite input)."""
    try:
        return np.linalg.solve(p, q)
    except np.linalg.LinAlgError:
        flat_p, flat_q = p.reshape((-1,) + p.shape[-2:]), q.reshape((-1,) + q.shape[-2:])
        out = np.full(flat_q.shape, np.nan, q.dtype)
        for i in range(flat_p.shape[0]):
            try:
                out[i] = np.linalg.solve(flat_p[i], flat_q[i])
            except np.linalg.LinAlgError:
                pass
        return out.reshape(q.shape)


def _matrix_exp_error(d, *args):
    return RuntimeError(f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                        f"{dtype_word(d)}")


@defop("linalg_matrix_exp", "LinalgMatrixExpBackward0", MATMUL, saves="all",
       dtypes=_LAPACK | {"float16", "bfloat16"}, error=_matrix_exp_error)
def _matrix_exp(a):
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # float16 / bfloat16 through float32
        return np.ascontiguousarray(expm_array(a.astype(np.float32)).astype(a.dtype))
    return np.ascontiguousarray(expm_array(a))


_matrix_exp.meta_(lambda a: meta_array(tuple(a.shape), a._data.dtype))


@_matrix_exp.derivative_
def _(g, a):
    # torch's differential_analytic_matrix_function: exp([[A^T, G], [0, A^T]]) holds the adjoint of the
    # differential in its top-right block (a formula in ember ops, so it differentiates again)
    from .shape import cat

    n = a.shape[-1]
    at = a.mT
    zero = g * 0
    big = cat([cat([at, g], -1), cat([zero, at], -1)], -2)
    return matrix_exp(big)[..., :n, n:]


@method()
def matrix_exp(input):
    """The matrix exponential of each square matrix."""
    try:
        if input.dim() < 2:
            raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    _square("linalg.matrix_exp", input)
    return dispatch(_matrix_exp, (input,))


# ---- Householder products: householder_product (orgqr), ormqr ----------------------------------------------


def _reflector(A, i):
    """The i-th Householder vector stored in A's column i (a one at row i, zeros above), shaped (..., m)."""
    from .shape import cat

    col = A[..., :, i]
    head = col[..., :i + 1] * 0
    one = head[..., i:] + 1
    return cat([head[..., :i], one, col[..., i + 1:]], -1)


def _reflect_left(C, v, t):
    """(I - t v v^H) C."""
    return C - (t.unsqueeze(-1) * v).unsqueeze(-1) * (v.conj().unsqueeze(-2) @ C)


def _reflect_right(C, v, t):
    """C (I - t v v^H)."""
    return C - (C @ v.unsqueeze(-1)) * (t.unsqueeze(-1) * v.conj()).unsqueeze(-2)


def _hh_checks(name, A, tau):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.shape[-1] < tau.shape[-1] if tau.dim() else False:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {dtype_word(tau.dtype)} does not match input dtype "
                           f"{dtype_word(A.dtype)}")
    if A.dtype.name not in _LAPACK:
        raise not_implemented("orgqr_cpu", A.dtype)


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H with v_i stored below A's diagonal
    (LAPACK's orgqr: Q of a QR factorisation from geqrf's output)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_householder_product", householder_product, A, tau, out=out)
    _hh_checks("torch.linalg.householder_product", A, tau)
    m, n = A.shape[-2:]
    Q = _eye(m, n, A).expand(tuple(A.shape)) + A * 0  # (broadcast over A's batch)
    for i in range(tau.shape[-1] - 1, -1, -1):
        Q = _reflect_left(Q, _reflector(A, i), tau[..., i])
    return finish_out(Q.mT.contiguous().mT, out)  # LAPACK's column-major result


@method()
def orgqr(input, input2, *, out=None):
    """torch.orgqr: linalg.householder_product(input, input2)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("orgqr", orgqr, input, input2, out=out)
    return householder_product(input, input2, out=out)


@method()
def ormqr(input, input2, input3, left: bool = True, transpose: bool = False, *, out=None):
    """op(Q) C or C op(Q) (op: identity, or the conjugate transpose with `transpose`) for Q the product of
    the Householder reflectors in `input` and `input2` (LAPACK's ormqr)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("ormqr", ormqr, input, input2, input3, left, transpose, out=out)
    A, tau, C = input, input2, input3
    name = "torch.ormqr"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    try:
        if C.dim() < 2:
            raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    along = -2 if left else -1
    if C.shape[along] != A.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{along}] must be equal to input.shape[-2]")
    if tau.dim() != A.dim() - 1 or tau.shape[-1] != min(C.shape[along], A.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{along}], input.shape[-1])")
    for t, word in ((tau, "tau"), (C, "other")):
        if t.dtype != A.dtype:
            raise RuntimeError(f"{name}: Expected input and {word} to have the same dtype, but input has dtype"
                               f"{dtype_word(A.dtype)} and {word} has dtype {dtype_word(t.dtype)}")  # (sic)
    if A.dtype.name not in _LAPACK:
        raise not_implemented("ormqr_cpu", A.dtype)
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]
        from ..autograd._jvp import check_composite
        check_composite("ormqr", A, tau, C)
    k = tau.shape[-1]
    order = range(k - 1, -1, -1) if left != bool(transpose) else range(k)
    for i in order:
        t = tau[..., i].conj() if transpose else tau[..., i]
        v = _reflector(A, i)
        C = _reflect_left(C, v, t) if left else _reflect_right(C, v, t)
    return finish_out(C.mT.contiguous().mT, out)


# ---- cond, vecdot, vander, diagonal, tensorinv, tensorsolve -------------------------------------------------


def cond(A, p=None, *, out=None):
    """The condition number of A in the matrix norm `p` (2 by default: the ratio of extreme singular
    values); infinity for a singular matrix."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_cond", cond, A, p, out=out)
    from .linalg_ext import matrix_norm

    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else p
    if not isinstance(ord, str) and ord not in (1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_num(ord)}")
    if not isinstance(ord, str) and abs(ord) == 2:
        if A.numel() == 0:
            return finish_out(_empty_cond(A), out)
        s = svdvals(A)
        res = (s[..., -1] / s[..., 0]) if ord == -2 else (s[..., 0] / s[..., -1])
        return finish_out(res, out)
    word = ord if isinstance(ord, str) else _num(ord)
    _square(f"linalg.cond(ord={word})", A)
    if A.numel() == 0:
        return finish_out(_empty_cond(A), out)
    if ord == "nuc":  # torch's: the sums of the singular values of A and of their reciprocals
        s = svdvals(A)
        return finish_out(s.sum(-1) * s.reciprocal().sum(-1), out)
    require_linalg_dtype("inv", A)
    inverse, info = inv_ex(A)
    # in place, as torch's: so, as in torch, this result has no usable gradient (backward reports the
    # modified inverse)
    inverse.masked_fill_((info > 0).unsqueeze(-1).unsqueeze(-1), float("inf"))
    res = matrix_norm(A, ord) * matrix_norm(inverse, ord)
    return finish_out(res.nan_to_num_(float("inf"), float("inf"), float("-inf")), out)


def _empty_cond(A):
    """torch's condition number of empty matrices: zeros over the batch, in A's real dtype."""
    from .creation import zeros

    return zeros(tuple(A.shape[:-2]), dtype=A.real.dtype if A.is_complex() else A.dtype, device=A.device)


def _num(x):
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def vecdot(x, y, *, dim=-1, out=None):
    """x^H y along `dim` (broadcasting the other dims)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_vecdot", vecdot, x, y, dim=dim, out=out)
    from .linalg import vdot

    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{dtype_word(x.dtype)}")
    try:
        if x.dtype != y.dtype:
            raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                               f"{dtype_word(x.dtype)} and y of type {dtype_word(y.dtype)} instead")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if x.dim() == 1 and y.dim() == 1:
        return finish_out(vdot(x, y), out)
    return finish_out((x.conj() * y if x.is_complex() else x * y).sum(dim), out)


def vander(x, *, N=None):
    """The Vandermonde matrix of x: columns x^0, x^1, ..., x^(N-1)."""
    from .scan import cumprod
    from .shape import cat

    try:
        if x.dtype.name in ("bool", "float16", "bfloat16"):
            raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                               f"{dtype_word(x.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = cumprod(x_.unsqueeze(-1).expand(shape + [n - 1]), -1)
    return cat([result.new_ones(shape + [1]), result], -1)


@typed
def diagonal(A, *, offset: int = 0, dim1=-2, dim2=-1):
    """linalg.diagonal: torch.diagonal with matrix-first defaults (a view)."""
    try:
        return A.diagonal(offset, dim1, dim2)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def _copy_out(result, out):
    """torch's out= of a composite that copies its result in (tensorinv, tensorsolve): no refusal under grad,
    and the copy is recorded (out's grad_fn is CopyBackwards)."""
    if out is None:
        return result
    finish_out(result.detach(), out)
    if result.requires_grad:
        out.copy_(result)
    return out


@typed
def tensorinv(A, ind: int = 2, *, out=None):
    """The inverse of A seen as a map from its last dims to its first `ind` dims."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_tensorinv", tensorinv, A, ind, out=out)
    try:
        if ind <= 0:
            raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
        head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    p_head, p_tail = int(np.prod(head, dtype=np.int64)), int(np.prod(tail, dtype=np.int64))
    if p_head != p_tail:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {p_tail} != {p_head}")
    square = A.reshape(p_tail, p_tail)
    require_linalg_dtype("inv", square)
    result = dispatch(_inv_ex, (square,), ("inv",))[0]
    return _copy_out(result.reshape(tail + head), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """The X with tensordot(A, X, X.ndim) = B."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linalg_tensorsolve", tensorsolve, A, B, dims, out=out)
    from .shape import movedim

    nd = A.dim()
    if dims is not None:
        A = movedim(A, tuple(dims), tuple(range(nd - len(dims), nd)))
    try:
        rshape = tuple(A.shape[B.dim():])
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    rp = int(np.prod(rshape, dtype=np.int64))
    bp = int(np.prod(tuple(B.shape), dtype=np.int64))
    if rp != bp:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {rp} != {bp}")
    return _copy_out(solve(A.reshape(rp, rp), B.flatten()).reshape(rshape), out)


# ---- torch.qr, torch.svd ------------------------------------------------------------------------------------


@method("qr", top=False)
def torch_qr(input, some: bool = True, *, out=None):
    """torch.qr (deprecated): linalg.qr in 'reduced' (some=True) or 'complete' mode."""
    from .factorizations import qr

    res = deprecated("qr", _QR_WARNING, lambda: qr(input, "reduced" if some else "complete"))
    return finish_outs(res, out, return_types.qr)


_QR_WARNING = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
    "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
    "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")


@method("svd", top=False)
def torch_svd(input, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: (U, S, V) with V (not V^H); without `compute_uv`, U and V are zero matrices."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("svd", torch_svd, input, some, compute_uv, out=out)
    from .factorizations import svd

    try:
        if input.dim() < 2:
            raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} dimensions "
                               "instead")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if compute_uv:
        U, S, Vh = svd(input, full_matrices=not some)
    else:
        S = svdvals(input)
        *batch, m, n = input.shape
        U = input.new_zeros((*batch, m, m))
        Vh = input.new_zeros((*batch, n, n))
    return finish_outs(return_types.svd(U, S, Vh.mH), out, return_types.svd)


public.update(qr=torch_qr, svd=torch_svd)
