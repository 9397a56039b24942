"""The op library: one module per family. Importing it attaches every op to Tensor and fills `public`.

Each op name is defined in exactly one module, so the import order below does not matter.
"""

from . import (  # noqa: F401 - imported for their registrations
    binary,
    conv,
    copying,
    creation,
    factorizations,
    fft,  # special functions and spectral ops (S)
    foreach,
    indexing,
    linalg,
    linalg_ext,
    nn_ops,
    optim,
    pointwise,
    pooling,
    random,
    reduction,
    scan,
    selection,
    shape,
    sorting,
    special_fns,  # torch.special's functions (S)
    spectral,  # windows, stft, istft (S)
    stats,
    unary,
)
from ._util import public as public
