"""Wrong argument types in torch's words: torch's argument-parser errors (issue 25, ember/_argparse.py).

Three checks: (1) the signature tables in ember/_argsig_data.py are what tools/gen_arg_signatures.py writes
from the installed torch's tables (not stale); (2) the parser replay `parser_error` gives torch's exact
TypeError for every function of the tables over a fixed set of bad argument lists (torch is called on the
same arguments); (3) a table of calls of ember's public functions, where the failure happens inside ember's
Python and `call_error` finds the user's call on the stack, raise torch's class and exact message, and the
wrong values Python would take silently (a str keepdim) are refused.
"""

import os
import sys
import warnings

import pytest
import torch
from compare import normalize_message

import ember
from ember._argparse import parser_error
from ember._argsig_data import SIGNATURES

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_tables_are_generated_from_the_installed_torch():
    sys.path.insert(0, os.path.join(_ROOT, "tools"))
    try:
        import gen_arg_signatures as gen
    finally:
        sys.path.pop(0)
    fresh = gen.signatures()
    for space in ("torch", "Tensor", "nn", "fft", "linalg", "special"):
        kept = {n: s for n, s in fresh[space].items() if n in SIGNATURES[space]}
        assert kept == SIGNATURES[space], space
        # what the tables leave out is torch's Python-level functions (their own checks answer)
        assert all(gen.python_level(space, n) for n in set(fresh[space]) - set(SIGNATURES[space])), space


def _bad_calls(lib):
    f = lib.ones(2, 3)
    return [((), {}), (("a",), {}), ((None,), {}), ((1.5,), {}), ((f, "a"), {}), ((f, None), {}), ((f, 1.5), {}),
            ((f, f.long()), {}), ((f, 0, None), {}), ((f, f, "a"), {}), ((f,), {"dim": "a"}), ((f, 1, "x"), {}),
            ((f,), {"foo": 1}), ((f, 1, True, 1, 1, 1, 1, 1), {}), (((f, 1),), {}), ((f, (1, "a")), {}),
            ((f, [1.5]), {}), ((f, 1), {"keepdim": "x"}), ((1, 2), {}), ((f, f, f, f), {}), ((f, 1, 2), {"out": 3}),
            ((f,), {"dim": 1.5, "keepdim": None})]


_PARSER_WORDS = ("must be", "invalid combination", "positional argument", "keyword argument", "expected Tensor as",
                 "failed to unpack")


def _torch_parser_error(fn, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except TypeError as e:
        return str(e) if any(w in str(e) for w in _PARSER_WORDS) else None
    except Exception:  # noqa: BLE001 - another error is not the parser's
        return None
    return None


@pytest.mark.parametrize("space", ["torch", "linalg", "fft", "special"])
def test_parser_replay_gives_torchs_words(space):
    owner = {"torch": torch, "linalg": torch._C._linalg, "fft": torch._C._fft, "special": torch._C._special}[space]
    compared, wrong = 0, []
    for name in sorted(SIGNATURES[space]):
        tf = getattr(owner, name, None)
        if tf is None or name.startswith("_") or "rand" in name or "normal" in name or "seed" in name:
            continue
        for (ta, tk), (ea, ek) in zip(_bad_calls(torch), _bad_calls(ember)):
            want = _torch_parser_error(tf, ta, tk)
            if want is None:
                continue
            got = parser_error(space, name, ea, ek)
            compared += 1
            if got is None or str(got) != normalize_message(want):
                wrong.append(f"{name}{ta!r:.40} {tk}: ember {got!s:.150} | torch {want:.150}")
    assert compared > {"torch": 5000, "linalg": 300, "fft": 200, "special": 300}[space]
    assert not wrong, "\n".join(wrong[:10])


# calls that fail inside ember's Python (a non-tensor's attribute, a str dim compared with an int, a helper's
# own words) or would run with a wrong value: each must raise torch's TypeError, word for word
CALLS = {
    "addbmm-int-batch": lambda lib, x: lib.addbmm(x, 0, None),
    "addmm-str-mat2": lambda lib, x: lib.addmm(x, x, "s"),
    "sum-str-dim": lambda lib, x: lib.sum(x, "a"),
    "sum-kw-str-dim": lambda lib, x: lib.sum(x, dim="a"),
    "method-sum-str-dim": lambda lib, x: x.sum("a"),
    "method-sum-float-dim": lambda lib, x: x.sum(1.5),
    "sum-str-keepdim": lambda lib, x: lib.sum(x, 1, "a"),
    "method-sum-kw-none-keepdim": lambda lib, x: x.sum(1, keepdim=None),
    "mean-kw-str-keepdim": lambda lib, x: x.mean(0, keepdim="a"),
    "mean-int-keepdim": lambda lib, x: lib.mean(x, (0,), 1),
    "var_mean-float-dim-kwargs": lambda lib, x: (lambda **kw: lib.var_mean(x, **kw))(dim=1.5, keepdim=False),
    "cummin-float-dim": lambda lib, x: lib.cummin(x, 1.5),
    "det-none": lambda lib, x: lib.det(None),
    "linalg-det-none": lambda lib, x: lib.linalg.det(None),
    "linalg-solve-int": lambda lib, x: lib.linalg.solve(x, 1),
    "linalg-cross-str": lambda lib, x: lib.linalg.cross(x, "a"),
    "fft-str-n": lambda lib, x: lib.fft.fft(x, "a"),
    "kron-none": lambda lib, x: lib.kron(x, None),
    "dot-str": lambda lib, x: lib.dot("a", x),
    "isclose-float": lambda lib, x: lib.isclose(x, 1.5),
    "take_along_dim-str": lambda lib, x: lib.take_along_dim(x, "a"),
    "unfold_copy-none-dim": lambda lib, x: lib.unfold_copy(x, None, 1, 1),
    "method-unfold-none": lambda lib, x: x.unfold(None, 1, 1),
    "diagonal_copy-none": lambda lib, x: lib.diagonal_copy(None),
    "atleast_1d-str": lambda lib, x: lib.atleast_1d("a"),
    "block_diag-none": lambda lib, x: lib.block_diag(x, None),
    "meshgrid-float": lambda lib, x: lib.meshgrid(x, 1.5, indexing="ij"),
    "broadcast_tensors-str": lambda lib, x: lib.broadcast_tensors(x, "a"),
    "avg_pool2d-kw-none-ceil": lambda lib, x: lib.nn.functional.avg_pool2d(x[None], 1, ceil_mode=None),
    "conv2d-str-stride": lambda lib, x: lib.nn.functional.conv2d(x[None, None], x[None, None, :1, :1], stride="a"),
    "cholesky_inverse-none": lambda lib, x: lib.cholesky_inverse(None),
    "cat-int-element": lambda lib, x: lib.cat((x, 1)),
}


@pytest.mark.parametrize("name", CALLS)
def test_wrong_argument_types_raise_torchs_type_error(name):
    x_t, x_e = torch.ones(2, 3), ember.ones(2, 3)
    with pytest.raises(TypeError) as want:
        CALLS[name](torch, x_t)
    with pytest.raises(TypeError) as got:
        CALLS[name](ember, x_e)
    assert str(got.value) == normalize_message(str(want.value))


def test_valid_calls_still_run():
    """The error path changes nothing for calls torch's parser accepts: their own errors stay as they were."""
    x = ember.ones(2, 3)
    assert ember.sum(x, 1, True).shape == (2, 1)
    assert x.sum(dim=(0, 1), keepdim=False).item() == 6
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.sum(x, 5)
    with pytest.raises(IndexError, match="Dimension out of range"):  # a list of ints is a `tuple of ints`
        ember.count_nonzero(x, [-100])
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ember.mm(x, x)
