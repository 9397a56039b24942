"""nn layers, functionals, losses and an optimizer step run on the meta device (issue 17: `device="meta"` works
for the whole op table, nn layers included), held to torch on meta.

Each row builds a layer on meta in both libraries (the same seed, so dropout masks and initialisations draw
alike), runs its forward on meta inputs and, where the row asks, its backward (with `empty_like` output
gradients, so no reduction is needed to start it), and compares every output's shape, dtype, strides and
device, then the shape and dtype of every gradient the backward left on parameters and inputs. Where torch
refuses (an error on meta), ember must raise the same class; where torch has no meta kernel
(`NotImplementedError`) and ember runs, ember's meta run is held to ember's own kernel on real data instead,
as tests/ops/test_meta.py does.
"""

import numpy as np
import pytest
import torch

import ember

# an input spec: (kind, shape[, high]). "f" float32 (requires grad when the row runs backward), "n" float32
# that never requires grad, "p" float32 in (0, 1) (probabilities), "i" int64 in [0, high) (default 3),
# "d" float64


def _array(rng, spec):
    kind, shape = spec[0], spec[1]
    if kind == "i":
        return rng.integers(0, spec[2] if len(spec) > 2 else 3, shape).astype(np.int64)
    if kind == "p":
        return rng.uniform(0.05, 0.95, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float64 if kind == "d" else np.float32)


def _desc(t):
    if isinstance(t, (ember.Tensor, torch.Tensor)):
        return (tuple(t.shape), str(t.dtype).split(".")[-1], t.stride(), t.device.type)
    return type(t).__name__


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(lib, row, device):
    """(forward outcome, backward outcome) of `row` in `lib` on `device`: descriptions, or error classes."""
    _, build, specs, call, backward = row
    rng = np.random.default_rng(0)
    arrays = [_array(rng, s) for s in specs]
    lib.manual_seed(0)
    try:
        module = build(lib.nn) if build is not None else None
        if module is not None:
            module.to(device)
        inputs = [lib.from_numpy(a).to(device) for a in arrays]
        for t, s in zip(inputs, specs):
            if backward and s[0] in "fd":
                t.requires_grad_()
        out = call(lib, module, *inputs)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, None
    fwd = [_desc(t) for t in _flat(out)]
    if not backward:
        return fwd, None
    outs = [t for t in _flat(out) if isinstance(t, (ember.Tensor, torch.Tensor)) and t.requires_grad]
    try:
        lib.autograd.backward(outs, [lib.empty_like(t) for t in outs])
    except Exception as e:  # noqa: BLE001
        return fwd, type(e).__name__
    leaves = (list(module.named_parameters()) if module is not None else []) + \
        [(f"input{i}", t) for i, t in enumerate(inputs) if t.requires_grad]
    return fwd, [(name, None if t.grad is None else _desc(t.grad)[:2] + _desc(t.grad)[3:]) for name, t in leaves]


def _on_meta(desc):
    """An outcome of a run on the CPU as the same run on meta would describe it."""
    if isinstance(desc, tuple) and desc and desc[-1] == "cpu":
        return desc[:-1] + ("meta",)
    if isinstance(desc, (tuple, list)):
        return type(desc)(_on_meta(d) for d in desc)
    return desc


def _held(e_meta, e_real, t_meta, what, name):
    """ember's meta outcome against torch's meta one, or against ember's kernel where torch has no meta
    kernel."""
    if t_meta == "NotImplementedError" and e_meta != t_meta:
        assert e_meta == _on_meta(e_real), f"{name} {what}: ember meta {e_meta} != ember kernel {e_real}"
    else:
        assert e_meta == t_meta, f"{name} {what}: ember {e_meta} != torch {t_meta}"


F = ("f", (2, 3))
IMG = ("f", (2, 3, 6, 6))

# (id, build(nn) or None, input specs, call(lib, module, *inputs), run backward)
ROWS = [
    # linear and convolution layers
    ("linear", lambda nn: nn.Linear(3, 4), [("f", (2, 5, 3))], lambda L, m, x: m(x), True),
    ("linear_bad", lambda nn: nn.Linear(3, 4), [("f", (2, 5))], lambda L, m, x: m(x), False),
    ("bilinear", lambda nn: nn.Bilinear(2, 3, 4), [("f", (5, 2)), ("f", (5, 3))], lambda L, m, x, y: m(x, y),
     True),
    ("conv1d", lambda nn: nn.Conv1d(2, 4, 3, stride=2, padding=1), [("f", (2, 2, 7))], lambda L, m, x: m(x),
     True),
    ("conv2d", lambda nn: nn.Conv2d(3, 4, 3, padding=1, dilation=2), [IMG], lambda L, m, x: m(x), True),
    ("conv2d_groups", lambda nn: nn.Conv2d(4, 6, 3, stride=2, groups=2, bias=False), [("f", (1, 4, 7, 7))],
     lambda L, m, x: m(x), True),
    ("conv2d_same", lambda nn: nn.Conv2d(3, 2, (3, 2), padding="same"), [IMG], lambda L, m, x: m(x), True),
    ("conv2d_unbatched", lambda nn: nn.Conv2d(3, 2, 3), [("f", (3, 5, 5))], lambda L, m, x: m(x), True),
    ("conv2d_bad_channels", lambda nn: nn.Conv2d(4, 2, 3), [IMG], lambda L, m, x: m(x), False),
    ("conv2d_too_small", lambda nn: nn.Conv2d(3, 2, 7), [IMG], lambda L, m, x: m(x), False),
    ("conv3d", lambda nn: nn.Conv3d(2, 3, 2, padding=(1, 0, 0)), [("f", (1, 2, 4, 4, 4))], lambda L, m, x: m(x),
     True),
    ("conv_transpose1d", lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2, output_padding=1),
     [("f", (2, 2, 5))], lambda L, m, x: m(x), True),
    ("conv_transpose2d", lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, groups=2),
     [("f", (1, 4, 5, 5))], lambda L, m, x: m(x), True),
    ("conv_transpose3d", lambda nn: nn.ConvTranspose3d(2, 2, 2, dilation=2), [("f", (1, 2, 3, 3, 3))],
     lambda L, m, x: m(x), True),
    ("conv_transpose2d_output_size", lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2), [IMG],
     lambda L, m, x: m(x, output_size=(14, 14)), True),
    # pooling
    ("max_pool1d", lambda nn: nn.MaxPool1d(2), [("f", (2, 3, 7))], lambda L, m, x: m(x), True),
    ("max_pool2d_indices", lambda nn: nn.MaxPool2d(3, 2, padding=1, return_indices=True), [IMG],
     lambda L, m, x: m(x), True),
    ("max_pool2d_ceil", lambda nn: nn.MaxPool2d(2, ceil_mode=True, dilation=2), [("f", (2, 3, 7, 7))],
     lambda L, m, x: m(x), True),
    ("max_pool3d", lambda nn: nn.MaxPool3d(2, return_indices=True), [("f", (1, 2, 4, 4, 5))],
     lambda L, m, x: m(x), True),
    ("max_pool2d_bad_padding", lambda nn: nn.MaxPool2d(2, padding=2), [IMG], lambda L, m, x: m(x), False),
    ("avg_pool1d", lambda nn: nn.AvgPool1d(3, 2, padding=1), [("f", (2, 3, 7))], lambda L, m, x: m(x), True),
    ("avg_pool2d", lambda nn: nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False), [IMG],
     lambda L, m, x: m(x), True),
    ("avg_pool3d", lambda nn: nn.AvgPool3d(2, divisor_override=3), [("f", (1, 2, 4, 4, 4))],
     lambda L, m, x: m(x), True),
    ("adaptive_avg_pool1d", lambda nn: nn.AdaptiveAvgPool1d(4), [("f", (2, 3, 7))], lambda L, m, x: m(x), True),
    ("adaptive_avg_pool2d", lambda nn: nn.AdaptiveAvgPool2d((4, None)), [IMG], lambda L, m, x: m(x), True),
    ("adaptive_avg_pool3d", lambda nn: nn.AdaptiveAvgPool3d(2), [("f", (1, 2, 4, 4, 5))], lambda L, m, x: m(x),
     True),
    ("adaptive_max_pool1d", lambda nn: nn.AdaptiveMaxPool1d(3, return_indices=True), [("f", (2, 3, 7))],
     lambda L, m, x: m(x), True),
    ("adaptive_max_pool2d", lambda nn: nn.AdaptiveMaxPool2d(4, return_indices=True), [IMG],
     lambda L, m, x: m(x), True),
    ("lp_pool2d", lambda nn: nn.LPPool2d(2, 2), [IMG], lambda L, m, x: m(x), True),
    # normalization
    ("batch_norm1d_train", lambda nn: nn.BatchNorm1d(3), [("f", (4, 3, 5))], lambda L, m, x: (m(x), m.running_mean,
                                                                                           m.running_var), True),
    ("batch_norm2d_train", lambda nn: nn.BatchNorm2d(3), [IMG], lambda L, m, x: m(x), True),
    ("batch_norm2d_eval", lambda nn: nn.BatchNorm2d(3).eval(), [IMG], lambda L, m, x: m(x), True),
    ("batch_norm3d_no_stats", lambda nn: nn.BatchNorm3d(2, track_running_stats=False, affine=False),
     [("f", (2, 2, 3, 3, 3))], lambda L, m, x: m(x), True),
    ("batch_norm_bad", lambda nn: nn.BatchNorm2d(4), [IMG], lambda L, m, x: m(x), False),
    ("layer_norm", lambda nn: nn.LayerNorm((3, 4)), [("f", (2, 3, 4))], lambda L, m, x: m(x), True),
    ("layer_norm_bad", lambda nn: nn.LayerNorm(5), [("f", (2, 3, 4))], lambda L, m, x: m(x), False),
    ("group_norm", lambda nn: nn.GroupNorm(2, 4), [("f", (2, 4, 3, 3))], lambda L, m, x: m(x), True),
    ("instance_norm1d", lambda nn: nn.InstanceNorm1d(3, affine=True), [("f", (2, 3, 5))], lambda L, m, x: m(x),
     True),
    ("instance_norm2d_stats", lambda nn: nn.InstanceNorm2d(3, track_running_stats=True), [IMG],
     lambda L, m, x: (m(x), m.running_mean), True),
    ("instance_norm2d_eval", lambda nn: nn.InstanceNorm2d(3, track_running_stats=True).eval(), [IMG],
     lambda L, m, x: m(x), True),
    ("local_response_norm", lambda nn: nn.LocalResponseNorm(2), [IMG], lambda L, m, x: m(x), True),
    ("rms_norm", lambda nn: nn.RMSNorm(4), [("f", (2, 3, 4))], lambda L, m, x: m(x), True),
    # embeddings
    ("embedding", lambda nn: nn.Embedding(5, 3, padding_idx=0), [("i", (2, 4), 5)], lambda L, m, i: m(i), True),
    ("embedding_bag", lambda nn: nn.EmbeddingBag(5, 3, mode="mean"), [("i", (2, 4), 5)], lambda L, m, i: m(i),
     True),
    ("embedding_bag_offsets", lambda nn: nn.EmbeddingBag(5, 3, mode="sum"), [("i", (6,), 5), ("i", (2,), 1)],
     lambda L, m, i, o: m(i, o), True),
    # dropout family (training and eval)
    ("dropout", lambda nn: nn.Dropout(0.3), [F], lambda L, m, x: m(x), True),
    ("dropout_eval", lambda nn: nn.Dropout(0.3).eval(), [F], lambda L, m, x: m(x), True),
    ("dropout2d", lambda nn: nn.Dropout2d(0.3), [IMG], lambda L, m, x: m(x), True),
    ("dropout1d", lambda nn: nn.Dropout1d(0.3), [("f", (2, 3, 5))], lambda L, m, x: m(x), True),
    ("dropout3d", lambda nn: nn.Dropout3d(0.3), [("f", (1, 2, 3, 3, 3))], lambda L, m, x: m(x), True),
    ("alpha_dropout", lambda nn: nn.AlphaDropout(0.3), [F], lambda L, m, x: m(x), True),
    ("feature_alpha_dropout", lambda nn: nn.FeatureAlphaDropout(0.3), [IMG], lambda L, m, x: m(x), True),
    # recurrent layers
    ("rnn_tanh", lambda nn: nn.RNN(3, 4, num_layers=2), [("f", (5, 2, 3))], lambda L, m, x: m(x), True),
    ("rnn_relu_batch_first", lambda nn: nn.RNN(3, 4, nonlinearity="relu", batch_first=True),
     [("f", (2, 5, 3)), ("f", (1, 2, 4))], lambda L, m, x, h: m(x, h), True),
    ("lstm", lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), [("f", (5, 2, 3))],
     lambda L, m, x: m(x), True),
    ("lstm_proj", lambda nn: nn.LSTM(3, 4, proj_size=2, batch_first=True), [("f", (2, 5, 3))],
     lambda L, m, x: m(x), True),
    ("lstm_unbatched", lambda nn: nn.LSTM(3, 4), [("f", (5, 3))], lambda L, m, x: m(x), True),
    ("gru", lambda nn: nn.GRU(3, 4, bidirectional=True), [("f", (5, 2, 3))], lambda L, m, x: m(x), True),
    ("rnn_bad_input", lambda nn: nn.GRU(3, 4), [("f", (5, 2, 4))], lambda L, m, x: m(x), False),
    ("rnn_cell", lambda nn: nn.RNNCell(3, 4), [("f", (2, 3))], lambda L, m, x: m(x), True),
    ("lstm_cell", lambda nn: nn.LSTMCell(3, 4), [("f", (2, 3))], lambda L, m, x: m(x), True),
    ("gru_cell", lambda nn: nn.GRUCell(3, 4), [("f", (2, 3)), ("f", (2, 4))], lambda L, m, x, h: m(x, h), True),
    # attention and transformers
    ("multihead_attention", lambda nn: nn.MultiheadAttention(4, 2), [("f", (3, 2, 4)), ("f", (5, 2, 4))],
     lambda L, m, q, kv: m(q, kv, kv), True),
    ("multihead_attention_batch_first", lambda nn: nn.MultiheadAttention(4, 2, batch_first=True, kdim=3,
                                                                         vdim=5),
     [("f", (2, 3, 4)), ("f", (2, 6, 3)), ("f", (2, 6, 5))],
     lambda L, m, q, k, v: m(q, k, v, average_attn_weights=False), True),
    ("transformer_encoder_layer", lambda nn: nn.TransformerEncoderLayer(8, 2, 16), [("f", (5, 2, 8))],
     lambda L, m, x: m(x), True),
    ("transformer_encoder_layer_norm_first", lambda nn: nn.TransformerEncoderLayer(
        8, 2, 16, norm_first=True, batch_first=True, activation="gelu"), [("f", (2, 5, 8))],
     lambda L, m, x: m(x), True),
    ("transformer_decoder_layer", lambda nn: nn.TransformerDecoderLayer(8, 2, 16), [("f", (4, 2, 8)),
                                                                                   ("f", (5, 2, 8))],
     lambda L, m, x, mem: m(x, mem), True),
    ("sdpa", None, [("f", (2, 2, 3, 4)), ("f", (2, 2, 5, 4)), ("f", (2, 2, 5, 6))],
     lambda L, m, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v), True),
    ("sdpa_causal", None, [("f", (2, 3, 4)), ("f", (2, 3, 4)), ("f", (2, 3, 4))],
     lambda L, m, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), True),
    # sampling, padding, folding
    ("interpolate_nearest", None, [IMG], lambda L, m, x: L.nn.functional.interpolate(x, scale_factor=2), True),
    ("interpolate_bilinear", None, [IMG],
     lambda L, m, x: L.nn.functional.interpolate(x, size=(4, 9), mode="bilinear", align_corners=True), True),
    ("interpolate_linear", None, [("f", (2, 3, 5))],
     lambda L, m, x: L.nn.functional.interpolate(x, scale_factor=1.5, mode="linear"), True),
    ("interpolate_bicubic", None, [IMG], lambda L, m, x: L.nn.functional.interpolate(x, size=8, mode="bicubic"),
     True),
    ("interpolate_trilinear", None, [("f", (1, 2, 3, 3, 3))],
     lambda L, m, x: L.nn.functional.interpolate(x, scale_factor=2, mode="trilinear"), True),
    ("upsample", lambda nn: nn.Upsample(scale_factor=2, mode="nearest"), [IMG], lambda L, m, x: m(x), True),
    ("grid_sample", None, [IMG, ("f", (2, 4, 5, 2))],
     lambda L, m, x, g: L.nn.functional.grid_sample(x, g, align_corners=False), True),
    ("affine_grid", None, [("f", (2, 2, 3))],
     lambda L, m, t: L.nn.functional.affine_grid(t, (2, 3, 4, 5), align_corners=False), True),
    ("pad_constant", None, [IMG], lambda L, m, x: L.nn.functional.pad(x, (1, 2, 0, 1), value=1.0), True),
    ("pad_reflect", None, [IMG], lambda L, m, x: L.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"), True),
    ("pad_replicate", None, [("f", (2, 3, 5))], lambda L, m, x: L.nn.functional.pad(x, (2, 1), mode="replicate"),
     True),
    ("pad_circular", None, [IMG], lambda L, m, x: L.nn.functional.pad(x, (1, 1, 2, 0), mode="circular"), True),
    ("unfold", lambda nn: nn.Unfold(2, padding=1, stride=2), [IMG], lambda L, m, x: m(x), True),
    ("fold", lambda nn: nn.Fold((4, 5), 2), [("f", (2, 12, 12))], lambda L, m, x: m(x), True),
    ("pixel_shuffle", lambda nn: nn.PixelShuffle(2), [("f", (1, 8, 3, 3))], lambda L, m, x: m(x), True),
    ("pixel_unshuffle", lambda nn: nn.PixelUnshuffle(2), [("f", (1, 2, 4, 6))], lambda L, m, x: m(x), True),
    ("flatten_unflatten", lambda nn: nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 36))), [IMG],
     lambda L, m, x: m(x), True),
    ("channel_shuffle", lambda nn: nn.ChannelShuffle(2), [("f", (1, 4, 3, 3))], lambda L, m, x: m(x), True),
    ("cosine_similarity", lambda nn: nn.CosineSimilarity(), [F, F], lambda L, m, x, y: m(x, y), True),
    ("pairwise_distance", lambda nn: nn.PairwiseDistance(), [F, F], lambda L, m, x, y: m(x, y), True),
    ("one_hot", None, [("i", (2, 3), 4)], lambda L, m, i: L.nn.functional.one_hot(i, 4), False),
]

ACTIVATIONS = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus", "Softsign",
               "Tanhshrink", "Hardtanh", "Hardswish", "Hardsigmoid", "Hardshrink", "Softshrink", "LogSigmoid",
               "Sigmoid", "Tanh", "PReLU", "Softmax", "LogSoftmax", "Softmin", "GLU", "Softmax2d"]
_ARGS = {"Softmax": (1,), "LogSoftmax": (1,), "Softmin": (1,)}
ROWS += [(f"act_{n}", (lambda nn, n=n: getattr(nn, n)(*_ARGS.get(n, ()))), [("f", (2, 4, 3, 2))],
          lambda L, m, x: m(x), True) for n in ACTIVATIONS]
ROWS += [
    ("gelu_tanh", lambda nn: nn.GELU("tanh"), [F], lambda L, m, x: m(x), True),
    ("threshold", lambda nn: nn.Threshold(0.1, 2.0), [F], lambda L, m, x: m(x), True),
    ("prelu_channels", lambda nn: nn.PReLU(3), [IMG], lambda L, m, x: m(x), True),
    ("softmax_dtype", None, [F], lambda L, m, x: L.nn.functional.softmax(x, 1, dtype=L.float64), True),
    ("log_softmax_half", None, [F], lambda L, m, x: L.nn.functional.log_softmax(x.half(), 0), True),
    ("gumbel_softmax", None, [F], lambda L, m, x: L.nn.functional.gumbel_softmax(x, hard=True), True),
]

# losses: (name, extra spec for the target, reduction); the input is float (2, 4) unless stated
_P, _T4 = ("p", (2, 4)), ("n", (2, 4))
LOSSES = [
    ("MSELoss", [_T4]), ("L1Loss", [_T4]), ("SmoothL1Loss", [_T4]), ("HuberLoss", [_T4]),
    ("BCELoss", [_P], "p"), ("BCEWithLogitsLoss", [_P]), ("CrossEntropyLoss", [("i", (2,), 4)]),
    ("NLLLoss", [("i", (2,), 4)]), ("KLDivLoss", [_T4]), ("PoissonNLLLoss", [_T4]),
    ("HingeEmbeddingLoss", [_T4]), ("MultiLabelSoftMarginLoss", [_P]), ("MultiMarginLoss", [("i", (2,), 4)]),
    ("SoftMarginLoss", [_T4]), ("MultiLabelMarginLoss", [("i", (2, 4), 4)]),
]
for _name, _tspecs, *_kind in LOSSES:
    for _red in ("mean", "none"):
        ROWS.append((f"loss_{_name}_{_red}", (lambda nn, n=_name, r=_red: getattr(nn, n)(reduction=r)),
                     [(_kind[0] if _kind else "f", (2, 4))] + _tspecs, lambda L, m, x, t: m(x, t), True))
ROWS += [
    ("loss_cross_entropy_probs", lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1), [("f", (2, 4, 3)),
                                                                                     ("p", (2, 4, 3))],
     lambda L, m, x, t: m(x, t), True),
    ("loss_cross_entropy_2d_weight", lambda nn: nn.CrossEntropyLoss(ignore_index=1, reduction="sum"),
     [("f", (2, 4, 3, 3)), ("i", (2, 3, 3), 4)], lambda L, m, x, t: m(x, t), True),
    ("loss_nll_weight", None, [("f", (3, 4)), ("i", (3,), 4), ("n", (4,))],
     lambda L, m, x, t, w: L.nn.functional.nll_loss(x, t, w), True),
    ("loss_nll_bad_target", lambda nn: nn.NLLLoss(), [("f", (3, 4)), ("i", (2,), 4)], lambda L, m, x, t: m(x, t),
     False),
    ("loss_gaussian_nll", lambda nn: nn.GaussianNLLLoss(), [F, F, ("p", (2, 3))],
     lambda L, m, x, t, v: m(x, t, v), True),
    ("loss_margin_ranking", lambda nn: nn.MarginRankingLoss(), [("f", (3,)), ("f", (3,)), ("n", (3,))],
     lambda L, m, x, y, t: m(x, y, t), True),
    ("loss_cosine_embedding", lambda nn: nn.CosineEmbeddingLoss(), [F, F, ("n", (2,))],
     lambda L, m, x, y, t: m(x, y, t), True),
    ("loss_triplet", lambda nn: nn.TripletMarginLoss(), [F, F, F], lambda L, m, a, p, n: m(a, p, n), True),
    ("loss_ctc", lambda nn: nn.CTCLoss(), [("f", (6, 2, 4)), ("i", (2, 3), 3)],
     lambda L, m, x, t: m(x.log_softmax(2), t + 1, L.tensor([6, 5]).to(x.device),
                          L.tensor([3, 2]).to(x.device)), True),
    ("loss_ctc_none", lambda nn: nn.CTCLoss(reduction="none"), [("f", (6, 2, 4)), ("i", (2, 3), 3)],
     lambda L, m, x, t: m(x.log_softmax(2), t + 1, (6, 6), (3, 3)), True),
]


def _opt_step(opt_name, **kw):
    def call(L, m, x):
        opt = getattr(L.optim, opt_name)(m.parameters(), **kw)
        m(x).backward(L.empty(2, 4, device=x.device))
        opt.step()
        opt.zero_grad(set_to_none=False)
        opt.step()
        state = [t for p in m.parameters() for t in opt.state[p].values() if isinstance(t, (torch.Tensor,
                                                                                              ember.Tensor))]
        return list(m.parameters()) + state
    return call


ROWS += [(f"optim_{n}", lambda nn: nn.Linear(3, 4), [("n", (2, 3))], _opt_step(n, **kw), False) for n, kw in [
    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.1, "centered": True}), ("Adagrad", {"lr": 0.1}), ("Adamax", {}), ("NAdam", {}),
    ("RAdam", {}), ("Adadelta", {}), ("Rprop", {}), ("ASGD", {})]]

_BY_ID = {row[0]: row for row in ROWS}
assert len(_BY_ID) == len(ROWS), "row ids are unique"


@pytest.mark.parametrize("name", list(_BY_ID))
def test_meta_nn(name):
    row = _BY_ID[name]
    t_fwd, t_bwd = _run(torch, row, "meta")
    e_fwd, e_bwd = _run(ember, row, "meta")
    real = _run(ember, row, "cpu") if "NotImplementedError" in (t_fwd, t_bwd) else (None, None)
    _held(e_fwd, real[0], t_fwd, "forward", name)
    if t_bwd is not None or e_bwd is not None:
        _held(e_bwd, real[1], t_bwd, "backward", name)
