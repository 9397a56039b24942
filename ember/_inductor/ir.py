"""The loop-level IR the code generators print: affine indices, scalar expressions, buffers, computed nodes.

A tensor value in a graph being compiled is a `TensorView`: a shape, a dtype and `fn(index) -> Expr`, the
scalar expression of the element at `index` (a list of `Affine`s, one per dimension). Pointwise ops build
new `fn`s from their inputs' (nothing is computed or stored), views re-index their input's `fn` (a
transpose swaps two entries of the index; an expand puts 0 where the dimension was broadcast), so a chain of
pointwise ops and views is one expression tree over loads from real buffers.

A value is *realized* when it must exist in memory: a graph output, an argument of an op with no lowering (a
`Fallback`, run by ember's eager kernel), a reduction's result, or an expensive value read by several
consumers. Realizing a computed value makes a `Pointwise` node (the loop over its shape storing `fn`) or a
`Reduction` node (a loop over its kept dimensions, each element the reduction of `fn` over the reduced
ones); the scheduler groups these into kernels and the code generators print each kernel as C or NumPy.

NOTE [ Affine indices ]
Every index is affine in the loop variables (`offset + sum(coef * var)`): loads from a strided buffer, and
every view lowered here (permute, transpose, expand, unsqueeze, squeeze, select, slice, splitting reshapes),
keep it so. A reshape that merges dimensions of a computed value would need division and modulo; that value
is realized first (contiguously), and the reshape becomes a strided load of it. Keeping indices affine is
what lets the NumPy backend print every load as one `as_strided` view of its buffer.

NOTE [ Half precision is computed in float ]
float16 and bfloat16 values are computed in float32 and rounded (to nearest even) only when stored, as
torch's inductor does on the CPU (its `legalize_lowp_fp_dtype`: loads widen to float, a `to_dtype` to a
half type inside a kernel becomes one to float, constants are float, stores round). So a `Load` of a half
buffer has the buffer's dtype (the code generators widen it as they load it), and every `Const` and `Op`
of a half dtype is made in float32 (`compute_dtype`): a fused chain of half ops rounds once, at its store,
and gives torch.compile's bits, not eager's (eager rounds after every op). Where a value is stored is then
part of the result: lowering stores a half value where inductor would (NOTE [ When a value is realized ]
in lowering.py).
"""

from __future__ import annotations

__all__ = ["Affine", "Expr", "Load", "Const", "Op", "TensorView", "Buffer", "Pointwise", "Reduction",
           "Fallback", "EagerView", "Unsupported", "contiguous_strides", "LOWP", "compute_dtype"]

LOWP = frozenset(("float16", "bfloat16"))


def compute_dtype(dtype: str) -> str:
    """The dtype a value of `dtype` is computed in (NOTE [ Half precision is computed in float ])."""
    return "float32" if dtype in LOWP else dtype


class Unsupported(Exception):
    """A lowering declines a node (a dtype or argument it does not handle): the node runs as a fallback."""


def contiguous_strides(shape) -> tuple:
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


class Affine:
    """`offset + sum(coef * var)` over loop-variable names (NOTE [ Affine indices ])."""

    __slots__ = ("offset", "coefs")

    def __init__(self, offset: int = 0, coefs: tuple = ()):
        self.offset = offset
        self.coefs = coefs  # sorted ((var, coef), ...), no zero coefficient

    @staticmethod
    def var(name: str) -> Affine:
        return Affine(0, ((name, 1),))

    def __add__(self, other):
        if isinstance(other, int):
            return Affine(self.offset + other, self.coefs)
        d = dict(self.coefs)
        for v, c in other.coefs:
            d[v] = d.get(v, 0) + c
        return Affine(self.offset + other.offset, tuple(sorted((v, c) for v, c in d.items() if c)))

    __radd__ = __add__

    def __mul__(self, k: int):
        if k == 0:
            return Affine(0, ())
        return Affine(self.offset * k, tuple((v, c * k) for v, c in self.coefs))

    __rmul__ = __mul__

    def coef(self, var: str) -> int:
        for v, c in self.coefs:
            if v == var:
                return c
        return 0

    def key(self):
        return (self.offset, self.coefs)

    def __repr__(self):
        parts = [(v if c == 1 else f"{c}*{v}") for v, c in self.coefs]
        if self.offset or not parts:
            parts.append(str(self.offset))
        return " + ".join(parts)


# ---- scalar expressions --------------------------------------------------------------------------------

class Expr:
    __slots__ = ("dtype", "_key")


class Load(Expr):
    """The element of buffer `buf` at `index` (elements from the buffer's first element)."""

    __slots__ = ("buf", "index")

    def __init__(self, buf: str, index: Affine, dtype: str):
        self.buf, self.index, self.dtype, self._key = buf, index, dtype, None

    def key(self):
        if self._key is None:
            self._key = ("load", self.buf, self.index.key(), self.dtype)
        return self._key


class Const(Expr):
    __slots__ = ("value",)

    def __init__(self, value, dtype: str):
        self.value, self.dtype, self._key = value, compute_dtype(dtype), None

    def key(self):
        if self._key is None:
            self._key = ("const", repr(self.value), self.dtype)
        return self._key


class Op(Expr):
    """`name(*args)` computed in `dtype` (the arguments are already of the dtype the op computes in)."""

    __slots__ = ("name", "args", "param")

    def __init__(self, name: str, args: tuple, dtype: str, param=None):
        self.name, self.args, self.param, self._key = name, tuple(args), param, None
        self.dtype = compute_dtype(dtype)

    def key(self):
        if self._key is None:
            self._key = ("op", self.name, tuple(a.key() for a in self.args), self.dtype, repr(self.param))
        return self._key


def walk(e: Expr, seen=None):
    """Every distinct sub-expression of `e`, operands before their users."""
    seen = {} if seen is None else seen
    stack = [(e, False)]
    while stack:
        x, done = stack.pop()
        k = x.key()
        if k in seen:
            continue
        if done or not isinstance(x, Op):
            seen[k] = x
            continue
        stack.append((x, True))
        for a in reversed(x.args):
            stack.append((a, False))
    return list(seen.values())


# ---- tensors and buffers ---------------------------------------------------------------------------------

class Buffer:
    """Memory that exists at run time: a graph input, a kernel's output, a fallback's output, an eager view.
    `strides` are in elements from the tensor's first element (the pointer a kernel receives)."""

    def __init__(self, name: str, shape: tuple, strides: tuple, dtype: str):
        self.name, self.shape, self.strides, self.dtype = name, tuple(shape), tuple(strides), dtype

    def load(self, index) -> Expr:
        a = Affine()
        for i, st, s in zip(index, self.strides, self.shape):
            if s != 1:
                a = a + i * st
        return Load(self.name, a, self.dtype)


class TensorView:
    """A value during lowering: `fn(index) -> Expr` over `shape` (see the module docstring).

    `buffer` is set once the value is realized (its `fn` then loads from it); `view_of` = (fx node, input
    TensorView) for a view op, which can be realized without a copy by running the view eagerly on its
    realized input."""

    __slots__ = ("shape", "dtype", "fn", "buffer", "view_of", "origin", "inlined")

    def __init__(self, shape, dtype: str, fn, buffer: Buffer | None = None, view_of=None, origin=None):
        self.shape, self.dtype, self.fn = tuple(shape), dtype, fn
        self.buffer, self.view_of, self.origin = buffer, view_of, origin
        self.inlined = []  # the graph nodes whose computation this value's expression contains

    @staticmethod
    def of(buf: Buffer, origin=None) -> TensorView:
        return TensorView(buf.shape, buf.dtype, buf.load, buffer=buf, origin=origin)

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


# ---- what the scheduler schedules ----------------------------------------------------------------------------

class Pointwise:
    """Store `fn(index)` at every index of `shape` into buffer `name` with `strides`."""

    kind = "pointwise"

    def __init__(self, buffer: Buffer, fn, origins):
        self.buffer, self.fn, self.origins = buffer, fn, origins
        self.groups = None  # the loop's dimensions merged by the scheduler (NOTE [ Merged loop dimensions ])

    @property
    def name(self):
        return self.buffer.name

    def domain(self):
        return self.buffer.shape


class Reduction:
    """For each index of `outer`, reduce `fn(outer_index, reduced_index)` (in `acc_dtype`) over `reduced` with
    `reduction` ("sum", "prod", "max", "min", "any", "all") and store it in `dtype` at the contiguous
    position of the outer index."""

    kind = "reduction"

    def __init__(self, buffer: Buffer, outer, reduced, reduction: str, acc_dtype: str, fn, origins):
        self.buffer, self.outer, self.reduced = buffer, tuple(outer), tuple(reduced)
        self.reduction, self.acc_dtype, self.fn, self.origins = reduction, acc_dtype, fn, origins

    @property
    def name(self):
        return self.buffer.name


class Fallback:
    """A node with no lowering, run by ember's eager kernel (torch's ExternKernel): `target(*args, **kwargs)`
    with the graph's non-tensor arguments as they are and tensors read from buffers; its results are
    stored in `outputs` (one buffer name per tensor of the flattened result, None for others)."""

    kind = "fallback"

    def __init__(self, node, args, kwargs, outputs, expected):
        self.node, self.args, self.kwargs, self.outputs, self.expected = node, args, kwargs, outputs, expected


class EagerView:
    """A view op run eagerly on a realized tensor (no copy), for a fallback's argument or a graph output."""

    kind = "view"

    def __init__(self, node, source: str, output: str):
        self.node, self.source, self.output = node, source, output
