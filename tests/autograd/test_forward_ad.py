"""Forward-mode AD (`autograd.forward_ad`) compared with torch: the dual-level API and its errors, tangents
through views and in-place ops, custom Functions with `jvp`, forward-over-reverse Hessian-vector products,
reverse-over-forward, `gradcheck(check_forward_ad=True)`, and `autograd.functional` with
`strategy="forward-mode"`. Every case is a body run under ember and torch (`helpers.same`)."""

import numpy as np
import pytest
from helpers import T, arr, same


def _fw(lib):
    return lib.autograd.forward_ad


def _tangent(lib, t):
    """The tangent of `t` as a plain tensor (None stays None)."""
    tg = _fw(lib).unpack_dual(t).tangent
    return None if tg is None else tg.detach().clone()


# ---- the API and its errors -------------------------------------------------------------------------------


def _basic(lib):
    fw = _fw(lib)
    x, t = T(lib, arr(3, 4)), T(lib, arr(3, 4, seed=1))
    with fw.dual_level() as level:
        d = fw.make_dual(x, t)
        p, tg = fw.unpack_dual(d)
        u = fw.unpack_dual(d)
        res = (level, fw._current_level, p, tg, tg is t, type(u).__name__, u._fields, d._base is x,
               fw.unpack_dual(x).tangent is None, _tangent(lib, (d * d).sum(1)))
    return res + (fw.unpack_dual(d).tangent is None, fw._current_level, fw.enter_dual_level(),
                  fw.exit_dual_level())


def _layout(lib):
    """A tangent laid out otherwise than its primal is copied into the primal's strides."""
    fw = _fw(lib)
    with fw.dual_level():
        d = fw.make_dual(T(lib, arr(4, 3)), T(lib, arr(3, 4, seed=1)).t())
        e = fw.make_dual(T(lib, arr(3, 4))[:, :3], T(lib, arr(3, 3, seed=2)))
        f = fw.make_dual(T(lib, arr(3, 4)), T(lib, arr(3, 4, seed=3, dtype=np.float64)))  # (kept as float64)
        return [(fw.unpack_dual(a).tangent.stride(), fw.unpack_dual(a).tangent) for a in (d, e, f)]


def _error(body):
    def fn(lib):
        fw = _fw(lib)
        try:
            return body(lib, fw)
        finally:
            if fw._current_level >= 0:
                fw.exit_dual_level()
    return fn


ERRORS = {
    "make_dual_outside_level": lambda lib, fw: fw.make_dual(T(lib, arr(3)), T(lib, arr(3))),
    "exit_without_level": lambda lib, fw: fw.exit_dual_level(),
    "nested_levels": lambda lib, fw: (fw.enter_dual_level(), fw.enter_dual_level()),
    "exit_wrong_level": lambda lib, fw: (fw.enter_dual_level(), fw.exit_dual_level(level=3)),
    "size_mismatch": lambda lib, fw: (fw.enter_dual_level(), fw.make_dual(T(lib, arr(3)), T(lib, arr(4)))),
    "integer_primal": lambda lib, fw: (fw.enter_dual_level(),
                                       fw.make_dual(T(lib, np.arange(3)), T(lib, arr(3)))),
    "integer_tangent": lambda lib, fw: (fw.enter_dual_level(),
                                        fw.make_dual(T(lib, arr(3)), T(lib, np.arange(3)))),
    "make_dual_bad_level": lambda lib, fw: (fw.enter_dual_level(),
                                            fw.make_dual(T(lib, arr(3)), T(lib, arr(3)), level=5)),
    "unpack_bad_level": lambda lib, fw: (fw.enter_dual_level(), fw.unpack_dual(T(lib, arr(3)), level=3)),
    "dual_of_dual": lambda lib, fw: (fw.enter_dual_level(),
                                     fw.make_dual(fw.make_dual(T(lib, arr(3)), T(lib, arr(3))), T(lib, arr(3)))),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    same(_error(ERRORS[case]))


def _printing(lib):
    fw = _fw(lib)
    with fw.dual_level():
        a = fw.make_dual(T(lib, arr(2)), T(lib, arr(2, seed=1)))
        b = fw.make_dual(T(lib, arr(3, dtype=np.float64)), T(lib, arr(3, seed=1, dtype=np.float64)))
        c = fw.make_dual(T(lib, arr(6, 7)), T(lib, arr(6, 7, seed=1)))
        return repr(a), repr(b), repr(c), repr(a.detach())


@pytest.mark.parametrize("body", [_basic, _layout, _printing], ids=["basic", "layout", "printing"])
def test_api(body):
    same(body)


# ---- views and in-place ops -------------------------------------------------------------------------------


def _views(lib):
    fw = _fw(lib)
    x, t = T(lib, arr(3, 4)), T(lib, arr(3, 4, seed=1))
    with fw.dual_level():
        d = fw.make_dual(x, t)
        v = d.view(12)[2:9].unsqueeze(0)
        vt = fw.unpack_dual(v).tangent
        shares = vt.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
        w = d.t()[1]
        return shares, _tangent(lib, v), _tangent(lib, w), fw.unpack_dual(w).tangent.stride()


def _inplace(lib):
    fw = _fw(lib)
    x, t = T(lib, arr(3, 4)), T(lib, arr(3, 4, seed=1))
    y = T(lib, arr(3, 4, seed=2))
    with fw.dual_level():
        a = fw.make_dual(x.clone(), t.clone())
        at = fw.unpack_dual(a).tangent
        a.mul_(2).sin_()
        same_tangent = fw.unpack_dual(a).tangent is at
        b = fw.make_dual(x.clone(), t.clone())
        b[1].mul_(b[0])  # in place on a view: the base's tangent changes with it
        c = y.clone()  # no tangent: an in-place op with a dual operand gives it one, on its base too
        c[1:].add_(fw.make_dual(x[1:].clone(), t[1:].clone()) * 3)
        e = fw.make_dual(x.clone(), t.clone())
        e.copy_(y)  # overwritten by a value without tangent: zero tangent
        return same_tangent, _tangent(lib, a), _tangent(lib, b), _tangent(lib, c), _tangent(lib, c[0]), \
            _tangent(lib, e)


@pytest.mark.parametrize("body", [_views, _inplace], ids=["views", "inplace"])
def test_views_and_inplace(body):
    same(body)


# ---- custom Functions --------------------------------------------------------------------------------------


def _functions(lib):
    F = lib.autograd.Function

    class Scale(F):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k, x + 1

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            return (tx * y + x * ty) * ctx.k, tx

        @staticmethod
        def backward(ctx, g1, g2):
            return g1, None, None

    class Exp(F):  # the setup_context style
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(output)

        @staticmethod
        def jvp(ctx, tx):
            out, = ctx.saved_tensors
            return tx * out

    class NoJvp(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class TwoTangents(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, tx):
            return tx, tx
    return Scale, Exp, NoJvp, TwoTangents


def _function_jvp(lib):
    fw = _fw(lib)
    Scale, Exp, NoJvp, _ = _functions(lib)
    x, y = T(lib, arr(3)), T(lib, arr(3, seed=1))
    with fw.dual_level():
        d = fw.make_dual(x, T(lib, arr(3, seed=2)))
        a, b = Scale.apply(d, y, 3.0)
        e = Exp.apply(d)
        plain = NoJvp.apply(x)  # no input with a tangent: jvp is not needed
        return _tangent(lib, a), _tangent(lib, b), _tangent(lib, e), a, e, fw.unpack_dual(plain).tangent is None


def _function_errors(which):
    def body(lib):
        fw = _fw(lib)
        cls = _functions(lib)[which]
        with fw.dual_level():
            return cls.apply(fw.make_dual(T(lib, arr(3)), T(lib, arr(3, seed=2))))
    return body


def _function_dirty(lib):
    """An in-place Function (mark_dirty): its jvp updates the input's tangent in place, as torch asks."""
    fw = _fw(lib)

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def jvp(ctx, tx):
            tx.mul_(2)
            return tx
    with fw.dual_level():
        t = T(lib, arr(3, seed=1))
        d = fw.make_dual(T(lib, arr(3)), t)
        y = Double.apply(d)
        return y is d, _tangent(lib, y), fw.unpack_dual(y).tangent is t


@pytest.mark.parametrize("body", [_function_jvp, _function_dirty, _function_errors(2), _function_errors(3)],
                         ids=["jvp", "dirty", "no_jvp", "wrong_count"])
def test_custom_function(body):
    same(body)


# ---- forward over reverse, reverse over forward ------------------------------------------------------------


def _model(lib, x, w, c):
    F = lib.nn.functional
    h = F.conv2d(x, c, padding=1).tanh()
    h = F.layer_norm(h, h.shape[-2:])
    h = (h.flatten(1) @ w).softmax(-1)
    return (h * h.log_softmax(-1)).sum() + (x.sigmoid() ** 3).mean() + F.gelu(h).sum()


def _hvp(lib):
    """H v by forward-over-reverse: the gradient computed inside a dual level carries H v as its tangent."""
    fw = _fw(lib)
    x = T(lib, arr(2, 1, 4, 4, dtype=np.float64), requires_grad=True)
    w = T(lib, arr(16, 5, seed=1, dtype=np.float64))
    c = T(lib, arr(2, 1, 3, 3, seed=2, dtype=np.float64))
    v = T(lib, arr(2, 1, 4, 4, seed=3, dtype=np.float64))
    with fw.dual_level():
        xd = fw.make_dual(x, v)
        g, = lib.autograd.grad(_model(lib, xd, w, c), x, create_graph=True)
        return g, _tangent(lib, g)


def _reverse_over_forward(lib):
    """The JVP is differentiable: its gradient with respect to the primal and to the tangent."""
    fw = _fw(lib)
    x = T(lib, arr(3, 4, dtype=np.float64), requires_grad=True)
    t = T(lib, arr(3, 4, seed=1, dtype=np.float64), requires_grad=True)
    w = T(lib, arr(4, 2, seed=2, dtype=np.float64))
    with fw.dual_level():
        xd = fw.make_dual(x, t)
        y = (xd @ w).tanh().sin() * xd[:, 1:3].exp()
        jv = fw.unpack_dual(y).tangent
    gx, gt = lib.autograd.grad((jv * jv).sum(), (x, t))
    return jv.detach(), gx, gt


@pytest.mark.parametrize("body", [_hvp, _reverse_over_forward], ids=["hvp", "reverse_over_forward"])
def test_composition(body):
    same(body)


# ---- gradcheck and autograd.functional ---------------------------------------------------------------------


def _gradchecks(lib):
    x = T(lib, arr(2, 3, dtype=np.float64), requires_grad=True)
    w = T(lib, arr(3, 3, seed=1, dtype=np.float64))

    def f(a):
        return (a @ w).softmax(-1) * a.exp()
    return (lib.autograd.gradcheck(f, (x,), check_forward_ad=True),
            lib.autograd.gradcheck(f, (x,), check_forward_ad=True, check_backward_ad=False),
            lib.autograd.gradgradcheck(f, (x,), check_fwd_over_rev=True))


def _gradcheck_wrong_jvp(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def jvp(ctx, tx):
            return tx * 3

        @staticmethod
        def backward(ctx, g):
            return g * 2
    x = T(lib, arr(2, dtype=np.float64), requires_grad=True)
    try:
        lib.autograd.gradcheck(Bad.apply, (x,), check_forward_ad=True)
    except Exception as e:  # noqa: BLE001 - the class and first line are compared
        return type(e).__name__, str(e).split("\n")[0]
    return "passed"


def _functional(lib):
    fn = lib.autograd.functional
    x, y = T(lib, arr(3, 2, dtype=np.float64)), T(lib, arr(2, seed=1, dtype=np.float64))

    def f(a, b):
        return (a * b).sin(), (a @ b).exp()
    return (fn.jacobian(f, (x, y), vectorize=True, strategy="forward-mode"),
            fn.jacobian(lambda a: a.tanh(), x, vectorize=True, strategy="forward-mode"),
            fn.hessian(lambda a: (a.sin() * a).sum(), x, vectorize=True, outer_jacobian_strategy="forward-mode"))


FUNCTIONAL_ERRORS = {
    "not_vectorized": lambda fn, x: fn.jacobian(lambda a: a * 2, x, strategy="forward-mode"),
    "strict": lambda fn, x: fn.jacobian(lambda a: a * 2, x, strict=True, vectorize=True, strategy="forward-mode"),
    "create_graph": lambda fn, x: fn.jacobian(lambda a: a * 2, x, create_graph=True, vectorize=True,
                                              strategy="forward-mode"),
    "hessian_not_vectorized": lambda fn, x: fn.hessian(lambda a: a.sum(), x,
                                                       outer_jacobian_strategy="forward-mode"),
}


@pytest.mark.parametrize("body", [_gradchecks, _gradcheck_wrong_jvp, _functional],
                         ids=["gradcheck", "gradcheck_wrong_jvp", "functional"])
def test_tools(body):
    same(body)


@pytest.mark.parametrize("case", sorted(FUNCTIONAL_ERRORS))
def test_functional_errors(case):
    same(lambda lib: FUNCTIONAL_ERRORS[case](lib.autograd.functional, T(lib, arr(3, dtype=np.float64))))


def test_no_mode_without_level():
    """Outside a dual level nothing of forward AD is on the dispatcher's stack (it costs nothing)."""
    import ember
    from ember import _dispatch

    before = list(_dispatch._modes)
    with ember.autograd.forward_ad.dual_level():
        assert len(_dispatch._modes) == len(before) + 1
    assert _dispatch._modes == before


# ---- ops the OpInfo table does not reach with a tangent ------------------------------------------------------


def _dual(lib, *shape, seed=0, low=None):
    a = arr(*shape, seed=seed, dtype=np.float64)
    if low is not None:
        a = np.abs(a) + low
    return _fw(lib).make_dual(T(lib, a), T(lib, arr(*shape, seed=seed + 10, dtype=np.float64)))


REACHED_HERE = {
    "samplers_in_place": lambda lib: [_tangent(lib, f(_dual(lib, 3, 4).clone())) for f in (
        lambda x: x.uniform_(), lambda x: x.normal_(), lambda x: x.cauchy_(), lambda x: x.exponential_(),
        lambda x: x.geometric_(0.5), lambda x: x.log_normal_(), lambda x: x.random_(), lambda x: x.random_(5),
        lambda x: x.random_(2, 5), lambda x: x.bernoulli_(0.5))],
    "bernoulli_tensor": lambda lib: _tangent(lib, T(lib, arr(3, dtype=np.float64)).bernoulli_(
        _dual(lib, 3, low=0.1) / 10)),
    "poisson": lambda lib: _tangent(lib, lib.poisson(_dual(lib, 3, low=1.0))),
    "scalar_overloads": lambda lib: [_tangent(lib, y) for y in (
        lib.copysign(_dual(lib, 4), -1.5), lib.fmod(_dual(lib, 4), 0.7), lib.remainder(_dual(lib, 4), 0.7),
        lib.xlogy(2.0, _dual(lib, 4, low=0.5)), lib.special.xlog1py(2.0, _dual(lib, 4, low=0.5)),
        lib.special.zeta(2.5, _dual(lib, 4, low=1.0)))],
    "rounding_division": lambda lib: [_tangent(lib, lib.div(_dual(lib, 4), _dual(lib, 4, seed=1, low=0.5),
                                                            rounding_mode=m)) for m in ("floor", "trunc")],
    "unbind": lambda lib: [_tangent(lib, y) for y in _dual(lib, 3, 2).unbind(1)],
    "geqrf": lambda lib: [_tangent(lib, y) for y in lib.geqrf(_dual(lib, 4, 3))],
    "ldl": lambda lib: [_tangent(lib, y) for y in lib.linalg.ldl_factor_ex(
        (lambda a: a + a.mT)(_dual(lib, 3, 3)))[:1]],
}


@pytest.mark.parametrize("case", sorted(REACHED_HERE))
def test_ops_outside_the_table(case):
    def body(lib):
        with _fw(lib).dual_level():
            lib.manual_seed(0)
            return REACHED_HERE[case](lib)
    same(body)
