"""nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as parametrizations (torch's API).

Each registers a small Module through `ember.nn.utils.parametrize.register_parametrization`, so the
parametrized weight is recomputed from `parametrizations.weight.original*` on every access and the
state_dict keys are torch's.

NOTE [ Orthogonal maps without a LAPACK binding ]
torch computes `matrix_exp` with a Taylor/Padé kernel, `householder_product` with LAPACK's orgqr and
`geqrf` directly. Here `matrix_exp` is scaling and squaring of a degree-18 Taylor polynomial (Horner form,
error < 1e-17 once the scaled norm is <= 1), `householder_product` applies the reflectors one column at a
time; both are composites of differentiable ember ops, so gradients come for free. `geqrf` is the op
`ember.geqrf` (NumPy's `qr(mode="raw")`, the same LAPACK routine, transposed; used without grad).
"""

import math
from enum import Enum, auto

import numpy as np

from ... import _dtypes, _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- linear-algebra helpers (NOTE [ Orthogonal maps without a LAPACK binding ]) ----------------------------


def _eye_like(a, n):
    eye = _ops.creation.eye(n, dtype=a.dtype, device=a.device)
    return eye.expand(*a.shape[:-2], n, n).contiguous() if a.dim() > 2 else eye


def _matrix_exp(a):
    n = a.shape[-1]
    norm = float(a.detach().abs().sum(-2).max()) if a.numel() else 0.0  # the 1-norm picks the scaling
    s = max(0, math.ceil(math.log2(norm))) if norm > 1 else 0
    a = a / (2.0 ** s)
    eye = _eye_like(a, n)
    p = eye
    for k in range(18, 0, -1):
        p = eye + (a @ p) / k
    for _ in range(s):
        p = p @ p
    return p


def _householder_product(a, tau):
    """Q = H_0 H_1 ... H_{k-1} (first n columns) with H_i = I - tau_i v_i v_i^T, v_i = e_i + a[:, i] below i."""
    m, n = a.shape[-2], a.shape[-1]
    q = _eye_like(a, m)[..., :n]
    rows = _ops.creation.arange(m, device=a.device).unsqueeze(1)
    for i in range(tau.shape[-1] - 1, -1, -1):
        v = _ops.pointwise.where(rows > i, a[..., :, i:i + 1], (rows == i).to(a.dtype))  # (..., m, 1)
        q = q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.mT @ q)
    return q


def _is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eps = 10.0 * n * float(np.finfo(_dtypes.to_numpy(q.dtype)).eps)
    return (q.mH @ q).allclose(_ops.creation.eye(k, dtype=q.dtype, device=q.device), atol=eps)


def _make_orthogonal(a):
    """The Q of A = QR (A tall) with diag(R) made non-negative."""
    q, r = _ops.factorizations.qr(a)
    return q * r.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


# ---- orthogonal ----------------------------------------------------------------------------------------


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:
                x = _ops.shape.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
            a = x - x.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _matrix_exp(a)
            else:
                eye = _eye_like(a, n)
                q = _ops.factorizations.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            q = q * x.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        if transposed:
            q = q.mT
        return q

    def right_inverse(self, q):
        with no_grad():
            return self._right_inverse(q)

    def _right_inverse(self, q):
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        q_init = q
        n, k = q.shape[-2], q.shape[-1]
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            a, tau = _ops.factorizations.geqrf(q)
            # diag(R) > 0 (else an orthogonal Q = (-Q)(-I) would be a valid QR too); LAPACK gives tau == 0
            # exactly where it skips a reflection, and there the sign flips (as torch's right_inverse does)
            d = a.diagonal(dim1=-2, dim2=-1)
            d.copy_(d.sign() * (1 - 2 * (tau == 0.0).to(a.dtype)))
            return a.mT if transpose else a
        if n == k:
            q = _make_orthogonal(q) if not _is_orthogonal(q) else q.clone()
        else:
            extra = _ops.random.randn(*(tuple(q.shape[:-2]) + (n, n - k)), dtype=q.dtype)
            q = _make_orthogonal(_ops.shape.cat([q, extra], dim=-1))
        self.base = q
        neg_id = _ops.creation.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Make `module.<name>` an orthogonal matrix (or batch of them) through a parametrization.

    Args:
        orthogonal_map: "matrix_exp" (default for square or complex), "cayley", or "householder" (default
            otherwise). use_trivialization: keep an extra `base` buffer (torch's dynamic trivialization).
    See NOTE [ Orthogonal maps without a LAPACK binding ].
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---- weight_norm --------------------------------------------------------------------------------------


def norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the `pow`-norm over every dim but `dim` (all dims for dim=-1), keepdim-shaped."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view((v.size(0),) + (1,) * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view((1,) * (v.dim() - 1) + (v.size(-1),))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: v scaled so that its norm over every dim but `dim` is g."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize `module.<name>` as g * v / ||v||: `parametrizations.<name>.original0` is g (the norm
    over every dim but `dim`; all dims for dim=None) and `original1` is v. Old `<name>_g`/`<name>_v`
    state_dicts still load."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---- spectral_norm ------------------------------------------------------------------------------------


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(_ops.linalg.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(_ops.linalg.mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = _ops.linalg.dot(u, _ops.linalg.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide `module.<name>` by its spectral norm, estimated by power iteration (u, v buffers; one step per
    training-mode access, none in eval mode). dim defaults to 1 for ConvTranspose, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
