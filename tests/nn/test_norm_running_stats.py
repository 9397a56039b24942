"""Batch/instance norm update their running statistics inside the normalizing op (as torch's native_batch_norm):
a mode sees the statistics as the op's inputs, the numbers and version counters are torch's."""

import numpy as np
import pytest
import torch
from compare import assert_same, to_ember, to_torch

import ember
from ember._modes import pop_mode, push_mode, redispatch, redispatch_inplace

CASES = [
    ("BatchNorm1d", dict(), (4, 3), np.float32),
    ("BatchNorm2d", dict(momentum=0.3), (4, 3, 2, 5), np.float32),
    ("BatchNorm2d", dict(momentum=None), (2, 3, 3, 3), np.float64),
    ("BatchNorm3d", dict(), (2, 3, 2, 2, 2), np.float32),
    ("InstanceNorm1d", dict(track_running_stats=True), (2, 3, 6), np.float32),
    ("InstanceNorm2d", dict(track_running_stats=True, momentum=0.5), (3, 3, 4, 4), np.float64),
]


class _Inputs:
    """Records each dispatched op's name and the identities of its tensor inputs."""

    def __init__(self):
        self.seen = []

    def dispatch(self, op, inputs, params):
        self.seen.append((op.name, [id(t) for t in inputs if isinstance(t, ember.Tensor)]))
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.seen.append((op.name, [id(t) for t in inputs if isinstance(t, ember.Tensor)]))
        return redispatch_inplace(op, self_, inputs, params)


@pytest.mark.parametrize("name,kwargs,shape,dtype", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_running_stats_are_op_inputs(name, kwargs, shape, dtype):
    em = getattr(ember.nn, name)(3, **kwargs).to(ember_dtype(dtype))
    tm = getattr(torch.nn, name)(3, **kwargs).to(getattr(torch, np.dtype(dtype).name))
    rng = np.random.default_rng(0)
    rec = _Inputs()
    for _ in range(3):
        x = rng.standard_normal(shape).astype(dtype)
        xe, xt = to_ember(x, requires_grad=True), to_torch(x, requires_grad=True)
        push_mode(rec)
        try:
            ye = em(xe)
        finally:
            pop_mode(rec)
        yt = tm(xt)
        assert_same(ye, yt)
        ye.sum().backward()  # the running statistics saved by the node were not invalidated by their update
        yt.sum().backward()
        assert_same(xe.grad, xt.grad)
        for key in ("running_mean", "running_var"):
            assert_same(getattr(em, key), getattr(tm, key), path=key)
            assert getattr(em, key)._version == getattr(tm, key)._version, key
    ids = {id(em.running_mean), id(em.running_var)}
    assert sum(1 for n, inp in rec.seen if n == "native_batch_norm" and ids <= set(inp)) == 3


def ember_dtype(dtype):
    return getattr(ember, np.dtype(dtype).name)


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalizes_rows_in_place(norm_type):
    w = (np.random.default_rng(1).standard_normal((6, 3)) * 3).astype(np.float32)
    idx = np.array([[0, 2], [2, 5]])
    we, wt = to_ember(w, requires_grad=True), to_torch(w, requires_grad=True)
    ve, vt = we._version, wt._version
    oe = ember.nn.functional.embedding(to_ember(idx), we, max_norm=1.0, norm_type=norm_type)
    ot = torch.nn.functional.embedding(to_torch(idx), wt, max_norm=1.0, norm_type=norm_type)
    assert_same(oe, ot)
    assert_same(we.detach(), wt.detach())
    assert (we._version - ve > 0) == (wt._version - vt > 0)
