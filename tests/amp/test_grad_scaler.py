"""GradScaler against torch's: the same model, losses and sequence of steps (some with inf or NaN
gradients) in ember and torch give the same scales, growth trackers, skipped steps, weights, state dicts
and errors; and the two ops `_amp_foreach_non_finite_check_and_unscale_` / `_amp_update_scale_`.
"""

import pickle
import warnings

import numpy as np
import pytest
import torch
from compare import assert_same_error, normalize_message

import ember

# a loss multiplier per step: inf and NaN steps must be skipped and back the scale off
MULTS = [1.0, float("inf"), 1.0, 1.0, 1.0, float("nan"), 1.0, 1.0, 1.0, -float("inf"), 1.0]


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 2))
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def _snapshot(lib, sc, m, ret):
    return (sc.get_scale(), sc._get_growth_tracker(), ret is None,
            [p.detach().numpy().round(5).tolist() for p in m.parameters()])


def _train(lib, opt_name, clip=False, accumulate=1, low="bfloat16", **scaler_kw):
    m = _model(lib)
    opt = getattr(lib.optim, opt_name)(m.parameters(), lr=0.05)
    sc = lib.amp.GradScaler("cpu", **scaler_kw)
    x = lib.from_numpy(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
    out = []
    for mult in MULTS:
        opt.zero_grad()
        for _ in range(accumulate):  # gradient accumulation: several scaled backwards, one step
            with lib.autocast("cpu", dtype=getattr(lib, low)):
                loss = (m(x).float() ** 2).mean() * mult / accumulate
            sc.scale(loss).backward()
        if clip:  # clipping the true gradients: unscale_ first, as torch documents
            sc.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        ret = sc.step(opt)
        sc.update()
        out.append(_snapshot(lib, sc, m, ret))
    return out, sc.state_dict()


@pytest.mark.parametrize("opt_name,clip,accumulate,low,kw", [
    ("SGD", False, 1, "bfloat16", dict(init_scale=4.0, growth_interval=2)),
    ("Adam", True, 1, "bfloat16", dict(init_scale=2.0 ** 10, growth_factor=3.0, backoff_factor=0.25,
                                       growth_interval=3)),
    ("SGD", True, 3, "float16", dict(growth_interval=1)),
    ("AdamW", False, 2, "float16", dict()),
])
def test_training_sequence(opt_name, clip, accumulate, low, kw):
    e = _train(ember, opt_name, clip, accumulate, low, **kw)
    t = _train(torch, opt_name, clip, accumulate, low, **kw)
    for i, (es, ts) in enumerate(zip(e[0], t[0])):
        assert es[:3] == ts[:3], f"step {i}: scale/tracker/skipped {es[:3]} vs torch {ts[:3]}"
        np.testing.assert_allclose(np.concatenate([np.ravel(w) for w in es[3]]),
                                   np.concatenate([np.ravel(w) for w in ts[3]]), rtol=2e-3, atol=2e-4,
                                   err_msg=f"weights after step {i}")
    assert e[1] == t[1]


def _warned(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(lib)
    return out, [(w.category.__name__, normalize_message(str(w.message))) for w in caught]


def both(fn):
    e, ew = _warned(fn, ember)
    t, tw = _warned(fn, torch)
    assert e == t and ew == tw, f"ember {e} {ew} vs torch {t} {tw}"
    return e


def test_api_points():
    def fn(lib):
        sc = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=5)
        out = [sc.is_enabled(), sc.get_scale(), sc._get_growth_tracker(), sc.state_dict(),
               sc.get_growth_factor(), sc.get_backoff_factor(), sc.get_growth_interval()]
        sc.set_growth_factor(4.0)
        sc.set_backoff_factor(0.125)
        sc.set_growth_interval(7)
        out.append(sc.state_dict())
        scaled = sc.scale([lib.ones(2), (lib.full((1,), 2.0),)])
        out.append([scaled[0].tolist(), scaled[1][0].tolist(), type(scaled[1]).__name__])
        sc2 = lib.amp.GradScaler("cpu")
        sc2.load_state_dict(sc.state_dict())
        out.append(sc2.state_dict())
        sc.update(16.0)
        out.append(sc.get_scale())
        sc.update(lib.tensor(32.0))
        out.append(sc.get_scale())
        sc3 = pickle.loads(pickle.dumps(sc))
        out.append(sc3.state_dict())
        off = lib.amp.GradScaler("cpu", enabled=False)
        out += [off.is_enabled(), off.get_scale(), off.state_dict(), off.scale(3.0)]
        cuda = lib.amp.GradScaler()  # device "cuda" on a CPU-only machine: warned, disabled
        dep = lib.cuda.amp.GradScaler()
        cpu_dep = lib.cpu.amp.GradScaler(init_scale=2.0)
        out += [cuda.is_enabled(), dep.is_enabled(), cpu_dep.is_enabled(), cpu_dep.get_scale(),
                lib.GradScaler is lib.amp.GradScaler]
        return out
    both(fn)


@pytest.mark.parametrize("case", [
    lambda lib, sc, opt: sc.unscale_(opt),  # before any scale()
    lambda lib, sc, opt: sc.step(opt),
    lambda lib, sc, opt: sc.update(),
    lambda lib, sc, opt: (sc.scale(lib.ones((), requires_grad=True)), sc.step(opt, closure=lambda: 0)),
    lambda lib, sc, opt: lib.amp.GradScaler("cpu", growth_factor=1.0),
    lambda lib, sc, opt: lib.amp.GradScaler("cpu", backoff_factor=1.0),
    lambda lib, sc, opt: sc.scale([lib.ones(()), 3]),
    lambda lib, sc, opt: lib.amp.GradScaler("cpu").load_state_dict({}),
    lambda lib, sc, opt: _twice(lib, sc, opt, "unscale_"),
    lambda lib, sc, opt: _twice(lib, sc, opt, "step"),
    lambda lib, sc, opt: _twice(lib, sc, opt, "unscale_after_step"),
    lambda lib, sc, opt: _fp16_grads(lib, sc),
])
def test_errors(case):
    def fn(lib):
        w = lib.nn.Parameter(lib.ones(2))
        return case(lib, lib.amp.GradScaler("cpu"), lib.optim.SGD([w], lr=0.1))
    assert_same_error(fn)


def _twice(lib, sc, opt, what):
    w = opt.param_groups[0]["params"][0]
    sc.scale((w * 2).sum()).backward()
    if what == "unscale_":
        sc.unscale_(opt)
        sc.unscale_(opt)
    elif what == "step":
        sc.step(opt)
        sc.step(opt)
    else:
        sc.step(opt)
        sc.unscale_(opt)


def _fp16_grads(lib, sc):
    w = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
    opt = lib.optim.SGD([w], lr=0.1)
    sc.scale((w * 2).float().sum()).backward()
    sc.step(opt)


def test_amp_ops():
    def fn(lib):
        grads = [lib.tensor([2.0, 4.0]), lib.tensor([1.0, 8.0], dtype=lib.bfloat16), lib.tensor([6.0])]
        found = lib.zeros(())
        lib._amp_foreach_non_finite_check_and_unscale_(grads, found, lib.tensor(0.5))
        out = [[g.float().tolist() for g in grads], found.item()]
        bad = [lib.tensor([1.0, float("nan")]), lib.tensor([float("inf")])]
        lib._amp_foreach_non_finite_check_and_unscale_(bad, found, lib.tensor(0.25))
        out += [[str(g.tolist()) for g in bad], found.item()]
        scale, tracker = lib.tensor(4.0), lib.tensor(0, dtype=lib.int32)
        for f in (0.0, 0.0, 1.0, 0.0, 0.0, 0.0):
            r = lib._amp_update_scale_(scale, tracker, lib.tensor(f), 2.0, 0.5, 2)
            out.append((r is scale, scale.item(), tracker.item()))
        big = lib.tensor(3e38)
        lib._amp_update_scale_(big, lib.tensor(0, dtype=lib.int32), lib.tensor(0.0), 2.0, 0.5, 1)
        out.append(big.item())  # the grown scale would be inf: kept
        return out
    out = both(fn)
    assert out[1] == 0.0 and out[3] == 1.0
