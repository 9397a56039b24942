"""optim.Optimizer: the base class every optimizer builds on, with torch's public contract.

It holds `param_groups` (a list of dicts: 'params' plus the per-group options, defaults filled in from the
constructor), `state` (a defaultdict keyed by parameter) and the hooks torch exposes: global and per-instance
step pre/post hooks, state_dict pre/post hooks and load_state_dict pre/post hooks. `state_dict()` packs the
state in torch's format (integer parameter ids), so a state_dict moves between ember and torch once its
tensors are converted.

NOTE [ How optimizers update parameters ]
The step is a hot path: a small model may have hundreds of tiny parameters, so Python overhead per parameter
matters more than arithmetic. Each optimizer's update of one parameter group is therefore one op over
lists of tensors (NOTE [ Optimizer steps are ops over lists ] in _ops/optim.py) whose kernel updates the arrays
in place with NumPy ufuncs (`out=` wherever torch updates in place, no per-element Python), outside autograd;
`_run_step` dispatches it and then bumps each mutated tensor's version counter as torch's in-place ops would
(saved tensors then notice the change).
The order of operations follows torch's single-tensor ("for-loop") implementations, and Python scalars are
applied to float32 arrays in float32 (NumPy's weak scalars, as torch's scalar arguments), so float32 results
agree with torch's to rounding. State tensors are named, shaped and typed as torch's ('step' a 0-d float32
tensor, 'exp_avg', 'momentum_buffer', ...), so state_dicts are interchangeable.

NOTE [ differentiable, foreach, fused, capturable ]
`foreach` and `fused` select among torch's three kernels for one update rule; ember has one implementation,
so both flags are accepted, stored in the group like torch does, and change nothing. `capturable` is about
CUDA graphs: on the CPU torch raises at step time, and so does ember. `differentiable=True` (autograd through
the update) is not supported: the step op has no derivative, and it raises at construction.
"""

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from .. import _dtypes
from .._dispatch import dispatch, quiet_numpy
from .._ops.creation import zeros_like
from .._ops.foreach import _foreach_zero_
from .._tensor import Tensor, _version_counter, _wrap
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook):
    """Register a pre hook common to all optimizers: ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register a post hook common to all optimizers: ``hook(optimizer, args, kwargs) -> None``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


# ---- helpers the optimizers share (NOTE [ How optimizers update parameters ]) ------------------------------


def _use_grad_for_differentiable(func):
    """Run `step` with grad mode off (torch runs it with grad mode = the `differentiable` default, False)."""
    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev = _grad_state.enabled
        _grad_state.enabled = False
        try:
            return func(self, *args, **kwargs)
        finally:
            _grad_state.enabled = prev
    return _use_grad


def _to_scalar(x):
    """A hyperparameter as a Python number (a 1-element Tensor lr/beta gives its value)."""
    return x.item() if isinstance(x, Tensor) else x


def _scalar_dtype():
    return np.float64 if _dtypes.get_default_dtype() is _dtypes.float64 else np.float32


def _new_scalar(value, like=None):
    """A 0-d tensor of torch's scalar-state dtype (float32, float64 under a float64 default): 'step', 'mu';
    on the CPU, or on parameter `like`'s device for the optimizers whose scalars torch keeps there (ASGD)."""
    t = _wrap(np.array(value, _scalar_dtype()))
    return t if like is None or like.device.type == "cpu" else t.to(like.device)


def _zeros_state(p):
    """torch.zeros_like(p, memory_format=torch.preserve_format)."""
    return zeros_like(p)


def _bump(p, k=1):
    """Count `k` in-place updates of tensor `p` (see NOTE [ Version counters ] in _tensor.py)."""
    _version_counter(p)[0] += k


def _run_step(op, lists, hyper, bumps):
    """Run optimizer step op `op` over `lists` (lists of tensors) with hyperparameters `hyper` (Python
    numbers), as one dispatch (NOTE [ Optimizer steps are ops over lists ] in _ops/optim.py); returns the op's
    fresh state tensors. `bumps[i]`: how many in-place ops torch's single-tensor step applies to each tensor of
    `lists[i]`, which is how far its version counter moves (as torch's does: saved tensors notice the update).
    """
    flat = []
    for lst in lists:
        flat += lst
    out = dispatch(op, flat, (tuple([len(lst) for lst in lists]), *hyper))
    for lst, k in zip(lists, bumps):
        if k:
            for t in lst:  # (inlined `_bump`: this loop runs for every tensor of every step)
                vc = t._vc
                if vc is None:
                    vc = _version_counter(t)
                vc[0] += k
    return out


def _check_capturable(capturable, xla=True):
    if capturable:
        devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
        raise AssertionError(
            f"If capturable=True, params and state_steps must be on supported devices: {devices}.")


def _check_not_differentiable(differentiable):
    if differentiable:
        raise RuntimeError(
            "differentiable=True is not supported by ember optimizers: the update runs in place on NumPy "
            "arrays outside autograd (see NOTE [ differentiable, foreach, fused, capturable ])")


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


# ---- the base class ---------------------------------------------------------------------------------------


def _cast(param, value, param_groups, param_id=None, key=None):
    """A loaded state value made to fit `param` (dtype and device, as Optimizer's policy says), recursively.

    (A module-level function: a closure calling itself is a reference cycle, NOTE [ No reference cycles ].)"""
    if isinstance(value, Tensor):
        return Optimizer._process_value_according_to_param_policy(param, value, param_id, param_groups, key)
    if isinstance(value, dict):
        return {k: _cast(param, v, param_groups, param_id=param_id, key=k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v, param_groups, param_id=param_id) for v in value)
    return value


class Optimizer:
    r"""Base class for all optimizers.

    Args:
        params (iterable): an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter groups).
        defaults (dict): default values of optimization options (used when a group doesn't specify them).
    """

    __module__ = "ember.optim.optimizer"

    # (option, default) pairs a group gains when an older or pickled state is loaded (torch's per-class
    # `__setstate__`), in torch's order; see ember/optim/_common.py
    _defaults_for_setstate = ()

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + params.type())
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for name, default in self._defaults_for_setstate:
                group.setdefault(name, default)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- step hooks ----------------------------------------------------------------------------------------

    @staticmethod
    def profile_hook_step(func):
        """Wrap a `step` so the global and per-instance step pre/post hooks run around it."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self, *_ = args
            for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
            with quiet_numpy():  # NumPy updates on inf/nan values are silent, as torch's are (NOTE [ Quiet NumPy ])
                out = func(*args, **kwargs)
            self._optimizer_step_code()
            for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _optimizer_step_code(self):
        """Entry point for profilers, called after every step (empty, as in torch)."""

    def _patch_step_function(self):
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``, called before `step`."""
        return self._add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None``, called after `step`."""
        return self._add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer) -> None``, called before `state_dict`."""
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict or None``, called after `state_dict`."""
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict) -> state_dict or None``, called before `load_state_dict`."""
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer) -> None``, called after `load_state_dict`."""
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    # ---- state_dict ------------------------------------------------------------------------------------------

    def state_dict(self):
        """The optimizer state as a dict: ``state`` (keyed by integer parameter ids, in group order) and
        ``param_groups`` (each group's options, with 'params' as the list of those ids)."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        # floating-point state follows the param's dtype, except 'step' (torch issue 74424)
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dtypes.float32)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict):
        """Load a state dict made by `state_dict` (of this or a matching optimizer, ember's or torch's once its
        tensors are ember tensors). State tensors are cast to their parameter's floating dtype."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, state_dict["param_groups"], param_id=k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- grads and groups -----------------------------------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors: to None (default) or to zeros in place."""
        zeros = []
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        zeros.append(g)
        if zeros:
            _foreach_zero_(zeros)

    def step(self, closure=None):
        """Perform a single optimization step. closure: reevaluates the model and returns the loss."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a param group to `param_groups` (e.g. to train layers unfrozen mid-training)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        self._extract_names(param_group)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    @staticmethod
    def _extract_names(param_group):
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    return type(obj).__qualname__ if module == "builtins" else module + "." + type(obj).__qualname__
