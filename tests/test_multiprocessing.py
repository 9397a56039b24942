"""Tensors shared between processes, against torch: share_memory_/is_shared, and tensors sent through a
multiprocessing queue being shared, not copied (a child's in-place write is seen by the parent), under both
sharing strategies and both start methods."""

import ast
import functools
import importlib
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.multiprocessing  # noqa: F401 - registers torch's reducers (as ember.multiprocessing does ember's)
from compare import check, normalize_message

import ember
import ember.multiprocessing  # noqa: F401


def _child(q, done):
    x = q.get()
    x.add_(1)
    view = q.get()
    view[0] = 100
    p = q.get()
    done.put((x.is_shared(), view.is_shared(), type(p).__name__, p.requires_grad, p.is_shared(), x.shape))
    p.data.mul_(-1)


def _run(libname, method, strategy):
    lib = importlib.import_module(libname)
    mp = importlib.import_module(libname + ".multiprocessing")
    old = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        ctx = multiprocessing.get_context(method)
        q, done = ctx.Queue(), ctx.Queue()
        t = lib.zeros(2, 3)
        view = t[1]
        param = lib.nn.Parameter(lib.ones(2))
        proc = ctx.Process(target=_child, args=(q, done))
        proc.start()
        q.put(t)
        q.put(view)
        q.put(param)
        seen = done.get(timeout=120)
        proc.join(timeout=120)
        return (seen[:5], tuple(seen[5]), proc.exitcode, t.tolist(), param.tolist(), t.is_shared(),
                view.is_shared(), param.is_shared())
    finally:
        mp.set_sharing_strategy(old)


STRATEGIES = sorted(torch.multiprocessing.get_all_sharing_strategies())
METHODS = ["fork", "spawn"]


@functools.lru_cache(maxsize=1)
def _torch_outcomes():
    """torch's outcomes, from one fresh interpreter: torch's file_system strategy starts a `torch_shm_manager`
    process that lives as long as the process that started it, which must not be this test process."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path[:0] = [{here!r}]; import test_multiprocessing as T; "
            f"print(repr({{(m, s): T._run('torch', m, s) for m in {METHODS!r} for s in {STRATEGIES!r}}}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("method", METHODS)
def test_queue_shares_memory(method, strategy):
    assert _run("ember", method, strategy) == _torch_outcomes()[method, strategy]


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.share_memory_(),
    lambda lib, x: (x.share_memory_(), x.is_shared(), x.untyped_storage().is_shared())[1:],
    lambda lib, x: (x.is_shared(), x.untyped_storage().is_shared()),
    lambda lib, x: (lambda y: (y.share_memory_(), y[1:].is_shared(), y.t().contiguous().is_shared()))(x.t())[1:],
    lambda lib, x: (lambda y: (y.share_memory_(), y.stride(), y.storage_offset(), y))(x[1:, ::2]),
    lambda lib, x: x.clone().share_memory_().add_(1),
    lambda lib, x: (lambda m: (m.share_memory(), [p.is_shared() for p in m.parameters()])[1])(lib.nn.Linear(3, 2)),
    lambda lib, x: x.to("meta").is_shared(),
    lambda lib, x: x.to("meta").share_memory_(),
])
def test_share_memory(fn):
    check(fn, np.arange(12, dtype=np.float32).reshape(3, 4))


def test_share_memory_keeps_grad():
    for lib in (torch, ember):
        x = lib.ones(3, requires_grad=True)
        x.share_memory_()
        (x * 2).sum().backward()
        assert x.is_shared() and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_non_leaf_with_grad_cannot_be_sent():
    messages = []
    for lib in (torch, ember):
        from multiprocessing.reduction import ForkingPickler

        with pytest.raises(RuntimeError) as err:
            ForkingPickler.dumps(lib.ones(2, requires_grad=True) * 2)
        messages.append(normalize_message(str(err.value)))
    assert messages[1] == messages[0]
