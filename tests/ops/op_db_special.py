"""OpInfo entries of `ember.special` and of torch.* / Tensor names of the same functions (i0, sinc, igamma,
igammac, mvlgamma). See NOTE [ Table files by area ] in op_db.py."""

import numpy as np
from op_db import FLOAT, HALF, INTS, Sample, add, arr, binary, same, unary

ALL_FLOAT_TYPES = FLOAT + HALF + INTS  # the kernels torch runs for Half and BFloat16 too
NO_HALF = FLOAT + INTS


def _sp(name):
    return lambda lib, *a, **k: getattr(lib.special, name)(*a, **k)


# ---- one argument, with gradients ---------------------------------------------------------------------------

for _name, _lo, _hi, _dtypes in [("i0e", -4, 4, ALL_FLOAT_TYPES), ("i1", -4, 4, ALL_FLOAT_TYPES),
                                 ("i1e", -4, 4, ALL_FLOAT_TYPES), ("ndtri", 0.05, 0.95, FLOAT),
                                 ("log_ndtr", -4, 3, NO_HALF), ("erfcx", -2, 3, NO_HALF),
                                 ("entr", 0.1, 3, ALL_FLOAT_TYPES), ("ndtr", -3, 3, ALL_FLOAT_TYPES),
                                 ("i0", -4, 4, ALL_FLOAT_TYPES), ("sinc", -3, 3, ALL_FLOAT_TYPES)]:
    # (ndtr is a composite in both: torch's last node is mul.Scalar's MulBackward1, an overload ember has not)
    add(f"special.{_name}", id=f"special_{_name}", fn=_sp(_name), samples=unary(_lo, _hi), dtypes=_dtypes,
        out=True, node=_name != "ndtr")
add("i0", samples=unary(-4, 4), dtypes=ALL_FLOAT_TYPES, inplace=True, out=True)
add("sinc", samples=unary(-3, 3), dtypes=ALL_FLOAT_TYPES, inplace=True, out=True)
add("special.entr", id="special_entr_edges", fn=_sp("entr"), grad=False,
    samples=same(lambda d, r: Sample(np.array([0.0, -1.0, np.nan, np.inf, 1e-30, 2.0], d))))
add("special.ndtri", id="special_ndtri_edges", fn=_sp("ndtri"), grad=False,
    samples=same(lambda d, r: Sample(np.array([0.0, 1.0, -0.5, 1.5, np.nan, 1e-300, 0.5, 1 - 1e-7], d))))
add("special.i1", id="special_i1_zero", fn=_sp("i1"), samples=same(lambda d, r: Sample(np.array([0.0, 1e-20, 3.0],
                                                                                               d))))

# ---- one argument, not differentiable in torch ---------------------------------------------------------------

_WIDE = lambda lo, hi: same(  # noqa: E731 - a sample builder
    lambda d, r: Sample(arr(r, (3, 4), d, lo, hi)), lambda d, r: Sample(arr(r, ("T", 4, 3), d, lo, hi)),
    lambda d, r: Sample(np.array([0.0, -0.0, 1e-6, 5.0, 8.0, 2.0, 2.09, -2.09, 30.0, -30.0, 200.0, np.inf,
                                  -np.inf, np.nan], d) if d in FLOAT else arr(r, (5,), d, lo, hi)))
for _name, _lo, _hi in [("bessel_j0", -20, 20), ("bessel_j1", -20, 20), ("bessel_y0", 0.1, 20),
                        ("bessel_y1", 0.1, 20), ("modified_bessel_i0", -10, 10), ("modified_bessel_i1", -10, 10),
                        ("modified_bessel_k0", 0.1, 10), ("modified_bessel_k1", 0.1, 10),
                        ("scaled_modified_bessel_k0", 0.1, 10), ("scaled_modified_bessel_k1", 0.1, 10),
                        ("spherical_bessel_j0", -10, 10), ("airy_ai", -10, 10)]:
    add(f"special.{_name}", id=f"special_{_name}", fn=_sp(_name), samples=_WIDE(_lo, _hi), dtypes=NO_HALF,
        grad=False, out=True, atol=1e-5 if _name in ("bessel_j0", "bessel_j1", "bessel_y0", "airy_ai") else None,
        rtol=1e-5 if _name in ("bessel_j0", "bessel_j1", "bessel_y0", "airy_ai") else None)

# ---- two arguments ----------------------------------------------------------------------------------------------

add("special.xlog1py", id="special_xlog1py", fn=_sp("xlog1py"), samples=binary(-1, 2, -0.5, 2, scalar=2.0),
    dtypes=FLOAT + HALF, out=True)
add("special.xlog1py", id="special_xlog1py_edges", fn=_sp("xlog1py"), grad=False,
    samples=same(lambda d, r: Sample(np.array([0.0, 0.0, 1.0, 2.0], d), np.array([-1.0, np.nan, -1.0, 3.0], d))))
add("special.xlog1py", id="special_xlog1py_scalar_self", fn=lambda lib, y: lib.special.xlog1py(2.0, y),
    samples=unary(-0.5, 3))
add("special.zeta", id="special_zeta", fn=_sp("zeta"), grad_inputs=(1,), dtypes=NO_HALF,
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d, 1.5, 6), arr(r, (3, 4), d, 0.5, 4)),
                 lambda d, r: Sample(arr(r, (3, 1), d, 1.5, 6), arr(r, (4,), d, 0.5, 4)),
                 lambda d, r: Sample(np.array([1.0, 0.5, 2.0, 2.0, 3.0, 2.5], d),
                                     np.array([1.0, 1.0, -1.0, -2.5, 0.0, -0.5], d)) if d in FLOAT else
                 Sample(arr(r, (4,), d, 2, 6), arr(r, (4,), d, 1, 4))))
add("special.zeta", id="special_zeta_scalar_self", fn=lambda lib, q: lib.special.zeta(2.0, q), samples=unary(0.5, 4))
for _name, _tname in (("gammainc", "igamma"), ("gammaincc", "igammac")):
    _gsamples = same(lambda d, r: Sample(arr(r, (3, 4), d, 0.5, 6), arr(r, (3, 4), d, 0.1, 8)),
                     lambda d, r: Sample(arr(r, (3, 1), d, 0.5, 6), arr(r, (4,), d, 0.1, 8)),
                     lambda d, r: Sample(np.array([0.0, 0.0, 1.0, np.inf, 2.0, -1.0, 25.0, 250.0], d),
                                         np.array([0.0, 1.0, 0.0, 1.0, np.inf, 1.0, 24.0, 260.0], d)))
    add(f"special.{_name}", id=f"special_{_name}", fn=_sp(_name), grad_inputs=(1,), samples=_gsamples,
        dtypes=FLOAT + HALF, out=True)
    add(_tname, grad_inputs=(1,), samples=_gsamples, dtypes=FLOAT, out=True,
        inplace=lambda lib, x, y, _n=_tname: getattr(x, _n + "_")(y))
add("mvlgamma", fn=lambda lib, x, p: lib.mvlgamma(x, p), grad_inputs=(0,), dtypes=FLOAT + ("int64",),
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d, 1.6, 5), 2), lambda d, r: Sample(arr(r, (5,), d, 2.1, 5), 4)),
    out=True)
add("mvlgamma", id="mvlgamma_inplace", fn=lambda lib, x, p: x.clone().mvlgamma_(p), grad_inputs=(0,),
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d, 1.6, 5), 2)))
add("special.multigammaln", id="special_multigammaln", fn=_sp("multigammaln"), grad_inputs=(0,),
    samples=same(lambda d, r: Sample(arr(r, (3, 4), d, 1.6, 5), 3)))

# ---- orthogonal polynomials (no gradients in torch) -------------------------------------------------------------

_POLYS = [f"{s}chebyshev_polynomial_{c}" for s in ("", "shifted_") for c in "tuvw"] + \
    ["hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


def _poly_samples(d, r):
    degrees = np.array([[0, 1, 2, 3], [5, 7, 9, 12], [-1, 4, 6, 10]], np.float64)
    # (no NaN x: where the recurrence never runs torch returns an uninitialized value for most families)
    edges = np.array([1.0, -1.0, 0.0, 0.5, 0.25, 1.0, -1.0, 0.0, 2.0])
    return [Sample(arr(r, (3, 4), d, -1, 1), degrees.astype(d)), Sample(arr(r, (3, 4), d, -1.2, 1.2), 5),
            Sample(edges.astype(d), np.array([3, 4, 5, 12, 3, 20, 21, 13, 3.7], d)),
            Sample(arr(r, (4,), d, 0, 1), np.array(7.0, d))]


for _name in _POLYS:
    add(f"special.{_name}", id=f"special_{_name}", fn=_sp(_name), samples=_poly_samples, dtypes=NO_HALF,
        grad=False, out=True)
    add(f"special.{_name}", id=f"special_{_name}_scalar_x", grad=False, dtypes=NO_HALF,
        fn=lambda lib, n, _name=_name: getattr(lib.special, _name)(0.3, n),
        samples=same(lambda d, r: Sample(np.array([[0, 1, 2, 3], [5, 7, 9, 12]], d))))
add("special.zeta", id="special_zeta_scalar_other", fn=lambda lib, x: lib.special.zeta(x, 2.0), samples=unary(1.5, 6),
    grad=False,  # (torch has no derivative for x: test_special_functions holds the error)
    dtypes=NO_HALF)
