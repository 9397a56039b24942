"""The engine: backward/grad arguments and errors, accumulation, freed graphs, execution order, broadcasting
in backward formulas, and higher-order gradients (create_graph) — each compared with torch."""

import numpy as np
import pytest
from helpers import T, arr, graph_names, same


def test_backward_accumulates_and_retain_graph():
    def body(lib):
        x = T(lib, arr(3), True)
        y = (x * x).exp().sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward()
        return g1, x.grad
    same(body)


def test_second_backward_through_freed_graph_raises():
    def body(lib):
        x = T(lib, arr(3), True)
        y = (x * x).sum()
        y.backward()
        y.backward()
    same(body)


def test_freed_saved_output_raises():
    def body(lib):
        x = T(lib, arr(3), True)
        y = x.exp().sum()
        y.backward()
        y.backward()
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib, x: (lambda y: y.grad_fn._saved_self)(x * x.exp()),
    lambda lib, x: (lambda y: y.grad_fn._saved_other)(x * x.exp()),
    lambda lib, x: (lambda y: y.grad_fn._saved_result)(x.tanh()),
    lambda lib, x: (lambda y: y.grad_fn._saved_result.grad_fn is y.grad_fn)(x.exp()),
    lambda lib, x: (lambda y: (y.sum().backward(), y.grad_fn._saved_self))(x * x),
    lambda lib, x: (lambda y: (y.sum().backward(), y.grad_fn._saved_result))(x.tanh()),
    lambda lib, x: (lambda y: (y.sum().backward(retain_graph=True), y.grad_fn._saved_result))(x.exp()),
    lambda lib, x: (lambda w: (lambda y: (w.add_(1), y.grad_fn._saved_other))(x * w))(x * 2),
    lambda lib, x: (lambda y: (y.mul_(2), y.grad_fn._saved_result))(x.sigmoid()),
])
def test_saved_values_seen_through_the_node(case):
    """`_saved_self` / `_saved_other` / `_saved_result`: the values, their freeing and their version checks."""
    same(lambda lib: case(lib, T(lib, arr(3), True)))


def test_backward_of_a_chain_with_fan_out_runs_in_torch_order():
    """Nodes made ready one at a time run at once; one made ready while a newer one waits does not."""
    def body(lib):
        log = []
        x = T(lib, arr(3), True)
        a = x.exp()
        b = a * 2
        c = a.tanh()
        d = (b + 1).sin()
        e = (c - 1).cos() * d
        for t, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d"), (e, "e")):
            t.register_hook(lambda g, name=name: log.append(name))
        e.sum().backward()
        return log, x.grad
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib, x: (x * 2).backward(),
    lambda lib, x: (x * 2).backward(lib.ones(2)),
    lambda lib, x: x.detach().sum().backward(),
    lambda lib, x: lib.autograd.backward([(x * 2).sum(), x.sum()], [None]),
    lambda lib, x: lib.autograd.grad((x * 2).sum(), [x, lib.ones(2)]),
    lambda lib, x: lib.autograd.grad((x * 2).sum(), [x, lib.ones(2, requires_grad=True)]),
    lambda lib, x: lib.autograd.grad((x * 2).sum(), [x], allow_unused=False, materialize_grads=True),
    lambda lib, x: lib.autograd.grad((x * 2).sum(), []),
    lambda lib, x: (x * 2).sum().backward(inputs=[]),
    lambda lib, x: (x * 2).sum().backward(1.0),
    lambda lib, x: lib.tensor([1]).backward(),
    lambda lib, x: (x > 0).sum().backward(),
])
def test_engine_errors(case):
    same(lambda lib: case(lib, T(lib, arr(3), True)))


def test_grad_function_options():
    def body(lib):
        x = T(lib, arr(3), True)
        u = T(lib, arr(2), True)
        y = (x * x).sum()
        g_unused = lib.autograd.grad(y, [x, u], allow_unused=True, retain_graph=True)
        g_mat = lib.autograd.grad(y, [x, u], materialize_grads=True, retain_graph=True)
        g_dict = lib.autograd.grad(y, {"a": x, "b": u}, allow_unused=True, retain_graph=True)
        g_out = lib.autograd.grad([y, x.sum()], x, grad_outputs=[lib.tensor(2.0), None])
        return g_unused, g_mat, g_dict, g_out, x.grad
    same(body)


def test_grad_with_non_leaf_inputs_and_duplicate_inputs():
    def body(lib):
        x = T(lib, arr(3), True)
        h = x.tanh()
        y = (h * h).sum()
        return lib.autograd.grad(y, [h, x, h])
    same(body)


def test_backward_inputs_restricts_accumulation():
    def body(lib):
        x = T(lib, arr(3), True)
        w = T(lib, arr(3, seed=1), True)
        h = x * w
        (h * h).sum().backward(inputs=[x, h])
        return x.grad, w.grad, h.grad
    same(body)


def test_autograd_backward_multiple_roots():
    def body(lib):
        x = T(lib, arr(3), True)
        a, b = x * 2, x.exp()
        lib.autograd.backward([a, b.sum()], [lib.ones(3), None])
        return x.grad
    same(body)


def test_gradient_argument_and_dtype():
    def body(lib):
        x = T(lib, arr(3), True)
        (x * 2).backward(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return x.grad
    same(body)


def test_diamond_and_reuse_sum_gradients():
    def body(lib):
        x = T(lib, arr(4), True)
        a = x * 2
        b = a.exp() + a.tanh() * a
        c = (b * a + x).sum()
        c.backward()
        return x.grad
    same(body)


@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((2, 1, 3), (4, 1)), ((1,), (2, 2)), ((), (3,)), ((2, 3), ())])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "where", "atan2"])
def test_broadcasting_is_reduced_in_backward(op, shapes):
    def body(lib):
        a = T(lib, np.abs(arr(*shapes[0])) + 0.5, True)
        b = T(lib, np.abs(arr(*shapes[1], seed=1)) + 0.5, True)
        if op == "where":
            out = lib.where(a > 1, a, b)
        elif op == "atan2":
            if not hasattr(lib, "atan2"):
                return None
            out = lib.atan2(a, b)
        else:
            out = getattr(lib, op)(a, b)
        (out * out).sum().backward()
        return a.grad, b.grad
    same(body)


def test_execution_order_matches_torch():
    """Nodes run latest-created first among the ready ones (torch's CPU queue)."""
    def body(lib):
        log = []
        x = T(lib, arr(3), True)
        a = x * 2
        b = x * 3
        c = a + b
        d = a * b
        for name, t in (("a", a), ("b", b), ("c", c), ("d", d)):
            t.register_hook(lambda g, name=name: log.append(name))
        (c.sum() + d.sum()).backward()
        return log
    same(body)


# ---- higher order ------------------------------------------------------------------------------------


@pytest.mark.parametrize("f", [
    lambda lib, x: x.tanh(), lambda lib, x: x * x * x, lambda lib, x: x.sigmoid(), lambda lib, x: x.exp() * x,
    lambda lib, x: (x * 0.3).log1p() if hasattr(x, "log1p") else x.exp(), lambda lib, x: x.sqrt(),
    lambda lib, x: x.pow(3), lambda lib, x: 1 / x,
])
def test_triple_backward_unary(f):
    def body(lib):
        x = T(lib, np.abs(arr(4, dtype=np.float64)) + 0.5, True)
        y = f(lib, x).sum()
        g1, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = lib.autograd.grad(g2.sum(), x)
        return g1, g2, g3
    same(body)


@pytest.mark.parametrize("f", [lambda x: x.abs() * x, lambda x: x.relu() * x, lambda x: x.clamp(0.6, 1.0) * x])
def test_double_backward_piecewise(f):
    def body(lib):
        x = T(lib, np.abs(arr(4, dtype=np.float64)) + 0.5, True)
        g1, = lib.autograd.grad(f(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g1.sum(), x)
        return g1, g2
    same(body)


def test_matmul_double_backward():
    def body(lib):
        a = T(lib, arr(3, 4, dtype=np.float64), True)
        b = T(lib, arr(4, 2, seed=1, dtype=np.float64), True)
        y = (a @ b).tanh().sum()
        ga, gb = lib.autograd.grad(y, [a, b], create_graph=True)
        (ga.pow(2).sum() + gb.sum()).backward()
        return ga, gb, a.grad, b.grad
    same(body)


def test_hessian_vector_product_as_in_the_tutorials():
    def body(lib):
        w1 = T(lib, arr(5, 4, dtype=np.float64), True)
        w2 = T(lib, arr(4, 3, seed=1, dtype=np.float64), True)
        data = T(lib, arr(6, 5, seed=2, dtype=np.float64))
        params = [w1, w2]
        loss = ((data @ w1).tanh() @ w2).pow(2).mean()
        grads = lib.autograd.grad(loss, params, create_graph=True)
        vec = [T(lib, arr(*p.shape, seed=3 + i, dtype=np.float64)) for i, p in enumerate(params)]
        gv = sum((g * v).sum() for g, v in zip(grads, vec))
        return lib.autograd.grad(gv, params)
    same(body)


def test_create_graph_backward_accumulates_graph_into_grad():
    def body(lib):
        x = T(lib, arr(3, dtype=np.float64), True)
        (x.pow(3)).sum().backward(create_graph=True)
        g = x.grad
        first = (g.requires_grad, g.grad_fn is not None)
        x.grad = None
        g.sum().backward()
        return first, x.grad
    same(body)


def _view_of_rewritten_base(lib, x):
    y = x * 2
    v = y[:2]
    y.mul_(3)  # v's history is regenerated from y's new one
    return (v.tanh() * v).sum()


def _inference_input(lib, x):
    with lib.inference_mode():
        c = lib.ones(3)
    return (x * c).sum()


@pytest.mark.parametrize("case", [
    lambda lib, x: (x * x).sum(),
    lambda lib, x: (x.tanh() * x.exp()).sum(),
    lambda lib, x: (x * T(lib, arr(3, dtype=np.float64))).sum(),  # promotion: the grad is cast back
    lambda lib, x: (x.view(3, 1) - x).sum(),  # broadcast: reduced back to each input's shape
    lambda lib, x: (x.to(lib.float16) * x.to(lib.float16)).float().sum(),
    lambda lib, x: (x.to(lib.bfloat16).sigmoid() + 1).float().sum(),
    lambda lib, x: (x.to(lib.float64).tanh() * x.exp()).sum(),
    lambda lib, x: (x[1:] * x[:2]).sum(),
    _view_of_rewritten_base,
    _inference_input,
    lambda lib, x: (lambda y: (y.tanh() * y).sum())(x.expand(2, 3)),
])
def test_pointwise_recording_matches_torch(case):
    """The grad_fn graph (names, edges) and gradients of pointwise ops on one or two tensors in the
    situations the recording shortcut has to get right: leaves and non-leaves, views, dtypes, broadcasting,
    inference tensors."""
    def body(lib):
        x = T(lib, arr(3), True)
        loss = case(lib, x)
        names = graph_names(loss.grad_fn)
        loss.backward()
        return names, x.grad
    same(body)
