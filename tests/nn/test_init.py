"""nn.init against torch: every initializer fills the tensor in place, under no_grad, with torch's numbers
(ember's generator follows torch's stream), bumps its version counter as torch's in-place ops do, returns
the tensor, and on meta tensors does what torch's does (shape, dtype and version; no data)."""

import pytest
import torch
from compare import assert_same

import ember

INITS = {  # name: (shape, fn(lib, tensor)); the tensor requires grad, as a parameter does
    "uniform_": ((4, 3), lambda lib, t: lib.nn.init.uniform_(t, -0.5, 2.0)),
    "normal_": ((4, 3), lambda lib, t: lib.nn.init.normal_(t, 1.0, 0.5)),
    "constant_": ((4, 3), lambda lib, t: lib.nn.init.constant_(t, 0.3)),
    "ones_": ((4, 3), lambda lib, t: lib.nn.init.ones_(t)),
    "zeros_": ((4, 3), lambda lib, t: lib.nn.init.zeros_(t)),
    "eye_": ((3, 5), lambda lib, t: lib.nn.init.eye_(t)),
    "eye_tall": ((5, 3), lambda lib, t: lib.nn.init.eye_(t)),
    "dirac_3d": ((4, 3, 3), lambda lib, t: lib.nn.init.dirac_(t)),
    "dirac_4d_groups": ((4, 2, 3, 3), lambda lib, t: lib.nn.init.dirac_(t, groups=2)),
    "dirac_5d": ((2, 2, 1, 3, 3), lambda lib, t: lib.nn.init.dirac_(t)),
    "xavier_uniform_": ((4, 3), lambda lib, t: lib.nn.init.xavier_uniform_(t, gain=2.0)),
    "xavier_normal_": ((4, 3), lambda lib, t: lib.nn.init.xavier_normal_(t)),
    "kaiming_uniform_": ((4, 3, 2), lambda lib, t: lib.nn.init.kaiming_uniform_(t, a=0.1)),
    "kaiming_normal_": ((4, 3), lambda lib, t: lib.nn.init.kaiming_normal_(t, mode="fan_out")),
    "orthogonal_tall": ((6, 4), lambda lib, t: lib.nn.init.orthogonal_(t)),
    "orthogonal_wide_gain": ((3, 5), lambda lib, t: lib.nn.init.orthogonal_(t, gain=2.0)),
    "orthogonal_conv": ((4, 2, 3), lambda lib, t: lib.nn.init.orthogonal_(t)),
    "sparse_": ((10, 5), lambda lib, t: lib.nn.init.sparse_(t, 0.3)),
    "sparse_std": ((7, 3), lambda lib, t: lib.nn.init.sparse_(t, 0.5, std=2.0)),
}


def _run(lib, name, device="cpu"):
    shape, fn = INITS[name]
    lib.manual_seed(0)
    t = lib.empty(shape, device=device, requires_grad=True)
    v = t._version
    r = fn(lib, t)
    return r, t, t._version - v


@pytest.mark.parametrize("name", list(INITS))
def test_init_matches_torch(name):
    (re, te, ve), (rt, tt, vt) = _run(ember, name), _run(torch, name)
    assert re is te and rt is tt
    assert ve == vt, f"version bumped {ve} times, torch {vt}"
    assert te.requires_grad and te.grad_fn is None
    assert_same(te, tt, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", list(INITS))
def test_init_on_meta_tensors(name):
    (re, te, ve), (rt, tt, vt) = _run(ember, name, "meta"), _run(torch, name, "meta")
    assert re is te and rt is tt
    assert te.device.type == "meta" and (tuple(te.shape), te.stride()) == (tuple(tt.shape), tt.stride())
    assert ve == vt, f"version bumped {ve} times, torch {vt}"
