"""`torch.fx.traceback`: the node whose user code is being traced, so that nodes traced from it inherit its
`stack_trace`.

Dynamo records on each node it adds torch's `node.meta["stack_trace"]` (the user's frames, formatted by
`traceback`). AOT autograd runs the captured graph node by node under `set_current_meta(node.meta)`, and
the dispatcher-level tracer (`ember.fx.experimental.proxy_tensor`) copies the current `stack_trace` onto
every node it records, forward and backward (a backward formula runs with the meta of the forward node
that made its autograd node), as torch's `preserve_node_meta` does. The code generator prints it above
each kernel (`TORCH_LOGS=output_code`).
"""

from __future__ import annotations

import contextlib
import re
import threading

__all__ = ["get_current_meta", "set_current_meta", "format_stack_trace"]

_local = threading.local()


def get_current_meta() -> dict:
    """The meta of the node being traced now ({} when none is)."""
    return getattr(_local, "meta", None) or {}


@contextlib.contextmanager
def set_current_meta(meta):
    """Trace under `meta` (a node's meta dict, or a node): what is recorded meanwhile inherits its
    `stack_trace`."""
    meta = getattr(meta, "meta", meta)
    prev = getattr(_local, "meta", None)
    _local.meta = meta
    try:
        yield
    finally:
        _local.meta = prev


_FILE_LINE = re.compile(r'^File "(.+)", line (\d+), in (.+)$')


def format_stack_trace(stack_trace: str | None) -> str | None:
    """`File: path:line in fn, code: source` of a stack trace's innermost frame (torch's
    `_ParsedStackTrace.get_summary_str`, the form of its printed graphs' comments), or None."""
    if not stack_trace:
        return None
    lines = stack_trace.strip().split("\n")
    for i in range(len(lines) - 2, -1, -1):
        m = _FILE_LINE.match(lines[i].strip())
        if m:
            return f"File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: {lines[i + 1].strip()}"
    return None
