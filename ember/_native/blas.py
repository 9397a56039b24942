"""Matrix products on the number of threads their size pays for (NOTE [ BLAS threads by size ]): the matmul
ops' kernels call `matmul` for their products; `ember.set_num_threads` tells it the thread count
(`set_count`).

Below the tensor types (ember/_native's layer), so the op kernels may import it; the thread count and NumPy's
OpenBLAS entry points come from ember/_runtime, read when first needed.
"""

__all__ = ["BLAS_PARALLEL_WORK", "matmul", "set_count"]

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
# two matrices runs on the native kernels' OpenMP team (passive: its idle threads sleep), split into blocks
# of rows, each a single-threaded sgemm (NOTE [ One pool for kernels and BLAS ] in ember/_native/conv.c;
# either operand row-major or transposed, its rows possibly apart, as a slice of a wider matrix is: an LSTM
# backward's product by its workspace once fell through to OpenBLAS's pool, whose worker then spun for 19 ms
# of CPU per step where numpy was imported before ember, so without OPENBLAS_THREAD_TIMEOUT);
# other large products (float64, batched, without a compiler) switch OpenBLAS's pool to ember's count and
# back to one thread after them. So NumPy's other BLAS calls (einsum's, linalg's, small products in kernels)
# also stay on one thread once ember made its first product: OpenBLAS's pool no longer wakes, and the
# kernels' team is the only one. A switch is a ctypes call, made only around products of more than 0.1 ms.
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
        if _blas_now[0] != 1:
            _set_blas(1)
        return a @ b
    n = _blas_threads()
    if n == 1:
        return a @ b
    if _blas_now[0] != 1:
        _set_blas(1)
    from . import conv
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:  # (a batch of rows times one matrix: one product)
        c = conv.gemm(a.reshape(-1, a.shape[-1]), b, n)
        if c is not None:
            return c.reshape(a.shape[:-1] + b.shape[1:])
    c = conv.gemm(a, b, n)  # float32 matrices: the kernels' threads (NOTE [ One pool for kernels and BLAS ])
    if c is not None:
        return c
    _set_blas(n)
    try:
        return a @ b
    finally:
        _set_blas(1)
