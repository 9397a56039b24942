"""Compiler backends: a callable `(gm, example_inputs) -> compiled callable`, registered by name.

"eager" runs the captured GraphModule as it is (capture only); "aot_eager" runs it through AOT autograd
(engineer X's `aot_module_simplified`: forward and backward graphs, run as generated Python); "inductor"
(`ember.compile`'s default) compiles those graphs into fused C kernels (ember/_inductor).
`register_backend` adds a name, `list_backends` lists them (torch leaves "eager" and other debug backends
out of `list_backends()` unless asked with `exclude_tags=()`).
"""

from __future__ import annotations

_BACKENDS = {}
_TAGS = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """`@register_backend` or `register_backend(fn, name=...)`: make a backend available by name."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    name = name or compiler_fn.__name__
    if name in _BACKENDS:
        raise AssertionError(f"duplicate name: {name}")
    _BACKENDS[name] = compiler_fn
    _TAGS[name] = tuple(tags)
    return compiler_fn


def list_backends(exclude_tags=("debug", "experimental")):
    exclude = set(exclude_tags or ())
    return sorted(n for n in _BACKENDS if not exclude.intersection(_TAGS[n]))


def lookup_backend(compiler_fn):
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS:
            from .exc import TorchDynamoException

            raise TorchDynamoException(
                f"Invalid backend: {compiler_fn!r}, see `torch._dynamo.list_backends()` "
                "for available backends."
            )
        return _BACKENDS[compiler_fn]
    return compiler_fn


@register_backend(name="eager", tags=("debug",))
def eager(gm, example_inputs, **kwargs):
    return gm.forward


@register_backend(name="aot_eager", tags=("debug",))
def aot_eager(gm, example_inputs, **kwargs):
    """AOT autograd (engineer X's `aot_module_simplified`) with identity compilers: the joint graph is traced
    through ember's derivative formulas, partitioned, and the forward and backward graphs run as Python."""
    from .._functorch.aot_autograd import aot_eager as _aot_eager

    return _aot_eager(gm, example_inputs, **kwargs)


@register_backend(name="inductor")
def inductor(gm, example_inputs, **kwargs):
    """AOT autograd with ember's code generator (ember/_inductor) compiling the forward and backward graphs."""
    from .._inductor.compile_fx import inductor as _inductor

    return _inductor(gm, example_inputs, **kwargs)
