"""vmap over ops whose Python wrappers read their inputs' data, and vmap's refusals, against torch.vmap.

The OpInfo sweep (test_func_vmap_ops.py) batches each op's first samples; these cases add what it does not
reach: the per-sample checks that must fail as torch's kernels fail (NOTE [ Composites that read data
under vmap ] in ember/_ops/_util.py), nested vmaps and gradients through those composites, torch's rule
semantics a user can see (fill_ copies, batch norm's running statistics, lu_unpack's unused outputs), the
in-place casting check, and autograd.grad inside vmap (NOTE [ autograd.grad inside vmap ] in
ember/func/_batched.py). Every refusal is compared by class and message.
"""

import numpy as np
import pytest
from compare import assert_same_error, check

R = np.random.default_rng(22)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _vmap(L, f, *args, **kw):
    return L.func.vmap(f, **kw)(*args)


def _lu(L, a, pivots=True, data=True):
    lu, piv = L.linalg.lu_factor(a)
    return _vmap(L, lambda x, p: tuple(L.lu_unpack(x, p, data, pivots)), lu, piv)


def _bn_stats(L, x, m, v, dim):
    def f(a, mm, vv):
        L.nn.functional.batch_norm(a, mm, vv, training=True, momentum=0.3)
        return mm, vv

    return _vmap(L, f, x, m.clone(), v.abs().clone(), in_dims=dim)


def _bn_stats_in_place(L, x, m, v):
    """The caller's own running statistics, after vmap: updated where the batch is their first dim."""
    m, v = m.clone(), v.abs().clone()
    _vmap(L, lambda a, mm, vv: L.nn.functional.batch_norm(a, mm, vv, training=True), x, m, v)
    mt, vt = m.t().contiguous().t(), v.t().contiguous().t()  # (the batch last: torch updates a copy)
    _vmap(L, lambda a, mm, vv: L.nn.functional.batch_norm(a, mm, vv, training=True), x, mt, vt,
          in_dims=(0, 0, 0))
    return m, v, mt, vt


def _grad_inside(L, x, w):
    w = w.clone().requires_grad_()
    return _vmap(L, lambda a: L.autograd.grad((a * w).sin().sum(), w)[0], x)


def _grad_of_grad_inside(L, x, w):
    """autograd.grad within a grad transform inside vmap differentiates at the transform's level."""
    def f(a):
        y = (a * w).sin().sum()
        (g,) = L.autograd.grad(y, a, create_graph=True)
        return (g * g).sum()

    return _vmap(L, L.func.grad(f), x)


RESULTS = [
    ("take_nested", lambda L, x, i: _vmap(L, lambda a, j: _vmap(L, L.take, a, j), x, i),
     [f32(2, 3, 4), np.array([[[0, 11], [3, -1]]] * 2)]),
    ("quantile_q_batched", lambda L, x, q: _vmap(L, lambda qq: L.quantile(x, qq, dim=1), q),
     [f32(3, 5), np.array([[0.1, 0.9], [0.5, 0.25]], np.float32)]),
    ("nanquantile_grad", lambda L, x: L.func.vmap(L.func.grad(lambda a: L.nanquantile(a, 0.3)))(x),
     [f32(4, 6)]),
    ("lstsq_batched_b", lambda L, a, b: _vmap(L, lambda bb: L.linalg.lstsq(a, bb).solution, b,),
     [f32(4, 3), f32(2, 4, 2)]),
    ("histogram_range", lambda L, x: _vmap(L, lambda a: tuple(L.histogram(a, 4, range=(-1.0, 1.0))), x),
     [f32(3, 10)]),
    ("nonzero_static_padded", lambda L, x: _vmap(L, lambda a: L.nonzero_static(a, size=6, fill_value=7), x > 0),
     [f32(3, 2, 2)]),
    ("fill_copies", lambda L, x, v: _vmap(L, lambda a, b: a.fill_(b), x.to(L.int8), v * 1e4),
     [f32(2, 3), f32(2)]),
    ("fill_unbatched_value", lambda L, x: _vmap(L, lambda a: a.fill_(L.tensor(1e4)), x.to(L.int8)), [f32(2, 3)]),
    ("lu_unpack_no_pivots", lambda L, a: _lu(L, a, pivots=False), [f32(2, 3, 3)]),
    ("lu_unpack_no_data", lambda L, a: _lu(L, a, data=False), [f32(2, 3, 3)]),
    ("batch_norm_stats_last", lambda L, x, m, v: _bn_stats(L, x, m, v, -1), [f32(4, 3, 2), f32(3, 2), f32(3, 2)]),
    ("batch_norm_stats_first", lambda L, x, m, v: _bn_stats(L, x, m, v, 0), [f32(2, 4, 3), f32(2, 3), f32(2, 3)]),
    ("batch_norm_caller_stats", _bn_stats_in_place, [f32(2, 4, 3), f32(2, 3), f32(2, 3)]),
    ("fill_batched_not_0d", lambda L, x, v: _vmap(L, lambda a, b: a.fill_(b), x, v), [f32(2, 3), f32(2, 3)]),
    ("inplace_same_kind", lambda L, x, y: _vmap(L, lambda a, b: a.add_(b), x, y.double()), [f32(2, 3), f32(2, 3)]),
    ("inplace_copy_casts", lambda L, x, y: _vmap(L, lambda a, b: a.copy_(b), x.long(), y), [f32(2, 3), f32(2, 3)]),
    ("grad_of_grad_inside", _grad_of_grad_inside, [f32(3, 4), f32(4)]),
    # the *_copy ops that return several tensors: a tuple, under vmap too (the flag is True in both)
    ("unbind_copy_tuple", lambda L, x: (lambda r: (L.tensor(isinstance(r, tuple)), r))(
        _vmap(L, lambda a: L.unbind_copy(a, 1), x)), [f32(2, 3, 4)]),
    ("split_copy_tuple", lambda L, x: (lambda r: (L.tensor(isinstance(r, tuple)), r))(
        L.split_with_sizes_copy(x, [1, 2], 1)), [f32(2, 3, 4)]),
]


@pytest.mark.parametrize("name,fn,inputs", RESULTS, ids=[r[0] for r in RESULTS])
def test_result(name, fn, inputs):
    check(fn, *inputs, check_stride=False)


def test_composite_gradients():
    """Gradients flow through the per-sample path to the mapped inputs."""
    check(lambda L, x, q: _vmap(L, lambda a: L.quantile(a, q, dim=0), x), f32(3, 5, 2),
          np.array([0.2, 0.7], np.float32), grad=[0], check_stride=False)
    check(lambda L, a, b: _vmap(L, lambda aa, bb: L.linalg.lstsq(aa, bb).solution, a, b),
          f32(2, 4, 3), f32(2, 4, 2), grad=True, check_stride=False, rtol=1e-4, atol=1e-5)


ERRORS = [
    ("take_out_of_range", lambda L, x, i: _vmap(L, L.take, x, i), [f32(2, 3, 4), np.array([[0, 5], [1, 20]])]),
    ("quantile_q_range", lambda L, x, q: _vmap(L, lambda qq: L.quantile(x, qq), q),
     [f32(5), np.array([[0.1], [1.5]], np.float32)]),
    ("normal_error_mode", lambda L, s: _vmap(L, lambda a: L.normal(0.0, a), s.abs()), [f32(2, 3)]),
    ("normal_negative_std", lambda L, s: _vmap(L, lambda a: L.normal(0.0, a), s, randomness="different"),
     [f32(2, 3)]),
    ("normal_same_batched", lambda L, s: _vmap(L, lambda a: L.normal(a, a.abs()), s, randomness="same"),
     [f32(2, 3)]),
    ("bernoulli_same_batched", lambda L, p: _vmap(L, L.bernoulli, p.abs() / 4, randomness="same"), [f32(2, 3)]),
    ("histogram_not_finite", lambda L, x: _vmap(L, lambda a: L.histogram(a / 0, 3), x), [f32(2, 5)]),
    ("fill_unbatched_self", lambda L, v: _vmap(L, lambda b: L.zeros(3).fill_(b), v), [f32(2)]),
    ("fill_unbatched_not_0d", lambda L, x, v: _vmap(L, lambda a: a.fill_(v[0]), x), [f32(2, 3), f32(2, 3)]),
    ("fill_batched_mismatch", lambda L, x, v: _vmap(L, lambda a, b: a.fill_(b), x, v), [f32(2, 3), f32(2, 2)]),
    ("as_strided_scatter", lambda L, x: _vmap(L, lambda a: L.as_strided_scatter(a, a[:2], (2,), (1,)), x),
     [f32(2, 4)]),
    ("as_strided_scatter_src", lambda L, x, s: _vmap(L, lambda b: L.as_strided_scatter(x, b, (2,), (1,)), s),
     [f32(4), f32(2, 2)]),
    ("batch_norm_unbatched_stats",
     lambda L, x: _vmap(L, lambda a: L.nn.functional.batch_norm(a, L.zeros(3), L.ones(3), training=True), x),
     [f32(2, 4, 3)]),
    ("inplace_float_into_long", lambda L, x: _vmap(L, lambda a: a.add_(1.5), x.long()), [f32(2, 3)]),
    ("inplace_tensor_into_long", lambda L, x, y: _vmap(L, lambda a, b: a.mul_(b), x.long(), y),
     [f32(2, 3), f32(2, 3)]),
    ("inplace_unary_into_long", lambda L, x: _vmap(L, lambda a: a.exp_(), x.long()), [f32(2, 3)]),
    ("inplace_long_into_bool", lambda L, x: _vmap(L, lambda a: a.add_(1), x > 0), [f32(2, 3)]),
    ("grad_wrt_unbatched", _grad_inside, [f32(3, 4), f32(4)]),
    ("grad_wrt_batched", lambda L, x: _vmap(L, lambda a: L.autograd.grad(a.sin().sum(), a)[0],
                                            x.clone().requires_grad_()), [f32(3, 4)]),
]


@pytest.mark.parametrize("name,fn,inputs", ERRORS, ids=[e[0] for e in ERRORS])
def test_error(name, fn, inputs):
    assert_same_error(fn, *inputs)
