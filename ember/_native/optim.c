/* The optimizers' per-parameter updates on C-contiguous float32 data, one loop per parameter, in the
 * float32 order of operations of the NumPy kernels in ember/_ops/optim.py (torch's order): Python-number
 * hyperparameters arrive as doubles and are rounded to float32 once, as NumPy rounds a Python float
 * beside a float32 array.
 */
#include "common.h"

/* SGD: g = -g if maximize; g = p wd + g; buf = g (first step) or buf momentum + g (1 - dampening);
 * g = buf momentum + g if nesterov else buf; p = p + g (-lr). buf is NULL when momentum is 0. */
void sgd_f32(float *p, const float *g, float *buf, idx n, int has_buf, double weight_decay, double momentum,
             double lr, double dampening, int nesterov, int maximize, int nt) {
    float wd = (float)weight_decay, mom = (float)momentum, neglr = (float)(-lr);
    float damp1 = (float)(1.0 - dampening);
    int damp = dampening != 0.0;
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) {
        float gi = maximize ? -g[i] : g[i];
        if (weight_decay != 0.0) gi = p[i] * wd + gi;
        if (buf) {
            float b;
            if (!has_buf) b = gi;
            else b = buf[i] * mom + (damp ? gi * damp1 : gi);
            buf[i] = b;
            gi = nesterov ? b * mom + gi : b;
        }
        p[i] = p[i] + gi * neglr;
    }
}

/* Adam/AdamW (NumPy kernel `adam_step`): lerp of the first moment, second moment v beta2 + (g (1-beta2)) g,
 * denom = sqrt(v or max(vmax, v)) / bc2_sqrt + eps, p = p + (m (-step_size)) / denom. */
void adam_f32(float *p, const float *g, float *m, float *v, float *vmax, idx n, double beta1, double beta2,
              double lr, double weight_decay, int decoupled, double eps, double step_size, double bc2_sqrt,
              int maximize, int nt) {
    float w = (float)(1.0 - beta1), b2 = (float)beta2, c2 = (float)(1.0 - beta2);
    float one_w = 1.0f - w, fe = (float)eps, bc = (float)bc2_sqrt, neg = (float)(-step_size);
    float wd = (float)weight_decay, decay = (float)(1.0 - lr * weight_decay);
    int l2 = weight_decay != 0.0 && !decoupled, dec = weight_decay != 0.0 && decoupled;
    int small_w = fabsf(w) < 0.5f;
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < n; i++) {
        float gi = maximize ? -g[i] : g[i];
        float pi = p[i];
        if (dec) pi = pi * decay;
        if (l2) gi = pi * wd + gi;
        float d = gi - m[i];
        float mi = small_w ? m[i] + d * w : gi - d * one_w;
        float vi = v[i] * b2 + (gi * c2) * gi;
        m[i] = mi;
        v[i] = vi;
        float s = vi;
        if (vmax) {
            s = vmax[i] > vi || vmax[i] != vmax[i] ? vmax[i] : vi;
            vmax[i] = s;
        }
        float den = sqrtf(s) / bc + fe;
        p[i] = pi + (mi * neg) / den;
    }
}
