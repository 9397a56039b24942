"""Muon (MomentUm Orthogonalized by Newton-Schulz) as torch 2.13 implements it, for 2-d parameters.

Written as torch's single-tensor loop in ember's tensor ops (NOTE [ Optimizers written as composites ] in
_adafactor.py): momentum by lerp, the (Nesterov) update orthogonalized by a quintic Newton-Schulz iteration
in bfloat16, and a learning rate scaled by the matrix's shape.
"""

import math

from .._tensor import Tensor
from ._common import _run_closure
from .optimizer import Optimizer, _to_scalar, _use_grad_for_differentiable

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """The nearest semi-orthogonal matrix to `grad` by `ns_steps` quintic Newton-Schulz iterations in bfloat16:
    X <- a X + (b A + c A^2) X with A = X X^T (X transposed first when it is tall)."""
    from .._ops.linalg_ext import addmm

    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.bfloat16()
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    ortho_grad.div_(ortho_grad.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    return ortho_grad


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """The learning rate scaled for a (A, B) matrix: sqrt(max(1, A/B)) ("original"), 0.2 sqrt(max(A, B))
    ("match_rms_adamw")."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    r"""Implements Muon (torch.optim.Muon), for 2-d parameters only.

    For a parameter :math:`W` with gradient :math:`G`::

        B <- lerp(B, G, 1 - momentum)                           ('momentum_buffer')
        U = lerp(G, B, momentum) if nesterov else B
        O = NewtonSchulz(U)                                     (bfloat16, ns_steps iterations)
        W <- W * (1 - lr * weight_decay) - adjust_lr(lr, shape) * O

    Args:
        params (iterable): parameters (2-d) or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3).
        weight_decay (float, optional): decoupled weight decay (default: 0.1).
        momentum (float, optional): momentum factor (default: 0.95).
        nesterov (bool, optional): Nesterov-style momentum (default: True).
        ns_coefficients (tuple of three floats, optional): the quintic's (a, b, c) (default: (3.4445, -4.775,
            2.0315)).
        eps (float, optional): floor of the norm the update is divided by (default: 1e-7).
        ns_steps (int, optional): Newton-Schulz iterations (default: 5).
        adjust_lr_fn (str, optional): "original" (default when None) or "match_rms_adamw".

    Example:
        >>> optimizer = ember.optim.Muon([layer.weight], lr=0.02)
    """

    __module__ = "ember.optim._muon"

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _init_group(self, group, params, grads, bufs):
        from .._ops.creation import zeros_like

        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(p.grad)
            bufs.append(state["momentum_buffer"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            self._init_group(group, params, grads, bufs)
            lr = _to_scalar(group["lr"])
            momentum = group["momentum"]
            for param, grad, buf in zip(params, grads, bufs):
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                     group["eps"])
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], param.shape)
                param.mul_(1 - lr * group["weight_decay"])
                param.add_(update, alpha=-adjusted_lr)
        return loss
