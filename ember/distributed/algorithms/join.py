"""The Join context manager for uneven inputs (torch.distributed.algorithms.join).

Each `Joinable` (DDP, ZeroRedundancyOptimizer) announces every step to the others with one allreduce of a
one (`Join.notify_join_context`). A rank whose inputs ran out enters `Join.__exit__`: in a loop it
allreduces a zero, which meets the others' announcement and counts the ranks still training; while some
are, it runs each joinable's `JoinHook.main_hook`, which issues the collectives those ranks issue in their
step (DDP: one zero allreduce per gradient bucket), so nobody waits forever. When all ranks have joined,
each `post_hook` runs (DDP broadcasts the final model from the last rank to join).
"""

import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joinable does while joined (`main_hook`, once per step of the others) and after (`post_hook`)."""

    def main_hook(self):
        """Shadow the collectives of one training step of the ranks that have not joined."""

    def post_hook(self, is_last_joiner):
        """Run once every rank has joined; `is_last_joiner` is true on the last rank to join."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """Base for classes that can take part in a `Join` (they provide a join hook, a device and a group)."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """The `JoinHook` for this joinable."""

    @property
    @abstractmethod
    def join_device(self):
        """The device the join collectives run on."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group the join collectives run in."""


def _dist():
    from ... import distributed as dist

    return dist


class Join:
    """Context manager for uneven inputs over `joinables` (see the module docstring).

    Args:
        joinables (List[Joinable]): the participating joinables; their hooks run in this order
        enable (bool): False makes the context do nothing
        throw_on_early_termination (bool): raise on every rank as soon as one rank runs out of inputs
    """

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        first = True
        for j in joinables:
            j._join_config = _JoinConfig(enable, throw_on_early_termination, first)
            first = False
        group = None
        for j in joinables:
            if group is None:
                group = j.join_process_group
            elif group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
        self._process_group = group
        self._rank = _dist().get_rank(group)
        self._device = joinables[0].join_device

    def __enter__(self):
        pass

    def __exit__(self, type, value, traceback):
        if not self._enable or type:
            return
        is_last_joiner = True
        i = 0
        while True:
            if i > 1000:
                warnings.warn(
                    f"Detected uneven input skew of greater than 1000. This means that rank {self._rank} has at "
                    "least 1000 fewer inputs than other currently-active ranks. This level of skew could lead "
                    "to performance degradation during training.", stacklevel=2)
            if self._get_num_nonjoined_procs() == 0:
                break
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self):
        from ..._ops.creation import zeros

        n = zeros(1)
        _dist().all_reduce(n, group=self._process_group)
        return n.item()

    def _notify_procs_to_terminate(self):
        from ..._ops.creation import ones

        _dist().all_reduce(ones(1), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Announce one step of `joinable` to the joined ranks; returns the allreduce's work handle (only
        for the first joinable of an enabled join, else None)."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        from ..._ops.creation import ones, zeros

        dist = _dist()
        work = dist.all_reduce(ones(1), group=joinable.join_process_group, async_op=True)
        if config.throw_on_early_termination:
            flag = zeros(1)
            dist.all_reduce(flag, group=joinable.join_process_group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work


class _DDPJoinHook(JoinHook):
    """DDP's join hook: a joined rank shadows the forward's and backward's collectives of the others."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        ddp = self.ddp
        ddp.reducer.rebuild_buckets()
        ddp._check_and_sync_module_buffers()
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        ddp.reducer.match_all_reduce_for_bwd_pass()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)
