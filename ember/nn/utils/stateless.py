"""ember.nn.utils.stateless.functional_call: call a module with some parameters and buffers swapped for given
tensors, restoring them afterwards (torch's deprecated spelling of torch.func.functional_call)."""

import contextlib
import warnings

__all__ = ["functional_call"]


def _resolve(module, name):
    """(owning submodule, attribute name) of a dotted member name."""
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


def _swap(owner, attr, value):
    """Put `value` in place of member `attr` of `owner` and return what was there."""
    if attr in owner._parameters:
        old = owner._parameters[attr]
        owner._parameters[attr] = value
    elif attr in owner._buffers:
        old = owner._buffers[attr]
        owner._buffers[attr] = value
    else:
        old = getattr(owner, attr, None)
        object.__setattr__(owner, attr, value)
    return old


@contextlib.contextmanager
def _reparametrize(module, parameters_and_buffers, tie_weights=False, strict=False):
    members = dict(module.named_parameters(remove_duplicate=False))
    members.update(dict(module.named_buffers(remove_duplicate=False)))
    given = {k: parameters_and_buffers[k] for k in parameters_and_buffers.keys()}
    if tie_weights:  # a name tied to a given one (the same tensor in the module) takes the same value
        by_id = {}
        for name, t in members.items():
            by_id.setdefault(id(t), []).append(name)
        for name in list(given):
            if name in members:
                tied = by_id[id(members[name])]
                if len({id(given[k]) for k in tied if k in given}) > 1:  # torch's _untie_named_tensors_map
                    raise ValueError(f"functional_call got multiple values for keys {sorted(tied)}, which are "
                                     "tied. Consider using tie_weights=False")
                for other in tied:
                    given.setdefault(other, given[name])
    if strict:
        missing = [k for k in members if k not in given]
        unexpected = [k for k in given if k not in members]
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                msgs.append("Missing key(s): " + ", ".join(f"'{k}'" for k in sorted(missing)) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs))
    saved = []
    try:
        for name, value in given.items():
            owner, attr = _resolve(module, name)
            saved.append((owner, attr, _swap(owner, attr, value)))
        yield
    finally:
        for owner, attr, old in reversed(saved):
            _swap(owner, attr, old)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """`module(*args, **kwargs)` with its members named in `parameters_and_buffers` replaced by those tensors
    for the call (gradients flow to the given tensors); the module is unchanged afterwards."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
