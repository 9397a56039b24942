"""Which dtypes the samplers and a few in-place forms accept, against torch, on empty, 1-d and 0-d tensors.

torch checks most samplers' dtypes inside the kernel's loop, which an empty tensor never enters: an empty
Long tensor's `normal_()` is no error, its `uniform_()` is (NOTE [ Samplers' dtypes ] in ember/_ops/random.py).
Also: the order of bernoulli's two checks (self, then p), random_(from, to)'s and cauchy_'s words, in-place
abs of a complex tensor, and float()/int() of a complex tensor.
"""

import ml_dtypes
import numpy as np
import pytest
from compare import check

DTYPES = ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "complex64", "complex128")
SHAPES = ((0, 3), (2,), ())

SAMPLERS = {
    "bernoulli_tensor": lambda lib, x: x.bernoulli_(x),
    "bernoulli_float": lambda lib, x: x.bernoulli_(0.5),
    "bernoulli_p": lambda lib, x: lib.bernoulli(x, 0.5),
    "bernoulli": lambda lib, x: lib.bernoulli(x),
    "normal_": lambda lib, x: x.normal_(),
    "normal_tensor_float": lambda lib, x: lib.normal(x, 0.5),
    "normal_float_tensor": lambda lib, x: lib.normal(1.0, x),
    "normal_tensor_tensor": lambda lib, x: lib.normal(x, x),
    "uniform_": lambda lib, x: x.uniform_(),
    "exponential_": lambda lib, x: x.exponential_(),
    "geometric_": lambda lib, x: x.geometric_(0.3),
    "cauchy_": lambda lib, x: x.cauchy_(),
    "log_normal_": lambda lib, x: x.log_normal_(),
    "random_": lambda lib, x: x.random_(),
    "random_to": lambda lib, x: x.random_(7),
    "random_from": lambda lib, x: x.random_(-4, 9),
    "random_from_empty_range": lambda lib, x: x.random_(5, 2),
    "randint_like": lambda lib, x: lib.randint_like(x, 2, 9),
    "rand_like": lambda lib, x: lib.rand_like(x),
    "randn_like": lambda lib, x: lib.randn_like(x),
    "rand_dtype": lambda lib, x: lib.rand(x.shape, dtype=x.dtype),
    "randn_dtype": lambda lib, x: lib.randn(x.shape, dtype=x.dtype),
    "randint_dtype": lambda lib, x: lib.randint(0, 2, x.shape, dtype=x.dtype),
    "poisson": lambda lib, x: lib.poisson(x) * 0,  # (its draws match torch's in distribution only)
    "multinomial": lambda lib, x: lib.multinomial(x.reshape(-1) + 1, 1),
}
OTHERS = {
    "abs_": lambda lib, x: x.abs_(),
    "absolute_": lambda lib, x: x.absolute_(),
    "float": lambda lib, x: float(x.reshape(-1)[:1].sum() + 2),
    "int": lambda lib, x: int(x.reshape(-1)[:1].sum() + 2),
    "float_imaginary": lambda lib, x: float(x.reshape(-1)[:1].sum() + 2 + (1j if x.is_complex() else 0)),
}


def _array(shape, dtype, value=0.5):
    a = np.full(shape, value)
    if dtype == "bfloat16":
        return a.astype(ml_dtypes.bfloat16)
    return (a != 0) if dtype == "bool" else a.astype(dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "0d")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SAMPLERS) + sorted(OTHERS))
def test_dtype(name, dtype, shape):
    fn = SAMPLERS.get(name) or OTHERS[name]

    def run(lib, x):
        lib.manual_seed(0)
        return fn(lib, x.clone())
    check(run, _array(shape, dtype), check_stride=False)
