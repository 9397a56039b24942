/* The optimizers' per-parameter updates on C-contiguous float32 data, one loop per parameter, in the
 * float32 order of operations of the NumPy kernels in ember/_ops/optim.py (torch's order): Python-number
 * hyperparameters arrive as doubles and are rounded to float32 once, as NumPy rounds a Python float
 * beside a float32 array.
 */
#include "common.h"

/* NOTE [ No masked stores ]
 * A store under a condition (`if (buf) buf[i] = ...`) vectorises into masked stores, and on the AMD EPYC
 * these machines run that made the Adam loop 7x slower than torch's (8 ms for 1M floats instead of 1.1).
 * So each update is a static inline loop over a range whose optional-buffer flag is a constant at each of
 * its call sites (GCC compiles one loop per value, storing unconditionally), and the OpenMP loop runs over
 * fixed chunks and picks the variant per chunk: the flag cannot live inside the parallel loop, where
 * OpenMP's outlining would turn it back into a variable. Every element is computed by the same code
 * whatever the chunking, so results do not depend on it or on the thread count. */
#define CHUNK 16384

static inline idx chunk_end(idx c, idx n) { return (c + 1) * CHUNK < n ? (c + 1) * CHUNK : n; }

/* SGD: g = -g if maximize; g = p wd + g; buf = g (first step) or buf momentum + g (1 - dampening);
 * g = buf momentum + g if nesterov else buf; p = p + g (-lr). buf is NULL when momentum is 0. */
static inline void sgd_range(float *p, const float *g, float *buf, idx lo, idx hi, const int with_buf,
                             int has_buf, int decay, float wd, float mom, float neglr, float damp1, int damp,
                             int nesterov, int maximize) {
    for (idx i = lo; i < hi; i++) {
        float gi = maximize ? -g[i] : g[i];
        if (decay) gi = p[i] * wd + gi;
        if (with_buf) {
            float b;
            if (!has_buf) b = gi;
            else b = buf[i] * mom + (damp ? gi * damp1 : gi);
            buf[i] = b;
            gi = nesterov ? b * mom + gi : b;
        }
        p[i] = p[i] + gi * neglr;
    }
}

void sgd_f32(float *p, const float *g, float *buf, idx n, int has_buf, double weight_decay, double momentum,
             double lr, double dampening, int nesterov, int maximize, int nt) {
    float wd = (float)weight_decay, mom = (float)momentum, neglr = (float)(-lr);
    float damp1 = (float)(1.0 - dampening);
    int damp = dampening != 0.0, decay = weight_decay != 0.0;
    idx chunks = (n + CHUNK - 1) / CHUNK;
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < chunks; c++) {
        if (buf)
            sgd_range(p, g, buf, c * CHUNK, chunk_end(c, n), 1, has_buf, decay, wd, mom, neglr, damp1, damp,
                      nesterov, maximize);
        else
            sgd_range(p, g, buf, c * CHUNK, chunk_end(c, n), 0, has_buf, decay, wd, mom, neglr, damp1, damp,
                      nesterov, maximize);
    }
}

/* Adam/AdamW (NumPy kernel `adam_step`): lerp of the first moment, second moment v beta2 + (g (1-beta2)) g,
 * denom = sqrt(v or max(vmax, v)) / bc2_sqrt + eps, p = p + (m (-step_size)) / denom. */
static inline void adam_range(float *p, const float *g, float *m, float *v, float *vmax, idx lo, idx hi,
                              const int amsgrad, float w, float one_w, int small_w, float b2, float c2,
                              float fe, float bc, float neg, float wd, float decay, int l2, int dec,
                              int maximize) {
    for (idx i = lo; i < hi; i++) {
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
        if (amsgrad) {
            s = vmax[i] > vi || vmax[i] != vmax[i] ? vmax[i] : vi;
            vmax[i] = s;
        }
        float den = sqrtf(s) / bc + fe;
        p[i] = pi + (mi * neg) / den;
    }
}

void adam_f32(float *p, const float *g, float *m, float *v, float *vmax, idx n, double beta1, double beta2,
              double lr, double weight_decay, int decoupled, double eps, double step_size, double bc2_sqrt,
              int maximize, int nt) {
    float w = (float)(1.0 - beta1), b2 = (float)beta2, c2 = (float)(1.0 - beta2);
    float one_w = 1.0f - w, fe = (float)eps, bc = (float)bc2_sqrt, neg = (float)(-step_size);
    float wd = (float)weight_decay, decay = (float)(1.0 - lr * weight_decay);
    int l2 = weight_decay != 0.0 && !decoupled, dec = weight_decay != 0.0 && decoupled;
    int small_w = fabsf(w) < 0.5f;
    idx chunks = (n + CHUNK - 1) / CHUNK;
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < chunks; c++) {
        if (vmax)
            adam_range(p, g, m, v, vmax, c * CHUNK, chunk_end(c, n), 1, w, one_w, small_w, b2, c2, fe, bc,
                       neg, wd, decay, l2, dec, maximize);
        else
            adam_range(p, g, m, v, vmax, c * CHUNK, chunk_end(c, n), 0, w, one_w, small_w, b2, c2, fe, bc,
                       neg, wd, decay, l2, dec, maximize);
    }
}

/* NOTE [ One Adam loop over all parameters ]
 * An Adam step over a model's parameters was one call per parameter: a small model's 22 tensors (biases and
 * layer norms of 128 floats beside 128k-float embeddings) cost ~15 us of Python each, and only the tensors
 * above the parallel size used the second thread. adam_many_f32 updates a list of parameters in one call:
 * their chunks of CHUNK floats are numbered one after another, and the team takes the chunks of all of them
 * in one parallel loop. Each element gets adam_range's arithmetic, with its parameter's own step size and
 * bias correction (steps may differ per parameter), so the result is the same bits as one adam_f32 call (or
 * the NumPy kernel) per parameter, whatever the thread count. */
void adam_many_f32(float *const *p, float *const *g, float *const *m, float *const *v, float *const *vmax,
                   const idx *n, idx count, const double *step_size, const double *bc2_sqrt, double beta1,
                   double beta2, double lr, double weight_decay, int decoupled, double eps, int maximize,
                   int nt) {
    float w = (float)(1.0 - beta1), b2 = (float)beta2, c2 = (float)(1.0 - beta2);
    float one_w = 1.0f - w, fe = (float)eps;
    float wd = (float)weight_decay, decay = (float)(1.0 - lr * weight_decay);
    int l2 = weight_decay != 0.0 && !decoupled, dec = weight_decay != 0.0 && decoupled;
    int small_w = fabsf(w) < 0.5f;
    idx *first = malloc((size_t)(count + 1) * sizeof(idx));  /* first[i]: parameter i's first chunk */
    if (!first)
        return;
    first[0] = 0;
    for (idx i = 0; i < count; i++)
        first[i + 1] = first[i] + (n[i] + CHUNK - 1) / CHUNK;
    idx chunks = first[count];
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < chunks; c++) {
        idx lo_i = 0, hi_i = count;  /* the parameter of chunk c: first[i] <= c < first[i + 1] */
        while (hi_i - lo_i > 1) {
            idx mid = (lo_i + hi_i) / 2;
            if (first[mid] <= c) lo_i = mid; else hi_i = mid;
        }
        idx i = lo_i, lo = (c - first[i]) * CHUNK, hi = lo + CHUNK < n[i] ? lo + CHUNK : n[i];
        float bc = (float)bc2_sqrt[i], neg = (float)(-step_size[i]);
        if (vmax)
            adam_range(p[i], g[i], m[i], v[i], vmax[i], lo, hi, 1, w, one_w, small_w, b2, c2, fe, bc, neg, wd,
                       decay, l2, dec, maximize);
        else
            adam_range(p[i], g[i], m[i], v[i], NULL, lo, hi, 0, w, one_w, small_w, b2, c2, fe, bc, neg, wd,
                       decay, l2, dec, maximize);
    }
    free(first);
}
