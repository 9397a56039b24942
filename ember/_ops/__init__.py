"""The op library: one module per family. Importing it attaches every op to Tensor and fills `public`.

Each op name is defined in exactly one module, so the import order below does not matter.
"""

from . import (  # noqa: F401 - imported for their registrations
    amp,  # GradScaler's two ops (area A)
    binary,
    control_flow,  # torch.cond (L)
    conv,
    copying,
    creation,
    discrete_sampling,  # distributions (D2): poisson, binomial
    distributions_sampling,  # distributions (D1): gamma and Dirichlet samplers, their gradients
    factorizations,
    fft,  # special functions and spectral ops (S)
    foreach,
    indexing,
    linalg,
    linalg_ext,
    linalg_funcs,  # linalg (L)
    lu,  # linalg (L)
    names,  # issue 15's remaining torch.* / Tensor names (area T)
    names_more,  # (area T, part two)
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
    unpool,  # (area N: max unpooling, fractional max pooling)
)
from ._util import public as public
