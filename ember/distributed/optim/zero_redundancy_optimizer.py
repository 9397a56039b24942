"""ZeroRedundancyOptimizer (ZeRO stage 1): each rank keeps the optimizer state of its shard only.

The parameters are partitioned over the ranks as torch does (per parameter group, largest first, each to
the rank with the fewest elements so far); each rank builds the wrapped optimizer over its shard, so
momentum and Adam moments exist once across the world. `step()` steps the local optimizer (the gradients
are already averaged, by DDP) and then broadcasts every parameter from the rank that owns it, so all ranks
end with the same weights as a plain optimizer would give. `consolidate_state_dict(to)` gathers the shards'
states on one rank, whose `state_dict()` is then the plain optimizer's.
"""

import copy
from itertools import chain

from ...optim.optimizer import Optimizer
from ..algorithms.join import Join, Joinable, JoinHook

__all__ = ["ZeroRedundancyOptimizer"]


def _dist():
    from ... import distributed as dist

    return dist


class _ZeROJoinHook(JoinHook):
    def __init__(self, zero):
        self.zero = zero
        super().__init__()

    def main_hook(self):
        """A joined rank still broadcasts the parameters it owns, as the others expect."""
        self.zero._sync_params()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wrap `optimizer_class` so that each rank holds the state of its shard of the parameters.

    Args:
        params: the parameters (or parameter groups) of the model
        optimizer_class (type): the local optimizer's class (e.g. ``torch.optim.Adam``)
        process_group: the group to shard over (default: the world)
        parameters_as_bucket_view (bool): keep each rank's parameters in one flat buffer (one broadcast each)
        overlap_with_ddp (bool): not supported by ember (raises)
        **defaults: the local optimizer's arguments

    Example::
        >>> opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
        >>> ddp(x).sum().backward(); opt.step()
    """

    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise ValueError("ember's ZeroRedundancyOptimizer does not support overlap_with_ddp=True")
        params = self._verify_and_init_params(params)
        self.initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        dist = _dist()
        self._partition_cache = []
        self._default_device = self._all_params[0].device
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets = []
        self._build_param_buckets()
        self._all_state_dicts = []
        self.initialized = True

    def _verify_and_init_params(self, params):
        from ..._tensor import Tensor

        if isinstance(params, Tensor):
            raise TypeError("`params` argument should be an iterable of Tensors, but got torch.FloatTensor")
        all_params = list(params)
        if len(all_params) == 0:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, Tensor) for p in all_params):
            self._all_params = all_params
        elif all(isinstance(p, dict) for p in all_params):
            for group in all_params:
                if "params" not in group:
                    raise ValueError("Each parameter group passed-in via `params` must have a 'params' key "
                                     "mapping to the parameters in the group")
            self._all_params = [p for g in all_params for p in g["params"]]
        else:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        return all_params

    # ---- the partition ------------------------------------------------------------------------------------

    def _partition_parameters(self):
        """Per rank, its parameter groups: torch's greedy partition, largest parameters first."""
        if not self._partition_cache:
            self._partition_cache = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                per_rank = [[] for _ in range(self.world_size)]
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = sizes.index(min(sizes))
                    per_rank[rank].append(p)
                    sizes[rank] += p.numel()
                for rank, ps in enumerate(per_rank):
                    g = copy.copy(group)
                    g["params"] = ps
                    self._partition_cache[rank].append(g)
        return self._partition_cache

    @property
    def _param_to_rank(self):
        return {id(p): rank for rank, groups in enumerate(self._partition_parameters())
                for g in groups for p in g["params"]}

    @property
    def _index_to_param(self):
        return list(chain.from_iterable(g["params"] for g in self.param_groups))

    def _build_param_buckets(self):
        """With parameters_as_bucket_view, each rank's trainable parameters become views of one flat tensor."""
        if not self.parameters_as_bucket_view:
            return
        from ..._ops.creation import empty, zeros

        self._buckets = []
        for groups in self._partition_parameters():
            params = [p for g in groups for p in g["params"] if p.requires_grad]
            total = sum(p.numel() for p in params)
            if total == 0:
                self._buckets.append(zeros(1))
                continue
            bucket = empty(total, dtype=params[0].dtype)
            offset = 0
            for p in params:
                n = p.numel()
                bucket[offset:offset + n].copy_(p.data.flatten())
                p.data = bucket[offset:offset + n].view_as(p.data)
                offset += n
            self._buckets.append(bucket)

    # ---- the step ----------------------------------------------------------------------------------------

    def _sync_params(self):
        """Broadcast every parameter from the rank that owns it (asynchronously, then wait for all)."""
        dist = _dist()
        handles = []
        for rank in range(self.world_size):
            if self.parameters_as_bucket_view:
                handles.append(dist.broadcast(self._buckets[rank], src=rank, group=self.process_group,
                                              async_op=True))
                continue
            for g in self._partition_parameters()[rank]:
                handles.extend(dist.broadcast(p.data, src=rank, group=self.process_group, async_op=True)
                               for p in g["params"])
        for h in handles:
            h.wait()

    def step(self, closure=None, **kwargs):
        """Step the local optimizer over this rank's shard, then share the updated parameters."""
        Join.notify_join_context(self)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self._sync_params()
        return loss

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        if self.initialized:
            self._partition_cache = []
            groups = self._partition_parameters()[self.rank]
            if len(groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(groups[-1])
            self._build_param_buckets()

    @staticmethod
    def _sync_param_groups(src, dst):
        for s, d in zip(src, dst):
            for k, v in s.items():
                if k != "params":
                    d[k] = v

    # ---- state dicts -------------------------------------------------------------------------------------

    def consolidate_state_dict(self, to=0):
        """Gather every rank's shard of the optimizer state on rank `to` (a collective: call on all ranks)."""
        dist = _dist()
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        self._all_state_dicts = []
        for rank in range(self.world_size):
            box = [self.optim.state_dict() if rank == self.rank else None]
            dist.broadcast_object_list(box, src=rank, group=self.process_group)
            if self.rank == to:
                self._all_state_dicts.append(box[0])

    def state_dict(self):
        """The whole optimizer's state dict, as the plain optimizer's (after `consolidate_state_dict`)."""
        if len(self._all_state_dicts) == 0:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you meant to "
                               "save the global state.")
        state_dict = super().state_dict()
        index_of = {id(p): i for i, p in enumerate(self._index_to_param)}
        for rank, local in enumerate(self._all_state_dicts):
            for local_group, global_group in zip(local["param_groups"], self._partition_parameters()[rank]):
                for local_index, param in zip(local_group["params"], global_group["params"]):
                    if local_index in local["state"]:
                        state_dict["state"][index_of[id(param)]] = local["state"][local_index]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a whole (consolidated) state dict: each rank keeps the state of its own shard."""
        owner = self._param_to_rank
        params = self._index_to_param
        for index, value in state_dict["state"].items():
            param = params[index]
            if owner[id(param)] == self.rank:
                self.optim.state[param] = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in value.items()}
        groups = state_dict["param_groups"]
        self._sync_param_groups(groups, self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)

    # ---- join --------------------------------------------------------------------------------------------

    def join_hook(self, **kwargs):
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self._default_device

    @property
    def join_process_group(self):
        return self.process_group
