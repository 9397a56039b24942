"""A character-level LSTM language model (the classic char-rnn), trained on a text file.

    python examples/char_lstm/main.py                      # trains on examples/data/tiny.txt
    python examples/char_lstm/main.py --data input.txt --epochs 3  # any text file (see examples/data)
    python examples/char_lstm/main.py --resume             # continue from the last checkpoint
    python examples/char_lstm/main.py --dry-run            # one quick batch per phase

Idiomatic PyTorch, written against ember (`import torch` instead runs it on PyTorch).
"""

import argparse
import math
import os

from tqdm import tqdm

import ember as torch
import ember.nn as nn
import ember.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class CharLSTM(nn.Module):
    def __init__(self, vocab, embed=64, hidden=256, layers=2, dropout=0.2):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, layers, dropout=dropout, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def batches(data, seq_len, batch_size, generator):
    """Random windows of the text: inputs and the same windows shifted by one character."""
    n = (len(data) - 1 - seq_len) // (seq_len * batch_size)
    for _ in range(max(n, 1)):
        starts = torch.randint(0, len(data) - seq_len - 1, (batch_size,), generator=generator)
        idx = starts.unsqueeze(1) + torch.arange(seq_len + 1)
        chunk = data[idx]
        yield chunk[:, :-1], chunk[:, 1:]


@torch.no_grad()
def sample(model, stoi, itos, prompt="\n", length=200, temperature=0.8):
    model.eval()
    x = torch.tensor([[stoi[c] for c in prompt]])
    out, state = list(prompt), None
    for _ in range(length):
        logits, state = model(x, state)
        probs = F.softmax(logits[0, -1] / temperature, dim=-1)
        nxt = torch.multinomial(probs, 1)
        out.append(itos[nxt.item()])
        x = nxt.view(1, 1)
    return "".join(out)


def main():
    parser = argparse.ArgumentParser(description="char-level LSTM language model, with ember")
    parser.add_argument("--data", default=os.path.join(HERE, "..", "data", "tiny.txt"))
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", default=os.path.join("checkpoints", "char_lstm.pt"))
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--tensorboard", metavar="LOGDIR", help="log losses for TensorBoard to LOGDIR")
    args = parser.parse_args()
    # with --tensorboard, losses go to event files: `tensorboard --logdir LOGDIR` shows them
    writer = None
    if args.tensorboard:
        from ember.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(args.tensorboard)

    torch.manual_seed(args.seed)
    text = open(args.data, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi, itos = {c: i for i, c in enumerate(chars)}, chars
    data = torch.tensor([stoi[c] for c in text])
    split = int(0.9 * len(data))
    train, val = data[:split], data[split:]
    model = CharLSTM(len(chars))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    start = 1
    if args.resume and os.path.exists(args.checkpoint):
        ckpt = torch.load(args.checkpoint)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["epoch"] + 1
        print(f"resumed from {args.checkpoint} at epoch {start}")

    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(start, args.epochs + 1):
        model.train()
        bar = tqdm(batches(train, args.seq_len, args.batch_size, gen), desc=f"epoch {epoch}", leave=False)
        total, steps = 0.0, 0
        for x, y in bar:
            logits, _ = model(x)
            loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            total += loss.item()  # every batch holds batch_size x seq_len characters
            steps += 1
            bar.set_postfix(loss=f"{loss.item():.3f}")
            if args.dry_run:
                break
        model.eval()
        with torch.no_grad():
            vx, vy = next(batches(val, args.seq_len, args.batch_size, gen))
            vloss = F.cross_entropy(model(vx)[0].reshape(-1, len(chars)), vy.reshape(-1)).item()
        if writer:
            writer.add_scalars("loss", {"train": total / steps, "val": vloss}, epoch)
        print(f"epoch {epoch}: train loss {total / steps:.3f}  val loss {vloss:.3f}  "
              f"val perplexity {math.exp(vloss):.1f}", flush=True)
        os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                   args.checkpoint)
        if args.dry_run:
            break
    print(sample(model, stoi, itos, length=20 if args.dry_run else 300))
    if writer:
        writer.close()


if __name__ == "__main__":
    main()
