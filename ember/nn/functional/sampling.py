"""Padding, resampling and spatial transformers of ember.nn.functional: pad, interpolate, grid_sample,
affine_grid. All are composites of index_select / cat / matmul, so autograd comes from those ops.
"""

import math

import numpy as np

from ... import _dtypes
from ..._dispatch import FLOATING, NUMERIC, _modes, dispatch, require_dtype
from ..._ops import pooling as PL
from ..._ops.creation import arange, constant_like
from ..._ops.pointwise import where
from ..._ops.shape import cat

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid"]


def _np_dtype(t):
    """The NumPy dtype of tensor `t` (the weights built here from shapes are NumPy arrays of it)."""
    return _dtypes.to_numpy(t.dtype)


def _index(x, dim, idx):
    return x.index_select(dim, constant_like(np.asarray(idx, np.int64), x))


def _pad_dim(x, dim, lo, hi, mode, value):
    n = x.shape[dim]
    if lo < 0:
        x, n, lo = x.narrow(dim, -lo, n + lo), n + lo, 0
    if hi < 0:
        x, n, hi = x.narrow(dim, 0, n + hi), n + hi, 0
    if lo == 0 and hi == 0:
        return x
    if mode == "constant":
        shape = list(x.shape)
        parts = []
        if lo:
            shape[dim] = lo
            parts.append(x.new_full(tuple(shape), value))
        parts.append(x)
        if hi:
            shape[dim] = hi
            parts.append(x.new_full(tuple(shape), value))
        return cat(parts, dim)
    pos = np.arange(-lo, n + hi)
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {dim} of input {list(x.shape)}")
        period = 2 * (n - 1)
        pos = np.abs(pos) % period if period else np.zeros_like(pos)
        pos = np.where(pos >= n, period - pos, pos)
    elif mode == "replicate":
        pos = np.clip(pos, 0, n - 1)
    elif mode == "circular":
        if lo > n or hi > n:
            raise ValueError("Padding value causes wrapping around more than once.")
        pos = pos % n
    else:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return _index(x, dim, pos)


_PAD_KERNELS = {"reflect": "reflection", "replicate": "replication"}


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad)//2 dims: pad = (left_last, right_last, left_prev, right_prev, ...)."""
    if _modes and mode in ("reflect", "replicate"):  # torch's reflection_pad*/replication_pad* are fp32
        from ...amp.autocast_mode import autocast_call, autocasting  # (NOTE [ Composites under autocast ])
        if autocasting():
            return autocast_call("reflection_pad1d", F_pad, input, pad, mode, value)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value:
        raise ValueError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    if mode in _PAD_KERNELS:  # torch's reflection / replication kernels take every dtype but bool
        require_dtype(input, NUMERIC, f"{_PAD_KERNELS[mode]}_pad{len(pad) // 2}d")
    x = input
    for i in range(len(pad) // 2):
        x = _pad_dim(x, input.dim() - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1]), mode, value or 0.0)
    return x if x is not input else input.clone()


# ---- interpolate ---------------------------------------------------------------------------------------------


def _src_coords(out, n, scale, align_corners):
    """Source coordinate of each output position (torch's area_pixel_compute_source_index)."""
    d = np.arange(out, dtype=np.float64)
    if align_corners:
        return d * ((n - 1) / (out - 1)) if out > 1 else np.zeros(out)
    r = 1.0 / scale if scale is not None else n / out
    return (d + 0.5) * r - 0.5


def _linear_dim(x, dim, out, scale, align_corners):
    n = x.shape[dim]
    src = np.maximum(_src_coords(out, n, scale, align_corners), 0) if not align_corners else \
        _src_coords(out, n, scale, align_corners)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = (src - i0).astype(_np_dtype(x))
    shape = [1] * x.dim()
    shape[dim] = out
    w1 = constant_like(lam.reshape(shape), x)
    return _index(x, dim, i0) * (1 - w1) + _index(x, dim, i1) * w1


def _cubic_weights(t, a=-0.75):
    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_dim(x, dim, out, scale, align_corners):
    n = x.shape[dim]
    src = _src_coords(out, n, scale, align_corners)
    i = np.floor(src).astype(np.int64)
    t = src - i
    res = None
    shape = [1] * x.dim()
    shape[dim] = out
    for k, w in zip(range(-1, 3), _cubic_weights(t)):
        term = _index(x, dim, np.clip(i + k, 0, n - 1)) * constant_like(w.astype(_np_dtype(x)).reshape(shape), x)
        res = term if res is None else res + term
    return res


# NOTE [ Antialiased resampling ]
# torch's antialias=True (bilinear/bicubic/lanczos, 4-d input) is separable: along each dim, output i is a
# normalized weighted sum of the inputs within `support` of its centre scale * (i + 0.5), with the filter (a
# triangle, Keys' cubic with a = -0.5, or Lanczos-3) stretched by the scale when downsampling. Here
# that is one dense (out, in) weight matrix per dim, applied with a matmul (differentiable as it stands).


def _aa_filter(x, kind):
    x = np.abs(x)
    if kind == "bilinear":
        return np.where(x < 1, 1 - x, 0.0)
    if kind == "lanczos":  # Lanczos-3: sinc(x) * sinc(x / 3) on |x| < 3 (PIL's LANCZOS)
        return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _aa_dim(x, dim, out, scale, align_corners, kind):
    n = x.shape[dim]
    if align_corners:
        s = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n / out
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[kind] * (s if s >= 1.0 else 1.0)
    invscale = 1.0 / s if s >= 1.0 else 1.0
    center = s * (np.arange(out) + 0.5)
    xmin = np.maximum(np.trunc(center - support + 0.5).astype(np.int64), 0)
    xsize = np.minimum(np.trunc(center + support + 0.5).astype(np.int64), n) - xmin
    j = np.arange(max(int(xsize.max()), 0))[None, :]
    live = j < xsize[:, None]
    w = np.where(live, _aa_filter((j + xmin[:, None] - center[:, None] + 0.5) * invscale, kind), 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    mat = np.zeros((out, n))
    rows = np.broadcast_to(np.arange(out)[:, None], live.shape)
    mat[rows[live], (j + xmin[:, None])[live]] = w[live]
    y = x.movedim(dim, -1).matmul(constant_like(mat.T.astype(_np_dtype(x)), x))
    return y.movedim(-1, dim)


def _nearest_dim(x, dim, out, scale, exact):
    n = x.shape[dim]
    r = 1.0 / scale if scale is not None else n / out
    d = np.arange(out, dtype=np.float64)
    src = np.floor((d + 0.5) * r) if exact else np.floor(d * np.float32(r))
    return _index(x, dim, np.minimum(src.astype(np.int64), n - 1))


# NOTE [ uint8 resampling ]
# torch resizes uint8 images (bilinear / bicubic, with or without antialias) in fixed point, as Pillow
# does: separably, last dim first, skipping a dim whose size does not change. Per dim, each output's
# float64 weights are scaled by 2**p (p the largest precision keeping twice the largest weight below
# 2**15) and rounded half away from zero to integers; an output is (2**(p-1) + sum(w * x)) >> p clamped
# to [0, 255], stored as uint8 before the next dim. The weights: without antialias, those of the float
# kernel (bicubic a = -0.75 at its 4 clamped taps, a tap's weights summed where clamping merges taps;
# bilinear's source index clamped at 0); with antialias, the normalized filter over the support (as in
# `_aa_dim`). Float arithmetic would round otherwise (77 where the float path gives 254).


def _uint8_weights(n, out, scale, align_corners, mode, antialias):
    """The float64 weights (out, n) of one dim (NOTE [ uint8 resampling ])."""
    if align_corners:
        s = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n / out
    if antialias:
        size = 2.0 if mode == "bilinear" else 4.0
        support = size * 0.5 * s if s >= 1.0 else size * 0.5
        invscale = 1.0 / s if s >= 1.0 else 1.0
        w = np.zeros((out, n))
        for i in range(out):
            center = s * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), n)
            f = _aa_filter((np.arange(lo, hi) - center + 0.5) * invscale, mode)
            total = f.sum()
            w[i, lo:hi] = f / total if total != 0 else f
        return w
    i = np.arange(out, dtype=np.float64)
    src = i * s if align_corners else (i + 0.5) * s - 0.5
    if mode == "bilinear":
        src = np.maximum(src, 0)
    base = np.minimum(np.floor(src), n - 1)
    t = np.clip(src - base, 0, 1)
    if mode == "bilinear":
        taps, tw = np.arange(2), np.stack([1 - t, t], -1)
    else:
        taps, tw = np.arange(-1, 3), np.stack(_cubic_weights(t), -1)
    w = np.zeros((out, n))
    rows = np.broadcast_to(np.arange(out)[:, None], tw.shape)
    np.add.at(w, (rows, np.clip(base[:, None].astype(np.int64) + taps, 0, n - 1)), tw)
    return w


def _uint8_resample(x, out, scales, align_corners, mode, antialias):
    """NOTE [ uint8 resampling ]: `x` a uint8 tensor (N, C, *spatial), `out` the output spatial sizes. The
    fixed-point weights come from the shapes here; the op `_resample_uint8` applies them."""
    steps = []
    for i in reversed(range(len(out))):
        dim = 2 + i
        if out[i] == x.shape[dim]:
            continue
        w = _uint8_weights(x.shape[dim], out[i], scales[i], align_corners, mode, antialias)
        p = 0
        while p < 22 and int(0.5 + max(float(w.max()), 0.0) * (1 << (p + 1))) < (1 << 15):
            p += 1
        v = w * (1 << p)
        steps.append((dim, np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5)).astype(np.int64), p))
    return dispatch(PL.resample_uint8, (x,), (tuple(steps),))


_INTERPOLATE_DTYPES = {m: FLOATING | {"uint8"} for m in ("nearest", "nearest-exact", "bilinear", "bicubic")}
_ANTIALIAS_DTYPES = frozenset({"float32", "float64", "uint8"})


def _interpolate_kernel(mode, nd):
    """The torch kernel whose dtype check an interpolation meets first."""
    if mode in ("nearest", "nearest-exact"):
        return "upsample_nearest2d_channels_last" if nd == 2 else "compute_indices_weights_nearest"
    if mode == "bilinear":
        return "upsample_bilinear2d_channels_last"
    if mode == "bicubic":
        return "compute_indices_weights_cubic"
    if mode == "area":
        return "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
    return "compute_indices_weights_linear"


def _check_upsample(input, out, nd):
    """torch's upsample_{1,2,3}d_common_check and its meta functions' empty check, before any kernel: every
    spatial size in and out positive, then no empty dim but the batch."""
    names = ("D", "H", "W")[3 - nd:]
    sizes = tuple(input.shape[2:])
    if min(sizes + tuple(out)) <= 0:
        given = ", ".join(f"{n}: {v}" for n, v in zip(names, sizes))
        want = ", ".join(f"{n}: {v}" for n, v in zip(names, out))
        sep = ") and output (" if nd == 1 else ") output ("
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given}{sep}{want})")
    if input.numel() == 0 and 0 in tuple(input.shape[1:]):
        raise RuntimeError(f"Non-empty {nd + 2}D data tensor expected but got a tensor with sizes {list(input.shape)}")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    nd = input.dim() - 2
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nd
        scales = (None,) * nd
    elif scale_factor is not None:
        sf = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd
        out = tuple(int(math.floor(n * s)) for n, s in zip(input.shape[2:], sf))
        scales = (None,) * nd if recompute_scale_factor else sf
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode != "area" and 1 <= nd <= 3:  # (torch's meta functions: shapes before the kernel's dtypes)
        _check_upsample(input, out, nd)
    if antialias:  # torch's separable antialias kernels: float32, float64 and uint8 only
        require_dtype(input, _ANTIALIAS_DTYPES, "compute_index_ranges_weights")
    require_dtype(input, _INTERPOLATE_DTYPES.get(mode, FLOATING), _interpolate_kernel(mode, nd))
    if input.dtype is _dtypes.uint8 and mode in ("bilinear", "bicubic"):
        return _uint8_resample(input, out, scales, bool(align_corners), mode, antialias)
    # reduced-precision floats interpolate in float32 and round once, as torch's opmath kernels do
    low = input.dtype in (_dtypes.float16, _dtypes.bfloat16) and mode not in ("nearest", "nearest-exact")
    x = input.float() if low else input
    for i in range(nd):
        dim = 2 + i
        if antialias:
            x = _aa_dim(x, dim, out[i], scales[i], bool(align_corners), mode)
        elif mode in ("nearest", "nearest-exact"):
            x = _nearest_dim(x, dim, out[i], scales[i], mode == "nearest-exact")
        elif mode in ("linear", "bilinear", "trilinear"):
            x = _linear_dim(x, dim, out[i], scales[i], bool(align_corners))
        elif mode == "bicubic":
            x = _cubic_dim(x, dim, out[i], scales[i], bool(align_corners))
        elif mode == "area":
            from .conv import _adaptive_avg

            return _adaptive_avg(nd, input, out)
        else:
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                      "for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                                      f"area | nearest-exact (got {mode})")
    return x.to(input.dtype).contiguous() if low else x.contiguous()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- spatial transformers --------------------------------------------------------------------------------------


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) of the affine maps `theta` (N, 2, 3) over an output of `size`."""
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    align_corners = bool(align_corners)
    n, _, h, w = size

    def lin(k):
        if k <= 1:
            return np.zeros(k) if k == 1 else np.zeros(0)
        v = np.linspace(-1, 1, k)
        return v if align_corners else v * (k - 1) / k
    ys, xs = np.meshgrid(lin(h), lin(w), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], -1).astype(_np_dtype(theta))  # (H, W, 3)
    grid = constant_like(base.reshape(1, h * w, 3), theta).matmul(theta.transpose(1, 2))  # (N, H*W, 2)
    return grid.reshape(n, h, w, 2)


def _unnormalize(c, size, align_corners):
    return (c + 1) / 2 * (size - 1) if align_corners else ((c + 1) * size - 1) / 2


def _reflect(c, lo, hi):
    span = hi - lo
    if span <= 0:
        return c * 0
    c = (c - lo).abs()
    extra = c.fmod(span)
    flips = (c / span).floor()
    return where(flips.fmod(2) == 0, extra + lo, span - extra + lo)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample `input` (N, C, H, W) at normalized `grid` (N, Ho, Wo, 2) locations (x, y in [-1, 1])."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("grid_sampler", grid_sample, input, grid, mode, padding_mode, align_corners)
    require_dtype(input, FLOATING, "grid_sampler_2d_cpu_kernel_impl")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    gx = _unnormalize(grid[..., 0], w, align_corners)
    gy = _unnormalize(grid[..., 1], h, align_corners)
    if padding_mode == "border":
        gx, gy = gx.clamp(0, w - 1), gy.clamp(0, h - 1)
    elif padding_mode == "reflection":
        if align_corners:
            gx, gy = _reflect(gx, 0, w - 1), _reflect(gy, 0, h - 1)
        else:
            gx, gy = _reflect(gx, -0.5, w - 0.5), _reflect(gy, -0.5, h - 0.5)
        gx, gy = gx.clamp(0, w - 1), gy.clamp(0, h - 1)
    flat = input.reshape(n, c, h * w)

    def tap(ix, iy):
        ixa, iya = ix.to(_dtypes.int64), iy.to(_dtypes.int64)
        ok = (ixa >= 0) & (ixa < w) & (iya >= 0) & (iya < h)
        lin = where(ok, iya * w + ixa, 0) + (arange(n, device=ixa.device) * (h * w)).reshape(-1, 1, 1)
        vals = flat.transpose(0, 1).reshape(c, n * h * w).index_select(1, lin.reshape(-1))
        vals = vals.reshape(c, *ixa.shape).transpose(0, 1)
        return where(ok.unsqueeze(1), vals, 0.0)
    if mode == "nearest":
        return tap(gx.round(), gy.round()).contiguous()  # (the taps come out channel-major; torch's is not)
    x0, y0 = gx.floor(), gy.floor()
    x1, y1 = x0 + 1, y0 + 1
    wx1, wy1 = (gx - x0).unsqueeze(1), (gy - y0).unsqueeze(1)
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (tap(x0, y0) * wx0 * wy0 + tap(x1, y0) * wx1 * wy0 + tap(x0, y1) * wx0 * wy1
            + tap(x1, y1) * wx1 * wy1).contiguous()


F_pad = pad  # (the name `pad` is shadowed by the argument inside the function)
