"""Copying ops: the stack family, repeat / repeat_interleave / tile, flip / roll / rot90, diag family,
trace, cross, kron, cartesian_prod, combinations, block_diag, cdist.

Where torch composes an op from others (hstack is cat, tile is repeat, kron is a reshaped product,
cartesian_prod stacks a meshgrid) ember composes it the same way, so the backward nodes match torch's.
"""

import itertools

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import (
    FLOATING,
    INDEXING,
    NUMERIC,
    SHAPE,
    _modes,
    defop,
    dispatch,
    dtype_word,
    not_implemented,
    require_op_dtype,
)
from .._meta import broadcast_shapes, like_array, like_strides, meta_array
from .._tensor import Tensor, _wrap
from ._util import as_shape, finish_out, method, public, refuse_under_vmap, typed, wrap_dim, wrap_dims
from .shape import cat, stack

# ---- the stack family ---------------------------------------------------------------------------------


def atleast_1d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    try:
        out = tuple(t.reshape(1) if t.dim() == 0 else t for t in ts)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_2d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    try:
        out = tuple(t.reshape(1, 1) if t.dim() == 0 else t.unsqueeze(0) if t.dim() == 1 else t for t in ts)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def atleast_3d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors

    def lift(t):
        try:
            if t.dim() == 0:
                return t.reshape(1, 1, 1)
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        if t.dim() == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1) if t.dim() == 2 else t
    out = tuple(lift(t) for t in ts)
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else out


def hstack(tensors, *, out=None):
    try:
        ts = atleast_1d(tuple(tensors))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    try:
        return cat(atleast_2d(tuple(tensors)), 0, out=out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def dstack(tensors, *, out=None):
    try:
        return cat(atleast_3d(tuple(tensors)), 2, out=out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def column_stack(tensors, *, out=None):
    if _modes:  # (V) a list of tensors: torch's vmap has no fallback
        refuse_under_vmap("column_stack", (tensors,), "no_fallback")
    try:
        ts = tuple(t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return cat(ts, 1, out=out)


for _f in (atleast_1d, atleast_2d, atleast_3d, hstack, vstack, dstack, column_stack):
    public[_f.__name__] = _f
public["row_stack"] = vstack

# ---- repeat / tile / repeat_interleave ----------------------------------------------------------------------


@defop("repeat", "RepeatBackward0", SHAPE, saves="meta")
def _repeat(a, reps):
    a = a.reshape((1,) * (len(reps) - a.ndim) + a.shape)
    return np.tile(a, reps)


@_repeat.derivative_
def _(g, a, reps):
    lead = len(reps) - a.dim()
    shape = tuple(reps[:lead])
    inner = []
    for r, s in zip(reps[lead:], a.shape):
        inner += [r, s]
    g = g.reshape(shape + tuple(inner))
    dims = tuple(range(lead)) + tuple(lead + 2 * i for i in range(a.dim()))
    return g.sum(dims) if dims else g


@_repeat.meta_
def _(a, reps):
    shape = (1,) * (len(reps) - a.dim()) + tuple(a.shape)
    return meta_array(tuple(r * s for r, s in zip(reps, shape)), a._data.dtype)


@method(top=False)
def repeat(self, *sizes, repeats=None):
    reps = as_shape(sizes if repeats is None else (repeats,))
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: {list(reps)}")
    return dispatch(_repeat, (self,), (reps,))


@method()
def tile(input, *dims_, dims=None):  # (Tensor.tile(2, 3), tile(x, (2, 3)), tile(x, dims=...))
    dims = as_shape(dims_ if dims is None else (dims,))
    try:
        if len(dims) < input._data.ndim:
            dims = (1,) * (input._data.ndim - len(dims)) + tuple(dims)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input.repeat(*dims)


# NOTE [ repeat_interleave's counts ]
# torch.repeat_interleave(repeats) (torch's `repeat_interleave.Tensor`) is the op whose output length is the
# sum of its input's values: it is an op of its own, tagged dynamic_output_shape, with an `output_size`
# param that makes its shape static (a meta rule needs it). `x.repeat_interleave(repeats_tensor, dim)` is
# `x.index_select(dim, repeat_interleave(repeats))`, as torch composes it, so a tracer or a meta tensor
# sees the value-dependent step as that one op; an int `repeats` is a static expand-and-reshape.
@defop("repeat_interleave", None, INDEXING, overload="Tensor", dtypes=frozenset({"int32", "int64"}),
       error="repeat_interleave_cpu", tags=("dynamic_output_shape",))
def _repeat_counts(r, output_size):
    negative = r.size and r.min() < 0  # (the data first: torch's meta function checks nothing but output_size)
    if r.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if negative:
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum(dtype=np.int64)) if output_size is None else output_size  # (torch's int64 cumsum: wraps)
    if total < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {total}: [{total}]")
    try:
        out = np.repeat(np.arange(r.size, dtype=r.dtype), r)
    except MemoryError:
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           f"memory: you tried to allocate {total * r.itemsize} bytes. Error code 12 (Cannot "
                           "allocate memory)") from None
    if output_size is not None and out.size != output_size:
        raise RuntimeError("allocated size does not match required size")
    return out


@_repeat_counts.meta_
def _(r, output_size):
    if output_size is None:  # (the length is the data's sum)
        raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
    return meta_array((output_size,), r._data.dtype)


@method()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # torch.repeat_interleave(repeats): indices repeated by their counts
        return dispatch(_repeat_counts, (input,), (output_size,))
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, input._data.ndim)
    if isinstance(repeats, Tensor):  # (one count, as a 0-d or one-element tensor, stands for every index)
        if repeats.dim() == 0 or repeats.dim() == 1 and repeats.shape[0] == 1:
            repeats = repeats.reshape(1).expand(x.shape[d])
        elif repeats.dim() != 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        elif repeats.shape[0] != x.shape[d]:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0]} and input.size({d}) = {x.shape[d]}")
        return x.index_select(d, dispatch(_repeat_counts, (repeats,), (output_size,)))
    try:
        n = int(repeats)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n < 0:
        raise RuntimeError("repeats can not be negative")
    xe = x.unsqueeze(d + 1)
    shape = list(xe.shape)
    shape[d + 1] = n
    out_shape = list(x.shape)
    out_shape[d] *= n
    if not x.dim():
        return xe.expand(*shape).reshape(out_shape)
    return xe.expand(*shape).contiguous().view(*out_shape)


# ---- flip / roll / rot90 -----------------------------------------------------------------------------------


@defop("flip", "FlipBackward0", SHAPE, saves="none")
def _flip(a, dims):
    out = like_array(a)  # torch's flip keeps its input's memory layout (empty_like's: an expanded one, dense)
    out[...] = np.flip(a, dims)
    return out


@_flip.derivative_
def _(g, a, dims):
    return g.flip(dims)


_flip.meta_(lambda a, dims: meta_array(a.shape, a._data.dtype, like_strides(a)))


@method()
def flip(input, *dims_, dims=None):
    dims = as_shape(dims_ if dims is None else (dims,))
    try:
        return dispatch(_flip, (input,), (wrap_dims(dims, input._data.ndim) if input._data.ndim else (),))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@method()
def fliplr(input):
    try:
        if input._data.ndim < 2:
            raise RuntimeError("Input must be >= 2-d.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input.flip(1)


@method()
def flipud(input):
    try:
        if input._data.ndim < 1:
            raise RuntimeError("Input must be >= 1-d.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input.flip(0)


@defop("roll", "RollBackward0", SHAPE, saves="none")
def _roll(a, shifts, dims):
    if dims is None:
        return np.roll(a.reshape(-1), shifts).reshape(a.shape)
    return np.ascontiguousarray(np.roll(a, shifts, dims))


@_roll.derivative_
def _(g, a, shifts, dims):
    neg = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
    return dispatch(_roll, (g,), (neg, dims))


_roll.meta_(lambda a, shifts, dims: meta_array(a.shape, a._data.dtype))


@method()
def roll(input, shifts, dims=None):
    if dims is None:
        s = as_shape((shifts,))
        if len(s) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:0")
        return dispatch(_roll, (input,), (s[0], None))
    s, d = as_shape((shifts,)), as_shape((dims,))
    if len(s) != len(d):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:{len(d)}")
    return dispatch(_roll, (input,), (s, wrap_dims(d, input._data.ndim)))


@defop("rot90", "Rot90Backward0", SHAPE, saves="none")
def _rot90(a, k, dims):
    # torch composes rot90 as flip then transpose, which fixes the result's strides
    d0, d1 = dims
    if k == 0:
        return like_array(a)
    if k == 2:
        return _flip.kernel(a, dims)
    return np.swapaxes(_flip.kernel(a, (d1,) if k == 1 else (d0,)), d0, d1)


@_rot90.derivative_
def _(g, a, k, dims):
    return g.rot90(-k, dims)


@_rot90.meta_
def _(a, k, dims):
    shape, st = list(a.shape), list(like_strides(a))
    if k % 2:  # a flip (laid out like the input) then a transpose of the two dims
        d0, d1 = dims
        shape[d0], shape[d1], st[d0], st[d1] = shape[d1], shape[d0], st[d1], st[d0]
    return meta_array(shape, a._data.dtype, st)


@method()
def rot90(input, k: int = 1, dims=(0, 1)):
    try:
        dims = tuple(dims)
        n = input._data.ndim
        if len(dims) != 2:
            raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
        if n < 2:
            raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
        d = wrap_dims(dims, n) if dims[0] % n != dims[1] % n else None
        if d is None:
            raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
        return dispatch(_rot90, (input,), (k % 4, d))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


# ---- diagonals and trace -------------------------------------------------------------------------------


@defop("diag_embed", "DiagEmbedBackward0", SHAPE, saves="none")
def _diag_embed(a, offset, d1, d2):
    n = a.shape[-1] + abs(offset)
    out_nd = a.ndim + 1
    out = np.zeros(a.shape[:-1] + (n, n), a.dtype)
    i = np.arange(a.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., r, c] = a
    rest = [k for k in range(out_nd) if k not in (d1, d2)]
    perm = [0] * out_nd
    for src, dst in enumerate(rest + [d1, d2]):
        perm[dst] = src
    return np.ascontiguousarray(out.transpose(perm))


@_diag_embed.derivative_
def _(g, a, offset, d1, d2):
    return g.diagonal(offset, d1, d2)


@_diag_embed.meta_
def _(a, offset, d1, d2):
    n = a.shape[-1] + abs(offset) if a.dim() else 1 + abs(offset)
    rest = iter(tuple(a.shape)[:-1])
    shape = tuple(n if k in (d1, d2) else next(rest) for k in range(a.dim() + 1))
    return meta_array(shape, a._data.dtype)


@method()
def diag_embed(input, offset: int = 0, dim1=-2, dim2=-1):
    try:
        n = input._data.ndim + 1
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dispatch(_diag_embed, (input,), (offset, d1, d2))


@method()
def diag(input, diagonal: int = 0, *, out=None):
    try:
        n = input._data.ndim
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n == 1:
        return finish_out(input.diag_embed(diagonal), out, check_grad=False)
    if n == 2:
        return finish_out(input.diagonal(diagonal).clone(), out, check_grad=False)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{n}D")


@method()
def diagflat(input, offset: int = 0):
    try:
        return input.reshape(-1).diag_embed(offset)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@defop("trace", "TraceBackward0", SHAPE, saves="meta", dtypes=NUMERIC, error="trace")
def _trace(a):
    acc = np.int64 if a.dtype.kind in "biu" else a.dtype
    return np.asarray(np.trace(a, dtype=acc))


@_trace.derivative_
def _(g, a):
    from .creation import eye

    return eye(a.shape[0], a.shape[1], dtype=g.dtype) * g


_trace.meta_(lambda a: meta_array((), _dtypes.int64 if a._data.dtype.kind in "biu" else a._data.dtype))


@method()
def trace(input):
    try:
        require_op_dtype(_trace, input.dtype)  # (torch's dtype check comes before its rank check)
        if input._data.ndim != 2:
            raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input._data.ndim))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(_trace, (input,))


# ---- products -------------------------------------------------------------------------------------------


@defop("linalg_cross", "LinalgCrossBackward0", INDEXING, "same", dtypes=NUMERIC, error="cross")
def _cross(a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):  # (np.cross is NumPy Python: its warnings escape ember's filter)
        return np.ascontiguousarray(np.cross(a, b, axis=dim))


@_cross.derivative_
def _(g, a, b, dim):
    return _cross_t(b, g, dim), _cross_t(g, a, dim)


_cross.meta_(lambda a, b, dim: meta_array(broadcast_shapes(tuple(a.shape), tuple(b.shape)),
                                          _dtypes.result_dtype((a, b))))


def _cross_t(a, b, dim):
    return dispatch(_cross, (a, b), (dim,))


def _cross_dim(input, other, dim, default_first):
    """torch's checks, in its order: the default dim (the first of input's own sizes that is 3), the ranks, the
    dim's length, then the broadcast of the batch dims (linalg_cross's meta function)."""
    try:
        a, b = input._data.shape, other._data.shape
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if dim is None:
        dim = next((i for i, s in enumerate(a) if s == 3), None) if default_first else -1
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if len(a) != len(b):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    na, nb = input.size(dim), other.size(dim)  # (torch's input.size(dim): its words for a 0-d input)
    if na != 3 or nb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {na} and {nb}")
    d = wrap_dim(dim, len(a))
    broadcast_shapes(a, b)  # (torch's infer_size error)
    return d


@method()
def cross(input, other, dim=None, *, out=None):
    return finish_out(dispatch(_cross, (input, other), (_cross_dim(input, other, dim, True),)), out)


def linalg_cross(input, other, *, dim=-1, out=None):
    try:
        if input.dtype is not other.dtype:  # (torch's linalg.cross does not promote; torch.cross does)
            raise RuntimeError(f"expected scalar type {dtype_word(input.dtype)} but found {dtype_word(other.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(dispatch(_cross, (input, other), (_cross_dim(input, other, dim, False),)), out)


@method()
def kron(input, other, *, out=None):
    try:
        n = max(input.dim(), other.dim())
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    a = input.reshape((1,) * (n - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    a_shape, b_shape = [], []
    for i in range(n):
        a_shape += [a.shape[i], 1]
        b_shape += [1, b.shape[i]]
    r = a.reshape(a_shape) * b.reshape(b_shape)
    return finish_out(r.reshape(tuple(a.shape[i] * b.shape[i] for i in range(n))), out)


def cartesian_prod(*tensors):
    from .creation import meshgrid

    try:
        for t in tensors:
            if t.dim() != 1:
                raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@typed
def combinations(input, r: int = 2, with_replacement: bool = False):
    from .creation import tensor

    try:
        if input.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    try:
        if r < 0:
            raise RuntimeError(f"Expect a non-negative number, but got {r}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    if idx.shape[0] == 0:
        return input.new_empty((0, r))
    # (the index vectors are made on input's device: a meta input gets meta ones)
    return stack([input.index_select(0, tensor(idx[:, k], device=input.device)) for k in range(r)], 1)


public["cartesian_prod"] = cartesian_prod
public["combinations"] = combinations


@defop("block_diag", "BlockDiagBackward0", SHAPE, "same", saves="meta")
def _block_diag(*arrays):
    mats = [a.reshape(1, -1) if a.ndim == 1 else a.reshape(1, 1) if a.ndim == 0 else a for a in arrays]
    rows, cols = sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)
    out = np.zeros((rows, cols), mats[0].dtype)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


@_block_diag.derivative_
def _(g, *inputs):
    grads, r, c = [], 0, 0
    for t in inputs:
        shape = tuple(t.shape)
        h, w = (1, shape[0]) if len(shape) == 1 else (1, 1) if not shape else shape
        grads.append(g[r:r + h, c:c + w].reshape(shape))
        r, c = r + h, c + w
    return tuple(grads)


@_block_diag.meta_
def _(*tensors):
    mats = [(1, t.shape[0]) if t.dim() == 1 else (1, 1) if t.dim() == 0 else tuple(t.shape) for t in tensors]
    return meta_array((sum(m[0] for m in mats), sum(m[1] for m in mats)), _dtypes.result_dtype(tensors))


def block_diag(*tensors):
    try:
        for i, t in enumerate(tensors):
            if t.dim() > 2:
                raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                                   f"{t.dim()} dimensions")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not tensors:
        return _wrap(np.empty((1, 0), np.float32))
    return dispatch(_block_diag, tuple(tensors))


public["block_diag"] = block_diag


def _cdist_error(d, x1, x2):
    if d.name in FLOATING:  # float16 / bfloat16
        return not_implemented("cdist", d)
    which = "X1" if x1._data.dtype == _dtypes.to_numpy(d) else "X2"
    return RuntimeError(f"cdist only supports floating-point dtypes, {which} got: "
                        f"{dtype_word(d)}")


@defop("cdist", "CdistBackward0", INDEXING, "same", save_output=True, dtypes=frozenset({"float32", "float64"}),
       error=_cdist_error, check="inputs")
def _cdist(x1, x2, p):
    diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    total = np.add.reduce  # (not ndarray.sum: NOTE [ Reductions call ufunc methods ] in reduction.py)
    if p == 0:
        return total(diff != 0, axis=-1).astype(x1.dtype)
    if p == np.inf:
        return np.maximum.reduce(diff, axis=-1, initial=0)
    if p == 1:
        return total(diff, axis=-1)
    if p == 2:
        return np.sqrt(total(diff * diff, axis=-1))
    return total(diff ** p, axis=-1) ** (1 / p)


@_cdist.derivative_
def _(g, x1, x2, p, *, out):
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    o = out.unsqueeze(-1)
    if p == 0:
        w = d * 0
    elif p == 1:
        w = d.sign()
    elif p == float("inf"):
        hit = d.abs() == o
        w = d.sign() * hit / hit.sum(-1, keepdim=True).clamp(min=1)
    else:
        w = (d.sign() * d.abs().pow(p - 1) / o.pow(p - 1)).masked_fill(o == 0, 0.0)
    gw = g.unsqueeze(-1) * w
    return gw.sum(-2), -gw.sum(-3)


@_cdist.meta_
def _(x1, x2, p):
    batch = broadcast_shapes(tuple(x1.shape)[:-2], tuple(x2.shape)[:-2])
    return meta_array(batch + (x1.shape[-2], x2.shape[-2]), _dtypes.result_dtype((x1, x2)))


def _autocasting():
    if not _modes:
        return False
    from ..amp.autocast_mode import autocasting
    return autocasting()


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    try:
        if x1.dim() < 2 or x2.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
        if x1.shape[-1] != x2.shape[-1]:
            raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                               f"{x2.shape[-1]}")
        if p < 0:
            raise RuntimeError("cdist only supports non-negative p values")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if x1.dtype is not x2.dtype and not _autocasting():  # (autocast casts both to float32 first)
        raise RuntimeError(f"expected scalar type {dtype_word(x1.dtype)} but found {dtype_word(x2.dtype)}")
    return dispatch(_cdist, (x1, x2), (float(p),))


public["cdist"] = cdist
