"""Shared helpers of the nn tests: build a layer in torch and in ember, copy torch's weights into ember,
and compare outputs, input grads and parameter grads (train and eval mode)."""

import numpy as np
import torch
from compare import assert_same, to_ember, to_torch

import ember


def ember_state(tmod):
    """torch state_dict converted tensor by tensor into ember tensors."""
    return {k: to_ember(v.detach().numpy().copy()) if v.dtype != torch.bfloat16 else None
            for k, v in tmod.state_dict().items()}


def pair(name, args=(), kwargs=None, seed=0):
    """(ember module, torch module) of class `name`, with torch's initial weights loaded into ember."""
    kwargs = kwargs or {}
    torch.manual_seed(seed)
    tmod = getattr(torch.nn, name)(*args, **kwargs)
    emod = getattr(ember.nn, name)(*args, **kwargs)
    emod.load_state_dict(ember_state(tmod))
    return emod, tmod


def make_inputs(specs, rng):
    """NumPy arrays from specs: a shape tuple (float32 normal), or ("long", shape, high), or an array."""
    out = []
    for s in specs:
        if isinstance(s, np.ndarray):
            out.append(s)
        elif isinstance(s, tuple) and s and s[0] == "long":
            out.append(rng.integers(0, s[2], size=s[1]).astype(np.int64))
        elif isinstance(s, tuple) and s and s[0] == "prob":
            out.append(rng.uniform(0.05, 0.95, size=s[1]).astype(np.float32))
        else:
            out.append(rng.standard_normal(s).astype(np.float32))
    return out


def run_pair(emod, tmod, arrays, rtol=None, atol=None, grad=True):
    """Forward both modules on the same inputs, backward a random weighting of the output, compare all."""
    e_in = [to_ember(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    t_in = [to_torch(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    t_out = tmod(*t_in)
    e_out = emod(*e_in)
    assert_same(e_out, t_out, rtol=rtol, atol=atol, check_stride=False)
    if not grad:
        return
    t_first = t_out[0] if isinstance(t_out, tuple) else t_out
    e_first = e_out[0] if isinstance(e_out, tuple) else e_out
    if not t_first.requires_grad:
        return
    w = np.random.default_rng(1).standard_normal(tuple(t_first.shape)).astype(np.float32)
    (t_first * to_torch(w)).sum().backward()
    (e_first * to_ember(w)).sum().backward()
    for i, (ei, ti) in enumerate(zip(e_in, t_in)):
        if ti.grad is not None:
            assert ei.grad is not None, f"input {i}: ember has no grad"
            assert_same(ei.grad, ti.grad, rtol=rtol, atol=atol, check_stride=False, path=f"input grad {i}")
    tp = dict(tmod.named_parameters())
    for n, p in emod.named_parameters():
        if tp[n].grad is None:
            assert p.grad is None, f"param {n}: ember has a grad, torch has None"
        else:
            assert_same(p.grad, tp[n].grad, rtol=rtol, atol=atol, check_stride=False, path=f"param grad {n}")
