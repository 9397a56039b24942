"""`Distribution`, the base class of every distribution (torch.distributions.distribution).

A distribution has a `batch_shape` (independent, differently-parameterised copies) and an `event_shape` (the
shape of one draw). With validation on (the default unless Python runs with -O; `validate_args=` per
instance, `set_default_validate_args` globally) the constructor checks each parameter against
`arg_constraints` and `log_prob`/`cdf`/`icdf` check their value against `support`, raising ValueError with
torch's messages.
"""

import warnings

import ember

from .._size import Size
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The abstract base class of probability distributions.

    Args:
        batch_shape (Size): the shape over which parameters are batched.
        event_shape (Size): the shape of a single sample (without batching).
        validate_args (bool, optional): whether to validate arguments. Default: None (the class default).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for every distribution made afterwards without an explicit
        `validate_args=` (it is on by default, off under ``python -O``)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{type(self)} does not define `arg_constraints`. "
                "Please set `arg_constraints = {}` or initialize the distribution "
                "with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # nothing to check
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # a parameter computed lazily from another one: not made yet
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(
                    f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}"
                )

    def expand(self, batch_shape, _instance=None):
        """A distribution (a new one, or `_instance` from a subclass's override) whose batch dims are
        expanded to `batch_shape`; parameters are expanded views, and no argument is checked again."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """{argument name: Constraint} that each tensor argument must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint of this distribution's support."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A sample of shape `sample_shape + batch_shape + event_shape`, outside the autograd graph."""
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning,
                      stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the density/mass function at `value`."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at `value`."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse of the cumulative distribution function at `value`."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution's support, along dim 0 (shape `(cardinality,) +
        batch_shape + event_shape`, or with size-1 batch dims when `expand=False`)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, batched over batch_shape."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy), batched over batch_shape."""
        return ember.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()):
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """Check that `value` is a tensor whose rightmost dims match event_shape, that broadcasts with
        batch_shape + event_shape, and that lies in the support."""
        if not isinstance(value, ember.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self)} does not define `support` to enable sample validation. Please initialize the "
                "distribution with `validate_args=False` to turn off validation.",
                stacklevel=3,
            )
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        """The instance `expand` fills: `_instance`, or a bare one of this class, which a subclass with its
        own __init__ must not rely on."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, names, batch_shape, _instance=None, event_shape=None):
        """`expand` of a distribution whose state is the tensors `names`: an instance (of cls, or
        `_instance`) holding each expanded to `batch_shape` (+ `event_shape`, default this one's)."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        event_shape = self._event_shape if event_shape is None else event_shape
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape + event_shape))
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names
        )
        return f"{type(self).__name__}({args})"
