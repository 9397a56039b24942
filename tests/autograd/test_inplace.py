"""In-place correctness against torch: version counters shared by views, the "modified by an inplace
operation" error (exact text), leaf and view-of-leaf refusals, views made in no_grad, multi-output views,
and CopySlices (in-place writes through views rewrite the base's history)."""

import pytest
from helpers import T, arr, gname, graph_names, same


def test_version_counters_are_shared_by_views_and_detach():
    def body(lib):
        x = lib.ones(2, 3)
        v, d = x[0], x.detach()
        v.add_(1)
        d.mul_(2)
        x[1] = 5
        return x._version, v._version, d._version, x.view(6)._version
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib, x: (lambda y: (y.add_(1), y.sum().backward()))(x.exp()),
    lambda lib, x: (lambda y: (lambda z: (y.add_(1), z.sum().backward()))(y * y))(x * 1),
    lambda lib, x: (lambda w: (lambda z: (w.add_(1), z.sum().backward()))(x * w))(lib.ones(3)),
    lambda lib, x: (lambda y: (lambda z: (z.mul_(2), z.sum().backward()))(y.sigmoid()))(x * 1),
    lambda lib, x: (lambda y: (lambda z: (y.add_(1), z.sum().backward()))(y * y))((x * 1).view(3, 1)),
    lambda lib, x: (lambda y: (lambda v: (lambda z: (y.add_(1), z.sum().backward()))(v * v))(y[:2]))(x * 1),
    lambda lib, x: (lambda y: (lambda z: (y.detach().zero_(), z.sum().backward()))(y.pow(2)))(x.exp()),
    lambda lib, x: (lambda z: (z.add_(0), z.view(3).sum().backward()))(x.clone().tanh()),
])
def test_modified_by_inplace_operation_error(case):
    same(lambda lib: case(lib, T(lib, arr(3), True)))


def test_leaf_modified_under_no_grad_then_backward():
    def body(lib):
        x = T(lib, arr(3), True)
        y = x * x
        with lib.no_grad():
            x.add_(1)
        y.sum().backward()
    same(body)


def test_error_hint_under_anomaly_mode():
    def body(lib):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                x = T(lib, arr(3), True)
                y = x.exp()
                y.add_(1)
                y.sum().backward()
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib, x: x.add_(1),
    lambda lib, x: x[0].add_(1),
    lambda lib, x: x.view(3).mul_(2),
    lambda lib, x: x.zero_() if hasattr(x, "zero_") else x.add_(1),
    lambda lib, x: (lambda y: y.unbind(0)[0].mul_(2))(x.view(3, 1) * 1),
    lambda lib, x: (lambda y: y.split(1)[0].mul_(2))(x * 1),
])
def test_inplace_refusals(case):
    same(lambda lib: case(lib, T(lib, arr(3), True)))


def test_view_made_in_no_grad_modified_with_grad():
    def body(lib):
        x = T(lib, arr(2, 3), True)
        y = x * 2
        with lib.no_grad():
            v = y[0]
        v.mul_(2)
    same(body)


def test_inplace_under_no_grad_on_leaf_is_allowed():
    def body(lib):
        x = T(lib, arr(3), True)
        with lib.no_grad():
            x.mul_(2)
        (x * x).sum().backward()
        return x._version, x.grad_fn, x.grad, x.is_leaf
    same(body)


def test_inplace_rewrites_history():
    def body(lib):
        x = T(lib, arr(2, 3), True)
        y = x * 2
        y.exp_() if hasattr(y, "exp_") else y.mul_(y)
        names = graph_names(y.grad_fn)
        y.sum().backward()
        return names, y._version, x.grad
    same(body)


@pytest.mark.parametrize("write", [
    lambda lib, y: y.__setitem__((slice(None), 0), 0),
    lambda lib, y: y[0].mul_(3),
    lambda lib, y: y.view(6).exp_(),
    lambda lib, y: y[:, 1:].add_(lib.ones(2, 2)),
    lambda lib, y: y.t()[1].mul_(2),
    lambda lib, y: y.__setitem__((1,), lib.tensor([1.0, 2.0, 3.0])),
    lambda lib, y: y[0][1:].mul_(y[1][1:].detach()),
])
def test_copy_slices(write):
    """In-place through a view of a non-leaf: torch's CopySlices history, gradients, and other views'
    regenerated grad_fn."""
    def body(lib):
        x = T(lib, arr(2, 3), True)
        y = x * 2
        other = y[:, 2]
        write(lib, y)
        names = (graph_names(y.grad_fn), gname(other))
        (y * y).sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        x.grad = None
        (other * 3).sum().backward()
        return names, g1, x.grad, y
    same(body)


def test_copy_into_a_tensor_that_needs_no_grad():
    def body(lib):
        x = T(lib, arr(2, 3), True)
        n = lib.zeros(2, 3)
        n[0] = x[0] * 2
        m = lib.zeros(3)
        m.add_(x[0])
        names = (graph_names(n.grad_fn), graph_names(m.grad_fn), n.requires_grad, n.is_leaf)
        (n.sum() + m.sum()).backward()
        return names, x.grad
    same(body)


def test_base_modified_in_place_regenerates_old_views():
    def body(lib):
        x = T(lib, arr(2, 3), True)
        y = x * 2
        v = y[:, 0]
        y.mul_(3)
        (v * 1).sum().backward()
        return gname(v), x.grad
    same(body)


def test_seed_inplace_risks_example():
    """The seed's `x.add_(y)` on a leaf fails; the out-of-place version works."""
    def body(lib):
        x = T(lib, arr(5), True)
        y = T(lib, arr(5, seed=1), True)
        try:
            x.add_(y)
            msg = None
        except RuntimeError as e:
            msg = str(e)
        x2, y2 = x.clone().detach().requires_grad_(True), y.clone().detach().requires_grad_(True)
        (x2 + y2).sum().backward()
        return msg, x2.grad, y2.grad
    same(body)
