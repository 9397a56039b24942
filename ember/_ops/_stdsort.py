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
_SMALL = 192  # below this a partition runs in Python lists


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


def _level(k, p, f, e):
    """One median-of-three + unguarded partition of every segment k[f[s]:e[s]] at once (disjoint segments of
    the flat arrays k, p, sorted by start; in place); returns the cuts. The scans of Hoare's partition visit
    original values only, so the swaps pair the j-th position where the left scan stops (an element >= pivot)
    with the j-th from the right where the right scan stops (<= pivot), up to the first pair that has
    crossed; a later left scan also stops at the previous swap's right position (it now holds a value >=
    pivot), and the last segment position is the left scan's sentinel."""
    a, b, c = f + 1, f + (e - f) // 2, e - 1
    ka, kb, kc = k[a], k[b], k[c]
    m = np.where(ka < kb, np.where(kb < kc, b, np.where(ka < kc, c, a)),
                 np.where(ka < kc, a, np.where(kb < kc, c, b)))  # __move_median_to_first
    k[f], k[m] = k[m], k[f].copy()
    p[f], p[m] = p[m], p[f].copy()
    lens = e - f - 1  # the segments' positions after the pivot
    starts = np.cumsum(lens) - lens
    base = f + 1 - starts  # flat interior position + base = position in k
    if f.size == 1:
        kv = k[f[0] + 1:e[0]]
    else:
        kv = k[np.repeat(base, lens) + np.arange(starts[-1] + lens[-1], dtype=f.dtype)]
    pv = np.repeat(k[f], lens)
    ge, le = kv >= pv, kv <= pv
    gpos, lpos = np.flatnonzero(ge), np.flatnonzero(le)  # flat positions among the segments' interiors
    cg = np.add.reduceat(ge, starts, dtype=np.int64)
    cl = np.add.reduceat(le, starts, dtype=np.int64)
    npair = np.minimum(cg, cl)  # >= 1: median-of-three leaves one element >= and one <= the pivot
    pstart = np.cumsum(npair) - npair
    j = np.arange(pstart[-1] + npair[-1])
    left = gpos[j + np.repeat(np.cumsum(cg) - cg - pstart, npair)]
    right = lpos[np.repeat(np.cumsum(cl) - 1 + pstart, npair) - j]
    swap = left < right  # (a prefix of each segment's pairs: left rises, right falls)
    ns = np.add.reduceat(swap, pstart, dtype=np.int64)
    seg_base = np.repeat(base, npair)
    sa, sb = left[swap] + seg_base[swap], right[swap] + seg_base[swap]
    k[sa], k[sb] = k[sb], k[sa].copy()
    p[sa], p[sb] = p[sb], p[sa].copy()
    gstart = np.cumsum(cg) - cg
    more = ns < cg  # the next left stop among the original ones, else the sentinel e
    cut = np.where(more, gpos[np.minimum(gstart + ns, gpos.size - 1)] + base, e)
    np.minimum(cut, np.where(ns > 0, right[pstart + ns - 1] + base, e), out=cut)
    return cut


def std_sort_rows(keys, tied):
    """The permutations `std::sort(first, last, less)` applies to each row of the 2-D integer array `keys`;
    `tied` marks the elements that equal another one of their row. Each introsort level partitions every
    segment of every row at once; a segment holding fewer than two tied elements is left as it is (the
    final insertion sort orders it, and only ties' order depends on the arrangement)."""
    rows, n = keys.shape
    # key 2 * rank + tied: the same order, and a segment's tied elements are its odd keys
    k = (keys.astype(np.int64) << 1 | tied).reshape(-1)
    p = np.tile(np.arange(n, dtype=np.int64), rows)
    sparse = tied.mean() < 0.25  # few tied elements: worth dropping the segments that hold < 2 of them
    f = np.arange(rows, dtype=np.int64) * n
    e, depth = f + n, 2 * (n.bit_length() - 1)
    while f.size:
        keep = e - f > _THRESHOLD
        f, e = f[keep], e[keep]
        if sparse and f.size:
            lens = e - f
            starts = np.cumsum(lens) - lens
            odd = k[np.repeat(f - starts, lens) + np.arange(starts[-1] + lens[-1])] & 1
            keep = np.add.reduceat(odd, starts) >= 2
            f, e = f[keep], e[keep]
        if not f.size:
            break
        if depth == 0:  # depth limit: the rest of each segment is heap-sorted
            for a, b in zip(f.tolist(), e.tolist()):
                ks, ps = k[a:b].tolist(), p[a:b].tolist()
                _heap_sort(ks, ps, 0, b - a)
                k[a:b], p[a:b] = ks, ps
            break
        depth -= 1
        cut = _level(k, p, f, e)
        order = np.argsort(np.concatenate([f, cut]), kind="stable")  # keep the segments sorted by start
        f, e = np.concatenate([f, cut])[order], np.concatenate([cut, e])[order]
    k, p = k.reshape(rows, n), p.reshape(rows, n)
    return np.take_along_axis(p, np.argsort(k, axis=1, kind="stable"), axis=1)


def std_sort_perm(keys):
    """The permutation `std::sort(first, last, less)` applies to the 1-D integer array `keys`."""
    keys = np.asarray(keys).reshape(1, -1)
    _, inv, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return std_sort_rows(keys, counts[inv.reshape(keys.shape)] > 1)[0]


def unstable_argsort(a, dim, descending, stable_idx):
    """torch's `stable=False` argsort of `a` along `dim`, given NumPy's stable one (`stable_idx`, which is in
    torch's comparator order): rows with ties are replayed (See NOTE [ torch's unstable sort order ])."""
    n = a.shape[dim]
    if n <= _THRESHOLD or a.dtype.kind == "c":
        return stable_idx
    idx = np.moveaxis(stable_idx, dim, -1).reshape(-1, n)
    s = np.take_along_axis(np.moveaxis(a, dim, -1).reshape(-1, n), idx, axis=1)
    same = s[:, 1:] == s[:, :-1]
    if s.dtype.kind == "f" or s.dtype.name == "bfloat16":
        nan = np.isnan(s.astype(np.float32))
        same |= nan[:, 1:] & nan[:, :-1]
    rows = np.flatnonzero(same.any(axis=1))
    if not rows.size:
        return stable_idx
    same, idx = same[rows], idx[rows]
    # rank keys in comparator order (equal elements share one) and the tied flags, by original position
    rank = np.zeros(idx.shape, np.int64)
    np.cumsum(~same, axis=1, out=rank[:, 1:])
    tied = np.zeros(idx.shape, bool)
    tied[:, 1:] |= same
    tied[:, :-1] |= same
    keys, tflag = np.empty_like(rank), np.empty_like(tied)
    np.put_along_axis(keys, idx, rank, axis=1)
    np.put_along_axis(tflag, idx, tied, axis=1)
    moved = np.moveaxis(stable_idx, dim, -1)
    out = moved.reshape(-1, n).copy()
    out[rows] = std_sort_rows(keys, tflag)
    return np.moveaxis(out.reshape(moved.shape), -1, dim)
