/* Batched matrix products of float32 data: c[i] = op(a[i]) @ op(b[i]) for every batch element i, each a
 * single-threaded sgemm, the batch split over the kernels' OpenMP team.
 *
 * NOTE [ Batched products on the team ]
 * NumPy's matmul multiplies a batch one matrix at a time on one thread, and a transformer's attention is such
 * a batch of small products: 64 of 64 x 32 x 64 per matmul for a batch of 16 sequences with 4 heads, twelve
 * matmuls per train step of a 2-layer model (forward and backward), ~100 us each, too small for the sgemm to
 * split but many enough to deal out. Here the batch elements go to the threads, each calling NumPy's own
 * OpenBLAS sgemm (passed in as a pointer, with OpenBLAS on one thread: NOTE [ Convolution threads ] in
 * conv.c) on its matrices with the arguments NumPy's matmul would pass, so every product is computed by one
 * thread with the same code whatever the thread count. The operands' matrices may lie anywhere (a per-element
 * offset, in floats, from the base pointer: transposed views, broadcast batch dims) as long as each is
 * row-major or the transpose of one with a leading dimension (ta, tb: stored transposed); c is contiguous.
 */
#include "common.h"

typedef void (*sgemm_fn)(int order, int ta, int tb, idx m, idx n, idx k, float alpha, const float *a, idx lda,
                         const float *b, idx ldb, float beta, float *c, idx ldc);
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

int bmm_f32(const float *a, const idx *offa, idx lda, int ta, const float *b, const idx *offb, idx ldb,
            int tb, float *c, idx batch, idx m, idx n, idx k, void *gemm, int nt) {
    sgemm_fn sgemm = (sgemm_fn)gemm;
    EM_PARALLEL_FOR(nt)
    for (idx i = 0; i < batch; i++)
        sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1.0f, a + offa[i], lda,
              b + offb[i], ldb, 0.0f, c + i * m * n, n);
    return 0;
}
