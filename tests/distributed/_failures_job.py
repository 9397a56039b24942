"""A 2-rank job for tests/distributed/test_failures.py: what a rank sees when the other does not come, in
torch (gloo) and in ember, in the same processes (started with `ember.multiprocessing.spawn`).

For each library: on a group made with a 1 s timeout, rank 0 calls `all_reduce` that rank 1 never calls
(gloo's "Timed out waiting 1000ms for recv operation to complete"), then another op on that group (broken
from then on: "Application timeout caused pair closure"); on a second group, rank 0 calls
`monitored_barrier` with a 1 s timeout that rank 1 never enters (the message names rank 1). Rank 1 waits on
the default group meanwhile. Each rank writes [library, case, exception class, message, seconds taken]
rows to rank<r>.json.
"""

import datetime
import json
import os
import time


def _outcome(fn):
    t0 = time.monotonic()
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compared by the test
        return type(e).__name__, str(e).split("\n")[0], time.monotonic() - t0
    return None, None, time.monotonic() - t0


def _cases(lib, d, rank):
    second = datetime.timedelta(seconds=1)
    rows = []
    g1 = d.new_group([0, 1], timeout=second)
    g2 = d.new_group([0, 1], timeout=second)
    if rank == 0:
        x = lib.ones(4)
        rows.append(("all_reduce timeout", *_outcome(lambda: d.all_reduce(x, group=g1))))
        rows.append(("next op on the group", *_outcome(lambda: d.broadcast(x, 0, group=g1))))
        rows.append(("monitored_barrier", *_outcome(lambda: d.monitored_barrier(g2, timeout=second))))
    d.barrier()  # (rank 1 waits here until rank 0 is done)
    return rows


def run(rank, world, ports, outdir):
    import warnings

    import torch
    import torch.distributed as tdist

    import ember
    import ember.distributed as edist

    warnings.simplefilter("ignore")
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(ports[0]))
    tdist.init_process_group("gloo", rank=rank, world_size=world)
    os.environ["MASTER_PORT"] = str(ports[1])
    edist.init_process_group("gloo", rank=rank, world_size=world)
    rows = [("torch", *r) for r in _cases(torch, tdist, rank)] + [("ember", *r) for r in _cases(ember, edist, rank)]
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as fh:
        json.dump(rows, fh)
    tdist.destroy_process_group()
    edist.destroy_process_group()
