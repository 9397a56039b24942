"""torch.autograd's remaining names (area L): GradientEdge / get_gradient_edge in grad and backward,
allow_mutation_on_saved_tensors, the compile- and stream-only settings, set_multithreading_enabled,
enforce_grad_layout_policy and the legacy NestedIOFunction, each held to torch on the same inputs."""

import numpy as np
import pytest
from compare import assert_same_error, check

import ember

X = np.random.default_rng(0).standard_normal((3, 4))


def _edges(L, a):
    a = a.detach().requires_grad_()
    y = (a * 2).exp()
    e = L.autograd.graph.get_gradient_edge(y)
    g1 = L.autograd.grad(y.sum(), e)
    g2 = L.autograd.grad(y.sum(), (e, L.autograd.graph.get_gradient_edge(a)))
    g3 = L.autograd.grad(e, a, grad_outputs=L.ones_like(y))
    return (g1[0], *g2, *g3, L.tensor(e.output_nr), L.tensor(len(e)))


def _mutation(L, a):
    with L.autograd.graph.allow_mutation_on_saved_tensors():
        a = a.detach().requires_grad_()
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        out.backward()
        return a.grad, b.detach()


def _layout(L, a, flag):
    p = a.detach().permute(2, 0, 1).requires_grad_()
    with L.autograd.enforce_grad_layout_policy(flag):
        (p * 2).sum().backward()
    return p.grad


@pytest.mark.parametrize("fn,x", [(_edges, X), (_mutation, X), (lambda L, a: _layout(L, a, True), np.zeros((2, 3, 4))),
                                  (lambda L, a: _layout(L, a, False), np.zeros((2, 3, 4)))],
                         ids=["gradient_edges", "allow_mutation", "layout_enforced", "layout_relaxed"])
def test_values(fn, x):
    check(fn, x)


def _nested(L, a):
    with L.autograd.graph.allow_mutation_on_saved_tensors():
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            pass


def _outside(L, a):
    with L.autograd.graph.allow_mutation_on_saved_tensors():
        a = a.detach().requires_grad_()
        out = (a.clone() ** 2).sum()
    out.backward()


def _nested_io(L, a):
    cls = type("F", (L.autograd.NestedIOFunction,), {"forward_extended": lambda self, x: x * 2})
    return cls()(a)


ERRORS = [
    ("edge_of_constant", lambda L, a: L.autograd.graph.get_gradient_edge(a)),
    ("nested_contexts", _nested),
    ("backward_outside_context", _outside),
    ("nested_io_function_call", _nested_io),
    *[(f"memory_budget_{b!r}", lambda L, a, b=b: L.autograd.graph.region_activation_memory_budget(b))
      for b in (0.5, 2.0, "a", True)],
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, fn):
    assert_same_error(fn, X)


def test_settings_restore_and_decorate():
    from ember._grad_state import state

    assert ember.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(True) is None
    assert ember.autograd.graph.set_override_stale_capture_stream(True) is None
    with ember.autograd.set_multithreading_enabled(False):
        assert state.multithreading is False
    assert state.multithreading is True

    @ember.autograd.enforce_grad_layout_policy(False)
    def f():
        return state.grad_layout_enforced
    assert f() is False and state.grad_layout_enforced is True
