"""The chi-squared distribution: Gamma(df / 2, 1 / 2)."""

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi2(df), the same as Gamma(concentration=0.5 * df, rate=0.5).

    Example::

        >>> m = Chi2(ember.tensor([1.0]))
        >>> m.sample()  # Chi2 distributed with shape df=1
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2
