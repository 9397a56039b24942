"""ember.accelerator: torch.accelerator's device-agnostic API, answering as a CPU-only torch does.

NOTE [ No accelerator ]
ember computes on the CPU only, and torch.accelerator never counts the CPU as an accelerator: a CPU-only
torch says `is_available()` False, `current_accelerator()` None, `device_count()` 0, and every call that
needs a device raises "Cannot access accelerator device when none is available." (a RuntimeError). The
common device-selection line `torch.accelerator.current_accelerator() if torch.accelerator.is_available()
else "cpu"` thus picks the CPU, as it does under torch without a GPU.
"""

import warnings

from . import memory as memory
from ._none import no_accelerator as _no_accelerator
from .memory import (
    empty_cache,
    empty_host_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index", "empty_cache",
           "empty_host_cache", "get_memory_info", "is_available", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream", "synchronize"]


def device_count():
    """The number of available accelerator devices: 0 (See NOTE [ No accelerator ])."""
    return 0


def is_available(check_available_devices=True):
    """Whether an accelerator is available: False, ember runs on the CPU."""
    return False


def current_accelerator(check_available=False):
    """The current accelerator as a device, or None when there is none (always None in ember)."""
    return None


def current_device_index():
    """The index of the current accelerator device; raises, as there is none."""
    _no_accelerator()


def current_device_idx():
    """Deprecated alias of `current_device_index`."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Set the current accelerator device; raises, as there is none."""
    if device is None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    _no_accelerator()


def set_device_idx(device, /):
    """Deprecated alias of `set_device_index`."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


def get_device_capability(device=None, /):
    """The capability of an accelerator device; raises, as there is none."""
    _no_accelerator()


def current_stream(device=None, /):
    """The current stream of an accelerator device; raises, as there is none."""
    _no_accelerator()


def set_stream(stream):
    """Set the current stream; raises, as there is no accelerator."""
    _no_accelerator()


def synchronize(device=None, /):
    """Wait for an accelerator device's work to finish; raises, as there is none."""
    _no_accelerator()


class device_index:
    """Context manager setting the current accelerator device index; `None` makes it a no-op."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _no_accelerator()

    def __exit__(self, *exc):
        return False


class Graph:
    """An accelerator graph capture; constructing one raises, as there is no accelerator."""

    def __init__(self, *args, **kwargs):
        _no_accelerator()


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
