"""ember.utils.hooks: torch.utils.hooks (`RemovableHandle`, `BackwardHook`, `unserializable_hook`,
`warn_if_has_hooks`).

`RemovableHandle` is the one class every register_*hook returns (defined in ember/autograd/graph.py, the
lowest layer using it); `BackwardHook` is nn.Module's full-backward-hook machinery (NOTE [ Full backward
hooks ] in ember/nn/modules/_hooks.py).
"""

import warnings

from .. import _naming
from ..autograd.graph import RemovableHandle as RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]  # noqa: F822 (lazy)


def unserializable_hook(f):
    """Mark a function as an unserializable hook: saving a tensor holding it then does not warn."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor):
    """The `register_hook` hooks of a tensor: a leaf's own, or a non-leaf's on its grad_fn."""
    node = tensor.grad_fn
    if node is None:
        return getattr(tensor, "_hooks", None) or {}
    return (getattr(node, "_tensor_pre_hooks", None) or {}).get(tensor._output_nr, {})


def warn_if_has_hooks(tensor):
    """Warn for each backward hook of `tensor` that saving it will drop (unless marked unserializable)."""
    hooks = _tensor_hooks(tensor)
    for k in hooks:
        hook = hooks[k]
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(_naming.named(
                f"backward hook {repr(hook)} on tensor will not be serialized.  If this is expected, you can "
                "decorate the function with @ember.utils.hooks.unserializable_hook to suppress this warning"),
                stacklevel=2)


def __getattr__(name):
    if name == "BackwardHook":  # (loaded on first use: it lives in ember.nn, which this module must not load)
        from ..nn.modules._hooks import BackwardHook

        return BackwardHook
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
