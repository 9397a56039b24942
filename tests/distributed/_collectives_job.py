"""The body of the multi-rank jobs of test_collectives.py: one process per rank, started with
`ember.multiprocessing.spawn` (so ember's ranks join through its PMI server), each initializing ember's
default group AND torch's gloo group, then running every case of CASES in both from the same NumPy inputs
and comparing with `compare.assert_same` / the errors' class and message. A rank writes what failed (and
how many checks ran) to `<outdir>/rank<r>.json`; the test asserts nothing failed.
"""

import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))


def _inputs(rank, shape, dtype, seed=0):
    rng = np.random.default_rng(seed * 100 + rank)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in ("int64", "int32", "int8", "uint8"):
        return rng.integers(1, 6, size=shape).astype(dtype)
    if dtype == "float16":  # small integers: exact in float16 whatever the order of the sums
        return rng.integers(-4, 5, size=shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _t(lib, a):
    from compare import to_ember, to_torch

    return to_torch(a) if lib.__name__ == "torch" else to_ember(a)


def _all_reduce(op, dtype, shape=(3, 5)):
    def case(lib, d, r, n):
        x = _t(lib, _inputs(r, shape, dtype))
        d.all_reduce(x, op=getattr(d.ReduceOp, op))
        return x
    return case


def _noncontiguous_all_reduce(lib, d, r, n):
    x = _t(lib, _inputs(r, (4, 3), "float32")).t()
    d.all_reduce(x)
    return x


def _broadcast(lib, d, r, n):
    x = _t(lib, _inputs(r, (2, 3), "float64")).t()
    d.broadcast(x, src=n - 1)
    return x


def _reduce(lib, d, r, n):
    x = _t(lib, _inputs(r, (6,), "float32"))
    d.reduce(x, dst=1, op=d.ReduceOp.MAX)
    return x if r == 1 else None


def _all_gather(lib, d, r, n):
    out = [_t(lib, np.zeros((2, 2), np.int64)) for _ in range(n)]
    d.all_gather(out, _t(lib, _inputs(r, (2, 2), "int64")))
    return out


def _all_gather_into_tensor(lib, d, r, n):
    flat = _t(lib, np.zeros(3 * n, np.float32))
    d.all_gather_into_tensor(flat, _t(lib, _inputs(r, (3,), "float32")))
    rows = _t(lib, np.zeros((2 * n, 3), np.float32))
    d.all_gather_into_tensor(rows, _t(lib, _inputs(r, (2, 3), "float32")))
    return [flat, rows]


def _gather(lib, d, r, n):
    out = [_t(lib, np.zeros(4, np.float32)) for _ in range(n)] if r == 0 else None
    d.gather(_t(lib, _inputs(r, (4,), "float32")), out, dst=0)
    return out


def _scatter(lib, d, r, n):
    x = _t(lib, np.zeros((2, 3), np.float64))
    src = [_t(lib, _inputs(i + 10, (2, 3), "float64")) for i in range(n)] if r == 1 else None
    d.scatter(x, src, src=1)
    return x


def _reduce_scatter(lib, d, r, n):
    out = _t(lib, np.zeros(3, np.float32))
    d.reduce_scatter(out, [_t(lib, _inputs(r * n + i, (3,), "float32")) for i in range(n)])
    out2 = _t(lib, np.zeros((2, 2), np.int64))
    d.reduce_scatter_tensor(out2, _t(lib, _inputs(r, (2 * n, 2), "int64")), op=d.ReduceOp.MAX)
    return [out, out2]


def _all_to_all_single(lib, d, r, n):
    out = _t(lib, np.zeros((2 * n, 3), np.float32))
    d.all_to_all_single(out, _t(lib, _inputs(r, (2 * n, 3), "float32")))
    # uneven splits: rank r sends i + 1 rows to rank i, so it receives r + 1 rows from each
    ins = [i + 1 for i in range(n)]
    outs = [r + 1] * n
    out2 = _t(lib, np.zeros((sum(outs), 2), np.int64))
    d.all_to_all_single(out2, _t(lib, _inputs(r, (sum(ins), 2), "int64")), outs, ins)
    return [out, out2]


def _all_to_all(lib, d, r, n):
    out = [_t(lib, np.zeros(3, np.float32)) for i in range(n)]
    d.all_to_all(out, [_t(lib, _inputs(r * n + i, (3,), "float32")) for i in range(n)])
    return out


def _p2p(lib, d, r, n):
    send = _t(lib, _inputs(r, (5,), "float32"))
    recv = _t(lib, np.zeros(5, np.float32))
    ops = [d.P2POp(d.isend, send, (r + 1) % n), d.P2POp(d.irecv, recv, (r - 1) % n)]
    for w in d.batch_isend_irecv(ops):
        w.wait()
    got = _t(lib, np.zeros(5, np.float32))
    if r == 0:
        d.send(send, dst=n - 1)
        src = None
    elif r == n - 1:
        src = d.recv(got, src=0)
    else:
        src = None
    w = d.isend(send, (r + 1) % n) if r % 2 == 0 else d.irecv(got, (r - 1) % n)
    w.wait()
    return [recv, got, src]


def _async(lib, d, r, n):
    x = _t(lib, _inputs(r, (4,), "float32"))
    w = d.all_reduce(x, async_op=True)
    fut = w.get_future()
    done = w.wait()
    y = _t(lib, _inputs(r, (3,), "float64"))
    w2 = d.broadcast(y, src=0, async_op=True)
    val = w2.get_future().wait()
    return [x, done, w.is_completed(), fut.value(), val]


def _callbacks(lib, d, r, n):
    """A future's `then` callback that issues collectives and waits, both inside the callback and on one
    issued before it (queued behind the first) must not deadlock (NOTE [ Callbacks on the worker thread ] in
    ember/distributed/_mpi.py). (Which thread runs it is a race in torch too: the caller's when the future
    completed before `then`.)"""
    a, b, c = (_t(lib, _inputs(r, (4,), "float32", seed=s)) for s in (1, 2, 3))
    first = d.all_reduce(a, async_op=True)
    queued = d.all_reduce(c, async_op=True)

    def callback(fut):
        d.all_reduce(b)
        d.all_reduce(b, op=d.ReduceOp.MAX, async_op=True).wait()
        queued.wait()
        return fut.value()[0] + c
    out = first.get_future().then(callback).wait()
    return [out, b]


def _objects(lib, d, r, n):
    objs = [{"rank": r, "n": n}, "x" * r] if r == 0 else [None, None]
    d.broadcast_object_list(objs, src=0)
    gathered = [None] * n
    d.all_gather_object(gathered, ("obj", r))
    to0 = [None] * n if r == 0 else None
    d.gather_object(r * 10, to0, dst=0)
    out = [None]
    d.scatter_object_list(out, [f"for {i}" for i in range(n)] if r == 0 else None, src=0)
    return [objs, gathered, to0, out]


def _groups(lib, d, r, n):
    g = d.new_group([0, 1])
    x = _t(lib, _inputs(r, (3,), "float32"))
    if r in (0, 1):
        d.all_reduce(x, group=g)
        d.broadcast(x, src=1, group=g)
    info = [d.get_rank(g), d.get_world_size(g), d.get_world_size(), d.get_rank()]
    if r in (0, 1):
        info += [d.get_process_group_ranks(g), d.get_global_rank(g, 1), d.get_group_rank(g, 1)]
    sub, subs = d.new_subgroups(group_size=2)
    y = _t(lib, _inputs(r, (2,), "float64"))
    d.all_reduce(y, group=sub)
    return [x, y, info, d.get_rank(sub), len(subs), d.get_backend()]


CASES = {"all_reduce_" + op + "_" + dt: _all_reduce(op, dt) for op, dt in [
    ("SUM", "float32"), ("SUM", "float64"), ("SUM", "int64"), ("SUM", "int32"), ("SUM", "float16"),
    ("SUM", "bool"), ("SUM", "complex64"), ("PRODUCT", "float64"), ("PRODUCT", "int64"), ("MIN", "float32"),
    ("MAX", "int32"), ("MAX", "bool"), ("MIN", "bool"), ("BAND", "int64"), ("BOR", "int32"), ("BXOR", "uint8"),
    ("AVG", "float32"), ("AVG", "float64"), ("AVG", "complex64")]}
CASES.update(noncontiguous_all_reduce=_noncontiguous_all_reduce, broadcast=_broadcast, reduce=_reduce,
             all_gather=_all_gather, all_gather_into_tensor=_all_gather_into_tensor, gather=_gather,
             scatter=_scatter, reduce_scatter=_reduce_scatter, all_to_all_single=_all_to_all_single,
             all_to_all=_all_to_all, p2p=_p2p, async_ops=_async, callbacks=_callbacks, objects=_objects, groups=_groups,
             barrier=lambda lib, d, r, n: d.barrier())


def _e(lib, *shape, dtype="float32"):
    return _t(lib, np.zeros(shape, dtype))


# errors raised the same on every rank (so no rank is left waiting in a collective)
ERRORS = {
    "all_gather_list_length": lambda lib, d, r, n: d.all_gather([_e(lib, 2)], _e(lib, 2)),
    "all_gather_size": lambda lib, d, r, n: d.all_gather([_e(lib, 2)] * (n - 1) + [_e(lib, 3)], _e(lib, 2)),
    "all_gather_dtypes": lambda lib, d, r, n: d.all_gather([_e(lib, 2), _e(lib, 2, dtype="float64")], _e(lib, 2)),
    "all_gather_into_tensor_size": lambda lib, d, r, n: d.all_gather_into_tensor(_e(lib, 2 * n - 1), _e(lib, 2)),
    "all_gather_into_tensor_dtype": lambda lib, d, r, n: d.all_gather_into_tensor(
        _e(lib, 2 * n, dtype="int64"), _e(lib, 2)),
    "all_gather_into_tensor_stacked": lambda lib, d, r, n: d.all_gather_into_tensor(_e(lib, n, 2, 2),
                                                                                    _e(lib, 2, 2)),
    "all_to_all_uneven": lambda lib, d, r, n: d.all_to_all([_e(lib, i + 1) for i in range(n)],
                                                           [_e(lib, 1) for i in range(n)]),
    "broadcast_root": lambda lib, d, r, n: d.broadcast(_e(lib, 2), src=n + 3),
    "broadcast_no_src": lambda lib, d, r, n: d.broadcast(_e(lib, 2)),
    "reduce_root": lambda lib, d, r, n: d.reduce(_e(lib, 2), dst=-1),
    # the root's list and the others' (gather's and scatter's mirror-image checks): wrong on every rank
    "gather_list_sizes": lambda lib, d, r, n: d.gather(_e(lib, 2), [_e(lib, 2)] * (n - 1), dst=n - 1),
    "gather_list_roles": lambda lib, d, r, n: d.gather(_e(lib, 2), None if r == 1 else [_e(lib, 2)] * n, dst=1),
    "scatter_list_sizes": lambda lib, d, r, n: d.scatter(_e(lib, 2), [_e(lib, 2)] * (n + 1), src=0),
    "scatter_list_roles": lambda lib, d, r, n: d.scatter(_e(lib, 2), None if r == 0 else [_e(lib, 2)] * n),
    "reduce_scatter_list": lambda lib, d, r, n: d.reduce_scatter(_e(lib, 2), [_e(lib, 2)]),
    "all_to_all_list": lambda lib, d, r, n: d.all_to_all([_e(lib, 2)], [_e(lib, 2)]),
    "send_to_self": lambda lib, d, r, n: d.send(_e(lib, 2), dst=r),
    "not_a_tensor": lambda lib, d, r, n: d.all_reduce([1, 2]),
    "not_a_tensor_list": lambda lib, d, r, n: d.all_gather([1], _e(lib, 1)),
    "band_float": lambda lib, d, r, n: d.all_reduce(_e(lib, 2), op=d.ReduceOp.BAND),
    "complex_max": lambda lib, d, r, n: d.all_reduce(_e(lib, 2, dtype="complex64"), op=d.ReduceOp.MAX),
    "avg_int": lambda lib, d, r, n: d.all_reduce(_e(lib, 2, dtype="int64"), op=d.ReduceOp.AVG),
    "unknown_group": lambda lib, d, r, n: d.all_reduce(_e(lib, 2), group=5),
    "twice": lambda lib, d, r, n: d.init_process_group("gloo", rank=r, world_size=n),
    "subgroups_none": lambda lib, d, r, n: d.new_subgroups(),
    "subgroups_zero": lambda lib, d, r, n: d.new_subgroups(0),
    "subgroups_too_big": lambda lib, d, r, n: d.new_subgroups(n + 1),
    "new_group_too_big": lambda lib, d, r, n: d.new_group(list(range(n + 1))),
}


def _outcome(fn, lib, d, r, n):
    import warnings

    from compare import normalize_message

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib, d, r, n)
        except Exception as e:  # noqa: BLE001 - compared below
            return type(e).__name__, normalize_message(str(e)).split("\n")[0]
    return None


def _overlap(r):
    """An async all_reduce completes while this thread computes (nobody calls wait): progress in the
    background (NOTE [ Asynchronous collectives run on a worker thread ])."""
    import ember
    import ember.distributed as d

    x = ember.ones(1 << 22)
    w = d.all_reduce(x, async_op=True)
    a = np.random.default_rng(0).standard_normal((256, 256))
    t0 = time.monotonic()
    while not w.is_completed() and time.monotonic() - t0 < 60:
        a = np.tanh(a @ a.T / 256)  # compute, releasing the GIL in BLAS
    completed = w.is_completed()
    w.wait()
    return completed and float(x[0]) == d.get_world_size()


def run(rank, world, ports, outdir):
    import warnings

    import torch
    import torch.distributed as tdist
    from compare import assert_same

    import ember
    import ember.distributed as edist

    warnings.simplefilter("ignore")
    failed, checks = [], 0
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(ports[0]))
    tdist.init_process_group("gloo", rank=rank, world_size=world)
    os.environ["MASTER_PORT"] = str(ports[1])
    edist.init_process_group("gloo", rank=rank, world_size=world)
    for name, fn in CASES.items():
        try:
            t = fn(torch, tdist, rank, world)
            e = fn(ember, edist, rank, world)
            assert_same(e, t, check_stride=False, path=name)
            checks += 1
        except Exception:  # noqa: BLE001 - reported to the test
            failed.append(f"{name}: {traceback.format_exc()}")
    for name, fn in ERRORS.items():
        t, e = _outcome(fn, torch, tdist, rank, world), _outcome(fn, ember, edist, rank, world)
        if t is None or e != t:
            failed.append(f"error {name}: ember {e} torch {t}")
        checks += 1
    if not _overlap(rank):
        failed.append("async all_reduce did not complete in the background")
    checks += 1
    tdist.destroy_process_group()
    edist.destroy_process_group()
    if edist.is_initialized():
        failed.append("is_initialized() after destroy_process_group()")
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as fh:
        json.dump({"failed": failed, "checks": checks}, fh)
