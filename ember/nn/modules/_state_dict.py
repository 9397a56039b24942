"""nn.Module's state_dict machinery: saving (`state_dict`, `_save_to_state_dict`), loading
(`load_state_dict`, `_load_from_state_dict`) and their hooks.

The functions here are Module methods: module.py binds them into the Module class body (so
`Module.state_dict` is one of them and Module's bases stay `(object,)`, as torch's); they live in their own
file only to keep module.py short. Names, key orders, metadata and error texts are torch's.
"""

import itertools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._naming import named
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter, is_lazy
from ._hooks import RemovableHandle, WrappedHook

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _base():
    from .module import Module

    return Module


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__




def _register_state_dict_hook(self, hook):
    if getattr(hook, "_from_public_api", False):
        raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                           "registered via register_state_dict_post_hook")
    handle = RemovableHandle(self._state_dict_hooks)
    self._state_dict_hooks[handle.id] = hook
    return handle

def register_state_dict_post_hook(self, hook):
    """`hook(module, state_dict, prefix, local_metadata) -> None`, after `state_dict()` filled its part."""
    hook._from_public_api = True
    handle = RemovableHandle(self._state_dict_hooks)
    self._state_dict_hooks[handle.id] = hook
    return handle

def register_state_dict_pre_hook(self, hook):
    """`hook(module, prefix, keep_vars) -> None`, before `state_dict()` saves this module."""
    handle = RemovableHandle(self._state_dict_pre_hooks)
    self._state_dict_pre_hooks[handle.id] = hook
    return handle

def _save_to_state_dict(self, destination, prefix, keep_vars):
    for name, param in self._parameters.items():
        if param is not None:
            destination[prefix + name] = param if keep_vars else param.detach()
    for name, buf in self._buffers.items():
        if buf is not None and name not in self._non_persistent_buffers_set:
            destination[prefix + name] = buf if keep_vars else buf.detach()
    if getattr(self.__class__, "get_extra_state", _base().get_extra_state) is not _base().get_extra_state:
        destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
    """A dict of every parameter and persistent buffer by dotted name (detached unless keep_vars)."""
    if args:
        warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/"
                      "docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.",
                      FutureWarning, stacklevel=2)
        destination = args[0] if destination is None else destination
        prefix = args[1] if len(args) > 1 and prefix == "" else prefix
        keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()
    local_metadata = dict(version=self._version)
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in self._state_dict_pre_hooks.values():
        hook(self, prefix, keep_vars)
    self._save_to_state_dict(destination, prefix, keep_vars)
    for name, module in self._modules.items():
        if module is not None:
            module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
    for hook in self._state_dict_hooks.values():
        hook_result = hook(self, destination, prefix, local_metadata)
        if not getattr(hook, "_from_public_api", False):
            if hook_result is not None:
                destination = hook_result
        elif hook_result is not None:
            raise RuntimeError("state_dict post-hook must return None")
    return destination

def _register_load_state_dict_pre_hook(self, hook, with_module=False):
    handle = RemovableHandle(self._load_state_dict_pre_hooks)
    self._load_state_dict_pre_hooks[handle.id] = WrappedHook(hook, self if with_module else None)
    return handle

def register_load_state_dict_pre_hook(self, hook):
    """`hook(module, state_dict, prefix, local_metadata, strict, missing, unexpected, error_msgs)`."""
    return self._register_load_state_dict_pre_hook(hook, with_module=True)

def register_load_state_dict_post_hook(self, hook):
    """`hook(module, incompatible_keys) -> None`, after `load_state_dict` loaded this module."""
    handle = RemovableHandle(self._load_state_dict_post_hooks)
    self._load_state_dict_post_hooks[handle.id] = hook
    return handle

def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                          error_msgs):
    for hook in self._load_state_dict_pre_hooks.values():
        hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
    persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
    local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                   if v is not None}
    assign = local_metadata.get("assign_to_params_buffers", False)
    for name, param in local_state.items():
        key = prefix + name
        if key in state_dict:
            self._load_one(state_dict[key], param, name, key, assign, error_msgs)
        elif strict:
            missing_keys.append(key)
    extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
    if getattr(self.__class__, "set_extra_state", _base().set_extra_state) is not _base().set_extra_state:
        if extra_state_key in state_dict:
            self.set_extra_state(state_dict[extra_state_key])
        elif strict:
            missing_keys.append(extra_state_key)
    elif strict and extra_state_key in state_dict:
        unexpected_keys.append(extra_state_key)
    if strict:
        for key in state_dict:
            if key.startswith(prefix) and key != extra_state_key:
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in self._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)

def _load_one(self, input_param, param, name, key, assign, error_msgs):
    if not isinstance(input_param, Tensor):
        error_msgs.append(named(f'While copying the parameter named "{key}", expected ember.Tensor or '
                                f"Tensor-like object from checkpoint but received {type(input_param)}"))
        return
    lazy = is_lazy(param)
    if not lazy and len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
        input_param = input_param[0]
    if not lazy and input_param.shape != param.shape:
        error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                          f"checkpoint, the shape in current model is {param.shape}.")
        return
    try:
        with no_grad():
            if assign:
                if isinstance(param, Parameter):
                    if not isinstance(input_param, Parameter):
                        input_param = Parameter(input_param, requires_grad=param.requires_grad)
                    else:
                        input_param.requires_grad_(param.requires_grad)
                setattr(self, name, input_param)
            elif lazy:
                param.materialize(input_param.shape)
                param.copy_(input_param)
            else:
                param.copy_(input_param)
    except Exception as ex:  # noqa: BLE001 - reported in torch's words
        error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                          f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                          f"an exception occurred : {ex.args}.")

def _load(module, local_state_dict, prefix, metadata, assign, missing_keys, unexpected_keys, error_msgs):
    """`module._load_from_state_dict`, then each child's with the keys under its prefix, then the post hooks.

    (A module-level function: a closure calling itself is a reference cycle, NOTE [ No reference cycles ].)"""
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys,
                                 error_msgs)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            _load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}, child_prefix,
                  metadata, assign, missing_keys, unexpected_keys, error_msgs)
    incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
    for hook in module._load_state_dict_post_hooks.values():
        if hook(module, incompatible) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not expected to return new "
                "values, if incompatible_keys need to be modified, it should be done inplace.")


def load_state_dict(self, state_dict, strict=True, assign=False):
    """Copy parameters and buffers from `state_dict`; returns (missing_keys, unexpected_keys)."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys, unexpected_keys, error_msgs = [], [], []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)
    if metadata is not None:
        state_dict._metadata = metadata

    _load(self, state_dict, "", metadata, assign, missing_keys, unexpected_keys, error_msgs)
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            self.__class__.__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)


for _f in (_register_state_dict_hook, register_state_dict_post_hook, register_state_dict_pre_hook,
           _save_to_state_dict, state_dict, _register_load_state_dict_pre_hook, register_load_state_dict_pre_hook,
           register_load_state_dict_post_hook, _load_from_state_dict, _load_one, load_state_dict):
    _f.__qualname__, _f.__module__ = f"Module.{_f.__name__}", "ember.nn.modules.module"  # as Module methods read
