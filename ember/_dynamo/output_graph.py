"""The graph one capture builds: its inputs (with the sources they are read from), its guards, and how the
frame's state at the end (a graph break or the return) is rebuilt from the graph's outputs.

`OutputGraph.lift(value, source)` turns a value of the frame's state into a variable and installs the
guards that value's use needs; `call(fn, args, kwargs)` adds a node for an op and propagates a fake tensor
through it (the op runs inside the capture's FakeTensorMode, ember/_subclasses/fake_tensor.py: shapes,
dtypes and strides from the meta rules, no data); `finish(outputs)` adds the output node and drops dead
nodes, and `rebuild_expr` writes the code that rebuilds the state (eval_frame.py hands the GraphModule to
the backend). See NOTE [ Variables and sources ] in variables.py.
"""

from __future__ import annotations

import operator
import types
import warnings

from . import config
from .exc import Unsupported
from .guards import GuardSet, TensorSpec
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
    SizeVariable,
    SliceVariable,
    SymNodeVariable,
    TensorVariable,
    TupleVariable,
    UserFunctionVariable,
    UserObjectVariable,
)

_IMPURE_FUNCTIONS = {
    operator.setitem,
    operator.iadd,
    operator.isub,
    operator.imul,
    operator.itruediv,
    operator.ifloordiv,
    operator.imod,
    operator.ipow,
    operator.imatmul,
    operator.iand,
    operator.ior,
    operator.ixor,
    operator.ilshift,
    operator.irshift,
}
_CONST_TYPES = (int, float, bool, str, bytes, type(None), complex, type(Ellipsis))


def _ember():
    import ember

    return ember


def Graph():  # noqa: N802 - the graph capture records into is ember.fx's (X's IR)
    from ..fx import Graph as G

    return G()


def make_graph_module(root, graph):
    from ..fx import GraphModule

    return GraphModule({}, graph)


def to_meta(t, fake_mode):
    """The fake tensor standing for `t` in a capture: its size, strides, dtype, device and requires_grad,
    no data (X's FakeTensorMode, torch's design)."""
    f = fake_mode.from_tensor(t)
    if t.requires_grad and not f.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex):
        f.requires_grad_(True)
    return f


# NOTE [ Resumable state objects ]
# At a graph break the frame's state is rebuilt as real Python values so the break instruction can run.
# Most variables have an obvious real value; two kinds need a stand-in that the next capture can read
# back without consuming or guessing: an iterator of a `for` loop in progress (`ResumeIterator`: its items
# and position, which a capture lifts back to a symbolic iterator with guards on both) and the exit of a
# grad-mode `with` block in progress (`GradModeExit`: the mode to restore, called as `__exit__` is), and
# the exit of an autocast block in progress (`AutocastExit`: made by the rebuild code, it enters a real
# autocast for the break instruction and what follows; see NOTE [ Autocast across a break ]).


class ResumeIterator:
    __slots__ = ("items", "index")

    def __init__(self, items, index=0):
        self.items, self.index = items, index

    def __iter__(self):
        return self

    def __next__(self):
        if self.index >= len(self.items):
            raise StopIteration
        self.index += 1
        return self.items[self.index - 1]


class GradModeExit:
    __slots__ = ("prev",)

    def __init__(self, prev):
        self.prev = prev

    def __call__(self, *exc):
        _set_grad_enabled(self.prev)


class AutocastExit:
    """An autocast block open across a break: entered when the rebuild code makes it (the graph before the
    break left the block, as torch's does), left when called as `__exit__` is, or by the graph of a later
    capture (`_exit_resumed_autocast`), or by `restore` when the frame raises."""

    __slots__ = ("args", "real", "nesting0")

    def __init__(self, args):
        from ..amp import autocast_mode as am

        self.args = args
        self.nesting0 = am._state.nesting
        self.real = _rebuilt_autocast(args)
        self.real.__enter__()

    def prev_state(self):
        """The state the block restores when it is left (what a capture of the rest of the block reads)."""
        r = self.real
        return (r.prev, r.prev_fastdtype, r.prev_cache_enabled)

    def __call__(self, *exc):
        self.real.__exit__(*exc)

    def restore(self):
        """The state before the block, however much of it was left (the frame raised inside it)."""
        _exit_resumed_autocast(self.args[0], *self.prev_state(), nesting=self.nesting0)


def _autocast_cls():
    from ..amp.autocast_mode import autocast

    return autocast


def _rebuilt_autocast(args):
    return _autocast_cls()(args[0], dtype=args[1], enabled=args[2], cache_enabled=args[3])


def _exit_resumed_autocast(device_type, prev, prev_dtype, prev_cache, nesting=None):
    """The graph node leaving an autocast block a break split (the block was entered by an `AutocastExit`
    before the graph ran): what `autocast.__exit__` does, with the state to restore as constants."""
    from ..amp import autocast_mode as am

    if nesting is None:
        nesting = am._state.nesting - 1
    am._state.nesting = nesting
    if nesting == 0:
        am.clear_autocast_cache()
    am.set_autocast_enabled(device_type, prev)
    am.set_autocast_dtype(device_type, prev_dtype)
    am.set_autocast_cache_enabled(prev_cache)


def _set_grad_enabled(mode):
    """The graph node for entering/leaving a grad-mode block (torch's `torch._C._set_grad_enabled`)."""
    from .._grad_state import state

    state.enabled = mode


def _enter_autocast(device_type, dtype, enabled, cache_enabled):
    """The graph node entering an autocast block captured in the region (torch's `torch.amp._enter_autocast`):
    it enters a real `autocast` when the graph runs, and returns it for the `_exit_autocast` node."""
    from ..amp.autocast_mode import autocast

    ctx = autocast(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
    ctx.__enter__()
    return ctx


def _exit_autocast(ctx):
    ctx.__exit__(None, None, None)


def _is_tensor(v):
    return isinstance(v, _ember().Tensor)


def _collect_outputs(v, outs, seen):
    """Append to `outs` the proxies of the tensors and symbolic ints in variable `v` that are not graph inputs."""
    if isinstance(v, (TensorVariable, SymNodeVariable)):
        if v.proxy.op == "placeholder":
            return
    elif not isinstance(v, SymNodeVariable):
        if isinstance(v, UserObjectVariable):  # (objects may refer to each other)
            if id(v) in seen:
                return
            seen.add(id(v))
        for sub in _children(v):
            _collect_outputs(sub, outs, seen)
        return
    if id(v.proxy) not in seen:
        seen.add(id(v.proxy))
        outs.append(v.proxy)


class OutputGraph:
    def __init__(self, *, dynamic, frame_state, code_name):
        self.graph = Graph()
        self.keep = []  # K: objects guards and rebuild code refer to
        self._keep_ids = {}
        self.guards = GuardSet(self.keep)
        self.inputs = []  # (placeholder node, source)
        self.lifted = {}  # source -> variable
        self.lifted_containers = {}  # id(list or dict) -> (the object, its variable, its first source)
        self.dynamic = dynamic  # True, False or None (automatic)
        self.frame_state = frame_state  # source -> sizes seen before, None where a size changed
        self.code_name = code_name
        self.graph_break_reasons = []
        from .._subclasses.fake_tensor import FakeTensorMode

        self.fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
        self.mutated = []  # containers from the frame that capture changed
        self.attr_stores = {}  # "source.name" -> (source, name, variable): stores to outside objects
        self._static_sources = set()
        self.tx = None  # the InstructionTranslator capturing now (it gives each node its stack_trace)
        self.guards.add("___grad_enabled() == " + repr(self._grad()))
        self.guards.add("___autocast_state() == " + self.k(_autocast()))

    @staticmethod
    def _grad():
        from .._grad_state import state

        return state.enabled

    def k(self, obj):
        """The expression naming `obj` in guards and rebuild code (`K[i]`)."""
        i = self._keep_ids.get(id(obj))
        if i is None or self.keep[i] is not obj:
            i = len(self.keep)
            self.keep.append(obj)
            self._keep_ids[id(obj)] = i
        return f"K[{i}]"

    def mutate(self, container):
        """Note that a list/dict variable changed. One read from the frame (a source) is the user's object:
        the change is replayed on it after the graph runs (Dynamo's side-effect replay); see
        `side_effect_lines`."""
        if container.source is not None and container not in self.mutated:
            self.mutated.append(container)
        container.mutated = True
        return container

    def side_effect_lines(self, out_index, cells_made, fresh):
        lines = []
        for c in self.mutated:
            items = (
                ", ".join(self.rebuild_expr(v, out_index, cells_made, fresh) for v in c.items)
                if isinstance(c, BaseListVariable)
                else ", ".join(
                    f"{k!r}: {self.rebuild_expr(v, out_index, cells_made, fresh)}" for k, v in c.items.items()
                )
            )
            if isinstance(c, BaseListVariable):
                lines.append(f"{c.source}[:] = [{items}]")
            else:
                lines.append(f"___d = {c.source}; ___d.clear(); ___d.update({{{items}}})")
        for src, name, v in self.attr_stores.values():
            lines.append(f"setattr({src}, {name!r}, {self.rebuild_expr(v, out_index, cells_made, fresh)})")
        return lines

    def store_attr(self, obj, name, value):
        """`obj.name = value` on an object from outside (a source): later reads in the region see `value`,
        and the store is replayed on the real object after the graph ran (torch's side-effect replay of
        `STORE_ATTR`, as for lists and dicts in `mutate`)."""
        key = f"{obj.source}.{name}"
        self.attr_stores[key] = (obj.source, name, value)
        self.lifted[key] = value

    @property
    def inputs_used(self):
        return self.inputs

    def count_calls(self):
        return sum(1 for n in self.graph.nodes if n.op not in ("placeholder", "output"))

    # -- lifting the frame's values ---------------------------------------------------------------------

    def lift(self, value, source, static=False):
        """The variable for `value`, read from `source` at each call, with the guards its kind needs
        (`static`: an int/float that stays a constant even after it changed: a module's attribute)."""
        if source is not None and source in self.lifted:
            return self.lifted[source]
        if static:
            self._static_sources.add(source)
        if type(value) in (list, dict) and source is not None:
            # one mutable container reached by two paths (a global and a closure cell) is one variable,
            # so that a mutation through one is seen through the other; guarded to stay the same object
            seen = self.lifted_containers.get(id(value))
            if seen is not None and seen[0] is value:
                self.guards.add(f"{source} is {seen[2]}")
                self.lifted[source] = seen[1]
                return seen[1]
        var = self._lift(value, source)
        if source is not None:
            self.lifted[source] = var
            if type(value) in (list, dict):
                self.lifted_containers[id(value)] = (value, var, source)
        return var

    def _lift(self, value, source):
        e = _ember()
        g = self.guards
        if isinstance(value, e.Tensor):
            dyn = self._dynamic_dims(value, source)
            spec = TensorSpec(value, dyn)
            g.add(f"___check_tensor({source}, {self.k(spec)})")
            node = self.graph.placeholder(_name_of(source))
            node.meta["example_value"] = ex = to_meta(value, self.fake_mode)
            node.meta["source"] = source
            node.meta["dynamic_dims"] = frozenset(dyn)  # (read by AOT autograd: _functorch/_dynamic.py)
            self.inputs.append((node, source))
            var = TensorVariable(node, ex, source)
            var.dyn_dims = frozenset(dyn)
            var.pytype = type(value)
            return var
        if value is None or value is Ellipsis:
            g.add(f"{source} is {value!r}")
            return ConstantVariable(value, source)
        if type(value) in (int, float) and self._dynamic_scalar(value, source):
            g.add(f"type({source}) is {type(value).__name__}")
            node = self.graph.placeholder(_name_of(source))
            node.meta["example_value"] = value
            node.meta["source"] = source
            self.inputs.append((node, source))
            return SymNodeVariable(node, value, source)
        if type(value) in _CONST_TYPES:
            if type(value) is float and value != value:
                g.add(f"type({source}) is float and {source} != {source}")
            else:
                g.add(f"type({source}) is {type(value).__name__} and {source} == {value!r}")
            return ConstantVariable(value, source)
        if isinstance(value, (e.dtype, e.device, e.memory_format, e.layout)):
            g.add(f"{source} == {self.k(value)}")
            return ConstantVariable(value, source)
        if type(value) in (list, tuple) or isinstance(value, e.Size):
            g.add(f"type({source}) is {self.k(type(value))} and len({source}) == {len(value)}")
            items = [self.lift(v, f"{source}[{i}]") for i, v in enumerate(value)]
            cls = (
                SizeVariable
                if isinstance(value, e.Size)
                else (ListVariable if type(value) is list else TupleVariable)
            )
            return cls(items, source)
        if type(value) is dict:
            keys = list(value)
            if not all(type(k) in (str, int) for k in keys):
                return ObjectVariable(value, source)
            g.add(f"type({source}) is dict and list({source}) == {keys!r}")
            return DictVariable({k: self.lift(v, f"{source}[{k!r}]") for k, v in value.items()}, source)
        if type(value) is range:
            g.add(f"type({source}) is range and {source} == {value!r}")
            return RangeVariable(value)
        if isinstance(value, e.nn.Module):
            if isinstance(value, (e.nn.RNN, e.nn.GRU, e.nn.LSTM)) and not config.allow_rnn:
                raise Unsupported(
                    "Attempted to wrap RNN, GRU, or LSTM: Dynamo does not support RNN, GRU, or LSTM "
                    "(set torch._dynamo.config.allow_rnn=True)"
                )
            g.add(f"type({source}) is {self.k(type(value))}")
            return NNModuleVariable(value, source)
        if isinstance(value, types.FunctionType):
            g.add(f"{source} is {self.k(value)}")
            return UserFunctionVariable(value, source)
        if type(value) is ResumeIterator:
            g.add(
                f"type({source}) is {self.k(ResumeIterator)} and {source}.index == {value.index} "
                f"and len({source}.items) == {len(value.items)}"
            )
            items = [self.lift(v, f"{source}.items[{i}]") for i, v in enumerate(value.items)]
            return ListIteratorVariable(items, value.index)
        if type(value) is GradModeExit:
            g.add(f"type({source}) is {self.k(GradModeExit)} and {source}.prev == {value.prev!r}")
            return ContextExitVariable(GradModeVariable(value.prev, initial=value.prev))
        if type(value) is AutocastExit:  # NOTE [ Autocast across a break ]
            state = self.k(value.prev_state())
            g.add(
                f"type({source}) is {self.k(AutocastExit)} and {source}.args == {self.k(value.args)} "
                f"and {source}.prev_state() == {state}"
            )
            ctx = AutocastVariable(value.real, value.args)
            ctx.resumed = value.prev_state()
            exit_ = ContextExitVariable(ctx)
            exit_.source = source
            return exit_
        if value is NULL:
            return NULL
        if isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple):
            g.add(f"type({source}) is {self.k(type(value))}")  # a namedtuple: its fields are its items
            var = TupleVariable([self.lift(v, f"{source}[{i}]") for i, v in enumerate(value)], source)
            var.cls = type(value)
            return var
        if is_user_instance(value):
            g.add(f"type({source}) is {self.k(type(value))}")
            var = ObjectVariable(value, source)
            var.by_type = True
            return var
        # any other object: its identity is what capture relied on (a class, a builtin, a library function)
        g.add(f"{source} is {self.k(value)}")
        return ObjectVariable(value, source)

    def _dynamic_scalar(self, value, source):
        """An int/float input becomes a graph input (not a constant) once its value changed between calls,
        or from the start with dynamic=True (ints other than 0 and 1); see NOTE [ Dynamic shapes ]."""
        if self.dynamic is False or source is None or not source.startswith(("L[", "S[")):
            return False
        if source in self._static_sources:
            return False
        if self.dynamic is True:
            return type(value) is int and value not in (0, 1)
        if not config.automatic_dynamic_shapes:
            return False
        key = ("scalar", source)
        seen = self.frame_state.get(key, value)
        changed = seen is None or seen != value or type(seen) is not type(value)
        self.frame_state[key] = None if changed else value
        return changed

    def _dynamic_dims(self, t, source):
        """NOTE [ Dynamic shapes ]: which sizes of an input stay symbolic.

        dynamic=False: none. dynamic=True: every size >= 2 (0 and 1 are specialized, as in torch, since
        broadcasting and contiguity depend on them). dynamic=None (the default): sizes named by
        `mark_dynamic`, and sizes that changed between calls of this frame (automatic dynamic: the first
        call compiles static, the recompile after a size changes makes that size symbolic, so later sizes
        do not recompile). Parameters stay static. A symbolic size that Python code needs as a number
        (a branch, `range`) is specialized with a guard on it; see `SymNodeVariable`.
        """
        e = _ember()
        shape = tuple(t.shape)
        if self.dynamic is False or isinstance(t, e.nn.Parameter):
            return frozenset()
        if self.dynamic is True:
            return frozenset(i for i, s in enumerate(shape) if s >= 2)
        dims = set(getattr(t, "_dynamo_dynamic_indices", ()))
        if config.automatic_dynamic_shapes and source is not None:
            seen = self.frame_state.get(source)
            if seen is not None and len(seen) == len(shape):
                seen = tuple(None if (a is None or a != b) else a for a, b in zip(seen, shape))
                dims |= {i for i, a in enumerate(seen) if a is None}
            else:
                seen = shape
            self.frame_state[source] = seen
        dims -= set(getattr(t, "_dynamo_static_indices", ()))
        return frozenset(i for i in dims if shape[i] >= 2)

    # -- nodes ------------------------------------------------------------------------------------------

    def call(self, kind, target, args, kwargs, fn_for_example=None):
        """Add a `call_function`/`call_method` node and run `target` on the fake values to get its result."""
        nargs, nkwargs = unwrap_proxies(args), unwrap_proxies(kwargs)
        exargs, exkwargs = unwrap_examples(args), unwrap_examples(kwargs)
        dyn = _any_dynamic((args, kwargs))
        try:
            with (
                warnings.catch_warnings(),
                self.fake_mode,
            ):  # (the op warns when the graph runs, not at capture)
                warnings.simplefilter("ignore")
                if kind == "call_method":
                    out = getattr(exargs[0], target)(*exargs[1:], **exkwargs)
                else:
                    out = (fn_for_example or target)(*exargs, **exkwargs)
        except Unsupported:
            raise
        except Exception as err:
            from .._meta import NoData

            name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
            from .._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

            if isinstance(err, (NoData, DataDependentOutputException, DynamicOutputShapeException)):
                raise Unsupported(
                    f"data dependent operator: {name} needs the tensors' values "
                    "(its result's shape or value depends on data)"
                ) from None
            raise Unsupported(f"{name} raised {type(err).__name__} on the captured values: {err}") from None
        node = self.graph.create_node(kind, target, nargs, nkwargs)
        if self.tx is not None:
            node.meta["stack_trace"] = self.tx.stack_trace()
        if kind == "call_method" and str(target).endswith("_") and not str(target).startswith("__"):
            node.meta["impure"] = True
        if kind == "call_function" and (
            target in _IMPURE_FUNCTIONS or getattr(target, "_dynamo_impure", False)
        ):
            node.meta["impure"] = True
        return self.wrap_result(node, out, dyn)

    def wrap_result(self, node, out, dyn):
        e = _ember()
        if isinstance(out, e.Tensor) and "_fake_mode" not in out.__dict__:
            out = to_meta(out, self.fake_mode)  # (a tensor made outside the mode: keep only its metadata)
        node.meta["example_value"] = out
        if isinstance(out, e.Tensor):
            v = TensorVariable(node, out)
            v.dyn_dims = None if dyn else frozenset()  # None: any size may be symbolic
            return v
        if isinstance(out, (tuple, list)) and any(isinstance(o, e.Tensor) for o in out):
            items = []
            for i, o in enumerate(out):
                sub = self.graph.call_function(operator.getitem, (node, i))
                items.append(self.wrap_result(sub, o, dyn))
            cls = ListVariable if isinstance(out, list) else TupleVariable
            v = cls(items)
            if type(out) not in (tuple, list):  # a torch.return_types named tuple
                v.cls = type(out)
            return v
        if out is None:
            node.meta["impure"] = True
            return ConstantVariable(None)
        if isinstance(out, (bool, int, float)) or isinstance(out, e.Size):
            if not dyn:
                self.graph.erase_node(node)
                return const_like(out)
            if isinstance(out, e.Size):
                return SizeVariable(
                    [
                        self.wrap_result(self.graph.call_function(operator.getitem, (node, i)), s, dyn)
                        for i, s in enumerate(out)
                    ]
                )
            return SymNodeVariable(node, out)
        if isinstance(out, (e.dtype, e.device, str)):
            self.graph.erase_node(node)
            return ConstantVariable(out)
        raise Unsupported(f"an op returned {type(out).__name__}, which capture does not model")

    # -- the end of a capture ---------------------------------------------------------------------------

    def graph_outputs(self, state_vars):
        """The values of the state the graph must return: tensors and symbolic ints not read from a source."""
        outs, seen = [], set()
        for v in state_vars:
            _collect_outputs(v, outs, seen)
        return outs

    def rebuild_expr(self, v, out_index, cells_made, fresh):
        """Python source that makes the real value of variable `v` after the graph ran (`O` = its outputs)."""
        r = lambda x: self.rebuild_expr(x, out_index, cells_made, fresh)  # noqa: E731
        if v is NULL:
            return self.k(NULL)
        if isinstance(v, TensorVariable):
            if v.proxy.op == "placeholder":
                return v.source
            return f"O[{out_index[id(v.proxy)]}]"
        if isinstance(v, SymNodeVariable):
            if v.proxy.op == "placeholder":
                return v.expr
            return f"O[{out_index[id(v.proxy)]}]"
        if isinstance(v, ConstantVariable):
            if v.source is not None and not isinstance(v.value, _CONST_TYPES):
                return v.source
            if type(v.value) in (int, bool, str, type(None)):
                return repr(v.value)
            return self.k(v.value)
        if isinstance(v, SizeVariable):
            return f"{self.k(_ember().Size)}(({''.join(r(x) + ', ' for x in v.items)}))"
        if isinstance(v, BaseListVariable):
            if v.source is not None and (
                v.kind is tuple or not getattr(v, "mutated", False) or v in self.mutated
            ):
                return v.source
            body = "".join(r(x) + ", " for x in v.items)
            if getattr(v, "cls", None) is not None:
                return f"{self.k(v.cls)}({body})"
            return f"[{body}]" if v.kind is list else f"({body})"
        if isinstance(v, DictVariable):
            if v.source is not None:
                return v.source
            body = ", ".join(f"{k!r}: {r(x)}" for k, x in v.items.items())
            return f"{self.k(v.kind)}({{{body}}})"
        if isinstance(v, SliceVariable):
            return f"slice({r(v.start)}, {r(v.stop)}, {r(v.step)})"
        if isinstance(v, RangeVariable):
            return repr(v.value)
        if isinstance(v, ListIteratorVariable):
            return f"{self.k(ResumeIterator)}([{''.join(r(x) + ', ' for x in v.items)}], {v.index})"
        if isinstance(v, ContextExitVariable) and isinstance(v.ctx, GradModeVariable):
            return f"{self.k(GradModeExit)}({v.ctx.initial!r})"
        if isinstance(v, ContextExitVariable) and isinstance(v.ctx, AutocastVariable):
            if getattr(v.ctx, "resumed", None) is not None:
                return v.source  # (still open: the same block goes on past this break too)
            return f"{self.k(AutocastExit)}({self.k(v.ctx.args)})"
        if isinstance(v, AutocastVariable):  # (`with autocast(...) as a`: a new object, as torch rebuilds it)
            return f"{self.k(_rebuilt_autocast)}({self.k(v.args)})"
        if isinstance(v, (NNModuleVariable, ObjectVariable)):
            if getattr(v, "made_inside", False):  # NOTE [ Modules built inside the region ]
                raise Unsupported("a module built inside the region outlives it (each call must make its own)")
            return v.source if v.source is not None else self.k(v.value)
        if isinstance(v, UserFunctionVariable):
            if v.closure is None and v.value is not None and v.self_var is None:
                return v.source if v.source is not None else self.k(v.value)
            if v.self_var is not None:
                return f"{self.k(types.MethodType)}({self.k(v.value)}, {r(v.self_var)})"
            cells = "(" + "".join(self._cell_expr(c, r, cells_made, fresh) + ", " for c in v.closure) + ")"
            defaults = r(TupleVariable(v.defaults)) if v.defaults else "None"
            return (
                f"{self.k(types.FunctionType)}({self.k(v.code)}, {self.k(v.globals)}, "
                f"{v.code.co_name!r}, {defaults}, {cells})"
            )
        if isinstance(v, GetAttrVariable):
            return f"getattr({r(v.obj)}, {v.name!r})"
        if isinstance(v, UserObjectVariable):
            return self._object_expr(v, r, cells_made, fresh)
        raise Unsupported(f"cannot rebuild a {type(v).__name__} at a graph break")

    def _cell_expr(self, cell, r, cells_made, fresh, out_index=None):
        if getattr(cell, "real", None) is not None:
            return cell.real_source
        if r is None:
            r = lambda x: self.rebuild_expr(x, out_index, cells_made, fresh)  # noqa: E731
        if id(cell) not in cells_made:
            name = f"_cell{len(cells_made)}"
            cells_made[id(cell)] = name
            fill = []
            fresh.append((name, f"{self.k(types.CellType)}()", fill))
            if cell.contents is not None:
                fill.append(f"{name}.cell_contents = {r(cell.contents)}")
        return cells_made[id(cell)]

    def _object_expr(self, v, r, cells_made, fresh):
        """An object of a user class made inside the region: `object.__new__(cls)`, then its attributes set
        as `object.__setattr__` sets them (once per rebuild, so aliases stay one object)."""
        if id(v) not in cells_made:
            name = f"_obj{len(cells_made)}"
            cells_made[id(v)] = name
            fill = []
            fresh.append((name, f"{self.k(object.__new__)}({self.k(v.cls)})", fill))
            setattr_ = self.k(object.__setattr__)
            fill += [f"{setattr_}({name}, {k!r}, {r(x)})" for k, x in v.attrs.items()]
        return cells_made[id(v)]

    def finish(self, outputs):
        """Add the output node, drop dead code; the GraphModule (None when it would do nothing)."""
        self.graph.output(tuple(outputs))
        self.graph.eliminate_dead_code(lambda n: n.meta.get("impure", False) or n.is_impure())
        calls = [n for n in self.graph.nodes if n.op not in ("placeholder", "output")]
        # a graph that only enters or leaves grad-mode blocks is no graph (torch compiles none): the
        # rebuild code sets the mode instead (eval_frame._finish)
        self.grad_only = bool(calls) and all(n.target is _set_grad_enabled for n in calls)
        if not calls or self.grad_only:
            return None
        return make_graph_module(None, self.graph)


# NOTE [ Guarding objects from outside ]
# An instance of a user class that reaches capture from the frame (an argument, a global, a closure cell,
# an attribute of one, or an object a break rebuilt and the next capture reads back) is guarded by its
# type, as torch guards a `UserDefinedObjectVariable` (TYPE_MATCH), not by its identity: what capture read
# from it is guarded on its own (an attribute read is a source `L['p'].scale` lifted with its guards; a
# method found on the class, by the absence of an instance attribute of that name), so another object of
# the same class with the same relevant state reuses the entry. Where capture needs the object itself as
# a value (`specialize`: a dict key, `hash`, an argument to a graph op) or its identity (`is`), the guard
# becomes identity (or the `is` result) there. Classes, functions, builtins and library objects stay
# guarded by identity.


def is_user_instance(value):
    """An instance of a Python class defined outside ember (not a class, function, module or builtin)."""
    t = type(value)
    if not t.__flags__ & _HEAPTYPE or isinstance(value, (type, types.FunctionType, types.MethodType)):
        return False
    mod = getattr(t, "__module__", None) or ""
    return not mod.startswith(("ember", "torch", "numpy"))


_HEAPTYPE = 1 << 9


def _name_of(source):
    s = source.replace("L['", "l_").replace("']", "_").replace("S[", "s_").replace("]", "_")
    return "".join(c if c.isalnum() else "_" for c in s).strip("_").lower() or "arg"


def _autocast():
    from .guards import autocast_state

    return autocast_state()


def _children(v):
    if isinstance(v, BaseListVariable):
        return v.items
    if isinstance(v, DictVariable):
        return list(v.items.values())
    if isinstance(v, ListIteratorVariable):
        return v.items
    if isinstance(v, SliceVariable):
        return [v.start, v.stop, v.step]
    if isinstance(v, UserFunctionVariable):
        out = list(v.defaults or ())
        if v.self_var is not None:
            out.append(v.self_var)
        for c in v.closure or ():
            if isinstance(c, CellVariable) and c.contents is not None:
                out.append(c.contents)
        return out
    if isinstance(v, GetAttrVariable):
        return [v.obj]
    if isinstance(v, UserObjectVariable):
        return list(v.attrs.values())
    return []


def const_like(value):
    e = _ember()
    if isinstance(value, e.Size):
        return SizeVariable([ConstantVariable(int(s)) for s in value])
    return ConstantVariable(value)


def unwrap_proxies(x):
    if isinstance(x, (TensorVariable, SymNodeVariable)):
        return x.proxy
    if isinstance(x, ConstantVariable):
        return x.value
    if isinstance(x, SizeVariable):
        return tuple(unwrap_proxies(i) for i in x.items)
    if isinstance(x, BaseListVariable):
        return x.kind(unwrap_proxies(i) for i in x.items)
    if isinstance(x, DictVariable):
        return {k: unwrap_proxies(v) for k, v in x.items.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(unwrap_proxies(i) for i in x)
    if isinstance(x, dict):
        return {k: unwrap_proxies(v) for k, v in x.items()}
    if isinstance(x, SliceVariable):
        return slice(unwrap_proxies(x.start), unwrap_proxies(x.stop), unwrap_proxies(x.step))
    if isinstance(x, (ObjectVariable, NNModuleVariable)) and x.source is None:
        return x.value
    if isinstance(x, ObjectVariable) and isinstance(x.value, _CONST_TYPES):
        return x.value
    raise Unsupported(f"cannot pass a {type(x).__name__} to a graph op")


def unwrap_examples(x):
    if isinstance(x, TensorVariable):
        return x.example
    if isinstance(x, SymNodeVariable):
        return x.value
    if isinstance(x, ConstantVariable):
        return x.value
    if isinstance(x, SizeVariable):
        return tuple(unwrap_examples(i) for i in x.items)
    if isinstance(x, BaseListVariable):
        return x.kind(unwrap_examples(i) for i in x.items)
    if isinstance(x, DictVariable):
        return {k: unwrap_examples(v) for k, v in x.items.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(unwrap_examples(i) for i in x)
    if isinstance(x, dict):
        return {k: unwrap_examples(v) for k, v in x.items()}
    if isinstance(x, SliceVariable):
        return slice(unwrap_examples(x.start), unwrap_examples(x.stop), unwrap_examples(x.step))
    if isinstance(x, (ObjectVariable, NNModuleVariable)):
        return x.value
    raise Unsupported(f"cannot pass a {type(x).__name__} to a graph op")


def _any_dynamic(x):
    if isinstance(x, TensorVariable):
        d = getattr(x, "dyn_dims", frozenset())
        return d is None or bool(d)
    if isinstance(x, SymNodeVariable):
        return True
    if isinstance(x, (list, tuple)):
        return any(_any_dynamic(i) for i in x)
    if isinstance(x, dict):
        return any(_any_dynamic(i) for i in x.values())
    if isinstance(x, BaseListVariable):
        return any(_any_dynamic(i) for i in x.items)
    if isinstance(x, DictVariable):
        return any(_any_dynamic(i) for i in x.items.values())
    if isinstance(x, SliceVariable):
        return any(_any_dynamic(i) for i in (x.start, x.stop, x.step))
    return False
