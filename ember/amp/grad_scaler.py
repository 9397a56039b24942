"""`GradScaler`: torch's dynamic loss scaling for mixed-precision training, and its two ops.

`scale(loss)` multiplies the loss by the scale factor (2**16 at first) so that small float16 gradients do
not flush to zero; `step(optimizer)` divides the gradients by it (`unscale_`, which `step` calls unless the
script did, e.g. to clip the true gradients) and skips `optimizer.step()` when a gradient holds an inf or a
NaN; `update()` then halves the scale after such a step (`backoff_factor`) or doubles it after
`growth_interval` clean steps in a row (`growth_factor`). The arithmetic is torch's two ops,
`_amp_foreach_non_finite_check_and_unscale_` and `_amp_update_scale_`, so the scale and the skipped steps
follow torch's for the same sequence of losses.

NOTE [ A disabled GradScaler ]
Training scripts written for GPUs make `torch.amp.GradScaler("cuda")` (or the deprecated
`torch.cuda.amp.GradScaler()`) unconditionally. On a machine without CUDA, torch warns "torch.cuda.amp.GradScaler
is enabled, but CUDA is not available.  Disabling." and the scaler does nothing: `scale` returns its input,
`step` calls `optimizer.step()`, `unscale_` and `update` do nothing, `state_dict()` is `{}`, `get_scale()` is
1.0. ember has no CUDA, so that is what a "cuda" scaler is; `enabled=False` gives the same pass-through on
any device. A "cpu" scaler scales for real.
"""

from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum

from .._naming import named
from .._ops.amp import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


# ---- the scaler --------------------------------------------------------------------------------------------


class GradScaler:
    """Dynamic loss scaling for mixed-precision training (see the module docstring).

    Args:
        device (str): the device the scaler is for. Default: "cuda" (disabled: NOTE [ A disabled
            GradScaler ]); use "cpu".
        init_scale (float): the first scale factor. Default: 2.0**16.
        growth_factor (float): the factor the scale grows by after `growth_interval` clean steps. Default: 2.0.
        backoff_factor (float): the factor the scale shrinks by after a step with inf/NaN gradients.
            Default: 0.5.
        growth_interval (int): clean steps in a row before the scale grows. Default: 2000.
        enabled (bool): False makes every method a pass-through. Default: True.

    Example::

        >>> scaler = ember.amp.GradScaler("cpu")
        >>> with ember.autocast("cpu", dtype=ember.float16):
        ...     loss = loss_fn(model(x), y)
        >>> scaler.scale(loss).backward()
        >>> scaler.step(optimizer)
        >>> scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            warnings.warn(named("ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."),
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        from .. import float32, full, int32

        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)

    def scale(self, outputs):
        """`outputs` (a tensor, or an iterable of them) multiplied by the scale factor."""
        if not self._enabled:
            return outputs
        return self._apply_scale(outputs)

    def _apply_scale(self, val):
        from .._tensor import Tensor

        if isinstance(val, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(val.device)
            return val * self._scale
        if isinstance(val, abc.Iterable):
            it = map(self._apply_scale, val)
            return type(val)(it) if isinstance(val, (list, tuple)) else it
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        from .. import float16, no_grad
        from .._tensor import Tensor

        per_dtype = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    per_dtype[param.grad.dtype].append(param.grad)
            for grads in per_dtype.values():
                _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        return {found_inf.device: found_inf}

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale factor (in place), recording whether any is inf/NaN.
        At most once per optimizer between `update()`s; `step` then uses the record."""
        from .. import float32, full

        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """`optimizer.step(*args, **kwargs)` on the unscaled gradients, skipped (returning None) when one of
        them holds an inf or a NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Update the scale factor from this iteration's inf/NaN record (or set it to `new_scale`)."""
        from .._tensor import Tensor

        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = named("new_scale should be a float or a 1-element ember.cuda.FloatTensor or "
                               "ember.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [f for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for f in found_infs[1:]:
                combined += f
            _amp_update_scale_(_scale, _growth_tracker, combined, self._growth_factor, self._backoff_factor,
                               self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale factor (a Python float); 1.0 when disabled."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def is_enabled(self):
        """Whether the scaler scales (False for a disabled one: NOTE [ A disabled GradScaler ])."""
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker; `{}` when disabled."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

