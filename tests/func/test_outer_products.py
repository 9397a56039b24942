"""Products whose contraction has length 1, which the matmul family computes as one broadcast multiply
(NOTE [ Outer products ] in ember/_ops/linalg.py): a batch-of-one weight gradient, vmap's per-sample weight
gradients. mm, bmm and matmul (batched, broadcast, a transposed operand) with k = 1, in the dtypes the family
takes, against torch: values bit for bit (a product of two numbers is exact in any order), shapes, strides,
dtypes; and gradients (sums, so within torch's tolerances).

(Kept out of the OpInfo table on purpose: a new entry there shifts the bounded fuzz run's fixed-seed draws,
which then reach torch's crash on linalg.eigvals of a NaN, a segfault in MKL, see the report of issue 22.)
"""

import numpy as np
import pytest
from compare import check

R = np.random.default_rng(0)
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32")


def _arr(shape, dtype):
    a = R.uniform(-2, 2, shape)
    if dtype.startswith("int"):
        return np.round(a * 3).astype(dtype)
    if dtype == "bfloat16":
        return a.astype(np.float32)  # (cast in the function: NumPy has no bfloat16 of its own)
    return a.astype(dtype)


CASES = [
    ("mm", lambda L, a, b: L.mm(a, b), (5, 1), (1, 4)),
    ("mm_transposed", lambda L, a, b: L.mm(a.t(), b), (1, 5), (1, 3)),
    ("bmm", lambda L, a, b: L.bmm(a, b), (3, 5, 1), (3, 1, 4)),
    ("matmul_batched", lambda L, a, b: L.matmul(a, b), (3, 5, 1), (3, 1, 4)),
    ("matmul_broadcast", lambda L, a, b: L.matmul(a, b), (2, 3, 5, 1), (3, 1, 4)),
    ("matmul_broadcast_both", lambda L, a, b: L.matmul(a, b), (2, 1, 5, 1), (3, 1, 2)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn,sa,sb", CASES, ids=[c[0] for c in CASES])
def test_outer_product(name, fn, sa, sb, dtype):
    def run(L, a, b):
        if dtype == "bfloat16":
            a, b = a.to(L.bfloat16), b.to(L.bfloat16)
        return fn(L, a, b)

    a, b = _arr(sa, dtype), _arr(sb, dtype)
    check(run, a, b, rtol=0, atol=0)  # the products: exact
    if dtype in ("float32", "float64"):  # the gradients sum over the other operand: torch's tolerances
        check(run, a, b, grad=[0, 1])


def test_per_sample_weight_gradients_are_contiguous():
    """vmap(grad) of a linear layer: per-sample weight gradients laid out as torch's (row-major per sample),
    written once as outer products."""
    w, x = _arr((4, 3), "float32"), _arr((5, 3), "float32")

    def run(L, w, x):
        return L.func.vmap(L.func.grad(lambda w, a: L.nn.functional.linear(a.unsqueeze(0), w).sum()),
                           in_dims=(None, 0))(w, x)

    check(run, w, x, rtol=0, atol=0)
