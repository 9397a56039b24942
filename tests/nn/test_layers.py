"""Every layer against torch from the same weights: outputs, input grads and parameter grads, in train and
eval mode (table-driven: class name, constructor arguments, input specs)."""

import numpy as np
import pytest
import torch
from _harness import make_inputs, pair, run_pair
from compare import assert_same

import ember

T = 1e-4  # loose enough for float32 reductions in a different order
LAYERS = [
    # (class, args, kwargs, inputs, tolerance)
    ("Identity", (3,), {}, [(2, 3)], None),
    ("Linear", (5, 3), {}, [(4, 5)], T),
    ("Linear", (5, 3), {"bias": False}, [(2, 4, 5)], T),
    ("Bilinear", (4, 5, 3), {}, [(6, 4), (6, 5)], T),
    ("Flatten", (), {}, [(2, 3, 4)], None),
    ("Unflatten", (1, (2, 3)), {}, [(4, 6)], None),
    ("ReLU", (), {}, [(3, 4)], None), ("ReLU6", (), {}, [(3, 4)], None),
    ("LeakyReLU", (0.2,), {}, [(3, 4)], None), ("PReLU", (3,), {}, [(2, 3, 4)], None),
    ("PReLU", (), {}, [(2, 3)], None),
    ("ELU", (0.7,), {}, [(3, 4)], None), ("SELU", (), {}, [(3, 4)], None), ("CELU", (1.3,), {}, [(3, 4)], None),
    ("GELU", (), {}, [(3, 4)], None), ("GELU", ("tanh",), {}, [(3, 4)], None),
    ("SiLU", (), {}, [(3, 4)], None), ("Mish", (), {}, [(3, 4)], None), ("Sigmoid", (), {}, [(3, 4)], None),
    ("Hardsigmoid", (), {}, [(3, 4)], None), ("Tanh", (), {}, [(3, 4)], None),
    ("Hardtanh", (-0.5, 0.7), {}, [(3, 4)], None), ("Hardswish", (), {}, [(3, 4)], None),
    ("Softplus", (2.0, 1.0), {}, [(3, 4)], None), ("Softsign", (), {}, [(3, 4)], None),
    ("Softshrink", (0.3,), {}, [(3, 4)], None), ("Hardshrink", (0.3,), {}, [(3, 4)], None),
    ("Tanhshrink", (), {}, [(3, 4)], None), ("Threshold", (0.1, 2.0), {}, [(3, 4)], None),
    ("LogSigmoid", (), {}, [(3, 4)], None), ("Softmax", (1,), {}, [(3, 4)], None),
    ("LogSoftmax", (-1,), {}, [(3, 4)], None), ("Softmin", (0,), {}, [(3, 4)], None),
    ("Softmax2d", (), {}, [(2, 3, 4, 5)], None), ("GLU", (), {}, [(3, 4)], None),
    ("Conv1d", (3, 4, 3), {}, [(2, 3, 9)], T),
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}, [(2, 4, 11)], T),
    ("Conv2d", (3, 4, 3), {"padding": 1}, [(2, 3, 7, 6)], T),
    ("Conv2d", (3, 4, (3, 2)), {"stride": (2, 1), "padding": "same" if False else 0, "bias": False}, [(2, 3, 7, 6)], T),
    ("Conv2d", (3, 4, 3), {"padding": "same", "dilation": 2}, [(2, 3, 7, 6)], T),
    ("Conv2d", (4, 4, 3), {"groups": 4, "padding": 1, "padding_mode": "reflect"}, [(1, 4, 5, 5)], T),
    ("Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "circular"}, [(1, 2, 5, 5)], T),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "replicate"}, [(2, 5, 5)], T),
    ("Conv3d", (2, 3, 2), {"stride": 2}, [(1, 2, 5, 4, 4)], T),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1}, [(2, 3, 5)], T),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "groups": 2, "dilation": 2}, [(2, 4, 4, 3)], T),
    ("ConvTranspose3d", (2, 2, 2), {"stride": 2}, [(1, 2, 3, 3, 2)], T),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, [(2, 3, 10)], None),
    ("MaxPool2d", (2,), {}, [(2, 3, 6, 6)], None),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "dilation": 1, "ceil_mode": True}, [(2, 3, 8, 7)], None),
    ("MaxPool2d", (2,), {"dilation": 2, "return_indices": True}, [(1, 2, 7, 7)], None),
    ("MaxPool3d", (2,), {}, [(1, 2, 4, 4, 4)], None),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1}, [(2, 3, 10)], None),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, [(2, 3, 7, 7)], None),
    ("AvgPool2d", (3,), {"stride": 2, "ceil_mode": True}, [(2, 3, 8, 8)], None),
    ("AvgPool2d", (2,), {"divisor_override": 3}, [(2, 3, 6, 6)], None),
    ("AvgPool3d", (2,), {}, [(1, 2, 4, 4, 4)], None),
    ("AdaptiveAvgPool1d", (4,), {}, [(2, 3, 10)], T),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, [(2, 3, 7, 5)], T),
    ("AdaptiveAvgPool2d", (1,), {}, [(2, 3, 7, 5)], T),
    ("AdaptiveMaxPool1d", (4,), {}, [(2, 3, 10)], None),
    ("AdaptiveMaxPool2d", ((3, 2),), {"return_indices": True}, [(2, 3, 7, 5)], None),
    ("LPPool2d", (2, 2), {}, [(2, 3, 6, 6)], T),
    ("BatchNorm1d", (3,), {}, [(4, 3)], T), ("BatchNorm1d", (3,), {"affine": False}, [(4, 3, 5)], T),
    ("BatchNorm2d", (3,), {}, [(4, 3, 5, 5)], T),
    ("BatchNorm2d", (3,), {"momentum": None}, [(4, 3, 2, 2)], T),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, [(4, 3, 2, 2)], T),
    ("BatchNorm3d", (2,), {}, [(2, 2, 3, 3, 3)], T),
    ("LayerNorm", (5,), {}, [(3, 5)], T), ("LayerNorm", ((4, 5),), {"bias": False}, [(2, 4, 5)], T),
    ("LayerNorm", (5,), {"elementwise_affine": False}, [(3, 5)], T),
    ("GroupNorm", (2, 4), {}, [(3, 4, 5)], T), ("GroupNorm", (1, 4), {"affine": False}, [(3, 4, 2, 2)], T),
    ("InstanceNorm1d", (3,), {}, [(2, 3, 6)], T), ("InstanceNorm2d", (3,), {"affine": True}, [(2, 3, 4, 4)], T),
    ("InstanceNorm2d", (3,), {"track_running_stats": True}, [(2, 3, 4, 4)], T),
    ("RMSNorm", (5,), {}, [(3, 5)], T), ("RMSNorm", ((2, 5),), {"eps": 1e-3}, [(3, 2, 5)], T),
    ("LocalResponseNorm", (3,), {}, [(2, 5, 4, 4)], T), ("LocalResponseNorm", (2,), {}, [(2, 5, 6)], T),
    ("Embedding", (10, 3), {}, [("long", (4, 5), 10)], None),
    ("Embedding", (10, 3), {"padding_idx": 2}, [np.array([[2, 3, 2], [1, 0, 9]])], None),
    ("EmbeddingBag", (10, 3), {"mode": "sum"}, [("long", (4, 5), 10)], T),
    ("EmbeddingBag", (10, 3), {}, [np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4])], T),
    ("EmbeddingBag", (10, 3), {"mode": "max"}, [("long", (4, 5), 10)], T),
    ("Upsample", (), {"scale_factor": 2}, [(2, 3, 4, 5)], None),
    ("Upsample", (), {"size": (7, 9), "mode": "bilinear"}, [(2, 3, 4, 5)], T),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear", "align_corners": True}, [(2, 3, 4, 5)], T),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bicubic"}, [(1, 2, 4, 5)], T),
    ("Upsample", (), {"scale_factor": 2, "mode": "linear"}, [(1, 2, 5)], T),
    ("PixelShuffle", (2,), {}, [(2, 8, 3, 3)], None), ("PixelUnshuffle", (2,), {}, [(2, 2, 4, 6)], None),
    ("ZeroPad2d", ((1, 2, 0, 1),), {}, [(2, 3, 4, 4)], None),
    ("ConstantPad1d", (2, 0.5), {}, [(2, 3, 4)], None),
    ("ReflectionPad2d", (2,), {}, [(2, 3, 4, 4)], None), ("ReplicationPad1d", ((1, 3),), {}, [(2, 3, 4)], None),
    ("CircularPad2d", (1,), {}, [(1, 2, 3, 3)], None), ("ReflectionPad1d", (2,), {}, [(2, 5)], None),
    ("Fold", ((4, 5), (2, 2)), {}, [(2, 12, 12)], T), ("Unfold", ((2, 3),), {"padding": 1}, [(2, 3, 4, 5)], T),
    ("CosineSimilarity", (), {}, [(3, 4), (3, 4)], T), ("PairwiseDistance", (), {}, [(3, 4), (3, 4)], T),
    ("ChannelShuffle", (2,), {}, [(2, 4, 3, 3)], None),
]


@pytest.mark.parametrize("name,args,kwargs,specs,tol", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_rest) in enumerate(LAYERS)])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_layer_matches_torch(name, args, kwargs, specs, tol, mode):
    emod, tmod = pair(name, args, kwargs)
    getattr(emod, mode)()
    getattr(tmod, mode)()
    arrays = make_inputs(specs, np.random.default_rng(0))
    run_pair(emod, tmod, arrays, rtol=tol, atol=tol)
    assert repr(emod) == repr(tmod)
    for (en, eb), (tn, tb) in zip(emod.named_buffers(), tmod.named_buffers()):  # running statistics
        assert en == tn
        assert_same(eb, tb, rtol=T, atol=T, check_stride=False, path=en)


def test_batchnorm_several_steps_then_eval():
    emod, tmod = pair("BatchNorm2d", (3,), {"momentum": None})
    rng = np.random.default_rng(0)
    for _ in range(3):
        run_pair(emod, tmod, make_inputs([(4, 3, 2, 2)], rng), rtol=T, atol=T)
    emod.eval()
    tmod.eval()
    run_pair(emod, tmod, make_inputs([(4, 3, 2, 2)], rng), rtol=T, atol=T)
    assert int(emod.num_batches_tracked) == 3


def test_lazy_linear_infers_in_features():
    m = ember.nn.LazyLinear(4)
    assert repr(m.weight) == "<UninitializedParameter>"
    out = m(ember.ones(2, 7))
    assert type(m) is ember.nn.Linear and tuple(m.weight.shape) == (4, 7) and tuple(out.shape) == (2, 4)


@pytest.mark.parametrize("name,args,kwargs", [
    ("Linear", (5, 3), {}), ("Conv2d", (3, 4, 3), {}), ("ConvTranspose2d", (3, 4, 3), {}), ("Bilinear", (2, 3, 4), {}),
    ("Embedding", (6, 3), {"padding_idx": 1}), ("PReLU", (), {}), ("BatchNorm2d", (3,), {})])
def test_default_init_matches_torch_under_same_seed(name, args, kwargs):
    torch.manual_seed(3)
    ember.manual_seed(3)
    t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(ember.nn, name)(*args, **kwargs)
    for (en, ep), (tn, tp) in zip(e.named_parameters(), t.named_parameters()):
        assert en == tn
        assert_same(ep, tp, path=en)


@pytest.mark.parametrize("fn", ["dropout", "dropout2d", "alpha_dropout"])
def test_dropout_masks_match_torch_under_same_seed(fn):
    x = np.random.default_rng(0).standard_normal((4, 3, 2, 2)).astype(np.float32)
    outs = []
    for lib in (torch, ember):
        lib.manual_seed(7)
        xt = lib.from_numpy(x.copy()).requires_grad_(True)
        y = getattr(lib.nn.functional, fn)(xt, 0.4, training=True)
        y.sum().backward()
        outs.append((y, xt.grad))
    assert_same(outs[1], outs[0], rtol=1e-6, atol=1e-6, check_stride=False)
