"""torch's `_foreach_*` functions: one op applied to every tensor of a list, as one dispatch.

NOTE [ Foreach ops ]
`ember._foreach_add_(tensors, other)` is one dispatched op over lists (as torch's `_foreach_add_.List` is one
kernel), so a mode sees one op per list, as it sees one op per optimizer step (NOTE [ Optimizer steps are ops
over lists ] in optim.py). Each foreach op is built from the single-tensor op it applies (`_add`, `_sqrt`, ...):
its inputs are the lists flattened (a scalar argument repeated per tensor, as a list of scalars would give it),
its params the lists' length, the dtypes each element computes in and ends in (torch's promotion per element,
decided from the tensors before the kernel runs), whether it writes in place, and the single op's own params.
Per element the kernel runs the single op's kernel on the cast arrays, so the numbers are the single op's
(torch's CPU foreach kernels fall back to the per-tensor ops as well). The in-place forms write into the first
list, bump each tensor's version and return that list; the others return a tuple of new tensors.
"""

import numpy as np

from .. import _dtypes
from .._dispatch import (
    OTHER,
    OVERLAP,
    REAL,
    _dtype_word,
    _modes,
    check_dtypes,
    defop,
    dispatch,
    overlap_instead,
    overlaps,
    writeable_alias,
)
from .._grad_state import state as _grad_state
from .._meta import broadcast_error, broadcast_shapes, like_array, meta_array, torch_layout
from .._tensor import Tensor, _version_counter
from ..autograd.graph import _mask, check_inplace
from ._util import public, refuse_under_vmap
from .binary import _addcdiv, _addcmul, _lerp_s, _lerp_t, check_addcdiv, check_lerp_dtypes
from .linalg_ext import _vector_norm
from .pointwise import (
    _CPP_NAMES,
    _abs,
    _add,
    _div,
    _exp,
    _maximum,
    _minimum,
    _mul,
    _neg,
    _pow,
    _sign,
    _sqrt,
    _sub,
    clamp_complex_error,
)
from .unary import _reciprocal

__all__ = []


def _foreach_op(base, nargs, name=None, ufunc=None):
    """The foreach form of op `base` whose kernel takes `nargs` array (or scalar) arguments (the op is named
    `_foreach_<name>`, by default base's name). `ufunc`: the NumPy ufunc base's kernel is (with no params),
    which the in-place form runs straight into the tensor (NOTE [ Foreach in place ])."""
    def kernel(*args):
        if args[-2]:  # in place: no warning may stop the list half updated (NOTE [ Foreach in place ])
            with np.errstate(all="ignore"):
                return loop(args, ufunc is not None and not args[-1])
        return loop(args, False)

    def loop(args, fast):
        n, compute, final, inplace, params = args[-5:]
        out = []
        for i in range(n):
            if inplace and type(args[i]) is np.ndarray and not args[i].flags.writeable:
                raise RuntimeError(OVERLAP)  # NOTE [ Foreach refuses an overlapping tensor in its turn ]
            xs = [args[i + j * n] for j in range(nargs)]
            c = compute[i]
            if c is not None:
                xs = [x.astype(c, copy=False) if hasattr(x, "astype") and type(x) is not bool and x.dtype != c
                      else x for x in xs]
            if fast and c is not None and c.kind == "f" and xs[0] is args[i] and all(
                    not hasattr(x, "shape") or x.shape == xs[0].shape or not x.ndim for x in xs[1:]):
                ufunc(*xs, out=xs[0])
                continue
            try:
                r = base.kernel(*xs, *params)
            except ValueError:  # NumPy's words for a broadcast mismatch; torch has its own
                raise _broadcast_error([x.shape for x in xs if hasattr(x, "shape")]) from None
            if inplace:
                dst = args[i]
                if r.shape != dst.shape:
                    raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                                       f"{list(r.shape)}")
                dst[...] = r  # (the result dtype was checked castable to dst's before the kernel ran)
            else:
                arrays = [args[i + j * n] for j in range(nargs) if type(args[i + j * n]) is np.ndarray]
                if type(r) is np.ndarray and not all(a.flags.c_contiguous for a in arrays):
                    # NOTE [ Promoted layouts ]: the kernel ran outside dispatch; an input cast to the compute
                    # dtype takes part with the layout of torch's `.to()` copy of it (empty_like's rule)
                    arrays = [like_array(a, c) if c is not None and a.dtype != c else a for a in arrays]
                    r = torch_layout(r, arrays)
                out.append(r if r.dtype == final[i] else r.astype(final[i]))
        return tuple(out)
    name = f"_foreach_{name or base.name}"
    kernel.__name__ = kernel.__qualname__ = name
    node = None if base.derivative is None else \
        "Foreach" + "".join(w.capitalize() for w in name[len("_foreach_"):].split("_")) + "Backward0"
    op = defop(name, node, OTHER, save_output=base.save_output)(kernel)
    op.meta_(_foreach_meta(base, nargs))
    op.writes = _writes
    if node is not None:
        op.derivative_(_foreach_derivative(base, nargs))
        op.jvp_(_foreach_jvp(op))
    return op


# NOTE [ Foreach derivatives ]
# torch differentiates its out-of-place foreach ops with one node over the whole list (an edge per tensor of
# every list, in order), each element's gradient its single op's formula. So is ember's: the foreach op's
# derivative calls the single op's on each element's gradient, inputs and params (and output, for a formula
# that reads it), with `needs_grad` answering for that element's inputs; the engine then fits each gradient to
# its input's shape and dtype. An in-place call that autograd must record (grad mode on, a tensor requiring
# grad) runs out of place and copies each result into its tensor, so each tensor's history goes through the
# node (torch records one node for the list; the gradients are the same); other in-place calls (optimizer
# steps, under no_grad) write in place as before.
def _foreach_jvp(op):
    """Forward AD of an out-of-place call: the rule derived from the derivative (ember/autograd/_jvp.py); an
    in-place call's lists get no new tangents (it has no outputs to carry them)."""
    derived = []

    def rule(inputs, params, out, tangents):
        if params[3]:
            return None
        if not derived:
            from ..autograd._jvp import generic

            derived.append(generic(op))
        return derived[0](inputs, params, out, tangents)
    return rule


def _foreach_derivative(base, nargs):
    def derivative(g, *args, out=None):
        *inputs, n, _, _, _, params = args
        grads = [None] * len(inputs)
        mask = _mask
        metas = mask.value
        try:
            for i in range(n):
                gi = g[i] if type(g) in (tuple, list) else g
                if gi is None:
                    continue
                at = [i + j * n for j in range(nargs)]
                if metas is not None:
                    mask.value = tuple(metas[k] for k in at)
                kw = {"out": out[i]} if base.save_output else {}
                r = base.derivative(gi, *[inputs[k] for k in at], *params, **kw)
                for k, v in zip(at, r if type(r) in (tuple, list) else (r,)):
                    grads[k] = v
        finally:
            mask.value = metas
        return tuple(grads)
    return derivative


def _writes(inputs, params):
    """The in-place form writes its first list; out of place, each result ends in its tensor's dtype
    (NOTE [ Kernels that write their inputs ] in _dispatch.py)."""
    n, compute, _, inplace, p = params
    if not inplace:
        return None
    final = tuple(_dtypes.to_numpy(t.dtype) for t in inputs[:n])
    return tuple(range(n)), (n, compute, final, False, p)


def _foreach_meta(base, nargs):
    """The meta rule of the foreach form of `base`: per element, `base`'s own rule gives the shape and strides
    (torch's foreach meta functions are its per-tensor ops, element by element), the dtype is the element's
    final one; the in-place forms check each result fits its tensor and return nothing (as the kernel)."""
    rule = base.meta_rule()

    def meta(*args):
        n, _, final, inplace, params = args[-5:]
        out = []
        for i in range(n):
            xs = [args[i + j * n] for j in range(nargs)]
            r = rule(xs, params)
            if inplace:
                dst = tuple(xs[0].shape)
                if r.shape != dst:
                    raise RuntimeError(f"output with shape {list(dst)} doesn't match the broadcast shape "
                                       f"{list(r.shape)}")
            else:
                item = r.dtype.itemsize
                out.append(meta_array(r.shape, final[i], tuple(s // item for s in r.strides)))
        return tuple(out)
    return meta


# NOTE [ Foreach in place ]
# An in-place foreach op whose single op is a plain ufunc (add, sub, mul, div, maximum, minimum; clamp_min and
# clamp_max as a two-sided `np.clip`) writes each result straight into the tensor's memory (`ufunc(x, other,
# out=x)`) when the element computes in its own floating dtype and the other operand has its shape or is a
# scalar: one pass and no temporary, the same numbers as computing and copying. Anything else (a cast to a
# wider compute dtype, broadcasting, an alpha) computes and copies. NumPy's floating-point warnings are off
# for the whole in-place list (one `errstate` per op): torch's foreach ops do not warn, and a warning turned
# error mid-list must not leave half of the list updated for a quiet rerun to update again.


# NOTE [ Foreach refuses an overlapping tensor in its turn ]
# torch's CPU foreach ops run their single op tensor by tensor, so an in-place foreach op whose list holds an
# overlapping (expanded) tensor updates the tensors before it, and fails on an earlier tensor's own error
# (a cast, a shape) before reaching it; the overlap error itself comes before that tensor's other errors
# (NOTE [ Overlap is checked first ] in ember/_dispatch.py). The kernel loop checks each destination in its
# turn; the dtype checks, which ember runs for the whole list before the kernel, hand over to the tensors
# before the first overlapping one and then refuse.


def _broadcast_error(shapes):
    """torch's error for the first shape (against the first) that does not broadcast."""
    return broadcast_error(shapes) or RuntimeError(f"shapes {[list(s) for s in shapes]} cannot be broadcast together")


def _check_lists(first, *others):
    if len(first) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for o in others:
        if len(o) != len(first):
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(first)} and "
                               f"{len(o)}")


def _as_list(other, n, what="tensor"):
    """A Python scalar or a single tensor stands for itself repeated n times; lists are checked for length."""
    if isinstance(other, (list, tuple)):
        if len(other) != n:
            if other and not isinstance(other[0], Tensor):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(other)}")
        return list(other)
    if isinstance(other, Tensor) and other.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                           f"{other.numel()} elements.")
    return [other] * n


def _dtypes_for(base, lists, inplace, tensor_only=False, checked=None):
    """Per element: the dtype the kernel computes in (None: as the inputs are) and the result's dtype.

    Each element is checked against the dtypes its single op accepts (`checked`, where the single op that
    torch's foreach kernel stands for is another overload of `base`: lerp by a number), as that op checks
    them (NOTE [ Accepted dtypes ]), before the in-place cast check, as torch checks them."""
    checked = checked or base
    compute, final = [], []
    seen = {}  # the checks and promotion depend only on each argument's dtype, dimensionality and emptiness
    #            (or scalar type)
    for i, t in enumerate(lists[0]):
        xs = [lst[i] for lst in lists] if not tensor_only else [lst[i] for lst in lists if isinstance(lst[i], Tensor)]
        key = tuple((x.dtype, x.dim() == 0, x.numel() == 0) if isinstance(x, Tensor) else type(x) for x in xs)
        hit = seen.get(key)
        if hit is not None:
            compute.append(hit[0])
            final.append(hit[1])
            continue
        res = _dtypes.result_dtype(xs)
        if base.promote == "float" and res._cat < 2:
            res = _dtypes.get_default_dtype()
        if checked.dtypes is not None:
            check_dtypes(checked, xs, res)
        if base is _abs and res.is_complex:  # (abs of a complex number is real)
            if inplace:
                raise RuntimeError("In-place abs is not supported for complex tensors.")
            res = res.to_real()
        if inplace and res is not t.dtype and not _dtypes.can_cast(res, t.dtype):
            raise RuntimeError(f"result type {_dtype_word(_dtypes.to_numpy(res))} can't be cast to the desired "
                               f"output type {_dtype_word(_dtypes.to_numpy(t.dtype))}")
        comp = _dtypes.float32 if res is _dtypes.bfloat16 else res
        seen[key] = None if base is _abs else _dtypes.to_numpy(comp), _dtypes.to_numpy(res)
        compute.append(seen[key][0])
        final.append(seen[key][1])
    return tuple(compute), tuple(final)


def _refuse_under_vmap(name, lists, overload=""):
    """torch's vmap cannot run an op over lists of tensors per sample (NOTE [ Foreach ops ]): its refusal,
    naming the overload (List, Scalar, ScalarList, Tensor), when a tensor of the lists is batched."""
    refuse_under_vmap(name + ("." + overload if overload else ""), lists, "no_fallback")


def _check_inplace(tensors):
    """torch's refusals for an in-place op on each tensor written (a leaf that requires grad, with grad mode
    on: a parameter outside no_grad, the input of ember.func.grad; an inference tensor)."""
    for t in tensors:
        check_inplace(t, True)


def _kind(other, tensor="Scalar"):
    """The overload torch's foreach op takes for argument `other` (a 0-d tensor is a Scalar to the binary ops,
    a Tensor to addcmul/addcdiv's value)."""
    if isinstance(other, (list, tuple)):
        return "List" if other and isinstance(other[0], Tensor) else "ScalarList"
    return tensor if isinstance(other, Tensor) else "Scalar"


def _run(op, base, lists, inplace, params=(), tensor_only=False, checked=None, overload=""):
    self = lists[0]
    if _modes:
        _refuse_under_vmap(op.name + ("_" if inplace else ""), lists, overload)
    if inplace:
        _check_inplace(self)
    try:
        compute, final = _dtypes_for(base, lists, inplace, tensor_only, checked)
    except Exception as e:  # NOTE [ Foreach refuses an overlapping tensor in its turn ]
        if not inplace or overlap_instead(e, self) is e:
            raise
        j = next(i for i, t in enumerate(self) if overlaps(t))
        if j:
            _run(op, base, [lst[:j] for lst in lists], inplace, params, tensor_only, checked)
        raise RuntimeError(OVERLAP) from None
    flat = tuple([x for lst in lists for x in lst])
    if inplace and op.derivative is not None and _grad_state.enabled and any(
            isinstance(x, Tensor) and x._requires_grad for x in flat):  # NOTE [ Foreach derivatives ]
        olds = tuple([t.clone() for t in self])  # (the values the node saves, before the writes)
        for t, o in zip(self, dispatch(op, olds + flat[len(self):], (len(self), compute, final, False, params))):
            t.copy_(o)
        return list(self)
    out = dispatch(op, flat, (len(self), compute, final, inplace, params))
    if inplace:
        for t in self:
            _version_counter(t)[0] += 1
        return list(self)
    return out


def _register(name, fn):
    fn.__name__ = fn.__qualname__ = name
    public[name] = globals()[name] = fn


# ---- unary ------------------------------------------------------------------------------------------------------


def _unary(name, base):
    op = _foreach_op(base, 1)

    def out_of_place(self):
        _check_lists(self)
        return _run(op, base, [list(self)], False)

    def in_place(self):
        _check_lists(self)
        return _run(op, base, [list(self)], True)

    _register(f"_foreach_{name}", out_of_place)
    _register(f"_foreach_{name}_", in_place)


for _name, _base in (("sqrt", _sqrt), ("neg", _neg), ("abs", _abs), ("exp", _exp), ("sign", _sign),
                     ("reciprocal", _reciprocal)):
    _unary(_name, _base)


# ---- binary: a list op a scalar, a list of scalars, a list of tensors, or one 0-d tensor ------------------------


class _Accepts:
    """The dtypes a foreach kernel accepts where they are not its single op's (`check_dtypes` reads these)."""

    inputs_checked = False

    def __init__(self, dtypes, error):
        self.dtypes, self.dtype_error = dtypes, error


def _binary(name, base, alpha=False, checked=None, ufunc=None, check=None):
    op = _foreach_op(base, 2, name, ufunc)
    tensor_kind = "Tensor" if name in ("mul", "div") else "Scalar"  # (the ops with a .Tensor overload)

    def make(inplace):
        def fn(self, other, **kw):
            _check_lists(self)
            others = _as_list(other, len(self))
            params = ()
            if alpha:
                a = kw.pop("alpha", 1)
                params = () if a == 1 else (a,)
            if kw:
                raise TypeError(f"_foreach_{name}() got an unexpected keyword argument '{next(iter(kw))}'")
            if check is not None:
                check(self, others, inplace)
            return _run(op, base, [list(self), others], inplace, params, checked=checked,
                        overload=_kind(other, tensor_kind))
        return fn

    _register(f"_foreach_{name}", make(False))
    _register(f"_foreach_{name}_", make(True))


_binary("add", _add, alpha=True, ufunc=np.add)
_binary("sub", _sub, alpha=True, ufunc=np.subtract)
_binary("mul", _mul, ufunc=np.multiply)
_binary("div", _div, ufunc=np.true_divide)
# (torch's foreach maximum/minimum call the kernel, not the op: its error, not the op's complex check)
_binary("maximum", _maximum, checked=_Accepts(REAL, "maximum_cpu"), ufunc=np.maximum)
_binary("minimum", _minimum, checked=_Accepts(REAL, "minimum_cpu"), ufunc=np.minimum)
_binary("pow", _pow)


def _clip_below(x, lo, out):
    """maximum(x, lo) into out, as NumPy's two-sided clip (vectorised; its one-sided form and `maximum` are
    several times slower on floats): nan stays nan, +inf stays +inf."""
    return np.clip(x, lo, np.inf, out=out)


def _clip_above(x, hi, out):
    return np.clip(x, -np.inf, hi, out=out)


def _clamp_check(kernel_name):
    """torch's refusals for the foreach clamps: complex tensors (the list form fails in its maximum/minimum
    kernel), and, in place, a float bound on an integer tensor (named as clamp_ names C++ types)."""
    def check(self, others, inplace):
        for t, o in zip(self, others):
            if t.is_complex() or (isinstance(o, Tensor) and o.is_complex()):
                if isinstance(o, Tensor):
                    raise NotImplementedError(f'"{kernel_name}_cpu" not implemented for '
                                              f"'{_dtype_word(_dtypes.to_numpy(t.dtype))}'")
                raise clamp_complex_error()
            if inplace and isinstance(o, float) and not t.is_floating_point():
                name = _dtypes.to_numpy(t.dtype).name
                raise RuntimeError(f"result type Float can't be cast to the desired output type "
                                   f"{_CPP_NAMES.get(name, name)}")
    return check


# with a scalar, clamp_min is maximum and clamp_max is minimum (nan propagates in all of them)
_binary("clamp_min", _maximum, ufunc=_clip_below, check=_clamp_check("maximum"))
_binary("clamp_max", _minimum, ufunc=_clip_above, check=_clamp_check("minimum"))


# ---- ternary: addcmul, addcdiv (value: a scalar, a list of scalars or a 1-d tensor), lerp ----------------------


def _pointwise3(name, base):
    op = _foreach_op(base, 4)

    def make(inplace):
        def fn(self, tensor1, tensor2, value=1):
            _check_lists(self, tensor1, tensor2)
            if base is _addcdiv:
                for t1, t2 in zip(tensor1, tensor2):
                    check_addcdiv(t1, t2)
            kind = _kind(value, "Tensor")
            if _modes:
                _refuse_under_vmap(op.name + ("_" if inplace else ""), [self, tensor1, tensor2, value], kind)
            if isinstance(value, Tensor):
                value = value.tolist()
            values = _as_list(value, len(self))
            lists = [list(self), list(tensor1), list(tensor2), values]
            return _run(op, base, lists, inplace, tensor_only=True, overload=kind)
        return fn

    _register(f"_foreach_{name}", make(False))
    _register(f"_foreach_{name}_", make(True))


_pointwise3("addcmul", _addcmul)
_pointwise3("addcdiv", _addcdiv)

_lerp_op = _foreach_op(_lerp_t, 3)


def _lerp(inplace):
    def fn(self, tensors1, weight):
        _check_lists(self, tensors1)
        weights = _as_list(weight, len(self))
        scalar = not isinstance(weights[0], Tensor)  # (torch's lerp.Scalar: its own kernel and dtypes)
        for t, e, w in zip(self, tensors1, weights):  # (before the overlap check, as torch's are)
            check_lerp_dtypes(t, e, w)
        return _run(_lerp_op, _lerp_t, [list(self), list(tensors1), weights], inplace, tensor_only=scalar,
                    checked=_lerp_s if scalar else None, overload=_kind(weight))
    return fn


_register("_foreach_lerp", _lerp(False))
_register("_foreach_lerp_", _lerp(True))


# ---- zero_, copy_, norm -----------------------------------------------------------------------------------------


@defop("_foreach_zero_", None, OTHER)
def _zero_kernel(*args):
    for a in args[:-1]:  # (torch's zero_ writes an expanded tensor too: NOTE [ Overlap is checked first ])
        (a if a.flags.writeable else writeable_alias(a)).fill(0)
    return ()


_zero_kernel.meta_(lambda *args: ())  # in place, on payloads without data: nothing to compute


def _foreach_zero_(self):
    """Set every tensor of `self` to zero in place (what `Optimizer.zero_grad(set_to_none=False)` calls)."""
    _check_lists(self)
    if _modes:
        _refuse_under_vmap("_foreach_zero_", self)
    _check_inplace(self)
    dispatch(_zero_kernel, tuple(self), (len(self),))
    for t in self:
        _version_counter(t)[0] += 1
    return list(self)


_register("_foreach_zero_", _foreach_zero_)


@defop("_foreach_copy_", None, OTHER)
def _copy_kernel(*args):
    n = args[-1]
    for i in range(n):
        args[i][...] = args[n + i]
    return ()


@_copy_kernel.meta_
def _(*args):  # each copy_ checks that its source broadcasts to its destination
    n = args[-1]
    for dst, src in zip(args[:n], args[n:2 * n]):
        if broadcast_shapes(tuple(dst.shape), tuple(src.shape)) != tuple(dst.shape):
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape "
                               f"{list(broadcast_shapes(tuple(dst.shape), tuple(src.shape)))}")
    return ()


def _foreach_copy_(self, src, non_blocking=False):
    _check_lists(self, src)
    if _modes:
        _refuse_under_vmap("_foreach_copy_", [self, src])
    _check_inplace(self)
    try:
        dispatch(_copy_kernel, tuple(self) + tuple(src), (len(self),))
    except Exception as e:  # NOTE [ Overlap is checked first ]
        err = overlap_instead(e, self)
        if err is e:
            raise
        raise err from None
    for t in self:
        _version_counter(t)[0] += 1
    return list(self)


_register("_foreach_copy_", _foreach_copy_)

_norm_op = _foreach_op(_vector_norm, 1)


def _foreach_norm(self, ord=2, dtype=None):
    """torch._foreach_norm: linalg.vector_norm of each tensor (a tuple of 0-d tensors)."""
    _check_lists(self)
    for t in self:
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               f"{_dtype_word(_dtypes.to_numpy(t.dtype))}")
    if _modes:
        _refuse_under_vmap("_foreach_norm", self, "Scalar")
    np_dtype = _dtypes.to_numpy(dtype) if dtype is not None else None
    final = tuple(np_dtype if np_dtype is not None else _dtypes.to_numpy(t.dtype.to_real() if t.is_complex()
                                                                         else t.dtype) for t in self)
    r = dispatch(_norm_op, tuple(self), (len(self), (None,) * len(self), final, False,
                                         (float(ord), None, False, np_dtype)))
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]: torch's _foreach_norm JVP keeps the reduced dims, and
        # its size check refuses the tangent of every 0-d norm of a tensor with dims
        for t, o in zip(self, r):
            if t._fw_grad is not None and t.dim() > 0:
                from ..autograd.forward_ad import _size_error
                _size_error(o, t._fw_grad.new_empty((1,) * t.dim()))
    return r


_register("_foreach_norm", _foreach_norm)
