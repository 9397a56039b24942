/* 2-d pooling of C-contiguous float32 (planes, H, W) data, forward and backward, written as torch's CPU
 * kernels (aten/src/ATen/native/cpu/MaxPoolKernel.cpp, AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp) so the
 * results are torch's to the bit: the same window bounds, the same order of additions in float32, the same
 * divisions. Planes (batch x channels) are split over threads; each plane is computed by one thread.
 *
 * Max pooling's forward stays in NumPy (NOTE [ Max pooling forward stays in NumPy ] in
 * ember/_ops/pooling.py); its backward adds each output gradient at its index, outputs in order. Average
 * pooling sums a window's in-bounds taps and divides by the window's size (clipped to the padded input;
 * without count_include_pad, to the input; or divisor_override). p[] holds H W OH OW KH KW SH SW PH PW DH DW.
 */
#include "common.h"

void max_pool2d_backward_f32(const float *g, const int64_t *ind, float *gx, idx planes, idx in_size,
                             idx out_size, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < planes; c++) {
        float *o = gx + c * in_size;
        const float *gp = g + c * out_size;
        const int64_t *ip = ind + c * out_size;
        memset(o, 0, sizeof(float) * (size_t)in_size);
        for (idx j = 0; j < out_size; j++) o[ip[j]] += gp[j];
    }
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

void avg_pool2d_f32(const float *x, float *y, idx planes, const idx *p, int include_pad, double divisor,
                    int nt) {
    idx H = p[0], W = p[1], OH = p[2], OW = p[3];
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < planes; c++) {
        const float *xp = x + c * H * W;
        float *yp = y + c * OH * OW;
        for (idx oh = 0; oh < OH; oh++)
            for (idx ow = 0; ow < OW; ow++) {
                idx h0, h1, w0, w1;
                float d = avg_window(p, oh, ow, include_pad, divisor, &h0, &h1, &w0, &w1);
                if (h0 >= h1 || w0 >= w1) {
                    yp[oh * OW + ow] = 0.0f;
                    continue;
                }
                float s = 0.0f;
                for (idx ih = h0; ih < h1; ih++)
                    for (idx iw = w0; iw < w1; iw++) s += xp[ih * W + iw];
                yp[oh * OW + ow] = s / d;
            }
    }
}

void avg_pool2d_backward_f32(const float *g, float *gx, idx planes, const idx *p, int include_pad,
                             double divisor, int nt) {
    idx H = p[0], W = p[1], OH = p[2], OW = p[3];
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < planes; c++) {
        float *o = gx + c * H * W;
        const float *gp = g + c * OH * OW;
        memset(o, 0, sizeof(float) * (size_t)(H * W));
        for (idx oh = 0; oh < OH; oh++)
            for (idx ow = 0; ow < OW; ow++) {
                idx h0, h1, w0, w1;
                float d = avg_window(p, oh, ow, include_pad, divisor, &h0, &h1, &w0, &w1);
                float delta = gp[oh * OW + ow] / d;
                for (idx ih = h0; ih < h1; ih++)
                    for (idx iw = w0; iw < w1; iw++) o[ih * W + iw] += delta;
            }
    }
}

/* adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)) */
static inline idx ad_start(idx o, idx out, idx in) { return (o * in) / out; }
static inline idx ad_end(idx o, idx out, idx in) { return ((o + 1) * in + out - 1) / out; }

void adaptive_avg_pool2d_f32(const float *x, float *y, idx planes, idx H, idx W, idx OH, idx OW, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < planes; c++) {
        const float *xp = x + c * H * W;
        float *yp = y + c * OH * OW;
        for (idx oh = 0; oh < OH; oh++) {
            idx h0 = ad_start(oh, OH, H), h1 = ad_end(oh, OH, H);
            for (idx ow = 0; ow < OW; ow++) {
                idx w0 = ad_start(ow, OW, W), w1 = ad_end(ow, OW, W);
                float s = 0.0f;
                for (idx ih = h0; ih < h1; ih++)
                    for (idx iw = w0; iw < w1; iw++) s += xp[ih * W + iw];
                yp[oh * OW + ow] = s / (float)(h1 - h0) / (float)(w1 - w0);
            }
        }
    }
}

void adaptive_avg_pool2d_backward_f32(const float *g, float *gx, idx planes, idx H, idx W, idx OH, idx OW,
                                      int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < planes; c++) {
        float *o = gx + c * H * W;
        const float *gp = g + c * OH * OW;
        memset(o, 0, sizeof(float) * (size_t)(H * W));
        for (idx oh = 0; oh < OH; oh++) {
            idx h0 = ad_start(oh, OH, H), h1 = ad_end(oh, OH, H);
            for (idx ow = 0; ow < OW; ow++) {
                idx w0 = ad_start(ow, OW, W), w1 = ad_end(ow, OW, W);
                float delta = gp[oh * OW + ow] / (float)(h1 - h0) / (float)(w1 - w0);
                for (idx ih = h0; ih < h1; ih++)
                    for (idx iw = w0; iw < w1; iw++) o[ih * W + iw] += delta;
            }
        }
    }
}
