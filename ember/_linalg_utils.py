"""Linear algebra helpers of lobpcg and the low-rank methods (ember._linalg_utils, ported from PyTorch,
BSD-3-Clause). ember has no sparse layouts: every tensor is dense."""

import ember

from ._tensor import Tensor


def is_sparse(A: Tensor) -> bool:
    """Check if tensor A is a sparse COO tensor.

    All other sparse storage formats (CSR, CSC, etc...) will return False.
    """
    if isinstance(A, ember.Tensor):
        return A.layout == ember.sparse_coo

    error_str = "expected Tensor"
    if not ember.jit.is_scripting():
        error_str += f" but got {type(A)}"
    raise TypeError(error_str)


def get_floating_dtype(A: Tensor) -> ember.dtype:
    """Return the floating point dtype of tensor A.

    Integer types map to float32.
    """
    dtype = A.dtype
    if dtype in (ember.float16, ember.float32, ember.float64):
        return dtype
    return ember.float32


def matmul(A: Tensor | None, B: Tensor) -> Tensor:
    """Multiply two matrices.

    If A is None, return B. A can be sparse or dense. B is always
    dense.
    """
    if A is None:
        return B
    return ember.matmul(A, B)


def bform(X: Tensor, A: Tensor | None, Y: Tensor) -> Tensor:
    """Return bilinear form of matrices: :math:`X^T A Y`."""
    return matmul(X.mT, matmul(A, Y))


def qform(A: Tensor | None, S: Tensor) -> Tensor:
    """Return quadratic form :math:`S^T A S`."""
    return bform(S, A, S)


def basis(A: Tensor) -> Tensor:
    """Return orthogonal basis of A columns."""
    return ember.linalg.qr(A).Q


def symeig(A: Tensor, largest: bool | None = False) -> tuple[Tensor, Tensor]:
    """Return eigenpairs of A with specified ordering."""
    if largest is None:
        largest = False
    E, Z = ember.linalg.eigh(A, UPLO="U")
    # assuming that E is ordered
    if largest:
        E = ember.flip(E, (-1,))  # (positional: flip(dims=) is issue 15, area T)
        Z = ember.flip(Z, (-1,))
    return E, Z


# These functions were deprecated and removed
# This nice error message can be removed in version 1.13+
