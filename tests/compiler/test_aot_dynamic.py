"""Dynamic sizes through AOT autograd (NOTE [ Dynamic sizes through AOT ] in ember/_functorch/_dynamic.py).

- The same script in ember and torch 2.13 (a model compiled with an AOT backend whose compilers count their
  calls, run at several batch sizes): the backend is called, and the forward and backward graphs compiled,
  as many times as torch's, by default (automatic dynamic), with dynamic=True and with mark_dynamic; the
  outputs and parameter gradients at each size are torch's.
- `aot_function` directly: a graph whose shape arguments follow two sizes (a product among them) is traced
  once for them and then runs new sizes, computing those arguments from its inputs' sizes; a function whose
  structure changes with a size keeps that size static (traced per value), as torch guards on it.
"""

import numpy as np
import pytest
import torch
from compare import assert_same
from functorch.compile import make_boxed_func
from torch._functorch.aot_autograd import aot_module_simplified as torch_aot_module_simplified

import ember
from ember._functorch.aot_autograd import aot_function, aot_module_simplified

SIZES = (2, 3, 5, 7, 4)


def _lenet(L):
    nn = L.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(4 * 3 * 3, 5))


def _mlp(L):
    nn = L.nn
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


MODELS = {"mlp": (_mlp, (8,)), "lenet": (_lenet, (1, 8, 8))}


def _run(L, name, mode):
    build, feature = MODELS[name]
    L.manual_seed(0)
    model = build(L)
    counts = {"backend": 0, "fw": 0, "bw": 0}

    def backend(gm, example_inputs):
        counts["backend"] += 1

        def compiler(kind):
            def compile_(g, ex):
                counts[kind] += 1
                return make_boxed_func(g.forward) if L is torch else g
            return compile_
        simplified = torch_aot_module_simplified if L is torch else aot_module_simplified
        return simplified(gm, example_inputs, fw_compiler=compiler("fw"), bw_compiler=compiler("bw"))
    L._dynamo.reset()
    compiled = L.compile(model, backend=backend, **({"dynamic": True} if mode == "dynamic" else {}))
    results = []
    for b in SIZES:
        x = L.from_numpy(np.random.default_rng(b).standard_normal((b, *feature)).astype(np.float32))
        if mode == "mark":
            L._dynamo.mark_dynamic(x, 0)
        out = compiled(x)
        out.pow(2).sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
        model.zero_grad()
    return counts, results


@pytest.mark.parametrize("mode", ["auto", "dynamic", "mark"])
@pytest.mark.parametrize("name", list(MODELS))
def test_new_batch_sizes_compile_as_often_as_torch(name, mode):
    e_counts, e_results = _run(ember, name, mode)
    t_counts, t_results = _run(torch, name, mode)
    assert e_counts == t_counts
    for (eo, eg), (to, tg) in zip(e_results, t_results):
        assert_same(eo, to, rtol=1e-5, atol=1e-6)
        for a, b in zip(eg, tg):
            assert_same(a, b, rtol=1e-5, atol=1e-6, check_stride=False)


def _same(got, want):  # (compiled against eager ember, itself held to torch by the OpInfo tests)
    assert (tuple(got.shape), got.stride(), got.dtype) == (tuple(want.shape), want.stride(), want.dtype)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)


def _counting():
    counts = {"fw": 0, "bw": 0}

    def compiler(kind):
        def compile_(g, ex):
            counts[kind] += 1
            return g
        return compile_
    return counts, compiler("fw"), compiler("bw")


def test_shape_arguments_become_expressions_of_the_sizes():
    def f(x, w):  # (batch, seq, 4) -> a view over batch * seq rows, a sum per row and a new size
        return (x.reshape(x.shape[0] * x.shape[1], 4) @ w).tanh().reshape(x.shape[0], x.shape[1], 3)

    counts, fw, bw = _counting()
    compiled = aot_function(f, fw, bw)
    compiled.dynamic_dims = {0: {0, 1}}
    w = ember.from_numpy(np.random.default_rng(0).standard_normal((4, 3))).requires_grad_()
    for b, s in [(2, 3), (3, 5), (6, 2), (2, 2)]:
        x_np = np.random.default_rng(b * s).standard_normal((b, s, 4))
        x = ember.from_numpy(x_np).requires_grad_()
        out = compiled(x, w)
        out.sum().backward()
        xe, we = ember.from_numpy(x_np).requires_grad_(), w.detach().requires_grad_()
        ref = f(xe, we)
        ref.sum().backward()
        for got, want in ((out, ref), (x.grad, xe.grad), (w.grad, we.grad)):
            _same(got, want)
        w.grad = None
    assert counts == {"fw": 1, "bw": 1}
    (entry,) = compiled.generalized
    code = entry.compiled.fw_graph.code
    assert "size(0)" in code and "size(1)" in code and "mul" in code


def test_a_size_the_structure_depends_on_stays_static():
    def f(x):  # a Python branch on the size: the graph differs above 4 rows
        return x.sin() if x.shape[0] > 4 else x.cos().reshape(x.shape[0], 2, -1)

    counts, fw, bw = _counting()
    compiled = aot_function(f, fw, bw)
    compiled.dynamic_dims = {0: {0}}
    for b in (3, 4, 3):
        x_np = np.random.default_rng(b).standard_normal((b, 6))
        out = compiled(ember.from_numpy(x_np).requires_grad_())
        _same(out, f(ember.from_numpy(x_np)))
    assert counts["fw"] == 2  # rows 3 and 4 traced each (rows 5, 6 in the variants change the structure)
    assert not compiled.generalized
