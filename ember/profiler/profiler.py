"""`torch.profiler.profile`: the profiler with activities, a step schedule and trace handlers.

A training loop calls `prof.step()` once per step; the schedule says for each step whether the profiler
is off (NONE), running but discarding (WARMUP), recording (RECORD), or recording and then handing the cycle
to `on_trace_ready` (RECORD_AND_SAVE): `tensorboard_trace_handler` writes it where TensorBoard's profiler
plugin looks. Each recorded cycle is one `autograd.profiler.profile` run; each step in it is a
`ProfilerStep#N` range.
"""

from __future__ import annotations

import enum
import os
import warnings

from ..autograd import profiler as _legacy
from ..autograd.profiler_util import EventList

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "record_function", "ExecutionTraceObserver",
           "_KinetoProfile"]

kineto_available = _legacy.kineto_available
record_function = _legacy.record_function


class ProfilerActivity(enum.Enum):
    """What a profiler can watch; ember's CPU-only build watches the CPU."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """The activities this build can profile: the CPU."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What the profiler does during one step (see `schedule`)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4  # torch's Kineto stopped an accelerator's tracing; never the case on a CPU


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A step -> ProfilerAction function: skip `skip_first` steps, then cycles of `wait` idle steps,
    `warmup` steps, `active` recorded steps (the last one saves), `repeat` times (0: forever).
    With `skip_first_wait`, the first cycle has no wait steps."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait  # the first cycle starts at its warmup
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False):
    """An `on_trace_ready` handler that writes each cycle's Chrome trace to `dir_name` as
    `<worker_name>.<time_ns>.pt.trace.json[.gz]`, where TensorBoard's profiler plugin finds it."""
    import socket
    import time

    def handler(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        worker_name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


class _KinetoProfile:
    """The profiler without the schedule: `start()`/`stop()` around what to record, then the results."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None):
        self.activities = set(activities) if activities else supported_activities()
        if ProfilerActivity.CPU not in self.activities:
            # torch profiles nothing it can run here: asking only for an accelerator is an error
            raise AssertionError("No activities specified for the profiler")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.profiler: _legacy.profile | None = None

    def prepare_trace(self):
        if self.profiler is None or not self.acc_events:
            self.profiler = _legacy.profile(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                            with_stack=self.with_stack, with_flops=self.with_flops,
                                            with_modules=self.with_modules, acc_events=self.acc_events)

    def start_trace(self):
        self.profiler._start()
        self.profiler.entered = True

    def stop_trace(self):
        self.profiler._stop()
        self.profiler.entered = False

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def events(self) -> EventList:
        """The events of the last recorded cycle."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before calling events()")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """One row per op name (and per input shapes / stack if asked): see `EventList.table`."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before calling key_averages()")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str):
        """Write the last cycle as a Chrome trace (`.json`, or gzipped for a `.gz` path)."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting chrome trace")
        return self.profiler.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total"):
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)


class profile(_KinetoProfile):
    """Profile the code in the block, optionally only the steps a `schedule` picks.

    Args:
        activities: profiled activities; `ProfilerActivity.CPU` (the default) is the one ember has.
        schedule: step -> ProfilerAction (see `schedule`); default: record every step.
        on_trace_ready: called with the profiler at the end of each recorded cycle.
        record_shapes, profile_memory, with_stack, with_flops, with_modules: as `autograd.profiler.profile`.
        acc_events: keep events across cycles instead of starting each cycle empty.

    Example::

        >>> with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
        ...                             on_trace_ready=torch.profiler.tensorboard_trace_handler("./log")) as p:
        ...     for batch in loader:
        ...         train_step(batch)
        ...         p.step()
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        activities = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning,
                          stacklevel=2)
        super().__init__(activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         acc_events=acc_events)
        self.schedule = schedule or _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._step_range = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        _legacy.KinetoStepTracker.init_step_count("ProfilerStep")
        self._open_step()

    def stop(self):
        self._close_step()
        _legacy.KinetoStepTracker.erase_step_count("ProfilerStep")
        self._transit(self.current_action, None)

    def step(self):
        """Mark the end of a training step: the schedule's next action takes over."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        _legacy.KinetoStepTracker.increment_step("ProfilerStep")
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    # --- the schedule's state machine -------------------------------------------------------------
    def _recording(self):
        return self.profiler is not None and self.profiler._recorder is not None

    def _transit(self, prev, cur):
        """Do what leaving action `prev` for `cur` (None: stopping) asks."""
        active = (ProfilerAction.WARMUP, ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev == ProfilerAction.RECORD_AND_SAVE or (cur is None and prev in active):
            if self._recording():
                self.stop_trace()
                if prev != ProfilerAction.WARMUP and self.on_trace_ready:
                    self.on_trace_ready(self)
        elif prev == ProfilerAction.WARMUP and cur in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            if self._recording():  # warmup's events are discarded: recording starts afresh
                self.stop_trace()
                self.start_trace()
            return
        elif prev in active and cur == ProfilerAction.NONE:
            if self._recording():
                self.stop_trace()
            return
        if cur in active and not self._recording():
            self.prepare_trace()
            self.start_trace()

    def _open_step(self):
        if self.record_steps and self._recording():
            self._step_range = record_function("ProfilerStep#" + str(self.step_num))
            self._step_range.__enter__()

    def _close_step(self):
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None


class ExecutionTraceObserver:
    """torch's execution-graph observer (a Kineto/C++ feature). ember records no execution traces:
    registering one fails instead of writing an empty file."""

    def register_callback(self, output_file_path: str):
        raise RuntimeError("ember's profiler does not record execution traces (torch's ExecutionTraceObserver "
                           "is part of its C++ Kineto profiler)")
