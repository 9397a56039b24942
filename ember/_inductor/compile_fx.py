"""`compile_fx(gm, example_inputs)`: a graph of ember's ops to a callable running generated kernels.

The steps: `GraphLowering` (lowering.py) turns the graph into IR nodes and fallbacks; `schedule`
(scheduler.py) fuses the nodes into kernels; each kernel is printed as C (codegen_c.py, all of a graph's
kernels in one source, built and cached by ember/_native's driver) or, with no compiler, as NumPy
(codegen_numpy.py); and a *wrapper*, generated Python like Inductor's `call(args)`, runs the steps: it
allocates each kernel's output buffers, calls the kernels through ctypes with the buffers' addresses and the
thread count, calls ember's eager ops for the fallbacks, and returns ember Tensors. `TORCH_LOGS=output_code`
prints the wrapper and the kernels' source, each kernel headed by the user's source lines it came from.

The `inductor` backend (`ember.compile`'s default) is `aot_module_simplified` with `compile_fx` as the
forward and backward compiler.

NOTE [ When AOT autograd cannot trace ]
A few ops cannot be traced by AOT autograd yet (tools/aot_opinfo.py lists them, issue 19). When the first
call of a compiled graph fails before any compiled code ran (so nothing was written), the graph runs
eagerly (its GraphModule, ember's eager ops): if that fails too, the error was the user's and propagates
with eager's message; if it succeeds, this graph keeps running eagerly (torch's `suppress_errors`
behaviour), and the `graph_breaks` log says why.

NOTE [ Layout checks at run time ]
Kernels are compiled for the strides the example inputs had (AOT autograd's cache is keyed on them too)
and for the strides the meta rules give a fallback's result. Before a kernel reads an input or a
fallback result whose strides differ (a caller passing another layout; an eager kernel choosing another),
the wrapper copies it into the expected layout: one tuple comparison per buffer when they agree.
"""

from __future__ import annotations

import ctypes
import linecache
import os
import warnings

import numpy as np

from .. import _logging
from .._tensor import _wrap
from . import autotune, buffer_plan, codegen_c, codegen_numpy, fx_passes, options, threads
from .ir import Buffer, EagerView, Fallback, Unsupported
from .lowering import GraphLowering
from .scheduler import Kernel, merge_dimensions, schedule

__all__ = ["compile_fx", "compile_fx_inner", "backend_name", "set_backend"]

_state = {"backend": None, "warned": False, "counter": 0}


def backend_name() -> str:
    """"c" or "numpy": the kernel language (EMBER_INDUCTOR_BACKEND overrides; "c" needs a compiler)."""
    if _state["backend"] is None:
        choice = os.environ.get("EMBER_INDUCTOR_BACKEND", "").strip().lower()
        if choice not in ("c", "numpy"):
            choice = "c"
        if choice == "c" and not _c_available():
            choice = "numpy"
            if not _state["warned"]:
                _state["warned"] = True
                warnings.warn("ember.compile: no C compiler for generated kernels; using the NumPy code "
                              "generator, which is slower", RuntimeWarning, stacklevel=3)
        _state["backend"] = choice
    return _state["backend"]


def set_backend(name: str | None) -> None:
    """Choose the kernel language for graphs compiled from now on ("c", "numpy", or None: the default)."""
    if name not in (None, "c", "numpy"):
        raise ValueError(f"unknown inductor backend {name!r}")
    _state["backend"] = name


def _c_available() -> bool:
    from .. import _native
    if not _native.enabled():
        return False
    return _native._compiler()[0] is not None


# ---- source lines of the nodes a kernel came from ------------------------------------------------------------

def _where(nodes) -> list:
    """`name (target)` of each node, then each distinct user source line they came from (torch's `File: path:line
    in fn, code: source`, from the nodes' `stack_trace`: NOTE [ Stack traces through AOT autograd ])."""
    from ..fx.traceback import format_stack_trace

    names, files = [], []
    for n in nodes:
        text = f"{n.name} ({n.target!r})" if hasattr(n, "target") else str(n)
        if text not in names:
            names.append(text)
        src = format_stack_trace(n.meta.get("stack_trace")) if hasattr(n, "meta") else None
        if src and src not in files:
            files.append(src)
    return names + files


def _short_where(nodes) -> str:
    """One line for the wrapper: the first three nodes and every source line."""
    where = _where(nodes)
    names = [w for w in where if not w.startswith("File: ")]
    return "; ".join(names[:3] + where[len(names):]).replace("\n", " ")


def _kernel_comment(kernel, c_style: bool) -> str:
    origins = []
    for m in kernel.members:
        origins.extend(o for o in m.origins if o not in origins)
    where = _where(origins)
    if c_style:
        return "/* " + kernel.name + ": " + ("\n * ".join(where) if where else "") + " */"
    return kernel.name + ": " + "\n".join(where)


# ---- the compiled graph ---------------------------------------------------------------------------------------

class CompiledGraph:
    """What `compile_fx` returns: call it with the graph's inputs (ember Tensors) for a tuple of outputs."""

    def __init__(self, call, wrapper_source, kernel_source, backend, n_kernels, n_fallbacks):
        self.call = call
        self.wrapper_source = wrapper_source
        self.kernel_source = kernel_source
        self.backend = backend
        self.n_kernels = n_kernels
        self.n_fallbacks = n_fallbacks
        self._pending = None  # the C library still being built (NOTE [ Building in the background ])

    def __call__(self, *args):
        if self._pending is not None:
            self._finish()
        return self.call(args)

    def _finish(self):
        (thread, box), kernels, glb, gm, example_inputs = self._pending
        thread.join()
        self._pending = None
        lib = box.get("lib")
        if lib is None:
            g = compile_fx(gm, example_inputs, backend="numpy")
            if isinstance(g, CompiledGraph):
                self.__dict__.update(g.__dict__)
            else:
                self.call = lambda args: g(*args)
            return
        threads.attach(lib)  # NOTE [ Parallel loops of the generated kernels ] (codegen_c.py)
        for name, n in kernels:
            f = getattr(lib, name)
            f.argtypes = [ctypes.c_void_p] * n + [ctypes.c_int]
            f.restype = None
            glb[name] = f


def _np_dtype(dt: str):
    return np.dtype(dt)


def compile_fx(gm, example_inputs=None, backend: str | None = None):
    """Compile GraphModule `gm` (ember's ops, as AOT autograd produces) into a `CompiledGraph`; a graph the
    lowering cannot take at all (a non-tensor input) runs as its GraphModule."""
    backend = backend or backend_name()
    gm = fx_passes.for_options(gm)  # (engineer H: the FX passes the options ask for)
    try:
        lo = GraphLowering(gm, example_inputs, backend).run()
    except Unsupported:
        return gm
    steps = schedule(lo.steps)
    _state["counter"] += 1
    prefix = f"g{_state['counter']}_"
    kernels = [s for s in steps if isinstance(s, Kernel)]
    for kern in kernels:
        kern.name = prefix + kern.name
        if backend == "c":
            merge_dimensions(kern)  # NOTE [ Merged loop dimensions ] (scheduler.py)
    if backend == "c":  # the zero-divisor flag a kernel dividing integers takes (NOTE [ Integer division ])
        lo.buffers[codegen_c.FLAG] = Buffer(codegen_c.FLAG, (1,), (1,), "int32")
    sources, params = [], {}
    for kern in kernels:
        gen = codegen_c if backend == "c" else codegen_numpy
        src, ps = gen.generate(kern, lo.buffers, _kernel_comment(kern, backend == "c"))
        sources.append(src)
        params[kern.name] = ps
    funcs = {}
    if backend == "c" and kernels and options.get("max_autotune"):  # (engineer H: max-autotune)
        sources, lo.forced_threads = autotune.tune(kernels, sources, params, lo.buffers)
    pending = None
    if backend == "c" and kernels:
        source = codegen_c.PRELUDE + "\n\n" + "\n\n".join(sources) + "\n"
        pending = _start_build(source)
    else:
        source = "\n\n".join(sources) + "\n"
        if kernels:
            ns = dict(codegen_numpy.RUNTIME)
            fname = f"<inductor-kernels-{_state['counter']}>"
            linecache.cache[fname] = (len(source), None, source.splitlines(True), fname)
            exec(compile(source, fname, "exec"), ns)
            for kern in kernels:
                funcs[kern.name] = ns[kern.name]
    wrapper, glb = _wrapper(lo, steps, params, funcs, backend)
    fname = f"<inductor-wrapper-{_state['counter']}>"
    linecache.cache[fname] = (len(wrapper), None, wrapper.splitlines(True), fname)
    exec(compile(wrapper, fname, "exec"), glb)
    _logging.trace("output_code", lambda: f"Output code ({backend} kernels):\n{wrapper}\n\n{source}")
    graph = CompiledGraph(glb["call"], wrapper, source, backend, len(kernels),
                          sum(isinstance(s, Fallback) for s in steps))
    if pending is not None:
        graph._pending = (pending, [(k.name, len(params[k.name])) for k in kernels], glb, gm, example_inputs)
    options.write_trace(gm, graph)  # (engineer H: option trace.enabled)
    return graph


# NOTE [ Building in the background ]
# Compiling a graph's C takes most of a cold compile (gcc at -O3, ~0.2-1 s a graph). AOT autograd asks for
# the forward and the backward graph one after the other, and capture goes on to the next graph, so the
# build runs in a thread (the compiler is another process) and a graph waits for its library only at its
# first call: the forward and backward builds overlap each other and the Python work between them.
# A failed build (no compiler after all, a compiler error) makes the graph's first call compile it again
# with NumPy kernels.
def _start_build(source):
    import threading

    from .. import _native

    box = {}

    def build():
        box["lib"] = _native.build_source("inductor", source)

    thread = threading.Thread(target=build, name="ember-inductor-build", daemon=True)
    thread.start()
    return thread, box


def _bytes_strides(buf):
    it = np.dtype(buf.dtype).itemsize
    return tuple(st * it for st in buf.strides)


def _layout_key(buf):
    """The byte strides that matter (size-1 dimensions' strides do not), for the run-time check."""
    it = np.dtype(buf.dtype).itemsize
    return tuple(st * it if s != 1 else None for s, st in zip(buf.shape, buf.strides))


def _empty(shape, strides, dtype):
    d = np.dtype(dtype)
    if not all(shape):
        return np.empty(shape, d)
    n = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    return np.ndarray(shape, d, buffer=np.empty(n, d), strides=tuple(st * d.itemsize for st in strides))


def _relayout(arr, key, shape, strides, dtype):
    """`arr` itself when its layout is `key`'s, else a copy in that layout (NOTE [ Layout checks at run time ])."""
    if tuple(st if s != 1 else None for s, st in zip(arr.shape, arr.strides)) == key:
        return arr
    out = _empty(shape, strides, dtype)
    np.copyto(out, arr)
    return out


# NOTE [ Fallback results die at their last use ]
# A fallback's result is a new array from its eager kernel (kernels' buffers come from the buffer plan). The
# wrapper drops its names after the last step that reads it, as eager code drops a temporary: kept to the
# end, the 10 sins of a pointwise chain held 40 MB live, so every call took fresh pages from the system
# (malloc gives large freed blocks back) and the compiled chain ran 2-3x slower than the same ops eager.
# Graph outputs and the sources of eager views (which share their memory) are not dropped.
def _fallback_last_uses(lo, steps, params):
    """{step index: fallback result names whose last reader is that step}."""
    made, last, keep = set(), {}, set()
    for kind, v in lo.outputs:
        if kind == "buf":
            keep.add(v)
        elif kind == "tuple":
            keep.update(n for n in v if n is not None)

    def reads(a):
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "buf" and not isinstance(a, list):
            yield a[1]
        elif isinstance(a, (list, tuple)) and not (isinstance(a, tuple) and len(a) == 2 and a[0] == "const"):
            for x in a:
                yield from reads(x)
    for i, s in enumerate(steps):
        if isinstance(s, Kernel):
            used = set(params[s.name])
        elif isinstance(s, Fallback):
            used = set(reads(list(s.args))) | set(reads(list(s.kwargs.values())))
        else:
            keep.add(s.source)
            used = {s.source}
        for n in used & made:
            last[n] = i
        if isinstance(s, Fallback):
            made.update(n for n in s.outputs if n is not None)
    out = {}
    for n, i in last.items():
        if n not in keep:
            out.setdefault(i, []).append(n)
    return out


# NOTE [ Calling a fallback's op ]
# A graph node's target is an `OpOverload` (`aten.view.default`), whose call maps its keyword params to
# the kernel's parameter order and then dispatches (3.3 us for a view; the dispatch itself is 1.3 us). A
# transformer step calls ~200 fallbacks (the matmuls, views, eager kernels), so the wrapper does that
# mapping once, when it is generated, and calls `dispatch(op, inputs, params)` itself, exactly what the
# overload's call would do (`_dispatch(aten_view_default, (t_buf3, ), (c7, ))`). Other targets (in-place
# and higher-order overloads, Python callables) are called as they are.
def _op_call(glb, key, args, kwargs):
    """The source of the call of fallback target `glb[key]` with argument sources `args`, `kwargs`."""
    from .. import ops as _ops
    from .._dispatch import dispatch

    target = glb[key]
    if type(target) is _ops.OpOverload and target._op.kind != _ops.HIGHER_ORDER:
        names = target._param_names(len(args), len(kwargs)) if kwargs else ()
        order = [kwargs[n] for n in names] if set(names) == set(kwargs) else list(kwargs.values())
        del glb[key]
        name = "aten_" + "".join(c if c.isalnum() else "_" for c in target.__name__)  # aten_view_default
        glb["_dispatch"], glb[name] = dispatch, target._op
        return f"_dispatch({name}, ({''.join(a + ', ' for a in args)}), ({''.join(p + ', ' for p in order)}))"
    kw = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    return f"{key}({', '.join(args)}{', ' if args and kw else ''}{kw})"


def _wrapper(lo, steps, params, funcs, backend):
    """Generate the Python `call(args)` running the steps (the Inductor wrapper)."""
    glb = {"np": np, "_wrap": _wrap, "_empty": _empty, "_relayout": _relayout,
           "_threads": threads.threads_for}
    bp = buffer_plan.plan(lo, steps, params, static=options.get("triton.cudagraphs"),
                          reuse=options.get("allow_buffer_reuse"))  # (engineer H: buffer reuse, static plan)
    glb.update(bp.globals)
    lines = ["def call(args):"]
    emit = lines.append
    if lo.inputs:
        emit(f"    {', '.join(f'a{i}' for i in range(len(lo.inputs)))}{',' if len(lo.inputs) == 1 else ''} = args")
    ins = []
    for i, item in enumerate(lo.inputs):
        if isinstance(item, list):  # a tuple input: its tensors
            for j, n in enumerate(item):
                if n is not None:
                    emit(f"    t_{n} = a{i}[{j}]")
                    ins.append(n)
        else:
            emit(f"    t_{item} = a{i}")
            ins.append(item)
    kernel_reads = set()
    for s in steps:
        if isinstance(s, Kernel):
            kernel_reads.update(params[s.name])
    for n in ins:
        b = lo.buffers[n]
        emit(f"    {n} = t_{n}._data")
        if n in kernel_reads:
            emit(f"    {n} = _relayout({n}, {_layout_key(b)!r}, {b.shape!r}, {b.strides!r}, {b.dtype!r})")
    tensors = {n: f"t_{n}" for n in ins}  # buffers that have an ember Tensor already

    def tensor(name):
        if name not in tensors:
            emit(f"    t_{name} = _wrap({name})")
            tensors[name] = f"t_{name}"
        return tensors[name]

    def arg_src(a):
        if isinstance(a, tuple) and len(a) == 2 and a[0] in ("buf", "const") and not isinstance(a, list):
            kind, v = a
            if kind == "buf":
                return tensor(v)
            key = f"c{len(glb)}"
            glb[key] = v
            return key
        if isinstance(a, list):
            return "[" + ", ".join(arg_src(x) for x in a) + "]"
        return "(" + "".join(arg_src(x) + ", " for x in a) + ")"

    drop = _fallback_last_uses(lo, steps, params)
    for step_no, s in enumerate(steps):
        for nm in drop.get(step_no - 1, ()):  # (after the previous step, the last to read them)
            emit(f"    del {nm}, t_{nm}")
            tensors.pop(nm, None)
        if isinstance(s, Kernel):
            emit(f"    # {s.name}: " + _short_where([o for m in s.members for o in m.origins]))
            for m in s.members:
                b = m.buffer
                emit("    " + bp.alloc(b))
            glb[s.name] = funcs.get(s.name)  # C functions are set once their library is built
            ps = params[s.name]
            if backend == "c":
                flag = codegen_c.FLAG in ps
                if flag:  # (NOTE [ Integer division ])
                    emit(f"    {codegen_c.FLAG} = np.zeros(1, np.int32)")
                ptrs = ", ".join(bp.ptr(p) for p in ps)
                emit(f"    {s.name}({ptrs}, {bp.threads(threads.work(s), s.name)})")
                if flag:
                    emit(f"    if {codegen_c.FLAG}[0]: raise RuntimeError('ZeroDivisionError')")
            else:
                emit(f"    {s.name}({', '.join(ps)})")
        elif isinstance(s, Fallback):
            key = f"op{len(glb)}"
            glb[key] = s.node.target
            call = _op_call(glb, key, [arg_src(a) for a in s.args], {k: arg_src(v) for k, v in s.kwargs.items()})
            emit(f"    # {s.node.name}: " + _short_where([s.node]))
            names = s.outputs
            if len(names) == 1 and not isinstance(s.node.meta.get("val"), (tuple, list)):
                emit(f"    t_{names[0]} = {call}")
            else:
                emit(f"    r = {call}")
                for i, nm in enumerate(names):
                    if nm is not None:
                        emit(f"    t_{nm} = r[{i}]")
            for nm, b in zip(names, s.expected):
                if nm is None:
                    continue
                tensors[nm] = f"t_{nm}"
                emit(f"    {nm} = t_{nm}._data")
                emit(f"    {nm} = _relayout({nm}, {_layout_key(b)!r}, {b.shape!r}, {b.strides!r}, {b.dtype!r})")
        elif isinstance(s, EagerView):
            key = f"op{len(glb)}"
            glb[key] = s.node.target
            kwargs = {k: arg_src(("const", v)) for k, v in s.node.kwargs.items()}
            emit(f"    t_{s.output} = {_op_call(glb, key, [tensor(s.source)], kwargs)}")
            emit(f"    {s.output} = t_{s.output}._data")
            tensors[s.output] = f"t_{s.output}"
    outs = []
    for kind, v in lo.outputs:
        if kind == "buf":
            outs.append(tensor(v))
        elif kind == "tuple":
            outs.append("(" + "".join(("None" if n is None else tensor(n)) + ", " for n in v) + ")")
        else:
            key = f"c{len(glb)}"
            glb[key] = v
            outs.append(key)
    emit(f"    return ({''.join(o + ', ' for o in outs)})")
    return "\n".join(lines) + "\n", glb


def compile_fx_inner(gm, example_inputs=None, backend: str | None = None):
    """The forward/backward compiler handed to AOT autograd."""
    return compile_fx(gm, example_inputs, backend)


def inductor(gm, example_inputs, backend: str | None = None, **kwargs):
    """The `inductor` backend: AOT autograd with `compile_fx` compiling the forward and backward graphs
    (`backend`: "c" or "numpy" kernels, default `backend_name()`)."""
    from .._functorch.aot_autograd import aot_module_simplified

    state = {"eager": False, "ran": False}

    def inner(g, ex):
        c = compile_fx(g, ex, backend)

        def call(*args):
            state["ran"] = True
            return c(*args)
        call.compiled = c
        return call
    compiled = aot_module_simplified(gm, example_inputs, fw_compiler=inner, bw_compiler=inner)

    def run(*args):
        # NOTE [ When AOT autograd cannot trace ]
        if state["eager"]:
            return gm(*args)
        try:
            return compiled(*args)
        except Exception as e:  # noqa: BLE001 - decided below by running the graph eagerly
            if state["ran"]:  # compiled code ran (and may have written its inputs): not a tracing failure
                raise
            out = gm(*args)  # a genuine error of the user's code raises here, with eager's message
            state["eager"] = True
            why = f"{type(e).__name__}: {e}"
            _logging.trace("graph_breaks", lambda: f"inductor: running the graph eagerly: AOT autograd or "
                                                   f"code generation failed: {why}")
            return out
    run.zero_grad = getattr(compiled, "zero_grad", None)
    run.named_parameters = getattr(compiled, "named_parameters", None)
    return run
