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
get the top one), every introsort level for all segments of all rows at once with NumPy; a segment with
fewer than two tied elements is left alone (its order cannot affect ties). libc++ (macOS) and MSVC sort
differently; ember reproduces libstdc++'s.

NOTE [ torch's topk and kthvalue tie order ]
Other CPU kernels pick among equal elements by their own steps, replayed here on the same rank keys, in
Python, only for the rows where ties reach the answer:
  * topk (TopKImpl.h): (value, index) pairs with a NaN-largest comparator; std::partial_sort (heap_select
    + sort_heap) when k * 64 <= n, else std::nth_element (introselect) at k - 1 and, when sorted, std::sort
    of the first k - 1 (so sorted=False returns nth_element's arrangement, ties or not);
  * kthvalue: TH's Sedgewick quickselect (quick_select_template, SortingUtils.h);
  * mode: std::sort by value with `<` and the last pair of the first longest run (rows with NaNs replay the
    C++ steps on the floats themselves: `<` is then no strict weak order);
  * multinomial without replacement: q.topk(n) of q = p / Exp(1).
median/nanmedian break ties by index, max/min/argmax/argmin and cummax/cummin take rules NumPy's
equivalents share, and unique keeps NaNs apart (float16/bfloat16 number them in unstable-sort order).
"""

import numpy as np

_THRESHOLD = 16  # libstdc++'s _S_threshold


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
    _make_heap(k, p, first, last)
    _sort_heap(k, p, first, last)


def _make_heap(k, p, first, middle):
    n = middle - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(k, p, first, parent, n, k[first + parent], p[first + parent])


def _sort_heap(k, p, first, last):
    n = last - first
    while n > 1:
        n -= 1
        kv, pv = k[first + n], p[first + n]
        k[first + n], p[first + n] = k[first], p[first]
        _adjust_heap(k, p, first, 0, n, kv, pv)


def _heap_select(k, p, first, middle, last):
    """libstdc++'s __heap_select: the heap of [first, middle) takes every smaller element of [middle, last)."""
    _make_heap(k, p, first, middle)
    n = middle - first
    for i in range(middle, last):
        if k[i] < k[first]:
            kv, pv = k[i], p[i]
            k[i], p[i] = k[first], p[first]
            _adjust_heap(k, p, first, 0, n, kv, pv)


def _partition_py(k, p, first, last):
    """libstdc++'s __unguarded_partition_pivot on lists: median of three to `first`, Hoare's partition."""
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
            return i
        k[i], k[j], p[i], p[j] = k[j], k[i], p[j], p[i]
        i += 1


def _linear_insert(k, p, i):
    """libstdc++'s __unguarded_linear_insert (stopped at the array's start, where C++ would run off)."""
    kv, pv = k[i], p[i]
    j = i
    while j > 0 and kv < k[j - 1]:
        k[j], p[j] = k[j - 1], p[j - 1]
        j -= 1
    k[j], p[j] = kv, pv


def _insertion_sort(k, p, first, last):
    """libstdc++'s __insertion_sort: an element below the first one moves to the front, any other is
    inserted from the right (the same as a stable insertion sort for a strict weak order; not with NaNs)."""
    for i in range(first + 1, last):
        if k[i] < k[first]:
            kv, pv = k[i], p[i]
            k[first + 1:i + 1], p[first + 1:i + 1] = k[first:i], p[first:i]
            k[first], p[first] = kv, pv
        else:
            _linear_insert(k, p, i)


def _nth_element(k, p, nth, n):
    """libstdc++'s std::nth_element (__introselect) on lists."""
    first, last, depth = 0, n, 2 * (n.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(k, p, first, nth + 1, last)
            k[first], k[nth], p[first], p[nth] = k[nth], k[first], p[nth], p[first]
            return
        depth -= 1
        cut = _partition_py(k, p, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(k, p, first, last)


def _introsort_py(k, p, first, last, depth):
    """libstdc++'s __introsort_loop on lists."""
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(k, p, first, last)
            return
        depth -= 1
        cut = _partition_py(k, p, first, last)
        _introsort_py(k, p, cut, last, depth)
        last = cut


def std_sort_py(values):
    """(values, original positions) after `std::sort(first, last, operator<)` over a list, comparing the
    elements themselves: for float values with NaNs (no strict weak order) this is what the C++ code does."""
    k, p = list(values), list(range(len(values)))
    _introsort_py(k, p, 0, len(k), 2 * (len(k).bit_length() - 1))
    if len(k) > _THRESHOLD:  # __final_insertion_sort
        _insertion_sort(k, p, 0, _THRESHOLD)
        for i in range(_THRESHOLD, len(k)):
            _linear_insert(k, p, i)
    else:
        _insertion_sort(k, p, 0, len(k))
    return k, p


def topk_perm(keys, k, sorted_):
    """The first k indices torch's CPU topk returns for one row of integer `keys` in its comparator's order
    (TopKImpl.h: std::partial_sort when k * 64 <= n, else std::nth_element at k - 1 and, if sorted, std::sort
    of the first k - 1)."""
    n = len(keys)
    kl, pl = list(keys), list(range(n))
    if k * 64 <= n:
        _heap_select(kl, pl, 0, k, n)
        _sort_heap(kl, pl, 0, k)
        return pl[:k]
    _nth_element(kl, pl, k - 1, n)
    if sorted_ and k > 2:
        head = std_sort_perm(np.asarray(kl[:k - 1]))
        pl[:k - 1] = [pl[i] for i in head.tolist()]
    return pl[:k]


def quick_select_index(keys, k):
    """The index torch's kthvalue returns: its Sedgewick quick_select_template (SortingUtils.h) run on one row
    of integer `keys` (ascending comparator order) for the k-th (0-based) smallest."""
    a, p = list(keys), list(range(len(keys)))

    def swap(x, y):
        a[x], a[y], p[x], p[y] = a[y], a[x], p[y], p[x]
    lo, hi = 0, len(a) - 1
    while True:
        if hi <= lo:
            break
        if hi == lo + 1:
            if a[lo] > a[hi]:
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)
        if a[lo + 1] > a[hi]:
            swap(lo + 1, hi)
        if a[lo] > a[hi]:
            swap(lo, hi)
        if a[lo + 1] > a[lo]:
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, a[lo]
        while True:
            i += 1
            while piv > a[i]:
                i += 1
            j -= 1
            while a[j] > piv:
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return p[k]


def order_ranks(a, idx):
    """Integer keys of the rows of 2-D `a` (by original position) from `idx`, the rows' stable argsort in a
    comparator's order: equal elements (NaNs among them) share a key. Also the tied flags by position."""
    s = np.take_along_axis(a, idx, axis=1)
    same = s[:, 1:] == s[:, :-1]
    if s.dtype.kind == "f" or s.dtype.kind == "V":
        nan = np.isnan(s.astype(np.float32))
        same |= nan[:, 1:] & nan[:, :-1]
    rank = np.zeros(idx.shape, np.int64)
    np.cumsum(~same, axis=1, out=rank[:, 1:])
    keys = np.empty_like(rank)
    np.put_along_axis(keys, idx, rank, axis=1)
    return keys, same


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
    if s.dtype.kind == "f" or s.dtype.kind == "V":
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
