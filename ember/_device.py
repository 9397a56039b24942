"""ember.device: where a tensor lives. ember computes on the CPU only; other device types can be named
(scripts build `device("cuda")` to test for it) but allocating on them fails with torch's error.

NOTE [ Default device ]
`with ember.device("meta"):` makes the factories (empty, zeros, ones, full, tensor, arange, linspace,
eye, ...) create on that device when they are given none, as torch's DeviceContext does; `*_like`
factories keep following their input. The context is per thread (a stack); `check_device(None)`, which every factory
calls, reads it only while some thread has one open, so without one a factory pays one truth test.
"""

import sys
import threading

from ._argparse import call_error

__all__ = ["device"]


class _DefaultDevice(threading.local):
    def __init__(self):
        self.stack = []


_default = _DefaultDevice()
_open = [0]  # `with device(...)` blocks open in any thread (see NOTE [ Default device ])


class device:
    """A device such as ``device('cpu')``, ``device('cuda', 0)`` or ``device('cuda:1')``."""

    __slots__ = ("type", "index")
    __module__ = "ember"
    _TYPES = ("cpu", "cuda", "mps", "meta", "xpu", "hip", "xla", "privateuseone")

    def __init__(self, type, index=None):  # noqa: A002 - torch's argument name
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):  # (an index of the current accelerator,
            raise call_error(RuntimeError("Cannot access accelerator device when none is available."),  # unless
                             sys._getframe(1)) from None  # the call is one torch's parser refuses first)
        elif isinstance(type, str) and ":" in type:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed explicitly: "
                                   f"{type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if not isinstance(type, str) or type not in self._TYPES:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                f"lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {type}"
            )
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        _default.stack.append(self)
        _open[0] += 1
        return self

    def __exit__(self, *exc):
        _default.stack.pop()
        _open[0] -= 1

    def __reduce__(self):
        return (device, (self.type, self.index))


cpu = device("cpu")


def check_device(dev):
    """Accept None and any spelling of the CPU (False) or of the meta device (True: tensors without data,
    NOTE [ Meta payloads ]); anything else fails the way a CPU-only torch does. None means the default
    device (NOTE [ Default device ])."""
    if dev is None:
        if not _open[0] or not _default.stack:
            return False
        dev = _default.stack[-1]
    if dev is cpu or dev == "cpu":
        return False
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cpu":
        return False
    if d.type == "meta":
        return True
    if d.type == "cuda":  # (unless the user's call is one torch's parser refuses first: a dtype given as 1)
        raise call_error(AssertionError("Torch not compiled with CUDA enabled"), sys._getframe(1)) from None
    raise RuntimeError(f"ember only supports the cpu device, got {d}")
