"""Issue 15's exactness bugs, each as a class held to torch, and the torch.* names that are not ops.

- keyword names: every function of `torch` and method of `Tensor` that ember shares with torch accepts the
  keywords torch's own signatures name (read from torch's type stubs, which list every overload), and the
  varargs forms (`Tensor.tile(2, 3)`) where torch has them;
- `out=` forms return the out tensors, tuples included (`max(dim, out=(v, i))`);
- named-tuple fields equal torch's for every `return_types` type;
- reductions and softmax on empty tensors;
- `@no_grad`, `@enable_grad`, `@inference_mode` without parentheses;
- indexing with 0-d integer tensors; in-place comparisons keep self's dtype; in-place view ops;
- torch.* settings and helpers (finfo, iinfo, range, default device, matmul precision, ...).
"""

import ast
import inspect
import os
import warnings

import numpy as np
import pytest
import torch
from compare import assert_same_error, check

import ember

# ---- keyword names --------------------------------------------------------------------------------------------

_STUBS = os.path.join(os.path.dirname(torch.__file__), "_C")


def _overloads(path, cls=None):
    tree = ast.parse(open(path).read())
    body = tree.body if cls is None else next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    out = {}
    for n in body:
        if isinstance(n, ast.FunctionDef) and not n.name.startswith("_"):
            out.setdefault(n.name, []).append(n.args)
    return out


# NOTE [ Keywords the stubs name that torch does not take ]
# torch's stubs are generated from its native signatures, and a few of their names are not keywords Python
# accepts: each is listed with torch's own answer (checked below by calling torch).
#  - `self` in a `torch.*` function: a deprecated or Number-first overload spelt `self` in the stub; torch's
#    parser calls the tensor `input` (`torch.add(self=t, other=t)` is a TypeError in torch);
#  - `out_dtype` of mm/bmm/addmm/baddbmm: the `aten::mm.dtype` overloads have no CPU kernel (torch raises
#    NotImplementedError on a CPU tensor), so a CPU-only library has nothing to accept;
#  - set_num_threads(num) and friends: pybind functions that take no keywords;
#  - Tensor.requires_grad_(mode): the stub's name; torch's keyword is `requires_grad`;
#  - torch.range(pin_memory=): the stub lists it, torch's parser refuses it;
#  - `names`: named tensors (Dimname overloads), which ember does not have (coverage: not walked).
_STUB_ONLY = {("torch", "set_num_threads", "num"), ("torch", "set_num_interop_threads", "num"),
              ("Tensor", "requires_grad_", "mode"), ("torch", "range", "pin_memory")}
_CUDA_ONLY = {"out_dtype"}


def _stub_keywords(owner, name, overloads, method):
    """(keywords torch names for `name`, whether an overload takes varargs) from its stub overloads."""
    kws, varargs = set(), False
    for a in overloads:
        src = ast.unparse(a)
        if "Dimname" in src:
            continue
        params = a.args[1:] if method else a.args
        if not method:  # (see NOTE [ Keywords the stubs name that torch does not take ])
            params = [p for p in params if p.arg != "self"]
        kws |= {p.arg for p in params + a.kwonlyargs} - _CUDA_ONLY
        varargs |= a.vararg is not None
    kws -= {k for (o, n, k) in _STUB_ONLY if o == owner and n == name}
    return kws, varargs


def _keyword_gaps():
    gaps = []
    for owner, stub, cls, eowner, method in (("torch", "_VariableFunctions.pyi", None, ember, False),
                                             ("Tensor", "__init__.pyi", "TensorBase", ember.Tensor, True)):
        for name, overloads in sorted(_overloads(os.path.join(_STUBS, stub), cls).items()):
            fn = getattr(eowner, name, None)
            if fn is None or not callable(fn) or isinstance(fn, type):
                continue
            try:
                params = inspect.signature(fn).parameters.values()
            except (TypeError, ValueError):
                continue
            if any(p.kind == p.VAR_KEYWORD for p in params):
                continue
            have = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
            kws, varargs = _stub_keywords(owner, name, overloads, method)
            missing = sorted(kws - have)
            if missing or varargs and not any(p.kind == p.VAR_POSITIONAL for p in params):
                gaps.append(f"{owner}.{name}: missing {missing}" + (" and varargs" if varargs else ""))
    return gaps


def test_keyword_names_match_torch():
    """Every shared torch.*/Tensor name takes torch's keywords (and varargs where torch has them)."""
    assert _keyword_gaps() == []


def test_python_defined_signatures_match_torch():
    """Functions torch writes in Python (torch.functional, torch._tensor) take the same parameter names."""
    gaps = []
    for owner, eowner in ((torch, ember), (torch.Tensor, ember.Tensor)):
        for name in dir(owner):
            t, e = getattr(owner, name, None), getattr(eowner, name, None)
            if name.startswith("_") or not inspect.isfunction(t) or e is None or not callable(e):
                continue
            try:
                tp, ep = inspect.signature(t).parameters, inspect.signature(e).parameters
            except (TypeError, ValueError):
                continue
            if any(p.kind == p.VAR_KEYWORD for p in ep.values()):
                continue
            want = {n for n, p in tp.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                    and not n.startswith("_")} - {"self"}
            missing = sorted(want - set(ep))
            if missing:
                gaps.append(f"{owner.__name__}.{name}: {missing}")
    assert gaps == []


@pytest.mark.parametrize("owner,name,kw", sorted(_STUB_ONLY))
def test_stub_only_keywords_are_refused_by_torch(owner, name, kw):
    """The stub names the keyword test leaves out are ones torch itself refuses."""
    x = torch.ones(2)
    fn = getattr(torch, name) if owner == "torch" else getattr(x, name)
    with pytest.raises(TypeError):
        fn(**{kw: 1})


_KEYWORD_CALLS = [
    lambda lib, x: lib.flip(x, dims=(0,)),
    lambda lib, x: x.flip(0, 1),
    lambda lib, x: x.flip(dims=[1]),
    lambda lib, x: x.tile(2, 3),
    lambda lib, x: lib.tile(x, dims=(2,)),
    lambda lib, x: x.permute(dims=(1, 0)),
    lambda lib, x: lib.reshape(x, shape=(3, 2)),
    lambda lib, x: x.view(size=(6,)),
    lambda lib, x: x.view(dtype=lib.int32),
    lambda lib, x: x.expand(size=(2, 2, 3)),
    lambda lib, x: x.repeat(repeats=(2, 1)),
    lambda lib, x: x.squeeze(0, 1),
    lambda lib, x: x.count_nonzero(0, 1),
    lambda lib, x: x.broadcast_to(2, 2, 3),
    lambda lib, x: x.new_zeros(size=(2,)),
    lambda lib, x: lib.zeros(size=(2, 1)),
    lambda lib, x: lib.swapaxes(x, axis0=0, axis1=1),
    lambda lib, x: lib.tensor_split(x, sections=2, dim=1),
    lambda lib, x: lib.tensor_split(x, indices=[1], dim=1),
    lambda lib, x: x.split(split_size=1),
    lambda lib, x: lib.max(x, other=x + 1),
    lambda lib, x: lib.det(input=x[:, :2]),
    lambda lib, x: lib.clamp_min(x, 0.5, out=lib.empty(0, dtype=x.dtype)),
    lambda lib, x: lib.softmax(x, 1, out=lib.empty(0, dtype=x.dtype)),
    lambda lib, x: lib.diff(x, out=lib.empty(0, dtype=x.dtype)),
    lambda lib, x: lib.signbit(x, out=lib.empty(0, dtype=lib.bool)),
    lambda lib, x: x.clone().addcmul_(tensor1=x, tensor2=x, value=2),
    lambda lib, x: lib.zeros(2, 2, dtype=x.dtype).addmm_(mat1=x, mat2=x.t()),
    lambda lib, x: x.clone().copy_(other=x + 1),
    lambda lib, x: x.clone().pow_(exponent=2),
    lambda lib, x: lib.empty(2, 3, out=lib.zeros(0)).shape,
    lambda lib, x: lib.tril(x, out=lib.empty(0, dtype=x.dtype)),
    lambda lib, x: lib.eye(2, out=lib.empty(0)),
    lambda lib, x: lib.full((2,), 3.0, out=lib.empty(0)),
    lambda lib, x: lib.linalg.svdvals(x, out=lib.empty(0, dtype=x.dtype)),
]


@pytest.mark.parametrize("i", range(len(_KEYWORD_CALLS)))
def test_keyword_calls(i):
    check(_KEYWORD_CALLS[i], np.arange(6.0).reshape(2, 3))


# ---- out= returns the out tensors -------------------------------------------------------------------------------

_TUPLE_OUTS = [
    ("max", lambda lib, x, o: lib.max(x, 1, out=o)),
    ("min", lambda lib, x, o: lib.min(x, 0, keepdim=True, out=o)),
    ("sort", lambda lib, x, o: lib.sort(x, 1, out=o)),
    ("topk", lambda lib, x, o: lib.topk(x, 2, out=o)),
    ("kthvalue", lambda lib, x, o: lib.kthvalue(x, 2, out=o)),
    ("median", lambda lib, x, o: lib.median(x, 1, out=o)),
    ("mode", lambda lib, x, o: lib.mode(x, 1, out=o)),
    ("cummax", lambda lib, x, o: lib.cummax(x, 1, out=o)),
    ("cummin", lambda lib, x, o: lib.cummin(x, 0, out=o)),
    ("aminmax", lambda lib, x, o: lib.aminmax(x, dim=1, out=o)),
    ("linalg.svd", lambda lib, x, o: lib.linalg.svd(x, full_matrices=False, out=o)),
    ("linalg.eigh", lambda lib, x, o: lib.linalg.eigh(x @ x.mT, out=o)),
    ("linalg.qr", lambda lib, x, o: lib.linalg.qr(x, out=o)),
    ("linalg.slogdet", lambda lib, x, o: lib.linalg.slogdet(x[:, :3], out=o)),
]


@pytest.mark.parametrize("name", [n for n, _ in _TUPLE_OUTS])
def test_out_tuples_are_returned(name):
    fn = dict(_TUPLE_OUTS)[name]
    x = np.random.default_rng(0).standard_normal((3, 4))

    def run(lib, x):
        ref = fn(lib, x, None)
        out = tuple(lib.empty(0, dtype=r.dtype) for r in ref)
        got = fn(lib, x, out)
        assert type(got) is type(ref) and all(g is o for g, o in zip(got, out))
        return got
    check(run, x, check_stride=False)


def test_out_single_tensor_is_returned():
    for fn in (lambda lib, x, o: lib.tril(x, out=o), lambda lib, x, o: lib.argsort(x, stable=True, out=o),
               lambda lib, x, o: lib.isposinf(x, out=o), lambda lib, x, o: lib.log_softmax(x, 0, out=o)):
        def run(lib, x, fn=fn):
            o = lib.empty(0, dtype=fn(lib, x, None).dtype)
            assert fn(lib, x, o) is o
            return o
        check(run, np.arange(6.0).reshape(2, 3))


# ---- named tuples ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in ember.return_types.__all__ if n != "lstsq"])
def test_return_type_fields(name):
    """Every named tuple ember returns has torch's name and fields (torch's structseq lists them in
    `__match_args__`); `ember.return_types.lstsq` is linalg_lstsq's alias, as torch has no `lstsq` type."""
    e, t = getattr(ember.return_types, name), getattr(torch.return_types, name)
    assert e._fields == t.__match_args__ and e.__name__ == t.__name__


_NAMED = [
    lambda lib, x: lib.linalg.svd(x).Vh,
    lambda lib, x: lib.linalg.svd(x, full_matrices=False).U,
    lambda lib, x: lib.linalg.eigh(x @ x.mT).eigenvalues,
    lambda lib, x: lib.linalg.slogdet(x[:, :3]).logabsdet,
    lambda lib, x: lib.slogdet(x[:, :3]).sign,
    lambda lib, x: lib.linalg.qr(x).R,
    lambda lib, x: lib.aminmax(x).max,
    lambda lib, x: lib.frexp(x).exponent,
    lambda lib, x: type(lib.linalg.svd(x)).__name__,
    lambda lib, x: type(lib.linalg.eigh(x @ x.mT)).__name__,
    lambda lib, x: type(lib.slogdet(x[:, :3])).__name__,
]


@pytest.mark.parametrize("i", range(len(_NAMED)))
def test_named_fields(i):
    check(_NAMED[i], np.random.default_rng(1).standard_normal((3, 4)), check_stride=False, atol=1e-6,
          rtol=1e-5)


# ---- empty tensors ---------------------------------------------------------------------------------------------

_EMPTY = [
    lambda lib, x: x.softmax(0), lambda lib, x: x.softmax(1), lambda lib, x: x.log_softmax(0),
    lambda lib, x: x.t().softmax(0), lambda lib, x: x.sum(0), lambda lib, x: x.sum(), lambda lib, x: x.prod(0),
    lambda lib, x: x.mean(), lambda lib, x: x.mean(0), lambda lib, x: x.std(0), lambda lib, x: x.var(1),
    lambda lib, x: x.logsumexp(0), lambda lib, x: x.logsumexp(1), lambda lib, x: x.norm(),
    lambda lib, x: x.amax(0), lambda lib, x: x.amax(1), lambda lib, x: x.amin(), lambda lib, x: x.max(),
    lambda lib, x: x.max(0), lambda lib, x: x.max(1), lambda lib, x: x.argmax(0), lambda lib, x: x.argmax(1),
    lambda lib, x: x.argmin(), lambda lib, x: x.median(), lambda lib, x: x.cumsum(0), lambda lib, x: x.all(0),
    lambda lib, x: x.any(1), lambda lib, x: x.count_nonzero(0), lambda lib, x: x.nansum(1),
    lambda lib, x: x.aminmax(), lambda lib, x: lib.nn.functional.softmax(x, -1),
]


@pytest.mark.parametrize("i", range(len(_EMPTY)))
def test_reductions_on_empty_tensors(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(_EMPTY[i], np.empty((0, 3), np.float32))


def test_repeat_interleave_non_contiguous():
    x = np.arange(12.0).reshape(3, 4)
    for fn in (lambda lib, x: lib.repeat_interleave(x.t(), 2, dim=0),
               lambda lib, x: x.t().repeat_interleave(lib.tensor([1, 0, 2]), dim=1),
               lambda lib, x: x[:, ::2].repeat_interleave(3),
               lambda lib, x: x.t()[1:].repeat_interleave(2, dim=1)):
        check(fn, x, grad=[0])


# ---- grad-mode decorators without parentheses ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_grad_mode_decorators_without_parentheses(mode):
    def run(lib, x):
        @getattr(lib, mode)
        def f(a):
            return a * 2

        with lib.no_grad():
            y = f(x)
        return y.requires_grad, y.is_inference(), lib.is_grad_enabled(), f.__name__
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        assert run(lib, x) == run(torch, torch.ones(2, requires_grad=True))


# ---- 0-d integer tensors as indices ---------------------------------------------------------------------------

_ZERO_D = [
    lambda lib, x: x[lib.tensor(1)],
    lambda lib, x: x[lib.tensor(-1), lib.tensor(2)],
    lambda lib, x: x[:, lib.tensor(0)],
    lambda lib, x: x[lib.tensor(1), 1:],
    lambda lib, x: x[lib.tensor(1, dtype=lib.int32)],
    lambda lib, x: x[lib.tensor(1), None],
    lambda lib, x: x[lib.tensor([1])],
]


@pytest.mark.parametrize("i", range(len(_ZERO_D)))
def test_zero_dim_index_get(i):
    check(_ZERO_D[i], np.arange(12.0).reshape(3, 4), grad=[0])


@pytest.mark.parametrize("i", range(len(_ZERO_D) - 1))
def test_zero_dim_index_set(i):
    def run(lib, x):
        y = x.clone()
        key_fn = _ZERO_D[i]
        view = key_fn(lib, y)
        probe = lib.zeros_like(y)
        probe_key = key_fn(lib, probe)  # (the same elements, found through the same key)
        assert probe_key.shape == view.shape
        idx = _key(lib, i)
        y[idx] = -1.0
        return y
    check(run, np.arange(12.0).reshape(3, 4), grad=[0])


def _key(lib, i):
    return [lib.tensor(1), (lib.tensor(-1), lib.tensor(2)), (slice(None), lib.tensor(0)),
            (lib.tensor(1), slice(1, None)), lib.tensor(1, dtype=lib.int32), (lib.tensor(1), None)][i]


# ---- in-place forms keep self's dtype -------------------------------------------------------------------------

_INPLACE = [
    lambda lib, x, y: x.clone().eq_(y), lambda lib, x, y: x.clone().greater_(y),
    lambda lib, x, y: x.clone().not_equal_(0), lambda lib, x, y: x.clone().logical_and_(y),
    lambda lib, x, y: x.clone().logical_not_(), lambda lib, x, y: x.long().bitwise_or_(y.long()),
    lambda lib, x, y: x.long().bitwise_not_(), lambda lib, x, y: x.clone().cumsum_(1),
    lambda lib, x, y: x.clone().cumprod_(0, dtype=lib.float32), lambda lib, x, y: x.long().gcd_(y.long()),
    lambda lib, x, y: x.clone().true_divide_(y + 5), lambda lib, x, y: x.clone().subtract_(y, alpha=2),
    lambda lib, x, y: x.clone().ldexp_(y.long()), lambda lib, x, y: x.clone().nextafter_(y),
    lambda lib, x, y: x.long().eq_(y), lambda lib, x, y: x.int().logical_xor_(y.bool()),
    lambda lib, x, y: x.clone().renorm_(2, 0, 1.0),
    lambda lib, x, y: x.clone().addr_(y[0, :3], y[1], beta=0.5),
]


@pytest.mark.parametrize("i", range(len(_INPLACE)))
def test_inplace_forms(i):
    rng = np.random.default_rng(4)
    check(_INPLACE[i], rng.integers(-2, 3, (3, 4)).astype(np.float32),
          rng.integers(-2, 3, (3, 4)).astype(np.float32))


def test_inplace_comparison_errors():
    for fn in (lambda lib, x: x.clone().lt_(x.expand(2, 3, 4)), lambda lib, x: x.long().cumsum_(0) and
               x.bool().cumsum_(0), lambda lib, x: x.clone().logical_or_(1),
               lambda lib, x: x.clone().cumprod_(0, dtype=lib.float64),
               lambda lib, x: x.clone().to(lib.complex64).deg2rad_()):
        assert_same_error(fn, np.ones((3, 4), np.float32))


_VIEWS_INPLACE = [
    lambda lib, x: x.clone().squeeze_(), lambda lib, x: x.clone().squeeze_(1),
    lambda lib, x: x.clone().unsqueeze_(0), lambda lib, x: x.clone().t_() if x.dim() <= 2 else x,
    lambda lib, x: x.clone().transpose_(0, 2), lambda lib, x: x.clone().swapaxes_(0, 1),
    lambda lib, x: x.clone().swapdims_(2, 0), lambda lib, x: x.clone().as_strided_((2, 2), (1, 2)),
]


@pytest.mark.parametrize("i", range(len(_VIEWS_INPLACE)))
def test_inplace_views(i):
    def run(lib, x):
        y = _VIEWS_INPLACE[i](lib, x * 1)  # (a non-leaf: its history becomes the view's)
        return y, y.stride(), y.grad_fn is not None
    check(run, np.arange(6.0).reshape(3, 1, 2), grad=[0])


def test_inplace_view_of_leaf_refuses():
    assert_same_error(lambda lib, x: x.requires_grad_().squeeze_(), np.ones((2, 1)))


_METHODS = [
    lambda lib, x: x.clone().fill_diagonal_(5.0),
    lambda lib, x: lib.zeros(7, 3).fill_diagonal_(1.0, wrap=True),
    lambda lib, x: lib.zeros(7, 3).fill_diagonal_(1.0),
    lambda lib, x: x.clone().put_(lib.tensor([0, 5, -1]), lib.tensor([9.0, 8.0, 7.0], dtype=x.dtype)),
    lambda lib, x: x.put(lib.tensor([1, 1]), lib.tensor([1.0, 2.0], dtype=x.dtype), accumulate=True),
    lambda lib, x: x.put(lib.tensor([1, 1]), lib.tensor([1.0, 2.0])),
    lambda lib, x: x.clone().apply_(lambda v: v * 2 + 1),
    lambda lib, x: x.clone().map_(x + 1, lambda a, b: a * b),
    lambda lib, x: x.dim_order(), lambda lib, x: x.t().dim_order(),
    lambda lib, x: x.is_neg(), lambda lib, x: lib.resolve_neg(x), lambda lib, x: x.name,
    lambda lib, x: lib.is_nonzero(x[:1, :1]), lambda lib, x: lib.is_inference(x),
    lambda lib, x: x.const_data_ptr() == x.data_ptr(), lambda lib, x: x.storage_type().__name__,
    lambda lib, x: x.unsafe_split(2, 1), lambda lib, x: lib.unsafe_chunk(x, 3, 1),
    lambda lib, x: lib.empty_permuted((2, 3, 4), (2, 0, 1)).stride(),
    lambda lib, x: x.narrow_copy(1, 1, 2),
    lambda lib, x: x.clone().resize_(2, 2),
    lambda lib, x: x.clone().resize_(4, 5).shape,
    lambda lib, x: x.clone().resize_as_(lib.ones(5)),
    lambda lib, x: lib.ones(2, dtype=x.dtype).set_(x),
    lambda lib, x: lib.ones(2, dtype=x.dtype).set_(x, 1, (2, 2), (1, 4)),
    lambda lib, x: lib.ones(2).set_().shape,
    lambda lib, x: lib.zeros(3, 4, dtype=x.dtype).module_load(x),
    lambda lib, x: x.module_load(x + 1, assign=True),
]


@pytest.mark.parametrize("i", range(len(_METHODS)))
def test_tensor_methods(i):
    check(_METHODS[i], np.arange(12.0).reshape(3, 4))


def test_is_nonzero_errors():
    for shape in ((0,), (2,)):
        assert_same_error(lambda lib, x: lib.is_nonzero(x), np.ones(shape))


# ---- torch.* settings and helpers --------------------------------------------------------------------------------

_DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64"]


@pytest.mark.parametrize("name", _DTYPES)
def test_finfo(name):
    t, e = torch.finfo(getattr(torch, name)), ember.finfo(getattr(ember, name))
    for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, f) == getattr(t, f), f
    assert ember.finfo().dtype == torch.finfo().dtype


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    t, e = torch.iinfo(getattr(torch, name)), ember.iinfo(getattr(ember, name))
    assert (e.bits, e.max, e.min, e.dtype) == (t.bits, t.max, t.min, t.dtype)


def test_finfo_iinfo_errors():
    for fn in (lambda lib, x: lib.finfo(lib.int32), lambda lib, x: lib.iinfo(lib.float32)):
        assert_same_error(fn, None)


def test_range_warns_and_counts_like_torch():
    for args, kw in (((1, 4), {}), ((0, 1, 0.3), {}), ((1, 2), {"dtype": "float64"}), ((4, 1, -1), {})):
        def run(lib, args=args, kw=kw):
            kw = {k: getattr(lib, v) for k, v in kw.items()}
            with pytest.warns(UserWarning, match="torch.range is deprecated|ember.range is deprecated"):
                return lib.range(*args, **kw)
        check(run)
    assert_same_error(lambda lib: lib.range(5))


def test_settings_round_trip():
    for lib in (torch, ember):
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
        lib.set_deterministic_debug_mode("warn")
        assert lib.get_deterministic_debug_mode() == 1
        assert lib.are_deterministic_algorithms_enabled()
        lib.set_deterministic_debug_mode(0)
        assert lib.get_deterministic_debug_mode() == 0
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled()
        lib.set_warn_always(False)
        assert lib.init_num_threads() is None
    assert_same_error(lambda lib: lib.set_deterministic_debug_mode("sometimes"))
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="low is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("low")
        assert lib.get_float32_matmul_precision() == "highest"


def test_default_device():
    for lib in (torch, ember):
        assert str(lib.get_default_device()) == "cpu"
        lib.set_default_device("meta")
        try:
            assert lib.ones(2).device.type == "meta" and str(lib.get_default_device()) == "meta"
        finally:
            lib.set_default_device(None)
        assert lib.ones(2).device.type == "cpu"


def test_frombuffer_and_from_file(tmp_path):
    data = bytearray(np.arange(6, dtype=np.float32).tobytes())
    for lib in (torch, ember):
        t = lib.frombuffer(data, dtype=lib.float32, count=4, offset=4)
        assert t.tolist() == [1.0, 2.0, 3.0, 4.0]
    path = tmp_path / "x.bin"
    np.arange(5, dtype=np.float64).tofile(path)
    assert ember.from_file(str(path), size=5, dtype=ember.float64).tolist() == \
        torch.from_file(str(path), size=5, dtype=torch.float64).tolist()
    assert_same_error(lambda lib: lib.from_file(str(path), size=9, dtype=lib.float64))


def test_dlpack_round_trip():
    x = ember.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(ember.to_dlpack(x))
    assert t.tolist() == x.tolist()
    assert ember.from_dlpack(torch.arange(3.0)).tolist() == [0.0, 1.0, 2.0]


def test_index_helpers():
    check(lambda lib: lib.tril_indices(4, 3, -1))
    check(lambda lib: lib.triu_indices(3, 5, 1, dtype=lib.int32))
    check(lambda lib: lib.unravel_index(lib.tensor(7), (2, 4)))
    assert_same_error(lambda lib: lib.unravel_index(lib.tensor([1.0]), (2,)))


def test_resize_and_set_errors():
    assert_same_error(lambda lib, x: x.requires_grad_().resize_(3), np.ones(2))
    assert_same_error(lambda lib, x: lib.ones(2).set_(x), np.ones(2))


def test_chalf_says_there_is_no_complex32():
    """torch makes a complex32 tensor; ember has no such dtype and says so (NOTE [ complex32 ])."""
    torch.ones(2).chalf()
    with pytest.raises(NotImplementedError, match=r"ember has no complex32 \(ComplexHalf\) dtype"):
        ember.ones(2).chalf()


_NEW_CASES = [((), {}), ((2, 3), {}), (([1, 2],), {}), (((2, 3),), {}), (("size",), {}), (("same",), {}),
              (("double",), {})]


@pytest.mark.parametrize("args,kw", _NEW_CASES, ids=[str(a) for a, _ in _NEW_CASES])
def test_tensor_new_legacy_constructor(args, kw):
    """Tensor.new: sizes (uninitialized: compare shape and dtype), data, a Size, another tensor."""
    def run(lib):
        x = lib.ones(2, 3)
        a = {"size": (lib.Size([2, 2]),), "same": (lib.ones(2),), "double": (lib.ones(2, dtype=lib.float64),)}
        r = x.new(*a.get(args[0], args) if args and isinstance(args[0], str) else args, **kw)
        return tuple(r.shape), str(r.dtype).split(".")[-1], (r.tolist() if not args or len(args) == 1 else None)
    try:
        want = run(torch)
    except TypeError:
        with pytest.raises(TypeError) as e:
            run(ember)
        with pytest.raises(TypeError) as t:
            run(torch)
        assert str(e.value) == str(t.value)
        return
    got = run(ember)
    assert got[:2] == want[:2]
    if args and len(args) == 1 and args[0] != "size":
        assert got[2] == want[2]
