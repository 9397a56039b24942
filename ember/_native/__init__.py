"""The native kernel runtime: C kernels compiled at first use, loaded with ctypes, cached on disk.

Each kernel group is one readable C file beside this module (`softmax.c`, `norm.c`, ...; `common.h` holds
what they share). `function(group, name)` returns a group's C function as a ctypes function, compiling the
group the first time any of its functions is asked for (nothing compiles at `import ember`), or None when
native kernels are off or unavailable; the ops' kernels then run their NumPy code, which stays the
reference and the fallback. How an op chooses is NOTE [ Choosing the native kernel ].

Environment:
    EMBER_NATIVE=0       NumPy kernels only (no compiler is looked for, no warning);
    EMBER_NATIVE=force   native kernels at every size (tests run the OpInfo table through them this way);
    EMBER_CACHE_DIR      where compiled libraries live (default ~/.cache/ember);
    CC                   the C compiler (default `cc`).

NOTE [ Native build cache ]
A group's library is named by a hash of everything that decides its machine code: the C sources (the
group's file and common.h), the flags, the compiler's `--version` line and the CPU (model and feature
flags, since -march=native tunes to it). A process that finds the file loads it; one that does not
compiles into a temporary file in the cache folder and `os.replace`s it into place, so processes building
the same library at once each write their own file and the last rename wins with an identical library;
a reader never sees a half-written one. Compiling a group takes ~0.1-0.5 s, once per machine.

NOTE [ Exact flags ]
-O3 -march=native vectorises the loops, but nothing may change a result: no -ffast-math (it reorders
sums and drops NaN handling), and -ffp-contract=off, because GCC otherwise fuses `a * b + c` into one
rounding (FMA) where the NumPy fallback rounds twice, and the two paths would then differ in the last
bit. -fno-math-errno only stops libm calls from setting errno (it lets sqrt compile to one instruction);
-fno-trapping-math lets the vectoriser compute both sides of a `?:` and blend (without it no loop that
calls em_exp vectorises, and softmax ran 10x slower): no value changes, only floating-point exception
flags, which nothing reads. -fno-signed-zeros, -ffinite-math-only and -fassociative-math are NOT used;
sums are vectorised with `omp simd reduction` (a fixed order for a given build, in double for float32
data), never by letting the compiler reassociate at will.

NOTE [ No compiler ]
Without a working compiler (none on PATH, `CC` naming a missing program, a failed build) ember warns once
per process, `ember: native kernels unavailable (...); using NumPy kernels`, and every op runs its NumPy
kernel: slower, same results. `EMBER_NATIVE=0` chooses that path silently.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import warnings

# (hashlib, subprocess, tempfile, shutil and platform are imported by the build, on first use: together they
# cost ~20 ms, which `import ember` must not pay)

__all__ = ["function", "available", "enabled", "MIN_SIZE", "threads_for", "cache_dir", "build_source",
           "keep_freed_memory"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODE = os.environ.get("EMBER_NATIVE", "1").strip().lower()
_OFF = _MODE in ("0", "off", "false", "no")

# NOTE [ Choosing the native kernel ]
# A ctypes call costs about 1-3 us (argument conversion and the pointers' lookups), and a NumPy ufunc on a
# small array about 0.3 us, so an op's kernel takes its native path only from MIN_SIZE elements on (or
# always under EMBER_NATIVE=force, for tests), and only for the layouts and dtypes the C code handles
# (C-contiguous float32, with float16/bfloat16 widened to float32 first, as their NumPy code does): the
# check is one integer comparison before anything else, so small tensors pay nothing measurable. Threads
# are spent only from PARALLEL_SIZE elements on (`threads_for`): below that, waking a second thread costs
# more than it saves (NOTE [ What a parallel kernel costs ]).
#
# NOTE [ What a parallel kernel costs ]
# A kernel's OpenMP loop at 2 threads wakes the team's sleeping worker (passive:
# NOTE [ Passive OpenMP threads ]) and, when the caller finishes its half first, sleeps the caller until the
# worker wakes it. On these VMs (Firecracker with nested virtualisation, `haltpoll.guest_halt_poll_ns=0`: an
# idle vCPU halts at once) each such wake is an exit to the host. On the idle machine LeNet ran 0.37 ms slower
# at 2 threads than at 1 over its 13 parallel loops (5 convolutions, 8 kernels of 65K-221K elements). Alone,
# with 30 us of Python between calls, a 65536-float relu took 9 us on one thread and 34 on two, a 221K-float
# relu 23 and 43, a 221K-element max-pool 54 and 63: 20-25 us a loop even where the other vCPU was busy.
# Measured in a process given the CPU first (its autogroup at nice -20, the machine otherwise loaded), medians
# of interleaved rounds, the 2-thread train steps against the threshold: LeNet 2.53 / 2.50 / 2.46 / 2.53 ms at
# 64K / 128K / 256K / 512K (1 thread: 2.37), and with its small convolutions also on one thread (when they
# ran on this OpenMP team: NOTE [ Convolution threads by size ] in conv.py) 2.95 / 2.32 ms at 64K / 256K
# (2.39); the MNIST example's network, whose relu and max-pool run on 401K and 803K elements, 9.45 / 8.73 /
# 10.10 ms at 64K / 256K / 512K (1 thread: 11.39); the MLP 1.60 / 1.56 / 1.48 at 64K / 256K / 512K (2.08).
# So PARALLEL_SIZE is 256K: a 2-thread loop on fewer elements (a 65536-float relu, 9 us on one thread) cannot
# gain what the wake-ups cost.
# (torch splits pointwise loops from 32768 elements, but its OpenMP workers spin between loops, which ember's
# must not: NOTE [ Spinning while it pays ] in threadpool.c.)
MIN_SIZE = 0 if _MODE == "force" else 16384
PARALLEL_SIZE = 0 if _MODE == "force" else 1 << 18
SHARED_PARALLEL_SIZE = 1 << 22  # the same beside another library's spinning OpenMP (NOTE [ Passive OpenMP threads ])

_lock = threading.RLock()  # (re-entered where a group's loading builds the pool: `_load_group`)
_libs: dict = {}  # group -> CDLL, or None when it could not be built
_funcs: dict = {}  # (group, name) -> ctypes function
_state = {"warned": False, "compiler": None, "threads": None, "built": [],  # built: groups compiled here
          "shared_gomp": None,  # NOTE [ Passive OpenMP threads ]
          "kept_freed_memory": False}  # NOTE [ Keeping freed memory ]


def enabled() -> bool:
    """Whether ops may take native kernels (False under EMBER_NATIVE=0)."""
    return not _OFF


def cache_dir() -> str:
    return os.environ.get("EMBER_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "ember")


def _warn_once(why: str) -> None:
    if not _state["warned"]:
        _state["warned"] = True
        warnings.warn(f"ember: native kernels unavailable ({why}); using NumPy kernels, which are slower",
                      RuntimeWarning, stacklevel=4)


def _compiler():
    """(path, version line) of the C compiler, or (None, why)."""
    if _state["compiler"] is None:
        import shutil
        import subprocess
        cc = os.environ.get("CC") or "cc"
        path = shutil.which(cc)
        if path is None:
            _state["compiler"] = (None, f"no C compiler: {cc!r} not found")
        else:
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
                _state["compiler"] = (path, (out.stdout or out.stderr).splitlines()[0] if out.returncode == 0
                                      else None)
            except (OSError, subprocess.SubprocessError, IndexError) as e:
                _state["compiler"] = (None, f"C compiler {cc!r} does not run: {e}")
            if _state["compiler"][1] is None:
                _state["compiler"] = (None, f"C compiler {cc!r} does not run")
    return _state["compiler"]


def _cpu() -> str:
    """The CPU's model and feature flags (what -march=native compiles for)."""
    import platform
    try:
        with open("/proc/cpuinfo") as f:
            lines = [ln for ln in f.read().splitlines() if ln.startswith(("model name", "flags", "Features"))]
        return "\n".join(sorted(set(lines)))
    except OSError:
        return platform.processor() + platform.machine()


_BASE_FLAGS = ("-O3", "-march=native", "-fPIC", "-shared", "-ffp-contract=off", "-fno-math-errno",
               "-fno-trapping-math", "-fopenmp-simd", "-std=c99")  # see NOTE [ Exact flags ]


def _build(group: str):
    """The loaded library of `group`, compiled into the cache if needed (NOTE [ Native build cache ])."""
    with open(os.path.join(_HERE, group + ".c")) as f:
        source = f.read()
    return build_source(group, source)


def build_source(name: str, source: str):
    """Compile C `source` (which may `#include "common.h"`) into a cached library `<name>-<hash>.so` and
    load it; None (after the one warning of NOTE [ No compiler ]) when it cannot be built. The kernel groups
    and the compiler's generated kernels (ember/_inductor) share this driver, its flags and its cache."""
    import hashlib
    import subprocess
    import tempfile
    cc, version = _compiler()
    if cc is None:
        _warn_once(version)
        return None
    with open(os.path.join(_HERE, "common.h")) as f:
        header = f.read()
    folder = cache_dir()
    errors = []
    for omp in (("-fopenmp",), ()):  # a compiler without OpenMP still gives single-threaded kernels
        flags = _BASE_FLAGS + omp + ("-I" + _HERE,)
        key = hashlib.sha256("\0".join((source, header, " ".join(_BASE_FLAGS + omp), version, _cpu(),
                                        sys.platform)).encode()).hexdigest()[:24]
        path = os.path.join(folder, f"{name}-{key}.so")
        if not os.path.exists(path):
            try:
                os.makedirs(folder, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=".so", dir=folder)
                os.close(fd)
            except OSError as e:
                _warn_once(f"cannot write the cache folder {folder}: {e}")
                return None
            src_path = tmp[:-3] + ".c"  # the source beside it, as unique as the temporary library
            try:
                with open(src_path, "w") as f:
                    f.write(source)
                out = subprocess.run([cc, *flags, "-o", tmp, src_path, "-lm"],
                                     capture_output=True, text=True, timeout=300)
                if out.returncode != 0:
                    errors.append(out.stderr.strip().splitlines()[-1:] or ["failed"])
                    continue
                os.replace(tmp, path)
                _state["built"].append(name)
            finally:
                for leftover in (tmp, src_path):
                    if os.path.exists(leftover):
                        os.unlink(leftover)
        try:
            return _load(path)
        except OSError as e:
            errors.append([str(e)])
    _warn_once(f"building {name}.c failed: {errors[0][0] if errors else '?'}")
    return None


# NOTE [ Passive OpenMP threads ]
# The kernels' OpenMP team and NumPy's OpenBLAS pool are two thread pools in one process. libgomp's idle
# workers spin for a while after each parallel loop (OMP_WAIT_POLICY unset), and on a machine with as many
# cores as threads they then take the core the next BLAS call needs: an MLP train step at 2 threads took
# 8-16 ms instead of 2.1 (1 thread: 3.3 ms), slower than at one thread. So the kernels' libgomp starts with
# a passive wait policy (idle workers sleep): libgomp reads OMP_WAIT_POLICY once, when it is loaded, which is
# when the first kernel library is; ember sets it for that moment only when the user has not set it, and
# removes it again, so the user's environment and child processes are unchanged (torch's own OpenMP runtime
# is a separate library, loaded and configured at `import torch`). OpenBLAS's idle threads spin too (about
# 0.1 s after a threaded call): `import ember` sets OPENBLAS_THREAD_TIMEOUT=4, its shortest, when the user has
# not set it and NumPy is not loaded yet (ember/__init__.py).
# Except where another library loaded libgomp first: torch's wheel ships its own `libgomp.so.1`, and a process
# that imported torch before ember's first kernel binds the kernels to it, configured at `import torch` with
# the spinning default. Then a kernel uses several threads only from SHARED_PARALLEL_SIZE (4M) elements on
# (`threads_for`; OpenBLAS keeps its threads), unless the environment asks for passive waiting: with the
# usual threshold the two spinning pools made model steps 1.2-3.5x slower than torch's at 2 threads (and
# slower than ember's at 1), while a kernel over millions of elements gains more from its second thread
# than the next BLAS call loses to a spinning worker. The threshold is measured, on the benchmarks (which
# hold both libraries in one process, so this is how they see ember): at 1M, the 3.2M-element softmax of
# an LSTM's logits went parallel and its train step lost 20-35%; at 4M every model step was at or below
# torch's and the 4M-float memory-bound block 1.4x, against 2.3x with no parallel kernel at all.
def _load(path: str):
    if _state["shared_gomp"] is None:
        _state["shared_gomp"] = _spinning_gomp_loaded()
    set_here = "OMP_WAIT_POLICY" not in os.environ
    if set_here:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        return ctypes.CDLL(path)
    finally:
        if set_here:
            os.environ.pop("OMP_WAIT_POLICY", None)


def _spinning_gomp_loaded() -> bool:
    """Whether a libgomp is already loaded in this process with a wait policy that spins."""
    if os.environ.get("OMP_WAIT_POLICY", "").strip().lower() == "passive":
        return False
    try:
        ctypes.CDLL("libgomp.so.1", mode=getattr(os, "RTLD_NOLOAD", 4) | ctypes.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def _load_group(group: str):
    """Build and load `group` (under `_lock`); a group whose loops run on ember's pool (it exports
    `em_set_pool`: NOTE [ Kernels on ember's pool ] in common.h) is given the pool, built first."""
    lib = _build(group)
    setter = getattr(lib, "em_set_pool", None) if lib is not None and group != "threadpool" else None
    if setter is not None:
        pool = function("threadpool", "em_parallel_for_address", [], ctypes.c_void_p)
        address = pool() if pool is not None else None
        if address:
            setter.argtypes, setter.restype = [ctypes.c_void_p], None
            setter(address)
    return lib


def function(group: str, name: str, argtypes=None, restype=None):
    """The C function `name` of kernel group `group`, or None (native off, or no compiler: NOTE [ No compiler ])."""
    if _OFF:
        return None
    fn = _funcs.get((group, name))
    if fn is not None:
        return fn
    with _lock:
        if group not in _libs:
            _libs[group] = _load_group(group)
        lib = _libs[group]
        if lib is None:
            return None
        fn = getattr(lib, name)
        fn.restype = restype
        if argtypes is not None:
            fn.argtypes = argtypes
        _funcs[(group, name)] = fn
    return fn


def available(group: str) -> bool:
    """Whether `group`'s kernels are (or can be) loaded; compiles it on first call."""
    if _OFF:
        return False
    with _lock:
        if group not in _libs:
            _libs[group] = _load_group(group)
    return _libs[group] is not None


# ---- freed memory ------------------------------------------------------------------------------------------

# NOTE [ Keeping freed memory ]
# A training step allocates and frees the same large NumPy arrays every step (activations, their gradients,
# im2col buffers). glibc's malloc gives an array above its mmap threshold (dynamic, from 128 KiB) pages of its
# own and returns them to the kernel when it is freed, and it trims the heap's free top beyond 128 KiB; the
# next step then touches fresh pages, each a page fault (about 8 us per 4 KiB page on this project's VMs,
# docs/benchmarking.md). That was about a fifth of the MNIST example's train step: 24.8 ms of thread CPU time
# against 20.1 ms with freed memory kept (torch's own step: 18.4). So `import ember` raises both thresholds, as a
# caching allocator would: arrays up to 32 MiB (glibc's largest mmap threshold) come from the heap, and up to
# 1 GiB of freed heap stays in the process for the next allocation. A user's own malloc settings (the
# MALLOC_*_ environment variables, GLIBC_TUNABLES) and non-glibc C libraries are left alone;
# EMBER_KEEP_FREED_MEMORY=0 turns it off.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory() -> bool:
    """Raise glibc malloc's mmap and trim thresholds (NOTE [ Keeping freed memory ]); whether it did."""
    env = os.environ
    if env.get("EMBER_KEEP_FREED_MEMORY", "1").strip().lower() in ("0", "off", "false", "no") \
            or "GLIBC_TUNABLES" in env or any(k.startswith("MALLOC_") for k in env) \
            or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        if not hasattr(libc, "gnu_get_libc_version"):  # glibc only: musl and others have no such thresholds
            return False
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _state["kept_freed_memory"] = bool(mallopt(_M_MMAP_THRESHOLD, 32 << 20)) & bool(mallopt(_M_TRIM_THRESHOLD, 1 << 30))
    return _state["kept_freed_memory"]


# ---- threads --------------------------------------------------------------------------------------------

def threads_for(n: int) -> int:
    """How many threads a kernel over `n` elements uses (NOTE [ Choosing the native kernel ])."""
    if n < PARALLEL_SIZE or (_state["shared_gomp"] and n < SHARED_PARALLEL_SIZE):
        return 1
    return pool_threads_for(n)


def pool_threads_for(n: int) -> int:
    """The same for a kernel whose loops run on ember's pool (NOTE [ Kernels on ember's pool ] in common.h):
    another library's spinning OpenMP does not touch them, so PARALLEL_SIZE alone decides."""
    if n < PARALLEL_SIZE:
        return 1
    t = _state["threads"]
    if t is None:
        from .. import _runtime
        t = _state["threads"] = _runtime.get_num_threads()
    return t


def set_threads(n: int) -> None:
    """Called by `ember.set_num_threads`: the kernels' thread count from now on."""
    _state["threads"] = n
