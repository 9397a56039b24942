"""Adam (and, with decoupled weight decay, AdamW). See NOTE [ How optimizers update parameters ] in
optimizer.py."""


from .._ops import optim as _steps
from .._tensor import Tensor
from ._common import _check_adam_args, _collect, _run_closure, _step_and_zeros
from .optimizer import (
    Optimizer,
    _check_capturable,
    _check_not_differentiable,
    _new_scalar,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    r"""Implements the Adam algorithm.

    For each parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``), at step t::

        theta <- theta * (1 - lr * weight_decay)            (decoupled_weight_decay, as AdamW)
        g <- g + weight_decay * theta                       (otherwise, if weight_decay != 0)
        m <- lerp(m, g, 1 - beta1)                          ('exp_avg')
        v <- beta2 * v + (1 - beta2) * g * g                ('exp_avg_sq')
        v_max <- max(v_max, v)                              ('max_exp_avg_sq', if amsgrad; then used as v)
        denom <- sqrt(v) / sqrt(1 - beta2^t) + eps
        theta <- theta - lr / (1 - beta1^t) * m / denom

    Args:
        params (iterable): parameters, ``(name, parameter)`` pairs, or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): coefficients of the running averages of the gradient and its
            square (default: (0.9, 0.999)).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        amsgrad (bool, optional): use the AMSGrad variant (default: False).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).
        decoupled_weight_decay (bool, optional): decay the weights directly, as AdamW (default: False).
        foreach, fused, capturable (bool, optional): accepted for torch compatibility (NOTE [ differentiable,
            foreach, fused, capturable ]).

    Example:
        >>> optimizer = ember.optim.Adam(model.parameters(), lr=1e-3)
    """

    __module__ = "ember.optim.adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_adam_args(lr, betas, eps, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    _defaults_for_setstate = (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                              ("differentiable", False), ("decoupled_weight_decay", False), ("fused", None))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _new_scalar(float(p_state["step"]))

    def _new_state(self, group, p):
        return _step_and_zeros(p, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if group["amsgrad"] else ()))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps) = _collect(
                self, group, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq" if group["amsgrad"] else None, "step"))
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad=group["amsgrad"],
                 beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], capturable=group["capturable"],
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False,
         decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """Functional API that performs the Adam update on lists of tensors (see `Adam`)."""
    if params:
        _check_capturable(capturable)
    lr, beta1, beta2, weight_decay = (_to_scalar(x) for x in (lr, beta1, beta2, weight_decay))
    decay_p = 1 if weight_decay != 0 and decoupled_weight_decay else 0  # torch's param.mul_
    _run_step(_steps.adam_step, (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [],
                                 state_steps),
              (amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay),
              (1 + decay_p, 0, 1, 2, 1, 1))
