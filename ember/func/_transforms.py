"""ember.func's transforms: vmap, grad, grad_and_value, vjp, jacrev, hessian, functional_call,
stack_module_state, replace_all_batch_norm_modules_ (torch.func's, same signatures and errors).

`vmap` pushes a `VmapLevel` (`_batched.py`) and wraps the mapped inputs in BatchedTensors of it; the
reverse-mode transforms run autograd on physical tensors (NOTE [ grad under vmap ]).
"""

from __future__ import annotations

import functools
import threading

from .. import _tensor
from .._grad_state import state as _grad_state
from .._tensor import history_of, tracks_grad
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..utils._pytree import tree_flatten, tree_unflatten
from ._batched import BatchedTensor, VmapLevel, _physical_requires_grad, _tracking, active_levels, cover, expose
from ._rules import install

Tensor = _tensor.Tensor

__all__ = [
    "vmap",
    "grad",
    "grad_and_value",
    "vjp",
    "jacrev",
    "jvp",
    "linearize",
    "jacfwd",
    "hessian",
    "functional_call",
    "stack_module_state",
    "replace_all_batch_norm_modules_",
    "debug_unwrap",
]


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


# ---- vmap --------------------------------------------------------------------------------------------------


def _broadcast_flat(prefix, tree):
    """`prefix` (in_dims / out_dims) broadcast over the leaves of `tree`, flat; None if they do not fit."""
    leaves, _ = tree_flatten(tree)
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(leaves)
    if isinstance(prefix, (tuple, list)) and type(tree) is type(prefix) and len(tree) == len(prefix):
        out = []
        for p, t in zip(prefix, tree):
            sub = _broadcast_flat(p, t)
            if sub is None:
                return None
            out += sub
        return out
    if isinstance(prefix, dict) and isinstance(tree, dict) and set(prefix) == set(tree):
        out = []
        for k in tree:
            sub = _broadcast_flat(prefix[k], tree[k])
            if sub is None:
                return None
            out += sub
        return out
    return None


def _process_inputs(func, in_dims, args):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_in_dims = _broadcast_flat(in_dims, args)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
            f"structure {spec}."
        )
    for i, (arg, d) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                "in_dim must be either an integer dimension or None."
            )
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please "
                "use None as the respective in_dim"
            )
        if d is not None and not -arg.dim() <= d < arg.dim():
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to "
                f"satisfy -{arg.dim()} <= in_dim < {arg.dim()}."
            )
        if d is not None and d < 0:
            flat_in_dims[i] = d % arg.dim()
    sizes = [a.size(d) for a, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    return sizes[0], flat_in_dims, flat_args, spec


def _valid_out_dims(x):
    if isinstance(x, (tuple, list)):
        return all(_valid_out_dims(e) for e in x)
    return x is None or isinstance(x, int)


def _check_out_dims(out_dims, func):
    if not _valid_out_dims(out_dims):
        raise ValueError(
            f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
            "or a python collection of ints representing where in the outputs the vmapped "
            "dimension should appear."
        )


def _unwrap_outputs(out, out_dims, level, func):
    name = _get_name(func)
    flat, spec = tree_flatten(out)
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        else:
            flat_dims = None
    else:
        flat_dims = _broadcast_flat(out_dims, out)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
            f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
            f"has structure {spec}."
        )
    result = []
    for o, d in zip(flat, flat_dims):
        if d is None:
            if type(o) is BatchedTensor and o._level == level.lvl:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
                )
            result.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you "
                "mean to set out_dims= to None for output?"
            )
        p = expose(o, level)
        result.append(p.movedim(0, d) if d else p)
    return tree_unflatten(result, spec)


def _flat_vmap(func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs):
    with VmapLevel(batch_size, randomness) as level:
        batched = [a if d is None else cover(a, level, d) for a, d in zip(flat_args, flat_in_dims)]
        out = func(*tree_unflatten(batched, spec), **kwargs)
        return _unwrap_outputs(out, out_dims, level, func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize `func` over dim `in_dims` of its inputs: `vmap(f)(x)[i] == f(x[i])`, with the ops run once
    on the whole batch by their batching rules. Nested calls, pytrees of inputs and outputs, `in_dims` and
    `out_dims` per input / output, `randomness` ("error", "different", "same") and `chunk_size` are
    torch.func.vmap's.

    Example::

        >>> x = ember.randn(5, 3)
        >>> ember.func.vmap(ember.dot)(x, x).shape
        ember.Size([5])
    """
    install()
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch_size, flat_in_dims, flat_args, spec = _process_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= batch_size:
            return _flat_vmap(func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs)
        return _chunked(
            func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs, chunk_size
        )

    return wrapped


def _chunked(func, batch_size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs, chunk_size):
    """vmap over chunks of `chunk_size` samples, one after the other, outputs concatenated (torch's)."""
    from .._ops.shape import cat

    outs = []
    for start in range(0, batch_size, chunk_size):
        n = min(chunk_size, batch_size - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_in_dims)]
        outs.append(_flat_vmap(func, n, flat_in_dims, chunk, spec, out_dims, randomness, kwargs))
    flat0, out_spec = tree_flatten(outs[0])
    flat_dims = (
        [out_dims]
        if isinstance(outs[0], Tensor) and not isinstance(out_dims, tuple)
        else (list(out_dims) if isinstance(outs[0], Tensor) else _broadcast_flat(out_dims, outs[0]))
    )
    per = [tree_flatten(o)[0] for o in outs]
    merged = []
    for i, d in enumerate(flat_dims):
        merged.append(per[0][i] if d is None else cat([p[i] for p in per], d))
    return tree_unflatten(merged, out_spec)


# ---- reverse mode ------------------------------------------------------------------------------------------

# NOTE [ grad under vmap ]
# The reverse-mode transforms run ember's one autograd on *physical* tensors. A differentiated input is
# exposed at every vmap level alive (`expose`, newest first: a leading dim per level, expanded where the input
# was not batched at it), made a fresh leaf (or, when an enclosing transform tracks it, a differentiable
# alias of it, so grad(grad(f)) and jacrev(jacrev(f)) see through), and covered again before `f` sees it.
# The ops `f` runs are batched by the vmap levels and recorded by autograd on physical tensors, so the
# gradient of the exposed output with respect to the exposed leaf is, sample by sample, the per-sample
# gradient: the batching rules never mix samples. `vmap(grad(f))` is therefore per-sample gradients at the
# cost of one batched forward and backward. A vjp function called later under a newer vmap level
# (jacrev's vmap over the basis) passes BatchedTensor cotangents to autograd: the derivative formulas,
# being ember ops, are batched by that level's rules. `_depth` counts the transforms running `f`: inside
# one, gradients are computed with create_graph so the enclosing transform can differentiate them.


class _Depth(threading.local):
    def __init__(self):
        self.n = 0


_depth = _Depth()


def _to_phys(x, levels):
    for level in reversed(levels):
        x = expose(x, level)
    return x


def _from_phys(p, levels):
    for level in levels:
        p = cover(p, level, 0)
    return p


def _lift(flat, levels):
    """(physical leaves, the inputs `f` sees, whether any was already tracked) for the flat tensors."""
    leaves, seen, tracked = [], [], False
    for x in flat:
        if not isinstance(x, Tensor):
            leaves.append(None)
            seen.append(x)
            continue
        p = _to_phys(x, levels)
        if tracks_grad(p):
            tracked = True
            leaf = p.view_as(p)
        else:  # (the setter: requires_grad_() is refused inside a transform, NOTE [ Refusals inside a transform ])
            if p._fw_grad is not None:  # a dual tensor: its tangent goes on (forward over reverse)
                tracked = True
                leaf = p.view_as(p)
            else:
                leaf = p.detach()
            leaf.requires_grad = True
        leaves.append(leaf)
        seen.append(_from_phys(leaf, levels))
    return leaves, seen, tracked


def _outer_tracked(outs, leaves):
    """Whether the outputs' graph reaches a leaf tracked outside the transform (one that requires grad and is
    not among the transform's own leaves: a closed-over parameter): then the gradients are computed with
    create_graph, differentiable for it, as torch's are."""
    from ..autograd.graph import AccumulateGrad

    own = {id(leaf) for leaf in leaves if leaf is not None}
    seen = set()
    stack = [history_of(o) for o in outs if isinstance(o, Tensor)]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            if id(node.variable) not in own:
                return True
            continue
        stack.extend(f for f, _ in node.next_functions)
    return False


def _run(func, args, kwargs, reverse=True):
    _depth.n += 1
    _grad_state.func_transforms += 1  # NOTE [ Refusals inside a transform ] (_batched.py)
    _grad_state.func_grad_levels += 1
    # (NOTE [ Tensors inside jvp ] in ember/_tensor.py)
    jvp_inner, _grad_state.func_jvp_inner = _grad_state.func_jvp_inner, not reverse
    if reverse:  # NOTE [ autograd.grad inside vmap ] (_batched.py)
        _tracking.stack.append(len(active_levels()))
    try:
        return func(*args, **kwargs)
    finally:
        _depth.n -= 1
        _grad_state.func_transforms -= 1
        _grad_state.func_grad_levels -= 1
        _grad_state.func_jvp_inner = jvp_inner
        if reverse:
            _tracking.stack.pop()


def _check_argnums(argnums, args):
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")

    def one(n):
        if not isinstance(n, int):
            raise RuntimeError(f"argnum must be int, got: {type(n)}")
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")
        return n % len(args)

    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        norm = tuple(one(n) for n in argnums)
        if len(set(norm)) != len(norm):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return norm
    return one(argnums)


def _zeros_for_none(grads, leaves):
    from .._ops.creation import zeros_like

    return [
        (zeros_like(leaf) if g is None else g) if leaf is not None else None for g, leaf in zip(grads, leaves)
    ]


def _grads(outputs, leaves, cotangents, create):
    used = [leaf for leaf in leaves if leaf is not None]
    # an output autograd does not track (argmax, a comparison, a constant) contributes nothing: the transforms
    # give zeros for it, as torch's do, where autograd.grad would refuse it
    tracked = [(o, c) for o, c in zip(outputs, cotangents) if tracks_grad(o)]
    if len(tracked) < len(outputs):
        if not tracked:
            return [None] * len(leaves)
        outputs, cotangents = [o for o, _ in tracked], [c for _, c in tracked]
    with enable_grad():
        got = (
            list(
                _autograd_grad(
                    outputs, used, cotangents, retain_graph=True, create_graph=create, allow_unused=True
                )
            )
            if used
            else []
        )
    it = iter(got)
    return [next(it) if leaf is not None else None for leaf in leaves]


def grad_and_value(func, argnums=0, has_aux=False):
    """`func`'s gradient with respect to the inputs at `argnums`, and its value: `(grad, value)`, or
    `(grad, (value, aux))` with `has_aux`. `func` must return a scalar tensor."""
    install()

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        levels = active_levels()
        nums = _check_argnums(argnums, args)
        diff = tuple(args[n] for n in nums) if isinstance(nums, tuple) else args[nums]
        flat, spec = tree_flatten(diff)
        with enable_grad():
            leaves, seen, tracked = _lift(flat, levels)
            new = tree_unflatten(seen, spec)
            call_args = list(args)
            if isinstance(nums, tuple):
                for n, v in zip(nums, new):
                    call_args[n] = v
            else:
                call_args[nums] = new
            out = _run(func, call_args, kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                    "if has_aux is True"
                )
            out, aux = out
        if not isinstance(out, Tensor):
            raise RuntimeError(
                f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}"
            )
        if out.dim() != 0:
            raise RuntimeError(
                f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                f"with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        with enable_grad():
            out_p = _to_phys(out, levels)
            from .._ops.creation import ones_like

            create = tracked or _depth.n > 0 or _outer_tracked([out_p], leaves)

            grads = _zeros_for_none(_grads([out_p], leaves, [ones_like(out_p)], create), leaves)
        grads = [None if g is None else _from_phys(g if create else g.detach(), levels) for g in grads]
        grads = tree_unflatten([g if g is not None else x for g, x in zip(grads, flat)], spec)
        if not create:
            out = out.detach()
            aux = _detach_tree(aux)
        return (grads, (out, aux)) if has_aux else (grads, out)

    return wrapper


def _detach_tree(tree):
    flat, spec = tree_flatten(tree)
    return tree_unflatten([x.detach() if isinstance(x, Tensor) else x for x in flat], spec)


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued `func` with respect to its inputs at `argnums` (torch.func.grad)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func, *primals, has_aux=False):
    """`(func(*primals), vjp_fn)` (and aux with `has_aux`): `vjp_fn(cotangents)` gives the vector-Jacobian
    products with respect to each primal, and may be called under vmap (NOTE [ grad under vmap ])."""
    install()
    levels = active_levels()
    flat, spec = tree_flatten(primals)
    with enable_grad():
        leaves, seen, tracked = _lift(flat, levels)
        out = _run(func, tree_unflatten(seen, spec), {})
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(
                "vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux is True"
            )
        out, aux = out
    flat_out, out_spec = tree_flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): Expected f(*primals) to return only tensors, got unsupported "
                f"type {type(o)}"
            )
    with enable_grad():
        outs_p = [_to_phys(o, levels) for o in flat_out]
    create = tracked or _depth.n > 0 or _outer_tracked(outs_p, leaves)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError(
                f"Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {ct_spec}, primal output: {out_spec}"
            )
        make = create or _depth.n > 0 or any(isinstance(c, Tensor) and _physical_requires_grad(c) for c in flat_ct)
        with enable_grad():
            cts = [_to_phys(c, levels) for c in flat_ct]
            gs = _zeros_for_none(_grads(outs_p, leaves, cts, make), leaves)
        gs = [None if g is None else _from_phys(g if make else g.detach(), levels) for g in gs]
        return tree_unflatten([g if g is not None else x for g, x in zip(gs, flat)], spec)

    if not create:
        out = _detach_tree(out)
        aux = _detach_tree(aux)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` with respect to its inputs at `argnums`, by reverse mode: a vjp, then vmap of
    its vjp function over the rows of the identity (in chunks of `chunk_size` rows)."""
    install()
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, args)
        diff = tuple(args[n] for n in nums) if isinstance(nums, tuple) else (args[nums],)

        def f(*d):
            call = list(args)
            if isinstance(nums, tuple):
                for n, v in zip(nums, d):
                    call[n] = v
            else:
                call[nums] = d[0]
            return func(*call, **kwargs)

        res = vjp(f, *diff, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(out)
        flat_in, _ = tree_flatten(diff)
        rows = _jacobian_rows(vjp_fn, flat_out, out_spec, chunk_size)  # per input: (sum numel, *in shape)
        per_out = []
        start = 0
        for o in flat_out:
            n = o.numel()
            per_in = [
                r.narrow(0, start, n).reshape(tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, flat_in)
            ]
            per_out.append(tuple(per_in) if isinstance(nums, tuple) else per_in[0])
            start += n
        jac = tree_unflatten(per_out, out_spec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def _jacobian_rows(vjp_fn, flat_out, out_spec, chunk_size):
    """vmap(vjp_fn) over the standard basis of the outputs: per input, a (total outputs, *input shape)
    tensor."""
    from .._ops.creation import eye

    sizes = [o.numel() for o in flat_out]
    total = sum(sizes)
    basis = eye(total, dtype=flat_out[0].dtype)
    cts, start = [], 0
    for o, n in zip(flat_out, sizes):
        cts.append(basis.narrow(1, start, n).reshape((total,) + tuple(o.shape)).to(o.dtype))
        start += n

    def one(*c):
        return tuple(tree_flatten(vjp_fn(tree_unflatten(list(c), out_spec)))[0])

    if total == 0:
        return [c.new_zeros((0,)) for c in cts]
    rows = vmap(one, chunk_size=chunk_size)(*cts)
    return list(rows) if isinstance(rows, tuple) else [rows]


# ---- forward mode (on ember.autograd.forward_ad's dual tensors) --------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _tensors_only(flat, argname):
    if len(flat) == 0:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for t in flat:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(t)}")


# NOTE [ Forward AD under vmap ]
# ember's forward AD is one mode (ember.autograd.forward_ad). jvp puts it *below* every vmap level alive for
# as long as it runs, and makes and reads its dual tensors on physical tensors: the forward mode then sees
# the physical ops the batching rules call, which are also the ops autograd records, so a reverse transform
# inside (jacfwd(jacrev(f)), hessian, under vmap or not) differentiates ops that carry tangents, and its
# backward ops, run under the same stack, compute theirs (forward over reverse). Outside, it goes back on top,
# where forward_ad pops it.
class _below_vmap:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        from .._dispatch import _local

        above = _local.above
        first = next((i for i, m in enumerate(above) if isinstance(m, VmapLevel)), None)
        self.moved = first is not None and above and above[-1] is self.mode
        if self.moved:
            above.pop()
            above.insert(first, self.mode)

    def __exit__(self, *exc):
        from .._dispatch import _local

        if self.moved:
            _local.above.remove(self.mode)
            _local.above.append(self.mode)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """`(func(*primals), J @ tangents)` (and aux with `has_aux`): the Jacobian-vector product in forward mode,
    with the primals made dual tensors carrying `tangents` (ember.autograd.forward_ad)."""
    from .._ops.creation import zeros_like
    from ..autograd import forward_ad as fwAD

    install()
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
            f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
            f"{p_spec} and tangents with structure {t_spec}"
        )
    _tensors_only(flat_p, "primals")
    _tensors_only(flat_t, "tangents")
    levels = active_levels()
    needs = _depth.n > 0 or any(_physical_requires_grad(p) for p in flat_p)
    with fwAD.dual_level(), _below_vmap(fwAD._level.mode):
        # dual tensors made and read at the physical level (NOTE [ Forward AD under vmap ])
        # (contiguous: a primal expanded over a batch would give make_dual's tangent copy one shared row)
        duals = [
            _from_phys(fwAD.make_dual(_to_phys(p, levels).contiguous(), _to_phys(t, levels)), levels)
            for p, t in zip(flat_p, flat_t)
        ]
        out = _run(func, tree_unflatten(duals, p_spec), {}, reverse=False)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(
                    f"{_JVP}: output of function f should be a tuple: (output, aux) if has_aux is True"
                )
            out, aux = out
        flat_out, out_spec = tree_flatten(out)
        if (len(flat_out) == 1 and flat_out[0] is None) or len(flat_out) < 1:
            raise RuntimeError(
                f"{_JVP}: Expected f to be a function that has non-empty output (got output = {flat_out})"
            )
        prims, tans = [], []
        for o in flat_out:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"{_JVP}: expected f(*primals) to return only tensors, got unsupported type {type(o)}"
                )
            primal, tangent = fwAD.unpack_dual(_to_phys(o, levels))
            if tangent is None:
                if strict:
                    raise RuntimeError(
                        "jvp(f, primals, tangents, strict=True): The output of f is independent of "
                        "the inputs. This is not allowed with strict=True."
                    )
                tangent = zeros_like(primal)
            if not needs:
                primal, tangent = primal.detach(), tangent.detach()
            prims.append(_from_phys(primal, levels))
            tans.append(_from_phys(tangent, levels))
    res = (tree_unflatten(prims, out_spec), tree_unflatten(tans, out_spec))
    return res + (aux,) if has_aux else res


def linearize(func, *primals):
    """`(func(*primals), jvp_fn)`: `jvp_fn(*tangents)` is the Jacobian-vector product at `primals` (each call
    one forward-mode evaluation; torch traces the linearized function once instead, with the same values)."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` with respect to its inputs at `argnums`, by forward mode: vmap of a jvp over the
    standard basis of the inputs."""
    install()
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from .._ops.creation import eye

        nums = _check_argnums(argnums, args)
        diff = tuple(args[n] for n in nums) if isinstance(nums, tuple) else (args[nums],)
        flat_in, in_spec = tree_flatten(diff)
        sizes = [x.numel() for x in flat_in]
        total = sum(sizes)
        basis = eye(total, dtype=flat_in[0].dtype)
        cols, start = [], 0
        for x, n in zip(flat_in, sizes):
            cols.append(basis.narrow(1, start, n).reshape((total,) + tuple(x.shape)).to(x.dtype))
            start += n

        def f(*d):
            call = list(args)
            if isinstance(nums, tuple):
                for n, v in zip(nums, d):
                    call[n] = v
            else:
                call[nums] = d[0]
            return func(*call, **kwargs)

        def push(*tangents):
            res = jvp(f, diff, tree_unflatten(list(tangents), in_spec), has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]

        pushed = vmap(push, randomness=randomness)(*cols)
        jvp_out, aux = pushed if has_aux else (pushed, None)
        flat_out, out_spec = tree_flatten(jvp_out)
        per_out = []
        for o in flat_out:  # (total, *out shape) -> per input (*out shape, *input shape)
            nd_out = o.dim() - 1
            per_in, start = [], 0
            for x, n in zip(flat_in, sizes):
                part = o.narrow(0, start, n).reshape(tuple(x.shape) + tuple(o.shape[1:]))
                part = part.permute(*range(x.dim(), x.dim() + nd_out), *range(x.dim()))
                per_in.append(part)
                start += n
            per_out.append(tuple(per_in) if isinstance(nums, tuple) else per_in[0])
        jac = tree_unflatten(per_out, out_spec)
        if has_aux:
            flat_aux, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([a[0] if isinstance(a, Tensor) else a for a in flat_aux], aux_spec)
            return jac, aux
        return jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar-valued `func` with respect to its inputs at `argnums`: forward mode over reverse
    mode, jacfwd(jacrev(func)), as torch's."""
    return jacfwd(jacrev(func, argnums), argnums)


def debug_unwrap(tensor, *, recurse=True):
    """The physical tensor under a BatchedTensor (for debugging inside vmap): one level with
    `recurse=False`, all of them by default; any other tensor as it is."""
    if type(tensor) is not BatchedTensor:
        return tensor
    return debug_unwrap(tensor._value) if recurse else tensor._value


# ---- modules -----------------------------------------------------------------------------------------------


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """`module(*args, **kwargs)` with the parameters and buffers named in `parameter_and_buffer_dicts` (a
    dict, or a tuple of dicts with distinct keys) in place of the module's own, for this call."""
    from collections.abc import Sequence

    from ..nn.utils.stateless import _reparametrize

    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous"
            )
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
            f"{type(parameter_and_buffer_dicts)}"
        )
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, merged, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def _stacked_leaf(tensors, name):
    from .._ops.shape import stack

    all_rg = all(t.requires_grad for t in tensors)
    if not all_rg and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors, 0)
    return result.detach().requires_grad_() if all_rg else result


def stack_module_state(models):
    """(params, buffers): each parameter and buffer of `models` (modules of one class) stacked along a new
    leading dim, by name, as new leaves, ready for `vmap(functional_call ...)` ensembles."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module of `root` stop tracking running statistics (so it can run under vmap),
    in place; returns `root`."""
    from ..nn.modules.batchnorm import _BatchNorm

    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
