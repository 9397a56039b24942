"""`torch.onnx.errors`: the exporter's exception classes."""

from ._export import OnnxExporterError, SymbolicValueError, UnsupportedOperatorError

__all__ = ["OnnxExporterError", "SymbolicValueError", "UnsupportedOperatorError"]
