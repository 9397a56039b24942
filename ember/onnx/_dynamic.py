"""Dynamic axes by tracing again: every shape argument as a linear function of the dynamic sizes.

ember's trace records Python ints (a `view`'s shape, an LSTM's sequence length), not the symbolic sizes
torch's tracer records, so a trace alone cannot tell which of them follow the batch size. For each named
dynamic dimension (`dynamic_axes={"x": {0: "batch"}}`) the model is traced twice more, with that dimension
one and two larger (the inputs extended by repeating their last slice). Calls are matched by position; an
int argument that changes is `a * size + b`, its `a` and `b` read off the first two traces and checked
against the third. The export then computes such arguments in the graph from `Shape` of the input
(`Gather`, `Mul`, `Add`), or, for a `Reshape`, writes 0 (copy the input's dimension) or -1 (infer it)
where that says the same, as torch's exports do.

A model whose calls differ when a dynamic size changes (data-dependent control flow), or whose shapes are
not linear in one size at a time, cannot be exported with those axes; the error says which call.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor


def _leaves(call):
    """The int arguments of a call that may follow a dynamic size, as a flat list."""
    if call.op.name == "rnn_layer":
        bs = call.params[2]
        return [len(bs), bs[0]]
    out = []
    for p in call.params:
        if isinstance(p, bool):
            continue
        if isinstance(p, int):
            out.append(p)
        elif isinstance(p, (tuple, list)) and all(isinstance(e, int) and not isinstance(e, bool) for e in p):
            out.extend(p)
    return out


def _shapes(call):
    return [tuple(t.shape) for t in list(call.inputs) + list(call.outputs) if isinstance(t, Tensor)]


class Shapes:
    """The dynamic sizes of one export and, per call, the linear forms of its int arguments."""

    def __init__(self, symbols, sizes, sources):
        self.symbols = symbols        # [name]
        self.sizes = sizes            # {name: size in the first trace}
        self.sources = sources        # {name: (input Value name, axis)}
        self.forms = {}               # call index -> [None | ({name: a}, b) per leaf]
        self.dim_params = {}          # graph value name -> {axis: name}
        self._dims = {}

    def has(self, i):
        return any(f is not None for f in self.forms.get(i, ()))

    # --- graph pieces ------------------------------------------------------------------------------
    def _size(self, g, name):
        """The dynamic size `name` as an int64 [1] tensor, from the Shape of the input it came from."""
        v = self._dims.get(name)
        if v is None:
            src, axis = self.sources[name]
            saved, g.scope = g.scope, ""
            shape = g.op("Shape", _named(src))
            v = self._dims[name] = g.op("Gather", shape, g.ints([axis]), axis_i=0)
            g.scope = saved
        return v

    def _form_value(self, g, form):
        coeffs, b = form
        if b is None:
            raise ValueError("a product of two dynamic sizes, which the export can only infer inside a Reshape")
        total = None
        for name, a in coeffs.items():
            term = self._size(g, name)
            if a != 1:
                term = g.op("Mul", term, g.ints([a]))
            total = term if total is None else g.op("Add", total, term)
        return total if b == 0 else g.op("Add", total, g.ints([b]))

    def value(self, g, i, leaf):
        form = self.forms[i][leaf]
        if form is None:
            raise ValueError("static leaf asked as dynamic")
        return self._form_value(g, form)

    def shape(self, g, i, param_index, static):
        forms = self._param_forms(i, param_index)
        parts = [g.ints([d]) if f is None else self._form_value(g, f) for d, f in zip(static, forms)]
        return g.op("Concat", *parts, axis_i=0)

    def reshape(self, g, i, call):
        """A Reshape's target: 0 where the input's dimension at that place is the same dynamic form, -1 for one
        remaining dynamic dimension, computed sizes otherwise."""
        forms = self._param_forms(i, 0)
        in_forms = self.input_forms.get(i, [None] * len(call.inputs[0].shape))
        target = list(call.params[0])
        dyn = [k for k, f in enumerate(forms) if f is not None]
        out = list(target)
        rest = []
        for k in dyn:
            if k < len(in_forms) and in_forms[k] == forms[k]:
                out[k] = 0
            else:
                rest.append(k)
        if len(rest) == 1 and -1 not in [target[k] for k in range(len(target)) if k not in dyn]:
            out[rest[0]] = -1
            return g.ints(out)
        if not rest:
            return g.ints(out)
        parts = [g.ints([d]) if k not in rest else self._form_value(g, forms[k]) for k, d in enumerate(out)]
        return g.op("Concat", *parts, axis_i=0)

    def rnn_dims(self, g, i, steps, batch):
        f = self.forms[i]
        return tuple(d if form is None else self._form_value(g, form) for d, form in zip((steps, batch), f))

    def _param_forms(self, i, param_index):
        """The forms of the leaves of param `param_index` of call i."""
        return self.param_forms[i][param_index]


def _named(name):
    from ._graph import Value

    return Value(name)


def analyse(call_lists, symbols, sizes, steps):
    """Forms of every call's int leaves, from the base trace and, per symbol, traces at size + 1 and + 2.

    `call_lists` is {None: base calls, (name, k): calls at size + k}. Raises ValueError naming the first
    call whose structure or shapes differ in a way linear forms cannot explain."""
    base = call_lists[None]
    forms, input_forms, param_forms = {}, {}, {}
    for name in symbols:
        for k in steps:
            other = call_lists[(name, k)]
            if len(other) != len(base) or any(a.op is not b.op for a, b in zip(base, other)):
                n = next((j for j, (a, b) in enumerate(zip(base, other)) if a.op is not b.op),
                         min(len(base), len(other)))
                what = base[n].op.qualname if n < len(base) else "the end of the trace"
                raise ValueError(f"the model runs different ops when dynamic axis '{name}' changes size (call "
                                 f"{n}: {what}); it cannot be exported with that axis dynamic")
    pairs = [(a, b) for n, a in enumerate(symbols) for b in symbols[n + 1:]]
    for i, call in enumerate(base):
        leaves = _leaves(call)
        fl = [None] * len(leaves)
        for name in symbols:
            l1 = _leaves(call_lists[(name, 1)][i])
            l2 = _leaves(call_lists[(name, 2)][i])
            if len(l1) != len(leaves) or len(l2) != len(leaves):
                raise ValueError(f"the arguments of call {i} ({call.op.qualname}) change length when dynamic axis "
                                 f"'{name}' changes size")
            for j, (v0, v1, v2) in enumerate(zip(leaves, l1, l2)):
                a = v1 - v0
                if a == 0 and v2 == v0:
                    continue
                if v2 - v0 != 2 * a:
                    raise ValueError(f"argument {j} of call {i} ({call.op.qualname}) is not linear in dynamic axis "
                                     f"'{name}'")
                coeffs, b = fl[j] if fl[j] is not None else ({}, v0)
                coeffs = dict(coeffs, **{name: a})
                fl[j] = (coeffs, b - a * sizes[name])
        # a product of two dynamic sizes (batch * seq) is linear in each alone: the trace with both grown
        # tells; such a form is marked inexact, and only a Reshape can use it (as its one -1)
        for pair in pairs:
            both = _leaves(call_lists[pair][i])
            for j, (v0, vb) in enumerate(zip(leaves, both)):
                f = fl[j]
                if f is not None and vb != v0 + sum(f[0].get(s, 0) for s in pair):
                    fl[j] = (f[0], None)
        forms[i] = fl
        # per-param grouping of the leaves (for shapes), and the first input's per-dimension forms
        groups, pos = [], 0
        for p in call.params:
            if isinstance(p, (tuple, list)) and all(isinstance(e, int) and not isinstance(e, bool) for e in p) \
                    and call.op.name != "rnn_layer":
                groups.append(fl[pos:pos + len(p)])
                pos += len(p)
            elif isinstance(p, int) and not isinstance(p, bool) and call.op.name != "rnn_layer":
                groups.append([fl[pos]])
                pos += 1
            else:
                groups.append([])
        param_forms[i] = groups
        if call.inputs and isinstance(call.inputs[0], Tensor):
            dims = []
            for d, n0 in enumerate(call.inputs[0].shape):
                coeffs = {}
                for name in symbols:
                    n1 = call_lists[(name, 1)][i].inputs[0].shape[d]
                    if n1 != n0:
                        coeffs[name] = n1 - n0
                dims.append(None if not coeffs else (coeffs, n0 - sum(a * sizes[s] for s, a in coeffs.items())))
            input_forms[i] = dims
    return forms, input_forms, param_forms


def grow(array, axis, k):
    """`array` with its last slice along `axis` repeated k more times."""
    last = np.take(array, [-1], axis=axis)
    return np.concatenate([array] + [last] * k, axis=axis)
