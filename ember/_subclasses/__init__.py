"""ember._subclasses: tensor subclasses the compiler runs on (torch._subclasses): fake tensors."""

from .fake_tensor import FakeTensor as FakeTensor
from .fake_tensor import FakeTensorMode as FakeTensorMode

__all__ = ["FakeTensor", "FakeTensorMode"]
