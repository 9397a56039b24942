/* Index kernels on C-contiguous data: rows of `src` added into rows of `out` chosen by an int64 index, in
 * index order (the order NumPy's `np.add.at` adds in, so both paths give the same bits): embedding's
 * backward. Indices are checked by the caller. */
#include "common.h"

void index_add_rows_f32(float *out, const int64_t *index, const float *src, idx n, idx D) {
    for (idx i = 0; i < n; i++) {
        float *o = out + index[i] * D;
        const float *s = src + i * D;
        for (idx j = 0; j < D; j++) o[j] = o[j] + s[j];
    }
}

void index_add_rows_f64(double *out, const int64_t *index, const double *src, idx n, idx D) {
    for (idx i = 0; i < n; i++) {
        double *o = out + index[i] * D;
        const double *s = src + i * D;
        for (idx j = 0; j < D; j++) o[j] = o[j] + s[j];
    }
}
