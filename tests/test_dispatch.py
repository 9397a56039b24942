"""The dispatcher's registry and mode stack (NOTE [ The mode stack ], NOTE [ Meta payloads ]).

Registry invariants; modes are per thread, levelled (a handler never sees its own calls), above or below
autograd (below: autograd still records, and gradients equal torch's); torch's TorchDispatchMode /
TorchFunctionMode and `__torch_dispatch__` subclasses work for code written against torch.
"""

import threading

import numpy as np
import pytest
import torch
from compare import assert_same

import ember
from ember._dispatch import TAGS, registry
from ember._modes import Mode, current_modes, pop_mode, push_mode, redispatch, redispatch_inplace
from ember.overrides import TorchFunctionMode
from ember.utils._python_dispatch import TorchDispatchMode


class Record(Mode):
    def __init__(self, level="above"):
        self.level = level
        self.names = []

    def dispatch(self, op, inputs, params):
        self.names.append(op.qualname)
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.names.append(op.qualname + " (in place)")
        return super().dispatch_inplace(op, self_, inputs, params)


# ---- the registry -------------------------------------------------------------------------------------


def test_registry_names_are_unique_and_qualified():
    import ember.nn.functional  # noqa: F401 - registers the nn ops

    assert len(registry) > 280
    for qualname, op in registry.items():
        assert op.qualname == qualname
        assert qualname == (f"{op.name}.{op.overload}" if op.overload else op.name)
        assert op.tags <= TAGS
        assert (op.kind in ("pointwise", "reduction", "view")) == (op.kind in op.tags)
        if op.differentiable:
            assert op.node_name, qualname
    assert {registry[n].node_name for n in ("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")} == {
        "PowBackward0", "PowBackward1", "PowBackward2"}


def test_a_qualified_name_is_declared_once():
    from ember._dispatch import defop

    with pytest.raises(AssertionError, match="declared twice"):
        defop("mul")(np.multiply)


def test_tags_drive_autograd_edges():
    # `x * 2` gives the Python number an edge (tag scalar_edge), `x ** 2` does not, as in torch
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        assert len((x * 2).grad_fn.next_functions) == 2
        assert len((x ** 2).grad_fn.next_functions) == 1
    assert "scalar_edge" in registry["mul"].tags and "not_holomorphic" in registry["sgn"].tags


# ---- modes --------------------------------------------------------------------------------------------


def test_mode_sees_ops_and_in_place_ops():
    x = ember.ones(3)
    with Record() as m:
        y = x * 2
        y.add_(1)
        ember.zeros(2)
    assert m.names == ["mul", "add (in place)", "full"]
    assert current_modes() == ()


def test_handler_never_sees_its_own_calls():
    class Doubler(Mode):
        def __init__(self):
            self.names = []

        def dispatch(self, op, inputs, params):
            self.names.append(op.qualname)
            out = redispatch(op, inputs, params)
            return out * 2 if op.qualname == "exp" else out  # this mul goes to the next level, not here

    with Record() as outer, Doubler() as inner:
        r = ember.zeros(2).exp()
    assert inner.names == ["full", "exp"]
    assert outer.names == ["full", "exp", "mul"]  # the outer level sees what the inner one did
    assert r.tolist() == [2.0, 2.0]


def test_modes_are_per_thread():
    seen_other = []
    ready, done = threading.Event(), threading.Event()

    def other():
        ready.wait()
        seen_other.append(ember.ones(2).sum().item())
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with Record() as m:
        ready.set()
        done.wait()
        ember.ones(1).neg()
    t.join()
    assert seen_other == [2.0]
    assert m.names == ["full", "neg"]  # the other thread's `ones` and `sum` are not here


def test_pop_out_of_order_is_refused():
    a, b = Record(), Record()
    push_mode(a)
    push_mode(b)
    with pytest.raises(RuntimeError, match="out of order"):
        pop_mode(a)
    pop_mode(b)
    pop_mode(a)


def test_below_autograd_sees_the_op_and_autograd_still_records():
    # a mode below autograd that scales every exp result: the graph is recorded on what it returns, so
    # the gradient is exp's own formula (torch: the same mode written with TorchDispatchMode)
    class ScaleExp(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 3 if "exp" in str(func) else out

    import torch.utils._python_dispatch as tpd

    class TScaleExp(tpd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 3 if "exp" in str(func) else out

    data = np.array([0.5, -1.0, 2.0])
    results = []
    for lib, mode in ((ember, ScaleExp), (torch, TScaleExp)):
        x = lib.tensor(data, requires_grad=True)
        with mode():
            y = x.exp()
            (y * y).sum().backward()
        results.append((y.detach(), x.grad, type(y.grad_fn).__name__))
    assert_same(results[0][0], results[1][0])
    assert_same(results[0][1], results[1][1])
    assert results[0][2] == results[1][2] == "ExpBackward0"


def test_above_and_below_order():
    above, below = Record("above"), Record("below")
    x = ember.ones(2, requires_grad=True)
    with below, above:
        (x * 2).sum().backward()
    # the above mode sees the forward ops and the backward's ops; the below one sees them as well, after
    assert above.names[:2] == ["mul", "sum"] and below.names[:2] == ["mul", "sum"]
    assert x.grad.tolist() == [2.0, 2.0]


def test_torch_function_mode_name():
    class Log(TorchFunctionMode):
        def __init__(self):
            self.funcs = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.funcs.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log() as m:
        ember.ones(2).add(1).relu_()
    assert m.funcs == ["aten.full.default", "aten.add.default", "aten.relu_.default"]


def test_torch_dispatch_subclass():
    class Logged(ember.Tensor):
        calls = []

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(str(func))
            plain = [a.as_subclass(ember.Tensor) if isinstance(a, Logged) else a for a in args]
            return func(*plain, **(kwargs or {}))

    x = ember.ones(3).as_subclass(Logged)
    y = x + 1  # the hook unwraps, so the result is a plain tensor and its sum does not reach the hook
    s = y.sum() + x.sum()
    assert type(y) is ember.Tensor and s.item() == 9.0
    assert Logged.calls == ["aten.add.default", "aten.sum.default"]


def test_every_recorded_call_has_a_schema():
    """Over the OpInfo table: each op call splits into named tensor inputs and named static params, and no
    param holds a tensor or an array (a tracer keeps params in its graph as constants)."""
    import sys

    sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/ops")
    from compare import to_ember
    from op_db import OPS

    calls = []

    class Calls(Mode):
        def dispatch(self, op, inputs, params):
            calls.append((op, inputs, params))
            return redispatch(op, inputs, params)

    for entry in OPS:
        for s in entry.samples(entry.dtypes[0], np.random.default_rng(0)):
            ins = [to_ember(x) if isinstance(x, np.ndarray) else x for x in s.inputs]
            with Calls():
                try:
                    entry.fn(ember, *ins, **s.kwargs)
                except Exception:  # noqa: BLE001 - error samples still dispatch what they reach
                    pass
    assert len({op.qualname for op, _, _ in calls}) > 150
    bad = set()
    for op, inputs, params in calls:
        in_names, param_names = op.signature(len(inputs), len(params))
        assert len(in_names) == len(inputs) and len(param_names) == len(params), op.qualname
        if op.kind == "creation":
            continue  # `tensor(data)`: the data is the constant it creates
        for p in params:
            flat = p if isinstance(p, (tuple, list)) else (p,)
            if any(isinstance(x, (ember.Tensor, np.ndarray)) for x in flat):
                bad.add(op.qualname)
    assert not bad


# ---- tags that state what an op does: held to what the ops do over the OpInfo table ------------------------


def _op_db():
    import sys

    sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/ops")
    from op_db import OPS

    import ember.nn.functional  # noqa: F401 - every module that declares ops
    import ember.optim.swa_utils  # noqa: F401

    return OPS


def _shapes(out):
    if isinstance(out, (tuple, list)):
        return tuple(s for o in out for s in _shapes(o))
    return (tuple(out.shape),) if isinstance(out, ember.Tensor) else ()


def _signature(inputs):
    return tuple((tuple(t.shape), t.dtype) if isinstance(t, ember.Tensor) else type(t).__name__ for t in inputs)


def _state(gen):
    return gen.get_state().numpy().tobytes()


class _Trace(Mode):
    """Each op call as (qualified name, its inputs' shapes and dtypes, its params, its outputs' shapes), and
    the ops that draw from a generator: given one as a param, or seen to advance one's state."""

    def __init__(self):
        self.calls = []
        self.draws = set()

    def _record(self, op, inputs, params, run):
        gens = [p for p in params if isinstance(p, ember.Generator)]
        watched = gens + [ember.default_generator]
        before = [_state(g) for g in watched]
        out = run()
        if gens or any(_state(g) != b for g, b in zip(watched, before)):
            self.draws.add(op.qualname)
        self.calls.append((op.qualname, _signature(inputs), params, _shapes(out)))
        return out

    def dispatch(self, op, inputs, params):
        return self._record(op, inputs, params, lambda: redispatch(op, inputs, params))

    def dispatch_inplace(self, op, self_, inputs, params):
        return self._record(op, inputs, params, lambda: redispatch_inplace(op, self_, inputs, params))


def _trace_table(seed):
    """Every sample of every OpInfo entry (its first dtype), values drawn with `seed`: per sample, the
    shapes of the entry's inputs and outputs (None if it raised) and its trace."""
    import warnings

    from compare import to_ember

    runs = []
    for entry in _op_db():
        for s in entry.samples(entry.dtypes[0], np.random.default_rng(seed)):
            ins = [to_ember(x) if isinstance(x, np.ndarray) else x for x in s.inputs]
            ember.manual_seed(0)
            trace = _Trace()
            with trace, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out = _shapes(entry.fn(ember, *ins, **s.kwargs))
                except Exception:  # noqa: BLE001 - an error sample still dispatches what it reaches
                    out = None
            runs.append((entry.id, _signature(ins), out, trace))
    return runs


def _tagged(tag):
    return {q for q, op in registry.items() if tag in op.tags}


def test_nondeterministic_seeded_tags_exactly_the_ops_that_draw():
    """An op carries `nondeterministic_seeded` iff it draws from a generator: its kernel takes one (a param)
    or a generator's state moves while it runs. Every tagged op must be seen doing so."""
    seen, draws = set(), set()
    for _, _, _, trace in _trace_table(0):
        seen |= {c[0] for c in trace.calls}
        draws |= trace.draws
    tagged = _tagged("nondeterministic_seeded")
    assert {"bernoulli_.float", "uniform_", "multinomial", "poisson", "randperm", "normal.Tensor_Tensor"} <= draws
    assert sorted(draws - tagged) == [], "ops that draw from a generator without the tag"
    assert sorted(tagged - draws) == [], "ops tagged nondeterministic_seeded never seen drawing"
    assert len(seen) > 250


def _same(a, b):
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare are not the same
        return False


def test_dynamic_output_shape_tags_the_ops_whose_shapes_follow_values():
    """Every sample runs twice, with inputs of the same shapes and different values. An op called with the
    same input shapes and params in both runs whose output shapes differ must carry `dynamic_output_shape`;
    a sample whose outputs' shapes differ must have called such an op (else the value-dependent part was
    computed outside the dispatcher, where no tracer or meta tensor sees it)."""
    untagged, hidden, dynamic = set(), set(), set()
    tagged = _tagged("dynamic_output_shape")
    for (name, sig_a, out_a, a), (_, sig_b, out_b, b) in zip(_trace_table(0), _trace_table(1)):
        if sig_a != sig_b:
            continue  # (a sample whose shapes are drawn too)
        for (qa, ins_a, ps_a, shapes_a), (qb, ins_b, ps_b, shapes_b) in zip(a.calls, b.calls):
            if qa != qb or ins_a != ins_b or not _same(ps_a, ps_b):
                break  # the runs took different paths, or fed data-dependent shapes onwards
            if shapes_a != shapes_b:
                dynamic.add(qa)
                if qa not in tagged:
                    untagged.add(qa)
        if out_a is not None and out_b is not None and out_a != out_b \
                and not any(c[0] in tagged for c in a.calls + b.calls):
            hidden.add(name)
    assert {"nonzero", "masked_select", "bincount", "unique", "repeat_interleave.Tensor"} <= dynamic
    assert sorted(untagged) == [], "ops whose output shapes depend on values, without dynamic_output_shape"
    assert sorted(hidden) == [], "entries whose output shapes depend on values, with no dynamic op called"
