"""torch.distributed.checkpoint.state_dict: model and optimizer state dicts keyed by parameter names.

`get_model_state_dict` is the state dict of the model without its DDP wrapper (keys `l1.weight`, not
`module.l1.weight`); `get_optimizer_state_dict` keys the optimizer's per-parameter state and its groups'
`params` by those names instead of by position, so a checkpoint does not depend on the order in which an
optimizer was given its parameters. The `set_*` functions load them back.
"""

from dataclasses import dataclass

__all__ = ["StateDictOptions", "get_state_dict", "get_model_state_dict", "get_optimizer_state_dict",
           "set_state_dict", "set_model_state_dict", "set_optimizer_state_dict"]


@dataclass
class StateDictOptions:
    """Options of the state-dict helpers (ember honours `strict`; the others concern sharded models)."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _unwrap(model):
    from ...nn.parallel import DistributedDataParallel

    while isinstance(model, DistributedDataParallel):
        model = model.module
    return model


def _optimizers(optimizers):
    from ...optim.optimizer import Optimizer

    return [optimizers] if isinstance(optimizers, Optimizer) else list(optimizers)


def _names(model):
    return {id(p): n for n, p in _unwrap(model).named_parameters()}


def get_model_state_dict(model, *, submodules=None, options=None):
    """The model's state dict with names free of DDP's `module.` prefix."""
    sd = _unwrap(model).state_dict()
    if options is not None and options.ignore_frozen_params:
        frozen = {n for n, p in _unwrap(model).named_parameters() if not p.requires_grad}
        sd = type(sd)((k, v) for k, v in sd.items() if k not in frozen)
    return sd


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The optimizers' state dict with parameters named by their names in `model`."""
    names = _names(model)
    state, groups = {}, []
    for opt in _optimizers(optimizers):
        osd = opt.state_dict()
        params = [p for g in opt.param_groups for p in g["params"]]
        for i, s in osd["state"].items():
            state[names[id(params[i])]] = s
        for g, pg in zip(osd["param_groups"], opt.param_groups):
            groups.append(dict(g, params=[names[id(p)] for p in pg["params"]]))
    return {"state": state, "param_groups": groups}


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))."""
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load a `get_model_state_dict` result into the model (under DDP, into its module)."""
    strict = True if options is None else options.strict
    return _unwrap(model).load_state_dict(model_state_dict, strict=strict)


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Load a `get_optimizer_state_dict` result into the optimizers."""
    names = _names(model)
    groups = iter(optim_state_dict["param_groups"])
    for opt in _optimizers(optimizers):
        params = [p for g in opt.param_groups for p in g["params"]]
        index = {names[id(p)]: i for i, p in enumerate(params)}
        osd = {"state": {index[n]: s for n, s in optim_state_dict["state"].items() if n in index},
               "param_groups": []}
        for _pg in opt.param_groups:
            g = next(groups)
            osd["param_groups"].append(dict(g, params=[index[n] for n in g["params"]]))
        opt.load_state_dict(osd)


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """Load both; returns the model's missing and unexpected keys."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
