"""LU and triangular solvers: linalg.lu_factor(_ex), linalg.lu, lu_unpack, linalg.lu_solve,
linalg.solve_triangular, cholesky_solve / cholesky_inverse, linalg.ldl_factor(_ex) / ldl_solve, and
torch's older spellings (torch.lu, torch.lu_solve, torch.triangular_solve, torch.cholesky).

Kernels are LAPACK's reference algorithms in NumPy (getf2 in lapack.py, trsm and sytf2 here), looping over
columns and vectorized over the batch, so pivots, info codes and the infinities of a singular matrix are
LAPACK's. Derivatives are torch's formulas (autograd/FunctionsManual.cpp), written in ember ops.

NOTE [ LU pivots ]
torch's pivots are LAPACK's: 1-based int32 row interchanges, applied in order (row j swapped with row
pivots[j] - 1). The permutation matrix P of `lu_unpack` is the one with A = P L U, so P[perm[j], j] = 1
where perm is arange(m) with those interchanges applied.
"""

import warnings

import numpy as np

from .. import _dtypes, return_types
from .._argparse import call_error
from .._dispatch import MATMUL, _modes, defop, dispatch, dtype_word, not_implemented
from .._meta import broadcast_shapes, lapack_strides, meta_array
from .._naming import named
from ..autograd.graph import needs_grad
from ._util import finish_out, method, public, typed
from .factorizations import _colmajor, _s
from .lapack import getrf, raise_for_info

_LAPACK = frozenset({"float32", "float64", "complex64", "complex128"})
_WARNED = set()


def deprecated(key, text, compute):
    """`compute()` under torch's TORCH_WARN_ONCE: the first call in the process warns with `text` once it has
    computed (torch hands its C++ warnings to Python when the op returns: an op that fails raises its own
    error, and under `-W error` the warning replaces the result)."""
    first = key not in _WARNED
    _WARNED.add(key)
    result = compute()
    if first:
        warnings.warn(text, UserWarning, stacklevel=3)
    return result


def finish_outs(results, out, kind=tuple):
    """`out=` for a function returning several tensors: each result written into its out tensor
    (`finish_out`), returned as `kind` (a named tuple type) of the out tensors."""
    if out is None:
        return results
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"out must be a tuple of {len(results)} tensors")
    return kind(*[finish_out(r, o) for r, o in zip(results, out)])


def _lapack_meta(shape, dtype):
    return meta_array(tuple(shape), dtype, lapack_strides(tuple(shape)))


def _same_dtype(name, a_word, b_word, a, b, dot=""):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name}Expected {a_word} and {b_word} to have the same dtype, but found {a_word} of "
                           f"type {dtype_word(a.dtype)} and {b_word} of type {dtype_word(b.dtype)} instead{dot}")


def _square(name, A, prefix=True):
    try:
        if A.dim() < 2:
            raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name + ': ' if prefix else ''}A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


# ---- triangular solves ----------------------------------------------------------------------------------


def trsm(t, b, upper, unit):
    """Solve T X = B for triangular T (reading only its triangle; `unit`: a diagonal of ones), as LAPACK's
    trsm: a column loop, vectorized over the batch and B's columns. A zero on the diagonal gives infinities
    and NaNs, as LAPACK's do."""
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    # (C order: a result's root buffer is row-major, NOTE [ Storage is derived, not stored ])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(t, b), copy=True, order="C")
    t = np.broadcast_to(t, batch + t.shape[-2:])
    n = t.shape[-1]
    with np.errstate(all="ignore"):
        for j in (range(n - 1, -1, -1) if upper else range(n)):
            if not unit:
                x[..., j, :] /= t[..., j, j, None]
            if upper:
                x[..., :j, :] -= t[..., :j, j, None] * x[..., j, None, :]
            else:
                x[..., j + 1:, :] -= t[..., j + 1:, j, None] * x[..., j, None, :]
    return x


def _solve_tri(a, b, upper, left, unit):
    if left:
        return trsm(a, b, upper, unit)
    return np.swapaxes(trsm(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, unit), -1, -2)


def _not_lapack(kernel, name=None):
    """torch's error for a dtype LAPACK does not take: the kernel's "not implemented" (or, given `name`, the
    function's own message for integers and bool, which it checks before its kernel sees them)."""
    def error(d, *a):
        if name is not None and not (d.is_floating_point or d.is_complex):
            return RuntimeError(named(f"{name}: Expected a floating point or complex tensor as input. Got "
                                      f"{dtype_word(d)}"))
        return not_implemented(kernel, d)
    return error


@defop("linalg_solve_triangular", "LinalgSolveTriangularBackward0", MATMUL, "same", save_output=True,
       dtypes=_LAPACK, error=_not_lapack("triangular_solve_cpu"))
def _solve_triangular(a, b, upper, left, unit):
    return _colmajor(_solve_tri(a, b, upper, left, unit))


@_solve_triangular.meta_
def _(a, b, upper, left, unit):
    batch = broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    shape = batch + tuple(b.shape[-2:])
    return _lapack_meta(shape, _dtypes.result_dtype([a, b]))


@_solve_triangular.derivative_
def _(g, a, b, upper, left, unit, *, out):
    gb = solve_triangular(a.mT, g, upper=not upper, left=left, unitriangular=unit)
    ga = None
    if needs_grad(0):
        ga = -(gb @ out.mT) if left else -(out.mT @ gb)
        ga = ga.triu(int(unit)) if upper else ga.tril(-int(unit))
    return ga, (gb if needs_grad(1) else None)


@typed
def solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular: bool = False, out=None):
    """The solution X of A X = B (or X A = B with left=False) for triangular A."""
    name = "linalg.solve_triangular"
    _square(name, A)
    if B.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if (A.shape[-1] != B.shape[-2]) if left else (A.shape[-1] != B.shape[-1]):
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({_s(A.shape[-2:])} and {_s(B.shape[-2:])})")
    return finish_out(dispatch(_solve_triangular, (A, B), (bool(upper), bool(left), bool(unitriangular))), out)


@method()
def triangular_solve(input, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False, *,
                     out=None):
    """torch.triangular_solve (deprecated): (solution of op(A) X = b, a copy of A)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("triangular_solve", triangular_solve, input, A, upper, transpose,
                                 unitriangular, out=out)
    _square("torch.triangular_solve", A, prefix=False)
    _same_dtype("", "b", "A", input, A, ".")
    x = deprecated("triangular_solve", _TRIANGULAR_SOLVE_WARNING, lambda: solve_triangular(
        A.mT if transpose else A, input, upper=bool(upper) != bool(transpose), unitriangular=unitriangular))
    # (the copy of A is column-major, as LAPACK's buffer is)
    batch = tuple(x.shape[:-2])
    if tuple(A.shape[:-2]) != batch:  # (the copy is of A broadcast to the solution's batch)
        A = A.expand(batch + tuple(A.shape[-2:]))
    return finish_outs(return_types.triangular_solve(x, A.mT.clone().contiguous().mT), out,
                       return_types.triangular_solve)


_TRIANGULAR_SOLVE_WARNING = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
    "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
    "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")


# ---- cholesky_solve, cholesky_inverse, torch.cholesky ------------------------------------------------------


def _chol_solve(b, c, upper):
    ch = np.swapaxes(c, -1, -2).conj()
    if upper:  # A = U^H U
        return trsm(c, trsm(ch, b, False, False), True, False)
    return trsm(ch, trsm(c, b, False, False), True, False)  # A = L L^H


@defop("cholesky_solve", "CholeskySolveBackward0", MATMUL, save_output=True, dtypes=_LAPACK,
       error=_not_lapack("cholesky_solve_cpu"))
def _cholesky_solve(b, c, upper):
    return _colmajor(_chol_solve(b, c, upper))


@_cholesky_solve.meta_
def _(b, c, upper):
    batch = broadcast_shapes(tuple(b.shape[:-2]), tuple(c.shape[:-2]))
    return _lapack_meta(batch + tuple(b.shape[-2:]), b._data.dtype)


@_cholesky_solve.derivative_
def _(g, b, c, upper, *, out):  # torch's cholesky_solve_backward (A = L L^H read as a full product)
    gb = cholesky_solve(g, c, upper)
    common = gb @ out.mT
    common = common + common.mT
    return gb, (-(c @ common) if upper else -(common @ c)) if needs_grad(1) else None


@method()
def cholesky_solve(input, input2, upper: bool = False, *, out=None):
    """The solution of A X = B given A's Cholesky factor (lower, or upper with `upper=True`)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("cholesky_solve", cholesky_solve, input, input2, upper, out=out)
    _square("cholesky_solve", input2, prefix=False)
    if input.dim() < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has 1 dimensions instead")
    _same_dtype("", "b", "A", input, input2, ".")
    if input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {input2.shape[-1]} by "
                           f"{input2.shape[-1]} but each b matrix is {input.shape[-2]} by {input.shape[-1]}")
    return finish_out(dispatch(_cholesky_solve, (input, input2), (bool(upper),)), out)


@method()
def cholesky_inverse(input, upper: bool = False, *, out=None):
    """The inverse of A from its Cholesky factor (A = L L^H, or U^H U with `upper=True`)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("cholesky_inverse", cholesky_inverse, input, upper, out=out)
    _square("cholesky_inverse", input)
    if input.dtype.name not in _LAPACK:
        raise not_implemented("cholesky_inverse_out_cpu", input.dtype)
    from .creation import eye

    I = eye(input.shape[-1], dtype=input.dtype, device=input.device).expand(input.shape)  # noqa: E741
    return finish_out(cholesky_solve(I, input, upper), out)


@method()
def cholesky(input, upper: bool = False, *, out=None):
    """torch.cholesky (deprecated): linalg.cholesky, with torch's older error name."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("cholesky", cholesky, input, upper, out=out)
    from .factorizations import _cholesky_ex

    _square("cholesky", input)
    if input.dtype.name not in _LAPACK:  # (torch.cholesky's kernel names itself, unlike linalg.cholesky)
        raise not_implemented("cholesky_cpu", input.dtype)
    L = deprecated("cholesky", _CHOLESKY_WARNING,
                   lambda: dispatch(_cholesky_ex, (input,), (bool(upper), "cholesky"))[0])
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]: after the kernel, as torch's
        from ..autograd._jvp import check_composite
        check_composite("cholesky", input)
    return finish_out(L, out)


_CHOLESKY_WARNING = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
    "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
    "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
    "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")


# ---- lu_factor, lu_unpack, lu ----------------------------------------------------------------------------

_LU_ZERO = ("U[{0},{0}] is zero and using it on lu_solve would result in a division by zero. If you still want "
            "to perform the factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


@defop("linalg_lu_factor_ex", "LinalgLuFactorExBackward0", MATMUL, saves="none", save_output=True,
       dtypes=_LAPACK, error=_not_lapack("lu_cpu"))
def _lu_factor_ex(a, check):
    lu, piv, info = getrf(a)
    if check:
        raise_for_info(info, a.ndim > 2, check, _LU_ZERO.format)
    return _colmajor(lu), piv, info


@_lu_factor_ex.meta_
def _(a, check):
    shape = tuple(a.shape)
    return (_lapack_meta(shape, a._data.dtype), meta_array(shape[:-2] + (min(shape[-2:]),), _dtypes.int32),
            meta_array(shape[:-2], _dtypes.int32))


@_lu_factor_ex.derivative_
def _(grads, a, check, *, out):
    g = grads[0]
    LU, piv = out[0], out[1]
    P, L, U = lu_unpack(LU, piv)
    m, n = LU.shape[-2:]
    k = min(m, n)
    return _lu_backward(g[..., :, :k], g[..., :k, :], P, L, U)


def _lu_backward(gL, gU, P, L, U):
    """torch's linalg_lu_backward (A = P L U), square, wide and tall, with its conjugations left to ember's
    complex rule (NOTE [ Complex gradients ])."""
    from .shape import cat

    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        ga = (L.mT @ gL).tril(-1) + (gU @ U.mT).triu()
        ga = solve_triangular(U.mT, ga, upper=False, left=False)
        return P @ solve_triangular(L.mT, ga, upper=True, unitriangular=True)
    if m < n:
        U1, gU1, gU2 = U[..., :, :k], gU[..., :, :k], gU[..., :, k:]
        ga = L.mT @ gL - gU.triu() @ U.mT
        ga = solve_triangular(U1.mT, ga.tril(-1), upper=False, left=False)
        ga = cat([ga + gU1.triu(), gU2], -1)
        return P @ solve_triangular(L.mT, ga, upper=True, unitriangular=True)
    L1, gL1, gL2 = L[..., :k, :], gL[..., :k, :], gL[..., k:, :]
    ga = gU @ U.mT - L.mT @ gL.tril(-1)
    ga = solve_triangular(L1.mT, ga.triu(), upper=True, unitriangular=True)
    ga = cat([ga + gL1.tril(-1), gL2], -2)
    return P @ solve_triangular(U.mT, ga, upper=False, left=False)


def _lu_checks(name, A, pivot):
    try:
        if A.dim() < 2:
            raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if A.dtype.name not in _LAPACK:
        raise not_implemented("lu_cpu", A.dtype)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU with partial pivoting: (LU, pivots, info), LAPACK's packed factors, 1-based int32 pivots and
    getrf's info per matrix (NOTE [ LU pivots ])."""
    _lu_checks("torch.lu_factor", A, pivot)
    check = "ember.linalg.lu_factor_ex" if check_errors else None
    return finish_outs(return_types.linalg_lu_factor_ex(*dispatch(_lu_factor_ex, (A,), (check,))), out,
                       return_types.linalg_lu_factor_ex)


def lu_factor(A, *, pivot=True, out=None):
    """LU with partial pivoting: (LU, pivots); a zero on U's diagonal raises LinAlgError."""
    _lu_checks("torch.lu_factor", A, pivot)
    LU, piv, _ = dispatch(_lu_factor_ex, (A,), ("ember.linalg.lu_factor",))
    return finish_outs(return_types.linalg_lu_factor(LU, piv), out, return_types.linalg_lu_factor)


@defop("lu_unpack", "LuUnpackBackward0", MATMUL, saves="meta", tags=("index",))
def _lu_unpack(lu, piv, unpack_data, unpack_pivots):
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.shape[:-2]
    empty = np.empty((0,), lu.dtype)
    if unpack_data:
        L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
        U = np.triu(lu[..., :k, :])
    else:
        L = U = empty
    if not unpack_pivots:
        return empty, L, U
    if piv.size and ((piv < 1).any() or (piv > m).any()):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                           "Did you properly pass the result of lu_factor?")
    perm = np.array(np.broadcast_to(np.arange(m), batch + (m,)))
    for j in range(piv.shape[-1]):  # LAPACK's interchanges, in order
        p = piv[..., j:j + 1].astype(np.intp) - 1
        pj, pp = perm[..., j:j + 1].copy(), np.take_along_axis(perm, p, -1)
        np.put_along_axis(perm, p, pj, -1)
        perm[..., j:j + 1] = pp
    P = np.zeros(batch + (m, m), lu.dtype)
    np.put_along_axis(P, perm[..., None, :], 1, -2)
    return P, L, U


@_lu_unpack.meta_
def _(lu, piv, unpack_data, unpack_pivots):
    *batch, m, n = lu.shape
    k = min(m, n)
    dt = lu._data.dtype
    e = meta_array((0,), dt)
    P = meta_array((*batch, m, m), dt) if unpack_pivots else e
    if not unpack_data:
        return P, e, e
    return P, meta_array((*batch, m, k), dt), meta_array((*batch, k, n), dt)


@_lu_unpack.derivative_
def _(grads, lu, piv, unpack_data, unpack_pivots):  # torch's lu_unpack_backward
    gL, gU = grads[1], grads[2]  # (unpack_data=False: the empty L and U refuse tril/triu, as torch's do)
    m, n = lu.shape[-2:]
    k = min(m, n)
    ga = gu = None
    if gU is not None:  # (U's term first, in torch's order of evaluation: its error comes first)
        gu = gU.triu()
        if m > k:
            gu = _pad(gu, -2, m - k)
    if gL is not None:
        ga = gL.tril(-1)
        if n > k:
            ga = _pad(ga, -1, n - k)
    return gu if ga is None else ga if gu is None else ga + gu


@_lu_unpack.jvp_
def _(inputs, params, out, tangents):
    """torch's lu_unpack JVP: the tangents of L and U are tril(dLU, -1) and triu(dLU) cut to their shapes. With
    unpack_data=False torch still computes them, and refuses to set them on the empty L and U (its size
    check's error, which ember's `_attach` gives alike): NOTE [ Ops torch's forward AD refuses ]."""
    t = tangents[0]
    if t is None:
        return None
    m, n = inputs[0].shape[-2:]
    k = min(m, n)
    return None, t.tril(-1)[..., :, :k], t.triu()[..., :k, :]


def _pad(t, dim, extra):
    from .shape import cat

    shape = list(t.shape)
    shape[dim] = extra
    return cat([t, t.new_zeros(shape)], dim)


@method()
def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True, unpack_pivots: bool = True, *, out=None):
    """(P, L, U) from `lu_factor`'s packed factors and pivots, with A = P L U (NOTE [ LU pivots ])."""
    try:
        if LU_pivots.dtype != _dtypes.int32:
            raise RuntimeError(named("ember.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                                     "ember.int32 dtype.\nNote: this function is intended to be used with the output "
                                     "produced by ember.linalg.lu_factor"))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if LU_data.dim() < 2:
        raise RuntimeError(named("ember.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                                 f"{list(LU_data.shape)} instead"))
    k = min(LU_data.shape[-2:])
    if unpack_pivots and tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                           "Did you properly pass the result of lu_factor?")
    P, L, U = dispatch(_lu_unpack, (LU_data, LU_pivots), (bool(unpack_data), bool(unpack_pivots)))
    res = return_types.lu_unpack(P.detach() if P.requires_grad else P, L, U)  # (P is not differentiable)
    return finish_outs(res, out, return_types.lu_unpack)


def lu(A, *, pivot=True, out=None):
    """linalg.lu: (P, L, U) with A = P L U."""
    _lu_checks("linalg.lu", A, pivot)
    LU, piv, _ = dispatch(_lu_factor_ex, (A,), (None,))
    return finish_outs(return_types.linalg_lu(*lu_unpack(LU, piv)), out, return_types.linalg_lu)


@method("lu", top=False)
def torch_lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (deprecated): (LU, pivots) or, with `get_infos`, (LU, pivots, infos); never raises."""
    _lu_checks("torch.lu_factor", A, pivot)
    LU, piv, info = deprecated("lu", _LU_WARNING, lambda: dispatch(_lu_factor_ex, (A,), (None,)))
    return finish_outs((LU, piv, info) if get_infos else (LU, piv), out)


_LU_WARNING = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed "
    "in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, "
    "get_infos=True)\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


# ---- lu_solve ----------------------------------------------------------------------------------------------


def _permute_rows(x, piv, reverse):
    """Apply LAPACK's row interchanges (in order, or undone in reverse order) to x, in place."""
    order = range(piv.shape[-1] - 1, -1, -1) if reverse else range(piv.shape[-1])
    for j in order:
        p = np.broadcast_to(piv[..., j].astype(np.intp) - 1, x.shape[:-2])[..., None, None]
        at = np.broadcast_to(p, x.shape[:-2] + (1, x.shape[-1]))
        rj = x[..., j:j + 1, :].copy()
        x[..., j:j + 1, :] = np.take_along_axis(x, at, -2)
        np.put_along_axis(x, at, rj, -2)
    return x


def _lu_solve_left(lu, piv, b, adjoint):
    batch = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(lu, b), copy=True, order="C")
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        _permute_rows(x, piv, False)
        return trsm(lu, trsm(lu, x, False, True), True, False)
    luh = np.swapaxes(lu, -1, -2).conj()  # A^H = U^H L^H P^T: X = P L^-H U^-H B
    return _permute_rows(trsm(luh, trsm(luh, x, False, False), True, True), piv, True)


@defop("linalg_lu_solve", "LinalgLuSolveBackward0", MATMUL, save_output=True, tags=("index", "not_holomorphic"),
       dtypes=_LAPACK, error=_not_lapack("linalg.lu_solve_cpu", "ember.linalg.lu_solve"))
def _lu_solve(lu, piv, b, left, adjoint):
    if left:
        return _colmajor(_lu_solve_left(lu, piv, b, adjoint))
    bh = np.swapaxes(b, -1, -2)
    if adjoint:  # X A^H = B  <=>  A X^H = B^H
        x = _lu_solve_left(lu, piv, bh.conj(), False).conj()
    else:  # X A = B  <=>  A^H conj(X)^T = conj(B)^T
        x = _lu_solve_left(lu, piv, bh.conj(), True).conj()
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


@_lu_solve.meta_
def _(lu, piv, b, left, adjoint):
    batch = broadcast_shapes(tuple(lu.shape[:-2]), tuple(piv.shape[:-1]), tuple(b.shape[:-2]))
    shape = batch + tuple(b.shape[-2:])
    return _lapack_meta(shape, b._data.dtype) if left else meta_array(shape, b._data.dtype)


@_lu_solve.derivative_
def _(g, LU, piv, B, left, adjoint, *, out):
    # torch's linalg_lu_solve_LU and B gradient, in torch's conjugate convention (A^H X = B is not
    # holomorphic in A: the op is tagged not_holomorphic, NOTE [ Complex gradients ])
    gB = lu_solve(LU, piv, g, left=left, adjoint=not adjoint) if needs_grad(2) else None
    gLU = None
    if needs_grad(0):
        X = out
        P, L, U = lu_unpack(LU, piv)
        if left != adjoint:
            gR = solve_triangular(U.mH, -(g if left else g.mH) @ (X.mH if left else X), upper=False)
            gL = solve_triangular(L.mH, gR @ U.mH, upper=True, unitriangular=True).tril(-1)
            gLU = gL + gR.triu()
        else:
            gR = -(P.mT @ (X if left else X.mH) @ (g.mH if left else g) @ P)
            gR = solve_triangular(L.mH, gR, upper=True, left=False, unitriangular=True)
            gU = solve_triangular(U.mH, L.mH @ gR, upper=False, left=False).triu()
            gLU = gR.tril(-1) + gU
    return gLU, None, gB


@typed
def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False, out=None):
    """The solution of A X = B (A^H X = B with `adjoint`; X A = B with left=False) from A's LU factors."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("lu_solve", lu_solve, LU, pivots, B, left=left, adjoint=adjoint, out=out)
    name = "linalg.lu_solve"
    try:
        if LU.dim() < 2:
            raise RuntimeError(f"{name}: The input tensor LU must have at least 2 dimensions.")
        if B.dim() < 2:
            raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(named(f"ember.{name}: A must be batches of square matrices, but they are "
                                 f"{LU.shape[-2]} by {LU.shape[-1]} matrices"))
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({_s(LU.shape[-2:])} and {_s(B.shape[-2:])})")
    if pivots.dtype != _dtypes.int32:
        raise RuntimeError(named(f"{name}: pivots should be a Tensor of scalar type ember.int32"))
    _same_dtype(f"{name}: ", "LU", "B", LU, B)
    return finish_out(dispatch(_lu_solve, (LU, pivots, B), (bool(left), bool(adjoint))), out)


@method("lu_solve", top=False)
def torch_lu_solve(input, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve (deprecated): linalg.lu_solve(LU_data, LU_pivots, input)."""
    return deprecated("lu_solve", _LU_SOLVE_WARNING, lambda: lu_solve(LU_data, LU_pivots, input, out=out))


_LU_SOLVE_WARNING = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
    "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
    "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)")

public.update(lu=torch_lu, lu_solve=torch_lu_solve)


# ---- ldl_factor, ldl_solve -------------------------------------------------------------------------------
# NOTE [ LDL pivots ]
# torch calls LAPACK's sytrf / hetrf with the lower triangle: the Bunch-Kaufman diagonal pivoting of sytf2,
# reproduced here matrix by matrix. pivots[k] > 0: a 1x1 block, rows k and pivots[k] - 1 interchanged;
# pivots[k] = pivots[k + 1] < 0: a 2x2 block, rows k + 1 and -pivots[k] - 1 interchanged. info is the first
# exactly zero diagonal block (1-based; the factorization still completes). torch zeroes LD's upper triangle.

_BK_ALPHA = (1 + 17 ** 0.5) / 8


def _mag(x, herm):
    """LAPACK's magnitude for pivot choice: |x| for real, |re| + |im| (cabs1) for complex."""
    return abs(x.real) + abs(x.imag) if np.iscomplexobj(x) else abs(x)


def _sytf2(a, herm):
    """One matrix: (factor in the lower triangle, 1-based pivots, info), as LAPACK's sytf2 / hetf2 ('L')."""
    A = np.array(a, copy=True)
    n = A.shape[-1]
    cj = np.conj if herm else (lambda x: x)
    piv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        akk = abs(A[k, k].real) if herm else _mag(A[k, k], herm)
        if k + 1 < n:
            col = _mag(A[k + 1:, k], herm)
            imax = k + 1 + int(np.argmax(col))
            colmax = col[imax - k - 1]
        else:
            imax, colmax = k, 0.0
        if akk == 0 and colmax == 0:
            info = info or k + 1
            kp = k
            if herm:
                A[k, k] = A[k, k].real
        else:
            # (a NaN: reference LAPACK stops with info = k; MKL's sytrf, which torch calls, goes on. ember takes
            # a 1x1 pivot in place and lets the NaNs spread, with no info)
            if akk >= _BK_ALPHA * colmax or np.isnan(akk) or np.isnan(colmax):
                kp = k
            else:
                rowmax = _mag(A[imax, k:imax], herm).max()
                if imax + 1 < n:
                    rowmax = max(rowmax, _mag(A[imax + 1:, imax], herm).max())
                aii = abs(A[imax, imax].real) if herm else _mag(A[imax, imax], herm)
                if akk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif aii >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # interchange rows and columns kk and kp of the trailing submatrix
                A[kp + 1:, kk], A[kp + 1:, kp] = A[kp + 1:, kp].copy(), A[kp + 1:, kk].copy()
                seg = A[kk + 1:kp, kk].copy()
                A[kk + 1:kp, kk] = cj(A[kp, kk + 1:kp])
                A[kp, kk + 1:kp] = cj(seg)
                if herm:
                    A[kp, kk] = np.conj(A[kp, kk])
                A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
                if kstep == 2:
                    A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]
            if kstep == 1:
                if herm:
                    A[k, k] = A[k, k].real
                if k + 1 < n:
                    d11 = 1 / (A[k, k].real if herm else A[k, k])
                    x = A[k + 1:, k].copy()
                    A[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, cj(x)))
                    A[k + 1:, k] = d11 * x
            else:
                if herm:
                    A[k, k], A[k + 1, k + 1] = A[k, k].real, A[k + 1, k + 1].real
                if k + 2 < n:
                    if herm:
                        d = abs(A[k + 1, k])
                        d11, d22 = A[k + 1, k + 1].real / d, A[k, k].real / d
                        tt = 1 / (d11 * d22 - 1)
                        d21 = A[k + 1, k] / d
                        d = tt / d
                        wk = d * (d11 * A[k + 2:, k] - d21 * A[k + 2:, k + 1])
                        wkp1 = d * (d22 * A[k + 2:, k + 1] - np.conj(d21) * A[k + 2:, k])
                    else:
                        d21 = A[k + 1, k]
                        d11, d22 = A[k + 1, k + 1] / d21, A[k, k] / d21
                        t = 1 / (d11 * d22 - 1)
                        d21 = t / d21
                        wk = d21 * (d11 * A[k + 2:, k] - A[k + 2:, k + 1])
                        wkp1 = d21 * (d22 * A[k + 2:, k + 1] - A[k + 2:, k])
                    A[k + 2:, k + 2:] -= np.tril(np.outer(A[k + 2:, k], cj(wk)) + np.outer(A[k + 2:, k + 1], cj(wkp1)))
                    A[k + 2:, k], A[k + 2:, k + 1] = wk, wkp1
                    if herm:
                        idx = np.arange(k + 2, n)
                        A[idx, idx] = A[idx, idx].real
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(A), piv, info


def _per_matrix_loop(fn, *arrays):
    """Run fn over the matrices of a batch (the leading dims of the first array)."""
    batch = arrays[0].shape[:-2]
    results = [fn(*(x[i] for x in arrays)) for i in np.ndindex(batch)]
    return results, batch


_LDL_ASSERT = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
               'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. ')


@defop("linalg_ldl_factor_ex", "NotImplemented", MATMUL, saves="none", dtypes=_LAPACK,
       error=lambda d, *a: RuntimeError(f"torch.linalg.ldl_factor_ex: Expected a floating point or complex "
                                        f"tensor as input. Got {dtype_word(d)}"))
def _ldl_factor_ex(a, hermitian, check):
    herm = bool(hermitian) and a.dtype.kind == "c"
    with np.errstate(all="ignore"):  # (infinities and NaNs go through, as in LAPACK)
        results, batch = _per_matrix_loop(lambda m: _sytf2(m, herm), a)
    n = a.shape[-1]
    ld = np.array([r[0] for r in results]).reshape(batch + (n, n)) if results else np.zeros(a.shape, a.dtype)
    piv = np.array([r[1] for r in results], np.int32).reshape(batch + (n,))
    info = np.array([r[2] for r in results], np.int32).reshape(batch)
    if check:
        hit = info.reshape(-1)[np.flatnonzero(info.reshape(-1))[:1]]
        if hit.size:  # torch has no message for sytrf's info > 0: its internal assert reports the code
            raise RuntimeError(named(f"{_LDL_ASSERT}{check}: Unknown error code: {int(hit[0])}."))
    return _colmajor(ld.astype(a.dtype, copy=False)), piv, info


@_ldl_factor_ex.meta_
def _(a, hermitian, check):
    shape = tuple(a.shape)
    return (_lapack_meta(shape, a._data.dtype), meta_array(shape[:-1], _dtypes.int32),
            meta_array(shape[:-2], _dtypes.int32))


def _no_derivative(name):
    def derivative(grads, *args):  # torch's node for an op without a formula (it fails only in backward)
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return derivative


_ldl_factor_ex.derivative_(_no_derivative("linalg_ldl_factor_ex"))


def _ldl_checks(name, A):
    _square(name, A)
    if A.dtype.name in ("float16", "bfloat16"):
        raise not_implemented("ldl_factor_kernel_cpu", A.dtype)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtype_word(A.dtype)}")


@typed
def ldl_factor_ex(A, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """The LDL^T (LDL^H with `hermitian`) factorization with Bunch-Kaufman pivoting: (LD, pivots, info)
    (NOTE [ LDL pivots ])."""
    _ldl_checks("torch.linalg.ldl_factor_ex", A)
    check = "ember.linalg.ldl_factor_ex" if check_errors else None
    res = return_types.linalg_ldl_factor_ex(*dispatch(_ldl_factor_ex, (A,), (bool(hermitian), check)))
    return finish_outs(res, out, return_types.linalg_ldl_factor_ex)


@typed
def ldl_factor(A, *, hermitian: bool = False, out=None):
    """The LDL^T (LDL^H with `hermitian`) factorization with Bunch-Kaufman pivoting: (LD, pivots)."""
    _ldl_checks("torch.linalg.ldl_factor_ex", A)
    LD, piv, _ = dispatch(_ldl_factor_ex, (A,), (bool(hermitian), "ember.linalg.ldl_factor"))
    return finish_outs(return_types.linalg_ldl_factor(LD, piv), out, return_types.linalg_ldl_factor)


def _sytrs(ld, piv, b, herm):
    """One matrix: solve A X = B from sytf2's factors (LAPACK's sytrs / hetrs, 'L')."""
    A, B = ld, np.array(b, copy=True)
    n = A.shape[-1]
    cj = np.conj if herm else (lambda x: x)
    k = 0
    while k < n:  # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            B[k + 1:] -= np.outer(A[k + 1:, k], B[k])
            B[k] = B[k] / (A[k, k].real if herm else A[k, k])
            k += 1
        else:
            kp = -piv[k] - 1
            B[[k + 1, kp]] = B[[kp, k + 1]]
            B[k + 2:] -= np.outer(A[k + 2:, k], B[k]) + np.outer(A[k + 2:, k + 1], B[k + 1])
            akm1k = A[k + 1, k]
            akm1, ak = A[k, k] / cj(akm1k), A[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = B[k] / cj(akm1k), B[k + 1] / akm1k
            B[k], B[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H for hetrs)
        if piv[k] > 0:
            B[k] -= cj(A[k + 1:, k]) @ B[k + 1:]
            kp = piv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            k -= 1
        else:
            B[k] -= cj(A[k + 1:, k]) @ B[k + 1:]
            B[k - 1] -= cj(A[k + 1:, k - 1]) @ B[k + 1:]
            kp = -piv[k] - 1
            B[[k, kp]] = B[[kp, k]]
            k -= 2
    return B


@defop("linalg_ldl_solve", "NotImplemented", MATMUL, saves="none", tags=("index",), dtypes=_LAPACK,
       error=_not_lapack("ldl_solve_kernel_cpu", "ember.linalg.ldl_solve"))
def _ldl_solve(ld, piv, b, hermitian):
    herm = bool(hermitian) and ld.dtype.kind == "c"
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    x = np.empty(b.shape, np.result_type(ld, b))
    with np.errstate(all="ignore"):
        for i in np.ndindex(batch):
            x[i] = _sytrs(ld[i], piv[i].astype(np.intp), b[i].astype(x.dtype), herm)
    return _colmajor(x)


@_ldl_solve.meta_
def _(ld, piv, b, hermitian):
    batch = broadcast_shapes(tuple(ld.shape[:-2]), tuple(piv.shape[:-1]), tuple(b.shape[:-2]))
    return _lapack_meta(batch + tuple(b.shape[-2:]), b._data.dtype)


_ldl_solve.derivative_(_no_derivative("linalg_ldl_solve"))


@typed
def ldl_solve(LD, pivots, B, *, hermitian: bool = False, out=None):
    """The solution of A X = B from `ldl_factor`'s (LD, pivots)."""
    name = "torch.linalg.ldl_solve"
    _square(name, LD)
    if B.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype.name == "bool":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {dtype_word(pivots.dtype)}")
    _same_dtype("", "b", "A", B, LD, ".")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {LD.shape[-1]} by "
                           f"{LD.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    return finish_out(dispatch(_ldl_solve, (LD, pivots, B), (bool(hermitian),)), out)
