/* cumsum and cumprod of C-contiguous float32 data along one dim, accumulated in double and rounded at each
 * output, as torch's CPU scan kernel does (its accumulator type for float is double: NOTE [ float32 scans
 * accumulate in double ] in ember/_ops/scan.py). The data is viewed as (outer, n, inner) with the scan over
 * n; rows of the outer dim are independent, and split between threads. */
#include "common.h"

void scan_f32(const float *x, float *y, idx outer, idx n, idx inner, int prod, int nt) {
    if (inner == 1) {
        EM_PARALLEL_FOR(nt)
        for (idx o = 0; o < outer; o++) {
            const float *xr = x + o * n;
            float *yr = y + o * n;
            double acc = prod ? 1.0 : 0.0;
            if (prod)
                for (idx j = 0; j < n; j++) { acc *= (double)xr[j]; yr[j] = (float)acc; }
            else
                for (idx j = 0; j < n; j++) { acc += (double)xr[j]; yr[j] = (float)acc; }
        }
        return;
    }
    EM_PARALLEL_FOR(nt)
    for (idx o = 0; o < outer; o++) {
        double *acc = (double *)malloc(sizeof(double) * inner);
        const float *xo = x + o * n * inner;
        float *yo = y + o * n * inner;
        for (idx k = 0; k < inner; k++) acc[k] = prod ? 1.0 : 0.0;
        for (idx j = 0; j < n; j++) {
            const float *xr = xo + j * inner;
            float *yr = yo + j * inner;
            if (prod)
                for (idx k = 0; k < inner; k++) { acc[k] *= (double)xr[k]; yr[k] = (float)acc[k]; }
            else
                for (idx k = 0; k < inner; k++) { acc[k] += (double)xr[k]; yr[k] = (float)acc[k]; }
        }
        free(acc);
    }
}
