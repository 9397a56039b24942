"""Which dtypes each op and each nn functional accepts, against torch: one table-driven test.

For every entry of the OpInfo table (op_db.py) and every function of `torch.nn.functional` that ember
has (the table `FUNCTIONALS` below, arguments valid for float), the inputs are made in each of twelve
dtypes and run in torch and ember: where torch raises, ember must raise the same class and message
(torch's `"<kernel>" not implemented for 'Long'`); where torch returns, ember must return the same
dtype and values. A float-only function that takes integers and answers in integers is the failure
this catches (issue 16).

Inputs: an op_db entry makes its own samples for the dtype (its generator knows value ranges); where it
cannot (NaN literals in an integer array), its float64 samples are cast. A functional's float64 arrays
are cast to the dtype under test; int64 arrays (class targets, indices, lengths) and arrays wrapped in
`keep` (the float weights of a model fed an integer batch) keep their dtype.
"""

import re

import numpy as np
import pytest
from compare import check
from op_db import OPS

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ember depends on it
    ml_dtypes = None

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128")


class keep:
    """An array that stays as it is whatever dtype is under test."""

    def __init__(self, a):
        self.a = a


def cast(a, dtype):
    """float64 data `a` as `dtype`: integers by flooring (wrapping as torch's casts do), bool as `!= 0`.
    (A 0-d array stays an array: NumPy's ufuncs give a NumPy scalar for one, which is no tensor.)"""
    if dtype == "bool":
        return np.asarray(a != 0)
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        return np.asarray(np.floor(a)).astype(np.int64).astype(dtype)
    if dtype == "bfloat16":
        return a.astype(ml_dtypes.bfloat16)
    return a.astype(dtype)


def _inputs(arrays, dtype):
    out = []
    for a in arrays:
        if isinstance(a, keep):
            out.append(a.a)
        elif isinstance(a, np.ndarray) and a.dtype == np.float64:
            out.append(cast(a, dtype))
        else:
            out.append(a)
    return out


# ---- the functionals' sample table -------------------------------------------------------------------

_rng = np.random.default_rng(16)


def _x(*shape, low=-2.0, high=2.0):
    return _rng.uniform(low, high, shape)


def _pm1(*shape):
    return np.where(_rng.random(shape) < 0.5, -1.0, 1.0)


def _seeded(f):
    """For functionals that draw random numbers: the same seed in both libraries."""
    def run(lib, *xs):
        lib.manual_seed(0)
        return f(lib, *xs)
    return run


def _inplace(name, *args):
    def run(lib, x):
        return getattr(lib.nn.functional, name)(x.clone(), *args)
    return run


def F(name, *args, **kwargs):
    return lambda lib, *xs: getattr(lib.nn.functional, name)(*xs, *args, **kwargs)


_X = _x(3, 4)
_X1D, _X2D, _X3D = _x(2, 3, 6), _x(2, 3, 4, 4), _x(1, 2, 4, 4, 4)
_T = np.array([1, 0, 3])  # class targets for (3, 4) scores
_W32 = keep(_x(5, 4).astype(np.float32))

FUNCTIONALS = [  # (id, fn(lib, *inputs), inputs)
    *[(n, F(n), [_X]) for n in (
        "relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign", "softshrink",
        "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "logsigmoid", "sigmoid", "tanh",
        "tanhshrink")],
    ("gelu_tanh", F("gelu", approximate="tanh"), [_X]),
    ("threshold", F("threshold", 0.5, 0.0), [_X]),
    # bounds as torch's kernels read them: integer bounds for an integer tensor, checked conversion
    ("threshold_negative", F("threshold", -0.5, 7), [_X]),
    ("threshold_wide_value", F("threshold", 0.3, 300), [_X]),
    ("hardtanh_fractional", F("hardtanh", -0.5, 1.2), [_X]),
    ("hardtanh_wide", F("hardtanh", 0, 300), [_X]),
    *[(n, _inplace(n), [_X]) for n in ("relu_", "elu_", "celu_", "selu_", "hardtanh_", "leaky_relu_")],
    ("threshold_", _inplace("threshold_", 0.5, 0.0), [_X]),
    ("rrelu", F("rrelu", training=False), [_X]),
    ("glu", F("glu", dim=-1), [_X]),
    ("prelu", F("prelu"), [_X, _x(1)]),
    ("softmax", F("softmax", dim=1), [_X]),
    ("softmin", F("softmin", dim=1), [_X]),
    ("log_softmax", F("log_softmax", dim=1), [_X]),
    ("softmax_dtype", F("softmax", dim=1, dtype=None), [_X]),
    ("gumbel_softmax", _seeded(F("gumbel_softmax", tau=1.0)), [_X]),
    ("normalize", F("normalize", dim=1), [_X]),
    ("cosine_similarity", F("cosine_similarity"), [_X, _x(3, 4)]),
    ("pairwise_distance", F("pairwise_distance"), [_X, _x(3, 4)]),
    ("pdist", F("pdist"), [_X]),
    ("linear", F("linear"), [_X, _x(5, 4), _x(5)]),
    ("linear_float_weight", F("linear"), [_X, _W32]),
    ("bilinear", F("bilinear"), [_X, _x(3, 2), _x(5, 4, 2), _x(5)]),
    ("dropout", _seeded(F("dropout", 0.5)), [_X]),
    ("dropout_eval", F("dropout", 0.5, training=False), [_X]),
    ("alpha_dropout", _seeded(F("alpha_dropout", 0.5, training=True)), [_X]),
    ("feature_alpha_dropout", _seeded(F("feature_alpha_dropout", 0.5, training=True)), [_X1D]),
    ("dropout1d", _seeded(F("dropout1d", 0.5)), [_X1D]),
    ("dropout2d", _seeded(F("dropout2d", 0.5)), [_X2D]),
    ("dropout3d", _seeded(F("dropout3d", 0.5)), [_X3D]),
    ("one_hot", F("one_hot", 4), [np.array([0.0, 2.0, 1.0, 3.0])]),
    ("embedding", F("embedding"), [np.array([[0.0, 2.0], [1.0, 1.0]]), keep(_x(3, 4).astype(np.float32))]),
    ("embedding_weight", F("embedding"), [np.array([[0, 2], [1, 1]]), _x(3, 4)]),
    ("embedding_bag", F("embedding_bag"), [np.array([[0, 2], [1, 1]]), _x(3, 4)]),
    ("pad", F("pad", (1, 2)), [_X]),
    *[(f"pad_{m}", F("pad", (1, 1), mode=m), [_X1D]) for m in ("reflect", "replicate", "circular")],
    ("pixel_shuffle", F("pixel_shuffle", 2), [_x(1, 4, 2, 2)]),
    ("pixel_unshuffle", F("pixel_unshuffle", 2), [_x(1, 1, 4, 4)]),
    ("channel_shuffle", F("channel_shuffle", 2), [_x(1, 4, 2, 2)]),
    ("fold", F("fold", (3, 3), 2), [_x(1, 4, 4)]),
    ("unfold", F("unfold", 2), [_x(1, 1, 3, 3)]),
    ("interpolate", F("interpolate", scale_factor=2), [_X1D]),
    ("interpolate_linear", F("interpolate", scale_factor=2, mode="linear"), [_X1D]),
    ("interpolate_bilinear", F("interpolate", size=(5, 5), mode="bilinear"), [_X2D]),
    ("interpolate_bicubic", F("interpolate", size=(5, 5), mode="bicubic"), [_X2D]),
    ("interpolate_bilinear_aa", F("interpolate", size=(3, 5), mode="bilinear", antialias=True), [_X2D]),
    ("interpolate_bicubic_aa", F("interpolate", size=(3, 2), mode="bicubic", antialias=True), [_X2D]),
    ("interpolate_bicubic_align", F("interpolate", size=(7, 3), mode="bicubic", align_corners=True), [_X2D]),
    # 6 channels: torch's generic uint8 path (up to 4 take its AVX2 one)
    ("interpolate_bilinear_scale", F("interpolate", scale_factor=(1.7, 0.6), mode="bilinear"),
     [_x(2, 6, 5, 8)]),
    ("interpolate_area", F("interpolate", size=(2, 2), mode="area"), [_X2D]),
    ("interpolate_nearest_exact", F("interpolate", size=(5, 5), mode="nearest-exact"), [_X2D]),
    ("interpolate_trilinear", F("interpolate", scale_factor=2, mode="trilinear"), [_X3D]),
    ("upsample", F("upsample", scale_factor=2), [_X2D]),
    ("upsample_nearest", F("upsample_nearest", scale_factor=2), [_X2D]),
    ("upsample_bilinear", F("upsample_bilinear", scale_factor=2), [_X2D]),
    ("affine_grid", F("affine_grid", (1, 1, 3, 3), align_corners=False), [_x(1, 2, 3)]),
    ("grid_sample", F("grid_sample", align_corners=False), [_x(1, 1, 3, 3), _x(1, 2, 2, 2, low=-1, high=1)]),
    ("conv1d", F("conv1d"), [_X1D, _x(4, 3, 2), _x(4)]),
    ("conv2d", F("conv2d"), [_X2D, _x(4, 3, 2, 2), _x(4)]),
    ("conv2d_float_weight", F("conv2d"), [_X2D, keep(_x(4, 3, 2, 2).astype(np.float32))]),
    ("conv3d", F("conv3d"), [_X3D, _x(2, 2, 2, 2, 2)]),
    # dilated: torch's slow_conv_dilated kernel, whose dtypes differ
    ("conv1d_dilated", F("conv1d", dilation=2), [_X1D, _x(4, 3, 2), _x(4)]),
    ("conv2d_dilated", F("conv2d", dilation=(2, 1)), [_X2D, _x(4, 3, 2, 2), _x(4)]),
    ("conv3d_dilated", F("conv3d", dilation=2), [_X3D, _x(2, 2, 2, 2, 2)]),
    ("conv_transpose1d", F("conv_transpose1d"), [_X1D, _x(3, 4, 2), _x(4)]),
    ("conv_transpose2d", F("conv_transpose2d"), [_X2D, _x(3, 4, 2, 2)]),
    ("conv_transpose3d", F("conv_transpose3d"), [_X3D, _x(2, 2, 2, 2, 2)]),
    ("avg_pool1d", F("avg_pool1d", 2), [_X1D]),
    ("avg_pool2d", F("avg_pool2d", 2), [_X2D]),
    ("avg_pool3d", F("avg_pool3d", 2), [_X3D]),
    ("max_pool1d", F("max_pool1d", 2), [_X1D]),
    ("max_pool2d", F("max_pool2d", 2), [_X2D]),
    ("max_pool3d", F("max_pool3d", 2), [_X3D]),
    ("max_pool1d_with_indices", F("max_pool1d_with_indices", 2), [_X1D]),
    ("max_pool2d_with_indices", F("max_pool2d_with_indices", 2), [_X2D]),
    ("max_pool3d_with_indices", F("max_pool3d_with_indices", 2), [_X3D]),
    ("adaptive_avg_pool1d", F("adaptive_avg_pool1d", 4), [_X1D]),
    ("adaptive_avg_pool2d", F("adaptive_avg_pool2d", 3), [_X2D]),
    ("adaptive_avg_pool3d", F("adaptive_avg_pool3d", 3), [_X3D]),
    ("adaptive_max_pool1d", F("adaptive_max_pool1d", 4), [_X1D]),
    ("adaptive_max_pool2d", F("adaptive_max_pool2d", 3), [_X2D]),
    ("adaptive_max_pool3d", F("adaptive_max_pool3d", 3), [_X3D]),
    ("adaptive_max_pool1d_with_indices", F("adaptive_max_pool1d_with_indices", 4), [_X1D]),
    ("adaptive_max_pool2d_with_indices", F("adaptive_max_pool2d_with_indices", 3), [_X2D]),
    ("lp_pool1d", F("lp_pool1d", 2, 2), [_X1D]),
    ("lp_pool2d", F("lp_pool2d", 2, 2), [_X2D]),
    ("batch_norm", F("batch_norm", None, None, training=True), [_X]),
    ("batch_norm_affine", F("batch_norm", training=False),
     [_X, _x(4), _x(4, low=0.5, high=2.0), _x(4), _x(4)]),
    ("batch_norm_float_stats", F("batch_norm", training=False),
     [_X, keep(np.zeros(4, np.float32)), keep(np.ones(4, np.float32))]),
    ("instance_norm", F("instance_norm"), [_X1D]),
    ("layer_norm", F("layer_norm", (4,)), [_X]),
    ("layer_norm_affine", lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b), [_X, _x(4), _x(4)]),
    ("layer_norm_float_weight", lambda lib, x, w: lib.nn.functional.layer_norm(x, (4,), w),
     [_X, keep(np.ones(4, np.float32))]),
    ("group_norm", F("group_norm", 3), [_X1D]),
    ("rms_norm", F("rms_norm", (4,)), [_X]),
    ("local_response_norm", F("local_response_norm", 2), [_X1D]),
    *[(n, F(n), [_X, _x(3, 4)]) for n in (
        "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy_with_logits",
        "poisson_nll_loss")],
    ("binary_cross_entropy", F("binary_cross_entropy"), [_x(3, 4, low=0.05, high=0.95), _x(3, 4, low=0, high=1)]),
    ("soft_margin_loss", F("soft_margin_loss"), [_X, _pm1(3, 4)]),
    ("multilabel_soft_margin_loss", F("multilabel_soft_margin_loss"), [_X, _x(3, 4, low=0, high=2)]),
    ("gaussian_nll_loss", F("gaussian_nll_loss"), [_X, _x(3, 4), _x(3, 4, low=0.5, high=2)]),
    ("hinge_embedding_loss", F("hinge_embedding_loss"), [_X, _pm1(3, 4)]),
    ("margin_ranking_loss", F("margin_ranking_loss"), [_x(3), _x(3), _pm1(3)]),
    ("cosine_embedding_loss", F("cosine_embedding_loss"), [_X, _x(3, 4), _pm1(3)]),
    ("triplet_margin_loss", F("triplet_margin_loss"), [_X, _x(3, 4), _x(3, 4)]),
    ("triplet_margin_with_distance_loss", F("triplet_margin_with_distance_loss"), [_X, _x(3, 4), _x(3, 4)]),
    ("multi_margin_loss", F("multi_margin_loss"), [_X, _T]),
    ("multilabel_margin_loss", F("multilabel_margin_loss"), [_X, np.array([[3, 0, -1, 1]] * 3)]),
    ("cross_entropy", F("cross_entropy"), [_X, _T]),
    ("cross_entropy_probs", F("cross_entropy"), [_X, _x(3, 4, low=0, high=1)]),
    ("nll_loss", F("nll_loss"), [_X, _T]),
    ("ctc_loss", F("ctc_loss"), [_x(5, 2, 3), np.array([[1, 2], [1, 1]]), np.array([5, 4]), np.array([2, 1])]),
    ("scaled_dot_product_attention", F("scaled_dot_product_attention"), [_x(1, 2, 3, 4), _x(1, 2, 3, 4),
                                                                          _x(1, 2, 3, 4)]),
    ("multi_head_attention_forward",
     lambda lib, q, k, v, w, b, ow, ob: lib.nn.functional.multi_head_attention_forward(
         q, k, v, 4, 2, w, b, None, None, False, 0.0, ow, ob, training=False)[0],
     [_x(2, 1, 4), _x(2, 1, 4), _x(2, 1, 4), _x(12, 4), _x(12), _x(4, 4), _x(4)]),
    # (area N: unpooling, fractional and 3-d pools, conv_tbc, channel shuffle, grouped_mm, linear_cross_entropy)
    *[(f"max_unpool{n}d", F(f"max_unpool{n}d", 2), [_x(2, 3, *(2,) * n), keep(np.zeros((2, 3) + (2,) * n,
                                                                                         np.int64) + 1)])
      for n in (1, 2, 3)],
    *[(f"fractional_max_pool{n}d_with_indices", _seeded(F(f"fractional_max_pool{n}d_with_indices", 2,
                                                          output_size=2)), [x]) for n, x in ((2, _X2D), (3, _X3D))],
    ("lp_pool3d", F("lp_pool3d", 2, 2), [_X3D]),
    ("adaptive_max_pool3d_with_indices", F("adaptive_max_pool3d_with_indices", 2), [_X3D]),
    ("conv_tbc", F("conv_tbc"), [_x(5, 2, 3), _x(2, 3, 4), _x(4)]),
    ("native_channel_shuffle", F("native_channel_shuffle", 2), [_x(2, 4, 3)]),
    ("rrelu_", _inplace("rrelu_"), [_X]),
    ("rrelu_training", _seeded(F("rrelu", training=True)), [_X]),
    ("grouped_mm", lambda lib, a, b, o: lib.nn.functional.grouped_mm(a, b, offs=o),
     [_x(8, 16), _x(2, 16, 8), keep(np.array([3, 8], np.int32))]),
    ("linear_cross_entropy", lambda lib, x, w, t: lib.nn.functional.linear_cross_entropy(x, w, t),
     [_X, _x(5, 4), keep(_T)]),
]


def _op_samples(op, dtype):
    """The entry's own samples for `dtype`, or its float64 samples cast (see the module docstring)."""
    try:
        with np.errstate(all="ignore"):
            return [(s.inputs, s.kwargs) for s in op.samples(dtype, np.random.default_rng(0))]
    except (ValueError, TypeError, OverflowError):
        return [(_inputs(s.inputs, dtype), s.kwargs) for s in op.samples("float64", np.random.default_rng(0))]


CASES = [pytest.param("op", op.id, d, id=f"op-{op.id}-{d}") for op in OPS for d in DTYPES] + \
        [pytest.param("functional", name, d, id=f"F-{name}-{d}") for name, _, _ in FUNCTIONALS for d in DTYPES]
_OPS = {op.id: op for op in OPS}
_FUNCTIONALS = {name: (fn, inputs) for name, fn, inputs in FUNCTIONALS}


# NOTE [ complex32 ]: torch has a complex32 (ComplexHalf) dtype, which `view_as_complex` of a half tensor
# makes; ember has none (NumPy has no complex half type), and says so instead of computing in another dtype.
# These cases are held to exactly that: torch computes, ember raises this error.
NO_COMPLEX32 = {("conj", "float16"), ("conj_physical", "float16"), ("view_as_complex", "float16"),
                ("complex", "float16"), ("complex_grad", "float16")}
_COMPLEX32_ERROR = "ember has no complex32 (ComplexHalf) dtype"


# NOTE [ Half-precision matrix_exp ] (area L)
# torch 2.13's CPU matrix_exp runs its Taylor/Padé constants in float16 / bfloat16 themselves, which overflow:
# every input, even a tiny one, gives infinities and NaNs. ember computes a half matrix exponential in float32
# and rounds once. These cases are held to exactly that: torch's result is not finite, ember's is the float32
# exponential of the same input, rounded.
HALF_MATRIX_EXP = {(name, d) for name in ("linalg.matrix_exp", "matrix_exp") for d in ("float16", "bfloat16")}


def _check_half_matrix_exp(op, dtype):
    import torch
    from compare import numpy_of, to_ember, to_torch

    import ember
    for inputs, kwargs in _op_samples(op, dtype):
        t = op.fn(torch, *[to_torch(x) for x in inputs], **kwargs)
        assert t.numel() == 0 or not torch.isfinite(t).all()
        e = op.fn(ember, *[to_ember(x) for x in inputs], **kwargs)
        want = torch.linalg.matrix_exp(to_torch(inputs[0]).float())
        assert e.dtype == (ember.float16 if dtype == "float16" else ember.bfloat16)
        ulp = 2.0 ** (-10 if dtype == "float16" else -7)  # (one rounding to the half dtype)
        np.testing.assert_allclose(numpy_of(e), numpy_of(want), rtol=ulp, atol=ulp)


# NOTE [ Half-precision recurrent layers ]
# ember's RNN/LSTM/GRU layers round where torch's per-op CPU cells round (NOTE [ Rounding of a recurrent layer ]
# in ember/_ops/rnn.py). Two things torch does differ from that path, and the test says exactly how:
# - on a CPU with AVX512-BF16, torch sends a bfloat16 LSTM to oneDNN's fused kernel, whose rounding is its own;
#   ember is held to torch's per-op path (`torch.backends.mkldnn.flags(enabled=False)`), which it equals;
# - in float16, NumPy's float32 tanh/sigmoid and torch's vectorised ones differ by an ulp now and then, which
#   can flip a float16 rounding and carry through the time steps: ember is held to 2 float16 ulps of torch
#   (rtol 2 * 2^-10), not to torch's own tolerance.


def _check_half_recurrent(op, dtype):
    import torch

    rtol, atol = (2 * 2.0 ** -10, 1e-6) if dtype == "float16" else (op.rtol, op.atol)
    with torch.backends.mkldnn.flags(enabled=False):
        for inputs, kwargs in _op_samples(op, dtype):
            check(lambda lib, *xs, kw=kwargs: op.fn(lib, *xs, **kw), *inputs, rtol=rtol, atol=atol,
                  check_stride=False)


@pytest.mark.parametrize("kind,name,dtype", CASES)
def test_dtype_acceptance(kind, name, dtype):
    if kind == "op" and (name, dtype) in NO_COMPLEX32:
        import torch
        from compare import to_ember, to_torch

        import ember

        op = _OPS[name]
        for inputs, kwargs in _op_samples(op, dtype):
            op.fn(torch, *[to_torch(x) for x in inputs], **kwargs)  # torch computes in complex32
            with pytest.raises(NotImplementedError, match=re.escape(_COMPLEX32_ERROR)):
                op.fn(ember, *[to_ember(x) for x in inputs], **kwargs)
        return
    if kind == "op" and name.startswith(("nn.RNN", "nn.LSTM", "nn.GRU")) and dtype in ("float16", "bfloat16"):
        _check_half_recurrent(_OPS[name], dtype)
        return
    if kind == "op" and (name, dtype) in HALF_MATRIX_EXP:
        _check_half_matrix_exp(_OPS[name], dtype)
        return
    if kind == "op":
        op = _OPS[name]
        for inputs, kwargs in _op_samples(op, dtype):
            check(lambda lib, *xs, kw=kwargs: op.fn(lib, *xs, **kw), *inputs, rtol=op.rtol, atol=op.atol,
                  check_stride=False)
    else:
        fn, inputs = _FUNCTIONALS[name]
        check(fn, *_inputs(inputs, dtype), check_stride=False)


def test_functional_table_covers_ember():
    """Every function of torch.nn.functional that ember has is in the table."""
    import torch

    import ember
    names = {n for n in dir(torch.nn.functional) if not n.startswith("_") and callable(getattr(torch.nn.functional, n))
             and n[0].islower() and hasattr(ember.nn.functional, n)}
    covered = {fn_name for fn_name, _, _ in FUNCTIONALS}
    missing = {n for n in names if not any(c == n or c.startswith(n + "_") for c in covered)}
    assert not missing, f"functionals missing from the dtype table: {sorted(missing)}"
