"""`ember.compile(mode=..., options=...)`: torch's mode tables and option validation, and the options the
code generator reads while it compiles.

`validate(mode, options, dynamic)` is what `torch.compile` does at the call (torch/__init__.py,
`_TorchCompileInductorWrapper`): a mode expands to its options (`list_mode_options`, torch's tables), and
each option is checked against torch 2.13's inductor config (`_torch_options.OPTIONS`): an unknown key is
`RuntimeError("Unexpected optimization option ..., known options are [...]")`, a value of the wrong type
`RuntimeError("Unexpected type of attr ..., got ... should be ...")`, both torch's words. The result is
the dict of patches; `patched(cfg)` makes it current while a graph compiles, and `get(name)` reads it.

NOTE [ The options ember acts on ]
- `triton.cudagraphs` (set by mode="reduce-overhead" and "max-autotune"): the static plan, the CPU analogue
  of CUDA graphs (ember/_inductor/static_plan.py);
- `max_autotune`: kernel variants are timed and the fastest kept (ember/_inductor/autotune.py);
- `use_dce`, `use_joint_graph_passes`, `pattern_matcher`, `allow_buffer_reuse`: the FX passes and the
  memory plan (mode="lite" turns them off, as torch's does);
- `trace.enabled`: the generated code and the memory plan are written under `trace.debug_dir` (default
  `./torch_compile_debug`).
Every other option torch knows is accepted and does nothing here (most concern Triton, CUDA or C++
wrapper generation that ember does not have).
"""

from __future__ import annotations

import contextlib
import threading

_MODE_OPTIONS = {  # torch._inductor.list_mode_options (torch 2.13), for dynamic=False/None
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True},
    "lite": {"fallback_by_default": True, "selective_decompose": True, "reorder_for_peak_memory": False,
             "reorder_for_compute_comm_overlap": False,
             "triton.reorder_for_reducing_graph_partitions": False, "use_pre_grad_passes": False,
             "use_joint_graph_passes": False, "use_post_grad_passes": False, "use_dce": False,
             "allow_buffer_reuse": False},
}

_DEFAULTS = {"triton.cudagraphs": False, "max_autotune": False, "use_dce": True,
             "use_joint_graph_passes": True, "pattern_matcher": True, "allow_buffer_reuse": True,
             "trace.enabled": False,
             "trace.debug_dir": None}

_TYPES = {"bool": bool, "int": int, "float": float, "str": str, "tuple": tuple, "list": list,
          "dict": dict, "NoneType": type(None)}


def list_mode_options(mode: str | None = None, dynamic: bool | None = None) -> dict:
    """torch._inductor.list_mode_options: the options a mode sets (all modes' tables when mode is None)."""
    if mode is None:
        return {k: dict(v) for k, v in _MODE_OPTIONS.items()}
    return dict(_MODE_OPTIONS[mode])


def list_options() -> list:
    """torch._inductor.list_options: every option name torch 2.13's inductor knows."""
    from ._torch_options import OPTIONS

    return list(OPTIONS)


def validate(mode=None, options=None, dynamic=None) -> dict:
    """The config patches of `mode` then `options`, validated as torch.compile validates them."""
    cfg: dict = {}
    if mode and mode != "default":
        cfg.update(_check(list_mode_options(mode, dynamic)))
    if options:
        cfg.update(_check(options))
    return cfg


def _check(options) -> dict:
    from ._torch_options import OPTIONS

    out = {}
    for key, val in options.items():
        name = key.replace("-", "_")
        if name not in OPTIONS:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are {list(OPTIONS)}")
        want, default_type = OPTIONS[name]
        if want is not None and not isinstance(val, _TYPES[want]):
            raise RuntimeError(
                f"Unexpected type of attr {key}, got {type(val).__name__} should be {default_type}")
        out[name] = val
    return out


_state = threading.local()


def current() -> dict:
    return getattr(_state, "cfg", None) or {}


def get(name: str):
    """The value of option `name` for the graph being compiled (torch's default where not set)."""
    cfg = current()
    return cfg[name] if name in cfg else _DEFAULTS.get(name)


def call_with(cfg: dict, fn, args):
    """`fn(*args)` with `cfg` current: `patched` without a generator, for a compiled function's every call
    (AOT autograd compiles inside the first call, and again on a new shape)."""
    prev = getattr(_state, "cfg", None)
    _state.cfg = cfg if not prev else {**prev, **cfg}
    try:
        return fn(*args)
    finally:
        _state.cfg = prev


@contextlib.contextmanager
def patched(cfg: dict):
    prev = getattr(_state, "cfg", None)
    _state.cfg = {**(prev or {}), **(cfg or {})}
    try:
        yield
    finally:
        _state.cfg = prev


_trace_state = {"run": None, "n": 0}


def write_trace(gm, compiled) -> str | None:
    """Option `trace.enabled`: the graph's code, the generated wrapper and kernels, and the memory plan under
    `<trace.debug_dir or ./torch_compile_debug>/run_<time>-pid_<pid>/torchinductor/graph_<i>/`, the layout
    of torch's debug folder. Returns the folder written (None when the option is off)."""
    import os
    import time

    if not get("trace.enabled"):
        return None
    from . import buffer_plan

    root = get("trace.debug_dir") or os.path.join(os.getcwd(), "torch_compile_debug")
    if _trace_state["run"] is None:
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S")
        _trace_state["run"] = f"run_{stamp}-pid_{os.getpid()}"
    _trace_state["n"] += 1
    folder = os.path.join(root, _trace_state["run"], "torchinductor", f"graph_{_trace_state['n']}")
    os.makedirs(folder, exist_ok=True)
    files = {"fx_graph_readable.py": gm.code,
             "output_code.py": getattr(compiled, "wrapper_source", "") + "\n\n" +
             getattr(compiled, "kernel_source", ""),
             "memory_plan.txt": buffer_plan.last_report()}
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)
    return folder
