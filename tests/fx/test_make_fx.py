"""make_fx (dispatch-level tracing) and the decomposition table, held to torch's make_fx.

Each function of the tables is traced by both libraries; the graphs must call the same ops in the same
order (compared by op name: ember's overload names are its registry's, and torch's autograd adds `alias` /
`detach` bookkeeping nodes that ember's engine does not need), and replaying ember's graph must give what
running the function eagerly gives, which must be torch's values.
"""

import numpy as np
import pytest
import torch
from compare import assert_same, to_ember, to_torch
from torch._decomp import core_aten_decompositions as torch_core
from torch._decomp import get_decompositions as torch_get
from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

import ember
from ember._decomp import core_aten_decompositions, get_decompositions
from ember.fx.experimental.proxy_tensor import make_fx

# torch's autograd and number handling add nodes ember's do not need: aliases, detaches, and a Python number
# lifted to a tensor before `where`; ember's `contiguous` is torch's `clone(memory_format=...)`, and the
# backward's seed is filled like the output in torch
_BOOKKEEPING = {"alias", "detach", "_to_copy", "lift_fresh_copy", "scalar_tensor"}
_SAME = {"full_like": "full", "ones_like": "full", "contiguous": "clone"}


def _ops(gm):
    out = []
    for n in gm.graph.nodes:
        if n.op == "call_function" and hasattr(n.target, "__name__") and "." in n.target.__name__:
            name = n.target.__name__.split(".")[0]
            if name not in _BOOKKEEPING:
                out.append(_SAME.get(name, name))
    return out


def _grad(L, f):
    return lambda *xs: L.autograd.grad(f(L, *xs).sum(), xs)


# (id, fn(lib, *inputs), input shapes, differentiate): ops whose names correspond in the two libraries
FUNCTIONS = [
    ("pointwise_chain", lambda L, a, b: ((a * b).sum(1).relu().exp(), a - b, a / b), [(2, 3), (2, 3)], False),
    ("inplace", lambda L, a, b: (a.mul_(2), a + b), [(2, 3), (2, 3)], False),
    ("matmul_family", lambda L, a, b: (L.mm(a, b.t()), a.t().contiguous(), (a @ b.t()).tanh()), [(2, 3), (2, 3)],
     False),
    ("reductions", lambda L, a: (a.amax(0), a.mean(), a.sum(1, keepdim=True), a.max(1)), [(3, 4)], False),
    ("views", lambda L, a: (a.view(4, 3), a.transpose(0, 1), a.unsqueeze(0).expand(2, 3, 4)), [(3, 4)], False),
    ("tanh_backward", lambda L, x, w: (x @ w).tanh(), [(2, 3), (3, 4)], True),
    ("sigmoid_backward", lambda L, x: x.sigmoid() * 2, [(3, 4)], True),
    ("relu_backward", lambda L, x, w: L.relu(x @ w), [(2, 3), (3, 4)], True),
    ("exp_log_backward", lambda L, x: (x.exp() + 1).log(), [(3, 4)], True),
]


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _traced(lib, fn, arrays, differentiate, mode):
    conv = to_torch if lib is torch else to_ember
    xs = [conv(a, requires_grad=differentiate) for a in arrays]
    f = _grad(lib, fn) if differentiate else (lambda *a: fn(lib, *a))
    tracer = torch_make_fx if lib is torch else make_fx
    return tracer(f, tracing_mode=mode)(*xs), f


@pytest.mark.parametrize("mode", ["real", "fake"])
@pytest.mark.parametrize("case", FUNCTIONS, ids=[c[0] for c in FUNCTIONS])
def test_make_fx_matches_torch_and_replays_eagerly(case, mode):
    _, fn, shapes, differentiate = case
    arrays = _inputs(shapes)
    tg, tf = _traced(torch, fn, arrays, differentiate, mode)
    eg, ef = _traced(ember, fn, arrays, differentiate, mode)
    assert _ops(eg) == _ops(tg)
    eg.graph.lint()
    # the graph run on fresh inputs equals the function run eagerly on them, and torch's values
    fresh = _inputs(shapes, seed=1)
    replay = eg(*[to_ember(a) for a in fresh])
    eager = ef(*[to_ember(a, requires_grad=differentiate) for a in fresh])
    t_eager = tf(*[to_torch(a, requires_grad=differentiate) for a in fresh])
    assert_same(tuple(replay), tuple(t_eager), check_stride=False)
    assert_same(tuple(eager), tuple(t_eager), check_stride=False)
    if mode == "fake":  # every node's value is a fake with the real value's metadata
        for n in eg.graph.nodes:
            v = n.meta.get("val")
            if isinstance(v, ember.Tensor):
                assert type(v).__name__ == "FakeTensor" and v.device.type == "cpu"


def test_make_fx_graph_reads_like_torchs():
    def f(L):
        return lambda a, b: (a * b).sum(1).relu()
    a, b = _inputs([(2, 3), (2, 3)])
    eg = make_fx(f(ember))(to_ember(a), to_ember(b))
    assert eg.code == (
        "\n\n\ndef forward(self, a_1, b_1):\n"
        "    mul = ember.ops.aten.mul.default(a_1, b_1);  a_1 = b_1 = None\n"
        "    sum_1 = ember.ops.aten.sum.dim_IntList(mul, dims = (1,), keepdim = False, dtype = None);  mul = None\n"
        "    relu = ember.ops.aten.relu.default(sum_1);  sum_1 = None\n"
        "    return relu\n    ")
    assert [n.name for n in eg.graph.nodes] == [n.name for n in torch_make_fx(f(torch))(
        to_torch(a), to_torch(b)).graph.nodes]
    with pytest.raises(AssertionError, match="symbolic"):
        make_fx(f(ember), tracing_mode="symbolic")


# (id, fn(lib, x), ember ops to decompose or None for the core table, torch's ops)
DECOMPOSED = [
    ("silu", lambda L, x: L.nn.functional.silu(x), None),
    ("hardsigmoid", lambda L, x: L.nn.functional.hardsigmoid(x), None),
    ("hardswish", lambda L, x: L.nn.functional.hardswish(x), None),
    ("softplus", lambda L, x: L.nn.functional.softplus(x), None),
    ("softplus_beta", lambda L, x: L.nn.functional.softplus(x, beta=2.0), None),
    ("mish", lambda L, x: L.nn.functional.mish(x), None),
    ("logsumexp", lambda L, x: L.logsumexp(x, 1), None),
    ("addcmul", lambda L, x: L.addcmul(x, x, x, value=2), None),
    ("addcdiv", lambda L, x: L.addcdiv(x, x, x, value=2), None),
    ("rsub", lambda L, x: L.rsub(x, 2.0), None),
    ("tanh_backward", lambda L, x: L.autograd.grad(x.tanh().sum(), x)[0], None),
    ("sigmoid_backward", lambda L, x: L.autograd.grad(x.sigmoid().sum(), x)[0], None),
    ("leaky_relu", lambda L, x: L.nn.functional.leaky_relu(x, 0.2), ("leaky_relu", "leaky_relu")),
    ("elu", lambda L, x: L.nn.functional.elu(x), ("elu", "elu")),
    ("hardtanh", lambda L, x: L.nn.functional.hardtanh(x, -0.5, 0.5), ("hardtanh", "hardtanh")),
    ("softmax", lambda L, x: L.softmax(x, 1), ("softmax", "_softmax")),
    ("log_softmax", lambda L, x: L.log_softmax(x, 1), ("log_softmax", "_log_softmax")),
    ("addmm", lambda L, x: L.addmm(x, x, x, beta=0.5, alpha=2), ("addmm", "addmm")),
]


@pytest.mark.parametrize("case", DECOMPOSED, ids=[c[0] for c in DECOMPOSED])
def test_decompositions_match_torchs(case):
    _, fn, ops = case
    (x,) = _inputs([(4, 4)])
    e_table = core_aten_decompositions() if ops is None else get_decompositions([getattr(ember.ops.aten, ops[0])])
    t_table = torch_core() if ops is None else torch_get([getattr(torch.ops.aten, ops[1])])
    eg = make_fx(lambda a: fn(ember, a), decomposition_table=e_table)(to_ember(x, requires_grad=True))
    tg = torch_make_fx(lambda a: fn(torch, a), decomposition_table=t_table)(to_torch(x, requires_grad=True))
    assert _ops(eg) == _ops(tg)
    decomposed = {ops[0]} if ops else {o.op.name for o in e_table}
    assert not decomposed & set(_ops(eg))  # the op itself is gone from the graph
    fresh = _inputs([(4, 4)], seed=1)[0]
    assert_same(eg(to_ember(fresh, requires_grad=True)), fn(torch, to_torch(fresh, requires_grad=True)),
                check_stride=False)


def test_core_table_is_torchs_core_subset():
    """`core_aten_decompositions` leaves out what torch's core set leaves out (backends take those ops)."""
    core = {o.op.name for o in core_aten_decompositions()}
    full = {o.op.name for o in get_decompositions([ember.ops.aten.addmm, ember.ops.aten.silu])}
    torch_core_names = {str(k).split(".")[1] for k in torch_core()}
    assert core <= torch_core_names
    assert "addmm" in full - core and "silu" in core
