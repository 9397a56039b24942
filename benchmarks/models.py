"""Training-step time of four reference models, ember vs torch in one process (docs/benchmarking.md).

The same model code builds each model in both libraries (`lib` is ember or torch); ember's weights are
copied from torch's so both do identical arithmetic. Run: python benchmarks/models.py [--quick]
"""

import sys

from _common import compare, ember, header, np, row, torch


def mlp(L):
    nn = L.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))


def lenet(L):
    nn = L.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 120), nn.ReLU(), nn.Linear(120, 84),
                         nn.ReLU(), nn.Linear(84, 10))


def lstm_lm(L):
    nn = L.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 256)
            self.lstm = nn.LSTM(256, 256, 2)
            self.head = nn.Linear(256, 1000)

        def forward(self, x):
            return self.head(self.lstm(self.embed(x))[0])
    return LM()


def small_gpt(L, is_causal=False):
    """A 2-layer encoder with a causal mask; `is_causal=True` also tells the encoder so (compile.py's NOTE [ The
    small GPT's graph break ])."""
    nn = L.nn

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 128)
            layer = nn.TransformerEncoderLayer(128, 4, 512, 0.0, batch_first=True)
            self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(128, 1000)
            self.mask = nn.Transformer.generate_square_subsequent_mask(64)

        def forward(self, x):
            if is_causal:
                return self.head(self.blocks(self.embed(x), mask=self.mask, is_causal=True))
            return self.head(self.blocks(self.embed(x), mask=self.mask))
    return GPT()


def copy_weights(src, dst):
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)


def workload(name, build, make_batch, loss_fn, opt, lr):
    rng = np.random.default_rng(0)
    x_np, y_np = make_batch(rng)
    steps = {}
    t_model = build(torch)
    for L in (torch, ember):
        model = t_model if L is torch else build(ember)
        if L is ember:
            copy_weights(t_model, model)
        optimizer = getattr(L.optim, opt)(model.parameters(), lr=lr, **({"momentum": 0.9} if opt == "SGD" else {}))
        x, y = L.from_numpy(x_np.copy()), L.from_numpy(y_np.copy())

        def step(model=model, optimizer=optimizer, x=x, y=y, L=L):
            optimizer.zero_grad()
            loss = loss_fn(L, model(x), y)
            loss.backward()
            optimizer.step()
            return loss.item()
        steps[L] = step
    return name, steps[ember], steps[torch]


def ce(L, out, y):
    return L.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


WORKLOADS = [
    ("MLP 784-512-256-10, batch 128, SGD momentum", mlp,
     lambda r: (r.standard_normal((128, 784)).astype(np.float32), r.integers(0, 10, 128)), ce, "SGD", 0.01),
    ("LeNet 1x28x28, batch 64, Adam", lenet,
     lambda r: (r.standard_normal((64, 1, 28, 28)).astype(np.float32), r.integers(0, 10, 64)), ce, "Adam", 1e-3),
    ("2-layer LSTM LM, hidden 256, seq 35, batch 20", lstm_lm,
     lambda r: (r.integers(0, 1000, (35, 20)), r.integers(0, 1000, (35, 20))), ce, "SGD", 0.1),
    ("small GPT, 2 layers d128 4 heads, seq 64, batch 16", small_gpt,
     lambda r: (r.integers(0, 1000, (16, 64)), r.integers(0, 1000, (16, 64))), ce, "Adam", 1e-3),
]


def main():
    quick = "--quick" in sys.argv
    header("training step (forward + backward + optimizer step), median ms")
    for spec in WORKLOADS:
        name, fe, ft = workload(*spec)
        e, t = compare(fe, ft, number=2 if quick else 5, rounds=3 if quick else 7)
        row(name, e, t, unit="ms", scale=1e3)
    header("MLP forward, no grad, batch 1024, median ms")
    tm = mlp(torch)
    em = mlp(ember)
    copy_weights(tm, em)
    x = np.random.default_rng(1).standard_normal((1024, 784)).astype(np.float32)
    ex, tx = ember.from_numpy(x), torch.from_numpy(x)

    def fe():
        with ember.no_grad():
            return em(ex)

    def ft():
        with torch.no_grad():
            return tm(tx)
    e, t = compare(fe, ft, number=5)
    row("MLP forward batch 1024", e, t, unit="ms", scale=1e3)
    a = np.random.default_rng(2).standard_normal((1024, 1024)).astype(np.float32)
    ea, ta = ember.from_numpy(a), torch.from_numpy(a)
    e, t = compare(lambda: ea @ ea, lambda: ta @ ta, number=3)
    row("1024^3 float32 matmul", e, t, unit="ms", scale=1e3)


if __name__ == "__main__":
    main()
