"""The linalg additions where the OpInfo table cannot reach (area L): complex inputs and gradients, LAPACK's
pivots and LDL blocks over many random matrices, errors raised in backward, torch.cond's argument checks,
deprecation warnings, and the ported low-rank methods. Each case runs the same body in ember and torch
(compare.check / assert_same_error) from the same NumPy inputs.
"""

import warnings

import numpy as np
import pytest
from compare import assert_same_error, check

import ember

_rng = np.random.default_rng(15)


def _c(*shape):
    return _rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)


def _r(*shape):
    return _rng.standard_normal(shape)


def _sym(a, herm=False):
    t = np.swapaxes(a, -1, -2)
    return a + (t.conj() if herm else t)


def _re(lib, z):
    return lib.view_as_real(z)


A, B, T, W = _r(2, 4, 4), _r(2, 4, 3), _r(6, 4), _r(4, 6)
AC, BC = _c(2, 4, 4), _c(2, 4, 3)

# ---- values and gradients: (id, fn(lib, *inputs), inputs, which inputs get gradients) --------------------
CASES = [
    ("lu_complex", lambda L, a: tuple(_re(L, t) for t in L.linalg.lu(a)[1:]), (AC,), [0]),
    ("lu_solve_adjoint_complex", lambda L, a, b: _re(L, L.linalg.lu_solve(*L.linalg.lu_factor(a), b,
                                                                         adjoint=True)), (AC, BC), [0, 1]),
    # (torch's right-side complex result carries a lazy conjugate bit, which ember has no use for)
    ("lu_solve_right_complex", lambda L, a, b: _re(L, L.linalg.lu_solve(*L.linalg.lu_factor(a), b.mT,
                                                                       left=False).resolve_conj()), (AC, BC), [0, 1]),
    ("solve_triangular_complex", lambda L, a, b: _re(L, L.linalg.solve_triangular(a, b, upper=True)), (AC, BC),
     [0, 1]),
    ("lu_factor_wide_tall", lambda L, a, b: (L.linalg.lu_factor(a)[0], L.linalg.lu_factor(b)[0]), (W, T),
     [0, 1]),
    ("matrix_exp_complex", lambda L, a: _re(L, L.linalg.matrix_exp(a)), (AC,), [0]),
    ("matrix_exp_scaled", lambda L, a: L.linalg.matrix_exp(a * 10), (A,), [0]),
    ("eigvals_real", lambda L, a: _re(L, L.linalg.eigvals(a)), (A,), [0]),
    ("eig_similarity", lambda L, a: _re(L, (lambda lv: lv[1] @ lv[0].diag_embed() @ L.linalg.inv(lv[1]))(
        L.linalg.eig(a))), (A,), [0]),
    ("eig_complex_phase_free", lambda L, a: _re(L, (lambda lv: (lv[1].abs() ** 2).sum(-2) * lv[0])(
        L.linalg.eig(a))), (AC,), [0]),
    ("householder_of_geqrf", lambda L, a: L.linalg.householder_product(*L.geqrf(a)), (T,), None),
    ("ormqr_complex", lambda L, a, t, c: _re(L, L.ormqr(a, t, c, left=False, transpose=True)),
     (_c(5, 3), _c(3), _c(2, 5)), [0, 1, 2]),
    ("vecdot_complex", lambda L, x, y: _re(L, L.linalg.vecdot(x, y, dim=0)), (AC, AC), [1]),
    ("cond_ones", lambda L, a: tuple(L.linalg.cond(a, p) for p in (1, "fro", "nuc", 2)), (np.ones((3, 3)),), None),
    ("ldl_solve_complex_symmetric", lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a), b),
     (_sym(_c(2, 4, 4)), _c(2, 4, 2)), None),
    ("ldl_solve_hermitian", lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a, hermitian=True), b,
                                                               hermitian=True), (_sym(_c(2, 4, 4), True), _c(2, 4, 2)),
     None),
    ("torch_lu_infos", lambda L, a: L.lu(a, get_infos=True), (np.zeros((2, 3, 3)),), None),
    ("tensor_methods", lambda L, a, b: (a.matrix_exp(), b.cholesky_solve(a.tril() + 3 * L.eye(4, dtype=a.dtype)),
                                        a.lu_solve(*L.linalg.lu_factor(a + 3 * L.eye(4, dtype=a.dtype)))),
     (A[0], B[0]), [0, 1]),
]


@pytest.mark.parametrize("name,fn,inputs,grad", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients(name, fn, inputs, grad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the deprecated spellings warn once per process)
        check(fn, *inputs, grad=grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_ldl_pivots_match_lapack(n):
    """Bunch-Kaufman's 1x1 and 2x2 blocks and interchanges, over many matrices (small diagonals force 2x2)."""
    rng = np.random.default_rng(n)
    for trial in range(12):
        a = _sym(rng.standard_normal((2, n, n)))
        if trial % 3 == 0:
            a[..., range(n), range(n)] *= 0.01
        if trial % 4 == 1:
            a[:, 0, 0] = 0
        check(lambda L, x: tuple(L.linalg.ldl_factor_ex(x)), a)
        h = _sym(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)), True)
        check(lambda L, x: tuple(L.linalg.ldl_factor_ex(x, hermitian=True)), h)


def test_lu_pivots_match_lapack():
    rng = np.random.default_rng(0)
    for shape in [(5, 5), (3, 7), (7, 3), (4, 6, 6)]:
        a = rng.standard_normal(shape)
        a[..., 1, :] = a[..., 0, :] * 2  # (ties and rank deficiency)
        check(lambda L, x: tuple(L.linalg.lu_factor_ex(x)), a)


# ---- errors, including those raised in backward ---------------------------------------------------------
ERRORS = [
    ("cond_inplace_inverse", lambda L, a: L.linalg.cond(a.requires_grad_(), 1).sum().backward(), (A,)),
    ("qr_complete_tall", lambda L, a: L.linalg.qr(a.requires_grad_(), mode="complete")[1].sum().backward(), (T,)),
    ("qr_r_mode", lambda L, a: L.linalg.qr(a.requires_grad_(), mode="r")[1].sum().backward(), (T,)),
    ("ldl_factor_backward", lambda L, a: L.linalg.ldl_factor(a.requires_grad_()).LD.sum().backward(),
     (np.eye(3),)),
    ("ldl_solve_backward", lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(a), b.requires_grad_()).sum()
     .backward(), (np.eye(3), np.ones((3, 2)))),
    ("ldl_singular_batch", lambda L, a: L.linalg.ldl_factor_ex(a, check_errors=True), (np.zeros((2, 3, 3)),)),
    ("eig_phase_dependent_loss", lambda L, a: L.view_as_real(L.linalg.eig(a.requires_grad_())[1]).sum().backward(),
     (A[0],)),
    ("cond_pred_shape", lambda L, x: L.cond(L.tensor([True, False]), lambda t: t, lambda t: t, (x,)), (B[0],)),
    ("cond_operands", lambda L, x: L.cond(L.tensor(True), lambda t: t, lambda t: t, x), (B[0],)),
]


@pytest.mark.parametrize("name,fn,inputs", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, fn, inputs):
    assert_same_error(fn, *inputs)


def test_deprecated_spellings_warn_once_after_computing():
    import torch

    from ember._ops import lu as lu_module

    lu_module._WARNED.discard("cholesky")
    x = np.eye(3)
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated") as ours:
        ember.cholesky(ember.from_numpy(x))
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        ember.cholesky(ember.from_numpy(x))
    assert not [w for w in again if "deprecated" in str(w.message)]
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.cholesky(torch.eye(3, dtype=torch.float64))
    if theirs:  # (torch warns once per process: compare the text when this process has not seen it yet)
        assert str(theirs[0].message).startswith(str(ours[0].message).replace("ember.", "torch."))


def test_lowrank_methods_follow_torchs_random_stream():
    a = _r(20, 8) @ _r(8, 12)

    def seeded(fn):
        def run(lib, *xs):
            lib.manual_seed(0)
            return fn(lib, *xs)
        return run

    recon = lambda usv: ((usv[0] * usv[1]) @ usv[2].mT, usv[1])  # noqa: E731 - signs of U, V are LAPACK's
    check(seeded(lambda L, x: recon(L.pca_lowrank(x, q=3))), a, rtol=1e-6, atol=1e-6)
    check(seeded(lambda L, x: recon(L.svd_lowrank(x, q=3, M=x.mean(0, keepdim=True)))), a, rtol=1e-6, atol=1e-6)
    s = _r(30, 30)
    s = s @ s.T + np.diag(np.arange(30.0))
    check(seeded(lambda L, x: (lambda ev: (ev[0], ev[1].abs()))(L.lobpcg(x, k=2, largest=False, method="basic"))),
          s, rtol=1e-6, atol=1e-6)


def test_out_of_copying_composites_records_the_copy():
    """tensorinv / tensorsolve copy into out= as torch's composites do: no refusal under grad, and the copy is
    recorded (CopyBackwards), so gradients flow through out."""
    import torch

    a = np.eye(4).reshape(4, 2, 2) * 3 + _r(4, 2, 2)
    names = []
    for L in (torch, ember):
        x = L.from_numpy(a.copy()).requires_grad_()
        o = L.empty(0, dtype=x.dtype)
        r = L.linalg.tensorinv(x, ind=1, out=o)
        names.append((r is o, o.requires_grad, type(o.grad_fn).__name__))
    assert names[0] == names[1]
    check(lambda L, x: (lambda o: (L.linalg.tensorinv(x, ind=1, out=o), o)[1])(L.empty(0, dtype=x.dtype)), a,
          grad=[0], check_stride=False)
