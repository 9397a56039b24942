"""issue 15's remaining names, part two (part one: names.py): splitting, index helpers, torch.range and
empty_permuted, Tensor methods without an op (apply_, put_, fill_diagonal_, resize_, set_, ...), index_reduce,
histogram / histogramdd, hash_tensor and gradient.
"""

import math
import warnings
from operator import index

import numpy as np

from .. import _dtypes, _naming
from .._argparse import call_error
from .._dispatch import FALLBACK, FLOATING, INTEGRAL, _modes, defop, dispatch
from .._meta import MetaArray, NoData, meta_array, no_data
from .._tensor import Tensor
from ._util import as_shape, finish_out, method, per_sample, public, refuse_under_vmap, typed, wrap_dim
from .names import _c_name, _finish, _word

# ---- splitting ------------------------------------------------------------------------------------------------


def _split_along(name, dim, min_dim):
    def fn(input, *indices_or_sections, sections=None, indices=None):  # (Tensor.hsplit(1, 2): indices)
        if sections is not None or indices is not None:
            indices_or_sections = sections if sections is not None else indices
        elif len(indices_or_sections) == 1:
            indices_or_sections = indices_or_sections[0]
        try:
            if input.dim() < min_dim:
                raise RuntimeError(f"{_naming.prefix}.{name} requires a tensor with at least {min_dim} dimension, but "
                                   f"got a tensor with {input.dim()} dimensions!")
        except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
            raise call_error(e) from None
        d = 0 if name == "hsplit" and input.dim() == 1 else dim
        if isinstance(indices_or_sections, int) and input.shape[d] % indices_or_sections:
            raise RuntimeError(
                f"{_naming.prefix}.{name} attempted to split along dimension {d}, but the size of the dimension "
                f"{input.shape[d]} is not divisible by the split_size {indices_or_sections}!")
        return input.tensor_split(indices_or_sections, d)
    fn.__name__ = name
    return method(name)(fn)


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)
Tensor.unsafe_split = lambda self, split_size, dim=0: self.split(split_size, dim)
Tensor.unsafe_chunk = lambda self, chunks, dim=0: self.chunk(chunks, dim)
def unsafe_split(input, split_size, dim=0):
    return input.split(split_size, dim)


def unsafe_chunk(input, chunks, dim=0):
    return input.chunk(chunks, dim)


public.update(unsafe_split=unsafe_split, unsafe_chunk=unsafe_chunk)


# ---- index helpers ---------------------------------------------------------------------------------------------


def _tri_indices(row, col, offset, lower):
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return np.stack([r, c]).astype(np.int64)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    import ember

    return ember.tensor(_tri_indices(row, col, offset, True), dtype=dtype or ember.long, device=device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    import ember

    return ember.tensor(_tri_indices(row, col, offset, False), dtype=dtype or ember.long, device=device)


def unravel_index(indices, shape):
    import ember

    if not isinstance(indices, Tensor):
        indices = ember.tensor(indices)
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == ember.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = as_shape((shape,) if isinstance(shape, int) else tuple(shape))
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    out = []
    rest = indices.to(ember.long)
    for s in reversed(shape):
        out.append(rest.remainder(s))
        rest = rest.div(s, rounding_mode="floor")
    return ember.stack(out[::-1], -1).unbind(-1)


@method()
def isin(elements=None, test_elements=None, *, assume_unique: bool = False, invert: bool = False, out=None,
         element=None, test_element=None):
    import ember

    elements = element if element is not None else elements
    test_elements = test_element if test_element is not None else test_elements
    if out is not None:
        return _finish(isin(elements, test_elements, assume_unique=assume_unique, invert=invert), out, "isin")

    e = elements if isinstance(elements, Tensor) else ember.tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else ember.tensor(test_elements)
    for x in (e, t):
        if x.dtype == ember.bool or x.is_complex():
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_word(x.dtype)}")
    hit = (e.reshape(-1, 1) == t.reshape(1, -1)).any(1).reshape(e.shape)
    return hit.logical_not() if invert else hit


@typed
def vander(x, N: "int | None" = None, increasing: bool = False):
    import ember

    try:
        if x.dim() != 1:
            raise RuntimeError("x must be a one-dimensional tensor.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if _modes and (r := per_sample(vander, (x,), {"N": N, "increasing": increasing})) is not NotImplemented:
        return r  # (one aten op to torch's vmap, looped: its in-place steps would write a batched value)
    # torch's own steps (a column of ones, x copied into the rest, their running product copied back in place),
    # so the values round as torch's and, as in torch, the backward of that product finds its saved input
    # overwritten (torch 2.13's vander is not differentiable: "modified by an inplace operation")
    result = ember.empty((x.shape[0], n), dtype=ember.promote_types(x.dtype, ember.long), device=x.device)
    if n > 0:
        result.select(1, 0).fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(ember.cumprod(result[:, 1:], 1))
    return result if increasing else result.flip(1)


public.update(tril_indices=tril_indices, triu_indices=triu_indices, unravel_index=unravel_index, vander=vander)


@method()
def nonzero_static(input, *, size: int, fill_value: int = -1, out=None):
    import ember

    if out is not None:
        return _finish(nonzero_static(input, size=size, fill_value=fill_value), out, "nonzero_static")
    if isinstance(size, int) and size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")

    if _modes and (r := per_sample(nonzero_static, (input,), {"size": size, "fill_value": fill_value})) \
            is not NotImplemented:  # (NOTE [ Composites that read data under vmap ] in _util.py)
        return r
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]
        from ..autograd._jvp import check_composite
        check_composite("nonzero_static", input)
    if no_data(input) and input.device.type != "cpu":  # torch's meta rule: the (size, ndim) result laid out
        # column-major, as nonzero's; a fake (cpu) tensor takes the CPU kernel's row-major layout (its rule)
        return input.new_empty_strided((size, input.dim()), (1, size), dtype=ember.long)
    try:
        return dispatch(_nonzero_static, (input,), (int(size), int(fill_value)))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


@defop("nonzero_static", None)
def _nonzero_static(a, size, fill_value):
    """The first `size` indices of nonzero elements (row-major, as nonzero), the rest `fill_value`: one op,
    so its result's shape is known without the data (a tracer records it as it records any op)."""
    nz = np.argwhere(a != 0) if a.ndim else np.zeros((int(a != 0), 0), np.int64)
    out = np.full((size, a.ndim), fill_value, np.int64)
    k = min(size, nz.shape[0])
    out[:k] = nz[:k]
    return out


_nonzero_static.meta_(lambda a, size, fill_value: meta_array((size, a.dim()), _dtypes.int64))


@method()
def is_nonzero(input):
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


@method()
def resolve_neg(input):
    return input  # (ember has no lazy negation bit: a tensor is never a negative view)


Tensor.is_neg = lambda self: False


def _range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    import ember

    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')

    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
                  "in [start, end).", UserWarning, stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = int(math.floor((end - start) / step)) + 1
    d = dtype or ember.get_default_dtype()
    r = ember.arange(n, dtype=ember.float64) * step + start
    return finish_out(r.to(d).requires_grad_(requires_grad), out)


_range.__name__ = "range"
public["range"] = _range


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    import ember

    size = as_shape((size,))
    if sorted(physical_layout) != list(range(len(size))):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = "
                           f"{len(physical_layout)}")
    phys = ember.empty([size[i] for i in physical_layout], dtype=dtype, device=device)
    inverse = [list(physical_layout).index(i) for i in range(len(size))]
    return phys.permute(inverse).requires_grad_(requires_grad)


public["empty_permuted"] = empty_permuted


# ---- Tensor methods without an op ---------------------------------------------------------------------------


def apply_(self, callable):  # noqa: A002 - torch's name
    flat = self.reshape(-1).tolist()
    self.copy_(type(self)(np.asarray([callable(v) for v in flat]).reshape(self._data.shape))
               if flat else self)
    return self


def map_(self, other, callable):  # noqa: A002
    import ember

    other = other.expand(self.shape).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(ember.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


Tensor.apply_, Tensor.map_ = apply_, map_
Tensor.const_data_ptr = lambda self: self.data_ptr()
Tensor.dim_order = lambda self, *, ambiguity_check=False: tuple(
    int(i) for i in sorted(range(self.dim()), key=lambda i: (-self.stride(i), -i)))
Tensor.name = property(lambda self: None)
Tensor.storage_type = lambda self: _storage_type(self)
Tensor.put_ = lambda self, index, source, accumulate=False: _put(self, index, source, accumulate, True)
Tensor.put = lambda self, index, source, accumulate=False: _put(self, index, source, accumulate, False)


def _storage_type(self):
    import ember

    return getattr(ember, self.type().split(".")[-1].replace("Tensor", "Storage"))


def _put(self, index, source, accumulate, inplace):
    try:
        index.dtype, source.dtype  # noqa: B018 - torch's parser refuses a non-tensor first
    except AttributeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if source.dtype != self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_word(self.dtype)} and source.dtype = {_word(source.dtype)}")
    target = self if inplace else self.clone()
    flat = target.view(-1) if target.is_contiguous() else None
    if flat is None:
        raise RuntimeError("put_: ember needs a contiguous self")
    n = self.numel()
    if index.numel() and (int(index.max()) >= n or int(index.min()) < -n):
        bad = int(index.max()) if int(index.max()) >= n else int(index.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
    idx = index.reshape(-1).remainder(max(n, 1))
    if accumulate:
        flat.index_add_(0, idx, source.reshape(-1))
    else:
        flat.index_copy_(0, idx, source.reshape(-1))
    return target


def fill_diagonal_(self, fill_value, wrap=False):
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(self.shape)
    step = sum(self.stride())
    rows = self.shape[0]
    count = n
    if wrap and self.dim() == 2 and rows > self.shape[1] + 1:
        count = (rows * self.shape[1] + step - 1) // step
        count = len([k for k in range(count) if k * step < self.numel()])
    self.as_strided((count,), (step,), self.storage_offset()).fill_(fill_value)
    return self


Tensor.fill_diagonal_ = fill_diagonal_


# ---- index_reduce, histogram, gradient, hash_tensor ----------------------------------------------------------

_warned_index_reduce = [False]


def _beta_warning():
    if not _warned_index_reduce[0]:
        _warned_index_reduce[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)


def _index_reduce(input, dim, index, source, reduce, include_self):
    """scatter_reduce with `index` laid along `dim` of `source` (torch's beta index_reduce)."""
    from .._dispatch import not_implemented

    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    from .selection import check_index_source
    d = wrap_dim(dim, input.dim())
    check_index_source("index_reduce", input, d, index, source)
    size = input.shape[d] if input.dim() else 1
    # (a plain tensor's values: a vmapped or meta index has none to read here; scatter_reduce checks them)
    if type(index) is Tensor and index.numel() and not no_data(index) and bool(((index < 0) | (index >= size)).any()):
        raise IndexError("index out of range in self")
    if not include_self and (input.is_complex() or input.dtype.name == "bool"):
        raise not_implemented("index_reduce_func_exclude_input_init", input.dtype)
    if reduce in ("amax", "amin") and input.is_complex():
        raise not_implemented("maximum_cpu" if reduce == "amax" else "minimum_cpu", input.dtype)
    if reduce == "mean" and input.dtype.name == "bool":
        raise not_implemented("div_floor_cpu", input.dtype)
    d = wrap_dim(dim, input.dim())
    shape = [1] * source.dim()
    if source.dim():
        shape[d] = index.numel()
    idx = index.reshape(shape).expand(source.shape) if source.dim() else index.reshape(())
    return input.scatter_reduce(d, idx, source, reduce, include_self=include_self)


@method()
def index_reduce(input, dim, index, source, reduce, *, include_self: bool = True, out=None):
    _beta_warning()
    r = _index_reduce(input, dim, index, source, reduce, include_self)
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]: after the kernel, as torch's
        from ..autograd._jvp import check_composite
        check_composite("index_reduce", input, source)
    return _finish(r, out, "index_reduce")


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    _beta_warning()
    r = _index_reduce(self, dim, index, source, reduce, include_self)
    if _modes:  # NOTE [ Ops torch's forward AD refuses ]: after the kernel, as torch's
        from ..autograd._jvp import check_composite
        check_composite("index_reduce", self, source)
    return self.copy_(r)


Tensor.index_reduce_ = index_reduce_


@defop("histogram", None)
def _histogram(a, edges, weight, density):
    n = edges.size - 1
    flat, w = a.reshape(-1), weight.reshape(-1)
    try:
        keep = (flat >= edges[0]) & (flat <= edges[-1])  # (NaN and values outside the edges are not counted)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    idx = np.searchsorted(edges, flat[keep], side="right") - 1
    idx[idx == n] = n - 1  # (the last edge belongs to the last bin)
    hist = np.bincount(idx, weights=w[keep], minlength=n).astype(a.dtype)
    if density:
        hist = (hist / (hist.sum() * np.diff(edges))).astype(a.dtype)
    return hist, edges.copy()


@method()
def histogram(input, bins, *, range=None, weight=None, density: bool = False, out=None):  # noqa: A002
    import ember

    from .. import return_types

    try:
        if isinstance(bins, Tensor) and bins.dtype != input.dtype:
            raise RuntimeError(f"{_naming.prefix}.histogramdd: input tensor and bins tensors should have the same "
                               f"dtype, but got input with dtype {_c_name(input.dtype)} and bins for dimension 0 with "
                               f"dtype {_c_name(bins.dtype)}")
        if not isinstance(bins, Tensor) and index(bins) <= 0:  # (torch checks the count before the data)
            raise RuntimeError(f"{_naming.prefix}.histogram(): bins must be > 0, but got {bins} for dimension 0")
    except (AttributeError, TypeError, ValueError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if input.dtype.name not in ("float32", "float64"):
        _histogram_dtype_error(input, bins, range)
    if _modes and (r := per_sample(histogram, (input, bins), {"range": range, "weight": weight,
                                                             "density": density})) is not NotImplemented:
        return finish_out(r, out)  # (the bin range reads the data: NOTE [ Composites that read data under vmap ])
    try:
        if isinstance(bins, Tensor):
            edges = bins
        else:
            rng = None if range is None else (float(range[0]), float(range[1]))
            edges = dispatch(_histogramdd_bin_edges, (input.detach().reshape(-1, 1),), ((int(bins),), rng))[0]
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    w = weight if weight is not None else ember.ones_like(input)
    r = return_types.histogram(*dispatch(_histogram, (input, edges, w), (bool(density),)))
    return finish_out(r, out)


def _histogram_dtype_error(input, bins, range):  # noqa: A002
    """torch's error for a dtype its histogram kernels lack, raised where torch's steps raise it: the bin
    range (no `range`: the "histogramdd" min/max pass), the edges' linspace, then the counting kernel."""
    from .._dispatch import not_implemented
    from ._util import checked_scalar

    tensor_bins = isinstance(bins, Tensor) or isinstance(bins, (list, tuple)) and any(
        isinstance(b, Tensor) for b in bins)
    if not tensor_bins:
        if range is None:
            raise not_implemented("histogramdd", input.dtype)
        if input.dtype.name in ("float16", "bfloat16"):  # (torch counts half tensors given their bin range)
            return
        if input.dtype.name == "bool":
            raise not_implemented("linspace_cpu", input.dtype)
        if range is not None and not input.is_complex():
            for v in range:
                checked_scalar(float(v), input._data.dtype, names=None)
    if input.dtype.name not in ("float16", "bfloat16"):
        raise not_implemented("histogram_cpu", input.dtype)


@method()
def hash_tensor(input, *dims, dim=None, keepdim: bool = False, mode=0, out=None):
    if dims:  # (Tensor.hash_tensor(0, 1))
        dim = dims[0] if len(dims) == 1 else dims
    if out is not None:
        return finish_out(hash_tensor(input, dim=dim, keepdim=keepdim, mode=mode), out)
    if mode != 0:
        raise RuntimeError(f"hash_tensor only supports mode=0 (xor_reduction), but got mode={mode}")
    try:
        dims = tuple(range(input.dim())) if dim is None or dim == () else \
            tuple(wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(_hash_tensor, (input,), (dims, bool(keepdim)))


@defop("hash_tensor", None, dtypes=INTEGRAL | FLOATING | {"bool"}, error="xor_sum_cpu")
def _hash_tensor(a, dims, keepdim):
    wide = a.astype(np.float64 if a.dtype.kind in "fV" else np.int64)
    bits = wide.view(np.uint64)
    return np.bitwise_xor.reduce(bits, axis=dims, keepdims=keepdim) if bits.ndim else bits.copy()


@_hash_tensor.meta_
def _(a, dims, keepdim):
    shape = tuple(1 if i in dims else s for i, s in enumerate(a.shape)) if keepdim else \
        tuple(s for i, s in enumerate(a.shape) if i not in dims)
    return meta_array(shape, _dtypes.uint64)


@_histogram.meta_
def _(a, edges, weight, density):
    n = edges.shape[0] - 1
    return meta_array((n,), a._data.dtype), meta_array((n + 1,), a._data.dtype)


@typed
def gradient(input, *, spacing=1, dim=None, edge_order: int = 1):
    """Central differences inside, one-sided (edge_order 1 or 2) at the ends, per dim (torch.gradient)."""
    try:
        dims = list(range(input.dim())) if dim is None else [wrap_dim(d, input.dim()) for d in
                                                                ((dim,) if isinstance(dim, int) else dim)]
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    if isinstance(spacing, (list, tuple)):
        steps = list(spacing)
        if len(steps) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(steps)} and a dim argument of length {len(dims)}.")
    else:
        steps = [spacing] * len(dims)
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, steps))


def _gradient_along(x, d, h, edge_order):
    if x._data.dtype == np.uint8:
        raise RuntimeError(f"{_naming.prefix}.gradient does not support uint8 input.")
    n = x.shape[d]

    def part(lo, length):
        return x.narrow(d, lo, length)
    if isinstance(h, Tensor):
        return _gradient_coords(x, d, h, edge_order)
    inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / h
        last = (part(n - 1, 1) - part(n - 2, 1)) / h
    else:
        first = (part(0, 1) * -1.5 + part(1, 1) * 2 - part(2, 1) * 0.5) / h
        last = (part(n - 3, 1) * 0.5 - part(n - 2, 1) * 2 + part(n - 1, 1) * 1.5) / h
    import ember

    return ember.cat([first, inner, last], d)


def _gradient_coords(x, d, coords, edge_order):
    """Non-uniform spacing: coordinates along `d` (NumPy's and torch's second-order interior formula)."""
    import ember

    n = x.shape[d]
    shape = [1] * x.dim()
    shape[d] = n - 2
    dx = coords.diff()
    a, b = dx[:-1].reshape(shape), dx[1:].reshape(shape)  # (the coefficients first, as torch and NumPy do)
    inner = (x.narrow(d, 0, n - 2) * (-b / (a * (a + b))) + x.narrow(d, 1, n - 2) * ((b - a) / (a * b))
             + x.narrow(d, 2, n - 2) * (a / (b * (a + b))))
    if edge_order == 1:
        first = (x.narrow(d, 1, 1) - x.narrow(d, 0, 1)) / dx[0]
        last = (x.narrow(d, n - 1, 1) - x.narrow(d, n - 2, 1)) / dx[-1]
    else:
        a0, b0 = dx[0], dx[1]
        first = (x.narrow(d, 0, 1) * (-(2 * a0 + b0) / (a0 * (a0 + b0))) + x.narrow(d, 1, 1) * ((a0 + b0) / (a0 * b0))
                 - x.narrow(d, 2, 1) * (a0 / (b0 * (a0 + b0))))
        a1, b1 = dx[-2], dx[-1]
        last = (x.narrow(d, n - 3, 1) * (b1 / (a1 * (a1 + b1))) - x.narrow(d, n - 2, 1) * ((a1 + b1) / (a1 * b1))
                + x.narrow(d, n - 1, 1) * ((a1 + 2 * b1) / (b1 * (a1 + b1))))
    return ember.cat([first, inner, last], d)


public["gradient"] = gradient


# ---- resize_, set_, module_load, chalf ----------------------------------------------------------------------


def resize_(self, *sizes, size=None, memory_format=None):
    from .._grad_state import state

    if self._requires_grad and state.enabled:
        raise RuntimeError("cannot resize variables that require grad")
    shape = as_shape(sizes if size is None else (size,))
    n = 1
    for s in shape:
        n *= s
    flat = self._data.reshape(-1) if self._data.flags.c_contiguous else np.ascontiguousarray(self._data).reshape(-1)
    if n <= flat.size and self._data.flags.c_contiguous:
        self._data = flat[:n].reshape(shape)  # (same memory: torch keeps the storage when it is big enough)
    else:
        new = np.empty(n, self._data.dtype)
        k = min(n, flat.size)
        new[:k] = flat[:k]
        self._data = new.reshape(shape)
    return self


def resize_as_(self, the_template, *, memory_format=None):
    return self.resize_(the_template.shape)


def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """self becomes a view of `source`'s memory (a tensor), or an empty tensor (no argument)."""
    if source is None:
        self._data = np.empty(0, self._data.dtype)
        return self
    if not isinstance(source, Tensor):
        raise TypeError("set_(): ember takes a source tensor (or nothing), not a storage")
    if source.dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {_c_name(source.dtype)} to a tensor of type "
                           f"{_c_name(self.dtype)}")
    self._data = source._data if size is None else source.as_strided(size, stride, storage_offset)._data
    return self


def module_load(self, other, assign=False):
    """How load_state_dict transforms `other` before it lands in self (torch's default: copy, or the
    detached `other` itself with assign=True)."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def chalf(self, memory_format=None):
    raise NotImplementedError("ember has no complex32 (ComplexHalf) dtype (NOTE [ complex32 ]), which chalf makes")


Tensor.resize_, Tensor.resize_as_, Tensor.set_, Tensor.module_load, Tensor.chalf = (
    resize_, resize_as_, set_, module_load, chalf)


# ---- histogramdd ----------------------------------------------------------------------------------------------


@defop("histogramdd", None)
def _histogramdd(a, weight, *edges_and_params):
    *edges, density, _ = edges_and_params  # (the last param: the bins were counts, NOTE [ Bin edges are an op ])
    try:
        pts = a.reshape(-1, a.shape[-1])
        w = weight.reshape(-1)
        keep = np.ones(pts.shape[0], bool)
        idx = []
        for k, e in enumerate(edges):
            col = pts[:, k]
            keep &= (col >= e[0]) & (col <= e[-1])  # (NaN and values outside the edges are not counted)
            i = np.searchsorted(e, col, side="right") - 1
            idx.append(np.clip(i, 0, e.size - 2))  # (the last edge belongs to the last bin)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    shape = tuple(e.size - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(i[keep] for i in idx), shape) if shape else np.zeros(0, np.int64)
    hist = np.bincount(flat, weights=w[keep], minlength=int(np.prod(shape))).reshape(shape).astype(a.dtype)
    if density:
        widths = np.ones(shape)
        for k, e in enumerate(edges):
            widths = widths * np.diff(e).reshape([-1 if j == k else 1 for j in range(len(edges))])
        hist = (hist / (hist.sum() * widths)).astype(a.dtype)
    return (hist,) + tuple(e.copy() for e in edges)


# NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py: torch's histogram ops are outside its
# derivatives.yaml. (histogram's edges op reads a detached input: torch's one `histogram` op recomputes them.)
_histogram.refuses_(FALLBACK, "histogram")
_histogramdd.refuses_(FALLBACK, lambda params: "_histogramdd_from_bin_cts" if params[1] else
                      "_histogramdd_from_bin_tensors")


@_histogramdd.meta_
def _(a, weight, *edges_and_density):
    edges = edges_and_density[:-2]
    shape = tuple(e.shape[0] - 1 for e in edges)
    return (meta_array(shape, a._data.dtype),) + tuple(meta_array((e.shape[0],), a._data.dtype) for e in edges)


# NOTE [ Bin edges are an op ]
# Given bin counts, the edges are a linspace over the data's range: a value read from the data. Computed in
# Python (min, max, then linspace) that read would happen while tracing, where the data is not there; so, as
# torch's `_histogramdd_bin_edges`, one op computes them from the points in its kernel, and its meta rule
# gives their shapes (count + 1 each). A dimension given as an edges tensor gets a count of 0 (unused).
@defop("_histogramdd_bin_edges", None)
def _histogramdd_bin_edges(pts, counts, rng):
    from .creation import _linspace

    if type(pts) is MetaArray:  # (a given range reads no data; the edges are still the input's device's)
        raise NoData()
    pts = pts.reshape(-1, pts.shape[-1])
    edges = []
    for k, b in enumerate(counts):
        if rng is not None:
            lo, hi = rng[2 * k], rng[2 * k + 1]
        elif pts.shape[0]:
            col = pts[:, k]
            lo, hi = float(col.min()), float(col.max())
        else:
            lo, hi = 0.0, 0.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"{_naming.prefix}.histogramdd: dimension {k}'s range [{lo:g}, {hi:g}] is not "
                               "finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        if b < -1:  # (torch's linspace of `b + 1` steps)
            raise RuntimeError("number of steps must be non-negative")
        edges.append(_linspace.kernel(lo, hi, b + 1, _dtypes.from_numpy(pts.dtype)))
    return tuple(edges)


@_histogramdd_bin_edges.meta_
def _(pts, counts, rng):
    return tuple(meta_array((b + 1,), pts._data.dtype) for b in counts)


_histogramdd_bin_edges.refuses_(FALLBACK, "_histogramdd_bin_edges")


@typed
def histogramdd(input, bins, *, range=None, weight=None, density: bool = False):  # noqa: A002 - torch's names
    """Histogram of the points in input's last dimension (torch.histogramdd): (hist, bin_edges)."""
    import ember

    from .. import return_types

    if _modes:  # (V) a list of edges: torch's vmap has no fallback (named by the overload `bins` picks)
        kind = ".int_bins" if isinstance(bins, int) else (
            ".TensorList_bins" if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], ember.Tensor)
            else "")
        refuse_under_vmap("histogramdd" + kind, (input, weight, bins), "no_fallback")
    d = input.shape[-1] if input.dim() else 0
    if input.dtype.name not in ("float32", "float64"):
        _histogram_dtype_error(input, bins, range)
    if isinstance(bins, int):
        bins = [bins] * d
    if len(bins) != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if all(isinstance(b, Tensor) for b in bins):
        edges = list(bins)
    else:  # counts: the edges come from the data's range, in one op (torch's `_histogramdd_bin_edges`)
        counts = tuple(0 if isinstance(b, Tensor) else int(b) for b in bins)
        rng = None if range is None else tuple(float(v) for v in range)
        made = dispatch(_histogramdd_bin_edges, (input if input.dim() else input.reshape(-1, d),), (counts, rng))
        edges = [b if isinstance(b, Tensor) else e for b, e in zip(bins, made)]
    for k, e in enumerate(edges):  # (torch's histogramdd_check_inputs, then prepare_out's count check)
        if e.numel() == 0:
            raise RuntimeError(f"{_naming.prefix}.histogramdd: bins tensor should have at least 1 element, but got 0 "
                               f"elements in the bins tensor for dimension {k}")
    for k, b in enumerate(bins):
        if not isinstance(b, Tensor) and int(b) <= 0:
            raise RuntimeError(f"{_naming.prefix}.histogram(): bins must be > 0, but got {b} for dimension {k}")
    w = weight if weight is not None else ember.ones(input.shape[:-1], dtype=input.dtype, device=input.device)
    counted = not all(isinstance(b, Tensor) for b in bins)
    out = dispatch(_histogramdd, (input, w, *([e.detach() for e in edges] if counted else edges)),
                   (bool(density), counted))
    # (torch hands back the bins it was given as they are; counted bins are the edges op's outputs)
    return return_types.histogramdd(out[0], edges)


public["histogramdd"] = histogramdd
