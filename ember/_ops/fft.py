"""Discrete Fourier transforms: torch's three FFT primitives and the `ember.fft` functions built on them.

The primitives are torch's: `_fft_c2c` (complex to complex, either direction), `_fft_r2c` (real to complex,
forward, one-sided or full) and `_fft_c2r` (complex Hermitian half to real, backward), each over a list of
dims with a normalization code (0: none, 1: 1/sqrt(n), 2: 1/n). Their backward nodes are torch's
(`FftC2CBackward0`, `FftR2CBackward0`, `FftC2RBackward0`); the public functions (fft, ifft, rfft, irfft,
hfft, ihfft, their 2-d and n-d forms) are torch's compositions of them (aten/src/ATen/native/SpectralOps.cpp),
so gradients and their nodes come out as torch's.

NOTE [ FFT precision and layout ]
NumPy's pocketfft (NumPy >= 2) transforms float32 / complex64 in single precision, as torch's CPU kernels
do, so complex64 results equal torch's to float32 rounding with no detour through complex128. The scaling
is pocketfft's own `norm=` (applied inside the transform, in the input's precision). torch lays an FFT's
output out as its kernel computed it: the batch (untransformed) dims first, ordered by the input's strides
(largest first), then the transformed dims, themselves sorted by input stride except a one-sided
transform's last one; all dense. `_torch_layout` copies NumPy's result into that layout, so `stride()`
matches torch's. (Meta tensors follow torch's meta kernels instead: NOTE [ FFT layout on meta tensors ].)
"""

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import COMPLEX, OTHER, _modes, defop, dispatch
from .._meta import like_strides, meta_array, real_dtype
from ._util import finish_out, typed, wrap_dim

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _np_norm(mode, forward):
    """NumPy's `norm=` giving normalization `mode` for a NumPy transform in direction `forward`."""
    if mode == _BY_ROOT_N:
        return "ortho"
    if forward:
        return "backward" if mode == _NONE else "forward"
    return "forward" if mode == _NONE else "backward"


def _elem_strides(a):
    return tuple(s // a.itemsize for s in a.strides) if a.itemsize else (0,) * a.ndim


def _order(strides, ndim, dims):
    """The dims in torch's output layout order: batch dims by stride (largest first), then `dims`."""
    batch = sorted((d for d in range(ndim) if d not in dims), key=lambda d: -strides[d])
    return batch + list(dims)


def _sort_dims(strides, dims, exclude_last=False):
    """torch's `_sort_dims`: transform dims by input stride, largest first (a one-sided last dim stays)."""
    head, tail = (dims[:-1], dims[-1:]) if exclude_last else (dims, [])
    return sorted(head, key=lambda d: -strides[d]) + list(tail)


def _torch_layout(result, strides, dims):
    """`result` copied into the dense layout torch's kernel gives it (NOTE [ FFT precision and layout ])."""
    order = _order(strides, result.ndim, dims)
    out = np.empty([result.shape[d] for d in order], result.dtype).transpose(np.argsort(order))
    out[...] = result
    return out


def _fft_dtype_error(name):
    return lambda d, *args: RuntimeError(f"{name} expects a {'complex' if name != '_fft_r2c' else 'real'} "
                                         f"input tensor, but got {_dtypes._WORD[d.name]}")


# NOTE [ Empty FFT batches ]
# torch's CPU build hands FFTs to oneMKL, which refuses an empty batch (the signal sizes are checked >= 1
# before): the transform of a (0, n) tensor raises MKL's configuration error rather than returning an
# empty result. ember raises the same.
def _check_batch(a):
    if a.size == 0:
        raise RuntimeError("MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration parameters")


# ---- the primitives ----------------------------------------------------------------------------------------


@defop("_fft_c2c", "FftC2CBackward0", OTHER, saves="none", dtypes=COMPLEX, error=_fft_dtype_error("_fft_c2c"),
       tags=("not_holomorphic",))
def _fft_c2c(a, dim, normalization, forward):
    if not dim:
        return a.copy()
    _check_batch(a)
    st = _elem_strides(a)
    with np.errstate(all="ignore"):  # (inf and NaN inputs: torch's transform is silent)
        r = (np.fft.fftn if forward else np.fft.ifftn)(a, axes=dim, norm=_np_norm(normalization, forward))
    return _torch_layout(r.astype(a.dtype, copy=False), st, _sort_dims(st, dim))


@_fft_c2c.derivative_
def _(g, a, dim, normalization, forward):
    return dispatch(_fft_c2c, (g,), (dim, normalization, not forward))


def _complex_of(np_dtype):
    return np.dtype(np.complex64 if np_dtype == np.float32 else np.complex128)


@defop("_fft_r2c", "FftR2CBackward0", OTHER, saves="meta", dtypes=frozenset({"float32", "float64"}),
       error=_fft_dtype_error("_fft_r2c"), tags=("not_holomorphic",))
def _fft_r2c(a, dim, normalization, onesided):
    _check_batch(a)
    st = _elem_strides(a)
    norm = _np_norm(normalization, True)
    with np.errstate(all="ignore"):
        r = (np.fft.rfftn if onesided else np.fft.fftn)(a, axes=dim, norm=norm)
    return _torch_layout(r.astype(_complex_of(a.dtype), copy=False), st, _sort_dims(st, dim, True))


@_fft_r2c.derivative_
def _(g, a, dim, normalization, onesided):
    if onesided:  # torch's fft_r2c_backward: zero-fill the missing half, then the inverse c2c
        last = dim[-1]
        missing = a.shape[last] - g.shape[last]
        if missing > 0:
            shape = list(g.shape)
            shape[last] = missing
            g = _cat((g, g.new_zeros(shape)), last)
    return dispatch(_fft_c2c, (g,), (dim, normalization, False)).real


def _cat(ts, dim):
    from .shape import cat

    return cat(ts, dim)


def _real_of(np_dtype):
    return np.dtype(np.float32 if np_dtype == np.complex64 else np.float64)


@defop("_fft_c2r", "FftC2RBackward0", OTHER, saves="none", dtypes=COMPLEX, error=_fft_dtype_error("_fft_c2r"),
       tags=("not_holomorphic",))
def _fft_c2r(a, dim, normalization, last_dim_size):
    # torch: a multi-dim c2r is an inverse c2c over the leading dims, then a one-dim c2r
    _check_batch(a)
    if len(dim) > 1:
        a = _fft_c2c.kernel(a, dim[:-1], normalization, False)
    last = dim[-1]
    st = _elem_strides(a)
    with np.errstate(all="ignore"):
        r = np.fft.irfft(a, n=last_dim_size, axis=last, norm=_np_norm(normalization, False))
    return _torch_layout(r.astype(_real_of(a.dtype), copy=False), st, [last])


@_fft_c2r.derivative_
def _(g, a, dim, normalization, last_dim_size):
    gi = dispatch(_fft_r2c, (g,), (dim, normalization, True))
    last = dim[-1]
    double = g.shape[last] - gi.shape[last]
    if double > 0:  # torch's fft_c2r_backward doubles the bins that stand for two
        w = np.ones(gi.shape[last], real_dtype(gi._data.dtype))
        w[1:1 + double] = 2
        shape = [1] * gi.dim()
        shape[last] = -1
        gi = gi * _constant(w.reshape(shape), gi)
    return gi


def _constant(arr, like):
    from .creation import constant_like

    return constant_like(arr, like)


# ---- argument handling (SpectralOps.cpp) -------------------------------------------------------------------


def _norm_mode(norm, forward):
    """torch's norm_from_string: the normalization code of `norm` for a transform in direction `forward`."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex=False):
    """torch's promote_tensor_fft: integers to the default float dtype; float32/float64 (and complex) only."""
    try:
        d = x.dtype
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if d.is_complex:
        return x
    if not d.is_floating_point:
        d = _dtypes.get_default_dtype()
    if d.name not in ("float32", "float64"):
        raise RuntimeError(f"Unsupported dtype {_dtypes._WORD[d.name]}")
    if require_complex:
        d = _dtypes.complex64 if d.name == "float32" else _dtypes.complex128
    return x if d is x.dtype else x.to(d)


def _wrap(dim, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _resize(x, dims, sizes):
    """torch's resize_fft_input: slice or zero-pad each of `dims` to `sizes`."""
    pads = []
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = x.narrow(d, 0, n)
        elif have < n:
            pads.append((d, n - have))
    for d, extra in pads:
        shape = list(x.shape)
        shape[d] = extra
        x = _cat((x, x.new_zeros(shape)), d)
    return x


def _c2c(x, dims, norm, forward):
    return dispatch(_fft_c2c, (x,), (list(dims), norm, forward))


def _r2c(x, dims, norm, onesided):
    return dispatch(_fft_r2c, (x,), (list(dims), norm, onesided))


def _c2r(x, dims, norm, last_dim_size):
    return dispatch(_fft_c2r, (x,), (list(dims), norm, last_dim_size))


def _one_dim(name, x, n, dim):
    dim = _wrap(dim, x.dim())
    size = x.shape[dim] if n is None else n
    try:
        if size < 1:
            raise RuntimeError(f"Invalid number of data points ({size}) specified")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dim, size


def _fft_r2c_1d(name, x, n, dim, norm, forward, onesided):
    try:
        if x.is_complex():
            raise RuntimeError(f"{name} expects a real input tensor, but got {_dtypes._WORD[x.dtype.name]}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    x = _promote(x)
    dim, size = _one_dim(name, x, n, dim)
    if n is not None:
        x = _resize(x, [dim], [n])
    r = _r2c(x, [dim], _norm_mode(norm, forward), onesided)
    return r if forward else r.conj()


def _fft_c2c_1d(name, x, n, dim, norm, forward):
    dim, size = _one_dim(name, x, n, dim)
    if n is not None:
        x = _resize(x, [dim], [n])
    return _c2c(x, [dim], _norm_mode(norm, forward), forward)


def _fft_c2r_1d(name, x, n, dim, norm, forward):
    x = _promote(x, True)
    dim = _wrap(dim, x.dim())
    size = 2 * (x.shape[dim] - 1) if n is None else n
    try:
        if size < 1:
            raise RuntimeError(f"Invalid number of data points ({size}) specified")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if n is not None:
        x = _resize(x, [dim], [size // 2 + 1])
    if forward:
        x = x.conj()
    return _c2r(x, [dim], _norm_mode(norm, forward), size)


# ---- one-dimensional transforms --------------------------------------------------------------------------


@typed
def fft(input, n: "int | None" = None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of `input` (complex result)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_fft", fft, input, n, dim, norm, out=out)
    try:
        if input.is_complex():
            return finish_out(_fft_c2c_1d("fft", input, n, dim, norm, True), out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(_fft_r2c_1d("fft", input, n, dim, norm, True, False), out)


@typed
def ifft(input, n: "int | None" = None, dim=-1, norm=None, *, out=None):
    """The one-dimensional inverse discrete Fourier transform of `input`."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_ifft", ifft, input, n, dim, norm, out=out)
    try:
        if input.is_complex():
            return finish_out(_fft_c2c_1d("ifft", input, n, dim, norm, False), out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(_fft_r2c_1d("ifft", input, n, dim, norm, False, False), out)


@typed
def rfft(input, n: "int | None" = None, dim=-1, norm=None, *, out=None):
    """The one-dimensional Fourier transform of real `input`: the n // 2 + 1 non-negative frequencies."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_rfft", rfft, input, n, dim, norm, out=out)
    return finish_out(_fft_r2c_1d("rfft", input, n, dim, norm, True, True), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of `rfft`: a real signal of length n (default 2 * (input.size(dim) - 1))."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_irfft", irfft, input, n, dim, norm, out=out)
    return finish_out(_fft_c2r_1d("irfft", input, n, dim, norm, False), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The Fourier transform of a Hermitian-symmetric signal given by its one-sided half: a real result."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_hfft", hfft, input, n, dim, norm, out=out)
    return finish_out(_fft_c2r_1d("hfft", input, n, dim, norm, True), out)


@typed
def ihfft(input, n: "int | None" = None, dim=-1, norm=None, *, out=None):
    """The inverse of `hfft`: the one-sided half of the inverse transform of real `input`."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_ihfft", ihfft, input, n, dim, norm, out=out)
    return finish_out(_fft_r2c_1d("ihfft", input, n, dim, norm, False, True), out)


# ---- n-dimensional transforms -----------------------------------------------------------------------------


def _shape_and_dims(x, s, dim):
    """torch's canonicalize_fft_shape_and_dim_args: (the signal sizes, the dims they transform)."""
    try:
        ndim = x.dim()
        dims = None
        if dim is not None:
            dim = [dim] if isinstance(dim, int) else list(dim)
            dims = [_wrap(d, ndim) for d in dim]
            if len(set(dims)) != len(dims):
                raise RuntimeError("FFT dims must be unique")
        if s is not None:
            s = [s] if isinstance(s, int) else list(s)
            if dims is not None and len(dims) != len(s):
                raise RuntimeError("When given, dim and shape arguments must have the same length")
            if len(s) > ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
            if dims is None:
                dims = list(range(ndim - len(s), ndim))
            shape = [x.shape[d] if n == -1 else int(n) for n, d in zip(s, dims)]
        elif dims is None:
            dims, shape = list(range(ndim)), list(x.shape)
        else:
            shape = [x.shape[d] for d in dims]
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for n in shape:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return shape, dims


def _c2r_shape_and_dims(name, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: the input sizes and dims, and the real last dim's size."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    s_last = None if s is None else ([s] if isinstance(s, int) else list(s))[-1]
    last = 2 * (x.shape[dims[-1]] - 1) if s_last is None or s_last == -1 else shape[-1]
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _fftn_c2c(name, x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(_promote(x, True), dims, shape)
    return _c2c(x, dims, _norm_mode(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform over `dim` (default: all dims, or the last len(s))."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_fftn", fftn, input, s, dim, norm, out=out)
    return finish_out(_fftn_c2c("fftn", input, s, dim, norm, True), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional inverse discrete Fourier transform."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_ifftn", ifftn, input, s, dim, norm, out=out)
    return finish_out(_fftn_c2c("ifftn", input, s, dim, norm, False), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional Fourier transform of real `input`, one-sided in the last transformed dim."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_rfftn", rfftn, input, s, dim, norm, out=out)
    try:
        if input.is_complex():
            raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {_dtypes._WORD[input.dtype.name]}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return finish_out(_r2c(x, dims, _norm_mode(norm, True), True), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of `rfftn`: a real result."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_irfftn", irfftn, input, s, dim, norm, out=out)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    return finish_out(_c2r(x, dims, _norm_mode(norm, False), last), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional transform of a Hermitian-symmetric signal given by its one-sided half."""
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _c2c(x, dims[:-1], mode, True)
    return finish_out(_c2r(x.conj(), dims[-1:], mode, last), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of `hfftn`: the one-sided half of the inverse transform of real `input`."""
    try:
        if input.is_complex():
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {_dtypes._WORD[input.dtype.name]}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    r = _r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return finish_out(r.conj(), out)
    r = r.conj_physical()
    return finish_out(_c2c(r, dims[:-1], mode, False), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional discrete Fourier transform (`fftn` over the last two dims)."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_fft2", fft2, input, s, dim, norm, out=out)
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional inverse discrete Fourier transform."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_ifft2", ifft2, input, s, dim, norm, out=out)
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional Fourier transform of real `input`."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_rfft2", rfft2, input, s, dim, norm, out=out)
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of `rfft2`."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("fft_irfft2", irfft2, input, s, dim, norm, out=out)
    return irfftn(input, s, dim, norm, out=out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional transform of a Hermitian-symmetric signal's one-sided half."""
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The inverse of `hfft2`."""
    return ihfftn(input, s, dim, norm, out=out)


# ---- helpers ----------------------------------------------------------------------------------------------


def _freq_dtype(dtype):
    d = _dtypes.get_default_dtype() if dtype is None else dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("fftfreq requires a floating point or complex dtype")
    return d


def _freq(n, half, d, dtype, requires_grad, device, out):
    """torch's fft_fftfreq / fft_rfftfreq: arange(n) (the upper half shifted down by n, unless `half`) times
    1 / (n d), in the result's dtype (a float scale of a float tensor is applied in that dtype)."""
    from .creation import arange

    if not isinstance(d, (int, float)):  # (torch's parser: `double d`; it takes a 0-d tensor too)
        e = TypeError(f"d must be float, not {type(d).__name__}")
        err = call_error(e)
        if err is not e:
            raise err
    dt = _freq_dtype(dtype if out is None or dtype is not None else out.dtype)
    k = arange(n // 2 + 1 if half else n, dtype=dt, device=device)
    if not half and n > 1:
        k = k - (k >= (n + 1) // 2) * n
    scale = float(np.float64(1.0) / (np.float64(n) * d)) if n * d else float("inf")
    r = k * scale
    if requires_grad:
        r.requires_grad_(True)
    return finish_out(r, out)


@typed
def fftfreq(n: int, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    """The sample frequencies of an n-point transform: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n d)."""
    return _freq(n, False, d, dtype, requires_grad, device, out)


@typed
def rfftfreq(n: int, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """The sample frequencies of `rfft` of an n-point signal: [0, 1, ..., n // 2] / (n d)."""
    return _freq(n, True, d, dtype, requires_grad, device, out)


def _shift(x, dim, half):
    from .copying import roll

    try:
        dims = list(range(x.dim())) if dim is None else [wrap_dim(d, x.dim()) for d in
                                                          ([dim] if isinstance(dim, int) else dim)]
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if not dims:  # (a 0-d tensor: roll's own refusal)
        raise RuntimeError("`shifts` required")
    return roll(x, [half(x.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    """Move the zero-frequency term to the centre: roll each of `dim` (default all) by size // 2."""
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of `fftshift`: roll each of `dim` by (size + 1) // 2."""
    return _shift(input, dim, lambda n: (n + 1) // 2)


# NOTE [ FFT layout on meta tensors ]
# torch's meta kernels for the FFT primitives (torch/_meta_registrations.py) take a meta tensor for a CUDA
# one (`device_hint`), so they give cuFFT's layouts: transforms of more than three dims, or starting with
# dims (0, 1), are staged (the last transformed dim first for r2c, the leading dims after for c2r), each
# stage re-laid out by `_exec_fft`. These rules replay that on strides alone. A fake tensor (device cpu,
# ember._subclasses.fake_tensor) takes torch's CPU (MKL) branch of the same meta functions instead: one
# `_exec_fft` over the transformed dims sorted by stride, which is the layout the CPU kernel gives.


def _contiguous(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return st[::-1]


def _exec_strides(in_strides, out_sizes, dim):
    """The strides `_exec_fft` gives its output: batch dims by input stride, then `dim`, densely."""
    batch = sorted((d for d in range(len(out_sizes)) if d not in dim), key=lambda d: -in_strides[d])
    inner = _contiguous([0] + [out_sizes[d] for d in dim])
    st, numel = [0] * len(out_sizes), 1
    for d in reversed(batch):
        st[d] = numel * inner[0]
        numel *= out_sizes[d]
    for j, d in enumerate(dim):
        st[d] = inner[1 + j]
    return st


def _staged_c2c_strides(shape, strides, dim):
    sorted_dims, working = list(dim), list(strides)
    while True:
        sorted_dims.sort(key=lambda i: -working[i])
        k = min(3, len(sorted_dims))
        working = _exec_strides(working, shape, sorted_dims[len(sorted_dims) - k:])
        sorted_dims = sorted_dims[:len(sorted_dims) - k]
        if not sorted_dims:
            return working


def _optimized(dim):
    return not (len(dim) > 3 or (len(dim) >= 2 and dim[0] == 0 and dim[1] == 1))


def _on_cpu(a):
    return a.device.type == "cpu"  # (a fake tensor: see NOTE [ FFT layout on meta tensors ])


def _by_stride(strides, dims):
    return sorted(dims, key=lambda i: -strides[i])


def _cpu_c2c_strides(shape, strides, dim):
    return _exec_strides(strides, shape, _by_stride(strides, dim))


@_fft_c2c.meta_
def _(a, dim, normalization, forward):
    if not dim:
        return meta_array(tuple(a.shape), a._data.dtype, like_strides(a))
    if _on_cpu(a):
        return meta_array(tuple(a.shape), a._data.dtype, tuple(_cpu_c2c_strides(list(a.shape), a.stride(), dim)))
    return meta_array(tuple(a.shape), a._data.dtype, tuple(_staged_c2c_strides(list(a.shape), a.stride(), dim)))


@_fft_r2c.meta_
def _(a, dim, normalization, onesided):
    shape, last = list(a.shape), dim[-1]
    half = list(shape)
    half[last] = shape[last] // 2 + 1
    out_sizes = half if onesided else shape
    if _on_cpu(a):
        st = _exec_strides(a.stride(), out_sizes, _by_stride(a.stride(), dim[:-1]) + [last])
    elif _optimized(dim):
        st = _exec_strides(a.stride(), out_sizes, dim)
    else:
        st = _exec_strides(a.stride(), out_sizes if len(dim) == 1 else half, [last])
        rest = list(dim[:-1])
        while rest:
            rest.sort(key=lambda i: -st[i])
            k = min(3, len(rest))
            st = _exec_strides(st, half, rest[len(rest) - k:])
            rest = rest[:len(rest) - k]
        if not onesided and len(dim) > 1:
            st = _contiguous(out_sizes)
    return meta_array(tuple(out_sizes), _complex_of(a._data.dtype), tuple(st))


@_fft_c2r.meta_
def _(a, dim, normalization, last_dim_size):
    out_sizes = list(a.shape)
    out_sizes[dim[-1]] = last_dim_size
    if _on_cpu(a):
        temp = _cpu_c2c_strides(list(a.shape), a.stride(), dim[:-1]) if len(dim) > 1 else a.stride()
        st = _exec_strides(temp, out_sizes, [dim[-1]])
    elif _optimized(dim):
        st = _exec_strides(_contiguous(list(a.shape)), out_sizes, dim)
    else:
        temp = _staged_c2c_strides(list(a.shape), a.stride(), dim[:-1]) if len(dim) > 1 else \
            _contiguous(list(a.shape))
        st = _exec_strides(temp, out_sizes, [dim[-1]])
    return meta_array(tuple(out_sizes), _real_of(a._data.dtype), tuple(st))
