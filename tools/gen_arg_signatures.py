"""Write ember/_argsig_data.py: torch's argument-parser signatures, per namespace and function name.

A dev-time tool: `python3 tools/gen_arg_signatures.py` (needs torch's `torchgen` package, which ships with torch
and holds native_functions.yaml). It runs torch's own binding generator (torchgen.packaged.autograd
.gen_python_functions) far enough to get, for every function of torch's generated Python bindings, the
signature strings its PythonArgParser is built from (`sum(Tensor input, IntArrayRef[1]? dim, bool keepdim=False,
*, ScalarType? dtype=None, Tensor out=None)`), in the parser's order, deprecated ones marked `|deprecated`.
ember reads them only on an error path (ember/_argparse.py) and never imports torch.
"""

import inspect
import os
import pprint
import sys

import torchgen
from torchgen.gen import parse_native_yaml
from torchgen.packaged.autograd import gen_python_functions as g

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ember", "_argsig_data.py")

NAMESPACES = [("torch", g.is_py_torch_function, False), ("Tensor", g.is_py_variable_method, True),
              ("nn", g.is_py_nn_function, False), ("fft", g.is_py_fft_function, False),
              ("linalg", g.is_py_linalg_function, False), ("special", g.is_py_special_function, False)]


def signatures():
    root = os.path.dirname(torchgen.__file__)
    native = parse_native_yaml(os.path.join(root, "packaged/ATen/native/native_functions.yaml"),
                               os.path.join(root, "packaged/ATen/native/tags.yaml")).native_functions
    native = [f for f in native if g.should_generate_py_binding(f)]
    deprecated = os.path.join(root, "packaged/autograd/deprecated.yaml")
    pairs = {m: g.load_signatures(native, deprecated, method=m) for m in (False, True)}
    tables = {}
    for space, pred, method in NAMESPACES:
        table = {}
        for name, overloads in sorted(g.group_filter_overloads(pairs[method], pred).items(), key=str):
            if g.is_noarg(overloads):
                continue
            table[str(name)] = tuple(str(o.signature.signature_str(symint=True))
                                     for o in g.group_overloads(overloads, symint=True))
        tables[space] = table
    return tables


VARARGS = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "meshgrid", "block_diag",
           "chain_matmul", "cartesian_prod")
# the natives torch's Python functions call through _VF under their own name (torch/functional.py: cdist,
# unique_consecutive, einsum); ember/_argparse.py names them
VF_NATIVES = ("cdist", "unique_consecutive", "einsum")
# Tensor methods torch wraps in Python (torch/_tensor.py) that pass on to the method's native
METHOD_NATIVES = ("unflatten",)

# torch's hand-written bindings (python_torch_functions_manual.cpp, Module.cpp): not in native_functions.yaml,
# their parser strings are written here as torch's C++ holds them (tests/fuzz/test_sweep.py compares them)
MANUAL = {"numel": ("numel(Tensor input)",),
          "_to_dlpack": ("_to_dlpack(Tensor data, *, IntArrayRef? dl_device=None, bool? copy=None)",)}


def python_level(space, name):
    """Whether torch's public `name` of `space` is a Python function (torch/functional.py, torch/_tensor.py):
    its own Python checks, not the parser, answer a bad call, so it gets no entry."""
    import torch
    internal = {"_VF": None, "_natives": None, "_methods": None, "_manual": None}
    owner = {**internal, "torch": torch, "Tensor": torch.Tensor, "nn": torch._C._nn, "fft": torch._C._fft,
             "linalg": torch._C._linalg, "special": torch._C._special}[space]
    return inspect.isfunction(getattr(owner, name, None))


def functional_names():
    """nn.functional names that are torch's native functions themselves (F.conv2d is torch.conv2d)."""
    import torch
    import torch.nn.functional as F
    out = {}
    for name in dir(F):
        fn = getattr(F, name)
        if name.startswith("_") or not isinstance(fn, type(torch.sum)):
            continue
        for space, owner in (("nn", torch._C._nn), ("torch", torch)):
            if getattr(owner, name, None) is fn or getattr(owner, getattr(fn, "__name__", ""), None) is fn:
                out[name] = (space, fn.__name__)
                break
    return out


def main():
    import torch
    tables = signatures()
    # the natives behind torch's Python functions that take tensors as *args (torch/functional.py)
    tables["_VF"] = {n: tables["torch"][n] for n in VARARGS if n in tables["torch"]}
    tables["_natives"] = {n: tables["torch"][n] for n in VF_NATIVES}
    tables["_methods"] = {n: tables["Tensor"][n] for n in METHOD_NATIVES}
    tables["_manual"] = dict(MANUAL)
    for space, table in tables.items():
        for name in [n for n in table if python_level(space, n)]:
            del table[name]
    with open(OUT, "w") as f:
        f.write(f'"""torch {torch.__version__}\'s argument-parser signatures (generated: do not edit).\n\n'
                "Written by tools/gen_arg_signatures.py from torch's native_functions.yaml through torch's own "
                "binding\ngenerator; read by ember/_argparse.py on error paths only. Keys: the namespace "
                "(`torch`, `Tensor` for\nmethods, `nn`, `fft`, `linalg`, `special`), then the name torch's "
                'parser reports.\n"""\n\n')
        f.write("# ruff: noqa: E501\n# fmt: off\nSIGNATURES = ")
        f.write(pprint.pformat(tables, width=110, compact=False))
        f.write("\n\n# nn.functional's names that are native functions: name -> (namespace, parser name)\n"
                "FUNCTIONAL = ")
        f.write(pprint.pformat(functional_names(), width=110, compact=True))
        f.write("\n")
    print(OUT, sum(len(t) for t in tables.values()), "functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
