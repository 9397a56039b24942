"""torch's two loss-scaling ops, `_amp_foreach_non_finite_check_and_unscale_` and `_amp_update_scale_`, on
which `GradScaler` (ember/amp/grad_scaler.py) is built. Both work in place, as torch's CPU kernels do.
"""

import numpy as np

from .._dispatch import FLOATING, OTHER, _modes, defop, dispatch
from .._tensor import _version_counter
from ..autograd.graph import check_inplace
from ._util import public, refuse_under_vmap, typed

# ---- _amp_foreach_non_finite_check_and_unscale_ --------------------------------------------------------


@defop("_amp_foreach_non_finite_check_and_unscale_", None, OTHER, dtypes=FLOATING,
       error="_amp_foreach_non_finite_check_and_unscale_cpu")
def _unscale_kernel(*args):
    """args: n gradients, found_inf, inv_scale, n. Each gradient is multiplied by inv_scale in float32 and
    rounded once to its dtype (torch's CPU kernel for the narrow dtypes); found_inf becomes 1.0 if any of
    them holds an inf or a NaN."""
    n = args[-1]
    found, inv = args[n], np.float32(args[n + 1].reshape(()))
    with np.errstate(all="ignore"):
        for g in args[:n]:
            wide = g.astype(np.float32, copy=False) if g.dtype.itemsize < 4 else g
            if not np.isfinite(wide).all():
                found[...] = 1.0
            g[...] = wide * inv
    return ()


_unscale_kernel.meta_(lambda *args: ())  # in place: nothing to compute without data


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """torch._amp_foreach_non_finite_check_and_unscale_: unscale gradients in place, flag infs/NaNs."""
    if _modes:  # (V) torch's vmap has no fallback for an op over a list of tensors
        refuse_under_vmap("_amp_foreach_non_finite_check_and_unscale_", (self, found_inf, inv_scale), "no_fallback")
    if inv_scale.numel() != 1:
        raise RuntimeError("inv_scale must be a 1-element tensor.")
    if found_inf.numel() != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if inv_scale.dtype.name != "float32":
        raise RuntimeError("inv_scale must be a float tensor.")
    if found_inf.dtype.name != "float32":
        raise RuntimeError("found_inf must be a float tensor.")
    grads = list(self)
    if not grads:
        return None
    dispatch(_unscale_kernel, tuple(grads) + (found_inf, inv_scale), (len(grads),))
    for t in grads + [found_inf]:
        _version_counter(t)[0] += 1
    return None


public["_amp_foreach_non_finite_check_and_unscale_"] = _amp_foreach_non_finite_check_and_unscale_


# ---- _amp_update_scale_ ----------------------------------------------------------------------------------


@defop("_amp_update_scale_", None, OTHER)
def _update_kernel(scale, tracker, found, growth_factor, backoff_factor, growth_interval):
    """Back the scale off after an inf/NaN step, grow it after `growth_interval` clean steps in a row (if
    the grown scale is finite); float32 arithmetic, as torch's kernel."""
    s = np.float32(scale.reshape(()))
    with np.errstate(all="ignore"):
        if float(found.reshape(())):
            s, t = s * np.float32(backoff_factor), 0
        else:
            t = int(tracker.reshape(())) + 1
            if t == growth_interval:
                grown = s * np.float32(growth_factor)
                s, t = (grown if np.isfinite(grown) else s), 0
    scale[...] = s
    tracker[...] = t
    return ()


_update_kernel.meta_(lambda *args: ())


@typed
def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                       growth_interval: int):
    """torch._amp_update_scale_: the scale `self` and `growth_tracker` updated in place; returns `self`."""
    if _modes:  # (V) nor for one writing into arguments other than self
        refuse_under_vmap("_amp_update_scale_", (self, growth_tracker, found_inf), "out")
    check_inplace(self, True)  # (a leaf that requires grad refuses, as for any in-place op)
    for t, name in ((growth_tracker, "growth_tracker"), (self, "current_scale"), (found_inf, "found_inf")):
        if t.numel() != 1:  # (torch's sizes first, then the dtypes)
            raise RuntimeError(f"{name} must be a 1-element tensor.")
    if growth_tracker.dtype.name != "int32":
        raise RuntimeError("growth_tracker must be an int tensor.")
    if self.dtype.name != "float32":
        raise RuntimeError("current_scale must be a float tensor.")
    if found_inf.dtype.name != "float32":
        raise RuntimeError("found_inf must be a float tensor.")
    dispatch(_update_kernel, (self, growth_tracker, found_inf),
             (float(scale_growth_factor), float(scale_backoff_factor), int(growth_interval)))
    for t in (self, growth_tracker):
        _version_counter(t)[0] += 1
    return self


public["_amp_update_scale_"] = _amp_update_scale_
