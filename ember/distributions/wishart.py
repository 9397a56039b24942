"""The Wishart distribution over positive-definite matrices (torch.distributions.wishart)."""

import math
import warnings

import ember

from .._size import Size
from . import constraints
from .bernoulli import _NUMBER
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import finfo, lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function of dimension p (the derivative of mvlgamma)."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return ember.digamma(
        x.unsqueeze(-1) - ember.arange(p, dtype=x.dtype, device=x.device).div(2).expand(x.shape + (-1,))
    ).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """A Wishart distribution of `df` degrees of freedom, parameterised by exactly one of a positive-definite
    `covariance_matrix`, a positive-definite `precision_matrix` or a lower-triangular `scale_tril`.
    Sampling is Bartlett's decomposition; a singular sample is drawn again (torch's correction loop).

    Example::

        >>> m = Wishart(ember.tensor([2.0]), covariance_matrix=ember.eye(2))
        >>> m.sample()  # Wishart distributed with mean=`df * I` and variance(x_ij)=`df` for i != j
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None
    ):
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise AssertionError(
                "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
            )
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError(
                "scale_tril must be at least two-dimensional, with optional leading batch dimensions"
            )
        if isinstance(df, _NUMBER):
            batch_shape = Size(param.shape[:-2])
            self.df = ember.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = ember.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(
                f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}."
            )
        for name, m in (
            ("scale_tril", scale_tril),
            ("covariance_matrix", covariance_matrix),
            ("precision_matrix", precision_matrix),
        ):
            if m is not None:
                setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                "< ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df, batch_shape):
        """Bartlett's diagonal: chi-squared with df - i degrees of freedom for row i."""
        tril = self._unbroadcasted_scale_tril
        offsets = ember.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(df=df.unsqueeze(-1) - offsets.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        tril = self._unbroadcasted_scale_tril
        identity = ember.eye(self._event_shape[-1], device=tril.device, dtype=tril.dtype)
        return ember.cholesky_solve(identity, tril).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = float("nan")
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            v.pow(2) + ember.einsum("...i,...j->...ij", diag_v, diag_v)
        )

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        # Bartlett: the diagonal is sqrt(chi2), the lower triangle standard normal
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = ember.tril_indices(p, p, -1)
        noise[..., i, j] = ember.randn(
            Size(sample_shape) + self._batch_shape + (int(p * (p - 1) / 2),),
            dtype=noise.dtype,
            device=noise.device,
        )
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        # NOTE [ Wishart's correction loop ]
        # torch 2.13 flags a sample as singular with `support.check(sample)`, which is True for a *valid*
        # sample, so every batch "is singular" at first: it warns and draws again, and keeps a redrawn sample
        # once that one passes `~support.check`. ember does the same, so the same seed gives torch's numbers
        # (and torch's warning). The mask indexing `sample` is then changed in place, so, as in torch, a
        # backward pass through a corrected sample fails with the "modified by an inplace operation" error.
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                # (torch reads a 0-d bool index as a Python bool and saves nothing; ember's index op saves
                # the mask, so a 0-d one is given as a copy to keep torch's behaviour)
                sample[is_singular.clone() if is_singular.dim() == 0 else is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return (
            -nu * (p * _log_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
            - ember.mvlgamma(nu / 2, p=p)
            + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet
            - ember.cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2
        )

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return (
            (p + 1)
            * (p * _log_2 / 2 + self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
            + ember.mvlgamma(nu / 2, p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-ember.linalg.slogdet(-2 * x).logabsdet + _log_2 * p) + ember.mvlgamma(
            y + (p + 1) / 2, p=p
        )
