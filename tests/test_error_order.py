"""Errors of bad arguments in torch's class, words and order (issue 25, found by the fuzzer, tests/fuzz).

Each row runs the same call in ember and torch; both must raise the same exception class and message
(`assert_same_error`), or both return the same values (`check`). The rows are grouped by the check they hold:
the in-place overlap check that comes first (NOTE [ Overlap is checked first ] in ember/_dispatch.py), the
index ops' meta checks (scatter/gather, index_add/index_reduce/index_copy), and the dtype-equality checks of
the matmul, solve and lerp families.
"""

import warnings

import numpy as np
import pytest
from compare import assert_same_error, check


def _ex(lib, *shape, dtype="float32"):  # an expanded (stride-0, overlapping) tensor
    return lib.ones(1, dtype=getattr(lib, dtype)).expand(*shape)


OVERLAP = {
    "abs_": lambda lib: _ex(lib, 5).abs_(),
    "add_wrong_shape": lambda lib: _ex(lib, 5).add_(lib.ones(3)),
    "add_byte_by_float": lambda lib: _ex(lib, 5, dtype="uint8").add_(0.5),
    "copy_wrong_shape": lambda lib: _ex(lib, 5).copy_(lib.ones(3)),
    "mul_": lambda lib: _ex(lib, 5).mul_(lib.ones(5)),
    "clamp_": lambda lib: _ex(lib, 5).clamp_(0, 1),
    "foreach_abs_": lambda lib: lib._foreach_abs_([lib.ones(3, 4), _ex(lib, 5)]),
    "foreach_add_lists": lambda lib: lib._foreach_add_([lib.ones(3, 4), _ex(lib, 5)], [lib.ones(3, 4)] * 2),
    "foreach_add_scalar": lambda lib: lib._foreach_add_([lib.ones(3, 4), _ex(lib, 5)], 1),
    "foreach_copy_": lambda lib: lib._foreach_copy_([lib.ones(3, 4), _ex(lib, 5)], [lib.ones(3, 4)] * 2),
    "foreach_lerp_": lambda lib: lib._foreach_lerp_([_ex(lib, 5, dtype="int32")], [lib.ones(5)], 0.5),
    # torch's foreach runs tensor by tensor there: an earlier tensor's own error comes first
    "foreach_earlier_cast": lambda lib: lib._foreach_add_([lib.ones(3, 4, dtype=lib.uint8), _ex(lib, 5, dtype="uint8")],
                                                          0.5),
    "foreach_earlier_shape": lambda lib: lib._foreach_mul_([lib.ones(3, 4), _ex(lib, 5)], [lib.ones(3), lib.ones(5)]),
    "foreach_earlier_bool_sub": lambda lib: lib._foreach_sub_(
        [lib.ones(3, dtype=lib.bool), _ex(lib, 5, dtype="bool")], [lib.ones(3, dtype=lib.bool)] * 2),
    "foreach_lerp_overlap": lambda lib: lib._foreach_lerp_([_ex(lib, 5)], [lib.ones(3)], 0.5),
}


@pytest.mark.parametrize("name", OVERLAP)
def test_overlapping_destination_is_refused_first(name):
    assert_same_error(lambda lib: OVERLAP[name](lib))


def test_foreach_updates_the_tensors_before_an_overlapping_one():
    def fn(lib, a):
        a = a.clone()
        try:
            lib._foreach_add_([a, a[:1].expand(3)], 1.0)
        except RuntimeError as e:
            return a, str(e)
    check(fn, np.arange(3.0))


POOL_ARGS = {
    "max_pool2d-kernel-str": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 6, 6), "a"),
    "max_pool2d-kernel-none": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 6, 6), None),
    "max_pool2d-kernel-element": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 6, 6), (2, 1.5)),
    "max_pool2d-stride-float": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 6, 6), 2, 1.5),
    "max_pool2d-ceil-none": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 6, 6), 2, ceil_mode=None),
    "max_pool2d-indices-ceil": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 6, 6), 2, ceil_mode="a",
                                                                        return_indices=True),
    "max_pool1d-int-input": lambda lib: lib.nn.functional.max_pool1d(lib.ones(1, 2, 6, dtype=lib.int32), "a"),
    "avg_pool3d-kernel-none": lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 2, 4, 4, 4), None),
    "avg_pool1d-padding-float": lambda lib: lib.nn.functional.avg_pool1d(lib.ones(1, 2, 6), 2, 1, 0.5),
}


@pytest.mark.parametrize("name", POOL_ARGS)
def test_pool_argument_types_in_torchs_words(name):
    """NOTE [ Argument types in torch's words ] (ember/_ops/_util.py)."""
    assert_same_error(lambda lib: POOL_ARGS[name](lib))


NOT_TENSORS = {
    "abs-none": lambda lib: lib.abs(None),
    "sin-str": lambda lib: lib.sin("a"),
    "sum-float": lambda lib: lib.sum(1.5),
    "add-none": lambda lib: lib.add(None, 1),
    "mul-other-none": lambda lib: lib.mul(lib.ones(2), None),
}


@pytest.mark.parametrize("name", NOT_TENSORS)
def test_inputs_that_are_not_tensors(name):
    """NOTE [ Inputs that are not tensors ] (ember/_dispatch.py)."""
    assert_same_error(lambda lib: NOT_TENSORS[name](lib))


@pytest.mark.parametrize("name", ["zero_", "fill_"])
def test_fill_and_zero_write_an_expanded_tensor(name):
    """torch's fill_ and zero_ write every alias of an expanded tensor (its base sees one value)."""
    def fn(lib, x):
        base = x.clone()
        v = base.expand(2, 5)
        (v.zero_() if name == "zero_" else v.fill_(2.5))
        return base, v.clone()
    check(fn, np.ones((2, 1), np.float32))
    check(lambda lib, x: lib._foreach_zero_([x.clone().expand(2, 5)])[0].clone(), np.ones((2, 1), np.float32))


def _t(lib, *shape, dtype="float32", fill=0):
    return lib.full(shape, fill, dtype=getattr(lib, dtype))


def _i(lib, *shape, fill=0, dtype="int64"):
    return lib.full(shape, fill, dtype=getattr(lib, dtype))


INDEX = {
    "scatter_src_dtype": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2), _t(lib, 2, 2, dtype="float64")),
    "scatter_add_src_dtype": lambda lib: _t(lib, 3, 4).scatter_add(0, _i(lib, 2, 2), _t(lib, 2, 2, dtype="float64")),
    "scatter_reduce_src_dtype": lambda lib: _t(lib, 3, 4).scatter_reduce(0, _i(lib, 2, 2),
                                                                         _t(lib, 2, 2, dtype="int64"), "sum"),
    "scatter_dtype_before_empty": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 0, 2, 2),
                                                                    _t(lib, 2, 2, dtype="float64")),
    "scatter_src_fewer_dims": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2), _t(lib, 2)),
    "scatter_src_more_dims": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2), _t(lib, 2, 2, 2)),
    "scatter_src_0d": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2), _t(lib)),
    "scatter_index_larger_than_src": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2, fill=9), _t(lib, 2, 1)),
    "scatter_index_dims": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2, 2), _t(lib, 2, 2)),
    "scatter_value_shape": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 5, fill=7), 1.0),
    "scatter_index_values": lambda lib: _t(lib, 3, 4).scatter(0, _i(lib, 2, 2, fill=7), _t(lib, 2, 2)),
    "gather_shape": lambda lib: _t(lib, 3, 4).gather(0, _i(lib, 2, 5, fill=7)),
    "gather_dims": lambda lib: _t(lib, 3, 4).gather(0, _i(lib, 2, fill=7)),
    "index_add_source_dtype": lambda lib: _t(lib, 3, 4).index_add(0, _i(lib, 2), _t(lib, 2, 4, dtype="float64")),
    "index_add_index_matrix": lambda lib: _t(lib, 3, 4).index_add(0, _i(lib, 2, 2), _t(lib, 2, 4)),
    "index_add_index_float": lambda lib: _t(lib, 3, 4).index_add(0, _t(lib, 2), _t(lib, 2, 4)),
    "index_add_count": lambda lib: _t(lib, 3, 4).index_add(0, _i(lib, 2), _t(lib, 3, 4)),
    "index_add_0d_index": lambda lib: _t(lib, 3, 4).index_add(0, _i(lib), _t(lib, 3, 4)),
    "index_add_slice_shape": lambda lib: _t(lib, 3, 4).index_add(0, _i(lib, 2), _t(lib, 2, 3)),
    "index_add_0d_source": lambda lib: _t(lib, 3, 4).index_add(0, _i(lib, 2), _t(lib)),
    "index_add_0d_self": lambda lib: _t(lib).index_add(0, _i(lib, 1), _t(lib, 2, 4)),
    "index_reduce_source_dtype": lambda lib: _t(lib, 3, 4).index_reduce(0, _i(lib, 2), _t(lib, 2, 4, dtype="uint8"),
                                                                       "prod"),
    "index_reduce_slice_shape": lambda lib: _t(lib, 3, 4).index_reduce(0, _i(lib, 2), _t(lib, 2, 4, 2), "mean"),
    "index_reduce_index_values": lambda lib: _t(lib, 3, 4).index_reduce(0, _i(lib, 2, fill=-1), _t(lib, 2, 4),
                                                                       "amax"),
    "index_copy_source_dtype": lambda lib: _t(lib, 3, 4).index_copy(0, _i(lib, 2), _t(lib, 2, 4, dtype="int32")),
    "index_copy_index_int": lambda lib: _t(lib, 3).index_copy(0, _i(lib, 2, dtype="int32"), _t(lib, 2)),
    "index_copy_index_matrix": lambda lib: _t(lib, 3, 4).index_copy(0, _i(lib, 2, 2), _t(lib, 2, 4)),
    "index_copy_scalar_source": lambda lib: _t(lib, 3, 4).index_copy(0, _i(lib, 2), _t(lib)),
    "index_copy_source_dims": lambda lib: _t(lib, 3, 4).index_copy(0, _i(lib, 2), _t(lib, 2)),
    "index_copy_slice_shape": lambda lib: _t(lib, 3, 4, 5).index_copy(0, _i(lib, 2), _t(lib, 2, 3, 6)),
    "index_copy_count": lambda lib: _t(lib, 3, 4).index_copy(0, _i(lib, 2), _t(lib, 3, 4)),
}


@pytest.mark.parametrize("name", INDEX)
def test_index_ops_check_in_torchs_order(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (index_reduce's beta warning)
        assert_same_error(lambda lib: INDEX[name](lib))


def _m(lib, dtype, *shape):
    return lib.ones(*shape, dtype=getattr(lib, dtype))


_PAIRS = [("float32", "float32", "float64"), ("float64", "float32", "float32"), ("float32", "float64", "float32"),
          ("int32", "float32", "float32")]
DTYPES = {}
for _a, _b, _c in _PAIRS:
    _k = f"{_a}-{_b}-{_c}"
    DTYPES[f"addmm-{_k}"] = lambda lib, a=_a, b=_b, c=_c: lib.addmm(_m(lib, a, 2, 3), _m(lib, b, 2, 4),
                                                                    _m(lib, c, 4, 3))
    DTYPES[f"addmv-{_k}"] = lambda lib, a=_a, b=_b, c=_c: lib.addmv(_m(lib, a, 2), _m(lib, b, 2, 4), _m(lib, c, 4))
    DTYPES[f"baddbmm-{_k}"] = lambda lib, a=_a, b=_b, c=_c: lib.baddbmm(_m(lib, a, 5, 2, 3), _m(lib, b, 5, 2, 4),
                                                                        _m(lib, c, 5, 4, 3))
    DTYPES[f"addbmm-{_k}"] = lambda lib, a=_a, b=_b, c=_c: lib.addbmm(_m(lib, a, 2, 3), _m(lib, b, 5, 2, 4),
                                                                      _m(lib, c, 5, 4, 3))
DTYPES.update({
    "addbmm-self-expand-first": lambda lib: lib.addbmm(_m(lib, "float32", 2, 2, 3), _m(lib, "float32", 5, 2, 4),
                                                       _m(lib, "float64", 5, 4, 3)),
    "addmm-self-expand": lambda lib: lib.addmm(_m(lib, "float32", 2, 5), _m(lib, "float32", 2, 4),
                                               _m(lib, "float32", 4, 3)),
    "addmm-self-more-dims": lambda lib: lib.addmm(_m(lib, "float32", 2, 5, 3), _m(lib, "float32", 2, 4),
                                                  _m(lib, "float32", 4, 3)),
    "addr-self-expand": lambda lib: lib.addr(_m(lib, "float32", 2, 5), _m(lib, "float32", 2), _m(lib, "float32", 3)),
    "solve": lambda lib: lib.linalg.solve(lib.eye(3), _m(lib, "float64", 4, 2)),
    "lstsq-dtype": lambda lib: lib.linalg.lstsq(lib.eye(3), _m(lib, "float64", 4, 2)),
    "lstsq-half": lambda lib: lib.linalg.lstsq(lib.eye(3, dtype=lib.float16), _m(lib, "float32", 3, 2)),
    "lstsq-1d": lambda lib: lib.linalg.lstsq(_m(lib, "float32", 3), _m(lib, "float32", 3)),
    "lstsq-0d-other": lambda lib: lib.linalg.lstsq(_m(lib, "float32", 3, 3), lib.ones(())),
    "lstsq-dims": lambda lib: lib.linalg.lstsq(_m(lib, "float32", 3, 3), _m(lib, "float32", 2, 2, 3, 3)),
    "linalg.cross": lambda lib: lib.linalg.cross(_m(lib, "float32", 3), _m(lib, "int32", 3)),
    "cdist": lambda lib: lib.cdist(_m(lib, "float32", 2, 3), _m(lib, "float64", 2, 3)),
    "quantile": lambda lib: lib.quantile(_m(lib, "float32", 3), lib.tensor(0.5, dtype=lib.float64)),
    "tensordot": lambda lib: lib.tensordot(_m(lib, "float32", 3), _m(lib, "float64", 3), 1),
    "inner": lambda lib: lib.inner(_m(lib, "float32", 2, 3), _m(lib, "float64", 3)),
    "polar": lambda lib: lib.polar(_m(lib, "float32", 3), _m(lib, "uint8", 3)),
    "lerp-end": lambda lib: lib.lerp(_m(lib, "float32", 3), _m(lib, "float64", 3), 0.5),
    "lerp-weight": lambda lib: lib.lerp(_m(lib, "float64", 3), _m(lib, "float64", 3), _m(lib, "int64", 3)),
    "foreach_lerp": lambda lib: lib._foreach_lerp([_m(lib, "float32", 2)], [_m(lib, "int32", 2)], 0.5),
    "masked_scatter": lambda lib: lib.ones(3).masked_scatter(lib.ones(3, dtype=lib.bool), _m(lib, "int64", 3)),
})


@pytest.mark.parametrize("name", DTYPES)
def test_dtype_equality_checks(name):
    assert_same_error(lambda lib: DTYPES[name](lib))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_adaptive_max_pool_of_an_empty_batch(nd):
    """Found by the fuzzer: an empty batch reached a reshape with -1, which NumPy cannot size."""
    fn = f"adaptive_max_pool{nd}d"
    x = np.ones((0, 3) + (4,) * nd, np.float32)
    check(lambda lib, x: getattr(lib.nn.functional, fn)(x, (2,) * nd, return_indices=True), x)
    check(lambda lib, x: getattr(lib.nn.functional, fn)(x.transpose(-1, -2), (2,) * nd), x)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("nd", [2, 3])
def test_avg_pool_backward_integer_dtypes(dtype, nd):
    """Found by the fuzzer: NumPy's casting error escaped the integer backward; torch's int64 kernel divides
    in integers and the other integer dtypes are refused."""
    g = ((np.arange(2 * 2 ** nd) - 3) * 5).reshape((1, 2) + (2,) * nd).astype(dtype)
    x = np.ones((1, 2) + (4,) * nd, dtype)
    name = f"avg_pool{nd}d_backward"
    check(lambda lib, g, x: getattr(lib.ops.aten, name)(g, x, [3] * nd, [2] * nd, [1] * nd, False, False, None),
          g, x)
