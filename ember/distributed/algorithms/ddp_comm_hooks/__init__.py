"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks): `default_hooks` (allreduce,
fp16/bf16 compression and their wrappers) and `powerSGD_hook` (PowerSGD low-rank compression)."""

from . import default_hooks as default_hooks
from . import powerSGD_hook as powerSGD_hook

__all__ = ["default_hooks", "powerSGD_hook"]
