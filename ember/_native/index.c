/* Index kernels on C-contiguous data viewed as (outer, n, inner) around the indexed dim (indices checked
 * and made non-negative by the caller, int64):
 *   index_add    out[o, index[i], k] += src[o, i, k]          (index: (n,); embedding's backward too)
 *   scatter_add  out[o, index[o, i, k], k] += src[o, i, k]    (index shaped as src)
 *   gather       y[o, i, k] = x[o, index[o, i, k], k]
 * The additions into one element of `out` happen in the order of i, which is the order of NumPy's
 * `np.add.at` and of torch's CPU loops, so all three paths give the same bits. Rows of the outer dim touch
 * disjoint parts of `out` and are split between threads. Each kernel first checks every index against
 * `size` and returns 0 without touching anything if one is outside (the caller then runs NumPy's code,
 * which raises), else 1: a bad index never reads or writes outside the arrays. */

#include "common.h"

static int in_range(const int64_t *index, idx n, idx size) {
    int bad = 0;
    for (idx i = 0; i < n; i++) bad |= (index[i] < 0) | (index[i] >= size);
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
    if (!in_range(index, outer * n * inner, size)) return 0;                                                 \
    if (inner == 1) { /* (the last dim: one flat loop, which vectorises into gathers) */                     \
        EM_PARALLEL_FOR(nt)                                                                                  \
        for (idx o = 0; o < outer; o++) {                                                                    \
            const int64_t *ix = index + o * n;                                                               \
            const T *xs = x + o * size;                                                                      \
            T *d = y + o * n;                                                                                \
            for (idx i = 0; i < n; i++) d[i] = xs[ix[i]];                                                    \
        }                                                                                                    \
        return 1;                                                                                            \
    }                                                                                                        \
    EM_PARALLEL_FOR(nt)                                                                                      \
    for (idx o = 0; o < outer; o++)                                                                          \
        for (idx i = 0; i < n; i++) {                                                                        \
            const int64_t *ix = index + (o * n + i) * inner;                                                 \
            const T *xs = x + o * size * inner;                                                              \
            T *d = y + (o * n + i) * inner;                                                                  \
            for (idx k = 0; k < inner; k++) d[k] = xs[ix[k] * inner + k];                                    \
        }                                                                                                    \
    return 1;                                                                                                \
}

INDEX_KERNELS(float, f32)
INDEX_KERNELS(double, f64)
