"""Convolution and max pooling, forward and forward+backward, ember vs torch (one thread, medians, ratios).

Cases: a LeNet-sized conv stack (batch 64, 1x28x28 input, 6 then 16 5x5 filters) and a ResNet-block-sized
conv (batch 32, 64x32x32, 3x3, padding 1), each with the 2x2 max pool that follows it.

Run: python benchmarks/conv.py
"""

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


if __name__ == "__main__":
    main()
