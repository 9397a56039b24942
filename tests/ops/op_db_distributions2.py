"""OpInfo entries of the count samplers in ember/_ops/discrete_sampling.py (NOTE [ Table files by area ]).

ember runs torch's rejection samplers, so each entry seeds both libraries and compares the draws exactly:
rates on both sides of the rejection method's switch at 10 (and 0), counts and probabilities on both sides of
BTRS's switch at count * prob = 10 (and prob > 0.5, drawn as count minus the complement's draw).
"""

import numpy as np
from op_db import Sample, _err, _seeded, add, arr

_SAMPLER = dict(grad=False, noncontig=False, strides=True)
_SHAPES = [(3, 4), ("T", 4, 3), (2, 3, 2), (), (0, 3)]


def _rates(dtype, rng):
    out = [Sample(arr(rng, s, dtype, 0.0, 30.0)) for s in _SHAPES]
    out.append(Sample(np.array([0.0, 1e-3, 9.99, 10.0, 250.0], dtype)))
    return out


add("poisson", fn=_seeded(lambda lib, rate: lib.poisson(rate)), samples=_rates,
    dtypes=("float32", "float64", "float16", "bfloat16"), **_SAMPLER,
    errors=_err(lambda r: Sample(np.array([1.0, -1.0, 2.0], "float32")),
                lambda r: Sample(np.array([1.0, np.nan], "float64"))))


def _counts(dtype, rng):
    out = []
    for s in _SHAPES:
        count = np.asarray(np.floor(arr(rng, s, dtype, 0.0, 60.0)))  # (a 0-d array stays an array)
        out.append(Sample(count, arr(rng, s, dtype, 0.0, 1.0)))
    out.append(Sample(np.array([0, 5, 5.5, 1000, 1000, 7, 40, 3], dtype),
                      np.array([0.5, 0, 0.3, 0.999, 0.01, 1, 0.8, np.nan], dtype)))
    return out


add("binomial", fn=_seeded(lambda lib, n, p: lib.binomial(n, p)), samples=_counts, **_SAMPLER,
    errors=_err(lambda r: Sample(np.array([3, 4]), np.array([0.5, 0.5])),
                lambda r: Sample(np.array([3.0, 4.0]), np.array([1, 0])),
                lambda r: Sample(np.array([3.0, 4.0], "float32"), np.array([0.5, 0.5]))))
