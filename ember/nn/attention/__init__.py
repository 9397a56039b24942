"""ember.nn.attention: choosing scaled_dot_product_attention's backend (torch.nn.attention).

NOTE [ SDPA backends on the CPU ]
torch's CPU build runs `scaled_dot_product_attention` with two backends, MATH and its CPU FLASH_ATTENTION
kernel; EFFICIENT_ATTENTION, CUDNN_ATTENTION and OVERRIDEABLE exist only on accelerators. ember has one
implementation (the math formula), which stands for both CPU backends: under `sdpa_kernel` a call runs when
MATH or FLASH_ATTENTION is enabled, and otherwise raises torch's "No viable backend" error, as a CPU torch
does. The flash-attention implementation registry is kept as torch's; its two built-in entries (FA3, FA4)
need CUDA packages, so activating them fails on the import, as it does on a CPU-only torch.
"""

import contextlib
import enum
import logging

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "register_flash_attention_impl",
           "activate_flash_attention_impl", "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False
_logger = logging.getLogger(__name__)


class SDPBackend(enum.IntEnum):
    """The backends of scaled_dot_product_attention (torch's enum values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
        SDPBackend.OVERRIDEABLE)
_CPU = frozenset({SDPBackend.MATH, SDPBackend.FLASH_ATTENTION})
_enabled = set(_ALL)  # (process-wide, as torch's global flags)
_priority = list(_ALL)


def _check_backends():
    """Called by scaled_dot_product_attention: raise torch's error when no CPU backend is enabled."""
    if not (_enabled & _CPU):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")


def _set_backends(backends, set_priority=False):
    _enabled.clear()
    _enabled.update(b for b in _ALL if b in backends)
    if set_priority:
        order = [SDPBackend(int(b)) for b in backends]
        order += [b for b in _priority if b not in order]
        _priority[:] = order


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Context manager (and decorator) enabling only `backends` (an SDPBackend or a list of them) for
    scaled_dot_product_attention; the previous set is restored on exit (NOTE [ SDPA backends on the CPU ])."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = [b for b in _priority if b in _enabled] if set_priority else [b for b in _ALL if b in _enabled]
    try:
        _set_backends(backends, set_priority)
        yield {}
    finally:
        _set_backends(previous, set_priority)


# ---- the flash-attention implementation registry (torch.nn.attention._registry) ------------------------------


def _needs(module):
    def register():
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)
    return register


_FLASH_ATTENTION_IMPLS = {"FA3": _needs("flash_attn_interface"), "FA4": _needs("flash_attn")}
_FLASH_ATTENTION_ACTIVE = None


def register_flash_attention_impl(impl, *, register_fn):
    """Register the callable that activates flash attention implementation `impl`."""
    _FLASH_ATTENTION_IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Activate a registered flash attention implementation (its register function runs now)."""
    global _FLASH_ATTENTION_ACTIVE
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _FLASH_ATTENTION_IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _FLASH_ATTENTION_ACTIVE = (impl, handle)


def list_flash_attention_impls():
    """The names of the registered flash attention implementations, sorted."""
    return sorted(_FLASH_ATTENTION_IMPLS.keys())


def current_flash_attention_impl():
    """The activated implementation's name, or None for the default."""
    return _FLASH_ATTENTION_ACTIVE[0] if _FLASH_ATTENTION_ACTIVE is not None else None


def restore_flash_attention_impl(_raise_warn=True):
    """Back to the default implementation (a warning in the log when none was activated)."""
    global _FLASH_ATTENTION_ACTIVE
    handle = _FLASH_ATTENTION_ACTIVE[1] if _FLASH_ATTENTION_ACTIVE is not None else None
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        _logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _FLASH_ATTENTION_ACTIVE = None
