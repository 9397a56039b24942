"""ember: a deep learning framework in pure Python on NumPy, with PyTorch's API.

`import ember as torch` and PyTorch code runs on ember. This file only re-exports; see
docs/architecture.md for how the pieces fit.
"""

# ---- native kernels (issue 18, conv/pool): before NumPy loads its OpenBLAS (NOTE [ Passive OpenMP threads ] in
# ember/_native/__init__.py)
import os as _os

_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
del _os
from ._native import keep_freed_memory as _keep_freed_memory  # noqa: E402 - NOTE [ Keeping freed memory ]

_keep_freed_memory()
del _keep_freed_memory
# ---- end native kernels

from .version import __version__ as __version__  # torch's API version + ember's
from . import version as version
from . import _dtypes
from ._device import device as device
from ._dtypes import bool, float, int  # noqa: A004 - torch's names for these dtypes
from ._dtypes import (bfloat16, cdouble, cfloat, complex64, complex128, double, float16, float32, float64, half,
                      int8, int16, int32, int64, long, short, uint8, uint16, uint32, uint64)
from ._dtypes import can_cast as can_cast
from ._dtypes import dtype as dtype
from ._dtypes import get_default_dtype as get_default_dtype
from ._dtypes import promote_types as promote_types
from ._dtypes import result_type as result_type
from ._dtypes import set_default_dtype as set_default_dtype
from ._size import Size as Size
from ._storage import TypedStorage as TypedStorage
from ._storage import UntypedStorage as UntypedStorage
from ._tensor import Tensor as Tensor
from ._tensor import channels_last as channels_last
from ._tensor import channels_last_3d as channels_last_3d
from ._tensor import contiguous_format as contiguous_format
from ._tensor import layout as layout
from ._tensor import strided as strided
from ._tensor import memory_format as memory_format
from ._tensor import preserve_format as preserve_format
from ._tensor_str import set_printoptions as set_printoptions
from ._tensortype import TYPES as _legacy_types
from . import autograd as autograd
from .autograd.grad_mode import enable_grad as enable_grad
from .autograd.grad_mode import inference_mode as inference_mode
from .autograd.grad_mode import is_grad_enabled as is_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled as is_inference_mode_enabled
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled as is_anomaly_check_nan_enabled
from .autograd.anomaly_mode import is_anomaly_enabled as is_anomaly_enabled
from .autograd.grad_mode import no_grad as no_grad
from .autograd.grad_mode import set_grad_enabled as set_grad_enabled
from . import return_types as return_types
from . import _ops

# Every op module registers its public functions in `_ops.public` next to its definition (one place per
# op); they are re-exported here as ember.add, ember.matmul, ...
globals().update(_ops.public)
globals().update(_legacy_types)  # FloatTensor, LongTensor, ...: torch's legacy tensor types
from . import linalg as linalg  # noqa: E402  (torch.linalg's namespace)
from ._generator import Generator as Generator  # noqa: E402  (randomness, issue 9)
from ._generator import default_generator as default_generator  # noqa: E402
from .random import get_rng_state as get_rng_state  # noqa: E402
from .random import initial_seed as initial_seed  # noqa: E402
from .random import manual_seed as manual_seed  # noqa: E402
from .random import seed as seed  # noqa: E402
from .random import set_rng_state as set_rng_state  # noqa: E402
from . import random as random  # noqa: E402

from . import backends as backends
from . import cuda as cuda
from ._runtime import are_deterministic_algorithms_enabled as are_deterministic_algorithms_enabled
from ._runtime import get_num_interop_threads as get_num_interop_threads
from ._runtime import get_num_threads as get_num_threads
from ._runtime import is_deterministic_algorithms_warn_only_enabled as is_deterministic_algorithms_warn_only_enabled
from ._runtime import set_num_interop_threads as set_num_interop_threads
from ._runtime import set_num_threads as set_num_threads
from ._runtime import use_deterministic_algorithms as use_deterministic_algorithms
# -- issue 15's torch.* settings and helpers (area T) --
from ._runtime import finfo as finfo  # noqa: E402
from ._runtime import iinfo as iinfo  # noqa: E402
from ._runtime import from_file as from_file  # noqa: E402
from ._runtime import frombuffer as frombuffer  # noqa: E402
from ._runtime import get_default_device as get_default_device  # noqa: E402
from ._runtime import set_default_device as set_default_device  # noqa: E402
from ._runtime import get_deterministic_debug_mode as get_deterministic_debug_mode  # noqa: E402
from ._runtime import set_deterministic_debug_mode as set_deterministic_debug_mode  # noqa: E402
from ._runtime import get_float32_matmul_precision as get_float32_matmul_precision  # noqa: E402
from ._runtime import set_float32_matmul_precision as set_float32_matmul_precision  # noqa: E402
from ._runtime import init_num_threads as init_num_threads  # noqa: E402
from ._runtime import is_inference as is_inference  # noqa: E402
from ._runtime import is_warn_always_enabled as is_warn_always_enabled  # noqa: E402
from ._runtime import set_warn_always as set_warn_always  # noqa: E402
from ._runtime import set_default_tensor_type as set_default_tensor_type  # noqa: E402
from ._runtime import set_flush_denormal as set_flush_denormal  # noqa: E402
from ._runtime import to_dlpack as to_dlpack  # noqa: E402
from ._storage import legacy_storages as _legacy_storages  # noqa: E402

globals().update(_legacy_storages)  # FloatStorage, ...: torch's legacy storage classes
# -- end area T --



def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def numel(input):
    try:
        return input.numel()
    except AttributeError as e:  # NOTE [ Argument types on the error path ]
        from ._argparse import call_error
        raise call_error(e) from None


def is_storage(obj):
    return isinstance(obj, (UntypedStorage, TypedStorage))


def get_device_module(device=None):
    """The module of a device type (`ember.cpu` for "cpu"); with no device, the current accelerator's, which on
    ember (CPU-only) is none, so `ember.cpu`."""
    import importlib

    kind = "cpu" if device is None else (device if isinstance(device, str) else str(device)).split(":")[0]
    kind = globals()["device"](kind).type  # (torch's error for an unknown device string)
    try:
        return importlib.import_module(f"{__name__}.{kind}")
    except ModuleNotFoundError:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as "
                           f"'torch.{kind}'.") from None


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + "." + type(obj).__qualname__


# NOTE [ Lazy submodules ]
# `import ember` must stay fast (under 0.2 s; torch takes over a second). The big subpackages load on
# first use instead: `ember.nn`, `from ember import optim`, `ember.save` all work as usual, the first
# access paying the import.
_LAZY_MODULES = {"nn", "optim", "utils", "serialization", "testing", "distributed", "amp", "compiler", "fx",
                 "onnx", "profiler", "special", "linalg", "fft", "multiprocessing", "_C"}
_LAZY_ATTRS = {"save": "serialization", "load": "serialization",
                # linalg (L): torch's Python algorithms, ported (torch._lobpcg, torch._lowrank)
                "lobpcg": "_lobpcg", "svd_lowrank": "_lowrank", "pca_lowrank": "_lowrank"}
# (area N: torch.* names of nn.functional's functions, same signatures; nn loads on first use)
_LAZY_ATTRS.update(dict.fromkeys((
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
    "avg_pool1d", "adaptive_avg_pool1d", "bilinear", "prelu", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "native_channel_shuffle", "pairwise_distance", "pdist", "cosine_similarity", "relu_",
    "selu_", "celu_", "rrelu_", "threshold_"), "nn.functional"))
# distributions (D1): ember.distributions loads on first use too
_LAZY_MODULES.add("distributions")
# area M (issue 15's namespaces): the device-agnostic modules, hub and types; torch.GradScaler
_LAZY_MODULES |= {"accelerator", "cpu", "hub", "types"}
# area P (distributed): torch.futures, the Future that Work.get_future() returns
_LAZY_MODULES.add("futures")
_LAZY_ATTRS.update({"GradScaler": "amp", "thread_safe_generator": "random"})  # (torch.GradScaler is torch.amp's)
_LAZY_MODULES |= {"signal"}  # special functions and spectral ops (S): torch.signal.windows
# torch.func and vmap (V): ember.func loads on first use; torch.vmap is torch.func.vmap
_LAZY_MODULES.add("func")
_LAZY_ATTRS["vmap"] = "func"
# area A (autocast, issue 21): torch.autocast and the autocast state functions, loaded on first use
_LAZY_ATTRS.update(dict.fromkeys((
    "autocast", "get_autocast_dtype", "set_autocast_dtype", "is_autocast_enabled", "set_autocast_enabled",
    "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
    "autocast_increment_nesting", "autocast_decrement_nesting", "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "get_autocast_xla_dtype", "get_autocast_ipu_dtype", "is_autocast_cpu_enabled",
    "is_autocast_xla_enabled", "is_autocast_ipu_enabled", "set_autocast_cpu_enabled", "set_autocast_cpu_dtype",
    "set_autocast_gpu_dtype", "set_autocast_xla_enabled", "set_autocast_xla_dtype", "set_autocast_ipu_enabled",
    "set_autocast_ipu_dtype"), "amp.autocast_mode"))
# compiler capture (Y): torch.compile, torch._dynamo, torch._logging (torch.compiler is in the set above)
_LAZY_MODULES |= {"_dynamo", "_logging"}
_LAZY_ATTRS["compile"] = "_compile"
_LAZY_MODULES |= {"ops"}  # compiler (X): ember.ops.aten, the OpOverload identities of graph nodes
_LAZY_ATTRS["_assert"] = "fx._symbolic_trace"  # (X) torch._assert, which traced graphs call
_LAZY_MODULES |= {"jit"}  # torch.jit (J): trace, script, save/load, freeze


def __getattr__(name):
    import importlib
    import importlib.util

    if name in _LAZY_MODULES:
        try:
            return importlib.import_module("." + name, __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    elif name in _LAZY_ATTRS:
        return getattr(importlib.import_module("." + _LAZY_ATTRS[name], __name__), name)
    if name.startswith("__"):
        raise AttributeError(name)
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        # any other submodule ember has (torch.overrides, torch._subclasses, ...): `import torch` loads torch's
        # submodules, so a script reaches them as attributes without importing them first
        return importlib.import_module("." + name, __name__)
    # NOTE [ The torch alias ]: a script run under `ember run` sees this for torch features ember lacks
    raise AttributeError(f"ember does not implement torch.{name} yet")
