"""`GradScaler` for an accelerator device, as a CPU-only torch builds it: disabled, a pass-through.

NOTE [ A disabled GradScaler ]
Training scripts written for GPUs make `torch.amp.GradScaler("cuda")` (or the deprecated
`torch.cuda.amp.GradScaler()`) unconditionally and then call `scaler.scale(loss).backward()`,
`scaler.step(optimizer)`, `scaler.update()`. On a machine without CUDA, torch warns "torch.cuda.amp.GradScaler
is enabled, but CUDA is not available.  Disabling." and the scaler does nothing: `scale` returns its input,
`step` calls `optimizer.step()`, `unscale_` and `update` do nothing, `state_dict()` is `{}`, `get_scale()` is
1.0. ember has no CUDA, so this is exactly what it builds. A scaler that would stay enabled (the "cpu"
device, with its real dynamic loss scaling) belongs to mixed precision (issue 21) and fails saying so.
"""

import warnings

from .._naming import named

__all__ = ["GradScaler"]


class GradScaler:
    """Loss scaling for mixed-precision training (see NOTE [ A disabled GradScaler ]).

    Args:
        device (str): the device the scaler is for. Default: "cuda".
        init_scale, growth_factor, backoff_factor, growth_interval: the dynamic scaling parameters (unused
            while disabled).
        enabled (bool): ask for scaling; on a machine without the device it is disabled with a warning.
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn(named("ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."),
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            raise NotImplementedError(f"ember does not implement torch.amp.GradScaler({device!r}) with loss "
                                      "scaling enabled yet")

    def scale(self, outputs):
        """The outputs multiplied by the scale factor: unchanged while disabled."""
        return outputs

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale factor: nothing to do while disabled."""

    def step(self, optimizer, *args, **kwargs):
        """`optimizer.step(*args, **kwargs)` (its return value), the gradients being unscaled already."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Update the scale factor: nothing to do while disabled."""

    def get_scale(self):
        """The current scale factor: 1.0 while disabled."""
        return 1.0

    def is_enabled(self):
        """Whether the scaler is enabled: False (NOTE [ A disabled GradScaler ])."""
        return self._enabled

    def _get_growth_tracker(self):
        return 0

    def state_dict(self):
        """The scaler's state: empty while disabled."""
        return {}

    def load_state_dict(self, state_dict):
        """Load a state: nothing to load into while disabled."""

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
