"""F.ctc_loss / nn.CTCLoss against torch: losses and log_probs gradients for every reduction, padded and
concatenated targets, lengths as tensors or tuples, blank, zero_infinity, unbatched inputs; torch's errors."""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check

import ember

rng = np.random.default_rng(0)
T, N, C, S = 12, 4, 6, 4
X = rng.standard_normal((T, N, C)).astype(np.float32)
TG = rng.integers(1, C, (N, S))
TG[0, 1] = TG[0, 0]  # a repeated label: the s-2 skip is forbidden there
IL = np.array([12, 10, 7, 3])
TL = np.array([4, 3, 0, 3])
CAT = np.concatenate([TG[i, :TL[i]] for i in range(N)])
IMPOSSIBLE_IL = np.array([12, 2, 7, 3])  # sample 1 needs >= 3 steps (or more with repeats)


def _lens(lib, a, kind):
    return lib.from_numpy(a.copy()) if kind == "tensor" else tuple(int(v) for v in a)


CASES = [
    ("mean", dict(), TG, IL, TL, "tensor"),
    ("sum", dict(reduction="sum"), TG, IL, TL, "tensor"),
    ("none", dict(reduction="none"), TG, IL, TL, "tensor"),
    ("tuples", dict(reduction="none"), TG, IL, TL, "tuple"),
    ("concat", dict(), CAT, IL, TL, "tensor"),
    ("concat_tuples", dict(reduction="sum"), CAT, IL, TL, "tuple"),
    ("blank_last", dict(blank=C - 1, reduction="none"), TG - 1, IL, TL, "tensor"),
    ("int32_targets", dict(), TG.astype(np.int32), IL.astype(np.int32), TL.astype(np.int32), "tensor"),
    ("impossible_inf", dict(reduction="none"), TG, IMPOSSIBLE_IL, TL, "tensor"),
    ("zero_infinity", dict(reduction="none", zero_infinity=True), TG, IMPOSSIBLE_IL, TL, "tensor"),
    ("zero_infinity_mean", dict(zero_infinity=True), TG, IMPOSSIBLE_IL, TL, "tensor"),
    ("zero_length_input", dict(reduction="none"), TG, np.array([0, 0, 7, 3]), np.array([0, 1, 0, 3]), "tensor"),
    ("all_empty_targets", dict(), TG, IL, np.zeros(N, np.int64), "tensor"),
]


@pytest.mark.parametrize("name,kw,tg,il,tl,kind", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("through_log_softmax", [True, False])
def test_ctc_loss_matches_torch(name, kw, tg, il, tl, kind, through_log_softmax):
    def fn(lib, x, tg_):
        lp = x.log_softmax(2) if through_log_softmax else x
        return lib.nn.functional.ctc_loss(lp, tg_, _lens(lib, il, kind), _lens(lib, tl, kind), **kw)
    check(fn, X, tg, grad=[0], rtol=1e-4, atol=1e-5)


def test_ctc_loss_float64_unbatched_and_module():
    x = X.astype(np.float64)
    check(lambda lib, a, t, i, n: lib.nn.functional.ctc_loss(a.log_softmax(2), t, i, n), x, TG, IL, TL, grad=[0])
    check(lambda lib, a, t: lib.nn.functional.ctc_loss(a[:, 0].log_softmax(1), t[0], lib.tensor(12), lib.tensor(4),
                                                       reduction="none"), X, TG, grad=[0], rtol=1e-4, atol=1e-5)
    check(lambda lib, a, t: lib.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)(
        a.log_softmax(2), t, lib.from_numpy(IMPOSSIBLE_IL), lib.from_numpy(TL)), X, TG, grad=[0], rtol=1e-4, atol=1e-5)


def test_ctc_loss_long_sequence_stays_finite():
    x = (rng.standard_normal((200, 2, 30)) * 5).astype(np.float32)
    tg = rng.integers(1, 30, (2, 60))
    check(lambda lib, a, t: lib.nn.functional.ctc_loss(a.log_softmax(2), t, (200, 150), (60, 41), reduction="none"),
          x, tg, grad=[0], rtol=2e-4, atol=1e-4)


def test_ctc_graph_and_double_backward_refusal():
    outs = {}
    for lib in (torch, ember):
        lp = lib.from_numpy(X.copy()).requires_grad_()
        args = (lp, lib.from_numpy(TG), lib.from_numpy(IL), lib.from_numpy(TL))
        F = lib.nn.functional
        names = [type(F.ctc_loss(*args, reduction=r).grad_fn).__name__ for r in ("none", "mean", "sum")]
        names.append(type(F.ctc_loss(*args, reduction="none", zero_infinity=True).grad_fn).__name__)
        g, = lib.autograd.grad(F.ctc_loss(*args).sum(), lp, create_graph=True)
        try:
            g.sum().backward()
            err = None
        except RuntimeError as e:
            err = str(e)
        outs[lib] = (names, g.requires_grad, err)
    assert outs[ember] == outs[torch]


ERRORS = [
    ("blank_high", lambda F, x, t, i, n: F.ctc_loss(x, t, i, n, blank=C)),
    ("blank_neg", lambda F, x, t, i, n: F.ctc_loss(x, t, i, n, blank=-1)),
    ("il_size", lambda F, x, t, i, n: F.ctc_loss(x, t, i[:2], n)),
    ("tl_size", lambda F, x, t, i, n: F.ctc_loss(x, t, i, n[:2])),
    ("il_big", lambda F, x, t, i, n: F.ctc_loss(x, t, i + 1, n)),
    ("il_neg", lambda F, x, t, i, n: F.ctc_loss(x, t, i - 4, n)),
    ("tl_neg", lambda F, x, t, i, n: F.ctc_loss(x, t, i, n - 1)),
    ("tl_big", lambda F, x, t, i, n: F.ctc_loss(x, t, i, n + 1)),
    ("concat_size", lambda F, x, t, i, n: F.ctc_loss(x, t.reshape(-1)[:5], i, n)),
    ("target_rows", lambda F, x, t, i, n: F.ctc_loss(x, t[:2], i, n)),
    ("log_probs_4d", lambda F, x, t, i, n: F.ctc_loss(x[None], t, i, n)),
    ("log_probs_1d", lambda F, x, t, i, n: F.ctc_loss(x[0, 0], t, i, n)),
    ("targets_3d", lambda F, x, t, i, n: F.ctc_loss(x, t[None], i, n)),
    ("half", lambda F, x, t, i, n: F.ctc_loss(x.half(), t, i, n)),
    ("long", lambda F, x, t, i, n: F.ctc_loss(x.long(), t, i, n)),
    ("reduction", lambda F, x, t, i, n: F.ctc_loss(x, t, i, n, reduction="foo")),
    ("float_lengths", lambda F, x, t, i, n: F.ctc_loss(x, t, i.float(), n)),
    ("mixed_lengths", lambda F, x, t, i, n: F.ctc_loss(x, t, i.tolist(), n)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_ctc_loss_errors(name, fn):
    match = name != "mixed_lengths"  # the TypeError lists the Python argument types; the class is checked
    assert_same_error(lambda lib, *a: fn(lib.nn.functional, *a), X, TG, IL, TL, match_message=match)


def test_ctc_module_repr_and_state():
    assert repr(ember.nn.CTCLoss(blank=2)) == repr(torch.nn.CTCLoss(blank=2))
    m = ember.nn.CTCLoss(reduction="none", zero_infinity=True)
    assert (m.blank, m.reduction, m.zero_infinity) == (0, "none", True)
    assert_same(m(ember.from_numpy(X).log_softmax(2), ember.from_numpy(TG), ember.from_numpy(IL),
                  ember.from_numpy(TL)),
                torch.nn.CTCLoss(reduction="none", zero_infinity=True)(
                    torch.from_numpy(X).log_softmax(2), torch.from_numpy(TG), torch.from_numpy(IL),
                    torch.from_numpy(TL)), rtol=1e-4, atol=1e-5)
