"""Tensor printing, following torch's rules so that `print(x)` reads the same.

Floats print in one of three styles chosen from the finite non-zero values: integers as `1.`, fixed
point with 4 decimals, or scientific (`1.0000e-05`) when the values span more than 1000x or leave
[1e-4, 1e8]. Every element is padded to the widest one; rows wrap at 80 columns; tensors over 1000
elements are summarised with the first and last 3 entries of each dim.
"""

import math

import numpy as np

from . import _dtypes, _naming

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
_print_opts = {"precision": PRECISION, "threshold": THRESHOLD, "edgeitems": EDGEITEMS, "linewidth": LINEWIDTH,
               "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    if profile == "default":
        _print_opts.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        _print_opts.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _print_opts.update(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _print_opts[k] = v
    _print_opts["sci_mode"] = sci_mode


class _Formatter:
    def __init__(self, values, kind):
        self.kind = kind
        self.sci = False
        self.int_mode = True
        p = _print_opts["precision"]
        if kind == "f":
            finite = values[np.isfinite(values)]
            nz = np.abs(finite[finite != 0])
            self.int_mode = bool(np.all(np.ceil(finite) == finite)) if finite.size else True
            if nz.size:
                lo, hi = float(nz.min()), float(nz.max())
                if self.int_mode:
                    self.sci = hi / lo > 1000.0 or hi > 1.0e8
                else:
                    self.sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
            if _print_opts["sci_mode"] is not None:
                self.sci = _print_opts["sci_mode"]
            self.fmt = (lambda v: f"{v:.{p}e}") if self.sci else \
                (lambda v: f"{v:.0f}." if math.isfinite(v) else _nonfinite(v)) if self.int_mode else \
                (lambda v: f"{v:.{p}f}")
            # torch sizes the columns by the non-zero finite values only (so -0. and nan may stick out)
            self.width = max((len(self.fmt(v)) for v in finite[finite != 0].tolist()), default=1)
            return
        elif kind == "b":
            self.fmt = lambda v: "True" if v else "False"
        else:
            self.fmt = str
        self.width = max((len(self.fmt(v)) for v in values.tolist()), default=1)

    def format_raw(self, v):
        if self.kind == "f" and not math.isfinite(v):
            return _nonfinite(v)
        return self.fmt(v)

    def __call__(self, v):
        return self.format_raw(v).rjust(self.width)


def _nonfinite(v):
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _summarized_values(a, edge):
    """The elements that will be printed (for choosing the format), as a flat array."""
    if a.ndim == 0:
        return a.reshape(1)
    rows = range(a.shape[0])
    if a.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(a.shape[0] - edge, a.shape[0]))
    if a.ndim == 1:
        return a[list(rows)]
    return np.concatenate([_summarized_values(a[i], edge) for i in rows])


def _fmt_1d(a, fmt, indent, summarize, edge):
    elem_w = fmt.width + 2
    per_line = max(1, math.floor((_print_opts["linewidth"] - indent) / elem_w))
    vals = a.tolist()
    if summarize and len(vals) > 2 * edge:
        items = [fmt(v) for v in vals[:edge]] + [" ..."] + [fmt(v) for v in vals[-edge:]]
    else:
        items = [fmt(v) for v in vals]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _fmt(a, fmt, indent, summarize, edge):
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        return _fmt_1d(a, fmt, indent, summarize, edge)
    n = a.shape[0]
    if summarize and n > 2 * edge:
        rows = [_fmt(a[i], fmt, indent + 1, summarize, edge) for i in range(edge)] + ["..."] + \
               [_fmt(a[i], fmt, indent + 1, summarize, edge) for i in range(n - edge, n)]
    else:
        rows = [_fmt(a[i], fmt, indent + 1, summarize, edge) for i in range(n)]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def _plain(arr):
    """Values in a dtype Python can format (half types widened)."""
    if arr.dtype.name in ("bfloat16", "float16"):
        return arr.astype(np.float32)
    return arr


def _default_for(d):
    return d in (_dtypes.get_default_dtype(), _dtypes.int64, _dtypes.bool) or \
        (d is _dtypes.complex64 and _dtypes.get_default_dtype() is _dtypes.float32)


def _meta_suffixes(t, d):
    out = ["...", ", device='meta'", f", size={tuple(t.shape)}"]
    if d is not _dtypes.get_default_dtype():
        out.append(f", dtype={d}")
    if t._grad_fn is not None:
        out.append(f", grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        out.append(", requires_grad=True")
    return out


def _add_suffixes(out, suffixes, indent):
    """torch's `_add_suffixes`: each suffix on the line if it fits, else on a new indented line."""
    parts = [out]
    last = len(out) - out.rfind("\n") + 1
    width = _print_opts["linewidth"]
    for suffix in suffixes:
        if last + len(suffix) + 2 > width:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def tensor_repr(t, prefix="tensor("):
    d = t.dtype
    if t.is_meta:  # no values to show (NOTE [ Meta payloads ])
        return prefix + "".join(_meta_suffixes(t, d)) + ")"
    a = _plain(t.numpy(force=True))  # printing formats the values: NumPy's array, not an op
    indent = len(prefix)
    suffixes = []
    summarize = a.size > _print_opts["threshold"]
    edge = _print_opts["edgeitems"]
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
    else:
        kind = "b" if a.dtype == np.bool_ else ("f" if a.dtype.kind == "f" else ("c" if a.dtype.kind == "c" else "i"))
        shown = _summarized_values(a, edge) if summarize else a.reshape(-1)
        if kind == "c":
            body = np.array2string(a, separator=", ", precision=_print_opts["precision"])
        else:
            body = _fmt(a, _Formatter(shown, kind), indent, summarize, edge)
    if not _default_for(d):
        suffixes.append(f"dtype={d}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    out = prefix + body
    if t._fw_grad is not None:  # a dual tensor (forward AD) shows its tangent, laid out as torch lays it out
        return _add_suffixes(out, suffixes + [f"tangent={tensor_repr(t._fw_grad)}"], indent)
    if suffixes:
        last_line = out.rsplit("\n", 1)[-1]
        tail = ", " + ", ".join(suffixes) + ")"
        if len(last_line) + len(tail) > _print_opts["linewidth"] + 1 and "\n" in out:
            out += ",\n" + " " * indent + ", ".join(suffixes) + ")"
        else:
            out += tail
        return out
    return out + ")"


def format_storage_items(arr, dtype):
    return "\n".join(f" {v}" for v in _plain(arr).tolist())


_LEGACY = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
           "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
           "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
           "complex128": "ComplexDoubleTensor", "uint16": "UInt16Tensor", "uint32": "UInt32Tensor",
           "uint64": "UInt64Tensor"}


def legacy_type_name(t):
    """'ember.FloatTensor' and friends, as torch's `x.type()` and error messages name tensors."""
    return _naming.prefix + "." + _LEGACY[t.dtype.name]


def dtype_from_legacy_name(name):
    """The dtype `x.type('torch.FloatTensor')` names; the package may be spelled torch or ember."""
    package, _, short = name.partition(".")
    if package in ("torch", "ember"):
        for k, v in _LEGACY.items():
            if v == short:
                return getattr(_dtypes, k)
    raise ValueError(f"invalid type: '{name}'")
