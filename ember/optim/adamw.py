"""AdamW: Adam with decoupled weight decay (one implementation: adam.py's, with decoupled_weight_decay=True)."""

from .adam import Adam, adam

__all__ = ["AdamW", "adamw"]


class AdamW(Adam):
    r"""Implements AdamW: Adam whose weight decay does not enter the moment estimates.

    At step t, for a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        theta <- theta * (1 - lr * weight_decay)
        m <- lerp(m, g, 1 - beta1);  v <- beta2 * v + (1 - beta2) * g * g   (v_max <- max(v_max, v): amsgrad)
        theta <- theta - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    Args: as `Adam`, with weight_decay defaulting to 1e-2.

    Example:
        >>> optimizer = ember.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    """

    __module__ = "ember.optim.adamw"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
          differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False, *, amsgrad, beta1,
          beta2, lr, weight_decay, eps, maximize):
    """Functional API that performs the AdamW update on lists of tensors (see `AdamW`)."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, capturable=capturable,
         decoupled_weight_decay=True, amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
         eps=eps, maximize=maximize)
