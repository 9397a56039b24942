"""ASGD: averaged stochastic gradient descent. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from ._common import _FLAG_DEFAULTS, _check_nonneg, _collect, _run_closure
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_lr,
    _check_not_differentiable,
    _new_scalar,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
    _zeros_state,
)

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    r"""Implements averaged stochastic gradient descent.

    At step t, for a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        g <- g + weight_decay * theta                       (if weight_decay != 0)
        theta <- theta * (1 - lambd * eta)
        theta <- theta - eta * g
        ax <- ax + mu * (theta - ax)  if mu != 1  else  theta      ('ax', the averaged parameter)
        eta <- lr / (1 + lambd * lr * t)^alpha                      ('eta', 0-d)
        mu <- 1 / max(1, t - t0)                                    ('mu', 0-d)

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2).
        lambd (float, optional): decay term (default: 1e-4).
        alpha (float, optional): power for eta update (default: 0.75).
        t0 (float, optional): point at which to start averaging (default: 1e6).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    __module__ = "ember.optim.asgd"

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        _check_nonneg(weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = _FLAG_DEFAULTS

    def _new_state(self, group, p):
        return {"step": _new_scalar(0.0, p), "eta": _new_scalar(_to_scalar(group["lr"]), p),
                "mu": _new_scalar(1.0, p), "ax": _zeros_state(p)}

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (mus, axs, etas, state_steps) = _collect(self, group, ("mu", "ax", "eta", "step"))
            asgd(params, grads, axs, mus, etas, state_steps, lambd=group["lambd"], lr=group["lr"], t0=group["t0"],
                 alpha=group["alpha"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                 capturable=group["capturable"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    """Functional API that performs the ASGD update on lists of tensors (see `ASGD`)."""
    if params:
        _check_capturable(capturable)
    lr = _to_scalar(lr)
    _run_step(_steps.asgd_step, (params, grads, axs, mus, etas, state_steps),
              (lambd, lr, t0, alpha, weight_decay, maximize), (2, 0, 1, 1, 1, 1))
