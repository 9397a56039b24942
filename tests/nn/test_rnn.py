"""nn.RNN / LSTM / GRU, the cells and nn.utils.rnn against torch: outputs, hidden states, input, state and all
parameter gradients from the same weights (torch's state_dict loaded into ember), for every configuration."""

import itertools

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, to_ember, to_torch

import ember

pytestmark = [pytest.mark.filterwarnings("ignore:LSTM with projections"),
              pytest.mark.filterwarnings("ignore:dropout option adds dropout")]

RNG = np.random.default_rng(0)


def _pair(cls, seed=0, **kw):
    torch.manual_seed(seed)
    tmod = getattr(torch.nn, cls)(**kw)
    emod = getattr(ember.nn, cls)(**kw)
    emod.load_state_dict({k: to_ember(v.detach().numpy().copy()) for k, v in tmod.state_dict().items()})
    return emod, tmod


def _flat(x):
    if isinstance(x, (tuple, list)):
        for v in x:
            yield from _flat(v)
    elif x is not None:
        yield x


def _compare_grads(emod, tmod, e_out, t_out, e_in, t_in):
    """Backward a fixed weighting of every float output; compare input and all parameter gradients."""
    t_loss = e_loss = 0
    for k, (eo, to) in enumerate(zip(_flat(e_out), _flat(t_out))):
        if to.dtype.is_floating_point and to.requires_grad:
            w = np.cos(np.arange(to.numel()) + k).reshape(tuple(to.shape)).astype(to.detach().numpy().dtype)
            t_loss = t_loss + (to * to_torch(w)).sum()
            e_loss = e_loss + (eo * to_ember(w)).sum()
    t_loss.backward()
    e_loss.backward()
    for i, (ei, ti) in enumerate(zip(e_in, t_in)):
        if isinstance(ti, torch.Tensor) and ti.requires_grad:
            assert_same(ei.grad, ti.grad, check_stride=False, path=f"grad of input {i}", atol=2e-5)
    tp = dict(tmod.named_parameters())
    assert [n for n, _ in emod.named_parameters()] == list(tp)
    for n, p in emod.named_parameters():
        assert_same(p.grad, tp[n].grad, check_stride=False, path=f"grad of {n}", atol=2e-5)


# ---- the recurrent layers, every configuration -------------------------------------------------------------

MODES = [("RNN", {"nonlinearity": "tanh"}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {}),
         ("LSTM", {"proj_size": 3})]
CONFIGS = list(itertools.product(range(len(MODES)), (1, 2), (False, True), (False, True),
                                 ("padded", "packed", "unsorted")))


def _run(lib, mod, cls, x, lens, hx, batch_first, kind):
    if kind == "padded":
        return mod(x, hx)
    U = torch.nn.utils.rnn if lib is torch else ember.nn.utils.rnn
    packed = U.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=kind == "packed")
    out, h = mod(packed, hx)
    padded, lengths = U.pad_packed_sequence(out, batch_first=batch_first)
    return (out.data, out.batch_sizes, out.sorted_indices, out.unsorted_indices), padded, lengths, h


@pytest.mark.parametrize("mode,layers,bidirectional,batch_first,kind", CONFIGS)
def test_recurrent_layer_matches_torch(mode, layers, bidirectional, batch_first, kind):
    cls, extra = MODES[mode]
    H, T, B, F = 5, 4, 3, 4
    emod, tmod = _pair(cls, input_size=F, hidden_size=H, num_layers=layers, bidirectional=bidirectional,
                       batch_first=batch_first, **extra)
    x = RNG.standard_normal((B, T, F) if batch_first else (T, B, F)).astype(np.float32)
    lens = [4, 3, 1] if kind == "packed" else [2, 4, 3]
    D = 2 if bidirectional else 1
    with_state = (layers + bidirectional) % 2 == 0  # half of the cases pass initial states
    h0 = RNG.standard_normal((layers * D, B, extra.get("proj_size") or H)).astype(np.float32)
    c0 = RNG.standard_normal((layers * D, B, H)).astype(np.float32)
    arrays = [x] + ([h0, c0] if cls == "LSTM" else [h0] if with_state else [])
    if cls == "LSTM" and not with_state:
        arrays = [x]
    t_in = [to_torch(a, True) for a in arrays]
    e_in = [to_ember(a, True) for a in arrays]

    def hx(ins):
        if len(ins) == 1:
            return None
        return tuple(ins[1:]) if cls == "LSTM" else ins[1]
    t_out = _run(torch, tmod, cls, t_in[0], lens, hx(t_in), batch_first, kind)
    e_out = _run(ember, emod, cls, e_in[0], lens, hx(e_in), batch_first, kind)
    assert_same(e_out, t_out, check_stride=kind == "padded", atol=2e-5)
    _compare_grads(emod, tmod, e_out, t_out, e_in, t_in)


@pytest.mark.parametrize("cls,kw", [("LSTM", {"bias": False}), ("GRU", {"bias": False}),
                                    ("RNN", {"bias": False, "nonlinearity": "relu"}),
                                    ("LSTM", {"bias": False, "proj_size": 2, "bidirectional": True})])
def test_without_bias(cls, kw):
    emod, tmod = _pair(cls, input_size=3, hidden_size=4, num_layers=2, **kw)
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    e_in, t_in = [to_ember(x, True)], [to_torch(x, True)]
    e_out, t_out = emod(e_in[0]), tmod(t_in[0])
    assert_same(e_out, t_out)
    _compare_grads(emod, tmod, e_out, t_out, e_in, t_in)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_input(cls, batch_first, with_state):
    emod, tmod = _pair(cls, input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=batch_first)
    arrays = [RNG.standard_normal((5, 3)).astype(np.float32)]
    if with_state:
        arrays += [RNG.standard_normal((4, 4)).astype(np.float32) for _ in range(2 if cls == "LSTM" else 1)]
    e_in, t_in = [to_ember(a, True) for a in arrays], [to_torch(a, True) for a in arrays]
    state = (lambda ins: None if len(ins) == 1 else tuple(ins[1:]) if cls == "LSTM" else ins[1])
    e_out, t_out = emod(e_in[0], state(e_in)), tmod(t_in[0], state(t_in))
    assert_same(e_out, t_out)
    _compare_grads(emod, tmod, e_out, t_out, e_in, t_in)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_dropout_between_layers_train_and_eval(cls):
    """Eval mode ignores dropout; in train mode the masks are torch's under the same seed."""
    emod, tmod = _pair(cls, input_size=3, hidden_size=6, num_layers=3, dropout=0.4)
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    for train in (False, True):
        emod.train(train)
        tmod.train(train)
        e_in, t_in = [to_ember(x, True)], [to_torch(x, True)]
        torch.manual_seed(11)
        ember.manual_seed(11)
        e_out, t_out = emod(e_in[0]), tmod(t_in[0])
        assert_same(e_out, t_out)
        emod.zero_grad()
        tmod.zero_grad()
        _compare_grads(emod, tmod, e_out, t_out, e_in, t_in)


def test_float64_and_double_backward():
    emod, tmod = _pair("LSTM", input_size=3, hidden_size=4, num_layers=2, bidirectional=True)
    emod.double()
    tmod.double()
    x = RNG.standard_normal((4, 2, 3))
    e_x, t_x = to_ember(x, True), to_torch(x, True)
    e_out, t_out = emod(e_x), tmod(t_x)
    assert_same(e_out, t_out)
    grads = []
    for lib, out, xin, mod in ((torch, t_out, t_x, tmod), (ember, e_out, e_x, emod)):
        w = mod.weight_hh_l1_reverse
        gx, gw = lib.autograd.grad((out[0] ** 2).sum(), (xin, w), create_graph=True)
        second = lib.autograd.grad((gx ** 2).sum() + gw.sum(), (xin, w))
        grads.append((gx, gw) + tuple(second))
    assert_same(grads[1], grads[0], check_stride=False)


def test_state_dict_names_shapes_and_default_init():
    torch.manual_seed(4)
    ember.manual_seed(4)
    t = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    e = ember.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    assert list(e.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        assert_same(e.state_dict()[k], v)  # torch's uniform(-1/sqrt(H), 1/sqrt(H)) from the same generator
    assert [[p.shape for p in ws] for ws in e.all_weights] == [[p.shape for p in ws] for ws in t.all_weights]
    assert repr(e) == repr(t)
    for cls in ("RNNCell", "LSTMCell", "GRUCell"):
        torch.manual_seed(4)
        ember.manual_seed(4)
        t, e = getattr(torch.nn, cls)(3, 4), getattr(ember.nn, cls)(3, 4)
        assert list(e.state_dict()) == list(t.state_dict()) and repr(e) == repr(t)
        for k, v in t.state_dict().items():
            assert_same(e.state_dict()[k], v)


# ---- cells ---------------------------------------------------------------------------------------------------

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}), ("GRUCell", {}),
         ("LSTMCell", {"bias": False}), ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("cell,kw", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells(cell, kw, batched, with_state):
    emod, tmod = _pair(cell, input_size=3, hidden_size=4, **kw)
    lead = (2,) if batched else ()
    arrays = [RNG.standard_normal(lead + (3,)).astype(np.float32)]
    if with_state:
        arrays += [RNG.standard_normal(lead + (4,)).astype(np.float32) for _ in range(2 if cell == "LSTMCell" else 1)]
    e_in, t_in = [to_ember(a, True) for a in arrays], [to_torch(a, True) for a in arrays]
    state = (lambda ins: None if len(ins) == 1 else tuple(ins[1:]) if cell == "LSTMCell" else ins[1])
    e_out, t_out = emod(e_in[0], state(e_in)), tmod(t_in[0], state(t_in))
    assert_same(e_out, t_out)
    _compare_grads(emod, tmod, e_out, t_out, e_in, t_in)


def test_cell_unrolled_equals_layer():
    """An LSTMCell stepped by hand gives the LSTM layer's output (same weights)."""
    layer = ember.nn.LSTM(3, 4)
    cell = ember.nn.LSTMCell(3, 4)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = to_ember(RNG.standard_normal((5, 2, 3)).astype(np.float32))
    h = c = ember.zeros(2, 4)
    outs = []
    for t in range(5):
        h, c = cell(x[t], (h, c))
        outs.append(h)
    out, (hn, cn) = layer(x)
    np.testing.assert_allclose(ember.stack(outs).detach().numpy(), out.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cn[0].detach().numpy(), c.detach().numpy(), rtol=1e-5, atol=1e-6)


# ---- errors --------------------------------------------------------------------------------------------------

X3 = np.zeros((5, 2, 3), np.float32)
ERRORS = [
    (lambda nn, x: nn.LSTM(4, 5)(x), X3),
    (lambda nn, x: nn.GRU(3, 5)(x, x.new_zeros(1, 3, 5)), X3),
    (lambda nn, x: nn.RNN(3, 5)(x, x.new_zeros(2, 2, 5)), X3),
    (lambda nn, x: nn.LSTM(3, 5)(x, (x.new_zeros(1, 2, 5), x.new_zeros(1, 2, 4))), X3),
    (lambda nn, x: nn.LSTM(3, 5)(x, (x.new_zeros(2, 5), x.new_zeros(2, 5))), X3),
    (lambda nn, x: nn.GRU(3, 5)(x[0], x.new_zeros(1, 2, 5)), X3),
    (lambda nn, x: nn.RNN(3, 5)(x, x.new_zeros(2, 5)), X3),
    (lambda nn, x: nn.GRU(3, 5)(x.unsqueeze(0)), X3),
    (lambda nn, x: nn.LSTM(3, 5)(x.unsqueeze(0)), X3),
    (lambda nn, x: nn.RNN(3, 5)(x[0, 0]), X3),
    (lambda nn, x: nn.LSTM(3, 5)(x.double()), X3),
    (lambda nn, x: nn.LSTM(3, 5, proj_size=5), X3),
    (lambda nn, x: nn.LSTM(3, 5, proj_size=-1), X3),
    (lambda nn, x: nn.GRU(3, 5, proj_size=2), X3),
    (lambda nn, x: nn.RNN(3, 5, nonlinearity="gelu"), X3),
    (lambda nn, x: nn.LSTM(3, 5, dropout=1.5), X3),
    (lambda nn, x: nn.LSTM(3, 0), X3),
    (lambda nn, x: nn.LSTM(3, 5, num_layers=0), X3),
    (lambda nn, x: nn.LSTM(3, 5, bias=1), X3),
    (lambda nn, x: nn.LSTMCell(3, 5)(x), X3),
    (lambda nn, x: nn.GRUCell(4, 5)(x[0]), X3),
    (lambda nn, x: nn.RNNCell(3, 5)(x[0], x.new_zeros(3, 5)), X3),
    (lambda nn, x: nn.RNNCell(3, 5)(x[0], x.new_zeros(2, 4)), X3),
    (lambda nn, x: nn.LSTMCell(3, 5)(x[0], (x.new_zeros(2, 5), x.new_zeros(2, 5, 1))), X3),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    fn, x = ERRORS[i]
    assert_same_error(lambda lib, x: fn(lib.nn, x), x)


# ---- nn.utils.rnn ----------------------------------------------------------------------------------------------


def _U(lib):
    return lib.nn.utils.rnn


SEQS = [RNG.standard_normal((n, 2)).astype(np.float32) for n in (2, 4, 1, 4)]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    from compare import check

    check(lambda lib, *s: _U(lib).pad_sequence(list(s), batch_first=batch_first, padding_value=-1.5,
                                              padding_side=side), *SEQS, grad=True)
    # later sequences broadcast into the first one's trailing shape, as torch copies them
    check(lambda lib, a, b: _U(lib).pad_sequence([a, b[:, :1]], batch_first=batch_first), SEQS[0], SEQS[1], grad=True)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_pad_roundtrip(batch_first, enforce_sorted):
    from compare import check

    seqs = sorted(SEQS, key=len, reverse=True) if enforce_sorted else SEQS

    def fn(lib, *s):
        U = _U(lib)
        padded = U.pad_sequence(list(s), batch_first=batch_first)
        lens = [len(v) for v in s]
        p = U.pack_padded_sequence(padded, lib.tensor(lens), batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, lengths = U.pad_packed_sequence(p, batch_first=batch_first, padding_value=7.0, total_length=6)
        packed = U.pack_sequence(list(s), enforce_sorted=enforce_sorted)
        return tuple(p), tuple(packed), out, lengths, U.unpack_sequence(packed)
    check(fn, *seqs, grad=True)


def test_unpad_sequence_and_packed_sequence_api():
    from compare import check

    def fn(lib, *s):
        U = _U(lib)
        padded = U.pad_sequence(list(s)).clone()
        return U.unpad_sequence(padded, lib.tensor([len(v) for v in s]))
    check(fn, *SEQS, grad=True)
    p = _U(ember).pack_sequence([to_ember(s) for s in SEQS], enforce_sorted=False)
    assert type(p).__name__ == "PackedSequence" and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                                  "unsorted_indices")
    assert p.double().data.dtype == ember.float64 and p.to(ember.float32) is p
    assert_same(_U(ember).invert_permutation(ember.tensor([2, 0, 1])),
                _U(torch).invert_permutation(torch.tensor([2, 0, 1])))


PACK_ERRORS = [
    lambda lib, x: _U(lib).pack_padded_sequence(x, [4, 1, 2]),
    lambda lib, x: _U(lib).pack_padded_sequence(x, [4, 2]),
    lambda lib, x: _U(lib).pack_padded_sequence(x, [4, 2, 0]),
    lambda lib, x: _U(lib).pack_padded_sequence(x, lib.tensor([[4, 2, 1]])),
    lambda lib, x: _U(lib).pad_packed_sequence(_U(lib).pack_padded_sequence(x, [4, 2, 1]), total_length=2),
    lambda lib, x: _U(lib).pad_sequence([]),
    lambda lib, x: _U(lib).pad_sequence([x[0, :, :1], x[0]]),
    lambda lib, x: _U(lib).pad_sequence([x[0], x[0].unsqueeze(-1)]),
    lambda lib, x: _U(lib).pad_sequence([x[0]], padding_side="middle"),
]


@pytest.mark.parametrize("i", range(len(PACK_ERRORS)))
def test_packing_errors(i):
    assert_same_error(PACK_ERRORS[i], np.zeros((4, 3, 2), np.float32))
