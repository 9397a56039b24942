"""`torch.autograd.profiler`: the legacy profiler (`profile`) and `record_function`.

`profile` runs a `Recorder` (ember/profiler/_recorder.py) on this thread while the `with` block runs and
keeps what it recorded as an `EventList`. `torch.profiler.profile`, the newer interface with schedules
and trace handlers, is built on it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import defaultdict

from .profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg", "emit_nvtx",
           "emit_itt", "kineto_available", "EnforceUnique", "KinetoStepTracker"]


def kineto_available():
    """Whether torch's Kineto tracer is there: ember has its own recorder instead."""
    return False


class profile:
    """Records the ops, `record_function` ranges and backward nodes run inside the block on this thread.

    Args:
        enabled (bool): with False the block runs unprofiled.
        record_shapes (bool): record each op's input shapes (and types, strides, scalar values).
        profile_memory (bool): account the memory each op allocates and frees (NOTE [ Profiled memory ]).
        with_stack (bool): record the Python stack of each op's call.
        use_cuda, use_device, with_flops, with_modules, use_kineto, experimental_config: accepted for
            torch's signature; there is no accelerator to profile.

    Example::

        >>> with torch.autograd.profiler.profile(record_shapes=True) as prof:
        ...     model(x).sum().backward()
        >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device == "cuda":
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            use_device = None
        if not use_cpu:
            raise AssertionError("No activities specified for the profiler")
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.entered = False
        self.function_events: EventList | None = None
        self._recorder = None

    def _start(self):
        from ..profiler._recorder import Recorder

        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        self._recorder.start()

    def _stop(self):
        rec, self._recorder = self._recorder, None
        rec.stop()
        events = rec.events()
        if self.acc_events and self.function_events is not None:
            events = EventList(list(self.function_events) + list(events), profile_memory=self.profile_memory)
        self.function_events = events
        self._memory_events = rec.memory_events

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        self._stop()
        self.entered = False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __repr__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self):
        return "<unfinished torch.autograd.profile>" if self.function_events is None else str(self.function_events)

    def events(self):
        self._check_finish()
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    def export_chrome_trace(self, path):
        """Write a Chrome trace (Trace Event Format JSON) of the recorded events to `path`."""
        import gzip
        import json

        from .profiler_util import chrome_trace

        self._check_finish()
        trace = chrome_trace(self.function_events, trace_name=path, profile_memory=self.profile_memory,
                             memory_events=self._memory_events if self.profile_memory else ())
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(trace, f)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self CPU time, in microseconds."""
        self._check_finish()
        return self.function_events.self_cpu_time_total


class record_function(contextlib.ContextDecorator):
    """Label a block of code (or a function, as a decorator) so the profiler shows it as one range.

    Free when no profiler runs on this thread.

    Example::

        >>> with torch.profiler.profile() as prof:
        ...     with torch.profiler.record_function("forward"):
        ...         y = model(x)
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._range = None

    def __enter__(self):
        from ..profiler._recorder import open_range

        self._range = open_range(self.name)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        from ..profiler._recorder import close_range

        close_range(self._range)
        self._range = None
        return False


class emit_nvtx:
    """NVTX ranges for NVIDIA's profilers: they need CUDA, so entering fails as in torch's CPU build."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def __exit__(self, *exc):
        return False


class emit_itt:
    """ITT ranges for Intel VTune. Without a VTune collector attached, the ranges go nowhere, as with
    torch's CPU build; ember emits none."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class EnforceUnique:
    """Remembers keys; seeing one twice is an error."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """One global step count from several counters (the profiler's step(), each optimizer's step()).

    Each requester counts its own steps; the global step is the largest count, so a loop that steps the
    profiler and two optimizers still advances one step per iteration.
    """

    _current_step = 0
    _step_dict: dict = defaultdict(int)

    @classmethod
    def init_step_count(cls, requester: str):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester: str) -> bool:
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester: str) -> int:
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        new = max(cls._step_dict.values())
        if new - cls._current_step > 1:
            warnings.warn(f"Profiler step count has increased more than 1 - current_step = {cls._current_step} "
                          f"step dict =  {cls._step_dict}", stacklevel=2)
        cls._current_step = max(cls._current_step, new)
        return cls._current_step

    @classmethod
    def current_step(cls) -> int:
        return cls._current_step
