/* The weight gradient of a "same"-size stride-1 convolution (stride 1, output the input's size: padding
 * (K - 1) D in all, split either way, any KH x KW, dilation, groups), float32 NCHW, without im2col in memory
 * (ember/_native/conv.py `conv_weight_grad` dispatches here: NOTE [ Which weight gradients go direct ];
 * other shapes keep conv.c's path).
 *
 * NOTE [ Direct weight gradient ]
 * gw[o][j] = sum over samples n and positions q of g[n, o, q] x[n, c, q + shift_j], j = (c, ki, kj) an
 * im2col row, shift_j = (ki DH - PH, kj DW - PW), x zero outside the image. conv.c builds those im2col rows
 * in memory (9x the input for a 3x3) and multiplies them with OpenBLAS's sgemm, which packs both operands
 * again; here a register tile reads them where they are:
 * - The positions are cut into bands (whole rows of one sample, or whole samples where the maps are small;
 *   BAND_Q positions or so, from the shape alone). A band's input rows are copied with a zero border
 *   (xb[s][c][row][col], Wp = W + (KW - 1) DW columns), so tap j of position (h, w) is
 *   xb[s][c][(h + ki DH) Wp + w + kj DW]: no masks, no bounds.
 * - Its output gradient is transposed, one block of OB = 32 outputs at a time, into gt[q][OB] (in cache: a
 *   band's block is BAND_Q x 128 bytes, read again for every im2col row of the block).
 * - The micro-kernel `tile` holds MR rows j x OB outputs in registers (AVX-512: 12 x 2 vectors) and runs
 *   over the band's positions in order: per position, OB / VL vector loads of gt, one broadcast of x per
 *   row, MR OB / VL fused multiply-adds.
 * - Each band's tile sums start at zero and are added, band by band in order, into the task's accumulator
 *   (its rows j x OB, as the tiles lay them out); after the last band it is written to gw (O, Cg, KH, KW)
 *   in transposed 16 x 16 blocks.
 * - A task is (group, output block, range of im2col rows); the threads split the tasks, over output blocks
 *   where they divide evenly (each thread transposes only its blocks of g), and a thread's tasks share each
 *   band's copy of the input.
 * So every gw element is one float32 fused-multiply-add chain over each band's positions in order, the band
 * sums added in band order: the same operations whichever thread computes it (the threads split the
 * (group, output block, im2col rows) tasks, each gw element in one task), however many threads there are,
 * and in the builds without AVX-512 (8-float vectors) and without vectors (fmaf per lane), which
 * tests/test_native_conv.py checks to the bit. A chain of one band (hundreds of terms, not N H W: 25,088
 * on ResNet's first stage at batch 8) keeps the error within the float32 error of torch's own (also tested;
 * BAND_Q 256 made ResNet's 7 x 7 1x1 convolution's error 2.6x torch's, 128 1.1x, and was no faster).
 * Measured (one thread, thread CPU time, ResNet-18's 3x3 stride-1 layers at batch 8): 215-240 GFLOP/s, the
 * tile's loop at about 90% of the FMA units' peak (273 GFLOP/s here); torch's oneDNN 175-245; conv.c's
 * im2col and sgemm path 175-215. Other tiles measured no faster: 14 rows x 2 vectors within noise, 6 x 4
 * (OB 64) and 7 x 4 3-8% slower, 9 x 3 (OB 48, which 64 outputs do not divide) up to 30% slower.
 *
 * NOTE [ Padding is skipped, not multiplied ]
 * torch's weight gradient leaves out the products of an output gradient with the padding: an inf output
 * gradient next to the border gives inf (not NaN, as inf times the padding's zero would) in the taps that
 * reach the padding. The tile multiplies the zero border like any input, which is the same sum wherever the
 * output gradient is finite (a product with zero adds zero). So a band whose transposed output-gradient
 * block holds an inf or NaN (checked as it is made) goes through `tiles_skipping_padding` instead: the same
 * chains in the same order, less the padding's products. (conv.c's im2col path still multiplies them.)
 *
 * p[] holds the shape: N C H W O KH KW PH PW DH DW G.
 */
#define EM_KERNEL_POOL
#include "common.h"
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* The vector type of rnn.c's micro-kernel (NOTE [ One call per LSTM layer ]): the same fused
 * multiply-adds per lane in every build. */
#if defined(__AVX512F__)
#define VL 16
#define MR 12  /* im2col rows per tile: MR x OB / VL = 24 accumulators of 32 registers */
typedef __m512 vf;
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VBCAST(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VZERO() _mm512_setzero_ps()
#elif defined(__AVX2__) && defined(__FMA__)
#define VL 8
#define MR 3   /* 12 accumulators of 16 registers */
typedef __m256 vf;
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VBCAST(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VZERO() _mm256_setzero_ps()
#else
#define VL 8  /* plain C: a "vector" is 8 floats in a struct, each lane one fmaf chain */
#define MR 4
typedef struct { float v[8]; } vf;
static inline vf vload_(const float *p) { vf r; for (int i = 0; i < 8; i++) r.v[i] = p[i]; return r; }
static inline void vstore_(float *p, vf a) { for (int i = 0; i < 8; i++) p[i] = a.v[i]; }
static inline vf vbcast_(float x) { vf r; for (int i = 0; i < 8; i++) r.v[i] = x; return r; }
static inline vf vfma_(vf a, vf b, vf c) {
    for (int i = 0; i < 8; i++) c.v[i] = fmaf(a.v[i], b.v[i], c.v[i]);
    return c;
}
static inline vf vadd_(vf a, vf b) { for (int i = 0; i < 8; i++) a.v[i] += b.v[i]; return a; }
#define VLOAD(p) vload_(p)
#define VSTORE(p, v) vstore_(p, v)
#define VBCAST(x) vbcast_(x)
#define VFMA(a, b, c) vfma_(a, b, c)
#define VADD(a, b) vadd_(a, b)
#define VZERO() vbcast_(0.0f)
#endif
#define OB 32            /* outputs per block */
#define NV (OB / VL)     /* vectors per tile row */
#define BAND_Q 128       /* positions per band, about (NOTE [ Direct weight gradient ]) */

typedef struct { idx N, C, H, W, O, KH, KW, PH, PW, DH, DW, G; } wg_shape;

/* What the tasks share: the operands, the shape and the bands. */
typedef struct {
    wg_shape s;
    const float *x, *gy;
    float *gw;
    idx cg, og, ck, kk, nob, njr, jr, Wp, Hb, rows, per, bands;
    int failed;
} wg_ctx;

/* acc[r][:] (mr rows, a constant after inlining) = sum over the band's positions of
 * x[row r's offset + position] gt[position][:]: ns samples (xs floats apart) of `rows` rows of W positions,
 * x rows Wp floats apart. Then: first band: out = acc, else out += acc (out: mr rows of OB floats). */
static inline __attribute__((always_inline)) void tile(int mr, const float *xb, const idx *off, idx xs,
                                                       idx ns, idx rows, idx W, idx Wp, const float *gt,
                                                       float *out, int first) {
    vf acc[MR][NV];
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = VZERO();
    idx o[MR];  /* in registers: one base pointer per row of positions, not MR */
    for (int r = 0; r < mr; r++) o[r] = off[r];
    for (idx sm = 0; sm < ns; sm++)
        for (idx h = 0; h < rows; h++) {
            const float *xr = xb + sm * xs + h * Wp;
            const float *gr = gt + (sm * rows + h) * W * OB;
            for (idx w = 0; w < W; w++, xr++) {
                vf b[NV];
                for (int v = 0; v < NV; v++) b[v] = VLOAD(gr + w * OB + v * VL);
                for (int r = 0; r < mr; r++) {
                    vf a = VBCAST(xr[o[r]]);
                    for (int v = 0; v < NV; v++) acc[r][v] = VFMA(a, b[v], acc[r][v]);
                }
            }
        }
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < NV; v++) {
            float *o = out + r * OB + v * VL;
            VSTORE(o, first ? acc[r][v] : VADD(VLOAD(o), acc[r][v]));
        }
}

/* The rows [j0, j0 + m) of a band in tiles of at most MR rows of about equal size (a tile of few rows has
 * too few accumulators to hide the FMA latency). */
#define TILE(n) case n: tile(n, xb, o, xs, ns, rows, W, Wp, gt, dst, first); break;
static void tiles(const float *xb, const idx *off, idx m, idx xs, idx ns, idx rows, idx W, idx Wp,
                  const float *gt, float *out, int first) {
    idx count = (m + MR - 1) / MR;
    for (idx i = 0, r = 0; i < count; i++) {
        idx k = (m - r) / (count - i);
        const idx *o = off + r;
        float *dst = out + r * OB;
        switch (k) {  /* mr a constant in each case */
#if MR >= 12
        TILE(12) TILE(11) TILE(10) TILE(9) TILE(8) TILE(7) TILE(6) TILE(5)
#endif
#if MR >= 4
        TILE(4)
#endif
        TILE(3) TILE(2) TILE(1)
        default: break;
        }
        r += k;
    }
}

/* Band b: its first sample, sample count, first row and row count. */
static void band(const wg_ctx *k, idx b, idx *n0, idx *ns, idx *h0, idx *rows) {
    if (k->per > 1 || k->rows == k->s.H) {  /* whole samples */
        *n0 = b * k->per, *ns = k->s.N - *n0 < k->per ? k->s.N - *n0 : k->per;
        *h0 = 0, *rows = k->s.H;
    } else {
        idx bps = (k->s.H + k->rows - 1) / k->rows;  /* bands per sample */
        *n0 = b / bps, *ns = 1, *h0 = b % bps * k->rows;
        *rows = k->s.H - *h0 < k->rows ? k->s.H - *h0 : k->rows;
    }
}

/* Copy channels [c0, c1) of group g, samples [n0, n0 + ns), output rows [h0, h0 + rows) with their halo
 * into xb[s][c][Hb][Wp], zeros outside the image. */
static void pad_band(const wg_ctx *k, float *xb, idx g, idx c0, idx c1, idx n0, idx ns, idx h0, idx rows) {
    const wg_shape s = k->s;
    idx Wp = k->Wp, hb = rows + (s.KH - 1) * s.DH, nc = c1 - c0;
    for (idx sm = 0; sm < ns; sm++)
        for (idx c = c0; c < c1; c++) {
            const float *src = k->x + ((n0 + sm) * s.C + g * k->cg + c) * s.H * s.W;
            float *dst = xb + (sm * nc + c - c0) * k->Hb * Wp;
            for (idx r = 0; r < hb; r++) {
                idx ih = h0 + r - s.PH;
                float *d = dst + r * Wp;
                if (ih < 0 || ih >= s.H) {
                    memset(d, 0, sizeof(float) * (size_t)Wp);
                    continue;
                }
                for (idx i = 0; i < s.PW; i++) d[i] = 0.0f;
                memcpy(d + s.PW, src + ih * s.W, sizeof(float) * (size_t)s.W);
                for (idx i = s.PW + s.W; i < Wp; i++) d[i] = 0.0f;
            }
        }
}

#ifdef __AVX512F__
/* dst[q][i] (rows ldd apart) = src[i][q] (rows ld apart) for a 16 x 16 block, in registers. */
static inline void transpose16(const float *src, idx ld, float *dst, idx ldd) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * ld);
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; i++) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
    }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    }
    for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, r[i]);
}
#endif

/* gt[q][0:OB] = g[n0 + s, g og + ob OB + i, h0 + h, w] for the band's positions q = (s, h, w); zeros for
 * outputs past the group's. With AVX-512, whole 16 x 16 blocks are transposed in registers (the same
 * copies). Returns whether the block holds an inf or NaN (NOTE [ Padding is skipped, not multiplied ]). */
static int transpose_band(const wg_ctx *k, float *gt, idx g, idx ob, idx n0, idx ns, idx h0, idx rows) {
    const wg_shape s = k->s;
    idx L = s.H * s.W, len = rows * s.W, o0 = ob * OB, m = k->og - o0 < OB ? k->og - o0 : OB;
    for (idx sm = 0; sm < ns; sm++) {
        float *dst = gt + sm * len * OB;
        const float *src = k->gy + ((n0 + sm) * s.O + g * k->og + o0) * L + h0 * s.W;
        for (idx q0 = 0; q0 < len; q0 += 16) {
            idx q1 = q0 + 16 < len ? q0 + 16 : len, i0 = 0;
#ifdef __AVX512F__
            if (q1 - q0 == 16)
                for (; i0 + 16 <= m; i0 += 16) transpose16(src + i0 * L + q0, L, dst + q0 * OB + i0, OB);
#endif
            for (idx i = i0; i < m; i++) {
                const float *a = src + i * L;
                for (idx q = q0; q < q1; q++) dst[q * OB + i] = a[q];
            }
            for (idx q = q0; q < q1; q++)
                for (idx i = m; i < OB; i++) dst[q * OB + i] = 0.0f;
        }
    }
    int bad = 0;
    #pragma omp simd reduction(|:bad)
    for (idx i = 0; i < ns * len * OB; i++) bad |= !(gt[i] - gt[i] == 0.0f);
    return bad;
}

/* `tiles` for a band whose output gradient holds an inf or NaN: the same chains, less the products of
 * positions whose tap lies in the padding (NOTE [ Padding is skipped, not multiplied ]); one row of the
 * tile at a time (rows j0 + r, r < m, of group rows). */
static void tiles_skipping_padding(const wg_ctx *k, const float *xb, const idx *off, idx j0, idx m, idx xs,
                                   idx ns, idx h0, idx rows, const float *gt, float *out, int first) {
    const wg_shape s = k->s;
    for (idx r = 0; r < m; r++) {
        idx t = (j0 + r) % k->kk, dh = t / s.KW * s.DH - s.PH, dw = t % s.KW * s.DW - s.PW;
        vf acc[NV];
        for (int v = 0; v < NV; v++) acc[v] = VZERO();
        for (idx sm = 0; sm < ns; sm++)
            for (idx h = 0; h < rows; h++) {
                idx ih = h0 + h + dh;
                if (ih < 0 || ih >= s.H) continue;
                const float *xr = xb + sm * xs + h * k->Wp + off[r];
                const float *gr = gt + (sm * rows + h) * s.W * OB;
                for (idx w = 0; w < s.W; w++) {
                    if (w + dw < 0 || w + dw >= s.W) continue;
                    vf a = VBCAST(xr[w]);
                    for (int v = 0; v < NV; v++) acc[v] = VFMA(a, VLOAD(gr + w * OB + v * VL), acc[v]);
                }
            }
        for (int v = 0; v < NV; v++) {
            float *o = out + r * OB + v * VL;
            VSTORE(o, first ? acc[v] : VADD(VLOAD(o), acc[v]));
        }
    }
}

/* Task t's group, output block and first im2col row (the output blocks vary fastest, so consecutive
 * tasks read the same input channels). */
static void task(const wg_ctx *k, idx t, idx *g, idx *ob, idx *j0) {
    *g = t / (k->nob * k->njr), *ob = t % k->nob, *j0 = t / k->nob % k->njr * k->jr;
}

/* Tasks [lo, hi): for every band in order, each task's tiles over it (the band's input rows copied once
 * for the tasks that share them), then each task's tiles written to gw. */
static void wgrad_body(void *ctx, idx lo, idx hi) {
    wg_ctx *k = ctx;
    const wg_shape s = k->s;
    idx ck = k->ck, kk = k->kk, Wp = k->Wp, jr = k->jr, count = hi - lo;
    idx cspan = (jr + kk - 1) / kk + 1;  /* the most channels a task's rows touch */
    idx per = k->per > 1 ? k->per : 1, bandq = per * k->rows * s.W;
    float *xb = malloc(sizeof(float) * (size_t)(per * cspan * k->Hb * Wp));
    float *gt = malloc(sizeof(float) * (size_t)(bandq * OB));
    float *acc = malloc(sizeof(float) * (size_t)(count * jr * OB));
    idx *off = malloc(sizeof(idx) * (size_t)(count * jr));
    if (!xb || !gt || !acc || !off) {
        __atomic_store_n(&k->failed, 1, __ATOMIC_RELAXED);
        hi = lo;
    }
    for (idx t = lo; t < hi; t++) {  /* each row's offset in xb */
        idx g, ob, j0;
        task(k, t, &g, &ob, &j0);
        idx j1 = j0 + jr < ck ? j0 + jr : ck, c0 = j0 / kk;
        for (idx j = j0; j < j1; j++) {
            idx c = j / kk, ki = j % kk / s.KW, kj = j % s.KW;
            off[(t - lo) * jr + j - j0] = (c - c0) * k->Hb * Wp + ki * s.DH * Wp + kj * s.DW;
        }
    }
    for (idx b = 0; b < k->bands && lo < hi; b++) {
        idx n0, ns, h0, rows, pg = -1, pc0 = -1, pc1 = -1;  /* what xb holds */
        band(k, b, &n0, &ns, &h0, &rows);
        for (idx t = lo; t < hi; t++) {
            idx g, ob, j0;
            task(k, t, &g, &ob, &j0);
            idx j1 = j0 + jr < ck ? j0 + jr : ck, c0 = j0 / kk, c1 = (j1 - 1) / kk + 1;
            if (j1 <= j0) continue;
            if (g != pg || c0 != pc0 || c1 != pc1) pad_band(k, xb, g, c0, c1, n0, ns, h0, rows);
            pg = g, pc0 = c0, pc1 = c1;
            idx xs = (c1 - c0) * k->Hb * Wp;
            float *out = acc + (t - lo) * jr * OB;
            if (transpose_band(k, gt, g, ob, n0, ns, h0, rows))
                tiles_skipping_padding(k, xb, off + (t - lo) * jr, j0, j1 - j0, xs, ns, h0, rows, gt, out,
                                       b == 0);
            else
                tiles(xb, off + (t - lo) * jr, j1 - j0, xs, ns, rows, s.W, Wp, gt, out, b == 0);
        }
    }
    for (idx t = lo; t < hi; t++) {  /* acc[j][i] -> gw[g og + ob OB + i][j] */
        idx g, ob, j0;
        task(k, t, &g, &ob, &j0);
        idx m = (j0 + jr < ck ? j0 + jr : ck) - j0, o0 = ob * OB, mo = k->og - o0 < OB ? k->og - o0 : OB;
        const float *a = acc + (t - lo) * jr * OB;
        float *dst = k->gw + (g * k->og + o0) * ck + j0;
        for (idx jb = 0; jb < m; jb += 16) {  /* 16 rows at a time: reads along rows of acc, not columns */
            idx je = jb + 16 < m ? jb + 16 : m, i0 = 0;
#ifdef __AVX512F__
            if (je - jb == 16)
                for (; i0 + 16 <= mo; i0 += 16) transpose16(a + jb * OB + i0, OB, dst + i0 * ck + jb, ck);
#endif
            for (idx i = i0; i < mo; i++)
                for (idx j = jb; j < je; j++) dst[i * ck + j] = a[j * OB + i];
        }
    }
    free(xb);
    free(gt);
    free(acc);
    free(off);
}

/* gw (O, C/G, KH, KW) = the weight gradient of the same-size stride-1 convolution of x (N, C, H, W) with
 * output gradient gy (N, O, H, W), on nt threads of ember's pool. Returns 0, or -1 when a buffer could not
 * be allocated. */
int conv2d_weight_grad_same_f32(const float *x, const float *gy, float *gw, const idx *p, int nt) {
    wg_ctx k = {.s = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]}};
    const wg_shape s = k.s;
    k.x = x, k.gy = gy, k.gw = gw;
    k.cg = s.C / s.G, k.og = s.O / s.G, k.kk = s.KH * s.KW, k.ck = k.cg * k.kk;
    k.Wp = s.W + (s.KW - 1) * s.DW;
    idx L = s.H * s.W;
    if (L >= BAND_Q) {  /* bands of whole rows of one sample */
        k.rows = (BAND_Q + s.W - 1) / s.W, k.per = 1;
        if (k.rows > s.H) k.rows = s.H;
        k.bands = s.N * ((s.H + k.rows - 1) / k.rows);
    } else {  /* bands of whole samples */
        k.rows = s.H, k.per = BAND_Q / L;
        if (k.per > s.N) k.per = s.N;
        k.bands = (s.N + k.per - 1) / k.per;
    }
    k.Hb = k.rows + (s.KH - 1) * s.DH;
    k.nob = (k.og + OB - 1) / OB;
    /* The threads split the output blocks (each transposes its own blocks of g), and the im2col rows only
     * where the blocks do not split evenly: into the fewest parts that make the task count a multiple of
     * the threads (the results do not depend on it). */
    idx have = s.G * k.nob, a = have, b = nt;
    while (b) {  /* gcd */
        idx r = a % b;
        a = b, b = r;
    }
    k.njr = nt / a;
    if (k.njr > (k.ck + MR - 1) / MR) k.njr = (k.ck + MR - 1) / MR;
    k.jr = (k.ck + k.njr - 1) / k.njr;
    idx tasks = s.G * k.nob * k.njr;
    em_for(wgrad_body, &k, tasks, nt, (tasks + nt - 1) / nt);
    return k.failed ? -1 : 0;
}
