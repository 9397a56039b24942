"""`torch.compiler`: the user-facing switches around `ember.compile` (capture lives in ember._dynamo)."""

from __future__ import annotations

from .._dynamo import allow_in_graph, list_backends, register_backend  # noqa: F401
from .._dynamo import disable as _dynamo_disable
from .._dynamo import is_compiling as _is_compiling
from .._dynamo import reset as _reset

__all__ = ["compile", "reset", "allow_in_graph", "list_backends", "disable", "is_compiling",
           "is_dynamo_compiling", "register_backend"]


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
