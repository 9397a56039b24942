"""AOT autograd on reference models (benchmarks/models.py's MLP and LeNet, a CNN with batch norm) and on the
partitioners, held to eager ember (which the model tests hold to torch) and to torch's partitioner.

A compiled module (`aot_module_simplified` with the identity compilers, i.e. the `aot_eager` backend) must
give the eager loss and the eager gradients of every parameter, step after step of SGD; buffers the
model updates in place (batch norm's running statistics) must be written back. The min-cut partitioner
must save no more than save-all, and fewer where torch's saves fewer.
"""

import importlib.util
import pathlib

import numpy as np
import pytest
import torch
from torch._functorch.aot_autograd import aot_function as torch_aot_function
from torch._functorch.partitioners import default_partition as torch_default
from torch._functorch.partitioners import min_cut_rematerialization_partition as torch_min_cut

import ember
from ember._functorch.aot_autograd import aot_eager, aot_function, aot_module, nop
from ember._functorch.partitioners import default_partition, min_cut_rematerialization_partition

_spec = importlib.util.spec_from_file_location(
    "bench_models", pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "models.py")


def _models():
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
    mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(mod)
    return mod


M = _models()
rng = np.random.default_rng(0)
MODELS = [
    ("mlp", M.mlp, lambda: (rng.standard_normal((8, 784)).astype(np.float32), rng.integers(0, 10, 8))),
    ("lenet", M.lenet, lambda: (rng.standard_normal((4, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 4))),
    ("bn_cnn", lambda L: L.nn.Sequential(L.nn.Conv2d(1, 4, 3), L.nn.BatchNorm2d(4), L.nn.ReLU(), L.nn.Flatten(),
                                         L.nn.Linear(4 * 6 * 6, 10)),
     lambda: (rng.standard_normal((4, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, 4))),
]


def _loss(out, y):
    return ember.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("partition", ["min_cut", "default"])
@pytest.mark.parametrize("case", MODELS, ids=[m[0] for m in MODELS])
def test_compiled_model_equals_eager(case, partition):
    _, build, batch = case
    x_np, y_np = batch()
    ember.manual_seed(0)
    eager = build(ember)
    compiled_model = build(ember)
    compiled_model.load_state_dict(eager.state_dict())
    x, y = ember.from_numpy(x_np), ember.from_numpy(y_np)
    pf = min_cut_rematerialization_partition if partition == "min_cut" else default_partition
    gm = ember.fx.symbolic_trace(compiled_model) if partition == "min_cut" else None
    compiled = aot_eager(gm, [x]) if gm is not None else aot_module(compiled_model, nop, nop, partition_fn=pf)
    opts = [ember.optim.SGD(m.parameters(), lr=0.1) for m in (eager, compiled_model)]
    for _ in range(2):
        losses = []
        for fn, opt in ((eager, opts[0]), (compiled, opts[1])):
            opt.zero_grad()
            loss = _loss(fn(x), y)
            loss.backward()
            losses.append(loss)
            if fn is compiled and gm is not None:  # the traced module holds the same parameters
                for (n, p), (_, q) in zip(gm.named_parameters(), compiled_model.named_parameters()):
                    assert p is q, n
        assert abs(losses[0].item() - losses[1].item()) <= 1e-5 * max(1.0, abs(losses[0].item()))
        for (n, p), (_, q) in zip(eager.named_parameters(), compiled_model.named_parameters()):
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)
        for (n, b), (_, c) in zip(eager.named_buffers(), compiled_model.named_buffers()):
            np.testing.assert_allclose(c.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
        for opt in opts:
            opt.step()


# (id, fn(lib, x, w)): small forward functions whose backward needs forward values
FUNCTIONS = [
    ("pointwise_chain", lambda L, x, w: (x.sin().cos().exp() * 2).sum()),
    ("two_branches", lambda L, x, w: ((x * 3).sin() + (x * 2).cos()).exp().mean()),
    ("matmul_chain", lambda L, x, w: ((x @ w).tanh() @ w.t()).sum()),
    ("mlp_layer", lambda L, x, w: L.relu(x @ w).sigmoid().tanh().sum()),
]


def _saved(lib, fn, partition):
    counted = {}

    def fw_compiler(gm, example_inputs):
        out = next(n for n in gm.graph.nodes if n.op == "output")
        counted["saved"] = len(out.args[0]) - 1  # every forward output but the loss is saved
        return gm
    x = lib.from_numpy(np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)).requires_grad_()
    w = lib.from_numpy(np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)).requires_grad_()
    aot = torch_aot_function if lib is torch else aot_function
    bw = (lambda gm, ex: gm) if lib is torch else nop
    f = aot(lambda a, b: fn(lib, a, b), fw_compiler, bw, partition_fn=partition)
    loss = f(x, w)
    loss.backward()
    compiled_grads = [None if t.grad is None else t.grad.clone() for t in (x, w)]
    x.grad = w.grad = None
    fn(lib, x, w).backward()
    for c, t in zip(compiled_grads, (x, w)):
        assert (c is None and t.grad is None) or lib.allclose(c, t.grad)
    return counted["saved"]


@pytest.mark.parametrize("case", FUNCTIONS, ids=[c[0] for c in FUNCTIONS])
def test_min_cut_saves_fewer_where_torchs_does(case):
    _, fn = case
    t_all, t_cut = _saved(torch, fn, torch_default), _saved(torch, fn, torch_min_cut)
    e_all, e_cut = _saved(ember, fn, default_partition), _saved(ember, fn, min_cut_rematerialization_partition)
    assert e_cut <= e_all
    if t_cut < t_all:
        assert e_cut < e_all


def test_input_mutation_is_written_back_and_inference_runs_forward_only():
    def f(x, buf):
        buf.add_(x.detach().sum())
        return (x * buf).sum()
    x = ember.ones(3, requires_grad=True)
    buf = ember.zeros(3)
    compiled = aot_function(f, nop)
    out = compiled(x, buf)
    out.backward()
    assert buf.tolist() == [3.0, 3.0, 3.0] and x.grad.tolist() == [3.0, 3.0, 3.0] and out.item() == 9.0
    with ember.no_grad():
        assert compiled(x, buf).item() == 18.0 and buf.tolist() == [6.0, 6.0, 6.0]
