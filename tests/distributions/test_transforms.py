"""ember.distributions.transforms, constraints and the biject_to / transform_to registries, held to torch.

TRANSFORMS gives each transform a constructor and an input in its domain; every row is run forward,
inverted, and differentiated (log_abs_det_jacobian), with the gradients of all three in the input, and its
attributes (domain, codomain, bijective, sign, event_dim, shapes, repr, caching, equality) compared.
"""

import pickle

import numpy as np
import pytest
from compare import assert_same_error, check

_R = np.random.default_rng(11)


def _real(shape, lo=-1.5, hi=1.5):
    return _R.uniform(lo, hi, shape)


def _t(name, *args, **kw):
    return lambda lib: getattr(lib.distributions.transforms, name)(*args, **kw)


def _text(lib, obj):
    return repr(obj).replace(lib.__name__ + ".", "")


TRANSFORMS = [
    ("Exp", _t("ExpTransform"), _real((2, 3))),
    ("Sigmoid", _t("SigmoidTransform"), _real((2, 3))),
    ("Tanh", _t("TanhTransform"), _real((2, 3))),
    ("Softplus", _t("SoftplusTransform"), _real((2, 3))),
    ("Abs", _t("AbsTransform"), _real((2, 3), 0.1, 2)),
    ("Power", lambda lib: lib.distributions.transforms.PowerTransform(lib.tensor(2.5, dtype=lib.float64)),
     _real((2, 3), 0.2, 2)),
    ("Affine", _t("AffineTransform", 1.5, -2.0), _real((2, 3))),
    ("Affine_tensor", lambda lib: lib.distributions.transforms.AffineTransform(
        lib.tensor([1.0, -1.0, 0.5], dtype=lib.float64), lib.tensor([2.0, 0.5, -3.0], dtype=lib.float64)),
     _real((2, 3))),
    ("Affine_event", lambda lib: lib.distributions.transforms.AffineTransform(
        0.5, lib.tensor([2.0, 0.5, -3.0], dtype=lib.float64), event_dim=1), _real((2, 3))),
    ("StickBreaking", _t("StickBreakingTransform"), _real((2, 3))),
    ("Softmax", _t("SoftmaxTransform"), _real((2, 3))),
    ("LowerCholesky", _t("LowerCholeskyTransform"), _real((2, 3, 3))),
    ("PositiveDefinite", _t("PositiveDefiniteTransform"), _real((2, 3, 3))),
    ("CorrCholesky", _t("CorrCholeskyTransform"), _real((2, 6))),
    ("Reshape", _t("ReshapeTransform", (2, 3), (3, 2)), _real((4, 2, 3))),
    ("Compose", lambda lib: lib.distributions.transforms.ComposeTransform(
        [lib.distributions.transforms.ExpTransform(),
         lib.distributions.transforms.AffineTransform(1.0, 3.0)]),
     _real((2, 3))),
    ("Compose_event", lambda lib: lib.distributions.transforms.ComposeTransform(
        [lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.StickBreakingTransform()]),
     _real((2, 3))),
    ("identity", lambda lib: lib.distributions.transforms.identity_transform, _real((2, 3))),
    ("Independent", lambda lib: lib.distributions.transforms.IndependentTransform(
        lib.distributions.transforms.SigmoidTransform(), 1), _real((2, 3))),
    ("Inverse", lambda lib: lib.distributions.transforms.SigmoidTransform().inv, _real((2, 3), 0.1, 0.9)),
    ("Cat", lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.TanhTransform()],
        dim=1, lengths=[1, 2]), _real((2, 3))),
    ("Cat_event", lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.StickBreakingTransform()],
        dim=-1, lengths=[1, 2]), _real((2, 3))),
    ("Stack", lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.transforms.ExpTransform(), lib.distributions.transforms.SoftplusTransform(),
         lib.distributions.transforms.AffineTransform(1.0, 2.0)], dim=1), _real((2, 3))),
    ("CumulativeDistribution", lambda lib: lib.distributions.transforms.CumulativeDistributionTransform(
        lib.distributions.Normal(lib.tensor(0.5, dtype=lib.float64), 2.0)), _real((2, 3))),
]

_NOT_BIJECTIVE = {"Abs", "Softmax", "LowerCholesky", "PositiveDefinite"}


@pytest.mark.parametrize("what", ["forward", "inverse", "log_abs_det_jacobian"])
@pytest.mark.parametrize("row", TRANSFORMS, ids=lambda r: r[0])
def test_transform_values_and_gradients(row, what):
    name, make, x = row
    if what == "inverse" and name in ("Abs", "Softmax"):
        x = np.abs(x) / np.abs(x).sum(-1, keepdims=True) if name == "Softmax" else np.abs(x)

    def fn(lib, x):
        t = make(lib)
        y = t(x)
        if what == "forward":
            return y
        if what == "inverse":
            return t.inv(y.detach().requires_grad_()) if name not in _NOT_BIJECTIVE else t.inv(x)
        return t.log_abs_det_jacobian(x, y)
    check(fn, x, grad=[0], rtol=1e-6, atol=1e-7, check_stride=False)


def _attrs(lib, t, x):
    out = [_text(lib, t), _text(lib, t.inv), t.bijective, _text(lib, t.domain), _text(lib, t.codomain),
           t.domain.event_dim, t.codomain.event_dim, t.forward_shape(x.shape),
           t.inv.forward_shape(t(x).shape),
           t == t, t.inv.inv is t, t.inv == t.inv]
    for attr in ("sign", "event_dim"):
        try:
            out.append(getattr(t, attr))
        except (NotImplementedError, ValueError) as e:
            out.append(type(e).__name__ + str(e).replace(lib.__name__ + ".", ""))
    return out


@pytest.mark.parametrize("row", TRANSFORMS, ids=lambda r: r[0])
def test_transform_attributes(row):
    name, make, x = row
    check(lambda lib, x: _attrs(lib, make(lib), x), x, check_stride=False)


@pytest.mark.parametrize("row", [r for r in TRANSFORMS if r[0] not in ("identity", "CumulativeDistribution")],
                         ids=lambda r: r[0])
def test_caching_returns_the_cached_input(row):
    name, make, x = row

    def fn(lib, x):
        t = make(lib).with_cache(1)
        y = t(x)
        return t.inv(y) is x, t(x) is y, t._cache_size, make(lib)(x) is make(lib)(x)
    check(fn, x)


@pytest.mark.parametrize("row", TRANSFORMS, ids=lambda r: r[0])
def test_transforms_pickle(row):
    name, make, x = row

    def fn(lib, x):
        t = make(lib)
        return pickle.loads(pickle.dumps(t))(x) if name != "CumulativeDistribution" else t(x)
    check(fn, x, rtol=1e-6, atol=1e-7, check_stride=False)


TRANSFORM_ERRORS = [
    ("cache_size", lambda lib: lib.distributions.ExpTransform(cache_size=2)),
    ("sign", lambda lib: lib.distributions.transforms.Transform().sign),
    ("event_dim", lambda lib: lib.distributions.transforms.CorrCholeskyTransform().event_dim),
    ("with_cache", lambda lib: type("MyTransform", (lib.distributions.transforms.Transform,), {
        "__init__": lambda self, cache_size=0:
            lib.distributions.transforms.Transform.__init__(self, cache_size)})().with_cache(1)),
    ("reshape", lambda lib: lib.distributions.transforms.ReshapeTransform((2, 3), (4,))),
    ("reshape_shape", lambda lib: lib.distributions.transforms.ReshapeTransform((2, 3), (6,))
     .forward_shape((3, 2))),
    ("reshape_dims", lambda lib: lib.distributions.transforms.ReshapeTransform((2, 3), (6,))
     .inverse_shape(())),
    ("corr_shape", lambda lib: lib.distributions.transforms.CorrCholeskyTransform().forward_shape((5,))),
    ("corr_square", lambda lib: lib.distributions.transforms.CorrCholeskyTransform().inverse_shape((2, 3))),
    ("stick_shape", lambda lib: lib.distributions.transforms.StickBreakingTransform().forward_shape(())),
    ("independent_dims", lambda lib: lib.distributions.transforms.IndependentTransform(
        lib.distributions.ExpTransform(), 2)(lib.zeros(3))),
    ("cat_lengths", lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.ExpTransform()], 0, [1, 2])),
    ("cat_size", lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.ExpTransform()] * 2, 0, [1, 2])(lib.zeros(4))),
    ("cat_dim", lambda lib: lib.distributions.transforms.CatTransform([lib.distributions.ExpTransform()], 2)(
        lib.zeros(1))),
    ("stack_size", lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.ExpTransform()] * 2, 0)(lib.zeros(3))),
    ("stack_types", lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.ExpTransform(), 1])),
    ("no_inverse", lambda lib: lib.distributions.transforms.Transform().inv(lib.zeros(2))),
]


@pytest.mark.parametrize("case", TRANSFORM_ERRORS, ids=lambda c: c[0])
def test_transform_errors_are_torchs(case):
    assert_same_error(case[1])


# ---- constraints ------------------------------------------------------------------------------------

def _c(expr):
    return lambda lib: eval(expr, {"c": lib.distributions.constraints, "lib": lib})  # noqa: S307 - test table


_M = _real((4, 3, 3))
_SPD = _M @ np.swapaxes(_M, -1, -2) + 0.5 * np.eye(3)

CONSTRAINTS = [
    ("real", _c("c.real"), np.array([0.0, np.nan, np.inf, -1.0])),
    ("boolean", _c("c.boolean"), np.array([0.0, 1.0, 0.5, 2.0])),
    ("positive", _c("c.positive"), np.array([0.0, 1.0, -0.5, 2.0])),
    ("nonnegative", _c("c.nonnegative"), np.array([0.0, 1.0, -0.5, 2.0])),
    ("greater_than", _c("c.greater_than(1.0)"), np.array([0.0, 1.0, 1.5])),
    ("greater_than_eq", _c("c.greater_than_eq(1.0)"), np.array([0.0, 1.0, 1.5])),
    ("less_than", _c("c.less_than(1.0)"), np.array([0.0, 1.0, 1.5])),
    ("interval", _c("c.interval(0.0, 1.0)"), np.array([-0.1, 0.0, 1.0, 1.1])),
    ("half_open_interval", _c("c.half_open_interval(0.0, 1.0)"), np.array([-0.1, 0.0, 1.0, 0.5])),
    ("unit_interval", _c("c.unit_interval"), np.array([-0.1, 0.0, 1.0, 0.5])),
    ("integer_interval", _c("c.integer_interval(0, 3)"), np.array([0.0, 1.5, 3.0, 4.0])),
    ("nonnegative_integer", _c("c.nonnegative_integer"), np.array([0.0, 1.5, -1.0, 4.0])),
    ("positive_integer", _c("c.positive_integer"), np.array([0.0, 1.5, 1.0, 4.0])),
    ("integer_less_than", _c("c._IntegerLessThan(2)"), np.array([0.0, 1.5, 3.0])),
    ("real_vector", _c("c.real_vector"), np.array([[0.0, np.nan], [1.0, 2.0]])),
    ("independent", _c("c.independent(c.positive, 1)"), np.array([[0.0, 1.0], [1.0, 2.0]])),
    ("simplex", _c("c.simplex"), np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])),
    ("one_hot", _c("c.one_hot"), np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])),
    ("multinomial", _c("c.multinomial(3)"), np.array([[0.0, 1.0], [2.0, 2.0], [-1.0, 2.0]])),
    ("lower_triangular", _c("c.lower_triangular"), np.stack([np.tril(_M[0]), _M[1]])),
    ("lower_cholesky", _c("c.lower_cholesky"),
     np.stack([np.tril(_M[0]), _M[1], np.linalg.cholesky(_SPD[0])])),
    ("corr_cholesky", _c("c.corr_cholesky"), np.stack([np.eye(3), np.tril(_M[0])])),
    ("square", _c("c.square"), _M),
    ("symmetric", _c("c.symmetric"), np.stack([_SPD[0], _M[1]])),
    ("positive_definite", _c("c.positive_definite"), np.stack([_SPD[0], -_SPD[1]])),
    ("positive_semidefinite", _c("c.positive_semidefinite"), np.stack([_SPD[0], -_SPD[1]])),
    ("cat", _c("c.cat([c.positive, c.real], 0, [1, 2])"), np.array([1.0, -1.0, np.nan])),
    ("stack", _c("c.stack([c.positive, c.real], 1)"), np.array([[1.0, -1.0], [-1.0, 2.0]])),
    ("mixture", _c("c.MixtureSameFamilyConstraint(c.positive)"), np.array([1.0, -1.0])),
]


@pytest.mark.parametrize("row", CONSTRAINTS, ids=lambda r: r[0])
def test_constraints(row):
    name, make, value = row

    def fn(lib, v):
        con = make(lib)
        return con.check(v), _text(lib, con), con.is_discrete, con.event_dim
    check(fn, value)


def test_dependent_constraints():
    def fn(lib):
        c = lib.distributions.constraints
        d = c.dependent(is_discrete=True, event_dim=1)
        return (c.is_dependent(c.dependent), c.is_dependent(c.real), d.is_discrete, d.event_dim,
                _text(lib, d), c.is_dependent(lib.distributions.Uniform.support))
    check(fn)
    for case in [lambda lib: lib.distributions.constraints.dependent.check(lib.zeros(1)),
                 lambda lib: lib.distributions.constraints.dependent.event_dim,
                 lambda lib: lib.distributions.constraints.dependent.is_discrete,
                 lambda lib: lib.distributions.constraints.independent(1, 1),
                 lambda lib: lib.distributions.constraints.independent(
                     lib.distributions.constraints.real, -1),
                 lambda lib: lib.distributions.constraints.independent(lib.distributions.constraints.real, 2)
                 .check(lib.zeros(1)),
                 lambda lib: lib.distributions.constraints.cat(
                     [lib.distributions.constraints.real], 0, [1, 2])]:
        assert_same_error(case)


REGISTRY = ["c.real", "c.positive", "c.nonnegative", "c.greater_than(2.0)", "c.greater_than_eq(-1.0)",
            "c.less_than(3.0)", "c.interval(0.0, 1.0)", "c.interval(-2.0, 3.0)",
            "c.half_open_interval(1.0, 2.0)", "c.simplex", "c.lower_cholesky", "c.positive_definite",
            "c.positive_semidefinite", "c.corr_cholesky",
            "c.independent(c.positive, 1)", "c.real_vector", "c.cat([c.positive, c.real], 1, [1, 2])",
            "c.stack([c.positive, c.real, c.unit_interval], 1)"]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("expr", REGISTRY)
def test_constraint_registries(expr, registry):
    def fn(lib, x):
        try:
            t = getattr(lib.distributions, registry)(_c(expr)(lib))
        except NotImplementedError as e:
            return "NotImplementedError " + str(e)
        if expr in ("c.lower_cholesky", "c.positive_definite", "c.positive_semidefinite"):
            x = x.reshape(2, 3, 3)[..., :3, :3]
        elif expr == "c.corr_cholesky":
            x = x.reshape(3, 6)
        y = t(x)
        return _text(lib, t), y, t.codomain.check(y), t.log_abs_det_jacobian(x, y) if t.bijective else y
    check(fn, _real((2, 9)), grad=[0], rtol=1e-6, atol=1e-7, check_stride=False)


def test_registry_errors_and_registration():
    assert_same_error(lambda lib: lib.distributions.biject_to(lib.distributions.constraints.boolean))
    assert_same_error(lambda lib: lib.distributions.biject_to.register(int, lambda c: None))

    def fn(lib):
        c = lib.distributions.constraints

        class MyConstraint(c.Constraint):
            pass
        reg = type(lib.distributions.biject_to)()
        reg.register(MyConstraint)(lambda con: lib.distributions.ExpTransform())
        return _text(lib, reg(MyConstraint()))
    check(fn)
