"""ONNX symbolics for ember's registered ops: one function per op, keyed by its qualified name.

A symbolic gets the graph `g`, the export context `cx` (dtypes, dynamic shapes, casts), the recorded
call, and its inputs as Values (Python numbers stay numbers); it returns a Value per output of the op
(None for an output the ONNX form has no counterpart of, such as a saved workspace). The mapping follows
torch's own ONNX symbolics (torch/onnx/symbolic_opset*.py) so that ember's exports use the operators
torch's do: `addmm` of a transposed weight is one `Gemm` with `transB=1`, recurrent layers are ONNX
`LSTM`/`GRU`/`RNN` nodes with their gates reordered, convolutions and poolings keep their own nodes.
"""

from __future__ import annotations

import math

import numpy as np

SYMBOLICS = {}


def symbolic(*names):
    def register(fn):
        for n in names:
            SYMBOLICS[n] = fn
        return fn
    return register


def _np_dtype(t):
    return np.dtype(str(t.dtype).rsplit(".", 1)[-1].replace("bfloat16", "float32"))


# --- pointwise ----------------------------------------------------------------------------------------
_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "neg": "Neg", "abs": "Abs", "erf": "Erf", "sin": "Sin", "cos": "Cos", "floor": "Floor", "ceil": "Ceil",
          "reciprocal": "Reciprocal", "sign": "Sign", "round": "Round", "logical_not": "Not",
          "bitwise_not": "Not", "hardswish": "HardSwish", "tan": "Tan", "asin": "Asin", "acos": "Acos",
          "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "isnan": "IsNaN"}
for _name, _type in _UNARY.items():
    SYMBOLICS[_name] = (lambda t: lambda g, cx, call, x: g.op(t, x[0]))(_type)

_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div.Tensor": "Div", "maximum": "Max", "minimum": "Min",
           "pow.Tensor_Tensor": "Pow", "pow.Tensor_Scalar": "Pow", "fmod.Tensor": "Mod",
           "remainder.Tensor": "Mod"}
_COMPARE = {"eq": "Equal", "lt": "Less", "gt": "Greater", "le": "LessOrEqual", "ge": "GreaterOrEqual"}
_LOGICAL = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def _binary(onnx_type):
    def fn(g, cx, call, x):
        a, b = cx.same_type(call, x[0], x[1])
        alpha = call.params[0] if call.params else 1
        if onnx_type in ("Add", "Sub") and alpha != 1:
            b = g.op("Mul", b, cx.scalar(alpha, call.outputs[0]))
        out = g.op(onnx_type, a, b, **({"fmod_i": 1} if onnx_type == "Mod" and call.op.name == "fmod" else {}))
        return out
    return fn


for _name, _type in _BINARY.items():
    SYMBOLICS[_name] = _binary(_type)


def _compare(onnx_type):
    def fn(g, cx, call, x):
        a, b = cx.same_type(call, x[0], x[1], to_inputs=True)
        return g.op(onnx_type, a, b)
    return fn


for _name, _type in _COMPARE.items():
    SYMBOLICS[_name] = _compare(_type)
for _name, _type in _LOGICAL.items():
    SYMBOLICS[_name] = (lambda t: lambda g, cx, call, x: g.op(t, cx.cast(x[0], "bool"), cx.cast(x[1], "bool")))(_type)


@symbolic("ne")
def _ne(g, cx, call, x):
    a, b = cx.same_type(call, x[0], x[1], to_inputs=True)
    return g.op("Not", g.op("Equal", a, b))


@symbolic("div.Tensor_mode_floor")
def _floordiv(g, cx, call, x):
    a, b = cx.same_type(call, x[0], x[1])
    return g.op("Floor", g.op("Div", a, b))


@symbolic("div.Tensor_mode_trunc")
def _truncdiv(g, cx, call, x):
    a, b = cx.same_type(call, x[0], x[1])
    q = g.op("Div", a, b)
    return g.op("Mul", g.op("Sign", q), g.op("Floor", g.op("Abs", q)))


@symbolic("rsqrt")
def _rsqrt(g, cx, call, x):
    return g.op("Reciprocal", g.op("Sqrt", x[0]))


@symbolic("gelu")
def _gelu(g, cx, call, x):
    if g.opset >= 20:
        return g.op("Gelu", x[0], approximate_s=call.params[0])
    if call.params[0] == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        c = cx.scalar(math.sqrt(2 / math.pi), call.outputs[0])
        inner = g.op("Mul", c, g.op("Add", x[0], g.op("Mul", cx.scalar(0.044715, call.outputs[0]),
                                                       g.op("Pow", x[0], cx.scalar(3.0, call.outputs[0])))))
        return g.op("Mul", g.op("Mul", x[0], cx.scalar(0.5, call.outputs[0])),
                    g.op("Add", g.op("Tanh", inner), cx.scalar(1.0, call.outputs[0])))
    erf = g.op("Erf", g.op("Div", x[0], cx.scalar(math.sqrt(2.0), call.outputs[0])))
    return g.op("Mul", g.op("Mul", x[0], g.op("Add", erf, cx.scalar(1.0, call.outputs[0]))),
                cx.scalar(0.5, call.outputs[0]))


@symbolic("silu")
def _silu(g, cx, call, x):
    return g.op("Mul", x[0], g.op("Sigmoid", x[0]))


@symbolic("mish")
def _mish(g, cx, call, x):
    return g.op("Mul", x[0], g.op("Tanh", g.op("Softplus", x[0])))


@symbolic("leaky_relu")
def _leaky_relu(g, cx, call, x):
    return g.op("LeakyRelu", x[0], alpha_f=call.params[0])


@symbolic("elu")
def _elu(g, cx, call, x):
    alpha, scale, input_scale = call.params
    if scale == 1 and input_scale == 1:
        return g.op("Elu", x[0], alpha_f=alpha)
    if input_scale == 1 and abs(alpha - 1.6732632423543772) < 1e-9 and abs(scale - 1.0507009873554805) < 1e-9:
        return g.op("Selu", x[0], alpha_f=alpha, gamma_f=scale)
    inner = g.op("Elu", g.op("Mul", x[0], cx.scalar(input_scale, call.outputs[0])), alpha_f=alpha)
    return g.op("Mul", inner, cx.scalar(scale, call.outputs[0]))


@symbolic("celu")
def _celu(g, cx, call, x):
    return g.op("Celu", x[0], alpha_f=call.params[0])


@symbolic("softplus")
def _softplus(g, cx, call, x):
    beta, threshold = call.params
    scaled = x[0] if beta == 1 else g.op("Mul", x[0], cx.scalar(beta, call.outputs[0]))
    sp = g.op("Softplus", scaled)
    if beta != 1:
        sp = g.op("Div", sp, cx.scalar(beta, call.outputs[0]))
    # above the threshold torch returns x itself (no overflow in exp)
    return g.op("Where", g.op("Greater", scaled, cx.scalar(threshold, call.outputs[0])), x[0], sp)


@symbolic("hardsigmoid")
def _hardsigmoid(g, cx, call, x):
    return g.op("HardSigmoid", x[0], alpha_f=1.0 / 6, beta_f=0.5)


@symbolic("log_sigmoid")
def _log_sigmoid(g, cx, call, x):
    return g.op("Neg", g.op("Softplus", g.op("Neg", x[0])))


@symbolic("hardtanh", "clamp")
def _clip(g, cx, call, x):
    lo, hi = call.params
    out = call.outputs[0]
    return g.op("Clip", cx.cast(x[0], out.dtype), None if lo is None else cx.scalar(lo, out),
                None if hi is None else cx.scalar(hi, out))


@symbolic("isneginf")
def _isneginf(g, cx, call, x):
    return g.op("IsInf", x[0], detect_positive_i=0)


@symbolic("where")
def _where(g, cx, call, x):
    a, b = cx.same_type(call, x[1], x[2])
    return g.op("Where", cx.cast(x[0], "bool"), a, b)


@symbolic("masked_fill")
def _masked_fill(g, cx, call, x):
    out = call.outputs[0]
    value = x[2] if len(x) > 2 else call.params[0]
    fill = value if not isinstance(value, (int, float, bool)) else cx.scalar(value, out)
    return g.op("Where", cx.cast(x[1], "bool"), cx.cast(fill, out.dtype), x[0])


@symbolic("to", "_to_copy")
def _to(g, cx, call, x):
    return cx.cast(x[0], call.outputs[0].dtype)


@symbolic("clone", "contiguous", "alias", "detach", "lift_fresh")
def _identity(g, cx, call, x):
    return g.op("Identity", x[0])


@symbolic("addcmul")
def _addcmul(g, cx, call, x):
    prod = g.op("Mul", x[1], x[2])
    if call.params[0] != 1:
        prod = g.op("Mul", prod, cx.scalar(call.params[0], call.outputs[0]))
    return g.op("Add", x[0], prod)


# --- matrix products ---------------------------------------------------------------------------------
@symbolic("mm", "matmul", "bmm")
def _matmul(g, cx, call, x):
    return g.op("MatMul", x[0], x[1])


@symbolic("addmm")
def _addmm(g, cx, call, x):
    c, a, b = x
    beta, alpha = call.params
    w = cx.transposed_constant(b)  # addmm(bias, x, t(W)): Gemm(x, W, bias, transB=1), torch's linear
    if w is not None:
        return g.op("Gemm", a, w, c, alpha_f=alpha, beta_f=beta, transB_i=1)
    return g.op("Gemm", a, b, c, alpha_f=alpha, beta_f=beta)


@symbolic("baddbmm")
def _baddbmm(g, cx, call, x):
    c, a, b = x
    beta, alpha = call.params
    prod = g.op("MatMul", a, b)
    if alpha != 1:
        prod = g.op("Mul", prod, cx.scalar(alpha, call.outputs[0]))
    if beta != 1:
        c = g.op("Mul", c, cx.scalar(beta, call.outputs[0]))
    return g.op("Add", c, prod)


@symbolic("einsum")
def _einsum(g, cx, call, x):
    return g.op("Einsum", *x, equation_s=call.params[0])


# --- shapes and views --------------------------------------------------------------------------------
@symbolic("t")
def _t(g, cx, call, x):
    return g.op("Transpose", x[0], perm_i=[1, 0]) if len(call.outputs[0].shape) == 2 else g.op("Identity", x[0])


@symbolic("transpose")
def _transpose(g, cx, call, x):
    n = len(call.outputs[0].shape)
    perm = list(range(n))
    d0, d1 = (d % n if n else 0 for d in call.params)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return g.op("Transpose", x[0], perm_i=perm)


@symbolic("permute")
def _permute(g, cx, call, x):
    n = len(call.outputs[0].shape)
    return g.op("Transpose", x[0], perm_i=[d % n for d in call.params[0]])


@symbolic("view", "reshape", "_unsafe_view", "view_copy")
def _reshape(g, cx, call, x):
    src, dst = call.inputs[0].shape, call.outputs[0].shape
    if len(src) > 2 and len(dst) == 2 and dst[0] == src[0] and cx.keeps_dim0(call):
        return g.op("Flatten", x[0], axis_i=1)  # x.flatten(1) / nn.Flatten: torch's Flatten
    return g.op("Reshape", x[0], cx.reshape_shape(call, x[0]))


@symbolic("expand")
def _expand(g, cx, call, x):
    return g.op("Expand", x[0], cx.shape_input(call, 0, tuple(call.outputs[0].shape)))


@symbolic("unsqueeze")
def _unsqueeze(g, cx, call, x):
    return cx.unsqueeze(x[0], [call.params[0] % len(call.outputs[0].shape)])


@symbolic("squeeze", "squeeze.dim")
def _squeeze(g, cx, call, x):
    shape = call.inputs[0].shape
    dims = call.params[0] if call.params and call.params[0] is not None else range(len(shape))
    dims = [d % len(shape) for d in ((dims,) if isinstance(dims, int) else dims) if shape[d % len(shape)] == 1] \
        if shape else []
    return g.op("Squeeze", x[0], g.ints(dims)) if dims else g.op("Identity", x[0])


@symbolic("select")
def _select(g, cx, call, x):
    dim, index = call.params
    return g.op("Gather", x[0], g.const(np.int64(index)), axis_i=dim)


@symbolic("slice")
def _slice(g, cx, call, x):
    dim, start, stop, step = call.params
    size = call.inputs[0].shape[dim]
    stop = min(size if stop is None else stop, 2**62)
    return g.op("Slice", x[0], g.ints([start or 0]), g.ints([stop]), g.ints([dim]), g.ints([step or 1]))


@symbolic("split")
def _split(g, cx, call, x):
    dim, _ = call.params
    sizes = [o.shape[dim] for o in call.outputs]
    return g.op("Split", x[0], g.ints(sizes), axis_i=dim, outputs=len(sizes))


@symbolic("unbind")
def _unbind(g, cx, call, x):
    dim = call.params[0]
    parts = g.op("Split", x[0], g.ints([1] * len(call.outputs)), axis_i=dim, outputs=len(call.outputs))
    parts = parts if isinstance(parts, tuple) else (parts,)
    return tuple(g.op("Squeeze", p, g.ints([dim])) for p in parts)


@symbolic("cat")
def _cat(g, cx, call, x):
    dim = call.params[0]
    parts = [v for v, t in zip(x, call.inputs) if not (t.dim() == 1 and t.shape[0] == 0)]
    return g.op("Concat", *[cx.cast(v, call.outputs[0].dtype) for v in parts], axis_i=dim)


@symbolic("stack")
def _stack(g, cx, call, x):
    dim = call.params[0] % len(call.outputs[0].shape)
    return g.op("Concat", *[cx.unsqueeze(v, [dim]) for v in x], axis_i=dim)


@symbolic("flip")
def _flip(g, cx, call, x):
    dims = list(call.params[0])
    n = len(dims)
    return g.op("Slice", x[0], g.ints([-1] * n), g.ints([-(2**62)] * n), g.ints(dims), g.ints([-1] * n))


@symbolic("repeat")
def _repeat(g, cx, call, x):
    reps = list(call.params[0])
    v = x[0]
    extra = len(reps) - len(call.inputs[0].shape)
    if extra:
        v = g.op("Reshape", v, g.ints([1] * extra + list(call.inputs[0].shape)))
    return g.op("Tile", v, g.ints(reps))


@symbolic("index_select")
def _index_select(g, cx, call, x):
    return g.op("Gather", x[0], x[1], axis_i=call.params[0])


@symbolic("gather")
def _gather(g, cx, call, x):
    return g.op("GatherElements", x[0], x[1], axis_i=call.params[0])


@symbolic("index")
def _index(g, cx, call, x):
    idx = list(call.inputs[1:])
    if len(idx) == 1 and idx[0] is not None and not str(idx[0].dtype).endswith("bool"):
        return g.op("Gather", x[0], x[1], axis_i=0)  # a[t]: one integer index tensor in the first dimension
    cx.unsupported(call, "indexing with boolean masks or several index tensors")


@symbolic("embedding")
def _embedding(g, cx, call, x):
    return g.op("Gather", x[0], x[1], axis_i=0)


def _constant_of_shape(g, shape, fill, out):
    """A tensor of `shape` (an int64 1-D value) filled with `fill` in `out`'s dtype."""
    from onnx import numpy_helper

    return g.op("ConstantOfShape", shape, value_t=numpy_helper.from_array(np.full((1,), fill, _np_dtype(out))))


@symbolic("full")
def _full(g, cx, call, x):
    shape, fill, _ = call.params
    out = call.outputs[0]
    if not cx.has_dynamic(call):  # a constant, as torch folds it
        return g.const(np.full(tuple(shape), fill, dtype=_np_dtype(out)))
    return _constant_of_shape(g, cx.shape_input(call, 0, tuple(shape)), fill, out)


@symbolic("full_like")
def _full_like(g, cx, call, x):
    return _constant_of_shape(g, g.op("Shape", x[0]), call.params[0], call.outputs[0])


@symbolic("arange")
def _arange(g, cx, call, x):
    start, step, n, _ = call.params
    out = call.outputs[0]
    if not cx.has_dynamic(call):
        return g.const(out.numpy().copy())
    limit = cx.int_input(call, 2)  # start + n * step, with n a function of the dynamic sizes
    dt = _np_dtype(out)
    first, delta = g.const(np.asarray(start, dt)), g.const(np.asarray(step, dt))
    lim = g.op("Add", first, g.op("Mul", cx.cast(limit, out.dtype), delta))
    return g.op("Range", first, g.op("Squeeze", lim, g.ints([0])), delta)


@symbolic("tril", "triu")
def _trilu(g, cx, call, x):
    return g.op("Trilu", x[0], g.const(np.int64(call.params[0])), upper_i=int(call.op.name == "triu"))


# --- reductions --------------------------------------------------------------------------------------
def _reduce(onnx_type):
    def fn(g, cx, call, x):
        ndim = len(call.inputs[0].shape)
        if len(call.params) >= 2 and isinstance(call.params[0], (tuple, list, int)) or \
                (call.params and isinstance(call.params[0], (tuple, list))):
            dims, keepdim = call.params[0], call.params[1]
            dims = [dims] if isinstance(dims, int) else list(dims)
            dims = [d % ndim for d in dims] if dims else list(range(ndim))
        else:  # the full reduction: sum(a, dtype), amax over everything
            dims, keepdim = list(range(ndim)), False
        v = x[0]
        if call.outputs[0].dtype != call.inputs[0].dtype and onnx_type in ("ReduceSum", "ReduceMean", "ReduceProd"):
            v = cx.cast(v, call.outputs[0].dtype)
        if onnx_type == "ReduceSum" or g.opset >= 18:
            return g.op(onnx_type, v, g.ints(dims), keepdims_i=int(keepdim))
        return g.op(onnx_type, v, axes_i=dims, keepdims_i=int(keepdim))
    return fn


_REDUCTIONS = {"sum": "ReduceSum", "sum.dim_IntList": "ReduceSum", "mean": "ReduceMean", "amax": "ReduceMax",
               "amin": "ReduceMin", "max": "ReduceMax", "min": "ReduceMin", "prod": "ReduceProd",
               "logsumexp": "ReduceLogSumExp"}
for _name, _type in _REDUCTIONS.items():
    SYMBOLICS[_name] = _reduce(_type)


@symbolic("mean.dim")
def _mean_dim(g, cx, call, x):
    dims, keepdim = call.params[:2]
    ndim = len(call.inputs[0].shape)
    if keepdim and ndim >= 3 and sorted(d % ndim for d in dims) == list(range(2, ndim)):
        return g.op("GlobalAveragePool", x[0])  # adaptive_avg_pool to 1: torch's GlobalAveragePool
    return _reduce("ReduceMean")(g, cx, call, x)


@symbolic("any", "all")
def _any_all(g, cx, call, x):
    dims, keepdim = call.params
    ndim = len(call.inputs[0].shape)
    dims = list(range(ndim)) if not dims else [d % ndim for d in dims]
    as_int = g.op("Cast", cx.cast(x[0], "bool"), to_i=6)
    red = "ReduceMax" if call.op.name == "any" else "ReduceMin"
    r = g.op(red, as_int, g.ints(dims), keepdims_i=int(keepdim)) if g.opset >= 18 else \
        g.op(red, as_int, axes_i=dims, keepdims_i=int(keepdim))
    return g.op("Cast", r, to_i=9)


@symbolic("max.dim", "min.dim")
def _max_dim(g, cx, call, x):
    dim, keepdim = call.params
    red, arg = ("ReduceMax", "ArgMax") if call.op.name == "max" else ("ReduceMin", "ArgMin")
    v = g.op(red, x[0], g.ints([dim]), keepdims_i=int(keepdim)) if g.opset >= 18 else \
        g.op(red, x[0], axes_i=[dim], keepdims_i=int(keepdim))
    return v, g.op(arg, x[0], axis_i=dim, keepdims_i=int(keepdim), select_last_index_i=0)


@symbolic("argmax", "argmin")
def _argmax(g, cx, call, x):
    dim, keepdim = call.params
    kind = "ArgMax" if call.op.name == "argmax" else "ArgMin"
    if dim is None:
        return g.op(kind, g.op("Reshape", x[0], g.ints([-1])), axis_i=0, keepdims_i=0)
    return g.op(kind, x[0], axis_i=dim, keepdims_i=int(keepdim))


@symbolic("cumsum")
def _cumsum(g, cx, call, x):
    return g.op("CumSum", cx.cast(x[0], call.outputs[0].dtype), g.const(np.int64(call.params[0])))


# --- neural network layers ---------------------------------------------------------------------------
@symbolic("convolution")
def _conv(g, cx, call, x):
    stride, pads, dil, groups = call.params
    k = len(call.inputs[1].shape) - 2
    return g.op("Conv", x[0], x[1], x[2], kernel_shape_i=list(call.inputs[1].shape[2:]), strides_i=list(stride),
                pads_i=_conv_pads(pads, k), dilations_i=list(dil), group_i=groups)


def _conv_pads(pads, k):
    """ONNX's [begin_1..begin_k, end_1..end_k] from ember's ((begin, end), ...) or (p, ...)."""
    if pads and isinstance(pads[0], (tuple, list)):
        return [p[0] for p in pads] + [p[1] for p in pads]
    return list(pads) * 2 if len(pads) == k else list(pads)


@symbolic("convolution_transpose")
def _conv_transpose(g, cx, call, x):
    stride, pads, output_padding, groups, dil = call.params[:5]
    return g.op("ConvTranspose", x[0], x[1], x[2], kernel_shape_i=list(call.inputs[1].shape[2:]),
                strides_i=list(stride), pads_i=list(pads) * 2, dilations_i=list(dil), group_i=groups,
                output_padding_i=list(output_padding))


@symbolic("native_batch_norm")
def _batch_norm(g, cx, call, x):
    training, momentum, eps = call.params[:3]
    a, w, b, mean, var = x[:5]
    c = call.inputs[0].shape[1]
    dt = _np_dtype(call.outputs[0])
    w = w if w is not None else g.const(np.ones(c, dt))
    b = b if b is not None else g.const(np.zeros(c, dt))
    if mean is None or (training and cx.training):
        # batch statistics (training export, or no running stats): torch writes BatchNormalization in
        # training mode; ONNX's own training_mode output is what onnxruntime runs for inference too
        mean = mean if mean is not None else g.const(np.zeros(c, dt))
        var = var if var is not None else g.const(np.ones(c, dt))
        y = g.op("BatchNormalization", a, w, b, mean, var, epsilon_f=eps, momentum_f=1 - momentum,
                 training_mode_i=1, outputs=3)[0]
    else:
        y = g.op("BatchNormalization", a, w, b, mean, var, epsilon_f=eps, momentum_f=1 - momentum)
    return (y,) + (None,) * (len(call.outputs) - 1)


@symbolic("native_layer_norm")
def _layer_norm(g, cx, call, x):
    axes, eps = call.params
    a, w, b = x
    n = len(axes)
    dt = _np_dtype(call.outputs[0])
    shape = call.inputs[0].shape[-n:]
    w = w if w is not None else g.const(np.ones(shape, dt))
    return (g.op("LayerNormalization", a, w, b, axis_i=-n, epsilon_f=eps),) + (None,) * (len(call.outputs) - 1)


@symbolic("softmax", "_softmax")
def _softmax(g, cx, call, x):
    return g.op("Softmax", x[0], axis_i=call.params[0])


@symbolic("log_softmax", "_log_softmax")
def _log_softmax(g, cx, call, x):
    return g.op("LogSoftmax", x[0], axis_i=call.params[0])


def _pool_pads(pads, k):
    return list(pads) * 2 if len(pads) == k else list(pads)


@symbolic("max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices")
def _max_pool(g, cx, call, x):
    ksize, stride, pads, dil, ceil_mode = call.params
    k = len(ksize)
    y = g.op("MaxPool", x[0], kernel_shape_i=list(ksize), strides_i=list(stride or ksize), pads_i=_pool_pads(pads, k),
             dilations_i=list(dil), ceil_mode_i=int(ceil_mode))
    return y, cx.no_output(call, 1, "max pooling's indices")


@symbolic("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(g, cx, call, x):
    ksize, stride, pads, ceil_mode, count_include_pad, divisor_override = call.params
    if divisor_override:
        cx.unsupported(call, "divisor_override")
    k = len(ksize)
    return g.op("AveragePool", x[0], kernel_shape_i=list(ksize), strides_i=list(stride or ksize),
                pads_i=_pool_pads(pads, k), ceil_mode_i=int(ceil_mode), count_include_pad_i=int(count_include_pad))


@symbolic("_adaptive_avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_max_pool2d")
def _adaptive_pool(g, cx, call, x):
    out = list(call.params[0])
    spatial = list(call.inputs[0].shape[2:])
    is_max = "max" in call.op.name
    if all(o == 1 for o in out):
        y = g.op("GlobalMaxPool" if is_max else "GlobalAveragePool", x[0])
    elif all(s % o == 0 for s, o in zip(spatial, out)):
        k = [s // o for s, o in zip(spatial, out)]
        y = g.op("MaxPool" if is_max else "AveragePool", x[0], kernel_shape_i=k, strides_i=k)
    else:
        cx.unsupported(call, f"adaptive pooling from {spatial} to {out} (sizes that do not divide)")
    return (y, cx.no_output(call, 1, "adaptive max pooling's indices")) if is_max else y


@symbolic("nll_loss")
def _nll_loss(g, cx, call, x):
    reduction, ignore_index = call.params
    names = {0: "none", 1: "mean", 2: "sum"}
    red = names.get(reduction, reduction)
    return (g.op("NegativeLogLikelihoodLoss", x[0], x[1], x[2], reduction_s=red, ignore_index_i=ignore_index),) + \
        (None,) * (len(call.outputs) - 1)


# ONNX gate order: LSTM i o f c (torch: i f g o), GRU z r h (torch: r z n)
_GATES = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}


@symbolic("rnn_layer")
def _rnn_layer(g, cx, call, x):
    mode, reverse, batch_sizes = call.params[:3]
    xr, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = x
    if w_hr is not None:
        cx.unsupported(call, "LSTM with proj_size")
    if len(set(batch_sizes)) != 1:
        cx.unsupported(call, "packed sequences of different lengths")
    rows = call.inputs[0]
    hidden = call.inputs[4].shape[0] // {"LSTM": 4, "GRU": 3}.get(mode, 1)
    steps = cx.rnn_dims(call)  # (T, B) as Values or ints
    seq = g.op("Reshape", xr, cx.concat_dims([steps[0], steps[1], rows.shape[1]]))

    def gates(v, rows_axis=0):
        order = _GATES.get(mode)
        if v is None or order is None:
            return v
        arr = v.const
        if arr is not None:
            parts = np.split(arr, len(order), axis=rows_axis)
            return g.initializer(f"{v.name}.onnx_gates", np.concatenate([parts[i] for i in order], rows_axis))
        parts = g.op("Split", v, g.ints([hidden] * len(order)), axis_i=rows_axis, outputs=len(order))
        return g.op("Concat", *[parts[i] for i in order], axis_i=rows_axis)

    W = cx.unsqueeze(gates(w_ih), [0])
    R = cx.unsqueeze(gates(w_hh), [0])
    B = None
    if b_ih is not None:
        B = cx.unsqueeze(g.op("Concat", gates(b_ih), gates(b_hh), axis_i=0), [0])
    h = cx.unsqueeze(h0, [0])
    attrs = dict(hidden_size_i=hidden, direction_s="reverse" if reverse else "forward")
    if mode == "LSTM":
        y, yh, yc = g.op("LSTM", seq, W, R, B, None, h, cx.unsqueeze(c0, [0]), outputs=3, **attrs)
    elif mode == "GRU":
        y, yh = g.op("GRU", seq, W, R, B, None, h, outputs=2, linear_before_reset_i=1, **attrs)
        yc = None
    else:
        act = "Relu" if mode == "RNN_RELU" else "Tanh"
        y, yh = g.op("RNN", seq, W, R, B, None, h, outputs=2, activations=[act], **attrs)
        yc = None
    out_rows = g.op("Reshape", g.op("Squeeze", y, g.ints([1])), g.ints([-1, hidden]))
    states = (g.op("Squeeze", yh, g.ints([0])),) + ((g.op("Squeeze", yc, g.ints([0])),) if mode == "LSTM" else ())
    return (out_rows, *states, None)
