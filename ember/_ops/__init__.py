"""The op library: one module per family. Importing it attaches every op to Tensor and fills `public`."""

from . import creation, indexing, linalg, pointwise, reduction, shape  # noqa: F401
from . import conv, nn_ops, pooling  # noqa: F401  (nn primitives, issue 5)
from . import binary, copying, decomp, linalg_ext, scan, selection, sorting, stats, unary  # noqa: F401  (issue 4)
from . import random  # noqa: F401  (sampling, issue 9)
from ._util import public as public
