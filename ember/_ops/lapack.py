"""torch's linear-algebra errors, and the LAPACK routines whose error codes they carry, in NumPy.

NOTE [ LAPACK errors ]
torch raises `torch.linalg.LinAlgError` (the class `torch._C._LinAlgError`, a RuntimeError) when LAPACK
reports that a matrix could not be handled, with LAPACK's own number in the message: getrf's `info` (the
first zero pivot of U, 1-based) for inv and solve, potrf's (the order of the first leading minor that is
not positive) for cholesky, and for a batch the first failing element ("(Batch element 1): ..."). The `_ex`
variants return those numbers as an int32 `info` tensor instead of raising, beside what LAPACK left in
its output.

NumPy's LAPACK wrappers only say "Singular matrix" (and compute nothing for a batch in which one matrix
fails), so the kernels keep NumPy's fast calls for the matrices that succeed and, only when one fails or
an `_ex` variant needs more, run the unblocked reference algorithms here (getf2, getrs, potf2), which
give LAPACK's pivots, info codes and partial results. They loop over columns (not elements) and are
vectorized over the batch and the rows.

torch's CPU build runs Intel's oneMKL, which checks its inputs for NaN: an SVD of a matrix with a NaN
fails ("contained non-finite values"), and lstsq's drivers reject NaN as an illegal argument (torch then
fails an internal assert naming the argument). `has_nan` and `lstsq_nan_error` reproduce those.
"""

import numpy as np

from .._naming import named


class _LinAlgError(RuntimeError):
    """Raised when a linear-algebra function fails on its input (torch.linalg.LinAlgError)."""


_LinAlgError.__module__ = "ember._C"  # where torch's class lives: <class 'torch._C._LinAlgError'>


def batch_prefix(index, batched):
    """torch's "(Batch element k): " for the k-th matrix of a batch, nothing for one matrix."""
    return f"(Batch element {index}): " if batched else ""


def first_failure(info):
    """(flat batch index, info value) of the first nonzero info code, or None."""
    flat = np.asarray(info).reshape(-1)
    bad = np.flatnonzero(flat)
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


def raise_for_info(info, batched, name, message, error=None):
    """Raise torch's `name: (Batch element k): message(code)` for the first nonzero code of `info`."""
    hit = first_failure(info)
    if hit is not None:
        text = f"{named(name)}: {batch_prefix(hit[0], batched)}{message(hit[1])}"
        raise (error or _LinAlgError)(text)


def has_nan(a):
    """Per matrix of a batch: whether it holds a NaN (as MKL's input checks find)."""
    return np.isnan(a).any(axis=(-2, -1))


# ---- getrf / getrs: LU with partial pivoting ---------------------------------------------------------


def _pivot_rows(col):
    """LAPACK's i?amax on each column of a batch: the first largest |x| (|re| + |im| for complex); a NaN
    never wins a comparison, so a NaN first entry stays the pivot and later NaNs are skipped."""
    mag = np.abs(col.real) + np.abs(col.imag) if np.iscomplexobj(col) else np.abs(col)
    first_nan = np.isnan(mag[..., 0])
    idx = np.argmax(np.where(np.isnan(mag), -1.0, mag), axis=-1)
    return np.where(first_nan, 0, idx)


def getrf(a):
    """LU factorization with partial pivoting of each matrix in `a` (..., m, n), as LAPACK's getf2.

    Returns (LU, pivots, info): the packed factors (unit L below the diagonal, U on and above), the 1-based
    int32 row interchanges, and per matrix the 1-based index of U's first zero diagonal element (0 if none).
    """
    lu = np.array(a, dtype=a.dtype, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.shape[:-2]
    pivots = np.zeros(batch + (k,), np.int32)
    info = np.zeros(batch, np.int32)
    rows = np.arange(m)
    with np.errstate(all="ignore"):
        for j in range(k):
            p = j + _pivot_rows(lu[..., j:, j])
            pivots[..., j] = p + 1
            swap = p != j
            if swap.any():
                rj = lu[..., j:j + 1, :].copy()
                rp = np.take_along_axis(lu, np.broadcast_to(p[..., None, None], batch + (1, n)), -2)
                row = rows.reshape((1,) * len(batch) + (m, 1))
                lu = np.where(row == j, rp, np.where(row == p[..., None, None], rj, lu))
            piv = lu[..., j, j]
            zero = piv == 0
            info = np.where(zero & (info == 0), j + 1, info)
            scale = np.where(zero, 1, piv)  # a zero pivot leaves its column as it is, as getf2 does
            lu[..., j + 1:, j] = lu[..., j + 1:, j] / scale[..., None]
            lu[..., j + 1:, j + 1:] -= lu[..., j + 1:, j, None] * lu[..., j, None, j + 1:]
    return lu, pivots, info


def getrs(lu, pivots, b):
    """Solve A X = B from getrf's factors (LAPACK's getrs: row interchanges, then unit-lower and upper
    triangular solves); a zero pivot gives the infinities and NaNs LAPACK gives."""
    x = np.array(np.broadcast_to(b, lu.shape[:-2] + b.shape[-2:]), dtype=np.result_type(lu, b), copy=True)
    n = lu.shape[-1]
    with np.errstate(all="ignore"):
        for j in range(pivots.shape[-1]):
            p = pivots[..., j].astype(np.intp) - 1
            rj = x[..., j, :].copy()
            at = np.broadcast_to(p[..., None, None], p.shape + (1, x.shape[-1]))
            x[..., j, :] = np.take_along_axis(x, at, -2)[..., 0, :]
            np.put_along_axis(x, at, rj[..., None, :], -2)
        for j in range(n):
            x[..., j + 1:, :] -= lu[..., j + 1:, j, None] * x[..., j, None, :]
        return trsm_upper(lu, x)


def trsm_upper(u, x):
    """Back substitution U X = B on each column of B (LAPACK's trsm, upper, not unit), in place on x."""
    for j in range(u.shape[-1] - 1, -1, -1):
        x[..., j, :] = x[..., j, :] / u[..., j, j, None]
        x[..., :j, :] -= u[..., :j, j, None] * x[..., j, None, :]
    return x


# ---- potrf: Cholesky -----------------------------------------------------------------------------------


def potrf(a):
    """The lower Cholesky factor of each matrix in `a` (reading its lower triangle), as LAPACK's potf2.

    Returns (L, info): where a leading minor of order k is not positive (or NaN), info is k, L's column k
    holds the non-positive value on the diagonal and the columns from k on hold A's own lower triangle
    (what LAPACK leaves); the strict upper triangle is zero.
    """
    L = np.tril(a)
    n = a.shape[-1]
    info = np.zeros(a.shape[:-2], np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            row = L[..., j, :j]
            d = (L[..., j, j] - np.sum(row * row.conj(), -1)).real
            bad = (info == 0) & ~(d > 0)
            info = np.where(bad, j + 1, info)
            live = info == 0
            root = np.where(live, np.sqrt(np.where(live, d, 1)), d)
            done = ~live & ~bad  # matrices that failed earlier keep what they had
            L[..., j, j] = np.where(done, L[..., j, j], root)
            below = (L[..., j + 1:, j] - (L[..., j + 1:, :j] @ row.conj()[..., None])[..., 0]
                     if j else L[..., j + 1:, j]) / np.where(live, root, 1)[..., None]
            L[..., j + 1:, j] = np.where(live[..., None], below, L[..., j + 1:, j])
    return L, info
