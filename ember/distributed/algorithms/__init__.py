"""ember.distributed.algorithms: torch.distributed.algorithms (the Join context manager, DDP comm hooks)."""

from .join import Join as Join
from .join import Joinable as Joinable
from .join import JoinHook as JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
