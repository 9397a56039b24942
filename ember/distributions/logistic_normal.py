"""The logistic-normal distribution on the simplex."""

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The stick-breaking image of `Normal(loc, scale)`: `X ~ LogisticNormal(loc, scale)` is
    `StickBreakingTransform()(Y)` for `Y ~ Normal(loc, scale)`, a point of the simplex with one more
    coordinate than `loc` has on its last dim.

    Example::

        >>> m = LogisticNormal(ember.tensor([0.0] * 3), ember.tensor([1.0] * 3))
        >>> m.sample()  # a point of the 4-simplex
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogisticNormal, _instance))

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
