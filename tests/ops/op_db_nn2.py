"""OpInfo entries of area N's nn ops (NOTE [ Table files by area ] in op_db.py): max unpooling and fractional
max pooling (their backward ops are reached through the double backward)."""

import numpy as np
from op_db import FLOAT, HALF, Sample, add, arr, unary


def _unpool_indices(rng, lead, out_sp, k):
    """Valid flat indices of a max pooling with kernel = stride = k: one random tap inside each window."""
    nd = len(out_sp)
    in_sp = tuple(o * k for o in out_sp)
    flat = np.zeros(lead + out_sp, np.int64)
    for d in range(nd):
        shape = [1] * (len(lead) + nd)
        shape[len(lead) + d] = out_sp[d]
        pos = np.arange(out_sp[d]).reshape(shape) * k + rng.integers(0, k, lead + out_sp)
        flat = flat * in_sp[d] + pos
    return flat


def _unpool(nd):
    sp = (3, 2, 2)[:nd]

    def gen(dtype, rng):
        return [Sample(arr(rng, (2, 3) + sp, dtype), _unpool_indices(rng, (2, 3), sp, 2), 2),
                Sample(arr(rng, (3,) + sp, dtype), _unpool_indices(rng, (3,), sp, 2), 2,
                       output_size=tuple(2 * s + 1 for s in sp))]
    return gen


for _nd in (1, 2, 3):
    add(f"nn.functional.max_unpool{_nd}d", fn=lambda lib, *a, _nd=_nd, **k: getattr(
        lib.nn.functional, f"max_unpool{_nd}d")(*a, **k), samples=_unpool(_nd), dtypes=FLOAT + HALF,
        grad_inputs=(0,))


def _fractional(nd):
    sp = (7, 6, 5)[:nd]
    out = (3, 3, 2)[:nd]

    def gen(dtype, rng):
        return [Sample(arr(rng, (2, 3) + sp, dtype), arr(rng, (2, 3, nd), dtype, 0.0, 1.0), 2, out),
                Sample(arr(rng, (3,) + sp, dtype), arr(rng, (1, 3, nd), dtype, 0.0, 1.0), (2, 3)[:1] * nd, out)]
    return gen


for _nd in (2, 3):
    add(f"nn.functional.fractional_max_pool{_nd}d", gradcheck=False, grad_inputs=(0,), dtypes=FLOAT + HALF,
        fn=lambda lib, x, s, k, o, _nd=_nd: tuple(getattr(lib.nn.functional, f"fractional_max_pool{_nd}d")(
            x, k, output_size=o, return_indices=True, _random_samples=s)), samples=_fractional(_nd))


def _rrelu_training(lib, x, lower=0.1, upper=0.3):
    lib.manual_seed(0)
    return lib.nn.functional.rrelu(x, lower, upper, training=True)


add("nn.functional.rrelu", id="nn.functional.rrelu_training", fn=_rrelu_training, gradcheck=False,
    dtypes=FLOAT + ("bfloat16",))
# (upper - lower <= 1e-6: leaky_relu's gradient with the mean slope; its double backward is not held to torch's:
# torch's backward op takes the input as an input, ember's formula reads the output)
add("nn.functional.rrelu", id="nn.functional.rrelu_training_narrow", gradcheck=False, gradgrad=False,
    fn=lambda lib, x: _rrelu_training(lib, x, 0.2, 0.2 + 1e-7))
add("hardshrink", id="torch.hardshrink_out", fn=lambda lib, x, **k: lib.hardshrink(x, 0.3, **k), samples=unary(),
    dtypes=FLOAT, grad=False, out=True)
