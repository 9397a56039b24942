"""What the symbolic interpreter puts on its stack: one `VariableTracker` per Python value it tracks.

NOTE [ Variables and sources ]
Capture never runs the user's code; it interprets its bytecode over *variables*, each describing what a
value will be when the compiled code runs:
  - `TensorVariable`: a graph node (`proxy`) and a fake tensor (`example`, made by the capture's
    FakeTensorMode: the real one's shape, dtype, strides and requires_grad), through which shapes
    propagate without data;
  - `SymNodeVariable`: an int (a size, or arithmetic on sizes) that stays symbolic because a size it
    comes from is dynamic: a graph node plus its value now and, when it is a function of the inputs, a
    Python expression that recomputes it (used to guard it when Python needs its value);
  - `ConstantVariable`: a Python value capture may bake in (int, float, str, None, dtype, ...);
  - containers (`ListVariable`, `TupleVariable`, `DictVariable`, `SetVariable`, `RangeVariable`,
    iterators) of variables;
  - `NNModuleVariable`, `UserFunctionVariable`, `ObjectVariable` (any other Python object: its attribute
    stores are replayed after the graph, `OutputGraph.store_attr`);
  - `UserObjectVariable`: an object of a user class made inside the region (no source, no guard);
  - context managers capture models: grad mode, autocast, generator `contextmanager`s and user classes.
A variable that came from the frame's inputs has a `source`: a Python expression over the frame's
locals `L`, stack `S`, the function `F` and kept objects `K` (`L['self'].fc.weight`). Everything capture
decided from such a value becomes a guard on that expression (guards.py), and a tensor with a source is a
graph input (placeholder) read from it at each call; parameters and buffers are inputs, never constants.
"""

from __future__ import annotations

NULL = type("NULL", (), {"__repr__": lambda self: "NULL"})()  # CPython's NULL stack slot (PUSH_NULL)


class VariableTracker:
    source = None

    def python_type(self):
        raise NotImplementedError(type(self).__name__)

    def __repr__(self):
        return f"{type(self).__name__}({getattr(self, 'value', '')!r})"


class ConstantVariable(VariableTracker):
    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)


class TensorVariable(VariableTracker):
    def __init__(self, proxy, example, source=None):
        self.proxy, self.example, self.source = proxy, example, source

    def python_type(self):
        return type(self.example)

    def __repr__(self):
        return f"TensorVariable({self.proxy.name}, {tuple(self.example.shape)})"


class SymNodeVariable(VariableTracker):
    """An int or bool that depends on a dynamic size; see NOTE [ Dynamic shapes ] in symbolic_convert.py."""

    def __init__(self, proxy, value, expr=None):
        self.proxy, self.value, self.expr = proxy, value, expr

    def python_type(self):
        return type(self.value)


class BaseListVariable(VariableTracker):
    kind = list

    def __init__(self, items, source=None):
        self.items, self.source = list(items), source

    def python_type(self):
        return self.kind

    def __repr__(self):
        return f"{type(self).__name__}({self.items!r})"


class ListVariable(BaseListVariable):
    kind = list


class TupleVariable(BaseListVariable):
    kind = tuple


class SizeVariable(TupleVariable):
    """`tensor.shape`: a tuple of ints and symbolic sizes (ember.Size when rebuilt)."""


class DictVariable(VariableTracker):
    def __init__(self, items, source=None, kind=dict):
        self.items, self.source, self.kind = dict(items), source, kind  # keys are constants

    def python_type(self):
        return self.kind


class SetVariable(DictVariable):
    """A set made inside the region (`{1, 2}`, `set(...)`): its elements are constants, kept as the keys of
    `items` (each mapped to its own variable), so membership, `len` and iteration work as for a dict."""

    def __init__(self, items, source=None):
        super().__init__({k: ConstantVariable(k) for k in items}, source, kind=set)


class UserObjectVariable(VariableTracker):
    """An instance of a user class made inside the region (`Point(1, 2)`, a dataclass, a context manager).

    NOTE [ Objects made inside the region ]
    Nothing outside the region can hold such an object, so it needs no guard and no source: capture runs
    its `__init__` (inlined, like any call) with `self` bound to this variable, and `attrs` holds what its
    attribute stores wrote. Reads look in `attrs`, then in the class (methods bind to this variable;
    class attributes are read through the class's source, so they are guarded). Where the frame's state
    is rebuilt (a graph break, the return) the real object is made by `object.__new__(cls)` and its
    attributes set (output_graph.py, `_object_expr`); a capture that later reads it back from the frame
    guards only its type (an object from outside: NOTE [ Guarding objects from outside ] there), so a
    new object per call does not recompile. torch's counterpart is `UserDefinedObjectVariable` tracked
    by `side_effects.track_new_user_defined_object`.
    """

    def __init__(self, cls, cls_source=None):
        self.cls, self.cls_source, self.attrs = cls, cls_source, {}

    def python_type(self):
        return self.cls

    def __repr__(self):
        return f"UserObjectVariable({self.cls.__name__})"


class SliceVariable(VariableTracker):
    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def python_type(self):
        return slice


class RangeVariable(VariableTracker):
    def __init__(self, value):
        self.value = value  # a real range of ints (symbolic bounds are specialized first)

    def python_type(self):
        return range


class ListIteratorVariable(VariableTracker):
    """An iterator over known items (a list, tuple, range, dict keys, zip, enumerate), advanced
    symbolically."""

    def __init__(self, items, index=0):
        self.items, self.index = list(items), index

    def python_type(self):
        return type(iter([]))


class NNModuleVariable(VariableTracker):
    def __init__(self, module, source):
        self.value, self.source = module, source

    def python_type(self):
        return type(self.value)


class UserFunctionVariable(VariableTracker):
    """A Python function capture inlines; `closure` holds variables for cells made inside the region."""

    def __init__(
        self,
        fn,
        source=None,
        *,
        code=None,
        globals_=None,
        defaults=None,
        kwdefaults=None,
        closure=None,
        self_var=None,
    ):
        self.value, self.source = fn, source
        self.code = code if code is not None else fn.__code__
        self.globals = globals_ if globals_ is not None else fn.__globals__
        self.defaults = defaults
        self.kwdefaults = kwdefaults
        self.closure = closure  # list of CellVariable for a function made by MAKE_FUNCTION in the region
        self.self_var = self_var  # a bound method's self

    def python_type(self):
        return type(self.value) if self.value is not None else type(lambda: 0)


class CellVariable(VariableTracker):
    def __init__(self, contents=None):
        self.contents = contents


class GetAttrVariable(VariableTracker):
    """`obj.name` not yet called: a tensor method, or a method of a container/module variable."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class ObjectVariable(VariableTracker):
    """Any other Python object: a global function of a library, a class, a builtin, a dtype...

    `by_type`: an instance of a user class read from a source and guarded by its type only (NOTE [ Guarding
    objects from outside ] in output_graph.py)."""

    by_type = False

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)

    def __repr__(self):
        return f"ObjectVariable({type(self.value).__name__})"


class GradModeVariable(VariableTracker):
    """`torch.no_grad()` / `enable_grad()` / `set_grad_enabled(b)` as a context manager inside the region."""

    def __init__(self, target, initial=None):
        self.target, self.initial = target, initial

    def python_type(self):
        return type(self)


class AutocastVariable(VariableTracker):
    """`ember.autocast(...)` made inside the region (its arguments as constants); `with` on it adds the
    `_enter_autocast`/`_exit_autocast` nodes to the graph and runs the capture's fake ops under it, so
    their dtypes are autocast's (torch's `AutocastModeVariable`)."""

    def __init__(self, real, args):
        self.real, self.args = real, args  # a real autocast object (entered while capture is inside it)

    def python_type(self):
        return type(self.real)


class ContextExitVariable(VariableTracker):
    """The `__exit__` BEFORE_WITH leaves on the stack for a context capture handles."""

    def __init__(self, ctx):
        self.ctx = ctx
