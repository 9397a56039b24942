"""Bad input everywhere a user types: every public function called with wrong types, ranks and values.

`python -m tests.fuzz.sweep [REGEX]` calls, in ember and in torch on the same data, with a fixed set of bad
argument lists (no argument, a string, None, a float where an int is expected, a 0-d / 1-d / 3-d tensor,
out-of-range ints, an integer tensor where a float one is expected):

- each public function of ember's top level, `nn.functional`, `linalg`, `fft` and `special` that torch also has;
- each Tensor method torch also has (on a fresh 2x3 tensor per call);
- the constructors of the nn layers and of the optimizers (on one parameter), and DataLoader's arguments
  (on a small TensorDataset, its first batch drawn in the main process).

It reports each call where torch raises and ember raises an exception of another class whose class or words
are Python's or NumPy's own (an AttributeError, a NumPy message, ...): an internal error reaching the user.
`LEAKS` names what counts as one. tests/fuzz/test_sweep.py requires none.
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


# Tensor methods that block, print, hand out memory or change global state: not called
_SKIP_METHODS = re.compile(r"^(_|backward|register_|retain_grad|share_memory_|pin_memory|cuda|mps|xpu|ipu|hpu|"
                           r"numpy|tolist|item|storage|untyped_storage|data_ptr|set_|resize|map_|apply_|to_sparse|"
                           r"sparse_|coalesce|indices|values|crow_|col_|ccol_|row_|q_|int_repr|dequantize|"
                           r"is_|get_|new_tensor|module_load|dim_order|record_stream|to_mkldnn|to_padded|"
                           r"nested_|element_size|stride|size|untyped)")


def _method_args(lib):
    f = lib.ones(2, 3)
    return [(), ("a",), (None,), (1.5,), (100,), (-100,), (f.long(),), (0, None), (f, "a"), (0, "a"),
            (lib.ones(3, 2, 2),), ("a", 1), (1, 1.5)]


def _ctor_args(lib):
    return [(), ("a",), (None,), (1.5,), (-1,), (0,), (2, "a"), (2, None), (2, 1.5), (2, -1), (2, 3, "a"),
            (2, 2, 2, "a"), (lib.ones(2),)]


def _optim_args(lib):
    p = [lib.nn.Parameter(lib.ones(2))]
    return [(), ("a",), (None,), (1.5,), (lib.ones(2),), ([1],), ([],), (p, "a"), (p, None), (p, -1.0),
            (p, lib.ones(2)), (p, 0.1, "a"), (p, 0.1, -1.0), (p, 0.1, (0.9, "a")), (p, 0.1, None)]


_LOADER_KWARGS = [{"batch_size": "a"}, {"batch_size": 1.5}, {"batch_size": -1}, {"batch_size": 0},
                  {"shuffle": "a"}, {"shuffle": 2}, {"sampler": "a"}, {"sampler": 3}, {"batch_sampler": "a"},
                  {"batch_sampler": [[0]], "batch_size": 2}, {"num_workers": -1}, {"num_workers": "a"},
                  {"collate_fn": 1}, {"timeout": -1}, {"timeout": "a"}, {"drop_last": "a"},
                  {"prefetch_factor": 2}, {"persistent_workers": True}, {"sampler": [0], "shuffle": True},
                  {"generator": 1, "shuffle": True}, {"pin_memory_device": 1}, {"worker_init_fn": 1},
                  {"in_order": "a"}, {"multiprocessing_context": "a"}]


def _outcome(fn, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args)
    except Exception as e:  # noqa: BLE001 - every failure is an outcome
        return e
    return None


def _leaked(ee, te):
    """Whether ember's exception `ee`, where torch raised `te`, is an internal error (see `LEAKS`)."""
    if ee is None or type(ee).__name__ == type(te).__name__:
        return False
    return bool(LEAKS.search(str(ee))) or type(ee).__name__ in ("AttributeError", "KeyError", "NameError",
                                                                "UnboundLocalError", "AssertionError")


def _targets():
    """(qualified name, ember's callable, torch's callable, ember's argument lists, torch's), each swept."""
    for prefix, emod, tmod in NAMESPACES:
        for name in sorted(dir(emod)):
            if _SKIP.match(name) or not hasattr(tmod, name):
                continue
            ef, tf = getattr(emod, name), getattr(tmod, name)
            if callable(ef) and not isinstance(ef, type) and callable(tf) and not isinstance(tf, type):
                yield prefix + name, ef, tf, _args(ember), _args(torch)
    for name in sorted(dir(ember.Tensor)):
        if _SKIP_METHODS.match(name) or not callable(getattr(torch.Tensor, name, None)):
            continue
        yield ("Tensor." + name, lambda *a, n=name: getattr(ember.ones(2, 3), n)(*a),
               lambda *a, n=name: getattr(torch.ones(2, 3), n)(*a), _method_args(ember), _method_args(torch))
    for name in sorted(dir(ember.nn)):
        ec, tc = getattr(ember.nn, name), getattr(torch.nn, name, None)
        if (isinstance(ec, type) and issubclass(ec, ember.nn.Module) and isinstance(tc, type)
                and not name.startswith("_") and name not in ("Module", "Container")):
            yield "nn." + name, ec, tc, _ctor_args(ember), _ctor_args(torch)
    for name in sorted(dir(ember.optim)):
        ec, tc = getattr(ember.optim, name), getattr(torch.optim, name, None)
        if isinstance(ec, type) and issubclass(ec, ember.optim.Optimizer) and isinstance(tc, type) and \
                name != "Optimizer":
            yield "optim." + name, ec, tc, _optim_args(ember), _optim_args(torch)

    def loader(lib):
        def make(kwargs):
            data = lib.utils.data.TensorDataset(lib.arange(4.0).reshape(4, 1))
            dl = lib.utils.data.DataLoader(data, **kwargs)
            if kwargs.get("num_workers", 0) in (0, -1, "a") and "multiprocessing_context" not in kwargs:
                next(iter(dl))
        return make
    yield ("utils.data.DataLoader", loader(ember), loader(torch), [(k,) for k in _LOADER_KWARGS],
           [(k,) for k in _LOADER_KWARGS])


def sweep(only=None):
    """([(name, args repr, ember's exception, torch's exception)] for every internal error found, calls);
    `only`: a regular expression the qualified names swept must match."""
    found, calls = [], 0
    for name, ef, tf, eargs, targs in _targets():
        if only and not re.search(only, name):
            continue
        for ea, ta in zip(eargs, targs):
            calls += 1
            te = _outcome(tf, ta)
            if te is None:
                continue
            ee = _outcome(ef, ea)
            if _leaked(ee, te):
                found.append((name, _show(ta), ee, te))
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
