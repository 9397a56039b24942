"""Meta rules over the whole OpInfo table (NOTE [ Meta payloads ]).

Every sample of every op runs on meta tensors (shape, dtype and strides, no data) in ember and in torch,
and must give torch's meta outputs or torch's error class, and the shapes and dtypes ember's own kernel
gives on real data. Where torch has no meta kernel for an op, ember's meta outputs are held to ember's
kernel entirely (which test_ops holds to torch). Ops whose
output shape depends on the data (tag `dynamic_output_shape`) refuse meta inputs, as torch's do.
"""

import numpy as np
import pytest
import torch
from compare import to_ember, to_torch
from op_db import OPS

import ember

_BY_NAME = {op.id: op for op in OPS}


def _inputs(lib, inputs, meta):
    conv = to_ember if lib is ember else to_torch
    return [(conv(x).to("meta") if meta else conv(x)) if isinstance(x, np.ndarray) else x for x in inputs]


def _outcome(lib, op, sample, meta=True):
    try:
        out = op.fn(lib, *_inputs(lib, sample.inputs, meta), **sample.kwargs)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    flat = _flatten(out)
    return [(tuple(t.shape), str(t.dtype).split(".")[-1], t.stride(), t.storage_offset(),
             t.device.type)
            if isinstance(t, (ember.Tensor, torch.Tensor)) else type(t).__name__ for t in flat]


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return [out]


@pytest.mark.parametrize("name", [op.id for op in OPS])
def test_meta(name):
    op = _BY_NAME[name]
    for dtype in op.dtypes:
        for s in op.samples(dtype, np.random.default_rng(0)):
            t = _outcome(torch, op, s)
            e = _outcome(ember, op, s)
            if t == "NotImplementedError" and e != t:  # torch has no meta kernel: hold ember to its kernel
                real = _outcome(ember, op, s, meta=False)
                real = [r[:4] + ("meta",) if isinstance(r, tuple) else r for r in real] \
                    if isinstance(real, list) else real
                assert e == real, f"{name} {dtype}: ember meta {e} != ember kernel {real}"
            else:
                assert e == t, f"{name} {dtype}: ember {e} != torch {t}"
                if isinstance(e, list):  # and the meta rule agrees with the kernel on shapes and dtypes
                    real = _outcome(ember, op, s, meta=False)
                    assert isinstance(real, list) and [r[:2] if isinstance(r, tuple) else r for r in real] == \
                        [m[:2] if isinstance(m, tuple) else m for m in e], f"{name} {dtype}: kernel {real} != meta {e}"


# ---- ops with no OpInfo entry: views, creation, casts, and the composites built on them -------------------
# Each row: (id, call(lib, *inputs), input specs). A spec is (kind, shape): "f" float32, "T" a transposed
# float32 (of the reversed shape), "d" float64, "c" complex64, "i" int64 in [0, 3), "b" bool. Views are
# held to torch's storage offsets as well as its strides.


def _spec(rng, kind, shape):
    if kind == "T":
        return rng.standard_normal(shape[::-1]).astype(np.float32).T
    if kind == "i":
        return rng.integers(0, 3, shape).astype(np.int64)
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return rng.standard_normal(shape).astype({"f": np.float32, "d": np.float64}[kind])


F34, T34, F234 = ("f", (3, 4)), ("T", (3, 4)), ("f", (2, 3, 4))
F2345 = ("f", (2, 3, 4, 5))
_cl = "channels_last"

EXTRA = [
    # view / reshape and friends
    ("view", lambda L, x: x.view(4, 3), [F34]),
    ("view_infer", lambda L, x: x.view(2, -1, 2), [F234]),
    ("view_transposed", lambda L, x: x.view(12), [T34]),
    ("view_transposed_ok", lambda L, x: x.unsqueeze(1).view(3, 4), [T34]),
    ("view_split_dim", lambda L, x: x[:, 1:].view(2, 3, 1, 3), [F234]),
    ("view_0d", lambda L, x: x.view(1, 1), [("f", ())]),
    ("view_empty", lambda L, x: x.view(3, 0), [("T", (0, 3))]),
    ("view_bad", lambda L, x: x.view(5, 3), [F34]),
    ("reshape_view", lambda L, x: x.reshape(6, 2), [F34]),
    ("reshape_copy", lambda L, x: x.reshape(12), [T34]),
    ("view_as", lambda L, x, y: x.view_as(y), [F34, ("f", (12,))]),
    ("reshape_as", lambda L, x, y: x.reshape_as(y), [T34, ("f", (2, 6))]),
    ("flatten", lambda L, x: x.flatten(1), [F234]),
    ("flatten_0d", lambda L, x: x.flatten(), [("f", ())]),
    ("unflatten", lambda L, x: x.unflatten(1, (2, -1)), [F34]),
    ("ravel", lambda L, x: x.ravel(), [T34]),
    ("view_dtype_same", lambda L, x: x.view(L.int32), [T34]),
    ("view_dtype_smaller", lambda L, x: x[1:].view(L.int8), [F34]),
    ("view_dtype_larger", lambda L, x: x[:, 1:].view(L.int16), [("f", (3, 5))]),
    ("view_dtype_bad_stride", lambda L, x: x.view(L.int8), [T34]),
    ("view_dtype_0d", lambda L, x: x.view(L.int8), [("f", ())]),
    ("view_dtype_indivisible", lambda L, x: x.view(L.float64), [("f", (3, 3))]),
    ("view_as_real", lambda L, x: L.view_as_real(x[1:]), [("c", (3, 4))]),
    ("view_as_complex", lambda L, x: L.view_as_complex(x[1:]), [("f", (3, 4, 2))]),
    ("real_imag", lambda L, x: (x.real, x.imag), [("c", (3, 4))]),
    # squeeze / unsqueeze / transposes / expand
    ("squeeze", lambda L, x: x.squeeze(), [("f", (1, 3, 1, 2))]),
    ("squeeze_dim", lambda L, x: x.squeeze(2), [("f", (1, 3, 1, 2))]),
    ("squeeze_dims", lambda L, x: x.squeeze((0, 1)), [("f", (1, 3, 1, 2))]),
    ("unsqueeze", lambda L, x: (x.unsqueeze(0), x.unsqueeze(1), x.unsqueeze(-1)), [T34]),
    ("transpose", lambda L, x: x.transpose(0, 2), [F234]),
    ("swapaxes", lambda L, x: x.swapaxes(-1, 0), [F234]),
    ("t", lambda L, x: x.t(), [T34]),
    ("t_1d", lambda L, x: x.t(), [("f", (3,))]),
    ("t_3d", lambda L, x: x.t(), [F234]),
    ("permute", lambda L, x: x.permute(2, 0, 1), [F234]),
    ("permute_dup", lambda L, x: x.permute(2, 0, 0), [F234]),
    ("movedim", lambda L, x: x.movedim(0, -1), [F234]),
    ("mT", lambda L, x: x.mT, [F234]),
    ("expand", lambda L, x: x.expand(2, 3, 4), [("f", (3, 1))]),
    ("expand_lead_one", lambda L, x: x.expand(1, 1, 3, 2), [("f", (3, 1))]),
    ("expand_0d", lambda L, x: x.expand(1, 3, 1), [("f", ())]),
    ("expand_bad", lambda L, x: x.expand(3, 5), [("f", (3, 2))]),
    ("expand_as", lambda L, x, y: x.expand_as(y), [("f", (4,)), T34]),
    ("broadcast_to", lambda L, x: L.broadcast_to(x, (2, 3, 4)), [("f", (1, 4))]),
    ("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), [("f", (3, 1)), ("f", (4,))]),
    ("sum_to_size", lambda L, x: x.sum_to_size(3, 1), [T34]),
    # selecting views
    ("select", lambda L, x: (x.select(0, 1), x.select(1, -1)), [T34]),
    ("select_bad", lambda L, x: x.select(1, 4), [F34]),
    ("narrow", lambda L, x: x.narrow(1, 1, 2), [T34]),
    ("narrow_bad", lambda L, x: x.narrow(1, 3, 2), [F34]),
    ("getitem_basic", lambda L, x: (x[1], x[:, 1:], x[..., ::2], x[None, 1, :, -1], x[1:1], x[:, 9:]),
     [F234]),
    ("getitem_ellipsis", lambda L, x: (x[...], x[:]), [T34]),
    ("unfold", lambda L, x: x.unfold(1, 2, 1), [T34]),
    ("unfold_step", lambda L, x: x.unfold(0, 2, 2), [F234]),
    ("unfold_0d", lambda L, x: x.unfold(0, 1, 1), [("f", ())]),
    ("unfold_bad", lambda L, x: x.unfold(1, 5, 1), [F34]),
    ("diagonal", lambda L, x: (x.diagonal(), x.diagonal(1), x.diagonal(-1), x.diagonal(9)), [T34]),
    ("diagonal_dims", lambda L, x: x.diagonal(1, 2, 0), [F234]),
    ("diagonal_same", lambda L, x: x.diagonal(0, 1, 1), [F234]),
    ("as_strided", lambda L, x: (x.as_strided((2, 2), (1, 2)), x.as_strided((2,), (3,), 1)), [F34]),
    ("as_strided_view", lambda L, x: x[1:].as_strided((2, 2), (1, 2)), [F34]),
    ("split", lambda L, x: x.split(2, 1), [T34]),
    ("split_sizes", lambda L, x: x.split([1, 3], 1), [F34]),
    ("split_bad", lambda L, x: x.split([1, 2], 1), [F34]),
    ("chunk", lambda L, x: x.chunk(3, 0), [F234]),
    ("tensor_split", lambda L, x: (x.tensor_split(3, 1), x.tensor_split([1, 3], 1)), [F34]),
    ("unbind", lambda L, x: x.unbind(1), [T34]),
    # joins and copies
    ("cat", lambda L, x, y: L.cat([x, y], 1), [T34, ("f", (3, 2))]),
    ("cat_promote", lambda L, x, y: L.cat([x, y]), [("i", (2, 3)), ("d", (1, 3))]),
    ("cat_one", lambda L, x: L.cat([x]), [T34]),
    ("cat_empty_1d", lambda L, x, y: L.cat([x, y]), [("f", (0,)), F34]),
    ("cat_bad", lambda L, x, y: L.cat([x, y]), [F34, ("f", (3, 3))]),
    ("stack", lambda L, x, y: (L.stack([x, y]), L.stack([x, y], -1)), [T34, F34]),
    ("stack_bad", lambda L, x, y: L.stack([x, y]), [F34, ("f", (4, 3))]),
    ("contiguous", lambda L, x: x.contiguous(), [T34]),
    ("clone", lambda L, x: x.clone(), [T34]),
    ("to_dtype", lambda L, x: (x.to(L.float64), x.double(), x.long(), x.type(L.int8), x.bool()), [T34]),
    ("meshgrid", lambda L, x, y: L.meshgrid(x, y, indexing="xy"), [("f", (3,)), ("f", (4,))]),
    # creation on meta
    ("arange", lambda L: (L.arange(5, device="meta"), L.arange(1.0, 3.0, 0.5, device="meta")), []),
    ("linspace", lambda L: L.linspace(0, 1, 7, device="meta"), []),
    ("logspace", lambda L: L.logspace(0, 1, 7, device="meta"), []),
    ("eye", lambda L: (L.eye(3, device="meta"), L.eye(2, 5, dtype=L.int64, device="meta")), []),
    ("empty_strided", lambda L: L.empty_strided((2, 3), (1, 2), device="meta"), []),
    ("factories", lambda L: (L.zeros(2, 3, device="meta"), L.ones(2, dtype=L.int32, device="meta"),
                             L.full((2,), 1.5, device="meta"), L.empty(3, device="meta")), []),
    ("like", lambda L, x: (L.zeros_like(x), L.empty_like(x), L.full_like(x, 2),
                           L.ones_like(x, dtype=L.int64)), [T34]),
    ("new_factories", lambda L, x: (x.new_zeros(2), x.new_empty((2, 3)), x.new_full((2,), 3.0)), [F34]),
    # scans that compose the ops above
    ("cumsum_dtype", lambda L, x: x.cumsum(0, dtype=L.float64), [T34]),
    ("cumsum_int", lambda L, x: x.cumsum(1), [("i", (3, 4))]),
]


EXTRA += [
    # advanced indexing (index tensors on meta too) and the writes
    ("index_int", lambda L, x, i: (x[i], x[:, i], x[i, 1:], x[..., i], x[None, i]), [F234, ("i", (2, 2))]),
    ("index_split", lambda L, x, i, j: (x[i, :, j], x[i, j], x[:, i, j]), [F234, ("i", (2,)), ("i", (2, 1))]),
    ("index_list", lambda L, x: x[[0, 2], 1:], [F34]),
    ("index_bool_meta", lambda L, x, m: x[m], [F34, ("b", (3, 4))]),
    ("index_bad", lambda L, x, i: x[i, i, i], [F34, ("i", (2,))]),
    ("setitem", lambda L, x, i: x.__setitem__(i, 1.0) or x, [F34, ("i", (2,))]),
    ("index_put", lambda L, x, i, v: x.index_put((i,), v), [F34, ("i", (2,)), ("f", (4,))]),
    ("copy_", lambda L, x, y: x.copy_(y), [T34, ("f", (4,))]),
    ("copy_bad", lambda L, x, y: x.copy_(y), [F34, ("f", (3,))]),
    ("repeat_interleave_tensor", lambda L, x, r: L.repeat_interleave(x, r), [("f", (3,)), ("i", (3,))]),
    ("repeat_interleave_int", lambda L, x: x.repeat_interleave(2, dim=0), [T34]),
    ("repeat_interleave_output_size", lambda L, x, r: (L.repeat_interleave(x, r, dim=1, output_size=5),
                                                       L.repeat_interleave(r, output_size=7),
                                                       L.repeat_interleave(r.int(), output_size=2),
                                                       L.repeat_interleave(x, r[:1], dim=0, output_size=6)),
     [T34, ("i", (4,))]),
    ("repeat_interleave_counts_meta", lambda L, r: L.repeat_interleave(r), [("i", (4,))]),
    ("repeat_interleave_counts_2d", lambda L, r: L.repeat_interleave(r, output_size=3), [("i", (2, 2))]),
    ("repeat_interleave_float_counts", lambda L, r: L.repeat_interleave(r, output_size=3), [("f", (3,))]),
    ("masked_select_meta", lambda L, x, m: L.masked_select(x, m), [F34, ("b", (3, 4))]),
]


# ---- reductions, predicates, sorting and sampling (rules in reduction.py, stats.py, unary.py, binary.py,
# sorting.py, selection.py, indexing.py, random.py) -------------------------------------------------------
M = "meta"
EXTRA += [
    ("max_min_all", lambda L, x: (x.max(), x.min(), x.max(0), x.min(-1, keepdim=True)), [T34]),
    ("max_0d", lambda L, x: x.max(0), [("f", ())]),
    ("median_all", lambda L, x: (x.median(), x.nanmedian(), x.nanmedian(1)), [T34]),
    ("median_0d", lambda L, x: (x.median(0), x.mode()), [("f", ())]),
    ("sum_dtype", lambda L, x: (x.sum(dtype=L.float64), x.sum((0, 1), keepdim=True), x.sum(1, dtype=L.int32)),
     [T34]),
    ("sum_int_bool", lambda L, x, b: (x.sum(0), x.prod(), b.sum(), b.any(1), b.all()), [("i", (3, 4)), ("b", (3, 4))]),
    ("mean_dtype", lambda L, x: (x.mean(dtype=L.float64), x.mean((0, 1))), [F234]),
    ("var_complex", lambda L, x: (x.var(0), x.std(), L.var_mean(x, 1)), [("c", (3, 4))]),
    ("count_nonzero_dims", lambda L, x: (L.count_nonzero(x, 1), L.count_nonzero(x, (0, 1))), [F234]),
    ("argmin_keepdim", lambda L, x: (x.argmin(), x.argmin(1, keepdim=True), x.argmax(keepdim=True)), [T34]),
    ("logsumexp_int", lambda L, x: L.logsumexp(x, 1), [("i", (3, 4))]),
    ("isreal", lambda L, x, c: (L.isreal(x), L.isreal(c)), [T34, ("c", (3, 4))]),
    ("predicates_int", lambda L, x: (x.isinf(), x.isfinite(), x.signbit()), [("i", (3, 4))]),
    # TensorIterator strides and those of ops whose torch meta is a decomposition
    ("copysign_layouts", lambda L, x, b, s: (L.copysign(x, b), L.copysign(x, s), L.copysign(x, 2.0),
                                             L.copysign(b, x), L.copysign(x, x)),
     [T34, ("f", (4, 1)), ("f", ())]),
    ("floor_divide_layouts", lambda L, x, b, s: (L.floor_divide(x, b), L.floor_divide(x, s), x // 2.0,
                                                 L.div(x, b, rounding_mode="trunc")),
     [T34, ("f", (4, 1)), ("f", ())]),
    ("floor_divide_int", lambda L, x, b: (L.floor_divide(x, b), L.div(x, b, rounding_mode="floor")),
     [("i", (3, 4)), ("i", (3, 1))]),
    ("isclose_layouts", lambda L, x, y: (L.isclose(x, y), L.isclose(y, x)), [T34, ("f", (4,))]),
    # sorting and searching
    ("sort_layouts", lambda L, x: (x.sort(0), x.sort(dim=1, descending=True, stable=True), x.argsort(0)), [T34]),
    ("searchsorted_forms", lambda L, s, v: (L.searchsorted(s, v, out_int32=True), L.searchsorted(s, 1.0),
                                            L.bucketize(v, s, right=True), L.bucketize(1.0, s)),
     [("f", (5,)), ("f", (2, 3))]),
    ("searchsorted_sorter_bad", lambda L, s, v, o: L.searchsorted(s, v, sorter=o),
     [("f", (5,)), ("f", (2, 3)), ("i", (4,))]),
    ("histc_bad_range", lambda L, x: L.histc(x, 4, min=2, max=1), [F34]),
    ("unique_meta", lambda L, x: L.unique(x), [("f", (5,))]),
    ("unique_dim_meta", lambda L, x: L.unique(x, dim=0), [F34]),
    ("unique_consecutive_meta", lambda L, x: L.unique_consecutive(x), [("f", (5,))]),
    ("nonzero_meta", lambda L, x: L.nonzero(x), [F34]),
    ("nonzero_tuple_meta", lambda L, x: L.nonzero(x, as_tuple=True), [F34]),
    ("bincount_meta", lambda L, i: L.bincount(i), [("i", (6,))]),
    ("equal_meta", lambda L, x, y: L.equal(x, y), [F34, F34]),
    ("allclose_meta", lambda L, x, y: L.allclose(x, y), [F34, F34]),
    ("index_put_unchecked", lambda L, x, i, v: x.index_put((i,), v), [F34, ("i", (2,)), ("f", (3,))]),
    ("index_put_accumulate", lambda L, x, i, v: x.index_put((i,), v, accumulate=True), [T34, ("i", (2,)),
                                                                                        ("f", (4,))]),
    ("quantile_tensor_q", lambda L, x, q: (L.quantile(x, q, 1), L.nanquantile(x, q, keepdim=True)),
     [T34, ("f", (2,))]),
    # random factories on the meta device, samplers on meta tensors
    ("random_factories", lambda L: (L.rand(2, 3, device=M), L.randn(4, dtype=L.float64, device=M),
                                    L.randint(0, 5, (2, 3), device=M), L.randint(3, (4,), dtype=L.int32, device=M),
                                    L.randperm(5, device=M), L.normal(0.0, 1.0, (2, 3), device=M)), []),
    ("random_like", lambda L, x: (L.rand_like(x), L.randn_like(x, dtype=L.float64), L.randint_like(x, 4)), [T34]),
    ("random_like_to_meta", lambda L: L.rand_like(L.ones(2, 3).t(), device=M), []),
    ("random_inplace", lambda L, x: (x.uniform_(), x.normal_(), x.exponential_(), x.geometric_(0.5),
                                     x.cauchy_(), x.log_normal_(), x.random_(), x.random_(5), x.random_(1, 5),
                                     x.bernoulli_(0.5)), [T34]),
    ("bernoulli_tensor_", lambda L, x, p: x.bernoulli_(p), [T34, F34]),
    ("bernoulli", lambda L, p: (L.bernoulli(p), L.bernoulli(p, 0.3)), [T34]),
    ("normal_forms", lambda L, x, s, b: (L.normal(x, 1.0), L.normal(1.0, x), L.normal(x, s), L.normal(x, x),
                                         L.normal(b, s)), [T34, ("f", (4,)), ("f", (3, 1))]),
    ("normal_bad", lambda L, x, s: L.normal(x, s), [("f", (3,)), ("f", (4,))]),
    ("multinomial", lambda L, p: (L.multinomial(p, 2), L.multinomial(p[0], 3, True), L.multinomial(p, 7)),
     [F34]),
    ("poisson", lambda L, x: L.poisson(x), [T34]),
    # meta and CPU tensors together (NOTE [ Meta and CPU inputs together ]): most ops refuse, a few take them
    ("cpu_beside_meta", lambda L, x: x + L.ones(4), [F34]),
    ("bernoulli_cpu_p", lambda L, x: x.bernoulli_(L.full((4,), 0.5)), [T34]),
    ("bernoulli_meta_p_cpu_self", lambda L, p: L.ones(3, 4).bernoulli_(p), [F34]),
    ("copy_cpu_into_meta", lambda L, x: x.copy_(L.ones(4)), [T34]),
    ("copy_meta_into_cpu", lambda L, x: L.ones(3, 4).copy_(x), [F34]),
    ("fill_meta_value", lambda L, x, v: x.fill_(v), [T34, ("f", ())]),
    ("conj_layouts", lambda L, c: (c.conj_physical(), c.t().conj_physical(), c.conj().resolve_conj()),
     [("c", (3, 4))]),
    # foreach ops: each element as its single-tensor op lays it out, in its own result dtype
    ("foreach_layouts", lambda L, x, y, i: (L._foreach_exp([x, y]), L._foreach_add([x, y], [y, x]),
                                            L._foreach_div([i], [i]), L._foreach_add([y], [i], alpha=2),
                                            L._foreach_norm([x, i.double()], 1), L._foreach_add([i], 1.5)),
     [T34, F34, ("i", (3, 4))]),
    ("foreach_broadcast", lambda L, x, v: (L._foreach_mul([x], [v]), L._foreach_mul([v], [x])), [T34, ("f", (4,))]),
    ("foreach_inplace", lambda L, x, y: (L._foreach_mul_([x, y], 2.0), L._foreach_lerp_([x], [y], 0.5)),
     [T34, F34]),
    ("foreach_inplace_bad", lambda L, x, v: L._foreach_add_([v], [x]), [T34, ("f", (4,))]),
    ("foreach_addcdiv_int", lambda L, x, i: L._foreach_addcdiv([x], [i], [i]), [F34, ("i", (3, 4))]),
]


class _Row:
    def __init__(self, call, specs):
        self.fn = call
        self.specs = specs


@pytest.mark.parametrize("name", [row[0] for row in EXTRA])
def test_meta_extra(name):
    _, call, specs = next(row for row in EXTRA if row[0] == name)
    rng = np.random.default_rng(0)
    inputs = [_spec(rng, kind, shape) for kind, shape in specs]
    sample = type("S", (), {"inputs": inputs, "kwargs": {}})()
    t = _outcome(torch, _Row(call, specs), sample)
    e = _outcome(ember, _Row(call, specs), sample)
    assert e == t, f"{name}: ember {e} != torch {t}"



def test_meta_samplers_leave_the_generator_alone():
    """torch's samplers on meta tensors do not draw: the next real sample is the one the seed gives."""
    for lib in (ember, torch):
        lib.manual_seed(0)
        expected = lib.rand(3)
        lib.manual_seed(0)
        x = lib.empty(3, 4, device="meta")
        x.uniform_(), x.normal_(), x.random_(), x.bernoulli_(0.5), x.exponential_()
        lib.rand(2, device="meta"), lib.randn(2, device="meta"), lib.randperm(9, device="meta")
        lib.rand_like(x), lib.bernoulli(x), lib.normal(x, x), lib.poisson(x), lib.multinomial(x, 2)
        assert (lib.rand(3) == expected).all(), lib.__name__


F33, B233 = ("f", (3, 3)), ("f", (2, 3, 3))

EXTRA += [
    # the matmul family: every rank case, and the products whose wrappers have no OpInfo entry
    ("mm", lambda L, x, y: (x.mm(y), x @ y), [T34, ("f", (4, 2))]),
    ("mm_bad", lambda L, x, y: x.mm(y), [F34, F34]),
    ("bmm", lambda L, x, y: L.bmm(x, y), [F234, ("f", (2, 4, 5))]),
    ("mv_dot", lambda L, x, y, v: (x.mv(v), L.dot(v, v), x @ v, v @ y), [F34, ("f", (4, 3)), ("f", (4,))]),
    ("matmul_batched", lambda L, x, y: (x @ y, y.mT @ x.mT), [F234, ("f", (5, 1, 4, 2))]),
    ("matmul_vec_batched", lambda L, x, v: (x @ v, v.unsqueeze(0) @ x.mT), [F234, ("f", (4,))]),
    ("matmul_bad", lambda L, x, y: x @ y, [F234, ("f", (3, 2))]),
    ("matmul_0d", lambda L, x, y: x @ y, [("f", ()), F34]),
    ("einsum", lambda L, x, y: (L.einsum("bij,jk->bik", x, y), L.einsum("bij->j", x)), [F234, ("f", (4, 2))]),
    ("einsum_views", lambda L, x, s: (L.einsum("ij->ji", x), L.einsum("ii->i", s), L.einsum("ij", x)),
     [T34, F33]),
    ("addmm_transposed", lambda L, c, a, b: (L.addmm(c, a, b), L.addmm(c.t(), a, b)), [("f", (4, 4)), T34,
                                                                                        ("T", (4, 4))]),
    ("addmm_bad_self", lambda L, c, a, b: L.addmm(c, a, b), [("f", (3,)), F34, ("f", (4, 2))]),
    ("addmm_promote", lambda L, c, a, b: L.addmm(c, a, b), [("d", (3, 2)), F34, ("f", (4, 2))]),
    # decompositions, batched: column-major LAPACK results
    ("inv_det_batched", lambda L, a: (L.linalg.inv(a), L.linalg.det(a), *L.linalg.slogdet(a)), [B233]),
    ("inv_complex", lambda L, a: (L.linalg.inv(a), *L.linalg.slogdet(a), *L.linalg.eigh(a)), [("c", (3, 3))]),
    ("inv_bad", lambda L, a: L.linalg.inv(a), [F34]),
    ("inv_int", lambda L, a: L.linalg.inv(a), [("i", (3, 3))]),
    ("solve_shapes", lambda L, a, b, v: (L.linalg.solve(a, b), L.linalg.solve(a, v), L.linalg.solve(a[0], v),
                                         L.linalg.solve(a[0], b.mT, left=False)),
     [B233, ("f", (2, 3, 5)), ("f", (2, 3))]),
    ("solve_broadcast", lambda L, a, b: L.linalg.solve(a, b), [("f", (4, 1, 3, 3)), ("f", (2, 3, 2))]),
    ("solve_bad", lambda L, a, b: L.linalg.solve(a, b), [F33, ("f", (4,))]),
    ("cholesky_upper", lambda L, a: (L.linalg.cholesky(a), L.linalg.cholesky(a, upper=True)), [B233]),
    ("qr_modes", lambda L, a, w: (*L.linalg.qr(a), *L.linalg.qr(a, "complete"), *L.linalg.qr(a, "r"),
                                  *L.linalg.qr(w)), [("f", (2, 4, 3)), ("f", (3, 4))]),
    ("svd_modes", lambda L, a, w: (*L.linalg.svd(a), *L.linalg.svd(a, full_matrices=False),
                                   *L.linalg.svd(w, full_matrices=False), L.linalg.svdvals(w)),
     [("f", (2, 4, 3)), ("f", (3, 4))]),
    ("svd_bad", lambda L, a: L.linalg.svd(a), [("f", (3,))]),
    ("eigh_batched", lambda L, a: (*L.linalg.eigh(a), L.linalg.eigvalsh(a, "U")), [B233]),
    ("pinv_rank", lambda L, a, s: (L.linalg.pinv(a), L.linalg.pinv(s, hermitian=True),
                                   L.linalg.matrix_rank(a), L.linalg.matrix_rank(s, hermitian=True)),
     [("f", (2, 4, 3)), B233]),
    ("pinv_bad", lambda L, a: L.linalg.pinv(a), [("f", (3,))]),
    ("matrix_rank_bad", lambda L, a: L.linalg.matrix_rank(a), [("f", (3,))]),
    ("matrix_power", lambda L, a: tuple(L.linalg.matrix_power(a, n) for n in (0, 2, 3, -2)), [B233]),
    ("lstsq_refuses", lambda L, a, b: L.linalg.lstsq(a, b), [("f", (4, 3)), ("f", (4, 2))]),
    ("norms", lambda L, a: (L.linalg.vector_norm(a, dim=1), L.linalg.vector_norm(a, 3, (0, 1), keepdim=True),
                            L.linalg.vector_norm(a, dtype=L.float64), L.linalg.matrix_norm(a, 1, keepdim=True),
                            L.linalg.matrix_norm(a, -2), a.norm(), L.norm(a, "nuc")), [T34]),
    ("norm_complex", lambda L, a: (L.linalg.vector_norm(a), L.linalg.matrix_norm(a)), [("c", (3, 3))]),
    ("vector_norm_int", lambda L, a: L.linalg.vector_norm(a), [("i", (3,))]),
]
