/* Convolution of C-contiguous float32 NCHW data (2-d; a 1-d convolution is one of height 1): forward, input
 * gradient and weight gradient, with stride, dilation, zero padding and groups.
 *
 * NOTE [ Convolution threads ]
 * The NumPy kernel makes one BLAS call per block of samples (ember/_ops/conv.py), and with two BLAS threads
 * every such call forks and joins OpenBLAS's pool: the CIFAR CNN's first conv is 64 GEMMs of 32 x 27 x 1024,
 * each too small to split, so two threads waited on each other per GEMM and the step ran slower than on one
 * (far slower when another process holds the second core: every join waits for a time slice). Here the batch
 * is split over threads, as torch splits it: each thread unrolls its own samples (im2col, into its own
 * cache-sized buffer) and multiplies them with a single-threaded sgemm, one fork and join per convolution.
 * The threads are ember's pool's (NOTE [ Kernels on ember's pool ] in common.h), not OpenMP's.
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
#define EM_KERNEL_POOL
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

/* cols (Cg KH KW, (b - a) OW) of the Cg channels at x (each H x W): the receptive field of every output
 * position of rows [a, b) as a column; the rows of cols are `ld` floats apart (ld >= (b - a) OW: a block of
 * samples side by side, NOTE [ Weight gradient in blocks of samples ]). */
static void im2col_rows(const conv_shape *s, const float *x, idx cg, float *cols, idx ld, idx a, idx b) {
    idx OW = s->OW, SW = s->SW, step = s->SH * s->W;
    for (idx c = 0; c < cg; c++)
        for (idx ki = 0; ki < s->KH; ki++) {
            idx r0, r1;
            valid_rows(s, ki, &r0, &r1);
            r0 = r0 < a ? a : r0 > b ? b : r0;
            r1 = r1 < r0 ? r0 : r1 > b ? b : r1;
            for (idx kj = 0; kj < s->KW; kj++) {
                float *dst = cols + ((c * s->KH + ki) * s->KW + kj) * ld;
                idx lo, hi;
                valid_cols(s, kj, &lo, &hi);
                const float *src = x + (c * s->H + r0 * s->SH - s->PH + ki * s->DH) * s->W
                                   + kj * s->DW - s->PW;
                memset(dst, 0, sizeof(float) * (size_t)((r0 - a) * OW));  /* rows above and below the input */
                memset(dst + (r1 - a) * OW, 0, sizeof(float) * (size_t)((b - r1) * OW));
                dst += (r0 - a) * OW;
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
                    else if (SW == 2)  /* a constant stride vectorises (ResNet's stride-2 layers) */
                        for (idx ow = lo; ow < hi; ow++) dst[ow] = src[2 * ow];
                    else for (idx ow = lo; ow < hi; ow++) dst[ow] = src[ow * SW];
                    for (idx ow = hi; ow < OW; ow++) dst[ow] = 0.0f;
                }
            }
        }
}

/* Every output row's columns (Cg KH KW, OH OW). */
static void im2col(const conv_shape *s, const float *x, idx cg, float *cols, idx ld) {
    im2col_rows(s, x, cg, cols, ld, 0, s->OH);
}

/* Its adjoint: each column added back at its input positions (x zeroed by the caller), taps in order; the
 * rows of cols `ld` floats apart, as in im2col. */
static void col2im(const conv_shape *s, const float *cols, idx cg, float *x, idx ld) {
    idx L = ld, OW = s->OW, SW = s->SW, step = s->SH * s->W;
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
                    } else if (SW == 2) {  /* a constant stride vectorises, as in im2col */
                        for (idx ow = lo; ow < hi; ow++) dst[2 * ow] += src[ow];
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

/* NOTE [ Products over blocks of samples ]
 * One GEMM per sample has as many columns as the sample has output positions: 49 in ResNet's layer4, where
 * OpenBLAS ran W (512, 4608) @ cols at 189 GFLOP/s against 230 with 392 columns. So where the maps are small
 * the forward and the input gradient multiply `nb` samples at once (sample_block: about BLOCK_N positions,
 * but at least 2 blocks where the batch allows, and an even count of them, so that two threads split them
 * evenly): the forward's columns side by side (Cg KH KW, nb OH OW) and its result copied out per sample, the
 * input gradient's output gradients packed (O/G, nb OH OW) and its columns folded back per sample. The blocks
 * come from the shape alone, so the results do not depend on the thread count. At least 4 blocks (the rule
 * before) made layer4 at batch 8 two samples a block, 98 columns: OpenBLAS ran (512, 4608) @ (4608, 98) at
 * 209 GFLOP/s and (4608, 512) @ (512, 98) at 207, against 231 and 223 with 196 columns (4 samples a block),
 * and the layer's forward and input gradient took 1.25x and 1.27x torch's time, now about 1.14x and 1.11x
 * (one thread, benchmarks/conv.py --resnet). */
#define BLOCK_N 512
#define BLOCK_BYTES (8 << 20)

static idx sample_block(const conv_shape *s, idx ck) {
    idx L = s->OH * s->OW, nb = (BLOCK_N + L - 1) / L, half = (s->N + 1) / 2;
    if (nb > half) nb = half;
    idx blocks = (s->N + nb - 1) / nb;
    if (blocks > 1 && blocks % 2) nb = (s->N + blocks) / (blocks + 1);  /* an even count of blocks */
    if (nb * ck * L * (idx)sizeof(float) > BLOCK_BYTES) nb = BLOCK_BYTES / ((idx)sizeof(float) * ck * L);
    return nb < 1 ? 1 : nb;
}

/* Rows of m samples' maps (each `rows` rows of L floats, `stride` floats from one sample to the next) side by
 * side into (rows, m L), or back (out = 1). */
static void pack_samples(float *packed, float *maps, idx rows, idx L, idx m, idx stride, int out) {
    for (idx r = 0; r < rows; r++)
        for (idx j = 0; j < m; j++) {
            float *a = packed + (r * m + j) * L, *b = maps + j * stride + r * L;
            memcpy(out ? b : a, out ? a : b, sizeof(float) * (size_t)L);
        }
}

/* NOTE [ Columns in bands of rows ]
 * A sample's columns larger than COL_BAND_BYTES (ResNet's stem: 147 rows of 12,544 positions, 7.4 MB) are
 * built and multiplied a band of output rows at a time, so they are still in cache when the product reads
 * them (the weight gradient adds the bands' products in order). The stem at batch 8 (benchmarks/conv.py
 * --resnet shapes, one process): forward 1.14x torch's time -> 1.05x at 1 thread, 1.29x -> 1.09x at 2; weight
 * gradient 1.13x -> 1.08-1.11x and 1.14x -> 1.03-1.08x. Bands of 1 MB and less were slower on the stride-2
 * 3x3 layers (their 1.8 MB of columns a sample: 1.04 -> 1.15x). */
#define COL_BAND_BYTES (2 << 20)

/* What a convolution's loop bodies share: the operands, the shape, the sgemm and the blocks. */
typedef struct {
    conv_shape s;
    sgemm_fn sgemm;
    const float *x, *w, *b, *gy;
    float *y, *out;
    idx L, cg, og, ck, nb, chunks, size, rows, len, tj, to, band;
    int direct, depthwise, packs, tr, failed;
} conv_ctx;

static void forward_body(void *ctx, idx lo, idx hi) {
    conv_ctx *k = ctx;
    const conv_shape s = k->s;
    idx L = k->L, cg = k->cg, og = k->og, ck = k->ck, nb = k->nb;
    float *cols = k->packs ? malloc(sizeof(float) * (size_t)(ck * nb * L)) : NULL;
    float *res = nb > 1 ? malloc(sizeof(float) * (size_t)(og * nb * L)) : NULL;
    if ((k->packs && !cols) || (nb > 1 && !res)) {
        __atomic_store_n(&k->failed, 1, __ATOMIC_RELAXED);
        lo = hi;
    }
    for (idx bi = lo; bi < hi; bi++) {
        idx n0 = bi * nb, m = s.N - n0 < nb ? s.N - n0 : nb, K = m * L;
        for (idx g = 0; g < s.G; g++) {
            const float *src = k->x + (n0 * s.C + g * cg) * s.H * s.W;
            float *dst = k->y + (n0 * s.O + g * og) * L;
            if (k->depthwise) {
                for (idx o = 0; o < og; o++) {
                    memset(dst + o * L, 0, sizeof(float) * L);
                    dw_plane(&s, src, k->w + (g * og + o) * ck, dst + o * L);
                }
            } else if (k->packs && m == 1 && k->band < s.OH) {  /* (NOTE [ Columns in bands of rows ]) */
                for (idx a = 0; a < s.OH; a += k->band) {
                    idx b = a + k->band < s.OH ? a + k->band : s.OH, len = (b - a) * s.OW;
                    im2col_rows(&s, src, cg, cols, len, a, b);
                    k->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, og, len, ck, 1.0f, k->w + g * og * ck, ck, cols,
                             len, 0.0f, dst + a * s.OW, L);
                }
            } else {
                if (k->packs)
                    for (idx j = 0; j < m; j++) im2col(&s, src + j * s.C * s.H * s.W, cg, cols + j * L, K);
                k->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, og, K, ck, 1.0f, k->w + g * og * ck, ck,
                         k->packs ? cols : src, K, 0.0f, m > 1 ? res : dst, K);
                if (m > 1) pack_samples(res, dst, og, L, m, s.O * L, 1);
            }
            if (k->b)
                for (idx j = 0; j < m; j++)
                    for (idx o = 0; o < og; o++) {
                        float bo = k->b[g * og + o];
                        float *r = dst + j * s.O * L + o * L;
                        for (idx q = 0; q < L; q++) r[q] += bo;
                    }
        }
    }
    free(cols);
    free(res);
}

/* A convolution's context for shape p (NOTE [ Convolution threads ]). */
static conv_ctx conv_setup(const idx *p, void *gemm) {
    conv_ctx k = {.s = unpack(p), .sgemm = (sgemm_fn)gemm};
    k.L = k.s.OH * k.s.OW, k.cg = k.s.C / k.s.G, k.og = k.s.O / k.s.G, k.ck = k.cg * k.s.KH * k.s.KW;
    k.direct = pointwise(&k.s), k.depthwise = k.cg == 1 && k.s.G > 1;
    k.nb = k.depthwise ? 1 : sample_block(&k.s, k.ck);
    idx row_bytes = (idx)sizeof(float) * k.ck * k.s.OW;
    /* rows of a band of columns (NOTE [ Columns in bands of rows ]) */
    k.band = COL_BAND_BYTES / row_bytes > 0 ? COL_BAND_BYTES / row_bytes : 1;
    return k;
}

/* y = conv(x, w) + b. Returns 0, or -1 when a column buffer could not be allocated. */
int conv2d_forward_f32(const float *x, const float *w, const float *b, float *y, const idx *p, void *gemm,
                       int nt) {
    conv_ctx k = conv_setup(p, gemm);
    k.x = x, k.w = w, k.b = b, k.y = y;
    k.packs = !k.depthwise && (!k.direct || k.nb > 1);
    em_for(forward_body, &k, (k.s.N + k.nb - 1) / k.nb, nt, 1);
    return k.failed ? -1 : 0;
}

static void input_grad_body(void *ctx, idx lo, idx hi) {
    conv_ctx *k = ctx;
    const conv_shape s = k->s;
    idx L = k->L, cg = k->cg, og = k->og, ck = k->ck, nb = k->nb, plane = s.H * s.W;
    int direct = k->direct, depthwise = k->depthwise, needs = !depthwise && (!direct || nb > 1);
    float *cols = needs ? malloc(sizeof(float) * (size_t)(ck * nb * L)) : NULL;
    float *gb = nb > 1 ? malloc(sizeof(float) * (size_t)(og * nb * L)) : NULL;
    if ((needs && !cols) || (nb > 1 && !gb)) {
        __atomic_store_n(&k->failed, 1, __ATOMIC_RELAXED);
        lo = hi;
    }
    for (idx bi = lo; bi < hi; bi++) {
        idx n0 = bi * nb, m = s.N - n0 < nb ? s.N - n0 : nb, K = m * L;
        float *xn = k->y + n0 * s.C * plane;
        if (!direct || depthwise) memset(xn, 0, sizeof(float) * (size_t)(m * s.C * plane));
        for (idx g = 0; g < s.G; g++) {
            const float *gn = k->gy + (n0 * s.O + g * og) * L, *wg = k->w + g * og * ck;
            float *dst = xn + g * cg * plane;
            if (depthwise) {
                for (idx o = 0; o < og; o++) dw_plane_adjoint(&s, gn + o * L, k->w + (g * og + o) * ck, dst);
                continue;
            }
            if (m > 1) {
                pack_samples(gb, (float *)gn, og, L, m, s.O * L, 0);
                gn = gb;
            }
            if (direct && m == 1) {
                k->sgemm(ROW_MAJOR, TRANS, NO_TRANS, ck, L, og, 1.0f, wg, ck, gn, L, 0.0f, dst, L);
                continue;
            }
            k->sgemm(ROW_MAJOR, TRANS, NO_TRANS, ck, K, og, 1.0f, wg, ck, gn, K, 0.0f, cols, K);
            if (direct) pack_samples(cols, dst, ck, L, m, s.C * plane, 1);
            else
                for (idx j = 0; j < m; j++) col2im(&s, cols + j * L, cg, dst + j * s.C * plane, K);
        }
    }
    free(cols);
    free(gb);
}

/* gx = the gradient of conv(x, w) with respect to x, from the output gradient g: W^T g folded back (col2im). */
int conv2d_input_grad_f32(const float *gy, const float *w, float *gx, const idx *p, void *gemm, int nt) {
    conv_ctx k = conv_setup(p, gemm);
    k.gy = gy, k.w = w, k.y = gx;
    em_for(input_grad_body, &k, (k.s.N + k.nb - 1) / k.nb, nt, 1);
    return k.failed ? -1 : 0;
}

/* NOTE [ Weight gradient as cols @ g^T ]
 * Each sample's share of the weight gradient is a product of two operands stored along OH OW: g_n
 * (O/G, OH OW) and cols(x_n) (Cg KH KW, OH OW). OpenBLAS runs it much faster as cols @ g_n^T, giving gw^T
 * (Cg KH KW, O/G), than as g_n @ cols^T (measured, one thread: MNIST's second conv 188 against 100 GFLOP/s,
 * CIFAR's and ResNet's 3x3 convs 192-215 against 138-150), so the chunks accumulate transposed partial sums,
 * transposed back once in the chunk sum. Where the columns are few (Cg KH KW < TRANSPOSED_MIN: a first
 * layer's 1-3 channels) the two orders ran at the same speed, and the direct order is kept. Nor where the
 * outputs are many (O/G >= DIRECT_MIN_O: ResNet's layer3 and layer4): there the orders ran within 3-10% of
 * each other, and the direct order's result is gw's layout, so one chunk needs no sum and several a sum along
 * rows instead of a transposition of millions of weights.
 *
 * NOTE [ Weight gradient in blocks of samples ]
 * ResNet's deep layers have small maps and large weights: layer4's 3x3 conv is 7 x 7 outputs per sample and
 * 2.4M weights. One product per sample there is a GEMM with K = 49 whose (4608, 512) result is read and
 * written back once per sample, and the chunk sum read the chunks' partial sums transposed, one cache line
 * per element (9.5x torch's time at batch 8, one thread). So a chunk multiplies its samples in blocks: the
 * columns of up to `nb` samples side by side (Cg KH KW, nb OH OW) and their output gradients packed
 * likewise (O/G, nb OH OW), one GEMM with K = nb OH OW of at least BLOCK_K where the maps are small (and the
 * columns at most BLOCK_BYTES); the chunk sum goes over 32 x 32 tiles, each transposed in cache. The caller
 * picks fewer chunks where the maps are small (conv.py), so each chunk's product stays long. */
#define TRANSPOSED_MIN 64
#define DIRECT_MIN_O 256
#define BLOCK_K 128
#define SUM_TILE 32
#define SUM_WIDTH 256

/* Depthwise: per output channel and tap, a dot product over every sample (no partial sums). */
static void dw_weight_grad_body(void *ctx, idx lo_o, idx hi_o) {
    conv_ctx *k = ctx;
    const conv_shape s = k->s;
    idx L = k->L, og = k->og, ck = k->ck;
    for (idx o = lo_o; o < hi_o; o++) {
        idx ci = o / og;
        for (idx ki = 0; ki < s.KH; ki++)
            for (idx kj = 0; kj < s.KW; kj++) {
                idx lo, hi;
                valid_cols(&s, kj, &lo, &hi);
                idx off = kj * s.DW - s.PW;
                double acc = 0.0;
                for (idx n = 0; n < s.N; n++) {
                    const float *gn = k->gy + (n * s.O + o) * L, *xn = k->x + (n * s.C + ci) * s.H * s.W;
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
                k->y[o * ck + ki * s.KW + kj] = (float)acc;
            }
    }
}

/* Chunks [lo, hi) of the samples, each summed into its partial sums (k->out + c size). */
static void weight_grad_body(void *ctx, idx lo, idx hi) {
    conv_ctx *k = ctx;
    const conv_shape s = k->s;
    idx L = k->L, cg = k->cg, og = k->og, ck = k->ck, nb = k->nb, chunks = k->chunks;
    int packs = k->packs, tr = k->tr;
    float *cols = packs ? malloc(sizeof(float) * (size_t)(ck * nb * L)) : NULL;
    float *gb = nb > 1 ? malloc(sizeof(float) * (size_t)(og * nb * L)) : NULL;
    if ((packs && !cols) || (nb > 1 && !gb)) {
        __atomic_store_n(&k->failed, 1, __ATOMIC_RELAXED);
        lo = hi;
    }
    for (idx c = lo; c < hi; c++) {
        float *out = k->out + c * k->size;
        idx n0 = s.N * c / chunks, n1 = s.N * (c + 1) / chunks;
        for (idx b0 = n0; b0 < n1; b0 += nb) {
            idx m = n1 - b0 < nb ? n1 - b0 : nb, K = m * L;
            for (idx g = 0; g < s.G; g++) {
                const float *a = k->x + (b0 * s.C + g * cg) * s.H * s.W;
                const float *gn = k->gy + (b0 * s.O + g * og) * L;
                if (packs && m == 1 && k->band < s.OH) {  /* (NOTE [ Columns in bands of rows ]) */
                    for (idx r = 0; r < s.OH; r += k->band) {
                        idx e = r + k->band < s.OH ? r + k->band : s.OH, len = (e - r) * s.OW;
                        float beta = b0 == n0 && r == 0 ? 0.0f : 1.0f, *dst = out + g * og * ck;
                        const float *gr = gn + r * s.OW;  /* the band's output gradient, rows L apart */
                        im2col_rows(&s, a, cg, cols, len, r, e);
                        if (tr)
                            k->sgemm(ROW_MAJOR, NO_TRANS, TRANS, ck, og, len, 1.0f, cols, len, gr, L, beta,
                                     dst, og);
                        else
                            k->sgemm(ROW_MAJOR, NO_TRANS, TRANS, og, ck, len, 1.0f, gr, L, cols, len, beta,
                                     dst, ck);
                    }
                    continue;
                }
                if (packs) {
                    for (idx j = 0; j < m; j++)
                        im2col(&s, k->x + ((b0 + j) * s.C + g * cg) * s.H * s.W, cg, cols + j * L, K);
                    a = cols;
                }
                if (m > 1) {
                    pack_samples(gb, (float *)gn, og, L, m, s.O * L, 0);
                    gn = gb;
                }
                float beta = b0 == n0 ? 0.0f : 1.0f, *dst = out + g * og * ck;
                if (tr)
                    k->sgemm(ROW_MAJOR, NO_TRANS, TRANS, ck, og, K, 1.0f, a, K, gn, K, beta, dst, og);
                else
                    k->sgemm(ROW_MAJOR, NO_TRANS, TRANS, og, ck, K, 1.0f, gn, K, a, K, beta, dst, ck);
            }
        }
    }
    free(cols);
    free(gb);
}

/* Tiles of the chunk sum: the chunks' partial sums added in chunk order, a row of SUM_WIDTH elements at a
 * time (so the adds run along rows), then laid out as gw: (G, Cg KH KW, O/G) tiles transposed in cache, or
 * as they are. */
static void chunk_sum_body(void *ctx, idx lo, idx hi) {
    conv_ctx *k = ctx;
    idx rows = k->rows, len = k->len, to = k->to, ck = k->ck, og = k->og;
    const float *partials = k->out;
    float *gw = k->y;
    for (idx t = lo; t < hi; t++) {
        idx r0 = t / to * SUM_TILE, o0 = t % to * SUM_WIDTH;
        idx r1 = r0 + SUM_TILE < rows ? r0 + SUM_TILE : rows;
        idx o1 = o0 + SUM_WIDTH < len ? o0 + SUM_WIDTH : len;
        idx wo = o1 - o0;
        float tile[SUM_TILE][SUM_WIDTH];
        for (idx r = r0; r < r1; r++) {
            const float *row = partials + r * len + o0;
            float *acc = k->tr ? tile[r - r0] : gw + r * len + o0;
            for (idx o = 0; o < wo; o++) acc[o] = row[o];
            for (idx c = 1; c < k->chunks; c++) {
                const float *pc = row + c * k->size;
                #pragma omp simd
                for (idx o = 0; o < wo; o++) acc[o] += pc[o];
            }
        }
        if (k->tr)  /* row r = g ck + j, column o of group g: gw[(g og + o) ck + j], stored along j (stores
                     * along o, ck floats apart, missed the cache: ResNet's ck * 4 bytes map to two sets) */
            for (idx o = o0; o < o1; o++)
                for (idx r = r0; r < r1; r++) gw[(r / ck * og + o) * ck + r % ck] = tile[r - r0][o - o0];
    }
}

/* gw = sum over samples of g_n cols(x_n)^T. The samples are split into `chunks` contiguous chunks (a count
 * the caller derives from the shape alone); chunk c accumulates into partials + c O Cg KH KW, laid out as
 * (G, Cg KH KW, O/G) (NOTE [ Weight gradient as cols @ g^T ]) or as gw, and the partial sums are then added
 * into gw in chunk order (NOTE [ Convolution threads ]). The blocks of samples (NOTE [ Weight gradient in
 * blocks of samples ]) depend on the shape alone too, so the result does not depend on the thread count. */
int conv2d_weight_grad_f32(const float *x, const float *gy, float *gw, float *partials, idx chunks,
                           const idx *p, void *gemm, int nt) {
    conv_ctx k = conv_setup(p, gemm);
    k.x = x, k.gy = gy, k.y = gw, k.chunks = chunks, k.size = k.s.O * k.ck;
    if (k.depthwise) {
        em_for(dw_weight_grad_body, &k, k.s.O, nt, 0);
        return 0;
    }
    k.tr = k.ck >= TRANSPOSED_MIN && k.og < DIRECT_MIN_O;
    idx longest = (k.s.N + chunks - 1) / chunks;  /* the most samples in a chunk */
    idx nb = (BLOCK_K + k.L - 1) / k.L;  /* samples per product */
    idx sample_bytes = (idx)sizeof(float) * k.ck * k.L;
    if (nb * sample_bytes > BLOCK_BYTES) nb = BLOCK_BYTES / sample_bytes;
    if (nb > longest) nb = longest;
    k.nb = nb < 1 ? 1 : nb;
    k.packs = !k.direct || k.nb > 1;  /* direct with one sample per product multiplies x_n as it is */
    k.out = chunks == 1 && !k.tr ? gw : partials;  /* one chunk in gw's layout: no sum to make */
    em_for(weight_grad_body, &k, chunks, nt, 1);
    if (k.failed) return -1;
    if (k.out == gw) return 0;
    k.rows = k.tr ? k.s.G * k.ck : k.s.O, k.len = k.tr ? k.og : k.ck;
    k.tj = (k.rows + SUM_TILE - 1) / SUM_TILE, k.to = (k.len + SUM_WIDTH - 1) / SUM_WIDTH;
    em_for(chunk_sum_body, &k, k.tj * k.to, nt, 0);
    return 0;
}
