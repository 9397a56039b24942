"""The capture checks that need no torch, for interpreters torch is not installed for (3.10, 3.12).

    PYTHONPATH=. python3.10 tests/compiler/cross_version_checks.py

1. dynamo_cases.py's table against torch's counts and results saved on 3.11 (dynamo_cases_ref.npz);
2. every op of the OpInfo table (tests/ops/op_db.py, its first sample, float64 where accepted) compiled
   (a counting backend that runs the graph as captured) gives what eager ember gives: values, dtype,
   shape and strides, or the same exception class and message (eager ember is itself held to torch by
   the OpInfo tests on 3.11);
3. the models of examples/ (those that import only ember and NumPy) compiled with backend="eager" and
   "aot_eager": forward and parameter gradients equal eager ember's.
Prints one line per mismatch and a summary; exits 1 on any mismatch. Run by test_python_versions.py.
"""

import importlib.util
import io
import os
import sys
from contextlib import redirect_stdout

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops"))

import dynamo_cases  # noqa: E402

import ember  # noqa: E402


def _same(a, b, path):
    """Mismatches between a compiled result `a` and the eager one `b`."""
    if isinstance(b, ember.Tensor):
        if not isinstance(a, ember.Tensor):
            return [f"{path}: {type(a).__name__}, eager gave a Tensor"]
        if (a.shape, a.dtype) != (b.shape, b.dtype) or (b.numel() > 1 and a.stride() != b.stride()):
            return [
                f"{path}: {a.dtype}{tuple(a.shape)}{a.stride()} vs eager "
                f"{b.dtype}{tuple(b.shape)}{b.stride()}"
            ]
        x, y = a.detach()._data, b.detach()._data
        if not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return [f"{path}: values differ from eager"]
        return []
    if isinstance(b, (tuple, list)):
        if not isinstance(a, (tuple, list)) or len(a) != len(b):
            return [f"{path}: a {type(a).__name__}, eager gave {len(b)} values"]
        return [m for i, (x, y) in enumerate(zip(a, b)) for m in _same(x, y, f"{path}[{i}]")]
    if type(a) is not type(b) or (a != b and not (isinstance(b, float) and b != b and a != a)):
        return [f"{path}: {a!r} vs eager {b!r}"]
    return []


def _run(fn, inputs):
    ember.manual_seed(0)
    try:
        return fn(*inputs), None
    except Exception as e:  # noqa: BLE001 - compared between eager and compiled
        return None, (type(e), str(e).split("\n")[0])


def check_opinfo():
    try:
        import torch  # noqa: F401
    except ImportError:
        # a few table files build their samples with torch (op_db_linalg2's LU factors): there, ember
        # builds them, as `import ember as torch` scripts do; only the inputs come from it
        sys.modules["torch"] = ember
    from op_db import OPS

    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    bad, n, captured = [], 0, 0
    for op in OPS:
        dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
        samples = op.samples(dtype, np.random.default_rng(0))
        if not samples:
            continue
        s, n = samples[0], n + 1

        def inputs():
            return [ember.from_numpy(x.copy()) if isinstance(x, np.ndarray) else x for x in s.inputs]

        def body(*xs):
            return op.fn(ember, *xs, **s.kwargs)

        with redirect_stdout(io.StringIO()):
            want, werr = _run(body, inputs())
            ember._dynamo.reset()
            del graphs[:]
            got, gerr = _run(ember.compile(body, backend=counting), inputs())
            captured += bool(graphs)
        if werr or gerr:
            if werr != gerr:
                bad.append(f"opinfo {op.id}: compiled raised {gerr}, eager {werr}")
            continue
        bad += [f"opinfo {m}" for m in _same(got, want, op.id)]
    print(f"python {sys.version.split()[0]}: {captured} of {n} OpInfo ops captured into a graph")
    return bad, n


def _example(name):
    path = os.path.join(ROOT, "examples", name, "main.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_models():
    try:
        import tqdm  # noqa: F401
    except ImportError:  # (the examples' progress bars only: an interpreter without tqdm gets a stand-in)
        import types

        sys.modules["tqdm"] = types.SimpleNamespace(tqdm=lambda it=None, *a, **k: it)
    rng = np.random.default_rng(0)
    floats = ember.from_numpy(rng.standard_normal((2, 1, 28, 28)).astype(np.float32))
    ints = ember.from_numpy(rng.integers(0, 65, (2, 16)))
    models = {
        "mnist": (lambda: _example("mnist").Net(), floats),
        "autoencoder": (lambda: _example("autoencoder").AutoEncoder(), floats),
        "char_lstm": (lambda: _example("char_lstm").CharLSTM(65), ints),
    }
    bad, n = [], 0
    ember._dynamo.config.allow_rnn = True  # (capture the LSTM rather than give its frame up)
    for name, (build, x) in models.items():
        for backend in ("eager", "aot_eager"):
            n += 1
            ember.manual_seed(0)
            model = build()
            outs = []
            for run in (ember.compile(model, backend=backend), model):
                ember.manual_seed(1)  # (dropout draws the same numbers in both runs)
                out = run(x)
                out = out[0] if isinstance(out, tuple) else out
                out.float().pow(2).mean().backward()
                outs.append([out.detach()] + [p.grad.clone() for p in model.parameters()])
                model.zero_grad()
            differ = [
                i for i, (a, b) in enumerate(zip(*outs)) if not np.allclose(a.numpy(), b.numpy(), 1e-5, 1e-6)
            ]
            if differ:
                bad.append(f"model {name} ({backend}): outputs {differ} differ (0: forward, i: gradient i)")
    return bad, n


def main():
    results = {
        "break cases vs torch": (dynamo_cases.check_against_reference(ember), len(dynamo_cases.CASES)),
        "OpInfo compiled vs eager": check_opinfo(),
        "example models compiled vs eager": check_models(),
    }
    failed = False
    for what, (bad, n) in results.items():
        print("\n".join(bad)) if bad else None
        print(f"python {sys.version.split()[0]}: {what}: {n - len(bad)} of {n} agree" if bad else
              f"python {sys.version.split()[0]}: {what}: all {n} agree")
        failed = failed or bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
