"""`ember.fft`: torch.fft's discrete Fourier transforms (the functions live in ember/_ops/fft.py)."""

from ._ops.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)
from ._tensor import Tensor  # torch.fft re-exports Tensor

__all__ = ["Tensor", "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2",
           "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2",
           "rfftfreq", "rfftn"]
