"""What watching training costs: the profiler on an MLP train step, and SummaryWriter.add_scalar.

Rows (median, interleaved, one thread):
- the MLP train step with no profiler, ember vs torch (the baseline ratio);
- the same step inside `profiler.profile(record_shapes=True)`, ember vs torch;
- each library's own overhead: profiled step / plain step (goal for ember: under 1.3x);
- one `add_scalar` into an open writer, ember vs torch.
Run: python benchmarks/observability.py
"""

import tempfile
import warnings

from _common import compare, ember, header, np, row, torch
from models import ce, mlp, workload


def profiled(L, step):
    def run():
        with L.profiler.profile(record_shapes=True):
            step()
    return run


def main():
    name, e_step, t_step = workload("MLP", mlp, lambda r: (r.standard_normal((128, 784)).astype(np.float32),
                                                           r.integers(0, 10, 128)), ce, "SGD", 0.01)
    header("MLP 784-512-256-10 train step, batch 128, median ms")
    e_off, t_off = compare(e_step, t_step, number=10)
    row("no profiler", e_off, t_off, unit="ms", scale=1e3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_on, t_on = compare(profiled(ember, e_step), profiled(torch, t_step), number=10)
    row("inside profiler.profile(record_shapes=True)", e_on, t_on, unit="ms", scale=1e3)
    print(f"{'profiler overhead (on / off)':<48} {e_on / e_off:>10.2f} {t_on / t_off:>10.2f}     ratio", flush=True)

    header("SummaryWriter.add_scalar, median us per call")
    with tempfile.TemporaryDirectory() as d:
        import torch.utils.tensorboard as ttb

        import ember.utils.tensorboard as etb

        ew, tw = etb.SummaryWriter(d + "/e", max_queue=1000), ttb.SummaryWriter(d + "/t", max_queue=1000)
        steps = iter(range(10**9))
        e, t = compare(lambda: ew.add_scalar("loss", 0.5, next(steps)),
                       lambda: tw.add_scalar("loss", 0.5, next(steps)), number=200)
        row("add_scalar(float)", e, t)
        ex, tx = ember.tensor(0.5), torch.tensor(0.5)
        e, t = compare(lambda: ew.add_scalar("loss", ex, next(steps)),
                       lambda: tw.add_scalar("loss", tx, next(steps)), number=200)
        row("add_scalar(0-d tensor)", e, t)
        ew.close()
        tw.close()


if __name__ == "__main__":
    main()
