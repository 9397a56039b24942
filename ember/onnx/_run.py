"""One export from start to end: trace, dynamic axes, convert (see `_export.py`'s docstring)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from . import _dynamic
from ._export import _flatten, convert, default_input_names, trace_model, warn_unused


class _FunctionModule:
    """A plain function exported as a model: no parameters, no submodules."""

    def __init__(self, fn):
        self.fn = fn
        self.forward = fn

    def __call__(self, *a, **k):
        return self.fn(*a, **k)

    def named_parameters(self, remove_duplicate=True):
        return iter(())

    named_buffers = named_parameters

    def named_modules(self):
        return iter(())


def run_export(model, args, kwargs, input_names, output_names, opset, export_params, do_constant_folding,
               training, dynamic_axes, keep_initializers_as_inputs):
    import ember

    if not hasattr(model, "named_parameters"):
        model = _FunctionModule(model)
    inputs = _flatten(args)
    input_names = list(input_names or []) + default_input_names(model, inputs)[len(input_names or []):]
    state = {n: b.detach().clone() for n, b in model.named_buffers()}  # batch norm in training mode updates these
    try:
        trace, out = trace_model(model, args, kwargs)
        outputs = _flatten(out)
        if not outputs:
            raise ValueError("the model returned no tensors to export")
        n_out = len(outputs)
        output_names = list(output_names or []) + [f"output_{i}" if n_out > 1 else "output"
                                                   for i in range(len(output_names or []), n_out)]
        dynamic = None
        if dynamic_axes:
            dynamic = _dynamic_shapes(model, args, kwargs, inputs, input_names, output_names, dynamic_axes,
                                      trace, outputs)
        with ember.no_grad():
            return convert(trace, model, inputs, input_names, outputs, output_names, opset, export_params,
                           do_constant_folding, training, dynamic, keep_initializers_as_inputs)
    finally:
        with ember.no_grad():
            for n, b in model.named_buffers():
                if n in state:
                    b.copy_(state[n])


def _normalise_axes(dynamic_axes, names):
    """{name: {axis: dim name}} from torch's two spellings ({name: [axes]} names them `<name>_dynamic_axes_<k>`)."""
    out = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, dict):
            out[name] = {int(a): str(d) for a, d in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
    warn_unused([n for n in out if n not in names], "input/output")
    return out


def _dynamic_shapes(model, args, kwargs, inputs, input_names, output_names, dynamic_axes, base, base_outputs):
    axes = _normalise_axes(dynamic_axes, list(input_names) + list(output_names))
    symbols, sizes, sources = [], {}, {}
    for i, name in enumerate(input_names):
        for axis, dim in axes.get(name, {}).items():
            if dim not in sizes:
                symbols.append(dim)
                sizes[dim] = inputs[i].shape[axis]
                sources[dim] = (name, axis)
    shapes = _dynamic.Shapes(symbols, sizes, sources)
    shapes.dim_params = {n: axes[n] for n in axes}
    if not symbols:
        return shapes
    lists = {None: base.calls}
    grown_outputs = {}
    for key, dims, k in [((d, k), (d,), k) for d in symbols for k in (1, 2)] + \
            [((a, b), (a, b), 1) for n, a in enumerate(symbols) for b in symbols[n + 1:]]:
        grown = args
        for d in dims:
            grown = _grow_args(grown, _flatten(grown), input_names, axes, d, k)
        trace, out = trace_model(model, grown, kwargs)
        lists[key] = trace.calls
        grown_outputs[key] = _flatten(out)
    try:
        shapes.forms, shapes.input_forms, shapes.param_forms = _dynamic.analyse(lists, symbols, sizes, (1, 2))
    except ValueError as e:
        from ._export import SymbolicValueError

        raise SymbolicValueError(f"dynamic_axes: {e}") from None
    # an output dimension that changes with the dynamic sizes is dynamic too: named after the size when it
    # is that size (torch propagates the name), else `<output>_dim_<axis>`
    for k, (name, t) in enumerate(zip(output_names, base_outputs)):
        named = shapes.dim_params.setdefault(name, {})
        for a, n0 in enumerate(t.shape):
            steps = {d: grown_outputs[(d, 1)][k].shape[a] - n0 for d in symbols}
            moved = {d: step for d, step in steps.items() if step}
            if not moved and all(outs[k].shape[a] == n0 for outs in grown_outputs.values()):
                continue
            same = [d for d, step in moved.items() if step == 1 and n0 == sizes[d]]
            named.setdefault(a, same[0] if len(moved) == 1 and same else f"{name}_dim_{a}")
    return shapes


def _grow_args(args, inputs, input_names, axes, dim, k):
    """The example args with every input dimension named `dim` k larger."""
    import ember

    grown = {}
    for t, name in zip(inputs, input_names):
        arr = t.detach().numpy()
        for axis, d in axes.get(name, {}).items():
            if d == dim:
                arr = _dynamic.grow(arr, axis, k)
        if arr.shape != tuple(t.shape):
            grown[id(t)] = ember.from_numpy(np.ascontiguousarray(arr))

    return _swap(args, grown)


def _swap(obj, grown):
    """`obj` with each tensor whose id is in `grown` replaced by its grown copy (through lists, tuples, dicts)."""
    if isinstance(obj, Tensor):
        return grown.get(id(obj), obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_swap(o, grown) for o in obj)
    if isinstance(obj, dict):
        return {k: _swap(v, grown) for k, v in obj.items()}
    return obj
