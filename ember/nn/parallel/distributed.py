"""DistributedDataParallel: constructing one needs an initialized default process group, which ember cannot
create yet (NOTE [ Import-time names of torch.distributed ] in ember/distributed/__init__.py)."""

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Data parallelism across processes: needs an initialized default process group (none yet in ember)."""

    def __init__(self, module, *args, **kwargs):
        super().__init__()
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
