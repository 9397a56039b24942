"""torch's window factories (hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window)
and the short-time Fourier transform and its inverse (stft, istft), as compositions of ember ops.

They follow torch's C++ (aten/src/ATen/native/TensorFactories.cpp, SpectralOps.cpp) op for op, so each
rounds where torch rounds (a float32 Hann window is arange, scale, cos, scale, shift, each in float32) and
stft / istft differentiate through the FFT primitives of fft.py.
"""

import warnings

import numpy as np

from .. import _dtypes
from .._dispatch import _modes
from ._util import method, public

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "stft", "istft"]

# torch's C++ spelling of a dtype in the TensorOptions its window check prints
_CPP_TYPES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _window_checks(name, n, dtype):
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP_TYPES.get(dtype.name, dtype.name)}, "
            "device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))")


def _window(name, n, periodic, dtype, device, requires_grad, body):
    """torch's window skeleton: checks, the empty and one-sample windows, the periodic window as the first n
    samples of the symmetric window of n + 1 (a view of it, as torch's narrow)."""
    from .creation import empty, ones, tensor

    dtype = _dtypes.get_default_dtype() if dtype is None else dtype
    _window_checks(name, n, dtype)
    if n <= 1:
        w = (empty if n == 0 else ones)((n,), dtype=dtype, device=device)
    else:
        length = n + 1 if periodic else n
        np_dtype = _dtypes.to_numpy(dtype)
        w = tensor(body(_Steps(np_dtype), np.arange(length).astype(np_dtype), length), dtype=dtype, device=device)
        if periodic:
            w = w.narrow(0, 0, length - 1)
    return w.requires_grad_(True) if requires_grad else w


class _Steps:
    """torch's tensor arithmetic in its C++ window code, one op at a time: a scalar operand is first converted
    to the tensor's dtype (C++ `mul_(double)` on a Half tensor rounds the double to Half), then each op is
    computed in the op-math type (float for half and bfloat16) and rounded back."""

    def __init__(self, np_dtype):
        self.dtype = np_dtype
        self.math = np.dtype(np.float64) if np_dtype == np.float64 else np.dtype(np.float32)

    def __call__(self, fn, *arrays):
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(a.astype(self.math) for a in arrays))).astype(self.dtype)

    def scalar(self, v):
        return self.math.type(self.dtype.type(v))


def _cosine_sum(alpha, beta):
    def body(st, a, n):
        w = st(lambda v: v * st.scalar(np.pi * 2.0 / (n - 1)), a)
        w = st(np.cos, w)
        w = st(lambda v: v * st.scalar(-beta), w)
        return st(lambda v: v + st.scalar(alpha), w)
    return body


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """The Hann window 0.5 - 0.5 cos(2 pi n / (N - 1)) (N = window_length, + 1 if periodic)."""
    _window_checks("hann_window", window_length, _dtypes.get_default_dtype() if dtype is None else dtype)
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _cosine_sum(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """The Hamming window alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def _blackman(st, a, n):
    w = st(lambda v: v * st.scalar(np.pi / (n - 1)), a)
    four = st(lambda v: v * st.scalar(0.08), st(np.cos, st(lambda v: v * st.scalar(4), w)))
    two = st(lambda v: v * st.scalar(0.5), st(np.cos, st(lambda v: v * st.scalar(2), w)))
    return st(lambda v: v + st.scalar(0.42), st(np.subtract, four, two))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Blackman window 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, _blackman)


def _bartlett(st, a, n):
    w = st(lambda v: v * st.scalar(2.0 / (n - 1)), a)
    first_half = ((n - 1) >> 1) + 1
    w[first_half:] = st(lambda v: v * st.scalar(-1) + st.scalar(2), w[first_half:])
    return w


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The Bartlett (triangular) window 1 - |2n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, _bartlett)


def _kaiser(beta):
    def body(st, a, n):
        # torch's kernel: each sample in the op-math type, I0 twice, rounded once
        from . import cephes

        x = a.astype(np.float64)
        alpha = (n - 1) / 2.0
        with np.errstate(all="ignore"):
            r = cephes.i0(beta * np.sqrt(np.abs(1 - ((x - alpha) / alpha) ** 2))) / cephes.i0(np.float64(beta))
        return r.astype(st.dtype)
    return body


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """The Kaiser window I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, _kaiser(beta))


# ---- stft / istft ----------------------------------------------------------------------------------------------

_warned = set()


def _warn_once(key, message):
    """torch's TORCH_WARN_ONCE: a UserWarning, once per process."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _opt(v):
    return "None" if v is None else str(int(v)) if isinstance(v, bool) else str(v)


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _stft_repr(x, n_fft, hop, win, window, normalized, onesided, return_complex, align):
    w = "None" if window is None else f"{window.type()}{{{_sizes(window)}}}"
    return (f"stft({x.type()}{_sizes(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={w}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align)}) ")


def _centered_window(window, n_fft, win_length, like):
    from .creation import zeros

    left = (n_fft - win_length) // 2
    if window is not None:
        w = zeros((n_fft,), dtype=window.dtype, device=window.device)
        w[left:left + win_length] = window
    else:
        w = zeros((n_fft,), dtype=like.dtype, device=like.device)
        w[left:left + win_length] = 1
    return w


@method()
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the FFT of windowed frames of n_fft samples every hop_length.

    Shape: (B?, L) -> (B?, n_fft // 2 + 1 (onesided) or n_fft, n_frames), complex (or its real view)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("stft", stft, input, n_fft, hop_length, win_length, window, center, pad_mode,
                                 normalized, onesided, return_complex, align_to_window)
    from ..nn.functional import pad
    from .fft import _c2c, _r2c
    from .shape import view_as_real

    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # torch.functional.stft pads before the native call
        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        p = int(n_fft // 2)
        input = pad(input.view(extended), [p, p], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    repr_ = _stft_repr(input, n_fft, hop, win, window, normalized, onesided, return_complex, align_to_window)
    if window is None:
        _warn_once("stft_window", "A window was not provided. A rectangular window will be applied,which is known to "
                   "cause spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                   "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                   "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    complex_out = return_complex if return_complex is not None else \
        input.is_complex() or (window is not None and window.is_complex())
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        _warn_once("stft_real", "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
                   "return complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you "
                   "can still call torch.view_as_real on the complex output to recover the old return format.")
    if not (input.dtype.is_floating_point or input.is_complex()):
        raise RuntimeError(repr_ + ": expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(repr_ + ": expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    batch, length = x.shape
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(repr_ + f": expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(repr_ + f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(repr_ + f": expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(repr_ + f": expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {_sizes(window)}")
    w = window if win >= n_fft else _centered_window(window, n_fft, win, input)
    if align_to_window:  # frames start where the window's nonzero part does: the signal is padded by its margins
        n_frames = 1 + (length - win) // hop
        left = (n_fft - win) // 2
        if left or n_fft - win - left:
            x = pad(x, [left, n_fft - win - left])
    else:
        n_frames = 1 + (length - n_fft) // hop
    frames = x.as_strided((batch, n_frames, n_fft), (x.stride(0), hop * x.stride(1), x.stride(1)),
                          x.storage_offset())
    if w is not None:
        frames = frames.mul(w)
    complex_fft = frames.is_complex()
    side = (not complex_fft) if onesided is None else onesided
    norm = 1 if normalized else 0
    if complex_fft:
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _c2c(frames, [2], norm, True)
    else:
        out = _r2c(frames, [2], norm, side)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if complex_out else view_as_real(out)


def _istft_repr(x, n_fft, hop, win, window, center, normalized, onesided, length, return_complex):
    w = "None" if window is None else f"{window.type()}{{{_sizes(window)}}}"
    kind = "CPU" + {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(x.dtype.name, "") + "Type"
    return (f"istft({kind}{_sizes(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window={w}, "
            f"center={int(center)}, normalized={int(normalized)}, onesided={_opt(onesided)}, length={_opt(length)}, "
            f"return_complex={int(return_complex)}) ")


def _overlap_add(frames, total, hop):
    """torch's unfold_backward for istft: frames (C, n_frames, n_fft) summed into (C, total) at hop."""
    from .creation import constant_like, zeros

    c, n_frames, n_fft = frames.shape
    idx = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]).reshape(-1)
    out = zeros((c, total), dtype=frames.dtype, device=frames.device)
    return out.index_add(1, constant_like(idx, frames), frames.reshape(c, n_frames * n_fft))


@method()
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse short-time Fourier transform: overlap-add of the inverse FFTs of the frames, divided by the
    summed squared window (least squares, as torch's)."""
    from .creation import ones
    from .fft import _c2c, _c2r

    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    repr_ = _istft_repr(input, n_fft, hop, win, window, center, normalized, onesided, length, return_complex)
    if window is None:
        _warn_once("istft_window", "A window was not provided. A rectangular window will be applied.Please provide the "
                   "same window used by stft to make the inversion lossless.To suppress this warning and use a "
                   "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    dim = input.dim() + 1  # (as torch counts: the real view's dims)
    if dim < 3:  # (torch reads the frequency size, dim -3 of the real view, first)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-dim}, {dim - 1}], but got -3)")
    if input.numel() == 0:
        raise RuntimeError(repr_ + ": input tensor cannot be empty.")
    if dim not in (3, 4):
        raise RuntimeError(repr_ + f": expected a tensor with 3 or 4 dimensions of complex, but got {dim}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    side = fft_size != n_fft if onesided is None else onesided
    if side and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(repr_ + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not side and n_fft != fft_size:
        raise RuntimeError(repr_ + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not (0 < hop <= win):
        raise RuntimeError(repr_ + ": expected 0 < hop_length <= win_length")
    if not (0 < win <= n_fft):
        raise RuntimeError(repr_ + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(repr_ + ": Invalid window shape. window has to be 1D and length of `win_length`")
    real_dtype = _dtypes.float32 if input.dtype.name == "complex64" else _dtypes.float64
    w = window if window is not None else ones((win,), dtype=real_dtype, device=input.device)
    if win != n_fft:
        w = _centered_window(w, n_fft, win, w)
    x = input.unsqueeze(0) if dim == 3 else input
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size)
    norm = 1 if normalized else 2
    if return_complex:
        if side:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _c2c(x, [2], norm, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not side:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _c2r(x, [2], norm, n_fft)
    y = _overlap_add(x * w.view(1, 1, n_fft), total, hop)
    envelope = _overlap_add(w.pow(2).expand(1, n_frames, n_fft), total, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else total)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(repr_ + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if dim == 3:
        y = y.squeeze(0)
    if end > total:
        from .creation import zeros
        from .shape import cat

        _warn_once("istft_length", "The length of signal is shorter than the length parameter. Result is being padded "
                   "with zeros in the tail. Please check your center and hop_length settings.")
        tail = zeros(tuple(y.shape[:-1]) + (end - total,), dtype=y.dtype, device=y.device)
        y = cat((y, tail), -1)
    return y


public.update(hann_window=hann_window, hamming_window=hamming_window, blackman_window=blackman_window,
              bartlett_window=bartlett_window, kaiser_window=kaiser_window)
