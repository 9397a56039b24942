"""ember.testing against torch.testing: assert_close's verdicts and messages, assert_allclose, make_tensor.

Each case is `fn(lib, *inputs)` run in both libraries from the same NumPy inputs: both pass, or both raise
the same exception class with the same message.
"""

import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from compare import assert_same_error, check, normalize_message, to_ember, to_torch

import ember

F32 = np.array([1.0, 2.0, 3.0], np.float32)
F32_NEAR = F32 + np.float32(1e-6)
F32_FAR = np.array([1.0, 4.0, 2.5], np.float32)
F64 = np.array([[1.0, 2.0], [np.nan, np.inf]])
I64 = np.array([1, 2, 3])


def _close(**kw):
    return lambda lib, a, b: lib.testing.assert_close(a, b, **kw)


ASSERT_CLOSE = {
    "equal": (_close(), F32, F32.copy()),
    "within_default_tol": (_close(), F32, F32_NEAR),
    "not_close": (_close(), F32, F32_FAR),
    "not_close_2d": (_close(), F32_FAR.reshape(3, 1) * np.ones((1, 4), np.float32), np.ones((3, 4), np.float32)),
    "explicit_tol": (_close(rtol=0.5, atol=0.0), F32, F32_FAR),
    "equality_tol_zero": (_close(rtol=0, atol=0), F32, F32_NEAR),
    "only_rtol": (_close(rtol=0.1), F32, F32),
    "only_atol": (_close(atol=0.1), F32, F32),
    "nan_not_equal": (_close(), F64, F64.copy()),
    "nan_equal": (_close(equal_nan=True), F64, F64.copy()),
    "inf_vs_finite": (_close(equal_nan=True), F64, np.array([[1.0, 2.0], [np.nan, 1e308]])),
    "dtype_mismatch": (_close(), F32, F32.astype(np.float64)),
    "dtype_unchecked": (_close(check_dtype=False), F32, F32_NEAR.astype(np.float64)),
    "dtype_unchecked_far": (_close(check_dtype=False), F32, F32_FAR.astype(np.float64)),
    "shape_mismatch": (_close(), F32, F32[:2]),
    "ints_exact": (_close(), I64, I64.copy()),
    "ints_differ": (_close(), I64, I64 + np.array([0, 5, 0])),
    "uint8_vs_int64": (_close(check_dtype=False), I64.astype(np.uint8), I64 + 1),
    "bool": (_close(), np.array([True, False]), np.array([True, True])),
    "scalar_tensor": (_close(), np.array(1.0, np.float32), np.array(1.5, np.float32)),
    "complex": (_close(), np.array([1 + 1j, 2 - 1j], np.complex64), np.array([1 + 1j, 2 + 1j], np.complex64)),
    "stride_checked": (lambda lib, a, b: lib.testing.assert_close(a.t(), b.t().contiguous(), check_stride=True),
                       np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
    "stride_unchecked": (lambda lib, a, b: lib.testing.assert_close(a.t(), b.t().contiguous()),
                         np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
    "msg_string": (_close(msg="custom"), F32, F32_FAR),
    "msg_callable": (_close(msg=lambda m: "Header\n\n" + m + "\n\nFooter"), F32, F32_FAR),
    "list_of_tensors": (lambda lib, a, b: lib.testing.assert_close([a, a], [a, b]), F32, F32_FAR),
    "dict_of_tensors": (lambda lib, a, b: lib.testing.assert_close({"w": a, "b": b}, {"w": a, "b": a}), F32, F32_FAR),
    "ordered_dict": (lambda lib, a, b: lib.testing.assert_close(OrderedDict(x=a), OrderedDict(x=b)), F32, F32),
    "dict_keys_differ": (lambda lib, a, b: lib.testing.assert_close({"w": a}, {"v": a}), F32, F32),
    "list_lengths_differ": (lambda lib, a, b: lib.testing.assert_close([a], [a, b]), F32, F32),
    "tensor_vs_list": (lambda lib, a, b: lib.testing.assert_close(a, [1.0, 2.0, 3.0]), F32, F32),
    "tensor_vs_numpy": (lambda lib, a, b: lib.testing.assert_close(a, np.array([1.0, 2.0, 3.0])), F32, F32),
    "numpy_arrays": (lambda lib, a, b: lib.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.5])),
                     F32, F32),
    "numpy_arrays_equal": (lambda lib, a, b: lib.testing.assert_close(np.arange(3.0), np.arange(3.0)), F32, F32),
    "python_scalars": (lambda lib, a, b: lib.testing.assert_close(1.0, 1.0 + 1e-9), F32, F32),
    "python_scalars_far": (lambda lib, a, b: lib.testing.assert_close(1e-9, 1e-10), F32, F32),
    "scalar_int_vs_float": (lambda lib, a, b: lib.testing.assert_close(1, 1.0), F32, F32),
    "scalar_types_unchecked": (lambda lib, a, b: lib.testing.assert_close(1, 1.0, check_dtype=False), F32, F32),
    "scalar_nan": (lambda lib, a, b: lib.testing.assert_close(float("nan"), float("nan")), F32, F32),
    "numpy_scalars": (lambda lib, a, b: lib.testing.assert_close(np.float32(1.0), np.float32(2.0)), F32, F32),
    "booleans": (lambda lib, a, b: lib.testing.assert_close(True, False), F32, F32),
    "none_vs_tensor": (lambda lib, a, b: lib.testing.assert_close(None, a), F32, F32),
    "none_none": (lambda lib, a, b: lib.testing.assert_close(None, None), F32, F32),
    "strings": (lambda lib, a, b: lib.testing.assert_close("ab", "ab"), F32, F32),
    "parameter_vs_tensor": (lambda lib, a, b: lib.testing.assert_close(lib.nn.Parameter(a), b), F32, F32),
    "no_subclasses": (lambda lib, a, b: lib.testing.assert_close(lib.nn.Parameter(a), b, allow_subclasses=False),
                      F32, F32),
    "requires_grad": (lambda lib, a, b: lib.testing.assert_close(a.requires_grad_() * 2, b), F32, F32_FAR),
    "meta_same_shape": (lambda lib, a, b: lib.testing.assert_close(a.to("meta"), b.to("meta") + 1), F32, F32),
    "float16": (_close(), F32.astype(np.float16), (F32 * 1.0005).astype(np.float16)),
    "bfloat16_default_tol": (lambda lib, a, b: lib.testing.assert_close(a.bfloat16(), (b * 1.01).bfloat16()),
                             F32, F32),
    "empty": (_close(), np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)),
}


def _same_outcome(fn, *inputs):
    try:
        fn(torch, *to_torch(inputs))
    except Exception:  # noqa: BLE001 - then ember must fail the same way
        assert_same_error(fn, *inputs)
        return
    fn(ember, *to_ember(inputs))


@pytest.mark.parametrize("name", list(ASSERT_CLOSE))
def test_assert_close(name):
    fn, *inputs = ASSERT_CLOSE[name]
    _same_outcome(fn, *inputs)


@pytest.mark.parametrize("args, kw", [
    (([1.0, 2.0], [1.0, 2.00001]), {}),
    (([1.0, 2.0], [1.0, 2.1]), {}),
    (([1, 2], [1.0, 2.0]), {}),
    (([float("nan")], [float("nan")]), {}),
    (([float("nan")], [float("nan")]), {"equal_nan": False}),
    (([1.0, 2.0], [1.0, 2.5]), {"rtol": 0.3, "atol": 0}),
    (([1.0, 2.0], [1.0, 2.5]), {"msg": "boom"}),
])
def test_assert_allclose(args, kw):
    def fn(lib):
        a, b = args
        return lib.testing.assert_allclose(lib.tensor(a), b, **kw)

    _same_outcome(fn)
    caught = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                fn(lib)
            except AssertionError:
                pass
        caught.append([str(x.message) for x in w if x.category is FutureWarning])
    # the deprecation warning, worded as torch's
    t_msgs, e_msgs = [normalize_message(m) for m in caught[0]], caught[1]
    assert t_msgs and e_msgs == t_msgs


MAKE_TENSOR = [
    ((3, 4), dict(dtype="float32")),
    (((2, 3),), dict(dtype="float64", low=-1, high=1)),
    ((5,), dict(dtype="int64")),
    ((5,), dict(dtype="uint8")),
    ((2, 3), dict(dtype="int8", low=-200, high=200)),
    ((6,), dict(dtype="bool")),
    ((3,), dict(dtype="complex64")),
    ((2, 2), dict(dtype="complex128", low=0, high=1)),
    ((4, 3), dict(dtype="float32", noncontiguous=True)),
    ((1,), dict(dtype="float32", noncontiguous=True)),
    ((2, 3, 4, 5), dict(dtype="float32", memory_format="channels_last")),
    ((20,), dict(dtype="int32", exclude_zero=True, low=-1, high=2)),
    ((20,), dict(dtype="float32", exclude_zero=True, low=0, high=1e-30)),
    ((3,), dict(dtype="float32", requires_grad=True)),
    ((3,), dict(dtype="float64", low=-1e308, high=1e308)),
    ((3,), dict(dtype="float16", low=-1e6, high=1e6)),
    ((3,), dict(dtype="bfloat16")),
    ((3,), dict(dtype="int64", requires_grad=True)),
    ((3,), dict(dtype="float32", low=2, high=1)),
    ((3,), dict(dtype="float32", low=float("nan"))),
    ((3,), dict(dtype="uint8", low=300, high=400)),
    ((3, 2), dict(dtype="float32", noncontiguous=True, memory_format="contiguous_format")),
]


@pytest.mark.parametrize("shape, kw", MAKE_TENSOR)
def test_make_tensor(shape, kw):
    def fn(lib):
        opts = dict(kw, dtype=getattr(lib, kw["dtype"]), device="cpu")
        if "memory_format" in opts:
            opts["memory_format"] = getattr(lib, opts["memory_format"])
        lib.manual_seed(0)
        return lib.testing.make_tensor(*shape, **opts)

    check(fn)


def test_make_tensor_low_equals_high_warns_as_torch():
    msgs = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.manual_seed(0)
            lib.testing.make_tensor(3, dtype=lib.float32, device="cpu", low=1, high=1)
        msgs.append([str(x.message) for x in w if x.category is FutureWarning])
    assert msgs[0] and [normalize_message(m) for m in msgs[0]] == msgs[1]


def test_make_tensor_unsupported_dtype():
    assert_same_error(lambda lib: lib.testing.make_tensor(2, dtype=lib.float32 if lib is None else "x",
                                                          device="cpu"))


# The pieces make_tensor builds on: clone's memory_format and uniform_ over nearly the whole float64 range.
@pytest.mark.parametrize("fn", [
    lambda lib, x: x.clone(memory_format=lib.channels_last),
    lambda lib, x: x.transpose(1, 2).clone(memory_format=lib.contiguous_format),
    lambda lib, x: x.transpose(1, 2).clone(memory_format=lib.preserve_format),
    lambda lib, x: x[0].clone(memory_format=lib.channels_last),
    lambda lib, x: x.unsqueeze(0).clone(memory_format=lib.channels_last_3d),
    lambda lib, x: x.clone(memory_format=lib.channels_last_3d),
    lambda lib, x: (lib.manual_seed(0), x.double().uniform_(-0.5e308, 0.5e308))[1],
])
def test_clone_memory_format_and_wide_uniform(fn):
    check(fn, np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5), grad=[0])
