"""Every example runs end to end (`--dry-run`: one batch per phase, a checkpoint, a resume)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["mnist", "char_lstm", "gpt", "autoencoder"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_dry_run_and_resume(name, tmp_path):
    script = os.path.join(ROOT, "examples", name, "main.py")
    ckpt = str(tmp_path / "ckpt.pt")
    env = dict(os.environ, PYTHONPATH=ROOT, TQDM_DISABLE="1")
    for extra in ([], ["--resume"]):
        out = subprocess.run([sys.executable, script, "--dry-run", "--checkpoint", ckpt, *extra], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "epoch 1" in out.stdout or "epoch 2" in out.stdout
        assert os.path.exists(ckpt)
    assert "resumed from" in out.stdout
