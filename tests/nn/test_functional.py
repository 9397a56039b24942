"""nn.functional losses and functions against torch (values and input grads), table-driven; numerical
stability at logits of 1e4; conv/pool double backward."""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check

import ember

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5)).astype(np.float32)
Y = rng.standard_normal((4, 5)).astype(np.float32)
P = rng.uniform(0.05, 0.95, (4, 5)).astype(np.float32)
T = np.array([1, 0, 4, 2])
X3 = rng.standard_normal((2, 5, 3)).astype(np.float32)
T3 = rng.integers(0, 5, (2, 3))
SIGN = np.array([1., -1., 1., -1.], np.float32)
BAG_IDX = np.array([1, 2, 0, 3, 3, 1])
BAG_OFFS = np.array([0, 2, 2, 5])  # bag 1 is empty
FOLD = rng.standard_normal(96).astype(np.float32)
ML = np.array([[3, 0, -1, 1, 2], [1, 2, 4, -1, 0], [0, -1, 0, 0, 0], [4, 3, 2, 1, 0]])

LOSSES = [
    ("cross_entropy", lambda F, x, t: F.cross_entropy(x, t), [X, T]),
    ("cross_entropy_w", lambda F, x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=4), [X, T, P[0]]),
    ("cross_entropy_ls", lambda F, x, t: F.cross_entropy(x, t, label_smoothing=0.2), [X, T]),
    ("cross_entropy_nd", lambda F, x, t: F.cross_entropy(x, t, reduction="none"), [X3, T3]),
    ("cross_entropy_probs", lambda F, x, p: F.cross_entropy(x, p.softmax(1), label_smoothing=0.1), [X, P]),
    ("nll", lambda F, x, t: F.nll_loss(x, t, reduction="sum"), [X, T]),
    ("nll_1d", lambda F, x, t: F.nll_loss(x[0], t[0]), [X, T]),
    ("mse", lambda F, x, y: F.mse_loss(x, y), [X, Y]), ("l1", lambda F, x, y: F.l1_loss(x, y, reduction="sum"), [X, Y]),
    ("smooth_l1", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.5), [X, Y]),
    ("huber", lambda F, x, y: F.huber_loss(x, y, reduction="none", delta=0.7), [X, Y]),
    ("bce", lambda F, p, q: F.binary_cross_entropy(p, q), [P, P[::-1].copy()]),
    ("bce_logits", lambda F, x, q, w: F.binary_cross_entropy_with_logits(x, q, pos_weight=w), [X, P, P[0]]),
    ("kl", lambda F, x, p: F.kl_div(x.log_softmax(1), p, reduction="batchmean"), [X, P]),
    ("kl_log", lambda F, x, y: F.kl_div(x, y, reduction="sum", log_target=True), [X, Y]),
    ("poisson", lambda F, x, y: F.poisson_nll_loss(x, y.abs()), [X, Y]),
    ("poisson_full", lambda F, x, y: F.poisson_nll_loss(x.abs(), y.abs() * 3, log_input=False, full=True), [X, Y]),
    ("gaussian", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, full=True), [X, Y, P]),
    ("margin_ranking", lambda F, a, b, s: F.margin_ranking_loss(a[:, 0], b[:, 0], s, margin=0.1), [X, Y, SIGN]),
    ("hinge", lambda F, x, s: F.hinge_embedding_loss(x[:, 0], s), [X, SIGN]),
    ("soft_margin", lambda F, x, s: F.soft_margin_loss(x[:, 0], s), [X, SIGN]),
    ("multilabel_soft", lambda F, x, q: F.multilabel_soft_margin_loss(x, (q > 0.5).float()), [X, P]),
    ("multilabel_margin", lambda F, x, t: F.multilabel_margin_loss(x, t), [X, ML]),
    ("multi_margin", lambda F, x, t: F.multi_margin_loss(x, t), [X, T]),
    ("multi_margin_p2", lambda F, x, t, w: F.multi_margin_loss(x, t, p=2, margin=0.5, weight=w), [X, T, P[0]]),
    ("cosine_embedding", lambda F, a, b, s: F.cosine_embedding_loss(a, b, s, margin=0.2), [X, Y, SIGN]),
    ("triplet", lambda F, a, b, c: F.triplet_margin_loss(a, b, c, swap=True), [X, Y, P]),
    ("normalize", lambda F, x: F.normalize(x, p=3, dim=0), [X]),
    ("one_hot", lambda F, t: F.one_hot(t, 6), [T]),
    ("one_hot_inferred_2d", lambda F, t: F.one_hot(t), [T3]),
    ("one_hot_negative", lambda F, t: F.one_hot(t - 1), [T]),
    ("one_hot_too_large", lambda F, t: F.one_hot(t, 3), [T]),
    ("one_hot_empty", lambda F, t: F.one_hot(t[:0]), [T]),
    ("multilabel_margin_1d", lambda F, x, t: F.multilabel_margin_loss(x[1], t[1], reduction="none"), [X, ML]),
    ("multilabel_margin_range", lambda F, x, t: F.multilabel_margin_loss(x, t + 1), [X, ML]),
    ("multi_margin_range", lambda F, x, t: F.multi_margin_loss(x, t + 1), [X, T]),
    ("unfold", lambda F, x: F.unfold(x.reshape(1, 2, 5, 3), (2, 2), padding=1, stride=(1, 2)), [X3]),
    ("fold", lambda F, x: F.fold(x.reshape(1, 8, 12), (3, 4), (2, 2), padding=(1, 0)), [FOLD]),
    ("fold_blocks_error", lambda F, x: F.fold(x.reshape(1, 8, 12), (3, 5), (2, 2), padding=(1, 0)), [FOLD]),
    ("embedding_out_of_range", lambda F, w, t: F.embedding(t, w), [X, T]),
    ("embedding_negative_index", lambda F, w, t: F.embedding(t - 2, w), [X, T]),
    ("embedding_float_index", lambda F, w, t: F.embedding(t.float(), w), [X, T]),
    ("embedding_max_norm_out_of_range", lambda F, w, t: F.embedding(t, w.detach().clone(), max_norm=1.0), [X, T]),
    ("embedding_max_norm_negative", lambda F, w, t: F.embedding(t - 2, w.detach().clone(), max_norm=1.0), [X, T]),
    ("embedding_max_norm_below", lambda F, w, t: F.embedding(t - 9, w.detach().clone(), max_norm=1.0), [X, T]),
    ("embedding_bag_mean_pad", lambda F, w, i, o: F.embedding_bag(i, w, o, mode="mean", padding_idx=3),
     [X, BAG_IDX, BAG_OFFS]),
    ("embedding_bag_sum_last_offset", lambda F, w, i, o, p: F.embedding_bag(
        i, w, o, mode="sum", include_last_offset=True, per_sample_weights=p), [X, BAG_IDX, BAG_OFFS, Y[0, :6]]),
    ("embedding_bag_weights_shape", lambda F, w, i, o, p: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p),
     [X, BAG_IDX, BAG_OFFS, P[0, :4]]),
    ("embedding_bag_max_empty_bag", lambda F, w, i, o: F.embedding_bag(i, w, o, mode="max"), [X, BAG_IDX, BAG_OFFS]),
    ("embedding_bag_2d_pad", lambda F, w, i: F.embedding_bag(i.reshape(2, 3), w, padding_idx=-1), [X, BAG_IDX]),
    ("pad_reflect", lambda F, x: F.pad(x, (2, 1), mode="reflect"), [X]),
    ("grid_sample", lambda F, x, g: F.grid_sample(x, g, align_corners=False), [X3.reshape(1, 2, 5, 3),
                                                                                np.tanh(Y).reshape(1, 2, 5, 2)]),
    ("grid_sample_border", lambda F, x, g: F.grid_sample(x, g * 2, padding_mode="border", align_corners=True),
     [X3.reshape(1, 2, 5, 3), np.tanh(Y).reshape(1, 2, 5, 2)]),
    ("grid_sample_zeros_far", lambda F, x, g: F.grid_sample(x, g * 1.7, align_corners=True),
     [X3.reshape(1, 2, 5, 3), np.tanh(Y).reshape(1, 2, 5, 2)]),
    ("grid_sample_nearest_reflect", lambda F, x, g: F.grid_sample(x, g.detach() * 1.7, mode="nearest",
                                                                  padding_mode="reflection", align_corners=False),
     [X3.reshape(1, 2, 5, 3), np.tanh(Y).reshape(1, 2, 5, 2)]),
    ("affine_grid", lambda F, th: F.affine_grid(th.reshape(2, 2, 3)[:, :, :3], (2, 1, 3, 4), align_corners=False),
     [X[:3, :4].reshape(-1)]),
    ("interp_nearest", lambda F, x: F.interpolate(x.reshape(1, 4, 5), size=7), [X]),
    ("dropout_eval", lambda F, x: F.dropout(x, 0.3, training=False), [X]),
]


NO_GRAD_AFTER_FIRST = {"cross_entropy_w", "bce_logits", "soft_margin", "multi_margin_p2", "hinge",
                       "margin_ranking", "cosine_embedding"}  # torch refuses grads for weights / targets there


@pytest.mark.parametrize("name,fn,inputs", LOSSES, ids=[c[0] for c in LOSSES])
def test_functional_matches_torch(name, fn, inputs):
    grad = [0] if name in NO_GRAD_AFTER_FIRST else True
    check(lambda lib, *a: fn(lib.nn.functional, *a), *inputs, grad=grad, rtol=1e-4, atol=1e-5, check_stride=False)


@pytest.mark.parametrize("name,fn", [
    ("log_softmax", lambda F, x: F.log_softmax(x, 1)),
    ("cross_entropy", lambda F, x: F.cross_entropy(x, torch_or_ember(F, [0, 1]))),
    ("bce_logits", lambda F, x: F.binary_cross_entropy_with_logits(x, x.detach() * 0 + 0.5)),
    ("softplus", lambda F, x: F.softplus(x)), ("logsigmoid", lambda F, x: F.logsigmoid(x)),
])
def test_stable_at_large_logits(name, fn):
    x = np.array([[1e4, -1e4, 0.0], [-1e4, 3.0, 1e4]], np.float32)
    out = check(lambda lib, a: fn(lib.nn.functional, a), x, grad=True)
    assert np.isfinite(out[0].detach().numpy()).all()


def torch_or_ember(F, values):
    lib = torch if F is torch.nn.functional else ember
    return lib.tensor(values)


def test_softmax_dtype_argument():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    check(lambda lib, a: lib.nn.functional.softmax(a, 1, dtype=lib.float64), x, grad=True)


@pytest.mark.parametrize("fn", [
    lambda F, x, w: F.conv2d(x, w, padding=1, stride=2),
    lambda F, x, w: F.conv_transpose2d(x, w, stride=2),
    lambda F, x, w: F.max_pool2d(x * w.sum(), 2),
    lambda F, x, w: F.avg_pool2d(x * w.sum(), 3, stride=2, padding=1),
])
def test_double_backward(fn):
    x = rng.standard_normal((2, 3, 6, 6))
    w = rng.standard_normal((3, 3, 3, 3))

    def run(lib, a, b):
        out = fn(lib.nn.functional, a, b)
        (g,) = lib.autograd.grad((out * out).sum(), a, create_graph=True)
        return g
    check(run, x, w, grad=True, rtol=1e-6, atol=1e-6)


def test_conv_errors():
    from compare import assert_same_error

    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    assert_same_error(lambda lib, a: lib.nn.functional.conv2d(a, lib.ones(4, 2, 3, 3)), x)
    assert_same_error(lambda lib, a: lib.nn.functional.conv2d(a.double(), lib.ones(4, 3, 3, 3)), x)
    assert_same_error(lambda lib, a: lib.nn.functional.conv2d(a[0, 0], lib.ones(4, 3, 3, 3)), x)
    assert_same_error(lambda lib, a: lib.nn.functional.linear(a[0], lib.ones(4, 3)), x)


def test_init_distributions():
    nn = ember.nn
    w = ember.empty(400, 300)
    nn.init.kaiming_uniform_(w, a=0)
    bound = np.sqrt(6 / 300)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.95 * bound
    nn.init.xavier_normal_(w)
    assert abs(w.numpy().std() - np.sqrt(2 / 700)) < 0.01 * np.sqrt(2 / 700) * 5
    nn.init.trunc_normal_(w, std=2.0, a=-1.0, b=1.5)
    assert w.numpy().min() >= -1.0 and w.numpy().max() <= 1.5
    q = ember.empty(6, 4)
    nn.init.orthogonal_(q)
    np.testing.assert_allclose(q.numpy().T @ q.numpy(), np.eye(4), atol=1e-5)
    s = ember.empty(10, 5)
    nn.init.sparse_(s, 0.3)
    assert ((s.numpy() == 0).sum(0) == 3).all()
    for name in ("linear", "tanh", "relu", "selu", "sigmoid"):
        assert nn.init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    e, t = ember.empty(4, 3, 3), torch.empty(4, 3, 3)
    assert_same(nn.init.dirac_(e), torch.nn.init.dirac_(t))
    assert_same(nn.init.eye_(ember.empty(3, 5)), torch.nn.init.eye_(torch.empty(3, 5)))


REFUSALS = [  # torch has no derivative for these arguments and refuses them when they require grad
    ("nll_weight", lambda F, x, t, w, y: F.nll_loss(x, t, weight=w)),
    ("nll2d_weight", lambda F, x, t, w, y: F.nll_loss(x.reshape(2, 5, 2), t.reshape(2, 2) % 5, weight=w)),
    ("nll_1d_weight", lambda F, x, t, w, y: F.nll_loss(x[0], t[0], weight=w)),
    ("cross_entropy_weight", lambda F, x, t, w, y: F.cross_entropy(x, t, weight=w, label_smoothing=0.1)),
    ("bce_weight", lambda F, x, t, w, y: F.binary_cross_entropy(y.detach(), y.detach(), weight=w)),
    ("bce_logits_weight", lambda F, x, t, w, y: F.binary_cross_entropy_with_logits(x, y.detach(), weight=w)),
    ("bce_logits_pos_weight", lambda F, x, t, w, y: F.binary_cross_entropy_with_logits(x, y.detach(), pos_weight=w)),
    ("soft_margin_target", lambda F, x, t, w, y: F.soft_margin_loss(x, y)),
    ("multi_margin_weight", lambda F, x, t, w, y: F.multi_margin_loss(x, t, weight=w)),
]


@pytest.mark.parametrize("name,fn", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_losses_refuse_grad_of_weights_and_targets(name, fn):
    def run(lib, x, t, w, y):
        w.requires_grad_()
        y.requires_grad_()
        return fn(lib.nn.functional, x, t, w, y)
    assert_same_error(run, X, T, P[0].copy(), P)
    # under no_grad the same call is fine, and the values agree
    check(lambda lib, x, t, w, y: _no_grad(lib, lambda: run(lib, x, t, w, y)), X, T, P[0].copy(), P, rtol=1e-5)


def _no_grad(lib, f):
    with lib.no_grad():
        return f()


IMG = rng.standard_normal((2, 3, 17, 13)).astype(np.float32)
ANTIALIAS = [
    ("bilinear_down", dict(size=(5, 4), mode="bilinear")),
    ("bicubic_down", dict(size=(5, 4), mode="bicubic")),
    ("bilinear_scale", dict(scale_factor=0.3, mode="bilinear")),
    ("bicubic_up", dict(size=(30, 20), mode="bicubic")),
    ("bilinear_align_corners", dict(size=(6, 20), mode="bilinear", align_corners=True)),
    ("bicubic_recompute", dict(scale_factor=(0.5, 2.5), mode="bicubic", recompute_scale_factor=True)),
    ("lanczos_down", dict(size=(5, 6), mode="lanczos")),
    ("lanczos_mixed", dict(scale_factor=(0.4, 1.7), mode="lanczos")),
]


@pytest.mark.parametrize("name,kw", ANTIALIAS, ids=[a[0] for a in ANTIALIAS])
def test_interpolate_antialias(name, kw):
    check(lambda lib, x: lib.nn.functional.interpolate(x, antialias=True, **kw), IMG, grad=True, rtol=1e-4,
          atol=1e-5)


@pytest.mark.parametrize("mode,shape,kw", [
    ("nearest", (1, 2, 5, 5), {}), ("bilinear", (1, 2, 5), {}), ("trilinear", (1, 1, 3, 4, 5), {}),
    ("area", (1, 2, 5, 5), {}), ("lanczos", (1, 2, 5), {}), ("lanczos", (1, 2, 5, 5), dict(antialias=False)),
    ("lanczos", (1, 2, 5, 5), dict(align_corners=True)), ("lanczos", (1, 2, 5), dict(antialias=False))])
def test_interpolate_antialias_refused(mode, shape, kw):
    kw = {"antialias": True, **kw}
    x = np.ones(shape, np.float32)
    assert_same_error(lambda lib, a: lib.nn.functional.interpolate(a, scale_factor=0.5, mode=mode, **kw), x)


IDX = np.array([[0, 2, 2, 5], [4, 2, 0, 2]])


@pytest.mark.parametrize("kw", [dict(scale_grad_by_freq=True), dict(scale_grad_by_freq=True, padding_idx=2),
                                dict(sparse=True), dict(sparse=True, padding_idx=0, scale_grad_by_freq=True)])
def test_embedding_scale_grad_by_freq_and_sparse(kw):
    w = rng.standard_normal((6, 3)).astype(np.float32)

    def fn(lib, i, w_):
        out = lib.nn.functional.embedding(i, w_, **kw)
        out.backward(lib.from_numpy(np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape))))
        g = w_.grad
        return g.to_dense() if g.is_sparse else g  # ember's gradient is dense (no sparse tensors)
    check(fn, IDX, w, grad=[1])


CONVS = [  # each kernel path: blocked im2col forward, full-correlation and col2im input grads, blocked weight grad
    ("groups_dilation", "conv2d", (2, 4, 7, 9), (6, 2, 3, 2), dict(padding=(1, 0), dilation=2, groups=2)),
    ("1d_pad", "conv1d", (2, 4, 9), (4, 4, 3), dict(padding=2)),
    ("3d", "conv3d", (2, 3, 5, 5, 4), (2, 3, 2, 2, 2), dict(padding=1)),
    ("stride2", "conv2d", (2, 4, 7, 9), (6, 4, 3, 3), dict(stride=2, padding=1)),
    ("same_dilated", "conv2d", (1, 2, 6, 6), (3, 2, 3, 3), dict(padding="same", dilation=2)),
    ("pad_beyond_kernel", "conv2d", (2, 4, 7, 9), (6, 4, 3, 3), dict(padding=3)),
    ("depthwise_stride2", "conv2d", (2, 4, 7, 9), (4, 1, 3, 3), dict(stride=2, groups=4)),
    ("pointwise", "conv2d", (3, 8, 6, 6), (2, 8, 1, 1), {}),
    ("wide_out", "conv2d", (2, 1, 8, 8), (6, 1, 5, 5), {}),
    ("transpose_output_padding", "conv_transpose2d", (2, 4, 5, 6), (4, 2, 3, 3), dict(dilation=2, output_padding=1)),
    ("transpose_stride3", "conv_transpose2d", (2, 4, 5, 6), (4, 2, 3, 3), dict(stride=3, output_padding=2)),
    ("transpose_groups", "conv_transpose2d", (2, 4, 5, 6), (4, 2, 3, 3), dict(padding=1, groups=2)),
]


@pytest.mark.parametrize("name,fn,xs,ws,kw", CONVS, ids=[c[0] for c in CONVS])
def test_conv_grads_and_double_grads(name, fn, xs, ws, kw):
    r = np.random.default_rng(1)
    x, w = r.standard_normal(xs), r.standard_normal(ws)
    check(lambda lib, a, b: getattr(lib.nn.functional, fn)(a, b, **kw), x, w, grad=True)

    def double(lib, a, b):
        y = getattr(lib.nn.functional, fn)(a, b, **kw)
        return lib.autograd.grad((y * y).sum(), (a, b), create_graph=True)
    check(double, x, w, grad=True)


def _ties(shape, seed=2):
    x = np.random.default_rng(seed).standard_normal(shape)
    x.reshape(-1)[:2] = x.reshape(-1)[0]  # a tie inside the first window: the first tap wins
    return x


MAX_POOLS = [
    ("k2_disjoint", "max_pool2d", (2, 3, 9, 9), dict(kernel_size=2)),
    ("overlap_pad", "max_pool2d", (2, 3, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
    ("ceil", "max_pool2d", (2, 3, 9, 9), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ("dilated", "max_pool2d", (2, 3, 10, 9), dict(kernel_size=(2, 3), stride=(2, 1), dilation=(2, 1))),
    ("1d", "max_pool1d", (2, 3, 9), dict(kernel_size=3, stride=3)),
    ("3d_pad", "max_pool3d", (2, 2, 5, 6, 7), dict(kernel_size=2, padding=1)),
]


@pytest.mark.parametrize("name,fn,shape,kw", MAX_POOLS, ids=[m[0] for m in MAX_POOLS])
def test_max_pool_indices_grads_double_grads(name, fn, shape, kw):
    x = _ties(shape)
    check(lambda lib, a: getattr(lib.nn.functional, fn)(a, return_indices=True, **kw), x, grad=True)

    def double(lib, a):
        y = getattr(lib.nn.functional, fn)(a, **kw)
        return lib.autograd.grad((y * y).sum(), a, create_graph=True)[0]
    check(double, x, grad=True)


def test_max_pool_nan_and_integers():
    x = np.array([[[[np.nan, 1., np.nan, 2.], [5., np.nan, 0, 0]]]], np.float32)  # the last NaN wins, as torch
    check(lambda lib, a: lib.nn.functional.max_pool2d(a, 2, return_indices=True), x)
    xi = np.random.default_rng(0).integers(-5, 5, (2, 3, 6, 6))
    check(lambda lib, a: lib.nn.functional.max_pool2d(a, 2, return_indices=True), xi)


@pytest.mark.parametrize("shape,transpose", [((3, 4), False), ((2, 3, 4), False), ((4,), False), ((2, 2, 3, 4), False),
                                             ((0, 4), False), ((3, 2, 4), True)])
def test_linear_values_grads_and_node_names(shape, transpose):
    r = np.random.default_rng(4)
    x, w, b = (r.standard_normal(s).astype(np.float32) for s in (shape, (5, 4), (5,)))

    def fn(lib, a, ww, bb):
        return lib.nn.functional.linear(a.transpose(0, 1) if transpose else a, ww, bb)
    e, t = check(fn, x, w, b, grad=True)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__  # AddmmBackward0 / ViewBackward0 / AddBackward0


# ---- loss argument checks (issue 16 item 5): torch's error, in torch's order, never NumPy's ----------------

def _t(L, shape, dtype="float32", fill=0):
    return L.full(shape, fill, dtype=getattr(L, dtype))


LOSS_ERRORS = [
    # cross_entropy: class indices vs probabilities are told apart by shape, then dtype
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), L.tensor([0.0, 1.0, 2.0])),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), L.tensor([0, 1, 2], dtype=L.int32)),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), _t(L, (3, 5), "int64")),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), _t(L, (3, 5), "bool")),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), _t(L, (3, 4))),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), _t(L, (3, 5, 2))),
    lambda L, F: F.cross_entropy(_t(L, (3, 5, 4)), _t(L, (3, 5), "int64")),
    lambda L, F: F.cross_entropy(_t(L, (3, 5, 4)), _t(L, (3,), "int64")),
    lambda L, F: F.cross_entropy(_t(L, (3, 5, 4)), _t(L, (3, 4))),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), L.tensor([0, 1, 2]), weight=L.ones(4)),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), L.tensor([0, 1, 2]), weight=L.ones(5, dtype=L.float64)),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), _t(L, (3, 5)), weight=L.ones(4)),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), _t(L, (3, 5)), ignore_index=1),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), L.tensor([0, 1, 2]), label_smoothing=0.1, weight=L.ones(4)),
    lambda L, F: F.cross_entropy(_t(L, (3, 5)), L.tensor([0.0, 1.0, 2.0]), label_smoothing=0.1),
    # nll_loss: 1-D, 2-D, spatial (3-D, 4-D, 5-D) targets
    lambda L, F: F.nll_loss(_t(L, (3, 5)), _t(L, (3, 5), "int64")),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), _t(L, (3, 1), "int64")),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), _t(L, (3,))),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), _t(L, (3,), "int32")),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), L.tensor([0, 1, 7])),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), L.tensor(1)),
    lambda L, F: F.nll_loss(_t(L, (5,)), L.tensor([1, 2])),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), L.tensor([0, 1, 2]), weight=L.ones(3)),
    lambda L, F: F.nll_loss(_t(L, (3, 5)), L.tensor([0, 1, 2]), weight=L.ones(5, 1)),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2)), _t(L, (3, 2))),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2)), _t(L, (3, 3), "int64")),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2)), _t(L, (3,), "int64")),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2)), _t(L, (3, 2), "uint8")),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2, 2)), _t(L, (3, 2), "int64")),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2, 2)), _t(L, (3, 2, 3), "int64")),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2, 2)), _t(L, (3, 2, 2), "int64"), weight=L.ones(4)),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2, 2)), _t(L, (3, 2, 2), "int64", 9)),
    lambda L, F: F.nll_loss(_t(L, (3, 5, 2, 2, 2)), _t(L, (3, 2, 2), "int64")),
    # binary cross entropy: target dtype, weight broadcast
    lambda L, F: F.binary_cross_entropy(_t(L, (3,), fill=0.5), L.tensor([0, 1, 1])),
    lambda L, F: F.binary_cross_entropy(_t(L, (3,), fill=0.5), L.tensor([0.0, 1.0, 1.0], dtype=L.float64)),
    lambda L, F: F.binary_cross_entropy(_t(L, (3,), fill=0.5), L.tensor([False, True, True])),
    lambda L, F: F.binary_cross_entropy(_t(L, (3,), fill=0.5), _t(L, (3,)), weight=L.ones(2)),
    lambda L, F: F.binary_cross_entropy(_t(L, (3, 2), fill=0.5), _t(L, (3, 2)), weight=L.ones(3)),
    lambda L, F: F.binary_cross_entropy(_t(L, (3,), fill=1.5), L.tensor([0, 1, 1])),
    lambda L, F: F.binary_cross_entropy_with_logits(_t(L, (3,)), L.tensor([0, 1, 1])),
    lambda L, F: F.binary_cross_entropy_with_logits(_t(L, (3,)), L.tensor([0, 1, 1], dtype=L.int32)),
    lambda L, F: F.binary_cross_entropy_with_logits(_t(L, (3,)), L.tensor([False, True, True])),
    lambda L, F: F.binary_cross_entropy_with_logits(_t(L, (3,), "float64"), L.tensor([0, 1, 1])),
    # margins, huber
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), L.tensor([0, 1, 2], dtype=L.int32)),
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), L.tensor([0.0, 1.0, 2.0])),
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), L.tensor([0, 1, 7])),
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), L.tensor([0, 1, -1])),
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), L.tensor([0, 1])),
    lambda L, F: F.multi_margin_loss(_t(L, (5,)), L.tensor([0, 1])),
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), _t(L, (3, 5), "int64")),
    lambda L, F: F.multi_margin_loss(_t(L, (3, 5)), L.tensor([0, 1, 2]), weight=L.ones(4)),
    lambda L, F: F.multilabel_margin_loss(_t(L, (3, 5)), _t(L, (3, 5))),
    lambda L, F: F.multilabel_margin_loss(_t(L, (3, 5)), _t(L, (3, 4), "int64")),
    lambda L, F: F.multilabel_margin_loss(_t(L, (3, 5)), _t(L, (3, 5), "int64", 7)),
    lambda L, F: F.multilabel_margin_loss(_t(L, (3, 5)), _t(L, (3, 5), "int64", -2)),
    lambda L, F: F.cosine_embedding_loss(_t(L, (3, 2)), _t(L, (3, 2)), _t(L, (3, 2))),
    lambda L, F: F.soft_margin_loss(_t(L, (3,)), _t(L, (4,))),
    lambda L, F: F.huber_loss(_t(L, (3,)), _t(L, (3,)), delta=-1.0),
    lambda L, F: F.huber_loss(_t(L, (3,)), _t(L, (3,)), delta=0.0),
]


@pytest.mark.parametrize("i", range(len(LOSS_ERRORS)))
def test_loss_argument_errors(i):
    assert_same_error(lambda L: LOSS_ERRORS[i](L, L.nn.functional))


LOSS_EDGES = [  # shapes torch accepts that used to reach NumPy
    lambda L, F: F.cross_entropy(_t(L, (5,)), L.tensor([1])),
    lambda L, F: F.nll_loss(_t(L, (5,)), L.tensor([1])),
    lambda L, F: F.nll_loss(L.arange(5.0), L.tensor([1]), reduction="none"),
    lambda L, F: F.cross_entropy(L.arange(5.0), L.tensor([3]), reduction="none"),
    lambda L, F: F.nll_loss(L.arange(15.0).reshape(3, 5), L.tensor([0, 1, 2], dtype=L.uint8)),
]


@pytest.mark.parametrize("i", range(len(LOSS_EDGES)))
def test_loss_shapes_torch_accepts(i):
    check(lambda L: LOSS_EDGES[i](L, L.nn.functional))


def test_clip_grad_norm_inf_and_half_overflow_are_silent():
    """An inf gradient gives an inf norm and nan/0 gradients as in torch, with no NumPy warning (even when
    warnings are errors); so does a float16 product that overflows."""
    import warnings

    def fn(L):
        p = L.nn.Parameter(L.ones(3))
        p.grad = L.tensor([float("inf"), 1.0, 2.0])
        norm = L.nn.utils.clip_grad_norm_([p], 1.0)
        q = L.nn.Parameter(L.ones(3))
        q.grad = L.tensor([1e30, -1e30, 0.0])
        L.nn.utils.clip_grad_value_([q], 1.0)
        h = L.full((2,), 60000.0, dtype=L.float16)
        return norm, p.grad, q.grad, h * 2, h + h, h * 1e-8

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(fn)
