"""The generalized Pareto distribution."""

import math
from numbers import Real

import ember

from .._size import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration): the limit law of exceedances over a high threshold.
    Its support is [loc, inf) for concentration >= 0 and [loc, loc - scale / concentration] below zero.

    Example::

        >>> m = GeneralizedPareto(ember.tensor([0.1]), ember.tensor([2.0]), ember.tensor([0.4]))
        >>> m.sample()
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Real) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, ("loc", "scale", "concentration"), batch_shape,
                                   _instance)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _safe_concentration(self, zero):
        """The concentration with its zeros replaced by one (the zero case is computed apart)."""
        return ember.where(zero, ember.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero = ember.isclose(self.concentration, ember.tensor(0.0))
        conc = self._safe_concentration(zero)
        y = 1 / conc + ember.ones_like(z)
        nonzero = ember.where(y == 0, y, y * ember.log1p(conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - ember.where(zero, z, nonzero)

    def log_survival_function(self, value):
        """log(1 - cdf(value))."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero = ember.isclose(self.concentration, ember.tensor(0.0))
        conc = self._safe_concentration(zero)
        return ember.where(zero, -z, -ember.log1p(conc * z) / conc)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return ember.exp(self.log_cdf(value))

    def icdf(self, value):
        zero = ember.isclose(self.concentration, ember.zeros_like(self.concentration))
        conc = self._safe_concentration(zero)
        logu = ember.log1p(-value)
        nonzero = self.loc + self.scale / conc * ember.expm1(-conc * logu)
        return ember.where(zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        conc = ember.where(valid, self.concentration, 0.5)
        return ember.where(valid, self.loc + self.scale / (1 - conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        conc = ember.where(valid, self.concentration, 0.25)
        return ember.where(valid, self.scale ** 2 / ((1 - conc) ** 2 * (1 - 2 * conc)), math.nan)

    def entropy(self):
        return ember.broadcast_to(ember.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = ember.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
