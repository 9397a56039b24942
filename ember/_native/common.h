/* What the kernel groups share: index type, OpenMP helpers, and vectorisable math for float32 kernels.
 *
 * NOTE [ Vectorisable exp ]
 * glibc's expf/exp are scalar calls the compiler cannot vectorise without -ffast-math (which ember does
 * not use: NOTE [ Exact flags ] in __init__.py). em_exp computes exp in double, branch-free, so a loop
 * over it vectorises: x = n ln2 + r with |r| <= ln2/2, exp(r) by a degree-11 Taylor polynomial (relative
 * error < 2e-16 on that interval), times 2^n built from the exponent bits. Arguments are clamped to
 * [-708, 708] (past them a float32 result is 0 or inf anyway, and the double is still finite/normal
 * there), +-inf give 0 and inf, NaN gives NaN. Rounded to float32, the result is the correctly rounded
 * expf except within ~1e-9 ulp of a rounding boundary.
 * Every select is its own two-way `?:` statement, never nested: GCC's jump threading merges nested `?:`s
 * of two inlined calls into phi nodes of 5 arguments, which if-conversion refuses ("control flow in loop"),
 * so a fused chain of 2 or more exps did not vectorise.
 */
#ifndef EMBER_COMMON_H
#define EMBER_COMMON_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef int64_t idx;

static inline double em_exp(double x) {
    double xc = x < -708.0 ? -708.0 : x;
    xc = xc > 708.0 ? 708.0 : xc;
    double n = nearbyint(xc * 1.4426950408889634);
    double r = (xc - n * 0.6931471803691238) - n * 1.9082149292705877e-10;
    double p = 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t bits = ((int64_t)n + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    double y = p * scale;
    y = x > 708.0 ? INFINITY : y;
    y = x < -708.0 ? 0.0 : y;
    return x != x ? x : y;
}

/* exp in float32, for float32 kernels whose NumPy counterpart calls np.exp on float32 data (softmax, silu,
 * gelu's backward): the same reduction in single precision (n ln2 split in two parts, the first exact in
 * float), Cephes' degree-6 polynomial, and 2^n applied as two powers of two so that results down to the
 * smallest subnormal round once. Within 2 ulp of the correctly rounded value (NumPy's and torch's SIMD expf
 * are within 1-2 ulp too); 16 lanes per AVX-512 instruction where em_exp has 8. */
static inline float em_expf(float x) {
    float xc = x < -110.0f ? -110.0f : x;
    xc = xc > 89.0f ? 89.0f : xc;
    float n = nearbyintf(xc * 1.44269504088896341f);
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = (p * (r * r) + r) + 1.0f;
    int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
    int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    y = (y * s1) * s2;
    y = x > 89.0f ? INFINITY : y;
    y = x < -110.0f ? 0.0f : y;
    return x != x ? x : y;
}

/* erf for float32 results, NOTE [ erf in single precision ] in ember/_ops/special.py: x P(x^2) / Q(x^2)
 * in double with x clamped to [-4, 4], the same polynomials as the NumPy kernel, evaluated the same way. */
static inline double em_erf_single(double x) {
    double xc = x < -4.0 ? -4.0 : (x > 4.0 ? 4.0 : x);
    double z = xc * xc;
    double p = -1.3201125609318964e-08;
    p = p * z + 4.6845742876916452e-06;
    p = p * z + 3.7960088746331194e-04;
    p = p * z + 3.8495679385557309e-03;
    p = p * z + 5.4316669532477796e-02;
    p = p * z + 1.8520269525625274e-01;
    p = p * z + 1.1283791693769376e+00;
    double q = 6.3108662385459070e-05;
    q = q * z + 1.3075503309348750e-03;
    q = q * z + 1.5461974332591057e-02;
    q = q * z + 1.1395804629479354e-01;
    q = q * z + 4.9746502904712020e-01;
    q = q * z + 1.0;
    double y = xc * p / q;
    return x != x ? x : y;
}

/* tanh for float32 results: 1 - 2 / (exp(2|x|) + 1) with its sign; near 0 its absolute error is ~1e-16,
 * which is what GELU needs (it adds tanh to 1). */
static inline double em_tanh(double x) {
    double a = x < 0 ? -x : x;
    double t = 1.0 - 2.0 / (em_exp(2.0 * a) + 1.0);
    t = x < 0 ? -t : t;
    return x != x ? x : t;
}

/* NOTE [ OpenMP in kernels ]
 * Every parallel loop takes its thread count from Python (`nt`, from ember.set_num_threads and the size:
 * `threads_for` in __init__.py) and splits rows statically, so a result never depends on the thread count:
 * each row or element is computed by one thread with the same code. */
#ifdef _OPENMP
#define EM_PARALLEL_FOR(nt) _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")
#else
#define EM_PARALLEL_FOR(nt)
#endif

#endif
