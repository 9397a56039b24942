"""DataParallel as a CPU-only torch has it: with no accelerator there is nothing to replicate onto, so the
wrapper keeps the module, `device_ids` is empty, and forward calls the module directly (torch's
`if not self.device_ids: return self.module(*inputs, **kwargs)`). State dicts carry the `module.` prefix."""

from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Implements data parallelism at the module level; on a CPU-only machine it runs `module` as it is.

    Args:
        module (Module): module to be parallelized
        device_ids (list of int or torch.device): CUDA devices (none here)
        output_device (int or torch.device): device location of output (default: device_ids[0])
        dim (int): the dimension inputs are scattered along (default: 0)
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
