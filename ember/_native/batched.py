"""The Python side of batched.c: a batch of float32 matrix products split over the kernels' threads (NOTE
[ Batched products on the team ] in batched.c), called by the matmul ops' kernels (ember/_ops/linalg.py);
None where it does not apply (native off or unavailable, another dtype, a layout BLAS cannot take), and the
op then runs NumPy's matmul.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from . import MIN_SIZE, _state, function, threads_for
from .conv import _blas, _run

__all__ = ["bmm"]

_P, _I, _C = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
_F32 = np.dtype(np.float32)
_ND = np.ndarray
_ARGS = [_P, _P, _I, _C, _P, _P, _I, _C, _P, _I, _I, _I, _I, _P, _C]


def _layout(s0, s1, rows, cols):
    """(transposed, leading dim) of a matrix with element strides (s0, s1), or None (not BLAS's layout)."""
    if s1 == 1 and s0 >= max(cols, 1):
        return 0, s0
    if s0 == 1 and s1 >= max(rows, 1):
        return 1, s1
    return None


# NOTE [ When a batch of products pays for threads ]
# Waking the team and joining it costs ~7 us (an empty parallel region, measured back to back), and a batch of
# small products costs about 1 us per product (the sgemm call) plus its multiply-adds at ~150 per ns on one
# core. The batch goes to the team only when that estimate reaches _PARALLEL_US microseconds (the attention
# products of a 16 x 4-head batch of 64-token sequences: ~120 us), where the second thread saves several times
# what it costs; smaller batches stay on NumPy's loop, on one thread.
_PARALLEL_US = 30

_offsets_cache: dict = {}  # (batch shape, batch element strides) -> (offsets, their address)


def _offsets(shape, strides):
    """(offsets, address): the element offset of every batch element (C order) from the batch dims' element
    strides, kept for the next call (a model multiplies the same shapes every step)."""
    key = (shape, strides)
    hit = _offsets_cache.get(key)
    if hit is None:
        off = np.zeros((), np.int64)
        for size, st in zip(shape, strides):
            off = np.add.outer(off, np.arange(size, dtype=np.int64) * st)
        off = off.ravel()
        if len(_offsets_cache) > 256:
            _offsets_cache.clear()
        hit = _offsets_cache[key] = (off, off.ctypes.data)
    return hit[1]


def bmm(a, b, threads=None):
    """a @ b for float32 NumPy arrays of 3 or more dims whose batch dims broadcast, as NumPy's matmul computes
    it (a contiguous result), on the threads its work pays for (NOTE [ When a batch of products pays for
    threads ]); None where it does not apply, and where it would run on one thread (NumPy's own loop costs
    ~8 us less per call; EMBER_NATIVE=force takes this path at every size, for the tests). `threads`: that
    many threads at any size (tests)."""
    if threads is None and _state["threads"] == 1 and MIN_SIZE:  # (on one thread a product pays this only)
        return None
    if type(a) is not _ND or type(b) is not _ND or a.dtype != _F32 or b.dtype != _F32 or a.ndim < 3 \
            or b.ndim < 3 or not a.flags.aligned or not b.flags.aligned:
        return None  # (a meta or fake tensor's payload is not an ndarray: its op answers from the meta rule)
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if b.shape[-2] != k or not m or not n or not k:
        return None
    if threads is None and MIN_SIZE:  # (before the layout checks, which cost ~2 us)
        count = max(a.size // (m * k), b.size // (k * n))
        work = count * m * n * k
        if count + work // 150000 < _PARALLEL_US or threads_for(work) < 2:
            return None
    batch = a.shape[:-2]
    if b.shape[:-2] != batch:
        try:
            batch = np.broadcast_shapes(batch, b.shape[:-2])
        except ValueError:
            return None
    count = math.prod(batch)
    sa, sb = a.strides, b.strides
    if count < 2 or any(st % 4 or st < 0 for st in sa + sb):
        return None
    la = _layout(sa[-2] >> 2, sa[-1] >> 2, m, k)
    lb = _layout(sb[-2] >> 2, sb[-1] >> 2, k, n)
    if la is None or lb is None:
        return None
    nt = min(threads_for(count * m * n * k) if threads is None else threads, count)
    blas = _blas()
    fn = blas and function("batched", "bmm_f32", _ARGS, _C)
    if not fn:
        return None
    offa = _offsets(batch, _batch_strides(a, batch))
    offb = _offsets(batch, _batch_strides(b, batch))
    c = np.empty(batch + (m, n), _F32)
    _run((fn, blas, nt), (a.ctypes.data, offa, la[1], la[0], b.ctypes.data, offb, lb[1], lb[0], c.ctypes.data,
                          count, m, n, k))
    return c


def _batch_strides(x, batch):
    """x's element strides over the broadcast batch dims `batch` (0 where x is broadcast)."""
    lead = len(batch) - (x.ndim - 2)  # (missing leading dims broadcast)
    return (0,) * lead + tuple(0 if size == 1 else st >> 2 for size, st in zip(x.shape[:-2], x.strides[:-2]))
