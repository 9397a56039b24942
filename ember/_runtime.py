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
                    get = getattr(lib, name.replace("set_num", "get_num"), None)
                    if get is not None:
                        get.argtypes, get.restype = [], ctypes.c_int
                        _state["blas_get"] = get
                    return fn
    return _state["blas"]


def set_num_threads(n):
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = n
    _state["chosen"] = True  # (ember.distributed leaves a chosen count alone: NOTE [ Threads per rank ])
    from . import _native
    from ._native import blas
    _native.set_threads(n)
    setter = _blas_setter()
    if setter is not None:
        setter(n)
        blas.set_count(n)


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


# ---- torch.* settings and helpers of issue 15 (area T) ------------------------------------------------------

from . import _naming  # noqa: E402
from ._argparse import call_error  # noqa: E402

_settings = {"matmul_precision": "highest", "debug_mode": 0, "warn_always": False}


def get_float32_matmul_precision():
    return _settings["matmul_precision"]


def set_float32_matmul_precision(precision):
    """Recorded only: ember's float32 matmuls are always full precision ("highest"), as a CPU torch's are."""
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings["matmul_precision"] = precision


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    _settings["debug_mode"] = debug_mode
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if are_deterministic_algorithms_enabled():
        return 1 if is_deterministic_algorithms_warn_only_enabled() else 2
    return 0


def set_warn_always(b):
    _settings["warn_always"] = bool(b)


def is_warn_always_enabled():
    return _settings["warn_always"]


def set_flush_denormal(mode):
    """False: NumPy has no switch for the CPU's flush-to-zero mode, so ember cannot honour it (torch
    returns False too where the CPU does not support it)."""
    return False


def init_num_threads():
    return None


def is_inference(input):
    return input.is_inference()


def get_default_device():
    from . import _device

    stack = _device._default.stack
    return stack[-1] if _device._open[0] and stack else _device.device("cpu")


def set_default_device(device):
    """Tensors made without a `device=` land on `device` from now on (None: the CPU), as a `with device`
    block that stays open (NOTE [ Default device ])."""
    from . import _device

    stack = _device._default.stack
    if getattr(_device._default, "global_set", False):
        stack.pop(0)
        _device._open[0] -= 1
        _device._default.global_set = False
    if device is not None:
        d = device if isinstance(device, _device.device) else _device.device(device)
        _device.check_device(d)
        stack.insert(0, d)
        _device._open[0] += 1
        _device._default.global_set = True


def set_default_tensor_type(t):
    import warnings

    from . import _dtypes

    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                  stacklevel=2)
    name = t if isinstance(t, str) else f"{t.__module__}.{t.__name__}"
    kind = name.split(".")[-1]
    table = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
             "BFloat16Tensor": "bfloat16"}
    if kind not in table:
        raise TypeError("only floating-point types are supported as the default type")
    _dtypes.set_default_dtype(getattr(_dtypes, table[kind]))


class finfo:
    """Machine limits of a floating-point dtype (torch.finfo)."""

    def __init__(self, type=None):  # noqa: A002
        from . import _dtypes

        d = type or _dtypes.get_default_dtype()
        if not (d.is_floating_point or d.is_complex):
            p = _naming.prefix
            raise TypeError(f"{p}.finfo() requires a floating point input type. Use {p}.iinfo to handle "
                            f"'{p}.finfo'")
        real = {"complex64": _dtypes.float32, "complex128": _dtypes.float64}.get(d.name, d)
        info = __import__("ml_dtypes").finfo(_dtypes.to_numpy(real))
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = real.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):  # noqa: A002
        import numpy as np

        from . import _dtypes

        if type.is_floating_point or type.is_complex or type == _dtypes.bool:
            p = _naming.prefix
            raise TypeError(f"{p}.iinfo() requires an integer input type. Use {p}.finfo to handle '{p}.iinfo'")
        info = np.iinfo(_dtypes.to_numpy(type))
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self.dtype = type.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


finfo.__module__ = iinfo.__module__ = "ember"


def to_dlpack(tensor):
    """A DLPack capsule of the tensor's memory (NumPy's exporter)."""
    try:
        return tensor.numpy().__dlpack__()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing `buffer`'s memory (torch.frombuffer)."""
    import numpy as np

    from . import _dtypes
    from ._ops.creation import from_numpy

    arr = np.frombuffer(buffer, dtype=_dtypes.to_numpy(dtype), count=count, offset=offset)
    if not arr.flags.writeable:  # (torch warns and shares it; ember shares it read-only)
        import warnings

        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. "
                      "This means you can write to the underlying (supposedly non-writable) buffer using the "
                      "tensor. You may want to copy the buffer to protect its data or make it writable before "
                      "converting it to a tensor. This type of warning will be suppressed for the rest of this "
                      "program.", UserWarning, stacklevel=2)
    return from_numpy(arr).requires_grad_(requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """`size` elements read from `filename` (torch.from_file); shared=True maps the file."""
    import os

    import numpy as np

    from . import _dtypes
    from ._ops.creation import from_numpy

    d = _dtypes.to_numpy(dtype or _dtypes.get_default_dtype())
    have, need = os.path.getsize(filename), size * d.itemsize
    if have < need:
        raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required mapping size <{need}>")
    if shared:
        arr = np.memmap(filename, dtype=d, mode="r+", shape=(size,))
    else:
        arr = np.fromfile(filename, dtype=d, count=size)
    return from_numpy(arr).requires_grad_(requires_grad)
