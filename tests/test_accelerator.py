"""ember.accelerator, ember.cpu, ember.types and ember.utils.hooks against a CPU-only torch: the same
answers, the same errors."""

import pickle
import warnings
from collections import OrderedDict

import pytest
import torch
from compare import normalize_message

import ember


def _outcome(fn, lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = ("ok", normalize_message(repr(fn(lib))))
        except Exception as err:  # noqa: BLE001 - compared below
            r = (type(err).__name__, normalize_message(str(err)))
    return r, [(x.category.__name__, normalize_message(str(x.message))) for x in w]


def _same(fn):
    t, e = _outcome(fn, torch), _outcome(fn, ember)
    assert e == t


ACCELERATOR = [
    lambda lib: lib.accelerator.is_available(),
    lambda lib: lib.accelerator.current_accelerator(),
    lambda lib: lib.accelerator.current_accelerator(check_available=True),
    lambda lib: lib.accelerator.device_count(),
    lambda lib: lib.accelerator.current_device_index(),
    lambda lib: lib.accelerator.current_device_idx(),
    lambda lib: lib.accelerator.set_device_index(0),
    lambda lib: lib.accelerator.set_device_index(None),
    lambda lib: lib.accelerator.set_device_idx(0),
    lambda lib: lib.accelerator.synchronize(),
    lambda lib: lib.accelerator.current_stream(),
    lambda lib: lib.accelerator.get_device_capability(),
    lambda lib: lib.accelerator.Graph(),
    lambda lib: lib.accelerator.empty_cache(),
    lambda lib: lib.accelerator.memory_allocated(),
    lambda lib: lib.accelerator.memory.max_memory_reserved(0),
    lambda lib: lib.accelerator.memory_stats(),
    lambda lib: lib.accelerator.get_memory_info(),
    lambda lib: lib.accelerator.reset_peak_memory_stats(),
    lambda lib: lib.accelerator.device_index(0).__enter__(),
    lambda lib: lib.accelerator.device_index(None).__enter__(),
    lambda lib: (lib.accelerator.current_accelerator() if lib.accelerator.is_available() else lib.device("cpu")),
    lambda lib: sorted(lib.accelerator.__all__),
]

CPU = [
    lambda lib: lib.cpu.is_available(),
    lambda lib: lib.cpu.is_initialized(),
    lambda lib: lib.cpu.device_count(),
    lambda lib: lib.cpu.current_device(),
    lambda lib: lib.cpu.synchronize(),
    lambda lib: lib.cpu.set_device("cpu"),
    lambda lib: type(lib.cpu.current_stream()).__name__,
    lambda lib: lib.cpu.Event().query(),
    lambda lib: lib.cpu.Stream().wait_stream(lib.cpu.Stream()),
    lambda lib: (lambda s: (lib.cpu.stream(s).__enter__(), lib.cpu.current_stream() is s))(lib.cpu.Stream()),
    lambda lib: sorted(lib.cpu.__all__),
    lambda lib: sorted((k, v) for k, v in lib.cpu.get_capabilities().items()
                       if k not in ("cpu_name", "l1d_cache_size", "l2_cache_size", "num_physical_cores",
                                    "num_sockets")),
]

TYPES = [
    lambda lib: (lib.types.Number, lib.types.Device, lib.types.FileLike),
    lambda lib: (str(lib.types.IntLikeType), str(lib.types.PySymType), lib.types.py_sym_types),
    lambda lib: (lib.types.Tensor is lib.Tensor, lib.types.Size is lib.Size),
]


@pytest.mark.parametrize("fn", ACCELERATOR + CPU + TYPES)
def test_device_modules(fn):
    _same(fn)
    if fn in CPU:  # leave the selected stream as it was
        for lib in (torch, ember):
            lib.cpu.StreamContext(lib.cpu.current_stream()).__exit__(None, None, None)


def _hook(g):
    return g


HOOKS = [
    lambda lib: lib.utils.hooks.__all__,
    lambda lib: lib.utils.hooks.RemovableHandle is type(lib.nn.Linear(1, 1).register_forward_hook(_hook)),
    lambda lib: lib.utils.hooks.RemovableHandle is type(lib.ones(1, requires_grad=True).register_hook(_hook)),
    lambda lib: lib.utils.hooks.unserializable_hook(_hook).__torch_unserializable__,
    lambda lib: lib.utils.hooks.warn_if_has_hooks(lib.ones(1)),
    lambda lib: (lambda t: (t.register_hook(lambda g: g), lib.utils.hooks.warn_if_has_hooks(t))[1])(
        lib.ones(1, requires_grad=True)),
    lambda lib: (lambda t: (t.register_hook(lambda g: g), lib.utils.hooks.warn_if_has_hooks(t))[1])(
        lib.ones(1, requires_grad=True) * 2),
    lambda lib: (lambda t: (t.register_hook(lib.utils.hooks.unserializable_hook(lambda g: g)),
                            lib.utils.hooks.warn_if_has_hooks(t))[1])(lib.ones(1, requires_grad=True)),
]


@pytest.mark.parametrize("fn", HOOKS)
def test_utils_hooks(fn):
    _same(fn)


def test_removable_handle_is_torchs():
    for lib in (torch, ember):
        H = lib.utils.hooks.RemovableHandle
        d, extra = OrderedDict(), OrderedDict()
        h = H(d, extra_dict=extra)
        d[h.id] = extra[h.id] = "hook"
        assert H(d).id == h.id + 1 and H.next_id == h.id + 2
        with h:
            pass
        assert h.id not in d and h.id not in extra
        h2 = H(d, extra_dict=[extra])
        d[h2.id] = extra[h2.id] = "hook"
        state = {"d": d, "h": h2, "extra": extra}
        copy = pickle.loads(pickle.dumps(state))
        copy["h"].remove()
        assert copy["d"] == {} and copy["extra"] == {} and h2.id in d


@pytest.mark.parametrize("device", [None, "cpu", "cpu:0", "cuda", "foo"])
def test_get_device_module(device):
    """torch.get_device_module: the device type's module (cpu with no device on a CPU-only build)."""
    try:
        want = torch.get_device_module(device).__name__
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            ember.get_device_module(device)
        assert str(got.value) == str(e)
        return
    assert ember.get_device_module(device).__name__ == "ember" + want[len("torch"):]
