/* layer_norm over the trailing dims (flattened to `n` per row) of C-contiguous float32 data, forward and
 * backward, in the order of operations of the NumPy kernel (ember/_ops/nn_ops.py `_norm_forward`):
 * mean and biased variance per row (summed in double, two passes over the row while it is in cache),
 * rstd = 1 / sqrt(var + eps), y = (x - mean) rstd w + b in float32.
 */
#define EM_KERNEL_POOL
#include "common.h"

void layer_norm_f32(const float *x, const float *w, const float *b, float *y, float *mean, float *rstd,
                    idx rows, idx n, double eps, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        double s = 0.0, v = 0.0;
        #pragma omp simd reduction(+:s)
        for (idx j = 0; j < n; j++) s += xr[j];
        float m = (float)(s / (double)n);
        #pragma omp simd reduction(+:v)
        for (idx j = 0; j < n; j++) {
            double c = (double)(xr[j] - m);
            v += c * c;
        }
        float rs = (float)(1.0 / sqrt(v / (double)n + eps));
        mean[r] = m;
        rstd[r] = rs;
        if (w && b) {
            for (idx j = 0; j < n; j++) yr[j] = (xr[j] - m) * rs * w[j] + b[j];
        } else if (w) {
            for (idx j = 0; j < n; j++) yr[j] = (xr[j] - m) * rs * w[j];
        } else if (b) {
            for (idx j = 0; j < n; j++) yr[j] = (xr[j] - m) * rs + b[j];
        } else {
            for (idx j = 0; j < n; j++) yr[j] = (xr[j] - m) * rs;
        }
    }
}

/* gx = rstd (h - mean(h) - xhat mean(h xhat)), h = g w, xhat = (x - mean) rstd; and, when w is given,
 * gw = sum over rows of g xhat, gb = sum over rows of g (column sums, split over threads by columns). */
void layer_norm_backward_f32(const float *g, const float *x, const float *mean, const float *rstd,
                             const float *w, float *gx, float *gw, float *gb, idx rows, idx n, int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < rows; r++) {
        const float *gr = g + r * n, *xr = x + r * n;
        float *o = gx + r * n;
        float m = mean[r], rs = rstd[r];
        double sh = 0.0, shx = 0.0;
        /* (with and without w as two loops: a `w ? g w : g` inside one loop kept it from vectorising, since
         * w may be NULL, and the backward took 3.2 ms on 4M floats where torch's takes 1.7) */
        if (w) {
            #pragma omp simd reduction(+:sh, shx)
            for (idx j = 0; j < n; j++) {
                float h = gr[j] * w[j];
                sh += h;
                shx += (double)(h * ((xr[j] - m) * rs));
            }
        } else {
            #pragma omp simd reduction(+:sh, shx)
            for (idx j = 0; j < n; j++) {
                sh += gr[j];
                shx += (double)(gr[j] * ((xr[j] - m) * rs));
            }
        }
        float mh = (float)(sh / (double)n), mhx = (float)(shx / (double)n);
        if (w) {
            for (idx j = 0; j < n; j++) o[j] = (gr[j] * w[j] - mh - ((xr[j] - m) * rs) * mhx) * rs;
        } else {
            for (idx j = 0; j < n; j++) o[j] = (gr[j] - mh - ((xr[j] - m) * rs) * mhx) * rs;
        }
    }
    if (!w) return;
    idx block = 256;
    idx nblocks = (n + block - 1) / block;
    EM_PARALLEL_FOR(nt)
    for (idx bi = 0; bi < nblocks; bi++) {
        idx c0 = bi * block, c1 = c0 + block < n ? c0 + block : n;
        double aw[256], ab[256];
        for (idx j = 0; j < c1 - c0; j++) aw[j] = ab[j] = 0.0;
        for (idx r = 0; r < rows; r++) {
            const float *gr = g + r * n + c0, *xr = x + r * n + c0;
            float m = mean[r], rs = rstd[r];
            #pragma omp simd
            for (idx j = 0; j < c1 - c0; j++) {
                aw[j] += (double)(gr[j] * ((xr[j] - m) * rs));
                ab[j] += gr[j];
            }
        }
        for (idx j = 0; j < c1 - c0; j++) {
            gw[c0 + j] = (float)aw[j];
            gb[c0 + j] = (float)ab[j];
        }
    }
}

/* batch_norm in training mode over (N, C, S) C-contiguous float32 (S: the spatial size), per channel: mean
 * and biased variance (double, two passes), rstd = 1 / sqrt(var + eps), and torch's form of the output,
 * y = x alpha + beta with alpha = rstd w, beta = -mean alpha + b (the NumPy kernel's order). Channels are
 * split over ember's pool's threads (NOTE [ Kernels on ember's pool ] in common.h). var gets the biased
 * variance, from which the caller updates the running statistics. */
typedef struct {
    const float *x, *w, *b, *g, *cmean, *crstd;
    float *y, *mean, *rstd, *var, *gw, *gb;
    idx N, C, S;
    double eps;
} bn_ctx;

static void bn_body(void *ctx, idx lo, idx hi) {
    const bn_ctx *k = ctx;
    idx N = k->N, C = k->C, S = k->S;
    for (idx c = lo; c < hi; c++) {
        double s = 0.0, v = 0.0, cnt = (double)N * (double)S;
        for (idx n = 0; n < N; n++) {
            const float *xr = k->x + (n * C + c) * S;
            #pragma omp simd reduction(+:s)
            for (idx j = 0; j < S; j++) s += xr[j];
        }
        float m = (float)(s / cnt);
        for (idx n = 0; n < N; n++) {
            const float *xr = k->x + (n * C + c) * S;
            #pragma omp simd reduction(+:v)
            for (idx j = 0; j < S; j++) {
                double d = (double)(xr[j] - m);
                v += d * d;
            }
        }
        float vf = (float)(v / cnt);
        float rs = (float)(1.0 / sqrt((double)vf + k->eps));
        float alpha = k->w ? rs * k->w[c] : rs;
        float beta = -m * alpha;
        if (k->b) beta = beta + k->b[c];
        k->mean[c] = m;
        k->rstd[c] = rs;
        k->var[c] = vf;
        for (idx n = 0; n < N; n++) {
            const float *xr = k->x + (n * C + c) * S;
            float *yr = k->y + (n * C + c) * S;
            for (idx j = 0; j < S; j++) yr[j] = xr[j] * alpha + beta;
        }
    }
}

void batch_norm_f32(const float *x, const float *w, const float *b, float *y, float *mean, float *rstd,
                    float *var, idx N, idx C, idx S, double eps, int nt) {
    bn_ctx k = {.x = x, .w = w, .b = b, .y = y, .mean = mean, .rstd = rstd, .var = var, .N = N, .C = C,
                .S = S, .eps = eps};
    em_for(bn_body, &k, C, nt, 1);
}

/* Its backward in training mode: with xhat = (x - mean) rstd, sg = sum(g), sgx = sum(g xhat) per channel,
 * gx = (g - sg / n - xhat sgx / n) rstd w, gw = sgx, gb = sg (gw, gb NULL without a weight). */
static void bn_backward_body(void *ctx, idx lo, idx hi) {
    const bn_ctx *k = ctx;
    idx N = k->N, C = k->C, S = k->S;
    for (idx c = lo; c < hi; c++) {
        float m = k->cmean[c], rs = k->crstd[c];
        double sg = 0.0, sgx = 0.0, cnt = (double)N * (double)S;
        for (idx n = 0; n < N; n++) {
            const float *gr = k->g + (n * C + c) * S, *xr = k->x + (n * C + c) * S;
            #pragma omp simd reduction(+:sg, sgx)
            for (idx j = 0; j < S; j++) {
                sg += gr[j];
                sgx += (double)(gr[j] * ((xr[j] - m) * rs));
            }
        }
        float mg = (float)(sg / cnt), mgx = (float)(sgx / cnt);
        float scale = k->w ? rs * k->w[c] : rs;
        for (idx n = 0; n < N; n++) {
            const float *gr = k->g + (n * C + c) * S, *xr = k->x + (n * C + c) * S;
            float *o = k->y + (n * C + c) * S;
            for (idx j = 0; j < S; j++) o[j] = ((gr[j] - mg) - ((xr[j] - m) * rs) * mgx) * scale;
        }
        if (k->gw) {
            k->gw[c] = (float)sgx;
            k->gb[c] = (float)sg;
        }
    }
}

void batch_norm_backward_f32(const float *g, const float *x, const float *w, const float *mean,
                             const float *rstd, float *gx, float *gw, float *gb, idx N, idx C, idx S,
                             int nt) {
    bn_ctx k = {.x = x, .w = w, .g = g, .cmean = mean, .crstd = rstd, .y = gx, .gw = gw, .gb = gb, .N = N,
                .C = C, .S = S};
    em_for(bn_backward_body, &k, C, nt, 1);
}

/* group_norm over (N, C, S) C-contiguous float32 (S: the spatial size) with G groups (K3): one group's
 * elements, (C / G) x S, are one contiguous row, normalized as layer_norm's rows are (mean and biased
 * variance in double, rstd = 1 / sqrt(var + eps)); then y = (x - mean) rstd w[c] + b[c] per channel (the
 * NumPy kernel's order). mean and rstd are (N, G). Rows are split over threads. */
void group_norm_f32(const float *x, const float *w, const float *b, float *y, float *mean, float *rstd,
                    idx N, idx C, idx S, idx G, double eps, int nt) {
    idx cg = C / G, n = cg * S;
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < N * G; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        double s = 0.0, v = 0.0;
        #pragma omp simd reduction(+:s)
        for (idx j = 0; j < n; j++) s += xr[j];
        float m = (float)(s / (double)n);
        #pragma omp simd reduction(+:v)
        for (idx j = 0; j < n; j++) {
            double c = (double)(xr[j] - m);
            v += c * c;
        }
        float rs = (float)(1.0 / sqrt(v / (double)n + eps));
        mean[r] = m;
        rstd[r] = rs;
        idx c0 = (r % G) * cg;
        for (idx k = 0; k < cg; k++) {
            const float *xc = xr + k * S;
            float *yc = yr + k * S;
            float wc = w ? w[c0 + k] : 1.0f, bc = b ? b[c0 + k] : 0.0f;
            if (w && b) {
                for (idx j = 0; j < S; j++) yc[j] = (xc[j] - m) * rs * wc + bc;
            } else if (w) {
                for (idx j = 0; j < S; j++) yc[j] = (xc[j] - m) * rs * wc;
            } else if (b) {
                for (idx j = 0; j < S; j++) yc[j] = (xc[j] - m) * rs + bc;
            } else {
                for (idx j = 0; j < S; j++) yc[j] = (xc[j] - m) * rs;
            }
        }
    }
}

/* Its backward: per group, h = g w[c], xhat = (x - mean) rstd, gx = (h - mean(h) - xhat mean(h xhat)) rstd;
 * and, with a weight, per channel gw = sum over N and S of g xhat, gb = sum of g (in double). */
void group_norm_backward_f32(const float *g, const float *x, const float *mean, const float *rstd,
                             const float *w, float *gx, float *gw, float *gb, idx N, idx C, idx S, idx G,
                             int nt) {
    idx cg = C / G, n = cg * S;
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < N * G; r++) {
        const float *gr = g + r * n, *xr = x + r * n;
        float *o = gx + r * n;
        float m = mean[r], rs = rstd[r];
        idx c0 = (r % G) * cg;
        double sh = 0.0, shx = 0.0;
        for (idx k = 0; k < cg; k++) {
            const float *gc = gr + k * S, *xc = xr + k * S;
            float wc = w ? w[c0 + k] : 1.0f;
            int has_w = w != 0;
            #pragma omp simd reduction(+:sh, shx)
            for (idx j = 0; j < S; j++) {
                float h = has_w ? gc[j] * wc : gc[j];
                float xh = (xc[j] - m) * rs;
                sh += h;
                shx += (double)(h * xh);
            }
        }
        float mh = (float)(sh / (double)n), mhx = (float)(shx / (double)n);
        for (idx k = 0; k < cg; k++) {
            const float *gc = gr + k * S, *xc = xr + k * S;
            float *oc = o + k * S;
            float wc = w ? w[c0 + k] : 1.0f;
            int has_w = w != 0;
            for (idx j = 0; j < S; j++) {
                float h = has_w ? gc[j] * wc : gc[j];
                float xh = (xc[j] - m) * rs;
                oc[j] = (h - mh - xh * mhx) * rs;
            }
        }
    }
    if (!gw) return;
    EM_PARALLEL_FOR(nt)
    for (idx c = 0; c < C; c++) {
        double sg = 0.0, sgx = 0.0;
        for (idx b = 0; b < N; b++) {
            idx r = b * G + c / cg;
            float m = mean[r], rs = rstd[r];
            const float *gc = g + (b * C + c) * S, *xc = x + (b * C + c) * S;
            #pragma omp simd reduction(+:sg, sgx)
            for (idx j = 0; j < S; j++) {
                sg += gc[j];
                sgx += (double)(gc[j] * ((xc[j] - m) * rs));
            }
        }
        gw[c] = (float)sgx;
        gb[c] = (float)sg;
    }
}

/* batch_norm in eval mode, and any per-channel affine map of (N, C, S) C-contiguous float32 (K3):
 * y = x alpha[c] + beta[c], alpha and beta computed by the caller from the running statistics exactly as the
 * NumPy kernel computes them, so both paths give the same bits; one pass instead of two. */
void channel_affine_f32(const float *x, const float *alpha, const float *beta, float *y, idx N, idx C, idx S,
                        int nt) {
    EM_PARALLEL_FOR(nt)
    for (idx r = 0; r < N * C; r++) {
        float a = alpha[r % C], b = beta[r % C];
        const float *xr = x + r * S;
        float *yr = y + r * S;
        for (idx j = 0; j < S; j++) yr[j] = xr[j] * a + b;
    }
}
