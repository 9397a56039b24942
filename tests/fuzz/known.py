"""The mismatches the fuzzer finds that are left, each with its reason.

An entry is (op id regex, mismatch kind regex, message regex, reason); `reason` returns the first entry's
reason that matches a mismatch, None for a mismatch nobody has looked at (the suite's bounded run fails).

State (issue 25, first pass): the classes below are OPEN - found, counted, not fixed yet; each entry says
what differs. The guarded classes are those with no entry: a hang, a NumPy exception reaching the user, a
NumPy RuntimeWarning escaping ember under `-W error` (one listed case aside). Fixing a class means
deleting its entry here and running `python -m tests.fuzz --cases 100000` to see it gone.
"""

import re

OPEN = "open: found by the fuzzer, not fixed yet (issue 25 part 2)"

KNOWN = [
    # -- values decided deliberately --
    (r"polygamma.*", r"values", r"",
     "polygamma below -1e6: ember gives NaN (NOTE [ polygamma far below zero ], ember/_ops/special.py) where "
     "torch's series gives large finite numbers, and inf at integer poles where torch's gives finite values "
     "for huge negative integers; the direct sum ember uses would take one step per unit"),
    # -- open classes, most frequent first (3000 cases, seed 0) --
    (r".*", r"exception message", r"",
     f"{OPEN}: ember checks arguments in another order or words than torch (broadcast check before the "
     "in-place overlap check, Python's own TypeError for a str/None argument where torch's argument parser "
     "names the argument, dimension messages of 0-d tensors)"),
    (r".*", r"returns where torch raises", r"",
     f"{OPEN}: missing checks: dtype equality of self/src (scatter_reduce, index_add, meshgrid, lstsq), "
     "argument types (a str for a bool or int argument), in-place writes to overlapping (expanded) outputs"),
    (r".*", r"stride", r"",
     f"{OPEN}: the result of an op on an expanded (stride-0) or stepped input: ember takes NumPy's layout, "
     "torch's TensorIterator sorts dims by the inputs' strides (mostly in-place/pointwise ops, scatters)"),
    (r".*", r"exception class", r"",
     f"{OPEN}: a wrong argument type reaches the kernel: ember raises NotImplementedError (dtype "
     "not implemented) or AttributeError/IndexError where torch's argument parser raises TypeError first"),
    (r".*", r"values", r"",
     f"{OPEN}: NaN/inf placement at special values (pools, gelu, logit eps, fft of inf, angle of ints, lcm "
     "sign) and float16/float32 kernels computed at another precision"),
    (r".*", r"gradient", r"",
     f"{OPEN}: gradients at NaN/inf/ties (min, minimum, scatter_reduce mean, relu6) and of 0-size or "
     "expanded inputs (trapezoid, as_strided, LSTM)"),
    (r".*", r"raises where torch returns", r"",
     f"{OPEN}: half-precision complex views (ember has no complex32), singular matrices where torch returns "
     "inf/NaN (slogdet, logdet, lu_factor of int), 0-size dims in adaptive pools, mT of 0-d/1-d"),
    (r"cumulative_trapezoid", r"numpy warning", r"invalid value encountered in add",
     f"{OPEN}: the float16 backward of cumulative_trapezoid runs NumPy outside the dispatcher's retry "
     "(NOTE [ Quiet NumPy ]): inf - inf warns under -W error"),
]


def reason(op, kind, message):
    for o, k, m, why in KNOWN:
        if re.fullmatch(o, op) and re.fullmatch(k, kind) and re.search(m, message):
            return why
    return None
