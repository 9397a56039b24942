"""C code generation: one C function per `Kernel`, all of a graph's kernels in one source file.

    /* kernel0: softmax  (model.py:12  return F.softmax(x, -1)) */
    void kernel0(const float *restrict arg0, float *restrict buf1, ..., int nt)
    {
        #pragma omp parallel for num_threads(nt) if(nt > 1) schedule(static)
        for (idx x0 = 0; x0 < 64; x0++) {
            float acc0 = -INFINITY; for (r0 ...) { ... }   /* buf1: the row's max */
            ...
        }
    }

Each member's expression is printed once per sub-expression (a temporary per operation, so shared
sub-expressions are computed once), indices as the affine sums of ir.py. The file includes ember's
`common.h` (em_expf, em_erf_single: NOTE [ Vectorisable exp ]) and is built by `ember._native.build_source`:
the same compiler, flags (NOTE [ Exact flags ]: no fast-math, no FMA contraction), cache and thread count as
eager's native kernels.

NOTE [ C semantics of the ops ]
- Floating point: float32 values are computed in float (as NumPy computes float32 ops), exp by em_expf,
  sin and cos by em_sinf_fast/em_cosf_fast or em_sinf/em_cosf (in double, correctly rounded but for ~1e-6
  ulp near a boundary: NOTE [ Fast trig with a rerun ]);
  gelu and pow in double rounded once, as eager's float32 kernels do. max/min propagate NaN (torch's
  maximum and amax do); `x > 0` style tests are false for NaN as in NumPy.
- Integers: +, -, * wrap around (computed on the unsigned type, since signed overflow is undefined in C).
- Integer floor division, trunc division, remainder and fmod follow torch's sign rules (NOTE [ Integer
  division ] in lowering.py); a zero divisor sets the kernel's `divzero` flag (an extra int32 pointer
  argument, written atomically) and the wrapper raises torch's error after the call. Float floor
  division and remainder are torch's eager `div_floor_floating` and `remainder` kernels, written out.
- Sums accumulate in double (float types) or int64 (integers) with `omp simd reduction`, a fixed order
  for a given build (NOTE [ Exact flags ]); the result is rounded to the output dtype once.
- float16 and bfloat16 buffers are `uint16_t` arrays: a load widens to float (`em_h2f`, `em_bf2f`), every
  operation is in float, a store rounds to nearest even (`em_f2h`, `em_f2bf`: NOTE [ Half-precision
  conversions ], bit for bit; NaN becomes the quiet NaN) (NOTE [ Half precision is computed in float ] in ir.py).
"""

from __future__ import annotations

import re

from .ir import LOWP, Const, Load, Op, Pointwise, walk
from .scheduler import member_exprs

__all__ = ["CTYPES", "generate"]

CTYPES = {"float32": "float", "float64": "double", "int64": "int64_t", "int32": "int32_t",
          "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t", "bool": "uint8_t",
          "float16": "uint16_t", "bfloat16": "uint16_t"}
_WIDEN = {"float16": "em_h2f", "bfloat16": "em_bf2f"}
_ROUND = {"float16": "em_f2h", "bfloat16": "em_f2bf"}
DIVISIONS = frozenset(("floordiv", "truncdiv", "remainder", "fmod"))
FLAG = "divzero"  # the zero-divisor flag's parameter (NOTE [ C semantics of the ops ])
_UNSIGNED = {"int64": "uint64_t", "int32": "uint32_t", "int16": "uint16_t", "int8": "uint8_t"}

PRELUDE = r"""#include "common.h"

/* helpers of the generated kernels (NOTE [ C semantics of the ops ] in ember/_inductor/codegen_c.py) */
static inline float em_maxf(float a, float b) { return (a != a || a > b) ? a : b; }
static inline double em_maxd(double a, double b) { return (a != a || a > b) ? a : b; }
static inline float em_minf(float a, float b) { return (a != a || a < b) ? a : b; }
static inline double em_mind(double a, double b) { return (a != a || a < b) ? a : b; }
static inline float em_sigmoidf(float a) {
    float e = em_expf(-fabsf(a));
    return a >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
static inline double em_sigmoidd(double a) {
    double e = em_exp(-fabs(a));
    return a >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}
static inline double em_gelu(double x, int single) {
    double e = single ? em_erf_single(x * 0.70710678118654752440) : erf(x * 0.70710678118654752440);
    return 0.5 * x * (1.0 + e);
}
static inline double em_gelu_grad(double x, int single) {
    double e = single ? em_erf_single(x * 0.70710678118654752440) : erf(x * 0.70710678118654752440);
    double pdf = (single ? em_exp(-0.5 * x * x) : exp(-0.5 * x * x)) * 0.39894228040143267794;
    return 0.5 * (1.0 + e) + x * pdf;
}
static inline double em_gelu_tanh(double x, int single) {
    double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    double t = single ? em_tanh(u) : tanh(u);
    return 0.5 * x * (1.0 + t);
}
static inline double em_gelu_tanh_grad(double x, int single) {
    double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    double t = single ? em_tanh(u) : tanh(u);
    double du = 0.79788456080286535588 * (1.0 + 3.0 * 0.044715 * x * x);
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

/* NOTE [ Half-precision conversions ]
   float16 <-> float32 with IEEE round to nearest even, as torch's kernels convert. Where the compiler has
   the `_Float16` type (GCC 12 and Clang on x86-64 and AArch64), its casts are the conversion, and on a CPU with
   F16C/AVX-512 they are one vectorisable instruction. Otherwise (or with EM_OWN_HALF defined, which the
   tests use to check this branch against NumPy over every half value) the bits are assembled here: a
   float16 is 1 sign, 5 exponent (bias 15) and 10 fraction bits; a normal float32 keeps its top 10 fraction
   bits, rounded half to even by adding 0xFFF plus the lowest kept bit before the shift; below 2^-14 the
   result is a multiple of 2^-24, which rounding the scaled value gives exactly. */
static inline uint32_t em_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float em_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
#if defined(__FLT16_MAX__) && !defined(EM_OWN_HALF)
static inline float em_h2f(uint16_t h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }
static inline uint16_t em_f2h(float f) { _Float16 v = (_Float16)f; uint16_t h; memcpy(&h, &v, 2); return h; }
#else
static inline float em_h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, frac = h & 0x3FFu;
    if (exp == 0x1Fu) return em_bits_f32(sign | 0x7F800000u | (frac << 13));      /* inf, NaN */
    if (exp == 0) return sign ? -ldexpf((float)frac, -24) : ldexpf((float)frac, -24);  /* 0, subnormal */
    return em_bits_f32(sign | ((exp + 112u) << 23) | (frac << 13));
}
static inline uint16_t em_f2h(float f) {
    uint32_t u = em_f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);                   /* NaN */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);                  /* rounds past 65504: inf */
    if (a < 0x38800000u)                                                      /* below 2^-14: subnormal */
        return (uint16_t)(sign | (uint32_t)nearbyintf(em_bits_f32(a) * 16777216.0f));
    return (uint16_t)(sign | (((a + 0xFFFu + ((a >> 13) & 1u)) >> 13) - (112u << 10)));
}
#endif
static inline float em_bf2f(uint16_t h) { return em_bits_f32((uint32_t)h << 16); }
static inline uint16_t em_f2bf(float f) {
    if (f != f) return 0x7FC0;
    uint32_t u = em_f32_bits(f);
    return (uint16_t)((u + ((u >> 16) & 1) + 0x7FFFu) >> 16);
}

/* division with torch's sign rules (NOTE [ Integer division ] in ember/_inductor/lowering.py) */
static inline void em_divzero(int32_t *err) { __atomic_store_n(err, 1, __ATOMIC_RELAXED); }
#define EM_SIGNED_DIVISION(T, U, S) \
static inline T em_floordiv_##S(T a, T b, int32_t *err) { \
    if (b == 0) { em_divzero(err); return 0; } \
    if (b == -1) return (T)(0 - (U)a); \
    T q = (T)(a / b), r = (T)(a % b); \
    return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q; \
} \
static inline T em_truncdiv_##S(T a, T b, int32_t *err) { \
    if (b == 0) { em_divzero(err); return 0; } \
    return b == -1 ? (T)(0 - (U)a) : (T)(a / b); \
} \
static inline T em_remainder_##S(T a, T b, int32_t *err) { \
    if (b == 0) { em_divzero(err); return 0; } \
    if (b == -1) return 0; \
    T r = (T)(a % b); \
    return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r; \
} \
static inline T em_fmod_##S(T a, T b, int32_t *err) { \
    if (b == 0) { em_divzero(err); return 0; } \
    return b == -1 ? 0 : (T)(a % b); \
}
EM_SIGNED_DIVISION(int8_t, uint8_t, int8)
EM_SIGNED_DIVISION(int16_t, uint16_t, int16)
EM_SIGNED_DIVISION(int32_t, uint32_t, int32)
EM_SIGNED_DIVISION(int64_t, uint64_t, int64)
static inline uint8_t em_floordiv_uint8(uint8_t a, uint8_t b, int32_t *err) {
    if (b == 0) { em_divzero(err); return 0; }
    return (uint8_t)(a / b);
}
#define em_truncdiv_uint8 em_floordiv_uint8
static inline uint8_t em_remainder_uint8(uint8_t a, uint8_t b, int32_t *err) {
    if (b == 0) { em_divzero(err); return 0; }
    return (uint8_t)(a % b);
}
#define em_fmod_uint8 em_remainder_uint8
#define EM_FLOAT_DIVISION(T, F, S) \
static inline T em_floordiv_##S(T a, T b) { \
    if (b == 0) return a / b; \
    T mod = fmod##F(a, b), div = (a - mod) / b; \
    if (mod != 0 && (b < 0) != (mod < 0)) div -= (T)1; \
    if (div == 0) return copysign##F((T)0, a / b); \
    T fd = floor##F(div); \
    return div - fd > (T)0.5 ? fd + (T)1 : fd; \
} \
static inline T em_remainder_##S(T a, T b) { \
    T mod = fmod##F(a, b); \
    return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod; \
}
EM_FLOAT_DIVISION(float, f, float32)
EM_FLOAT_DIVISION(double, , float64)
"""

# NOTE [ Parallel loops of the generated kernels ]
# A kernel's outer loop is a `static` body function over a range of outer iterations (flattened: one index,
# decomposed into the outer variables) and a context struct of its buffers; the kernel calls
# `em_parallel(body, &ctx, n, nt, chunk)`, which hands the range to ember's thread pool when the library
# has been given it (ember/_inductor/threads.py, `em_set_pool`) and nt > 1, and otherwise calls the body once
# over everything. The pool, not OpenMP: NOTE [ A pool of our own ] in ember/_native/threadpool.c.
PRELUDE += r"""
/* ember's thread pool (NOTE [ Parallel loops of the generated kernels ] in ember/_inductor/codegen_c.py) */
typedef void (*em_body)(void *ctx, idx lo, idx hi);
typedef void (*em_pool_fn)(em_body body, void *ctx, idx n, int nt, idx chunk);
static em_pool_fn em_pool;
void em_set_pool(void *f) { em_pool = (em_pool_fn)f; }
static inline void em_parallel(em_body body, void *ctx, idx n, int nt, idx chunk)
{
    if (nt > 1 && n > 1 && em_pool)
        em_pool(body, ctx, n, nt, chunk);
    else
        body(ctx, 0, n);
}
"""


def _decompose(dims: list, names: list) -> list:
    """C statements giving each outer loop variable `names[d]` from the flat index `f_` over `dims`."""
    out = []
    for d, v in enumerate(names):
        size = 1
        for s_ in dims[d + 1:]:
            size *= s_
        e = "f_" if size == 1 else f"f_ / {size}"
        out.append(f"idx {v} = {e}{f' % {dims[d]}' if d else ''};")
    return out


def _parallel_function(name: str, sig: list, dims: list, names: list, body: list, exact: list = None,
                       simd: bool = False) -> list:
    """The lines of kernel `name` (parameters `sig`, C declarations, the thread count last) whose outer loops
    over `dims` (variables `names`) run `body` (lines indented for inside them), as a body function handed
    to the pool (NOTE [ Parallel loops of the generated kernels ]). With `exact`, `body` sets `big_` and
    `exact` is the body that recomputes a range where it was set (NOTE [ Fast trig with a rerun ]). `simd`: a
    single outer loop is the kernel's innermost (NOTE [ Vectorising pointwise loops ])."""
    params = [d.rsplit(" ", 1)[-1].lstrip("*") for d in sig[:-1]]
    fields = [d.replace("restrict ", "") for d in sig[:-1]]
    out = [f"struct {name}_ctx {{ " + " ".join(f + ";" for f in fields) + " };"]

    def body_function(fname, lines, flag):
        head = [f"static void {fname}(void *ctx_, idx lo_, idx hi_)", "{",
                f"    const struct {name}_ctx *c_ = ctx_;"]
        head += [f"    {d} = c_->{n};" for d, n in zip(sig[:-1], params)]
        if flag:
            head.append("    int big_ = 0;")
        if len(dims) == 1:
            if simd:
                head.append("    #pragma omp simd" + (" reduction(|:big_)" if flag else ""))
            head.append(f"    for (idx {names[0]} = lo_; {names[0]} < hi_; {names[0]}++) {{")
        else:
            head.append("    for (idx f_ = lo_; f_ < hi_; f_++) {")
            head += ["        " + line for line in _decompose(dims, names)]
        tail = [f"    if (big_) {name}_exact_body(ctx_, lo_, hi_);"] if flag else []
        return head + lines + ["    }"] + tail + ["}"]

    if exact is not None:
        out += body_function(f"{name}_exact_body", exact, False)
    if isinstance(body, tuple):
        out += _staged_function(name, sig, params, dims, names, *body)
    else:
        out += body_function(f"{name}_body", body, exact is not None)
    total = 1
    for s_ in dims:
        total *= s_
    out += [f"void {name}({', '.join(sig)})", "{",
            f"    struct {name}_ctx c_ = {{{', '.join(params)}}};",
            f"    em_parallel({name}_body, &c_, {total}, nt, 0 /* schedule(static) */);", "}"]
    return out


def _const(c: Const) -> str:
    v, dt = c.value, c.dtype
    if dt in ("float32", "float64"):
        if v != v:
            s = "NAN"
        elif v in (float("inf"), float("-inf")):
            s = "INFINITY" if v > 0 else "(-INFINITY)"
        else:
            s = repr(float(v))
        return f"(({CTYPES[dt]}){s})"
    if dt == "bool":
        return "1" if v else "0"
    if dt == "int64":
        return f"((int64_t){int(v)}LL)" if v >= -(2 ** 62) else "INT64_MIN"
    return f"(({CTYPES[dt]}){int(v)})"


def _fsuffix(dt):
    return "f" if dt == "float32" else ""


def op_c(o: Op, a: list) -> str:
    """The C expression of op `o` over its operands' C expressions (NOTE [ C semantics of the ops ])."""
    n, dt = o.name, o.dtype
    T = CTYPES[dt]
    f = _fsuffix(dt)
    isf = dt in ("float32", "float64")
    src = o.args[0].dtype if o.args else dt
    if n in ("identity",):
        return a[0]
    if n == "cast":
        if dt == "bool":
            return f"({a[0]} != 0)"
        return f"(({T}){a[0]})"
    if n in ("add", "sub", "mul"):
        sym = {"add": "+", "sub": "-", "mul": "*"}[n]
        if dt == "bool":
            return f"({a[0]} {'|' if n == 'add' else '&'} {a[1]})"
        if dt in _UNSIGNED:
            U = _UNSIGNED[dt]
            return f"(({T})(({U}){a[0]} {sym} ({U}){a[1]}))"
        return f"({a[0]} {sym} {a[1]})"
    if n == "truediv":
        return f"({a[0]} / {a[1]})"
    if n == "neg":
        return f"(({T})(0 - ({_UNSIGNED[dt]}){a[0]}))" if dt in _UNSIGNED else f"(-{a[0]})"
    if n == "abs":
        if isf:
            return f"fabs{f}({a[0]})"
        if dt in _UNSIGNED:
            return f"({a[0]} < 0 ? ({T})(0 - ({_UNSIGNED[dt]}){a[0]}) : {a[0]})"
        return a[0]
    if n == "exp":
        return f"em_expf({a[0]})" if dt == "float32" else f"em_exp({a[0]})"
    if n in ("sin", "cos") and dt == "float32":
        return f"em_{n}f({a[0]})"
    if n in ("log", "sqrt", "sin", "cos", "tanh", "erf", "log1p", "expm1", "floor", "ceil", "trunc"):
        return f"{n}{f}({a[0]})"
    if n == "round":
        return f"nearbyint{f}({a[0]})"
    if n == "rsqrt":
        return f"(({T})1 / sqrt{f}({a[0]}))"
    if n == "reciprocal":
        return f"(({T})1 / {a[0]})"
    if n == "sigmoid":
        return f"em_sigmoid{'f' if dt == 'float32' else 'd'}({a[0]})"
    if n in ("maximum", "minimum"):
        if isf:
            return f"em_{n[:3]}{'f' if dt == 'float32' else 'd'}({a[0]}, {a[1]})"
        cmp = ">" if n == "maximum" else "<"
        return f"({a[0]} {cmp} {a[1]} ? {a[0]} : {a[1]})"
    if n == "where":
        return f"({a[0]} ? {a[1]} : {a[2]})"
    if n in ("eq", "ne", "lt", "le", "gt", "ge"):
        sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[n]
        return f"({a[0]} {sym} {a[1]})"
    if n == "logical_not":
        return f"(!{a[0]})"
    if n == "logical_and":
        return f"({a[0]} && {a[1]})"
    if n == "logical_or":
        return f"({a[0]} || {a[1]})"
    if n == "pow_scalar":
        return f"(({T})pow((double){a[0]}, {float(o.param)!r}))"
    if n in ("gelu", "gelu_grad", "gelu_tanh", "gelu_tanh_grad"):
        return f"(({T})em_{n}((double){a[0]}, {int(dt == 'float32')}))"
    if n in DIVISIONS:
        if not isf:
            return f"em_{n}_{dt}({a[0]}, {a[1]}, {FLAG})"
        if n in ("floordiv", "remainder"):
            return f"em_{n}_{dt}({a[0]}, {a[1]})"
        return f"trunc{f}({a[0]} / {a[1]})" if n == "truncdiv" else f"fmod{f}({a[0]}, {a[1]})"
    raise NotImplementedError(f"no C for op {n} ({src})")


class _Printer:
    def __init__(self, lines, indent, fast_trig=False):
        self.lines, self.indent = lines, indent
        self.n = 0
        self.fast_trig = fast_trig  # NOTE [ Fast trig with a rerun ]
        self.staged = False  # NOTE [ Staged trig chains ]

    def emit(self, s):
        self.lines.append("    " * self.indent + s)

    def start_stage(self):
        """Further lines go to a new stage (NOTE [ Staged trig chains ]); `self.stages` holds them all."""
        if not hasattr(self, "stages"):
            self.stages, self.defs = [self.lines], {}
        self.lines = []
        self.stages.append(self.lines)

    def expr(self, e, names: dict) -> str:
        """Emit temporaries for `e`'s operations (memoized in `names`); return the C expression."""
        for x in walk(e):
            k = x.key()
            if k in names:
                continue
            if isinstance(x, Const):
                names[k] = _const(x)
            elif isinstance(x, Load):
                t = f"t{self.n}"
                self.n += 1
                if x.dtype in LOWP:  # (widened as loaded: NOTE [ Half precision is computed in float ])
                    self.emit(f"float {t} = {_WIDEN[x.dtype]}({x.buf}[{_idx(x.index)}]);")
                else:
                    self.emit(f"{CTYPES[x.dtype]} {t} = {x.buf}[{_idx(x.index)}];")
                names[k] = t
                if hasattr(self, "defs"):
                    self.defs[t] = (len(self.stages) - 1, "float" if x.dtype in LOWP else CTYPES[x.dtype])
            else:
                t = f"t{self.n}"
                self.n += 1
                args = [names[a.key()] for a in x.args]
                code = op_c(x, args)
                trig = self.fast_trig and _is_trig(x)
                if trig:
                    code = code.replace("f(", "f_fast(", 1)
                    self.emit(f"big_ |= em_trig_big({args[0]});")
                self.emit(f"{CTYPES[x.dtype]} {t} = {code};")
                names[k] = t
                if hasattr(self, "defs"):
                    self.defs[t] = (len(self.stages) - 1, CTYPES[x.dtype])
                if trig and self.staged:
                    self.start_stage()
        return names[e.key()]


# NOTE [ Fast trig with a rerun ]
# float32 sin and cos (and half ones, computed in float) are em_sinf/em_cosf of common.h, whose fast path
# (NOTE [ Fast sin and cos ]) holds below 2^30 and whose table reduction for larger arguments costs 6x more
# when computed for every lane. So a parallel kernel that calls them is printed twice: its body function
# calls em_sinf_fast/em_cosf_fast and ORs `em_trig_big` of each argument into `big_` (a reduction the
# vectoriser keeps in lanes); when a range had a huge argument, the body calls the exact body (em_sinf/
# em_cosf: both paths, selected per element) over the same range again. Recomputing a range is safe: a
# kernel's outputs are restrict pointers distinct from its inputs, and every write of an outer iteration
# depends only on the inputs and on what the same iteration wrote before. em_sinf picks em_trig_fast's value
# below 2^30, so an element's value is the same in both bodies, whatever the range or thread count. Kernels
# without an outer loop and column reductions call em_sinf/em_cosf directly.
def _is_trig(x) -> bool:
    return isinstance(x, Op) and x.name in ("sin", "cos") and x.dtype == "float32"


def _store(dtype: str, value: str) -> str:
    """`value` converted for a store into a buffer of `dtype` (half types round to nearest even)."""
    if dtype in LOWP:
        return f"{_ROUND[dtype]}((float){value})"
    return f"({CTYPES[dtype]}){value}"


def _needs_flag(exprs) -> bool:
    """Whether an expression divides integers (its kernel takes the zero-divisor flag)."""
    return any(isinstance(x, Op) and x.name in DIVISIONS and x.dtype not in ("float32", "float64")
               for e in exprs for x in walk(e))


def _idx(a) -> str:
    parts = [(v if c == 1 else f"{c} * {v}") for v, c in a.coefs]
    if a.offset or not parts:
        parts.append(str(a.offset))
    return " + ".join(parts)


_INIT = {"sum": "0", "prod": "1", "any": "0", "all": "1"}


def _red_init(red, acc):
    if red in _INIT:
        return _INIT[red]
    if acc in ("float32", "float64"):
        return "(-INFINITY)" if red == "max" else "INFINITY"
    lim = {"int64": ("INT64_MIN", "INT64_MAX"), "int32": ("INT32_MIN", "INT32_MAX"),
           "int16": ("INT16_MIN", "INT16_MAX"), "int8": ("INT8_MIN", "INT8_MAX"),
           "uint8": ("0", "255"), "bool": ("0", "1")}[acc]
    return lim[0] if red == "max" else lim[1]


def _red_update(red, acc_name, v, acc):
    if red == "sum":
        return f"{acc_name} += {v};"
    if red == "prod":
        return f"{acc_name} *= {v};"
    if red == "any":
        return f"{acc_name} = {acc_name} || {v};"
    if red == "all":
        return f"{acc_name} = {acc_name} && {v};"
    isf = acc in ("float32", "float64")
    cmp = ">" if red == "max" else "<"
    if isf:
        return f"{acc_name} = ({v} {cmp} {acc_name} || {v} != {v}) ? {v} : {acc_name};"
    return f"{acc_name} = {v} {cmp} {acc_name} ? {v} : {acc_name};"


# NOTE [ Vectorising pointwise loops ]
# The innermost loop of a pointwise member (the kernel's single outer loop when the loop is one dimension:
# NOTE [ Merged loop dimensions ] in scheduler.py) carries `#pragma omp simd` (-fopenmp-simd: a promise that
# its iterations are independent, nothing more). Each iteration of a pointwise loop writes its own element and
# reads only inputs and elements of the kernel's earlier members written in the same iteration, so the
# promise holds. It makes GCC vectorize loops it otherwise leaves scalar: a select (`mask ? g : 0`) whose
# load it would make conditional, a short loop it unrolls first. The results do not change: a pointwise loop
# has nothing to reassociate, and without -ffast-math no libm call is replaced by a vector variant (calls it
# cannot vectorize stay scalar calls).


# NOTE [ Column reductions ]
# A sum over leading dimensions (a bias gradient: the sum over the batch of a [N, D] gradient) reads, in the
# row form (one outer iteration per output element, the reduced loop inside), memory with the stride of a
# whole row at every step: 3M floats took 116 ms. `is_column` reductions are printed the other way round:
# each thread takes a block of 64 consecutive outputs, keeps 64 double accumulators, and walks the reduced
# dimensions outside and the block inside, so the innermost loop reads consecutive elements (40x faster).
COLUMN_BLOCK = 64


def is_column(m, loads) -> bool:
    """Whether reduction `m` reads contiguously along its last kept dimension and not along its last reduced
    one (NOTE [ Column reductions ])."""
    if m.reduction != "sum" or m.acc_dtype not in ("float32", "float64") or not m.outer or not m.reduced:
        return False
    xl, rl = f"x{len(m.outer) - 1}", f"r{len(m.reduced) - 1}"
    return any(ld.index.coef(xl) == 1 and ld.index.coef(rl) not in (0, 1) for ld in loads)


def _generate_column(kernel, m, e, buffers, comment) -> tuple:
    reads = []
    for x in walk(e):
        if isinstance(x, Load) and x.buf not in reads:
            reads.append(x.buf)
    flag = [FLAG] if _needs_flag([e]) else []
    sig = [f"const {CTYPES[buffers[b].dtype]} *restrict {b}" for b in reads] + \
          [f"{CTYPES[m.buffer.dtype]} *restrict {m.name}"] + [f"int32_t *restrict {f}" for f in flag] + ["int nt"]
    B = COLUMN_BLOCK
    k = len(m.outer)
    last = m.outer[-1]
    body = []
    p = _Printer(body, 2)
    p.emit(f"/* {m.name}: {_describe(m)}, by columns (NOTE [ Column reductions ]) */")
    p.emit(f"double acc[{B}];")
    p.emit(f"idx lo = xb * {B}, hi = lo + {B} < {last} ? lo + {B} : {last};")
    xl = f"x{k - 1}"
    p.emit(f"for (idx {xl} = lo; {xl} < hi; {xl}++) acc[{xl} - lo] = 0;")
    for d, s_ in enumerate(m.reduced):
        p.emit(f"for (idx r{d} = 0; r{d} < {s_}; r{d}++) {{")
        p.indent += 1
    p.emit(f"for (idx {xl} = lo; {xl} < hi; {xl}++) {{")
    p.indent += 1
    val = p.expr(e, {})
    p.emit(f"acc[{xl} - lo] += {val};")
    p.indent -= 1
    p.emit("}")
    for _ in m.reduced:
        p.indent -= 1
        p.emit("}")
    strides = m.buffer.strides
    flat = " + ".join(f"{st} * x{d}" if st != 1 else f"x{d}" for d, st in enumerate(strides))
    p.emit(f"for (idx {xl} = lo; {xl} < hi; {xl}++) {m.name}[{flat}] = {_store(m.buffer.dtype, f'acc[{xl} - lo]')};")
    lines = [comment] if comment else []
    lines += _parallel_function(kernel.name, sig, list(m.outer[:-1]) + [(last + B - 1) // B],
                                [f"x{d}" for d in range(k - 1)] + ["xb"], body)
    return "\n".join(lines), reads + [m.name] + flag


def generate(kernel, buffers: dict, comment: str = "") -> tuple:
    """(C source of `kernel`'s function, its parameter buffer names in order)."""
    k = len(kernel.outer)
    if len(kernel.members) == 1 and kernel.has_reduction:
        m = kernel.members[0]
        e, _, _ = member_exprs(m, k)
        if is_column(m, [x for x in walk(e) if isinstance(x, Load)]):
            return _generate_column(kernel, m, e, buffers, comment)
    writes = [m.name for m in kernel.members]
    reads = []
    exprs = []
    for m in kernel.members:
        e, store, sizes = member_exprs(m, k)
        exprs.append((m, e, store, sizes))
        for x in walk(e):
            if isinstance(x, Load) and x.buf not in writes and x.buf not in reads:
                reads.append(x.buf)
    flag = [FLAG] if _needs_flag([e for _, e, _, _ in exprs]) else []
    params = reads + writes + flag
    sig = [f"const {CTYPES[buffers[b].dtype]} *restrict {b}" for b in reads] + \
          [f"{CTYPES[buffers[b].dtype]} *restrict {b}" for b in writes] + \
          [f"int32_t *restrict {f}" for f in flag] + ["int nt"]
    fast = bool(k) and any(_is_trig(x) for _, e, _, _ in exprs for x in walk(e))
    body = _body(exprs, k, fast)
    lines = [comment] if comment else []
    if k:
        inner = any(v.startswith("y") for *_, sizes in exprs for v in sizes)
        flat = k == 1 and not kernel.has_reduction and not inner
        lines += _parallel_function(kernel.name, sig, list(kernel.outer), [f"x{d}" for d in range(k)], body,
                                    _body(exprs, k, False) if fast else None, simd=flat)
    else:
        lines += [f"void {kernel.name}({', '.join(sig)})", "{", *body, "}"]
    return "\n".join(lines), params


# NOTE [ Staged trig chains ]
# A chain of fused sins (the benchmark's 10) is one long dependency chain per vector of elements: about 70
# cycles of latency a sin, longer than the core's window can overlap with the next iterations, so the fused
# chain took 1.07 ns a sin an element against 0.37 for a loop of one sin. A fast-trig body whose members are
# all pointwise (with at most one inner loop, the same for all) is therefore cut after each sin or cos into
# stages, each a loop of its own over a block of STAGE iterations (of the outer loop, or of the inner one
# in each outer iteration): the iterations of a stage are independent, so it runs at the sin's throughput
# (the chain: 0.37 ns a sin). A value a later stage reads is kept in a block array (`s_tN`, in L1 cache).
# Values are the same as in one loop (the same operations on the same values).
# Only chains of two or more (one sin has no chain to cut), and an inner loop only when it is at least
# STAGE_MIN long (short stage loops cost more than they win).
STAGE = 512
STAGE_MIN = 64


def _staged_function(name, sig, params, dims, names, stages, defs, inner) -> list:
    """The fast body function of kernel `name` as stages over blocks (NOTE [ Staged trig chains ]): blocks
    of the outer iterations, or with `inner` (the one inner variable and its size), blocks of the inner
    loop in each outer iteration."""
    stages = [st for st in stages if st]
    used = {}  # temporary -> (its stage, its C type), for those read by a later stage
    for i, st in enumerate(stages):
        for t in sorted(set(re.findall(r"\bt\d+\b", "\n".join(st)))):
            if t in defs and defs[t][0] < i:
                used[t] = defs[t]
    out = [f"static void {name}_body(void *ctx_, idx lo_, idx hi_)", "{",
           f"    const struct {name}_ctx *c_ = ctx_;"]
    out += [f"    {d} = c_->{n};" for d, n in zip(sig[:-1], params)]
    out.append("    int big_ = 0;")
    out += [f"    {ct} s_{t}[{STAGE}];" for t, (_, ct) in sorted(used.items())]
    decompose = _decompose(dims, names)
    if inner is None:
        var, lo, hi, pad = "f_", "lo_", "hi_", "    "
    else:
        var, lo, hi, pad = inner[0], "0", str(inner[1]), "        "
        out.append("    for (idx f_ = lo_; f_ < hi_; f_++) {")
        out += [f"        {d}" for d in decompose]
    out.append(f"{pad}for (idx b_ = {lo}; b_ < {hi}; b_ += {STAGE}) {{")
    out.append(f"{pad}    idx e_ = b_ + {STAGE} < {hi} ? b_ + {STAGE} : {hi};")
    for i, st in enumerate(stages):
        out.append(f"{pad}    for (idx {var} = b_; {var} < e_; {var}++) {{")
        if inner is None:
            out += [f"{pad}        {d}" for d in decompose]
        text = "\n".join(st)
        out += [f"{pad}        {ct} {t} = s_{t}[{var} - b_];" for t, (d, ct) in sorted(used.items())
                if d < i and re.search(rf"\b{t}\b", text)]
        out += [f"{pad}        {ln}" for ln in st]
        out += [f"{pad}        s_{t}[{var} - b_] = {t};" for t, (d, _) in sorted(used.items()) if d == i]
        out.append(f"{pad}    }}")
    out.append(f"{pad}}}")
    if inner is not None:
        out.append("    }")
    out += [f"    if (big_) {name}_exact_body(ctx_, lo_, hi_);", "}"]
    return out


def _body(exprs, k, fast):
    """The lines computing a kernel's members for one outer iteration (`fast`: NOTE [ Fast trig with a
    rerun ]); for a staged body (NOTE [ Staged trig chains ]), (stages, {temporary: (stage, C type)})."""
    body = []
    p = _Printer(body, 2 if k else 1, fast)
    inners = {tuple((v, n) for v, n in sizes.items() if v.startswith("y")) for _, _, _, sizes in exprs}
    trigs = sum(_is_trig(x) for _, e, _, _ in exprs for x in walk(e))
    staged = fast and trigs >= 2 and all(isinstance(m, Pointwise) for m, _, _, _ in exprs) \
        and len(inners) == 1 and len(next(iter(inners))) <= 1 \
        and all(n >= STAGE_MIN for _, n in next(iter(inners)))
    if staged:
        p.staged, p.indent = True, 0
        p.start_stage()
        p.stages.pop(0)
    for m, e, store, sizes in exprs:
        if staged:
            p.emit(f"/* {m.name}: {_describe(m)} */")
            val = p.expr(e, {})
            val = _store(m.buffer.dtype, val) if m.buffer.dtype in LOWP else val
            p.emit(f"{m.name}[{_idx(store)}] = {val};")
            continue
        p.emit(f"/* {m.name}: {_describe(m)} */")
        p.emit("{")
        p.indent += 1
        if isinstance(m, Pointwise):
            inner = [(v, s) for v, s in sizes.items() if v.startswith("y")]
            for i, (v, s) in enumerate(inner):
                if i == len(inner) - 1:  # NOTE [ Vectorising pointwise loops ]
                    p.emit("#pragma omp simd" + (" reduction(|:big_)" if fast else ""))
                p.emit(f"for (idx {v} = 0; {v} < {s}; {v}++) {{")
                p.indent += 1
            val = p.expr(e, {})
            p.emit(f"{m.name}[{_idx(store)}] = {_store(m.buffer.dtype, val) if m.buffer.dtype in LOWP else val};")
            for _ in inner:
                p.indent -= 1
                p.emit("}")
        else:
            acc = m.acc_dtype
            at = "double" if acc in ("float32", "float64") else CTYPES[acc]
            p.emit(f"{at} acc = {_red_init(m.reduction, acc)};")
            red = [(v, s) for v, s in sizes.items() if v.startswith("r")]
            simd = m.reduction in ("sum", "prod") and acc in ("float32", "float64")
            for i, (v, s) in enumerate(red):
                if simd and i == len(red) - 1:
                    big = " reduction(|:big_)" if fast else ""
                    p.emit(f"#pragma omp simd reduction({'+' if m.reduction == 'sum' else '*'}:acc){big}")
                p.emit(f"for (idx {v} = 0; {v} < {s}; {v}++) {{")
                p.indent += 1
            val = p.expr(e, {})
            p.emit(_red_update(m.reduction, "acc", val, acc))
            for _ in red:
                p.indent -= 1
                p.emit("}")
            strides = m.buffer.strides
            store_idx = " + ".join(f"{st} * x{d}" if st != 1 else f"x{d}"
                                   for d, st in enumerate(strides) if m.outer[d] != 1) or "0"
            p.emit(f"{m.name}[{store_idx}] = {_store(m.buffer.dtype, 'acc')};")
        p.indent -= 1
        p.emit("}")
    if staged:
        inner = next(iter(inners))
        return p.stages, p.defs, inner[0] if inner else None
    return body


def _describe(m) -> str:
    if isinstance(m, Pointwise):
        return f"pointwise over {list(m.buffer.shape)}"
    return f"{m.reduction} over {list(m.reduced)} for each of {list(m.outer)}"
