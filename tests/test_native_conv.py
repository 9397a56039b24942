"""Convolution and pooling through the native kernels (ember/_native/conv.c, pool.c; issue 18): against
torch on CIFAR- and ResNet-shaped cases (3x3 and 1x1, stride 2, dilation, groups, depthwise, 1-d), at one
and two threads; the C path against the NumPy kernels (the fallback); pooling against torch to the bit
(NaN, ties, -inf windows, ceil_mode, padding, count_include_pad, divisor_override).

The OpInfo table (tests/ops) runs these ops through the C path too (they take it at every size, NOTE
[ Native convolution and pooling at every size ]), and through the NumPy kernels under EMBER_NATIVE=0.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from compare import check, functions_from

import ember
from ember import _native
from ember._native import conv as native_conv


@pytest.fixture
def native_on(monkeypatch):
    monkeypatch.setattr(_native, "_OFF", False)
    assert _native.available("conv") and _native.available("pool"), "no working C compiler"
    assert native_conv._blas() is not None, "NumPy's bundled OpenBLAS was not found"


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request, monkeypatch):
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 0)  # threads at every size, so the small cases split too
    old = ember.get_num_threads()
    ember.set_num_threads(request.param)
    yield request.param
    ember.set_num_threads(old)


# (input shape, weight shape, conv2d/conv1d keywords): the harness's float32 tolerance holds for sums of a
# few hundred terms, so these are the CIFAR/ResNet layer kinds at small sizes; the real sizes are below
_CONVS = [
    ("cifar1", (2, 3, 8, 8), (32, 3, 3, 3), {"padding": 1}),
    ("cifar2", (2, 32, 6, 6), (16, 32, 3, 3), {"padding": 1}),
    ("resnet_s2", (2, 16, 9, 9), (8, 16, 3, 3), {"stride": 2, "padding": 1}),
    ("resnet_1x1", (2, 32, 5, 5), (16, 32, 1, 1), {}),
    ("resnet_1x1_s2", (2, 32, 7, 7), (16, 32, 1, 1), {"stride": 2}),
    ("groups", (3, 8, 10, 9), (12, 4, 3, 3), {"padding": 1, "groups": 2}),
    ("depthwise", (3, 8, 12, 12), (8, 1, 3, 3), {"padding": 1, "groups": 8}),
    ("depthwise_s2_mult", (2, 4, 11, 10), (8, 1, 3, 2), {"stride": (2, 1), "padding": (1, 0), "groups": 4,
                                                         "dilation": (1, 2)}),
    ("dilated", (2, 3, 12, 13), (4, 3, 3, 3), {"dilation": 2, "padding": 2}),
    ("same_even", (2, 3, 10, 11), (4, 3, 4, 2), {"padding": "same"}),
    ("stem_7x7_s2", (2, 3, 12, 12), (8, 3, 7, 7), {"stride": 2, "padding": 3}),
    ("conv1d", (4, 6, 50), (8, 6, 5), {"stride": 2, "padding": 2}),
    ("batch1", (1, 16, 9, 9), (8, 16, 3, 3), {"padding": 1}),
    # rows of 40 and 61 floats: three and four vectors in the AVX-512 paths (NOTE [ Short rows ] in conv.c)
    ("rows40", (2, 2, 4, 40), (3, 2, 3, 5), {"padding": (1, 2)}),
    ("rows61", (2, 2, 3, 61), (3, 2, 2, 3), {"padding": (0, 1)}),
    # same-size convolutions (conv_direct.c): 5x5, 1x3, a 1-d one, rows not a multiple of the kernel's 8,
    # 1x1 maps, small planes side by side, more than one block of K (more at real sizes below)
    ("same_5x5", (2, 8, 9, 11), (12, 8, 5, 5), {"padding": 2}),
    ("same_1x3", (3, 6, 5, 17), (16, 6, 1, 3), {"padding": (0, 1)}),
    ("same_conv1d", (3, 6, 40), (8, 6, 5), {"padding": 2}),
    ("same_rows13_1x1map", (3, 9, 1, 1), (13, 9, 3, 3), {"padding": 1}),
    ("same_10x10_blocks", (2, 20, 10, 10), (16, 20, 3, 3), {"padding": 1}),
    # depthwise (NOTE [ Depthwise weight gradient ] in conv_direct.c): a channel multiplier of 2, 1-d, dilated
    ("depthwise_mult2", (2, 6, 11, 13), (12, 1, 3, 3), {"padding": 1, "groups": 6}),
    ("depthwise_conv1d", (3, 5, 30), (5, 1, 5), {"padding": 2, "groups": 5}),
    ("depthwise_dilated", (2, 4, 9, 9), (4, 1, 3, 3), {"padding": 2, "dilation": 2, "groups": 4}),
    # stride 2 as four phases (NOTE [ Stride 2 as four phases ] in conv_direct.c): odd sizes (dilated: below)
    ("phases_odd", (1, 20, 33, 34), (6, 20, 3, 3), {"stride": 2, "padding": 1}),
]


def _conv(kw, nd):
    def fn(lib, x, w, b):
        f = lib.nn.functional.conv1d if nd == 1 else lib.nn.functional.conv2d
        return f(x, w, b, **kw)
    return fn


def _arrays(seed, xs, ws):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(xs).astype(np.float32), (rng.standard_normal(ws) * 0.2).astype(np.float32),
            rng.standard_normal(ws[0]).astype(np.float32))


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("name,xs,ws,kw", _CONVS, ids=[c[0] for c in _CONVS])
def test_conv_against_torch(name, xs, ws, kw, threads):
    """Forward and the input, weight and bias gradients, at one and two threads."""
    check(_conv(kw, len(xs) - 2), *_arrays(0, xs, ws), grad=(0, 1, 2))


@pytest.mark.usefixtures("native_on")
def test_conv_transpose_against_torch(threads):
    """A transposed convolution is the input-gradient kernel (stride 2, output_padding)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8, 7, 7)).astype(np.float32)
    w = (rng.standard_normal((8, 4, 3, 3)) * 0.2).astype(np.float32)
    check(lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
          x, w, grad=(0, 1))


def _conv_grads(lib, x, w, b, gy, kw):
    """(output, input grad, weight grad, bias grad) of conv2d (conv1d for 3-d x) as float64 arrays."""
    xt, wt, bt = (lib.from_numpy(a.copy()).requires_grad_() for a in (x, w, b))
    y = (lib.nn.functional.conv1d if x.ndim == 3 else lib.nn.functional.conv2d)(xt, wt, bt, **kw)
    y.backward(lib.from_numpy(gy))
    return [a.detach().numpy().astype(np.float64) for a in (y, xt.grad, wt.grad, bt.grad)]


# real layer sizes: CIFAR's two convs (batch 64), ResNet-18's stem, a 3x3 and its stride-2 and 1x1 shortcut,
# a MobileNet depthwise 3x3
_LARGE = [
    ("cifar1", (64, 3, 32, 32), (32, 3, 3, 3), {"padding": 1}),
    ("cifar2", (64, 32, 16, 16), (64, 32, 3, 3), {"padding": 1}),
    ("resnet_stem", (4, 3, 64, 64), (64, 3, 7, 7), {"stride": 2, "padding": 3}),
    # a sample's columns over 2 MB: built and multiplied in bands of rows (NOTE [ Columns in bands of rows ]);
    # the stem's forward in four phases (NOTE [ Stride 2 as four phases ] in conv_direct.c), its weight
    # gradient in bands; stride 3, both in bands
    ("stem_bands", (2, 3, 160, 160), (16, 3, 7, 7), {"stride": 2, "padding": 3}),
    ("bands_stride3", (1, 8, 240, 240), (8, 8, 5, 5), {"stride": 3}),
    ("resnet_3x3_s2_phases", (4, 32, 40, 40), (32, 32, 3, 3), {"stride": 2, "padding": 1}),
    ("resnet_3x3", (8, 64, 28, 28), (64, 64, 3, 3), {"padding": 1}),
    ("resnet_3x3_s2", (8, 64, 28, 28), (128, 64, 3, 3), {"stride": 2, "padding": 1}),
    ("resnet_1x1_s2", (8, 64, 28, 28), (128, 64, 1, 1), {"stride": 2}),
    ("depthwise", (8, 96, 28, 28), (96, 1, 3, 3), {"padding": 1, "groups": 96}),
    # ResNet's layer4 maps (7 x 7): blocks of samples in every product and 2 weight-gradient chunks (NOTE
    # [ Products over blocks of samples ] in conv.c), with a batch that leaves a shorter last block
    ("resnet_layer4_3x3", (10, 32, 7, 7), (64, 32, 3, 3), {"padding": 1}),
    ("resnet_layer4_1x1", (10, 64, 7, 7), (32, 64, 1, 1), {}),
    ("resnet_layer4_1x1_s2", (10, 32, 14, 14), (64, 32, 1, 1), {"stride": 2}),
    # 256 outputs: the weight gradient in gw's own layout, from one chunk (batch 4) and from two (batch 10)
    ("resnet_wide_1chunk", (4, 16, 7, 7), (256, 16, 3, 3), {"padding": 1}),
    ("resnet_wide_2chunks", (10, 16, 7, 7), (256, 16, 3, 3), {"padding": 1}),
    # same-size (conv_direct.c): a dilated 3x3 whose 552-position plane ends in a tile of two vectors
    ("same_dilated_tail", (2, 16, 23, 24), (24, 16, 3, 3), {"padding": "same", "dilation": (1, 2)}),
]


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("name,xs,ws,kw", _LARGE, ids=[c[0] for c in _LARGE])
def test_conv_real_sizes_as_accurate_as_torch(name, xs, ws, kw, monkeypatch):
    """At real sizes the gradients sum thousands of float32 products, in an order no two libraries share, so
    each result is held to a float64 reference instead: ember's error, on the C path at 1 and 2 threads and
    on the NumPy kernels, is at most twice torch's own (float32) error. The two thread counts agree to the bit."""
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 0)
    x, w, b = _arrays(5, xs, ws)
    out_shape = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **kw).shape
    gy = np.random.default_rng(6).standard_normal(tuple(out_shape)).astype(np.float32)
    ref = _conv_grads(torch, x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                      gy.astype(np.float64), kw)
    t32 = _conv_grads(torch, x, w, b, gy, kw)
    bound = [2 * np.abs(t - r).max() + 1e-6 for t, r in zip(t32, ref)]
    old = ember.get_num_threads()
    runs = {}
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            runs[n] = _conv_grads(ember, x, w, b, gy, kw)
    finally:
        ember.set_num_threads(old)
    with monkeypatch.context() as m:  # conv.c's im2col kernels where conv_direct.c's would run
        m.setattr(native_conv, "_state", {**native_conv._state, "direct": False})
        runs["im2col"] = _conv_grads(ember, x, w, b, gy, kw)
    monkeypatch.setattr(native_conv, "_state", {"blas": None})  # no sgemm found: the NumPy kernels
    runs["numpy"] = _conv_grads(ember, x, w, b, gy, kw)
    assert all(np.array_equal(a, c) for a, c in zip(runs[1], runs[2]))
    for key, got in runs.items():
        for what, g, r, lim in zip(("output", "input grad", "weight grad", "bias grad"), got, ref, bound):
            assert np.abs(g - r).max() <= lim, (key, what, np.abs(g - r).max(), lim)


# forward convolutions at stride 2 in four phases (NOTE [ Stride 2 as four phases ] in conv_direct.c): odd and
# even sizes, dilation, the stem's 7x7, planes side by side (forced by a lower PHASED_MIN), a 5x5
_PHASES = [((2, 16, 33, 31), (24, 16, 3, 3), 1, 1), ((1, 21, 32, 32), (6, 21, 3, 3), 2, 2),
           ((2, 3, 64, 64), (16, 3, 7, 7), 3, 1), ((3, 32, 14, 14), (16, 32, 3, 3), 1, 1),
           ((2, 8, 40, 40), (16, 8, 5, 5), 2, 1)]


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("xs,ws,pad,dil", _PHASES)
def test_stride2_phases_forward(xs, ws, pad, dil, monkeypatch):
    """The forward through conv_direct.c's phases: within twice torch's error against float64, the same bits
    at 1 and 2 threads."""
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 0)
    monkeypatch.setattr(native_conv, "PHASED_MIN", 1)
    x, w, b = _arrays(16, xs, ws)
    kw = {"stride": 2, "padding": pad, "dilation": dil}
    out = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **kw).shape[2:]
    assert native_conv._phased(xs, w, (2, 2), out, 1)
    ref = torch.nn.functional.conv2d(*(torch.from_numpy(a.astype(np.float64)) for a in (x, w, b)), **kw).numpy()
    bound = 2 * np.abs(torch.nn.functional.conv2d(*map(torch.from_numpy, (x, w, b)), **kw).numpy() - ref).max()
    got = []
    old = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            got.append(ember.nn.functional.conv2d(*map(ember.from_numpy, (x, w, b)), **kw).numpy())
    finally:
        ember.set_num_threads(old)
    assert np.array_equal(got[0], got[1])
    assert np.abs(got[0] - ref).max() <= bound + 1e-6


# NOTE [ Short rows ] in conv.c: the AVX-512 paths copy and add the same values in the same order as the plain
# loops, so conv.c built without AVX-512 gives the same bits; MNIST's convs and rows of 1-4 vectors
_PLAIN = [c for c in _CONVS if c[0] in ("cifar1", "groups", "dilated", "stem_7x7_s2", "conv1d", "rows40", "rows61")] + [
    ("mnist1", (4, 1, 28, 28), (16, 1, 5, 5), {"padding": 2}),
    ("mnist2", (4, 16, 14, 14), (32, 16, 5, 5), {"padding": 2}),
]


@pytest.fixture(scope="module")
def conv_without_avx512():
    with open(os.path.join(os.path.dirname(_native.__file__), "conv.c")) as f:
        source = f.read()
    lib = _native.build_source("conv_no_avx512", "#undef __AVX512F__\n" + source)
    assert lib is not None, "no working C compiler"
    return lib


@pytest.mark.usefixtures("native_on")
def test_conv_without_avx512_same_bits(conv_without_avx512, monkeypatch):
    rng = np.random.default_rng(7)
    plain = functions_from(native_conv.function, "conv", conv_without_avx512)

    for name, xs, ws, kw in _PLAIN:
        x, w, b = _arrays(8, xs, ws)
        f = torch.nn.functional.conv1d if len(xs) == 3 else torch.nn.functional.conv2d
        gy = rng.standard_normal(tuple(f(torch.from_numpy(x), torch.from_numpy(w), **kw).shape)).astype(np.float32)
        fast = _conv_grads(ember, x, w, b, gy, kw)
        with monkeypatch.context() as m:
            m.setattr(native_conv, "function", plain)
            slow = _conv_grads(ember, x, w, b, gy, kw)
        for what, a, c in zip(("output", "input grad", "weight grad", "bias grad"), fast, slow):
            assert np.array_equal(a, c), (name, what)


def test_same_size_conv_kernel_or_im2col(monkeypatch):
    """NOTE [ Same-size convolutions take the direct kernel ]: a same-size convolution runs conv_direct.c; a
    build without AVX-512 answers NOT_BUILT and every later one takes conv.c's im2col path (the same result as
    with the direct kernel turned off), and a kernel of more than 64 taps takes the im2col path that once."""
    monkeypatch.setattr(_native, "_OFF", False)
    monkeypatch.setattr(native_conv, "_state", dict(native_conv._state))
    native_conv._state.pop("direct", None)
    x, w, b = _arrays(9, (2, 16, 10, 10), (8, 16, 3, 3))
    gy = np.random.default_rng(10).standard_normal((2, 8, 10, 10)).astype(np.float32)
    direct = _conv_grads(ember, x, w, b, gy, {"padding": 1})
    native_conv._state["direct"] = False
    im2col = _conv_grads(ember, x, w, b, gy, {"padding": 1})
    ref = _conv_grads(torch, x, w, b, gy, {"padding": 1})
    for d, i, r in zip(direct, im2col, ref):
        np.testing.assert_allclose(d, r, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(i, r, rtol=1e-5, atol=1e-5)
    native_conv._state.pop("direct")
    with open(os.path.join(os.path.dirname(_native.__file__), "conv_direct.c")) as f:
        plain = _native.build_source("conv_direct_no_avx512", "#undef __AVX512F__\n" + f.read())
    assert plain is not None, "no working C compiler"
    with monkeypatch.context() as m:
        m.setattr(native_conv, "function", functions_from(native_conv.function, "conv_direct", plain))
        got = _conv_grads(ember, x, w, b, gy, {"padding": 1})
    assert native_conv._state["direct"] is False
    assert all(np.array_equal(g, i) for g, i in zip(got, im2col))
    native_conv._state.pop("direct")
    x, w, b = _arrays(11, (1, 3, 12, 12), (4, 3, 9, 9))  # 81 taps: not taken, and the kernel stays in use
    gy = np.random.default_rng(12).standard_normal((1, 4, 12, 12)).astype(np.float32)
    for g, r in zip(_conv_grads(ember, x, w, b, gy, {"padding": 4}), _conv_grads(torch, x, w, b, gy, {"padding": 4})):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4)
    assert "direct" not in native_conv._state
    # grouped: conv.py sends them to conv.c (torch multiplies their padding), the kernel itself takes them
    x, w, b = _arrays(14, (3, 8, 9, 10), (12, 4, 3, 3))
    gy = np.random.default_rng(15).standard_normal((3, 12, 9, 10)).astype(np.float32)
    shape = native_conv._shape(x.shape, w.shape, (1, 1), ((1, 1), (1, 1)), (1, 1), 2, (9, 10))
    y, gx = np.empty_like(gy), np.empty_like(x)
    assert native_conv._direct(x, w, b, y, shape, 0, 0) and native_conv._direct(gy, w, None, gx, shape, 1, 0)
    ref = _conv_grads(torch, x, w, b, gy, {"padding": 1, "groups": 2})
    np.testing.assert_allclose(y, ref[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gx, ref[1], rtol=1e-5, atol=1e-5)


# (input, weight, padding, groups[, stride]): shapes torch runs on oneDNN (batch > 1, a large input, a 5x5
# kernel) and on its native path (a small batch-1 input, groups), whose padding adds nothing or NaN (NOTE
# [ Padding adds nothing ] in conv_direct.c)
_NAN_CONVS = [((1, 2, 4, 4), (4, 2, 3, 3), 1, 1), ((1, 2, 110, 110), (4, 2, 3, 3), 1, 1),
              ((2, 4, 33, 31), (6, 4, 3, 3), 1, 1, 2), ((1, 3, 64, 64), (8, 3, 7, 7), 3, 1, 2),
              ((2, 4, 6, 6), (4, 2, 3, 3), 1, 2), ((1, 2, 6, 6), (4, 2, 5, 5), 2, 1),
              ((1, 2, 6, 6), (4, 2, 5, 3), (2, 1), 1), ((2, 16, 12, 12), (8, 16, 3, 3), 1, 1),
              ((3, 16, 7, 7), (8, 16, 3, 3), 1, 1), ((1, 16, 35, 36), (4, 16, 3, 3), 1, 1),
              ((1, 8, 12, 12), (8, 1, 3, 3), 1, 8), ((2, 6, 9, 9), (6, 1, 3, 3), 1, 6)]


@pytest.mark.parametrize("case", _NAN_CONVS)
@pytest.mark.parametrize("where", ["weight", "input"])
def test_same_size_conv_inf_nan_as_torch(case, where):
    """An inf and a NaN in the weight or the input: the forward and input gradient have torch's inf and NaN
    where torch has them, and its values elsewhere (stride 1, and stride 2 in four phases)."""
    xs, ws, pad, groups, stride = (*case, 1) if len(case) == 4 else case
    rng = np.random.default_rng(13)
    x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
    a = w if where == "weight" else x
    a.reshape(-1)[0], a.reshape(-1)[-1] = np.inf, np.nan
    kw = {"padding": pad, "groups": groups, "stride": stride}
    gy = rng.standard_normal(tuple(torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                                              **kw).shape)).astype(np.float32)
    # (and the weight gradient of the depthwise ones, whose kernel is conv_direct.c's too)
    grads = 3 if groups == xs[1] and ws[1] == 1 else 2
    got, want = (_conv_grads(lib, x, w, np.zeros(ws[0], np.float32), gy, kw)[:grads] for lib in (ember, torch))
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t, rtol=1e-5, atol=1e-5, equal_nan=True)


# ---- the direct weight gradient of same-size stride-1 convolutions (conv_wgrad.c) -------------------------

# NOTE [ Direct weight gradient ] in conv_wgrad.c: stride 1, output the input's size. Small shapes take it
# here because the tests lower DIRECT_MIN_CK and DIRECT_BLOCK to 1 (NOTE [ Which weight gradients go direct ]
# in conv.py: any number of rows and outputs goes direct):
# outputs and channels that are not whole blocks of 32 / 16, odd and 1x1 maps (bands of whole samples), maps
# wider than a band (bands of rows), asymmetric "same" padding, dilation, groups, 1-d, batch 1 and 3. (Shapes
# torch runs on its native path rather than oneDNN, small batch-1 ones, keep conv.c's path: NOTE [ Same-size
# convolutions take the direct kernel ] in conv.py.)
_SAME = [
    ("3x3_odd", (3, 5, 9, 11), (7, 5, 3, 3), {"padding": 1}),
    ("5x5_o40", (2, 4, 8, 10), (40, 4, 5, 5), {"padding": 2}),
    ("1x3", (3, 6, 5, 9), (33, 6, 1, 3), {"padding": (0, 1)}),
    ("3x1_dilated", (2, 3, 12, 5), (4, 3, 3, 1), {"padding": (3, 0), "dilation": (3, 1)}),
    ("dilated_3x3", (2, 17, 11, 12), (9, 17, 3, 3), {"padding": 2, "dilation": 2}),
    ("maps_1x1", (3, 16, 1, 1), (48, 16, 3, 3), {"padding": 1}),
    ("maps_7x7_batch1", (1, 8, 7, 7), (64, 8, 5, 5), {"padding": 2}),  # (a 5x5: torch's oneDNN at batch 1)
    ("rows_of_bands", (1, 2, 7, 45), (5, 2, 5, 5), {"padding": 2}),
    ("same_even", (2, 3, 10, 11), (4, 3, 4, 2), {"padding": "same"}),
    ("groups", (3, 8, 10, 9), (12, 4, 3, 3), {"padding": 1, "groups": 2}),
    ("groups_3_wide", (2, 6, 7, 8), (96, 2, 5, 3), {"padding": (2, 1), "groups": 3}),
    ("conv1d", (4, 6, 50), (8, 6, 5), {"padding": 2}),
    ("conv1d_dilated_same", (3, 5, 31), (6, 5, 4), {"padding": "same", "dilation": 3}),
]


@pytest.fixture
def direct_wgrad(monkeypatch):
    """Every same-size stride-1 weight gradient through conv_wgrad.c (not 1x1 or depthwise ones); the calls
    are counted, so a test can tell the kernel ran."""
    monkeypatch.setattr(native_conv, "DIRECT_MIN_CK", 1)
    monkeypatch.setattr(native_conv, "DIRECT_BLOCK", 1)
    calls = []
    real = native_conv._weight_grad_same

    def counted(*args):
        gw = real(*args)
        calls.append(gw is not None)
        return gw
    monkeypatch.setattr(native_conv, "_weight_grad_same", counted)
    return calls


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("name,xs,ws,kw", _SAME, ids=[c[0] for c in _SAME])
def test_same_size_weight_grad_against_torch(name, xs, ws, kw, threads, direct_wgrad):
    check(_conv(kw, len(xs) - 2), *_arrays(2, xs, ws), grad=(0, 1, 2))
    assert direct_wgrad and all(direct_wgrad)


# NOTE [ Which weight gradients go direct ] in conv.py, at its own thresholds: (input, weight, keywords, direct?)
_WHICH = [
    ((2, 64, 6, 6), (64, 64, 3, 3), {"padding": 1}, True),  # ResNet's 3x3 layers
    ((2, 16, 6, 6), (48, 16, 3, 3), {"padding": 1}, True),  # 48 outputs: a quarter of the lanes padding
    ((2, 32, 5, 5), (32, 32, 3, 3), {"padding": 2, "dilation": 2}, True),
    ((2, 64, 6, 6), (64, 16, 3, 3), {"padding": 1, "groups": 4}, False),  # 16 outputs per group
    ((2, 64, 6, 6), (128, 16, 3, 3), {"padding": 1, "groups": 4}, True),
    ((2, 3, 8, 8), (32, 3, 3, 3), {"padding": 1}, False),  # 27 im2col rows: CIFAR's first conv
    ((2, 64, 6, 6), (64, 64, 1, 1), {}, False),  # 1x1: conv.c multiplies x as it is
    ((2, 64, 6, 6), (64, 64, 3, 3), {"padding": 1, "stride": 2}, False),
    ((2, 64, 6, 6), (64, 64, 3, 3), {}, False),  # output smaller than the input
    ((2, 64, 6, 6), (64, 1, 3, 3), {"padding": 1, "groups": 64}, False),  # depthwise
]


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("xs,ws,kw,direct", _WHICH, ids=[str(i) for i in range(len(_WHICH))])
def test_which_weight_grads_go_direct(xs, ws, kw, direct, monkeypatch):
    calls = []
    real = native_conv._weight_grad_same
    monkeypatch.setattr(native_conv, "_weight_grad_same", lambda *a: calls.append(1) or real(*a))
    check(_conv(kw, 2), *_arrays(4, xs, ws), grad=(1,))
    assert bool(calls) == direct


def _wgrad_builds():
    """conv_wgrad.c as built here, without AVX-512 (8-float vectors) and without vectors (fmaf per lane)."""
    with open(os.path.join(os.path.dirname(_native.__file__), "conv_wgrad.c")) as f:
        source = f.read()
    undefs = (("conv_wgrad_no_avx512", "#undef __AVX512F__\n"),
              ("conv_wgrad_plain", "#undef __AVX512F__\n#undef __AVX2__\n"))
    builds = [_native.build_source(name, undef + source) for name, undef in undefs]
    assert all(lib is not None for lib in builds), "no working C compiler"
    return builds


# real sizes on the direct kernel: ResNet-18's stage shapes at small batch (7 x 7 maps: bands of 2 samples;
# 28 x 28: bands of rows), a 5x5, a dilated 3x3, and a long sum (32 samples of 32 x 32: 32,768 positions)
_SAME_LARGE = [
    ("layer4", (3, 512, 7, 7), (512, 512, 3, 3), {"padding": 1}),
    ("layer2", (2, 128, 28, 28), (128, 128, 3, 3), {"padding": 1}),
    ("5x5", (8, 32, 20, 20), (48, 32, 5, 5), {"padding": 2}),
    ("dilated", (8, 40, 16, 16), (24, 40, 3, 3), {"padding": 2, "dilation": 2}),
    ("long_sum", (32, 8, 32, 32), (16, 8, 3, 3), {"padding": 1}),
]


@pytest.mark.usefixtures("native_on")
def test_same_size_weight_grad_accuracy_and_bits(direct_wgrad, monkeypatch):
    """Against a float64 reference, the direct weight gradient's error is at most twice torch's own; it is the
    same bits at 1, 2 and 3 threads (other splits of the tasks), and in the builds without AVX-512 and without
    vectors (NOTE [ Direct weight gradient ] in conv_wgrad.c: each element one FMA chain per band, the bands
    added in order)."""
    monkeypatch.setattr(_native, "PARALLEL_SIZE", 0)
    builds = _wgrad_builds()
    found = native_conv.function
    old = ember.get_num_threads()
    try:
        for name, xs, ws, kw in _SAME_LARGE:
            x, w, _ = _arrays(5, xs, ws)
            gy = np.random.default_rng(6).standard_normal((xs[0], ws[0]) + xs[2:]).astype(np.float32)
            args = ([1, 1], [kw["padding"]] * 2, [kw.get("dilation", 1)] * 2,
                    False, [0, 0], 1)
            ref, t32 = (torch.ops.aten.convolution_backward(
                *(torch.from_numpy(a).to(dt) for a in (gy, x, w)), None, *args,
                [False, True, False])[1].double().numpy() for dt in (torch.float64, torch.float32))
            runs = []
            for threads, lib in ((1, None), (2, None), (3, None), (2, builds[0]), (1, builds[1])):
                monkeypatch.setattr(native_conv, "function", functions_from(found, "conv_wgrad", lib))
                ember.set_num_threads(threads)
                runs.append(_conv_grads(ember, x, w, np.zeros(ws[0], np.float32), gy, kw)[2])
            assert all(direct_wgrad)
            bound = 2 * np.abs(t32 - ref).max()
            assert np.abs(runs[0] - ref).max() <= bound, (name, np.abs(runs[0] - ref).max(), bound)
            for i, got in enumerate(runs[1:]):
                assert np.array_equal(got, runs[0]), (name, i)
    finally:
        ember.set_num_threads(old)


# NOTE [ Padding is skipped, not multiplied ] in conv_wgrad.c: inf and NaN in the input and the output
# gradient, inside the maps and on their borders, give torch's inf and NaN (an inf output gradient at the
# border: inf, not NaN, in the taps that reach the padding), in every build
_NONFINITE = [
    ("3x3", (2, 8, 6, 7), (5, 8, 3, 3), {"padding": 1}),
    ("5x5_dilated", (2, 3, 9, 8), (6, 3, 5, 3), {"padding": (4, 2), "dilation": (2, 2)}),
    ("maps_5x5", (5, 4, 5, 5), (40, 4, 3, 3), {"padding": 1}),
]


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("where", ["x", "g", "both"])
def test_same_size_weight_grad_nonfinite(where, direct_wgrad, monkeypatch):
    builds = _wgrad_builds()
    found = native_conv.function
    for name, xs, ws, kw in _NONFINITE:
        x, w, b = _arrays(9, xs, ws)
        gy = np.random.default_rng(3).standard_normal((xs[0], ws[0]) + xs[2:]).astype(np.float32)
        for a in ((x,) if where == "x" else (gy,) if where == "g" else (x, gy)):
            a[0, 1, 0, 0], a[0, 0, 2, -1], a[-1, -1, -1, 1], a[0, -1, 3, 3] = np.inf, -np.inf, np.nan, np.inf
        want = _conv_grads(torch, x, w, b, gy, kw)[2]
        for lib in (None, *builds):
            monkeypatch.setattr(native_conv, "function", functions_from(found, "conv_wgrad", lib))
            got = _conv_grads(ember, x, w, b, gy, kw)[2]
            assert np.array_equal(np.isnan(got), np.isnan(want)), (name, lib)
            assert np.array_equal(np.isinf(got), np.isinf(want)), (name, lib)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert direct_wgrad and all(direct_wgrad)


# ---- pooling, to the bit ---------------------------------------------------------------------------------------

def _pool_input(rng, shape, special):
    x = (rng.integers(-3, 4, shape) * 1.37).astype(np.float32)  # small integers: many tied maxima
    if special:
        flat = x.reshape(-1)
        flat[::7], flat[3::11], flat[5::13] = np.nan, -np.inf, np.inf
    return x


_POOLS = [
    ("max2", lambda F, x: F.max_pool2d(x, 2, return_indices=True)),
    ("max3s2p1_ceil", lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)),
    ("max3s2_ceil", lambda F, x: F.max_pool2d(x, 3, 2, ceil_mode=True, return_indices=True)),
    ("max_dilated", lambda F, x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0), dilation=(2, 1), return_indices=True)),
    ("max1d", lambda F, x: F.max_pool1d(x.flatten(-2), 4, 3, 1, return_indices=True)),
    ("avg2", lambda F, x: F.avg_pool2d(x, 2)),
    ("avg3s2p1_ceil", lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)),
    ("avg_exclude_pad", lambda F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("avg_divisor", lambda F, x: F.avg_pool2d(x, (3, 2), 1, 1, divisor_override=5)),
    ("adaptive_avg_3x5", lambda F, x: F.adaptive_avg_pool2d(x, (3, 5))),
    ("adaptive_avg_7", lambda F, x: F.adaptive_avg_pool2d(x, 7)),
    ("max_module", lambda F, x: ember_or_torch(F).nn.MaxPool2d(3, 2, 1)(x)),
]


def ember_or_torch(F):
    return ember if F is ember.nn.functional else torch


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("special", [False, True], ids=["finite", "nan_inf"])
@pytest.mark.parametrize("shape", [(2, 3, 9, 11), (3, 9, 11), (4, 16, 32, 32)], ids=str)
@pytest.mark.parametrize("name,fn", _POOLS, ids=[p[0] for p in _POOLS])
def test_pooling_is_torchs_to_the_bit(name, fn, shape, special, threads):
    """Values, indices and input gradients equal to torch's exactly, NaN in the same places."""
    x = _pool_input(np.random.default_rng(4), shape, special)
    res = []
    for lib in (ember, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out = fn(lib.nn.functional, t)
        out = out if isinstance(out, tuple) else (out,)
        g = np.cos(np.arange(out[0].numel()) * 1.3).astype(np.float32).reshape(tuple(out[0].shape))
        out[0].backward(lib.from_numpy(g))
        res.append([o.detach().numpy() for o in out] + [t.grad.numpy()])
    for a, b in zip(*res):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert np.array_equal(a, b, equal_nan=True)


# ---- one spinning pool -----------------------------------------------------------------------------------------

_POOL_CODE = """
import os, sys
import ember, numpy as np
x = ember.from_numpy(np.ones((2, 3, 8, 8), np.float32))
ember.nn.functional.avg_pool2d(x, 2)  # loads the pool group, and with it the OpenMP runtime
print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), os.environ.get("OMP_WAIT_POLICY"), flush=True)
"""


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("env,timeout,policy", [({}, "4", "PASSIVE"),
                                                ({"OPENBLAS_THREAD_TIMEOUT": "9", "OMP_WAIT_POLICY": "ACTIVE"},
                                                 "9", "ACTIVE")], ids=["default", "user_settings_win"])
def test_one_spinning_pool(env, timeout, policy, tmp_path):
    """NOTE [ Passive OpenMP threads ]: `import ember` gives OpenBLAS a short thread timeout and the OpenMP runtime
    loads with the passive wait policy (OMP_DISPLAY_ENV shows what libgomp read), the environment being set
    only around that load; a user's own settings are left as they are."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    full = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY",
                                                               "GOMP_SPINCOUNT")}
    full.update(env, PYTHONPATH=root, OMP_DISPLAY_ENV="TRUE", EMBER_NATIVE="1", EMBER_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _POOL_CODE], capture_output=True, text=True, env=full,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [timeout, "None" if not env else policy]
    assert f"OMP_WAIT_POLICY = '{policy}'" in out.stderr
