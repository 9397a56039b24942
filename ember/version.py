"""ember.version: the build facts scripts log or check (torch.version's names).

`__version__` is the torch API version ember follows, with ember's own version after the `+`, so version
checks in scripts pass. ember computes on the CPU with NumPy: no CUDA, ROCm/HIP or XPU build, no debug build.
There is no torch commit behind ember, so `git_version` is "Unknown", what torch writes for a build made
outside a git checkout.
"""

from typing import Optional

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]
__version__ = "2.13.0+ember.0.1"
debug = False
cuda: Optional[str] = None
git_version = "Unknown"
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
