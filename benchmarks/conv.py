"""Convolution and pooling, forward and forward+backward, ember vs torch (medians, ratios).

Cases: a LeNet-sized conv stack (batch 64, 1x28x28 input, 6 then 16 5x5 filters) and a ResNet-block-sized
conv (batch 32, 64x32x32, 3x3, padding 1), each with the 2x2 max pool that follows it, at one thread.
`--threads` (issue 18's conv and pooling kernels, ember/_native/conv.c, pool.c) instead runs, at one thread
and at the default thread count in one process (as benchmarks/native.py): the CIFAR CNN with BatchNorm train
step, the MNIST example's, CIFAR and ResNet layer shapes (3x3, stride 2, 1x1, depthwise) forward and
forward+backward, and max/avg/adaptive-avg pooling.

`--resnet` times every ResNet-18 layer shape (224 x 224 input; the stem, the 3x3 convolutions of each
stage, their stride-2 first convolutions and 1x1 shortcuts) separately in each direction: forward, input
gradient and weight gradient, ember's kernels (ember/_ops/conv.py, on NumPy arrays) against torch's
`aten.convolution` / `aten.convolution_backward` with one output mask, at 1 and 2 threads, batch 8 (or
`--batch 8,16,32`). Timed in interleaved rounds, median, in process CPU time (`--wall`: wall-clock), which
on a loaded machine is the fair clock at 1 thread; at 2 threads it counts both threads' work, and idle OpenMP
workers that spin count too, so run it as `OMP_WAIT_POLICY=PASSIVE python benchmarks/conv.py --resnet`
(torch's OpenMP then sleeps when idle, as ember's pool does).

Run: python benchmarks/conv.py [--threads [--quick] | --resnet [--batch N,..] [--wall]]
"""

import gc
import statistics
import sys
import time

from _common import compare, ember, header, np, row, torch


def case(lib, x, w, pad, pool, backward):
    F = lib.nn.functional
    xt = lib.from_numpy(x.copy()).requires_grad_(backward)
    wt = lib.from_numpy(w.copy()).requires_grad_(backward)
    bt = lib.zeros(w.shape[0]).requires_grad_(backward)

    def run():
        y = F.conv2d(xt, wt, bt, padding=pad)
        if pool:
            y = F.max_pool2d(y, 2)
        if backward:
            y.sum().backward()
            xt.grad = wt.grad = bt.grad = None
        return y
    return run


def main():
    rng = np.random.default_rng(0)
    cases = [
        ("LeNet conv1 64x1x28x28, 6@5x5", (64, 1, 28, 28), (6, 1, 5, 5), 0, 20),
        ("LeNet conv2 64x6x12x12, 16@5x5", (64, 6, 12, 12), (16, 6, 5, 5), 0, 20),
        ("ResNet block 32x64x32x32, 64@3x3 p1", (32, 64, 32, 32), (64, 64, 3, 3), 1, 2),
    ]
    header("conv2d (+ max_pool2d 2x2): ms per call")
    for name, xs, ws, pad, number in cases:
        x = rng.standard_normal(xs).astype(np.float32)
        w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
        for pool in (False, True):
            for backward in (False, True):
                label = f"{name}{' +pool' if pool else ''} {'fwd+bwd' if backward else 'fwd'}"
                e, t = compare(case(ember, x, w, pad, pool, backward), case(torch, x, w, pad, pool, backward),
                               number=number, rounds=5, warmup=1)
                row(label, e, t, "ms", 1e3)
    header("max_pool2d 2x2 alone: ms per call")
    for shape in ((64, 6, 24, 24), (32, 64, 32, 32)):
        x = rng.standard_normal(shape).astype(np.float32)
        for backward in (False, True):
            def mk(lib):
                xt = lib.from_numpy(x.copy()).requires_grad_(backward)

                def run():
                    y = lib.nn.functional.max_pool2d(xt, 2)
                    if backward:
                        y.sum().backward()
                        xt.grad = None
                return run
            e, t = compare(mk(ember), mk(torch), number=10, rounds=5, warmup=1)
            row(f"{shape} {'fwd+bwd' if backward else 'fwd'}", e, t, "ms", 1e3)


# ---- at 1 thread and default threads (--threads) -----------------------------------------------------------

_LAYERS = [  # name, input, weight, conv2d keywords
    ("MNIST conv1 64x1x28x28, 16@5x5 p2", (64, 1, 28, 28), (16, 1, 5, 5), {"padding": 2}),
    ("MNIST conv2 64x16x14x14, 32@5x5 p2", (64, 16, 14, 14), (32, 16, 5, 5), {"padding": 2}),
    ("CIFAR conv1 64x3x32x32, 32@3x3 p1", (64, 3, 32, 32), (32, 3, 3, 3), {"padding": 1}),
    ("CIFAR conv2 64x32x16x16, 64@3x3 p1", (64, 32, 16, 16), (64, 32, 3, 3), {"padding": 1}),
    ("ResNet stem 8x3x112x112, 64@7x7 s2", (8, 3, 112, 112), (64, 3, 7, 7), {"stride": 2, "padding": 3}),
    ("ResNet 3x3 16x64x28x28, 64@3x3 p1", (16, 64, 28, 28), (64, 64, 3, 3), {"padding": 1}),
    ("ResNet 3x3 s2 16x64x28x28, 128@3x3", (16, 64, 28, 28), (128, 64, 3, 3), {"stride": 2, "padding": 1}),
    ("ResNet 1x1 s2 16x64x28x28, 128@1x1", (16, 64, 28, 28), (128, 64, 1, 1), {"stride": 2}),
    ("depthwise 16x96x28x28, 3x3 p1", (16, 96, 28, 28), (96, 1, 3, 3), {"padding": 1, "groups": 96}),
]

_POOLS = [
    ("max_pool2d 2x2, 64x32x32x32", (64, 32, 32, 32), lambda F, x: F.max_pool2d(x, 2)),
    ("max_pool2d 3x3 s2 p1, 16x64x56x56", (16, 64, 56, 56), lambda F, x: F.max_pool2d(x, 3, 2, 1)),
    ("avg_pool2d 2x2, 64x32x32x32", (64, 32, 32, 32), lambda F, x: F.avg_pool2d(x, 2)),
    ("adaptive_avg_pool2d 7x7, 16x512x14x14", (16, 512, 14, 14), lambda F, x: F.adaptive_avg_pool2d(x, 7)),
]


def _layer(lib, x, w, kw, backward):
    F = lib.nn.functional
    xt = lib.from_numpy(x.copy()).requires_grad_(backward)
    wt = lib.from_numpy(w.copy()).requires_grad_(backward)
    bt = lib.zeros(w.shape[0]).requires_grad_(backward)

    def run():
        y = F.conv2d(xt, wt, bt, **kw)
        if backward:
            y.backward(y)
            xt.grad = wt.grad = bt.grad = None
    return run


def _pool(lib, x, fn, backward):
    xt = lib.from_numpy(x.copy()).requires_grad_(backward)

    def run():
        y = fn(lib.nn.functional, xt)
        if backward:
            y.backward(y)
            xt.grad = None
    return run


def threads_main(quick):
    import models
    from native import _threads, cifar_cnn
    rng = np.random.default_rng(0)
    default = ember._runtime._physical_cores()
    rounds = 5 if quick else 9
    for n in sorted({1, default}):
        _threads(n)
        header(f"conv and pooling, {n} thread{'s' if n > 1 else ''} (ms)")
        name, fe, ft = models.workload(
            "CIFAR CNN + BatchNorm 3x32x32, batch 64, SGD", cifar_cnn,
            lambda r: (r.standard_normal((64, 3, 32, 32)).astype(np.float32), r.integers(0, 10, 64)), models.ce,
            "SGD", 0.01)
        e, t = compare(fe, ft, number=3, rounds=rounds)
        row(name, e, t, "ms", 1e3)
        for label, xs, ws, kw in _LAYERS:
            x = rng.standard_normal(xs).astype(np.float32)
            w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
            for backward in (False, True):
                e, t = compare(_layer(ember, x, w, kw, backward), _layer(torch, x, w, kw, backward), number=3,
                               rounds=rounds, warmup=2)
                row(f"{label} {'fwd+bwd' if backward else 'fwd'}", e, t, "ms", 1e3)
        for label, shape, fn in _POOLS:
            x = rng.standard_normal(shape).astype(np.float32)
            for backward in (False, True):
                e, t = compare(_pool(ember, x, fn, backward), _pool(torch, x, fn, backward), number=5,
                               rounds=rounds, warmup=2)
                row(f"{label} {'fwd+bwd' if backward else 'fwd'}", e, t, "ms", 1e3)


# ---- ResNet-18's layers, each direction (--resnet) ------------------------------------------------------

_RESNET18 = [  # name, in channels, input size, out channels, kernel, stride, padding
    ("stem 7x7 s2", 3, 224, 64, 7, 2, 3),
    ("layer1 3x3", 64, 56, 64, 3, 1, 1),
    ("layer2 3x3 s2", 64, 56, 128, 3, 2, 1),
    ("layer2 3x3", 128, 28, 128, 3, 1, 1),
    ("layer2 1x1 s2", 64, 56, 128, 1, 2, 0),
    ("layer3 3x3 s2", 128, 28, 256, 3, 2, 1),
    ("layer3 3x3", 256, 14, 256, 3, 1, 1),
    ("layer3 1x1 s2", 128, 28, 256, 1, 2, 0),
    ("layer4 3x3 s2", 256, 14, 512, 3, 2, 1),
    ("layer4 3x3", 512, 7, 512, 3, 1, 1),
    ("layer4 1x1 s2", 256, 14, 512, 1, 2, 0),
]


def _directions(n, c, size, o, k, s, p):
    """{direction: (ember fn, torch fn)} for one layer shape at batch n."""
    from ember._ops import conv as C
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, size, size)).astype(np.float32)
    w = (rng.standard_normal((o, c, k, k)) * 0.1).astype(np.float32)
    out = (size + 2 * p - k) // s + 1
    g = rng.standard_normal((n, o, out, out)).astype(np.float32)
    st, pads, dil = (s, s), ((p, p), (p, p)), (1, 1)
    tx, tw, tg = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(g)
    conv, back = torch.ops.aten.convolution, torch.ops.aten.convolution_backward
    args = ([s, s], [p, p], [1, 1], False, [0, 0], 1)
    return {
        "forward": (lambda: C._conv_fwd(x, w, None, st, pads, dil, 1), lambda: conv(tx, tw, None, *args)),
        "input grad": (lambda: C._conv_input_grad(g, w, (size, size), st, pads, dil, 1),
                       lambda: back(tg, tx, tw, None, *args, [True, False, False])),
        "weight grad": (lambda: C._conv_weight_grad(x, g, (k, k), st, pads, dil, 1),
                        lambda: back(tg, tx, tw, None, *args, [False, True, False])),
    }


def resnet_main():
    clock = time.perf_counter if "--wall" in sys.argv else time.process_time
    batch = sys.argv[sys.argv.index("--batch") + 1] if "--batch" in sys.argv else "8"
    batches = [int(b) for b in batch.split(",")]

    def timed(f, number):
        t = clock()
        for _ in range(number):
            f()
        return (clock() - t) / number

    for n_threads in (1, 2):
        ember.set_num_threads(n_threads)
        torch.set_num_threads(n_threads)
        for n in batches:
            header(f"ResNet-18 layers, batch {n}, {n_threads} thread{'s' if n_threads > 1 else ''} "
                   f"({'wall-clock' if clock is time.perf_counter else 'process CPU'} ms)")
            for name, *shape in _RESNET18:
                for direction, (fe, ft) in _directions(n, *shape).items():
                    fe(), ft(), fe(), ft()
                    number = max(1, int(0.03 / max(timed(ft, 1), 1e-5)))
                    e, t = [], []
                    for r in range(7):
                        gc.collect()
                        for f in ((fe, ft) if r % 2 == 0 else (ft, fe)):
                            (e if f is fe else t).append(timed(f, number))
                    row(f"{name} {direction}", statistics.median(e), statistics.median(t), "ms", 1e3)


if __name__ == "__main__":
    if "--threads" in sys.argv:
        threads_main("--quick" in sys.argv)
    elif "--resnet" in sys.argv:
        resnet_main()
    else:
        main()
