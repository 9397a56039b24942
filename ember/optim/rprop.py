"""Rprop: resilient backpropagation. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from .._ops.creation import full_like
from ._common import _FLAG_DEFAULTS, _collect, _run_closure
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

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    r"""Implements the resilient backpropagation algorithm.

    For a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``), elementwise::

        s <- sign(g * g_prev), then s > 0 -> etaplus, s < 0 -> etaminus, s == 0 -> 1
        eta <- clamp(eta * s, step_size_min, step_size_max)     ('step_size', starts at lr)
        g <- 0 where s == etaminus
        theta <- theta - sign(g) * eta
        g_prev <- g                                             ('prev')

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, optional): initial step size (default: 1e-2).
        etas (Tuple[float, float], optional): (etaminus, etaplus), the multiplicative decrease and increase
            factors (default: (0.5, 1.2)).
        step_sizes (Tuple[float, float], optional): minimal and maximal allowed step sizes (default: (1e-6, 50)).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.Rprop(model.parameters())
    """

    __module__ = "ember.optim.rprop"

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    _defaults_for_setstate = _FLAG_DEFAULTS

    def _new_state(self, group, p):
        lr = _to_scalar(group["lr"])
        return {"step": _new_scalar(0.0), "prev": _zeros_state(p),
                "step_size": full_like(p.grad, complex(lr, lr) if p.is_complex() else lr)}

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            params, grads, (prevs, step_sizes, state_steps) = _collect(self, group, ("prev", "step_size", "step"))
            rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                  step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"],
                  capturable=group["capturable"])
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    """Functional API that performs the Rprop update on lists of tensors (see `Rprop`)."""
    if params:
        _check_capturable(capturable)
    _run_step(_steps.rprop_step, (params, grads, prevs, step_sizes, state_steps),
              (step_size_min, step_size_max, etaminus, etaplus, maximize), (1, 0, 1, 2, 1))
