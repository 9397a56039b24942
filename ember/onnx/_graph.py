"""Building an ONNX graph: values, nodes, constants and initializers (the `g` symbolic functions get).

`GraphContext.op("Gemm", a, b, c, alpha_f=1.0, transB_i=1)` appends a node and returns its output
value(s), as torch's `g.op` does in a symbolic function; attribute names may carry torch's type suffix
(`_i` int(s), `_f` float(s), `_s` string, `_t` tensor). Python numbers and NumPy arrays given as inputs
become Constant nodes. Each node is named after the module it ran in (`/encoder/layers.0/Gemm`), with
outputs `<node>_output_<k>`, as torch's exporter names them.
"""

from __future__ import annotations

import numpy as np

_ONNX_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
               "float16": 10, "float64": 11, "uint32": 12, "uint64": 13, "complex64": 14, "complex128": 15,
               "bfloat16": 16}


def onnx_type(dtype) -> int:
    """The TensorProto element type of an ember dtype or NumPy dtype."""
    name = str(dtype).rsplit(".", 1)[-1]
    name = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32"}.get(
        name, name)
    return _ONNX_TYPES[name]


class Value:
    """A value of the ONNX graph: its name, and (when known) the example tensor it stood for in the trace.

    `const` holds the NumPy value of a value known at export time (parameters, buffers, folded constants),
    so later symbolics can read it (a Reshape's shape, a Gemm's transposed weight)."""

    __slots__ = ("name", "example", "const", "producer", "folded_from")

    def __init__(self, name, example=None, const=None, producer=None):
        self.name, self.example, self.const, self.producer = name, example, const, producer
        self.folded_from = None  # (op name, source Value) of a constant folded at export (a Linear's t(W))

    @property
    def dtype(self):
        if self.example is not None:
            return self.example.dtype
        return None if self.const is None else self.const.dtype

    @property
    def shape(self):
        if self.example is not None:
            return tuple(self.example.shape)
        return None if self.const is None else self.const.shape

    def __repr__(self):
        return f"Value({self.name})"


class GraphContext:
    """The graph being built, and the opset it targets."""

    def __init__(self, opset: int):
        from onnx import helper

        self.helper = helper
        self.opset = opset
        self.nodes = []
        self.initializers = {}     # name -> NumPy array
        self.scope = ""            # "/layer1/conv" while converting a call made in that module
        self._counts = {}
        self._consts = {}

    # --- names ----------------------------------------------------------------------------------------
    def _node_name(self, op_type):
        base = f"{self.scope}/{op_type}"
        n = self._counts.get(base, 0)
        self._counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    # --- nodes ----------------------------------------------------------------------------------------
    def op(self, op_type, *inputs, outputs=1, domain="", **attrs):
        """Append `op_type(inputs)`; return its output Value, or a tuple of `outputs` Values."""
        names = []
        for x in inputs:
            if x is None:
                names.append("")
            elif isinstance(x, Value):
                names.append(x.name)
            else:
                names.append(self.const(x).name)
        node_name = self._node_name(op_type)
        outs = [Value(f"{node_name}_output_{k}") for k in range(outputs)]
        node = self.helper.make_node(op_type, names, [o.name for o in outs], name=node_name, domain=domain or None,
                                     **{k: v for k, v in (_attr(k, v) for k, v in attrs.items()) if v is not None})
        self.nodes.append(node)
        for o in outs:
            o.producer = node
        return outs[0] if outputs == 1 else tuple(outs)

    def const(self, value, dtype=None):
        """A Constant node holding `value` (a number, list or array), shared between uses."""
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
            arr = arr.astype(np.float32)  # a bare Python float is a float32 constant unless asked otherwise
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        v = self._consts.get(key)
        if v is None:
            from onnx import numpy_helper

            saved, self.scope = self.scope, ""
            v = self.op("Constant", value_t=numpy_helper.from_array(arr))
            self.scope = saved
            v.const = arr
            self._consts[key] = v
        return v

    def initializer(self, name, array):
        """A named initializer (a parameter, a buffer, a folded constant)."""
        self.initializers[name] = np.ascontiguousarray(array)
        return Value(name, const=self.initializers[name])

    def ints(self, values):
        """An int64 1-D constant (shapes, axes, pads)."""
        return self.const(np.asarray(list(values), dtype=np.int64))


def _attr(key, value):
    """torch's suffix convention: `axis_i` -> ("axis", int), `alpha_f` -> float, `mode_s` -> str, `value_t`."""
    if value is None:
        return key, None
    name, _, kind = key.rpartition("_")
    if kind not in ("i", "f", "s", "t") or not name:
        return key, value
    if kind == "i":
        value = [int(v) for v in value] if isinstance(value, (list, tuple)) else int(value)
    elif kind == "f":
        value = [float(v) for v in value] if isinstance(value, (list, tuple)) else float(value)
    elif kind == "s":
        value = str(value)
    return name, value
