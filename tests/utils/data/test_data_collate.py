"""default_collate / default_convert against torch's on the same nested NumPy / Python data."""

import collections

import numpy as np
import pytest
import torch
import torch.utils.data
from compare import assert_same_error
from dataloader_cases import same_batch

import ember
import ember.utils.data

Point = collections.namedtuple("Point", ["x", "y"])


def _arr(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape).astype(dtype)


COLLATE_CASES = {
    "ints": lambda lib: [0, 1, 2],
    "floats": lambda lib: [0.5, 1.5, -2.0],
    "bools": lambda lib: [True, False],
    "np_float32_scalars": lambda lib: [np.float32(1.5), np.float32(2)],
    "np_float64_scalars": lambda lib: [np.float64(1.5), np.float64(2)],
    "np_int16_scalars": lambda lib: [np.int16(1), np.int16(-3)],
    "np_bool_scalars": lambda lib: [np.bool_(True), np.bool_(False)],
    "np_float64_arrays": lambda lib: [_arr(2, 3, dtype=np.float64), _arr(2, 3, dtype=np.float64) + 1],
    "np_int64_arrays": lambda lib: [_arr(4, dtype=np.int64), _arr(4, dtype=np.int64) * 2],
    "np_uint8_arrays": lambda lib: [_arr(2, 2, dtype=np.uint8)] * 3,
    "np_0d_arrays": lambda lib: [np.array(1.5, np.float32), np.array(2.5, np.float32)],
    "tensors": lambda lib: [lib.from_numpy(_arr(2, 3)), lib.from_numpy(_arr(2, 3) - 6)],
    "int_tensors": lambda lib: [lib.from_numpy(_arr(3, dtype=np.int32))] * 2,
    "transposed_tensors": lambda lib: [lib.from_numpy(_arr(3, 2)).t(), lib.from_numpy(_arr(3, 2)).t()],
    "strings": lambda lib: ["a", "bc"],
    "bytes": lambda lib: [b"a", b"bc"],
    "dicts": lambda lib: [{"a": 1, "b": _arr(2)}, {"a": 3, "b": _arr(2) + 1}],
    "ordered_dicts": lambda lib: [collections.OrderedDict(z=1.0, a=2), collections.OrderedDict(z=3.0, a=4)],
    "namedtuples": lambda lib: [Point(1, 2.0), Point(3, 4.0)],
    "tuples": lambda lib: [(1, 2.0, "x"), (3, 4.0, "y")],
    "lists": lambda lib: [[1, 2], [3, 4]],
    "nested": lambda lib: [{"a": (1, [_arr(2), "s"]), "p": Point(lib.from_numpy(_arr(1)), 0.5)},
                           {"a": (2, [_arr(2) * 3, "t"]), "p": Point(lib.from_numpy(_arr(1) + 2), 1.5)}],
}


@pytest.mark.parametrize("case", COLLATE_CASES)
def test_default_collate_matches_torch(case):
    make = COLLATE_CASES[case]
    same_batch(ember.utils.data.default_collate(make(ember)), torch.utils.data.default_collate(make(torch)))


COLLATE_ERRORS = {
    "ragged_lists": lambda lib: [[1, 2], [3]],
    "ragged_tuples": lambda lib: [(1, 2), (3, 4, 5)],
    "ragged_tensors": lambda lib: [lib.zeros(3), lib.zeros(2)],
    "ragged_arrays": lambda lib: [np.zeros(3), np.zeros(2)],
    "object_arrays": lambda lib: [np.array([1, None], dtype=object)] * 2,
    "str_arrays": lambda lib: [np.array(["a", "b"])] * 2,
    "unsupported": lambda lib: [object(), object()],
    "none": lambda lib: [None, None],
}


@pytest.mark.parametrize("case", COLLATE_ERRORS)
def test_default_collate_errors_match_torch(case):
    make = COLLATE_ERRORS[case]
    assert_same_error(lambda lib: lib.utils.data.default_collate(make(lib)))


CONVERT_CASES = {
    "int": lambda lib: 3,
    "np_array": lambda lib: _arr(2, 2),
    "np_scalar": lambda lib: np.float64(2.5),
    "tensor": lambda lib: lib.from_numpy(_arr(3)),
    "tuple": lambda lib: (_arr(2), 1, "a"),
    "namedtuple": lambda lib: Point(_arr(2), np.int32(4)),
    "dict": lambda lib: {"a": _arr(1), "b": [np.int64(1), 2.0]},
    "string": lambda lib: "abc",
}


@pytest.mark.parametrize("case", CONVERT_CASES)
def test_default_convert_matches_torch(case):
    make = CONVERT_CASES[case]
    same_batch(ember.utils.data.default_convert(make(ember)), torch.utils.data.default_convert(make(torch)))


def test_default_convert_leaves_string_arrays():
    a = np.array(["a", "b"])
    assert ember.utils.data.default_convert(a) is a


def test_collate_fn_map_extension():
    from ember.utils.data.collate import collate, default_collate_fn_map

    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    out = collate([{"b": Box(1)}, {"b": Box(2)}], collate_fn_map={**default_collate_fn_map, Box: collate_box})
    assert out == {"b": 3}


def test_default_collate_does_not_share_memory_with_samples():
    samples = [np.zeros(2, np.float32), np.ones(2, np.float32)]
    batch = ember.utils.data.default_collate(samples)
    samples[0][:] = 5
    assert batch[0].tolist() == [0.0, 0.0]
