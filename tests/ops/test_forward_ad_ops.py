"""Forward-mode AD over the whole OpInfo table: every differentiable entry's JVP against torch's.

For each entry with a gradient, on its float64 samples, the floating inputs get random tangents
(`make_dual`) and the outputs' primals and tangents (`unpack_dual`) are compared with torch's on the same
inputs and tangents: values, dtype and shape. Where torch has no forward-AD formula for an op (it raises
"Trying to use forward AD with ... that does not support it"), torch's reverse-mode `autograd.functional.jvp`
(the double-backward trick) on the same function is the reference. One sample per entry is also held to
central finite differences (`gradcheck(..., check_forward_ad=True)`).
"""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, to_ember, to_torch
from op_db import OPS

import ember

_GRAD = [op for op in OPS if op.grad]


def _which(op, s):
    return [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind in "fc"
            and (op.grad_inputs is None or i in op.grad_inputs)]


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [o for v in out for o in _outputs(v)]
    return [out]


def _forward(lib, op, s, which, prims, tans):
    """(primal, tangent) of every floating output of the entry's function on dual inputs."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = fw.make_dual(prims[i], tans[k])
        out = op.fn(lib, *args, **s.kwargs)
        res = []
        for o in _outputs(out):
            if isinstance(o, (torch.Tensor, ember.Tensor)) and (o.is_floating_point() or o.is_complex()):
                p, t = fw.unpack_dual(o)
                res.append((p, t))
        return res


def _reference(op, s, which, prims, tans):
    """torch's JVP by reverse mode (double backward), for ops torch's forward AD does not support."""
    def f(*xs):
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = xs[k]
        return tuple(o for o in _outputs(op.fn(torch, *args, **s.kwargs))
                     if isinstance(o, torch.Tensor) and (o.is_floating_point() or o.is_complex()))
    outs, jvps = torch.autograd.functional.jvp(f, tuple(prims[i] for i in which), tuple(tans))
    return list(zip(outs, jvps))


def _tangent(rng, x):
    t = rng.standard_normal(x.shape)
    if x.dtype.kind == "c":
        t = t + 1j * rng.standard_normal(x.shape)
    return t.astype(x.dtype)


@pytest.mark.parametrize("name", [pytest.param(op.id, id=op.id) for op in _GRAD])
def test_jvp_matches_torch(name):
    op = next(o for o in _GRAD if o.id == name)
    rng = np.random.default_rng(11)
    compared = 0
    for s in op.samples("float64", np.random.default_rng(2))[:4]:
        which = _which(op, s)
        if not which:
            continue
        tans = [_tangent(rng, s.inputs[i]) for i in which]
        try:
            t_res = _forward(torch, op, s, which, to_torch(list(s.inputs)), to_torch(tans))
        except Exception as e:  # noqa: BLE001 - torch's forward AD refuses: its reverse mode is the reference
            if "does not support it" not in str(e):  # or a refusal ember must share (a Function without jvp)
                n = len(s.inputs)
                assert_same_error(lambda lib, *xs: _forward(lib, op, s, which, list(xs[:n]), list(xs[n:])),
                                  *s.inputs, *tans)
                compared += 1
                continue
            t_res = _reference(op, s, which, to_torch(list(s.inputs)), to_torch(tans))
        e_res = _forward(ember, op, s, which, to_ember(list(s.inputs)), to_ember(tans))
        assert len(e_res) == len(t_res), "different floating outputs"
        for k, ((ep, et), (tp, tt)) in enumerate(zip(e_res, t_res)):
            assert_same(ep, tp, rtol=op.rtol, atol=op.atol, check_stride=False, path=f"primal[{k}]")
            if tt is None or et is None:  # no tangent stands for a zero one
                other = tt if et is None else et
                assert other is None or not np.asarray(other.detach().numpy() if other is tt else
                                                       other._data).any(), f"tangent[{k}]: None vs nonzero"
                continue
            assert_same(et, tt, rtol=op.rtol or 1e-6, atol=op.atol or 1e-6, check_stride=False,
                        path=f"tangent[{k}]")
            compared += 1
    assert compared or not any(_which(op, s) for s in op.samples("float64", np.random.default_rng(2))[:4]), \
        "no tangent was compared"


@pytest.mark.parametrize("name", [pytest.param(op.id, id=op.id) for op in _GRAD if op.gradcheck])
def test_forward_ad_gradcheck(name):
    """ember's JVP of the first float64 sample against central finite differences."""
    op = next(o for o in _GRAD if o.id == name)
    s = op.samples("float64", np.random.default_rng(6))[0]
    which = _which(op, s)
    if not which or any(s.inputs[i].size == 0 for i in which):
        return
    prims = to_ember(list(s.inputs))

    def f(*xs):
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = xs[k]
        return tuple(o for o in _outputs(op.fn(ember, *args, **s.kwargs))
                     if isinstance(o, ember.Tensor) and (o.is_floating_point() or o.is_complex()))
    xs = tuple(to_ember(s.inputs[i], True) for i in which)
    try:
        assert ember.autograd.gradcheck(f, xs, check_forward_ad=True, check_backward_ad=False, atol=1e-5,
                                        rtol=1e-5)
    except NotImplementedError:  # a refusal (a custom Function without jvp): torch's forward AD refuses alike
        n = len(s.inputs)
        tans = [np.ones_like(s.inputs[i]) for i in which]
        assert_same_error(lambda lib, *a: _forward(lib, op, s, which, list(a[:n]), list(a[n:])),
                          *s.inputs, *tans)
