"""ember.Generator: torch's CPU random engine (mt19937), its seeding, its saved state, and the ways torch
turns the engine's 32-bit words into numbers.

NOTE [ Matching torch's CPU stream ]
torch's CPU generator is a plain mt19937 seeded with the standard `init_genrand` recurrence on the low 32
bits of the seed. NumPy's `MT19937` bit generator is the same engine and `_legacy_seeding` is the same
recurrence, so its `random_raw()` yields torch's 32-bit words in torch's order, in bulk. On top of the words
torch builds (see DistributionsHelper / TransformationHelper in ATen):

  random()    one word                         random64()  (word1 << 32) | word2
  float32 uniform in [0, 1):  (random() & (2**24 - 1)) * 2**-24      (float16/bfloat16: the float32
                              value rounded)
  float64 uniform in [0, 1):  (random64() & (2**53 - 1)) * 2**-53
  uniform(a, b):              fma(u, b - a, a) in the dtype (torch's AVX2 build contracts x*y+z to an fma)
  integers in [lo, lo + r):   lo + w % r, with w = random() if r < 2**32 else random64()

Every kernel draws one value per element in TensorIterator order (memory order of the output), serially,
so drawing a block of words and transforming it with NumPy reproduces torch exactly. The normal
distribution has two paths, both reproduced here (see NOTE [ torch's two normal samplers ]).

NOTE [ Which samplers match torch's stream ]
Bitwise equal to torch 2.13 on x86-64 after the same seed (tests/test_random.py checks values and the
generator state afterwards): rand, rand_like, randn, randn_like, randint, randint_like, randperm,
normal (all four overloads), uniform_, normal_, bernoulli (tensor p), bernoulli_ (tensor p), multinomial
(with and without replacement), exponential_, geometric_, log_normal_, cauchy_, random_, for float32,
float64, float16, bfloat16, complex and integer dtypes, contiguous or not; and get_rng_state/set_rng_state
exchange states with torch. Two caveats: bernoulli_/bernoulli with a scalar p (dropout's kernel) match
torch on non-Intel CPUs only, because on Intel CPUs torch switches to MKL's own generator; the
transcendental steps are computed as torch's kernel computes them on this CPU (See NOTE [ Exact
transcendental steps ]). poisson and binomial (rejection samplers consuming a data-dependent number of
draws per element) are reproduced too, in ember/_ops/discrete_sampling.py (NOTE [ Counting draws ]).
"""

import math
import os
import platform
import threading

import numpy as np

from . import _dtypes
from ._device import check_device
from ._device import device as _device

__all__ = ["Generator", "default_generator"]

_DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val
_STATE_SIZE = 5056  # sizeof(CPUGeneratorImplState)
_U64 = np.uint64
_M24, _M53 = _U64((1 << 24) - 1), _U64((1 << 53) - 1)


# NOTE [ Draws are atomic ]
# Threads share the default generator, and torch locks a generator for the whole of each op that draws from
# it, so a draw is never torn or repeated between threads: four threads drawing at once get, between them,
# exactly the blocks one thread gets in sequence. ember's sampling kernels read an engine, a Box-Muller
# cache and an offset in several steps, so each runs holding this lock (the `_seeded` ops of _ops/random.py),
# as do seeding and setting the state. One lock for all generators (torch has one per generator): the GIL
# lets one thread compute at a time anyway, and a re-entrant lock lets a kernel call another sampling op.
DRAW_LOCK = threading.RLock()


class Generator:
    """A random number generator with its own state (torch's CPU generator: an mt19937).

    Args:
        device: only ``'cpu'`` (ember computes on the CPU).

    Example::

        >>> g = ember.Generator().manual_seed(0)
        >>> ember.rand(2, generator=g)   # torch.rand(2, generator=torch.Generator().manual_seed(0))
    """

    __module__ = "ember._C"  # where torch's Generator lives: <class 'torch._C.Generator'>

    def __init__(self, device="cpu"):
        check_device(device)
        self._mt = None  # the engine, made on first use (importing numpy.random costs ~25 ms)
        self._normal_double = None  # torch's cached second Box-Muller value (next_double_normal_sample)
        self._normal_float = None
        self._set_seed(_DEFAULT_SEED)

    @property
    def device(self):
        return _device("cpu")

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>"

    # ---- seeding -----------------------------------------------------------------------------------------

    @property
    def _engine(self):
        """NumPy's MT19937, seeded like torch's engine (NOTE [ Matching torch's CPU stream ])."""
        mt = self._mt
        if mt is None:
            from numpy.random import MT19937

            mt = self._mt = MT19937(0)
            mt._legacy_seeding(self._seed & 0xFFFFFFFF)
        return mt

    def _set_seed(self, seed):
        with DRAW_LOCK:
            self._seed = seed
            if self._mt is not None:
                self._mt._legacy_seeding(seed & 0xFFFFFFFF)
            self._fresh = True  # torch writes next=0 (not 624) in the state of a just-seeded engine
            self._normal_double = self._normal_float = None

    def manual_seed(self, seed):
        """Seed the generator with integer `seed`; returns the generator."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2**63 <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._set_seed(seed & 0xFFFFFFFFFFFFFFFF)
        return self

    def seed(self):
        """Seed from a non-deterministic source; returns the 64-bit seed used."""
        s = int.from_bytes(os.urandom(8), "little")
        self._set_seed(s)
        return s

    def initial_seed(self):
        """The seed the generator was last seeded with."""
        return self._seed

    # ---- state ---------------------------------------------------------------------------------------------

    def get_state(self):
        """The state as a uint8 tensor in torch's layout (``torch.Generator().set_state`` accepts it)."""
        from ._tensor import _wrap

        return _wrap(np.frombuffer(_pack_state(self), np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from `get_state` (ember's or torch's); returns the generator."""
        from ._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.dtype is not _dtypes.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != _STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but found the input RNG "
                               f"state size to be {new_state.numel()}")
        raw = np.ascontiguousarray(new_state.numpy()).tobytes()  # (a uint8 tensor: no grad)
        with DRAW_LOCK:
            _unpack_state(self, raw)
        return self

    def __reduce__(self):
        return (_rebuild, (self.get_state().numpy().tobytes(),))

    # ---- the engine's words ----------------------------------------------------------------------------

    def _random(self, n):
        """n words of torch's `random()` (uint32 values in a uint64 array)."""
        if n:
            self._fresh = False
        return self._engine.random_raw(n)

    def _random64(self, n):
        """n values of torch's `random64()`: two words each, the first one high."""
        w = self._random(2 * n)
        return (w[0::2] << _U64(32)) | w[1::2]

    def _uniform_float(self, n):
        """n float32 uniforms in [0, 1) as torch's `uniform_real_distribution<float>`."""
        return (self._random(n) & _M24).astype(np.float32) * np.float32(2.0 ** -24)

    def _uniform_double(self, n):
        """n float64 uniforms in [0, 1) as torch's `uniform_real_distribution<double>`."""
        return (self._random64(n) & _M53).astype(np.float64) * 2.0 ** -53


# ---- state serialization ----------------------------------------------------------------------------------
#
# NOTE [ Generator state layout ]
# torch serializes CPUGeneratorImplState: the legacy THGeneratorState (uint64 the_initial_seed; int left;
# int seeded; uint64 next; uint64 state[624]; double normal_x, normal_y, normal_rho; int normal_is_valid;
# padding) followed by float next_float_normal_sample and bool is_next_float_normal_sample_valid: 5056
# bytes. torch's engine reads state[next++] after decrementing `left` (regenerating when it reaches 0), so
# `left + next == 625` and NumPy's position is `pos == 625 - left`. The cached Box-Muller value goes in
# normal_y. Writing the same layout lets a state move between ember and torch in both directions.

_HEAD = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"), ("state", "<u8", 624),
                  ("normal_x", "<f8"), ("normal_y", "<f8"), ("normal_rho", "<f8"), ("normal_valid", "<i4"),
                  ("pad", "<i4"), ("float_normal", "<f4"), ("float_valid", "u1"), ("pad2", "u1", 3)])
assert _HEAD.itemsize == _STATE_SIZE


def _pack_state(gen):
    st = gen._engine.state["state"]
    rec = np.zeros((), _HEAD)
    pos = int(st["pos"])
    rec["seed"], rec["left"], rec["seeded"] = gen._seed, 625 - pos, 1
    rec["next"] = 0 if gen._fresh else pos
    rec["state"] = st["key"]
    if gen._normal_double is not None:
        rec["normal_y"], rec["normal_valid"] = gen._normal_double, 1
    if gen._normal_float is not None:
        rec["float_normal"], rec["float_valid"] = gen._normal_float, 1
    return rec.tobytes()


def _unpack_state(gen, raw):
    rec = np.frombuffer(raw, _HEAD)[0]
    left = int(rec["left"])
    if not 1 <= left <= 624:
        raise RuntimeError(f"The input RNG state is invalid: left must be in [1, 624], got {left}")
    gen._engine.state = {"bit_generator": "MT19937",
                     "state": {"key": rec["state"].astype(np.uint32), "pos": 625 - left}}
    gen._seed = int(rec["seed"])
    gen._fresh = left == 1 and int(rec["next"]) == 0
    gen._normal_double = float(rec["normal_y"]) if rec["normal_valid"] else None
    gen._normal_float = float(rec["float_normal"]) if rec["float_valid"] else None


def _rebuild(raw):
    g = Generator()
    _unpack_state(g, raw)
    return g


default_generator = Generator()


# ---- fused multiply-add, as torch's AVX2 build computes x * y + z ------------------------------------------

def fma32(a, b, c):
    """float32 fma(a, b, c) rounded once. The product of two float32 values is exact in float64, so the
    float64 sum is off only by its own rounding, which changes the final float32 rounding only when it lands
    exactly on a float32 halfway point; those rare elements are nudged toward the exact sum first."""
    p = np.multiply(a, b, dtype=np.float64)
    s = p + c
    r = s.astype(np.float32)
    tie = np.flatnonzero((s.view(np.int64) & 0x1FFFFFFF) == 0x10000000)
    if tie.size:
        ps, ss = p.reshape(-1)[tie], s.reshape(-1)[tie]
        cs = np.broadcast_to(c, s.shape).reshape(-1)[tie].astype(np.float64)
        bb = ss - ps
        err = (ps - (ss - bb)) + (cs - bb)
        r.reshape(-1)[tie] = np.where(err == 0, ss, np.nextafter(ss, np.copysign(np.inf, err)))
    return r


# NOTE [ Chunked evaluation ]
# The float32 Cephes code below runs ~100 NumPy passes over its input. On a whole large tensor every pass
# allocates fresh multi-megabyte temporaries (fresh pages: page faults) and streams them through memory;
# slices of 64K values keep the temporaries in cache and in reused heap memory, about 4x faster.
_CHUNK = 1 << 16


def chunked(fn, x, out_dtype):
    """fn applied to consecutive slices of 1-D `x` (length a multiple of 16 when fn works on blocks)."""
    if x.size <= _CHUNK:
        return fn(x).reshape(-1)
    out = np.empty(x.size, out_dtype)
    for i in range(0, x.size, _CHUNK):
        out[i:i + _CHUNK] = fn(x[i:i + _CHUNK]).reshape(-1)
    return out


def fma64(a, b, c):
    """float64 fma(a, b, c) from an exact two-product and two-sum (rounded once but in rare ties)."""
    a, b = np.asarray(a, np.float64), np.float64(b)
    if abs(b) > 2.0 ** 995:  # the split of b would overflow: scale by a power of two (exact) and back
        return fma64(a, b * 2.0 ** -64, np.multiply(c, 2.0 ** -64)) * 2.0 ** 64
    p = a * b
    ca, cb = 134217729.0 * a, 134217729.0 * b  # Veltkamp split: 2**27 + 1
    ah, bh = ca - (ca - a), cb - (cb - b)
    al, bl = a - ah, b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


# ---- the C library's functions, as torch's kernels call them ----------------------------------------------
#
# NOTE [ Exact transcendental steps ]
# torch's samplers call the C library's scalar log/log1p/exp/cos/sin/tan (float64; float32 logf/cosf/sinf in
# the scalar normal_fill) element by element. NumPy's ufuncs do not always: on AVX-512 CPUs its float64
# log, log1p, exp (and others) are its own SIMD code, 1 ULP away from the C library on ~0.3-7% of inputs,
# and aarch64 builds have other SIMD paths. So every transcendental step of a sampler goes through the C
# library itself: through NumPy's scalar loop where a probe shows it calls it (See NOTE [ The C library's
# scalar loop through NumPy ]), else through Python's math module (which calls the same libm torch links, in
# the same process) or ctypes. The rest of each kernel is IEEE arithmetic (+, *, /, sqrt, fma), which NumPy
# rounds identically everywhere.
#
# Which kernel torch runs depends on its CPU capability (ATEN_CPU_CAPABILITY, else what cpuinfo finds):
# its AVX2 and AVX512 builds run the AVX2 float32 normal_fill (Cephes polynomials, exact in NumPy float32
# arithmetic) and contract x * y + z into an fma; its DEFAULT build (x86-64 without AVX2/FMA, or
# ATEN_CPU_CAPABILITY=default) runs the scalar normal_fill with logf/cosf/sinf and rounds x * y and + z
# separately in uniform_ and the scalar normal sampler (normal_fill's final `* std + mean` is fused in
# every build: measured); aarch64 builds run the scalar normal_fill and contract (GCC's default -ffp-contract=fast).
# ember reads the same variable and CPU flags, so `ATEN_CPU_CAPABILITY=default` switches both.

# NOTE [ The C library's scalar loop through NumPy ]
# Calling the C library once per element from Python costs ~0.05-0.1 us a value (most of a float64 sampler's
# time). NumPy's own inner loops fall back to the C library's scalar function (`npy_log` is `log`, ...)
# wherever their SIMD code declines the operands, and every SIMD loop of NumPy 2.x declines an output that
# partly overlaps its input: `f(buf[1:], out=buf[:-1])` (element i read before it is overwritten, so the
# ufunc machinery does not copy) runs the scalar loop at C speed, ~10x faster than the math module. That
# is NumPy's behaviour, not its contract, so each function is probed once per process against the math
# module (float64) or ctypes (float32) on 20000 values spread like a sampler's inputs: a SIMD loop differs on
# 0.3-7% of such inputs (measured on AVX-512), so a probe that agrees everywhere means the scalar loop ran.
# A function whose probe differs (another NumPy, another CPU) keeps the per-element calls.

_PROBE = {"log": lambda u: u + 2.0 ** -60, "log1p": lambda u: -u, "exp": lambda u: (u - 0.5) * 60.0,
          "cos": lambda u: u * 7.0, "sin": lambda u: u * 7.0, "tan": lambda u: (u - 0.5) * np.pi,
          "logf": lambda u: u + 2.0 ** -30, "cosf": lambda u: u * 7.0, "sinf": lambda u: u * 7.0}
_SCALAR_LOOP = {}  # name -> does NumPy's overlapped call give the C library's values here?


def _overlapped(name, x):
    """NumPy's ufunc `name` over x with the output overlapping the input by one element (its scalar loop)."""
    buf = np.empty(x.size + 1, x.dtype)
    buf[1:] = x.reshape(-1)
    with np.errstate(all="ignore"):
        getattr(np, name.rstrip("f"))(buf[1:], out=buf[:-1])
    return buf[:-1].reshape(x.shape)


def _scalar_loop_ok(name):
    ok = _SCALAR_LOOP.get(name)
    if ok is None:
        u = np.random.default_rng(12345).random(20000)
        x = _PROBE[name](u).astype(np.float32 if name.endswith("f") else np.float64)
        want = _per_element(name, x)
        ok = _SCALAR_LOOP[name] = bool(np.array_equal(_overlapped(name, x).view(want.dtype), want))
    return ok


_MATH_DOMAIN = {"log": lambda x: x > 0, "log1p": lambda x: x > -1, "exp": lambda x: x < 709.0,
                "cos": np.isfinite, "sin": np.isfinite, "tan": np.isfinite}
_LIBM32 = {}


def _per_element(name, x):
    """The C library's `name` of each element, called from Python (math module for float64, else ctypes);
    float64 values outside the math module's domain (log(0) = -inf, exp overflow, inf, NaN) take NumPy's,
    which agree there."""
    if name.endswith("f"):
        fn = _LIBM32.get(name)
        if fn is None:
            import ctypes
            import ctypes.util

            lib = ctypes.CDLL(ctypes.util.find_library("m") or ctypes.util.find_library("c"))
            fn = _LIBM32[name] = getattr(lib, name)
            fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
        return np.fromiter(map(fn, x.reshape(-1).tolist()), np.float32, x.size).reshape(x.shape)
    ok = _MATH_DOMAIN[name](x)
    if ok.all():
        return np.fromiter(map(getattr(math, name), x.reshape(-1).tolist()), np.float64, x.size).reshape(x.shape)
    with np.errstate(all="ignore"):
        out = getattr(np, name)(x)
    out[ok] = _per_element(name, x[ok])
    return out


def libm(name, x):
    """The C library's float64 `name` (log, log1p, exp, cos, sin, tan) of array x, exactly (See NOTE [ The C
    library's scalar loop through NumPy ])."""
    x = np.asarray(x, np.float64)
    return _overlapped(name, x) if _scalar_loop_ok(name) else _per_element(name, x)


def libm32(name, x):
    """The C library's float32 `name` (logf, cosf, sinf) of float32 array x."""
    x = np.asarray(x, np.float32)
    return _overlapped(name, x) if _scalar_loop_ok(name) else _per_element(name, x)


def _capability():
    """torch's CPU capability on this machine: 'avx2' (AVX2 or AVX512 builds), 'default' (x86-64 without
    AVX2 + FMA) or 'arm' (aarch64 and others: the scalar kernels, with fma contraction)."""
    want = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return "arm"
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # pragma: no cover - NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    has_avx2 = bool(feats.get("AVX2") and feats.get("FMA3"))
    return "avx2" if has_avx2 and want != "default" else "default"


CAPABILITY = _capability()
FUSED = CAPABILITY != "default"  # does torch's build contract x * y + z into an fma?


# ---- the normal distribution -------------------------------------------------------------------------------
#
# NOTE [ torch's two normal samplers ]
# `normal_` on a contiguous tensor of >= 16 elements fills it with uniforms, then turns each block of 16
# into normals by Box-Muller (u1 = 1 - data[j], u2 = data[j + 8] give data[j] = r cos, data[j + 8] = r sin);
# when the size is not a multiple of 16, 16 fresh uniforms redo the last 16 elements. float32 goes through
# torch's AVX2 code, whose log and sincos are the Cephes polynomials of avx_mathfun.h evaluated in float32
# (with the compiler's fma contractions, reproduced below); float64, and float32 on builds without AVX2,
# use the C library's log/cos/sin (See NOTE [ Exact transcendental steps ]). Smaller or non-contiguous
# tensors use the scalar sampler: two float64 uniforms per pair (theta = 2 pi u1, r = sqrt(-2 log1p(-u2))),
# returning r cos and caching r sin in the generator for the next draw; the cache is part of the saved state.

_F = np.float32
_LOG_P = tuple(_F(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                               1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                               3.3333331174E-1))


def _log_f32(x):
    """natural log of positive float32 x, as avx_mathfun's log256_ps (Cephes logf)."""
    x = np.maximum(x, _F(1.17549435e-38))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(_F) + _F(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(_F)  # mantissa scaled into [0.5, 1)
    small = m < _F(0.707106781186547524)
    m = (m - _F(1)) + np.where(small, m, _F(0))
    e = e - small.astype(_F)
    z = m * m
    y = np.full_like(m, _LOG_P[0])
    for c in _LOG_P[1:]:
        y = fma32(y, m, c)
    y = fma32(y * m, z, e * _F(-2.12194440e-4))
    y = fma32(z, _F(-0.5), y)
    return fma32(e, _F(0.693359375), m + y)


def _sincos_f32(x):
    """(sin x, cos x) for float32 x >= 0, as avx_mathfun's sincos256_ps (Cephes sinf/cosf)."""
    j = (x * _F(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(_F)
    r = fma32(y, _F(-0.78515625), x)  # extended-precision reduction by pi/4
    r = fma32(y, _F(-2.4187564849853515625e-4), r)
    r = fma32(y, _F(-3.77489497744594108e-8), r)
    z = r * r
    c = fma32(np.full_like(z, _F(2.443315711809948E-005)), z, _F(-1.388731625493765E-003))
    c = fma32(c, z, _F(4.166664568298827E-002))
    c = fma32(c * z, z, -(z * _F(0.5))) + _F(1)
    s = fma32(np.full_like(z, _F(-1.9515295891E-4)), z, _F(8.3321608736E-3))
    s = fma32(s, z, _F(-1.6666654611E-1))
    s = fma32(s * z, r, r)
    first = (j & 2) == 0
    sin = np.where(first, s, c)
    cos = np.where(first, c, s)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j - 2) & 4) == 0, -cos, cos)
    return sin, cos


def _scale(out, mean, std, fused):
    """out * std + mean in out's dtype, rounded once (`fused`) or twice."""
    if (mean, std) == (0, 1):
        return out
    if out.dtype == np.float32:
        return fma32(out, _F(std), _F(mean)) if fused else (out * _F(std)) + _F(mean)
    return fma64(out, std, mean) if fused else out * std + mean


def _box_muller_blocks(u, mean, std):
    """torch's normal_fill_16 over consecutive blocks of 16 uniforms (float32 on AVX2/AVX512 builds: the
    AVX2 variant; otherwise the scalar one, with the C library's functions in the dtype)."""
    d = u.reshape(-1, 2, 8)
    if u.dtype == np.float32 and CAPABILITY == "avx2":
        radius = np.sqrt(_F(-2) * _log_f32(_F(1) - d[:, 0]))
        sin, cos = _sincos_f32(_F(2 * np.pi) * d[:, 1])
        out = np.concatenate([radius * cos, radius * sin], axis=1)
        return out if (mean, std) == (0, 1) else fma32(out, _F(std), _F(mean))
    if u.dtype == np.float32:  # theta = 2.0f * pi<double> * u2 is a double product stored as float
        radius = np.sqrt(_F(-2) * libm32("logf", _F(1) - d[:, 0]))
        theta = (2 * np.pi * d[:, 1].astype(np.float64)).astype(_F)
        out = np.concatenate([radius * libm32("cosf", theta), radius * libm32("sinf", theta)], axis=1)
        return _scale(out, mean, std, True)
    radius = np.sqrt(-2 * libm("log", 1 - d[:, 0]))
    theta = 2 * np.pi * d[:, 1]
    out = np.concatenate([radius * libm("cos", theta), radius * libm("sin", theta)], axis=1)
    return _scale(out, mean, std, True)  # fused in every build of torch 2.13 (measured: also DEFAULT)


def normal_fill(gen, n, np_float, mean, std, reduced=False):
    """n >= 16 normals from torch's vectorised sampler; `np_float` is float32 or float64. For float16 and
    bfloat16 (`reduced`, computed in float32) torch draws uniforms for the whole blocks only."""
    full = n - n % 16
    u = gen._uniform_float(full if reduced else n) if np_float == np.float32 else gen._uniform_double(n)
    out = np.empty(n, np_float)
    out[:full] = chunked(lambda v: _box_muller_blocks(v, mean, std), u[:full], np_float)
    if n % 16:
        tail = gen._uniform_float(16) if np_float == np.float32 else gen._uniform_double(16)
        out[n - 16:] = _box_muller_blocks(tail, mean, std).reshape(-1)
    return out


def normal_scalar(gen, n, mean=0.0, std=1.0):
    """n float64 normals from torch's scalar sampler (Box-Muller with the generator's cached value)."""
    out = np.empty(n)
    k = 0
    if n and gen._normal_double is not None:
        out[0], gen._normal_double, k = gen._normal_double, None, 1
    pairs = (n - k + 1) // 2
    u = gen._uniform_double(2 * pairs)
    r = np.sqrt(-2.0 * libm("log1p", -u[1::2]))
    theta = 2.0 * np.pi * u[0::2]
    z = np.empty(2 * pairs)
    z[0::2], z[1::2] = r * libm("cos", theta), r * libm("sin", theta)
    out[k:] = z[:n - k]
    if (n - k) % 2:
        gen._normal_double = float(z[-1])
    return _scale(out, mean, std, FUSED)
