"""Every example runs end to end (`--dry-run`: one batch per phase, a checkpoint, a resume)."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["mnist", "char_lstm", "gpt", "autoencoder"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_dry_run_and_resume(name, tmp_path):
    script = os.path.join(ROOT, "examples", name, "main.py")
    ckpt = str(tmp_path / "ckpt.pt")
    env = dict(os.environ, PYTHONPATH=ROOT, TQDM_DISABLE="1")
    tb = str(tmp_path / "tb")
    for extra in (["--tensorboard", tb], ["--resume"]):
        out = subprocess.run([sys.executable, script, "--dry-run", "--checkpoint", ckpt, *extra], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "epoch 1" in out.stdout or "epoch 2" in out.stdout
        assert os.path.exists(ckpt)
    assert "resumed from" in out.stdout
    # --tensorboard logged the epoch's losses, one run per curve, as tensorboard reads them
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    runs = sorted(d for d in os.listdir(tb) if d.startswith("loss_"))
    assert "loss_train" in runs and len(runs) == 2
    for run in runs:
        acc = EventAccumulator(os.path.join(tb, run))
        acc.Reload()
        (event,) = acc.Scalars("loss")
        assert event.step == 1 and np.isfinite(event.value)


# Each example's "train loss" is the epoch's mean: the losses of all its batches, weighted by batch size.
# The driver records every training loss (the ones that require grad) the loss function returns.
_DRIVER = """
import json, runpy, sys
import ember.nn.functional as F
seen = []
for fname in ("cross_entropy", "binary_cross_entropy_with_logits"):
    def wrapped(input, target, *a, _f=getattr(F, fname), **k):
        loss = _f(input, target, *a, **k)
        if loss.requires_grad:
            seen.append((loss.item(), target.shape[0]))
        return loss
    setattr(F, fname, wrapped)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
print("LOSSES " + json.dumps(seen))
"""

MEAN_LOSS_RUNS = {  # small runs of three batches, the last one short where the data allow it
    "mnist": (["--batch-size", "16"], 4),
    "autoencoder": (["--batch-size", "16"], 4),
    "char_lstm": (["--seq-len", "16", "--batch-size", "8"], 3),
    "gpt": (["--steps", "3", "--block", "16", "--batch-size", "4"], 3),
}


def _small_data(name, tmp_path):
    """A slice of the shipped data: 40 training and 20 test digits, or the first 480 characters."""
    data = os.path.join(ROOT, "examples", "data")
    if name in ("mnist", "autoencoder"):
        d = np.load(os.path.join(data, "mnist_5k.npz"))
        path = str(tmp_path / "digits.npz")
        np.savez(path, train_images=d["train_images"][:40], train_labels=d["train_labels"][:40],
                 test_images=d["test_images"][:20], test_labels=d["test_labels"][:20])
        return path
    with open(os.path.join(data, "tiny.txt"), encoding="utf-8") as f:
        text = f.read()[:480]
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_train_loss_is_the_epoch_mean(name, tmp_path):
    args, digits = MEAN_LOSS_RUNS[name]
    script = os.path.join(ROOT, "examples", name, "main.py")
    args = [*args, "--epochs", "1", "--data", _small_data(name, tmp_path), "--checkpoint", str(tmp_path / "c.pt")]
    env = dict(os.environ, PYTHONPATH=ROOT, TQDM_DISABLE="1")
    out = subprocess.run([sys.executable, "-c", _DRIVER, script, *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    losses = json.loads(out.stdout.split("LOSSES ", 1)[1])
    assert len(losses) >= 3, losses
    printed = float(re.search(r"epoch 1: train loss ([0-9.]+)", out.stdout).group(1))
    mean = sum(v * n for v, n in losses) / sum(n for _, n in losses)
    assert printed == pytest.approx(mean, abs=0.5 * 10 ** -digits + 1e-9)
    assert printed != pytest.approx(losses[-1][0], abs=0.5 * 10 ** -digits)  # not the last batch's
