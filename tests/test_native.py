"""The native kernel runtime (ember/_native, issue 18): build cache, concurrent builds, the NumPy fallback
and its one warning, thread settings, and the ported ops against torch through the C kernels.

The OpInfo table's entries for the ported ops run here a second time with EMBER_NATIVE=force (native
kernels at every size, so the table's small samples reach the C code), float16 and bfloat16 included;
`EMBER_NATIVE=0 pytest tests/ops` runs the whole table on the NumPy kernels.
"""

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from compare import check, functions_from

import ember
from ember import _native
from ember._native import ops as native_ops

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (the C compiler is a test requirement, as torch is; a machine without one fails here, by name)
needs_cc = pytest.mark.usefixtures("native_on")


@pytest.fixture
def native_on(monkeypatch):
    """Native kernels on in this process, whatever EMBER_NATIVE the run was started with (the suite also runs
    under EMBER_NATIVE=0, for the NumPy kernels)."""
    monkeypatch.setattr(_native, "_OFF", False)
    assert _native.available("softmax"), "no working C compiler: " + str(_native._compiler())


def _env(**env):
    full = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", EMBER_NATIVE="1")
    full.update(env)
    return full


def _run(code, **env):
    """Run `code` in a fresh Python with ember from this checkout; returns (stdout, stderr)."""
    full = _env()
    full.update(env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=full, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout, out.stderr


_SOFTMAX = """
    import numpy as np, warnings, ember
    from ember import _native
    warnings.simplefilter("always")
    x = np.random.default_rng(0).standard_normal((64, 1024)).astype(np.float32)
    y = ember.softmax(ember.from_numpy(x), 1).numpy()
    e = np.exp(x - x.max(1, keepdims=True)); ref = e / e.sum(1, keepdims=True)
    assert np.allclose(y, ref, rtol=1e-6, atol=1e-7), "wrong softmax"
    print("built", ",".join(_native._state["built"]) or "-")
"""


def test_cache_is_reused(tmp_path):
    first, _ = _run(_SOFTMAX, EMBER_CACHE_DIR=str(tmp_path))
    files = sorted(os.listdir(tmp_path))
    assert "built softmax" in first and len(files) == 1 and files[0].startswith("softmax-")
    second, _ = _run(_SOFTMAX, EMBER_CACHE_DIR=str(tmp_path))
    assert "built -" in second  # loaded, not compiled again
    assert sorted(os.listdir(tmp_path)) == files


def test_concurrent_builds(tmp_path):
    code = "import sys; sys.stdout.flush()\n" + textwrap.dedent(_SOFTMAX)
    env = _env(EMBER_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    results = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
    assert all(rc == 0 and "built" in out for out, err, rc in results), results
    assert len(os.listdir(tmp_path)) == 1  # one library, no temporary file left behind


def test_no_compiler_warns_once_and_falls_back(tmp_path):
    code = _SOFTMAX + """
    z = np.random.default_rng(1).standard_normal((32, 2048)).astype(np.float32)
    ember.nn.functional.layer_norm(ember.from_numpy(z), (2048,))
    ember.softmax(ember.from_numpy(z), 1)
    """
    out, err = _run(code, EMBER_CACHE_DIR=str(tmp_path), CC="/nonexistent/cc")
    assert err.count("native kernels unavailable") == 1, err
    assert "no C compiler: '/nonexistent/cc' not found" in err
    assert "built -" in out and os.listdir(tmp_path) == []


def test_native_off_is_silent(tmp_path):
    out, err = _run(_SOFTMAX, EMBER_CACHE_DIR=str(tmp_path), EMBER_NATIVE="0", CC="/nonexistent/cc")
    assert "Warning" not in err and os.listdir(tmp_path) == []


def test_import_compiles_nothing(tmp_path):
    out, _ = _run("import ember, ember.nn, ember.optim; from ember import _native; print(_native._libs)",
                  EMBER_CACHE_DIR=str(tmp_path))
    assert out.strip() == "{}" and os.listdir(tmp_path) == []


@needs_cc
def test_threads_govern_kernels_and_blas(monkeypatch):
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 1 << 18)  # (the default; EMBER_NATIVE=force makes it 0)
    # (this process imported torch first: beside its spinning libgomp the kernels would take a second thread
    # later, NOTE [ Passive OpenMP threads ], which test_kernels_beside_a_spinning_openmp checks)
    monkeypatch.setitem(_native._state, "shared_gomp", False)
    old = ember.get_num_threads()
    used = _native.function("softmax", "threads_used", [ctypes.c_int], ctypes.c_int)
    blas = ember._runtime._blas_setter()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            assert ember.get_num_threads() == n
            assert _native.threads_for(1 << 20) == n and _native.threads_for(16) == 1
            assert used(_native.threads_for(1 << 20)) == n
            if blas is not None:
                assert _blas_getter()() == n
    finally:
        ember.set_num_threads(old)


def _blas_getter():
    import glob
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*.so*")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_int
                return fn
    raise AssertionError("OpenBLAS was found to set threads but not to read them")


_WAIT_POLICY = """
    import ctypes, os, ember
    from ember import _native
    assert _native.available("softmax")
    print("env", os.environ.get("OMP_WAIT_POLICY"))
    ctypes.CDLL("libgomp.so.1").omp_display_env(1)
"""


@pytest.mark.parametrize("user", [None, "ACTIVE"])
def test_kernels_openmp_threads_wait_passively(user, tmp_path):
    """NOTE [ Passive OpenMP threads ]: the kernels' OpenMP runtime starts with a passive wait policy unless the
    user chose one, and the environment is left as it was (run without torch: torch loads its own)."""
    env = {"EMBER_CACHE_DIR": str(tmp_path)}
    if user:
        env["OMP_WAIT_POLICY"] = user
    full = _env(**env)
    if not user:
        full.pop("OMP_WAIT_POLICY", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_WAIT_POLICY)], capture_output=True, text=True,
                         env=full, timeout=600)
    assert out.returncode == 0, out.stderr
    assert f"env {user}" in out.stdout
    # (libgomp shows an unset policy as PASSIVE too; what a passive policy changes is the spin count, 0)
    shown = out.stdout + out.stderr
    assert f"OMP_WAIT_POLICY = '{user or 'PASSIVE'}'" in shown
    assert ("GOMP_SPINCOUNT = '0'" in shown) == (user is None), shown


_SHARED = """
    import os, sys
    if sys.argv[1] == "torch":
        import torch  # (loads torch's libgomp.so.1 before ember's first kernel)
    import ember
    from ember import _native
    ember.set_num_threads(2)
    assert _native.available("softmax")
    print("threads", _native.threads_for(1 << 20), _native.threads_for(1 << 22))
"""


@pytest.mark.parametrize("first,policy,want", [("torch", None, "1 2"), ("torch", "PASSIVE", "2 2"),
                                                ("ember", None, "2 2")])
def test_kernels_beside_a_spinning_openmp(first, policy, want, tmp_path):
    """NOTE [ Passive OpenMP threads ]: kernels bound to an OpenMP runtime another library loaded (torch's,
    spinning) use a second thread only from 1M elements on, unless the environment asks for passive waiting;
    on ember's own runtime, from PARALLEL_SIZE."""
    full = _env(EMBER_CACHE_DIR=str(tmp_path))
    full.pop("OMP_WAIT_POLICY", None)
    if policy:
        full["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_SHARED), first], capture_output=True, text=True,
                         env=full, timeout=600)
    assert out.returncode == 0, out.stderr
    assert f"threads {want}" in out.stdout


@needs_cc
def test_results_do_not_depend_on_threads(monkeypatch):
    monkeypatch.setitem(_native._state, "shared_gomp", False)  # (two threads even beside torch's libgomp)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    w = rng.standard_normal(1024).astype(np.float32)
    old = ember.get_num_threads()
    outs = []
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            t = ember.from_numpy(x.copy()).requires_grad_()
            y = ember.nn.functional.layer_norm(t, (1024,), ember.from_numpy(w)).softmax(-1)
            y.backward(ember.ones_like(y))
            outs.append((y.detach().numpy(), t.grad.numpy()))
    finally:
        ember.set_num_threads(old)
    assert all(np.array_equal(a, b) for a, b in zip(*outs))


def test_blas_threads_by_product_size(monkeypatch):
    """NOTE [ BLAS threads by size ]: products below BLAS_PARALLEL_WORK multiply-adds run on one OpenBLAS thread
    whatever the thread count; larger ones on ember's count (capped by OpenBLAS's own until set_num_threads):
    float32 matrices (stored as they are or transposed) on the kernels' threads, others on OpenBLAS's pool,
    which is back on one thread after them."""
    from ember import _runtime
    from ember._native import blas
    if _runtime._blas_setter() is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS")
    calls = []
    real = blas._set_blas
    monkeypatch.setattr(blas, "_set_blas", lambda n: (calls.append(n), real(n)))
    rng = np.random.default_rng(0)
    small = [rng.standard_normal(s).astype(np.float32) for s in ((20, 256), (256, 1024))]  # 5.2M
    big = [rng.standard_normal(s).astype(np.float32) for s in ((512, 256), (256, 1024))]  # 134M
    old = ember.get_num_threads()
    outs = {}
    try:
        for n in (2, 1):
            ember.set_num_threads(n)
            for a, b in (small, big):
                del calls[:]
                for i, f in enumerate((lambda a, b: a @ b, lambda a, b: ember.nn.functional.linear(a, b.t()),
                                       lambda a, b: ember.from_numpy(np.ascontiguousarray(a.numpy().T)).t() @ b,
                                       lambda a, b: a[None].bmm(b[None])[0])):
                    outs.setdefault((a.shape, i), []).append(f(ember.from_numpy(a), ember.from_numpy(b)).numpy())
                    assert _blas_getter()() == 1
                large = a.size * b.shape[1] >= blas.BLAS_PARALLEL_WORK
                # (set_num_threads(n) left the pool at n: the first, small, product puts it on one thread; the
                # large matrix products run on the kernels' threads (NOTE [ One pool for kernels and BLAS ]),
                # the batched one on OpenBLAS's, which is back on one thread after it)
                assert calls == ([] if n == 1 else [n, 1] if large else [1]), calls
        for (shape, _), (y2, y1) in outs.items():
            a, b = (small, big)[shape == big[0].shape]
            for y in (y2, y1):  # (OpenBLAS's threaded GEMM blocks differently: not the same bits)
                np.testing.assert_allclose(y, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        monkeypatch.setattr(blas, "_blas_cap", [1])  # OPENBLAS_NUM_THREADS=1, set_num_threads not called
        monkeypatch.setitem(_runtime._state, "threads", 2)
        del calls[:]
        ember.from_numpy(big[0]) @ ember.from_numpy(big[1])
        assert 2 not in calls
    finally:
        ember.set_num_threads(old)


# ---- the ported ops through the C kernels, against torch and against the NumPy kernels ------------------------

# the ported ops' OpInfo entries, and the optimizers' tests against torch (`test_step_is_one_op_a_mode_sees`
# reads `ember._modes`, which only another test file's import makes an attribute: it is not run alone)
_PORTED = ("(softmax or softmin or layer_norm or batch_norm or gelu or silu or _backward_data or pow or SGD or Adam"
           " or cumsum or cumprod or embedding or gather or scatter_add or index_add or group_norm"
           " or matmul or bmm)"
           " and not mode_sees")


@needs_cc
def test_opinfo_table_through_native_kernels():
    """The OpInfo entries of every ported op, forced through the native kernels (all dtypes, float16 and
    bfloat16 included, gradients, double gradients, dtype acceptance), and the optimizer tests, against
    torch."""
    env = _env(EMBER_NATIVE="force")
    files = [os.path.join(ROOT, "tests", *f) for f in (("ops", "test_ops.py"), ("ops", "test_dtype_acceptance.py"),
                                                       ("optim", "test_optimizers.py"))]
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *files,
                          "-k", _PORTED], capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-3000:]
    assert " passed" in out.stdout and " failed" not in out.stdout


def _large(rng, shape, special=True):
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    if special:
        flat = x.reshape(-1)
        flat[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    return x


_CASES = [
    ("softmax", lambda lib, x: lib.softmax(x, -1)),
    ("log_softmax", lambda lib, x: lib.log_softmax(x, -1)),
    ("softmax_dim0", lambda lib, x: lib.softmax(x, 0)),  # (not the last dim: the NumPy kernel)
    ("layer_norm", lambda lib, x: lib.nn.functional.layer_norm(x, x.shape[-1:])),
    ("batch_norm", lambda lib, x: lib.nn.functional.batch_norm(x.reshape(8, -1, 512), None, None, training=True)),
    ("batch_norm_affine", lambda lib, x: lib.nn.functional.batch_norm(
        x.reshape(8, 8, -1, 32), None, None, lib.linspace(0.5, 2, 8, dtype=x.dtype),
        lib.linspace(-1, 1, 8, dtype=x.dtype), training=True)),
    ("gelu", lambda lib, x: lib.nn.functional.gelu(x)),
    ("gelu_tanh", lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh")),
    ("silu", lambda lib, x: lib.nn.functional.silu(x)),
    ("group_norm", lambda lib, x: lib.nn.functional.group_norm(x.reshape(8, 16, -1), 4)),
    ("group_norm_affine", lambda lib, x: lib.nn.functional.group_norm(
        x.reshape(4, 16, -1, 8), 4, lib.linspace(0.5, 2, 16, dtype=x.dtype),
        lib.linspace(-1, 1, 16, dtype=x.dtype))),
]


# (batch_norm's C kernel is float32 only; float16/bfloat16 batch_norm runs the NumPy kernel, whose float16
# output with an affine weight is 1-2 ulp from torch's at these sizes: a gap of that kernel, not tested here)
_LARGE = [pytest.param(name, fn, d, id=f"{name}-{d}") for name, fn in _CASES
          for d in (("float32",) if name.startswith(("batch_norm", "group_norm"))
                    else ("float32", "float16", "bfloat16"))]


@needs_cc
@pytest.mark.parametrize("name,fn,dtype", _LARGE)
def test_large_against_torch(name, fn, dtype):
    """Sizes that take the native path by default, NaN and infinities included (finite rows for the norms,
    whose NaN handling the small-table test covers), forward and backward."""
    rng = np.random.default_rng(0)
    x = _large(rng, (96, 512), special=name.startswith(("softmax", "log_softmax", "silu", "gelu_tanh")))
    if dtype != "float32":
        import ml_dtypes
        x = x.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16)
    check(fn, x, grad=(0,) if np.isfinite(x.astype(np.float32)).all() else None)


@needs_cc
@pytest.mark.parametrize("name,fn", _CASES, ids=[c[0] for c in _CASES])
def test_native_matches_numpy_kernels(name, fn, monkeypatch):
    """The C code follows the NumPy kernel's float32 order of operations, so the two agree to the float32
    tolerance the torch comparisons use (exp, erf and tanh may round differently by an ulp, which 1 + tanh
    near -1 shows as an absolute 1e-6); the NumPy kernel is the fallback, so a user sees the same numbers
    with or without a compiler."""
    x = _large(np.random.default_rng(2), (64, 1024))
    res = []
    for off in (False, True):
        monkeypatch.setattr(_native, "_OFF", off)
        t = ember.from_numpy(x.copy()).requires_grad_()
        y = fn(ember, t)
        y.backward(ember.from_numpy(np.ones(y.shape, np.float32)))
        res.append((y.detach().numpy(), t.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1.3e-6, atol=1e-5, equal_nan=True)


_OPTIMIZERS = [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}),
               ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
               ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3, "maximize": True}),
               ("Adam", {"lr": 1e-2}), ("AdamW", {"lr": 1e-2, "weight_decay": 0.1}),
               ("Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 0.1, "maximize": True})]


@needs_cc
@pytest.mark.parametrize("name,kw", _OPTIMIZERS, ids=[f"{n}-{'-'.join(k)}" for n, k in _OPTIMIZERS])
def test_optimizer_updates(name, kw, monkeypatch):
    """Large parameters (the native update) over several steps: equal to the NumPy kernels to the bit, and to
    torch within float32 rounding."""
    rng = np.random.default_rng(0)
    init = rng.standard_normal(40000).astype(np.float32)
    grads = [rng.standard_normal(40000).astype(np.float32) for _ in range(3)]

    def run(lib):
        p = lib.nn.Parameter(lib.from_numpy(init.copy()))
        opt = getattr(lib.optim, name)([p], **kw)
        for g in grads:
            p.grad = lib.from_numpy(g.copy())
            opt.step()
        return p.detach().numpy().copy()

    native = run(ember)
    monkeypatch.setattr(_native, "_OFF", True)
    assert np.array_equal(native, run(ember))
    np.testing.assert_allclose(native, run(torch), rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("n", [5000, 40000])  # (40000: the native x ** 3)
@pytest.mark.parametrize("e", [2, 3, -2, -1, 0.5, -0.5, 2.0, 3.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cheap_powers_are_torchs_bits(e, dtype, n):
    """x ** e for the exponents torch's kernel multiplies (or takes sqrt/reciprocal for): torch's result to
    the bit (0.5 is ember's sqrt, which is NumPy's correctly rounded one)."""
    x = np.random.default_rng(0).standard_normal(n).astype(dtype) * 3
    x[:4] = [0.0, -0.0, np.inf, np.nan]
    got = (ember.from_numpy(x) ** e).numpy()
    want = (torch.from_numpy(x) ** e).numpy() if e != 0.5 else np.sqrt(x)
    assert np.array_equal(got, want, equal_nan=True)


def test_small_tensors_skip_native(monkeypatch):
    """Below MIN_SIZE the wrappers answer None before looking for a kernel (the small-op path stays NumPy's)."""
    monkeypatch.setattr(native_ops, "MIN_SIZE", 16384)  # (the default; EMBER_NATIVE=force makes it 0)
    monkeypatch.setattr(native_ops, "function", lambda *a, **k: pytest.fail("looked up a kernel"))
    assert native_ops.softmax(np.zeros((4, 4), np.float32), 1, False) is None
    assert native_ops.gelu(np.zeros(10, np.float32), "none") is None
    assert native_ops.layer_norm(np.zeros((4, 4), np.float32), None, None, 1, 1e-5) is None


# ---- K3: LSTM time steps, embedding's backward --------------------------------------------------------------

_LSTMS = [  # (seq, batch, input, hidden, layers, bias, bidirectional, batch_first)
    (50, 64, 128, 128, 1, True, False, False), (7, 3, 5, 6, 2, False, True, False),
    (20, 16, 32, 64, 2, True, True, True)]


@needs_cc
@pytest.mark.parametrize("spec", _LSTMS, ids=[str(s) for s in _LSTMS])
def test_lstm_steps(spec, monkeypatch):
    """An LSTM layer through the native time steps (forced at every size): its output and every gradient
    against torch, and against the NumPy kernels (the backward's arithmetic is theirs, the activations may
    round an ulp apart)."""
    T, B, n_in, H, L, bias, bidir, batch_first = spec
    monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, n_in) if batch_first else (T, B, n_in)).astype(np.float32)
    h0, c0 = (rng.standard_normal((L * (1 + bidir), B, H)).astype(np.float32) for _ in range(2))
    torch.manual_seed(0)
    weights = [p.detach().numpy().copy() for p in
               torch.nn.LSTM(n_in, H, L, bias=bias, bidirectional=bidir, batch_first=batch_first).parameters()]

    def fn(lib, x, h0, c0, *ws):
        m = lib.nn.LSTM(n_in, H, L, bias=bias, bidirectional=bidir, batch_first=batch_first)
        with lib.no_grad():
            for p, w in zip(m.parameters(), ws):
                p.copy_(w)
        y, (h, c) = m(x, (h0, c0))
        return y * 1.5, h, c

    check(fn, x, h0, c0, *weights, grad=(0, 1, 2))
    res = []
    for off in (False, True):
        monkeypatch.setattr(_native, "_OFF", off)
        args = [ember.from_numpy(a.copy()).requires_grad_() for a in (x, h0, c0)]
        y, h, c = fn(ember, *args, *[ember.from_numpy(w) for w in weights])
        (y.sum() + (h * c).sum()).backward()
        res.append([y.detach().numpy(), h.detach().numpy(), c.detach().numpy()] + [a.grad.numpy() for a in args])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1.3e-6, atol=1e-5)


def _lstm_run(lib, T, B, n_in, H, bidir, lengths):
    """An LSTM's outputs and every gradient, on a packed batch when `lengths` is given (ember or torch)."""
    rng = np.random.default_rng(1)
    x = lib.from_numpy(rng.standard_normal((T, B, n_in)).astype(np.float32)).requires_grad_()
    lib.manual_seed(0)
    m = lib.nn.LSTM(n_in, H, 2, bidirectional=bidir)
    inp = x if lengths is None else lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    y, (h, c) = m(inp)
    y = y if lengths is None else lib.nn.utils.rnn.pad_packed_sequence(y)[0]
    (y.square().sum() + (h * c).sum()).backward()
    return [t.detach().numpy().copy() for t in (y, h, c, x.grad)] + [p.grad.numpy().copy() for p in m.parameters()]


# NOTE [ One call per LSTM layer ] in rnn.c: a chunk's sums are one FMA chain whoever computes them, so the
# layer gives the same bits at 1 and 2 threads, and its builds without AVX-512 and without any vector unit
# give the AVX-512 build's bits; hidden sizes that are not whole panels, and packed batches, included
_LSTM_LAYERS = [(9, 5, 7, 50, True, [9, 3, 6, 1, 9]), (6, 20, 16, 128, False, None), (4, 3, 5, 33, True, None)]


@needs_cc
def test_lstm_layer_same_bits_any_threads_or_build(monkeypatch):
    monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    monkeypatch.setattr(native_ops, "RNN_PARALLEL_WORK", 0)
    with open(os.path.join(os.path.dirname(_native.__file__), "rnn.c")) as f:
        source = f.read()
    builds = [_native.build_source(name, undef + source) for name, undef in (
        ("rnn_no_avx512", "#undef __AVX512F__\n"), ("rnn_plain", "#undef __AVX512F__\n#undef __AVX2__\n"))]
    assert all(lib is not None for lib in builds), "no working C compiler"
    found = native_ops.function
    old = ember.get_num_threads()
    try:
        for spec in _LSTM_LAYERS:
            ref = None
            for threads, lib in ((1, None), (2, None), (2, builds[0]), (1, builds[1])):
                monkeypatch.setattr(native_ops, "function", functions_from(found, "rnn", lib))
                ember.set_num_threads(threads)
                got = _lstm_run(ember, *spec)
                if ref is None:
                    ref = got
                    want = _lstm_run(torch, *spec)
                    for a, b in zip(got, want):
                        np.testing.assert_allclose(a, b, rtol=1.3e-6, atol=1e-5)
                for a, b in zip(got, ref):
                    assert np.array_equal(a, b), (spec, threads, lib)
    finally:
        ember.set_num_threads(old)


_EMBEDDINGS = [(None, False), (3, False), (None, True), (5, True)]


@needs_cc
@pytest.mark.parametrize("padding_idx,freq", _EMBEDDINGS, ids=[f"pad{p}-freq{f}" for p, f in _EMBEDDINGS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_backward(padding_idx, freq, dtype, monkeypatch):
    """Embedding's gradient (rows summed by index, repeated indices included) through the native index_add:
    torch's values, and the NumPy kernel's bits (both add in index order)."""
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((40, 700)).astype(dtype)
    idx = rng.integers(0, 40, (6, 9))

    def fn(lib, w, i):
        return lib.nn.functional.embedding(i, w, padding_idx=padding_idx, scale_grad_by_freq=freq) * 2.0

    check(fn, weight, idx, grad=(0,))
    grads = []
    for off in (False, True):
        monkeypatch.setattr(_native, "_OFF", off)
        w = ember.from_numpy(weight.copy()).requires_grad_()
        fn(ember, w, ember.from_numpy(idx)).sum().backward()
        grads.append(w.grad.numpy())
    assert np.array_equal(*grads)


@needs_cc
def test_index_kernels_decline_what_they_cannot_take():
    """The wrappers answer False/None (the caller's NumPy code runs) for another dtype, a non-contiguous
    source, a shape mismatch or an index out of range (then writing nothing), and work in place otherwise."""
    out = np.zeros((4, 8192), np.float32)
    src = np.ones((3, 8192), np.float32)
    idx = np.array([1, 1, 3])
    assert not native_ops.index_add(out, 0, idx, src.astype(np.float64))
    assert not native_ops.index_add(out, 0, idx, np.ones((3, 16384), np.float32)[:, ::2])
    assert not native_ops.index_add(out, 0, idx[:2], src)
    assert not native_ops.index_add(out, 0, np.array([1, 4, 0]), src) and not out.any()
    assert not native_ops.scatter_add(out, 0, np.full((3, 8192), 9), src) and not out.any()
    assert native_ops.gather(out, 1, np.full((4, 8192), -1)) is None
    assert native_ops.index_add(out, 0, idx, src)
    assert out[1, 0] == 2 and out[3, 0] == 1 and out[0].sum() == 0 and out[2].sum() == 0
    assert native_ops.index_add(out, 0, np.array([-1, -4, 0]), src)  # (negative: counted from the end)
    assert out[3, 0] == 2 and out[0, 0] == 2


_INDEX_OPS = [  # (name, input shape, dim, index shape or length, fn)
    ("gather", (64, 512), 1, (64, 700), lambda L, x, i, dim: x.gather(dim, i)),
    ("gather", (300, 8, 40), 0, (500, 8, 40), lambda L, x, i, dim: x.gather(dim, i)),
    ("scatter_add", (64, 512), 1, (64, 700), lambda L, x, i, dim: x.scatter_add(dim, i, x.gather(dim, i) * 0.5)),
    ("scatter_add", (30, 8, 100), 0, (50, 8, 100), lambda L, x, i, dim: x.scatter_add(dim, i, x.gather(dim, i))),
    ("index_add", (40, 700), 0, 90, lambda L, x, i, dim: x.index_add(dim, i, x.index_select(dim, i), alpha=0.5)),
    ("index_add", (16, 90, 30), 1, 150, lambda L, x, i, dim: x.index_add(dim, i, x.index_select(dim, i))),
    ("index_add", (16, 30, 90), 2, 150, lambda L, x, i, dim: x.index_add(dim, i, x.index_select(dim, i))),
]


@pytest.mark.parametrize("native", ["on", "off", "force"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shape,dim,ishape,fn", _INDEX_OPS,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in _INDEX_OPS])
def test_index_ops_are_torchs_bits(name, shape, dim, ishape, fn, dtype, native, monkeypatch):
    """gather / scatter_add / index_add (repeated indices, so sums into one element) and their gradients:
    torch's bits through the C kernels (large, or forced) and the NumPy ones; the index as int64 and int32."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    if native == "force":
        monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    idx = rng.integers(0, shape[dim], ishape)
    for idt in (np.int64, np.int32):
        if name != "index_add" and idt is np.int32:
            continue  # (torch's gather and scatter take int64 only)
        got, want = [], []
        for lib, out in ((ember, got), (torch, want)):
            t = lib.from_numpy(x.copy()).requires_grad_()
            y = fn(lib, t, lib.from_numpy(idx.astype(idt)), dim)
            y.backward(lib.from_numpy(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(dtype)))
            out += [y.detach().numpy(), t.grad.numpy()]
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w)


@needs_cc
@pytest.mark.parametrize("name,shape,dim,ishape,fn", _INDEX_OPS[::2],
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" for c in _INDEX_OPS[::2]])
def test_index_ops_out_of_range_forced(name, shape, dim, ishape, fn, monkeypatch):
    """An index out of range through the forced native path: torch's error, nothing read or written outside."""
    from compare import assert_same_error
    monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for bad in (shape[dim], -1, np.iinfo(np.int64).min):  # (past the end; negative, which gather never takes)
        idx = np.zeros(ishape, np.int64)
        idx.reshape(-1)[-1] = bad
        assert_same_error(lambda lib, x, i: fn(lib, x, i, dim), x, idx)


@needs_cc
def test_index_range_check_is_one_native_pass():
    """`index_in_range` (gather's and scatter's argument check on large indices): every value in [0, size),
    whatever the thread count; None where it does not apply (small, int32, not contiguous)."""
    idx = np.random.default_rng(0).integers(0, 100, 70000)
    for threads in (1, 2):
        ember.set_num_threads(threads)
        try:
            assert native_ops.index_in_range(idx, 100) is True
            for pos, bad in ((0, 100), (69999, -1), (35000, np.iinfo(np.int64).min), (12345, 1 << 40)):
                wrong = idx.copy()
                wrong[pos] = bad
                assert native_ops.index_in_range(wrong, 100) is False
        finally:
            ember.set_num_threads(1)
    assert native_ops.index_in_range(idx[:100], 100) is None
    assert native_ops.index_in_range(idx.astype(np.int32), 100) is None
    assert native_ops.index_in_range(np.stack([idx, idx], 1)[:, 0], 100) is None


# silu where exp(-x) overflows (x below about -88.72: torch's x / (1 + exp(-x)) is -0 there), and values whose
# result does not depend on how exp rounds (elsewhere torch's own bits differ by an ulp between its scalar and
# vector loops, so those are compared to the usual tolerance)
_SILU_EXACT = [-120.0, -100.0, -90.0, -88.8, -1e-30, -0.0, 0.0, 1e-30, 20.0, 88.0, 100.0, np.nan, -np.inf, np.inf]


@pytest.mark.parametrize("native", ["on", "off", "force"])
def test_silu_is_torchs_where_exp_overflows(native, monkeypatch):
    """silu computes torch's formula, x / (1 + exp(-x)), on both paths: torch's bits on the values above (alone,
    and repeated 2048 times, a size that takes the native path), and its values on random data."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    if native == "force":
        monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    edges = np.array(_SILU_EXACT, np.float32)
    for x in (edges, np.tile(edges, 2048)):
        got = ember.nn.functional.silu(ember.from_numpy(x)).numpy()
        want = torch.nn.functional.silu(torch.from_numpy(x)).numpy()
        assert np.array_equal(got.view(np.int32), want.view(np.int32)), (x[:len(edges)], got[:len(edges)])
    check(lambda lib, x: lib.nn.functional.silu(x), _large(np.random.default_rng(3), (64, 512)))


_SCANS = [((64, 4096), 1), ((64, 4096), 0), ((8, 16, 300), 1), ((8, 16, 300), 2), ((5,), 0), ((3, 4), 0)]


@pytest.mark.parametrize("native", ["on", "off", "force"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "float16->float32"])
@pytest.mark.parametrize("shape,dim", _SCANS, ids=[f"{s}-{d}" for s, d in _SCANS])
def test_scans_are_torchs_bits(shape, dim, dtype, op, native, monkeypatch):
    """cumsum/cumprod: torch's CPU kernel accumulates float32 in double (NOTE [ float32 scans accumulate in
    double ]); its bits, through the C kernel (large, or forced) and the NumPy kernel, and its dtype."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    if native == "force":
        monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 0.3 + 1
    src, _, res = dtype.partition("->")
    x = (x + 0.1j * rng.standard_normal(shape)).astype(src) if src == "complex64" else x.astype(src)
    kw = {"dtype": res} if res else {}
    want = getattr(torch.from_numpy(x), op)(dim, **{k: getattr(torch, v) for k, v in kw.items()})
    got = getattr(ember.from_numpy(x), op)(dim, **{k: getattr(ember, v) for k, v in kw.items()})
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert np.array_equal(got.numpy(), want.numpy())


_POWERS = [4, 5, 7, 10, 13, 64, -3, -4, -5, -64, 2.5, 1.5, 0.25, -1.5, 1 / 3, 0, 1, 4.0]


@pytest.mark.parametrize("native", ["on", "off", "force"])
@pytest.mark.parametrize("e", _POWERS, ids=[repr(e) for e in _POWERS])
def test_general_powers(e, native, monkeypatch):
    """float32 x ** e for the exponents torch does not special-case (NOTE [ General powers ]): torch's bits on
    tensors shorter than a vector (its libm loop), the correctly rounded result on large ones, which is
    within an ulp of torch's vectorised Sleef results there; subnormal, huge and special values included."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    if native == "force":
        monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(30000) * 3, rng.standard_normal(700) * 1e-20,
                        rng.standard_normal(700) * 1e15, rng.standard_normal(700) * 1e-40,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0]]).astype(np.float32)
    x = x[:x.size // 7 * 7]
    if not float(e).is_integer():
        x = np.abs(x)
    small_e = np.concatenate([(ember.from_numpy(x[i:i + 7].copy()) ** e).numpy() for i in range(0, 7000, 7)])
    small_t = np.concatenate([(torch.from_numpy(x[i:i + 7].copy()) ** e).numpy() for i in range(0, 7000, 7)])
    assert np.array_equal(small_e, small_t, equal_nan=True)
    got, want = (ember.from_numpy(x) ** e).numpy(), (torch.from_numpy(x) ** e).numpy()
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(np.float64), float(e)).astype(np.float32)
        # (torch's vector loop rounds the exponent to float32 first: its results are within an ulp of that
        # power, which for 1/3 is not ember's; the last n % 32 elements are its scalar loop's, with a double
        # exponent, as the small tensors above are)
        vec = np.power(x.astype(np.float64), float(np.float32(e))).astype(np.float32)
    assert got.dtype == np.float32 and np.array_equal(got, exact, equal_nan=True)
    body = x.size - x.size % 32
    got, want, vec = got[:body], want[:body], vec[:body]
    finite = np.isfinite(want) & np.isfinite(vec)
    assert np.array_equal(np.isnan(vec), np.isnan(want)) and np.array_equal(vec[~finite], want[~finite])
    ulps = np.abs(vec[finite].astype(np.float64) - want[finite]) / np.spacing(np.abs(want[finite]))
    assert ulps.max() <= 1
    assert np.array_equal(got, vec, equal_nan=True) == (float(np.float32(e)) == e)


_CLAMPS = [(-1.0, 1.0), (0, None), (None, 0.5), (2.0, -2.0), (float("nan"), 1.0), (-1e40, 1e40), (0.1, 0.2)]


@pytest.mark.parametrize("native", ["on", "off", "force"])
@pytest.mark.parametrize("lo,hi", _CLAMPS, ids=[f"{lo}-{hi}" for lo, hi in _CLAMPS])
def test_clamp_is_torchs(lo, hi, native, monkeypatch):
    """float32 clamp with number bounds through the C kernel (large, or forced) and NumPy's: torch's values,
    NaN, infinities and signed zeros included, and the gradient."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    if native == "force":
        monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    x = _large(np.random.default_rng(0), (64, 512))
    x.reshape(-1)[5:8] = [0.1, 0.2, -1.0]
    check(lambda lib, x: lib.clamp(x, lo, hi), x, grad=None)
    check(lambda lib, x: lib.clamp(x, lo, hi) * 0.5, np.nan_to_num(x), grad=(0,))


_EVAL_NORMS = [((16, 32, 40), True, "float32"), ((8, 24, 10, 12), False, "float32"), ((16, 32, 40), True, "float16")]


@pytest.mark.parametrize("native", ["on", "off", "force"])
@pytest.mark.parametrize("shape,affine,dtype", _EVAL_NORMS, ids=[f"{s}-{a}-{d}" for s, a, d in _EVAL_NORMS])
def test_batch_norm_eval(shape, affine, dtype, native, monkeypatch):
    """batch_norm in eval mode (the running statistics) through the C kernel (large, or forced) and NumPy's:
    torch's values and gradients; the C path equals the NumPy one to the bit."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    if native == "force":
        monkeypatch.setattr(native_ops, "MIN_SIZE", 0)
    rng = np.random.default_rng(0)
    c = shape[1]
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    rm, rv = rng.standard_normal(c).astype(dtype), (rng.random(c) + 0.5).astype(dtype)
    w, b = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)

    def fn(lib, x, rm, rv, w, b):
        return lib.nn.functional.batch_norm(x, rm, rv, w if affine else None, b if affine else None,
                                            training=False)

    check(fn, x, rm, rv, w, b, grad=(0,) if dtype == "float32" else None)
    outs = []
    for off in (False, True):
        monkeypatch.setattr(_native, "_OFF", off)
        outs.append(fn(ember, *(ember.from_numpy(a) for a in (x, rm, rv, w, b))).numpy())
    assert np.array_equal(*outs)


_FAULTS = """
    import resource, numpy as np, ember
    from ember import _native
    def step():  # a train step's large arrays (32 MiB in all), written, then all freed at its end
        arrays = [np.ones(1 << 20, np.float32) for _ in range(8)]
        del arrays
    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        step()
    print(_native._state["kept_freed_memory"], resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc settings")
@pytest.mark.parametrize("env", [{}, {"EMBER_KEEP_FREED_MEMORY": "0"}, {"MALLOC_ARENA_MAX": "4"}])
def test_freed_memory_is_kept(env):
    """NOTE [ Keeping freed memory ]: after `import ember` the pages of a step's freed arrays are reused by the next
    step, not returned to the kernel and faulted in again (8192 page faults a step); a user's own malloc
    settings, or EMBER_KEEP_FREED_MEMORY=0, leave glibc's defaults."""
    full = _env(**env)
    for k in [k for k in full if k.startswith("MALLOC_") and k not in env] + ["GLIBC_TUNABLES"]:
        full.pop(k, None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_FAULTS)], capture_output=True, text=True,
                         env=full, timeout=600)
    assert out.returncode == 0, out.stderr
    kept, faults = out.stdout.split()
    assert kept == str(not env)
    assert (int(faults) < 8 * 1024) == (not env), faults


# ---- relu and max pooling: torch's bits, signed zeros and NaN included (N4) ----------------------------------

_SIGNED_CASES = [
    ("relu", lambda L, x: L.relu(x)),
    ("relu_functional_2d", lambda L, x: L.nn.functional.relu(x.reshape(32, -1))),
    ("max_pool2d", lambda L, x: L.nn.functional.max_pool2d(x, 2, return_indices=True)),
    ("max_pool2d_overlapping", lambda L, x: L.nn.functional.max_pool2d(x, 3, 1, return_indices=True)),
    ("max_pool2d_s2_k3", lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, ceil_mode=True, return_indices=True)),
]


@pytest.mark.parametrize("native", ["on", "off"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,fn", _SIGNED_CASES, ids=[c[0] for c in _SIGNED_CASES])
def test_relu_and_max_pool_are_torchs_bits(name, fn, dtype, native, monkeypatch):
    """relu keeps -0.0 (torch's clamp_min) and NaN; max pooling keeps the first of tied maxima, so a window
    of 0.0 and -0.0 gives the first one's sign; forward values, indices and input gradients bit for bit,
    through the C kernels (large float32) and the NumPy ones."""
    monkeypatch.setattr(_native, "_OFF", native == "off")
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, (4, 8, 30, 30)).astype(dtype)  # many ties, many zeros
    x[x == 0] *= np.where(rng.random(int((x == 0).sum())) < 0.5, -1.0, 1.0)  # zeros of both signs
    x.reshape(-1)[::97] = np.nan
    got, want = [], []
    for lib, out in ((ember, got), (torch, want)):
        t = lib.from_numpy(x.copy()).requires_grad_()
        y = fn(lib, t)
        y = y if isinstance(y, tuple) else (y,)
        # small integers (sums of overlapping windows' gradients are exact in any order: the order is
        # test_pooling_is_torchs_to_the_bit's business) and zeros of both signs
        g = (np.arange(y[0].numel()) % 7 - 3).astype(dtype).reshape(tuple(y[0].shape))
        g.reshape(-1)[::10] = -0.0
        y[0].backward(lib.from_numpy(g))
        out += [a.detach().numpy() for a in y] + [t.grad.numpy()]
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a.view(f"i{a.itemsize}"), b.view(f"i{b.itemsize}")), name
