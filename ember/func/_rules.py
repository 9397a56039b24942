"""Batching rules: how each registered op runs on BatchedTensors (the `batch` slot of its registry entry).

A rule is `rule(level, op, inputs, params) -> outputs`: it receives the op's inputs as the function inside
vmap holds them (BatchedTensors of `level` among them), calls ops on the physical tensors (the batch moved
to dim 0), and returns BatchedTensors of `level` (batch at dim 0). One rule serves each family of
primitives: pointwise ops (broadcasting, logical promotion), reductions and softmaxes (dims shifted past
the batch, "all dims" folded), views and shape ops (dims and sizes shifted), the matmul family (one
broadcasting matmul), convolution and pooling (the batch folded into N), nll_loss. `install()` writes
them into the registry once, when `ember.func` is first imported.

Every other op takes `fallback`: a loop over the batch that runs the op on each sample and stacks the
results, as torch's BatchedFallback does (and, like it, warns of the performance drop only when
`_set_vmap_fallback_warning_enabled(False)` was not called).
"""

from __future__ import annotations

import warnings

from .. import _dtypes
from .._dispatch import dtype_word, redispatch, registry
from .._tensor import Tensor
from ._batched import BatchedTensor, _make, is_batched, level_of

__all__ = ["install", "fallback", "inplace", "stack_outputs"]

_warn_fallback = [True]  # torch warns by default too


def set_fallback_warning_enabled(enabled: bool) -> None:
    """torch._C._functorch._set_vmap_fallback_warning_enabled: warn when an op runs by the looping
    fallback (on by default, as in torch)."""
    _warn_fallback[0] = bool(enabled)


def _wrap(out, level):
    if isinstance(out, Tensor):
        return _make(out, 0, level.lvl)
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap(o, level) for o in out)
    return out


def _dim(d, ndim):
    """Logical dim `d` wrapped into [0, ndim) (ndim 0 takes -1 and 0, as torch's)."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


# ---- the looping fallback ----------------------------------------------------------------------------------


def stack_outputs(level, outs):
    """Per-sample outputs (one per batch element) stacked into BatchedTensors of `level`."""
    first = outs[0]
    if isinstance(first, Tensor):
        return _make(_stack(outs), 0, level.lvl)
    if isinstance(first, (tuple, list)):
        parts = (stack_outputs(level, [o[i] for o in outs]) for i in range(len(first)))
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)  # (return_types)
    return first


def _stack(ts):
    from .._ops.shape import stack

    return stack(ts, 0)


def fallback(level, op, inputs, params, same_randomness=False, warn=True):
    """Run `op` once per sample and stack the results (torch's BatchedFallback; `warn=False` for a rule
    that loops where torch has a rule, so warns of nothing)."""
    if op.name in _DYNAMIC:
        raise _dynamic_error(op, params)
    if warn and _warn_fallback[0]:
        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule for "
            f"aten::{op.name}. Please file us an issue on GitHub so that we can prioritize its "
            "implementation.",
            UserWarning,
            stacklevel=2,
        )
    lvl = level.lvl
    seen = [level_of(t, lvl) for t in inputs]
    state = None
    if same_randomness:
        from ..random import get_rng_state, set_rng_state

        state = get_rng_state()
    outs = []
    for b in range(level.batch_size):
        if state is not None:
            set_rng_state(state)
        args = [p.select(0, b) if batched else p for p, batched in seen]
        outs.append(redispatch(op, args, params))
    # (an op whose output shape follows the data, bincount, repeat_interleave, stacks as torch's fallback does:
    # its samples' results when their shapes agree, else stack's error naming them)
    return stack_outputs(level, outs)


_DYNAMIC = ("nonzero", "unique", "unique_consecutive")  # refused by torch's vmap whatever the data


def _dynamic_error(op, params):
    name = op.name
    if name == "unique":  # (torch.unique is aten::_unique2, or unique_dim with a dim)
        name = "_unique2" if params[0] is None else "unique_dim"
    return RuntimeError(
        f"vmap: We do not support batching operators that can output dynamic shape. Attempted to "
        f"vmap over aten::{name}. Please file an issue at https://github.com/pytorch/pytorch/issues "
        "if you need this feature."
    )


def inplace_error(name: str) -> str:
    """torch's vmapIncompatibleInplaceError: `name` is "inplace arithmetic" for the pointwise in-place ops,
    the op's own name where torch's rule names it (fill_)."""
    return (
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in "
        "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but "
        f"`self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of {name}. "
        "If said operator is being called inside the PyTorch framework, please file a bug report instead."
    )


_INPLACE_ERROR = inplace_error("inplace arithmetic")


def inplace(level, op, self_, inputs, params):
    """`self_.op_(...)` inside vmap: the op out of place (by its rule), written into self's physical
    tensor, with the in-place op's casting check (an int64 self cannot take add_'s float result)."""
    if op.name == "fill_" and len(inputs) == 2:
        return _fill_tensor(level, self_, inputs[1])
    if not (type(self_) is BatchedTensor and self_._level == level.lvl):
        raise RuntimeError(_INPLACE_ERROR)
    out = level.dispatch(op, inputs, params)
    p = out._value if type(out) is BatchedTensor and out._level == level.lvl else out
    if isinstance(p, Tensor) and p.dtype is not self_.dtype and op.name != "copy_" and not _dtypes.can_cast(
            p.dtype, self_.dtype):
        raise RuntimeError(f"result type {dtype_word(p.dtype)} can't be cast to the desired output type "
                           f"{dtype_word(self_.dtype)}")
    target = self_._value
    if self_._bdim:
        target = target.movedim(self_._bdim, 0)
    if isinstance(p, Tensor) and p.dim() < target.dim():
        p = p.unsqueeze(0)  # one value for every sample
    target.copy_(p)
    return self_


def _fill_tensor(level, self_, value):
    """`self_.fill_(value)` with a tensor value, as torch's rule: the value copied into self's physical
    tensor (a batched value padded to self's logical rank), so with copy_'s casting and broadcasting, and
    no range check of the value; refused when only the value is batched."""
    lvl = level.lvl
    if not (type(self_) is BatchedTensor and self_._level == lvl):
        raise RuntimeError(inplace_error("fill_"))
    target = level_of(self_, lvl)[0]
    v, batched = level_of(value, lvl)
    if batched and v.dim() < target.dim():
        v = v.reshape(tuple(v.shape) + (1,) * (target.dim() - v.dim()))
    target.copy_(v)
    return self_


# ---- pointwise ---------------------------------------------------------------------------------------------


def _pad(p, k):
    for _ in range(k):
        p = p.unsqueeze(1)
    return p


def pointwise_phys(level, op, inputs, params):
    """The physical outputs of pointwise `op` (batch at dim 0): batched operands padded to the logical rank
    right after the batch dim; operands promoted as their logical shapes would be (a batched 0-d tensor is a
    1-d physical one, which would otherwise outrank dimensioned tensors)."""
    lvl = level.lvl
    nd = 0
    dtypes = set()
    for t in inputs:
        if isinstance(t, Tensor):
            nd = max(nd, t.dim())
            dtypes.add(t.dtype)
    cast = None
    if (
        op.promote is not None and len(dtypes) > 1
    ):  # (the samples' promotion: BatchedTensors as their payloads)
        cast = _dtypes.result_dtype(inputs)
    args = []
    for t in inputs:
        if type(t) is BatchedTensor and t._level == lvl:
            p = t._value if t._bdim == 0 else t._value.movedim(t._bdim, 0)
            p = _pad(p, nd - t.dim())
        else:
            p = t
        if cast is not None and isinstance(p, Tensor) and p.dtype is not cast:
            p = p.to(cast)
        args.append(p)
    return redispatch(op, args, params)


def pointwise(level, op, inputs, params):
    return _wrap(pointwise_phys(level, op, inputs, params), level)


# ---- reductions, softmaxes: dims shifted past the batch ----------------------------------------------------


def _only_first(rule):
    """`rule` for ops whose first input alone is batched; anything else takes the fallback."""

    def checked(level, op, inputs, params):
        lvl = level.lvl
        if any(type(t) is BatchedTensor and t._level == lvl for t in inputs[1:]) or not (
            type(inputs[0]) is BatchedTensor and inputs[0]._level == lvl
        ):
            return fallback(level, op, inputs, params)
        return rule(level, op, inputs, params)

    return checked


def _reduce(dims_at, keepdim_at=None):
    """A reduction whose param `dims_at` is an int, a list of ints, or None / () for all dims."""

    def rule(level, op, inputs, params):
        x = inputs[0]
        nd = x.dim()
        p, _ = level_of(x, level.lvl)
        dims = params[dims_at] if dims_at is not None else None
        keep = params[keepdim_at] if keepdim_at is not None else False
        params = list(params)
        if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
            # all of the sample's dims: flatten them into one (a 0-d sample becomes one element)
            flat = p.reshape(level.batch_size, -1)
            if dims_at is not None:
                params[dims_at] = 1 if _int_dim(op) else (1,)
                out = redispatch(op, [flat] + list(inputs[1:]), params)
            else:  # the all-dims overload (sum(x)): its dim overload over the flattened dim
                out = redispatch(_DIM_FORM[op.qualname], [flat], [(1,), False] + params)
            if keep:
                outs = out if isinstance(out, tuple) else (out,)
                outs = tuple(o.reshape((level.batch_size,) + (1,) * nd) for o in outs)
                out = outs if isinstance(out, tuple) else outs[0]
            return _wrap(out, level)
        if isinstance(dims, int):
            params[dims_at] = _dim(dims, nd) + 1
        else:
            params[dims_at] = type(dims)(_dim(d, nd) + 1 for d in dims)
        return _wrap(redispatch(op, [p] + list(inputs[1:]), params), level)

    return _only_first(rule)


def _int_dim(op):
    return op.qualname in ("argmax", "argmin", "max.dim", "min.dim")


_DIM_FORM: dict = {}


def _softmax(level, op, inputs, params):
    x = inputs[0]
    p, _ = level_of(x, level.lvl)
    params = list(params)
    params[0] = _dim(params[0], x.dim()) + 1
    return _wrap(redispatch(op, [p], params), level)


# ---- views and shape ops -----------------------------------------------------------------------------------


def _shift(positions):
    """A view whose params at `positions` are dims of the sample (ints, or a list of them)."""

    def rule(level, op, inputs, params):
        x = inputs[0]
        nd = x.dim() + (1 if op.name == "unsqueeze" else 0)
        p, _ = level_of(x, level.lvl)
        params = list(params)
        for i in positions:
            d = params[i]
            if op.name == "permute":
                params[i] = (0,) + tuple(_dim(e, nd) + 1 for e in d)
                continue
            if isinstance(d, int):
                params[i] = _dim(d, nd) + 1
            elif d is not None:
                params[i] = type(d)(_dim(e, nd) + 1 for e in d)
        return _wrap(redispatch(op, [p], params), level)

    return _only_first(rule)


def _squeeze(level, op, inputs, params):
    x = inputs[0]
    dims = params[0] if params else None
    nd = x.dim()
    if dims is None:
        dims = tuple(i for i, s in enumerate(x.shape) if s == 1)
    elif isinstance(dims, int):
        dims = (dims,)
    p, _ = level_of(x, level.lvl)
    dims = tuple(_dim(d, nd) + 1 for d in dims)
    return _wrap(redispatch(registry["squeeze.dims"], [p], [dims]), level)


def _sized(level, op, inputs, params):
    """view / reshape / expand: the sample's sizes follow the batch's."""
    x = inputs[0]
    p, _ = level_of(x, level.lvl)
    shape = tuple(params[0])
    if op.name == "expand":
        p = _pad(p, len(shape) - x.dim())
    params = [(level.batch_size,) + shape] + list(params[1:])
    if op.name == "view" and not _viewable(p):
        return _wrap(redispatch(registry["reshape"], [p], params), level)
    return _wrap(redispatch(op, [p], params), level)


def _viewable(p):
    return p.is_contiguous()


def _t(level, op, inputs, params):
    x = inputs[0]
    p, _ = level_of(x, level.lvl)
    if x.dim() < 2:
        return _wrap(redispatch(registry["view"], [p], [tuple(p.shape)]), level)
    return _wrap(redispatch(registry["transpose"], [p], [1, 2]), level)


def _view_as_complex(level, op, inputs, params):
    p, _ = level_of(inputs[0], level.lvl)
    if p.dim() and p.stride(-1) != 1:  # the batch moved in front can leave the pairs apart, as in torch
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    return _wrap(redispatch(op, [p], params), level)


def _as_strided(level, op, inputs, params):
    """as_strided of each sample: the sample's sizes and strides behind the batch's; a given storage offset
    is the first sample's, the others follow at the batch stride (torch's rule)."""
    p, _ = level_of(inputs[0], level.lvl)
    size, stride, offset = params
    offset = p.storage_offset() if offset is None else offset
    return _wrap(
        redispatch(op, [p], [(level.batch_size,) + tuple(size), (p.stride(0),) + tuple(stride), offset]),
        level,
    )


def _unary(level, op, inputs, params):
    """Ops that act on each element or the whole tensor alike (contiguous, clone): the batch comes along."""
    p, _ = level_of(inputs[0], level.lvl)
    return _wrap(redispatch(op, [p], params), level)


def _cat(level, op, inputs, params):
    """cat / stack (params: dim): every operand batched (unbatched ones expanded), the dim shifted."""
    lvl = level.lvl
    nd = max(t.dim() for t in inputs) + (1 if op.name == "stack" else 0)
    args = []
    for t in inputs:
        p, batched = level_of(t, lvl)
        if not batched:
            p = p.unsqueeze(0).expand(level.batch_size, *p.shape)
        args.append(p)
    params = list(params)
    params[0] = _dim(params[0], nd) + 1
    return _wrap(redispatch(op, args, params), level)


# ---- matmul family -----------------------------------------------------------------------------------------


def matmul_phys(level, a, b):
    """Physical `a @ b` (torch.matmul's semantics on the samples), batch at dim 0."""
    lvl = level.lvl
    la, lb = a.dim(), b.dim()
    pa, ba = level_of(a, lvl)
    pb, bb = level_of(b, lvl)
    if la == 1:
        pa = pa.unsqueeze(-2)
    if lb == 1:
        pb = pb.unsqueeze(-1)
    nd = max(la, lb, 2)
    if ba:
        pa = _pad(pa, nd - max(la, 2))
    if bb:
        pb = _pad(pb, nd - max(lb, 2))
    out = redispatch(registry["matmul"], [pa, pb], [])
    if la == 1:
        out = out.squeeze(-2)
    if lb == 1:
        out = out.squeeze(-1)
    return out


def _matmul(level, op, inputs, params):
    return _make(matmul_phys(level, inputs[0], inputs[1]), 0, level.lvl)


def _addmm(level, op, inputs, params):
    c, a, b = inputs
    beta, alpha = params
    mm = _make(matmul_phys(level, a, b), 0, level.lvl)
    if alpha != 1:
        mm = pointwise(level, registry["mul"], [mm, alpha], [])
    if beta == 0:  # (torch ignores c then, NaNs included)
        return mm
    if beta != 1:
        c = pointwise(level, registry["mul"], [c, beta], []) if type(c) is BatchedTensor else c * beta
    return pointwise(level, registry["add"], [c, mm], [])


# ---- nn primitives: the batch folded into N ----------------------------------------------------------------


def _fold(level, op, inputs, params):
    """Ops over (N, C, *spatial) samples (convolution, pooling) whose first input alone is batched: the
    batch folded into N, unfolded from every output."""
    x = inputs[0]
    p, _ = level_of(x, level.lvl)
    bsz, n = level.batch_size, p.shape[1]
    flat = p.reshape((bsz * n,) + tuple(p.shape[2:]))
    out = redispatch(op, [flat] + list(inputs[1:]), params)
    outs = out if isinstance(out, tuple) else (out,)
    outs = tuple(_make(o.reshape((bsz, n) + tuple(o.shape[1:])), 0, level.lvl) for o in outs)
    return outs if isinstance(out, tuple) else outs[0]


def _lu_unpack(level, op, inputs, params):
    """lu_unpack of batched factors: one call on the physical batch (the op takes leading batch dims). An
    output not asked for (`unpack_data` / `unpack_pivots` false) is the kernel's empty (0,) tensor, which
    torch's rule wraps as it is, batch dim 0 and all (logical shape (), and vmap returns it as (0,))."""
    lvl, bsz = level.lvl, level.batch_size
    phys = []
    for t in inputs:
        p, batched = level_of(t, lvl)
        phys.append(p if batched else p.unsqueeze(0).expand(bsz, *p.shape))
    return tuple(_make(t, 0, lvl) for t in redispatch(op, phys, params))


_BN_UNBATCHED = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated in "
    "place, were not batched.\nIf you are using a module and do not need eval mode, please set "
    "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please "
    "see the functorch website for resources on how to patch your module to work with vmap"
)


def _batch_norm(level, op, inputs, params):
    """native_batch_norm (NOTE [ Batch norm updates its running statistics ]) run per sample, with the two
    traits of torch's rule a user can see. In training, a batched input needs batched running statistics
    (they are updated in place). And torch hands the kernel the statistics with their batch moved first and
    flattened into the channels, `reshape(...).contiguous()`: where that is a copy (the batch was not their
    first dim, as `in_dims=-1` gives), the kernel updates the copy and the caller's statistics keep their
    values; so here too."""
    x, weight, bias, rm, rv = inputs
    lvl = level.lvl
    if params[0] and is_batched(x, lvl) and any(r is not None and not is_batched(r, lvl) for r in (rm, rv)):
        raise RuntimeError(_BN_UNBATCHED)
    stats = []
    for r in (rm, rv):
        if r is not None and is_batched(r, lvl):
            p = level_of(r, lvl)[0]
            if not p.is_contiguous():
                r = _make(p.contiguous(), 0, lvl)
        stats.append(r)
    return fallback(level, op, [x, weight, bias, *stats], params, warn=False)


def _nll_loss(level, op, inputs, params):
    """nll_loss of (C) or (N, C) samples: the batch folded into N, each sample's reduction done after."""
    x, target, weight = inputs
    lvl = level.lvl
    nd = x.dim()
    if nd > 2 or (type(weight) is BatchedTensor and weight._level == lvl):
        return fallback(level, op, inputs, params)
    reduction, ignore = params
    bsz = level.batch_size
    px, xb = level_of(x, lvl)
    pt, tb = level_of(target, lvl)
    if not xb:
        px = px.unsqueeze(0).expand(bsz, *px.shape)
    if not tb:
        pt = pt.unsqueeze(0).expand(bsz, *pt.shape)
    if nd == 1:
        px, pt = px.unsqueeze(1), pt.unsqueeze(1)
    n, c = px.shape[1], px.shape[2]
    losses = redispatch(op, [px.reshape(bsz * n, c), pt.reshape(bsz * n), weight], ["none", ignore])
    losses = losses.reshape(bsz, n)
    if reduction == "none":
        out = losses.squeeze(1) if nd == 1 else losses
    elif reduction == "sum":
        out = losses.sum(1)
    else:
        keep = pt != ignore
        if weight is None:
            w = keep.to(losses.dtype)
        else:
            w = weight.index_select(0, pt.where(keep, 0).reshape(-1)).reshape(pt.shape) * keep
        out = losses.sum(1) / w.sum(1)
    return _make(out, 0, lvl)


# ---- the table ---------------------------------------------------------------------------------------------

_installed = [False]


# ---- optimizer steps ----------------------------------------------------------------------------------------


def _optimizer_step(level, op, inputs, params):
    """An optimizer step over batched parameters: torch's single-tensor steps run under vmap, but for those
    that call `maximum(out=)` (Adamax, Adam with amsgrad) or index with a boolean mask (Rprop), which its
    vmap refuses; ember's step is one op over lists (NOTE [ Optimizer steps are ops over lists ] in
    _ops/optim.py), so it refuses them here and runs the others per sample."""
    if op.name == "_rprop_step_":
        raise RuntimeError("vmap: We do not support batching operators that can support dynamic shape. Attempting "
                           "to batch over indexing with a boolean mask.")
    if op.name == "_adamax_step_" or params[1]:  # (Adam's first hyperparameter is amsgrad)
        raise RuntimeError("Batching rule not implemented for aten::maximum.out; the fallback path doesn't work on "
                           "out= or view ops.")
    return fallback(level, op, inputs, params, warn=False)


# NOTE [ Custom Functions under vmap ]
# torch runs a custom autograd.Function under vmap by its own declaration, never by the looping fallback (and
# never warns of one): with `generate_vmap_rule = True` it applies, below the level, a Function whose forward,
# backward and jvp are vmaps of the user's over the physical tensors; ember applies the user's Function per
# sample on the physical slices and stacks the results (the same values, outputs and gradients, each sample's
# node running the user's backward), without the fallback's warning. With a `vmap` staticmethod, that method
# gets `info` (batch_size, randomness), the inputs' batch dims (None for an unbatched or non-tensor argument)
# and the unwrapped arguments, runs below this level, and returns (outputs, out_dims); with neither, or both,
# vmap refuses. A call where no argument is batched at this level passes through. An output that is one of the
# unwrapped inputs comes back as the input itself (torch's identity check for mark_dirty).
_FN_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(tuple):
    """torch's `VmapInfo(batch_size, randomness)` namedtuple, as a custom Function's vmap staticmethod gets it."""

    __slots__ = ()
    _fields = ("batch_size", "randomness")

    def __new__(cls, batch_size, randomness):
        return tuple.__new__(cls, (batch_size, randomness))

    batch_size = property(lambda self: self[0])
    randomness = property(lambda self: self[1])

    def __repr__(self):
        return f"VmapInfo(batch_size={self[0]}, randomness={self[1]!r})"


def _function(level, op, inputs, params):
    """The rule of `autograd_function_apply`: NOTE [ Custom Functions under vmap ]."""
    from ..autograd.function import _TENSOR, Function

    cls, template, kwargs = params
    if any(isinstance(v, Tensor) for v in kwargs.values()):
        raise NotImplementedError("Run vmap on autograd.Function with kwarg-only Tensor args. Please do not pass "
                                  f"kwarg-only Tensors to autograd.Function. Got: {kwargs}")
    own = cls.vmap is not Function.vmap
    name = cls.__name__
    if cls.generate_vmap_rule:
        if own:
            raise RuntimeError(f"You tried to vmap over {name}, but it has both generate_vmap_rule=True and an "
                               "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
                               f"overridden vmap staticmethod to avoid ambiguity. {_FN_DOCS}")
        return fallback(level, op, inputs, params, warn=False)  # (see the NOTE: per sample, as a rule)
    if not own:
        raise RuntimeError(f"You tried to vmap over {name}, but it does not have vmap support. Please override and "
                           f"implement the vmap staticmethod or set generate_vmap_rule=True. {_FN_DOCS}")
    lvl = level.lvl
    unwrapped = [t._value if is_batched(t, lvl) else t for t in inputs]
    dims = [t._bdim if is_batched(t, lvl) else None for t in inputs]
    if template is None:
        args, in_dims = unwrapped, dims
    else:
        it, dt = iter(unwrapped), iter(dims)
        args = [next(it) if a is _TENSOR else a for a in template]
        in_dims = [next(dt) if a is _TENSOR else None for a in template]
    result = cls.vmap(VmapInfo(level.batch_size, level.randomness), tuple(in_dims), *args, **kwargs)
    base = "Expected the vmap staticmethod to have two returns, an output and out_dims with pytree structure " \
           "compatible with the output. "
    if not isinstance(result, tuple):
        raise RuntimeError(base + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(base + f"Got {len(result)} returns instead")
    from ..utils._pytree import tree_flatten, tree_unflatten

    outs, spec = tree_flatten(result[0])
    out_dims = result[1]
    flat_dims = [out_dims] * len(outs) if out_dims is None or isinstance(out_dims, int) else \
        tree_flatten(out_dims)[0]
    if len(flat_dims) != len(outs):
        raise RuntimeError(f"The autograd.Function's vmap staticmethod returned an incompatible (output, out_dims) "
                           f"tuple. Expected out_dims={out_dims} to be compatible with the structure of `output`. "
                           f"out_dims has structure {tree_flatten(out_dims)[1]} but output has structure {spec}. "
                           f"{_FN_DOCS}")
    same = {id(u): t for u, t in zip(unwrapped, inputs)}
    wrapped = [o if not isinstance(o, Tensor) else same[id(o)] if id(o) in same else o if d is None
               else _make(o, d % o.dim() if o.dim() else d, lvl) for o, d in zip(outs, flat_dims)]
    return tree_unflatten(wrapped, spec)


def install() -> None:
    """Write the rules into the registry's `batch` slots (once)."""
    if _installed[0]:
        return
    _installed[0] = True
    for op in registry.values():
        if op.kind == "pointwise" and "nondeterministic_seeded" not in op.tags and not op.name.endswith("_"):
            op.batch = pointwise
    _DIM_FORM.update({"sum": registry["sum.dim_IntList"], "mean": registry["mean.dim"]})
    table = {
        "sum": _reduce(None),
        "mean": _reduce(None),
        "sum.dim_IntList": _reduce(0, 1),
        "mean.dim": _reduce(0, 1),
        "amax": _reduce(0, 1),
        "amin": _reduce(0, 1),
        "logsumexp": _reduce(0, 1),
        "var": _reduce(0, 2),
        "std": _reduce(0, 2),
        "max.dim": _reduce(0, 1),
        "min.dim": _reduce(0, 1),
        "argmax": _reduce(0, 1),
        "argmin": _reduce(0, 1),
        "softmax": _only_first(_softmax),
        "log_softmax": _only_first(_softmax),
        "transpose": _shift((0, 1)),
        "permute": _shift((0,)),
        "unsqueeze": _shift((0,)),
        "select": _shift((0,)),
        "slice": _shift((0,)),
        "unbind": _shift((0,)),
        "squeeze": _only_first(_squeeze),
        "squeeze.dim": _only_first(_squeeze),
        "squeeze.dims": _only_first(_squeeze),
        "view": _only_first(_sized),
        "reshape": _only_first(_sized),
        "expand": _only_first(_sized),
        "t": _only_first(_t),
        "contiguous": _only_first(_unary),
        "view_as_real": _only_first(_unary),
        "view_as_complex": _only_first(_view_as_complex),
        "as_strided": _only_first(_as_strided),
        "diagonal": _shift((1, 2)),
        "unfold": _shift((0,)),
        "split": _shift((0,)),
        "cat": _cat,
        "stack": _cat,
        "mm": _matmul,
        "matmul": _matmul,
        "bmm": _matmul,
        "dot": _matmul,
        "mv": _matmul,
        "addmm": _addmm,
        "convolution": _only_first(_fold),
        "max_pool2d_with_indices": _only_first(_fold),
        "max_pool3d_with_indices": _only_first(_fold),
        "avg_pool2d": _only_first(_fold),
        "avg_pool3d": _only_first(_fold),
        "_adaptive_avg_pool2d": _only_first(_fold),
        "_adaptive_avg_pool3d": _only_first(_fold),
        "nll_loss": _nll_loss,
        "lu_unpack": _lu_unpack,
        "native_batch_norm": _batch_norm,
        "_adam_step_": _optimizer_step,
        "_adamax_step_": _optimizer_step,
        "_rprop_step_": _optimizer_step,
        "autograd_function_apply": _function,
    }
    for name, rule in table.items():
        op = registry.get(name)
        if op is not None:
            op.batch = rule
