"""DDP's Reducer: gradient buckets, their allreduce launched during backward, and the wait at its end.

torch's Reducer is C++ (torch/csrc/distributed/c10d/reducer.cpp); this is ember's own, in Python over
ember ops and `ember.distributed` collectives, with torch's observable behaviour:

- Parameters are grouped into buckets of at most `bucket_cap_mb` (per dtype). The first iteration uses
  one bucket per dtype (unless `find_unused_parameters`), records the order in which gradients become
  ready, and the buckets are rebuilt in that order before the next forward: bucket 0 holds the first
  gradients backward produces, capped at 1 MiB (`_DEFAULT_FIRST_BUCKET_BYTES`) so its allreduce starts
  early, the others at `bucket_cap_mb`. See NOTE [ Bucket assignment ].
- A post-accumulate-grad hook on every parameter marks it ready; its gradient is copied into its bucket's
  flat buffer (scaled by 1/world_size when no comm hook is registered, as torch folds the average into
  that copy); when a bucket has all its gradients, and all buckets before it were launched, its
  allreduce (or the comm hook) is launched asynchronously, while backward goes on.
- The first launch queues a final callback with the autograd engine; it runs when backward ends, waits
  for every bucket, and copies the results back into `.grad` (or leaves `.grad` as a view of the bucket
  with `gradient_as_bucket_view`). See NOTE [ When the reduction finishes ].
"""

import time

import numpy as np

from ... import _dtypes
from ..._tensor import _version_counter
from ...autograd.grad_mode import no_grad
from ...distributed._c10d import GradBucket
from ...distributed.distributed_c10d import _array  # (the payload helper of the collectives)

__all__ = ["GradBucket", "Reducer", "compute_bucket_assignment_by_size"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
_MB = 1024 * 1024


def _nbytes(p):
    return p.numel() * p.element_size()


# NOTE [ Bucket assignment ]
# torch's `_compute_bucket_assignment_by_size`: tensors are taken in the given order (the registration
# order, or the order their gradients became ready); each dtype fills its own open bucket; a bucket closes
# as soon as its size reaches its limit (`>=`), and each dtype walks the list of limits (the first bucket
# may have a smaller limit than the rest, the last limit repeats). Without an explicit order the buckets
# are sorted by the smallest index they hold; DDP then reverses that list for the Reducer, so the first
# iteration reduces the last-registered parameters first.
def compute_bucket_assignment_by_size(params, limits, order=None):
    """Lists of parameter indices, one per bucket, and each bucket's size limit (torch's rules above)."""
    indices = list(range(len(params))) if order is None else list(order)
    open_buckets = {}  # dtype -> [indices, size, limit position]
    result = []
    for i in indices:
        p = params[i]
        state = open_buckets.setdefault(p.dtype, [[], 0, 0])
        state[0].append(i)
        state[1] += _nbytes(p)
        limit = limits[state[2]]
        if state[1] >= limit:
            result.append((state[0], limit))
            state[0], state[1] = [], 0
            state[2] = min(state[2] + 1, len(limits) - 1)
    for idx, _size, pos in open_buckets.values():
        if idx:
            result.append((idx, limits[pos]))
    if order is None:
        result.sort(key=lambda r: min(r[0]))
    return [r[0] for r in result], [r[1] for r in result]


class _Bucket:
    __slots__ = ("indices", "buffer", "views", "arrays", "pending", "work", "future", "limit")

    def __init__(self, indices, params, limit):
        from ..._ops.creation import zeros

        self.indices = indices
        self.limit = limit
        total = sum(params[i].numel() for i in indices)
        self.buffer = zeros(total, dtype=params[indices[0]].dtype)
        self.views = []
        offset = 0
        for i in indices:
            n = params[i].numel()
            self.views.append(self.buffer[offset:offset + n].view(params[i].shape))
            offset += n
        self.arrays = [_array(v) for v in self.views]  # their NumPy views (NOTE [ Gradients in and out ])
        self.pending = len(indices)
        self.work = None
        self.future = None


# NOTE [ DDP's allreduce from the backward thread ]
# A bucket's allreduce is MPI's non-blocking allreduce, issued by the gradient hook that fills the bucket, in
# the thread running backward (`_all_reduce_from_caller`), not by the process group's worker thread (NOTE
# [ Asynchronous collectives run on a worker thread ] in ember/distributed/_mpi.py). Every collective of the
# worker costs two handoffs of the GIL between threads, and the thread asking for the GIL waits for the
# running one to drop it: up to the switch interval (5 ms) while backward runs Python, per bucket, on a
# step of a few ms. Only when the worker still has collectives queued does a bucket go behind them.

# NOTE [ Overlap ]
# A bucket's allreduce is a non-blocking collective launched from the gradient hook that fills the bucket;
# it overlaps with the rest of backward only if it progresses meanwhile. MPI progresses a request inside MPI
# calls, so every later gradient hook tests the requests in flight (`Work.is_completed()`, MPI_Test): cheap,
# and it moves each allreduce a step on while the engine computes the next gradients. The share of
# allreduce time hidden behind backward is measured by benchmarks/distributed_ddp.py.

# NOTE [ Gradients in and out ]
# Each bucket keeps its views' NumPy arrays, and a gradient goes into its view in one NumPy pass with the
# average folded in (`np.multiply(grad, 1/world_size, out=view)`, torch's `mul_out` into the bucket view),
# and back into `.grad` in one `np.copyto` at the end: no temporary, no dispatch, as torch's Reducer copies
# in C++. With `gradient_as_bucket_view` `.grad` becomes the view itself: while it stays so (zeroed, not
# set to None, between steps) backward accumulates into the bucket and only the average is applied, in
# place. Writes done in NumPy count in the version counter of the `.grad` they changed, as the in-place ops
# they replace did.

# NOTE [ When the reduction finishes ]
# As torch: `prepare_for_backward` (called at the end of DDP's forward when gradients will be synced)
# arms the reducer; the backward's first ready gradient queues `_finalize` with the engine (torch queues it
# once every bucket is launched; queueing it at the first hook is the same moment for the user, since
# callbacks run after backward either way). If some parameter never became ready, the buckets never all
# launch and `_finalize` does nothing: the next `prepare_for_backward` raises torch's "Expected to have
# finished reduction in the prior iteration" naming the parameters that got no gradient.
class Reducer:
    """Buckets the gradients of `params` and allreduces them over `process_group` during backward."""

    def __init__(self, params, bucket_indices, bucket_limits, process_group, bucket_bytes_cap,
                 find_unused_parameters, gradient_as_bucket_view, first_bucket_bytes_cap):
        self.params = params
        self.process_group = process_group
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_bytes_cap = first_bucket_bytes_cap
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = False
        self.comm_hook = None
        self.comm_hook_state = None
        self._ddp_join_work = None
        self.num_iterations = 0
        self.require_finalize = False
        self.expect_autograd_hooks = False
        self.has_rebuilt_buckets = False
        self.rebuilt_order = []
        self.unused = []
        self.static_hook_counts = None
        self.hook_counts = [0] * len(params)
        self.used = [False] * len(params)
        self.last_wait_s = 0.0
        self._initialize_buckets(bucket_indices, bucket_limits)
        self._handles = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(params)]

    # ---- buckets ----------------------------------------------------------------------------------------

    def _initialize_buckets(self, bucket_indices, bucket_limits):
        self.buckets = [_Bucket(idx, self.params, lim) for idx, lim in zip(bucket_indices, bucket_limits)]
        self.locator = {}
        for b, bucket in enumerate(self.buckets):
            for k, i in enumerate(bucket.indices):
                self.locator[i] = (b, k)
        if self.gradient_as_bucket_view:  # existing gradients move into their bucket's memory
            with no_grad():
                for bucket in self.buckets:
                    for k, i in enumerate(bucket.indices):
                        p = self.params[i]
                        if p.grad is not None:
                            bucket.views[k].copy_(p.grad)
                            p.grad = bucket.views[k]

    def _should_rebuild(self):
        return (self.static_graph or not self.find_unused_parameters) and not self.has_rebuilt_buckets

    def rebuild_buckets(self):
        """Rebuild the buckets in the order gradients became ready in the first iteration (once)."""
        if not self._should_rebuild() or not self.rebuilt_order:
            return False
        order = list(dict.fromkeys(self.rebuilt_order))
        order += [i for i in range(len(self.params)) if i not in set(order)]
        limits = [self.first_bucket_bytes_cap, self.bucket_bytes_cap]
        indices, lims = compute_bucket_assignment_by_size(self.params, limits, order)
        self._initialize_buckets(indices, lims)
        self.has_rebuilt_buckets = True
        self.rebuilt_order = []
        return True

    def bucket_indices(self):
        """The parameter indices of each bucket, in reduction order."""
        return [list(b.indices) for b in self.buckets]

    # ---- the iteration ----------------------------------------------------------------------------------

    def _world_size(self):
        from ... import distributed as dist

        return dist.get_world_size(self.process_group)

    def _div_factor(self):
        """What the default reduction divides by: the world size, or with `join(divide_by_initial_world_size=
        False)` the number of ranks still training (the forward's join allreduce counted them)."""
        if self._div is None:
            self._div = self._world_size()
            if self._ddp_join_work is not None:
                work, by_initial = self._ddp_join_work
                work.wait()
                if not by_initial:
                    self._div = int(work.result()[0].item())
                self._ddp_join_work = None
        return self._div

    def prepare_for_backward(self, outputs):
        """Arm the reducer for the coming backward; `outputs` (with find_unused_parameters) are searched
        for the parameters the graph reaches."""
        self._ensure_prior_reduction_finished()
        self.require_finalize = True
        self.expect_autograd_hooks = True
        self.num_iterations += 1
        self.next_bucket = 0
        self.finalize_queued = False
        self.hook_counts = [0] * len(self.params)
        self.used = [False] * len(self.params)
        self.marked_unused = False
        self._div = None
        self._first_unfinished = 0
        self._ready_flags = [[False] * len(b.indices) for b in self.buckets]
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
            bucket.work = bucket.future = None
        if self.find_unused_parameters and not self.static_graph:
            reached = _reachable_leaves(outputs)
            self.unused = [i for i, p in enumerate(self.params) if id(p) not in reached]
        elif self.static_graph and self.static_hook_counts is not None:
            self.unused = [i for i, n in enumerate(self.static_hook_counts) if n == 0]
        else:
            self.unused = []

    def _ensure_prior_reduction_finished(self):
        if not self.require_finalize:
            return
        missing = [i for i in range(len(self.params)) if not self._is_ready(i)]
        from ... import distributed as dist

        rank = dist.get_rank(self.process_group)
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. This "
            "error indicates that your module has parameters that were not used in producing loss. You can "
            "enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` "
            "to `torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function "
            "outputs participate in calculating loss. \nIf you already have done the above, then the "
            "distributed data parallel module wasn't able to locate the output tensors in the return value "
            "of your module's `forward` function. Please include the loss function and the structure of the "
            "return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable)."
            f"\nParameter indices which did not receive grad for rank {rank}: "
            + " ".join(str(i) for i in missing)
            + "\n In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO "
            "or DETAIL to print out information about which particular parameters did not receive gradient "
            "on this rank as part of this error")

    def _is_ready(self, i):
        b, k = self.locator[i]
        return self._ready_flags[b][k]

    def _make_hook(self, index):
        def hook(param):
            self._autograd_hook(index)
        return hook

    def _autograd_hook(self, index):
        if not self.expect_autograd_hooks:
            return  # a backward outside DDP's forward, or under no_sync: gradients stay local
        from ...autograd import engine

        if not self.finalize_queued:
            self.finalize_queued = True
            engine.queue_callback(self._finalize)
        self.used[index] = True
        self.hook_counts[index] += 1
        if self.static_graph and self.static_hook_counts is not None:
            if self.hook_counts[index] < self.static_hook_counts[index]:
                return  # (a parameter used several times: ready at its last gradient)
        if self._should_rebuild():
            self.rebuilt_order.append(index)
        if self.static_graph and self.static_hook_counts is None:
            return  # static graph's first iteration: everything is reduced at the end
        if not self.marked_unused:
            self.marked_unused = True
            for i in self.unused:
                self._mark_ready(i)
        self._mark_ready(index)
        self._progress()

    def _progress(self):
        """Let launched allreduces advance while backward computes: MPI moves a non-blocking request on
        only when it is tested, so each gradient hook tests the ones in flight (NOTE [ Overlap ])."""
        for b in range(self._first_unfinished, self.next_bucket):
            work = self.buckets[b].work
            if work is None or not work.is_completed():
                break
            self._first_unfinished = b + 1

    def _mark_ready(self, index):
        b, k = self.locator[index]
        flags = self._ready_flags[b]
        if flags[k]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of the following "
                "reasons: 1) Use of a module parameter outside the `forward` function. Please make sure "
                "model parameters are not shared across multiple concurrent forward-backward passes. or "
                "try to use _set_static_graph() as a workaround if this module graph does not change during "
                "training loop.2) Reused parameters in multiple reentrant backward passes. For example, if "
                "you use multiple `checkpoint` functions to wrap the same part of your model, it would "
                "result in the same set of parameters been used by different reentrant backward passes "
                "multiple times, and hence marking a variable ready multiple times. DDP does not support "
                "such use cases in default. You can try to use _set_static_graph() as a workaround if your "
                "module graph does not change over iterations.")
        flags[k] = True
        bucket = self.buckets[b]
        self._copy_grad_in(bucket, k, index)
        bucket.pending -= 1
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._launch(self.next_bucket)
            self.next_bucket += 1

    def _copy_grad_in(self, bucket, k, index):
        """NOTE [ Gradients in and out ]: one NumPy pass, the average folded in (torch's `mul_out`)."""
        p = self.params[index]
        grad = p._grad
        arr = bucket.arrays[k]
        if grad is None:
            arr.fill(0)
            return
        scale = None if self.comm_hook is not None else 1.0 / self._div_factor()
        if not _aliases(grad, bucket.views[k]):
            if scale is None:
                np.copyto(arr, _array(grad))
            else:
                np.multiply(_array(grad), scale, out=arr)
            if self.gradient_as_bucket_view:
                p.grad = bucket.views[k]
        elif scale is not None:
            np.multiply(arr, scale, out=arr)
            _bump(grad)

    def _launch(self, b):
        from ... import distributed as dist

        bucket = self.buckets[b]
        if self.comm_hook is None:  # NOTE [ DDP's allreduce from the backward thread ]
            bucket.work = dist.distributed_c10d._all_reduce_from_caller(bucket.buffer, self.process_group)
        else:
            grad_bucket = GradBucket(b, bucket.buffer, bucket.views, [self.params[i] for i in bucket.indices],
                                     b == len(self.buckets) - 1)
            bucket.future = self.comm_hook(self.comm_hook_state, grad_bucket)

    def _finalize(self):
        """The final callback of backward: wait for every bucket, write the averaged gradients back."""
        if self.static_graph and self.static_hook_counts is None:
            self._finalize_static_first_iteration()
        if self.next_bucket < len(self.buckets):
            return  # some parameter got no gradient: the next forward reports it
        self.expect_autograd_hooks = False
        self.require_finalize = False
        start = time.perf_counter()
        globally_used = self._globally_used() if self.find_unused_parameters else None
        with no_grad():
            for bucket in self.buckets:
                result = bucket.buffer
                if bucket.work is not None:
                    bucket.work.wait()
                else:
                    result = bucket.future.wait()
                    if isinstance(result, (list, tuple)):
                        result = result[0]
                    if result is not bucket.buffer:
                        bucket.buffer.copy_(result.reshape(bucket.buffer.shape))
                self.last_wait_s = time.perf_counter() - start  # (what backward waited for communication)
                for k, i in enumerate(bucket.indices):
                    if globally_used is not None and not globally_used[i]:
                        continue  # a parameter no rank used keeps its .grad untouched
                    self._copy_grad_out(self.params[i], bucket.views[k], bucket.arrays[k])

    def _copy_grad_out(self, p, view, arr):
        grad = p._grad
        if self.gradient_as_bucket_view:
            if grad is None or not _aliases(grad, view):
                p.grad = view
            else:
                _bump(grad)
        elif grad is None:
            p.grad = view.clone()
        else:
            np.copyto(_array(grad), arr)
            _bump(grad)

    def _globally_used(self):
        from ... import distributed as dist
        from ..._ops.creation import tensor

        used = tensor([1 if u else 0 for u in self.used], dtype=_dtypes.int32)
        dist.all_reduce(used, group=self.process_group)
        return [bool(v) for v in used.tolist()]

    def _finalize_static_first_iteration(self):
        """static_graph's first iteration: learn each parameter's hook count, then reduce everything."""
        counts = list(self.hook_counts)
        self.static_hook_counts = counts
        self.rebuilt_order += [i for i in range(len(self.params)) if counts[i] == 0]
        for i in range(len(self.params)):
            self._mark_ready(i)

    # ---- hooks and joins --------------------------------------------------------------------------------

    def register_comm_hook(self, state, hook):
        if self.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self.comm_hook, self.comm_hook_state = hook, state

    def match_all_reduce_for_bwd_pass(self):
        """A joined rank's part of the others' backward: the same collectives, over zeros."""
        from ... import distributed as dist
        from ..._ops.creation import zeros

        pending = []
        for b, bucket in enumerate(self.buckets):
            buf = bucket.buffer.new_zeros(bucket.buffer.shape)
            if self.comm_hook is None:
                pending.append(dist.all_reduce(buf, group=self.process_group, async_op=True))
            else:
                views = [buf[o:o + v.numel()].view(v.shape) for o, v in zip(_offsets(bucket.views), bucket.views)]
                grad_bucket = GradBucket(b, buf, views, [self.params[i] for i in bucket.indices],
                                         b == len(self.buckets) - 1)
                pending.append(self.comm_hook(self.comm_hook_state, grad_bucket))
        for w in pending:
            w.wait()
        if self.find_unused_parameters:
            dist.all_reduce(zeros(len(self.params), dtype=_dtypes.int32), group=self.process_group)

    def remove_hooks(self):
        for h in self._handles:
            h.remove()
        self._handles = []


def _bump(t):
    """Count an in-place write to `t` done in NumPy (as an in-place op would)."""
    _version_counter(t)[0] += 1


def _offsets(views):
    out, o = [], 0
    for v in views:
        out.append(o)
        o += v.numel()
    return out


def _aliases(a, b):
    """Whether tensors a and b are the same memory (b a view of the bucket: the same data pointer)."""
    return a.data_ptr() == b.data_ptr() and a.shape == b.shape


def _reachable_leaves(outputs):
    """ids of the leaf tensors the autograd graph of `outputs` reaches (DDP's unused-parameter search)."""
    seen, leaves = set(), set()
    stack = [t.grad_fn for t in outputs if getattr(t, "grad_fn", None) is not None]
    for t in outputs:
        if getattr(t, "grad_fn", None) is None and getattr(t, "requires_grad", False):
            leaves.add(id(t))
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return leaves

