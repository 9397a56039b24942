"""The rest of ember.fx held to torch.fx: Transformer, ShapeProp, the Graphviz drawer."""

import operator

import numpy as np
import torch
from compare import to_ember, to_torch
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

import ember
from ember.fx.passes.graph_drawer import FxGraphDrawer
from ember.fx.passes.shape_prop import ShapeProp


def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))


def _pair():
    torch.manual_seed(0)
    tm, em = _model(torch), _model(ember)
    em.load_state_dict({k: to_ember(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 1, 6, 6)).astype(np.float32)
    return tm, em, x


def _meta(gm):
    out = []
    for n in gm.graph.nodes:
        m = n.meta.get("tensor_meta")
        out.append((n.name, None if m is None else (tuple(m.shape), str(m.dtype).split(".")[-1], m.requires_grad,
                                                     tuple(m.stride), str(m.memory_format).split(".")[-1])))
    return out


def test_shape_prop_matches_torch():
    tm, em, x = _pair()
    tg, eg = torch.fx.symbolic_trace(tm), ember.fx.symbolic_trace(em)
    TorchShapeProp(tg).propagate(to_torch(x))
    ShapeProp(eg).propagate(to_ember(x))
    assert _meta(eg) == _meta(tg)
    # on fakes: the same metadata, nothing computed
    from ember._subclasses.fake_tensor import FakeTensorMode

    fg = ember.fx.symbolic_trace(_model(ember))
    ShapeProp(fg, fake_mode=FakeTensorMode(allow_non_fake_inputs=True)).propagate(to_ember(x))
    assert [m[1][:2] if m[1] else None for m in _meta(fg)] == [m[1][:2] if m[1] else None for m in _meta(tg)]


def test_transformer_rewrites_like_torch():
    results = {}
    for lib in (torch, ember):
        class ReluToNeg(lib.fx.Transformer):
            def call_module(self, target, args, kwargs):
                if isinstance(self.fetch_attr(target), lib.nn.ReLU):
                    return self.call_function(operator.neg, args, kwargs)
                return super().call_module(target, args, kwargs)

        tm, em, x = _pair()
        gm = lib.fx.symbolic_trace(tm if lib is torch else em)
        new = ReluToNeg(gm).transform()
        new.graph.lint()
        out = new(to_torch(x) if lib is torch else to_ember(x))
        results[lib] = ([(n.op, str(getattr(n.target, "__name__", n.target))) for n in new.graph.nodes],
                        out.detach().numpy())
    assert results[ember][0] == results[torch][0]
    np.testing.assert_allclose(results[ember][1], results[torch][1], rtol=1e-5, atol=1e-6)


def test_graph_drawer_dot():
    _, em, x = _pair()
    gm = ember.fx.symbolic_trace(em)
    ShapeProp(gm).propagate(to_ember(x))
    dot = FxGraphDrawer(gm, "cnn").get_dot_graph().to_string()
    lines = dot.splitlines()
    assert lines[0] == 'digraph "cnn" {' and lines[-1] == "}"
    nodes = [n.name for n in gm.graph.nodes]
    for n in nodes:
        assert any(line.startswith(f'  "{n}" [label="{{name=%{n}|') for line in lines), n
    edges = {(a.name, n.name) for n in gm.graph.nodes for a in n.all_input_nodes}
    assert {tuple(p.strip(' ";').split('" -> "')) for p in lines if " -> " in p} == edges
    assert 'shape=(2, 3)' in dot and "dtype=ember.float32" in dot


def test_replace_pattern_like_torch():
    results = {}
    for lib in (torch, ember):
        class M(lib.nn.Module):
            def forward(self, x, w):
                a = lib.relu(x) + 1
                b = lib.relu(w) + 1
                return (a * b).sum() + lib.relu(a).sum()

        def pattern(x):
            return lib.relu(x) + 1

        def replacement(x):
            return lib.sigmoid(x) * 2

        gm = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(gm, pattern, replacement)
        gm.graph.lint()
        x = lib.tensor([[1.0, -2.0], [0.5, 3.0]])
        results[lib] = (len(matches), [(n.op, getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes],
                        gm(x, x * 2).item())
    assert results[ember][:2] == results[torch][:2]
    assert abs(results[ember][2] - results[torch][2]) < 1e-5


def test_has_side_effect_keeps_the_call():
    calls = []

    def log(x):
        calls.append(1)
        return x

    for lib in (torch, ember):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        g.call_function(lib.fx.has_side_effect(log) if lib is ember else log, (x,))
        g.output(x)
        removed = g.eliminate_dead_code()
        if lib is ember:
            assert not removed and len(list(g.nodes)) == 3
