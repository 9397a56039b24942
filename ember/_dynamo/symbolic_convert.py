"""The symbolic interpreter: runs a function's CPython bytecode over variables, recording tensor ops.

NOTE [ How capture reads a function ]
Dynamo does not trace by running the code (which would bake every Python decision in silently); it
interprets the bytecode itself (torch/_dynamo/symbolic_convert.py, `InstructionTranslator`), one
instruction at a time, over a stack of *variables* (variables.py) instead of values. `LOAD_FAST x` pushes
the variable lifted from the frame's input `x` (a tensor becomes a graph placeholder, an int a constant
guarded on its value); `BINARY_OP +` on two tensor variables adds an `operator.add` node to the graph;
a call to a Python function is *inlined*: a new `Frame` interprets the callee's bytecode with the
argument variables as its locals; a call to an ember op adds a node. Loops over lists, tuples, ranges,
module lists and dicts unroll because the iterator is a variable that `FOR_ITER` advances; jumps on a
constant or a guarded Python value pick one side.

When an instruction cannot be captured (a branch on a tensor's value, `.item()`, `print`, a call into C
code capture does not know), the interpreter raises `Unsupported`. The capture is then redone, stopping
just before that instruction of the top frame (for a break inside an inlined call, before the call:
torch's "restart analysis"; the callee's frame is then compiled on its own when the call runs), so the
state at the break is exact: what the graph computed, and every variable of the frame's locals and
stack. See NOTE [ Graph breaks and resume points ] in eval_frame.py for what runs next, and NOTE [ When a
break skips the frame ] below for the breaks after which torch, and so ember, does not resume.

Supported bytecode: CPython 3.10, 3.11 and 3.12 (the opcodes differ; handlers are keyed by name and the
few differences are handled where they occur). Generators, `yield from`, `contextlib.contextmanager`
and `try`/`except`/`finally` are interpreted (generators.py); coroutines are not (the frame runs
eagerly).
"""

from __future__ import annotations

import builtins
import dis
import inspect
import math
import operator
import os
import sys
import types

from . import config
from .exc import Unsupported
from .generators import GeneratorCMVariable, GeneratorVariable, RaisedException
from .output_graph import _set_grad_enabled, const_like
from .variables import (
    NULL,
    AutocastVariable,
    BaseListVariable,
    CellVariable,
    ConstantVariable,
    ContextExitVariable,
    DictVariable,
    GetAttrVariable,
    GradModeVariable,
    ListIteratorVariable,
    ListVariable,
    NNModuleVariable,
    ObjectVariable,
    RangeVariable,
    SetVariable,
    SliceVariable,
    SymNodeVariable,
    TensorVariable,
    TupleVariable,
    UserFunctionVariable,
    UserObjectVariable,
    VariableTracker,
)

PY = sys.version_info[:2]
_NN_MODULES = os.path.join("ember", "nn", "modules")
MAX_STEPS = 200_000
MAX_INLINE_DEPTH = 32

_BINOPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "@": operator.matmul,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}
_INPLACE = {
    "+": operator.iadd,
    "-": operator.isub,
    "*": operator.imul,
    "/": operator.itruediv,
    "//": operator.ifloordiv,
    "%": operator.imod,
    "**": operator.ipow,
    "@": operator.imatmul,
    "&": operator.iand,
    "|": operator.ior,
    "^": operator.ixor,
    "<<": operator.ilshift,
    ">>": operator.irshift,
}
_BINOPS.update({k + "=": v for k, v in _INPLACE.items()})
_OLD_BINARY = {
    "ADD": "+",
    "SUBTRACT": "-",
    "MULTIPLY": "*",
    "TRUE_DIVIDE": "/",
    "FLOOR_DIVIDE": "//",
    "MODULO": "%",
    "POWER": "**",
    "MATRIX_MULTIPLY": "@",
    "AND": "&",
    "OR": "|",
    "XOR": "^",
    "LSHIFT": "<<",
    "RSHIFT": ">>",
}
_COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
}
_SYM_OPS = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.truediv: "/",
    operator.pow: "**",
    operator.lt: "<",
    operator.le: "<=",
    operator.eq: "==",
    operator.ne: "!=",
    operator.gt: ">",
    operator.ge: ">=",
    operator.neg: "-",
}

# ember namespaces whose functions are ops that go into the graph as nodes
_GRAPH_MODULE_PREFIXES = (
    "ember._ops",
    "ember.nn.functional",
    "ember.functional",
    "ember.linalg",
    "ember.special",
    "ember.fft",
    "ember._tensor",
    "ember._linalg",
    "ember.nn.init",
    "ember._lobpcg",
    "ember._lowrank",
    "ember.signal",
)
_NOT_IN_GRAPH = {
    "manual_seed",
    "seed",
    "set_default_dtype",
    "set_printoptions",
    "save",
    "load",
    "use_deterministic_algorithms",
    "set_num_threads",
    "compile",
    "set_default_device",
    "set_rng_state",
    "get_rng_state",
    "initial_seed",
}
# tensor methods that need the data (a graph break, as in torch with its default config)
_DATA_METHODS = {
    "item": "Tensor.item",
    "tolist": "Tensor.tolist",
    "numpy": "Tensor.numpy",
    "__bool__": "Tensor.__bool__",
    "__int__": "Tensor.__int__",
    "__float__": "Tensor.__float__",
    "__index__": "Tensor.__index__",
    "data_ptr": "Tensor.data_ptr",
    "backward": "Tensor.backward",
    "register_hook": "Tensor.register_hook",
    "retain_grad": "Tensor.retain_grad",
    "untyped_storage": "Tensor.untyped_storage",
    "storage": "Tensor.storage",
    "requires_grad_": "Tensor.requires_grad_",
    "__repr__": "Tensor.__repr__",
    "__str__": "Tensor.__str__",
    "nonzero": "Tensor.nonzero",
    "unique": "Tensor.unique",
    "masked_select": "Tensor.masked_select",
    "share_memory_": "Tensor.share_memory_",
}
_TENSOR_CONST_ATTRS = {
    "dtype",
    "device",
    "layout",
    "ndim",
    "is_leaf",
    "requires_grad",
    "is_sparse",
    "is_quantized",
    "is_meta",
    "is_cuda",
    "is_cpu",
    "is_mps",
    "is_nested",
    "is_mkldnn",
    "is_complex_",
    "itemsize",
}


def _ember():
    import ember

    return ember


def _instructions(code):
    insts = list(dis.get_instructions(code))
    return insts, {inst.offset: i for i, inst in enumerate(insts)}


_INSTS = {}


def instructions(code):
    got = _INSTS.get(code)
    if got is None:
        got = _INSTS[code] = _instructions(code)
    return got


_FRAME_REASONS = {}
# opcodes met only on exception paths or in generators: interpreted (generators.py), never run on real values
_INTERPRETED_ONLY = frozenset(
    """PUSH_EXC_INFO POP_EXCEPT CHECK_EXC_MATCH RERAISE JUMP_IF_NOT_EXC_MATCH SETUP_FINALLY
    WITH_EXCEPT_START RETURN_GENERATOR GEN_START YIELD_VALUE GET_YIELD_FROM_ITER SEND END_SEND YIELD_FROM
    CLEANUP_THROW""".split()
)


def unsupported_frame_reason(code, top=False):
    """Why a frame cannot be interpreted at all (it then runs eagerly), or None. A top frame (one compiled
    on its own, not inlined) must also not be a generator."""
    try:
        return _FRAME_REASONS[code, top]
    except KeyError:
        reason = _FRAME_REASONS[code, top] = _frame_reason(code, top)
        return reason


def _frame_reason(code, top):
    if code.co_flags & (0x80 | 0x100 | 0x200):  # coroutine, iterable coroutine, async generator
        return "coroutine functions are not captured"
    if top and code.co_flags & 0x20:
        return "generator functions are not compiled as a frame of their own (they are inlined)"
    names = {i.opname for i in instructions(code)[0]}
    from .eval_frame import CONCRETE_OPS

    if not names <= CONCRETE_OPS | _INTERPRETED_ONLY:
        return f"bytecode {sorted(names - CONCRETE_OPS - _INTERPRETED_ONLY)[0]} is not supported"
    return None


# NOTE [ When a break skips the frame ]
# Torch compiles the graph before a break and resumes after it only where a resume function can be
# made (symbolic_convert.py, `should_compile_partial_graph` and `maybe_has_backedge`); elsewhere it gives
# the frame up ("skip frame") and CPython runs it, the frames it calls being caught on their own:
#   - a break inside a `try` block or an `except`/`finally` handler (a block that is not a `with` on a
#     context manager capture models across a break: grad mode, autocast);
#   - a break inside a generator capture is running (generators.py);
#   - a break while a context manager capture inlined (a user `__enter__`/`__exit__`) is active (a break
#     inside a grad-mode or autocast block is not one: capture resumes after it, the block still on;
#     NOTE [ Autocast across a break ] in eval_frame.py);
#   - a break at an instruction other than a call, a comparison, a conditional jump or an attribute or
#     item store (torch's `break_graph_if_unsupported` handlers and `generic_jump`);
#   - a break with a backward jump after it in the frame before its first return: a break in a loop
#     (torch's heuristic, false positives included, kept as torch has it).
# The block an instruction is in comes from the exception table (3.11+) or, on 3.10, from following the
# SETUP_FINALLY / SETUP_WITH / POP_BLOCK block stack along the jumps.

_BREAKABLE = ("CALL", "COMPARE_OP", "STORE_ATTR", "STORE_SUBSCR", "POP_JUMP_", "JUMP_IF_")
_JUMPS = frozenset(dis.opname[o] for o in dis.hasjrel + dis.hasjabs)
_BLOCKS = {}


def _handler_kind(insts, index_of, target):
    i = index_of[target]
    first = [x.opname for x in insts[i : i + 3]]
    if "WITH_EXCEPT_START" in first:
        return "with"  # the body of a with block
    if first[0] == "PUSH_EXC_INFO":
        return "try"  # the body of a try block
    return "handler"  # an except/finally handler's own cleanup, or a 3.12 comprehension's


def block_kinds(code):
    """For each instruction index: None, "with", "try" or "handler" (the innermost block it runs in)."""
    got = _BLOCKS.get(code)
    if got is not None:
        return got
    insts, index_of = instructions(code)
    kinds = [None] * len(insts)
    if PY >= (3, 11):
        for e in dis.Bytecode(code).exception_entries:
            kind = _handler_kind(insts, index_of, e.target)
            for i, inst in enumerate(insts):  # (entries nest innermost-last in the table's order)
                if e.start <= inst.offset < e.end:
                    kinds[i] = kind
    else:
        seen = {}
        work = [(0, ())]
        while work:
            i, blocks = work.pop()
            while i < len(insts) and i not in seen:
                seen[i] = blocks
                inst = insts[i]
                kinds[i] = blocks[-1] if blocks else None
                op = inst.opname
                if op in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH"):
                    handler = ("with",) if op != "SETUP_FINALLY" else ("try",)
                    work.append((index_of[inst.argval], blocks + ("handler",)))
                    blocks = blocks + handler
                elif op == "POP_BLOCK" or op == "POP_EXCEPT":
                    blocks = blocks[:-1]
                elif op in ("RETURN_VALUE", "RERAISE", "RAISE_VARARGS"):
                    break
                elif op in _JUMPS and op != "SETUP_FINALLY":
                    work.append((index_of[inst.argval], blocks))
                    if op in ("JUMP_FORWARD", "JUMP_ABSOLUTE"):
                        break
                i += 1
    _BLOCKS[code] = kinds
    return kinds


def break_skips_frame(code, index, generic_ctx=0, in_generator=False):
    """Why a break at instruction `index` of the top frame gives the frame up, or None (see the NOTE)."""
    insts, _ = instructions(code)
    if in_generator:
        return "a graph break inside a generator the region runs"
    if not insts[index].opname.startswith(_BREAKABLE):
        return f"a graph break at {insts[index].opname}, an instruction torch makes no resume point after"
    if generic_ctx:
        return "a graph break under a context manager capture inlined (GenericContextWrappingVariable)"
    if block_kinds(code)[index] in ("try", "handler"):
        return "a graph break inside a try block or an exception handler"
    here = insts[index].offset
    for inst in insts[index + 1 :]:
        if inst.opname in ("RETURN_VALUE", "RETURN_CONST"):
            break
        if inst.opname in _JUMPS and isinstance(inst.argval, int) and inst.argval < here:
            return "a graph break in a for/while loop"
    return None


class Frame:
    """One function's interpretation: its instructions, locals, cells and stack of variables."""

    def __init__(self, tx, code, f_globals, globals_src, locals_, cells, parent=None, fn_name=None):
        self.tx, self.code, self.f_globals, self.globals_src = tx, code, f_globals, globals_src
        self.insts, self.index_of = instructions(code)
        self.locals, self.cells, self.stack = locals_, cells, []
        self.parent = parent
        self.ip = 0
        self.kw_names = None
        self.lineno = code.co_firstlineno
        self.inst = None  # the instruction running (its positions mark the code in a node's stack_trace)
        self.depth = 0 if parent is None else parent.depth + 1
        self.return_value = None
        self.yielded = self.handling = None  # (a generator's last yield; the exception being handled)
        self.blocks = []  # 3.10's block stack (SETUP_FINALLY / SETUP_WITH), for exceptions raised in it

    def user_line(self, inst=None):
        lineno = self.lineno
        return f'File "{self.code.co_filename}", line {lineno}, in {self.code.co_name}'

    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        out = self.stack[-n:]
        del self.stack[-n:]
        return out

    def jump(self, offset):
        self.ip = self.index_of[offset]


class StopCapture(Exception):
    """Raised in the top frame when it reaches the instruction a restarted capture stops before."""


class InstructionTranslator:
    """One capture: interprets the top frame from one instruction, inlining calls, until it returns or stops.

    `stop_at` is (instruction index, how many times it was reached before) of the top frame: a restarted
    capture stops just before it, with the state the break instruction will run on.
    """

    def __init__(self, out, top_frame, stop_at=None, fullgraph=False, call_compiled=None):
        self.out, self.frame0, self.stop_at, self.fullgraph = out, top_frame, stop_at, fullgraph
        out.tx = self
        self.steps = 0
        self.generic_ctx = 0  # user context managers entered in the top frame and not yet exited
        self.autocast_entered = []  # real autocast objects entered by the capture (left if it stops)
        self.autocast_open = []  # AutocastVariables entered in the top frame and not yet left
        self.autocast_left = []  # real autocasts of blocks open before this capture that it left
        self.visits = {}
        self.break_index = None
        self.break_reason = None
        self.break_line = None

    # -- running ----------------------------------------------------------------------------------------

    def run(self):
        """('return', variable) or ('break', instruction index, reason); raises Unsupported to restart."""
        f = self.frame0
        while True:
            i = f.ip
            n = self.visits.get(i, 0)
            if self.stop_at is not None and self.stop_at == (i, n):
                return "break", i
            self.visits[i] = n + 1
            try:
                done = self.step(f)
            except Unsupported as e:
                if e.user_line is None:
                    e.user_line = f.user_line()
                    e.user_stack = self.user_stack()
                e.break_at = (i, n)
                raise
            if done:
                return "return", f.return_value

    def run_inlined(self, frame):
        while True:
            try:
                if self.step(frame):
                    return frame.return_value
            except Unsupported as e:
                if e.user_line is None:
                    e.user_line = frame.user_line()
                    e.user_stack = self.user_stack()
                raise

    def user_stack(self):
        """torch's `user_stack` of a break: one FrameSummary per frame, the top frame's first."""
        import traceback

        return [
            traceback.FrameSummary(f.code.co_filename, f.lineno, f.code.co_name, lookup_line=False)
            for f in self.frames
        ]

    def stack_trace(self) -> str:
        """torch's `node.meta["stack_trace"]` for a node added now: `traceback`'s format of the user's frames,
        outermost first, each with its code line (and carets under the call, from 3.11); frames in
        ember/nn/modules are left out, as torch leaves out torch/nn/modules."""
        import traceback

        summaries = []
        for f in self.frames:
            if _NN_MODULES in f.code.co_filename:
                continue
            pos = getattr(f.inst, "positions", None)
            kw = {"colno": pos.col_offset, "end_colno": pos.end_col_offset} if PY >= (3, 11) and pos else {}
            summaries.append(traceback.FrameSummary(f.code.co_filename, f.lineno, f.code.co_name,
                                                    lookup_line=False, **kw))
        return "".join(traceback.StackSummary.from_list(summaries).format())

    def step(self, f):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported("the captured region runs too many instructions (an unbounded loop?)")
        inst = f.insts[f.ip]
        f.inst = inst
        f.ip += 1
        if inst.starts_line:
            f.lineno = inst.starts_line if PY < (3, 13) else inst.line_number
        handler = getattr(self, inst.opname, None)
        if handler is None:
            raise Unsupported(f"bytecode {inst.opname} is not supported by capture")
        try:
            return handler(f, inst)
        except RaisedException as e:  # see NOTE [ Exceptions inside the region ] in generators.py
            if self.unwind(f, e.exc):
                return None
            raise

    # -- specialization and truth -----------------------------------------------------------------------

    def specialize(self, v):
        """The Python value of a variable Python code needs as a value, guarded.

        See NOTE [ Dynamic shapes ] in output_graph.py.
        """
        if isinstance(v, ConstantVariable):
            return v.value
        if isinstance(v, SymNodeVariable):
            if v.expr is None:
                raise Unsupported(
                    "a dynamic size of an intermediate tensor is used as a Python value "
                    "(specialization needs a guard capture cannot express)"
                )
            self.out.guards.add(f"({v.expr}) == {v.value!r}")
            return v.value
        if isinstance(v, TensorVariable):
            raise Unsupported(
                "data dependent: a tensor's value is used as a Python value (generic_jump / Tensor.__bool__)"
            )
        if isinstance(v, (ObjectVariable, NNModuleVariable)):
            if getattr(v, "by_type", False):  # the object itself decides: guard its identity
                self.out.guards.add(f"{v.source} is {self.out.k(v.value)}")
            return v.value
        if isinstance(v, UserObjectVariable):
            raise Unsupported(
                f"an object of {v.cls.__name__} made inside the region is used as a Python value"
            )
        if isinstance(v, BaseListVariable):
            return v.kind(self.specialize(i) for i in v.items)
        if isinstance(v, RangeVariable):
            return v.value
        if isinstance(v, SliceVariable):
            return slice(self.specialize(v.start), self.specialize(v.stop), self.specialize(v.step))
        if isinstance(v, DictVariable):
            return {k: self.specialize(x) for k, x in v.items.items()}
        raise Unsupported(f"a {type(v).__name__} is used as a Python value")

    def truth(self, v):
        if isinstance(v, TensorVariable):
            raise Unsupported("data dependent control flow: a branch on a tensor's value (generic_jump)")
        if isinstance(v, (BaseListVariable,)):
            return bool(v.items)
        if isinstance(v, DictVariable):
            return bool(v.items)
        if isinstance(v, (UserFunctionVariable, GetAttrVariable, GradModeVariable)):
            return True
        if isinstance(v, NNModuleVariable):
            if hasattr(type(v.value), "__len__"):
                self.out.guards.add(f"len({v.source}) == {len(v.value)}")
                return len(v.value) > 0
            return True
        if isinstance(v, UserObjectVariable):
            for name in ("__bool__", "__len__"):
                if any(name in k.__dict__ for k in v.cls.__mro__[:-1]):
                    res = self.call(self.var_getattr(v, name), [], {})
                    return bool(self.specialize(res))
            return True
        if isinstance(v, ObjectVariable) and v.source is not None:
            value = bool(v.value)
            self.out.guards.add(f"bool({v.source}) == {value}")
            return value
        return bool(self.specialize(v))

    # -- loads and stores -------------------------------------------------------------------------------

    def NOP(self, f, inst):
        pass

    RESUME = NOP
    PRECALL = NOP
    CACHE = NOP
    EXTENDED_ARG = NOP
    SETUP_LOOP = NOP
    COPY_FREE_VARS = NOP

    def LOAD_CONST(self, f, inst):
        f.push(ConstantVariable(inst.argval))

    def RETURN_CONST(self, f, inst):
        f.return_value = ConstantVariable(inst.argval)
        return True

    def LOAD_FAST(self, f, inst):
        if inst.argval not in f.locals:
            raise Unsupported(f"local variable {inst.argval!r} referenced before assignment")
        f.push(f.locals[inst.argval])

    LOAD_FAST_CHECK = LOAD_FAST

    def LOAD_FAST_AND_CLEAR(self, f, inst):
        f.push(f.locals.pop(inst.argval, NULL))

    def STORE_FAST(self, f, inst):
        v = f.pop()
        if v is NULL:
            f.locals.pop(inst.argval, None)
        else:
            f.locals[inst.argval] = v

    def DELETE_FAST(self, f, inst):
        f.locals.pop(inst.argval, None)

    def LOAD_GLOBAL(self, f, inst):
        if PY >= (3, 11) and inst.arg & 1:
            f.push(NULL)
        f.push(self.load_global(f, inst.argval))

    def load_global(self, f, name):
        if name in f.f_globals:
            return self.lift_global(f.f_globals[name], f"{f.globals_src}[{name!r}]")
        b = f.f_globals.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else b.__dict__
        if name not in b:
            raise Unsupported(f"name {name!r} is not defined")
        self.out.guards.add(f"{name!r} not in {f.globals_src}")
        return self.lift_global(b[name], None)

    def lift_global(self, value, source):
        if isinstance(value, types.ModuleType) or _is_library_callable(value):
            if source is not None:  # (a global may be rebound: the name must still mean this object)
                self.out.guards.add(f"{source} is {self.out.k(value)}")
            return _static_var(value, self.out)
        if source is None:
            return _static_var(value, self.out)
        return self.out.lift(value, source)

    def IMPORT_NAME(self, f, inst):
        fromlist, level = self.specialize(f.pop()), self.specialize(f.pop())
        f.push(ObjectVariable(__import__(inst.argval, f.f_globals, None, fromlist, level)))

    def IMPORT_FROM(self, f, inst):
        f.push(self.var_getattr(f.stack[-1], inst.argval))

    def STORE_GLOBAL(self, f, inst):
        raise Unsupported(f"a store to the global {inst.argval!r} (a side effect capture does not replay)")

    def MAKE_CELL(self, f, inst):
        if inst.argval not in f.cells:
            f.cells[inst.argval] = CellVariable()
        cell = f.cells[inst.argval]
        if inst.argval in f.locals and cell.contents is None:  # an argument that is also a cell
            cell.contents = f.locals.pop(inst.argval)

    def LOAD_CLOSURE(self, f, inst):
        f.push(self.cell(f, inst.argval))

    def cell(self, f, name):
        c = f.cells.get(name)
        if c is None:
            c = f.cells[name] = CellVariable()
            if name in f.locals:  # 3.10: an argument that is also a cell
                c.contents = f.locals.pop(name)
        return c

    def LOAD_DEREF(self, f, inst):
        c = self.cell(f, inst.argval)
        if c.contents is None and getattr(c, "real", None) is not None:
            try:
                value = c.real.cell_contents
            except ValueError:
                raise Unsupported(f"free variable {inst.argval!r} referenced before assignment") from None
            c.contents = self.out.lift(value, f"{c.real_source}.cell_contents")
        if c.contents is None:
            raise Unsupported(f"free variable {inst.argval!r} referenced before assignment")
        f.push(c.contents)

    LOAD_CLASSDEREF = LOAD_DEREF

    def STORE_DEREF(self, f, inst):
        c = self.cell(f, inst.argval)
        if getattr(c, "real", None) is not None and f.parent is not None:
            raise Unsupported(f"a store to the closure variable {inst.argval!r} of an inlined function")
        c.contents = f.pop()
        c.dirty = True

    def LOAD_ATTR(self, f, inst):
        obj = f.pop()
        if PY >= (3, 12) and inst.arg & 1:
            f.push(NULL)
        f.push(self.var_getattr(obj, inst.argval))

    def LOAD_METHOD(self, f, inst):
        obj = f.pop()
        f.push(NULL)
        f.push(self.var_getattr(obj, inst.argval))

    def STORE_ATTR(self, f, inst):
        obj, value = f.pop(), f.pop()
        if isinstance(obj, UserObjectVariable):  # see NOTE [ Objects made inside the region ]
            if inspect.getattr_static(obj.cls, "__setattr__") is not object.__setattr__:
                raise Unsupported(f"a store to an attribute of {obj.cls.__name__}, which defines __setattr__")
            obj.attrs[inst.argval] = value
            return
        if isinstance(obj, (ObjectVariable, NNModuleVariable)) and obj.source is not None and _plain_store(obj):
            self.out.store_attr(obj, inst.argval, value)
            return
        raise Unsupported(
            f"a store to attribute {inst.argval!r} of a {type(obj).__name__} "
            "(a side effect capture does not replay)"
        )

    def DELETE_ATTR(self, f, inst):
        obj = f.pop()
        if isinstance(obj, UserObjectVariable) and inst.argval in obj.attrs:
            del obj.attrs[inst.argval]
            return
        raise Unsupported("del of an attribute")

    # -- stack shuffles ---------------------------------------------------------------------------------

    def POP_TOP(self, f, inst):
        f.pop()

    def PUSH_NULL(self, f, inst):
        f.push(NULL)

    def COPY(self, f, inst):
        f.push(f.stack[-inst.arg])

    def SWAP(self, f, inst):
        f.stack[-1], f.stack[-inst.arg] = f.stack[-inst.arg], f.stack[-1]

    def ROT_TWO(self, f, inst):
        f.stack[-1], f.stack[-2] = f.stack[-2], f.stack[-1]

    def ROT_THREE(self, f, inst):
        f.stack[-3:] = [f.stack[-1], f.stack[-3], f.stack[-2]]

    def ROT_FOUR(self, f, inst):
        f.stack[-4:] = [f.stack[-1], f.stack[-4], f.stack[-3], f.stack[-2]]

    def ROT_N(self, f, inst):
        n = inst.arg
        f.stack[-n:] = [f.stack[-1]] + f.stack[-n:-1]

    def DUP_TOP(self, f, inst):
        f.push(f.stack[-1])

    def DUP_TOP_TWO(self, f, inst):
        f.stack.extend(f.stack[-2:])

    # -- operators --------------------------------------------------------------------------------------

    def BINARY_OP(self, f, inst):
        b, a = f.pop(), f.pop()
        f.push(self.binop(_BINOPS[inst.argrepr], a, b))

    def _old_binary(self, f, inst):
        name = inst.opname.split("_", 1)[1]
        sym = _OLD_BINARY[name]
        op = _INPLACE[sym] if inst.opname.startswith("INPLACE") else _BINOPS[sym]
        b, a = f.pop(), f.pop()
        f.push(self.binop(op, a, b))

    for _n in _OLD_BINARY:
        locals()["BINARY_" + _n] = _old_binary
        locals()["INPLACE_" + _n] = _old_binary
    del _n

    def COMPARE_OP(self, f, inst):
        b, a = f.pop(), f.pop()
        f.push(self.binop(_COMPARE[inst.argval if isinstance(inst.argval, str) else inst.argrepr], a, b))

    def IS_OP(self, f, inst):
        b, a = f.pop(), f.pop()
        same = self.is_same(a, b)
        f.push(ConstantVariable(same != bool(inst.arg)))

    def CONTAINS_OP(self, f, inst):
        b, a = f.pop(), f.pop()
        if isinstance(b, DictVariable):
            res = self.specialize(a) in b.items
        elif isinstance(b, (BaseListVariable, ListIteratorVariable, RangeVariable)):
            items = self.iterate(b)
            res = False
            for x in items:
                if self.is_same(a, x) or (
                    not isinstance(x, TensorVariable)
                    and not isinstance(a, TensorVariable)
                    and self.specialize(x) == self.specialize(a)
                ):
                    res = True
                    break
        elif isinstance(b, ConstantVariable) or isinstance(b, ObjectVariable):
            key = self.specialize(a)
            res = key in b.value
            if getattr(b, "by_type", False):
                self.out.guards.add(f"({self.out.k(key)} in {b.source}) == {res}")
        else:
            raise Unsupported(f"`in` on a {type(b).__name__}")
        f.push(ConstantVariable(res != bool(inst.arg)))

    def UNARY_NEGATIVE(self, f, inst):
        f.push(self.unop(operator.neg, f.pop()))

    def UNARY_POSITIVE(self, f, inst):
        f.push(self.unop(operator.pos, f.pop()))

    def UNARY_INVERT(self, f, inst):
        f.push(self.unop(operator.invert, f.pop()))

    def UNARY_NOT(self, f, inst):
        f.push(ConstantVariable(not self.truth(f.pop())))

    def CALL_INTRINSIC_1(self, f, inst):
        if inst.argrepr == "INTRINSIC_UNARY_POSITIVE":
            f.push(self.unop(operator.pos, f.pop()))
        elif inst.argrepr == "INTRINSIC_LIST_TO_TUPLE":
            f.push(TupleVariable(f.pop().items))
        else:
            raise Unsupported(f"intrinsic {inst.argrepr}")

    def BINARY_SUBSCR(self, f, inst):
        key, obj = f.pop(), f.pop()
        f.push(self.getitem(obj, key))

    def BINARY_SLICE(self, f, inst):
        stop, start, obj = f.pop(), f.pop(), f.pop()
        f.push(self.getitem(obj, SliceVariable(start, stop, ConstantVariable(None))))

    def STORE_SUBSCR(self, f, inst):
        key, obj, value = f.pop(), f.pop(), f.pop()
        self.setitem(obj, key, value)

    def STORE_SLICE(self, f, inst):
        stop, start, obj, value = f.pop(), f.pop(), f.pop(), f.pop()
        self.setitem(obj, SliceVariable(start, stop, ConstantVariable(None)), value)

    def DELETE_SUBSCR(self, f, inst):
        key, obj = f.pop(), f.pop()
        if isinstance(obj, (ListVariable, DictVariable)):
            k = self.specialize(key)
            del self.out.mutate(obj).items[k]
            return
        raise Unsupported(f"del of an item of a {type(obj).__name__}")

    # -- building containers ----------------------------------------------------------------------------

    def BUILD_TUPLE(self, f, inst):
        f.push(TupleVariable(f.popn(inst.arg)))

    def BUILD_LIST(self, f, inst):
        f.push(ListVariable(f.popn(inst.arg)))

    def BUILD_SET(self, f, inst):
        f.push(SetVariable([self.specialize(v) for v in f.popn(inst.arg)]))

    def SET_ADD(self, f, inst):
        k = self.specialize(f.pop())
        self.out.mutate(f.stack[-inst.arg]).items[k] = ConstantVariable(k)

    def SET_UPDATE(self, f, inst):
        target = self.out.mutate(f.stack[-inst.arg])
        for x in self.iterate(f.pop()):
            k = self.specialize(x)
            target.items[k] = ConstantVariable(k)

    def BUILD_MAP(self, f, inst):
        items = f.popn(2 * inst.arg)
        f.push(DictVariable({self.specialize(items[i]): items[i + 1] for i in range(0, len(items), 2)}))

    def BUILD_CONST_KEY_MAP(self, f, inst):
        keys = self.specialize(f.pop())
        f.push(DictVariable(dict(zip(keys, f.popn(inst.arg)))))

    def BUILD_SLICE(self, f, inst):
        items = f.popn(inst.arg)
        if len(items) == 2:
            items.append(ConstantVariable(None))
        f.push(SliceVariable(*items))

    def BUILD_STRING(self, f, inst):
        parts = f.popn(inst.arg)
        f.push(ConstantVariable("".join(self.specialize(p) for p in parts)))

    def FORMAT_VALUE(self, f, inst):
        fmt_spec = f.pop() if inst.arg & 0x04 else ConstantVariable("")
        v = self.specialize(f.pop())
        conv = inst.arg & 0x03
        v = {0: v, 1: str(v), 2: repr(v), 3: ascii(v)}[conv] if conv else v
        f.push(ConstantVariable(format(v, self.specialize(fmt_spec))))

    def LIST_APPEND(self, f, inst):
        v = f.pop()
        self.out.mutate(f.stack[-inst.arg]).items.append(v)

    def LIST_EXTEND(self, f, inst):
        v = f.pop()
        self.out.mutate(f.stack[-inst.arg]).items.extend(self.iterate(v))

    def LIST_TO_TUPLE(self, f, inst):
        f.push(TupleVariable(f.pop().items))

    def MAP_ADD(self, f, inst):
        v, k = f.pop(), f.pop()
        self.out.mutate(f.stack[-inst.arg]).items[self.specialize(k)] = v

    def DICT_UPDATE(self, f, inst):
        v = f.pop()
        if not isinstance(v, DictVariable):
            raise Unsupported("** of a non-dict")
        self.out.mutate(f.stack[-inst.arg]).items.update(v.items)

    DICT_MERGE = DICT_UPDATE

    def UNPACK_SEQUENCE(self, f, inst):
        items = self.iterate(f.pop())
        if len(items) != inst.arg:
            raise Unsupported(f"unpacking {len(items)} values into {inst.arg}")
        f.stack.extend(reversed(items))

    def UNPACK_EX(self, f, inst):
        items = self.iterate(f.pop())
        before, after = inst.arg & 0xFF, inst.arg >> 8
        if len(items) < before + after:
            raise Unsupported("not enough values to unpack")
        mid = ListVariable(items[before : len(items) - after])
        out = items[:before] + [mid] + items[len(items) - after :]
        f.stack.extend(reversed(out))

    # -- control flow -----------------------------------------------------------------------------------

    def JUMP_FORWARD(self, f, inst):
        f.jump(inst.argval)

    JUMP_BACKWARD = JUMP_FORWARD
    JUMP_ABSOLUTE = JUMP_FORWARD
    JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD
    JUMP = JUMP_FORWARD
    JUMP_NO_INTERRUPT = JUMP_FORWARD

    def _pop_jump(self, f, inst):
        v = f.pop()
        name = inst.opname
        if name.endswith("_NOT_NONE"):
            cond = not self.is_none(v)
        elif name.endswith("_NONE"):
            cond = self.is_none(v)
        elif name.endswith("_TRUE"):
            cond = self.truth(v)
        else:
            cond = not self.truth(v)
        if cond:
            f.jump(inst.argval)

    for _n in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
        locals()[_n] = _pop_jump
        locals()[_n.replace("POP_JUMP_", "POP_JUMP_FORWARD_")] = _pop_jump
        locals()[_n.replace("POP_JUMP_", "POP_JUMP_BACKWARD_")] = _pop_jump
    del _n

    def JUMP_IF_FALSE_OR_POP(self, f, inst):
        if not self.truth(f.stack[-1]):
            f.jump(inst.argval)
        else:
            f.pop()

    def JUMP_IF_TRUE_OR_POP(self, f, inst):
        if self.truth(f.stack[-1]):
            f.jump(inst.argval)
        else:
            f.pop()

    def GET_ITER(self, f, inst):
        v = f.pop()
        if not isinstance(v, (ListIteratorVariable, GeneratorVariable)):
            v = ListIteratorVariable(self.iterate(v))
        f.push(v)

    def FOR_ITER(self, f, inst):
        it = f.stack[-1]
        if isinstance(it, GeneratorVariable):
            kind, v = self.gen_resume(it)
            if kind == "yield":
                f.push(v)
                return
        elif not isinstance(it, ListIteratorVariable):
            raise Unsupported(f"iteration over a {type(it).__name__}")
        elif it.index < len(it.items):
            it.index += 1  # (in place: a local may hold the same iterator)
            f.push(it.items[it.index - 1])
            return
        f.pop()
        f.jump(inst.argval)
        if PY >= (3, 12) and f.insts[f.ip].opname == "END_FOR":
            f.ip += 1

    def END_FOR(self, f, inst):
        f.popn(2)

    def RETURN_VALUE(self, f, inst):
        f.return_value = f.pop()
        return True

    def LOAD_ASSERTION_ERROR(self, f, inst):
        raise Unsupported("assert statement failed or could not be decided")

    # -- with blocks ------------------------------------------------------------------------------------

    def BEFORE_WITH(self, f, inst):
        ctx = f.pop()
        if isinstance(ctx, GeneratorCMVariable):  # see NOTE [ Generators in capture ] in generators.py
            kind, v = self.gen_resume(ctx.gen)
            if kind == "return":
                raise Unsupported("a contextmanager generator that did not yield (RuntimeError)")
            if f is self.frame0:
                self.generic_ctx += 1
            exit_ = ContextExitVariable(ctx)
            exit_.frame = f
            f.push(exit_)
            f.push(v)
            return
        if isinstance(ctx, (UserObjectVariable, AutocastVariable)):
            enter = self.enter_user_context if isinstance(ctx, UserObjectVariable) else self.enter_autocast
            exit_, value = enter(f, ctx)
            f.push(exit_)
            f.push(value)
            return
        if not isinstance(ctx, GradModeVariable):
            raise Unsupported(
                f"Unsupported context manager: Dynamo does not know how to enter a `{_describe(ctx)}` "
                "context manager (one made outside the region, or one capture does not model)"
            )
        if (
            ctx.initial is None
        ):  # no_grad()/enable_grad(): enters now; set_grad_enabled(b) entered at its call
            ctx.initial = self.out._grad()
            self.set_grad(ctx.target)
        f.push(ContextExitVariable(ctx))
        f.push(ConstantVariable(None))

    def SETUP_WITH(self, f, inst):  # 3.10
        self.BEFORE_WITH(f, inst)
        f.blocks.append(("with", inst.argval, len(f.stack) - 1))

    def set_grad(self, mode):
        self.out.graph.call_function(_set_grad_enabled, (mode,)).meta["impure"] = True
        _set_grad_enabled(mode)

    def WITH_EXCEPT_START(self, f, inst):
        raise Unsupported("an exception inside a with block")

    # -- functions --------------------------------------------------------------------------------------

    def MAKE_FUNCTION(self, f, inst):
        if PY < (3, 11):
            f.pop()  # qualname
        code = self.specialize(f.pop())
        flags = inst.arg
        closure = f.pop().items if flags & 0x08 else None
        if flags & 0x04:
            f.pop()
        kwdefaults = f.pop() if flags & 0x02 else None
        defaults = f.pop().items if flags & 0x01 else None
        fn = UserFunctionVariable(
            None,
            code=code,
            globals_=f.f_globals,
            defaults=defaults,
            kwdefaults=kwdefaults,
            closure=closure or [],
        )
        fn.globals_src = f.globals_src
        f.push(fn)

    def KW_NAMES(self, f, inst):
        f.kw_names = inst.argval if isinstance(inst.argval, tuple) else f.code.co_consts[inst.arg]

    def _call_311(self, f, inst):
        argc = inst.arg
        args = f.popn(argc)
        a, b = f.pop(), f.pop()  # a: callable or self; b: NULL or method
        if b is NULL:
            fn = a
        else:
            fn, args = b, [a] + args
        kw = {}
        if f.kw_names:
            names = f.kw_names
            f.kw_names = None
            kw = dict(zip(names, args[len(args) - len(names) :]))
            args = args[: len(args) - len(names)]
        f.push(self.call(fn, args, kw))

    if PY >= (3, 11):
        CALL = _call_311

    def CALL_FUNCTION(self, f, inst):
        args = f.popn(inst.arg)
        f.push(self.call(f.pop(), args, {}))

    def CALL_METHOD(self, f, inst):
        args = f.popn(inst.arg)
        a, b = f.pop(), f.pop()
        fn, args = (a, args) if b is NULL else (b, [a] + args)
        f.push(self.call(fn, args, {}))

    def CALL_FUNCTION_KW(self, f, inst):
        names = self.specialize(f.pop())
        args = f.popn(inst.arg)
        fn = f.pop()
        kw = dict(zip(names, args[len(args) - len(names) :]))
        f.push(self.call(fn, args[: len(args) - len(names)], kw))

    def CALL_FUNCTION_EX(self, f, inst):
        kw = f.pop() if inst.arg & 1 else DictVariable({})
        args = f.pop()
        fn = f.pop()
        if PY >= (3, 11) and f.stack and f.stack[-1] is NULL:
            f.pop()
        if not isinstance(kw, DictVariable):
            raise Unsupported("** of a non-dict")
        f.push(self.call(fn, self.iterate(args), dict(kw.items)))

    # -- semantics shared by the handlers (calls.py) ----------------------------------------------------

    from .calls import (  # noqa: E402
        binop,
        call,
        call_module,
        enter_autocast,
        enter_user_context,
        getitem,
        inline,
        is_none,
        is_same,
        iterate,
        setitem,
        unop,
        var_getattr,
    )
    from .generators import (  # noqa: E402
        CHECK_EXC_MATCH,
        END_SEND,
        GEN_START,
        GET_YIELD_FROM_ITER,
        JUMP_IF_NOT_EXC_MATCH,
        POP_BLOCK,
        POP_EXCEPT,
        PUSH_EXC_INFO,
        RAISE_VARARGS,
        RERAISE,
        RETURN_GENERATOR,
        SEND,
        SETUP_FINALLY,
        YIELD_FROM,
        YIELD_VALUE,
        gen_resume,
        unwind,
    )


def _is_library_callable(value):
    mod = getattr(value, "__module__", None) or ""
    return isinstance(value, (types.BuiltinFunctionType, types.FunctionType, type)) and (
        mod.startswith("ember") or mod in ("builtins", "math", "_operator", "operator")
    )


def _static_var(value, out):
    if isinstance(value, (int, float, bool, str, type(None))):
        return ConstantVariable(value)
    if isinstance(value, types.FunctionType) and not (getattr(value, "__module__", "") or "").startswith(
        "ember"
    ):
        return UserFunctionVariable(value, out.k(value))
    return ObjectVariable(value)


def _plain_store(obj):
    """Whether a store to an attribute of this object from outside can be replayed after the graph: a
    module (its `__setattr__` runs at the replay, as in eager) or a user object without `__setattr__`."""
    e = _ember()
    value = obj.value
    if isinstance(value, e.nn.Module):
        return not getattr(obj, "made_inside", False)
    plain = inspect.getattr_static(type(value), "__setattr__") is object.__setattr__
    return getattr(obj, "by_type", False) and plain


def _describe(v):
    if isinstance(v, ObjectVariable):
        return type(v.value).__qualname__
    return type(v).__name__


__all__ = [
    "InstructionTranslator",
    "Frame",
    "Unsupported",
    "VariableTracker",
    "config",
    "math",
    "const_like",
    "CellVariable",
]
