"""Module hook machinery: removable handles, the global module hooks, and full backward hooks.

NOTE [ Full backward hooks ]
As in torch (torch/utils/hooks.py BackwardHook), a module with full backward (pre-)hooks passes its tensor
inputs, and then its tensor outputs, through an identity op whose backward node is named
`BackwardHookFunctionBackward`. A post-hook on the *output* identity node sees the gradients w.r.t. the
module outputs (grad_output) and runs the backward pre-hooks; a post-hook on the *input* identity node
sees the gradients w.r.t. the module inputs (grad_input) and runs the user hooks with both. The identity
op is an ordinary dispatched op, so the engine needs no special case.
"""

import warnings
import weakref
from collections import OrderedDict

from ..._dispatch import OTHER, defop, dispatch
from ..._meta import meta_array
from ..._tensor import Tensor, _version_counter
from ...autograd.grad_mode import state as _grad_state
from ...autograd.graph import RemovableHandle as RemovableHandle  # the one class, ember.utils.hooks's

__all__ = ["RemovableHandle", "BackwardHook"]


# ---- the global module hooks (for debugging / profiling, apply to every module) -----------------------

_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = [None]
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


def has_any_global_hook():
    return bool(_global_backward_pre_hooks or _global_backward_hooks or _global_forward_pre_hooks
                or _global_forward_hooks)


def _register(d, hook, extra=None):
    handle = RemovableHandle(d, extra_dict=extra)
    d[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """Hook `hook(module, name, buffer) -> None or new buffer` run by every `register_buffer`."""
    return _register(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """Hook `hook(module, name, submodule) -> None or new submodule` run by every submodule registration."""
    return _register(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """Hook `hook(module, name, param) -> None or new param` run by every `register_parameter`."""
    return _register(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """A forward pre-hook common to all modules: `hook(module, args) -> None or new args`."""
    return _register(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook common to all modules: `hook(module, args, output) -> None or new output`."""
    handle = _register(_global_forward_hooks, hook,
                       [_global_forward_hooks_always_called, _global_forward_hooks_with_kwargs])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_backward_hook(hook):
    """Deprecated non-full backward hook common to all modules."""
    if _global_is_full_backward_hook[0] is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module "
                           "hook. Please use only one of them.")
    _global_is_full_backward_hook[0] = False
    return _register(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook common to all modules: `hook(module, grad_output) -> None or new grad_output`."""
    return _register(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """A backward hook common to all modules: `hook(module, grad_input, grad_output) -> None or new grad_input`."""
    if _global_is_full_backward_hook[0] is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module "
                           "hook. Please use only one of them.")
    _global_is_full_backward_hook[0] = True
    return _register(_global_backward_hooks, hook)


class WrappedHook:
    """A hook that optionally receives its module (held weakly) as first argument."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        result = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            result["module"] = self.module()
        return result

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# ---- full backward hooks (NOTE [ Full backward hooks ]) -------------------------------------------------


@defop("backward_hook_function", "BackwardHookFunctionBackward", OTHER, saves="none")
def _hook_identity(*arrays):
    return tuple(arrays)


_hook_identity.meta_(lambda *tensors: tuple(  # (payloads like the inputs': the kernel returns those)
    meta_array(tuple(t.shape), t.dtype, t.stride(), t.storage_offset()) for t in tensors))


@_hook_identity.derivative_
def _(grads, *inputs):
    return grads if type(grads) is tuple else (grads,)


class BackwardHook:
    """Collects grad_output and grad_input of one module call and runs its full backward (pre-)hooks."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _input_hook(self, grad_fn):
        in_meta = grad_fn._in_meta

        def hook(grad_input, _):
            if self.grad_outputs is None:
                return None
            grad_input = [g if m is not None else None for g, m in zip(grad_input, in_meta)]
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                       f"got {len(out)}, but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)
        grad_fn.register_hook(hook)

    def _output_hook(self, grad_fn):
        def hook(_, grad_output):
            self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
            if self.user_pre_hooks:
                expected = len(self.grad_outputs)
                for user_pre_hook in self.user_pre_hooks:
                    new = user_pre_hook(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != expected:
                        raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                           f"got {len(new)}, but expected {expected}")
                    self.grad_outputs = new
            local = self.grad_outputs
            if self.input_tensors_index is None:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", stacklevel=5)
                grad_inputs = self._pack_with_none([], [], self.n_inputs)
                for user_hook in self.user_hooks:
                    res = user_hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                           "always return None or None for all gradients.")
                self.grad_outputs = None
            if local is not None:
                return tuple(local[i] for i in self.output_tensors_index)
            return None
        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and _grad_state.enabled):
            return args, None
        if _grad_state.func_transforms:  # (V) torch's BackwardHookFunction is a Function without setup_context
            from ...autograd.function import SETUP_CONTEXT_REQUIRED

            raise RuntimeError(SETUP_CONTEXT_REQUIRED)
        new = dispatch(_hook_identity, tuple(tensors))
        for t, n in zip(tensors, new):
            n._vc = _version_counter(t)  # an alias of the input, as torch's identity Function returns
            if not t._requires_grad:  # torch marks these outputs non-differentiable
                n._grad_fn = None
                n._requires_grad = False
        grad_fn = next(n._grad_fn for n in new if n._grad_fn is not None)
        fn(grad_fn)
        arg_list = list(args)
        for i, val in zip(idx, new):
            arg_list[i] = val
        return (tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)), idx

    def setup_input_hook(self, args):
        res, idx = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, args):
        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, idx = self._apply_on_tensors(self._output_hook, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]
