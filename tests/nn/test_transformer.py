"""Attention and the Transformer family against torch: F.scaled_dot_product_attention, MultiheadAttention,
the encoder/decoder layers and stacks, nn.Transformer with masks; outputs and all gradients from the same weights,
in train mode (dropout 0) and eval mode."""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check, to_ember, to_torch

import ember

pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
              pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask"),
              pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")]

RNG = np.random.default_rng(0)


def _randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _pair(cls, *args, seed=0, **kw):
    torch.manual_seed(seed)
    tmod = getattr(torch.nn, cls)(*args, **kw)
    emod = getattr(ember.nn, cls)(*args, **kw)
    emod.load_state_dict({k: to_ember(v.detach().numpy().copy()) for k, v in tmod.state_dict().items()})
    return emod, tmod


def _conv(lib, v):
    if isinstance(v, np.ndarray):
        return to_torch(v) if lib is torch else to_ember(v)
    return v


def _run_modules(emod, tmod, arrays, kwargs, train=True, atol=2e-5):
    """Forward both on the same inputs (float arrays require grad); compare outputs, input and param grads."""
    emod.train(train)
    tmod.train(train)
    outs = []
    for lib, mod in ((torch, tmod), (ember, emod)):
        ins = [_conv(lib, a).requires_grad_() if a.dtype.kind == "f" else _conv(lib, a) for a in arrays]
        out = mod(*ins, **{k: _conv(lib, v) for k, v in kwargs.items()})
        first = out[0] if isinstance(out, tuple) else out
        w = _conv(lib, np.cos(np.arange(first.numel())).reshape(tuple(first.shape)).astype(np.float32))
        loss = (first * w).sum()
        if isinstance(out, tuple) and out[1] is not None:
            loss = loss + (out[1] * out[1]).sum()
        loss.backward()
        outs.append((out, [i.grad for i in ins if i.dtype.is_floating_point],
                     [(n, p.grad) for n, p in mod.named_parameters()]))
    (t_out, t_g, t_p), (e_out, e_g, e_p) = outs
    assert_same(e_out, t_out, check_stride=False, atol=atol)
    assert_same(e_g, t_g, check_stride=False, atol=atol, path="input grads")
    assert [n for n, _ in e_p] == [n for n, _ in t_p]
    for (n, eg), (_, tg) in zip(e_p, t_p):
        if tg is None:
            assert eg is None, n
        else:
            assert_same(eg, tg, check_stride=False, atol=atol, path=f"grad of {n}")


# ---- scaled dot-product attention -------------------------------------------------------------------------

Q, K, V = _randn(2, 3, 4, 8), _randn(2, 3, 5, 8), _randn(2, 3, 5, 6)
BOOL_MASK = RNG.random((4, 5)) > 0.3
BOOL_MASK[:, 0] = True
FULLY_MASKED = BOOL_MASK.copy()
FULLY_MASKED[2] = False
FLOAT_MASK = _randn(2, 1, 4, 5)
SDPA = [
    ({}, (Q, K, V)),
    ({"is_causal": True}, (Q, K, V)),
    ({"is_causal": True}, (Q, Q, Q)),
    ({"scale": 0.3}, (Q, K, V)),
    ({"attn_mask": BOOL_MASK}, (Q, K, V)),
    ({"attn_mask": FULLY_MASKED}, (Q, K, V)),
    ({"attn_mask": FLOAT_MASK}, (Q, K, V)),
    ({"enable_gqa": True}, (_randn(2, 6, 4, 8), K, V)),
    ({}, (Q[0, 0], K[0, 0], V[0, 0])),
    ({}, (Q[0], K[0], V[0])),
    ({"dropout_p": 0.0, "attn_mask": BOOL_MASK, "scale": 2.0}, (Q.astype(np.float64), K.astype(np.float64),
                                                               V.astype(np.float64))),
]


@pytest.mark.parametrize("i", range(len(SDPA)))
def test_scaled_dot_product_attention(i):
    kw, arrays = SDPA[i]

    def fn(lib, q, k, v):
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, **{a: _conv(lib, b) for a, b in kw.items()})
    check(fn, *arrays, grad=True, atol=1e-5)


def test_sdpa_dropout():
    F = ember.nn.functional
    q, k, v = to_ember(Q), to_ember(K), to_ember(V)
    assert not F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy().any()
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, k, v)
    assert a.shape == b.shape and not np.allclose(a.numpy(), b.numpy())


SDPA_ERRORS = [
    lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=q.new_ones(4, 5).bool(), is_causal=True),
    lambda F, q, k, v: F.scaled_dot_product_attention(q, k[..., :7], v),
    lambda F, q, k, v: F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True),
    lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=q.new_ones(4, 5).long()),
    lambda F, q, k, v: F.scaled_dot_product_attention(q.double(), k, v),
    lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=q.new_zeros(3, 5)),
    lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=1.5),
]


@pytest.mark.parametrize("i", range(len(SDPA_ERRORS)))
def test_sdpa_errors(i):
    assert_same_error(lambda lib, *a: SDPA_ERRORS[i](lib.nn.functional, *a), Q, K, V)


# ---- MultiheadAttention -------------------------------------------------------------------------------------

KPM = np.zeros((3, 5), bool)
KPM[0, 3:] = True
CAUSAL = np.triu(np.ones((4, 5), bool), 1)
CAUSAL_F = np.where(CAUSAL, -np.inf, 0).astype(np.float32)
KPM_F = (KPM * -1e9).astype(np.float32)
MHA = [
    ({}, {}),
    ({"batch_first": True}, {"key_padding_mask": KPM}),
    ({"kdim": 6, "vdim": 3}, {"attn_mask": CAUSAL, "average_attn_weights": False}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {"attn_mask": CAUSAL_F, "key_padding_mask": KPM_F}),
    ({"bias": False, "num_heads": 4}, {"need_weights": False, "attn_mask": CAUSAL}),
    ({"num_heads": 4}, {"need_weights": False, "key_padding_mask": KPM}),
    ({"add_zero_attn": True}, {"attn_mask": np.repeat(CAUSAL[None], 6, 0), "need_weights": False}),
    ({"batch_first": True, "kdim": 5}, {"need_weights": False}),
]


@pytest.mark.parametrize("i", range(len(MHA)))
@pytest.mark.parametrize("train", [True, False])
def test_multihead_attention(i, train):
    ctor, call = MHA[i]
    ctor = {"num_heads": 2, **ctor}
    emod, tmod = _pair("MultiheadAttention", 8, ctor.pop("num_heads"), **ctor)
    bf = ctor.get("batch_first", False)

    def shp(n, d):
        return (3, n, d) if bf else (n, 3, d)
    arrays = [_randn(*shp(4, 8)), _randn(*shp(5, ctor.get("kdim", 8))), _randn(*shp(5, ctor.get("vdim", 8)))]
    _run_modules(emod, tmod, arrays, call, train=train)


@pytest.mark.parametrize("batch_first", [True, False])
def test_self_attention_eval_and_unbatched(batch_first):
    """Self-attention (query is key is value), torch's eval fast path included, and 2-D unbatched input."""
    emod, tmod = _pair("MultiheadAttention", 8, 2, batch_first=batch_first)
    x = _randn(3, 4, 8)
    kpm = KPM[:, :4] if batch_first else np.eye(4, 3, 2, dtype=bool)
    for train in (True, False):
        emod.train(train)
        tmod.train(train)
        with torch.no_grad(), ember.no_grad():
            assert_same(emod(*[to_ember(x)] * 3, key_padding_mask=to_ember(kpm))[0],
                        tmod(*[to_torch(x)] * 3, key_padding_mask=to_torch(kpm))[0], atol=2e-5,
                        check_stride=train)  # torch's eval fast path returns a contiguous copy
    emod.train()
    tmod.train()
    _run_modules(emod, tmod, [x[0], x[1], x[2]], {"attn_mask": CAUSAL[:, :4]})


MHA_ERRORS = [
    lambda nn, x: nn.MultiheadAttention(8, 3),
    lambda nn, x: nn.MultiheadAttention(0, 2),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x, x, attn_mask=x.new_zeros(3, 3)),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x, x, attn_mask=x.new_zeros(5, 4, 4)),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x, x, key_padding_mask=x.new_zeros(2, 4)),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x, x, key_padding_mask=x.new_zeros(3, 4).long()),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x[0], x),
    lambda nn, x: nn.MultiheadAttention(4, 2)(x, x, x),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x, x[:2]),
    lambda nn, x: nn.MultiheadAttention(8, 2)(x, x, x, is_causal=True),
]


@pytest.mark.parametrize("i", range(len(MHA_ERRORS)))
def test_multihead_attention_errors(i):
    assert_same_error(lambda lib, x: MHA_ERRORS[i](lib.nn, x), _randn(4, 3, 8))


def test_multi_head_attention_forward_static_kv():
    def fn(lib, q, w, b, ow, ob, sk, sv):
        return lib.nn.functional.multi_head_attention_forward(q, q, q, 8, 2, w, b, None, None, False, 0.0, ow, ob,
                                                              static_k=sk, static_v=sv)
    check(fn, _randn(4, 3, 8), _randn(24, 8), _randn(24), _randn(8, 8), _randn(8), _randn(6, 7, 4), _randn(6, 7, 4),
          grad=True, atol=1e-5)


# ---- the Transformer family --------------------------------------------------------------------------------


LAYERS = [(norm_first, act, bf) for norm_first in (False, True) for act in ("relu", "gelu", "callable")
          for bf in (False, True)]


def _act(lib, act):
    return (lambda x: lib.tanh(x) * 2) if act == "callable" else act


@pytest.mark.parametrize("norm_first,act,batch_first", LAYERS)
@pytest.mark.parametrize("train", [True, False])
def test_encoder_and_decoder_layers(norm_first, act, batch_first, train):
    kw = dict(dim_feedforward=16, dropout=0.0 if train else 0.1, batch_first=batch_first, norm_first=norm_first)
    torch.manual_seed(0)
    t_enc = torch.nn.TransformerEncoderLayer(8, 2, activation=_act(torch, act), **kw)
    e_enc = ember.nn.TransformerEncoderLayer(8, 2, activation=_act(ember, act), **kw)
    e_enc.load_state_dict({k: to_ember(v.numpy().copy()) for k, v in t_enc.state_dict().items()})
    x = _randn(3, 4, 8) if batch_first else _randn(4, 3, 8)
    causal = np.triu(np.ones((4, 4), bool), 1)
    _run_modules(e_enc, t_enc, [x], {"src_mask": causal, "src_key_padding_mask": KPM[:, :4]}, train=train)
    t_dec = torch.nn.TransformerDecoderLayer(8, 2, activation=_act(torch, act), **kw)
    e_dec = ember.nn.TransformerDecoderLayer(8, 2, activation=_act(ember, act), **kw)
    e_dec.load_state_dict({k: to_ember(v.numpy().copy()) for k, v in t_dec.state_dict().items()})
    mem = _randn(3, 5, 8) if batch_first else _randn(5, 3, 8)
    _run_modules(e_dec, t_dec, [x, mem], {"tgt_mask": causal, "memory_key_padding_mask": KPM, "tgt_is_causal": True},
                 train=train)


@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_eval_padding_as_nested(batch_first):
    """torch's eval-mode encoder zeroes padded positions (nested tensors) when it can; so does ember."""
    torch.manual_seed(0)
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first)
    e_layer = ember.nn.TransformerEncoderLayer(8, 2, 16, batch_first=batch_first)
    t = torch.nn.TransformerEncoder(t_layer, 2, torch.nn.LayerNorm(8))
    e = ember.nn.TransformerEncoder(e_layer, 2, ember.nn.LayerNorm(8))
    e.load_state_dict({k: to_ember(v.numpy().copy()) for k, v in t.state_dict().items()})
    t.eval()
    e.eval()
    x = _randn(3, 4, 8) if batch_first else _randn(4, 3, 8)
    kpm = np.zeros((3, 4), bool)
    kpm[0, 2:] = True
    kpm[2, 3:] = True
    with torch.no_grad(), ember.no_grad():
        assert_same(e(to_ember(x), src_key_padding_mask=to_ember(kpm)),
                    t(to_torch(x), src_key_padding_mask=to_torch(kpm)), atol=2e-5)
    _run_modules(e, t, [x], {"src_key_padding_mask": kpm}, train=False)


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_with_masks(train, batch_first):
    emod, tmod = _pair("Transformer", d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                       dim_feedforward=16, dropout=0.0 if train else 0.1, batch_first=batch_first)
    assert list(emod.state_dict()) == list(tmod.state_dict())
    src, tgt = (_randn(3, 5, 8), _randn(3, 4, 8)) if batch_first else (_randn(5, 3, 8), _randn(4, 3, 8))
    tgt_mask = ember.nn.Transformer.generate_square_subsequent_mask(4).numpy()
    assert_same(ember.nn.Transformer.generate_square_subsequent_mask(4),
                torch.nn.Transformer.generate_square_subsequent_mask(4))
    kw = {"tgt_mask": tgt_mask, "src_key_padding_mask": KPM, "tgt_key_padding_mask": KPM[:, :4],
          "memory_key_padding_mask": KPM}
    _run_modules(emod, tmod, [src, tgt], kw, train=train, atol=5e-5)


def test_transformer_dropout_masks_follow_torch_seed():
    emod, tmod = _pair("Transformer", d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                       dim_feedforward=16, dropout=0.3)
    src, tgt = _randn(5, 3, 8), _randn(4, 3, 8)
    torch.manual_seed(5)
    ember.manual_seed(5)
    assert_same(emod(to_ember(src), to_ember(tgt)), tmod(to_torch(src), to_torch(tgt)), atol=2e-5)


TRANSFORMER_ERRORS = [
    lambda nn, x: nn.Transformer(8, 2, 1, 1, 16)(x, x[:, :2]),
    lambda nn, x: nn.Transformer(6, 2, 1, 1, 16)(x, x),
    lambda nn, x: nn.TransformerEncoderLayer(8, 2, 16, activation="tanh"),
    lambda nn, x: nn.TransformerEncoderLayer(8, 2, 16)(x, src_key_padding_mask=x.new_zeros(3, 4).long()),
]


@pytest.mark.parametrize("i", range(len(TRANSFORMER_ERRORS)))
def test_transformer_errors(i):
    assert_same_error(lambda lib, x: TRANSFORMER_ERRORS[i](lib.nn, x), _randn(4, 3, 8))


def test_nested_tensor_warning_and_causal_detection():
    with pytest.warns(UserWarning, match="self_attn.batch_first was not True"):
        ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(8, 2, 16), 1)
    from ember.nn.modules.transformer import _detect_is_causal_mask

    m = ember.nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(m) and not _detect_is_causal_mask(m * 0) and _detect_is_causal_mask(None, True)
