"""DDP train-step time on 2 ranks, ember (over ember.distributed) vs torch (gloo), in the same processes.

`python benchmarks/distributed.py` runs it after the allreduce part; on its own, on 2 ranks:
`python -m ember.distributed.run --nproc-per-node 2 benchmarks/distributed_ddp.py [--quick]`; rank 0 prints.
Both libraries train the same models (benchmarks/models.py: the MLP and the small GPT) wrapped in
DistributedDataParallel, timed in interleaved rounds (docs/benchmarking.md), each rank on its half of the
batch.

Hidden share of allreduce time: per library, B_local = backward without communication (under no_sync),
B_ddp = backward with DDP's bucketed allreduces, A = the same buckets allreduced on their own, one after
the other. Communication that overlaps backward adds less than A to it: hidden = 1 - (B_ddp - B_local) / A
(1: all hidden, 0: none). On a loaded machine that difference is noisy; for ember the reducer also records
how long the end of backward waited for the allreduces, giving hidden = 1 - wait / A directly.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from _common import compare, ember, np, torch  # noqa: E402
from models import ce, copy_weights, mlp, small_gpt  # noqa: E402

edist, tdist = ember.distributed, torch.distributed


def setup():
    edist.init_process_group("gloo")
    rank, world = edist.get_rank(), edist.get_world_size()
    port = os.environ.get("Q_TORCH_PORT", "29731")
    os.environ.pop("TORCHELASTIC_USE_AGENT_STORE", None)  # (torch's own group hosts its own store)
    tdist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    return rank, world


def build(name, make, make_batch, opt, lr, rank, world):
    """The DDP train step of one model in each library (ember's weights copied from torch's)."""
    rng = np.random.default_rng(rank)
    x_np, y_np = make_batch(rng)
    steps, models = {}, {}
    t_model = make(torch)
    for L in (torch, ember):
        model = t_model if L is torch else make(ember)
        if L is ember:
            copy_weights(t_model, model)
        ddp = L.nn.parallel.DistributedDataParallel(model)
        optimizer = getattr(L.optim, opt)(ddp.parameters(), lr=lr, **({"momentum": 0.9} if opt == "SGD" else {}))
        x, y = L.from_numpy(x_np.copy()), L.from_numpy(y_np.copy())

        def step(ddp=ddp, optimizer=optimizer, x=x, y=y, L=L):
            optimizer.zero_grad()
            loss = ce(L, ddp(x), y)
            loss.backward()
            optimizer.step()
            return loss.item()
        steps[L], models[L] = step, (ddp, x, y)
    return name, steps, models


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def hidden_share(L, ddp, x, y, n=21):
    """(hidden share by difference, ember's hidden share from its reducer's wait, allreduce-alone seconds).

    By difference: 1 - (B_ddp - B_local) / A, B_* medians of backward times taken in alternation (so both
    see the same machine load), A the buckets allreduced on their own. ember's reducer also records how
    long the end of backward waited for communication (`last_wait_s`): 1 - wait / A, a direct reading."""
    dist = edist if L is ember else tdist

    def backward(sync):
        ddp.zero_grad()
        dist.barrier()
        if sync:
            ce(L, ddp(x), y).backward()
        else:
            with ddp.no_sync():
                ce(L, ddp(x), y).backward()

    sizes = [b.buffer.numel() for b in ddp.reducer.buckets] if L is ember else _torch_bucket_sizes(ddp)
    bufs = [L.zeros(s) for s in sizes]

    def allreduce_alone():
        for b in bufs:
            dist.all_reduce(b)

    for _ in range(3):
        backward(True)
        backward(False)
    b_ddp, b_local, waits, alone = [], [], [], []
    for _ in range(n):
        b_ddp.append(_time(lambda: backward(True)))
        if L is ember:
            waits.append(ddp.reducer.last_wait_s)
        b_local.append(_time(lambda: backward(False)))
        dist.barrier()
        alone.append(_time(allreduce_alone))
    a = statistics.median(alone)
    by_difference = 1 - (statistics.median(b_ddp) - statistics.median(b_local)) / a
    direct = 1 - statistics.median(waits) / a if waits else float("nan")
    return by_difference, direct, a


def _torch_bucket_sizes(ddp):
    sizes = ddp._get_ddp_logging_data().get("bucket_sizes")
    if isinstance(sizes, str):
        sizes = [int(s) for s in sizes.split(", ") if s]
    return [s // 4 for s in sizes] if sizes else [sum(p.numel() for p in ddp.module.parameters())]


WORKLOADS = [
    ("MLP 784-512-256-10, batch 2x64, SGD momentum", mlp,
     lambda r: (r.standard_normal((64, 784)).astype(np.float32), r.integers(0, 10, 64)), "SGD", 0.01),
    ("small GPT, 2 layers d128, seq 64, batch 2x8, Adam", small_gpt,
     lambda r: (r.integers(0, 1000, (8, 64)), r.integers(0, 1000, (8, 64))), "Adam", 1e-3),
]


def ddp_part(rank, world, quick):
    """Time the DDP steps (both process groups already initialized); rank 0 prints the table."""
    if rank == 0:
        print(f"\nDDP train step on {world} ranks, median ms (ember over MPI, torch over gloo)")
        print(f"{'workload':<52} {'ember':>8} {'torch':>8} {'ratio':>7}   hidden share of allreduce time")
    for spec in WORKLOADS:
        name, steps, models = build(*spec, rank=rank, world=world)
        number, rounds = (3, 3) if quick else (10, 7)
        e, t = compare(steps[ember], steps[torch], number=number, rounds=rounds)
        he, hd, ae = hidden_share(ember, *models[ember])
        ht, _, at = hidden_share(torch, *models[torch])
        if rank == 0:
            print(f"{name:<52} {e * 1e3:>8.2f} {t * 1e3:>8.2f} {e / t:>6.2f}x   ember {hd:.2f} (by difference "
                  f"{he:.2f}), torch {ht:.2f} by difference; allreduce alone: ember {ae * 1e3:.2f} ms, "
                  f"torch {at * 1e3:.2f} ms", flush=True)


def main():
    rank, world = setup()
    ddp_part(rank, world, "--quick" in sys.argv)
    tdist.destroy_process_group()
    edist.destroy_process_group()


if __name__ == "__main__":
    main()
