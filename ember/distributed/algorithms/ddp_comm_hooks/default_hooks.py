"""The stock DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks.default_hooks).

A hook is `hook(state, bucket) -> Future[Tensor]`: `state` here is the process group (None: the world);
the future's tensor holds the bucket's averaged gradients. `allreduce_hook` is what DDP does without a
hook (divide by the group size, then sum); the compression hooks cast the bucket to a 16-bit float before
the allreduce and back into the bucket after it, halving what travels.
"""

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _dist():
    from .... import distributed as dist

    return dist


def _group(process_group):
    return process_group if process_group is not None else _dist().group.WORLD


def _allreduce_fut(process_group, tensor):
    """Average `tensor` over the group: divide by its size, then an async sum; the future gives the tensor."""
    group = _group(process_group)
    tensor.div_(group.size())
    return _dist().all_reduce(tensor, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """Average the bucket's gradients over `process_group` (DDP's default, written as a hook).

    Example::
        >>> ddp_model.register_comm_hook(process_group, allreduce_hook)
    """
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    from .... import _tensor

    group = _group(process_group)
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut):
        value = fut if isinstance(fut, _tensor.Tensor) else fut.value()[0]
        buffer.copy_(value)
        return buffer

    return _dist().all_reduce(compressed, group=group, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket in float16: cast, divide by the group size, allreduce, cast back into the bucket.

    Example::
        >>> ddp_model.register_comm_hook(process_group, fp16_compress_hook)
    """
    from .... import _dtypes

    return _compress_hook(_dtypes.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As `fp16_compress_hook`, in bfloat16 (DDP refuses to register it without CUDA/NCCL, as torch does;
    called directly it works)."""
    from .... import _dtypes

    return _compress_hook(_dtypes.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook, name):
    def wrapper_hook(hook_state, bucket):
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            out = bucket.buffer()
            out.copy_(fut.value())
            return out

        return fut.then(decompress)

    wrapper_hook.__name__ = wrapper_hook.__qualname__ = name
    return wrapper_hook


def fp16_compress_wrapper(hook):
    """Wrap `hook` so that it sees the bucket cast to float16 (e.g. around PowerSGD)."""
    from .... import _dtypes

    return _compress_wrapper(_dtypes.float16, hook, "fp16_compress_wrapper_hook")


def bf16_compress_wrapper(hook):
    """Wrap `hook` so that it sees the bucket cast to bfloat16."""
    from .... import _dtypes

    return _compress_wrapper(_dtypes.bfloat16, hook, "bf16_compress_wrapper_hook")
