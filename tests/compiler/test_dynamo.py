"""ember.compile's capture against torch.compile: graphs and breaks (explain), recompiles on guard misses,
fullgraph errors, no stale results, side effects, hooks, dynamic shapes, the API and logging.

Each case is written once as `make(lib)` returning the function (lib is ember or torch) and run in both
from the same NumPy inputs; counts come from each library's own `explain` or a counting backend.
"""

import logging
import os
import re
import sys

import dynamo_cases
import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check, to_ember, to_torch

import ember

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)).astype(np.float32)
GLOBAL_SCALE = 2.0


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _capture_log(fn):
    log = logging.getLogger("torch._dynamo")
    h, level = _Records(), log.level
    log.addHandler(h)
    log.setLevel(logging.DEBUG)
    try:
        fn()
    finally:
        log.removeHandler(h)
        log.setLevel(level)
    return h.messages


def _lib_args(lib, args):
    return [to_torch(a) if lib is torch else to_ember(a) for a in args]


# -- graphs and breaks, as torch's explain counts them -------------------------------------------------------


def _print_break(lib):
    def f(x):
        y = x + 1
        print("graph break")
        return y * 2

    return f


def _branch(lib):
    def f(x):
        y = x.sin()
        if y.sum() > 0:
            return y + 1
        return y - 1

    return f


def _item(lib):
    def f(x):
        a = x.sum().item()
        return x * a

    return f


def _loop_inline(lib):
    def g(x):
        return x.cos() * 2

    def f(x):
        for i in range(3):
            x = g(x) + i
        return x

    return f


def _no_grad_block(lib):
    def f(x):
        with lib.no_grad():
            y = x * 2
        return y + x

    return f


def _break_in_callee(lib):
    def g(x):
        print("in g")
        return x * 3

    def f(x):
        z = g(x + 1)
        return z - 1

    return f


def _disabled_call(lib):
    @lib.compiler.disable
    def g(x):
        return x * 3

    def f(x):
        return g(x.relu()).sum()

    return f


def _tolist(lib):
    def f(x):
        n = x.shape[0]
        vals = x[0].tolist()
        return x * n + len(vals)

    return f


def _module_with_hooks(lib):
    m = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))
    m[0].register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    m[2].register_forward_hook(lambda mod, args, out: out + 1)

    def f(x):
        return m(x)

    return f


def _containers(lib):
    def f(x):
        outs = []
        d = {"a": x, "b": x * 2}
        for k, v in d.items():
            outs.append(v.sum(0) if k == "a" else v.mean(0))
        a, *rest = outs
        return lib.stack([a] + rest), {"n": len(outs)}

    return f


def _break_inside_no_grad(lib):
    def f(x):
        with lib.no_grad():
            y = x * 2
            print("graph break inside the block")
            z = y + 1
        return z * x, lib.is_grad_enabled()

    return f


EXPLAIN_CASES = [
    _break_inside_no_grad,
    _print_break,
    _branch,
    _item,
    _loop_inline,
    _no_grad_block,
    _break_in_callee,
    _disabled_call,
    _tolist,
    _module_with_hooks,
    _containers,
]


@pytest.mark.parametrize("make", EXPLAIN_CASES, ids=[m.__name__.strip("_") for m in EXPLAIN_CASES])
def test_graphs_and_breaks_match_torch_explain(make, capsys):  # noqa: D103
    counts = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        ex = lib._dynamo.explain(make(lib))(*_lib_args(lib, [X]))
        counts[lib.__name__] = (ex.graph_count, ex.graph_break_count)
        assert len(ex.graphs) == ex.graph_count and len(ex.ops_per_graph) == ex.graph_count
        assert all(r.user_stack for r in ex.break_reasons)
    assert counts["ember"] == counts["torch"]
    # and the compiled function computes what the eager one does (same seed: the same module weights)
    check(lambda lib, x: (lib.manual_seed(0), lib.compile(make(lib), backend="eager")(x))[1], X)
    capsys.readouterr()


@pytest.mark.parametrize("name", sorted(dynamo_cases.CASES))
def test_break_cases_match_torch(name):
    """tests/compiler/dynamo_cases.py: graphs, breaks and break reasons as torch's `explain` counts them, the
    compiled result equal to torch's, and torch's own figures equal to the saved reference that the
    3.10/3.12 runs compare with (test_python_versions.py)."""
    t_counts, t_out = dynamo_cases.run_case(torch, name, raw=True)
    e_counts, e_out = dynamo_cases.run_case(ember, name, raw=True)
    assert e_counts == t_counts
    assert_same(e_out, t_out)
    t_outs = dynamo_cases.flatten(t_out)
    ref = np.load(dynamo_cases.REF)
    assert tuple(ref[f"{name}/counts"]) == t_counts
    saved = [k for k in ref.files if k.startswith(f"{name}/out")]
    assert saved == [f"{name}/out{i}" for i in range(len(t_outs))]
    for i, o in enumerate(t_outs):
        np.testing.assert_array_equal(ref[f"{name}/out{i}"], o)


@pytest.mark.parametrize("name", ["mlp", "lenet", "lstm_lm", "small_gpt"])
def test_benchmark_models_graphs_and_breaks_match_torch(name):
    """The benchmark models: the small GPT breaks inside TransformerEncoder (`_detect_is_causal_mask`'s
    bool of a tensor), three frames deep, and torch's frames of torch.nn then run uncompiled; the LSTM LM
    is given up whole (RNN modules are not captured by default)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
    import models as BM

    shapes = {"mlp": (4, 784), "lenet": (2, 1, 28, 28)}
    counts = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        model = getattr(BM, name)(lib)
        if name in shapes:
            x = lib.from_numpy(rng.standard_normal(shapes[name]).astype(np.float32))
        else:
            seq = 12 if name == "lstm_lm" else 64
            x = lib.from_numpy(np.random.default_rng(0).integers(0, 1000, (2, seq)))
        ex = lib._dynamo.explain(model)(x)
        counts[lib.__name__] = (ex.graph_count, ex.graph_break_count, len(ex.break_reasons))
        if ex.break_reasons:
            counts[lib.__name__ + " stack"] = [s.name for s in ex.break_reasons[0].user_stack]
    assert counts["ember"] == counts["torch"]
    assert counts.get("ember stack") == counts.get("torch stack")


def test_break_reasons_name_the_user_line():
    ex = ember._dynamo.explain(_print_break(ember))(ember.from_numpy(X))
    (reason,) = ex.break_reasons
    assert "print" in reason.reason
    # torch's form: one traceback.FrameSummary per frame, the top frame's first
    assert [(s.name, os.path.basename(s.filename)) for s in reason.user_stack] == [("f", "test_dynamo.py")]
    assert ex.graphs[0].code and "add" in ex.graphs[0].code


# -- recompiles on guard misses: counts as torch's, results never stale --------------------------------------


def _counting(lib, make, calls, **kw):
    n = [0]

    def backend(gm, example_inputs):
        n[0] += 1
        return gm.forward

    lib._dynamo.reset()
    f = lib.compile(make(lib), backend=backend, **kw)
    outs = [f(*c(lib)) for c in calls]
    return n[0], outs


def _arr(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _mk_scale(lib):
    return lambda x: x * 2 + 1


def _mk_mul_n(lib):
    return lambda x, n: x * n


def _mk_grad_mode(lib):
    def f(x):
        return x * 3

    return f


def _mk_global(lib):
    def f(x):
        return x * GLOBAL_SCALE

    return f


def _mk_training(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Dropout(0.0), lib.nn.BatchNorm1d(4))

    def f(x, train):
        m.train(train)
        return m(x)

    return f


def _mk_closure(lib):
    scale = [1.0]

    def f(x):
        return x * scale[0]

    def call(x, s):
        scale[0] = s
        return f(x)

    f.set = call
    return f


def _t(lib, a, rg=False):
    t = to_torch(a) if lib is torch else to_ember(a)
    return t.requires_grad_() if rg else t


def _set_global(v):
    global GLOBAL_SCALE
    GLOBAL_SCALE = v


RECOMPILE_CASES = {
    "automatic_dynamic": (_mk_scale, [(3, 4), (5, 4), (7, 4), (9, 4)], {}),
    "static": (_mk_scale, [(3, 4), (5, 4), (7, 4)], {"dynamic": False}),
    "dynamic_true": (_mk_scale, [(3, 4), (5, 4), (7, 4)], {"dynamic": True}),
    "dtype": (_mk_scale, [(3, 4), (3, 4, "f64"), (3, 4, "f64")], {}),
    "requires_grad": (_mk_scale, [(3, 4), (3, 4, "rg"), (3, 4, "rg"), (3, 4)], {}),
    "non_contiguous": (_mk_scale, [(3, 4), (4, 3, "T"), (4, 3, "T")], {}),
}


def _calls(shapes):
    out = []
    for s in shapes:

        def c(lib, s=s):
            a = _arr(*s[:2], dtype=np.float64 if "f64" in s else np.float32)
            if "T" in s:
                a = a.T
            return (_t(lib, a, "rg" in s),)

        out.append(c)
    return out


@pytest.mark.parametrize("case", list(RECOMPILE_CASES))
def test_recompiles_match_torch(case):
    make, shapes, kw = RECOMPILE_CASES[case]
    n_t, out_t = _counting(torch, make, _calls(shapes), **kw)
    n_e, out_e = _counting(ember, make, _calls(shapes), **kw)
    assert n_e == n_t
    for a, b in zip(out_e, out_t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


def test_python_values_guarded_no_stale_results():
    """int/float arguments, grad mode, module.training, globals and closure cells all decide what is captured:
    changing any gives the new result (never the old graph's), with as many compiles as torch."""

    def scenarios(lib):
        x = lambda: _t(lib, X)  # noqa: E731
        mk = _mk_mul_n(lib)
        yield "ints", mk, [lambda: (x(), 2), lambda: (x(), 3), lambda: (x(), 4)]
        yield "floats", mk, [lambda: (x(), 0.5), lambda: (x(), 1.5), lambda: (x(), 2.5)]
        yield "training", _mk_training(lib), [lambda: (x(), True), lambda: (x(), False), lambda: (x(), True)]

    results = {}
    for lib in (torch, ember):
        for name, f, calls in scenarios(lib):
            lib._dynamo.reset()
            n = [0]

            def backend(gm, ex, n=n):
                n[0] += 1
                return gm.forward

            cf = lib.compile(f, backend=backend)
            outs = [cf(*c()).detach().numpy().copy() for c in calls]
            results[(lib.__name__, name)] = (n[0], outs)
    for (libname, name), (n, outs) in results.items():
        if libname == "ember":
            n_t, outs_t = results[("torch", name)]
            assert n == n_t, name
            for a, b in zip(outs, outs_t):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_grad_mode_global_and_closure_guards():
    for lib in (torch, ember):
        lib._dynamo.reset()
    x_e, x_t = to_ember(X, True), to_torch(X, True)
    out = {}
    for lib, x in ((ember, x_e), (torch, x_t)):
        f = lib.compile(_mk_global(lib), backend="eager")
        _set_global(2.0)
        a = f(x)
        _set_global(5.0)
        b = f(x)  # the global changed: a guard miss, not a stale 2.0
        with lib.no_grad():
            c = f(x)  # grad mode is guarded: no graph recorded
        g = _mk_closure(lib)
        cg = lib.compile(g, backend="eager")
        r1 = cg(x)
        g.set(x, 3.0)  # (writes the cell the compiled function reads)
        r2 = cg(x)
        out[lib.__name__] = [a, b, c, r1, r2]
    _set_global(2.0)
    for e, t in zip(out["ember"], out["torch"]):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6)
        assert e.requires_grad == t.requires_grad


def test_mark_dynamic_avoids_recompiles():
    def run(lib):
        n = [0]

        def backend(gm, ex):
            n[0] += 1
            return gm.forward

        lib._dynamo.reset()
        f = lib.compile(lambda x: (x.view(x.size(0), -1) * 2).sum(1), backend=backend)
        outs = []
        for b in (3, 5, 8):
            t = _t(lib, _arr(b, 2, 2))
            lib._dynamo.mark_dynamic(t, 0)
            outs.append(f(t))
        return n[0], outs

    n_e, o_e = run(ember)
    n_t, o_t = run(torch)
    assert n_e == n_t == 1
    for a, b in zip(o_e, o_t):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def _mk_deep(lib):
    """Two blocks in a ModuleList: every guard reads a chain through `blocks._modules[i]`, shared by many
    (NOTE [ Shared sources in the guard function ]); `extra` is read only when it is not None."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = 2.0
            self.extra = None

        def forward(self, x):
            y = self.lin(x) * self.scale
            if self.extra is not None:
                y = self.extra(y)
            return y

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    lib.manual_seed(0)
    return Net()


def _deep_scale(m, nn):
    m.blocks[1].scale = 3.0


def _deep_extra(m, nn):
    m.blocks[0].extra = nn.ReLU()


def _deep_extra_type(m, nn):
    m.blocks[0].extra = nn.Tanh()


def _deep_swap(m, nn):
    m.blocks[1] = nn.Identity()


def test_shared_guard_sources_recompile_as_torch():
    """Deep attributes that many guards read through one shared chain: changing a value, a submodule's type
    or a None into a module misses the guard, as many compiles as torch's, never a stale result."""
    changes = [None, _deep_scale, None, _deep_extra, _deep_extra_type, _deep_swap, None]
    res = {}
    for lib in (torch, ember):
        m = _mk_deep(lib)
        n = [0]

        def backend(gm, ex, n=n):
            n[0] += 1
            return gm.forward

        lib._dynamo.reset()
        f = lib.compile(m, backend=backend)
        outs, counts = [], []
        for change in changes:
            if change is not None:
                change(m, lib.nn)
            outs.append(f(_t(lib, X)).detach().numpy().copy())
            counts.append(n[0])
        res[lib.__name__] = counts, outs
    assert res["ember"][0] == res["torch"][0]
    for a, b in zip(res["ember"][1], res["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


# (guards, locals): the guard function with shared sources must answer as the plain `and` chain does, an
# exception counting as a miss (as `lookup` takes it)
_GUARD_TABLE = [
    (["L['x'] is None or L['x'].n == 2", "L['x'] is None or L['x'].n > 1"], {"x": None}),
    (["L['x'] is None or L['x'].n == 2", "L['x'].n == 2", "L['x'].n + L['x'].m == 3"], {"x": _Obj(n=2, m=1)}),
    (["L['x'].n == 2", "L['x'].n == 3"], {"x": _Obj(n=2)}),
    (["L['x'].a.b == 1", "L['x'].a.c == 2"], {"x": _Obj(a=_Obj(b=1))}),  # a shared read that raises
    (["type(L['x'].a) is int", "0 < L['x'].a < L['x'].b", "L['x'].b == 5"], {"x": _Obj(a=1, b=5)}),
    (["0 < L['x'].a < L['x'].b", "L['x'].b == 5"], {"x": _Obj(a=0)}),  # `.b` is never read
    (["all(v > 0 for v in L['x'].v)", "len(L['x'].v) == 2", "L['x'].v[0] == 1"], {"x": _Obj(v=[1, 2])}),
    (["L['x'].d['k'][0] == 1", "L['x'].d['k'][1] == 2", "list(L['x'].d) == ['k']"], {"x": _Obj(d={"k": (1, 2)})}),
    (["(L['x'].a if L['x'].f else L['x'].b) == 1", "L['x'].f or L['x'].a == 1"], {"x": _Obj(f=True, a=1)}),
    (["(L['x'].a if L['x'].f else L['x'].b) == 1", "not L['x'].f or L['x'].a == 1"], {"x": _Obj(f=False, b=1)}),
]


@pytest.mark.parametrize("exprs, L", _GUARD_TABLE)
def test_guard_function_with_shared_sources_answers_as_the_and_chain(exprs, L):
    from ember._dynamo.guards import GuardSet

    def plain():
        try:
            return bool(eval(" and ".join(f"({e})" for e in exprs), {"L": L}))
        except Exception:
            return False

    gs = GuardSet([])
    for e in exprs:
        gs.add(e)
    fn = gs.compile()
    try:
        got = fn(L, [], {}, None)
    except Exception:
        got = False
    assert got == plain()
    for e in exprs:  # each guard alone, and the prefix of the list that ends with it
        part = GuardSet([])
        for x in exprs[: exprs.index(e) + 1]:
            part.add(x)
        try:
            got = part.compile()(L, [], {}, None)
        except Exception:
            got = False
        try:
            want = bool(eval(" and ".join(f"({x})" for x in part.exprs), {"L": L}))
        except Exception:
            want = False
        assert got == want, e


def test_guard_function_reads_a_shared_source_once():
    from ember._dynamo.guards import GuardSet

    class Counting:
        reads = 0

        @property
        def a(self):
            Counting.reads += 1
            return _Obj(b=1, c=2, d=_Obj(e=3))

    gs = GuardSet([])
    for e in ["L['x'].a.b == 1", "L['x'].a.c == 2", "L['x'].a.d.e == 3", "type(L['x'].a) is not int"]:
        gs.add(e)
    assert gs.compile()({"x": Counting()}, [], {}, None) is True
    assert Counting.reads == 1


def test_recompile_limit_warns_and_runs_eagerly():
    ember._dynamo.reset()
    old = ember._dynamo.config.recompile_limit
    ember._dynamo.config.recompile_limit = 2
    outs = []
    try:
        f = ember.compile(lambda x: x + 1, backend="eager", dynamic=False)
        msgs = _capture_log(lambda: outs.extend(f(ember.ones(k)) for k in (1, 2, 3, 4)))
    finally:
        ember._dynamo.config.recompile_limit = old
    assert [o.tolist() for o in outs] == [[2.0] * k for k in (1, 2, 3, 4)]
    assert sum(m.startswith("torch._dynamo hit config.recompile_limit (2)") for m in msgs) == 1


# -- fullgraph -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [_print_break, _branch, _tolist], ids=["print", "branch", "tolist"])
def test_fullgraph_break_is_an_error_naming_the_line(make):
    msgs = {}
    for lib in (torch, ember):
        f = lib.compile(make(lib), backend="eager", fullgraph=True)
        with pytest.raises(Exception) as info:
            f(*_lib_args(lib, [X]))
        assert type(info.value).__name__ == "Unsupported"
        msgs[lib.__name__] = str(info.value)
    lines = {}
    for name, msg in msgs.items():
        assert "from user code:" in msg and "test_dynamo.py" in msg
        lines[name] = re.findall(r'test_dynamo.py", line (\d+)', msg)[-1]
    assert lines["ember"] == lines["torch"]


# -- models, gradients, side effects -------------------------------------------------------------------------


def test_forward_and_gradients_through_graph_breaks():
    def make(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3).double()

        def f(x, w):
            h = lin(x) * w.sum()
            if h.mean() > -100:  # a break, then the rest resumes in a graph of its own
                h = h.tanh()
            s = h.sum().item()
            return (h * 2 - s).pow(2).mean()

        return f

    w = rng.standard_normal(4)

    def body(lib, x, w):
        f = make(lib) if lib is torch else ember.compile(make(lib), backend="aot_eager")
        return f(x, w)

    check(body, X.astype(np.float64), w, grad=True)


def test_side_effects_replayed():
    def make(lib):
        def f(x, acc, d):
            acc.append(x * 2)
            d["k"] = x.sum()
            print("break")  # the mutation before the break must be visible to the code after it
            acc.append(len(acc))
            return x + 1

        return f

    res = {}
    for lib in (torch, ember):
        acc, d = [], {}
        f = lib.compile(make(lib), backend="eager")
        out = f(_t(lib, X), acc, d)
        res[lib.__name__] = (out, acc, d)
    (oe, ae, de), (ot, at, dt) = res["ember"], res["torch"]
    np.testing.assert_allclose(oe.numpy(), ot.numpy())
    assert len(ae) == len(at) == 2 and ae[1] == at[1] == 1
    np.testing.assert_allclose(ae[0].numpy(), at[0].numpy())
    np.testing.assert_allclose(de["k"].numpy(), dt["k"].numpy(), rtol=1e-5)


# -- the API -------------------------------------------------------------------------------------------------


def test_compile_api_forms():
    seen = []

    def my_backend(gm, example_inputs):
        seen.append((type(gm).__name__, [tuple(t.shape) for t in example_inputs]))
        return gm.forward

    @ember.compile
    def f1(x):
        return x * 2

    @ember.compile(backend=my_backend, dynamic=False)
    def f2(x):
        return x - 1

    x = ember.ones(2, 3)
    assert f1(x).tolist() == [[2.0] * 3] * 2 and f2(x).tolist() == [[0.0] * 3] * 2
    assert seen == [("GraphModule", [(2, 3)])]
    m = ember.nn.Linear(3, 2)
    om = ember.compile(m, backend="eager")
    assert type(om).__name__ == "OptimizedModule" and om._orig_mod is m and om.weight is m.weight
    np.testing.assert_allclose(om(x).detach().numpy(), m(x).detach().numpy())
    m.compile(backend=my_backend)
    np.testing.assert_allclose(m(x).detach().numpy(), om(x).detach().numpy())
    assert len(seen) == 2
    assert ember.compile(m, disable=True) is m
    assert {"eager", "aot_eager"} <= set(ember._dynamo.list_backends(exclude_tags=()))
    assert set(ember._dynamo.list_backends()) == set(torch._dynamo.list_backends()) & set(
        ember._dynamo.list_backends()
    )
    ember._dynamo.register_backend(my_backend, name="ember_test_backend")
    assert ember.compile(lambda x: x + 3, backend="ember_test_backend")(x).tolist() == [[4.0] * 3] * 2


def test_compile_errors_match_torch():
    assert_same_error(lambda lib: lib.compile(lambda x: x, mode="fastest"))
    assert_same_error(lambda lib: lib.compile(lambda x: x, mode="default", options={}))


def test_is_compiling():
    def make(lib):
        def f(x):
            return x + (1 if lib.compiler.is_compiling() else 100)

        return f

    check(lambda lib, x: (lib.compile(make(lib), backend="eager")(x), make(lib)(x)), X)
    assert not ember.compiler.is_compiling() and not ember._dynamo.is_compiling()


def test_logging_and_debug_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_COMPILE_DEBUG", "1")
    monkeypatch.setenv("TORCH_COMPILE_DEBUG_DIR", str(tmp_path))

    def run():
        ember._logging.set_logs(graph_code=True, guards=True, graph_breaks=True, recompiles=True)
        try:
            f = ember.compile(_print_break(ember), backend="eager", dynamic=False)
            f(ember.ones(2))
            f(ember.ones(3))
        finally:
            ember._logging.set_logs(graph_code=False, guards=False, graph_breaks=False, recompiles=False)

    text = "\n".join(_capture_log(run))
    for tag in (
        "[__graph_code]",
        "[__guards]",
        "[__graph_breaks]",
        "[__recompiles]",
        "TRACED GRAPH",
        "___check_tensor(L['x']",
        "Graph break in user code",
    ):
        assert tag in text, tag
    dumped = list(tmp_path.glob("torch_compile_debug/run_*/torchdynamo/graph_*.py"))
    assert len(dumped) >= 2 and "def forward" in dumped[0].read_text()
    with pytest.raises(ValueError, match="Unrecognized log"):
        ember._logging.set_logs(not_an_artifact=True)


def test_config_knobs_exist_like_torch():
    for name in (
        "suppress_errors",
        "cache_size_limit",
        "recompile_limit",
        "verbose",
        "capture_scalar_outputs",
        "automatic_dynamic_shapes",
        "assume_static_by_default",
        "error_on_recompile",
    ):
        assert hasattr(torch._dynamo.config, name) and hasattr(ember._dynamo.config, name), name
    assert ember._dynamo.config.recompile_limit == torch._dynamo.config.recompile_limit
    assert callable(ember.compiler.reset) and callable(ember.compiler.allow_in_graph)
    os.environ.pop("TORCH_COMPILE_DEBUG", None)


def test_stances_and_constant_results():
    calls = []

    @ember.compiler.assume_constant_result
    def scale():
        calls.append(1)
        return 3.0

    f = ember.compile(lambda x: x * scale(), backend="eager")
    x = ember.ones(2)
    assert f(x).tolist() == [3.0, 3.0] and f(x).tolist() == [3.0, 3.0] and len(calls) == 1
    with ember.compiler.set_stance("force_eager"):
        assert f(x).tolist() == [3.0, 3.0] and len(calls) == 2
    for lib in (torch, ember):
        g = lib.compile(lambda x: x + 1, backend="eager")
        with lib.compiler.set_stance("fail_on_recompile"):
            with pytest.raises(
                RuntimeError, match="Detected recompile when torch.compile stance is 'fail_on_recompile'"
            ):
                g(lib.ones(2))
        assert g(lib.ones(2)).tolist() == [2.0, 2.0]
    assert ember.compiler.get_default_backend() == "inductor" and not ember.compiler.is_exporting()


def test_first_compile_turns_distribution_validation_off_like_torch():
    for lib in (torch, ember):
        lib.distributions.Distribution.set_default_validate_args(True)
        lib.compile(lambda x: x + 1, backend="eager")
    assert_same_error(
        lambda lib: (
            lib.distributions.Normal(lib.tensor(0.0), lib.tensor(-1.0)).scale
            if lib.distributions.Distribution._validate_args
            else (_ for _ in ()).throw(ValueError("validation off"))
        )
    )


def _relu_then(x):
    return x * 2


def test_rebinding_a_global_function_recompiles():
    global _relu_then
    f = ember.compile(lambda x: _relu_then(x) + 1, backend="eager")
    x = ember.ones(2)
    assert f(x).tolist() == [3.0, 3.0]
    old, _relu_then = _relu_then, ember.neg  # now a library function under the same global name
    try:
        assert f(x).tolist() == [0.0, 0.0]
    finally:
        _relu_then = old
    assert f(x).tolist() == [3.0, 3.0]


def test_allow_in_graph_keeps_a_call_as_one_node():
    def helper(x):
        return x.sin() * 2

    seen = []

    def backend(gm, example_inputs):
        seen.append([n.target for n in gm.graph.nodes if n.op == "call_function"])
        return gm.forward

    ember.compiler.allow_in_graph(helper)
    f = ember.compile(lambda x: helper(x) + 1, backend=backend)
    x = ember.ones(3)
    np.testing.assert_allclose(f(x).numpy(), (x.sin() * 2 + 1).numpy())
    assert helper in seen[0]
