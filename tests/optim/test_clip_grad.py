"""nn.utils gradient clipping against torch: total norms of every order, the clipped gradients, the
non-finite error, mixed dtypes, and the deprecated alias."""

import warnings

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, to_ember, to_torch

import ember

RNG = np.random.default_rng(0)
GRADS = [RNG.standard_normal(s).astype(np.float32) * 3 for s in [(4, 5), (5,), (2, 3, 2)]]


def _params(lib, grads, with_none=True):
    conv = to_torch if lib is torch else to_ember
    ps = []
    for g in grads:
        p = conv(np.zeros_like(g), requires_grad=True)
        p.grad = conv(g)
        ps.append(p)
    if with_none:
        ps.append(conv(np.zeros(3, np.float32), requires_grad=True))  # no grad: skipped
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0, float("inf"), "inf", -float("inf"), 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e4])
def test_clip_grad_norm(norm_type, max_norm):
    out = {}
    for lib in (ember, torch):
        ps = _params(lib, GRADS)
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        out[lib] = total, [p.grad for p in ps[:-1]]
    assert_same(out[ember][0], out[torch][0])
    assert_same(out[ember][1], out[torch][1])


def test_clip_grad_norm_single_tensor_generator_and_foreach():
    for foreach in (None, True, False):
        pe, pt = _params(ember, GRADS[:1], False)[0], _params(torch, GRADS[:1], False)[0]
        assert_same(ember.nn.utils.clip_grad_norm_(pe, 1.0, foreach=foreach),
                    torch.nn.utils.clip_grad_norm_(pt, 1.0, foreach=foreach))
        assert_same(pe.grad, pt.grad)
    ge = (p for p in _params(ember, GRADS))
    gt = (p for p in _params(torch, GRADS))
    assert_same(ember.nn.utils.clip_grad_norm_(ge, 2.0), torch.nn.utils.clip_grad_norm_(gt, 2.0))


def test_empty_generator_warns_and_returns_zero():
    msgs = []
    for lib in (ember, torch):
        with pytest.warns(UserWarning) as rec:
            total = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        msgs.append(str(rec[0].message))
        assert float(total) == 0.0 and total.dtype == lib.float32
    assert msgs[0] == msgs[1]


def test_error_if_nonfinite():
    def fn(lib, g, norm_type):
        p = lib.zeros(3, requires_grad=True)
        p.grad = g
        lib.nn.utils.clip_grad_norm_([p], 1.0, norm_type=norm_type, error_if_nonfinite=True)
    for bad in (np.nan, np.inf):
        for norm_type in (2.0, "inf", 1):
            assert_same_error(fn, np.array([1.0, bad, 2.0], np.float32), norm_type)
    # without the flag the gradients are scaled by the non-finite norm, as in torch
    out = []
    for lib in (ember, torch):
        p = _params(lib, [np.array([1.0, np.nan], np.float32)], False)[0]
        out.append((lib.nn.utils.clip_grad_norm_([p], 1.0), p.grad))
    assert_same(out[0], out[1])


def test_mixed_dtypes_promote():
    grads = [GRADS[0].astype(np.float64), GRADS[1], GRADS[2].astype(np.float16)]
    out = []
    for lib in (ember, torch):
        ps = _params(lib, grads, False)
        out.append((lib.nn.utils.get_total_norm([p.grad for p in ps]), lib.nn.utils.clip_grad_norm_(ps, 0.1),
                    [p.grad for p in ps]))
    assert_same(out[0][0], out[1][0])
    assert_same(out[0][1], out[1][1])
    assert_same(out[0][2][:2], out[1][2][:2])
    assert_same(out[0][2][2], out[1][2][2], rtol=2e-3, atol=2e-3)  # float16: one rounding apart


def test_get_total_norm_and_clip_grads_with_norm():
    out = []
    for lib in (ember, torch):
        ps = _params(lib, GRADS)
        grads = [p.grad for p in ps if p.grad is not None]
        total = lib.nn.utils.get_total_norm(grads, norm_type=3.0)
        lib.nn.utils.clip_grads_with_norm_(ps, 2.0, total)
        out.append((total, grads, lib.nn.utils.get_total_norm(grads[0]), lib.nn.utils.get_total_norm([])))
    assert_same(out[0], out[1])


@pytest.mark.parametrize("clip_value", [0.5, 2, 10.0])
def test_clip_grad_value(clip_value):
    out = []
    for lib in (ember, torch):
        ps = _params(lib, GRADS + [np.array([np.nan, -np.inf, np.inf], np.float32)])
        assert lib.nn.utils.clip_grad_value_(ps, clip_value) is None
        out.append([p.grad for p in ps[:-1]])
    assert_same(out[0], out[1])


def test_clipping_bumps_grad_versions():
    """As torch's in-place foreach ops bump them: one `_foreach_mul_`, then `_foreach_clamp_min_/max_`."""
    out = []
    for lib in (ember, torch):
        p = _params(lib, GRADS[:1], False)[0]
        v = [p.grad._version]
        lib.nn.utils.clip_grad_norm_([p], 1.0)
        v.append(p.grad._version)
        lib.nn.utils.clip_grad_value_([p], 1.0)
        out.append(v + [p.grad._version])
    assert out[0] == out[1]


META = {  # clipping meta gradients: shapes and dtypes propagate, no data is read (as torch's meta kernels)
    "norm": lambda lib, ps: (lib.nn.utils.clip_grad_norm_(ps, 1.0), [p.grad for p in ps]),
    "norm_inf": lambda lib, ps: lib.nn.utils.clip_grad_norm_(ps, 1.0, norm_type="inf"),
    "total_norm": lambda lib, ps: lib.nn.utils.get_total_norm([p.grad for p in ps], 3.0),
    "value": lambda lib, ps: (lib.nn.utils.clip_grad_value_(ps, 0.5), [p.grad._version for p in ps]),
}


@pytest.mark.parametrize("name", list(META))
def test_clipping_meta_gradients(name):
    out = []
    for lib in (ember, torch):
        ps = []
        for shape, dtype in (((4, 5), lib.float32), ((3,), lib.float64), ((2, 2), lib.float32)):
            p = lib.empty(shape, dtype=dtype, device="meta", requires_grad=True)
            p.grad = lib.empty(shape, dtype=dtype, device="meta")
            ps.append(p)
        out.append(META[name](lib, ps))
    _same_meta(out[0], out[1])


def _same_meta(e, t):
    if isinstance(e, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _same_meta(a, b)
    elif isinstance(e, ember.Tensor):
        assert e.device.type == t.device.type == "meta"
        assert (tuple(e.shape), str(e.dtype).split(".")[-1], e.stride()) == \
            (tuple(t.shape), str(t.dtype).split(".")[-1], t.stride())
    else:
        assert e == t


def test_deprecated_clip_grad_norm():
    out = []
    for lib in (ember, torch):
        ps = _params(lib, GRADS)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            total = lib.nn.utils.clip_grad_norm(ps, 1.0)
        out.append((total, [(w.category, str(w.message).replace("torch.", "ember.")) for w in rec]))
    assert_same(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]
