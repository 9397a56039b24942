"""Mixed precision and activation checkpointing, ember vs torch in one process (docs/benchmarking.md).

1. The small GPT train step of benchmarks/models.py (2 TransformerEncoderLayers, d 128, 4 heads, seq 64,
   batch 16, Adam) in float32 and under bfloat16 CPU autocast: ember and torch times, ember/torch ratios,
   and each library's autocast/float32 ratio.
2. Seed 004's `DeepNetwork` of memory-efficient blocks (Linear 512->2048, GELU, Linear 2048->512), 12 blocks,
   batch 16, SGD: the bytes of saved activations held at the end of the forward
   (`ember.autograd.graph.saved_tensors_bytes(out, activations_only=True)`; torch's measured with a
   saved-tensors hook that keeps each tensor as it is, counting each storage once and leaving out the
   parameters) and the train-step time, plain and with each block checkpointed (use_reentrant False and
   True). Goal: bytes at most 1/4 of the plain run's, step time at most 1.4x the plain step's.

Run: python benchmarks/amp_checkpoint.py [--quick]
"""

import gc
import statistics
import sys

from _common import ember, header, np, row, timeit, torch
from models import ce, copy_weights, small_gpt


def gpt_steps(autocast):
    rng = np.random.default_rng(0)
    x_np, y_np = rng.integers(0, 1000, (16, 64)), rng.integers(0, 1000, (16, 64))
    t_model = small_gpt(torch)
    steps = {}
    for L in (torch, ember):
        model = t_model if L is torch else small_gpt(ember)
        if L is ember:
            copy_weights(t_model, model)
        opt = L.optim.Adam(model.parameters(), lr=1e-3)
        x, y = L.from_numpy(x_np.copy()), L.from_numpy(y_np.copy())

        def step(model=model, opt=opt, x=x, y=y, L=L):
            opt.zero_grad()
            with L.autocast("cpu", dtype=L.bfloat16, enabled=autocast):
                loss = ce(L, model(x), y)
            loss.backward()
            opt.step()
            return loss.item()
        steps[L] = step
    return steps[ember], steps[torch]


def deep_network(L, num_layers=12, hidden=512, ck=None):
    """Seed 004's DeepNetwork; `ck` is checkpoint's use_reentrant (None: no checkpoint)."""
    nn = L.nn

    class MemoryEfficientBlock(nn.Module):
        def __init__(self, hidden_size=512):
            super().__init__()
            self.linear1 = nn.Linear(hidden_size, hidden_size * 4)
            self.linear2 = nn.Linear(hidden_size * 4, hidden_size)
            self.activation = nn.GELU()

        def forward(self, x):
            def custom_forward(hidden):
                hidden = self.linear1(hidden)
                hidden = self.activation(hidden)
                return self.linear2(hidden)
            if ck is None:
                return custom_forward(x)
            return L.utils.checkpoint.checkpoint(custom_forward, x, use_reentrant=ck)

    class DeepNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([MemoryEfficientBlock(hidden) for _ in range(num_layers)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    return DeepNetwork()


def torch_activation_bytes(model, x):
    """Bytes of the tensors torch saves during `model(x)`, each storage once, parameters left out."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()} | {x.untyped_storage().data_ptr()}
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            storages[s.data_ptr()] = s.nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    del out
    return sum(storages.values())


def deep_steps(ck):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((16, 512)).astype(np.float32)
    torch.manual_seed(0)
    t_model = deep_network(torch, ck=ck)
    e_model = deep_network(ember, ck=ck)
    copy_weights(t_model, e_model)
    steps, nbytes = {}, {}
    for L, model in ((torch, t_model), (ember, e_model)):
        opt = L.optim.SGD(model.parameters(), lr=1e-3)
        x = L.from_numpy(x_np.copy()).requires_grad_()

        def step(model=model, opt=opt, x=x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            return loss.item()
        steps[L] = step
        if L is ember:
            out = model(x)
            nbytes[L] = ember.autograd.graph.saved_tensors_bytes(out, activations_only=True)
            del out
        else:
            nbytes[L] = torch_activation_bytes(model, x)
    return steps, nbytes


def compare_all(fns, number, rounds, warmup=2):
    """Median seconds per call of each of `fns`, all timed in the same interleaved rounds (forward order,
    then reversed), so ratios between any two of them share the machine's load."""
    for _ in range(warmup):
        for f in fns:
            f()
    times = [[] for _ in fns]
    for r in range(rounds):
        gc.collect()
        order = list(range(len(fns))) if r % 2 == 0 else list(reversed(range(len(fns))))
        for i in order:
            times[i].append(timeit(fns[i], number))
    return [statistics.median(t) for t in times]


def main():
    quick = "--quick" in sys.argv
    number, rounds = (2, 3) if quick else (3, 9)

    header("small GPT train step (2 layers d128 4 heads, seq 64, batch 16, Adam), median ms")
    (fe32, ft32), (fe16, ft16) = gpt_steps(False), gpt_steps(True)
    e32, t32, e16, t16 = compare_all([fe32, ft32, fe16, ft16], number, rounds)
    row("float32", e32, t32, unit="ms", scale=1e3)
    row("bfloat16 autocast", e16, t16, unit="ms", scale=1e3)
    print(f"autocast / float32: ember {e16 / e32:.2f}x, torch {t16 / t32:.2f}x")

    header("seed 004 DeepNetwork, 12 blocks 512-2048-512 GELU, batch 16, SGD train step, median ms")
    variants = ((None, "plain"), (False, "checkpoint, use_reentrant=False"), (True, "checkpoint, use_reentrant=True"))
    built = [deep_steps(ck) for ck, _ in variants]
    fns = [f for steps, _ in built for f in (steps[ember], steps[torch])]
    times = compare_all(fns, number, rounds)
    pe, pt = times[0], times[1]
    pb = built[0][1]
    for i, (_, name) in enumerate(variants):
        e, t = times[2 * i], times[2 * i + 1]
        nbytes = built[i][1]
        row(name, e, t, unit="ms", scale=1e3)
        print(f"  saved activations at the end of forward: ember {nbytes[ember] / 2**20:.3f} MiB "
              f"({nbytes[ember] / pb[ember]:.3f} of plain), torch {nbytes[torch] / 2**20:.3f} MiB "
              f"({nbytes[torch] / pb[torch]:.3f} of plain); step time vs plain: ember {e / pe:.2f}x, "
              f"torch {t / pt:.2f}x")


if __name__ == "__main__":
    main()
