"""The profiler's mode: times every op this thread dispatches, and the ranges around them.

A `Recorder` is a dispatcher mode above autograd (NOTE [ The mode stack ]), so an op's time includes the
recording of its backward node, as torch's `aten::` ranges do, and the ops a backward formula runs are
timed too, since they are dispatched like any other. Two more sources of ranges: `record_function` blocks
(user annotations) and the backward engine, which reports each node it runs
(`autograd::engine::evaluate_function: MulBackward0` around the node's work, `MulBackward0` around its
formula) through `engine._node_observers`.

With no profiler running, nothing here runs: the mode is not on the stack, `record_function` finds no
recorder, and the engine's observer list is empty.

NOTE [ Profiled memory ]
torch's CPU allocator reports each allocation and free to the profiler. ember's memory is NumPy's, so with
`profile_memory=True` the recorder accounts it at the op: an output whose buffer is new (not one of the
inputs' buffers: views allocate nothing) adds its buffer's bytes to the op's `cpu_memory_usage`, and a
finalizer on that buffer reports the free (negative bytes) to whatever range is open when it dies, as
torch attributes frees. Buffers made outside the profiled region are not tracked, so their frees are not
counted either.
"""

from __future__ import annotations

import threading
import time
import traceback
import weakref

import numpy as np

from .. import _dispatch
from .._modes import Mode, pop_mode, push_mode
from .._storage import _root
from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.profiler_util import EventList, FunctionEvent

__all__ = ["Recorder", "current_recorder", "open_range", "close_range"]

_EMBER_DIR = __file__.rsplit("/", 2)[0]
_local = threading.local()


def current_recorder():
    """The recorder profiling this thread, or None."""
    return getattr(_local, "recorder", None)


class _Range:
    """An open or finished range: mutable while open, turned into a FunctionEvent at the end."""

    __slots__ = ("id", "name", "start", "end", "parent", "shapes", "types", "strides", "concrete", "stack",
                 "memory", "seq", "user", "children")

    def __init__(self, id, name, start, parent, user=False, seq=-1):
        self.id, self.name, self.start, self.end, self.parent = id, name, start, None, parent
        self.user, self.seq = user, seq
        self.shapes = self.types = self.strides = self.concrete = self.stack = None
        self.memory = 0
        self.children = []


class Recorder(Mode):
    """Records ranges on the thread that starts it, from `start()` to `stop()`."""

    level = "above"

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.ranges: list[_Range] = []
        self.open: list[_Range] = []
        self.memory_events: list = []  # (ts_us, bytes, total_bytes, thread) for the chrome trace
        self.allocated = 0
        self._live: set = set()
        self.thread = threading.get_native_id()  # the OS thread id, as torch's traces show
        self._next_id = 0

    # --- start and stop -------------------------------------------------------------------------
    def start(self):
        if current_recorder() is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        _local.recorder = self
        push_mode(self)
        _engine._node_observers.append(self.node_range)

    def stop(self):
        while self.open:  # a range left open by an exception still ends here
            self.close(self.open[-1])
        _engine._node_observers.remove(self.node_range)
        pop_mode(self)
        _local.recorder = None

    # --- ranges ---------------------------------------------------------------------------------
    def begin(self, name, user=False, seq=-1):
        r = _Range(self._next_id, name, time.perf_counter_ns(), self.open[-1] if self.open else None, user, seq)
        self._next_id += 1
        if self.record_shapes:
            r.shapes = []  # a range with no inputs (record_function, a node) shows [] as torch's do
        if self.with_stack:
            r.stack = _user_stack()
        self.open.append(r)
        return r

    def close(self, r, end=None):
        r.end = time.perf_counter_ns() if end is None else end
        while self.open and self.open[-1] is not r:  # an inner range that was never closed ends too
            self.close(self.open[-1], r.end)
        if self.open:
            self.open.pop()
        if r.parent is not None:
            r.parent.children.append(r)
            r.parent.memory += r.memory  # a range's memory includes its children's
        self.ranges.append(r)

    def node_range(self, node):
        """The engine's hook: ranges around one backward node (see `engine._call_node`)."""
        return _NodeRanges(self, node)

    # --- the mode ------------------------------------------------------------------------------
    def dispatch(self, op, inputs, params):
        return self._timed(op, "aten::" + op.name, inputs, params, lambda: _dispatch.redispatch(op, inputs, params))

    def dispatch_inplace(self, op, self_, inputs, params):
        return self._timed(op, "aten::" + op.name + "_", inputs, params,
                           lambda: _dispatch.redispatch_inplace(op, self_, inputs, params))

    def _timed(self, op, name, inputs, params, run):
        r = self.begin(name)
        if self.record_shapes:
            _record_inputs(r, inputs, params)
        try:
            out = run()
        except BaseException:
            self.close(r)
            raise
        end = time.perf_counter_ns()
        if self.profile_memory:
            self._account(r, inputs, out)
        self.close(r, end)
        return out

    # --- memory (NOTE [ Profiled memory ]) -------------------------------------------------------
    def _account(self, r, inputs, out):
        seen = {id(b) for b in map(_owner, inputs) if b is not None}
        for t in out if isinstance(out, tuple) else (out,):
            root = _owner(t)
            if root is None or id(root) in seen or id(root) in self._live:
                continue
            key = id(root)
            seen.add(key)
            self._live.add(key)
            self._memory(r, root.nbytes)
            weakref.finalize(root, self._freed, key, root.nbytes)

    def _memory(self, r, nbytes):
        self.allocated += nbytes
        if r is not None:
            r.memory += nbytes
        self.memory_events.append((time.perf_counter_ns() / 1e3, nbytes, self.allocated, self.thread))

    def _freed(self, key, nbytes):
        if key not in self._live:
            return
        self._live.discard(key)
        if _local.__dict__.get("recorder") is self:  # a free seen on the profiled thread, while profiling
            self._memory(self.open[-1] if self.open else None, -nbytes)

    # --- results --------------------------------------------------------------------------------
    def events(self) -> EventList:
        """The finished ranges as FunctionEvents, in start order, children linked to parents."""
        events = {}
        for r in sorted(self.ranges, key=lambda r: (r.start, -r.end)):
            # a step's range is "ProfilerStep#3" in the trace and "ProfilerStep*" in the tables, as torch's
            name = "ProfilerStep*" if r.name.startswith("ProfilerStep#") else r.name
            e = FunctionEvent(r.id, name, self.thread, r.start / 1e3, r.end / 1e3, input_shapes=r.shapes,
                              stack=r.stack, cpu_memory_usage=r.memory, sequence_nr=r.seq,
                              is_user_annotation=r.user, concrete_inputs=r.concrete, input_types=r.types,
                              input_strides=r.strides, trace_name=r.name)
            events[r.id] = e
        for r in self.ranges:
            if r.parent is not None and r.parent.id in events:
                child, parent = events[r.id], events[r.parent.id]
                child.cpu_parent = parent
                parent.cpu_children.append(child)
        return EventList(events.values(), profile_memory=self.profile_memory)


class _NodeRanges:
    """`autograd::engine::evaluate_function: <node>` around a node's whole step; `<node>` around apply."""

    __slots__ = ("rec", "node", "outer", "inner")

    def __init__(self, rec, node):
        self.rec, self.node = rec, node

    def __enter__(self):
        name = self.node.name()
        seq = getattr(self.node, "_seq", -1)
        self.outer = self.rec.begin("autograd::engine::evaluate_function: " + name, seq=seq)
        self.inner = self.rec.begin(name, seq=seq)
        return self

    def applied(self):
        self.rec.close(self.inner)

    def __exit__(self, *exc):
        if self.inner.end is None:
            self.rec.close(self.inner)
        self.rec.close(self.outer)


# the C++ names torch's traces give tensor dtypes ("Input type")
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                 "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}


def _record_inputs(r, inputs, params):
    """Input dims, types, strides and scalar values as torch's trace args list them (one entry per input)."""
    shapes, types, strides, concrete = [], [], [], []
    for x in list(inputs) + list(params):
        if isinstance(x, Tensor):
            shapes.append(list(x.shape))
            types.append(_C_TYPE_NAMES.get(str(x.dtype).rsplit(".", 1)[-1], str(x.dtype)))
            strides.append(list(x.stride()))
            concrete.append("")
        elif isinstance(x, (list, tuple)) and x and all(isinstance(t, Tensor) for t in x):
            shapes.append([list(t.shape) for t in x])
            types.append("TensorList")
            strides.append([])
            concrete.append("")
        else:
            shapes.append([])
            types.append("Scalar" if isinstance(x, (int, float, bool)) else type(x).__name__)
            strides.append([])
            concrete.append("" if x is None else str(x))
    r.shapes, r.types, r.strides, r.concrete = shapes, types, strides, concrete


def _owner(t):
    """The NumPy array that owns a tensor's memory (None for non-tensors and meta tensors)."""
    if not isinstance(t, Tensor):
        return None
    data = t._data
    return _root(data) if isinstance(data, np.ndarray) else None


def _user_stack():
    """The caller's Python stack, innermost first, without ember's own frames: "file.py(12): fn"."""
    frames = traceback.extract_stack()[:-3]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not f.filename.startswith(_EMBER_DIR)]


def open_range(name):
    """Open a user range on this thread's recorder (record_function); None when not profiling."""
    rec = current_recorder()
    return None if rec is None else rec.begin(name, user=True)


def close_range(r):
    rec = current_recorder()
    if r is not None and rec is not None and r.end is None:
        rec.close(r)
