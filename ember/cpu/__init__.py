"""ember.cpu: torch.cpu's device-agnostic helpers for the CPU (the device-module API of `torch.cuda`).

As in torch, these exist so that code written for `torch.<device>` runs on the CPU: there is one CPU
device, it is always available, streams and events are no-ops that keep their bookkeeping.
"""

import functools
import os
import platform
import types
from contextlib import AbstractContextManager

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event", "get_capabilities"]


class Stream:
    """A CPU stream: it exists for device-agnostic code and does nothing."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """A CPU event: always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_cpu_stream = Stream()
_current_stream = _default_cpu_stream


class StreamContext(AbstractContextManager):
    """Context manager selecting a stream (`None` leaves the current one)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_cpu_stream

    def __enter__(self):
        global _current_stream
        if self.stream is None:
            return
        self.prev_stream = _current_stream
        _current_stream = self.stream

    def __exit__(self, type, value, traceback):
        global _current_stream
        if self.stream is None:
            return
        _current_stream = self.prev_stream


def stream(stream):
    """`StreamContext(stream)`."""
    return StreamContext(stream)


def current_stream(device=None):
    """The currently selected CPU stream."""
    return _current_stream


def is_available():
    """Whether the CPU device is available: always True."""
    return True


def is_initialized():
    """Whether the CPU device is initialized: always True."""
    return True


def synchronize(device=None):
    """Wait for the CPU's work to finish: CPU ops are synchronous, so nothing to do."""


def current_device():
    """The current device for the CPU: always 'cpu'."""
    return "cpu"


def set_device(device):
    """Set the current device: on the CPU, nothing to do."""


def device_count():
    """The number of CPU devices: always 1."""
    return 1


# (torch's key, /proc/cpuinfo flag) for the instruction-set entries of get_capabilities on x86
_X86_FLAGS = [
    ("sse", "sse"), ("sse2", "sse2"), ("sse3", "pni"), ("ssse3", "ssse3"), ("sse4_1", "sse4_1"),
    ("sse4_2", "sse4_2"), ("sse4a", "sse4a"), ("avx", "avx"), ("avx2", "avx2"), ("avx_vnni", "avx_vnni"),
    ("avx512_f", "avx512f"), ("avx512_cd", "avx512cd"), ("avx512_dq", "avx512dq"), ("avx512_bw", "avx512bw"),
    ("avx512_vl", "avx512vl"), ("avx512_ifma", "avx512ifma"), ("avx512_vbmi", "avx512vbmi"),
    ("avx512_vbmi2", "avx512_vbmi2"), ("avx512_bitalg", "avx512_bitalg"),
    ("avx512_vpopcntdq", "avx512_vpopcntdq"), ("avx512_vnni", "avx512_vnni"), ("avx512_bf16", "avx512_bf16"),
    ("avx512_fp16", "avx512_fp16"), ("avx512_vp2intersect", "avx512_vp2intersect"),
    ("avx512_4vnniw", "avx512_4vnniw"), ("avx512_4fmaps", "avx512_4fmaps"), ("avx10_1", "avx10_1"),
    ("avx10_2", "avx10_2"), ("avx_vnni_int8", "avx_vnni_int8"), ("avx_vnni_int16", "avx_vnni_int16"),
    ("avx_ne_convert", "avx_ne_convert"), ("amx_bf16", "amx_bf16"), ("amx_tile", "amx_tile"),
    ("amx_int8", "amx_int8"), ("amx_fp16", "amx_fp16"), ("fma3", "fma"), ("fma4", "fma4"), ("f16c", "f16c"),
    ("bmi", "bmi1"), ("bmi2", "bmi2"), ("popcnt", "popcnt"), ("lzcnt", "abm"), ("aes", "aes"),
    ("sha", "sha_ni"), ("clflush", "clflush"), ("clflushopt", "clflushopt"), ("clwb", "clwb"),
]


@functools.lru_cache(None)
def get_capabilities():
    """An immutable mapping of the CPU's capabilities: instruction-set extensions (x86: `avx2`,
    `avx512_f`, ...), `architecture` and the logical core count, read from the operating system
    (`/proc/cpuinfo` on Linux; torch reads them with cpuinfo)."""
    caps = {"architecture": platform.machine() or "unknown", "num_logical_cores": os.cpu_count() or 1}
    flags = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    if caps["architecture"] in ("x86_64", "AMD64", "i386", "i686"):
        caps.update({key: flag in flags for key, flag in _X86_FLAGS})
    return types.MappingProxyType(caps)


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    if name == "amp":  # area A: torch.cpu.amp's deprecated autocast and GradScaler, loaded on first use
        import importlib

        return importlib.import_module(".amp", __name__)

    return missing_attribute(__name__)(name)
