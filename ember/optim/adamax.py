"""Adamax: Adam with the infinity norm. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from ._common import _FLAG_DEFAULTS, _check_adam_args, _collect, _run_closure, _step_and_zeros
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_not_differentiable,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    r"""Implements the Adamax algorithm (a variant of Adam based on the infinity norm).

    At step t, for a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        g <- g + weight_decay * theta                       (if weight_decay != 0)
        m <- lerp(m, g, 1 - beta1)                          ('exp_avg')
        u <- max(beta2 * u, |g| + eps)                      ('exp_inf')
        theta <- theta - lr / (1 - beta1^t) * m / u

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.Adamax(model.parameters())
    """

    __module__ = "ember.optim.adamax"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = _FLAG_DEFAULTS

    def _new_state(self, group, p):
        return _step_and_zeros(p, "exp_avg", "exp_inf")

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_infs, state_steps) = _collect(self, group, ("exp_avg", "exp_inf", "step"))
            beta1, beta2 = group["betas"]
            adamax(params, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"], beta1=beta1, beta2=beta2,
                   lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                   capturable=group["capturable"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    """Functional API that performs the Adamax update on lists of tensors (see `Adamax`)."""
    if params:
        _check_capturable(capturable)
    lr = _to_scalar(lr)
    _run_step(_steps.adamax_step, (params, grads, exp_avgs, exp_infs, state_steps),
              (eps, beta1, beta2, lr, weight_decay, maximize), (1, 0, 1, 2, 1))
