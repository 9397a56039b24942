"""Thread and determinism settings (torch.set_num_threads, use_deterministic_algorithms, ...).

`set_num_threads` governs both pools ember computes with: the native kernels' OpenMP loops (ember/_native)
and NumPy's bundled OpenBLAS, whose `set_num_threads` entry point is found with ctypes (NOTE [ BLAS
threads ]). The default is torch's: OMP_NUM_THREADS if set, else the number of physical cores.
Every ember kernel is deterministic, so the determinism switch only records the flag.
"""

import ctypes
import glob
import os

_state = {"threads": None, "interop": None, "deterministic": False, "warn_only": False}


def _physical_cores():
    """Physical cores this process may run on (torch's default thread count), from /proc/cpuinfo."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    try:
        with open("/proc/cpuinfo") as f:
            cores, phys = set(), "0"
            for line in f:
                if line.startswith("physical id"):
                    phys = line.split(":")[1].strip()
                elif line.startswith("core id"):
                    cores.add((phys, line.split(":")[1].strip()))
        return max(1, min(usable, len(cores) or usable))
    except OSError:
        return usable


def get_num_threads():
    if _state["threads"] is None:
        env = os.environ.get("OMP_NUM_THREADS")
        _state["threads"] = int(env) if env and env.isdigit() and int(env) > 0 else _physical_cores()
    return _state["threads"]


# NOTE [ BLAS threads ]
# NumPy 2's wheels bundle OpenBLAS as numpy.libs/libscipy_openblas64_*.so with prefixed, suffixed symbols
# (`scipy_openblas_set_num_threads64_`); older or distribution builds export `openblas_set_num_threads`.
# The library is already loaded by NumPy, so CDLL on its path returns the same handle and setting the
# count resizes the pool NumPy uses. A BLAS that is neither (MKL, Accelerate) is left as it is: ember does
# not depend on threadpoolctl for it.
_BLAS_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads_64_",
                 "openblas_set_num_threads64_", "openblas_set_num_threads")


def _blas_setter():
    if "blas" not in _state:
        _state["blas"] = None
        import numpy as np
        libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
        for path in sorted(glob.glob(os.path.join(libs, "*openblas*.so*"))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in _BLAS_SETTERS:
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.argtypes, fn.restype = [ctypes.c_int], None
                    _state["blas"] = fn
                    return fn
    return _state["blas"]


def set_num_threads(n):
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = n
    from . import _native
    _native.set_threads(n)
    setter = _blas_setter()
    if setter is not None:
        setter(n)


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
