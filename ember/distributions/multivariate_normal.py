"""The multivariate normal distribution (torch.distributions.multivariate_normal), and the batched
triangular-solve helpers the multivariate families share."""

import math

import ember

from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _solve_tril(L, B):
    """X with L X = B for lower-triangular L (batched)."""
    return ember.linalg.solve_triangular(L, B, upper=False)


def _batch_mv(bmat, bvec):
    """Batched matrix-vector product, broadcasting the batch dims."""
    return ember.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distance x^T (L L^T)^-1 x for lower-triangular L, batched. bx's batch shape
    must broadcast against bL's; bL is not expanded, so one triangular solve serves every x that shares it
    (torch's reshaping: x's dims that pair with L's batch dims are moved to the right of the solve)."""
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bx_batch_dims = len(bx_batch_shape)
    bl_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bl_batch_dims
    old_batch_dims = outer_batch_dims + bl_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bl_batch_dims
    bx_new_shape = bx.shape[:outer_batch_dims]
    for s_l, s_x in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (s_x // s_l, s_l)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    permute_dims = (
        list(range(outer_batch_dims))
        + list(range(outer_batch_dims, new_batch_dims, 2))
        + list(range(outer_batch_dims + 1, new_batch_dims, 2))
        + [new_batch_dims]
    )
    bx = bx.permute(permute_dims)

    flat_l = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_l.size(0), n)
    flat_x_swap = flat_x.permute(1, 2, 0)
    m_swap = _solve_tril(flat_l, flat_x_swap).pow(2).sum(-2)
    m = m_swap.t()

    permuted_m = m.reshape(bx.shape[:-1])
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bl_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    reshaped_m = permuted_m.permute(permute_inv_dims)
    return reshaped_m.reshape(bx_batch_shape)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, computed from P without inverting it (flip, Cholesky, solve)."""
    lf = ember.linalg.cholesky(ember.flip(P, (-2, -1)))
    l_inv = ember.transpose(ember.flip(lf, (-2, -1)), -2, -1)
    eye = ember.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _solve_tril(l_inv, eye)


class MultivariateNormal(Distribution):
    """A multivariate normal distribution of mean `loc`, parameterised by exactly one of a positive-definite
    `covariance_matrix`, a positive-definite `precision_matrix` or a lower-triangular `scale_tril` with a
    positive diagonal (the cheapest: the others are factorised into it).

    Example::

        >>> m = MultivariateNormal(ember.zeros(2), ember.eye(2))
        >>> m.sample()  # normally distributed with mean=`[0,0]` and covariance_matrix=`I`
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None
    ):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        for name, m in (
            ("scale_tril", scale_tril),
            ("covariance_matrix", covariance_matrix),
            ("precision_matrix", precision_matrix),
        ):
            if m is not None:
                if m.dim() < 2:
                    what = "scale_tril matrix" if name == "scale_tril" else name
                    raise ValueError(
                        f"{what} must be at least two-dimensional, with optional leading batch dimensions"
                    )
                batch_shape = ember.broadcast_shapes(m.shape[:-2], loc.shape[:-1])
                setattr(self, name, m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return ember.matmul(tril, tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return ember.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
