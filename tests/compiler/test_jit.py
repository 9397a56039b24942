"""torch.jit against torch 2.13: trace (results, warnings, check_trace, live parameters), script, save/load,
freeze / optimize_for_inference and the decorators. Each case runs the same code with `lib` = ember and
torch from the same NumPy inputs (tests/compare.py)."""

import io
import os
import sys
import warnings
import zipfile

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from compare import assert_same, assert_same_error, check, normalize_message  # noqa: E402

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _quiet(fn):
    """Run `fn` with the deprecation and tracer warnings silenced (they are tested on their own below)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


# --- models built alike in both libraries from NumPy weights -------------------------------------------------

def mlp(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    _load(lib, m)
    return m


def conv_bn(lib):
    m = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.BatchNorm2d(3), lib.nn.ReLU(),
                          lib.nn.Flatten(), lib.nn.Linear(3 * 5 * 5, 4))
    _load(lib, m)
    m[1].running_mean.copy_(lib.tensor(np.linspace(-1, 1, 3, dtype=np.float32)))
    m[1].running_var.copy_(lib.tensor(np.linspace(0.5, 2, 3, dtype=np.float32)))
    return m


def _load(lib, m):
    rng = np.random.default_rng(1)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))


class Residual:
    """A module with a non-forward method, a buffer and a Python-int attribute (built for either lib)."""

    @staticmethod
    def make(lib):
        class Res(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 4)
                self.register_buffer("scale", lib.tensor([2.0]))
                self.k = 3

            def forward(self, x, pair):
                a, b = pair
                h = self.fc(x) * self.scale + a
                return h.tanh() * self.k, (h - b).sum(1)

        m = Res()
        _load(lib, m)
        return m


def f_branch(lib):
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x - 1
    return f


def f_item(lib):
    def f(x):
        return x * x.max().item() + x.softmax(0)
    return f


def f_len(lib):
    def f(x):
        return x[: len(x) - 1].cumsum(0)
    return f


# (name, fn(lib, *inputs) -> result): traced on the first input, called on the others
TRACE_CASES = {
    "mlp_new_batch": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(mlp(lib), x))(y), (arr(5, 3), arr(7, 3))),
    "conv_bn_eval": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(conv_bn(lib).eval(), x))(y),
                     (arr(2, 2, 5, 5), arr(3, 2, 5, 5))),
    "branch_baked": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(f_branch(lib), x))(y),
                     (np.abs(arr(4)), -np.abs(arr(4)))),
    "item_baked": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(f_item(lib), x))(y), (arr(5), arr(5))),
    "len_baked": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(f_len(lib), x))(y), (arr(5, 2), arr(5, 2))),
    "nested_inputs_tuple_out": (
        lambda lib, x, a, b: _quiet(lambda: lib.jit.trace(Residual.make(lib), (x, (a, b))))(x * 2, (b, a)),
        (arr(3, 4), arr(3, 4), arr(3, 4))),
    "example_kwarg_inputs": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(
        lambda a, b: a * 2 + b.exp(), example_kwarg_inputs={"b": y, "a": x}))(y, x), (arr(2, 3), arr(2, 3))),
    "lambda_two_args": (lambda lib, x, y: _quiet(lambda: lib.jit.trace(lambda a, b: (a @ b.t()).relu(), (x, y)))(
        y, x), (arr(3, 3), arr(3, 3))),
}


@pytest.mark.parametrize("name", list(TRACE_CASES))
def test_trace_results(name):
    fn, inputs = TRACE_CASES[name]
    check(fn, *inputs, grad=True)


def _tracer_warnings(lib, fn, args, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        lib.jit.trace(fn(lib), args, **kw)
    return [(x.category.__name__, normalize_message(str(x.message))) for x in w]


WARN_CASES = {
    "bool": (f_branch, {}),
    "item": (f_item, {}),
    "len": (f_len, {}),
    "int": (lambda lib: lambda x: x[: int(x.abs().sum())], {}),
    "float": (lambda lib: lambda x: x + float(x.sum()), {}),
    "tolist": (lambda lib: lambda x: x * x.tolist()[0], {}),
    "list_out_strict": (lambda lib: lambda x: [x, x + 1], {}),
    "list_out_not_strict": (lambda lib: lambda x: [x, x + 1], {"strict": False}),
    "clean": (lambda lib: lambda x: (x * 2).exp(), {}),
    "with_check": (f_branch, {"check_trace": True}),
}


@pytest.mark.parametrize("name", list(WARN_CASES))
def test_trace_warnings(name):
    fn, kw = WARN_CASES[name]
    kw = {"check_trace": False, **kw}
    x = np.abs(arr(4)) + 1
    got = _tracer_warnings(ember, fn, ember.tensor(x), **kw)
    want = _tracer_warnings(torch, fn, torch.tensor(x), **kw)
    assert got == want


@pytest.mark.parametrize("how", ["trace", "trace_module"])
@pytest.mark.parametrize("check_trace", [True, False])
def test_module_trace_warnings(how, check_trace):
    def run(lib):
        m, x = mlp(lib), lib.ones(2, 3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if how == "trace":
                lib.jit.trace(m, x, check_trace=check_trace)
            else:
                lib.jit.trace_module(m, {"forward": x}, check_trace=check_trace)
        return [(x.category.__name__, normalize_message(str(x.message))) for x in w]

    assert run(ember) == run(torch)


def test_check_trace_graph_differs_and_output_mismatch():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                lib.jit.trace(f_branch(lib), lib.ones(3), check_inputs=[(-lib.ones(3),)])
            except Exception as e:  # noqa: BLE001 - compared below
                err = (type(e).__name__, str(e).splitlines()[:2])
        msgs = [str(x.message).splitlines()[0] for x in w if x.category.__name__ == "TracerWarning"]
        return err, msgs

    assert run(ember) == run(torch)


def test_check_trace_nondeterministic():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.jit.trace(lambda x: x + lib.rand(3), lib.ones(3))
        return [str(x.message).split("\n")[0] for x in w if x.category.__name__ == "TracerWarning"]

    got, want = run(ember), run(torch)
    assert got[0] == want[0] == "Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:"
    assert [m[:60] for m in got[1:]] == [m[:60] for m in want[1:]]


def test_is_tracing_and_deprecation():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = lib.jit.trace(lambda x: x * int(lib.jit.is_tracing()), lib.ones(2), check_trace=False)
        return (t(lib.ones(2)).tolist(), lib.jit.is_tracing(), lib.jit.is_scripting(),
                [str(x.message) for x in w if x.category is DeprecationWarning])

    assert run(ember) == run(torch)


def test_parameters_stay_live():
    """Training the traced module trains the original (the same Parameter objects) and the next call sees it."""
    def run(lib, x, y):
        m = mlp(lib)
        tm = _quiet(lambda: lib.jit.trace(m, x))
        opt = lib.optim.SGD(tm.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            ((tm(x) - y) ** 2).mean().backward()
            opt.step()
        assert getattr(tm, "0").weight is m[0].weight
        return tm(x), m(x), list(tm.state_dict()), type(tm).__name__, tm.original_name

    check(run, arr(5, 3), arr(5, 2))


def test_trace_module_methods():
    def run(lib, x):
        m = mlp(lib)
        m.head = lambda z: m[2](z)
        tm = _quiet(lambda: lib.jit.trace_module(m, {"forward": x}))
        return tm.forward(x), tm(x)

    check(run, arr(2, 3))


def test_graph_and_code():
    tm = _quiet(lambda: ember.jit.trace(mlp(ember), ember.ones(2, 3)))
    ops = [str(n.target) for n in tm.graph.nodes if n.op == "call_function"]
    assert ops == ["aten.t.default", "aten.addmm.default", "aten.relu.default", "aten.t.default",
                   "aten.addmm.default"]
    assert "getattr(self, \"0\").weight" in tm.code and isinstance(tm, ember.jit.ScriptModule)
    tf = _quiet(lambda: ember.jit.trace(lambda x: x * 2, ember.ones(1)))
    assert tf.name == _quiet(lambda: torch.jit.trace(lambda x: x * 2, torch.ones(1))).name
    assert "aten.mul.Tensor" in tf.code or "aten.mul" in tf.code


# --- save / load --------------------------------------------------------------------------------------------

def test_save_load_round_trip(tmp_path):
    x = ember.tensor(arr(3, 2, 5, 5))
    m = conv_bn(ember).eval()
    tm = _quiet(lambda: ember.jit.trace(m, x))
    path = str(tmp_path / "m.pt")
    _quiet(lambda: ember.jit.save(tm, path, _extra_files={"note.txt": "hi"}))
    extra = {"note.txt": ""}
    loaded = _quiet(lambda: ember.jit.load(path, _extra_files=extra))
    assert extra["note.txt"] == b"hi"
    assert isinstance(loaded, ember.jit.RecursiveScriptModule) and not loaded.training
    assert ember.equal(loaded(x), m(x)) and list(loaded.state_dict()) == list(tm.state_dict())
    assert all(p.requires_grad for p in loaded.parameters())
    # the weights are in torch's tensor format: torch reads them without ember
    with zipfile.ZipFile(path) as z:
        state = torch.load(io.BytesIO(z.read("m/data.pt")), weights_only=True)
    for k, v in tm.state_dict().items():
        assert np.array_equal(state[k].numpy(), v.numpy())
    # a function, through a file object
    f = _quiet(lambda: ember.jit.trace(lambda a, b: (a * b).sum(0), (x, x)))
    buf = io.BytesIO()
    _quiet(lambda: ember.jit.save(f, buf))
    buf.seek(0)
    g = _quiet(lambda: ember.jit.load(buf))
    assert isinstance(g, ember.jit.ScriptFunction) and ember.equal(g(x, x + 1), f(x, x + 1))


def test_save_refuses_scripted(tmp_path):
    s = _quiet(lambda: ember.jit.script(f_branch(ember)))
    with pytest.raises(RuntimeError, match="a scripted function is guarded Python capture"):
        _quiet(lambda: ember.jit.save(s, str(tmp_path / "s.pt")))


def test_load_refuses_torch_archives(tmp_path):
    path = str(tmp_path / "t.pt")
    _quiet(lambda: torch.jit.save(torch.jit.trace(torch.nn.Linear(2, 2), torch.ones(1, 2)), path))
    with pytest.raises(RuntimeError, match="TorchScript archive written by torch.jit.save"):
        _quiet(lambda: ember.jit.load(path))


def test_load_errors(tmp_path):
    def missing(lib):
        return _quiet(lambda: lib.jit.load(str(tmp_path / "nope.pt")))

    assert_same_error(lambda lib: missing(lib))
    assert_same_error(lambda lib: _quiet(lambda: lib.jit.load(str(tmp_path))))


# --- freeze / optimize_for_inference ----------------------------------------------------------------------------

def test_freeze():
    def run(lib, x):
        m = conv_bn(lib).eval()
        tm = _quiet(lambda: lib.jit.trace(m, x))
        fr = _quiet(lambda: lib.jit.freeze(tm))
        opt = _quiet(lambda: lib.jit.optimize_for_inference(tm))
        out = fr(x)
        with lib.no_grad():  # frozen: later changes to the module do not reach it
            m[0].weight.add_(1)
        return out, fr(x), opt(x), len(list(fr.parameters())), len(list(fr.named_buffers()))

    check(run, arr(2, 2, 5, 5))


def test_freeze_errors():
    assert_same_error(lambda lib: _quiet(lambda: lib.jit.freeze(mlp(lib))))
    assert_same_error(lambda lib: _quiet(lambda: lib.jit.freeze(lib.jit.trace(mlp(lib), lib.ones(1, 3)))))


# --- script and the decorators --------------------------------------------------------------------------------

def test_script_function_keeps_control_flow():
    def run(lib, x):
        s = _quiet(lambda: lib.jit.script(f_branch(lib)))
        return s(x), s(-x), s(x * 0 - 1)

    check(run, np.abs(arr(4)) + 1)


class Scripted:
    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 3)

            @lib.jit.ignore
            def py_side(self, x):
                return x * 2

            @lib.jit.export
            def extra(self, x):
                return self.fc(x).sum()

            @lib.jit.unused
            def never(self, x):
                return x

            def forward(self, x):
                h = self.fc(x)
                if lib.jit.is_scripting():
                    return h
                return self.py_side(h).relu()

        m = M()
        _load(lib, m)
        return m


def test_script_module():
    def run(lib, x):
        s = _quiet(lambda: lib.jit.script(Scripted.make(lib)))
        return s(x), s.extra(x), list(s.state_dict()), isinstance(s, lib.jit.ScriptModule)

    # torch runs forward in TorchScript (is_scripting() is True there); ember runs Python, so compare
    # ember's scripted module with eager torch, which takes the same branch
    x = arr(2, 3)
    e = run(ember, ember.tensor(x))
    m = Scripted.make(torch)
    t = (m(torch.tensor(x)), m.extra(torch.tensor(x)), list(m.state_dict()), True)
    assert_same(e, t)


def test_decorators_and_helpers():
    def run(lib):
        def f(x):
            return x
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dropped = lib.jit.ignore(drop=True)(f) is f
        return (lib.jit.ignore(f) is f, lib.jit.unused(f) is f, lib.jit.export(f) is f,
                lib.jit.annotate(int, 3), tuple(lib.jit.Attribute(3, int)), lib.jit.is_scripting(),
                issubclass(lib.jit.TracerWarning, Warning), dropped,
                [(x.category.__name__, normalize_message(str(x.message))) for x in w])

    assert run(ember) == run(torch)
    assert_same_error(lambda lib: lib.jit.ignore(3))


def test_new_shapes_retrace_and_loaded_graph_refuses(tmp_path):
    """A traced object runs a new input shape (one graph per signature, NOTE [ A trace per input shape ]);
    a loaded one, having no Python function, refuses it with an error instead of a NumPy one."""
    m = conv_bn(ember).eval()
    tm = _quiet(lambda: ember.jit.trace(m, ember.ones(2, 2, 5, 5)))
    y = ember.tensor(arr(4, 2, 5, 5))
    assert ember.allclose(tm(y), m(y)) and tm.graph is tm._c.graph
    path = str(tmp_path / "m.pt")
    _quiet(lambda: ember.jit.save(tm, path))
    loaded = _quiet(lambda: ember.jit.load(path))
    assert ember.allclose(loaded(ember.ones(2, 2, 5, 5)), m(ember.ones(2, 2, 5, 5)))
    with pytest.raises(RuntimeError, match=r"traced for inputs \[2, 2, 5, 5\] ember.float32"):
        loaded(y)
