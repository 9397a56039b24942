"""ember.func's transforms against torch.func's on the same functions, models and NumPy inputs.

Each row of TRANSFORMS is `fn(lib, *inputs)` run in both libraries by `compare.check` (values, shapes,
dtypes; gradients through the transform where the row says `grad`). ERRORS holds misuse, compared by
exception class and message. The per-sample gradients of a small CNN are held to torch's and to a loop.
"""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check, to_ember, to_torch

import ember

R = np.random.default_rng(0)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return R.standard_normal(shape)


def _mlp_loss(L, params, x, y):
    h = L.relu(x @ params[0].t() + params[1])
    return L.nn.functional.cross_entropy(h @ params[2].t(), y)


TRANSFORMS = [
    # vmap: in_dims / out_dims, nesting, pytrees, chunks, several ops
    ("vmap_mul", lambda L, x, y: L.func.vmap(L.mul)(x, y), [f32(3, 4), f32(3, 4)], None),
    ("vmap_in_dims", lambda L, x, y: L.func.vmap(L.mul, in_dims=(1, None))(x, y), [f32(4, 3), f32(4)], None),
    ("vmap_out_dims", lambda L, x: L.func.vmap(lambda a: a.exp(), out_dims=1)(x), [f32(3, 4, 2)], None),
    (
        "vmap_nested",
        lambda L, x, y: L.func.vmap(L.func.vmap(L.dot))(x, y),
        [f32(2, 3, 4), f32(2, 3, 4)],
        None,
    ),
    (
        "vmap_nested_dims",
        lambda L, x, y: L.func.vmap(L.func.vmap(L.mul, in_dims=(0, None)), in_dims=(None, 0))(x, y),
        [f32(3, 4), f32(5, 4)],
        None,
    ),
    (
        "vmap_pytree",
        lambda L, d, x: tuple(
            L.func.vmap(
                lambda p, a: {"s": p["w"] * a + p["b"], "t": (a.sum(),)}, in_dims=({"w": 0, "b": None}, 0)
            )({"w": d, "b": x[0]}, x).values()
        ),
        [f32(3, 4), f32(3, 4)],
        None,
    ),
    (
        "vmap_chunks",
        lambda L, x: L.func.vmap(lambda a: (a @ a.t()).sum(0), chunk_size=2)(x),
        [f32(5, 3, 2)],
        None,
    ),
    (
        "vmap_matmul",
        lambda L, a, b: L.func.vmap(L.matmul, in_dims=(0, None))(a, b),
        [f32(3, 4, 5), f32(5)],
        None,
    ),
    (
        "vmap_mm_right",
        lambda L, a, b: L.func.vmap(L.mm, in_dims=(None, 0))(a, b),
        [f32(2, 5), f32(3, 5, 4)],
        None,
    ),
    (
        "vmap_views",
        lambda L, x: L.func.vmap(
            lambda a: a.t().reshape(-1, 2).unsqueeze(0).expand(3, -1, -1).transpose(0, 2).squeeze()
        )(x),
        [f32(4, 2, 3)],
        None,
    ),
    (
        "vmap_reductions",
        lambda L, x: L.func.vmap(
            lambda a: (a.sum(), a.mean(0), a.amax(-1, keepdim=True), a.softmax(1), a.logsumexp(0), a.var(1))
        )(x),
        [f32(3, 4, 5)],
        None,
    ),
    (
        "vmap_scalar_promotion",
        lambda L, x, y: L.func.vmap(L.add, in_dims=(0, None))(x, y),
        [f64(3), f32(4)],
        None,
    ),
    (
        "vmap_cat_stack",
        lambda L, x, y: L.func.vmap(lambda a: (L.cat([a, y]), L.stack([a, y], 1)))(x),
        [f32(3, 4), f32(4)],
        None,
    ),
    (
        "vmap_linear_module",
        lambda L, x, w, b: L.func.vmap(L.nn.functional.linear, in_dims=(0, None, None))(x, w, b),
        [f32(3, 2, 5), f32(4, 5), f32(4)],
        None,
    ),
    (
        "vmap_conv_pool",
        lambda L, x, w: L.func.vmap(
            lambda a: L.nn.functional.max_pool2d(L.nn.functional.conv2d(a, w, padding=1), 2)
        )(x),
        [f32(3, 2, 1, 6, 6), f32(4, 1, 3, 3)],
        None,
    ),
    (
        "vmap_inplace",
        lambda L, x, y: L.func.vmap(lambda a, b: a.clone().mul_(b).add_(1))(x, y),
        [f32(3, 4), f32(3, 4)],
        None,
    ),
    ("vmap_grad_through", lambda L, x: L.func.vmap(lambda a: (a * a).sin())(x), [f64(3, 4)], [0]),
    # grad, grad_and_value, vjp, jacrev, hessian
    ("grad", lambda L, x: L.func.grad(lambda a: (a.sin() * a).sum())(x), [f64(4)], None),
    (
        "grad_argnums",
        lambda L, x, y: L.func.grad(lambda a, b: (a * b.exp()).sum(), argnums=(0, 1))(x, y),
        [f64(3), f64(3)],
        None,
    ),
    (
        "grad_has_aux",
        lambda L, x: L.func.grad(lambda a: ((a**2).sum(), a.cos()), has_aux=True)(x),
        [f64(3)],
        None,
    ),
    ("grad_and_value", lambda L, x: L.func.grad_and_value(lambda a: a.tanh().sum())(x), [f64(3, 2)], None),
    (
        "grad_grad",
        lambda L, x: L.func.grad(L.func.grad(lambda a: a.sin().sum() if a.dim() == 0 else a))(x),
        [np.full((), 0.7)],
        None,
    ),
    (
        "grad_of_grad_sum",
        lambda L, x: L.func.grad(lambda a: L.func.grad(lambda b: (b**3).sum())(a).sum())(x),
        [f64(4)],
        None,
    ),
    ("vmap_grad", lambda L, x: L.func.vmap(L.func.grad(lambda a: (a.exp() * a).sum()))(x), [f64(5, 3)], None),
    (
        "vmap_grad_unbatched_arg",
        lambda L, w, x: L.func.vmap(L.func.grad(lambda p, a: (p @ a).pow(2).sum()), in_dims=(None, 0))(w, x),
        [f64(2, 3), f64(4, 3)],
        None,
    ),
    (
        "grad_vmap",
        lambda L, x: L.func.grad(lambda a: L.func.vmap(lambda r: r.sin().sum())(a).sum())(x),
        [f64(3, 4)],
        None,
    ),
    ("vjp", lambda L, x, v: L.func.vjp(lambda a: a.sin() * 2, x)[1](v), [f64(3, 2), f64(3, 2)], None),
    (
        "vjp_value_aux",
        lambda L, x: L.func.vjp(lambda a: (a.exp(), a.sum()), x, has_aux=True)[::2],
        [f64(3)],
        None,
    ),
    ("jacrev", lambda L, x: L.func.jacrev(lambda a: a.sin() * a.sum())(x), [f64(4)], None),
    (
        "jacrev_argnums",
        lambda L, x, y: L.func.jacrev(lambda a, b: a[:, None] * b, argnums=(0, 1))(x, y),
        [f64(3), f64(2)],
        None,
    ),
    (
        "jacrev_chunk",
        lambda L, x: L.func.jacrev(lambda a: a.exp().cumsum(0), chunk_size=2)(x),
        [f64(5)],
        None,
    ),
    (
        "jacrev_has_aux",
        lambda L, x: L.func.jacrev(lambda a: (a**2, a.sum()), has_aux=True)(x),
        [f64(3)],
        None,
    ),
    ("jacrev_matrix_out", lambda L, x: L.func.jacrev(lambda a: a @ a.t())(x), [f64(2, 3)], None),
    (
        "jacrev_jacrev",
        lambda L, x: L.func.jacrev(L.func.jacrev(lambda a: (a**3).sum() * a[0]))(x),
        [f64(3)],
        None,
    ),
    (
        "vmap_jacrev",
        lambda L, x: L.func.vmap(L.func.jacrev(lambda a: a.sin() * a.sum()))(x),
        [f64(2, 3)],
        None,
    ),
    ("hessian", lambda L, x: L.func.hessian(lambda a: (a.sin() * a.prod()).sum())(x), [f64(3)], None),
    (
        "hessian_argnums",
        lambda L, x, y: L.func.hessian(lambda a, b: (a * b).sum() ** 2, argnums=1)(x, y),
        [f64(2), f64(2)],
        None,
    ),
    (
        "mlp_per_sample",
        lambda L, w1, b1, w2, x, y: L.func.vmap(
            L.func.grad(lambda p, a, t: _mlp_loss(L, p, a[None], t[None])), in_dims=(None, 0, 0)
        )((w1, b1, w2), x, y),
        [f64(6, 4), f64(6), f64(3, 6), f64(5, 4), np.array([0, 2, 1, 1, 0])],
        None,
    ),
    # forward mode: jvp, linearize, jacfwd, hessian (forward over reverse), under vmap too
    ("jvp", lambda L, x, t: L.func.jvp(lambda a: a.sin() * a.sum(), (x,), (t,)), [f64(4), f64(4)], None),
    (
        "jvp_two_inputs_aux",
        lambda L, x, y: L.func.jvp(lambda a, b: (a * b.exp(), a.sum()), (x, y), (y, x), has_aux=True),
        [f64(3), f64(3)],
        None,
    ),
    (
        "jvp_independent_output",
        lambda L, x, y: L.func.jvp(lambda a: y * 2, (x,), (x,)),
        [f64(3), f64(3)],
        None,
    ),
    ("linearize", lambda L, x, t: L.func.linearize(lambda a: a.cos() * a, x)[1](t), [f64(3), f64(3)], None),
    (
        "vmap_jvp",
        lambda L, x, t: L.func.vmap(lambda a, b: L.func.jvp(lambda c: c.exp() @ c, (a,), (b,)))(x, t),
        [f64(4, 3), f64(4, 3)],
        None,
    ),
    ("jacfwd", lambda L, x: L.func.jacfwd(lambda a: a.sin() * a.sum())(x), [f64(4)], None),
    (
        "jacfwd_argnums_aux",
        lambda L, x, y: L.func.jacfwd(
            lambda a, b: (a[:, None] * b.exp(), b.sum()), argnums=(0, 1), has_aux=True
        )(x, y),
        [f64(3), f64(2)],
        None,
    ),
    (
        "jacfwd_jacrev",
        lambda L, x: L.func.jacfwd(L.func.jacrev(lambda a: (a**3).sum() * a[0]))(x),
        [f64(3)],
        None,
    ),
    ("hessian_fwd_rev", lambda L, x: L.func.hessian(lambda a: (a.sin() * a.prod()).sum())(x), [f64(4)], None),
    (
        "vmap_hessian",
        lambda L, x: L.func.vmap(L.func.hessian(lambda a: (a.exp() * a.sum()).sum()))(x),
        [f64(2, 3)],
        None,
    ),
    # autograd.functional with vectorize=True
    (
        "jacobian_vectorize",
        lambda L, x: L.autograd.functional.jacobian(lambda a: a.exp() * a.sum(), x, vectorize=True),
        [f64(3)],
        None,
    ),
    (
        "jacobian_vectorize_tuple",
        lambda L, x, y: L.autograd.functional.jacobian(
            lambda a, b: (a * b.sum(), (a**2).sum()), (x, y), vectorize=True, create_graph=True
        ),
        [f64(3), f64(2)],
        [0],
    ),
    (
        "jacobian_forward_mode",
        lambda L, x, y: L.autograd.functional.jacobian(
            lambda a, b: (a.sin() * b.sum(), a.sum()), (x, y), vectorize=True, strategy="forward-mode"
        ),
        [f64(3), f64(2)],
        None,
    ),
    (
        "hessian_forward_outer",
        lambda L, x: L.autograd.functional.hessian(
            lambda a: (a.exp() * a.sum()).sum(), x, vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
        [f64(3)],
        None,
    ),
    (
        "grad_is_grads_batched",
        lambda L, x, v: L.autograd.grad((x.sin() * 2,), (x,), (v,), is_grads_batched=True),
        [f64(3), f64(4, 3)],
        [0],
    ),
    (
        "hessian_vectorize",
        lambda L, x: L.autograd.functional.hessian(lambda a: (a**3).sum(), x, vectorize=True),
        [f64(3)],
        None,
    ),
]


@pytest.mark.parametrize("name,fn,inputs,grad", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform(name, fn, inputs, grad):
    check(fn, *inputs, grad=grad, check_stride=False)


def test_fallback_warning():
    """An op with no batching rule runs per sample, with torch's performance warning (which can be turned off)."""
    import re
    import warnings

    def run(L, x):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = L.func.vmap(lambda a: L.histc(a, 4))(x)
            L.func._set_vmap_fallback_warning_enabled(False) if L is ember else \
                torch._C._functorch._set_vmap_fallback_warning_enabled(False)
            L.func.vmap(lambda a: L.histc(a, 4))(x)
            L.func._set_vmap_fallback_warning_enabled(True) if L is ember else \
                torch._C._functorch._set_vmap_fallback_warning_enabled(True)
        msgs = [re.sub(r" \(Triggered internally at [^)]*\.\)$", "", str(m.message)) for m in w
                if "performance drop" in str(m.message)]
        return out, msgs

    x = f32(3, 5)
    (e, em), (t, tm) = run(ember, to_ember(x)), run(torch, to_torch(x))
    assert_same(e, t, check_stride=False)
    assert em == tm and len(em) == 1


def test_batched_repr():
    """A BatchedTensor prints as torch's (level, batch dim, the physical tensor)."""

    def run(L, x):
        seen = []
        L.func.vmap(L.func.vmap(lambda a: seen.append(repr(a)) or a, in_dims=1))(x)
        return [r.replace("ember.", "torch.") for r in seen]

    x = np.arange(12.0).reshape(2, 3, 2)
    assert run(ember, to_ember(x)) == run(torch, to_torch(x))


def test_debug_unwrap():
    def run(L, x):
        seen = []

        def f(a):
            seen.append((tuple(L.func.debug_unwrap(a).shape), tuple(L.func.debug_unwrap(a, recurse=False).shape)))
            return a

        L.func.vmap(L.func.vmap(f))(x)
        return seen, tuple(L.func.debug_unwrap(x).shape)

    x = f32(2, 3, 4)
    assert run(ember, to_ember(x)) == run(torch, to_torch(x))


def _cnn(L):
    nn = L.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 5))


def test_cnn_per_sample_gradients():
    """vmap(grad(...)) + functional_call on a small CNN: torch's per-sample gradients, and a loop's."""
    torch.manual_seed(0)
    tm = _cnn(torch)
    em = _cnn(ember)
    em.load_state_dict({k: to_ember(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x, y = f32(6, 1, 8, 8), np.array([0, 3, 1, 4, 2, 0])

    def per_sample(L, model, x, y):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, a, t):
            out = L.func.functional_call(model, (p,), (a.unsqueeze(0),))
            return L.nn.functional.cross_entropy(out, t.unsqueeze(0))

        return L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    eg = per_sample(ember, em, to_ember(x), to_ember(y))
    tg = per_sample(torch, tm, to_torch(x), to_torch(y))
    for k in tg:
        assert_same(eg[k], tg[k], rtol=1e-4, atol=1e-5, check_stride=False, path=k)
    for i in range(len(x)):  # and a loop over the samples, one backward each
        em.zero_grad()
        ember.nn.functional.cross_entropy(em(to_ember(x[i : i + 1])), to_ember(y[i : i + 1])).backward()
        for k, p in em.named_parameters():
            np.testing.assert_allclose(eg[k][i].numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=k)


def test_ensemble_stack_module_state():
    """stack_module_state + vmap(functional_call) over an ensemble of models: torch's outputs."""

    def run(L, seed_models, x):
        models = [L.nn.Linear(3, 2) for _ in range(4)]
        for m, (w, b) in zip(models, seed_models):
            m.load_state_dict({"weight": w, "bias": b})
        params, buffers = L.func.stack_module_state(models)
        out = L.func.vmap(
            lambda p, b, a: L.func.functional_call(models[0], (p, b), (a,)), in_dims=(0, 0, None)
        )(params, buffers, x)
        return out, params["weight"].requires_grad, params["weight"].is_leaf

    seeds = [(f32(2, 3), f32(2)) for _ in range(4)]
    x = f32(5, 3)
    e = run(ember, [(to_ember(w), to_ember(b)) for w, b in seeds], to_ember(x))
    t = run(torch, [(to_torch(w), to_torch(b)) for w, b in seeds], to_torch(x))
    assert_same(e[0], t[0], check_stride=False)
    assert e[1:] == t[1:]


def test_replace_all_batch_norm_modules():
    def run(L, x):
        m = L.nn.Sequential(L.nn.Conv2d(2, 2, 1), L.nn.BatchNorm2d(2))
        L.func.replace_all_batch_norm_modules_(m)
        bn = m[1]
        return bn.running_mean is None, bn.track_running_stats, bn.num_batches_tracked is None

    assert run(ember, None) == run(torch, None)


def test_randomness():
    """randomness="different" draws per sample, "same" one draw for all; "error" refuses (ERRORS)."""
    for L in (ember, torch):
        x = L.zeros(4, 3)
        diff = L.func.vmap(lambda a: a + L.rand(3), randomness="different")(x)
        same = L.func.vmap(lambda a: a + L.rand(3), randomness="same")(x)
        drop = L.func.vmap(lambda a: L.nn.functional.dropout(a + 1, 0.5), randomness="same")(x)
        assert not bool((diff[0] == diff[1]).all()) and bool((same[0] == same[1]).all())
        assert bool((drop[0] == drop[1]).all())


def _inplace_captured(L, x, y):
    return L.func.vmap(lambda a: y.mul_(a))(x)


ERRORS = [
    ("returns_non_tensor", lambda L, x: L.func.vmap(lambda a: 3)(x), [f32(3)]),
    ("item", lambda L, x: L.func.vmap(lambda a: a.sum().item())(x), [f32(3, 2)]),
    ("control_flow", lambda L, x: L.func.vmap(lambda a: a if a.sum() > 0 else -a)(x), [f32(3, 2)]),
    ("inplace_captured", _inplace_captured, [f32(3, 4), f32(4)]),
    ("mismatched_sizes", lambda L, x, y: L.func.vmap(L.add)(x, y), [f32(3, 4), f32(5, 4)]),
    ("in_dim_out_of_range", lambda L, x: L.func.vmap(L.sin, in_dims=2)(x), [f32(3, 4)]),
    ("in_dim_non_tensor", lambda L, x: L.func.vmap(L.mul, in_dims=(0, 0))(x, 2.0), [f32(3)]),
    ("in_dims_bad_type", lambda L, x: L.func.vmap(L.sin, in_dims=[0])(x), [f32(3)]),
    ("no_inputs", lambda L, x: L.func.vmap(lambda: x)(), [f32(3)]),
    ("nothing_mapped", lambda L, x: L.func.vmap(L.sin, in_dims=None)(x), [f32(3)]),
    ("out_dims_bad", lambda L, x: L.func.vmap(L.sin, out_dims="a")(x), [f32(3)]),
    ("out_dim_none_batched", lambda L, x: L.func.vmap(L.sin, out_dims=None)(x), [f32(3)]),
    ("random_error_mode", lambda L, x: L.func.vmap(lambda a: a + L.rand(1))(x), [f32(3)]),
    ("randomness_bad", lambda L, x: L.func.vmap(L.sin, randomness="x")(x), [f32(3)]),
    ("chunk_size_bad", lambda L, x: L.func.vmap(L.sin, chunk_size=0)(x), [f32(3)]),
    ("grad_non_scalar", lambda L, x: L.func.grad(lambda a: a * 2)(x), [f32(3)]),
    ("grad_non_tensor", lambda L, x: L.func.grad(lambda a: 3)(x), [f32(3)]),
    ("grad_aux_not_tuple", lambda L, x: L.func.grad(lambda a: a.sum(), has_aux=True)(x), [f32(3)]),
    ("grad_argnums_range", lambda L, x: L.func.grad(lambda a: a.sum(), argnums=2)(x), [f32(3)]),
    ("grad_argnums_type", lambda L, x: L.func.grad(lambda a: a.sum(), argnums=1.0)(x), [f32(3)]),
    ("jvp_primals_not_tuple", lambda L, x: L.func.jvp(L.sin, x, (x,)), [f32(3)]),
    ("jvp_structure", lambda L, x: L.func.jvp(L.mul, (x, x), (x,)), [f32(3)]),
    ("jvp_non_tensor", lambda L, x: L.func.jvp(L.sin, (x, 2.0), (x, 1.0)), [f32(3)]),
    (
        "jvp_strict_independent",
        lambda L, x: L.func.jvp(lambda a: x * 2, (x.clone(),), (x,), strict=True),
        [f32(3)],
    ),
    ("jacfwd_randomness_bad", lambda L, x: L.func.jacfwd(L.sin, randomness="x")(x), [f32(3)]),
    ("vjp_aux_not_tuple", lambda L, x: L.func.vjp(lambda a: a, x, has_aux=True), [f32(3)]),
    ("stack_none", lambda L, x: L.func.stack_module_state([]), [f32(1)]),
    (
        "functional_call_repeated",
        lambda L, x: L.func.functional_call(L.nn.Linear(1, 1), ({"weight": x}, {"weight": x}), (x,)),
        [f32(1, 1)],
    ),
]


def _backward_inside(L, x):
    (x * 2).sum().backward()
    return x


def _old_style_function(L):
    class Double(L.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


# NOTE [ Refusals inside a transform ] (ember/func/_batched.py): what torch refuses while any transform runs
_TRANSFORMED = [
    ("vmap", lambda L, f, x: L.func.vmap(f)(x)),
    ("grad", lambda L, f, x: L.func.grad(lambda a: f(a).sum())(x[0])),
    ("jvp", lambda L, f, x: L.func.jvp(f, (x,), (x,))),
    ("vmap_grad", lambda L, f, x: L.func.vmap(L.func.grad(lambda a: f(a).sum()))(x)),
]
_INSIDE = [
    ("backward", lambda L, w: lambda a: _backward_inside(L, a * w)),
    ("backward_captured", lambda L, w: lambda a: (L.autograd.backward((w * 2).sum()), a * 1)[1]),
    ("requires_grad_", lambda L, w: lambda a: a.detach().requires_grad_() * 1),
    ("requires_grad_false", lambda L, w: lambda a: L.ones(3).requires_grad_(False) * a),
    ("retain_grad", lambda L, w: lambda a: (lambda b: (b.retain_grad(), b)[1])(a * w)),
    ("jacobian", lambda L, w: lambda a: L.autograd.functional.jacobian(L.sin, a).sum(0)),
    ("function_without_setup_context", lambda L, w: lambda a: _old_style_function(L).apply(a)),
]
for _t, _run in _TRANSFORMED:
    for _n, _make in _INSIDE:
        ERRORS.append((f"{_n}_inside_{_t}", lambda L, x, w, _run=_run, _make=_make: _run(L, _make(L, w), x),
                       [f32(2, 3), np.ones(3, np.float32)]))

# vmap over ops its fallback cannot run, and functions it refuses by name (all compared over the OpInfo table
# in test_func_vmap_ops.py; here the overloads and arguments that table does not reach)
ERRORS += [
    ("foreach_scalarlist", lambda L, x: L.func.vmap(lambda a: L._foreach_add([a], [1.0])[0])(x), [f32(2, 3)]),
    ("foreach_tensor", lambda L, x: L.func.vmap(lambda a: L._foreach_mul([a], L.tensor(2.0))[0])(x), [f32(2, 3)]),
    ("foreach_addcmul_tensor",
     lambda L, x: L.func.vmap(lambda a: L._foreach_addcmul([a], [a], [a], L.tensor([0.5]))[0])(x), [f32(2, 3)]),
    ("foreach_norm", lambda L, x: L.func.vmap(lambda a: L._foreach_norm([a])[0])(x), [f32(2, 3)]),
    ("foreach_lerp_scalarlist", lambda L, x: L.func.vmap(lambda a: L._foreach_lerp([a], [a], [0.5])[0])(x),
     [f32(2, 3)]),
    ("add_out", lambda L, x: L.func.vmap(lambda a: L.add(a, 1, out=L.empty(3)))(x), [f32(2, 3)]),
    ("add_out_batched", lambda L, x: L.func.vmap(lambda a, o: L.add(a, 1, out=o))(x, x.clone()), [f32(2, 3)]),
    # (out= overloads that torch names other than `<op>.out`)
    ("sum_dim_out", lambda L, x: L.func.vmap(lambda a: L.sum(a, 0, out=L.empty(())))(x), [f32(2, 3)]),
    ("prod_dim_out", lambda L, x: L.func.vmap(lambda a: L.prod(a, 0, out=L.empty(())))(x), [f32(2, 3)]),
    ("rrelu_eval", lambda L, x: L.func.vmap(lambda a: L.nn.functional.rrelu(a))(x), [f32(2, 3)]),
    ("rrelu_unbatched", lambda L, x: L.func.vmap(lambda a: L.nn.functional.rrelu(L.ones(3), training=True) + a,
                                                 randomness="different")(x), [f32(2, 3)]),
    ("rrelu_inplace", lambda L, x: L.func.vmap(lambda a: L.nn.functional.rrelu(a.clone(), inplace=True))(x),
     [f32(2, 3)]),
    ("allclose", lambda L, x: L.func.vmap(lambda a: L.tensor(L.allclose(a, a)))(x), [f32(2, 3)]),
    ("equal", lambda L, x: L.func.vmap(lambda a: L.tensor(L.equal(a, a)))(x), [f32(2, 3)]),
    ("masked_select_mask", lambda L, m: L.func.vmap(lambda k: L.masked_select(L.ones(3), k))(m),
     [np.array([[True, False, True], [False, False, True]])]),
    ("unique_dim", lambda L, x: L.func.vmap(lambda a: L.unique(a, dim=0))(x), [f32(2, 3)]),
    ("bincount_shapes", lambda L, x: L.func.vmap(L.bincount)(x), [np.array([[0, 1, 2], [0, 1, 5]])]),
    ("histogramdd_list", lambda L, x: L.func.vmap(lambda a: L.histogramdd(a.reshape(3, 1), [3]))(x),
     [f32(2, 3)]),
    ("module_init_random", lambda L, x: L.func.vmap(lambda a: L.nn.Linear(3, 2)(a))(x), [f32(2, 3)]),
    ("inplace_random_different_unbatched",
     lambda L, x: L.func.vmap(lambda a: L.ones(3).uniform_() * a, randomness="different")(x), [f32(2, 3)]),
]


@pytest.mark.parametrize("name,fn,inputs", ERRORS, ids=[e[0] for e in ERRORS])
def test_error(name, fn, inputs):
    assert_same_error(fn, *inputs)


def test_batched_tensor_autograd_attributes():
    """Inside vmap a BatchedTensor answers requires_grad / grad_fn / is_leaf as torch's wrapper does: as an
    untracked tensor, whatever its physical tensor requires, unless a grad transform runs inside the vmap."""

    def run(L, x, w):
        seen = []

        def look(t):
            seen.append((t.requires_grad, t.grad_fn is None, t.is_leaf))

        def f(a):
            look(a)
            look(a * w)
            return a * w

        L.func.vmap(f)(x)
        L.func.vmap(f)(x.detach().requires_grad_())

        def g(a):
            look(a)
            look(a * 2)
            return (a * 2).sum()

        L.func.vmap(L.func.grad(g))(x)  # grad innermost: tracked

        def h(a):
            return L.func.vmap(lambda b: (look(b), look(b * 2), b * 2)[2])(a).sum()

        L.func.grad(h)(x)  # vmap innermost: not tracked
        return seen

    x, w = f32(2, 3), f32(3)
    assert run(ember, to_ember(x), to_ember(w, True)) == run(torch, to_torch(x), to_torch(w, True))


def test_parameter_and_optimizer_under_vmap():
    """nn.Parameter of a BatchedTensor and an SGD step on it inside vmap: torch's per-sample result."""

    def run(L, x, g):
        def f(a, b):
            p = L.nn.Parameter(a.clone())
            p.grad = b
            L.optim.SGD([p], lr=0.1, momentum=0.9).step()
            return p.detach() * 1, isinstance(p, L.nn.Parameter)

        out, is_param = L.func.vmap(f, out_dims=(0, None))(x, g)
        return out, is_param

    x, g = f32(4, 3), f32(4, 3)
    (e, ep), (t, tp) = run(ember, to_ember(x), to_ember(g)), run(torch, to_torch(x), to_torch(g))
    assert ep == tp
    assert_same(e, t, check_stride=False)


def _set_data(L, a):
    u = L.zeros(3)
    u.data = L.ones(3)
    return (a * u).sum()


ERRORS_MORE = [
    ("set_data_inside_grad", lambda L, x: L.func.grad(lambda a: _set_data(L, a))(x), [f32(3)]),
    ("set_data_inside_jvp", lambda L, x: L.func.jvp(lambda a: _set_data(L, a), (x,), (x,)), [f32(3)]),
    ("jvp_returns_bool", lambda L, x: L.func.jvp(lambda a: L.equal(a, a), (x,), (x,)), [f32(3)]),
    # grad's input is a leaf that requires grad: in-place ops on it refuse, the foreach ones too
    ("foreach_inplace_inside_grad", lambda L, x: L.func.grad(lambda a: L._foreach_mul_([a], 2.0)[0].sum())(x),
     [f32(3)]),
    ("foreach_zero_inside_grad", lambda L, x: L.func.grad(lambda a: L._foreach_zero_([a])[0].sum())(x), [f32(3)]),
    ("foreach_copy_leaf", lambda L, x: L._foreach_copy_([x.clone().requires_grad_()], [x]), [f32(3)]),
    ("full_backward_hook_inside_grad", lambda L, x: L.func.grad(lambda a: _hooked(L)(a).sum())(x), [f32(3)]),
]


def _hooked(L):
    m = L.nn.Linear(3, 2)
    m.register_full_backward_hook(lambda mod, gi, go: None)
    return m


@pytest.mark.parametrize("name,fn,inputs", ERRORS_MORE, ids=[e[0] for e in ERRORS_MORE])
def test_error_more(name, fn, inputs):
    assert_same_error(fn, *inputs)


def test_untracked_outputs_give_zeros():
    """grad / vjp / jacrev of a function whose output autograd does not track (argmax, a comparison, a
    constant): zeros, as torch's transforms give, and `.data = ...` under vmap alone is allowed."""
    x = f32(2, 3)
    check(lambda L, a: L.func.grad(lambda b: b.argmax().float())(a[0]), x)
    check(lambda L, a: L.func.vmap(L.func.grad(lambda b: (b > 0).sum().float() + 0 * b.sum()))(a), x)
    check(lambda L, a: L.func.vjp(lambda b: (b > 0).float(), a)[1](L.ones(2, 3)), x)
    check(lambda L, a: L.func.jacrev(lambda b: (b > 0).float())(a[0]), x)
    check(lambda L, a: L.func.vmap(lambda b: _set_data(L, b))(a), x)
