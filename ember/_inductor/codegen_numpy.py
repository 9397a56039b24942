"""NumPy code generation from the same kernels, for machines with no C compiler (NOTE [ No compiler ] in
ember/_native): each kernel becomes a Python function calling NumPy directly, no dispatcher.

A member is computed over its whole domain at once rather than row by row: each load is one `as_strided`
view of its buffer over the member's loop domain (the affine index's coefficients are the view's strides,
NOTE [ Affine indices ] in ir.py; a coefficient 0 is a broadcast), each operation one NumPy call, and the
result goes into the output buffer's view with `out=`/`copyto`. A reduction computes its expression over
the outer and reduced dimensions and reduces the reduced axes with the ufunc's `reduce`. Float32 values
are computed in float32 by NumPy, as eager computes them; the ops without a NumPy ufunc (sigmoid, gelu and
its gradient, erf) call the eager op's own NumPy kernel (`ember._dispatch.registry[...].kernel`). float16
and bfloat16 loads are widened to float32 by the `cast` every operation's operands get, and `copyto` rounds
them to nearest even when stored (NOTE [ Half precision is computed in float ] in ir.py). Integer division
raises torch's error for a zero divisor before dividing (NOTE [ Integer division ] in lowering.py).
"""

from __future__ import annotations

import numpy as np

from .ir import Const, Load, Op, Pointwise, walk
from .scheduler import member_exprs

__all__ = ["generate", "RUNTIME"]


def _view(a, offset, shape, strides):
    """The view of `a` from its element `offset` with `shape` and element `strides` (NOTE [ Affine indices ])."""
    it = a.itemsize
    if offset:
        a = np.lib.stride_tricks.as_strided(a, (offset + 1,), (it,))[offset:]
    return np.lib.stride_tricks.as_strided(a, shape, tuple(s * it for s in strides))


def _kernel(name):
    from .._dispatch import registry
    return registry[name].kernel


def _sigmoid(a):
    return _kernel("sigmoid")(a)


def _erf(a):
    return _kernel("erf")(a)


def _gelu(a, approximate):
    return _kernel("gelu")(a, approximate)


def _gelu_grad(a, approximate):
    one = np.ones_like(a)
    return _kernel("gelu_backward")(one, a, approximate)


def _int_division(kind, a, b):
    """Integer floor/trunc division, remainder or fmod of broadcastable arrays with torch's sign rules and its
    error for a zero divisor (as ember's eager kernels compute them)."""
    if np.any(np.asarray(b) == 0) and np.broadcast(a, b).size:
        raise RuntimeError("ZeroDivisionError")
    if kind == "remainder":
        return np.remainder(a, b)
    if kind == "fmod":
        return np.fmod(a, b)
    q = np.floor_divide(a, b)
    if kind == "truncdiv":
        q = q + ((np.remainder(a, b) != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)))
    return q


RUNTIME = {"np": np, "_view": _view, "_sigmoid": _sigmoid, "_erf": _erf, "_gelu": _gelu,
           "_gelu_grad": _gelu_grad, "_int_division": _int_division}


def _const(c: Const) -> str:
    v = c.value
    if c.dtype == "bool":
        return "np.True_" if v else "np.False_"
    if c.dtype.startswith("float"):
        return f"np.{c.dtype}({float(v)!r})" if v == v and abs(v) != float("inf") else \
            f"np.{c.dtype}(float({str(float(v))!r}))"
    info = np.iinfo(c.dtype)  # (a Python int converts to the dtype wrapping around, as C's cast does)
    return f"np.{c.dtype}({(int(v) - info.min) % (info.max - info.min + 1) + info.min})"


_UFUNC = {"add": "np.add", "sub": "np.subtract", "mul": "np.multiply", "truediv": "np.true_divide",
          "neg": "np.negative", "abs": "np.absolute", "exp": "np.exp", "log": "np.log", "sqrt": "np.sqrt",
          "sin": "np.sin", "cos": "np.cos", "tanh": "np.tanh", "log1p": "np.log1p", "expm1": "np.expm1",
          "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc", "round": "np.rint",
          "maximum": "np.maximum", "minimum": "np.minimum", "eq": "np.equal", "ne": "np.not_equal",
          "lt": "np.less", "le": "np.less_equal", "gt": "np.greater", "ge": "np.greater_equal",
          "logical_not": "np.logical_not", "logical_and": "np.logical_and", "logical_or": "np.logical_or",
          "reciprocal": "np.reciprocal"}


def op_numpy(o: Op, a: list) -> str:
    n, dt = o.name, o.dtype
    if n == "identity":
        return a[0]
    if n == "cast":
        if dt == "bool":
            return f"np.not_equal({a[0]}, 0)"
        return f"np.asarray({a[0]}).astype(np.{dt})"
    if dt == "bool" and n in ("add", "mul"):
        return f"np.{'logical_or' if n == 'add' else 'logical_and'}({a[0]}, {a[1]})"
    if n in _UFUNC:
        return f"{_UFUNC[n]}({', '.join(a)})"
    if n == "rsqrt":
        return f"np.reciprocal(np.sqrt({a[0]}))"
    if n == "sigmoid":
        return f"_sigmoid(np.asarray({a[0]}))"
    if n == "erf":
        return f"_erf(np.asarray({a[0]}))"
    if n == "where":
        return f"np.where({a[0]}, {a[1]}, {a[2]})"
    if n in ("floordiv", "truncdiv", "remainder", "fmod"):
        if not dt.startswith("float"):
            return f"_int_division({n!r}, {a[0]}, {a[1]})"
        if n == "truncdiv":
            return f"np.trunc(np.true_divide({a[0]}, {a[1]}))"
        return f"{_FLOAT_DIVISION[n]}({a[0]}, {a[1]})"
    if n == "pow_scalar":
        if dt == "float32":
            return f"np.power(np.asarray({a[0]}, np.float64), {float(o.param)!r}).astype(np.float32)"
        return f"np.power({a[0]}, {float(o.param)!r})"
    if n in ("gelu", "gelu_tanh"):
        return f"_gelu(np.asarray({a[0]}), {'tanh' if n == 'gelu_tanh' else 'none'!r})"
    if n in ("gelu_grad", "gelu_tanh_grad"):
        return f"_gelu_grad(np.asarray({a[0]}), {'tanh' if n == 'gelu_tanh_grad' else 'none'!r})"
    raise NotImplementedError(f"no NumPy for op {n}")


_FLOAT_DIVISION = {"floordiv": "np.floor_divide", "remainder": "np.remainder", "fmod": "np.fmod"}
_REDUCE = {"sum": "np.add", "prod": "np.multiply", "max": "np.maximum", "min": "np.minimum",
           "any": "np.logical_or", "all": "np.logical_and"}


def generate(kernel, buffers: dict, comment: str = "") -> tuple:
    """(Python source of `kernel` as a function of NumPy arrays, its parameter buffer names)."""
    k = len(kernel.outer)
    writes = [m.name for m in kernel.members]
    reads = []
    body = []
    n = [0]
    for m in kernel.members:
        e, store, sizes = member_exprs(m, k)
        names = list(sizes)
        shape = tuple(sizes[v] for v in names)
        body.append(f"# {m.name}")
        memo = {}
        for x in walk(e):
            key = x.key()
            if key in memo:
                continue
            if isinstance(x, Const):
                memo[key] = _const(x)
                continue
            t = f"t{n[0]}"
            n[0] += 1
            if isinstance(x, Load):
                if x.buf not in writes and x.buf not in reads:
                    reads.append(x.buf)
                strides = tuple(x.index.coef(v) for v in names)
                body.append(f"{t} = _view({x.buf}, {x.index.offset}, {shape}, {strides})")
            else:
                body.append(f"{t} = {op_numpy(x, [memo[a.key()] for a in x.args])}")
            memo[key] = t
        val = memo[e.key()]
        b = buffers[m.name]
        if isinstance(m, Pointwise):
            out_strides = tuple(st if s != 1 else 0 for s, st in zip(b.shape, b.strides))
            body.append(f"np.copyto(_view({m.name}, 0, {tuple(b.shape)}, {out_strides}), {val}, "
                        "casting='unsafe')")
        else:
            axes = tuple(range(k, len(shape)))
            acc = m.acc_dtype
            body.append(f"np.copyto({m.name}, {_REDUCE[m.reduction]}.reduce(np.broadcast_to({val}, {shape}), "
                        f"axis={axes}, dtype=np.{acc}), casting='unsafe')")
    params = reads + writes
    lines = []
    if comment:
        lines.extend("# " + ln for ln in comment.splitlines())
    lines.append(f"def {kernel.name}({', '.join(params)}):")
    lines.append("    with np.errstate(all='ignore'):  # IEEE results (inf - inf is NaN), as eager's, no warnings")
    lines.extend("        " + ln for ln in body)
    return "\n".join(lines), params
