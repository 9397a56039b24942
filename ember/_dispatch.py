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

import warnings

import numpy as np

from . import _dtypes
from ._tensor import Tensor, _version_counter, _wrap
from .autograd.grad_mode import state as _grad_state

_new = object.__new__
__all__ = ["OpDef", "defop", "dispatch", "dispatch_inplace", "push_mode", "pop_mode"]

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
    """

    __slots__ = ("name", "kernel", "kind", "node_name", "promote", "saves", "save_output", "derivative",
                 "node_cls", "fast", "differentiable")

    def __init__(self, name, kernel, kind, node_name, promote, saves, save_output):
        self.name = name
        self.kernel = kernel
        self.kind = kind
        self.node_name = node_name
        self.promote = promote
        self.saves = saves
        self.save_output = save_output
        self.derivative = None
        self.node_cls = None
        self.differentiable = node_name is not None
        self.fast = _FAST[promote]

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


def defop(name, node_name=None, kind=OTHER, promote=None, saves="all", save_output=False):
    """Declare an op from its NumPy kernel: ``@defop("mul", "MulBackward0", POINTWISE, "same")``."""
    def deco(kernel):
        return OpDef(name, kernel, kind, node_name, promote, saves, save_output)
    return deco


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
    except RuntimeWarning:  # a NumPy warning the user's filters made an error: see NOTE [ Quiet NumPy ]
        return _run_quiet(op, inputs, params)

    if type(out) is _ndarray and want is None:
        result = _new(Tensor)
        result._data = out
        if op.kind is VIEW:
            result._base = x._base if x._base is not None else x
    else:
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


def _promote(op, inputs):
    """Cast inputs to torch's result dtype for `op`; return (arrays, dtype the result must have)."""
    res = _dtypes.result_dtype(inputs)
    if op.promote == "float" and res._cat < 2:
        res = _dtypes.get_default_dtype()
    compute = res
    if res is _dtypes.bfloat16 and op.kind == POINTWISE:
        compute = _dtypes.float32  # ml_dtypes' bfloat16 math is slow: compute wide, round once (as torch)
    elif res is _dtypes.float16 and op.kind == POINTWISE and not all(isinstance(t, Tensor) for t in inputs):
        compute = _dtypes.float32  # torch keeps a Python number in float32 beside a float16 tensor:
        # `half_tensor * 1e6` is 0 for zeros, not 0 * inf; `half_tensor * 1e-8` is not 0
    np_compute = _dtypes.to_numpy(compute)
    arrays = []
    for t in inputs:
        if isinstance(t, Tensor):
            a = t._data
            if a.dtype != np_compute:
                if a.dtype == np.bool_ and op.name in _SUBS:
                    raise _bool_sub_error()
                a = a.astype(np_compute)
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
    return arrays, want


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
    try:
        np.copyto(dst, src, casting="unsafe")
    except RuntimeWarning:  # a NaN or overflowing cast under an "error" filter: NOTE [ Quiet NumPy ]
        with _Quiet():
            np.copyto(dst, src, casting="unsafe")
    vc = _version_counter(self)
    vc[0] += 1


_WORDS = _dtypes._WORD


def _dtype_word(np_dtype):
    return _WORDS.get(np.dtype(np_dtype).name, str(np_dtype))


def dtype_word(d):
    """torch's C++ name for a dtype ("Float", "Long"), used in many error messages."""
    return _WORDS[d.name]
