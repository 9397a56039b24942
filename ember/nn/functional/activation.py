"""Activation functions, softmax family, linear maps and distances of ember.nn.functional.

Most activations are primitives of ember/_ops/nn_ops.py (one kernel, torch's backward-node names);
tanhshrink, softsign, glu, softmin and the distances are composites, as in torch.
"""

import numpy as np

from ... import _dtypes
from ..._argparse import call_error
from ..._dispatch import FLOATING, FLOATING_COMPLEX, _modes, dispatch, dispatch_inplace, not_implemented, require_dtype
from ..._meta import no_data
from ..._ops import nn_ops as P
from ..._ops._util import checked_scalar, refuse_under_vmap
from ..._tensor import Tensor

__all__ = ["relu", "relu_", "relu6", "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
           "prelu", "glu", "gelu", "logsigmoid", "hardshrink", "tanhshrink", "softsign", "softplus", "softmin",
           "softmax", "softshrink", "log_softmax", "tanh", "sigmoid", "hardsigmoid", "silu", "mish", "hardswish",
           "hardtanh", "hardtanh_", "threshold", "threshold_", "linear", "bilinear", "normalize", "one_hot",
           "cosine_similarity", "pairwise_distance", "pdist", "rrelu", "gumbel_softmax",
           "rrelu_"]  # (area N)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _act(op, input, params, inplace):
    if inplace:
        return dispatch_inplace(op, input, (input,), params)
    return dispatch(op, (input,), params)


def relu(input, inplace=False):
    try:
        return input.relu_() if inplace else input.relu()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def relu_(input):
    try:
        return input.relu_()
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def _scalar_t(value, input):
    """Python number `value` as torch's kernel reads it for `input`'s dtype (c10's checked
    `Scalar::to<scalar_t>`): one that does not fit is an error, an integer dtype truncates a float."""
    d = _dtypes.to_numpy(input.dtype)
    if d.kind == "b":
        return value  # (the op refuses bool tensors: its dtype error comes first)
    value = checked_scalar(value, d)
    return int(value) if d.kind in "iu" else value


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    try:
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        d = _dtypes.to_numpy(input.dtype)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    if d.kind in "iu":  # torch takes integer bounds for an integer tensor, then clamps
        min_val, max_val = int(min_val), int(max_val)
        if d == np.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return _act(P.hardtanh, input, (_scalar_t(min_val, input), _scalar_t(max_val, input)), inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return _act(P.hardtanh, input, (0.0, 6.0), inplace)


def elu(input, alpha=1.0, inplace=False):
    return _act(P.elu, input, (alpha, 1.0, 1.0), inplace)


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


def selu(input, inplace=False):
    return _act(P.elu, input, (_SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    try:
        return _act(P.celu, input, (alpha, 1.0, 1.0 / alpha), inplace)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _act(P.leaky_relu, input, (negative_slope,), inplace)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training, each element <= 0 gets a slope drawn from U(lower, upper) (torch's
    draws, NOTE [ rrelu's draws ] in _ops/random.py); otherwise leaky_relu with the mean slope."""
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower, upper, training, inplace, generator):
    if _modes:  # (V) torch's vmap refuses rrelu whatever its arguments
        refuse_under_vmap("rrelu_" if inplace else "rrelu", None, "random")
    try:
        if not training:
            return leaky_relu(input, (lower + upper) / 2, inplace)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    from ..._ops.random import rrelu_with_noise

    out = rrelu_with_noise(input, lower, upper, generator)[0]
    return input.copy_(out) if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place rrelu (torch's F.rrelu_ is torch.rrelu_, which takes a generator)."""
    return _rrelu(input, lower, upper, training, True, generator)


def _threshold(input, th, value, inplace):
    # (torch's kernel compares in its opmath type: float for float16/bfloat16 inputs, so their threshold is
    # checked against float's range; the value written is checked against the input's dtype)
    if input.dtype in (_dtypes.float16, _dtypes.bfloat16):
        th = checked_scalar(th, np.float32)
    else:
        th = _scalar_t(th, input)
    return _act(P.threshold, input, (th, _scalar_t(value, input)), inplace)


def threshold(input, threshold, value, inplace=False):
    return _threshold(input, threshold, value, inplace)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, True)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return dispatch(P.gelu, (input,), (approximate,))


def silu(input, inplace=False):
    return _act(P.silu, input, (), inplace)


def mish(input, inplace=False):
    return _act(P.mish, input, (), inplace)


def hardsigmoid(input, inplace=False):
    return _act(P.hardsigmoid, input, (), inplace)


def hardswish(input, inplace=False):
    return _act(P.hardswish, input, (), inplace)


def softplus(input, beta=1.0, threshold=20.0):
    return dispatch(P.softplus, (input,), (beta, threshold))


def logsigmoid(input):
    return dispatch(P.log_sigmoid, (input,))


def hardshrink(input, lambd=0.5):
    if isinstance(input, Tensor) and input.is_floating_point():  # (torch reads lambd as the input's dtype)
        lambd = _scalar_t(lambd, input)
    return dispatch(P.hardshrink, (input,), (lambd,))


def softshrink(input, lambd=0.5):
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return dispatch(P.softshrink, (input,), (lambd,))


def tanhshrink(input):
    return input - input.tanh()


def softsign(input):
    return input / (input.abs() + 1)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def prelu(input, weight):
    try:
        if weight.dim() == 1 and weight.numel() > 1 and input.dim() > 1:
            weight = weight.reshape((-1,) + (1,) * (input.dim() - 2))
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return dispatch(P.prelu, (input, weight))


def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    require_dtype(input, FLOATING, "glu_cpu")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def _softmax_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def _prep_softmax(input, dim, dtype, name):
    if dim is None:
        import warnings

        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                      "as an argument.", stacklevel=3)
        dim = _softmax_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    n = max(input.dim(), 1)
    try:
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return input, dim % n if input.dim() else None


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _prep_softmax(input, dim, dtype, "softmax")
    return dispatch(P.softmax, (input,), (dim,))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _prep_softmax(-input, dim, dtype, "softmin")  # (torch negates before the cast to dtype)
    return dispatch(P.softmax, (input,), (dim,))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _prep_softmax(input, dim, dtype, "log_softmax")
    return dispatch(P.log_softmax, (input,), (dim,))


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    from ..._ops.creation import empty_like

    gumbels = -empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = one_hot(index.squeeze(dim), y_soft.shape[dim]).to(y_soft.dtype).movedim(-1, dim % y_soft.dim())
    return y_hard - y_soft.detach() + y_soft


# ---- linear maps ---------------------------------------------------------------------------------------


def linear(input, weight, bias=None):
    if _modes:  # NOTE [ Composites under autocast ] (ember/amp/autocast_mode.py)
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("linear", linear, input, weight, bias)
    try:
        if input.dim() and weight.dim() == 2 and input.shape[-1] != weight.shape[1]:
            rows = int(np.prod(input.shape[:-1]))
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                               f"{weight.shape[1]}x{weight.shape[0]})")
        if bias is not None and weight.dim() == 2 and input.dim() and (input.dim() == 2 or input.is_contiguous()):
            # torch's Linear.cpp: 2-d inputs are one addmm (AddmmBackward0); other contiguous ones an addmm on the
            # flattened rows, viewed back (ViewBackward0); anything else a matmul plus the bias
            from ..._ops.linalg_ext import addmm

            if input.dim() == 2:
                return addmm(bias, input, weight.t())
            rows = addmm(bias, input.view(-1, input.shape[-1]), weight.t())
            return rows.view(*input.shape[:-1], weight.shape[0])
        out = input.matmul(weight.t() if weight.dim() == 2 else weight)
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    if _modes:  # NOTE [ Composites under autocast ]: torch runs this as one kernel autocast does not list
        from ...amp.autocast_mode import autocast_call, autocasting
        if autocasting():
            return autocast_call("bilinear", bilinear, input1, input2, weight, bias)
    # y_k = x1^T A_k x2 + b_k, as one einsum over the batch
    from ..._ops import linalg

    out = linalg.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out + bias if bias is not None else out


# ---- vectors -------------------------------------------------------------------------------------------


def _norm(x, p, dim, keepdim=False):
    if x.is_complex():  # (a norm is real)
        x = x.abs()
    if p == 2:
        return (x * x).sum(dim, keepdim=keepdim).sqrt()
    if p == 1:
        return x.abs().sum(dim, keepdim=keepdim)
    if p == float("inf"):
        return x.abs().amax(dim, keepdim=keepdim)
    return (x.abs() ** p).sum(dim, keepdim=keepdim) ** (1.0 / p)


def _vector_norm_error(d):
    return RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                        f"{_dtypes._WORD[d.name]}")


def _common_float_error(d):
    return RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_dtypes._WORD[d.name]}")


def _pdist_error(d):
    if d in (_dtypes.float16, _dtypes.bfloat16):
        return not_implemented("pdist", d)
    return RuntimeError("pdist only supports floating-point dtypes")


_F32_F64 = frozenset({"float32", "float64"})


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    require_dtype(input, FLOATING_COMPLEX, _vector_norm_error)
    denom = _norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is not None:
        from ..._ops.pointwise import div

        return div(input, denom, out=out)
    return input / denom


def one_hot(tensor, num_classes=-1):
    from ..._ops.creation import arange

    try:
        if tensor.dtype is not _dtypes.int64:
            raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    n = tensor.numel()
    if num_classes == -1:
        if n == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    if n and not no_data(tensor):  # (torch checks the values where it has them)
        if tensor.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if tensor.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == arange(num_classes, device=tensor.device)).to(_dtypes.int64)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    # torch: sum(x1 * x2) / sqrt(clamp_min(|x1|^2 * |x2|^2, eps^2))
    require_dtype(x1, FLOATING, _common_float_error, x2)
    try:
        x1, x2 = x1.broadcast_to(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))), x2
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    w12 = (x1 * x2).sum(dim)
    w1 = (x1 * x1).sum(dim)
    w2 = (x2 * x2).sum(dim)
    return w12 / (w1 * w2).clamp_min(eps * eps).sqrt()


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    try:
        d = max(x1.dim(), x2.dim())
    except (AttributeError, TypeError, ValueError, IndexError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    return _norm(x1 - x2 + eps, p, d - 1 if d else 0, keepdim=keepdim)


def pdist(input, p=2):
    try:
        negative = p < 0  # (a p that is no number meets torch's parser first)
        if input.dim() != 2:
            raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    except (AttributeError, TypeError) as e:  # NOTE [ Argument types on the error path ]
        raise call_error(e) from None
    require_dtype(input, _F32_F64, _pdist_error)
    if negative:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    from ..._ops.creation import from_numpy

    a = input.index_select(0, from_numpy(i))
    b = input.index_select(0, from_numpy(j))
    return _norm(a - b, p, 1)


