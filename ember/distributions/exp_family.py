"""`ExponentialFamily`: distributions whose density is p(x; θ) = exp(<t(x), θ> - F(θ) + k(x)), whose
entropy follows from the log normalizer F by one autograd pass (torch.distributions.exp_family).
"""

import ember

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of the exponential-family distributions.

    A subclass gives its natural parameters θ (`_natural_params`), its log normalizer F(θ)
    (`_log_normalizer`) and the expected carrier measure E[k(x)] (`_mean_carrier_measure`); the entropy
    is then -E[k(x)] + F(θ) - <θ, ∇F(θ)> (Bregman divergence of F).
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = ember.autograd.grad(log_norm.sum(), params, create_graph=True)
        result += log_norm
        for p, g in zip(params, grads):
            result -= (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
