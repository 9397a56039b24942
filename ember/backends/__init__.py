"""ember.backends: torch's backend switches. ember computes with NumPy on the CPU, so GPU backends
report unavailable; the flags scripts commonly set (cudnn.benchmark, cudnn.deterministic, allow_tf32)
are plain settable attributes, as on a CPU-only torch."""

from . import cuda as cuda
from . import cudnn as cudnn
from . import mkldnn as mkldnn
from . import mps as mps
