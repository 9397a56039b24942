"""The autograd graph: Nodes, saved tensors, AccumulateGrad, and how ops record themselves.

Each differentiable op output points to a Node (`grad_fn`) whose `next_functions` are `(Node, input_nr)`
pairs, one per op input, exactly as torch shows them: `(None, 0)` for an input that needs no gradient and
an `AccumulateGrad` node for a leaf that does. Node classes are made per op and named as torch names them
(`MulBackward0`), so `type(y.grad_fn).__name__` and its repr read like torch's.

Also here: saved-tensor hooks (`saved_tensors_hooks`, `save_on_cpu`), the in-place checks and history
rewriting the dispatcher calls, and (re-exported from graph_print.py) the graph printers `format_graph`,
`print_graph`, `to_dot` and `save_graph`.

NOTE [ Recording is the hot path ]
`record` runs once per differentiable op call while grad mode is on, so it avoids everything optional:
no per-node dict (`metadata` is made on first access), one pass over the inputs, no isinstance where a
`type() is` test will do, no object per saved input (the tensor and its version go in two tuples), and
for the commonest call, a pointwise op on one or two tensors, a direct path that builds the tuples in
place. Every object a node keeps alive is also one more for the garbage collector to walk, which a
graph of tiny ops feels. A chain of tiny ops spends most of its autograd time here and in the engine
loop; see benchmarks/autograd_overhead.py.
"""

import copy
import itertools
import re
import threading
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from .. import _dispatch
from .._argparse import call_error
from .._naming import named
from .._tensor import Tensor, _version_counter, _wrap
from .grad_mode import state as _grad_state

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "increment_version", "format_graph", "print_graph", "to_dot", "save_graph", "GradientEdge",
           "get_gradient_edge",
           "allow_mutation_on_saved_tensors", "region_activation_memory_budget",
           "set_warn_on_accumulate_grad_stream_mismatch", "set_override_stale_capture_stream",
           "saved_tensors_bytes"]

_seq = itertools.count()
_NO_EDGE = (None, 0)
_new = _new_saved = object.__new__


class RemovableHandle:
    """A handle which provides the capability to remove a hook: returned by every register_*hook.

    The one class of `ember.utils.hooks.RemovableHandle` (autograd, nn.Module and optimizer hooks all use
    it); it lives here, at the bottom of the layers that use it.

    Args:
        hooks_dict (dict): the hooks, by handle ``id``.
        extra_dict (dict or list of dicts): more dictionaries whose ``id`` key is removed with it.
    """

    __module__ = "ember.utils.hooks"
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])  # (dead if None)
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = () if len(state) < 3 or state[2] is None else \
            tuple(weakref.ref(d) for d in state[2])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(holder, attr, fn):
    if isinstance(holder, Node):
        holder._has_extras = True
    d = getattr(holder, attr)
    if d is None:
        d = OrderedDict()  # weak-referenceable, unlike dict: handles hold it weakly
        setattr(holder, attr, d)
    h = RemovableHandle(d)
    d[h.id] = fn
    return h


# NOTE [ Node fields ]
# Node classes are made per op (so they print as torch's do), which leaves every attribute read in the
# engine seeing many types: CPython cannot specialize those reads and each costs a generic lookup. So the
# engine reads as few as it can per node: the five rarely set fields (the hook tables, retained grads,
# per-output metadata) are summed up by one flag, `_has_extras`, which whoever sets one of them also sets.

class Node:
    """A step of the backward graph (torch.autograd.graph.Node).

    `apply(grads)` maps the gradients of the node's outputs (a tuple, one per output, None where none
    arrived) to the gradients of its inputs, one per entry of `next_functions`.
    """

    __module__ = "ember.autograd.graph"
    next_functions = ()
    _pre_hooks = None  # fn(grad_outputs) -> new grad_outputs or None
    _hooks = None  # fn(grad_inputs, grad_outputs) -> new grad_inputs or None
    _tensor_pre_hooks = None  # {output_nr: {id: fn(grad)}}: hooks of the non-leaf tensors it produced
    _retains = None  # {output_nr: weakref to a tensor that retains its grad}
    _anomaly_trace = None
    _anomaly_parent = None
    _n_outputs = 1
    _out_meta = None  # per output (shape, dtype) where a missing gradient must become zeros
    _has_extras = False  # any of the five above that default to None is set: see NOTE [ Node fields ]

    def __init__(self):
        self._seq = next(_seq)

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self._metadata = {}
        return d

    def name(self):
        return type(self).__name__

    def register_hook(self, fn):
        """`fn(grad_inputs, grad_outputs)` runs after the node; it may return replacement grad_inputs."""
        return _add_hook(self, "_hooks", fn)

    def register_prehook(self, fn):
        """`fn(grad_outputs)` runs before the node; it may return replacement grad_outputs."""
        return _add_hook(self, "_pre_hooks", fn)

    def _register_tensor_hook(self, output_nr, fn):
        self._has_extras = True
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        d = self._tensor_pre_hooks.setdefault(output_nr, OrderedDict())
        h = RemovableHandle(d)
        d[h.id] = fn
        return h

    def _sequence_nr(self):
        return self._seq

    def release(self):
        """Free what the node saved (the engine calls it after running unless retain_graph)."""

    def _run(self, grads, free):
        """The engine's call: `apply`, then, when `free` (no retain_graph), `release`. OpNode does both in
        one go; see NOTE [ Node fields ]."""
        res = self.apply(grads)
        if free:
            self.release()
        return res

    def __call__(self, *grads):
        return self.apply(grads)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


# ---- saved tensors -----------------------------------------------------------------------------------


def _alias(t):
    """A new wrapper over `t`'s payload: a plain tensor, or, for a tensor subclass that says how
    (`_saved_alias`: a fake tensor stays a fake of its mode), one of its class. See NOTE [ Saved subclass
    outputs ]."""
    if type(t) is not Tensor:
        hook = getattr(type(t), "_saved_alias", None)
        if hook is not None:
            return hook(t)
    return _wrap(t._data)


# NOTE [ Saved subclass outputs ]
# An op's output saved for its backward is kept as its payload and rebuilt into a tensor on unpack. A plain
# rebuild turns a FakeTensor output into a plain tensor over a meta payload, whose device is "meta": a formula
# that makes a constant on its device (`eye(n, device=L.device)`) would then make a meta tensor no mode sees
# (so no tracer records it). Outputs of a tensor subclass come only from modes below autograd (`_run_below`),
# which hands them to `keep_subclass`: they are saved as SavedTensors whose alias keeps the subclass.


def keep_subclass(result):
    """The single output `result` of a subclass was just recorded: save it keeping its class."""
    node = result._grad_fn
    if node is not None and getattr(node, "_out", None) is not None and type(node._out) is not SavedTensor:
        node._out = SavedTensor(result, True)


class SavedTensor:
    """A tensor saved for backward, with the version it had so in-place changes are caught.

    An op's own output is saved without its grad_fn (that would be a reference cycle) and given the
    node back when unpacked, as torch's SavedVariable does.
    """

    __slots__ = ("tensor", "version", "is_output", "packed", "unpack_hook", "history")

    def __init__(self, t, is_output=False):
        if t._is_inference:
            raise RuntimeError(named(_INFERENCE_SAVED))
        vc = t._vc
        if vc is None:
            vc = _version_counter(t)
        self.version = vc[0]
        self.is_output = is_output
        if is_output:
            alias = _alias(t)
            alias._vc = vc
            if t._base is not None:
                alias._base = t._base
            t = alias
        self.unpack_hook = None
        if _saved_hooks and _hooks.stack:
            pack, unpack = _hooks.stack[-1]
            self.tensor = None
            # NOTE [ Hooks give back the saved tensor's history ]: as torch's SavedVariable, the tensor an
            # unpack hook returns is given the saved tensor's grad_fn (or, for a leaf, its AccumulateGrad)
            self.history = None
            if not is_output and t._requires_grad:
                self.history = (t._grad_fn, t._output_nr) if t._grad_fn is not None else (None, _leaf_node(t))
            hooks, _hooks.stack = _hooks.stack, []  # ops inside the pack hook save plainly (no recursion)
            try:
                self.packed = pack(t)
            finally:
                _hooks.stack = hooks
            self.unpack_hook = unpack
        else:
            self.tensor = t

    def unpack(self, node, output_nr=0):
        if self.unpack_hook is not None:
            if self.packed is None:
                raise RuntimeError(_FREED)
            t = self.unpack_hook(self.packed)
            if not isinstance(t, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                f"type {type(t).__name__}")
            if self.is_output:
                return self._as_output(t, node, output_nr)
            return self._with_history(t)
        t = self.tensor
        if t is None:
            raise RuntimeError(_FREED)
        v = t._vc[0]
        if v != self.version:
            fn = node if self.is_output else t.grad_fn  # a view's grad_fn as regenerated after the change
            raise RuntimeError(_version_error(t, fn, output_nr if self.is_output else t._output_nr, v, self.version))
        return self._as_output(t, node, output_nr) if self.is_output else t

    def _with_history(self, t):
        """What an unpack hook returned, as a fresh tensor carrying the saved tensor's history (NOTE [ Hooks
        give back the saved tensor's history ]): torch checkpoints nested regions through this."""
        out = _wrap(t._data)
        out._vc, out._base = _version_counter(t), t._base
        if self.history is not None:
            fn, nr = self.history
            out._requires_grad = True
            if fn is not None:
                out._grad_fn, out._output_nr = fn, nr
            else:
                out._acc = weakref.ref(nr)  # a leaf: gradients reach the saved leaf's AccumulateGrad
        return out

    def _as_output(self, t, node, output_nr):
        out = _alias(t)
        out._vc, out._base = t._vc, t._base
        if t._fw_grad is not None:  # the output's tangent, for forward-over-reverse (forward_ad.save_tangent)
            from .forward_ad import set_tangent

            set_tangent(out, t._fw_grad)
        d = t.dtype
        if d.is_floating_point or d.is_complex:  # an integer output (indices) never had a grad_fn
            out._grad_fn, out._requires_grad, out._output_nr = node, True, output_nr
        return out

    def release(self):
        self.tensor = None
        self.packed = None
        self.history = None


class SavedOutput:
    """An op's own single output saved for its backward (tanh, exp, sigmoid...), when no saved-tensor hooks
    are active: just the array, the shared version counter and the version it had. The tensor handed to the
    derivative is rebuilt on unpack and given the node as grad_fn, so no reference cycle is kept."""

    __slots__ = ("data", "vc", "version")

    def unpack(self, node, output_nr=0):
        d = self.data
        if d is None:
            raise RuntimeError(_FREED)
        out = _wrap(d)
        vc = out._vc = self.vc
        out._grad_fn, out._requires_grad = node, True
        if vc[0] != self.version:
            raise RuntimeError(_version_error(out, node, output_nr, vc[0], self.version))
        return out

    def release(self):
        self.data = None


class SavedDualOutput(SavedOutput):
    """A SavedOutput whose output has a tangent at the active dual level (forward-over-reverse: the backward
    formula's ops then see it, as torch's SavedVariable keeps the forward grad). `dual` holds the tangent on
    a tensor the level clears on exit."""

    __slots__ = ("dual",)

    def unpack(self, node, output_nr=0):
        out = SavedOutput.unpack(self, node, output_nr)
        if self.dual._fw_grad is not None:
            from .forward_ad import set_tangent

            set_tangent(out, self.dual._fw_grad)
        return out


_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `ember.no_grad()` instead of `ember.inference_mode()`.")

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


def _type_name(t):
    from .._tensor_str import legacy_type_name

    return legacy_type_name(t)


def short_name(node):
    """torch's short node name in error messages: `ExpBackward0` -> `Exp`, `MyFnBackward` -> `MyFn`."""
    return re.sub(r"Backward\d*$", "", type(node).__name__)


def _version_error(t, fn, output_nr, now, expected):
    where = f", which is output {output_nr} of {short_name(fn)}," if fn is not None else ""
    if _anomaly[0]:
        hint = ("Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
                "variable in question was changed in there or anywhere later. Good luck!")
    else:
        hint = named("Hint: enable anomaly detection to find the operation that failed to compute its "
                     "gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False).")
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[{_type_name(t)} [{', '.join(map(str, t.shape))}]]{where} is at version {now}; expected "
        f"version {expected} instead. {hint}")


def _raise_version_error(t, expected):
    """An input saved as itself was modified in place after it was saved (SavedTensor.unpack's check)."""
    raise RuntimeError(_version_error(t, t.grad_fn, t._output_nr, _version_counter(t)[0], expected))


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


def increment_version(tensor):
    """Bump the version counter of `tensor` (or of each tensor in a sequence), as an in-place op would."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        _version_counter(t)[0] += 1


# ---- saved-tensor hooks ------------------------------------------------------------------------------

# NOTE [ Saved-tensor hooks are per thread ]
# As torch's (SavedTensorDefaultHooksTLS), the hooks and the "disabled" messages are each thread's own.
# The hot path asks one question of one global list, `if _saved_hooks:`, which holds an entry per hooks
# context open in any thread; only when it is non-empty does the slow path look at this thread's stack (as
# the dispatcher's mode stack does, NOTE [ The mode stack ]).


class _ThreadHooks(threading.local):
    def __init__(self):
        self.stack = []  # this thread's (pack, unpack) pairs, innermost last
        self.disabled = []  # this thread's disable_saved_tensors_hooks messages


_hooks = _ThreadHooks()
_saved_hooks = []  # one entry per hooks context open in any thread (NOTE [ Saved-tensor hooks are per thread ])


def current_saved_hooks():
    """This thread's saved-tensor hooks, innermost last."""
    return _hooks.stack


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through `pack_hook` and come back through
    `unpack_hook` (the mechanism under activation checkpointing and offloading).

    Example::

        >>> with ember.autograd.graph.saved_tensors_hooks(lambda t: t.numpy().copy(), ember.from_numpy):
        ...     y = x.exp()
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks.disabled:
            raise RuntimeError(_hooks.disabled[-1])
        _hooks.stack.append((self.pack_hook, self.unpack_hook))
        _saved_hooks.append(None)
        return self

    def __exit__(self, *exc):
        _hooks.stack.pop()
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are copied off the device; on a CPU-only ember a copy is all it means."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)


class disable_saved_tensors_hooks:
    """Context manager (and decorator) under which `saved_tensors_hooks` raises `error_message`."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _hooks.disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _hooks.disabled.pop()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call `fn` once per backward after the gradients of all `tensors` (mode="all": fn gets the tuple
    of gradients, None for those not computed) or of the first of them (mode="any": fn gets that one)."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    from .engine import current_pass

    tensors = tuple(tensors)
    state = {}

    def make_hook(i):
        def hook(g):
            token = current_pass()
            if state.get("pass") != token:
                state.clear()
                state["pass"] = token
                state["grads"] = [None] * len(tensors)
                state["left"] = len(tensors)
                state["done"] = False
                if mode == "all":
                    from .engine import expected_count

                    state["left"] = expected_count(tensors)
            state["grads"][i] = g
            state["left"] -= 1
            if mode == "any" and not state["done"]:
                state["done"] = True
                fn(g)
            elif mode == "all" and state["left"] == 0:
                fn(tuple(state["grads"]))
        return hook

    handles = [t.register_hook(make_hook(i)) for i, t in enumerate(tensors) if t.requires_grad]
    return _MultiHandle(handles)


class _MultiHandle(RemovableHandle):
    def __init__(self, handles):  # super().__init__ not called: it only groups other handles
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()


# ---- op nodes ----------------------------------------------------------------------------------------


class _Mask(threading.local):
    value = None


_mask = _Mask()


def needs_grad(i):
    """Inside a derivative formula: does input `i` need a gradient? (torch's grad_input_mask)

    A formula may skip work for inputs that need none: `mm`'s backward then computes one product, not
    two, when the other operand is data. Outside the engine (a formula called directly) it says True.
    """
    m = _mask.value
    return m is None or (i < len(m) and bool(m[i]))


class OpNode(Node):
    """The backward node of a dispatched op: calls the op's derivative on the saved inputs.

    Saved values are visible as torch names them for the common cases: `_saved_self`, `_saved_other`
    (the first two inputs) and `_saved_result` (the output).
    """

    _op = None
    _saved = ()  # per input: the tensor itself, a SavedTensor (hooks), a TensorMeta, None, or the number
    _versions = ()  # per input: the version a tensor saved as itself had (None for other entries)
    _params = ()
    _out = None
    # per input: True (a pointwise input shaped like the output: its gradient needs no fitting),
    # (shape, numpy dtype), None (no gradient) or False (no edge); see fit_grads
    _in_meta = ()
    # per-op facts set on each op's class by make_node_class: a where/masked_fill (bool inputs get no
    # edge) or an op with state inputs (`_edges`); an op whose Python-number inputs get an edge (True, or
    # the number of leading inputs that take one)
    _mask_op = False
    _scalar_edge = False
    _edges = 1 << 30  # the inputs from this one on (an op's state, such as running statistics) get no edge
    _index_op = False

    def apply(self, grads):
        return self._run(grads, False)

    def _run(self, grads, free):
        if grads[0] is None and all(g is None for g in grads):  # no gradient reached this node (an input's
            return (None,) * len(self.next_functions)  # formula gave None): its inputs get none, as in torch
        op = self._op
        if op.saves == "all":
            inputs = _unpack_saved(self, self._saved, self._versions)
        else:
            inputs = self._saved  # shapes, numbers or nothing: no versions to check
        g = grads[0] if len(grads) == 1 else grads
        _mask.value = metas = self._in_meta  # see needs_grad
        if op.save_output:
            out = self._out
            if out is None:
                raise RuntimeError(_FREED)
            if type(out) is tuple:
                out = tuple([o.unpack(self, i) for i, o in enumerate(out)])
            else:
                out = out.unpack(self)
            res = op.derivative(g, *inputs, *self._params, out=out)
        else:
            res = op.derivative(g, *inputs, *self._params)
        if free and (op.saves == "all" or op.save_output):  # else release() has nothing to free
            self.release()
        if type(res) is not tuple:
            res = (res,)
        if metas is _ALL_TRUE1 or metas is _ALL_TRUE2:
            return res  # every input needs its gradient, and has the output's shape and dtype
        out = []
        for g, meta in zip(res, metas):  # fit_grads, inlined for the common case
            if meta is True:
                out.append(g)
            elif meta is None or g is None:
                if meta is not False:
                    out.append(None)
            elif meta is not False:
                d = g._data
                if d.shape != meta[0] or d.dtype != meta[1]:
                    g = fit_grads((g,), (meta,))[0]
                out.append(g)
        return out

    def release(self):
        op = self._op
        if op.saves == "all":
            self._saved = self._versions = None  # None versions marks the saved inputs freed
        if op.save_output and (out := self._out) is not None:
            if type(out) is tuple:
                for o in out:
                    o.release()
            else:
                out.release()
            self._out = None

    def _saved_input(self, i):
        if self._versions is None:  # freed (a node that saves no tensors keeps () there)
            raise RuntimeError(_FREED)
        s = self._saved[i] if i < len(self._saved) else None
        if type(s) is SavedTensor:
            return s.unpack(self)
        if s is None or isinstance(s, TensorMeta):
            raise AttributeError(f"'{type(self).__name__}' object has no saved input {i}")
        if type(s) is Tensor or isinstance(s, Tensor):
            v = self._versions[i]
            if _version_counter(s)[0] != v:
                _raise_version_error(s, v)
        return s

    _saved_self = property(lambda self: self._saved_input(0))
    _saved_other = property(lambda self: self._saved_input(1))

    @property
    def _saved_result(self):
        out = self._out
        if out is None:
            if self._op.save_output:
                raise RuntimeError(_FREED)
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '_saved_result'")
        return out.unpack(self) if type(out) is not tuple else tuple(o.unpack(self, i) for i, o in enumerate(out))


def _unpack_saved(node, saved, vs):
    """A node's saved inputs as its derivative takes them: each tensor saved as it is checked against the
    version it was saved at (nobody wrote to it since), each SavedTensor unpacked through its hooks."""
    if vs is None:
        raise RuntimeError(_FREED)
    inputs = []
    for s, v in zip(saved, vs):
        if v is not None:
            vc = s._vc
            if (vc[0] if vc is not None else _version_counter(s)[0]) != v:
                _raise_version_error(s, v)
        elif type(s) is SavedTensor:
            s = s.unpack(node)
        inputs.append(s)
    return inputs


class IndexOpNode(OpNode):
    """The node of an op whose index, mask or target tensors are inputs (NOTE [ Index inputs ]) and that
    saves only metadata (or nothing) of its other inputs: the index tensors are saved whole, with their
    versions, and checked and unpacked here before the derivative runs."""

    def _run(self, grads, free):
        saved = self._saved
        self._saved = tuple(_unpack_saved(self, saved, self._versions))
        try:
            res = OpNode._run(self, grads, False)
        finally:
            self._saved = saved
        if free:
            self.release()
        return res

    def release(self):
        OpNode.release(self)
        self._saved = self._versions = None


def fit_grads(res, metas):
    """Reduce each input grad to its input's shape (undoing broadcasting) and dtype; one result per edge."""
    out = []
    for g, meta in zip(res, metas):
        if meta is False:
            continue  # an input with no edge (NOTE [ Which inputs get an edge ])
        if meta is None:
            g = None  # no gradient flows to an input that does not require one (hooks see None, as in torch)
        elif g is not None and meta is not True:
            shape, dt = meta
            d = g._data  # (the gradient's payload metadata against the input's, recorded as NumPy's)
            if d.shape != shape:
                g = g.sum_to_size(shape) if len(shape) else g.sum()
                if tuple(g.shape) != shape:
                    g = g.reshape(shape)
            if d.dtype != dt:
                if d.dtype.kind == "c" and dt.kind != "c":  # a real input: the real part, silently
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                        g = g.to(_dtype_of(dt))
                else:
                    g = g.to(_dtype_of(dt))
        out.append(g)
    return tuple(out)


def _dtype_of(np_dtype):
    from .. import _dtypes

    return _dtypes.from_numpy(np_dtype)


def make_node_class(op, base=None, node_name=None, **extra):
    """The node class of `op`, named as torch names it; it also carries the two per-op facts `record`
    tests (NOTE [ Which inputs get an edge ]), computed here once. (`base`, `node_name` and `extra` facts:
    the classes of NOTE [ What torch's autograd refuses ].)"""
    index_op = "index" in op.tags
    base = base or (IndexOpNode if index_op and op.saves != "all" else OpNode)
    facts = {"_mask_op": "mask" in op.tags, "_scalar_edge": "scalar_edge" in op.tags, "_index_op": index_op}
    if op.edges is not None:  # NOTE [ Optional and state inputs ]
        facts.update(_mask_op=True, _scalar_edge=op.edges, _edges=op.edges)
    node_name = node_name or op.node_name
    return type(node_name, (base,), {
        # torch's node classes are C types, so they print as <class 'MulBackward0'>
        "_op": op, "__module__": "builtins", "__qualname__": node_name, **facts, **extra})


# NOTE [ What torch's autograd refuses ]
# torch records a node for some ops it cannot differentiate and refuses when backward reaches it, or refuses
# an argument that requires grad when the op is called. ember refuses the same calls alike: gradients where
# torch has none would let code run under ember that fails under torch. Each op declares its form once, with
# `OpDef.refuses_` (ember/_dispatch.py), read only here, where a call records: an op so declared never caches
# a node class in `op.node_cls`, so `record` sends its calls to `_record_general`, whose `node_cls is None`
# branch (taken by any other op only on its first call) reads the declaration. The hot path pays nothing.
# - FALLBACK: an op outside torch's derivatives.yaml runs through torch's autograd fallback, which gives every
#   floating output a `NotImplemented` node with one edge per input that requires grad (no `(None, 0)`
#   entries); its backward raises `RuntimeError: derivative for aten::<op> is not implemented`.
# - NOT_IMPLEMENTED: derivatives.yaml's `not_implemented("<name>")`: the op's generated node (Unique2Backward0),
#   whose backward raises `NotImplementedError: the derivative for '<name>' is not implemented.`. Only the
#   op's differentiable arguments count (the `op.edges` leading inputs, where it sets them): a call where none
#   of them requires grad records nothing, as torch's `compute_requires_grad` over those arguments.
# - ARGUMENT: torch's `check_no_requires_grad`: with grad mode on, a state argument that requires grad (batch
#   norm's running statistics, fractional pooling's random samples) raises "The function '<fn>' is not
#   differentiable with respect to argument '<arg>'. This input cannot have requires_grad True.". torch
#   checks before its kernel, ember where it records, after its kernel: a training batch norm has updated its
#   running statistics by then (the one difference, on a call that fails either way).
# A composite that torch has as one aten op outside derivatives.yaml (floor_divide, detach_copy) gives its
# result the FALLBACK node with `refuse_composite`.


class RefusedNode(OpNode):
    """The node of a call torch records and cannot differentiate: its backward raises torch's error."""

    _error = RuntimeError
    _message = ""

    def _run(self, grads, free):
        raise self._error(self._message)

    def apply(self, grads):
        raise self._error(self._message)

    def name(self):
        return named("ember::autograd::NotImplemented") if type(self).__name__ == "NotImplemented" else \
            type(self).__name__


class FallbackNode(RefusedNode):
    """torch's `NotImplemented` node (its autograd fallback's): it is numbered as AccumulateGrad is (torch gives
    it the largest sequence number), so the engine runs it, and raises, as soon as it is ready."""

    _seq = property(lambda self: 2 ** 62, lambda self, value: None)


_REFUSING: dict = {}  # (op, node name, aten name) -> node class: NOTE [ What torch's autograd refuses ]


def _refused_class(op, form, name, node_name):
    key = (op, node_name, name)
    cls = _REFUSING.get(key)
    if cls is None:
        if form == _dispatch.FALLBACK:
            error, message = RuntimeError, f"derivative for aten::{name} is not implemented"
            facts = {"_mask_op": True, "_scalar_edge": False, "_edges": 0}  # edges: the inputs requiring grad
        else:
            error, message = NotImplementedError, f"the derivative for '{name}' is not implemented."
            facts = {}
        base = FallbackNode if form == _dispatch.FALLBACK else RefusedNode
        if op is None:
            cls = type(node_name, (base,), {"__module__": "builtins", "__qualname__": node_name, "_error": error,
                                            "_message": message, **facts})
        else:
            cls = make_node_class(op, base, node_name, _error=error, _message=message, **facts)
        _REFUSING[key] = cls
    return cls


def refusing_class(op, inputs, params):
    """The node class of a call of `op` declared with `refuses_` (None: the call records nothing), or torch's
    refusal of an argument; see NOTE [ What torch's autograd refuses ]."""
    form, name, extra = op.refusal
    if form == _dispatch.ARGUMENT:
        for i, arg in extra.items():
            if i < len(inputs) and isinstance(inputs[i], Tensor) and inputs[i]._requires_grad:
                raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument '{arg}'. "
                                   "This input cannot have requires_grad True.")
        cls = _REFUSING.get(op)
        if cls is None:
            cls = _REFUSING[op] = make_node_class(op)
        return cls
    if form == _dispatch.NOT_IMPLEMENTED and op.edges is not None and not any(
            isinstance(t, Tensor) and t._requires_grad for t in inputs[:op.edges]):
        return None
    name = name(params) if callable(name) else name
    node_name = extra(params) if callable(extra) else extra or "NotImplemented"
    return _refused_class(op, form, name, node_name)


def refuse_composite(name, result, *inputs):
    """Give `result` (the output(s) of a composite that torch has as the one aten op `name`, outside its
    derivatives.yaml) torch's FALLBACK node, where grad mode is on and one of `inputs` requires grad (NOTE
    [ What torch's autograd refuses ]). Returns `result`."""
    if not _grad_state.enabled:
        return result
    edges = tuple([grad_edge(t) for t in inputs if isinstance(t, Tensor) and t._requires_grad])
    if not edges:
        return result
    node = _new(_refused_class(None, _dispatch.FALLBACK, name, "NotImplemented"))
    node._seq = next(_seq)
    node.next_functions = edges
    for i, o in enumerate(result if type(result) is tuple else (result,)):
        if isinstance(o, Tensor) and (o.is_floating_point() or o.is_complex()):
            o._grad_fn, o._requires_grad, o._output_nr = node, True, i
    return result


class AccumulateGrad(Node):
    """Sink of a leaf that requires grad: adds incoming gradients into `variable.grad` (in the engine)."""

    __module__ = "builtins"  # a C type in torch: <class 'AccumulateGrad'>

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        self._seq = 2**62  # torch gives it UINT64_MAX: it runs as soon as it is ready

    def name(self):
        return "ember::autograd::AccumulateGrad"

    def apply(self, grads):
        return ()


def grad_edge(t):
    """The (Node, input_nr) a gradient for tensor `t` flows into."""
    fn = t._grad_fn
    if fn is not None:
        if t._base is not None and "_view_version" in t.__dict__ and t._view_version != t._vc[0]:
            fn = refresh_view_grad_fn(t)
        return (fn, t._output_nr)
    if not t._requires_grad:
        return _NO_EDGE
    return (_leaf_node(t), 0)


def _leaf_node(t):
    ref = t._acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._acc = weakref.ref(node)
    return node


def refresh_view_grad_fn(view):
    """A view whose base was modified in place since its grad_fn was made gets a fresh grad_fn: an
    AsStridedBackward0 of the base's current history (torch regenerates it the same way)."""
    base = view._base
    vc = view._vc
    if base._requires_grad:
        prev = _grad_state.enabled
        _grad_state.enabled = True
        try:
            fresh = base.as_strided(view.shape, view.stride(), view.storage_offset())
        finally:
            _grad_state.enabled = prev
        view._grad_fn, view._output_nr = fresh._grad_fn, 0
    view._view_version = vc[0]
    return view._grad_fn


# NOTE [ Which inputs get an edge ]
# torch's next_functions has one entry per *tensor argument of the op's schema*. A Python number given
# to add/sub/mul/div/where (or assigned with `t[i] = 0`) becomes a wrapped tensor there, so it gets a
# `(None, 0)` edge (those ops carry the tag `scalar_edge`); for every other op it is a Scalar argument and
# gets none (`x.pow(2)`, `1 - x`, `x.clamp(0, 1)` have one edge). The bool condition or mask of
# where/masked_fill (tag `mask`) is not a differentiable argument and gets none either. The derivative
# still returns one gradient per input; `fit_grads` drops those of inputs without an edge.

# NOTE [ Optional and state inputs ]
# A native norm takes `(input, weight, bias, running_mean, running_var)`; torch's node has three edges, one
# per differentiable argument, `(None, 0)` for a weight or bias that is None or needs no gradient, and none
# for the running statistics (state the op updates, not differentiated). Such an op sets `op.edges` to the
# number of leading inputs that take an edge: its class then treats a None among those as `scalar_edge` ops
# treat a Python number, and every input after them as a mask: the checks sit on branches that only those
# ops (and where/masked_fill) reach, so other ops pay nothing.

# NOTE [ Index inputs ]
# An op's index, mask or target tensors are inputs of the op, not parameters: a tracer then records them
# as graph inputs rather than baking one batch's indices into a graph (torch's schemas take them as
# Tensor arguments). They are not differentiable: like torch, the node gives them no edge, and the
# derivative returns None for them. The derivative needs their values, so they are saved whole, with
# their versions (an index changed in place before backward raises torch's error), even by an op that
# saves only the metadata of its other inputs (`IndexOpNode`). Ops with the tag `index` treat every integer
# or bool tensor input that way.


def _record_general(op, inputs, params, result):
    """`record` for every call its direct path does not take.

    See NOTE [ Recording is the hot path ] and NOTE [ Which inputs get an edge ]. One pass over the
    inputs builds the edges, the per-input metadata and the saved values (no generator expressions:
    each costs more than the work it wraps here). The node is made without calling a Python __init__,
    and the per-op facts the loop needs were computed once on the node class (`make_node_class`).
    A saved input is kept as the tensor itself with its version beside it; only saved-tensor hooks or
    an inference tensor need a SavedTensor object.
    """
    node_cls = op.node_cls
    if node_cls is None:
        if op.refusal is not None:  # NOTE [ What torch's autograd refuses ]
            node_cls = refusing_class(op, inputs, params)
            if node_cls is None:
                return None
        elif op.derivative is None:
            raise RuntimeError(f"the derivative for '{op.name}' is not implemented.")
        else:
            node_cls = op.node_cls = make_node_class(op)  # made on first use (see OpDef.defines_derivative)
    node = _new(node_cls)
    node._seq = next(_seq)
    single = type(result) is not tuple
    pointwise = single and op.kind == "pointwise"
    if single:
        out = result._data
        odt = out.dtype
        if pointwise:
            oshape = out.shape
    if (odt.kind == "c" if single else any(o.dtype.is_complex for o in result)) \
            and "not_holomorphic" not in op.tags:
        node._op = _conjugated(op)  # NOTE [ Complex gradients ]
    edges = []
    metas = []
    saved = []
    saves = op.saves  # "all", "none" or "meta"
    index_op = node_cls._index_op  # NOTE [ Index inputs ]
    if saves == "all" or index_op:
        versions = []
    for t in inputs:
        if isinstance(t, Tensor):
            a = t._data
            whole = saves == "all"
            if index_op and a.dtype.kind in "biu":
                metas.append(False)
                whole = True
            elif t._requires_grad:
                edges.append(grad_edge(t))
                if pointwise and a.dtype is odt and a.shape == oshape:
                    metas.append(True)
                else:
                    metas.append((a.shape, a.dtype))
            elif node_cls._mask_op and (a.dtype.kind == "b" or len(metas) >= node_cls._edges):
                metas.append(False)
            else:
                edges.append(_NO_EDGE)
                metas.append(None)
            if whole:
                if _saved_hooks or t._is_inference:
                    saved.append(SavedTensor(t))
                    versions.append(None)
                else:
                    saved.append(t)
                    versions.append(_version_now(t))
            else:
                saved.append(TensorMeta(t) if saves == "meta" else None)
                if index_op:
                    versions.append(None)
        else:
            if node_cls._scalar_edge and (node_cls._scalar_edge is True or len(metas) < node_cls._edges):
                edges.append(_NO_EDGE)
                metas.append(None)
            else:
                metas.append(False)
            saved.append(t)
            if saves == "all" or index_op:
                versions.append(None)
    node.next_functions = tuple(edges)
    node._in_meta = tuple(metas)
    node._saved = tuple(saved)
    if saves == "all" or index_op:
        node._versions = tuple(versions)
    if params:
        node._params = params
    if single and op.kind != "view" and not (op.save_output and (_saved_hooks or result._is_inference)):
        k = odt.kind  # _attach_outputs, inlined for the common cases
        if k == "f" or k == "c" or odt.name == "bfloat16":
            result._grad_fn = node
            result._requires_grad = True
        if op.save_output:
            _save_output(node, result)
    else:
        _attach_outputs(op, node, result)
    if _anomaly[0]:
        from .anomaly_mode import capture_trace

        node._anomaly_trace = capture_trace()
    return node


def record(op, inputs, params, result):
    """Attach a new backward node of `op` to `result`; called by the dispatcher when grads are needed.

    Its commonest call, a pointwise op on one or two tensors with a float result, is handled here: the
    same node the general loop (`_record_general`) makes, built straight into tuples, with the two
    inputs written out. Every other call goes to the general loop.
    """
    node_cls = op.node_cls
    n = len(inputs)
    if node_cls is None or op.kind != "pointwise" or type(result) is not Tensor or not 0 < n < 3 or _saved_hooks \
            or _anomaly[0] or op.saves == "meta":
        return _record_general(op, inputs, params, result)
    if n == 2:
        a, b = inputs
        if type(b) is not Tensor or b._is_inference or node_cls._mask_op:
            return _record_general(op, inputs, params, result)
    else:
        a, b = inputs[0], None
    out = result._data
    odt = out.dtype
    if type(a) is not Tensor or a._is_inference or odt.kind != "f":  # complex: NOTE [ Complex gradients ]
        return _record_general(op, inputs, params, result)
    node = _new(node_cls)
    node._seq = next(_seq)
    saves = op.saves == "all"
    if a._requires_grad:
        d = a._data
        ma = True if d.dtype is odt and (b is None or d.shape == out.shape) else (d.shape, d.dtype)
    else:
        ma = None
    if b is None:
        node.next_functions = (grad_edge(a),)
        node._in_meta = _ALL_TRUE1 if ma is True else (ma,)
        if saves:
            node._saved, node._versions = (a,), (_version_now(a),)
        else:
            node._saved = _ONE_NONE
    else:
        if b._requires_grad:
            d = b._data
            mb = True if d.dtype is odt and d.shape == out.shape else (d.shape, d.dtype)
        else:
            mb = None
        node.next_functions = (grad_edge(a), grad_edge(b))
        node._in_meta = _ALL_TRUE2 if ma is True and mb is True else (ma, mb)
        if saves:
            node._saved, node._versions = (a, b), (_version_now(a), _version_now(b))
        else:
            node._saved = _TWO_NONES
    if params:
        node._params = params
    result._grad_fn = node
    result._requires_grad = True
    if op.save_output:
        _save_output(node, result)
    return node


def _version_now(t):
    """The version of a tensor being saved, without making its counter: one not made yet is at 0, unless
    the tensor is a view, whose counter is its base's."""
    vc = t._vc
    return vc[0] if vc is not None else 0 if t._base is None else _version_counter(t)[0]


def _save_output(node, result):
    """Keep the op's single output for its backward as a SavedOutput sharing its version counter."""
    vc = result._vc
    if vc is None:
        vc = result._vc = [0]  # a fresh output: the counter is made here, to be shared with the node
    so = node._out = _new(SavedOutput)
    so.data, so.vc, so.version = result._data, vc, vc[0]


_ONE_NONE, _TWO_NONES = (None,), (None, None)
_ALL_TRUE1, _ALL_TRUE2 = (True,), (True, True)  # shared metadata that OpNode.apply knows needs no fitting


# NOTE [ Complex gradients ]
# torch's gradient for a complex input is the conjugate Wirtinger one: for a holomorphic f it is
# grad * conj(f'(z)), where a formula written for real numbers computes grad * f'(z). Formulas are linear
# in grad, so conj(formula(conj(grad))) is torch's gradient: a node whose output is complex runs its op's
# derivative that way. Ops that are not holomorphic (sgn, conj) have their formulas written in torch's
# convention already (tag `not_holomorphic`) and are left alone; ops with a real result (abs, norms) are
# never wrapped.

_CONJUGATED = {}


def _conjugated(op):
    """`op` with its derivative taken as NOTE [ Complex gradients ] says (made once per op)."""
    c = _CONJUGATED.get(op)
    if c is None:
        c = copy.copy(op)
        real_formula = op.derivative

        def derivative(g, *args, **kwargs):
            return _conj_all(real_formula(_conj_all(g), *args, **kwargs))

        c.derivative = derivative
        c = _CONJUGATED[op] = c
    return c


def _conj_all(x):
    if type(x) is tuple:
        return tuple([_conj_all(v) for v in x])
    return x.conj() if isinstance(x, Tensor) else x


def _attach_outputs(op, node, result):
    is_view = op.kind == "view"
    if type(result) is tuple:
        node._out_meta = tuple((d.shape, d.dtype) for d in [o._data for o in result])
        node._has_extras = True
        node._n_outputs = len(result)
        outs = result
    else:
        outs = (result,)
    for i, o in enumerate(outs):
        k = o._data.dtype.kind
        if k == "f" or k == "c" or k == "V":  # (bfloat16's kind is "V")
            o._grad_fn = node
            o._requires_grad = True
            if i:
                o._output_nr = i
            if is_view:
                o._view_version = _version_counter(o)[0]
                if len(outs) > 1:
                    o._multi_view = True
    if op.save_output:
        if type(result) is tuple:
            node._out = tuple([SavedTensor(o, True) for o in outs])
        else:
            node._out = SavedTensor(result, True)


_anomaly = [False]


# ---- in-place ops --------------------------------------------------------------------------------------

_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside "
    "(if you want the inplace to be tracked).")


def check_inplace(t, recording):
    """torch's refusals for in-place ops on tensors autograd depends on."""
    try:
        if t._is_inference and not _grad_state.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
                "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
                "for more details.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not _grad_state.enabled:
        return
    if t._grad_fn is None and t._requires_grad:
        if t._base is not None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is None:
        return
    if base._requires_grad and t._grad_fn is None and not t._requires_grad:
        raise RuntimeError(_NO_GRAD_VIEW)  # with grad mode on, a view of such a base would have a grad_fn
    if base._grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if base._requires_grad and base.dtype is not t.dtype:  # CopySlices replays the view with as_strided
        raise NotImplementedError(
            "ember does not support in-place operations yet on a real/imag/view_as_real view of a complex tensor "
            "that requires grad; use an out-of-place operation.")
    if "_multi_view" in t.__dict__ and t._grad_fn is not None:
        raise RuntimeError(
            f"Output {t._output_nr} of {short_name(t._grad_fn)} is a view and is being modified inplace. This view "
            "is the output of a function that returns multiple views. Such functions do not allow the output "
            "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")


def rebase_history(op, self, inputs, params, old_data):
    """After `self.op_(...)` wrote its result into self: make self's (or its base's) grad_fn the new node.

    The node sees the old self as its first input. Its value was overwritten, so when the derivative
    needs input values, `old_data` is a copy taken before the write. For a view, the base's history is
    rewritten instead (see NOTE [ CopySlices ]).
    """
    if self._base is not None:
        from .copy_slices import rebase_view

        rebase_view(op, self, inputs, params, old_data)
        return
    prev_fn, prev_nr = self._grad_fn, self._output_nr
    old = _wrap(old_data if old_data is not None else self._data)
    old._grad_fn, old._requires_grad, old._output_nr = prev_fn, self._requires_grad, prev_nr
    old._acc = self._acc
    old._vc = [0]
    self._output_nr = 0
    node = record(op, (old,) + tuple(inputs[1:]), params, self)
    saved_before_write(node, self._vc)
    if self._retains_grad and prev_fn is not None and prev_fn._retains:
        ref = prev_fn._retains.pop(prev_nr, None)  # retain_grad follows the tensor to its new history
        if ref is not None:
            node._retains = {0: ref}
            node._has_extras = True


def saved_before_write(node, vc):
    """The in-place op's node was recorded after the write bumped `vc`; torch saves its other inputs before
    the write, so one that shares the counter (`y[0].mul_(y[1].detach())`) records the version before it."""
    if node is None or not node._versions:  # it saved no tensor whole (or recorded nothing: NOTE [ What
        return  # torch's autograd refuses ])
    versions = list(node._versions)
    for i, s in enumerate(node._saved):
        if type(s) is SavedTensor:
            if s.tensor is not None and s.tensor._vc is vc:
                s.version -= 1
        elif versions[i] is not None and s._vc is vc:
            versions[i] -= 1
    node._versions = tuple(versions)


from .graph_edges import (  # noqa: E402,F401  (built on the classes above)
    GradientEdge,
    allow_mutation_on_saved_tensors,
    get_gradient_edge,
    region_activation_memory_budget,
    set_override_stale_capture_stream,
    set_warn_on_accumulate_grad_stream_mismatch,
)
from .graph_memory import saved_tensors_bytes  # noqa: E402  (checkpointing, issue 21: it reads the classes above)
from .graph_print import format_graph, print_graph, save_graph, to_dot  # noqa: E402  (the printers read the classes above)

# NOTE [ Autograd registers itself ]
_dispatch.register_autograd(record, check_inplace, rebase_history, keep_subclass)
