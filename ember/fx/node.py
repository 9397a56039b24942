"""`Node`: one operation of an fx `Graph`.

A node is one of six kinds (`op`), as in torch.fx:

- `placeholder`: a function input; `target` is the parameter's name, `args` its default (if any);
- `get_attr`: a read of a module attribute (a parameter, buffer or constant); `target` is its dotted path;
- `call_function`: `target(*args, **kwargs)` for a free function (`operator.add`, `ember.relu`, an
  `ember.ops.aten` OpOverload);
- `call_method`: `args[0].target(*args[1:], **kwargs)`, `target` a method name (`"view"`);
- `call_module`: `root.<target>(*args, **kwargs)`, a submodule call kept whole (a leaf module);
- `output`: the function's return value, `args[0]`.

`args` and `kwargs` may nest tuples, lists, dicts and slices of other nodes and constants; each node knows
its `users` (the nodes whose arguments mention it), kept in step whenever arguments change.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["Node", "map_arg", "map_aggregate", "Argument"]

Argument = Any

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output", "root")


def map_aggregate(a, fn: Callable):
    """Apply `fn` to every leaf of the nested structure `a` (tuples, lists, dicts, slices), rebuilding it."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn: Callable):
    """Apply `fn` to every `Node` in the nested argument structure `a`."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


class Node:
    """One operation in a `Graph` (see the module docstring for the six kinds)."""

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict, return_type=None):
        assert op in _OPS, f"unknown node kind {op!r}"
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict[Node, None] = {}
        self.users: dict[Node, None] = {}
        self.type = return_type
        self.meta: dict[str, Any] = {}
        self._prev = self._next = self
        self._erased = False
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list a graph's nodes form ---------------------------------------------------------
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move node `x` to just before this one."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: Node) -> None:
        """Move node `x` to just after this one."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ---- arguments and users ----------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """The nodes this node's arguments mention, in order of first mention."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, args, kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_arg(tuple(args), self._note_input)
        self._kwargs = map_arg(dict(kwargs), self._note_input)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def _note_input(self, n):
        self._input_nodes.setdefault(n)
        return n

    def update_arg(self, idx: int, arg) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb: Callable = lambda user: True,
                              *, propagate_meta: bool = False) -> list:
        """Make every user of this node use `replace_with` instead; return the users changed."""
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = []
        for user in list(self.users):
            if not delete_user_cb(user):
                continue
            user._update_args_kwargs(map_arg(user._args, lambda n: replace_with if n is self else n),
                                     map_arg(user._kwargs, lambda n: replace_with if n is self else n))
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        self._update_args_kwargs(map_arg(self._args, lambda n: new_input if n is old_input else n),
                                 map_arg(self._kwargs, lambda n: new_input if n is old_input else n))

    def is_impure(self) -> bool:
        """Whether dead-code elimination must keep this node although nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            op = getattr(self.target, "op", None)
            if op is not None and hasattr(op, "tags"):
                return "inplace" in op.tags or "nondeterministic_seeded" in op.tags or op.name.endswith("_")
            return getattr(self.target, "_is_impure", False)
        if self.op == "call_method":
            return self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module":
            mod = self.graph.owning_module
            sub = _fetch(mod, self.target) if mod is not None else None
            return bool(getattr(sub, "_is_impure", False))
        return False

    def format_node(self) -> str | None:
        """The node as `Graph.__str__` prints it: `%name : [num_users=N] = op[target=...](args = ...)`."""
        if self.op == "placeholder":
            default = "" if not self.args else f"(default={self.args[0]!r})"
            head = f"%{self.name} : [num_users={len(self.users)}]"
            return f"{head} = placeholder[target={self.target}]{default}"
        if self.op == "output":
            return f"return {self.args[0]}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = get_attr[target={self.target}]"
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={_target_str(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_kwargs(self.kwargs)})")

    def __repr__(self):
        return self.name

    def _pretty_print_target(self, target) -> str:
        return _target_str(target)


def _fetch(mod, path: str):
    for atom in path.split("."):
        mod = getattr(mod, atom, None)
    return mod


def _format_arg(a) -> str:
    if isinstance(a, tuple):
        inner = ", ".join(_format_arg(e) for e in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_format_arg(e) for e in a) + "]"
    if isinstance(a, dict):
        return _format_kwargs(a)
    if isinstance(a, Node):
        return "%" + a.name
    return str(a)


def _format_kwargs(k: dict) -> str:
    return "{" + ", ".join(f"{key}: {_format_arg(v)}" for key, v in k.items()) + "}"


def _target_str(target) -> str:
    """How a printed graph names a target: `operator.add`, `ember.relu`, `ember.ops.aten.mul.Tensor`."""
    if isinstance(target, str):
        return target
    from .graph import _qualified_name

    return _qualified_name(target)

