"""The autograd graph: Nodes, saved tensors, AccumulateGrad, and how ops record themselves.

Each differentiable op output points to a Node (`grad_fn`) whose `next_functions` are `(Node, input_nr)`
pairs, one per op input, exactly as torch shows them: `(None, 0)` for an input that needs no gradient and
an `AccumulateGrad` node for a leaf that does. Node classes are made per op and named as torch names them
(`MulBackward0`), so `type(y.grad_fn).__name__` and its repr read like torch's.
"""

import itertools
import weakref
from collections import OrderedDict

from .._tensor import Tensor, _version_counter, _wrap
from .grad_mode import state as _grad_state

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

_seq = itertools.count()


class RemovableHandle:
    """Returned by every register_*hook; `remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(holder, attr, fn):
    d = getattr(holder, attr)
    if d is None:
        d = OrderedDict()  # weakref-able, unlike a plain dict (RemovableHandle holds it weakly)
        setattr(holder, attr, d)
    h = RemovableHandle(d)
    d[h.id] = fn
    return h


class Node:
    """A step of the backward graph (torch.autograd.graph.Node)."""

    __module__ = "ember.autograd.graph"
    next_functions = ()
    _pre_hooks = None  # fn(grad_outputs) -> new grad_outputs or None
    _hooks = None  # fn(grad_inputs, grad_outputs) -> new grad_inputs or None
    _tensor_pre_hooks = None  # {output_nr: {id: fn(grad)}}: hooks of the non-leaf tensors it produced
    _retains = None  # {output_nr: weakref to a tensor that retains its grad}
    _anomaly_trace = None

    def __init__(self):
        self._seq = next(_seq)
        self.metadata = {}

    def name(self):
        return type(self).__name__

    def register_hook(self, fn):
        return _add_hook(self, "_hooks", fn)

    def register_prehook(self, fn):
        return _add_hook(self, "_pre_hooks", fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        d = self._tensor_pre_hooks.setdefault(output_nr, OrderedDict())
        h = RemovableHandle(d)
        d[h.id] = fn
        return h

    def _sequence_nr(self):
        return self._seq

    def __call__(self, *grads):
        return self.apply(grads)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class SavedTensor:
    """A tensor saved for backward, with the version it had so in-place changes are caught.

    An op's own output is saved without its grad_fn (that would be a reference cycle) and given the
    node back when unpacked, as torch's SavedVariable does.
    """

    __slots__ = ("tensor", "version", "is_output", "packed", "unpack_hook")

    def __init__(self, t, is_output=False):
        if t._is_inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. To work around you can make a clone to get "
                "a normal tensor and use it in autograd.")
        vc = _version_counter(t)
        self.version = vc[0]
        self.is_output = is_output
        if is_output:
            alias = _wrap(t._data)
            alias._vc = vc
            alias._base = t._base
            t = alias
        if _saved_hooks:
            pack, unpack = _saved_hooks[-1]
            self.tensor = None
            self.packed = pack(t)
            self.unpack_hook = unpack
        else:
            self.tensor = t
            self.unpack_hook = None

    def unpack(self, node, output_nr=0):
        if self.unpack_hook is not None:
            t = self.unpack_hook(self.packed)
            return self._as_output(t, node, output_nr) if self.is_output else t
        t = self.tensor
        if t is None:
            raise RuntimeError(_FREED)
        v = t._vc[0]
        if v != self.version:
            raise RuntimeError(_version_error(t, node, output_nr, v, self.version))
        return self._as_output(t, node, output_nr) if self.is_output else t

    def _as_output(self, t, node, output_nr):
        if not _grad_state.enabled:
            return t
        out = _wrap(t._data)
        out._vc, out._base = t._vc, t._base
        out._grad_fn, out._requires_grad, out._output_nr = node, True, output_nr
        return out

    def release(self):
        self.tensor = None
        self.packed = None


_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


def _type_name(t):
    from .._tensor_str import legacy_type_name

    return legacy_type_name(t)


def _version_error(t, node, output_nr, now, expected):
    where = ""
    if t._grad_fn is not None or getattr(t, "_saved_from", None) is not None:
        name = type(node).__name__ if t._grad_fn is None else type(t._grad_fn).__name__
        where = f", which is output {output_nr} of {name}"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{_type_name(t)} [{', '.join(map(str, t._data.shape))}]]{where}, is at version {now}; expected "
        f"version {expected} instead. Hint: enable anomaly detection to find the operation that failed to "
        "compute its gradient, with ember.autograd.set_detect_anomaly(True).")


class TensorMeta:
    """What a shape-only derivative (views, sum, expand) keeps of an input: not its data."""

    __slots__ = ("shape", "dtype")

    def __init__(self, t):
        self.shape = t.shape
        self.dtype = t.dtype

    def dim(self):
        return len(self.shape)

    def numel(self):
        return self.shape.numel()

    def size(self, d=None):
        return self.shape if d is None else self.shape[d]

    @property
    def ndim(self):
        return len(self.shape)


# ---- saved-tensor hooks ------------------------------------------------------------------------------

_saved_hooks = []


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through `pack_hook` and come back through
    `unpack_hook` (the mechanism under activation checkpointing and offloading)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_hooks_msg:
            raise RuntimeError(_disabled_hooks_msg[-1])
        _saved_hooks.append((self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc):
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are copied off the device; on a CPU-only ember a copy is all it means."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


_disabled_hooks_msg = []


class disable_saved_tensors_hooks:
    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _disabled_hooks_msg.append(self.error_message)

    def __exit__(self, *exc):
        _disabled_hooks_msg.pop()


# ---- op nodes ----------------------------------------------------------------------------------------


class OpNode(Node):
    """The backward node of a dispatched op: calls the op's derivative on the saved inputs."""

    _op = None
    _saved = ()
    _params = ()
    _out = None
    _out_meta = None  # per output (shape, dtype) of a multi-output op, to fill grads that never came
    _in_meta = ()  # per input: (shape, numpy dtype) or None, to reduce broadcast grads and cast them
    _freed = False

    def apply(self, grads):
        op = self._op
        inputs = [s.unpack(self) if type(s) is SavedTensor else s for s in self._saved]
        g = grads[0] if len(grads) == 1 else grads
        if op.save_output:
            out = self._out
            if out is None:
                raise RuntimeError(_FREED)
            if type(out) is tuple:
                out = tuple(o.unpack(self, i) for i, o in enumerate(out))
            else:
                out = out.unpack(self)
            res = op.derivative(g, *inputs, *self._params, out=out)
        else:
            res = op.derivative(g, *inputs, *self._params)
        if type(res) is not tuple:
            res = (res,)
        return fit_grads(res, self._in_meta)

    def release(self):
        for s in self._saved:
            if type(s) is SavedTensor:
                s.release()
        if self._out is not None:
            for o in (self._out if type(self._out) is tuple else (self._out,)):
                o.release()


def fit_grads(res, metas):
    """Reduce each input grad to its input's shape (undoing broadcasting) and dtype."""
    out = []
    for g, meta in zip(res, metas):
        if g is not None and meta is not None:
            shape, dt = meta
            if g._data.shape != shape:
                g = g.sum_to_size(shape) if len(shape) else g.sum()
                if g._data.shape != shape:
                    g = g.reshape(shape)
            if g._data.dtype != dt:
                g = g.to(_dtype_of(dt))
        out.append(g)
    return tuple(out)


def _dtype_of(np_dtype):
    from .. import _dtypes

    return _dtypes.from_numpy(np_dtype)


def make_node_class(op):
    return type(op.node_name, (OpNode,), {"_op": op, "__module__": "ember.autograd.graph",
                                           "__qualname__": op.node_name})


class AccumulateGrad(Node):
    """Sink of a leaf that requires grad: adds incoming gradients into `variable.grad`."""

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        self._seq = 2**62  # torch gives it UINT64_MAX: it runs as soon as it is ready

    def apply(self, grads):
        return ()


def grad_edge(t):
    """The (Node, input_nr) a gradient for tensor `t` flows into."""
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if not t._requires_grad:
        return (None, 0)
    ref = t._acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._acc = weakref.ref(node)
    return (node, 0)


def record(op, inputs, params, result):
    """Attach a new backward node of `op` to `result`; called by the dispatcher when grads are needed."""
    if op.node_cls is None:
        raise RuntimeError(f"the derivative for '{op.name}' is not implemented.")
    node = op.node_cls()
    edges = []
    metas = []
    for t in inputs:
        if isinstance(t, Tensor) and t._requires_grad:
            edges.append(grad_edge(t))
            metas.append((t._data.shape, t._data.dtype))
        else:
            edges.append((None, 0))
            metas.append(None)
    node.next_functions = tuple(edges)
    node._in_meta = tuple(metas)
    if op.saves == "all":
        node._saved = tuple(SavedTensor(t) if isinstance(t, Tensor) else t for t in inputs)
    elif op.saves == "meta":
        node._saved = tuple(TensorMeta(t) if isinstance(t, Tensor) else t for t in inputs)
    else:
        node._saved = tuple(None if isinstance(t, Tensor) else t for t in inputs)
    node._params = params
    outs = result if type(result) is tuple else (result,)
    if len(outs) > 1:
        node._out_meta = tuple((o._data.shape, o._data.dtype) for o in outs)
    for i, o in enumerate(outs):
        if o._data.dtype.kind in "fc" or o._data.dtype.name == "bfloat16":
            o._grad_fn = node
            o._requires_grad = True
            o._output_nr = i
    if op.save_output:
        saved = tuple(SavedTensor(o, True) for o in outs)
        node._out = saved if type(result) is tuple else saved[0]
    if _anomaly[0]:
        from .anomaly_mode import capture_trace

        node._anomaly_trace = capture_trace()
    return node


_anomaly = [False]


# ---- in-place ops --------------------------------------------------------------------------------------


def check_inplace(t, recording):
    """torch's refusals for in-place ops on tensors autograd depends on."""
    if t._is_inference and not _grad_state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
            "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
            "for more details.")
    if not _grad_state.enabled:
        return
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_history(op, self, inputs, params, old_data):
    """After `self.op_(...)` wrote its result into self: make self's (or its base's) grad_fn the new node.

    The node sees the old self as its first input. Its value was overwritten, so when the derivative
    needs input values, `old_data` is a copy taken before the write. For a view whose base takes part in
    autograd, the base's history is rewritten instead (see NOTE [ CopySlices ]).
    """
    base = self._base
    if base is not None and (base._requires_grad or self._requires_grad):
        from .copy_slices import rebase_view

        rebase_view(op, self, inputs, params, old_data)
        return
    old = _wrap(old_data if old_data is not None else self._data)
    old._grad_fn, old._requires_grad, old._output_nr = self._grad_fn, self._requires_grad, self._output_nr
    old._acc = self._acc
    old._vc = [0]
    record(op, (old,) + tuple(inputs[1:]), params, self)
