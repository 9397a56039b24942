"""Order-dependent ops against torch where equal elements (and NaNs) decide which index comes back.

torch's CPU kernels break ties by the steps of their algorithms: topk runs std::partial_sort (k * 64 <= n) or
std::nth_element + std::sort of the first k - 1 (TopKImpl.h); kthvalue a Sedgewick quickselect
(SortingUtils.h); mode a std::sort by value and the last pair of the longest run; median/nanmedian,
max/min/argmax/argmin and cummax/cummin have index rules of their own; unique keeps every NaN apart;
multinomial without replacement is q.topk(n). ember replays them (See NOTE [ torch's topk and kthvalue tie
order ] in ember/_ops/_stdsort.py). Inputs: few distinct values (many ties), NaNs and signed zeros, rows of
<= 16 and > 16 elements on both sides of topk's partial_sort switch, every dim, non-contiguous layouts.
"""

import numpy as np
import pytest
import torch
from compare import check

import ember

_DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_]
_SHAPES = [(6, 10), (5, 40), (3, 300), (2, 3000)]


def _values(shape, distinct, dtype, seed, nan=True):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, distinct, shape)
    if dtype == np.bool_:
        return (x % 2).astype(np.bool_)
    x = x.astype(dtype)
    if np.dtype(dtype).kind == "f" and nan:
        x[rng.random(shape) < 0.1] = np.nan
        x[rng.random(shape) < 0.1] = -0.0
    return x


_LAYOUTS = {"contiguous": lambda t: t, "transposed": lambda t: t.t(), "sliced": lambda t: t[:, ::2]}

_OPS = {
    "topk_k1": lambda m, t, d: m.topk(t, 1, dim=d),
    "topk_k3": lambda m, t, d: m.topk(t, 3, dim=d),
    "topk_smallest": lambda m, t, d: m.topk(t, 4, dim=d, largest=False),
    "topk_half": lambda m, t, d: m.topk(t, t.shape[d] // 2, dim=d),
    "topk_all_unsorted": lambda m, t, d: m.topk(t, t.shape[d], dim=d, sorted=False),
    "topk_unsorted": lambda m, t, d: m.topk(t, 5, dim=d, largest=False, sorted=False),
    "kthvalue_2": lambda m, t, d: m.kthvalue(t, 2, dim=d),
    "kthvalue_mid": lambda m, t, d: m.kthvalue(t, t.shape[d] // 2 + 1, dim=d, keepdim=True),
    "median": lambda m, t, d: m.median(t, dim=d),
    "nanmedian": lambda m, t, d: m.nanmedian(t, dim=d),
    "mode": lambda m, t, d: m.mode(t, dim=d),
    "max": lambda m, t, d: m.max(t, dim=d),
    "min": lambda m, t, d: m.min(t, dim=d),
    "argmax": lambda m, t, d: m.argmax(t, dim=d),
    "argmin": lambda m, t, d: m.argmin(t, dim=d),
    "cummax": lambda m, t, d: m.cummax(t, dim=d),
    "cummin": lambda m, t, d: m.cummin(t, dim=d),
    "unique": lambda m, t, d: m.unique(t, return_inverse=True, return_counts=True),
    "unique_unsorted": lambda m, t, d: m.unique(t, sorted=False, return_inverse=True),
}


@pytest.mark.parametrize("op", list(_OPS))
@pytest.mark.parametrize("dtype", _DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", _SHAPES, ids=str)
def test_order_ties(op, dtype, shape):
    f = _OPS[op]
    for seed, distinct in enumerate((2, 5, max(3, shape[1] // 4))):
        x = _values(shape, distinct, dtype, seed)
        for view in _LAYOUTS.values():
            for d in (0, 1):
                check(lambda m, t: f(m, view(t), d), x, check_stride=False)


@pytest.mark.parametrize("n", [17, 64, 65, 640, 2000])
@pytest.mark.parametrize("largest", [False, True])
def test_topk_around_partial_sort_switch(n, largest):
    """partial_sort for k * 64 <= n, nth_element above; many ties around the k-th value."""
    x = _values((4, n), 3, np.float32, n)
    for k in sorted({1, 2, max(1, n // 64), n // 64 + 1, n // 2, n}):
        if 1 <= k <= n:
            for s in (True, False):
                check(lambda m, t: m.topk(t, k, largest=largest, sorted=s), x)


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda d: np.dtype(d).name)
def test_order_ties_3d(dtype):
    x = _values((7, 33, 5), 4, dtype, 11)
    for d in (0, 1, 2):
        check(lambda m, t: m.topk(t.permute(2, 0, 1), 3, dim=d), x)
        check(lambda m, t: m.kthvalue(t.permute(1, 2, 0), 2, dim=d), x)
        check(lambda m, t: m.mode(t.permute(2, 1, 0), dim=d), x)


def test_mode_nan_rows():
    """With NaNs std::sort's `<` is no strict weak order; the replay follows the C++ steps."""
    rng = np.random.default_rng(3)
    for n in (5, 16, 17, 40, 300):
        x = rng.integers(0, 4, (20, n)).astype(np.float32)
        x[rng.random(x.shape) < 0.15] = np.nan
        check(lambda m, t: m.mode(t, dim=1), x)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_multinomial_without_replacement_ties(seed):
    """torch draws q = p / Exp(1) and takes q.topk(n): equal q (zero rows, equal p) follow topk's order."""
    p = np.ones((6, 40))
    p[:, ::3] = 0
    p[1] = 2.0
    results = []
    for m in (torch, ember):
        m.manual_seed(seed)
        results.append(m.multinomial(m.from_numpy(p), 20).numpy())
    np.testing.assert_array_equal(results[0], results[1])
