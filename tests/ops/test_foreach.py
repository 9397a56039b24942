"""torch._foreach_* against torch: values, dtypes, in-place writes and version bumps, errors; one dispatch each."""

import numpy as np
import pytest
from compare import check

import ember
from ember._modes import pop_mode, push_mode, redispatch, redispatch_inplace

R = np.random.default_rng(0)
F = [np.asarray(R.standard_normal(s), np.float32) for s in ((3,), (2, 3), ())]
G = [np.asarray(R.standard_normal(s), np.float32) for s in ((3,), (2, 3), ())]
P = [np.asarray(np.abs(R.standard_normal(s)) + 0.5, np.float32) for s in ((3,), (2, 3), ())]
D = [R.standard_normal(s) for s in ((3,), (2,))]  # float64
NAN = [np.array([np.nan, -np.inf, np.inf, 0.0, -0.5, 0.5], np.float32),
       np.asarray(R.standard_normal((2, 3)), np.float32)]
H = [np.asarray(R.standard_normal(s), np.float16) for s in ((4,), (2, 2))]
N = [np.arange(3, dtype=np.int64), np.arange(4, dtype=np.int64).reshape(2, 2)]


def _versions(lib, ts, out):
    """The result plus each input tensor's version (in-place foreach ops bump each tensor once)."""
    return out, [t._version for t in ts]


CASES = {
    "add_scalar": (lambda lib, a: lib._foreach_add(a, 2.5), F),
    "add_scalar_int": (lambda lib, a: lib._foreach_add(a, 2.5), N),
    "add_list_alpha": (lambda lib, a, b: lib._foreach_add(a, b, alpha=-0.3), F, G),
    "add_scalarlist": (lambda lib, a: lib._foreach_add(a, [1.0, -2.0, 3]), F),
    "add_tensor": (lambda lib, a, s: lib._foreach_add(a, s), F, np.array(2.0, np.float32)),
    "add_": (lambda lib, a, b: _versions(lib, a, lib._foreach_add_(a, b, alpha=2)), F, G),
    "add_int_float_error": (lambda lib, a: lib._foreach_add_(a, 1.5), N),
    "sub_": (lambda lib, a: _versions(lib, a, lib._foreach_sub_(a, 0.25)), F),
    "mul_": (lambda lib, a, b: _versions(lib, a, lib._foreach_mul_(a, b)), F, G),
    "mul_mixed": (lambda lib, a, b: lib._foreach_mul(a, b), D, [np.ones(3, np.float32), np.ones(2, np.float32)]),
    "div": (lambda lib, a, b: lib._foreach_div(a, b), F, P),
    "div_int": (lambda lib, a: lib._foreach_div(a, 2), N),
    "div_": (lambda lib, a, b: _versions(lib, a, lib._foreach_div_(a, b)), F, P),
    "maximum_": (lambda lib, a, b: _versions(lib, a, lib._foreach_maximum_(a, b)), F, G),
    "minimum": (lambda lib, a: lib._foreach_minimum(a, 0.1), F),
    "clamp_min_": (lambda lib, a: _versions(lib, a, lib._foreach_clamp_min_(a, -0.2)), NAN),
    "clamp_max_": (lambda lib, a: _versions(lib, a, lib._foreach_clamp_max_(a, 0.3)), NAN),
    "clamp_min_list": (lambda lib, a, b: lib._foreach_clamp_min(a, b), F, G),
    "clamp_max_half": (lambda lib, a: _versions(lib, a, lib._foreach_clamp_max_(a, 0.3)), H),
    "div_zero_": (lambda lib, a: _versions(lib, a, lib._foreach_div_(a, 0.0)), NAN),
    "mul_0d_": (lambda lib, a, s: _versions(lib, a, lib._foreach_mul_(a, s)), D, np.array(0.5, np.float32)),
    "pow": (lambda lib, a: lib._foreach_pow(a, 2), P),
    "sqrt": (lambda lib, a: lib._foreach_sqrt(a), P),
    "sqrt_int": (lambda lib, a: lib._foreach_sqrt(a), N),
    "sqrt_": (lambda lib, a: _versions(lib, a, lib._foreach_sqrt_(a)), P),
    "neg": (lambda lib, a: lib._foreach_neg(a), F),
    "neg_": (lambda lib, a: _versions(lib, a, lib._foreach_neg_(a)), F),
    "abs_exp_sign_reciprocal": (lambda lib, a: (lib._foreach_abs(a), lib._foreach_exp(a), lib._foreach_sign(a),
                                                lib._foreach_reciprocal(a)), F),
    "addcmul_": (lambda lib, a, b, c: _versions(lib, a, lib._foreach_addcmul_(a, b, c, value=0.5)), F, G, P),
    "addcmul_scalarlist": (lambda lib, a, b, c: lib._foreach_addcmul(a, b, c, [0.5, 2.0, -1.0]), F, G, P),
    "addcdiv_": (lambda lib, a, b, c: _versions(lib, a, lib._foreach_addcdiv_(a, b, c, value=-0.1)), F, G, P),
    "addcdiv_tensor": (lambda lib, a, b, c, v: lib._foreach_addcdiv(a, b, c, v), F, G, P,
                       np.array([1.0, 2.0, 3.0], np.float32)),
    "addcdiv_int_error": (lambda lib, a, b: lib._foreach_addcdiv(a, b, b), [F[0]], [N[0]]),
    "lerp_": (lambda lib, a, b: _versions(lib, a, lib._foreach_lerp_(a, b, 0.1)), F, G),
    "lerp_high_weight": (lambda lib, a, b: lib._foreach_lerp(a, b, 0.7), F, G),
    "lerp_tensors": (lambda lib, a, b, w: lib._foreach_lerp(a, b, w), F, G, P),
    "zero_": (lambda lib, a: _versions(lib, a, lib._foreach_zero_(a)), F),
    "copy_": (lambda lib, a, b: _versions(lib, a, lib._foreach_copy_(a, b)), F, G),
    "norm": (lambda lib, a: lib._foreach_norm(a), F),
    "norm_ord": (lambda lib, a: (lib._foreach_norm(a, 1), lib._foreach_norm(a, float("inf"))), D),
    "norm_int_error": (lambda lib, a: lib._foreach_norm(a), N),
    "empty_error": (lambda lib: lib._foreach_add_([], 1.0),),
    "length_error": (lambda lib, a, b: lib._foreach_add_(a, b), F, G[:2]),
    "scalarlist_length_error": (lambda lib, a: lib._foreach_mul(a, [1.0]), F),
    "broadcast_error": (lambda lib, a, b: lib._foreach_add_(a, b), F[:1], G[1:2]),
    "add_broadcast_error": (lambda lib, a, b: lib._foreach_add(a, b), F[:2], G[1:2] + F[:1]),
    "add_broadcast": (lambda lib, a, b: lib._foreach_add(a, b), [F[0], F[2]], [G[1], G[0]]),
    "tensor_not_0d_error": (lambda lib, a, s: lib._foreach_mul_(a, s), F, np.ones(2, np.float32)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_foreach_matches_torch(name):
    fn, *inputs = CASES[name]
    check(fn, *[[x.copy() for x in v] if isinstance(v, list) else v for v in inputs])


def test_in_place_lists_do_not_warn():
    """Under warnings-as-errors an in-place foreach op neither warns nor updates any tensor twice (NOTE [ Foreach
    in place ])."""
    import warnings

    a = [ember.tensor([1.0, 0.0, -1.0]), ember.tensor([2.0, 0.0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember._foreach_div_(a, 0.0)
        ember._foreach_mul_(a, 2.0)
    np.testing.assert_array_equal(np.concatenate([t.numpy() for t in a]), [np.inf, np.nan, -np.inf, np.inf, np.nan])
    assert [t._version for t in a] == [2, 2]


class _Recorder:
    def __init__(self):
        self.names = []

    def dispatch(self, op, inputs, params):
        self.names.append(op.name)
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.names.append(op.name)
        return redispatch_inplace(op, self_, inputs, params)


def test_one_dispatch_per_list():
    ts = [ember.ones(3) for _ in range(50)]
    rec = _Recorder()
    push_mode(rec)
    try:
        ember._foreach_add_(ts, ts, alpha=0.5)
        ember._foreach_norm(ts)
    finally:
        pop_mode(rec)
    assert rec.names == ["_foreach_add", "_foreach_linalg_vector_norm"]
