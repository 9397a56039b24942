"""Random sampling: rand/randn/randint/randperm (and _like), bernoulli, multinomial, normal, poisson, and the
in-place initialisers uniform_, normal_, exponential_, geometric_, log_normal_, cauchy_, random_.

Every sampler takes `generator=` (default: `ember.default_generator`) and draws from it exactly as torch's
CPU kernels draw from theirs, so a seeded script gets torch's numbers where the transformation can be
reproduced (see NOTE [ Matching torch's CPU stream ] and NOTE [ Which samplers match torch's stream ]
in ember/_generator.py). Creation ops have kind CREATION and no
backward node; the in-place initialisers are POINTWISE ops whose backward (as in torch) is zero, so that
`x = y * 2; x.normal_()` records `NormalBackward0`.
"""

import functools
import math
import warnings
from operator import index

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._device import check_device
from .._dispatch import (
    CREATION,
    FALLBACK,
    FLOATING,
    FLOATING_COMPLEX,
    INTEGRAL,
    POINTWISE,
    REAL,
    _modes,
    defop,
    dispatch,
    dispatch_inplace,
    dtype_word,
    require_op_dtype,
    run_meta,
)
from .._generator import (
    DRAW_LOCK,
    FUSED,
    Generator,
    chunked,
    default_generator,
    fma32,
    fma64,
    libm,
    normal_fill,
    normal_scalar,
)
from .._meta import (
    MetaArray,
    NoData,
    broadcast_error,
    broadcast_shapes,
    contiguous_strides,
    like_strides,
    meta_array,
    no_data,
    pointwise_strides,
)
from .._size import Size
from .._tensor import Tensor, _wrap
from ._util import finish_out, method, per_sample, public
from .creation import empty_like

# NOTE [ Samplers on meta tensors ]
# torch's samplers on meta tensors return meta tensors and leave the generator alone. A kernel learns that
# its payload is meta when it first touches it (NOTE [ Meta payloads ]), so every sampling kernel touches
# its data before it draws: `_in_order` and the kernels that draw into fresh memory call `_no_meta` first.
# The meta rules below give torch's meta outputs; factories with device="meta" run the rule directly.


def _seeded(name, node_name=None, kind=CREATION, **kw):
    """`defop` for an op that draws from a generator: every op declared here takes one (a param, `gen`) and
    carries the tag `nondeterministic_seeded` (its outputs depend on the generator's state, not only on its
    inputs: a tracer must not fold it, and a replay must feed it the same generator). Its kernel runs
    holding the generators' lock (NOTE [ Draws are atomic ])."""
    declare = defop(name, node_name, kind, tags=("nondeterministic_seeded",), **kw)

    def deco(kernel):
        @functools.wraps(kernel)
        def locked(*args, **kwargs):
            with DRAW_LOCK:
                return kernel(*args, **kwargs)
        return declare(locked)
    return deco


def _no_meta(*arrays):
    """Refuse meta payloads before anything is drawn (NOTE [ Samplers on meta tensors ])."""
    for a in arrays:
        if type(a) is MetaArray:
            raise NoData()


def _same_as_self(a, *params):
    """An in-place sampler's output: self's own layout."""
    if not no_data(a):  # (a meta argument, such as bernoulli_'s p, beside a CPU self)
        raise NotImplementedError("Cannot inplace into non-meta tensor with meta tensor argument")
    return meta_array(a.shape, a._data.dtype, a.stride())


# ---- drawing values in torch's order ---------------------------------------------------------------------


def _gen(generator, name="generator"):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{name}(): argument 'generator' must be torch.Generator, not {type(generator).__name__}")
    return generator


def _in_order(a, draw):
    """An array shaped like `a` holding `draw(a.size)` laid out in `a`'s memory order (TensorIterator's
    order for an output with these strides)."""
    _no_meta(a)
    if a.ndim <= 1 or a.flags.c_contiguous:
        return draw(a.size).reshape(a.shape)
    perm = sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]))
    vals = draw(a.size).reshape([a.shape[i] for i in perm])
    return vals.transpose(np.argsort(perm))


def _real_dtype(d):
    return np.dtype(np.float32 if d == np.complex64 else np.float64) if d.kind == "c" else d


def _uniform_values(gen, n, d, lo=0.0, hi=1.0):
    """n uniforms in [lo, hi) of NumPy float dtype d, as torch's uniform_ kernel."""
    if d == np.float64:
        u = gen._uniform_double(n)
        return u if (lo, hi) == (0, 1) else chunked(lambda v: _mul_add(v, hi - lo, lo), u, np.float64)
    u = gen._uniform_float(n)
    if (lo, hi) != (0, 1):
        if d.itemsize == 2:
            lo, hi = float(np.asarray(lo, d)), float(np.asarray(hi, d))
        flo, fhi = np.float32(lo), np.float32(hi)
        u = chunked(lambda v: fma32(v, fhi - flo, flo) if FUSED else v * (fhi - flo) + flo, u, np.float32)
    return u.astype(d, copy=False)


def _normal_values(gen, n, d, mean, std, contiguous):
    """n normals of NumPy float dtype d, as torch's normal_ kernel (see NOTE [ torch's two normal samplers ])."""
    if contiguous and n >= 16:
        if d == np.float64 or d == np.float32:
            return normal_fill(gen, n, d, mean, std)
        return normal_fill(gen, n, np.dtype(np.float32), mean, std, reduced=True).astype(d)
    return _from_double(normal_scalar(gen, n, mean, std), d)


def _complex_aware(a, fill):
    """Run `fill(real_array)` on `a`, seen as pairs of reals when complex (torch samples view_as_real)."""
    if a.dtype.kind != "c":
        return fill(a)
    r = fill(a[..., None].view(_real_dtype(a.dtype)))
    return (r[..., 0] + 1j * r[..., 1]).astype(a.dtype)


def _not_implemented(kernel_name, d):
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{dtype_word(_dtypes.from_numpy(d))}\'')


# NOTE [ Samplers' dtypes ]
# Each sampler declares the dtypes torch's kernel fills (`defop(..., dtypes=, error=)`, NOTE [ Accepted
# dtypes ]). Most of torch's check it inside the kernel's loop, so an empty tensor of any dtype passes
# (`empty_ok=True`); uniform_, cauchy_, poisson and random_(from, to) check before it. The creation ops
# (rand, randn, the _like forms) fill a dtype given as a param with the in-place op's kernel and check it
# against that op's declaration (`_require`).

def _require(op, a):
    """A creation kernel's check of the array it fills against the in-place op whose kernel it runs."""
    require_op_dtype(op, _dtypes.from_numpy(a.dtype), empty=a.size == 0)


# ---- uniform ------------------------------------------------------------------------------------------------

def _uniform_kernel(a, gen, lo, hi):
    return _complex_aware(a, lambda r: _in_order(r, lambda n: _uniform_values(gen, n, r.dtype, lo, hi)))


@_seeded("uniform_", "UniformBackward0", POINTWISE, saves="none", dtypes=FLOATING_COMPLEX,
         error="check_uniform_bounds")
def _uniform(a, gen, lo, hi):
    return _uniform_kernel(a, gen, lo, hi)


@_uniform.derivative_
def _(g, a, gen, lo, hi):
    return g.new_zeros(g.shape)


_uniform.meta_(_same_as_self)


def uniform_(self, from_=0, to=1, *, generator=None, **kw):
    """Fill self with numbers drawn uniformly from [from, to)."""
    from_ = kw.pop("from", from_)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > "
                           f"to={_num(to)}")
    return dispatch_inplace(_uniform, self, (self,), (_gen(generator), float(from_), float(to)))


def _num(x):
    """A number printed the way torch's C++ prints a double."""
    return f"{x:g}" if isinstance(x, float) else str(x)


@_seeded("rand", None, CREATION)
def _rand(shape, d, gen):
    a = np.empty(shape, d)
    _require(_uniform, a)
    return _uniform_kernel(a, gen, 0.0, 1.0)


_rand.meta_(lambda shape, d, gen: meta_array(shape, d))


# ---- normal ---------------------------------------------------------------------------------------------

def _normal_kernel(a, gen, mean, std):
    if a.dtype.kind == "c":
        std = std / math.sqrt(2)
    contiguous = a.flags.c_contiguous
    return _complex_aware(a, lambda r: _in_order(
        r, lambda n: _normal_values(gen, n, r.dtype, mean, std, contiguous)))


@_seeded("normal_", "NormalBackward0", POINTWISE, saves="none", dtypes=FLOATING_COMPLEX,
         error="normal_kernel_cpu", empty_ok=True)
def _normal(a, gen, mean, std):
    return _normal_kernel(a, gen, mean, std)


_normal.meta_(_same_as_self)


@_normal.derivative_
def _(g, a, gen, mean, std):
    return g.new_zeros(g.shape)


def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def normal_(self, mean=0, std=1, *, generator=None):
    """Fill self with samples of the normal distribution N(mean, std**2)."""
    _check_std(std)
    return dispatch_inplace(_normal, self, (self,), (_gen(generator), float(mean), float(std)))


@_seeded("randn", None, CREATION)
def _randn(shape, d, gen, mean=0.0, std=1.0):
    a = np.empty(shape, d)
    _require(_normal, a)
    return _normal_kernel(a, gen, mean, std)


_randn.meta_(lambda shape, d, gen, mean=0.0, std=1.0: meta_array(shape, d))


# ---- exponential, geometric, log-normal, cauchy: one float64 uniform per element ----------------------------

def _per_uniform(name, node, transform, dtypes, error, empty_ok=True):
    """An in-place op drawing one float64 uniform u per element and storing transform(u, *args)."""
    def kernel(a, gen, *args):
        return _in_order(a, lambda n: _from_double(transform(gen._uniform_double(n), *args), a.dtype))
    op = _seeded(name, node, POINTWISE, saves="none", dtypes=dtypes, error=error, empty_ok=empty_ok)(kernel)
    op.derivative_(lambda g, a, *rest: g.new_zeros(g.shape))
    op.meta_(_same_as_self)
    return op


def _from_double(v, d):
    """float64 values cast to dtype d as C++ does: float16 and bfloat16 convert through float32."""
    if d.kind in "fV" and d.itemsize == 2 or d.name == "bfloat16":
        return v.astype(np.float32).astype(d)
    return v.astype(d)


def _continuous_only(what, word=dtype_word):
    """torch's error for a continuous distribution asked for dtype d (named by `word(d)`)."""
    return lambda d, *args: RuntimeError(f"{what} distribution is a continuous probability distribution. dtype "
                                         f"must be a floating point but you specified {word(d)}")


def _c_type(d):
    """The C++ type torch's message names for ember dtype d (cauchy_ prints it)."""
    return {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}[d.name]


_exponential = _per_uniform("exponential_", "ExponentialBackward0",
                            lambda u, lambd: -1.0 / lambd * libm("log1p", -u),
                            FLOATING, _continuous_only("Exponential"))
_geometric = _per_uniform("geometric_", "GeometricBackward0",
                          lambda u, p: np.ceil(libm("log", u) / math.log1p(-p)), INTEGRAL | FLOATING, "geometric_cpu")
_cauchy = _per_uniform("cauchy_", "CauchyBackward0",
                       lambda u, median, sigma: _mul_add(libm("tan", np.pi * (u - 0.5)), sigma, median),
                       FLOATING, _continuous_only("Cauchy", _c_type), empty_ok=False)


def _mul_add(x, a, b):
    """x * a + b in float64, contracted to an fma where torch's build contracts it."""
    return fma64(x, a, b) if FUSED else x * a + b


def exponential_(self, lambd=1, *, generator=None):
    """Fill self with samples of the exponential distribution with rate `lambd`."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return dispatch_inplace(_exponential, self, (self,), (_gen(generator), float(lambd)))


def geometric_(self, p, *, generator=None):
    """Fill self with samples of the geometric distribution (number of trials to the first success)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return dispatch_inplace(_geometric, self, (self,), (_gen(generator), float(p)))


def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fill self with samples of the Cauchy distribution."""
    return dispatch_inplace(_cauchy, self, (self,), (_gen(generator), float(median), float(sigma)))


@_seeded("log_normal_", "LogNormalBackward0", POINTWISE, saves="none", dtypes=FLOATING,
         error="log_normal_cpu", empty_ok=True)
def _log_normal(a, gen, mean, std):
    return _in_order(a, lambda n: _from_double(libm("exp", normal_scalar(gen, n, mean, std)), a.dtype))


@_log_normal.derivative_
def _(g, a, gen, mean, std):
    return g.new_zeros(g.shape)


_log_normal.meta_(_same_as_self)


def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fill self with samples of exp(N(mean, std**2))."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    return dispatch_inplace(_log_normal, self, (self,), (_gen(generator), float(mean), float(std)))


# ---- random_ / randint: integers ---------------------------------------------------------------------------

_CTYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
          "int64": "long int"}
_FLOAT_DIGITS = {"float16": (11, "c10::Half"), "bfloat16": (8, "c10::BFloat16"), "float32": (24, "float"),
                 "float64": (53, "double")}
_U64 = np.uint64


def _random_kernel(a, gen, lo, rng):
    """lo + w % rng per element (w one word, or two when rng needs 64 bits); rng None: torch's random_()."""
    if rng is None:
        return _in_order(a, lambda n: _full_random(gen, n, a.dtype))

    def draw(n):
        w = gen._random(n) if rng < 2 ** 32 else gen._random64(n)
        if rng < 2 ** 64:
            w = w % _U64(rng) + _U64(lo % 2 ** 64)  # wraps like torch's uint64 arithmetic
        v = w.view(np.int64)
        return (v != 0) if a.dtype == np.bool_ else v.astype(a.dtype)
    return _in_order(a, draw)


def _full_random(gen, n, d):
    if n == 0:  # (an empty tensor of any dtype: nothing drawn, NOTE [ Samplers' dtypes ])
        return np.empty(0, d)
    name = d.name
    if name == "bool":
        return (gen._random(n) & _U64(1)).astype(np.bool_)
    if name in _FLOAT_DIGITS:
        digits = _FLOAT_DIGITS[name][0]
        w = gen._random64(n) if name == "float64" else gen._random(n)
        return (w % _U64(2 ** digits + 1)).astype(d)
    w = gen._random64(n) if name == "int64" else gen._random(n)
    return (w % _U64(int(np.iinfo(d).max) + 1)).astype(d)


def _random_bounds_error(d, *args):
    return RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")


def _random_op(node, overload):
    full = overload == ""  # (random_(): its kernel checks; random_(from, to): check_random_bounds, first)
    op = _seeded("random_", node, POINTWISE, saves="none", overload=overload,
                 dtypes=REAL, error="random_kernel_cpu" if full else _random_bounds_error, empty_ok=full)(
        _random_kernel)
    op.derivative_(lambda g, a, *rest: g.new_zeros(g.shape))
    op.meta_(_same_as_self)
    return op


_random_from_to, _random_to, _random_full = (_random_op(f"RandomBackward{i}", o)
                                             for i, o in enumerate(("from", "to", "")))


def _check_from_to(d, lo, to):
    """torch's range checks for random_(from, to) on NumPy dtype d; returns the range size."""
    if to is None and d.kind == "c":
        require_op_dtype(_random_from_to, _dtypes.from_numpy(d))
    if to is None:
        to = (2 ** _FLOAT_DIGITS[d.name][0] if d.name in _FLOAT_DIGITS else int(np.iinfo(d).max)
              if d.kind != "b" else 1) + 1
    if lo >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={to}")
    require_op_dtype(_random_from_to, _dtypes.from_numpy(d))
    if d.name in _FLOAT_DIGITS:
        digits, word = _FLOAT_DIGITS[d.name]
        for what, v in (("from", lo), ("to - 1", to - 1)):
            if not -2 ** digits <= v <= 2 ** digits:
                warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{word} can support discrete uniform distribution only within this range. This "
                              "warning will become an error in version 1.7 release, please fix the code in advance",
                              UserWarning, stacklevel=4)
    elif d.kind in "iub":
        info = (0, 1) if d.kind == "b" else (int(np.iinfo(d).min), int(np.iinfo(d).max))
        for what, v in (("from", lo), ("to - 1", to - 1)):
            if not info[0] <= v <= info[1]:
                raise RuntimeError(f"{what} is out of bounds for {_CTYPE[d.name]}")
    return to - lo


def random_(self, *args, generator=None, **kwargs):
    """random_(from, to) / random_(to) / random_(): integers drawn uniformly from [from, to - 1]
    (default: [0, 2**mantissa] for floating types, [0, max] for integral ones)."""
    if "from" in kwargs or len(args) == 2:
        lo = kwargs.pop("from", args[0] if args else 0)
        to = kwargs.pop("to", args[1] if len(args) == 2 else None)
        op = _random_from_to
    elif args or "to" in kwargs:
        lo, to, op = 0, kwargs.pop("to", args[0] if args else None), _random_to
    else:
        op = _random_full
    gen = _gen(generator)
    if op is _random_full:
        return dispatch_inplace(op, self, (self,), (gen, 0, None))
    if lo == -2 ** 63 and to is None:  # torch's full 64-bit range kernel
        return dispatch_inplace(op, self, (self,), (gen, lo, 2 ** 64))
    try:
        lo, to = index(lo), None if to is None else index(to)
    except TypeError as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    rng = _check_from_to(self._data.dtype, lo, to)
    return dispatch_inplace(op, self, (self,), (gen, lo, rng))


@_seeded("randint", None, CREATION)
def _randint(shape, d, gen, lo, rng):
    return _random_kernel(np.empty(shape, d), gen, lo, rng)


_randint.meta_(lambda shape, d, gen, lo, rng: meta_array(shape, d))


# ---- randperm ---------------------------------------------------------------------------------------------

# NOTE [ Vectorised Fisher-Yates ]
# torch's randperm swaps r[i] and r[j_i] (j_i = i + random() % (n - i)) for i = 0 .. n-2, one after the
# other. Tracing position k backwards through the swaps gives the value it ends with, without running
# them: swaps after step k never touch k (their targets are > k); step k moves the search to j_k; before
# that, the search at position p moves to the latest earlier step t with j_t == p, and once it sits at such
# a step t (p == t) it keeps moving to nxt[t] = the latest step t' < t with j_t' == t. So, with
# first[k] = the latest step before k with the same target as k (j_{n-1} = n-1 for the last position):
# r[k] = j_k if first[k] is none, else the end of the nxt chain starting at first[k]. `first` and `nxt`
# come from one sort of the (target, step) pairs, chain ends from pointer jumping (log n gathers).


def _fisher_yates(j):
    n = j.size
    idx = np.arange(n, dtype=np.int64)
    keys = np.sort(j * n + idx)  # (target, step) pairs in order; unique keys, so any sort is stable
    js, steps = np.divmod(keys, n)
    same = js[1:] == js[:-1]
    first = np.full(n, -1, np.int64)
    first[steps[1:]] = np.where(same, steps[:-1], -1)
    ends = np.flatnonzero(np.append(~same, True))  # the last (latest) step of each target group
    target, last = js[ends], steps[ends]
    before_last = np.where(np.append(False, same)[ends], steps[ends - 1], -1)
    nxt = np.full(n, -1, np.int64)
    nxt[target] = np.where(last < target, last, before_last)  # the step j_t == t itself does not count
    root = np.where(nxt < 0, idx, nxt)
    while True:
        hop = root[root]
        if np.array_equal(hop, root):
            break
        root = hop
    return np.where(first < 0, j, root[np.maximum(first, 0)])


@_seeded("randperm", None, CREATION)
def _randperm(n, d, gen):
    """torch's CPU randperm: r[i] swapped with r[i + random() % (n - i)] for i = 0 .. n-2."""
    if n < 2:
        return np.arange(n, dtype=np.int64).astype(d)
    words = gen._random(n - 1) if n < 0xFFFFFFFF // 20 else gen._random64(n - 1)
    offs = words % np.arange(n, 1, -1, dtype=np.uint64)
    if n < 64:  # a few swaps in Python beat the vectorised passes
        perm = list(range(n))
        for i, z in enumerate(offs.tolist()):
            perm[i], perm[i + z] = perm[i + z], perm[i]
        return np.array(perm, np.int64).astype(d, copy=False)
    j = np.arange(n, dtype=np.int64)
    j[:-1] += offs.astype(np.int64)
    return _fisher_yates(j).astype(d, copy=False)  # See NOTE [ Vectorised Fisher-Yates ]


_randperm.meta_(lambda n, d, gen: meta_array((n,), d))


def _check_randperm(n, d):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if d.kind in "iu" and n > 0 and n - 1 > np.iinfo(d).max:
        raise RuntimeError(f"value cannot be converted to type {d.name}_t without overflow")
    if d.name == "float32" and n > 2 ** 24 + 1:
        raise RuntimeError("n cannot be greater than 2^24+1 for Float type.")
    if d.name == "float16" and n > 2 ** 11 + 1:
        raise RuntimeError(f"n cannot be greater than {2 ** 11 + 1} for Half type.")


# ---- bernoulli ---------------------------------------------------------------------------------------------

def _expand_p(p, shape):
    try:
        return np.broadcast_to(p, shape) if p.shape != shape else p
    except ValueError:
        i = next(k for k in range(1, len(p.shape) + 1) if p.shape[-k] not in (1, shape[-k] if k <= len(shape)
                                                                             else -1))
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[-i] if i <= len(shape) else -1}) must match the existing "
            f"size ({p.shape[-i]}) at non-singleton dimension {len(shape) - i}.  Target sizes: {list(shape)}.  "
            f"Tensor sizes: {list(p.shape)}") from None


def _bernoulli_tensor_kernel(a, p, gen):
    """u < p per element: u a float uniform (a double one when p is float64), in `a`'s memory order. (Self's
    dtype is declared by the ops; p's is checked here, after it, as torch's kernel nests the two.)"""
    _no_meta(a, p)
    if a.size == 0:
        return a.copy()
    if not (p.dtype.kind == "f" or p.dtype.kind == "V"):
        raise _not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
    if not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")
    p = _expand_p(p, a.shape)
    if p.dtype == np.float64:
        u = _in_order(a, gen._uniform_double)
    else:
        u, p = _in_order(a, gen._uniform_float), p.astype(np.float32)
    return (u < p).astype(a.dtype)


_BERNOULLI = dict(dtypes=REAL, error="bernoulli_tensor_cpu_self_", empty_ok=True)


@_seeded("bernoulli", "BernoulliBackward0", POINTWISE, saves="none", **_BERNOULLI)
def _bernoulli(p, gen):
    _no_meta(p)
    return _bernoulli_tensor_kernel(np.empty(p.shape, p.dtype), p, gen)


@_seeded("bernoulli_", "BernoulliBackward1", POINTWISE, saves="none", overload="Tensor", **_BERNOULLI)
def _bernoulli_tensor_(a, p, gen):
    return _bernoulli_tensor_kernel(a, p, gen)


def _bernoulli_scalar_kernel(a, gen, p):
    """u < p per element with u a double uniform (torch's kernel where it does not call MKL)."""
    return _in_order(a, lambda n: gen._uniform_double(n) < p).astype(a.dtype)


_BERNOULLI_SCALAR = dict(dtypes=REAL, error="bernoulli_scalar_cpu_", empty_ok=True)
_bernoulli_scalar_ = _seeded("bernoulli_", "BernoulliBackward2", POINTWISE, saves="none", overload="float",
                           **_BERNOULLI_SCALAR)(_bernoulli_scalar_kernel)


@_seeded("bernoulli", None, POINTWISE, overload="p", **_BERNOULLI_SCALAR)
def _bernoulli_p(a, gen, p):
    _no_meta(a)
    return _bernoulli_scalar_kernel(np.empty(a.shape, a.dtype), gen, p)


_bernoulli.derivative_(lambda g, p, gen: g.new_zeros(g.shape))
_bernoulli_tensor_.derivative_(lambda g, a, p, gen: (g.new_zeros(g.shape), g.new_zeros(g.shape)))
_bernoulli_scalar_.derivative_(lambda g, a, gen, p: g.new_zeros(g.shape))
# (bernoulli's fresh output is contiguous on meta; the in-place forms keep self)
_bernoulli.meta_(lambda p, gen: meta_array(p.shape, p._data.dtype))
_bernoulli_p.meta_(lambda a, gen, p: meta_array(a.shape, a._data.dtype))
_bernoulli_p.refuses_(FALLBACK, "bernoulli")  # NOTE [ What torch's autograd refuses ] in ember/autograd/graph.py
_bernoulli_tensor_.meta_(mixed_devices=True)(_same_as_self)  # (p may be a CPU tensor, as in torch)
_bernoulli_scalar_.meta_(_same_as_self)


def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")


@method()
def bernoulli(input, p=None, *, generator=None, out=None):
    """Draw 0/1 with probability given by `input` (or, with `p`, by the constant p) per element."""
    gen = _gen(generator, "bernoulli")
    if p is None:
        r = dispatch(_bernoulli, (input,), (gen,))
    else:
        _check_p(p)
        if _modes:  # NOTE [ Ops torch's forward AD refuses ]
            from ..autograd._jvp import check_composite
            check_composite("bernoulli.p", input)
        r = dispatch(_bernoulli_p, (input,), (gen, float(p)))
    return finish_out(r, out)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill self with 0/1 drawn with probability `p` (a number or a tensor broadcastable to self)."""
    gen = _gen(generator, "bernoulli_")
    if isinstance(p, Tensor):
        return dispatch_inplace(_bernoulli_tensor_, self, (self, p), (gen,))
    _check_p(p)
    return dispatch_inplace(_bernoulli_scalar_, self, (self,), (gen, float(p)))


# ---- multinomial ---------------------------------------------------------------------------------------------

@_seeded("multinomial", None, "other")
def _multinomial(p, n, replacement, gen):
    rows = p.reshape(-1, p.shape[-1])
    if replacement and n > 1:
        out = _multinomial_cdf(rows, n, gen)
    else:
        # torch's fast path: argmax / top-n of p / Exp(1) (the exponential race, Gumbel-max in disguise)
        q = _in_order(np.empty(rows.shape, rows.dtype), lambda k: -libm("log1p", -gen._uniform_double(k)))
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (rows / q.astype(rows.dtype)).astype(rows.dtype)
        if n == 1:
            out = np.argmax(q, axis=-1)[:, None]
        else:
            from .sorting import _topk_rows

            out = _topk_rows(q, n, True, True)  # torch: q.topk(n), with its tie order
    return out.astype(np.int64).reshape(p.shape[:-1] + (n,))


_multinomial.meta_(lambda p, n, replacement, gen: meta_array(tuple(p.shape[:-1]) + (n,), _dtypes.int64))


def _multinomial_cdf(rows, n, gen):
    """torch's sampling with replacement: a float64 uniform per sample, binary-searched in the row's
    normalised running sum (accumulated in the input dtype, last bucket forced to 1)."""
    negative = ~(rows >= 0)  # (NaN included: torch checks `val >= 0`, then isinf/isnan, entry by entry)
    bad = negative | np.isinf(rows)
    if bad.any():
        first = np.flatnonzero(bad)[0]
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)"
                           if negative.reshape(-1)[first] else
                           "invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    cum = np.cumsum(rows, axis=-1, dtype=rows.dtype)
    if not (cum[:, -1] > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    cum = (cum / cum[:, -1:]).astype(rows.dtype)
    cum[:, -1] = 1
    u = gen._uniform_double(rows.shape[0] * n).reshape(rows.shape[0], n)
    return np.stack([np.searchsorted(c.astype(np.float64), r, side="left") for c, r in zip(cum, u)])


@method()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Sample `num_samples` category indices per row of probabilities `input` (rows need not sum to 1)."""
    a = input._data
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not (a.dtype.kind == "f" or a.dtype.kind == "V"):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dtype_word(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > a.shape[-1] and type(a) is not MetaArray:  # (torch's meta: no check)
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if a.shape[-1] > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    if (not replacement or num_samples == 1) and type(a) is not MetaArray:  # (values: none to check on meta)
        if not (np.isfinite(a).all() and (a >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (a.reshape(-1, a.shape[-1]).sum(-1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    r = dispatch(_multinomial, (input.detach(),), (int(num_samples), bool(replacement), _gen(generator)))
    return finish_out(r, out)


# ---- normal (functional) and poisson ---------------------------------------------------------------------

_NORMAL = dict(dtypes=FLOATING_COMPLEX, error="normal_kernel_cpu", empty_ok=True)  # (the output's dtype: mean's)


@_seeded("normal", "NormalBackward1", POINTWISE, saves="none", overload="Tensor_float", **_NORMAL)
def _normal_tensor_float(mean, gen, std):
    _no_meta(mean)
    return _normal_kernel(np.empty(mean.shape, mean.dtype), gen, 0.0, std) + mean


@_normal_tensor_float.derivative_
def _(g, mean, gen, std):
    return g.new_zeros(g.shape)  # torch treats the sample as not differentiable in mean too


@_seeded("normal", "NormalBackward2", POINTWISE, saves="none", overload="float_Tensor", **_NORMAL)
def _normal_float_tensor(std, gen, mean):
    _no_meta(std)
    r = _normal_kernel(np.empty(std.shape, std.dtype), gen, 0.0, 1.0)
    return r * std + np.asarray(mean, std.dtype)


@_normal_float_tensor.derivative_
def _(g, std, gen, mean):
    return g.new_zeros(g.shape)


@_seeded("normal", "NormalBackward3", POINTWISE, saves="none", overload="Tensor_Tensor", **_NORMAL)
def _normal_tensor_tensor(mean, std, gen):
    _no_meta(mean, std)
    shape = np.broadcast_shapes(mean.shape, std.shape)
    r = _normal_kernel(np.empty(shape, mean.dtype), gen, 0.0, 1.0)
    r = (r * std).astype(mean.dtype, copy=False)
    return (r + mean).astype(mean.dtype, copy=False)


@_normal_tensor_tensor.derivative_
def _(g, mean, std, gen):
    return g.new_zeros(g.shape), g.new_zeros(g.shape)


def _normal_meta(mean, std):
    """torch's meta normal is `std * sample + mean` with a contiguous sample: std's layout leads."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    strides = contiguous_strides(shape)
    if isinstance(std, Tensor):
        strides = pointwise_strides(shape, [(tuple(std.shape), std.stride()), (shape, strides)])
    return meta_array(shape, tensors[0]._data.dtype, strides)


_normal_tensor_float.meta_(lambda mean, gen, std: _normal_meta(mean, std))
_normal_float_tensor.meta_(lambda std, gen, mean: _normal_meta(mean, std))
_normal_tensor_tensor.meta_(lambda mean, std, gen: _normal_meta(mean, std))


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Samples of N(mean, std**2): `mean` and/or `std` tensors (broadcast together), or numbers with `size`."""
    gen = _gen(generator, "normal")
    if isinstance(std, Tensor) and std.is_complex():
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if _modes and isinstance(std, Tensor):  # (the std >= 0 check reads the data: NOTE [ Composites that
        r = per_sample(normal, (mean, std), {"generator": generator}, random=True)  # read data under vmap ])
        if r is not NotImplemented:
            return finish_out(r, out)
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        if not no_data(std) and float(std._data.min(initial=0)) < 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
        err = broadcast_error((mean._data.shape, std._data.shape))
        if err:
            raise err
        r = dispatch(_normal_tensor_tensor, (mean, std), (gen,))
    elif isinstance(mean, Tensor):
        _check_std(std)
        r = dispatch(_normal_tensor_float, (mean,), (gen, float(std)))
    elif isinstance(std, Tensor):
        if std._data.size and not no_data(std) and float(std._data.min()) < 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
        r = dispatch(_normal_float_tensor, (std,), (gen, float(mean)))
    else:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected one of: (Tensor mean, Tensor std), (Tensor mean, float std), "
                            "(float mean, Tensor std), (float mean, float std, tuple of ints size)")
        _check_std(std)
        return _create(_randn, "normal", (size,), dtype, out, requires_grad, device, (gen, float(mean), float(std)))
    return finish_out(r, out)


# ---- creation functions ----------------------------------------------------------------------------------

def _size(name, size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    shape = []
    try:
        for s in size:
            if isinstance(s, Tensor) and s._data.size == 1 and s._data.dtype.kind in "iu":
                s = int(s._data)
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                                f"{type(s).__name__}")
            shape.append(int(s))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
    return tuple(shape)


def _finish(t, requires_grad):
    if requires_grad:
        if not (t.is_floating_point() or t.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _create(op, name, size, dtype, out, requires_grad, device, params, default=None):
    """Run creation op `op` for `size` (ints, tuple or Size) and honour dtype / out / requires_grad."""
    meta = check_device(device)
    shape = _size(name, size)
    if out is not None and dtype is None:
        dtype = out.dtype
    elif out is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {dtype_word(dtype)} does not match dtype of out parameter "
                           f"({dtype_word(out.dtype)})")
    d = dtype if dtype is not None else (default or _dtypes.get_default_dtype())
    params = (shape, _dtypes.to_numpy(d)) + tuple(params)
    t = _wrap(run_meta(op, (), params)) if meta else dispatch(op, (), params)  # (NOTE [ Creating meta tensors ])
    if out is not None:
        return finish_out(t, out)
    return _finish(t, requires_grad)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kwargs):
    """Uniform samples from [0, 1); ``manual_seed(s)`` then ``rand`` gives torch's numbers."""
    size = (kwargs.pop("size"),) if "size" in kwargs else size
    return _create(_rand, "rand", size, dtype, out, requires_grad, device, (_gen(generator, "rand"),))


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kwargs):
    """Standard normal samples; ``manual_seed(s)`` then ``randn`` gives torch's numbers."""
    size = (kwargs.pop("size"),) if "size" in kwargs else size
    return _create(_randn, "randn", size, dtype, out, requires_grad, device, (_gen(generator, "randn"),))


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False, **kwargs):
    """randint(low=0, high, size): integers drawn uniformly from [low, high); int64 unless `dtype`."""
    low, high, size = _randint_args("randint", args, kwargs)
    d = dtype if dtype is not None else (out.dtype if out is not None else _dtypes.int64)
    rng = _check_from_to(_dtypes.to_numpy(d), low, high)
    return _create(_randint, "randint", (size,), d, out, requires_grad, device,
                   (_gen(generator, "randint"), low, rng))


def _randint_args(name, args, kwargs):
    args = list(args)
    if "low" in kwargs or "high" in kwargs or "size" in kwargs:
        low = kwargs.pop("low", 0)
        high = kwargs.pop("high", args.pop(0) if args else None)
        size = kwargs.pop("size", args.pop(0) if args else None)
    elif len(args) == 3:
        low, high, size = args
    elif len(args) == 2:
        low, (high, size) = 0, args
    else:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of: "
                        "(int high, tuple of ints size), (int low, int high, tuple of ints size)")
    if high is None or size is None:
        raise TypeError(f"{name}() missing required arguments 'high' and 'size'")
    return int(low), int(high), size


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of 0 .. n-1 (torch's exact permutation for the same seed)."""
    meta = check_device(device)
    d = dtype if dtype is not None else (out.dtype if out is not None else _dtypes.int64)
    try:
        _check_randperm(int(n), _dtypes.to_numpy(d))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    params = (int(n), _dtypes.to_numpy(d), _gen(generator, "randperm"))
    t = _wrap(run_meta(_randperm, (), params)) if meta else dispatch(_randperm, (), params)
    return finish_out(t, out) if out is not None else _finish(t, requires_grad)


# ---- *_like: the output takes the input's layout, then is filled in memory order ------------------------

# inputs: (input,); params: (NumPy dtype, generator[, low, range])
@_seeded("rand_like", None, CREATION)
def _rand_like(a, d, gen):
    out = np.empty_like(a, dtype=d)
    _require(_uniform, out)
    return _uniform_kernel(out, gen, 0.0, 1.0)


@_seeded("randn_like", None, CREATION)
def _randn_like(a, d, gen):
    out = np.empty_like(a, dtype=d)
    _require(_normal, out)
    return _normal_kernel(out, gen, 0.0, 1.0)


@_seeded("randint_like", None, CREATION)
def _randint_like(a, d, gen, lo, rng):
    return _random_kernel(np.empty_like(a, dtype=d), gen, lo, rng)


def _like_meta(a, d, *params):
    return meta_array(a.shape, d, like_strides(a))


for _op in (_rand_like, _randn_like, _randint_like):
    _op.meta_(_like_meta)


def _like_args(input, dtype, device):
    """(the input, moved to `device` when one is given: the sample takes its layout; the NumPy dtype)."""
    if device is not None and check_device(device) != input.is_meta:
        input = empty_like(input, device=device)
    try:
        return input, _dtypes.to_numpy(dtype) if dtype is not None else input._data.dtype
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None, pin_memory=False):
    a, d = _like_args(input, dtype, device)
    return _finish(dispatch(_rand_like, (a.detach(),), (d, _gen(generator))), requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None, pin_memory=False):
    a, d = _like_args(input, dtype, device)
    return _finish(dispatch(_randn_like, (a.detach(),), (d, _gen(generator))), requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None, pin_memory=False):
    if high is None:
        low, high = 0, low
    a, d = _like_args(input, dtype, device)
    try:
        rng = _check_from_to(d, int(low), int(high))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return _finish(dispatch(_randint_like, (a.detach(),), (d, _gen(generator), int(low), rng)), requires_grad)


for _fn in (uniform_, normal_, exponential_, geometric_, cauchy_, log_normal_, random_, bernoulli_):
    setattr(Tensor, _fn.__name__, _fn)
public.update(rand=rand, randn=randn, randint=randint, randperm=randperm, normal=normal, rand_like=rand_like,
              randn_like=randn_like, randint_like=randint_like)


# ---- rrelu's noise (area N) ------------------------------------------------------------------------------------
# NOTE [ rrelu's draws ]
# torch's training-mode rrelu (`rrelu_with_noise`) walks the contiguous input and draws one double uniform in
# [lower, upper) only for an element <= 0 (lower and upper first rounded to the input's math type), which
# becomes that element's slope and its noise; a positive (or NaN) element keeps noise 1 and draws nothing.
# The gradient is the noise (or leaky_relu's with the mean slope when upper - lower <= 1e-6).

_RRELU = frozenset({"float32", "float64", "bfloat16"})


@_seeded("rrelu_with_noise", "RreluWithNoiseBackward0", POINTWISE, saves="none", save_output=True, dtypes=_RRELU,
         error="rrelu_with_noise_out_cpu")
def _rrelu_with_noise(x, gen, lower, upper):
    _no_meta(x)
    math_t = np.float64 if x.dtype == np.float64 else np.float32
    lo, hi = float(math_t(lower)), float(math_t(upper))
    flat = np.ascontiguousarray(x).reshape(-1)
    neg = flat <= 0
    slopes = chunked(lambda v: _mul_add(v, hi - lo, lo), gen._uniform_double(int(neg.sum())), np.float64)
    noise = np.ones(flat.shape, math_t)
    noise[neg] = slopes.astype(math_t)
    out = flat.astype(math_t)
    out[neg] = out[neg] * noise[neg]
    return out.astype(x.dtype).reshape(x.shape), noise.astype(x.dtype).reshape(x.shape)


@_rrelu_with_noise.meta_
def _(x, gen, lower, upper):  # (nothing drawn: NOTE [ Samplers on meta tensors ])
    # torch's meta function lays the output out as the input (its CPU kernel writes a contiguous one)
    from .._meta import contiguous_strides, like_strides

    strides = contiguous_strides(tuple(x.shape)) if 0 in tuple(x.shape) else like_strides(x)
    return meta_array(tuple(x.shape), x._data.dtype, strides), meta_array(tuple(x.shape), x._data.dtype, strides)


@_rrelu_with_noise.derivative_
def _(g, x, gen, lower, upper, *, out):
    g = g[0] if type(g) is tuple else g  # (from the output and the noise, as torch's is_result backward)
    if upper - lower > 1e-6:
        return g * out[1]
    from .pointwise import where

    return where(out[0] > 0, g, g * ((lower + upper) / 2))


def rrelu_with_noise(input, lower, upper, generator=None):
    """(output, noise) of training-mode rrelu (NOTE [ rrelu's draws ])."""
    return dispatch(_rrelu_with_noise, (input,), (_gen(generator), lower, upper))
