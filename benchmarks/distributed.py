"""ember.distributed against torch.distributed (gloo) on 2 ranks: all_reduce bandwidth, 1 KB to 64 MB.

    python benchmarks/distributed.py [--quick]

Two ranks are started with `ember.multiprocessing.spawn` (so ember's ranks join through its PMI server,
as a script starting its own ranks does); each initializes torch's gloo group and ember's MPI group, and
both time float32 all_reduce (SUM) of the same buffers in interleaved A B B A rounds (the collectives keep
the ranks in lockstep). Rank 0 prints the median time per all_reduce, the bus bandwidth (bytes / time)
and the ratio ember / torch of the times (below 1: ember faster): the median of the rounds' ratios, with
their spread (lowest and highest round), since the 2-core machine is shared. Goal: ember at least gloo's
bandwidth above 1 MB. One thread per rank, as every benchmark here. Then the DDP train steps of the MLP and the
small GPT, ember vs torch, with the share of allreduce time hidden behind backward (distributed_ddp.py).
"""

import os
import socket
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SIZES = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]


def _ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    out = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return out


def _allreduce_part(rank, world, quick):
    import numpy as np
    import torch
    import torch.distributed as tdist
    from distributed_ddp import paired

    import ember
    import ember.distributed as edist

    rows = []
    for nbytes in SIZES[:6] if quick else SIZES:
        a = np.random.default_rng(rank).standard_normal(nbytes // 4).astype(np.float32)
        te, tt = ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
        number = max(2, min(200, (1 << 24) // nbytes))
        e, t = paired(lambda: edist.all_reduce(te), lambda: tdist.all_reduce(tt), number, 3 if quick else 9,
                      warmup=2)
        ratios = sorted(a / b for a, b in zip(e, t))
        rows.append((nbytes, statistics.median(e), statistics.median(t), ratios))
    return rows


def _fmt_size(n):
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def _rank(rank, world, ports, quick):
    import _common  # noqa: F401 - first: one thread for NumPy's OpenBLAS, ember and torch (as main() set)
    import torch.distributed as tdist

    import ember.distributed as edist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(ports[0]))
    tdist.init_process_group("gloo", rank=rank, world_size=world)
    os.environ["MASTER_PORT"] = str(ports[1])
    edist.init_process_group("gloo", rank=rank, world_size=world)
    rows = _allreduce_part(rank, world, quick)
    if rank == 0:
        print(f"all_reduce float32 SUM, {world} ranks (median per call; bandwidth = bytes / time)")
        print(f"{'size':>8} {'ember':>10} {'torch':>10} {'ember GB/s':>11} {'torch GB/s':>11} {'ember/torch':>12} "
              f"{'spread':>14}")
        for nbytes, e, t, ratios in rows:  # ratio: the median of the rounds' ratios [lowest, highest round]
            print(f"{_fmt_size(nbytes):>8} {e * 1e6:8.1f}us {t * 1e6:8.1f}us {nbytes / e / 1e9:11.3f} "
                  f"{nbytes / t / 1e9:11.3f} {statistics.median(ratios):12.2f} [{ratios[0]:5.2f}, {ratios[-1]:5.2f}]",
                  flush=True)
    from distributed_ddp import ddp_part  # (the DDP train steps, area Q)

    ddp_part(rank, world, quick)
    tdist.destroy_process_group()
    edist.destroy_process_group()


def main():
    import _common  # noqa: F401 - before NumPy loads: the ranks inherit one thread (_common's variables)

    import ember.multiprocessing as mp

    mp.spawn(_rank, args=(2, _ports(2), "--quick" in sys.argv), nprocs=2)


if __name__ == "__main__":
    main()
