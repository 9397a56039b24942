"""RAdam: rectified Adam. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from ._common import _check_adam_args, _collect, _run_closure, _step_and_zeros
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_not_differentiable,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    r"""Implements the RAdam algorithm (Adam with a rectified adaptive learning rate).

    At step t, for a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        theta <- theta * (1 - lr * weight_decay)            (decoupled_weight_decay)
        g <- g + weight_decay * theta                       (otherwise, if weight_decay != 0)
        m <- lerp(m, g, 1 - beta1);  v <- beta2 * v + (1 - beta2) * g * g
        rho_inf <- 2 / (1 - beta2) - 1;  rho_t <- rho_inf - 2 t beta2^t / (1 - beta2^t)
        m_hat <- m / (1 - beta1^t)
        if rho_t > 5:
            r <- sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            theta <- theta - m_hat * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
        else:
            theta <- theta - m_hat * lr

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float, optional): weight decay (default: 0).
        decoupled_weight_decay (bool, optional): decay the weights directly, as AdamW (default: False).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.RAdam(model.parameters())
    """

    __module__ = "ember.optim.radam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = (("foreach", None), ("maximize", False), ("differentiable", False),
                              ("decoupled_weight_decay", False), ("capturable", False))

    def _new_state(self, group, p):
        return _step_and_zeros(p, "exp_avg", "exp_avg_sq")

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, state_steps) = _collect(
                self, group, ("exp_avg", "exp_avg_sq", "step"))
            beta1, beta2 = group["betas"]
            radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2, lr=group["lr"],
                  weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], capturable=group["capturable"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    """Functional API that performs the RAdam update on lists of tensors (see `RAdam`)."""
    if params:
        _check_capturable(capturable)
    lr = _to_scalar(lr)
    decay_p = 1 if weight_decay != 0 and decoupled_weight_decay else 0  # torch's param.mul_
    _run_step(_steps.radam_step, (params, grads, exp_avgs, exp_avg_sqs, state_steps),
              (beta1, beta2, lr, weight_decay, eps, decoupled_weight_decay, maximize), (1 + decay_p, 0, 1, 2, 1))
