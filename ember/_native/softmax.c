/* softmax and log_softmax over the last dim of a C-contiguous float32 array, forward and backward.
 *
 * One pass per row for each step torch's kernel makes (max, sum of exp, scale), the row staying in cache,
 * instead of NumPy's whole-array temporaries. Sums are in double (NOTE [ Vectorisable exp ] in common.h).
 * NaN propagates as in torch: a NaN in a row makes its max NaN, and so every output of that row.
 */
#include "common.h"

/* NOTE [ Vectorised max ]
 * Written as a plain loop, `m = x[j] > m ? x[j] : m` is one dependent chain the compiler will not split
 * (it may not reorder a float reduction by itself), and the max pass alone took 2.0 ms of a 4M-float
 * softmax's 4.4; as an OpenMP simd max reduction it runs in vector lanes (0.37 ms). A max does not depend
 * on the order it is taken in, and NaN is found by its own or-reduction, so the result is unchanged. */
static inline float row_max(const float *x, idx n) {
    float m = -INFINITY;
    int nan = 0;
    #pragma omp simd reduction(max:m) reduction(|:nan)
    for (idx j = 0; j < n; j++) {
        m = x[j] > m ? x[j] : m;
        nan |= x[j] != x[j];
    }
    return nan ? NAN : m;
}

void softmax_f32(const float *x, float *y, idx rows, idx n, int log_, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float m = row_max(xr, n);
        double s = 0.0;
        if (log_) {
            #pragma omp simd reduction(+:s)
            for (idx j = 0; j < n; j++) s += em_expf(xr[j] - m);
            float ls = (float)log(s);
            for (idx j = 0; j < n; j++) yr[j] = (xr[j] - m) - ls;
        } else {
            #pragma omp simd reduction(+:s)
            for (idx j = 0; j < n; j++) {
                float e = em_expf(xr[j] - m);
                yr[j] = e;
                s += e;
            }
            float inv = (float)(1.0 / s);
            for (idx j = 0; j < n; j++) yr[j] = yr[j] * inv;
        }
    }
}

/* softmax: gx = y (g - sum(g y));  log_softmax: gx = g - exp(y) sum(g). */
void softmax_backward_f32(const float *g, const float *y, float *gx, idx rows, idx n, int log_, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < rows; r++) {
        const float *gr = g + r * n, *yr = y + r * n;
        float *o = gx + r * n;
        double s = 0.0;
        if (log_) {
            #pragma omp simd reduction(+:s)
            for (idx j = 0; j < n; j++) s += gr[j];
            float sf = (float)s;
            for (idx j = 0; j < n; j++) o[j] = gr[j] - em_expf(yr[j]) * sf;
        } else {
            #pragma omp simd reduction(+:s)
            for (idx j = 0; j < n; j++) s += (double)gr[j] * (double)yr[j];
            float sf = (float)s;
            for (idx j = 0; j < n; j++) o[j] = yr[j] * (gr[j] - sf);
        }
    }
}

/* How many threads a parallel region asked for `nt` threads gets (tests check set_num_threads with it). */
int threads_used(int nt) {
    int got = 1;
#ifdef _OPENMP
    #pragma omp parallel num_threads(nt)
    {
        #pragma omp single
        got = omp_get_num_threads();
    }
#endif
    return got;
}
