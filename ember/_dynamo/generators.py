"""Generators, `yield from`, `contextlib.contextmanager` and exceptions raised and caught in the region.

NOTE [ Generators in capture ]
Torch inlines a generator the region creates and consumes (variables/functions.py,
`LocalGeneratorObjectVariable`): calling a generator function (or evaluating a generator expression)
makes a frame that is *not run*; each `next` (a `FOR_ITER` over it, `list(gen)`, `sum(gen)`, `next(gen)`,
`yield from gen`) interprets that frame's bytecode until its next `YIELD_VALUE` or its return, so the
generator's ops enter the graph interleaved with the consumer's, in the order CPython would run them.
The frame keeps its locals and stack between resumptions (a `GeneratorVariable` holds it).

A generator is only ever interpreted, never resumed on real values: at a break, the generators alive in
the frame's state are run to their end and rebuilt as iterators over what they yielded (torch does the
same); a break inside a generator gives the frame up, as in torch; and a generator function is never
compiled as a top frame (torch skips those too).

`@contextlib.contextmanager` functions are generators behind `_GeneratorContextManager`: `with cm(...)`
resumes the generator once on entry (its yielded value is what `as` binds) and once on exit, which
must end it. Torch models them as `GenericContextWrappingVariable`s; as there, a break while one is
entered in the top frame gives the frame up (NOTE [ When a break skips the frame ]).

NOTE [ Exceptions inside the region ]
A `raise` capture can decide (an exception class or instance built from constants) unwinds like
CPython's: the frame's exception table (3.11+) or its block stack (3.10, SETUP_FINALLY) names the
handler; the stack is cut to the handler's depth and the exception pushed, and the handler's bytecode
(`PUSH_EXC_INFO`, `CHECK_EXC_MATCH`/`JUMP_IF_NOT_EXC_MATCH`, `POP_EXCEPT`, `RERAISE`) is interpreted
like any other. An exception no frame of the region handles is a graph break (CPython raises it when
the code runs). Exceptions raised by ops on tensors are not modelled: capture does not run them.
"""

from __future__ import annotations

import contextlib
import dis

from .exc import Unsupported
from .variables import ConstantVariable, ListIteratorVariable, ObjectVariable, VariableTracker

YIELD = object()  # what a handler returns when the frame yields


@contextlib.contextmanager
def _probe():
    yield


_CM_HELPER_CODE = _probe.__code__  # the code of every `contextmanager`-decorated function's helper


class GeneratorVariable(VariableTracker):
    """A generator object made in the region: the frame of its function, not yet (or partly) run."""

    def __init__(self, frame):
        self.frame, self.started, self.done = frame, False, False

    def python_type(self):
        import types

        return types.GeneratorType


class GeneratorCMVariable(VariableTracker):
    """`cm(...)` of a `@contextlib.contextmanager` function: its generator."""

    def __init__(self, gen):
        self.gen = gen


class RaisedException(Unsupported):
    """A `raise` in the region, looking for a handler in the frames capture is interpreting."""

    def __init__(self, exc):
        super().__init__(f"an exception raised in the region and not caught there ({exc!r})")
        self.exc = exc  # the exception instance


def is_contextmanager(fn):
    return getattr(fn, "__code__", None) is _CM_HELPER_CODE and getattr(fn, "__wrapped__", None) is not None


# -- running a generator's frame -----------------------------------------------------------------------------


def gen_resume(self, gen):
    """Run `gen` to its next yield: ("yield", value) or ("return", value)."""
    from .symbolic_convert import MAX_INLINE_DEPTH, PY

    if isinstance(gen, ListIteratorVariable):
        if gen.index < len(gen.items):
            gen.index += 1
            return "yield", gen.items[gen.index - 1]
        return "return", ConstantVariable(None)
    if not isinstance(gen, GeneratorVariable):
        raise Unsupported(f"iteration over a {type(gen).__name__}")
    if gen.done:
        return "return", ConstantVariable(None)
    f = gen.frame
    if gen.started or PY < (3, 11):  # the value `send` gives the paused yield (3.10: GEN_START pops one)
        f.push(ConstantVariable(None))
    gen.started = True
    if len(self.frames) > MAX_INLINE_DEPTH:
        raise Unsupported("inlining too deep (recursion?)")
    self.frames.append(f)
    try:
        while True:
            r = self.step(f)
            if r is YIELD:
                return "yield", f.yielded
            if r:
                gen.done = True
                return "return", f.return_value
    except Unsupported as e:
        if e.user_line is None:
            e.user_line = f.user_line()
            e.user_stack = self.user_stack()
        e.in_generator = True  # torch cannot resume after a break inside a generator: the frame is skipped
        raise
    finally:
        self.frames.pop()


def drain_state(self, frame):
    """At a break, generators alive in the frame's locals or stack run to their end now, and are rebuilt
    as iterators over what they yielded (as torch reconstructs a local generator)."""
    done = {}

    def fix(v):
        if isinstance(v, GeneratorVariable):
            if id(v) not in done:
                done[id(v)] = ListIteratorVariable(gen_drain(self, v))
            return done[id(v)]
        return v

    frame.stack[:] = [fix(v) for v in frame.stack]
    for k, v in list(dict.items(frame.locals)):
        if isinstance(v, GeneratorVariable):
            dict.__setitem__(frame.locals, k, fix(v))


def gen_drain(self, gen):
    out = []
    while True:
        kind, v = gen_resume(self, gen)
        if kind == "return":
            return out
        out.append(v)


# -- the opcodes ---------------------------------------------------------------------------------------------


def RETURN_GENERATOR(self, f, inst):
    f.push(ConstantVariable(None))  # (popped by the POP_TOP that follows: the first send's value)


def GEN_START(self, f, inst):
    f.pop()


def YIELD_VALUE(self, f, inst):
    f.yielded = f.pop()
    return YIELD


def GET_YIELD_FROM_ITER(self, f, inst):
    v = f.pop()
    if not isinstance(v, (GeneratorVariable, ListIteratorVariable)):
        v = ListIteratorVariable(self.iterate(v))
    f.push(v)


def SEND(self, f, inst):  # 3.11, 3.12: `yield from` / `await` resume their receiver
    from .symbolic_convert import PY

    f.pop()  # the value sent (None: capture only runs generators by next())
    kind, v = gen_resume(self, f.stack[-1])
    if kind == "yield":
        f.push(v)
        return
    if PY < (3, 12):
        f.pop()
    f.push(v)
    f.jump(inst.argval)


def END_SEND(self, f, inst):  # 3.12
    del f.stack[-2]


def YIELD_FROM(self, f, inst):  # 3.10: repeats itself until the receiver returns
    f.pop()
    kind, v = gen_resume(self, f.stack[-1])
    if kind == "return":
        f.pop()
        f.push(v)
        return None
    f.ip -= 1
    f.yielded = v
    return YIELD


# -- exceptions ----------------------------------------------------------------------------------------------


def exception_value(self, v):
    """The exception instance `raise v` raises, when capture can decide it."""
    value = v.value if isinstance(v, (ObjectVariable, ConstantVariable)) else None
    if isinstance(value, type) and issubclass(value, BaseException):
        try:
            return value()
        except Exception:
            return None
    return value if isinstance(value, BaseException) else None


def unwind(self, f, exc):
    """Send `exc` to the innermost handler of frame `f` around the instruction just run: True if found."""
    from .symbolic_convert import PY

    failed = f.insts[f.ip - 1]
    if PY >= (3, 11):
        for e in _exception_entries(f.code):
            if e.start <= failed.offset < e.end:
                del f.stack[e.depth :]
                if e.lasti:
                    f.push(ConstantVariable(failed.offset))
                f.push(ObjectVariable(exc))
                f.jump(e.target)
                return True
        return False
    while f.blocks:
        kind, target, depth = f.blocks.pop()
        del f.stack[depth:]
        if kind == "except":  # an exception in a handler: the handled one is dropped first
            continue
        f.blocks.append(("except", None, len(f.stack)))
        for _ in range(3):  # the exception being handled before (none) ...
            f.push(ConstantVariable(None))
        f.push(ConstantVariable(None))  # ... then this one: traceback, value, type
        f.push(ObjectVariable(exc))
        f.push(ObjectVariable(type(exc)))
        f.jump(target)
        return True
    return False


_ENTRIES = {}


def _exception_entries(code):
    got = _ENTRIES.get(code)
    if got is None:
        got = _ENTRIES[code] = sorted(
            dis.Bytecode(code).exception_entries, key=lambda e: e.end - e.start
        )  # (innermost first)
    return got


def RAISE_VARARGS(self, f, inst):
    args = f.popn(inst.arg)
    if inst.arg == 0:
        exc = getattr(f, "handling", None)
        if exc is None:
            raise Unsupported("a bare raise capture cannot follow")
    else:
        exc = exception_value(self, args[0])
        if exc is None or inst.arg == 2:
            raise Unsupported("raise statement (the exception is raised by the code after the break)")
    raise RaisedException(exc)


def PUSH_EXC_INFO(self, f, inst):
    exc = f.pop()
    f.push(ConstantVariable(None))  # the exception handled before this one: none, inside the region
    f.push(exc)
    f.handling = exc.value


def POP_EXCEPT(self, f, inst):
    from .symbolic_convert import PY

    if PY >= (3, 11):
        f.pop()
    else:
        f.blocks.pop()
        f.popn(3)


def CHECK_EXC_MATCH(self, f, inst):
    cls = self.specialize(f.pop())
    f.push(ConstantVariable(isinstance(f.stack[-1].value, cls)))


def JUMP_IF_NOT_EXC_MATCH(self, f, inst):  # 3.10
    cls, exc_type = self.specialize(f.pop()), f.pop().value
    if not issubclass(exc_type, cls):
        f.jump(inst.argval)


def RERAISE(self, f, inst):
    from .symbolic_convert import PY

    exc = f.stack[-1].value if PY >= (3, 11) else f.stack[-2].value
    raise RaisedException(exc)


def SETUP_FINALLY(self, f, inst):  # 3.10
    f.blocks.append(("finally", inst.argval, len(f.stack)))


def POP_BLOCK(self, f, inst):  # 3.10
    if f.blocks:
        f.blocks.pop()
