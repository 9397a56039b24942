"""Per-sample gradients with ember.func: vmap(grad(...)) against torch.func's, and against a loop.

The MLP of benchmarks/models.py (784-512-256-10), a batch of 64 samples; each workload gives the gradient
of every sample's cross-entropy loss with respect to every parameter (64 x 535,818 numbers):
- `vmap(grad)`: vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y) with functional_call, in ember and
  in torch (same weights, same inputs), as a ratio ember/torch;
- `loop`: ember's own loop over the samples, one forward and backward each, against ember's vmap(grad)
  (and torch's loop against torch's vmap(grad), for scale: the 64 per-sample weight gradients are 137 MB
  of outer products that both ways must write).
One thread, interleaved rounds, medians (docs/benchmarking.md). Run: python benchmarks/func.py [--quick]
"""

import sys

from _common import compare, ember, header, np, row, torch
from models import copy_weights, mlp

BATCH = 64


def per_sample_vmap(L, model):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = L.func.functional_call(model, p, (x.unsqueeze(0),))
        return L.nn.functional.cross_entropy(out, y.unsqueeze(0))

    fn = L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))
    return lambda x, y: fn(params, x, y)


def per_sample_loop(L, model):
    params = list(model.parameters())

    def run(x, y):
        grads = []
        for i in range(x.shape[0]):
            loss = L.nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1])
            grads.append(L.autograd.grad(loss, params))
        return [L.stack(g) for g in zip(*grads)]

    return run


def main(quick=False):
    number, rounds = (1, 3) if quick else (3, 7)
    torch.manual_seed(0)
    tm, em = mlp(torch), mlp(ember)
    copy_weights(tm, em)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 784)).astype(np.float32)
    y = rng.integers(0, 10, BATCH)
    ex, ey, tx, ty = ember.from_numpy(x), ember.from_numpy(y), torch.from_numpy(x), torch.from_numpy(y)

    ev, tv = per_sample_vmap(ember, em), per_sample_vmap(torch, tm)
    eloop, tloop = per_sample_loop(ember, em), per_sample_loop(torch, tm)
    # the three give the same gradients
    g_e, g_t, g_l = ev(ex, ey), tv(tx, ty), eloop(ex, ey)
    for (k, a), b, c in zip(g_e.items(), g_t.values(), g_l):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5, err_msg=k)
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-3, atol=1e-5, err_msg=k)

    header(f"per-sample gradients, MLP 784-512-256-10, batch {BATCH}")
    e, t = compare(lambda: ev(ex, ey), lambda: tv(tx, ty), number=number, rounds=rounds)
    row("vmap(grad) ember vs torch.func", e, t, "ms", 1e3)
    loop, vm = compare(lambda: eloop(ex, ey), lambda: ev(ex, ey), number=number, rounds=rounds)
    row("ember loop over samples vs ember vmap(grad)", loop, vm, "ms", 1e3)
    tl, tvm = compare(lambda: tloop(tx, ty), lambda: tv(tx, ty), number=number, rounds=rounds)
    row("(torch's loop over samples vs torch vmap(grad))", tl, tvm, "ms", 1e3)
    print(f"ember vmap(grad) is {loop / vm:.1f}x faster than ember's loop (torch's: {tl / tvm:.1f}x); "
          f"{e / t:.2f}x torch's vmap(grad)")


if __name__ == "__main__":
    main("--quick" in sys.argv)
