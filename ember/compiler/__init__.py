"""`torch.compiler`: the user-facing switches around `ember.compile` (capture lives in ember._dynamo)."""

from __future__ import annotations

from .._dynamo import allow_in_graph, list_backends, register_backend  # noqa: F401
from .._dynamo import disable as _dynamo_disable
from .._dynamo import is_compiling as _is_compiling
from .._dynamo import reset as _reset

__all__ = [
    "compile",
    "reset",
    "allow_in_graph",
    "list_backends",
    "disable",
    "is_compiling",
    "is_dynamo_compiling",
    "register_backend",
    "get_default_backend",
    "set_default_backend",
    "is_exporting",
    "set_stance",
    "assume_constant_result",
]


def compile(*args, **kwargs):
    from .._compile import compile as _c

    return _c(*args, **kwargs)


def reset():
    """Clear every compiled entry and cache (`torch._dynamo.reset`)."""
    _reset()


def disable(fn=None, recursive=True, *, reason=None):
    """The function runs eagerly; a compiled caller breaks its graph at the call."""
    return _dynamo_disable(fn, recursive, reason=reason)


def is_compiling():
    """True when called from code being captured (capture folds the call to True), else False."""
    return _is_compiling()


is_compiling._dynamo_is_compiling = True


def is_dynamo_compiling():
    return _is_compiling()


is_dynamo_compiling._dynamo_is_compiling = True


def get_default_backend():
    """The backend `ember.compile` uses when given none ("inductor": ember/_inductor)."""
    from .. import _compile

    return _compile.DEFAULT_BACKEND


def set_default_backend(backend):
    from .. import _compile

    _compile.DEFAULT_BACKEND = backend


def is_exporting():
    """False: ember has no torch.export."""
    return False


def assume_constant_result(fn):
    """Capture calls `fn` once (on the constant arguments it sees) and bakes its result into the graph."""
    fn._dynamo_assume_constant = True
    return fn


_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")


class set_stance:
    """`torch.compiler.set_stance(stance)`: "default"; "force_eager" (compiled functions run their original
    code); "eager_on_recompile" (a guard miss runs eagerly instead of recompiling); "fail_on_recompile" (a
    compile is an error). Takes effect at once; also a context manager and a decorator that restore it."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        from .._dynamo.eval_frame import stance as state

        if stance not in _STANCES:
            raise RuntimeError(f"invalid stance {stance!r}, expected one of {', '.join(_STANCES)}")
        self.prev = state["stance"]
        self.stance = stance
        state["stance"] = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        from .._dynamo.eval_frame import stance as state

        state["stance"] = self.prev

    def __call__(self, fn):
        from .._dynamo.eval_frame import stance as state

        state["stance"] = self.prev
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_stance(self.stance):
                return fn(*args, **kwargs)

        return wrapper
