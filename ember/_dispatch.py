"""The dispatcher: the one entry every op goes through, and how an op is declared.

An op is declared once (see `defop`): a kernel over NumPy arrays, the name of its backward node as torch
prints it, its kind, how it promotes dtypes, and (with `@op.derivative`) its backward formula written in
ember ops. `dispatch(op, inputs, params)` then does, with no mode active:

    promote the inputs' dtypes -> run the kernel -> wrap the outputs -> record a backward Node
                                                                     (only if grad mode is on and an
                                                                      input requires grad)

Every op is in one registry (`registry`, keyed by its qualified name, `div.Tensor_mode` style) with its
tags and one slot per transform (`derivative` for reverse mode, `meta`, `jvp`, `batch`, `autocast`,
`decomposition`), so an interpreter can ask an op what it is without running it.

Modes (autocast, tracing, profiling, fake tensors, inference mode) are interpreters on a per-thread stack,
at one of two levels: above autograd (they see the op before it is recorded) or below it (they compute
the outputs, and autograd records on what they return). See NOTE [ The mode stack ] below.
A new mode is a new handler, never a new branch here.
"""

from __future__ import annotations

import inspect
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import _dtypes
from ._grad_state import state as _grad_state
from ._meta import MetaArray, NoData, broadcast_error, derived_rule, like_array, torch_layout
from ._tensor import Tensor, _version_counter, _wrap

_new = object.__new__
__all__ = ["OpDef", "defop", "registry", "dispatch", "dispatch_inplace", "redispatch", "TAGS", "require_dtype",
           "require_op_dtype", "not_implemented"]

POINTWISE, REDUCTION, VIEW, MATMUL, SHAPE, INDEXING, CREATION, NN, OTHER = (
    "pointwise", "reduction", "view", "matmul", "shape", "indexing", "creation", "nn", "other")
HIGHER_ORDER = "higher_order"  # see dispatch_higher_order
FALLBACK, NOT_IMPLEMENTED, ARGUMENT = "fallback", "not_implemented", "argument"  # OpDef.refuses_

_ndarray = np.ndarray
_asarray = np.asarray

# NOTE [ The mode stack ]
# A mode is an interpreter of ops (`ember._modes.Mode`). Each thread has its own two stacks: modes above
# autograd (autocast, vmap, function transforms: they see an op before autograd records it, and what they
# return is what the caller gets) and modes below it (fake tensors, proxy tracing: they compute an op's
# outputs, and autograd then records on those outputs as it would on a kernel's). A handler runs with
# itself popped, so the ops it calls, and the `redispatch` that passes an op on, go to the next level
# down; its own work never comes back to it. The hot path asks one question, `if _modes:`, of one global
# list that holds an entry per mode pushed in any thread (and per tensor subclass with a dispatch hook),
# so with no mode anywhere the cost is one truth test; when some thread has a mode, this thread's stacks
# decide (`dispatch_modes`).


class _ThreadModes(threading.local):
    def __init__(self):
        self.above: list = []
        self.below: list = []
        self.bodies: list = []  # the stacks at each higher-order op's dispatch (NOTE [ Higher-order ops ])


_local = _ThreadModes()
_modes: list = []  # see NOTE [ The mode stack ]
_hooked: list = []  # tensor subclasses with an __ember_dispatch__ hook

#: every op, by qualified name (`name` or `name.overload`)
registry: dict[str, OpDef] = {}

#: the tags an op may carry (torch's `torch.Tag` names where torch has one)
TAGS = frozenset((
    "pointwise", "reduction", "view", "inplace", "core", "dynamic_output_shape", "nondeterministic_seeded",
    "not_holomorphic",  # the derivative is stated in torch's conjugate convention (NOTE [ Complex gradients ])
    "scalar_edge",  # a Python-number input takes part in promotion but gets no gradient edge
    "mask",  # input 0 is a boolean mask that selects which of the others' values pass
    "index",  # some inputs are index (or mask, or class-target) tensors: no edge, saved whole (NOTE [ Index inputs ])
))


class OpDef:
    """One op: its kernel, backward formula, kind, tags, torch's backward-node name, and its rule per transform.

    promote: None (kernel takes inputs as they are), "same" (inputs cast to torch's result dtype),
    "float" (like "same" but integer results become the default float dtype: div, exp, sqrt), or
    "bool" (inputs promoted together, result is bool: comparisons).
    saves: which inputs the backward formula needs ("all" or "none"); save_output: it needs the output.
    Rules per transform: `derivative` (reverse mode), `meta` (shape, dtype and strides without data; see
    NOTE [ Meta payloads ]), `jvp`, `batch`, `autocast`, `decomposition` (for the transforms that fill them).
    dtypes: the dtype names torch's CPU kernel accepts (None: all); dtype_error: what it raises for the
    others; inputs_checked: dtypes is checked on each input rather than the computed dtype; empty_ok: an
    empty tensor of any dtype passes (torch checks inside its kernel's loop), see NOTE [ Accepted dtypes ].
    """

    __slots__ = ("name", "overload", "qualname", "tags", "kernel", "kind", "node_name", "promote", "saves",
                 "save_output", "derivative", "node_cls", "fast", "differentiable", "edges",
                 "meta", "jvp", "batch", "autocast", "decomposition", "dtypes", "dtype_error", "inputs_checked",
                 "empty_ok", "meta_mixed", "own_layout", "writes", "refusal")

    def __init__(self, name: str, kernel: Callable, kind: str, node_name: str | None, promote: str | None,
                 saves: str, save_output: bool, overload: str = "", tags: Iterable[str] = (),
                 dtypes=None, dtype_error=None, inputs_checked=False, empty_ok=False):
        self.name = name
        self.overload = overload
        self.qualname = f"{name}.{overload}" if overload else name
        self.dtypes = dtypes
        self.dtype_error = dtype_error
        self.inputs_checked = inputs_checked
        self.empty_ok = empty_ok
        assert not empty_ok or promote is None, f"{name}: empty_ok is for ops without promotion"
        if dtypes is not None and promote is None:
            kernel = _checked(kernel, dtypes, dtype_error, empty_ok)
        self.kernel = kernel
        self.kind = kind
        self.node_name = node_name
        self.promote = promote
        self.saves = saves
        self.save_output = save_output
        self.derivative = None
        self.node_cls = None
        self.edges = None  # the number of leading inputs that take an edge (NOTE [ Optional and state inputs ])
        self.differentiable = node_name is not None
        fast = _FAST[promote] if kind != POINTWISE else _FAST[promote] - _HALF  # NOTE [ Half-precision math ]
        self.fast = fast if dtypes is None else frozenset(d for d in fast if d.name in dtypes)
        self.meta = self.jvp = self.batch = self.autocast = self.decomposition = None
        self.meta_mixed = False
        self.own_layout = False  # a pointwise kernel that lays out its result itself (NOTE [ Promoted layouts ])
        self.writes = None  # kernels that write their inputs: NOTE [ Kernels that write their inputs ]
        self.refusal = None  # what torch's autograd refuses: NOTE [ What torch's autograd refuses ]
        tags = frozenset(tags) | ({kind} & {"pointwise", "reduction", "view"})
        if name.endswith("_") and not name.startswith("_"):
            tags |= {"inplace"}
        unknown = tags - TAGS
        assert not unknown, f"{self.qualname}: unknown tags {sorted(unknown)}"
        self.tags = tags
        assert self.qualname not in registry, f"op {self.qualname} is declared twice; give it an overload name"
        registry[self.qualname] = self

    def defines_derivative(self, fn: Callable) -> Callable:
        """Decorator: the backward formula `fn(grad, *inputs, *params[, out=...]) -> grads per input`.

        The node class (named as torch names it) is made when the op first records, which keeps the
        hundreds of op declarations cheap at import.
        """
        self.derivative = fn
        return fn

    derivative_ = defines_derivative

    def refuses_(self, form: str, name, node_name=None, inputs: dict | None = None) -> OpDef:
        """Declare what torch's autograd refuses for this op (NOTE [ What torch's autograd refuses ] in
        ember/autograd/graph.py), read only where a call records a node:

        - `refuses_(FALLBACK, "heaviside")`: an op outside torch's derivatives.yaml; its outputs get a
          `NotImplemented` node (edges to the inputs that require grad) whose backward raises
          `RuntimeError: derivative for aten::heaviside is not implemented`;
        - `refuses_(NOT_IMPLEMENTED, "_unique2", "Unique2Backward0")`: derivatives.yaml's `not_implemented`;
          the node, named `node_name`, raises `NotImplementedError: the derivative for '_unique2' is not
          implemented.` at backward (only the first `op.edges` inputs count, where the op sets it);
        - `refuses_(ARGUMENT, "native_batch_norm", inputs={3: "running_mean", 4: "running_var"})`: recording
          with one of those inputs requiring grad raises torch's "is not differentiable with respect to
          argument" (torch checks before its kernel; ember when it records, after it: see the NOTE).

        `name` (and `node_name`) may be a function of the call's params where torch's aten op depends on them.
        """
        assert form in (FALLBACK, NOT_IMPLEMENTED, ARGUMENT), form
        if form == ARGUMENT:
            assert self.derivative is not None or self.node_name is not None, f"{self.qualname}: no derivative"
        else:
            self.node_name = node_name or "NotImplemented"
            self.differentiable = True
            self.saves, self.save_output = "none", False
        self.refusal = (form, name, inputs if form == ARGUMENT else node_name)
        return self

    def jvp_(self, fn: Callable) -> Callable:
        """Decorator: the forward-mode rule `fn(inputs, params, out, tangents) -> output tangent(s)` (tangents:
        one per input, None where an input has none); ops without one get a rule derived from their
        declaration (NOTE [ JVP rules from one declaration ] in ember/autograd/_jvp.py)."""
        self.jvp = fn
        return fn

    def meta_(self, fn: Callable | None = None, *, mixed_devices: bool = False) -> Callable:
        """Decorator: the meta rule `fn(*inputs, *params) -> MetaArray or tuple` (NOTE [ Meta payloads ]).
        mixed_devices: the rule takes CPU tensors beside meta ones (NOTE [ Meta and CPU inputs together ])."""
        if fn is None:
            return lambda f: self.meta_(f, mixed_devices=mixed_devices)
        self.meta = lambda inputs, params: fn(*inputs, *params)
        self.meta_mixed = mixed_devices
        return fn

    def signature(self, n_inputs: int, n_params: int) -> tuple:
        """(input names, param names) of a call with `n_inputs` tensor inputs and `n_params` params, from the
        kernel's parameter names (a variadic kernel's get `input<i>` / `param<i>`). Params are the static
        arguments a tracer keeps in its graph; inputs are what it records as graph edges."""
        kernel = getattr(self.kernel, "__wrapped__", self.kernel)
        names = None
        if not isinstance(kernel, np.ufunc):
            ps = inspect.signature(kernel).parameters.values()
            if all(p.kind is p.POSITIONAL_OR_KEYWORD or p.kind is p.POSITIONAL_ONLY for p in ps):
                names = [p.name for p in ps]
        if names is None or len(names) < n_inputs + n_params:
            return tuple(f"input{i}" for i in range(n_inputs)), tuple(f"param{i}" for i in range(n_params))
        return tuple(names[:n_inputs]), tuple(names[n_inputs:n_inputs + n_params])

    def meta_rule(self) -> Callable | None:
        """The rule that computes this op's outputs on meta payloads: its own, or the one its kind implies."""
        return self.meta or derived_rule(self)

    def __repr__(self):
        return f"<op {self.qualname}>"


# dtypes a kernel runs natively, per promotion mode: same-dtype inputs of these skip promotion entirely
_FLOATS = frozenset(np.dtype(n) for n in ("float16", "float32", "float64", "complex64", "complex128"))
_ALL = _FLOATS | frozenset(np.dtype(n) for n in ("bool", "uint8", "int8", "int16", "int32", "int64"))
_FAST = {None: frozenset(), "float": _FLOATS, "same": _ALL, "bool": _ALL}
_HALF = frozenset((np.dtype("float16"),))

# NOTE [ Half-precision math ]
# torch's CPU kernels compute float16 and bfloat16 elementwise ops in float32 and round the result once
# (sigmoid is one rounding of 1 / (1 + exp(-x)), not three). NumPy's float16 loops round after every ufunc
# and are many times slower than its float32 ones; ml_dtypes' bfloat16 ones slower still. So a pointwise
# op never runs its kernel on half-precision arrays: float16 is left out of its fast dtypes and `_promote`
# computes both half types in float32, rounding once on the way out. (Mixed precision makes this hot:
# under autocast every activation is half precision.)

# NOTE [ Accepted dtypes ]
# Each op states the dtypes torch's CPU kernel accepts (`defop(..., dtypes=FLOATING, error="elu_cpu")`), so a
# float-only op given integers raises torch's error instead of answering in wrong integers. The check costs
# nothing on the fast path: `op.fast` (the dtypes `_run` hands straight to the kernel) is the natively run
# dtypes intersected with the accepted ones, so an unaccepted dtype always reaches `_promote`, which checks
# the dtype the op computes in (after "float" promotion: `exp` of a Long computes in Float and is accepted).
# An op without promotion (promote=None) has no fast path to protect: its kernel is wrapped by `_checked`.
# `error` is torch's kernel name, giving `NotImplementedError: "elu_cpu" not implemented for 'Long'`, or a
# callable `error(dtype) -> exception` for ops that raise other words. A few ops refuse an input dtype
# whatever the result (`sub` of a bool tensor and a float): `check="inputs"` checks each tensor input, and
# the callable also gets the inputs. Composites (most losses) call `require_dtype` at their entry, or
# `require_op_dtype` with the op they are built on. Most samplers (normal_, bernoulli, random_...) check the
# dtype inside their kernel's loop, which an empty tensor never enters: `torch.empty(0, dtype=torch.long)
# .normal_()` is no error. `empty_ok=True` declares that (for ops without promotion, checked by `_checked`);
# the creation ops that fill a dtype given as a param check it with `require_op_dtype(op, d, empty=...)`.
BOOL = frozenset({"bool"})
INTEGRAL = frozenset({"uint8", "int8", "int16", "int32", "int64"})
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
COMPLEX = frozenset({"complex64", "complex128"})
REAL = BOOL | INTEGRAL | FLOATING  # torch's AT_DISPATCH_ALL_TYPES_AND2(Bool, Half, BFloat16...) family
NUMERIC = INTEGRAL | FLOATING | COMPLEX  # everything but bool
FLOATING_COMPLEX = FLOATING | COMPLEX
ALL_DTYPES = REAL | COMPLEX

def defop(name: str, node_name: str | None = None, kind: str = OTHER, promote: str | None = None, saves: str = "all",
          save_output: bool = False, dtypes: frozenset | None = None, error: str | Callable | None = None,
          check: str = "result", *, overload: str = "", tags: Iterable[str] = (),
          empty_ok: bool = False) -> Callable[[Callable], OpDef]:
    """Declare an op from its NumPy kernel: ``@defop("mul", "MulBackward0", POINTWISE, "same")``.

    Two ops under one name (torch's overloads: `pow.Tensor_Scalar`, `pow.Tensor_Tensor`) are told apart
    by `overload`; the registry refuses a qualified name declared twice. dtypes/error: the dtypes torch
    accepts and what it raises for the others (NOTE [ Accepted dtypes ]).
    """
    def deco(kernel):
        return OpDef(name, kernel, kind, node_name, promote, saves, save_output, overload, tags, dtypes, error,
                     check == "inputs", empty_ok)
    return deco


def not_implemented(kernel_name: str, d: _dtypes.dtype) -> NotImplementedError:
    """torch's `"<kernel_name>" not implemented for '<Dtype>'` for ember dtype `d`."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{_WORDS[d.name]}\'')


def dtype_error(error: str | Callable, d, args: tuple = ()) -> Exception:
    """The exception torch raises for dtype `d` (an ember or NumPy dtype) per an op's `error`.

    A callable `error` gets the dtype and, for an op without promotion, the kernel's arguments (softmax's
    kernel name depends on its dim).
    """
    d = d if isinstance(d, _dtypes.dtype) else _dtypes.from_numpy(d)
    if isinstance(error, str):
        return not_implemented(error, d)
    return error(d, *args)


def require_dtype(t: Tensor, dtypes: frozenset, error: str | Callable, *others) -> None:
    """At a composite's entry: raise torch's error unless tensor `t`'s dtype (or, given `others`, the
    dtype `t` and `others` promote to) is in `dtypes`."""
    try:
        d = t.dtype if not others else _dtypes.result_dtype((t,) + others)  # (ember dtypes: `.name` is plain)
    except (AttributeError, TypeError) as e:  # not a tensor: NOTE [ Argument types on the error path ]
        from ._argparse import call_error
        raise call_error(e, sys._getframe(1)) from None
    if d.name not in dtypes:
        raise dtype_error(error, d) from None


def require_op_dtype(op: OpDef, d: _dtypes.dtype, args: tuple = (), empty: bool = False) -> None:
    """Raise `op`'s declared dtype error unless it accepts ember dtype `d`: for a composite that must check
    the dtype before its own argument checks, as torch does, without declaring the dtypes twice. `empty`:
    the tensor has no elements (an op declared `empty_ok` accepts it whatever its dtype)."""
    if op.dtypes is not None and d.name not in op.dtypes and not (empty and op.empty_ok):
        raise dtype_error(op.dtype_error, d, args) from None


def check_dtypes(op, inputs, res):
    """Raise `op`'s declared dtype error unless it accepts `inputs` computing in ember dtype `res` (its own
    inputs, or, for an op applied per element as the foreach ops are, one element's; a slow path)."""
    if op.inputs_checked:
        for t in inputs:
            if isinstance(t, Tensor) and t.dtype.name not in op.dtypes:
                raise dtype_error(op.dtype_error, t._data.dtype, inputs)
    elif res.name not in op.dtypes:
        raise dtype_error(op.dtype_error, res)


def _checked(kernel, dtypes, error, empty_ok=False):
    """`kernel` guarded by the dtype check of its first array argument (ops without promotion).

    The check compares NumPy dtype objects: `np.dtype.name` is a Python-level property that costs more than
    a small kernel, and this runs on every call. The accepted set is filled on first use (bfloat16's NumPy
    dtype comes from ml_dtypes, loaded lazily)."""
    accepted = set()

    def checked(*args):
        for a in args:
            if type(a) is _ndarray:
                d = a.dtype
                if d not in accepted:
                    if d.name in dtypes:
                        accepted.add(d)
                    elif not (empty_ok and a.size == 0):
                        raise dtype_error(error, d, args) from None
                break
        return kernel(*args)
    checked.__wrapped__ = kernel
    checked.__name__ = getattr(kernel, "__name__", "kernel")
    return checked


# ---- the fast path ------------------------------------------------------------------------------------


def dispatch(op: OpDef, inputs: Sequence, params: Sequence = ()) -> Tensor | tuple:
    """Run `op` on `inputs` (Tensors or Python scalars) with non-tensor `params`; return Tensor(s)."""
    if _modes:  # some thread has a mode: this thread's stack decides (NOTE [ The mode stack ])
        return dispatch_modes(op, inputs, params)
    return _run(op, inputs, params)


#: what a mode handler calls to pass an op on: its own level is popped while it runs, so this goes down
redispatch = dispatch


# NOTE [ Higher-order ops ]
# A higher-order op (`autograd.Function.apply`) runs Python code on tensors, not a kernel on arrays, and
# records its own autograd node: its "kernel" takes the Tensors and returns Tensors. It is dispatched with
# `dispatch_higher_order`, so modes see it (inputs: its tensor arguments; params: the rest), and below the
# last mode it runs its kernel instead of `_run` (`_bottom`). With no mode active it costs one list test.
def dispatch_higher_order(op: OpDef, inputs: Sequence, params: Sequence = ()) -> Any:
    """`dispatch` for an op of kind HIGHER_ORDER: see NOTE [ Higher-order ops ]."""
    if _modes:
        # the body runs, below the last mode, with the stacks as they are here: modes see the op and its body
        _local.bodies.append((tuple(_local.above), tuple(_local.below)))
        try:
            return dispatch_modes(op, inputs, params)
        finally:
            _local.bodies.pop()
    return op.kernel(*inputs, *params)


def _bottom(op, inputs, params):
    """Below the last mode: the kernel, through `_run`, or a higher-order op's own body (run with the
    modes its dispatch started with back in place)."""
    if op.kind is not HIGHER_ORDER:
        return _run(op, inputs, params)
    if not _local.bodies:
        return op.kernel(*inputs, *params)
    above, below = _local.above, _local.below
    _local.above, _local.below = (list(m) for m in _local.bodies[-1])
    try:
        return op.kernel(*inputs, *params)
    finally:
        _local.above, _local.below = above, below


def _run(op, inputs, params, hooks=True):
    # Written flat on purpose: this function runs for every op, and each Python call costs ~60 ns.
    # `hooks=False`: a fake mode computing its own outputs (NOTE [ Fakes outside their mode ]).
    n = len(inputs)
    x = inputs[0] if n else None
    try:
        if op.promote is None:
            if n == 1 and type(x) is Tensor:
                out = op.kernel(x._data, *params)
            elif n == 0:  # creation ops
                out = op.kernel(*params)
            else:
                out = op.kernel(*[t._data if isinstance(t, Tensor) else t for t in inputs], *params)
            want = None
        elif n == 2 and type(x) is Tensor and type(inputs[1]) is Tensor \
                and x._data.dtype is inputs[1]._data.dtype and x._data.dtype in op.fast:
            out = op.kernel(x._data, inputs[1]._data, *params)
            want = None
        elif n == 1 and type(x) is Tensor and x._data.dtype in op.fast:
            out = op.kernel(x._data, *params)
            want = None
        else:
            arrays, want, strided = _promote(op, inputs)
            out = op.kernel(*arrays, *params)
            if strided and op.kind is POINTWISE and type(out) is _ndarray and not op.own_layout:
                out = torch_layout(out, [t._data for t in inputs if isinstance(t, Tensor)])
    except ValueError as e:  # NumPy's words for a broadcast mismatch (torch has its own), or a parameter
        raise _broadcast_error(inputs) or not_a_tensor(op, inputs, e) from None  # of a wrong type's
    except (AttributeError, TypeError) as e:  # NOTE [ Inputs that are not tensors ]
        raise not_a_tensor(op, inputs, e) from None
    except NoData:  # a meta payload: the op's meta rule gives the outputs (NOTE [ Meta payloads ])
        if hooks and _hooked and _hook_of(inputs) is not None:  # NOTE [ Fakes outside their mode ]
            return _run_below(op, inputs, params)
        out = run_meta(op, inputs, params)
        want = None
    except RuntimeWarning:  # a NumPy warning the user's filters made an error: see NOTE [ Quiet NumPy ]
        return _run_quiet(op, inputs, params)

    if type(out) is _ndarray and want is None:
        result = _new(Tensor)
        result._data = out
        if op.kind is VIEW:
            result._base = x._base if x._base is not None else x
    else:
        if hooks and _hooked and _hook_of(inputs) is not None:  # a kernel that answered from a fake's metadata
            return _run_below(op, inputs, params)               # (NOTE [ Fakes outside their mode ])
        try:
            result = _wrap_out(op, out, want, x)
        except RuntimeWarning:  # (the cast back to a narrow dtype can overflow)
            return _run_quiet(op, inputs, params)
    if _grad_state.enabled and op.differentiable:
        for t in inputs:
            if isinstance(t, Tensor) and t._requires_grad:
                _record(op, inputs, params, result)
                break
    return result


# NOTE [ Meta and CPU inputs together ]
# An op given meta tensors and CPU tensors of one or more dims refuses in torch when its meta kernel is
# TensorIterator's or checks devices ("Tensor on device cpu is not on the expected device meta!"), which is
# most ops and every derived rule. A few of torch's meta functions take the CPU tensor as it is (the
# probabilities of `bernoulli_(p)`, the source of `copy_`); their rules are declared with
# `meta_(mixed_devices=True)` and check what they need themselves. A 0-d CPU tensor is a scalar to all ops.
def run_meta(op: OpDef, inputs: Sequence, params: Sequence) -> MetaArray | tuple:
    """The outputs of `op` as meta payloads, from its meta rule."""
    if not op.meta_mixed:
        for t in inputs:
            if isinstance(t, Tensor) and type(t._data) is _ndarray and t._data.ndim:
                raise RuntimeError("Tensor on device cpu is not on the expected device meta!")
    rule = op.meta_rule()
    if rule is None:
        raise NotImplementedError(
            f"ember::{op.qualname}: attempted to run this operator with Meta tensors, but there was no meta rule "
            "registered")
    return rule(inputs, params)


def dispatch_modes(op: OpDef, inputs: Sequence, params: Sequence) -> Tensor | tuple:
    """`dispatch` when some thread has a mode: the top mode of this thread's stacks gets the op."""
    above = _local.above
    if above:
        mode = above.pop()  # a handler runs with itself popped (NOTE [ The mode stack ])
        try:
            return mode.dispatch(op, inputs, params)
        finally:
            above.append(mode)
    if _local.below or (_hooked and _hook_of(inputs) is not None):
        return _run_below(op, inputs, params)
    return _bottom(op, inputs, params)


def _run_below(op, inputs, params):
    """Below autograd: a mode (or a tensor subclass's hook) computes the outputs with recording off, then
    autograd records on them as on a kernel's."""
    if op.kind is HIGHER_ORDER and _local.below:  # its body records its own node (NOTE [ Higher-order ops ]),
        below = _local.below                      # so grad mode stays as the caller has it
        mode = below.pop()
        try:
            return mode.dispatch(op, inputs, params)
        finally:
            below.append(mode)
    enabled = _grad_state.enabled
    _grad_state.enabled = False
    try:
        below = _local.below
        if below:
            mode = below.pop()
            try:
                out = mode.dispatch(op, inputs, params)
            finally:
                below.append(mode)
        else:
            out = _call_hook(_hook_of(inputs), op, inputs, params)
    finally:
        _grad_state.enabled = enabled
    if enabled and op.differentiable:
        for t in inputs:
            if isinstance(t, Tensor) and t._requires_grad:
                _record(op, inputs, params, out)
                if op.save_output and type(out) is not Tensor and isinstance(out, Tensor):
                    _keep_subclass(out)
                break
    return out


def _hook_of(inputs):
    for t in inputs:
        if isinstance(t, Tensor) and type(t) is not Tensor:
            hook = getattr(type(t), "__ember_dispatch__", None)
            if hook is not None:
                return type(t)
    return None


def _call_hook(cls, op, inputs, params):
    """torch's `__torch_dispatch__(func, types, args, kwargs)` shape: `func(*args)` runs the op again."""
    types = tuple({type(t) for t in inputs if isinstance(t, Tensor) and type(t) is not Tensor})
    return cls.__ember_dispatch__(OpCall(op, len(inputs)), types, tuple(inputs) + tuple(params), {})


class OpCall:
    """An op as `__ember_dispatch__` / `__torch_dispatch__` receives it: callable on (inputs..., params...),
    printed as torch prints an OpOverload (`aten.add.Tensor`)."""

    __slots__ = ("op", "n_inputs")

    def __init__(self, op, n_inputs):
        self.op, self.n_inputs = op, n_inputs

    def __call__(self, *args, **kwargs):
        n = self.n_inputs
        return dispatch(self.op, args[:n], args[n:] + tuple(kwargs.values()))

    @property
    def __name__(self):
        return f"{self.op.name}.{self.op.overload or 'default'}"

    def name(self):
        return f"aten::{self.op.qualname}"

    @property
    def tags(self):
        return self.op.tags

    def __repr__(self):
        return f"aten.{self.__name__}"

    # (checkpointing, issue 21) calls of one op compare equal, as torch's OpOverload objects are one per op:
    # a selective-checkpoint policy tests `op in ops_to_save`
    def __eq__(self, other):
        return type(other) is type(self) and other.op is self.op

    def __hash__(self):
        return hash(self.op)
# NOTE [ Quiet NumPy ]
# torch computes 0/0, log(-1), float16 overflow and NaN casts silently; NumPy warns (RuntimeWarning). Two
# mechanisms keep those warnings from a user at no cost per op:
# - by default, a warnings filter on ember's own modules ignores them (ember/_ops/_util.py, NOTE
#   [ Floating-point warnings ]); a user's own NumPy code keeps its warnings;
# - where the user's filters turn warnings into errors (`python -W error`, `simplefilter("error")`,
#   pytest's `-W error` or `filterwarnings = error`), they take precedence over ember's filter and NumPy
#   raises the warning inside the kernel. `_run` catches it (a try costs nothing until something is
#   raised) and runs the op again with NumPy's floating-point errors off and RuntimeWarnings ignored.
#   Kernels are pure functions of their inputs, so running one twice gives the same result.
# Code that calls NumPy outside the dispatcher on values a user controls (clip_grad_norm_, optimizer
# steps, conversions) uses `quiet_numpy()` for the same reason.


def quiet_numpy():
    """A context in which NumPy neither warns nor raises about floating-point errors (torch is silent)."""
    return _Quiet()


class _Quiet:
    __slots__ = ("_err", "_cw")

    def __enter__(self):
        self._err = np.errstate(all="ignore")
        self._err.__enter__()
        self._cw = warnings.catch_warnings()
        self._cw.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)
        return self

    def __exit__(self, *exc):
        self._cw.__exit__(*exc)
        self._err.__exit__(*exc)
        return False


def _run_quiet(op, inputs, params):
    with _Quiet():
        return _run(op, inputs, params)


# NOTE [ Promoted layouts ]
# A pointwise op's result must have TensorIterator's strides (NOTE [ TensorIterator's output layout ] in
# ember/_meta.py). NumPy's ufuncs give the same for one input, or for inputs that agree on an order; the
# promoting path (casts, Python numbers, kernels written as several NumPy calls) also sees inputs whose
# cast copy NumPy lays out by another rule, and kernels that build a C-ordered result whatever the input.
# So there, and only there (the same-dtype fast path keeps NumPy's layout: checking every op's inputs
# would cost every op), a result is relaid when an input is not C-contiguous (`_promote`, which looks at
# each input anyway, says so). A kernel that follows another rule on purpose (torch's pow.Scalar allocates
# contiguous) sets `op.own_layout`.


# NOTE [ Inputs that are not tensors ]
# torch's argument parser refuses a None, a string or a list where an op takes a Tensor, and a number where
# only a Tensor will do, before any kernel runs: "abs(): argument 'input' (position 1) must be Tensor, not
# NoneType". ember's dispatcher takes Python numbers as inputs (they take part in promotion), so such a call
# reaches the promotion or the kernel and fails there with Python's words (an AttributeError of
# `None.dtype`, "unsupported operand type(s)"). Checking each input's type on every call would cost on the
# hot path; instead a failure is looked at again here, off it: an input that is not a Tensor is named in
# torch's words and class (TypeError). The parameter names are torch's usual `input` / `other` for the first
# two inputs, then the kernel's own.
def not_a_tensor(op, inputs, e: Exception) -> Exception:
    """The exception an op that failed with `e` on `inputs` raises (NOTE [ Inputs that are not tensors ])."""
    from ._argparse import call_error  # the user's call, checked against torch's signatures
    err = call_error(e, sys._getframe(1))
    # (NumPy's own TypeErrors are about dtypes, not inputs, unless a parameter of the wrong type reached the
    # kernel: a str `eps`, which the parser refuses above)
    if err is not e or type(e).__module__.startswith("numpy"):
        return err
    bad = next((i for i, t in enumerate(inputs) if not isinstance(t, (Tensor, bool, int, float, complex,
                                                                      np.number, np.bool_))), None)
    if bad is None and isinstance(e, AttributeError):  # a number where the kernel needed an array
        bad = next((i for i, t in enumerate(inputs) if not isinstance(t, Tensor)), None)
    # only an error about that very input (ops take None for an optional input, lists as static inputs)
    if bad is None or f"'{type(inputs[bad]).__name__}'" not in str(e) and "result_type()" not in str(e):
        return e
    names = op.signature(len(inputs), 0)[0]
    name = ("input", "other")[bad] if bad < 2 else names[bad]
    kind = type(inputs[bad])
    tname = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return TypeError(f"{op.name}(): argument '{name}' (position {bad + 1}) must be Tensor, not {tname}")


def _broadcast_error(inputs):
    """torch's RuntimeError for inputs whose shapes do not broadcast (None if they do)."""
    return broadcast_error([t._data.shape for t in inputs if isinstance(t, Tensor)])


def _wrap_out(op, out, want, x):
    """The slower wrapping cases: tuples of outputs, NumPy scalars, results that need a cast."""
    if type(out) is tuple:
        result = tuple(_wrap(o if type(o) is _ndarray or type(o) is MetaArray else _asarray(o)) for o in out)
        if want is not None:
            result = tuple(_wrap(r._data.astype(want, copy=False)) if r._data.dtype.kind == "f"
                           else r for r in result)
    else:
        if type(out) is not _ndarray and type(out) is not MetaArray:
            out = _asarray(out)
        if want is not None and out.dtype != want:
            out = out.astype(want)
        result = _wrap(out)
    if op.kind is VIEW:
        root = x._base if x._base is not None else x
        for r in (result if type(result) is tuple else (result,)):
            r._base = root
    return result


def _promote(op, inputs):
    """Cast inputs to torch's result dtype for `op`; return (arrays, dtype the result must have, whether an
    input tensor is not C-contiguous: NOTE [ Promoted layouts ])."""
    res = _dtypes.result_dtype(inputs)
    if op.promote == "float" and res._cat < 2:
        res = _dtypes.get_default_dtype()
    if op.dtypes is not None:
        check_dtypes(op, inputs, res)
    compute = res
    if (res is _dtypes.bfloat16 or res is _dtypes.float16) and op.kind == POINTWISE:
        compute = _dtypes.float32  # NOTE [ Half-precision math ]; a Python number stays float32 beside a
        # float16 tensor too, as torch keeps it: `half_tensor * 1e6` is 0 for zeros, `half * 1e-8` not 0
    np_compute = _dtypes.to_numpy(compute)
    arrays = []
    strided = False
    for t in inputs:
        if isinstance(t, Tensor):
            a = t._data
            if not a.flags.c_contiguous:
                strided = True
            if a.dtype != np_compute:
                if a.dtype == np.bool_ and op.name in _SUBS:
                    raise _bool_sub_error()
                # (NumPy's cast copies a stride-0 dim innermost; torch's kernels read the input as it is,
                # so the result is laid out from the input's own order: NOTE [ TensorIterator's output
                # layout ] in ember/_meta.py)
                a = like_array(a, np_compute) if strided else a.astype(np_compute)
            arrays.append(a)
        elif type(t) is float:
            arrays.append(t)
        elif type(t) is int:
            if compute._cat == 1:
                lo, hi = _INT_RANGE[np_compute]
                arrays.append(t if lo <= t <= hi else wrap_int(t, np_compute, inputs))
            else:
                arrays.append(t if -_2_63 <= t < _2_64 else wrap_int(t, np_compute))
        elif isinstance(t, np.generic):
            arrays.append(t.item())  # NumPy scalars act as Python numbers, as in torch
        elif isinstance(t, (bool, np.bool_)) and op.name in _SUBS:
            raise _bool_sub_error()
        elif isinstance(t, (bool, np.bool_)) and compute._cat > 0:
            arrays.append(int(t))
        else:
            arrays.append(t)
    want = np.dtype(np.bool_) if op.promote == "bool" else _dtypes.to_numpy(res)
    return arrays, want, strided


_SUBS = ("sub", "rsub")


def _bool_sub_error():
    return RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                        "invert a mask, use the `~` or `logical_not()` operator instead.")


# NOTE [ Python integers beside integer tensors ]
# torch converts a Python int operand to the tensor's dtype by wrapping (`uint8_tensor + 300` adds 44,
# `uint8_tensor - 1` adds 255, comparisons compare with the wrapped value too); NumPy refuses with an
# OverflowError. ints that fit no 64-bit type are torch's OverflowError whatever the dtype.
_2_63, _2_64 = 2 ** 63, 2 ** 64
_INT_RANGE = {np.dtype(n): (int(np.iinfo(n).min), int(np.iinfo(n).max))
              for n in ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")}


def wrap_int(value, np_dtype, inputs=()):
    """Python int `value` as a 0-d array of `np_dtype`, wrapped modulo 2**bits as torch converts it."""
    if -_2_63 <= value < _2_63:
        a = np.array(value, np.int64)
    elif _2_63 <= value < _2_64:  # torch holds it as a uint64 number, which only an integer tensor outranks
        if inputs and not any(isinstance(t, Tensor) and t._data.dtype != np.bool_ for t in inputs):
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to "
                               "promote Bool and UInt64")
        a = np.array(value, np.uint64)
    elif value >= _2_64:
        raise OverflowError("int too big to convert")
    else:
        raise OverflowError("can't convert negative int to unsigned")
    if np_dtype.kind not in "iu":
        return a.item()
    return a.astype(np_dtype)


# NOTE [ Autograd registers itself ]
# The dispatcher sits below autograd (docs/architecture.md), so it does not import it: autograd hands the
# dispatcher its three entry points when `ember.autograd.graph` is imported (`ember/__init__` imports autograd
# before any op can run), as torch's autograd kernels register under the dispatcher's Autograd key.
_record = _check_inplace = _rebase_history = _keep_subclass = None


def register_autograd(record: Callable, check_inplace: Callable, rebase_history: Callable,
                      keep_subclass: Callable | None = None) -> None:
    """Called once by ember.autograd.graph: how ops record nodes, check and rewrite history in place, and how
    a subclass's saved output keeps its class (NOTE [ Saved subclass outputs ] in autograd/graph.py)."""
    global _record, _check_inplace, _rebase_history, _keep_subclass
    _record, _check_inplace, _rebase_history = record, check_inplace, rebase_history
    _keep_subclass = keep_subclass


# ---- in-place and out= -------------------------------------------------------------------------------


def dispatch_inplace(op: OpDef, self: Tensor, inputs: Sequence, params: Sequence = ()) -> Tensor:
    """`self.op_(...)`: run `op` out of place on `inputs` (self first), write the result into self.

    Writing back keeps every view of self seeing the change; the version counter is bumped so saved
    tensors notice; with grad recording the history of self (or of its base, for a view) is rewritten.
    """
    if _modes:
        return inplace_modes(op, self, inputs, params)
    return _run_inplace(op, self, inputs, params)


redispatch_inplace = dispatch_inplace


def inplace_modes(op: OpDef, self: Tensor, inputs: Sequence, params: Sequence) -> Tensor:
    """`dispatch_inplace` when some thread has a mode (NOTE [ The mode stack ])."""
    above = _local.above
    if above:
        mode = above.pop()
        try:
            return mode.dispatch_inplace(op, self, inputs, params)
        finally:
            above.append(mode)
    below = _local.below
    if below:
        def write(op, self, inputs, params):
            mode = below.pop()
            try:
                mode.dispatch_inplace(op, self, inputs, params)
            finally:
                below.append(mode)
        return _run_inplace(op, self, inputs, params, write)
    return _run_inplace(op, self, inputs, params)


# NOTE [ Overlap is checked first ]
# torch's in-place ops refuse to write into a tensor with internal overlap (an expanded, stride-0 view)
# before anything else of the op is checked: TensorIterator's build checks the outputs' memory before it
# broadcasts shapes or computes dtypes, so `expanded.add_(wrong_shape)` and `expanded_byte.add_(0.5)` both
# say "more than one element of the written-to tensor refers to a single memory location". ember computes
# out of place and then writes (`copy_into` refuses a read-only, overlapping destination); so that the
# overlap still wins, a failure of the computation is looked at again, off the fast path: if the
# destination overlaps, the overlap error is raised in place of the computation's (argument-type errors,
# which torch's parser raises before any kernel runs, stay as they are).
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


#: the in-place ops torch lets write into an overlapping tensor: every alias of a location gets one value
WRITES_OVERLAP = frozenset(("fill_", "zero_"))


def writeable_alias(a: np.ndarray) -> np.ndarray:
    """A writeable view of the read-only (expanded) array `a`, for the ops of WRITES_OVERLAP: `a`'s shape and
    strides over the memory of its first writeable, contiguous ancestor (the storage's buffer)."""
    root = a.base
    while isinstance(root, _ndarray) and not (root.flags.writeable and root.flags.c_contiguous):
        root = root.base
    if not isinstance(root, _ndarray):
        raise RuntimeError(OVERLAP)
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return _ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)


def overlaps(t) -> bool:
    """Whether writing into tensor `t` would write one memory location twice (a stride-0 view)."""
    data = t._data
    return type(data) is _ndarray and not data.flags.writeable


def overlap_instead(e: Exception, targets) -> Exception:
    """The exception an in-place op that failed with `e` raises: torch's overlap error when one of the written
    tensors overlaps (NOTE [ Overlap is checked first ]), else `e` itself."""
    if not isinstance(e, TypeError) and any(overlaps(t) for t in targets if isinstance(t, Tensor)):
        return RuntimeError(OVERLAP)
    return e


def _write(op, self, inputs, params):
    try:
        out = _run(op, inputs, params)
    except Exception as e:  # off the fast path: see NOTE [ Overlap is checked first ]
        err = overlap_instead(e, (self,))
        if err is e:
            raise
        raise err from None
    try:
        copy_into(self, out._data, op.name)
    except NoData:  # a fake result for a real self, outside the fake's mode: NOTE [ Fakes outside their mode ]
        if not (_hooked and _hook_of((out,)) is not None):
            raise
        out.fake_mode.write_into_real(self)


# NOTE [ Kernels that write their inputs ]
# Most in-place ops go through `dispatch_inplace`: the op runs out of place and the write is the dispatcher's,
# so a mode sees an in-place call and a tracer records `aten.<op>_`, which functionalization undoes. A few
# kernels write into their input arrays themselves (the in-place foreach ops, one kernel over a whole list,
# with an `inplace` param). Such an op declares `op.writes = rule`, `rule(inputs, params)` giving None (this
# call writes nothing) or `(indices of the inputs it writes, params of the same op computing those values out
# of place)`. A tracer records that functional call, each written input then standing for its result, as
# torch's functionalization replaces `_foreach_add_` by `_foreach_add` and copies back.


# NOTE [ The old value under a mode ]
# An in-place op whose derivative reads its input saves a copy of self taken before the write. With a mode
# below autograd (a tracer, fake tensors) that copy is a `clone` op dispatched through it, so a tracer sees
# where the saved value came from (a graph node, not a constant baked from an array it never saw made), and
# a fake self gets a fake copy rather than the payload the write is about to rebind.
def _old_value(self):
    _grad_state.enabled, enabled = False, _grad_state.enabled
    try:
        return dispatch(registry["clone"], (self,))._data
    finally:
        _grad_state.enabled = enabled


def _run_inplace(op, self, inputs, params, write=_write):
    recording = _grad_state.enabled and op.differentiable and any(
        isinstance(t, Tensor) and t._requires_grad for t in inputs)
    _check_inplace(self, recording)
    if not recording:
        if write is _write:
            write(op, self, inputs, params)
        else:  # a mode below autograd writes with recording off, as its own calls must not record
            _grad_state.enabled, enabled = False, _grad_state.enabled
            try:
                write(op, self, inputs, params)
            finally:
                _grad_state.enabled = enabled
        return self
    old_data = None
    if op.saves == "all":
        old_data = _old_value(self) if write is not _write else \
            self._data.copy() if type(self._data) is _ndarray else None
    _grad_state.enabled = False
    try:
        write(op, self, inputs, params)
    finally:
        _grad_state.enabled = True
    _rebase_history(op, self, inputs, params, old_data)
    return self


def copy_into(self: Tensor, src: np.ndarray | MetaArray, opname: str = "copy_") -> None:
    """Write array `src` into self's memory with torch's casting check, bumping the version."""
    dst = self._data
    if type(dst) is MetaArray or type(src) is MetaArray:
        return _copy_meta(self, src, opname)
    if not dst.flags.writeable:  # NOTE [ Overlap is checked first ]
        if opname not in WRITES_OVERLAP:
            raise RuntimeError(OVERLAP)
        dst = writeable_alias(dst)
    if src.dtype != dst.dtype and not _dtypes.can_cast(_dtypes.from_numpy(src.dtype), _dtypes.from_numpy(dst.dtype)) \
            and opname != "copy_":
        raise RuntimeError(
            f"result type {_dtype_word(src.dtype)} can't be cast to the desired output type {_dtype_word(dst.dtype)}")
    if src.shape != dst.shape:
        try:
            src = np.broadcast_to(src, dst.shape)
        except ValueError:
            raise RuntimeError(
                f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                f"{list(np.broadcast_shapes(src.shape, dst.shape))}") from None
    try:
        np.copyto(dst, src, casting="unsafe")
    except RuntimeWarning:  # a NaN or overflowing cast under an "error" filter: NOTE [ Quiet NumPy ]
        with _Quiet():
            np.copyto(dst, src, casting="unsafe")
    vc = _version_counter(self)
    vc[0] += 1


def _copy_meta(self, src, opname):
    """copy_into with a meta payload on either side: the same checks, no data moves."""
    dst = self._data
    if type(dst) is not MetaArray:
        raise NoData()  # copying out of a meta tensor into a real one
    if src.dtype != dst.dtype and opname != "copy_" and not _dtypes.can_cast(
            _dtypes.from_numpy(src.dtype), _dtypes.from_numpy(dst.dtype)):
        raise RuntimeError(
            f"result type {_dtype_word(src.dtype)} can't be cast to the desired output type {_dtype_word(dst.dtype)}")
    try:
        shape = np.broadcast_shapes(src.shape, dst.shape)
    except ValueError:
        shape = None
    if shape != dst.shape:
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                           f"{list(np.broadcast_shapes(src.shape, dst.shape)) if shape else list(src.shape)}")
    _version_counter(self)[0] += 1


_WORDS = _dtypes._WORD


def _dtype_word(np_dtype):
    return _WORDS.get(np.dtype(np_dtype).name, str(np_dtype))


def dtype_word(d: _dtypes.dtype) -> str:
    """torch's C++ name for a dtype ("Float", "Long"), used in many error messages."""
    return _WORDS[d.name]
