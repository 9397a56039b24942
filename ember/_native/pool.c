/* 2-d pooling of C-contiguous float32 (planes, H, W) data, forward and backward, written as torch's CPU
 * kernels (aten/src/ATen/native/cpu/MaxPoolKernel.cpp, AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp) so the
 * results are torch's to the bit: the same window bounds, the same order of additions in float32, the same
 * divisions. Planes (batch x channels) are split over ember's pool's threads (NOTE [ Kernels on ember's pool ]
 * in common.h: beside torch's spinning OpenMP team, the average pools' OpenMP loops had stayed on one thread
 * below 4M elements); each plane is computed by one thread.
 *
 * Max pooling's forward stays in NumPy (NOTE [ Max pooling forward stays in NumPy ] in
 * ember/_ops/pooling.py); its backward adds each output gradient at its index, outputs in order. Average
 * pooling sums a window's in-bounds taps and divides by the window's size (clipped to the padded input;
 * without count_include_pad, to the input; or divisor_override). p[] holds H W OH OW KH KW SH SW PH PW DH DW.
 */
#define EM_KERNEL_POOL
#include "common.h"

typedef struct {
    const float *x, *g;
    const int64_t *ind_in;
    float *y;
    int64_t *ind;
    idx in_size, out_size, H, W, OH, OW, lo, hi, kind;
    const idx *p;
} mp_ctx;

static void mp_backward_body(void *ctx, idx lo, idx hi) {
    const mp_ctx *k = ctx;
    for (idx c = lo; c < hi; c++) {
        float *o = k->y + c * k->in_size;
        const float *gp = k->g + c * k->out_size;
        const int64_t *ip = k->ind_in + c * k->out_size;
        memset(o, 0, sizeof(float) * (size_t)k->in_size);
        for (idx j = 0; j < k->out_size; j++) o[ip[j]] += gp[j];
    }
}

/* Planes on ember's pool (NOTE [ Kernels on ember's pool ] in common.h), as max_pool2d_f32's. */
void max_pool2d_backward_f32(const float *g, const int64_t *ind, float *gx, idx planes, idx in_size,
                             idx out_size, int nt) {
    mp_ctx k = {.g = g, .ind_in = ind, .y = gx, .in_size = in_size, .out_size = out_size};
    em_for(mp_backward_body, &k, planes, nt, 0);
}

/* The window of output (oh, ow): its in-bounds rows [*h0, *h1), columns [*w0, *w1), and its divisor. */
static inline float avg_window(const idx *p, idx oh, idx ow, int include_pad, double divisor, idx *h0, idx *h1,
                               idx *w0, idx *w1) {
    idx H = p[0], W = p[1], KH = p[4], KW = p[5], SH = p[6], SW = p[7], PH = p[8], PW = p[9];
    idx a = oh * SH - PH, b = ow * SW - PW;
    idx a1 = a + KH < H + PH ? a + KH : H + PH, b1 = b + KW < W + PW ? b + KW : W + PW;
    idx pool = (a1 - a) * (b1 - b);
    a = a > 0 ? a : 0;
    b = b > 0 ? b : 0;
    a1 = a1 < H ? a1 : H;
    b1 = b1 < W ? b1 : W;
    *h0 = a, *h1 = a1, *w0 = b, *w1 = b1;
    if (divisor != 0.0) return (float)divisor;
    return (float)(include_pad ? pool : (a1 - a) * (b1 - b));
}

/* adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)) */
static inline idx ad_start(idx o, idx out, idx in) { return (o * in) / out; }
static inline idx ad_end(idx o, idx out, idx in) { return ((o + 1) * in + out - 1) / out; }

/* The average-pooling loops' operands (planes [lo, hi) a call of a body; p unused by adaptive pooling). */
typedef struct {
    const float *x;
    float *y;
    const idx *p;
    idx H, W, OH, OW;
    int include_pad;
    double divisor;
} avg_ctx;

/* Output (oh, ow)'s window [h0, h1) x [w0, w1) of the input, and what its sum is divided by: d1, then d2
 * (adaptive pooling divides by the window's height, then its width, as torch does; average pooling once, by
 * avg_window's divisor, and then by 1, which changes nothing). */
static inline __attribute__((always_inline)) void window(const avg_ctx *k, int adaptive, idx oh, idx ow,
                                                        idx *h0, idx *h1, idx *w0, idx *w1, float *d1,
                                                        float *d2) {
    if (!adaptive) {
        *d1 = avg_window(k->p, oh, ow, k->include_pad, k->divisor, h0, h1, w0, w1);
        *d2 = 1.0f;
        return;
    }
    *h0 = ad_start(oh, k->OH, k->H), *h1 = ad_end(oh, k->OH, k->H);
    *w0 = ad_start(ow, k->OW, k->W), *w1 = ad_end(ow, k->OW, k->W);
    *d1 = (float)(*h1 - *h0), *d2 = (float)(*w1 - *w0);
}

/* The forward loop over planes [lo, hi); `adaptive` a constant after inlining (no branch per window). */
static inline __attribute__((always_inline)) void avg_rows(const avg_ctx *k, idx lo, idx hi, int adaptive) {
    idx H = k->H, W = k->W, OH = k->OH, OW = k->OW;
    for (idx c = lo; c < hi; c++) {
        const float *xp = k->x + c * H * W;
        float *yp = k->y + c * OH * OW;
        for (idx oh = 0; oh < OH; oh++)
            for (idx ow = 0; ow < OW; ow++) {
                idx h0, h1, w0, w1;
                float d1, d2;
                window(k, adaptive, oh, ow, &h0, &h1, &w0, &w1, &d1, &d2);
                if (h0 >= h1 || w0 >= w1) {
                    yp[oh * OW + ow] = 0.0f;
                    continue;
                }
                float s = 0.0f;
                for (idx ih = h0; ih < h1; ih++)
                    for (idx iw = w0; iw < w1; iw++) s += xp[ih * W + iw];
                yp[oh * OW + ow] = s / d1 / d2;
            }
    }
}

/* The backward loop: x the output gradient, y the input gradient. */
static inline __attribute__((always_inline)) void avg_backward_rows(const avg_ctx *k, idx lo, idx hi,
                                                                    int adaptive) {
    idx H = k->H, W = k->W, OH = k->OH, OW = k->OW;
    for (idx c = lo; c < hi; c++) {
        float *o = k->y + c * H * W;
        const float *gp = k->x + c * OH * OW;
        memset(o, 0, sizeof(float) * (size_t)(H * W));
        for (idx oh = 0; oh < OH; oh++)
            for (idx ow = 0; ow < OW; ow++) {
                idx h0, h1, w0, w1;
                float d1, d2;
                window(k, adaptive, oh, ow, &h0, &h1, &w0, &w1, &d1, &d2);
                float delta = gp[oh * OW + ow] / d1 / d2;
                for (idx ih = h0; ih < h1; ih++)
                    for (idx iw = w0; iw < w1; iw++) o[ih * W + iw] += delta;
            }
    }
}

static void avg_body(void *ctx, idx lo, idx hi) { avg_rows(ctx, lo, hi, 0); }
static void adaptive_body(void *ctx, idx lo, idx hi) { avg_rows(ctx, lo, hi, 1); }
static void avg_backward_body(void *ctx, idx lo, idx hi) { avg_backward_rows(ctx, lo, hi, 0); }
static void adaptive_backward_body(void *ctx, idx lo, idx hi) { avg_backward_rows(ctx, lo, hi, 1); }

void avg_pool2d_f32(const float *x, float *y, idx planes, const idx *p, int include_pad, double divisor,
                    int nt) {
    avg_ctx k = {x, y, p, p[0], p[1], p[2], p[3], include_pad, divisor};
    em_for(avg_body, &k, planes, nt, 0);
}

void avg_pool2d_backward_f32(const float *g, float *gx, idx planes, const idx *p, int include_pad,
                             double divisor, int nt) {
    avg_ctx k = {g, gx, p, p[0], p[1], p[2], p[3], include_pad, divisor};
    em_for(avg_backward_body, &k, planes, nt, 0);
}

void adaptive_avg_pool2d_f32(const float *x, float *y, idx planes, idx H, idx W, idx OH, idx OW, int nt) {
    avg_ctx k = {.x = x, .y = y, .H = H, .W = W, .OH = OH, .OW = OW};
    em_for(adaptive_body, &k, planes, nt, 0);
}

void adaptive_avg_pool2d_backward_f32(const float *g, float *gx, idx planes, idx H, idx W, idx OH, idx OW,
                                      int nt) {
    avg_ctx k = {.x = g, .y = gx, .H = H, .W = W, .OH = OH, .OW = OW};
    em_for(adaptive_backward_body, &k, planes, nt, 0);
}

/* NOTE [ Max pooling forward in C ]
 * torch's scan of each window (cpu_max_pool: rows, then columns, in order; `val > max || isnan(val)` takes
 * a tap, so the first maximum wins and a NaN window keeps its last NaN; the running max starts at -inf with
 * the index of the window's first in-bounds tap). A branch per tap on random data mispredicts half the time
 * (NOTE [ Max pooling forward stays in NumPy ] in ember/_ops/pooling.py measured such a scan 3x slower than
 * NumPy), so a tap is taken by a select, not a branch, and the loop over a row's outputs vectorises (each
 * lane scans one window). Outputs whose windows leave the input at the left or right edge take the same
 * scan with a bounds check per tap; padding is never read, as torch never reads it. Measured on the MNIST
 * example's pools (64x16x28x28 and 64x32x14x14, 2x2): 0.43 and 0.58 ms of CPU against NumPy's 1.06 and
 * 0.5 ms and torch's 3.5 and 1.7 ms at one thread; orders that vectorise along whole planes (a horizontal
 * pass, then a vertical one; gathers at precomputed window corners) measured no faster on this bandwidth. */
static inline void mp_take(float v, idx at, float *m, int64_t *mi) {
    int take = (v > *m) | (v != v);
    *m = take ? v : *m;
    *mi = take ? at : *mi;
}

/* One output row. Inlined with constant window sizes where the caller knows them (2x2 and 3x3 windows,
 * stride 2, the common ones), so the taps unroll: with runtime sizes the scan is ~3.5x slower. */
static inline __attribute__((always_inline)) void mp_row(const float *xp, float *restrict yr, int64_t *restrict ir,
                                                         idx H, idx W, idx OW, idx oh, idx lo, idx hi, idx KH,
                                                         idx KW, idx SH, idx SW, idx PH, idx PW, idx DH, idx DW) {
    idx h0 = oh * SH - PH, h1 = h0 + (KH - 1) * DH + 1;
    h1 = h1 < H ? h1 : H;
    while (h0 < 0) h0 += DH;
    for (idx ow = 0; ow < OW; ow++) {  /* the edges (the interior is the loop below) */
        if (ow == lo) ow = hi;
        if (ow >= OW) break;
        idx w0 = ow * SW - PW, w1 = w0 + (KW - 1) * DW + 1;
        w1 = w1 < W ? w1 : W;
        while (w0 < 0) w0 += DW;
        float m = -INFINITY;
        int64_t mi = h0 * W + w0;
        for (idx ih = h0; ih < h1; ih += DH)
            for (idx iw = w0; iw < w1; iw += DW) mp_take(xp[ih * W + iw], ih * W + iw, &m, &mi);
        yr[ow] = m;
        ir[ow] = mi;
    }
    if (h0 == oh * SH && h1 == h0 + (KH - 1) * DH + 1) {  /* every row tap in bounds: a constant count */
        for (idx ow = lo; ow < hi; ow++) {
            idx w0 = ow * SW - PW;
            float m = -INFINITY;
            int64_t mi = h0 * W + w0;
            for (idx kh = 0; kh < KH; kh++)
                for (idx kw = 0; kw < KW; kw++) {
                    idx at = (h0 + kh * DH) * W + w0 + kw * DW;
                    mp_take(xp[at], at, &m, &mi);
                }
            yr[ow] = m;
            ir[ow] = mi;
        }
        return;
    }
    for (idx ow = lo; ow < hi; ow++) {
        idx w0 = ow * SW - PW;
        float m = -INFINITY;
        int64_t mi = h0 * W + w0;
        for (idx ih = h0; ih < h1; ih += DH)
            for (idx kw = 0; kw < KW; kw++) {
                idx at = ih * W + w0 + kw * DW;
                mp_take(xp[at], at, &m, &mi);
            }
        yr[ow] = m;
        ir[ow] = mi;
    }
}

/* 2x2 windows, stride 2, no padding or dilation, W = 2 OW (the classic CNN pool): per-row scans vectorise
 * poorly on the short rows of small images (0.45 and 0.58 ms for the MNIST example's 64x16x28x28 and
 * 64x32x14x14 pools), so a plane is scanned in two passes, the first one long loop over the whole plane: the
 * best of each horizontal pair of taps (2k, 2k+1), then, per output, the best of its two rows' pairs, upper
 * first (0.34 and 0.32 ms, against NumPy's 0.7 and 0.42 ms for its running max alone). Grouping the scan so
 * keeps its result: the running rule picks the last NaN, else the first maximum, and grouping taps in order
 * picks the same. A plane's pairs live on the stack (H OW <= 4096). */
static void mp_2x2_body(void *ctx, idx lo, idx hi) {
    const mp_ctx *k = ctx;
    idx H = k->H, W = k->W, OH = k->OH, OW = k->OW, n = H * OW;
    for (idx c = lo; c < hi; c++) {
        const float *xp = k->x + c * H * W;
        float hv[n];
        int64_t hi_[n];
        for (idx q = 0; q < n; q++) {
            float a = xp[2 * q], b = xp[2 * q + 1];
            float m = -INFINITY;
            int64_t mi = 2 * q;
            mp_take(a, 2 * q, &m, &mi);
            mp_take(b, 2 * q + 1, &m, &mi);
            hv[q] = m;
            hi_[q] = mi;
        }
        for (idx oh = 0; oh < OH; oh++) {
            float *restrict yr = k->y + (c * OH + oh) * OW;
            int64_t *restrict ir = k->ind + (c * OH + oh) * OW;
            const float *h0 = hv + 2 * oh * OW, *h1 = h0 + OW;
            const int64_t *i0 = hi_ + 2 * oh * OW, *i1 = i0 + OW;
            for (idx ow = 0; ow < OW; ow++) {
                float m = h0[ow];
                int64_t mi = i0[ow];
                mp_take(h1[ow], i1[ow], &m, &mi);
                yr[ow] = m;
                ir[ow] = mi;
            }
        }
    }
}

static void mp_body(void *ctx, idx lo, idx hi) {
    const mp_ctx *k = ctx;
    const idx *p = k->p;
    idx H = p[0], W = p[1], OH = p[2], OW = p[3], KH = p[4], KW = p[5], SH = p[6], SW = p[7], PH = p[8],
        PW = p[9], DH = p[10], DW = p[11];
    for (idx c = lo; c < hi; c++) {
        const float *xp = k->x + c * H * W;
        for (idx oh = 0; oh < OH; oh++) {
            float *yr = k->y + (c * OH + oh) * OW;
            int64_t *ir = k->ind + (c * OH + oh) * OW;
            if (k->kind == 2)
                mp_row(xp, yr, ir, H, W, OW, oh, k->lo, k->hi, 2, 2, 2, 2, PH, PW, 1, 1);
            else if (k->kind == 3)
                mp_row(xp, yr, ir, H, W, OW, oh, k->lo, k->hi, 3, 3, 2, 2, PH, PW, 1, 1);
            else
                mp_row(xp, yr, ir, H, W, OW, oh, k->lo, k->hi, KH, KW, SH, SW, PH, PW, DH, DW);
        }
    }
}

/* Planes are split over ember's pool's threads (NOTE [ Kernels on ember's pool ] in common.h). */
void max_pool2d_f32(const float *x, float *y, int64_t *ind, idx planes, const idx *p, int nt) {
    idx H = p[0], W = p[1], OH = p[2], OW = p[3], KH = p[4], KW = p[5], SH = p[6], SW = p[7], PH = p[8],
        PW = p[9], DH = p[10], DW = p[11];
    /* interior outputs [lo, hi): every column tap in bounds */
    idx lo = PW > 0 ? (PW + SW - 1) / SW : 0, hi = 0;
    for (idx ow = OW; ow > 0; ow--)
        if ((ow - 1) * SW - PW + (KW - 1) * DW < W) {
            hi = ow;
            break;
        }
    lo = lo < OW ? lo : OW;
    hi = hi > lo ? hi : lo;
    mp_ctx k = {.x = x, .y = y, .ind = ind, .H = H, .W = W, .OH = OH, .OW = OW, .lo = lo, .hi = hi, .p = p};
    if (KH == 2 && KW == 2 && SH == 2 && SW == 2 && PH == 0 && PW == 0 && DH == 1 && DW == 1 &&
        W == 2 * OW && 2 * OH <= H && H * OW <= 4096) {
        em_for(mp_2x2_body, &k, planes, nt, 0);  /* (two passes: the comment above mp_2x2_body) */
        return;
    }
    if (DH == 1 && DW == 1 && SH == 2 && SW == 2)
        k.kind = KH == 2 && KW == 2 ? 2 : KH == 3 && KW == 3 ? 3 : 0;
    em_for(mp_body, &k, planes, nt, 0);
}
