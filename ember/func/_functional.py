"""autograd.functional's `vectorize=True` paths and autograd.grad's `is_grads_batched=True`, on ember.func.

torch computes a vectorized Jacobian with one vmap over autograd.grad (reverse mode: the standard basis of
the outputs as batched grad_outputs) or over a jvp (forward mode: the basis of the inputs as batched
tangents); these are the same, on ember's vmap.
"""

from __future__ import annotations

from .._grad_state import state as _grad_state

__all__ = ["grad_batched", "grad_of_batched", "jacobian_reverse", "jacobian_forward"]


def grad_of_batched(grad_fn, outputs, inputs, grad_outputs, kwargs):
    """autograd.grad called inside vmap on BatchedTensors: autograd recorded their physical ops (NOTE [ grad
    under vmap ]), so the gradient of the exposed outputs with respect to each input's physical tensor is,
    sample by sample, the per-sample gradient, returned batched as the input is."""
    from ._batched import BatchedTensor, _make, _tracked, active_levels
    from ._transforms import _to_phys

    for i, o in enumerate(outputs):  # NOTE [ autograd.grad inside vmap ] (_batched.py)
        if type(o) is BatchedTensor and not _tracked(o._level):
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    levels = active_levels()
    from .._ops.creation import ones_like

    outs = [_to_phys(o, levels) for o in outputs]
    given = grad_outputs if grad_outputs is not None else (None,) * len(outputs)
    # a scalar sample's implicit grad_output is one per sample
    gos = [_to_phys(g, levels) if g is not None else (ones_like(p) if o.numel() == 1 else None)
           for g, o, p in zip(given, outputs, outs)]
    phys, chains = [], []
    for x in inputs:
        chain = []
        while type(x) is BatchedTensor:
            chain.append((x._bdim, x._level))
            x = x._value
        phys.append(x)
        chains.append(chain)
    grads = grad_fn(outs, phys, gos, **kwargs)
    result = []
    for g, chain in zip(grads, chains):
        for bdim, lvl in reversed(chain):
            g = None if g is None else _make(g, bdim, lvl)
        result.append(g)
    return tuple(result)


def grad_batched(grad_fn, outputs, inputs, grad_outputs, kwargs):
    """autograd.grad(..., is_grads_batched=True): `grad_fn` vmapped over dim 0 of every grad_output."""
    from ._transforms import vmap

    def one(*gos):
        return tuple(grad_fn(outputs, inputs, gos, **kwargs))

    return vmap(one)(*grad_outputs)


def _basis(tensors, dtype):
    """The standard basis of R^(total numel), split per tensor: (total, *tensor.shape) each."""
    from .._ops.creation import eye

    sizes = [t.numel() for t in tensors]
    total = sum(sizes)
    basis = eye(total, dtype=dtype)
    parts, start = [], 0
    for t, n in zip(tensors, sizes):
        parts.append(basis.narrow(1, start, n).reshape((total,) + tuple(t.shape)).to(t.dtype))
        start += n
    return parts, sizes, total


def _split(rows, sizes, leading, trailing):
    """(total, *trailing shape) -> per `leading` tensor, its rows viewed (*leading shape, *trailing shape)."""
    out, start = [], 0
    for t, n in zip(leading, sizes):
        out.append(rows.narrow(0, start, n).reshape(tuple(t.shape) + tuple(trailing.shape)))
        start += n
    return out


def jacobian_reverse(grad_fn, outputs, inputs, create_graph):
    """Per output, per input: the Jacobian block, from one vmap of autograd.grad over the outputs' basis."""
    from .._ops.creation import zeros
    from ._transforms import vmap

    grad_outputs, sizes, total = _basis(outputs, outputs[0].dtype)

    def vjp(*gos):
        gs = grad_fn(outputs, inputs, gos, retain_graph=True, create_graph=create_graph)
        return tuple(g if g is not None else zeros(tuple(x.shape), dtype=x.dtype) for g, x in zip(gs, inputs))

    if total == 0:
        return tuple(
            tuple(zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype) for x in inputs) for o in outputs
        )
    rows = vmap(vjp)(*grad_outputs)  # per input: (total, *input shape)
    per_input = [_split(r, sizes, outputs, x) for r, x in zip(rows, inputs)]
    return tuple(tuple(per_input[k][i] for k in range(len(inputs))) for i in range(len(outputs)))


def jacobian_forward(func, inputs):
    """(whether `func` returns a tuple, per output per input Jacobian blocks) from one vmap of a jvp over the
    inputs' basis."""
    from ._batched import _tracking, active_levels
    from ._transforms import jvp, vmap

    tangents, sizes, total = _basis(inputs, inputs[0].dtype)

    def push(*ts):
        _tracking.stack.append(len(active_levels()))  # (`func` may run autograd.grad: NOTE [ autograd.grad
        try:  # inside vmap ] in _batched.py)
            out, tan = jvp(func, tuple(inputs), tuple(ts))
        finally:
            _tracking.stack.pop()
        return tan if isinstance(tan, tuple) else (tan,)

    # `func` may call requires_grad_() (hessian's inner Jacobian does): torch's legacy vmap under its
    # vectorized Jacobians lets it (NOTE [ Refusals inside a transform ] in _batched.py)
    _grad_state.func_requires_grad_ok += 1
    try:
        cols = vmap(push)(*tangents)  # per output: (total, *output shape)
    finally:
        _grad_state.func_requires_grad_ok -= 1
    outs = func(*inputs)
    is_tuple = isinstance(outs, tuple)
    outs = outs if is_tuple else (outs,)
    result = []
    for c, o in zip(cols, outs):
        blocks, start = [], 0
        nd = o.dim()
        for x, n in zip(inputs, sizes):
            part = c.narrow(0, start, n).reshape(tuple(x.shape) + tuple(o.shape))
            blocks.append(part.permute(*range(x.dim(), x.dim() + nd), *range(x.dim())))
            start += n
        result.append(tuple(blocks))
    return is_tuple, tuple(result)
