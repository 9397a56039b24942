"""ember.cuda.amp: the deprecated torch.cuda.amp names. `GradScaler` is `ember.amp.GradScaler("cuda")`,
disabled on a machine without CUDA (NOTE [ A disabled GradScaler ] in ember/amp/grad_scaler.py)."""

import warnings

from .._naming import named
from .._torch_alias import missing_attribute
from ..amp.grad_scaler import GradScaler as _GradScaler

__all__ = ["GradScaler", "amp_definitely_not_available"]


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


__getattr__ = missing_attribute(__name__)
