"""Gradients summed in the engine where several edges meet (NOTE [ Summing gradients ] in engine.py):
a leaf or a non-leaf used many times, in each float dtype, and summed differentiably with create_graph."""

import numpy as np
import pytest
from helpers import T, arr, same


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, "bfloat16"])
def test_leaf_used_many_times(dtype):
    def body(lib):
        if dtype == "bfloat16":
            x = T(lib, arr(5)).to(lib.bfloat16).requires_grad_()
        else:
            x = T(lib, arr(5, dtype=dtype), True)
        y = x
        for i in range(6):
            y = (y * 0.5 + x).tanh() - x * (i + 1)
        y.sum().backward()
        return x.grad
    same(body)


def test_non_leaf_used_many_times():
    def body(lib):
        x = T(lib, arr(2, 3), True)
        h = x.exp()
        parts = [h * k for k in range(1, 5)] + [h.sin(), h]
        out = sum(p.sum() for p in parts)
        g, = lib.autograd.grad(out, x)
        return g
    same(body)


def test_summed_gradients_stay_differentiable():
    def body(lib):
        x = T(lib, arr(4), True)
        y = (x * x + x.sin() * x).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return g.detach(), gg
    same(body)


def test_summed_leaf_grad_is_a_fresh_tensor():
    def body(lib):
        x = T(lib, arr(3), True)
        g = T(lib, arr(3, seed=1), False)
        (x + x).backward(g)
        g.mul_(10)  # the caller's gradient is not aliased by x.grad
        return x.grad, g
    same(body)


def test_needs_grad_mask_does_not_outlive_backward():
    import ember
    from ember.autograd.graph import needs_grad

    x = ember.randn(3, requires_grad=True)
    (x * ember.randn(3)).sum().backward()  # the last node run has an input that needs no gradient
    assert needs_grad(0) and needs_grad(1)  # outside the engine every input counts as needing one
