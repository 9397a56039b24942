"""The fast paths of the convolution, max-pooling and relu kernels against torch: LeNet's shapes (where the
specialised paths run), relu's gradient at NaN/zero/negative outputs, max pooling's argmax on ties, NaNs
and -inf, in several dtypes."""

import numpy as np
import pytest
from compare import check

rng = np.random.default_rng(0)
NAN = float("nan")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_relu_grad_special_values(dtype):
    x = np.array([NAN, -1.0, 0.0, -0.0, 2.0, np.inf, -np.inf, 3.0], dtype)
    g = np.array([3.0, -4.0, -5.0, 6.0, NAN, 1.0, 2.0, -np.inf], dtype)
    check(lambda lib, a, b: (lib.relu(a) * b).sum(), x, g, grad=[0])


def test_relu_grad_strided():
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    check(lambda lib, a: lib.relu(a.transpose(0, 2)[:, ::2]), x, grad=True)


def test_relu_double_backward():
    x = rng.standard_normal((3, 4))

    def run(lib, a):
        (g,) = lib.autograd.grad((lib.relu(a) ** 2).sum(), a, create_graph=True)
        return g
    check(run, x, grad=True)


@pytest.mark.parametrize("cin,cout,size", [(1, 6, 28), (6, 16, 12)])
def test_lenet_conv_relu_pool(cin, cout, size):
    x = rng.standard_normal((5, cin, size, size)).astype(np.float32)
    w = rng.standard_normal((cout, cin, 5, 5)).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)

    def run(lib, a, ww, bb):
        return lib.nn.functional.max_pool2d(lib.relu(lib.nn.functional.conv2d(a, ww, bb)), 2)
    check(run, x, w, b, grad=True, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k,s", [(2, 2), (3, 2), (2, 1), (3, 3)])
def test_max_pool_ties_nan_inf(dtype, k, s):
    x = rng.integers(-2, 3, (2, 3, 7, 8)).astype(dtype)  # many ties
    x[0, 0, 1, 1] = NAN
    x[0, 1, 2:4, 2:4] = NAN
    x[1, 2, :4, :4] = -np.inf
    check(lambda lib, a: lib.nn.functional.max_pool2d(a, k, s, return_indices=True), x, grad=True)


def test_max_pool_int_and_ceil_mode():
    x = rng.integers(-50, 50, (2, 3, 7, 7)).astype(np.int64)
    check(lambda lib, a: lib.nn.functional.max_pool2d(a, 2, return_indices=True), x)
    y = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    check(lambda lib, a: lib.nn.functional.max_pool2d(a, 2, ceil_mode=True, return_indices=True), y, grad=True)


@pytest.mark.parametrize("name,xs,ws,kw", [
    ("conv2d", (3, 4, 9, 11), (5, 4, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    ("conv1d", (3, 4, 13), (5, 4, 3), dict(padding=1, stride=2)),
    ("conv3d", (2, 3, 5, 6, 7), (4, 3, 2, 3, 2), dict(padding=1)),
    ("conv_transpose2d", (3, 4, 5, 6), (4, 5, 3, 3), dict(stride=2, output_padding=1, padding=1)),
    ("conv2d", (1, 4, 9, 9), (5, 4, 3, 3), dict()),  # batch of one: the NCHW path
    ("conv2d", (3, 4, 9, 40), (5, 4, 3, 3), dict()),  # long rows: the NCHW path
])
def test_conv_layouts(name, xs, ws, kw):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[1] if "transpose" in name else ws[0]).astype(np.float32)
    check(lambda lib, a, ww, bb: getattr(lib.nn.functional, name)(a, ww, bb, **kw), x, w, b, grad=True,
          rtol=1e-4, atol=1e-4)
