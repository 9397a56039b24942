"""ember.nn.parallel: torch.nn.parallel's module wrappers.

`DataParallel` with no accelerator wraps its module and calls it directly (torch's behaviour when no GPU is
found: `device_ids` is empty). `DistributedDataParallel` averages gradients over the ranks of an
`ember.distributed` process group while backward runs (distributed.py, _reducer.py); constructing one
before `init_process_group` fails with torch's error for an uninitialized group.
"""

from .data_parallel import DataParallel as DataParallel
from .distributed import DistributedDataParallel as DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
