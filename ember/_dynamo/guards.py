"""Guards: the checks that decide whether a compiled entry may run for the values a call brings.

NOTE [ Guards as one generated function ]
Capture records a guard for every fact it relied on, as a Python expression over the frame's state (its
locals `L`, stack `S`, closure cells `C`, globals `G`, the function `F`, and objects kept alive in `K`):
`___check_tensor(L['x'], K[0])` (type, dtype, sizes, strides where static, requires_grad),
`L['n'] == 3`, `type(L['self']) is K[2]`, `L['self'].training == True`, `___grad_enabled() == True`.
At the end of capture they are joined with `and` into the source of one function, compiled once, so a
call's guard check is one Python call that stops at the first failure (torch builds a tree of C++ guard
managers for the same job). The first failing expression is the recompile reason (TORCH_LOGS=recompiles).
"""

from __future__ import annotations

import ast

from .._grad_state import state as _grad_state


class TensorSpec:
    """What a tensor guard checks: `dims[i]` is the static size or None for a dynamic one (size >= 2)."""

    __slots__ = ("cls", "dtype", "dims", "strides", "requires_grad", "contiguous")

    def __init__(self, t, dynamic_dims=()):
        self.cls, self.dtype, self.requires_grad = type(t), t.dtype, t.requires_grad
        self.dims = tuple(None if i in dynamic_dims else s for i, s in enumerate(t.shape))
        self.strides = t.stride() if not dynamic_dims else None
        self.contiguous = t.is_contiguous() if dynamic_dims else None

    def describe(self):
        dims = ", ".join("s" if d is None else str(d) for d in self.dims)
        return f"{self.cls.__name__}(dtype={self.dtype}, size=[{dims}], requires_grad={self.requires_grad})"


def check_tensor(t, spec):
    if type(t) is not spec.cls:
        return False
    if t.dtype is not spec.dtype or t.requires_grad != spec.requires_grad:
        return False
    shape = t.shape
    if spec.strides is not None:
        return shape == spec.dims and t.stride() == spec.strides
    if len(shape) != len(spec.dims):
        return False
    for s, d in zip(shape, spec.dims):
        if s != d and (d is not None or s < 2):
            return False
    return t.is_contiguous() == spec.contiguous


def grad_enabled():
    return _grad_state.enabled


def autocast_state():
    """(enabled, dtype) of CPU autocast, once ember has it (engineer A's area); (False, None) before."""
    import ember

    enabled = getattr(ember, "is_autocast_enabled", None)
    if enabled is None:
        return (False, None)
    try:
        on = enabled("cpu")
    except TypeError:
        on = enabled()
    get_dtype = getattr(ember, "get_autocast_dtype", None)
    return (bool(on), get_dtype("cpu") if (on and get_dtype is not None) else None)


GUARD_GLOBALS = {
    "___check_tensor": check_tensor,
    "___grad_enabled": grad_enabled,
    "___autocast_state": autocast_state,
}


class GuardSet:
    """The guards of one entry, in the order capture added them (cheap ones first within a source)."""

    def __init__(self, keep):
        self.exprs = []
        self._seen = set()
        self.keep = keep  # the K list shared with the entry

    def add(self, expr):
        if expr not in self._seen:
            self._seen.add(expr)
            self.exprs.append(expr)

    def compile(self):
        """The guard function `fn(L, S, C, F) -> bool`, and the list of expressions (for logs and explain)."""
        src = guard_source(self.exprs)
        g = dict(GUARD_GLOBALS, K=self.keep)
        exec(compile(src, "<guards>", "exec"), g)
        fn = g["___guard"]
        fn.exprs = list(self.exprs)
        return fn

    def first_failure(self, L, S, C, F):
        """The first failing guard, described as torch's recompile log describes it."""
        g = dict(GUARD_GLOBALS, K=self.keep, L=L, S=S, C=C, F=F)
        for e in self.exprs:
            try:
                if not eval(e, g):
                    return _describe_failure(e, g)
            except Exception:
                return e
        return None


# NOTE [ Shared sources in the guard function ]
# A module's guards read long attribute chains again and again: the small GPT's 199 guards each start from
# `L['self']` and walk `.blocks.layers._modules['0'].self_attn...` through `Module.__getattr__`, a Python
# function, so checking them cost ~0.4 ms a call, more than the rest of the compiled call. torch keeps its
# guards in a tree of C++ guard managers, one per source, each reading its value once. `guard_source` does
# the same in the generated function: a chain of attribute reads and constant subscripts (a *source*, rooted
# at L, S, C, F or K) read by two or more guards becomes a local variable, assigned from its longest shared
# prefix just before the first guard that reads it, and the guards become statements checked in their
# order, each returning False when it fails. The order, and so the short-circuit, stays that of the `and`
# chain: a variable is assigned only where the guard that first reads it would read it anyway, which is
# why only reads the guard makes unconditionally qualify (not the second operand of `and`/`or`, a branch of
# a conditional expression, a chained comparison's later operands, a lambda or a comprehension: `x is None
# or x.n == 2` must not read `x.n` first). A later guard may use the variable anywhere. A read that raises
# raises where the original chain would have, which `lookup` takes as a miss either way.

_ROOTS = frozenset("LSCFK")


def _chain(node):
    """The root name of a source (`L['x'].a[0]`: Name, Attribute, constant Subscript), or None."""
    while True:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            node = node.value
        else:
            return node.id if isinstance(node, ast.Name) and node.id in _ROOTS else None


def _sources(node, out, conditional=False):
    """Every source `node` reads, with whether its read is unconditional: [(ast_key, node, uncond)]."""
    if isinstance(node, (ast.Attribute, ast.Subscript)) and _chain(node) is not None:
        n = node
        while not isinstance(n, ast.Name):  # the chain and each of its prefixes
            out.append((ast.dump(n), n, not conditional))
            n = n.value
        return
    if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        conditional = True
    for name, value in ast.iter_fields(node):
        items = value if isinstance(value, list) else [value]
        for i, child in enumerate(items):
            if not isinstance(child, ast.AST):
                continue
            later = (
                (isinstance(node, ast.BoolOp) and name == "values" and i > 0)
                or (isinstance(node, ast.IfExp) and name in ("body", "orelse"))
                or (isinstance(node, ast.Compare) and name == "comparators" and (i > 0 or len(items) > 1))
            )
            _sources(child, out, conditional or later)


class _Hoist(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit(self, node):
        name = self.names.get(ast.dump(node)) if isinstance(node, (ast.Attribute, ast.Subscript)) else None
        if name is not None:
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        return super().visit(node)


def guard_source(exprs):
    """The source of `___guard(L, S, C, F)` checking `exprs` in order; see NOTE [ Shared sources in the
    guard function ]."""
    if not exprs:
        return "def ___guard(L, S, C, F):\n    return True\n"
    trees = [ast.parse(e, mode="eval").body for e in exprs]
    reads = [[] for _ in trees]
    for tree, out in zip(trees, reads):
        _sources(tree, out)
    users = {}
    for i, out in enumerate(reads):
        for key, _, _ in out:
            users.setdefault(key, set()).add(i)
    names, lines = {}, []  # source key -> variable once assigned
    for i, tree in enumerate(trees):
        for key, node, uncond in reversed(reads[i]):  # prefixes before the chains built on them
            if uncond and key not in names and len(users[key]) > 1:
                value = _Hoist(names).visit(ast.parse(ast.unparse(node), mode="eval").body)
                names[key] = f"___s{len(names)}"
                lines.append(f"{names[key]} = {ast.unparse(value)}")
        check = ast.unparse(_Hoist(names).visit(tree))
        lines.append(f"if not ({check}):\n        return False")
    if not names:  # nothing shared: one `and` chain (a few guards check fastest so)
        return "def ___guard(L, S, C, F):\n    return " + " and ".join(f"({e})" for e in exprs) + "\n"
    return "def ___guard(L, S, C, F):\n" + "".join(f"    {ln}\n" for ln in lines) + "    return True\n"


_SCALAR_TYPE = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}  # fmt: skip


def _describe_failure(expr, g):
    """`tensor 'x' size mismatch at index 0. expected 2, actual 3` for a tensor guard (torch's
    TensorCheck::check_verbose wording and order); the expression itself for any other guard."""
    if not expr.startswith("___check_tensor(") or not expr.endswith(")"):
        return expr
    src, spec = expr[len("___check_tensor(") : -1].rsplit(", ", 1)
    t, spec = eval(src, g), eval(spec, g)
    name = src[3:-2] if src.startswith("L['") and src.endswith("']") else src
    why = None
    if type(t) is not spec.cls:
        why = f"type mismatch. expected {spec.cls.__name__}, actual {type(t).__name__}"
    elif t.dtype is not spec.dtype:
        dt = lambda d: _SCALAR_TYPE.get(str(d).split(".")[-1], str(d))  # noqa: E731
        why = f"dtype mismatch. expected {dt(spec.dtype)}, actual {dt(t.dtype)}"
    elif t.requires_grad != spec.requires_grad:
        why = f"requires_grad mismatch. expected requires_grad={int(spec.requires_grad)}"
    elif t.dim() != len(spec.dims):
        why = f"rank mismatch. expected {len(spec.dims)}, actual {t.dim()}"
    else:
        for i, (s, d) in enumerate(zip(t.shape, spec.dims)):
            if s != d and (d is not None or s < 2):
                why = f"size mismatch at index {i}. expected {d}, actual {s}"
                break
        else:
            strides = t.stride()
            for i, (s, d) in enumerate(zip(strides, spec.strides or ())):
                if s != d:
                    why = f"stride mismatch at index {i}. expected {d}, actual {s}"
                    break
    return f"tensor '{name}' {why}" if why else expr
