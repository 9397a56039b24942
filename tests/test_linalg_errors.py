"""Linear-algebra failures are torch's: torch.linalg.LinAlgError with LAPACK's numbers in the message.

One table of (op, input) over singular, indefinite, non-finite and batched matrices: where torch raises,
ember raises the same class and message (which carry getrf's first zero pivot, potrf's failing minor,
the failing batch element); where torch computes (the `_ex` variants' results and `info` codes, NaNs
from an infinity), ember gives the same values. See NOTE [ LAPACK errors ] (ember/_ops/lapack.py).
"""

import numpy as np
import pytest
import torch
from compare import check

import ember

NAN, INF = float("nan"), float("inf")
SING3 = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]  # rank 2: U[3,3] is exactly zero
SING4 = [[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], [1.0, 0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 1.0]]
ZERO_COL = [[0.0, 1.0], [0.0, 2.0]]  # first pivot zero
INDEF2 = [[1.0, 2.0], [2.0, 1.0]]  # leading minor of order 2 negative
# leading minor of order 2 is zero
INDEF4 = [[4.0, 2.0, 2.0, 1.0], [2.0, 1.0, 3.0, 1.0], [2.0, 3.0, 9.0, 1.0], [1.0, 1.0, 1.0, 9.0]]
NEG1 = [[-1.0, 0.0], [0.0, 1.0]]
NAN_TL = [[NAN, 1.0], [1.0, 1.0]]
NAN_UP = [[1.0, NAN], [0.0, 1.0]]
INF_TL = [[INF, 1.0], [1.0, 1.0]]
SPD3 = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
TALL_NAN = [[2.0, 1.0], [1.0, NAN], [1.0, 1.0]]
TALL_INF = [[INF, 1.0], [1.0, 3.0], [1.0, 1.0]]
TALL_SING = [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]


def _m(rows, dtype="float64"):
    return np.array(rows, dtype)


def _batch(*mats, dtype="float64"):
    return np.stack([np.array(m, dtype) for m in mats])


def _eye(n):
    return np.eye(n).tolist()


# (id, fn(lib, *inputs), inputs)
CASES = []


def case(name, fn, *inputs):
    CASES.append(pytest.param(fn, inputs, id=name))


# (complex matrices with an infinity or a NaN are left out: C++'s complex division and NumPy's make different
# NaNs of them)
for _dt in ("float32", "float64", "complex128"):
    _nonfinite = (("nan", _m(NAN_TL, _dt)), ("inf", _m(INF_TL, _dt))) if _dt != "complex128" else ()
    for _nm, _a in (("sing3", _m(SING3, _dt)), ("sing4", _m(SING4, _dt)), ("zero_col", _m(ZERO_COL, _dt)),
                    ("batch", _batch(_eye(3), SING3, SING3, dtype=_dt)),
                    ("batch4d", _batch(_eye(3), SING3, dtype=_dt).reshape(2, 1, 3, 3))) + _nonfinite:
        case(f"inv-{_nm}-{_dt}", lambda lib, a: lib.linalg.inv(a), _a)
        case(f"inverse-{_nm}-{_dt}", lambda lib, a: lib.inverse(a), _a)
        case(f"inv_ex-{_nm}-{_dt}", lambda lib, a: tuple(lib.linalg.inv_ex(a)), _a)
        case(f"inv_ex_check-{_nm}-{_dt}", lambda lib, a: tuple(lib.linalg.inv_ex(a, check_errors=True)), _a)
        case(f"solve-{_nm}-{_dt}",
             lambda lib, a: lib.linalg.solve(a, lib.ones(a.shape[:-1], dtype=a.dtype)), _a)
        case(f"solve_mat-{_nm}-{_dt}",
             lambda lib, a: lib.linalg.solve(a, lib.ones(a.shape[:-1] + (2,), dtype=a.dtype)), _a)
        case(f"solve_left-{_nm}-{_dt}",
             lambda lib, a: lib.linalg.solve(a, lib.ones(a.shape[:-2] + (2, a.shape[-1]), dtype=a.dtype),
                                              left=False), _a)
        case(f"solve_ex-{_nm}-{_dt}",
             lambda lib, a: tuple(lib.linalg.solve_ex(a, lib.ones(a.shape[:-1] + (1,), dtype=a.dtype))), _a)
        case(f"matrix_power_neg-{_nm}-{_dt}", lambda lib, a: lib.linalg.matrix_power(a, -2), _a)
        case(f"det-{_nm}-{_dt}", lambda lib, a: lib.linalg.det(a), _a)
        case(f"slogdet-{_nm}-{_dt}", lambda lib, a: tuple(lib.linalg.slogdet(a)), _a)
    # (float32 with an infinite diagonal is left out: MKL's spotrf reports a failure the reference potf2
    # does not, see NOTE [ LAPACK errors ])
    _inf = (("inf", _m(INF_TL, _dt)),) if _dt == "float64" else ()
    for _nm, _a in (("indef2", _m(INDEF2, _dt)), ("indef4", _m(INDEF4, _dt)), ("neg1", _m(NEG1, _dt)),
                    ("nan", _m(NAN_TL, _dt)), ("zeros", np.zeros((3, 3), _dt)),
                    ("batch", _batch(_eye(4), INDEF4, _eye(4), dtype=_dt)), ("spd", _m(SPD3, _dt))) + _inf:
        case(f"cholesky-{_nm}-{_dt}", lambda lib, a: lib.linalg.cholesky(a), _a)
        case(f"cholesky_upper-{_nm}-{_dt}",
             lambda lib, a: lib.linalg.cholesky(a, upper=True).resolve_conj(), _a)
        case(f"cholesky_ex-{_nm}-{_dt}", lambda lib, a: tuple(lib.linalg.cholesky_ex(a)), _a)
        case(f"cholesky_ex_upper-{_nm}-{_dt}",
             lambda lib, a: lib.linalg.cholesky_ex(a, upper=True).L.resolve_conj(), _a)
        case(f"cholesky_ex_check-{_nm}-{_dt}",
             lambda lib, a: tuple(lib.linalg.cholesky_ex(a, check_errors=True)), _a)

for _dt in ("float32", "float64"):
    for _nm, _a in (("nan", _m(NAN_TL, _dt)), ("nan_up", _m(NAN_UP, _dt)), ("inf", _m(INF_TL, _dt)),
                    ("batch", _batch(_eye(2), _eye(2), NAN_TL, dtype=_dt)), ("tall_nan", _m(TALL_NAN, _dt)),
                    ("batch_inf", _batch(_eye(2), INF_TL, dtype=_dt))):
        case(f"svdvals-{_nm}-{_dt}", lambda lib, a: lib.linalg.svdvals(a), _a)
        case(f"svd-{_nm}-{_dt}", lambda lib, a: lib.linalg.svd(a)[1], _a)
        case(f"svd_reduced-{_nm}-{_dt}", lambda lib, a: lib.linalg.svd(a, full_matrices=False)[1], _a)
        case(f"pinv-{_nm}-{_dt}", lambda lib, a: lib.linalg.pinv(a), _a)
        case(f"pinverse-{_nm}-{_dt}", lambda lib, a: lib.pinverse(a), _a)
        case(f"matrix_rank-{_nm}-{_dt}", lambda lib, a: lib.linalg.matrix_rank(a), _a)
        case(f"matrix_norm2-{_nm}-{_dt}", lambda lib, a: lib.linalg.matrix_norm(a, 2), _a)
        case(f"matrix_norm_nuc-{_nm}-{_dt}", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), _a)
    for _nm, _a in (("nan_all", np.full((2, 2), NAN, _dt)), ("inf_all", np.full((2, 2), INF, _dt)),
                    ("batch", _batch(_eye(2), np.full((2, 2), NAN), dtype=_dt))):
        case(f"eigvalsh-{_nm}-{_dt}", lambda lib, a: lib.linalg.eigvalsh(a), _a)
        case(f"eigh-{_nm}-{_dt}", lambda lib, a: tuple(lib.linalg.eigh(a)), _a)
    for _drv in ("gels", "gelsy", "gelsd", "gelss"):
        _ones = np.ones((3, 1), _dt)
        _full = _m(TALL_SING, _dt) + np.eye(3, 2, dtype=_dt)
        for _nm, _a, _b in (("nan_a", _m(TALL_NAN, _dt), _ones),
                            ("nan_b", _full, np.array([[NAN], [1.0], [1.0]], _dt)),
                            ("batch_nan", _batch(np.eye(3, 2), TALL_NAN, dtype=_dt), np.ones((2, 3, 1), _dt)),
                            ("sing", _m(TALL_SING, _dt), _ones),
                            ("wide_nan", _m(NAN_TL, _dt)[:, :1].T, _ones[:1])):
            case(f"lstsq_{_drv}-{_nm}-{_dt}",
                 lambda lib, a, b, d=_drv: lib.linalg.lstsq(a, b, driver=d).solution, _a, _b)


@pytest.mark.parametrize("fn,inputs", CASES)
def test_linalg_failure_matches_torch(fn, inputs):
    check(fn, *inputs)


def test_linalg_error_class_is_torchs():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    assert ember.linalg.LinAlgError is ember._C._LinAlgError
    assert repr(ember.linalg.LinAlgError) == repr(torch.linalg.LinAlgError).replace("torch", "ember")
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))


def test_singular_inputs_keep_their_gradient_path():
    """A nonsingular batch still differentiates through inv_ex / solve_ex / cholesky_ex as torch does."""
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    check(lambda lib, x: lib.linalg.inv_ex(x).inverse, a, grad=True)
    check(lambda lib, x: lib.linalg.solve_ex(x, lib.ones(2, dtype=x.dtype)).result, a, grad=True)
    check(lambda lib, x: lib.linalg.cholesky_ex(x, upper=True).L, a, grad=True)
    check(lambda lib, x: lib.linalg.pinv(x, atol=0.5), a, grad=True)
