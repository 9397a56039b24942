"""No NumPy warning or NumPy exception reaches a user: every op of the OpInfo table on extreme values.

Each sample of tests/ops/op_db.py is run again with its tensors filled with the values that make NumPy
complain (inf, -inf, nan, the dtype's largest and smallest numbers, zeros as divisors, -1 under roots and
logs), in every dtype the op is tested in:

- with warnings turned into errors (as `python -W error` or pytest's `-W error` do), nothing may be raised
  that torch does not raise: no RuntimeWarning, no NumPy ValueError/IndexError/OverflowError;
- where torch raises, ember raises the same class with the same message (`assert_same_error`);
- with default warning filters (ember's own filter in place), no RuntimeWarning is shown.

See NOTE [ Quiet NumPy ] (ember/_dispatch.py) and NOTE [ Floating-point warnings ] (ember/_ops/_util.py).
"""

import os
import re
import sys
import warnings

import numpy as np
import pytest
import torch
from compare import assert_same_error, normalize_message, to_ember, to_torch

import ember
from ember._ops._util import quiet_warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "ops"))
from op_db import OPS  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ember depends on it
    ml_dtypes = None


def _pool(dtype):
    """The values that make NumPy warn, for one dtype."""
    if dtype == "bool":
        return np.array([True, False])
    if dtype == "bfloat16":
        f = np.array([np.inf, -np.inf, np.nan, 3.3e38, -3.3e38, 0.0, -0.0, -1.0, 1e-40, 1.0])
        return f.astype(ml_dtypes.bfloat16)
    d = np.dtype(dtype)
    if d.kind in "iu":
        info = np.iinfo(d)  # (not min with -1: torch's integer division of those dies of SIGFPE)
        return np.array([0, info.max, info.min + 1, info.max - 1, 1, 0 if d.kind == "u" else -1], d)
    big = np.finfo(d).max
    return np.array([np.inf, -np.inf, np.nan, big, -big, 0.0, -0.0, -1.0, np.finfo(d).tiny / 4, 1.0], d)


# ops whose integer array inputs are indices: out-of-range indices are their own tests' business (and torch
# reads memory out of bounds for some of them); or counts (repeat_interleave's: an extreme count is an output
# of gigabytes, which torch allocates and fills; its overflow and allocation errors are op_db error samples)
_INDEX_OPS = re.compile(r"take|gather|scatter|index|embedding|put|bincount|one_hot|select|repeat_interleave")


def _extreme(x, dtype, rng, op):
    """`x` (a sample input) with its values replaced by extreme ones of `dtype`; other inputs as they are."""
    if not isinstance(x, np.ndarray) or x.dtype != np.dtype(_np_name(dtype)) or x.size == 0:
        return x
    if x.dtype.kind in "iu" and _INDEX_OPS.search(op.id):
        return x
    pool = _pool(dtype)
    vals = pool[rng.integers(0, len(pool), x.size)].reshape(x.shape)
    out = np.empty_like(x)
    out[...] = vals
    return out


def _np_name(dtype):
    return ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype


def _is_numpy_error(e):
    """An exception that carries NumPy's words rather than torch's."""
    text = str(e)
    return isinstance(e, RuntimeWarning) or type(e).__module__.startswith("numpy") or any(w in text for w in (
        "encountered in", "out of bounds for uint", "out of bounds for int", "could not be broadcast",
        "operands could not", "`indices` and `arr`", "for axis", "Python integer", "too large to convert to C",
        "arrays used as indices", "cannot be broadcast to a single shape"))


def _params():
    return [pytest.param(op, id=op.id) for op in OPS]


@pytest.mark.parametrize("op", _params())
def test_extreme_values_raise_no_numpy_warning_or_error(op):
    rng = np.random.default_rng(0)
    for dtype in op.dtypes:
        for s in op.samples(dtype, np.random.default_rng(0)):
            inputs = [_extreme(x, dtype, rng, op) for x in s.inputs]

            def fn(lib, *xs, s=s):
                return op.fn(lib, *xs, **s.kwargs)

            with warnings.catch_warnings():
                warnings.simplefilter("error")  # what `python -W error` or pytest's `-W error` make of warnings
                try:
                    fn(ember, *to_ember(inputs))
                except Exception as e:  # noqa: BLE001 - classified below
                    assert not _is_numpy_error(e), f"{op.id} {dtype}: NumPy's {type(e).__name__} reached the user: {e}"
                    if isinstance(e, Warning):  # one of torch's own warnings (var's degrees of freedom): torch's too
                        with pytest.warns(type(e)) as theirs:
                            fn(torch, *to_torch(inputs))
                        assert normalize_message(str(theirs[0].message)) == normalize_message(str(e)), (op.id, e)
                        continue
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            fn(torch, *to_torch(inputs))
                    except Exception:  # noqa: BLE001 - torch raises too: then the same error
                        assert_same_error(fn, *inputs)
                    else:
                        raise AssertionError(f"{op.id} {dtype}: ember raised {type(e).__name__}({e}); torch "
                                             "computes") from None
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                quiet_warnings()  # ember's filter, as a script has it after `import ember`
                try:
                    fn(ember, *to_ember(inputs))
                except Exception:  # noqa: BLE001 - errors were checked above
                    pass
            leaked = [w for w in seen if issubclass(w.category, RuntimeWarning)]
            assert not leaked, f"{op.id} {dtype}: NumPy warned: {leaked[0].message} ({leaked[0].filename})"
