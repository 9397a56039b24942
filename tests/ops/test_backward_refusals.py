"""Reverse mode over the whole OpInfo table: where torch's autograd refuses, ember's refuses alike.

Every entry (with or without gradient) runs its samples in its first floating dtype (float64 where it has it)
with every floating input requiring grad, then backward of a random weighted sum of the outputs that require
grad. torch refuses some of these calls, at the call (an argument that cannot require grad: batch norm's
running statistics) or at backward (a `NotImplemented` node: heaviside, histogram; derivatives.yaml's
`not_implemented`: unique, _standard_gamma_grad; a saved tensor overwritten in place: vander). ember must
refuse the same calls, at the same step, with the same exception class and message, and run every call torch
runs, with the same outputs requiring grad, the same inputs getting a gradient, and the same gradients (NOTE
[ What torch's autograd refuses ] in ember/autograd/graph.py): entries without gradient in test_ops.py (the
foreach ops, in-place comparisons, lstsq's extras) and inputs their `grad_inputs` leave out included.
"""

import warnings

import numpy as np
import pytest
import torch
from compare import assert_same, check, normalize_message, to_ember, to_torch
from op_db import OPS

import ember


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _flat(v)]
    return [x]


def _dtype(op):
    return next((d for d in ("float64", "float32") if d in op.dtypes), op.dtypes[0])


def _outcome(lib, op, s, which, weights):
    """("call", class, message) | ("backward", class, message) | ("none",) | ("ok", outputs requiring grad,
    which inputs got a gradient, the gradients): what happens to the sample with its floating inputs requiring
    grad."""
    tensor = torch.Tensor if lib is torch else ember.Tensor
    xs = [to_torch(x) if lib is torch else to_ember(x) for x in s.inputs]
    for i in which:
        xs[i].requires_grad_(True)
    try:
        out = op.fn(lib, *xs, **s.kwargs)
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return ("call", type(e).__name__, normalize_message(str(e)))
    outs = [o for o in _flat(out) if isinstance(o, tensor) and o.requires_grad]
    if not outs:
        return ("none",)
    while len(weights) < len(outs):
        weights.append(np.random.default_rng(len(weights)).standard_normal(tuple(outs[len(weights)].shape)))
    try:
        loss = sum((o * (torch.from_numpy(w) if lib is torch else ember.from_numpy(w)).to(o.dtype)).sum()
                   for o, w in zip(outs, weights))
        grads = lib.autograd.grad(loss, [xs[i] for i in which], allow_unused=True)
        if lib is torch:  # (torch's lazy zeros: sgn's gradient)
            grads = [g if g is None or not g._is_zerotensor() else torch.zeros(g.shape, dtype=g.dtype) for g in grads]
    except Exception as e:  # noqa: BLE001
        return ("backward", type(e).__name__, normalize_message(str(e)))
    return ("ok", len(outs), tuple(g is not None for g in grads), grads)


@pytest.mark.parametrize("name", [pytest.param(op.id, id=op.id) for op in OPS])
def test_backward_refusals(name):
    op = next(o for o in OPS if o.id == name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, s in enumerate(op.samples(_dtype(op), np.random.default_rng(2))):
            which = [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind in "fc"]
            if not which:
                continue
            weights = []
            t = _outcome(torch, op, s, which, weights)
            e = _outcome(ember, op, s, which, weights)
            if t[0] in ("call", "backward") and e[:2] == t[:2]:
                assert e[2] == t[2] or t[2] in e[2], f"sample {k}: message differs:\n ember: {e[2]}\n torch: {t[2]}"
                continue
            assert e[:3] == t[:3], f"sample {k}: ember {e[:3]}, torch {t[:3]}"
            for i, (eg, tg) in enumerate(zip(e[3], t[3]) if t[0] == "ok" else ()):
                if tg is not None:
                    assert_same(eg, tg, rtol=op.rtol or 1e-6, atol=op.atol or 1e-6, check_stride=False,
                                path=f"sample {k}: grad of input {which[i]}")


_INPLACE_FOREACH = {
    "mul_scalar": lambda lib, xs, ys: lib._foreach_mul_(xs, 2.5),
    "mul_list": lambda lib, xs, ys: lib._foreach_mul_(xs, ys),
    "addcmul": lambda lib, xs, ys: lib._foreach_addcmul_(xs, ys, ys, 0.5),
    "exp": lambda lib, xs, ys: lib._foreach_exp_(xs),
}


@pytest.mark.parametrize("name", list(_INPLACE_FOREACH))
def test_inplace_foreach_gradients(name):
    """An in-place foreach op on tensors autograd tracks rewrites their history (NOTE [ Foreach derivatives ]
    in ember/_ops/foreach.py): the gradients flow through the op's formulas, as torch's do."""
    def fn(lib, a, b, c, d):
        xs = [a.clone(), b.clone()]
        _INPLACE_FOREACH[name](lib, xs, [c, d])
        return xs
    rng = np.random.default_rng(4)
    check(fn, *[rng.uniform(0.5, 2.0, s) for s in ((3,), (2, 2), (3,), (2, 2))], grad=True, check_stride=False)
