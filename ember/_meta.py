"""Meta payloads: a tensor's shape, dtype and strides without its data, and the rules ops compute them by.

NOTE [ Meta payloads ]
A Tensor's `_data` is normally a NumPy array. A *meta* tensor (`device="meta"`, and the fake tensors of
the compiler's tracing modes) holds a `MetaArray` instead: shape, dtype, strides and storage offset, and
no memory. Ops run on it through their meta rule (`op.meta`, declared beside the kernel with
`@op.meta_`) or, for the kinds whose facts follow from the declaration (pointwise ops that promote), a
rule derived from `kind` and `promote` (`derived_rule`).

The dispatcher's fast path never asks whether a payload is meta: a `MetaArray` refuses to give data, so
the first thing a kernel does with its data (a NumPy call, `astype`, indexing, arithmetic) raises
`NoData`, which `_run` catches and answers by running the meta rule instead. The kernel's own argument
checks that come before its first NumPy call still run, so meta inputs get torch's validation errors
from them; a meta rule checks the rest. Code outside ops that reads `._data` of a meta tensor gets
torch's "Cannot copy out of meta tensor; no data!".

A meta rule takes the op's inputs (Tensors, meta ones among them, and Python scalars) and params, as the
kernel takes their arrays (`rule(*inputs, *params)`), and returns a `MetaArray` (or a tuple of them).
It is written against the Tensor API (`t.shape`, `t.dtype`, `t.stride()`), as torch's meta functions are.
"""

from __future__ import annotations

import numpy as np

from . import _dtypes
from ._argparse import call_error

__all__ = ["MetaArray", "NoData", "meta_array", "derived_rule", "pointwise_strides", "torch_layout",
           "like_array", "with_strides", "broadcast_shapes",
           "broadcast_error",
           "contiguous_strides", "like_strides", "view_meta", "view_strides", "no_meta_kernel", "reduced_shape",
           "reduction_meta", "unary_meta", "where_led_rule", "lapack_strides", "real_dtype", "matmul_meta",
           "conv_out_size", "conv_transpose_out_size", "pool_out_size"]


class NoData(NotImplementedError):
    """Raised when something reaches for the data of a meta payload (see NOTE [ Meta payloads ])."""

    def __init__(self, msg="Cannot copy out of meta tensor; no data!"):
        super().__init__(msg)


def _refuse(self, *args, **kwargs):
    raise NoData()


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "writeable")

    def __init__(self, c, f):
        self.c_contiguous, self.f_contiguous, self.writeable = c, f, True


class MetaArray:
    """What a NumPy array says about itself, with no buffer: shape, dtype, strides (in bytes, as NumPy's)."""

    __slots__ = ("shape", "dtype", "strides", "offset")
    # NumPy must not treat it as an array-like: every protocol hook refuses (see NOTE [ Meta payloads ])
    __array_priority__ = 1e9

    def __init__(self, shape: tuple, dtype: np.dtype, strides: tuple, offset: int = 0):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.strides = tuple(strides)
        self.offset = offset  # storage offset, in elements

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> _Flags:
        item = self.dtype.itemsize
        c = self.strides == _contiguous(self.shape, item) or self.size <= 1
        f = self.strides == _contiguous(self.shape[::-1], item)[::-1] or self.size <= 1
        return _Flags(c, f)

    @property
    def base(self):
        return None

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides})"

    # every way of reaching the data refuses
    __array__ = __array_ufunc__ = __array_function__ = _refuse
    __getitem__ = __setitem__ = __iter__ = __len__ = _refuse
    __bool__ = __float__ = __int__ = __index__ = __complex__ = _refuse
    astype = reshape = transpose = view = copy = ravel = item = tolist = fill = sum = _refuse

    def __getattr__(self, name):  # any other ndarray attribute (T, real, ctypes, ...) is data
        if name.startswith("__"):
            raise AttributeError(name)
        raise NoData()


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift", "lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert"):
    setattr(MetaArray, f"__{_name}__", _refuse)
    if _name not in ("lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert"):
        setattr(MetaArray, f"__r{_name}__", _refuse)
MetaArray.__hash__ = object.__hash__


def _contiguous(shape, item=1):
    st, acc = [], item
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def no_data(t) -> bool:
    """Whether tensor `t` has no values (a meta tensor, or a fake one: NOTE [ Meta payloads ]); value checks
    are skipped for it. (`Tensor.is_meta` is the device a tensor reports, which a fake tensor does not.)
    vmap's BatchedTensor holds a MetaArray too, but its values exist, in its batch: checks on it must run (as
    ops, which vmap batches), so it says `_values_elsewhere`."""
    try:
        return type(t._data) is MetaArray and not getattr(t, "_values_elsewhere", False)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def meta_array(shape, dtype, strides=None, offset=0) -> MetaArray:
    """A MetaArray of `shape` and ember or NumPy `dtype`; `strides` in elements (contiguous if None)."""
    npd = dtype if isinstance(dtype, np.dtype) else _dtypes.to_numpy(dtype)
    st = _contiguous(shape) if strides is None else strides
    return MetaArray(shape, npd, tuple(s * npd.itemsize for s in st), offset)


contiguous_strides = _contiguous


def like_strides(t) -> tuple:
    """The strides torch's `empty_like` (preserve_format) gives `t`: a dense tensor's own, else its
    order, dense."""
    shape = tuple(t.shape)
    if 0 in shape:  # (torch calls every empty tensor dense: its strides are kept as they are)
        return tuple(t.stride())
    return pointwise_strides(shape, [(shape, t.stride())])


def unary_meta(t, dtype=None) -> MetaArray:
    """The output of a one-input pointwise op (TensorIterator's: dense in `t`'s order; an empty one is
    contiguous), in `dtype` (`t`'s if None)."""
    shape = tuple(t.shape)
    strides = pointwise_strides(shape, [(shape, t.stride())])
    return meta_array(shape, t._data.dtype if dtype is None else dtype, strides)


def view_meta(t, shape, strides, offset=0) -> MetaArray:
    """The payload of a view of `t`: `strides` in elements, `offset` (in elements) added to t's."""
    return meta_array(shape, t._data.dtype, strides, t.storage_offset() + offset)


def view_strides(oldshape, oldstride, newshape):
    """The strides of `view(newshape)` over a tensor of `oldshape` and `oldstride`, or None where no view
    exists: torch's `computeStride` (each run of dims contiguous in memory may be regrouped freely)."""
    numel = 1
    for s in oldshape:
        numel *= s
    if numel == 0:
        return tuple(oldstride) if tuple(oldshape) == tuple(newshape) else _contiguous(newshape)
    if not oldshape:
        return (1,) * len(newshape)
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base = oldstride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1
                             and oldstride[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = oldstride[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def lapack_strides(shape) -> tuple:
    """The strides torch gives a LAPACK result (`batched_matrix_contiguous_strides(..., column_major)`):
    contiguous batches of column-major matrices (a vector or scalar: contiguous)."""
    st = list(_contiguous(shape))
    if len(shape) >= 2:
        st[-1], st[-2] = max(shape[-2], 1), 1
    return tuple(st)


def real_dtype(np_dtype) -> np.dtype:
    """The real dtype of a complex one (the dtype of its abs, of singular values and eigenvalues)."""
    return np.dtype(f"f{np_dtype.itemsize // 2}") if np_dtype.kind == "c" else np_dtype


def matmul_meta(a, b, dtype=None) -> MetaArray:
    """The (contiguous) result of a matrix product of tensors `a` and `b` with torch's rank rules (a 1-D
    operand is a vector, leading dims broadcast); the caller has checked the contracted sizes."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    if len(sa) == 1 and len(sb) == 1:
        shape = ()
    elif len(sb) == 1:
        shape = sa[:-1]
    elif len(sa) == 1:
        shape = sb[:-2] + sb[-1:]
    else:
        shape = broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1])
    return meta_array(shape, a._data.dtype if dtype is None else dtype)


def conv_out_size(size, k, stride, pad, dil):
    """A convolution's output length along one spatial dim, for padding (lo, hi) (< 1: the kernel does not fit
    the padded input, torch's "Kernel size can't be greater than actual input size")."""
    return (size + pad[0] + pad[1] - dil * (k - 1) - 1) // stride + 1


def conv_transpose_out_size(size, k, stride, pad, dil, output_padding):
    """A transposed convolution's output length along one spatial dim."""
    return (size - 1) * stride - 2 * pad + dil * (k - 1) + output_padding + 1


def pool_out_size(size, k, s, p, d, ceil_mode):
    """torch's pooling_output_shape for one dim."""
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def no_meta_kernel(qualname) -> NotImplementedError:
    """torch's error for an op with no meta kernel (the ops whose output shape depends on the data)."""
    return NotImplementedError(
        f"aten::{qualname}: attempted to run this operator with Meta tensors, but there was no fake impl or "
        "Meta kernel registered. You may have run into this message while using an operator with PT2 "
        "compilation APIs (torch.compile/torch.export); in order to use this operator with those APIs you'll "
        "need to add a fake impl. Please see the following for next steps:  "
        "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def reduced_shape(shape, dims, keepdim) -> tuple:
    """The shape a reduction over `dims` (None: every dim) leaves: reduced dims dropped, or kept as 1."""
    shape = tuple(shape)
    dims = range(len(shape)) if dims is None else ((dims,) if isinstance(dims, int) else dims)
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def reduction_meta(t, dims, keepdim, *dtypes) -> MetaArray | tuple:
    """The outputs of a reduction of tensor `t` over `dims` (an int, a tuple, or None for every dim): one
    contiguous tensor per dtype given (`t`'s dtype when none is), as torch's reductions allocate them."""
    shape = reduced_shape(t.shape, dims, keepdim)
    outs = tuple(meta_array(shape, t._data.dtype if d is None else d) for d in dtypes or (None,))
    return outs if len(outs) > 1 else outs[0]


def broadcast_shapes(*shapes) -> tuple:
    """torch's broadcast, with its error message."""
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        for k in range(1, len(s) + 1):
            a, b = out[-k], s[-k]
            if a == 1:
                out[-k] = b
            elif b != 1 and a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                   f"non-singleton dimension {n - k}")
    return tuple(out)


def broadcast_error(shapes) -> RuntimeError | None:
    """torch's error for the first shape that does not broadcast with the first one (None if all do)."""
    for s in shapes[1:]:
        try:
            broadcast_shapes(shapes[0], s)
        except RuntimeError as e:
            return e
    return None


# NOTE [ TensorIterator's output layout ]
# torch's TensorIterator (aten/src/ATen/TensorIterator.cpp) lays out a pointwise op's new output in two steps.
# Fast setup, when every operand has the output's shape: all contiguous (an empty tensor counts as
# contiguous) -> contiguous; all 4-d channels-last contiguous -> channels-last; all non-overlapping and
# dense with the same strides -> exactly those strides (size-1 dims' strides included). Otherwise
# `reorder_dimensions` sorts the dims innermost-first by the operands' strides, by insertion sort: the first
# operand decides, later ones break its ties, an operand whose stride is 0 in either dim (broadcast or
# expanded) has no say, equal strides put the smaller dim inside; the output is dense in that order (a
# 0-size dim makes the strides outside it 0). NumPy's ufuncs and its order="K" copies follow another rule
# (C order wins when operands disagree; a copy puts a stride-0 dim innermost), so ember's eager results are
# relaid by `torch_layout` / `like_array` where they can differ (the dispatcher's promoting path, clone and
# the other copies); meta rules call `pointwise_strides` directly.
def pointwise_strides(shape, operands) -> tuple:
    """The strides (in elements) torch's TensorIterator gives the output of a pointwise op over operands
    given as (shape, strides-in-elements) pairs of its tensor inputs: NOTE [ TensorIterator's output layout ].
    """
    n = len(shape)
    shape = tuple(shape)
    if n == 0:
        return ()
    if all(tuple(s) == shape for s, _ in operands):
        if all(_dense_c(s, st) for s, st in operands):
            return _contiguous(shape)
        if n == 4 and all(_channels_last(s, st) for s, st in operands):
            return _channels_last_strides(shape)
        first = tuple(operands[0][1])
        if all(tuple(st) == first for _, st in operands) and _non_overlapping_dense(shape, first):
            return first
    ops = []
    for s, st in operands:
        pad = n - len(s)
        full = [0] * pad + [0 if (sz == 1 and shape[pad + i] != 1) else x
                            for i, (sz, x) in enumerate(zip(s, st))]
        ops.append(full)

    def should_swap(d0, d1):
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))  # perm[0] is the innermost dimension
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(n - 1, -1, -1)):
        return _contiguous(shape)
    out = [0] * n
    acc = 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _dense_c(shape, strides):
    """torch's `is_contiguous`: row-major over the dims of size > 1, or empty."""
    if 0 in shape:
        return True
    expected = 1
    for size, st in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if st != expected:
                return False
            expected *= size
    return True


def _channels_last(shape, strides):
    if len(shape) != 4 or 0 in shape:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _channels_last_strides(shape):
    n, c, h, w = shape
    return (h * w * c, 1, w * c, c)


def _non_overlapping_dense(shape, strides):
    """torch's `is_non_overlapping_and_dense`: dense in some order of the dims of size > 1."""
    dims = sorted((st, sz) for sz, st in zip(shape, strides) if sz >= 2)
    if any(sz == 0 for sz in shape):
        return True
    expected = 1
    for st, sz in dims:
        if st != expected:
            return False
        expected *= sz
    return True


def torch_layout(out, operands):
    """Eager array `out` (a pointwise result over the arrays `operands`) laid out as torch lays it out (NOTE
    [ TensorIterator's output layout ]): `out` itself when its strides are already torch's, else a copy."""
    if out.ndim == 0:
        return out
    want = pointwise_strides(out.shape, [(t.shape, tuple(s // t.itemsize for s in t.strides))
                                         for t in operands])
    if out.strides == tuple(s * out.itemsize for s in want):
        return out
    return with_strides(out, want)


def with_strides(a, strides, dtype=None):
    """A copy of array `a` (cast to `dtype`) with `strides`, in elements, a dense layout of `a`'s shape."""
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    size = 1 + sum((n - 1) * s for n, s in zip(a.shape, strides)) if a.size else 0
    out = np.ndarray(a.shape, dtype, buffer=np.empty(size, dtype),
                     strides=tuple(s * dtype.itemsize for s in strides))
    np.copyto(out, a, casting="unsafe")
    return out


def like_array(a, dtype=None):
    """A copy of array `a` (cast to `dtype`) with the strides torch's `empty_like` gives it (preserve_format,
    as `clone` and `.to(dtype)` copy): a non-overlapping, dense tensor's own strides, else dense in its
    order (NOTE [ TensorIterator's output layout ])."""
    if dtype is None:
        out = a.copy(order="K")
        if a.strides == out.strides:  # (a dense array, as NumPy keeps it: the common case)
            return out
    else:
        out = a.astype(dtype)
        if a.ndim == 0 or a.strides == tuple(s * a.itemsize // out.itemsize for s in out.strides):
            return out
    shape = a.shape
    st = tuple(s // a.itemsize for s in a.strides)
    want = st if _non_overlapping_dense(shape, st) else pointwise_strides(shape, [(shape, st)])
    if out.strides == tuple(s * out.itemsize for s in want):
        return out
    return with_strides(a, want, out.dtype)


def derived_rule(op):
    """The meta rule an op's declaration implies, as `rule(inputs, params)`, or None: pointwise ops that
    promote (see `defop`) broadcast their inputs, take torch's result dtype and TensorIterator's strides."""
    if op.kind == "pointwise" and op.promote is not None:
        return _pointwise_rule(op.promote)
    return None


def _pointwise_rule(promote, where_led=False):
    def rule(inputs, params):
        tensors = [a for a in inputs if hasattr(a, "stride")]
        shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
        res = _dtypes.result_dtype(inputs)
        if promote == "float" and res._cat < 2:
            res = _dtypes.get_default_dtype()
        dtype = _dtypes.bool if promote == "bool" else res
        strides = pointwise_strides(shape, [(tuple(t.shape), t.stride()) for t in tensors])
        if where_led and dtype.is_floating_point:
            strides = _where_led(shape, strides, inputs[1])
        return meta_array(shape, dtype, strides)
    return rule


# NOTE [ Meta strides of decomposed ops ]
# Most of torch's meta kernels for pointwise ops are TensorIterator's (`pointwise_strides`), but a few ops
# have none, and torch's meta runs their Python decomposition (torch._refs) instead: the output is then
# laid out by the decomposition's last op. copysign(a, b) is `where(signbit(b), -abs(a), abs(a))` and
# floating floor division ends in `where(b != 0, floor_div, true_div)`, over `a` and `b` already
# broadcast: the predicate on the broadcast `b` is dense in `b`'s own order (contiguous where `b` was
# broadcast), and being where's first operand, it decides the output's order. So `copysign(a.T, b)`
# with `b` of shape (4, 1) is contiguous on meta, where TensorIterator (and torch's CPU kernel) keeps
# `a.T`'s order. A Python number `b` (or a CPU scalar tensor) is not broadcast and has no say.
def where_led_rule(promote):
    """The derived rule of a pointwise op whose torch meta is a decomposition that ends in
    `where(pred(b), ...)` for its floating results (NOTE [ Meta strides of decomposed ops ])."""
    return _pointwise_rule(promote, where_led=True)


def _where_led(shape, strides, b):
    if not hasattr(b, "stride") or (not no_data(b) and not b.shape):
        return strides
    pred = pointwise_strides(shape, [(tuple(b.shape), b.stride())])
    return pointwise_strides(shape, [(shape, pred), (shape, strides)])
