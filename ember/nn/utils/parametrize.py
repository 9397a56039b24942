"""nn.utils.parametrize: express a parameter or buffer of a Module as a function of other tensors.

NOTE [ How a tensor is parametrized ]
`register_parametrization(module, "weight", P)` moves the original tensor to
`module.parametrizations.weight.original` (a ParametrizationList, itself a ModuleList holding P and any
later parametrizations), and swaps the module's class for a one-off subclass `Parametrized<Class>` whose
`weight` is a property: reading it evaluates `P(original)` (chained through every registered
parametrization), assigning to it calls the parametrizations' `right_inverse` and writes the result into
`original` in place. The state_dict keys are therefore `parametrizations.weight.original` (or `original0`,
`original1`, ... when `right_inverse` returns several tensors), exactly as torch's. Inside `cached()` each
parametrized tensor is computed once and reused.
"""

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once (on first use) and then reused."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set(dest, src):
    """torch's `dest.set_(src)`: dest now views src's data (same object, so optimizers keep it)."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, and the original tensor(s) they are applied to.

    It is `module.parametrizations[tensor_name]`; `original` (or `original0`, `original1`, ...) holds the
    unparametrized tensor(s); calling it evaluates the parametrized tensor.
    """

    __module__ = "ember.nn.utils.parametrize"

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, originali in enumerate(new):
                if not isinstance(originali, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                                     "(list, tuple...). "
                                     f"Got element {i} of the sequence with type {type(originali).__name__}.")
                if isinstance(original, Parameter):
                    originali = Parameter(originali, original.requires_grad)
                originali.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", originali)
        if not self.unsafe:
            self._check_consistent(original_shape, original_dtype)

    def _check_consistent(self, original_shape, original_dtype):
        z = self()
        if not isinstance(z, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
        if z.dtype != original_dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                             f"flag is enabled.\nunparametrized dtype: {original_dtype}\n"
                             f"parametrized dtype: {z.dtype}")
        if z.shape != original_shape:
            raise ValueError("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                             f"flag is enabled.\nunparametrized shape: {original_shape}\n"
                             f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Write `value` into the original tensor(s) through every parametrization's right_inverse."""
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. "
                                 f"Got {type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or reference-type opaques. "
                                     f"Got element {i} of type {type(tensor).__name__}.")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                                     f"while `original{i}` has dtype {original_i.dtype}")
                _set(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    """Give `module` a class of its own, `Parametrized<Class>`, to hang the properties on."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        slots_to_save = copyreg._slotnames(self.__class__)
        for slot in slots_to_save:
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                           "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                           "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")

    dct = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module, tensor_name):
    """`module.<tensor_name>` becomes a property evaluating (or, assigned, inverting) its parametrization."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(module), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_appended(module, tensor_name, parametrization):
    """The checks torch makes before a second parametrization is appended (unless `unsafe`)."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    if x.dtype != y.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
                         f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
    if x.shape != y.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
                         f"parametrization(module.{tensor_name}).shape: {x.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}")
    if z.dtype != y.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same dtype "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\nreturned dtype: {z.dtype}")
    if z.shape != y.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same shape "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\nreturned shape: {z.shape}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make `module.<tensor_name>` the output of `parametrization` applied to the original tensor.

    See NOTE [ How a tensor is parametrized ]. A second call on the same name appends to the chain.
    Args:
        module: the Module. tensor_name: a parameter, buffer or already parametrized name.
        parametrization: a Module; its optional `right_inverse` maps a value back to the original.
        unsafe: skip the checks that the parametrization keeps shape and dtype.
    Returns: module.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether `module` has a parametrization (on `tensor_name`, if given)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization: `tensor_name` becomes a plain parameter/buffer again, holding the
    current parametrized value (leave_parametrized=True) or the original one."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            with no_grad():
                _set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copy the parametrizations (and their original tensors) of `from_module` onto `to_module`."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for param_func in from_module.parametrizations[name]:
            register_parametrization(to_module, name, param_func)
        src, dst = from_module.parametrizations[name], to_module.parametrizations[name]
        if hasattr(src, "original"):
            dst.original = src.original  # shared, not copied, as in torch
        else:
            i = 0
            while hasattr(src, f"original{i}"):
                setattr(dst, f"original{i}", getattr(src, f"original{i}"))
                i += 1
    return to_module
