"""Autocast: torch's automatic mixed precision, as a dispatcher mode above autograd.

`ember.autocast("cpu", dtype=ember.bfloat16)` (also `ember.amp.autocast`, `ember.cpu.amp.autocast`) turns
on, for this thread, a mode (`AutocastMode`, ember/_modes.py) that sees every op before autograd records
it and casts the op's floating-point inputs per torch's CPU policy (`CPU_POLICY`, a table keyed by op):

- "lower_precision_fp" (matmuls, convolutions, linear, attention): inputs to the autocast dtype;
- "fp32" (losses, norms of precision-hungry ops, linalg factorizations, FFTs): inputs to float32;
- "promote" (cat, stack, index_copy): inputs to the widest floating type among them.

Ops not in the table run on their inputs as they are. The casts are ordinary `to` ops below the mode, so
autograd records them (ToCopyBackward0) and gradients flow back to the float32 leaves.

NOTE [ Autocast is thread state ]
As torch's, the state is per thread: enabled per device, the dtype per device (CPU: bfloat16, CUDA:
float16), whether the weight cache is on, and the nesting depth of autocast regions. The mode is on this
thread's stack exactly while CPU autocast is enabled on this thread (`set_autocast_enabled("cpu", True)`
pushes it, False takes it off), so with autocast off the dispatcher's hot path sees an empty stack and
costs nothing more. CUDA autocast can be enabled as state (torch allows it) but casts nothing: ember has no
CUDA tensors, and torch's CUDA autocast leaves CPU tensors alone.

NOTE [ The weight cache ]
torch casts a float32 leaf that requires grad (a weight) to the lower precision once per autocast region
and reuses the cast for every later op in the region (the key is the tensor itself, held alive by the
cache); `clear_autocast_cache()` runs when the outermost region exits. Views, non-leaves and tensors not
requiring grad are cast anew each time. `cache_enabled=False` turns the cache off.

NOTE [ Composites under autocast ]
torch applies its policy where the op is listed: `linear`, `matmul`, `conv2d`, `cross_entropy_loss`,
`mse_loss` are listed by name, and their insides run with autocast excluded. ember writes several of
these as Python functions over smaller ops, some checking their inputs' dtypes first (`mm` refuses a
bfloat16 input beside a float32 weight before dispatching). Those functions start with
`if _modes and autocasting(): return autocast_call(name, fn, ...)` (one truth test when no mode is
active, as the dispatcher's own): the arguments are cast per the table entry of the torch op they are, and
the body runs with autocast excluded, as torch runs a listed op's kernel (an fp32 `orgqr` computes its
inner products in float32, a `linear` does not cast twice).
"""

from __future__ import annotations

import collections.abc
import functools
import threading
import warnings

import numpy as np

from .. import _dtypes
from .._dispatch import _local, _modes, redispatch, redispatch_inplace
from .._modes import Mode
from .._naming import named
from .._tensor import Tensor

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available", "get_autocast_dtype",
           "set_autocast_dtype", "is_autocast_enabled", "set_autocast_enabled", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "autocasting", "autocast_call", "CPU_POLICY"]

LOWER, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# ---- the policy table -----------------------------------------------------------------------------------

# torch's AutocastCPU registrations (aten/src/ATen/autocast_mode.cpp), by torch's op name. CPU has no
# fp32_set_opt_dtype or banned entries.
CPU_POLICY: dict[str, str] = {}
CPU_POLICY.update(dict.fromkeys((
    "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding", "bmm", "mm",
    "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm", "linear", "_convolution.deprecated",
    "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d.input",
    "conv_transpose3d.input", "prelu", "scaled_dot_product_attention", "_native_multi_head_attention"), LOWER))
CPU_POLICY.update(dict.fromkeys((
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "prod.dim_int", "prod.dim_Dimname",
    "quantile", "quantile.scalar", "nanquantile", "nanquantile.scalar", "stft", "stft.center", "cdist",
    "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace", "view_as_complex",
    "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse",
    "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d", "mse_loss",
    "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss",
    "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "ctc_loss.IntList", "ctc_loss.Tensor", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2",
    "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn",
    "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_cond.p_str", "linalg_matrix_rank",
    "linalg_matrix_rank.tol_tensor", "linalg_matrix_rank.atol_rtol_tensor",
    "linalg_matrix_rank.atol_rtol_float", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product", "linalg_tensorinv",
    "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf", "_lu_with_info", "qr", "svd",
    "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d",
    "multilabel_margin_loss_forward", "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig",
    "linalg_eigh", "linalg_lstsq", "linalg_inv_ex"), FP32))
CPU_POLICY.update(dict.fromkeys(("stack", "cat", "index_copy", "index_copy.dimname"), PROMOTE))

# torch ops that are one kernel autocast does not list, which ember writes as Python functions over ops
# autocast would cast (an einsum, matmuls): they run with autocast excluded and their inputs as they are
KERNELS = frozenset(("embedding_bag", "bilinear"))

# ember's registered ops that are a listed torch op under another name (the registry's `qualname`).
EMBER_NAMES = {
    "convolution": "_convolution.deprecated",  # conv1d/2d/3d's one primitive
    "convolution_transpose": "conv_transpose2d.input",  # conv_transpose1d/2d/3d's one primitive
    "prod.all": "prod",
    "_adaptive_avg_pool3d": "adaptive_avg_pool3d",
    "_ctc_loss": "ctc_loss.IntList",
    "_fft_c2c": "fft_fft", "_fft_r2c": "fft_rfft", "_fft_c2r": "fft_irfft",  # every torch.fft function's
}


def _einsum_policy(inputs, params):
    """torch's einsum is not listed, but contracts each pair of operands over a shared summed index with
    `bmm` (listed): such an einsum answers in the lower precision, a permutation, sum or elementwise
    product in its inputs' dtype. ember's einsum is one op, whose params end with (subscripts per
    operand, output subscripts)."""
    ins, out = params[-2], params[-1]
    if len(ins) > 1:
        for letter in set("".join(ins)) - set(out):
            if sum(letter in sub for sub in ins) > 1:
                return LOWER
    return None


def _rnn_policy(inputs, params):
    """An RNN layer is one op in ember (`rnn_layer`); under autocast only an LSTM layer without projections
    reaches it, torch's `mkldnn_rnn_layer` (NOTE [ Recurrent layers under autocast ], ember/_ops/rnn.py).
    params[0] is the cell kind, inputs[7] the projection weight."""
    if params[0] == "LSTM" and inputs[7] is None:
        from .._ops.rnn import check_onednn_lstm

        check_onednn_lstm(_state.dtype["cpu"])
        return LOWER
    return None


# NOTE [ Listed insides of one kernel ]
# torch's linalg.pinv is not listed but is a composite: its SVD runs in float32 (listed fp32) and its final
# product in the lower precision (matmul, listed). ember's pinv is one kernel; "fp32_lower" runs it on
# float32 inputs and rounds its result to the lower precision, which is torch's answer within that
# precision's rounding.
FP32_LOWER = "fp32_lower"

# policies that depend on the call (ember op qualname -> rule(inputs, params) -> policy or None)
CALL_POLICY = {"einsum": _einsum_policy, "rnn_layer": _rnn_policy}
EMBER_POLICY = {"linalg_pinv": FP32_LOWER}  # ember's own ops whose torch counterpart is a composite

_TABLE: dict[str, str] = {}  # registered op qualname -> policy (filled on first use: ops register lazily)


def _policy_of(op):
    qualname = op.qualname
    try:
        return _TABLE[qualname]
    except KeyError:
        policy = CALL_POLICY.get(qualname) or EMBER_POLICY.get(qualname) or CPU_POLICY.get(
            EMBER_NAMES.get(qualname, qualname))
        _TABLE[qualname] = policy
        return policy


# ---- thread state ------------------------------------------------------------------------------------

_DEVICES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
            "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_AVAILABLE = frozenset(("cpu", "cuda", "xpu", "ipu", "xla", "hpu", "mps", "mtia", "maia", "privateuseone"))


class _State(threading.local):
    def __init__(self):
        self.enabled = {}  # device -> bool (absent: False)
        self.dtype = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16, "hip": _dtypes.float16,
                      "xla": _dtypes.bfloat16, "xpu": _dtypes.float16, "mps": _dtypes.float16,
                      "hpu": _dtypes.bfloat16, "ipu": _dtypes.float16, "privateuseone": _dtypes.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(weight) -> (weight, its cast)
        self.mode = None  # this thread's AutocastMode (NOTE [ One autocast mode per thread ])


_state = _State()


def _device(device_type, fn):
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    name = device_type.split(":")[0]
    if name not in _DEVICES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICES)} device type at start of device string: "
                           f"{device_type}")
    return name


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on `device_type` ("cpu", "cuda", ...), as torch answers it."""
    return _device(device_type, "_is_autocast_available") in _AVAILABLE


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is enabled for `device_type` on this thread (no argument: CUDA, as torch)."""
    name = "cuda" if device_type is None else _device(device_type, "is_autocast_enabled")
    return _state.enabled.get(name, False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Enable or disable autocast for `device_type` on this thread (one argument: CUDA's, as torch)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    name = _device(device_type, "set_autocast_enabled")
    enabled = bool(enabled)
    _state.enabled[name] = enabled
    if name == "cpu":
        if _state.mode is None:
            _state.mode = AutocastMode()
        mode = _state.mode
        if enabled:
            if not _on_stack(mode):
                _local.above.append(mode)
                _modes.append(mode)
        else:
            _remove_mode(mode)


# NOTE [ One autocast mode per thread ]
# Each thread has one AutocastMode object, on its stack while CPU autocast is enabled. Enabling pushes it
# unless it is there, disabling takes it off wherever it sits (other modes may have come later). The same
# object is used every time because the stack a body of a higher-order op runs on is a copy (NOTE
# [ Higher-order ops ]): a `custom_fwd` forward that turns autocast off and on again inside
# `Function.apply` takes the mode off the copy and puts it back there, and the stack restored after the
# body still holds the same object, once, as `_modes` does.


def _on_stack(mode):
    for m in _local.above:
        if m is mode:
            return True
    return False


def _remove_mode(mode):
    """Take this thread's autocast mode off its stack wherever it sits, and its entry in `_modes`."""
    above = _local.above
    for i in range(len(above) - 1, -1, -1):
        if above[i] is mode:
            del above[i]
            for j in range(len(_modes) - 1, -1, -1):
                if _modes[j] is mode:
                    del _modes[j]
                    break
            return


def get_autocast_dtype(device_type: str):
    """The dtype autocast uses on `device_type` on this thread (CPU: bfloat16 unless set)."""
    name = _device(device_type, "get_autocast_dtype")
    d = _state.dtype.get(name)
    if d is None:
        raise RuntimeError("unsupported scalarType")
    return d


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the dtype autocast uses on `device_type` on this thread."""
    name = _device(device_type, "set_autocast_dtype")
    if not isinstance(dtype, _dtypes.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    _state.dtype[name] = dtype


def is_autocast_cache_enabled() -> bool:
    """Whether autocast's weight cache is on for this thread (NOTE [ The weight cache ])."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop this thread's cached weight casts (NOTE [ The weight cache ])."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    """One more autocast region entered on this thread; the new depth."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """One autocast region left on this thread; the new depth (0: outside every region)."""
    _state.nesting -= 1
    return _state.nesting


def _deprecated_getter(old, new, fn):
    arg = new[new.index(",") + 2:-1] if "," in new else ""  # a setter shows its argument: (enabled), (dtype)

    def getter(*args):
        warnings.warn(named(f"ember.{old}({arg}) is deprecated. Please use ember.{new} instead."),
                      DeprecationWarning, stacklevel=2)
        return fn(*args)
    getter.__name__ = old
    return getter


#: torch's older per-device names (each warns as torch's does, then answers as the new form)
DEPRECATED = {
    "get_autocast_cpu_dtype": _deprecated_getter("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')",
                                                 lambda: get_autocast_dtype("cpu")),
    "get_autocast_gpu_dtype": _deprecated_getter("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')",
                                                 lambda: get_autocast_dtype("cuda")),
    "get_autocast_xla_dtype": _deprecated_getter("get_autocast_xla_dtype", "get_autocast_dtype('xla')",
                                                 lambda: get_autocast_dtype("xla")),
    "get_autocast_ipu_dtype": _deprecated_getter("get_autocast_ipu_dtype", "get_autocast_dtype('ipu')",
                                                 lambda: get_autocast_dtype("ipu")),
    "is_autocast_cpu_enabled": _deprecated_getter("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')",
                                                  lambda: is_autocast_enabled("cpu")),
    "is_autocast_xla_enabled": _deprecated_getter("is_autocast_xla_enabled", "is_autocast_enabled('xla')",
                                                  lambda: is_autocast_enabled("xla")),
    "is_autocast_ipu_enabled": _deprecated_getter("is_autocast_ipu_enabled", "is_autocast_enabled('ipu')",
                                                  lambda: is_autocast_enabled("ipu")),
    "set_autocast_cpu_enabled": _deprecated_getter(
        "set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)",
        lambda enabled: set_autocast_enabled("cpu", enabled)),
    "set_autocast_cpu_dtype": _deprecated_getter(
        "set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)",
        lambda dtype: set_autocast_dtype("cpu", dtype)),
    "set_autocast_gpu_dtype": _deprecated_getter(
        "set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)",
        lambda dtype: set_autocast_dtype("cuda", dtype)),
    "set_autocast_xla_enabled": _deprecated_getter(
        "set_autocast_xla_enabled", "set_autocast_enabled('xla', enabled)",
        lambda enabled: set_autocast_enabled("xla", enabled)),
    "set_autocast_xla_dtype": _deprecated_getter(
        "set_autocast_xla_dtype", "set_autocast_dtype('xla', dtype)",
        lambda dtype: set_autocast_dtype("xla", dtype)),
    "set_autocast_ipu_enabled": _deprecated_getter(
        "set_autocast_ipu_enabled", "set_autocast_enabled('ipu', enabled)",
        lambda enabled: set_autocast_enabled("ipu", enabled)),
    "set_autocast_ipu_dtype": _deprecated_getter(
        "set_autocast_ipu_dtype", "set_autocast_dtype('ipu', dtype)",
        lambda dtype: set_autocast_dtype("ipu", dtype)),
}
globals().update(DEPRECATED)


# ---- casting -------------------------------------------------------------------------------------------

_CASTABLE = frozenset((_dtypes.float16, _dtypes.bfloat16, _dtypes.float32))


def _eligible(t):
    """torch's is_eligible on the CPU: a floating CPU tensor that is not float64 (meta tensors are not)."""
    return isinstance(t, Tensor) and t.dtype in _CASTABLE and not t.is_meta


def _cached_cast(t, to):
    """torch's cached_cast: `t` as dtype `to` if eligible, through the weight cache where it applies."""
    if not _eligible(t) or t.dtype is to:
        return t
    st = _state
    if (to is st.dtype["cpu"] and st.cache_enabled and t.dtype is _dtypes.float32 and t._requires_grad
            and t._grad_fn is None and t._base is None):
        hit = st.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        cast = t.to(to)
        st.cache[id(t)] = (t, cast)
        return cast
    return t.to(to)


def _promote_type(lower, tensors):
    """torch's autocast `promote_type`: float32 wins over the lower precision; float64 inputs are ignored."""
    current = lower
    for t in tensors:
        if _eligible(t):
            d = t.dtype
            if current is _dtypes.float32 or d is _dtypes.float32:
                current = _dtypes.float32
            elif current is not lower or d is not lower:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _cast_all(policy, args):
    lower = _state.dtype["cpu"]
    if policy == LOWER:
        to = lower
    elif policy == FP32:
        to = _dtypes.float32
    else:
        flat = [t for a in args for t in (a if isinstance(a, (list, tuple)) else (a,))]
        to = _promote_type(lower, flat)
    return tuple(type(a)(_cached_cast(t, to) for t in a) if isinstance(a, (list, tuple))
                 else _cached_cast(a, to) for a in args)


class AutocastMode(Mode):
    """The CPU autocast interpreter: casts each op's inputs per `CPU_POLICY` (see the module docstring)."""

    level = "above"

    def dispatch(self, op, inputs, params):
        policy = _policy_of(op)
        if policy is not None:
            if type(policy) is not str:
                policy = policy(inputs, params)
                if policy is None:
                    return redispatch(op, inputs, params)
            if policy == FP32_LOWER:
                out = redispatch(op, _cast_all(FP32, inputs), params)
                return _cached_cast(out, _state.dtype["cpu"])
            inputs = _cast_all(policy, inputs)
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        return redispatch_inplace(op, self_, inputs, params)  # torch's autocast lists out-of-place ops only


def autocasting() -> bool:
    """Whether this thread's CPU autocast mode is on its stack now (not while its own handler runs)."""
    mode = _state.mode
    return mode is not None and _on_stack(mode)


def autocast_call(name, fn, *args, **kwargs):
    """`fn(*args, **kwargs)` for ember's Python function of torch op `name` under autocast: its tensor
    arguments cast per the table, then run with autocast excluded, as torch runs an op's kernel (NOTE
    [ Composites under autocast ]). Callers test `if _modes and autocasting():` first."""
    mode = _state.mode
    if name not in KERNELS:
        args = _cast_all(CPU_POLICY[name], args)
    above = _local.above
    i = next(k for k, m in enumerate(above) if m is mode)
    _remove_mode(mode)
    try:
        return fn(*args, **kwargs)
    finally:
        if _state.enabled.get("cpu") and not _on_stack(mode):  # (unless the body turned autocast off)
            above.insert(min(i, len(above)), mode)
            _modes.append(mode)


# ---- the context manager -------------------------------------------------------------------------------


class autocast:
    r"""Run a region (or, as a decorator, a function) in mixed precision.

    Args:
        device_type (str): "cpu" (or "cuda", which ember, having no CUDA, disables with torch's warning).
        dtype (ember.dtype, optional): the lower precision; ``ember.bfloat16`` or ``ember.float16`` on the
            CPU. Default: ``ember.get_autocast_dtype(device_type)``.
        enabled (bool): whether autocasting is on in the region. Default: True.
        cache_enabled (bool, optional): whether weight casts are cached in the region (NOTE [ The weight
            cache ]). Default: ``ember.is_autocast_cache_enabled()``.

    Example::

        >>> with ember.autocast("cpu", dtype=ember.bfloat16):
        ...     y = model(x)          # matmuls in bfloat16, losses in float32
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{self.device}'")
        supported = (_dtypes.bfloat16, _dtypes.float16)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        name = self.device.upper()
        if enabled:
            if self.device == "cuda":
                warnings.warn(named("CUDA is not available or torch_xla is imported. Disabling autocast."),
                              stacklevel=2)
                enabled = False
            elif self.fast_dtype not in supported:
                warnings.warn(named(
                    f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                    f"{name} Autocast only supports dtypes of " + ", ".join(map(str, supported))
                    + " currently."), stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:  # leaving the outermost region: its weight casts go
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                f"Did you mean to use autocast as a context manager? For example:\n"
                f"    with {named('ember')}.autocast(device_type=...):\n"
                f"        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


# ---- custom autograd functions ---------------------------------------------------------------------------


def _cast(value, device_type, dtype):
    """torch.amp's `_cast`: floating tensors (not float64) to `dtype`, through containers."""
    if isinstance(value, Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype is not _dtypes.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for a custom autograd Function's ``forward``: with `cast_inputs`, inside an autocast region
    the floating inputs are cast to it and ``forward`` runs with autocast off; without it, ``forward`` runs
    in the current autocast state (which ``custom_bwd`` then gives ``backward``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for a custom autograd Function's ``backward``: it runs in the autocast state its
    ``forward`` ran in (see ``custom_fwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
