"""The nn names of issue 15 against torch: unpooling, fractional and 3-d pools, lazy layers (materialization,
state_dict, reprs), the legacy and parallel layers, the torch.* names of nn.functional, nn.init.dirac,
nn.utils (prune, stateless, skip_init, memory formats) and nn.attention (table-driven where the shape allows)."""

import re
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - (torch loads it on demand)
from _harness import pair, run_pair
from compare import assert_same, assert_same_error, check, to_ember, to_torch

import ember

RNG = np.random.default_rng(0)


def arr(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def pooled(nd, shape, k=2, **kw):
    """(values, indices) of torch's max pooling of a random input, as NumPy arrays."""
    fn = getattr(torch.nn.functional, f"max_pool{nd}d")
    v, i = fn(torch.from_numpy(arr(*shape)), k, return_indices=True, **kw)
    return v.numpy(), i.numpy()


# ---- functional: unpooling, fractional pooling, lp_pool3d, conv_tbc, channel shuffles ---------------------------

V1, I1 = pooled(1, (2, 3, 8))
V2, I2 = pooled(2, (2, 3, 6, 7))
V2S, I2S = pooled(2, (3, 6, 6), k=3, stride=2, padding=1)
V3, I3 = pooled(3, (1, 2, 4, 4, 6))
SAMPLES2 = RNG.uniform(size=(2, 3, 2)).astype(np.float32)
SAMPLES3 = RNG.uniform(size=(2, 2, 3)).astype(np.float32)

FUNCTIONAL = {
    "max_unpool1d": (lambda lib, v, i: lib.nn.functional.max_unpool1d(v, i, 2), V1, I1),
    "max_unpool1d_size": (lambda lib, v, i: lib.nn.functional.max_unpool1d(v, i, 2, output_size=[9]), V1, I1),
    "max_unpool2d": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i, 2), V2, I2),
    "max_unpool2d_size": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i, 2, output_size=(2, 3, 7, 7)),
                          V2, I2),
    "max_unpool2d_unbatched": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i, 3, 2, 1), V2S, I2S),
    "max_unpool3d": (lambda lib, v, i: lib.nn.functional.max_unpool3d(v, i, 2), V3, I3),
    "max_unpool2d_f64": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v.double(), i, 2), V2, I2),
    "frac2d": (lambda lib, x, s: lib.nn.functional.fractional_max_pool2d(
        x, 3, output_size=(4, 5), return_indices=True, _random_samples=s), arr(2, 3, 9, 8), SAMPLES2),
    "frac2d_ratio": (lambda lib, x, s: lib.nn.functional.fractional_max_pool2d_with_indices(
        x, (2, 3), output_ratio=(0.5, 0.6), _random_samples=s), arr(2, 3, 9, 10), SAMPLES2),
    "frac2d_f64": (lambda lib, x, s: lib.nn.functional.fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=s), arr(2, 3, 7, 7, dtype=np.float64), SAMPLES2.astype(np.float64)),
    "frac2d_unbatched": (lambda lib, x, s: lib.nn.functional.fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=s[:1]), arr(3, 7, 6), SAMPLES2),
    "frac3d": (lambda lib, x, s: lib.nn.functional.fractional_max_pool3d(
        x, 2, output_size=(3, 3, 4), return_indices=True, _random_samples=s), arr(2, 2, 6, 7, 8), SAMPLES3),
    "frac3d_ratio": (lambda lib, x, s: lib.nn.functional.fractional_max_pool3d_with_indices(
        x, 2, output_ratio=0.5, _random_samples=s), arr(2, 2, 6, 7, 8), SAMPLES3),
    "lp_pool3d": (lambda lib, x: lib.nn.functional.lp_pool3d(x, 2, 2), arr(1, 2, 4, 4, 6)),
    "lp_pool3d_stride": (lambda lib, x: lib.nn.functional.lp_pool3d(x, 3, (2, 1, 2), (1, 2, 2), True),
                         arr(2, 4, 5, 5) ** 2),
    "lp_pool2d_inf": (lambda lib, x: lib.nn.functional.lp_pool2d(x, float("inf"), 2), arr(2, 3, 6, 6)),
    "lp_pool1d_-inf": (lambda lib, x: lib.nn.functional.lp_pool1d(x, -float("inf"), 3), arr(2, 3, 9)),
    "adaptive_max_pool3d_with_indices": (lambda lib, x: lib.nn.functional.adaptive_max_pool3d_with_indices(
        x, (2, 3, 2)), arr(1, 2, 5, 6, 4)),
    "conv_tbc": (lambda lib, x, w, b: lib.nn.functional.conv_tbc(x, w, b, 1), arr(7, 2, 3), arr(3, 3, 4), arr(4)),
    "torch.conv_tbc": (lambda lib, x, w, b: lib.conv_tbc(x, w, b), arr(7, 2, 3), arr(2, 3, 5), arr(5)),
}

NO_GRAD = {  # (torch has no derivative for native_channel_shuffle)
    "native_channel_shuffle": (lambda lib, x: lib.native_channel_shuffle(x, 3), arr(2, 6, 2, 2)),
    "F.native_channel_shuffle": (lambda lib, x: lib.nn.functional.native_channel_shuffle(x, 2), arr(2, 4, 3)),
    "native_channel_shuffle_noncontig": (lambda lib, x: lib.native_channel_shuffle(x.transpose(2, 3), 2),
                                         arr(2, 4, 3, 2)),
    "channel_shuffle_noncontig": (lambda lib, x: lib.channel_shuffle(x.transpose(2, 3), 2), arr(2, 4, 3, 2)),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional(name):
    fn, *inputs = FUNCTIONAL[name]
    grad = [0] if inputs[0].dtype.kind == "f" else None
    check(fn, *inputs, grad=grad)


@pytest.mark.parametrize("name", list(NO_GRAD))
def test_functional_no_grad(name):
    fn, *inputs = NO_GRAD[name]
    check(fn, *inputs)


ERRORS = {
    "unpool_bad_index": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i * 9, 2), V2, I2),
    "unpool3d_bad_index": (lambda lib, v, i: lib.nn.functional.max_unpool3d(v, i * 20, 2), V3, I3),
    "unpool_float_index": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i.float(), 2), V2, I2),
    "unpool3d_float_index": (lambda lib, v, i: lib.nn.functional.max_unpool3d(v, i.float(), 2), V3, I3),
    "unpool_shape": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i[..., :1], 2), V2, I2),
    "unpool_size": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i, 2, output_size=(9, 9)), V2, I2),
    "unpool_size_len": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v, i, 2, output_size=(3,)), V2, I2),
    "unpool_dims": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v[0, 0], i[0, 0], 2), V2, I2),
    "unpool3d_dims": (lambda lib, v, i: lib.nn.functional.max_unpool3d(v[0], i[0], 2), V2, I2),
    "unpool_long": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v.long(), i, 2), V2, I2),
    "unpool_bool": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v > 0, i, 2), V2, I2),
    "unpool_empty": (lambda lib, v, i: lib.nn.functional.max_unpool2d(v[:, :0], i[:, :0], 2), V2, I2),
    "frac_no_size": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2), arr(1, 2, 6, 6)),
    "frac_ratio_number": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 2, output_ratio=0.5),
                          arr(1, 2, 6, 6)),
    "frac_too_large": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(x, 4, output_size=5),
                       arr(1, 2, 6, 6)),
    "frac3d_too_large": (lambda lib, x: lib.nn.functional.fractional_max_pool3d(x, (2, 6, 2), output_size=2),
                         arr(1, 2, 5, 6, 7)),
    "frac_samples_dtype": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(
        x, 2, output_size=2, _random_samples=lib.rand(1, 2, 2, dtype=lib.float64)), arr(1, 2, 6, 6)),
    "frac_samples_channels": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(
        x, 2, output_size=2, _random_samples=lib.rand(1, 3, 2)), arr(1, 2, 6, 6)),
    "frac_empty": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(x[:, :0], 2, output_size=2),
                   arr(1, 2, 6, 6)),
    "frac_long": (lambda lib, x: lib.nn.functional.fractional_max_pool2d(x.long(), 2, output_size=2),
                  arr(1, 2, 6, 6)),
    "frac3d_3d_input": (lambda lib, x: lib.nn.functional.fractional_max_pool3d(x, 2, output_size=2),
                        arr(2, 5, 6)),
    "tbc_input_dims": (lambda lib, x, w, b: lib.conv_tbc(x[0], w, b), arr(5, 2, 3), arr(2, 3, 4), arr(4)),
    "tbc_weight_dims": (lambda lib, x, w, b: lib.conv_tbc(x, w[0], b), arr(5, 2, 3), arr(2, 3, 4), arr(4)),
    "tbc_bias_dims": (lambda lib, x, w, b: lib.conv_tbc(x, w, b[None]), arr(5, 2, 3), arr(2, 3, 4), arr(4)),
    "tbc_channels": (lambda lib, x, w, b: lib.conv_tbc(x, w, b), arr(5, 2, 3), arr(2, 4, 4), arr(4)),
    "tbc_bias_size": (lambda lib, x, w, b: lib.conv_tbc(x, w, b), arr(5, 2, 3), arr(2, 3, 4), arr(5)),
    "native_channel_shuffle_groups": (lambda lib, x: lib.native_channel_shuffle(x, 3), arr(1, 4, 2)),
    "channel_shuffle_groups": (lambda lib, x: lib.nn.functional.channel_shuffle(x, 3), arr(1, 4, 2)),
    "channel_shuffle_zero": (lambda lib, x: lib.channel_shuffle(x, 0), arr(1, 4, 2)),
    "native_channel_shuffle_negative": (lambda lib, x: lib.native_channel_shuffle(x, -1), arr(1, 4, 2)),
    "channel_shuffle_dims": (lambda lib, x: lib.channel_shuffle(x, 2), arr(4, 2)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    fn, *inputs = ERRORS[name]
    assert_same_error(fn, *inputs)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_same_seed(nd):
    """Without _random_samples both draw their samples with rand after the same seed: torch's windows."""
    x = arr(2, 3, *([9, 8, 7][:nd]))

    def fn(lib, x):
        lib.manual_seed(7)
        f = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        return f(x, 2, output_ratio=(0.5,) * nd, return_indices=True)
    check(fn, x, grad=[0])


# ---- torch.* names of nn.functional (torch's signatures) ---------------------------------------------------------

TORCH_NAMES = {
    "conv1d": (lambda lib, x, w: lib.conv1d(x, w, None, 1, "same"), arr(2, 3, 8), arr(4, 3, 3)),
    "conv2d": (lambda lib, x, w: lib.conv2d(x, w, stride=2, padding=1, groups=1), arr(1, 3, 6, 6), arr(2, 3, 3, 3)),
    "conv3d": (lambda lib, x, w: lib.conv3d(x, w), arr(1, 2, 4, 4, 4), arr(2, 2, 2, 2, 2)),
    "conv_transpose1d": (lambda lib, x, w: lib.conv_transpose1d(x, w, None, 2, 1, 1), arr(2, 3, 5), arr(3, 2, 3)),
    "conv_transpose2d": (lambda lib, x, w: lib.conv_transpose2d(x, w, stride=2), arr(1, 3, 4, 4), arr(3, 2, 2, 2)),
    "conv_transpose3d": (lambda lib, x, w: lib.conv_transpose3d(x, w), arr(1, 2, 3, 3, 3), arr(2, 2, 2, 2, 2)),
    "avg_pool1d": (lambda lib, x: lib.avg_pool1d(x, 3, 2, 1, True, False), arr(2, 3, 10)),
    "adaptive_avg_pool1d": (lambda lib, x: lib.adaptive_avg_pool1d(x, 4), arr(2, 3, 10)),
    "bilinear": (lambda lib, a, b, w, c: lib.bilinear(a, b, w, c), arr(4, 3), arr(4, 5), arr(2, 3, 5), arr(2)),
    "prelu": (lambda lib, x, w: lib.prelu(x, w), arr(2, 3, 4), np.abs(arr(3))),
    "pixel_shuffle": (lambda lib, x: lib.pixel_shuffle(x, 2), arr(1, 8, 3, 3)),
    "pixel_unshuffle": (lambda lib, x: lib.pixel_unshuffle(x, 2), arr(1, 2, 4, 6)),
    "channel_shuffle": (lambda lib, x: lib.channel_shuffle(x, 2), arr(1, 4, 3, 3)),
    "pairwise_distance": (lambda lib, a, b: lib.pairwise_distance(a, b, 3.0, 1e-6, True), arr(4, 5), arr(4, 5)),
    "pdist": (lambda lib, x: lib.pdist(x, 1.5), arr(5, 3)),
    "cosine_similarity": (lambda lib, a, b: lib.cosine_similarity(a, b, 0), arr(4, 5), arr(4, 5)),
    "hardshrink": (lambda lib, x: lib.hardshrink(x, 0.3), arr(3, 4)),
    "Tensor.hardshrink": (lambda lib, x: x.hardshrink(), arr(3, 4)),
    "Tensor.hardshrink_lambd": (lambda lib, x: x.hardshrink(lambd=1.0), arr(3, 4)),
    "relu_": (lambda lib, x: lib.relu_(x.clone()), arr(3, 4)),
    "selu_": (lambda lib, x: lib.selu_(x.clone()), arr(3, 4)),
    "celu_": (lambda lib, x: lib.celu_(x.clone(), 0.5), arr(3, 4)),
    "rrelu_": (lambda lib, x: lib.rrelu_(x.clone(), 0.1, 0.3), arr(3, 4)),
    "F.rrelu_": (lambda lib, x: lib.nn.functional.rrelu_(x.clone()), arr(3, 4)),
    "rrelu_training": (lambda lib, x: (lib.manual_seed(5), lib.rrelu_(x.clone(), 0.1, 0.3, True),
                                       lib.rand(2))[1:], arr(30, 20)),
    "F.rrelu_training_inplace": (lambda lib, x: (lib.manual_seed(5), lib.nn.functional.rrelu(
        x.clone(), training=True, inplace=True))[1], arr(4, 5).T),
    "threshold_": (lambda lib, x: lib.threshold_(x.clone(), 0.1, 2.0), arr(3, 4)),
}


@pytest.mark.parametrize("name", list(TORCH_NAMES))
def test_torch_names(name):
    fn, *inputs = TORCH_NAMES[name]
    check(fn, *inputs, grad=[0], rtol=1e-5, atol=1e-5)


def test_hardshrink_errors():
    assert_same_error(lambda lib, x: lib.hardshrink(x.long()), arr(3))
    assert_same_error(lambda lib, x: x.hardshrink(lambd="a"), arr(3))


# ---- modules from the same weights --------------------------------------------------------------------------------

LAYERS = [
    ("RReLU", (0.1, 0.3), {}, [(20, 10)]),  # (train mode draws as torch's after the same seed)
    ("LPPool3d", (2, 2), {}, [(1, 2, 4, 4, 6)]),
    ("LPPool3d", (1.5, (2, 1, 2)), {"stride": 1, "ceil_mode": True}, [(2, 3, 4, 5)]),
    ("CrossMapLRN2d", (3,), {"alpha": 0.1, "beta": 0.75, "k": 1}, [(2, 7, 3, 3)]),
    ("CrossMapLRN2d", (5, 1e-2, 0.5, 2), {}, [(2, 4, 3, 2)]),
    ("CrossMapLRN2d", (4,), {"alpha": 1.0}, [(1, 9, 2, 2)]),
    ("SyncBatchNorm", (3,), {}, [(4, 3, 5)]),
    ("SyncBatchNorm", (3,), {"momentum": None, "affine": False}, [(4, 3, 2, 2, 2)]),
    ("NLLLoss2d", (), {}, [(3, 4, 2, 2), ("long", (3, 2, 2), 4)]),
    ("FractionalMaxPool2d", (2,), {"output_size": 3, "_random_samples": to_torch(SAMPLES2[:1, :2])},
     [(1, 2, 7, 7)]),
    ("FractionalMaxPool3d", (2,), {"output_size": (3, 2, 3), "_random_samples": to_torch(SAMPLES3)},
     [(2, 2, 6, 7, 8)]),
]


def _pair_of(name, args, kwargs):
    ekw = {k: to_ember(v.numpy()) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmod = getattr(torch.nn, name)(*args, **kwargs)
        emod = getattr(ember.nn, name)(*args, **ekw)
    emod.load_state_dict({k: to_ember(v.numpy().copy()) for k, v in tmod.state_dict().items()})
    return emod, tmod


@pytest.mark.parametrize("i", range(len(LAYERS)))
@pytest.mark.parametrize("train", [True, False])
def test_layers(i, train):
    name, args, kwargs, specs = LAYERS[i]
    emod, tmod = _pair_of(name, args, kwargs)
    emod.train(train)
    tmod.train(train)
    assert repr(emod) == repr(tmod)
    from _harness import make_inputs

    arrays = make_inputs(specs, np.random.default_rng(i))
    torch.manual_seed(1)
    ember.manual_seed(1)
    run_pair(emod, tmod, arrays, rtol=1e-5, atol=1e-5)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    for k, v in tmod.state_dict().items():
        assert_same(emod.state_dict()[k], v, check_stride=False, path=k)


@pytest.mark.parametrize("nd,k", [(1, 2), (2, 2), (2, (3, 2)), (3, 2)])
def test_max_unpool_modules(nd, k):
    shape = (2, 3) + (6, 7, 4)[:nd]
    tpool = getattr(torch.nn, f"MaxPool{nd}d")(k, return_indices=True)
    x = torch.from_numpy(arr(*shape))
    v, idx = tpool(x)
    tmod = getattr(torch.nn, f"MaxUnpool{nd}d")(k)
    emod = getattr(ember.nn, f"MaxUnpool{nd}d")(k)
    assert repr(emod) == repr(tmod)
    check(lambda lib, v, i: getattr(lib.nn, f"MaxUnpool{nd}d")(k)(v, i, output_size=x.shape), v.numpy(),
          idx.numpy(), grad=[0])


def test_module_errors():
    def make(name, *args, **kwargs):
        return lambda lib: getattr(lib.nn, name)(*args, **kwargs)
    for fn in [make("FractionalMaxPool2d", 2), make("FractionalMaxPool2d", 2, output_size=2, output_ratio=0.5),
               make("FractionalMaxPool2d", 2, output_ratio=1.5), make("FractionalMaxPool3d", 0, output_size=2),
               make("FractionalMaxPool3d", (2, -1, 2), output_size=2),
               make("AdaptiveLogSoftmaxWithLoss", 8, 10, []), make("AdaptiveLogSoftmaxWithLoss", 8, 10, [5, 3]),
               make("AdaptiveLogSoftmaxWithLoss", 8, 10, [2, 10])]:
        assert_same_error(fn)
    assert_same_error(lambda lib, x: lib.nn.SyncBatchNorm(3)(x), arr(3))
    assert_same_error(lambda lib, x: lib.nn.SyncBatchNorm(3)(x[:, :0]), arr(2, 3))
    assert_same_error(lambda lib, x: lib.nn.CrossMapLRN2d(3)(x), arr(2, 3, 4))


def test_nll_loss2d_warns():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        ember.nn.NLLLoss2d()


def test_sync_batchnorm_convert():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3), torch.nn.Sequential(
        torch.nn.BatchNorm1d(3, affine=False)))
    enet = ember.nn.Sequential(ember.nn.Conv2d(2, 3, 1), ember.nn.BatchNorm2d(3), ember.nn.Sequential(
        ember.nn.BatchNorm1d(3, affine=False)))
    enet.load_state_dict({k: to_ember(v.numpy()) for k, v in tnet.state_dict().items()})
    ts = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tnet)
    es = ember.nn.SyncBatchNorm.convert_sync_batchnorm(enet)
    assert repr(es) == repr(ts)
    assert es[1].weight is enet[1].weight
    run_pair(es[:2], ts[:2], [arr(2, 2, 3, 3)], rtol=1e-5, atol=1e-5)


def test_adaptive_log_softmax():
    emod, tmod = _pair_of("AdaptiveLogSoftmaxWithLoss", (8, 12, [3, 7]), {"div_value": 2.0})
    assert repr(emod) == repr(tmod)
    x = arr(10, 8)
    target = np.array([0, 1, 5, 11, 3, 4, 8, 2, 9, 6])
    te, tt = to_ember(x, True), to_torch(x, True)
    eo, to = emod(te, to_ember(target)), tmod(tt, to_torch(target))
    assert type(eo).__name__ == "_ASMoutput" and eo._fields == to._fields
    assert_same(eo.output, to.output, rtol=1e-5, atol=1e-5)
    assert_same(eo.loss, to.loss, rtol=1e-5, atol=1e-5)
    eo.loss.backward()
    to.loss.backward()
    assert_same(te.grad, tt.grad, rtol=1e-5, atol=1e-5)
    for (n, p), (_, q) in zip(emod.named_parameters(), tmod.named_parameters()):
        assert_same(p.grad, q.grad, rtol=1e-5, atol=1e-5, path=n)
    assert_same(emod.log_prob(to_ember(x)), tmod.log_prob(to_torch(x)), rtol=1e-5, atol=1e-5)
    assert_same(emod.predict(to_ember(x)), tmod.predict(to_torch(x)))
    one_e, one_t = emod(to_ember(x[0]), ember.tensor(4)), tmod(to_torch(x[0]), torch.tensor(4))
    assert_same(one_e.output, one_t.output, rtol=1e-5, atol=1e-5)
    for bad_x, bad_t in [(x, target[:3]), (x[0], target), (x, target[None]), (x[:2], np.array([0, 12]))]:
        assert_same_error(lambda lib, a, b: tmod(a, b) if lib is torch else emod(a, b), bad_x, bad_t)


def test_data_parallel():
    emod, tmod = pair("Linear", (4, 3))
    edp, tdp = ember.nn.DataParallel(emod), torch.nn.DataParallel(tmod)
    assert edp.device_ids == tdp.device_ids == []
    assert repr(edp) == repr(tdp)
    assert list(edp.state_dict()) == list(tdp.state_dict())
    run_pair(edp, tdp, [arr(5, 4)], rtol=1e-5, atol=1e-5)
    assert ember.nn.parallel.DataParallel is ember.nn.DataParallel


@pytest.mark.parametrize("kwargs", [None, {}, {"device": "cpu"}, {"dtype": 1, "factory_kwargs": {"device": 2}},
                                    {"factory_kwargs": {"dtype": 1}, "dtype": 3}, {"bad": 1}])
def test_factory_kwargs(kwargs):
    try:
        want = torch.nn.factory_kwargs(kwargs)
    except TypeError as e:
        with pytest.raises(TypeError, match=re.escape(str(e))):
            ember.nn.factory_kwargs(kwargs)
        return
    assert ember.nn.factory_kwargs(kwargs) == want


# ---- lazy modules ------------------------------------------------------------------------------------------------

LAZY = [
    ("LazyConv1d", (4, 3), {}, (2, 3, 9)),
    ("LazyConv1d", (4, 3), {"groups": 2, "bias": False}, (6, 9)),
    ("LazyConv2d", (4, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 3, 5, 5)),
    ("LazyConv3d", (2, 2), {"stride": 2}, (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (2, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2}, (2, 4, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"affine": False}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"momentum": None, "bias": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 2, 3)),
    ("LazyLinear", (3,), {}, (4, 5)),
]


@pytest.mark.parametrize("i", range(len(LAZY)))
def test_lazy(i):
    name, args, kwargs, shape = LAZY[i]
    torch.manual_seed(i)
    tmod = getattr(torch.nn, name)(*args, **kwargs)
    ember.manual_seed(i)
    emod = getattr(ember.nn, name)(*args, **kwargs)
    assert repr(emod) == repr(tmod)
    assert emod.has_uninitialized_params() == tmod.has_uninitialized_params()
    tsd, esd = tmod.state_dict(), emod.state_dict()
    assert list(esd) == list(tsd)
    assert [type(v).__name__ for v in esd.values()] == [type(v).__name__ for v in tsd.values()]
    x = arr(*shape)
    tout, eout = tmod(to_torch(x)), emod(to_ember(x))  # same seed: the same initial weights
    assert type(emod).__name__ == type(tmod).__name__ and not hasattr(emod, "_initialize_hook")
    assert isinstance(emod, getattr(ember.nn, type(tmod).__name__))
    assert repr(emod) == repr(tmod)
    assert_same(eout, tout, rtol=1e-5, atol=1e-5, check_stride=False)
    for k, v in tmod.state_dict().items():
        assert_same(emod.state_dict()[k], v, rtol=1e-6, atol=1e-6, check_stride=False, path=k)
    assert all(type(p) is ember.nn.Parameter for p in emod.parameters())


@pytest.mark.parametrize("i", [0, 3, 5, 8, 12])
def test_lazy_load_state_dict(i):
    """An uninitialized lazy module takes an initialized state: the placeholders take its shapes."""
    name, args, kwargs, shape = LAZY[i]
    torch.manual_seed(0)
    src = getattr(torch.nn, name)(*args, **kwargs)
    src(to_torch(arr(*shape)))
    tmod = getattr(torch.nn, name)(*args, **kwargs)
    emod = getattr(ember.nn, name)(*args, **kwargs)
    tmod.load_state_dict(src.state_dict())
    emod.load_state_dict({k: to_ember(v.numpy()) for k, v in src.state_dict().items()})
    assert type(emod).__name__ == type(tmod).__name__  # still lazy until the first call
    assert emod.has_uninitialized_params() == tmod.has_uninitialized_params()
    x = arr(*shape)
    try:
        want = tmod(to_torch(x))
    except ValueError:  # (a lazy instance norm keeps num_features 0 after a load: torch's check fails)
        assert_same_error(lambda lib, x: (emod if lib is ember else tmod)(x), x)
        return
    assert_same(emod(to_ember(x)), want, rtol=1e-5, atol=1e-5, check_stride=False)
    assert type(emod).__name__ == type(tmod).__name__


def test_lazy_errors():
    assert_same_error(lambda lib, x: lib.nn.LazyConv2d(4, 3)(x), arr(2, 3))
    assert_same_error(lambda lib, x: lib.nn.LazyConv2d(4, 3, groups=2)(x), arr(2, 3, 4, 4))
    assert_same_error(lambda lib: lib.nn.LazyConv2d(4, 3).weight.shape)
    assert_same_error(lambda lib: lib.nn.DataParallel(lib.nn.LazyLinear(3)).module._replicate_for_data_parallel())


def test_lazy_mixin_subclass():
    """A user's lazy module: initialize_parameters materializes, then cls_to_become takes over."""
    def build(lib):
        class Lazy(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.UninitializedParameter()

            def initialize_parameters(self, x):
                with lib.no_grad():
                    self.w.materialize((x.shape[-1],))
                    self.w.fill_(2.0)

            def forward(self, x):
                return x * self.w
        return Lazy()
    check(lambda lib, x: build(lib)(x), arr(3, 4))
    assert_same_error(lambda lib: lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(
        lib.nn.LazyLinear(2), None))


# ---- nn.init.dirac / eye --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((2, 2, 1, 3, 3), 1)])
def test_init_dirac(shape, groups):
    def fn(lib, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return lib.nn.init.dirac(x, groups)
    check(fn, np.zeros(shape, np.float32))
    with pytest.warns(FutureWarning, match="`nn.init.dirac` is now deprecated in favor of `nn.init.dirac_`."):
        ember.nn.init.dirac(ember.empty(*shape), groups)
    with pytest.warns(FutureWarning, match="`nn.init.eye` is now deprecated in favor of `nn.init.eye_`."):
        assert_same(ember.nn.init.eye(ember.empty(2, 3)), torch.eye(2, 3))


# ---- nn.utils: prune, stateless, skip_init, memory formats ----------------------------------------------------------


def _linear_pair(seed=0, shape=(5, 4)):
    torch.manual_seed(seed)
    t = torch.nn.Linear(*shape)
    e = ember.nn.Linear(*shape)
    e.load_state_dict({k: to_ember(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


def _conv_pair(seed=0):
    torch.manual_seed(seed)
    t = torch.nn.Conv2d(3, 4, 3)
    e = ember.nn.Conv2d(3, 4, 3)
    e.load_state_dict({k: to_ember(v.numpy()) for k, v in t.state_dict().items()})
    return e, t


PRUNE = {
    "identity": lambda P, m: P.identity(m, "weight"),
    "random_unstructured": lambda P, m: P.random_unstructured(m, "weight", amount=0.3),
    "random_unstructured_int": lambda P, m: P.random_unstructured(m, "bias", amount=2),
    "l1_unstructured": lambda P, m: P.l1_unstructured(m, "weight", amount=0.5),
    "l1_unstructured_scores": lambda P, m: P.l1_unstructured(
        m, "weight", amount=4, importance_scores=m.weight.detach().flip(0)),
    "random_structured": lambda P, m: P.random_structured(m, "weight", amount=0.5, dim=1),
    "ln_structured": lambda P, m: P.ln_structured(m, "weight", amount=1, n=2, dim=0),
    "ln_structured_inf": lambda P, m: P.ln_structured(m, "weight", amount=0.4, n=float("inf"), dim=-1),
    "custom_from_mask": lambda P, m: P.custom_from_mask(m, "bias", mask=(m.bias.detach() > 0).float()),
    "iterative": lambda P, m: (P.l1_unstructured(m, "weight", amount=0.2), P.random_unstructured(
        m, "weight", amount=0.3), P.ln_structured(m, "weight", amount=1, n=1, dim=0)),
}


@pytest.mark.parametrize("name", list(PRUNE))
@pytest.mark.parametrize("module", ["linear", "conv"])
def test_prune(name, module):
    e, t = _linear_pair() if module == "linear" else _conv_pair()
    torch.manual_seed(3)
    ember.manual_seed(3)
    PRUNE[name](torch.nn.utils.prune, t)
    PRUNE[name](ember.nn.utils.prune, e)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    for k, v in t.state_dict().items():
        assert_same(e.state_dict()[k], v, path=k)
    assert ember.nn.utils.prune.is_pruned(e) == torch.nn.utils.prune.is_pruned(t)
    assert len(e._forward_pre_hooks) == len(t._forward_pre_hooks)
    x = arr(2, 5) if module == "linear" else arr(1, 3, 5, 5)
    run_pair(e, t, [x], rtol=1e-5, atol=1e-5)
    for tensor_name in ("weight", "bias"):
        if hasattr(t, tensor_name + "_orig"):
            torch.nn.utils.prune.remove(t, tensor_name)
            ember.nn.utils.prune.remove(e, tensor_name)
    assert list(e.state_dict()) == list(t.state_dict())
    assert ember.nn.utils.prune.is_pruned(e) == torch.nn.utils.prune.is_pruned(t)


def test_prune_global():
    pairs = [_linear_pair(0), _linear_pair(1, (4, 3))]
    torch.manual_seed(0)
    ember.manual_seed(0)
    for lib, idx in ((torch, 1), (ember, 0)):
        P = lib.nn.utils.prune
        mods = [p[idx] for p in pairs]
        P.global_unstructured([(mods[0], "weight"), (mods[1], "weight"), (mods[1], "bias")],
                              pruning_method=P.L1Unstructured, amount=9)
    for e, t in pairs:
        for k, v in t.state_dict().items():
            assert_same(e.state_dict()[k], v, path=k)


def test_prune_errors():
    def with_linear(fn):
        return lambda lib: fn(lib.nn.utils.prune, lib.nn.Linear(5, 4))
    for fn in [lambda P, m: P.random_unstructured(m, "weight", amount=1.5),
               lambda P, m: P.random_unstructured(m, "weight", amount=-1),
               lambda P, m: P.random_unstructured(m, "weight", amount=21),
               lambda P, m: P.random_structured(m, "bias", amount=0.5, dim=0),
               lambda P, m: P.l1_unstructured(m, "nothing", amount=0.5),
               lambda P, m: P.remove(m, "weight"),
               lambda P, m: P.global_unstructured(m, pruning_method=P.L1Unstructured, amount=0.5),
               lambda P, m: P.global_unstructured([(m, "weight")], pruning_method=P.RandomStructured,
                                                  amount=0.5)]:
        assert_same_error(with_linear(fn))


def test_prune_container_and_classes():
    P = ember.nn.utils.prune
    for name in ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
                 "RandomStructured", "LnStructured", "CustomFromMask"]:
        assert getattr(P, name).__name__ == name
    e, _ = _linear_pair()
    P.l1_unstructured(e, "weight", amount=0.2)
    P.l1_unstructured(e, "weight", amount=0.2)
    hooks = [h for h in e._forward_pre_hooks.values() if isinstance(h, P.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], P.PruningContainer) and len(hooks[0]) == 2


def test_functional_call():
    e, t = _linear_pair()
    w, b = arr(4, 5), arr(4)

    def fn(lib, x, w, b):
        mod = e if lib is ember else t
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            out = lib.nn.utils.stateless.functional_call(mod, {"weight": w, "bias": b}, (x,))
            out2 = lib.nn.utils.stateless.functional_call(mod, {"weight": w}, x)
        return out, out2, mod.weight * 1
    check(fn, arr(3, 5), w, b, grad=[1, 2])
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        ember.nn.utils.stateless.functional_call(e, {}, (ember.ones(2, 5),))
    for d in [{"foo": np.zeros(1, np.float32)}, {"weight": w}, [{"weight": w}]]:
        assert_same_error(lambda lib, d: lib.nn.utils.stateless.functional_call(
            e if lib is ember else t, d, (lib.zeros(5),), strict=True), d)


def test_functional_call_tied():
    def fn(lib, w):
        a = lib.nn.Linear(3, 3, bias=False)
        net = lib.nn.Sequential(a, lib.nn.Linear(3, 3, bias=False))
        net[1].weight = a.weight
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return lib.nn.utils.stateless.functional_call(net, {"0.weight": w}, (lib.ones(2, 3),))
    check(fn, arr(3, 3), grad=[0])


def test_skip_init():
    torch.manual_seed(0)
    t = torch.nn.utils.skip_init(torch.nn.Linear, 4, 3, bias=False)
    e = ember.nn.utils.skip_init(ember.nn.Linear, 4, 3, bias=False)
    assert repr(e) == repr(t) and e.weight.shape == t.weight.shape and e.weight.device.type == "cpu"
    assert_same_error(lambda lib: lib.nn.utils.skip_init(lib.nn.Module))
    assert_same_error(lambda lib: lib.nn.utils.skip_init(int))


@pytest.mark.parametrize("nd", [2, 3])
def test_convert_conv_weight_memory_format(nd):
    def fn(lib, x):
        conv = getattr(lib.nn, f"Conv{nd}d")(2, 3, 1)
        tconv = getattr(lib.nn, f"ConvTranspose{nd}d")(3, 2, 1)
        with lib.no_grad():
            conv.weight.copy_(x)
        net = lib.nn.Sequential(conv, lib.nn.Sequential(tconv))
        fmt = lib.channels_last if nd == 2 else lib.channels_last_3d
        out = getattr(lib.nn.utils, f"convert_conv{nd}d_weight_memory_format")(net, fmt)
        return out is net, out[0].weight * 1, type(out[1][0].weight).__name__
    check(fn, arr(3, 2, *(1,) * nd), check_stride=False)


# ---- nn.attention ----------------------------------------------------------------------------------------------


def _sdpa(lib, backends, q, **kw):
    from importlib import import_module

    A = import_module(f"{lib.__name__}.nn.attention")
    chosen = [getattr(A.SDPBackend, b) for b in backends] if isinstance(backends, list) else \
        getattr(A.SDPBackend, backends)
    with A.sdpa_kernel(chosen, **kw):
        return lib.nn.functional.scaled_dot_product_attention(q, q, q)


@pytest.mark.parametrize("backends", ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION",
                                      "OVERRIDEABLE", ["EFFICIENT_ATTENTION", "FLASH_ATTENTION"],
                                      ["CUDNN_ATTENTION", "EFFICIENT_ATTENTION"], []])
@pytest.mark.parametrize("priority", [False, True])
def test_sdpa_kernel(backends, priority):
    check(lambda lib, q: _sdpa(lib, backends, q, set_priority=priority), arr(1, 2, 3, 4), grad=[0],
          rtol=1e-5, atol=1e-5)
    check(lambda lib, q: lib.nn.functional.scaled_dot_product_attention(q, q, q), arr(1, 2, 3, 4),
          rtol=1e-5, atol=1e-5)  # (restored on exit)


def test_sdpa_kernel_decorator_and_enum():
    from torch.nn.attention import SDPBackend as TB

    from ember.nn.attention import SDPBackend, sdpa_kernel

    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == {k: int(v) for k, v in TB.__members__.items()}
    assert repr(SDPBackend.MATH) == repr(TB.MATH)

    @sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION)
    def run(q):
        return ember.nn.functional.scaled_dot_product_attention(q, q, q)
    with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found"):
        run(ember.ones(1, 2, 2))
    ember.nn.functional.scaled_dot_product_attention(ember.ones(1, 2, 2), ember.ones(1, 2, 2), ember.ones(1, 2, 2))
    assert_same_error(lambda lib: next(iter(__import__(f"{lib.__name__}.nn.attention", fromlist=["x"])
                                            .sdpa_kernel("MATH").__enter__())))


def test_flash_attention_registry():
    import torch.nn.attention as TA

    import ember.nn.attention as EA
    assert EA.list_flash_attention_impls() == TA.list_flash_attention_impls()
    assert EA.current_flash_attention_impl() == TA.current_flash_attention_impl()
    assert EA.WARN_FOR_UNFUSED_KERNELS == TA.WARN_FOR_UNFUSED_KERNELS
    for impl in ["FA3", "FA4", "nope"]:
        assert_same_error(lambda lib: __import__(f"{lib.__name__}.nn.attention", fromlist=["x"])
                          .activate_flash_attention_impl(impl))

    class Handle:
        removed = 0

        def remove(self):
            Handle.removed += 1
    EA.register_flash_attention_impl("Mine", register_fn=Handle)
    try:
        EA.activate_flash_attention_impl("Mine")
        assert EA.current_flash_attention_impl() == "Mine"
        EA.restore_flash_attention_impl()
        assert EA.current_flash_attention_impl() is None and Handle.removed == 1
    finally:
        EA._FLASH_ATTENTION_IMPLS.pop("Mine")


# ---- linear_cross_entropy, grouped_mm, the scaled-matmul enums ------------------------------------------------------

TARGET = RNG.integers(0, 5, size=6)
TARGET_IGNORED = np.where(np.arange(6) % 3 == 0, 2, TARGET)
LCE = {
    "plain": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w, t), arr(6, 4), arr(5, 4), TARGET),
    "bias_sum": (lambda lib, x, w, b, t: lib.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b,
                                                                                 reduction="sum"),
                 arr(6, 4), arr(5, 4), arr(5), TARGET),
    "weight_ignore_smooth": (lambda lib, x, w, cw, t: lib.nn.functional.linear_cross_entropy(
        x, w, t, weight=cw, ignore_index=2, label_smoothing=0.1), arr(6, 4), arr(5, 4), np.abs(arr(5)),
        TARGET_IGNORED),
    "none": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w, t, reduction="none"),
             arr(6, 4), arr(5, 4), TARGET),
    "unbatched": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w, t), arr(4), arr(5, 4),
                  np.array(3)),
    "k_dim": (lambda lib, x, w, b, t: lib.nn.functional.linear_cross_entropy(x, w, t, linear_bias=b),
              arr(6, 4), arr(5, 3, 4), arr(5, 3), RNG.integers(0, 5, size=(6, 3))),
    "probabilities": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w, t.softmax(-1)),
                      arr(6, 4), arr(5, 4), arr(6, 5)),
}


@pytest.mark.parametrize("name", list(LCE))
def test_linear_cross_entropy(name):
    fn, *inputs = LCE[name]
    check(fn, *inputs, grad=[0, 1] + ([2] if name == "bias_sum" or name == "k_dim" else []), rtol=1e-5,
          atol=1e-5)


LCE_ERRORS = {
    "input_dims": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x[None], w, t), arr(6, 4),
                   arr(5, 4), TARGET),
    "weight_dims": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w[0], t), arr(6, 4),
                    arr(5, 4), TARGET),
    "in_features": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w[:, :3], t), arr(6, 4),
                    arr(5, 4), TARGET),
    "bias_shape": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w, t, linear_bias=w[0]),
                   arr(6, 4), arr(5, 4), TARGET),
    "k_dim_unbatched": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x[0], w, t), arr(6, 4),
                        arr(5, 3, 4), TARGET),
    "ignore_with_probabilities": (lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(
        x, w, t, ignore_index=1), arr(6, 4), arr(5, 4), arr(6, 5)),
    "module_weight": (lambda lib, w: lib.nn.LinearCrossEntropyLoss(4, 5, weight=w), arr(4)),
    "module_smoothing": (lambda lib: lib.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),),
    "options_policy": (lambda lib: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),),
    "options_chunking": (lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="rows"),),
    "options_chunk_size": (lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),),
    "options_acc_dtype": (lambda lib: lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.int32),),
}


@pytest.mark.parametrize("name", list(LCE_ERRORS))
def test_linear_cross_entropy_errors(name):
    fn, *inputs = LCE_ERRORS[name]
    assert_same_error(fn, *inputs)


@pytest.mark.parametrize("kwargs", [{}, {"bias": True, "reduction": "sum"}, {"out_features": (3,), "bias": True},
                                    {"options": "default"}])
def test_linear_cross_entropy_loss_module(kwargs):
    def build(lib):
        kw = dict(kwargs)
        if kw.get("options") == "default":
            kw["options"] = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        return lib.nn.LinearCrossEntropyLoss(4, 5, **kw)
    torch.manual_seed(0)
    tmod = build(torch)
    emod = build(ember)
    emod.load_state_dict({k: to_ember(v.detach().numpy()) for k, v in tmod.state_dict().items()})
    assert repr(emod) == repr(tmod)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    target = RNG.integers(0, 5, size=(6, 3) if "out_features" in kwargs else 6)
    run_pair(emod, tmod, [arr(6, 4), target], rtol=1e-5, atol=1e-5)


def test_linear_cross_entropy_options_ignored_warning():
    def fn(lib, x, w, t):
        with pytest.warns(UserWarning, match="``options`` ignored") as rec:
            out = lib.nn.functional.linear_cross_entropy(x, w, t, label_smoothing=0.1,
                                                         options=lib.nn.LinearCrossEntropyOptions())
        return out, str(rec[0].message).replace("torch.", "")
    check(fn, arr(6, 4), arr(5, 4), TARGET, rtol=1e-5, atol=1e-5)


OFFS = np.array([3, 8], np.int32)
GROUPED = {
    "2d_3d": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(8, 16), arr(2, 16, 8), OFFS),
    "3d_2d": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(2, 8, 16), arr(16, 8), OFFS),
    "2d_2d": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(8, 16), arr(16, 8),
              np.array([4, 16], np.int32)),
    "3d_3d": (lambda lib, a, b: lib.nn.functional.grouped_mm(a, b), arr(2, 8, 16), arr(2, 16, 8)),
    "bf16": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a.bfloat16(), b.bfloat16(), offs=o,
                                                               out_dtype=lib.bfloat16), arr(8, 16), arr(2, 16, 8),
             OFFS),
}


@pytest.mark.parametrize("name", list(GROUPED))
def test_grouped_mm(name):
    fn, *inputs = GROUPED[name]
    check(fn, *inputs, grad=[0, 1], rtol=1e-5, atol=1e-5, check_stride=False)


GROUPED_ERRORS = {
    "offs_3d": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(2, 8, 16), arr(2, 16, 8),
                OFFS),
    "no_offs": (lambda lib, a, b: lib.nn.functional.grouped_mm(a, b), arr(8, 16), arr(2, 16, 8)),
    "offs_long": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o.long()), arr(8, 16),
                  arr(2, 16, 8), OFFS),
    "double": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a.double(), b, offs=o), arr(8, 16),
               arr(2, 16, 8), OFFS),
    "mixed": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b.bfloat16(), offs=o), arr(8, 16),
              arr(2, 16, 8), OFFS),
    "contraction": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(8, 16), arr(2, 15, 8),
                    OFFS),
    "bias": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o, bias=b[:, 0]), arr(8, 16),
             arr(2, 16, 8), OFFS),
    "out_dtype": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o, out_dtype=lib.float16),
                  arr(8, 16), arr(2, 16, 8), OFFS),
    "groups": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(8, 16), arr(2, 16, 8),
               np.array([3, 6, 7], np.int32)),
    "batch": (lambda lib, a, b: lib.nn.functional.grouped_mm(a, b), arr(2, 8, 16), arr(3, 16, 8)),
    "1d": (lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o), arr(8), arr(2, 16, 8), OFFS),
}


@pytest.mark.parametrize("name", list(GROUPED_ERRORS))
def test_grouped_mm_errors(name):
    fn, *inputs = GROUPED_ERRORS[name]
    assert_same_error(fn, *inputs)


@pytest.mark.parametrize("enum", ["ScalingType", "SwizzleType"])
def test_scaled_mm_enums(enum):
    e, t = getattr(ember.nn.functional, enum), getattr(torch.nn.functional, enum)
    assert {k: int(v) for k, v in e.__members__.items()} == {k: int(v.value) for k, v in t.__members__.items()}
    assert [repr(v) for v in e.__members__.values()] == [repr(v) for v in t.__members__.values()]
