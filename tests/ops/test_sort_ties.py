"""sort / argsort / msort / pack_padded_sequence against torch where equal elements decide the order.

torch's default sort (stable=False) leaves ties where libstdc++'s std::sort puts them (insertion sort up to
16 elements, introsort above; 1-D ascending integer sorts of >= 32768 elements use a stable radix sort):
ember replays it (See NOTE [ torch's unstable sort order ] in ember/_ops/_stdsort.py). Cases cover few and
many distinct values, NaNs and signed zeros, both directions, every dim of 2-D/3-D inputs, non-contiguous
inputs and stable=True.
"""

import numpy as np
import pytest
import torch
from compare import assert_same

import ember

_DTYPES = [np.int64, np.int32, np.int16, np.uint8, np.float32, np.float64, np.float16, np.bool_]


def _values(n, distinct, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, distinct, n)
    if dtype == np.bool_:
        return (x % 2).astype(np.bool_)
    x = x.astype(dtype)
    if np.dtype(dtype).kind == "f" and n > 4:
        x[rng.integers(0, n, n // 7)] = np.nan
        x[rng.integers(0, n, n // 9)] = -0.0
    return x


@pytest.mark.parametrize("dtype", _DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [5, 16, 17, 40, 193, 1000, 5000])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
def test_sort_1d_ties(dtype, n, descending, stable):
    for distinct in (1, 3, max(2, n // 3)):
        x = _values(n, distinct, dtype, n + distinct)
        e = ember.sort(ember.from_numpy(x), descending=descending, stable=stable)
        t = torch.sort(torch.from_numpy(x), descending=descending, stable=stable)
        assert_same(e.values, t.values)
        assert_same(e.indices, t.indices)
        assert_same(ember.argsort(ember.from_numpy(x), descending=descending, stable=stable),
                    torch.argsort(torch.from_numpy(x), descending=descending, stable=stable))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [32767, 32768, 100000])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_large_ties(dtype, n, descending):
    """Around the radix-sort switch (1-D, ascending, integer, >= 32768 elements: stable) and above it."""
    x = _values(n, 4, dtype, 3)
    e = ember.sort(ember.from_numpy(x), descending=descending)
    t = torch.sort(torch.from_numpy(x), descending=descending)
    assert_same(e.indices, t.indices)
    xx = x.reshape(1, -1)  # 2-D: never the radix sort
    assert_same(ember.argsort(ember.from_numpy(xx), descending=descending),
                torch.argsort(torch.from_numpy(xx), descending=descending))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "sliced"])
def test_sort_nd_ties(dim, descending, layout):
    x = _values(40 * 30 * 20, 5, np.float32, 1).reshape(40, 30, 20)
    views = {"contiguous": lambda m, a: a, "permuted": lambda m, a: a.permute(2, 0, 1),
             "sliced": lambda m, a: a[:, ::2]}
    e = views[layout](ember, ember.from_numpy(x))
    t = views[layout](torch, torch.from_numpy(x))
    es, ts = ember.sort(e, dim=dim, descending=descending), torch.sort(t, dim=dim, descending=descending)
    assert_same(es.values, ts.values)
    assert_same(es.indices, ts.indices)
    assert_same(ember.msort(e), torch.msort(t))


@pytest.mark.parametrize("batch", [3, 17, 40])
def test_pack_padded_sequence_equal_lengths(batch):
    """enforce_sorted=False sorts the lengths with torch.sort(descending=True): its tie order."""
    lengths = np.random.default_rng(batch).integers(1, 4, batch)
    lengths[0] = 3
    x = np.random.default_rng(0).standard_normal((batch, 3, 2)).astype(np.float32)
    e = ember.nn.utils.rnn.pack_padded_sequence(ember.from_numpy(x), lengths.tolist(), batch_first=True,
                                                enforce_sorted=False)
    t = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x), lengths.tolist(), batch_first=True,
                                                enforce_sorted=False)
    assert_same(e.data, t.data)
    assert_same(e.sorted_indices, t.sorted_indices)
    assert_same(e.unsorted_indices, t.unsorted_indices)
