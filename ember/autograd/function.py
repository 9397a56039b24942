"""Custom autograd Functions: `class F(ember.autograd.Function)` with static forward and backward.

As in torch, the `ctx` a forward receives *is* the backward node: an instance of a class made per Function
subclass and named `<Name>Backward` (`MyFnBackward`), which subclasses `BackwardCFunction` (a Node) and
`FunctionCtx` (what forward may call: save_for_backward, mark_dirty, mark_non_differentiable,
set_materialize_grads). `F.apply(*args)`:

1. runs `forward(ctx, *args)` with grad mode off (or, in the `setup_context` style, `forward(*args)`
   and then `setup_context(ctx, inputs, output)`);
2. if grad mode is on and a tensor input requires grad, makes ctx the grad_fn of the float outputs
   (minus those marked non-differentiable); an input returned as is comes back as a view of it, an
   input marked dirty keeps its identity and gets its history rewritten;
3. turns what was given to `save_for_backward` into saved tensors, which check their version on
   `ctx.saved_tensors` like any other saved tensor.

In backward, `ctx.backward(*grads)` runs the user's backward (or vjp), then checks its results as torch
does: the count, None for non-tensor inputs, shapes (broadcastable results are summed down) and dtypes.
"""

import functools
import threading
import warnings

from .. import _dtypes
from .._dispatch import HIGHER_ORDER, defop, dispatch_higher_order
from .._tensor import Tensor, _version_counter
from .grad_mode import state as _grad_state
from .graph import Node, SavedTensor, fit_grads, grad_edge

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
           "NestedIOFunction"]


class FunctionCtx:
    """What `forward` (or `setup_context`) may do with `ctx`."""

    __module__ = "ember.autograd.function"

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for backward; read them back with `ctx.saved_tensors`."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors (or None) for `jvp` (forward-mode AD), where `ctx.saved_tensors` reads them back."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Declare the input tensors that forward modified in place."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        warnings.warn("mark_shared_storage is deprecated. Tensors with shared storages are automatically tracked. "
                      "Note that calls to `set_()` are not tracked", DeprecationWarning, stacklevel=2)

    def mark_non_differentiable(self, *args):
        """Declare outputs that get no gradient (they will not require grad)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Whether gradients that never arrived are passed to backward as zeros (default) or None."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """Base of the per-Function node classes (`MyFnBackward`); instances are both ctx and node."""

    __module__ = "ember.autograd.function"
    _forward_cls = None
    materialize_grads = True
    to_save = ()
    non_differentiable = ()
    dirty_tensors = ()
    _saved = None
    _n_inputs = 0
    _fn_out_meta = ()  # per output (shape, numpy dtype), to materialize missing gradients as zeros
    _input_meta = ()  # per forward input: (shape, numpy dtype) for tensors that require grad, else None

    def __repr__(self):
        return object.__repr__(self)

    @property
    def saved_tensors(self):
        if self.__dict__.get("_in_jvp"):  # inside `jvp`: what forward saved with save_for_forward
            return tuple(self.__dict__.get("saved_for_forward", ()))
        saved = self._saved
        if saved is None:
            if self.__dict__.get("_released"):
                from .graph import _FREED

                raise RuntimeError(_FREED)
            return tuple(self.to_save)  # inside forward/setup_context, before they are packed
        return tuple(s.unpack(self, nr) if type(s) is SavedTensor else s for s, nr in saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def apply(self, grads):
        cls = self._forward_cls
        backward_fn, vjp_fn = cls.backward, cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                               "You should only implement one of them.")
        user_fn = vjp_fn if vjp_fn is not Function.vjp else backward_fn
        if self.materialize_grads:
            grads = tuple(_zeros(meta) if g is None else g for g, meta in zip(grads, self._fn_out_meta))
        res = user_fn(self, *grads)
        return self._check_grads(res if type(res) is tuple else (res,))

    def _check_grads(self, res):
        name, n = type(self).__name__, self._n_inputs
        if len(res) != n:
            if len(res) < n or any(r is not None for r in res[n:]):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, "
                                   f"got {len(res)})")
            res = res[:n]
        for i, (g, meta) in enumerate(zip(res, self._input_meta)):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if meta is False:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                   "but the corresponding forward input was not a Variable")
            if meta is not None and not _expandable(meta[0], tuple(g.shape)):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                                   f"{list(g.shape)} but expected shape compatible with {list(meta[0])}")
        return fit_grads(res, self._input_meta)  # non-tensor inputs (False) have no edge

    def release(self):
        self._saved = None
        self.to_save = ()
        self._released = True


def _zeros(meta):
    from .._ops.creation import zeros

    shape, dt = meta  # dt is None for an output that was not a tensor: a float64 zero, as before
    return zeros(shape, dtype=_dtypes.float64 if dt is None else _dtypes.from_numpy(dt))


def _expandable(shape, to):
    """Whether `shape` broadcasts to `to` (then a gradient of shape `to` sums down to `shape`)."""
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


class FunctionMeta(type):
    """Makes, for each Function subclass `F`, its node class `FBackward`."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,),
                            {"_forward_cls": cls, "__module__": "ember.autograd.function",
                             "__qualname__": name + "Backward"})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd operations (also `ember.autograd.Function`).

    Example::

        >>> class Exp(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = i.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         result, = ctx.saved_tensors
        ...         return grad_output * result
        >>> y = Exp.apply(x)
    """

    __module__ = "ember.autograd.function"

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      "so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch."
            "autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward  # vjp and backward are aliases of each other; a subclass defines one

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    generate_vmap_rule = False  # NOTE [ Custom Functions under vmap ] in ember/func/_rules.py

    @staticmethod
    def vmap(info, in_dims, *args):
        """How the Function runs under `ember.func.vmap`: `info` (batch_size, randomness), each argument's batch
        dim (None: not batched or not a tensor), the arguments; returns (outputs, out_dims). Override it, or
        set `generate_vmap_rule = True` (not both)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function: one dispatched higher-order op, `autograd_function_apply` (NOTE [ Higher-order
        ops ] in _dispatch.py), whose inputs are the tensor arguments and whose params are the Function,
        the other arguments (with `_TENSOR` where each tensor goes) and the keyword arguments."""
        if _grad_state.func_transforms and cls.setup_context is Function.setup_context:  # (V) as torch's
            raise RuntimeError(SETUP_CONTEXT_REQUIRED)
        tensors = tuple(a for a in args if isinstance(a, Tensor))
        if len(tensors) == len(args):
            return dispatch_higher_order(_function_apply, tensors, (cls, None, kwargs))
        template = tuple(_TENSOR if isinstance(a, Tensor) else a for a in args)
        return dispatch_higher_order(_function_apply, tensors, (cls, template, kwargs))


_TENSOR = object()  # where a tensor argument goes in Function.apply's template

# torch's refusal of a Function without setup_context inside ember.func's transforms (NOTE [ Refusals inside a
# transform ] in ember/func/_batched.py); nn.Module's full backward hooks, an old-style Function in torch, too
SETUP_CONTEXT_REQUIRED = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must "
    "override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


def _apply_kernel(*rest):
    """The higher-order op's body: rebuild the arguments and run the Function (steps 1-3 of the module
    docstring)."""
    *tensors, cls, template, kwargs = rest
    if template is None:
        args = tuple(tensors)
    else:
        it = iter(tensors)
        args = tuple(next(it) if a is _TENSOR else a for a in template)
    return _apply(cls, args, kwargs)


_function_apply = defop("autograd_function_apply", None, HIGHER_ORDER)(_apply_kernel)


def _apply(cls, args, kwargs):
    ctx = cls._backward_cls()
    ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    prev = _grad_state.enabled
    _grad_state.enabled = False
    try:
        if cls.setup_context is not Function.setup_context:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    finally:
        _grad_state.enabled = prev
    if prev and any(ctx.needs_input_grad):
        output = _connect(ctx, args, output)
    if _last.waiting:
        _last.ctx = ctx  # for forward-mode AD's call of `jvp` (ember/autograd/_jvp.py, function_apply)
    return output


class _Last(threading.local):
    # Kept only while forward AD waits for it: a node kept after every call would keep the last Function's
    # saved tensors (and a compiled graph's fake tensors, with their dispatch hook) alive for good.
    waiting = False
    ctx = None


_last = _Last()


def _input_meta(a):
    if not isinstance(a, Tensor):
        return False  # a gradient for it must be None
    return _meta(a) if a._requires_grad else None


def _meta(t):
    """(shape, NumPy dtype): the per-input metadata `graph.fit_grads` reads."""
    return tuple(t.shape), _dtypes.to_numpy(t.dtype)


def _connect(ctx, args, output):
    """Make ctx the grad_fn of the outputs and pack its saved tensors (steps 2 and 3 of the docstring)."""
    ctx.next_functions = tuple(grad_edge(a) for a in args if isinstance(a, Tensor))  # tensors only, as torch
    ctx._n_inputs = len(args)
    ctx._input_meta = tuple(_input_meta(a) for a in args)
    single = not isinstance(output, (tuple, list))
    outs = [output] if single else list(output)
    dirty = {id(t) for t in ctx.dirty_tensors}
    nondiff = {id(t) for t in ctx.non_differentiable}
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            continue
        if id(o) in dirty:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            _version_counter(o)[0] += 1
        elif id(o) in inputs:
            o = outs[i] = o.view_as(o)  # an input returned as is comes back as a view (grad mode is on here)
        if id(o) in nondiff or not (o.is_floating_point() or o.is_complex()):
            if id(o) in nondiff:
                o._grad_fn, o._requires_grad = None, False
            continue
        o._grad_fn, o._requires_grad, o._output_nr = ctx, True, i
    ctx._n_outputs = len(outs)
    ctx._fn_out_meta = tuple(_meta(o) if isinstance(o, Tensor) else ((), None) for o in outs)
    out_ids = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
    saved = []
    for t in ctx.to_save:
        if t is None:
            saved.append((None, 0))
        elif id(t) in out_ids and t._grad_fn is ctx:
            saved.append((SavedTensor(t, True), out_ids[id(t)]))
        else:
            saved.append((SavedTensor(t), 0))
    ctx._saved = saved
    ctx.to_save = ()
    if single:
        return outs[0]
    return type(output)(outs)


# ---- once_differentiable -----------------------------------------------------------------------------


class DelayedError(Node):
    """Stands for a backward that cannot be differentiated; raises only if a gradient reaches it."""

    __module__ = "builtins"  # a C type in torch: <class 'DelayedError'>

    def __init__(self, msg, edges):
        super().__init__()
        self.msg = msg
        self.next_functions = tuple(edges)

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Decorator for a custom Function's backward that is not itself differentiable: it runs with grad
    mode off, and differentiating its result (create_graph=True) raises when it is attempted."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _grad_state.enabled
        _grad_state.enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _grad_state.enabled = prev
        if not prev:
            return outputs
        needs = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not needs:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        err = DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                           [grad_edge(a) for a in needs])
        fixed = []
        for o in outs:
            if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex()):
                o = o.detach()
                o._grad_fn, o._requires_grad = err, True
            fixed.append(o)
        return fixed[0] if single else tuple(fixed)
    return wrapper


class InplaceFunction(Function):
    """A Function with an `inplace` flag (torch keeps it for old code)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# ---- NestedIOFunction: torch's legacy class, kept for old code that names it -----------------------------------


def _iter_tensors(obj):
    """The tensors of a nested structure of tuples, lists and dicts, in order."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _iter_tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _iter_tensors(o)


def _unflatten(flat, proto):
    """A flat sequence put back into the nested tuple/list structure of `proto`."""
    return _unflatten_rest(flat, proto)[0]


def _unflatten_rest(flat, proto):
    """(`proto`'s structure filled from the front of `flat`, what is left of `flat`)."""
    if not isinstance(proto, (list, tuple)):
        return flat[0], flat[1:]
    res = []
    for e in proto:
        if e is None:
            res.append(e)
        else:
            r, flat = _unflatten_rest(flat, e)
            res.append(r)
    return type(proto)(res), flat


class NestedIOFunction(Function):
    """This class is here only for backward compatibility reasons. Use :class:`Function` instead.

    Its methods are torch's: like torch 2.13's, an instance call reaches the `_do_forward` that `Function` no
    longer has (an AttributeError), so the class only serves code that names or subclasses it.
    """

    def _do_forward(self, *input):
        self._nested_input = input
        flat_output = super()._do_forward(*tuple(_iter_tensors(input)))
        return _unflatten(flat_output, self._nested_output)

    def _do_backward(self, gradients, retain_variables):
        self.retain_variables = retain_variables
        result = super()._do_backward(gradients, retain_variables)
        if not retain_variables:
            del self._nested_output
            del self._to_save_nested
        return result

    def backward(self, *gradients):
        result = self.backward_extended(*_unflatten(gradients, self._nested_output))
        return tuple(None if r is None else r for r in _iter_tensors(result))

    __call__ = _do_forward

    def forward(self, *args):
        result = self.forward_extended(*self._nested_input)
        del self._nested_input
        self._nested_output = result
        return tuple(_iter_tensors(result))

    def save_for_backward(self, *args):
        self.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _unflatten(super().saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_iter_tensors((args, kwargs)))

    def forward_extended(self, *input):
        """User defined forward."""
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        """User defined backward."""
        raise NotImplementedError
