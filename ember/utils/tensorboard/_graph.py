"""`SummaryWriter.add_graph`: a model's ops, grouped by module, for TensorBoard's Graphs tab.

The model runs once under the capture ONNX export uses (ember/onnx/_export.py `trace_model`: every
registered op, with the modules running when it ran). Each op becomes a node inside the scope of those
modules, named as torch's add_graph names them (`Net/Linear[fc1]/3`, op `aten::addmm`), so TensorBoard
draws one box per module that opens to its ops; parameters are `prim::GetAttr` nodes at their attribute
path (`Net/Linear[fc1]/weight/weight`), the inputs and outputs `IO Node`s, and every edge carries its
tensor's shape (`_output_shapes`).
"""

from __future__ import annotations

from tensorboardX.proto.attr_value_pb2 import AttrValue
from tensorboardX.proto.graph_pb2 import GraphDef
from tensorboardX.proto.node_def_pb2 import NodeDef
from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboardX.proto.versions_pb2 import VersionDef


def _shapes(*tensors):
    return AttrValue(list=AttrValue.ListValue(shape=[
        TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in t.shape]) for t in tensors]))


def _call_scope(model, running):
    """torch's scope of an op: the modules running, each as `Class[its attribute name]`, under the model's
    class (`Net/Block[0]/Linear[fc]`: a ModuleList that is only iterated is not a scope)."""
    modules = dict(model.named_modules())
    return "/".join([type(model).__name__] + [f"{type(modules[p]).__name__}[{p.rsplit('.', 1)[-1]}]"
                                              for p in running])


def _scope(model, path):
    """torch's scope of a parameter: its attribute path, `Net/ModuleList[layers]/Block[0]/Linear[fc]`."""
    modules = dict(model.named_modules())
    parts = [type(model).__name__]
    prefix = ""
    for part in path.split(".") if path else []:
        prefix = f"{prefix}.{part}" if prefix else part
        parts.append(f"{type(modules[prefix]).__name__}[{part}]")
    return "/".join(parts)


def graph(model, args, verbose=False):
    """The GraphDef of one run of `model(*args)` (torch also writes an empty CPU step-stats record beside
    it; TensorBoard draws the graph without one)."""
    from ..._tensor import Tensor
    from ...onnx._export import _flatten, trace_model

    if isinstance(args, Tensor):
        args = (args,)
    trace, out = trace_model(model, tuple(args), {})
    nodes, names = [], {}
    for k, t in enumerate(_flatten(args)):
        names[id(t)] = f"input/input.{k}"
        nodes.append(NodeDef(name=names[id(t)], op="IO Node", attr={"_output_shapes": _shapes(t),
                                                                     "attr": AttrValue(s=b"")}))
    for name, p in list(model.named_parameters()) + list(model.named_buffers()):
        path, _, attr = name.rpartition(".")
        names[id(p)] = f"{_scope(model, path)}/{attr}/{attr}"
        nodes.append(NodeDef(name=names[id(p)], op="prim::GetAttr", attr={
            "_output_shapes": _shapes(p), "attr": AttrValue(s=f"{{ name :  {attr} }}".encode())}))
    serial = len(nodes)
    for call in trace.calls:
        inputs = []
        for t in call.inputs:
            if isinstance(t, Tensor):
                if id(t) not in names:  # a constant the model made without an op
                    names[id(t)] = f"{_call_scope(model, call.modules)}/constant.{serial}"
                    serial += 1
                    nodes.append(NodeDef(name=names[id(t)], op="prim::Constant", attr={"_output_shapes": _shapes(t)}))
                inputs.append(names[id(t)])
        outs = [t for t in call.outputs if isinstance(t, Tensor)]
        name = f"{_call_scope(model, call.modules)}/{serial}"
        serial += 1
        params = ", ".join(repr(p) for p in call.params)
        nodes.append(NodeDef(name=name, op=f"aten::{call.op.name}", input=inputs,
                             attr={"_output_shapes": _shapes(*outs), "attr": AttrValue(s=f"{{{params}}}".encode())}))
        for t in outs:
            names[id(t)] = name
    for k, t in enumerate(_flatten(out)):
        nodes.append(NodeDef(name=f"output/output.{k}", op="IO Node", input=[names.get(id(t), f"input/input.{k}")],
                             attr={"_output_shapes": _shapes(t), "attr": AttrValue(s=b"")}))
    if verbose:
        for n in nodes:
            print(n.name, n.op, list(n.input))
    return GraphDef(node=nodes, versions=VersionDef(producer=22))
