"""convert_conv2d/3d_weight_memory_format: lay out the weights of every (transposed) convolution of a module
in a memory format (torch.nn.utils.memory_format)."""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Every Conv2d/ConvTranspose2d weight of `module` (recursively) copied into `memory_format`."""
    from ..modules.conv import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Every Conv3d/ConvTranspose3d weight of `module` (recursively) copied into `memory_format`."""
    from ..modules.conv import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
