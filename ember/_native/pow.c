/* x ** e for C-contiguous float32 x and an integral exponent e (K3): computed in double by repeated squaring
 * (the result's last rounding is the float one), which gives the correctly rounded float result, as the
 * libm powf that torch's scalar loop calls does (NOTE [ General powers ] in ember/_ops/pointwise.py). e < 0
 * takes the reciprocal in double at the end; e = 0 gives 1 (NaN included), as pow does. Elements go in
 * blocks of 256 held in double, each multiplication a vectorised loop over the block. */
#include "common.h"

#define BLOCK 256

void pow_int_f32(const float *x, float *y, idx n, int64_t e, int nt) {
    uint64_t k0 = e < 0 ? (uint64_t)0 - (uint64_t)e : (uint64_t)e;
    idx blocks = (n + BLOCK - 1) / BLOCK;
    EM_PARALLEL_FOR(nt)
    for (idx bi = 0; bi < blocks; bi++) {
        idx lo = bi * BLOCK, m = lo + BLOCK < n ? BLOCK : n - lo;
        double b[BLOCK], r[BLOCK];
        for (idx i = 0; i < m; i++) {
            b[i] = (double)x[lo + i];
            r[i] = 1.0;
        }
        for (uint64_t k = k0; k; k >>= 1) {
            if (k & 1)
                for (idx i = 0; i < m; i++) r[i] = r[i] * b[i];
            if (k > 1)
                for (idx i = 0; i < m; i++) b[i] = b[i] * b[i];
        }
        if (e < 0)
            for (idx i = 0; i < m; i++) y[lo + i] = (float)(1.0 / r[i]);
        else
            for (idx i = 0; i < m; i++) y[lo + i] = (float)r[i];
    }
}

/* x ** 3 as torch's kernel computes it for float32, (x x) x rounded twice (NOTE [ Cheap powers ] in
 * ember/_ops/pointwise.py), in one pass instead of NumPy's two. */
void cube_f32(const float *x, float *y, idx n, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) {
        float s = x[i] * x[i];
        y[i] = s * x[i];
    }
}
