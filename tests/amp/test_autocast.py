"""torch.autocast's API against torch's: the state functions, the context manager and decorator, nesting,
thread-locality, the weight cache, custom_fwd/custom_bwd, the deprecated per-device names, and training
under autocast (values and gradients). Each case runs the same function with `lib` = ember and torch and
compares what it returns and the warnings it gives (category and message).
"""

import gc
import threading
import warnings

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check, normalize_message

import ember
from ember._dispatch import _local, _modes


def _run(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(lib)
    return out, [(w.category.__name__, normalize_message(str(w.message))) for w in caught]


def both(fn):
    """fn(lib) in both libraries: the same results (dtypes compared as names) and the same warnings."""
    t, tw = _run(fn, torch)
    e, ew = _run(fn, ember)
    assert _plain(e) == _plain(t), f"ember {e!r} vs torch {t!r}"
    assert ew == tw, f"warnings: ember {ew} vs torch {tw}"
    assert not ember.is_autocast_enabled("cpu") and ember.autocast_increment_nesting() == 1
    assert ember.autocast_decrement_nesting() == 0 and ember.get_autocast_dtype("cpu") is ember.bfloat16
    gc.collect()  # (a fake tensor mode an earlier test left in a reference cycle keeps its class in `_modes`
    # until collected: see ember/_subclasses/fake_tensor.py; not a mode left on the stack)
    assert not _modes and not _local.above, "a mode was left on the stack"
    return e


def _plain(x):
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (torch.dtype, ember.dtype)):
        return str(x).split(".")[-1]
    return x


def _state(lib, dev="cpu"):
    return (lib.is_autocast_enabled(dev), lib.get_autocast_dtype(dev), lib.is_autocast_cache_enabled())


# ---- the state functions -------------------------------------------------------------------------------


def test_state_functions():
    def fn(lib):
        out = [_state(lib), _state(lib, "cuda"), lib.is_autocast_enabled()]
        for dev in ("cpu", "cuda", "meta", "xpu", "mps", "xla", "hpu"):
            out.append(lib.amp.is_autocast_available(dev))
        lib.set_autocast_enabled("cpu", True)
        lib.set_autocast_dtype("cpu", lib.float16)
        lib.set_autocast_cache_enabled(False)
        out.append(_state(lib))
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        lib.set_autocast_cache_enabled(True)
        lib.set_autocast_enabled(True)  # one argument: CUDA's, as torch
        out.append((lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda"), lib.is_autocast_enabled("cpu")))
        lib.set_autocast_enabled(False)
        out += [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()]
        lib.clear_autocast_cache()
        return out
    both(fn)


def test_deprecated_names():
    def fn(lib):
        out = [lib.get_autocast_cpu_dtype(), lib.get_autocast_gpu_dtype(), lib.is_autocast_cpu_enabled()]
        lib.set_autocast_cpu_enabled(True)
        out.append(lib.is_autocast_enabled("cpu"))
        lib.set_autocast_cpu_enabled(False)
        lib.set_autocast_cpu_dtype(lib.float16)
        out.append(lib.get_autocast_dtype("cpu"))
        lib.set_autocast_cpu_dtype(lib.bfloat16)
        return out
    both(fn)


@pytest.mark.parametrize("case", [
    lambda lib: lib.get_autocast_dtype("xyz"),
    lambda lib: lib.get_autocast_dtype(1),
    lambda lib: lib.get_autocast_dtype("meta"),
    lambda lib: lib.is_autocast_enabled("foo"),
    lambda lib: lib.autocast("meta"),
    lambda lib: lib.autocast(lib.device("cpu")),
    lambda lib: lib.autocast("cpu")(3),
    lambda lib: lib.amp.custom_fwd(device_type=lib.device("cpu")),
    lambda lib: lib.amp.custom_bwd(device_type=3),
])
def test_errors(case):
    assert_same_error(lambda lib: case(lib))


# ---- the context manager -------------------------------------------------------------------------------


def _mm_dtype(lib):
    a = lib.ones(2, 2)
    return (a @ a).dtype


def test_context_manager_nesting():
    def fn(lib):
        out = [_mm_dtype(lib)]
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out += [_state(lib), _mm_dtype(lib)]
            with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
                out += [_state(lib), _mm_dtype(lib)]
                with lib.autocast("cpu", enabled=False):
                    out += [_state(lib), _mm_dtype(lib)]
                out += [_state(lib), _mm_dtype(lib)]
            out += [_state(lib), _mm_dtype(lib)]
            with lib.amp.autocast("cpu"):  # dtype: the current one
                out.append(_state(lib))
        out += [_state(lib), _mm_dtype(lib)]
        try:
            with lib.autocast("cpu"):
                raise KeyError("x")
        except KeyError:
            out.append(_state(lib))
        return out
    both(fn)


def test_decorator_and_unsupported():
    def fn(lib):
        @lib.autocast("cpu", dtype=lib.float16)
        def f(x):
            return (x @ x).dtype, lib.is_autocast_enabled("cpu")
        out = [f(lib.ones(2, 2)), lib.is_autocast_enabled("cpu"), f.__name__]
        with lib.autocast("cpu", dtype=lib.float32):  # not a CPU autocast dtype: a warning, disabled
            out += [_state(lib), _mm_dtype(lib)]
        with lib.autocast("cpu", dtype=lib.float64):
            out.append(_state(lib))
        with lib.autocast("cuda"):  # no CUDA: a warning, disabled
            out += [_state(lib, "cuda"), _mm_dtype(lib)]
        with lib.cpu.amp.autocast():
            out += [_state(lib), _mm_dtype(lib)]
        with lib.cpu.amp.autocast(dtype=lib.float16):
            out.append(_state(lib))
        with lib.cuda.amp.autocast():
            out.append(_state(lib, "cuda"))
        return out
    both(fn)


def test_thread_local():
    def fn(lib):
        seen = []

        def worker():
            seen.append((_state(lib), _mm_dtype(lib)))
            with lib.autocast("cpu", dtype=lib.float16):
                seen.append((_state(lib), _mm_dtype(lib)))
        with lib.autocast("cpu", dtype=lib.bfloat16):
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            seen.append((_state(lib), _mm_dtype(lib)))
        return seen
    both(fn)


def test_no_mode_when_off():
    with ember.autocast("cpu"):
        assert len(_modes) == 1 and len(_local.above) == 1
        with ember.autocast("cpu", enabled=False):
            assert not _modes and not _local.above
    assert not _modes and not _local.above


# ---- the weight cache ----------------------------------------------------------------------------------


def test_weight_cache():
    def fn(lib):
        w = lib.nn.Parameter(lib.ones(3, 3))
        x = lib.ones(2, 3)
        out = []

        def cast_node(y):  # the ToCopyBackward0 node that feeds w's cast into mm
            return [n for n, _ in y.grad_fn.next_functions if n is not None and "ToCopy" in type(n).__name__]

        with lib.autocast("cpu"):
            a, b = x @ w, x @ w
            out.append(cast_node(a)[-1] is cast_node(b)[-1])  # one cast of the weight for the region
            with lib.autocast("cpu"):
                out.append(cast_node(x @ w)[-1] is cast_node(a)[-1])  # nested: the same region
            v = w.t()  # a view is cast anew each time
            out.append(cast_node(x @ v)[-1] is cast_node(x @ v)[-1])
        with lib.autocast("cpu"):
            out.append(cast_node(x @ w)[-1] is cast_node(a)[-1])  # cleared when the region ended
        with lib.autocast("cpu", cache_enabled=False):
            out.append(cast_node(x @ w)[-1] is cast_node(x @ w)[-1])
        with lib.autocast("cpu"):
            h = w * 1  # not a leaf: never cached
            out.append(cast_node(x @ h)[-1] is cast_node(x @ h)[-1])
        return out
    assert both(fn) == [True, True, False, False, False, False]


# ---- training under autocast ---------------------------------------------------------------------------


def _mlp(lib, rng_seed=0):
    rng = np.random.default_rng(rng_seed)
    m = lib.nn.Sequential(lib.nn.Linear(6, 8), lib.nn.ReLU(), lib.nn.LayerNorm(8), lib.nn.Linear(8, 4))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_training_values_and_grads(low):
    rng = np.random.default_rng(1)
    x_np = rng.standard_normal((5, 6)).astype(np.float32)
    y_np = rng.integers(0, 4, 5)
    res = {}
    for lib in (torch, ember):
        m = _mlp(lib)
        with lib.autocast("cpu", dtype=getattr(lib, low)):
            out = m(lib.from_numpy(x_np))
            loss = lib.nn.functional.cross_entropy(out, lib.from_numpy(y_np))
            mse = lib.nn.functional.mse_loss(out, lib.zeros(5, 4))
        (loss + mse).backward()
        res[lib] = [out, loss, mse] + [p.grad for p in m.parameters()]
    # every value here went through the lower precision (the float32 losses and gradients too): torch's
    # within that precision's rounding, dtypes exactly
    rtol, atol = {"bfloat16": (1.6e-2, 1e-2), "float16": (1e-3, 1e-3)}[low]
    assert_same(res[ember], res[torch], check_stride=False, rtol=rtol, atol=atol)


# ---- custom_fwd / custom_bwd -----------------------------------------------------------------------------


def _custom_function(lib, cast):
    class MyMM(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32 if cast else None)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.seen = [a.dtype, b.dtype, lib.is_autocast_enabled("cpu")]
            return a.mm(b)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ctx.seen += [g.dtype, lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu")]
            return g.mm(b.t()), a.t().mm(g)
    return MyMM


@pytest.mark.parametrize("cast", [True, False])
def test_custom_fwd_bwd(cast):
    def fn(lib):
        f = _custom_function(lib, cast)
        a = lib.ones(2, 3, requires_grad=True)
        b = lib.ones(3, 2, dtype=lib.bfloat16, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.float16):
            y = f.apply(a, b)
        y.float().sum().backward()
        node = y.grad_fn
        return [y.dtype, a.grad.dtype, b.grad.dtype, list(node.seen)]
    both(fn)


def test_cuda_amp_deprecated_decorators():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            @lib.cuda.amp.custom_fwd
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @lib.cuda.amp.custom_bwd
            def backward(ctx, g):
                return g * 2
        x = lib.ones(2, requires_grad=True)
        F.apply(x).sum().backward()
        return x.grad.tolist()
    both(fn)


# ---- the seeds' snippets -------------------------------------------------------------------------------


def test_seed_003_amp():
    # seed 003 §2: `from torch.cuda.amp import autocast, GradScaler` around a step (CPU: both disabled)
    def fn(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(4, 2)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
        loss_fn = lib.nn.MSELoss()
        inputs, targets = lib.ones(3, 4), lib.zeros(3, 2)
        scaler = lib.cuda.amp.GradScaler()
        with lib.cuda.amp.autocast():
            outputs = model(inputs)
            loss = loss_fn(outputs, targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return [outputs.dtype, scaler.is_enabled(), scaler.get_scale(), round(loss.item(), 5),
                model.weight.detach().numpy().round(5).tolist()]
    both(fn)


def test_seed_000_precision_aware_training():
    # seed 000 §3.2: PrecisionAwareTraining (torch.cuda.amp on a CPU: disabled) and its custom policy
    def fn(lib):
        class PrecisionAwareTraining(lib.nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model
                self.scaler = lib.cuda.amp.GradScaler()

            def forward(self, x, targets=None):
                with lib.cuda.amp.autocast():
                    outputs = self.model(x)
                    if targets is not None:
                        loss = lib.nn.functional.cross_entropy(outputs, targets)
                        self.scaler.scale(loss).backward()
                        self.scaler.unscale_(self.optimizer)
                        lib.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=1.0)
                        self.scaler.step(self.optimizer)
                        self.scaler.update()
                        return outputs, loss
                return outputs

            def custom_precision_policy(self):
                from importlib import import_module
                autocast = import_module(lib.__name__ + ".cuda.amp").autocast
                policy_dict = {lib.nn.LayerNorm: lib.float32, lib.nn.Embedding: lib.float32}
                return autocast(dtype=lib.float16, enabled=True, cache_enabled=True, custom_ops=policy_dict)

        lib.manual_seed(0)
        t = PrecisionAwareTraining(lib.nn.Linear(4, 3))
        t.optimizer = lib.optim.SGD(t.parameters(), lr=0.1)
        out, loss = t(lib.ones(2, 4), lib.tensor([0, 2]))
        try:
            t.custom_precision_policy()
        except TypeError as e:
            err = str(e)
        return [out.dtype, round(loss.item(), 5), err]
    both(fn)


# ---- functions outside the OpInfo table ------------------------------------------------------------------

_FUNCS = {  # name: (fn(lib, *tensors), input shapes); each runs under bfloat16 autocast
    "pad_reflect": (lambda L, x: L.nn.functional.pad(x, (1, 1), mode="reflect"), [(2, 3, 5)]),
    "pad_replicate": (lambda L, x: L.nn.functional.pad(x, (1, 1, 1, 1), mode="replicate"), [(1, 2, 3, 5)]),
    "pad_reflect_mixed": (lambda L, x: L.nn.functional.pad(x.bfloat16(), (1, 1), mode="reflect"), [(2, 3, 5)]),
    "pad_replicate_mixed": (lambda L, x: L.nn.functional.pad(x.bfloat16(), (1, 2), mode="replicate"), [(2, 3, 5)]),
    "pad_constant_mixed": (lambda L, x: L.nn.functional.pad(x.bfloat16(), (1, 2), value=0.5), [(2, 3, 5)]),
    "conv_tbc": (lambda L, x, w, b: L.conv_tbc(x, w, b), [(5, 2, 3), (3, 3, 4), (4,)]),
    "bce": (lambda L, x, y: L.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid()), [(3,), (3,)]),
    "multihead_attention": (lambda L, x: L.nn.MultiheadAttention(4, 2)(x, x, x)[0], [(3, 2, 4)]),
    "addmv": (lambda L, x, m, v: L.addmv(x, m, v), [(3,), (3, 4), (4,)]),
    "matmul_1d": (lambda L, m, v: L.matmul(m, v), [(4,), (4,)]),
    "tensordot": (lambda L, m, v: L.tensordot(m, v, 1), [(3, 4), (4, 2)]),
    "pinverse": (lambda L, m: L.pinverse(m), [(3, 4)]),
    "inverse": (lambda L, m: L.inverse(m), [(3, 3)]),
    "lstm_cell": (lambda L, x: L.nn.LSTMCell(4, 3)(x)[0], [(2, 4)]),
    "gru_cell": (lambda L, x: L.nn.GRUCell(4, 3)(x), [(2, 4)]),
    "embedding_bag": (lambda L, w: L.nn.functional.embedding_bag(L.tensor([[0, 1]]), w), [(3, 4)]),
    "bilinear": (lambda L, x, y, w: L.nn.functional.bilinear(x, y, w), [(2, 3), (2, 4), (5, 3, 4)]),
    "group_norm": (lambda L, x: L.nn.functional.group_norm(x, 1), [(2, 4, 3)]),
    "stft": (lambda L, x: L.stft(x, 8, return_complex=True), [(32,)]),
    "linear_mixed": (lambda L, x, w, b: L.nn.functional.linear(x.bfloat16(), w, b), [(2, 3), (4, 3), (4,)]),
    "conv_transpose2d_mixed": (lambda L, x, w: L.nn.functional.conv_transpose2d(x.bfloat16(), w),
                               [(1, 2, 3, 3), (2, 3, 2, 2)]),
    "sdpa_mixed": (lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q.bfloat16(), k, v),
                   [(2, 3, 4), (2, 5, 4), (2, 5, 4)]),
}


@pytest.mark.parametrize("name", list(_FUNCS))
def test_functions(name):
    fn, shapes = _FUNCS[name]
    rng = np.random.default_rng(0)

    def run(lib, *xs):
        lib.manual_seed(0)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            return fn(lib, *xs)
    # (values within bfloat16's rounding: the inputs of these went through it)
    check(run, *[rng.standard_normal(s).astype(np.float32) for s in shapes], rtol=1.6e-2, atol=1e-2,
          check_stride=False)
