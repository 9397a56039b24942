"""How much of torch 2.13's public CPU API ember has: walks torch's namespaces, writes docs/coverage.md.

    python3 tools/coverage.py            # rewrite docs/coverage.md and tools/claimed_names.txt
    python3 tools/coverage.py --check    # exit 1 when either is not what the walk gives now

Needs torch 2.13 (the test extras install it). The page is generated, never edited by hand; the test
suite checks it is current (tests/test_docs.py), so a change that adds a torch name to ember regenerates
it with the command above.

NOTE [ What counts as torch's public API ]
A namespace is walked the same way everywhere, and the rules are printed at the top of the page:
  1. Names: the module's `__all__` where it defines one, else every name of `dir()` without a leading
     underscore. `torch` itself is the exception: its `__all__` leaves out public functions (`unique`,
     `set_grad_enabled`, `broadcast_shapes`) and adds every pybind class of `torch._C`, so `dir(torch)`
     is walked. For `torch.Tensor`, the names of `dir(torch.Tensor)` without a leading underscore (the
     Python protocol, `__add__` and friends, is left out).
  2. Kinds: callables (functions, classes, callable objects) count, and for `torch.Tensor` its data
     attributes too (`shape`, `grad`, `mT`); submodules and plain values (dtypes, `pi`) do not. Where a
     module has no `__all__`, only objects torch defines count (`typing.Optional` re-exported by
     `torch.nn.functional` does not).
  3. Documented: a function or method counts only if torch gives it a docstring. torch attaches one to
     every function its reference documents; the aten entry points it exposes without documenting
     (`torch.batch_norm_elemt`, `torch.abs_`, `Tensor.clamp_min`) have none. A class of `torch.*` that is
     a pybind type copied from `torch._C` counts only if it is one of the tensor model's types
     (`dtype`, `device`, `layout`, `memory_format`, `finfo`, `iinfo`, `Size`, `Generator`); the rest are
     TorchScript IR and tooling (`Graph`, `Node`, `ScriptModule`, `FileCheck`).
  4. Left out by category, by name (see `_CATEGORIES`): accelerators (CUDA, cuDNN, MPS, XPU, ...),
     quantized tensors, float8-only functions, sparse-only layouts, TorchScript and compiler internals
     (symbolic shapes, dispatch keys), and names torch removed that now only raise (`_REMOVED`); `_KEPT` overrides the
     patterns for dense functions whose names merely look like a category's (`nn.init.sparse_`).
  5. Whole namespaces not walked (see `_NOT_WALKED`): device modules, sparse, quantization, TorchScript,
     and extension/tooling APIs; the page lists them with the reason.
ember has a name when `hasattr` finds it on the ember module (or `ember.Tensor`) of the same path; a
namespace ember lacks counts all its names as missing. Presence is what this page measures: whether a
present name behaves as torch's is what the test suite checks.
"""

import argparse
import importlib
import inspect
import os
import re
import sys
import textwrap
import types
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "coverage.md")
TORCH_VERSION = "2.13"

# The namespaces walked, in the order the page lists them.
NAMESPACES = [
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.utils.rnn", "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations",
    "torch.nn.utils.prune", "torch.nn.utils.stateless",
    "torch.nn.attention", "torch.linalg", "torch.fft", "torch.special", "torch.autograd",
    "torch.autograd.functional", "torch.autograd.graph", "torch.autograd.forward_ad", "torch.optim",
    "torch.optim.lr_scheduler", "torch.optim.swa_utils", "torch.utils.data", "torch.utils.checkpoint",
    "torch.utils.hooks", "torch.utils._pytree",
    "torch.random", "torch.serialization", "torch.testing", "torch.distributions", "torch.func",
    "torch.amp", "torch.nested", "torch.signal.windows", "torch.multiprocessing", "torch.distributed",
    "torch.hub", "torch.accelerator", "torch.types", "torch.profiler", "torch.compiler", "torch.export",
    "torch.fx", "torch.onnx", "torch.utils.tensorboard", "torch.autograd.profiler",
]

# NOTE [ Issue 15's figure ]
# Issue 15 asks for the everyday API; the namespaces of capabilities that later issues bring (compilation,
# graph export, distributed training, profiling, function transforms, forward AD, checkpointing, mixed
# precision, nested tensors) are counted on the page but not in issue 15's figure, which the page prints as
# one line, with a line per group of the namespaces it does count.
LATER_ISSUES = {"torch.compiler", "torch.fx", "torch.export", "torch.distributed", "torch.onnx", "torch.profiler",
                "torch.utils.tensorboard", "torch.autograd.profiler", "torch.func", "torch.autograd.forward_ad",
                "torch.utils.checkpoint", "torch.amp", "torch.nested"}
ISSUE15_GROUPS = [
    ("tensors and torch.*", ["torch", "torch.Tensor"]),
    ("nn", ["torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils", "torch.nn.utils.rnn",
            "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations", "torch.nn.utils.prune",
            "torch.nn.utils.stateless", "torch.nn.attention"]),
    ("linalg, fft, special, signal", ["torch.linalg", "torch.fft", "torch.special", "torch.signal.windows"]),
    ("autograd", ["torch.autograd", "torch.autograd.functional", "torch.autograd.graph"]),
    ("optim", ["torch.optim", "torch.optim.lr_scheduler", "torch.optim.swa_utils"]),
    ("distributions", ["torch.distributions"]),
    ("data, serialization, utilities", ["torch.utils.data", "torch.utils.hooks", "torch.utils._pytree",
                                        "torch.random", "torch.serialization", "torch.testing",
                                        "torch.multiprocessing", "torch.hub", "torch.accelerator", "torch.types"]),
]

# The committed list of every name ember has (NOTE [ Claimed names ]).
CLAIMED = os.path.join(ROOT, "tools", "claimed_names.txt")

# Namespaces deliberately not walked, and why.
_NOT_WALKED = [
    ("torch.cuda, torch.mps, torch.xpu, torch.mtia, torch.cpu, torch.backends",
     "device and backend modules; ember is CPU-only and answers the calls scripts make to these as a "
     "CPU-only torch does (README: Running PyTorch scripts unchanged)"),
    ("torch.sparse", "sparse layouts (rule 4)"),
    ("torch.ao, torch.quantization", "quantized tensors (rule 4)"),
    ("torch.jit", "TorchScript (rule 4)"),
    ("torch.library, torch.overrides, torch.utils.cpp_extension, torch.package, torch.utils.benchmark, "
     "torch.monitor, torch.utils.flop_counter, torch.utils.mobile_optimizer",
     "extension and tooling APIs: custom C++ operators, dispatcher overrides, packaging, benchmarking "
     "and logging tools"),
]

# NOTE [ Left-out categories ]
# Matched on the lower-cased last part of a name; a name in several counts in the first. `_KEPT` are
# names the patterns would catch that are ordinary dense CPU functions (`nn.init.sparse_` fills a dense
# weight; `quantile` is statistics, not quantization).
_CATEGORIES = [
    ("accelerators", re.compile(
        r"cuda|cudnn|miopen|mkldnn|onednn|(^|_)mps|xpu|hpu|mtia|maia|(^|_)xla|ipu(_|$)|vulkan|metal|"
        r"fbgemm|nnpack|nvprof|(^|_)hip|pin_memory|is_pinned|^stream$|^event$|^record_stream$|acceleratorerror|outofmemoryerror")),
    ("quantized", re.compile(r"quantiz|qscheme|qint|quint|^q_|int_repr|qparams")),
    # nn.functional's scaled matmuls take float8 matrices only (torch's CPU build runs their TensorWise form
    # on float8 inputs); ember has no float8 dtypes
    ("float8-only", re.compile(r"^scaled_mm$|^scaled_grouped_mm$")),
    ("sparse-only", re.compile(
        r"sparse|(^|_)coo|csr|csc|bsr|bsc|^(indices|values|crow_indices|col_indices|ccol_indices|"
        r"row_indices|coalesce|is_coalesced|dense_dim|smm|sspaddmm|hspmm|dsmm|saddmm|spmm|to_dense)$|"
        r"^(indices|crow_indices|col_indices|ccol_indices|row_indices)_copy$")),
    ("TorchScript and compiler internals", re.compile(
        r"^script|jit|^sym_|^sym(bool|int|float)$|dispatchkey|^tag$|^aggregationtype$|^fork$|^wait$|"
        r"^compiled_with_cxx11_abi$|^classproperty$|^loggerbase$|_ir_module|^parse_(ir|schema|type_comment)$|"
        r"type_comment|^unify_type_list$|^while_loop$|torch_function|^boolean_dispatch$")),
]
# Functions torch removed that now only raise, left out too.
_REMOVED = {"torch.eig", "torch.lstsq", "torch.solve", "torch.symeig", "torch.matrix_rank",
            "torch.Tensor.eig", "torch.Tensor.lstsq", "torch.Tensor.solve", "torch.Tensor.symeig",
            "torch.Tensor.volatile"}
_KEPT = {"torch.nn.init.sparse_", "torch.nn.init.sparse",
         "torch.optim.SparseAdam"}  # (behaves as torch's on dense gradients: it raises)

# The pybind types of torch._C that torch documents as part of the tensor model (rule 3).
_C_TYPES_KEPT = {"dtype", "device", "layout", "memory_format", "finfo", "iinfo", "Size", "Generator"}


def category(qualname):
    """The left-out category of a fully qualified torch name, or None when it counts."""
    if qualname in _KEPT:
        return None
    if qualname in _REMOVED:
        return "removed (only raise)"
    low = qualname.rsplit(".", 1)[1].lower()
    for label, pattern in _CATEGORIES:
        if pattern.search(low):
            return label
    return None


def _documented(obj):
    doc = getattr(obj, "__doc__", None)
    return isinstance(doc, str) and bool(doc.strip())


def _defined_by_torch(obj):
    mod = getattr(obj, "__module__", None)
    return mod is None or mod == "torch" or mod.startswith("torch.")


def _counts(module, path, name, obj, has_all):
    """Rules 2 and 3 for one name of a module namespace."""
    if isinstance(obj, types.ModuleType) or not callable(obj):
        return False
    if not has_all and not _defined_by_torch(obj):
        return False
    if inspect.isclass(obj):
        import torch
        if path != "torch" and getattr(torch, name, None) is obj:
            return False  # a class re-exported from torch.* (`torch.fft.Tensor`) counts there only
        if path == "torch" and getattr(torch._C, name, None) is obj and not _documented(obj):
            return name in _C_TYPES_KEPT
        return True
    return _documented(obj)


def torch_names(path):
    """(counted names, {category: names left out}) of one torch namespace."""
    import torch
    left_out = {}
    if path == "torch.Tensor":
        names = []
        for name in dir(torch.Tensor):
            if name.startswith("_"):
                continue
            obj = getattr(torch.Tensor, name)
            if callable(obj) and not _documented(obj):
                continue
            names.append(name)
    else:
        module = importlib.import_module(path)
        has_all = path != "torch" and hasattr(module, "__all__")
        candidates = module.__all__ if has_all else [n for n in dir(module) if not n.startswith("_")]
        names = [n for n in dict.fromkeys(candidates)
                 if hasattr(module, n) and _counts(module, path, n, getattr(module, n), has_all)]
    kept = []
    for name in names:
        label = category(f"{path}.{name}")
        if label is None:
            kept.append(name)
        else:
            left_out.setdefault(label, []).append(name)
    return sorted(kept), left_out


def ember_has(path, names):
    """The subset of `names` ember has at the namespace of the same path (empty if ember lacks it)."""
    import ember
    if path == "torch.Tensor":
        sample = ember.zeros(2, 2)
        found = set()
        for name in names:
            if hasattr(ember.Tensor, name):
                found.add(name)
                continue
            try:
                getattr(sample, name)
                found.add(name)
            except AttributeError:
                pass
            except Exception:  # a property that refuses this sample (e.g. a 2-D-only one) still exists
                found.add(name)
        return found
    try:
        module = importlib.import_module("ember" + path[len("torch"):])
    except ModuleNotFoundError:
        return None
    # A module from another copy of ember (an editable install of another checkout answers for submodules
    # this one lacks) is not this ember's.
    home = os.path.dirname(os.path.abspath(ember.__file__)) + os.sep
    if not os.path.abspath(getattr(module, "__file__", None) or home).startswith(home):
        return None
    return {n for n in names if hasattr(module, n)}


def walk():
    """[(namespace, names, present or None)] for every walked namespace, plus left-out counts."""
    rows, left_out = [], {}
    for path in NAMESPACES:
        names, out = torch_names(path)
        for label, ns in out.items():
            left_out.setdefault(label, []).extend(f"{path}.{n}" for n in ns)
        rows.append((path, names, ember_has(path, names)))
    return rows, left_out


def _pct(a, b):
    return f"{100.0 * a / b:.0f}%" if b else "-"


def _wrap(items, width=108):
    lines, line = [], ""
    for item in items:
        piece = item if not line else " " + item
        if len(line) + len(piece) > width:
            lines.append(line)
            line = item
        else:
            line += piece
    if line:
        lines.append(line)
    return "\n".join(lines)


def _para(text, bullet=False):
    """One Markdown paragraph (or list item) wrapped at 108 columns."""
    return textwrap.fill(text, width=108, initial_indent="- " if bullet else "",
                         subsequent_indent="  " if bullet else "", break_long_words=False,
                         break_on_hyphens=False)


def render(rows, left_out):
    import torch
    total = sum(len(n) for _, n, _ in rows)
    have = sum(len(p or ()) for _, _, p in rows)
    out = [
        "# What ember implements of torch's API",
        "",
        _para(f"Generated by `python3 tools/coverage.py` from torch {torch.__version__.split('+')[0]}'s "
              "public API; do not edit by hand (`tests/test_docs.py` fails when this page is out of date)."),
        "",
        _para(f"ember has **{have} of {total}** public CPU names of the namespaces below "
              f"({_pct(have, total)}). A name counts as present when ember defines it at the same path; "
              "whether it behaves as torch's is what the test suite checks, against torch itself. Under "
              "`ember run`, a script that uses a missing name fails with `AttributeError: ember does not "
              "implement torch.<name> yet`, and one that imports a missing submodule with "
              "`ModuleNotFoundError: ember does not implement torch.<module> yet`."),
        "",
        "## How names are counted",
        "",
        _para("Names: a module's `__all__` where it has one, else its `dir()` without leading underscores "
              "(for `torch` itself `dir(torch)`, because its `__all__` omits public functions such as "
              "`unique` and adds TorchScript types). For `torch.Tensor`: its methods and attributes, "
              "without the `__dunder__` protocol.", bullet=True),
        _para("Counted: functions, classes and callable objects (in a module without `__all__`, only those "
              "torch defines), and `Tensor` attributes; not submodules, constants or dtypes. A class "
              "re-exported from `torch.*` (`torch.fft.Tensor`) counts only there.", bullet=True),
        _para("Documented only: a function or method counts if torch gives it a docstring, as it does for "
              "everything its reference documents; undocumented aten entry points such as "
              "`torch.batch_norm_elemt` or `Tensor.clamp_min` are internals. Of the pybind classes `torch.*` "
              "copies from `torch._C`, only the tensor model's (`dtype`, `device`, `layout`, "
              "`memory_format`, `finfo`, `iinfo`, `Size`, `Generator`) count; the rest are TorchScript IR "
              "types.", bullet=True),
        _para("Left out by name: accelerators (CUDA, cuDNN, MPS, XPU, pinned memory, streams), quantized "
              "tensors, float8-only functions (ember has no float8 dtypes), sparse-only layouts, TorchScript "
              "and compiler internals, and names torch removed that now only raise. They are listed at the "
              "end of the page.", bullet=True),
        "",
        "## By namespace",
        "",
        "| namespace | torch | ember | missing | coverage |",
        "|---|---:|---:|---:|---:|",
    ]
    for path, names, present in rows:
        n, p = len(names), len(present or ())
        label = f"`{path}`" + ("" if present is not None else " (no such module in ember)")
        out.append(f"| {label} | {n} | {p} | {n - p} | {_pct(p, n)} |")
    out.append(f"| **all** | **{total}** | **{have}** | **{total - have}** | **{_pct(have, total)}** |")
    out += ["", "## Issue 15's namespaces", "",
            _para("All walked namespaces except those of capabilities later issues bring ("
                  + ", ".join(f"`{p}`" for p in sorted(LATER_ISSUES)) + "), by group:"), "",
            "| group | torch | ember | coverage |", "|---|---:|---:|---:|"]
    by_path = {path: (len(names), len(present or ())) for path, names, present in rows}
    grouped = [p for _, paths in ISSUE15_GROUPS for p in paths]
    walked_issue15 = [p for p, _, _ in rows if p not in LATER_ISSUES]
    if sorted(grouped) != sorted(walked_issue15):
        raise SystemExit(f"ISSUE15_GROUPS and NAMESPACES disagree: {sorted(set(grouped) ^ set(walked_issue15))}")
    for label, paths in ISSUE15_GROUPS:
        n, p = (sum(by_path[x][i] for x in paths) for i in (0, 1))
        out.append(f"| {label} | {n} | {p} | {_pct(p, n)} |")
    n15, p15 = (sum(by_path[x][i] for x in grouped) for i in (0, 1))
    out.append(f"| **issue 15's namespaces** | **{n15}** | **{p15}** | **{_pct(p15, n15)}** |")
    out += ["", "## Missing names", ""]
    for path, names, present in rows:
        missing = [n for n in names if n not in (present or ())]
        if not missing:
            continue
        out += [f"### `{path}` ({len(missing)}{', no such module in ember' if present is None else ''})", ""]
        out += [_wrap([f"`{m}`" for m in missing]), ""]
    out += ["## Not walked", ""]
    for spaces, why in _NOT_WALKED:
        out.append(_para(f"{', '.join(f'`{s}`' for s in spaces.split(', '))}: {why}.", bullet=True))
    out += ["", "## Left out by name", ""]
    for label in [c for c, _ in _CATEGORIES] + ["removed (only raise)"]:
        names = sorted(left_out.get(label, ()))
        out += [f"### {label} ({len(names)})", "", _wrap([f"`{n}`" for n in names]), ""]
    return "\n".join(out)


# NOTE [ Claimed names ]
# tools/claimed_names.txt lists, one `namespace name` a line, every torch name the page counts ember as
# having. It is written with the page and checked with it (`--check`), so a change that adds names commits
# them; and tests/test_coverage_claims.py, which needs no torch, fails when a listed name disappears from
# ember, so a name once claimed cannot be lost silently.
def claimed(rows):
    return "".join(f"{path} {name}\n" for path, names, present in rows for name in names if name in (present or ()))


def generate():
    """(the page, the claimed-names list) as the walk gives them now."""
    import torch
    if not torch.__version__.startswith(TORCH_VERSION + "."):
        sys.exit(f"tools/coverage.py describes torch {TORCH_VERSION}; this is torch {torch.__version__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated torch attributes warn when touched
        rows, left_out = walk()
        return render(rows, left_out), claimed(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/coverage.md is out of date")
    args = parser.parse_args(argv)
    outputs = dict(zip((OUT, CLAIMED), generate()))
    if args.check:
        for path, text in outputs.items():
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                print(f"{os.path.relpath(path, ROOT)} is out of date: run `python3 tools/coverage.py`",
                      file=sys.stderr)
                return 1
        return 0
    for path, text in outputs.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
