"""A small GPT (decoder-only Transformer) trained on characters of a text file.

    python examples/gpt/main.py                 # trains on examples/data/tiny.txt
    python examples/gpt/main.py --resume        # continue from the last checkpoint
    python examples/gpt/main.py --dry-run       # one quick batch per phase

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


class GPT(nn.Module):
    def __init__(self, vocab, block=64, d_model=128, heads=4, layers=2, dropout=0.1):
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(block), persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


def get_batch(data, block, batch_size, generator):
    starts = torch.randint(0, len(data) - block - 1, (batch_size,), generator=generator)
    idx = starts.unsqueeze(1) + torch.arange(block + 1)
    chunk = data[idx]
    return chunk[:, :-1], chunk[:, 1:]


@torch.no_grad()
def generate(model, idx, steps, temperature=0.8):
    model.eval()
    for _ in range(steps):
        logits = model(idx[:, -model.block:])[:, -1] / temperature
        idx = torch.cat([idx, torch.multinomial(F.softmax(logits, dim=-1), 1)], dim=1)
    return idx


def main():
    parser = argparse.ArgumentParser(description="small GPT on characters, with ember")
    parser.add_argument("--data", default=os.path.join(HERE, "..", "data", "tiny.txt"))
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=300, help="training steps per epoch")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", default=os.path.join("checkpoints", "gpt.pt"))
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
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text])
    split = int(0.9 * len(data))
    model = GPT(len(chars), block=args.block)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * args.steps)
    start = 1
    if args.resume and os.path.exists(args.checkpoint):
        ckpt = torch.load(args.checkpoint)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        start = ckpt["epoch"] + 1
        print(f"resumed from {args.checkpoint} at epoch {start}")

    gen = torch.Generator().manual_seed(args.seed)
    for epoch in range(start, args.epochs + 1):
        model.train()
        bar = tqdm(range(1 if args.dry_run else args.steps), desc=f"epoch {epoch}", leave=False)
        total, steps = 0.0, 0
        for _ in bar:
            x, y = get_batch(data[:split], args.block, args.batch_size, gen)
            loss = F.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
            steps += 1
            bar.set_postfix(loss=f"{loss.item():.3f}")
        model.eval()
        with torch.no_grad():
            x, y = get_batch(data[split:], args.block, args.batch_size, gen)
            vloss = F.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1)).item()
        if writer:
            writer.add_scalars("loss", {"train": total / steps, "val": vloss}, epoch)
        print(f"epoch {epoch}: train loss {total / steps:.3f}  val loss {vloss:.3f}  "
              f"val perplexity {math.exp(vloss):.1f}", flush=True)
        os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "epoch": epoch}, args.checkpoint)
        if args.dry_run:
            break
    out = generate(model, torch.tensor([[stoi["\n"]]]), 20 if args.dry_run else 300)
    print("".join(chars[i] for i in out[0].tolist()))
    if writer:
        writer.close()


if __name__ == "__main__":
    main()
