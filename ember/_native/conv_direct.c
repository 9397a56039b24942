/* Same-size convolutions of C-contiguous float32 NCHW data without im2col: forward and input gradient of a
 * convolution with stride 1 whose output has its input's size ("same" padding: ResNet's, VGG's and the CIFAR
 * CNNs' 3x3 layers; depthwise ones too), any kernel size, dilation and groups; the forward at stride 2
 * (ResNet's stem and stride-2 layers), as four phases of the input (NOTE [ Stride 2 as four phases ]);
 * and the weight gradient of depthwise same-size convolutions (NOTE [ Depthwise weight gradient ]).
 *
 * NOTE [ Same-size convolutions without im2col ]
 * conv.c unrolls the input into columns (im2col, KH KW times the input: 58 MB for ResNet-18's layer1 at batch
 * 8), and OpenBLAS then copies the columns again into its own panels: two passes over memory that oneDNN's
 * direct convolution does not make, and what kept those layers at 1.1-1.3x torch's time. At stride 1 with the
 * output the input's size, tap t = (ki, kj) of output position (h, w) reads input (h + dh_t, w + dw_t), and
 * with positions numbered along rows (q = h W + w) that is input position q + dh_t W + dw_t: one shift per
 * tap, the same for every position. So the columns need not exist: a tile of TILE consecutive output
 * positions loads, per input channel and tap, TILE consecutive input floats at the tap's shift, with a mask
 * that zeroes the lanes whose (h + dh_t, w + dw_t) falls outside the image (a row's edges, the top and bottom
 * rows: the zeros im2col would have written). The masks depend on the position and the tap only, so they are
 * made once per call (`masks`), and a masked-off lane is never read, so the shifted loads may run past the
 * plane.
 *
 *   y[m][q] = sum over channels k, then taps t, of A(m, k, t) x[k][q + shift_t]    (+ bias[m])
 *
 * Forward, m is the output channel, k the input channel and A the weight as it is. The input gradient is the
 * same sum with the roles turned (the adjoint of a shift is the opposite shift): m is the input channel, k
 * the output channel, the shifts negated and A(c, o, t) = w[o][c][t], read in place with other strides.
 * Neither packs the weight.
 *
 * The register tile is MR rows by TILE positions (NV vectors: MR NV accumulators), as the LSTM's micro-kernel
 * (NOTE [ One call per LSTM layer ] in rnn.c): per (k, t), NV masked loads and MR broadcast weights make MR
 * NV fused multiply-adds. Each output element is computed by one thread with the same code whatever the
 * blocking and the thread count, so results do not depend on either; they may differ from conv.c's in the
 * last bits (OpenBLAS blocks its sums another way).
 *
 * NOTE [ Blocks of K ]
 * One chain of fused multiply-adds over all K T terms (4,608 in ResNet's layer4) was up to 6x torch's error
 * against a float64 reference (tests/test_native_conv.py holds it to 2x). So the sum runs in blocks of kb
 * channels (kb T <= KCHAIN terms, blocks of about equal size), each a chain of its own from zero, added in
 * order into the result (the first block stores it, the bias follows the last): within the bound, and the
 * result's loads and stores once per block cost about 2% of the block's multiply-adds.
 *
 * NOTE [ Loop order of the direct convolution ]
 * A work item is a chunk of positions (of one sample, or of the batch side by side, NOTE [ Small planes side
 * by side ]) and a group of row blocks; for each row block and block of K, the weights (MR rows of kb T
 * floats, read in place: 4 KB, in L1) run over every tile of the chunk, whose input (every channel of it: at
 * most CHUNK_BYTES) stays in L2 while the row blocks take their turns. Tried and measured slower, with the
 * input and result flushed from the cache between calls (as beside torch, which evicts them), batch 8: going
 * tile by tile through every row block, the weight packed in panels once per call (ResNet's layer1, layer2
 * and the CIFAR CNN's 32 x 32 conv took 1.04-1.16x this order's time; prefetching the next tile's input did
 * not change that); with the block of K outside the row blocks (1.02-1.24x); and packing each row block's
 * weights per item (slower still on layer3 and layer4, whose 2.4 and 9.4 MB weights make the packing a pass
 * of its own).
 *
 * NOTE [ The input asked for up front ]
 * An item that is a whole sample's plane first prefetches all of that sample's input (every channel: 32-64 KB
 * for the CIFAR CNN's layers), then computes. Its channels are separate planes, read a block of K at a time,
 * which the hardware prefetchers did not follow: with the input out of cache (as after torch's layer, or the
 * benchmark's gc.collect between rounds), the CIFAR CNN's 16 x 16 and 32 x 32 layers took 12-18% less time
 * this way, ResNet's layer1 2-6%. Prefetching the result's lines too was 1-4% slower.
 *
 * NOTE [ Small planes side by side ]
 * A plane of HW < SMALL_PLANE positions is a few tiles whose last is mostly past its end (7 x 7: 49 positions
 * in two tiles of 48). Such convolutions copy the whole batch's planes side by side (one row of N HW
 * positions per channel), compute there, and copy the result back; the masks keep every sample's taps inside
 * its own plane. ResNet's layer3 and layer4 (14 x 14, 7 x 7) went from 1.05-1.11x torch's time to 0.93-0.98x.
 * 16 x 16 planes stay in place (5 tiles and a short one): the CIFAR CNN's second conv, forward and input
 * gradient, took 1.00 / 1.00x torch's time at 1 thread and 0.87 / 0.86x at 2, against 1.05 / 1.10x and 1.09 /
 * 1.06x side by side (the copy costs most at 2 threads). Where a plane is a whole number of vectors, each
 * vector of a tile lies in one sample, so the results go straight into y (`direct_out`) instead of through a
 * copy: 5-10% less time on 16 x 16 planes side by side. (Reading the input in place the same way, a tile's
 * vectors from up to two samples, was slower: 1.03-1.4x.)
 *
 * NOTE [ Taps in address order ]
 * The input gradient's shifts are the forward's negated, so taps in the weight's order read each channel from
 * its highest address down. Where the input is read in place (one sample's plane), the taps then run in the
 * other order (the weight's taps reversed, so the loads go up): the CIFAR CNN's 32 x 32 x 32 input gradient
 * went from 157 to 214 GFLOP/s (ResNet's layer1 and layer2 gained 2-7%). On planes side by side it cost 7-30%
 * (layer3 and layer4), so there the weight's order stays. Either order is one fixed chain per element.
 *
 * NOTE [ Stride 2 as four phases ]
 * At stride 2, output (oh, ow) reads input row 2 oh + dh_t: row oh + fh_t of the input's phase ah_t = dh_t
 * mod 2 (the plane of its rows 2 i + ah_t), fh_t = floor(dh_t / 2); likewise for columns. So the input is
 * first split into its four phases (`phases_body`: one pass over the input, where im2col wrote KH KW times
 * it), each a plane of the output's size (OH x OW, zero past the input's edge), laid out as 4 K channels per
 * group, and then the sum above runs with tap t reading channel phase_t + k at shift fh_t OW + fw_t: the same
 * tiles, masks (made from the input's own rows and columns) and order of the sum. Taken (conv.py's `_phased`)
 * for an output plane of at least 256 positions: ResNet's stem forward at batch 8 went from 1.01-1.05x
 * torch's time (conv.c with bands of columns) to 0.93-1.03x, layer2's stride-2 conv from 1.04-1.07x to
 * 0.97-1.00x at one thread; on 14 x 14 outputs (planes side by side) it was slower than conv.c: 1.13-1.19x
 * against 1.05-1.15x.
 *
 * NOTE [ Padding adds nothing ]
 * The multiply-adds of a lane in the padding are masked off (the lane keeps its sum), rather than adding the
 * weight times a loaded zero: an inf or NaN weight then gives NaN only where it meets the image, as oneDNN's
 * convolution does, which torch runs for these shapes (conv.py's `_onednn` sends the others to conv.c, which
 * multiplies the padding's zeros as torch's native path does). Same speed, measured.
 *
 * AVX-512 only (masked loads that do not fault are what make the shifted reads free; a masked-off lane's
 * address may lie outside the plane, even outside the array, and is never read); a build without it returns
 * NOT_BUILT and the convolution takes conv.c's im2col path (tests/test_native_conv.py runs both). */
#define EM_KERNEL_POOL
#include "common.h"

#define NOT_BUILT (-2)  /* no AVX-512 in this build: conv.c's path, from now on */
#define NOT_TAKEN (-3)  /* a shape this kernel does not take (more than MAX_TAPS taps): conv.c's path */

#ifdef __AVX512F__
#include <immintrin.h>

#define NV 3                     /* vectors of 16 positions per tile */
#define TILE (16 * NV)           /* positions per tile */
#define MR 8                     /* rows per tile: MR x NV accumulators */
#define MAX_TAPS 64
#define KCHAIN 128               /* terms per block of the sum at most (NOTE [ Blocks of K ]) */
#define SMALL_PLANE 256          /* smaller planes: the batch side by side (NOTE [ Small planes ... ]) */
#define CHUNK_BYTES (1 << 20)    /* a chunk's input, every channel of it */

/* Step j of a block of the sum (k = j / T, t = j % T): where it reads x, the masks and A. */
typedef struct { idx x, m, a; } step_t;

typedef struct {
    const float *x, *w, *b;      /* x: the input (or output gradient); w: the weight; b: bias or NULL */
    float *y, *xp, *yp;          /* y: the result; xp, yp: packed input and result (nb > 1) */
    idx N, HW, K, M, G, T;       /* per group: K channels summed, M rows made; x has G K channels, y G M */
    idx a_r, a_k, a_g;           /* A(m, k, t) = w[g a_g + m a_r + k a_k + t] */
    idx kb;                      /* channels per block of the sum (NOTE [ Blocks of K ]) */
    idx xk;                      /* x's channels per group: K, or 4 K phases at stride 2 */
    idx nb, blocks, ld, cp, chunks, mblocks, per_group, mgroups;
    idx shift[MAX_TAPS];         /* tap t reads position q + shift[t] */
    idx phase[MAX_TAPS];         /* of channel phase[t] + k (stride 2: its phase's first) */
    step_t *step;                /* the kb T steps of a block */
    __mmask16 *masks;            /* masks[t nvec + v]: the lanes of positions 16 v .. 16 v + 15 tap t reads */
    idx nvec;
    int direct_out;              /* planes side by side of whole vectors: results straight into y */
} direct_ctx;

/* y[0:mr][q0 : q0 + TILE] (+ bias) for the rows of A at a; `masks` at the tile's first vector; `store`: the
 * lanes inside the item's positions. mr is a constant after inlining, so the accumulators stay in
 * registers. */
static inline __attribute__((always_inline)) void tile(int mr, int nv, const float *ap, idx a_r,
                                                       const float *x, idx n,
                                                       int first, const step_t *step, const __mmask16 *masks,
                                                       const float *bias, float *const *yb, idx ldy,
                                                       const __mmask16 *store) {
    __m512 acc[MR][NV];
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) acc[r][v] = _mm512_setzero_ps();
    for (idx j = 0; j < n; j++) {  /* (k, t) in order, as one loop */
        const float *xs = x + step[j].x;
        const __mmask16 *m = masks + step[j].m;
        const float *aj = ap + step[j].a;
        __m512 b[NV];
        __mmask16 mv[NV];
        for (int v = 0; v < nv; v++) mv[v] = m[v], b[v] = _mm512_maskz_loadu_ps(mv[v], xs + 16 * v);
        for (int r = 0; r < mr; r++) {  /* padding lanes keep their sums (NOTE [ Padding adds nothing ]) */
            __m512 wv = _mm512_set1_ps(aj[r * a_r]);
            for (int v = 0; v < nv; v++) acc[r][v] = _mm512_mask3_fmadd_ps(wv, b[v], acc[r][v], mv[v]);
        }
    }
    #pragma GCC unroll 8  /* (unrolled, so the accumulators are registers, not stored at every step) */
    for (int r = 0; r < mr; r++)  /* the block's sums added to the earlier blocks' (NOTE [ Blocks of K ]) */
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            float *yv = yb[v] + r * ldy;
            __m512 o = acc[r][v];
            if (!first) o = _mm512_add_ps(_mm512_maskz_loadu_ps(store[v], yv), o);
            if (bias) o = _mm512_add_ps(o, _mm512_set1_ps(bias[r]));
            _mm512_mask_storeu_ps(yv, store[v], o);
        }
}

/* Block k0 of the sum for rows mb MR.. and the tile at q0 (of the positions below q_hi) of group g, whose
 * input rows start at x and result rows at y. */
static inline __attribute__((always_inline)) void run_tile(const direct_ctx *c, idx g, idx mb, idx k0, idx q0,
                                                           idx q_hi, const float *x, float *y) {
    idx M = c->M, K = c->K, T = c->T, ld = c->ld, r0 = mb * MR, mr = M - r0 < MR ? M - r0 : MR;
    __mmask16 store[NV];
    for (int v = 0; v < NV; v++) {
        idx left = q_hi - (q0 + 16 * v);
        store[v] = left >= 16 ? 0xffff : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
    }
    idx n = (K - k0 < c->kb ? K - k0 : c->kb) * T;
    const float *bias = c->b && k0 + c->kb >= K ? c->b + g * M + r0 : NULL;  /* added after the last block */
    const float *xt = x + k0 * ld + q0, *ak = c->w + g * c->a_g + r0 * c->a_r + k0 * c->a_k;
    const __mmask16 *mk = c->masks + q0 / 16;
    float *yb[NV];
    idx ldy = ld;
    for (int v = 0; v < NV; v++) yb[v] = y + r0 * ld + q0 + 16 * v;
    if (c->direct_out) {  /* results straight into y (NOTE [ Small planes side by side ]) */
        ldy = c->HW;
        for (int v = 0; v < NV; v++) {
            idx q = q0 + 16 * v < q_hi ? q0 + 16 * v : q0;
            yb[v] = c->y + ((q / c->HW * c->G + g) * M + r0) * c->HW + q % c->HW;
        }
    }
    if (mr == MR && q_hi - q0 <= 16)  /* a short last tile of full rows */
        tile(MR, 1, ak, c->a_r, xt, n, k0 == 0, c->step, mk, bias, yb, ldy, store);
    else if (mr == MR && q_hi - q0 <= 32)
        tile(MR, 2, ak, c->a_r, xt, n, k0 == 0, c->step, mk, bias, yb, ldy, store);
    else
        switch (mr) {
#define TILE_CASE(R) \
        case R: tile(R, NV, ak, c->a_r, xt, n, k0 == 0, c->step, mk, bias, yb, ldy, store); break;
        TILE_CASE(8) TILE_CASE(7) TILE_CASE(6) TILE_CASE(5)
        TILE_CASE(4) TILE_CASE(3) TILE_CASE(2) TILE_CASE(1)
#undef TILE_CASE
        default: break;
        }
}

/* The work items [lo, hi): (group, block of samples, chunk of positions, group of row blocks), in the
 * order of NOTE [ Loop order of the direct convolution ]. */
static void direct_body(void *ctx, idx lo, idx hi) {
    direct_ctx *c = ctx;
    idx HW = c->HW, K = c->K, M = c->M, ld = c->ld;
    for (idx it = lo; it < hi; it++) {
        idx mg = it % c->mgroups, rest = it / c->mgroups;
        idx chunk = rest % c->chunks;
        rest /= c->chunks;
        idx blk = rest % c->blocks, g = rest / c->blocks;
        idx n0 = blk * c->nb, m = c->N - n0 < c->nb ? c->N - n0 : c->nb, P = m * HW;
        idx q_lo = chunk * c->cp, q_hi = q_lo + c->cp < P ? q_lo + c->cp : P;
        if (q_lo >= q_hi) continue;
        const float *x;
        float *y;
        if (c->nb > 1) {  /* packed: [block][channel][nb HW] */
            x = c->xp + (blk * c->G + g) * c->xk * ld;
            y = c->yp + (blk * c->G + g) * M * ld;
        } else {
            x = c->x + (n0 * c->G + g) * c->xk * HW;
            y = c->y + (n0 * c->G + g) * M * HW;
        }
        idx mb0 = mg * c->per_group, mb1 = mb0 + c->per_group < c->mblocks ? mb0 + c->per_group : c->mblocks;
        if (c->nb == 1 && q_lo == 0 && q_hi == HW) {  /* (NOTE [ The input asked for up front ]) */
            const char *px = (const char *)x;
            for (idx b = 0; b < c->xk * HW * (idx)sizeof(float); b += 64) __builtin_prefetch(px + b, 0, 3);
        }
        for (idx mb = mb0; mb < mb1; mb++)
            for (idx k0 = 0; k0 < K; k0 += c->kb)
                for (idx q0 = q_lo; q0 < q_hi; q0 += TILE) run_tile(c, g, mb, k0, q0, q_hi, x, y);
    }
}

/* Packing (nb > 1): rows [lo, hi) of (block, channel), each the block's samples' planes side by side; `out`:
 * the other way, from the packed result into y. */
static void pack_body(void *ctx, idx lo, idx hi, int out) {
    direct_ctx *c = ctx;
    idx HW = c->HW, rows = c->G * (out ? c->M : c->xk);
    for (idx i = lo; i < hi; i++) {
        idx blk = i / rows, ch = i % rows, n0 = blk * c->nb, m = c->N - n0 < c->nb ? c->N - n0 : c->nb;
        for (idx j = 0; j < m; j++) {
            float *packed = (out ? c->yp : c->xp) + i * c->ld + j * HW;
            if (out) memcpy(c->y + ((n0 + j) * rows + ch) * HW, packed, sizeof(float) * (size_t)HW);
            else memcpy(packed, c->x + ((n0 + j) * rows + ch) * HW, sizeof(float) * (size_t)HW);
        }
    }
}
static void pack_in_body(void *ctx, idx lo, idx hi) { pack_body(ctx, lo, hi, 0); }

/* The input's four phases at stride 2 (NOTE [ Stride 2 as four phases ]): planes [lo, hi) of (sample, group,
 * channel) of src (H x W) into four planes each of ph (OH x OW): phase (a, b) holds src[2 i + a][2 j + b]. */
typedef struct { const float *src; float *ph; idx H, W, OH, OW, C, G, N; int packed; } phases_ctx;

static void phases_body(void *ctx, idx lo, idx hi) {
    phases_ctx *f = ctx;
    idx H = f->H, W = f->W, OH = f->OH, OW = f->OW, cg = f->C / f->G, plane = OH * OW;
    for (idx i = lo; i < hi; i++) {
        idx ng = i / cg, ch = i % cg;  /* (sample, group) and channel within the group */
        idx n = ng / f->G, g = ng % f->G;
        const float *x = f->src + i * H * W;
        for (idx a = 0; a < 2; a++)
            for (idx b = 0; b < 2; b++) {
                idx pc = g * 4 * cg + (a * 2 + b) * cg + ch;  /* its phase channel */
                float *d = f->ph + (f->packed ? (pc * f->N + n) * plane : (n * f->G * 4 * cg + pc) * plane);
                for (idx r = 0; r < OH; r++, d += OW) {
                    idx h = 2 * r + a, n = (W - b + 1) / 2 < OW ? (W - b + 1) / 2 : OW;
                    if (h >= H) n = 0;
                    const float *row = x + h * W + b;
                    for (idx j = 0; j < n; j++) d[j] = row[2 * j];
                    for (idx j = n; j < OW; j++) d[j] = 0.0f;
                }
            }
    }
}
static void pack_out_body(void *ctx, idx lo, idx hi) { pack_body(ctx, lo, hi, 1); }
#endif

/* p: conv.c's shape vector (N C H W O KH KW SH SW PH PW DH DW G OH OW) of the forward convolution, with
 * SH = SW = 1, OH = H, OW = W. Forward (grad = 0): y = conv(x, w) + b. Input gradient (grad = 1): y = the
 * gradient of the input from the output gradient x (b NULL). Returns 0, -1 when a buffer could not be
 * allocated, NOT_BUILT or NOT_TAKEN. */
int conv2d_same_f32(const float *x, const float *w, const float *b, float *y, const idx *p, int grad,
                    int nt) {
#ifdef __AVX512F__
    idx N = p[0], C = p[1], H = p[2], W = p[3], O = p[4], KH = p[5], KW = p[6], PH = p[9], PW = p[10];
    idx DH = p[11], DW = p[12], G = p[13], T = KH * KW;
    idx S = p[7], OH = p[14], OW = p[15];
    int same = S == 1 && p[8] == 1 && OH == H && OW == W;
    int phased = !grad && S == 2 && p[8] == 2 && (H + 1) / 2 <= OH && (W + 1) / 2 <= OW;
    if (T > MAX_TAPS || !(same || phased)) return NOT_TAKEN;
    idx Cg = C / G, Og = O / G;
    direct_ctx c = {.x = x, .w = w, .b = b, .y = y, .N = N, .HW = OH * OW, .G = G, .T = T,
                    .a_g = Og * Cg * T};
    if (grad) c.K = Og, c.M = Cg, c.a_r = T, c.a_k = Cg * T;
    else c.K = Cg, c.M = Og, c.a_r = Cg * T, c.a_k = T;
    c.xk = phased ? 4 * c.K : c.K;
    idx HW = c.HW;
    float *ph = NULL;
    int packed = HW < SMALL_PLANE;  /* (NOTE [ Small planes side by side ]) */
    if (phased) {  /* (NOTE [ Stride 2 as four phases ]): side by side at once where they are to be */
        ph = malloc(sizeof(float) * (size_t)(N * C * 4 * HW));
        if (!ph) return -1;
        phases_ctx f = {.src = x, .ph = ph, .H = H, .W = W, .OH = OH, .OW = OW, .C = C, .G = G, .N = N,
                        .packed = packed};
        em_for(phases_body, &f, N * C, nt, 0);
        c.x = ph;
    }
    c.kb = KCHAIN / T > 0 ? KCHAIN / T : 1;
    c.kb = (c.K + (c.K + c.kb - 1) / c.kb - 1) / ((c.K + c.kb - 1) / c.kb);  /* blocks of about equal size */
    c.nb = packed ? N : 1;
    c.blocks = (N + c.nb - 1) / c.nb;
    c.ld = c.nb * HW;
    c.cp = CHUNK_BYTES / ((idx)sizeof(float) * c.K) / TILE * TILE;
    if (c.cp < TILE) c.cp = TILE;
    if (c.cp < c.ld) {  /* chunks of about equal size */
        idx chunks = (c.ld + c.cp - 1) / c.cp, tiles = (c.ld + TILE - 1) / TILE;
        c.cp = (tiles + chunks - 1) / chunks * TILE;
    }
    c.chunks = (c.ld + c.cp - 1) / c.cp;
    c.mblocks = (c.M + MR - 1) / MR;
    idx base = G * c.blocks * c.chunks, want = 4 * (idx)nt;  /* about four items a thread */
    c.mgroups = base >= want ? 1 : (want + base - 1) / base;
    if (c.mgroups > c.mblocks) c.mgroups = c.mblocks;
    c.per_group = (c.mblocks + c.mgroups - 1) / c.mgroups;
    c.mgroups = (c.mblocks + c.per_group - 1) / c.per_group;

    int rev = grad && c.nb == 1;  /* (NOTE [ Taps in address order ]) */
    /* The taps' shifts and, for each of the ld positions of a block, the lanes each tap may read. */
    c.nvec = (c.ld + TILE + 15) / 16;  /* a tile may start at any multiple of TILE below ld */
    c.masks = calloc((size_t)(T * c.nvec), sizeof(__mmask16));
    if (!c.masks) {
        free(ph);
        return -1;
    }
    for (idx t = 0; t < T; t++) {
        idx u = rev ? T - 1 - t : t;  /* the weight's tap (NOTE [ Taps in address order ]) */
        idx dh = (u / KW) * DH - PH, dw = (u % KW) * DW - PW;
        if (grad) dh = -dh, dw = -dw;
        /* at stride 2, the input row 2 oh + dh is row oh + fh of phase row ah (fh = floor(dh / 2)) */
        idx ah = phased ? dh & 1 : 0, aw = phased ? dw & 1 : 0;
        idx fh = phased ? (dh - ah) / 2 : dh, fw = phased ? (dw - aw) / 2 : dw;
        c.phase[t] = (ah * 2 + aw) * c.K;
        c.shift[t] = fh * OW + fw;
        idx s_ = phased ? 2 : 1;
        __mmask16 *mt = c.masks + t * c.nvec;
        for (idx q = 0; q < c.ld; q += OW) {
            idx h = (q % HW / OW + fh) * s_ + ah;  /* the input row it reads */
            if (q % HW / OW + fh < 0 || h < 0 || h >= H) continue;
            for (idx j = 0; j < OW; j++) {
                idx wc = (j + fw) * s_ + aw;
                if (j + fw >= 0 && wc >= 0 && wc < W) mt[(q + j) / 16] |= (__mmask16)(1u << ((q + j) % 16));
            }
        }
    }
    c.step = malloc(sizeof(step_t) * (size_t)(c.kb * T));
    if (!c.step) {
        free(c.masks);
        free(ph);
        return -1;
    }
    for (idx j = 0; j < c.kb * T; j++) {
        idx k = j / T, t = j % T;
        c.step[j] = (step_t){.x = (c.phase[t] + k) * c.ld + c.shift[t], .m = t * c.nvec,
                             .a = k * c.a_k + (rev ? T - 1 - t : t)};
    }
    int rc = 0;
    if (c.nb > 1) {
        c.xp = ph ? ph : malloc(sizeof(float) * (size_t)(c.blocks * G * c.xk * c.ld));
        c.direct_out = HW % 16 == 0;
        c.yp = c.direct_out ? NULL : malloc(sizeof(float) * (size_t)(c.blocks * G * c.M * c.ld));
        if (!c.xp || (!c.direct_out && !c.yp)) {
            rc = -1;
            goto done;
        }
        if (!ph) em_for(pack_in_body, &c, c.blocks * G * c.xk, nt, 0);
    }
    em_for(direct_body, &c, base * c.mgroups, nt, 1);
    if (c.nb > 1 && !c.direct_out) em_for(pack_out_body, &c, c.blocks * G * c.M, nt, 0);
done:
    if (c.xp != ph) free(c.xp);
    free(c.yp);
    free(c.masks);
    free(c.step);
    free(ph);
    return rc;
#else
    (void)x, (void)w, (void)b, (void)y, (void)p, (void)grad, (void)nt;
    return NOT_BUILT;
#endif
}

/* NOTE [ Depthwise weight gradient ]
 * The weight gradient of a same-size depthwise convolution (one input channel a group, stride 1) is one dot
 * product a tap: w'[o][t] = sum over samples and positions q of g[o][q] x[c][q + shift_t], c = o's channel.
 * conv.c's loop took it tap by tap and row by row, summing in double with a horizontal sum at every row (3.5
 * ms against torch's 0.45 for MobileNet's 16 x 96 x 28 x 28). Here the positions go by in vectors of 16 with
 * the output gradient loaded once for DW_TAPS taps at a time, each tap a vector of float sums (its padding's
 * lanes masked off, as torch adds nothing for them, NOTE [ Padding adds nothing ]), summed across lanes in
 * double at the end. Each output channel is one thread's, in a fixed order: the result does not depend on the
 * thread count. */
#ifdef __AVX512F__
#define DW_TAPS 9

typedef struct {
    const float *x, *g;
    float *gw;
    idx C, HW, O, og, T, N, nvec;
    const idx *shift;
    const __mmask16 *masks;  /* masks[t nvec + v], as the direct kernel's; row T none */
} dw_ctx;

static void dw_weight_grad_body(void *ctx, idx lo, idx hi) {
    const dw_ctx *k = ctx;
    idx HW = k->HW, nvec = k->nvec;
    for (idx o = lo; o < hi; o++) {
        idx c = o / k->og;
        for (idx t0 = 0; t0 < k->T; t0 += DW_TAPS) {
            idx shift[DW_TAPS];
            const __mmask16 *mt[DW_TAPS];
            for (int t = 0; t < DW_TAPS; t++) {  /* taps past T: the masks' last row, no lanes */
                int real = t0 + t < k->T;
                shift[t] = real ? k->shift[t0 + t] : 0;
                mt[t] = k->masks + (real ? t0 + t : k->T) * nvec;
            }
            __m512 acc[DW_TAPS];
            for (int t = 0; t < DW_TAPS; t++) acc[t] = _mm512_setzero_ps();
            for (idx n = 0; n < k->N; n++) {
                const float *gp = k->g + (n * k->O + o) * HW, *xp = k->x + (n * k->C + c) * HW;
                for (idx v = 0; v < nvec; v++) {
                    idx left = HW - 16 * v;
                    __m512 gv = _mm512_maskz_loadu_ps(left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1),
                                                      gp + 16 * v);
                    for (int t = 0; t < DW_TAPS; t++) {
                        __mmask16 m = mt[t][v];
                        __m512 xv = _mm512_maskz_loadu_ps(m, xp + 16 * v + shift[t]);
                        acc[t] = _mm512_mask3_fmadd_ps(gv, xv, acc[t], m);
                    }
                }
            }
            for (int t = 0; t < DW_TAPS && t0 + t < k->T; t++) {
                __m512d lo8 = _mm512_cvtps_pd(_mm512_castps512_ps256(acc[t]));
                __m256 top = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[t]), 1));
                __m512d hi8 = _mm512_cvtps_pd(top);
                k->gw[o * k->T + t0 + t] = (float)_mm512_reduce_add_pd(_mm512_add_pd(lo8, hi8));
            }
        }
    }
}
#endif

/* The weight gradient (O, 1, KH, KW) of a same-size depthwise convolution at stride 1 (p: conv.c's shape
 * vector) from its input x and output gradient g: 0, -1 when a buffer could not be allocated, NOT_BUILT or
 * NOT_TAKEN (NOTE [ Depthwise weight gradient ]). */
int conv2d_dw_weight_grad_f32(const float *x, const float *g, float *gw, const idx *p, int nt) {
#ifdef __AVX512F__
    idx N = p[0], C = p[1], H = p[2], W = p[3], O = p[4], KH = p[5], KW = p[6], PH = p[9], PW = p[10];
    idx DH = p[11], DW = p[12], G = p[13], T = KH * KW, HW = H * W;
    if (T > MAX_TAPS || G != C || p[7] != 1 || p[8] != 1 || p[14] != H || p[15] != W) return NOT_TAKEN;
    idx nvec = (HW + 15) / 16, shift[MAX_TAPS];
    __mmask16 *masks = calloc((size_t)((T + 1) * nvec), sizeof(__mmask16));
    if (!masks) return -1;
    for (idx t = 0; t < T; t++) {
        idx dh = (t / KW) * DH - PH, dw = (t % KW) * DW - PW;
        shift[t] = dh * W + dw;
        for (idx q = 0; q < HW; q++) {
            idx h = q / W + dh, w = q % W + dw;
            if (h >= 0 && h < H && w >= 0 && w < W) masks[t * nvec + q / 16] |= (__mmask16)(1u << (q % 16));
        }
    }
    dw_ctx k = {.x = x, .g = g, .gw = gw, .C = C, .HW = HW, .O = O, .og = O / G, .T = T, .N = N, .nvec = nvec,
                .shift = shift, .masks = masks};
    em_for(dw_weight_grad_body, &k, O, nt, 0);
    free(masks);
    return 0;
#else
    (void)x, (void)g, (void)gw, (void)p, (void)nt;
    return NOT_BUILT;
#endif
}
