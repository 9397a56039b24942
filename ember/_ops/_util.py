"""Small helpers the op modules share: publishing functions as Tensor methods, dim/shape checks."""

import sys
import warnings

import numpy as np

from .._argparse import call_error
from .._dispatch import _modes, copy_into, dispatch, dispatch_inplace
from .._size import Size
from .._tensor import Tensor, _wrap, _wrap_dim, contiguous_strides
from ..autograd.grad_mode import state as _grad_state

__all__ = ["method", "public", "wrap_dim", "as_shape", "finish_out", "inplace_method", "Tensor", "_wrap",
           "dispatch", "dispatch_inplace", "Size"]

# NOTE [ Floating-point warnings ]
# torch computes 0/0, log(-1) and overflow silently; NumPy warns. Wrapping each kernel in np.errstate
# costs 1.5 us per op, so instead the warnings are filtered for ember's own modules only: a user's own
# NumPy code keeps its warnings, and the per-op cost is zero. The filter names every ember module, not
# only the op modules: NumPy charges a warning to the Python frame that called the ufunc, which is
# `ember._dispatch` when a kernel is a bare ufunc (`np.multiply`), and nn/optim code calls NumPy too.
# Filters a user puts in front ("error") win over this one; the dispatcher handles that case
# (NOTE [ Quiet NumPy ] in ember/_dispatch.py).
# A `warnings.catch_warnings()` block entered before ember was imported drops the filter when it exits
# (pytest's per-test capture does so when ember is first imported during collection); under such a
# harness NumPy's warnings are reported again, and `quiet_warnings()` puts the filter back.


def quiet_warnings():
    """Install the filter that hides NumPy's floating-point RuntimeWarnings raised inside ember."""
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember(\.|$)")


quiet_warnings()

#: names the op modules export at ember's top level (collected by ember/__init__.py)
public = {}

# NOTE [ Composites that read data under vmap ]
# Some ops are Python functions that check or compute on their inputs' values before (or instead of)
# dispatching: take's index range, normal's std >= 0, quantile's empty rows, lstsq's rank and residuals,
# histogram's range, ctc_loss's lengths. Inside vmap those inputs are BatchedTensors,
# which have no data. torch runs such checks inside its kernels, per sample; ember runs the whole function
# per sample: `per_sample(fn, args)` (ember/func/_batched.py registers it here when ember.func is first
# imported, since no vmap can be alive before) finds the innermost vmap level among the arguments, runs
# `fn` on each sample's physical slices with that level off the stack, and stacks the results at the
# level; it answers NotImplemented when no argument is batched. Callers ask only `if _modes:` first, so
# without a mode the functions pay one truth test. A random function (`random=True`) follows the vmap's
# randomness (an error, or a draw per sample; "same" refuses, as torch's rules do for a batched tensor
# input); an in-place one (`inplace=True`, or the op's name for torch's message) writes into each sample
# of self, and refuses as torch does when only another argument is batched. An op that torch's vmap
# refuses whatever the data ("requires special handling") calls `refuse_under_vmap(name, args)` at its
# entry instead (as_strided_scatter).
_vmap_per_sample = [None, None]  # (per_sample, refuse), from ember/func/_batched.py


def per_sample(fn, args, kwargs=None, *, random=False, inplace=False):
    """`fn(*args, **kwargs)` run per sample when an argument is a BatchedTensor, else NotImplemented (NOTE
    [ Composites that read data under vmap ]). Callers test `if _modes:` first."""
    hook = _vmap_per_sample[0]
    if hook is None:
        return NotImplemented
    return hook(fn, args, kwargs or {}, random, inplace)


def refuse_under_vmap(name, args, kind="special"):
    """Raise torch's vmap error for op `name`, which has no batching rule in torch, when one of `args` (or a
    tensor in a list among them) is a BatchedTensor. `kind`: "special" (torch's vmapErrorFallback),
    "no_fallback" (its loop fallback cannot run an op over lists of tensors or returning a non-tensor),
    "out" (nor an out= op). Callers test `if _modes:` first."""
    hook = _vmap_per_sample[1]
    if hook is not None:
        hook(name, args, kind)



def method(*names, top=True):
    """Decorator: make `fn` a Tensor method under `names` (default: its own name) and, if `top`, a
    function at ember's top level."""
    def deco(fn):
        if fn.__code__.co_name != fn.__name__:  # a factory-made function: tracebacks and errors show its name
            names_ = {"co_name": fn.__name__}
            if hasattr(fn.__code__, "co_qualname"):  # (3.11+; 3.10's tracebacks show co_name only)
                names_["co_qualname"] = fn.__name__
            fn.__code__ = fn.__code__.replace(**names_)
        fn = typed(fn)  # NOTE [ Typed arguments ]
        for n in names or (fn.__name__,):
            setattr(Tensor, n, fn)
        if top:
            public[fn.__name__] = fn
        return fn
    return deco


def inplace_method(name, op, prepare=None):
    """Define `Tensor.name` (e.g. `add_`) as the in-place form of dispatched op `op`."""
    def fn(self, *args, **kwargs):
        inputs, params = prepare(self, *args, **kwargs) if prepare else ((self,) + args, ())
        return dispatch_inplace(op, self, inputs, params)
    fn.__name__ = name
    setattr(Tensor, name, fn)
    return fn


def wrap_dim(dim, ndim):
    return _wrap_dim(dim, ndim)


# NOTE [ Argument types in torch's words ]
# torch's argument parser checks each argument's type before anything runs and names it: "max_pool2d():
# argument 'kernel_size' (position 2) must be tuple of ints, not str". Where ember's Python functions bind
# such an argument (an int tuple, a bool flag) the helpers below do the same check, on the argument-binding
# path that runs once per call (no dispatch, no kernel), and raise torch's TypeError with its words.
def type_name(value) -> str:
    """The type name torch's messages print (Python's tp_name: `NoneType`, `str`, `numpy.int64`)."""
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def arg_type_error(fn, arg, pos, expected, value, element=None) -> TypeError:
    """torch's TypeError for argument `arg` (at 1-based `pos`, None: passed by keyword) of `fn`."""
    where = f"{fn}(): argument '{arg}'" + (f" (position {pos})" if pos else "")
    if element is not None:  # (torch's words for a bad element name the argument's position, not the element's)
        e = TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {pos} with error \"type must "
                      f"be {expected},but got {type_name(value)}\"")
    else:
        e = TypeError(f"{where} must be {expected}, not {type_name(value)}")
    return call_error(e, sys._getframe(1))  # torch's table, where it has the user's call, knows keyword from position


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def int_tuple(v, n, fn, arg, pos):
    """`v` (an int, or a sequence of one or `n` ints) as an n-tuple; anything else is torch's TypeError for a
    `tuple of ints` argument (NOTE [ Argument types in torch's words ])."""
    if isinstance(v, (tuple, list, Size)):
        for i, x in enumerate(v):
            if not _is_int(x):
                raise arg_type_error(fn, arg, pos, "tuple of ints", x, element=i)
        return tuple(int(x) for x in v) if len(v) != 1 else (int(v[0]),) * n
    try:
        if not _is_int(v):
            raise arg_type_error(fn, arg, pos, "tuple of ints", v)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return (int(v),) * n


def check_bool(v, fn, arg, pos):
    """torch's TypeError for a `bool` argument given anything but a bool."""
    try:
        if not isinstance(v, (bool, np.bool_)):
            raise arg_type_error(fn, arg, pos, "bool", v)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


# NOTE [ Typed arguments ]
# torch's parser refuses a flag that is not a bool (`topk(x, 2, largest="no")`) and an int argument given a
# bool, float or None (`triu(x, 1.5)`) before anything runs; Python takes them silently, by truthiness or as
# numbers, so an op whose argument goes straight to its kernel answered where torch raises. An op's public
# function declares such arguments with annotations (`largest: bool = True`, `k: int`, `n: "int | None"`,
# `stable: "bool | None"` where torch's takes None), and `typed` (applied by `method`, or as a decorator)
# puts in front of it a wrapper made for its signature: one identity or class test per declared argument,
# `x is True or x is False` for a bool, `x.__class__ is int` for an int, so that a valid call pays those
# tests and one call. Anything else takes the slow path,
# `_refuse`: what torch's parser also takes (a NumPy integer or a 0-d integer tensor for an int)
# passes on, the rest raises torch's TypeError in its words, found by replaying its parser on the user's
# call (NOTE [ Argument types on the error path ] in ember/_argparse.py). Dims go through `wrap_dim`, which
# refuses a bool itself; undeclared arguments are as before.
_KINDS = {bool: "bool", int: "int", "bool": "bool", "int": "int", "int | None": "int?",
          "bool | None": "bool?"}
_TEST = {"bool": "({0} is not True and {0} is not False)", "int": "{0}.__class__ is not int",
         "int?": "({0} is not None and {0}.__class__ is not int)",
         "bool?": "({0} is not None and {0} is not True and {0} is not False)"}


def _accepted(kind, v):
    """Whether torch's parser takes `v` for an argument of `kind` that failed the fast test (PythonArgs)."""
    if v is None:
        return kind.endswith("?")
    if kind.startswith("bool"):  # (torch's takes a Python bool only, not a NumPy bool)
        return isinstance(v, bool)
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, (int, np.integer)):
        return True
    return isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point() and not v.is_complex() \
        and v.dtype.name != "bool"


def _refuse(fn, checks):
    """The slow path of a `typed` wrapper: torch's TypeError for the first argument torch refuses."""
    for name, kind, v in checks:
        if not _accepted(kind, v):
            want = kind.rstrip("?")
            e = TypeError(f"{fn}(): argument '{name}' must be {want}, not {type_name(v)}")
            raise call_error(e, sys._getframe(1)) from None


def typed(fn):
    """`fn` behind a wrapper that checks its annotated bool and int arguments (NOTE [ Typed arguments ]);
    `fn` itself when it declares none."""
    ann = getattr(fn, "__annotations__", None) or {}
    kinds = {n: _KINDS[a] for n, a in ann.items() if isinstance(a, (str, type)) and a in _KINDS}
    if not kinds:
        return fn
    code = fn.__code__
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames[:npos + nkw]
    star = code.co_varnames[npos + nkw] if code.co_flags & 0x04 else None
    starstar = code.co_varnames[npos + nkw + bool(star)] if code.co_flags & 0x08 else None
    env = {"__name__": fn.__module__, "_fn": fn, "_refuse": _refuse}
    defaults = fn.__defaults__ or ()
    first = npos - len(defaults)
    params, call = [], []
    for i, n in enumerate(names[:npos]):
        if i >= first:
            env[f"_d{i}"] = defaults[i - first]
        params.append(f"{n}=_d{i}" if i >= first else n)
        call.append(n)
        if code.co_posonlyargcount and i + 1 == code.co_posonlyargcount:
            params.append("/")
    if star:
        params.append(f"*{star}")
        call.append(f"*{star}")
    elif nkw:
        params.append("*")
    for n in names[npos:]:
        kw = (fn.__kwdefaults__ or {})
        if n in kw:
            env[f"_k_{n}"] = kw[n]
        params.append(f"{n}=_k_{n}" if n in kw else n)
        call.append(f"{n}={n}")
    if starstar:
        params.append(f"**{starstar}")
        call.append(f"**{starstar}")
    tests = " or ".join(_TEST[k].format(n) for n, k in kinds.items())
    checks = ", ".join(f"({n!r}, {k!r}, {n})" for n, k in kinds.items())
    src = (f"def {fn.__name__}({', '.join(params)}):\n"
           f"    if {tests}:\n"
           f"        _refuse({fn.__name__!r}, ({checks},))\n"
           f"    return _fn({', '.join(call)})\n")
    exec(src, env)  # noqa: S102 - a wrapper made for this signature (NOTE [ Typed arguments ])
    wrapper = env[fn.__name__]
    wrapper.__doc__, wrapper.__qualname__, wrapper.__wrapped__ = fn.__doc__, fn.__qualname__, fn
    return wrapper


def attr_of_other(other, name):
    """`other.<name>` for a `*_as(other)` method (view_as, type_as, ...); torch's parser error when `other` is not
    a tensor (NOTE [ Argument types on the error path ])."""
    try:
        return getattr(other, name)
    except AttributeError as e:
        raise call_error(e, sys._getframe(1)) from None


def wrap_dims(dims, ndim):
    if isinstance(dims, int):
        return (_wrap_dim(dims, ndim),)
    try:
        out = tuple(_wrap_dim(d, ndim) for d in dims)
    except (TypeError, IndexError) as e:  # not a sequence of ints: NOTE [ Argument types on the error path ]
        if isinstance(dims, (np.integer, Tensor)) and not isinstance(dims, np.bool_):  # one dim, as torch's
            return (_wrap_dim(dims, ndim),)                                           # parser takes it
        raise call_error(e) from None
    if len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def as_shape(args):
    """Sizes given as ints, a tuple/list, or a Size: f(2, 3), f((2, 3)), f([2, 3])."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = args[0]
    for s in args:  # (a plain loop: a generator expression costs more than the check)
        if type(s) is not int:
            break
    else:
        return tuple(args)
    out = []
    for s in args:
        if isinstance(s, Tensor):
            s = int(s)
        elif not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"expected a sequence of integers or a single integer, got '{s!r}'")
        out.append(int(s))
    return tuple(out)


def finish_out(result, out, check_grad=True):
    """Honour an `out=` argument: write `result` into `out` (resized if it is empty) and return it.

    With an input or `out` requiring grad, torch refuses out= (no gradient flows into an out tensor); a
    few of its composites (diag) skip that check, and pass `check_grad=False`.

    A tuple result (max(dim), sort, svd: a return_types named tuple) is written into the tuple `out`
    element by element, and the same named tuple of the *out* tensors is returned, as torch does."""
    if out is None:
        return result
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{_out_op_name(result[0])}(): argument 'out' must be tuple of {len(result)} "
                            "Tensors")
        for r, o in zip(result, out):
            finish_out(r, o, check_grad)
        if not hasattr(result, "_fields"):
            return tuple(out)
        from .. import return_types

        name = type(result).__name__
        return getattr(return_types, name if name.endswith("_out") else name + "_out", type(result))(*out)
    if _modes:  # (V) torch's vmap fallback refuses out= ops on batched tensors
        name = _out_op_name(result)
        refuse_under_vmap(_OUT_OVERLOADS.get(name, name + ".out"), (result, out), "out")
        if result._fw_grad is not None or out._fw_grad is not None:  # NOTE [ Ops torch's forward AD refuses ]
            raise NotImplementedError(f"Trying to use forward AD with {_out_op_name(result)}_out that does not "
                                      "support it because it is an out= function")
    if out._data.shape != result._data.shape:
        if out._data.size == 0 or out._data.ndim != result._data.ndim:
            out._data = np.empty(result._data.shape, out._data.dtype)
        else:
            out._data = np.empty(result._data.shape, out._data.dtype)
    if check_grad and (out._requires_grad or result._requires_grad) and _grad_state.enabled:
        raise RuntimeError(
            f"{_out_op_name(result)}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad.")
    copy_into(out, result._data, "out")
    return out


# the out= overloads torch's vmap names by another name than `<op>.out` (sum and prod take out= only with dim)
_OUT_OVERLOADS = {"sum": "sum.IntList_out", "prod": "prod.int_out"}


def _out_op_name(result):
    """The name torch's out= error gives: the op that computed the result (its node's op, when inputs
    require grad), else the public function that called `finish_out` (the first caller up the stack whose
    name is not private). Only the error path pays."""
    fn = result._grad_fn
    if fn is not None and getattr(fn, "_op", None) is not None:
        return fn._op.name
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name.startswith(("_", "<")):
        f = f.f_back
    return f.f_code.co_name if f is not None else "out"
# NOTE [ Checked scalar conversion ]
# Where torch converts a Python number to a tensor's dtype as a *value* (full, fill_, masked_fill,
# index_fill, clamp bounds, where, setitem, an integer pow's exponent) it checks the value fits, like
# c10's `checked_convert`: "value cannot be converted to type uint8_t without overflow". The rules: a
# float or an integer must lie in the target's range (an int may go as low as -max for an unsigned
# type, which wraps: fill_(-1) on uint8 gives 255); inf and nan fit any floating type and no integer
# type; a complex value with an imaginary part fits only complex and bool. (Arithmetic does not check:
# `uint8_tensor + 300` wraps, see NOTE [ Python integers beside integer tensors ] in _dispatch.py.)
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def checked_scalar(value, np_dtype, numel=2, names=None):
    """Python number `value` converted for a tensor of `np_dtype`, or torch's overflow error.

    `numel` is the size of the tensor written to: torch converts through double for a one-element
    float16/bfloat16 tensor. `names` maps dtype names to the words of the message (tensor() uses
    "uint8", the fill kernels "uint8_t")."""
    np_dtype = np.dtype(np_dtype)
    name = np_dtype.name
    if isinstance(value, (bool, np.bool_)) or isinstance(value, Tensor):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (int, float, complex)):  # (a str, None, a list: torch's parser refuses them)
        try:
            if isinstance(value, str):
                raise TypeError("must be real number, not str")
            value = float(value)
        except (TypeError, ValueError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
    if isinstance(value, int):
        if value >= 2 ** 64:
            raise OverflowError("int too big to convert")
        if value < -2 ** 63:
            raise OverflowError("can't convert negative int to unsigned")
    if name == "bool":
        return bool(value)
    word = (names or _C_NAMES).get(name, name)
    if numel == 1 and name in ("float16", "bfloat16"):
        word = "double"
    if isinstance(value, complex):
        if np_dtype.kind == "c":
            return value
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {word} without overflow")
        value = value.real
    kind = "f" if name == "bfloat16" else np_dtype.kind  # (ml_dtypes' bfloat16 is kind "V")
    try:
        if kind in "iu":
            info = np.iinfo(np_dtype)
            if isinstance(value, int):
                lo = -int(info.max) if kind == "u" else int(info.min)
                ok = lo <= value <= int(info.max)
                if ok and value < 0 and kind == "u":
                    value += int(info.max) + 1  # wraps, as torch's conversion does
            else:
                ok = value == value and float(info.min) <= value <= float(info.max)
            if not ok:
                raise RuntimeError(f"value cannot be converted to type {word} without overflow")
            return value
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if kind == "f" and word != "double" and name != "float64":
        f = float(value)
        big = float(np.finfo(np_dtype).max) if name != "bfloat16" else 3.3895313892515355e38
        if f == f and abs(f) != float("inf") and abs(f) > big:
            raise RuntimeError(f"value cannot be converted to type {word} without overflow")
    elif kind == "c" and name == "complex64":
        c = complex(value)
        for part in (c.real, c.imag):
            if part == part and abs(part) != float("inf") and abs(part) > 3.4028234663852886e38:
                raise RuntimeError(f"value cannot be converted to type {word} without overflow")
    return value


def c_contiguous(arr):
    """`arr` laid out as a fresh torch tensor would be: row-major, size-1 dims included, never 0-d lost.

    NumPy calls an array contiguous whatever strides its size-1 dims have; torch's stride() shows them.
    """
    arr = np.asarray(arr)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr) if arr.ndim else arr.copy()
    item = arr.itemsize
    want = tuple(s * item for s in contiguous_strides(arr.shape))
    if arr.strides != want and arr.size:
        arr = np.ndarray(arr.shape, arr.dtype, buffer=arr, strides=want)
    return arr


def to_tensor(x, like=None):
    """A Python scalar or array-like as a Tensor (scalars keep torch's default dtypes)."""
    if isinstance(x, Tensor):
        return x
    from .creation import tensor

    return tensor(x)


def unwrap(x):
    return x._data if isinstance(x, Tensor) else x
