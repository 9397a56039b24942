"""A convolutional autoencoder on handwritten digits: compress 28x28 images to 16 numbers and back.

    python examples/autoencoder/main.py            # a few epochs on the shipped MNIST subset
    python examples/autoencoder/main.py --resume   # continue from the last checkpoint
    python examples/autoencoder/main.py --dry-run  # one quick batch per phase

Idiomatic PyTorch, written against ember (`import torch` instead runs it on PyTorch).
"""

import argparse
import os

import numpy as np
from tqdm import tqdm

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))


class AutoEncoder(nn.Module):
    def __init__(self, code=16):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, 3, stride=2, padding=1), nn.ReLU(),    # 14x14
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),   # 7x7
            nn.Flatten(), nn.Linear(32 * 7 * 7, code))
        self.decoder = nn.Sequential(
            nn.Linear(code, 32 * 7 * 7), nn.ReLU(), nn.Unflatten(1, (32, 7, 7)),
            nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(16, 1, 3, stride=2, padding=1, output_padding=1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def main():
    parser = argparse.ArgumentParser(description="convolutional autoencoder on MNIST digits, with ember")
    parser.add_argument("--data", default=os.path.join(HERE, "..", "data", "mnist_5k.npz"))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", default=os.path.join("checkpoints", "autoencoder.pt"))
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
    d = np.load(args.data)
    train = TensorDataset(torch.from_numpy(d["train_images"].astype(np.float32) / 255.0).unsqueeze(1))
    test = torch.from_numpy(d["test_images"].astype(np.float32) / 255.0).unsqueeze(1)
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
    model = AutoEncoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    start = 1
    if args.resume and os.path.exists(args.checkpoint):
        ckpt = torch.load(args.checkpoint)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start = ckpt["epoch"] + 1
        print(f"resumed from {args.checkpoint} at epoch {start}")

    for epoch in range(start, args.epochs + 1):
        model.train()
        bar = tqdm(loader, desc=f"epoch {epoch}", leave=False)
        total, seen = 0.0, 0
        for (x,) in bar:
            loss = F.binary_cross_entropy_with_logits(model(x), x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
            seen += len(x)
            bar.set_postfix(loss=f"{loss.item():.4f}")
            if args.dry_run:
                break
        model.eval()
        with torch.no_grad():
            recon = torch.sigmoid(model(test[:200] if args.dry_run else test))
            mse = F.mse_loss(recon, test[:200] if args.dry_run else test).item()
        if writer:
            writer.add_scalars("loss", {"train": total / seen, "test_mse": mse}, epoch)
        print(f"epoch {epoch}: train loss {total / seen:.4f}  test reconstruction MSE {mse:.4f}", flush=True)
        os.makedirs(os.path.dirname(args.checkpoint) or ".", exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                   args.checkpoint)
        if args.dry_run:
            break
    if writer:
        writer.close()


if __name__ == "__main__":
    main()
