"""Bad input everywhere a user types: every public function called with wrong types, ranks and values.

`python -m tests.fuzz.sweep` calls each public function of ember's top level, `nn.functional`, `linalg`,
`fft` and `special` that torch also has, with a fixed set of bad argument lists (no argument, a string, None,
a float where an int is expected, a 0-d / 1-d / 3-d tensor, out-of-range ints, an integer tensor where a float
one is expected), in ember and in torch on the same data, and reports each call where torch raises and ember
raises an exception of another class whose class or words are Python's or NumPy's own (an AttributeError,
a NumPy message, ...): an internal error reaching the user. `LEAKS` names what counts as one.
"""

import re
import sys
import warnings

import torch

import ember

NAMESPACES = [("", ember, torch), ("nn.functional.", ember.nn.functional, torch.nn.functional),
              ("linalg.", ember.linalg, torch.linalg), ("fft.", ember.fft, torch.fft),
              ("special.", ember.special, torch.special)]

# functions that block, read files, start processes or print: not called
_SKIP = re.compile(r"^(load|save|set_|use_|manual_seed|seed|initial_seed|compile|jit|vmap|cond|export|"
                   r"from_file|hub|autograd|cuda|backends|distributed|multiprocessing|profiler|onnx|"
                   r"set_printoptions|_|chunk_|wait|fork|sym_|is_|get_|typename|empty_strided)")

# an internal error: a class torch never raises for bad arguments, or NumPy's / Python's own words
LEAKS = re.compile(r"has no attribute|object is not (iterable|subscriptable|callable)|unhashable|ufunc|numpy|"
                   r"could not be broadcast|operands could not|not supported between instances|"
                   r"unsupported operand type|can't multiply sequence|cannot be interpreted as an integer|"
                   r"invalid literal for int|truth value of an array|index \d+ is out of bounds for axis|"
                   r"tuple index out of range|list index out of range|axis -?\d+ is out of bounds|"
                   r"argument must be a string or a|cannot reshape array|axes don't match array")


def _args(lib):
    f = lib.ones(2, 3)
    return [(), ("a",), (None,), (1.5,), (f, "a"), (f, None), (f, 1.5), (f, 100), (f, -100), (f, f.long()),
            (lib.ones(()), 0), (lib.ones(3), 1), (lib.ones(2, 3, 4), 1), (f.long(),), (f, f, "a"), (f, 0, None)]


def _outcome(fn, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure is an outcome
        return e
    return None


def sweep(only=None):
    """[(name, args repr, ember's exception, torch's exception)] for every internal error found; `only`: a
    regular expression the qualified names swept must match."""
    found, calls = [], 0
    for prefix, emod, tmod in NAMESPACES:
        for name in sorted(dir(emod)):
            if _SKIP.match(name) or not hasattr(tmod, name) or (only and not re.search(only, prefix + name)):
                continue
            ef, tf = getattr(emod, name), getattr(tmod, name)
            if not callable(ef) or isinstance(ef, type) or not callable(tf) or isinstance(tf, type):
                continue
            for ea, ta in zip(_args(ember), _args(torch)):
                calls += 1
                te = _outcome(tf, ta)
                if te is None:
                    continue
                ee = _outcome(ef, ea)
                if ee is None or type(ee).__name__ == type(te).__name__:
                    continue
                if LEAKS.search(str(ee)) or type(ee).__name__ in ("AttributeError", "KeyError", "NameError",
                                                                 "UnboundLocalError", "AssertionError"):
                    found.append((prefix + name, _show(ta), ee, te))
    return found, calls


def _show(args):
    return "(" + ", ".join(f"Tensor{list(a.shape)}:{str(a.dtype)[6:]}" if isinstance(a, torch.Tensor) else repr(a)
                           for a in args) + ")"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    found, calls = sweep(argv[0] if argv else None)
    for name, args, ee, te in found:
        print(f"{name}{args}\n    ember: {type(ee).__name__}: {str(ee)[:150]}\n    torch: {type(te).__name__}: "
              f"{str(te)[:150]}")
    print(f"{calls} calls, {len(found)} internal errors reaching the user")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
