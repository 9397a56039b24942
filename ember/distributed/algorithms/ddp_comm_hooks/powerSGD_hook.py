"""PowerSGD gradient compression (Vogels et al., NeurIPS 2019) as a DDP communication hook, as torch's
torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.

Each gradient matrix M (n x m, a tensor viewed as (shape[0], -1)) is approximated by P Q^T of rank r:
P = M Q (allreduced, orthogonalized), Q = M^T P (allreduced), M ~ P Q^T / world_size. Only P and Q travel:
(n + m) r numbers instead of n m. Tensors too small to gain at least `min_compression_rate` (vectors,
biases) are allreduced uncompressed in one flat message. With `use_error_feedback` the part of the gradient
the approximation lost is added back to the next iteration's gradient; with `warm_start` Q is reused from
the previous iteration instead of drawn afresh. The first `start_powerSGD_iter` iterations use plain
allreduce (DDP's buckets are rebuilt after the first one, so compression state is keyed by bucket index
only once they are stable). The random Q's come from ember's generator seeded from the state's NumPy
RandomState, in torch's order, so ember and torch draw the same Q's.
"""

import logging
import math
from collections import defaultdict

from . import default_hooks as default

__all__ = ["PowerSGDState", "powerSGD_hook", "batched_powerSGD_hook"]

logger = logging.getLogger(__name__)


def _ember():
    import ember

    return ember


def _orthogonalize(matrices, epsilon=0):
    """Orthonormalize the columns of each matrix of a batch (b, n, r), r <= n, in place: Gram-Schmidt for
    rank <= 2 or 16-bit floats, else a QR decomposition (torch's choice)."""
    if not (len(matrices.shape) == 3 and matrices.shape[2] <= matrices.shape[1]):
        raise AssertionError
    rank = matrices.shape[2]
    if rank <= 2 or matrices.dtype in (_ember().float16, _ember().bfloat16):
        _orthogonalize_gram_schmidt(matrices, epsilon=epsilon)
    else:
        q, _ = _ember().linalg.qr(matrices)
        matrices.copy_(q)


def _orthogonalize_gram_schmidt(matrices, epsilon=0):
    torch = _ember()
    num_cols = matrices.shape[2]
    for i in range(num_cols):
        col = matrices[:, :, i:i + 1]
        if epsilon == 0:
            col /= torch.norm(col, dim=1, keepdim=True)
        else:
            col /= torch.norm(col, dim=1, keepdim=True) + epsilon
        if i + 1 < num_cols:
            rest = matrices[:, :, i + 1:]
            rest -= torch.sum(col * rest, dim=1, keepdim=True) * col


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    uncompressed = num_rows * num_cols
    compressed = (num_rows + num_cols) * matrix_approximation_rank
    return compressed * min_compression_rate < uncompressed, uncompressed, compressed


def _report_compression_stats(bucket, state):
    if bucket.is_last() and state.iter >= state.next_stats_report:
        stats = state.compression_stats()
        logger.info("Compression stats: iter %s, total before compression %s, total after compression %s, "
                    "rate %s", state.iter, stats[1], stats[2], stats[0])
        state.next_stats_report = state.iter + state.compression_stats_logging_frequency


class PowerSGDState:
    """The state of PowerSGD across iterations: its settings, error feedback, P and Q memories, the RNG.

    Args:
        process_group: the group to allreduce over (None: the world)
        matrix_approximation_rank (int): the rank r of the approximation (default 1)
        start_powerSGD_iter (int): plain allreduce before this iteration (default 1000; > 1 with
            error feedback or warm start)
        min_compression_rate (float): compress a matrix only if that divides its size by at least this
        use_error_feedback (bool), warm_start (bool), orthogonalization_epsilon (float), random_seed (int)
    """

    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter", "min_compression_rate",
                 "orthogonalization_epsilon", "use_error_feedback", "warm_start", "batch_tensors_with_same_shape",
                 "rng", "error_dict", "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency", "next_stats_report"]

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,
                 min_compression_rate=2, use_error_feedback=True, warm_start=True, orthogonalization_epsilon=0,
                 random_seed=0, compression_stats_logging_frequency=10_000, batch_tensors_with_same_shape=False):
        import numpy as np

        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is "
                             "enabled, because PowerSGD can only be applied after the first two iterations in DDP.")
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)  # (torch's: the seeds of the random Q's)
        self.error_dict = {}
        self.p_memory_dict = {}
        self.q_memory_dict = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self):
        logger.warning("NOTE: Process group is not serializable and excluded from a saved state.")
        return {slot: getattr(self, slot) for slot in self.__slots__ if slot != "process_group"}

    def __setstate__(self, state):
        self.process_group = _ember().distributed.group.WORLD
        logger.warning("NOTE: Process group will be set to a default group (i.e. the world size). If a different "
                       "group is desired, please set `self.process_group` after PowerSGD state is loaded.")
        for slot, value in state.items():
            setattr(self, slot, value)

    def maybe_increase_iter(self, bucket):
        """Count an iteration when the last bucket of one has been handled."""
        if bucket.is_last():
            self.iter += 1
        if self.iter == self.start_powerSGD_iter:
            logger.info("Start to apply PowerSGD after %s iterations.", self.iter)

    def compression_stats(self):
        """(compression rate, numbers before, numbers after) over the compressed iterations so far."""
        after = self.total_numel_after_compression
        rate = self.total_numel_before_compression / after if after > 0 else 0
        return rate, self.total_numel_before_compression, after


def _split_for_compression(state, tensors):
    """The matrices worth compressing (as (n, m) views), the others, and the sizes of all P's and Q's."""
    to_compress, uncompressed = [], []
    ps_size = qs_size = 0
    for tensor in tensors:
        matrix = tensor.view(tensor.shape[0], -1)
        n, m = matrix.shape
        r = min(n, m, state.matrix_approximation_rank)
        worth, before, after = _should_compress(n, m, r, state.min_compression_rate)
        state.total_numel_before_compression += before
        if worth:
            to_compress.append(matrix)
            ps_size += n * r
            qs_size += m * r
            state.total_numel_after_compression += after
        else:
            uncompressed.append(tensor)
            state.total_numel_after_compression += before
    return to_compress, uncompressed, ps_size, qs_size


def powerSGD_hook(state, bucket):
    """Compress each gradient matrix of the bucket to rank `state.matrix_approximation_rank` with PowerSGD,
    allreducing only the low-rank factors (and, flat, the tensors too small to compress).

    Example::
        >>> state = PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=10)
        >>> ddp_model.register_comm_hook(state, powerSGD_hook)
    """
    torch = _ember()
    dist = torch.distributed
    group = state.process_group if state.process_group is not None else dist.group.WORLD
    world_size = group.size()
    input_tensor = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return default._allreduce_fut(group, input_tensor)

    dtype = input_tensor.dtype
    index = bucket.index()
    input_copy = None
    if state.use_error_feedback:
        if index in state.error_dict:
            input_tensor.add_(state.error_dict[index])
        else:
            logger.info("A zero tensor of length %s that represents local error is created.", input_tensor.shape[0])
            state.error_dict[index] = torch.zeros(input_tensor.shape[0], dtype=dtype)
        input_copy = input_tensor.detach().clone()

    to_compress, uncompressed, ps_size, qs_size = _split_for_compression(state, bucket.gradients())
    _report_compression_stats(bucket, state)
    uncompressed_memory = (torch.cat([t.view(-1) for t in uncompressed]) if uncompressed
                           else torch.tensor([], dtype=dtype))

    need_random_qs = False
    if not state.warm_start or index not in state.p_memory_dict:
        need_random_qs = True
        if state.warm_start:
            logger.info("Allocating contiguous memory of length %s for Ps, and of length %s for Qs, "
                        "respectively.", ps_size, qs_size)
        state.p_memory_dict[index] = torch.empty(ps_size, dtype=dtype)
        state.q_memory_dict[index] = torch.empty(qs_size, dtype=dtype)

    shape_to_tensors = defaultdict(list)
    for t in to_compress:
        shape_to_tensors[t.shape].append(t)
    batches = []
    for same in shape_to_tensors.values():
        if state.batch_tensors_with_same_shape:
            batches.append(same[0].unsqueeze(0) if len(same) == 1 else torch.stack(same))
        else:
            batches.extend(t.unsqueeze(0) for t in same)

    ps, qs = [], []
    p_idx = q_idx = 0
    for t in batches:
        b, n, m = t.shape
        r = min(n, m, state.matrix_approximation_rank)
        ps.append(state.p_memory_dict[index][p_idx:p_idx + b * n * r].view(b, n, r))
        qs.append(state.q_memory_dict[index][q_idx:q_idx + b * m * r].view(b, m, r))
        p_idx += b * n * r
        q_idx += b * m * r

    if not need_random_qs:
        for q in qs:
            _orthogonalize(q, state.orthogonalization_epsilon)
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(state.rng.randint(1_000_000_000))
            for q in qs:
                q.copy_(torch.randn(*q.shape, dtype=dtype))
                _orthogonalize(q, state.orthogonalization_epsilon)

    for t, q, p in zip(batches, qs, ps):
        p.copy_(torch.bmm(t, q))

    # NOTE [ PowerSGD's waits ]: torch chains `then` callbacks that each wait on the next allreduce. A
    # callback may run on the thread that completes the communication (ember.distributed's worker), where
    # such a wait could never finish; so the hook issues the same allreduces in torch's order from its own
    # thread (the uncompressed tensors, then P, whose waits it does itself, then Q), and only the last step,
    # which waits on nothing, is a callback. The arithmetic is torch's, in torch's order.
    uncompressed_work = dist.all_reduce(uncompressed_memory, group=group, async_op=True)
    p_work = dist.all_reduce(state.p_memory_dict[index], group=group, async_op=True)
    uncompressed_work.wait()
    memory = uncompressed_memory.div_(world_size)
    idx = 0
    for t in uncompressed:
        t.copy_(memory[idx:idx + t.numel()].view_as(t))
        idx += t.numel()
    p_work.wait()
    for p in ps:
        _orthogonalize(p, state.orthogonalization_epsilon)
    for t, p, q in zip(batches, ps, qs):
        q.copy_(torch.bmm(t.transpose(1, 2), p))
    q_fut = dist.all_reduce(state.q_memory_dict[index], group=group, async_op=True).get_future()

    def decompress(fut):
        state.q_memory_dict[index] = fut.value()[0].div_(world_size)
        for p, q, t in zip(ps, qs, batches):
            t.copy_(torch.bmm(p, q.transpose(1, 2)))
        if state.batch_tensors_with_same_shape:
            for t in batches:
                if t.shape[0] == 1:
                    continue
                for i, original in enumerate(shape_to_tensors[t.shape[1:]]):
                    original.copy_(t[i])
        if state.use_error_feedback:
            state.error_dict[index] = input_copy - input_tensor
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        state.maybe_increase_iter(bucket)
        return input_tensor

    return q_fut.then(decompress)


def batched_powerSGD_hook(state, bucket):
    """PowerSGD over the whole bucket at once: the flat buffer, zero-padded to a square matrix, compressed
    to rank `state.matrix_approximation_rank` (fewer, larger factors than `powerSGD_hook`)."""
    torch = _ember()
    dist = torch.distributed
    group = state.process_group if state.process_group is not None else dist.group.WORLD
    world_size = group.size()
    input_tensor = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return default._allreduce_fut(group, input_tensor)

    total_length = input_tensor.shape[0]
    state.total_numel_before_compression += total_length
    side = math.ceil(math.sqrt(total_length))
    state.total_numel_after_compression += side * state.matrix_approximation_rank * 2
    padded = torch.zeros(side * side, dtype=input_tensor.dtype)
    padded[:total_length] = input_tensor
    _report_compression_stats(bucket, state)
    index = bucket.index()
    input_copy = None
    if state.use_error_feedback:
        if index in state.error_dict:
            padded.add_(state.error_dict[index])
        else:
            logger.info("A zero tensor of length %s that represents local error is created.", side * side)
            state.error_dict[index] = torch.zeros(side * side, dtype=input_tensor.dtype)
        input_copy = padded.detach().clone()
    matrix = padded.view(side, side)
    if not state.warm_start or index not in state.p_memory_dict:
        if state.warm_start:
            logger.info("Initializing low-rank tensors P and Q, each of which has a shape of %s x %s.", side,
                        state.matrix_approximation_rank)
        state.p_memory_dict[index] = torch.empty(side, state.matrix_approximation_rank, dtype=input_tensor.dtype)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(state.rng.randint(1_000_000_000))
            state.q_memory_dict[index] = torch.randn(side, state.matrix_approximation_rank, dtype=input_tensor.dtype)
    _orthogonalize(state.q_memory_dict[index].unsqueeze(0))
    state.p_memory_dict[index].copy_(torch.matmul(matrix, state.q_memory_dict[index]))
    dist.all_reduce(state.p_memory_dict[index], group=group)  # (NOTE [ PowerSGD's waits ])
    _orthogonalize(state.p_memory_dict[index].unsqueeze(0))
    state.q_memory_dict[index].copy_(torch.matmul(matrix.t(), state.p_memory_dict[index]))
    q_fut = dist.all_reduce(state.q_memory_dict[index], group=group, async_op=True).get_future()

    def decompress(fut):
        state.q_memory_dict[index] = fut.value()[0].div_(world_size)
        matrix.copy_(torch.matmul(state.p_memory_dict[index], state.q_memory_dict[index].t()))
        if state.use_error_feedback:
            state.error_dict[index] = input_copy - padded
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        input_tensor.copy_(padded[:total_length])
        state.maybe_increase_iter(bucket)
        return input_tensor

    return q_fut.then(decompress)
