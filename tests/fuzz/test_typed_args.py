"""Wrong argument values Python takes silently, refused as torch's parser refuses them (issue 25).

NOTE [ Typed arguments ] in ember/_ops/_util.py: a public function's annotated bool and int parameters are
checked by one generated wrapper, and dims by `wrap_dim`. Each row runs one call in ember and torch from the
same NumPy inputs and requires the same exception class and message (or the same result where torch
accepts the value: NumPy integers and 0-d integer tensors for an int). Also here: the other fixes of the
100k run that are errors (eigh of a NaN matrix, which made lobpcg run for minutes).
"""

import numpy as np
import pytest
from compare import assert_same_error, check

import ember

M = np.arange(12.0).reshape(3, 4) / 7 - 0.5
SQ = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
V = np.array([0.3, -1.0, 2.0, 0.5])

# (function of (lib, *inputs), inputs): each must fail in torch
REFUSED = {
    "topk largest str": (lambda lib, x: lib.topk(x, 2, largest="no"), M),
    "topk k bool": (lambda lib, x: x.topk(True), M),
    "topk dim float": (lambda lib, x: lib.topk(x, 2, 1.5), M),
    "sort stable int": (lambda lib, x: lib.sort(x, stable=2), M),
    "sort descending None": (lambda lib, x: lib.sort(x, descending=None), M),
    "argsort descending str": (lambda lib, x: lib.argsort(x, descending="x"), M),
    "kthvalue keepdim int": (lambda lib, x: lib.kthvalue(x, 1, keepdim=2), M),
    "triu diagonal float": (lambda lib, x: lib.triu(x, 1.5), M),
    "tril diagonal bool": (lambda lib, x: x.tril(True), M),
    "diag diagonal bool": (lambda lib, x: lib.diag(x, True), M),
    "diagonal offset bool": (lambda lib, x: lib.linalg.diagonal(x, offset=True), M),
    "cumsum dim float": (lambda lib, x: lib.cumsum(x, 1.0), M),
    "gather dim bool": (lambda lib, x: lib.gather(x, True, lib.zeros(3, 1, dtype=lib.int64)), M),
    "searchsorted right None": (lambda lib, x: lib.searchsorted(x, x, right=None), M),
    "bucketize out_int32 str": (lambda lib, x: lib.bucketize(x, x[0], out_int32="x"), M),
    "unique_consecutive return_counts int": (lambda lib, x: lib.unique_consecutive(x, return_counts=1), V),
    "combinations with_replacement str": (lambda lib, x: lib.combinations(x, with_replacement="x"), V),
    "rot90 k float": (lambda lib, x: lib.rot90(x, 1.5), M),
    "round decimals bool": (lambda lib, x: lib.round(x, decimals=True), M),
    "polygamma n bool": (lambda lib, x: lib.polygamma(True, x), M),
    "mvlgamma p float": (lambda lib, x: lib.mvlgamma(x + 3, 1.5), M),
    "diff n bool": (lambda lib, x: lib.diff(x, True), M),
    "prod keepdim int": (lambda lib, x: lib.prod(x, 1, keepdim=2), M),
    "amax keepdim int": (lambda lib, x: lib.amax(x, 1, keepdim=2), M),
    "logsumexp keepdim None": (lambda lib, x: lib.logsumexp(x, 1, keepdim=None), M),
    "std keepdim int": (lambda lib, x: lib.std(x, 1, keepdim=2), M),
    "max keepdim int": (lambda lib, x: lib.max(x, 1, keepdim=2), M),
    "min keepdim str": (lambda lib, x: lib.min(x, 1, "x"), M),
    "median keepdim None": (lambda lib, x: lib.median(x, 1, keepdim=None), M),
    "nanmedian keepdim int": (lambda lib, x: lib.nanmedian(x, 1, keepdim=1), M),
    "svd compute_uv str": (lambda lib, x: lib.svd(x, compute_uv="x"), M),
    "mode keepdim float": (lambda lib, x: lib.mode(x, 0, keepdim=1.0), M),
    "quantile keepdim str": (lambda lib, x: lib.quantile(x, 0.5, 1, keepdim="x"), M),
    "vector_norm keepdim int": (lambda lib, x: lib.linalg.vector_norm(x, keepdim=2), M),
    "cholesky upper str": (lambda lib, x: lib.linalg.cholesky(x, upper="x"), SQ),
    "cholesky_inverse upper None": (lambda lib, x: lib.cholesky_inverse(x, None), SQ),
    "solve_triangular left None": (
        lambda lib, x: lib.linalg.solve_triangular(x, x, upper=True, left=None), SQ),
    "triangular_solve transpose int": (lambda lib, x: lib.triangular_solve(x, x, transpose=2), SQ),
    "matrix_power n bool": (lambda lib, x: lib.linalg.matrix_power(x, True), SQ),
    "tensorinv ind bool": (lambda lib, x: lib.linalg.tensorinv(x, ind=True), SQ),
    "fft n bool": (lambda lib, x: lib.fft.fft(x, n=True), V),
    "fftfreq n float": (lambda lib: lib.fft.fftfreq(4.5),),
    "index_put accumulate int": (
        lambda lib, x: x.index_put((lib.tensor([0]),), lib.tensor(1.0), accumulate=2), V),
    "isin invert None": (lambda lib, x: lib.isin(x, x, invert=None), V),
    "vander increasing int": (lambda lib, x: lib.vander(x, increasing=1), V),
    "nonzero_static size float": (lambda lib, x: lib.nonzero_static(x, size=1.5), V),
    "histogram density str": (lambda lib, x: lib.histogram(x, 3, density="x"), V),
    "cov correction float": (lambda lib, x: lib.cov(x, correction=1.5), M),
    "slice_copy start bool": (lambda lib, x: lib.slice_copy(x, 0, True), M),
    "select index bool": (lambda lib, x: lib.select(x, 0, True), M),
}

# values torch's parser takes for an int or a bool: the call must still run, and give torch's result
ACCEPTED = {
    "topk k NumPy int": (lambda lib, x: lib.topk(x, np.int64(2)).values, M),
    "triu diagonal 0-d int tensor": (lambda lib, x: lib.triu(x, lib.tensor(1)), M),
    "triu diagonal NumPy int": (lambda lib, x: lib.triu(x, np.int32(-1)), M),
    "cumsum dim NumPy int": (lambda lib, x: lib.cumsum(x, np.int64(1)), M),
    "sum dim NumPy int": (lambda lib, x: x.sum(np.int64(1)), M),
    "unique dim None": (lambda lib, x: lib.unique(x, dim=None), V),
    "fft n None": (lambda lib, x: lib.fft.fft(x, n=None), V),
}


@pytest.mark.parametrize("name", REFUSED)
def test_wrong_values_refused_as_torch(name):
    fn, *inputs = REFUSED[name]
    assert_same_error(fn, *inputs)


@pytest.mark.parametrize("name", ACCEPTED)
def test_values_torch_accepts_still_run(name):
    fn, *inputs = ACCEPTED[name]
    check(fn, *inputs)


def test_typed_wrapper_keeps_the_signature_and_the_name():
    import inspect

    assert ember.topk.__name__ == "topk" and ember.Tensor.topk is ember.topk
    assert str(inspect.signature(ember.triu)) == str(inspect.signature(ember.triu.__wrapped__))
    assert ember.topk.__doc__ == ember.topk.__wrapped__.__doc__


@pytest.mark.parametrize("n", [3, 4, 6])
@pytest.mark.parametrize("batched", [False, True])
def test_eigh_of_a_nan_matrix_as_torch(n, batched):
    """torch's eigh fails on a NaN in the triangle it reads, with the solver's code (NOTE [ eigh of a NaN
    matrix ])."""
    a = np.random.default_rng(n).random((2, n, n) if batched else (n, n))
    a = a + np.swapaxes(a, -1, -2)
    for pos, uplo in [((0, 0), "L"), ((n - 1, 0), "L"), ((0, n - 1), "U"), ((1, 1), "U")]:
        x = a.copy()
        x[(-1,) + pos if batched else pos] = np.nan
        check(lambda lib, x: lib.linalg.eigvalsh(x, UPLO=uplo), x)
        check(lambda lib, x: lib.linalg.eigh(x, UPLO=uplo), x)


def test_lobpcg_of_a_nan_matrix_fails_at_once_as_torch():
    """The 100k run's hang: ember's lobpcg iterated for minutes on a NaN input that torch's refuses."""
    from .core import BY_ID

    op = BY_ID["lobpcg"]
    a = np.random.default_rng(0).uniform(-1, 1, (12, 12, 2)).astype(np.float32)
    a[6, 0, 0] = a[3, 6, 0] = np.nan
    assert_same_error(lambda lib, x: op.fn(lib, x, k=2), a)
