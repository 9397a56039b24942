"""ember.distributed.optim: torch.distributed.optim's `ZeroRedundancyOptimizer`."""

from .zero_redundancy_optimizer import ZeroRedundancyOptimizer as ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
