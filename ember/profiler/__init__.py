"""`torch.profiler`: see what a model spends its time and memory on.

`profile` (with `schedule` and `tensorboard_trace_handler`), `record_function`, `ProfilerActivity`,
`ProfilerAction`; built on the recorder mode in `_recorder.py` and the events of
`ember.autograd.profiler_util`.
"""

from ..autograd.profiler_util import DeviceType as DeviceType
from .profiler import ExecutionTraceObserver as ExecutionTraceObserver
from .profiler import ProfilerAction as ProfilerAction
from .profiler import ProfilerActivity as ProfilerActivity
from .profiler import _KinetoProfile as _KinetoProfile
from .profiler import kineto_available as kineto_available
from .profiler import profile as profile
from .profiler import record_function as record_function
from .profiler import schedule as schedule
from .profiler import supported_activities as supported_activities
from .profiler import tensorboard_trace_handler as tensorboard_trace_handler

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "ExecutionTraceObserver"]
