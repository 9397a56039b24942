"""Functions with graph breaks, written once for torch and ember (`make(lib)` returns the function or module
to compile; its input is one float32 (3, 4) tensor), for comparing graph and break counts and results.

Used by test_dynamo.py (against torch's `explain`, live) and by cross_version_checks.py, which runs them
under CPython 3.10 and 3.12 (where torch is not installed) against `dynamo_cases_ref.npz`: torch's counts
and results, written by `python tests/compiler/dynamo_cases.py --write` on 3.11 and checked against torch
by test_dynamo.py so that it cannot go stale.

Torch's rules these exercise (NOTE [ When a break skips the frame ] in ember/_dynamo/symbolic_convert.py):
a break inside an inlined call cuts the caller's graph at the call and the callee's frame is compiled on
its own; torch.nn's own frames reached after a break run uncompiled; a break in a loop, a try block, a
generator or a user context manager gives the frame up; try/except, generators, `yield from` and
`contextlib.contextmanager` are captured when nothing breaks; a break inside a grad-mode or autocast block
is resumed after, the block still on.
"""

import collections
import contextlib
import dataclasses
import os
import sys

import numpy as np

X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamo_cases_ref.npz")


def c_nested_print(lib):
    def g(x):
        y = x.cos()
        print("in g")
        return y * 3

    def f(x):
        z = g(x + 1)
        return z - 1

    return f


def c_deep_item(lib):
    def h(x):
        a = x.sum().item()
        return x * a

    def g(x):
        return h(x.sin()) + 1

    def f(x):
        return g(x * 2).exp()

    return f


def c_method_branch(lib):
    class A:
        def __init__(self):
            self.k = 2

        def go(self, x):
            y = x * self.k
            if y.sum() > 0:
                return y.relu()
            return y.tanh()

    a = A()

    def f(x):
        return a.go(x + 1) * 3

    return f


def c_module_print(lib):
    nn = lib.nn

    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            y = self.l(x)
            print("inner")
            return y.relu()

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.inner = Inner()

        def forward(self, x):
            return self.inner(self.a(x)).sum(0)

    lib.manual_seed(0)
    return Outer()


def c_seq_module_break(lib):
    nn = lib.nn

    class Brk(nn.Module):
        def forward(self, x):
            if x.mean() > 0:
                return x * 2
            return x - 1

    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 4), Brk(), nn.Linear(4, 2))


def c_loop_break(lib):
    def f(x):
        for i in range(3):
            x = x * 2
            print(i)
            x = x + 1
        return x

    return f


def c_loop_break_inlined(lib):
    def g(x, i):
        x = x.sin()
        print(i)
        return x + i

    def f(x):
        for i in range(2):
            x = g(x, i)
        return x.sum()

    return f


def c_no_grad_nested(lib):
    def g(x):
        y = x * 2
        print("g")
        return y + 1

    def f(x):
        with lib.no_grad():
            z = g(x)
        return z * x

    return f


def c_break_in_nested_with_depth2(lib):
    def h(x):
        return x.sum().item()

    def g(x):
        with lib.no_grad():
            return x * h(x)

    def f(x):
        return g(x.cos()) + 1

    return f


def c_try_except(lib):
    def f(x):
        try:
            y = x * 2
        except ValueError:
            y = x
        return y + 1

    return f


def c_try_finally(lib):
    def f(x):
        try:
            y = x.sin()
        finally:
            z = 3
        return y + z

    return f


def c_try_except_raise(lib):
    def f(x):
        try:
            raise ValueError("boom")
        except ValueError:
            y = x * 2
        return y + 1

    return f


def c_try_break(lib):
    def f(x):
        try:
            y = x * 2
            print("in try")
            y = y + 1
        finally:
            y = y - 1
        return y

    return f


def c_user_cm(lib):
    class CM:
        def __init__(self):
            self.entered = 0

        def __enter__(self):
            self.entered += 1
            return 5

        def __exit__(self, *a):
            return False

    cm = CM()

    def f(x):
        with cm as k:
            y = x * k
        return y + 1

    return f


def c_contextmanager(lib):
    @contextlib.contextmanager
    def ctx(v):
        yield v * 2

    def f(x):
        with ctx(3) as k:
            y = x * k
        return y.sin()

    return f


def c_generator(lib):
    def gen(x):
        for i in range(3):
            yield x * i

    def f(x):
        return sum(gen(x))

    return f


def c_genexpr(lib):
    def f(x):
        return lib.stack(tuple(x * i for i in range(3))).sum(0)

    return f


def c_yield_from(lib):
    def inner(x):
        yield x + 1
        yield x + 2

    def outer(x):
        yield from inner(x)
        yield x + 3

    def f(x):
        return list(outer(x))

    return f


def c_listcomp_break(lib):
    def f(x):
        return [print(i) or x * i for i in range(2)]

    return f


def c_gen_fn_top(lib):
    def f(x):
        for v in (x, x * 2):
            yield v.sin()

    def g(x):
        return list(f(x))

    return g


def c_cm_try_finally(lib):
    log = []

    @contextlib.contextmanager
    def scaled(k):
        log.append("enter")
        try:
            yield k * 2
        finally:
            log.append("exit")

    def f(x):
        with scaled(2) as k:
            y = x * k
        return y + len(log)

    return f


def c_cm_break_inside(lib):
    @contextlib.contextmanager
    def ctx():
        yield 3

    def f(x):
        y = x.cos()
        with ctx() as k:
            print("inside")
            y = y * k
        return y

    return f


def c_cm_break_after(lib):
    @contextlib.contextmanager
    def ctx():
        yield 3

    def f(x):
        with ctx() as k:
            y = x * k
        print("after")
        return y.exp()

    return f


def c_except_from_callee(lib):
    def g(x):
        if x.dim() == 2:
            raise KeyError("k")
        return x

    def f(x):
        try:
            y = g(x) * 2
        except KeyError as e:
            y = x * len(e.args)
        return y.sin()

    return f


def c_nested_try(lib):
    def f(x):
        try:
            try:
                raise ValueError
            except KeyError:
                y = x * 5
        except ValueError:
            y = x * 7
        finally:
            y = y + 1
        return y

    return f


def c_gen_break_alive(lib):
    def gen(x):
        yield x.sin()
        yield x.cos()

    def f(x):
        g = gen(x * 2)
        print("break")
        return list(g)

    return f


def c_gen_break_inside(lib):
    def gen(x):
        yield x.sin()
        print("in gen")
        yield x.cos()

    def f(x):
        return lib.stack(list(gen(x + 1)))

    return f


def c_genexpr_any(lib):
    def f(x):
        rows = tuple(r * 2 for r in x)
        n = sum(1 for r in rows if r.shape[0] == 4)
        return lib.cat(rows) * n

    return f


def c_next_gen(lib):
    def gen(x):
        k = 1
        while True:
            yield x * k
            k += 1

    def f(x):
        g = gen(x)
        a = next(g)
        b = next(g)
        return a + b

    return f


def c_zip_gen(lib):
    def f(x):
        out = 0
        for a, b in zip((x * i for i in range(3)), (x + i for i in range(3))):
            out = out + a * b
        return out

    return f


def c_module_loop_break(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, x):
            y = self.l(x)
            if y.sum() > 0:
                return y
            return -y

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(2)])

        def forward(self, x):
            x = x * 2
            for b in self.blocks:
                x = b(x)
            return x.sum()

    lib.manual_seed(0)
    return Net()


def c_break_in_while(lib):
    def f(x):
        i = 0
        while i < 2:
            x = x + 1
            i += 1
        y = x.sum().item()
        return x * y

    return f


def c_try_then_break(lib):
    def f(x):
        try:
            y = x * 2
        except ValueError:
            y = x
        print("after")
        return y + 1

    return f


def c_break_then_try_raise(lib):
    def g(v):
        if v > 1:
            raise ValueError("big")
        return v

    def f(x):
        y = x.sin()
        n = int(x.abs().max().item() * 10)
        try:
            k = g(n)
        except ValueError:
            k = -1
        return y * k

    return f


def c_skipped_loop_with_try(lib):
    def f(x):
        out = x
        for i in range(3):
            try:
                if i == 1:
                    raise KeyError(i)
                out = out * 2
            except KeyError:
                out = out + 100
            print(i)
        return out

    return f


def c_library_container_after_break(lib):
    nn = lib.nn

    class Brk(nn.Module):
        def forward(self, x):
            y = x * 3
            if y.mean() > 0:
                return y.relu()
            return y.tanh()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.plain = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.mixed = nn.Sequential(nn.Linear(4, 4), Brk())

        def forward(self, x):
            y = self.plain(x)
            print("break")
            return self.mixed(self.plain(y)).sum(0)

    lib.manual_seed(0)
    return Net()


# -- objects built inside the region and context managers (test_dynamo_objects.py has the larger tables) ------


class _CM:
    def __init__(self, k):
        self.k, self.entered = k, 0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        self.entered -= 1
        return False


@dataclasses.dataclass
class _Pair:
    a: object
    b: float = 2.0


_NT = collections.namedtuple("_NT", "a b")


def c_user_context_managers(lib):
    def f(x):
        with _CM(2) as c, contextlib.nullcontext(3) as k:
            with contextlib.suppress(KeyError):
                y = x * c.k * k + c.entered
        return y - c.entered

    return f


def c_user_cm_break_inside(lib):
    def f(x):
        with _CM(2) as c:
            y = x * c.k
            print("a break inside a user context manager")
        return y + 1

    return f


def c_objects_across_break(lib):
    def f(x):
        p, t, s = _Pair(x.sin()), _NT(x, 3), {1, 2}
        s.add(5)
        print("a break with the objects alive")
        return p.a * p.b + t.a * t.b + len(s)

    return f


def c_autocast_and_module_built_inside(lib):
    def f(x):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = x @ x.T
        return lib.nn.Softmax(dim=-1)(y.float()), y.dtype == lib.bfloat16

    return f


# graph breaks inside autocast blocks: torch compiles the graph before the break, runs it in Python under
# autocast and resumes after it (NOTE [ Autocast across a break ] in ember/_dynamo/eval_frame.py); the
# with-block bytecode differs in each CPython version. (bfloat16 results are returned as float32 beside
# a check of their dtype: NumPy has no bfloat16.)


def c_autocast_break_print(lib):
    def f(x):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = x @ x.T
            print("a break inside autocast")
            z = y @ y
        return z.float(), z.dtype == lib.bfloat16, lib.is_autocast_enabled("cpu")

    return f


def c_autocast_break_item_and_branch(lib):
    def f(x):
        with lib.amp.autocast("cpu"):
            y = x @ x.T
            s = y.sum().item()
            if y.sum() > 0:
                z = y @ y * s
            else:
                z = y - s
        return z.float(), z.dtype == lib.bfloat16

    return f


def c_autocast_break_nested_grad_mode(lib):
    def f(x):
        x = x.detach().requires_grad_()
        with lib.no_grad():
            with lib.autocast("cpu"):
                y = x @ x.T
                print("autocast inside no_grad")
                z = y @ y
        with lib.autocast("cpu"):
            w = x @ x.T
            with lib.enable_grad(), lib.set_grad_enabled(False):
                print("no_grad inside autocast")
                v = w @ w
            u = v @ w
        return z.float(), u.float(), y.requires_grad, u.requires_grad, u.dtype == lib.bfloat16

    return f


def c_autocast_break_disabled_and_float16(lib):
    def f(x):
        with lib.autocast("cpu", dtype=lib.float16):
            y = x @ x.T
            with lib.autocast("cpu", enabled=False):
                print("a break in autocast(enabled=False) inside a float16 autocast")
                z = y.float() @ x
            w = y @ z
        return y, z, w, lib.get_autocast_dtype("cpu") == lib.float16

    return f


def c_autocast_two_breaks_and_after(lib):
    def f(x):
        with lib.autocast("cpu") as a:
            y = x @ x.T
            print("first break")
            z = y @ y
            print("second break")
            w = z @ y
        print("a break after the block")
        return w.float() @ x, a is None

    return f


def c_autocast_break_in_loop(lib):
    def f(x):
        with lib.autocast("cpu"):
            for i in range(2):
                x = (x @ x.T)[:, :4]
                print(i)
        return x.float()

    return f


CASES = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("c_")}


def flatten(out):
    """The arrays and Python values of a case's output, in order (tensors as NumPy arrays)."""
    if isinstance(out, (list, tuple)):
        return [y for x in out for y in flatten(x)]
    if hasattr(out, "detach"):
        return [out.detach().numpy()]
    return [np.asarray(out)]


def run_case(lib, name, raw=False):
    """(graph count, break count, number of break reasons) of `explain`, and the compiled result (flattened
    to NumPy values, or as it is with `raw`)."""
    import contextlib as cl
    import io

    with cl.redirect_stdout(io.StringIO()):
        lib.manual_seed(0)
        ex = lib._dynamo.explain(CASES[name](lib))(lib.from_numpy(X.copy()))
        lib._dynamo.reset()
        lib.manual_seed(0)
        out = lib.compile(CASES[name](lib), backend="eager")(lib.from_numpy(X.copy()))
    return (ex.graph_count, ex.graph_break_count, len(ex.break_reasons)), out if raw else flatten(out)


def reference(lib):
    """The npz contents for every case, computed with `lib` (torch)."""
    ref = {}
    for name in CASES:
        counts, outs = run_case(lib, name)
        ref[f"{name}/counts"] = np.array(counts)
        for i, o in enumerate(outs):
            ref[f"{name}/out{i}"] = o
    return ref


# compare.py's tolerances for float32 (the cases compute in float32)
RTOL, ATOL = 1.3e-6, 1e-5


def check_against_reference(lib):
    """Every case run with `lib` against the saved torch reference: the mismatches (none: all agree)."""
    ref = np.load(REF)
    bad = []
    for name in CASES:
        counts, outs = run_case(lib, name)
        want = tuple(int(c) for c in ref[f"{name}/counts"])
        if counts != want:
            bad.append(f"{name}: graphs/breaks/reasons {counts}, torch {want}")
        n = sum(1 for k in ref.files if k.startswith(f"{name}/out"))
        if len(outs) != n:
            bad.append(f"{name}: {len(outs)} outputs, torch {n}")
            continue
        for i, o in enumerate(outs):
            t = ref[f"{name}/out{i}"]
            if o.shape != t.shape or o.dtype != t.dtype:
                bad.append(f"{name}: output {i} is {o.dtype}{o.shape}, torch {t.dtype}{t.shape}")
            elif not np.allclose(o, t, rtol=RTOL, atol=ATOL, equal_nan=True):
                bad.append(f"{name}: output {i} differs from torch's")
    return bad


if __name__ == "__main__" and "--write" in sys.argv:
    import torch

    np.savez(REF, **reference(torch))
    print(f"wrote {REF}")
