"""NAdam: Adam with Nesterov momentum. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from ._common import _check_adam_args, _check_nonneg, _collect, _run_closure
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_not_differentiable,
    _new_scalar,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
    _zeros_state,
)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    r"""Implements the NAdam algorithm.

    At step t, for a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        theta <- theta * (1 - lr * weight_decay)            (decoupled_weight_decay)
        g <- g + weight_decay * theta                       (otherwise, if weight_decay != 0)
        mu_t <- beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));  mu_{t+1} likewise
        P <- P * mu_t                                       ('mu_product', a 0-d float32 tensor)
        m <- lerp(m, g, 1 - beta1);  v <- beta2 * v + (1 - beta2) * g * g
        denom <- sqrt(v / (1 - beta2^t)) + eps
        theta <- theta - lr * (1 - mu_t) / (1 - P) * g / denom - lr * mu_{t+1} / (1 - P * mu_{t+1}) * m / denom

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 2e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float, optional): weight decay (default: 0).
        momentum_decay (float, optional): momentum decay psi (default: 4e-3).
        decoupled_weight_decay (bool, optional): decay the weights directly, as AdamW (NAdamW) (default: False).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.NAdam(model.parameters())
    """

    __module__ = "ember.optim.nadam"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_nonneg(momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = (("maximize", False), ("foreach", None), ("capturable", False),
                              ("differentiable", False), ("decoupled_weight_decay", False))

    def _new_state(self, group, p):
        return {"step": _new_scalar(0.0), "mu_product": _new_scalar(1.0), "exp_avg": _zeros_state(p),
                "exp_avg_sq": _zeros_state(p)}

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, mu_products, state_steps) = _collect(
                self, group, ("exp_avg", "exp_avg_sq", "mu_product", "step"))
            beta1, beta2 = group["betas"]
            nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"], capturable=group["capturable"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps):
    """Functional API that performs the NAdam update on lists of tensors (see `NAdam`)."""
    if params:
        _check_capturable(capturable)
    lr = _to_scalar(lr)
    decay_p = 1 if weight_decay != 0 and decoupled_weight_decay else 0  # torch's param.mul_
    _run_step(_steps.nadam_step, (params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps),
              (beta1, beta2, lr, weight_decay, momentum_decay, eps, decoupled_weight_decay, maximize),
              (2 + decay_p, 0, 1, 2, 1, 1))
