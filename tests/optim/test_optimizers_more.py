"""Adafactor, Muon and swap_in_optimizer_params_and_state against torch: step for step from the same weights
(tests/optim/test_optimizers.py's harness), mid-run state_dict reloads, argument errors."""

import numpy as np
import pytest
import test_optimizers as harness
import torch
from compare import assert_same, assert_same_error, to_ember, to_torch
from test_optimizers import check_same, run_both

import ember

ADAFACTOR = [
    dict(lr=0.01),
    dict(lr=0.05, weight_decay=0.1, maximize=True),
    dict(lr=0.5, d=1.5, beta2_decay=-0.5, eps=(1e-4, 1e-2)),
]
MUON = [
    dict(lr=0.02),
    dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw", weight_decay=0.01),
    dict(lr=0.05, momentum=0.5, ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5), adjust_lr_fn="original"),
]


@pytest.fixture
def matrices(monkeypatch):
    """Muon takes 2-d parameters only: the harness's shapes, wide and tall."""
    monkeypatch.setattr(harness, "SHAPES", [(5, 4), (3, 6)])


@pytest.mark.parametrize("kwargs", ADAFACTOR)
@pytest.mark.parametrize("reload", [None, "ember", "torch"])
def test_adafactor(kwargs, reload):
    check_same(*run_both("Adafactor", kwargs, reload=reload))


def test_adafactor_float64_and_groups():
    check_same(*run_both("Adafactor", dict(lr=0.01), dtype=np.float64))
    check_same(*run_both("Adafactor", dict(lr=0.01), groups=[([0], dict(lr=0.1)), ([1, 2], dict(d=2.0))]))


@pytest.mark.parametrize("kwargs", MUON)
@pytest.mark.parametrize("reload", [None, "ember", "torch"])
def test_muon(matrices, kwargs, reload):
    check_same(*run_both("Muon", kwargs, reload=reload))


def _params(lib):
    return [lib.zeros(3, 2, requires_grad=True)]


ERRORS = [
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))), ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-0.1)),
    ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-0.5)), ("Muon", dict(weight_decay=-1.0)),
    ("Muon", dict(adjust_lr_fn="other")),
]


@pytest.mark.parametrize("name,kwargs", ERRORS)
def test_argument_errors(name, kwargs):
    assert_same_error(lambda lib: getattr(lib.optim, name)(_params(lib), **kwargs))


def test_muon_refuses_non_matrices_and_complex():
    assert_same_error(lambda lib: lib.optim.Muon([lib.zeros(3, requires_grad=True)]))

    def complex_step(lib):
        p = lib.zeros(2, 2, dtype=lib.complex64, requires_grad=True)
        p.grad = lib.ones(2, 2, dtype=lib.complex64)
        lib.optim.Muon([p]).step()
    assert_same_error(complex_step)

    def ns_steps(lib):
        p = lib.zeros(2, 2, requires_grad=True)
        p.grad = lib.ones(2, 2)
        lib.optim.Muon([p], ns_steps=100).step()
    assert_same_error(ns_steps)


def test_adafactor_refuses_complex():
    def step(lib):
        p = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
        p.grad = lib.ones(2, dtype=lib.complex64)
        lib.optim.Adafactor([p]).step()
    assert_same_error(step)


def _trained(lib, w):
    """An Adafactor on two parameters after two steps (so that it has state)."""
    ps = [(to_torch if lib is torch else to_ember)(x, requires_grad=True) for x in w]
    opt = lib.optim.Adafactor(ps, lr=0.1)
    for k in range(2):
        for p in ps:
            p.grad = p.detach() * (k + 1)
        opt.step()
    return ps, opt


def test_swap_in_optimizer_params_and_state():
    rng = np.random.default_rng(0)
    w = [rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(4).astype(np.float32)]
    other = [rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(4).astype(np.float32)]
    results = {}
    for lib in (torch, ember):
        wrap = to_torch if lib is torch else to_ember
        ps, opt = _trained(lib, w)
        sd = opt.state_dict()
        swap = {"a": wrap(other[0], True), "b": wrap(other[1], True)}
        for t in swap.values():
            t.grad = t.detach() * 3
        before = [p.detach().clone() for p in ps]
        with lib.optim.swap_in_optimizer_params_and_state(opt, swap, sd):
            opt.step()
            inside = opt.param_groups[0]["params"][0] is swap["a"]
        results[lib.__name__] = (swap, sd, before, ps, inside, opt.param_groups[0]["params"][0] is ps[0])
    (se, sde, be, pe, ie, re), (st, sdt, _, pt, it, rt) = results["ember"], results["torch"]
    assert ie and it and re and rt
    for k in ("a", "b"):
        assert_same(se[k].detach(), st[k].detach(), path=k)
    for pid, ts in sdt["state"].items():
        for key, v in ts.items():
            assert_same(sde["state"][pid][key], v, path=f"state[{pid}][{key}]")
    for a, b, c in zip(pe, be, pt):  # the live parameters are untouched
        assert (a.detach().numpy() == b.numpy()).all()
        assert_same(a.detach(), c.detach())


SWAP_ERRORS = {
    "no_state": lambda lib, opt, sd, ps: lib.optim.Adafactor(ps).state_dict(),
    "not_dict": lambda lib, opt, sd, ps: [1],
    "state_not_dict": lambda lib, opt, sd, ps: dict(sd, state=[]),
    "groups_not_list": lambda lib, opt, sd, ps: dict(sd, param_groups={}),
    "groups_len": lambda lib, opt, sd, ps: dict(sd, param_groups=sd["param_groups"] * 2),
    "group_keys": lambda lib, opt, sd, ps: dict(sd, param_groups=[dict(sd["param_groups"][0], extra=1)]),
    "group_params": lambda lib, opt, sd, ps: dict(sd, param_groups=[dict(sd["param_groups"][0], params=[0])]),
    "extra_state": lambda lib, opt, sd, ps: dict(sd, state=dict(sd["state"], **{"x": {}})),
}


@pytest.mark.parametrize("name", list(SWAP_ERRORS))
def test_swap_in_errors(name):
    w = [np.ones((3, 2), np.float32), np.ones(4, np.float32)]

    def fn(lib):
        ps, opt = _trained(lib, w)
        if name == "no_state":
            opt = lib.optim.Adafactor(ps)
        state = SWAP_ERRORS[name](lib, opt, opt.state_dict(), ps)
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"a": ps[0], "b": ps[1]}, state):
            pass
    assert_same_error(fn)


SPARSE_ADAM_ERRORS = [dict(lr=0.0), dict(eps=0.0), dict(betas=(1.0, 0.9)), dict(betas=(0.9, -0.1))]


@pytest.mark.parametrize("kwargs", SPARSE_ADAM_ERRORS)
def test_sparse_adam_arguments(kwargs):
    assert_same_error(lambda lib: lib.optim.SparseAdam(_params(lib), **kwargs))


def test_sparse_adam_on_dense_gradients():
    """torch's SparseAdam raises on a dense gradient, and every ember gradient is dense: the same error; a
    step without gradients does nothing; complex parameters are refused."""
    def step(lib, with_grad):
        ps = _params(lib)
        opt = lib.optim.SparseAdam(ps)
        if with_grad:
            ps[0].grad = lib.ones(3, 2)
        opt.step()
        return ps[0] * 1, opt.state_dict()["param_groups"]
    assert_same_error(lambda lib: step(lib, True))
    ours, theirs = step(ember, False), step(torch, False)
    assert_same(ours[0], theirs[0].detach())
    assert ours[1] == theirs[1]
    assert_same_error(lambda lib: lib.optim.SparseAdam([lib.zeros(2, dtype=lib.complex64, requires_grad=True)]))
