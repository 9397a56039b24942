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
from ember._modes import Mode, current_modes, pop_mode, push_mode, redispatch
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
