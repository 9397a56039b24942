"""ember.save / ember.load against torch.save / torch.load: each library reads the other's files, the files
are laid out alike, weights-only loading refuses what torch refuses (and runs nothing), broken files fail as in
torch; plus tensor pickling and est."""

import collections
import copy
import io
import mmap
import os
import pickle
import re
import struct
import zipfile

import numpy as np
import pytest
import torch
from compare import normalize_message, numpy_of, to_ember, to_torch

import ember
import ember._zip_container as zc
from ember.serialization import _root
from ember.utils import safetensors as est

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128", "uint16", "uint32", "uint64"]


def sample(name, shape=(3, 4), seed=0):
    """NumPy data of dtype `name` (bfloat16 through ml_dtypes)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 10
    if name == "bool":
        return x > 0
    if name.startswith("complex"):
        return (x + 1j * rng.standard_normal(shape)).astype(name)
    if name == "bfloat16":
        import ml_dtypes

        return x.astype(ml_dtypes.bfloat16)
    return x.astype(name)


def both(arr):
    return to_ember(arr), to_torch(arr)


def ember_bytes(obj, **kw):
    buf = io.BytesIO()
    ember.save(obj, buf, **kw)
    return buf.getvalue()


def torch_bytes(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


def same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def raises(fn):
    try:
        fn()
    except BaseException as e:  # noqa: BLE001 - the exception is the result
        return e
    raise AssertionError("no exception")


def _no_enforce(msg):
    # torch's C++ checks prefix their message with the source line that raised it
    return re.sub(r"^\[enforce fail at [^\]]*\] \. ", "", msg)


def assert_same_exception(ember_fn, torch_fn):
    te, ee = raises(torch_fn), raises(ember_fn)
    assert type(ee) is type(te), f"ember raised {type(ee).__name__}({ee}), torch {type(te).__name__}({te})"
    tm, em = _no_enforce(normalize_message(str(te))), normalize_message(str(ee))
    assert em == tm, f"message differs:\n ember: {em!r}\n torch: {tm!r}"


# ---- the file layout ---------------------------------------------------------------------------------------------

def nested(lib, arrays):
    x, b, h = (to_torch(a) if lib is torch else to_ember(a) for a in arrays)
    return collections.OrderedDict([
        ("w", x), ("wt", x.t()[1:]), ("p", lib.nn.Parameter(h)), ("b", b), ("s", lib.Size([2, 3])),
        ("d", lib.float16), ("dev", lib.device("cpu")), ("e", lib.empty(0)), ("meta", {"epoch": 3, "l": [1.5, None]}),
    ])


def test_file_matches_torch_byte_for_byte():
    arrays = (sample("float32"), sample("bool", (5,)), sample("bfloat16", (2,)))
    t, e = torch_bytes(nested(torch, arrays)), ember_bytes(nested(ember, arrays))
    zt, ze = zipfile.ZipFile(io.BytesIO(t)), zipfile.ZipFile(io.BytesIO(e))
    assert ze.namelist() == zt.namelist()
    assert [i.header_offset for i in ze.infolist()] == [i.header_offset for i in zt.infolist()]
    assert ze.read("archive/data.pkl") == zt.read("archive/data.pkl")
    for name in zt.namelist():
        if not name.endswith("serialization_id"):
            assert ze.read(name) == zt.read(name), name
    sid = ze.read("archive/.data/serialization_id")
    assert len(sid) == 40 and sid.isdigit()
    assert len(e) == len(t)


def test_archive_name_is_file_stem(tmp_path):
    for name in ("model.pt", "ckpt.tar.pth", "noext", "x."):
        torch.save(torch.ones(1), tmp_path / ("t_" + name))
        ember.save(ember.ones(1), tmp_path / ("e_" + name))
        tn = zipfile.ZipFile(tmp_path / ("t_" + name)).namelist()[0]
        en = zipfile.ZipFile(tmp_path / ("e_" + name)).namelist()[0]
        assert en == "e" + tn[1:]
    assert_same_exception(lambda: ember.save(ember.ones(1), str(tmp_path / ".pt")),
                          lambda: torch.save(torch.ones(1), str(tmp_path / ".pt")))


def test_storages_are_64_byte_aligned():
    data = ember_bytes([ember.ones(i) for i in range(1, 9)])
    reader = zc.ZipReader(io.BytesIO(data))
    for key in range(8):
        assert reader.get_record_offset(f"data/{key}") % 64 == 0


# ---- ember -> torch and torch -> ember, every dtype --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_ember_save_torch_load(dtype):
    e, t = both(sample(dtype))
    got = torch.load(io.BytesIO(ember_bytes([e, e[1:, ::2], e.t()])))
    want = [t, t[1:, ::2], t.t()]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.stride() == w.stride()
        assert g.storage_offset() == w.storage_offset()
        assert torch.equal(g, w)
    assert same_storage(got[0], got[1]) and same_storage(got[0], got[2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_save_ember_load(dtype):
    e, t = both(sample(dtype))
    views = [t, t[1:, ::2], t.t(), t[2]]
    got = ember.load(io.BytesIO(torch_bytes(views)))
    for g, w in zip(got, views):
        assert type(g) is ember.Tensor and str(g.dtype) == str(w.dtype).replace("torch", "ember")
        assert g.shape == w.shape and g.stride() == w.stride() and g.storage_offset() == w.storage_offset()
        assert np.array_equal(numpy_of(g), w.float().numpy() if dtype == "bfloat16" else w.numpy())
    assert all(same_storage(got[0], g) for g in got[1:])


def test_views_stay_one_storage_and_write_through():
    for save, load, lib in ((ember_bytes, torch.load, ember), (torch_bytes, ember.load, torch)):
        x = lib.arange(24.0).reshape(4, 6)
        base, col, flat = load(io.BytesIO(save({"x": x, "col": x[:, 2], "flat": x.view(-1)}))).values()
        assert same_storage(base, col) and same_storage(base, flat)
        base[1, 2] = -7.0
        assert col[1].item() == -7.0 and flat[8].item() == -7.0


def test_two_dtypes_on_one_storage_is_an_error():
    e, t = both(sample("float32", (4,)))
    assert_same_exception(lambda: ember_bytes([e, e.view(ember.int32)]), lambda: torch_bytes([t, t.view(torch.int32)]))


def test_parameters_and_requires_grad():
    data = sample("float32", (2, 3))
    for lib, save, load in ((torch, ember_bytes, torch.load), (ember, torch_bytes, ember.load)):
        src = ember if lib is torch else torch
        conv = to_ember if src is ember else to_torch
        p, q = src.nn.Parameter(conv(data)), src.nn.Parameter(conv(data[0]), requires_grad=False)
        y = conv(data).requires_grad_() * 2  # a non-leaf: saved as a leaf that requires grad
        gp, gq, gy = load(io.BytesIO(save([p, q, y])))
        assert isinstance(gp, lib.nn.Parameter) and gp.requires_grad
        assert isinstance(gq, lib.nn.Parameter) and not gq.requires_grad
        assert type(gy) is lib.Tensor and gy.requires_grad and gy.is_leaf
        assert np.array_equal(gp.detach().numpy(), data)


def test_ordered_dict_order_and_python_types():
    keys = ["z", "a", "m", "b", "y"]
    for save, load in ((ember_bytes, torch.load), (torch_bytes, ember.load)):
        od = collections.OrderedDict((k, i) for i, k in enumerate(keys))
        obj = {"od": od, "set": {1, 2}, "t": (1, 2.5, "s", None, True), "b": b"xy", "c": 1 + 2j,
               "ba": bytearray(b"ab"), "big": 2 ** 70, "neg": -5, "f": float("inf"),
               "counter": collections.Counter("aab")}
        got = load(io.BytesIO(save(obj)))
        assert type(got["od"]) is collections.OrderedDict and list(got["od"]) == keys
        assert got == obj


def test_size_dtype_device_objects():
    got = torch.load(io.BytesIO(ember_bytes([ember.Size([2, 3]), ember.bfloat16, ember.device("cpu")])))
    assert got == [torch.Size([2, 3]), torch.bfloat16, torch.device("cpu")] and type(got[0]) is torch.Size
    got = ember.load(io.BytesIO(torch_bytes([torch.Size([2, 3]), torch.int16, torch.device("cpu")])))
    assert got == [ember.Size([2, 3]), ember.int16, ember.device("cpu")] and type(got[0]) is ember.Size


def test_tensor_with_python_attributes():
    e, t = both(sample("float32", (3,)))
    e.tag, t.tag = "w", "w"
    assert torch.load(io.BytesIO(ember_bytes(e))).tag == "w"
    got = ember.load(io.BytesIO(torch_bytes(t)))
    assert got.tag == "w" and type(got) is ember.Tensor


def test_untyped_storage_round_trip():
    e, t = both(sample("float32", (3,)))
    # torch hands a saved storage back typed, as uint8
    got = torch.load(io.BytesIO(ember_bytes(e.untyped_storage())))
    assert isinstance(got, torch.TypedStorage) and got.dtype == torch.uint8
    assert bytes(got.untyped()) == t.numpy().tobytes()
    got = ember.load(io.BytesIO(torch_bytes(t.untyped_storage())))
    assert isinstance(got, ember.TypedStorage) and got.dtype == ember.uint8
    assert got.untyped()._bytes.tobytes() == t.numpy().tobytes()


def checkpoint(lib, weights, step):
    conv = to_ember if lib is ember else to_torch
    w, b = conv(weights[0]), conv(weights[1])
    return {
        "model": collections.OrderedDict([("fc.weight", w), ("fc.bias", b), ("bn.num_batches_tracked", lib.tensor(7))]),
        "optimizer": {"state": {0: {"step": lib.tensor(float(step)), "exp_avg": w * 0.5, "exp_avg_sq": w * w},
                                1: {"step": lib.tensor(float(step)), "exp_avg": b * 0.5, "exp_avg_sq": b * b}},
                      "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                                        "amsgrad": False, "params": [0, 1]}]},
        "epoch": 12, "losses": [2.5, 1.25, 0.625], "config": {"name": "mlp", "layers": (4, 3)},
    }


def test_model_and_optimizer_checkpoint_both_ways(tmp_path):
    weights = (sample("float32", (3, 4)), sample("float32", (3,), seed=1))
    ember.save(checkpoint(ember, weights, 5), tmp_path / "e.pt")
    torch.save(checkpoint(torch, weights, 5), tmp_path / "t.pt")
    for got, want in ((torch.load(tmp_path / "e.pt"), checkpoint(torch, weights, 5)),
                      (ember.load(tmp_path / "t.pt"), checkpoint(torch, weights, 5))):
        assert list(got) == list(want) and list(got["model"]) == list(want["model"])
        for k in want["model"]:
            assert np.array_equal(numpy_of(got["model"][k]), numpy_of(want["model"][k]))
        assert got["epoch"] == 12 and got["losses"] == want["losses"] and got["config"] == want["config"]
        assert got["optimizer"]["param_groups"] == want["optimizer"]["param_groups"]
        for k in ("step", "exp_avg", "exp_avg_sq"):
            assert np.array_equal(numpy_of(got["optimizer"]["state"][1][k]),
                                  numpy_of(want["optimizer"]["state"][1][k]))
    # torch's own modules and optimizers accept a checkpoint ember wrote
    model = torch.nn.Linear(4, 3)
    ckpt = torch.load(tmp_path / "e.pt")
    model.load_state_dict({"weight": ckpt["model"]["fc.weight"], "bias": ckpt["model"]["fc.bias"]})
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    opt.load_state_dict(ckpt["optimizer"])
    assert opt.param_groups[0]["lr"] == 1e-3 and np.array_equal(model.weight.detach().numpy(), weights[0])


def test_real_modules_round_trip():
    lin = ember.nn.Linear(4, 3)
    sd = lin.state_dict()
    tl = torch.nn.Linear(4, 3)
    tl.load_state_dict(torch.load(io.BytesIO(ember_bytes(sd))))
    assert np.array_equal(tl.weight.detach().numpy(), sd["weight"].numpy())
    back = ember.load(io.BytesIO(torch_bytes(tl.state_dict())))
    lin2 = ember.nn.Linear(4, 3)
    lin2.load_state_dict(back)
    assert np.array_equal(lin2.weight.detach().numpy(), tl.weight.detach().numpy())


# ---- weights-only loading: refusals, and nothing runs ------------------------------------------------------------

def zip_with_pickle(pkl, name="archive"):
    """A checkpoint whose data.pkl is `pkl` (hand-made pickles for the security tests)."""
    buf = io.BytesIO()
    w = zc.ZipWriter(buf, name)
    w.write_record("data.pkl", pkl)
    w.write_record("version", b"3\n")
    w.finish()
    return buf.getvalue()


class Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


def crafted_pickles(sentinel):
    cmd = f"touch {sentinel}".encode()
    touch = f"open({str(sentinel)!r}, 'w').close()".encode()
    return {
        "os.system": pickle.dumps(Evil(sentinel), protocol=2),
        "posix.system by GLOBAL": b"\x80\x02cposix\nsystem\nq\x00X" + struct.pack("<I", len(cmd)) + cmd + b"\x85R.",
        "builtins.eval": b"\x80\x02cbuiltins\neval\nX" + struct.pack("<I", len(touch)) + touch + b"\x85R.",
        "builtins.exec": b"\x80\x02c__builtin__\nexec\nX" + struct.pack("<I", len(touch)) + touch + b"\x85R.",
        "INST opcode": b"(S'" + cmd + b"'\nios\nsystem\n.",
        "OBJ opcode": b"\x80\x02(cos\nsystem\nX" + struct.pack("<I", len(cmd)) + cmd + b"o.",
        "STACK_GLOBAL": pickle.dumps(Evil(sentinel), protocol=4),
        "BUILD on a dict": b"\x80\x02}q\x00}X\x08\x00\x00\x00__class__cbuiltins\nobject\nsb.",
        "REDUCE on a value": b"\x80\x02ccollections\nOrderedDict\n)R)R.",
        "SETITEM on a list": b"\x80\x02]K\x00K\x01s.",
        "persistent id not storage": b"\x80\x02X\x06\x00\x00\x00module\x85Q.",
    }


def test_crafted_pickles_are_refused_and_run_nothing(tmp_path):
    sentinel = tmp_path / "pwned"
    for case, pkl in crafted_pickles(sentinel).items():
        for data in (zip_with_pickle(pkl), pkl):  # a zip checkpoint, and the pre-zip (legacy) stream
            te, ee = raises(lambda: torch.load(io.BytesIO(data))), raises(lambda: ember.load(io.BytesIO(data)))
            assert not sentinel.exists(), f"{case}: code ran"
            assert type(ee) is type(te), f"{case}: ember {type(ee).__name__}({ee}) torch {type(te).__name__}({te})"
            assert normalize_message(str(ee)) == normalize_message(str(te)), case
    # and the same pickle does run under plain pickle, so the test would see it
    pickle.loads(crafted_pickles(sentinel)["os.system"])
    assert sentinel.exists()


def test_unsupported_global_message_matches_torch():
    t = ember_bytes({"a": collections.defaultdict(int)})
    assert_same_exception(lambda: ember.load(io.BytesIO(t)), lambda: torch.load(io.BytesIO(t)))
    assert "Weights only load failed" in str(raises(lambda: ember.load(io.BytesIO(t))))
    assert_same_exception(lambda: ember.load(io.BytesIO(t), pickle_module=pickle, weights_only=True),
                          lambda: torch.load(io.BytesIO(t), pickle_module=pickle, weights_only=True))


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)


def test_safe_globals():
    data = ember_bytes({"p": Point(1, ember.ones(2))})
    assert isinstance(raises(lambda: ember.load(io.BytesIO(data))), pickle.UnpicklingError)
    with ember.serialization.safe_globals([Point]):
        assert Point in ember.serialization.get_safe_globals()
        got = ember.load(io.BytesIO(data))
        assert got["p"].x == 1 and got["p"].y.tolist() == [1.0, 1.0]
    assert Point not in ember.serialization.get_safe_globals()
    ember.serialization.add_safe_globals([(Point, f"{__name__}.Point")])
    try:
        assert ember.load(io.BytesIO(torch_bytes(Point(3, 4))), weights_only=True) == Point(3, 4)
    finally:
        ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []
    assert ember.load(io.BytesIO(data), weights_only=False)["p"].x == 1
    assert ember.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == \
        torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))


def test_weights_only_false_loads_objects_and_maps_torch_names():
    data = torch_bytes({"p": Point(1, 2), "t": torch.ones(2), "dt": torch.float64})
    got = ember.load(io.BytesIO(data), weights_only=False)
    assert got["p"] == Point(1, 2) and type(got["t"]) is ember.Tensor and got["dt"] is ember.float64
    got = ember.load(io.BytesIO(data), pickle_module=pickle)  # an explicit pickle_module means weights_only=False
    assert got["p"] == Point(1, 2)


# ---- broken files ------------------------------------------------------------------------------------------------

def rewrite(data, change):
    """The checkpoint `data` rebuilt (by Python's zipfile) with `change(name, payload)` applied to each record."""
    zin, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as zo:
        for info in zin.infolist():
            payload = change(info.filename, zin.read(info.filename))
            if payload is not None:
                zo.writestr(info.filename, payload)
    return out.getvalue()


def broken_files():
    good = torch_bytes({"a": torch.arange(6.0)})
    return {
        "truncated half": good[: len(good) // 2],
        "truncated tail": good[:-10],
        "tiny": good[:10],
        "empty": b"",
        "garbage": b"not a checkpoint at all",
        "missing data/0": rewrite(good, lambda n, d: None if n.endswith("data/0") else d),
        "missing data.pkl": rewrite(good, lambda n, d: None if n.endswith("data.pkl") else d),
        "missing version": rewrite(good, lambda n, d: None if n.endswith("/version") else d),
        "short storage": rewrite(good, lambda n, d: d[:7] if n.endswith("data/0") else d),
        "truncated data.pkl": rewrite(good, lambda n, d: d[:40] if n.endswith("data.pkl") else d),
        "future version": rewrite(good, lambda n, d: b"99\n" if n.endswith("/version") else d),
        "no folder": rewrite(good, lambda n, d: None if n.endswith("version") else d).replace(b"archive/", b"archive_"),
        "flipped pickle byte": good.replace(b"torch._utils", b"tosch._utils"),
    }


def test_broken_files_fail_like_torch():
    for case, data in broken_files().items():
        te, ee = raises(lambda: torch.load(io.BytesIO(data))), raises(lambda: ember.load(io.BytesIO(data)))
        assert type(ee) is type(te), f"{case}: ember {type(ee).__name__}({ee}) torch {type(te).__name__}({te})"
        if str(te) and not isinstance(te, KeyError):
            tm, em = normalize_message(str(te)), normalize_message(str(ee))
            assert em == _no_enforce(tm), f"{case}:\n ember: {em}\n torch: {tm}"
        if isinstance(ee, EOFError):
            assert str(ee), f"{case}: an EOFError should say what ran out"


def test_out_of_bounds_view_is_refused():
    good = ember_bytes(ember.arange(6.0))
    bad = rewrite(good, lambda n, d: d.replace(b"K\x06\x85", b"K\x09\x85") if n.endswith("data.pkl") else d)
    e = raises(lambda: ember.load(io.BytesIO(bad)))
    assert isinstance(e, RuntimeError) and "out of bounds for storage" in str(e)


def test_non_seekable_and_bad_targets(tmp_path):
    class NoSeek(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

    assert_same_exception(lambda: ember.load(NoSeek()), lambda: torch.load(NoSeek()))
    assert_same_exception(lambda: ember.save(1, 5), lambda: torch.save(1, 5))
    assert_same_exception(lambda: ember.save(1, str(tmp_path / "no" / "x.pt")),
                          lambda: torch.save(1, str(tmp_path / "no" / "x.pt")))
    assert_same_exception(lambda: ember.load(str(tmp_path / "missing.pt")),
                          lambda: torch.load(str(tmp_path / "missing.pt")))


# ---- mmap, map_location, paths, atomic writes --------------------------------------------------------------------

def test_mmap_maps_the_file(tmp_path):
    path = tmp_path / "m.pt"
    x = to_ember(sample("float32", (64, 64)))
    ember.save({"x": x, "xt": x.t(), "i": ember.arange(5)}, path)
    got = ember.load(path, mmap=True)
    assert np.array_equal(got["x"].numpy(), x.numpy()) and np.array_equal(got["xt"].numpy(), x.t().numpy())
    assert isinstance(_root(got["x"]._data).base, mmap.mmap) and same_storage(got["x"], got["xt"])
    got["x"][0, 0] = 1234.0  # private mapping: the file does not change
    assert ember.load(path)["x"][0, 0].item() == x[0, 0].item()
    assert torch.equal(torch.load(path, mmap=True)["i"], torch.arange(5))
    with open(path, "rb") as f, open(path, "rb") as g:
        assert_same_exception(lambda: ember.load(f, mmap=True), lambda: torch.load(g, mmap=True))
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.ones(2), legacy, _use_new_zipfile_serialization=False)
    assert_same_exception(lambda: ember.load(str(legacy), mmap=True), lambda: torch.load(str(legacy), mmap=True))


def test_map_location_forms():
    data = torch_bytes(torch.arange(3.0))
    seen = []
    for ml in (None, "cpu", ember.device("cpu"), {"cpu": "cpu"}, lambda s, loc: seen.append((type(s), loc)) or s,
               lambda s, loc: None):
        assert ember.load(io.BytesIO(data), map_location=ml).tolist() == [0.0, 1.0, 2.0]
    assert seen == [(ember.UntypedStorage, "cpu")]
    for ml in ("cuda", "cuda:1", "xpu", "hpu", "mps", "nowhere", {"cpu": "cuda:0"}):
        assert_same_exception(lambda: ember.load(io.BytesIO(data), map_location=ml),
                              lambda: torch.load(io.BytesIO(data), map_location=ml))
    assert_same_exception(lambda: ember.load(io.BytesIO(data), map_location=ember.device("cuda")),
                          lambda: torch.load(io.BytesIO(data), map_location=torch.device("cuda")))
    cuda_file = data.replace(b"cpuq", b"cudq")  # a storage tagged for another device
    assert_same_exception(lambda: ember.load(io.BytesIO(cuda_file)), lambda: torch.load(io.BytesIO(cuda_file)))
    assert ember.load(io.BytesIO(cuda_file), map_location={"cud": "cpu"}).tolist() == [0.0, 1.0, 2.0]


def test_paths_and_file_objects(tmp_path):
    x = to_ember(sample("float64", (2, 2)))
    for target in (str(tmp_path / "a.pt"), tmp_path / "b.pt"):
        ember.save(x, target)
        assert np.array_equal(ember.load(target).numpy(), x.numpy())
    with open(tmp_path / "c.pt", "wb") as f:
        f.write(b"prefix")  # torch's writer counts offsets from where it starts, and so does ember's
        ember.save(x, f)
    with open(tmp_path / "c.pt", "rb") as f:
        f.seek(6)
        assert np.array_equal(ember.load(f).numpy(), x.numpy())
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b.pt", "c.pt"]


def test_atomic_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ember.save({"epoch": 1, "w": ember.ones(3)}, path)
    before = path.read_bytes()
    os.chmod(path, 0o640)
    # a pickling error half way through the object
    e = raises(lambda: ember.save({"w": ember.zeros(3), "f": lambda: 0}, path))
    assert isinstance(e, (pickle.PicklingError, AttributeError))
    # a crash while the storages are being written
    real = zc.ZipWriter.write_record

    def crash(self, name, data):
        if name == "data/1":
            raise KeyboardInterrupt
        return real(self, name, data)

    monkeypatch.setattr(zc.ZipWriter, "write_record", crash)
    assert isinstance(raises(lambda: ember.save([ember.ones(2), ember.ones(3)], path)), KeyboardInterrupt)
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]
    ember.save({"epoch": 2}, path)
    assert ember.load(path) == {"epoch": 2} and (os.stat(path).st_mode & 0o777) == 0o640


def test_symlinked_target_is_written_through(tmp_path):
    real, link = tmp_path / "real.pt", tmp_path / "link.pt"
    ember.save(1, real)
    link.symlink_to(real)
    ember.save(2, link)
    assert link.is_symlink() and ember.load(real) == 2


# ---- other format variants ---------------------------------------------------------------------------------------

def test_legacy_format_both_ways():
    e, t = both(sample("float32", (3, 4)))
    got = torch.load(io.BytesIO(ember_bytes([e, e.t(), {"n": 1}], _use_new_zipfile_serialization=False)))
    assert torch.equal(got[0], t) and torch.equal(got[1], t.t()) and same_storage(got[0], got[1]) and got[2] == {"n": 1}
    got = ember.load(io.BytesIO(torch_bytes([t, t[1:], 7], _use_new_zipfile_serialization=False)))
    assert np.array_equal(got[1].numpy(), e[1:].numpy()) and same_storage(got[0], got[1]) and got[2] == 7


def test_pickle_protocol_4():
    e, t = both(sample("int64", (5,)))
    for save, load in ((ember_bytes, torch.load), (torch_bytes, ember.load)):
        data = save([e if save is ember_bytes else t, "x"], pickle_protocol=4)
        got = load(io.BytesIO(data), weights_only=False)
        assert got[0].tolist() == t.tolist() and got[1] == "x"
    data = torch_bytes([t], pickle_protocol=4)
    assert_same_exception(lambda: ember.load(io.BytesIO(data)), lambda: torch.load(io.BytesIO(data)))


def test_big_endian_file():
    x = np.arange(6, dtype=np.float32)
    data = rewrite(torch_bytes(torch.from_numpy(x)), lambda n, d: b"big" if n.endswith("byteorder") else
                   x.astype(">f4").tobytes() if n.endswith("data/0") else d)
    assert ember.load(io.BytesIO(data)).tolist() == torch.load(io.BytesIO(data)).tolist() == x.tolist()


def test_zip64_records(monkeypatch):
    monkeypatch.setattr(zc, "_U32", 100)  # treat records past 100 bytes as past 4 GiB
    data = ember_bytes({"x": ember.arange(40.0), "y": ember.ones(3)})
    assert any(i.extra for i in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert torch.load(io.BytesIO(data))["x"].tolist() == list(range(40))
    assert ember.load(io.BytesIO(data))["y"].tolist() == [1.0, 1.0, 1.0]


def test_compressed_records_are_read():
    data = rewrite(torch_bytes({"a": torch.arange(100.0)}), lambda n, d: d)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zi, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zo:
        for n in zi.namelist():
            zo.writestr(n, zi.read(n))
    assert ember.load(io.BytesIO(out.getvalue()))["a"].tolist() == torch.load(io.BytesIO(out.getvalue()))["a"].tolist()


# ---- plain pickle, copy, multiprocessing -------------------------------------------------------------------------

def test_pickle_round_trip_keeps_everything():
    x = to_ember(sample("bfloat16", (3, 4)))
    p = ember.nn.Parameter(to_ember(sample("float32", (2,))))
    y = to_ember(sample("float64", (3,))).requires_grad_()
    for proto in (2, 4, 5):
        gx, gv, gp, gy = pickle.loads(pickle.dumps((x, x.t()[1:], p, y), protocol=proto))
        assert gx.dtype == ember.bfloat16 and np.array_equal(gx.numpy(), x.numpy())
        assert gv.stride() == (1, 4) and gv.storage_offset() == 1 and same_storage(gx, gv)
        assert isinstance(gp, ember.nn.Parameter) and gp.requires_grad and gy.requires_grad and gy.is_leaf
    a = ember.arange(4.0)
    b = copy.copy(a)
    b[0] = 7.0
    assert a[0].item() == 7.0  # as torch: copy.copy shares the storage
    d = copy.deepcopy({"a": a, "v": a[1:]})
    d["a"][1] = -1.0
    assert d["v"][0].item() == -1.0 and a[1].item() == 1.0


def test_multiprocessing_pool():
    import multiprocessing as mp

    with mp.get_context("fork").Pool(1) as pool:
        got = pool.map(_double, [ember.arange(3.0), ember.ones(2, dtype=ember.int32)])
    assert got[0].tolist() == [0.0, 2.0, 4.0] and got[1].dtype == ember.int32


def _double(t):
    return t * 2


# ---- safetensors -------------------------------------------------------------------------------------------------

ST_DTYPES = [d for d in DTYPES if d != "complex128"]


def test_safetensors_bytes_match_the_reference_writer():
    import safetensors.torch

    arrays = {f"t.{d}": sample(d, (2, 3), seed=i) for i, d in enumerate(ST_DTYPES)}
    arrays["empty"] = np.zeros((0, 4), np.float32)
    meta = {"note": "é\"\\"}  # one key: the reference writer orders several keys by hash
    ref = safetensors.torch.save({k: to_torch(v) for k, v in arrays.items()}, metadata=meta)
    assert est.save({k: to_ember(v) for k, v in arrays.items()}, metadata=meta) == ref
    got = est.load(ref)
    for k, v in arrays.items():
        assert got[k].dtype == to_ember(v).dtype and np.array_equal(got[k].numpy(), v)


def test_safetensors_files(tmp_path):
    import safetensors
    import safetensors.numpy
    import safetensors.torch

    meta = {"format": "pt", "a": "1", "z": "ü"}
    est.save_file({"x": ember.ones(1)}, tmp_path / "m.safetensors", metadata=meta)
    with safetensors.safe_open(tmp_path / "m.safetensors", framework="np") as f:
        assert f.metadata() == meta and f.get_tensor("x").tolist() == [1.0]

    arrays = {d: sample(d, (3,), seed=i) for i, d in enumerate(ST_DTYPES)}
    est.save_file({k: to_ember(v) for k, v in arrays.items()}, tmp_path / "e.safetensors")
    numpy_ok = {k: v for k, v in arrays.items() if k != "bfloat16"}  # the numpy API has no bfloat16
    est.save_file({k: to_ember(v) for k, v in numpy_ok.items()}, tmp_path / "n.safetensors")
    got = safetensors.numpy.load_file(tmp_path / "n.safetensors")
    assert all(np.array_equal(got[k], v) and got[k].dtype == v.dtype for k, v in numpy_ok.items())
    tgot = safetensors.torch.load_file(tmp_path / "e.safetensors")
    assert tgot["bfloat16"].dtype == torch.bfloat16 and torch.equal(tgot["bfloat16"], to_torch(arrays["bfloat16"]))
    safetensors.torch.save_file({k: to_torch(v) for k, v in arrays.items()}, tmp_path / "t.safetensors")
    for path in (tmp_path / "t.safetensors", str(tmp_path / "t.safetensors")):
        got = est.load_file(path)
        assert all(np.array_equal(got[k].numpy(), v) for k, v in arrays.items())
    assert sorted(ember.load(str(tmp_path / "t.safetensors"))) == sorted(arrays)


def test_safetensors_refusals():
    st = est
    x = ember.arange(6.0).reshape(2, 3)
    assert isinstance(raises(lambda: st.save({"a": x.t()})), ValueError)
    assert isinstance(raises(lambda: st.save({"a": x, "b": x[0]})), RuntimeError)
    assert isinstance(raises(lambda: st.save({"a": 1})), ValueError)
    good = st.save({"a": x})
    for bad in (good[:5], good[:-4], struct.pack("<Q", 10 ** 9) + good[8:], good[:8] + b"[" + good[9:],
                good.replace(b"[0,24]", b"[0,20]")):
        assert isinstance(raises(lambda: st.load(bad)), st.SafetensorError)
