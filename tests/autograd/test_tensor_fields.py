"""Autograd fields of tensors: requires_grad, is_leaf, grad, grad_fn and its printing, next_functions,
retain_grad/retains_grad, detach/detach_, clone, .data — each compared with torch."""

import numpy as np
import pytest
from helpers import T, arr, gname, graph_names, same


def test_requires_grad_arg_attr_method():
    def body(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.ones(2)
        c = b.requires_grad_()
        d = lib.zeros(2)
        d.requires_grad = True
        return (a.requires_grad, b.requires_grad, c is b, d.requires_grad, a.is_leaf, (a * 2).is_leaf,
                (a * 2).requires_grad, (b.detach() * 2).requires_grad, b.requires_grad_(False).requires_grad)
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib: lib.tensor([1, 2]).requires_grad_(),
    lambda lib: setattr(lib.tensor([True]), "requires_grad", True),
    lambda lib: setattr(lib.tensor([1.0], requires_grad=True) * 2, "requires_grad", False),
])
def test_requires_grad_errors(case):
    same(case)


def test_non_leaf_requires_grad():
    def body(lib):
        y = lib.tensor([1.0], requires_grad=True) * 2
        return y.requires_grad_() is y, y.requires_grad, y.is_leaf
    same(body)
    same(lambda lib: setattr(lib.tensor([1.0], requires_grad=True) * 2, "requires_grad", True))
    same(lambda lib: (lib.tensor([1.0], requires_grad=True) * 2).requires_grad_(False))


@pytest.mark.parametrize("expr", [
    lambda lib, x, w: x + w, lambda lib, x, w: x - w, lambda lib, x, w: x * w, lambda lib, x, w: x / w,
    lambda lib, x, w: -x, lambda lib, x, w: x.exp(), lambda lib, x, w: x.sum(), lambda lib, x, w: x.sum(0),
    lambda lib, x, w: x.mean(), lambda lib, x, w: x.view(6), lambda lib, x, w: x.reshape(3, 2),
    lambda lib, x, w: x.t(), lambda lib, x, w: x[0], lambda lib, x, w: x[:, 1:], lambda lib, x, w: x @ w.t(),
    lambda lib, x, w: x.tanh(), lambda lib, x, w: x.sigmoid(), lambda lib, x, w: x.relu(),
    lambda lib, x, w: x.clone(), lambda lib, x, w: x.unsqueeze(0), lambda lib, x, w: x.expand(2, 2, 3),
    lambda lib, x, w: x.transpose(0, 1), lambda lib, x, w: x.permute(1, 0), lambda lib, x, w: x.pow(2),
    lambda lib, x, w: x ** w, lambda lib, x, w: 2 ** x, lambda lib, x, w: x.abs(), lambda lib, x, w: x.sqrt(),
    lambda lib, x, w: x.log(), lambda lib, x, w: lib.cat([x, w]), lambda lib, x, w: lib.stack([x, w]),
    lambda lib, x, w: x.to(lib.float64), lambda lib, x, w: x.max(), lambda lib, x, w: x.amax(1),
    lambda lib, x, w: lib.where(x > 0, x, w), lambda lib, x, w: x.clamp(-0.5, 0.5), lambda lib, x, w: 1 - x,
    lambda lib, x, w: x.squeeze(), lambda lib, x, w: x.flatten(), lambda lib, x, w: x.unbind(0)[1],
    lambda lib, x, w: x.split(1)[1], lambda lib, x, w: x.narrow(1, 0, 2), lambda lib, x, w: x.diagonal(),
])
def test_grad_fn_names_and_graph(expr):
    """grad_fn class names and the whole next_functions structure match torch for each op."""
    def body(lib):
        x = T(lib, np.abs(arr(2, 3)) + 0.1, True)
        w = T(lib, arr(2, 3, seed=1), True)
        y = expr(lib, x, w)
        return gname(y), graph_names(y.grad_fn), repr(y.grad_fn).split(" object")[0]
    same(body)


def test_grad_fn_repr_and_tensor_repr():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x + 1
        return repr(y.grad_fn), repr(y), str(y.grad_fn.next_functions), y.grad_fn.name(), \
            y.grad_fn.next_functions[0][0].name()
    same(body)


def test_grad_accumulates_and_can_be_set():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        first = x.grad.clone()
        (x * x).sum().backward()
        second = x.grad.clone()
        x.grad = None
        g0 = x.grad
        x.grad = lib.ones(2)
        (x * 2).sum().backward()
        return first, second, g0, x.grad
    same(body)


@pytest.mark.parametrize("value", ["int", "shape", "dtype", "list"])
def test_grad_assignment_errors(value):
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad = {"int": lambda: lib.tensor([1, 2]), "shape": lambda: lib.ones(3),
                  "dtype": lambda: lib.ones(2, dtype=lib.float64), "list": lambda: [1.0, 2.0]}[value]()
    same(body)


def test_retain_grad():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * y
        r0 = (y.retains_grad, x.retains_grad)
        y.retain_grad()
        x.retain_grad()
        z.sum().backward()
        return r0, y.retains_grad, x.retains_grad, y.grad, z.grad, x.grad
    same(body)


def test_retain_grad_error_and_non_leaf_grad_warning_free_none():
    same(lambda lib: lib.ones(2).retain_grad())


def test_detach_shares_storage_and_version():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        d[0] = 5
        return (d.requires_grad, d.is_leaf, d.grad_fn, y, y._version, d._version,
                d.data_ptr() == y.data_ptr())
    same(body)


def test_detach_inplace():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        r = y.detach_()
        return r is y, y.requires_grad, y.is_leaf, y.grad_fn
    same(body)


def test_detach_inplace_of_view_error():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        x[0:1].detach_()
    same(body)


def test_clone_is_differentiable():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = x.clone()
        (c * c).sum().backward()
        return gname(c), c.is_leaf, x.grad, c.data_ptr() != x.data_ptr()
    same(body)


def test_data_is_detached_and_invisible_to_autograd():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.data.mul_(2)  # not seen by the version counter: backward uses the doubled values
        y.sum().backward()
        d = x.data
        return d.requires_grad, d.is_leaf, x.grad, y._version, d.data_ptr() == x.data_ptr()
    same(body)


def test_data_setter():
    def body(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.data = lib.tensor([3.0, 4.0, 5.0])
        return x, x.requires_grad, x.shape
    same(body)
