"""Everything observable dispatches (issue 17): a mode on the stack sees every public function's ops, and
index, mask and target tensors reach the dispatcher as op inputs, never as arrays in the parameters.

Each entry runs under a recording mode (`Recorder`, which only redispatches) through `check`, so the
results and gradients are also held to torch's with the mode active.
"""

import numpy as np
import pytest

import ember
from ember import _modes
from tests.compare import assert_same_error, check


class Recorder:
    """A mode that writes down each op it sees (with its inputs and params) and passes it on."""

    def __init__(self):
        self.calls = []

    def dispatch(self, op, inputs, params):
        self.calls.append((op, inputs, params))
        return _modes.redispatch(op, inputs, params)

    def dispatch_inplace(self, op, self_, inputs, params):
        self.calls.append((op, inputs, params))
        return _modes.redispatch_inplace(op, self_, inputs, params)

    def __enter__(self):
        _modes.push_mode(self)
        return self

    def __exit__(self, *exc):
        _modes.pop_mode(self)


rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
X[0, 1] = X[2, 3] = 0.0
IDX = rng.integers(0, 3, (3, 4))
MASK = X > 0.2
VEC = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
SORTED = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
VALS = np.array([[-1.0, 1.0, 3.0], [0.5, 2.5, 5.0]])
ROWS = np.array([2, 0, 2])

# (name, fn(lib, *inputs), inputs, which inputs require grad)
CASES = [
    ("argsort", lambda L, x: L.argsort(x, 1), (X,), ()),
    ("argsort_desc", lambda L, x: x.argsort(0, descending=True), (X,), ()),
    ("nonzero", lambda L, x: L.nonzero(x), (X,), ()),
    ("nonzero_tuple", lambda L, x: L.nonzero(x, as_tuple=True), (X,), ()),
    ("argwhere", lambda L, x: L.argwhere(x), (X,), ()),
    ("unique", lambda L, v: L.unique(v), (VEC,), ()),
    ("unique_inverse_counts", lambda L, v: L.unique(v, return_inverse=True, return_counts=True), (VEC,), ()),
    ("unique_unsorted", lambda L, v: L.unique(v, sorted=False, return_counts=True), (VEC,), ()),
    ("unique_dim", lambda L, i: L.unique(i, dim=0, return_inverse=True, return_counts=True), (IDX,), ()),
    ("unique_consecutive", lambda L, v: L.unique_consecutive(v, return_inverse=True, return_counts=True),
     (VEC,), ()),
    ("unique_consecutive_dim", lambda L, i: L.unique_consecutive(i, dim=0, return_counts=True), (IDX,), ()),
    ("count_nonzero", lambda L, x: L.count_nonzero(x), (X,), ()),
    ("count_nonzero_dim", lambda L, x: L.count_nonzero(x, dim=1), (X,), ()),
    ("bincount", lambda L, v: L.bincount(v, minlength=12), (VEC,), ()),
    ("bincount_weights", lambda L, v, w: L.bincount(v, w), (VEC, np.linspace(0, 1, 11)), ()),
    ("searchsorted", lambda L, s, v: L.searchsorted(s, v), (SORTED, VALS), ()),
    ("searchsorted_right_int32", lambda L, s, v: L.searchsorted(s, v, right=True, out_int32=True),
     (SORTED, VALS), ()),
    ("searchsorted_scalar", lambda L, s: L.searchsorted(s, 1.0), (SORTED,), ()),
    ("searchsorted_sorter", lambda L, s, v, o: L.searchsorted(s, v, sorter=o),
     (SORTED[::-1].copy(), VALS, np.arange(5)[::-1].copy()), ()),
    ("bucketize", lambda L, v, s: L.bucketize(v, s), (VALS, SORTED), ()),
    ("histc", lambda L, x: L.histc(x, bins=5), (X,), ()),
    ("histc_range", lambda L, x: L.histc(x, bins=4, min=-1, max=1), (X,), ()),
    ("masked_select", lambda L, x, m: L.masked_select(x, m), (X, MASK), (0,)),
    ("masked_fill", lambda L, x, m: x.masked_fill(m, 2.0), (X, MASK), (0,)),
    ("masked_scatter", lambda L, x, m, s: x.masked_scatter(m, s), (X, MASK, X * 2), (0, 2)),
    ("gather", lambda L, x, i: x.gather(1, i), (X, IDX), (0,)),
    ("scatter", lambda L, x, i, s: x.scatter(1, i, s), (X, IDX, X * 3), (0, 2)),
    ("scatter_value", lambda L, x, i: x.scatter(0, i, 1.5), (X, IDX), (0,)),
    ("scatter_add", lambda L, x, i, s: x.scatter_add(1, i, s), (X, IDX, X * 3), (0, 2)),
    ("scatter_reduce_amax", lambda L, x, i, s: x.scatter_reduce(1, i, s, "amax", include_self=False),
     (X, IDX, X * 3), (0, 2)),
    ("scatter_reduce_mean", lambda L, x, i, s: x.scatter_reduce(1, i, s, "mean"), (X, IDX, X * 3), (0, 2)),
    ("index_select", lambda L, x, r: x.index_select(0, r), (X, ROWS), (0,)),
    ("index_add", lambda L, x, r, s: x.index_add(0, r, s, alpha=2), (X, ROWS, X * 2), (0, 2)),
    ("index_copy", lambda L, x, r, s: x.index_copy(0, r[:2], s[:2]), (X, ROWS, X * 2), (0, 2)),
    ("index_fill", lambda L, x, r: x.index_fill(1, r, -1.0), (X, ROWS), (0,)),
    ("take", lambda L, x, i: L.take(x, i - 4), (X, IDX), (0,)),
    ("getitem_tensor", lambda L, x, r: x[r, 1:], (X, ROWS), (0,)),
    ("getitem_mask", lambda L, x, m: x[m], (X, MASK), (0,)),
    ("getitem_two_tensors", lambda L, x, r: x[r, r], (X, ROWS), (0,)),
    ("setitem_tensor", lambda L, x, r: _setitem(x * 1, (r, slice(None)), 7.0), (X, ROWS), (0,)),
    ("index_put", lambda L, x, r, v: x.index_put((r,), v, accumulate=True), (X, ROWS, X[0] * 1), (0, 2)),
    ("embedding", lambda L, w, i: L.nn.functional.embedding(i, w), (X, IDX), (0,)),
    ("nll_loss", lambda L, x, t: L.nn.functional.nll_loss(x, t), (X, ROWS), (0,)),
    ("cross_entropy", lambda L, x, t: L.nn.functional.cross_entropy(x, t, label_smoothing=0.1), (X, ROWS), (0,)),
    ("max_pool_indices", lambda L, x: L.nn.functional.max_pool1d(x[None], 2, return_indices=True), (X,), (0,)),
]


def _setitem(t, key, v):
    t[key] = v
    return t


@pytest.mark.parametrize("name, fn, inputs, grad", CASES, ids=[c[0] for c in CASES])
def test_public_function_dispatches(name, fn, inputs, grad):
    with Recorder() as rec:
        check(fn, *inputs, grad=grad)
    assert rec.calls, f"{name} ran without dispatching an op"


def _arrays_in(params):
    for p in params:
        if isinstance(p, np.ndarray) and p.ndim:
            yield p
        elif isinstance(p, (tuple, list)):
            yield from _arrays_in(p)


@pytest.mark.parametrize("name, fn, inputs, grad", CASES, ids=[c[0] for c in CASES])
def test_tensor_arguments_are_op_inputs(name, fn, inputs, grad):
    """Every integer or bool tensor argument reaches some op as an input, and no op parameter holds an
    array (a tracer would bake it into the graph)."""
    args = [ember.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
    with Recorder() as rec:
        fn(ember, *args)
    for a in args:
        if isinstance(a, ember.Tensor) and not a.is_floating_point():
            assert any(any(t is a for t in inputs) for _, inputs, _ in rec.calls), f"{name}: {a} is not an input"
    for op, _, params in rec.calls:
        assert not list(_arrays_in(params)), f"{name}: {op.name} has an array parameter"


def test_index_inputs_have_no_edge_and_are_version_checked():
    """As in torch: the index is not in next_functions, and changing it in place before backward raises."""
    for lib in (ember, __import__("torch")):
        x = lib.tensor(X, requires_grad=True)
        i = lib.tensor(IDX)
        y = x.gather(1, i)
        assert len(y.grad_fn.next_functions) == 1
        assert len(lib.nn.functional.nll_loss(x, lib.tensor(ROWS)).grad_fn.next_functions) == 1

    def modified_index(lib, x, i):
        y = x.gather(1, i)
        i.add_(0)
        y.sum().backward()

    assert_same_error(lambda lib, x, i: modified_index(lib, x.requires_grad_(), i), X, IDX)


def test_index_inputs_go_through_saved_tensor_hooks():
    """torch's saved-tensor hooks see an index_select's index (it is saved for backward), and so do ember's."""
    for lib in (ember, __import__("torch")):
        seen = []

        def pack(t, seen=seen):
            seen.append(t.dtype)
            return t

        x = lib.tensor(X, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = x.index_select(0, lib.tensor(ROWS))
        y.sum().backward()
        assert seen == [lib.int64], (lib.__name__, seen)


class _Scale:
    """A custom Function in the setup_context style with a non-tensor argument, saving an input."""

    @staticmethod
    def make(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k, y):
                return x * k * y, (x > 0)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k, y = inputs
                ctx.k = k
                ctx.save_for_backward(x, y)
                ctx.mark_non_differentiable(output[1])

            @staticmethod
            def backward(ctx, g, _):
                x, y = ctx.saved_tensors
                return g * ctx.k * y, None, g * ctx.k * x if ctx.needs_input_grad[2] else None
        return Scale


def test_function_apply_dispatches_as_one_higher_order_op():
    """A mode sees `Function.apply` as the op `autograd_function_apply`: its inputs are the tensor
    arguments, its params carry the Function and the other arguments; results and grads are torch's."""
    with Recorder() as rec:
        check(lambda L, x, y: _Scale.make(L).apply(x, 3.0, y), X, X * 2, grad=(0, 1))
    applies = [(op, inputs, params) for op, inputs, params in rec.calls if op.name == "autograd_function_apply"]
    assert len(applies) == 1
    op, inputs, params = applies[0]
    assert len(inputs) == 2 and all(isinstance(t, ember.Tensor) for t in inputs)
    assert params[0].__name__ == "Scale" and 3.0 in params[1]
    # the ops of forward (and of the backward formula, run by the engine) reach the mode too
    assert {"mul", "gt"} <= {op.name for op, _, _ in rec.calls}


def test_function_apply_under_a_mode_keeps_identity_rules():
    """An input returned as is comes back as a view, a dirty input keeps its identity, under a mode."""
    class Ident(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            y.add_(1)
            ctx.mark_dirty(y)
            return x, y

        @staticmethod
        def backward(ctx, gx, gy):
            return gx, gy

    x = ember.tensor(X, requires_grad=True)
    y = ember.tensor(X) * 1
    y.requires_grad_(False)
    with Recorder():
        a, b = Ident.apply(x, y)
    assert a is not x and a._base is x and b is y
