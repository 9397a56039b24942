/* Pointwise activations on C-contiguous float32 data, forward and backward, each one loop, in the
 * float32 order of operations of the NumPy kernels in ember/_ops/nn_ops.py (so both paths agree to the
 * bit wherever exp/erf/tanh round the same): gelu (erf and tanh forms), silu, relu's backward and clamp.
 */
#include "common.h"

#define SQRT1_2 0.7071067811865476f
#define INV_SQRT_2PI 0.3989422804014327f
#define GELU_K 0.7978845608028654f
#define GELU_C 0.044715f

void gelu_f32(const float *x, float *y, idx n, int tanh_, int nt) {
    if (tanh_) {
        EM_PARALLEL_FOR(nt)
        for (idx i = 0; i < n; i++) {
            float w = x[i];
            float inner = GELU_K * (w + GELU_C * w * w * w);
            y[i] = 0.5f * w * (1.0f + (float)em_tanh((double)inner));
        }
    } else {
        EM_PARALLEL_FOR(nt)
        for (idx i = 0; i < n; i++) {
            float w = x[i];
            float e = (float)em_erf_single((double)(w * SQRT1_2));
            y[i] = 0.5f * w * (1.0f + e);
        }
    }
}

void gelu_backward_f32(const float *g, const float *x, float *gx, idx n, int tanh_, int nt) {
    if (tanh_) {
        EM_PARALLEL_FOR(nt)
        for (idx i = 0; i < n; i++) {
            float w = x[i];
            float inner = GELU_K * (w + GELU_C * w * w * w);
            float t = (float)em_tanh((double)inner);
            float d = 0.5f * (1.0f + t) + 0.5f * w * (1.0f - t * t) * GELU_K * (1.0f + 3.0f * GELU_C * w * w);
            gx[i] = g[i] * d;
        }
    } else {
        EM_PARALLEL_FOR(nt)
        for (idx i = 0; i < n; i++) {
            float w = x[i];
            float cdf = 0.5f * (1.0f + (float)em_erf_single((double)(w * SQRT1_2)));
            float d = cdf + w * em_expf(-0.5f * w * w) * INV_SQRT_2PI;
            gx[i] = g[i] * d;
        }
    }
}

/* silu: x / (1 + exp(-x)), torch's formula: below about -88, exp(-x) is inf and the result -0, as torch's
 * (x sigmoid(x) with sigmoid from exp(-|x|) gave a subnormal there instead), and it is one division where
 * that form took two and a select. */
void silu_f32(const float *x, float *y, idx n, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) {
        float w = x[i];
        y[i] = w / (1.0f + em_expf(-w));
    }
}

/* silu's gradient, torch's silu_backward: g s (1 + x (1 - s)) with s = 1 / (1 + exp(-x)), in that order. */
void silu_backward_f32(const float *g, const float *x, float *gx, idx n, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) {
        float w = x[i];
        float s = 1.0f / (1.0f + em_expf(-w));
        gx[i] = g[i] * s * (1.0f + w * (1.0f - s));
    }
}

/* relu's backward (N4), torch's threshold_backward with threshold 0 (`out <= 0 ? 0 : g`: a NaN output passes
 * g), in one pass over float32 g and out. (relu itself is clamp_f32 below with only a lower bound.) */
void threshold_backward_f32(const float *g, const float *out, float *gx, idx n, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) gx[i] = out[i] <= 0.0f ? 0.0f : g[i];
}

/* clamp of float32 data to [lo, hi] (K3; either bound may be absent), as the NumPy kernel computes it,
 * minimum(maximum(x, lo), hi): NaN stays NaN, and lo > hi gives hi. One pass instead of two. */
void clamp_f32(const float *x, float *y, idx n, float lo, float hi, int has_lo, int has_hi, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) {
        float v = x[i];
        if (has_lo) v = v >= lo || v != v ? v : lo;
        if (has_hi) v = v <= hi || v != v ? v : hi;
        y[i] = v;
    }
}
