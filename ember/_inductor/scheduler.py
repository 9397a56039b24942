"""Fusion: group the lowered `Pointwise` and `Reduction` nodes into kernels, each one loop nest.

A `Kernel` has an *outer* domain (the leading dimensions every member shares, the loop OpenMP splits
across threads) and members, each with its own inner loops inside one outer iteration: a pointwise member
loops over the rest of its shape, a reduction member over its reduced dimensions (its kept dimensions are
exactly the outer ones). Softmax over the last dimension is then one kernel: per row, a max loop, a
sum-of-exp loop, and the loop writing the outputs.

NOTE [ Fusing in order ]
Nodes are taken in the order lowering produced them (a topological order); a node joins the current
kernel when its domain fits (a pointwise node's shape starts with the outer domain; a reduction's kept
shape equals it; a kernel of only pointwise nodes of one shape takes any prefix of it) and everything it
reads from buffers written inside the kernel lies in the same outer iteration (NOTE [ Row-local reads ]);
otherwise it starts the next kernel. A fallback or eager view ends the kernel, since it may read what the
kernel wrote.

NOTE [ Merged loop dimensions ]
A pointwise kernel loops over its shape with the last dimension inside (NOTE [ Fusing in order ]). Where that
dimension is short (the 16 columns of a 16x16 feature map), GCC unrolls the inner loop completely before it
vectorizes, then fails to vectorize the unrolled code when the body has a select (relu's backward,
`mask ? g : 0`, became a compare and a branch per element: 4.1 ms for 1M floats against 0.4 ms vectorized),
and every outer iteration pays the division of its flat index into the outer variables. So after fusion,
a kernel of pointwise members (all of one shape, as fusion requires) merges adjacent dimensions d, d+1 of
its loop wherever every load and every store of every member has coef(d) == coef(d+1) * size(d+1): the
element (.., i, j, ..) is then at the same place as the element i * size(d+1) + j of one dimension, so the
merged variable indexes every buffer with coef(d+1). Size-1 dimensions are dropped (their index is 0). A
contiguous kernel becomes one loop over all its elements, a bias broadcast over NCHW a loop over N, C and
H*W. A member reading a buffer written earlier in the kernel must read it in the iteration that wrote it
(NOTE [ Row-local reads ]); a merged loop's iterations are not the unmerged loop's, so a kernel merges only
when every such read is of the very element its own iteration wrote (the writer's store index).
compile_fx merges the C backend's kernels (the NumPy backend's loads are whole-array views, which gain
nothing); codegen_c and `threads.work` see the merged loop through `member_exprs`, which indexes a member
by its `groups`.

NOTE [ Row-local reads ]
Threads run different outer iterations at once, so a member may read a buffer written by an earlier member
of its kernel only where that member wrote in the same outer iteration: the writer's buffer is contiguous,
the read's coefficients on the outer variables equal the writer's strides, and the rest of the read stays
inside the row. Any other read (a transposed one, a shifted one) goes to the next kernel.
"""

from __future__ import annotations

from .ir import Affine, EagerView, Fallback, Pointwise, Reduction, contiguous_strides

__all__ = ["Kernel", "schedule", "merge_dimensions"]


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


class Kernel:
    def __init__(self, name: str):
        self.name = name
        self.members: list = []
        self.outer: tuple = ()
        self.has_reduction = False
        self.column = False

    def numel(self) -> int:
        n = 0
        for m in self.members:
            n = max(n, _prod(m.buffer.shape) if isinstance(m, Pointwise) else _prod(m.outer) * _prod(m.reduced))
        return n

    def writes(self):
        return {m.name: m for m in self.members}


def member_exprs(m, k: int):
    """(expression(s), {var: size}) of member `m` with the first `k` dimensions as outer variables x0..;
    a pointwise member's store index comes with it."""
    if isinstance(m, Pointwise):
        if m.groups is not None:  # NOTE [ Merged loop dimensions ]
            return _merged_exprs(m, k)
        shape = m.buffer.shape
        names = [f"x{d}" if d < k else f"y{d - k}" for d in range(len(shape))]
        idx = [Affine.var(n) for n in names]
        return m.fn(idx), m.buffer.load(idx).index, dict(zip(names, shape))
    onames = [f"x{d}" for d in range(len(m.outer))]
    rnames = [f"r{d}" for d in range(len(m.reduced))]
    e = m.fn([Affine.var(n) for n in onames], [Affine.var(n) for n in rnames])
    return e, None, dict(zip(onames + rnames, m.outer + m.reduced))


def _merged_exprs(m, k: int):
    """member_exprs of a pointwise member whose loop merges dimension groups `m.groups` (lists of dimension
    numbers; the size-1 dimensions in none): each group's last dimension gets the group's variable, the others
    index 0 (NOTE [ Merged loop dimensions ])."""
    shape = m.buffer.shape
    idx = [Affine() for _ in shape]
    sizes = {}
    for g, dims in enumerate(m.groups):
        name = f"x{g}" if g < k else f"y{g - k}"
        idx[dims[-1]] = Affine.var(name)
        sizes[name] = _prod(shape[d] for d in dims)
    return m.fn(idx), m.buffer.load(idx).index, sizes


def merge_dimensions(kernel: Kernel) -> None:
    """Merge the loop dimensions of a kernel of pointwise members where every access allows it (NOTE [ Merged
    loop dimensions ]); its `outer` becomes the merged loop's outer part."""
    if kernel.has_reduction or not kernel.members:
        return
    shape = kernel.members[0].buffer.shape
    if any(m.buffer.shape != shape for m in kernel.members):
        return
    nd = len(shape)
    names = [f"v{d}" for d in range(nd)]
    indices, stores = [], {}
    for m in kernel.members:
        idx = [Affine.var(n) for n in names]
        e, store = m.fn(idx), m.buffer.load(idx).index
        for ld in _loads(e):
            if ld.buf in stores and ld.index.key() != stores[ld.buf].key():
                return  # a read of the kernel's own result elsewhere than where it was written (the NOTE)
            indices.append(ld.index)
        stores[m.name] = store
        indices.append(store)
    dims = [d for d in range(nd) if shape[d] != 1]
    groups = []
    for d in dims:
        if groups and all(a.coef(names[groups[-1][-1]]) == a.coef(names[d]) * shape[d] for a in indices):
            groups[-1].append(d)
        else:
            groups.append([d])
    if len(groups) == nd:
        return
    for m in kernel.members:
        m.groups = groups
    sizes = tuple(_prod(shape[d] for d in g) for g in groups)
    kernel.outer = sizes[:-1] if len(sizes) >= 2 else sizes


def _loads(e):
    from .ir import Load, walk
    return [x for x in walk(e) if isinstance(x, Load)]


def _row_local(load, writer, k: int, sizes: dict) -> bool:
    """NOTE [ Row-local reads ]"""
    wb = writer.buffer
    if tuple(st for s, st in zip(wb.shape, wb.strides) if s != 1) != \
            tuple(st for s, st in zip(wb.shape, contiguous_strides(wb.shape)) if s != 1):
        return False
    if k == 0:
        return True
    shape = wb.shape if isinstance(writer, Pointwise) else writer.outer
    strides = contiguous_strides(shape)
    row = _prod(shape[k:])
    span = load.index.offset
    if span < 0:
        return False
    for d in range(k):
        if shape[d] != 1 and load.index.coef(f"x{d}") != strides[d]:
            return False
    for v, c in load.index.coefs:
        if v.startswith("x"):
            if int(v[1:]) >= k:
                return False
            continue
        if c < 0:
            return False
        span += c * (sizes[v] - 1)
    return span < row


def _column(m) -> bool:
    from .codegen_c import is_column
    if not isinstance(m, Reduction):
        return False
    e, _, _ = member_exprs(m, len(m.outer))
    return is_column(m, _loads(e))


def _fits(kernel: Kernel, m):
    """The kernel's outer length if `m` joins it (NOTE [ Fusing in order ]), else None. A column reduction
    (NOTE [ Column reductions ] in codegen_c.py) is a kernel of its own."""
    if kernel.members and (_column(m) or kernel.column):
        return None
    if not kernel.members:
        if isinstance(m, Reduction):
            return len(m.outer)
        shape = m.buffer.shape
        return len(shape) - 1 if len(shape) >= 2 else len(shape)
    outer = kernel.outer
    if isinstance(m, Reduction):
        if kernel.has_reduction:
            return len(outer) if m.outer == outer else None
        shapes = {x.buffer.shape for x in kernel.members}
        return len(m.outer) if all(s[:len(m.outer)] == m.outer for s in shapes) else None
    shape = m.buffer.shape
    if kernel.has_reduction:
        return len(outer) if shape[:len(outer)] == outer else None
    first = kernel.members[0].buffer.shape
    return len(outer) if shape == first else None


def schedule(steps, name_prefix="kernel"):
    """The steps with consecutive fusible Pointwise/Reduction nodes grouped into `Kernel`s."""
    out, cur = [], None
    n = 0

    def close():
        nonlocal cur
        if cur is not None and cur.members:
            out.append(cur)
        cur = None

    for s in steps:
        if isinstance(s, (Fallback, EagerView)):
            close()
            out.append(s)
            continue
        if cur is None:
            cur = Kernel(f"{name_prefix}{n}")
            n += 1
        k = _fits(cur, s)
        if k is not None and cur.members:
            e, _, sizes = member_exprs(s, k)
            writes = cur.writes()
            if not all(_row_local(ld, writes[ld.buf], k, sizes) for ld in _loads(e) if ld.buf in writes):
                k = None
        if k is None:
            close()
            cur = Kernel(f"{name_prefix}{n}")
            n += 1
            k = _fits(cur, s)
        cur.members.append(s)
        cur.column = cur.column or _column(s)
        shape = s.outer if isinstance(s, Reduction) else s.buffer.shape
        cur.outer = tuple(shape[:k])
        cur.has_reduction = cur.has_reduction or isinstance(s, Reduction)
    close()
    return out
