"""ember.nn.utils.prune: torch's pruning methods (unstructured, structured, custom masks, global pruning).

Pruning a module's tensor `name` keeps the original as parameter `name_orig`, the mask as buffer `name_mask`,
and recomputes `name = name_orig * name_mask` in a forward pre-hook, exactly as torch.nn.utils.prune does;
the masks are drawn and ranked with the same ops (`rand_like`, `topk`, `kthvalue`, `norm`), so the same seed
gives torch's masks. The code follows torch's module line for line (its docstrings shortened).
"""

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._ops.creation import ones_like, zeros_like
from ..._ops.linalg_ext import torch_norm as norm
from ..._ops.pointwise import abs as _abs
from ..._ops.random import rand, rand_like
from ..._ops.sorting import kthvalue
from ..._ops.sorting import topk as _topk
from ..._tensor import contiguous_format
from .convert_parameters import parameters_to_vector


class BasePruningMethod(ABC):
    """Abstract base class for creation of new pruning techniques."""

    _tensor_name: str

    def __call__(self, module, inputs):
        """Multiply the mask into original tensor and store the result."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """Compute and returns a mask for the input tensor ``t``."""

    def apply_mask(self, module):
        """Simply handles the multiplication between the parameter being pruned and the generated mask."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned"
            )  # this gets set in apply()
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        pruned_tensor = mask.to(dtype=orig.dtype) * orig
        return pruned_tensor

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Add pruning on the fly and reparameterization of a tensor."""

        def _get_composite_method(cls, module, name, *args, **kwargs):
            old_method = None
            found = 0
            hooks_to_remove = []
            for k, hook in module._forward_pre_hooks.items():
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                    old_method = hook
                    hooks_to_remove.append(k)
                    found += 1
            if found > 1:
                raise AssertionError(
                    f"Avoid adding multiple pruning hooks to the "
                    f"same tensor {name} of module {module}. Use a PruningContainer."
                )

            for k in hooks_to_remove:
                del module._forward_pre_hooks[k]

            method = cls(*args, **kwargs)  # new pruning
            method._tensor_name = name

            if old_method is not None:  # meaning that there was a hook
                if isinstance(old_method, PruningContainer):
                    old_method.add_pruning_method(method)
                    method = old_method  # rename old_method --> method

                elif isinstance(old_method, BasePruningMethod):
                    container = PruningContainer(old_method)
                    container.add_pruning_method(method)
                    method = container  # rename container --> method
            return method

        method = _get_composite_method(cls, module, name, *args, **kwargs)


        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter "
                    f"{name} of {module}, got {importance_scores.shape} vs {orig.shape}"
                )
        else:
            importance_scores = orig

        if not isinstance(method, PruningContainer):
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)  # temp
        else:
            default_mask = (
                getattr(module, name + "_mask")
                .detach()
                .clone(memory_format=contiguous_format)
            )

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)

        except Exception as e:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise e

        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """Compute and returns a pruned version of input tensor ``t``."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as tensor t, "
                    f"got {importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Remove the pruning reparameterization from a module."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed"
            )  # this gets set in apply()

        weight = self.apply_mask(module)  # masked weights

        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """Container holding a sequence of pruning methods for iterative pruning."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if not isinstance(args, Iterable):  # only 1 item
            self._tensor_name = args._tensor_name
            self.add_pruning_method(args)

        elif len(args) == 1:  # only 1 item in a tuple
            self._tensor_name = args[0]._tensor_name

            self.add_pruning_method(args[0])
        else:  # manual construction from list or other iterable (or no args)
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Add a child pruning ``method`` to the container."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        elif method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on "
                f"the parameter named '{self._tensor_name}' to PruningContainer {self}."
                + f" Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)  # type: ignore[operator]

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Apply the latest ``method`` by computing the new partial masks and returning its combination with
        the ``default_mask``."""

        def _combine_masks(method, t, mask):
            """Combine the masks from all pruning methods and returns a new mask."""
            new_mask = mask  # start off from existing mask
            new_mask = new_mask.to(dtype=t.dtype)

            if method.PRUNING_TYPE == "unstructured":
                slc = mask == 1

            elif method.PRUNING_TYPE == "structured":
                if not hasattr(method, "dim"):
                    raise AttributeError(
                        "Pruning methods of PRUNING_TYPE "
                        '"structured" need to have the attribute `dim` defined.'
                    )

                n_dims = t.dim()  # "is this a 2D tensor? 3D? ..."
                dim = method.dim
                if dim < 0:
                    dim = n_dims + dim
                if dim < 0:
                    raise IndexError(
                        f"Index is out of bounds for tensor with dimensions {n_dims}"
                    )
                keep_channel = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
                slc = [slice(None)] * n_dims
                slc[dim] = keep_channel

            elif method.PRUNING_TYPE == "global":
                n_dims = len(t.shape)  # "is this a 2D tensor? 3D? ..."
                slc = [slice(None)] * n_dims

            else:
                raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")

            if isinstance(slc, list):
                slc = tuple(slc)
            partial_mask = method.compute_mask(t[slc], default_mask=mask[slc])
            new_mask[slc] = partial_mask.to(dtype=new_mask.dtype)

            return new_mask

        method = self._pruning_methods[-1]
        mask = _combine_masks(method, t, default_mask)
        return mask


class Identity(BasePruningMethod):
    """Utility pruning method that does not prune any units but generates the pruning parametrization with a
    mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask
        return mask

    @classmethod
    def apply(cls, module, name):  # type: ignore[override]
        """Add pruning on the fly and reparameterization of a tensor."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prune (currently unpruned) units in a tensor at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)

        mask = default_mask.clone(memory_format=contiguous_format)

        if nparams_toprune != 0:  # k=0 not supported by kthvalue
            prob = rand_like(t)
            topk = _topk(prob.view(-1), k=nparams_toprune)
            mask.view(-1)[topk.indices] = 0

        return mask

    @classmethod
    def apply(cls, module, name, amount):  # type: ignore[override]
        """Add pruning on the fly and reparameterization of a tensor."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prune (currently unpruned) units in a tensor by zeroing out the ones with the lowest L1-norm."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)

        mask = default_mask.clone(memory_format=contiguous_format)

        if nparams_toprune != 0:  # k=0 not supported by kthvalue
            topk = _topk(_abs(t).view(-1), k=nparams_toprune, largest=False)
            mask.view(-1)[topk.indices] = 0

        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):  # type: ignore[override]
        """Add pruning on the fly and reparameterization of a tensor."""
        return super().apply(
            module, name, amount=amount, importance_scores=importance_scores
        )


class RandomStructured(BasePruningMethod):
    """Prune entire (currently unpruned) channels in a tensor at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """Compute and returns a mask for the input tensor ``t``."""
        _validate_structured_pruning(t)

        _validate_pruning_dim(t, self.dim)

        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)

        def make_mask(t, dim, nchannels, nchannels_toprune):
            prob = rand(nchannels)
            threshold = kthvalue(prob, k=nchannels_toprune).values
            channel_mask = prob > threshold

            mask = zeros_like(t)
            slc = [slice(None)] * len(t.shape)
            slc[dim] = channel_mask
            slc = tuple(slc)
            mask[slc] = 1
            return mask

        if nparams_toprune == 0:  # k=0 not supported by kthvalue
            mask = default_mask
        else:
            mask = make_mask(t, self.dim, tensor_size, nparams_toprune)
            mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):  # type: ignore[override]
        """Add pruning on the fly and reparameterization of a tensor."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prune entire (currently unpruned) channels in a tensor based on their L\\ ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """Compute and returns a mask for the input tensor ``t``."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)

        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)

        norm = _compute_norm(t, self.n, self.dim)
        topk = _topk(norm, k=nparams_tokeep, largest=True)

        def make_mask(t, dim, indices):
            mask = zeros_like(t)
            slc = [slice(None)] * len(t.shape)
            slc[dim] = indices
            slc = tuple(slc)
            mask[slc] = 1
            return mask

        if nparams_toprune == 0:  # k=0 not supported by kthvalue
            mask = default_mask
        else:
            mask = make_mask(t, self.dim, topk.indices)
            mask *= default_mask.to(dtype=mask.dtype)

        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):  # type: ignore[override]
        """Add pruning on the fly and reparameterization of a tensor."""
        return super().apply(
            module,
            name,
            amount=amount,
            n=n,
            dim=dim,
            importance_scores=importance_scores,
        )


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match "
                f"self.mask shape {self.mask.shape}"
            )
        mask = default_mask * self.mask.to(dtype=default_mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, mask):  # type: ignore[override]
        """Add pruning on the fly and reparameterization of a tensor."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Apply pruning reparameterization without pruning any units."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune tensor by removing random (currently unpruned) units."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune tensor by removing units with the lowest L1-norm."""
    L1Unstructured.apply(
        module, name, amount=amount, importance_scores=importance_scores
    )
    return module


def random_structured(module, name, amount, dim):
    """Prune tensor by removing random channels along the specified dimension."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune tensor by removing channels with the lowest L\\ ``n``-norm along the specified dimension."""
    LnStructured.apply(
        module, name, amount, n, dim, importance_scores=importance_scores
    )
    return module


def global_unstructured(
    parameters, pruning_method, importance_scores=None, **kwargs
) -> None:
    """Globally prunes tensors corresponding to all parameters in ``parameters`` by applying the specified
    ``pruning_method``."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")

    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")

    relevant_importance_scores = parameters_to_vector(
        [
            importance_scores.get((module, name), getattr(module, name))
            for (module, name) in parameters
        ]
    )
    default_mask = parameters_to_vector(
        [
            getattr(module, name + "_mask", ones_like(getattr(module, name)))
            for (module, name) in parameters
        ]
    )

    container = PruningContainer()
    container._tensor_name = "temp"  # to make it match that of `method`
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"  # to make it match that of `container`
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for '
            f"the `pruning_method`. Found method {pruning_method} of type {method.PRUNING_TYPE}"
        )

    container.add_pruning_method(method)

    final_mask = container.compute_mask(relevant_importance_scores, default_mask)

    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        param_mask = final_mask[pointer : pointer + num_param].view_as(param)
        custom_from_mask(module, name, mask=param_mask)

        pointer += num_param


def custom_from_mask(module, name, mask):
    """Prune tensor corresponding to parameter called ``name`` in ``module`` by applying the pre-computed mask
    in ``mask``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Remove the pruning reparameterization from a module and the pruning method from the forward hook."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module

    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module) -> bool:
    """Check if a module is pruned by looking for pruning pre-hooks."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _validate_pruning_amount_init(amount) -> None:
    """Validate helper to check the range of amount at init."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")

    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral)  # so it's a float
        and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer"
        )


def _validate_pruning_amount(amount, tensor_size) -> None:
    """Validate that the pruning amount is meaningful wrt to the size of the data."""

    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}"
        )


def _validate_structured_pruning(t) -> None:
    """Validate that the tensor to be pruned is at least 2-Dimensional."""
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to "
            "multidimensional tensors. Found tensor of shape "
            f"{shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount, tensor_size):
    """Convert the pruning amount from a percentage to absolute value."""
    if isinstance(amount, numbers.Integral):
        return amount
    else:
        return round(amount * tensor_size)


def _validate_pruning_dim(t, dim) -> None:
    """Validate that the pruning dimension is within the bounds of the tensor dimension."""
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    """Compute the L_n-norm of a tensor along all dimensions except for the specified dimension."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)

    return norm(t, p=n, dim=dims)
