"""RMSprop (optionally centered, with momentum). See NOTE [ How optimizers update parameters ] in optimizer.py."""


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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    r"""Implements the RMSprop algorithm.

    For a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        g <- g + weight_decay * theta                       (if weight_decay != 0)
        v <- alpha * v + (1 - alpha) * g * g                ('square_avg')
        if centered:  a <- lerp(a, g, 1 - alpha) ('grad_avg');  avg <- sqrt(v - a * a) + eps
        else:         avg <- sqrt(v) + eps
        if momentum > 0:  b <- momentum * b + g / avg ('momentum_buffer');  theta <- theta - lr * b
        else:             theta <- theta - lr * g / avg

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2).
        alpha (float, optional): smoothing constant (default: 0.99).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        momentum (float, optional): momentum factor (default: 0).
        centered (bool, optional): normalize by an estimate of the gradient's variance (default: False).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9)
    """

    __module__ = "ember.optim.rmsprop"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check_nonneg(epsilon=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = (("momentum", 0), ("centered", False)) + _FLAG_DEFAULTS

    def _new_state(self, group, p):
        return _step_and_zeros(p, "square_avg", *(("momentum_buffer",) if group["momentum"] > 0 else ()),
                               *(("grad_avg",) if group["centered"] else ()))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            momentum, centered = group["momentum"] > 0, group["centered"]
            params, grads, (square_avgs, state_steps, momentum_buffer_list, grad_avgs) = _collect(
                self, group, ("square_avg", "step", "momentum_buffer" if momentum else None,
                              "grad_avg" if centered else None))
            rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, lr=group["lr"],
                    alpha=group["alpha"], eps=group["eps"], weight_decay=group["weight_decay"],
                    momentum=group["momentum"], centered=group["centered"], maximize=group["maximize"],
                    capturable=group["capturable"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps, weight_decay, momentum,
            centered):
    """Functional API that performs the RMSprop update on lists of tensors (see `RMSprop`)."""
    if params:
        _check_capturable(capturable)
    lr = _to_scalar(lr)
    _run_step(_steps.rmsprop_step, (params, grads, square_avgs, grad_avgs if centered else [],
                                    momentum_buffer_list if momentum > 0 else [], state_steps),
              (lr, alpha, eps, weight_decay, momentum, centered, maximize), (1, 0, 2, 1, 2, 1))
