"""Every optimizer, step for step against torch: same initial weights, same gradient function, N steps.

The gradient of step k is computed in NumPy from each library's own current weights (a quadratic pull towards
a target plus a fixed random sequence), so both runs see identical gradients while their weights agree, and
the weights, the state and the param groups are compared at the end. Variants cover weight decay, momentum
buffers, maximize, amsgrad/nesterov/centered, param groups with different options, a state_dict saved and
loaded (through ember.save/ember.load) in the middle, and a torch optimizer's state_dict loaded into ember.
"""

import io

import numpy as np
import pytest
import torch
from compare import assert_same, to_ember, to_torch

import ember

SHAPES = [(5, 4), (4,), (3, 2, 2)]
STEPS = 20


def _weights(dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _noise(dtype=np.float32, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]


def _grad(w, k, noise, targets):
    return 0.5 * (w - targets[k % len(targets)]) + noise


def _set_grads(lib, params, k, noise, targets):
    for i, p in enumerate(params):
        w = p.detach().numpy()
        g = _grad(w, i, noise[i], targets).astype(w.dtype)
        p.grad = (torch.from_numpy(g) if lib is torch else ember.from_numpy(g))


def _groups(lib, params, groups):
    """groups: None (one plain list) or a list of (indices, options) dicts."""
    if groups is None:
        return params
    return [dict(params=[params[i] for i in idx], **opts) for idx, opts in groups]


def _convert_state_dict(sd):
    """A torch optimizer state_dict with its tensors as ember tensors."""
    def conv(v):
        if isinstance(v, torch.Tensor):
            return ember.from_numpy(v.detach().numpy().copy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return conv(sd)


def _roundtrip(sd):
    f = io.BytesIO()
    ember.save(sd, f)
    f.seek(0)
    return ember.load(f)


def run_both(name, kwargs, groups=None, reload=None, dtype=np.float32, steps=STEPS):
    """Run `name` in both libraries; reload: None, 'ember' (own state_dict, saved and loaded mid-run) or
    'torch' (torch's state_dict converted and loaded into a fresh ember optimizer mid-run)."""
    w0, noise = _weights(dtype), _noise(dtype)
    targets = [np.float32(0.3) * np.ones(1, dtype)]
    pe = [to_ember(w, requires_grad=True) for w in w0]
    pt = [to_torch(w, requires_grad=True) for w in w0]
    oe = getattr(ember.optim, name)(_groups(ember, pe, groups), **kwargs)
    ot = getattr(torch.optim, name)(_groups(torch, pt, groups), **kwargs)
    for k in range(steps):
        if reload is not None and k == steps // 2:
            sd = _roundtrip(oe.state_dict()) if reload == "ember" else _convert_state_dict(ot.state_dict())
            oe = getattr(ember.optim, name)(_groups(ember, pe, groups), **kwargs)
            oe.load_state_dict(sd)
        _set_grads(ember, pe, k, noise[k], targets)
        _set_grads(torch, pt, k, noise[k], targets)
        oe.step()
        ot.step()
    return pe, pt, oe, ot


def check_same(pe, pt, oe, ot, rtol=None, atol=None):
    for i, (a, b) in enumerate(zip(pe, pt)):
        assert_same(a.detach(), b.detach(), rtol=rtol, atol=atol, path=f"param[{i}]")
    se, st = oe.state_dict(), ot.state_dict()
    assert se["param_groups"] == st["param_groups"]
    assert se["state"].keys() == st["state"].keys()
    for pid, ts in st["state"].items():
        es = se["state"][pid]
        assert es.keys() == ts.keys(), (es.keys(), ts.keys())
        for key, tv in ts.items():
            assert_same(es[key], tv, rtol=rtol, atol=atol, path=f"state[{pid}][{key!r}]")


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True, decoupled_weight_decay=True)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9), eps=1e-3)),  # lerp weight >= 0.5 takes torch's other formula
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, maximize=True)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
    ("ASGD", dict(lr=0.05, t0=5, lambd=0.01)),
    ("ASGD", dict(lr=0.05, t0=1e6, weight_decay=0.1, maximize=True)),
]


def _id(case):
    return case[0] + "-" + ",".join(f"{k}={v}" for k, v in case[1].items())


@pytest.mark.parametrize("name,kwargs", CASES, ids=[_id(c) for c in CASES])
def test_steps_match_torch(name, kwargs):
    check_same(*run_both(name, kwargs))


@pytest.mark.parametrize("name,kwargs", CASES[1::2], ids=[_id(c) for c in CASES[1::2]])
@pytest.mark.parametrize("reload", ["ember", "torch"])
def test_load_state_dict_mid_run(name, kwargs, reload):
    check_same(*run_both(name, kwargs, reload=reload))


GROUP_CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9), [([0], dict(lr=0.01)), ([1, 2], dict(momentum=0.5, nesterov=True))]),
    ("Adam", dict(lr=0.01), [([0, 2], dict(amsgrad=True, weight_decay=0.1)), ([1], dict(betas=(0.5, 0.9)))]),
    ("RMSprop", dict(lr=0.01), [([0], dict(centered=True)), ([1, 2], dict(momentum=0.9, lr=0.001))]),
    ("Adagrad", dict(lr=0.1), [([2], dict(lr_decay=0.1)), ([0, 1], dict())]),
]


@pytest.mark.parametrize("name,kwargs,groups", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_param_groups_with_different_options(name, kwargs, groups):
    check_same(*run_both(name, kwargs, groups=groups))
    check_same(*run_both(name, kwargs, groups=groups, reload="ember"))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "NAdam"])
def test_float64_params(name):
    kwargs = dict(lr=0.01, weight_decay=0.1) | (dict(momentum=0.9) if name in ("SGD", "RMSprop") else {})
    check_same(*run_both(name, kwargs, dtype=np.float64))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta",
                                  "RMSprop", "Rprop", "ASGD"])
def test_complex_params(name):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)
    gs = [(rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64) for _ in range(8)]
    kwargs = dict(lr=0.01) | (dict(weight_decay=0.1) if name not in ("Rprop",) else {})
    pe, pt = to_ember(w, requires_grad=True), to_torch(w, requires_grad=True)
    oe, ot = getattr(ember.optim, name)([pe], **kwargs), getattr(torch.optim, name)([pt], **kwargs)
    for g in gs:
        pe.grad, pt.grad = to_ember(g), to_torch(g)
        oe.step()
        ot.step()
    assert_same(pe.detach(), pt.detach())


def test_params_without_grad_are_skipped_and_steps_count_per_param():
    w = _weights()
    pe, pt = [to_ember(x, requires_grad=True) for x in w], [to_torch(x, requires_grad=True) for x in w]
    oe, ot = ember.optim.Adam(pe, lr=0.1), torch.optim.Adam(pt, lr=0.1)
    for k in range(4):
        for i in range(3):
            if (i + k) % 2 == 0:
                pe[i].grad, pt[i].grad = to_ember(w[i] * (k + 1)), to_torch(w[i] * (k + 1))
            else:
                pe[i].grad = pt[i].grad = None
        oe.step()
        ot.step()
    check_same(pe, pt, oe, ot)


def test_step_bumps_version_and_keeps_identity():
    p = to_ember(np.ones(3, np.float32), requires_grad=True)
    data_ptr, v0 = p.data_ptr(), p._version
    p.grad = to_ember(np.ones(3, np.float32))
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    assert p._version == v0 + 1 and p.data_ptr() == data_ptr
    buf = opt.state[p]["momentum_buffer"]
    assert buf.data_ptr() != p.grad.data_ptr()  # the first buffer is a clone of the gradient


def test_parameter_instances():
    w = _weights()
    pe = [ember.nn.Parameter(to_ember(x)) for x in w]
    pt = [torch.nn.Parameter(to_torch(x)) for x in w]
    oe, ot = ember.optim.SGD(pe, lr=0.1, momentum=0.9), torch.optim.SGD(pt, lr=0.1, momentum=0.9)
    noise, targets = _noise(), [np.zeros(1, np.float32)]
    for k in range(5):
        _set_grads(ember, pe, k, noise[k], targets)
        _set_grads(torch, pt, k, noise[k], targets)
        oe.step()
        ot.step()
    check_same(pe, pt, oe, ot)


def test_tensor_lr():
    w = _weights()
    pe, pt = [to_ember(x, requires_grad=True) for x in w], [to_torch(x, requires_grad=True) for x in w]
    oe = ember.optim.Adam(pe, lr=ember.tensor(0.01))
    ot = torch.optim.Adam(pt, lr=torch.tensor(0.01))
    noise, targets = _noise(), [np.zeros(1, np.float32)]
    for k in range(5):
        _set_grads(ember, pe, k, noise[k], targets)
        _set_grads(torch, pt, k, noise[k], targets)
        oe.step()
        ot.step()
    for a, b in zip(pe, pt):
        assert_same(a.detach(), b.detach())


# ---- LBFGS: driven by a closure on a fixed quadratic ----------------------------------------------------------


def _quadratic(seed=0, n=6):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n)).astype(np.float32)
    return (m @ m.T / n + np.eye(n, dtype=np.float32)), rng.standard_normal(n).astype(np.float32)


def _lbfgs_run(lib, kwargs, steps):
    a, b = _quadratic()
    w = (to_torch if lib is torch else to_ember)(np.linspace(-1, 1, 6).astype(np.float32).reshape(2, 3),
                                                 requires_grad=True)
    opt = lib.optim.LBFGS([w], **kwargs)

    def closure():
        x = w.detach().numpy().reshape(-1)
        r = a @ x - b
        g = (a.T @ r).astype(np.float32).reshape(2, 3)
        w.grad = torch.from_numpy(g) if lib is torch else ember.from_numpy(g)
        return lib.tensor(float(0.5 * r @ r))

    losses = [float(opt.step(closure)) for _ in range(steps)]
    return w, opt, losses


@pytest.mark.parametrize("kwargs", [dict(lr=0.5, max_iter=5), dict(lr=1, max_iter=3, line_search_fn="strong_wolfe"),
                                    dict(lr=1, max_iter=4, history_size=2, line_search_fn="strong_wolfe")],
                         ids=["fixed-step", "strong-wolfe", "short-history"])
def test_lbfgs_matches_torch(kwargs):
    we, oe, le = _lbfgs_run(ember, kwargs, 3)
    wt, ot, lt = _lbfgs_run(torch, kwargs, 3)
    np.testing.assert_allclose(le, lt, rtol=1e-5, atol=1e-6)
    assert le[-1] < 0.1 * le[0]  # it is minimizing
    assert_same(we.detach(), wt.detach(), rtol=1e-5, atol=1e-5)
    se, st = oe.state_dict()["state"][0], ot.state_dict()["state"][0]
    assert se.keys() == st.keys()
    assert (se["func_evals"], se["n_iter"]) == (st["func_evals"], st["n_iter"])
    assert len(se["old_dirs"]) == len(st["old_dirs"])
    assert_same(se["d"], st["d"], rtol=1e-4, atol=1e-5)


def test_lbfgs_errors():
    p = ember.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        ember.optim.LBFGS([{"params": [p]}, {"params": [ember.zeros(1, requires_grad=True)]}])
    opt = ember.optim.LBFGS([p], line_search_fn="bad")

    def closure():
        p.grad = ember.ones(2)
        return ember.tensor(1.0)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


@pytest.mark.parametrize("name,kwargs", CASES, ids=[_id(c) for c in CASES])
def test_versions_match_torch(name, kwargs):
    """Each step bumps the version of the parameters and of every state tensor as torch's in-place ops do."""
    pe, pt, oe, ot = run_both(name, kwargs, steps=3)
    assert [p._version for p in pe] == [p._version for p in pt]
    for p_e, p_t in zip(pe, pt):
        se, st = oe.state[p_e], ot.state[p_t]
        assert {k: v._version for k, v in se.items() if isinstance(v, ember.Tensor)} == \
            {k: v._version for k, v in st.items() if isinstance(v, torch.Tensor)}


class _StepRecorder:
    """A mode that records the name of every op reaching the dispatcher."""

    def __init__(self):
        self.names = []

    def dispatch(self, op, inputs, params):
        self.names.append(op.name)
        return ember._modes.redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.names.append(op.name)
        return ember._modes.redispatch_inplace(op, self_, inputs, params)


STEP_OPS = {"SGD": "_sgd_step_", "Adam": "_adam_step_", "AdamW": "_adam_step_", "Adamax": "_adamax_step_",
            "NAdam": "_nadam_step_", "RAdam": "_radam_step_", "Adagrad": "_adagrad_step_",
            "Adadelta": "_adadelta_step_", "RMSprop": "_rmsprop_step_", "Rprop": "_rprop_step_",
            "ASGD": "_asgd_step_"}


@pytest.mark.parametrize("name", sorted(STEP_OPS))
def test_step_is_one_op_a_mode_sees(name):
    """One optimizer step of a group is one dispatched op over the lists of tensors (the mode sees it), and the
    update it makes under the mode is the update torch makes."""
    w0, noise = _weights(), _noise()
    pe = [to_ember(w, requires_grad=True) for w in w0]
    pt = [to_torch(w, requires_grad=True) for w in w0]
    oe, ot = getattr(ember.optim, name)(pe, lr=0.01), getattr(torch.optim, name)(pt, lr=0.01)
    rec = _StepRecorder()
    for k in range(3):
        _set_grads(ember, pe, k, noise[k], [np.zeros(1, np.float32)])
        _set_grads(torch, pt, k, noise[k], [np.zeros(1, np.float32)])
        ember._modes.push_mode(rec)
        try:
            oe.step()
        finally:
            ember._modes.pop_mode(rec)
        ot.step()
    assert rec.names.count(STEP_OPS[name]) == 3
    check_same(pe, pt, oe, ot)


def test_lbfgs_updates_are_ops():
    w = np.linspace(-1, 1, 6).astype(np.float32)
    p = to_ember(w, requires_grad=True)
    opt = ember.optim.LBFGS([p], lr=0.5, max_iter=3)
    rec = _StepRecorder()

    def closure():
        opt.zero_grad()
        loss = ((p - 0.3) ** 2).sum()
        loss.backward()
        return loss

    ember._modes.push_mode(rec)
    try:
        opt.step(closure)
    finally:
        ember._modes.pop_mode(rec)
    assert rec.names.count("_lbfgs_add_grad_") >= 1


def test_zero_grad_without_set_to_none_is_one_foreach_op():
    pe = [to_ember(w, requires_grad=True) for w in _weights()]
    pt = [to_torch(w, requires_grad=True) for w in _weights()]
    for a, b in zip(pe, pt):
        a.grad, b.grad = ember.ones_like(a), torch.ones_like(b)
    oe, ot = ember.optim.SGD(pe, lr=0.1), torch.optim.SGD(pt, lr=0.1)
    rec = _StepRecorder()
    ember._modes.push_mode(rec)
    try:
        oe.zero_grad(set_to_none=False)
    finally:
        ember._modes.pop_mode(rec)
    ot.zero_grad(set_to_none=False)
    assert rec.names == ["_foreach_zero_"]
    for a, b in zip(pe, pt):
        assert_same(a.grad, b.grad)
        assert a.grad._version == b.grad._version
