"""The native kernel runtime's workloads (issue 18), ember vs torch, at one thread and at default threads.

Each workload runs at 1 thread and at torch's default (physical cores) in one process: both libraries are
told the same count (`ember.set_num_threads`, `torch.set_num_threads`), and the rounds interleave as
everywhere (docs/benchmarking.md). Workloads: the memory-bound block (softmax, layer_norm, gelu forward and
backward on 2048 x 2048 floats) and its parts, the index, scan and group_norm kernels, the optimizers' updates,
a CIFAR-shaped CNN with BatchNorm, and the model train steps of models.py plus issue 18's LSTM (hidden 128).
Run: python benchmarks/native.py [--quick]
"""

import sys

import models
from _common import compare, ember, header, np, row, torch


def _threads(n):
    ember.set_num_threads(n)
    torch.set_num_threads(n)


def block(L, x):
    """softmax + layer_norm + gelu, forward and backward, on one 2048 x 2048 tensor."""
    F = L.nn.functional
    x = x.detach().requires_grad_()
    y = F.gelu(F.layer_norm(F.softmax(x, -1), x.shape[-1:]))
    y.backward(y)
    return x.grad


def _ops(a, t):
    F, G = ember.nn.functional, torch.nn.functional
    yield "softmax fwd 4M", lambda: F.softmax(a, -1), lambda: G.softmax(t, -1)
    yield "log_softmax fwd 4M", lambda: F.log_softmax(a, -1), lambda: G.log_softmax(t, -1)
    yield "layer_norm fwd 4M", lambda: F.layer_norm(a, a.shape[-1:]), lambda: G.layer_norm(t, t.shape[-1:])
    yield "gelu fwd 4M", lambda: F.gelu(a), lambda: G.gelu(t)
    yield "gelu tanh fwd 4M", lambda: F.gelu(a, approximate="tanh"), lambda: G.gelu(t, approximate="tanh")
    yield "silu fwd 4M", lambda: F.silu(a), lambda: G.silu(t)
    yield "x ** 3 4M", lambda: a ** 3, lambda: t ** 3
    yield "block fwd+bwd 4M", lambda: block(ember, a), lambda: block(torch, t)
    ia = np.random.default_rng(1).integers(0, a.shape[1], a.shape)
    ie, it = ember.from_numpy(ia), torch.from_numpy(ia)
    yield "gather dim 1 4M", lambda: a.gather(1, ie), lambda: t.gather(1, it)
    yield "scatter_add dim 1 4M", lambda: a.scatter_add(1, ie, a), lambda: t.scatter_add(1, it, t)
    yield "cumsum dim 1 4M", lambda: a.cumsum(1), lambda: t.cumsum(1)
    yield "group_norm fwd 4M", lambda: F.group_norm(a.reshape(16, 64, -1), 8), \
        lambda: G.group_norm(t.reshape(16, 64, -1), 8)


def cifar_cnn(L):
    nn = L.nn
    return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64 * 8 * 8, 10))


def lstm_h128(L):
    """A one-layer LSTM language model, hidden 128 (issue 18's LSTM row: seq 50, batch 64)."""
    nn = L.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 128)
            self.lstm = nn.LSTM(128, 128, 1)
            self.head = nn.Linear(128, 1000)

        def forward(self, x):
            return self.head(self.lstm(self.embed(x))[0])
    return LM()


LSTM_H128 = ("LSTM LM, hidden 128, seq 50, batch 64, SGD", lstm_h128,
             lambda r: (r.integers(0, 1000, (50, 64)), r.integers(0, 1000, (50, 64))), models.ce, "SGD", 0.1)


def _optim_step(L, params, opt):
    def step():
        for p in params:
            p.grad = p.detach() * 0.001
        opt.step()
    return step


def _steps(quick):
    rng = np.random.default_rng(0)
    pe = [ember.nn.Parameter(ember.from_numpy(rng.standard_normal((1024, 1024)).astype(np.float32)))
          for _ in range(4)]
    pt = [torch.nn.Parameter(torch.from_numpy(p.detach().numpy().copy())) for p in pe]
    yield "Adam step, 4 x 1M params", _optim_step(ember, pe, ember.optim.Adam(pe)), \
        _optim_step(torch, pt, torch.optim.Adam(pt)), 5
    yield "SGD momentum step, 4 x 1M params", _optim_step(ember, pe, ember.optim.SGD(pe, 0.1, 0.9)), \
        _optim_step(torch, pt, torch.optim.SGD(pt, 0.1, 0.9)), 5
    cifar = ("CIFAR CNN + BatchNorm 3x32x32, batch 64, SGD", cifar_cnn,
             lambda r: (r.standard_normal((64, 3, 32, 32)).astype(np.float32), r.integers(0, 10, 64)), models.ce,
             "SGD", 0.01)
    for spec in [cifar] + ([] if quick else models.WORKLOADS + [LSTM_H128]):
        name, fe, ft = models.workload(*spec)
        yield name, fe, ft, 3


def main():
    quick = "--quick" in sys.argv
    default = ember._runtime._physical_cores()
    x = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    a, t = ember.from_numpy(x), torch.from_numpy(x.copy())
    rounds = 5 if quick else 9
    for n in sorted({1, default}):
        _threads(n)
        header(f"native kernels, {n} thread{'s' if n > 1 else ''} (ms)")
        for name, fe, ft in _ops(a, t):
            e, tt = compare(fe, ft, number=5, rounds=rounds)
            row(name, e, tt, "ms", 1e3)
        for name, fe, ft, number in _steps(quick):
            e, tt = compare(fe, ft, number=number, rounds=rounds)
            row(name, e, tt, "ms", 1e3)


if __name__ == "__main__":
    main()
