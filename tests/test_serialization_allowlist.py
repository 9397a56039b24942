"""weights_only's allow-list and the rest of torch.serialization's names, against torch 2.13: files written by
torch and read by ember and the other way round."""

import io
import types
import warnings

import numpy as np
import pytest
import torch
from compare import normalize_message

import ember


def test_allow_list_is_torchs():
    # See NOTE [ The allow-list is torch's ] in ember/_weights_only_unpickler.py
    from torch import _weights_only_unpickler as two

    from ember import _weights_only_unpickler as ewo

    ours = set(ewo._get_allowed_globals()) | ewo._TORCH_ONLY
    assert ours == set(two._get_allowed_globals())


def _numpy_checkpoint():
    buf = io.BytesIO()
    torch.save({"a": np.arange(3.0), "s": np.float64(2.5), "d": np.dtype("int32"), "t": torch.ones(2)}, buf)
    return buf.getvalue()


NUMPY_GLOBALS = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, np.dtypes.Float64DType,
                 np.dtypes.Int32DType, np._core.multiarray.scalar]


def _load_both(data, **kw):
    out = []
    for lib in (torch, ember):
        try:
            out.append(("ok", lib.load(io.BytesIO(data), **kw)))
        except Exception as err:  # noqa: BLE001 - compared below
            out.append((type(err).__name__, normalize_message(str(err))))
    return out


def test_numpy_arrays_refused_by_default_as_torch_does():
    t, e = _load_both(_numpy_checkpoint())
    assert t[0] == "UnpicklingError" and e == t


@pytest.mark.parametrize("partial", [NUMPY_GLOBALS[:3], NUMPY_GLOBALS])
def test_numpy_arrays_with_safe_globals(partial):
    data = _numpy_checkpoint()
    with torch.serialization.safe_globals(partial), ember.serialization.safe_globals(partial):
        (ts, t), (es, e) = _load_both(data)
    assert es == ts
    if ts == "ok":
        np.testing.assert_array_equal(e["a"], t["a"])
        assert e["s"] == t["s"] and type(e["s"]) is type(t["s"]) and e["d"] == t["d"]
        assert isinstance(e["t"], ember.Tensor) and e["t"].tolist() == t["t"].tolist()
    else:
        assert e == t


def test_numpy_arrays_with_weights_only_false():
    (_, t), (_, e) = _load_both(_numpy_checkpoint(), weights_only=False)
    np.testing.assert_array_equal(e["a"], t["a"])


def test_unsafe_globals_in_checkpoint():
    data = _numpy_checkpoint()
    assert sorted(ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) == \
        sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))


def test_legacy_tensor_type_names_load():
    buf = io.BytesIO()
    torch.save({"cls": torch.FloatTensor, "x": torch.arange(3)}, buf)
    (_, t), (_, e) = _load_both(buf.getvalue())
    assert e["cls"] is ember.FloatTensor and e["x"].tolist() == t["x"].tolist()


def _save(lib, obj, **kw):
    buf = io.BytesIO()
    lib.save(obj, buf, **kw)
    return buf.getvalue()


@pytest.mark.parametrize("writer", ["torch", "ember"])
def test_crc32_off_still_loads(writer):
    w = torch if writer == "torch" else ember
    w.serialization.set_crc32_options(False)
    try:
        assert not w.serialization.get_crc32_options()
        data = _save(w, {"x": w.arange(6.0).reshape(2, 3)})
    finally:
        w.serialization.set_crc32_options(True)
    (_, t), (_, e) = _load_both(data)
    assert e["x"].tolist() == t["x"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.mark.parametrize("writer", ["torch", "ember"])
def test_skip_data(writer):
    w = torch if writer == "torch" else ember
    with w.serialization.skip_data():
        data = _save(w, {"x": w.arange(1.0, 7.0).reshape(2, 3), "n": 3})
    (_, t), (_, e) = _load_both(data)
    assert e["x"].tolist() == t["x"].tolist() == [[0.0] * 3] * 2 and e["n"] == 3
    full = _save(w, {"x": w.arange(1.0, 4.0)})
    with torch.serialization.skip_data(), ember.serialization.skip_data():
        (_, t), (_, e) = _load_both(full)
    assert e["x"].shape == (3,) and tuple(t["x"].shape) == (3,)


def test_skip_data_refuses_legacy_format():
    outcomes = []
    for lib in (torch, ember):
        with lib.serialization.skip_data(), pytest.raises(RuntimeError) as err:
            _save(lib, lib.ones(2), _use_new_zipfile_serialization=False)
        outcomes.append(str(err.value))
    assert outcomes[1] == outcomes[0]


@pytest.mark.parametrize("endianness", ["LITTLE", "BIG", "NATIVE", None])
def test_default_load_endianness(endianness):
    data = _save(torch, {"x": torch.tensor([1.0, 2.0]), "i": torch.tensor([1, 256], dtype=torch.int32)},
                 _disable_byteorder_record=True)
    results = []
    for lib in (torch, ember):
        old = lib.serialization.get_default_load_endianness()
        lib.serialization.set_default_load_endianness(
            None if endianness is None else getattr(lib.serialization.LoadEndianness, endianness))
        try:
            loaded = lib.load(io.BytesIO(data))
            results.append((loaded["x"].tolist(), loaded["i"].tolist()))
        finally:
            lib.serialization.set_default_load_endianness(old)
    assert results[1] == results[0]


CALLS = [
    lambda lib: [(m.name, m.value) for m in lib.serialization.LoadEndianness],
    lambda lib: lib.serialization.get_default_load_endianness(),
    lambda lib: lib.serialization.set_default_load_endianness("big"),
    lambda lib: issubclass(lib.serialization.SourceChangeWarning, Warning),
    lambda lib: lib.serialization.check_module_version_greater_or_equal(np, (1, 20)),
    lambda lib: lib.serialization.check_module_version_greater_or_equal(np, (99,)),
    lambda lib: lib.serialization.check_module_version_greater_or_equal(
        types.SimpleNamespace(__name__="m", __version__="1.x"), (1, 2)),
    lambda lib: lib.serialization.check_module_version_greater_or_equal(
        types.SimpleNamespace(__name__="m", __version__="1.x"), (1, 2), error_if_malformed=False),
    lambda lib: lib.serialization.validate_cuda_device("cuda:0"),
    lambda lib: lib.serialization.validate_hpu_device("hpu:0"),
    lambda lib: lib.serialization.location_tag(lib.ones(2).untyped_storage()),
    lambda lib: lib.serialization.location_tag(3),
    lambda lib: (lambda m: (__import__("os").path.isdir(m.__enter__()), m.__exit__(None, None, None)))(
        lib.serialization.mkdtemp()),
    lambda lib: sorted(lib.serialization.__all__),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_serialization_names(i):
    outcomes = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = ("ok", normalize_message(repr(CALLS[i](lib))))
            except Exception as err:  # noqa: BLE001 - compared below
                r = (type(err).__name__, normalize_message(str(err)))
        outcomes.append((r, [normalize_message(str(x.message)) for x in w]))
    assert outcomes[1] == outcomes[0]


def test_register_package_deserializer_and_tagger():
    seen = []
    for lib in (torch, ember):
        entry = (0, lambda s: "mine", lambda s, loc: s if loc == "elsewhere" else None)
        lib.serialization.register_package(*entry)
        try:
            tag = lib.serialization.location_tag(lib.ones(1).untyped_storage())
            storage = lib.ones(1).untyped_storage()
            restored = lib.serialization.default_restore_location(storage, "elsewhere")
            seen.append((tag, restored is storage))
        finally:
            lib.serialization._package_registry.remove(entry)
    assert seen[1] == seen[0] == ("mine", True)
