"""ember.utils._pytree: torch's Python pytree utilities (flatten nested containers to leaves and back).

Libraries import this private module of torch (torch.utils._pytree) for `tree_map`, `tree_flatten` and
friends, so ember has it with torch's names and behaviour: the registered node types are tuple, list, dict,
namedtuple, OrderedDict, defaultdict and deque (dicts flatten in insertion order, as torch's; `None` is a
leaf), `register_pytree_node` adds more, a `TreeSpec` prints and serializes (`treespec_dumps`, JSON
protocol 1) as torch's, and key paths (`tree_flatten_with_path`, `keystr`) name leaves the same way.
"""

import dataclasses
import functools
import importlib
import json
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from enum import Enum
from typing import Any, Callable, Iterable, NamedTuple

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
           "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
           "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten",
           "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map",
           "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads", "treespec_pprint",
           "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
           "is_structseq_class", "is_structseq_instance"]

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
KeyPath = tuple[Any, ...]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[Any, Any]], Any]]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: FlattenWithKeysFn | None


class _SerializeNodeDef(NamedTuple):
    typ: type
    serialized_type_name: str
    to_dumpable_context: ToDumpableContextFn | None
    from_dumpable_context: FromDumpableContextFn | None


SUPPORTED_NODES: dict[type, NodeDef] = {}
SUPPORTED_SERIALIZED_TYPES: dict[type, _SerializeNodeDef] = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict[str, type] = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register a container-like type as a pytree node.

    Args:
        cls: the type to register.
        flatten_fn: ``node -> (children, context)``.
        unflatten_fn: ``(children, context) -> node``.
        serialized_type_name (str, optional): the name `treespec_dumps` writes for the type.
        to_dumpable_context, from_dumpable_context (callable, optional): the context to and from JSON.
        flatten_with_keys_fn (callable, optional): like ``flatten_fn`` but returning ``[(key, child)]``.
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """The older private spelling of `register_pytree_node` (it overwrites with a warning)."""
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. "
                      "Please use `to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None, flatten_with_keys_fn=None):
    if cls in SUPPORTED_NODES:
        warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                      stacklevel=2)
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or "
                         "registered.")
    name = NO_SERIALIZED_TYPE_NAME_FOUND if serialized_type_name is None else serialized_type_name
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, name, to_dumpable_context, from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[name] = cls


def _deregister_pytree_node(cls):
    del SUPPORTED_NODES[cls]
    node_def = SUPPORTED_SERIALIZED_TYPES.pop(cls)
    del SERIALIZED_TYPE_TO_PYTHON_TYPE[node_def.serialized_type_name]


# ---- key paths ---------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as a string (`[0]['w'].bias`)."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value a key path leads to in `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- namedtuples and structseqs ---------------------------------------------------------------------------

def is_namedtuple_class(cls):
    """Whether `cls` is a namedtuple class (a tuple subclass with `_fields`, `_make`, `_asdict`)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    """Whether `obj` is a namedtuple instance or class."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    """Whether `obj` is a namedtuple instance."""
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10


def is_structseq_class(cls):
    """Whether `cls` is a C struct-sequence class (`os.stat_result`, `time.struct_time`)."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not bool(cls.__flags__ & _Py_TPFLAGS_BASETYPE))


def is_structseq(obj):
    """Whether `obj` is a struct-sequence instance or class."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    """Whether `obj` is a struct-sequence instance."""
    return is_structseq_class(type(obj))


# ---- the built-in node types ------------------------------------------------------------------------------

def _seq_keys(flatten):
    def with_keys(d):
        values, context = flatten(d)
        return [(SequenceKey(i), v) for i, v in enumerate(values)], context
    return with_keys


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    values, context = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(context._fields, values)], context


def _namedtuple_serialize(context):
    node_def = SUPPORTED_SERIALIZED_TYPES.get(context)
    if node_def is None:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we didn't "
                                  "register a serializated_type_name. Please register using `_register_namedtuple`.")
    if node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't "
                                  "find a serializated_type_name. Please register using `_register_namedtuple`.")
    return node_def.serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} because we "
                                  "couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _register_namedtuple(cls, *, serialized_type_name):
    """Register a namedtuple class under a name, so specs holding it serialize."""
    _private_register_pytree_node(cls, _namedtuple_flatten, lambda values, context: context(*values),
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _defaultdict_serialize(context):
    factory, keys = context
    return {"default_factory_module": factory.__module__, "default_factory_name": factory.__qualname__,
            "dict_context": keys}


def _defaultdict_deserialize(dumpable):
    factory = getattr(importlib.import_module(dumpable["default_factory_module"]), dumpable["default_factory_name"])
    return [factory, dumpable["dict_context"]]


_private_register_pytree_node(tuple, lambda d: (list(d), None), lambda v, c: tuple(v),
                              serialized_type_name="builtins.tuple",
                              flatten_with_keys_fn=_seq_keys(lambda d: (list(d), None)))
_private_register_pytree_node(list, lambda d: (d, None), lambda v, c: list(v), serialized_type_name="builtins.list",
                              flatten_with_keys_fn=_seq_keys(lambda d: (d, None)))
_private_register_pytree_node(dict, _dict_flatten, lambda v, c: dict(zip(c, v)), serialized_type_name="builtins.dict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
_private_register_pytree_node(namedtuple, _namedtuple_flatten, lambda v, c: c(*v),
                              serialized_type_name="collections.namedtuple",
                              to_dumpable_context=_namedtuple_serialize,
                              from_dumpable_context=_namedtuple_deserialize,
                              flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _dict_flatten, lambda v, c: OrderedDict(zip(c, v)),
                              serialized_type_name="collections.OrderedDict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten,
                              lambda v, c: defaultdict(c[0], dict(zip(c[1], v))),
                              serialized_type_name="collections.defaultdict",
                              to_dumpable_context=_defaultdict_serialize,
                              from_dumpable_context=_defaultdict_deserialize,
                              flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, lambda d: (list(d), d.maxlen), lambda v, c: deque(v, maxlen=c),
                              serialized_type_name="collections.deque",
                              flatten_with_keys_fn=_seq_keys(lambda d: (list(d), d.maxlen)))

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _register_return_types():
    """torch registers its `torch.return_types` struct sequences (what `max(dim)`, `sort`, ... return) as
    node types of their own; ember's are namedtuple classes, registered the same way and looked up first."""
    from .. import return_types

    def flatten(seq):
        return list(seq), None

    def flatten_with_keys(seq):
        return [(SequenceKey(i), v) for i, v in enumerate(seq)], None

    for name in dir(return_types):
        cls = getattr(return_types, name)
        if isinstance(cls, type) and issubclass(cls, tuple) and cls not in SUPPORTED_NODES:
            _private_register_pytree_node(cls, flatten, lambda values, context, cls=cls: cls(*values),
                                          flatten_with_keys_fn=flatten_with_keys)
            _RETURN_TYPES.add(cls)


_RETURN_TYPES = set()
_register_return_types()


def _get_node_type(tree):
    node_type = type(tree)
    if node_type in _RETURN_TYPES:
        return node_type
    return namedtuple if is_namedtuple_class(node_type) else node_type


def tree_is_leaf(tree, is_leaf=None):
    """Whether `tree` is a leaf: not a registered node type, or `is_leaf(tree)` says so."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


# ---- TreeSpec ---------------------------------------------------------------------------------------------

class TreeSpec:
    """The structure of a pytree: node type, context and children specs (a leaf has type None)."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        self.type, self._context, self._children = type, context, children_specs
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            self.num_nodes, self.num_leaves, self.num_children = 1, 1, 0
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
            self.num_children = len(children_specs)

    def __setattr__(self, name, value):
        if hasattr(self, "num_children"):
            raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")
        object.__setattr__(self, name, value)

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        text = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self.num_children > 0:
            indent += 2
            text += self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            text += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self._children[1:])
        return text + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if isinstance(other, TreeSpec):
            return (str(self.type) == str(other.type) and self._context == other._context
                    and self._children == other._children)
        return NotImplemented

    def __hash__(self):
        t, c = self.type, self._context
        if t is defaultdict:
            c = (c[0], tuple(c[1]))
        elif t in (dict, OrderedDict):
            c = tuple(c)
        elif not (t is None or t in BUILTIN_TYPES):
            c = None
        return hash((t, c, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single "
                      "child, or `treespec.children()` to get all children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        """Whether the spec is a leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """The child specs (a copy of the list)."""
        return self._children.copy()

    def child(self, index):
        """The child spec at `index`."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves (the spec must be a prefix of the tree's structure)."""
        out = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            both_dicts = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
            if not both_dicts and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if both_dicts:
                keys = self._context if self.type is not defaultdict else self._context[1]
                got, expected = set(node), set(keys)
                if got != expected:
                    missing, extra = expected - got, got - expected
                    message = (f"; missing key(s): {missing}" if missing else "") + \
                        (f"; extra key(s): {extra}" if extra else "")
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; expected "
                                     f"{self._context!r}, but got {context!r}.")
        for subtree, spec in zip(children, self._children):
            spec._flatten_up_to(subtree, out)

    def unflatten(self, leaves):
        """The pytree of this structure holding `leaves`."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        start, children = 0, []
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (deprecated in torch: use `TreeSpec.is_leaf()`)."""

    __slots__ = ()

    def __init__(self):
        super().__init__(None, None, [])


_LEAF_SPEC = LeafSpec()


def treespec_leaf():
    """The spec of a leaf."""
    return _LEAF_SPEC


# ---- flatten, unflatten, map ------------------------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
    """(leaves, spec) of a pytree; `tree_unflatten(leaves, spec)` rebuilds it."""
    leaves = []
    return leaves, _flatten_into(tree, is_leaf, leaves)


def _flatten_into(node, is_leaf, leaves):
    # A module-level function, not a closure calling itself: a recursive closure is a reference cycle
    # (function -> cell -> function) that keeps `leaves`, and the tensors in it, alive until the garbage
    # collector runs (NOTE [ No reference cycles ] in tests/test_leaks.py).
    if tree_is_leaf(node, is_leaf=is_leaf):
        leaves.append(node)
        return _LEAF_SPEC
    node_type = _get_node_type(node)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
    return TreeSpec(node_type, context, [_flatten_into(c, is_leaf, leaves) for c in children])


def tree_unflatten(leaves, treespec):
    """The pytree of `treespec`'s structure holding `leaves`."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """An iterator over the leaves of a pytree."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
    else:
        children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
        for child in children:
            yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree, is_leaf=None):
    """The leaves of a pytree, as a list."""
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree, is_leaf=None):
    """The TreeSpec of a pytree."""
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A new pytree of `tree`'s structure with `func(leaf, *leaves of rests)` at each leaf (each of `rests`
    has `tree`'s structure as a prefix)."""
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call `func` on each leaf (as `tree_map`) for its side effect; return `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    deque(map(func, *flat), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """Decorator: the function applies only to leaves of the given type(s) (or passing the predicate),
    returning the other leaves unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """`tree_map` applying `func` only to leaves of the given type(s) or passing the predicate."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """`tree_map_` applying `func` only to leaves of the given type(s) or passing the predicate."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether `pred` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether `pred` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether `pred` holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether `pred` holds for some leaf of the given type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def arg_tree_leaves(*args, **kwargs):
    """`tree_leaves((args, kwargs))`, a little faster."""
    leaves = []
    for a in (*args, *kwargs.values()):
        leaves.extend(tree_iter(a))
    return leaves


# ---- key paths --------------------------------------------------------------------------------------------

def _generate_key_paths(key_path, tree, is_leaf=None):
    if is_leaf and is_leaf(tree):
        yield key_path, tree
        return
    node_type = _get_node_type(tree)
    handler = SUPPORTED_NODES.get(node_type)
    if not handler:
        yield key_path, tree
        return
    if not handler.flatten_with_keys_fn:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    key_children, _ = handler.flatten_with_keys_fn(tree)
    for k, c in key_children:
        yield from _generate_key_paths((*key_path, k), c, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)], spec) of a pytree."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_generate_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    """[(key path, leaf)] of a pytree."""
    return list(_generate_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """`tree_map` whose `func` gets the leaf's key path first."""
    keypath_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*keypath_leaves)) + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns))


# ---- serialization (JSON protocol 1, as torch's) ----------------------------------------------------------

class EnumEncoder(json.JSONEncoder):
    def default(self, obj):
        if isinstance(obj, Enum):
            return {"__enum__": True, "fqn": f"{obj.__class__.__module__}:{obj.__class__.__qualname__}",
                    "name": obj.name}
        return super().default(obj)


def _enum_object_hook(obj):
    if "__enum__" in obj:
        modname, _, classname = obj["fqn"].partition(":")
        enum_cls = importlib.import_module(modname)
        for attr in classname.split("."):
            enum_cls = getattr(enum_cls, attr)
        return enum_cls[obj["name"]]
    return obj


def _treespec_to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if spec.type not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    node_def = SUPPORTED_SERIALIZED_TYPES[spec.type]
    if node_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {spec.type} found. Please update your "
                                  "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if node_def.to_dumpable_context is None:
        try:
            context = json.dumps(spec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    else:
        context = node_def.to_dumpable_context(spec._context)
    return {"type": node_def.serialized_type_name, "context": context,
            "children_spec": [_treespec_to_json(c) for c in spec._children]}


def _json_to_treespec(schema):
    if schema["type"] is None and schema["context"] is None and len(schema["children_spec"]) == 0:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    node_def = SUPPORTED_SERIALIZED_TYPES[typ]
    if node_def.from_dumpable_context is None:
        context = json.loads(schema["context"], object_hook=_enum_object_hook)
    else:
        context = node_def.from_dumpable_context(schema["context"])
    return TreeSpec(typ, context, [_json_to_treespec(c) for c in schema["children_spec"]])


_SUPPORTED_PROTOCOLS = {1: (_treespec_to_json, _json_to_treespec)}


def treespec_dumps(treespec, protocol=None):
    """A TreeSpec as a JSON string (torch's format, so either library reads the other's)."""
    protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL if protocol is None else protocol
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS.keys())}")
    return json.dumps((protocol, _SUPPORTED_PROTOCOLS[protocol][0](treespec)), cls=EnumEncoder)


def treespec_loads(serialized):
    """The TreeSpec of a `treespec_dumps` string."""
    protocol, schema = json.loads(serialized)
    if protocol in _SUPPORTED_PROTOCOLS:
        return _SUPPORTED_PROTOCOLS[protocol][1](schema)
    raise ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS.keys())}")


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The spec drawn as its pytree with `*` at the leaves."""
    return repr(tree_unflatten([_Asterisk()] * treespec.num_leaves, treespec))


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
