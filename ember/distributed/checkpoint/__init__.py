"""ember.distributed.checkpoint: torch.distributed.checkpoint's `save` / `load` of a state dict by every
rank at once, with `FileSystemWriter` / `FileSystemReader`, and the state-dict helpers of
`ember.distributed.checkpoint.state_dict` (`get_state_dict`, `set_state_dict`, ...).

NOTE [ Checkpoint layout ]
A checkpoint is a directory, as torch's: one `__<rank>_0.distcp` file per rank and a `.metadata` file.
The state dict is flattened into dotted keys (`model.l1.weight`, `optim.state.l1.weight.exp_avg`);
tensors are written once, not once per rank: they are assumed replicated (DDP's parameters and optimizer
states are), and each tensor is given to one rank, balancing the bytes each writes, so a save is spread over
the ranks (torch's default planner also deduplicates replicated entries). Other values (ints, strings,
hyper-parameters) go into `.metadata`, which rank 0 writes with the index saying which file holds each
tensor. `load` fills the given state dict in place (tensors copied into, other values replaced), each rank
reading the files it needs; a key the checkpoint lacks raises torch's "Missing key in checkpoint state_dict".
The files are ember's own (`ember.save` archives and a pickled index), not torch's binary layout: a
checkpoint written by ember is read by ember.
"""

import os
import pickle

__all__ = ["save", "load", "FileSystemWriter", "FileSystemReader", "state_dict"]

_METADATA = ".metadata"


class Metadata:
    """What a checkpoint holds: `state_dict_metadata` maps each flat key to its file (tensors) or value."""

    def __init__(self, state_dict_metadata):
        self.state_dict_metadata = state_dict_metadata


class FileSystemWriter:
    """Where `save` writes: a directory (made if missing)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False, overwrite=True):
        self.path = os.fspath(path)
        self.sync_files = sync_files
        self.overwrite = overwrite


class FileSystemReader:
    """Where `load` reads: a checkpoint directory written by `save`."""

    def __init__(self, path):
        self.path = os.fspath(path)


def _flatten(obj, prefix, out):
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = obj
    return out


def _world(process_group, no_dist):
    from ... import distributed as dist

    if no_dist or not dist.is_initialized():
        return None, 0, 1
    return dist, dist.get_rank(process_group), dist.get_world_size(process_group)


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None, no_dist=False,
         use_collectives=True):
    """Save `state_dict` from every rank into one checkpoint (a collective; NOTE [ Checkpoint layout ])."""
    from ... import _tensor, serialization

    path = storage_writer.path if storage_writer is not None else os.fspath(checkpoint_id)
    dist, rank, world = _world(process_group, no_dist)
    os.makedirs(path, exist_ok=True)
    flat = _flatten(state_dict, "", {})
    tensors = sorted((k for k, v in flat.items() if isinstance(v, _tensor.Tensor)),
                     key=lambda k: -flat[k].numel() * flat[k].element_size())
    load_of = [0] * world
    index = {}
    for key in tensors:  # the largest first, each to the rank that has written least
        r = load_of.index(min(load_of))
        load_of[r] += flat[key].numel() * flat[key].element_size()
        index[key] = ("tensor", f"__{r}_0.distcp")
    mine = {k: flat[k].detach() for k in tensors if index[k][1] == f"__{rank}_0.distcp"}
    serialization.save(mine, os.path.join(path, f"__{rank}_0.distcp"))
    for key, value in flat.items():
        if key not in index:
            index[key] = ("value", value)
    metadata = Metadata(index)
    if rank == 0:
        with open(os.path.join(path, _METADATA), "wb") as f:
            pickle.dump(index, f)
    if dist is not None:
        dist.barrier(group=process_group)
    return metadata


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None, process_group=None, no_dist=False):
    """Load a checkpoint into `state_dict` in place, on every rank (NOTE [ Checkpoint layout ])."""
    from ... import _tensor, serialization
    from ...autograd.grad_mode import no_grad

    path = storage_reader.path if storage_reader is not None else os.fspath(checkpoint_id)
    dist, _rank, _world_size = _world(process_group, no_dist)
    with open(os.path.join(path, _METADATA), "rb") as f:
        index = pickle.load(f)
    flat = _flatten(state_dict, "", {})
    for key in flat:
        if key not in index:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
    files = {}
    for key, target in flat.items():
        kind, where = index[key]
        if kind == "tensor":
            if where not in files:
                files[where] = serialization.load(os.path.join(path, where))
            value = files[where][key]
        else:
            value = where
        if isinstance(target, _tensor.Tensor) and isinstance(value, _tensor.Tensor):
            with no_grad():
                target.copy_(value)
        else:
            _assign(state_dict, key, value)
    if dist is not None:
        dist.barrier(group=process_group)


def _assign(state_dict, flat_key, value):
    """Put `value` at the place of `flat_key` in the nested `state_dict` (keys may contain dots)."""
    node, rest = state_dict, flat_key
    while True:
        if rest in node:
            node[rest] = value
            return
        for k in node:
            if isinstance(node[k], dict) and rest.startswith(f"{k}."):
                node, rest = node[k], rest[len(str(k)) + 1:]
                break
        else:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {flat_key}.")


def __getattr__(name):
    if name == "state_dict":
        import importlib

        return importlib.import_module(".state_dict", __name__)
    from ..._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
