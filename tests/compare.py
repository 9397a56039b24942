"""The one helper every test uses to hold ember to torch.

A test writes its body once as `fn(lib, *inputs)`, where `lib` is `ember` or `torch`; `check` builds the
inputs in both libraries from the same NumPy arrays, runs the body in each, and compares the results
(values, shape, dtype, strides, contiguity), the exception (class and message) if torch raises, and, when
inputs require grad, the gradients of a random weighted sum of the outputs.
"""

import re

import numpy as np
import torch

import ember

torch.set_num_threads(1)

_DTYPES = {getattr(ember, n): getattr(torch, n) for n in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128", "uint16", "uint32", "uint64")}
_DTYPES_BACK = {v: k for k, v in _DTYPES.items()}


def torch_dtype(d):
    return _DTYPES[d]


def ember_dtype(d):
    return _DTYPES_BACK[d]


def to_torch(x, requires_grad=False):
    """A torch tensor (or nested structure) copied from NumPy data / ember tensors."""
    if isinstance(x, ember.Tensor):
        x = x.detach()._data
    if isinstance(x, np.ndarray):
        if x.dtype.name == "bfloat16":
            t = torch.from_numpy(x.view(np.uint16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(np.array(x, copy=True))
        return t.requires_grad_(requires_grad) if requires_grad else t
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(v) for v in x)
    return x


def to_ember(x, requires_grad=False):
    if isinstance(x, np.ndarray):
        t = ember.from_numpy(np.array(x, copy=True))
        return t.requires_grad_(requires_grad) if requires_grad else t
    if isinstance(x, (list, tuple)):
        return type(x)(to_ember(v) for v in x)
    return x


def numpy_of(t):
    """Values of an ember or torch tensor as a NumPy array (bfloat16 widened to float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy()
    a = t.detach()._data
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


def _tol(dtype, rtol, atol):
    if rtol is not None:
        return rtol, atol if atol is not None else rtol
    name = str(dtype).split(".")[-1]
    return {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-6, 1e-5),
            "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5),
            "complex128": (1e-7, 1e-7)}.get(name, (0, 0))


def assert_same(e, t, *, rtol=None, atol=None, check_stride=True, check_dtype=True, path="result"):
    """ember result `e` equals torch result `t`: structure, shape, dtype, strides, values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{path}: ember gave {type(e).__name__}, torch gave Tensor"
        assert tuple(e.shape) == tuple(t.shape), f"{path}: shape {tuple(e.shape)} != torch {tuple(t.shape)}"
        if check_dtype:
            assert _DTYPES[e.dtype] == t.dtype, f"{path}: dtype {e.dtype} != torch {t.dtype}"
        if check_stride and t.numel() > 1:
            assert e.stride() == t.stride(), \
                f"{path}: stride {e.stride()} != torch {t.stride()}, shape {tuple(t.shape)}"
            assert e.is_contiguous() == t.is_contiguous(), f"{path}: contiguity differs"
        r, a = _tol(t.dtype, rtol, atol)
        ev, tv = numpy_of(e), numpy_of(t)
        if ev.dtype == np.bool_ or ev.dtype.kind in "iu" and r == 0:
            np.testing.assert_array_equal(ev, tv, err_msg=path)
        else:
            np.testing.assert_allclose(ev, tv, rtol=r, atol=a, equal_nan=True, err_msg=path)
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), f"{path}: {e!r} vs torch {t!r}"
        for i, (ee, tt) in enumerate(zip(e, t)):
            assert_same(ee, tt, rtol=rtol, atol=atol, check_stride=check_stride, check_dtype=check_dtype,
                        path=f"{path}[{i}]")
    elif isinstance(t, torch.Size):
        assert tuple(e) == tuple(t) and type(e).__name__ == "Size", f"{path}: {e} vs torch {t}"
    elif isinstance(t, torch.dtype):
        assert _DTYPES[e] == t, f"{path}: {e} vs torch {t}"
    elif isinstance(t, float) and np.isnan(t):
        assert isinstance(e, float) and np.isnan(e), f"{path}: {e} vs torch nan"
    else:
        assert e == t, f"{path}: {e!r} vs torch {t!r}"


def normalize_message(msg):
    """torch's message with ember's names, so the two can be compared."""
    msg = msg.replace("torch.", "ember.").replace("torch ", "ember ")
    msg = re.sub(r"0x[0-9a-f]+", "0x?", msg)
    msg = re.sub(r" \(Triggered internally at [^)]*\.\)$", "", msg)  # torch's C++ source location
    return msg


def assert_same_error(fn, *args, match_message=True):
    """`fn(lib, *args)` raises the same exception class and message in ember as in torch."""
    try:
        fn(torch, *to_torch(args))
    except Exception as te:  # noqa: BLE001 - any torch exception is the expectation
        try:
            fn(ember, *to_ember(args))
        except Exception as ee:  # noqa: BLE001
            assert type(ee).__name__ == type(te).__name__ or isinstance(ee, type(te)), \
                f"ember raised {type(ee).__name__}({ee}), torch raised {type(te).__name__}({te})"
            if match_message:
                tm, em = normalize_message(str(te)), normalize_message(str(ee))
                assert em == tm or tm in em, f"message differs:\n ember: {em}\n torch: {tm}"
            return
        raise AssertionError(f"torch raised {type(te).__name__}({te}) but ember did not") from None
    raise AssertionError("torch did not raise: not an error case")


def check(fn, *inputs, grad=None, rtol=None, atol=None, check_stride=True, seed=0):
    """Run `fn(lib, *inputs)` in both libraries and compare outputs and (if `grad`) input gradients.

    inputs: NumPy arrays (become tensors) or anything else (passed as is).
    grad: indices of inputs that require grad, or True for every floating array.
    """
    if grad is True:
        grad = [i for i, x in enumerate(inputs) if isinstance(x, np.ndarray) and x.dtype.kind in "fc"]
    grad = set(grad or ())
    t_in = [to_torch(x, i in grad) for i, x in enumerate(inputs)]
    e_in = [to_ember(x, i in grad) for i, x in enumerate(inputs)]
    try:
        t_out = fn(torch, *t_in)
    except Exception:  # noqa: BLE001 - then ember must fail the same way
        assert_same_error(fn, *inputs)
        return None
    e_out = fn(ember, *e_in)
    assert_same(e_out, t_out, rtol=rtol, atol=atol, check_stride=check_stride)
    if grad:
        t_flat = [o for o in _flatten(t_out) if isinstance(o, torch.Tensor) and o.requires_grad]
        e_flat = [o for o in _flatten(e_out) if isinstance(o, ember.Tensor) and o.requires_grad]
        assert len(t_flat) == len(e_flat), "different outputs require grad"
        if t_flat:
            rng = np.random.default_rng(seed)
            weights = [rng.standard_normal(o.shape).astype(numpy_of(o).dtype) for o in t_flat]
            t_loss = sum((o * to_torch(w)).sum() for o, w in zip(t_flat, weights))
            e_loss = sum((o * to_ember(w)).sum() for o, w in zip(e_flat, weights))
            t_loss.backward()
            e_loss.backward()
            for i in sorted(grad):
                tg, eg = t_in[i].grad, e_in[i].grad
                if tg is None:
                    assert eg is None, f"grad of input {i}: ember has one, torch has None"
                else:
                    assert eg is not None, f"grad of input {i}: ember has None"
                    assert_same(eg, tg, rtol=rtol, atol=atol, check_stride=False, path=f"grad[{i}]")
    return e_out, t_out


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flatten(v)
    else:
        yield x


def functions_from(found, group, lib):
    """A stand-in for ember._native.function that takes kernel group `group`'s functions from the library
    `lib` (a build of its file with other flags, from build_source) and every other group's from `found`;
    with lib None, `found` itself."""
    if lib is None:
        return found

    def function(g, name, argtypes=None, restype=None):
        if g != group:
            return found(g, name, argtypes, restype)
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
        return fn
    return function

