"""The layer classes of ember.nn, one file per family as in torch.nn.modules."""

from ._hooks import register_module_backward_hook as register_module_backward_hook
from ._hooks import register_module_buffer_registration_hook as register_module_buffer_registration_hook
from ._hooks import register_module_forward_hook as register_module_forward_hook
from ._hooks import register_module_forward_pre_hook as register_module_forward_pre_hook
from ._hooks import register_module_full_backward_hook as register_module_full_backward_hook
from ._hooks import register_module_full_backward_pre_hook as register_module_full_backward_pre_hook
from ._hooks import register_module_module_registration_hook as register_module_module_registration_hook
from ._hooks import register_module_parameter_registration_hook as register_module_parameter_registration_hook
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .module import Module

__all__ = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
