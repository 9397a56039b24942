"""SGD: stochastic gradient descent, optionally with (Nesterov) momentum. See NOTE [ How optimizers update
parameters ] in optimizer.py."""


from .._ops import optim as _steps
from .._tensor import Tensor
from ._common import _run_closure
from .optimizer import (
    Optimizer,
    _check_not_differentiable,
    _run_step,
    _to_scalar,
    _use_grad_for_differentiable,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent (optionally with momentum).

    For each parameter :math:`\theta` with gradient :math:`g` (negated if ``maximize``)::

        g <- g + weight_decay * theta                       (if weight_decay != 0)
        b <- g                                              (first step; kept as state 'momentum_buffer')
        b <- momentum * b + (1 - dampening) * g             (later steps)
        g <- g + momentum * b  if nesterov  else  b         (if momentum != 0)
        theta <- theta - lr * g

    Args:
        params (iterable): parameters, ``(name, parameter)`` pairs, or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3).
        momentum (float, optional): momentum factor (default: 0).
        dampening (float, optional): dampening for momentum (default: 0).
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0).
        nesterov (bool, optional): enables Nesterov momentum (default: False).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).
        foreach, fused (bool, optional): accepted for torch compatibility; ember has one implementation.
        differentiable (bool, optional): must be False in ember.

    Example:
        >>> optimizer = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> optimizer.zero_grad()
        >>> loss_fn(model(input), target).backward()
        >>> optimizer.step()
    """

    __module__ = "ember.optim.sgd"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_not_differentiable(differentiable)
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    _defaults_for_setstate = (("nesterov", False), ("maximize", False), ("foreach", None), ("differentiable", False),
                              ("fused", False))

    def _init_group(self, group, params, grads, momentum_buffer_list):
        momentum = group["momentum"] != 0
        state = self.state
        for p in group["params"]:
            g = p.grad
            if g is not None:
                params.append(p)
                grads.append(g)
                if momentum:
                    momentum_buffer_list.append(state[p].get("momentum_buffer"))
        return False

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, momentum_buffer_list = [], [], []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"])
            if group["momentum"] != 0:
                state = self.state
                for p, buf in zip(params, momentum_buffer_list):
                    state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """Functional API that performs the SGD update on lists of tensors (see `SGD`). New momentum buffers are
    written into `momentum_buffer_list`."""
    lr = _to_scalar(lr)
    weight_decay = _to_scalar(weight_decay)
    has_buf = tuple(b is not None for b in momentum_buffer_list) if momentum != 0 else ()
    bufs = [b for b in momentum_buffer_list if b is not None] if momentum != 0 else []
    new = _run_step(_steps.sgd_step, (params, d_p_list, bufs), (has_buf, weight_decay, momentum, lr, dampening,
                                                                nesterov, maximize), (1, 0, 2))
    if new:
        fresh = iter(new)
        for i, have in enumerate(has_buf):
            if not have:
                momentum_buffer_list[i] = next(fresh)
