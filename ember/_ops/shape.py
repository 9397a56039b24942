"""View and shape ops: view/reshape, transpose/permute, expand, squeeze, select/narrow/slice, split,
unfold, diagonal, as_strided, and the copying joins cat/stack.

NOTE [ Views ]
A view op's kernel returns a NumPy view of its input; the dispatcher marks the result as a view (same
root `_base`, same version counter). Views never save their input for backward (a later in-place change
of the base must not invalidate them), only its shape: `saves="meta"`. Their derivative is either a cheap
inverse (reshape back, transpose back) or `_view_scatter`: zeros of the input's shape with the gradient
written through the very same view kernel, which is right for every view, overlapping ones included.

NOTE [ View meta rules ]
On meta payloads a view's rule computes torch's geometry: the view's shape, strides and storage offset
(the input's plus the view's own), from the input's through the Tensor API (`view_meta`). The argument
checks stay in the Python wrappers, which run before the op, so meta and real inputs get the same errors.
"""

from operator import index as _index

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import SHAPE, VIEW, _modes, defop, dispatch, dtype_word
from .._meta import MetaArray, meta_array, view_meta, view_strides
from .._size import Size
from .._tensor import Tensor, _version_counter, _wrap
from ._util import as_shape, attr_of_other, method, public, wrap_dim, wrap_dims

_as_strided = np.lib.stride_tricks.as_strided


# ---- the generic view gradient --------------------------------------------------------------------


@defop("view_scatter", "AsStridedScatterBackward0", SHAPE, saves="none")
def _view_scatter(g, shape, view_op, params):
    z = np.zeros(shape, g.dtype)
    v = view_op.kernel(z, *params)
    if type(v) is tuple:  # a multi-output view (split, unbind) scatters one piece: params end with its index
        raise AssertionError("view_scatter takes single-output views")
    if _overlaps(v):
        idx = view_op.kernel(np.arange(z.size).reshape(shape), *params)
        np.add.at(z.reshape(-1), idx.reshape(-1), g.reshape(-1))
    else:
        v[...] = g
    return z


@_view_scatter.derivative_
def _(gg, g, shape, view_op, params):
    return dispatch(view_op, (gg,), params)


@_view_scatter.meta_
def _(g, shape, view_op, params):
    return meta_array(shape, g._data.dtype)


def _overlaps(v):
    """Whether two elements of view `v` can share memory (only zero or crossing strides allow it)."""
    dims = sorted((abs(st), n) for n, st in zip(v.shape, v.strides) if n > 1)
    extent = v.itemsize
    for st, n in dims:
        if st < extent:
            return True
        extent = st * (n - 1) + extent
    return False


def view_grad(op):
    """The derivative of a view op: scatter the gradient back through the same view."""
    def derivative(g, a, *params):
        return dispatch(_view_scatter, (g,), (a.shape, op, params))
    op.derivative_(derivative)
    return op


# ---- view / reshape ---------------------------------------------------------------------------------


def infer_size(shape, numel):
    """Resolve one -1 in `shape` for `numel` elements, with torch's errors."""
    if -1 not in shape:
        known = 1
        for s in shape:
            known *= s
        if known == numel and min(shape, default=0) >= 0:
            return shape
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            if known == 0 and numel == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified "
                    "dimension size -1 can be any value and is ambiguous")
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


@defop("view", "ViewBackward0", VIEW, saves="meta")
def _view(a, shape):
    if a.flags.c_contiguous:  # always viewable; ndarray.reshape is 5x cheaper than np.reshape(copy=False)
        return a.reshape(shape)
    try:
        return np.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError(_VIEW_ERROR) from None


_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one dimension "
               "spans across two contiguous subspaces). Use .reshape(...) instead.")


@_view.derivative_
def _(g, a, shape):
    return g.reshape(a.shape)


@_view.meta_
def _(a, shape):
    st = view_strides(tuple(a.shape), a.stride(), shape)
    if st is None:
        raise RuntimeError(_VIEW_ERROR)
    return view_meta(a, shape, st)


@defop("reshape", "UnsafeViewBackward0", SHAPE, saves="meta")
def _reshape_copy(a, shape):
    return np.reshape(a, shape, copy=True)


@_reshape_copy.derivative_
def _(g, a, shape):
    return g.reshape(a.shape)


_reshape_copy.meta_(lambda a, shape: meta_array(shape, a._data.dtype))


def _viewable(a, shape):
    if type(a) is MetaArray:
        return view_strides(a.shape, tuple(s // a.itemsize for s in a.strides), shape) is not None
    try:
        np.reshape(a, shape, copy=False)
        return True
    except ValueError:
        return False


@method()
def view(self, *shape, size=None, dtype=None):
    if size is not None or dtype is not None:
        shape = (size if dtype is None else dtype,)
    if not (shape and type(shape[0]) is int):
        if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list, Size)) and shape[0] is not None:
            return _view_dtype(self, shape[0])
        shape = as_shape(shape)
    n = 1
    try:
        for s in shape:
            n *= s
        if n != self._data.size or not shape or min(shape) < 0:  # -1 to infer, or an error to report
            shape = infer_size(as_shape(shape), self._data.size)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(_view, (self,), (shape,))


@method()
def reshape(input, *shape_, shape=None):
    shape = shape_ if shape is None else (shape,)
    try:
        shape = infer_size(as_shape(shape), input._data.size)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if shape == input._data.shape:
        return dispatch(_view, (input,), (shape,))
    if _viewable(input._data, shape):
        return dispatch(_view, (input,), (shape,))
    return dispatch(_reshape_copy, (input,), (shape,))


@defop("view", None, SHAPE, saves="meta", overload="dtype")
def _view_as_dtype(a, dtype):  # (dtype: an ember dtype, the op's static param)
    np_dtype = _dtypes.to_numpy(dtype)
    if a.itemsize != np_dtype.itemsize:
        strides = tuple(s // a.itemsize for s in a.strides)
        _dtype_view_geometry(a.shape, strides, 0, a.dtype, np_dtype)
    return a.view(np_dtype)


def _dtype_view_geometry(shape, strides, offset, old, new):
    """Shape, strides and offset (in elements of `new`) of a view as another dtype, with torch's errors."""
    if old.itemsize == new.itemsize:
        return shape, strides, offset
    words = f"{dtype_word(_dtypes.from_numpy(old))} as {dtype_word(_dtypes.from_numpy(new))}"
    if not shape:
        raise RuntimeError(f"self.dim() cannot be 0 to view {words} (different element sizes)")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {words} (different element sizes), but got "
                           f"{strides[-1]}")
    if old.itemsize > new.itemsize:
        r = old.itemsize // new.itemsize
        return shape[:-1] + (shape[-1] * r,), tuple(s * r for s in strides[:-1]) + (1,), offset * r
    r = new.itemsize // old.itemsize
    if shape[-1] % r:
        raise RuntimeError(f"self.size(-1) must be divisible by {r} to view {words} (different element "
                           f"sizes), but got {shape[-1]}")
    for i, s in enumerate(strides[:-1]):
        if s % r:
            raise RuntimeError(f"self.stride({i}) must be divisible by {r} to view {words} (different "
                               f"element sizes), but got {s}")
    if offset % r:
        raise RuntimeError(f"self.storage_offset() must be divisible by {r} to view {words} (different "
                           f"element sizes), but got {offset}")
    return shape[:-1] + (shape[-1] // r,), tuple(s // r for s in strides[:-1]) + (1,), offset // r


@_view_as_dtype.meta_
def _(a, dtype):
    new = _dtypes.to_numpy(dtype)
    shape, st, off = _dtype_view_geometry(tuple(a.shape), a.stride(), a.storage_offset(), a._data.dtype, new)
    return meta_array(shape, new, st, off)


def _view_dtype(self, dtype):
    r = dispatch(_view_as_dtype, (self,), (dtype,))
    r._vc = _version_counter(self)  # shares memory and version, but torch gives it no _base
    return r


# ---- complex numbers as pairs of reals -----------------------------------------------------------------

_REAL_OF = {np.dtype("complex64"): np.dtype("float32"), np.dtype("complex128"): np.dtype("float64")}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


@defop("view_as_real", "ViewAsRealBackward0", VIEW, saves="none")
def _view_as_real(a):
    return a[..., None].view(_REAL_OF[a.dtype])  # the new size-1 axis is contiguous: NumPy splits it in two


@defop("view_as_complex", "ViewAsComplexBackward0", VIEW, saves="none", tags=("not_holomorphic",))
def _view_as_complex(a):
    return a.view(_COMPLEX_OF[a.dtype])[..., 0]


_view_as_real.derivative_(lambda g, a: dispatch(_view_as_complex, (g.contiguous(),)))
_view_as_complex.derivative_(lambda g, a: dispatch(_view_as_real, (g,)))
_view_as_real.meta_(lambda a: meta_array(tuple(a.shape) + (2,), _REAL_OF[a._data.dtype],
                                         tuple(s * 2 for s in a.stride()) + (1,), a.storage_offset() * 2))
_view_as_complex.meta_(lambda a: meta_array(tuple(a.shape)[:-1], _COMPLEX_OF[a._data.dtype],
                                            tuple(s // 2 for s in a.stride()[:-1]), a.storage_offset() // 2))


def view_as_real(input):
    try:
        if input._data.dtype not in _REAL_OF:
            raise RuntimeError("view_as_real is only supported for complex tensors")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(_view_as_real, (input,))


def view_as_complex(input):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("view_as_complex", view_as_complex, input)
    try:
        a = input._data
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if a.dtype not in _COMPLEX_OF:
        if a.dtype == np.float16:
            raise NotImplementedError("ember has no complex32 (ComplexHalf) dtype for view_as_complex of a half tensor")
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {dtype_word(input.dtype)}")
    if not a.ndim or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    st = input.stride()
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(x % 2 for x in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return dispatch(_view_as_complex, (input,))


def real(input):
    """The real part: `input` itself for a real tensor, else a view into the complex storage."""
    try:
        if input._data.dtype not in _REAL_OF:
            return input
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return view_as_real(input).select(-1, 0)


def imag(input):
    try:
        if input._data.dtype not in _REAL_OF:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return view_as_real(input).select(-1, 1)


def _set_part(part):
    def setter(self, value):
        part(self).copy_(value)
    return setter


Tensor.real = property(real, _set_part(real))
Tensor.imag = property(imag, _set_part(imag))
public.update(view_as_real=view_as_real, view_as_complex=view_as_complex, real=real, imag=imag)


@method()
def view_as(self, other):
    return self.view(attr_of_other(other, "shape"))


@method()
def reshape_as(self, other):
    return self.reshape(attr_of_other(other, "shape"))


@method()
def flatten(input, start_dim=0, end_dim=-1):
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n == 0:
        return input.reshape(1)
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._data.shape
    return input.reshape(shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


@method()
def unflatten(input, dim, sizes):
    if not sizes:  # (torch's Tensor.unflatten checks this in Python, before its parser)
        raise RuntimeError("unflatten: sizes must be non-empty")
    shape = input._data.shape
    d = wrap_dim(dim, input._data.ndim)
    try:
        sizes = tuple(_index(s) for s in sizes)
    except TypeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if -1 in sizes:
        sizes = infer_size(sizes, shape[d])
    elif int(np.prod(sizes)) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shape[d]}) in the input tensor")
    return input.view(shape[:d] + sizes + shape[d + 1:])


@method()
def ravel(input):
    try:
        return input.reshape(-1)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@defop("squeeze", "SqueezeBackward0", VIEW, saves="meta")
def _squeeze(a, dims):
    if dims is None:
        return a.reshape(tuple(s for s in a.shape if s != 1)) if 1 in a.shape else a.view()
    return a.reshape(tuple(s for i, s in enumerate(a.shape) if not (i in dims and s == 1)))


@_squeeze.derivative_
def _unsqueeze_to(g, a, dims):
    """torch's unsqueeze_to: the gradient unsqueezed at each squeezed size-1 dim, one unsqueeze per dim."""
    for d, n in enumerate(a.shape):
        if n == 1 and (dims is None or d in dims):
            g = g.unsqueeze(d)
    return g


_squeeze_dim = defop("squeeze", "SqueezeBackward1", VIEW, saves="meta", overload="dim")(_squeeze.kernel)
_squeeze_dim.derivative_(_unsqueeze_to)
_squeeze_dims = defop("squeeze", "SqueezeBackward2", VIEW, saves="meta", overload="dims")(_squeeze.kernel)
_squeeze_dims.derivative_(_unsqueeze_to)


@_squeeze.meta_
def _squeeze_meta(a, dims):
    keep = [i for i, s in enumerate(a.shape) if s != 1 or (dims is not None and i not in dims)]
    st = a.stride()
    return view_meta(a, tuple(a.shape[i] for i in keep), tuple(st[i] for i in keep))


_squeeze_dim.meta_(_squeeze_meta)
_squeeze_dims.meta_(_squeeze_meta)


@method()
def squeeze(input, *dims, dim=None):
    if dims:  # (Tensor.squeeze(0, 1))
        dim = dims[0] if len(dims) == 1 else dims
    if dim is None:
        return dispatch(_squeeze, (input,), (None,))
    n = input._data.ndim
    dims = wrap_dims(dim, n) if n else ()
    return dispatch(_squeeze_dims if isinstance(dim, (tuple, list)) else _squeeze_dim, (input,), (dims,))


@defop("unsqueeze", "UnsqueezeBackward0", VIEW, saves="meta")
def _unsqueeze(a, d):
    return np.expand_dims(a, d)


@_unsqueeze.derivative_
def _(g, a, d):
    return g.squeeze(d)


@_unsqueeze.meta_
def _(a, d):
    shape, st = list(a.shape), list(a.stride())
    st.insert(d, 1 if d >= len(shape) else shape[d] * st[d])
    shape.insert(d, 1)
    return view_meta(a, shape, st)


@method()
def unsqueeze(input, dim):
    return dispatch(_unsqueeze, (input,), (wrap_dim(dim, input._data.ndim + 1),))


# ---- transposes -------------------------------------------------------------------------------------


@defop("transpose", "TransposeBackward0", VIEW, saves="none")
def _transpose(a, d0, d1):
    try:
        return np.swapaxes(a, d0, d1)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@_transpose.derivative_
def _(g, a, d0, d1):
    return g.transpose(d0, d1)


@_transpose.meta_
def _(a, d0, d1):
    shape, st = list(a.shape), list(a.stride())
    shape[d0], shape[d1] = shape[d1], shape[d0]
    st[d0], st[d1] = st[d1], st[d0]
    return view_meta(a, shape, st)


@method("transpose", "swapaxes", "swapdims")
def transpose(input, dim0, dim1):
    n = input._data.ndim
    return dispatch(_transpose, (input,), (wrap_dim(dim0, n), wrap_dim(dim1, n)))


public["swapdims"] = transpose


@method("swapaxes")
def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


@defop("t", "TBackward0", VIEW, saves="none")
def _t(a):
    return a.T


@_t.derivative_
def _(g, a):
    return g.t()


_t.meta_(lambda a: view_meta(a, tuple(a.shape)[::-1], a.stride()[::-1]))


@method()
def t(input):
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return dispatch(_t, (input,))


@defop("permute", "PermuteBackward0", VIEW, saves="none")
def _permute(a, dims):
    return a.transpose(dims)


@_permute.derivative_
def _(g, a, dims):
    return g.permute(tuple(np.argsort(dims)))


_permute.meta_(lambda a, dims: view_meta(a, tuple(a.shape[d] for d in dims),
                                         tuple(a.stride()[d] for d in dims)))


@method()
def permute(input, *dims_, dims=None):
    dims = as_shape(dims_ if dims is None else (dims,))
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch(_permute, (input,), (wrapped,))


@method("movedim", "moveaxis")
def movedim(input, source, destination):
    n = input._data.ndim
    src = wrap_dims(source, n)
    dst = wrap_dims(destination, n)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should "
                           f"contain the same number of dims as destination ({list(dst)} dims)")
    order = [d for d in range(n) if d not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = tuple(p if p is not None else next(it) for p in perm)
    return dispatch(_permute, (input,), (perm,))


public["moveaxis"] = movedim


# ---- expand -----------------------------------------------------------------------------------------


# NOTE [ expand keeps the strides of size-1 dims ]
# NumPy's broadcast_to gives every size-1 dim of its result stride 0; torch's expand keeps the input's stride
# at a dim it does not broadcast (tensor([[-1]]).expand(3, 1) has strides (0, 1)). Those strides show where
# a view reads them: viewing that int64 tensor as int32 (different element sizes) needs stride(-1) == 1, and
# torch's view succeeds. So where the shape has a size-1 dim (a tuple scan; no other expand pays more), the
# result takes torch's strides (its inferExpandGeometry, the meta rule below) in bytes.
@defop("expand", "ExpandBackward0", VIEW, saves="meta")
def _expand(a, shape):
    r = np.broadcast_to(a, shape)
    if 1 in shape:
        strides = _expand_strides(a.shape, a.strides, shape)
        if strides != r.strides:
            r = np.lib.stride_tricks.as_strided(r, shape, strides, writeable=False)
    return r


def _expand_strides(have, st, shape):
    """torch's inferExpandGeometry: broadcast dims get stride 0, a new leading dim of size 1 the stride that
    steps over the dims inside it (strides in any unit)."""
    lead = len(shape) - len(have)
    out = [0] * len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if i >= lead:
            out[i] = st[i - lead] if have[i - lead] == shape[i] else 0
        elif shape[i] == 1 and i + 1 < len(shape):
            out[i] = shape[i + 1] * out[i + 1]
    return tuple(out)


@_expand.derivative_
def _(g, a, shape):
    return g.sum_to_size(a.shape)


@_expand.meta_
def _(a, shape):
    return view_meta(a, shape, list(_expand_strides(tuple(a.shape), a.stride(), shape)))


def _expand_shape(input, sizes, internal=False):
    """The expanded shape (torch's expand checks); `internal`: an expand inside an op's kernel, where torch's
    message names the dtype's backend type (CPUBoolType) instead of the Python one (torch.BoolTensor)."""
    from .._dispatch import dtype_word
    from .._tensor_str import legacy_type_name

    try:
        shape = input._data.shape
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if len(sizes) < len(shape):
        name = f"CPU{dtype_word(input.dtype)}Type" if internal else legacy_type_name(input)
        raise RuntimeError(
            f"expand({name}{{[{', '.join(map(str, shape))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): "
            f"the number of sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions "
            f"in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   "non-existing dimension 0")
            out.append(s)
            continue
        have = shape[i - lead]
        if s == -1:
            s = have
        elif have != 1 and s != have:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at non-singleton "
                f"dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  Tensor sizes: "
                f"[{', '.join(map(str, shape))}]")
        out.append(s)
    return tuple(out)


@method()
def expand(self, *sizes, size=None, implicit=False):
    shape = _expand_shape(self, as_shape(sizes if size is None else (size,)))
    return dispatch(_expand, (self,), (shape,))


@method()
def expand_as(self, other):
    return self.expand(attr_of_other(other, "shape"))


@method()
def broadcast_to(input, *size_, size=None):
    try:
        return input.expand(as_shape(size_ if size is None else (size,)))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def broadcast_shapes(*shapes):
    from collections.abc import Sequence

    shapes = [s for s in shapes if s is not None]  # (torch's _refs._broadcast_shapes skips None)
    for s in shapes:
        if not isinstance(s, (int, Sequence)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    try:
        try:
            return Size(np.broadcast_shapes(*[tuple(s) if not isinstance(s, int) else (s,) for s in shapes]))
        except ValueError:
            raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape. "
                               f"Shapes: {[list(s) for s in shapes]}") from None
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


public["broadcast_shapes"] = broadcast_shapes


def broadcast_tensors(*tensors):
    try:
        shape = broadcast_shapes(*[t.shape for t in tensors])
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return tuple(t.expand(shape) for t in tensors)


public["broadcast_tensors"] = broadcast_tensors


@defop("sum_to_size", "SumBackward1", SHAPE, saves="meta")
def _sum_to(a, shape):
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1)
    if not axes:
        return a.reshape(shape)
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":  # float16 / bfloat16: accumulate in float32 and round
        # once, as torch's CPU sum does (NumPy's bfloat16 sum is slow and accumulates in bfloat16)
        return np.add.reduce(a, axis=axes, keepdims=True, dtype=np.float32).astype(a.dtype).reshape(shape)
    if a.dtype.kind in "fc":  # (the ufunc called here, so that ember's NumPy-warning filter covers it)
        return np.add.reduce(a, axis=axes, keepdims=True).reshape(shape)
    return a.sum(axis=axes, keepdims=True).reshape(shape)


@_sum_to.derivative_
def _(g, a, shape):
    return g.expand(a.shape)


_sum_to.meta_(lambda a, shape: meta_array(shape, a._data.dtype))


@method()
def sum_to_size(self, *size_, size=None):
    shape = as_shape(size_ if size is None else (size,))
    if tuple(shape) == self._data.shape:
        return self
    try:
        np.broadcast_shapes(shape, self._data.shape)
        ok = len(shape) <= self._data.ndim
    except ValueError:
        ok = False
    if not ok or np.broadcast_shapes(shape, self._data.shape) != self._data.shape:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(self._data.shape)}}}.")
    return dispatch(_sum_to, (self,), (shape,))


# ---- selecting views -------------------------------------------------------------------------------


@defop("select", "SelectBackward0", VIEW, saves="meta")
def _select(a, dim, index):
    try:
        return a[(slice(None),) * dim + (index, Ellipsis)]  # the Ellipsis keeps a 0-d result a view
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@defop("slice", "SliceBackward0", VIEW, saves="meta")
def _slice(a, dim, start, stop, step):
    return a[(slice(None),) * dim + (slice(start, stop, step),)]


view_grad(_select)
view_grad(_slice)


@_select.meta_
def _(a, dim, index):
    shape, st = tuple(a.shape), a.stride()
    return view_meta(a, shape[:dim] + shape[dim + 1:], st[:dim] + st[dim + 1:], index * st[dim])


@_slice.meta_
def _(a, dim, start, stop, step):
    shape, st = list(a.shape), list(a.stride())
    start = min(start, shape[dim])
    shape[dim] = max(0, -(-(min(stop, shape[dim]) - start) // step))
    offset = start * st[dim]
    st[dim] *= step
    return view_meta(a, shape, st, offset)


@method()
def select(input, dim, index: int):
    try:
        index = _index(index)
    except TypeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n = input._data.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, n)
    size = input._data.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._data.shape)} at dimension {dim}")
    return dispatch(_select, (input,), (d, index + size if index < 0 else index))


@method()
def narrow(input, dim, start, length):
    n = input._data.ndim
    d = wrap_dim(dim, n)
    size = input._data.shape[d]
    try:
        start = _index(start)
    except TypeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return dispatch(_slice, (input,), (d, start, start + length, 1))


def slice_dim(input, dim, start, stop, step):
    """input[..., start:stop:step, ...] along `dim` (used by indexing)."""
    return dispatch(_slice, (input,), (dim, start, stop, step))


@defop("diagonal", "DiagonalBackward0", VIEW, saves="meta")
def _diagonal(a, offset, d1, d2):
    b = a.transpose([i for i in range(a.ndim) if i not in (d1, d2)] + [d1, d2])
    n, m = b.shape[-2:]
    s1, s2 = b.strides[-2:]
    try:
        length = max(0, min(n, m - offset)) if offset >= 0 else max(0, min(n + offset, m))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if length:  # move the start to the first diagonal element
        b = b[..., :, offset:] if offset >= 0 else b[..., -offset:, :]
    return _as_strided(b, b.shape[:-2] + (length,), b.strides[:-2] + (s1 + s2,))


view_grad(_diagonal)


@_diagonal.meta_
def _(a, offset, d1, d2):
    shape, st = tuple(a.shape), a.stride()
    n, m = shape[d1], shape[d2]
    length = max(0, min(n, m - offset)) if offset >= 0 else max(0, min(n + offset, m))
    start = (offset * st[d2] if offset >= 0 else -offset * st[d1]) if length else 0
    rest = [i for i in range(len(shape)) if i not in (d1, d2)]
    return view_meta(a, tuple(shape[i] for i in rest) + (length,),
                     tuple(st[i] for i in rest) + (st[d1] + st[d2],), start)


@method()
def diagonal(input, offset: int = 0, dim1=0, dim2=1):
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dispatch(_diagonal, (input,), (offset, d1, d2))


@defop("unfold", "UnfoldBackward0", VIEW, saves="meta")
def _unfold(a, dim, size, step):
    if a.ndim == 0:
        return _as_strided(a, (size,), (a.itemsize,))
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
    return _as_strided(a, shape, strides)


view_grad(_unfold)


@_unfold.meta_
def _(a, dim, size, step):
    if a.dim() == 0:
        return view_meta(a, (size,), (1,))
    shape, st = tuple(a.shape), a.stride()
    n = (shape[dim] - size) // step + 1
    return view_meta(a, shape[:dim] + (n,) + shape[dim + 1:] + (size,),
                     st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],))


@method(top=False)
def unfold(self, dimension, size: int, step: int):
    n = self._data.ndim
    d = wrap_dim(dimension, n) if n else 0
    have = self._data.shape[d] if n else 1
    if size > have:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {have} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return dispatch(_unfold, (self,), (d, size, step))


@defop("as_strided", "AsStridedBackward0", VIEW, saves="meta")
def _as_strided_op(a, size, stride, offset):
    item = a.itemsize
    from .._storage import _address, _flat_bytes

    flat = _flat_bytes(a)
    start = offset * item if offset is not None else _address(a) - _address(flat)
    need = start + sum((s - 1) * st for s, st in zip(size, stride)) * item + item if all(size) else start
    if need > flat.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {start // item}, and "
            f"itemsize {item} requiring a storage size of {need} are out of bounds for storage of size {flat.size}")
    return np.ndarray(size, a.dtype, buffer=flat, offset=start, strides=tuple(s * item for s in stride))


view_grad(_as_strided_op)
# (torch's meta as_strided does not check the storage's bounds: a meta storage has no size to hold to)
_as_strided_op.meta_(lambda a, size, stride, offset: meta_array(
    size, a._data.dtype, stride, a.storage_offset() if offset is None else offset))


@method()
def as_strided(input, size, stride, storage_offset: "int | None" = None):
    return dispatch(_as_strided_op, (input,), (tuple(size), tuple(stride), storage_offset))


# ---- split / unbind --------------------------------------------------------------------------------


@defop("split", "SplitBackward0", VIEW, saves="meta")
def _split(a, dim, bounds):
    idx = (slice(None),) * dim
    return tuple(a[idx + (slice(lo, hi),)] for lo, hi in bounds)


@_split.derivative_
def _(grads, a, dim, bounds):
    return cat(list(grads) if type(grads) is tuple else [grads], dim)


@defop("unbind", "UnbindBackward0", VIEW, saves="meta")
def _unbind(a, dim):
    idx = (slice(None),) * dim
    return tuple(a[idx + (i, Ellipsis)] for i in range(a.shape[dim]))


@_unbind.derivative_
def _(grads, a, dim):
    return stack(list(grads) if type(grads) is tuple else [grads], dim)


_split.meta_(lambda a, dim, bounds: tuple(_slice.meta((a,), (dim, lo, hi, 1)) for lo, hi in bounds))
_unbind.meta_(lambda a, dim: tuple(_select.meta((a,), (dim, i)) for i in range(a.shape[dim])))


def _bounds(sizes):
    out, lo = [], 0
    for s in sizes:
        out.append((lo, lo + s))
        lo += s
    return tuple(out)


@method()
def split(tensor, split_size_or_sections, dim=0):
    try:
        n = tensor._data.ndim
        if n == 0:  # (torch's first check, before the dim's)
            raise RuntimeError("split expects at least a 1-dimensional tensor")
    except AttributeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    d = wrap_dim(dim, n)
    try:
        size = tensor._data.shape[d]
        if isinstance(split_size_or_sections, int):
            step = split_size_or_sections
            if step < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
            if step == 0 and size != 0:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
            # (torch makes at least one piece: an empty dim gives one empty piece)
            sizes = [min(step, size - i) for i in range(0, size, step)] or [0] if step else [0]
        else:
            sizes = list(split_size_or_sections)
            if sum(sizes) != size:
                raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's "
                                   f"size at dimension {d}), but got split_sizes={sizes}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(_split, (tensor,), (d, _bounds(sizes)))


Tensor.split_with_sizes = lambda self, split_sizes, dim=0: split(self, list(split_sizes), dim)


def _tensor_split_method(self, split_size, dim=0):  # (torch's Tensor.split names its argument split_size)
    return split(self, split_size, dim)


_tensor_split_method.__name__ = "split"
Tensor.split = _tensor_split_method


@method()
def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input._data.shape[wrap_dim(dim, input._data.ndim)]
    if size == 0:  # (torch's chunk of an empty dim gives `chunks` empty pieces)
        return split(input, [0] * chunks, dim)
    return split(input, -(-size // chunks), dim)


@method()
def tensor_split(input, indices_or_sections=None, dim=0, *, indices=None, sections=None,
                 tensor_indices_or_sections=None):
    for given in (indices, sections, tensor_indices_or_sections):
        indices_or_sections = given if given is not None else indices_or_sections
    try:
        if input._data.ndim == 0:
            raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
        d = wrap_dim(dim, input._data.ndim)
        size = input._data.shape[d]
        if isinstance(indices_or_sections, Tensor):
            indices_or_sections = indices_or_sections.tolist()
        if isinstance(indices_or_sections, int):
            n = indices_or_sections
            if n <= 0:
                raise RuntimeError(f"number of sections must be larger than 0, got {n}")
            q, r = divmod(size, n)
            sizes = [q + 1] * r + [q] * (n - r)
            bounds = _bounds(sizes)
        else:
            cuts = [0] + [min(max(int(i) + (size if int(i) < 0 else 0), 0), size) for i in indices_or_sections] + [size]
            bounds = tuple((lo, max(lo, hi)) for lo, hi in zip(cuts[:-1], cuts[1:]))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(_split, (input,), (d, bounds))


@method()
def unbind(input, dim=0):
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return dispatch(_unbind, (input,), (wrap_dim(dim, n),))


# ---- joins ------------------------------------------------------------------------------------------


@defop("cat", "CatBackward0", SHAPE, "same", saves="meta")
def _cat(*args):
    *arrays, dim = args
    try:
        return np.ascontiguousarray(np.concatenate(arrays, axis=dim))
    except ValueError:  # (a 1-D empty input beside inputs of more dims: `_joined`)
        return np.ascontiguousarray(np.concatenate(_joined(arrays), axis=dim))


def _joined(ts):
    """The inputs cat joins: torch's legacy rule skips 1-D empty tensors whatever the other shapes are (they
    still take part in the result's dtype, and get an empty gradient)."""
    return [t for t in ts if not _skipped(t)] or ts[:1]


def _skipped(t):
    return t is not None and len(t.shape) == 1 and t.shape[0] == 0


@_cat.derivative_
def _(g, *args):
    *inputs, dim = args
    if not any(_skipped(t) for t in inputs) or g.dim() == 1:
        return split(g, [t.shape[dim] if t is not None else 0 for t in inputs], dim)
    pieces = iter(split(g, [t.shape[dim] if t is not None else 0 for t in inputs if not _skipped(t)], dim))
    return tuple(g.new_zeros((0,)) if _skipped(t) else next(pieces) for t in inputs)


@_cat.meta_
def _(*args):
    *tensors, dim = args
    joined = _joined(tensors)
    shape = list(joined[0].shape)
    shape[dim] = sum(t.shape[dim] for t in joined)
    return meta_array(shape, _dtypes.result_dtype(tensors))


@method(top=True)
def cat(tensors, dim=0, *, out=None):
    from ._util import finish_out

    if isinstance(tensors, Tensor):
        raise TypeError("cat() received an invalid combination of arguments - got (Tensor), but expected "
                        "one of:\n (tuple of Tensors tensors, int dim = 0, *, Tensor out = None)")
    try:
        tensors = list(tensors)
        if not tensors:
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
        # torch's legacy rule: 1-D empty tensors are skipped whatever the other shapes are
        keep = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not keep:
        keep = tensors[:1]
    ref = keep[0]._data
    n = ref.ndim
    if n == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, n)
    for i, t in enumerate(keep):
        a = t._data
        if a.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and {a.ndim}")
        for k in range(n):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list.")
    r = dispatch(_cat, tuple(tensors) if len(keep) != len(tensors) else tuple(keep), (d,))
    return finish_out(r, out)


public["concat"] = public["concatenate"] = cat


@defop("stack", "StackBackward0", SHAPE, "same", saves="meta")
def _stack(*args):
    *arrays, dim = args
    return np.ascontiguousarray(np.stack(arrays, axis=dim))


@_stack.derivative_
def _(g, *args):
    *inputs, dim = args
    return g.unbind(dim)


@_stack.meta_
def _(*args):
    *tensors, dim = args
    shape = list(tensors[0].shape)
    shape.insert(dim, len(tensors))
    return meta_array(shape, _dtypes.result_dtype(tensors))


@method(top=True)
def stack(tensors, dim=0, *, out=None):
    from ._util import finish_out

    try:
        tensors = list(tensors)
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        shape = tensors[0]._data.shape
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                               f"{list(t._data.shape)} at entry {i}")
    d = wrap_dim(dim, len(shape) + 1)
    return finish_out(dispatch(_stack, tuple(tensors), (d,)), out)


# ---- contiguity, detach -----------------------------------------------------------------------------


@method(top=False)
def contiguous(self, memory_format=None):
    from .._tensor import _is_contiguous

    if _is_contiguous(self._data) and memory_format is None:
        return self
    return dispatch(_contig, (self,))


@defop("contiguous", "CloneBackward0", SHAPE, saves="none")
def _contig(a):
    return np.ascontiguousarray(a)


@_contig.derivative_
def _(g, a):
    return g


_contig.meta_(lambda a: meta_array(a.shape, a._data.dtype))


@method()
def detach(input):
    if getattr(type(input), "_detaches_itself", False):  # (V) vmap's BatchedTensor keeps its batch
        return input.detach()
    try:
        t = _wrap(input._data, Tensor)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    t._vc = _version_counter_of(input)  # shares the version counter; not a view (torch: `_base` is None)
    return t


def _version_counter_of(t):
    from .._tensor import _version_counter

    return _version_counter(t)


@method(top=False)
def detach_(self):
    if self._base is not None and self._base._requires_grad:
        raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                           "DistributedDataParallel "
                           "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of "
                           "DDP buckets, and hence detach_() cannot be called on these gradients. To fix this error, "
                           "please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                           "solution.")
    self._grad_fn = None
    self._requires_grad = False
    return self
