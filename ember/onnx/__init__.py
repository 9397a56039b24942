"""`torch.onnx`: importable, so that scripts which `import torch.onnx` at the top and export only on request
(PyTorch's word-language-model example) train on ember.

Export itself is not built yet (it builds on graph capture, issue 24): `ember.onnx.export` and the other
names fail with "ember does not implement torch.onnx.export yet".
"""

from .._torch_alias import missing_attribute


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (torch's class)."""


def is_in_onnx_export():
    """Whether an ONNX export is running: never, on ember today."""
    return False


__getattr__ = missing_attribute(__name__)
