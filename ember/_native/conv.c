/* Convolution of C-contiguous float32 NCHW data (2-d; a 1-d convolution is one of height 1): forward, input
 * gradient and weight gradient, with stride, dilation, zero padding and groups.
 *
 * NOTE [ Convolution threads ]
 * The NumPy kernel makes one BLAS call per block of samples (ember/_ops/conv.py), and with two BLAS threads
 * every such call forks and joins OpenBLAS's pool: the CIFAR CNN's first conv is 64 GEMMs of 32 x 27 x 1024,
 * each too small to split, so two threads waited on each other per GEMM and the step ran slower than on one
 * (far slower when another process holds the second core: every join waits for a time slice). Here the batch
 * is split over OpenMP threads, as torch splits it: each thread unrolls its own samples (im2col, into its own
 * cache-sized buffer) and multiplies them with a single-threaded sgemm, one fork and join per convolution.
 * The sgemm is NumPy's own OpenBLAS (`scipy_cblas_sgemm64_`, passed in as a pointer by ember/_native/conv.py,
 * which sets OpenBLAS to one thread for the call: its pthreads pool would otherwise be entered from both
 * threads at once). Every sample is computed by one thread with the same code, so results do not depend on
 * the thread count; the weight gradient sums samples in chunks fixed by the batch size (not the thread
 * count), added in chunk order.
 *
 * Depthwise convolutions (one input channel per group) are direct loops, not GEMMs of one row.
 *
 * p[] holds the shape: N C H W O KH KW SH SW PH PW DH DW G OH OW (PH, PW: the low padding; the high padding
 * is implied by OH, OW).
 */
#include "common.h"

typedef void (*sgemm_fn)(int order, int ta, int tb, idx m, idx n, idx k, float alpha, const float *a, idx lda,
                         const float *b, idx ldb, float beta, float *c, idx ldc);
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

typedef struct { idx N, C, H, W, O, KH, KW, SH, SW, PH, PW, DH, DW, G, OH, OW; } conv_shape;

static conv_shape unpack(const idx *p) {
    conv_shape s = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13],
                    p[14], p[15]};
    return s;
}

/* A 1x1 convolution without stride or padding multiplies the input as it is. */
static int pointwise(const conv_shape *s) {
    return s->KH == 1 && s->KW == 1 && s->SH == 1 && s->SW == 1 && s->PH == 0 && s->PW == 0 && s->OH == s->H
        && s->OW == s->W;
}

/* The outputs [lo, hi) (of O) whose input k * D - P + o * S lies inside [0, N): one dimension of a tap. */
static inline void valid_range(idx k, idx D, idx P, idx S, idx N, idx O, idx *lo, idx *hi) {
    idx off = k * D - P;  /* input index of output 0 */
    idx a = off >= 0 ? 0 : (-off + S - 1) / S;
    idx b = N - off <= 0 ? 0 : (N - off + S - 1) / S;
    if (b > O) b = O;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* The output columns [lo, hi) of a row whose input column ow * SW - PW + kj * DW lies inside [0, W). */
static inline void valid_cols(const conv_shape *s, idx kj, idx *lo, idx *hi) {
    valid_range(kj, s->DW, s->PW, s->SW, s->W, s->OW, lo, hi);
}

/* NOTE [ Short rows ]
 * im2col copies one output row's span per (channel, tap, output row), and col2im adds it back: 14 floats at
 * a time in MNIST's second conv, 358k spans per batch. As a memcpy and two zeroing loops per span (or loops
 * vectorised 16 lanes wide, leaving 14 floats to the scalar remainder), unrolling took 1.8 ms of that conv's
 * 4.3 ms forward (its GEMM: 2.1). Now the output rows whose input row lies in the padding are zeroed as one
 * block, and with AVX-512 a row of at most 64 outputs is up to four masked loads and stores whose masks are
 * fixed per tap: lanes outside [lo, hi) (padding) load as zeros and are never read. That unrolling takes
 * 0.4 ms. col2im keeps an input row in registers while it adds the row's KW taps (NOTE in col2im). Longer
 * rows, strided ones and machines without AVX-512 keep memcpy and plain loops. Every path copies or adds the
 * same values in the same order, so results are the same bits (tests/test_native_conv.py builds this file
 * without AVX-512 too). */
#ifdef __AVX512F__
#include <immintrin.h>

#define SHORT_VECTORS 4  /* rows of up to 64 floats take the masked paths */

/* The lanes [a, b) of 16, clamped. */
static inline __mmask16 lanes(idx a, idx b) {
    a = a < 0 ? 0 : a > 16 ? 16 : a;
    b = b < 0 ? 0 : b > 16 ? 16 : b;
    return b > a ? (__mmask16)(((1u << b) - 1) & ~((1u << a) - 1)) : 0;
}

/* rows x (nv vectors) of dst (row length OW) copied from src (row step `step`) under the masks. */
static inline __attribute__((always_inline)) void copy_rows(float *dst, const float *src, idx rows, idx OW,
                                                            idx step, const __mmask16 *load,
                                                            const __mmask16 *store, int nv) {
    for (idx r = 0; r < rows; r++, dst += OW, src += step)
        for (int j = 0; j < nv; j++)
            _mm512_mask_storeu_ps(dst + 16 * j, store[j], _mm512_maskz_loadu_ps(load[j], src + 16 * j));
}

/* One input row (nv vectors) plus its KW taps' column spans (L apart in src, shifted by koff), in order. */
static inline __attribute__((always_inline)) void add_row(float *dst, const float *src, idx L, idx KW,
                                                          const __mmask16 *row,
                                                          __mmask16 (*km)[SHORT_VECTORS], const idx *koff,
                                                          int nv) {
    __m512 v[SHORT_VECTORS];
    for (int j = 0; j < nv; j++) v[j] = _mm512_maskz_loadu_ps(row[j], dst + 16 * j);
    for (idx kj = 0; kj < KW; kj++, src += L)
        for (int j = 0; j < nv; j++)
            v[j] = _mm512_mask_add_ps(v[j], km[kj][j], v[j],
                                      _mm512_maskz_loadu_ps(km[kj][j], src - koff[kj] + 16 * j));
    for (int j = 0; j < nv; j++) _mm512_mask_storeu_ps(dst + 16 * j, row[j], v[j]);
}
#endif

/* The output rows [lo, hi) whose input row oh * SH - PH + ki * DH lies inside [0, H). */
static inline void valid_rows(const conv_shape *s, idx ki, idx *lo, idx *hi) {
    valid_range(ki, s->DH, s->PH, s->SH, s->H, s->OH, lo, hi);
}

/* cols (Cg KH KW, OH OW) of the Cg channels at x (each H x W): every receptive field as a column. */
static void im2col(const conv_shape *s, const float *x, idx cg, float *cols) {
    idx L = s->OH * s->OW, OW = s->OW, SW = s->SW, step = s->SH * s->W;
    for (idx c = 0; c < cg; c++)
        for (idx ki = 0; ki < s->KH; ki++) {
            idx r0, r1;
            valid_rows(s, ki, &r0, &r1);
            for (idx kj = 0; kj < s->KW; kj++) {
                float *dst = cols + ((c * s->KH + ki) * s->KW + kj) * L;
                idx lo, hi;
                valid_cols(s, kj, &lo, &hi);
                const float *src = x + (c * s->H + r0 * s->SH - s->PH + ki * s->DH) * s->W
                                   + kj * s->DW - s->PW;
                memset(dst, 0, sizeof(float) * (size_t)(r0 * OW));  /* rows above and below the input */
                memset(dst + r1 * OW, 0, sizeof(float) * (size_t)((s->OH - r1) * OW));
                dst += r0 * OW;
#ifdef __AVX512F__
                if (SW == 1 && OW <= 16 * SHORT_VECTORS) {  /* masks fixed per tap (NOTE [ Short rows ]) */
                    __mmask16 load[SHORT_VECTORS], store[SHORT_VECTORS];
                    idx nv = (OW + 15) / 16;
                    for (idx j = 0; j < nv; j++) {
                        load[j] = lanes(lo - 16 * j, hi - 16 * j);
                        store[j] = lanes(0, OW - 16 * j);
                    }
                    switch (nv) {  /* a constant count per call, so the vectors stay in registers */
                    case 1: copy_rows(dst, src, r1 - r0, OW, step, load, store, 1); break;
                    case 2: copy_rows(dst, src, r1 - r0, OW, step, load, store, 2); break;
                    case 3: copy_rows(dst, src, r1 - r0, OW, step, load, store, 3); break;
                    default: copy_rows(dst, src, r1 - r0, OW, step, load, store, 4); break;
                    }
                    continue;
                }
#endif
                for (idx oh = r0; oh < r1; oh++, dst += OW, src += step) {
                    for (idx ow = 0; ow < lo; ow++) dst[ow] = 0.0f;
                    if (SW == 1) memcpy(dst + lo, src + lo, sizeof(float) * (size_t)(hi - lo));
                    else for (idx ow = lo; ow < hi; ow++) dst[ow] = src[ow * SW];
                    for (idx ow = hi; ow < OW; ow++) dst[ow] = 0.0f;
                }
            }
        }
}

/* Its adjoint: each column added back at its input positions (x zeroed by the caller), taps in order. */
static void col2im(const conv_shape *s, const float *cols, idx cg, float *x) {
    idx L = s->OH * s->OW, OW = s->OW, SW = s->SW, step = s->SH * s->W;
#ifdef __AVX512F__
    /* Input rows of at most 16 x SHORT_VECTORS floats: each row is loaded into registers, the KW taps'
     * columns added to it in order (masked loads shifted by the tap's offset), and stored once. Adding tap by
     * tap into memory, each tap's masked load waited on the previous tap's overlapping masked store (71% of
     * col2im's time in MNIST's second conv). */
    if (SW == 1 && s->W <= 16 * SHORT_VECTORS && OW <= 16 * SHORT_VECTORS && s->KW <= 32) {
        __mmask16 row[SHORT_VECTORS], km[32][SHORT_VECTORS];
        idx koff[32], nv = (s->W + 15) / 16;
        for (idx j = 0; j < nv; j++) row[j] = lanes(0, s->W - 16 * j);
        for (idx kj = 0; kj < s->KW; kj++) {
            idx lo, hi;
            valid_cols(s, kj, &lo, &hi);
            koff[kj] = kj * s->DW - s->PW;  /* input column of output column 0 */
            for (idx j = 0; j < nv; j++) km[kj][j] = lanes(lo + koff[kj] - 16 * j, hi + koff[kj] - 16 * j);
        }
        for (idx c = 0; c < cg; c++)
            for (idx ki = 0; ki < s->KH; ki++) {
                idx r0, r1;
                valid_rows(s, ki, &r0, &r1);
                for (idx oh = r0; oh < r1; oh++) {
                    float *dst = x + (c * s->H + oh * s->SH - s->PH + ki * s->DH) * s->W;
                    const float *src = cols + (c * s->KH + ki) * s->KW * L + oh * OW;
                    switch (nv) {  /* a constant count per call, so the vectors stay in registers */
                    case 1: add_row(dst, src, L, s->KW, row, km, koff, 1); break;
                    case 2: add_row(dst, src, L, s->KW, row, km, koff, 2); break;
                    case 3: add_row(dst, src, L, s->KW, row, km, koff, 3); break;
                    default: add_row(dst, src, L, s->KW, row, km, koff, 4); break;
                    }
                }
            }
        return;
    }
#endif
    for (idx c = 0; c < cg; c++)
        for (idx ki = 0; ki < s->KH; ki++) {
            idx r0, r1;
            valid_rows(s, ki, &r0, &r1);
            for (idx kj = 0; kj < s->KW; kj++) {
                const float *src = cols + ((c * s->KH + ki) * s->KW + kj) * L + r0 * OW;
                idx lo, hi;
                valid_cols(s, kj, &lo, &hi);
                float *dst = x + (c * s->H + r0 * s->SH - s->PH + ki * s->DH) * s->W + kj * s->DW - s->PW;
                for (idx oh = r0; oh < r1; oh++, src += OW, dst += step) {
                    if (SW == 1) {
                        #pragma omp simd
                        for (idx ow = lo; ow < hi; ow++) dst[ow] += src[ow];
                    } else {
                        for (idx ow = lo; ow < hi; ow++) dst[ow * SW] += src[ow];
                    }
                }
            }
        }
}

/* ---- depthwise (Cg == 1): direct loops ---------------------------------------------------------------- */

/* y (OH, OW) += the correlation of one input plane with one KH x KW filter, taps in order. */
static void dw_plane(const conv_shape *s, const float *x, const float *w, float *y) {
    for (idx ki = 0; ki < s->KH; ki++)
        for (idx kj = 0; kj < s->KW; kj++) {
            float wk = w[ki * s->KW + kj];
            idx lo, hi;
            valid_cols(s, kj, &lo, &hi);
            idx off = kj * s->DW - s->PW;
            for (idx oh = 0; oh < s->OH; oh++) {
                idx ih = oh * s->SH - s->PH + ki * s->DH;
                if (ih < 0 || ih >= s->H) continue;
                const float *src = x + ih * s->W + off;
                float *dst = y + oh * s->OW;
                if (s->SW == 1) {
                    #pragma omp simd
                    for (idx ow = lo; ow < hi; ow++) dst[ow] += wk * src[ow];
                } else {
                    for (idx ow = lo; ow < hi; ow++) dst[ow] += wk * src[ow * s->SW];
                }
            }
        }
}

/* x (H, W) += the adjoint of dw_plane: the output gradient g spread back through one filter. */
static void dw_plane_adjoint(const conv_shape *s, const float *g, const float *w, float *x) {
    for (idx ki = 0; ki < s->KH; ki++)
        for (idx kj = 0; kj < s->KW; kj++) {
            float wk = w[ki * s->KW + kj];
            idx lo, hi;
            valid_cols(s, kj, &lo, &hi);
            idx off = kj * s->DW - s->PW;
            for (idx oh = 0; oh < s->OH; oh++) {
                idx ih = oh * s->SH - s->PH + ki * s->DH;
                if (ih < 0 || ih >= s->H) continue;
                float *dst = x + ih * s->W + off;
                const float *src = g + oh * s->OW;
                if (s->SW == 1) {
                    #pragma omp simd
                    for (idx ow = lo; ow < hi; ow++) dst[ow] += wk * src[ow];
                } else {
                    for (idx ow = lo; ow < hi; ow++) dst[ow * s->SW] += wk * src[ow];
                }
            }
        }
}

/* ---- the three products --------------------------------------------------------------------------------- */

/* y = conv(x, w) + b. Returns 0, or -1 when a column buffer could not be allocated. */
int conv2d_forward_f32(const float *x, const float *w, const float *b, float *y, const idx *p, void *gemm,
                       int nt) {
    conv_shape s = unpack(p);
    sgemm_fn sgemm = (sgemm_fn)gemm;
    idx L = s.OH * s.OW, cg = s.C / s.G, og = s.O / s.G, ck = cg * s.KH * s.KW;
    int direct = pointwise(&s), depthwise = cg == 1 && s.G > 1, failed = 0;
#ifdef _OPENMP
    #pragma omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)
#endif
    {
        float *cols = direct || depthwise ? NULL : malloc(sizeof(float) * (size_t)(ck * L));
        if (!direct && !depthwise && !cols) failed = 1;
        else {
#ifdef _OPENMP
            #pragma omp for schedule(static)
#endif
            for (idx n = 0; n < s.N; n++) {
                for (idx g = 0; g < s.G; g++) {
                    const float *src = x + (n * s.C + g * cg) * s.H * s.W;
                    float *dst = y + (n * s.O + g * og) * L;
                    if (depthwise) {
                        for (idx o = 0; o < og; o++) {
                            memset(dst + o * L, 0, sizeof(float) * L);
                            dw_plane(&s, src, w + (g * og + o) * ck, dst + o * L);
                        }
                    } else {
                        if (!direct) im2col(&s, src, cg, cols);
                        sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, og, L, ck, 1.0f, w + g * og * ck, ck,
                              direct ? src : cols, L, 0.0f, dst, L);
                    }
                    if (b)
                        for (idx o = 0; o < og; o++) {
                            float bo = b[g * og + o];
                            float *r = dst + o * L;
                            for (idx j = 0; j < L; j++) r[j] += bo;
                        }
                }
            }
        }
        free(cols);
    }
    return failed ? -1 : 0;
}

/* gx = the gradient of conv(x, w) with respect to x, from the output gradient g: W^T g folded back (col2im). */
int conv2d_input_grad_f32(const float *gy, const float *w, float *gx, const idx *p, void *gemm, int nt) {
    conv_shape s = unpack(p);
    sgemm_fn sgemm = (sgemm_fn)gemm;
    idx L = s.OH * s.OW, cg = s.C / s.G, og = s.O / s.G, ck = cg * s.KH * s.KW, plane = s.H * s.W;
    int direct = pointwise(&s), depthwise = cg == 1 && s.G > 1, failed = 0;
#ifdef _OPENMP
    #pragma omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)
#endif
    {
        float *cols = direct || depthwise ? NULL : malloc(sizeof(float) * (size_t)(ck * L));
        if (!direct && !depthwise && !cols) failed = 1;
        else {
#ifdef _OPENMP
            #pragma omp for schedule(static)
#endif
            for (idx n = 0; n < s.N; n++) {
                float *xn = gx + n * s.C * plane;
                if (!direct) memset(xn, 0, sizeof(float) * (size_t)(s.C * plane));
                for (idx g = 0; g < s.G; g++) {
                    const float *gn = gy + (n * s.O + g * og) * L;
                    float *dst = xn + g * cg * plane;
                    if (depthwise) {
                        for (idx o = 0; o < og; o++) dw_plane_adjoint(&s, gn + o * L, w + (g * og + o) * ck, dst);
                    } else if (direct) {
                        sgemm(ROW_MAJOR, TRANS, NO_TRANS, ck, L, og, 1.0f, w + g * og * ck, ck, gn, L, 0.0f, dst, L);
                    } else {
                        sgemm(ROW_MAJOR, TRANS, NO_TRANS, ck, L, og, 1.0f, w + g * og * ck, ck, gn, L, 0.0f, cols, L);
                        col2im(&s, cols, cg, dst);
                    }
                }
            }
        }
        free(cols);
    }
    return failed ? -1 : 0;
}

/* NOTE [ Weight gradient as cols @ g^T ]
 * Each sample's share of the weight gradient is a product of two operands stored along OH OW: g_n
 * (O/G, OH OW) and cols(x_n) (Cg KH KW, OH OW). OpenBLAS runs it much faster as cols @ g_n^T, giving gw^T
 * (Cg KH KW, O/G), than as g_n @ cols^T (measured, one thread: MNIST's second conv 188 against 100 GFLOP/s,
 * CIFAR's and ResNet's 3x3 convs 192-215 against 138-150), so the chunks accumulate transposed partial sums,
 * transposed back once in the chunk sum. Where the columns are few (Cg KH KW < TRANSPOSED_MIN: a first
 * layer's 1-3 channels) the two orders ran at the same speed, and the direct order is kept. */
#define TRANSPOSED_MIN 64

/* gw = sum over samples of g_n cols(x_n)^T. The samples are split into `chunks` contiguous chunks (a count the
 * caller derives from the batch size alone); chunk c accumulates into partials + c O Cg KH KW, laid out as
 * (G, Cg KH KW, O/G) (NOTE [ Weight gradient as cols @ g^T ]) or as gw, and the partial sums are then added
 * into gw in chunk order (NOTE [ Convolution threads ]). */
int conv2d_weight_grad_f32(const float *x, const float *gy, float *gw, float *partials, idx chunks,
                           const idx *p, void *gemm, int nt) {
    conv_shape s = unpack(p);
    sgemm_fn sgemm = (sgemm_fn)gemm;
    idx L = s.OH * s.OW, cg = s.C / s.G, og = s.O / s.G, ck = cg * s.KH * s.KW, size = s.O * ck;
    int direct = pointwise(&s), depthwise = cg == 1 && s.G > 1, failed = 0;
    if (depthwise) {  /* per output channel and tap, a dot product over every sample: no partial sums */
        EM_PARALLEL_FOR(nt)
        for (idx o = 0; o < s.O; o++) {
            idx ci = o / og;
            for (idx ki = 0; ki < s.KH; ki++)
                for (idx kj = 0; kj < s.KW; kj++) {
                    idx lo, hi;
                    valid_cols(&s, kj, &lo, &hi);
                    idx off = kj * s.DW - s.PW;
                    double acc = 0.0;
                    for (idx n = 0; n < s.N; n++) {
                        const float *gn = gy + (n * s.O + o) * L, *xn = x + (n * s.C + ci) * s.H * s.W;
                        for (idx oh = 0; oh < s.OH; oh++) {
                            idx ih = oh * s.SH - s.PH + ki * s.DH;
                            if (ih < 0 || ih >= s.H) continue;
                            const float *src = xn + ih * s.W + off, *gr = gn + oh * s.OW;
                            if (s.SW == 1) {
                                #pragma omp simd reduction(+:acc)
                                for (idx ow = lo; ow < hi; ow++) acc += (double)(gr[ow] * src[ow]);
                            } else {
                                for (idx ow = lo; ow < hi; ow++) acc += (double)(gr[ow] * src[ow * s.SW]);
                            }
                        }
                    }
                    gw[o * ck + ki * s.KW + kj] = (float)acc;
                }
        }
        return 0;
    }
    int tr = ck >= TRANSPOSED_MIN;
#ifdef _OPENMP
    #pragma omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)
#endif
    {
        float *cols = direct ? NULL : malloc(sizeof(float) * (size_t)(ck * L));
        if (!direct && !cols) failed = 1;
        else {
#ifdef _OPENMP
            #pragma omp for schedule(static)
#endif
            for (idx c = 0; c < chunks; c++) {
                float *out = partials + c * size;
                idx n0 = s.N * c / chunks, n1 = s.N * (c + 1) / chunks;
                for (idx n = n0; n < n1; n++)
                    for (idx g = 0; g < s.G; g++) {
                        const float *src = x + (n * s.C + g * cg) * s.H * s.W;
                        const float *gn = gy + (n * s.O + g * og) * L;
                        if (!direct) im2col(&s, src, cg, cols);
                        const float *a = direct ? src : cols;
                        float beta = n == n0 ? 0.0f : 1.0f, *dst = out + g * og * ck;
                        if (tr)
                            sgemm(ROW_MAJOR, NO_TRANS, TRANS, ck, og, L, 1.0f, a, L, gn, L, beta, dst, og);
                        else
                            sgemm(ROW_MAJOR, NO_TRANS, TRANS, og, ck, L, 1.0f, gn, L, a, L, beta, dst, ck);
                    }
            }
        }
        free(cols);
    }
    if (failed) return -1;
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < size; i++) {
        idx o = i / ck, j = i % ck, at = tr ? (o / og) * ck * og + j * og + o % og : i;
        float acc = partials[at];
        for (idx c = 1; c < chunks; c++) acc += partials[c * size + at];
        gw[i] = acc;
    }
    return 0;
}
