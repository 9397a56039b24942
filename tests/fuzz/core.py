"""Draw cases from the OpInfo table, run them in ember and torch, classify and shrink the mismatches.

A case is (op id, the NumPy inputs, kwargs, a layout per tensor input, the gradient inputs). Everything is
drawn with one `numpy.random.Generator` per case, seeded from (seed, case number): a case is reproducible
alone, and a run of N cases is the first N cases of any longer run with the same seed.

NOTE [ Why numpy's Generator, not hypothesis ]
hypothesis shrinks well but draws through its engine (a few ms per case, health checks, a database) and
its example counts are not a fixed budget; the suite run must be a fixed set of a few thousand cases in a
few seconds. Templates come from the table's own samples, so a case is already small; `shrink` below
then removes what the mismatch does not need (the layout, the perturbed values, dims down to size 1).
"""

import os
import re
import signal
import sys
import threading
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import torch

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [p for p in (_TESTS, os.path.join(_TESTS, "ops")) if p not in sys.path]

from compare import check  # noqa: E402 - found through the path above
from op_db import OPS  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ember depends on it
    ml_dtypes = None

DTYPES = ("bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64")
BY_ID = {op.id: op for op in OPS}

# ops whose integer inputs are indices or counts: torch reads out of bounds or allocates gigabytes on some
# drawn values (see tests/test_no_numpy_leaks.py), so their integer arrays keep their values and dtype
_INDEX_OPS = re.compile(r"take|gather|scatter|index|embedding|put|bincount|one_hot|select|repeat_interleave"
                        r"|unpool|nll|cross_entropy|multi_margin|ctc|histc|unique|sort|topk|kthvalue|lu_unpack")
# NOTE [ Values the oracle cannot take ]
# Some drawn values stop torch itself, not ember: its orthogonal polynomials and binomial sampler loop once
# per unit of the degree or count (a degree of 2**31 runs for minutes in C, where no alarm interrupts it),
# and its eigvals hands a NaN matrix to MKL, which crashes the process. For these ops the drawn special
# values are moderate and finite (`_pool(..., bounded=True)`); `tests/fuzz/parallel.py` reports any other
# case that kills or stalls a worker. torch's lu_unpack reads its pivots without a bounds check and writes
# through them: out-of-range pivots (another dtype's values) or an LU batch the pivots do not cover corrupt
# the oracle's heap, and the process aborts later in an unrelated case (found by the 100k run: three
# crashes). Its pivots keep their values (_INDEX_OPS) and its inputs their shapes (_FIXED_SHAPES); ember
# refuses such pivots (known.py). torch's lstsq with driver gelss segfaults on a right-hand side of no
# columns (`lstsq(rand(4, 3), rand(4, 0), driver="gelss")`: MKL's gelss is handed nrhs = 0; found by the
# 100k run: a crash), so those cases keep their shapes too; ember returns an empty solution there.
_BOUNDED = re.compile(r"special_.*polynomial|binomial|linalg\.eigvals$")
_FIXED_SHAPES = re.compile(r"lu_unpack|lstsq_\w*gelss")
# ops whose cases take seconds without hanging: torch.cond traces its branches with dynamo on each new input;
# max_unpool given a drawn kernel size of 100 builds outputs of 10^7-10^8 elements, which the harness
# compares and differentiates in several CPU seconds (found by the 100k run as a "hang" under load; ember
# and torch each return in about a second); the transposed convs given a drawn stride of 100 likewise (a
# (1, 3, 5, 4, 3) input to conv_transpose3d gives 2 x 401 x 300 x 200 = 48M outputs: ember 1.0 s forward and
# backward, torch 0.2 s, the harness's comparison of values and gradients the rest of the 5 s)
_SLOW_ORACLE = re.compile(r"cond|nn\.functional\.max_unpool\dd|nn\.functional\.conv_transpose\dd")
# ops whose torch kernel reads its integer inputs (lengths, targets, pivots) without a bounds check: an
# expanded layout repeats the first element, so lengths outrun their sequences and torch reads and writes
# out of bounds (ctc_loss: a worker crashed inside the case or in a later one, found by the 100k run);
# their integer inputs keep their layouts
_UNCHECKED_INDEX = re.compile(r"nn\.functional\.ctc_loss|lu_unpack")
# ops that draw random numbers or time: their values are not a function of the inputs alone
_SKIP = re.compile(r"rand|bernoulli|dropout|multinomial|normal_|poisson|exponential_|geometric_|cauchy_"
                   r"|log_normal_|uniform_|distributions|sampler|seed")


@dataclass
class Case:
    op: str
    inputs: list
    kwargs: dict
    layouts: dict = field(default_factory=dict)  # input index -> ("T",) | ("step",) | ("expand", shape)
    grad: list = field(default_factory=list)
    what: list = field(default_factory=list)  # the perturbations applied, for the report


@dataclass
class Mismatch:
    case: Case
    kind: str
    message: str
    known: str = None  # the reason, when known.py lists it
    k: int = None  # the case number: `draw(np.random.default_rng([seed, k]), ops())` rebuilds the case


@dataclass
class Result:
    cases: int = 0
    mismatches: list = field(default_factory=list)

    @property
    def unexplained(self):
        return [m for m in self.mismatches if m.known is None]


# ---- drawing ----------------------------------------------------------------------------------------------

def _np_dtype(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _cast(x, name):
    """`x` in dtype `name`, still an array when `x` is 0-d (NumPy's comparisons and clips of a 0-d array give
    a NumPy scalar, which the libraries would take as a Python number, not as a 0-d tensor)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "bool":
            return np.asarray(x != 0)
        d = np.dtype(name)
        if d.kind in "iu" and x.dtype.kind == "f":
            x = np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
            x = np.clip(x, np.iinfo(d).min + 1, np.iinfo(d).max)
        return np.asarray(x).astype(d)


def _pool(dtype, bounded=False):
    if dtype.kind == "b":
        return np.array([True, False])
    if bounded:  # NOTE [ Values the oracle cannot take ]
        return np.array([0, 1, 100, 2, 7] if dtype.kind == "u" else [0, 1, -1, 100, -100, 7], dtype) \
            if dtype.kind in "iu" else np.array([-0.0, 0.0, 1.0, -1.0, 1e3, -1e3, 0.5]).astype(dtype)
    if dtype.kind in "iu":  # (not min: torch's integer division of min by -1 dies of SIGFPE)
        info = np.iinfo(dtype)
        return np.array([0, info.max, info.min + 1, 1, 0 if dtype.kind == "u" else -1], dtype)
    fin = np.finfo(dtype) if dtype.name != "bfloat16" else np.finfo(np.float32)
    with np.errstate(all="ignore"):
        return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fin.max, -fin.max, fin.tiny, 1.0]).astype(dtype)


def _values(rng, x, bounded=False):
    """Some elements of `x` replaced by NaN, inf, -0.0, extremes of its dtype (`bounded`: moderate values)."""
    if x.size == 0:
        return x
    pool = _pool(x.dtype, bounded)
    out = x.copy()
    flat = out.reshape(-1)
    k = rng.integers(1, max(2, x.size // 2 + 1))
    at = rng.choice(x.size, size=min(k, x.size), replace=False)
    flat[at] = pool[rng.integers(0, len(pool), len(at))]
    return out


def _shape(rng, x):
    """`x` with another shape: a 0-size or 1-size dim, a leading 1, 0-d, one dim more."""
    kind = rng.integers(0, 5)
    if kind == 0 and x.ndim:
        d = rng.integers(0, x.ndim)
        return np.take(x, np.arange(0), axis=d), f"0-size dim {d}"
    if kind == 1 and x.ndim and x.size:
        d = rng.integers(0, x.ndim)
        return np.take(x, np.arange(1), axis=d), f"1-size dim {d}"
    if kind == 2:
        return x[None], "leading 1-dim"
    if kind == 3 and x.size:
        return np.array(x.reshape(-1)[0]), "0-d"
    return np.stack([x, x], axis=-1), "one dim more"


def _layout(rng, x):
    """A layout for tensor `x` (a view built in the library), or None when `x` cannot have one."""
    choices = []
    if x.ndim >= 2:
        choices.append(("T",))
    if x.ndim >= 1 and x.size:
        choices.append(("step",))
    if x.ndim >= 1 and any(s > 1 for s in x.shape):
        d = int(rng.choice([i for i, s in enumerate(x.shape) if s > 1]))
        choices.append(("expand", d))
    if x.ndim >= 2 and x.size:
        choices.append(("as_strided",))
    return choices[rng.integers(0, len(choices))] if choices else None


def _base(x, layout):
    """The array from which `_view(lib, base, layout)` rebuilds `x`'s values."""
    kind = layout[0]
    if kind == "T":
        return np.ascontiguousarray(np.swapaxes(x, -1, -2))
    if kind == "step":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        return wide
    if kind == "expand":
        return np.ascontiguousarray(np.take(x, np.arange(1), axis=layout[1]))
    return np.ascontiguousarray(x.reshape(-1, order="F"))  # as_strided: column-major strides


def _view(lib, b, layout, shape):
    kind = layout[0]
    if kind == "T":
        return b.transpose(-1, -2)
    if kind == "step":
        return b[..., ::2]
    if kind == "expand":
        return b.expand(*shape)
    strides, acc = [], 1
    for s in shape:
        strides.append(acc)
        acc *= s
    return b.as_strided(tuple(shape), tuple(strides))


def _bad_arg(rng, v):
    """An invalid or edge value in place of a Python argument."""
    if isinstance(v, bool):
        return rng.choice(np.array(["x", None, 2], dtype=object)), "bool arg"
    if isinstance(v, int):
        picks = [v + 7, -v - 7, 100, -100, 1.5, "a", None]
        return picks[rng.integers(0, len(picks))], "int arg"
    if isinstance(v, float):
        picks = [float("nan"), float("inf"), -0.0, -v, 1e30, "a"]
        return picks[rng.integers(0, len(picks))], "float arg"
    if isinstance(v, (tuple, list)) and v and all(isinstance(e, int) and not isinstance(e, bool) for e in v):
        i = rng.integers(0, len(v))
        picks = [-3, 100, -100, 0]
        out = list(v)
        out[i] = picks[rng.integers(0, len(picks))]
        return type(v)(out), "int list arg"
    return v, None


def ops(op_filter=None):
    out = [op for op in OPS if not _SKIP.search(op.id)]
    if op_filter:
        out = [op for op in out if re.search(op_filter, op.id)]
    return out


def draw(rng, pool):
    """One case: a template sample of a drawn op, perturbed."""
    samples = []
    while not samples:  # (a few entries have no sample in some dtype)
        op = pool[rng.integers(0, len(pool))]
        tdtype = op.dtypes[rng.integers(0, len(op.dtypes))]
        samples = op.samples(tdtype, np.random.default_rng(rng.integers(0, 2 ** 31)))
    s = samples[rng.integers(0, len(samples))]
    inputs, kwargs, what = list(s.inputs), dict(s.kwargs), []
    index_op = bool(_INDEX_OPS.search(op.id))
    tensors = [i for i, x in enumerate(inputs) if isinstance(x, np.ndarray)]
    data = [i for i in tensors if inputs[i].dtype == _np_dtype(tdtype) and not (
        index_op and inputs[i].dtype.kind in "iub")]
    if data and rng.random() < 0.5:  # another dtype: for all data inputs, or one (mixed dtypes)
        d = DTYPES[rng.integers(0, len(DTYPES))]
        for i in (data if rng.random() < 0.7 else [data[rng.integers(0, len(data))]]):
            inputs[i] = _cast(inputs[i], d)
        what.append(f"dtype {d}")
    if data and rng.random() < 0.3:
        i = data[rng.integers(0, len(data))]
        inputs[i] = _values(rng, inputs[i], bool(_BOUNDED.search(op.id)))
        what.append(f"values of input {i}")
    if data and rng.random() < 0.15 and not _FIXED_SHAPES.search(op.id):
        i = data[rng.integers(0, len(data))]
        inputs[i], w = _shape(rng, inputs[i])
        what.append(f"input {i}: {w}")
    args = [i for i, x in enumerate(inputs) if not isinstance(x, np.ndarray) and isinstance(x, (int, float,
                                                                                                 tuple, list))]
    keys = [k for k, v in kwargs.items() if isinstance(v, (int, float, tuple, list))]
    if (args or keys) and rng.random() < 0.12:
        j = rng.integers(0, len(args) + len(keys))
        if j < len(args):
            inputs[args[j]], w = _bad_arg(rng, inputs[args[j]])
        else:
            kwargs[keys[j - len(args)]], w = _bad_arg(rng, kwargs[keys[j - len(args)]])
        if w:
            what.append(w)
    layouts = {}
    unchecked = bool(_UNCHECKED_INDEX.search(op.id))
    for i in tensors:
        if isinstance(inputs[i], np.ndarray) and rng.random() < 0.3:
            lay = _layout(rng, inputs[i])
            if unchecked and inputs[i].dtype.kind in "iu":
                continue
            if lay is not None:
                layouts[i] = lay
                what.append(f"input {i}: {lay[0]}")
    grad = []
    if op.grad:
        grad = [i for i in tensors if isinstance(inputs[i], np.ndarray) and inputs[i].dtype.kind == "f"
                and (op.grad_inputs is None or i in op.grad_inputs)]
    return Case(op.id, inputs, kwargs, layouts, grad, what)


# ---- running ----------------------------------------------------------------------------------------------

def _fn(case):
    op = BY_ID[case.op]
    shapes = {i: case.inputs[i].shape for i in case.layouts}

    def fn(lib, *xs):
        xs = [_view(lib, x, case.layouts[i], shapes[i]) if i in case.layouts else x for i, x in enumerate(xs)]
        return op.fn(lib, *xs, **case.kwargs)
    return fn


def _numpy_error(e):
    text = str(e)
    return type(e).__module__.startswith("numpy") or any(w in text for w in (
        "encountered in", "out of bounds for uint", "out of bounds for int", "could not be broadcast",
        "operands could not", "`indices` and `arr`", "for axis", "Python integer", "too large to convert to C",
        "arrays used as indices", "cannot be broadcast to a single shape", "ufunc", "numpy",
        "axes don't match array", "is out of bounds for array of dimension", "did not contain a loop",
        "zero-size array to reduction operation", "cannot reshape array of size", "negative dimensions are not allowed",
        "broadcast a non-scalar", "axis remapping", "of an empty sequence", "not supported for the input types"))


def _classify(e):
    m = str(e)
    if isinstance(e, AssertionError):
        if "but ember did not" in m:
            return "returns where torch raises"
        if m.startswith(("ember raised", "message differs")):
            # NOTE [ NumPy errors where torch raises too ]: an exception NumPy raised inside ember reaches the
            # user whether or not torch raises; compare.assert_same_error fails inside the `except` that
            # caught ember's exception, so it is the AssertionError's context
            if e.__context__ is not None and _numpy_error(e.__context__):
                return "numpy error"
            return "exception class" if m.startswith("ember raised") else "exception message"
        if "grad" in m:
            return "gradient"
        for k in ("dtype", "shape", "stride", "contiguity"):
            if f": {k}" in m:
                if k == "stride" and _size1_only(m):
                    return "stride of a size-1 dim"
                return "strides" if k == "contiguity" else k
        if "torch did not raise" in m:
            return "raises where torch returns"
        return "values"
    if isinstance(e, Warning):
        return "numpy warning"
    return "numpy error" if _numpy_error(e) else "raises where torch returns"


def _size1_only(message):
    """Whether a stride mismatch ("stride (a, b) != torch (c, d), shape (n, m)") differs only at dims of size
    1, whose stride addresses no second element (NOTE [ Strides of size-1 dims ] in known.py)."""
    g = re.search(r"stride \(([\d, ]*)\) != torch \(([\d, ]*)\), shape \(([\d, ]*)\)", message)
    if not g:
        return False
    e, t, shape = ([int(v) for v in x.split(",") if v.strip()] for x in g.groups())
    return len(e) == len(t) == len(shape) and all(a == b or n == 1 for a, b, n in zip(e, t, shape))


def base_inputs(case):
    """The arrays handed to `check`: each laid-out input replaced by its base."""
    return [_base(x, case.layouts[i]) if i in case.layouts else x for i, x in enumerate(case.inputs)]


class Hang(BaseException):
    """A case that ran past its time (raised by the alarm in `run`; a BaseException, so that no `except
    Exception` in the code under test swallows it and turns a slow case into a passing one)."""


def _alarm(signum, frame):
    raise Hang("the case ran past its time limit")


TIME_LIMIT = 5.0


def warm_up():
    """Pay the libraries' one-time costs before any case is timed: torch's first optimizer step imports
    torch._dynamo (seconds), which would otherwise count against the case that happens to run first."""
    import ember
    for lib in (torch, ember):
        p = lib.zeros(2, requires_grad=True)
        p.grad = lib.ones(2)
        lib.optim.SGD([p], lr=0.1).step()


def run(case):
    """None when ember and torch agree on `case`, else (kind, message)."""
    op = BY_ID[case.op]
    main = threading.current_thread() is threading.main_thread()
    if main:
        # (CPU time, not wall time: on a loaded machine a case waiting for a core is not a hang)
        old = signal.signal(signal.SIGPROF, _alarm)
        signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT * (12 if _SLOW_ORACLE.fullmatch(case.op) else 1))
    try:
        with warnings.catch_warnings(record=True) as seen:
            # NOTE [ Warnings as a strict user has them ]
            # By default ember's own filter hides NumPy's RuntimeWarnings (NOTE [ Quiet NumPy ]); a user
            # with `-W error` turns them into errors, which must not reach them either. The strict view
            # covers both: RuntimeWarnings are errors here, so one escaping ember is a mismatch.
            warnings.simplefilter("always")
            warnings.filterwarnings("error", category=RuntimeWarning)
            try:
                check(_fn(case), *base_inputs(case), grad=case.grad or None, rtol=op.rtol, atol=op.atol,
                      check_stride=op.strides)
            except Hang as e:
                return "hang", str(e)
            except Exception as e:  # noqa: BLE001 - every failure is a finding
                return _classify(e), f"{type(e).__name__}: {str(e)[:400]}"
    finally:
        if main:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)
    leaked = [w for w in seen if issubclass(w.category, RuntimeWarning) and "torch" not in w.filename]
    if leaked:
        return "numpy warning", f"{leaked[0].category.__name__}: {leaked[0].message} ({leaked[0].filename})"
    return None


def shrink(case, kind):
    """A smaller case with the same mismatch kind: fewer layouts, unperturbed extras, dims cut to 1."""
    def same(c):
        try:
            r = run(c)
        except BaseException:  # noqa: BLE001 - a shrink step that breaks is not taken
            return False
        return r is not None and r[0] == kind
    for i in list(case.layouts):
        c = replace(case, layouts={k: v for k, v in case.layouts.items() if k != i})
        if same(c):
            case = c
    if case.grad:
        c = replace(case, grad=[])
        if same(c):
            case = c
    for i, x in enumerate(case.inputs):
        if not isinstance(x, np.ndarray):
            continue
        for d in range(x.ndim):
            x = case.inputs[i]
            if x.shape[d] > 1 and i not in case.layouts:
                c = replace(case, inputs=case.inputs[:i] + [np.take(x, np.arange(1), axis=d)] + case.inputs[i + 1:])
                if same(c):
                    case = c
    return case


def reproducer(case):
    """A few lines of Python that rebuild the case's inputs and run it through `check`."""
    np.set_printoptions(threshold=50, precision=8)
    lines = ["import numpy as np", "from numpy import inf, nan", "from compare import check", "from op_db import OPS",
             f"op = next(o for o in OPS if o.id == {case.op!r})"]
    names = []
    for i, x in enumerate(base_inputs(case)):
        name = f"x{i}"
        names.append(name)
        if isinstance(x, np.ndarray):
            dt = "ml_dtypes.bfloat16" if x.dtype.name == "bfloat16" else repr(x.dtype.name)
            lines.append(f"{name} = np.array({x.tolist()!r}, dtype={dt}).reshape({x.shape})")
        else:
            lines.append(f"{name} = {x!r}")
    views = []
    for i in range(len(names)):
        lay = case.layouts.get(i)
        shape = case.inputs[i].shape if lay else None
        views.append({None: names[i], "T": f"{names[i]}.transpose(-1, -2)", "step": f"{names[i]}[..., ::2]",
                      "expand": f"{names[i]}.expand(*{shape})",
                      "as_strided": f"{names[i]}.as_strided({shape}, {_fstrides(shape or ())})"}[lay and lay[0]])
    args = ", ".join(names)
    lines.append(f"check(lambda lib, {args}: op.fn(lib, {', '.join(views)}, **{case.kwargs!r}), {args}, "
                 f"grad={case.grad or None}, rtol=op.rtol, atol=op.atol, check_stride=op.strides)")
    return "\n".join(lines)


def _fstrides(shape):
    out, acc = [], 1
    for s in shape:
        out.append(acc)
        acc *= s
    return tuple(out)


# ---- a run ------------------------------------------------------------------------------------------------

def fuzz(n, seed=0, op_filter=None, minimize=False):
    """Draw and run `n` cases; every mismatch is classified and matched against known.py."""
    from . import known
    pool = ops(op_filter)
    result = Result()
    warm_up()
    torch.manual_seed(0)
    for k in range(n):
        rng = np.random.default_rng([seed, k])
        case = draw(rng, pool)
        found = run(case)
        result.cases += 1
        if found is None:
            continue
        kind, message = found
        reason = known.reason(case.op, kind, message)
        if minimize and reason is None:
            case = shrink(case, kind)
        result.mismatches.append(Mismatch(case, kind, message, reason, k))
    return result


def summary(result, show_known=False, max_repro=50):
    from collections import Counter
    lines = [f"{result.cases} cases, {len(result.mismatches)} mismatches "
             f"({len(result.mismatches) - len(result.unexplained)} listed in known.py, "
             f"{len(result.unexplained)} not listed)"]
    for kind, n in Counter(m.kind for m in result.mismatches).most_common():
        lines.append(f"  {n:6d}  {kind}")
    shown = 0
    for m in result.mismatches:
        if (m.known is None or show_known) and shown < max_repro:
            shown += 1
            lines += ["", f"--- {m.kind}: {m.case.op} ({'; '.join(m.case.what) or 'template'})",
                      f"    {m.message}" + (f"\n    known: {m.known}" if m.known else ""), reproducer(m.case)]
    return "\n".join(lines)
