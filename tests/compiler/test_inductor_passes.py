"""The compiler's FX passes (ember/_inductor/fx_passes/): each pass runs on a graph traced by make_fx (or
AOT autograd), and the rewritten graph's results equal torch eager's on the same NumPy inputs (values,
shapes, strides, dtypes, through tests/compare.py's `check`); the table states which ops the pass must
leave (e.g. `x @ w.t() + b` holds one addmm and no mm). RNG-using cases seed both libraries alike: ember's
generator draws torch's numbers, so a pass that drops or merges a draw shows up as different values.
"""

import numpy as np
import pytest
import torch
from compare import check

import ember
from ember._inductor import fx_passes as P
from ember.fx.experimental.proxy_tensor import make_fx

R = np.random.default_rng(0)


def f32(*s):
    return R.standard_normal(s).astype(np.float32)


def _counts(gm):
    out = {}
    for n in gm.graph.nodes:
        if n.op == "call_function":
            name = getattr(getattr(n.target, "op", None), "name", getattr(n.target, "__name__", "?"))
            if type(n.target).__name__ == "InplaceOpOverload":
                name = n.target.__name__.split(".")[0]
            out[name] = out.get(name, 0) + 1
    return out


def _run_pass(body, pass_fn, expect, args):
    """`body(ember, *args)` traced by make_fx, rewritten by `pass_fn`, checked for `expect` and run."""
    ember.manual_seed(0)
    gm = make_fx(lambda *a: body(ember, *a))(*args)
    gm = pass_fn(gm)
    counts = _counts(gm)
    for name, n in expect.items():
        assert counts.get(name, 0) == n, f"{name}: {counts.get(name, 0)} nodes, expected {n}\n{gm.code}"
    ember.manual_seed(0)
    return gm(*args)


def _case(body, pass_fn, expect):
    def fn(lib, *args):
        if lib is torch:
            torch.manual_seed(0)
            return body(torch, *args)
        return _run_pass(body, pass_fn, expect, args)
    return fn


# ---- the bodies, written once for both libraries ------------------------------------------------------

def dead_values(L, x):
    x.exp()
    x.sin().cos()
    L.nn.functional.dropout(x, 0.5)  # dead, but its draw moves the generator: kept
    y = x.clone()
    y.mul_(2)  # writes a dead buffer: torch keeps in-place nodes, so does ember
    return x.tanh() + L.rand(x.shape)


def repeated(L, x):
    return (x.sin() + x.sin()) * x.sin() + x.sum(0) + x.sum(0)


def two_dropouts(L, x):
    F = L.nn.functional
    return F.dropout(x, 0.5) + F.dropout(x, 0.5)


def write_between(L, x):
    y = x.clone()
    a = y.relu()
    y.add_(1)
    return a + y.relu()


def identities(L, x, w):
    h = (x @ w) * 1 + 0
    h = (h - 0) / 1
    h = 1 * h
    return h.t().t().exp(), h.transpose(0, 1).permute(1, 0).sin(), h.clone().cos(), h.contiguous() + 1


def identity_output_of_input(L, x):
    return x * 1, x.t().t(), x + 0


def int_times_float_one(L, i):
    return i * 1.0, i + 0


def transposes(L, x):
    return x.permute(2, 0, 1).transpose(0, 2).t().exp() if x.dim() == 2 else \
        x.permute(2, 0, 1).transpose(0, 1).exp()


def reshapes(L, x):
    a = x.view(4, 6).view(2, 12).view(24)
    b = x.t().reshape(6, 4).reshape(24)
    c = x.view(2, 2, 6).view(4, 6)
    return a.exp(), b.exp(), c.exp(), x.t().contiguous().exp()


def linear_bias(L, x, w, b):
    return (x @ w.t() + b).relu(), (b + x @ w.t()).sin()


def bias_promotes(L, x, w, b64):
    return x @ w.t() + b64


def product_reused(L, x, w, b):
    p = x @ w
    return p + b, p * 2


def batched_bias(L, x, w, b):
    return L.bmm(x, w) + b


def sub_alpha(L, x, w, b):
    return L.add(x @ w, b, alpha=0.5)


def _attr_module(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", L.arange(16.0))
            self.register_buffer("z", L.zeros(4, 4))
            self.register_buffer("v", L.linspace(0, 1, 256))
            self.w = L.nn.Parameter(L.ones(16))

        def forward(self, x):
            big = self.v.view(-1, 1) * self.v.view(1, -1)  # 256 KiB from 1 KiB: not stored
            return (x + self.b.exp() * 2 + self.w.exp(), (self.z + 3).view(16) * x,
                    x.sum() + big, L.ones(16) * 2 + x)
    return M()


_MODULES = {L: _attr_module(L) for L in (ember, torch)}  # built outside the trace: get_attr constants


def constants(L, x):
    return _MODULES[L](x)


CASES = [
    ("dce", dead_values, P.dead_code_elimination, {"exp": 0, "sin": 0, "cos": 0, "bernoulli_": 1,
                                                   "mul_": 1, "tanh": 1}, (f32(3, 4),)),
    ("cse", repeated, P.common_subexpression_elimination, {"sin": 1, "sum": 1}, (f32(3, 4),)),
    ("cse-rng", two_dropouts, P.common_subexpression_elimination, {"bernoulli_": 2}, (f32(3, 4),)),
    ("cse-write", write_between, P.common_subexpression_elimination, {"relu": 2}, (f32(3, 4),)),
    ("simplify", identities, P.algebraic_simplification,
     {"mul": 0, "add": 1, "sub": 0, "div": 0, "t": 0, "transpose": 0, "permute": 0, "clone": 0,
      "contiguous": 0}, (f32(3, 4), f32(4, 5))),
    ("simplify-aliasing", identity_output_of_input, P.algebraic_simplification, {"mul": 1, "add": 1},
     (f32(3, 4),)),
    ("simplify-dtype", int_times_float_one, P.algebraic_simplification, {"mul": 1, "add": 1},
     (R.integers(-5, 5, (3, 4)),)),
    ("simplify-permute", transposes, P.algebraic_simplification, {"permute": 1, "transpose": 0},
     (f32(2, 3, 4),)),
    ("simplify-view", reshapes, P.algebraic_simplification,
     {"view": 1, "reshape": 1, "t": 2, "contiguous": 1},
     (f32(4, 6),)),
    ("addmm", linear_bias, P.fuse_mm_bias, {"addmm": 2, "mm": 0, "add": 0}, (f32(5, 3), f32(4, 3), f32(4))),
    ("addmm-promotes", bias_promotes, P.fuse_mm_bias, {"addmm": 0, "mm": 1},  # (exact products)
     (R.integers(-3, 3, (5, 3)).astype(np.float32), R.integers(-3, 3, (4, 3)).astype(np.float32),
      R.standard_normal(4))),
    ("addmm-reused", product_reused, P.fuse_mm_bias, {"addmm": 0, "mm": 1}, (f32(5, 3), f32(3, 4), f32(4))),
    ("baddbmm", batched_bias, P.fuse_mm_bias, {"baddbmm": 1, "bmm": 0}, (f32(2, 5, 3), f32(2, 3, 4), f32(4))),
    ("addmm-alpha", sub_alpha, P.fuse_mm_bias, {"addmm": 1}, (f32(5, 3), f32(3, 4), f32(5, 4))),
    ("fold", constants, P.constant_fold, {"exp": 1, "full": 2, "linspace": 0}, (f32(16),)),
    ("all", identities, P.run_passes, {"mul": 0, "t": 0, "clone": 0}, (f32(3, 4), f32(4, 5))),
    ("all-linear", linear_bias, P.run_passes, {"addmm": 1, "t": 1}, (f32(5, 3), f32(4, 3), f32(4))),
]


@pytest.mark.parametrize("name,body,pass_fn,expect,inputs", CASES, ids=[c[0] for c in CASES])
def test_pass_against_torch_eager(name, body, pass_fn, expect, inputs):
    check(_case(body, pass_fn, expect), *inputs)


def test_constant_fold_stores_what_it_computed():
    """The folded attribute is `_frozen_param<i>` (torch's name) holding exp(b) * 2; the 256 KiB outer
    product stays code, the Parameter stays a read of the parameter, the uniform `z + 3` is a `full`."""
    m = _attr_module(ember)
    gm = P.constant_fold(make_fx(m)(ember.ones(16)))
    frozen = {n.target for n in gm.graph.nodes if n.op == "get_attr" and n.target.startswith("_frozen")}
    assert len(frozen) == 1
    np.testing.assert_array_equal(getattr(gm, frozen.pop()).numpy(), (m.b.exp() * 2).numpy())
    assert _counts(gm).get("mul", 0) == 3  # the outer product, `full(16) * x`, `ones * 2` (a constructor)
    fulls = [n.kwargs["fill"] for n in gm.graph.nodes if n.op == "call_function" and
             getattr(n.target, "__name__", "") == "full.default"]
    assert 3.0 in fulls


def _small_net(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(8, 16), L.nn.LayerNorm(16), L.nn.GELU(), L.nn.Linear(16, 4),
                           L.nn.Softmax(-1))


def test_passes_on_aot_graphs_forward_and_backward():
    """AOT autograd with the passes as forward and backward compilers: outputs and every parameter's
    gradient equal torch eager's (within compare.py's float32 tolerance), and the backward graph lost its
    transposes of transposes."""
    from ember._functorch.aot_autograd import aot_module_simplified

    seen = {}

    def compiler(kind):
        def run(gm, example_inputs):
            before = _counts(gm).get("t", 0)
            gm = P.run_passes(gm)
            seen[kind] = (before, _counts(gm).get("t", 0), P.plan_graph(gm))
            return gm
        return run

    def body(L, x):
        net = _small_net(L)
        if L is ember:
            gm = ember.fx.symbolic_trace(net)
            net = aot_module_simplified(gm, [x], fw_compiler=compiler("fw"), bw_compiler=compiler("bw"))
            params = list(gm.parameters())
        else:
            params = list(net.parameters())
        out = net(x)
        out = out[0] if isinstance(out, (list, tuple)) else out
        (out * out.detach().exp()).sum().backward()
        return out, [p.grad for p in params]

    check(body, f32(6, 8))
    assert seen["bw"][1] < seen["bw"][0]
    for kind in ("fw", "bw"):
        plan = seen[kind][2]
        assert plan.live_peak <= plan.bytes_after <= plan.bytes_before


def test_memory_plan_reuses_freed_buffers_of_equal_size_and_dtype():
    """a -> b -> c -> d, each read only by the next: after b, a's slot is free and c takes it; d (an
    output) takes b's. e has another size and f another dtype: each needs its own slot."""
    steps = [
        ([("a", 64, "f32")], []),
        ([("b", 64, "f32")], ["a"]),
        ([("c", 64, "f32")], ["b"]),
        ([("e", 32, "f32"), ("f", 64, "i32")], ["c"]),
        ([("d", 64, "f32")], ["e", "f"]),
    ]
    plan = P.plan_buffers(steps, keep=["d"])
    assert plan.slot_of["c"] == plan.slot_of["a"]
    assert plan.slot_of["d"] in (plan.slot_of["a"], plan.slot_of["b"])
    assert len({plan.slot_of[b] for b in "ef"} | {plan.slot_of["a"], plan.slot_of["b"]}) == 4
    assert (plan.bytes_before, plan.bytes_after) == (64 * 4 + 32 + 64, 64 * 2 + 32 + 64)
    assert plan.live_peak == 64 + 32 + 64  # c, e, f live together at step 3 (b was freed after step 2)
    assert "buffers in 4 slots" in plan.report()


def test_memory_plan_of_a_graph_keeps_views_and_outputs_alive():
    """A view shares its base's buffer: the base's slot is not reused while the view is read; outputs
    never give their slot away."""
    def body(x):
        a = x.exp()
        v = a.view(-1)      # a lives as long as v is read
        b = x.sin()         # a's size, but a is live: a new slot
        c = (v.view(4, 4) + b).cos()
        return c.tanh(), c

    gm = make_fx(body)(ember.ones(4, 4))
    plan = P.plan_graph(gm)
    by_name = {n.name: n for n in gm.graph.nodes}
    assert plan.slot_of[by_name["exp"]] != plan.slot_of[by_name["sin"]]
    out_slots = {plan.slot_of[by_name["tanh"]], plan.slot_of[by_name["cos"]]}
    assert len(out_slots) == 2
    assert plan.bytes_after < plan.bytes_before
    np.testing.assert_array_equal(gm(ember.ones(4, 4))[0].numpy(), body(ember.ones(4, 4))[0].numpy())
