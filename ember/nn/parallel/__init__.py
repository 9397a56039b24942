"""ember.nn.parallel: torch.nn.parallel's module wrappers, as a CPU-only torch has them.

`DataParallel` with no accelerator wraps its module and calls it directly (torch's behaviour when no GPU is
found: `device_ids` is empty). `DistributedDataParallel` needs the default process group, which ember cannot
initialize yet (NOTE [ Import-time names of torch.distributed ] in ember/distributed/__init__.py): a script
may import it at its top, and constructing one fails with torch's error for an uninitialized group.
"""

from ..modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Run a module over several devices' shares of a batch; on the CPU-only ember, the module itself.

    Args:
        module (Module): the module to wrap.
        device_ids, output_device, dim: the accelerators to use; there are none, so they are ignored as
            torch ignores them without a GPU.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Data parallelism across processes: needs an initialized default process group (none yet in ember)."""

    def __init__(self, module, *args, **kwargs):
        super().__init__()
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
