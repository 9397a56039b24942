"""The OpInfo table: one entry per op (or per overload worth testing apart), read by test_ops.py.

An entry names the op, gives `fn(lib, *inputs, **kwargs)` (lib is ember or torch), a sample generator
`samples(dtype, rng) -> [Sample]` whose inputs are NumPy arrays (they become tensors in both libraries)
or plain values, the dtypes to test, whether the op has a gradient / a double gradient / a gradcheck,
its in-place form, whether it takes `out=`, and error cases. Adding an op is adding one entry here.
"""

import numpy as np

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ember depends on it
    ml_dtypes = None

FLOAT = ("float32", "float64")
HALF = ("float16", "bfloat16")
INTS = ("int64", "int32", "uint8")
ALL = FLOAT + HALF + INTS


class Sample:
    def __init__(self, *inputs, **kwargs):
        self.inputs = inputs
        self.kwargs = kwargs


def arr(rng, shape, dtype, low=-2.0, high=2.0):
    """A random array of `shape` and `dtype` (a transposed view when `shape` is marked with 'T')."""
    transposed = isinstance(shape, tuple) and shape[:1] == ("T",)
    if transposed:
        shape = shape[1:][::-1]
    if dtype in ("bool",):
        a = np.asarray(rng.random(shape) < 0.5)
    elif dtype in INTS or dtype in ("int8", "int16"):
        lo, hi = (0, 10) if dtype == "uint8" else (int(np.floor(low)) * 3, int(np.ceil(high)) * 3 + 1)
        if low > 0:  # a positive range (divisors) stays positive
            lo = max(lo, 1)
        a = np.asarray(rng.integers(lo, max(hi, lo + 1), shape)).astype(dtype)  # (0-d: an array, not a scalar)
    else:
        a = rng.uniform(low, high, shape)
        a = a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a.astype(dtype)
    if transposed:  # (compare.py copies bfloat16 arrays C-contiguous, so they stay contiguous)
        a = np.ascontiguousarray(a.T) if dtype == "bfloat16" else a.T
    return a


def _counts(rng, shape, dtype, high=4):
    """Small non-negative integers (in `dtype`): counts, classes, repeats, values with repeats among them;
    the shapes of the ops they feed (unique, bincount, repeat_interleave) follow them."""
    return rng.integers(0, high, shape).astype(dtype)


def unary(low=-2.0, high=2.0, **kwargs):
    """Samples for a one-tensor op: matrix, transposed matrix, 3-D, zero-dim, empty."""
    def gen(dtype, rng):
        shapes = [(3, 4), ("T", 4, 3), (2, 3, 2), (), (0, 3)]
        return [Sample(arr(rng, s, dtype, low, high), **kwargs) for s in shapes]
    return gen


def binary(low=-2.0, high=2.0, low2=None, high2=None, scalar=None, **kwargs):
    """Samples for a two-tensor op: same shape, broadcast, zero-dim, empty, and a Python scalar other."""
    low2 = low if low2 is None else low2
    high2 = high if high2 is None else high2

    def gen(dtype, rng):
        pairs = [((3, 4), (3, 4)), ((3, 4), (4,)), (("T", 4, 3), (4, 1)), ((2, 1, 3), (4, 1)), ((), (3,)),
                 ((0, 3), (3,))]
        out = [Sample(arr(rng, a, dtype, low, high), arr(rng, b, dtype, low2, high2), **kwargs) for a, b in pairs]
        if scalar is not None:
            out.append(Sample(arr(rng, (3, 4), dtype, low, high), scalar, **kwargs))
        return out
    return gen


def ternary(low=-2.0, high=2.0, **kwargs):
    def gen(dtype, rng):
        shapes = [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((), (2, 3), (3,)), ((0, 2), (2,), (1, 2))]
        return [Sample(*(arr(rng, s, dtype, low, high) for s in ss), **kwargs) for ss in shapes]
    return gen


def same(*samples):
    """Fixed samples (built per dtype by the callables given)."""
    def gen(dtype, rng):
        return [s(dtype, rng) for s in samples]
    return gen


def no_errors(rng):
    return []


class OpInfo:
    def __init__(self, name, fn=None, samples=None, dtypes=FLOAT, *, id=None, grad=True, gradgrad=None,
                 gradcheck=None, inplace=None, out=False, errors=None, rtol=None, atol=None, node=True,
                 noncontig=True, strides=True, grad_inputs=None):
        self.name = name
        self.id = id or name
        self.fn = fn or (lambda lib, *a, **k: getattr(lib, name)(*a, **k))
        self.samples = samples or unary()
        self.dtypes = dtypes
        self.grad = grad
        self.gradgrad = grad if gradgrad is None else gradgrad
        self.gradcheck = grad if gradcheck is None else gradcheck
        if inplace is True:
            inplace = (lambda lib, x, *a, **k: getattr(x, name + "_")(*a, **k))
        self.inplace = inplace
        self.out = out
        self.errors = errors or no_errors
        self.rtol, self.atol = rtol, atol
        self.node = node
        self.noncontig = noncontig
        self.strides = strides
        self.grad_inputs = grad_inputs


def _err(*samples):
    def gen(rng):
        return [s(rng) for s in samples]
    return gen


OPS = []


def add(*args, **kwargs):
    OPS.append(OpInfo(*args, **kwargs))


# ---- unary pointwise -----------------------------------------------------------------------------------

for _name, _lo, _hi in [("exp", -2, 2), ("exp2", -2, 2), ("expm1", -2, 2), ("log", 0.2, 3), ("log2", 0.2, 3),
                        ("log10", 0.2, 3), ("log1p", -0.5, 3), ("sqrt", 0.2, 3), ("rsqrt", 0.2, 3),
                        ("reciprocal", 0.5, 3), ("sin", -3, 3), ("cos", -3, 3), ("tan", -1.2, 1.2),
                        ("asin", -0.9, 0.9), ("acos", -0.9, 0.9), ("atan", -3, 3), ("sinh", -2, 2),
                        ("cosh", -2, 2), ("tanh", -2, 2), ("asinh", -3, 3), ("acosh", 1.2, 3),
                        ("atanh", -0.9, 0.9), ("sigmoid", -3, 3), ("erf", -2.5, 2.5), ("erfc", -2.5, 2.5),
                        ("erfinv", -0.9, 0.9), ("lgamma", 0.2, 4), ("digamma", 0.3, 4), ("square", -2, 2),
                        ("abs", -2, 2), ("neg", -2, 2)]:
    add(_name, samples=unary(_lo, _hi), dtypes=ALL, inplace=True, out=True, gradgrad=_name != "abs")

add("lgamma", id="lgamma_negative", samples=unary(-3.9, -0.1), dtypes=("float64",))
add("digamma", id="digamma_negative", samples=unary(-3.9, -0.1), dtypes=("float64",))
for _name in ("floor", "ceil", "trunc", "round", "frac", "sign", "sgn"):  # torch's sgn grad is a ZeroTensor
    add(_name, samples=unary(-3, 3), dtypes=ALL if _name not in ("frac",) else FLOAT + HALF, inplace=True,
        out=True, gradgrad=False, gradcheck=False, grad=_name != "sgn")
add("round", id="round_decimals", samples=unary(-30, 30, decimals=1), dtypes=FLOAT, gradgrad=False,
    gradcheck=False, inplace=True, out=True)
add("round", id="round_neg_decimals", samples=unary(-300, 300, decimals=-1), dtypes=FLOAT, grad=False,
    inplace=True)
add("polygamma", fn=lambda lib, x, n: lib.polygamma(n, x),
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d, 0.3, 4), 1),
                                                            lambda d, r: Sample(arr(r, (2, 3), d, 0.3, 4), 3)),
    grad_inputs=(0,), rtol=1e-6)
add("logit", samples=unary(0.1, 0.9), inplace=True, out=True)
add("logit", id="logit_eps", samples=unary(0.0, 1.0, eps=0.2), inplace=True, gradcheck=False)
add("nan_to_num", samples=same(lambda d, r: Sample(np.array([[np.nan, np.inf, -np.inf, 1.5]], d)),
                               lambda d, r: Sample(np.array([np.nan, np.inf, -np.inf, -2.0], d), nan=1.0,
                                                   posinf=9.0, neginf=-9.0)),
    dtypes=FLOAT + HALF, inplace=True, out=True, gradcheck=False)
for _name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
    add(_name, samples=same(lambda d, r: Sample(np.array([[np.nan, np.inf, -np.inf, 1.5, -0.0]], d))),
        dtypes=FLOAT + HALF, grad=False)
add("isnan", id="isnan_int", samples=unary(), dtypes=INTS, grad=False)
add("logical_not", samples=unary(), dtypes=ALL + ("bool",), grad=False, out=True)
add("bitwise_not", samples=unary(), dtypes=INTS + ("bool",), grad=False, out=True)

# ---- binary pointwise --------------------------------------------------------------------------------------

for _name, _kw in [("add", {}), ("sub", {}), ("mul", {}), ("maximum", {}), ("minimum", {}), ("fmax", {}),
                   ("fmin", {}), ("hypot", {}), ("atan2", {}), ("logaddexp", {}), ("logaddexp2", {})]:
    add(_name, samples=binary(scalar=1.5 if _name in ("add", "sub", "mul") else None),
        dtypes=FLOAT + HALF + (INTS if _name in ("add", "sub", "mul", "maximum", "minimum") else ()),
        inplace=_name in ("add", "sub", "mul", "hypot", "atan2"), out=True)
add("add", id="add_alpha", samples=binary(alpha=2), inplace=True, out=True)
add("div", samples=binary(0.5, 2.0, scalar=3.0), dtypes=ALL, inplace=True, out=True)
for _mode in ("trunc", "floor"):
    add("div", id=f"div_{_mode}", samples=binary(-4, 4, 0.5, 2.0, scalar=1.5, rounding_mode=_mode),
        dtypes=FLOAT + ("int64", "int32"), grad=False, out=True)
add("floor_divide", samples=binary(-4, 4, 1, 3), dtypes=FLOAT + ("int64",), grad=False, out=True)
add("true_divide", samples=binary(0.5, 2.0), dtypes=FLOAT + INTS, out=True)
for _name in ("remainder", "fmod"):
    add(_name, samples=binary(-4, 4, 0.5, 2.0, scalar=1.5), dtypes=FLOAT + ("int64",), inplace=True, out=True,
        gradgrad=False)
    add(_name, id=_name + "_int", samples=binary(-4, 4, 1, 3), dtypes=INTS, grad=False)
add("pow", samples=binary(0.5, 2.0, -2, 2, scalar=2.5), dtypes=FLOAT, inplace=True, out=True)
add("pow", id="pow_int", samples=binary(0, 3, 0, 3, scalar=2), dtypes=INTS, grad=False)
add("float_power", samples=binary(0.5, 2.0, -2, 2, scalar=2), dtypes=FLOAT + ("int64",), out=True)
add("copysign", samples=binary(scalar=-1.0), dtypes=FLOAT, inplace=True, out=True)
add("xlogy", samples=binary(-1, 2, 0.5, 2, scalar=2.0), dtypes=FLOAT, inplace=True, out=True)
add("xlogy", id="xlogy_zero", samples=same(lambda d, r: Sample(np.array([0.0, 0, 1, 2], d),
                                                                 np.array([0.0, np.nan, 2, 3], d))),
    grad=False)
add("heaviside", samples=binary(-1, 1), dtypes=FLOAT + INTS, grad=False, out=True, inplace=True,
    errors=_err(lambda r: Sample(arr(r, (2,), "float32"), arr(r, (2,), "float64"))))
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    add(_name, samples=binary(-1, 1, scalar=0.5 if _name[0] != "l" or _name[1] != "o" else None),
        dtypes=FLOAT + INTS, grad=False, out=True)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"):
    add(_name, samples=binary(0, 3, 0, 3), dtypes=("int64", "int32", "uint8"), grad=False, out=True,
        errors=_err(lambda r: Sample(arr(r, (2,), "float32"), arr(r, (2,), "float32"))))
add("isclose", samples=binary(-1, 1, atol=0.3), dtypes=FLOAT + ("int64",), grad=False)
add("allclose", samples=same(lambda d, r: Sample(np.ones(3, d), np.ones(3, d) + 1e-9),
                             lambda d, r: Sample(np.ones(3, d), np.zeros(3, d))), grad=False)
add("equal", samples=same(lambda d, r: Sample(np.ones(3, d), np.ones(3, d)),
                          lambda d, r: Sample(np.ones(3, d), np.ones(4, d))), grad=False)
add("clamp", samples=unary(min=-0.5, max=0.8), dtypes=FLOAT + INTS[:1], inplace=True, out=True, gradgrad=False)
add("clamp", id="clamp_tensor", samples=same(  # (torch's backward fails when the bounds broadcast the input)
    lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3, 4), d), arr(r, (3, 4), d)),
    lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (4,), d), arr(r, (3, 1), d)),
    lambda d, r: Sample(arr(r, (2, 3), d), arr(r, (), d), arr(r, (3,), d))), inplace=True, out=True, gradgrad=False,
    fn=lambda lib, x, lo, hi, **k: lib.clamp(x, lo, hi, **k))
add("lerp", samples=binary(weight=0.3), inplace=True, out=True)
add("lerp", id="lerp_tensor", samples=ternary(0, 1), inplace=True, out=True)
add("addcmul", samples=ternary(value=0.5), inplace=True, out=True)
add("addcdiv", samples=ternary(0.5, 2, value=2), inplace=True, out=True,
    errors=_err(lambda r: Sample(arr(r, (2,), "int64"), arr(r, (2,), "int64"), arr(r, (2,), "int64")),
                # (tensor1's and tensor2's own dtypes decide, before they promote with a float input)
                lambda r: Sample(arr(r, (2,), "float32"), arr(r, (2,), "int64"), arr(r, (2,), "int32"))))
add("where", fn=lambda lib, c, x, y: lib.where(c > 0, x, y), samples=ternary(), out=False)

# ---- reductions ------------------------------------------------------------------------------------------


def reduce(low=-2.0, high=2.0, dims=(None, 1, (0, 2), -1), keepdim=(False, True), **kwargs):
    """Samples for a reduction: a 3-D input (also transposed) over several dims, keepdim both ways."""
    def gen(dtype, rng):
        out = []
        for i, dim in enumerate(dims):
            for k in keepdim:
                shape = (2, 3, 4) if i % 2 == 0 else ("T", 4, 3, 2)
                kw = dict(kwargs, keepdim=k) if dim is None and not k else dict(kwargs, dim=dim, keepdim=k)
                if dim is None:
                    kw.pop("keepdim", None) if not k else None
                    if k:
                        continue
                out.append(Sample(arr(rng, shape, dtype, low, high), **kw))
        zero_dim = dict(kwargs) if None in dims else dict(kwargs, dim=0)
        out.append(Sample(arr(rng, (), dtype, low, high), **zero_dim))
        return out
    return gen


def along(low=-2.0, high=2.0, dims=(1, -1, 0), distinct=False, **kwargs):
    """Samples for an op along one dim (scans, sorts): 3-D input (also transposed) and 1-D."""
    def gen(dtype, rng):
        out = []
        for i, d in enumerate(dims):
            shape = (2, 3, 4) if i % 2 == 0 else ("T", 4, 3, 2)
            a = arr(rng, shape, dtype, low, high)
            if distinct and a.size and dtype in FLOAT:
                a = (rng.permutation(a.size).reshape(a.shape) - a.size / 2).astype(dtype) / 4
                a = a.T.copy().T if i % 2 else a
            out.append(Sample(a, dim=d, **kwargs))
        out.append(Sample(arr(rng, (5,), dtype, low, high), dim=0, **kwargs))
        return out
    return gen


for _name in ("sum", "nansum", "mean", "prod", "amax", "amin", "logsumexp"):
    add(_name, samples=reduce(0.5, 2, dims=(None, 1, -1)) if _name == "prod" else
        reduce(dims=(1, (0, 2), -1)) if _name == "logsumexp" else reduce(), out=_name not in ("sum", "prod"),
        dtypes=FLOAT + (("int64",) if _name in ("sum", "nansum", "prod", "amax", "amin") else ()),
        gradgrad=_name not in ("amax", "amin"))
for _name in ("std", "var"):
    add(_name, samples=reduce(), out=True)
    add(_name, id=_name + "_correction", samples=reduce(dims=(1, (0, 2)), correction=0), gradcheck=False)
    add(_name, id=_name + "_unbiased", fn=lambda lib, x, _n=_name: getattr(lib, _n)(x, 1, False, True),
        samples=same(lambda d, r: Sample(arr(r, (3, 4), d)), lambda d, r: Sample(arr(r, ("T", 4, 3), d))))
    add(_name + "_mean", samples=reduce(dims=(None, 1)), strides=False)
add("std", id="std_int_error", samples=same(), grad=False, dtypes=("int64",), noncontig=False,
    errors=_err(lambda r: Sample(arr(r, (3,), "int64"))))
add("nanmean", samples=same(lambda d, r: Sample(np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]], d), dim=1),
                            lambda d, r: Sample(arr(r, (2, 3), d))), grad=False)
add("max", id="max_dim", fn=lambda lib, x, **k: tuple(lib.max(x, **k)),
    samples=along(distinct=True, keepdim=True), dtypes=FLOAT + ("int64",))
add("argmax", samples=along(distinct=True), dtypes=FLOAT + ("int64",), grad=False)
add("aminmax", fn=lambda lib, x, **k: tuple(lib.aminmax(x, **k)),
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d)), lambda d, r: Sample(arr(r, (3, 4), d), dim=1),
                 lambda d, r: Sample(arr(r, (2, 3), d), dim=0, keepdim=True)), dtypes=FLOAT + ("int64",),
    gradgrad=False, gradcheck=False,
    errors=_err(lambda r: Sample(arr(r, (0,), "float32"))))
for _name in ("all", "any"):
    add(_name, samples=reduce(-1, 1), dtypes=("bool", "uint8", "float32", "int64"), grad=False, out=True)
add("count_nonzero", samples=same(lambda d, r: Sample(arr(r, (3, 4), d, -1, 1)),
                                  lambda d, r: Sample(arr(r, (3, 4), d, -1, 1), dim=1),
                                  lambda d, r: Sample(arr(r, (2, 3, 4), d, -1, 1), dim=(0, 2))),
    dtypes=("int64", "float32", "bool"), grad=False)
add("median", samples=same(lambda d, r: Sample(arr(r, (3, 5), d))), dtypes=FLOAT + ("int64",))
add("median", id="median_dim", fn=lambda lib, x, **k: tuple(lib.median(x, **k)),
    samples=along(distinct=True, keepdim=False), dtypes=FLOAT, gradgrad=False)
add("nanmedian", id="nanmedian_dim", fn=lambda lib, x, **k: tuple(lib.nanmedian(x, **k)),
    samples=same(lambda d, r: Sample(np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 2.0, np.nan, np.nan]], d), dim=1)),
    dtypes=FLOAT, gradgrad=False, gradcheck=False)
add("mode", fn=lambda lib, x, **k: tuple(lib.mode(x, **k)),
    samples=same(lambda d, r: Sample(np.array([[1, 2, 2, 3, 3], [5, 5, 5, 1, 1]], d), dim=1),
                 lambda d, r: Sample(np.array([[1, 2], [1, 3], [4, 3]], d), dim=0, keepdim=True)),
    dtypes=FLOAT + ("int64",), gradgrad=False, gradcheck=False)
add("quantile", samples=same(lambda d, r: Sample(arr(r, (4, 5), d), 0.3),
                             lambda d, r: Sample(arr(r, (4, 5), d), 0.7, dim=1, keepdim=True),
                             lambda d, r: Sample(arr(r, (3, 4), d), np.array([0.1, 0.5, 1.0], d), dim=0),
                             lambda d, r: Sample(arr(r, (3, 4), d), 0.4, dim=1, interpolation="nearest")),
    node=False, gradgrad=False,
    errors=_err(lambda r: Sample(arr(r, (3,), "float32"), 1.5)))
add("nanquantile", samples=same(lambda d, r: Sample(np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 2.0, 1.0, 0]], d), 0.3,
                                                    dim=1)), node=False, grad=False)
for _name in ("cumsum", "cumprod", "logcumsumexp"):
    add(_name, samples=along(0.3, 1.5) if _name == "cumprod" else along(), out=True,
        dtypes=FLOAT + (("int64",) if _name != "logcumsumexp" else ()))
add("cumprod", id="cumprod_zeros", samples=same(
    lambda d, r: Sample(np.array([[1.5, 0.0, 2.0, 0.5], [0.0, 3.0, 0.0, 1.0]], d),
                                                                   dim=1)))
for _name in ("cummax", "cummin"):
    add(_name, fn=lambda lib, x, _n=_name, **k: tuple(getattr(lib, _n)(x, **k)), samples=along(distinct=True),
        dtypes=FLOAT + ("int64",))
add("diff", samples=same(lambda d, r: Sample(arr(r, (3, 5), d)), lambda d, r: Sample(arr(r, (3, 5), d), n=2, dim=0)),
    dtypes=FLOAT + ("int64",))
add("diff", id="diff_prepend", fn=lambda lib, x, p, **k: lib.diff(x, prepend=p, **k),
    samples=same(lambda d, r: Sample(arr(r, (3, 5), d), arr(r, (3, 1), d), dim=1)))

# ---- sorting and searching -------------------------------------------------------------------------------

add("sort", fn=lambda lib, x, **k: tuple(lib.sort(x, **k)), samples=along(distinct=True, descending=True),
    dtypes=FLOAT + ("int64",))
add("sort", id="sort_stable", fn=lambda lib, x, **k: tuple(lib.sort(x, **k)),
    samples=same(lambda d, r: Sample(np.array([3, 1, 2, 1, 3, np.nan, 1], d), stable=True),
                 lambda d, r: Sample(np.array([3, 1, 2, 1, 3, np.nan, 1], d), stable=True, descending=True)),
    grad=False)
add("argsort", samples=along(distinct=True), dtypes=FLOAT + ("int64",), grad=False)
add("msort", samples=same(lambda d, r: Sample(arr(r, (4, 3), d))), dtypes=FLOAT, gradcheck=False)
add("topk", fn=lambda lib, x, k, **kw: tuple(lib.topk(x, k, **kw)),
    samples=same(lambda d, r: Sample(np.arange(12, dtype=d)[::-1].reshape(3, 4) * 0.7 % 5, 2),
                 lambda d, r: Sample(np.arange(12, dtype=d).reshape(3, 4) * 1.3 % 7, 2, dim=0, largest=False)),
    errors=_err(lambda r: Sample(arr(r, (3,), "float32"), 5)))
add("kthvalue", fn=lambda lib, x, k, **kw: tuple(lib.kthvalue(x, k, **kw)),
    samples=same(lambda d, r: Sample(np.arange(12, dtype=d)[::-1].reshape(3, 4) * 0.7 % 5, 2),
                 lambda d, r: Sample(np.arange(12, dtype=d).reshape(3, 4) * 1.3 % 7, 3, dim=0, keepdim=True)))
add("unique", fn=lambda lib, x, **k: lib.unique(x, **k),
    samples=same(lambda d, r: Sample(np.array([[3, 1, 2], [1, 3, 3]], d), return_inverse=True, return_counts=True),
                 lambda d, r: Sample(np.array([[3, 1], [1, 2], [3, 1]], d), dim=0, return_inverse=True,
                                     return_counts=True),
                 lambda d, r: Sample(_counts(r, (5,), d, 8))),  # (how many values are distinct is data)
    dtypes=FLOAT + ("int64",), grad=False)
add("unique_consecutive", samples=same(
    lambda d, r: Sample(np.array([1, 1, 2, 2, 3, 1, 1], d), return_inverse=True, return_counts=True),
    lambda d, r: Sample(np.array([[1, 1], [1, 1], [2, 3], [1, 1]], d), dim=0, return_counts=True),
    lambda d, r: Sample(_counts(r, (7,), d), return_counts=True)),
    dtypes=FLOAT + ("int64",), grad=False)
add("searchsorted", samples=same(lambda d, r: Sample(np.array([1, 3, 5, 7], d), np.array([[0, 3, 6], [7, 8, 1]], d)),
                                 lambda d, r: Sample(np.array([[1, 3, 5], [2, 4, 6]], d), np.array([[3, 6], [1, 4]], d),
                                                     right=True),
                                 lambda d, r: Sample(np.array([1, 3, 5, 7], d), np.array([3, 5], d), side="right",
                                                     out_int32=True)),
    dtypes=FLOAT + ("int64",), grad=False)
add("bucketize", samples=same(lambda d, r: Sample(np.array([[0, 3, 6], [7, 8, 1]], d), np.array([1, 3, 5, 7], d)),
                              lambda d, r: Sample(np.array([3, 5], d), np.array([1, 3, 5, 7], d), right=True)),
    dtypes=FLOAT + ("int64",), grad=False)
add("bincount", samples=same(lambda d, r: Sample(np.array([1, 3, 3, 0, 5], d)),
                             lambda d, r: Sample(np.array([1, 3, 3], d), minlength=6),
                             lambda d, r: Sample(np.array([1, 3, 3], d), np.array([0.5, 1.0, 2.0])),
                             lambda d, r: Sample(_counts(r, (4,), d, 8))),
    dtypes=("int64",), grad=False, errors=_err(lambda r: Sample(np.array([-1, 2]))))
add("histc", samples=same(lambda d, r: Sample(arr(r, (20,), d), bins=5, min=-1, max=1),
                          lambda d, r: Sample(np.array([0.0, 1.0, 1.0, 2.0], d), bins=4)), grad=False)

# ---- selection and scatter ------------------------------------------------------------------------------

_IDX = np.array([[0, 2, 1, 0], [2, 1, 0, 1]])  # (no repeats in a column: scatter keeps one)
_IDX_SMALL = np.array([[0, 2], [1, 1]])


def _with_index(*extra):
    """(input (3, 4), dim 0, index (2, 4), *extra) and a smaller index with a transposed input."""
    def gen(dtype, rng):
        return [Sample(arr(rng, (3, 4), dtype), 0, _IDX, *[e(dtype, rng, (2, 4)) for e in extra]),
                Sample(arr(rng, ("T", 4, 3), dtype), 1, _IDX_SMALL, *[e(dtype, rng, (2, 2)) for e in extra])]
    return gen


def _src(dtype, rng, shape):
    return arr(rng, shape, dtype)


_INDEX_ERRORS = _err(lambda r: Sample(arr(r, (3, 4), "float32"), 0, np.array([[3, 0]]), arr(r, (3, 4), "float32")),
                     lambda r: Sample(arr(r, (3, 4), "float32"), 0, np.array([[0.0, 1.0]]), arr(r, (3, 4), "float32")))
add("gather", samples=_with_index(), dtypes=FLOAT + ("int64",), grad_inputs=(0,), out=True,
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), 0, np.array([[3, 0]]))))
add("scatter", samples=_with_index(_src), dtypes=FLOAT + ("int64",), inplace=True,
    fn=lambda lib, x, d, i, s: lib.scatter(x, d, i, s), errors=_INDEX_ERRORS)
add("scatter", id="scatter_value", samples=_with_index(), inplace=lambda lib, x, d, i: x.scatter_(d, i, 1.5),
    fn=lambda lib, x, d, i: lib.scatter(x, d, i, 1.5))
add("scatter_add", samples=_with_index(_src), dtypes=FLOAT + ("int64",), inplace=True, errors=_INDEX_ERRORS)
for _red in ("sum", "mean", "amax", "amin"):
    for _self in (True, False):
        add("scatter_reduce", id=f"scatter_reduce_{_red}_{_self}", samples=_with_index(_src),
            inplace=lambda lib, x, d, i, s, _r=_red, _s=_self: x.scatter_reduce_(d, i, s, _r, include_self=_s),
            fn=lambda lib, x, d, i, s, _r=_red, _s=_self: lib.scatter_reduce(x, d, i, s, _r, include_self=_s),
            gradgrad=False, gradcheck=_red in ("sum", "mean"))
add("scatter_reduce", id="scatter_reduce_prod", samples=_with_index(lambda d, r, s: arr(r, s, d, 0.5, 2)),
    fn=lambda lib, x, d, i, s: lib.scatter_reduce(x, d, i, s, "prod"), gradgrad=False)


def _with_zeros(dtype, rng):
    """A product scatter whose groups hold no zero, one zero (in self or in src) or two zeros."""
    x, src = arr(rng, (3, 4), dtype, 0.5, 2), arr(rng, (3, 4), dtype, 0.5, 2)
    x[0, 0] = x[1, 1] = 0
    src[1, 2] = src[0, 1] = src[2, 1] = 0
    return [Sample(x, 0, np.array([[0, 1, 0, 2], [1, 1, 0, 0], [2, 1, 1, 1]]), src)]


for _self in (True, False):
    add("scatter_reduce", id=f"scatter_reduce_prod_zeros_{_self}", samples=_with_zeros, gradgrad=False,
        fn=lambda lib, x, d, i, s, _s=_self: lib.scatter_reduce(x, d, i, s, "prod", include_self=_s))


def _vec_index(dtype, rng):
    return [Sample(arr(rng, (4, 3), dtype), 0, np.array([2, 0, 2]), arr(rng, (3, 3), dtype)),
            Sample(arr(rng, ("T", 3, 4), dtype), 1, np.array([1, 3]), arr(rng, (3, 2), dtype))]


add("index_add", samples=_vec_index, dtypes=FLOAT + ("int64",), inplace=True, out=True)
add("index_add", id="index_add_alpha", samples=lambda d, r: [Sample(*s.inputs, alpha=2.0) for s in _vec_index(d, r)],
    inplace=True)
add("index_copy", samples=lambda d, r: [Sample(arr(r, (4, 3), d), 0, np.array([3, 0]), arr(r, (2, 3), d)),
                                        Sample(arr(r, ("T", 3, 4), d), 1, np.array([1, 3]), arr(r, (3, 2), d))],
    dtypes=FLOAT + ("int64",), inplace=True)
add("index_fill", samples=lambda d, r: [Sample(arr(r, (4, 3), d), 0, np.array([3, 0]), -1.0),
                                        Sample(arr(r, ("T", 3, 4), d), 1, np.array([1, 3]), 2.0)],
    inplace=True, dtypes=FLOAT + ("int64",))
add("index_fill", id="index_fill_tensor", fn=lambda lib, x, d, i, v: lib.index_fill(x, d, i, v),
    samples=lambda d, r: [Sample(arr(r, (4, 3), d), 0, np.array([3, 0]), arr(r, (), d))], inplace=True)
add("masked_select", fn=lambda lib, x, m: lib.masked_select(x, m > 0),
    samples=binary(), dtypes=FLOAT + ("int64",), out=True)
add("masked_scatter", fn=lambda lib, x, m, s: lib.masked_scatter(x, m > 0, s),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d), arr(r, (3, 4), d), arr(r, (12,), d)),
                          Sample(arr(r, (3, 4), d), arr(r, (4,), d), arr(r, (4, 4), d))],
    inplace=lambda lib, x, m, s: x.masked_scatter_(m > 0, s), dtypes=FLOAT + ("int64",))
add("take", samples=lambda d, r: [Sample(arr(r, (3, 4), d), np.array([[0, 11], [-1, 5]])),
                                  Sample(arr(r, ("T", 4, 3), d), np.array([1, 1, 2]))],
    dtypes=FLOAT + ("int64",), out=True,
    errors=_err(lambda r: Sample(arr(r, (3,), "float32"), np.array([3]))))
add("take_along_dim", samples=lambda d, r: [Sample(arr(r, (3, 4), d), np.array([[0, 2], [1, 1], [2, 0]]), dim=1),
                                            Sample(arr(r, (3, 4), d), np.array([[0], [2]]), dim=0),
                                            Sample(arr(r, (3, 4), d), np.array([0, 7, 11]))],
    dtypes=FLOAT + ("int64",), out=True)
add("nonzero", samples=unary(-1, 1), dtypes=FLOAT + ("int64", "bool"), grad=False, out=True)
add("nonzero", id="nonzero_tuple", fn=lambda lib, x: lib.nonzero(x, as_tuple=True), samples=unary(-1, 1),
    dtypes=("int64",), grad=False)
add("argwhere", samples=unary(-1, 1), dtypes=("int64", "bool"), grad=False)
add("masked_fill", fn=lambda lib, x, m, **k: lib.masked_fill(x, m > 0, 0.5), samples=binary(), dtypes=FLOAT)
add("index_select", samples=lambda d, r: [Sample(arr(r, (4, 3), d), 0, np.array([3, 0, 3])),
                                          Sample(arr(r, ("T", 4, 3), d), 1, np.array([1]))],
    dtypes=FLOAT + ("int64",), out=True)

# ---- copying ------------------------------------------------------------------------------------------------

for _name in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
    add(_name, fn=lambda lib, *xs, _n=_name: getattr(lib, _n)(list(xs)),
        samples=same(lambda d, r: Sample(arr(r, (2, 3), d), arr(r, (2, 3), d)),
                     lambda d, r: Sample(arr(r, (3,), d), arr(r, (3,), d))), dtypes=FLOAT + ("int64",))
for _name in ("atleast_1d", "atleast_2d", "atleast_3d"):  # (unsqueeze's stride on a new size-1 dim: shape.py)
    add(_name, samples=unary(), dtypes=("float64",), strides=_name != "atleast_3d")
add("repeat", fn=lambda lib, x, *r: x.repeat(*r), samples=lambda d, r: [Sample(arr(r, (2, 3), d), 2, 1),
                                                                          Sample(arr(r, ("T", 3, 2), d), 2, 1, 3),
                                                                          Sample(arr(r, (), d), 4)],
    dtypes=FLOAT + ("int64",), errors=_err(lambda r: Sample(arr(r, (2, 3), "float32"), 2)))
add("tile", samples=lambda d, r: [Sample(arr(r, (2, 3), d), (2,)), Sample(arr(r, (3,), d), (2, 2))],
    dtypes=FLOAT + ("int64",))
add("repeat_interleave", samples=lambda d, r: [Sample(arr(r, (2, 3), d), 2), Sample(arr(r, (2, 3), d), 3, dim=1),
                                               Sample(arr(r, (3, 2), d), np.array([1, 0, 2]), dim=0),
                                               Sample(arr(r, (3, 2), d), _counts(r, (3,), "int64"), dim=0),
                                               Sample(arr(r, (4,), d), _counts(r, (4,), "int64")),
                                               Sample(arr(r, (3, 2), d), np.array(2), dim=1),
                                               Sample(arr(r, (3, 2), d), np.array([3]), dim=0, output_size=9)],
    dtypes=FLOAT + ("int64",),
    errors=_err(lambda r: Sample(arr(r, (3, 2), "float32"), np.array([[1, 2]]), dim=0),
                lambda r: Sample(arr(r, (3, 2), "float32"), np.array([1, 2]), dim=0),
                lambda r: Sample(arr(r, (3, 2), "float32"), np.array([1.0, 2.0, 1.0]), dim=0),
                lambda r: Sample(arr(r, (3, 2), "float32"), np.array([1, 2, 1]), dim=0, output_size=5)))
add("repeat_interleave", id="repeat_interleave_counts", fn=lambda lib, r: lib.repeat_interleave(r),
    samples=same(lambda d, r: Sample(np.array([2, 0, 1], d)), lambda d, r: Sample(_counts(r, (4,), d))),
    dtypes=("int64", "int32"), grad=False,
    errors=_err(lambda r: Sample(np.array([[2, 0], [1, 1]])), lambda r: Sample(np.array([2, -1])),
                lambda r: Sample(np.array([2.0, 1.0])), lambda r: Sample(np.array([2, 1]), output_size=2),
                lambda r: Sample(np.array([2 ** 63 - 1, 2 ** 63 - 1])),  # (the total wraps, as torch's cumsum)
                lambda r: Sample(np.array([2 ** 40]))))  # (more memory than there is)
add("flip", fn=lambda lib, x, *d: lib.flip(x, *d), samples=lambda d, r: [Sample(arr(r, (2, 3, 4), d), (0, 2)),
                                                                           Sample(arr(r, ("T", 4, 3), d), (1,))],
    dtypes=FLOAT + ("int64",))
add("fliplr", samples=same(lambda d, r: Sample(arr(r, (2, 3), d))))
add("flipud", samples=same(lambda d, r: Sample(arr(r, (2, 3), d))))
add("roll", samples=lambda d, r: [Sample(arr(r, (3, 4), d), 1), Sample(arr(r, (3, 4), d), (1, -2), (0, 1)),
                                  Sample(arr(r, ("T", 4, 3), d), 5, 1)], dtypes=FLOAT + ("int64",))
add("rot90", samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (2, 3, 4), d), 3, (1, 2)),
                                   Sample(arr(r, (3, 4), d), -1)], dtypes=FLOAT + ("int64",))
add("diag", samples=lambda d, r: [Sample(arr(r, (3,), d)), Sample(arr(r, (3,), d), 1), Sample(arr(r, (3, 4), d)),
                                  Sample(arr(r, (3, 4), d), -1)], dtypes=FLOAT + ("int64",), out=True, node=False)
add("diag_embed", samples=lambda d, r: [Sample(arr(r, (2, 3), d)), Sample(arr(r, (2, 3), d), 1, 0, 2)],
    dtypes=FLOAT + ("int64",))
add("diagflat", samples=lambda d, r: [Sample(arr(r, (2, 2), d)), Sample(arr(r, (3,), d), -1)])
add("trace", samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, ("T", 4, 3), d))],
    dtypes=FLOAT + ("int64",))
add("tril", samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (2, 3, 3), d), -1)], inplace=True)
add("triu", samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (2, 3, 3), d), 1)], inplace=True)
add("cross", samples=lambda d, r: [Sample(arr(r, (4, 3), d), arr(r, (4, 3), d), dim=1),
                                   Sample(arr(r, (3, 2), d), arr(r, (3, 2), d))], out=True,
    errors=_err(lambda r: Sample(arr(r, (4, 2), "float32"), arr(r, (4, 2), "float32"), dim=1)))
add("linalg.cross", fn=lambda lib, a, b: lib.linalg.cross(a, b),
    samples=lambda d, r: [Sample(arr(r, (4, 3), d), arr(r, (4, 3), d)),
                          Sample(arr(r, (2, 1, 3), d), arr(r, (1, 4, 3), d))])
add("kron", samples=lambda d, r: [Sample(arr(r, (2, 3), d), arr(r, (2, 2), d)),
                                  Sample(arr(r, (2,), d), arr(r, (3, 2), d))],
    dtypes=FLOAT + ("int64",), node=False)
add("cartesian_prod", samples=lambda d, r: [Sample(arr(r, (2,), d), arr(r, (3,), d))], dtypes=FLOAT + ("int64",))
add("combinations", samples=lambda d, r: [Sample(arr(r, (4,), d)), Sample(arr(r, (3,), d), r=3),
                                          Sample(arr(r, (3,), d), with_replacement=True)], dtypes=FLOAT + ("int64",))
add("block_diag", samples=lambda d, r: [Sample(arr(r, (2, 3), d), arr(r, (1,), d), arr(r, (), d), arr(r, (2, 2), d))],
    dtypes=FLOAT + ("int64",))
add("cdist", samples=lambda d, r: [Sample(arr(r, (3, 4), d), arr(r, (2, 4), d)),
                                   Sample(arr(r, (2, 3, 4), d), arr(r, (2, 5, 4), d), p=1.0),
                                   Sample(arr(r, (3, 4), d), arr(r, (2, 4), d), p=3.0),
                                   Sample(arr(r, (3, 4), d), arr(r, (2, 4), d), p=float("inf"))], gradgrad=False,
    rtol=1e-5, atol=1e-6)

# ---- linear algebra ------------------------------------------------------------------------------------------


def _mats(*shapes, low=-1.0, high=1.0):
    def gen(dtype, rng):
        return [Sample(*[arr(rng, s, dtype, low, high) for s in ss]) for ss in shapes]
    return gen


add("addmm", samples=_mats(((2, 4), (2, 3), (3, 4)), ((4,), ("T", 2, 3), (3, 4))), out=True, inplace=True,
    errors=_err(lambda r: Sample(arr(r, (2, 4), "float32"), arr(r, (2, 3), "float32"), arr(r, (2, 4), "float32"))))
add("addmm", id="addmm_scaled", fn=lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2.0),
    samples=_mats(((2, 4), (2, 3), (3, 4))))
add("addmv", samples=_mats(((2,), (2, 3), (3,)), ((), (2, 3), (3,))), out=True)
add("addbmm", samples=_mats(((2, 4), (3, 2, 3), (3, 3, 4))), out=True)
add("baddbmm", samples=_mats(((3, 2, 4), (3, 2, 3), (3, 3, 4)), ((4,), (3, 2, 3), (3, 3, 4))), out=True)
add("outer", samples=_mats(((3,), (4,))), dtypes=FLOAT + ("int64",), out=True)
add("inner", samples=_mats(((3,), (3,)), ((2, 3), (4, 3)), ((), (2, 3))), node=False)
add("vdot", samples=_mats(((3,), (3,))), dtypes=FLOAT + ("int64",), out=True,
    errors=_err(lambda r: Sample(arr(r, (2, 3), "float32"), arr(r, (3,), "float32")),
                lambda r: Sample(arr(r, (3,), "float32"), arr(r, (4,), "float32")),
                lambda r: Sample(arr(r, (3,), "float32"), arr(r, (3,), "float64"))))
add("tensordot", fn=lambda lib, a, b, **k: lib.tensordot(a, b, **k),
    samples=lambda d, r: [Sample(arr(r, (2, 3, 4), d), arr(r, (3, 4, 5), d), dims=2),
                          Sample(arr(r, (2, 3, 4), d), arr(r, (4, 3), d), dims=([1, 2], [1, 0]))], node=False)
add("linalg.multi_dot", fn=lambda lib, *ts: lib.linalg.multi_dot(list(ts)),
    samples=_mats(((3,), (3, 4), (4, 2)), ((2, 3), (3, 4), (4,))), node=False)
add("linalg.vector_norm", fn=lambda lib, x, **k: lib.linalg.vector_norm(x, **k),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (3, 4), d), ord=1, dim=1),
                          Sample(arr(r, (2, 3, 4), d), ord=float("inf"), dim=(0, 2), keepdim=True),
                          Sample(arr(r, (3, 4), d), ord=3), Sample(arr(r, (3, 4), d), ord=0.5, dim=0)],
    gradgrad=False, errors=_err(lambda r: Sample(np.arange(3))))
add("norm", fn=lambda lib, x, *a, **k: x.norm(*a, **k), gradgrad=False,
    samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (3, 4), d), 1, 1), Sample(arr(r, (3, 4), d), dim=0)])
add("linalg.matrix_norm", fn=lambda lib, x, *a, **k: lib.linalg.matrix_norm(x, *a, **k),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (2, 3, 3), d), 1), Sample(arr(r, (3, 4), d), "nuc"),
                          Sample(arr(r, (3, 4), d), float("-inf"), keepdim=True), Sample(arr(r, (3, 4), d), 2)],
    node=False, gradgrad=False)
add("linalg.norm", fn=lambda lib, x, *a, **k: lib.linalg.norm(x, *a, **k),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, (4,), d), 3), Sample(arr(r, (3, 4), d), "fro")],
    node=False)


def _square(batch=()):
    def make(dtype, rng):
        a = rng.uniform(-1, 1, batch + (3, 3)) + 3 * np.eye(3)
        return a.astype(dtype)
    return make


def _spd(dtype, rng):
    a = rng.uniform(-1, 1, (3, 3))
    return (a @ a.T + 3 * np.eye(3)).astype(dtype)


for _name in ("inv", "det"):
    add("linalg." + _name, fn=lambda lib, a, _n=_name: getattr(lib.linalg, _n)(a),
        samples=same(lambda d, r: Sample(_square()(d, r)), lambda d, r: Sample(_square((2,))(d, r))),
        errors=_err(lambda r: Sample(arr(r, (2, 3), "float32"))), rtol=1e-5, atol=1e-5)
add("linalg.slogdet", fn=lambda lib, a: tuple(lib.linalg.slogdet(a)),
    samples=same(lambda d, r: Sample(_square()(d, r))), rtol=1e-5, atol=1e-5)
add("logdet", samples=same(lambda d, r: Sample(_spd(d, r)), lambda d, r: Sample(-_spd(d, r))), rtol=1e-5, atol=1e-5,
    node=False)
add("linalg.solve", fn=lambda lib, a, b: lib.linalg.solve(a, b),
    samples=same(lambda d, r: Sample(_square()(d, r), arr(r, (3,), d)), lambda d, r: Sample(_square((2,))(d, r),
                                                                                         arr(r, (2, 3, 2), d))),
    rtol=1e-5, atol=1e-5, errors=_err(lambda r: Sample(_square()("float32", r), arr(r, (4,), "float32"))))
add("linalg.cholesky", fn=lambda lib, a: lib.linalg.cholesky(a), samples=same(lambda d, r: Sample(_spd(d, r))),
    rtol=1e-5, atol=1e-5, gradcheck=False)
add("linalg.eigvalsh", fn=lambda lib, a: lib.linalg.eigvalsh(a), samples=same(lambda d, r: Sample(_spd(d, r))),
    rtol=1e-5, atol=1e-5, gradcheck=False, noncontig=False)
add("linalg.svdvals", fn=lambda lib, a: lib.linalg.svdvals(a), samples=_mats(((3, 4),), ((4, 3),)),
    rtol=1e-5, atol=1e-5, gradgrad=False, gradcheck=False)
add("linalg.qr_r", fn=lambda lib, a: lib.linalg.qr(a)[1].abs(), samples=_mats(((4, 3),)), rtol=1e-5, atol=1e-5,
    gradgrad=False, gradcheck=False, node=False)
# Gauge-invariant forms: finite differences need unconstrained inputs (so symmetric inputs are made from a
# general matrix), and eigen/singular vectors and Q are defined up to signs (so they enter through functions
# those signs do not change). These check the full factor gradients against torch and by gradcheck.
add("linalg.cholesky", id="linalg.cholesky_gradcheck",
    fn=lambda lib, a: lib.linalg.cholesky(a @ a.mT + 3 * lib.eye(a.shape[-1], dtype=a.dtype)),
    samples=same(lambda d, r: Sample(_square()(d, r))), rtol=1e-5, atol=1e-5, node=False)
add("linalg.eigvalsh", id="linalg.eigvalsh_gradcheck", fn=lambda lib, a: lib.linalg.eigvalsh(a + a.mT),
    samples=same(lambda d, r: Sample(_square()(d, r))), rtol=1e-5, atol=1e-5, node=False)
add("linalg.eigh", id="linalg.eigh_vectors",
    fn=lambda lib, a: (lambda wv: (wv[1] * wv[0].exp()) @ wv[1].mT)(lib.linalg.eigh(a + a.mT)),
    samples=same(lambda d, r: Sample(_square()(d, r))), rtol=1e-5, atol=1e-5, node=False, gradgrad=False)
add("linalg.svd", id="linalg.svd_vectors",
    fn=lambda lib, a: (lambda usv: (usv[0] * usv[1] ** 2) @ usv[2])(lib.linalg.svd(a, full_matrices=False)),
    samples=_mats(((3, 4),), ((4, 3),)), rtol=1e-5, atol=1e-5, node=False, gradgrad=False)
add("linalg.qr", id="linalg.qr_q",
    fn=lambda lib, a: (lambda qr: qr[0] * qr[1].diagonal(0, -2, -1).sign().unsqueeze(-2))(lib.linalg.qr(a)),
    samples=_mats(((4, 3),), ((3, 3),)), rtol=1e-5, atol=1e-5, node=False, gradgrad=False)
add("geqrf", fn=lambda lib, a: tuple(lib.geqrf(a)), samples=_mats(((4, 3),), ((3, 5),), ((2, 4, 3),)),
    rtol=1e-5, atol=1e-5, grad=False, errors=_err(lambda r: Sample(arr(r, (3,), "float32"))))
add("linalg.pinv", fn=lambda lib, a: lib.linalg.pinv(a), samples=_mats(((3, 4),), ((4, 2),)), rtol=1e-5, atol=1e-5,
    gradgrad=False)
add("linalg.lstsq", fn=lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
    samples=same(lambda d, r: Sample(_square()(d, r), arr(r, (3, 2), d))), rtol=1e-5, atol=1e-5, gradgrad=False,
    node=False)
def _deficient(d, r):
    a = arr(r, (4, 3), d)
    a[:, 2] = a[:, 1]
    return a


for _drv in ("gels", "gelsy", "gelsd", "gelss"):  # what each LAPACK driver reports besides the solution
    add("linalg.lstsq", id=f"linalg.lstsq_extras_{_drv}", grad=False, node=False, rtol=1e-5, atol=1e-5,
        fn=lambda lib, a, b, _d=_drv: tuple(lib.linalg.lstsq(a, b, driver=_d))[1:],
        samples=same(lambda d, r: Sample(arr(r, (4, 3), d), arr(r, (4, 2), d)),
                     lambda d, r: Sample(arr(r, (2, 4, 3), d), arr(r, (2, 4, 1), d)),
                     *([] if _drv == "gels" else [lambda d, r: Sample(_deficient(d, r), arr(r, (4, 2), d))])))
add("linalg.matrix_rank", fn=lambda lib, a: lib.linalg.matrix_rank(a), grad=False,
    samples=same(lambda d, r: Sample(np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], d))))
add("linalg.matrix_power", fn=lambda lib, a, n: lib.linalg.matrix_power(a, n),
    samples=same(lambda d, r: Sample(_square()(d, r), 3), lambda d, r: Sample(_square()(d, r), 0),
                 lambda d, r: Sample(_square()(d, r), -2)), rtol=1e-5, atol=1e-5, node=False)

# ---- more pointwise, reductions, views and products --------------------------------------------------------


def _cplx(rng, shape, dtype="complex128"):
    return np.asarray(rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)


add("pow", id="pow_scalar_base", fn=lambda lib, x: lib.pow(2.5, x), samples=unary(), dtypes=FLOAT + ("int64",),
    out=True, grad=True)
add("xlogy", id="xlogy_scalar_self", fn=lambda lib, y: lib.xlogy(2.0, y), samples=unary(0.2, 3), out=True)
add("isreal", samples=same(lambda d, r: Sample(arr(r, (3, 4), d))), dtypes=FLOAT + ("int64",), grad=False)
add("isreal", id="isreal_complex", fn=lambda lib, x: lib.isreal(x * 1j * (x > 0)),
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d))), grad=False)
add("conj_physical", id="conj_physical", fn=lambda lib, x: lib.view_as_real(lib.conj_physical(lib.view_as_complex(x))),
    samples=same(lambda d, r: Sample(arr(r, (3, 4, 2), d))), noncontig=False)
add("conj", fn=lambda lib, x: lib.view_as_real(lib.view_as_complex(x).conj().resolve_conj()),
    samples=same(lambda d, r: Sample(arr(r, (3, 4, 2), d))), noncontig=False)
add("view_as_real", fn=lambda lib, x: lib.view_as_real(x), samples=lambda d, r: [Sample(_cplx(r, (3, 4))),
                                                                                 Sample(_cplx(r, ()))],
    dtypes=("complex128",), grad=False, noncontig=False)
add("view_as_complex", fn=lambda lib, x: lib.view_as_real(lib.view_as_complex(x) * (1 + 2j)),
    samples=same(lambda d, r: Sample(arr(r, (3, 4, 2), d)), lambda d, r: Sample(arr(r, (2,), d))), noncontig=False)
add("argmin", samples=along(distinct=True), dtypes=FLOAT + ("int64",), grad=False)
add("argmin", id="argmin_all", fn=lambda lib, x: lib.argmin(x), samples=same(lambda d, r: Sample(arr(r, (3, 4), d))),
    dtypes=FLOAT + ("int64",), grad=False)
for _name in ("max", "min"):
    add(_name, id=_name + "_all", samples=same(lambda d, r: Sample(np.array([[1.0, 3.0, -1.0], [3.0, 0.5, -1.0]], d)),
                                               lambda d, r: Sample(arr(r, (), d))), dtypes=FLOAT + ("int64",),
        gradgrad=False, gradcheck=False)
    add(_name, id=_name + "_binary", samples=binary(), dtypes=FLOAT, out=True, gradgrad=False)
add("min", id="min_dim", fn=lambda lib, x, **k: tuple(lib.min(x, **k)), samples=along(distinct=True, keepdim=True),
    dtypes=FLOAT + ("int64",))
add("nanmedian", samples=same(lambda d, r: Sample(np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 2.0, np.nan, -1]], d)),
                              lambda d, r: Sample(arr(r, (3, 5), d))), gradgrad=False, gradcheck=False)
add("bmm", samples=_mats(((3, 2, 4), (3, 4, 5)), (("T", 3, 2, 4), (3, 4, 2))), out=True,
    errors=_err(lambda r: Sample(arr(r, (3, 2, 4), "float32"), arr(r, (3, 5, 2), "float32"))))
add("dot", samples=_mats(((4,), (4,)), ((0,), (0,))), dtypes=FLOAT + ("int64",), out=True,
    errors=_err(lambda r: Sample(arr(r, (3,), "float32"), arr(r, (4,), "float32"))))
add("einsum", fn=lambda lib, eq, *xs: lib.einsum(eq, *xs),
    samples=lambda d, r: [Sample("ij,jk->ik", arr(r, (2, 3), d), arr(r, (3, 4), d)),
                          Sample("bij->bji", arr(r, (2, 3, 4), d)), Sample("ii->i", arr(r, (3, 3), d)),
                          Sample("i,i->", arr(r, (3,), d), arr(r, (3,), d))], node=False)
add("einsum", id="einsum_sums",  # letters summed in one operand, products without contraction, three operands
    fn=lambda lib, eq, *xs: lib.einsum(eq, *xs), node=False,
    samples=lambda d, r: [Sample("ij->j", arr(r, (2, 3), d)), Sample("ii->", arr(r, (3, 3), d)),
                          Sample("ij,k->k", arr(r, (2, 3), d), arr(r, (4,), d)),
                          Sample("ij,ij->ij", arr(r, (2, 3), d), arr(r, (2, 3), d)),
                          Sample("i,j->ij", arr(r, (2,), d), arr(r, (3,), d)),
                          Sample("ij,jk,kl->il", arr(r, (2, 3), d), arr(r, (3, 4), d), arr(r, (4, 2), d))])
add("as_strided", fn=lambda lib, x, *a: x.as_strided(*a),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d), (2, 2), (1, 2)), Sample(arr(r, (3, 4), d), (3,), (3,), 1)],
    noncontig=False, dtypes=FLOAT + ("int64",))
add("select", fn=lambda lib, x, d, i: x.select(d, i),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d), 0, 1), Sample(arr(r, ("T", 4, 3), d), 1, -1)],
    dtypes=FLOAT + ("int64",), errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), 1, 4)))
add("squeeze", fn=lambda lib, x, *d: x.squeeze(*d),
    samples=lambda d, r: [Sample(arr(r, (1, 3, 1, 2), d)), Sample(arr(r, (1, 3, 1, 2), d), 2),
                          Sample(arr(r, (1, 3, 1, 2), d), (0, 1))], dtypes=FLOAT + ("int64",))
add("unfold", fn=lambda lib, x, *a: x.unfold(*a),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d), 1, 2, 1), Sample(arr(r, (2, 3, 4), d), 0, 2, 2),
                          Sample(arr(r, ("T", 4, 3), d), 0, 2, 1)], dtypes=FLOAT + ("int64",),
    errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), 1, 5, 1)))
add("view", id="view_dtype", fn=lambda lib, x: x.view(lib.int32), samples=same(lambda d, r: Sample(arr(r, (3, 4), d))),
    dtypes=("float32",), grad=False, noncontig=False)
add("getitem", id="index_tensor", fn=lambda lib, x, i: x[i, 1:],
    samples=lambda d, r: [Sample(arr(r, (4, 3), d), np.array([2, 0, 2])),
                          Sample(arr(r, (4, 3), d), np.array([[1], [3]]))],
    dtypes=FLOAT + ("int64",))
add("index_put", fn=lambda lib, x, i, v, **k: x.index_put((i,), v, **k),
    samples=lambda d, r: [Sample(arr(r, (4, 3), d), np.array([2, 0]), arr(r, (2, 3), d)),
                          Sample(arr(r, (4, 3), d), np.array([2, 0, 2]), arr(r, (3,), d), accumulate=True)],
    inplace=lambda lib, x, i, v, **k: x.index_put_((i,), v, **k), dtypes=FLOAT + ("int64",))
add("copy_", fn=lambda lib, x, y: x.clone().copy_(y),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d), arr(r, (4,), d)),
                          Sample(arr(r, ("T", 4, 3), d), arr(r, (4, 3), d))],
    dtypes=FLOAT + ("int64",))
add("copy_", id="copy_cast", fn=lambda lib, x, y: x.clone().copy_(y), grad=False,
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3, 4), "int64"))))
add("fill_", fn=lambda lib, x, v: x.clone().fill_(v), samples=lambda d, r: [Sample(arr(r, (3, 4), d), 1.5),
                                                                             Sample(arr(r, (3, 4), d), arr(r, (), d))],
    dtypes=FLOAT)

# ---- creation ----------------------------------------------------------------------------------------------

add("arange", fn=lambda lib, *a, **k: lib.arange(*a, **k), grad=False, noncontig=False,
    samples=lambda d, r: [Sample(5), Sample(1.0, 3.0, 0.5),
                          Sample(-3, 7, 2), Sample(0.0, 1.0, 0.1)],
    errors=_err(lambda r: Sample(0, 5, 0), lambda r: Sample(5, 0, 1)))
add("linspace", fn=lambda lib, *a, **k: lib.linspace(*a, **k), grad=False, noncontig=False,
    samples=lambda d, r: [Sample(0, 1, 7), Sample(-2.0, 3.0, 1), Sample(1, 10, 4), Sample(0.0, 1.0, 0)],
    errors=_err(lambda r: Sample(0, 1, -1)))
add("empty", fn=lambda lib, *a: lib.empty(*a).fill_(0.5), grad=False, noncontig=False,
    samples=lambda d, r: [Sample(2, 3), Sample((0, 4)), Sample(())])
add("empty_strided", fn=lambda lib, *a: lib.empty_strided(*a).fill_(0.5), grad=False, noncontig=False,
    samples=lambda d, r: [Sample((2, 3), (1, 2)), Sample((2, 3, 4), (12, 1, 3)), Sample((0, 2), (2, 1))])

# ---- nn functionals: activations, softmax, normalization, losses, convolution, pooling, embedding ------------


def _F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


for _name, _kw in [("relu", {}), ("celu", {"alpha": 1.5}), ("elu", {}), ("elu", {"alpha": 0.5}), ("gelu", {}),
                   ("gelu", {"approximate": "tanh"}), ("hardshrink", {"lambd": 0.7}), ("hardsigmoid", {}),
                   ("hardswish", {}), ("hardtanh", {"min_val": -0.5, "max_val": 1.2}), ("leaky_relu", {}),
                   ("leaky_relu", {"negative_slope": 0.3}), ("logsigmoid", {}), ("mish", {}), ("silu", {}),
                   ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 1.5}), ("softshrink", {"lambd": 0.6}),
                   ("threshold", {"threshold": 0.3, "value": -1.0}), ("relu6", {}), ("selu", {})]:
    _id = "nn.functional." + _name + "".join(f"_{k}" for k in _kw)
    add("nn.functional." + _name, id=_id, fn=_F(_name), samples=unary(-3, 3, **_kw), dtypes=FLOAT + HALF,
        gradgrad=_name not in ("hardshrink", "softshrink", "hardtanh", "relu6", "threshold", "hardsigmoid"),
        inplace=(lambda lib, x, _n=_name, **k: getattr(lib.nn.functional, _n)(x, inplace=True, **k))
        if _name not in ("gelu", "hardshrink", "logsigmoid", "softplus", "softshrink") else None)
add("nn.functional.prelu", fn=_F("prelu"), samples=lambda d, r: [Sample(arr(r, (2, 3, 4), d), arr(r, (3,), d, 0, 1)),
                                                                  Sample(arr(r, (2, 3), d), arr(r, (1,), d, 0, 1))])
for _name in ("softmax", "log_softmax", "softmin"):
    add("nn.functional." + _name, fn=_F(_name), samples=along(), dtypes=FLOAT + HALF)
    add("nn.functional." + _name, id=f"nn.functional.{_name}_dtype", dtypes=("float32",), node=False,
        fn=lambda lib, x, _n=_name: getattr(lib.nn.functional, _n)(x, dim=1, dtype=lib.float64),
        samples=same(lambda d, r: Sample(arr(r, (3, 4), d))))


def _norm_samples(dtype, rng):
    return [Sample(arr(rng, (4, 3, 5), dtype), arr(rng, (3,), dtype), arr(rng, (3,), dtype, 0.5, 2)),
            Sample(arr(rng, (2, 3, 2, 2), dtype), arr(rng, (3,), dtype), arr(rng, (3,), dtype, 0.5, 2))]


add("nn.functional.batch_norm", id="nn.functional.batch_norm_eval",
    fn=lambda lib, x, m, v: lib.nn.functional.batch_norm(x, m, v), samples=_norm_samples, grad_inputs=(0,))
add("nn.functional.batch_norm", id="nn.functional.batch_norm_eval_affine",
    fn=lambda lib, x, m, v, w, b: lib.nn.functional.batch_norm(x, m, v, w, b),
    samples=lambda d, r: [Sample(*s.inputs, arr(r, (3,), d), arr(r, (3,), d)) for s in _norm_samples(d, r)],
    grad_inputs=(0, 3, 4))
add("nn.functional.batch_norm", id="nn.functional.batch_norm_affine",
    fn=lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True), samples=_norm_samples,
    rtol=1e-5, atol=1e-6)
add("nn.functional.batch_norm", id="nn.functional.batch_norm_running",  # the running stats are op outputs
    fn=lambda lib, x, m, v: (lambda mm, vv: (lib.nn.functional.batch_norm(x, mm, vv, training=True, momentum=0.3),
                                             mm, vv))(m.clone(), v.clone()),
    samples=_norm_samples, grad_inputs=(0,), rtol=1e-5, atol=1e-6)
add("nn.functional.layer_norm", fn=lambda lib, x, w, b, **k: lib.nn.functional.layer_norm(x, w.shape, w, b, **k),
    samples=lambda d, r: [Sample(arr(r, (3, 4), d), arr(r, (4,), d), arr(r, (4,), d)),
                          Sample(arr(r, (2, 3, 4), d), arr(r, (3, 4), d), arr(r, (3, 4), d), eps=1e-3)],
    rtol=1e-5, atol=1e-6)
add("nn.functional.group_norm", fn=lambda lib, x, w, b, g: lib.nn.functional.group_norm(x, g, w, b),
    samples=lambda d, r: [Sample(arr(r, (2, 4, 3), d), arr(r, (4,), d), arr(r, (4,), d), 2),
                          Sample(arr(r, (2, 6, 2, 2), d), arr(r, (6,), d), arr(r, (6,), d), 3)],
    rtol=1e-5, atol=1e-6)
add("nn.functional.layer_norm", id="nn.functional.layer_norm_no_affine",
    fn=lambda lib, x, *_: lib.nn.functional.layer_norm(x, x.shape[-1:]), samples=_norm_samples, grad_inputs=(0,))
add("nn.functional.group_norm", id="nn.functional.group_norm_no_affine",
    fn=lambda lib, x, *_: lib.nn.functional.group_norm(x, 3), samples=_norm_samples, grad_inputs=(0,), rtol=1e-5,
    atol=1e-6)
add("nn.functional.instance_norm", fn=lambda lib, x, w, b: lib.nn.functional.instance_norm(x, weight=w, bias=b),
    samples=_norm_samples, node=False)


def _logp(dtype, rng, shape):
    x = rng.uniform(-2, 2, shape)
    return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(dtype)


add("nn.functional.nll_loss", fn=_F("nll_loss"),
    samples=lambda d, r: [Sample(_logp(d, r, (4, 3)), np.array([0, 2, 1, 2])),
                          Sample(_logp(d, r, (4, 3)), np.array([0, 2, -100, 2]), reduction="sum"),
                          Sample(_logp(d, r, (4, 3)), np.array([0, 2, 1, 2]), reduction="none"),
                          Sample(_logp(d, r, (2, 3, 2)), np.array([[0, 2], [1, 1]])),
                          Sample(_logp(d, r, (2, 3, 2)), np.array([[0, 2], [1, 1]]), reduction="none"),
                          Sample(np.ascontiguousarray(np.moveaxis(_logp(d, r, (2, 2, 2, 3)), -1, 1)),
                                 np.array([[[0, 2], [1, 1]]] * 2)),
                          Sample(np.moveaxis(_logp(d, r, (2, 2, 2, 1, 3)), -1, 1), np.zeros((2, 2, 2, 1), np.int64),
                                 reduction="none"),
                          Sample(_logp(d, r, (3,)), np.array(1)),
                          Sample(_logp(d, r, (3,)), np.array(2), reduction="none"),
                          Sample(_logp(d, r, (4, 3)), np.array([0, 2, 1, 2]), weight=None, ignore_index=1)],
    errors=_err(lambda r: Sample(_logp("float32", r, (4, 3)), np.array([0, 2, 1])),
                lambda r: Sample(_logp("float32", r, (4, 3)), np.array([0.0, 2, 1, 2]))))
add("nn.functional.nll_loss", id="nn.functional.nll_loss_weight",
    fn=lambda lib, x, t, w, **k: lib.nn.functional.nll_loss(x, t, w, **k),
    samples=lambda d, r: [Sample(_logp(d, r, (4, 3)), np.array([0, 2, 1, 2]), arr(r, (3,), d, 0.5, 2)),
                          Sample(_logp(d, r, (2, 3, 2, 2)), np.zeros((2, 2, 2), np.int64), arr(r, (3,), d, 0.5, 2),
                                 reduction="none")],
    grad_inputs=(0,))
add("nn.functional.cross_entropy", fn=_F("cross_entropy"),
    samples=lambda d, r: [Sample(arr(r, (4, 3), d), np.array([0, 2, 1, 2])),
                          Sample(arr(r, (4, 3), d), np.array([0, 2, 1, 2]), label_smoothing=0.2)])


def _ctc(dtype, rng):
    lp = _logp(dtype, rng, (6, 2, 4))  # (T, N, C)
    return [Sample(lp, np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]), np.array([3, 2])),
            Sample(lp, np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]), np.array([3, 2]), reduction="sum"),
            Sample(lp, np.array([1, 2, 2, 3, 1]), np.array([6, 6]), np.array([3, 2]), reduction="none")]


add("nn.functional.ctc_loss", fn=_F("ctc_loss"), samples=_ctc, gradgrad=False, rtol=1e-5, atol=1e-6,
    gradcheck=False, noncontig=False)  # (torch's ctc gradient assumes log_softmax inputs: not a true gradient)


def _conv(nd, transpose=False):
    def gen(dtype, rng):
        sp = (5, 4, 3)[:nd]
        ksp = (3, 2, 2)[:nd]
        w = (3, 2) + ksp if transpose else (2, 3) + ksp
        return [Sample(arr(rng, (2, 3) + sp, dtype), arr(rng, w, dtype), arr(rng, (2,), dtype)),
                Sample(arr(rng, (1, 3) + sp, dtype), arr(rng, w, dtype), None, stride=2, padding=1),
                Sample(arr(rng, (2, 3) + sp, dtype), arr(rng, w, dtype), arr(rng, (2,), dtype), dilation=2)
                if not transpose else
                Sample(arr(rng, (2, 3) + sp, dtype), arr(rng, w, dtype), None, stride=2, output_padding=1)]
    return gen


for _nd in (1, 2, 3):
    add(f"nn.functional.conv{_nd}d", fn=_F(f"conv{_nd}d"), samples=_conv(_nd), rtol=1e-5, atol=1e-5,
        gradgrad=_nd < 3, gradcheck=_nd == 1, errors=_err(
            lambda r, _nd=_nd: Sample(arr(r, (2, 4) + (5,) * _nd, "float32"), arr(r, (2, 3) + (3,) * _nd, "float32"))))
    add(f"nn.functional.conv_transpose{_nd}d", fn=_F(f"conv_transpose{_nd}d"), samples=_conv(_nd, True),
        rtol=1e-5, atol=1e-5, gradgrad=_nd < 3, gradcheck=_nd == 1)
add("nn.functional.conv2d", id="nn.functional.conv2d_groups", fn=_F("conv2d"), rtol=1e-5, atol=1e-5,
    samples=lambda d, r: [Sample(arr(r, (2, 4, 5, 4), d), arr(r, (6, 2, 3, 2), d), arr(r, (6,), d), groups=2,
                                 padding="same")])


def _pool(nd, low=-2.0):
    def gen(dtype, rng):
        sp = (6, 5, 4)[:nd]
        return [Sample(arr(rng, (2, 3) + sp, dtype, low), 2), Sample(arr(rng, (3,) + sp, dtype, low), 3, stride=2,
                                                                     padding=1),
                Sample(arr(rng, (2, 3) + sp, dtype, low), 2, ceil_mode=True)]
    return gen


for _nd in (1, 2, 3):
    add(f"nn.functional.avg_pool{_nd}d", fn=_F(f"avg_pool{_nd}d"), samples=_pool(_nd), gradcheck=_nd == 2)
    add(f"nn.functional.max_pool{_nd}d", fn=_F(f"max_pool{_nd}d"), samples=_pool(_nd), gradcheck=False)
    add(f"nn.functional.max_pool{_nd}d", id=f"nn.functional.max_pool{_nd}d_indices", gradcheck=False,
        fn=lambda lib, x, *a, _nd=_nd, **k: tuple(getattr(lib.nn.functional, f"max_pool{_nd}d")(
            x, *a, return_indices=True, **k)), samples=_pool(_nd))
    add(f"nn.functional.adaptive_max_pool{_nd}d", gradcheck=False,
        fn=lambda lib, x, s, _nd=_nd: tuple(getattr(lib.nn.functional, f"adaptive_max_pool{_nd}d")(
            x, s, return_indices=True)),
        samples=lambda d, r, _nd=_nd: [Sample(arr(r, (2, 3) + (6, 5, 4)[:_nd], d), 3),
                                       Sample(arr(r, (3,) + (6, 5, 4)[:_nd], d), 2)])
    add(f"nn.functional.adaptive_avg_pool{_nd}d", fn=_F(f"adaptive_avg_pool{_nd}d"),
        samples=lambda d, r, _nd=_nd: [Sample(arr(r, (2, 3) + (6, 5, 4)[:_nd], d), 3),
                                       Sample(arr(r, (3,) + (6, 5, 4)[:_nd], d), 2),
                                       Sample(arr(r, (2, 3) + (6, 5, 4)[:_nd], d), 1)])
add("nn.functional.embedding", fn=lambda lib, w, i, **k: lib.nn.functional.embedding(i, w, **k),
    samples=lambda d, r: [Sample(arr(r, (5, 3), d), np.array([[0, 4], [2, 0]])),
                          Sample(arr(r, (5, 3), d), np.array([1, 1, 3]), padding_idx=1),
                          Sample(arr(r, (5, 3), d), np.array([1, 1, 3]), scale_grad_by_freq=True)],
    errors=_err(lambda r: Sample(arr(r, (5, 3), "float32"), np.array([0.0, 1.0]))))


def _src_grad(name, *extra):
    """The gradient of a scatter's src, taken inside fn: torch refuses a src larger than the index."""
    def fn(lib, x, d, i, s):
        s = s.detach().requires_grad_(True)
        return lib.autograd.grad(getattr(lib, name)(x, d, i, s, *extra).exp().sum(), s)[0]
    return fn


for _name, _extra in [("scatter", ()), ("scatter_add", ()), ("scatter_reduce", ("sum",))]:
    add(_name, id=_name + "_src_grad", fn=_src_grad(_name, *_extra), grad=False, samples=_with_index(_src),
        errors=_err(lambda r: Sample(arr(r, (3, 4), "float32"), 0, _IDX_SMALL, arr(r, (3, 4), "float32"))))

# ---- random sampling ---------------------------------------------------------------------------------------
# ember's generator reproduces torch's streams (tests/test_random.py), so a sampler's entry seeds both
# libraries and compares the draws exactly; gradients of the samplers that have one are torch's too.


def _seeded(call):
    def fn(lib, *a, **k):
        lib.manual_seed(0)
        return call(lib, *a, **k)
    return fn


def _sizes(dtype, rng):
    return [Sample((3, 5)), Sample((7,)), Sample((0, 2))]


_RANDOM = dict(grad=False, noncontig=False, strides=True)
add("rand", fn=_seeded(lambda lib, s, **k: lib.rand(s, **k)), samples=_sizes, **_RANDOM)
add("rand", id="rand_f64", fn=_seeded(lambda lib, s: lib.rand(s, dtype=lib.float64)), samples=_sizes, **_RANDOM)
add("randn", fn=_seeded(lambda lib, s: lib.randn(s)), samples=_sizes, **_RANDOM)
add("randint", fn=_seeded(lambda lib, s: lib.randint(-3, 9, s)), samples=_sizes, **_RANDOM,
    errors=_err(lambda r: Sample((2,), 5, 1)))
add("randperm", fn=_seeded(lambda lib, n: lib.randperm(n)),
    samples=same(lambda d, r: Sample(9), lambda d, r: Sample(0)),
    **_RANDOM)
for _name, _call in [("rand_like", lambda lib, x: lib.rand_like(x)), ("randn_like", lambda lib, x: lib.randn_like(x)),
                     ("randint_like", lambda lib, x: lib.randint_like(x, 2, 9))]:
    add(_name, fn=_seeded(_call), samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, ("T", 4, 3), d))],
        dtypes=("float32",), **_RANDOM)
for _id, _call in [("uniform_", lambda lib, x: x.uniform_(-1.5, 2.0)), ("normal_", lambda lib, x: x.normal_(1.0, 0.5)),
                   ("exponential_", lambda lib, x: x.exponential_(2.0)),
                   ("geometric_", lambda lib, x: x.geometric_(0.3)),
                   ("log_normal_", lambda lib, x: x.log_normal_(0.5, 0.3)),
                   ("cauchy_", lambda lib, x: x.cauchy_(0.5, 2.0)),
                   ("random_", lambda lib, x: x.random_()), ("random_to", lambda lib, x: x.random_(7)),
                   ("random_from", lambda lib, x: x.random_(-4, 9)),
                   ("bernoulli_tensor", lambda lib, x: x.bernoulli_(lib.linspace(0, 1, x.shape[-1])))]:
    add(_id[:_id.index("_") + 1], id=_id,
        fn=_seeded(lambda lib, x, _c=_call: _c(lib, x.clone())),
        samples=lambda d, r: [Sample(arr(r, (3, 4), d)), Sample(arr(r, ("T", 4, 3), d))],
        dtypes=("float32",) if not _id.startswith("random_") else ("float32", "int64"), **_RANDOM)
add("bernoulli", fn=_seeded(lambda lib, p: lib.bernoulli(p)), samples=unary(0, 1), dtypes=FLOAT,
    noncontig=False, grad=True, gradcheck=False)
add("normal", id="normal_tensor_float", fn=_seeded(lambda lib, m: lib.normal(m, 0.5)), samples=unary(), dtypes=FLOAT,
    noncontig=False, gradcheck=False)
add("normal", id="normal_float_tensor", fn=_seeded(lambda lib, s: lib.normal(1.0, s)), samples=unary(0.5, 2),
    dtypes=FLOAT, noncontig=False, gradcheck=False)
add("normal", id="normal_tensor_tensor", fn=_seeded(lambda lib, m, s: lib.normal(m, s)), samples=binary(0.5, 2),
    dtypes=FLOAT, noncontig=False, gradcheck=False)
add("multinomial", fn=_seeded(lambda lib, p, n, **k: lib.multinomial(p, n, **k)), **_RANDOM,
    samples=lambda d, r: [Sample(arr(r, (7,), d, 0.1, 1), 20, replacement=True), Sample(arr(r, (3, 6), d, 0.1, 1), 4)],
    errors=_err(lambda r: Sample(arr(r, (3,), "float32", 0.1, 1), 5)))


def _distribution(sample, check):
    """The draws of a sampler that matches torch in distribution only (its kernel's stream is not reproduced):
    shape, dtype and strides through `x * 0`, and a statistical property of the draws that holds with
    overwhelming probability (a bool)."""
    def fn(lib, *a, **k):
        lib.manual_seed(0)
        x = sample(lib, *a, **k)
        return x * 0, check(lib, x, *a)
    return fn


add("bernoulli", id="bernoulli_p", fn=_distribution(  # (torch draws a scalar p from MKL's stream on Intel CPUs)
    lambda lib, x, p: lib.bernoulli(x, p),
    lambda lib, x, _, p: ((x.mean() - p).abs() < 0.05) & ((x == 0) | (x == 1)).all()),
    samples=lambda d, r: [Sample(arr(r, (200, 20), d), 0.3)], **_RANDOM)
add("bernoulli_", id="bernoulli_float", fn=_distribution(
    lambda lib, x, p: x.clone().bernoulli_(p), lambda lib, x, _, p: ((x.mean() - p).abs() < 0.05)
    & ((x == 0) | (x == 1)).all()), samples=lambda d, r: [Sample(arr(r, (200, 20), d), 0.7)], **_RANDOM)
add("nn.functional.dropout", fn=_distribution(
    lambda lib, x, p: lib.nn.functional.dropout(x, p), lambda lib, y, x, p: ((y == 0).float().mean() - p).abs() < 0.05),
    samples=lambda d, r: [Sample(arr(r, (200, 20), d, 1, 2), 0.4)], **_RANDOM)

# ---- recurrent layers, module hooks, custom Functions ---------------------------------------------------------


def _rnn(kind, **kw):
    """An nn.RNN/LSTM/GRU (its weights from the seeded generator: ember's init draws torch's numbers) on x."""
    def fn(lib, x, h=None):
        lib.manual_seed(0)
        m = getattr(lib.nn, kind)(3, 4, batch_first=True, **kw).to(x.dtype)
        out = m(x) if h is None else m(x, h)
        return (out[0],) + (tuple(out[1]) if isinstance(out[1], tuple) else (out[1],))
    return fn


for _kind, _kw in [("RNN", {}), ("LSTM", {"num_layers": 2}), ("GRU", {"bidirectional": True}),
                   ("LSTM", {"proj_size": 2})]:
    add("nn." + _kind, id=f"nn.{_kind}" + "".join(f"_{k}" for k in _kw), fn=_rnn(_kind, **_kw), rtol=1e-5, atol=1e-6,
        samples=lambda d, r: [Sample(arr(r, (2, 5, 3), d)), Sample(arr(r, (5, 3), d))], gradgrad=False,
        gradcheck=_kind == "GRU", noncontig=False, node=False)


def _hooked(lib, x):
    """A module with a full backward hook that doubles the gradient it passes on (BackwardHookFunction)."""
    m = lib.nn.Tanh()
    m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 2,))
    return m(x)


add("nn.Module.register_full_backward_hook", fn=_hooked, samples=unary(), gradgrad=False, node=False,
    gradcheck=False)  # (the hook doubles the gradient on purpose: not the function's derivative)


def _function(lib):
    class CubeScale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.k, None
    return CubeScale


add("autograd.Function.apply", fn=lambda lib, x: _function(lib).apply(x, 1.5), samples=unary(), dtypes=FLOAT,
    node=False)

# ---- optimizer steps and foreach ops (each optimizer step is one op over lists of tensors) -------------------


def _step(cls, steps=3, **hyper):
    """Parameters from `ws`, gradients from `gs`, `steps` optimizer steps: the parameters (and state) after."""
    def fn(lib, *arrays):
        n = len(arrays) // 2
        ps = [lib.nn.Parameter(w.clone()) for w in arrays[:n]]
        opt = getattr(lib.optim, cls)(ps, **hyper)
        for k in range(steps):
            for p, g in zip(ps, arrays[n:]):
                p.grad = g * (k + 1)
            if cls == "LBFGS":
                opt.step(lambda: sum(((p - 1) ** 2).sum() for p in ps).detach())
            else:
                opt.step()
        opt.zero_grad(set_to_none=False)
        return tuple(p.detach() for p in ps) + tuple(p.grad for p in ps)
    return fn


def _params(dtype, rng):
    return [Sample(arr(rng, (3, 4), dtype), arr(rng, (5,), dtype), arr(rng, (3, 4), dtype), arr(rng, (5,), dtype))]


for _cls, _hyper in [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("SGD", {"lr": 0.1}),
                     ("Adam", {"lr": 0.1}), ("AdamW", {"lr": 0.1, "amsgrad": True}), ("Adadelta", {}),
                     ("Adagrad", {"lr": 0.1}), ("Adamax", {"lr": 0.1}), ("ASGD", {"lr": 0.1, "t0": 1}),
                     ("NAdam", {"lr": 0.1}), ("RAdam", {"lr": 0.1}), ("RMSprop", {"lr": 0.1, "centered": True}),
                     ("Rprop", {}), ("LBFGS", {"lr": 0.5})]:
    add(f"optim.{_cls}", id=f"optim.{_cls}" + "".join(f"_{k}" for k in _hyper if k != "lr"), fn=_step(_cls, **_hyper),
        samples=_params, grad=False, noncontig=False, rtol=1e-6 if _cls == "LBFGS" else None)


def _swa(lib, w, x):
    m = lib.nn.Linear(4, 1, bias=False)
    with lib.no_grad():
        m.weight.copy_(w)
    avg = lib.optim.swa_utils.AveragedModel(m)
    ema = lib.optim.swa_utils.AveragedModel(m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    for _ in range(3):
        with lib.no_grad():
            m.weight.mul_(x)
        avg.update_parameters(m)
        ema.update_parameters(m)
    return avg.module.weight.detach(), ema.module.weight.detach()


add("optim.swa_utils.AveragedModel", fn=_swa, samples=same(lambda d, r: Sample(arr(r, (1, 4), d), arr(r, (1, 4), d))),
    grad=False, noncontig=False)


def _lists(lib, xs, n):
    return [list(xs[i * n:(i + 1) * n]) for i in range(len(xs) // n)]


def _foreach(name, nlists, *extra, **kw):
    def fn(lib, *xs):
        lists = _lists(lib, xs, 2)
        out = getattr(lib, name)(*lists[:nlists], *extra, **kw)
        return tuple(out) if out is not None else tuple(lists[0])
    return fn


def _two(k):
    def gen(dtype, rng):
        return [Sample(*[arr(rng, s, dtype, 0.5, 2) for _ in range(k) for s in ((3, 4), (5,))])]
    return gen


for _name, _nl, _extra, _kw in [("abs", 1, (), {}), ("exp", 1, (), {}), ("neg", 1, (), {}), ("reciprocal", 1, (), {}),
                                ("sign", 1, (), {}), ("sqrt", 1, (), {}), ("add", 2, (), {"alpha": 2}),
                                ("sub", 2, (), {}), ("mul", 2, (), {}), ("div", 2, (), {}), ("maximum", 2, (), {}),
                                ("minimum", 2, (), {}), ("pow", 2, (), {}), ("add", 1, (1.5,), {}),
                                ("mul", 1, (0.5,), {}), ("addcmul", 3, (), {"value": 0.5}), ("addcdiv", 3, (), {}),
                                ("lerp", 2, (0.3,), {}), ("norm", 1, (), {}), ("clamp_min", 1, (0.8,), {}),
                                ("clamp_max", 1, (1.2,), {}), ("clamp_min", 2, (), {})]:
    for _inplace in ((False, True) if _name != "norm" else (False,)):
        _fname = f"_foreach_{_name}" + ("_" if _inplace else "")
        add(_fname, id=_fname + ("_scalar" if _extra else ""), fn=_foreach(_fname, _nl, *_extra, **_kw),
            samples=_two(_nl), grad=False, noncontig=False)  # (ember's foreach ops have no derivative yet)
add("nn.functional.interpolate", id="interpolate_uint8",  # the fixed-point uint8 path: one `_resample_uint8`
    fn=lambda lib, x: (lib.nn.functional.interpolate(x, size=(5, 3), mode="bilinear"),
                       lib.nn.functional.interpolate(x, size=(2, 9), mode="bicubic", antialias=True)),
    samples=same(lambda d, r: Sample(arr(r, (1, 2, 4, 6), d))), dtypes=("uint8",), grad=False, noncontig=False)
add("_foreach_zero_", fn=_foreach("_foreach_zero_", 1), samples=_two(1), grad=False, noncontig=False)
add("_foreach_copy_", fn=_foreach("_foreach_copy_", 2), samples=_two(2), grad=False, noncontig=False)
add("zero_", fn=lambda lib, x: x.clone().zero_(), samples=unary(), dtypes=FLOAT + ("int64",))


def _pool_grad(name):
    """The input gradient of a pool as a function of the input and the output's gradient `v`: its backward
    is the pool's double backward (the backward op's own derivative)."""
    def fn(lib, x, v, **k):
        x = x.detach().requires_grad_(True)
        y = getattr(lib.nn.functional, name)(x, 2, **k)
        return lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)[0]
    return fn


_POOL_GRAD = {"2d": [((2, 3, 6, 4), (2, 3, 3, 2), {}), ((3, 5, 4), (3, 3, 2), {"ceil_mode": True})],
              "adaptive": [((2, 3, 6, 4), (2, 3, 2, 2), {}), ((3, 5, 4), (3, 2, 2), {})],
              "1d": [((2, 3, 6), (2, 3, 3), {}), ((3, 5), (3, 3), {"ceil_mode": True})],
              "3d": [((2, 3, 6, 4, 4), (2, 3, 3, 2, 2), {}), ((3, 5, 4, 2), (3, 3, 2, 1), {"ceil_mode": True})]}
for _name, _kind in [("max_pool2d", "2d"), ("avg_pool2d", "2d"), ("adaptive_avg_pool2d", "adaptive"),
                     ("adaptive_max_pool2d", "adaptive"), ("max_pool1d", "1d"), ("avg_pool3d", "3d")]:
    add(f"nn.functional.{_name}", id=f"nn.functional.{_name}_backward", fn=_pool_grad(_name),
        samples=lambda d, r, _kind=_kind: [Sample(arr(r, x, d), arr(r, v, d), **k) for x, v, k in _POOL_GRAD[_kind]],
        grad_inputs=(1,), gradcheck=False, noncontig=False)


# NOTE [ Table files by area ]
# Areas with many ops (special functions, fft, linalg, ...) keep their entries in `op_db_<area>.py` beside
# this file; each imports `add` and the sample builders from here and calls `add` at import. They load
# last, in name order, so every generic test sees one table.
for _path in sorted(__import__("pathlib").Path(__file__).parent.glob("op_db_*.py")):
    __import__(_path.stem)
