"""gradcheck and gradgradcheck: compare autograd's gradients with finite differences.

`gradcheck(fn, inputs)` builds, for every output and every input that requires grad, the Jacobian twice:
numerically (central differences, each input element nudged by +-eps in place) and analytically (one
backward per output element with a one-hot grad_output). They must agree within `atol + rtol * |numerical|`,
the backward must be reentrant (the same result twice, within `nondet_tol`), give gradients of the
inputs' size, be zero for a zero grad_output and accept undefined (None) grad_outputs. Use float64
inputs: float32 differences are too coarse and torch warns about them, as ember does.

`gradgradcheck(fn, inputs, grad_outputs)` runs gradcheck on the function `(inputs, grad_outputs) ->
autograd.grad(fn(inputs), inputs, grad_outputs, create_graph=True)`, i.e. checks second derivatives.

`check_forward_ad=True` also builds the Jacobian with forward-mode AD (one dual evaluation per input element,
its tangent a one-hot vector) and compares it with the numerical one; `gradgradcheck(...,
check_fwd_over_rev=True)` checks forward-over-reverse second derivatives the same way.

`fast_mode=True` is accepted and computes the same full Jacobians (torch's fast mode projects them onto
random vectors; the verdict is the same, only slower here for large inputs), except for a forward-only check
(`check_forward_ad=True, check_backward_ad=False`), which compares J v for one random direction v.
"""

import warnings

import numpy as np

from .._dtypes import float64
from .._ops.creation import from_numpy, zeros
from .._tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Error raised by `gradcheck` and `gradgradcheck`."""

    __module__ = "ember.autograd.gradcheck"


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _diff_outputs(outputs):
    return tuple(o for o in outputs if isinstance(o, Tensor) and o.requires_grad)


def _numerical_jacobians(fn, inputs, diff_idx, n_outputs_shapes, eps, keep=None):
    """Per input in diff_idx: per output, an (input numel, output numel) float64 Jacobian by central differences."""
    jac = []
    for i in diff_idx:
        x = inputs[i]
        # central differences perturb the input's memory in place without bumping its version (torch
        # writes through `.data` the same way): a NumPy view of it, not an op
        data = x.numpy(force=True)
        cols = [np.zeros((data.size, int(np.prod(s))), np.float64) for s in n_outputs_shapes]
        for k, idx in enumerate(np.ndindex(*data.shape)):
            orig = data[idx].copy()
            data[idx] = orig - eps
            minus = _eval(fn, inputs)
            data[idx] = orig + eps
            plus = _eval(fn, inputs)
            data[idx] = orig
            if keep is not None:  # only the outputs that require grad are checked
                plus, minus = [plus[j] for j in keep], [minus[j] for j in keep]
            for j, (p, m) in enumerate(zip(plus, minus)):
                cols[j][k] = (p.astype(np.float64) - m.astype(np.float64)).reshape(-1) / (2 * eps)
        jac.append(cols)
    return jac


def _eval(fn, inputs):
    out = _as_tuple(fn(*inputs))  # with grad mode as the caller has it: gradgradcheck's function needs it
    # the Jacobian is assembled in NumPy from the outputs' values
    return [o.numpy(force=True).copy() for o in out if isinstance(o, Tensor) and (o.is_floating_point() or
                                                                                  o.is_complex())]


def _analytical_jacobians(outputs, inputs, diff_idx, nondet_tol):
    """Per input in diff_idx: per output, the Jacobian from backward, plus whether backward was reentrant
    and whether every gradient had its input's size and dtype."""
    from . import grad as autograd_grad

    diff_inputs = [inputs[i] for i in diff_idx]
    jac = [[np.zeros((x.numel(), o.numel()), np.float64) for o in outputs] for x in diff_inputs]
    reentrant, sizes_ok, types_ok = True, True, True
    for j, o in enumerate(outputs):
        for k in range(o.numel()):
            go = zeros(o.numel(), dtype=o.dtype)
            go[k] = 1
            go = go.reshape(o.shape)
            g1 = autograd_grad(o, diff_inputs, go, retain_graph=True, allow_unused=True)
            g2 = autograd_grad(o, diff_inputs, go, retain_graph=True, allow_unused=True)
            for i, (a, b, x) in enumerate(zip(g1, g2, diff_inputs)):
                if a is None:
                    continue
                if a.shape != x.shape:
                    sizes_ok = False
                    continue
                if a.dtype != x.dtype:
                    types_ok = False
                a64 = a.detach().to(float64)
                diff = float((a64 - b.detach().to(float64)).abs().amax()) if b is not None and a64.numel() else 0.0
                if b is None or diff > nondet_tol:
                    reentrant = False
                jac[i][j][:, k] = a64.numpy().reshape(-1)  # the Jacobian is a NumPy array
    return jac, reentrant, sizes_ok, types_ok


# NOTE [ Complex gradcheck ]
# A complex number is a pair of reals, and torch's gradient of a real loss with respect to z = x + iy is
# dL/dx + i dL/dy. So a function of complex tensors is checked as the real function that takes each
# complex input as view_as_real pairs and returns each complex output as pairs: finite differences on
# the reals, and autograd's complex gradients carried through view_as_complex / view_as_real, must agree.

def _as_real_function(func, inputs, diff_idx):
    from .._ops.shape import view_as_complex, view_as_real

    cplx = {i for i in diff_idx if inputs[i].is_complex()}
    real_inputs = tuple(view_as_real(x.detach()).clone().requires_grad_() if i in cplx else x
                        for i, x in enumerate(inputs))

    def real_func(*xs):
        outs = _as_tuple(func(*[view_as_complex(x) if i in cplx else x for i, x in enumerate(xs)]))
        return tuple(view_as_real(o) if isinstance(o, Tensor) and o.is_complex() else o for o in outs)
    return real_func, real_inputs


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check the gradients of `func` at `inputs` (tensors requiring grad, best in float64) against finite
    differences; True if they match, else GradcheckError (or False with raise_exception=False). Complex
    inputs and outputs are checked as pairs of reals (NOTE [ Complex gradcheck ])."""
    if check_batched_grad or check_batched_forward_grad:
        raise RuntimeError("ember's gradcheck has no vmap: check_batched_grad and check_batched_forward_grad "
                           "must be False")
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    outputs = _diff_outputs(_as_tuple(func(*inputs)))
    if any(inputs[i].is_complex() for i in diff_idx) or any(o.is_complex() for o in outputs):
        func, inputs = _as_real_function(func, inputs, diff_idx)  # NOTE [ Complex gradcheck ]
        outputs = _diff_outputs(_as_tuple(func(*inputs)))
    if not outputs:
        return _check_no_diff_outputs(func, inputs, diff_idx, eps, raise_exception)
    floats = [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and (o.is_floating_point() or
                                                                                o.is_complex())]
    keep = [j for j, o in enumerate(floats) if o.requires_grad]
    if fast_mode and check_forward_ad and not check_backward_ad:
        return _fast_forward_check(func, inputs, diff_idx, keep, eps, atol, rtol, raise_exception)
    numerical = _numerical_jacobians(func, inputs, diff_idx, [o.shape for o in outputs], eps, keep)
    if check_forward_ad and not _check_forward_ad(func, inputs, diff_idx, numerical, atol, rtol,
                                                  raise_exception, keep):
        return False
    if not check_backward_ad:
        return True
    analytical, reentrant, sizes_ok, types_ok = _analytical_jacobians(outputs, inputs, diff_idx, nondet_tol)
    if check_grad_dtypes and not types_ok:
        return _fail("Gradient has dtype mismatch", raise_exception)
    if not sizes_ok:
        return _fail("Analytical gradient has incorrect size", raise_exception)
    for a_i, (num_in, ana_in) in enumerate(zip(numerical, analytical)):
        for o_i, (n, a) in enumerate(zip(num_in, ana_in)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                dt = inputs[diff_idx[a_i]].dtype  # torch keeps the Jacobians in the input's dtype
                return _fail(f"Jacobian mismatch for output {o_i:d} with respect to input {diff_idx[a_i]:d},\n"
                             f"numerical:{from_numpy(n).to(dt)}\nanalytical:{from_numpy(a).to(dt)}\n",
                             raise_exception)
    if not reentrant:
        return _fail("Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                     "times gives different values, although analytical gradient matches numerical gradient."
                     f"The tolerance for nondeterminism was {nondet_tol}.", raise_exception)
    if not _check_mul_by_grad_output(outputs, inputs, diff_idx, raise_exception):
        return False
    if check_undefined_grad:
        return _check_undefined_grad(func, inputs, diff_idx, raise_exception)
    return True


def _forward_jacobians(func, inputs, diff_idx, keep):
    """Per input in diff_idx: per output, the (input numel, output numel) Jacobian from forward-mode AD, one
    dual evaluation per input element with a one-hot tangent."""
    from .. import zeros_like
    from . import forward_ad as fwAD

    jac = []
    for i in diff_idx:
        x = inputs[i]
        cols = None
        for k in range(x.numel()):
            with fwAD.dual_level():
                t = zeros_like(x).reshape(-1)
                t[k] = 1
                args = list(inputs)
                args[i] = fwAD.make_dual(x, t.reshape(x.shape))
                outs = [o for o in _as_tuple(func(*args))
                        if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex())]
                outs = [outs[j] for j in keep]
                if cols is None:
                    cols = [np.zeros((x.numel(), o.numel()), np.float64) for o in outs]
                for j, o in enumerate(outs):
                    tangent = fwAD.unpack_dual(o).tangent
                    if tangent is not None:
                        cols[j][k] = tangent.detach().to(float64).numpy().reshape(-1)
        jac.append(cols or [])
    return jac


def _check_forward_ad(func, inputs, diff_idx, numerical, atol, rtol, raise_exception, keep):
    forward = _forward_jacobians(func, inputs, diff_idx, keep)
    for a_i, (num_in, fw_in) in enumerate(zip(numerical, forward)):
        for o_i, (n, a) in enumerate(zip(num_in, fw_in)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                dt = inputs[diff_idx[a_i]].dtype
                return _fail(f"Jacobian computed with forward mode mismatch for output {o_i:d} with respect to "
                             f"input {diff_idx[a_i]:d},\nnumerical:{from_numpy(n).to(dt)}\n"
                             f"analytical:{from_numpy(a).to(dt)}\n", raise_exception)
    return True


def _fast_forward_check(func, inputs, diff_idx, keep, eps, atol, rtol, raise_exception):
    """fast_mode's forward check: the Jacobian applied to one random direction (every input moved at once),
    by central differences and by one dual evaluation, instead of the full Jacobians."""
    from . import forward_ad as fwAD
    from .grad_mode import no_grad

    rng = np.random.default_rng(0)
    vs = {i: from_numpy(rng.uniform(-1, 1, tuple(inputs[i].shape))).to(inputs[i].dtype) for i in diff_idx}

    def moved(sign):
        with no_grad():
            args = [x.detach() + sign * eps * vs[i] if i in vs else x for i, x in enumerate(inputs)]
            outs = [o for o in _as_tuple(func(*args)) if isinstance(o, Tensor) and (o.is_floating_point() or
                                                                                  o.is_complex())]
            return [outs[j].to(float64).numpy() for j in keep]
    numerical = [(p - m) / (2 * eps) for p, m in zip(moved(1), moved(-1))]
    with fwAD.dual_level():
        args = [fwAD.make_dual(x, vs[i]) if i in vs else x for i, x in enumerate(inputs)]
        outs = [o for o in _as_tuple(func(*args)) if isinstance(o, Tensor) and (o.is_floating_point() or
                                                                              o.is_complex())]
        tangents = [fwAD.unpack_dual(outs[j]).tangent for j in keep]
        analytical = [np.zeros(n.shape) if t is None else t.detach().to(float64).numpy() for n, t in
                      zip(numerical, tangents)]
    for o_i, (n, a) in enumerate(zip(numerical, analytical)):
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            return _fail(f"Jacobian computed with forward mode mismatch for output {o_i:d} in the direction of a "
                         f"random tangent (fast mode),\nnumerical:{from_numpy(n)}\nanalytical:{from_numpy(a)}\n",
                         raise_exception)
    return True


def _check_no_diff_outputs(func, inputs, diff_idx, eps, raise_exception):
    outs = _eval(func, inputs)
    numerical = _numerical_jacobians(func, inputs, diff_idx, [o.shape for o in outs], eps)
    for per_input in numerical:
        for n in per_input:
            if not np.all(n == 0):
                return _fail("Numerical gradient for function expected to be zero", raise_exception)
    return True


def _check_mul_by_grad_output(outputs, inputs, diff_idx, raise_exception):
    from .. import zeros_like
    from . import grad as autograd_grad

    diff_inputs = [inputs[i] for i in diff_idx]
    grads = autograd_grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], retain_graph=True,
                          allow_unused=True)
    for g, x in zip(grads, diff_inputs):
        if g is None:
            continue
        if not bool((g == 0).all()):
            return _fail("backward not multiplied by grad_output", raise_exception)
        if g.dtype != x.dtype:
            return _fail("grad is incorrect type", raise_exception)
        if g.shape != x.shape:
            return _fail("grad is incorrect size", raise_exception)
    return True


def _check_undefined_grad(func, inputs, diff_idx, raise_exception):
    """Backward must accept a missing (None) gradient for an output and treat it as zeros."""
    from . import grad as autograd_grad

    diff_inputs = [inputs[i] for i in diff_idx]
    outputs = _diff_outputs(_as_tuple(func(*inputs)))
    for j in range(len(outputs)):
        go = [None if i == j else zeros(o.shape, dtype=o.dtype) for i, o in enumerate(outputs)]
        keep = [o for i, o in enumerate(outputs) if go[i] is not None]
        if not keep:
            continue
        try:
            grads = autograd_grad(keep, diff_inputs, [g for g in go if g is not None], retain_graph=True,
                                  allow_unused=True)
        except RuntimeError as e:
            return _fail(f"Expected backward function to handle undefined output grads. Please look at "
                         f"\"Notes about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"\n{e}",
                         raise_exception)
        for g in grads:
            if g is not None and not bool((g == 0).all()):
                return _fail("Expected all input grads to be undefined or zero when all output grads are undefined "
                             "or zero.", raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of the gradient of `func` (with random or given grad_outputs)."""
    from . import grad as autograd_grad

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _diff_outputs(_as_tuple(func(*inputs)))
        grad_outputs = tuple(
            from_numpy(rng.uniform(-1, 1, tuple(o.shape))).to(o.dtype).requires_grad_() for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _diff_outputs(_as_tuple(func(*ins)))
        grads = autograd_grad(outs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     fast_mode=fast_mode)
