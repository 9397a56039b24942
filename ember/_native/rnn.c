/* A whole LSTM layer in one direction, forward and backward, as one call each, on C-contiguous float32 rows
 * (ember/_ops/rnn.py's `_fwd_lstm` / `_bwd_lstm`, without projection): every time step's recurrent product
 * and the gate math between two products, on the kernels' threads (NOTE [ One call per LSTM layer ]).
 *
 * The workspace row of a step is NOTE [ Workspace output ] in rnn.py: gates i f g o (4H, after their
 * activations), c (H), tanh(c) (H), c_prev (H), h_prev (H); `W` is its row width (7H + H).
 * The forward's activations use em_expf (sigmoid, as 1 / (1 + exp(-x)), NumPy's formula) and em_tanhf;
 * those may differ from NumPy's in the last bit, as torch's own (oneDNN's) differ from both. The backward's
 * pointwise part is products and sums only, in NumPy's order, so it equals the NumPy kernel's to the bit.
 */
#include "common.h"
#include <sched.h>
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

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

/* ---- the whole layer as one call ---------------------------------------------------------------------------
 *
 * NOTE [ One call per LSTM layer ]
 * lstm_layer_f32 / lstm_layer_backward_f32 run every time step of one layer in one direction: the recurrent
 * product of each step (h @ W_hh^T forward, dG @ W_hh backward) with the gate math between them, where the
 * per-step kernels before them made a NumPy matmul call and a ctypes call per step. Two things make it pay:
 * - The recurrent weight is packed once per call into panels of NR output columns (K x NR floats, row k of
 *   a panel contiguous), which the register-blocked micro-kernel `panel_mm` streams: OpenBLAS's small-M
 *   GEMM (20 x 256 x 1024) ran at ~45 GMAC/s here (it packs its operand at every call) where large ones
 *   run at ~120.
 * - With nt > 1 threads, one OpenMP parallel region spans the whole time loop, and a step's work is split
 *   by hidden units into chunks of NR units (NOTE [ Claimed chunks ]). Forward, a chunk is its units' 4
 *   gate columns for all rows (its panels of W_hh^T) and their pointwise update; the next step's product
 *   reads every unit of h, so h alternates between two buffers (a chunk of step t + 1 never overwrites what
 *   a chunk of step t still reads). Backward, a chunk is its units' columns of dh_prev = dG @ W_hh (its
 *   panel of W_hh) followed by its units' gate gradients of the next step, which read only those columns;
 *   dG has its own rows per step. So one wait per step.
 * Every output element's sum runs over k in order as one chain of fused multiply-adds, whichever thread
 * computes it and however many threads there are: the result does not depend on the thread count, and the
 * plain-C fallback (fmaf, no vector unit) gives the same bits as the AVX2 and AVX-512 paths. It may differ
 * from NumPy's BLAS in the last bits, as torch's oneDNN layer does. The pointwise math is the per-step
 * kernels' (the NumPy code's order), to the bit. */

#if defined(__AVX512F__)
#define VL 16
typedef __m512 vf;
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VBCAST(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VZERO() _mm512_setzero_ps()
#elif defined(__AVX2__) && defined(__FMA__)
#define VL 8
typedef __m256 vf;
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VBCAST(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VZERO() _mm256_setzero_ps()
#else
#define VL 8  /* plain C: a "vector" is 8 floats in a struct, each lane one fmaf chain */
typedef struct { float v[8]; } vf;
static inline vf vload_(const float *p) { vf r; for (int i = 0; i < 8; i++) r.v[i] = p[i]; return r; }
static inline void vstore_(float *p, vf a) { for (int i = 0; i < 8; i++) p[i] = a.v[i]; }
static inline vf vbcast_(float x) { vf r; for (int i = 0; i < 8; i++) r.v[i] = x; return r; }
static inline vf vfma_(vf a, vf b, vf c) { for (int i = 0; i < 8; i++) c.v[i] = fmaf(a.v[i], b.v[i], c.v[i]); return c; }
#define VLOAD(p) vload_(p)
#define VSTORE(p, v) vstore_(p, v)
#define VBCAST(x) vbcast_(x)
#define VFMA(a, b, c) vfma_(a, b, c)
#define VZERO() vbcast_(0.0f)
#endif
#define NV 2          /* vectors per panel row */
#define NR (NV * VL)  /* columns per panel */
#define MR 12         /* rows per register block at most: MR x NV accumulators */

/* c[r][0:NR] = sum over k of a[r][k] p[k][0:NR], for MR_ rows r (a constant after inlining: the
 * accumulators stay in registers). */
static inline __attribute__((always_inline)) void mk_rows(int mr, const float *a, idx lda, const float *p,
                                                          idx K, float *c, idx ldc) {
    vf acc[MR][NV];
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = VZERO();
    for (idx k = 0; k < K; k++) {
        vf b[NV];
        for (int v = 0; v < NV; v++) b[v] = VLOAD(p + k * NR + v * VL);
        for (int r = 0; r < mr; r++) {
            vf x = VBCAST(a[r * lda + k]);
            for (int v = 0; v < NV; v++) acc[r][v] = VFMA(x, b[v], acc[r][v]);
        }
    }
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < NV; v++) VSTORE(c + r * ldc + v * VL, acc[r][v]);
}

/* c (m x NR, rows ldc apart) = a (m x K, rows lda apart) @ p (a K x NR panel), in blocks of at most MR rows
 * of about equal size (20 rows: two blocks of 10, not 8 + 8 + 4: a block of few rows has too few
 * accumulators to hide the FMA latency). */
static void panel_mm(const float *a, idx lda, idx m, const float *p, idx K, float *c, idx ldc) {
    idx blocks = (m + MR - 1) / MR;
    for (idx i = 0, r = 0; i < blocks; i++) {
        idx rows = (m - r) / (blocks - i);
        switch (rows) {
        case 12: mk_rows(12, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 11: mk_rows(11, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 10: mk_rows(10, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 9: mk_rows(9, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 8: mk_rows(8, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 7: mk_rows(7, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 6: mk_rows(6, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 5: mk_rows(5, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 4: mk_rows(4, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 3: mk_rows(3, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 2: mk_rows(2, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        case 1: mk_rows(1, a + r * lda, lda, p, K, c + r * ldc, ldc); break;
        default: break;
        }
        r += rows;
    }
}

/* NOTE [ Claimed chunks ]
 * A step's work is split into chunks of NR hidden units, and a thread claims a chunk by a compare-and-swap
 * on its counter (claimed[u] == p: chunk u is free in phase p), so each chunk of a phase is computed by
 * exactly one thread; each thread tries the chunks from its own share on (thread i of n from chunk
 * i chunks / n: on an idle machine every thread keeps its own chunks, and their weight panels stay in its
 * core's cache) and then the others'. After its chunks a thread waits for `done` to reach the phase's
 * total (the only synchronisation per step). A thread that is late (woken late, or descheduled on a
 * loaded machine) holds nobody up: the others take its chunks; only a chunk it holds while descheduled is
 * waited for. Waiting spins on `pause` (a step is tens of microseconds; a sleeping wait would cost a futex
 * wake per step), then yields the core after ~20k rounds. */
static int claim(idx *claimed, idx u, idx phase) {
    idx want = phase;
    return __atomic_load_n(&claimed[u], __ATOMIC_RELAXED) == phase &&
           __atomic_compare_exchange_n(&claimed[u], &want, phase + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static void finish(idx *done) { __atomic_add_fetch(done, 1, __ATOMIC_RELEASE); }

static void wait_done(idx *done, idx target) {
    for (long i = 0; __atomic_load_n(done, __ATOMIC_ACQUIRE) < target; i++) {
        if (i < 20000) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            sched_yield();
        }
    }
}

static int team_size(void) {
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

static int team_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static float *alloc_f32(idx n) {
    return (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
}

/* One forward step of chunk u (units [ja, jb)): its 4 gates' products into `tile` (4 x b x NR), then its
 * units' pointwise update from state `src` into `dst` (NOTE [ One call per LSTM layer ]). */
static void fwd_chunk(const float *xw, const float *pack, const float *bias, const float *src, float *dst,
                      float *c, float *ws, float *out, float *tile, idx u, idx s, idx b, idx B, idx H, idx W) {
    idx ja = u * NR, jb = ja + NR < H ? ja + NR : H;
    for (int g = 0; g < 4; g++)
        panel_mm(src, H, b, pack + (u * 4 + g) * H * NR, H, tile + g * B * NR, NR);
    /* `omp simd`: the arrays do not overlap, which GCC cannot prove for this many pointers (it left the cell
     * update scalar) */
    for (idx r = 0; r < b; r++) {
        const float *xr = xw + (s + r) * 4 * H, *hp = src + r * H;
        float *wr = ws + (s + r) * W, *cr = c + r * H, *hn = dst + r * H, *outr = out + (s + r) * H;
        float *gates = wr, *cs = wr + 4 * H, *tcs = wr + 5 * H, *cprev = wr + 6 * H, *hprev = wr + 7 * H;
        for (int g = 0; g < 4; g++) {
            const float *gh = tile + g * B * NR + r * NR - ja, *xg = xr + g * H;
            float *gt = gates + g * H;
            if (bias) {
                const float *bg = bias + g * H;
                #pragma omp simd
                for (idx j = ja; j < jb; j++) gt[j] = (gh[j] + bg[j]) + xg[j];
            } else {
                #pragma omp simd
                for (idx j = ja; j < jb; j++) gt[j] = gh[j] + xg[j];
            }
        }
        #pragma omp simd
        for (idx j = ja; j < jb; j++) gates[j] = sigmoidf(gates[j]);
        #pragma omp simd
        for (idx j = H + ja; j < H + jb; j++) gates[j] = sigmoidf(gates[j]);
        #pragma omp simd
        for (idx j = 2 * H + ja; j < 2 * H + jb; j++) gates[j] = em_tanhf(gates[j]);
        #pragma omp simd
        for (idx j = 3 * H + ja; j < 3 * H + jb; j++) gates[j] = sigmoidf(gates[j]);
        #pragma omp simd
        for (idx j = ja; j < jb; j++) {
            hprev[j] = hp[j];
            cprev[j] = cr[j];
            float cn = gates[H + j] * cr[j];
            float ig = gates[j] * gates[2 * H + j];
            cn = cn + ig;
            cs[j] = cn;
            cr[j] = cn;
        }
        #pragma omp simd
        for (idx j = ja; j < jb; j++) tcs[j] = em_tanhf(cs[j]);
        #pragma omp simd
        for (idx j = ja; j < jb; j++) {
            float v = gates[3 * H + j] * tcs[j];
            hn[j] = v;
            outr[j] = v;
        }
    }
    for (idx r = b; r < B; r++)  /* rows of sequences that ended (or have not started) */
        for (idx j = ja; j < jb; j++) dst[r * H + j] = src[r * H + j];
}

/* The forward of one layer, one direction, float32, no projection (rnn.py `_fwd_lstm`'s native path).
 * xw: (N, 4H) input projections with b_ih; w: (4H, H) W_hh row-major; bias: b_hh (4H) or NULL; h, c: (B, H)
 * h0 and c0 in, h_n and c_n out; ws: (N, W) workspace rows; out: (N, H) output rows; off, bs: each step's
 * first row and row count (NOTE [ Packed layout of a recurrent layer ]), T steps, walked backwards when
 * `reverse`; nt threads. Returns 0, or -1 when memory ran out (nothing written then). */
int lstm_layer_f32(const float *xw, const float *w, const float *bias, float *h, float *c, float *ws,
                   float *out, const idx *off, const idx *bs, idx T, int reverse, idx B, idx H, idx W, int nt) {
    idx chunks = (H + NR - 1) / NR, done = 0;
    float *pack = alloc_f32(chunks * 4 * H * NR);   /* panel (u, g): K = H rows of NR gate columns */
    float *hb = alloc_f32(2 * B * H);                /* h alternates between two buffers */
    float *tiles = alloc_f32(chunks * 4 * B * NR);   /* chunk u's products of a step */
    idx *claimed = (idx *)calloc((size_t)chunks, sizeof(idx));
    int failed = !pack || !hb || !tiles || !claimed;
    if (!failed && T > 0) {
#ifdef _OPENMP
        #pragma omp parallel num_threads(nt) if(nt > 1 && chunks > 1)
#endif
        {
            idx first = chunks * team_id() / team_size();
            for (idx step = 0; step < T; step++) {
                idx t = reverse ? T - 1 - step : step;
                const float *src = step == 0 ? h : hb + ((step + 1) & 1) * B * H;
                float *dst = hb + (step & 1) * B * H;
                for (idx i = 0; i < chunks; i++) {
                    idx u = (first + i) % chunks;
                    if (!claim(claimed, u, step))
                        continue;
                    if (step == 0)  /* pack the chunk's panels: W_hh^T's columns of its units, per gate */
                        for (int g = 0; g < 4; g++)
                            for (idx col = 0; col < NR; col++) {
                                float *p = pack + (u * 4 + g) * H * NR + col;
                                idx j = u * NR + col;
                                const float *wr = w + (g * H + j) * H;
                                for (idx k = 0; k < H; k++) p[k * NR] = j < H ? wr[k] : 0.0f;
                            }
                    fwd_chunk(xw, pack, bias, src, dst, c, ws, out, tiles + u * 4 * B * NR, u, off[t], bs[t], B,
                              H, W);
                    finish(&done);
                }
                wait_done(&done, (step + 1) * chunks);
            }
        }
        memcpy(h, hb + ((T - 1) & 1) * B * H, (size_t)(B * H) * sizeof(float));
    }
    free(pack);
    free(hb);
    free(tiles);
    free(claimed);
    return failed ? -1 : 0;
}

/* Backward phase p of chunk u (units [ja, jb)): dh's columns of the chunk from the gate gradients of the
 * step before (dh[:b] = dG @ W_hh, phase p - 1's step), then this step's gate gradients of the chunk and its
 * cell gradient (phase p's step; none after the last). Chunk u's dh and dc are only ever touched by chunk u's
 * work, so a phase needs nothing but the previous phase done. */
static void bwd_chunk(float *dh, float *dc, const float *dout, const float *ws, float *dG, const float *pack,
                      float *tile, const idx *off, const idx *bs, idx T, int reverse, idx p, idx u, idx H, idx W) {
    idx K = 4 * H, ja = u * NR, jb = ja + NR < H ? ja + NR : H;
    if (p > 0) {
        idx t = reverse ? T - p : p - 1, s = off[t], b = bs[t];
        panel_mm(dG + s * K, K, b, pack + u * K * NR, K, tile, NR);
        for (idx r = 0; r < b; r++)
            for (idx j = ja; j < jb; j++) dh[r * H + j] = tile[r * NR + j - ja];
    }
    if (p == T)
        return;
    idx t = reverse ? T - 1 - p : p, s = off[t], b = bs[t];
    for (idx r = 0; r < b; r++) {
        const float *wr = ws + (s + r) * W, *dhr = dh + r * H, *dor = dout + (s + r) * H;
        const float *i = wr, *f = wr + H, *gg = wr + 2 * H, *o = wr + 3 * H;
        const float *tc = wr + 5 * H, *cp = wr + 6 * H;
        float *dcr = dc + r * H, *d = dG + (s + r) * K;
        #pragma omp simd
        for (idx j = ja; j < jb; j++) {
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

/* The backward of one layer, one direction (rnn.py `_bwd_lstm`'s native path): dh, dc (B, H) the carried
 * gradients in (dh_n, dc_n) and out (dh0, dc0); dout (N, H) the output rows' gradients; ws the forward's
 * workspace; dG (N, 4H) the gate gradients (written); w (4H, H) W_hh row-major. Steps are walked from T - 1
 * down when `reverse` (the forward direction's backward), else up; nt threads. Returns 0, or -1 when memory
 * ran out. */
int lstm_layer_backward_f32(float *dh, float *dc, const float *dout, const float *ws, float *dG, const float *w,
                            const idx *off, const idx *bs, idx T, int reverse, idx B, idx H, idx W, int nt) {
    idx chunks = (H + NR - 1) / NR, K = 4 * H, done = 0;
    float *pack = alloc_f32(chunks * K * NR);  /* panel u: W_hh's NR columns from u NR, K = 4H rows */
    float *tiles = alloc_f32(chunks * B * NR);
    idx *claimed = (idx *)calloc((size_t)chunks, sizeof(idx));
    int failed = !pack || !tiles || !claimed;
    if (!failed && T > 0) {
#ifdef _OPENMP
        #pragma omp parallel num_threads(nt) if(nt > 1 && chunks > 1)
#endif
        {
            idx first = chunks * team_id() / team_size();
            for (idx p = 0; p <= T; p++) {  /* NOTE [ Claimed chunks ] */
                for (idx i = 0; i < chunks; i++) {
                    idx u = (first + i) % chunks;
                    if (!claim(claimed, u, p))
                        continue;
                    if (p == 0) {
                        float *q = pack + u * K * NR;
                        idx len = u * NR + NR < H ? NR : H - u * NR;
                        for (idx k = 0; k < K; k++)
                            for (idx j = 0; j < NR; j++) q[k * NR + j] = j < len ? w[k * H + u * NR + j] : 0.0f;
                    }
                    bwd_chunk(dh, dc, dout, ws, dG, pack, tiles + u * B * NR, off, bs, T, reverse, p, u, H, W);
                    finish(&done);
                }
                wait_done(&done, (p + 1) * chunks);
            }
        }
    }
    free(pack);
    free(tiles);
    free(claimed);
    return failed ? -1 : 0;
}
