"""Every model of examples/ and benchmarks/models.py through `ember.compile`: the compiled forward and the
parameter gradients equal eager ember's (itself held to torch by the examples' and benchmarks' own tests),
and for the benchmark models (written once for both libraries) the graphs and breaks are torch's.
Each model runs with backend="eager" (capture alone) and "aot_eager" (capture, then AOT autograd); and
each trains for a few optimizer steps under "aot_eager" to the losses and weights of the same model
trained eagerly.
"""

import importlib.util
import os
import sys

import numpy as np
import pytest
import torch

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import models as BM  # noqa: E402


def _example(name):
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", os.path.join(ROOT, "examples", name, "main.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ints(high, shape):
    return lambda: ember.from_numpy(np.random.default_rng(0).integers(0, high, shape))


def _floats(*shape):
    return lambda: ember.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


MODELS = {
    "examples/gpt": (lambda: _example("gpt").GPT(65, dropout=0.0), _ints(65, (2, 16))),
    "examples/mnist": (lambda: _example("mnist").Net(), _floats(2, 1, 28, 28)),
    "examples/autoencoder": (lambda: _example("autoencoder").AutoEncoder(), _floats(2, 1, 28, 28)),
    "examples/char_lstm": (lambda: _example("char_lstm").CharLSTM(65), _ints(65, (2, 16))),
    "benchmarks/mlp": (lambda: BM.mlp(ember), _floats(4, 784)),
    "benchmarks/lenet": (lambda: BM.lenet(ember), _floats(2, 1, 28, 28)),
    "benchmarks/lstm_lm": (lambda: BM.lstm_lm(ember), _ints(1000, (2, 12))),
    "benchmarks/small_gpt": (lambda: BM.small_gpt(ember), _ints(1000, (2, 64))),
}


def _first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.fixture(autouse=True)
def _capture_rnns():
    """(C2) The LSTM models are captured, not skipped: torch's experimental `allow_rnn` knob, which ember
    honours as torch does (off by default: a frame reading an RNN module runs eagerly)."""
    saved, ember._dynamo.config.allow_rnn = ember._dynamo.config.allow_rnn, True
    yield
    ember._dynamo.config.allow_rnn = saved


CASES = [(name, backend) for name in MODELS for backend in ("eager", "aot_eager")]


@pytest.mark.parametrize("name,backend", CASES, ids=[f"{n}-{b}" for n, b in CASES])
def test_compiled_model_forward_and_gradients(name, backend):
    build, make_input = MODELS[name]
    ember.manual_seed(0)
    model = build()
    x = make_input()
    compiled = ember.compile(model, backend=backend)
    for step in range(2):  # the second call runs the cached entries
        ember.manual_seed(step)  # (dropout: the compiled graph draws the same random numbers as eager)
        out_c = _first(compiled(x))
        out_c.float().pow(2).mean().backward()
        grads_c = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        ember.manual_seed(step)
        out_e = _first(model(x))
        out_e.float().pow(2).mean().backward()
        np.testing.assert_allclose(out_c.detach().numpy(), out_e.detach().numpy(), rtol=1e-5, atol=1e-6)
        for gc, p in zip(grads_c, model.parameters()):
            np.testing.assert_allclose(gc.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)
        model.zero_grad()


@pytest.mark.parametrize("name", ["mlp", "lenet"])
def test_benchmark_models_graph_counts_match_torch(name):
    counts = {}
    for lib in (torch, ember):
        lib.manual_seed(0)
        model = getattr(BM, name)(lib)
        x = lib.randn(*((4, 784) if name == "mlp" else (2, 1, 28, 28)))
        ex = lib._dynamo.explain(model)(x)
        counts[lib.__name__] = (ex.graph_count, ex.graph_break_count)
    assert counts["ember"] == counts["torch"] == (1, 0)


@pytest.mark.parametrize("name", list(MODELS))
def test_model_trains_under_aot_eager_as_eagerly(name):
    """Three Adam steps of the model compiled with backend="aot_eager" and of the same model run eagerly: the
    losses of every step and the trained weights agree (the compiled forward, its AOT backward, and the
    optimizer reading the gradients it left in `.grad`)."""
    build, make_input = MODELS[name]
    x = make_input()
    losses, weights = {}, {}
    for backend in ("aot_eager", None):
        ember.manual_seed(0)
        model = build()
        run = ember.compile(model, backend=backend) if backend else model
        opt = ember.optim.Adam(model.parameters(), lr=1e-2)
        losses[backend] = []
        for step in range(3):
            ember.manual_seed(step)
            opt.zero_grad()
            loss = _first(run(x)).float().pow(2).mean()
            loss.backward()
            opt.step()
            losses[backend].append(loss.item())
        weights[backend] = [p.detach().numpy().copy() for p in model.parameters()]
    np.testing.assert_allclose(losses["aot_eager"], losses[None], rtol=1e-5, atol=1e-6)
    for wc, we in zip(weights["aot_eager"], weights[None]):
        np.testing.assert_allclose(wc, we, rtol=1e-5, atol=1e-6)
