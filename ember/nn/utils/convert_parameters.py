"""parameters_to_vector / vector_to_parameters: a model's parameters as one flat vector and back."""

from ..._ops.shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """Flatten and concatenate `parameters` into one 1-d tensor."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy slices of the 1-d `vec` into `parameters` (replacing their `.data`), in order."""
    from ..._tensor import Tensor

    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
