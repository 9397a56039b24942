"""Learning-rate schedulers against torch: the lrs (and cycled momentums) of every epoch, state_dict round
trips in the middle of a schedule, the deprecated step(epoch) closed forms, and torch's warnings."""

import io
import math
import warnings

import numpy as np
import pytest
import torch
from compare import assert_same_error, to_ember, to_torch

import ember

W = np.ones((2, 2), np.float32)
EPOCHS = 25


def _optimizer(lib, name="SGD", **kwargs):
    conv = to_torch if lib is torch else to_ember
    w, b = conv(W, requires_grad=True), conv(W[0], requires_grad=True)
    kwargs = kwargs or (dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1))
    return getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.05}], **kwargs)


def _sched(lib, opt, name, kwargs):
    s = lib.optim.lr_scheduler
    if name == "SequentialLR":
        parts = [s.ConstantLR(opt, factor=0.5, total_iters=3), s.ExponentialLR(opt, gamma=0.9),
                 s.CosineAnnealingLR(opt, T_max=5)]
        return s.SequentialLR(opt, parts, milestones=[4, 12])
    if name == "ChainedScheduler":
        return s.ChainedScheduler([s.ConstantLR(opt, factor=0.5, total_iters=4), s.ExponentialLR(opt, gamma=0.9),
                                   s.StepLR(opt, step_size=3, gamma=0.5)])
    if name == "SWALR":
        return lib.optim.swa_utils.SWALR(opt, **kwargs)
    return getattr(s, name)(opt, **kwargs)


def _halve(epoch):
    return 0.5 ** (epoch // 4)


class _Scale:
    """A callable object: its __dict__ is saved in the state_dict."""

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, epoch):
        return self.factor ** epoch


CASES = [
    ("LambdaLR", dict(lr_lambda=_halve)),
    ("LambdaLR", dict(lr_lambda=[_halve, _Scale(0.9)])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.95)),
    ("StepLR", dict(step_size=4, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 7, 7, 15], gamma=0.3)),
    ("ConstantLR", dict(factor=0.25, total_iters=6)),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=8)),
    ("ExponentialLR", dict(gamma=0.87)),
    ("PolynomialLR", dict(total_iters=10, power=2.0)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3, step_size_down=5)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=_Scale(0.8), scale_mode="iterations")),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=EPOCHS + 1)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], epochs=13, steps_per_epoch=2, anneal_strategy="linear",
                        three_phase=True)),
    ("SequentialLR", {}),
    ("ChainedScheduler", {}),
    ("SWALR", dict(swa_lr=0.02, anneal_epochs=5)),
    ("SWALR", dict(swa_lr=[0.02, 0.01], anneal_epochs=3, anneal_strategy="linear")),
]


def _record(opt, sched):
    groups = [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups]
    return list(sched.get_last_lr()), groups


def _run(lib, name, kwargs, reload_at=None, optim_name="SGD"):
    opt = _optimizer(lib, optim_name)
    sched = _sched(lib, opt, name, kwargs)
    out = [_record(opt, sched)]
    for epoch in range(EPOCHS):
        opt.step()
        if reload_at == epoch:
            sd = sched.state_dict()
            if lib is ember:
                f = io.BytesIO()
                ember.save(sd, f)
                f.seek(0)
                sd = ember.load(f, weights_only=False)
            sched = _sched(lib, opt, name, kwargs)  # a fresh scheduler resumed from the saved state
            sched.load_state_dict(sd)
        sched.step()
        out.append(_record(opt, sched))
    return out, sched


def _assert_close_records(e, t):
    assert len(e) == len(t)
    for k, (re, rt) in enumerate(zip(e, t)):
        np.testing.assert_allclose(np.array(re[0], float), np.array(rt[0], float), rtol=1e-12, atol=1e-15,
                                   err_msg=f"get_last_lr at epoch {k}")
        for ge, gt in zip(re[1], rt[1]):
            assert (ge[1] is None) == (gt[1] is None) and (ge[2] is None) == (gt[2] is None)
            vals_e = [ge[0]] + ([ge[1]] if ge[1] is not None else []) + list(ge[2] or ())
            vals_t = [gt[0]] + ([gt[1]] if gt[1] is not None else []) + list(gt[2] or ())
            np.testing.assert_allclose(vals_e, vals_t, rtol=1e-12, atol=1e-15, err_msg=f"group at epoch {k}")


def _ids(cases):
    return [f"{i}-{c[0]}" for i, c in enumerate(cases)]


@pytest.mark.parametrize("name,kwargs", CASES, ids=_ids(CASES))
def test_schedule_matches_torch(name, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, _ = _run(ember, name, kwargs)
        t, _ = _run(torch, name, kwargs)
    _assert_close_records(e, t)


@pytest.mark.parametrize("name,kwargs", CASES, ids=_ids(CASES))
def test_state_dict_round_trip_mid_schedule(name, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e, se = _run(ember, name, kwargs, reload_at=9)
        t, st = _run(torch, name, kwargs, reload_at=9)
    _assert_close_records(e, t)
    assert sorted(se.state_dict()) == sorted(st.state_dict())


def test_cyclic_momentum_with_adam_betas():
    kwargs = dict(base_lr=0.01, max_lr=0.1, step_size_up=3, base_momentum=0.7, max_momentum=0.95)
    e, _ = _run(ember, "CyclicLR", kwargs, optim_name="Adam")
    t, _ = _run(torch, "CyclicLR", kwargs, optim_name="Adam")
    _assert_close_records(e, t)


def _plateau(lib, metrics, **kwargs):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    out = []
    for k, m in enumerate(metrics):
        opt.step()
        if k == 6:
            sd = sched.state_dict()
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
            sched.load_state_dict(sd)
        sched.step(m)
        out.append((list(sched.get_last_lr()), sched.num_bad_epochs, sched.cooldown_counter, sched.best))
    return out


@pytest.mark.parametrize("kwargs", [dict(), dict(mode="max", factor=0.5, patience=1, threshold_mode="abs"),
                                    dict(patience=2, cooldown=2, min_lr=[0.02, 0.01], threshold=0.1),
                                    dict(patience=0, factor=0.1, eps=1e-3)])
def test_reduce_lr_on_plateau(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.85, 0.9, 0.9, 0.9, 0.9, 0.7, 0.7, 0.7, 0.71]
    assert _plateau(ember, metrics, **kwargs) == _plateau(torch, metrics, **kwargs)


@pytest.mark.parametrize("name,kwargs,epochs", [
    ("StepLR", dict(step_size=3, gamma=0.5), [0, 4, 2, 9]),
    ("MultiStepLR", dict(milestones=[2, 5], gamma=0.1), [1, 6, 3]),
    ("ExponentialLR", dict(gamma=0.9), [3, 1, 7]),
    ("CosineAnnealingLR", dict(T_max=6), [2, 9, 4]),
    ("LinearLR", dict(total_iters=4), [2, 6]),
    ("PolynomialLR", dict(total_iters=4), [1, 3, 8]),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2), [0.5, 4.2, 11.0, 2]),
])
def test_step_with_epoch_uses_closed_form_and_warns(name, kwargs, epochs):
    results = []
    for lib in (ember, torch):
        opt = _optimizer(lib)
        sched = _sched(lib, opt, name, kwargs)
        out = []
        for e in epochs:
            opt.step()
            out.append((_warnings_of(lambda: sched.step(e)), sched.get_last_lr()))
        results.append(out)
    assert results[0] == results[1]
    assert bool(results[0][0][0]) == (name != "CosineAnnealingWarmRestarts")  # its step(epoch) is not deprecated


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message)) for w in rec]


@pytest.mark.parametrize("case", ["scheduler-first", "optimizer-step-overridden", "get-lr-outside-step",
                                  "right-order"])
def test_call_order_warnings(case):
    out = []
    for lib in (ember, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)

        def body():
            if case == "scheduler-first":
                sched.step()
                opt.step()
            elif case == "optimizer-step-overridden":
                opt.step = lambda *a, **k: None
                opt.step()
                sched.step()
            elif case == "get-lr-outside-step":
                sched.get_lr()
            else:
                opt.step()
                sched.step()
                sched.step()
        out.append(_warnings_of(body))
    assert out[0] == out[1]
    assert bool(out[0]) == (case != "right-order")


SCHED_ERRORS = {
    "not-optimizer": lambda lib: lib.optim.lr_scheduler.StepLR(object(), 2),
    "resume-without-initial-lr": lambda lib: lib.optim.lr_scheduler.StepLR(_optimizer(lib), 2, last_epoch=3),
    "lambda-count": lambda lib: lib.optim.lr_scheduler.LambdaLR(_optimizer(lib), [_halve]),
    "multiplicative-not-callable": lambda lib: lib.optim.lr_scheduler.MultiplicativeLR(_optimizer(lib), [1, 2]),
    "constant-factor": lambda lib: lib.optim.lr_scheduler.ConstantLR(_optimizer(lib), factor=2),
    "linear-start": lambda lib: lib.optim.lr_scheduler.LinearLR(_optimizer(lib), start_factor=0),
    "linear-end": lambda lib: lib.optim.lr_scheduler.LinearLR(_optimizer(lib), end_factor=2),
    "warm-restarts-T0": lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_optimizer(lib), T_0=0),
    "warm-restarts-Tmult": lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_optimizer(lib), 2, 0),
    "warm-restarts-eta": lambda lib: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_optimizer(lib), 2,
                                                                                         eta_min="x"),
    "plateau-factor": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib), factor=1.0),
    "plateau-mode": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib), mode="up"),
    "plateau-threshold-mode": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib),
                                                                                    threshold_mode="x"),
    "plateau-min-lrs": lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(lib), min_lr=[0.1]),
    "cyclic-mode": lambda lib: lib.optim.lr_scheduler.CyclicLR(_optimizer(lib), 0.1, 1.0, mode="x"),
    "cyclic-no-momentum": lambda lib: lib.optim.lr_scheduler.CyclicLR(_optimizer(lib, "Adagrad"), 0.1, 1.0),
    "cyclic-max-lr-count": lambda lib: lib.optim.lr_scheduler.CyclicLR(_optimizer(lib), 0.1, [1.0]),
    "onecycle-no-steps": lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1),
    "onecycle-total": lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, total_steps=0),
    "onecycle-epochs": lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, epochs=0,
                                                                      steps_per_epoch=2),
    "onecycle-pct": lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, 10, pct_start=1),
    "onecycle-anneal": lambda lib: lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, 10,
                                                                      anneal_strategy="x"),
    "onecycle-too-many-steps": lambda lib: (lambda s: [s.step() for _ in range(3)])(
        lib.optim.lr_scheduler.OneCycleLR(_optimizer(lib), 0.1, 2)),
    "sequential-empty": lambda lib: lib.optim.lr_scheduler.SequentialLR(_optimizer(lib), [], []),
    "sequential-milestones": lambda lib: lib.optim.lr_scheduler.SequentialLR(
        *(lambda o: (o, [lib.optim.lr_scheduler.StepLR(o, 2)], [1]))(_optimizer(lib))),
    "sequential-plateau": lambda lib: lib.optim.lr_scheduler.SequentialLR(
        *(lambda o: (o, [lib.optim.lr_scheduler.ReduceLROnPlateau(o)], []))(_optimizer(lib))),
    "chained-empty": lambda lib: lib.optim.lr_scheduler.ChainedScheduler([]),
    "swalr-anneal": lambda lib: lib.optim.swa_utils.SWALR(_optimizer(lib), 0.1, anneal_strategy="x"),
    "swalr-epochs": lambda lib: lib.optim.swa_utils.SWALR(_optimizer(lib), 0.1, anneal_epochs=-1),
}


@pytest.mark.parametrize("case", SCHED_ERRORS, ids=list(SCHED_ERRORS))
def test_scheduler_errors(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(SCHED_ERRORS[case])


def test_tensor_lr_is_updated_in_place():
    out = []
    for lib in (ember, torch):
        conv = to_torch if lib is torch else to_ember
        lr = lib.tensor(0.1)
        opt = lib.optim.Adam([conv(W, requires_grad=True)], lr=lr)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        out.append((float(lr), [float(v) for v in sched.get_last_lr()]))
    assert out[0] == out[1]
    assert math.isclose(out[0][0], 0.05, rel_tol=1e-6)
