"""`torch.onnx`: export a model to an ONNX file that onnxruntime (and any ONNX runtime) can run.

`export(model, args, f, ...)` traces the model once on the example inputs (the TorchScript-style export,
`dynamo=False`; `dynamo=True` runs the same capture and returns an `ONNXProgram`) and writes the graph
with torch's operator choices, names and options: `input_names`, `output_names`, `dynamic_axes`,
`opset_version` (17 to 28, default 20), `export_params`, `do_constant_folding`, `training`,
`keep_initializers_as_inputs`, and `register_custom_op_symbolic` for ops the table lacks.
See docs/architecture.md, "ONNX export".
"""

from __future__ import annotations

import contextlib
import enum
import io
import os

from ._export import CUSTOM, DEFAULT_OPSET, MAX_OPSET, MIN_OPSET, OnnxExporterError, _exporting

__all__ = ["export", "register_custom_op_symbolic", "unregister_custom_op_symbolic", "is_in_onnx_export",
           "select_model_mode_for_export", "TrainingMode", "OperatorExportTypes", "ONNXProgram",
           "OnnxExporterError", "errors", "producer_name", "producer_version", "TensorProtoDataType"]

producer_name = "ember"


def __getattr__(name):
    if name == "producer_version":
        from .. import __version__

        return __version__
    if name == "errors":
        import sys

        return sys.modules[__name__ + ".errors"] if __name__ + ".errors" in sys.modules else _errors_module()
    from .._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)


def _errors_module():
    import importlib

    return importlib.import_module(__name__ + ".errors")


class TrainingMode(enum.IntEnum):
    """Which mode the model is exported in: EVAL (the default), PRESERVE (as it is), TRAINING."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TensorProtoDataType(enum.IntEnum):
    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16


def is_in_onnx_export() -> bool:
    """Whether an export is tracing the model right now (models use it to take an export-friendly path)."""
    return _exporting[0]


@contextlib.contextmanager
def select_model_mode_for_export(model, mode: TrainingMode):
    """Put the model (and its submodules) in `mode`'s train/eval state for the export, then restore it."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got '{type(mode)}'.")
    was_training = getattr(model, "training", False)
    if mode != TrainingMode.PRESERVE and hasattr(model, "train"):
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        if mode != TrainingMode.PRESERVE and hasattr(model, "train"):
            model.train(was_training)


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn, opset_version: int):
    """Export op `symbolic_name` ("aten::relu" or "<namespace>::<op>") with `symbolic_fn(g, *inputs, *args)`,
    from `opset_version` on; `g.op("Type", ...)` adds nodes, as in torch's symbolic functions."""
    if symbolic_name.startswith("::"):
        symbolic_name = "aten" + symbolic_name
    ns, sep, op = symbolic_name.partition("::")
    if not sep or not ns or not op:
        raise OnnxExporterError(f"Failed to register operator {symbolic_name}. The symbolic name must match the "
                                "format domain::name, and should start with a letter and contain only "
                                "alphanumerical characters")
    CUSTOM.setdefault(symbolic_name, {})[opset_version] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int):
    """Remove a symbolic registered with `register_custom_op_symbolic`."""
    if symbolic_name.startswith("::"):
        symbolic_name = "aten" + symbolic_name
    CUSTOM.get(symbolic_name, {}).pop(opset_version, None)


class ONNXProgram:
    """What `export(..., dynamo=True)` returns: the model proto, savable and runnable with onnxruntime."""

    def __init__(self, model_proto):
        self.model_proto = model_proto

    @property
    def model(self):
        return self.model_proto.graph

    def save(self, destination, *, include_initializers=True, keep_initializers_as_inputs=False,
             external_data=None):
        import onnx

        onnx.save_model(self.model_proto, destination)

    def __call__(self, *args):
        import numpy as np
        import onnxruntime

        from .. import Tensor, from_numpy

        session = onnxruntime.InferenceSession(self.model_proto.SerializeToString(),
                                               providers=["CPUExecutionProvider"])
        feeds = {i.name: (a.detach().numpy() if isinstance(a, Tensor) else np.asarray(a))
                 for i, a in zip(session.get_inputs(), args)}
        return [from_numpy(o) for o in session.run(None, feeds)]

    def __repr__(self):
        import onnx

        return f"ONNXProgram(\n{onnx.printer.to_text(self.model_proto)}\n)"


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=False, external_data=True, dynamic_shapes=None,
           custom_translation_table=None, report=False, optimize=True, verify=False, profile=False,
           dump_exported_program=False, artifacts_dir=".", export_params=True, keep_initializers_as_inputs=False,
           dynamic_axes=None, training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Export `model` (run on `args`) to ONNX, written to `f` (a path or a binary file object).

    Args:
        model: an `nn.Module` (or a function of tensors).
        args: the example inputs, a tuple (a single tensor is taken as a one-element tuple); a dict as the
            last element gives keyword arguments, as in torch.
        f: where to write; with `dynamo=True` it may be None and the `ONNXProgram` is returned.
        input_names, output_names: names of the graph's inputs and outputs, in order.
        opset_version: the ONNX opset, 17 to 28 (default 20, as torch's).
        dynamic_axes: {name: {axis: "dim_name"}} or {name: [axes]}: dimensions that may change size.
        export_params: store the parameters in the file (else they become graph inputs).
        do_constant_folding: compute what depends only on parameters and constants at export time.
        training: `TrainingMode.EVAL` (default), `PRESERVE` or `TRAINING`.
        keep_initializers_as_inputs: list the initializers among the graph inputs too.
    """
    import ember

    if opset_version is None:
        opset_version = DEFAULT_OPSET
    if not MIN_OPSET <= opset_version <= MAX_OPSET:  # torch's message; ember writes opsets 17 to 28
        raise RuntimeError(f"Unsupported onnx_opset_version: {opset_version}")
    if operator_export_type not in (OperatorExportTypes.ONNX,):
        raise OnnxExporterError("ember exports standard ONNX operators only (OperatorExportTypes.ONNX)")
    if isinstance(args, ember.Tensor):
        args = (args,)
    args = tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs.update(args[-1])
        args = args[:-1]
    if dynamic_shapes is not None and dynamic_axes is None:
        dynamic_axes = _axes_from_dynamic_shapes(dynamic_shapes, model, args)
    from ._run import run_export

    with select_model_mode_for_export(model, training) if hasattr(model, "train") else contextlib.nullcontext():
        _exporting[0] = True
        try:
            proto = run_export(model, args, kwargs, input_names, output_names, opset_version, export_params,
                               do_constant_folding, training == TrainingMode.TRAINING or
                               (training == TrainingMode.PRESERVE and getattr(model, "training", False)),
                               dynamic_axes, keep_initializers_as_inputs)
        finally:
            _exporting[0] = False
    if verbose:
        import onnx

        print(onnx.printer.to_text(proto.graph))
    if f is not None:
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as fh:
                fh.write(proto.SerializeToString())
        elif isinstance(f, io.IOBase) or hasattr(f, "write"):
            f.write(proto.SerializeToString())
    if dynamo:
        return ONNXProgram(proto)
    return None


def _axes_from_dynamic_shapes(dynamic_shapes, model, args):
    """torch.export-style `dynamic_shapes` ({"x": {0: Dim("batch")}} or a tuple per input) as dynamic_axes."""
    from ._export import default_input_names

    names = default_input_names(model, args)
    items = dynamic_shapes.items() if isinstance(dynamic_shapes, dict) else zip(names, dynamic_shapes)
    out = {}
    for name, spec in items:
        if spec:
            out[name] = {int(axis): str(getattr(dim, "__name__", dim)) for axis, dim in dict(spec).items()}
    return out
