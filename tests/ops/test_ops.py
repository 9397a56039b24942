"""Generic op tests driven by the OpInfo table (op_db.py): every op against torch on the same inputs.

For each entry: forward (values, dtype, shape, strides) per supported dtype, non-contiguous inputs,
backward and backward-node names, double backward, a float64 finite-difference gradcheck, in-place vs
out-of-place, `out=`, and error parity (exception class and message).
"""

import numpy as np
import pytest
import torch
from compare import assert_same, assert_same_error, check, ember_dtype, to_ember, to_torch
from op_db import OPS, Sample

import ember

_BY_NAME = {op.id: op for op in OPS}


def _params(kind):
    out = []
    for op in OPS:
        if kind == "forward":
            out += [pytest.param(op.id, d, id=f"{op.id}-{d}") for d in op.dtypes]
        elif getattr(op, kind):
            out.append(pytest.param(op.id, id=op.id))
    return out


def _run(op, sample):
    def fn(lib, *inputs):
        return op.fn(lib, *inputs, **sample.kwargs)
    return fn


@pytest.mark.parametrize("name,dtype", _params("forward"))
def test_forward(name, dtype):
    op = _BY_NAME[name]
    for s in op.samples(dtype, np.random.default_rng(0)):
        res = check(_run(op, s), *s.inputs, rtol=op.rtol, atol=op.atol, check_stride=op.strides)
        assert res is not None, "torch raised on a sample: error cases belong in `errors`"


def _strided(x):
    """The same values as `x`, held in every other element of a wider array (a non-contiguous view)."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    return wide


@pytest.mark.parametrize("name", _params("noncontig"))
def test_noncontiguous(name):
    op = _BY_NAME[name]
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    for s in op.samples(dtype, np.random.default_rng(1)):
        which = [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.ndim and x.shape[-1]]
        if not which:
            continue
        inputs = [_strided(x) if i in which else x for i, x in enumerate(s.inputs)]

        def fn(lib, *xs, s=s):
            xs = [x[..., ::2] if i in which else x for i, x in enumerate(xs)]
            return op.fn(lib, *xs, **s.kwargs)
        grad = [i for i in which if inputs[i].dtype.kind == "f" and (op.grad_inputs is None or i in op.grad_inputs)]
        check(fn, *inputs, rtol=op.rtol, atol=op.atol, check_stride=False, grad=grad if op.grad else None)


def _float_inputs(s):
    return [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"]


@pytest.mark.parametrize("name", _params("grad"))
def test_backward(name):
    op = _BY_NAME[name]
    for s in op.samples("float64", np.random.default_rng(2)):
        grad = _float_inputs(s)
        if op.grad_inputs is not None:
            grad = [i for i in grad if i in op.grad_inputs]
        res = check(_run(op, s), *s.inputs, grad=grad, rtol=op.rtol, atol=op.atol, check_stride=op.strides)
        if res is not None and op.node:
            e, t = res
            e0 = e[0] if isinstance(e, tuple) else e
            t0 = t[0] if isinstance(t, tuple) else t
            if t0.grad_fn is not None:
                assert type(e0.grad_fn).__name__ == type(t0.grad_fn).__name__


def _double(op, s, grad):
    """fn(lib, *inputs) -> the sum of squares of d(weighted output sum)/d(inputs), built with create_graph."""
    rng = np.random.default_rng(3)
    weights = {}

    def fn(lib, *inputs):
        out = op.fn(lib, *inputs, **s.kwargs)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
                if isinstance(o, (torch.Tensor, ember.Tensor)) and o.requires_grad]
        loss = 0
        for k, o in enumerate(outs):
            if k not in weights:
                weights[k] = rng.standard_normal(tuple(o.shape))
            w = to_torch(weights[k]) if lib is torch else to_ember(weights[k])
            loss = loss + (o * w).sum()
        xs = [inputs[i] for i in grad]
        gs = lib.autograd.grad(loss, xs, create_graph=True, allow_unused=True)
        return sum((g * g).sum() for g in gs if g is not None)
    return fn


@pytest.mark.parametrize("name", _params("gradgrad"))
def test_double_backward(name):
    op = _BY_NAME[name]
    for s in op.samples("float64", np.random.default_rng(4))[:3]:
        grad = _float_inputs(s)
        if op.grad_inputs is not None:
            grad = [i for i in grad if i in op.grad_inputs]
        if not grad or any(s.inputs[i].size == 0 for i in grad):
            continue
        check(_double(op, s, grad), *s.inputs, grad=grad, rtol=op.rtol or 1e-6, atol=op.atol or 1e-6)


def _numerical_check(fn, inputs, grad, eps=1e-6, tol=1e-5):
    """Central finite differences of a random projection of fn's outputs vs ember's analytical gradient.

    The projection pairs each weight with the same output position in both passes (outputs that do not
    require grad take no weight), and the perturbed inputs are C-ordered copies, so that writing through a
    flat view really moves the input."""
    rng = np.random.default_rng(5)
    xs = [to_ember(x, i in grad) for i, x in enumerate(inputs)]
    out = fn(ember, *xs)
    out = out if isinstance(out, (tuple, list)) else (out,)
    used = [k for k, o in enumerate(out) if isinstance(o, ember.Tensor) and o.requires_grad]
    ws = [rng.standard_normal(tuple(out[k].shape)) for k in used]

    def value(arrays):
        with ember.no_grad():
            r = fn(ember, *[to_ember(a) for a in arrays])
        r = r if isinstance(r, (tuple, list)) else (r,)
        return sum(float((r[k]._data * w).sum()) for k, w in zip(used, ws))

    loss = sum((out[k] * ember.from_numpy(w)).sum() for k, w in zip(used, ws))
    analytic = ember.autograd.grad(loss, [xs[i] for i in grad], allow_unused=True)
    for i, a in zip(grad, analytic):
        base = [np.array(x, copy=True, order="C") if isinstance(x, np.ndarray) else x for x in inputs]
        num = np.zeros(base[i].shape)
        flat = base[i].reshape(-1)
        assert np.shares_memory(flat, base[i])
        for j in range(base[i].size):
            old = flat[j]
            flat[j] = old + eps
            hi = value(base)
            flat[j] = old - eps
            lo = value(base)
            flat[j] = old
            num.reshape(-1)[j] = (hi - lo) / (2 * eps)
        got = np.zeros(num.shape) if a is None else a._data
        np.testing.assert_allclose(got, num, rtol=tol, atol=tol, err_msg=f"gradcheck of input {i}")


@pytest.mark.parametrize("name", _params("gradcheck"))
def test_gradcheck(name):
    op = _BY_NAME[name]
    s = op.samples("float64", np.random.default_rng(6))[0]
    grad = _float_inputs(s)
    if op.grad_inputs is not None:
        grad = [i for i in grad if i in op.grad_inputs]
    _numerical_check(_run(op, s), s.inputs, grad)


@pytest.mark.parametrize("name", _params("inplace"))
def test_inplace(name):
    op = _BY_NAME[name]
    dtype = "float32" if "float32" in op.dtypes else op.dtypes[0]
    done = 0
    for s in op.samples(dtype, np.random.default_rng(7)):
        x0 = s.inputs[0]
        e_out = op.fn(ember, *to_ember(list(s.inputs)), **s.kwargs)
        if not isinstance(x0, np.ndarray) or tuple(e_out.shape) != x0.shape or e_out.dtype != \
                ember.from_numpy(x0).dtype:
            continue

        def fn(lib, x, *rest, s=s):
            y = x.clone()
            r = op.inplace(lib, y, *rest, **s.kwargs)
            assert r is y
            return y
        res = check(fn, *s.inputs, rtol=op.rtol, atol=op.atol)
        assert_same(res[0], to_torch(e_out._data), rtol=op.rtol, atol=op.atol, check_stride=False)
        done += 1
    assert done, "no sample could run in place"


@pytest.mark.parametrize("name", _params("out"))
def test_out(name):
    op = _BY_NAME[name]
    dtype = "float32" if "float32" in op.dtypes else op.dtypes[0]
    for s in op.samples(dtype, np.random.default_rng(8)):
        def fn(lib, *inputs, s=s):
            r = op.fn(lib, *inputs, **s.kwargs)
            o = lib.empty(0, dtype=r.dtype)
            got = op.fn(lib, *inputs, **s.kwargs, out=o)
            assert got is o
            return o
        check(fn, *s.inputs, rtol=op.rtol, atol=op.atol, check_stride=False)


@pytest.mark.parametrize("name", [n for n in _params("out") if _BY_NAME[n.values[0]].grad
                                  and "float32" in _BY_NAME[n.values[0]].dtypes])
def test_out_refuses_grad(name):
    """`out=` with an input requiring grad: torch's error, naming the op that computed the result."""
    op = _BY_NAME[name]
    s = op.samples("float32", np.random.default_rng(8))[0]
    first = _float_inputs(s)[0]
    dtype = op.fn(torch, *[to_torch(x) for x in s.inputs], **s.kwargs).dtype

    def with_input(lib, *inputs):
        inputs = list(inputs)
        inputs[first] = inputs[first].detach().requires_grad_(True)
        out = lib.empty(0, dtype=dtype if lib is torch else ember_dtype(dtype))
        return op.fn(lib, *inputs, **s.kwargs, out=out)

    try:
        with_input(torch, *[to_torch(x) for x in s.inputs])
    except Exception:  # noqa: BLE001 - the class and message are compared
        assert_same_error(with_input, *s.inputs)
    else:  # torch's diag takes out= under grad (its out path does not check): so does ember's
        check(lambda lib, *xs: with_input(lib, *xs).detach(), *s.inputs, check_stride=False)


@pytest.mark.parametrize("name", _params("errors"))
def test_errors(name):
    op = _BY_NAME[name]
    for s in op.errors(np.random.default_rng(9)):
        assert_same_error(lambda lib, *xs, s=s: op.fn(lib, *xs, **s.kwargs), *s.inputs)


def test_table_is_consistent():
    assert len({op.id for op in OPS}) == len(OPS)
    assert all(isinstance(s, Sample) for op in OPS[:5] for s in op.samples(op.dtypes[0], np.random.default_rng(0)))
