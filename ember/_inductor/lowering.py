"""Lowering: an FX graph of ember's ops (what AOT autograd hands a compiler) to the loop-level IR of ir.py.

`GraphLowering(gm).run()` walks the graph once. Each node whose op has a lowering here (`LOWERINGS`, filled by
`@register(aten.op)`) becomes a `TensorView`: pointwise ops build expressions over their inputs' (NOTE
[ Computing dtypes ]), views re-index their input (NOTE [ Affine indices ] in ir.py), reductions make a
`Reduction` node with their producers inlined, and composite ops (softmax, log_softmax, layer_norm, gelu,
their backward formulas) are written as those primitives, so the scheduler fuses each into a kernel or
two. Every other node, or a node a lowering declines (`Unsupported`: a dtype or argument it does not
handle), is a `Fallback` calling ember's eager op (matmul, convolution, embedding, ...): the result is
always eager's, fused or not.

NOTE [ Computing dtypes ]
A node's result dtype is its meta value's (the fake tensor AOT autograd traced with), so type promotion is
never re-derived here. Arithmetic computes in the result dtype, every input cast to it first, as ember's
eager kernels do (NumPy computes float32 ops in float32); a comparison computes in its inputs' promoted
dtype and gives bool. float16 and bfloat16 values are computed in float32 and rounded where they are stored
(NOTE [ Half precision is computed in float ] in ir.py); the composites (mean, var, softmax, log_softmax,
layer_norm and their backward ops) keep their intermediate statistics in float32 buffers for them, as
torch's decompositions upcast. Complex values are not lowered (their nodes fall back).

NOTE [ When a value is realized ]
A computed value is stored (a `Pointwise` node) only where it must be: a graph output, an argument of a
fallback, a reduction result (always), or a value read by several consumers whose expression is not
cheap (anything but a few additions, multiplications and loads): re-computing `exp` in each consumer
would cost more than the store and the reloads. Everything else is inlined into its consumers. A half
precision value stored for that reason, or because a reshape merges its dimensions (an index ember keeps
affine, where inductor divides), is stored in float32 (the value keeps its dtype and loads the float
buffer), so that its consumers read it unrounded: inductor stores such a value too, but its consumers in the
same kernel read the float value the store was made from (the kernel's CSE of a store and a later load), and
the half buffer is removed (checked with torch.compile: `t = (x * y).exp(); t + t * 2` in float16 rounds
once).

NOTE [ Integer division ]
floor_divide (`div` with rounding_mode "floor"), `div` with "trunc", remainder and fmod compute with torch's
sign rules: integer floor division and remainder round toward negative infinity (`-7 // 2 == -4`,
`-7 % 2 == 1`), trunc division and fmod toward zero; `INT_MIN // -1` wraps to INT_MIN and `INT_MIN % -1` is
0 (torch.compile's results; torch's eager kernel traps there for int32 and int64). An integer divisor of 0
raises torch's `RuntimeError: ZeroDivisionError` (the C kernel sets a flag the wrapper checks after the
call; torch.compile raises the same, except for trunc division, where its kernel traps). Float operands
follow torch's eager kernels (`div_floor_floating`: `1.0 // 0.1 == 9.0`), where torch.compile computes
`floor(a / b)` (10.0 there): ember keeps eager's, the stricter reference.
"""

from __future__ import annotations

import math
import operator

from .. import _dtypes
from ..ops import aten
from .ir import (
    LOWP,
    Affine,
    Buffer,
    Const,
    EagerView,
    Fallback,
    Op,
    Pointwise,
    Reduction,
    TensorView,
    Unsupported,
    compute_dtype,
    contiguous_strides,
    walk,
)

__all__ = ["GraphLowering", "LOWERINGS", "register"]

SUPPORTED = frozenset(("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                       "bool"))
FLOATS = frozenset(("float32", "float64", "float16", "bfloat16"))
LOWERINGS: dict = {}


def register(*targets):
    def deco(fn):
        for t in targets:
            LOWERINGS[t] = fn
        return fn
    return deco


def dtype_name(d) -> str:
    return _dtypes.to_numpy(d).name


def cast(e, dtype: str):
    dtype = compute_dtype(dtype)
    if e.dtype == dtype:
        return e
    if isinstance(e, Const):
        return Const(_py_value(e.value, dtype), dtype)
    return Op("cast", (e,), dtype)


def _py_value(v, dtype):
    if dtype == "bool":
        return bool(v)
    if dtype in FLOATS:
        return float(v)
    if isinstance(v, float) and not math.isfinite(v):
        raise Unsupported("non-finite constant cast to an integer")
    return int(v)


def const_tv(value, dtype: str) -> TensorView:
    c = Const(_py_value(value, dtype), dtype)
    return TensorView((), dtype, lambda idx: c)


def broadcast_index(index, in_shape, out_shape):
    """The input's index for an output index of a broadcast (trailing dimensions aligned)."""
    lead = len(out_shape) - len(in_shape)
    return [Affine() if s == 1 else index[lead + d] for d, s in enumerate(in_shape)]


def expr_size(tv: TensorView) -> tuple:
    """(number of distinct operations, whether any is expensive) of `tv`'s expression."""
    idx = [Affine.var(f"_i{d}") for d in range(len(tv.shape))]
    nodes = walk(tv.fn(idx))
    ops = [n for n in nodes if isinstance(n, Op)]
    heavy = any(o.name not in ("add", "sub", "mul", "neg", "cast", "where", "relu_mask") for o in ops)
    return len(ops), heavy


# ---- the graph walk ----------------------------------------------------------------------------------------

class GraphLowering:
    def __init__(self, gm, example_inputs=None, backend="c"):
        self.gm = gm
        self.backend = backend
        self.env: dict = {}
        self.steps: list = []  # Pointwise / Reduction / Fallback / EagerView, in execution order
        self.buffers: dict = {}  # name -> Buffer
        self.inputs: list = []  # placeholder buffer names, in order
        self.outputs: list = []  # per graph output: ("buf", name) or ("const", value)
        self.origin = None  # the node being lowered (for comments)
        self._n = 0

    def new_buffer(self, shape, strides, dtype, prefix="buf") -> Buffer:
        name = f"{prefix}{self._n}"
        self._n += 1
        b = Buffer(name, shape, strides, dtype)
        self.buffers[name] = b
        return b

    # -- realization (NOTE [ When a value is realized ])

    def realize(self, tv: TensorView, strides=None) -> Buffer:
        if tv.buffer is not None and (strides is None or _same_layout(tv.buffer, strides)):
            return tv.buffer
        if tv.view_of is not None and strides is None:
            node, src = tv.view_of
            if src.buffer is not None or src.view_of is not None:
                sb = self.realize(src)
                val = node.meta["val"]
                out = self.new_buffer(tv.shape, tuple(val.stride()), tv.dtype, prefix="view")
                self.steps.append(EagerView(node, sb.name, out.name))
                tv.buffer = out
                return out
        if strides is None and hasattr(tv.origin, "meta") and hasattr(tv.origin.meta.get("val"), "stride"):
            strides = tuple(tv.origin.meta["val"].stride())  # eager's layout for the node's own value
        buf = self.new_buffer(tv.shape, strides or contiguous_strides(tv.shape), tv.dtype)
        self.steps.append(Pointwise(buf, tv.fn, tv.inlined or self._origins()))
        tv.fn, tv.buffer, tv.view_of = buf.load, buf, None
        return buf

    def _origins(self):
        n = self.origin
        return [n] if n is not None else []

    def reduction(self, tv: TensorView, dims, reduction: str, out_dtype: str, acc_dtype: str | None = None,
                  keepdim=False) -> TensorView:
        """A `Reduction` node over `dims` of `tv` (realized), as a TensorView of the kept (or kept-as-1) shape."""
        nd = len(tv.shape)
        dims = sorted({d % nd for d in dims}) if nd else []
        kept = [d for d in range(nd) if d not in dims]
        outer = tuple(tv.shape[d] for d in kept)
        reduced = tuple(tv.shape[d] for d in dims)
        acc = compute_dtype(acc_dtype or out_dtype)
        fn = tv.fn

        def body(oidx, ridx):
            full = [None] * nd
            for d, i in zip(kept, oidx):
                full[d] = i
            for d, i in zip(dims, ridx):
                full[d] = i
            return cast(fn(full), acc)

        buf = self.new_buffer(outer, contiguous_strides(outer), out_dtype)
        self.steps.append(Reduction(buf, outer, reduced, reduction, acc, body, self._origins()))
        out = TensorView.of(buf)
        if keepdim:
            shape = tuple(1 if d in dims else s for d, s in enumerate(tv.shape))
            return TensorView(shape, out_dtype, lambda idx: buf.load([idx[d] for d in kept]))
        return out

    # -- the walk

    def run(self):
        for node in self.gm.graph.nodes:
            self.origin = node
            if node.op == "placeholder":
                val = node.meta.get("val")
                if isinstance(val, (tuple, list)):  # a saved tuple (a multi-output op's result)
                    if not all(v is None or hasattr(v, "stride") for v in val):
                        raise Unsupported("a non-tensor graph input")
                    bufs = [None if v is None else self._input(v) for v in val]
                    self.inputs.append([None if b is None else b.name for b in bufs])
                    self.env[node] = tuple(None if b is None else TensorView.of(b, origin=node) for b in bufs)
                    continue
                if not hasattr(val, "stride"):
                    raise Unsupported("a non-tensor graph input")
                buf = self._input(val)
                self.inputs.append(buf.name)
                self.env[node] = TensorView.of(buf, origin=node)
            elif node.op == "call_function":
                self.env[node] = self.lower_node(node)
            elif node.op == "output":
                outs = node.args[0]
                for o in (outs if isinstance(outs, (tuple, list)) else (outs,)):
                    if hasattr(o, "op") and isinstance(self.env[o], tuple):
                        names = []
                        for tv in self.env[o]:
                            if tv is not None and not isinstance(tv, TensorView):
                                raise Unsupported("a non-tensor graph output")
                            names.append(None if tv is None else self.realize(tv).name)
                        self.outputs.append(("tuple", names))
                    elif hasattr(o, "op"):
                        tv = self.env[o]
                        if not isinstance(tv, TensorView):
                            raise Unsupported("a non-tensor graph output")
                        val = o.meta.get("val")
                        strides = tuple(val.stride()) if tv.view_of is None or tv.buffer is not None else None
                        self.outputs.append(("buf", self.realize(tv, strides).name))
                    else:
                        self.outputs.append(("const", o))
            else:
                raise Unsupported(f"graph node kind {node.op}")
        return self

    def _input(self, val) -> Buffer:
        return self.new_buffer(tuple(val.shape), tuple(val.stride()), dtype_name(val.dtype), prefix="arg")

    def lower_node(self, node):
        if node.target is operator.getitem:
            src = self.env[node.args[0]]
            return src[node.args[1]]
        low = LOWERINGS.get(node.target)
        val = node.meta.get("val")
        if low is not None and _lowerable(node, val) and not _native_is_faster(node):
            args = [self.env[a] if hasattr(a, "op") else a for a in node.args]
            try:
                out = low(self, node, *args, **node.kwargs)
            except Unsupported:
                out = None
            if out is not None:
                if isinstance(out, TensorView):
                    out.origin = node
                    out.inlined = [o for a in args if isinstance(a, TensorView) and a.buffer is None
                                   for o in a.inlined] + [node]
                    self._maybe_realize(node, out)
                return out
        return self.fallback(node)

    def _maybe_realize(self, node, tv):
        if tv.buffer is not None or len(node.users) <= 1:
            return
        n_ops, heavy = expr_size(tv)
        if heavy or n_ops > 6:
            if tv.dtype in LOWP:
                self.realize_unrounded(tv)
                return
            self.realize(tv)

    def realize_unrounded(self, tv: TensorView) -> Buffer:
        """Store half precision value `tv` for ember's own reasons (reuse, a reshape merging dimensions) in a
        float32 buffer that `tv` then loads: unrounded, as inductor's consumers read such a value (NOTE
        [ When a value is realized ]); `tv` keeps its dtype and is rounded where it must be stored."""
        tmp = TensorView(tv.shape, "float32", tv.fn, origin=tv.origin)
        tmp.inlined = tv.inlined
        buf = self.realize(tmp)
        tv.fn = buf.load
        return buf

    def fallback(self, node):
        def arg(a):
            if hasattr(a, "op"):
                v = self.env[a]
                if isinstance(v, TensorView):
                    return ("buf", self.realize(v).name)
                raise Unsupported("a fallback argument that is a tuple of values")
            if isinstance(a, (list, tuple)):
                return type(a)(arg(x) for x in a)
            return ("const", a)

        args = [arg(a) for a in node.args]
        kwargs = {k: arg(v) for k, v in node.kwargs.items()}
        val = node.meta.get("val")
        vals = list(val) if isinstance(val, (tuple, list)) else [val]
        outs, views, expected = [], [], []
        for v in vals:
            if hasattr(v, "stride") and hasattr(v, "dtype"):
                dt = dtype_name(v.dtype)
                b = self.new_buffer(tuple(v.shape), tuple(v.stride()), dt, prefix="ext")
                outs.append(b.name)
                expected.append(b)
                views.append(TensorView.of(b, origin=node))
            else:
                outs.append(None)
                expected.append(None)
                views.append(v)
        self.steps.append(Fallback(node, args, kwargs, outs, expected))
        return tuple(views) if isinstance(val, (tuple, list)) else views[0]


# NOTE [ Where eager's native kernel wins ]
# softmax, log_softmax, layer_norm and gelu (and their backward ops) have hand-written eager kernels in
# ember/_native, one loop each with float32 vectorised exp/erf, which run whenever a float32 input reaches
# their size threshold. The loops generated here for the same composites are 2-5x slower at those sizes (they
# accumulate in double and call scalar helpers: the 4M-float softmax + layer_norm + gelu block took 110 ms
# compiled against 46 ms eager), so there such a node stays a call of the eager op between the generated
# kernels, as Inductor keeps its extern kernels; below the threshold, and in float64, it is lowered and fused.
_NATIVE_COMPOSITES = frozenset(t for t in (
    getattr(aten.softmax, "default", None), getattr(aten.log_softmax, "default", None),
    getattr(aten._softmax_backward_data, "default", None), getattr(aten._log_softmax_backward_data, "default", None),
    getattr(aten.native_layer_norm, "default", None), getattr(aten.native_layer_norm_backward, "default", None),
    getattr(aten.gelu, "default", None), getattr(aten.gelu_backward, "default", None)) if t is not None)


def _native_is_faster(node) -> bool:
    if node.target not in _NATIVE_COMPOSITES:
        return False
    from .. import _native

    v = next((a.meta.get("val") for a in node.args if hasattr(a, "meta")), None)
    return (v is not None and dtype_name(v.dtype) == "float32" and v.numel() >= _native.MIN_SIZE
            and _native.enabled())


def _lowerable(node, val) -> bool:
    vals = list(val) if isinstance(val, (tuple, list)) else [val]
    for v in vals:
        if not hasattr(v, "dtype") or dtype_name(v.dtype) not in SUPPORTED:
            return False
    for a in node.args:
        if hasattr(a, "meta"):
            v = a.meta.get("val")
            if hasattr(v, "dtype") and dtype_name(v.dtype) not in SUPPORTED:
                return False
    return True


def _same_layout(buf: Buffer, strides) -> bool:
    return all(s == 1 or a == b for s, a, b in zip(buf.shape, buf.strides, strides))


def _out(node):
    val = node.meta["val"]
    return tuple(val.shape), dtype_name(val.dtype)


def _as_tv(x, dtype):
    return x if isinstance(x, TensorView) else const_tv(x, dtype)


def pointwise(node, name, inputs, compute: str | None = None, out: str | None = None, param=None,
              shape=None):
    """A TensorView computing `name(*inputs)` in `compute` (default: the node's dtype), cast to `out`."""
    oshape, odt = _out(node) if node is not None else (shape, out)
    shape = oshape if shape is None else shape
    out = out or odt
    compute = compute or out
    # each input's fn is taken now: realizing an input later must not change what this value computes
    tvs = [(t.fn, t.shape) for t in (_as_tv(x, compute) for x in inputs)]

    def fn(idx):
        args = [cast(f(broadcast_index(idx, sh, shape)), compute) for f, sh in tvs]
        return cast(Op(name, args, compute, param), out)
    return TensorView(shape, out, fn)


def _promoted(*xs) -> str:
    from .. import result_type
    vals = [x.meta["val"] if hasattr(x, "meta") else x for x in xs]
    return dtype_name(result_type(*vals))


# ---- pointwise ops -------------------------------------------------------------------------------------------

def _float_only(node):
    if _out(node)[1] not in FLOATS:
        raise Unsupported("float op on integers")


@register(aten.add.default)
def _add(lo, node, a, b, alpha=1):
    if alpha != 1:
        b = pointwise(node, "mul", [b, alpha])
    return pointwise(node, "add", [a, b])


@register(aten.sub.default)
def _sub(lo, node, a, b, alpha=1):
    if _out(node)[1] == "bool":
        raise Unsupported("bool subtraction")
    if alpha != 1:
        b = pointwise(node, "mul", [b, alpha])
    return pointwise(node, "sub", [a, b])


@register(aten.rsub.default)
def _rsub(lo, node, a, b, alpha=1):
    return _sub(lo, node, b, a, alpha)


@register(aten.mul.default)
def _mul(lo, node, a, b):
    if _out(node)[1] == "bool":
        return pointwise(node, "logical_and", [a, b])
    return pointwise(node, "mul", [a, b])


@register(aten.div.Tensor)
def _div(lo, node, a, b):
    _float_only(node)
    return pointwise(node, "truediv", [a, b])


def _division(name):
    def low(lo, node, a, b):  # NOTE [ Integer division ]
        if _out(node)[1] == "bool":
            raise Unsupported(f"{name} of bools")
        return pointwise(node, name, [a, b])
    return low


register(aten.div.Tensor_mode_floor)(_division("floordiv"))
register(aten.div.Tensor_mode_trunc)(_division("truncdiv"))
register(aten.remainder.Tensor, aten.remainder.Scalar)(_division("remainder"))
register(aten.fmod.Tensor, aten.fmod.Scalar)(_division("fmod"))


@register(aten.maximum.default)
def _maximum(lo, node, a, b):
    return pointwise(node, "maximum", [a, b])


@register(aten.minimum.default)
def _minimum(lo, node, a, b):
    return pointwise(node, "minimum", [a, b])


# NOTE [ Scalar libm calls stay NumPy's ]
# C has no vectorisable log, tanh, erf, ... without -ffast-math (NOTE [ Exact flags ]): each is a scalar
# libm call, measured at 60-90 ns per element on these machines, while NumPy's SIMD float32 versions take
# ~2 ns. So under the C backend these ops are fallbacks (ember's eager NumPy kernel, between fused kernels);
# exp, sigmoid, gelu and their gradients have vectorisable forms in common.h (em_expf, em_exp,
# em_erf_single) and fuse. float32 sin and cos fuse too: em_sinf_fast/em_cosf_fast (NOTE [ Fast sin and
# cos ] in common.h) take ~0.34 ns an element against NumPy's 0.5 ns, and are correctly rounded but within
# ~1e-6 ulp of a boundary (NumPy's, torch eager's and torch.compile's float32 sin are within 1 ulp; they
# differ from the correctly rounded value on 5-30% of arguments); arguments from 2^30 up take a rerun with
# the table reduction (NOTE [ Fast trig with a rerun ] in codegen_c.py). Half-precision ones are computed
# in float with them (a fallback there would round its input and its result, which torch.compile does not:
# NOTE [ Half precision is computed in float ] in ir.py). float64 sin and cos stay NumPy's. The NumPy
# backend computes them all with NumPy's ufuncs.
SCALAR_LIBM = frozenset(("log", "sin", "cos", "tanh", "erf", "log1p", "expm1"))
VECTOR_FLOAT32 = frozenset(("sin", "cos"))  # SCALAR_LIBM ops with a float32 form in common.h


def _unary(name, floats=True):
    def low(lo, node, a):
        if floats:
            _float_only(node)
        dt = _out(node)[1]
        if lo.backend == "c" and name in SCALAR_LIBM and dt not in LOWP \
                and not (name in VECTOR_FLOAT32 and dt == "float32"):
            raise Unsupported(f"{name} is a scalar libm call in C")
        return pointwise(node, name, [a])
    return low


for _name in ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "log1p", "expm1",
              "reciprocal", "floor", "ceil", "trunc", "round"):
    register(getattr(aten, _name).default)(_unary(_name))
register(aten.neg.default)(_unary("neg", floats=False))
register(aten.abs.default)(_unary("abs", floats=False))
register(aten.clone.default, aten.contiguous.default)(_unary("identity", floats=False))


@register(aten.relu.default)
def _relu(lo, node, a):
    if _out(node)[1] == "bool":
        raise Unsupported("relu of bool")
    return pointwise(node, "maximum", [a, 0])


@register(aten.silu.default)
def _silu(lo, node, a):
    _float_only(node)
    return pointwise(node, "mul", [a, pointwise(node, "sigmoid", [a])])


@register(aten.to.default)
def _to(lo, node, a, dtype=None):
    shape, out = _out(node)
    return pointwise(node, "identity", [a], compute=a.dtype if isinstance(a, TensorView) else out)


def _compare(name):
    def low(lo, node, a, b):
        return pointwise(node, name, [a, b], compute=_promoted(*node.args))
    return low


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    register(getattr(aten, _name).default)(_compare(_name))


@register(aten.logical_not.default)
def _logical_not(lo, node, a):
    return pointwise(node, "logical_not", [a], compute="bool")


@register(aten.logical_and.default)
def _logical_and(lo, node, a, b):
    return pointwise(node, "logical_and", [a, b], compute="bool")


@register(aten.logical_or.default)
def _logical_or(lo, node, a, b):
    return pointwise(node, "logical_or", [a, b], compute="bool")


@register(aten.where.default)
def _where(lo, node, cond, a, b):
    shape, out = _out(node)
    c, x, y = _as_tv(cond, "bool"), _as_tv(a, out), _as_tv(b, out)
    (cf, cs), (xf, xs), (yf, ys) = (c.fn, c.shape), (x.fn, x.shape), (y.fn, y.shape)

    def fn(idx):
        return Op("where", (cast(cf(broadcast_index(idx, cs, shape)), "bool"),
                            cast(xf(broadcast_index(idx, xs, shape)), out),
                            cast(yf(broadcast_index(idx, ys, shape)), out)), out)
    return TensorView(shape, out, fn)


@register(aten.masked_fill.default)
def _masked_fill(lo, node, a, mask, value):
    if isinstance(value, TensorView) and value.shape != ():
        raise Unsupported("masked_fill with a tensor value")
    return _where(lo, node, mask, value, a)


@register(aten.clamp.default)
def _clamp(lo, node, a, lo_=None, hi=None, **kw):
    lo_ = kw.get("lo", lo_)
    hi = kw.get("hi", hi)
    if isinstance(lo_, TensorView) or isinstance(hi, TensorView):
        raise Unsupported("tensor bounds")
    x = a
    if lo_ is not None:
        x = pointwise(node, "maximum", [x, lo_])
    if hi is not None:
        x = pointwise(node, "minimum", [x, hi])
    if lo_ is not None and hi is not None and lo_ > hi:
        raise Unsupported("empty clamp range")
    return x


@register(aten.pow.Tensor_Scalar)
def _pow(lo, node, a, e):
    _float_only(node)
    if isinstance(e, bool) or not isinstance(e, (int, float)):
        raise Unsupported("pow exponent")
    if e == 2:
        return pointwise(node, "mul", [a, a])
    if e == 1:
        return pointwise(node, "identity", [a])
    if e == 0.5:
        return pointwise(node, "sqrt", [a])
    return pointwise(node, "pow_scalar", [a], param=float(e))


@register(aten.threshold_backward.default)
def _threshold_backward(lo, node, g, out):
    # the gradient of relu: g where the output is positive, else 0
    shape, dt = _out(node)
    pos = pointwise(None, "gt", [out, 0], compute=dt, out="bool", shape=shape)
    return _where(lo, node, pos, g, 0)


@register(aten.sigmoid_backward.default)
def _sigmoid_backward(lo, node, g, y):
    _float_only(node)
    one_minus = pointwise(node, "sub", [1, y])
    return pointwise(node, "mul", [g, pointwise(node, "mul", [y, one_minus])])


@register(aten.silu_backward.default)
def _silu_backward(lo, node, g, a):
    # torch's order: (g s) (1 + a (1 - s)), s = sigmoid(a) (NOTE [ silu's backward kernel ] in _ops/nn_ops.py)
    _float_only(node)
    s = pointwise(node, "sigmoid", [a])
    slope = pointwise(node, "add", [1, pointwise(node, "mul", [a, pointwise(node, "sub", [1, s])])])
    return pointwise(node, "mul", [pointwise(node, "mul", [g, s]), slope])


@register(aten.tanh_backward.default)
def _tanh_backward(lo, node, g, y):
    _float_only(node)
    return pointwise(node, "mul", [g, pointwise(node, "sub", [1, pointwise(node, "mul", [y, y])])])


@register(aten.gelu.default)
def _gelu(lo, node, a, approximate="none"):
    _float_only(node)
    return pointwise(node, "gelu_tanh" if approximate == "tanh" else "gelu", [a])


@register(aten.gelu_backward.default)
def _gelu_backward(lo, node, g, a, approximate="none"):
    _float_only(node)
    d = pointwise(node, "gelu_tanh_grad" if approximate == "tanh" else "gelu_grad", [a])
    return pointwise(node, "mul", [g, d])


@register(aten.leaky_relu.default)
def _leaky_relu(lo, node, a, slope=0.01):
    _float_only(node)
    shape, dt = _out(node)
    pos = pointwise(None, "gt", [a, 0], compute=dt, out="bool", shape=shape)
    return _where(lo, node, pos, a, pointwise(node, "mul", [a, slope]))


@register(aten.full.default)
def _full(lo, node, shape=None, fill=None, dtype=None):
    shape_, dt = _out(node)
    c = Const(_py_value(fill, dt), dt)
    return TensorView(shape_, dt, lambda idx: c)


@register(aten.full_like.default)
def _full_like(lo, node, a, fill=None, dtype=None):
    return _full(lo, node, None, fill)


# ---- views (index arithmetic, NOTE [ Affine indices ]) ------------------------------------------------------------

def _view(node, src: TensorView, shape, remap) -> TensorView:
    fn = src.fn
    return TensorView(shape, src.dtype, lambda idx: fn(remap(idx)), view_of=(node, src))


@register(aten.permute.default)
def _permute(lo, node, a, dims):
    nd = len(a.shape)
    dims = [d % nd for d in dims]
    inv = [0] * nd
    for i, d in enumerate(dims):
        inv[d] = i
    return _view(node, a, _out(node)[0], lambda idx: [idx[inv[d]] for d in range(nd)])


@register(aten.transpose.default)
def _transpose(lo, node, a, d0, d1):
    nd = len(a.shape)
    if nd == 0:
        return _view(node, a, (), lambda idx: idx)
    perm = list(range(nd))
    perm[d0 % nd], perm[d1 % nd] = perm[d1 % nd], perm[d0 % nd]
    return _view(node, a, _out(node)[0], lambda idx: [idx[perm[d]] for d in range(nd)])


@register(aten.t.default)
def _t(lo, node, a):
    if len(a.shape) < 2:
        return _view(node, a, a.shape, lambda idx: idx)
    return _view(node, a, _out(node)[0], lambda idx: [idx[1], idx[0]])


@register(aten.expand.default)
def _expand(lo, node, a, shape):
    out = _out(node)[0]
    return _view(node, a, out, lambda idx: broadcast_index(idx, a.shape, out))


@register(aten.unsqueeze.default)
def _unsqueeze(lo, node, a, d):
    out = _out(node)[0]
    d = d % len(out)
    return _view(node, a, out, lambda idx: idx[:d] + idx[d + 1:])


@register(aten.squeeze.default, aten.squeeze.dim, aten.squeeze.dims)
def _squeeze(lo, node, a, dims=None):
    out = _out(node)[0]
    nd = len(a.shape)
    if dims is None:
        dims = range(nd)
    dims = {d % nd for d in ((dims,) if isinstance(dims, int) else dims) if a.shape[d % nd] == 1} if nd else set()

    def remap(idx):
        it = iter(idx)
        return [Affine() if d in dims else next(it) for d in range(nd)]
    return _view(node, a, out, remap)


@register(aten.select.default)
def _select(lo, node, a, dim, index):
    nd = len(a.shape)
    dim %= nd
    index = index + a.shape[dim] if index < 0 else index
    return _view(node, a, _out(node)[0], lambda idx: idx[:dim] + [Affine(index)] + idx[dim:])


@register(aten.slice.default)
def _slice(lo, node, a, dim=0, start=None, stop=None, step=1):
    nd = len(a.shape)
    dim %= nd
    start_, _, step_ = slice(start, stop, step).indices(a.shape[dim])
    return _view(node, a, _out(node)[0],
                 lambda idx: idx[:dim] + [idx[dim] * step_ + start_] + idx[dim + 1:])


@register(aten.view.default, aten.reshape.default)
def _reshape(lo, node, a, shape):
    out = _out(node)[0]
    src = tuple(a.shape)
    groups = _split_groups(src, out)
    if groups is not None:
        # every input dimension splits into consecutive output dimensions: affine
        def remap(idx):
            res = []
            for outs in groups:
                acc = Affine()
                for j in outs:
                    acc = acc * out[j] + idx[j]
                res.append(acc)
            return res
        return _view(node, a, out, remap)
    # merging dimensions: load from a realized buffer with the strides a view would have (a computed half value:
    # a float32 buffer, NOTE [ When a value is realized ])
    if a.buffer is None:
        buf = lo.realize_unrounded(a) if a.dtype in LOWP else lo.realize(a)
    else:
        buf = a.buffer
    strides = _view_strides(buf.shape, buf.strides, out)
    if strides is None:
        buf = lo.realize(TensorView(a.shape, buf.dtype, buf.load), contiguous_strides(a.shape))
        strides = contiguous_strides(out)
    vb = Buffer(buf.name, out, strides, buf.dtype)
    return TensorView(out, a.dtype, vb.load, view_of=(node, a))


def _split_groups(src, out):
    """For each source dimension, the output dimensions it splits into, when the reshape only splits
    dimensions (size-1 dimensions may appear or vanish anywhere); None when it merges some."""
    out_nz = [j for j, o in enumerate(out) if o != 1]
    groups, k = [], 0
    for s in src:
        g, n = [], 1
        if s != 1:
            while n < s and k < len(out_nz):
                g.append(out_nz[k])
                n *= out[out_nz[k]]
                k += 1
            if n != s:
                return None
        groups.append(g)
    return groups if k == len(out_nz) else None


def _view_strides(shape, strides, new):
    """torch's computeStride: the strides of `new` viewing a tensor of `shape`/`strides`, or None."""
    if 0 in shape:
        return contiguous_strides(new)
    dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
    res = [0] * len(new)
    k = len(new) - 1
    i = len(dims) - 1
    while i >= 0:
        chunk_size, base_stride = dims[i][0], dims[i][1]
        while i > 0 and dims[i - 1][1] == dims[i][0] * dims[i][1]:
            i -= 1
            chunk_size *= dims[i][0]
        n, st = 1, base_stride
        while k >= 0 and (n < chunk_size or new[k] == 1):
            if n * new[k] > chunk_size and new[k] != 1:
                return None
            res[k] = st
            st *= new[k]
            n *= new[k]
            k -= 1
        if n != chunk_size:
            return None
        i -= 1
    while k >= 0:
        if new[k] != 1:
            return None
        res[k] = 1
        k -= 1
    return tuple(res)


# ---- reductions --------------------------------------------------------------------------------------------

def _dims(a, dims):
    nd = len(a.shape)
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        return list(range(nd))
    return [d % nd for d in ((dims,) if isinstance(dims, int) else dims)] if nd else []


def _acc(dt):
    return "float64" if dt in FLOATS else ("int64" if dt != "bool" else "int64")


@register(aten.sum.default, aten.sum.dim_IntList)
def _sum(lo, node, a, dims=None, keepdim=False, dtype=None):
    shape, out = _out(node)
    src = pointwise(None, "identity", [a], compute=out, out=out, shape=a.shape)
    return lo.reduction(src, _dims(a, dims), "sum", out, _acc(out), keepdim)


@register(aten.mean.default, aten.mean.dim)
def _mean(lo, node, a, dims=None, keepdim=False, dtype=None):
    shape, out = _out(node)
    _float_only(node)
    dd = _dims(a, dims)
    n = 1
    for d in dd:
        n *= a.shape[d]
    src = pointwise(None, "identity", [a], compute=out, out=out, shape=a.shape)
    s = lo.reduction(src, dd, "sum", compute_dtype(out), _acc(out), keepdim)  # (half: a float32 sum)
    return pointwise(node, "truediv", [s, n])


def _extremum(kind):
    def low(lo, node, a, dims=None, keepdim=False):
        shape, out = _out(node)
        if 0 in a.shape:
            raise Unsupported("empty reduction")
        return lo.reduction(a, _dims(a, dims), kind, out, out, keepdim)
    return low


register(aten.amax.default)(_extremum("max"))
register(aten.amin.default)(_extremum("min"))


@register(aten.sum_to_size.default)
def _sum_to_size(lo, node, a, shape):
    out_shape, out = _out(node)
    lead = len(a.shape) - len(out_shape)
    dims = list(range(lead)) + [lead + d for d, s in enumerate(out_shape) if s == 1 and a.shape[lead + d] != 1]
    if not dims:
        return a
    rf = lo.reduction(a, dims, "sum", out, _acc(out), keepdim=True).fn
    # drop the leading (kept-as-1) dimensions
    return TensorView(out_shape, out, lambda idx: rf([Affine()] * lead + list(idx)))


@register(aten.var.default)
def _var(lo, node, a, dims=None, correction=1, keepdim=False):
    shape, out = _out(node)
    _float_only(node)
    dd = _dims(a, dims)
    n = 1
    for d in dd:
        n *= a.shape[d]
    cdt = compute_dtype(out)  # (half: the statistics stay float32)
    mean = pointwise(None, "truediv", [lo.reduction(a, dd, "sum", cdt, _acc(out), True), n],
                     out=cdt, shape=tuple(1 if d in dd else s for d, s in enumerate(a.shape)))
    diff = pointwise(None, "sub", [a, mean], out=cdt, shape=a.shape)
    sq = pointwise(None, "mul", [diff, diff], out=cdt, shape=a.shape)
    s = lo.reduction(sq, dd, "sum", cdt, _acc(out), keepdim)
    denom = max(n - (correction if correction is not None else 1), 0)
    return pointwise(node, "truediv", [s, denom])


# ---- composite ops: softmax family, layer norm ------------------------------------------------------------

def _row_shape(a, dim):
    return tuple(1 if d == dim else s for d, s in enumerate(a.shape))


@register(aten.softmax.default, aten.log_softmax.default)
def _softmax(lo, node, a, dim):
    shape, out = _out(node)
    _float_only(node)
    if a.dtype != out or 0 in a.shape or not shape:
        raise Unsupported("softmax with a cast or empty rows")
    dim %= len(shape)
    rs = _row_shape(a, dim)
    cdt = compute_dtype(out)  # (half: the row statistics stay float32, as torch's decomposition upcasts)
    m = lo.reduction(a, [dim], "max", cdt, cdt, keepdim=True)
    # a row of -inf has max -inf: exp(x - max) then is NaN, as eager's
    shifted = pointwise(None, "sub", [a, m], out=out, shape=shape)
    e = pointwise(None, "exp", [shifted], out=out, shape=shape)
    s = lo.reduction(e, [dim], "sum", cdt, _acc(out), keepdim=True)
    if node.target is aten.log_softmax.default:
        ls = pointwise(None, "log", [s], out=out, shape=rs)
        return pointwise(node, "sub", [shifted, ls])
    return pointwise(node, "truediv", [e, s])


@register(aten._softmax_backward_data.default)
def _softmax_backward(lo, node, g, y, dim, input_dtype=None):
    shape, out = _out(node)
    _float_only(node)
    if g.dtype != out or y.dtype != out or not shape:
        raise Unsupported("softmax backward with a cast")
    dim %= len(shape)
    gy = pointwise(None, "mul", [g, y], out=out, shape=shape)
    s = lo.reduction(gy, [dim], "sum", compute_dtype(out), _acc(out), keepdim=True)
    return pointwise(node, "mul", [y, pointwise(None, "sub", [g, s], out=out, shape=shape)])


@register(aten._log_softmax_backward_data.default)
def _log_softmax_backward(lo, node, g, y, dim, input_dtype=None):
    shape, out = _out(node)
    _float_only(node)
    if g.dtype != out or y.dtype != out or not shape:
        raise Unsupported("log_softmax backward with a cast")
    dim %= len(shape)
    s = lo.reduction(g, [dim], "sum", compute_dtype(out), _acc(out), keepdim=True)
    e = pointwise(None, "exp", [y], out=out, shape=shape)
    return pointwise(node, "sub", [g, pointwise(None, "mul", [e, s], out=out, shape=shape)])


def _norm_axes(shape, axes):
    """layer_norm's normalized `axes` of `shape` (sorted; they must be the trailing ones), the number of
    elements they hold, and the shape of a per-row statistic (those axes kept as 1)."""
    nd = len(shape)
    axes = sorted(a % nd for a in axes)
    if axes != list(range(nd - len(axes), nd)) or 0 in shape:
        raise Unsupported("layer_norm axes")
    n = 1
    for d in axes:
        n *= shape[d]
    return axes, n, tuple(1 if d in axes else s for d, s in enumerate(shape))


@register(aten.native_layer_norm.default)
def _layer_norm(lo, node, x, weight, bias, axes, eps):
    shapes = node.meta["val"]
    out = dtype_name(shapes[0].dtype)
    if out not in FLOATS or x.dtype != out:
        raise Unsupported("layer_norm dtype")
    shape = x.shape
    axes, n, rs = _norm_axes(shape, axes)
    # mean and variance accumulate in double (as eager's float32 kernels do), the rest in the dtype; in half
    # precision mean and rstd are float32 buffers (torch's decomposition upcasts), rounded only as outputs
    cdt = compute_dtype(out)
    xs = pointwise(None, "identity", [x], compute=out, out=out, shape=shape)
    mean = pointwise(None, "truediv", [lo.reduction(xs, axes, "sum", cdt, "float64", True), n],
                     out=cdt, shape=rs)
    mean = TensorView.of(lo.realize(mean))
    diff = pointwise(None, "sub", [x, mean], out=out, shape=shape)
    var = pointwise(None, "truediv", [lo.reduction(pointwise(None, "mul", [diff, diff], out=out, shape=shape),
                                                   axes, "sum", cdt, "float64", True), n], out=cdt, shape=rs)
    rstd = pointwise(None, "rsqrt", [pointwise(None, "add", [var, eps], out=cdt, shape=rs)], out=cdt, shape=rs)
    rstd = TensorView.of(lo.realize(rstd))
    y = pointwise(None, "mul", [diff, rstd], out=out, shape=shape)
    if weight is not None:
        y = pointwise(None, "mul", [y, weight], out=out, shape=shape)
    if bias is not None:
        y = pointwise(None, "add", [y, bias], out=out, shape=shape)
    stat_shape = tuple(shapes[1].shape)
    sdt = dtype_name(shapes[1].dtype)
    return (y, _reshaped(mean, stat_shape, sdt), _reshaped(rstd, stat_shape, sdt))


def _reshaped(tv, shape, dtype):
    """`tv` (a kept-as-1 row statistic) as `shape`, which has the same elements in the same order, of
    `dtype` (a float32 statistic of a half layer_norm is a half output: stored apart, rounded)."""
    b = tv.buffer
    vb = Buffer(b.name, shape, contiguous_strides(shape), b.dtype)
    same = tuple(shape) == b.shape and dtype == b.dtype
    return TensorView(shape, dtype, vb.load, buffer=b if same else None)


@register(aten.native_layer_norm_backward.default)
def _layer_norm_backward(lo, node, g, x, mean, rstd, weight, bias, axes, eps):
    vals = node.meta["val"]
    out = x.dtype
    if out not in FLOATS or g.dtype != out:
        raise Unsupported("layer_norm dtype")
    shape = x.shape
    axes, n, rs = _norm_axes(shape, axes)
    if tuple(mean.shape) != rs or tuple(rstd.shape) != rs:
        raise Unsupported("layer_norm statistics of another shape")
    mean_r, rstd_r = mean, rstd
    xhat = pointwise(None, "mul", [pointwise(None, "sub", [x, mean_r], out=out, shape=shape), rstd_r],
                     out=out, shape=shape)
    gw = pointwise(None, "mul", [g, weight], out=out, shape=shape) if weight is not None else g
    cdt = compute_dtype(out)  # (half: the row sums stay float32)
    s1 = lo.reduction(gw, axes, "sum", cdt, "float64", True)
    s2 = lo.reduction(pointwise(None, "mul", [gw, xhat], out=out, shape=shape), axes, "sum", cdt, "float64", True)
    # dx = rstd * (gw - (s1 + xhat * s2) / n)
    inner = pointwise(None, "truediv", [pointwise(None, "add", [s1, pointwise(None, "mul", [xhat, s2], out=out,
                                                                                  shape=shape)],
                                                  out=out, shape=shape), n], out=out, shape=shape)
    dx = pointwise(None, "mul", [rstd_r, pointwise(None, "sub", [gw, inner], out=out, shape=shape)],
                   out=out, shape=shape)
    lead = list(range(len(shape) - len(axes)))
    dw = db = None
    if weight is not None and vals[1] is not None:
        gx = pointwise(None, "mul", [g, xhat], out=out, shape=shape)
        dw = lo.reduction(gx, lead, "sum", out, "float64")
    if bias is not None and vals[2] is not None:
        db = lo.reduction(g, lead, "sum", out, "float64")
    return (dx, dw, db)
