"""torch.signal.windows's window functions, written as torch writes them (torch/signal/windows/windows.py):
a `linspace` of the window's sample positions and a few pointwise ops, so values, dtypes and
`requires_grad` come out as torch's. `M` is the window length; `sym=True` gives the symmetric window
(for filter design), `sym=False` the periodic one (for spectral analysis)."""

import math
from collections.abc import Iterable

from ... import _dtypes
from ..._ops import creation as _creation
from ..._ops import pointwise as _pw
from ..._ops import unary as _unary
from ..._ops.special_fns import i0 as _i0

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(function_name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) != "torch.strided" and str(layout) != "ember.strided":
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: {layout}")
    if dtype.name not in ("float32", "float64"):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")


def _start(function_name, M, dtype, layout):
    """The dtype (the default one if None), checked."""
    dtype = _dtypes.get_default_dtype() if dtype is None else dtype
    _checks(function_name, M, dtype, layout)
    return dtype


def _empty(dtype, device, requires_grad):
    return _creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)


def _ones(dtype, device, requires_grad):
    return _creation.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def _linspace(start, end, M, dtype, device, requires_grad):
    return _creation.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The exponential (Poisson) window exp(-|n - center| / tau)."""
    dtype = _start("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype, device, requires_grad)
    return _pw.exp(-_pw.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window sin(pi (n + 1/2) / M)."""
    dtype = _start("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device, requires_grad)
    return _unary.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Gaussian window exp(-(n - (M - 1)/2)^2 / (2 std^2))."""
    dtype = _start("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device, requires_grad)
    return _pw.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Kaiser window I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)."""
    dtype = _start("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    beta = _creation.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _pw.minimum(beta, start + (M - 1) * constant)
    k = _linspace(start, end, M, dtype, device, requires_grad)
    return _i0(_pw.sqrt(beta * beta - _pw.pow(k, 2))) / _i0(beta)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window 0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window 0.5 - 0.5 cos(2 pi n / (M - 1))."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    dtype = _start("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Bartlett (triangular) window 1 - |2n / (M - 1) - 1|."""
    dtype = _start("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(start, start + (M - 1) * constant, M, dtype, device, requires_grad)
    return 1 - _pw.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The generic weighted sum of cosine terms: sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _start("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, device, requires_grad)
    if M == 1:
        return _ones(dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0, (M - 1) * constant, M, dtype, device, requires_grad)
    a_i = _creation.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                           requires_grad=requires_grad)
    i = _creation.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _unary.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The generalized Hamming window alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
