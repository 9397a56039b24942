"""ember.return_types: the named tuples ops like `max(dim)` and `sort` return (torch.return_types)."""

import collections

from . import _naming

__all__ = ["max", "min", "sort", "topk", "kthvalue", "median", "mode", "aminmax", "cummax", "cummin",
           "slogdet", "qr", "svd", "linalg_svd", "linalg_eigh", "linalg_qr",
           "linalg_slogdet", "nanmedian", "lstsq", "linalg_lstsq", "geqrf", "frexp",
           "histogram", "histogramdd", "linalg_inv_ex", "linalg_solve_ex", "linalg_cholesky_ex", "linalg_lu_factor",
           "linalg_lu_factor_ex", "triangular_solve",
           # linalg (L)
           "linalg_lu", "lu_unpack", "linalg_eig", "linalg_ldl_factor", "linalg_ldl_factor_ex"]


def _make(name, fields):
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"{_naming.prefix}.return_types.{name}(\n{body})"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": "ember.return_types"})


max = _make("max", "values indices")  # noqa: A001
min = _make("min", "values indices")  # noqa: A001
sort = _make("sort", "values indices")
topk = _make("topk", "values indices")
kthvalue = _make("kthvalue", "values indices")
median = _make("median", "values indices")
nanmedian = _make("nanmedian", "values indices")
mode = _make("mode", "values indices")
cummax = _make("cummax", "values indices")
cummin = _make("cummin", "values indices")
aminmax = _make("aminmax", "min max")
slogdet = _make("slogdet", "sign logabsdet")
qr = _make("qr", "Q R")
svd = _make("svd", "U S V")
linalg_svd = _make("linalg_svd", "U S Vh")
linalg_eigh = _make("linalg_eigh", "eigenvalues eigenvectors")
linalg_qr = _make("linalg_qr", "Q R")
linalg_slogdet = _make("linalg_slogdet", "sign logabsdet")
lstsq = linalg_lstsq = _make("linalg_lstsq", "solution residuals rank singular_values")
geqrf = _make("geqrf", "a tau")
frexp = _make("frexp", "mantissa exponent")
histogram = _make("histogram", "hist bin_edges")
histogramdd = _make("histogramdd", "hist bin_edges")
linalg_inv_ex = _make("linalg_inv_ex", "inverse info")
linalg_solve_ex = _make("linalg_solve_ex", "result info")
linalg_cholesky_ex = _make("linalg_cholesky_ex", "L info")
linalg_lu_factor = _make("linalg_lu_factor", "LU pivots")
linalg_lu_factor_ex = _make("linalg_lu_factor_ex", "LU pivots info")
triangular_solve = _make("triangular_solve", "solution cloned_coefficient")

# ---- linalg (L) ----
linalg_lu = _make("linalg_lu", "P L U")
lu_unpack = _make("lu_unpack", "P L U")
linalg_eig = _make("linalg_eig", "eigenvalues eigenvectors")
linalg_ldl_factor = _make("linalg_ldl_factor", "LD pivots")
linalg_ldl_factor_ex = _make("linalg_ldl_factor_ex", "LD pivots info")

# torch returns `<name>_out` types from the out= forms (torch.max(x, 1, out=(v, i)) is a return_types.max_out),
# with the fields of the type they mirror; finish_out (ember/_ops/_util.py) picks them.
_OUT = ("aminmax", "cummax", "cummin", "frexp", "geqrf", "histogram", "kthvalue", "linalg_cholesky_ex",
        "linalg_eigh", "linalg_inv_ex", "linalg_lstsq", "linalg_lu_factor", "linalg_lu_factor_ex", "linalg_qr",
        "linalg_slogdet", "linalg_solve_ex", "linalg_svd", "max", "median", "min", "mode", "nanmedian", "qr",
        "slogdet", "sort", "svd", "topk", "triangular_solve")
for _name in _OUT:
    globals()[_name + "_out"] = _make(_name + "_out", " ".join(globals()[_name]._fields))
__all__ += [n + "_out" for n in _OUT]
del _name
