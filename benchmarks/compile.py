"""ember.compile against torch.compile: capture cost, then compiled steps, then compile time.

1. Cold capture: the first call of a freshly compiled model (capture, guards, the eager backend, one run),
   after `_dynamo.reset()`, for every model of examples/ and benchmarks/models.py; median of rounds, ratio
   ember/torch. (The examples are written against ember; their torch twin is the same source with `ember`
   read as `torch`.)
2. Per-call overhead of a compiled call whose graph runs eagerly: a compiled call minus the eager call of
   the same function (the guard check, reading inputs, the dispatch), for a tiny function and a model.

3. Compiled steps (issue 20): compiled ember (backend "inductor", each mode) vs ember eager, torch eager and
   torch.compile (default mode; on a CPU torch's reduce-overhead and max-autotune differ from it only by
   autotuning GEMM templates, minutes per model), on the MLP, LeNet, LSTM LM, small GPT and CIFAR CNN (with
   BatchNorm) train steps, the small GPT passing `is_causal=True` (captured whole: NOTE [ The small GPT's
   graph break ]), a chain of 30 pointwise ops on 1M floats (no grad), and the memory-bound block
   (softmax, layer_norm, gelu forward and backward on 4M floats, benchmarks/native.py), at 1 thread and at 2.
   Every variant of a workload is timed in the same rounds, in rotating order; the ratios are to torch eager
   of the same round set. torch.compile fixes its OpenMP thread count when it generates code, so each
   thread count compiles its own.
4. Compile time: the first train step of the small GPT in a fresh process (capture, compile, run), cold (an
   empty cache folder: EMBER_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR) and warm (the same folder again, a new
   process), minus the process's steady step time.

Run: python benchmarks/compile.py [--quick] [--steps-only | --compile-time-only] [--threads N] [--only A,B]
                                  [--clock thread] [--rounds R]
`--only`: the compiled-step workloads whose name contains one of the comma-separated words (e.g. LSTM,chain).
`--clock thread`: time the steps in the calling thread's CPU time (time.thread_time) instead of wall-clock
time, for a loaded machine; it is a fair measure at 1 thread only, where every library computes in the
calling thread (at N threads the other threads' work is not counted). `--rounds R`: rounds per workload.
"""

import gc
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

    class Scale:  # an object from outside, guarded by type and the attribute read (a new one per call)
        def __init__(self, s):
            self.s = s

    def by_object(lib):
        return lambda x: (lambda o: x * o.s)(Scale(2.0))  # (an object made inside: no guard at all)

    cases = [("x + 1, 8 floats", tiny, lambda lib: (lib.ones(8),))]
    cases.append(("x * Scale(2.0).s, object made inside", by_object, lambda lib: (lib.ones(8),)))
    cases.append(("x * o.s, o a user object argument", lambda lib: lambda x, o: x * o.s,
                  lambda lib: (lib.ones(8), Scale(2.0))))
    mlp = {lib: BM.mlp(lib).eval() for lib in (ember, torch)}
    cases.append(("benchmarks/mlp forward, batch 1", lambda lib: mlp[lib], lambda lib: (lib.ones(1, 784),)))
    for name, make, inp in cases:
        res = {}
        for lib in (ember, torch):
            lib._dynamo.reset()
            fn = make(lib)
            cf = lib.compile(fn, backend="eager")
            x = inp(lib)
            with lib.no_grad():
                cf(*x)
                cf(*x)
                res[lib] = (lambda cf=cf, x=x: cf(*x), lambda fn=fn, x=x: fn(*x))
        with ember.no_grad(), torch.no_grad():
            ce, ct = compare(res[ember][0], res[torch][0], number=number, rounds=rounds)
            ee, et = compare(res[ember][1], res[torch][1], number=number, rounds=rounds)
        row(name + ": compiled call", ce, ct)
        row(name + ": eager call", ee, et)
        row(name + ": overhead", ce - ee, ct - et)


# ---- 3. compiled steps -------------------------------------------------------------------------------

EMBER_MODES = ("default", "reduce-overhead", "max-autotune")


def _train_step(L, model, opt, x, y):
    def step():
        opt.zero_grad()
        loss = BM.ce(L, model(x), y)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def _train_variants(spec):
    """{label: step} for one models.py workload spec; every variant has its own model and optimizer."""
    _, build, make_batch, _, opt_name, lr = spec
    x_np, y_np = make_batch(np.random.default_rng(0))
    t_model = build(torch)
    out = {}

    def make(L, compiled=None):
        model = build(L)
        if L is ember:
            BM.copy_weights(t_model, model)
        else:
            model.load_state_dict(t_model.state_dict())
        kw = {"momentum": 0.9} if opt_name == "SGD" else {}
        opt = getattr(L.optim, opt_name)(model.parameters(), lr=lr, **kw)
        fwd = compiled(model) if compiled else model
        return _train_step(L, fwd, opt, L.from_numpy(x_np.copy()), L.from_numpy(y_np.copy()))

    out["ember eager"] = make(ember)
    for mode in EMBER_MODES:
        out[f"ember {mode}"] = make(ember, lambda m, mode=mode: ember.compile(m, mode=mode))
    out["torch eager"] = make(torch)
    out["torch.compile"] = make(torch, torch.compile)
    return out


def small_gpt_causal(L):
    """models.py's small GPT with `is_causal=True` passed to the encoder (NOTE [ The small GPT's graph
    break ])."""
    return BM.small_gpt(L, is_causal=True)


# NOTE [ The small GPT's graph break ]
# models.py's small GPT passes a causal mask without `is_causal`, so TransformerEncoder's forward checks the
# mask's values (`_detect_is_causal_mask`: `bool((mask == causal).all())`), a graph break three frames deep
# in torch and in ember alike. With torch's default `nested_graph_breaks=False` the break cuts the top frame
# at the call `self.blocks(...)`: torch.compile (and so ember.compile) makes two graphs, the embedding and
# the head, and the whole encoder, forward and backward, runs eagerly between them, since Dynamo skips
# torch.nn's frames that it does not inline (tests/compiler/test_dynamo.py checks ember's counts and stack
# against torch's). That step's compiled time is therefore eager's time plus the two graphs. The same model
# with `is_causal=True` has no break in either library: its row shows the code generator on a whole
# transformer step.


def _chain(L, x):
    for i in range(10):
        x = (x * 1.0001 + 0.001 * i).sin()
    return x


def _block_fwd(L, x):
    F = L.nn.functional
    return F.gelu(F.layer_norm(F.softmax(x, -1), x.shape[-1:]))


def _fn_variants(fn, make_input, grad):
    out = {}
    for L in (ember, torch):
        x = L.from_numpy(make_input())
        if grad:
            x.requires_grad_()
        variants = [("eager", lambda a, L=L: fn(L, a))]
        if L is ember:
            variants += [(m, ember.compile(lambda a: fn(ember, a), mode=m)) for m in EMBER_MODES]
        else:
            variants += [("compile", torch.compile(lambda a: fn(torch, a)))]
        for name, f in variants:
            label = {"compile": "torch.compile"}.get(name, f"{L.__name__} {name}")

            def run(f=f, x=x, L=L):
                if grad:
                    x.grad = None
                    y = f(x)
                    y.backward(y)
                    return x.grad
                with L.no_grad():
                    return f(x)
            out[label] = run
    return out


LABELS = ["ember eager", "ember default", "ember reduce-overhead", "ember max-autotune", "torch eager",
          "torch.compile"]


def _time_all(fns, number, rounds):
    """Median seconds per call of each of `fns` ({label: fn}), timed in rotating order over `rounds`;
    the first call of each (compilation) is made before and reported apart."""
    first, failed = {}, {}
    for k, f in list(fns.items()):
        t = time.perf_counter()
        try:
            f()
            f()
        except Exception as e:  # noqa: BLE001 - a variant that fails is reported, the others still timed
            failed[k] = f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
            del fns[k]
            continue
        first[k] = time.perf_counter() - t
    times = {k: [] for k in fns}
    keys = list(fns)
    clock = time.thread_time if _arg("--clock") == "thread" else time.perf_counter
    for r in range(rounds):
        gc.collect()
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            fn = fns[k]
            t = clock()
            for _ in range(number):
                fn()
            times[k].append((clock() - t) / number)
    for k, why in failed.items():
        print(f"  ({k} fails: {why})")
    nan = float("nan")
    return ({k: statistics.median(times[k]) if k in times else nan for k in LABELS},
            {k: first.get(k, nan) for k in LABELS})


def _table_head(title):
    print(f"\n{title}")
    print(f"{'workload':<34}" + "".join(f"{lab:>14}" for lab in ["ember eager", "default", "reduce-ovh",
                                                                  "max-autotune", "torch eager",
                                                                  "torch.compile"]))


def _table_row(name, med):
    base = med["torch eager"]
    print(f"{name:<34}" + "".join(f"{med[k] * 1e3:>11.2f}ms" for k in LABELS), flush=True)
    print(f"{'  / torch eager':<34}" + "".join(f"{med[k] / base:>13.2f}x" for k in LABELS), flush=True)


def _arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def _wanted(name):
    only = _arg("--only")
    return only is None or any(w.lower() in name.lower() for w in only.split(","))


def compiled_steps(quick):
    import native

    workloads = [(spec[0].split(",")[0], spec) for spec in BM.WORKLOADS]
    cifar_batch = lambda r: (r.standard_normal((64, 3, 32, 32)).astype(np.float32),  # noqa: E731
                             r.integers(0, 10, 64))
    cifar = ("CIFAR CNN", native.cifar_cnn, cifar_batch, BM.ce, "SGD", 0.01)
    workloads.append(("CIFAR CNN + BatchNorm", cifar))
    gpt = BM.WORKLOADS[3]
    workloads.append(("small GPT is_causal", (gpt[0], small_gpt_causal, *gpt[2:])))
    rng = np.random.default_rng(0)
    big = rng.standard_normal((2048, 2048)).astype(np.float32)
    vec = rng.standard_normal(1 << 20).astype(np.float32)
    counts = [int(_arg("--threads"))] if "--threads" in sys.argv else [1, 2]
    rounds = int(_arg("--rounds", 3 if quick else 5))
    for n in counts:
        ember.set_num_threads(n)
        torch.set_num_threads(n)
        torch._dynamo.reset()
        ember._dynamo.reset()
        clock = "thread CPU" if _arg("--clock") == "thread" else "wall-clock"
        _table_head(f"compiled steps, {n} thread{'s' if n > 1 else ''} "
                    f"(median {clock} ms per step; ratio to torch eager)")
        firsts = {}
        for name, spec in workloads:
            if not _wanted(name):
                continue
            med, first = _time_all(_train_variants(spec), number=1 if quick else 3, rounds=rounds)
            _table_row(name + " train step", med)
            firsts[name] = first
        for name, fn, make, grad in (("pointwise chain 30 ops, 1M", _chain, lambda: vec.copy(), False),
                                     ("block fwd+bwd 4M", _block_fwd, lambda: big.copy(), True)):
            if not _wanted(name):
                continue
            med, first = _time_all(_fn_variants(fn, make, grad), number=3 if quick else 10, rounds=rounds)
            _table_row(name, med)
            firsts[name] = first
        print("\nfirst call (capture + compile + one run), s:")
        for name, first in firsts.items():
            print(f"  {name:<32}" + "".join(f"{first[k]:>14.2f}" for k in LABELS))
    ember.set_num_threads(1)
    torch.set_num_threads(1)


# ---- 4. compile time in a fresh process ---------------------------------------------------------------

def _child(lib_name):
    """In a new process: the small GPT's first compiled train step, minus its steady step (seconds)."""
    lib = ember if lib_name == "ember" else torch
    _, _, make_batch, *_ = BM.WORKLOADS[3]
    x_np, y_np = make_batch(np.random.default_rng(0))
    model = BM.small_gpt(lib)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    step = _train_step(lib, lib.compile(model), opt, lib.from_numpy(x_np), lib.from_numpy(y_np))
    t = time.perf_counter()
    step()
    first = time.perf_counter() - t
    steady = []
    for _ in range(5):
        t = time.perf_counter()
        step()
        steady.append(time.perf_counter() - t)
    print(f"RESULT {first - statistics.median(steady):.3f}")


def compile_time():
    import subprocess
    import tempfile

    print("\ncompile time of the small GPT train step in a new process (first step minus a steady step, s)")
    print(f"{'':<10}{'cold':>10}{'warm':>10}")
    for lib in ("ember", "torch"):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, EMBER_CACHE_DIR=d, TORCHINDUCTOR_CACHE_DIR=d)
            res = []
            for _ in ("cold", "warm"):
                out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", lib], env=env,
                                     capture_output=True, text=True, cwd=os.path.dirname(__file__))
                line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT")]
                res.append(float(line[0].split()[1]) if line else float("nan"))
                if not line:
                    print(out.stderr[-2000:])
            print(f"{lib:<10}{res[0]:>10.2f}{res[1]:>10.2f}", flush=True)


def main():
    if "--child" in sys.argv:
        _child(sys.argv[sys.argv.index("--child") + 1])
        return
    quick = "--quick" in sys.argv
    if "--steps-only" not in sys.argv and "--compile-time-only" not in sys.argv:
        cold_capture(rounds=1 if quick else 3)
        overhead(number=200 if quick else 1000, rounds=3 if quick else 7)
    if "--compile-time-only" not in sys.argv:
        compiled_steps(quick)
    if "--steps-only" not in sys.argv:
        compile_time()


if __name__ == "__main__":
    main()
