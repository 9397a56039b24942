"""Run public PyTorch training scripts unchanged under torch and under `ember run`, and compare what they print.

    python3 tools/examples_parity.py --examples PATH [--nanogpt PATH] [--only NAME ...] [--keep]

PATH is a checkout of https://github.com/pytorch/examples (and of https://github.com/karpathy/nanoGPT); the
scripts are not part of ember and are never copied into it. Each case runs the script twice from a scratch
copy of its folder, once with torch and once with ember (`python -m ember run`), both after the same
`manual_seed` for scripts that seed nothing themselves, and compares the printed lines with the timings
taken out. The cases are the examples that run on a CPU without torchvision or a dataset download.

Printed losses agree to the printed digits while the two runs take the same steps; a long run of a chaotic
optimisation (a learning rate of 20, a policy sampled from its own outputs) can drift apart after many
steps from float32 rounding differences, so each case reports the first line that differs.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAKESPEARE = os.path.join(ROOT, "..", "shared", "data", "tiny_shakespeare.txt")

# name: (repository, folder, setup commands, script and arguments, seed for unseeded scripts)
CASES = {
    "regression": ("examples", "regression", [], ["main.py", "--epochs", "1"], 0),
    "time_sequence_prediction": ("examples", "time_sequence_prediction", [["generate_sine_wave.py"]],
                                 ["train.py", "--steps", "2"], None),
    "reinforce": ("examples", "reinforcement_learning", [], ["reinforce.py"], None),
    "actor_critic": ("examples", "reinforcement_learning", [], ["actor_critic.py"], None),
    **{f"word_language_model_{m}": ("examples", "word_language_model", [],
                                    ["main.py", "--data", "{data}", "--epochs", "1", "--log-interval", "5",
                                     "--model", m], None)
       for m in ("LSTM", "GRU", "RNN_TANH", "Transformer")},
    "word_language_model_generate": ("examples", "word_language_model", [
        ["main.py", "--data", "{data}", "--epochs", "1", "--dry-run"]],
        ["generate.py", "--data", "{data}", "--words", "50"], None),
    "nanogpt_shakespeare_char": ("nanogpt", ".", [["data/shakespeare_char/prepare.py"]], [
        "train.py", "config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=5",
        "--eval_interval=10", "--log_interval=1", "--block_size=64", "--batch_size=12", "--n_layer=4",
        "--n_head=4", "--n_embd=128", "--max_iters=20", "--lr_decay_iters=2000", "--dropout=0.0"], None),
}

_TIMINGS = [r"ms/batch\s+[\d.]+", r"time:?\s+[\d.]+m?s", r"mfu\s+-?[\d.]+%", r"\d+\.\d+s\b"]


def _run_seeded(lib, seed, script, args):
    """The child side: install the alias for ember, seed, then run the script as `python script args`."""
    if lib == "ember":
        from ember._torch_alias import install
        install()
    import random

    import numpy as np
    import torch
    if seed != "none":
        torch.manual_seed(int(seed))
        np.random.seed(int(seed))
        random.seed(int(seed))
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    import runpy
    runpy.run_path(script, run_name="__main__")


def _word_data(where):
    """A small word-level corpus in the layout of wikitext-2 (train/valid/test.txt), from Shakespeare."""
    lines = open(SHAKESPEARE).read().split("\n")
    n = len(lines)
    os.makedirs(where, exist_ok=True)
    for name, (a, b) in {"train": (0, 0.08), "valid": (0.9, 0.92), "test": (0.95, 0.97)}.items():
        with open(os.path.join(where, name + ".txt"), "w") as f:
            f.write("\n".join(lines[int(n * a):int(n * b)]))
    return where


def _clean(text):
    out = []
    for line in text.splitlines():
        for pattern in _TIMINGS:
            line = re.sub(pattern, "<t>", line)
        out.append(line.replace("/ember/", "/torch/"))
    return out


def run_case(name, repos, scratch):
    repo, folder, setup, command, seed = CASES[name]
    data = _word_data(os.path.join(scratch, "words"))
    results = {}
    for lib in ("torch", "ember"):
        work = os.path.join(scratch, f"{name}-{lib}")
        shutil.copytree(os.path.join(repos[repo], folder), work, dirs_exist_ok=True)
        if repo == "nanogpt":
            shutil.copy(SHAKESPEARE, os.path.join(work, "data", "shakespeare_char", "input.txt"))
        env = dict(os.environ, PYTHONPATH=ROOT)
        for step in setup:  # data preparation runs under the same library as the script
            args = [a.format(data=data) for a in step]
            subprocess.run([sys.executable, __file__, "--child", lib, "none", *args], cwd=work, env=env,
                           capture_output=True, text=True, timeout=1800)
        args = [a.format(data=data) for a in command]
        proc = subprocess.run([sys.executable, __file__, "--child", lib, str(seed) if seed is not None else "none",
                               *args], cwd=work, env=env, capture_output=True, text=True, timeout=3600)
        results[lib] = (proc.returncode, _clean(proc.stdout), proc.stderr.strip().splitlines()[-1:] or [""])
    (rc_t, out_t, err_t), (rc_e, out_e, err_e) = results["torch"], results["ember"]
    same = 0
    for a, b in zip(out_t, out_e):
        if a != b:
            break
        same += 1
    verdict = "same output" if out_t == out_e and rc_t == rc_e else f"first {same} of {len(out_t)} lines equal"
    print(f"== {name}: torch exit {rc_t}, ember exit {rc_e}: {verdict}")
    if out_t != out_e:
        print(f"   torch: {out_t[same] if same < len(out_t) else '<end>'}")
        print(f"   ember: {out_e[same] if same < len(out_e) else '<end>'}")
    if rc_t or rc_e:
        print(f"   torch stderr: {err_t[0]}\n   ember stderr: {err_e[0]}")
    return out_t == out_e and rc_t == rc_e


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return _run_seeded(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", required=True, help="checkout of pytorch/examples")
    parser.add_argument("--nanogpt", help="checkout of karpathy/nanoGPT")
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ns = parser.parse_args()
    repos = {"examples": ns.examples, "nanogpt": ns.nanogpt}
    names = [n for n in (ns.only or CASES) if repos[CASES[n][0]]]
    scratch = tempfile.mkdtemp(prefix="ember-examples-")
    try:
        ok = [run_case(n, repos, scratch) for n in names]
    finally:
        if not ns.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"{sum(ok)} of {len(ok)} cases print the same output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
