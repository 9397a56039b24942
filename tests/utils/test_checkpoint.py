"""torch.utils.checkpoint against torch, and ember.autograd.graph.saved_tensors_bytes.

Every region below runs plainly and under each checkpoint variant, in ember and in torch from the same NumPy
inputs: outputs and input gradients equal torch's (`compare.check`), and within ember the checkpointed
gradients equal the plain ones bit for bit (dropout included: the RNG state is preserved). Then torch's
warnings and errors, checkpoint_sequential, nested checkpoints, early stop, context_fn, selective
checkpointing, the determinism check and debug mode; last, the saved-tensor byte count, also measured for
torch with saved-tensor hooks.
"""

import functools
import gc
import re
import warnings

import numpy as np
import pytest
import torch
from compare import assert_same, check, normalize_message

import ember

X = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
W = (np.random.default_rng(1).standard_normal((6, 6)) * 0.3).astype(np.float32)
B = np.random.default_rng(2).standard_normal((6,)).astype(np.float32)


def _norm(s):
    return re.sub(r"object at 0x\?", "object at 0x?", normalize_message(s))


def _compare(e, t, path="result"):
    if isinstance(t, torch.Tensor):
        assert_same(e, t, path=path, check_stride=False)
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), f"{path}: {e!r} vs torch {t!r}"
        for i, (a, b) in enumerate(zip(e, t)):
            _compare(a, b, f"{path}[{i}]")
    elif isinstance(t, str):
        assert _norm(e) == _norm(t), f"{path}:\n ember: {_norm(e)}\n torch: {_norm(t)}"
    else:
        assert e == t, f"{path}: {e!r} vs torch {t!r}"


def same(fn):
    """fn(lib) returns the same thing, or raises the same exception class and message, in ember and torch;
    returns the exception ember raised, or None."""
    try:
        t = fn(torch)
    except Exception as te:  # noqa: BLE001 - the expectation
        with pytest.raises(Exception) as ei:  # noqa: PT011 - compared below
            fn(ember)
        ee = ei.value
        assert type(ee).__name__ == type(te).__name__, f"ember raised {ee!r}; torch {te!r}"
        assert _norm(str(ee)) == _norm(str(te)), f"message differs:\n ember: {_norm(str(ee))}\n torch: {_norm(str(te))}"
        return ee
    _compare(fn(ember), t)
    return None


def T(lib, a, requires_grad=False):
    t = lib.from_numpy(np.array(a, copy=True))
    return t.requires_grad_() if requires_grad else t


def warned(fn):
    """The (category name, message) of each warning fn() raises."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message)) for w in rec]


# ---- regions, and the ways to run them ---------------------------------------------------------------


def _chain(lib, x, w, b):
    return ((x @ w + b).tanh() @ w).sigmoid() * x.exp()


def _two_outputs(lib, x, w, b):
    h = lib.nn.functional.gelu(x @ w)
    return h.sum(1), (h * b).softmax(-1)


def _dropout(lib, x, w, b):
    h = lib.nn.functional.dropout(x @ w, 0.4, training=True)
    return lib.nn.functional.dropout(h.relu() + b, 0.3, training=True).tanh()


def _inplace_and_views(lib, x, w, b):
    h = x @ w
    h.mul_(2)
    h[:, 0] = h[:, 1].detach().relu() + b[0]
    return (h.t() @ x).reshape(-1)[::3] + b.sum()


def _norms(lib, x, w, b):
    h = lib.nn.functional.layer_norm(x @ w, (6,), b, b)
    return lib.nn.functional.log_softmax(h, -1) * lib.nn.functional.silu(h)


def _nested(lib, x, w, b):
    cp = lib.utils.checkpoint
    inner = cp.checkpoint(lambda u: (u @ w).sin(), x * 2, use_reentrant=False)
    return cp.checkpoint(lambda u: (u @ w).cos() + b, inner, use_reentrant=False) * inner


REGIONS = {"chain": _chain, "two_outputs": _two_outputs, "dropout": _dropout,
           "inplace_and_views": _inplace_and_views, "norms": _norms, "nested": _nested}


def _run(variant, region, lib, x, w, b):
    cp = lib.utils.checkpoint
    fn = functools.partial(region, lib)
    if variant == "plain":
        return fn(x, w, b)
    if variant == "reentrant":
        return cp.checkpoint(fn, x, w, b, use_reentrant=True)
    if variant == "non_reentrant":
        return cp.checkpoint(fn, x, w, b, use_reentrant=False)
    if variant == "no_early_stop":
        return cp.checkpoint(fn, x, w, b, use_reentrant=False, early_stop=False, determinism_check="none")
    if variant == "kwargs":  # non-reentrant checkpoint passes keyword arguments through
        return cp.checkpoint(lambda x, w, b=None: fn(x, w, b), x, w, b=b, use_reentrant=False)
    if variant == "nested_outer":  # the whole region inside one more checkpoint
        return cp.checkpoint(lambda *a: cp.checkpoint(fn, *a, use_reentrant=False), x, w, b, use_reentrant=False)
    if variant == "selective":  # the pointwise functions' outputs saved, the rest recomputed
        def policy(ctx, op, *args, **kwargs):
            saved = str(op).split(".")[1] in _SAC_SAVED
            return cp.CheckpointPolicy.MUST_SAVE if saved else cp.CheckpointPolicy.PREFER_RECOMPUTE
        return cp.checkpoint(fn, x, w, b, use_reentrant=False,
                             context_fn=functools.partial(cp.create_selective_checkpoint_contexts, policy))
    raise AssertionError(variant)


_SAC_SAVED = {"tanh", "sigmoid", "sin", "cos", "relu", "exp", "gelu"}
VARIANTS = ["reentrant", "non_reentrant", "no_early_stop", "kwargs", "nested_outer", "selective"]


@pytest.mark.parametrize("region", list(REGIONS))
@pytest.mark.parametrize("variant", ["plain"] + VARIANTS)
def test_checkpointed_region_matches_torch(region, variant):
    def fn(lib, x, w, b):
        lib.manual_seed(7)
        return _run(variant, REGIONS[region], lib, x, w, b)
    check(fn, X, W, B, grad=True)


def _grads(variant, region):
    ember.manual_seed(7)
    x, w, b = (T(ember, a, True) for a in (X, W, B))
    out = _run(variant, REGIONS[region], ember, x, w, b)
    outs = out if isinstance(out, tuple) else (out,)
    sum((o * o).sum() for o in outs).backward()
    return [t.grad.numpy() for t in (x, w, b)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_gradients_equal_without_checkpoint(variant):
    for region in REGIONS:
        for plain, ck in zip(_grads("plain", region), _grads(variant, region)):
            np.testing.assert_array_equal(ck, plain, err_msg=f"{region} under {variant}")


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_preserve_rng_state_false_draws_again(use_reentrant):
    def fn(lib, x, w, b):
        lib.manual_seed(3)
        return lib.utils.checkpoint.checkpoint(functools.partial(_dropout, lib), x, w, b,
                                               use_reentrant=use_reentrant, preserve_rng_state=False)
    check(fn, X, W, B, grad=True)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_recomputation_runs_under_the_forwards_autocast_state(use_reentrant):
    """The forward runs under bfloat16 autocast, backward outside it: the recomputation computes in the same
    dtypes (the determinism check would refuse otherwise), and the gradients are torch's."""
    def fn(lib, x, w, b):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = lib.utils.checkpoint.checkpoint(lambda u, v: (u @ v).relu() @ v + b, x, w,
                                                use_reentrant=use_reentrant)
        with lib.autocast("cpu", enabled=False):  # (nested and disabled inside: the state is read per forward)
            z = lib.utils.checkpoint.checkpoint(lambda u: (u @ w).tanh(), x, use_reentrant=use_reentrant)
        return y, z
    check(fn, X, W, B, grad=True)


# ---- warnings and errors -----------------------------------------------------------------------------


def test_warnings():
    def body(lib):
        cp = lib.utils.checkpoint
        x, w = T(lib, X, True), T(lib, W)
        seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())
        return (warned(lambda: cp.checkpoint(lambda u: u.sin(), x)),
                warned(lambda: cp.checkpoint_sequential(seq, 2, x)),
                warned(lambda: cp.checkpoint(lambda u: u.sin(), w, use_reentrant=True)),
                warned(lambda: cp.checkpoint(lambda u: u.sin(), w, use_reentrant=False)),
                warned(lambda: cp.checkpoint(lambda u: u.sin(), x, use_reentrant=False)))
    same(body)


def _region_error(lib, case):
    cp = lib.utils.checkpoint
    x, w = T(lib, X, True), T(lib, W, True)
    sin = (lambda u: u.sin())
    if case == "reentrant_kwargs":
        cp.checkpoint(sin, x, use_reentrant=True, foo=1, bar=2)
    if case == "reentrant_context_fn":
        cp.checkpoint(sin, x, use_reentrant=True, context_fn=cp.noop_context_fn)  # (the default itself is fine)
        cp.checkpoint(sin, x, use_reentrant=True, context_fn=lambda: cp.noop_context_fn())
    if case == "reentrant_debug":
        cp.checkpoint(sin, x, use_reentrant=True, debug=True)
    if case == "sequential_kwargs":
        cp.checkpoint_sequential([sin], 1, x, use_reentrant=False, foo=1)
    if case == "determinism_check_value":
        cp.checkpoint(sin, x, use_reentrant=False, determinism_check="shapes")
    if case == "debug_with_context_fn":
        cp.checkpoint(sin, x, use_reentrant=False, debug=True, context_fn=lambda: cp.noop_context_fn())
    if case == "reentrant_autograd_grad":
        lib.autograd.grad(cp.checkpoint(sin, x, use_reentrant=True).sum(), x)
    if case == "reentrant_backward_inputs":
        (cp.checkpoint(sin, x, use_reentrant=True) * w).sum().backward(inputs=[w])
    if case == "reentrant_no_grad_input":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cp.checkpoint(sin, T(lib, X), use_reentrant=True).sum().backward()
    if case == "reentrant_output_without_grad":
        (cp.checkpoint(lambda u: u.detach() * 2, x, use_reentrant=True) * w).sum().backward()
    for reentrant in (True, False):
        if case == f"backward_twice_{reentrant}":
            y = cp.checkpoint(lambda u: (u @ w).sin(), x, use_reentrant=reentrant).sum()
            y.backward()
            y.backward()
    if case == "unpack_twice":
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, u):
                ctx.save_for_backward(u)
                return u * 2

            @staticmethod
            def backward(ctx, g):
                first = ctx.saved_tensors[0]
                return ctx.saved_tensors[0] * g + first
        cp.checkpoint(lambda u: Twice.apply(u.sin()), x, use_reentrant=False).sum().backward()
    if case == "forward_raises":
        cp.checkpoint(lambda u: u.reshape(5, 5), x, use_reentrant=False)
    if case == "context_swallows_error":
        class Swallow:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return True
        cp.checkpoint(lambda u: u.reshape(5, 5), x, use_reentrant=False,
                      context_fn=lambda: (Swallow(), Swallow()))
    if case == "sac_list_entry":
        cp.create_selective_checkpoint_contexts(["mm"])
    if case == "sac_policy_type":
        cp.create_selective_checkpoint_contexts(3)
    if case == "graph_exec_group_nested":
        with cp.GraphExecGroup(), cp.GraphExecGroup():
            pass
    if case == "inplace_on_input_after_forward":
        h = x * 1
        y = cp.checkpoint(lambda u: (u @ w).sin(), h, use_reentrant=False)
        h.add_(1)
        y.sum().backward()


ERROR_CASES = ["reentrant_kwargs", "reentrant_context_fn", "reentrant_debug", "sequential_kwargs",
               "determinism_check_value", "debug_with_context_fn", "reentrant_autograd_grad",
               "reentrant_backward_inputs", "reentrant_no_grad_input", "reentrant_output_without_grad",
               "backward_twice_True", "backward_twice_False", "unpack_twice", "forward_raises",
               "context_swallows_error", "sac_list_entry", "sac_policy_type", "graph_exec_group_nested",
               "inplace_on_input_after_forward"]


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    assert same(lambda lib: _region_error(lib, case)) is not None, "torch raised nothing"


def test_non_reentrant_works_with_grad_and_backward_inputs_and_retain_graph():
    def body(lib):
        cp = lib.utils.checkpoint
        x, w = T(lib, X, True), T(lib, W, True)
        y = cp.checkpoint(lambda u, v: (u @ v).sin() * u.sum(), x, w, use_reentrant=False)
        gx, = lib.autograd.grad(y.sum(), x, retain_graph=True)
        (y * 2).sum().backward(inputs=[w], retain_graph=True)
        y.sum().backward()  # the third pass recomputes again
        gg, = lib.autograd.grad(cp.checkpoint(lambda u: u.sin().sum(), x, use_reentrant=False), x,
                                create_graph=True)
        gg.sum().backward()
        return gx, w.grad, x.grad
    same(body)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_no_grad_and_outputs_that_are_not_tensors(use_reentrant):
    def body(lib):
        cp = lib.utils.checkpoint
        x, w = T(lib, X, True), T(lib, W, True)
        with lib.no_grad():
            a = cp.checkpoint(lambda u: u.sin(), x, use_reentrant=use_reentrant)
        out = cp.checkpoint(lambda u: (u.sin() @ w, None, 3, u.detach() * 0 + 1), x, use_reentrant=use_reentrant)
        (out[0].sum() + out[3].sum()).backward()
        return a.requires_grad, a.grad_fn is None, out[1], out[2], out[3].requires_grad, x.grad, w.grad
    same(body)


def test_determinism_check():
    def body(lib, which, check="default", early=True):
        cp = lib.utils.checkpoint
        calls = []

        def region(u):
            calls.append(1)
            if which == "shape":
                v = u if len(calls) == 1 else u[:2]
                return v.sin().cos()
            if which == "count":
                return u.sin() if len(calls) > 1 else u.sin().cos()
            v = u if len(calls) == 1 else u.double()
            return v.sin().cos()
        x = T(lib, X, True)
        y = cp.checkpoint(region, x, use_reentrant=False, determinism_check=check, early_stop=early)
        y.sum().backward()
        return x.grad
    for which in ("shape", "dtype", "count"):
        same(lambda lib: body(lib, which))
    same(lambda lib: body(lib, "more", early=False))
    same(lambda lib: body(lib, "count", "none"))


def test_debug_mode_error_carries_both_logs():
    def body(lib, how):
        cp = lib.utils.checkpoint
        calls = []

        def region(u):
            calls.append(1)
            return (u if len(calls) == 1 else u[:2]).sin().cos()
        x = T(lib, X, True)
        if how == "flag":
            y = cp.checkpoint(region, x, use_reentrant=False, debug=True)
        else:
            with cp.set_checkpoint_debug_enabled(True):
                y = cp.checkpoint(region, x, use_reentrant=False)
        with pytest.raises(cp.CheckpointError) as ei:
            y.sum().backward()
        return ei.value
    for how in ("flag", "global"):
        te, ee = body(torch, how), body(ember, how)
        tm, em = normalize_message(str(te)), normalize_message(str(ee))
        assert type(ee.__cause__).__name__ == type(te.__cause__).__name__ == "CheckpointError"
        assert _norm(str(ee.__cause__)) == _norm(str(te.__cause__))
        # the fixed text is torch's; the stack frames are each library's own
        fixed = [line for line in tm.splitlines() if line.startswith(("+", "|", " ", "Operations", "IMPORTANT"))
                 and "$" not in line and ".py:" not in line]
        assert fixed and all(line in em.splitlines() for line in fixed)
        # the forward's ops are logged as torch logs them; the recomputation stops at a different op, as ember
        # saves an op's tensors after running it where torch saves its inputs before
        section = re.compile(r"original forward:\n\n(.*?)\n\nOperations executed during recomputation", re.S)
        assert section.search(em).group(1) == section.search(tm).group(1)
        assert "aten.sin.default" in em.split("during recomputation:")[1]


def test_early_stop_and_context_fn():
    def body(lib, stop, global_stop):
        cp = lib.utils.checkpoint
        log = []

        class Ctx:
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                log.append(self.name)

            def __exit__(self, *exc):
                log.append("exit " + self.name)

        def region(u):
            log.append("start")
            v = u.sin().cos()  # the last tensor saved: recomputation may stop here
            log.append("end")
            return v + 1
        x = T(lib, X, True)
        ctx = cp.set_checkpoint_early_stop(global_stop) if global_stop is not None else cp.noop_context_fn()[0]
        with ctx:
            y = cp.checkpoint(region, x, use_reentrant=False, early_stop=stop,
                              context_fn=lambda: (Ctx("fwd"), Ctx("recompute")))
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return log, x.grad
    for stop, global_stop in ((True, None), (False, None), (True, False), (False, True)):
        same(lambda lib: body(lib, stop, global_stop))


def test_checkpoint_sequential():
    def body(lib, segments, reentrant):
        lib.manual_seed(0)
        layers = [lib.nn.Linear(6, 6), lib.nn.Tanh(), lib.nn.Linear(6, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3)]
        for m in layers:
            for i, p in enumerate(m.parameters()):
                p.data = T(lib, np.random.default_rng(i + p.dim()).standard_normal(tuple(p.shape)) * 0.5).float()
        model = lib.nn.Sequential(*layers) if segments != 3 else layers
        x = T(lib, X, True)
        y = lib.utils.checkpoint.checkpoint_sequential(model, segments, x, use_reentrant=reentrant)
        y.pow(2).sum().backward()
        return y, x.grad, [p.grad for m in layers for p in m.parameters()]
    for segments in (1, 2, 3, 5):
        for reentrant in (True, False):
            same(lambda lib: body(lib, segments, reentrant))


@pytest.mark.filterwarnings("ignore:None of the inputs")  # (a reentrant region inside a reentrant one: both warn)
def test_nested_reentrant_and_mixed():
    def body(lib, outer, inner):
        cp = lib.utils.checkpoint
        x, w = T(lib, X, True), T(lib, W, True)

        def region(u):
            h = cp.checkpoint(lambda v: (v @ w).tanh(), u, use_reentrant=inner)
            return cp.checkpoint(lambda v: (v @ w).sin() * v, h, use_reentrant=inner) + u
        y = cp.checkpoint(region, x, use_reentrant=outer)
        y.sum().backward()
        return y, x.grad, w.grad
    for outer in (True, False):
        for inner in (True, False):
            same(lambda lib: body(lib, outer, inner))


# ---- the seeds' snippets ------------------------------------------------------------------------------


def _seed_000_model(lib, n_layers, hidden_dim):
    """Seed 000 §2.2's MemoryEfficientModel, verbatim but for the sizes. (Its `segment_forward` reads `start`
    and `end` from the loop when it runs: the recomputations in backward all see the last segment's
    bounds, in torch as in ember.)"""
    class MemoryEfficientModel(lib.nn.Module):
        def __init__(self, n_layers=20, hidden_dim=512):
            super().__init__()
            self.layers = lib.nn.ModuleList([
                lib.nn.Sequential(lib.nn.Linear(hidden_dim, hidden_dim), lib.nn.ReLU(),
                                  lib.nn.Linear(hidden_dim, hidden_dim))
                for _ in range(n_layers)])

        def forward(self, x):
            segments = 4
            segment_len = len(self.layers) // segments
            for i in range(segments):
                start = i * segment_len
                end = (i + 1) * segment_len

                def segment_forward(*inputs):
                    local_x = inputs[0]
                    for layer in self.layers[start:end]:
                        local_x = layer(local_x)
                    return local_x
                x = lib.utils.checkpoint.checkpoint(segment_forward, x, use_reentrant=False)
            return x
    return MemoryEfficientModel(n_layers, hidden_dim)


def _seed_004_model(lib, num_layers, hidden_size):
    """Seed 004's DeepNetwork of MemoryEfficientBlocks, verbatim but for the sizes (it calls checkpoint
    without use_reentrant: torch's warning, and the reentrant checkpoint)."""
    class MemoryEfficientBlock(lib.nn.Module):
        def __init__(self, hidden_size=512):
            super().__init__()
            self.linear1 = lib.nn.Linear(hidden_size, hidden_size * 4)
            self.linear2 = lib.nn.Linear(hidden_size * 4, hidden_size)
            self.activation = lib.nn.GELU()

        def forward(self, x):
            def custom_forward(hidden):
                hidden = self.linear1(hidden)
                hidden = self.activation(hidden)
                return self.linear2(hidden)
            return lib.utils.checkpoint.checkpoint(custom_forward, x)

    class DeepNetwork(lib.nn.Module):
        def __init__(self, num_layers=50, hidden_size=512):
            super().__init__()
            self.layers = lib.nn.ModuleList([MemoryEfficientBlock(hidden_size) for _ in range(num_layers)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    return DeepNetwork(num_layers, hidden_size)


@pytest.mark.parametrize("build", [_seed_000_model, _seed_004_model])
def test_seed_snippets(build):
    def body(lib):
        torch.manual_seed(0)
        reference = build(torch, 8, 16)
        model = build(lib, 8, 16)
        model.load_state_dict({k: T(lib, v.detach().numpy()) for k, v in reference.state_dict().items()})
        x = T(lib, np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32), True)
        log = warned(lambda: model(x).sum().backward())
        return log, x.grad, [p.grad for p in model.parameters()]
    same(body)


# ---- selective checkpointing -------------------------------------------------------------------------


def _sac(lib, policy_kind, case="plain"):
    cp = lib.utils.checkpoint
    seen = []
    mm = torch.ops.aten.mm.default if lib is torch else ember._dispatch.OpCall(ember._dispatch.registry["mm"], 2)

    def policy(ctx, op, *args, **kwargs):
        seen.append((str(op), ctx.is_recompute, tuple(ctx.op_output.shape)))
        if policy_kind == "bool":
            return op == mm
        return cp.CheckpointPolicy.MUST_SAVE if op == mm else cp.CheckpointPolicy.PREFER_RECOMPUTE
    pol = [mm] if policy_kind == "list" else policy
    x, w = T(lib, X, True), T(lib, W, True)

    def region(u, v):
        h = lib.mm(u, v)
        s = h.sin()
        if case == "mutate":
            h.mul_(2)
        return lib.mm(s, v).cos() * h
    ctx_fn = functools.partial(cp.create_selective_checkpoint_contexts, pol,
                               allow_cache_entry_mutation=case == "allow_mutation")
    y = cp.checkpoint(region, x, w, use_reentrant=False, context_fn=ctx_fn)
    y.sum().backward(retain_graph=case == "twice")
    if case == "twice":
        y.sum().backward()
    return y, x.grad, w.grad, [s for s in seen if s[0] in ("aten.mm.default", "aten.sin.default")]


def test_selective_checkpoint():
    for kind in ("policy", "bool", "list"):
        for case in ("plain", "mutate", "allow_mutation", "twice"):
            same(lambda lib: _sac(lib, kind, case))


def test_names():
    cp = ember.utils.checkpoint
    assert set(cp.__all__) == set(torch.utils.checkpoint.__all__)
    assert [p.name for p in cp.CheckpointPolicy] == [p.name for p in torch.utils.checkpoint.CheckpointPolicy]
    assert issubclass(cp.CheckpointError, RuntimeError)
    assert all(isinstance(c, type(cp.noop_context_fn()[0])) for c in cp.noop_context_fn())
    assert cp.DefaultDeviceType.get_device_type() == torch.utils.checkpoint.DefaultDeviceType.get_device_type()
    assert cp.get_device_states(T(ember, X)) == torch.utils.checkpoint.get_device_states(T(torch, X))
    same(lambda lib: [t.requires_grad for t in lib.utils.checkpoint.detach_variable((T(lib, X, True), 3, T(lib, X)))])
    same(lambda lib: lib.utils.checkpoint.detach_variable([T(lib, X)]))


# ---- saved-tensor bytes ------------------------------------------------------------------------------


def _torch_saved_bytes(fn):
    """What torch's autograd saves while fn() runs, counted per storage with a saved-tensors hook that
    keeps each tensor as it is (so the graph is the same), and the result."""
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(storages.values()), out


def _mlp(lib, x, ws, ck):
    h = x
    for w in ws:
        if ck is None:
            h = (h @ w).tanh()
        else:
            h = lib.utils.checkpoint.checkpoint(lambda u, v: (u @ v).tanh(), h, w, use_reentrant=ck)
    return h


@pytest.mark.parametrize("ck", [None, True, False])
def test_saved_tensors_bytes_is_what_torch_saves(ck):
    sb = ember.autograd.graph.saved_tensors_bytes
    ws = [np.random.default_rng(i).standard_normal((6, 6)).astype(np.float32) for i in range(4)]
    tb, _ = _torch_saved_bytes(lambda: _mlp(torch, T(torch, X, True), [T(torch, w, True) for w in ws], ck))
    x, ews = T(ember, X, True), [T(ember, w, True) for w in ws]
    gc.collect()  # (graphs of earlier tests waiting in cycles are not live; nothing collects in between)
    gc.disable()
    try:
        before = sb()
        y = _mlp(ember, x, ews, ck)
        assert sb(y) == tb == sb() - before
    finally:
        gc.enable()
    assert sb(y.grad_fn) == tb
    # activations only: the input x and the weights are leaves the caller holds anyway
    assert sb(y, activations_only=True) == tb - X.nbytes - sum(w.nbytes for w in ws)
    y.sum().backward()
    assert sb(y) == 0


def test_saved_tensors_bytes_counts_storages_once_and_hooks():
    sb = ember.autograd.graph.saved_tensors_bytes
    x = T(ember, np.ones((8, 8), np.float32), True)
    y = x * x[0] * x[:, :1] * x.t()  # four views of one storage, each saved
    assert sb(y) == 8 * 8 * 4 + 2 * 8 * 8 * 4  # x, and the two products the later muls save
    assert sb(T(ember, X)) == 0  # no graph
    # a packed tensor counts, an object holding none counts 0, and checkpoint's holders count their inputs
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        z = x.exp()
    assert sb(z) == 8 * 8 * 4  # exp saves its output: the hook's clone of it is what is held
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(), ember.from_numpy):
        z = x.exp()
    assert sb(z) == 0


def test_checkpoint_saves_a_quarter_of_the_bytes():
    """Seed 004's memory-efficient blocks (a few of them): the checkpointed forward holds only the blocks'
    inputs, well under a quarter of what the plain forward saves."""
    sb = ember.autograd.graph.saved_tensors_bytes
    ember.manual_seed(0)
    blocks = [ember.nn.Sequential(ember.nn.Linear(32, 128), ember.nn.GELU(), ember.nn.Linear(128, 32))
              for _ in range(3)]
    x = ember.randn(16, 32, requires_grad=True)

    def forward(ck):
        h = x
        for blk in blocks:
            h = blk(h) if ck is None else ember.utils.checkpoint.checkpoint(blk, h, use_reentrant=ck)
        return h
    plain = sb(forward(None), activations_only=True)
    for ck in (True, False):
        held = sb(forward(ck), activations_only=True)
        assert 0 < held <= plain / 4
