"""DDP train-step time on 2 ranks, ember (over ember.distributed) vs torch (gloo), in the same processes.

`python benchmarks/distributed.py` runs it after the allreduce part; on its own, on 2 ranks:
`python -m ember.distributed.run --nproc-per-node 2 benchmarks/distributed_ddp.py [--quick]`; rank 0 prints.
Both libraries train the same models (benchmarks/models.py: the MLP and the small GPT) wrapped in
DistributedDataParallel, timed in interleaved rounds (docs/benchmarking.md), each rank on its half of the
batch. Each round times both libraries back to back, so a round's ratio ember/torch saw one machine load;
the table gives the median step times, the median of the rounds' ratios and their spread (lowest and
highest round), in wall time and in the CPU time of each rank's process (NOTE [ Step time on a shared
machine ] in `ddp_part`).

Hidden share of allreduce time, from per-bucket timestamps on each rank (a method that holds on 2 cores,
where differences of step times are noise): for each bucket, when its allreduce was launched and when it
was seen complete, and when backward produced its last gradient. The share of the buckets' allreduce time
that lies before the end of backward is hidden (1: all hidden, 0: none), median over steps, per rank.
ember: the reducer's launches and its Works' completions (a Work completes when the reducer's MPI_Test in a
later gradient hook, or the final MPI_Wait, sees it done: that is when ember knows). torch: the same
allreduce, SUM of the bucket divided by the world size, as a communication hook (torch's default reduction
is not observable from Python), timestamped at launch and in its future's callback.
"""

import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

from _common import ember, np, timeit, torch  # noqa: E402
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


def paired(ember_fn, torch_fn, number, rounds, warmup=3, cpu=None):
    """Per-round seconds per call of each, the two timed back to back in A B / B A order. With a list
    `cpu`, it gets the rounds' CPU seconds per call of this process (all its threads) as (ember, torch)."""
    for _ in range(warmup):
        ember_fn()
        torch_fn()
    e, t = [], []
    for r in range(rounds):
        gc.collect()
        for f in ((ember_fn, torch_fn) if r % 2 == 0 else (torch_fn, ember_fn)):
            c = time.process_time()
            (e if f is ember_fn else t).append(timeit(f, number))
            if cpu is not None:
                cpu.append((f is ember_fn, (time.process_time() - c) / number))
    if cpu is not None:
        ce_, ct_ = [c for is_e, c in cpu if is_e], [c for is_e, c in cpu if not is_e]
        cpu[:] = list(zip(ce_, ct_))
    return e, t


class _Timeline:
    """Per-bucket allreduce (start, end) and the time of the last gradient, for one backward."""

    def __init__(self):
        self.spans, self.last_grad = {}, 0.0

    def hidden(self):
        total = sum(e - s for s, e in self.spans.values())
        before = sum(max(0.0, min(e, self.last_grad) - s) for s, e in self.spans.values())
        return before / total if total > 0 else float("nan")


def _stamp_grads(params, box):
    for p in params:
        p.register_post_accumulate_grad_hook(lambda p: setattr(box[0], "last_grad", time.perf_counter()))


def _instrument_ember(ddp, box):
    reducer = ddp.reducer
    launch = reducer._launch

    def timed_launch(b):
        start = time.perf_counter()
        launch(b)
        work, line = reducer.buckets[b].work, box[0]
        finish = work._finish

        def timed_finish(result, exception):
            line.spans[b] = (start, time.perf_counter())
            finish(result, exception)
        work._finish = timed_finish
        if work.is_completed():  # (done already: the completion was not seen through _finish)
            line.spans.setdefault(b, (start, time.perf_counter()))
    reducer._launch = timed_launch
    _stamp_grads(ddp.module.parameters(), box)


def _instrument_torch(ddp, box):
    world = tdist.get_world_size()

    def hook(state, bucket):
        start, line, b = time.perf_counter(), box[0], bucket.index()
        fut = tdist.all_reduce(bucket.buffer().div_(world), async_op=True).get_future()

        def done(f):
            line.spans[b] = (start, time.perf_counter())
            return f.value()[0]
        return fut.then(done)
    ddp.register_comm_hook(None, hook)
    _stamp_grads(ddp.module.parameters(), box)


def hidden_share(L, ddp, x, y, steps=15):
    """Median over `steps` backward passes of the hidden share of allreduce time (see the docstring)."""
    box = [_Timeline()]
    (_instrument_ember if L is ember else _instrument_torch)(ddp, box)
    shares = []
    for i in range(steps + 2):
        box[0] = _Timeline()
        ddp.zero_grad()
        ce(L, ddp(x), y).backward()
        if i >= 2:
            shares.append(box[0].hidden())
    return statistics.median(shares)


WORKLOADS = [
    ("MLP 784-512-256-10, batch 2x64, SGD momentum", mlp,
     lambda r: (r.standard_normal((64, 784)).astype(np.float32), r.integers(0, 10, 64)), "SGD", 0.01),
    ("small GPT, 2 layers d128, seq 64, batch 2x8, Adam", small_gpt,
     lambda r: (r.integers(0, 1000, (8, 64)), r.integers(0, 1000, (8, 64))), "Adam", 1e-3),
]


def _spread(ratios):
    ratios = sorted(ratios)
    return statistics.median(ratios), ratios[0], ratios[-1]


def ddp_part(rank, world, quick):
    """Time the DDP steps (both process groups already initialized); rank 0 prints the table.

    NOTE [ Step time on a shared machine ]
    Each round times ember's steps and torch's back to back (A B, then B A), and the ratio of a round is
    taken within it; the table gives the median of the rounds' ratios and their spread (lowest, highest
    round). Wall time is the figure the goal is about, but on a loaded 2-core machine a rank descheduled for
    a few ms makes the other wait in the allreduce, in either library. So the table also gives each rank's
    CPU time per step (the whole process: ember's thread and torch's gloo threads alike), which the other
    users of the machine do not change: a library that spins while it waits, or runs extra threads, shows
    there. Both ratios are taken on rank 0 and rank 1, and the table gives the worse of the two medians.
    """
    if rank == 0:
        print(f"\nDDP train step on {world} ranks, median ms (ember over MPI, torch over gloo); ratio: median "
              "of the rounds' ratios [lowest, highest round], wall time and CPU time of the rank's process")
        print(f"{'workload':<52} {'ember':>8} {'torch':>8} {'wall ratio':>11} {'spread':>13} {'CPU ratio':>10} "
              f"{'spread':>13}   hidden share of allreduce time (rank 0, rank 1)")
    for spec in WORKLOADS:
        name, steps, models = build(*spec, rank=rank, world=world)
        number, rounds = (3, 5) if quick else (5, 15)
        cpu = []
        e, t = paired(steps[ember], steps[torch], number, rounds, cpu=cpu)
        wall = _spread([a / b for a, b in zip(e, t)])
        cpus = _spread([a / b for a, b in cpu])
        he = hidden_share(ember, *models[ember])  # (after the timing: torch's then runs with its hook)
        ht = hidden_share(torch, *models[torch])
        rows = [None] * world
        edist.all_gather_object(rows, (he, ht, statistics.median(e), statistics.median(t), wall, cpus))
        if rank == 0:
            worst_wall = max((r[4] for r in rows), key=lambda x: x[0])
            worst_cpu = max((r[5] for r in rows), key=lambda x: x[0])
            em, tm = statistics.median(r[2] for r in rows), statistics.median(r[3] for r in rows)
            hid = ", ".join(f"{r[0]:.2f}" for r in rows), ", ".join(f"{r[1]:.2f}" for r in rows)
            print(f"{name:<52} {em * 1e3:>8.2f} {tm * 1e3:>8.2f} {worst_wall[0]:>10.2f}x "
                  f"[{worst_wall[1]:.2f}, {worst_wall[2]:.2f}] {worst_cpu[0]:>9.2f}x "
                  f"[{worst_cpu[1]:.2f}, {worst_cpu[2]:.2f}]   ember {hid[0]}; torch {hid[1]}", flush=True)


def main():
    rank, world = setup()
    ddp_part(rank, world, "--quick" in sys.argv)
    tdist.destroy_process_group()
    edist.destroy_process_group()


if __name__ == "__main__":
    main()
