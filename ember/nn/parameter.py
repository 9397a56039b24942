"""nn.Parameter and nn.Buffer: Tensor subclasses that Modules register, plus the lazy (uninitialized) forms.

A Parameter is a leaf Tensor sharing its data's memory, with `requires_grad=True` by default. Ops on a
Parameter return plain Tensors (ember's dispatcher always wraps results as `Tensor`), as in torch.
"""

from collections import OrderedDict

from .._ops.creation import empty
from .._tensor import Tensor

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]


class _ParameterMeta(type):
    # torch: any tensor flagged `_is_param` (e.g. a subclass detached into a Parameter) is a Parameter
    def __instancecheck__(self, instance):
        if self is Parameter and isinstance(instance, Tensor) and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


def _make(cls, data, requires_grad):
    if requires_grad and not (data.is_floating_point() or data.is_complex()):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if getattr(type(data), "_param_stays_subclass", False):
        # torch: a Parameter over a tensor subclass (a FakeTensor) is that subclass, flagged `_is_param`
        t = data.detach()  # (the setter: a BatchedTensor inside vmap is one, where requires_grad_() is refused)
        t.requires_grad = requires_grad
        t._is_param = True
        return t
    t = cls._make_subclass(data)  # the same array: a Parameter shares its data's memory and version
    t._vc = data._vc
    if requires_grad:
        t._requires_grad = True
    return t


class Parameter(Tensor, metaclass=_ParameterMeta):
    r"""A kind of Tensor that is to be considered a module parameter.

    Assigned as a Module attribute, it is added to the module's parameters. Plain tensors are not.

    Args:
        data (Tensor): parameter tensor (empty if not given).
        requires_grad (bool, optional): if the parameter requires gradient. Default: `True`
    """

    __module__ = "ember.nn.parameter"
    _is_param = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        return _make(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.data, self.requires_grad, OrderedDict()))


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


class UninitializedTensorMixin:
    """Shared by the placeholders of lazy modules: no shape until `materialize(shape)` is called."""

    def materialize(self, shape, device=None, dtype=None):
        if dtype is None:
            dtype = self.data.dtype
        self.data = empty(shape, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (LazyLinear & co); becomes a Parameter on `materialize`."""

    __module__ = "ember.nn.parameter"
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _make(cls, empty(0, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, None, self.data.dtype)
        memo[id(self)] = result
        return result


class _BufferMeta(type):
    def __instancecheck__(self, instance):
        if self is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor marked to be registered as a buffer when assigned to a Module attribute."""

    __module__ = "ember.nn.parameter"

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; becomes a Tensor on `materialize`."""

    __module__ = "ember.nn.parameter"
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        ret = _make(cls, empty(0, dtype=dtype), requires_grad)
        ret.persistent = persistent
        ret._is_buffer = True
        return ret

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass
