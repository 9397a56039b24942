/* Index kernels on C-contiguous data viewed as (outer, n, inner) around the indexed dim (indices checked
 * and made non-negative by the caller, int64):
 *   index_add    out[o, index[i], k] += src[o, i, k]          (index: (n,); embedding's backward too)
 *   scatter_add  out[o, index[o, i, k], k] += src[o, i, k]    (index shaped as src)
 *   gather       y[o, i, k] = x[o, index[o, i, k], k]
 * The additions into one element of `out` happen in the order of i, which is the order of NumPy's
 * `np.add.at` and of torch's CPU loops, so all three paths give the same bits. Rows of the outer dim touch
 * disjoint parts of `out` and are split between threads. index_add and scatter_add first check every index
 * against `size` and return 0 without touching anything if one is outside (the caller then runs NumPy's code,
 * which raises), else 1: a bad index never reads or writes outside the arrays. gather, which writes only its
 * own fresh output, checks each index as it reads it instead (one pass over the index, not two: NOTE [ One
 * pass over the index ]) and reads element 0 for a bad one, then returns 0 as well.
 *
 * NOTE [ One pass over the index ]
 * A 4M-element int64 index is 32 MB, read from memory each pass. gather's front end checked its range with
 * NumPy's min and max (two passes), the kernel checked it again, then gathered: four passes where torch
 * makes one, and 1.6x torch's time. The front end now checks with `index_in_range` (one vectorised pass,
 * min and max together) and the kernel checks as it gathers. */

#include "common.h"

static int in_range(const int64_t *index, idx n, idx size) {
    uint64_t bad = 0;
    #pragma omp simd reduction(|:bad)
    for (idx i = 0; i < n; i++) bad |= (uint64_t)index[i] >= (uint64_t)size;  /* (a negative one too) */
    return !bad;
}

/* Whether every one of the n indices lies in [0, size) (gather's and scatter's argument check). */
int index_in_range(const int64_t *index, idx n, idx size, int nt) {
    uint64_t bad = 0;
    EM_PARALLEL_FOR_REDUCE(nt, |, bad)
    for (idx i = 0; i < n; i++) bad |= (uint64_t)index[i] >= (uint64_t)size;
    return !bad;
}

#define INDEX_KERNELS(T, SUFFIX)                                                                             \
int index_add_##SUFFIX(T *out, const int64_t *index, const T *src, idx outer, idx n, idx size, idx inner,    \
                       int nt) {                                                                             \
    if (!in_range(index, n, size)) return 0;                                                                 \
    EM_PARALLEL_FOR(nt)                                                                                      \
    for (idx o = 0; o < outer; o++)                                                                          \
        for (idx i = 0; i < n; i++) {                                                                        \
            T *d = out + (o * size + index[i]) * inner;                                                      \
            const T *s = src + (o * n + i) * inner;                                                          \
            for (idx k = 0; k < inner; k++) d[k] = d[k] + s[k];                                              \
        }                                                                                                    \
    return 1;                                                                                                \
}                                                                                                            \
int scatter_add_##SUFFIX(T *out, const int64_t *index, const T *src, idx outer, idx n, idx size, idx inner,  \
                         int nt) {                                                                           \
    if (!in_range(index, outer * n * inner, size)) return 0;                                                 \
    if (inner == 1) {                                                                                        \
        EM_PARALLEL_FOR(nt)                                                                                  \
        for (idx o = 0; o < outer; o++) {                                                                    \
            const int64_t *ix = index + o * n;                                                               \
            const T *s = src + o * n;                                                                        \
            T *d = out + o * size;                                                                           \
            for (idx i = 0; i < n; i++) d[ix[i]] = d[ix[i]] + s[i];                                          \
        }                                                                                                    \
        return 1;                                                                                            \
    }                                                                                                        \
    EM_PARALLEL_FOR(nt)                                                                                      \
    for (idx o = 0; o < outer; o++)                                                                          \
        for (idx i = 0; i < n; i++) {                                                                        \
            const int64_t *ix = index + (o * n + i) * inner;                                                 \
            const T *s = src + (o * n + i) * inner;                                                          \
            T *d = out + o * size * inner;                                                                   \
            for (idx k = 0; k < inner; k++) d[ix[k] * inner + k] = d[ix[k] * inner + k] + s[k];              \
        }                                                                                                    \
    return 1;                                                                                                \
}                                                                                                            \
int gather_##SUFFIX(const T *x, const int64_t *index, T *y, idx outer, idx n, idx size, idx inner, int nt) { \
    uint64_t bad = 0, us = (uint64_t)size;                                                                   \
    if (inner == 1) { /* (the last dim: one flat loop, which vectorises into gathers) */                     \
        EM_PARALLEL_FOR_REDUCE(nt, |, bad)                                                                   \
        for (idx o = 0; o < outer; o++) {                                                                    \
            const int64_t *ix = index + o * n;                                                               \
            const T *xs = x + o * size;                                                                      \
            T *d = y + o * n;                                                                                \
            for (idx i = 0; i < n; i++) {                                                                    \
                uint64_t j = (uint64_t)ix[i], b = j >= us;                                                   \
                bad |= b;                                                                                    \
                d[i] = xs[b ? 0 : j];                                                                        \
            }                                                                                                \
        }                                                                                                    \
        return !bad;                                                                                         \
    }                                                                                                        \
    EM_PARALLEL_FOR_REDUCE(nt, |, bad)                                                                       \
    for (idx o = 0; o < outer; o++)                                                                          \
        for (idx i = 0; i < n; i++) {                                                                        \
            const int64_t *ix = index + (o * n + i) * inner;                                                 \
            const T *xs = x + o * size * inner;                                                              \
            T *d = y + (o * n + i) * inner;                                                                  \
            for (idx k = 0; k < inner; k++) {                                                                \
                uint64_t j = (uint64_t)ix[k], b = j >= us;                                                   \
                bad |= b;                                                                                    \
                d[k] = xs[(b ? 0 : j) * inner + k];                                                          \
            }                                                                                                \
        }                                                                                                    \
    return !bad;                                                                                             \
}

INDEX_KERNELS(float, f32)
INDEX_KERNELS(double, f64)
