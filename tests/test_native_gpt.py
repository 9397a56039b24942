"""The small GPT's eager train step on one and two threads (issue 18): the kernels its transformer layers run,
against torch and against the NumPy code they replace.

- matmul of a batch of rows by one matrix, (..., M, K) @ (K, N), is one folded GEMM forward and backward
  (NOTE [ Folding a batch of rows ] in ember/_ops/linalg.py), whatever the first operand's layout;
- batched float32 products split over the kernels' threads (NOTE [ Batched products on the team ] in
  ember/_native/batched.c) give NumPy's matmul bit for bit at any thread count, for every layout BLAS takes;
- softmax over causally masked (-inf) scores (NOTE [ No underflow for masked lanes ] in common.h);
- Adam over all parameters in one native loop (NOTE [ One Adam loop over all parameters ] in optim.c) gives
  the same bits as one update per parameter;
- the whole train step of a small GPT (2 encoder layers, causal mask) against torch at 1 and 2 threads.
"""

import numpy as np
import pytest
import torch
from compare import assert_same, check

import ember
from ember import _native
from ember._native import batched
from ember._native import ops as native_ops


@pytest.fixture
def native_on(monkeypatch):
    monkeypatch.setattr(_native, "_OFF", False)
    assert _native.available("batched"), "no working C compiler: " + str(_native._compiler())


@pytest.fixture
def two_threads():
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        yield
    finally:
        ember.set_num_threads(old)


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- (..., M, K) @ (K, N): one folded product --------------------------------------------------------------

# (stored shape, permutation making the operand, weight shape (N, K)): the operand is a view, as the
# in-projection's (L, N, E) transpose of batch-first activations is
_FOLD = [
    ((4, 6, 8), (1, 0, 2), (5, 8)),        # batch and sequence dims transposed (MHA, batch_first)
    ((4, 6, 8), (0, 1, 2), (5, 8)),        # contiguous
    ((3, 4, 6, 8), (2, 0, 1, 3), (7, 8)),  # 4-d
    ((4, 8, 6), (0, 2, 1), (5, 8)),        # the contracted dim strided
    ((0, 6, 8), (1, 0, 2), (5, 8)),        # no rows
    ((16, 64, 128), (1, 0, 2), (384, 128)),  # the small GPT's in-projection: large enough for two threads
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("stored,perm,wshape", _FOLD)
@pytest.mark.parametrize("threads", [1, 2])
def test_matmul_folds_rows_forward_and_backward(stored, perm, wshape, dtype, threads):
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        # (operands scaled as a layer's initialisation and normalised activations are: outputs and gradients
        # of order 1, so float32 sums over K = 384 and the weight gradient's over all rows stay within the
        # default tolerance of torch's differently ordered sums)
        x = _rand(stored, dtype) * dtype(max(np.prod(stored[:-1]), 1) ** -0.5)
        scale = dtype(wshape[1] ** -0.5)
        w = _rand(wshape, dtype, 1) * scale
        bias = _rand(wshape[:1], dtype, 2)  # (its gradient is a plain sum over the rows: not compared here)
        check(lambda L, x, w, b: L.nn.functional.linear(x.permute(*perm), w, b), x, w, bias, grad=[0, 1])
        check(lambda L, x, w: x.permute(*perm) @ w, x, _rand(wshape[::-1], dtype, 1) * scale, grad=True)
    finally:
        ember.set_num_threads(old)


def test_folded_weight_gradient_is_one_product():
    """The matrix's gradient is one (K, rows) @ (rows, N) product: no batch of products summed afterwards."""
    x = ember.from_numpy(_rand((4, 6, 8))).permute(1, 0, 2).requires_grad_()
    w = ember.from_numpy(_rand((8, 5), seed=1)).requires_grad_()
    seen = []
    with ember.autograd.profiler.profile() as prof:
        (x @ w).sum().backward()
    seen = [e.name for e in prof.function_events]
    assert "aten::mm" in seen and "aten::sum_to_size" not in seen, seen


# ---- batched products on the team --------------------------------------------------------------------------

def _layouts():
    """(a, b) pairs of every layout the batched kernel takes, as attention makes them."""
    q = _rand((2, 5, 3, 4)).transpose(0, 2, 1, 3)  # (2, 3, 5, 4) strided heads
    k = _rand((2, 5, 3, 4), seed=1).transpose(0, 2, 1, 3)
    w = _rand((2, 3, 5, 5), seed=2)
    return [
        (q, k.swapaxes(-1, -2)),                 # scores: q @ k^T
        (w, k),                                  # weights @ v
        (w.swapaxes(-1, -2), q),                 # the gradients' transposed operands
        (k.swapaxes(-1, -2), w),
        (_rand((3, 1, 5, 7)), _rand((4, 7, 2))),  # broadcast batch dims, a missing leading dim
        (_rand((1, 5, 7))[[0, 0, 0]], _rand((3, 7, 2))),
        (_rand((16, 4, 64, 32)), _rand((16, 4, 32, 64), seed=1)),
    ]


@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("case", range(7))
def test_batched_products_are_numpys_at_every_thread_count(case):
    a, b = _layouts()[case]
    ref = np.matmul(a, b)
    for threads in (1, 2, 3):
        c = batched.bmm(a, b, threads)
        assert c is not None and c.flags.c_contiguous
        assert c.shape == ref.shape and np.array_equal(c, ref), threads


@pytest.mark.usefixtures("native_on")
def test_batched_products_refuse_what_blas_cannot_take():
    a = _rand((3, 4, 5))
    assert batched.bmm(a[:, :, ::2], _rand((3, 3, 2)), 2) is None      # no unit stride
    assert batched.bmm(a.astype(np.float64), _rand((3, 5, 2), np.float64), 2) is None
    assert batched.bmm(a, _rand((2, 5, 2)), 2) is None                # batch dims that do not broadcast
    assert batched.bmm(a, _rand((3, 5, 0)), 2) is None                # empty


@pytest.mark.usefixtures("native_on", "two_threads")
@pytest.mark.parametrize("fn", [
    lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
    lambda L, q, k, v: L.bmm(q.flatten(0, 1), k.flatten(0, 1).transpose(1, 2)),
    lambda L, q, k, v: q.transpose(1, 2) @ k.transpose(1, 2).mT,
])
def test_attention_products_at_two_threads_match_torch(fn):
    check(fn, _rand((4, 4, 64, 32)), _rand((4, 4, 64, 32), seed=1), _rand((4, 4, 64, 32), seed=2), grad=True)


# ---- softmax of masked scores ------------------------------------------------------------------------------

@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("log", [False, True])
def test_causal_softmax_matches_torch(log):
    """Half the scores -inf (and values far below -110, which give exact zeros) through the native kernel."""
    x = _rand((16, 4, 64, 64)) * 3
    x[..., 0, 5] = -200.0
    x = x + np.triu(np.full((64, 64), -np.inf, np.float32), 1)
    assert x.size >= native_ops.MIN_SIZE
    name = "log_softmax" if log else "softmax"
    # (log_softmax's masked outputs are -inf: the harness's weighted sum of them has no gradient to compare)
    out = check(lambda L, a: getattr(L, name)(a, -1), x, grad=not log)[0]
    if not log:
        assert np.all(out.detach().numpy()[..., np.triu_indices(64, 1)[0], np.triu_indices(64, 1)[1]] == 0)


# ---- Adam over all parameters in one loop ------------------------------------------------------------------

@pytest.mark.usefixtures("native_on")
@pytest.mark.parametrize("kwargs", [{}, {"amsgrad": True, "weight_decay": 0.1}, {"maximize": True},
                                    {"weight_decay": 0.01, "betas": (0.3, 0.9)}])
@pytest.mark.parametrize("opt", ["Adam", "AdamW"])
def test_adam_many_is_one_update_per_parameter(opt, kwargs, monkeypatch):
    """The fused loop (small and large, float32 and float64 parameters mixed) gives the bits of the
    per-parameter updates, and torch's values."""
    shapes = [(3,), (70000,), (5, 4), (1,), (40000, 2)]
    dtypes = [np.float32, np.float32, np.float64, np.float32, np.float32]
    runs = {}
    for fused in (True, False):
        if not fused:
            monkeypatch.setattr(native_ops, "adam_many", lambda params, *a: range(len(params)))
        ps = [ember.from_numpy(_rand(s, d, i)).requires_grad_()
              for i, (s, d) in enumerate(zip(shapes, dtypes))]
        o = getattr(ember.optim, opt)(ps, lr=0.01, **kwargs)
        for k in range(3):
            for i, p in enumerate(ps):
                p.grad = ember.from_numpy(_rand(p.shape, dtypes[i], 10 * k + i))
            o.step()
        runs[fused] = [p.detach().numpy().copy() for p in ps]
    for a, b in zip(runs[True], runs[False]):
        assert np.array_equal(a, b)
    ts = [torch.from_numpy(_rand(s, d, i)).requires_grad_() for i, (s, d) in enumerate(zip(shapes, dtypes))]
    o = getattr(torch.optim, opt)(ts, lr=0.01, **kwargs)
    for k in range(3):
        for i, p in enumerate(ts):
            p.grad = torch.from_numpy(_rand(tuple(p.shape), dtypes[i], 10 * k + i))
        o.step()
    for a, t in zip(runs[True], ts):
        assert_same(ember.from_numpy(a), t.detach())


@pytest.mark.usefixtures("native_on", "two_threads")
def test_adam_many_leaves_a_parameter_listed_twice_to_the_loop():
    """A parameter listed twice is updated twice in turn (torch warns and does so), never by two threads at
    once."""
    runs = []
    for lib in (ember, torch):
        p = lib.from_numpy(_rand((70000,))).requires_grad_()
        with pytest.warns(UserWarning):
            o = lib.optim.Adam([p, p], lr=0.01)
        for k in range(2):
            p.grad = lib.from_numpy(_rand((70000,), seed=k))
            o.step()
        runs.append(p)
    assert_same(runs[0].detach(), runs[1].detach())


# ---- the train step ----------------------------------------------------------------------------------------

def _gpt(L):
    nn = L.nn

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(100, 32)
            layer = nn.TransformerEncoderLayer(32, 4, 64, 0.0, batch_first=True)
            self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(32, 100)
            self.mask = nn.Transformer.generate_square_subsequent_mask(16)

        def forward(self, x):
            return self.head(self.blocks(self.embed(x), mask=self.mask))
    return GPT()


@pytest.mark.parametrize("threads", [1, 2])
def test_small_gpt_train_steps_match_torch(threads):
    torch.manual_seed(0)
    tm = _gpt(torch)
    em = _gpt(ember)
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 100, (4, 16)), rng.integers(0, 100, (4, 16))
    old = ember.get_num_threads()
    ember.set_num_threads(threads)
    try:
        losses = {}
        for L, model in ((torch, tm), (ember, em)):
            # (SGD: the key bias's gradient is zero up to rounding, as softmax ignores a per-row constant, and
            # Adam would scale that rounding noise up to full steps; Adam's loop is tested above)
            opt = L.optim.SGD(model.parameters(), lr=0.1)
            losses[L] = []
            for _ in range(3):
                opt.zero_grad()
                out = model(L.from_numpy(x))
                loss = L.nn.functional.cross_entropy(out.reshape(-1, 100), L.from_numpy(y).reshape(-1))
                loss.backward()
                opt.step()
                losses[L].append(loss.item())
    finally:
        ember.set_num_threads(old)
    np.testing.assert_allclose(losses[ember], losses[torch], rtol=1e-5)
    for (k, pe), pt in zip(em.named_parameters(), tm.parameters()):
        assert_same(pe.detach(), pt.detach(), rtol=1e-4, atol=1e-5, path=k)
