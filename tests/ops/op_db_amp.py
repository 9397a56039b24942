"""OpInfo entries of area A's ops (NOTE [ Table files by area ] in op_db.py): GradScaler's two loss-scaling
ops, in place. Each entry returns the tensors the op wrote, so forward compares them with torch's."""

import numpy as np
from op_db import FLOAT, HALF, Sample, add, arr, same

_F32 = np.float32


def _unscale(lib, g1, g2, found, inv):
    lib._amp_foreach_non_finite_check_and_unscale_([g1, g2], found, inv)
    return g1, g2, found


def _grads(bad):
    def sample(dtype, rng):
        g1, g2 = arr(rng, (3, 4), dtype), arr(rng, (5,), dtype)
        if bad is not None:
            g2 = g2.copy()
            g2[1] = bad
        return Sample(g1, g2, np.zeros((), _F32), np.array(0.25, _F32))
    return sample


def _unscale_error(found_dtype, inv_shape, inv_dtype):
    def sample(rng):
        return Sample(arr(rng, (3,), "float32"), arr(rng, (2,), "float32"), np.zeros((), found_dtype),
                      np.full(inv_shape, 0.5, inv_dtype))
    return sample


add("_amp_foreach_non_finite_check_and_unscale_", fn=_unscale,
    samples=same(_grads(None), _grads(np.inf), _grads(np.nan)), dtypes=FLOAT + HALF, grad=False,
    noncontig=False, errors=lambda rng: [_unscale_error(_F32, (2,), _F32)(rng),
                                          _unscale_error(np.float64, (), _F32)(rng),
                                          _unscale_error(_F32, (), np.float64)(rng)])


def _update(lib, scale, tracker, found, growth, backoff, interval):
    r = lib._amp_update_scale_(scale, tracker, found, growth, backoff, interval)
    return r, scale, tracker


def _state(scale, tracker, found, growth=2.0, backoff=0.5, interval=3):
    return lambda dtype, rng: Sample(np.array(scale, _F32), np.array(tracker, np.int32), np.array(found, _F32),
                                     growth, backoff, interval)


add("_amp_update_scale_", fn=_update,
    samples=same(_state(8.0, 0, 0.0), _state(8.0, 2, 0.0), _state(8.0, 2, 1.0), _state(3e38, 2, 0.0),
                 _state(4.0, 0, 0.0, 3.0, 0.25, 1)),
    dtypes=("float32",), grad=False, noncontig=False,
    errors=lambda rng: [Sample(np.array(1.0, np.float64), np.array(0, np.int32), np.array(0.0, _F32), 2.0, 0.5, 3),
                        Sample(np.array(1.0, _F32), np.array(0, np.int64), np.array(0.0, _F32), 2.0, 0.5, 3),
                        Sample(np.array(1.0, _F32), np.array(0, np.int32), np.array(0.0, np.float64), 2.0, 0.5, 3)])

