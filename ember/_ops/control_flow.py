"""torch.cond, the control-flow operator, run eagerly: one higher-order op (`cond`) whose body calls the branch
the predicate picks (NOTE [ Higher-order ops ] in _dispatch.py), so modes see it and then the branch's ops.

NOTE [ Eager cond ]
torch runs a tensor-predicate `cond` through torch.compile, tracing both branches: a branch that mutates or
returns an operand, or branches whose outputs differ in structure or metadata, are refused at tracing time,
and the result's grad_fn is a `CondAutogradOpBackward`. Eagerly ember checks the arguments as torch does,
then runs only the chosen branch, whose own ops are recorded for autograd (the same gradients, under the
branch's own node names). Under a tracer with a fake predicate it is one graph node (NOTE [ cond under a
tracer ] below); the both-branch checks of torch's tracing are not made.
"""

from .._dispatch import HIGHER_ORDER, defop, dispatch_higher_order
from .._meta import no_data
from .._tensor import Tensor
from ._util import public


def _leaves(obj, out):
    """Append the leaves of a nested dict/list/tuple to `out`; False if one is not a tensor."""
    if isinstance(obj, (list, tuple)):
        return all([_leaves(o, out) for o in obj])
    if isinstance(obj, dict):
        return all([_leaves(o, out) for o in obj.values()])
    out.append(obj)
    return isinstance(obj, Tensor)


class _Leaf:
    """Where a tensor goes in the operands' template (an op's params hold no tensors)."""

    def __repr__(self):
        return "<tensor>"


_LEAF = _Leaf()


def _template(obj):
    if isinstance(obj, (list, tuple)):
        items = [_template(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return {k: _template(v) for k, v in obj.items()}
    return _LEAF


def _rebuild(proto, it):
    if isinstance(proto, (list, tuple)):
        items = [_rebuild(p, it) for p in proto]
        return type(proto)(*items) if hasattr(proto, "_fields") else type(proto)(items)
    if isinstance(proto, dict):
        return {k: _rebuild(v, it) for k, v in proto.items()}
    return next(it)


def _cond_kernel(pred, *rest):
    *leaves, true_fn, false_fn, operands = rest
    args = _rebuild(operands, iter(leaves))
    if isinstance(pred, Tensor) and no_data(pred) and not pred.is_meta:  # a fake predicate has no value: both
        out = true_fn(*args)  # branches run, as torch's cond traces both (a meta one refuses, as torch's does)
        false_fn(*args)
        return out
    return (true_fn if bool(pred) else false_fn)(*args)


_cond = defop("cond", "CondAutogradOpBackward", HIGHER_ORDER)(_cond_kernel)


# NOTE [ cond under a tracer ]
# With a predicate that has no value (a fake tensor), neither branch can be chosen while tracing: a tracer
# records the whole `cond` as one node (a higher-order op with a meta rule: fx/experimental/proxy_tensor.py),
# which picks its branch when the graph runs. The rule gives the outputs' metadata from a branch run on the
# fakes. The node's derivative is again a `cond`, of the branches' vector-Jacobian products (each runs its
# branch again with grad on and differentiates it): one node again, choosing at run time. (torch's
# CondAutogradOp keeps both branches' backward graphs instead; the gradients are the same.) The graph holds
# the user's branch functions as params.
@_cond.meta_
def _(pred, *rest):
    *leaves, true_fn, false_fn, operands = rest
    from ..autograd.grad_mode import no_grad

    with no_grad():
        return _cond_kernel(pred, *leaves, true_fn, false_fn, operands)


@_cond.derivative_
def _(grads, pred, *rest):
    *leaves, true_fn, false_fn, operands = rest
    grads = grads if type(grads) is tuple else (grads,)
    want = [i for i, t in enumerate(leaves) if t.is_floating_point() or t.is_complex()]
    flat = tuple(leaves) + tuple(grads)
    got = dispatch_higher_order(_cond, (pred, *flat), (_vjp(true_fn, operands, leaves, want),
                                                       _vjp(false_fn, operands, leaves, want), (_LEAF,) * len(flat)))
    got = got if isinstance(got, (tuple, list)) else (got,)
    out = [None] * len(leaves)
    for i, g in zip(want, got):
        out[i] = g
    return (None,) + tuple(out)


class _vjp:
    """A branch's vector-Jacobian product as a function of (leaves..., output gradients...): the branch run
    again with grad on and differentiated (a cond of these is cond's backward). An object, not a closure, so
    a graph holding it prints it as a constant."""

    def __init__(self, fn, operands, leaves, want):
        self.fn, self.operands, self.n, self.want = fn, operands, len(leaves), want

    def __call__(self, *flat):
        from ..autograd import enable_grad, grad

        n, want = self.n, self.want
        with enable_grad():
            xs = [t.detach().requires_grad_(i in want) for i, t in enumerate(flat[:n])]
            outs = []
            _leaves(self.fn(*_rebuild(self.operands, iter(xs))), outs)
            pairs = [(o, g) for o, g in zip(outs, flat[n:]) if isinstance(o, Tensor) and o.requires_grad]
            xs_want = [xs[i] for i in want]
            got = grad([o for o, _ in pairs], xs_want, [g for _, g in pairs], allow_unused=True) \
                if pairs else [None] * len(xs_want)
        return tuple(g if g is not None else x.new_zeros(tuple(x.shape)) for g, x in zip(got, xs_want))


def cond(pred, true_fn, false_fn, operands=()):
    """Run `true_fn(*operands)` if `pred` is true, else `false_fn(*operands)` (see NOTE [ Eager cond ]).

    Args:
        pred: a Python bool or a one-element tensor.
        true_fn, false_fn: callables taking the operands and returning tensors.
        operands: a tuple (or list) of tensors, possibly nested in dicts, lists and tuples.
    """
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    leaves = []
    if not isinstance(operands, (tuple, list)) or not _leaves(operands, leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return dispatch_higher_order(_cond, (pred, *leaves), (true_fn, false_fn, _template(operands)))


public["cond"] = cond
