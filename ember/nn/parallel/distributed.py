"""DistributedDataParallel: data parallelism across processes, as torch's.

At construction the parameters and buffers of rank 0 are broadcast to every rank (one flat message per
dtype, torch's `_broadcast_coalesced`); a Reducer (`_reducer.py`) buckets the gradients and allreduces
them while backward runs, so that after `loss.backward()` every rank holds the average of all ranks'
gradients. The forward wraps the module's: before it, buckets are rebuilt once in the order gradients
came in the first iteration and buffers are broadcast from rank 0 (`broadcast_buffers`); after it the
reducer is armed for the backward (`prepare_for_backward`), unless under `no_sync()` or with grad off.
`join()` lets ranks with fewer inputs shadow the others' collectives (torch's `Join` / `Joinable`).
"""

import sys
import warnings
from contextlib import contextmanager

from ...distributed.algorithms.join import Joinable
from ..modules.module import Module
from ._reducer import _DEFAULT_FIRST_BUCKET_BYTES, _MB, GradBucket, Reducer, compute_bucket_assignment_by_size

__all__ = ["DistributedDataParallel"]

_DEFAULT_BUCKET_CAP_MB = 25


def _distributed():
    from ... import distributed as dist

    return dist


def _default_group():
    """The default process group, or torch's error when none was initialized (torch's _get_default_group)."""
    dist = _distributed()
    if not dist.is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return dist.group.WORLD


def _find_tensors(obj):
    """The tensors in a forward's output (nested lists, tuples, dicts), as torch's `_find_tensors`."""
    from ..._tensor import Tensor

    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    return []


def broadcast_coalesced(process_group, tensors, src):
    """Broadcast `tensors` from `src`, packed one flat buffer per dtype (torch's `_broadcast_coalesced`)."""
    from ... import _ops
    from ...autograd.grad_mode import no_grad

    dist = _distributed()
    by_dtype = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(t)
    with no_grad():
        for group in by_dtype.values():
            flat = _ops.public["cat"]([t.detach().reshape(-1) for t in group]) if len(group) > 1 \
                else group[0].detach().reshape(-1).clone()
            dist.broadcast(flat, src, group=process_group)
            offset = 0
            for t in group:
                n = t.numel()
                t.copy_(flat[offset:offset + n].view(t.shape))
                offset += n


class DistributedDataParallel(Module, Joinable):
    """Implement distributed data parallelism based on ``torch.distributed`` at module level.

    Args:
        module (Module): module to be parallelized
        device_ids, output_device: must be None (or empty) for CPU modules, as in torch
        broadcast_buffers (bool): deprecated spelling of ``forward_sync_buffers`` (default: True)
        process_group: the process group used for the all-reduce (default: the world)
        bucket_cap_mb (float): the bucket size in MiB (default: 25; the first bucket then 1 MiB)
        find_unused_parameters (bool): traverse the output's graph to mark unused parameters ready
        gradient_as_bucket_view (bool): gradients are views into the allreduce buckets
        static_graph (bool): the graph is the same every iteration (unused parameters learned once)

    Example::

        >>> ddp = torch.nn.parallel.DistributedDataParallel(model)
        >>> ddp(x).sum().backward()   # gradients averaged over all ranks
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,
                 init_sync=True, process_group=None, bucket_cap_mb=None, find_unused_parameters=False,
                 check_reduction=False, gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None, mixed_precision=None,
                 device_mesh=None, skip_all_reduce_unused_params=False, bucket_cap_mb_list=None,
                 batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        Joinable.__init__(self)
        if bool(delay_all_reduce_named_params is not None) != bool(param_to_hook_all_reduce is not None):
            raise ValueError("delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at "
                             "the same time.")
        if process_group and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        for name, value in (("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value:  # (said, rather than ignored)
                raise NotImplementedError(f"ember's DistributedDataParallel does not support {name} yet")
        self.process_group = _default_group() if process_group is None else process_group
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self._module_parameters = [p for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:
            devices = {p.device for p in self._module_parameters}
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.is_multi_device_module = False
        self.device_type = "cpu"
        self.device_ids = None
        self.output_device = None
        self.static_graph = False
        self.dim = dim
        self.module = module
        self.device = self._module_parameters[0].device
        self.forward_sync_buffers, init_sync_buffers = _buffer_sync_settings(broadcast_buffers,
                                                                              forward_sync_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.batched_grad_copy = batched_grad_copy
        self.mixed_precision = mixed_precision
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. "
                          "Please avoid using it.", FutureWarning, stacklevel=2)
        from ..parameter import UninitializedParameter

        if any(isinstance(p, UninitializedParameter) for p in self._module_parameters):
            raise RuntimeError("Modules with uninitialized parameters can't be used with "
                               "`DistributedDataParallel`. Run a dummy forward pass to correctly initialize "
                               "the modules")
        self.broadcast_bucket_size = 250 * 1024 * 1024
        is_default = bucket_cap_mb is None
        cap_mb = _DEFAULT_BUCKET_CAP_MB if is_default else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        self.bucket_bytes_cap_list = []
        first_cap = _DEFAULT_FIRST_BUCKET_BYTES if is_default else self.bucket_bytes_cap
        self.bucket_bytes_cap_default = first_cap < self.bucket_bytes_cap
        self.skip_all_reduce_unused_params = skip_all_reduce_unused_params

        parameters = self._build_params_for_reducer()
        if init_sync:
            _verify_param_shapes(self.process_group, parameters)
            states = [p for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
            if init_sync_buffers:
                states += [b for n, b in module.named_buffers() if n not in self.parameters_to_ignore]
            if states:
                broadcast_coalesced(self.process_group, states, 0)
        # NOTE [ First-iteration buckets ]: as torch, one bucket per dtype in the first iteration (unless
        # find_unused_parameters: then the buckets are sized and fixed), rebuilt in gradient order after.
        if static_graph or not find_unused_parameters:
            limits = [sys.maxsize]
        elif first_cap < self.bucket_bytes_cap:
            limits = [first_cap, self.bucket_bytes_cap]
        else:
            limits = [self.bucket_bytes_cap]
        indices, per_bucket = compute_bucket_assignment_by_size(parameters, limits)
        self.reducer = Reducer(parameters, list(reversed(indices)), list(reversed(per_bucket)),
                               self.process_group, self.bucket_bytes_cap, find_unused_parameters,
                               gradient_as_bucket_view, first_cap)
        self._comm_hooks = []
        self._has_rebuilt_buckets = False
        self._divide_by_initial_world_size = True
        if static_graph:
            self._set_static_graph()

    # ---- construction helpers ---------------------------------------------------------------------------

    def _build_params_for_reducer(self):
        """The parameters that need gradients, once each, in module order (torch's walk)."""
        memo, parameters = set(), []
        for module_name, m in self.module.named_modules():
            for name, p in m.named_parameters(recurse=False):
                fqn = f"{module_name}.{name}" if module_name else name
                if p.requires_grad and fqn not in self.parameters_to_ignore and id(p) not in memo:
                    memo.add(id(p))
                    parameters.append(p)
        self._assign_modules_buffers()
        return parameters

    def _assign_modules_buffers(self):
        named = [(n, b) for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]
        self.modules_buffers = [b for _, b in named]
        self.named_module_buffers = dict(named)

    def _set_static_graph(self):
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.", stacklevel=2)
            return
        self.static_graph = True
        self.reducer.static_graph = True
        if self.find_unused_parameters:
            warnings.warn(
                "You passed find_unused_parameters=true to DistributedDataParallel, `_set_static_graph` will "
                "detect unused parameters automatically, so you do not need to set find_unused_parameters="
                "true, just be sure these unused parameters will not change during training loop while "
                "calling `_set_static_graph`.", stacklevel=2)

    @property
    def broadcast_buffers(self):
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value):
        self.forward_sync_buffers = value

    # ---- forward ----------------------------------------------------------------------------------------

    @contextmanager
    def no_sync(self):
        """Disable gradient synchronization: gradients accumulate locally until the first forward-backward
        outside the context, which syncs them all."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _pre_forward(self):
        from ...autograd.grad_mode import is_grad_enabled
        from ...distributed.algorithms.join import Join

        work = Join.notify_join_context(self)
        if work is not None:
            self.reducer._ddp_join_work = (work, self._divide_by_initial_world_size)
        if is_grad_enabled() and self.reducer.rebuild_buckets():
            self._has_rebuilt_buckets = True
        if self._check_sync_bufs_pre_fwd():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)

    def _post_forward(self, output):
        from ...autograd.grad_mode import is_grad_enabled

        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            if self.find_unused_parameters and not self.static_graph:
                self.reducer.prepare_for_backward(_find_tensors(output))
            else:
                self.reducer.prepare_for_backward([])
        else:
            self.require_forward_param_sync = False
        return output

    def forward(self, *inputs, **kwargs):
        self._pre_forward()
        output = self.module(*inputs, **kwargs)
        return self._post_forward(output)

    def train(self, mode=True):
        super().train(mode)
        return self

    # ---- buffers ----------------------------------------------------------------------------------------

    def will_sync_module_buffers(self):
        return self.require_forward_param_sync and self.forward_sync_buffers and len(self.modules_buffers) > 0

    def _check_sync_bufs_pre_fwd(self):
        return self.will_sync_module_buffers()

    def _sync_buffers(self):
        authoritative = self._find_common_rank(self._distributed_rank, True) if self._join_config.enable else 0
        self._assign_modules_buffers()
        self._sync_module_buffers(authoritative)

    def _sync_module_buffers(self, authoritative_rank):
        if self.modules_buffers:
            broadcast_coalesced(self.process_group, self.modules_buffers, authoritative_rank)

    @property
    def _distributed_rank(self):
        return _distributed().get_rank(self.process_group)

    def _find_common_rank(self, input_rank, rank_cond):
        from ..._ops.creation import tensor

        dist = _distributed()
        rank_to_use = tensor([input_rank if rank_cond else -1])
        dist.all_reduce(rank_to_use, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. This indicates a "
                             "bug in PyTorch, please report an issue.")
        return rank_to_use.item()

    # ---- uneven inputs (join) ---------------------------------------------------------------------------

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Context manager for training with uneven inputs: ranks that run out of inputs shadow the
        collectives of the others until every rank has joined (torch's `Join` over this DDP)."""
        from ...distributed.algorithms.join import Join

        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        from ...distributed.algorithms.join import _DDPJoinHook

        return _DDPJoinHook(self, divide_by_initial_world_size=kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        from ..._ops.creation import ones, zeros

        dist = _distributed()
        flag = ones(1) if not is_joined_rank and self.require_backward_grad_sync else zeros(1)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return flag.item() != 0
        return None

    def _check_and_sync_module_buffers(self):
        if self._check_sync_bufs_pre_fwd():
            self._sync_module_buffers(self._find_common_rank(self._distributed_rank, False))

    def _sync_final_model(self, is_last_joiner):
        src = self._find_common_rank(self._distributed_rank, is_last_joiner)
        states = [p for n, p in self.module.named_parameters() if n not in self.parameters_to_ignore]
        if self.forward_sync_buffers:
            states += [b for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore]
        if states:
            broadcast_coalesced(self.process_group, states, src)

    # ---- communication hooks ----------------------------------------------------------------------------

    def register_comm_hook(self, state, hook):
        """Register `hook(state, bucket) -> Future[Tensor]`, called with each `GradBucket` when it is ready;
        the future's tensor (the bucket's reduced gradients) replaces the bucket's contents."""
        self._check_comm_hook(hook)
        self._comm_hooks.append((hook, state))
        self.reducer.register_comm_hook(state, hook)

    def _check_comm_hook(self, hook):
        import inspect

        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        if "bucket" not in sig.parameters:
            raise KeyError("'bucket'")
        annotation = sig.parameters["bucket"].annotation
        if annotation is not inspect.Parameter.empty and annotation is not GradBucket:
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if hook.__name__ in ("bf16_compress_hook", "bf16_compress_wrapper_hook"):
            # NOTE [ bf16 hook on the CPU ]: torch refuses it without CUDA + NCCL or XPU, and so does ember
            raise TypeError("BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL")

    def _get_ddp_logging_data(self):
        return {"bucket_sizes": [b.buffer.numel() * b.buffer.element_size() for b in self.reducer.buckets],
                "has_rebuilt_buckets": int(self._has_rebuilt_buckets)}


def _buffer_sync_settings(broadcast_buffers, forward_sync_buffers):
    """(forward_sync_buffers, sync buffers at construction) from torch 2.13's two spellings."""
    if broadcast_buffers is not None:
        if forward_sync_buffers is not None:
            warnings.warn(
                "Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` is "
                "deprecated and its value is ignored when `forward_sync_buffers` is provided.",
                FutureWarning, stacklevel=3)
        else:
            warnings.warn(
                "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init. If you "
                "rely on buffers NOT being synced at init (e.g. rank-local buffers), keep using "
                "`broadcast_buffers=False` until `init_sync_buffers` is available.", FutureWarning, stacklevel=3)
    if forward_sync_buffers is not None:
        return forward_sync_buffers, True
    effective = broadcast_buffers if broadcast_buffers is not None else True
    return effective, effective


def _verify_param_shapes(process_group, parameters):
    """Every rank must hold parameters of the same number and shapes (torch's check, over all_gather_object)."""
    dist = _distributed()
    mine = [tuple(p.shape) for p in parameters]
    world = dist.get_world_size(process_group)
    gathered = [None] * world
    dist.all_gather_object(gathered, mine, group=process_group)
    for rank, theirs in enumerate(gathered):
        if len(theirs) != len(mine):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {dist.get_rank(process_group)} "
                               f"has {len(mine)} params, while rank {rank} has inconsistent {len(theirs)} params.")
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {dist.get_rank(process_group)} has "
                    f"parameter {i} of shape {list(a)}, while rank {rank} has parameter {i} of shape {list(b)}.")
