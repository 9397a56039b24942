"""The Bernoulli distribution (torch.distributions.bernoulli)."""

import ember

from .._size import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]

_NUMBER = (bool, int, float, complex)  # torch.types._Number: what makes a distribution scalar


def _binary_params(dist, probs, logits):
    """Set `probs` or `logits` (exactly one given) on `dist` as a tensor, and `_param` to it; return whether
    the argument was a plain number (a scalar distribution)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    given = probs if probs is not None else logits
    (value,) = broadcast_all(given)
    setattr(dist, "probs" if probs is not None else "logits", value)
    dist._param = value
    return isinstance(given, _NUMBER)


def _expand_binary(dist, new, batch_shape, extra=()):
    """`expand` of a distribution parameterised by probs or logits (and the tensors named in `extra`)."""
    for name in extra:
        setattr(new, name, getattr(dist, name).expand(batch_shape))
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, dist.__dict__[name].expand(batch_shape))
            new._param = getattr(new, name)
    return new


class Bernoulli(ExponentialFamily):
    """A Bernoulli distribution: 1 with probability `probs`, else 0 (give `probs` or `logits`).

    Example::

        >>> m = Bernoulli(ember.tensor([0.3]))
        >>> m.sample()  # 30% chance 1; 70% chance 0
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        scalar = _binary_params(self, probs, logits)
        super().__init__(Size() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        _expand_binary(self, new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            return ember.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -ember.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return ember.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values

    @property
    def _natural_params(self):
        return (ember.logit(self.probs),)

    def _log_normalizer(self, x):
        return ember.log1p(ember.exp(x))
