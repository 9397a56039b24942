"""The C backend's vectorisable math in ember/_native/common.h (issue 20).

- em_sinf and em_cosf (NOTE [ Vectorisable sin and cos ]), built by ember's compiler driver and called over
  an array, are within 1 ulp of the correctly rounded result (NumPy's float64 sin/cos rounded: the reference)
  over random bit patterns (every exponent, huge arguments included), normal arguments, arguments next to
  multiples of pi/2, subnormals, +-0, +-inf and NaN; sin keeps the sign of zero, inf and NaN give NaN.
  em_sinf_fast/em_cosf_fast (NOTE [ Fast sin and cos ]) equal em_sinf/em_cosf below EM_TRIG_FAST_MAX.
- A chain of sins and a cos (the benchmark's pointwise chain) in float32, float16 and bfloat16, which the C
  backend computes with em_sinf_fast/em_cosf_fast in stages (NOTE [ Staged trig chains ]), is one kernel with
  no fallback and equals torch eager within the OpInfo table's tolerance for sin, and torch.compile's result.
  With arguments from 2^30 up in some elements (NOTE [ Fast trig with a rerun ]), at 1 and 2 threads, the
  result is the same bits at both thread counts, the small elements' values are those of the run without
  huge ones, and the huge ones are within 1 ulp of the correctly rounded value.
- A fallback's result is dropped after its last reader, kept when it is an output or a view's source
  (NOTE [ Fallback results die at their last use ] in ember/_inductor/compile_fx.py), results unchanged.
- The loops over em_expf, em_exp, em_sinf, em_cosf and em_sinf_fast (with the `big_` flag) vectorise (GCC's
  -fopt-info-vec, with ember's flags): a nested `?:` in em_expf once stopped a fused chain of exps from
  vectorising (NOTE [ Vectorisable exp ]).
"""

import ctypes
import functools
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ops"))
from compare import assert_same  # noqa: E402
from op_db import OPS  # noqa: E402

import ember  # noqa: E402
from ember import _native  # noqa: E402
from ember._inductor.compile_fx import inductor  # noqa: E402

needs_cc = pytest.mark.skipif(_native._compiler()[0] is None, reason="no C compiler")


def _compiled(fn):
    """fn compiled by the C backend, and the compiled graphs it made."""
    cf = sys.modules["ember._inductor.compile_fx"]
    made = []
    orig = cf.compile_fx

    def spy(gm, ex=None, backend=None):
        g = orig(gm, ex, backend)
        made.append(g)
        return g
    compiled = ember.compile(fn, backend=functools.partial(inductor, backend="c"))

    def call(*args):
        cf.compile_fx = spy
        try:
            return compiled(*args)
        finally:
            cf.compile_fx = orig
    return call, made


def _arguments():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, 600_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    normal = (rng.standard_normal(200_000) * 10).astype(np.float32)
    k = rng.integers(1, 2 ** 22, 100_000).astype(np.float64)  # next to k pi/2, where the reduction cancels
    near = (k * (np.pi / 2)).astype(np.float32)
    near = np.concatenate([near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(0))])
    special = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.4028235e38, -3.4028235e38,
                          524288.0, 524287.97, -524288.0, 1.5707964, 3.1415927, 16367173.0 * 2.0 ** 72])
    return np.concatenate([bits, normal, near, -near, special])


_CALLS = """
#include "common.h"
void em_sin_array(const float *restrict a, float *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_sinf(a[i]);
}
void em_cos_array(const float *restrict a, float *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_cosf(a[i]);
}
void em_sin_fast_array(const float *restrict a, float *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_sinf_fast(a[i]);
}
void em_cos_fast_array(const float *restrict a, float *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_cosf_fast(a[i]);
}
"""


def _call(fn, x):
    out = np.empty_like(x)
    fn(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_int64(x.size))
    return out


@needs_cc
def test_sin_cos_float32_within_one_ulp_of_correctly_rounded():
    lib = _native.build_source("test_trig", _CALLS)
    x = _arguments()
    got = [_call(lib.em_sin_array, x), _call(lib.em_cos_array, x)]
    small = np.abs(x) < 2.0 ** 30  # (and NaN: the fast path's NaN is NaN too)
    small |= np.isnan(x)
    for fast, slow in ((lib.em_sin_fast_array, got[0]), (lib.em_cos_fast_array, got[1])):
        np.testing.assert_array_equal(_call(fast, x)[small], slow[small])
    finite = np.isfinite(x)
    with np.errstate(invalid="ignore"):
        refs = (np.sin(x[finite].astype(np.float64)), np.cos(x[finite].astype(np.float64)))
    for name, g, ref in zip(("sin", "cos"), got, refs):
        assert np.isnan(g[~finite]).all(), name  # NaN in, NaN out; sin(+-inf), cos(+-inf) are NaN
        ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
        err = np.abs(g[finite].astype(np.float64) - ref) / ulp
        worst = int(np.argmax(err))
        assert err[worst] <= 1.0, (name, x[finite][worst], g[finite][worst], ref[worst], err[worst])
    zero = x == 0
    assert (np.signbit(got[0][zero]) == np.signbit(x[zero])).all() and (got[1][zero] == 1).all()


def _chain(L, x):
    for i in range(10):
        x = (x * 1.0001 + 0.001 * i).sin()
    return x.cos()


@needs_cc
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_sin_chain_fuses_and_equals_torch_eager_and_compile(dtype):
    x = np.random.default_rng(1).standard_normal((64, 257)).astype(np.float32) * 4
    call, made = _compiled(lambda t: _chain(ember, t))
    got = call(ember.from_numpy(x).to(getattr(ember, dtype)))
    assert sum(g.n_kernels for g in made) == 1 and sum(g.n_fallbacks for g in made) == 0
    src = made[0].kernel_source
    assert "em_sinf_fast(" in src and "em_cosf_fast(" in src and "em_sinf(" in src and "s_t" in src, src
    sin = next(op for op in OPS if op.name == "sin")
    tx = torch.from_numpy(x).to(getattr(torch, dtype))
    assert_same(got, _chain(torch, tx), rtol=sin.rtol, atol=sin.atol, path="eager")
    torch._dynamo.reset()
    try:
        want = torch.compile(lambda t: _chain(torch, t), dynamic=False)(tx)
    finally:
        torch._dynamo.reset()
    assert_same(got, want, rtol=sin.rtol, atol=sin.atol, path="compile")


def _huge_chain(L, x):
    y = (x * 1.0001).sin() * 3 + x.cos()
    return (y * 2).sin(), y.cos() * x


@needs_cc
def test_huge_arguments_rerun_the_range_with_the_same_values():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((600, 300)) * 10).astype(np.float32)
    huge = x.copy()
    rows = rng.choice(600, 40, replace=False)
    huge[rows, rng.integers(0, 300, 40)] = (rng.random(40) * 1e12 + 2.0 ** 30).astype(np.float32)
    call, made = _compiled(lambda t: _huge_chain(ember, t))
    plain = call(ember.from_numpy(x))
    assert sum(g.n_fallbacks for g in made) == 0 and "_exact_body(" in made[0].kernel_source
    results = []
    prev = ember.get_num_threads()
    try:
        for n in (1, 2):
            ember.set_num_threads(n)
            results.append([t.numpy() for t in call(ember.from_numpy(huge))])
    finally:
        ember.set_num_threads(prev)
    small = np.ones(x.shape, bool)
    small[rows] = False  # (a huge element's row: its other elements may still be huge after the chain)
    for one, two, p in zip(results[0], results[1], plain):
        np.testing.assert_array_equal(one.view(np.int32), two.view(np.int32))
        np.testing.assert_array_equal(one[small], p.numpy()[small])
    for got, want in zip(results[0], _huge_chain(torch, torch.from_numpy(huge))):
        assert_same(ember.from_numpy(got), want, rtol=1e-4, atol=1e-4, path="huge")
    # the huge elements' first sin (a kernel temporary): its exact path against float64 NumPy
    arg = huge[huge >= 2.0 ** 30] * np.float32(1.0001)
    exact = np.sin(arg.astype(np.float64)).astype(np.float32)
    lib = _native.build_source("test_trig", _CALLS)
    assert np.abs(_call(lib.em_sin_array, arg).view(np.int32) - exact.view(np.int32)).max() <= 1


_LOOPS = """
#include "common.h"
void exps(const float *restrict a, float *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_expf(em_expf(em_expf(a[i] * 0.5f) * 0.5f) * 0.5f);
}
void expd(const double *restrict a, double *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_exp(em_exp(em_exp(a[i] * 0.5) * 0.5) * 0.5);
}
void trig(const float *restrict a, float *restrict o, idx n) {
    for (idx i = 0; i < n; i++) o[i] = em_sinf(em_cosf(em_sinf(a[i]) * 2.0f) + 1.0f);
}
int fast(const float *restrict a, float *restrict o, idx n) {
    int big_ = 0; for (idx i = 0; i < n; i++) { big_ |= em_trig_big(a[i]); o[i] = em_sinf_fast(a[i]); }
    return big_;
}
"""


@needs_cc
def test_common_math_loops_vectorise(tmp_path):
    cc, version = _native._compiler()
    if "clang" in version.lower():
        pytest.skip("the check reads GCC's -fopt-info-vec report")
    src = tmp_path / "loops.c"
    src.write_text(_LOOPS)
    flags = [f for f in _native._BASE_FLAGS if f != "-shared"]
    out = subprocess.run([cc, *flags, "-c", "-fopt-info-vec-optimized", "-I", os.path.dirname(_native.__file__),
                          "-o", str(tmp_path / "loops.o"), str(src)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = {int(ln.split(":")[1]) for ln in out.stderr.splitlines() if "loop vectorized" in ln and "loops.c:" in ln}
    assert {4, 7, 10, 13} <= lines, out.stderr


# NOTE [ Fallback results die at their last use ] (ember/_inductor/compile_fx.py): a float32 tanh is a
# fallback; its result is dropped after its last reader unless it is an output or a view's source
def _tanh_chain(L, x):
    for i in range(10):
        x = (x * 1.0001 + 0.001 * i).tanh()
    return x


_DROPS = [
    ("chain", lambda L, x: _tanh_chain(L, x), True),
    ("output_and_read_later", lambda L, x: (lambda y: (y, y * 2 + 1))(x.tanh()), False),
    ("view_of_it_returned", lambda L, x: (lambda y: ((y * 2).tanh(), y.t()))(x.tanh()), False),
    ("read_by_two_kernels", lambda L, x: (lambda y: (y * 2).tanh() + (y * 3).tanh())(x.tanh()), True),
]


@needs_cc
@pytest.mark.parametrize("name,fn,dropped", _DROPS, ids=[d[0] for d in _DROPS])
def test_fallback_results_dropped_after_last_use(name, fn, dropped):
    x = np.random.default_rng(2).standard_normal((33, 17)).astype(np.float32)
    call, made = _compiled(lambda t: fn(ember, t))
    got = call(ember.from_numpy(x))
    for _ in range(2):  # (a second call runs the same wrapper again)
        again = call(ember.from_numpy(x))
    assert sum(g.n_fallbacks for g in made) >= 1
    assert ("    del " in made[0].wrapper_source) == dropped, made[0].wrapper_source
    want = fn(torch, torch.from_numpy(x))
    assert_same(got, want, path=name)
    assert_same(again, want, path=name)
