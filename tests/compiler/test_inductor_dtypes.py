"""The code generator's dtype semantics and source lines (ember/_inductor, issue 20) against torch.

- The OpInfo table's lowered ops over int8, int16, int32, int64, uint8, float16 and bfloat16 inputs, all of
  a dtype's samples in one compiled graph, through the C and the NumPy kernels, equal torch eager's results.
- Integer division (floor, trunc, remainder, fmod) with torch's sign rules, `INT_MIN // -1`, and torch's
  `ZeroDivisionError` for a zero divisor (NOTE [ Integer division ] in ember/_inductor/lowering.py).
- Half precision computed in float32 and rounded where stored (NOTE [ Half precision is computed in float ]
  in ember/_inductor/ir.py): fused chains equal torch.compile's bits. The reference is torch computing the
  same chain in float32 from the same half inputs and rounding once at the end, which is what torch.compile's
  CPU kernels do. With EMBER_SLOW_TESTS=1 each chain is compiled by torch.compile itself (~2 min) and ember's
  C kernels give its bits on every chain.
- NaN propagation of maximum, minimum, clamp, relu and amax/amin as torch's.
- Dynamo's node.meta["stack_trace"] in torch's format, carried to the forward and backward kernels, whose
  comments name this file and line.
"""

import functools
import os
import sys

import ml_dtypes
import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops"))

from compare import assert_same, check, to_ember, to_torch  # noqa: E402
from op_db import OPS  # noqa: E402

import ember  # noqa: E402
from ember._inductor.compile_fx import inductor  # noqa: E402

BACKENDS = ["c", "numpy"]
INTS = ("int8", "int16", "int32", "int64", "uint8")
HALF = ("float16", "bfloat16")

# the table's ops that have a lowering (ember/_inductor/lowering.py): the rest run ember's eager kernels
LOWERED = frozenset((
    "add", "sub", "mul", "div", "floor_divide", "true_divide", "remainder", "fmod", "maximum", "minimum", "neg",
    "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "log1p", "expm1", "reciprocal",
    "floor", "ceil", "trunc", "round", "square", "where", "clamp", "pow", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_not", "logical_and", "logical_or", "sum", "mean", "amax", "amin", "var", "nn.functional.relu",
    "nn.functional.silu", "nn.functional.gelu", "nn.functional.leaky_relu", "nn.functional.softmax",
    "nn.functional.log_softmax"))


def _backend(kind):
    return functools.partial(inductor, backend=kind)


def _spy(made):
    """A context in which every graph compile_fx compiles is appended to `made`."""
    cf = sys.modules["ember._inductor.compile_fx"]
    orig = cf.compile_fx

    class Spy:
        def __enter__(self):
            def spy(gm, ex=None, backend=None):
                g = orig(gm, ex, backend)
                made.append(g)
                return g
            cf.compile_fx = spy

        def __exit__(self, *exc):
            cf.compile_fx = orig
    return Spy()


def _table(dtype):
    accepted = "int32" if dtype in ("int8", "int16") else dtype  # (the table lists int32 for the small ints)
    return [op for op in OPS if op.name in LOWERED and accepted in op.dtypes and not op.id.endswith("_inplace")]


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("dtype", INTS + HALF)
def test_opinfo_ops_compiled_in_dtype(dtype, kind):
    rng = np.random.default_rng(0)
    plan = [(op, s) for op in _table(dtype) for s in op.samples(dtype, rng)[:2]]  # (same shape; broadcast)
    arrays = [x for _, s in plan for x in s.inputs if isinstance(x, np.ndarray)]

    def body(lib, *flat):
        it = iter(flat)
        outs = []
        for op, s in plan:
            xs = [next(it) if isinstance(x, np.ndarray) else x for x in s.inputs]
            outs.append(op.fn(lib, *xs, **s.kwargs))
        return tuple(outs)

    made = []
    with _spy(made):
        got = ember.compile(lambda *f: body(ember, *f), backend=_backend(kind))(*[to_ember(a) for a in arrays])
    want = body(torch, *[to_torch(a) for a in arrays])
    assert sum(g.n_kernels for g in made if hasattr(g, "n_kernels")) >= 1
    for (op, _), e, t in zip(plan, got, want):
        assert_same(e, t, rtol=op.rtol, atol=op.atol, check_stride=op.strides, path=f"{op.id} ({dtype}, {kind})")


# ---- integer division ------------------------------------------------------------------------------------------

def _divisions(lib, a, b, c, d):
    return ((a // b) * c + d, a % b, lib.fmod(a, b), lib.div(a, b, rounding_mode="trunc"), a // 3, a % -3,
            lib.remainder(a, 5), lib.fmod(a, -4), a / b, (a // b).float().sum(0))


def _int_operands(dtype, rng):
    lo = 0 if dtype == "uint8" else -100
    a = rng.integers(lo, 100, (6, 7)).astype(dtype)
    b = rng.integers(1 if dtype == "uint8" else -9, 10, (7,)).astype(dtype)
    b[b == 0] = 7
    return a, b, np.array(3, dtype), rng.integers(0, 5, (6, 7)).astype(dtype)


@pytest.mark.parametrize("kind", BACKENDS)
def test_integer_division_sign_rules_and_zero_divisor(kind):
    rng = np.random.default_rng(1)
    compiled = ember.compile(lambda *x: _divisions(ember, *x), backend=_backend(kind))
    for dtype in INTS:
        a, b, c, d = _int_operands(dtype, rng)
        check(lambda lib, *x: (compiled if lib is ember else functools.partial(_divisions, lib))(*x), a, b, c, d)
        # INT_MIN // -1 wraps and INT_MIN % -1 is 0 (torch.compile's results; torch's eager kernel traps there
        # for int32/int64, so ember's eager kernels are the reference)
        if dtype != "uint8":
            a2, b2 = a.copy(), b.copy()
            a2[0, 0], b2[0] = np.iinfo(dtype).min, -1
            for e, r in zip(compiled(*map(ember.from_numpy, (a2, b2, c, d))),
                            _divisions(ember, *map(ember.from_numpy, (a2, b2, c, d)))):
                assert e.dtype == r.dtype and np.array_equal(e.numpy(), r.numpy()), (dtype, e, r)
        b[1] = 0  # torch's RuntimeError("ZeroDivisionError"), from each kind of division
        for fn in (lambda L, a, b: a // b + 1, lambda L, a, b: a % b + 1, lambda L, a, b: L.fmod(a, b) + 1,
                   lambda L, a, b: L.div(a, b, rounding_mode="trunc") * 2, lambda L, a, b: a // 0):
            check(lambda lib, *x: (ember.compile(lambda *y: fn(ember, *y), backend=_backend(kind))
                                   if lib is ember else functools.partial(fn, lib))(*x), a, b)


def test_float_floor_division_is_eagers():
    # NOTE [ Integer division ]: float operands follow torch's eager kernels (1.0 // 0.1 == 9.0; torch.compile
    # computes floor(1.0 / 0.1) == 10.0 there), with IEEE results for a zero divisor
    a = np.array([1.0, -1.0, 5.0, -5.0, 0.0, 3.0, -0.0, np.inf, np.nan, 7.5], np.float32)
    b = np.array([0.1, 0.1, -3.0, 3.0, -2.0, 0.0, 2.0, 2.0, 1.0, -2.5], np.float32)
    fn = lambda L, a, b: (a // b, a % b, L.fmod(a, b), L.div(a, b, rounding_mode="trunc"))  # noqa: E731
    for kind in BACKENDS:
        for dt in (np.float32, np.float64):
            check(lambda lib, *x: (ember.compile(lambda *y: fn(ember, *y), backend=_backend(kind))
                                   if lib is ember else functools.partial(fn, lib))(*x), a.astype(dt), b.astype(dt))


# ---- half precision ------------------------------------------------------------------------------------------

def _ln(L, x, w):
    return L.nn.functional.layer_norm(x, (x.shape[-1],), w, w)


# fused chains `fn(lib, dt, x, y, w)`: `dt` is the half dtype in the compiled run and float32 in the reference
CHAINS = [
    ("pointwise chain", lambda L, dt, x, y, w: (x * y + w) * 3 - x, True),
    ("casts inside a kernel", lambda L, dt, x, y, w: ((x.float() * 3.1).to(dt).float() * 3.1).to(dt), True),
    ("division and where", lambda L, dt, x, y, w: L.where(x > 0, x / y, L.maximum(x, y)) + w, True),
    ("floor division", lambda L, dt, x, y, w: x // y + w, True),
    ("a value read twice", lambda L, dt, x, y, w: (lambda t: t + t * 2)((x * y).exp()), False),
    ("softmax", lambda L, dt, x, y, w: L.softmax(x * y, -1), False),
    ("log_softmax", lambda L, dt, x, y, w: L.log_softmax(x * y, -1), False),
    ("sum then scale", lambda L, dt, x, y, w: (x * y).sum(-1) * 2, False),
    ("divided by a stored sum", lambda L, dt, x, y, w: x / (x * y).sum(-1, keepdim=True).to(dt), False),
    ("mean and var", lambda L, dt, x, y, w: (x * y).mean(-1) + (x * y).var(-1), False),
    ("layer_norm", lambda L, dt, x, y, w: _ln(L, x * y, w), False),
    ("relu then amax", lambda L, dt, x, y, w: L.relu(x - y).amax(-1), True),
    ("a reshape merging dimensions", lambda L, dt, x, y, w: (x * y + 1).t().reshape(-1) * 3, True),
]


def _half_inputs(rng):
    return [rng.standard_normal(s).astype(np.float32) for s in ((16, 33), (16, 33), (33,))]


def _as(a, dtype):
    return a.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else a.astype(dtype)


def _reference(fn, dtype, arrays):
    """torch.compile's result on the CPU: the chain in float32 from the half inputs, rounded once at the end."""
    tdt = getattr(torch, dtype)
    xs = [torch.from_numpy(a).to(tdt).float() for a in arrays]
    return fn(torch, torch.float32, *xs).to(tdt)


def _bits(t):
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return t.view(torch.int16).numpy()
    return t._data.view(np.int16)


@pytest.mark.parametrize("kind", BACKENDS)
@pytest.mark.parametrize("dtype", HALF)
def test_half_chains_round_once_as_torch_compile(dtype, kind):
    rng = np.random.default_rng(2)
    arrays = _half_inputs(rng)
    for name, fn, exact in CHAINS:
        got = ember.compile(lambda *xs: fn(ember, getattr(ember, dtype), *xs), backend=_backend(kind))(
            *[ember.from_numpy(_as(a, dtype)) for a in arrays])
        want = _reference(fn, dtype, arrays)
        assert got.dtype == getattr(ember, dtype) and tuple(got.shape) == tuple(want.shape), name
        if exact and kind == "c" or name in ("pointwise chain", "casts inside a kernel"):
            np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=f"{name} ({dtype}, {kind})")
        else:  # exp and the sums' order may move a result by one unit in the last place
            assert_same(got, want, path=f"{name} ({dtype}, {kind})")
    # eager rounds after every op; the compiled chain does not (it is not eager's result)
    x = ember.from_numpy(_as(arrays[0], dtype))
    f = CHAINS[1][1]
    compiled = ember.compile(lambda x: f(ember, getattr(ember, dtype), x, x, x), backend=_backend(kind))(x)
    assert not np.array_equal(_bits(compiled), _bits(f(ember, getattr(ember, dtype), x, x, x)))


@pytest.mark.skipif(not os.environ.get("EMBER_SLOW_TESTS"), reason="compiles each chain with torch.compile")
@pytest.mark.parametrize("dtype", HALF)
def test_half_chains_equal_torch_compile_itself(dtype):
    torch._dynamo.reset()
    rng = np.random.default_rng(2)
    arrays = _half_inputs(rng)
    tdt = getattr(torch, dtype)
    for name, fn, exact in CHAINS:
        want = torch.compile(lambda *xs: fn(torch, tdt, *xs), dynamic=False)(
            *[torch.from_numpy(a).to(tdt) for a in arrays])
        torch._dynamo.reset()
        if exact:  # (the reference is torch.compile's result)
            np.testing.assert_array_equal(_bits(_reference(fn, dtype, arrays)), _bits(want), err_msg=name)
        got = ember.compile(lambda *xs: fn(ember, getattr(ember, dtype), *xs), backend=_backend("c"))(
            *[ember.from_numpy(_as(a, dtype)) for a in arrays])
        # every chain, exp and sums included, gives torch.compile's bits on these inputs
        np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=name)


# ---- NaN propagation ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("own", [False, True], ids=["compilers_float16", "own_bits"])
def test_half_conversions_exact_over_every_value(own):
    """The C code's float16 conversions (NOTE [ Half-precision conversions ] in codegen_c.py), the compiler's
    `_Float16` casts and the branch that assembles the bits itself, against NumPy's: every float16 value
    widened, and 2.3M float32 patterns (random, and the ties and neighbours of every float16) rounded."""
    import ctypes

    from ember._inductor.codegen_c import PRELUDE
    from ember._native import build_source

    body = """
void h2f_all(const uint16_t *h, float *out, int64_t n) { for (int64_t i = 0; i < n; i++) out[i] = em_h2f(h[i]); }
void f2h_all(const float *f, uint16_t *out, int64_t n) { for (int64_t i = 0; i < n; i++) out[i] = em_f2h(f[i]); }
"""
    lib = build_source("test_half_conversions", ("#define EM_OWN_HALF 1\n" if own else "") + PRELUDE + body)
    if lib is None:
        pytest.skip("no C compiler")
    ptr = ctypes.c_void_p
    h = np.arange(65536, dtype=np.uint16)
    wide = np.empty(65536, np.float32)
    lib.h2f_all(h.ctypes.data_as(ptr), wide.ctypes.data_as(ptr), ctypes.c_int64(65536))
    ref = h.view(np.float16).astype(np.float32)
    nan = np.isnan(ref)
    assert np.array_equal(wide[~nan].view(np.uint32), ref[~nan].view(np.uint32)) and np.isnan(wide[nan]).all()
    h32 = h.astype(np.uint32)
    bits = np.concatenate([np.random.default_rng(0).integers(0, 2**32, 2_000_000, dtype=np.uint64).astype(np.uint32),
                           h32 << 16, h32 << 13, (h32 << 13) + 0x1000, (h32 << 13) + 0x1001, (h32 << 13) + 0xFFF])
    f = bits.view(np.float32)
    out = np.empty(f.size, np.uint16)
    lib.f2h_all(f.ctypes.data_as(ptr), out.ctypes.data_as(ptr), ctypes.c_int64(f.size))
    with np.errstate(all="ignore"):
        expect = f.astype(np.float16).view(np.uint16)
    fnan = np.isnan(f)
    assert np.array_equal(out[~fnan], expect[~fnan]) and np.isnan(out[fnan].view(np.float16)).all()


def _nan_ops(lib, x, y):
    F = lib.nn.functional
    return (lib.maximum(x, y), lib.minimum(x, y), lib.maximum(y, x), lib.minimum(y, x), x.clamp(-0.5, 0.5),
            x.clamp(min=0.0), x.clamp(max=0.0), F.relu(x), x.relu() * 2, x.amax(1), x.amin(0), x.amax(),
            lib.where(x > y, x, y), (x + y).amax(-1, keepdim=True) - x)


def test_nan_propagation():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    y = rng.standard_normal((5, 6)).astype(np.float32)
    x[0, 1], x[2, 3], y[1, 1], x[4, 0], y[4, 0] = np.nan, np.nan, np.nan, np.inf, -np.inf
    for kind in BACKENDS:
        compiled = ember.compile(lambda *a: _nan_ops(ember, *a), backend=_backend(kind))
        for dtype in ("float32", "float64") + HALF:
            check(lambda lib, *a: (compiled if lib is ember else functools.partial(_nan_ops, lib))(*a),
                  _as(x, dtype), _as(y, dtype))


# ---- source lines ------------------------------------------------------------------------------------------------

def _helper(x):
    return x.sin()


def _user_fn(x, w):
    y = x * 3 + w
    return (_helper(y) + 1).softmax(-1)


def _stack_traces(lib):
    seen = []

    def backend(gm, example_inputs):
        seen.extend(n.meta.get("stack_trace") for n in gm.graph.nodes if n.op == "call_function")
        return gm
    if lib is torch:
        torch._dynamo.reset()
    lib.compile(_user_fn, backend=backend)(lib.ones(3, 4), lib.ones(4))
    return seen


def test_dynamo_stack_trace_is_torchs():
    assert _stack_traces(ember) == _stack_traces(torch)


@pytest.mark.parametrize("kind", BACKENDS)
def test_output_code_names_the_users_file_and_line(kind, capsys):
    import inspect

    import ember._logging as L

    lines, first = inspect.getsourcelines(_user_fn)
    mul_line = f"File: {__file__}:{first + 1} in _user_fn, code: y = x * 3 + w"
    sin_line = f"File: {__file__}:{inspect.getsourcelines(_helper)[1] + 1} in _helper, code: return x.sin()"
    L.set_logs(output_code=True)
    try:
        x = ember.randn(4, 5, requires_grad=True)
        ember.compile(_user_fn, backend=_backend(kind))(x, ember.randn(5)).sum().backward()
    finally:
        L.set_logs(output_code=False)
    err = capsys.readouterr().err
    forward, backward = err.split("Output code")[1:3]
    comment = "/* " if kind == "c" else "# "
    for code in (forward, backward):  # (the backward's kernels come from the same lines: cos from sin's)
        kernels = code.split("\n\n", 1)[1]
        assert mul_line in kernels and sin_line in code, code
        assert any(ln.startswith(comment) and "kernel" in ln for ln in kernels.splitlines()), kernels
