"""What capture does for each kind of operation on variables: calls, attributes, items, operators, iteration.

These are methods of `InstructionTranslator` (symbolic_convert.py imports them into the class), kept in
their own file so the interpreter file holds the bytecode and this one the Python semantics. Each either
returns a variable, adds graph nodes (through `self.out.call`), inlines (`inline`), or raises `Unsupported`
(a graph break). Whatever a decision read from an input becomes a guard, through `self.out.lift` (values)
or `self.specialize` (symbolic sizes).
"""

from __future__ import annotations

import abc
import builtins
import inspect
import math
import operator
import types

from . import config
from .exc import Unsupported
from .generators import GeneratorCMVariable, GeneratorVariable, gen_drain, is_contextmanager
from .output_graph import _CONST_TYPES, _set_grad_enabled
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
    SizeVariable,
    SliceVariable,
    SymNodeVariable,
    TensorVariable,
    TupleVariable,
    UserFunctionVariable,
    UserObjectVariable,
    VariableTracker,
)


class NoAttribute(Unsupported):
    pass


class SuperVariable(VariableTracker):
    def __init__(self, cls, obj):
        self.cls, self.obj = cls, obj


def _ember():
    import ember

    return ember


def _sc():
    from . import symbolic_convert

    return symbolic_convert


def _wrap_value(value):
    if type(value) in _CONST_TYPES or isinstance(value, _const_objects()):
        return ConstantVariable(value)
    if isinstance(value, (tuple, list)) and all(type(v) in _CONST_TYPES for v in value):
        return (TupleVariable if isinstance(value, tuple) else ListVariable)(
            [ConstantVariable(v) for v in value]
        )
    return ObjectVariable(value)


def _const_objects():
    e = _ember()
    return (e.dtype, e.device, e.memory_format, e.layout)


# -- in-graph callables ------------------------------------------------------------------------------------


def in_graph(fn):
    """Whether a call to `fn` becomes one graph node (an ember op or functional) rather than being inlined."""
    if getattr(fn, "_dynamo_allow_in_graph", False):
        return True
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", "")
    if name in _sc()._NOT_IN_GRAPH:
        return False
    if mod == "ember":
        return callable(fn) and not isinstance(fn, type)
    return mod.startswith(_sc()._GRAPH_MODULE_PREFIXES)


# -- attributes ----------------------------------------------------------------------------------------------


def var_getattr(self, obj, name):
    e = _ember()
    src = builtins.getattr(obj, "source", None)
    if src is not None and f"{src}.{name}" in self.out.attr_stores:  # written earlier in the region
        return self.out.attr_stores[f"{src}.{name}"][2]
    if isinstance(obj, TensorVariable):
        return _tensor_attr(self, obj, name)
    if isinstance(obj, NNModuleVariable):
        return _module_attr(self, obj, name)
    if isinstance(obj, UserObjectVariable):
        return _object_attr(self, obj, name)
    if isinstance(obj, SuperVariable):
        mro = obj.obj.python_type().__mro__ if isinstance(obj.obj, VariableTracker) else ()
        for klass in mro[mro.index(obj.cls) + 1 :] if obj.cls in mro else ():
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if isinstance(attr, types.FunctionType):
                    return UserFunctionVariable(attr, self.out.k(attr), self_var=obj.obj)
                if klass is object and name == "__init__" and isinstance(obj.obj, UserObjectVariable):
                    return UserFunctionVariable(_object_init, self.out.k(_object_init), self_var=obj.obj)
                break
        raise Unsupported(f"super().{name}")
    if isinstance(obj, BaseListVariable) and name in builtins.getattr(
        builtins.getattr(obj, "cls", None), "_fields", ()
    ):
        return obj.items[obj.cls._fields.index(name)]
    if isinstance(obj, (BaseListVariable, DictVariable)):
        return GetAttrVariable(obj, name)
    if isinstance(obj, SymNodeVariable):
        raise Unsupported(f"attribute {name} of a symbolic int")
    if isinstance(obj, UserFunctionVariable) and obj.value is not None:
        return _wrap_value(builtins.getattr(obj.value, name))
    if isinstance(obj, (ConstantVariable, ObjectVariable)):
        value = obj.value
        try:
            attr = builtins.getattr(value, name)
        except AttributeError:
            if obj.source is not None:  # (`hasattr` decided on it: a later call may have it)
                self.out.guards.add(f"not hasattr({obj.source}, {name!r})")
            raise NoAttribute(f"{type(value).__name__} has no attribute {name!r}") from None
        if isinstance(value, types.ModuleType):
            return _sc()._static_var(attr, self.out)
        if isinstance(attr, types.MethodType) and attr.__self__ is value and isinstance(value, type):
            # a classmethod read from its class: a new bound method each time; guard its function
            fn = attr.__func__
            if obj.source is not None:
                self.out.guards.add(f"{obj.source}.{name}.__func__ is {self.out.k(fn)}")
            return UserFunctionVariable(fn, self.out.k(fn), self_var=obj)
        if (
            isinstance(attr, (types.MethodType, types.BuiltinMethodType))
            and builtins.getattr(attr, "__self__", None) is value
            and not isinstance(value, type)
        ):
            _class_attr_guard(self, obj, name)
            return GetAttrVariable(obj, name)
        if obj.source is not None:
            return self.out.lift(attr, f"{obj.source}.{name}")
        if type(attr) in _CONST_TYPES or isinstance(attr, e.dtype):
            return ConstantVariable(attr)
        return _sc()._static_var(attr, self.out)
    if isinstance(obj, GradModeVariable):
        raise Unsupported(f"attribute {name} of a grad-mode context")
    raise Unsupported(f"attribute {name} of a {type(obj).__name__}")


def _tensor_attr(self, t, name):
    ex = t.example
    if name == "shape":
        return sizes(self, t)
    if name == "device" or name == "is_meta":  # the fake tensor is meta; the tensor it stands for is not
        return ConstantVariable(_ember().device("cpu") if name == "device" else False)
    if name in self_consts():
        if name == "requires_grad":
            return ConstantVariable(ex.requires_grad)
        return ConstantVariable(builtins.getattr(ex, name))
    if name in ("T", "mT", "H", "mH", "real", "imag", "data"):
        return self.out.call("call_function", builtins.getattr, (t, ConstantVariable(name)), {})
    if name in ("grad", "grad_fn", "_version", "_base"):
        raise Unsupported(f"Tensor.{name} read inside the region (autograd state capture does not model)")
    attr = builtins.getattr(type(ex), name, None)
    if callable(attr):
        return GetAttrVariable(t, name)
    raise Unsupported(f"Tensor attribute {name}")


def self_consts():
    return _sc()._TENSOR_CONST_ATTRS


def sizes(self, t):
    ex = t.example
    items = []
    dyn = builtins.getattr(t, "dyn_dims", frozenset())
    for d, s in enumerate(ex.shape):
        if dyn is None or d in dyn:
            node = self.out.graph.call_method("size", (t.proxy, d))
            node.meta["example_value"] = s
            expr = f"{t.source}.size({d})" if (t.source is not None and t.proxy.op == "placeholder") else None
            items.append(SymNodeVariable(node, int(s), expr))
        else:
            items.append(ConstantVariable(int(s)))
    return SizeVariable(items)


def _module_attr(self, obj, name):
    m, src = obj.value, obj.source
    d = m.__dict__
    if name in ("_call_impl", "__call__", "_wrapped_call_impl") and name not in d:
        return GetAttrVariable(obj, "_call_impl")
    for store in ("_parameters", "_buffers", "_modules"):
        if name in d.get(store, {}):
            return self.out.lift(d[store][name], f"{src}.{name}")
    if name in d:
        return self.out.lift(d[name], f"{src}.{name}", static=True)  # (torch specializes module ints)
    try:
        attr = inspect.getattr_static(m, name)
    except AttributeError:
        self.out.guards.add(f"not hasattr({src}, {name!r})")
        raise NoAttribute(f"{type(m).__name__} has no attribute {name!r}") from None
    if isinstance(attr, types.FunctionType):
        return UserFunctionVariable(attr, self.out.k(attr), self_var=obj)
    if isinstance(attr, property):
        return self.inline(UserFunctionVariable(attr.fget, self.out.k(attr.fget)), [obj], {})
    if isinstance(attr, staticmethod):
        return _sc()._static_var(attr.__func__, self.out)
    if isinstance(attr, classmethod):
        return UserFunctionVariable(
            attr.__func__, self.out.k(attr.__func__), self_var=ObjectVariable(type(m))
        )
    return self.out.lift(builtins.getattr(m, name), f"{src}.{name}")


# -- objects of user classes ---------------------------------------------------------------------------------
# See NOTE [ Objects made inside the region ] in variables.py and NOTE [ Guarding objects from outside ] in
# output_graph.py.


def _object_init(self, *args, **kwargs):
    """`object.__init__`, reached by `super().__init__()` from a class made inside the region."""
    return None


_PLAIN_METACLASSES = (type, abc.ABCMeta)


def constructible(cls):
    """Whether calling `cls` can be captured as making a new object and running its `__init__`: a Python
    class outside ember, whose bases are Python classes, with object's `__new__` and a `__dict__`."""
    if not isinstance(cls, type) or type(cls) not in _PLAIN_METACLASSES:
        return False
    if (builtins.getattr(cls, "__module__", None) or "").startswith(("ember", "torch", "numpy")):
        return False
    if isinstance(builtins.getattr(cls, "_fields", None), tuple) and issubclass(cls, tuple):
        return cls.__new__.__module__ is not None  # a namedtuple (made as a tuple variable: `construct`)
    mro = cls.__mro__
    if mro[-1] is not object or not all(k.__flags__ & _HEAPTYPE for k in mro[:-1]):
        return False
    if issubclass(cls, BaseException) or issubclass(cls, _ember().nn.Module):
        return False
    return cls.__new__ is object.__new__ and cls.__dictoffset__ != 0


_HEAPTYPE = 1 << 9


def construct(self, cls_var, args, kwargs):
    """`Cls(*args)` inside the region: a new object (no guard; nothing outside can hold it) and its
    `__init__` inlined."""
    cls = cls_var.value
    if issubclass(cls, tuple):  # a namedtuple: bind the fields as its generated __new__ does
        fields, defaults = cls._fields, builtins.getattr(cls, "_field_defaults", {})
        bound = dict(zip(fields, args))
        if len(args) > len(fields) or any(k in bound or k not in fields for k in kwargs):
            raise Unsupported(f"{cls.__name__}() called with arguments that do not match its fields")
        bound.update(kwargs)
        for f in fields:
            if f not in bound:
                if f not in defaults:
                    raise Unsupported(f"{cls.__name__}() missing argument {f!r}")
                bound[f] = _wrap_value(defaults[f])
        var = TupleVariable([bound[f] for f in fields])
        var.cls = cls
        return var
    obj = UserObjectVariable(cls, cls_var.source)
    init = inspect.getattr_static(cls, "__init__")
    if init is object.__init__:
        if args or kwargs:
            raise Unsupported(f"{cls.__name__}() takes no arguments")
        return obj
    if not isinstance(init, types.FunctionType):
        raise Unsupported(f"{cls.__name__}.__init__ is not a Python function")
    res = self.inline(UserFunctionVariable(init, self.out.k(init), self_var=obj), args, kwargs)
    if not self.is_none(res):
        raise Unsupported(f"{cls.__name__}.__init__ returned a value (TypeError)")
    return obj


def _construct_module(self, cls, args, kwargs):
    """`nn.ReLU()` or a user module built inside the region (forward).

    NOTE [ Modules built inside the region ]
    torch inlines the module's `__init__`, and breaks where it creates a parameter ("Attempted to use
    `torch.nn.Parameter()` constructor with Dynamo"). ember builds the module once, at capture, from the
    arguments' values (a module's `__init__` goes through `Module.__setattr__`, which capture does not
    model), with the random generator restored after it: a module that then holds no parameter or buffer
    has no state a call could change, and the entry uses that one module at every call (its attributes
    read through `K[i]`). A module with parameters or buffers is a graph break with torch's reason, and
    the call builds it in Python (each call a new one, guarded by type after the break).
    """
    vals = [self.specialize(a) for a in args]
    kw = {k: self.specialize(x) for k, x in kwargs.items()}
    e = _ember()
    rng = e.get_rng_state()
    try:
        m = cls(*vals, **kw)
    except Exception as err:
        raise Unsupported(f"building {cls.__name__} raised {type(err).__name__}: {err}") from None
    finally:
        e.set_rng_state(rng)
    if any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
        raise Unsupported(
            "Attempted to use `torch.nn.Parameter()` constructor with Dynamo: building "
            f"{cls.__name__}, a module with parameters or buffers, inside the region"
        )
    var = NNModuleVariable(m, self.out.k(m))
    var.made_inside = True  # (one module for every call: a store to it would outlive the call, a break)
    return var


def _object_attr(self, obj, name):
    """`obj.name` of an object made inside the region: its own attributes, then its class's."""
    if name in obj.attrs:
        return obj.attrs[name]
    if name == "__class__":
        return _type(self, obj)
    try:
        attr = inspect.getattr_static(obj.cls, name)
    except AttributeError:
        getattr_ = inspect.getattr_static(obj.cls, "__getattr__", None)
        if isinstance(getattr_, types.FunctionType):
            fn = UserFunctionVariable(getattr_, self.out.k(getattr_), self_var=obj)
            return self.inline(fn, [ConstantVariable(name)], {})
        raise NoAttribute(f"{obj.cls.__name__!r} object has no attribute {name!r}") from None
    if obj.cls_source is not None and isinstance(attr, (types.FunctionType, property, staticmethod)):
        # a method may be rebound on the class between calls: guard the one capture inlined
        found = builtins.getattr(obj.cls, name)
        self.out.guards.add(f"{obj.cls_source}.{name} is {self.out.k(found)}")
    if isinstance(attr, types.FunctionType):
        return UserFunctionVariable(attr, self.out.k(attr), self_var=obj)
    if isinstance(attr, property) and isinstance(attr.fget, types.FunctionType):
        return self.inline(UserFunctionVariable(attr.fget, self.out.k(attr.fget)), [obj], {})
    if isinstance(attr, staticmethod):
        return _sc()._static_var(attr.__func__, self.out)
    if isinstance(attr, classmethod):
        return UserFunctionVariable(attr.__func__, self.out.k(attr.__func__), self_var=_type(self, obj))
    if hasattr(type(attr), "__get__"):
        raise Unsupported(f"the descriptor {obj.cls.__name__}.{name} ({type(attr).__name__})")
    if obj.cls_source is not None:
        return self.out.lift(attr, f"{obj.cls_source}.{name}")
    return _wrap_value(attr)


def _class_attr_guard(self, obj, name):
    """A method found on the class of an object guarded by type: guard that no instance attribute hides it."""
    if getattr(obj, "by_type", False) and hasattr(obj.value, "__dict__"):
        self.out.guards.add(f"{name!r} not in {obj.source}.__dict__")


def enter_user_context(self, f, ctx):
    """`with obj:` where `obj` was made inside the region: `__enter__` and later `__exit__` are inlined, as
    torch inlines a `GenericContextWrappingVariable`'s. A break while it is active gives the frame up
    (NOTE [ When a break skips the frame ] in symbolic_convert.py)."""
    enter = self.var_getattr(ctx, "__enter__")
    if f is self.frame0:
        self.generic_ctx += 1
    value = self.call(enter, [], {})
    exit_ = ContextExitVariable(ctx)
    exit_.frame = f
    return exit_, value


def _is_autocast_class(v):
    if not isinstance(v, type) or v.__name__ != "autocast" or not v.__module__.startswith("ember."):
        return False
    from ..amp.autocast_mode import autocast

    return issubclass(v, autocast)


def enter_autocast(self, f, ctx):
    """`with ember.autocast(...)`: an `_enter_autocast` node, and the capture's own ops under the real
    autocast from here to the `_exit_autocast` node. A break inside splits the block (NOTE [ Autocast
    across a break ] in eval_frame.py)."""
    from .output_graph import _enter_autocast

    node = self.out.graph.call_function(_enter_autocast, ctx.args)
    node.meta["impure"] = True
    ctx.real.__enter__()
    self.autocast_entered.append(ctx.real)
    ctx.node = node
    if f is self.frame0:
        self.autocast_open.append(ctx)
    exit_ = ContextExitVariable(ctx)
    exit_.frame = f
    return exit_, ConstantVariable(None)  # (`with autocast(...) as a`: None under torch.compile)


def exit_autocast(self, fn, args):
    from .output_graph import _exit_autocast, _exit_resumed_autocast

    if not all(self.is_none(a) for a in args):
        raise Unsupported("an exception leaving an autocast block")
    ctx = fn.ctx
    if getattr(ctx, "resumed", None) is not None:  # a block entered before a break, by an AutocastExit
        state = (ctx.args[0], *ctx.resumed)
        self.out.graph.call_function(_exit_resumed_autocast, state).meta["impure"] = True
        _exit_resumed_autocast(*state)
        self.autocast_left.append(ctx.real)
        return ConstantVariable(None)
    self.out.graph.call_function(_exit_autocast, (ctx.node,)).meta["impure"] = True
    ctx.real.__exit__(None, None, None)
    self.autocast_entered.remove(ctx.real)
    if ctx in self.autocast_open:
        self.autocast_open.remove(ctx)
    return ConstantVariable(None)


def exit_user_context(self, fn, args):
    if not all(self.is_none(a) for a in args):
        raise Unsupported("an exception leaving a user context manager's with block")
    self.call(self.var_getattr(fn.ctx, "__exit__"), list(args), {})
    if fn.frame is self.frame0:
        self.generic_ctx -= 1
    return ConstantVariable(None)


# -- items ---------------------------------------------------------------------------------------------------


def getitem(self, obj, key):
    if isinstance(obj, TensorVariable):
        return self.out.call("call_function", operator.getitem, (obj, key), {})
    if isinstance(obj, BaseListVariable):
        if isinstance(key, SliceVariable):
            return type(obj)(obj.items[self.specialize(key)])
        if isinstance(key, TensorVariable):
            raise Unsupported("indexing a list with a tensor")
        try:
            return obj.items[self.specialize(key)]
        except (IndexError, TypeError) as err:
            raise Unsupported(f"list index: {err}") from None
    if isinstance(obj, DictVariable):
        k = self.specialize(key)
        if k not in obj.items:
            raise Unsupported(f"KeyError {k!r}")
        return obj.items[k]
    if isinstance(obj, NNModuleVariable):
        k = self.specialize(key)
        if isinstance(k, slice):
            raise Unsupported("slicing a module container")
        return self.out.lift(obj.value[k], f"{obj.source}[{k!r}]")
    if isinstance(obj, (ConstantVariable, ObjectVariable)):
        k = self.specialize(key)
        value = obj.value[k]
        if obj.source is not None and not isinstance(k, slice):
            return self.out.lift(value, f"{obj.source}[{k!r}]")
        return _wrap_value(value)
    raise Unsupported(f"indexing a {type(obj).__name__}")


def setitem(self, obj, key, value):
    if isinstance(obj, TensorVariable):
        self.out.call("call_function", operator.setitem, (obj, key, value), {})
        return
    if isinstance(obj, (ListVariable, DictVariable)):
        k = self.specialize(key)
        if isinstance(obj, ListVariable) and isinstance(k, slice):
            self.out.mutate(obj).items[k] = self.iterate(value)
        else:
            self.out.mutate(obj).items[k] = value
        return
    raise Unsupported(
        f"item assignment into a {type(obj).__name__} from outside the region "
        "(a side effect capture does not replay)"
    )


def iterate(self, v):
    """The variables iterating `v` yields (loops over them unroll)."""
    if isinstance(v, BaseListVariable):
        return list(v.items)
    if isinstance(v, ListIteratorVariable):
        out = v.items[v.index :]
        v.index = len(v.items)
        return out
    if isinstance(v, GeneratorVariable):
        return gen_drain(self, v)
    if isinstance(v, RangeVariable):
        return [ConstantVariable(i) for i in v.value]
    if isinstance(v, DictVariable):
        return [ConstantVariable(k) for k in v.items]
    if isinstance(v, NNModuleVariable):
        m = v.value
        keys = list(m._modules)
        self.out.guards.add(f"list({v.source}._modules) == {keys!r}")
        e = _ember()
        if isinstance(m, e.nn.ModuleDict):
            return [ConstantVariable(k) for k in keys]
        if isinstance(m, (e.nn.ModuleList, e.nn.Sequential)):
            return [self.out.lift(m._modules[k], f"{v.source}._modules[{k!r}]") for k in keys]
        if isinstance(m, (e.nn.ParameterList,)):
            return [self.out.lift(p, f"{v.source}[{i}]") for i, p in enumerate(m)]
        raise Unsupported(f"iteration over a {type(m).__name__}")
    if isinstance(v, TensorVariable):
        n = sizes(self, v).items[0] if v.example.dim() else None
        if n is None:
            raise Unsupported("iteration over a 0-d tensor")
        n = self.specialize(n)
        return [
            self.out.call("call_function", operator.getitem, (v, ConstantVariable(i)), {}) for i in range(n)
        ]
    if isinstance(v, ConstantVariable) and isinstance(v.value, (str, tuple, bytes)):
        return [ConstantVariable(x) for x in v.value]
    if isinstance(v, ObjectVariable) and isinstance(v.value, (dict, list, tuple)):
        if v.source is None:
            return [_wrap_value(x) for x in v.value]
        items = list(v.value)
        self.out.guards.add(
            f"list({v.source}) == {self.out.k(items)}"
            if isinstance(v.value, dict)
            else f"len({v.source}) == {len(items)}"
        )
        if isinstance(v.value, dict):
            return [_wrap_value(k) for k in items]
        return [self.out.lift(x, f"{v.source}[{i}]") for i, x in enumerate(items)]
    raise Unsupported(f"iteration over a {type(v).__name__}")


# -- operators -----------------------------------------------------------------------------------------------


def _expr(v):
    if isinstance(v, ConstantVariable):
        return repr(v.value)
    return v.expr


def sym_op(self, op, args):
    vals = [a.value for a in args]
    value = op(*vals)
    node = self.out.graph.call_function(
        op, tuple(a.proxy if isinstance(a, SymNodeVariable) else a.value for a in args)
    )
    node.meta["example_value"] = value
    exprs = [_expr(a) for a in args]
    sym = _sc()._SYM_OPS.get(op)
    expr = None
    if sym is not None and None not in exprs:
        expr = f"({sym}{exprs[0]})" if len(exprs) == 1 else f"({exprs[0]} {sym} {exprs[1]})"
    return SymNodeVariable(node, value, expr)


_INPLACE_TO_PLAIN = {}


def binop(self, op, a, b):
    sc = _sc()
    if not _INPLACE_TO_PLAIN:
        for k, v in sc._INPLACE.items():
            _INPLACE_TO_PLAIN[v] = sc._BINOPS[k]
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        return self.out.call("call_function", op, (a, b), {})
    plain = _INPLACE_TO_PLAIN.get(op, op)
    if isinstance(a, SymNodeVariable) or isinstance(b, SymNodeVariable):
        if all(isinstance(x, (SymNodeVariable, ConstantVariable)) for x in (a, b)):
            return sym_op(self, plain, (a, b))
        a = ConstantVariable(self.specialize(a)) if isinstance(a, SymNodeVariable) else a
        b = ConstantVariable(self.specialize(b)) if isinstance(b, SymNodeVariable) else b
    if isinstance(a, BaseListVariable) and plain in (operator.add, operator.mul, operator.eq, operator.ne):
        if plain is operator.add and isinstance(b, BaseListVariable):
            if op is operator.iadd and isinstance(a, ListVariable):
                self.out.mutate(a).items.extend(b.items)
                return a
            return (ListVariable if a.kind is list else TupleVariable)(a.items + b.items)
        if plain is operator.mul and isinstance(b, ConstantVariable):
            return type(a)(a.items * b.value)
    if isinstance(b, BaseListVariable) and plain is operator.mul and isinstance(a, ConstantVariable):
        return type(b)(b.items * a.value)
    av, bv = self.specialize(a), self.specialize(b)
    try:
        return _wrap_value(plain(av, bv))
    except Exception as err:
        raise Unsupported(f"{type(err).__name__} in a Python operator: {err}") from None


def unop(self, op, v):
    if isinstance(v, TensorVariable):
        return self.out.call("call_function", op, (v,), {})
    if isinstance(v, SymNodeVariable):
        return sym_op(self, op, (v,))
    return _wrap_value(op(self.specialize(v)))


def is_none(self, v):
    return isinstance(v, ConstantVariable) and v.value is None


def is_same(self, a, b):
    if a is b:
        return True
    if isinstance(a, TensorVariable) and isinstance(b, TensorVariable):
        return a.proxy is b.proxy
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        return False
    if isinstance(a, UserObjectVariable) or isinstance(b, UserObjectVariable):
        return False  # (an object made in the region is no other variable's value)
    if isinstance(a, (ConstantVariable, ObjectVariable, NNModuleVariable)) and isinstance(
        b, (ConstantVariable, ObjectVariable, NNModuleVariable)
    ):
        same = a.value is b.value
        if (a.by_type if isinstance(a, ObjectVariable) else False) or (
            b.by_type if isinstance(b, ObjectVariable) else False
        ):  # an object guarded by type only: the answer is guarded (NOTE [ Guarding objects from outside ])
            ea, eb = (x.source or self.out.k(x.value) for x in (a, b))
            self.out.guards.add(f"({ea} is {eb}) == {same}")
        return same
    if isinstance(a, UserFunctionVariable) and isinstance(b, UserFunctionVariable):
        return a.value is not None and a.value is b.value and a.self_var is b.self_var
    if isinstance(a, ConstantVariable) or isinstance(b, ConstantVariable):
        return False  # None/True/... is never a container, module or function variable
    raise Unsupported(f"`is` between a {type(a).__name__} and a {type(b).__name__}")


# -- calls ---------------------------------------------------------------------------------------------------


def call(self, fn, args, kwargs):
    if isinstance(fn, UserFunctionVariable):
        value = fn.value
        if value is not None and builtins.getattr(value, "_dynamo_disable", False):
            raise Unsupported(f"call to {value.__qualname__}, marked with torch.compiler.disable")
        if (
            value is not None
            and fn.self_var is None
            and (in_graph(value) or builtins.getattr(value, "_dynamo_assume_constant", False))
        ):
            return (
                call_object(self, value, args, kwargs)
                if not in_graph(value)
                else graph_call(self, value, args, kwargs)
            )
        return self.inline(fn, args, kwargs)
    if isinstance(fn, GetAttrVariable):
        return call_method(self, fn.obj, fn.name, args, kwargs)
    if isinstance(fn, NNModuleVariable):
        return self.call_module(fn, args, kwargs)
    if isinstance(fn, ContextExitVariable):
        if isinstance(fn.ctx, GradModeVariable):
            self.set_grad(fn.ctx.initial)
            return ConstantVariable(None)
        if isinstance(fn.ctx, GeneratorCMVariable):  # the normal exit: the generator must end
            if not all(self.is_none(a) for a in args):
                raise Unsupported("an exception leaving a contextmanager's with block")
            kind, _ = self.gen_resume(fn.ctx.gen)
            if kind == "yield":
                raise Unsupported("a contextmanager generator that did not stop (RuntimeError)")
            if fn.frame is self.frame0:
                self.generic_ctx -= 1
            return ConstantVariable(None)
    if isinstance(fn, ContextExitVariable) and isinstance(fn.ctx, UserObjectVariable):
        return exit_user_context(self, fn, args)
    if isinstance(fn, ContextExitVariable) and isinstance(fn.ctx, AutocastVariable):
        return exit_autocast(self, fn, args)
    if isinstance(fn, ObjectVariable) and constructible(fn.value):
        return construct(self, fn, args, kwargs)
    if isinstance(fn, UserObjectVariable) or (isinstance(fn, ObjectVariable) and fn.by_type):
        return self.call(self.var_getattr(fn, "__call__"), args, kwargs)
    if isinstance(fn, (ObjectVariable, ConstantVariable)):
        return call_object(self, fn.value, args, kwargs)
    raise Unsupported(f"call to a {type(fn).__name__}")


def graph_call(self, fn, args, kwargs):
    return self.out.call("call_function", fn, tuple(args), kwargs)


def call_object(self, v, args, kwargs):
    e = _ember()
    name = builtins.getattr(v, "__qualname__", None) or builtins.getattr(v, "__name__", None) or repr(v)
    if v is builtins.print:
        raise Unsupported("call to builtin print (a side effect): graph break")
    handler = _BUILTINS.get(v) if _hashable(v) else None
    if handler is not None:
        return handler(self, *args, **kwargs)
    if v is e.no_grad or v is e.enable_grad:
        if args or kwargs:
            raise Unsupported("no_grad/enable_grad used as a decorator inside the region")
        return GradModeVariable(v is e.enable_grad)
    if v is e.set_grad_enabled:
        mode = bool(self.specialize(args[0] if args else kwargs["mode"]))
        prev = self.out._grad()
        self.set_grad(mode)
        return GradModeVariable(mode, initial=prev)
    if v is e.is_grad_enabled:
        return ConstantVariable(self.out._grad())
    if builtins.getattr(v, "_dynamo_is_compiling", False):
        return ConstantVariable(True)
    if builtins.getattr(v, "_dynamo_disable", False):
        raise Unsupported(f"call to {name}, marked with torch.compiler.disable")
    if builtins.getattr(v, "_dynamo_assume_constant", False):
        return _wrap_value(
            v(*[self.specialize(a) for a in args], **{k: self.specialize(x) for k, x in kwargs.items()})
        )
    if v is e.Size:
        return SizeVariable(self.iterate(args[0]) if args else [])
    if v is object.__setattr__ and args and isinstance(args[0], UserObjectVariable) and not kwargs:
        args[0].attrs[self.specialize(args[1])] = args[2]  # (a frozen dataclass's __init__)
        return ConstantVariable(None)
    if _is_autocast_class(v):
        vals = [self.specialize(a) for a in args]
        kw = {k: self.specialize(x) for k, x in kwargs.items()}
        real = v(*vals, **kw)  # (validates the arguments, with the library's errors and warnings)
        return AutocastVariable(real, (real.device, real.fast_dtype, real._enabled, real._cache_enabled))
    if v is set or v is frozenset:
        items = [self.specialize(x) for x in self.iterate(args[0])] if args else []
        return SetVariable(items) if v is set else ConstantVariable(frozenset(items))
    if constructible(v):
        return construct(self, ObjectVariable(v), args, kwargs)
    if v is e.is_tensor:
        return ConstantVariable(isinstance(args[0], TensorVariable))
    if v is builtins.super:
        return _super(self, args)
    if in_graph(v):
        return graph_call(self, v, args, kwargs)
    if isinstance(v, type) and issubclass(v, e.nn.Module):
        return _construct_module(self, v, args, kwargs)
    if isinstance(v, types.FunctionType):
        return self.inline(UserFunctionVariable(v, self.out.k(v)), args, kwargs)
    if isinstance(v, types.MethodType) and isinstance(v.__func__, types.FunctionType):
        return self.inline(
            UserFunctionVariable(
                v.__func__, self.out.k(v.__func__), self_var=_sc()._static_var(v.__self__, self.out)
            ),
            args,
            kwargs,
        )
    mod = builtins.getattr(v, "__module__", None)
    if v in _OPERATOR_FNS:
        op = v
        if op is operator.getitem:
            return self.getitem(*args)
        return self.binop(op, *args) if len(args) == 2 else self.unop(op, *args)
    if (
        mod == "math"
        or v in _PURE_BUILTINS
        or (isinstance(v, type) and ((mod or "").startswith("ember") or issubclass(v, BaseException)))
    ):
        vals = [self.specialize(a) for a in args]
        kw = {k: self.specialize(x) for k, x in kwargs.items()}
        return _wrap_value(v(*vals, **kw))
    raise Unsupported(f"call to {name}: capture cannot follow it (a C function or an unsupported callable)")


def _hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _super(self, args):
    if args:
        cls, obj = self.specialize(args[0]), args[1]
    else:
        f = self.frames[-1]
        if "__class__" not in f.cells or not f.code.co_varnames:
            raise Unsupported("super() outside a method")
        c = f.cells["__class__"]
        cls = (
            c.real.cell_contents
            if builtins.getattr(c, "real", None) is not None
            else self.specialize(c.contents)
        )
        obj = f.locals.get(f.code.co_varnames[0]) or f.cells[f.code.co_varnames[0]].contents
    return SuperVariable(cls, obj)


def call_method(self, obj, name, args, kwargs):
    if isinstance(obj, TensorVariable):
        return tensor_method(self, obj, name, args, kwargs)
    if isinstance(obj, BaseListVariable):
        return _list_method(self, obj, name, args, kwargs)
    if isinstance(obj, SetVariable):
        return _set_method(self, obj, name, args, kwargs)
    if isinstance(obj, DictVariable):
        return _dict_method(self, obj, name, args, kwargs)
    if isinstance(obj, NNModuleVariable):
        return _module_method(self, obj, name, args, kwargs)
    if isinstance(obj, UserObjectVariable):
        return self.call(_object_attr(self, obj, name), args, kwargs)
    if isinstance(obj, (ConstantVariable, ObjectVariable)):
        bound = builtins.getattr(obj.value, name)
        if isinstance(bound, types.MethodType) and isinstance(bound.__func__, types.FunctionType):
            fn = bound.__func__
            own = bound.__self__ is obj.value
            if getattr(obj, "by_type", False):  # the type's method: guard that it still is, and not hidden
                _class_attr_guard(self, obj, name)
                read = f"type({obj.source}).{name}{'' if own else '.__func__'}"
                self.out.guards.add(f"{read} is {self.out.k(fn)}")
            self_var = obj if own else _sc()._static_var(bound.__self__, self.out)
            return self.inline(UserFunctionVariable(fn, self.out.k(fn), self_var=self_var), args, kwargs)
        if type(obj.value) in _CONST_TYPES or isinstance(obj.value, _const_objects()):
            vals = [self.specialize(a) for a in args]
            return _wrap_value(bound(*vals, **{k: self.specialize(v) for k, v in kwargs.items()}))
        raise Unsupported(f"call to method {name} of a {type(obj.value).__name__}")
    raise Unsupported(f"call to method {name} of a {type(obj).__name__}")


def tensor_method(self, t, name, args, kwargs):
    sc = _sc()
    if name == "item" and (config.capture_scalar_outputs or self.fullgraph):
        # the value is unknown at capture (an "unbacked" symbol): ops take the node; specializing it fails
        node = self.out.graph.call_method("item", (t.proxy,))
        node.meta["example_value"] = 1
        return SymNodeVariable(node, 1, None)
    if name in sc._DATA_METHODS:
        raise Unsupported(
            f"data dependent: {sc._DATA_METHODS[name]} needs the tensor's value "
            "(graph break; torch breaks here too with its default config)"
        )
    ex = t.example
    if name == "size":
        s = sizes(self, t)
        if args or kwargs:
            d = self.specialize(args[0] if args else kwargs["dim"])
            return s.items[d]
        return s
    if name in ("dim", "ndimension"):
        return ConstantVariable(ex.dim())
    if name in ("numel", "nelement"):
        out = ConstantVariable(1)
        for s in sizes(self, t).items:
            out = self.binop(operator.mul, out, s)
        return out
    if name == "__len__":
        return sizes(self, t).items[0]
    if name in ("stride", "is_contiguous", "storage_offset"):
        if builtins.getattr(t, "dyn_dims", frozenset()) != frozenset() and name != "is_contiguous":
            raise Unsupported(f"Tensor.{name} of a tensor with dynamic sizes")
    if name in (
        "stride",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "element_size",
        "get_device",
        "is_signed",
        "storage_offset",
        "is_inference",
        "has_names",
    ) or (name == "type" and not args):
        vals = [self.specialize(a) for a in args]
        return _wrap_value(
            builtins.getattr(ex, name)(*vals, **{k: self.specialize(v) for k, v in kwargs.items()})
        )
    return self.out.call("call_method", name, (t, *args), kwargs)


def _list_method(self, obj, name, args, kwargs):
    mutating = name in (
        "append",
        "extend",
        "pop",
        "insert",
        "remove",
        "clear",
        "reverse",
        "sort",
        "__setitem__",
    )
    if mutating:
        if obj.kind is not list:
            raise Unsupported(f"{obj.kind.__name__}.{name}")
        self.out.mutate(obj)  # replayed on the real list when the graph has run (see OutputGraph.mutate)
    if name == "append":
        obj.items.append(args[0])
        return ConstantVariable(None)
    if name == "extend":
        obj.items.extend(self.iterate(args[0]))
        return ConstantVariable(None)
    if name == "insert":
        obj.items.insert(self.specialize(args[0]), args[1])
        return ConstantVariable(None)
    if name == "pop":
        return obj.items.pop(self.specialize(args[0]) if args else -1)
    if name == "reverse":
        obj.items.reverse()
        return ConstantVariable(None)
    if name == "clear":
        obj.items.clear()
        return ConstantVariable(None)
    if name == "copy":
        return ListVariable(obj.items)
    if name == "__getitem__":
        return self.getitem(obj, args[0])
    if name == "numel" and isinstance(obj, SizeVariable):
        out = ConstantVariable(1)
        for s in obj.items:
            out = self.binop(operator.mul, out, s)
        return out
    if name in ("index", "count"):
        return _wrap_value(builtins.getattr(self.specialize(obj), name)(*[self.specialize(a) for a in args]))
    raise Unsupported(f"list method {name}")


def _set_method(self, obj, name, args, kwargs):
    if name in ("add", "discard", "remove", "update", "clear", "pop"):
        self.out.mutate(obj)
    if name == "add":
        k = self.specialize(args[0])
        obj.items[k] = ConstantVariable(k)
        return ConstantVariable(None)
    if name in ("discard", "remove"):
        k = self.specialize(args[0])
        if k not in obj.items and name == "remove":
            raise Unsupported(f"KeyError {k!r}")
        obj.items.pop(k, None)
        return ConstantVariable(None)
    if name == "update":
        for a in args:
            for x in self.iterate(a):
                k = self.specialize(x)
                obj.items[k] = ConstantVariable(k)
        return ConstantVariable(None)
    if name == "clear":
        obj.items.clear()
        return ConstantVariable(None)
    if name == "__contains__":
        return ConstantVariable(self.specialize(args[0]) in obj.items)
    if name == "copy":
        return SetVariable(obj.items)
    if name in ("union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset"):
        others = [{self.specialize(x) for x in self.iterate(a)} for a in args]
        res = builtins.getattr(set(obj.items), name)(*others)
        return SetVariable(res) if isinstance(res, set) else ConstantVariable(res)
    raise Unsupported(f"set method {name}")


def _dict_method(self, obj, name, args, kwargs):
    if name in ("update", "pop", "setdefault", "clear", "__setitem__", "popitem"):
        self.out.mutate(obj)
    if name == "items":
        return ListIteratorVariable([TupleVariable([ConstantVariable(k), v]) for k, v in obj.items.items()])
    if name == "keys":
        return ListIteratorVariable([ConstantVariable(k) for k in obj.items])
    if name == "values":
        return ListIteratorVariable(list(obj.items.values()))
    if name == "get":
        k = self.specialize(args[0])
        return obj.items.get(k, args[1] if len(args) > 1 else ConstantVariable(None))
    if name == "__getitem__":
        return self.getitem(obj, args[0])
    if name == "__contains__":
        return ConstantVariable(self.specialize(args[0]) in obj.items)
    if name == "copy":
        return DictVariable(obj.items, kind=obj.kind)
    if name == "update":
        src = args[0] if args else DictVariable({})
        obj.items.update(src.items if isinstance(src, DictVariable) else {})
        obj.items.update(kwargs)
        return ConstantVariable(None)
    if name == "pop":
        k = self.specialize(args[0])
        if k in obj.items:
            return obj.items.pop(k)
        if len(args) > 1:
            return args[1]
        raise Unsupported(f"KeyError {k!r}")
    if name == "setdefault":
        return obj.items.setdefault(
            self.specialize(args[0]), args[1] if len(args) > 1 else ConstantVariable(None)
        )
    raise Unsupported(f"dict method {name}")


def _module_method(self, obj, name, args, kwargs):
    m, src = obj.value, obj.source
    e = _ember()
    if name in (
        "parameters",
        "buffers",
        "named_parameters",
        "named_buffers",
        "children",
        "named_children",
        "modules",
        "named_modules",
    ):
        kind = name.replace("named_", "")
        recurse = name not in ("children", "named_children")
        real = list(builtins.getattr(m, "named_" + kind)())
        out = []
        for n, value in real:
            path = n.split(".") if n else []
            s = src + "".join(
                f"._modules[{p!r}]" for p in (path[:-1] if kind in ("parameters", "buffers") else path)
            )
            if kind in ("parameters", "buffers"):
                s += f"._{kind}[{path[-1]!r}]"
            v = self.out.lift(value, s)
            out.append(TupleVariable([ConstantVariable(n), v]) if name.startswith("named_") else v)
        del recurse
        return ListIteratorVariable(out)
    if isinstance(m, e.nn.ModuleDict) and name in ("items", "keys", "values"):
        keys = list(m._modules)
        self.out.guards.add(f"list({src}._modules) == {keys!r}")
        subs = [self.out.lift(m._modules[k], f"{src}._modules[{k!r}]") for k in keys]
        if name == "keys":
            return ListIteratorVariable([ConstantVariable(k) for k in keys])
        if name == "values":
            return ListIteratorVariable(subs)
        return ListIteratorVariable([TupleVariable([ConstantVariable(k), s]) for k, s in zip(keys, subs)])
    if name == "__len__":
        return builtins_len(self, obj)
    if name == "__getitem__":
        return self.getitem(obj, args[0])
    if name in ("forward", "__call__", "_call_impl"):
        if name == "forward":
            return self.inline(_forward_of(self, obj), args, kwargs)
        return self.call_module(obj, args, kwargs)
    attr = self.var_getattr(obj, name)
    return self.call(attr, args, kwargs)


def _forward_of(self, obj):
    m = obj.value
    if "forward" in m.__dict__:
        f = m.__dict__["forward"]
        if isinstance(f, types.MethodType):
            return UserFunctionVariable(f.__func__, self.out.k(f.__func__), self_var=obj)
        return self.out.lift(f, f"{obj.source}.forward")
    fwd = type(m).forward
    return UserFunctionVariable(fwd, self.out.k(fwd), self_var=obj)


def call_module(self, obj, args, kwargs):
    """`module(*args)`: forward pre-hooks, forward, forward hooks, all inlined (torch's `_call_impl`)."""
    from ..nn.modules import _hooks as H

    m, src = obj.value, obj.source
    g = self.out.guards
    globals_ = [
        H._global_forward_hooks,
        H._global_forward_pre_hooks,
        H._global_backward_hooks,
        H._global_backward_pre_hooks,
    ]
    g.add("not (" + " or ".join(self.out.k(d) for d in globals_) + ")")
    if any(globals_):
        raise Unsupported("global module hooks")
    if m._backward_hooks or m._backward_pre_hooks:
        raise Unsupported("module backward hooks (register_full_backward_hook)")
    g.add(f"not ({src}._backward_hooks or {src}._backward_pre_hooks)")
    for store in ("_forward_pre_hooks", "_forward_hooks"):
        g.add(f"list({src}.{store}) == {list(m.__dict__[store])!r}")
    if m._forward_pre_hooks_with_kwargs or m._forward_hooks_with_kwargs:
        raise Unsupported("module hooks with kwargs")
    for hid in m._forward_pre_hooks:
        hook = self.out.lift(m._forward_pre_hooks[hid], f"{src}._forward_pre_hooks[{hid!r}]")
        res = self.call(hook, [obj, TupleVariable(args)], {})
        if not self.is_none(res):
            args = list(res.items) if isinstance(res, TupleVariable) else [res]
    out = self.inline(_forward_of(self, obj), list(args), kwargs)
    for hid in m._forward_hooks:
        hook = self.out.lift(m._forward_hooks[hid], f"{src}._forward_hooks[{hid!r}]")
        res = self.call(hook, [obj, TupleVariable(args), out], {})
        if not self.is_none(res):
            out = res
    return out


def inline(self, fn, args, kwargs):
    """Interpret a Python function's bytecode in a new frame, its arguments bound to the given variables."""
    sc = _sc()
    if fn.value is not None and is_contextmanager(fn.value):
        wrapped = fn.value.__wrapped__
        gen = self.inline(UserFunctionVariable(wrapped, self.out.k(wrapped)), args, kwargs)
        return GeneratorCMVariable(gen)
    code = fn.code
    reason = sc.unsupported_frame_reason(code)
    if reason is not None:
        raise Unsupported(f"call to {code.co_name}: {reason}")
    if len(self.frames) > sc.MAX_INLINE_DEPTH:
        raise Unsupported("inlining too deep (recursion?)")
    if fn.self_var is not None:
        args = [fn.self_var, *args]
    fnexpr = fn.source if fn.source is not None else (self.out.k(fn.value) if fn.value is not None else None)
    locals_ = _bind(self, fn, fnexpr, list(args), dict(kwargs))
    cells = {}
    for name in code.co_cellvars:
        c = cells[name] = CellVariable()
        if name in locals_:
            c.contents = locals_.pop(name)
    for i, name in enumerate(code.co_freevars):
        if fn.closure is not None:
            cells[name] = fn.closure[i]
        else:
            c = cells[name] = CellVariable()
            c.real, c.real_source = fn.value.__closure__[i], f"{fnexpr}.__closure__[{i}]"
    gsrc = builtins.getattr(fn, "globals_src", None) or self.out.k(fn.globals)
    frame = sc.Frame(self, code, fn.globals, gsrc, locals_, cells, parent=self.frames[-1])
    if code.co_flags & 0x20:  # a generator function: its frame runs as it is consumed
        return GeneratorVariable(frame)
    self.frames.append(frame)
    try:
        return self.run_inlined(frame)
    finally:
        self.frames.pop()


def _bind(self, fn, fnexpr, args, kwargs):
    code = fn.code
    n, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    out = {}
    for i, a in enumerate(args[:n]):
        out[names[i]] = a
    extra = args[n:]
    idx = n + nkw
    if code.co_flags & 0x04:
        out[names[idx]] = TupleVariable(extra)
        idx += 1
    elif extra:
        raise Unsupported(f"{code.co_name}() takes {n} positional arguments but {len(args)} were given")
    kwd = {}
    for k, v in kwargs.items():
        if k in names[code.co_posonlyargcount : n + nkw]:
            if k in out:
                raise Unsupported(f"{code.co_name}() got multiple values for argument {k!r}")
            out[k] = v
        elif code.co_flags & 0x08:
            kwd[k] = v
        else:
            raise Unsupported(f"{code.co_name}() got an unexpected keyword argument {k!r}")
    if code.co_flags & 0x08:
        out[names[idx]] = DictVariable(kwd)
    missing = [nm for nm in names[:n] if nm not in out]
    if missing:
        defaults = fn.defaults if fn.value is None else (fn.value.__defaults__ or ())
        first = n - len(defaults)
        for i in range(first, n):
            nm = names[i]
            if nm in out:
                continue
            if fn.value is None:
                out[nm] = defaults[i - first]
            else:
                out[nm] = self.out.lift(defaults[i - first], f"{fnexpr}.__defaults__[{i - first}]")
    for nm in names[n : n + nkw]:
        if nm in out:
            continue
        if fn.value is None:
            kwdefs = fn.kwdefaults.items if isinstance(fn.kwdefaults, DictVariable) else {}
            if nm in kwdefs:
                out[nm] = kwdefs[nm]
        elif fn.value.__kwdefaults__ and nm in fn.value.__kwdefaults__:
            out[nm] = self.out.lift(fn.value.__kwdefaults__[nm], f"{fnexpr}.__kwdefaults__[{nm!r}]")
    still = [nm for nm in names[: n + nkw] if nm not in out]
    if still:
        raise Unsupported(f"{code.co_name}() missing required argument {still[0]!r}")
    return out


# -- builtins ------------------------------------------------------------------------------------------------


def builtins_len(self, v):
    if isinstance(v, (BaseListVariable, DictVariable)):
        return ConstantVariable(len(v.items))
    if isinstance(v, RangeVariable):
        return ConstantVariable(len(v.value))
    if isinstance(v, TensorVariable):
        if v.example.dim() == 0:
            raise Unsupported("len() of a 0-d tensor")
        return sizes(self, v).items[0]
    if isinstance(v, NNModuleVariable):
        self.out.guards.add(f"len({v.source}) == {len(v.value)}")
        return ConstantVariable(len(v.value))
    if isinstance(v, ListIteratorVariable):
        raise Unsupported("len() of an iterator")
    if isinstance(v, UserObjectVariable):
        return self.call(self.var_getattr(v, "__len__"), [], {})
    return ConstantVariable(len(self.specialize(v)))


def _isinstance(self, obj, cls):
    c = self.specialize(cls)
    if isinstance(obj, TensorVariable):
        t = builtins.getattr(obj, "pytype", None) or type(obj.example)
        if isinstance(c, tuple):
            return ConstantVariable(any(issubclass(t, x) for x in c))
        return ConstantVariable(issubclass(t, c))
    if isinstance(obj, (ObjectVariable, NNModuleVariable, ConstantVariable)):
        return ConstantVariable(isinstance(obj.value, c))
    if isinstance(obj, SymNodeVariable):
        return ConstantVariable(issubclass(type(obj.value), c))
    if isinstance(obj, (BaseListVariable, DictVariable)):
        t = obj.kind if not isinstance(obj, SizeVariable) else _ember().Size
        return ConstantVariable(
            issubclass(t, c) if not isinstance(c, tuple) else any(issubclass(t, x) for x in c)
        )
    if isinstance(obj, UserFunctionVariable):
        return ConstantVariable(isinstance(obj.value or (lambda: 0), c))
    if isinstance(obj, UserObjectVariable):
        return ConstantVariable(issubclass(obj.cls, c))
    raise Unsupported(f"isinstance of a {type(obj).__name__}")


def _range(self, *args):
    return RangeVariable(range(*[self.specialize(a) for a in args]))


def _enumerate(self, it, start=ConstantVariable(0)):
    s = self.specialize(start)
    return ListIteratorVariable(
        [TupleVariable([ConstantVariable(i + s), x]) for i, x in enumerate(self.iterate(it))]
    )


def _zip(self, *its, strict=None):
    lists = [self.iterate(i) for i in its]
    return ListIteratorVariable([TupleVariable(list(t)) for t in zip(*lists)])


def _list(self, it=None):
    return ListVariable(self.iterate(it) if it is not None else [])


def _tuple(self, it=None):
    return TupleVariable(self.iterate(it) if it is not None else [])


def _dict(self, it=None, **kw):
    items = {}
    if isinstance(it, DictVariable):
        items.update(it.items)
    elif it is not None:
        for pair in self.iterate(it):
            k, v = self.iterate(pair)
            items[self.specialize(k)] = v
    items.update(kw)
    return DictVariable(items)


def _iter(self, it):
    v = it
    if isinstance(v, (ListIteratorVariable, GeneratorVariable)):
        return v
    return ListIteratorVariable(self.iterate(v))


def _next(self, it, *default):
    if isinstance(it, GeneratorVariable):
        kind, v = self.gen_resume(it)
        if kind == "yield":
            return v
        if default:
            return default[0]
        raise Unsupported("StopIteration")
    if not isinstance(it, ListIteratorVariable):
        raise Unsupported("next() of a non-iterator")
    if it.index < len(it.items):
        it.index += 1
        return it.items[it.index - 1]
    if default:
        return default[0]
    raise Unsupported("StopIteration")


def _getattr(self, obj, name, *default):
    try:
        return self.var_getattr(obj, self.specialize(name))
    except NoAttribute:
        if default:
            return default[0]
        raise


def _hasattr(self, obj, name):
    try:
        self.var_getattr(obj, self.specialize(name))
        return ConstantVariable(True)
    except NoAttribute:
        return ConstantVariable(False)


def _scalar(kind):
    def conv(self, v=ConstantVariable(0), *rest):
        if isinstance(v, TensorVariable):
            raise Unsupported(f"data dependent: {kind.__name__}() of a tensor needs its value")
        return _wrap_value(kind(self.specialize(v), *[self.specialize(r) for r in rest]))

    return conv


def _minmax(kind):
    def fn(self, *args, **kwargs):
        if len(args) == 1:
            args = self.iterate(args[0])
        if any(isinstance(a, TensorVariable) for a in args):
            raise Unsupported(f"{kind.__name__}() over tensors compares their values")
        return _wrap_value(kind([self.specialize(a) for a in args]))

    return fn


def _sum(self, it, start=ConstantVariable(0)):
    out = start
    for x in self.iterate(it):
        out = self.binop(operator.add, out, x)
    return out


def _allany(kind):
    def fn(self, it):
        return ConstantVariable(kind(self.truth(x) for x in self.iterate(it)))

    return fn


def _abs(self, v):
    return self.unop(operator.abs, v)


def _type(self, v):
    if isinstance(v, UserObjectVariable):
        return self.out.lift(v.cls, v.cls_source) if v.cls_source else ObjectVariable(v.cls)
    if isinstance(v, TensorVariable):
        return ObjectVariable(builtins.getattr(v, "pytype", None) or type(v.example))
    if isinstance(v, (ObjectVariable, NNModuleVariable, ConstantVariable)):
        return ObjectVariable(type(v.value))
    return ObjectVariable(v.python_type())


def _callable(self, v):
    if isinstance(v, UserObjectVariable):
        return ConstantVariable(any("__call__" in k.__dict__ for k in v.cls.__mro__))
    if isinstance(v, (UserFunctionVariable, NNModuleVariable, GetAttrVariable)):
        return ConstantVariable(True)
    if isinstance(v, (ObjectVariable, ConstantVariable)):
        return ConstantVariable(callable(v.value))
    return ConstantVariable(False)


def _reversed(self, v):
    return ListIteratorVariable(list(reversed(self.iterate(v))))


def _sorted(self, v, **kw):
    vals = [self.specialize(x) for x in self.iterate(v)]
    return ListVariable(
        [_wrap_value(x) for x in sorted(vals, **{k: self.specialize(x) for k, x in kw.items()})]
    )


def _slice(self, *args):
    args = (
        list(args) + [ConstantVariable(None)] * (3 - len(args))
        if len(args) > 1
        else [ConstantVariable(None), args[0], ConstantVariable(None)]
    )
    return SliceVariable(*args)


_BUILTINS = {
    len: builtins_len,
    isinstance: _isinstance,
    range: _range,
    enumerate: _enumerate,
    zip: _zip,
    list: _list,
    tuple: _tuple,
    dict: _dict,
    iter: _iter,
    next: _next,
    getattr: _getattr,
    hasattr: _hasattr,
    int: _scalar(int),
    float: _scalar(float),
    bool: _scalar(bool),
    str: _scalar(str),
    min: _minmax(min),
    max: _minmax(max),
    sum: _sum,
    all: _allany(all),
    any: _allany(any),
    abs: _abs,
    type: _type,
    callable: _callable,
    reversed: _reversed,
    sorted: _sorted,
    slice: _slice,
}
_PURE_BUILTINS = {round, divmod, pow, hash, chr, ord, repr, format, issubclass}
_OPERATOR_FNS = {
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.matmul,
    operator.neg,
    operator.pos,
    operator.getitem,
    operator.and_,
    operator.or_,
    operator.xor,
    operator.lt,
    operator.le,
    operator.eq,
    operator.ne,
    operator.gt,
    operator.ge,
    operator.invert,
    operator.abs,
}
del math, NULL, _set_grad_enabled
