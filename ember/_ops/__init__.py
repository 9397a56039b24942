"""The op library: one module per family. Importing it attaches every op to Tensor and fills `public`."""

from . import (  # noqa: F401  # noqa: F401  (nn primitives, issue 5)  # noqa: F401  (issue 4)
    binary,
    conv,
    copying,
    creation,
    decomp,
    indexing,
    linalg,
    linalg_ext,
    nn_ops,
    pointwise,
    pooling,
    random,  # noqa: F401  (sampling, issue 9)
    reduction,
    scan,
    selection,
    shape,
    sorting,
    stats,
    unary,
)
from ._util import public as public
