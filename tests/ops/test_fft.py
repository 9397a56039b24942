"""ember.fft against torch, for what the OpInfo table (op_db_fft.py) does not cover: backward node names of
the primitives, precision (complex64 in, complex64 out, within float32 rounding), `out=`, layouts of
permuted inputs, meta tensors, and torch's errors."""

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 6)).astype(np.float32)
C = (rng.standard_normal((4, 6)) + 1j * rng.standard_normal((4, 6))).astype(np.complex64)
X3 = rng.standard_normal((3, 4, 5))


@pytest.mark.parametrize("name,data,node", [
    ("fft", X, "FftR2CBackward0"), ("rfft", X, "FftR2CBackward0"), ("ihfft", X, "ConjBackward0"),
    ("ifft", X, "ConjBackward0"), ("fftn", X, "FftC2CBackward0"), ("rfftn", X, "FftR2CBackward0"),
    ("fft", C, "FftC2CBackward0"), ("irfft", C, "FftC2RBackward0"), ("hfft", C, "FftC2RBackward0"),
    ("irfftn", C, "FftC2RBackward0"), ("hfftn", C, "FftC2RBackward0"), ("ihfftn", X, "FftC2CBackward0")])
def test_backward_nodes(name, data, node):
    for lib in (torch, ember):
        x = (torch.from_numpy(data.copy()) if lib is torch else ember.from_numpy(data.copy())).requires_grad_()
        assert type(getattr(lib.fft, name)(x).grad_fn).__name__ == node


@pytest.mark.parametrize("name", ["fft", "ifft", "fft2", "fftn", "ifftn", "hfft", "irfft", "irfftn", "hfftn"])
def test_complex_gradients(name):
    """Gradients through the complex primitives, taken on a complex input (real and imaginary parts)."""
    def fn(lib, re, im):
        out = getattr(lib.fft, name)(lib.complex(re, im) if hasattr(lib, "complex") else re + 1j * im)
        return lib.view_as_real(out) if out.is_complex() else out
    check(lambda lib, re, im: fn(lib, re, im), X.astype(np.float64), X[::-1].astype(np.float64).copy(),
          grad=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "hfft", "fft2", "rfftn", "irfftn"])
def test_precision_and_dtype(name, dtype):
    """float32 in -> complex64 out (no silent complex128), values within the dtype's rounding."""
    data = C.astype(dtype) if dtype.startswith("complex") else X.astype(dtype)
    if name in ("rfft", "rfftn") and dtype.startswith("complex"):
        data = data.real.copy()
    check(lambda lib, x: getattr(lib.fft, name)(x).resolve_conj(), data)  # (torch's ifft of real: a conj view)


@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fftn(x, dim=(0, 2)), lambda lib, x: lib.fft.rfftn(x, dim=(2, 0)),
    lambda lib, x: lib.fft.fft(x, dim=1), lambda lib, x: lib.fft.irfftn(lib.fft.rfftn(x)),
    lambda lib, x: lib.fft.hfftn(lib.fft.fftn(x), dim=(1, 0))])
def test_permuted_layouts(call, perm):
    """Output strides follow torch's kernel (batch dims by input stride, then the transformed dims)."""
    check(lambda lib, x: call(lib, x.permute(*perm)), X3)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fftn(x, dim=(0, 2)), lambda lib, x: lib.fft.rfftn(x), lambda lib, x: lib.fft.rfft2(x),
    lambda lib, x: lib.fft.irfftn(x.to(lib.complex64)), lambda lib, x: lib.fft.ihfftn(x),
    lambda lib, x: lib.fft.fft(x, dim=0), lambda lib, x: lib.fft.hfftn(x.to(lib.complex64), dim=(2, 0, 1))])
@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 0, 1), (1, 2, 0)])
def test_meta_layouts(call, perm):
    """On meta tensors the layouts are torch's meta kernels' (NOTE [ FFT layout on meta tensors ])."""
    def shapes(lib):
        x = lib.empty(3, 4, 5, device="meta").permute(*perm)
        r = call(lib, x)
        return tuple(r.shape), r.stride(), str(r.dtype).split(".")[-1]
    assert shapes(ember) == shapes(torch)


@pytest.mark.parametrize("name", ["fft", "rfft", "ifftn", "irfft", "hfft2"])
def test_out(name):
    data = C if name in ("irfft", "hfft2") else X
    def fn(lib, x):
        r = getattr(lib.fft, name)(x)
        o = lib.empty(0, dtype=r.dtype)
        assert getattr(lib.fft, name)(x, out=o) is o
        return o
    check(fn, data, check_stride=False)


ERRORS = [
    (lambda lib, x: lib.fft.rfft(x.to(lib.complex64)), X), (lambda lib, x: lib.fft.fft(x, norm="bad"), X),
    (lambda lib, x: lib.fft.fft(x, n=0), X), (lambda lib, x: lib.fft.fft(x.half()), X),
    (lambda lib, x: lib.fft.rfftn(x.to(lib.complex64)), X), (lambda lib, x: lib.fft.fftn(x, dim=(0, 0)), X),
    (lambda lib, x: lib.fft.fftn(x, s=(2, 2, 2)), X), (lambda lib, x: lib.fft.fftn(x, s=(2,), dim=(0, 1)), X),
    (lambda lib, x: lib.fft.irfft(x[:, :1].to(lib.complex64)), X), (lambda lib, x: lib.fft.fft(x, dim=3), X),
    (lambda lib, x: lib.fft.ihfft(x.to(lib.complex64)), X), (lambda lib, x: lib.fft.fft(x[0, 0]), X),
    (lambda lib, x: lib.fft.ihfftn(x.to(lib.complex64)), X), (lambda lib, x: lib.fft.fft(x[:0]), X),
    (lambda lib, x: lib.fft.fftn(x, s=(0, 3)), X), (lambda lib, x: lib.fft.fftshift(x[0, 0]), X),
    (lambda lib, x: lib.fft.fftfreq(4, dtype=lib.int64), X),
    (lambda lib, x: lib.fft.fft(x.requires_grad_(), out=lib.empty(0, dtype=lib.complex64)), X),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, data = ERRORS[i]
    assert_same_error(fn, data)


def test_integer_input_promotes_to_default_dtype():
    check(lambda lib, x: lib.fft.fft(x), np.arange(6, dtype=np.int64))
    check(lambda lib, x: lib.fft.rfftn(x), np.arange(6, dtype=np.int32).reshape(2, 3))


def test_gradgrad():
    """The primitives' derivatives are themselves differentiable (create_graph)."""
    def fn(lib, x):
        y = lib.fft.rfft(x)
        g, = lib.autograd.grad((y.abs() ** 2).sum(), x, create_graph=True)
        return g
    check(fn, X.astype(np.float64), grad=True)
