"""OpInfo entries of the ops ember.distributions adds (ember/_ops/distributions_sampling.py): the gamma and
Dirichlet samplers (seeded: they draw torch's numbers), their reparameterized gradients, and the gamma cdf
(torch.special.gammainc, reached through Gamma.cdf)."""

import numpy as np
from op_db import Sample, add, arr, unary


def _seeded(call):
    def fn(lib, *a, **k):
        lib.manual_seed(0)
        return call(lib, *a, **k)
    return fn


def _dirichlet_samples(dtype, rng):
    return [Sample(arr(rng, s, dtype, 0.2, 4)) for s in [(3, 4), ("T", 4, 3), (2, 3, 2), (5,), (0, 3)]]


def _dirichlet_grad_samples(dtype, rng):
    out = []
    for s in [(3, 4), (2, 3, 2), (5,), ()]:
        x = arr(rng, s, dtype, 0.02, 0.98)
        alpha = arr(rng, s, dtype, 0.2, 9)
        out.append(Sample(x, alpha, np.asarray(alpha + arr(rng, s, dtype, 0.2, 9)).astype(dtype)))
    return out


def _same_shapes(lo, hi, lo2, hi2):
    """Pairs of one shape (torch's gradient kernels size their output by the first argument)."""
    def gen(dtype, rng):
        shapes = [(3, 4), (2, 3, 2), (), (0, 3)]
        return [Sample(arr(rng, s, dtype, lo, hi), arr(rng, s, dtype, lo2, hi2)) for s in shapes]
    return gen


add("_standard_gamma", fn=_seeded(lambda lib, a: lib._standard_gamma(a)), samples=unary(0.2, 4),
    gradcheck=False, gradgrad=False)
add("_standard_gamma_grad", fn=lambda lib, a, x: lib._standard_gamma_grad(a, x),
    samples=_same_shapes(0.2, 12, 0.05, 15), grad=False)
add("_sample_dirichlet", fn=_seeded(lambda lib, a: lib._sample_dirichlet(a)), samples=_dirichlet_samples,
    grad=False)
add("_dirichlet_grad", fn=lambda lib, x, a, t: lib._dirichlet_grad(x, a, t), samples=_dirichlet_grad_samples,
    grad=False)
