"""The OpInfo table is linked to the op registry (issue 17): every registered op is reached by some entry,
and every public function or Tensor method the table calls dispatches at least one op.

The link (entry id -> the qualified names of the ops it reaches) is computed, not written: each entry's
samples run under a recording mode, forward, then backward and double backward where the entry has them
(backward-only ops such as convolution_backward_* are reached that way) and in place where it has an in-place
form. A new op without an entry, or a public function that computes without dispatching (so a mode, a tracer
or a meta tensor would not see it), fails here by name.
"""

import warnings

import numpy as np
import pytest
from compare import to_ember
from op_db import OPS

import ember
import ember.nn.functional  # noqa: F401 - every module that declares ops
import ember.optim  # noqa: F401
import ember.optim.swa_utils  # noqa: F401
from ember._dispatch import registry
from ember._modes import Mode, redispatch, redispatch_inplace


class Reach(Mode):
    """Records the qualified name of every op it sees, and passes the op on."""

    def __init__(self):
        self.names = set()

    def dispatch(self, op, inputs, params):
        self.names.add(op.qualname)
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.names.add(op.qualname)
        return redispatch_inplace(op, self_, inputs, params)


def _tensors(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return [out] if isinstance(out, ember.Tensor) else []


def _run_entry(op):
    """Run every sample of `op` (its first dtype, float64 for its gradients); the names of the ops reached."""
    rec = Reach()
    rng = np.random.default_rng(0)
    with rec, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in op.samples(op.dtypes[0], rng):
            op.fn(ember, *to_ember(list(s.inputs)), **s.kwargs)
            if op.inplace and isinstance(s.inputs[0], np.ndarray):
                xs = to_ember(list(s.inputs))
                try:
                    op.inplace(ember, xs[0].clone(), *xs[1:], **s.kwargs)
                except RuntimeError:  # (a sample whose result cannot be written into its input)
                    pass
        if op.grad:
            for s in op.samples("float64", rng):
                want = [i for i, x in enumerate(s.inputs) if isinstance(x, np.ndarray) and x.dtype.kind == "f"
                        and (op.grad_inputs is None or i in op.grad_inputs)]
                xs = [to_ember(x, i in want) for i, x in enumerate(s.inputs)]
                outs = [o for o in _tensors(op.fn(ember, *xs, **s.kwargs)) if o.requires_grad]
                leaves = [xs[i] for i in want]
                if not outs or not leaves:
                    continue
                loss = sum((o * 1.5).sum() for o in outs)
                gs = ember.autograd.grad(loss, leaves, create_graph=bool(op.gradgrad), allow_unused=True)
                gs = [g for g in gs if g is not None and g.requires_grad]
                if op.gradgrad and gs:
                    ember.autograd.grad(sum((g * g).sum() for g in gs), leaves, allow_unused=True)
    return frozenset(rec.names)


@pytest.fixture(scope="module")
def link():
    """entry id -> the qualified names of the ops its samples reach."""
    return {op.id: _run_entry(op) for op in OPS}


def test_every_registered_op_is_reached_by_an_entry(link):
    reached = frozenset().union(*link.values())
    missing = sorted(set(registry) - reached)
    assert not missing, f"{len(missing)} registered ops have no OpInfo entry in tests/ops/op_db.py: {missing}"


def test_every_entry_reaches_a_registered_op(link):
    by_id = {op.id: op for op in OPS}
    empty = sorted(op_id for op_id, names in link.items() if not names & set(registry)
                   and by_id[op_id].samples(by_id[op_id].dtypes[0], np.random.default_rng(0)))  # (error-only entries)
    assert not empty, f"OpInfo entries that dispatch no op: {empty}"


# ---- the public surface dispatches ----------------------------------------------------------------------------
# Every function of ember's op namespace (`ember._ops.public`) and every public Tensor method that the table's
# samples call must dispatch at least one op on each call that returns something other than one of its
# arguments (`x.contiguous()` of a contiguous x is x, as in torch). Exceptions, each with its reason:
NO_OP = {
    # metadata: they read shape, dtype, strides or flags, computing nothing (torch's are not ops either)
    **dict.fromkeys(("numel", "size", "dim", "ndimension", "nelement", "stride", "storage_offset",
                     "is_contiguous", "is_floating_point", "is_complex", "is_signed", "element_size",
                     "data_ptr", "is_tensor", "is_storage", "get_default_dtype", "result_type", "can_cast",
                     "promote_types", "is_nonzero", "is_same_size", "is_set_to", "type", "get_device",
                     "is_inference", "has_names", "is_conj", "is_neg", "untyped_storage", "storage",
                     "dim_order", "is_pinned", "is_shared", "is_leaf", "requires_grad_", "retain_grad",
                     "register_hook", "backward", "detach_", "share_memory_", "_is_view", "named_parameters"),
                    "metadata or autograd bookkeeping, no computation"),
    # values read out into Python: torch's `_local_scalar_dense` / `numpy()` leave the tensor world
    **dict.fromkeys(("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__"),
                    "reads values out to Python"),
    "from_numpy": "wraps the caller's NumPy array: no tensor input, nothing computed",
    "detach": "an alias cut from autograd history (torch's aten::detach); kept off the dispatcher, as it runs in "
              "every optimizer step and hook",
}


class _Count(Mode):
    def __init__(self):
        self.n = 0

    def dispatch(self, op, inputs, params):
        self.n += 1
        return redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.n += 1
        return redispatch_inplace(op, self_, inputs, params)


def _surface():
    """(holder, attribute name, label) for each function of ember._ops.public and each public Tensor method."""
    from ember._ops import public
    out = [(ember, n, n) for n in sorted(public) if getattr(ember, n, None) is public[n]]
    out += [(ember.Tensor, n, "Tensor." + n) for n, v in sorted(vars(ember.Tensor).items())
            if not n.startswith("_") and callable(v) and not isinstance(v, (type, staticmethod, classmethod))]
    return out


def test_public_functions_called_by_the_table_dispatch(monkeypatch):
    counter = _Count()
    calls = {}  # label -> [calls that returned, calls that returned without dispatching]

    def wrap(label, fn):
        def wrapper(*args, **kwargs):
            before = counter.n
            out = fn(*args, **kwargs)
            rec = calls.setdefault(label, [0, 0])
            rec[0] += 1
            rec[1] += counter.n == before and not any(out is a for a in args)  # (identity returns are free)
            return out
        return wrapper

    for holder, name, label in _surface():
        monkeypatch.setattr(holder, name, wrap(label, getattr(holder, name)))
    with counter, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in OPS:
            for s in op.samples(op.dtypes[0], np.random.default_rng(0)):
                op.fn(ember, *to_ember(list(s.inputs)), **s.kwargs)
    silent = sorted(label for label, (n, quiet) in calls.items()
                    if quiet and label.split(".")[-1] not in NO_OP)
    assert not silent, f"public functions that returned without dispatching an op: {silent}"
    assert len(calls) > 300, "the table calls few of the public functions: is the wrapping broken?"
