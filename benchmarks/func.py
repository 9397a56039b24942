"""Per-sample gradients with ember.func: vmap(grad(...)) against torch.func's, and against a loop.

The MLP of benchmarks/models.py (784-512-256-10), a batch of 64 samples; each workload gives the gradient
of every sample's cross-entropy loss with respect to every parameter (64 x 535,818 numbers):
- `vmap(grad)`: vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y) with functional_call, in ember and
  in torch (same weights, same inputs), as a ratio ember/torch;
- `loop`: ember's own loop over the samples, one forward and backward each, against ember's vmap(grad)
  (and torch's loop against torch's vmap(grad), for scale: the 64 per-sample weight gradients are 137 MB
  of outer products that both ways must write).
- `roofline`: the bytes the per-sample gradients must be written as (64 x 535,818 float32 = 137.2 MB) over
  this machine's measured write bandwidth (NumPy filling a buffer of that size, already mapped and fresh from
  the allocator): the least time any implementation, vmap or loop, can take; each workload's time is shown
  as a multiple of it.
One thread, interleaved rounds, medians (docs/benchmarking.md); EMBER_BENCH_THREADS=2 for two threads.
Run: python benchmarks/func.py [--quick]

NOTE [ The per-sample gradients' roofline ]
The gradients are 64 x 535,818 float32 = 137.2 MB, new memory on every call. On the 2-vCPU machines
(measured in CPU seconds, which the other processes on a shared machine disturb least): memset-speed stores
into mapped memory write 32 GB/s (4.3 ms); into fresh memory the kernel's page faults (it zeroes each page)
bring it to about 10.6 GB/s (12.9 ms), the least time for any implementation that returns new tensors.
Ordinary stores (a broadcast multiply, which writes each outer product once) cost about twice memset's, as
each cache line is read before it is written. ember's vmap(grad) took 17.7 ms of CPU (1.4x the bound: the
outer products, then ~5 ms of Python for ~265 dispatches) and ember's loop 69.6 ms; a vmap 10x faster than
the loop would need 7.0 ms, half the bound: not reachable on this machine without reusing the gradients'
memory across calls (a caching allocator) and non-temporal stores, which NumPy's ufuncs do not use.
"""

import gc
import resource
import statistics
import sys
import time

from _common import THREADS, compare, ember, header, np, row, torch
from models import copy_weights, mlp

BATCH = 64


def per_sample_vmap(L, model):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = L.func.functional_call(model, p, (x.unsqueeze(0),))
        return L.nn.functional.cross_entropy(out, y.unsqueeze(0))

    fn = L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))
    return lambda x, y: fn(params, x, y)


def per_sample_loop(L, model):
    params = list(model.parameters())

    def run(x, y):
        grads = []
        for i in range(x.shape[0]):
            loss = L.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1])
            grads.append(L.autograd.grad(loss, params))
        return [L.stack(g) for g in zip(*grads)]

    return run


def _median_s(fn, rounds, clock=time.perf_counter):
    ts = []
    for _ in range(rounds):
        gc.collect()
        t = clock()
        fn()
        ts.append(clock() - t)
    return statistics.median(ts)


def _cpu():
    """This process's CPU seconds, user + system (the kernel's page faults are system time)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def write_bandwidth(nbytes, rounds=9, clock=time.perf_counter):
    """(bytes/s writing an already-mapped buffer, bytes/s writing a fresh one): NumPy's fill, the fastest
    store loop it has; a fresh buffer pays the kernel's page faults as a new gradient's memory does."""
    n = nbytes // 4
    buf = np.empty(n, np.float32)
    buf.fill(0)
    warm = _median_s(lambda: buf.fill(1.0), rounds, clock)
    fresh = _median_s(lambda: np.empty(n, np.float32).fill(1.0), rounds, clock)
    return nbytes / warm, nbytes / fresh


def roofline(title, nbytes, times, loop, clock):
    warm, fresh = write_bandwidth(nbytes, clock=clock)
    bound_warm, bound_fresh = nbytes / warm, nbytes / fresh
    print(f"\nroofline, {title}, {THREADS} thread(s): the per-sample gradients are {nbytes / 1e6:.1f} MB; "
          f"writing them takes >= {bound_warm * 1e3:.2f} ms ({warm / 1e9:.1f} GB/s, memory already mapped), "
          f"{bound_fresh * 1e3:.2f} ms into fresh memory ({fresh / 1e9:.1f} GB/s)")
    for name, secs in times:
        print(f"  {name:<18} {secs * 1e3:8.2f} ms = {secs / bound_fresh:5.1f}x the fresh-memory bound")
    print(f"  a vmap 10x faster than ember's loop would take {loop / 10 * 1e3:.2f} ms: "
          f"{loop / 10 / bound_fresh:.2f}x the bound")


def main(quick=False):
    number, rounds = (1, 3) if quick else (3, 7)
    torch.manual_seed(0)
    tm, em = mlp(torch), mlp(ember)
    copy_weights(tm, em)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 784)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    ex, ey, tx, ty = ember.from_numpy(x), ember.from_numpy(y), torch.from_numpy(x), torch.from_numpy(y)

    ev, tv = per_sample_vmap(ember, em), per_sample_vmap(torch, tm)
    eloop, tloop = per_sample_loop(ember, em), per_sample_loop(torch, tm)
    # the three give the same gradients
    g_e, g_t, g_l = ev(ex, ey), tv(tx, ty), eloop(ex, ey)
    for (k, a), b, c in zip(g_e.items(), g_t.values(), g_l):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5, err_msg=k)
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-3, atol=1e-5, err_msg=k)

    header(f"per-sample gradients, MLP 784-512-256-10, batch {BATCH}")
    e, t = compare(lambda: ev(ex, ey), lambda: tv(tx, ty), number=number, rounds=rounds)
    row("vmap(grad) ember vs torch.func", e, t, "ms", 1e3)
    loop, vm = compare(lambda: eloop(ex, ey), lambda: ev(ex, ey), number=number, rounds=rounds)
    row("ember loop over samples vs ember vmap(grad)", loop, vm, "ms", 1e3)
    tl, tvm = compare(lambda: tloop(tx, ty), lambda: tv(tx, ty), number=number, rounds=rounds)
    row("(torch's loop over samples vs torch vmap(grad))", tl, tvm, "ms", 1e3)
    print(f"ember vmap(grad) is {loop / vm:.1f}x faster than ember's loop (torch's: {tl / tvm:.1f}x); "
          f"{e / t:.2f}x torch's vmap(grad)")

    nbytes = 4 * sum(int(np.prod(g.shape)) for g in g_e.values())
    roofline("wall clock", nbytes, (("ember vmap(grad)", vm), ("ember loop", loop), ("torch vmap(grad)", tvm),
                                    ("torch loop", tl)), loop, time.perf_counter)
    # the same in CPU seconds (user + system), which other processes on a shared machine disturb less
    cpu = [(name, _median_s(f, rounds, _cpu)) for name, f in (
        ("ember vmap(grad)", lambda: ev(ex, ey)), ("ember loop", lambda: eloop(ex, ey)),
        ("torch vmap(grad)", lambda: tv(tx, ty)), ("torch loop", lambda: tloop(tx, ty)))]
    roofline("CPU time", nbytes, cpu, cpu[1][1], _cpu)

if __name__ == "__main__":
    main("--quick" in sys.argv)
