"""Adadelta. See NOTE [ How optimizers update parameters ] in optimizer.py."""

import numpy as np

from ..autograd.grad_mode import enable_grad
from .optimizer import (
    Optimizer,
    _add_scaled,
    _addcmul_,
    _as_real,
    _bump,
    _check_capturable,
    _check_lr,
    _check_not_differentiable,
    _new_scalar,
    _to_scalar,
    _use_grad_for_differentiable,
    _zeros_state,
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
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

    def _init_group(self, group, params, grads, square_avgs, acc_deltas, state_steps):
        for p in group["params"]:
            g = p.grad
            if g is None:
                continue
            params.append(p)
            grads.append(g)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_scalar(0.0)
                state["square_avg"] = _zeros_state(p)
                state["acc_delta"] = _zeros_state(p)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
            state_steps.append(state["step"])
        return False

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            self._init_group(group, params, grads, square_avgs, acc_deltas, state_steps)
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
    for param, grad, square_avg, acc_delta, step_t in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step_a = step_t._data
        step_a += 1
        p, g = param._data, grad._data
        if maximize:
            g = np.negative(g)
        if weight_decay != 0:
            g = _add_scaled(g, p, weight_decay)
        p, g, v, u = _as_real(p), _as_real(g), _as_real(square_avg._data), _as_real(acc_delta._data)
        v *= rho
        _addcmul_(v, g, g, 1 - rho)
        std = np.add(v, eps)
        np.sqrt(std, out=std)
        delta = np.add(u, eps)
        np.sqrt(delta, out=delta)
        delta /= std
        delta *= g
        u *= rho
        _addcmul_(u, delta, delta, 1 - rho)
        delta *= -lr
        p += delta
        _bump(param)
