"""`torch.onnx.export` for ember: trace the model, convert each recorded call, write an ONNX model.

The steps, in order:
1. trace (`_trace.py`): run the model on the example inputs under a recording mode, with module hooks
   keeping the scope (`/layers.0/self_attn`) each call ran in;
2. dynamic axes (`_dynamic.py`): for each named dynamic dimension, trace again with that dimension one and
   two larger, and read every shape argument as a linear function of the dynamic sizes;
3. convert: walk the calls in order; a call whose inputs are all known at export time (parameters,
   buffers, constants) is folded to a constant (`do_constant_folding`); in eval mode a convolution
   followed by batch norm becomes one convolution (torch's Conv-BN fusion); every other call goes to its
   symbolic (`_symbolics.py`, or one registered with `register_custom_op_symbolic`);
4. prune what the outputs do not need, name inputs, outputs and initializers as torch does, check the
   model with `onnx.checker`, and write it.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings

import numpy as np

from .._tensor import Tensor
from ._graph import GraphContext, Value, onnx_type
from ._symbolics import SYMBOLICS

# 28: the newest opset the onnx package knows; onnxruntime 1.32 runs every test model at 17 to 28
MIN_OPSET, MAX_OPSET, DEFAULT_OPSET = 17, 28, 20
CUSTOM = {}  # "aten::relu" / "ns::op" -> {opset: fn}; see register_custom_op_symbolic

_exporting = [False]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (torch's class)."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op the exporter has no symbolic for (torch's `torch.onnx.errors.UnsupportedOperatorError`)."""


class SymbolicValueError(OnnxExporterError):
    """A symbolic met an argument it cannot express (torch's `torch.onnx.errors.SymbolicValueError`)."""


def _flatten(obj):
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flatten(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _flatten(o)]
    return []


@contextlib.contextmanager
def _scopes(model, stack):
    """Module hooks that keep `stack` as the dotted names of the modules running now."""
    handles = []
    for name, mod in model.named_modules():
        if not name:
            continue
        handles.append(mod.register_forward_pre_hook(lambda m, a, name=name: stack.append(name)))
        handles.append(mod.register_forward_hook(lambda m, a, o: stack.pop() and None))  # None keeps the output
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _scope_string(stack):
    parts, prev = [], ""
    for name in stack:
        parts.append(name[len(prev) + 1:] if prev and name.startswith(prev + ".") else name)
        prev = name
    return "".join("/" + p for p in parts)


def trace_model(model, args, kwargs):
    """Run the model under the recorder; each call gets the scope it ran in."""
    import ember

    stack, scopes = [], []

    def run(*a):
        return model(*a, **kwargs)

    from ._trace import Trace, _Recorder

    trace = Trace()

    class Scoped(_Recorder):
        def dispatch(self, op, inputs, params):
            out = super().dispatch(op, inputs, params)
            scopes.append((_scope_string(stack), tuple(stack)))
            return out

        def dispatch_inplace(self, op, self_, inputs, params):
            out = super().dispatch_inplace(op, self_, inputs, params)
            scopes.append((_scope_string(stack), tuple(stack)))
            return out

    rec = Scoped(trace)
    with ember.no_grad(), _scopes(model, stack), rec:
        out = model(*args, **kwargs)
    trace.keep = rec.keep
    for call, (scope, modules) in zip(trace.calls, scopes):
        # "/layers.0/self_attn", and the dotted names of the modules running: ("layers.0", "layers.0.self_attn")
        call.scope, call.modules = scope, modules
    return trace, out


class ExportContext:
    """What symbolics ask of the export beyond the graph: dtypes, casts, dynamic shapes."""

    def __init__(self, g, training, dynamic):
        self.g = g
        self.training = training
        self.dynamic = dynamic  # _dynamic.Shapes or None
        self.env = {}           # id(tensor) -> Value
        self.call_index = {}    # id(call) -> its index in the trace

    # --- dtypes -----------------------------------------------------------------------------------
    def cast(self, v, dtype):
        if not isinstance(v, Value):
            return self.g.const(np.asarray(v, dtype=_np(dtype)))
        name = dtype if isinstance(dtype, str) else str(dtype).rsplit(".", 1)[-1]
        if v.dtype is not None and str(v.dtype).rsplit(".", 1)[-1] == name:
            return v
        if v.const is not None and v.producer is None:
            return self.g.const(v.const.astype(_np(name)))
        out = self.g.op("Cast", v, to_i=onnx_type(name))
        return out

    def scalar(self, value, like):
        """A 0-d constant of `like`'s dtype (a Tensor or dtype)."""
        dt = like.dtype if hasattr(like, "dtype") else like
        return self.g.const(np.asarray(value, dtype=_np(dt)))

    def same_type(self, call, a, b, to_inputs=False):
        """Both operands in one dtype: the output's (arithmetic) or the tensor inputs' promoted one."""
        if to_inputs:
            tensors = [t for t in call.inputs[:2] if isinstance(t, Tensor)]
            import ember

            dt = tensors[0].dtype if len(tensors) == 1 else ember.promote_types(tensors[0].dtype, tensors[1].dtype)
        else:
            dt = call.outputs[0].dtype
        return self.cast(a, dt), self.cast(b, dt)

    # --- shapes -----------------------------------------------------------------------------------
    def unsqueeze(self, v, axes):
        return self.g.op("Unsqueeze", v, self.g.ints(axes))

    def transposed_constant(self, v):
        """The constant W when `v` is t(W) of a constant (a Linear's weight), else None."""
        src = getattr(v, "folded_from", None)
        if src is not None and src[0] == "t" and src[1].const is not None and src[1].const.ndim == 2:
            return src[1]
        return None

    def has_dynamic(self, call):
        return self.dynamic is not None and self.dynamic.has(self.call_index[id(call)])

    def int_input(self, call, leaf):
        return self.dynamic.value(self.g, self.call_index[id(call)], leaf)

    def shape_input(self, call, param_index, static):
        """An int64 1-D tensor for a shape argument: a constant, or computed from the dynamic sizes."""
        if not self.has_dynamic(call):
            return self.g.ints(static)
        return self.dynamic.shape(self.g, self.call_index[id(call)], param_index, static)

    def reshape_shape(self, call, v):
        if not self.has_dynamic(call):
            return self.g.ints(call.params[0])
        return self.dynamic.reshape(self.g, self.call_index[id(call)], call)

    def keeps_dim0(self, call):
        """Whether a reshape's first target dimension is its input's first, under any dynamic sizes."""
        if not self.has_dynamic(call):
            return True
        i = self.call_index[id(call)]
        return self.dynamic.param_forms[i][0][0] == self.dynamic.input_forms[i][0]

    def rnn_dims(self, call):
        bs = call.params[2]
        if not self.has_dynamic(call):
            return len(bs), bs[0]
        return self.dynamic.rnn_dims(self.g, self.call_index[id(call)], len(bs), bs[0])

    def concat_dims(self, dims):
        if all(isinstance(d, int) for d in dims):
            return self.g.ints(dims)
        return self.g.op("Concat", *[d if isinstance(d, Value) else self.g.ints([d]) for d in dims], axis_i=0)

    # --- errors ------------------------------------------------------------------------------------
    def unsupported(self, call, what):
        raise UnsupportedOperatorError(f"Exporting the operator 'aten::{call.op.name}' to ONNX opset version "
                                       f"{self.g.opset} is not supported: {what}.")

    def no_output(self, call, k, what):
        if id(call.outputs[k]) in self.used:
            self.unsupported(call, f"{what} have no ONNX counterpart")
        return None


def _np(dtype):
    name = dtype if isinstance(dtype, str) else str(dtype).rsplit(".", 1)[-1]
    return np.dtype({"bfloat16": "float32"}.get(name, name))


def _to_numpy(t):
    return t.detach().cpu().float().numpy() if str(t.dtype).endswith("bfloat16") else t.detach().cpu().numpy()


_NO_FOLD = {"bernoulli_", "normal_", "uniform_", "rand", "randn", "randint", "randperm", "multinomial",
            "native_dropout", "rnn_layer"}


def _fuse_conv_bn(trace, eval_mode):
    """In eval mode, convolution -> batch norm (running stats) becomes one convolution with folded weights
    (torch's exporter does the same). Returns {id(bn output): (weight, bias) for the conv call}."""
    if not eval_mode:
        return {}
    users = {}
    for call in trace.calls:
        for t in call.inputs:
            if isinstance(t, Tensor):
                users[id(t)] = users.get(id(t), 0) + 1
    fused = {}
    producers = {id(o): c for c in trace.calls for o in c.outputs if isinstance(o, Tensor)}
    for call in trace.calls:
        if call.op.name != "native_batch_norm" or call.params[0]:
            continue
        conv = producers.get(id(call.inputs[0]))
        if conv is None or conv.op.name != "convolution" or users.get(id(call.inputs[0])) != 1:
            continue
        fused[id(call)] = conv
    return fused


def convert(trace, model, inputs, input_names, outputs, output_names, opset, export_params, do_constant_folding,
            training, dynamic, keep_initializers_as_inputs):
    """The ONNX ModelProto of a trace."""
    import onnx
    from onnx import helper, numpy_helper

    g = GraphContext(opset)
    cx = ExportContext(g, training, dynamic)
    cx.call_index = {id(c): i for i, c in enumerate(trace.calls)}
    used = set()
    for c in trace.calls:
        used.update(id(t) for t in c.inputs if isinstance(t, Tensor))
    used.update(id(t) for t in outputs)
    cx.used = used

    graph_inputs = []
    for t, name in zip(inputs, input_names):
        v = Value(name, example=t)
        cx.env[id(t)] = v
        graph_inputs.append(v)
    named = {}
    members = list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers(remove_duplicate=False))
    for name, t in members:
        if t is not None and id(t) not in named and id(t) not in cx.env:
            named[id(t)] = name
            cx.env[id(t)] = g.initializer(name, _to_numpy(t)) if export_params else Value(name, example=t)
            cx.env[id(t)].example = t
            if not export_params:
                graph_inputs.append(cx.env[id(t)])
    fused = _fuse_conv_bn(trace, not training and do_constant_folding)
    calls_by_id = {id(c): c for c in trace.calls}
    conv_of_bn = {id(conv): calls_by_id[bn_id] for bn_id, conv in fused.items()}
    n_const = [0]

    def lookup(x):
        if not isinstance(x, Tensor):
            return x
        v = cx.env.get(id(x))
        if v is None:  # a tensor the model made without an op: a constant
            n_const[0] += 1
            v = cx.env[id(x)] = g.initializer(f"onnx::Constant_{n_const[0]}", _to_numpy(x))
            v.example = x
        return v

    for call in trace.calls:
        g.scope = getattr(call, "scope", "")
        if id(call) in fused:  # the batch norm folded into its convolution: its output is the conv's
            cx.env[id(call.outputs[0])] = cx.env[id(call.inputs[0])]
            continue
        x = [lookup(t) for t in call.inputs]
        bn = conv_of_bn.get(id(call))
        if bn is not None:
            x = _folded_conv_inputs(g, call, bn, x)
        values = _convert_call(g, cx, call, x, do_constant_folding)
        for t, v in zip(call.outputs, values):
            if isinstance(t, Tensor) and v is not None:
                if v.example is None:
                    v.example = t
                cx.env[id(t)] = v

    out_values = []
    for t, name in zip(outputs, output_names):
        v = cx.env.get(id(t))
        if v is None:
            v = lookup(t)
        if v.producer is None or v.name in {i.name for i in graph_inputs} or v.name in [o.name for o in out_values]:
            v = g.op("Identity", v)
        v.producer.output[list(v.producer.output).index(v.name)] = name
        _rename(g, v.name, name)
        v.name = name
        v.example = t
        out_values.append(v)

    nodes, inits = _prune(g, out_values, graph_inputs)
    dims = dynamic.dim_params if dynamic is not None else {}
    graph = helper.make_graph(
        nodes, "main_graph",
        [_value_info(v, dims.get(v.name)) for v in graph_inputs] +
        ([_value_info(Value(n, const=a)) for n, a in inits.items()] if keep_initializers_as_inputs else []),
        [_value_info(v, dims.get(v.name)) for v in out_values],
        [numpy_helper.from_array(a, n) for n, a in inits.items()])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in sorted(
        {n.domain for n in nodes if n.domain})]
    from .. import __version__

    model_proto = helper.make_model(graph, opset_imports=opsets, producer_name="ember", producer_version=__version__)
    model_proto.ir_version = min(model_proto.ir_version, 10)
    onnx.checker.check_model(model_proto)
    return model_proto


def _rename(g, old, new):
    for node in g.nodes:
        for i, name in enumerate(node.input):
            if name == old:
                node.input[i] = new


def _folded_conv_inputs(g, conv, bn, x):
    """Conv weight and bias with the batch norm that follows folded in: w' = w * s, b' = (b - mean) * s + beta,
    s = gamma / sqrt(var + eps)."""
    w = x[1].const
    b = x[2].const if x[2] is not None else np.zeros(w.shape[0], w.dtype)
    gamma, beta, mean, var = (_to_numpy(t) if t is not None else None for t in bn.inputs[1:5])
    eps = bn.params[2]
    gamma = np.ones_like(mean) if gamma is None else gamma
    beta = np.zeros_like(mean) if beta is None else beta
    s = gamma / np.sqrt(var + eps)
    w2 = (w * s.reshape(-1, *([1] * (w.ndim - 1)))).astype(w.dtype)
    b2 = ((b - mean) * s + beta).astype(w.dtype)
    return [x[0], g.initializer(x[1].name, w2), g.initializer(x[2].name if x[2] is not None
                                                              else f"{x[1].name[:-len('weight')]}bias", b2)]


def _convert_call(g, cx, call, x, do_constant_folding):
    """The Values for one call's outputs: folded constants, a custom symbolic's, or the table's."""
    name = call.op.name
    custom = _custom_symbolic(f"aten::{name}", g.opset) or _custom_symbolic(f"aten::{call.op.qualname}", g.opset)
    tensors = [v for v in x if isinstance(v, Value)]
    if custom is None and do_constant_folding and not call.inplace and name not in _NO_FOLD and tensors and \
            all(v.const is not None for v in tensors) and all(isinstance(o, Tensor) for o in call.outputs):
        values = []
        for o in call.outputs:
            v = g.initializer(f"onnx::{name}_{len(g.initializers)}", _to_numpy(o))
            v.example = o
            v.folded_from = (name, tensors[0]) if name == "t" else None
            values.append(v)
        return values
    if custom is not None:
        out = custom(g, *x, *call.params)
    else:
        fn = SYMBOLICS.get(call.op.qualname) or SYMBOLICS.get(name)
        if fn is None:
            raise UnsupportedOperatorError(
                f"Exporting the operator 'aten::{call.op.qualname}' to ONNX opset version {g.opset} is not "
                "supported. Please feel free to request support or submit a pull request on PyTorch GitHub: "
                "https://github.com/pytorch/pytorch/issues.")
        out = fn(g, cx, call, x)
    values = list(out) if isinstance(out, (tuple, list)) else [out]
    return values + [None] * (len(call.outputs) - len(values))


def _custom_symbolic(name, opset):
    table = CUSTOM.get(name)
    if not table:
        return None
    fits = [v for v in table if v <= opset]
    return table[max(fits)] if fits else None


def _prune(g, outputs, inputs):
    """The nodes the outputs need, in order, and the initializers they read."""
    producers = {}
    for node in g.nodes:
        for o in node.output:
            producers[o] = node
    needed, stack = set(), [v.name for v in outputs]
    keep = set()
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = producers.get(name)
        if node is not None and id(node) not in keep:
            keep.add(id(node))
            stack.extend(i for i in node.input if i)
    nodes = [n for n in g.nodes if id(n) in keep]
    inits = {n: a for n, a in g.initializers.items() if n in needed}
    return nodes, inits


def _value_info(v, dim_params=None):
    from onnx import helper

    t = v.example
    shape = list(t.shape) if t is not None else list(v.const.shape)
    dtype = t.dtype if t is not None else v.const.dtype
    if dim_params:
        shape = [dim_params.get(i, s) for i, s in enumerate(shape)]
    return helper.make_tensor_value_info(v.name, onnx_type(dtype), shape)


def default_input_names(model, inputs):
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) and len(inputs) == len(params[:len(inputs)]) else f"input_{i}"
            for i in range(len(inputs))]


def warn_unused(names, kind):
    if names:
        warnings.warn(f"Provided key {names[0]} for dynamic axes is not a valid {kind} name", stacklevel=3)
