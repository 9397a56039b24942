"""Threads: what each thread sees of global state, and training in several threads at once (issue 25).

- Which state is per thread and which is shared: each setter (grad mode, inference mode, autocast, the
  default dtype, anomaly detection, deterministic algorithms, ...) is switched on in one thread while a second
  thread, held at a barrier, reads the matching getter. ember must see what torch sees, setter by setter.
- The random number generator is shared and locked: four threads drawing from the default generator at once
  get, between them, exactly the blocks that one thread drawing in sequence gets (no draw is duplicated, lost
  or torn), as torch's generator mutex guarantees.
- Training in threads: four threads each train their own model (an MLP, a CNN, an LSTM, a transformer
  layer; one under autocast, one with evaluation under no_grad between steps), stepping in lockstep so that
  their ops interleave, and each ends with the losses and weights it gets alone, bit for bit.
"""

import threading

import numpy as np
import pytest
import torch

import ember

LIBS = {"ember": ember, "torch": torch}


# -- which state is per thread ------------------------------------------------------------------------------

def _seen_from_other_thread(enter, read):
    """Run `enter()` (a context manager factory) in thread A; while A is inside, read `read()` in thread B."""
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def a():
        with enter():
            inside.set()
            seen["a_released"] = done.wait(120)

    def b():
        # (a wait that timed out would read the state before A set it: say so rather than compare it)
        seen["b_waited"] = inside.wait(120)
        seen["value"] = read()
        done.set()

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen["b_waited"] and seen["a_released"], "a thread timed out at the handshake"
    return seen["value"], read()  # (what B saw, what the main thread sees afterwards)


def _setting(setter, getter, on, off):
    """A context manager factory that calls setter(on) and restores setter(off) (for plain setter functions)."""
    import contextlib

    @contextlib.contextmanager
    def cm():
        setter(on)
        try:
            yield
        finally:
            setter(off)
    return cm


STATES = {
    "no_grad": lambda L: (L.no_grad, L.is_grad_enabled),
    "set_grad_enabled": lambda L: (lambda: L.set_grad_enabled(False), L.is_grad_enabled),
    "inference_mode": lambda L: (L.inference_mode, L.is_inference_mode_enabled),
    "autocast": lambda L: (lambda: L.autocast("cpu", dtype=L.bfloat16), lambda: L.is_autocast_enabled("cpu")),
    "autocast_dtype": lambda L: (lambda: L.autocast("cpu", dtype=L.float16),
                                 lambda: _name(L.get_autocast_dtype("cpu"))),
    "default_dtype": lambda L: (_setting(L.set_default_dtype, None, L.float64, L.float32),
                                lambda: _name(L.get_default_dtype())),
    "detect_anomaly": lambda L: (lambda: L.autograd.set_detect_anomaly(True), L.is_anomaly_enabled),
    "deterministic": lambda L: (_setting(L.use_deterministic_algorithms, None, True, False),
                                L.are_deterministic_algorithms_enabled),
    "saved_tensors_hooks": lambda L: _saved_hooks_state(L),
    "forward_ad_level": lambda L: (L.autograd.forward_ad.dual_level, lambda: _dual_level_open(L)),
    "torch_function_mode": lambda L: _mode_state(L, L.overrides.TorchFunctionMode, "__torch_function__"),
    "torch_dispatch_mode": lambda L: _mode_state(L, L.utils._python_dispatch.TorchDispatchMode,
                                                 "__torch_dispatch__"),
    "fake_tensor_mode": lambda L: (L._subclasses.fake_tensor.FakeTensorMode,
                                   lambda: type(L.ones(2)).__name__),
    "printoptions": lambda L: (lambda: _printoptions(L), lambda: repr(L.tensor([1.23456789]))),
}


def _name(dtype):
    return str(dtype).split(".")[-1]


def _saved_hooks_state(L):
    """(enter, read): hooks that count what they pack; read says whether an op here was packed by them."""
    packed = []

    def pack(t):
        packed.append(1)
        return t

    def read():
        before = len(packed)
        L.ones(2, requires_grad=True) * 2.0 * L.ones(2)  # a product saves its inputs
        return len(packed) > before
    return (lambda: L.autograd.graph.saved_tensors_hooks(pack, lambda t: t)), read


def _mode_state(L, base, method):
    """(enter, read) for a user mode class: read says whether an op here went through the mode."""
    seen = []

    def handler(self, func, types, args=(), kwargs=None):
        seen.append(1)
        return func(*args, **(kwargs or {}))

    mode = type("Counting", (base,), {method: handler})

    def read():
        before = len(seen)
        L.ones(2) + 1
        return len(seen) > before
    return mode, read


def _printoptions(L):
    import contextlib

    @contextlib.contextmanager
    def cm():
        L.set_printoptions(precision=2)
        try:
            yield
        finally:
            L.set_printoptions(profile="default")
    return cm()


def _dual_level_open(L):
    try:
        L.autograd.forward_ad.make_dual(L.ones(1), L.ones(1))
        return True
    except RuntimeError:
        return False


@pytest.mark.parametrize("name", list(STATES))
def test_state_is_per_thread_or_shared_as_in_torch(name):
    seen = {}
    for lib, L in LIBS.items():
        enter, read = STATES[name](L)
        seen[lib] = _seen_from_other_thread(enter, read)
    assert seen["ember"] == seen["torch"]


# -- the random number generator ----------------------------------------------------------------------------

DRAWS = {
    "rand": lambda L: L.rand(37),
    "randn": lambda L: L.randn(37),  # odd size: uses the cached second Box-Muller value between draws
    "randn_scalar": lambda L: L.randn(()),
    "randint": lambda L: L.randint(0, 1000, (5,)),
    "normal_double": lambda L: L.randn(3, dtype=L.float64),
    "randperm": lambda L: L.randperm(50),
    "dropout": lambda L: L.nn.functional.dropout(L.ones(40), 0.5),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_threads_share_the_default_generator_draw_by_draw(name):
    draw, per_thread, n_threads = DRAWS[name], 40, 4
    for lib, L in LIBS.items():
        L.manual_seed(123)
        sequential = {draw(L).numpy().tobytes() for _ in range(per_thread * n_threads)}
        L.manual_seed(123)
        got, barrier = [[] for _ in range(n_threads)], threading.Barrier(n_threads)

        def work(out):
            barrier.wait()
            for _ in range(per_thread):
                out.append(draw(L).numpy().tobytes())

        ts = [threading.Thread(target=work, args=(got[i],)) for i in range(n_threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        drawn = [b for out in got for b in out]
        # every draw a whole block of the sequential stream: none repeated, none torn, none lost
        assert len(set(drawn)) == len(drawn) == per_thread * n_threads, lib
        assert set(drawn) == sequential, lib


# -- training in four threads at once -----------------------------------------------------------------------

def _mlp(L):
    return L.nn.Sequential(L.nn.Linear(20, 32), L.nn.GELU(), L.nn.Linear(32, 5))


def _cnn(L):
    nn = L.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 4 * 4, 5))


def _lstm(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = L.nn.LSTM(6, 16, batch_first=True)
            self.head = L.nn.Linear(16, 5)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])
    return M()


def _transformer(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = L.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            self.head = L.nn.Linear(16, 5)

        def forward(self, x):
            return self.head(self.layer(x).mean(1))
    return M()


MODELS = {  # name: (build, input shape, autocast in the step, evaluate under no_grad between steps)
    "mlp": (_mlp, (8, 20), False, True),
    "cnn": (_cnn, (8, 3, 8, 8), False, False),
    "lstm": (_lstm, (8, 7, 6), False, True),
    "transformer": (_transformer, (8, 4, 16), True, False),
}


def _train(name, barrier=None, steps=4):
    """Train model `name` for a few steps in ember; its losses and final weights as NumPy arrays."""
    build, shape, autocast, evaluate = MODELS[name]
    rng = np.random.default_rng(len(name))
    gen = ember.Generator().manual_seed(len(name))  # this thread's own stream (the default one is shared)
    model = build(ember)  # (its initial weights, drawn from the shared stream, are overwritten)
    for p in model.parameters():
        with ember.no_grad():
            p.copy_(ember.randn(p.shape, generator=gen) * 0.2)
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    x = ember.from_numpy(rng.standard_normal(shape).astype(np.float32))
    y = ember.from_numpy(rng.integers(0, 5, shape[0]))
    losses = []
    for _ in range(steps):
        if barrier is not None:
            barrier.wait()  # the threads step in lockstep, so their ops interleave
        opt.zero_grad()
        with ember.autocast("cpu", dtype=ember.bfloat16, enabled=autocast):
            loss = ember.nn.functional.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        assert ember.is_grad_enabled() and ember.is_autocast_enabled("cpu") is False
        if evaluate:
            with ember.no_grad():
                losses.append(model(x).sum().item())
    return [np.array(losses)] + [p.detach().numpy().copy() for p in model.parameters()]


def test_four_threads_train_their_own_models_and_each_gets_its_single_threaded_result():
    alone = {name: _train(name) for name in MODELS}
    barrier, results, errors = threading.Barrier(len(MODELS)), {}, []

    def work(name):
        try:
            results[name] = _train(name, barrier)
        except BaseException as e:  # noqa: BLE001 - reported below, with the thread's model
            errors.append((name, e))
            barrier.abort()

    ts = [threading.Thread(target=work, args=(name,)) for name in MODELS]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for name in MODELS:
        for a, b in zip(results[name], alone[name]):
            np.testing.assert_array_equal(a, b, err_msg=name)
