"""What tensors answer about autograd inside ember.func.jvp and forward-AD dual levels, against torch.

Inside `jvp(f, ...)` torch's f sees wrappers of the jvp's level: a primal and whatever f computes from it answer
requires_grad False, grad_fn None, is_leaf True, even where the tensor underneath requires grad, while an
enclosing grad still differentiates through it (NOTE [ Tensors inside jvp ] in ember/_tensor.py). Each case
records those answers at points inside f (and inside transforms nested in or around it) and returns them with
its results, which `check` compares with torch's on the same inputs.
"""

import numpy as np
import pytest
from compare import check


def _fields(t):
    fn = t.grad_fn
    return (t.requires_grad, t.is_leaf, None if fn is None else type(fn).__name__)


def _jvp_input(lib, x, t):
    seen = []

    def f(p):
        seen.append(_fields(p))
        y = p.sin() * 2
        seen.append(_fields(y))
        return y
    out = lib.func.jvp(f, (x,), (t,))
    return out, seen


def _jvp_closure(lib, x, t, w):
    w = w.detach().requires_grad_()  # a parameter f closes over
    seen = []

    def f(p):
        y = p * w
        seen.append(_fields(p))
        seen.append(_fields(y))
        seen.append(_fields(w))
        return y.sum()
    return lib.func.jvp(f, (x,), (t,)), seen


def _grad_of_jvp(lib, x, t):
    """Reverse mode through a jvp (its tangent's gradient): the hidden fields do not cut the graph."""
    seen = []

    def inner(p):
        seen.append(_fields(p))
        return (p.exp() * p).sum()

    def outer(a):
        return lib.func.jvp(inner, (a,), (t,))[1]
    return lib.func.grad(outer)(x), seen


def _jvp_of_grad(lib, x, t):
    seen = []

    def h(p):
        seen.append(_fields(p))
        y = (p * p.cos()).sum()
        seen.append(_fields(y))
        return y
    return lib.func.jvp(lib.func.grad(h), (x,), (t,)), seen


def _vmap_of_jvp(lib, x, t):
    seen = []

    def f(p):
        seen.append(_fields(p))
        return p * 3
    out = lib.func.vmap(lambda a, b: lib.func.jvp(f, (a,), (b,)))(x.reshape(-1, 1), t.reshape(-1, 1))
    return out, seen


def _dual_level(lib, x, t):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        d = fw.make_dual(x, t)
        y = d * 2
        return _fields(d), _fields(y), fw.unpack_dual(y).tangent.detach(), lib.autograd.grad(y.sum(), x)


_CASES = {
    "jvp_input": (_jvp_input, 2, ()),
    "jvp_input_requires_grad": (_jvp_input, 2, (0,)),
    "jvp_closure": (_jvp_closure, 3, ()),
    "grad_of_jvp": (_grad_of_jvp, 2, ()),
    "jvp_of_grad": (_jvp_of_grad, 2, ()),
    "vmap_of_jvp": (_vmap_of_jvp, 2, ()),
    "dual_level_requires_grad": (_dual_level, 2, (0,)),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_jvp_fields(name):
    fn, n, grad = _CASES[name]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(4) for _ in range(n)]
    check(fn, *inputs, grad=grad, check_stride=False)
