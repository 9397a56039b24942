"""Adafactor (Shazeer & Stern, 2018) as torch 2.13 implements it: factored second moments for matrices.

NOTE [ Optimizers written as composites ]
Adafactor and Muon are written as torch's single-tensor loops, in ember's in-place tensor ops under no_grad,
rather than as one op over lists (NOTE [ Optimizer steps are ops over lists ] in _ops/optim.py): each step
reads Python numbers off tensors (`param.norm().item()`, the update's RMS) between its ops as torch's loop
does, and Muon's Newton-Schulz iteration runs in bfloat16 matmuls, so the op-per-step form would gain little.
The order of operations, dtypes and rounding points are torch's, which is what the step-for-step tests hold.
"""

from .._tensor import Tensor
from ._common import _new_scalar, _run_closure
from .optimizer import Optimizer, _to_scalar, _use_grad_for_differentiable

__all__ = ["Adafactor", "adafactor"]

# torch.finfo(dtype).eps of the floating dtypes (epsilon1's default)
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


class Adafactor(Optimizer):
    r"""Implements the Adafactor algorithm (torch.optim.Adafactor).

    For a parameter :math:`\theta` with gradient :math:`g` at step t::

        beta2_t = 1 - t ** beta2_decay;  rho_t = min(lr, 1 / sqrt(t))
        alpha_t = max(eps2, RMS(theta)) * rho_t
        theta <- theta * (1 - lr * weight_decay)
        matrices: R <- lerp(R, mean_cols(g^2), 1 - beta2_t); C <- lerp(C, mean_rows(g^2), 1 - beta2_t)
                  v = R @ C / max(mean(R), eps1)
        vectors:  v <- lerp(v, g^2, 1 - beta2_t)
        u = g / sqrt(max(v, eps1^2));  theta <- theta - alpha_t / max(1, RMS(u) / d) * u

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): unlike other optimizers, Adafactor does not require a learning rate,
            and Noam Shazeer and Mitchell Stern do not use lr at all (default: 1e-2).
        beta2_decay (float, optional): decay rate of the second moment (default: -0.8).
        eps (Tuple[float, float], optional): epsilon1 (default: the dtype's eps) added to the denominator,
            epsilon2 the floor of the parameter RMS (default: (None, 1e-3)).
        d (float, optional): the clipping threshold of the update's RMS (default: 1.0).
        weight_decay (float, optional): weight decay coefficient (default: 0.0).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).

    Example:
        >>> optimizer = ember.optim.Adafactor(model.parameters(), lr=1e-2)
    """

    __module__ = "ember.optim._adafactor"

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    _defaults_for_setstate = (("foreach", None),)

    def _init_group(self, group, params, grads, row_vars, col_vars, variances, steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_scalar(0.0)
                if p.grad.dim() > 1:
                    row_shape = list(p.grad.shape)
                    row_shape[-1] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    col_shape = list(p.grad.shape)
                    col_shape[-2] = 1
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    from .._ops.creation import zeros_like

                    state["variance"] = zeros_like(p.grad)
            row_vars.append(state.get("row_var", None))
            col_vars.append(state.get("col_var", None))
            variances.append(state.get("variance", None))
            steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, row_vars, col_vars, variances, steps = [], [], [], [], [], []
            eps1, eps2 = group["eps"]
            self._init_group(group, params, grads, row_vars, col_vars, variances, steps)
            adafactor(params, grads, row_vars, col_vars, variances, steps, d=group["d"], lr=group["lr"],
                      beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      foreach=group["foreach"], maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None, grad_scale=None,
              found_inf=None, has_complex=False, *, d, lr, beta2_decay, weight_decay, eps1, eps2, maximize):
    """Functional API that performs the Adafactor update (see `Adafactor`), parameter by parameter."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("`state_steps` argument must contain a list of singleton tensors")
    if grad_scale is not None or found_inf is not None:
        raise AssertionError("Grad scaling should occur outside of optimizer.step()")
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        step_t, row_var, col_var, variance = state_steps[i], row_vars[i], col_vars[i], variances[i]
        if eps1 is None:
            eps1 = _EPS[str(param.dtype).split(".")[-1]]
        step_t += 1
        step_float = step_t.item()
        one_minus_beta2_t = step_float ** beta2_decay
        rho_t = min(lr, 1 / (step_float ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if weight_decay != 0:
            param.mul_(1 - lr * weight_decay)
        if grad.dim() > 1:
            row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
