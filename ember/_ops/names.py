"""The rest of torch's everyday names (issue 15), part one: in-place forms of out-of-place ops, the `*_copy`
and `*_scatter` functional forms of views, small numeric functions (gcd, lcm, frexp, ldexp, nextafter, angle,
complex, polar, cov, corrcoef, trapezoid, dist, renorm, addr). Part two is names_more.py.

Most are composites of existing ops (they need no derivative: autograd sees the ops they are made of);
the few with their own kernels (gcd, lcm, nextafter, frexp, complex) are declared with `defop` here.
"""

import math

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import FLOATING, INTEGRAL, OTHER, POINTWISE, _local, _modes, defop, dispatch, dispatch_inplace
from .._meta import broadcast_shapes, meta_array, no_data, pointwise_strides, torch_layout, unary_meta
from .._tensor import Tensor
from ..autograd.graph import needs_grad, refuse_composite
from ._util import c_contiguous, finish_out, method, public, refuse_under_vmap, typed, wrap_dim


def _finish(result, out, name):
    """finish_out for a composite: torch's out= refusal names the public function (`addr`), not the last
    op the composite ran (`add`)."""
    if out is not None and (result._requires_grad or out._requires_grad):
        from .._grad_state import state

        if state.enabled:
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
    return finish_out(result, out)


def _fresh(view):
    """A contiguous copy of `view` that shares no memory with it (the `*_copy` ops' result)."""
    try:
        r = view.contiguous()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    r = r.clone() if r is view else r
    if type(r._data) is np.ndarray:  # (a clone keeps a dense view's strides of size-1 dims; torch's copy has
        r._data = c_contiguous(r._data)  # the row-major ones)
    return r


# ---- in-place forms of out-of-place ops --------------------------------------------------------------------
# NOTE [ In-place comparisons keep self's dtype ]
# torch's `x.eq_(y)`, `x.logical_and_(y)`, `x.bitwise_or_(y)` write the (bool or integer) result into x,
# cast to x's dtype: a float x holds 1.0 / 0.0 afterwards. `dispatch_inplace` runs the op out of place and
# copies the result into self's memory with torch's casting check, so the same op serves both forms.


def _inplace_of(name, fn_name=None):
    """Tensor.<name>_: the op the out-of-place public function dispatches, run in place on self."""
    from . import pointwise

    op = getattr(pointwise, fn_name or "_" + name)

    def fn_(self, other):
        if name.startswith("logical") and not isinstance(other, Tensor):
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
        return dispatch_inplace(op, self, (self, other))
    fn_.__name__ = name + "_"
    return fn_


# NOTE [ In-place comparisons are differentiable ]
# torch's out-of-place comparisons have no gradient (a bool result), but its in-place ones write a float self
# and record a node, `EqBackward1` (a tensor other) or `EqBackward0` (a number), that gives both inputs zero
# gradients: `x.clone().eq_(y)` cuts x's history, where leaving the clone's node in place would pass the
# incoming gradient through. So each comparison has an in-place twin op (`eq_.Tensor`, `eq_.Scalar`: the same
# kernel, declared with that node); the out-of-place op stays without one, and pays nothing for it.


def _comparison_inplace(name, op):
    """Tensor.<name>_ for comparison op `op`: the twin ops of NOTE [ In-place comparisons are differentiable ]."""
    title = name.capitalize()
    twins = {}
    for overload, number in (("Tensor", 1), ("Scalar", 0)):
        twin = defop(f"{name}_", f"{title}Backward{number}", POINTWISE, "bool", saves="none", dtypes=op.dtypes,
                     error=op.dtype_error, overload=overload)(op.kernel)
        twin.derivative_(lambda g, a, b: (g.new_zeros(g.shape), g.new_zeros(g.shape)))
        twins[overload] = twin

    def fn_(self, other):
        return dispatch_inplace(twins["Tensor" if isinstance(other, Tensor) else "Scalar"], self, (self, other))
    fn_.__name__ = name + "_"
    return fn_


def _publish_inplace():
    from . import pointwise

    for names, op in ((("eq",), "_eq"), (("ne", "not_equal"), "_ne"), (("lt", "less"), "_lt"),
                      (("le", "less_equal"), "_le"), (("gt", "greater"), "_gt"),
                      (("ge", "greater_equal"), "_ge"), (("logical_and",), "_and"), (("logical_or",), "_or"),
                      (("logical_xor",), "_xor"), (("bitwise_and",), "_band"), (("bitwise_or",), "_bor"),
                      (("bitwise_xor",), "_bxor")):
        if names[0] in ("eq", "ne", "lt", "le", "gt", "ge"):
            fn_ = _comparison_inplace(names[0], getattr(pointwise, op))
        else:
            fn_ = _inplace_of(names[0], op)
        for n in names:
            setattr(Tensor, n + "_", fn_)

    def logical_not_(self):
        return dispatch_inplace(pointwise._not, self, (self,))

    def bitwise_not_(self):
        if _modes:  # NOTE [ Ops torch's forward AD refuses ]
            from ..autograd._jvp import check_composite
            check_composite("bitwise_not_", self)
        return self.copy_(self.bitwise_not())

    def conj_physical_(self):
        return dispatch_inplace(pointwise._conj_physical, self, (self,))

    Tensor.logical_not_, Tensor.bitwise_not_, Tensor.conj_physical_ = logical_not_, bitwise_not_, conj_physical_
    Tensor.divide_ = Tensor.true_divide_ = Tensor.div_
    Tensor.multiply_ = Tensor.mul_
    Tensor.subtract_ = Tensor.sub_
    Tensor.negative_ = Tensor.neg_
    def deg2rad_(self):
        if self.is_complex():
            raise RuntimeError("deg2rad is not supported for complex tensors.")
        return self.mul_(math.pi / 180)

    def rad2deg_(self):
        if self.is_complex():
            raise RuntimeError("rad2deg is not supported for complex tensors.")
        return self.mul_(180 / math.pi)

    Tensor.deg2rad_, Tensor.rad2deg_ = deg2rad_, rad2deg_


_publish_inplace()


def _no_bool_scan(self, name, dtype):
    """torch's refusals of an in-place scan; True when there is nothing to do (an empty bool tensor)."""
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_c_name(self.dtype)} and output tensor dtype "
                           f"{_c_name(dtype)} should match")
    if self._data.dtype == np.bool_ and dtype is None:
        if not self._data.size:  # (torch's loop checks the dtype: an empty bool tensor passes, unchanged)
            return True
        from .._dispatch import not_implemented

        raise not_implemented(f"{name}_out_cpu", _dtypes.bool)
    return False


def _c_name(d):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}[d.name]


def cumsum_(self, dim, *, dtype=None):
    from .scan import _cumsum, _scan_dim

    if _no_bool_scan(self, "cumsum", dtype):
        return self
    return dispatch_inplace(_cumsum, self, (self,), (_scan_dim(self, dim), dtype))


def cumprod_(self, dim, *, dtype=None):
    from .scan import _cumprod, _scan_dim

    if _no_bool_scan(self, "cumprod", dtype):
        return self
    return dispatch_inplace(_cumprod, self, (self,), (_scan_dim(self, dim), dtype))


Tensor.cumsum_, Tensor.cumprod_ = cumsum_, cumprod_


# ---- in-place view ops: self becomes the view ------------------------------------------------------------------

def _become(self, view):
    """Make `self` the tensor `view` is (its array and history): torch's squeeze_, t_, as_strided_ change
    self's metadata in place."""
    from .._grad_state import state

    if self._requires_grad and self._grad_fn is None and state.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    self._data = view._data
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
        self._output_nr = view._output_nr
    return self


Tensor.squeeze_ = lambda self, *dims, dim=None: _become(self, self.squeeze(*dims, dim=dim))
Tensor.unsqueeze_ = lambda self, dim: _become(self, self.unsqueeze(dim))
Tensor.t_ = lambda self: _become(self, self.t())
Tensor.transpose_ = lambda self, dim0, dim1: _become(self, self.transpose(dim0, dim1))
Tensor.swapaxes_ = lambda self, axis0, axis1: _become(self, self.transpose(axis0, axis1))
Tensor.swapdims_ = lambda self, dim0, dim1: _become(self, self.transpose(dim0, dim1))
Tensor.as_strided_ = lambda self, size, stride, storage_offset=None: _become(
    self, self.as_strided(size, stride, storage_offset))


# ---- *_copy: the functional forms of views (a fresh contiguous tensor) ------------------------------------------


def _copy_of(name, view):
    def fn(input, *args, out=None, **kwargs):
        return _finish(_fresh(view(input, *args, **kwargs)), out, name)
    fn.__name__ = name
    fn.__code__ = fn.__code__.replace(co_name=name, **(  # (errors name the function called)
        {"co_qualname": name} if hasattr(fn.__code__, "co_qualname") else {}))
    public[name] = fn
    return fn


for _n, _v in (("alias", lambda x: x), ("as_strided", Tensor.as_strided), ("detach", Tensor.detach),
               ("diagonal", Tensor.diagonal), ("expand", Tensor.expand), ("narrow", Tensor.narrow),
               ("permute", Tensor.permute), ("select", Tensor.select), ("t", Tensor.t),
               ("transpose", Tensor.transpose), ("unfold", Tensor.unfold), ("unsqueeze", Tensor.unsqueeze),
               ("view", Tensor.view), ("squeeze", Tensor.squeeze), ("values", lambda x: x),
               ("view_as_real", lambda x: __import__("ember").view_as_real(x)),
               ("view_as_complex", lambda x: __import__("ember").view_as_complex(x))):
    _copy_of(_n + "_copy", _v)


def detach_copy(input, *, out=None):
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]
        from ..autograd._jvp import check_composite
        check_composite("detach_copy", input)
    try:
        r = _finish(_fresh(input.detach()), out, "detach_copy")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return refuse_composite("detach_copy", r, input) if out is None else r  # NOTE [ What torch's autograd
    # refuses ] in ember/autograd/graph.py


public["detach_copy"] = detach_copy


@typed
def slice_copy(input, dim=0, start: "int | None" = None, end: "int | None" = None, step: int = 1, *,
               out=None):
    return _finish(_fresh(_slice(input, dim, start, end, step)), out, "slice_copy")


@typed
def split_copy(input, split_size: int, dim=0, *, out=None):
    if _modes:  # (V) a list of tensors: torch's vmap has no fallback
        refuse_under_vmap("split_copy.Tensor", (input,), "no_fallback")
    return _copies(input.split(split_size, dim), out)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    return _copies(input.split_with_sizes(split_sizes, dim), out)


def unbind_copy(input, dim=0, *, out=None):
    try:
        return _copies(input.unbind(dim), out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def _copies(parts, out):
    parts = tuple(_fresh(p) for p in parts)  # (a tuple, as torch's, under vmap too)
    if out is None:
        return parts
    for p, o in zip(parts, out):
        finish_out(p, o)
    return None


public.update(slice_copy=slice_copy, split_copy=split_copy, split_with_sizes_copy=split_with_sizes_copy,
              unbind_copy=unbind_copy)
Tensor.narrow_copy = lambda self, dim, start, length: public["narrow_copy"](self, dim, start, length)


def _slice(input, dim, start, end, step):
    try:
        d = wrap_dim(dim, input.dim())
        if step is not None and step <= 0:  # (torch's slice kernel, after the dim check; not Python's words)
            raise RuntimeError("slice step must be positive")
        key = (slice(None),) * d + (slice(start, end, step),)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input[key]


# ---- *_scatter: a copy of input with a view of it replaced by src ------------------------------------------------


def _clone_preserve_strides(input):
    """torch's `clone_preserve_strides` (the *_scatter ops' copy of self): the same strides and storage offset
    over a fresh storage, or a plain clone where self overlaps itself (an expanded tensor)."""
    a = input._data
    # (under a mode of this thread, or for a tensor subclass, the plain clone keeps the transform's rules)
    if (_modes and (_local.above or _local.below or type(input) is not Tensor)) or type(a) is not np.ndarray \
            or not a.flags.writeable or a.ndim == 0:
        return input.clone()
    stride, offset = input.stride(), input.storage_offset()
    extent = 1 + sum((n - 1) * s for n, s in zip(a.shape, stride)) if a.size else 0
    out = Tensor.new_empty(input, (offset + extent,)).as_strided(tuple(a.shape), stride, offset)
    return out.copy_(input)


def _scatter_into(input, view_of, src):
    out = _clone_preserve_strides(input)
    view = view_of(out)
    try:
        if tuple(view.shape) != tuple(src.shape):
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                               f"{list(src.shape)}, slice size = {list(view.shape)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    view.copy_(src)
    return out


@method()
def slice_scatter(input, src, dim=0, start=None, end=None, step=1, *, out=None):
    return finish_out(_scatter_into(input, lambda t: _slice(t, dim, start, end, step), src), out)


@method()
def select_scatter(input, src, dim, index, *, out=None):
    return finish_out(_scatter_into(input, lambda t: t.select(dim, index), src), out)


@method()
def diagonal_scatter(input, src, offset: int = 0, dim1=0, dim2=1, *, out=None):
    return finish_out(_scatter_into(input, lambda t: t.diagonal(offset, dim1, dim2), src), out)


# NOTE [ as_strided_scatter is an op ]
# The other *_scatter functions are composites (clone, view, copy_). as_strided_scatter is one op, as in
# torch: a tracer writes a view's in-place update back into its base with it (NOTE [ Writes through
# views ] in fx/experimental/proxy_tensor.py), so it cannot itself be a write through a view. As torch's
# clone_preserve_strides, the result is a copy of input's whole storage viewed with input's strides and offset,
# and `size`, `stride` and `storage_offset` index that storage (a sliced or stepped input keeps its layout and
# the region may fall between its elements); an expanded input is cloned row-major.
@defop("as_strided_scatter", "AsStridedScatterBackward0", OTHER, saves="meta")
def _as_strided_scatter(a, src, size, stride, offset):
    from .._storage import _address, _flat_bytes
    from .shape import _as_strided_op

    if _self_overlaps(a.shape, a.strides):  # (torch's plain clone of a tensor that is not dense: row-major)
        out = a.copy(order="C")
    else:  # torch's clone_preserve_strides: a copy of the whole storage, viewed with self's strides and offset
        flat = _flat_bytes(a)
        out = np.ndarray(a.shape, a.dtype, buffer=flat.copy(), offset=_address(a) - _address(flat),
                         strides=a.strides)
    _as_strided_op.kernel(out, size, stride, offset)[...] = src
    return out


def _self_overlaps(shape, strides):
    """torch's has_internal_overlap(...) == YES: a dim of stride 0 and size above 1 (an expanded tensor)."""
    return any(st == 0 and n > 1 for n, st in zip(shape, strides))


_as_strided_scatter.meta_(lambda a, src, size, stride, offset: meta_array(tuple(a.shape), a._data.dtype, *(
    (None,) if _self_overlaps(a.shape, a.stride()) else (a.stride(), a.storage_offset()))))


@_as_strided_scatter.derivative_
def _(g, a, src, size, stride, offset):
    # torch's as_strided_scatter_backward: the region's gradient goes to src and, as torch 2.13 writes it (a
    # zero buffer whose region is copied from the gradient's), to input too, whose other elements get zeros
    g = g.contiguous()
    region = g.as_strided(size, stride, offset)
    return (dispatch(_as_strided_scatter, (g.new_zeros(tuple(g.shape)), region), (size, stride, offset))
            if needs_grad(0) else None, region if needs_grad(1) else None)


@method()
def as_strided_scatter(input, src, size, stride, storage_offset=None, *, out=None):
    if _modes:  # (torch's vmap has no rule for it: NOTE [ Composites that read data under vmap ] in _util.py)
        refuse_under_vmap("as_strided_scatter", (input, src))
    size, stride = tuple(size), tuple(stride)
    if size != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    return finish_out(dispatch(_as_strided_scatter, (input, src), (size, stride, storage_offset)), out)


# ---- integer and floating-point helpers with their own kernels --------------------------------------------------


def _int_pair(name, ufunc):
    op = defop(name, None, POINTWISE, "same", dtypes=INTEGRAL, error=f"{name}_cpu")(ufunc)

    def fn(input, other, *, out=None):
        return finish_out(dispatch(op, (input, other)), out)
    fn.__name__ = name
    method(name)(fn)
    setattr(Tensor, name + "_", lambda self, other: dispatch_inplace(op, self, (self, other)))
    return op, fn


_gcd, gcd = _int_pair("gcd", np.gcd)
_lcm, lcm = _int_pair("lcm", np.lcm)


@defop("nextafter", "NextafterBackward0", POINTWISE, "same", saves="none", dtypes=FLOATING, error="nextafter_cpu")
def _nextafter(a, b):
    return np.nextafter(a, b)


_nextafter.derivative_(lambda g, a, b: (g, g.new_zeros(g.shape)))  # (torch's: the gradient passes to self)


@method()
def nextafter(input, other, *, out=None):
    return finish_out(dispatch(_nextafter, (input, other)), out)


Tensor.nextafter_ = lambda self, other: dispatch_inplace(_nextafter, self, (self, other))


@defop("frexp", "FrexpBackward0", POINTWISE, saves="none", save_output=True, dtypes=FLOATING, error="frexp_cpu")
def _frexp(a):
    m, e = np.frexp(a.astype(np.float32) if a.dtype.kind == "V" else a)
    return m.astype(a.dtype, copy=False), e.astype(np.int32)


@_frexp.derivative_
def _(g, a, *, out):  # torch's: the mantissa's gradient over 2 ** exponent (the exponent has none)
    return None if g[0] is None else g[0] / out[1].exp2()


_frexp.meta_(lambda a: (unary_meta(a), unary_meta(a, _dtypes.int32)))


@method()
def frexp(input, *, out=None):
    from .. import return_types

    try:
        if not input.is_floating_point():
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(return_types.frexp(*dispatch(_frexp, (input,))), out)


# NOTE [ ldexp's gradient ]
# torch's ldexp is one differentiable op (LdexpBackward0) whose input gradient is `grad * pow(2, other)` with an
# integer 2: for an integer `other`, a negative exponent gives 0 (integer pow), not 2 ** other. ember declares
# it so, the forward computing `input * 2.0 ** other` in the result's floating type.
@defop("ldexp", "LdexpBackward0", POINTWISE)
def _ldexp(a, b):  # (a in the result's dtype; laid out as torch's mul(input, pow(2., other)), a fresh pow)
    with np.errstate(all="ignore"):
        p = np.ascontiguousarray(np.power(2.0, b).astype(a.dtype))
        return torch_layout(a * p, [a, p])


@_ldexp.meta_
def _(a, b):
    shape = broadcast_shapes(tuple(a.shape), tuple(b.shape))
    dense = np.empty(tuple(b.shape), np.int8).strides  # (the pow's contiguous strides, in elements)
    strides = pointwise_strides(shape, [(tuple(a.shape), a.stride()), (tuple(b.shape), dense)])
    return meta_array(shape, a._data.dtype, strides)


@_ldexp.derivative_
def _(g, a, b):
    two = public["pow"](2, b)  # (NOTE [ ldexp's gradient ])
    return (g * two if needs_grad(0) else None,
            g * a * two * math.log(2.0) if needs_grad(1) else None)


@method()
def ldexp(input, other, *, out=None):
    """input * 2 ** other, in the floating type of the two (torch: mul(input, pow(2., other)) there)."""
    d = _dtypes.result_dtype((input, other))
    if not (d.is_floating_point or d.is_complex):
        d = _dtypes.get_default_dtype()
    return _finish(dispatch(_ldexp, (input.to(d), other)), out, "ldexp")


Tensor.ldexp_ = lambda self, other: self.mul_(public["pow"](2.0, other))


# ---- complex numbers -------------------------------------------------------------------------------------------


@method()
def angle(input, *, out=None):
    import ember

    try:
        if input.is_complex():  # (torch's angle_out into a fresh empty result: row-major, whatever the layout)
            return _finish(ember.atan2(input.imag, input.real).contiguous(), out, "angle")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    x = input if input.is_floating_point() else input.to(ember.get_default_dtype())
    r = ember.where(x < 0, ember.full_like(x, math.pi), ember.zeros_like(x))
    r = ember.where(x != x, x * 0, r)  # (NaN stays NaN; inf has an angle: 0, -inf pi)
    return _finish(r, out, "angle")


_COMPLEX_OF = {np.dtype("float32"): np.complex64, np.dtype("float64"): np.complex128}


@defop("complex", "ComplexBackward0", POINTWISE, tags=("not_holomorphic",))
def _complex(re, im):
    layout = np.add(re, im)  # (the broadcast shape, laid out as TensorIterator lays out its output)
    out = np.empty_like(layout, dtype=_COMPLEX_OF[re.dtype])
    out.real, out.imag = re, im
    return out


_complex.derivative_(lambda g, re, im: (g.real, g.imag))


@_complex.meta_
def _(re, im):
    from .._meta import pointwise_strides

    shape = tuple(np.broadcast_shapes(tuple(re.shape), tuple(im.shape)))
    d = _dtypes.complex64 if re.dtype == _dtypes.float32 else _dtypes.complex128
    return meta_array(shape, d, pointwise_strides(shape, [(tuple(t.shape), t.stride()) for t in (re, im)]))


def _float_pair(real, imag):
    """torch.complex's and torch.polar's checks of their two inputs."""
    try:
        if real.dtype.name not in ("float32", "float64", "float16") or imag.dtype.name not in ("float32", "float64",
                                                                                              "float16"):
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_word(real.dtype)} "
                               f"and {_word(imag.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_word(real.dtype)} but got scalar type "
                           f"{_word(imag.dtype)} for second argument")
    if real.dtype.name == "float16":  # (torch makes complex32, which ember does not have: NOTE [ complex32 ])
        raise NotImplementedError("ember has no complex32 (ComplexHalf) dtype for a complex tensor made from half "
                                  "tensors")


def _complex_fn(real, imag, *, out=None):
    _float_pair(real, imag)
    return finish_out(dispatch(_complex, (real, imag)), out)


def polar(abs, angle, *, out=None):  # noqa: A002 - torch's names
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("polar", polar, abs, angle, out=out)
    if abs.dtype.name == "float16" and angle.dtype.name == "float16":
        from .._dispatch import not_implemented

        raise not_implemented("polar_cpu", _dtypes.float16)
    _float_pair(abs, angle)
    return _finish(_complex_fn(abs * angle.cos(), abs * angle.sin()), out, "polar")


def _word(d):
    return _dtypes._WORD[d.name]


_complex_fn.__name__ = "complex"
public.update(complex=_complex_fn, polar=polar)


# ---- statistics and integration ---------------------------------------------------------------------------------


@method()
def cov(input, *, correction: int = 1, fweights=None, aweights=None):
    import ember

    try:
        if input.dtype == ember.bool:
            raise RuntimeError("cov(): bool dtype is not supported for input")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    _check_weights(fweights, "fweights", x.shape[1])
    _check_weights(aweights, "aweights", x.shape[1])
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(ember.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = ember.tensor(float(n), dtype=x.real.dtype if x.is_complex() else x.dtype, device=x.device)
        norm = w_sum - correction
    else:
        w = w.to(x.real.dtype if x.is_complex() else x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    norm = ember.clamp(norm, min=0)
    xm = x - avg.unsqueeze(1)
    c = (xm * w if w is not None else xm) @ xm.mT.conj()
    return (c / norm).squeeze()


def _check_weights(w, name, n):
    """torch's checks of cov's frequency (integral) and observation (floating) weights."""
    if w is None:
        return
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.dim()} dimensions")
    want_int = name == "fweights"
    ok = w._data.dtype.kind in "iu" if want_int else w.is_floating_point()
    if not ok:
        raise RuntimeError(f"cov(): expected {name} to have {'integral' if want_int else 'floating point'} dtype "
                           f"but got {name} with {_word(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {n}")
    if w.numel() and not no_data(w) and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@method()
def corrcoef(input):
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.real.sqrt() if c.is_complex() else d.sqrt()
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    if c.is_complex():
        return _complex_fn(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def _no_bool_y(y, name, x=None):
    try:
        if y._data.dtype == np.bool_ or x is not None and x._data.dtype == np.bool_:
            which = "`y`" if x is None else "`x` or `y`"
            raise RuntimeError(f"{name}: received a bool input for {which}, but bool is not supported")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def trapezoid(y, x=None, *, dx=None, dim=-1):
    # torch returns for no samples along dim before it refuses a bool y or x (a 0-size bool y gives False)
    if isinstance(y, Tensor) and y.dim() and (x is None or isinstance(x, Tensor)) \
            and y.shape[wrap_dim(dim, y.dim())] == 0:
        d = wrap_dim(dim, y.dim())  # (torch's zeros_like_except(y, dim): a fresh tensor, outside the graph)
        return y.new_zeros(tuple(s for i, s in enumerate(y.shape) if i != d))
    _no_bool_y(y, "trapezoid", x)
    d = wrap_dim(dim, y.dim())
    n = y.shape[d]
    if x is None:  # (torch's formula for a scalar spacing: the ends' sum overflows as torch's does)
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * (1 if dx is None else dx)
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        x = x.reshape(shape)
    dxs = x.diff(dim=d if x.dim() == y.dim() else -1)
    return ((left + right) * dxs).sum(d) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    _no_bool_y(y, "cumulative_trapezoid", x)
    d = wrap_dim(dim, y.dim())
    n = y.shape[d]
    left, right = y.narrow(d, 0, max(n - 1, 0)), y.narrow(d, 1, max(n - 1, 0)) if n else y.narrow(d, 0, 0)
    if x is None:
        return (((1 if dx is None else dx) / 2) * (left + right)).cumsum(d)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        x = x.reshape(shape)
    return ((left + right) * x.diff(dim=d if x.dim() == y.dim() else -1)).cumsum(d) / 2


public.update(trapezoid=trapezoid, trapz=trapz, cumulative_trapezoid=cumulative_trapezoid)


@method()
def dist(input, other, p=2):
    diff = input - other
    if not (diff.is_floating_point() or diff.is_complex()):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {_word(diff.dtype)} "
                           "instead.")
    return diff.norm(p)


@method()
def renorm(input, p, dim, maxnorm, *, out=None):
    import ember

    if out is not None:
        return _finish(renorm(input, p, dim, maxnorm), out, "renorm")

    d = wrap_dim(dim, input.dim())
    dims = [i for i in range(input.dim()) if i != d]
    norms = ember.linalg.vector_norm(input, p, dims, keepdim=True)
    scale = ember.where(norms > maxnorm, maxnorm / (norms + 1e-7), ember.ones_like(norms))
    return input * scale


Tensor.renorm_ = lambda self, p, dim, maxnorm: self.copy_(renorm(self, p, dim, maxnorm))


@method()
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    import ember

    try:
        if vec1.dim() != 1 or vec2.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D" if vec1.dim() != 1 else
                               f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    from .linalg_ext import _check_expands
    _check_expands(input, (vec1.shape[0], vec2.shape[0]))  # (torch expands self to the product's shape first)
    integral = not (input.is_floating_point() or input.is_complex())
    for word, v in (("beta", beta), ("alpha", alpha)):
        if integral and isinstance(v, float):
            raise RuntimeError(f"For integral input tensors, argument {word} must not be a floating point number.")
        if isinstance(v, bool) and input.dtype != ember.bool:
            raise RuntimeError(f"Boolean {word} only supported for Boolean results.")
    if input.dtype == ember.bool:  # (torch's bool addr: (beta and input) or (alpha and vec1 x vec2))
        prod = ember.outer(vec1, vec2).logical_and(ember.tensor(bool(alpha)))
        return _finish(input.logical_and(ember.tensor(bool(beta))).logical_or(prod), out, "addr")

    prod = ember.outer(vec1, vec2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # (input is ignored, NaN included; its gradient is zero)
        return _finish(input.masked_fill(ember.ones((), dtype=ember.bool), 0) + prod, out, "addr")
    return _finish((input * beta if beta != 1 else input) + prod, out, "addr")


Tensor.addr_ = lambda self, vec1, vec2, *, beta=1, alpha=1: self.copy_(addr(self, vec1, vec2, beta=beta,
                                                                            alpha=alpha))


@method()
def adjoint(input):
    try:
        return input.mH
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
