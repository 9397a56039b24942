"""What a profiler recorded: `FunctionEvent`s, their averages, and the table and trace made from them.

`EventList` is torch's: a list of events with `key_averages()` (one row per name, optionally per input
shapes or call stack), `table()` (the text report, column for column as torch prints it), `total_average()`
and `export_chrome_trace()` (Trace Event Format JSON for chrome://tracing and Perfetto). Times are in
microseconds, memory in bytes, as torch's.
"""

from __future__ import annotations

import json
import os
import socket
from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "DeviceType", "Interval", "MEMORY_EVENT_NAME"]

MEMORY_EVENT_NAME = "[memory]"


class DeviceType:
    """The device an event ran on (ember profiles the CPU only)."""
    CPU = "DeviceType.CPU"


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class Interval:
    """A time range in microseconds (`FunctionEvent.time_range`)."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class _Times:
    """The `*_str` forms of an event's times, as the table prints them."""

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    # no accelerator: its times are always zero (the attributes scripts read exist all the same)
    device_time_total = self_device_time_total = device_time = 0.0
    device_memory_usage = self_device_memory_usage = 0
    cuda_time_total = self_cuda_time_total = cuda_time = 0.0


class FunctionEvent(_Times):
    """One recorded range: an op, a `record_function` block or an autograd node, on one thread.

    `cpu_time_total` is the range's length; `self_cpu_time_total` leaves out its children (the ranges
    that ran inside it on the same thread), so the self times of all events add up to the wall time.
    """

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None, cpu_memory_usage=0,
                 sequence_nr=-1, is_user_annotation=False, concrete_inputs=None, input_types=None,
                 input_strides=None, overload_name="", trace_name=None):
        self.id = id
        self.name = name
        self.trace_name = name if trace_name is None else trace_name
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.input_shapes = input_shapes
        self.input_types = input_types
        self.input_strides = input_strides
        self.concrete_inputs = concrete_inputs
        self.stack = stack or []
        self.cpu_memory_usage = cpu_memory_usage
        self.sequence_nr = sequence_nr
        self.is_user_annotation = is_user_annotation
        self.overload_name = overload_name
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1
        self.node_id = -1
        self.device_type = DeviceType.CPU
        self.is_async = self.is_remote = self.is_legacy = False
        self.use_device = None
        self.flops = 0
        self.scope = 0

    key = property(lambda self: self.name)
    time_range = property(lambda self: Interval(self.start_us, self.end_us))

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The sum of the events with one key (a row of `key_averages()`)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = self.is_remote = self.is_legacy = self.is_user_annotation = False
        self.use_device = None
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.flops = 0

    def add(self, other):
        if self.key is None:  # the first event fixes the descriptive fields
            self.key = other.key
            self.node_id = other.node_id
            self.is_async, self.is_remote = other.is_async, other.is_remote
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
            self.input_shapes = other.input_shapes
            self.overload_name = other.overload_name
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        self.flops += other.flops
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events with the reports torch's has."""

    def __init__(self, *args, **kwargs):
        self._use_device = kwargs.pop("use_device", None)
        self._profile_memory = kwargs.pop("profile_memory", False)
        self._with_flops = kwargs.pop("with_flops", False)
        super().__init__(*args, **kwargs)
        self._tree_built = True

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """One FunctionEventAvg per event name (and input shapes / top stack entries / overload if asked)."""
        stats = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [evt.key, str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(evt.overload_name)
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += evt.stack[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        averages = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                             with_flops=self._with_flops)
        for evt in averages:
            evt.stack = evt.stack[:group_by_stack_n] if evt.stack else []
            if not group_by_input_shapes:
                evt.input_shapes = ""
            if not group_by_overload_name:
                evt.overload_name = ""
        return averages

    def total_average(self):
        """All events summed into one FunctionEventAvg with key "Total"."""
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
            total.key = None
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The text report, as torch prints it. `sort_by` names an attribute ("cpu_time_total",
        "self_cpu_time_total", "self_cpu_memory_usage", "count", ...), largest first."""
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_src_column_width=max_src_column_width,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            profile_memory=self._profile_memory, top_level_events_only=top_level_events_only,
                            time_unit=time_unit)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (Trace Event Format JSON) to `path`."""
        with open(path, "w") as f:
            json.dump(chrome_trace(self, trace_name=path, profile_memory=self._profile_memory), f)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write "frame;frame;...;name value" lines (flame graph input) for the events' recorded stacks."""
        with open(path, "w") as f:
            for evt in self:
                if evt.stack:
                    frames = ";".join(reversed([s.replace(" ", "_") for s in evt.stack]))
                    f.write(f"{frames};{evt.name} {int(getattr(evt, metric))}\n")


def chrome_trace(events, trace_name="", profile_memory=False, memory_events=()):
    """A dict in Trace Event Format: one complete ("X") event per range, instants for memory events."""
    pid = os.getpid()
    threads = sorted({e.thread for e in events})
    trace = [{"ph": "M", "name": "process_name", "ts": 0, "pid": pid, "tid": 0, "args": {"name": "python3"}},
             {"ph": "M", "name": "process_labels", "ts": 0, "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    for tid in threads:
        trace.append({"ph": "M", "name": "thread_name", "ts": 0, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} (python3)"}})
    for i, e in enumerate(sorted(events, key=lambda e: (e.start_us, -e.end_us))):
        args = {"External id": e.id, "Ev Idx": i}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_types or []
            args["Input Strides"] = e.input_strides or []
            args["Concrete Inputs"] = e.concrete_inputs or []
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.trace_name,
                      "pid": pid, "tid": e.thread, "ts": e.start_us, "dur": e.end_us - e.start_us, "args": args})
    for ts, nbytes, total, tid in memory_events:
        trace.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": MEMORY_EVENT_NAME, "pid": pid,
                      "tid": tid, "ts": ts, "args": {"Device Type": 0, "Device Id": -1, "Bytes": nbytes,
                                                     "Total Allocated": total, "Total Reserved": total}})
    return {"schemaVersion": 1, "deviceProperties": [], "profile_memory": int(profile_memory),
            "host_name": socket.gethostname(), "displayTimeUnit": "ms", "traceName": str(trace_name),
            "traceEvents": trace}


def _build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                 max_name_column_width=55, max_shapes_column_width=80, profile_memory=False,
                 top_level_events_only=False, time_unit=None):
    """Torch's profiler table: right-aligned columns of width 12, two spaces apart, a dashed rule above
    and below the header and at the end, then "Self CPU time total"."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_overload = any(e.overload_name for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width or 10**9)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_column_width or 10**9)

    headers = ["Name"] + (["Overload Name"] if has_overload else []) + [
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] * (2 if has_overload else 1) + [12] * (len(headers) - 1 - has_overload)
    aligns = [">"] * len(widths)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    src_width = 0
    if stacks:
        src_width = min(max(len(s) for st in stacks for s in st) + 4, max_src_column_width or 10**9)
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    row_format = "".join(f"{{: {a}{w}}}  " for a, w in zip(aligns, widths))
    rule = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def fmt_time(us, default):
        return {"s": f"{us / 1e6:.3f}s", "ms": f"{us / 1e3:.3f}ms", "us": f"{us:.3f}us"}.get(time_unit, default)

    def trim(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [rule, row_format.format(*headers), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name]
        if has_overload:
            row.append(e.overload_name)
        row += [_format_time_share(e.self_cpu_time_total, total),
                fmt_time(e.self_cpu_time_total, e.self_cpu_time_total_str),
                _format_time_share(e.cpu_time_total, total) if not e.is_async else 0,
                fmt_time(e.cpu_time_total, e.cpu_time_total_str), fmt_time(e.cpu_time, e.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim(e.stack[0]) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks and e.stack:
            blank = [""] * (len(headers) - 1)
            lines += [row_format.format(*(blank + [trim(s)])) for s in e.stack[1:]]
            lines.append(row_format.format(*(blank + [""])))
    lines += [rule, f"Self CPU time total: {fmt_time(total, _format_time(total))}"]
    return "".join(line + "\n" for line in lines)
