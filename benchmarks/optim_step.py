"""optimizer.step() time, ember vs torch, for a model with many small parameters and for an MLP.

Workloads: 100 weights of 64x64 plus 100 biases of 64 ("many small"), and the MLP 784-512-256-10 (weights
and biases). Gradients are set once; each timed call is one `step()`. torch runs its CPU default (the
single-tensor for-loop implementation: foreach is only the default on accelerators) and, as a second column,
foreach=True. Ratios are ember / torch (lower is better for ember).

    python benchmarks/optim_step.py
"""

from _common import compare, ember, header, np, row, torch

SHAPES = {
    "many small (100x 64x64 + 100x 64)": [(64, 64)] * 100 + [(64,)] * 100,
    "MLP 784-512-256-10": [(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)],
}
OPTIMIZERS = {
    "SGD momentum=0.9": ("SGD", dict(lr=1e-3, momentum=0.9)),
    "SGD nesterov, weight_decay": ("SGD", dict(lr=1e-3, momentum=0.9, nesterov=True, weight_decay=1e-4)),
    "Adam": ("Adam", dict(lr=1e-3)),
    "AdamW amsgrad": ("AdamW", dict(lr=1e-3, amsgrad=True)),
    "RMSprop": ("RMSprop", dict(lr=1e-3)),
}


def _params(lib, shapes, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for s in shapes:
        w = rng.standard_normal(s).astype(np.float32) * 0.01
        g = rng.standard_normal(s).astype(np.float32) * 0.01
        if lib is torch:
            p = torch.from_numpy(w).requires_grad_()
            p.grad = torch.from_numpy(g)
        else:
            p = ember.from_numpy(w).requires_grad_()
            p.grad = ember.from_numpy(g)
        params.append(p)
    return params


def main():
    for workload, shapes in SHAPES.items():
        number = 20 if "many" in workload else 10
        header(f"optimizer.step(), {workload}: ember vs torch (CPU default for-loop)")
        foreach_rows = []
        for label, (name, kwargs) in OPTIMIZERS.items():
            oe = getattr(ember.optim, name)(_params(ember, shapes), **kwargs)
            ot = getattr(torch.optim, name)(_params(torch, shapes), **kwargs)
            otf = getattr(torch.optim, name)(_params(torch, shapes), foreach=True, **kwargs)
            e, t = compare(oe.step, ot.step, number=number, rounds=5)
            row(label, e, t)
            e2, tf = compare(oe.step, otf.step, number=number, rounds=5)
            foreach_rows.append((label, e2, tf))
        header(f"optimizer.step(), {workload}: ember vs torch foreach=True")
        for label, e, t in foreach_rows:
            row(label, e, t)


if __name__ == "__main__":
    main()
