"""ember.compile's capture against torch.compile's, both with backend="eager" (capture only), one thread.

1. Cold capture: the first call of a freshly compiled model (capture, guards, the eager backend, one run),
   after `_dynamo.reset()`, for every model of examples/ and benchmarks/models.py; median of rounds, ratio
   ember/torch. (The examples are written against ember; their torch twin is the same source with `ember`
   read as `torch`.)
2. Per-call overhead of a compiled call whose graph runs eagerly: a compiled call minus the eager call of
   the same function (the guard check, reading inputs, the dispatch), for a tiny function and a model.

Run: python benchmarks/compile.py [--quick]
"""

import os
import statistics
import sys
import time
import types

import models as BM
from _common import compare, ember, header, np, row, torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(name, lib):
    path = os.path.join(ROOT, "examples", name, "main.py")
    src = open(path).read()
    if lib is torch:
        src = src.replace("import ember as torch", "import torch").replace("import ember.", "import torch.")
    mod = types.ModuleType(f"example_{name}_{lib.__name__}")
    mod.__file__ = path
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


def _models(lib):
    rng = np.random.default_rng(0)
    ints = lambda high, shape: lib.from_numpy(rng.integers(0, high, shape))  # noqa: E731
    floats = lambda *s: lib.from_numpy(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    return {
        "examples/gpt": (lambda: _example("gpt", lib).GPT(65), ints(65, (8, 64))),
        "examples/mnist": (lambda: _example("mnist", lib).Net(), floats(64, 1, 28, 28)),
        "examples/autoencoder": (lambda: _example("autoencoder", lib).AutoEncoder(), floats(64, 1, 28, 28)),
        "examples/char_lstm": (lambda: _example("char_lstm", lib).CharLSTM(65), ints(65, (16, 64))),
        "benchmarks/mlp": (lambda: BM.mlp(lib), floats(128, 784)),
        "benchmarks/lenet": (lambda: BM.lenet(lib), floats(64, 1, 28, 28)),
        "benchmarks/small_gpt": (lambda: BM.small_gpt(lib), ints(1000, (16, 64))),
    }


def cold_capture(rounds):
    header("cold capture: first call of the compiled model, backend='eager' on both sides (ms)")
    built = {lib: {k: (b(), x) for k, (b, x) in _models(lib).items()} for lib in (ember, torch)}
    for name in built[ember]:
        times = {ember: [], torch: []}
        for r in range(rounds):
            for lib in (ember, torch) if r % 2 == 0 else (torch, ember):
                model, x = built[lib][name]
                model.eval()
                lib._dynamo.reset()
                f = lib.compile(model, backend="eager")
                with lib.no_grad():
                    t = time.perf_counter()
                    f(x)
                    times[lib].append(time.perf_counter() - t)
        row(name, statistics.median(times[ember]), statistics.median(times[torch]), "ms", 1e3)


def overhead(number, rounds):
    header("per-call overhead of a compiled call (compiled minus eager, graph run eagerly) (us)")

    def tiny(lib):
        return lambda x: x + 1

    cases = [("x + 1, 8 floats", tiny, lambda lib: lib.ones(8))]
    mlp = {lib: BM.mlp(lib).eval() for lib in (ember, torch)}
    cases.append(("benchmarks/mlp forward, batch 1", lambda lib: mlp[lib], lambda lib: lib.ones(1, 784)))
    for name, make, inp in cases:
        res = {}
        for lib in (ember, torch):
            lib._dynamo.reset()
            fn = make(lib)
            cf = lib.compile(fn, backend="eager")
            x = inp(lib)
            with lib.no_grad():
                cf(x)
                cf(x)
                res[lib] = (lambda: cf(x), lambda: fn(x))
        with ember.no_grad(), torch.no_grad():
            ce, ct = compare(res[ember][0], res[torch][0], number=number, rounds=rounds)
            ee, et = compare(res[ember][1], res[torch][1], number=number, rounds=rounds)
        row(name + ": compiled call", ce, ct)
        row(name + ": eager call", ee, et)
        row(name + ": overhead", ce - ee, ct - et)


def main():
    quick = "--quick" in sys.argv
    cold_capture(rounds=1 if quick else 3)
    overhead(number=200 if quick else 1000, rounds=3 if quick else 7)


if __name__ == "__main__":
    main()
