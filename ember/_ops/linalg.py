"""The matmul family: matmul (every rank case), mm, bmm, mv, dot, and einsum.

Half-precision products are computed in float32 and rounded once: NumPy has no BLAS path for float16
(hundreds of times slower) and computes bfloat16 products in float32 anyway.
"""

import math

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import MATMUL, NUMERIC, _modes, defop, dispatch, dtype_word, not_implemented, require_op_dtype
from .._meta import matmul_meta, meta_array, view_meta
from .._native.batched import bmm as _batched  # NOTE [ Batched products on the team ] (batched.c)
from .._native.blas import BLAS_PARALLEL_WORK as _BIG  # NOTE [ BLAS threads by size ]
from .._native.blas import _blas_now
from .._native.blas import matmul as _blas_matmul
from .._tensor import Tensor
from ..autograd.graph import needs_grad
from ._util import c_contiguous, finish_out, method

_F32 = np.dtype(np.float32)


def _half_safe(fn):
    def kernel(a, b):
        if a.dtype.itemsize == 2 and a.dtype.kind != "i" and a.dtype.kind != "u":
            return fn(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
        return fn(a, b)
    return kernel


# NOTE [ Outer products ]
# A product whose contraction has length 1, (M, 1) @ (1, N), is one multiplication per element: exact, the
# same in any order, so a broadcast multiply gives BLAS's result bit for bit. It writes the result in one
# vectorised pass, 4-5x faster than OpenBLAS's sgemm with k = 1 (measured on (512, 1) @ (1, 784)), and for
# a batch of them NumPy's matmul would run one such GEMM per batch element. Weight gradients of a batch of
# one sample (a loop over samples) and vmap's per-sample weight gradients, (B, M, 1) @ (B, 1, N), are all
# outer products. (Complex products are left to BLAS.)

# The matmul family takes every dtype but bool; each op raises its torch kernel's error for it.
@defop("mm", "MmBackward0", MATMUL, dtypes=NUMERIC, error="addmm_impl_cpu_")
@_half_safe
def _mm(a, b):
    if a.shape[1] == 1 and a.dtype.kind in "fiu":  # NOTE [ Outer products ]
        return np.multiply(a, b)
    if a.size * b.shape[1] < _BIG and _blas_now[0] == 1:  # (what _blas_matmul does first, without a call)
        return a @ b
    return _blas_matmul(a, b)


@_mm.derivative_
def _(g, a, b):
    return (g.mm(b.t()) if needs_grad(0) else None), (mat2_grad(a, g, b) if needs_grad(1) else None)


def mat2_grad(a, g, b):
    """The gradient of `b` in `a @ b`, laid out as `b` is (torch's mm_mat2_backward).

    When `b` is a transposed weight (`x @ w.t()` in a linear layer), computing `(g^T a)^T` hands the
    weight a gradient that is already row-major like the weight, so accumulating it is a plain copy.
    """
    if b.dim() == 2 and b.shape[0] > 1 and b.shape[1] > 1 and b.stride() == (1, b.shape[0]):
        return g.t().mm(a).t()
    return a.t().mm(g)


@defop("bmm", "BmmBackward0", MATMUL, dtypes=NUMERIC, error="bmm")
@_half_safe
def _bmm(a, b):
    if a.shape[2] == 1 and a.dtype.kind in "fiu":  # NOTE [ Outer products ]
        return np.multiply(a, b)
    if a.dtype is _F32 and b.dtype is _F32 and (c := _batched(a, b)) is not None:
        return c
    if a.size * b.shape[2] < _BIG and _blas_now[0] == 1:
        return np.matmul(a, b)
    return _blas_matmul(a, b)


@_bmm.derivative_
def _(g, a, b):
    return (g.bmm(b.transpose(1, 2)) if needs_grad(0) else None), \
        (a.transpose(1, 2).bmm(g) if needs_grad(1) else None)


@defop("mv", "MvBackward0", MATMUL, dtypes=NUMERIC, error="addmv_impl_cpu")
@_half_safe
def _mv(a, b):
    return a @ b


@_mv.derivative_
def _(g, a, b):
    return (g.unsqueeze(1) * b if needs_grad(0) else None), (a.t().mv(g) if needs_grad(1) else None)


@defop("dot", "DotBackward0", MATMUL, dtypes=NUMERIC, error="dot")
@_half_safe
def _dot(a, b):
    return np.asarray(np.dot(a, b))


@_dot.derivative_
def _(g, a, b):
    return (g * b if needs_grad(0) else None), (g * a if needs_grad(1) else None)


def _matmul_error(d, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return not_implemented("dot", d)
    if b.ndim == 1 and a.ndim == 2:
        return not_implemented("addmv_impl_cpu", d)
    return not_implemented("addmm_impl_cpu_" if max(a.ndim, b.ndim) <= 2 else "bmm", d)


@defop("matmul", "UnsafeViewBackward0", MATMUL, dtypes=NUMERIC, error=_matmul_error)
@_half_safe
def _matmul_nd(a, b):
    if a.shape[-1] == 1 and b.ndim > 1 and a.ndim > 1 and a.dtype.kind in "fiu":  # NOTE [ Outer products ]
        return np.multiply(a, b)
    if b.ndim > 2 and a.ndim >= b.ndim and not any(b.strides[:-2]) and all(b.shape):
        # (V) b is one matrix broadcast over the batch (vmap's expanded weights): NumPy's matmul takes a slow
        # non-BLAS loop over zero-stride batches; one matrix, with a's rows stacked, is one GEMM
        batch = a.shape[:-2]
        if batch == np.broadcast_shapes(batch, b.shape[:-2]):
            m = b[(0,) * (b.ndim - 2)]
            if a.flags.c_contiguous:
                return _blas_matmul(a.reshape(-1, a.shape[-1]), m).reshape(batch + (a.shape[-2], m.shape[-1]))
            return _blas_matmul(a, m)
    if b.ndim == 2 and a.ndim > 2 and a.dtype.kind in "fc":  # NOTE [ Folding a batch of rows ]
        lead = a.shape[:-1]
        return _fold_mm(a.reshape(math.prod(lead), a.shape[-1]), b).reshape(lead + (b.shape[1],))
    if a.dtype is _F32 and b.dtype is _F32 and b.ndim > 2 and a.ndim > 2 \
            and (c := _batched(a, b)) is not None:
        return c
    if b.ndim == 1 or a.size * b.shape[-1] < _BIG and _blas_now[0] == 1:
        return np.matmul(a, b)
    return _blas_matmul(a, b)


# NOTE [ Folding a batch of rows ]
# A batch of matrices times one matrix, (..., M, K) @ (K, N), is one (B M, K) @ (K, N) product, which is what
# torch's matmul computes (it folds the first operand with reshape, a copy when its layout needs one, and
# runs one mm). NumPy's matmul runs one small GEMM per batch element instead, on one thread: a transformer's
# in-projection, whose input is a transposed view (L, N, E) of the batch-first activations, took 1.35 ms as
# 64 products of 16 x 128 x 384 against 0.4 ms as one, which also splits over the threads. The gradient of
# the matrix is then one (K, B M) @ (B M, N) product too, as torch's mm backward is, not a batch of products
# summed over the batch afterwards (another pass over B K N floats). Integer products stay on NumPy's loop:
# no BLAS runs them either way.
def _fold_mm(a, b):
    if a.size * b.shape[1] < _BIG and _blas_now[0] == 1:
        return a @ b
    return _blas_matmul(a, b)


@_matmul_nd.derivative_
def _(g, a, b):
    # broadcast batch dims are summed away by the engine (fit_grads); vectors are lifted to matrices
    na, nb = needs_grad(0), needs_grad(1)
    if b.dim() == 1:
        return (g.unsqueeze(-1) * b if na else None), \
            ((a * g.unsqueeze(-1)).reshape(-1, b.shape[0]).sum(0) if nb else None)
    if a.dim() == 1:
        return ((g.unsqueeze(-2) @ b.mT).squeeze(-2) if na else None), \
            (a.unsqueeze(-1) * g.unsqueeze(-2) if nb else None)
    if nb and a.shape[-2] == 1 and b.shape[-2] > 1 and b.shape[-1] > 1 and b.stride(-2) == 1 \
            and b.stride(-1) == b.shape[-2]:
        # a transposed weight gets its outer-product gradient row-major like the weight, as mm's does
        # (mat2_grad); with one row in `a` the product is exact either way (NOTE [ Outer products ])
        return (g @ b.mT if na else None), (g.mT @ a).mT
    if nb and b.dim() == 2 and a.dim() > 2 and (a.dtype.is_floating_point or a.dtype.is_complex):
        # one product over the folded rows (NOTE [ Folding a batch of rows ])
        rows = math.prod(a.shape[:-1])
        k, n = b.shape
        return (g @ b.mT if na else None), mat2_grad(a.reshape(rows, k), g.reshape(rows, n), b)
    return (g @ b.mT if na else None), (a.mT @ g if nb else None)


def _same_dtype(a, b, name="mm"):
    """torch's words for operands of two dtypes, per kernel: dot, addmv, bmm, else mm's."""
    if a._data.dtype != b._data.dtype:
        if name == "bmm":
            raise RuntimeError(f"expected scalar type {dtype_word(a.dtype)} but found {dtype_word(b.dtype)}")
        if name == "addmv":
            wa, wb = dtype_word(a.dtype), dtype_word(b.dtype)
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {wb}, {wa}, and {wb}")
        if name == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{dtype_word(a.dtype)} and {dtype_word(b.dtype)}")
        ca, cb = (_dtypes.CPP_NAME.get(t.dtype.name, t.dtype.name) for t in (a, b))
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {ca} != {cb}")


def _shape_str(s):
    return "x".join(map(str, s))


@method()
def mm(input, mat2, *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("mm", mm, input, mat2, out=out)
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    try:
        if mat2._data.ndim != 2:
            raise RuntimeError("mat2 must be a matrix")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if input._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(input._data.shape)} and "
                           f"{_shape_str(mat2._data.shape)})")
    _same_dtype(input, mat2)
    return finish_out(dispatch(_mm, (input, mat2)), out)


@method()
def bmm(input, mat2, *, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("bmm", bmm, input, mat2, out=out)
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    try:
        if mat2._data.ndim != 3:
            raise RuntimeError("batch2 must be a 3D tensor")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    a, b = input._data.shape, mat2._data.shape
    if a[0] != b[0] or a[2] != b[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] but "
                           f"got: [{b[0]}, {b[1]}].")
    _same_dtype(input, mat2, "bmm")
    return finish_out(dispatch(_bmm, (input, mat2)), out)


@method()
def mv(input, vec, *, out=None):
    try:
        if input._data.ndim != 2 or vec._data.ndim != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {vec._data.ndim}, {input._data.ndim}, "
                               f"{vec._data.ndim}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if input._data.shape[1] != vec._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input._data.shape[0]}), mat "
                           f"({_shape_str(input._data.shape)}), vec ({vec._data.shape[0]})")
    _same_dtype(input, vec)
    return finish_out(dispatch(_mv, (input, vec)), out)


@method()
def dot(input, tensor, *, out=None):
    try:
        if input._data.ndim != 1 or tensor._data.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {tensor._data.ndim}D tensors")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n, m = input._data.shape[0], tensor._data.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
                           f"number of elements, but got {n} and {m} elements respectively")
    _same_dtype(input, tensor, "dot")
    return finish_out(dispatch(_dot, (input, tensor)), out)


@defop("vdot", "VdotBackward0", MATMUL, dtypes=NUMERIC, error="dot", tags=("not_holomorphic",))
def _vdot(a, b):
    return np.asarray(np.vdot(a, b))


# the wrappers check ranks, sizes and dtypes before dispatching, so a rule only computes the result
for _op in (_mm, _bmm, _mv, _dot, _matmul_nd, _vdot):
    _op.meta_(matmul_meta)


@_vdot.derivative_
def _(g, a, b):  # torch's formulas, complex ones included (vdot is not holomorphic in its first input)
    return (g.conj() * b if needs_grad(0) else None), (g * a if needs_grad(1) else None)


@method()
def vdot(input, other, *, out=None):
    """The dot product with the first vector conjugated (for real vectors, `dot`)."""
    try:
        if input._data.ndim != 1 or other._data.ndim != 1:
            raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and {other._data.ndim}D tensors")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n, m = input._data.shape[0], other._data.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
                           f"number of elements, but got {n} and {m} elements respectively")
    _same_dtype(input, other, "dot")
    return finish_out(dispatch(_vdot, (input, other)), out)


@method()
def matmul(input, other, *, out=None):
    """Matrix product with torch's rank rules: dot, mv, mm, and batched (broadcast) products."""
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("matmul", matmul, input, other, out=out)
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    da, db = input._data.ndim, other._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other, out=out)
    if da == 2 and db == 1:
        return mv(input, other, out=out)
    if da == 2 and db == 2:
        return mm(input, other, out=out)
    if da == 1 and db == 2:
        return mm(input.unsqueeze(0), other, out=None).squeeze(0) if out is None else \
            finish_out(mm(input.unsqueeze(0), other).squeeze(0), out)
    a, b = input._data.shape, other._data.shape
    k_a = a[-1]
    k_b = b[-2] if db > 1 else b[0]
    if k_a != k_b:
        if db == 1:
            raise RuntimeError(f"size mismatch, got input ({a[-2]}), mat ({_shape_str(a[-2:])}), vec ({b[0]})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{int(np.prod(a[:-2])) if da > 2 else 1}, {k_a}] but got: [{b[-3] if db > 2 else 1}, "
                           f"{k_b}].")
    batch_a, batch_b = a[:-2] if da > 1 else (), b[:-2] if db > 1 else ()
    for i, (x, y) in enumerate(zip(reversed(batch_a), reversed(batch_b))):
        if x != y and x != 1 and y != 1:
            n = max(len(batch_a), len(batch_b))
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {n - 1 - i}")
    _same_dtype(input, other, "bmm" if db > 2 else "addmv" if db == 1 else "mm")  # what torch folds it to
    return finish_out(dispatch(_matmul_nd, (input, other)), out)


def _matmul_op(self, other):
    return matmul(self, other)


def _rmatmul_op(self, other):
    return matmul(other, self)


Tensor.__matmul__ = _matmul_op
Tensor.__rmatmul__ = _rmatmul_op


# ---- einsum -------------------------------------------------------------------------------------------


def _parse_einsum(equation, shapes):
    """Expand '...' and an implicit output; return (input subscripts, output subscript)."""
    try:
        eq = equation.replace(" ", "")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(shapes) > len(ins) else
                           "einsum(): fewer operands were provided than specified in the equation")
    used = set(c for c in eq if c.isalpha())
    spare = iter(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used)
    ell = ""
    ell_n = 0
    for s, shape in zip(ins, shapes):
        if "..." in s:
            ell_n = max(ell_n, len(shape) - (len(s) - 3))
    if ell_n:
        ell = "".join(next(spare) for _ in range(ell_n))
    out_ins = []
    for s, shape in zip(ins, shapes):
        if "..." in s:
            k = len(shape) - (len(s) - 3)
            s = s.replace("...", ell[ell_n - k:] if k else "")
        if len(s) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {len(out_ins)}"
                               + (" and no ellipsis was given" if "..." not in s else ""))
        out_ins.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {}
        for s in out_ins:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return out_ins, out


# NOTE [ einsum's dtypes ]
# torch's einsum sums each letter found in one operand only (and not in the output) out of that operand first,
# with `sum`, which gives an integer or bool operand Long (`einsum("ij->j", int8)` is Long); it multiplies
# operands without a shared summed letter elementwise (bool is fine) and contracts the others with bmm, which
# refuses bool. `einsum` does the same for integer and bool operands (floating ones run in one kernel: the
# sums are the same) and checks bmm's declared dtypes where there is a contraction; the kernel takes any dtype.
# Operands of several dtypes: a contraction refuses them as bmm does ("expected scalar type Float but found
# Long"); products alone promote as torch's mul (NumPy's einsum would make float32 and Long float64).
@defop("einsum", "ViewBackward0", MATMUL)
def _einsum(*args):
    *arrays, ins, out = args
    if len(arrays) == 1 and sorted(out) == sorted(ins[0]):  # a pure permutation: a view, as torch returns
        return np.einsum(f"{ins[0]}->{out}", arrays[0])
    if len(arrays) > 2:  # (the optimised path runs matmul inside NumPy's einsumfunc, whose warnings escape
        with np.errstate(all="ignore"):  # the filter on ember's modules: NOTE [ Quiet NumPy ] in _dispatch.py)
            return _einsum_arrays(arrays, ins, out)
    return _einsum_arrays(arrays, ins, out)


def _einsum_arrays(arrays, ins, out):
    if arrays and arrays[0].dtype.itemsize == 2 and arrays[0].dtype.kind == "f" or \
            arrays and arrays[0].dtype.kind == "V":
        return c_contiguous(np.einsum(f"{','.join(ins)}->{out}", *[a.astype(np.float32) for a in arrays],
                                      optimize=len(arrays) > 2).astype(arrays[0].dtype))
    r = np.einsum(f"{','.join(ins)}->{out}", *arrays, optimize=len(arrays) > 2)
    if isinstance(r, np.ndarray) and r.base is not None and any(np.shares_memory(r, a) for a in arrays):
        return r  # a pure permutation or diagonal: a view, as torch returns
    return c_contiguous(r)


@_einsum.meta_
def _(*args):
    *ops, ins, out = args
    size = {c: n for t, sub in zip(ops, ins) for c, n in zip(sub, t.shape)}
    if len(ops) == 1 and sorted(out) == sorted(ins[0]):  # a pure permutation: a view, as the kernel's
        t, sub = ops[0], ins[0]
        return view_meta(t, tuple(size[c] for c in out), tuple(t.stride(sub.index(c)) for c in out))
    dts = {o._data.dtype for o in ops}  # (mixed only where a sum made an integer operand Long: NumPy's rules)
    return meta_array(tuple(size[c] for c in out), dts.pop() if len(dts) == 1 else np.result_type(*dts))


@_einsum.derivative_
def _(g, *args):
    *ops, ins, out = args
    grads = []
    for i, (t, sub) in enumerate(zip(ops, ins)):
        others = [o for j, o in enumerate(ops) if j != i]
        other_subs = [s for j, s in enumerate(ins) if j != i]
        avail = set(out).union(*other_subs) if other_subs else set(out)
        kept = "".join(c for c in sub if c in avail)
        r = dispatch(_einsum, (g, *others), ([out] + other_subs, kept))
        if kept != sub:  # letters summed inside this operand alone: broadcast the gradient back over them
            shape = [t.shape[k] if c in kept else 1 for k, c in enumerate(sub)]
            r = r.reshape(shape).expand(t.shape)
        grads.append(r)
    return tuple(grads)


def _exact_sums(ins, ops, out):
    """Integer and bool operands as torch's einsum treats them (NOTE [ einsum's dtypes ]), in place."""
    for i, (s, o) in enumerate(zip(ins, ops)):
        alone = [k for k, c in enumerate(s) if c not in out and not any(c in s2 for j, s2 in enumerate(ins) if j != i)]
        if alone:
            ops[i] = o.sum(alone)
            ins[i] = "".join(c for k, c in enumerate(s) if k not in alone)
    contracted = set("".join(ins)) - set(out)
    if contracted and len(ops) > 1:
        require_op_dtype(_bmm, _dtypes.result_dtype(ops))


def _sublist_equation(args):
    """torch.einsum's reading of the sublist form `einsum(a, [0, 1], b, [1, 2], [0, 2])`: (equation,
    operands), with torch's own errors."""
    def letter(n):
        if n == Ellipsis:
            return "..."
        if 0 <= n < 26:
            return chr(ord("A") + n)
        if 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")

    equation = ",".join("".join(letter(s) for s in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(letter(s) for s in args[-1]), args[:-1:2]
    return equation, args[::2]


def einsum(*args):
    """Einstein summation (``einsum("ij,jk->ik", a, b)``, or torch's sublist form), differentiable to any
    order."""
    # torch's Python wrapper (torch/functional.py), then its native's parser (NOTE [ Argument types on the
    # error path ])
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or not all(isinstance(o, Tensor) for o in operands):
        from .._argparse import parser_error
        raise parser_error("_natives", "einsum", (equation, tuple(operands)), {})
    try:
        ins, out = _parse_einsum(equation, [o.shape for o in operands])
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    ops = list(operands)
    # letters repeated inside one operand select its diagonal first, so the primitive never sees them
    for i, s in enumerate(ins):
        while len(set(s)) != len(s):
            c = next(c for c in s if s.count(c) > 1)
            d1, d2 = s.index(c), s.index(c, s.index(c) + 1)
            ops[i] = ops[i].diagonal(0, d1, d2)
            s = "".join(x for k, x in enumerate(s) if k not in (d1, d2)) + c
        ins[i] = s
    for s, o in zip(ins, ops):
        for c, n in zip(s, o.shape):
            for s2, o2 in zip(ins, ops):
                if c in s2 and o2.shape[s2.index(c)] != n:
                    raise RuntimeError("einsum(): operands do not broadcast with remapped shapes (original->remapped)")
    if not all(o.is_floating_point() or o.is_complex() for o in ops):
        _exact_sums(ins, ops, out)
    if len({o.dtype for o in ops}) > 1:  # NOTE [ einsum's dtypes ]: mixed dtypes
        if any(c not in out and sum(c in s for s in ins) > 1 for c in set("".join(ins))):  # (a bmm)
            require_op_dtype(_bmm, ops[0].dtype)
            other = next(o.dtype for o in ops if o.dtype is not ops[0].dtype)
            raise RuntimeError(f"expected scalar type {dtype_word(ops[0].dtype)} but found "
                               f"{dtype_word(other)}")
        d = ops[0].dtype
        for o in ops[1:]:
            d = _dtypes.promote_types(d, o.dtype)
        ops = [o if o.dtype is d else o.to(d) for o in ops]
    r = dispatch(_einsum, tuple(ops), (ins, out))
    for o in ops:  # a result that is a view of an operand is marked as one (shared version counter)
        if r._data.base is not None and np.shares_memory(r._data, o._data):
            r._base = o._base if o._base is not None else o
            break
    return r


from ._util import public  # noqa: E402

public["einsum"] = einsum
