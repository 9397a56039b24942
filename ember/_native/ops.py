"""The Python side of the native kernels: one wrapper per kernel, called from the op's own NumPy kernel.

Each wrapper returns the result arrays, or None when the native path does not apply (native off or
unavailable, too small, a dtype or layout the C code does not take: NOTE [ Choosing the native kernel ] in
__init__.py); the op then runs its NumPy code. The wrappers take what the op's kernel already computes
with (float16/bfloat16 widened to float32 by the op's `_wide`), and return float32 arrays the op rounds.
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import MIN_SIZE, SHARED_PARALLEL_SIZE, function, pool_threads_for, threads_for

_P, _I, _C, _D = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_double
_F32 = np.dtype(np.float32)
_ND = np.ndarray


def _fn(group, name, *argtypes):
    return function(group, name, list(argtypes))


def _ok(*arrays) -> bool:
    """All float32 C-contiguous NumPy arrays (None entries: absent optional inputs; a meta tensor's
    MetaArray is not one, so meta inputs take the NumPy code, which answers them with the meta rule)."""
    return all(a is None or (type(a) is _ND and a.dtype == _F32 and a.flags.c_contiguous) for a in arrays)


def _ptr(a):
    return None if a is None else a.ctypes.data


def _rows(a, dim):
    """(rows, n) of a reduction over `dim` when it is the last dim, else None."""
    if not isinstance(dim, int) or a.ndim == 0 or dim % a.ndim != a.ndim - 1:
        return None
    n = a.shape[-1]
    return (a.size // n, n) if n else None


# ---- softmax family ----------------------------------------------------------------------------------------

def softmax(w, dim, log):
    """softmax (log: log_softmax) of float32 `w` over `dim`, or None."""
    if w.size < MIN_SIZE or not _ok(w):
        return None
    shape = _rows(w, dim)
    fn = shape and _fn("softmax", "softmax_f32", _P, _P, _I, _I, _C, _C)
    if not fn:
        return None
    out = np.empty(w.shape, _F32)
    fn(w.ctypes.data, out.ctypes.data, shape[0], shape[1], int(log), threads_for(w.size))
    return out


def softmax_backward(g, y, dim, log):
    """The gradient of (log_)softmax's input from the output gradient `g` and the output `y`, or None."""
    if y.size < MIN_SIZE or g.shape != y.shape or not _ok(g, y):
        return None
    shape = _rows(y, dim)
    fn = shape and _fn("softmax", "softmax_backward_f32", _P, _P, _P, _I, _I, _C, _C)
    if not fn:
        return None
    out = np.empty(y.shape, _F32)
    fn(g.ctypes.data, y.ctypes.data, out.ctypes.data, shape[0], shape[1], int(log), threads_for(y.size))
    return out


# ---- layer_norm ------------------------------------------------------------------------------------------

def layer_norm(x, w, b, n_axes, eps):
    """(out, mean, rstd) of layer_norm of float32 `x` over its last `n_axes` dims (mean and rstd shaped with
    those dims kept as 1), or None."""
    if x.size < MIN_SIZE or not _ok(x, w, b):
        return None
    n = int(np.prod(x.shape[x.ndim - n_axes:], dtype=np.int64))
    fn = n and _fn("norm", "layer_norm_f32", _P, _P, _P, _P, _P, _P, _I, _I, _D, _C)
    if not fn:
        return None
    rows = x.size // n
    out = np.empty(x.shape, _F32)
    stats_shape = x.shape[:x.ndim - n_axes] + (1,) * n_axes
    mean, rstd = np.empty(stats_shape, _F32), np.empty(stats_shape, _F32)
    fn(x.ctypes.data, _ptr(w), _ptr(b), out.ctypes.data, mean.ctypes.data, rstd.ctypes.data, rows, n,
       float(eps), threads_for(x.size))
    return out, mean, rstd


def layer_norm_backward(g, x, w, mean, rstd):
    """(gx, gw, gb) of layer_norm from its saved statistics (gw, gb None without a weight), or None."""
    if x.size < MIN_SIZE or g.shape != x.shape or not _ok(g, x, w, mean, rstd):
        return None
    rows = mean.size
    n = x.size // rows if rows else 0
    fn = n and _fn("norm", "layer_norm_backward_f32", _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _C)
    if not fn:
        return None
    gx = np.empty(x.shape, _F32)
    gw = gb = None
    if w is not None:
        gw, gb = np.empty(w.shape, _F32), np.empty(w.shape, _F32)
    fn(g.ctypes.data, x.ctypes.data, mean.ctypes.data, rstd.ctypes.data, _ptr(w), gx.ctypes.data, _ptr(gw),
       _ptr(gb), rows, n, threads_for(x.size))
    return gx, gw, gb


# ---- activations -----------------------------------------------------------------------------------------

def gelu(w, approximate):
    if w.size < MIN_SIZE or not _ok(w):
        return None
    fn = _fn("activation", "gelu_f32", _P, _P, _I, _C, _C)
    if not fn:
        return None
    out = np.empty(w.shape, _F32)
    fn(w.ctypes.data, out.ctypes.data, w.size, int(approximate == "tanh"), threads_for(w.size))
    return out


def gelu_backward(g, w, approximate):
    if w.size < MIN_SIZE or g.shape != w.shape or not _ok(g, w):
        return None
    fn = _fn("activation", "gelu_backward_f32", _P, _P, _P, _I, _C, _C)
    if not fn:
        return None
    out = np.empty(w.shape, _F32)
    fn(g.ctypes.data, w.ctypes.data, out.ctypes.data, w.size, int(approximate == "tanh"), threads_for(w.size))
    return out


def silu(w):
    if w.size < MIN_SIZE or not _ok(w):
        return None
    fn = _fn("activation", "silu_f32", _P, _P, _I, _C)
    if not fn:
        return None
    out = np.empty(w.shape, _F32)
    fn(w.ctypes.data, out.ctypes.data, w.size, threads_for(w.size))
    return out


def _gradient(kernel, g, x):
    """A float32 activation's input gradient from `g` and `x` (one shape) by `kernel`, or None."""
    if x.size < MIN_SIZE or g.shape != x.shape or not _ok(g, x):
        return None
    fn = _fn("activation", kernel, _P, _P, _P, _I, _C)
    if not fn:
        return None
    gx = np.empty(x.shape, _F32)
    fn(g.ctypes.data, x.ctypes.data, gx.ctypes.data, x.size, threads_for(x.size))
    return gx


def silu_backward(g, w):
    return _gradient("silu_backward_f32", g, w)


def threshold_backward(g, out):
    """relu's backward, `out <= 0 ? 0 : g`, for float32 g and out of one shape, or None."""
    return _gradient("threshold_backward_f32", g, out)


# ---- optimizer updates -----------------------------------------------------------------------------------

def sgd(p, g, buf, has_buf, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """One parameter's SGD update in place (buf: the momentum buffer to update or, without has_buf, fill;
    None when momentum is 0); False when the native path does not apply."""
    if p.size < MIN_SIZE or g.shape != p.shape or not _ok(p, g, buf):
        return False
    fn = _fn("optim", "sgd_f32", _P, _P, _P, _I, _C, _D, _D, _D, _D, _C, _C, _C)
    if not fn:
        return False
    fn(p.ctypes.data, g.ctypes.data, _ptr(buf), p.size, int(has_buf), float(weight_decay), float(momentum),
       float(lr), float(dampening), int(nesterov), int(maximize), threads_for(p.size))
    return True


def adam(p, g, m, v, vmax, beta1, beta2, lr, weight_decay, decoupled, eps, step_size, bc2_sqrt, maximize):
    """One parameter's Adam/AdamW update in place (vmax: amsgrad's running maximum, or None); False when the
    native path does not apply."""
    if p.size < MIN_SIZE or not (g.shape == m.shape == v.shape == p.shape) or not _ok(p, g, m, v, vmax):
        return False
    fn = _fn("optim", "adam_f32", _P, _P, _P, _P, _P, _I, _D, _D, _D, _D, _C, _D, _D, _D, _C, _C)
    if not fn:
        return False
    fn(p.ctypes.data, g.ctypes.data, m.ctypes.data, v.ctypes.data, _ptr(vmax), p.size, float(beta1),
       float(beta2), float(lr), float(weight_decay), int(decoupled), float(eps), float(step_size),
       float(bc2_sqrt), int(maximize), threads_for(p.size))
    return True


_ptr_cache: dict = {}  # id of a list's first array -> (the arrays, their addresses, that array's address)


def _addresses(arrays):
    """(an int64 array of the arrays' data addresses, its own address, whether the addresses all differ). A
    model's parameters and optimizer state are the same arrays every step (updated in place), so their
    addresses are kept, checked by identity (each `.ctypes` lookup costs ~1.5 us, ~130 us a step for a
    22-tensor model's four lists). The caller holds the array while C reads it: a later call may drop it from
    the cache."""
    hit = _ptr_cache.get(id(arrays[0]))
    if hit is not None and len(hit[0]) == len(arrays) and all(x is y for x, y in zip(hit[0], arrays)):
        return hit[1:]
    ptrs = np.array([a.ctypes.data for a in arrays], np.int64)
    if len(_ptr_cache) >= 8:  # (a few optimizers' lists; the arrays stay alive while listed here)
        _ptr_cache.clear()
    distinct = len(set(ptrs.tolist())) == len(arrays)
    hit = _ptr_cache[id(arrays[0])] = (arrays, ptrs, ptrs.ctypes.data, distinct)
    return hit[1:]


def adam_many(params, grads, ms, vs, vmaxs, steps, beta1, beta2, lr, weight_decay, decoupled, eps, maximize):
    """The Adam/AdamW update of every float32 parameter of the lists in one parallel loop (NOTE [ One Adam
    loop over all parameters ] in optim.c; vmaxs: amsgrad's running maxima, or None), counting their steps on;
    returns the indices of the parameters it left to the caller (another dtype or layout; all of them when the
    native kernels are off)."""
    fn = _fn("optim", "adam_many_f32", _P, _P, _P, _P, _P, _P, _I, _P, _P, _D, _D, _D, _D, _C, _D, _C, _C)
    count = len(params)
    if not fn:
        return range(count)
    rest, mine = [], []
    for i, p in enumerate(params):
        g, m, v = grads[i], ms[i], vs[i]
        vmax = None if vmaxs is None else vmaxs[i]
        if p.size and type(p) is _ND and p.dtype == _F32 and p.flags.c_contiguous \
                and g.shape == m.shape == v.shape == p.shape and _ok(g, m, v, vmax):
            mine.append(i)
        else:
            rest.append(i)
    if not mine:
        return rest
    if rest:
        params, grads, ms, vs = ([x[i] for i in mine] for x in (params, grads, ms, vs))
        vmaxs = None if vmaxs is None else [vmaxs[i] for i in mine]
        steps = [steps[i] for i in mine]
    pp = _addresses(params)
    if not pp[2]:  # a parameter listed twice is updated twice, one after the other: the per-parameter loop
        return range(count)
    sizes = np.array([p.size for p in params], np.int64)
    step_size, bc2_sqrt = np.empty(len(params)), np.empty(len(params))
    for j, step_t in enumerate(steps):
        step_t += 1
        step = float(step_t)
        step_size[j] = lr / (1 - beta1 ** step)
        bc2_sqrt[j] = (1 - beta2 ** step) ** 0.5
    gptrs = np.array([g.ctypes.data for g in grads], np.int64)  # (fresh gradients every step)
    mp, vp = _addresses(ms), _addresses(vs)
    xp = (None, None) if vmaxs is None else _addresses(vmaxs)
    fn(pp[1], gptrs.ctypes.data, mp[1], vp[1], xp[1], sizes.ctypes.data, len(params),
       step_size.ctypes.data, bc2_sqrt.ctypes.data, float(beta1), float(beta2), float(lr),
       float(weight_decay), int(decoupled), float(eps), int(maximize), threads_for(int(sizes.sum())))
    return rest


# ---- batch_norm (training mode) --------------------------------------------------------------------------------

def batch_norm(x, w, b, eps):
    """(out, mean, rstd, biased var) of training-mode batch_norm of float32 `x` (N, C, ...), the statistics
    shaped (C,), or None."""
    if x.size < MIN_SIZE or x.ndim < 2 or not _ok(x, w, b):
        return None
    n, c = x.shape[:2]
    fn = _fn("norm", "batch_norm_f32", _P, _P, _P, _P, _P, _P, _P, _I, _I, _I, _D, _C)
    if not fn:
        return None
    out = np.empty(x.shape, _F32)
    mean, rstd, var = np.empty(c, _F32), np.empty(c, _F32), np.empty(c, _F32)
    fn(x.ctypes.data, _ptr(w), _ptr(b), out.ctypes.data, mean.ctypes.data, rstd.ctypes.data, var.ctypes.data,
       n, c, x.size // (n * c), float(eps), pool_threads_for(x.size))  # (NOTE [ Kernels on ember's pool ])
    return out, mean, rstd, var


def batch_norm_backward(g, x, w, mean, rstd):
    """(gx, gw, gb) of training-mode batch_norm from its (C,) statistics (gw, gb None without a weight)."""
    if x.size < MIN_SIZE or g.shape != x.shape or not _ok(g, x, w, mean, rstd):
        return None
    n, c = x.shape[:2]
    fn = _fn("norm", "batch_norm_backward_f32", _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _I, _C)
    if not fn:
        return None
    gx = np.empty(x.shape, _F32)
    gw = gb = None
    if w is not None:
        gw, gb = np.empty(c, _F32), np.empty(c, _F32)
    fn(g.ctypes.data, x.ctypes.data, _ptr(w), mean.ctypes.data, rstd.ctypes.data, gx.ctypes.data, _ptr(gw),
       _ptr(gb), n, c, x.size // (n * c), pool_threads_for(x.size))
    return gx, gw, gb


# ---- LSTM layers (K3; one call per layer: L1) ------------------------------------------------------------

# A layer's steps run on several threads from this many multiply-adds in a step's recurrent product (a
# 20 x 256 x 1024 product is 5.2M: ~50 us on one core); below it, a wait per step costs more than the
# second thread gains. The region waits by spinning (NOTE [ Claimed chunks ] in rnn.c), so the team
# is taken whichever OpenMP runtime it runs on (NOTE [ Passive OpenMP threads ]).
RNN_PARALLEL_WORK = 1 << 20


def lstm_layer(n_rows, H):
    """(forward, backward): the C functions running a whole LSTM layer of `n_rows` packed rows and hidden
    size H in float32 (ember/_native/rnn.c), or None (native off, or a layer too small to pay for it)."""
    if n_rows * 4 * H < MIN_SIZE:
        return None
    fwd = function("rnn", "lstm_layer_f32", [_P, _P, _P, _P, _P, _P, _P, _P, _P, _I, _C, _I, _I, _I, _C], _C)
    bwd = fwd and function("rnn", "lstm_layer_backward_f32", [_P, _P, _P, _P, _P, _P, _P, _P, _I, _C, _I, _I, _I,
                                                              _C], _C)
    return (fwd, bwd) if bwd else None


def rnn_threads(rows, H, gates):
    """Threads for a recurrent layer whose steps multiply `rows` rows by a (gates H) x H weight."""
    return threads_for(SHARED_PARALLEL_SIZE) if rows * gates * H * H >= RNN_PARALLEL_WORK else 1


# ---- index kernels (K3) ------------------------------------------------------------------------------------

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_INDEX_DTYPES = {_F32: "f32", _F64: "f64"}


def _around(shape, dim):
    """(outer, inner): the sizes before and after `dim`."""
    outer = inner = 1
    for i, s in enumerate(shape):
        if i < dim:
            outer *= s
        elif i > dim:
            inner *= s
    return outer, inner


def _index_fn(kind, *arrays):
    """The C kernel `kind` for these arrays (one float dtype, all C-contiguous NumPy arrays), or None."""
    dt = arrays[0].dtype
    suffix = _INDEX_DTYPES.get(dt)
    if suffix is None:
        return None
    for a in arrays:
        if type(a) is not _ND or a.dtype != dt or not a.flags.c_contiguous:
            return None
    return function("index", f"{kind}_{suffix}", [_P, _P, _P, _I, _I, _I, _I, _C], _C)


def _index64(index, size):
    """The index as C-contiguous non-negative int64 (the callers checked it lies in [-size, size))."""
    index = np.ascontiguousarray(index, _I64)
    return index + size * (index < 0) if index.size and index.min() < 0 else index


def index_in_range(index, size):
    """Whether every value of the int64 array `index` lies in [0, size), in one pass (NOTE [ One pass over the
    index ] in index.c); None when the native path does not apply (small, not C-contiguous int64, native off)."""
    if index.size < MIN_SIZE or type(index) is not _ND or index.dtype != _I64 or not index.flags.c_contiguous:
        return None
    fn = function("index", "index_in_range", [_P, _I, _I, _C], _C)
    return None if fn is None else bool(fn(index.ctypes.data, index.size, size, threads_for(index.size)))


def index_add(out, dim, index, src):
    """out.index_add_(dim, index, src) in place for `out` and `src` shaped alike but for `dim` (np.add.at's
    order); False when the native path does not apply (nothing written then: an index out of range too)."""
    if src.size < MIN_SIZE or out.ndim == 0 or \
            src.shape != out.shape[:dim] + (index.size,) + out.shape[dim + 1:]:
        return False
    fn = _index_fn("index_add", out, src)
    if not fn:
        return False
    outer, inner = _around(out.shape, dim)
    index = _index64(index.reshape(-1), out.shape[dim])
    return bool(fn(out.ctypes.data, index.ctypes.data, src.ctypes.data, outer, index.size, out.shape[dim],
                   inner, threads_for(src.size) if outer > 1 else 1))


def scatter_add(out, dim, index, src):
    """out.scatter_add_(dim, index, src) in place where index and src have one shape, equal to out's but for
    `dim`; False when the native path does not apply (nothing written then: an index out of range too)."""
    if src.size < MIN_SIZE or out.ndim == 0 or src.shape != index.shape or \
            src.shape[:dim] + src.shape[dim + 1:] != out.shape[:dim] + out.shape[dim + 1:]:
        return False
    fn = _index_fn("scatter_add", out, src)
    if not fn:
        return False
    outer, inner = _around(src.shape, dim)
    index = np.ascontiguousarray(index, _I64)
    return bool(fn(out.ctypes.data, index.ctypes.data, src.ctypes.data, outer, src.shape[dim], out.shape[dim],
                   inner, threads_for(src.size) if outer > 1 else 1))


def gather(x, dim, index):
    """x.gather(dim, index) for an index shaped as x but for `dim`; None when the native path does not apply
    (an index out of range too)."""
    if index.size < MIN_SIZE or x.ndim == 0 or index.shape[:dim] + index.shape[dim + 1:] != \
            x.shape[:dim] + x.shape[dim + 1:]:
        return None
    fn = _index_fn("gather", x)
    if not fn:
        return None
    outer, inner = _around(index.shape, dim)
    index = np.ascontiguousarray(index, _I64)
    y = np.empty(index.shape, x.dtype)
    ok = fn(x.ctypes.data, index.ctypes.data, y.ctypes.data, outer, index.shape[dim], x.shape[dim], inner,
            threads_for(y.size) if outer > 1 else 1)
    return y if ok else None


# ---- scans (K3) --------------------------------------------------------------------------------------------

def scan(a, dim, prod):
    """cumsum (prod: cumprod) of C-contiguous float32 `a` along `dim`, accumulated in double, or None."""
    if a.size < MIN_SIZE or not _ok(a) or a.ndim == 0:
        return None
    fn = _fn("scan", "scan_f32", _P, _P, _I, _I, _I, _C, _C)
    if not fn:
        return None
    n = a.shape[dim]
    inner = int(np.prod(a.shape[dim + 1:], dtype=np.int64))
    outer = a.size // (n * inner)
    out = np.empty(a.shape, _F32)
    fn(a.ctypes.data, out.ctypes.data, outer, n, inner, int(prod), threads_for(a.size) if outer > 1 else 1)
    return out


def channel_affine(x, alpha, beta):
    """x alpha[c] + beta[c] over the channels (dim 1) of float32 `x` (N, C, ...), alpha and beta (C,) float32
    (batch_norm in eval mode), or None."""
    if x.size < MIN_SIZE or x.ndim < 2 or not x.size or not _ok(x, alpha, beta):
        return None
    n, c = x.shape[:2]
    if alpha.size != c or beta.size != c:
        return None
    fn = _fn("norm", "channel_affine_f32", _P, _P, _P, _P, _I, _I, _I, _C)
    if not fn:
        return None
    out = np.empty(x.shape, _F32)
    fn(x.ctypes.data, alpha.ctypes.data, beta.ctypes.data, out.ctypes.data, n, c, x.size // (n * c),
       threads_for(x.size))
    return out


# ---- group_norm (K3) ---------------------------------------------------------------------------------------

def group_norm(x, w, b, groups, eps):
    """(out, mean, rstd) of group_norm of float32 `x` (N, C, ...) in `groups` groups, the statistics shaped
    (N, G), or None."""
    if x.size < MIN_SIZE or x.ndim < 2 or not x.size or not _ok(x, w, b):
        return None
    n, c = x.shape[:2]
    fn = _fn("norm", "group_norm_f32", _P, _P, _P, _P, _P, _P, _I, _I, _I, _I, _D, _C)
    if not fn:
        return None
    out = np.empty(x.shape, _F32)
    mean, rstd = np.empty((n, groups), _F32), np.empty((n, groups), _F32)
    fn(x.ctypes.data, _ptr(w), _ptr(b), out.ctypes.data, mean.ctypes.data, rstd.ctypes.data, n, c,
       x.size // (n * c), groups, float(eps), threads_for(x.size))
    return out, mean, rstd


def group_norm_backward(g, x, w, mean, rstd, groups):
    """(gx, gw, gb) of group_norm from its (N, G) statistics (gw, gb None without a weight), or None."""
    if x.size < MIN_SIZE or g.shape != x.shape or x.ndim < 2 or not x.size or not _ok(g, x, w, mean, rstd):
        return None
    n, c = x.shape[:2]
    fn = _fn("norm", "group_norm_backward_f32", _P, _P, _P, _P, _P, _P, _P, _P, _I, _I, _I, _I, _C)
    if not fn:
        return None
    gx = np.empty(x.shape, _F32)
    gw = gb = None
    if w is not None:
        gw, gb = np.empty(c, _F32), np.empty(c, _F32)
    fn(g.ctypes.data, x.ctypes.data, mean.ctypes.data, rstd.ctypes.data, _ptr(w), gx.ctypes.data, _ptr(gw),
       _ptr(gb), n, c, x.size // (n * c), groups, threads_for(x.size))
    return gx, gw, gb


# ---- pow (K3) ------------------------------------------------------------------------------------------------

def pow_int(a, e):
    """a ** e for float32 `a` and an integral exponent `e` (a Python int), correctly rounded, or None."""
    if a.size < MIN_SIZE or not _ok(a) or not -(1 << 62) < e < (1 << 62):
        return None
    fn = _fn("pow", "pow_int_f32", _P, _P, _I, _I, _C)
    if not fn:
        return None
    out = np.empty(a.shape, _F32)
    fn(a.ctypes.data, out.ctypes.data, a.size, e, threads_for(a.size))
    return out


def cube(a):
    """(a a) a for float32 `a` (torch's x ** 3), or None."""
    if a.size < MIN_SIZE or not _ok(a):
        return None
    fn = _fn("pow", "cube_f32", _P, _P, _I, _C)
    if not fn:
        return None
    out = np.empty(a.shape, _F32)
    fn(a.ctypes.data, out.ctypes.data, a.size, threads_for(a.size))
    return out


# ---- clamp (K3) ----------------------------------------------------------------------------------------------

_F = ctypes.c_float


def clamp(a, lo, hi):
    """a clamped to [lo, hi] (Python numbers or None) for float32 `a`, or None."""
    if a.size < MIN_SIZE or not _ok(a):
        return None
    fn = _fn("activation", "clamp_f32", _P, _P, _I, _F, _F, _C, _C, _C)
    if not fn:
        return None
    out = np.empty(a.shape, _F32)
    with np.errstate(over="ignore"):  # (a bound beyond float32's range is its infinity, as in NumPy's kernel)
        flo = 0.0 if lo is None else float(np.float32(lo))
        fhi = 0.0 if hi is None else float(np.float32(hi))
    fn(a.ctypes.data, out.ctypes.data, a.size, flo, fhi, lo is not None, hi is not None, threads_for(a.size))
    return out
