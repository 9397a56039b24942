"""ember.cpu.amp: torch.cpu.amp's deprecated names, `autocast` (for "cpu", bfloat16 by default) and
`GradScaler` (for "cpu"), each warning as torch's does and then being the ember.amp one."""

import warnings

from .._naming import named
from ..amp.autocast_mode import autocast as _autocast
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):
    """Deprecated: `ember.amp.autocast("cpu", ...)`."""

    def __new__(cls, enabled=True, dtype=None, cache_enabled=True):
        return super().__new__(cls)

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from .. import bfloat16

        super().__init__("cpu", enabled=enabled, dtype=bfloat16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


def _deprecated_new(new):
    # torch's deprecation wraps the class's __new__: it warns first, then a wrong argument is __new__'s error
    def __new__(cls, *args, **kwargs):
        warnings.warn(named("`ember.cpu.amp.autocast(args...)` is deprecated. Please use "
                            "`ember.amp.autocast('cpu', args...)` instead."), FutureWarning, stacklevel=2)
        return new(cls, *args, **kwargs)
    return staticmethod(__new__)


autocast.__new__ = _deprecated_new(autocast.__new__)


class GradScaler(_GradScaler):
    """Deprecated: `ember.amp.GradScaler("cpu", ...)`."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn(named("`ember.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                            "`ember.amp.GradScaler('cpu', args...)` instead."), FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
