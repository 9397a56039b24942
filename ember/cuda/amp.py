"""ember.cuda.amp: the deprecated torch.cuda.amp names. `GradScaler` is `ember.amp.GradScaler("cuda")`,
disabled on a machine without CUDA (NOTE [ A disabled GradScaler ] in ember/amp/grad_scaler.py);
`autocast` is `ember.amp.autocast("cuda")`, disabled with torch's warning; `custom_fwd`/`custom_bwd` are
ember.amp's for "cuda". Each warns as torch's does."""

import warnings

from .._naming import named
from .._torch_alias import missing_attribute
from ..amp import autocast_mode as _ac
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "amp_definitely_not_available", "autocast", "custom_fwd", "custom_bwd"]


def amp_definitely_not_available():
    """Whether CUDA amp is certainly unavailable: True, ember has no CUDA."""
    return True


class GradScaler(_GradScaler):
    """Deprecated: `ember.amp.GradScaler("cuda", ...)`."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn(named("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                            "`ember.amp.GradScaler('cuda', args...)` instead."), FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class autocast(_ac.autocast):
    """Deprecated: `ember.amp.autocast("cuda", ...)` (disabled: ember has no CUDA)."""

    def __new__(cls, enabled=True, dtype=None, cache_enabled=True):
        return super().__new__(cls)

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from .. import float16

        super().__init__("cuda", enabled=enabled, dtype=float16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


def _deprecated_new(new):
    # torch's deprecation wraps the class's __new__: it warns first, then a wrong argument is __new__'s error
    def __new__(cls, *args, **kwargs):
        warnings.warn(named("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                            "`ember.amp.autocast('cuda', args...)` instead."), FutureWarning, stacklevel=2)
        return new(cls, *args, **kwargs)
    return staticmethod(__new__)


autocast.__new__ = _deprecated_new(autocast.__new__)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: `ember.amp.custom_fwd(device_type="cuda")`."""
    warnings.warn(named("`ember.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                        "`ember.amp.custom_fwd(args..., device_type='cuda')` instead."), FutureWarning,
                  stacklevel=2)
    return _ac.custom_fwd(fwd=fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: `ember.amp.custom_bwd(device_type="cuda")`."""
    warnings.warn(named("`ember.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                        "`ember.amp.custom_bwd(args..., device_type='cuda')` instead."), FutureWarning,
                  stacklevel=2)
    return _ac.custom_bwd(bwd, device_type="cuda")


__getattr__ = missing_attribute(__name__)
