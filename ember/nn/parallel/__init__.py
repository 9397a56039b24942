"""ember.nn.parallel: torch.nn.parallel's wrappers (DataParallel here; CPU-only, as a torch without CUDA)."""

from .data_parallel import DataParallel as DataParallel

__all__ = ["DataParallel"]
