"""`torch._logging`: TORCH_LOGS-style switches for what the compiler prints, and TORCH_COMPILE_DEBUG.

`TORCH_LOGS="graph_code,guards"` (read once, at first use) or `torch._logging.set_logs(graph_code=True)`
turns artifacts on; each artifact is a message on the `torch._dynamo` logger (`graph_code`, `guards`,
`recompiles`, `graph_breaks`, `aot_graphs`, ...), printed to stderr like torch's with a `[__<name>]` tag.
`TORCH_COMPILE_DEBUG=1` writes every captured graph to `torch_compile_debug/run_<time>-pid_<pid>/
torchdynamo/` under the working directory (`TORCH_COMPILE_DEBUG_DIR` moves it), as torch does.
"""

import logging
import os
import sys
import time

__all__ = ["set_logs", "trace", "debug_dump", "enabled"]

ARTIFACTS = (
    "graph_code",
    "graph",
    "guards",
    "recompiles",
    "graph_breaks",
    "aot_graphs",
    "aot_joint_graph",
    "bytecode",
    "output_code",
    "dynamic",
    "graph_sizes",
    "recompiles_verbose",
    "trace_source",
)
# torch's component logs, as the artifacts ember writes for them
_COMPONENTS = {"dynamo": ("graph_breaks", "recompiles"), "aot": tuple(a for a in ARTIFACTS if a.startswith("aot")),
               "inductor": ("output_code",)}
_on = set()
_read_env = [False]
_handler = [None]
_log = logging.getLogger("torch._dynamo")


def _ensure():
    if not _read_env[0]:
        _read_env[0] = True
        for part in os.environ.get("TORCH_LOGS", "").replace(" ", "").split(","):
            name = part.lstrip("+")
            if name in ARTIFACTS:
                _on.add(name)
            elif name in _COMPONENTS:
                _on.update(_COMPONENTS[name])
        if _on:
            _install_handler()


class _Stderr(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is at the time (pytest and notebooks swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):  # StreamHandler.__init__ sets a stream; this handler always reads sys.stderr
        return


def _install_handler():
    if _handler[0] is None:
        h = _Stderr()
        h.setFormatter(logging.Formatter("%(message)s"))
        _handler[0] = (h, _log.level)
        _log.addHandler(h)
        if _log.level == logging.NOTSET or _log.level > logging.DEBUG:
            _log.setLevel(logging.DEBUG)


def _remove_handler():
    if _handler[0] is not None:
        h, level = _handler[0]
        _log.removeHandler(h)
        _log.setLevel(level)
        _handler[0] = None


def set_logs(**kwargs):
    """`torch._logging.set_logs(graph_code=True, guards=True, ...)`: artifacts on (True) or off (False)."""
    _ensure()
    for name, on in kwargs.items():
        if name in ARTIFACTS:
            (_on.add if on else _on.discard)(name)
        elif name in _COMPONENTS:  # a component's log level: on (a level or True) shows what ember logs for it
            for artifact in _COMPONENTS[name]:
                (_on.add if on else _on.discard)(artifact)
        else:
            raise ValueError(f"Unrecognized log or artifact name passed to set_logs: {name}")
    if _on:
        _install_handler()
    else:
        _remove_handler()


def enabled(artifact):
    _ensure()
    return artifact in _on


def trace(artifact, make_message):
    """Log `make_message()` (built only when the artifact is on) as torch's `[__artifact]` message."""
    _ensure()
    if artifact in _on or (artifact == "graph_code" and "graph" in _on):
        _log.debug("[__%s] %s", artifact, make_message())


_debug_dir = [None]
_graph_no = [0]


def debug_dump(gm, where):
    """With TORCH_COMPILE_DEBUG=1, write the graph's code to the debug folder."""
    if os.environ.get("TORCH_COMPILE_DEBUG", "0") in ("", "0"):
        return
    if _debug_dir[0] is None:
        root = os.environ.get("TORCH_COMPILE_DEBUG_DIR", os.getcwd())
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S")
        _debug_dir[0] = os.path.join(
            root, "torch_compile_debug", f"run_{stamp}-pid_{os.getpid()}", "torchdynamo"
        )
        os.makedirs(_debug_dir[0], exist_ok=True)
    _graph_no[0] += 1
    path = os.path.join(_debug_dir[0], f"graph_{_graph_no[0]}.py")
    with open(path, "w") as f:
        f.write(f"# captured from {where}\n{gm.code}")
    return path
