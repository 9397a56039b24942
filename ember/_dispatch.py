"""The dispatcher: the one entry every op goes through, and how an op is declared.

An op is declared once (see `defop`): a kernel over NumPy arrays, the name of its backward node as torch
prints it, its kind, how it promotes dtypes, and (with `@op.derivative`) its backward formula written in
ember ops. `dispatch(op, inputs, params)` then does, with no mode active:

    promote the inputs' dtypes -> run the kernel -> wrap the outputs -> record a backward Node
                                                                     (only if grad mode is on and an
                                                                      input requires grad)

Modes (autocast, tracing, profiling, anomaly detection, inference mode) are handler objects on a stack;
when the stack is non-empty the top handler gets the call and decides what to do, usually calling
`redispatch` to run the next one down. A new mode is a new handler, never a new branch here.
"""

import numpy as np

from . import _dtypes
from ._tensor import Tensor, _version_counter, _wrap
from .autograd.grad_mode import state as _grad_state

_new = object.__new__
__all__ = ["OpDef", "defop", "dispatch", "dispatch_inplace", "push_mode", "pop_mode", "require_dtype",
           "require_op_dtype", "not_implemented"]

POINTWISE, REDUCTION, VIEW, MATMUL, SHAPE, INDEXING, CREATION, NN, OTHER = (
    "pointwise", "reduction", "view", "matmul", "shape", "indexing", "creation", "nn", "other")

_ndarray = np.ndarray
_asarray = np.asarray
_modes = []  # the mode stack; see push_mode


class OpDef:
    """One op: its kernel, backward formula, kind and torch's backward-node name.

    promote: None (kernel takes inputs as they are), "same" (inputs cast to torch's result dtype),
    "float" (like "same" but integer results become the default float dtype: div, exp, sqrt), or
    "bool" (inputs promoted together, result is bool: comparisons).
    saves: which inputs the backward formula needs ("all" or "none"); save_output: it needs the output.
    dtypes: the dtype names torch's CPU kernel accepts (None: all); dtype_error: what it raises for the
    others; inputs_checked: dtypes is checked on each input rather than the computed dtype, see NOTE
    [ Accepted dtypes ].
    """

    __slots__ = ("name", "kernel", "kind", "node_name", "promote", "saves", "save_output", "derivative",
                 "node_cls", "fast", "differentiable", "dtypes", "dtype_error", "inputs_checked")

    def __init__(self, name, kernel, kind, node_name, promote, saves, save_output, dtypes=None,
                 dtype_error=None, inputs_checked=False):
        self.name = name
        self.dtypes = dtypes
        self.dtype_error = dtype_error
        self.inputs_checked = inputs_checked
        if dtypes is not None and promote is None:
            kernel = _checked(kernel, dtypes, dtype_error)
        self.kernel = kernel
        self.kind = kind
        self.node_name = node_name
        self.promote = promote
        self.saves = saves
        self.save_output = save_output
        self.derivative = None
        self.node_cls = None
        self.differentiable = node_name is not None
        self.fast = _FAST[promote] if dtypes is None else frozenset(
            d for d in _FAST[promote] if d.name in dtypes)

    def defines_derivative(self, fn):
        """Decorator: the backward formula `fn(grad, *inputs, *params[, out=...]) -> grads per input`.

        The node class (named as torch names it) is made when the op first records, which keeps the
        hundreds of op declarations cheap at import.
        """
        self.derivative = fn
        return fn

    derivative_ = defines_derivative

    def __repr__(self):
        return f"<op {self.name}>"


# dtypes a kernel runs natively, per promotion mode: same-dtype inputs of these skip promotion entirely
_FLOATS = frozenset(np.dtype(n) for n in ("float16", "float32", "float64", "complex64", "complex128"))
_ALL = _FLOATS | frozenset(np.dtype(n) for n in ("bool", "uint8", "int8", "int16", "int32", "int64"))
_FAST = {None: frozenset(), "float": _FLOATS, "same": _ALL, "bool": _ALL}

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
# `require_op_dtype` with the op they are built on.
BOOL = frozenset({"bool"})
INTEGRAL = frozenset({"uint8", "int8", "int16", "int32", "int64"})
FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
COMPLEX = frozenset({"complex64", "complex128"})
REAL = BOOL | INTEGRAL | FLOATING  # torch's AT_DISPATCH_ALL_TYPES_AND2(Bool, Half, BFloat16...) family
NUMERIC = INTEGRAL | FLOATING | COMPLEX  # everything but bool
FLOATING_COMPLEX = FLOATING | COMPLEX
ALL_DTYPES = REAL | COMPLEX


def defop(name, node_name=None, kind=OTHER, promote=None, saves="all", save_output=False, dtypes=None,
          error=None, check="result"):
    """Declare an op from its NumPy kernel: ``@defop("mul", "MulBackward0", POINTWISE, "same")``.

    dtypes/error: the dtypes torch accepts and what it raises for the others (NOTE [ Accepted dtypes ]).
    """
    def deco(kernel):
        return OpDef(name, kernel, kind, node_name, promote, saves, save_output, dtypes, error,
                     check == "inputs")
    return deco


def not_implemented(kernel_name, d):
    """torch's `"<kernel_name>" not implemented for '<Dtype>'` for ember dtype `d`."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{_WORDS[d.name]}\'')


def dtype_error(error, d, args=()):
    """The exception torch raises for dtype `d` (an ember or NumPy dtype) per an op's `error`.

    A callable `error` gets the dtype and, for an op without promotion, the kernel's arguments (softmax's
    kernel name depends on its dim).
    """
    d = d if isinstance(d, _dtypes.dtype) else _dtypes.from_numpy(d)
    if isinstance(error, str):
        return not_implemented(error, d)
    return error(d, *args)


def require_dtype(t, dtypes, error, *others):
    """At a composite's entry: raise torch's error unless tensor `t`'s dtype (or, given `others`, the
    dtype `t` and `others` promote to) is in `dtypes`."""
    d = t._data.dtype if not others else _dtypes.result_dtype((t,) + others)
    if d.name not in dtypes:
        raise dtype_error(error, d) from None


def require_op_dtype(op, d, args=()):
    """Raise `op`'s declared dtype error unless it accepts ember dtype `d`: for a composite that must check
    the dtype before its own argument checks, as torch does, without declaring the dtypes twice."""
    if op.dtypes is not None and d.name not in op.dtypes:
        raise dtype_error(op.dtype_error, d, args) from None


def _checked(kernel, dtypes, error):
    """`kernel` guarded by the dtype check of its first array argument (ops without promotion)."""
    def checked(*args):
        for a in args:
            if type(a) is _ndarray:
                if a.dtype.name not in dtypes:
                    raise dtype_error(error, a.dtype, args) from None
                break
        return kernel(*args)
    checked.__wrapped__ = kernel
    checked.__name__ = getattr(kernel, "__name__", "kernel")
    return checked


def push_mode(handler):
    """Put a mode handler on top of the stack; it receives every `dispatch` until popped."""
    _modes.append(handler)


def pop_mode(handler=None):
    h = _modes.pop()
    assert handler is None or h is handler, "mode stack popped out of order"
    return h


def current_modes():
    return tuple(_modes)


# ---- the fast path ------------------------------------------------------------------------------------


def dispatch(op, inputs, params=()):
    """Run `op` on `inputs` (Tensors or Python scalars) with non-tensor `params`; return Tensor(s)."""
    if _modes:
        return _modes[-1].dispatch(op, inputs, params, len(_modes) - 1)
    return _run(op, inputs, params)


def redispatch(op, inputs, params, level):
    """Called by the mode handler at stack position `level` to pass the op to the next one down."""
    if level:
        return _modes[level - 1].dispatch(op, inputs, params, level - 1)
    return _run(op, inputs, params)


def _run(op, inputs, params):
    # Written flat on purpose: this function runs for every op, and each Python call costs ~60 ns.
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
            arrays, want = _promote(op, inputs)
            out = op.kernel(*arrays, *params)
    except ValueError as e:  # NumPy's words for a broadcast mismatch; torch has its own
        raise _broadcast_error(inputs) or e from None

    if type(out) is _ndarray and want is None:
        result = _new(Tensor)
        result._data = out
        if op.kind is VIEW:
            result._base = x._base if x._base is not None else x
    else:
        result = _wrap_out(op, out, want, x)
    if _grad_state.enabled and op.differentiable:
        for t in inputs:
            if isinstance(t, Tensor) and t._requires_grad:
                _record(op, inputs, params, result)
                break
    return result


def _broadcast_error(inputs):
    """torch's RuntimeError for inputs whose shapes do not broadcast (None if they do)."""
    shapes = [t._data.shape for t in inputs if isinstance(t, Tensor)]
    for i in range(1, len(shapes)):
        a, b = shapes[0], shapes[i]
        n = max(len(a), len(b))
        for k in range(1, n + 1):
            sa = a[-k] if k <= len(a) else 1
            sb = b[-k] if k <= len(b) else 1
            if sa != sb and sa != 1 and sb != 1:
                return RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                                    f"non-singleton dimension {n - k}")
    return None


def _wrap_out(op, out, want, x):
    """The slower wrapping cases: tuples of outputs, NumPy scalars, results that need a cast."""
    if type(out) is tuple:
        result = tuple(_wrap(o if type(o) is _ndarray else _asarray(o)) for o in out)
        if want is not None:
            result = tuple(_wrap(r._data.astype(want, copy=False)) if r._data.dtype.kind == "f"
                           else r for r in result)
    else:
        if type(out) is not _ndarray:
            out = _asarray(out)
        if want is not None and out.dtype != want:
            out = out.astype(want)
        result = _wrap(out)
    if op.kind is VIEW:
        root = x._base if x._base is not None else x
        for r in (result if type(result) is tuple else (result,)):
            r._base = root
    return result


_INT_RANGE = {np.dtype(n): (int(np.iinfo(n).min), int(np.iinfo(n).max))
              for n in ("uint8", "int8", "int16", "int32", "int64")}


def _promote(op, inputs):
    """Cast inputs to torch's result dtype for `op`; return (arrays, dtype the result must have)."""
    res = _dtypes.result_dtype(inputs)
    if op.promote == "float" and res._cat < 2:
        res = _dtypes.get_default_dtype()
    if op.dtypes is not None:
        if op.inputs_checked:
            for t in inputs:
                if isinstance(t, Tensor) and t._data.dtype.name not in op.dtypes:
                    raise dtype_error(op.dtype_error, t._data.dtype, inputs)
        elif res.name not in op.dtypes:
            raise dtype_error(op.dtype_error, res)
    compute = res
    if res is _dtypes.bfloat16 and op.kind == POINTWISE:
        compute = _dtypes.float32  # ml_dtypes' bfloat16 math is slow: compute wide, round once (as torch)
    np_compute = _dtypes.to_numpy(compute)
    arrays = []
    for t in inputs:
        if isinstance(t, Tensor):
            a = t._data
            arrays.append(a if a.dtype == np_compute else a.astype(np_compute))
        elif isinstance(t, np.generic):
            arrays.append(t.item())  # NumPy scalars act as Python numbers, as in torch
        elif compute._cat == 1 and isinstance(t, int) and not _INT_RANGE[np_compute][0] <= t <= \
                _INT_RANGE[np_compute][1]:  # wraps like torch (uint8 == -1 is == 255); NumPy would raise
            arrays.append(np.array(t, np.int64).astype(np_compute) if -2**63 <= t < 2**63 else t)
        elif isinstance(t, (bool, np.bool_)) and compute._cat > 0:
            arrays.append(int(t))
        else:
            arrays.append(t)
    want = np.dtype(np.bool_) if op.promote == "bool" else _dtypes.to_numpy(res)
    return arrays, want


def _record(op, inputs, params, result):
    global _record
    from .autograd.graph import record

    _record = record  # bound on first use (autograd imports this module); later calls go straight there
    record(op, inputs, params, result)


# ---- in-place and out= -------------------------------------------------------------------------------


def dispatch_inplace(op, self, inputs, params=()):
    """`self.op_(...)`: run `op` out of place on `inputs` (self first), write the result into self.

    Writing back keeps every view of self seeing the change; the version counter is bumped so saved
    tensors notice; with grad recording the history of self (or of its base, for a view) is rewritten.
    """
    if _modes:
        return _modes[-1].dispatch_inplace(op, self, inputs, params, len(_modes) - 1)
    return _run_inplace(op, self, inputs, params)


def redispatch_inplace(op, self, inputs, params, level):
    """Like `redispatch`, for the in-place entry."""
    if level:
        return _modes[level - 1].dispatch_inplace(op, self, inputs, params, level - 1)
    return _run_inplace(op, self, inputs, params)


def _run_inplace(op, self, inputs, params):
    from .autograd.graph import check_inplace, rebase_history

    recording = _grad_state.enabled and op.differentiable and any(
        isinstance(t, Tensor) and t._requires_grad for t in inputs)
    check_inplace(self, recording)
    if not recording:
        result = _run(op, inputs, params)
        copy_into(self, result._data, op.name)
        return self
    _grad_state.enabled = False
    try:
        result = _run(op, inputs, params)
    finally:
        _grad_state.enabled = True
    old_data = self._data.copy() if op.saves == "all" else None
    copy_into(self, result._data, op.name)
    rebase_history(op, self, inputs, params, old_data)
    return self


def copy_into(self, src, opname="copy_"):
    """Write array `src` into self's memory with torch's casting check, bumping the version."""
    dst = self._data
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
    if not dst.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")
    np.copyto(dst, src, casting="unsafe")
    vc = _version_counter(self)
    vc[0] += 1


_WORDS = _dtypes._WORD


def _dtype_word(np_dtype):
    return _WORDS.get(np.dtype(np_dtype).name, str(np_dtype))


def dtype_word(d):
    """torch's C++ name for a dtype ("Float", "Long"), used in many error messages."""
    return _WORDS[d.name]
