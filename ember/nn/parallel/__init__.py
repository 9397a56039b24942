"""ember.nn.parallel: torch.nn.parallel's module wrappers, as a CPU-only torch has them.

`DataParallel` with no accelerator wraps its module and calls it directly (torch's behaviour when no GPU is
found: `device_ids` is empty). `DistributedDataParallel` needs the default process group, which ember cannot
initialize yet (NOTE [ Import-time names of torch.distributed ] in ember/distributed/__init__.py): a script
may import it at its top, and constructing one fails with torch's error for an uninitialized group.
"""

from .data_parallel import DataParallel as DataParallel
from .distributed import DistributedDataParallel as DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
