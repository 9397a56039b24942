"""Matrix products on the number of threads their size pays for (NOTE [ BLAS threads by size ]): the matmul
ops' kernels call `matmul` for their products; `ember.set_num_threads` tells it the thread count
(`set_count`).

Below the tensor types (ember/_native's layer), so the op kernels may import it; the thread count and NumPy's
OpenBLAS entry points come from ember/_runtime, read when first needed.
"""

__all__ = ["BLAS_PARALLEL_WORK", "matmul", "gemm", "one_blas_thread", "set_count"]

import ctypes

import numpy as np

from . import _state as _native_state

# NOTE [ BLAS threads by size ]
# OpenBLAS splits every float32 GEMM above m n k = 262144 over its whole pool, and its idle workers sleep at
# once (OPENBLAS_THREAD_TIMEOUT=4, NOTE [ Passive OpenMP threads ]), so each such product wakes a worker and
# waits for it: tens of microseconds on these VMs, more than a product of a few million multiply-adds gains
# from the second core. A 2-layer LSTM step makes about 140 of them (20 x 256 x 1024 per time step), and where
# the second core is busy (another process) every join waits for a time slice: at 2 threads under load the
# step took 1331 ms of process CPU time (697 in the main thread, yielding while it waited) against 51 ms at 1
# thread. So the products of the matmul ops (mm, addmm, bmm, matmul, linear, the RNN's large products) go
# through `matmul`: below BLAS_PARALLEL_WORK multiply-adds (16.7M, about 0.15 ms on one core) OpenBLAS runs on
# one thread, above it on ember's thread count, capped by what OpenBLAS was started with
# (OPENBLAS_NUM_THREADS, then OMP_NUM_THREADS) until `set_num_threads` is called. A large float32 product of
# two matrices runs on ember's thread pool (ember/_native/threadpool.c, the compiled kernels' pool too), split
# into one block of rows (or columns) per thread, each a single-threaded sgemm (`gemm`, NOTE [ One pool for
# kernels and BLAS ] in threadpool.c; either operand row-major or transposed, its rows possibly apart, as a
# slice of a wider matrix is: an LSTM backward's product by its workspace once fell through to OpenBLAS's
# pool, whose worker then spun for 19 ms of CPU per step where numpy was imported before ember, so without
# OPENBLAS_THREAD_TIMEOUT). On the kernels' OpenMP team, as they were before, a block's worker had to be
# waited for: an MLP step (five such products) measured 2.80 ms at 2 threads against 2.64 at 1 on the idle
# machine. On the pool a block no worker has claimed is the caller's, and the pool's workers stay awake
# between the loops of a step where that pays (NOTE [ Spinning while it pays ]). Beside another library's
# spinning OpenMP runtime (torch imported first) the blocks run on that runtime's team instead, whose
# workers are awake anyway (em_gemm_f32_team in threadpool.c). Other large products
# (float64, batched, without a compiler) switch OpenBLAS's pool to ember's count and back to one thread
# after them. So NumPy's other BLAS calls (einsum's, linalg's, small products in kernels) also stay on one
# thread once ember made its first product, and OpenBLAS's pool no longer wakes. A switch is a ctypes call,
# made only around products of more than 0.1 ms.
BLAS_PARALLEL_WORK = 1 << 24
_blas_now = [None]  # OpenBLAS's thread count as ember last set it (None: not set yet)
_blas_cap = [None]  # the most threads a product may use (None: not read yet)


def set_count(n):
    """`set_num_threads(n)` set OpenBLAS's pool to n threads: products may use n from now on."""
    _blas_now[0] = _blas_cap[0] = n


def _set_blas(n):
    from .. import _runtime
    setter = _runtime._blas_setter()
    if setter is not None:
        setter(n)
    _blas_now[0] = n


def one_blas_thread():
    """Put OpenBLAS on one thread if ember has not already (before a kernel calls its sgemm from ember's own
    threads, or where a product must not split)."""
    if _blas_now[0] != 1:
        _set_blas(1)


def _blas_threads():
    from .. import _runtime
    if _blas_cap[0] is None:
        _runtime._blas_setter()
        getter = _runtime._state.get("blas_get")
        _blas_cap[0] = getter() if getter is not None else 1
    return min(_runtime.get_num_threads(), _blas_cap[0])


def matmul(a, b):
    """a @ b of NumPy arrays, on the number of BLAS threads its size pays for (NOTE [ BLAS threads by
    size ])."""
    if a.size * b.shape[-1] < BLAS_PARALLEL_WORK or (a.ndim > 2 or b.ndim > 2) and not (
            b.ndim == 2 and a.flags.c_contiguous) \
            and a.shape[-2] * a.shape[-1] * b.shape[-1] < BLAS_PARALLEL_WORK:
        # (NumPy multiplies a batch one matrix at a time: each product's own size is what pays for threads)
        one_blas_thread()
        return a @ b
    n = _blas_threads()
    if n == 1:
        return a @ b
    one_blas_thread()
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:  # (a batch of rows times one matrix: one product)
        c = gemm(a.reshape(-1, a.shape[-1]), b, n)
        if c is not None:
            return c.reshape(a.shape[:-1] + b.shape[1:])
    c = gemm(a, b, n)  # float32 matrices: ember's pool (NOTE [ One pool for kernels and BLAS ])
    if c is not None:
        return c
    _set_blas(n)
    try:
        return a @ b
    finally:
        _set_blas(1)


# ---- float32 products on ember's pool (NOTE [ One pool for kernels and BLAS ] in threadpool.c) -----------

_F32 = np.dtype(np.float32)
_ND = np.ndarray
_gemm = [None]  # (em_gemm_f32, em_gemm_f32_team, OpenBLAS's sgemm address), or False when there is none


def _operand(a):
    """(transposed, leading dim) of a 2-d float32 operand stored row-major or as a row-major matrix's
    transpose, its rows (or columns) possibly apart, as a block of a wider matrix is (an LSTM's backward
    multiplies by such a slice of its workspace), or None."""
    if type(a) is not _ND or a.dtype != _F32 or a.ndim != 2:
        return None
    if a.flags.c_contiguous:
        return 0, a.shape[1]
    if a.flags.f_contiguous:
        return 1, a.shape[0]
    s0, s1 = a.strides
    if not a.flags.aligned or s0 <= 0 or s1 <= 0 or s0 % 4 or s1 % 4:
        return None
    if s1 == 4 and s0 // 4 >= a.shape[1]:
        return 0, s0 // 4
    if s0 == 4 and s1 // 4 >= a.shape[0]:
        return 1, s1 // 4
    return None


def gemm(a, b, nt):
    """a @ b of 2-d float32 arrays as `nt` blocks on ember's pool, or None (no compiler, no OpenBLAS sgemm,
    another dtype or layout). OpenBLAS must be on one thread (`matmul` sees to it)."""
    oa, ob = _operand(a), _operand(b)
    if oa is None or ob is None or not a.size or not b.size:
        return None
    if _gemm[0] is None:
        from . import conv, function
        blas = conv._blas()
        types = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int] * 2 + [ctypes.c_void_p] + [ctypes.c_int64] * 3 \
            + [ctypes.c_void_p, ctypes.c_int]
        fns = [blas and function("threadpool", name, types) for name in ("em_gemm_f32", "em_gemm_f32_team")]
        _gemm[0] = (*fns, blas[0]) if all(fns) else False
    if not _gemm[0]:
        return None
    pool, team, sgemm = _gemm[0]
    # (beside another library's spinning OpenMP runtime, its team: em_gemm_f32_team in threadpool.c)
    fn = team if _native_state["shared_gomp"] else pool
    m, k = a.shape
    n = b.shape[1]
    c = np.empty((m, n), _F32)
    fn(a.ctypes.data, oa[1], oa[0], b.ctypes.data, ob[1], ob[0], c.ctypes.data, m, n, k, sgemm, nt)
    return c
