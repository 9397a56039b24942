"""ember.fx's core (Graph, Node, GraphModule, Interpreter, symbolic_trace) held to torch.fx.

Each model of the table is written once against `lib` (ember or torch); both are traced, and the graphs
must have the same nodes (kind, target, arguments), the same generated code (up to the module name) and
the same results as the eager model, with the same weights.
"""

import math
import operator

import numpy as np
import pytest
import torch
from compare import assert_same, to_ember, to_torch

import ember


def _models(lib):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

        def forward(self, x):
            return lib.log_softmax(self.fc2(lib.relu(self.fc1(x))), dim=-1)

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.p = nn.Parameter(lib.ones(4))
            self.register_buffer("b", lib.arange(4.0))

        def forward(self, x, y=2):
            z = self.lin(x) + self.p * self.b
            z = lib.relu(z).sum(dim=1, keepdim=True) * y
            a, b = z.chunk(2, dim=0)
            return z.view(-1), x.shape[0], lib.cat([a, b], 0).transpose(0, 1)[0], -x @ x.t()

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
            self.head = nn.Linear(2 * 3 * 3, 5)

        def forward(self, x):
            h = self.seq(x)
            h = lib.flatten(h, 1)
            return self.head(h) / math.sqrt(2.0) + h.mean()

    class Nested(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = MLP()
            self.norm = nn.LayerNorm(3)

        def forward(self, x):
            out = self.norm(self.inner(x))
            for i in range(2):  # unrolled: the loop does not depend on traced values
                out = out * (i + 1) - 1
            return {"out": out, "max": out.max(dim=1)[0]}

    return {"mlp": (MLP, (2, 4)), "mixed": (Mixed, (2, 4)), "cnn": (CNN, (2, 1, 8, 8)),
            "nested": (Nested, (3, 4))}


def _pair(name):
    """The same model in torch and ember, with torch's weights copied into ember's."""
    tcls, shape = _models(torch)[name]
    ecls, _ = _models(ember)[name]
    torch.manual_seed(0)
    tm, em = tcls(), ecls()
    em.load_state_dict({k: to_ember(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return tm, em, x


def _values(out):
    return tuple(out.values()) if isinstance(out, dict) else out


def _target(t):
    if isinstance(t, str):
        return t
    mod = getattr(t, "__module__", "") or ""
    return ("operator" if mod == "_operator" else mod.split(".")[0]) + "." + t.__name__


def _arg(a):
    if isinstance(a, (tuple, list)):
        return type(a)(_arg(v) for v in a)
    if isinstance(a, dict):
        return {k: _arg(v) for k, v in a.items()}
    return ("node", a.name) if hasattr(a, "op") and hasattr(a, "users") else a


def _nodes(gm):
    return [(n.op, n.name, _target(n.target).replace("ember.", "torch."), _arg(n.args), _arg(n.kwargs),
             len(n.users)) for n in gm.graph.nodes]


@pytest.mark.parametrize("name", ["mlp", "mixed", "cnn", "nested"])
def test_symbolic_trace_matches_torch(name):
    tm, em, x = _pair(name)
    tg, eg = torch.fx.symbolic_trace(tm), ember.fx.symbolic_trace(em)
    assert _nodes(eg) == _nodes(tg)
    assert eg.code.replace("ember.", "torch.") == tg.code
    assert str(eg.graph).replace("ember.", "torch.") == str(tg.graph)
    assert type(eg).__name__ == type(tg).__name__
    eg.graph.lint()
    t_out = _values(tg(to_torch(x)))
    for e_out in (eg(to_ember(x)), em(to_ember(x)), ember.fx.Interpreter(eg).run(to_ember(x))):
        assert_same(_values(e_out), t_out, check_stride=False)
    readable = eg.print_readable(print_output=False)
    assert readable.startswith(f"class {type(em).__name__}(ember.nn.Module):\n    def forward(self")


def test_graph_building_dce_and_printing(capsys):
    """A graph built by hand: names as torch makes them, dead code removed, table and code printed."""
    outs = {}
    for lib in (torch, ember):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        s = g.call_function(lib.sum, (x,))
        g.call_function(lib.sum, (x,))  # dead: nothing uses it
        a = g.call_function(operator.add, (s, 1))
        m = g.call_method("mul", (a, a))
        g.output(m)
        assert g.eliminate_dead_code()
        g.lint()
        gm = lib.fx.GraphModule(lib.nn.Module(), g)
        outs[lib] = ([n.name for n in g.nodes], gm.code.replace("ember.", "torch."), str(g).replace("ember.", "torch."),
                     gm(lib.ones(3)).item())
    assert outs[ember] == outs[torch]
    ember.fx.GraphModule(ember.nn.Module(), g).graph.print_tabular()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert [r.split()[:2] for r in table[2:]] == [["placeholder", "x"], ["call_function", "sum_1"],
                                                  ["call_function", "add"], ["call_method", "mul"],
                                                  ["output", "output"]]


def test_graph_edits_and_lint_errors():
    for lib in (torch, ember):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        r = g.call_function(lib.relu, (x,))
        g.output(r)
        with g.inserting_before(r):
            n = g.call_function(lib.neg, (x,))
        r.replace_input_with(x, n)
        assert [v.name for v in g.nodes] == ["x", "neg", "relu", "output"]
        gm = lib.fx.GraphModule({}, g)
        assert gm(lib.tensor([1.0, -2.0])).tolist() == [0.0, 2.0]
        with pytest.raises(RuntimeError, match="still had 1 users"):
            g.erase_node(n)
        n.replace_all_uses_with(x)
        g.erase_node(n)
        assert gm.recompile() is not None and gm(lib.tensor([1.0, -2.0])).tolist() == [1.0, 0.0]


class _MyLeaf:
    pass


def test_tracer_subclass_leaf_modules_wrap_and_concrete_args():
    results = {}
    for lib in (torch, ember):
        nn = lib.nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x):
                return lib.relu(self.lin(x))

        class Top(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x, flag):
                return self.block(x) if flag else x

        class LeafTracer(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return isinstance(m, Block) or super().is_leaf_module(m, qualname)

        graph = LeafTracer().trace(Top(), concrete_args={"flag": True})
        deep = lib.fx.symbolic_trace(Top(), concrete_args={"flag": True})
        shallow = lib.fx.symbolic_trace(Top(), concrete_args={"flag": False})
        results[lib] = ([(n.op, getattr(n.target, "__name__", n.target)) for n in graph.nodes if n.op != "placeholder"],
                        [n.op for n in deep.graph.nodes if n.op != "placeholder"],
                        [n.op for n in shallow.graph.nodes if n.op != "placeholder"])
    assert results[ember] == results[torch]


def test_control_flow_on_a_traced_value_is_an_error():
    for lib in (torch, ember):
        def f(x):
            return x if x.sum() > 0 else -x
        with pytest.raises(lib.fx.proxy.TraceError,
                           match="symbolically traced variables cannot be used as inputs to control flow"):
            lib.fx.symbolic_trace(f)

        def g(x):
            return [v for v in x]
        with pytest.raises(lib.fx.proxy.TraceError, match="Proxy object cannot be iterated"):
            lib.fx.symbolic_trace(g)


def test_function_trace_with_wrap_and_math():
    """`fx.wrap` at module scope and `math` functions are recorded whole, as torch autowraps them."""
    import tests_fx_wrapped as helper

    codes = {}
    for lib in (torch, ember):
        gm = lib.fx.symbolic_trace(helper.make(lib))
        codes[lib] = gm.code.replace("ember.", "torch.")
        assert gm(lib.tensor([4.0, 1.0])).tolist() == pytest.approx([4 * math.sqrt(2), math.sqrt(2)])
    assert codes[ember] == codes[torch]


def test_concrete_args_are_checked_inputs():
    codes = {}
    for lib in (torch, ember):
        class Top(lib.nn.Module):
            def forward(self, x, flag, none=None):
                return x + 1 if flag and none is None else x

        gm = lib.fx.symbolic_trace(Top(), concrete_args={"flag": True, "none": None})
        codes[lib] = gm.code.replace("ember.", "torch.")
        assert gm(lib.ones(2), True).tolist() == [2.0, 2.0]
        with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
            gm(lib.ones(2), False)
    assert codes[ember] == codes[torch]
