"""optim.swa_utils against torch: AveragedModel (SWA, EMA, custom avg_fn, buffers), update_bn."""

import numpy as np
import pytest
import torch
from compare import assert_same, to_ember, to_torch

import ember


def _model(lib, seed=0):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    _load(lib, m, seed)
    return m


def _load(lib, model, seed):
    """Set every parameter and float buffer of `model` from a seeded NumPy stream (same in both libraries)."""
    rng = np.random.default_rng(seed)
    conv = to_torch if lib is torch else to_ember
    with lib.no_grad():
        for _name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if t.is_floating_point():
                t.copy_(conv(rng.standard_normal(tuple(t.shape)).astype(np.float32)))


AVG = {
    "swa": lambda lib: {},
    "ema-multi": lambda lib: dict(multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
    "ema": lambda lib: dict(avg_fn=lib.optim.swa_utils.get_ema_avg_fn(0.8)),
    "swa-multi": lambda lib: dict(multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()),
    "swa-fn": lambda lib: dict(avg_fn=lib.optim.swa_utils.get_swa_avg_fn()),
    "swa-buffers": lambda lib: dict(use_buffers=True),
}


@pytest.mark.parametrize("case", AVG, ids=list(AVG))
def test_averaged_model(case):
    out = []
    for lib in (ember, torch):
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model, **AVG[case](lib))
        for seed in range(1, 5):
            _load(lib, model, seed)
            averaged.update_parameters(model)
        out.append((averaged.n_averaged, dict(averaged.state_dict())))
    (ne, se), (nt, st) = out
    assert_same(ne, nt)
    assert list(se) == list(st)
    for k in st:
        assert_same(se[k], st[k], path=k)


def test_averaged_model_forward_and_error():
    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        model = _model(lib).eval()
        averaged = lib.optim.swa_utils.AveragedModel(model)
        averaged.update_parameters(model)
        outs.append(averaged(to_torch(x) if lib is torch else to_ember(x)))
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            lib.optim.swa_utils.AveragedModel(model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None)
        with pytest.raises(ValueError, match="Invalid decay value"):
            lib.optim.swa_utils.get_ema_avg_fn(1.5)
    assert_same(outs[0].detach(), outs[1].detach())


def test_update_bn():
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((6, 4)).astype(np.float32) for _ in range(3)]
    out = []
    for lib in (ember, torch):
        conv = to_torch if lib is torch else to_ember
        model = _model(lib).eval()
        bn = model[1]
        momentum = bn.momentum
        loader = [(conv(b), conv(np.zeros(6, np.float32))) for b in batches]  # (input, label) batches
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and bn.momentum == momentum
        out.append((bn.running_mean, bn.running_var, bn.num_batches_tracked))
    assert_same(out[0], out[1])


def test_update_bn_without_batchnorm_is_a_no_op():
    model = ember.nn.Linear(2, 2)
    ember.optim.swa_utils.update_bn([ember.ones(1, 2)], model)
    assert model.training
