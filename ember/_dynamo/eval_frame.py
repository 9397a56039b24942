"""Running a compiled function: the cache of compiled entries, their guards, graph breaks and resumption.

NOTE [ Frame interception ]
Torch installs a PEP 523 frame-evaluation hook (a C function CPython calls instead of its own loop for
every frame) and checks the cache of the frame's code object there. Neither PEP 523 nor anything as cheap
is reachable from Python: `sys.setprofile`/`sys.settrace` see frames start but cannot replace what they
run, and cost on every call in the process. So `ember.compile(fn)` returns a wrapper
(`OptimizedFunction`), and the wrapper is the interception point: it binds the call's arguments into the
frame's locals, looks up the entries compiled for `fn.__code__` at offset 0, checks their guards and runs
the first that passes (capturing a new one if none does). Frames the compiled function calls are reached
the same way, by capture itself: inlined where capture can follow them, and where a call is a graph break
the callee runs through a wrapper of its own (as Dynamo would catch the callee's frame).

NOTE [ Graph breaks and resume points ]
Dynamo splits a frame at a break into: the graph up to the break, the break instruction run by CPython,
and a *resume function* generated from the remaining bytecode (its arguments are the stack and live
locals), itself compiled on its first call. Here a resume point is a cache key instead of a generated
function: (the code object, the offset of an instruction). An entry compiled at offset k was captured
starting from the frame state at k (its locals `L`, stack `S`, cells `C`), and is guarded on that state
like any frame's arguments. Running it: read the graph's inputs from the state, run the graph, rebuild
the state at the break from the graph's outputs (generated code), run the one break instruction on real
values (`run_instruction`, a small interpreter of single instructions), and continue at the offset that
instruction leads to, which is again looked up in the cache (and captured on a miss). A data-dependent
branch thus gets one entry per side taken, each compiled when first taken, as with Dynamo's resume
functions. This needs no bytecode generation (which differs in every CPython version: exception tables,
line tables, the specializing caches), at the price of a Python-level step per break. If capture at
some offset is impossible (e.g. the state holds a value that cannot be rebuilt), that instruction runs on
real values and capture is tried again at the next; past the recompile limit the rest of the frame runs
on real values, from offset 0 simply by calling the original function.
"""

from __future__ import annotations

import functools
import logging
import operator
import sys
import time
import types
import weakref

from .. import _logging
from . import config
from .exc import Unsupported
from .generators import drain_state
from .output_graph import AutocastExit, OutputGraph
from .symbolic_convert import (
    _BINOPS,
    _COMPARE,
    _INPLACE,
    _OLD_BINARY,
    PY,
    Frame,
    InstructionTranslator,
    break_skips_frame,
    instructions,
    unsupported_frame_reason,
)
from .variables import NULL, CellVariable

log = logging.getLogger("torch._dynamo")
_all_caches = weakref.WeakSet()
_compile_state = {"compiling": False}
# hooks explain() installs to see every graph and break
_observers = []
# torch.compiler.set_stance: "default", "force_eager", "eager_on_recompile", "fail_on_recompile"
stance = {"stance": "default"}


class FrameState:
    __slots__ = ("L", "S", "C", "kw", "handling", "blocks")

    def __init__(self, L, S, C):
        self.L, self.S, self.C, self.kw = L, S, C, None
        self.handling = []  # the exceptions being handled (except blocks entered), innermost last
        self.blocks = []  # 3.10's block stack: (handler index, stack level, is an except handler)


class _Lazy:
    """A frame input not yet read by the capture: lifted (and guarded) only when an instruction reads it."""

    __slots__ = ("value", "source")

    def __init__(self, value, source):
        self.value, self.source = value, source


class _LazyLocals(dict):
    def __init__(self, out, items):
        super().__init__(items)
        self.out = out

    def __getitem__(self, k):
        v = dict.__getitem__(self, k)
        if type(v) is _Lazy:
            v = self.out.lift(v.value, v.source)
            dict.__setitem__(self, k, v)
        return v

    def get(self, k, d=None):
        return self[k] if k in self else d

    def pop(self, k, *d):
        if k in self:
            v = self[k]
            dict.pop(self, k)
            return v
        return d[0] if d else dict.pop(self, k)


class Entry:
    """One compiled piece of a frame: guards, graph, the code that rebuilds the state, what runs next."""

    def __init__(
        self, guard, graph_fn, read_inputs, rebuild, kind, break_index, kw_names, keep, reason, gm=None
    ):
        self.guard, self.graph_fn, self.read_inputs, self.rebuild = guard, graph_fn, read_inputs, rebuild
        self.kind, self.break_index, self.kw_names, self.keep = kind, break_index, kw_names, keep
        self.reason, self.gm = reason, gm


_patched = [False]


def _patch_once():
    """What torch's `TorchPatcher.patch()` does on the first torch.compile and ember mirrors: distributions
    stop validating their arguments by default (`Distribution.set_default_validate_args(False)`)."""
    if not _patched[0]:
        _patched[0] = True
        from ..distributions import Distribution

        Distribution.set_default_validate_args(False)


class CompileContext:
    """What `ember.compile(..., backend=, fullgraph=, dynamic=)` fixed: shared by a function's frames."""

    def __init__(self, backend, fullgraph=False, dynamic=None, backend_name=None):
        _patch_once()
        self.backend, self.fullgraph, self.dynamic = backend, fullgraph, dynamic
        self.backend_name = backend_name or getattr(backend, "__name__", repr(backend))
        self.cache = {}  # code -> {offset: [Entry]}
        self.frame_state = {}  # (code, offset) -> {source: sizes seen}
        self.callees = {}
        self.warned = set()
        self.eager_codes = set()
        self.recompile_limit = None
        _all_caches.add(self)

    def reset(self):
        self.cache.clear()
        self.frame_state.clear()
        self.callees.clear()
        self.warned.clear()
        self.eager_codes.clear()


# -- running -------------------------------------------------------------------------------------------------


def bind_frame(fn, args, kwargs):
    """The frame's locals for a call (CPython's argument binding), and its closure cells."""
    code = fn.__code__
    n = code.co_argcount
    if not kwargs and len(args) == n and not code.co_kwonlyargcount and not (code.co_flags & 0x0C):
        L = dict(zip(code.co_varnames, args))
    elif (
        not code.co_kwonlyargcount
        and len(args) >= n
        and code.co_flags & 0x04
        and (not kwargs or code.co_flags & 0x08)
    ):
        L = dict(zip(code.co_varnames, args[:n]))
        L[code.co_varnames[n]] = tuple(args[n:])
        if code.co_flags & 0x08:
            L[code.co_varnames[n + 1]] = dict(kwargs)
    else:
        import inspect

        ba = inspect.signature(fn).bind(*args, **kwargs)
        ba.apply_defaults()
        L = dict(ba.arguments)
    if len(L) < n and fn.__defaults__:
        for name, d in zip(code.co_varnames[n - len(fn.__defaults__) : n], fn.__defaults__):
            L.setdefault(name, d)
    C = {}
    if code.co_freevars:
        C.update(zip(code.co_freevars, fn.__closure__))
    if PY < (3, 11):
        for name in code.co_cellvars:
            C[name] = types.CellType(L.pop(name)) if name in L else types.CellType()
    return L, C


def run_frame(ctx, fn, args, kwargs):
    code = fn.__code__
    if code in ctx.eager_codes or stance["stance"] == "force_eager":
        return fn(*args, **kwargs)
    reason = unsupported_frame_reason(code, top=True)
    if reason is not None:
        if ctx.fullgraph:
            raise Unsupported(f"{reason}: {code.co_name}")
        ctx.eager_codes.add(code)
        return fn(*args, **kwargs)
    L, C = bind_frame(fn, args, kwargs)
    st = FrameState(L, [], C)
    from .._grad_state import state as grad_state

    grad0 = grad_state.enabled
    offset = 0
    insts, index_of = instructions(code)
    try:
        while True:
            entry = lookup(ctx, fn, code, offset, st)
            if entry is None:  # past the recompile limit: the rest runs on real values
                if offset == 0:
                    return fn(*args, **kwargs)
                return run_eagerly(ctx, fn, code, index_of[offset], st)
            if entry.kind == "skip":  # see NOTE [ When a break skips the frame ] in symbolic_convert.py
                if offset == 0 and not steppable(code):
                    return fn(*args, **kwargs)
                return run_eagerly(ctx, fn, code, index_of[offset], st)
            if entry.kind == "step":
                nxt = step_real(ctx, fn, code, index_of[offset], st)
            else:
                outs = entry.graph_fn(*entry.read_inputs(st.L, st.S, st.C, fn)) if entry.graph_fn else ()
                res = entry.rebuild(outs, st.L, st.S, st.C, fn, entry.keep)
                if entry.kind == "return":
                    return res
                st.L, st.S = res
                st.kw = entry.kw_names
                nxt = step_real(ctx, fn, code, entry.break_index, st)
            if isinstance(nxt, _Return):
                return nxt.value
            offset = insts[nxt].offset
    except BaseException:
        grad_state.enabled = grad0  # a grad-mode block the exception left (see NOTE [ Graph breaks ... ])
        for v in st.S:  # the outermost autocast block open across a break (NOTE [ Autocast across a break ])
            if type(v) is AutocastExit:
                v.restore()
                break
        raise


_frame_ids = {}  # code -> the number torch's logs give a frame ("0/1": frame 0, its entry 1)


def lookup(ctx, fn, code, offset, st):
    entries = ctx.cache.setdefault(code, {}).setdefault(offset, [])
    for e in entries:
        try:
            if e.guard(st.L, st.S, st.C, fn):
                return e
        except Exception:  # (a local the entry reads is not bound in this call)
            pass
    limit = (
        ctx.recompile_limit
        if ctx.recompile_limit is not None
        else min(config.recompile_limit, config.cache_size_limit)
    )
    if entries:
        frame_id = _frame_ids.setdefault(code, len(_frame_ids))
        reasons = [
            (j, e.guard_source.first_failure(st.L, st.S, st.C, fn))
            for j, e in reversed(list(enumerate(entries)))
            if hasattr(e, "guard_source")
        ]
        reason = reasons[0][1] if reasons else None
        _logging.trace(
            "recompiles",
            lambda: (
                f"Recompiling function {code.co_name} in {code.co_filename}:"
                f"{code.co_firstlineno}\n    triggered by the following guard failure(s):\n"
                + "\n".join(f"    - {frame_id}/{j}: {r}" for j, r in reasons)
            ),
        )
        if config.error_on_recompile:
            from .exc import RecompileError

            raise RecompileError(f"Recompiling function {code.co_name}: {reason}")
        if len(entries) >= limit:
            if ctx.fullgraph:
                from .exc import FailOnRecompileLimitHit

                raise FailOnRecompileLimitHit(
                    f"recompile_limit reached with fullgraph=True. Excessive "
                    f"recompilations can degrade performance due to the compilation "
                    f"overhead of each recompilation. Last reason: {reason}"
                )
            key = (code, offset)
            if key not in ctx.warned:
                ctx.warned.add(key)
                log.warning(
                    "torch._dynamo hit config.%s (%s)\n   function: %s\n   last reason: %s\n"
                    'To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
                    "To diagnose recompilation issues, see %s",
                    "recompile_limit",
                    limit,
                    f"'{code.co_name}' ({code.co_filename}:{code.co_firstlineno})",
                    f"{frame_id}/{len(entries) - 1}: {reason}",
                    "https://docs.pytorch.org/docs/main/user_guide/torch_compiler/compile/"
                    "programming_model.recompilation.html",
                )
            return None
    if stance["stance"] == "fail_on_recompile":
        raise RuntimeError(
            "Detected recompile when torch.compile stance is 'fail_on_recompile'. "
            f"filename: '{code.co_filename}', function name: '{code.co_name}', "
            f"line number: {code.co_firstlineno}"
        )
    if stance["stance"] == "eager_on_recompile" and entries:
        return None
    entry = capture(ctx, fn, code, offset, st)
    entries.append(entry)
    return entry


# -- capture -------------------------------------------------------------------------------------------------


def capture(ctx, fn, code, offset, st):
    """Capture the frame from `offset` with state `st`; see NOTE [ How capture reads a function ]."""
    from .._grad_state import state as grad_state

    insts, index_of = instructions(code)
    stop_at, reason = None, None
    grad0 = grad_state.enabled
    t0 = time.perf_counter()
    import ember

    rng0 = ember.get_rng_state()  # ops run on fake values during capture must not advance the generator
    for _ in range(64):
        out = OutputGraph(
            dynamic=ctx.dynamic,
            frame_state=ctx.frame_state.setdefault((code, offset), {}),
            code_name=code.co_name,
        )
        try:
            frame0 = _top_frame(out, fn, code, st)
        except Exception:  # a value of the state capture cannot read (e.g. an object half built)
            return Entry(_always, None, None, None, "step", None, None, [], None)
        frame0.ip = index_of[offset]
        tx = InstructionTranslator(out, frame0, stop_at, ctx.fullgraph)
        tx.frames = [frame0]
        _compile_state["compiling"] = True
        try:
            kind, value = tx.run()
            if kind == "break":
                try:
                    drain_state(tx, frame0)
                except Unsupported:  # the instruction runs on real values; capture resumes after it
                    return Entry(_always, None, None, None, "step", None, None, [], None)
            out.grad_at_end = grad_state.enabled
            break
        except Unsupported as e:
            if ctx.fullgraph:
                raise _fullgraph_error(e) from None
            if config.verbose:
                log.debug("graph break", exc_info=True)
            if stop_at is None:
                skip = break_skips_frame(
                    code, e.break_at[0], tx.generic_ctx, getattr(e, "in_generator", False)
                )
                if skip:
                    _report_skip(code, e, skip)
                    return Entry(_always, None, None, None, "skip", None, None, [], None)
            stop_at, reason = e.break_at, e
        except Exception:
            if not config.suppress_errors:
                raise
            _wont_convert(code)
            return Entry(_always, None, None, None, "step", None, None, [], None)
        finally:
            _compile_state["compiling"] = False
            for ac in reversed(tx.autocast_entered):  # (a capture that stopped inside an autocast block)
                ac.__exit__(None, None, None)
            for ac in reversed(tx.autocast_left):  # (blocks open before it, which it left: open again)
                _reenter(ac)
            grad_state.enabled = grad0
            ember.set_rng_state(rng0)
    else:
        return Entry(_always, None, None, None, "step", None, None, [], None)
    from .exc import BackendCompilerFailed

    try:
        entry = _finish(ctx, fn, code, out, frame0, kind, value, reason)
    except Unsupported:
        # the state at the break cannot be rebuilt: this instruction runs on real values, and capture
        # resumes after it
        return Entry(_always, None, None, None, "step", None, None, [], None)
    except BackendCompilerFailed:
        if not config.suppress_errors:
            raise
        _wont_convert(code)  # config.suppress_errors: the frame runs eagerly, as torch's does
        return Entry(_always, None, None, None, "skip", None, None, [], None)
    finally:
        grad_state.enabled = grad0
    entry.capture_time = time.perf_counter() - t0
    return entry


def _reenter(ac):
    """Undo a capture's leaving of a block that was open before it (the real `autocast` it had entered)."""
    from ..amp import autocast_mode as am

    am.set_autocast_enabled(ac.device, ac._enabled)
    am.set_autocast_dtype(ac.device, ac.fast_dtype)
    am.autocast_increment_nesting()
    am.set_autocast_cache_enabled(ac._cache_enabled)


# NOTE [ Autocast across a break ]
# A break inside `with torch.autocast(...)` (or `torch.amp.autocast`, `torch.cpu.amp.autocast`) splits the
# block as torch 2.13 splits it: the graph before the break leaves the block (an `_exit_autocast` node per
# block open in the top frame, added by `_finish`), the rebuild code enters it again for real (the stack
# slot of the block's `__exit__` becomes an `AutocastExit`, which enters a real `autocast` when made), the
# break instruction runs in Python under autocast, and the capture after it lifts the `AutocastExit` back
# to the open block, guarded on its arguments and on the state leaving it restores. That capture's ops run
# under the real autocast the `AutocastExit` entered (the graph needs no enter node: the state is already
# on when it runs), and leaving the block is an `_exit_resumed_autocast` node (what `autocast.__exit__`
# does, the state to restore as constants). A block still open at the next break passes through as the
# same `AutocastExit`. A graph that only enters and leaves the block is still a graph, as torch counts it.
# Where torch gives the frame up (a break in a loop, a try block, under an inlined user context manager;
# NOTE [ When a break skips the frame ] in symbolic_convert.py) so does ember; with `fullgraph=True` the
# break is an error. If the frame raises while a block is open across a break, `run_frame` restores the
# state from before the outermost such block, as CPython's unwinding of the `with` would.


def _wont_convert(code):
    """torch's warning when `config.suppress_errors` swallows a capture or backend error."""
    log.warning(
        "WON'T CONVERT %s %s line %s \ndue to: \n%s",
        code.co_name,
        code.co_filename,
        code.co_firstlineno,
        __import__("traceback").format_exc(),
    )


def _always(L, S, C, F):
    return True


def _top_frame(out, fn, code, st):
    lazy = {k: _Lazy(v, f"L[{k!r}]") for k, v in st.L.items()}
    L = _LazyLocals(out, lazy)
    out.lazy_locals = L
    cells = {}
    for name, cell in st.C.items():
        c = cells[name] = CellVariable()
        c.real, c.real_source = cell, f"C[{name!r}]"
    f = Frame(None, code, fn.__globals__, out.k(fn.__globals__), L, cells)
    f.stack = [out.lift(v, f"S[{i}]") for i, v in enumerate(st.S)]
    f.kw_names = st.kw
    f.initial_locals = list(st.L)
    return f


def _finish(ctx, fn, code, out, frame0, kind, value, reason):
    L = frame0.locals
    if kind == "break":  # the graph leaves the autocast blocks open at the break; the rebuild code
        # enters them again (NOTE [ Autocast across a break ])
        from .output_graph import _exit_autocast

        for block in reversed(out.tx.autocast_open):
            out.graph.call_function(_exit_autocast, (block.node,)).meta["impure"] = True
    # the state: live locals (unread ones are passed through by source), stack, cells written
    state_vars = [v for v in dict.values(L) if type(v) is not _Lazy]
    if kind == "return":
        state_vars = [value]
    else:
        state_vars += frame0.stack
    dirty = {n: c for n, c in frame0.cells.items() if getattr(c, "dirty", False)}
    state_vars += [c.contents for c in dirty.values()]
    state_vars += out.mutated
    state_vars += [v for _, _, v in out.attr_stores.values()]
    outputs = out.graph_outputs(state_vars)
    out_index = {id(p): i for i, p in enumerate(outputs)}
    gm = out.finish(outputs)
    cells_made, fresh = {}, []
    lines = []
    if out.grad_only:
        from .output_graph import _set_grad_enabled

        lines.append(f"{out.k(_set_grad_enabled)}({out.grad_at_end!r})")
    if kind == "return":
        result = out.rebuild_expr(value, out_index, cells_made, fresh)
    else:
        # locals capture did not touch pass through as they are (whatever this call's frame holds)
        loc = [
            f"{k!r}: {out.rebuild_expr(v, out_index, cells_made, fresh)}"
            for k, v in dict.items(L)
            if type(v) is not _Lazy
        ]
        gone = [k for k in frame0.initial_locals if k not in L]
        stack = [out.rebuild_expr(v, out_index, cells_made, fresh) for v in frame0.stack]
        lines.append("R = dict(L)")
        lines += [f"del R[{k!r}]" for k in gone]
        result = "{**R, " + ", ".join(loc) + "}, [" + ", ".join(stack) + "]"
    cell_lines = [
        f"C[{n!r}].cell_contents = {out.rebuild_expr(c.contents, out_index, cells_made, fresh)}"
        for n, c in dirty.items()
        if getattr(c, "real", None) is not None
    ]
    if kind == "break":  # cells made inside the region (MAKE_CELL) become real cells of the frame
        cell_lines += [
            f"C[{n!r}] = {out._cell_expr(c, None, cells_made, fresh, out_index)}"
            for n, c in frame0.cells.items()
            if getattr(c, "real", None) is None
        ]
    # cells and objects made inside the region: all made first, then filled (they may refer to each other)
    lines += [f"{name} = {make}" for name, make, _ in fresh]
    lines += [line for _, _, fill in fresh for line in fill]
    lines += cell_lines
    lines += out.side_effect_lines(out_index, cells_made, fresh)
    src = (
        "def ___rebuild(O, L, S, C, F, K):\n"
        + "".join(f"    {ln}\n" for ln in lines)
        + f"    return {result}\n"
    )
    g = {"K": out.keep}
    exec(compile(src, "<rebuild>", "exec"), g)
    rebuild = g["___rebuild"]
    read_src = (
        "def ___inputs(L, S, C, F):\n    return (" + "".join(f"{s}, " for _, s in out.inputs_used) + ")\n"
        if gm is not None
        else None
    )
    read_inputs = None
    graph_fn = None
    if gm is not None:
        g2 = {"K": out.keep}
        exec(compile(read_src, "<inputs>", "exec"), g2)
        read_inputs = g2["___inputs"]
        example_inputs = [n.meta["example_value"] for n, _ in out.inputs_used]
        graph_fn = _call_backend(ctx, gm, example_inputs)
    guard = out.guards.compile()
    break_index = frame0.ip if kind == "break" else None
    entry = Entry(
        guard, graph_fn, read_inputs, rebuild, kind, break_index, frame0.kw_names, out.keep, reason, gm
    )
    entry.guard_source = out.guards
    _report(ctx, code, out, gm, reason, kind, frame0)
    return entry


def _call_backend(ctx, gm, example_inputs):
    from .exc import BackendCompilerFailed

    try:
        compiled = ctx.backend(gm, example_inputs)
    except Exception as e:
        raise BackendCompilerFailed(ctx.backend_name, e) from e
    for obs in _observers:
        obs.on_graph(gm, example_inputs)
    return compiled


def _report(ctx, code, out, gm, reason, kind, frame0):
    where = f"{code.co_name} {code.co_filename}:{code.co_firstlineno}"
    if gm is not None:
        _logging.trace("graph_code", lambda: f"TRACED GRAPH\n ===== __compiled_fn =====\n{gm.code}")
        _logging.debug_dump(gm, where)
    _logging.trace("guards", lambda: "GUARDS:\n" + "\n".join(f"  {e}" for e in out.guards.exprs))
    if kind == "break":
        _logging.trace(
            "graph_breaks",
            lambda: f"Graph break in user code at {reason.user_line}\nGraph Break Reason: {reason.msg}",
        )
        if gm is not None:  # (see NOTE [ What explain counts ] in explain.py)
            for obs in _observers:
                obs.on_break(reason.msg, getattr(reason, "user_stack", None) or [])
    for obs in _observers:
        obs.on_guards(list(out.guards.exprs))


def _report_skip(code, e, why):
    _logging.trace(
        "graph_breaks",
        lambda: f"Graph break in user code at {e.user_line}\nGraph Break Reason: Failed to handle graph "
        f"break gracefully. Skipping the function and falling back to eager ({why}). Graph break "
        f"encountered:\n\n{e.msg}",
    )


def steppable(code):
    """Whether `run_eagerly` can run this frame from its start: every opcode one it runs (exception
    handlers included, NOTE [ Exceptions on real values ]), and nothing that reads its own frame
    (zero-argument `super()`, whose `__class__` cell and first argument CPython finds in the calling
    frame)."""
    got = _STEPPABLE.get(code)
    if got is None:
        names = {i.opname for i in instructions(code)[0]}
        got = _STEPPABLE[code] = (
            names <= CONCRETE_OPS
            and not code.co_flags & (0x20 | 0x80 | 0x100 | 0x200)
            and "__class__" not in code.co_freevars
            and not {"locals", "vars", "_getframe", "currentframe"} & set(code.co_names)
        )
    return got


_STEPPABLE = {}


def _fullgraph_error(e):
    line = e.user_line or ""
    src = ""
    try:
        import linecache

        file, lineno = line.split('"')[1], int(line.split("line ")[1].split(",")[0])
        src = "\n    " + linecache.getline(file, lineno).strip()
    except Exception:
        pass
    err = Unsupported(
        f"{e.msg}\n\nfrom user code:\n   {line}{src}\n\nSet TORCHDYNAMO_VERBOSE=1 for the "
        "internal stack trace (please do this especially if you're reporting a bug to PyTorch). "
        'For even more developer context, set TORCH_LOGS="+dynamo"\n'
    )
    err.user_line = e.user_line
    return err


# -- the break instruction, run on real values ---------------------------------------------------------------

# the opcodes `run_instruction` runs (a frame using any other is not captured), the exception handlers'
# included (NOTE [ Exceptions on real values ])
CONCRETE_OPS = (
    frozenset(
        """
BEFORE_WITH SETUP_WITH BINARY_OP BINARY_SLICE BINARY_SUBSCR BUILD_CONST_KEY_MAP BUILD_LIST BUILD_MAP BUILD_SET
BUILD_SLICE BUILD_STRING BUILD_TUPLE CALL CALL_FUNCTION CALL_FUNCTION_EX CALL_FUNCTION_KW CALL_INTRINSIC_1
CALL_METHOD COMPARE_OP CONTAINS_OP COPY COPY_FREE_VARS DELETE_ATTR DELETE_FAST DELETE_SUBSCR DICT_MERGE
DICT_UPDATE DUP_TOP DUP_TOP_TWO END_FOR EXTENDED_ARG FORMAT_VALUE FOR_ITER GET_ITER GET_LEN IMPORT_FROM
IMPORT_NAME IS_OP JUMP JUMP_ABSOLUTE JUMP_BACKWARD JUMP_BACKWARD_NO_INTERRUPT JUMP_FORWARD
JUMP_IF_FALSE_OR_POP
JUMP_IF_TRUE_OR_POP KW_NAMES LIST_APPEND LIST_EXTEND LIST_TO_TUPLE LOAD_ASSERTION_ERROR LOAD_ATTR
LOAD_CLASSDEREF LOAD_CLOSURE LOAD_CONST LOAD_DEREF LOAD_FAST LOAD_FAST_AND_CLEAR LOAD_FAST_CHECK LOAD_GLOBAL
LOAD_METHOD MAKE_CELL MAKE_FUNCTION MAP_ADD NOP POP_BLOCK POP_TOP PRECALL PUSH_NULL RAISE_VARARGS RESUME
RETURN_CONST RETURN_VALUE ROT_FOUR ROT_THREE ROT_TWO SETUP_LOOP SET_ADD SET_UPDATE STORE_ATTR STORE_DEREF
STORE_FAST STORE_GLOBAL STORE_SLICE STORE_SUBSCR SWAP UNARY_INVERT UNARY_NEGATIVE UNARY_NOT UNARY_POSITIVE
UNPACK_EX UNPACK_SEQUENCE CACHE PUSH_EXC_INFO WITH_EXCEPT_START RERAISE POP_EXCEPT CHECK_EXC_MATCH
SETUP_FINALLY JUMP_IF_NOT_EXC_MATCH
""".split()
    )
    | {
        p + s
        for p in ("POP_JUMP_IF_", "POP_JUMP_FORWARD_IF_", "POP_JUMP_BACKWARD_IF_")
        for s in ("TRUE", "FALSE", "NONE", "NOT_NONE")
    }
    | {p + s for p in ("BINARY_", "INPLACE_") for s in _OLD_BINARY}
)


class _Return:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def run_eagerly(ctx, fn, code, index, st):
    """The rest of the frame on real values, one instruction at a time (past the recompile limit)."""
    while True:
        nxt = step_real(ctx, fn, code, index, st)
        if isinstance(nxt, _Return):
            return nxt.value
        index = nxt


def _call(ctx, f, args, kwargs):
    if f is NULL:
        raise RuntimeError("internal error: call of NULL")
    if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType):
        from ..nn import Module

        if f.__func__ is Module._call_impl and not _has_hooks(f.__self__):
            f = f.__self__
        elif _user_function(f.__func__):
            return _call(ctx, f.__func__, [f.__self__, *args], kwargs)
    if _is_module(f) and not _has_hooks(f):
        fwd = f.__dict__.get("forward") or type(f).forward
        if isinstance(fwd, types.FunctionType) and _user_function(fwd):
            return _call(ctx, fwd, [f, *args], kwargs)
    if isinstance(f, types.FunctionType) and _user_function(f):
        if getattr(f, "_dynamo_disable", False):
            return f(*args, **kwargs)
        if _library_frame(f):
            # torch skips the frames of its own Python (torch.nn included) when they are not inlined
            # (trace_rules.check): the frame runs as it is, the user frames it calls are caught
            if not steppable(f.__code__) or not _reaches_user_code(args, kwargs):
                return f(*args, **kwargs)
            L, C = bind_frame(f, args, kwargs)
            return run_eagerly(ctx, f, f.__code__, 0, FrameState(L, [], C))
        wrapped = ctx.callees.get(f)
        if wrapped is None:
            wrapped = ctx.callees[f] = functools.partial(run_frame, ctx, f)
        return wrapped(args, kwargs)
    return f(*args, **kwargs)


def _is_module(f):
    from ..nn import Module

    return isinstance(f, Module)


def _has_hooks(m):
    from ..nn.modules import _hooks as H

    return bool(
        m._forward_hooks
        or m._forward_pre_hooks
        or m._backward_hooks
        or m._backward_pre_hooks
        or H._global_forward_hooks
        or H._global_forward_pre_hooks
        or H._global_backward_hooks
        or H._global_backward_pre_hooks
    )


def _reaches_user_code(args, kwargs):
    """Whether a library frame called with these arguments can call user code: a user function or a
    module with a user-defined class, a hook or a user function attribute somewhere below it. Where it
    cannot, it runs natively (stepping it would only cost time: there is nothing in it to catch)."""
    from ..nn import Module

    for a in (*args, *kwargs.values()):
        if isinstance(a, (types.FunctionType, types.MethodType)):
            inner = getattr(a, "__func__", a)
            if isinstance(inner, types.FunctionType) and not _library_frame(inner):
                return True
        elif isinstance(a, Module):
            for m in a.modules():
                if _has_hooks(m) or not type(m).__module__.startswith("ember."):
                    return True
                for v in m.__dict__.values():
                    if isinstance(v, types.FunctionType) and not _library_frame(v):
                        return True
    return False


def _library_frame(f):
    import os

    return f.__code__.co_filename.startswith(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_function(f):
    import os

    fname = f.__code__.co_filename
    # ember's own Python is what torch has in C++ (it runs eagerly), except torch.nn's Python (modules and
    # functional), which Dynamo follows in torch too
    ember_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if fname.startswith(ember_dir):
        return fname.startswith(os.path.join(ember_dir, "nn", ""))
    return not (fname.startswith(sys.prefix) or fname.startswith("<frozen"))


def step_real(ctx, fn, code, index, st):
    """`run_instruction`, and an exception it raises taken to the frame's handler as CPython would
    (3.11+: the exception table; see NOTE [ Exceptions on real values ])."""
    try:
        return run_instruction(ctx, fn, code, index, st)
    except Exception as exc:
        if PY < (3, 11):
            return _unwind_310(st, exc)
        insts, index_of = instructions(code)
        offset = insts[index].offset
        for e in _exception_table(code):
            if e.start <= offset < e.end:
                break
        else:
            raise
        del st.S[e.depth :]
        if e.lasti:
            st.S.append(offset)
        st.S.append(exc)
        return index_of[e.target]


def _unwind_310(st, exc):
    """3.10: the handler of the innermost SETUP_FINALLY/SETUP_WITH block, as CPython's unwinding does."""
    while st.blocks:
        target, level, is_handler = st.blocks.pop()
        if is_handler:  # leaving an except block: the exception it handled is dropped with it
            del st.S[level:]
            if st.handling:
                st.handling.pop()
            continue
        del st.S[level:]
        st.blocks.append((None, len(st.S), True))
        prev = st.handling[-1] if st.handling else None
        st.S += [getattr(prev, "__traceback__", None), prev, type(prev) if prev is not None else None]
        st.S += [exc.__traceback__, exc, type(exc)]
        st.handling.append(exc)
        return target
    raise exc


# NOTE [ Exceptions on real values ]
# A frame stepped one instruction at a time (after a break, or a frame given up at a break) may raise
# inside a try or with block. On 3.11+ the exception table says where CPython would go: the stack is cut
# to the handler's depth, the exception pushed, and the handler's bytecode (PUSH_EXC_INFO,
# CHECK_EXC_MATCH, WITH_EXCEPT_START, POP_EXCEPT, RERAISE) runs here like any other. On 3.10 the state
# keeps CPython's block stack (SETUP_FINALLY / SETUP_WITH push, POP_BLOCK / POP_EXCEPT pop) and
# `_unwind_310` does what ceval's unwinding does. A resume point is never inside a try block (a break
# there gives the frame up), so the blocks pushed since it are all the blocks there are, except a `with`
# entered before the break (as before: its __exit__ runs on the normal path only).
_TABLES = {}


def _exception_table(code):
    got = _TABLES.get(code)
    if got is None:
        import dis

        got = _TABLES[code] = list(dis.Bytecode(code).exception_entries)
    return got


def run_instruction(ctx, fn, code, index, st):
    """Run instruction `index` on the real state; the index of the next one, or `_Return`."""
    insts, index_of = instructions(code)
    inst = insts[index]
    S, L, C = st.S, st.L, st.C
    op = inst.opname
    nxt = index + 1
    g = fn.__globals__

    def pop(n=1):
        out = S[-n:]
        del S[-n:]
        return out

    if op in ("CALL", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW"):
        kw = {}
        if op == "CALL_FUNCTION_KW":
            names = S.pop()
        else:
            names, st.kw = st.kw or (), None
        args = pop(inst.arg) if inst.arg else []
        if names:
            kw = dict(zip(names, args[len(args) - len(names) :]))
            args = args[: len(args) - len(names)]
        if op in ("CALL_FUNCTION", "CALL_FUNCTION_KW"):
            f = S.pop()
        else:
            a, b = S.pop(), S.pop()
            f, args = (a, args) if b is NULL else (b, [a] + args)
        S.append(_call(ctx, f, args, kw))
    elif op == "CALL_FUNCTION_EX":
        kw = S.pop() if inst.arg & 1 else {}
        args, f = S.pop(), S.pop()
        if PY >= (3, 11) and S and S[-1] is NULL:
            S.pop()
        S.append(_call(ctx, f, list(args), dict(kw)))
    elif op.startswith(("POP_JUMP", "JUMP_IF")) and op != "JUMP_IF_NOT_EXC_MATCH":
        v = S[-1] if op.startswith("JUMP_IF") else S.pop()
        if op.endswith("_NOT_NONE"):
            cond = v is not None
        elif op.endswith("_NONE"):
            cond = v is None
        elif op.endswith("TRUE") or op.endswith("TRUE_OR_POP"):
            cond = bool(v)
        else:
            cond = not bool(v)
        if cond:
            nxt = index_of[inst.argval]
        elif op.startswith("JUMP_IF"):
            S.pop()
    elif op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP"):
        nxt = index_of[inst.argval]
    elif op == "FOR_ITER":
        try:
            S.append(next(S[-1]))
        except StopIteration:
            S.pop()
            nxt = index_of[inst.argval]
            if PY >= (3, 12) and insts[nxt].opname == "END_FOR":
                nxt += 1
    elif op == "GET_ITER":
        S.append(iter(S.pop()))
    elif op in ("RETURN_VALUE", "RETURN_CONST"):
        return _Return(inst.argval if op == "RETURN_CONST" else S.pop())
    elif op == "LOAD_CONST":
        S.append(inst.argval)
    elif op in ("LOAD_FAST", "LOAD_FAST_CHECK"):
        if inst.argval not in L:
            raise UnboundLocalError(
                f"cannot access local variable {inst.argval!r} where it is not associated with a value"
            )
        S.append(L[inst.argval])
    elif op == "LOAD_FAST_AND_CLEAR":
        S.append(L.pop(inst.argval, NULL))
    elif op == "STORE_FAST":
        v = S.pop()
        if v is NULL:
            L.pop(inst.argval, None)
        else:
            L[inst.argval] = v
    elif op == "DELETE_FAST":
        del L[inst.argval]
    elif op == "LOAD_GLOBAL":
        if PY >= (3, 11) and inst.arg & 1:
            S.append(NULL)
        name = inst.argval
        if name in g:
            S.append(g[name])
        else:
            b = g.get("__builtins__", __builtins__)
            b = b if isinstance(b, dict) else b.__dict__
            if name not in b:
                raise NameError(f"name {name!r} is not defined")
            S.append(b[name])
    elif op == "STORE_GLOBAL":
        g[inst.argval] = S.pop()
    elif op == "LOAD_ATTR":
        obj = S.pop()
        if PY >= (3, 12) and inst.arg & 1:
            S.append(NULL)
        S.append(getattr(obj, inst.argval))
    elif op == "LOAD_METHOD":
        obj = S.pop()
        S.append(NULL)
        S.append(getattr(obj, inst.argval))
    elif op == "STORE_ATTR":
        obj, v = S.pop(), S.pop()
        setattr(obj, inst.argval, v)
    elif op == "DELETE_ATTR":
        delattr(S.pop(), inst.argval)
    elif op == "MAKE_CELL":
        C[inst.argval] = types.CellType(L.pop(inst.argval)) if inst.argval in L else types.CellType()
    elif op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
        S.append(C[inst.argval].cell_contents)
    elif op == "STORE_DEREF":
        C[inst.argval].cell_contents = S.pop()
    elif op == "LOAD_CLOSURE":
        if inst.argval not in C:
            C[inst.argval] = types.CellType()
        S.append(C[inst.argval])
    elif op == "POP_BLOCK":  # (3.10)
        if st.blocks:
            st.blocks.pop()
    elif op == "SETUP_FINALLY":  # (3.10)
        st.blocks.append((index_of[inst.argval], len(S), False))
    elif op == "JUMP_IF_NOT_EXC_MATCH":  # (3.10)
        cls, exc_type = S.pop(), S.pop()
        if not issubclass(exc_type, cls):
            nxt = index_of[inst.argval]
    elif op in ("RESUME", "NOP", "PRECALL", "COPY_FREE_VARS", "EXTENDED_ARG", "SETUP_LOOP"):
        pass
    elif op == "KW_NAMES":
        st.kw = inst.argval if isinstance(inst.argval, tuple) else code.co_consts[inst.arg]
    elif op == "PUSH_NULL":
        S.append(NULL)
    elif op == "POP_TOP":
        S.pop()
    elif op == "COPY":
        S.append(S[-inst.arg])
    elif op == "SWAP":
        S[-1], S[-inst.arg] = S[-inst.arg], S[-1]
    elif op == "ROT_TWO":
        S[-1], S[-2] = S[-2], S[-1]
    elif op == "ROT_THREE":
        S[-3:] = [S[-1], S[-3], S[-2]]
    elif op == "ROT_FOUR":
        S[-4:] = [S[-1], S[-4], S[-3], S[-2]]
    elif op == "DUP_TOP":
        S.append(S[-1])
    elif op == "DUP_TOP_TWO":
        S.extend(S[-2:])
    elif op == "BINARY_OP":
        b, a = S.pop(), S.pop()
        S.append(_BINOPS[inst.argrepr](a, b))
    elif op.startswith(("BINARY_", "INPLACE_")) and op.split("_", 1)[1] in _OLD_BINARY:
        sym = _OLD_BINARY[op.split("_", 1)[1]]
        b, a = S.pop(), S.pop()
        S.append((_INPLACE[sym] if op.startswith("INPLACE") else _BINOPS[sym])(a, b))
    elif op == "COMPARE_OP":
        b, a = S.pop(), S.pop()
        S.append(_COMPARE[inst.argval if isinstance(inst.argval, str) else inst.argrepr](a, b))
    elif op == "IS_OP":
        b, a = S.pop(), S.pop()
        S.append((a is b) != bool(inst.arg))
    elif op == "CONTAINS_OP":
        b, a = S.pop(), S.pop()
        S.append((a in b) != bool(inst.arg))
    elif op == "UNARY_NEGATIVE":
        S.append(-S.pop())
    elif op == "UNARY_POSITIVE":
        S.append(+S.pop())
    elif op == "UNARY_INVERT":
        S.append(~S.pop())
    elif op == "UNARY_NOT":
        S.append(not S.pop())
    elif op == "BINARY_SUBSCR":
        k, o = S.pop(), S.pop()
        S.append(o[k])
    elif op == "BINARY_SLICE":
        stop, start, o = S.pop(), S.pop(), S.pop()
        S.append(o[start:stop])
    elif op == "STORE_SUBSCR":
        k, o, v = S.pop(), S.pop(), S.pop()
        o[k] = v
    elif op == "STORE_SLICE":
        stop, start, o, v = S.pop(), S.pop(), S.pop(), S.pop()
        o[start:stop] = v
    elif op == "DELETE_SUBSCR":
        k, o = S.pop(), S.pop()
        del o[k]
    elif op == "BUILD_TUPLE":
        S.append(tuple(pop(inst.arg)) if inst.arg else ())
    elif op == "BUILD_LIST":
        S.append(list(pop(inst.arg)) if inst.arg else [])
    elif op == "BUILD_SET":
        S.append(set(pop(inst.arg)) if inst.arg else set())
    elif op == "BUILD_MAP":
        items = pop(2 * inst.arg) if inst.arg else []
        S.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
    elif op == "BUILD_CONST_KEY_MAP":
        keys = S.pop()
        S.append(dict(zip(keys, pop(inst.arg))))
    elif op == "BUILD_SLICE":
        S.append(slice(*pop(inst.arg)))
    elif op == "BUILD_STRING":
        S.append("".join(pop(inst.arg)) if inst.arg else "")
    elif op == "FORMAT_VALUE":
        spec = S.pop() if inst.arg & 0x04 else ""
        v = S.pop()
        conv = inst.arg & 0x03
        v = {1: str, 2: repr, 3: ascii}[conv](v) if conv else v
        S.append(format(v, spec))
    elif op == "LIST_APPEND":
        v = S.pop()
        S[-inst.arg].append(v)
    elif op == "SET_ADD":
        v = S.pop()
        S[-inst.arg].add(v)
    elif op == "LIST_EXTEND":
        v = S.pop()
        S[-inst.arg].extend(v)
    elif op == "SET_UPDATE":
        v = S.pop()
        S[-inst.arg].update(v)
    elif op == "LIST_TO_TUPLE":
        S.append(tuple(S.pop()))
    elif op == "MAP_ADD":
        v, k = S.pop(), S.pop()
        S[-inst.arg][k] = v
    elif op in ("DICT_UPDATE", "DICT_MERGE"):
        v = S.pop()
        S[-inst.arg].update(v)
    elif op == "UNPACK_SEQUENCE":
        items = list(S.pop())
        if len(items) != inst.arg:
            raise ValueError(
                f"too many values to unpack (expected {inst.arg})"
                if len(items) > inst.arg
                else f"not enough values to unpack (expected {inst.arg}, got {len(items)})"
            )
        S.extend(reversed(items))
    elif op == "UNPACK_EX":
        items = list(S.pop())
        before, after = inst.arg & 0xFF, inst.arg >> 8
        S.extend(
            reversed(items[:before] + [items[before : len(items) - after]] + items[len(items) - after :])
        )
    elif op == "CALL_INTRINSIC_1":
        v = S.pop()
        S.append(+v if inst.argrepr == "INTRINSIC_UNARY_POSITIVE" else tuple(v))
    elif op == "END_FOR":
        pop(2)
    elif op == "MAKE_FUNCTION":
        if PY < (3, 11):
            S.pop()
        fcode = S.pop()
        closure = S.pop() if inst.arg & 0x08 else None
        ann = S.pop() if inst.arg & 0x04 else None
        kwd = S.pop() if inst.arg & 0x02 else None
        dflt = S.pop() if inst.arg & 0x01 else None
        new = types.FunctionType(fcode, g, fcode.co_name, dflt, closure)
        new.__kwdefaults__ = kwd
        if ann:
            new.__annotations__ = dict(ann) if not isinstance(ann, tuple) else dict(zip(ann[::2], ann[1::2]))
        S.append(new)
    elif op in ("BEFORE_WITH", "SETUP_WITH"):
        mgr = S.pop()
        exit_ = type(mgr).__exit__.__get__(mgr)
        S.append(exit_)
        entered = type(mgr).__enter__(mgr)
        if op == "SETUP_WITH":
            st.blocks.append((index_of[inst.argval], len(S), False))
        S.append(entered)
    elif op == "RAISE_VARARGS":
        args = pop(inst.arg) if inst.arg else []
        if not args and st.handling:
            raise st.handling[-1]
        if not args:
            raise RuntimeError("No active exception to reraise")
        exc = args[0]
        if len(args) == 2:
            raise exc from args[1]
        raise exc
    elif op == "LOAD_ASSERTION_ERROR":
        S.append(AssertionError)
    elif op == "PUSH_EXC_INFO":
        exc = S.pop()
        S.append(st.handling[-1] if st.handling else None)
        S.append(exc)
        st.handling.append(exc)
    elif op == "POP_EXCEPT":
        if PY < (3, 11):  # the handler's block, and the exception handled before it (type, value, tb)
            if st.blocks:
                st.blocks.pop()
            pop(3)
        else:
            S.pop()
        if st.handling:
            st.handling.pop()
    elif op == "CHECK_EXC_MATCH":
        cls = S.pop()
        S.append(isinstance(S[-1], cls))
    elif op == "RERAISE":
        exc = S.pop() if PY >= (3, 11) else pop(3)[1]  # (3.10: traceback, value, type)
        raise exc
    elif op == "WITH_EXCEPT_START":
        if PY >= (3, 11):
            exc = S[-1]
            S.append(S[-4](type(exc), exc, exc.__traceback__))
        else:
            S.append(S[-7](S[-1], S[-2], S[-3]))
    elif op == "IMPORT_NAME":
        fromlist, level = S.pop(), S.pop()
        S.append(__import__(inst.argval, g, None, fromlist, level))
    elif op == "IMPORT_FROM":
        S.append(getattr(S[-1], inst.argval))
    elif op == "GET_LEN":
        S.append(len(S[-1]))
    else:
        raise RuntimeError(f"ember.compile: cannot run bytecode {op} outside a graph")
    return nxt


_unused = (operator,)
