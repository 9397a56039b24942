"""Thread and determinism settings (torch.set_num_threads, use_deterministic_algorithms, ...).

ember's kernels are NumPy's, and NumPy's BLAS fixes its thread count when it loads, from the
OMP/OPENBLAS_NUM_THREADS environment variables (the README says to set them). `set_num_threads` records
the request so scripts read back what they set; it cannot resize a BLAS pool that is already running.
Every ember kernel is deterministic, so the determinism switch only records the flag.
"""

import os

_state = {"threads": None, "interop": None, "deterministic": False, "warn_only": False}


def get_num_threads():
    if _state["threads"] is None:
        env = os.environ.get("OMP_NUM_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS")
        return int(env) if env and env.isdigit() else (os.cpu_count() or 1)
    return _state["threads"]


def set_num_threads(n):
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = n


def get_num_interop_threads():
    return _state["interop"] or get_num_threads()


def set_num_interop_threads(n):
    _state["interop"] = int(n)


def use_deterministic_algorithms(mode, *, warn_only=False):
    _state["deterministic"], _state["warn_only"] = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]
