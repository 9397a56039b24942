"""OpInfo entries for the rest of torch.linalg and its torch.* / Tensor spellings (area L): LU (lu_factor,
lu, lu_unpack, lu_solve), triangular and Cholesky solves, LDL, eig / eigvals, matrix_exp, Householder
products, cond, vecdot, vander, tensorinv / tensorsolve, torch.qr / torch.svd, the low-rank methods and
torch.cond. See NOTE [ Table files by area ] in op_db.py.

Decompositions whose factors are defined up to signs or phases (eigenvectors, singular vectors) enter
through functions those do not change. `node=False` where torch's function is one node and ember's the
composite of a few (the gradients are still held to torch's).
"""

import numpy as np
import torch
from op_db import FLOAT, Sample, _err, add, arr, same

_C = ("complex64", "complex128")


def _m(dtype, rng, shape, diag=0.0):
    """A random matrix (batch) in `dtype`, complex where the dtype is, plus `diag` on the diagonal (which then
    stays real, as a Cholesky factor's is)."""
    a = rng.uniform(-1, 1, shape)
    if dtype in _C:
        im = rng.uniform(-1, 1, shape)
        if diag:
            im = im * (1 - np.eye(shape[-2], shape[-1]))
        a = a + 1j * im
    if diag:
        a = a + diag * np.eye(shape[-2], shape[-1])
    return np.asarray(a).astype(dtype)


def _lu(a):
    """(LU, pivots) of float64 data, from torch (the oracle) for the entries that take a factorization."""
    lu, piv, _ = torch.linalg.lu_factor_ex(torch.from_numpy(np.asarray(a, np.complex128 if a.dtype.kind == "c"
                                                                     else np.float64)))
    return np.ascontiguousarray(lu.numpy().astype(a.dtype)), piv.numpy()  # (C order: gradcheck perturbs in place)


def _sym(dtype, rng, shape, herm=False):
    a = _m(dtype, rng, shape)
    t = np.swapaxes(a, -1, -2)
    return a + (t.conj() if herm else t)


def _seeded(fn):
    def run(lib, *xs, **kw):
        lib.manual_seed(0)
        return fn(lib, *xs, **kw)
    return run


# ---- triangular and Cholesky solves ---------------------------------------------------------------------

add("linalg.solve_triangular", fn=lambda lib, a, b, **k: lib.linalg.solve_triangular(a, b, **k),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3), 3), _m(d, r, (3, 2)), upper=True),
                          Sample(_m(d, r, (2, 3, 3), 3), _m(d, r, (3, 4)), upper=False),
                          Sample(_m(d, r, (3, 3), 3), _m(d, r, (2, 4, 3)), upper=True, left=False),
                          Sample(_m(d, r, (3, 3), 3), _m(d, r, (3, 2)), upper=False, unitriangular=True),
                          Sample(_m(d, r, (0, 3, 3)), _m(d, r, (3, 1)), upper=True)],
    out=True, rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), arr(r, (3, 2), "float32"), upper=True),
                lambda r: Sample(arr(r, (3, 3), "float32"), arr(r, (4, 2), "float32"), upper=True),
                lambda r: Sample(arr(r, (3, 3), "float32"), arr(r, (2, 4), "float32"), upper=True, left=False),
                lambda r: Sample(arr(r, (3, 3), "float32"), arr(r, (3,), "float32"), upper=True),
                lambda r: Sample(arr(r, (3, 3), "int64"), arr(r, (3, 2), "int64"), upper=True)))
add("triangular_solve", fn=lambda lib, b, a, **k: tuple(lib.triangular_solve(b, a, **k)),
    samples=lambda d, r: [Sample(_m(d, r, (3, 2)), _m(d, r, (3, 3), 3)),
                          Sample(_m(d, r, (2, 3, 2)), _m(d, r, (3, 3), 3), upper=False, transpose=True),
                          Sample(_m(d, r, (3, 2)), _m(d, r, (3, 3), 3), unitriangular=True)],
    rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(arr(r, (3, 2), "float32"), arr(r, (4, 3), "float32")),
                lambda r: Sample(arr(r, (3, 2), "float32"), arr(r, (3, 3), "float64"))))
add("Tensor.triangular_solve", fn=lambda lib, b, a: tuple(b.triangular_solve(a)),
    samples=same(lambda d, r: Sample(_m(d, r, (3, 2)), _m(d, r, (3, 3), 3))), rtol=1e-5, atol=1e-5, node=False)
add("cholesky_solve", fn=lambda lib, b, c, *a: lib.cholesky_solve(b, c, *a),
    samples=lambda d, r: [Sample(_m(d, r, (3, 2)), _m(d, r, (3, 3), 3)),
                          Sample(_m(d, r, (2, 3, 2)), _m(d, r, (3, 3), 3), True),
                          Sample(_m(d, r, (3, 1)), _m(d, r, (2, 3, 3), 3))],
    # torch's gradient of the factor reads it as a full matrix (A = L L^H with L's unread triangle too), which is
    # not the derivative of what the solve computes: held to torch by test_backward, not to finite differences
    rtol=1e-5, atol=1e-5, gradcheck=False,
    errors=_err(lambda r: Sample(arr(r, (3, 2), "float32"), arr(r, (4, 3), "float32")),
                lambda r: Sample(arr(r, (3, 2), "float32"), arr(r, (3, 3), "float64")),
                lambda r: Sample(arr(r, (4, 2), "float32"), arr(r, (3, 3), "float32"))))
add("Tensor.cholesky_solve", fn=lambda lib, b, c: b.cholesky_solve(c),
    samples=same(lambda d, r: Sample(_m(d, r, (3, 2)), _m(d, r, (3, 3), 3))), rtol=1e-5, atol=1e-5, gradcheck=False)
add("cholesky_inverse", fn=lambda lib, c, *a: lib.cholesky_inverse(c, *a),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3), 3)), Sample(_m(d, r, (2, 3, 3), 3), True)],
    rtol=1e-5, atol=1e-5, node=False, gradcheck=False,  # (as cholesky_solve's)
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32")), lambda r: Sample(arr(r, (3,), "float32"))))
add("Tensor.cholesky_inverse", fn=lambda lib, c: c.cholesky_inverse(),
    samples=same(lambda d, r: Sample(_m(d, r, (3, 3), 3))), rtol=1e-5, atol=1e-5, node=False, gradcheck=False)
add("cholesky", fn=lambda lib, a, *k, raw=False: lib.cholesky(
    a if raw else a @ a.mT.conj() + lib.eye(a.shape[-1], dtype=a.dtype), *k),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3), 1)), Sample(_m(d, r, (2, 3, 3), 1), True)],
    rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(np.ones((3, 3), np.float32) * -1, raw=True)))
add("Tensor.cholesky", fn=lambda lib, a: (a @ a.mT + lib.eye(3, dtype=a.dtype)).cholesky(),
    samples=same(lambda d, r: Sample(_m(d, r, (3, 3), 1))), rtol=1e-5, atol=1e-5, node=False)

# ---- LU ------------------------------------------------------------------------------------------------

add("linalg.lu_factor", fn=lambda lib, a: tuple(lib.linalg.lu_factor(a)),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(_m(d, r, (2, 4, 4))), Sample(_m(d, r, (3, 5))),
                          Sample(_m(d, r, (5, 3)))],
    rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(np.zeros((3, 3), np.float32)), lambda r: Sample(np.zeros((2, 3, 3))),
                lambda r: Sample(arr(r, (3,), "float32")), lambda r: Sample(arr(r, (3, 3), "int64"))))
add("linalg.lu_factor_ex", fn=lambda lib, a, **k: tuple(lib.linalg.lu_factor_ex(a, **k)),
    samples=lambda d, r: [Sample(_m(d, r, (2, 3, 3))), Sample(np.zeros((2, 3, 3)).astype(d)),
                          Sample(_m(d, r, (4, 2)))],
    rtol=1e-5, atol=1e-5, gradcheck=False,
    errors=_err(lambda r: Sample(np.zeros((2, 3, 3)), check_errors=True),
                lambda r: Sample(arr(r, (3, 3), "float32"), pivot=False)))
add("linalg.lu", fn=lambda lib, a: tuple(lib.linalg.lu(a))[1:],  # (P, not differentiable, apart: gradcheck
    samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(_m(d, r, (2, 3, 5))), Sample(_m(d, r, (5, 3)))],  # sums
    rtol=1e-5, atol=1e-5, node=False,                                          # the float outputs it is given)
    errors=_err(lambda r: Sample(arr(r, (3,), "float32")), lambda r: Sample(arr(r, (3, 3), "int64"))))
add("linalg.lu", id="linalg.lu_P", fn=lambda lib, a: lib.linalg.lu(a).P, grad=False,
    samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(_m(d, r, (2, 5, 3)))])
add("Tensor.lu", fn=lambda lib, a, **k: tuple(a.lu(**k)),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(np.zeros((2, 3, 3)).astype(d), get_infos=True)],
    rtol=1e-5, atol=1e-5, gradcheck=False)


def _lu_sample(shape, extra=None):
    def make(d, r):
        lu, piv = _lu(_m(d, r, shape))
        return Sample(lu, piv) if extra is None else Sample(lu, piv, _m(d, r, extra))
    return make


add("lu_unpack", fn=lambda lib, lu, piv: tuple(lib.lu_unpack(lu, piv))[1:],
    samples=lambda d, r: [_lu_sample((3, 3))(d, r), _lu_sample((2, 3, 5))(d, r), _lu_sample((5, 3))(d, r)],
    grad_inputs=(0,), rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int64)),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.zeros(3, np.int32)),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(2, np.int32))))
add("lu_unpack", id="lu_unpack_flags", fn=lambda lib, lu, piv, *a: tuple(lib.lu_unpack(lu, piv, *a)), grad=False,
    samples=lambda d, r: [_lu_sample((4, 3))(d, r), Sample(*_lu_sample((3, 3))(d, r).inputs, False),
                          Sample(*_lu_sample((3, 5))(d, r).inputs, True, False)], rtol=1e-5, atol=1e-5)
add("linalg.lu_solve", fn=lambda lib, lu, piv, b, **k: lib.linalg.lu_solve(lu, piv, b, **k).resolve_conj(),
    samples=lambda d, r: [Sample(*_lu_sample((3, 3), (3, 2))(d, r).inputs),
                          Sample(*_lu_sample((2, 3, 3), (3, 2))(d, r).inputs, adjoint=True),
                          Sample(*_lu_sample((3, 3), (2, 3))(d, r).inputs, left=False),
                          Sample(*_lu_sample((3, 3), (2, 2, 3))(d, r).inputs, left=False, adjoint=True)],
    grad_inputs=(0, 2), out=True, rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int32), arr(r, (4, 2), "float32")),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int32), arr(r, (3,), "float32")),
                lambda r: Sample(arr(r, (3, 4), "float32"), np.ones(3, np.int32), arr(r, (3, 2), "float32")),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int64), arr(r, (3, 2), "float32")),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int32), arr(r, (3, 2), "float64"))))
add("lu_solve", fn=lambda lib, b, lu, piv: lib.lu_solve(b, lu, piv),
    samples=same(lambda d, r: (lambda s: Sample(s.inputs[2], s.inputs[0], s.inputs[1]))(
        _lu_sample((3, 3), (3, 2))(d, r))), grad_inputs=(0, 1), rtol=1e-5, atol=1e-5)

# ---- LDL -------------------------------------------------------------------------------------------------

add("linalg.ldl_factor_ex", fn=lambda lib, a, **k: tuple(lib.linalg.ldl_factor_ex(a, **k)),
    samples=lambda d, r: [Sample(_sym(d, r, (4, 4))), Sample(_sym(d, r, (2, 5, 5))),
                          Sample(_sym(d, r, (4, 4), herm=True), hermitian=True), Sample(np.zeros((3, 3)).astype(d))],
    grad=False, rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32")), lambda r: Sample(arr(r, (3, 3), "int64")),
                lambda r: Sample(np.zeros((2, 3, 3)), check_errors=True)))
add("linalg.ldl_factor", fn=lambda lib, a, **k: tuple(lib.linalg.ldl_factor(a, **k)),
    samples=lambda d, r: [Sample(_sym(d, r, (4, 4))), Sample(_sym(d, r, (4, 4), herm=True), hermitian=True)],
    grad=False, rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(np.zeros((3, 3))), lambda r: Sample(np.ones((3, 3)))))


def _ldl_sample(shape, b_shape, herm=False):
    def make(d, r):
        a = _sym(d, r, shape, herm)
        if np.dtype(a.dtype).kind in "fc" and a.dtype.itemsize > 2:
            ld, piv = (t.numpy() for t in torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=herm))
        else:  # (a dtype LAPACK refuses: the factorization of its float64 data, for the error case)
            ld, piv, _ = (t.numpy() for t in torch.linalg.ldl_factor_ex(torch.from_numpy(a.astype(np.float64))))
        return Sample(np.ascontiguousarray(ld.astype(d)), piv, _m(d, r, b_shape), hermitian=herm)
    return make


add("linalg.ldl_solve", fn=lambda lib, ld, piv, b, **k: lib.linalg.ldl_solve(ld, piv, b, **k),
    samples=lambda d, r: [_ldl_sample((4, 4), (4, 2))(d, r), _ldl_sample((2, 4, 4), (4, 3))(d, r),
                          _ldl_sample((4, 4), (4, 1), herm=True)(d, r)],
    grad=False, rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int32), arr(r, (4, 2), "float32")),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.float32), arr(r, (3, 2), "float32")),
                lambda r: Sample(arr(r, (3, 3), "float32"), np.ones(3, np.int32), arr(r, (3, 2), "float64"))))

# ---- eig, eigvals, matrix_exp --------------------------------------------------------------------------


def _real_view(lib, z):
    return lib.view_as_real(z) if z.is_complex() else z


add("linalg.eigvals", fn=lambda lib, a: _real_view(lib, lib.linalg.eigvals(a)),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(_m(d, r, (2, 4, 4)))], rtol=1e-5, atol=1e-5,
    node=False,
    # (a NaN: torch's eig raises, its eigvals hands the NaN to MKL, which fails or crashes; ember raises)
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32")), lambda r: Sample(arr(r, (3,), "float32"))))
add("linalg.eig", fn=lambda lib, a: _real_view(lib, (lambda lv: lv[1] @ lv[0].diag_embed() @ lib.linalg.inv(lv[1]))(
    lib.linalg.eig(a))), samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(_m(d, r, (2, 3, 3)))],
    rtol=1e-5, atol=1e-5, node=False, noncontig=False,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32")), lambda r: Sample(arr(r, (3, 3), "int64"))))
add("linalg.eig", id="linalg.eig_vectors", fn=lambda lib, a: (lambda lv: ((lv[1] * lv[1].conj()).real,
                                                                      _real_view(lib, lv[0])))(lib.linalg.eig(a)),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3)))], rtol=1e-5, atol=1e-5, node=False)
add("linalg.matrix_exp", fn=lambda lib, a: lib.linalg.matrix_exp(a),
    samples=lambda d, r: [Sample(_m(d, r, (3, 3))), Sample(4 * _m(d, r, (2, 3, 3))), Sample(_m(d, r, (0, 2, 2)))],
    rtol=1e-5, atol=1e-5,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32")), lambda r: Sample(arr(r, (3,), "float32")),
                lambda r: Sample(arr(r, (3, 3), "int64"))))
add("matrix_exp", fn=lambda lib, a: a.matrix_exp(), samples=same(lambda d, r: Sample(_m(d, r, (3, 3)))),
    dtypes=("float64",), rtol=1e-5, atol=1e-5)

# ---- Householder products -------------------------------------------------------------------------------

add("linalg.householder_product", fn=lambda lib, a, t: lib.linalg.householder_product(a, t),
    samples=lambda d, r: [Sample(_m(d, r, (4, 3)), _m(d, r, (3,))), Sample(_m(d, r, (2, 4, 3)), _m(d, r, (2, 2))),
                          Sample(_m(d, r, (3, 3)), _m(d, r, (3,)))],
    rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), arr(r, (2,), "float32")),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (4,), "float32")),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (2, 2), "float32")),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (2,), "float64"))))
add("orgqr", fn=lambda lib, a, t: a.orgqr(t), samples=same(lambda d, r: Sample(_m(d, r, (4, 3)), _m(d, r, (2,)))),
    rtol=1e-5, atol=1e-5, node=False)
add("orgqr", id="orgqr_out", fn=lambda lib, a, t, **k: lib.orgqr(a, t, **k), grad=False, out=True,
    samples=same(lambda d, r: Sample(_m(d, r, (4, 3)), _m(d, r, (2,)))), rtol=1e-5, atol=1e-5)
add("ormqr", fn=lambda lib, a, t, c, **k: lib.ormqr(a, t, c, **k),
    samples=lambda d, r: [Sample(_m(d, r, (4, 3)), _m(d, r, (3,)), _m(d, r, (4, 2))),
                          Sample(_m(d, r, (4, 3)), _m(d, r, (3,)), _m(d, r, (4, 2)), transpose=True),
                          Sample(_m(d, r, (4, 3)), _m(d, r, (3,)), _m(d, r, (2, 4)), left=False),
                          Sample(_m(d, r, (2, 4, 3)), _m(d, r, (2, 3)), _m(d, r, (2, 3, 4)), left=False,
                                 transpose=True)],
    rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (3,), "float32"), arr(r, (3, 2), "float32")),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (3,), "float32"), arr(r, (4, 2), "float32"),
                                 left=False),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (4,), "float32"), arr(r, (4, 2), "float32")),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (2,), "float32"), arr(r, (2, 4), "float32"),
                                 left=False),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (3,), "float64"), arr(r, (4, 2), "float32")),
                lambda r: Sample(arr(r, (4, 3), "float32"), arr(r, (3,), "float32"), arr(r, (4, 2), "float64"))))

# ---- cond, vecdot, vander, diagonal, tensorinv, tensorsolve ---------------------------------------------

for _p in (None, 2, -2, "nuc"):
    add("linalg.cond", id=f"linalg.cond_{_p}", fn=lambda lib, a, _p=_p: lib.linalg.cond(a, _p),
        samples=lambda d, r: [Sample(_m(d, r, (3, 3), 2)), Sample(_m(d, r, (2, 3, 4)))] if _p != "nuc" else
        [Sample(_m(d, r, (2, 3, 3), 2))], rtol=1e-5, atol=1e-5, node=False)
add("linalg.cond", id="linalg.cond_norms", grad=False, rtol=1e-5, atol=1e-5,
    fn=lambda lib, a: tuple(lib.linalg.cond(a, p) for p in (1, -1, float("inf"), float("-inf"), "fro")),
    samples=lambda d, r: [Sample(_m(d, r, (2, 3, 3), 2)), Sample(np.ones((3, 3)).astype(d)),
                          Sample(np.zeros((0, 0)).astype(d)), Sample(np.zeros((2, 0, 0)).astype(d))],
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), 1), lambda r: Sample(arr(r, (3, 4), "float32"), "fro"),
                lambda r: Sample(arr(r, (3, 3), "float32"), 3), lambda r: Sample(arr(r, (3,), "float32"), None)))
add("linalg.vecdot", fn=lambda lib, x, y, **k: lib.linalg.vecdot(x, y, **k),
    samples=lambda d, r: [Sample(_m(d, r, (3, 4)), _m(d, r, (4,))), Sample(_m(d, r, (4,)), _m(d, r, (4,))),
                          Sample(_m(d, r, (2, 3)), _m(d, r, (1, 3)), dim=0)],
    out=True, rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(arr(r, (3,), "float32"), arr(r, (4,), "float32")),
                lambda r: Sample(arr(r, (3,), "float32"), arr(r, (3,), "float64"))))
add("linalg.vander", fn=lambda lib, x, **k: lib.linalg.vander(x, **k),
    samples=lambda d, r: [Sample(arr(r, (4,), d)), Sample(arr(r, (2, 3), d), N=4)],
    dtypes=FLOAT + ("int64", "int32"), node=False,
    errors=_err(lambda r: Sample(arr(r, (3,), "float32"), N=1), lambda r: Sample(np.ones(3, bool))))
add("linalg.diagonal", fn=lambda lib, a, **k: lib.linalg.diagonal(a, **k),
    samples=lambda d, r: [Sample(arr(r, (2, 3, 4), d)), Sample(arr(r, (3, 4, 2), d), offset=1, dim1=0, dim2=1)])
add("linalg.tensorinv", fn=lambda lib, a, **k: lib.linalg.tensorinv(a, **k),
    samples=lambda d, r: [Sample(_m(d, r, (4, 2, 2), 0) + np.eye(4).reshape(4, 2, 2).astype(d) * 3, ind=1),
                          Sample((_m(d, r, (6, 6)) + 3 * np.eye(6).astype(d)).reshape(2, 3, 6))],
    out=True, rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(arr(r, (4, 2, 3), "float32"), ind=1), lambda r: Sample(arr(r, (4, 2, 2), "float32"),
                                                                                      ind=0),
                lambda r: Sample(np.zeros((4, 2, 2)), ind=1)))
add("linalg.tensorsolve", fn=lambda lib, a, b, **k: lib.linalg.tensorsolve(a, b, **k),
    samples=lambda d, r: [Sample((_m(d, r, (6, 6)) + 3 * np.eye(6).astype(d)).reshape(2, 3, 6), _m(d, r, (2, 3))),
                          Sample(np.moveaxis((_m(d, r, (6, 6)) + 3 * np.eye(6).astype(d)).reshape(6, 2, 3), -1, 0),
                                 _m(d, r, (6,)), dims=(0,))],
    out=True, rtol=1e-5, atol=1e-5, node=False,
    errors=_err(lambda r: Sample(arr(r, (4, 2, 2), "float32"), arr(r, (3,), "float32"))))

# ---- torch.qr, torch.svd, the low-rank methods, torch.cond -------------------------------------------------

add("qr", fn=lambda lib, a, *s: (lambda qr: (qr[0] * qr[1].diagonal(0, -2, -1).sgn().unsqueeze(-2), qr[1].abs()))(
    lib.qr(a, *s)), samples=lambda d, r: [Sample(_m(d, r, (4, 3))), Sample(_m(d, r, (3, 3)), False)],
    rtol=1e-5, atol=1e-5, node=False, gradgrad=False)
add("svd", fn=lambda lib, a, *s: (lambda usv: ((usv[0] * usv[1].unsqueeze(-2)) @ usv[2].mH, usv[1]))(
    lib.svd(a, *s)), samples=lambda d, r: [Sample(_m(d, r, (4, 3))), Sample(_m(d, r, (2, 3, 4)))],
    rtol=1e-5, atol=1e-5, node=False, gradgrad=False)
add("svd", id="svd_no_uv", fn=lambda lib, a, *s: tuple(t.resolve_conj() for t in lib.svd(a, *s, compute_uv=False)),
    samples=lambda d, r: [Sample(_m(d, r, (4, 3))), Sample(_m(d, r, (3, 5)), False)], grad=False,
    rtol=1e-5, atol=1e-5)
add("Tensor.svd", fn=lambda lib, a: a.svd()[1], samples=same(lambda d, r: Sample(_m(d, r, (4, 3)))),
    rtol=1e-5, atol=1e-5, gradgrad=False)
add("svd_lowrank", fn=_seeded(lambda lib, a, **k: (lambda usv: ((usv[0] * usv[1].unsqueeze(-2)) @ usv[2].mT,
                                                               usv[1]))(lib.svd_lowrank(a, **k))),
    samples=same(lambda d, r: Sample(_m(d, r, (8, 6)), q=4)), dtypes=("float64",),
    rtol=1e-5, atol=1e-5, node=False, gradgrad=False, noncontig=False)
add("pca_lowrank", fn=_seeded(lambda lib, a, **k: lib.pca_lowrank(a, **k)[1]),
    samples=same(lambda d, r: Sample(_m(d, r, (8, 3)) @ _m(d, r, (3, 6)), q=3)), dtypes=("float64",),
    rtol=1e-6, atol=1e-6, node=False, gradgrad=False, noncontig=False,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float64"), q=5)))
add("lobpcg", fn=_seeded(lambda lib, a, **k: lib.lobpcg(a @ a.mT + lib.diag(lib.arange(12.0).to(a.dtype)),
                                                       **k)[0]),
    samples=same(lambda d, r: Sample(_m(d, r, (12, 12)), k=2)), dtypes=("float64",), rtol=1e-6, atol=1e-6,
    node=False, gradgrad=False, gradcheck=False, noncontig=False)


def _cond(lib, x, bad=None):
    """torch.cond on x, or with one argument made wrong (`bad`) for the error cases."""
    pred, tf, ff, ops = x.sum() > 0, (lambda t: t.sin()), (lambda t: t.cos()), (x,)
    if bad == "pred":
        pred = lib.tensor([True, False])
    elif bad == "str":
        pred = "a"
    elif bad == "fn":
        tf = 1
    elif bad == "ops":
        ops = (x, 1)
    return lib.cond(pred, tf, ff, ops)


add("cond", fn=_cond, node=False, gradgrad=False,  # (torch's cond backward records no graph: no double backward)
    samples=same(lambda d, r: Sample(arr(r, (3,), d, 0.1, 1)), lambda d, r: Sample(arr(r, (3,), d, -1, -0.1))),
    errors=_err(*(lambda r, _b=b: Sample(arr(r, (3,), "float32"), bad=_b) for b in ("pred", "str", "fn", "ops"))))
