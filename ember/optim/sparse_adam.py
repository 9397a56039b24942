"""SparseAdam, as it behaves where no gradient is sparse.

NOTE [ SparseAdam without sparse tensors ]
torch's SparseAdam updates only with sparse gradients (an `nn.Embedding(sparse=True)`'s) and raises on every
dense one. ember has no sparse tensors, so every gradient it makes is dense: this SparseAdam takes torch's
arguments and makes torch's checks, and its step raises torch's error for any parameter that has a gradient
(a step over parameters without gradients does nothing, as torch's). It never updates a parameter, because a
torch SparseAdam would not either on these gradients.
"""

from .._tensor import Tensor
from ._common import _run_closure
from .optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for sparse gradients (NOTE [ SparseAdam without sparse tensors ]): with ember's dense gradients
    its step raises, as torch's does for a dense gradient.

    Args:
        params (iterable): parameters or dicts defining parameter groups.
        lr (float, Tensor, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): term added to the denominator (default: 1e-8).
        maximize (bool, optional): maximize the objective instead of minimizing (default: False).
    """

    __module__ = "ember.optim.sparse_adam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step (raises for a dense gradient, as torch's)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:  # (every ember gradient is dense)
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
