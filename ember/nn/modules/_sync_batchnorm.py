"""SyncBatchNorm's synchronized path: batch statistics over every rank of a process group.

NOTE [ SyncBatchNorm on the CPU ]
torch 2.13 synchronizes only CUDA/XPU inputs: on a CPU tensor with a process group initialized it raises
"SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone". ember is a CPU framework whose
issue 23 asks for SyncBatchNorm itself, so here the synchronized path runs on the CPU: what torch's CUDA
kernels compute (the mean and biased variance over the whole global batch normalize each rank's slice; the
running variance takes the unbiased variance over the global count), checked against torch's BatchNorm on
the concatenated batch, which is the same computation. With world size 1 or in eval mode it is BatchNorm.

The statistics are two sums over ranks (the per-channel sum, then the sum of squared deviations from the
global mean: two passes, as accurate as BatchNorm's own), each through `_AllReduceSum`, an autograd Function
whose backward allreduces the incoming gradient: every rank's loss depends on the sums, so each rank's share
of the gradient is the sum of all ranks' gradients of the sums. Autograd then gives torch's SyncBatchNorm
gradients (sum_dy and sum_dy_xmu reduced over ranks) without a hand-written backward.
"""

from ...autograd.function import Function
from ...autograd.grad_mode import no_grad

__all__ = ["sync_batch_norm"]


class _AllReduceSum(Function):
    """y = sum over ranks of x; dx = sum over ranks of dy."""

    @staticmethod
    def forward(ctx, x, group):
        from ... import distributed as dist

        ctx.group = group
        out = x.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        from ... import distributed as dist

        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


def sync_batch_norm(input, weight, bias, running_mean, running_var, eps, momentum, group):
    """Batch norm in training mode with statistics over all ranks of `group` (see the NOTE above)."""
    from ... import _ops

    cat = _ops.public["cat"]
    dims = [0] + list(range(2, input.dim()))
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    count = input.numel() // input.shape[1]
    local = cat([input.sum(dims), input.new_full((1,), float(count))])
    sums = _AllReduceSum.apply(local, group)
    total = sums[-1]
    mean = sums[:-1] / total
    centered = input - mean.view(shape)
    var = _AllReduceSum.apply((centered * centered).sum(dims), group) / total
    out = centered * (var.view(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.view(shape)
    if bias is not None:
        out = out + bias.view(shape)
    if running_mean is not None:
        with no_grad():
            n = float(total)
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            running_var.mul_(1 - momentum).add_(var.detach() * (n / (n - 1)) * momentum)
    return out
