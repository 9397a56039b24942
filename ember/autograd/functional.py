"""ember.autograd.functional: derivatives of whole functions (vjp, jvp, jacobian, hessian, vhp, hvp).

Same signatures, argument checks, error messages and output structure as torch.autograd.functional:
a Tensor in gives a Tensor out, a tuple in gives a tuple out (jacobian/hessian: nested per output and
input). `jvp` and `hvp` use the double-backward trick (the gradient of a vjp with respect to its
cotangent, which is linear). `jacobian(..., vectorize=True)` is one vmap of autograd.grad over the
outputs' standard basis (ember.func), `strategy="forward-mode"` one vmap of a jvp over the inputs' basis.

Example::

    >>> def pow_reducer(x):
    ...     return x.pow(3).sum()
    >>> x = ember.tensor([1., 2.])
    >>> ember.autograd.functional.hessian(pow_reducer, x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""

from .._naming import named
from .._tensor import Tensor, tracks_grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

# ---- argument handling (torch's helpers, same messages) ---------------------------------------------


def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = f"the value at index {i} has type {type(el)}" if is_tuple else \
                f"the given {arg_name} has type {type(el)}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensors to differentiate with respect to: views of the inputs (create_graph, so the result stays
    connected to them) or detached copies."""
    return tuple(inp.view_as(inp) if create_graph and tracks_grad(inp) else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_INDEPENDENT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not tracks_grad(inp):
            raise RuntimeError(_INDEPENDENT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and tracks_grad(o)]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


_FILL_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    from .. import zeros_like

    res = ()
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MSG[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not tracks_grad(g):
            what = "jacobian" if "double" not in stage else "hessian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res += (g,)
    return res


def _prepare_v(v, ref, is_ref_tuple, create_graph, fn_name, none_msg):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, ref, is_ref_tuple)
    elif len(ref) != 1 or ref[0].nelement() != 1:
        raise RuntimeError(none_msg)
    return v


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor with a "
                 "single element.")

# ---- the functions -------------------------------------------------------------------------------------


def _last_product(ys, xs, v, like, stage, outputs, is_outputs_tuple, res_is_tuple, strict, create_graph):
    """The final differentiation every product shares: d(ys)/d(xs) weighted by v, zeros where nothing
    flowed (shaped like `like`), then both results post-processed as torch returns them."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(ys, xs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, like, strict, create_graph, stage)
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, res_is_tuple)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of `func` at `inputs` with `v` (shaped like the
    outputs; may be None for a single-element output)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a single Tensor with a "
                       "single element.")
    return _last_product(outputs, inputs, v, inputs, "back", outputs, is_outputs_tuple,
                         is_inputs_tuple, strict, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    from .. import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # the vjp is linear in its cotangent, so any finite value will do for it
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    return _last_product(grad_inputs, grad_outputs, v, outputs, "back_trick", outputs, is_outputs_tuple,
                         is_outputs_tuple, strict, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of `func` at `inputs`: per output and input, a tensor of shape output.shape + input.shape."""
    from .. import stack, zeros_like

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(named(
                "ember.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` are "
                "not supported together (yet). Please either set `create_graph=False` or "
                "`strategy=\"reverse-mode\"`."))
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:  # (V) one vmap of autograd.grad over the outputs' standard basis (ember.func)
            if strict:
                raise RuntimeError(named(
                    "ember.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                    "together. Please either set `strict=False` or `vectorize=False`."))
            from ..func._functional import jacobian_reverse

            result = _grad_postprocess(jacobian_reverse(_autograd_grad, outputs, inputs, create_graph),
                                       create_graph)
            return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))
        result = ()
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not tracks_grad(g):
                        raise RuntimeError("The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    row.append(g)
            result += (tuple(_rows_to_jacobian(row, out, inp, stack, zeros_like) for row, inp in zip(rows, inputs)),)
        result = _grad_postprocess(result, create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


# NOTE [ Forward-mode Jacobian without vmap ]
# torch computes a forward-mode Jacobian with one vmapped dual evaluation over the standard basis of the
# inputs, and accepts only `vectorize=True`; so does ember (ember.func._functional.jacobian_forward). Inputs
# with no elements keep the loop below (one dual evaluation per basis vector: none), which still gives the
# outputs' shapes.
def _jacfwd(func, inputs, strict=False, vectorize=False):
    from .. import stack, zeros_like
    from . import forward_ad as fwAD

    if strict:
        raise RuntimeError(named(
            "ember.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not supported "
            "together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`."))
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")  # sic: torch's text
    if all(x.numel() for x in inputs):  # (V) one vmap of a jvp over the inputs' standard basis (ember.func)
        from ..func._functional import jacobian_forward

        is_outputs_tuple, result = jacobian_forward(func, inputs)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))
    columns = []  # per input: per basis vector, the tangents of the outputs
    is_outputs_tuple, primals = False, ()
    for j, x in enumerate(inputs):
        cols = []
        for k in range(x.numel()):
            with fwAD.dual_level():
                duals = []
                for i, inp in enumerate(inputs):
                    t = zeros_like(inp)
                    if i == j:
                        t.view(-1)[k] = 1
                    duals.append(fwAD.make_dual(inp, t))
                is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs", "jacobian")
                unpacked = [fwAD.unpack_dual(o) for o in outs]
                primals = tuple(p for p, _ in unpacked)
                cols.append(tuple(zeros_like(p) if t is None else t for p, t in unpacked))
        columns.append(cols)
    if not any(columns):  # no input element: one plain evaluation gives the outputs' shapes
        is_outputs_tuple, primals = _as_tuple(func(*inputs), "outputs", "jacobian")
    result = []
    for i, out in enumerate(primals):
        per_input = []
        for x, cols in zip(inputs, columns):
            shape = tuple(out.shape) + tuple(x.shape)
            if cols:
                jac = stack([c[i] for c in cols], dim=0)
                per_input.append(jac.permute(*range(1, jac.ndim), 0).reshape(shape))
            else:
                from .. import zeros

                per_input.append(zeros(shape, dtype=out.dtype))
        result.append(tuple(per_input))
    return _tuple_postprocess(tuple(result), (is_outputs_tuple, is_inputs_tuple))


def _rows_to_jacobian(row, out, inp, stack, zeros_like):
    if not row:  # an output with no elements
        from .. import zeros

        return zeros(tuple(out.shape) + tuple(inp.shape), dtype=inp.dtype)
    return stack(row, dim=0).view(tuple(out.shape) + tuple(inp.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar function `func` at `inputs` (per pair of inputs, shape input_i.shape + input_j.shape)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return is_outputs_tuple, outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): vector-Hessian product of scalar function `func`."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    return _last_product(jac, inputs, v, inputs, "double_back", outputs, is_outputs_tuple,
                         is_inputs_tuple, strict, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): Hessian-vector product of scalar function `func`, by the double-backward trick."""
    from .. import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_NONE_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    return _last_product(double_back, grad_jac, v, inputs, "double_back_trick", outputs, is_outputs_tuple,
                         is_inputs_tuple, strict, create_graph)
