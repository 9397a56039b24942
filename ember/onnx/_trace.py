"""Running a model once and recording every op call that reaches the dispatcher (ONNX export's capture).

This is the TorchScript-style trace `torch.onnx.export(dynamo=False)` is built on: the model runs on
example inputs, and a mode above autograd writes down each registered op with its inputs (by tensor
identity), its static params and its outputs. Python decisions (loops, branches, `.item()`) are taken
during the run and so are baked into the record, as torch's tracer bakes them.

NOTE [ Traced values ]
A recorded tensor is named by what made it: a model input, a parameter or buffer (by its name in the
module), the output of a recorded call, or a constant (a tensor the model made without an op, e.g. from
a Python list). In-place ops (`x.add_(1)`) are recorded as out-of-place calls after which the tensor
object stands for the new value, so later uses read the updated value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._dispatch import redispatch, redispatch_inplace
from .._modes import Mode


@dataclass
class Call:
    """One recorded op call: `outputs = op(*inputs, *params)`; inputs hold Tensors and Python scalars."""
    op: object
    inputs: list
    params: tuple
    outputs: tuple
    inplace: bool = False


@dataclass
class Trace:
    calls: list = field(default_factory=list)
    keep: list = field(default_factory=list)


class _Recorder(Mode):
    level = "above"

    def __init__(self, trace):
        self.trace = trace
        self.keep = []  # every recorded tensor stays alive, so an id is never reused during the trace

    def dispatch(self, op, inputs, params):
        out = redispatch(op, inputs, params)
        outs = out if isinstance(out, tuple) else (out,)
        self.keep.extend(outs)
        self.keep.extend(inputs)
        self.trace.calls.append(Call(op, list(inputs), tuple(params), tuple(outs)))
        return out

    def dispatch_inplace(self, op, self_, inputs, params):
        # the tensor object self_ stands for its old value until this call, and for the result after it
        out = redispatch_inplace(op, self_, inputs, params)
        self.keep.extend(inputs)
        self.trace.calls.append(Call(op, [self_, *inputs], tuple(params), (self_,), inplace=True))
        return out
