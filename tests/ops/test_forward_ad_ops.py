"""Forward-mode AD over the whole OpInfo table: every differentiable entry's JVP against torch's.

For each entry with a gradient, on its float64 samples, the floating inputs get random tangents
(`make_dual`) and the outputs' primals and tangents (`unpack_dual`) are compared with torch's on the same
inputs and tangents: values, dtype and shape. Where torch has no forward-AD formula for an op (it raises
"Trying to use forward AD with ... that does not support it"), ember must refuse alike: same class, same
message (NOTE [ Ops torch's forward AD refuses ] in ember/autograd/_jvp.py); the entries without gradient
are held to the same (test_forward_ad_refusals). Where torch leaves an output without tangent, the
reference is J t with J torch's reverse-mode Jacobian (for complex values, torch's central differences
along the tangents, within 1e-5). One sample per entry is also held to central finite differences
(`gradcheck(..., check_forward_ad=True, fast_mode=True)`).
"""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, normalize_message, to_ember, to_torch
from op_db import OPS

import ember

_GRAD = [op for op in OPS if op.grad]

# Entries whose torch forward-AD formula differentiates a triangle of the matrix the function never reads
# (torch.triangular_solve reads one triangle of A, its JVP takes dA whole): ember's tangent is the
# derivative of what the function computes, held to J t with torch's reverse-mode Jacobian instead.
_UNREAD_TRIANGLE = {"triangular_solve", "Tensor.triangular_solve"}
# Entries ember computes as a composite whose torch counterpart has a forward formula of its own that reads
# the factor otherwise: ember's cholesky_inverse is cholesky_solve(I, L), and its tangent is torch's tangent
# of that composition (torch's cholesky_inverse_jvp is not the derivative of the same function).
_AS_COMPOSED = {"cholesky_inverse": lambda lib, c, *a: lib.cholesky_solve(lib.eye(c.shape[-1], dtype=c.dtype)
                                                                          .expand(c.shape), c, *a),
                "Tensor.cholesky_inverse": lambda lib, c: lib.cholesky_solve(lib.eye(c.shape[-1], dtype=c.dtype)
                                                                             .expand(c.shape), c)}


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
    fn = _AS_COMPOSED.get(op.id, op.fn) if lib is torch else op.fn
    with fw.dual_level():
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = fw.make_dual(prims[i], tans[k])
        out = fn(lib, *args, **s.kwargs)
        res = []
        for o in _outputs(out):
            if isinstance(o, (torch.Tensor, ember.Tensor)) and (o.is_floating_point() or o.is_complex()):
                p, t = fw.unpack_dual(o)
                if lib is torch and t is not None and t._is_zerotensor():  # (torch's lazy zeros)
                    t = torch.zeros(t.shape, dtype=t.dtype)
                res.append((p, t))
        return res


def _reference(op, s, which, prims, tans, h=1e-6):
    """torch's tangents where its forward AD has no formula (or leaves an output without one): J t with J
    its reverse-mode Jacobian (first derivatives only: some of torch's backward formulas, cond's, are not
    differentiable, so its double-backward jvp cannot stand in); for complex values, or where torch's
    reverse mode refuses too, central differences along the tangents."""
    def f(*xs):
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = xs[k]
        return tuple(o for o in _outputs(op.fn(torch, *args, **s.kwargs))
                     if isinstance(o, torch.Tensor) and (o.is_floating_point() or o.is_complex()))
    outs = f(*[prims[i] for i in which])
    real = not any(t.is_complex() for t in tans) and not any(o.is_complex() for o in outs)
    if real:
        try:
            jac = torch.autograd.functional.jacobian(f, tuple(prims[i] for i in which))
        except RuntimeError:
            real = False
    if real:
        res = []
        for k, o in enumerate(outs):
            jv = torch.zeros(o.shape, dtype=o.dtype)
            for J, t in zip(jac[k], tans):
                jv = jv + torch.tensordot(J, t, dims=t.dim()) if t.numel() else jv
            res.append((o, jv))
        return res
    with torch.no_grad():
        plus = f(*[prims[i] + h * t for i, t in zip(which, tans)])
        minus = f(*[prims[i] - h * t for i, t in zip(which, tans)])
    return [(o, (p - m) / (2 * h)) for o, p, m in zip(outs, plus, minus)]


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
        reference = False
        n = len(s.inputs)
        if op.id in _UNREAD_TRIANGLE:  # (see _UNREAD_TRIANGLE)
            t_res, reference = _reference(op, s, which, to_torch(list(s.inputs)), to_torch(tans)), True
        else:
            try:
                t_res = _forward(torch, op, s, which, to_torch(list(s.inputs)), to_torch(tans))
            except Exception:  # noqa: BLE001 - torch's forward AD refuses (no forward formula): ember's alike
                assert_same_error(lambda lib, *xs: _forward(lib, op, s, which, list(xs[:n]), list(xs[n:])),
                                  *s.inputs, *tans)
                compared += 1
                continue
        e_res = _forward(ember, op, s, which, to_ember(list(s.inputs)), to_ember(tans))
        assert len(e_res) == len(t_res), "different floating outputs"
        if any(tt is None and et is not None for (_, et), (_, tt) in zip(e_res, t_res)):
            # torch's forward AD left an output without tangent (its cond, scatter_reduce "prod")
            t_res, reference = _reference(op, s, which, to_torch(list(s.inputs)), to_torch(tans)), True
        tol = 1e-5 if reference else 1e-6
        for k, ((ep, et), (tp, tt)) in enumerate(zip(e_res, t_res)):
            assert_same(ep, tp, rtol=op.rtol, atol=op.atol, check_stride=False, path=f"primal[{k}]")
            if tt is None or et is None:  # no tangent stands for a zero one
                other = tt if et is None else et
                assert other is None or not np.asarray(other.detach().numpy() if other is tt else
                                                       other._data).any(), f"tangent[{k}]: None vs nonzero"
                continue
            assert_same(et, tt, rtol=max(op.rtol or 0, tol), atol=max(op.atol or 0, tol), check_stride=False,
                        path=f"tangent[{k}]")
            compared += 1
    assert compared or not any(_which(op, s) for s in op.samples("float64", np.random.default_rng(2))[:4]), \
        "no tangent was compared"


@pytest.mark.parametrize("name", [pytest.param(op.id, id=op.id) for op in _GRAD if op.gradcheck])
def test_forward_ad_gradcheck(name):
    """ember's JVP of the first float64 sample against central finite differences (gradcheck's fast mode: J v
    along one random direction; the full Jacobians are checked for the functions of test_forward_ad.py)."""
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
                                        rtol=1e-5, fast_mode=True)
    except NotImplementedError:  # a refusal (a custom Function without jvp): torch's forward AD refuses alike
        n = len(s.inputs)
        tans = [np.ones_like(s.inputs[i]) for i in which]
        assert_same_error(lambda lib, *a: _forward(lib, op, s, which, list(a[:n]), list(a[n:])),
                          *s.inputs, *tans)


def _hvp(lib, op, s, which, weights, prims, vs, forward=True):
    """H v of L = sum(w * outputs) with respect to the inputs in `which`: forward-over-reverse (the tangents
    of the gradients computed inside a dual level), or, with forward=False, torch's reverse-over-reverse."""
    fw = lib.autograd.forward_ad
    xs = [prims[i].detach().requires_grad_() for i in which]
    fn = _AS_COMPOSED.get(op.id, op.fn) if lib is torch else op.fn

    def loss(args):
        outs = [o for o in _outputs(fn(lib, *args, **s.kwargs))
                if isinstance(o, (torch.Tensor, ember.Tensor)) and o.requires_grad]
        return sum((o * w).sum() for o, w in zip(outs, weights))
    if not forward:
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = xs[k]
        gs = lib.autograd.grad(loss(args), xs, create_graph=True, allow_unused=True)
        used = [(g, v) for g, v in zip(gs, vs) if g is not None and g.requires_grad]
        hv = lib.autograd.grad([g for g, _ in used], xs, [v for _, v in used], allow_unused=True) if used \
            else [None] * len(xs)
        return [lib.zeros_like(x) if h is None else h for x, h in zip(xs, hv)]
    with fw.dual_level():
        args = list(prims)
        for k, i in enumerate(which):
            args[i] = fw.make_dual(xs[k], vs[k])
        gs = lib.autograd.grad(loss(args), xs, create_graph=True, allow_unused=True)
        res = []
        for x, g in zip(xs, gs):
            t = None if g is None else fw.unpack_dual(g).tangent
            if lib is torch and t is not None and t._is_zerotensor():
                t = None
            res.append(lib.zeros_like(x) if t is None else t.detach())
        return res


@pytest.mark.parametrize("name", [pytest.param(op.id, id=op.id) for op in _GRAD if op.gradgrad])
def test_forward_over_reverse(name):
    """Hessian-vector products by forward-over-reverse over the table: the backward formulas' own ops
    (tanh_backward, the norms' and losses' backward ops, convolution's input and weight gradients, ...) take
    tangents. torch's forward-over-reverse is the reference, its reverse-over-reverse where it has none."""
    op = next(o for o in _GRAD if o.id == name)
    rng = np.random.default_rng(12)
    for s in op.samples("float64", np.random.default_rng(4))[:2]:
        which = [i for i in _which(op, s) if s.inputs[i].dtype.kind == "f"]
        if not which or any(s.inputs[i].size == 0 for i in which):
            continue
        outs = [o for o in _outputs(op.fn(torch, *to_torch(list(s.inputs)), **s.kwargs))
                if isinstance(o, torch.Tensor) and (o.is_floating_point() or o.is_complex())]
        weights = [rng.standard_normal(tuple(o.shape)) for o in outs]
        vs = [_tangent(rng, s.inputs[i]) for i in which]
        t_prims = [to_torch(x) if isinstance(x, np.ndarray) else x for x in s.inputs]
        refused = None
        try:
            if op.id in _UNREAD_TRIANGLE:  # (torch's tangent reads the unread triangle: see above)
                raise RuntimeError("does not support it")
            ref = _hvp(torch, op, s, which, to_torch(weights), t_prims, to_torch(vs))
        except Exception as e:  # noqa: BLE001 - torch has no forward formula for an op on the way: its double
            if "does not support it" not in str(e) and "not implemented" not in str(e):  # backward instead
                # (or a refusal ember must share: a custom Function without jvp)
                assert_same_error(lambda lib, *xs: _hvp(lib, op, s, which, xs[len(s.inputs):len(s.inputs) + len(
                    weights)], list(xs[:len(s.inputs)]), list(xs[len(s.inputs) + len(weights):])),
                    *s.inputs, *weights, *vs)
                continue
            refused = e
            ref = _hvp(torch, op, s, which, to_torch(weights), t_prims, to_torch(vs), forward=False)
        try:
            got = _hvp(ember, op, s, which, to_ember(weights), to_ember(list(s.inputs)), to_ember(vs))
        except NotImplementedError as e:  # ember refuses only where torch does, with torch's words
            assert refused is not None and normalize_message(str(e)) == normalize_message(str(refused)), \
                f"ember refused ({e}) where torch did not ({refused})"
            continue
        for k, (e, t) in enumerate(zip(got, ref)):
            assert_same(e, t, rtol=op.rtol or 1e-6, atol=op.atol or 1e-6, check_stride=False, path=f"Hv[{k}]")


_NO_GRAD = [op for op in OPS if not op.grad]


@pytest.mark.parametrize("name", [pytest.param(op.id, id=op.id) for op in _NO_GRAD])
def test_forward_ad_refusals(name):
    """The entries without gradient on dual inputs (their float64 samples' floating inputs given tangents):
    where torch's forward AD refuses (an op outside derivatives.yaml, an out= function, one without forward
    formula), ember refuses with the same class and message, before or after its kernel's own checks as
    torch's; where torch's runs, ember's runs too and gives the same primal values."""
    op = next(o for o in _NO_GRAD if o.id == name)
    rng = np.random.default_rng(11)
    for s in op.samples("float64", np.random.default_rng(2))[:4]:
        which = _which(op, s)
        if not which:
            continue
        tans = [_tangent(rng, s.inputs[i]) for i in which]
        n = len(s.inputs)
        try:
            t_res = _forward(torch, op, s, which, to_torch(list(s.inputs)), to_torch(tans))
        except Exception:  # noqa: BLE001 - whatever torch raises, ember raises alike
            assert_same_error(lambda lib, *xs: _forward(lib, op, s, which, list(xs[:n]), list(xs[n:])),
                              *s.inputs, *tans)
            continue
        e_res = _forward(ember, op, s, which, to_ember(list(s.inputs)), to_ember(tans))
        assert len(e_res) == len(t_res), "different floating outputs"
        for k, ((ep, _), (tp, _)) in enumerate(zip(e_res, t_res)):
            if "nondeterministic" not in op.id and not op.id.startswith(("bernoulli", "_sample", "binomial")):
                assert_same(ep, tp, rtol=op.rtol, atol=op.atol, check_stride=False, path=f"primal[{k}]")
