"""`assert_close` and `assert_allclose`: torch.testing's comparisons, with torch's options and messages.

NOTE [ Comparison pairs ]
As in torch, the inputs are first walked in parallel (sequences elementwise, mappings by sorted key) into
*pairs* of leaves; each leaf pair is taken by the first pair type that accepts it (None, bool, Python or
NumPy number, tensor-like: a Tensor, or two objects of related types that `as_tensor` takes, NumPy arrays
among them). Only then are the pairs compared, and the first failure is raised, its message naming the
item (`The failure occurred for item [1]['w']`). A failure is an `_ErrorMeta` (exception class, message,
item path) until the end so that `msg=` (a string or a callable given torch's message) can replace it.
"""

import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

from .. import _dtypes, _naming

__all__ = ["assert_close", "assert_allclose"]


def _torch():
    import ember

    return ember


class _ErrorMeta(Exception):
    """A failure not yet raised: its exception class, message and the path of the item it occurred at."""

    def __init__(self, type, msg, *, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """Raised by a pair type that does not take the inputs; the next type is tried."""


# {dtype name: (rtol, atol)}: the defaults of assert_close; any other dtype compares exactly.
_DTYPE_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5), "float32": (1.3e-6, 1e-5),
                     "float64": (1e-7, 1e-7), "complex32": (0.001, 1e-5), "complex64": (1.3e-6, 1e-5),
                     "complex128": (1e-7, 1e-7)}
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def default_tolerances(*inputs, dtype_precisions=None):
    """The loosest (rtol, atol) of the inputs' dtypes (tensors or dtypes)."""
    torch = _torch()
    names = []
    for input in inputs:
        if isinstance(input, torch.Tensor):
            names.append(_dtype_name(input.dtype))
        elif isinstance(input, _dtypes.dtype):
            names.append(_dtype_name(input))
        else:
            raise TypeError(_naming.named(f"Expected a ember.Tensor or a ember.dtype, but got {type(input)} "
                                          "instead."))
    table = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[table.get(n, (0.0, 0.0)) for n in names])
    return max(rtols), max(atols)


def _get_tolerances(*inputs, rtol, atol, id=()):
    if (rtol is None) ^ (atol is None):
        raise _ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                     f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


# ---- messages ---------------------------------------------------------------------------------------------

def _mismatch_msg(*, default, identifier, extra, abs_diff, abs_idx=None, atol, rel_diff, rel_idx=None, rtol):
    equality = rtol == 0 and atol == 0

    def diff_line(kind, diff, idx, tol):
        line = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_idx, atol)
    msg += diff_line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(default="Scalars", identifier=identifier, extra=f"Expected {expected} but got {actual}.",
                         abs_diff=abs_diff, atol=atol, rel_diff=rel_diff, rtol=rtol)


def _tensor_mismatch_msg(actual, expected, matches, *, rtol, atol, identifier=None):
    torch = _torch()
    shape = tuple(matches.shape)

    def unravel(flat):
        return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()

    total = matches.numel()
    mismatches = total - int(torch.sum(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        a, e = a.to(torch.int64), e.to(torch.int64)
    abs_diff = torch.abs(a - e)
    abs_diff[m] = 0
    max_abs, abs_idx = torch.max(abs_diff, 0)
    rel_diff = abs_diff / torch.abs(e)
    rel_diff[m] = 0
    max_rel, rel_idx = torch.max(rel_diff, 0)
    return _mismatch_msg(default="Tensor-likes", identifier=identifier, extra=extra,
                         abs_diff=max_abs.item(), abs_idx=unravel(int(abs_idx)), atol=atol,
                         rel_diff=max_rel.item(), rel_idx=unravel(int(rel_idx)), rtol=rtol)


# ---- pairs (NOTE [ Comparison pairs ]) --------------------------------------------------------------------

class _Pair:
    def __init__(self, actual, expected, *, id=(), **unknown):
        self.actual, self.expected, self.id = actual, expected, id

    def _fail(self, type, msg):
        raise _ErrorMeta(type, msg, id=self.id)


class _NonePair(_Pair):
    def __init__(self, actual, expected, **options):
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, **options)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual, expected, *, id, **options):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), id=id, **options)

    def compare(self):
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    _TYPE_TO_DTYPE = {int: "int64", float: "float64", complex: "complex128"}

    def __init__(self, actual, expected, *, id=(), rtol=None, atol=None, equal_nan=False, check_dtype=False,
                 **options):
        types = (int, float, complex, np.number)
        if not all(isinstance(x, types) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        super().__init__(actual, expected, id=id, **options)
        dts = [getattr(_dtypes, self._TYPE_TO_DTYPE[type(x)]) for x in (actual, expected)]
        self.rtol, self.atol = _get_tolerances(*dts, rtol=rtol, atol=atol, id=id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self._fail(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        abs_diff = abs(a - e)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(e):
            return
        self._fail(AssertionError, _scalar_mismatch_msg(a, e, rtol=self.rtol, atol=self.atol))


class _TensorLikePair(_Pair):
    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                 **options):
        torch = _torch()
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = (self._to_tensor(x) for x in (actual, expected))
        for t in (actual, expected):
            if t.layout != torch.strided:
                raise _ErrorMeta(ValueError, f"Unsupported tensor layout {t.layout}", id=id)
        super().__init__(actual, expected, id=id, **options)
        self.rtol, self.atol = _get_tolerances(actual, expected, rtol=rtol, atol=atol, id=id)
        self.equal_nan, self.check_device, self.check_dtype = equal_nan, check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _to_tensor(x):
        torch = _torch()
        if isinstance(x, torch.Tensor):
            return x
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return torch.as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def _mismatch(self, name, a, e):
        self._fail(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

    def compare(self):
        torch = _torch()
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._mismatch("shape", a.shape, e.shape)
        if a.layout != e.layout:
            if self.check_layout:
                self._mismatch("layout", a.layout, e.layout)
        elif self.check_stride and a.stride() != e.stride():
            self._mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            self._mismatch("dtype", a.dtype, e.dtype)
        if a.device.type == "meta" or e.device.type == "meta":
            return
        if a.dtype != e.dtype:
            wide = {torch.uint64, torch.uint32, torch.uint16}
            dtype = torch.promote_types(torch.int64 if a.dtype in wide else a.dtype,
                                        torch.int64 if e.dtype in wide else e.dtype)
            a, e = a.to(dtype), e.to(dtype)
        self._compare_values(a, e)

    def _compare_values(self, a, e, identifier=None):
        torch = _torch()
        a, e = a.detach(), e.detach()
        matches = torch.isclose(a, e, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)
        if torch.all(matches):
            return
        if a.shape == ():
            msg = _scalar_mismatch_msg(a.item(), e.item(), rtol=self.rtol, atol=self.atol, identifier=identifier)
        else:
            msg = _tensor_mismatch_msg(a, e, matches, rtol=self.rtol, atol=self.atol, identifier=identifier)
        self._fail(AssertionError, msg)


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _originate_pairs(actual, expected, *, id=(), **options):
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _ErrorMeta(AssertionError,
                             f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id=id)
        pairs = []
        for i in range(len(actual)):
            pairs += _originate_pairs(actual[i], expected[i], id=(*id, i), **options)
        return pairs
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _ErrorMeta(AssertionError, "The keys of the mappings do not match:\n"
                             f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                             f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}", id=id)
        keys = a_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs += _originate_pairs(actual[key], expected[key], id=(*id, key), **options)
        return pairs
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except _Unsupported:
            continue
    raise _ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} "
                                f"and {type(expected)}.", id=id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    r"""Asserts that ``actual`` and ``expected`` are close.

    Tensors (and tensor-likes: NumPy arrays, or anything ``as_tensor`` takes when both sides are of related
    types) are close when ``|actual - expected| <= atol + rtol * |expected|`` elementwise, non-finite values
    only when equal, NaNs only with ``equal_nan=True``, and they have the same shape and (unless the
    matching ``check_*`` is False) device, dtype, layout; stride too with ``check_stride=True``. Sequences and
    mappings are compared elementwise. Python and NumPy scalars compare as numbers.

    Args:
        actual, expected: what to compare.
        allow_subclasses (bool): allow inputs of directly related types. Default: True.
        rtol, atol (float, optional): tolerances, both or neither; when omitted, the dtype's defaults
            (float16: 1e-3/1e-5, bfloat16: 1.6e-2/1e-5, float32: 1.3e-6/1e-5, float64: 1e-7/1e-7,
            complex64 and complex128 as their parts, anything else 0/0).
        equal_nan (bool): NaNs compare equal. Default: False.
        check_device, check_dtype, check_layout, check_stride (bool): the attribute checks.
        msg (str or callable, optional): the message on failure, or a function of torch's message.

    Raises:
        AssertionError: the inputs are not close, with torch's message (``Tensor-likes are not close!``,
            the count of mismatched elements and the greatest absolute and relative differences).
        TypeError, ValueError: as torch's for inputs it cannot compare and for a lone ``rtol``/``atol``.

    Example::

        >>> ember.testing.assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride, msg=msg)
    try:
        pairs = _originate_pairs(actual, expected, **options)
    except _ErrorMeta as meta:
        raise meta.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _ErrorMeta as meta:
            raise meta.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since torch 1.12: use `assert_close`. Compares with looser defaults and ``check_dtype=False``."""
    warnings.warn(_naming.named(
        "`ember.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `ember.testing.assert_close()` instead. You can find detailed upgrade instructions in "
        "https://github.com/pytorch/pytorch/issues/61844."), FutureWarning, stacklevel=2)
    torch = _torch()
    if not isinstance(actual, torch.Tensor):
        actual = torch.tensor(actual)
    if not isinstance(expected, torch.Tensor):
        expected = torch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions=_ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
