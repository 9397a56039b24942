"""OpInfo entries of issue 22's reverse-mode additions: lstsq's residuals with gradients (NOTE [ lstsq's
residuals ] in ember/_ops/factorizations.py). See NOTE [ Table files by area ] in op_db.py."""

from op_db import FLOAT, Sample, add, arr, same

for _drv in ("gels", "gelsd", "gelss"):
    add("linalg.lstsq", id=f"linalg.lstsq_residuals_{_drv}", dtypes=FLOAT, gradgrad=False, node=False,
        rtol=1e-5, atol=1e-5, noncontig=False,
        fn=lambda lib, a, b, _d=_drv: lib.linalg.lstsq(a, b, driver=_d).residuals,
        samples=same(lambda d, r: Sample(arr(r, (4, 3), d), arr(r, (4, 2), d)),
                     lambda d, r: Sample(arr(r, (2, 4, 3), d), arr(r, (2, 4, 1), d))))
