"""The order torch's default (unstable) CPU sort leaves equal elements in: libstdc++'s `std::sort` replayed.

NOTE [ torch's unstable sort order ]
`torch.sort(x)` / `argsort` with `stable=False` (the default) run `std::sort` over (value, index) pairs with
torch's comparator (NaN above everything, descending compares with `>`); torch 2.13's x86-64 and aarch64
Linux wheels give the same order under every ATEN_CPU_CAPABILITY (checked: default, avx2, avx512), i.e.
libstdc++'s introsort:

  * while a range holds more than 16 elements: the median of (first + 1, middle, last - 1) is swapped to
    `first`, then Hoare's unguarded partition of [first + 1, last) around it (equal elements stop both
    scans and are swapped); recurse on the right part, loop on the left; after 2 * floor(log2 n) levels a
    range is heap-sorted instead (make_heap + sort_heap);
  * finally an insertion sort over the whole array, which is stable, so the result is the stable sort of
    the arrangement the partitions left.

So equal elements come out in input order for n <= 16 and in a scrambled but deterministic order above.
Only the order of ties depends on any of this: rows without ties take NumPy's stable argsort, which is the
same permutation. Rows with ties are replayed here on integer rank keys (equal values share a rank, NaNs
get the top one): large ranges partition with a few NumPy passes (the scans of Hoare's partition visit
original values only, so the swap pairs are the k-th "stop" positions from each side), ranges of up to
_SMALL elements in plain Python. libc++ (macOS) and MSVC sort differently; ember reproduces libstdc++'s.
"""

import numpy as np

_THRESHOLD = 16  # libstdc++'s _S_threshold
_SMALL = 384  # below this a partition runs in Python lists


def _median_to_first(k, first, a, b, c):
    """libstdc++'s __move_median_to_first: the position whose element is swapped into `first`."""
    ka, kb, kc = k[a], k[b], k[c]
    if ka < kb:
        return b if kb < kc else (c if ka < kc else a)
    if ka < kc:
        return a
    return c if kb < kc else b


def _adjust_heap(k, p, base, hole, n, kv, pv):
    """libstdc++'s __adjust_heap then __push_heap on the heap k[base:base + n] (parallel lists k, p)."""
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if k[base + child] < k[base + child - 1]:
            child -= 1
        k[base + hole], p[base + hole] = k[base + child], p[base + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        k[base + hole], p[base + hole] = k[base + child - 1], p[base + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and k[base + parent] < kv:
        k[base + hole], p[base + hole] = k[base + parent], p[base + parent]
        hole = parent
        parent = (hole - 1) // 2
    k[base + hole], p[base + hole] = kv, pv


def _heap_sort(k, p, first, last):
    """libstdc++'s __partial_sort(first, last, last): make_heap, then sort_heap."""
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(k, p, first, parent, n, k[first + parent], p[first + parent])
    while n > 1:
        n -= 1
        kv, pv = k[first + n], p[first + n]
        k[first + n], p[first + n] = k[first], p[first]
        _adjust_heap(k, p, first, 0, n, kv, pv)


def _loop_py(k, p, first, last, depth):
    """libstdc++'s __introsort_loop on Python lists."""
    while last - first > _THRESHOLD:
        if len(set(k[first:last])) == last - first:
            return  # no ties left here: the final stable sort orders these as std::sort would
        if depth == 0:
            _heap_sort(k, p, first, last)
            return
        depth -= 1
        m = _median_to_first(k, first, first + 1, first + (last - first) // 2, last - 1)
        k[first], k[m], p[first], p[m] = k[m], k[first], p[m], p[first]
        pivot, i, j = k[first], first + 1, last
        while True:
            while k[i] < pivot:
                i += 1
            j -= 1
            while pivot < k[j]:
                j -= 1
            if i >= j:
                break
            k[i], k[j], p[i], p[j] = k[j], k[i], p[j], p[i]
            i += 1
        _loop_py(k, p, i, last, depth)
        last = i


def _partition_np(k, p, first, last):
    """One median-of-three + unguarded partition of k[first:last] (NumPy arrays, in place); returns cut."""
    m = _median_to_first(k, first, first + 1, first + (last - first) // 2, last - 1)
    k[[first, m]], p[[first, m]] = k[[m, first]], p[[m, first]]
    pivot, seg = k[first], k[first + 1:last]
    left = np.append(np.flatnonzero(seg >= pivot) + (first + 1), last)  # where the left scan stops
    right = np.append((np.flatnonzero(seg <= pivot) + (first + 1))[::-1], first)  # ... the right scan
    n = min(left.size, right.size)
    stop = int(np.argmax(left[:n] >= right[:n]))  # the first pair whose scans have crossed
    a, b = left[:stop], right[:stop]
    k[a], k[b] = k[b], k[a].copy()
    p[a], p[b] = p[b], p[a].copy()
    # a later left scan also stops at an earlier swap's right position (it now holds a value >= pivot)
    return int(left[stop] if stop == 0 else min(left[stop], right[stop - 1]))


def std_sort_perm(keys):
    """The permutation `std::sort(first, last, less)` applies to the 1-D integer array `keys`."""
    n = keys.size
    k, p = keys.astype(np.int64), np.arange(n, dtype=np.int64)
    todo = [(0, n, 2 * (n.bit_length() - 1))]
    while todo:
        first, last, depth = todo.pop()
        while last - first > _SMALL and depth > 0:
            depth -= 1
            cut = _partition_np(k, p, first, last)
            todo.append((cut, last, depth))
            last = cut
        if last - first > _THRESHOLD:
            ks, ps = k[first:last].tolist(), p[first:last].tolist()
            _loop_py(ks, ps, 0, last - first, depth)
            k[first:last], p[first:last] = ks, ps
    return p[np.argsort(k, kind="stable")]


def _rank_keys(row, descending):
    """Integer keys ordering `row` as torch's comparator does (NaN largest, -0.0 == 0.0)."""
    _, inv = np.unique(row, return_inverse=True)  # NaNs collapse into the last (largest) key
    inv = inv.astype(np.int64).reshape(-1)
    return -inv if descending else inv


def unstable_argsort(a, dim, descending, stable_idx):
    """torch's `stable=False` argsort of `a` along `dim`, given NumPy's stable one (`stable_idx`): rows with
    ties are replayed (See NOTE [ torch's unstable sort order ])."""
    n = a.shape[dim]
    if n <= _THRESHOLD or a.dtype.kind == "c":
        return stable_idx
    s = np.take_along_axis(a, stable_idx, axis=dim)
    same = np.take(s, np.arange(1, n), axis=dim) == np.take(s, np.arange(n - 1), axis=dim)
    if s.dtype.kind == "f" or s.dtype.kind == "V":
        hi, lo = np.take(s, np.arange(1, n), axis=dim), np.take(s, np.arange(n - 1), axis=dim)
        same |= np.isnan(hi.astype(np.float32)) & np.isnan(lo.astype(np.float32))
    tied = same.any(axis=dim)
    if not tied.any():
        return stable_idx
    out = np.moveaxis(stable_idx.copy(), dim, -1)
    rows = np.moveaxis(a, dim, -1)
    for pos in np.ndindex(tied.shape):
        if tied[pos]:
            out[pos] = std_sort_perm(_rank_keys(rows[pos], descending))
    return np.moveaxis(out, -1, dim)
