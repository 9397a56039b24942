"""nn layers on the meta device: factory kwargs (device/dtype), Module.to("meta"), Module.to_empty, and the
`with device("meta"):` default-device context, each held to torch (names, shapes, dtypes, strides, devices of
every parameter and buffer)."""

import pytest
import torch

import ember


def _state(module):
    return [(name, tuple(t.shape), str(t.dtype).split(".")[-1], t.stride(), t.device.type,
             type(t).__name__ if name in dict(module.named_parameters()) else "buffer")
            for name, t in list(module.named_parameters()) + list(module.named_buffers())]


LAYERS = [
    ("linear", lambda nn, **kw: nn.Linear(3, 4, **kw)),
    ("linear_nobias", lambda nn, **kw: nn.Linear(3, 4, bias=False, **kw)),
    ("bilinear", lambda nn, **kw: nn.Bilinear(2, 3, 4, **kw)),
    ("conv1d", lambda nn, **kw: nn.Conv1d(2, 4, 3, **kw)),
    ("conv2d", lambda nn, **kw: nn.Conv2d(3, 4, 3, groups=1, **kw)),
    ("conv_transpose2d", lambda nn, **kw: nn.ConvTranspose2d(4, 2, 3, **kw)),
    ("embedding", lambda nn, **kw: nn.Embedding(5, 3, **kw)),
    ("embedding_padding", lambda nn, **kw: nn.Embedding(5, 3, padding_idx=0, **kw)),
    ("layer_norm", lambda nn, **kw: nn.LayerNorm(4, **kw)),
    ("group_norm", lambda nn, **kw: nn.GroupNorm(2, 4, **kw)),
    ("batch_norm1d", lambda nn, **kw: nn.BatchNorm1d(4, **kw)),
    ("batch_norm2d", lambda nn, **kw: nn.BatchNorm2d(4, **kw)),
    ("lstm", lambda nn, **kw: nn.LSTM(3, 4, num_layers=2, bidirectional=True, **kw)),
    ("gru", lambda nn, **kw: nn.GRU(3, 4, **kw)),
    ("rnn_cell", lambda nn, **kw: nn.RNNCell(3, 4, **kw)),
    ("prelu", lambda nn, **kw: nn.PReLU(**kw)),
    ("multihead_attention", lambda nn, **kw: nn.MultiheadAttention(4, 2, **kw)),
    ("sequential", lambda nn, **kw: nn.Sequential(nn.Linear(3, 4, **kw), nn.ReLU(), nn.Linear(4, 2, **kw))),
]


def _build(lib, make, **kw):
    lib.manual_seed(0)
    return make(lib.nn, **kw)


@pytest.mark.parametrize("name", [n for n, _ in LAYERS])
def test_factory_kwargs_meta(name):
    make = dict(LAYERS)[name]
    for kw in ({"device": "meta"}, {"device": "meta", "dtype": "float64"}):
        tk = {k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()}
        ek = {k: getattr(ember, v) if k == "dtype" else v for k, v in kw.items()}
        t, e = _state(_build(torch, make, **tk)), _state(_build(ember, make, **ek))
        assert e == t and all(s[4] == "meta" for s in e)


@pytest.mark.parametrize("name", [n for n, _ in LAYERS])
def test_to_meta_and_to_empty(name):
    make = dict(LAYERS)[name]
    mods = {lib: _build(lib, make) for lib in (torch, ember)}
    for m in mods.values():
        m.to("meta")
    assert _state(mods[ember]) == _state(mods[torch])
    for m in mods.values():
        m.to_empty(device="cpu")
    assert _state(mods[ember]) == _state(mods[torch])
    assert all(s[4] == "cpu" for s in _state(mods[ember]))
    for p in mods[ember].parameters():  # real memory now: it can be written and read
        p.data.fill_(1.0)
        assert float(p.detach().sum()) == p.numel()


def test_device_context():
    for lib in (torch, ember):
        with lib.device("meta"):
            inside = [lib.zeros(2, 3), lib.ones(2), lib.empty(4), lib.full((2,), 1.0), lib.tensor([1.0, 2.0]),
                      lib.arange(3), lib.linspace(0, 1, 3), lib.eye(2), lib.nn.Linear(2, 3).weight]
            like = lib.zeros_like(lib.zeros(2, device="cpu"))  # *_like follows its input
        outside = lib.zeros(2)
        got = [t.device.type for t in inside] + [like.device.type, outside.device.type]
        if lib is torch:
            want = got
        else:
            assert got == want
    for lib in (torch, ember):  # entering a device ember cannot allocate on is fine; allocating fails
        with lib.device("cuda"), pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            lib.zeros(2)
