"""`torch.jit.save` / `torch.jit.load` in ember's own archive.

An ember archive is a zip file (NOTE [ ember's jit archive ]):

    <name>/version            "ember.jit 1"
    <name>/meta.json          kind (module / function), names, training flag, which attributes are
                              parameters (with requires_grad), buffers or constants
    <name>/code/forward.py    the graph's generated Python, for people to read (the graph is loaded from
                              graph.pkl, never by executing this text)
    <name>/graph.pkl          the pickled `ember.fx.Graph` (targets pickled as `ember.ops.aten` names)
    <name>/data.pt            the parameters, buffers and constants, written by `ember.save` in torch's
                              tensor format (so `torch.load(weights_only=True)` reads them too)
    <name>/extra/<file>       `_extra_files`

torch's own TorchScript archives (`code/__torch__/...py`, `constants.pkl`, `data.pkl` of
`__torch__` classes) hold TorchScript for torch's C++ interpreter, which ember does not have, so `load`
refuses them with an error that says so (and points to `state_dict` + `torch.save` as the way across).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import warnings
import zipfile

from ._script import RecursiveScriptModule, ScriptFunction, ScriptModule, _Replay

__all__ = ["save", "load"]

_VERSION = "ember.jit 1"


# NOTE [ ember's jit archive ]
# The graph travels as a pickle of the fx Graph (nodes, their targets by name, args and kwargs), not as the
# generated code: rebuilding from the graph gives back a `.graph` one can transform and `freeze`, and the
# text under code/ is only for reading. Tensor state goes through ember.save (torch's zip tensor format:
# a reader can take the weights out with torch.load without ember). Loading unpickles the graph, which, as
# with torch.jit.load, means an archive must come from a source you trust.


def _graph_module(obj):
    from ..fx.graph_module import GraphModule

    gm = obj._c if isinstance(obj, (ScriptModule, ScriptFunction)) else None
    if isinstance(obj, ScriptFunction):
        gm = obj._graph_module()
    if not isinstance(gm, GraphModule):
        raise RuntimeError("ember.jit.save writes the result of torch.jit.trace (or of torch.jit.load, "
                           "torch.jit.freeze); got " + type(obj).__name__)
    return gm


def save(m, f, _extra_files=None):
    """torch.jit.save: write a traced ScriptModule / ScriptFunction to `f` (a path or a binary file)."""
    from ..nn.parameter import Parameter
    from ..serialization import save as tensor_save

    warnings.warn("`torch.jit.save` is deprecated. Please switch to `torch.export`.", DeprecationWarning,
                  stacklevel=2)
    from ._scripting import _ScriptedFunction, _ScriptedModule

    if isinstance(m, (_ScriptedFunction, _ScriptedModule)):
        return m.save(f)  # which refuses: a scripted object is guarded capture, not one graph
    gm = _graph_module(m)
    is_module = isinstance(m, ScriptModule)
    state, kinds = {}, {}
    for n in gm.graph.nodes:
        if n.op == "get_attr":
            state[n.target] = _attr(gm, n.target)
    for name, t in list(gm.named_parameters()) + list(gm.named_buffers()):
        state[name] = t
    for name, t in state.items():
        if isinstance(t, Parameter):
            kinds[name] = ["parameter", t.requires_grad]
        elif name in dict(gm.named_buffers()):
            kinds[name] = ["buffer", False]
        else:
            kinds[name] = ["constant", False]
    data = io.BytesIO()
    tensor_save({k: v.detach() for k, v in state.items()}, data)
    name = "archive"
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    meta = {"kind": "module" if is_module else "function", "name": getattr(m, "name", None),
            "original_name": getattr(m, "original_name", None), "class_name": type(gm).__name__,
            "training": bool(gm.training), "state": kinds,
            "inputs": [[list(shape), str(dtype).split(".")[-1]] for shape, dtype in m._replay.first or ()]}
    with zipfile.ZipFile(f, "w") as z:
        z.writestr(f"{name}/version", _VERSION + "\n")
        z.writestr(f"{name}/meta.json", json.dumps(meta, indent=1))
        z.writestr(f"{name}/code/forward.py", gm.code)
        z.writestr(f"{name}/graph.pkl", pickle.dumps(_graph_records(gm.graph), protocol=4))
        z.writestr(f"{name}/data.pt", data.getvalue())
        for key, value in (_extra_files or {}).items():
            z.writestr(f"{name}/extra/{key}", value)


class _Ref:
    """A node argument in the archive: the name of the node it reads."""

    def __init__(self, name):
        self.name = name


def _graph_records(graph) -> list:
    """The graph as a flat list of (op, name, target, args, kwargs), node arguments as `_Ref`s (a list, not
    the linked nodes themselves, so that pickling a long graph does not recurse once per node)."""
    from ..fx.node import map_arg

    return [(n.op, n.name, n.target, map_arg(n.args, lambda a: _Ref(a.name)),
             map_arg(n.kwargs, lambda a: _Ref(a.name))) for n in graph.nodes]


def _graph_from_records(records):
    from ..fx.graph import Graph
    from ..fx.node import map_aggregate

    graph, env = Graph(), {}
    for op, name, target, args, kwargs in records:
        def load_arg(a):
            return env[a.name] if isinstance(a, _Ref) else a
        env[name] = graph.create_node(op, target, map_aggregate(args, load_arg), map_aggregate(kwargs, load_arg),
                                      name=name)
    return graph


def _attr(obj, target):
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """torch.jit.load: read an archive `save` wrote (a path or a binary file) back into a ScriptModule or
    ScriptFunction; `_extra_files` ({name: ""}) is filled with the saved extra files' contents."""
    from ..fx.graph_module import GraphModule
    from ..nn.parameter import Parameter
    from ..serialization import load as tensor_load

    warnings.warn("`torch.jit.load` is deprecated. Please switch to `torch.export`.", DeprecationWarning,
                  stacklevel=2)
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {f} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {f} is a directory")
    try:
        z = zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory"
                           ) from None
    with z:
        names = z.namelist()
        prefix = names[0].split("/")[0] if names else ""
        if f"{prefix}/version" not in names or z.read(f"{prefix}/version").decode().strip() != _VERSION:
            if any("/code/__torch__/" in n for n in names) or f"{prefix}/constants.pkl" in names:
                raise RuntimeError(
                    "This is a TorchScript archive written by torch.jit.save: it holds TorchScript code and "
                    "bytecode for torch's C++ interpreter, which ember does not have, so ember cannot load it. "
                    "Save the model's state_dict with torch.save in torch and load it into the ember module.")
            raise RuntimeError(f"not an ember.jit archive (no '{prefix}/version' record of '{_VERSION}')")
        meta = json.loads(z.read(f"{prefix}/meta.json"))
        graph = _graph_from_records(pickle.loads(z.read(f"{prefix}/graph.pkl")))
        state = tensor_load(io.BytesIO(z.read(f"{prefix}/data.pt")), map_location=map_location,
                            weights_only=True)
        if _extra_files is not None:
            for key in list(_extra_files):
                rec = f"{prefix}/extra/{key}"
                if rec in names:
                    _extra_files[key] = z.read(rec)
    root = {}
    for name, (kind, requires_grad) in meta["state"].items():
        t = state[name]
        root[name] = Parameter(t, requires_grad=requires_grad) if kind == "parameter" else t
    gm = GraphModule(root, graph, class_name=meta["class_name"])
    from ..fx.graph_module import _assign_attr

    for name, t in root.items():
        try:
            _attr(gm, name)
        except AttributeError:
            _assign_attr(t, gm, name)
    gm.train(meta["training"])
    import ember

    first = tuple((tuple(shape), getattr(ember, dtype)) for shape, dtype in meta["inputs"]) or None
    out = RecursiveScriptModule(gm, meta["original_name"]) if meta["kind"] == "module" else \
        ScriptFunction(gm, meta["name"])
    object.__setattr__(out, "_replay", _Replay(gm, first))
    return out
