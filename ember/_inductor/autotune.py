"""mode="max-autotune" (option `max_autotune`): each generated C kernel is built in several variants, timed
on buffers of its real sizes, and the fastest kept; the choice is cached on disk beside the kernels.

Variants of one kernel (its C function as codegen_c.py printed it, rewritten as text):
- "base": as generated;
- "simd8", "simd16": the innermost loops of its pointwise members, which codegen_c.py marks `#pragma omp
  simd` (NOTE [ Vectorising pointwise loops ]), carry `simdlen(W)` (vector width W lanes; without it the
  compiler picks the width);
- "chunk": the outer parallel loop's iterations go to threads in chunks of 16 rows (the pool's `chunk`),
  a tiling of the outer domain that keeps neighbouring rows on one thread;
and, for each, the thread count: 1 (serial), the size threshold (`threads.threads_for`: serial
below it), and every thread (parallel at any size). The kernel timed is the variant with each thread count;
the fastest pair wins (the median of 3 runs after a warm-up run, each over several calls).

NOTE [ Autotuning on made-up data ]
Kernels index buffers only by affine expressions of their loop variables (NOTE [ Affine indices ] in
ir.py), so any data is safe to run them on: inputs are filled with values in [0.5, 1.5] (no NaN or
denormal slow paths, a valid domain for log, sqrt and division), integers with 1. The outputs are discarded.

NOTE [ The autotune cache ]
The choice is stored as `<cache_dir>/autotune/<key>.json`, the key hashing the kernel's C source, the
variant list, the CPU, and the thread count; a warm start reads it and times nothing. The chosen variant's
source replaces the kernel's in the graph's library, which ember/_native caches like every other, so a
warm max-autotune start compiles nothing either. Only the C backend is tuned: NumPy kernels have no
threads or vector width to choose.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import statistics
import time

import numpy as np

__all__ = ["tune", "VARIANTS"]

VARIANTS = ("base", "simd8", "simd16", "chunk")


def _variant(src: str, name: str, variant: str) -> str:
    """The C function `src` (named `name`) as `variant`, renamed `<name>_<variant>`."""
    out = src.replace(f"void {name}(", f"void {name}_{variant}(", 1)
    # its context struct and body functions (codegen_c._parallel_function; NOTE [ Fast trig with a rerun ])
    for part in ("_ctx", "_body", "_exact_body"):
        out = out.replace(name + part, f"{name}_{variant}{part}")
    if variant.startswith("simd"):
        # codegen_c marks every innermost pointwise loop `#pragma omp simd` (with the fast-trig flag's
        # reduction where it has one); loops it leaves unmarked (a staged trig chain's) get the pragma here
        width = variant[4:]
        out = re.sub(r"(?m)^(\s*)#pragma omp simd( reduction\(\|:big_\))?$",
                     rf"\1#pragma omp simd simdlen({width})\2", out)
        lines = out.split("\n")
        res = []
        for i, ln in enumerate(lines):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            inner = re.match(r"\s*for \(idx y\d+ ", ln) and not re.match(r"\s*for \(idx y\d+ ", nxt)
            if inner and "#pragma" not in (res[-1] if res else ""):
                flag = " reduction(|:big_)" if "big_ |=" in _loop_text(lines, i) else ""
                res.append(ln[:len(ln) - len(ln.lstrip())] + f"#pragma omp simd simdlen({width}){flag}")
            res.append(ln)
        out = "\n".join(res)
    elif variant == "chunk":
        out = out.replace("0 /* schedule(static) */", "16 /* schedule(static, 16) */")
    return out


def _loop_text(lines, i):
    """The text of the loop that starts at line `i`, to its closing brace."""
    depth, out = 0, []
    for ln in lines[i:]:
        out.append(ln)
        depth += ln.count("{") - ln.count("}")
        if depth <= 0:
            break
    return "\n".join(out)


def _key(src, threads):
    import hashlib

    from .. import _native
    return hashlib.sha256("\0".join((src, ",".join(VARIANTS), _native._cpu(), str(threads))).encode()
                          ).hexdigest()[:24]


def _cache_path(key):
    from .. import _native
    return os.path.join(_native.cache_dir(), "autotune", key + ".json")


def _fill(buf):
    from .compile_fx import _empty

    a = _empty(buf.shape, buf.strides, buf.dtype)
    base = a.base if a.base is not None else a
    if base.dtype.kind == "f":
        base[...] = np.random.default_rng(0).uniform(0.5, 1.5, base.shape).astype(base.dtype)
    else:
        base[...] = 1
    return a


def _time(f, ptrs, nt):
    def run(n):
        t = time.perf_counter()
        for _ in range(n):
            f(*ptrs, nt)
        return (time.perf_counter() - t) / n

    one = run(1)
    n = max(1, min(50, int(2e-3 / max(one, 1e-7))))
    return statistics.median(run(n) for _ in range(3))


def tune(kernels, sources, params, buffers):
    """(sources with each kernel's fastest variant, {kernel name: thread count}); `sources` are the C
    functions of `kernels` in order (NOTE [ The autotune cache ])."""
    from .. import _native, _runtime
    from .codegen_c import PRELUDE
    from .threads import attach, threads_for, work

    threads = _runtime.get_num_threads()
    chosen, todo = {}, []
    for kern, src in zip(kernels, sources):
        key = _key(src.replace(kern.name, "K"), threads)
        try:
            with open(_cache_path(key)) as f:
                chosen[kern.name] = tuple(json.load(f)["choice"])
        except (OSError, ValueError, KeyError):
            todo.append((kern, src, key))
    if todo:
        lib_src = PRELUDE + "\n\n" + "\n\n".join(_variant(src, k.name, v) for k, src, _ in todo
                                                 for v in VARIANTS) + "\n"
        lib = _native.build_source("inductor_tune", lib_src)
        if lib is not None:
            attach(lib)
        for kern, _, key in todo:
            choice = ("base", threads_for(work(kern)))
            if lib is not None:
                arrays = [_fill(buffers[p]) for p in params[kern.name]]
                ptrs = [a.ctypes.data for a in arrays]
                best = None
                for v in VARIANTS:
                    f = getattr(lib, f"{kern.name}_{v}")
                    f.argtypes = [ctypes.c_void_p] * len(ptrs) + [ctypes.c_int]
                    f.restype = None
                    for nt in sorted({1, threads_for(work(kern)), threads}):
                        t = _time(f, ptrs, nt)
                        if best is None or t < best[0]:
                            best = (t, v, nt)
                choice = best[1:]
            chosen[kern.name] = choice
            try:
                os.makedirs(os.path.dirname(_cache_path(key)), exist_ok=True)
                tmp = _cache_path(key) + f".{os.getpid()}.tmp"
                with open(tmp, "w") as f:
                    json.dump({"choice": list(choice)}, f)
                os.replace(tmp, _cache_path(key))
            except OSError:
                pass  # an unwritable cache only costs the timing again next time
    out = []
    for kern, src in zip(kernels, sources):
        v = chosen[kern.name][0]
        out.append(src if v == "base" else
                   _variant(src, kern.name, v).replace(f"void {kern.name}_{v}(", f"void {kern.name}(", 1))
    return out, {k: c[1] for k, c in chosen.items()}
