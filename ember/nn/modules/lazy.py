"""LazyModuleMixin: modules whose parameter shapes are inferred from their first input.

A lazy module holds `UninitializedParameter`/`UninitializedBuffer` placeholders. Its first forward call
runs `initialize_parameters(*input)` (a forward pre-hook), which materializes them with the shapes the
input implies and resets them as the eager module would; the module then becomes `cls_to_become` (LazyConv2d
becomes Conv2d). `load_state_dict` of an initialized state materializes the placeholders to the saved
shapes first (a load pre-hook), and `state_dict()` of an uninitialized module holds the placeholders
themselves, as torch's does.
"""

import itertools

from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mix into a module with UninitializedParameters; the first call materializes them through
    `initialize_parameters(*input)` and the module then becomes `cls_to_become`."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        from ...autograd.grad_mode import no_grad

        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        params = self._parameters.values()
        buffers = self._buffers.values()
        return any(is_lazy(p) for p in itertools.chain(params, buffers))

    def _infer_parameters(self, module, args, kwargs=None):
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
