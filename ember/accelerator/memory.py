"""ember.accelerator.memory: torch.accelerator's memory statistics; each raises, as there is no accelerator.

See NOTE [ No accelerator ] in ember/accelerator/__init__.py.
"""

from ._none import no_accelerator

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated", "max_memory_reserved",
           "memory_allocated", "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats"]


def empty_cache():
    """Release the accelerator's cached memory; raises, as there is no accelerator."""
    no_accelerator()


def empty_host_cache():
    """Release the accelerator's cached pinned host memory; raises, as there is no accelerator."""
    no_accelerator()


def _stat(doc):
    def fn(device_index=None, /):
        no_accelerator()
    fn.__doc__ = doc + "; raises, as there is no accelerator."
    return fn


get_memory_info = _stat("(free, total) memory of an accelerator device")
max_memory_allocated = _stat("The peak memory allocated on an accelerator device")
max_memory_reserved = _stat("The peak memory reserved on an accelerator device")
memory_allocated = _stat("The memory allocated on an accelerator device")
memory_reserved = _stat("The memory reserved on an accelerator device")
memory_stats = _stat("The memory statistics of an accelerator device")
reset_accumulated_memory_stats = _stat("Reset the accumulated memory statistics of an accelerator device")
reset_peak_memory_stats = _stat("Reset the peak memory statistics of an accelerator device")
for _name in __all__[2:]:
    globals()[_name].__name__ = globals()[_name].__qualname__ = _name
