"""The Module system against torch: registration, iteration (shared modules), state_dict round trips with
torch's own state_dict, load_state_dict errors, hooks (forward, full backward), containers and reprs."""

import numpy as np
import pytest
import torch
from _harness import ember_state, run_pair
from compare import assert_same, assert_same_error, to_ember

import ember


def build(lib, seed=0):
    nn = lib.nn
    lib.manual_seed(seed) if lib is torch else None
    relu = nn.ReLU()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), relu, nn.MaxPool2d(2),
                                          nn.BatchNorm2d(4))
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 3 * 3, 5), relu, nn.Dropout(0.0))
            self.register_buffer("scale", lib.ones(1) * 2)
            self.register_buffer("tmp", lib.zeros(2), persistent=False)

        def forward(self, x):
            return self.head(self.features(x)) * self.scale
    return Net()


def test_names_iterators_repr_and_shared_relu():
    e, t = build(ember), build(torch)
    assert repr(e) == repr(t)
    for fn in ("named_modules", "named_parameters", "named_buffers", "named_children"):
        assert [n for n, _ in getattr(e, fn)()] == [n for n, _ in getattr(t, fn)()], fn
    assert [n for n, _ in e.named_modules(remove_duplicate=False)] == \
        [n for n, _ in t.named_modules(remove_duplicate=False)]
    assert [n for n, _ in e.named_parameters(prefix="m", recurse=False)] == []
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    assert dict(e.state_dict()._metadata) == dict(t.state_dict()._metadata)
    assert sorted(k for k in dir(e) if not k.startswith("_")) == sorted(k for k in dir(t) if not k.startswith("_")
                                                                         and k in dir(e))


def test_state_dict_from_torch_gives_torch_outputs_train_and_eval():
    e, t = build(ember), build(torch)
    result = e.load_state_dict(ember_state(t))
    assert repr(result) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((3, 1, 6, 6)).astype(np.float32)
    run_pair(e, t, [x], rtol=1e-4, atol=1e-5)
    e.eval()
    t.eval()
    run_pair(e, t, [x], rtol=1e-4, atol=1e-5)
    back = {k: torch.from_numpy(v.numpy().copy()) for k, v in e.state_dict().items()}
    t.load_state_dict(back)


def test_load_state_dict_errors_and_strict_false():
    e, t = build(ember), build(torch)
    for lib, m in ((ember, e), (torch, t)):
        sd = m.state_dict()
        sd.pop("head.1.bias")
        sd["extra.weight"] = lib.ones(1)
        sd["features.0.weight"] = lib.ones(2, 2)
        m.sd = sd
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(e.sd)
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(t.sd)
    assert str(ee.value) == str(te.value).replace("torch.", "ember.")
    del e.sd["features.0.weight"], t.sd["features.0.weight"]
    r_e, r_t = e.load_state_dict(e.sd, strict=False), t.load_state_dict(t.sd, strict=False)
    assert r_e.missing_keys == r_t.missing_keys and r_e.unexpected_keys == r_t.unexpected_keys


def test_freeze_by_name_zero_grad_and_to():
    e = build(ember)
    for name, p in e.named_parameters():
        if name.startswith("features"):
            p.requires_grad_(False)
    out = e(ember.ones(2, 1, 6, 6))
    out.sum().backward()
    assert all(p.grad is None for n, p in e.named_parameters() if n.startswith("features"))
    assert all(p.grad is not None for n, p in e.named_parameters() if n.startswith("head"))
    e.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for n, p in e.named_parameters() if n.startswith("head"))
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())
    w = e.head[1].weight
    e.double()
    assert e.head[1].weight is w and w.dtype is ember.float64
    assert e.features[3].num_batches_tracked.dtype is ember.int64
    assert_same_error(lambda lib: build(lib).to(lib.int32))


def test_attribute_errors_and_registration():
    assert_same_error(lambda lib: build(lib).nope)
    assert_same_error(lambda lib: build(lib).register_buffer("a.b", lib.ones(1)))
    assert_same_error(lambda lib: build(lib).register_parameter("scale", lib.nn.Parameter(lib.ones(1))))
    assert_same_error(lambda lib: setattr(build(lib).head[1], "weight", lib.ones(1)))
    assert_same_error(lambda lib: build(lib).add_module("x", 3))
    assert_same_error(lambda lib: build(lib).get_submodule("head.7"))
    assert_same_error(lambda lib: build(lib).get_parameter("head.1.nope"))
    e = build(ember)
    e.plain = ember.ones(3)  # plain tensors are attributes, not parameters or buffers
    assert "plain" not in dict(e.named_parameters()) and "plain" not in dict(e.named_buffers())
    assert e.get_parameter("head.1.weight") is e.head[1].weight
    assert e.get_submodule("features.1") is e.head[2]


def test_forward_hooks_print_shapes_and_kwargs():
    logs = {}
    for lib in (ember, torch):
        m = build(lib)
        log = logs[lib] = []
        hs = [mod.register_forward_hook(lambda mod, i, o, log=log: log.append((type(mod).__name__, tuple(o.shape))))
              for _, mod in m.named_modules() if not isinstance(mod, lib.nn.Sequential)]
        m.register_forward_pre_hook(lambda mod, args, kw, log=log: log.append(("kw", sorted(kw))), with_kwargs=True)
        m(lib.ones(2, 1, 6, 6))
        hs[0].remove()
        m(lib.ones(1, 1, 6, 6))
    assert logs[ember] == logs[torch]


def test_full_backward_hooks_match_torch():
    res = {}
    for lib in (ember, torch):
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1., 2., 3.], [-1., 0.5, 2.]]))
            lin.bias.copy_(lib.tensor([0.5, -0.25]))
        seen = []
        lin.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", go[0].tolist())))
        lin.register_full_backward_hook(lambda m, gi, go: (seen.append(("full", gi[0].tolist(), go[0].tolist())),
                                                           (gi[0] * 2,))[1])
        x = lib.tensor([[1., 1., 1.]], requires_grad=True)
        lin(x).pow(2).sum().backward()
        res[lib] = (seen, x.grad.tolist(), type(lin(x).grad_fn).__name__)
    assert res[ember] == res[torch]


def test_always_call_forward_hook_and_global_hook():
    logs = {}
    for lib in (ember, torch):
        calls = logs[lib] = []
        m = lib.nn.Linear(2, 2)
        m.register_forward_hook(lambda *a, calls=calls: calls.append("local"), always_call=True)
        with pytest.raises(RuntimeError):
            m(lib.ones(3, 5))
        h = lib.nn.modules.module.register_module_forward_hook(lambda mod, i, o, calls=calls: calls.append("global"))
        m(lib.ones(1, 2))
        h.remove()
    assert logs[ember] == logs[torch] == ["local", "global", "local"]


def test_containers():
    for lib in (ember, torch):
        nn = lib.nn
        s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        s.append(nn.Tanh())
        s.insert(1, nn.Sigmoid())
        del s[2]
        s.extend([nn.Identity()])
        s2 = s[1:3]
        ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
        md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
        pl = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(3))])
        pd = nn.ParameterDict({"x": lib.ones(2)})
        lib._reprs = [repr(x) for x in (s, s2, ml, md)] + [len(s), len(pl), list(pd.keys()),
                                                            [n for n, _ in pl.named_parameters()]]
    assert ember._reprs == torch._reprs


def test_parameter_basics():
    p = ember.nn.Parameter(ember.ones(2))
    tp = torch.nn.Parameter(torch.ones(2))
    assert repr(p) == repr(tp) and isinstance(p, ember.Tensor) and p.requires_grad
    assert type(p).__module__ == "ember.nn.parameter"
    import copy
    q = copy.deepcopy(p)
    assert type(q) is ember.nn.Parameter and q.requires_grad and q.data_ptr() != p.data_ptr()
    assert type(p * 2) is ember.Tensor
    assert_same_error(lambda lib: lib.nn.Parameter(lib.ones(2, dtype=lib.int64)))
    assert_same(to_ember(np.ones(2, np.float32)) * 1, torch.ones(2))
