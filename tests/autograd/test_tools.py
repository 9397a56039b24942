"""Tools against torch: gradcheck/gradgradcheck, anomaly detection, autograd.functional, and the graph
printers (text tree and Graphviz dot, ember-only, checked for content)."""

import warnings

import numpy as np
import pytest
from helpers import T, arr, same

import ember


def test_gradcheck_passes_and_fails_like_torch():
    def body(lib):
        x = T(lib, arr(3, dtype=np.float64), True)
        w = T(lib, arr(3, seed=1, dtype=np.float64), True)
        ok = lib.autograd.gradcheck(lambda a, b: (a * b).tanh(), (x, w))
        ok2 = lib.autograd.gradgradcheck(lambda a, b: (a * b).tanh(), (x, w))

        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        bad = lib.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
        return ok, ok2, bad
    same(body)


def test_gradcheck_error_class_and_message():
    def body(lib):
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = T(lib, np.array([1.0, 2.0]), True)
        lib.autograd.gradcheck(Wrong.apply, (x,))
    msg = same(body)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    assert issubclass(ember.autograd.GradcheckError, RuntimeError)


def test_gradcheck_argument_errors_and_float32_warning():
    same(lambda lib: lib.autograd.gradcheck(lambda a: a * 2, (lib.ones(2, dtype=lib.float64),)))

    def body(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lambda a: a * 2, (lib.ones(2, requires_grad=True),), atol=1e-2, rtol=1e-2)
        return [str(x.message) for x in w]
    same(body)


def test_detect_anomaly_nan_check():
    def body(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with lib.autograd.detect_anomaly():
                    x = T(lib, np.array([0.0, 1.0], np.float32), True)
                    y = x.sqrt() * 0
                    y.sum().backward()
                err = None
            except RuntimeError as e:
                err = str(e)
        traces = [str(x.message) for x in w if "Traceback of forward call" in str(x.message)]
        return err, len(traces) == 1, "y = x.sqrt() * 0" in traces[0], lib.is_anomaly_enabled()
    same(body)


def test_set_detect_anomaly_and_flags():
    def body(lib):
        out = [lib.is_anomaly_enabled()]
        lib.autograd.set_detect_anomaly(True)
        out.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.autograd.set_detect_anomaly(False)
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            out.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        out.append(lib.is_anomaly_enabled())
        return out
    same(body)


# ---- functional ----------------------------------------------------------------------------------------


def _fns(lib):
    def f(x):
        return (x ** 3).sum()

    def g(x, y):
        return (x * y).tanh(), x.exp() * y

    def h(x, y):
        return (x.sin() * y).sum() if hasattr(x, "sin") else (x.tanh() * y * y).sum()
    return f, g, h


@pytest.mark.parametrize("create_graph", [False, True])
def test_functional(create_graph):
    def body(lib):
        f, g, h = _fns(lib)
        F = lib.autograd.functional
        x = T(lib, arr(3, dtype=np.float64))
        y = T(lib, arr(3, seed=1, dtype=np.float64))
        v = T(lib, arr(3, seed=2, dtype=np.float64))
        kw = dict(create_graph=create_graph)
        return (F.vjp(f, x, **kw), F.vjp(g, (x, y), (v, v), **kw), F.jvp(g, (x, y), (v, v), **kw),
                F.jacobian(g, (x, y), **kw), F.jacobian(lambda a: a.tanh(), x, **kw), F.hessian(f, x, **kw),
                F.hessian(h, (x, y), **kw), F.hvp(h, (x, y), (v, v), **kw), F.vhp(f, x, v, **kw),
                F.jacobian(g, (x, y), vectorize=True, **kw))
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib, F, x: F.vjp(lambda a: a * 2, x),
    lambda lib, F, x: F.vjp(lambda a: a * 2, x, lib.ones(4)),
    lambda lib, F, x: F.jvp(lambda a: a * 2, (x, x), (x,)),
    lambda lib, F, x: F.jacobian(lambda a: a * 2, [x]),
    lambda lib, F, x: F.jacobian(lambda a: lib.ones(2), x, strict=True),
    lambda lib, F, x: F.hessian(lambda a: a * 2, x),
    lambda lib, F, x: F.hvp(lambda a: (a, a), x, x),
    lambda lib, F, x: F.jacobian(lambda a: a, x, strategy="forward-mode"),
    lambda lib, F, x: F.vjp(lambda a: lib.ones(1), x, lib.ones(1), strict=True),
])
def test_functional_errors(case):
    same(lambda lib: case(lib, lib.autograd.functional, T(lib, arr(3, dtype=np.float64))))


# ---- graph printing (ember only: torch has no built-in printer) -------------------------------------------


def test_format_graph_and_dot():
    x = ember.ones(2, 3, requires_grad=True)
    w = ember.ones(3, requires_grad=True)
    h = x * w
    loss = (h.exp() + h).sum()
    text = ember.autograd.graph.format_graph(loss, params={"x": x, "w": w})
    lines = text.splitlines()
    assert lines[0] == "SumBackward0"
    assert lines[1] == "└── AddBackward0"
    assert "│   ├── ExpBackward0" in lines[2] or "    ├── ExpBackward0" in lines[2]
    assert any("AccumulateGrad  x [2, 3]" in ln for ln in lines)
    assert any("AccumulateGrad  w [3]" in ln for ln in lines)
    assert any("MulBackward0 (seen above)" in ln for ln in lines)
    dot = ember.autograd.graph.to_dot(loss, params={"x": x, "w": w}, show_saved=True)
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    assert dot.count("->") == 7  # 6 graph edges + the output marker
    assert 'label="AccumulateGrad  x [2, 3]" fillcolor=lightblue' in dot
    assert "saved: [2, 3] [3]" in dot
    assert ember.autograd.graph.format_graph(ember.ones(2)).startswith("None")


def test_save_graph_writes_dot_and_renders_with_graphviz(tmp_path):
    import shutil

    w = ember.ones(3, requires_grad=True)
    loss = (w * 2).sum()
    params = {"w": w}
    path = ember.autograd.graph.save_graph(loss, tmp_path / "g.dot", params=params)
    assert open(path).read() == ember.autograd.graph.to_dot(loss, params)
    if shutil.which("dot"):  # Graphviz installed: a real SVG
        svg = ember.autograd.graph.save_graph(loss, tmp_path / "g.svg", params=params)
        assert "<svg" in open(svg).read() and "MulBackward0" in open(svg).read()
    else:  # without it: a clear error, and the source written beside the requested file
        with pytest.raises(RuntimeError, match="needs Graphviz's `dot` program on PATH"):
            ember.autograd.graph.save_graph(loss, tmp_path / "g.svg", params=params)
        assert "MulBackward0" in (tmp_path / "g.dot").read_text()
