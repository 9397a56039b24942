"""OpInfo entries of `ember.fft` (see NOTE [ Table files by area ] in op_db.py).

Real-input transforms take the sample arrays as they are; complex-input ones take a (..., 2) array of
real and imaginary parts through `view_as_complex`, so the generic backward and gradcheck tests (which
make float inputs require grad) reach the complex primitives and their derivatives too.
"""

import numpy as np
from op_db import FLOAT, INTS, Sample, add, arr, same


def _s(shape, **kw):
    return lambda d, r: Sample(arr(r, shape, d), **kw)


def _c(shape, **kw):
    """A complex sample of `shape`, as real pairs (..., 2)."""
    return lambda d, r: Sample(arr(r, tuple(shape) + (2,), d), **kw)


def _resolved(r):
    """A complex result as its (..., 2) real view: the harness weighs outputs by real weights into a real
    loss (ifft / ihfft of a real input are conjugate views in torch: resolved first)."""
    return __import__("torch" if type(r).__module__.startswith("torch") else "ember").view_as_real(
        r.resolve_conj()) if r.is_complex() else r


def _real_fn(name):
    return lambda lib, x, **k: _resolved(getattr(lib.fft, name)(x, **k))


def _cplx_fn(name):
    """(Half pairs are widened first: ember has no complex32, the complex dtype they would view as.)"""
    def fn(lib, x, **k):
        x = x.float() if x.dtype in (lib.float16, lib.bfloat16) else x
        return _resolved(getattr(lib.fft, name)(lib.view_as_complex(x), **k))
    return fn


_ONE_D = [dict(), dict(n=6, dim=0, norm="ortho"), dict(n=3, norm="forward"), dict(dim=-2, norm="backward")]

for _name in ("fft", "ifft", "rfft", "ihfft"):  # real input
    add(f"fft.{_name}", id=f"fft_{_name}", fn=_real_fn(_name), rtol=1e-5, atol=1e-5,
        samples=same(*[_s((4, 5), **k) for k in _ONE_D], _s(("T", 5, 4)), _s((2, 3, 4), dim=1)),
        dtypes=FLOAT + INTS)
for _name in ("fft", "ifft", "irfft", "hfft"):  # complex input
    add(f"fft.{_name}", id=f"fft_{_name}_complex", fn=_cplx_fn(_name), noncontig=False, rtol=1e-5,
        atol=1e-5, samples=same(*[_c((4, 5), **k) for k in _ONE_D], _c((2, 3, 4), dim=1)))

_N_D = [dict(), dict(s=(3, 6)), dict(dim=(0,), norm="ortho"), dict(s=(5, -1), dim=(1, 0), norm="forward"),
        dict(dim=(-1, 0)), dict(dim=(1,))]
for _name in ("fftn", "ifftn", "rfftn", "ihfftn", "fft2", "ifft2", "rfft2", "ihfft2"):
    add(f"fft.{_name}", id=f"fft_{_name}", fn=_real_fn(_name), rtol=1e-5, atol=1e-5,
        samples=same(*[_s((4, 5), **k) for k in _N_D], _s(("T", 5, 4)), _s((2, 3, 4)),
                     _s((2, 2, 3, 4)), _s((2, 2, 3, 4), dim=(3, 1, 2, 0)), _s((3, 2, 4), dim=(0, 2))),
        dtypes=FLOAT + INTS)
for _name in ("fftn", "ifftn", "irfftn", "hfftn", "fft2", "ifft2", "irfft2", "hfft2"):
    add(f"fft.{_name}", id=f"fft_{_name}_complex", fn=_cplx_fn(_name), noncontig=False, rtol=1e-5,
        atol=1e-5, samples=same(*[_c((4, 5), **k) for k in _N_D], _c((2, 3, 4)), _c((2, 2, 3, 4)),
                                _c((2, 2, 3, 4), dim=(3, 1, 2, 0)), _c((3, 2, 4), dim=(0, 2))))

for _name in ("fftshift", "ifftshift"):
    add(f"fft.{_name}", id=f"fft_{_name}", fn=_real_fn(_name), dtypes=FLOAT + INTS,
        samples=same(_s((4, 5)), _s((3, 5), dim=1), _s((2, 3, 5), dim=(0, -1))),
        errors=lambda r: [Sample(arr(r, (), "float32"))])
for _name in ("fftfreq", "rfftfreq"):
    add(f"fft.{_name}", id=f"fft_{_name}", fn=lambda lib, *a, _name=_name, **k: getattr(lib.fft, _name)(*a, **k),
        grad=False, samples=lambda d, r: [Sample(7), Sample(8, 0.3), Sample(1, 2.0), Sample(0), Sample(6, -0.7),
                                          Sample(5, dtype=np.float64 and None)])
