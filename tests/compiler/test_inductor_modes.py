"""ember.compile's modes and options (ember/_inductor/options.py, buffer_plan.py, autotune.py).

- Validation is torch.compile's: the same exception class and message for an unknown mode, an unknown
  option, an option of the wrong type, mode and options together; the mode tables and the option names
  are torch 2.13's.
- Every mode compiles to results equal to torch eager's (values, strides, gradients) on a fused
  softmax/layer_norm/gelu function and on a small MLP's training step.
- "default" reuses dead intermediates' memory (the memory plan's bytes drop, the wrapper takes views of a
  freed slot); mode="lite" turns the passes and the reuse off, as torch's does.
- "reduce-overhead" runs a static plan: intermediates live in slots allocated at compile time with their
  addresses baked into the wrapper, and what a call returns stays valid after the next call.
- "max-autotune" times kernel variants and caches the choice: a second compile of the same kernel (after
  `_dynamo.reset()`) reads the choice from disk and times nothing.
"""

import json
import os
import sys

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember
from ember._inductor import options as O
from ember._inductor.compile_fx import compile_fx
from ember.fx.experimental.proxy_tensor import make_fx

R = np.random.default_rng(0)
CF = sys.modules["ember._inductor.compile_fx"]


@pytest.fixture
def compiled_graphs(monkeypatch):
    """The CompiledGraphs compile_fx returns during a test: the inductor backend runs a graph eagerly when
    its compilation fails (NOTE [ When AOT autograd cannot trace ]), so a test asserts they were made."""
    made = []
    real = CF.compile_fx

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        if isinstance(out, CF.CompiledGraph):
            made.append(out)
        return out

    monkeypatch.setattr(CF, "compile_fx", spy)
    return made


def f32(*s):
    return R.standard_normal(s).astype(np.float32)


def _identity(x):
    return x


ERRORS = [
    ("unknown option", dict(options={"no_such_option": True})),
    ("wrong type", dict(options={"trace.enabled": 1})),
    ("wrong int type", dict(options={"cpp.threads": "4"})),
    ("both", dict(mode="default", options={"max_autotune": True})),
    ("unknown mode", dict(mode="fastest")),
]


@pytest.mark.parametrize("name,kwargs", ERRORS, ids=[e[0] for e in ERRORS])
def test_validation_errors_are_torchs(name, kwargs):
    assert_same_error(lambda L: L.compile(_identity, **kwargs))


def test_mode_tables_and_option_names_are_torchs():
    for mode in (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune"):
        assert ember._inductor.list_mode_options(mode) == torch._inductor.list_mode_options(mode)
    assert ember._inductor.list_options() == torch._inductor.list_options()
    # options torch accepts are accepted (a dash for an underscore, as torch reads them)
    for opts in ({"max-autotune": True}, {"trace.enabled": True}, {"triton.cudagraphs": False}):
        ember.compile(_identity, options=opts)
        torch.compile(_identity, options=opts)


def _fused(L, x):
    F = L.nn.functional
    y = F.softmax(x, -1)
    return F.gelu(F.layer_norm(y, x.shape[-1:])) * 2 + y.sum(-1, keepdim=True), (x * 3).exp().t()


MODES = ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "lite"]


@pytest.mark.parametrize("mode", MODES)
def test_modes_equal_torch_eager(mode, tmp_path, monkeypatch, compiled_graphs):
    """Forward values and strides, and the input's gradient through the compiled backward."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))

    def body(L, x):
        fn = (lambda a: _fused(L, a)) if L is torch else ember.compile(lambda a: _fused(ember, a), mode=mode)
        out = fn(x)
        again = fn(x * 1)  # a second call: the static plan's slots are reused
        return out, again

    check(body, f32(16, 32), grad=True, rtol=1e-5, atol=1e-6)
    assert len(compiled_graphs) >= 2 and all(g.n_kernels for g in compiled_graphs)  # forward and backward


def _mlp(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(12, 32), L.nn.ReLU(), L.nn.Linear(32, 5))


@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune"])
def test_train_steps_equal_torch_eager(mode, tmp_path, monkeypatch, compiled_graphs):
    """Three SGD steps of an MLP compiled with each mode: losses and final weights equal torch eager's."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    xs, ys = f32(3, 8, 12), R.integers(0, 5, (3, 8))

    def body(L, xs, ys):
        model = _mlp(L)
        if L is ember:
            sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in _mlp(torch).state_dict().items()}
            model.load_state_dict(sd)
        run = ember.compile(model, mode=mode) if L is ember else model
        opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for i in range(3):
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(run(xs[i]), ys[i])
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return losses, [p.detach() for p in model.parameters()]

    check(body, xs, ys, rtol=1e-5, atol=1e-6)
    assert len(compiled_graphs) >= 2


def _chain(x):
    a = (x * 0.1).exp()
    m = a @ a                  # a matmul (a call into BLAS) ends the kernel; after it, a is dead
    c = (m.sin() + 1) * 0.5    # a's size and dtype: c takes a's memory
    return (c @ c * 0.01).cos(), c.sum()


def _compiled(fn, x, cfg):
    gm = make_fx(fn)(x)
    with O.patched(cfg):
        return compile_fx(gm, [x])


def test_default_reuses_dead_buffers_and_lite_does_not():
    x = ember.from_numpy(f32(64, 64))
    ref = _chain(x)
    default = _compiled(_chain, x, {})
    lite = _compiled(_chain, x, ember._inductor.list_mode_options("lite"))
    for cg in (default, lite):
        for got, want in zip(cg(x), ref):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    for got, want in zip(default(x), lite(x)):  # the same kernels, with and without reuse: the same bits
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert "_as_layout(_sb" in default.wrapper_source
    assert "_as_layout" not in lite.wrapper_source


def test_reduce_overhead_static_plan_and_outputs_stay_valid():
    x1, x2 = ember.from_numpy(f32(64, 64)), ember.from_numpy(f32(64, 64))
    cg = _compiled(_chain, x1, ember._inductor.list_mode_options("reduce-overhead"))
    src = cg.wrapper_source
    assert "_S_buf" in src and "_sb" not in src and "_empty" in src  # (the outputs are fresh)
    a = cg(x1)
    b = cg(x2)
    for got, want in zip(a + b, _chain(x1) + _chain(x2)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    assert a[0].data_ptr() != b[0].data_ptr()


def _trig_chain(x):  # one kernel with staged fast sins and their exact body (NOTE [ Staged trig chains ])
    return (((x * 0.1).sin() * 2).cos() * 3).sin(), x.sum()


@pytest.mark.parametrize("fn", [_chain, _trig_chain])
def test_max_autotune_caches_its_choice(tmp_path, monkeypatch, fn):
    from ember._inductor import autotune

    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    x = ember.from_numpy(f32(64, 64))
    cfg = ember._inductor.list_mode_options("max-autotune")
    from ember import _native
    build, built = _native.build_source, []

    def spy(name, source):  # every variant library must build (a failed build falls back silently)
        lib = build(name, source)
        built.append((name, lib is not None))
        return lib
    monkeypatch.setattr(_native, "build_source", spy)
    first = _compiled(fn, x, cfg)
    assert all(ok for name, ok in built if name == "inductor_tune"), built
    np.testing.assert_allclose(first(x)[0].numpy(), fn(x)[0].numpy(), rtol=1e-5, atol=1e-5)
    if first.backend != "c":  # the NumPy code generator has no variants to time
        assert not (tmp_path / "autotune").exists()
        return
    files = sorted((tmp_path / "autotune").iterdir())
    assert len(files) == first.n_kernels
    for f in files:
        variant, threads = json.loads(f.read_text())["choice"]
        assert variant in autotune.VARIANTS and threads >= 1

    def no_timing(*a):
        raise AssertionError("a cached choice was timed again")

    monkeypatch.setattr(autotune, "_time", no_timing)
    again = _compiled(fn, x, cfg)
    np.testing.assert_allclose(again(x)[0].numpy(), fn(x)[0].numpy(), rtol=1e-5, atol=1e-5)
    assert sorted(os.listdir(tmp_path / "autotune")) == [f.name for f in files]


def test_trace_enabled_writes_the_debug_folder(tmp_path):
    """options={"trace.enabled": True}: per compiled graph, its FX code, the generated wrapper and kernels,
    and the memory plan, under torch's folder layout (run_<time>-pid_<pid>/torchinductor/)."""
    f = ember.compile(_chain, options={"trace.enabled": True, "trace.debug_dir": str(tmp_path)})
    x = ember.from_numpy(f32(64, 64))
    np.testing.assert_allclose(f(x)[0].numpy(), _chain(x)[0].numpy(), rtol=1e-5, atol=1e-5)
    graphs = sorted(tmp_path.glob("run_*-pid_*/torchinductor/graph_*"))
    assert graphs
    files = {p.name: p.read_text() for p in graphs[0].iterdir()}
    assert set(files) == {"fx_graph_readable.py", "output_code.py", "memory_plan.txt"}
    assert "def forward" in files["fx_graph_readable.py"] and "def call(args)" in files["output_code.py"]
    assert files["memory_plan.txt"].startswith("memory plan:")


def test_dynamic_sizes_through_the_passes():
    """dynamic=True over three sizes: view chains, expands and identities folded by the passes give each
    size its own shapes (AOT autograd hands compile_fx a graph specialized to each size; the passes also
    refuse shape rewrites where a size is a graph node, NOTE in simplify.py's `_static`)."""
    def body(L, *xs):
        def fn(x):
            return x.view(x.size(0), -1).view(-1).exp(), x.expand(x.size(0), 4) * 1 + 0
        run = ember.compile(fn, dynamic=True) if L is ember else fn
        return [run(x) for x in xs]

    check(body, f32(1, 4), f32(3, 4), f32(5, 4))
