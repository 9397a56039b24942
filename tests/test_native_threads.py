"""Large float32 matrix products on ember's thread pool (ember/_native/blas.py `gemm`, threadpool.c
`em_gemm_f32`; issue 18): NOTE [ BLAS threads by size ], NOTE [ One pool for kernels and BLAS ] and NOTE
[ Spinning while it pays ] in threadpool.c.

- A product split into blocks equals NumPy's product of each block, bit for bit, whichever thread ran which
  block, for every operand layout the split takes (row-major, transposed, a block of a wider matrix), split
  by rows or by columns, on 2 and 3 threads, on the pool and on the OpenMP team (beside torch's runtime);
  the matmul ops at 2 threads give those bits and run one pool loop per product, with OpenBLAS left on one
  thread; at 1 thread they are NumPy's product.
- A convolution calls its sgemm with OpenBLAS on one thread, whatever its own thread count.
- The idle workers' spin: its ceiling is settable and never exceeded, and it rises while woken workers come
  too late.
- Which work takes a second thread (NOTE [ What a parallel kernel costs ], NOTE [ Convolution threads by
  size ]): kernels from 256K elements, convolutions and products from 16.7M multiply-adds.
"""

import ctypes

import numpy as np
import pytest

import ember
from ember import _native
from ember._inductor import threads as pool
from ember._native import blas


@pytest.fixture
def pool_on(monkeypatch):
    """Native kernels on (the suite also runs under EMBER_NATIVE=0), OpenBLAS on one thread, as `matmul`
    leaves it before a pool product, and products on the pool as in a process without torch (this one
    imported torch, whose spinning OpenMP runtime would take them: em_gemm_f32_team)."""
    monkeypatch.setattr(_native, "_OFF", False)
    monkeypatch.setitem(_native._state, "shared_gomp", False)
    assert _native.available("threadpool"), "no working C compiler: " + str(_native._compiler())
    before = ember.get_num_threads()
    blas._set_blas(1)
    yield
    ember.set_num_threads(before)


def _spin(max_ns=-1):
    return _native.function("threadpool", "em_pool_spin", [ctypes.c_int64], ctypes.c_int64)(max_ns)


def _blocks(a, b, parts):
    """NumPy's product, one block of rows (or of columns, when the result is wider than tall) at a time."""
    m, n = a.shape[0], b.shape[1]
    size = m if m >= n else n
    cuts = [(size * p // parts, size * (p + 1) // parts) for p in range(parts)]
    if m >= n:
        return np.vstack([a[s:e] @ b for s, e in cuts])
    return np.hstack([a @ b[:, s:e] for s, e in cuts])


def _layout(x, how):
    if how == "transposed":
        return np.ascontiguousarray(x.T).T
    if how == "slice":  # rows apart, as a block of a wider matrix is (an LSTM's workspace)
        wide = np.zeros((x.shape[0], x.shape[1] + 5), np.float32)
        wide[:, 2:2 + x.shape[1]] = x
        return wide[:, 2:2 + x.shape[1]]
    return x


# split by rows, by columns, odd sizes, a thin product
_SHAPES = [(300, 64, 40), (40, 64, 300), (129, 257, 129), (7, 33, 1000)]
_LAYOUTS = [("c", "c"), ("transposed", "c"), ("c", "transposed"), ("slice", "slice"), ("transposed", "slice")]


@pytest.mark.parametrize("team", [False, True], ids=["pool", "openmp_team"])
@pytest.mark.parametrize("la,lb", _LAYOUTS)
def test_blocks_are_numpys_products(la, lb, team, pool_on, monkeypatch):
    monkeypatch.setitem(_native._state, "shared_gomp", team)
    rng = np.random.default_rng(0)
    for m, k, n in _SHAPES:
        a = _layout(rng.standard_normal((m, k)).astype(np.float32), la)
        b = _layout(rng.standard_normal((k, n)).astype(np.float32), lb)
        for nt in (2, 3):
            want = _blocks(a, b, nt)
            for _ in range(3):  # (whichever thread takes which block)
                got = blas.gemm(a, b, nt)
                assert got is not None and got.dtype == np.float32
                np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(blas.gemm(a, b, 1), a @ b)


def test_matmul_ops_on_the_pool(pool_on):
    """At 2 threads a product of BLAS_PARALLEL_WORK multiply-adds or more is one loop of the pool, in blocks;
    smaller ones and every product at 1 thread are NumPy's."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 784)).astype(np.float32)
    w = rng.standard_normal((512, 784)).astype(np.float32)
    small = rng.standard_normal((8, 784)).astype(np.float32)
    assert a.shape[0] * a.shape[1] * w.shape[0] >= blas.BLAS_PARALLEL_WORK
    for n in (2, 1):
        ember.set_num_threads(n)
        for x in (a, small):
            loops = pool.loops_run()
            y = ember.nn.functional.linear(ember.from_numpy(x), ember.from_numpy(w)).numpy()
            split = n == 2 and x is a
            assert pool.loops_run() - loops == split
            np.testing.assert_array_equal(y, _blocks(x, w.T, 2) if split else x @ w.T)
            assert blas._blas_now[0] == 1


def test_spin_ceiling(pool_on):
    """NOTE [ Spinning while it pays ]: the spin never exceeds its ceiling (none with a ceiling of 0), and it
    rises while loops find their workers asleep and too late: a product of two tiny blocks, which the caller
    has run both of before a worker woken for it can start."""
    rng = np.random.default_rng(2)
    tiny = rng.standard_normal((4, 4)).astype(np.float32)
    try:
        assert _spin(0) == 0
        for _ in range(5):
            np.testing.assert_array_equal(blas.gemm(tiny, tiny, 2), _blocks(tiny, tiny, 2))
            assert _spin() == 0
        assert _spin(7000) == 0  # (1000, 3000, then the ceiling)
        seen = []
        for _ in range(50):
            blas.gemm(tiny, tiny, 2)
            seen.append(_spin())
            if seen[-1] == 7000:
                break
        assert seen[-1] == 7000 and max(seen) == 7000 and {1000, 3000} <= set(seen), seen
    finally:
        _spin(200000)


def test_threads_by_size(monkeypatch, pool_on):
    from ember._native import conv
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 1 << 18)  # (the default; EMBER_NATIVE=force makes it 0)
    monkeypatch.setitem(_native._state, "shared_gomp", False)  # (ember's own OpenMP runtime)
    ember.set_num_threads(2)
    conv_threads = lambda macs: conv._conv_threads(macs, 64)  # noqa: E731
    # (elements or multiply-adds, threads): the MLP's relu and LeNet's max-pool; the MNIST net's relu; a
    # convolution below the floor; LeNet's first and second convolutions; the MNIST net's first
    for work, want in ((65536, 1), (221184, 1), (401408, 2)):
        assert _native.threads_for(work) == want
    for macs, want in ((conv.CONV_PARALLEL_WORK - 1, 1), (conv.CONV_PARALLEL_WORK, 2), (5529600, 2), (9830400, 2),
                       (20070400, 2)):
        assert conv_threads(macs) == want
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 0)  # (tests split every kernel and convolution)
    assert conv_threads(64) == 2 and _native.threads_for(2) == 2


def test_convolution_keeps_openblas_on_one_thread(pool_on):
    """A convolution on one of ember's threads, right after set_num_threads(2) (which sets OpenBLAS's pool to
    2), calls its sgemm with OpenBLAS on one thread: the bits of the 1-thread run, and no OpenBLAS pool."""
    from ember import _runtime
    getter = _runtime._state.get("blas_get") if _runtime._blas_setter() else None
    if getter is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    rng = np.random.default_rng(3)
    x = ember.from_numpy(rng.standard_normal((1, 64, 28, 28)).astype(np.float32))
    w = ember.from_numpy(rng.standard_normal((32, 64, 3, 3)).astype(np.float32))
    outs = []
    for n in (1, 2):
        ember.set_num_threads(n)
        # no padding: not a same-size convolution, so conv.c's im2col and sgemm (13.5M multiply-adds: 1 thread)
        outs.append(ember.nn.functional.conv2d(x, w).numpy())
        assert getter() == 1
    np.testing.assert_array_equal(outs[0], outs[1])
