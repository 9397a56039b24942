"""Leaks (issue 25): graphs freed by reference counting alone, and no process or shared memory left behind.

NOTE [ No reference cycles ]
CPython frees an object the moment its last reference goes, except objects in a reference cycle, which wait
for the cyclic garbage collector; a training step that builds a cycle holding tensors keeps their memory
until a collection happens to run, so memory grows and falls in a saw-tooth and peaks higher. ember builds
none: each workload below runs with the collector off and `gc.DEBUG_SAVEALL`, and `gc.collect()` must find
nothing. The usual culprit is a closure that calls itself (function -> cell -> function): ember writes such
recursions as module-level functions. (torch's own checkpoint, vmap and profiler do leave cycles; ember's
profiler keeps torch's parent <-> children links between its events and is not in the table.)

The soak runs (10k steps, memory sampled every 500) are `python -m tests.soak`; see tests/soak.py.
"""

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ember
from ember import nn

F = nn.functional


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


X = ember.from_numpy(np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32))
Y = ember.from_numpy(np.random.default_rng(1).integers(0, 4, 8))


def _train_step(model, opt, out_fn=None):
    opt.zero_grad()
    out = model(X) if out_fn is None else out_fn(model)
    F.cross_entropy(out, Y).backward()
    opt.step()


def plain():
    m = _model()
    opt = ember.optim.SGD(m.parameters(), 0.1, momentum=0.9)
    sched = ember.optim.lr_scheduler.StepLR(opt, 2)
    return lambda: (_train_step(m, opt), sched.step())


def checkpointed(reentrant):
    def make():
        m = _model()
        opt = ember.optim.Adam(m.parameters(), 1e-3)
        run = lambda m: ember.utils.checkpoint.checkpoint(m, X.clone().requires_grad_(),  # noqa: E731
                                                          use_reentrant=reentrant)
        return lambda: _train_step(m, opt, run)
    return make


def amp():
    m = _model()
    opt = ember.optim.SGD(m.parameters(), 0.1)
    scaler = ember.amp.GradScaler("cpu")

    def step():
        opt.zero_grad()
        with ember.autocast("cpu", dtype=ember.bfloat16):
            loss = F.cross_entropy(m(X), Y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


def double_backward():
    m = _model()

    def step():
        x = X.clone().requires_grad_()
        g, = ember.autograd.grad(m(x).pow(2).sum(), x, create_graph=True)
        g.sum().backward()
    return step


def retained():
    m = _model()

    def step():
        loss = m(X).sum()
        loss.backward(retain_graph=True)
        loss.backward()
    return step


class _Square(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return 2 * a * g


def custom_function():
    return lambda: _Square.apply(X.clone().requires_grad_()).sum().backward()


def hooks():
    m = _model()

    def step():
        x = X.clone().requires_grad_()
        y = x * 2
        y.register_hook(lambda g: g * 3)
        h = m.register_forward_hook(lambda mod, i, o: None)
        m(y).sum().backward()
        h.remove()
    return step


def data_loader(workers):
    def make():
        ds = ember.utils.data.TensorDataset(ember.randn(32, 3), ember.arange(32))
        loader = ember.utils.data.DataLoader(ds, batch_size=8, shuffle=True, num_workers=workers)
        return lambda: [b for b in loader]
    return make


def vmap_grad():
    m = _model()
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, x, y):
        return F.cross_entropy(ember.func.functional_call(m, p, (x[None],)), y[None])
    per_sample = ember.func.vmap(ember.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per_sample(params, X, Y)


def jacobians():
    f = lambda x: (x.sin() * x).sum(0)  # noqa: E731
    return lambda: (ember.func.jacrev(f)(X), ember.func.jacfwd(f)(X), ember.func.hessian(lambda x: f(x).sum())(X[0]))


def forward_ad():
    m = _model()

    def step():
        with ember.autograd.forward_ad.dual_level():
            d = ember.autograd.forward_ad.make_dual(X, ember.ones_like(X))
            return ember.autograd.forward_ad.unpack_dual(m(d)).tangent
    return step


def compiled(backend):
    def make():
        m = _model()
        opt = ember.optim.SGD(m.parameters(), 0.1)
        cm = ember.compile(m, backend=backend)
        return lambda: _train_step(cm, opt)
    return make


def recurrent():
    lstm = nn.LSTM(4, 8, 2)
    x = ember.randn(5, 3, 4)
    return lambda: lstm(x)[0].sum().backward()


def attention():
    mha = nn.MultiheadAttention(16, 2)
    q = ember.randn(4, 2, 16)
    return lambda: mha(q, q, q)[0].sum().backward()


def state_dicts():
    m = _model()
    opt = ember.optim.Adam(m.parameters(), 1e-3)
    _train_step(m, opt)
    sd, osd = m.state_dict(), opt.state_dict()
    return lambda: (m.load_state_dict(sd), opt.load_state_dict(osd))


WORKLOADS = {
    "train_step": plain, "checkpoint": checkpointed(False), "checkpoint_reentrant": checkpointed(True),
    "autocast_gradscaler": amp, "double_backward": double_backward, "retain_graph": retained,
    "custom_function": custom_function, "hooks": hooks, "dataloader": data_loader(0),
    "dataloader_workers": data_loader(2), "vmap_grad": vmap_grad, "jacobians": jacobians,
    "forward_ad": forward_ad, "compile_eager": compiled("eager"), "compile_aot_eager": compiled("aot_eager"),
    "lstm": recurrent, "multihead_attention": attention, "load_state_dict": state_dicts,
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_no_reference_cycles(name):
    step = WORKLOADS[name]()
    step()
    step()  # warm: caches, lazily built kernels and modules are made once, not per step
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            step()
        found = gc.collect()
        kinds = sorted({type(o).__qualname__ for o in gc.garbage})
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    assert found == 0, f"{name}: {found} objects in reference cycles: {kinds}"


def test_intermediates_are_freed_by_backward_while_the_loss_lives():
    import weakref

    m = _model()
    gc.disable()
    try:
        h = m[0](X)
        a = m[1](h)
        refs = [weakref.ref(h), weakref.ref(a)]
        loss = m[2](a).pow(2).sum()
        del h, a
        assert refs[1]() is not None  # saved by the last Linear for its weight's gradient
        loss.backward()
        assert [r() for r in refs] == [None, None]  # freed by reference counting, no collection needed
    finally:
        gc.enable()


def test_a_custom_function_does_not_keep_its_last_node():
    # (forward AD asks for the node only while it waits for it: a kept node held the saved tensors)
    import weakref

    x = X.clone().requires_grad_()
    y = _Square.apply(x)
    node, saved = weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.saved_tensors[0])
    y.sum().backward()
    del y, x
    assert node() is None and saved() is None


# -- no process or shared memory left after Ctrl-C ----------------------------------------------------------

_INTERRUPTED = textwrap.dedent("""
    import sys, time
    import ember
    from ember.utils.data import DataLoader, Dataset

    class Slow(Dataset):
        def __len__(self):
            return 10_000

        def __getitem__(self, i):
            time.sleep(0.01)
            return ember.full((64, 64), float(i))

    if __name__ == "__main__":
        loader = DataLoader(Slow(), batch_size=4, num_workers=2, persistent_workers=PERSISTENT)
        it = iter(loader)
        next(it)
        import multiprocessing
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        for batch in it:
            pass
""")


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"  # a zombie has exited (its parent only has not reaped it)
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("persistent", [False, True])
def test_ctrl_c_leaves_no_worker_or_shared_memory(tmp_path, persistent):
    script = tmp_path / "interrupted.py"
    script.write_text(_INTERRUPTED.replace("PERSISTENT", str(persistent)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True)
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2, proc.stderr.read()
    time.sleep(0.3)  # batches in flight through shared memory
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "KeyboardInterrupt" in err
    deadline = time.time() + 10
    while any(_alive(p) for p in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if _alive(p)], "worker processes outlived the interrupted script"
    assert not [f for f in os.listdir("/dev/shm") if f.startswith(f"ember_dl_{proc.pid}_")]


# -- the soak runs, behind EMBER_SOAK=1 (several minutes) ------------------------------------------------------

@pytest.mark.skipif(not os.environ.get("EMBER_SOAK"), reason="soak runs take minutes: set EMBER_SOAK=1")
@pytest.mark.parametrize("run", ["mlp", "gpt", "dataloader", "dataloader_persistent"])
def test_soak(run):
    from tests import soak

    steps = int(os.environ.get("EMBER_SOAK_STEPS", "10000"))
    assert soak.soak(run, steps, every=500, tolerance_mb=8.0) == []
