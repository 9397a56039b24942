"""Small helpers the op modules share: publishing functions as Tensor methods, dim/shape checks."""

import sys
import warnings

import numpy as np

from .._dispatch import copy_into, dispatch, dispatch_inplace
from .._size import Size
from .._tensor import Tensor, _wrap, _wrap_dim, contiguous_strides
from ..autograd.grad_mode import state as _grad_state

__all__ = ["method", "public", "wrap_dim", "as_shape", "finish_out", "inplace_method", "Tensor", "_wrap",
           "dispatch", "dispatch_inplace", "Size"]

# NOTE [ Floating-point warnings ]
# torch computes 0/0, log(-1) and overflow silently; NumPy warns. Wrapping each kernel in np.errstate
# costs 1.5 us per op, so instead the warnings are filtered for ember's own op modules only: a user's
# own NumPy code keeps its warnings, and the per-op cost is zero.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember\._ops\.")

#: names the op modules export at ember's top level (collected by ember/__init__.py)
public = {}


def method(*names, top=True):
    """Decorator: make `fn` a Tensor method under `names` (default: its own name) and, if `top`, a
    function at ember's top level."""
    def deco(fn):
        if fn.__code__.co_name != fn.__name__:  # a factory-made function: tracebacks and errors show its name
            fn.__code__ = fn.__code__.replace(co_name=fn.__name__, co_qualname=fn.__name__)
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


def wrap_dims(dims, ndim):
    if isinstance(dims, int):
        return (_wrap_dim(dims, ndim),)
    out = tuple(_wrap_dim(d, ndim) for d in dims)
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
    few of its composites (diag) skip that check, and pass `check_grad=False`."""
    if out is None:
        return result
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
