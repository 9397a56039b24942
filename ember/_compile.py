"""`ember.compile`: torch.compile's signature over capture (ember._dynamo) and a backend.

    compiled = ember.compile(model)                      # a Module or a function
    @ember.compile                                       # a decorator, with or without arguments
    @ember.compile(fullgraph=True, dynamic=True, backend="eager")

`backend` is a name from `ember._dynamo.list_backends()` ("inductor", and the debug backends "eager",
"aot_eager"), or a callable `(gm, example_inputs) -> callable`. The default, "inductor" as in torch, is
ember's code generator (ember/_inductor: fused C kernels, or NumPy ones with no compiler). `mode` and
`options` are validated as torch validates them and tune the inductor backend (ember/_inductor/options.py:
"reduce-overhead" runs a static plan, "max-autotune" times kernel variants).
"""

from __future__ import annotations

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
DEFAULT_BACKEND = "inductor"


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    name=None,
    disable=False,
    recompile_limit=None,
    isolate_recompiles=False,
    shapes_spec=None,
):
    """Optimize `model` (a function or nn.Module) by capturing it into graphs run by `backend`.

    Args:
        model: the function or module; omitted, `compile(...)` returns a decorator.
        fullgraph (bool): a graph break is an error (naming the reason and the user's line).
        dynamic (bool or None): True: sizes are symbolic from the start; False: always specialize;
            None: specialize first, make a size symbolic once it changes (automatic dynamic).
        backend (str or callable): see `ember._dynamo.list_backends()`; "inductor" means the default.
        mode, options: torch's code-generation settings (checked, not used by these backends).
        name (str): an identifier for the compiled region (kept as `compiled._compile_name`).
        disable (bool): return `model` unchanged.
        recompile_limit (int): this call's own limit (default `torch._dynamo.config.recompile_limit`); past
            it the function runs eagerly, or with fullgraph=True raises `FailOnRecompileLimitHit`.
        isolate_recompiles (bool): accepted for torch's signature: every `ember.compile` call already
            keeps its own entries.
        shapes_spec: accepted for torch's signature; sizes follow `dynamic` and `mark_dynamic`.

    Example::

        >>> @ember.compile(backend="eager")
        ... def f(x):
        ...     return x.sin() + 1
    """
    from . import _dynamo

    if model is None:

        def decorator(m):
            return compile(
                m,
                fullgraph=fullgraph,
                dynamic=dynamic,
                backend=backend,
                mode=mode,
                options=options,
                name=name,
                disable=disable,
                recompile_limit=recompile_limit,
                isolate_recompiles=isolate_recompiles,
                shapes_spec=shapes_spec,
            )

        return decorator
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if backend == "inductor":
        backend = DEFAULT_BACKEND
        if mode not in (None, "default") or options:  # (engineer H: modes and options, _inductor/options.py)
            backend = _InductorWithOptions(mode, options, dynamic)
    out = _dynamo._compile(
        model,
        backend=backend,
        fullgraph=fullgraph,
        dynamic=dynamic,
        disable=disable,
        recompile_limit=recompile_limit,
    )
    if out is not model and name is not None:
        out.__dict__["_compile_name"] = name
    return out


class _InductorWithOptions:
    """The inductor backend under a mode's or options' config patches (torch's
    `_TorchCompileInductorWrapper`): validated when `compile` is called, made current while graphs compile."""

    __name__ = "inductor"

    def __init__(self, mode, options, dynamic):
        from ._inductor.options import validate

        self.config = validate(mode, options, dynamic)

    def __call__(self, gm, example_inputs, **kwargs):
        from ._dynamo.backends import lookup_backend
        from ._inductor.options import call_with, patched

        with patched(self.config):
            run = lookup_backend("inductor")(gm, example_inputs, **kwargs)
        config = self.config

        def call(*args):  # AOT autograd compiles on the first call (and on a new shape): under the options
            return call_with(config, run, args)
        call.__dict__.update(run.__dict__)  # (zero_grad, named_parameters: what the capture reads)
        return call
