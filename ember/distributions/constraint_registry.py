"""`biject_to` and `transform_to`: from a constraint to a transform whose codomain it is
(torch.distributions.constraint_registry).

`biject_to(c)` gives a bijective transform from the unconstrained reals onto `c` (for samplers such as HMC
that need an invertible, differentiable map); `transform_to(c)` gives any transform onto `c`, possibly not
bijective but cheaper or better conditioned (SoftmaxTransform for the simplex, where `biject_to` gives
StickBreakingTransform). Both are `ConstraintRegistry`s: `register(constraint_or_class, factory)` adds a
factory of transforms for a constraint class, which user code may extend.
"""

from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A map from Constraint classes to factories `factory(constraint) -> Transform`."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Register `factory` for `constraint` (a Constraint subclass, or an instance standing for its
        class); with no factory, a decorator."""
        if factory is None:
            return lambda fn: self.register(constraint, fn)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """The transform the registered factory makes for `constraint`."""
        factory = self._registry.get(type(constraint))
        if factory is None:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register(registries, constraint_list, factory):
    for registry in registries:
        for c in constraint_list:
            registry.register(c, factory)


_BOTH = (biject_to, transform_to)


def _shifted_exp(c, loc, scale):
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(loc, scale)])


def _interval(c):
    if (isinstance(c.lower_bound, Number) and c.lower_bound == 0
            and isinstance(c.upper_bound, Number) and c.upper_bound == 1):
        return transforms.SigmoidTransform()
    scale = c.upper_bound - c.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(c.lower_bound, scale)])


_register(_BOTH, [constraints.real], lambda c: transforms.identity_transform)
_register([biject_to], [constraints.independent],
          lambda c: transforms.IndependentTransform(biject_to(c.base_constraint),
                                                    c.reinterpreted_batch_ndims))
_register([transform_to], [constraints.independent],
          lambda c: transforms.IndependentTransform(transform_to(c.base_constraint),
                                                    c.reinterpreted_batch_ndims))
_register(_BOTH, [constraints.positive, constraints.nonnegative], lambda c: transforms.ExpTransform())
_register(_BOTH, [constraints.greater_than, constraints.greater_than_eq],
          lambda c: _shifted_exp(c, c.lower_bound, 1))
_register(_BOTH, [constraints.less_than], lambda c: _shifted_exp(c, c.upper_bound, -1))
_register(_BOTH, [constraints.interval, constraints.half_open_interval], _interval)
_register([biject_to], [constraints.simplex], lambda c: transforms.StickBreakingTransform())
_register([transform_to], [constraints.simplex], lambda c: transforms.SoftmaxTransform())
_register([transform_to], [constraints.lower_cholesky], lambda c: transforms.LowerCholeskyTransform())
_register([transform_to], [constraints.positive_definite, constraints.positive_semidefinite],
          lambda c: transforms.PositiveDefiniteTransform())
_register(_BOTH, [constraints.corr_cholesky], lambda c: transforms.CorrCholeskyTransform())
_register([biject_to], [constraints.cat],
          lambda c: transforms.CatTransform([biject_to(x) for x in c.cseq], c.dim, c.lengths))
_register([transform_to], [constraints.cat],
          lambda c: transforms.CatTransform([transform_to(x) for x in c.cseq], c.dim, c.lengths))
_register([biject_to], [constraints.stack],
          lambda c: transforms.StackTransform([biject_to(x) for x in c.cseq], c.dim))
_register([transform_to], [constraints.stack],
          lambda c: transforms.StackTransform([transform_to(x) for x in c.cseq], c.dim))
