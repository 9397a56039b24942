"""The bad-input sweep (tests/fuzz/sweep.py) finds no internal error, and the causes it found give torch's
class and message (issue 25: "bad input everywhere a user types").

`test_sweep_finds_no_internal_error` runs the whole sweep in three parts (the functions' namespaces, the Tensor
methods, the nn layers', optimizers' and DataLoader's arguments; about 19,000 calls in all, ~20 s) in ember and
torch.
`CALLS` holds one call per fixed cause, compared class AND message with torch.
"""

import pytest
import torch
from compare import assert_same_error

import ember
from tests.fuzz.sweep import sweep

_GROUPS = {"functions": r"^(?!Tensor\.|nn\.[A-Z]|optim\.|utils\.)", "methods": r"^Tensor\.",
           "constructors": r"^(nn\.[A-Z]|optim\.|utils\.)"}


@pytest.mark.parametrize("group", _GROUPS)
def test_sweep_finds_no_internal_error(group):
    found, calls = sweep(_GROUPS[group])
    assert calls > {"functions": 9000, "methods": 5000, "constructors": 1000}[group]
    assert not found, "\n".join(f"{n}{a}: ember {type(e).__name__}: {str(e)[:120]} | torch {type(t).__name__}: "
                                f"{str(t)[:120]}" for n, a, e, t in found[:10])


def _x(lib):
    return lib.ones(2, 3)


# one call per cause fixed, each raising in torch: the same class and message in ember
CALLS = {
    # torch's Python functions that call one native (NOTE [ Python functions of torch that call one native ])
    "cross_entropy-str-target": lambda lib, x: lib.nn.functional.cross_entropy(x, "a"),
    "nll_loss-none-target": lambda lib, x: lib.nn.functional.nll_loss(x, None),
    "kl_div-float-target": lambda lib, x: lib.nn.functional.kl_div(x, 1.5),
    "multi_margin_loss-int-target": lambda lib, x: lib.nn.functional.multi_margin_loss(x, 100),
    "soft_margin_loss-str": lambda lib, x: lib.nn.functional.soft_margin_loss(x, "a"),
    "triplet_margin_loss-str-negative": lambda lib, x: lib.nn.functional.triplet_margin_loss(x, x, "a"),
    "cosine_embedding_loss-str-target": lambda lib, x: lib.nn.functional.cosine_embedding_loss(x, x, "a"),
    "bce_with_logits-str-weight": lambda lib, x: lib.nn.functional.binary_cross_entropy_with_logits(x, x, "a"),
    "batch_norm-int-running_mean": lambda lib, x: lib.nn.functional.batch_norm(x, 0, None),
    "instance_norm-int-running_mean": lambda lib, x: lib.nn.functional.instance_norm(lib.ones(2, 3, 4), 1),
    "instance_norm-spatial-size": lambda lib, x: lib.nn.functional.instance_norm(x, "a"),
    "layer_norm-tensor-shape": lambda lib, x: lib.nn.functional.layer_norm(x, x, "a"),
    "dropout-str": lambda lib, x: lib.nn.functional.dropout("a"),
    "hardtanh-none": lambda lib, x: lib.nn.functional.hardtanh(None),
    "relu-float": lambda lib, x: lib.nn.functional.relu(1.5),
    "gumbel_softmax-str": lambda lib, x: lib.nn.functional.gumbel_softmax("a"),
    "unfold-str-kernel": lambda lib, x: lib.nn.functional.unfold(x, "a"),
    "unfold-zero-kernel": lambda lib, x: lib.nn.functional.unfold(lib.ones(()), 0),
    "unfold-low-rank": lambda lib, x: lib.nn.functional.unfold(x, 1),
    "unfold-no-blocks": lambda lib, x: lib.nn.functional.unfold(lib.ones(1, 2, 4, 4), 5),
    "unfold-kernel-length": lambda lib, x: lib.nn.functional.unfold(lib.ones(1, 2, 4, 4), (2, 2, 2)),
    "adaptive_max_pool1d-str": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, "a"),
    "lp_pool1d-str-kernel": lambda lib, x: lib.nn.functional.lp_pool1d(x, x, "a"),
    "pdist-0d": lambda lib, x: lib.nn.functional.pdist(lib.ones(())),
    "pdist-negative-p": lambda lib, x: lib.nn.functional.pdist(lib.ones(3, 2), -1),
    "pdist-str-p": lambda lib, x: lib.nn.functional.pdist(lib.ones(3, 2), "a"),
    "gaussian_nll_loss-int-var": lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, 1),
    "gaussian_nll_loss-var-size": lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, lib.ones(3)),
    "embedding_bag-2d-offsets": lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(2, 2, dtype=lib.long), x, lib.tensor([0])),
    "embedding_bag-1d-no-offsets": lambda lib, x: lib.nn.functional.embedding_bag(lib.zeros(4, dtype=lib.long), x),
    "embedding_bag-weight-rank": lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(2, 2, dtype=lib.long), lib.ones(5)),
    "embedding_bag-mode": lambda lib, x: lib.nn.functional.embedding_bag(
        lib.zeros(2, 2, dtype=lib.long), x, mode="bad"),
    "lu-str": lambda lib, x: lib.lu("a"),
    "unique-none": lambda lib, x: lib.unique(None),
    "unique_consecutive-float": lambda lib, x: lib.unique_consecutive(1.5),
    "cdist-str": lambda lib, x: lib.cdist(x, "a"),
    "numel-str": lambda lib, x: lib.numel("a"),
    "linalg-svdvals-none": lambda lib, x: lib.linalg.svdvals(None),
    "masked_scatter-int-mask": lambda lib, x: lib.masked_scatter(x, 0, None),
    # parameters of the wrong type that reached a NumPy kernel
    "histc-str-bins": lambda lib, x: lib.histc(x, "a"),
    "histc-tensor-bins": lambda lib, x: lib.histc(x, x.long()),
    "histogram-float-bins": lambda lib, x: lib.histogram(x, 1.5),
    "logit-str-eps": lambda lib, x: lib.logit(x, "a"),
    "special-logit-str-eps": lambda lib, x: lib.special.logit(x, "a"),
    "chebyshev-none-n": lambda lib, x: lib.special.chebyshev_polynomial_t(x, None),
    "hermite-by-getattr-none-n": lambda lib, x: getattr(lib.special, "hermite_polynomial_" + "h")(x, None),
    "legendre-int-input-none-n": lambda lib, x: lib.special.legendre_polynomial_p(x.int(), None),
    "layer_norm-str-eps": lambda lib, x: lib.nn.functional.layer_norm(x, (3,), eps="a"),
    "rfftfreq-str-d": lambda lib, x: lib.fft.rfftfreq(4, "a"),
    "fftfreq-none-d": lambda lib, x: lib.fft.fftfreq(4, None),
    "clamp-str-max": lambda lib, x: lib.clamp(x, 0.0, "a"),
    "clamp-kw-str-max": lambda lib, x: lib.clamp(x, min=0.0, max="a"),
    "clamp-str-min": lambda lib, x: lib.clamp(x, "a"),
    "select_copy-float-index": lambda lib, x: lib.select_copy(x, 0, 1.5),
    "method-select-float-index": lambda lib, x: x.select(0, 1.5),
    "narrow-float-start": lambda lib, x: lib.narrow(x, 0, 0.5, 1),
    # torch's own Python checks and first checks, in its order
    "einsum-no-operand": lambda lib, x: lib.einsum(None),
    "einsum-str-operand": lambda lib, x: lib.einsum("ij", "a"),
    "einsum-int-equation": lambda lib, x: lib.einsum(1, x),
    "einsum-list-element": lambda lib, x: lib.einsum("ij", [x, 1]),
    "einsum-sublist-range": lambda lib, x: lib.einsum(x, [0, 60]),
    "broadcast_shapes-float": lambda lib, x: lib.broadcast_shapes(1.5),
    "as_tensor-positional-dtype": lambda lib, x: lib.as_tensor(x, 100),
    "from_dlpack-str": lambda lib, x: lib.from_dlpack("a"),
    "split-0d": lambda lib, x: lib.split(lib.ones(()), 0),
    "unsafe_split-0d": lambda lib, x: lib.unsafe_split(lib.ones(()), 0),
    "tensor_split-0d": lambda lib, x: lib.tensor_split(lib.ones(()), 0),
    "searchsorted-0d-boundaries": lambda lib, x: lib.searchsorted(lib.ones(()), 0),
    "searchsorted-2d-scalar": lambda lib, x: lib.searchsorted(lib.ones(2, 2), 0),
    "tensordot-none-dims": lambda lib, x: lib.tensordot(x, 0, None),
    "tensordot-dims-bound": lambda lib, x: lib.tensordot(x, x, 3),
    "device-index": lambda lib, x: lib.ones(1, device=0),
    "to-device-index": lambda lib, x: x.to(100),
    "method-type-int": lambda lib, x: x.type(100),
    "method-softmax-str-dim": lambda lib, x: x.softmax("a", 1),
    "method-softmax-int-dtype": lambda lib, x: x.softmax(0, 1),
    "method-view_as-str": lambda lib, x: x.view_as("a"),
    "method-expand_as-none": lambda lib, x: x.expand_as(None),
    "method-reshape_as-int": lambda lib, x: x.reshape_as(1),
    "method-type_as-str": lambda lib, x: x.type_as("a"),
    "max_unpool1d-str-kernel": lambda lib, x: lib.nn.functional.max_unpool1d(x, x, "a"),
    # Tensor methods
    "method-atan2_-none": lambda lib, x: x.atan2_(None),
    "method-hypot_-none": lambda lib, x: x.hypot_(None),
    "method-fmod_-none": lambda lib, x: x.fmod_(None),
    "method-arctan2-none": lambda lib, x: x.arctan2(None),
    "method-put_-int-index": lambda lib, x: x.put_(0, None),
    "method-masked_fill_-int-mask": lambda lib, x: x.masked_fill_(0, None),
    "method-take_along_dim-int": lambda lib, x: x.take_along_dim(0, "a"),
    "method-random_-str": lambda lib, x: x.random_("a"),
    "method-random_-float": lambda lib, x: x.random_(0, 1.5),
    "method-unflatten-none": lambda lib, x: x.unflatten(0, None),
    "method-unflatten-str": lambda lib, x: x.unflatten(0, "a"),
    "method-index_put-str": lambda lib, x: x.index_put("a", 1),
    "method-index_put_-int": lambda lib, x: x.index_put_(1, 1),
}


@pytest.mark.parametrize("name", CALLS)
def test_fixed_causes_raise_torchs_error(name):
    assert_same_error(lambda lib: CALLS[name](lib, _x(lib)))


def test_einsum_sublist_form_runs():
    a, b = torch.arange(6.0).reshape(2, 3), torch.arange(12.0).reshape(3, 4)
    want = torch.einsum(a, [0, 1], b, [1, 2], [0, 2])
    got = ember.einsum(ember.tensor(a.numpy()), [0, 1], ember.tensor(b.numpy()), [1, 2], [0, 2])
    assert got.tolist() == want.tolist()
