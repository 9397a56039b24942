"""Forward-mode AD against torch: a JVP through an MLP and a small CNN (explicit rules: matmul, add, tanh,
softmax, conv, layer_norm), a forward-over-reverse Hessian-vector product of the MLP's loss, and the
overhead of a dual level on a chain of small ops. One thread, interleaved rounds, ratios ember / torch.

    python3 benchmarks/forward_ad.py
"""

from _common import compare, ember, header, np, row, torch


def _mlp(lib, x, ws, v):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        h = fw.make_dual(x, v)
        for w in ws:
            h = (h @ w).tanh()
        return fw.unpack_dual(h.softmax(-1)).tangent


def _cnn(lib, x, c, v):
    fw = lib.autograd.forward_ad
    F = lib.nn.functional
    with fw.dual_level():
        h = F.conv2d(fw.make_dual(x, v), c, padding=1).relu()
        h = F.layer_norm(h, h.shape[-2:])
        return fw.unpack_dual(F.max_pool2d(h, 2).sum()).tangent


def _hvp(lib, x, ws, v):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        xd = fw.make_dual(x, v)
        h = xd
        for w in ws:
            h = (h @ w).tanh()
        g, = lib.autograd.grad(h.logsumexp(-1).sum(), x, create_graph=True)
        return fw.unpack_dual(g).tangent


def _chain(lib, x, v):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        h = fw.make_dual(x, v)
        for _ in range(100):
            h = h * 1.01 + 0.5
        return fw.unpack_dual(h).tangent


def main():
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((64, 256)), "w1": rng.standard_normal((256, 256)) / 16,
              "w2": rng.standard_normal((256, 10)) / 16, "v": rng.standard_normal((64, 256)),
              "img": rng.standard_normal((16, 3, 16, 16)), "c": rng.standard_normal((8, 3, 3, 3)) / 5,
              "vi": rng.standard_normal((16, 3, 16, 16)), "s": rng.standard_normal(16)}
    t = {k: torch.from_numpy(a.astype(np.float32)) for k, a in arrays.items()}
    e = {k: ember.from_numpy(a.astype(np.float32)) for k, a in arrays.items()}
    header("forward-mode AD (float32, 1 thread)")
    for name, fn, keys, number in [
            ("JVP, MLP 256-256-10, batch 64", _mlp, ("x", "w1w2", "v"), 50),
            ("JVP, conv + layer_norm + max_pool, 16x3x16x16", _cnn, ("img", "c", "vi"), 30),
            ("HVP forward-over-reverse, MLP, batch 64", _hvp, ("x", "w1w2", "v"), 20),
            ("100 dual scalar-tensor ops, 16 elements", _chain, ("s", "s"), 20)]:
        def args(d):
            return [[d["w1"], d["w2"]] if k == "w1w2" else d[k] for k in keys]
        ea, ta = args(e), args(t)
        if fn is _hvp:
            ea[0] = ea[0].clone().requires_grad_()
            ta[0] = ta[0].clone().requires_grad_()
        es, ts = compare(lambda: fn(ember, *ea), lambda: fn(torch, *ta), number=number, rounds=5)
        row(name, es, ts)


if __name__ == "__main__":
    main()
