"""Adagrad. See NOTE [ How optimizers update parameters ] in optimizer.py."""


from .._ops import optim as _steps
from .._ops.creation import full_like
from .._tensor import Tensor
from ._common import _check_nonneg, _collect, _run_closure
from .optimizer import (
    Optimizer,
    _check_lr,
    _check_not_differentiable,
    _new_scalar,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    At step t, for a parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        g <- g + weight_decay * theta                       (if weight_decay != 0)
        clr <- lr / (1 + (t - 1) * lr_decay)
        s <- s + g * g                                      ('sum', starts at initial_accumulator_value)
        theta <- theta - clr * g / (sqrt(s) + eps)

    State is created in the constructor (as torch does), not at the first step.

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-2).
        lr_decay (float, optional): learning rate decay (default: 0).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        initial_accumulator_value (float, optional): initial value of the sum of squared gradients (default: 0).
        eps (float, optional): term added to the denominator for numerical stability (default: 1e-10).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.Adagrad(model.parameters(), lr=0.1)
    """

    __module__ = "ember.optim.adagrad"

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check_nonneg(lr_decay=lr_decay, weight_decay=weight_decay,
                      initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._new_state(group, p))

    _defaults_for_setstate = (("foreach", None), ("maximize", False), ("differentiable", False), ("fused", None))

    def _new_state(self, group, p):
        init = self.defaults["initial_accumulator_value"]
        return {"step": _new_scalar(0.0),
                "sum": full_like(p, complex(init, init) if p.is_complex() else init)}

    def __setstate__(self, state):
        super().__setstate__(state)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = _new_scalar(float(s["step"]))

    def share_memory(self):
        """Calls tensor.share_memory_() on the state sum tensors."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (state_sums, state_steps) = _collect(self, group, ("sum", "step"))
            adagrad(params, grads, state_sums, state_steps, lr=group["lr"], weight_decay=group["weight_decay"],
                    lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay,
            lr_decay, eps, maximize):
    """Functional API that performs the Adagrad update on lists of tensors (see `Adagrad`)."""
    lr = _to_scalar(lr)
    _run_step(_steps.adagrad_step, (params, grads, state_sums, state_steps),
              (lr, weight_decay, lr_decay, eps, maximize), (1, 0, 1, 1))
