"""The rest of the matmul family (addmm, addmv, addbmm, baddbmm, outer, inner, tensordot, chain_matmul)
and the ops behind `ember.linalg`: norms, inv, det, slogdet, solve, lstsq, cholesky, qr, svd, eigh, pinv,
matrix_rank, matrix_power, multi_dot.

Decompositions run on NumPy's LAPACK (batched over leading dims). Their derivatives are the standard
matrix-calculus formulas written in ember ops (see the references in each NOTE), so they differentiate
again.

NOTE [ Decomposition gradients ]
- inv: dA = -A^-T dX A^-T.  det: dA = g det(A) A^-T.  slogdet: dA = g A^-T.
- solve (AX = B): dB = A^-T G, dA = -dB X^T.
- cholesky (A = L L^T): Phi(L^T G) then L^-T Phi L^-1, symmetrised (Murray 2016).
- eigh: dA = V (diag(gL) + F o (V^T gV)) V^T with F_ij = 1 / (l_j - l_i) off the diagonal, symmetrised.
- svd (reduced): the formula of Townsend 2016 for U, S, Vh, which assumes distinct singular values.
- qr (reduced, m >= n): the formula of Walter & Lehmann / Liao et al. 2019.
"""

import numpy as np

from .. import _dtypes
from .._argparse import call_error
from .._dispatch import MATMUL, NUMERIC, _modes, defop, dispatch, dtype_word
from .._meta import broadcast_shapes, matmul_meta, meta_array, real_dtype, reduced_shape
from .._native.blas import matmul as _blas_matmul  # NOTE [ BLAS threads by size ]
from .._tensor import Tensor
from ..autograd.graph import needs_grad
from ._util import finish_out, method, public, typed, wrap_dims

# ---- the matmul family ---------------------------------------------------------------------------------


def _mm_scaled(name, node, fn, grads, error):
    op = defop(name, node, MATMUL, "same", dtypes=NUMERIC, error=error)(fn)
    op.derivative_(grads)
    return op


def _wide(a):
    return a.astype(np.float32) if a.dtype.itemsize == 2 and a.dtype.kind == "f" or a.dtype.kind == "V" \
        else a


def _int_scalars(a, beta, alpha):
    """torch casts beta and alpha to an integer dtype (2.7 -> 2)."""
    return (int(beta), int(alpha)) if a.dtype.kind in "iu" else (beta, alpha)


def _addmm_kernel(c, a, b, beta, alpha):
    beta, alpha = _int_scalars(a, beta, alpha)
    a, b = _wide(a), _wide(b)
    p = a @ b if b.ndim == 1 else _blas_matmul(a, b)
    r = (p if alpha == 1 else alpha * p) + (0 if beta == 0 else (c if beta == 1 else beta * c))
    return np.asarray(r).astype(np.result_type(c, a), copy=False)


def _scaled(t, s):
    return t if s == 1 else t * s


def _addmm_grads(g, c, a, b, beta, alpha):
    from .linalg import mat2_grad

    return (_scaled(g, beta) if needs_grad(0) and beta != 0 else None,
            _scaled(g @ b.mT, alpha) if needs_grad(1) else None,
            _scaled(mat2_grad(a, g, b), alpha) if needs_grad(2) else None)


_addmm = _mm_scaled("addmm", "AddmmBackward0", _addmm_kernel, _addmm_grads, "addmm_impl_cpu_")
_addmv = _mm_scaled("addmv", "AddmvBackward0", _addmm_kernel,
                    lambda g, c, a, v, beta, alpha: (
                        _scaled(g, beta) if needs_grad(0) and beta != 0 else None,
                        _scaled(g.unsqueeze(1) * v, alpha) if needs_grad(1) else None,
                        _scaled(a.mT @ g, alpha) if needs_grad(2) else None), "addmv_impl_cpu")
_baddbmm = _mm_scaled("baddbmm", "BaddbmmBackward0", _addmm_kernel,
                      lambda g, c, a, b, beta, alpha: (
                          _scaled(g, beta) if needs_grad(0) and beta != 0 else None,
                          _scaled(g @ b.mT, alpha) if needs_grad(1) else None,
                          _scaled(a.mT @ g, alpha) if needs_grad(2) else None), "baddbmm")


def _addbmm_kernel(c, a, b, beta, alpha):
    beta, alpha = _int_scalars(a, beta, alpha)
    p = np.add.reduce(_wide(a) @ _wide(b), axis=0)
    r = (p if alpha == 1 else alpha * p) + (0 if beta == 0 else (c if beta == 1 else beta * c))
    return np.asarray(r).astype(np.result_type(c, a), copy=False)


_addbmm = _mm_scaled("addbmm", "AddbmmBackward0", _addbmm_kernel,
                     lambda g, c, a, b, beta, alpha: (
                         _scaled(g, beta) if needs_grad(0) and beta != 0 else None,
                         _scaled(g.unsqueeze(0) @ b.mT, alpha) if needs_grad(1) else None,
                         _scaled(a.mT @ g.unsqueeze(0), alpha) if needs_grad(2) else None), "addmm_impl_cpu_")


def _addmm_meta(c, a, b, beta, alpha):
    """addmm / addmv / baddbmm: the product's shape, into which `c` must broadcast; addbmm sums the batch."""
    r = matmul_meta(a, b, _dtypes.result_dtype([c, a, b]))
    return _self_expands(c, r)


def _self_expands(c, r):
    shape = tuple(r.shape)
    if broadcast_shapes(tuple(c.shape), shape) != shape:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1]}) must match the existing size "
                           f"({c.shape[-1]}) at non-singleton dimension {len(shape) - 1}.  Target sizes: "
                           f"{list(shape)}.  Tensor sizes: {list(c.shape)}")
    return r


for _op in (_addmm, _addmv, _baddbmm):
    _op.meta_(_addmm_meta)
_addbmm.meta_(lambda c, a, b, beta, alpha: _self_expands(
    c, meta_array((a.shape[1], b.shape[2]), _dtypes.result_dtype([c, a, b]))))


def _shape_str(s):
    return "x".join(map(str, s))


def _check_mm(a, b, c, name):

    try:
        if a.dim() != 2:
            raise RuntimeError(f"mat1 must be a matrix, got {a.dim()}-D tensor")
        if b.dim() != 2:
            raise RuntimeError(f"mat2 must be a matrix, got {b.dim()}-D tensor")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a.shape)} and "
                           f"{_shape_str(b.shape)})")
    _check_self_dtype(c, a, b)


def _check_self_dtype(c, a, b):
    """torch's addmm / addbmm dtype checks: self against mat2, then mat1 against mat2."""
    try:
        if c.dtype is not b.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {dtype_word(c.dtype)} and "
                               f"{dtype_word(b.dtype)}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {dtype_word(a.dtype)} and "
                           f"{dtype_word(b.dtype)}")


def _check_expands(c, shape):
    """`c` (addmm's self) expands to the product's shape, or torch's expand error."""
    s = tuple(c.shape)
    if s != shape and (len(s) > len(shape) or any(x != 1 and x != y for x, y in zip(s[::-1], shape[::-1]))):
        c.expand(shape)  # (raises torch's words)


@method()
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("addmm", addmm, input, mat1, mat2, beta=beta, alpha=alpha, out=out)
    _check_mm(mat1, mat2, input, "addmm")
    _check_expands(input, (mat1.shape[0], mat2.shape[1]))
    return finish_out(dispatch(_addmm, (input, mat1, mat2), (beta, alpha)), out)


@method()
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    try:
        if mat.dim() != 2 or vec.dim() != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.dim() else 1}), mat "
                           f"({_shape_str(mat.shape)}), vec ({vec.shape[0]})")
    if not (input.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {dtype_word(input.dtype)}, "
                           f"{dtype_word(mat.dtype)}, and {dtype_word(vec.dtype)}")
    if mat.numel() == 0 and input.dim() <= 1:
        # torch's addmv of an empty matrix is beta * input in the input's own shape (a 0-d input stays 0-d),
        # or zeros of mat's rows at beta 0
        r = input * beta if beta != 0 else input.new_zeros(mat.shape[:1])
        return finish_out(r, out)
    return finish_out(dispatch(_addmv, (input, mat, vec), (beta, alpha)), out)


def _check_bmm(b1, b2):
    try:
        if b1.dim() != 3:
            raise RuntimeError("batch1 must be a 3D tensor")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if b2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b1.shape[0]}, "
                           f"{b1.shape[2]}] but got: [{b2.shape[0]}, {b2.shape[1]}].")


@method()
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("baddbmm", baddbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    _check_bmm(batch1, batch2)
    if input.dtype is not batch1.dtype:
        cpp = _dtypes.CPP_NAME
        raise RuntimeError(f"Input dtypes must be the same, got: input {cpp[input.dtype.name]}, batch1: "
                           f"{cpp[batch1.dtype.name]}, batch2: {cpp[batch2.dtype.name]}")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {dtype_word(batch1.dtype)} but found {dtype_word(batch2.dtype)}")
    return finish_out(dispatch(_baddbmm, (input, batch1, batch2), (beta, alpha)), out)


@method()
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ..amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("addbmm", addbmm, input, batch1, batch2, beta=beta, alpha=alpha, out=out)
    _check_bmm(batch1, batch2)
    _check_expands(input, (batch1.shape[1], batch2.shape[2]))
    _check_self_dtype(input, batch1, batch2)
    return finish_out(dispatch(_addbmm, (input, batch1, batch2), (beta, alpha)), out)


def _inplace_mm(name, op):
    from .._dispatch import dispatch_inplace

    def fn(self, a, b, beta, alpha):
        return dispatch_inplace(op, self, (self, a, b), (beta, alpha))
    fn.__name__ = name + "_"
    return fn


# (torch's keyword names: addmm_(mat1, mat2), addmv_(mat, vec), baddbmm_/addbmm_(batch1, batch2))
_addmm_ = _inplace_mm("addmm", _addmm)
_addmv_ = _inplace_mm("addmv", _addmv)
_baddbmm_ = _inplace_mm("baddbmm", _baddbmm)
_addbmm_ = _inplace_mm("addbmm", _addbmm)
Tensor.addmm_ = lambda self, mat1, mat2, *, beta=1, alpha=1: _addmm_(self, mat1, mat2, beta, alpha)
Tensor.addmv_ = lambda self, mat, vec, *, beta=1, alpha=1: _addmv_(self, mat, vec, beta, alpha)
Tensor.baddbmm_ = lambda self, batch1, batch2, *, beta=1, alpha=1: _baddbmm_(self, batch1, batch2, beta, alpha)
Tensor.addbmm_ = lambda self, batch1, batch2, *, beta=1, alpha=1: _addbmm_(self, batch1, batch2, beta, alpha)


@method("outer", "ger")
def outer(input, vec2, *, out=None):
    try:
        if input.dim() != 1 or vec2.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D" if input.dim() != 1 else
                               f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(input.reshape(-1, 1) * vec2, out)


public["ger"] = outer


@method()
def inner(input, other, *, out=None):
    try:
        if input.dim() == 0 or other.dim() == 0:
            return finish_out(input * other, out)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:  # (torch's inner is tensordot's, which checks this first)
        raise RuntimeError("both inputs should have same dtype")
    if input.dim() == 1 and other.dim() == 1:  # torch's inner of vectors is dot
        return finish_out(input.dot(other), out)
    return finish_out(tensordot(input, other, ([-1], [-1])), out)


def tensordot(a, b, dims=2, out=None):
    """Contract `dims` (a count, or two lists of dims) of `a` and `b` via one reshaped matmul."""
    if not isinstance(dims, (tuple, list, Tensor, int)):  # (torch/functional.py's first check)
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    try:
        if isinstance(dims, int):
            if dims < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            if dims > min(a.dim(), b.dim()):
                raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
            da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
        else:
            da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
        da, db = list(wrap_dims(da, a.dim())) if da else [], list(wrap_dims(db, b.dim())) if db else []
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                               f"and second has size {b.shape[y]} in dim {y}")
    free_a = [i for i in range(a.dim()) if i not in da]
    free_b = [i for i in range(b.dim()) if i not in db]
    k = int(np.prod([a.shape[i] for i in da])) if da else 1
    am = a.permute(*(free_a + da)).reshape(-1, k)
    bm = b.permute(*(db + free_b)).reshape(k, -1)
    r = (am @ bm).view(*([a.shape[i] for i in free_a] + [b.shape[i] for i in free_b]))
    return finish_out(r, out)


def multi_dot(tensors, *, out=None):
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    try:
        first_vec, last_vec = ts[0].dim() == 1, ts[-1].dim() == 1
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    r = ts[0]
    for t in ts[1:]:
        r = r.mm(t)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return finish_out(r, out)


def chain_matmul(*matrices, out=None):
    import warnings

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    try:
        if len(matrices) == 1:
            return matrices[0].clone()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return multi_dot(matrices, out=out)


public["tensordot"] = tensordot
public["chain_matmul"] = chain_matmul

# ---- norms -----------------------------------------------------------------------------------------


@defop("linalg_vector_norm", "LinalgVectorNormBackward0", MATMUL, save_output=True)
def _vector_norm(a, ord, dims, keepdim, np_dtype):
    if np_dtype is not None:
        a = a.astype(np_dtype)
    if ord == 2 and a.dtype.kind == "f" and a.dtype.itemsize >= 4 and (dims is None or len(dims) == a.ndim):
        flat = a.reshape(-1)  # the whole tensor's 2-norm: one BLAS dot, no temporaries (clip_grad_norm_'s case)
        r = np.sqrt(np.dot(flat, flat))
        return np.asarray(r, a.dtype).reshape((1,) * a.ndim if keepdim else ())
    x = np.abs(a)
    out_dtype = x.dtype if x.dtype.kind in "fcV" else np.dtype(np.float32)  # (bfloat16's kind is "V")
    if x.dtype.kind not in "fc" or x.dtype.itemsize == 2:  # torch accumulates half and bfloat16 in float32
        x = x.astype(np.float32)
    with np.errstate(all="ignore"):
        if ord == np.inf:
            r = np.max(x, axis=dims, keepdims=keepdim, initial=0)
        elif ord == -np.inf:
            r = np.min(x, axis=dims, keepdims=keepdim)
        elif ord == 0:
            r = np.sum(x != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
        elif ord == 1:
            r = np.sum(x, axis=dims, keepdims=keepdim)
        elif ord == 2:
            r = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
        else:
            r = np.sum(x ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r).astype(out_dtype, copy=False)


@_vector_norm.meta_
def _(a, ord, dims, keepdim, np_dtype):
    dt = np_dtype if np_dtype is not None else a._data.dtype
    return meta_array(reduced_shape(tuple(a.shape), dims, keepdim), real_dtype(dt))


@_vector_norm.derivative_
def _(g, a, ord, dims, keepdim, np_dtype, *, out):
    from .reduction import _unreduce

    g = _unreduce(g, a, dims, keepdim)
    o = _unreduce(out, a, dims, keepdim)
    if ord == 0:
        return g * 0
    if ord == 1:
        return g * a.sgn()
    if ord in (np.inf, -np.inf):
        hit = a.abs() == o
        return g * a.sgn() * hit / hit.sum(dims, keepdim=True)
    if ord == 2:
        return (g * a / o).masked_fill(o == 0, 0.0)
    # torch's norm_backward, its three branches for another p in its order of operations: below 1 the zeros
    # of a are masked and the norm's power multiplies (a norm that underflows to 0 beside an |a|^(p-1) that
    # overflows gives NaN, as torch's); from 1 the scale g / norm^(p-1) is masked where the norm is 0
    if ord < 1:
        scaled = (a.sgn() * a.abs().pow(ord - 1)).masked_fill(a == 0, 0.0)
        return scaled * g * o.pow(1 - ord)
    scaled = a.sgn() * a.abs().pow(ord - 1) if ord < 2 else a * a.abs().pow(ord - 2)
    return scaled * (g / o.pow(ord - 1)).masked_fill(o == 0, 0.0)


@typed
def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None):
    try:
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                               f"{dtype_word(x.dtype)}")
        n = x._data.ndim
        dims = tuple(range(n)) if dim is None else (wrap_dims(dim, n) if n else ())
        if x._data.size == 0 and ord < 0 or (x._data.size == 0 and ord == np.inf and dim is None):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                               "operation does not have an identity")
        np_dtype = None if dtype is None else _dtypes.to_numpy(dtype)
        r = dispatch(_vector_norm, (x,), (float(ord), dims, keepdim, np_dtype))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return finish_out(r, out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    try:
        if A.dim() < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    from .factorizations import require_linalg_dtype

    require_linalg_dtype("matrix_norm", A, low_ok=ord not in (2, -2, "nuc"))  # svd-based ones need LAPACK
    d = wrap_dims(dim, A.dim())
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return finish_out(vector_norm(A, 2, d, keepdim), out)
    from .factorizations import svdvals

    # sums of absolute values and their max / min are vector norms (1, inf, -inf) of nonnegative values
    if ord == "nuc":
        r = vector_norm(svdvals(A.movedim(d, (-2, -1))), 1, -1)
    elif ord in (2, -2):
        r = vector_norm(svdvals(A.movedim(d, (-2, -1))), np.inf * ord / 2, -1)
    elif ord in (1, -1, np.inf, -np.inf):
        sum_dim, red_dim = (d[0], d[1]) if ord in (1, -1) else (d[1], d[0])
        s = vector_norm(A, 1, sum_dim, keepdim=True)
        r = vector_norm(s, np.inf if ord > 0 else -np.inf, red_dim, keepdim=True)
        return finish_out(r if keepdim else r.squeeze(d), out)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        r = r.unsqueeze(min(d)).unsqueeze(max(d))
    return finish_out(r, out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype, out=out)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or (dim is None and A.dim() == 2):
        if dim is None and A.dim() != 2:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.dim()}D.")
        return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype, out=out)
    if dim is None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.dim()}D.")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


@method()
def torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    if p is None:  # (torch.norm reads None as the 2-norm, as "fro")
        p = "fro"
    if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
        return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
    if p == "nuc":
        return matrix_norm(input, "nuc", dim if dim is not None else (-2, -1), keepdim, dtype=dtype, out=out)
    return vector_norm(input, p, dim, keepdim, dtype=dtype, out=out)


Tensor.norm = torch_norm
public["norm"] = public.pop("torch_norm")
del Tensor.torch_norm
