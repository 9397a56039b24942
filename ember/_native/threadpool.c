/* ember's thread pool for the compiler's generated kernels (ember/_inductor/threads.py).
 *
 * em_parallel_for(body, ctx, n, nt, chunk) runs body(ctx, lo, hi) over [0, n) on up to nt threads: the
 * caller and nt - 1 workers take chunks of `chunk` iterations (0: about four chunks per thread) from one
 * atomic counter, so a worker that wakes late, or is descheduled on a loaded machine, leaves its share to
 * the others instead of being waited for. Every iteration is computed by exactly one thread and the kernels'
 * iterations are independent, so the result does not depend on which thread ran what.
 *
 * NOTE [ A pool of our own ]
 * The kernels used OpenMP. In a process that also holds torch (the benchmarks, a user comparing the two),
 * they ran on torch's bundled libgomp, configured at `import torch` to spin: after every parallel loop its
 * idle workers spin for milliseconds (GOMP_SPINCOUNT's default, 300,000 pauses) and, on a machine with as
 * many cores as threads, take the core the next OpenBLAS call needs. Nothing can change that spin once
 * libgomp is loaded, so the generated kernels only went parallel on 4M elements (ember/_native's
 * SHARED_PARALLEL_SIZE), and a 1M-float pointwise chain ran on one core. This pool's workers wait for the
 * next loop for a while (NOTE [ Spinning while it pays ]), then sleep on a condition variable; a loop wakes
 * sleepers with one broadcast. Its behaviour is the same whichever OpenMP runtime, if any, the process has
 * loaded.
 *
 * NOTE [ Spinning while it pays ]
 * Waking a sleeping worker costs tens of microseconds on a VM whose other vCPU is idle (halted), so a train
 * step's consecutive parallel loops (a model's products, Python work of 20-150 us apart) gain only when the
 * worker is still awake: it spins up to EM_SPIN_MAX_NS after a loop. But on a machine that other processes
 * keep busy, a spinning worker only burns this process's share of the CPU: it is descheduled when the next
 * loop comes, and a spin of ~150 us made every small parallel loop ~150 us slower (measured with libgomp's
 * GOMP_SPINCOUNT: a 65536-float relu went from 17 to 158 us at 2 threads under load 6, against 9 us at one).
 * So the spin adapts to what each loop shows. A loop is late when no worker took a chunk before the caller
 * was done, or when the caller then waited for the workers' chunks more than a quarter of its own time.
 * Workers that were spinning when it began: a loop in time doubles the spin (up to EM_SPIN_MAX_NS), a late
 * one drops it to none (a spinning worker had been descheduled in favour of another process, which a
 * sleeping one woken by the loop is not). Workers that were asleep: a late loop doubles the spin (the
 * wake-up was slow, as on an idle VM), a loop in time leaves it.
 * Measured with an MLP product (128 x 784 x 512) at 2 threads, 30 us apart, the other CPU kept busy by a
 * test run: with a spin that only halved on a loop no worker joined, 471 us against 444 at one thread (the
 * spinning worker was mostly descheduled), and 300 us with the calls 300 us apart (a sleeping worker, woken).
 * On an idle machine workers keep spinning between loops; on a loaded one they sleep, the caller pays one
 * futex wake per loop and, since it takes every chunk no worker claimed, never waits for a worker that has
 * not started. Where the other CPU is busy, the scheduler may also queue a woken worker on
 * the caller's CPU (sampled during an MLP step at 2 threads under load 8: in about 1 of 5 samples where the
 * worker was runnable): a worker stops spinning when it finds itself on the caller's CPU, and a caller
 * waiting for a block held by a worker on its own CPU yields to it rather than spinning in its way.
 *
 * The state is one 64-bit ticket: generation (24 bits) | threads of this loop (8) | chunks (16) | next
 * chunk (16). A thread claims a chunk with a compare-and-swap on it, so a worker still holding the ticket
 * of a finished loop fails its claim and never runs a stale body; the loop's body, context and sizes are
 * written before its ticket is published (release) and read only after a successful claim (acquire), and
 * they stay valid until every chunk is done, which the caller waits for. One loop runs at a time: a second
 * Python thread calling a kernel while a loop runs computes its loop alone (trylock). After fork() the
 * child has no workers and starts its own on its first parallel loop.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

typedef int64_t idx;
typedef void (*em_body)(void *ctx, idx lo, idx hi);

#define EM_MAX_WORKERS 63
#define EM_SPIN_MAX_NS 200000  /* the longest an idle worker waits for the next loop before it sleeps */

#if defined(__x86_64__) || defined(__i386__)
#define EM_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define EM_PAUSE() __asm__ __volatile__("yield")
#else
#define EM_PAUSE() ((void)0)
#endif

#define GEN(t) ((uint32_t)((t) >> 40))
#define THREADS(t) ((int)(((t) >> 32) & 0xff))
#define CHUNKS(t) ((idx)(((t) >> 16) & 0xffff))
#define NEXT(t) ((idx)((t) & 0xffff))

static uint64_t ticket;
static idx done;      /* chunks finished in the current loop */
static int sleeping;  /* workers asleep (or about to be) on sleep_cv */
static int started;   /* workers running */
static uint32_t gen;
static em_body job_body;
static void *job_ctx;
static idx job_n, job_chunk;
static pthread_mutex_t dispatch = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t sleep_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cv = PTHREAD_COND_INITIALIZER;
static int atfork_set;
static int64_t loops;  /* parallel loops run (for tests: em_pool_loops) */
static int caller_cpu = -1, holder_cpu = -1;  /* the CPUs of the last loop's caller and block-taking worker */
/* how long idle workers spin now, and its ceiling (NOTE [ Spinning while it pays ]) */
static int64_t spin_ns = EM_SPIN_MAX_NS, spin_max = EM_SPIN_MAX_NS;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Claim and run chunks of loop `g` until none is left (or another loop began); how many it ran. A worker
 * (`worker` set) says on which CPU it runs them (NOTE [ Spinning while it pays ]). */
static idx run_chunks(uint32_t g, int worker)
{
    idx ran = 0;
    uint64_t t = __atomic_load_n(&ticket, __ATOMIC_ACQUIRE);
    for (;;) {
        if (GEN(t) != g || NEXT(t) >= CHUNKS(t))
            return ran;
        if (!__atomic_compare_exchange_n(&ticket, &t, t + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;  /* t now holds the current ticket */
        idx lo = NEXT(t) * job_chunk, hi = lo + job_chunk < job_n ? lo + job_chunk : job_n;
        if (worker)
            __atomic_store_n(&holder_cpu, sched_getcpu(), __ATOMIC_RELAXED);
        job_body(job_ctx, lo, hi);
        __atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
        ran++;
        t = __atomic_load_n(&ticket, __ATOMIC_ACQUIRE);
    }
}

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;  /* 1, 2, ...: the caller of a loop is thread 0 */
    uint32_t seen = 0xffffffffu;  /* joins the loop that started it */
    for (;;) {
        uint64_t t = __atomic_load_n(&ticket, __ATOMIC_ACQUIRE);
        if (GEN(t) != seen) {
            seen = GEN(t);
            if (me < THREADS(t))
                run_chunks(seen, 1);
            continue;
        }
        int64_t until = now_ns() + __atomic_load_n(&spin_ns, __ATOMIC_RELAXED);
        int woke = 0;
        for (int i = 1; !woke; i++) {
            EM_PAUSE();
            woke = GEN(__atomic_load_n(&ticket, __ATOMIC_ACQUIRE)) != seen;
            if ((i & 63) == 0 && (now_ns() > until
                                  || sched_getcpu() == __atomic_load_n(&caller_cpu, __ATOMIC_RELAXED)))
                break;  /* (spinning on the caller's CPU would only take it from the caller) */
        }
        if (woke)
            continue;
        pthread_mutex_lock(&sleep_m);
        __atomic_add_fetch(&sleeping, 1, __ATOMIC_SEQ_CST);
        while (GEN(__atomic_load_n(&ticket, __ATOMIC_SEQ_CST)) == seen)
            pthread_cond_wait(&sleep_cv, &sleep_m);
        __atomic_sub_fetch(&sleeping, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&sleep_m);
    }
    return 0;
}

static void after_fork_child(void)
{
    started = 0;
    sleeping = 0;
    pthread_mutex_init(&dispatch, 0);
    pthread_mutex_init(&sleep_m, 0);
    pthread_cond_init(&sleep_cv, 0);
}

void em_parallel_for(em_body body, void *ctx, idx n, int nt, idx chunk)
{
    if (nt > EM_MAX_WORKERS + 1)
        nt = EM_MAX_WORKERS + 1;
    if (nt <= 1 || n <= 1 || pthread_mutex_trylock(&dispatch) != 0) {
        body(ctx, 0, n);
        return;
    }
    if (!atfork_set) {
        atfork_set = 1;
        pthread_atfork(0, 0, after_fork_child);
    }
    while (started < nt - 1) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&th, &attr, worker, (void *)(intptr_t)(started + 1));
        pthread_attr_destroy(&attr);
        if (failed)
            break;
        started++;
    }
    int threads = started + 1 < nt ? started + 1 : nt;
    if (threads <= 1) {
        pthread_mutex_unlock(&dispatch);
        body(ctx, 0, n);
        return;
    }
    if (chunk <= 0)
        chunk = (n + 4 * threads - 1) / (4 * threads);
    if ((n + chunk - 1) / chunk > 0xffff)
        chunk = (n + 0xfffe) / 0xffff;
    idx chunks = (n + chunk - 1) / chunk;
    loops++;
    __atomic_store_n(&caller_cpu, sched_getcpu(), __ATOMIC_RELAXED);
    __atomic_store_n(&holder_cpu, -1, __ATOMIC_RELAXED);
    job_body = body;
    job_ctx = ctx;
    job_n = n;
    job_chunk = chunk;
    __atomic_store_n(&done, 0, __ATOMIC_RELAXED);
    gen = (gen + 1) & 0xffffff;
    uint64_t t = ((uint64_t)gen << 40) | ((uint64_t)threads << 32) | ((uint64_t)chunks << 16);
    __atomic_store_n(&ticket, t, __ATOMIC_SEQ_CST);
    int asleep = __atomic_load_n(&sleeping, __ATOMIC_SEQ_CST) > 0;
    if (asleep) {
        pthread_mutex_lock(&sleep_m);
        pthread_cond_broadcast(&sleep_cv);
        pthread_mutex_unlock(&sleep_m);
    }
    int64_t t0 = now_ns();
    idx mine = run_chunks(gen, 0);
    int64_t t1 = now_ns();
    /* wait for the chunks workers took; on a loaded machine one may be descheduled, or queued on this CPU
     * (where the scheduler put it when the loop woke it): yield to it */
    int yield = 0;
    for (long i = 0; __atomic_load_n(&done, __ATOMIC_ACQUIRE) < chunks; i++) {
        if ((i & 63) == 0)
            yield = i >= 20000 || sched_getcpu() == __atomic_load_n(&holder_cpu, __ATOMIC_RELAXED);
        if (yield)
            sched_yield();
        else
            EM_PAUSE();
    }
    /* NOTE [ Spinning while it pays ] */
    int64_t spin = __atomic_load_n(&spin_ns, __ATOMIC_RELAXED), more = 2 * spin + 1000;
    more = more < spin_max ? more : spin_max;
    int late = mine == chunks || 4 * (now_ns() - t1) > t1 - t0;  /* no worker came, or the caller waited */
    if (!asleep)  /* workers were spinning: go on if they came in time, else stop (one was descheduled) */
        spin = late ? 0 : more;
    else if (late)  /* woken too late: spinning would have paid */
        spin = more;
    __atomic_store_n(&spin_ns, spin, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&dispatch);
}

/* The address of em_parallel_for, for the generated libraries (ember/_inductor/threads.py). */
void *em_parallel_for_address(void)
{
    return (void *)em_parallel_for;
}

/* How many loops have been split across threads in this process. */
int64_t em_pool_loops(void)
{
    return loops;
}

/* ---- a matrix product split over the pool ------------------------------------------------------------ */

/* NOTE [ One pool for kernels and BLAS ]
 * c (m, n) = op(a) (m, k) @ op(b) (k, n), row-major (ta, tb: the operand is stored transposed), as `parts`
 * blocks of c's rows (or of its columns, when c is wider than tall: each block then repacks the smaller
 * operand, a), each multiplied by the single-threaded sgemm of NumPy's OpenBLAS (its pointer `gemm`; ember
 * keeps OpenBLAS on one thread: NOTE [ BLAS threads by size ] in blas.py). The blocks are the pool's chunks,
 * so a worker that wakes late (or is descheduled on a loaded machine) leaves its block to the caller instead
 * of being waited for: the product then takes about its one-thread time, never the sum of two waits. The
 * blocks depend on `parts` only, not on which thread ran them, and each is NumPy's product of that block to
 * the bit (tests/test_native_threads.py). */
typedef void (*sgemm_fn)(int order, int ta, int tb, idx m, idx n, idx k, float alpha, const float *a, idx lda,
                         const float *b, idx ldb, float beta, float *c, idx ldc);

struct gemm_job {
    sgemm_fn sgemm;
    const float *a, *b;
    float *c;
    idx lda, ldb, m, n, k, parts;
    int ta, tb;
};

static void gemm_blocks(void *ctx, idx lo, idx hi)
{
    enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
    const struct gemm_job *j = (const struct gemm_job *)ctx;
    int ta = j->ta ? TRANS : NO_TRANS, tb = j->tb ? TRANS : NO_TRANS;
    int rows = j->m >= j->n;
    idx len = rows ? j->m : j->n;
    for (idx p = lo; p < hi; p++) {
        idx s = len * p / j->parts, e = len * (p + 1) / j->parts;
        if (e <= s)
            continue;
        if (rows)  /* rows [s, e) of op(a) and of c */
            j->sgemm(ROW_MAJOR, ta, tb, e - s, j->n, j->k, 1.0f, j->ta ? j->a + s : j->a + s * j->lda, j->lda,
                     j->b, j->ldb, 0.0f, j->c + s * j->n, j->n);
        else  /* columns [s, e) of op(b) and of c */
            j->sgemm(ROW_MAJOR, ta, tb, j->m, e - s, j->k, 1.0f, j->a, j->lda,
                     j->tb ? j->b + s * j->ldb : j->b + s, j->ldb, 0.0f, j->c + s, j->n);
    }
}

void em_gemm_f32(const float *a, idx lda, int ta, const float *b, idx ldb, int tb, float *c, idx m, idx n,
                 idx k, void *gemm, int nt)
{
    struct gemm_job j = {(sgemm_fn)gemm, a, b, c, lda, ldb, m, n, k, nt, ta, tb};
    em_parallel_for(gemm_blocks, &j, nt, nt, 1);
}

/* The same blocks on the process's OpenMP team, for a process where another library (torch) loaded a
 * spinning libgomp first (NOTE [ Passive OpenMP threads ] in __init__.py): its workers spin on the cores
 * after its own loops, and a second pool's worker would wait for a time slice beside them (an MLP step at 2
 * threads took 2.69-2.84 ms on the pool there, against 2.37 on that team and 2.45-2.51 at one thread). */
void em_gemm_f32_team(const float *a, idx lda, int ta, const float *b, idx ldb, int tb, float *c, idx m,
                      idx n, idx k, void *gemm, int nt)
{
    struct gemm_job j = {(sgemm_fn)gemm, a, b, c, lda, ldb, m, n, k, nt, ta, tb};
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) num_threads(nt) if(nt > 1)
#endif
    for (int p = 0; p < nt; p++)
        gemm_blocks(&j, p, p + 1);
}

/* The spin idle workers use now, in ns (NOTE [ Spinning while it pays ]); `max` >= 0 first sets its ceiling
 * and starts it again from none (for tests and measurements). */
int64_t em_pool_spin(int64_t max)
{
    if (max >= 0) {
        spin_max = max;
        __atomic_store_n(&spin_ns, 0, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&spin_ns, __ATOMIC_RELAXED);
}
