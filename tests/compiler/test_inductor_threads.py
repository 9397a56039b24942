"""The generated C kernels on several threads: ember's own pool (ember/_native/threadpool.c,
ember/_inductor/threads.py).

- Every kernel shape the code generator prints (pointwise chains, row reductions fused with their producers
  and consumers, column reductions, several outer dimensions, integers), forward and backward, at 2 threads
  with the size threshold off (every loop split), equals torch and equals the 1-thread result bit for bit.
- Which kernels go parallel: the threshold weighs elements by their work.
- The pool survives fork() (the child starts its own workers) and two Python threads calling kernels at once.
"""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from compare import check

import ember
from ember._inductor import threads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def two_threads(monkeypatch):
    """2 threads, and every kernel loop split whatever its size."""
    before = ember.get_num_threads()
    monkeypatch.setattr(threads, "PARALLEL_SIZE", 0)
    ember.set_num_threads(2)
    yield
    ember.set_num_threads(before)


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# name -> (fn(lib, *xs), inputs): one entry per kernel form of codegen_c.py
CASES = {
    "pointwise chain, 1-D": (lambda L, x: ((x * 1.5 + 0.25).sigmoid() * 2).exp(), [_f32(4099)]),
    "pointwise, three outer dims": (lambda L, x, y: (x * y.transpose(1, 2)).tanh(),
                                    [_f32(5, 7, 9, 11), _f32(5, 9, 7, 11, seed=1)]),
    "softmax rows (reductions fused)": (lambda L, x: L.nn.functional.softmax(x * 2.0, -1) + x,
                                        [_f32(37, 130)]),
    "column sum (bias gradient form)": (lambda L, x: (x * x).sum(0), [_f32(300, 77)]),
    "column sum over two dims": (lambda L, x: x.exp().sum((0, 1)), [_f32(6, 50, 130)]),
    "middle reduction": (lambda L, x: x.amax(1) - x.mean(1), [_f32(9, 40, 17)]),
    "integers": (lambda L, a: (a * 3 + 1) % 7 - a.abs(), [np.arange(-500, 500, dtype=np.int64)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernels_on_two_threads_match_torch_and_one_thread(name, two_threads):
    fn, inputs = CASES[name]
    ember._dynamo.reset()
    compiled = ember.compile(lambda *xs: fn(ember, *xs))
    grad = all(x.dtype.kind == "f" for x in inputs)
    check(lambda L, *xs: (compiled if L is ember else lambda *a: fn(L, *a))(*xs), *inputs, grad=grad,
          rtol=1e-5, atol=1e-5)
    xs = [ember.from_numpy(x) for x in inputs]
    before = threads.loops_run()
    two = compiled(*xs).numpy()
    assert threads.loops_run() > before  # its loops did go to the pool
    ember.set_num_threads(1)
    one = compiled(*xs).numpy()
    np.testing.assert_array_equal(two, one)


def test_threshold_weighs_elements_by_work():
    cf = sys.modules["ember._inductor.compile_fx"]
    seen = []
    orig = cf.compile_fx

    def spy(gm, ex=None, backend=None):
        g = orig(gm, ex, backend)
        seen.append(g)
        return g
    cf.compile_fx = spy
    try:
        x = ember.randn(1 << 15)
        ember.compile(lambda a: a + 1)(x)
        ember.compile(lambda a: (a.exp() * 0.5).sigmoid())(x)
    finally:
        cf.compile_fx = orig
    plain, costly = (g.wrapper_source for g in seen)
    n = 1 << 15
    assert f"_threads({n})" in plain  # a copy-like loop: its elements
    assert f"_threads({n * (1 + 2 * threads._COST)})" in costly  # two exp-like functions per element
    assert threads.threads_for(n) == 1
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        assert threads.threads_for(n * (1 + 2 * threads._COST)) == 2
    finally:
        ember.set_num_threads(before)


_FORK = r"""
import os, numpy as np, ember
from ember._inductor import threads
threads.PARALLEL_SIZE = 0
ember.set_num_threads(2)
f = ember.compile(lambda x: (x * 3).sin().sum(-1))
x = ember.from_numpy(np.linspace(-2, 2, 64 * 257, dtype=np.float32).reshape(64, 257))
ref = f(x).numpy()
pid = os.fork()
if pid == 0:
    ok = all(np.array_equal(f(x).numpy(), ref) for _ in range(20))
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
assert os.WEXITSTATUS(status) == 0, status
assert np.array_equal(f(x).numpy(), ref)
print("ok")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_pool_after_fork():
    env = dict(os.environ, PYTHONPATH=ROOT, EMBER_INDUCTOR_BACKEND="c")
    out = subprocess.run([sys.executable, "-c", _FORK], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.split() == ["ok"], out.stderr[-2000:]


def test_two_python_threads_call_kernels_at_once(two_threads):
    ember._dynamo.reset()
    f = ember.compile(lambda x: (x * 0.5).tanh() * 2 + x)
    xs = [ember.from_numpy(_f32(50, 513, seed=s)) for s in range(2)]
    refs = [(x * 0.5).tanh() * 2 + x for x in xs]
    for x in xs:  # compile both before the threads start
        f(x)
    bad = []

    def run(i):
        for _ in range(30):
            if not np.array_equal(f(xs[i]).numpy(), refs[i].numpy()):
                bad.append(i)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad
