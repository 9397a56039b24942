"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal) and the legacy
hook-based weight_norm / spectral_norm against torch: outputs, input and parameter grads, buffers, state_dict
keys, class names, caching, right_inverse, removal and errors."""

import pickle
import warnings

import numpy as np
import pytest
import torch
from _harness import run_pair
from compare import assert_same, assert_same_error, normalize_message, to_ember

import ember

rng = np.random.default_rng(0)


def build(make, seed=0):
    """(ember model, torch model) from `make(lib)`; ember gets torch's state_dict (identical keys)."""
    torch.manual_seed(seed)
    tm = make(torch)
    ember.manual_seed(seed)
    em = make(ember)
    assert list(em.state_dict()) == list(tm.state_dict())
    em.load_state_dict({k: to_ember(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return em, tm


def P(lib):
    return lib.nn.utils.parametrizations


PARAMETRIZED = [
    ("weight_norm_linear", lambda lib: P(lib).weight_norm(lib.nn.Linear(5, 4)), (3, 5)),
    ("weight_norm_dim1", lambda lib: P(lib).weight_norm(lib.nn.Linear(5, 4), dim=1), (3, 5)),
    ("weight_norm_none", lambda lib: P(lib).weight_norm(lib.nn.Linear(5, 4), dim=None), (3, 5)),
    ("weight_norm_conv_dim2", lambda lib: P(lib).weight_norm(lib.nn.Conv2d(2, 3, 3), dim=2), (2, 2, 5, 5)),
    ("spectral_linear", lambda lib: P(lib).spectral_norm(lib.nn.Linear(5, 4)), (3, 5)),
    ("spectral_conv_iters", lambda lib: P(lib).spectral_norm(lib.nn.Conv2d(2, 3, 3), n_power_iterations=3),
     (2, 2, 5, 5)),
    ("spectral_convT", lambda lib: P(lib).spectral_norm(lib.nn.ConvTranspose2d(2, 3, 3)), (2, 2, 4, 4)),
    ("spectral_bias_1d", lambda lib: P(lib).spectral_norm(lib.nn.Linear(5, 4), "bias"), (3, 5)),
    ("orthogonal_square", lambda lib: P(lib).orthogonal(lib.nn.Linear(4, 4)), (3, 4)),
    ("orthogonal_tall_householder", lambda lib: P(lib).orthogonal(lib.nn.Linear(3, 5)), (2, 3)),
    ("orthogonal_wide", lambda lib: P(lib).orthogonal(lib.nn.Linear(5, 3)), (2, 5)),
    ("orthogonal_cayley", lambda lib: P(lib).orthogonal(lib.nn.Linear(4, 4), orthogonal_map="cayley"), (3, 4)),
    ("orthogonal_exp_tall", lambda lib: P(lib).orthogonal(lib.nn.Linear(3, 5), orthogonal_map="matrix_exp"),
     (2, 3)),
    ("orthogonal_householder_no_triv",
     lambda lib: P(lib).orthogonal(lib.nn.Linear(3, 5), use_trivialization=False), (2, 3)),
]


def _perturb_originals(em, tm):
    """Move the originals away from their (often trivial) initial values, identically in both."""
    r = np.random.default_rng(3)
    for (n, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        if "original" in n:
            delta = np.asarray(r.standard_normal(tuple(tp.shape)) * 0.3, np.float32)
            with torch.no_grad():
                tp.add_(torch.from_numpy(delta))
            with ember.no_grad():
                ep.add_(ember.from_numpy(delta))


@pytest.mark.parametrize("name,make,shape", PARAMETRIZED, ids=[c[0] for c in PARAMETRIZED])
def test_parametrized_layer_matches_torch(name, make, shape):
    em, tm = build(make)
    assert type(em).__name__ == type(tm).__name__ and repr(em) == repr(tm)
    assert_same(em.weight, tm.weight, rtol=1e-5, atol=1e-6, check_stride=False)  # the initial value
    _perturb_originals(em, tm)
    x = rng.standard_normal(shape).astype(np.float32)
    for mode in ("train", "train", "eval"):  # spectral norm's power iteration runs in training mode only
        getattr(em, mode)(), getattr(tm, mode)()
        for m in (em, tm):
            m.zero_grad()
        run_pair(em, tm, [x], rtol=1e-4, atol=1e-5)
        for (n, tb), (_, eb) in zip(tm.named_buffers(), em.named_buffers()):
            assert_same(eb, tb, rtol=1e-4, atol=1e-5, check_stride=False, path=n)


def test_orthogonal_weight_is_orthogonal_and_assignable():
    em, tm = build(lambda lib: P(lib).orthogonal(lib.nn.Linear(6, 4)))
    w = em.weight
    np.testing.assert_allclose((w @ w.T).detach().numpy(), np.eye(4), atol=1e-5)
    q = np.linalg.qr(rng.standard_normal((6, 4)))[0].T.astype(np.float32).copy()
    torch.manual_seed(1)
    tm.weight = torch.from_numpy(q)
    ember.manual_seed(1)
    em.weight = ember.from_numpy(q)
    assert_same(em.weight, tm.weight, rtol=1e-4, atol=1e-5, check_stride=False)
    assert_same(em.parametrizations.weight[0].base, tm.parametrizations.weight[0].base, rtol=1e-4, atol=1e-5,
                check_stride=False)


class Symmetric(torch.nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


class EmberSymmetric(ember.nn.Module):
    forward = Symmetric.forward
    right_inverse = Symmetric.right_inverse


class Scale(torch.nn.Module):  # no right_inverse
    def forward(self, x):
        return x * 2


class EmberScale(ember.nn.Module):
    forward = Scale.forward


EmberScale.__name__ = "Scale"  # error messages name the parametrization's class


class Split(torch.nn.Module):  # right_inverse returns two tensors
    def forward(self, a, b):
        return a + b

    def right_inverse(self, x):
        return x * 0.25, x * 0.75


class EmberSplit(ember.nn.Module):
    forward = Split.forward
    right_inverse = Split.right_inverse


MODS = {torch: (Symmetric, Scale, Split), ember: (EmberSymmetric, EmberScale, EmberSplit)}


def _run_parametrize_story(lib):
    """Every parametrize behaviour in one script, run with each library; returns what it observed."""
    sym, scale, split = MODS[lib]
    pz = lib.nn.utils.parametrize
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 3)
    w0 = m.weight
    seen = [pz.is_parametrized(m)]
    pz.register_parametrization(m, "weight", sym())
    seen += [pz.is_parametrized(m), pz.is_parametrized(m, "weight"), pz.is_parametrized(m, "bias"),
             type(m).__name__, pz.type_before_parametrizations(m).__name__, m.parametrizations.weight.original is w0,
             list(m.state_dict()), [n for n, _ in m.named_parameters()], m.weight.detach().numpy().copy()]
    with pz.cached():
        seen.append(m.weight is m.weight)
    seen.append(m.weight is m.weight)
    m.weight = lib.ones(3, 3) * 4  # right_inverse writes into original in place
    seen += [m.parametrizations.weight.original is w0, w0.detach().numpy().copy()]
    pz.register_parametrization(m, "weight", scale())  # chained
    seen += [len(m.parametrizations.weight), m.weight.detach().numpy().copy()]
    try:
        m.weight = lib.zeros(3, 3)
    except RuntimeError as e:
        seen.append(str(e))
    pz.remove_parametrizations(m, "weight", leave_parametrized=True)
    seen += [type(m).__name__, m.weight is w0, m.weight.detach().numpy().copy(), hasattr(m, "parametrizations")]
    pz.register_parametrization(m, "bias", split())
    seen += [list(m.state_dict()), m.bias.detach().numpy().copy(), m.parametrizations.bias.original1.requires_grad]
    try:
        pz.remove_parametrizations(m, "bias", leave_parametrized=False)
    except ValueError as e:
        seen.append(str(e))
    try:
        pickle.dumps(m)
    except RuntimeError as e:
        seen.append(str(e))
    pz.remove_parametrizations(m, "bias")
    seen += [type(m).__name__, type(m.bias).__name__, m.bias.detach().numpy().copy()]
    b = lib.nn.Linear(3, 3)
    b.register_buffer("buf", lib.ones(3, 3))
    pz.register_parametrization(b, "buf", sym())
    seen += [list(b.state_dict()), [n for n, _ in b.named_buffers()]]
    pz.remove_parametrizations(b, "buf", leave_parametrized=False)
    seen += [list(b.state_dict())]
    return seen


def test_parametrize_behaviour_matches_torch():
    t, e = _run_parametrize_story(torch), _run_parametrize_story(ember)
    assert len(t) == len(e)
    for i, (a, b) in enumerate(zip(e, t)):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"step {i}")
        else:
            same = normalize_message(a) == normalize_message(b) if isinstance(b, str) else a == b
            assert same, f"step {i}: {a!r} vs {b!r}"


def _with(lib, fn):
    sym, scale, split = MODS[lib]
    return fn(lib, lib.nn.utils.parametrize, sym, scale)


class Shrink(torch.nn.Module):
    def forward(self, x):
        return x[:1]


class EmberShrink(ember.nn.Module):
    forward = Shrink.forward


ERRORS = [
    ("no_such_tensor", lambda lib, pz, sym, sc: pz.register_parametrization(lib.nn.Linear(2, 2), "nope", sym())),
    ("remove_unparametrized", lambda lib, pz, sym, sc: pz.remove_parametrizations(lib.nn.Linear(2, 2), "weight")),
    ("shape_change", lambda lib, pz, sym, sc: pz.register_parametrization(
        lib.nn.Linear(2, 2), "weight", (Shrink if lib is torch else EmberShrink)())),
    ("orth_1d", lambda lib, pz, sym, sc: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias")),
    ("orth_map", lambda lib, pz, sym, sc: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2),
                                                                                   orthogonal_map="qr")),
    ("orth_missing", lambda lib, pz, sym, sc: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "w")),
    ("orth_shape", lambda lib, pz, sym, sc: setattr(lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2)),
                                                     "weight", lib.ones(3, 3))),
    ("orth_no_triv_assign", lambda lib, pz, sym, sc: setattr(lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(2, 2), use_trivialization=False), "weight", lib.eye(2))),
    ("spectral_iters", lambda lib, pz, sym, sc: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), n_power_iterations=0)),
    ("spectral_dim", lambda lib, pz, sym, sc: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                                                          dim=3)),
    ("legacy_twice", lambda lib, pz, sym, sc: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))),
    ("legacy_remove", lambda lib, pz, sym, sc: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2))),
    ("legacy_sn_twice", lambda lib, pz, sym, sc: lib.nn.utils.spectral_norm(
        lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2)))),
    ("legacy_sn_remove", lambda lib, pz, sym, sc: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2))),
    ("legacy_sn_none", lambda lib, pz, sym, sc: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias")),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_parametrize_errors(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert_same_error(lambda lib: _with(lib, fn))


LEGACY = [
    ("weight_norm", lambda lib: lib.nn.utils.weight_norm(lib.nn.Linear(5, 4)), (3, 5)),
    ("weight_norm_conv_none", lambda lib: lib.nn.utils.weight_norm(lib.nn.Conv1d(2, 3, 3), dim=None), (2, 2, 6)),
    ("spectral_norm", lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(5, 4), n_power_iterations=2), (3, 5)),
    ("spectral_norm_convT", lambda lib: lib.nn.utils.spectral_norm(lib.nn.ConvTranspose1d(2, 3, 3)), (2, 2, 6)),
]


@pytest.mark.parametrize("name,make,shape", LEGACY, ids=[c[0] for c in LEGACY])
def test_legacy_norms_match_torch(name, make, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        em, tm = build(make)
    x = rng.standard_normal(shape).astype(np.float32)
    for mode in ("train", "train", "eval"):
        getattr(em, mode)(), getattr(tm, mode)()
        for m in (em, tm):
            m.zero_grad()
        run_pair(em, tm, [x], rtol=1e-4, atol=1e-5)
        for (n, tb), (_, eb) in zip(tm.named_buffers(), em.named_buffers()):
            assert_same(eb, tb, rtol=1e-4, atol=1e-5, check_stride=False, path=n)
    te, ee = tm.state_dict(), em.state_dict()
    assert te._metadata[""] == ee._metadata[""]
    remove = "remove_" + name.split("_norm")[0] + "_norm"
    getattr(torch.nn.utils, remove)(tm)
    getattr(ember.nn.utils, remove)(em)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert (len(em._forward_pre_hooks), len(em._state_dict_hooks)) == (len(tm._forward_pre_hooks),
                                                                        len(tm._state_dict_hooks))
    assert_same(em.weight, tm.weight, rtol=1e-4, atol=1e-5, check_stride=False)
    assert type(em.weight).__name__ == "Parameter"


def test_weight_norm_loads_legacy_state_dict_and_warns():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        legacy = ember.nn.utils.weight_norm(ember.nn.Linear(3, 2))
    assert any(issubclass(x.category, FutureWarning) and "parametrizations.weight_norm" in str(x.message) for x in w)
    new = P(ember).weight_norm(ember.nn.Linear(3, 2))
    new.load_state_dict(legacy.state_dict())
    np.testing.assert_allclose(new.weight.detach().numpy(), legacy.weight.detach().numpy(), rtol=1e-6)


def test_spectral_norm_version0_state_dict_upgrade():
    sds = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))  # tall: W^T W is invertible
        m(lib.ones(2, 3))
        sd = m.state_dict()
        del sd._metadata[""]["spectral_norm"]
        sd.pop("weight_v")
        sd["weight"] = m.weight.detach()
        m2 = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
        m2.load_state_dict(sd)
        sds[lib] = m2.weight_v
    assert_same(sds[ember], sds[torch], rtol=1e-3, atol=1e-4)
