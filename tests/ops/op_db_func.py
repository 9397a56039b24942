"""OpInfo entries for ember.func's area (V): products whose contraction has length 1, which the matmul
family computes as one broadcast multiply (NOTE [ Outer products ] in ember/_ops/linalg.py): a batch-of-one
weight gradient, vmap's per-sample weight gradients. mm, bmm and matmul (batched, broadcast, a transposed
operand) with k = 1, in every dtype the family takes, against torch's BLAS results bit for bit where exact.
See NOTE [ Table files by area ] in op_db.py.
"""

from op_db import FLOAT, HALF, Sample, add, arr

_DTYPES = FLOAT + HALF + ("int64", "int32")


def _outer(*shapes):
    def gen(dtype, rng):
        return [Sample(*[arr(rng, s, dtype) if s[0] != "T" else arr(rng, s[1:][::-1], dtype).T for s in ss])
                for ss in shapes]
    return gen


add("mm", id="mm_outer", samples=_outer(((5, 1), (1, 4)), (("T", 5, 1), (1, 3))),
    dtypes=_DTYPES, out=True)
add("bmm", id="bmm_outer", samples=_outer(((3, 5, 1), (3, 1, 4))), dtypes=_DTYPES, out=True)
add("matmul", id="matmul_outer", samples=_outer(((3, 5, 1), (3, 1, 4)), ((2, 3, 5, 1), (3, 1, 4)),
                                                ((2, 1, 5, 1), (3, 1, 2))),
    dtypes=_DTYPES)
