"""ember.func pieces beside the transforms table (test_func_transforms.py), against torch on the same inputs:
custom autograd.Functions under vmap (a `vmap` staticmethod, `generate_vmap_rule`, neither: NOTE [ Custom
Functions under vmap ] in ember/func/_rules.py), grad_and_value with argnums and has_aux, and functional_call's
`strict`, `tie_weights` and several dicts.
"""

import warnings

import numpy as np
import pytest
from compare import assert_same_error, check

R = np.random.default_rng(0)


def f64(*shape):
    return R.standard_normal(shape)


def _functions(L):
    class Square(L.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x, k):
            return x * x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g * ctx.k, None

        @staticmethod
        def jvp(ctx, t, _):
            return 2 * ctx.x * t * ctx.k

    class Cube(L.autograd.Function):
        @staticmethod
        def forward(x, y):
            return x ** 3 + y, x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g, gx):
            x, = ctx.saved_tensors
            return 3 * x * x * g + gx, g

        @staticmethod
        def vmap(info, in_dims, x, y):
            xd, yd = in_dims
            x = x.movedim(xd, 0) if xd is not None else x.expand(info.batch_size, *x.shape)
            y = y.movedim(yd, 0) if yd is not None else y
            return (x ** 3 + y, x), (0, 0)

    class NoRule(L.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Both(NoRule):
        generate_vmap_rule = True

        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2, in_dims[0]

    class BadReturn(NoRule):
        @staticmethod
        def vmap(info, in_dims, x):
            return x * 2

    return Square, Cube, NoRule, Both, BadReturn


def _tied(L):
    class Tied(L.nn.Module):
        def __init__(self):
            super().__init__()
            L.manual_seed(0)
            self.a = L.nn.Linear(3, 3, bias=False)
            self.b = L.nn.Linear(3, 3, bias=False)
            self.b.weight = self.a.weight
            self.register_buffer("scale", L.ones(3))

        def forward(self, x):
            return self.b(self.a(x)) * self.scale
    return Tied()


RESULTS = [
    ("function_generated_rule", lambda L, x: L.func.vmap(lambda a: _functions(L)[0].apply(a, 3.0))(x), [f64(4, 3)]),
    ("function_generated_rule_grad", lambda L, x: L.func.vmap(L.func.grad(
        lambda a: _functions(L)[0].apply(a, 2.0).sum()))(x), [f64(4, 3)]),
    ("function_vmap_staticmethod", lambda L, x, y: L.func.vmap(_functions(L)[1].apply, in_dims=(1, None))(x, y),
     [f64(3, 4), f64(3)]),
    ("function_vmap_staticmethod_grad", lambda L, x, y: L.func.vmap(L.func.grad(
        lambda a, b: _functions(L)[1].apply(a, b)[0].sum()), in_dims=(0, None))(x, y), [f64(4, 3), f64(3)]),
    ("grad_and_value_argnums_aux", lambda L, x, y: L.func.grad_and_value(
        lambda a, b: ((a * b).sin().sum(), a.cos()), argnums=(0, 1), has_aux=True)(x, y), [f64(3), f64(3)]),
    ("grad_and_value_argnum1", lambda L, x, y: L.func.grad_and_value(lambda a, b: (a * b.exp()).sum(),
                                                                     argnums=1)(x, y), [f64(2, 3), f64(2, 3)]),
    ("functional_call_tied", lambda L, x, w: L.func.functional_call(_tied(L), {"a.weight": w}, (x,)),
     [f64(2, 3), f64(3, 3)]),
    ("functional_call_untied", lambda L, x, w: L.func.functional_call(_tied(L), {"a.weight": w}, (x,),
                                                                      tie_weights=False), [f64(2, 3), f64(3, 3)]),
    ("functional_call_dicts", lambda L, x, w, s: L.func.functional_call(
        _tied(L), ({"a.weight": w}, {"scale": s}), (x,), strict=False), [f64(2, 3), f64(3, 3), f64(3)]),
    ("functional_call_strict", lambda L, x, w, s: L.func.functional_call(
        _tied(L), {"a.weight": w, "b.weight": w, "scale": s}, (x,), strict=True), [f64(2, 3), f64(3, 3), f64(3)]),
]


@pytest.mark.parametrize("name,fn,inputs", RESULTS, ids=[r[0] for r in RESULTS])
def test_result(name, fn, inputs):
    with warnings.catch_warnings():  # no fallback warning: a custom Function's rule is its own
        warnings.simplefilter("error", UserWarning)
        check(fn, *inputs, check_stride=False)


ERRORS = [
    ("function_without_vmap", lambda L, x: L.func.vmap(_functions(L)[2].apply)(x), [f64(3, 2)]),
    ("function_both_rules", lambda L, x: L.func.vmap(_functions(L)[3].apply)(x), [f64(3, 2)]),
    ("function_vmap_bad_return", lambda L, x: L.func.vmap(_functions(L)[4].apply)(x), [f64(3, 2)]),
    ("function_vmap_default", lambda L, x: L.autograd.Function.vmap(None, (0,), x), [f64(3, 2)]),
    ("functional_call_strict_missing", lambda L, x, w: L.func.functional_call(
        _tied(L), {"a.weight": w}, (x,), strict=True), [f64(2, 3), f64(3, 3)]),
    ("functional_call_strict_unexpected", lambda L, x, w: L.func.functional_call(
        _tied(L), {"a.weight": w, "b.weight": w, "scale": w[0], "c": w}, (x,), strict=True),
     [f64(2, 3), f64(3, 3)]),
    ("functional_call_tied_different", lambda L, x, w: L.func.functional_call(
        _tied(L), {"a.weight": w, "b.weight": w * 2}, (x,)), [f64(2, 3), f64(3, 3)]),
]


@pytest.mark.parametrize("name,fn,inputs", ERRORS, ids=[e[0] for e in ERRORS])
def test_error(name, fn, inputs):
    assert_same_error(fn, *inputs)
