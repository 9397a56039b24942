"""Sequence-model training steps, ember vs torch: an LSTM language model and a small GPT-style encoder.

1. LSTM LM: Embedding(1000, 256) -> 2-layer LSTM(256, 256) -> Linear(256, 1000), cross-entropy; sequence 35,
   batch 20; forward + backward + SGD step.
2. GPT-style: Embedding(1000, 128) + learned positions -> TransformerEncoder (2 layers, d_model 128, 4 heads,
   feed-forward 512, dropout 0, batch_first, causal mask) -> Linear(128, 1000); sequence 64, batch 16;
   forward + backward + SGD step.
Also the recurrent layer alone (LSTM/GRU forward + backward) to show the fused layer's cost.

Same initial weights in both libraries (torch's state_dict loaded into ember). One thread, interleaved rounds
(A B B A), medians; ratio = ember / torch.

Usage: python benchmarks/rnn.py [--rounds 5] [--number 3]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import compare, ember, header, np, row, torch  # noqa: E402

VOCAB = 1000


def _copy(emod, tmod):
    emod.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tmod.state_dict().items()})


def lstm_lm(lib):
    nn = lib.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, 256)
            self.rnn = nn.LSTM(256, 256, num_layers=2)
            self.out = nn.Linear(256, VOCAB)

        def forward(self, x):
            h, _ = self.rnn(self.emb(x))
            return self.out(h)
    return LM()


def gpt(lib, seq):
    nn = lib.nn

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, 128)
            self.pos = nn.Embedding(seq, 128)
            layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.out = nn.Linear(128, VOCAB)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq))
            self.register_buffer("positions", lib.arange(seq))

        def forward(self, x):
            h = self.emb(x) + self.pos(self.positions)
            return self.out(self.enc(h, mask=self.mask, is_causal=True))
    return GPT()


def train_step(lib, model, opt, x, y):
    def step():
        opt.zero_grad()
        logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
    return step


def bench_model(name, build, shape, args):
    rng = np.random.default_rng(0)
    x = rng.integers(0, VOCAB, shape).astype(np.int64)
    y = rng.integers(0, VOCAB, shape).astype(np.int64)
    torch.manual_seed(0)
    tm = build(torch)
    em = build(ember)
    _copy(em, tm)
    steps = []
    for lib, m in ((ember, em), (torch, tm)):
        opt = lib.optim.SGD(m.parameters(), lr=0.01)
        steps.append(train_step(lib, m, opt, lib.from_numpy(x.copy()), lib.from_numpy(y.copy())))
    e, t = compare(steps[0], steps[1], number=args.number, rounds=args.rounds, warmup=1)
    row(name, e, t, "ms", 1e3)


def bench_layer(cls, args):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((35, 20, 256)).astype(np.float32)
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(256, 256, num_layers=2)
    em = getattr(ember.nn, cls)(256, 256, num_layers=2)
    _copy(em, tm)

    def step(lib, m):
        xin = lib.from_numpy(x.copy()).requires_grad_()

        def run():
            out, _ = m(xin)
            out.sum().backward()
        return run
    e, t = compare(step(ember, em), step(torch, tm), number=args.number, rounds=args.rounds, warmup=1)
    row(f"{cls}(256, 256, 2 layers) fwd+bwd, seq 35 batch 20", e, t, "ms", 1e3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--number", type=int, default=3)
    args = p.parse_args()
    header("Sequence models: one training step (forward + backward + SGD), one thread")
    bench_model("LSTM LM (vocab 1000, hidden 256, 2 layers, 35x20)", lstm_lm, (35, 20), args)
    bench_model("GPT-style (2 layers, d 128, 4 heads, causal, 16x64)", lambda lib: gpt(lib, 64), (16, 64), args)
    bench_layer("LSTM", args)
    bench_layer("GRU", args)


if __name__ == "__main__":
    main()
