"""`ember.special`: torch.special's functions.

Most are ops of their own (ember/_ops/special_fns.py); the rest are torch.special's aliases of torch.*
functions (`expit` is `sigmoid`, `gammaln` is `lgamma`, `psi` is `digamma`, ...) and its composites
(`ndtr`, `softmax`, `log_softmax`, `logsumexp`, `multigammaln`), written here as torch writes them.
"""

import math as _math

from . import _ops as _ops_pkg  # noqa: F401 - every op module registered
from ._ops import pointwise as _pw
from ._ops import special_fns as _fns
from ._ops import unary as _unary
from ._ops._util import finish_out as _finish_out
from ._ops._util import public as _public
from ._ops._util import typed

globals().update(_fns.SPECIAL)

airy_ai = _fns.SPECIAL["airy_ai"]
i0 = _fns.i0
sinc = _fns.sinc
digamma = psi = _unary.digamma
erf = _unary.erf
erfc = _unary.erfc
erfinv = _unary.erfinv
exp2 = _unary.exp2
expm1 = _unary.expm1
log1p = _unary.log1p
gammaln = _unary.lgamma
logit = _unary.logit
polygamma = _unary.polygamma
expit = _pw.sigmoid
xlogy = _public["xlogy"]


def gammainc(input, other, *, out=None):
    """The regularized lower incomplete gamma function (torch.igamma)."""
    return _fns.igamma(input, other, out=out)


def gammaincc(input, other, *, out=None):
    """The regularized upper incomplete gamma function (torch.igammac)."""
    return _fns.igammac(input, other, out=out)


@typed
def multigammaln(input, p: int, *, out=None):
    """The multivariate log-gamma function of dimension p (torch.mvlgamma)."""
    return _fns.mvlgamma(input, p, out=out)


def ndtr(input, *, out=None):
    """The standard normal CDF, torch's composite (1 + erf(x / sqrt(2))) / 2."""
    return _finish_out((1 + erf(input * _math.sqrt(0.5))) * 0.5, out, check_grad=False)  # (torch's does not)


def round(input, *, decimals=0, out=None):  # noqa: A001 - torch's name
    """Round to the nearest integer (or to `decimals` places)."""
    return _unary.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    """softmax along `dim` (optionally computed in `dtype`)."""
    return _public["softmax"](input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax along `dim` (optionally computed in `dtype`)."""
    return _public["log_softmax"](input, dim, dtype=dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) along `dim`, computed stably."""
    return _public["logsumexp"](input, dim, keepdim, out=out)


__all__ = sorted(["airy_ai", "i0", "sinc", "digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expm1", "log1p",
                  "gammaln", "logit", "polygamma", "expit", "xlogy", "gammainc", "gammaincc", "multigammaln", "ndtr",
                  "round", "softmax", "log_softmax", "logsumexp", *_fns.SPECIAL])
