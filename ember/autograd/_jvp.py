"""The JVP rules of forward-mode AD: how each op maps its inputs' tangents to its outputs' tangents.

A rule is `rule(inputs, params, out, tangents) -> tangent (or a tuple, one per output)`, where `tangents`
has one entry per input (None for an input without tangent). It lives in the op's `jvp` slot in the registry
(`OpDef.jvp`, declared beside the op's derivative with `@op.jvp_`); an op that declares none gets one derived
from what its declaration already says (NOTE [ JVP rules from one declaration ]). Rules are written in ember
ops and run below the forward-AD mode, so autograd records them (reverse-over-forward works).
"""

from __future__ import annotations

from .. import _dtypes
from .._dispatch import redispatch, registry
from .._grad_state import state as _grad_state
from .._tensor import Tensor, tracks_grad
from . import graph as _graph

__all__ = ["jvp", "linear", "multilinear", "pointwise", "generic", "rule_of"]

# NOTE [ JVP rules from one declaration ]
# Every differentiable op gets an exact JVP rule without being declared twice:
# - an op that is linear in its tensor inputs jointly (add, views, cat, sum, indexing by index tensors, the
#   FFTs) is its own JVP: the op applied to the tangents (`linear`; inputs without tangent become zeros,
#   Python numbers 0, index and mask tensors stay as they are);
# - an op that is multilinear (mul, mm, matmul, einsum, ...) sums the op with each input in turn replaced by
#   its tangent (`multilinear`); the affine ones (addmm: beta * self + alpha * m1 @ m2) take their additive
#   input in the first term only (`affine_multilinear`);
# - a pointwise op on real numbers: its derivative formula is the elementwise product of the incoming
#   gradient with the partial derivative, so the formula called with the tangent (broadcast to the output)
#   in place of the gradient is the JVP term of that input (`pointwise`);
# - every other op (and pointwise ops on complex numbers, whose formulas are conjugate-Wirtinger ones):
#   the double-vjp rule (`generic`). The VJP g(u) = J^T u is linear in u and written in ember ops, so the
#   VJP of g at any u with cotangent t is (J^T)^T t = J t, exact (no finite differences), and right for
#   complex numbers too (the adjoint of torch's conjugate VJP is the real-linear pushforward). It costs two
#   backward formulas, so hot ops (softmax, log_softmax, convolution, layer_norm) declare explicit rules.
# The derived rule is cached in the op's `jvp` slot on first use.


def jvp(op, inputs, params, out, tangents):
    """The tangents of `op`'s outputs `out`, given its inputs' `tangents`."""
    rule = op.jvp
    if rule is None:
        rule = op.jvp = rule_of(op)
    n = op.edges
    if n is not None and any(t is not None for t in tangents[n:]):
        # the inputs past the edges (batch_norm's running statistics) are not differentiable: torch drops their
        # tangents (NOTE [ Optional and state inputs ] in ember/_dispatch.py)
        tangents = list(tangents[:n]) + [None] * (len(tangents) - n)
        if all(t is None for t in tangents):
            return None
    return rule(inputs, params, out, tangents)


_LINEAR = frozenset((
    "add", "sub", "rsub", "neg", "conj", "conj_physical", "clone", "to", "where", "tril", "triu", "complex",
    "reshape", "sum_to_size", "cat", "stack", "contiguous", "repeat", "flip", "roll", "rot90", "diag_embed",
    "trace", "block_diag", "index", "index_put_zeros", "index_select", "gather", "scatter_zeros", "take",
    "put_zeros", "masked_select", "index_put", "index_add", "index_copy", "scatter_add", "sum",
    "sum.dim_IntList", "mean", "cumsum", "_fft_c2c", "_fft_r2c", "_fft_c2r", "avg_pool2d", "avg_pool3d",
    "avg_pool2d_backward", "avg_pool3d_backward", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
    "_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward", "embedding_dense_backward",
    "embedding",  # (its backward leaves padding_idx's row without gradient; the function itself reads it)
))
_MULTILINEAR = frozenset(("mul", "mm", "bmm", "mv", "dot", "vdot", "matmul", "einsum", "linalg_cross",
                          "convolution_backward_input", "convolution_backward_weight"))
_AFFINE_MULTILINEAR = frozenset(("addmm", "addmv", "baddbmm", "addbmm", "addcmul"))


# NOTE [ Ops torch's forward AD refuses ]
# torch refuses forward AD through some ops, in one of two forms, and ember refuses the same ops alike (a
# tangent where torch has none would let code run under ember that fails under torch). The declaration is
# this table, keyed by the registered op and read only where an input carries a tangent (the forward-AD
# mode's dispatch, and `rule_of` when the op's rule is first made): never on the plain op path.
# - an op outside torch's derivatives.yaml goes through its autograd fallback, which refuses before the
#   kernel runs: "Trying to use forward AD with aten::<op> that does not support it." (SHORT);
# - an op in derivatives.yaml without a forward formula refuses after its kernel, in the long form that asks
#   for an issue (LONG; `_unsupported`), naming the aten op torch dispatches to (cdist runs _cdist_forward,
#   unique _unique2 or unique_dim); a foreach op's long form ends before its last clause (FOREACH);
# - an out= function refuses any tangent: "... with <op>_out that does not support it because it is an out=
#   function" (OUT; `finish_out` in ember/_ops/_util.py for every out= call; the optimizer steps that torch
#   writes with `maximum(out=)` here, the name saying when: Adam's only with amsgrad, its params[1]).
# The incomplete gamma functions and zeta are of the second kind: their derivatives are NaN at points where
# the function is finite, and no reference would tell a right tangent there from a wrong one.
SHORT, LONG, FOREACH, OUT = "short", "long", "foreach", "out"
NO_FORWARD_AD = {
    "igamma": (LONG, "igamma"), "igammac": (LONG, "igammac"),
    "special_zeta.Tensor": (LONG, "special_zeta"), "special_zeta.Scalar_Self": (LONG, "special_zeta"),
    "special_zeta.Scalar_Other": (LONG, "special_zeta"),
    "cdist": (LONG, "_cdist_forward"), "_standard_gamma": (LONG, "_standard_gamma"),
    "_standard_gamma_grad": (LONG, "_standard_gamma_grad"), "_foreach_copy_": (FOREACH, "_foreach_copy_"),
    "unique": (LONG, lambda params: "_unique2" if params[0] is None else "unique_dim"),
    "unique_consecutive": (LONG, "unique_consecutive"),
    "binomial": (SHORT, "aten::binomial"), "heaviside": (SHORT, "aten::heaviside"),
    "silu_backward": (SHORT, "aten::silu_backward"),
    "histogram": (SHORT, "aten::histogram"), "histogramdd": (SHORT, "aten::_histogramdd_bin_edges"),
    "_sample_dirichlet": (SHORT, "aten::_sample_dirichlet"), "_dirichlet_grad": (SHORT, "aten::_dirichlet_grad"),
    "_amp_update_scale_": (SHORT, "aten::_amp_update_scale_"), "bincount": (SHORT, "aten::bincount"),
    "repeat_interleave.Tensor": (SHORT, "aten::repeat_interleave"),
    "_adamax_step_": (OUT, "maximum_out"), "_adam_step_": (OUT, lambda params: "maximum_out" if params[1] else None),
    **{q: (SHORT, f"aten::{q}") for q in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                                          "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm")},
}


# Composites: ops torch has as one aten op and ember composes of others whose tangents are defined (floor_divide
# is div with rounding_mode="floor", cholesky is linalg_cholesky_ex): the composite calls `check_composite`
# under `if _modes:` (a dual level pushes the forward-AD mode), so its plain calls pay nothing.
COMPOSITES = {
    "floor_divide": (SHORT, "aten::floor_divide"), "bernoulli.p": (SHORT, "aten::bernoulli"),
    "nonzero_static": (SHORT, "aten::nonzero_static"), "cholesky": (LONG, "cholesky"),
    "ormqr": (LONG, "ormqr"), "index_reduce": (LONG, "index_reduce"),
    "bitwise_not_": (SHORT, "aten::bitwise_not_"), "detach_copy": (SHORT, "aten::detach_copy"),
    "bincount": (SHORT, "aten::bincount"),
}


def check_composite(key, *tensors) -> None:
    """Raise torch's refusal (COMPOSITES[key]) where one of the composite's `tensors` carries a tangent."""
    if any(isinstance(t, Tensor) and t._fw_grad is not None for t in tensors):
        raise _refusal_of(COMPOSITES[key], ())


def refusal(op, params, inplace=False) -> NotImplementedError | None:
    """torch's refusal of forward AD through `op` (declared in NO_FORWARD_AD; None where the declaration's name
    says these params pass); `inplace`: called as the in-place method (bitwise_and_), which torch's fallback
    names as such."""
    return _refusal_of(NO_FORWARD_AD[op.qualname], params, inplace)


def _refusal_of(declared, params, inplace=False) -> NotImplementedError:
    form, name = declared
    name = name(params) if callable(name) else name
    if name is None:
        return None
    if form == OUT:
        return NotImplementedError(f"Trying to use forward AD with {name} that does not support it because it is "
                                   "an out= function")
    if form == SHORT:
        suffix = "_" if inplace and not name.endswith("_") else ""
        return NotImplementedError(f"Trying to use forward AD with {name}{suffix} that does not support it.")
    e = _unsupported(None, name)
    if form == FOREACH:
        e.args = (e.args[0].split(" or submit a PR")[0] + ".",)
    return e


def rule_of(op):
    """The rule an op without a declared one gets (NOTE [ JVP rules from one declaration ])."""
    q = op.qualname
    if q in NO_FORWARD_AD:
        return _refusal(op)
    if q == "linalg_cholesky_ex":
        return _cholesky
    if q == "linalg_eigh":
        return _eigh
    if q == "rnn_layer":
        return decomposed(_rnn_layer, 1)
    if q.startswith("normal."):
        return _zeros_of_tangent(q == "normal.Tensor_Tensor")
    if "nondeterministic_seeded" in op.tags and "inplace" in op.tags:
        return _zeros_of_tangent(True)  # torch's `self_t.zero_()`: no tangent unless self had one
    if q == "scatter":
        return _scatter(linear(op))
    if op.kind == "view" or q in _LINEAR:
        return linear(op)
    if q in _MULTILINEAR:
        return multilinear(op)
    if q in _AFFINE_MULTILINEAR:
        return affine_multilinear(op)
    if op.kind == "pointwise" and op.derivative is not None:
        return pointwise(op)
    return generic(op)


def _zeros_like(x):
    import ember

    return ember.zeros_like(x)


def _zero_number(x):
    return type(x)(0) if isinstance(x, (int, float, complex)) and not isinstance(x, bool) else x


def _floaty(t):
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def linear(op):
    """The op itself on the tangents: for ops linear in their tensor inputs jointly."""
    keep_ints = bool(op.tags & {"index", "mask"})

    def rule(inputs, params, out, tangents):
        args = []
        for x, t in zip(inputs, tangents):
            if t is not None:
                args.append(t)
            elif isinstance(x, Tensor):
                args.append(x if keep_ints and not _floaty(x) else _zeros_like(x))
            else:
                args.append(_zero_number(x))
        return redispatch(op, args, params)
    return rule


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if type(a) is tuple:
        return tuple(_add(x, y) for x, y in zip(a, b))
    return a + b


def multilinear(op):
    """The sum over inputs with a tangent of the op with that input replaced by its tangent."""
    def rule(inputs, params, out, tangents):
        res = None
        for i, t in enumerate(tangents):
            if t is not None:
                args = list(inputs)
                args[i] = t
                res = _add(res, redispatch(op, args, params))
        return res
    return rule


def affine_multilinear(op):
    """For `beta * x0 + alpha * f(x1, x2, ...)` with f multilinear (addmm, addcmul): the first term takes
    the tangents of x0 and x1 (zeros for missing ones), each further term x0 = 0 and one tangent."""
    def rule(inputs, params, out, tangents):
        res = None
        if tangents[0] is not None or tangents[1] is not None:
            args = list(inputs)
            for i in (0, 1):
                args[i] = tangents[i] if tangents[i] is not None else _zeros_like(inputs[i])
            res = redispatch(op, args, params)
        for i in range(2, len(inputs)):
            if tangents[i] is not None:
                args = list(inputs)
                args[0], args[i] = _zeros_like(inputs[0]), tangents[i]
                res = _add(res, redispatch(op, args, params))
        return res
    return rule


def _complex(inputs, out):
    for x in (out,) + tuple(inputs):
        if isinstance(x, Tensor) and x.is_complex() or isinstance(x, complex):
            return True
    return False


def pointwise(op):
    """For pointwise ops on real numbers: the derivative formula called with each tangent as the gradient
    (see NOTE [ JVP rules from one declaration ]); complex calls take the generic rule."""
    fallback = generic(op)

    def rule(inputs, params, out, tangents):
        if type(out) is not Tensor or _complex(inputs, out):
            return fallback(inputs, params, out, tangents)
        kw = {"out": out} if op.save_output else {}
        shape = out.shape
        res = None
        prev = _graph._mask.value
        try:
            for i, t in enumerate(tangents):
                if t is None:
                    continue
                if t.shape != shape:
                    t = t.expand(shape)
                _graph._mask.value = tuple(True if j == i else None for j in range(len(inputs)))
                r = op.derivative(t, *inputs, *params, **kw)
                r = r[i] if type(r) in (tuple, list) else r
                if r is not None and r.shape != shape:  # the formula reduced the gradient itself (fill_
                    _graph._mask.value = prev  # of a tensor value): not elementwise, take the generic rule
                    return fallback(inputs, params, out, tangents)
                if r is not None:
                    res = r if res is None else res + r
        finally:
            _graph._mask.value = prev
        if res is None:
            return None
        if res.shape != shape:
            res = res.expand(shape)
        return res.to(out.dtype) if res.dtype != out.dtype else res
    return rule


def generic(op):
    """The double-vjp rule: J t as the VJP, with cotangent t, of u -> VJP(u) (exact; see NOTE [ JVP rules
    from one declaration ])."""
    def rule(inputs, params, out, tangents):
        import ember

        single = type(out) is not tuple and type(out) is not list
        outs = (out,) if single else tuple(out)
        create = _grad_state.enabled and any(
            isinstance(x, Tensor) and tracks_grad(x) for x in tuple(inputs) + tuple(tangents))
        prev_enabled, prev_mask = _grad_state.enabled, _graph._mask.value
        _grad_state.enabled = True
        try:
            d = op.derivative
            if any(isinstance(o, Tensor) and o.is_complex() for o in outs) and "not_holomorphic" not in op.tags:
                d = _graph._conjugated(op).derivative
            _graph._mask.value = tuple(True if t is not None else None for t in tangents)
            kw = {"out": out} if op.save_output else {}
            # Any cotangent will do, the VJP being linear in it; ones tell a formula that is not differentiable
            # (its result does not require grad) from one that is zero. A formula that refuses ones (eig's
            # check that the loss does not depend on the eigenvectors' phases) gets zeros.
            try:
                us = _cotangents(outs, ember.ones_like)
                res = d(us[0] if single else tuple(us), *inputs, *params, **kw)
                zeros = False
            except RuntimeError:
                us = _cotangents(outs, ember.zeros_like)
                res = _refused(op, d, us[0] if single else tuple(us), inputs, params, kw)
                zeros = True
            except NotImplementedError:
                res = _refused(op, d, us[0] if single else tuple(us), inputs, params, kw)
            res = res if type(res) in (tuple, list) else (res,)
            ys, ts = [], []
            for i, t in enumerate(tangents):
                if t is None or i >= len(res) or res[i] is None:
                    continue
                if not tracks_grad(res[i]):
                    if not zeros and bool(res[i].detach().ne(0).any()):  # a formula autograd cannot differentiate
                        raise _unsupported(op)
                    continue
                x = inputs[i]
                g = _graph.fit_grads((res[i],), ((tuple(x.shape), _dtypes.to_numpy(x.dtype)),))[0]
                ys.append(g)
                ts.append(t.to(g.dtype) if t.dtype != g.dtype else t)
            wrt = [u for u in us if u is not None and tracks_grad(u)]
            try:
                got = ember.autograd.grad(ys, wrt, grad_outputs=ts, allow_unused=True, create_graph=create) \
                    if ys else [None] * len(wrt)
            except RuntimeError as e:  # the backward formula's own derivative is refused (as torch's is)
                if "derivative for" not in str(e):
                    raise
                raise _unsupported(op) from None
        finally:
            _grad_state.enabled, _graph._mask.value = prev_enabled, prev_mask
        it = iter(got)
        res = []
        for o, u in zip(outs, us):
            if u is not None and tracks_grad(u):
                g = next(it)
                res.append(_zeros_like(o) if g is None else g)
            else:
                res.append(None)
        return res[0] if single else tuple(res)
    return rule


def _zeros_of_tangent(first_only):
    """torch's JVP of the normal samplers: zeros shaped like the mean's tangent (the first input's), or
    like the only tensor's; no tangent when only the std of `normal(Tensor, Tensor)` has one."""
    def rule(inputs, params, out, tangents):
        for t in tangents[:1] if first_only else tangents:
            if t is not None:
                return _zeros_like(t)
        return None
    return rule


def decomposed(fn, n_extra=0):
    """The JVP of an op through its decomposition `fn(*inputs, *params)` into ember ops, run with the
    forward-AD mode back on (the inputs carry their tangents): for fused ops whose backward is a kernel
    autograd cannot differentiate (the recurrent layers). `n_extra` trailing outputs of the op (workspaces)
    get zero tangents."""
    def rule(inputs, params, out, tangents):
        from .._modes import pop_mode, push_mode
        from . import forward_ad

        mode = forward_ad._level.mode
        push_mode(mode)
        try:
            res = fn(*inputs, *params)
        finally:
            pop_mode(mode)
        ts = [None if r._fw_grad is None else r._fw_grad for r in res]
        return tuple(ts) + tuple(_zeros_like(o) for o in out[len(out) - n_extra:])
    return rule


def _rnn_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse, batch_sizes, split_bias=False):
    from .._ops.rnn import composite_layer

    return composite_layer(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse, batch_sizes)


def _cholesky(inputs, params, out, tangents):
    """torch's `cholesky_jvp`: with A = L L^H, dL = L pi(L^-1 dA L^-H), pi(X) = tril(X) - diag(X) / 2; the
    tangent is read whole, as torch reads it (the factorization reads one triangle of A, its derivative
    assumes a Hermitian dA). The info output has none."""
    import ember

    dA = tangents[0]
    upper = params[0]
    L = out[0].mH if upper else out[0]
    dL = ember.linalg.solve_triangular(L, dA, upper=False, left=True)
    dL = ember.linalg.solve_triangular(L.mH, dL, upper=True, left=False)
    dL = dL.tril() - (dL.diagonal(0, -2, -1) * 0.5).diag_embed()
    dL = L @ dL
    return (dL.mH if upper else dL), None


def _eigh(inputs, params, out, tangents):
    """torch's `linalg_eig_jvp` for Hermitian input: dP = V^H dA V, dL = diag(dP) (real), dV = V (dP / E)
    with E_ij = L_j - L_i off the diagonal and a zero diagonal; dA is read whole, as torch reads it."""
    dA = tangents[0]
    L, V = out
    dP = V.mH @ dA.to(V.dtype) @ V
    dL = dP.diagonal(0, -2, -1)
    dL = dL.real if dL.is_complex() else dL
    import ember

    off = 1 - ember.eye(L.shape[-1], dtype=L.dtype)  # (the diagonal divides by one, then is zeroed)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + (1 - off)
    dV = dP / E.to(dP.dtype) * off.to(dP.dtype)
    return dL, V @ dV


def _refused(op, d, g, inputs, params, kw):
    """The backward formula's result, or torch's forward-AD refusal where the formula refuses (an op without a
    derivative has no forward formula either): `derivative for aten::x is not implemented` becomes torch's
    short form, any other refusal its long one."""
    try:
        return d(g, *inputs, *params, **kw)
    except (RuntimeError, NotImplementedError) as e:
        msg = str(e)
        if msg.startswith("derivative for aten::") and msg.endswith(" is not implemented"):
            name = msg[len("derivative for "):-len(" is not implemented")]
            raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it.") from None
        if "derivative for" in msg and "not implemented" in msg:
            raise _unsupported(op) from None
        raise


def _scatter(lin):
    """scatter is linear in (self, src); with `reduce` torch has no forward formula, and says so."""
    def rule(inputs, params, out, tangents):
        if params[-1] is not None:
            raise NotImplementedError("Trying to use forward AD with aten::scatter that does not support it.")
        return lin(inputs, params, out, tangents)
    return rule


def _unsupported(op, name=None):
    """torch's refusal of forward AD through an op without forward formula: ember's generic rule cannot serve
    an op whose backward formula is not differentiable (its RNN layers, CTC loss)."""
    return NotImplementedError(
        f"Trying to use forward AD with {name or op.name} that does not support it because it has not been implemented "
        "yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-"
        "request.yml so that we can prioritize its implementation or submit a PR adding the implementation to "
        "derivatives.yaml")


def _refusal(op):
    fallback = [None]

    def rule(inputs, params, out, tangents):
        e = refusal(op, params)
        if e is not None:
            raise e
        if fallback[0] is None:
            fallback[0] = generic(op)
        return fallback[0](inputs, params, out, tangents)
    return rule


def _cotangents(outs, fill):
    """Cotangents for the generic rule: `fill` of each floating output, requiring grad; zeros for the
    others (indices); None for what is not a tensor."""
    return [_requiring(fill(o)) if _floaty(o) else (_zeros_like(o) if isinstance(o, Tensor) else None)
            for o in outs]


def _requiring(t):
    """`t`, a fresh leaf, made to require grad by the setter (requires_grad_() is refused inside ember.func's
    transforms, under which this rule may run: NOTE [ Refusals inside a transform ] in ember/func/_batched.py)."""
    t.requires_grad = True
    return t


def declare(qualname, rule):
    """Give op `qualname` the JVP rule `rule` (for rules written apart from the op's file)."""
    registry[qualname].jvp = rule


def function_apply(mode, op, inputs, params, tangents):
    """A custom `autograd.Function` under forward AD, as torch runs it: `forward` sees no tangents (the mode
    passes its ops through), then `jvp(ctx, *tangents)` gives the outputs' tangents; a tensor argument
    without tangent gets zeros, any other argument None. A Function without `jvp` raises torch's error."""
    from . import function as _function

    mode.hidden = True
    last, waiting = _function._last, _function._last.waiting
    last.waiting = True
    try:
        out = redispatch(op, inputs, params)
    finally:
        mode.hidden = False
        last.waiting = waiting
    ctx, last.ctx = last.ctx, None
    if tangents is None:
        return out
    cls, template, kwargs = params
    per_tensor = [t if t is not None else (_zeros_like(x) if _floaty(x) else None)
                  for x, t in zip(inputs, tangents)]
    if template is None:
        args = per_tensor
    else:
        it = iter(per_tensor)
        args = [next(it) if a is _function._TENSOR else None for a in template]
    ctx._in_jvp = True
    try:
        res = cls.jvp(ctx, *args)
    finally:
        ctx._in_jvp = False
    single = not isinstance(out, (tuple, list))
    outs = (out,) if single else tuple(out)
    res = res if isinstance(res, (tuple, list)) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outs)} "
                           f"but got {len(res)})")
    from .forward_ad import set_tangent

    for o, t in zip(outs, res):
        if _floaty(o) and isinstance(t, Tensor):
            set_tangent(o, t)
    return out
