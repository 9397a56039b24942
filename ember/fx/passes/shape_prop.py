"""`ShapeProp`: run a GraphModule on example inputs and record each node's output metadata.

An `Interpreter` whose `run_node` stores, in `node.meta["tensor_meta"]`, a `TensorMetadata` (shape, dtype,
requires_grad, stride, memory format) of every tensor a node produces (a nested structure of them for a
node that returns several), as torch's pass does. With `fake_mode`, the inputs become fakes first, so the
pass computes nothing.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp", "extract_tensor_metadata"]


class TensorMetadata(NamedTuple):
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def extract_tensor_metadata(result: Tensor) -> TensorMetadata:
    import ember

    memory_format = None
    for fmt in (ember.contiguous_format, ember.channels_last, ember.channels_last_3d):
        if result.is_contiguous(memory_format=fmt):
            memory_format = fmt
            break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """Records each node's `tensor_meta` while running the graph (see the module docstring)."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n):
        result = super().run_node(n)
        found = []

        def meta(x):
            if isinstance(x, Tensor):
                found.append(True)
                return extract_tensor_metadata(x)
            return x
        m = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = m
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on `args` (made fake first when the pass has a fake mode)."""
        if self.fake_mode is not None:
            args = [self.fake_mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args]
            with self.fake_mode:
                return super().run(*args)
        return super().run(*args)
