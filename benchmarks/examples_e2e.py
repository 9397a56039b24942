"""The examples end to end, ember vs torch: each example run as written (on ember) and with its imports
swapped to torch (the examples are plain PyTorch code), timed as whole processes.

Run: python benchmarks/examples_e2e.py   (a few minutes; one thread for both libraries)
"""

import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = [  # (example, arguments): short but real training runs
    ("mnist", ["--epochs", "2"]),
    ("autoencoder", ["--epochs", "1"]),
    ("char_lstm", ["--epochs", "1"]),
    ("gpt", ["--epochs", "1", "--steps", "100"]),
]


def torch_version(src):
    """The example's source with `ember` imports replaced by `torch` ones."""
    src = src.replace("import ember as torch", "import torch")
    return re.sub(r"\bember\.", "torch.", src).replace("from ember", "from torch")


def run(script, args, workdir):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               TQDM_DISABLE="1", PYTHONPATH=ROOT)
    prelude = "import torch; torch.set_num_threads(1); import runpy, sys; sys.argv = sys.argv[1:]; "
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", prelude + "runpy.run_path(sys.argv[0], run_name='__main__')",
                          script, *args, "--checkpoint", os.path.join(workdir, "ckpt.pt")],
                         cwd=workdir, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return elapsed, out.stdout.strip().splitlines()[-2:]


def main():
    print(f"{'example':<34} {'ember s':>8} {'torch s':>8} {'ratio':>6}  last lines (ember | torch)")
    for name, args in RUNS:
        path = os.path.join(ROOT, "examples", name, "main.py")
        with tempfile.TemporaryDirectory() as d:
            torch_script = os.path.join(os.path.dirname(path), f"_torch_{name}.py")
            with open(path) as f, open(torch_script, "w") as g:
                g.write(torch_version(f.read()))
            try:
                te, le = run(path, args, d)
                tt, lt = run(torch_script, args, d)
            finally:
                os.remove(torch_script)
        label = f"{name} {' '.join(args)}"
        print(f"{label:<34} {te:>8.1f} {tt:>8.1f} {te / tt:>5.2f}x  {le[-1]} | {lt[-1]}", flush=True)


if __name__ == "__main__":
    main()
