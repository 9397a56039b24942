"""Adadelta. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from ._common import _FLAG_DEFAULTS, _check_nonneg, _collect, _run_closure, _step_and_zeros
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_lr,
    _check_not_differentiable,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    r"""Implements the Adadelta algorithm.

    For a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        g <- g + weight_decay * theta                       (if weight_decay != 0)
        v <- rho * v + (1 - rho) * g * g                    ('square_avg')
        delta <- sqrt(u + eps) / sqrt(v + eps) * g
        u <- rho * u + (1 - rho) * delta * delta            ('acc_delta')
        theta <- theta - lr * delta

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): coefficient that scales delta before it is applied (default: 1.0).
        rho (float, optional): coefficient of the running averages (default: 0.9).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-6).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.Adadelta(model.parameters())
    """

    __module__ = "ember.optim.adadelta"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonneg(epsilon=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = _FLAG_DEFAULTS

    def _new_state(self, group, p):
        return _step_and_zeros(p, "square_avg", "acc_delta")

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (square_avgs, acc_deltas, state_steps) = _collect(
                self, group, ("square_avg", "acc_delta", "step"))
            adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"], rho=group["rho"],
                     eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                     capturable=group["capturable"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """Functional API that performs the Adadelta update on lists of tensors (see `Adadelta`)."""
    if params:
        _check_capturable(capturable, xla=False)
    lr = _to_scalar(lr)
    _run_step(_steps.adadelta_step, (params, grads, square_avgs, acc_deltas, state_steps),
              (lr, rho, eps, weight_decay, maximize), (1, 0, 2, 2, 1))
