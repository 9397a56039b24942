"""Grad mode's per-thread state: whether ops record for autograd, and whether inference mode is on.

It sits at the bottom of the layers (the dispatcher and Tensor read it on every op); the public API over it
(`no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`) is `ember.autograd.grad_mode`.
"""

import threading

__all__ = ["state"]


class _State(threading.local):
    """Class attributes are the defaults each new thread starts with."""

    enabled = True
    inference = False
    grad_layout_enforced = True  # autograd.enforce_grad_layout_policy (read only where a .grad is created)
    multithreading = True  # autograd.set_multithreading_enabled (ember's engine runs on the calling thread)
    # (V) ember.func: how many transforms (vmap levels, grad/vjp/jvp calls) are running `f` in this thread, and
    # whether requires_grad_() is allowed inside them all the same (NOTE [ Refusals inside a transform ])
    func_transforms = 0
    func_requires_grad_ok = 0
    func_grad_levels = 0  # (of which grad/vjp/jvp calls: `.data = ...` is refused under those)
    func_jvp_inner = False  # (J) the innermost of those is a jvp: NOTE [ Tensors inside jvp ] in ember/_tensor.py


state = _State()
