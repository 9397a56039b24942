"""ember.linalg: torch.linalg's functions (norms, solvers, decompositions), defined in ember/_ops/."""

from ._ops.copying import linalg_cross as cross
from ._ops.factorizations import (
           cholesky,
           cholesky_ex,
           det,
           eigh,
           eigvalsh,
           inv,
           inv_ex,
           lstsq,
           matrix_power,
           matrix_rank,
           pinv,
           qr,
           slogdet,
           solve,
           solve_ex,
           svd,
           svdvals,
)
from ._ops.lapack import _LinAlgError as LinAlgError
from ._ops.linalg import matmul
from ._ops.linalg_ext import matrix_norm, multi_dot, norm, vector_norm
from ._ops.linalg_funcs import (  # linalg (L)
           cond,
           diagonal,
           eig,
           eigvals,
           householder_product,
           tensorinv,
           tensorsolve,
           vander,
           vecdot,
)
from ._ops.linalg_funcs import matrix_exp as matrix_exp
from ._ops.lu import ldl_factor, ldl_factor_ex, ldl_solve, lu, lu_factor, lu_factor_ex, lu_solve  # linalg (L)
from ._ops.lu import solve_triangular as solve_triangular

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eigh", "eigvalsh", "inv", "inv_ex", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "solve_ex", "svd", "svdvals", "vector_norm", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "solve_triangular", "cond", "diagonal", "eig", "eigvals",
           "householder_product", "matrix_exp", "ldl_factor", "ldl_factor_ex", "ldl_solve", "tensorinv",
           "tensorsolve", "vander", "vecdot"]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
