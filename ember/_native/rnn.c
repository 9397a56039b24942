/* The pointwise part of one LSTM time step, forward and backward, on C-contiguous float32 rows
 * (ember/_ops/rnn.py's `_fwd_lstm` / `_bwd_lstm`, without projection): the step's matmul stays NumPy's
 * (BLAS), and everything between two matmuls, which NumPy does in ~20 calls over small arrays, is one loop.
 *
 * The workspace row of a step is NOTE [ Workspace output ] in rnn.py: gates i f g o (4H, after their
 * activations), c (H), tanh(c) (H), c_prev (H), h_prev (H); `W` is its row width (7H + H).
 * The forward's activations use em_expf (sigmoid, as 1 / (1 + exp(-x)), NumPy's formula) and em_tanhf;
 * those may differ from NumPy's in the last bit, as torch's own (oneDNN's) differ from both. The backward is
 * products and sums only, in NumPy's order, so it equals the NumPy kernel to the bit.
 */
#include "common.h"

/* tanh for float32 results, accurate to float32 at every magnitude: a Taylor polynomial near 0 (where
 * 1 - 2 / (exp(2|x|) + 1) loses relative precision), else that formula in double. */
static inline float em_tanhf(float xf) {
    double x = (double)xf, a = x < 0 ? -x : x;
    double z = x * x;
    double small = x * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0))));
    double t = 1.0 - 2.0 / (em_exp(2.0 * a) + 1.0);
    t = x < 0 ? -t : t;
    double y = a < 0.0625 ? small : t;
    return xf != xf ? xf : (float)y;
}

static inline float sigmoidf(float x) { return 1.0f / (1.0f + em_expf(-x)); }

/* gh: (b, 4H) h_prev @ W_hh^T (b_hh not yet added; NULL bias: none); xw: (b, 4H) input projection rows;
 * h, c: (b, H) state rows, updated; ws: the step's workspace rows; out: (b, H) output rows. */
void lstm_step_f32(const float *gh, const float *bias, const float *xw, float *h, float *c, float *ws,
                   float *out, idx b, idx H, idx W) {
    for (idx r = 0; r < b; r++) {
        const float *ghr = gh + r * 4 * H, *xr = xw + r * 4 * H;
        float *wr = ws + r * W, *hr = h + r * H, *cr = c + r * H, *outr = out + r * H;
        float *gates = wr, *cs = wr + 4 * H, *tcs = wr + 5 * H, *cprev = wr + 6 * H, *hprev = wr + 7 * H;
        for (idx j = 0; j < H; j++) {
            hprev[j] = hr[j];
            cprev[j] = cr[j];
        }
        if (bias) {
            for (idx k = 0; k < 4 * H; k++) gates[k] = (ghr[k] + bias[k]) + xr[k];
        } else {
            for (idx k = 0; k < 4 * H; k++) gates[k] = ghr[k] + xr[k];
        }
        for (idx k = 0; k < 2 * H; k++) gates[k] = sigmoidf(gates[k]);
        for (idx k = 2 * H; k < 3 * H; k++) gates[k] = em_tanhf(gates[k]);
        for (idx k = 3 * H; k < 4 * H; k++) gates[k] = sigmoidf(gates[k]);
        for (idx j = 0; j < H; j++) {
            float cn = gates[H + j] * cprev[j];
            float ig = gates[j] * gates[2 * H + j];
            cn = cn + ig;
            cs[j] = cn;
            cr[j] = cn;
        }
        for (idx j = 0; j < H; j++) tcs[j] = em_tanhf(cs[j]);
        for (idx j = 0; j < H; j++) {
            float hn = gates[3 * H + j] * tcs[j];
            hr[j] = hn;
            outr[j] = hn;
        }
    }
}

/* dh, dc: (b, H) carried gradients (dh read, dc updated); dout: (b, H) output-gradient rows; ws: the
 * step's workspace rows; dG: (b, 4H) gate gradients (written). dh_next = dG @ W_hh is NumPy's. */
void lstm_step_backward_f32(const float *dh, float *dc, const float *dout, const float *ws, float *dG, idx b,
                            idx H, idx W) {
    for (idx r = 0; r < b; r++) {
        const float *wr = ws + r * W, *dhr = dh + r * H, *dor = dout + r * H;
        const float *i = wr, *f = wr + H, *gg = wr + 2 * H, *o = wr + 3 * H;
        const float *tc = wr + 5 * H, *cp = wr + 6 * H;
        float *dcr = dc + r * H, *d = dG + r * 4 * H;
        #pragma omp simd  /* (the arrays do not overlap; GCC cannot prove it for this many pointers) */
        for (idx j = 0; j < H; j++) {
            float dht = dhr[j] + dor[j];
            float dct = dcr[j] + (dht * o[j]) * (1.0f - tc[j] * tc[j]);
            d[j] = (dct * gg[j]) * (i[j] * (1.0f - i[j]));
            d[H + j] = (dct * cp[j]) * (f[j] * (1.0f - f[j]));
            d[2 * H + j] = (dct * i[j]) * (1.0f - gg[j] * gg[j]);
            d[3 * H + j] = (dht * tc[j]) * (o[j] * (1.0f - o[j]));
            dcr[j] = dct * f[j];
        }
    }
}
