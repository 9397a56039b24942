"""Shared helpers of the autograd tests: run one body under ember and under torch and compare.

`same(fn)` runs `fn(lib)` for lib = ember and lib = torch and compares what they return: tensors with
`compare.assert_same` (values, shape, dtype, strides), strings after naming normalisation (addresses and
"torch" replaced), anything else by equality, recursively through tuples, lists and dicts. An exception
in torch must be matched by the same class and message in ember.
"""

import re

import numpy as np
import torch
from compare import assert_same, normalize_message

import ember


def norm(s):
    s = normalize_message(s).replace("torch::", "ember::")
    return re.sub(r"object at 0x\?", "object at 0x?", s)


def _compare(e, t, path="result"):
    if isinstance(t, torch.Tensor):
        assert_same(e, t, path=path, check_stride=False)
    elif isinstance(t, dict):
        assert isinstance(e, dict) and list(e) == list(t), f"{path}: {e!r} vs torch {t!r}"
        for k in t:
            _compare(e[k], t[k], f"{path}[{k!r}]")
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), f"{path}: {e!r} vs torch {t!r}"
        for i, (a, b) in enumerate(zip(e, t)):
            _compare(a, b, f"{path}[{i}]")
    elif isinstance(t, str):
        assert norm(e) == norm(t), f"{path}:\n ember: {norm(e)}\n torch: {norm(t)}"
    elif isinstance(t, torch.dtype):
        assert str(e).replace("ember", "torch") == str(t), f"{path}: {e} vs {t}"
    else:
        assert e == t, f"{path}: {e!r} vs torch {t!r}"


def same(fn):
    """fn(lib) gives the same results (or raises the same error) under ember and torch."""
    try:
        t = fn(torch)
    except Exception as te:  # noqa: BLE001 - the expectation
        try:
            fn(ember)
        except Exception as ee:  # noqa: BLE001
            assert type(ee).__name__ == type(te).__name__, f"ember raised {type(ee).__name__}({ee}); torch " \
                f"{type(te).__name__}({te})"
            assert norm(str(ee)) == norm(str(te)), f"message differs:\n ember: {norm(str(ee))}\n torch: {norm(str(te))}"
            return str(ee)
        raise AssertionError(f"torch raised {type(te).__name__}({te}), ember did not") from None
    e = fn(ember)
    _compare(e, t)
    return e


def arr(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def T(lib, a, requires_grad=False):
    """A tensor of `lib` copied from NumPy array `a`."""
    t = lib.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if requires_grad else t


def gname(t):
    """The grad_fn's class name (or None)."""
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def graph_names(fn, depth=4):
    """The nested names of a graph, from grad_fn through next_functions, `depth` levels."""
    if fn is None or depth == 0:
        return None if fn is None else "..."
    return (fn.name(), tuple((graph_names(n, depth - 1), nr) for n, nr in fn.next_functions))
