"""OpInfo entries for issue 15's remaining torch.* and Tensor names (ember/_ops/names.py): the integer and
floating-point helpers, complex numbers, statistics and integration, the `*_copy` and `*_scatter` forms of
views, splitting and index helpers, and the in-place forms of comparison, logical and bitwise ops.

Entries with `node=False` are composites in ember where torch has a native op with its own backward node
(`addr` is AddrBackward0 in torch; ember's records the mul/add nodes it is made of): values, gradients and
double gradients are still held to torch's.
"""

import numpy as np
from op_db import FLOAT, INTS, Sample, _err, add, arr, binary, same, unary

# ---- kernels of their own -----------------------------------------------------------------------------------

for _name in ("gcd", "lcm"):
    add(_name, samples=binary(-6, 6, scalar=None), dtypes=INTS, grad=False, out=True, inplace=True,
        errors=_err(lambda r: Sample(arr(r, (3,), "float32"), arr(r, (3,), "float32"))))
add("nextafter", samples=binary(), dtypes=FLOAT, out=True, inplace=True,
    errors=_err(lambda r: Sample(arr(r, (3,), "int64"), arr(r, (3,), "int64"))))
add("frexp", samples=unary(-50, 50), dtypes=FLOAT + ("float16",), out=False,
    errors=_err(lambda r: Sample(arr(r, (3,), "int64"))))
add("ldexp", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), np.arange(12).reshape(3, 4) % 5),
                          lambda d, r: Sample(arr(r, (2, 3), d), np.array([1, 0, 3]))),
    dtypes=FLOAT, out=True, inplace=True, grad_inputs=(0,), gradgrad=False, node=False)
add("ldexp", id="ldexp_negative_exponent", samples=same(
    lambda d, r: Sample(arr(r, (3, 4), d), np.arange(12).reshape(3, 4) % 5 - 2)), dtypes=FLOAT, grad=False)

# ---- complex numbers -------------------------------------------------------------------------------------------

add("angle", samples=same(lambda d, r: Sample(np.array([[-1.5, 0.0, 2.0, np.nan, -0.0]], d))),
    dtypes=FLOAT, out=True, gradcheck=False, gradgrad=False, node=False)
add("angle", id="angle_complex", samples=same(
    lambda d, r: Sample((arr(r, (3, 4), "float64") + 1j * arr(r, (3, 4), "float64")).astype(d))),
    dtypes=("complex64", "complex128"), grad=False)
add("angle", id="angle_int", samples=unary(), dtypes=("int64",), grad=False)
add("complex", id="complex_grad", fn=lambda lib, a, b: lib.view_as_real(lib.complex(a, b)),
    samples=binary(), gradgrad=False)
add("complex", samples=binary(), out=True, grad=False,
    errors=_err(lambda r: Sample(arr(r, (2,), "float32"), arr(r, (2,), "float64")),
                lambda r: Sample(arr(r, (2,), "int64"), arr(r, (2,), "int64"))))
add("polar", id="polar_grad", fn=lambda lib, a, b: lib.view_as_real(lib.polar(a, b)), samples=binary(0.5, 2.0),
    gradgrad=False)
add("polar", samples=binary(0.5, 2.0), out=True, grad=False)

# ---- statistics and integration ------------------------------------------------------------------------------

add("cov", fn=lambda lib, x, fw=None, aw=None, **k: lib.cov(x, fweights=fw, aweights=aw, **k),
    samples=same(lambda d, r: Sample(arr(r, (3, 5), d)), lambda d, r: Sample(arr(r, (6,), d)),
                        lambda d, r: Sample(arr(r, (2, 4), d), correction=0),
                        lambda d, r: Sample(arr(r, (2, 4), d), np.array([1, 2, 1, 3])),
                        lambda d, r: Sample(arr(r, (2, 4), d), None, arr(r, (4,), d, 0.5, 2.0)),
                        lambda d, r: Sample(arr(r, (2, 4), d), np.array([1, 2, 1, 3]), arr(r, (4,), d, 0.5, 2.0))),
    grad_inputs=(0,), node=False, errors=_err(lambda r: Sample(arr(r, (2, 2, 2), "float32"))))
add("corrcoef", samples=same(lambda d, r: Sample(arr(r, (3, 5), d)), lambda d, r: Sample(arr(r, (6,), d))), node=False)
for _name in ("trapezoid", "trapz", "cumulative_trapezoid"):
    add(_name, samples=same(lambda d, r: Sample(arr(r, (3, 5), d)), lambda d, r: Sample(arr(r, (4, 3), d), dim=0),
                            lambda d, r: Sample(arr(r, (3, 5), d), np.sort(arr(r, (5,), d))),
                            lambda d, r: Sample(arr(r, (3, 5), d), np.sort(arr(r, (3, 5), d), -1)),
                            lambda d, r: Sample(arr(r, (6,), d), dx=0.5)), grad_inputs=(0,), node=False)
add("dist", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3, 4), d)),
                         lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (4,), d), 1),
                         lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3, 4), d), 3.5)),
    node=False, gradgrad=False)  # (torch's DistBackward0 gives a ZeroTensor that its double backward cannot use)
add("renorm", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), 2, 0, 1.0),
                           lambda d, r: Sample(arr(r, (2, 3, 4), d), 1, 1, 2.0)), inplace=True, node=False)
add("addr", id="addr_float_scales", samples=same(
    lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3,), d), arr(r, (4,), d), beta=0.5, alpha=2.0),
    lambda d, r: Sample(np.full((3, 4), np.nan, d), arr(r, (3,), d), arr(r, (4,), d), beta=0)),
    node=False, errors=_err(lambda r: Sample(arr(r, (3, 4), "int64"), arr(r, (3,), "int64"), arr(r, (4,), "int64"),
                                             beta=0.5)))
add("addr", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3,), d), arr(r, (4,), d)),
                         lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (3,), d), arr(r, (4,), d), beta=2,
                                             alpha=3),
                         lambda d, r: Sample(arr(r, (4,), d), arr(r, (3,), d), arr(r, (4,), d))),
    dtypes=FLOAT + ("int64",), inplace=True, out=True, node=False)
add("adjoint", fn=lambda lib, x: lib.adjoint(x).resolve_conj(), samples=same(lambda d, r: Sample(arr(r, (2, 3, 4), d))))

# ---- functional forms of views -----------------------------------------------------------------------------

for _name, _args in (("transpose_copy", (0, 1)), ("permute_copy", ((1, 0),)), ("t_copy", ()),
                     ("diagonal_copy", ()), ("expand_copy", ((2, 3, 4),)), ("narrow_copy", (1, 1, 2)),
                     ("select_copy", (0, 1)), ("unsqueeze_copy", (1,)), ("squeeze_copy", ()),
                     ("view_copy", ((12,),)), ("detach_copy", ()), ("alias_copy", ()),
                     ("unfold_copy", (1, 2, 1)), ("as_strided_copy", ((2, 2), (1, 2))),
                     ("slice_copy", (1, 1, 3))):
    add(_name, samples=same(lambda d, r, a=_args: Sample(arr(r, (3, 4), d), *a)), dtypes=FLOAT + ("int64",),
        grad=_name != "detach_copy", noncontig=_name != "as_strided_copy", node=False)
add("split_copy", samples=same(lambda d, r: Sample(arr(r, (5, 4), d), 2)), grad=False)
add("split_with_sizes_copy", samples=same(lambda d, r: Sample(arr(r, (5, 4), d), [2, 3])), grad=False)
add("unbind_copy", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), 1)), grad=False)
add("slice_scatter", samples=same(lambda d, r: Sample(arr(r, (5, 4), d), arr(r, (2, 4), d), 0, 1, 3),
                                  lambda d, r: Sample(arr(r, (5, 4), d), arr(r, (5, 2), d), 1, 0, 4, 2)),
    dtypes=FLOAT + ("int64",), node=False,
    errors=_err(lambda r: Sample(arr(r, (5, 4), "float32"), arr(r, (3, 4), "float32"), 0, 1, 3)))
add("select_scatter", samples=same(lambda d, r: Sample(arr(r, (5, 4), d), arr(r, (4,), d), 0, 2)),
    dtypes=FLOAT + ("int64",), node=False)
add("diagonal_scatter", samples=same(lambda d, r: Sample(arr(r, (4, 4), d), arr(r, (4,), d)),
                                     lambda d, r: Sample(arr(r, (3, 5), d), arr(r, (3,), d), 1)),
    dtypes=FLOAT + ("int64",), node=False)
# (as_strided reads storage: torch's backward applies the view's strides to the incoming gradient's own
# storage, so its input gradient depends on how that gradient is laid out; forward only)
add("as_strided_scatter", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (2, 2), d), (2, 2), (1, 2))),
    dtypes=FLOAT, noncontig=False, grad=False)

# ---- splitting and index helpers ----------------------------------------------------------------------------

add("hsplit", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), 2), lambda d, r: Sample(arr(r, (6,), d), [1, 4])),
    node=False, errors=_err(lambda r: Sample(arr(r, (3, 5), "float32"), 2)))
add("vsplit", samples=same(lambda d, r: Sample(arr(r, (4, 3), d), 2)),
    node=False, errors=_err(lambda r: Sample(arr(r, (4,), "float32"), 2)))
add("dsplit", samples=same(lambda d, r: Sample(arr(r, (2, 3, 4), d), [1, 3])), node=False)
add("isin", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), arr(r, (5,), d)),
                         lambda d, r: Sample(arr(r, (6,), d), arr(r, (2, 2), d), invert=True)),
    dtypes=INTS, grad=False)
add("vander", samples=same(lambda d, r: Sample(arr(r, (4,), d)), lambda d, r: Sample(arr(r, (3,), d), 5, True)),
    dtypes=FLOAT + ("int64",), grad=False)  # (torch 2.13's vander backward fails: "modified by an inplace operation")
add("nonzero_static", samples=same(lambda d, r: Sample(arr(r, (3, 4), d), size=4),
                                   lambda d, r: Sample(arr(r, (2, 2), d), size=7, fill_value=-3)),
    dtypes=("int64", "float32"), grad=False)
add("unravel_index", samples=same(lambda d, r: Sample(np.array([0, 5, 11, 7]), (3, 4)),
                                  lambda d, r: Sample(np.array([[3, 2], [1, 0]]), (2, 2))),
    dtypes=("int64",), grad=False)

def _inplace_pairs(low, high, scalar=True):
    """Two-tensor samples whose broadcast result has the first tensor's shape (it is written in place)."""
    def gen(dtype, rng):
        pairs = [((3, 4), (3, 4)), ((3, 4), (4,)), (("T", 4, 3), (4, 1)), ((2, 4, 3), (4, 1)), ((), ()),
                 ((0, 3), (3,))]
        out = [Sample(arr(rng, a, dtype, low, high), arr(rng, b, dtype, low, high)) for a, b in pairs]
        return out + [Sample(arr(rng, (3, 4), dtype, low, high), 1)] if scalar else out
    return gen


# ---- in-place forms of comparison, logical and bitwise ops: the result keeps self's dtype -----------------------

for _name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "less_equal", "not_equal", "logical_and",
              "logical_or", "logical_xor"):
    add(_name, id=_name + "_inplace", fn=lambda lib, x, y, n=_name: getattr(x.clone(), n + "_")(y),
        samples=_inplace_pairs(-1, 1, not _name.startswith("logical")), dtypes=FLOAT + INTS, grad=False,
        errors=_err(*[lambda r: Sample(arr(r, (4,), "float32"), arr(r, (3, 4), "float32"))]
                    + ([lambda r: Sample(arr(r, (4,), "float32"), 1)] if _name.startswith("logical") else [])))
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    add(_name, id=_name + "_inplace", fn=lambda lib, x, y, n=_name: getattr(x.clone(), n + "_")(y),
        samples=_inplace_pairs(-3, 3), dtypes=INTS, grad=False,
        errors=_err(lambda r: Sample(arr(r, (4,), "int64"), arr(r, (3, 4), "int64"))))
for _name in ("logical_not", "bitwise_not", "cumsum", "cumprod", "deg2rad", "rad2deg", "negative"):
    _args = (1,) if _name in ("cumsum", "cumprod") else ()
    add(_name, id=_name + "_inplace", fn=lambda lib, x, n=_name, a=_args: getattr(x.clone(), n + "_")(*a),
        samples=same(lambda d, r: Sample(arr(r, (3, 4), d))),
        dtypes=("int64",) if _name == "bitwise_not" else FLOAT + ("int64",) if _name != "deg2rad" and
        _name != "rad2deg" else FLOAT, grad=_name in ("cumsum", "cumprod", "negative", "deg2rad", "rad2deg"),
        node=_name not in ("deg2rad", "rad2deg"))

# ---- index_reduce, histogram, gradient, hash_tensor --------------------------------------------------------------

for _reduce in ("prod", "mean", "amax", "amin"):
    add("index_reduce", id="index_reduce_" + _reduce,
        fn=lambda lib, x, i, s, red=_reduce, **k: x.index_reduce(0, i, s, red, **k),
        samples=same(lambda d, r: Sample(arr(r, (5, 3), d), np.array([0, 2, 0, 4]), arr(r, (4, 3), d)),
                     lambda d, r: Sample(arr(r, (5, 3), d), np.array([1, 1]), arr(r, (2, 3), d),
                                         include_self=False)),
        dtypes=FLOAT + ("int64",), grad=_reduce != "prod", gradgrad=False, node=False,
        inplace=lambda lib, x, i, s, red=_reduce, **k: x.index_reduce_(0, i, s, red, **k))
add("histogram", fn=lambda lib, x, *a, **k: tuple(lib.histogram(x, *a, **k)),
    samples=same(lambda d, r: Sample(arr(r, (20,), d), 4), lambda d, r: Sample(arr(r, (3, 5), d), 3, density=True),
                 lambda d, r: Sample(arr(r, (10,), d), np.array([-2.0, -0.5, 0.0, 1.5], d)),
                 lambda d, r: Sample(arr(r, (10,), d), 3, range=(-1.0, 1.0)),
                 lambda d, r: Sample(np.full((4,), 2.0, d), 2)),
    grad=False, errors=_err(lambda r: Sample(arr(r, (4,), "int64"), 2),
                            lambda r: Sample(np.array([1.0, np.nan]), 2)))
add("hash_tensor", samples=same(lambda d, r: Sample(arr(r, (3, 4), d)), lambda d, r: Sample(arr(r, (3, 4), d), dim=1),
                                lambda d, r: Sample(arr(r, (3, 4), d), dim=0, keepdim=True)),
    dtypes=FLOAT + ("int64", "int32"), grad=False)
add("gradient", fn=lambda lib, x, coords=None, **k: lib.gradient(x, **k) if coords is None else
    lib.gradient(x, spacing=(coords,), **k),
    samples=same(lambda d, r: Sample(arr(r, (5,), d)), lambda d, r: Sample(arr(r, (4, 5), d), spacing=2.0),
                 lambda d, r: Sample(arr(r, (4, 5), d), dim=1, edge_order=2),
                 lambda d, r: Sample(arr(r, (4, 5), d), spacing=[0.5, 2.0], dim=(0, 1)),
                 lambda d, r: Sample(arr(r, (6,), d), np.array([0.0, 1.0, 1.5, 3.5, 4.0, 6.0], d)),
                 lambda d, r: Sample(arr(r, (6,), d), np.array([0.0, 1.0, 1.5, 3.5, 4.0, 6.0], d), edge_order=2)),
    dtypes=FLOAT, node=False, errors=_err(lambda r: Sample(arr(r, (2,), "float32"), edge_order=2)))
add("histogramdd", fn=lambda lib, x, *a, **k: (lambda r: (r.hist, *r.bin_edges))(lib.histogramdd(x, *a, **k)),
    samples=same(lambda d, r: Sample(arr(r, (20, 2), d), 3), lambda d, r: Sample(arr(r, (4, 5, 3), d), [2, 3, 1]),
                 lambda d, r: Sample(arr(r, (10, 2), d), 2, range=[-1.0, 1.0, 0.0, 2.0], density=True),
                 lambda d, r: Sample(arr(r, (12, 1), d), 4, weight=None),
                 lambda d, r: Sample(np.full((3, 2), 1.5, d), 2)),
    grad=False, errors=_err(lambda r: Sample(arr(r, (4, 2), "int64"), 2),
                            lambda r: Sample(arr(r, (4, 2), "float32"), [2, 2, 2])))
