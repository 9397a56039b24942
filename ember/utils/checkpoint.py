"""ember.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.

A checkpointed region keeps only its inputs during the forward pass; the tensors its ops would have saved
for backward are recomputed by running the region again when backward needs them. Two implementations,
chosen by `use_reentrant` as in torch:

- reentrant (`CheckpointFunction`): a custom autograd Function whose forward runs the region under
  no_grad, and whose backward reruns it with grad enabled and calls backward on that fresh graph (a
  backward inside the backward);
- non-reentrant: the region runs with grad enabled under a saved-tensors hook (`_checkpoint_hook`) whose
  pack step keeps a small `_Holder` instead of the tensor; the first unpack in a backward pass reruns the
  region under `_recomputation_hook`, which fills the holders, and stops as soon as the last one is filled
  (NOTE [ Early stop ]).

Selective checkpointing (`create_selective_checkpoint_contexts`) is a pair of dispatcher modes (ember
`Mode`s below autograd, as torch's are TorchDispatchModes) that save the outputs of the ops a policy
chooses in the forward and hand them back instead of recomputing them. See docs/architecture.md.
"""

import contextlib
import enum
import itertools
import traceback
import warnings
import weakref
from collections import defaultdict

import ember

from .._dispatch import OpCall
from .._modes import Mode, redispatch, redispatch_inplace
from .._naming import named
from .._tensor import Tensor
from ..autograd import graph as _graph
from ..autograd.grad_mode import state as _grad_mode
from ..autograd.graph import SavedTensor, saved_tensors_hooks
from ._pytree import tree_map

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states", "set_device_states",
           "noop_context_fn", "set_checkpoint_early_stop", "DefaultDeviceType", "set_checkpoint_debug_enabled",
           "CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS", "GraphExecGroup"]

_DEFAULT_DETERMINISM_MODE = "default"

_checkpoint_debug_enabled = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Context manager overriding every checkpoint's ``debug`` flag (None: defer to each call's flag).

    Args:
        enabled (bool or None): whether checkpoint errors carry the logs of the forward and the
            recomputation.
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


def detach_variable(inputs):
    """Each tensor of the tuple `inputs` detached, keeping its requires_grad flag."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn, as torch does, when no tensor among `inputs` requires grad (reentrant checkpoint)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


# ---- devices and the state a recomputation restores ----------------------------------------------------


def _get_device_module(device="cuda"):
    if device == "meta":
        return ember.device("meta")
    return getattr(ember, device)


class DefaultDeviceType:
    """The device type whose state checkpoint saves when no input is on an accelerator: ``"cpu"`` on a
    machine without one (as a CPU-only torch)."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            acc = ember.accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else "cpu"
        return DefaultDeviceType._default_device_type


def _infer_device_type(*args):
    types = []

    def add(arg):
        if isinstance(arg, Tensor) and arg.device.type != "cpu":
            types.append(arg.device.type)
        return arg

    tree_map(add, args)
    kinds = set(types)
    if len(kinds) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of devices. Device state "
            "will only be saved for devices of a single device type, and the remaining devices will be ignored. "
            "Consequently, if any checkpointed functions involve randomness, this may result in incorrect "
            "gradients. (Note that if CUDA devices are among the devices detected, it will be prioritized; "
            f"otherwise, the first device encountered will be selected.)\nDevice types: {sorted(kinds)} first "
            f"device type: {types[0]}", stacklevel=2)
    if not types:
        return DefaultDeviceType.get_device_type()
    return "cuda" if "cuda" in kinds else types[0]


def get_device_states(*args):
    """The ids of the accelerator devices among `args`' tensors and their generators' states; ember
    computes on the CPU (and meta), so both lists are empty unless such a tensor exists."""
    ids = []

    def add(arg):
        if isinstance(arg, Tensor) and arg.device.type not in ("cpu", "meta"):
            ids.append(arg.get_device())
        return arg

    tree_map(add, args)
    module = _get_device_module(_infer_device_type(*args))
    states = []
    for i in ids:
        with module.device(i):
            states.append(module.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restore the generator states `get_device_states` returned."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = _get_device_module(device_type)
    for d, s in zip(devices, states):
        with module.device(d):
            module.set_rng_state(s)


# NOTE [ Autocast state in a recomputation ]
# torch reruns a region under the autocast state its forward had (for the CPU and for the inputs' device
# type), so a recomputation computes in the same dtypes even when backward runs outside the autocast block
# (the usual case): the state is read when the forward runs and re-entered around the recomputation.

def _get_autocast_kwargs(device_type="cuda"):
    device_kwargs = None
    if ember.amp.is_autocast_available(device_type):
        device_kwargs = {"enabled": ember.is_autocast_enabled(device_type),
                         "dtype": ember.get_autocast_dtype(device_type),
                         "cache_enabled": ember.is_autocast_cache_enabled()}
    cpu_kwargs = {"enabled": ember.is_autocast_enabled("cpu"), "dtype": ember.get_autocast_dtype("cpu"),
                  "cache_enabled": ember.is_autocast_cache_enabled()}
    return device_kwargs, cpu_kwargs


def _autocast_contexts(device_type, device_kwargs, cpu_kwargs):
    """The autocast contexts a recomputation runs under (NOTE [ Autocast state in a recomputation ])."""
    amp = ember.amp
    dev = amp.autocast(device_type=device_type, **device_kwargs) \
        if amp.is_autocast_available(device_type) else contextlib.nullcontext()
    return dev, amp.autocast("cpu", **cpu_kwargs)


# ---- the reentrant checkpoint --------------------------------------------------------------------------


class CheckpointFunction(ember.autograd.Function):
    """The reentrant checkpoint: forward under no_grad, backward reruns the region with grad enabled and
    backpropagates through the fresh graph (a backward inside the backward)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.device_type = _infer_device_type(*args)
        ctx.device_autocast_kwargs, ctx.cpu_autocast_kwargs = _get_autocast_kwargs(ctx.device_type)
        if preserve_rng_state:
            ctx.fwd_cpu_state = ember.get_rng_state()
            ctx.had_device_in_fwd = False
            if getattr(_get_device_module(ctx.device_type), "_initialized", False):
                ctx.had_device_in_fwd = True
                ctx.fwd_devices, ctx.fwd_device_states = get_device_states(*args)
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with ember.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not ember.autograd._is_checkpoint_valid():
            raise RuntimeError(named(
                "When use_reentrant=True, ember.utils.checkpoint is incompatible with .grad() or passing an "
                "`inputs` parameter to .backward(). To resolve this error, you can either set "
                "use_reentrant=False, or call .backward() without passing the `inputs` argument."))
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        rng_devices = ctx.fwd_devices if ctx.preserve_rng_state and ctx.had_device_in_fwd else []
        with ember.random.fork_rng(devices=rng_devices, enabled=ctx.preserve_rng_state,
                                   device_type=ctx.device_type):
            if ctx.preserve_rng_state:
                ember.set_rng_state(ctx.fwd_cpu_state)
                if ctx.had_device_in_fwd:
                    set_device_states(ctx.fwd_devices, ctx.fwd_device_states, device_type=ctx.device_type)
            detached = detach_variable(tuple(inputs))
            dev_ac, cpu_ac = _autocast_contexts(ctx.device_type, ctx.device_autocast_kwargs,
                                                ctx.cpu_autocast_kwargs)
            with ember.enable_grad(), dev_ac, cpu_ac:
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs, grads = [], []
        for o, g in zip(outputs, args):
            if isinstance(o, Tensor) and o.requires_grad:
                outs.append(o)
                grads.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        ember.autograd.backward(outs, grads)
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)


def noop_context_fn():
    """The default ``context_fn``: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# ---- checkpoint and checkpoint_sequential -------------------------------------------------------------

_NO_USE_REENTRANT = (
    "ember.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for "
    "more details on the differences between the two variants.")

_SUPPRESSED = (
    "ember.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised during "
    "the checkpointed forward. This is not supported because checkpoint cannot return a value for a failed "
    "forward.")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """Checkpoint a model or part of the model: keep `args`, recompute the rest in backward.

    Args:
        function: the region to run, called as ``function(*args, **kwargs)``.
        args: its inputs.

    Keyword args:
        use_reentrant (bool): the reentrant implementation (True) or the one on saved-tensor hooks (False,
            recommended). Not passing it warns as torch 2.13 does and means True.
        preserve_rng_state (bool): restore the RNG state of the forward for the recomputation (default True).
        context_fn: returns two context managers, the forward runs under the first and the recomputation
            under the second (non-reentrant only).
        determinism_check (str): ``"default"`` compares shapes, dtypes and devices of the recomputed tensors
            with the saved ones; ``"none"`` does not (non-reentrant only).
        debug (bool): errors carry the logs of the forward and of the recomputation (non-reentrant only).
        early_stop (bool): stop recomputing once every needed tensor exists (non-reentrant only;
            `set_checkpoint_early_stop` overrides it).

    Example::

        >>> out = ember.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(named(_NO_USE_REENTRANT), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(function, preserve, context_fn, determinism_check, debug,
                                                  early_stop, *args, **kwargs)
    next(gen)
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(named(_SUPPRESSED)) from stop
        raise
    try:
        next(gen)
    except StopIteration:
        return ret
    raise AssertionError(named("ember.utils.checkpoint: expected context_fn generator to yield exactly twice, "
                               "but it yielded more than twice."))


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` in order, checkpointing all but the last of `segments` chunks of them.

    Args:
        functions: an ``nn.Sequential`` or a list of modules or functions, each taking one tensor.
        segments (int): how many chunks to make.
        input (Tensor): the first function's input.
        use_reentrant (bool): as for `checkpoint` (not passing it warns and means True).
        preserve_rng_state (bool, keyword): as for `checkpoint`.
    """
    if use_reentrant is None:
        warnings.warn(named(
            "ember.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants."), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, ember.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1  # the last chunk runs without a checkpoint
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- the non-reentrant checkpoint ---------------------------------------------------------------------

# NOTE [ Nested checkpoints ]
# As torch's: a tensor saved inside several checkpoints is managed by the innermost one only, and the
# inputs of an inner checkpoint are saved (`_CheckpointFrame.save_inputs` makes SavedTensors, which go
# through whatever saved-tensor hook is active) by its parent. So unpacking a tensor saved in the inner
# region first unpacks the inner region's inputs, which recomputes the outer region, which re-enters the
# inner checkpoint (its recomputation only registers holders again); then the inner region is recomputed.
# A recomputation starts as if no checkpoint were active: `_recomputation_hook` is pushed on top of
# whatever hooks the backward runs under, and checkpoints met during it are respected.
#
# NOTE [ Early stop ]
# A recomputation only has to fill the holders packed in the forward. Its pack hook counts the tensors
# saved, and when the count reaches the number saved in the forward it raises `_StopRecomputationError`,
# which the unpack hook catches: the rest of the region never runs. Holders are keyed per backward pass
# (the engine's `current_pass()`, or a fresh key outside any backward), so a second backward over a
# retained graph recomputes again; a recomputed tensor is dropped as soon as it is unpacked.

_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints made inside stop recomputing early (NOTE [ Early stop ]); it
    needs to be active when the forward runs, not during backward."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class _Handle:
    pass


class _Holder:
    """What the forward's pack hook keeps in place of a tensor: per backward pass, a handle to the
    recomputed tensor. It refers to its frame so `saved_tensors_bytes` can count the region's inputs."""

    __slots__ = ("handles", "frame", "__weakref__")

    def __init__(self, frame):
        self.handles = {}
        self.frame = frame

    def _saved_tensors(self):
        """The tensors this holder keeps alive: its region's saved inputs and its recomputed tensors not
        yet unpacked (read by `ember.autograd.graph.saved_tensors_bytes`)."""
        frame = self.frame
        out = [a for a in frame.saved_args if isinstance(a, SavedTensor)]
        for gid, h in self.handles.items():
            if h is not None and h in frame.recomputed[gid]:
                out.append(frame.recomputed[gid][h])
        return out


class _CheckpointFrame:
    """One non-reentrant checkpointed region: its inputs, how to recompute it, its holders, and what was
    recomputed per backward pass."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, metadata_fn):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args):
        self.saved_args = [SavedTensor(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(named(
                "ember.utils.checkpoint: A different number of tensors was saved during the original forward "
                f"and recomputation.\nNumber of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n{_debug_tip()}"))
        different = []
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) is not None)
            recomputed = self.recomputed[gid][holder.handles[gid]]
            now = self.metadata_fn(recomputed)
            if self.x_metadatas[idx] != now:
                different.append((idx, self.x_metadatas[idx], now))
        if different:
            text = "".join(f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: {r}\n"
                           for i, m, r in different)
            raise CheckpointError(named(
                "ember.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                f"than during the forward pass.\n{text}.\n{_debug_tip()}"))


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. Please report this bug "
                             "by filing an issue to PyTorch.")


def _debug_tip():
    return named(
        "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
        "`ember.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
        "with `with ember.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
        "enable checkpoint\u2011debug mode globally.\n\n"
        "If this error occurs under ember.compile with automatic_dynamic_shapes enabled,\n"
        "it may be because the recomputation selected a different compiled graph than the\n"
        "forward pass (e.g., a dynamic graph instead of the original static graph).\n"
        "To fix this, either:\n"
        "  - Use ember._dynamo.mark_dynamic() to explicitly mark varying dimensions as\n"
        "    dynamic upfront, avoiding the static-to-dynamic transition.\n"
        "  - Call ember._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache\n"
        "    reordering, which can change which graph is checked first between forward\n"
        "    and recompute.\n"
        "See https://github.com/pytorch/pytorch/issues/166926 for more details and\n"
        "workaround examples.\n")


class CheckpointError(RuntimeError):
    """Raised when a non-reentrant checkpoint's recomputation does not match its forward."""


def _default_meta_extractor(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _StopRecomputationError(Exception):
    pass


class _recomputation_hook(saved_tensors_hooks):
    """The hooks a recomputation runs under: each tensor saved fills the next holder of the forward."""

    def __init__(self, target_frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = target_frame_ref()
            _internal_assert(frame is not None)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:  # a backward inside the region, early stop off
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(named(
                    "ember.utils.checkpoint: trying to save more tensors during recomputation than during the "
                    f"original forward pass.\n{_debug_tip()}"))
            holder = frame.weak_holders[idx]()
            if holder is not None:  # (None: freed by a backward inside the forward)
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError  # NOTE [ Early stop ]
            return x

        self.pack = pack_hook
        super().__init__(pack_hook, lambda x: x)


# NOTE [ Stopping before the last op runs ]
# torch's autograd saves an op's inputs before its kernel runs, so its recomputation stops before the op
# that saves the last tensor computes anything. ember records (and saves) after the kernel. So that a
# recomputation costs what torch's does (a linear layer ending a region is not multiplied again only to
# be thrown away), `_StopBeforeKernel`, a mode above autograd active during a recomputation with early
# stop, sees each op first: an op that will save exactly its tensor inputs (`saves="all"` without its
# output, grad on, an input requiring grad: what `graph._record_general` then saves, in that order), and
# whose inputs are the last tensors the frame waits for, has them packed right away; the last pack raises
# `_StopRecomputationError` and the kernel never runs. Only while the recomputation's own hook is the
# innermost (a checkpoint nested in the region saves into its own frame).

class _StopBeforeKernel(Mode):
    def __init__(self, hook, frame, gid):
        self.hook, self.frame, self.gid = hook, frame, gid

    def dispatch(self, op, inputs, params):
        if op.saves == "all" and not op.save_output and op.differentiable and _grad_mode.enabled \
                and _graph._saved_hooks and _graph.current_saved_hooks() \
                and _graph.current_saved_hooks()[-1][0] is self.hook.pack:
            tensors = [t for t in inputs if isinstance(t, Tensor)]
            if any(t.requires_grad for t in tensors) and \
                    self.frame.recomp_counter[self.gid] + len(tensors) == len(self.frame.weak_holders):
                for t in tensors:
                    self.hook.pack(t)
        return redispatch(op, inputs, params)


_UNPACKED_TWICE = (
    "ember.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. {extra}If you "
    "are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please open an issue "
    "with details on your use case.")


class _checkpoint_hook(saved_tensors_hooks):
    """The hooks a checkpointed forward runs under: a holder is kept instead of each saved tensor, and the
    first unpack of a backward pass recomputes the region."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder(frame)
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with ember.no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = GraphExecGroup._get_current_group()
            if gid is None:
                gid = ember.autograd.engine.current_pass()
                if gid is None:  # an unpack outside any backward: a key of its own
                    gid = next(_fresh_gid)
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                hook = _recomputation_hook(weakref.ref(frame), gid)
                stop = _StopBeforeKernel(hook, frame, gid) if frame.early_stop else contextlib.nullcontext()
                try:
                    with hook, ember.enable_grad(), stop:
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = ("Performing two backward calls that overlap (i.e. require the same saved activation "
                             "in order to compute gradients) is not allowed while under the "
                             "ember.utils.checkpoint.GraphExecGroup context. ")
                raise CheckpointError(named(_UNPACKED_TWICE.format(extra=extra)))
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        if frame.unpack_error_cb is not None:
            def unpack_with_error_cb(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)
            super().__init__(pack_hook, unpack_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


_fresh_gid = itertools.count(1 << 62)


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True, context_fn=noop_context_fn,
                                            determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False,
                                            early_stop=True, *args, **kwargs):
    """The non-reentrant checkpoint as a generator: the code before its first yield runs before the
    region, the code after it once the region has run (``checkpoint`` drives it)."""
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _get_debug_context_and_cb()
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(f"determinism_check should be one of {list(_allowed_determinism_checks_to_fns.keys())}, "
                         f"but got {determinism_check}")
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    device_type = _infer_device_type(*args)
    device_module = _get_device_module(device_type)
    forward_context, recompute_context = context_fn()
    device_kwargs, cpu_kwargs = _get_autocast_kwargs(device_type)
    had_device_in_fwd = False
    if preserve_rng_state:
        fwd_cpu_state = ember.get_rng_state()
        if getattr(device_module, "_initialized", False):
            had_device_in_fwd = True
            fwd_devices, fwd_device_states = get_device_states(*args)

    def recompute_fn(*inputs):
        rng_devices = fwd_devices if preserve_rng_state and had_device_in_fwd else []
        with ember.random.fork_rng(devices=rng_devices, enabled=preserve_rng_state, device_type=device_type):
            if preserve_rng_state:
                ember.set_rng_state(fwd_cpu_state)
                if had_device_in_fwd:
                    set_device_states(fwd_devices, fwd_device_states, device_type=device_type)
            dev_ac, cpu_ac = _autocast_contexts(device_type, device_kwargs, cpu_kwargs)
            with dev_ac, cpu_ac, recompute_context:
                fn(*inputs, **kwargs)

    early = _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop
    frame = _CheckpointFrame(recompute_fn, early, unpack_error_cb, metadata_fn)
    if not ember.is_grad_enabled():
        yield
        return
    frame.save_inputs(*args)
    suppressed = False
    with _checkpoint_hook(frame), forward_context:
        try:
            yield
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError(named(_SUPPRESSED))
    frame.forward_completed = True
    if getattr(device_module, "_initialized", False) and preserve_rng_state and not had_device_in_fwd:
        raise RuntimeError("PyTorch's device state was initialized in the forward pass of a Checkpoint, which is "
                           "not allowed. Please open an issue if you need this feature.")


class GraphExecGroup:
    """Checkpointed regions met by backward calls under one instance of this context recompute at most
    once, however many backward calls there are (they must not overlap)."""

    _current = None

    def __enter__(self):
        if GraphExecGroup._current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *args):
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls):
        return GraphExecGroup._current


# ---- debug: the ops of the forward and of the recomputation -------------------------------------------


class _LoggingMode(Mode):
    """Records each op below autograd as torch's LoggingTensorMode prints it
    (``$2: f32[3] = aten.mul.Tensor($0, $1)``), with the Python stack it was called from."""

    level = "below"

    def __init__(self):
        self.logs, self.tbs = [], []
        self._ids = {}

    def _name(self, t):
        key = id(t)
        if key not in self._ids:
            self._ids[key] = (len(self._ids), t)  # the tensor is kept so its id stays its own
        return f"${self._ids[key][0]}"

    def _log(self, call, inputs, params, out):
        args = ", ".join([self._name(a) if isinstance(a, Tensor) else repr(a) for a in inputs]
                         + [repr(p) for p in params])
        outs = out if isinstance(out, (tuple, list)) else (out,)
        lhs = ", ".join(f"{self._name(o)}: {_short_dtype(o)}[{', '.join(map(str, o.shape))}]"
                        for o in outs if isinstance(o, Tensor))
        self.logs.append(named(f"{lhs} = ember._ops.{call!r}({args})"))
        self.tbs.append(traceback.extract_stack()[:-3])

    def dispatch(self, op, inputs, params):
        out = redispatch(op, inputs, params)
        self._log(OpCall(op, len(inputs)), inputs, params, out)
        return out

    def dispatch_inplace(self, op, self_, inputs, params):
        out = redispatch_inplace(op, self_, inputs, params)
        self._log(OpCall(op, len(inputs)), inputs, params, out)
        return out


def _short_dtype(t):
    d = t.dtype
    return {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
            "int32": "i32", "bool": "b8"}.get(str(d).split(".")[-1], str(d).split(".")[-1])


_checkpoint_error_template = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `ember.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


def _get_debug_context_and_cb():
    """The context_fn that logs the ops of the forward and of the recomputation, and the callback that
    turns a CheckpointError into one carrying both logs."""
    logs = {"fwd": None, "recompute": None}

    def context_fn():
        logs["fwd"], logs["recompute"] = _LoggingMode(), _LoggingMode()
        return logs["fwd"], logs["recompute"]

    def traces(label, mode):
        out = ""
        for i, (log, tb) in enumerate(zip(mode.logs, mode.tbs)):
            out += f"{log}   ({i + 1} of {len(mode.logs)} in {label})\n\n"
            out += "".join(f"{f.filename}:{f.lineno}:{f.name}\n" for f in tb) + "\n\n"
        return out

    def unpack_error_cb(e):
        fwd, rec = logs["fwd"], logs["recompute"]
        raise CheckpointError(named(_checkpoint_error_template.format(
            forward_traces=traces("original", fwd), recompute_traces=traces("recompute", rec),
            forward_ops="\n".join(fwd.logs), recompute_ops="\n".join(rec.logs)))) from e

    return context_fn, unpack_error_cb


# ---- selective activation checkpointing ----------------------------------------------------------------


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function gets first: ``is_recompute`` (always False: the
    policy runs in the forward only) and ``op_output``."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether an op's output is saved (``*_SAVE``), recomputed (``*_RECOMPUTE``) or offloaded
    (``*_CPU_OFFLOAD``, saved on a CPU-only machine) under selective checkpointing; ``MUST_*`` may not be
    overridden by a compiler, ``PREFER_*`` may."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b):
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


# `detach`: checkpointing itself detaches a different number of times in the forward and the recomputation
SAC_IGNORED_OPS = {"detach"}

_SAVED_POLICIES = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE, CheckpointPolicy.MUST_CPU_OFFLOAD,
                   CheckpointPolicy.PREFER_CPU_OFFLOAD)


class _VersionWrapper:
    """A cached output with the version it had, so a later in-place change is refused."""

    def __init__(self, val):
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation):
        if self.version is not None and not allow_cache_entry_mutation and self.val._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _detach(x):
    return x.detach() if isinstance(x, Tensor) else x


# NOTE [ Selective checkpointing as two modes ]
# Both modes sit below autograd, where torch's TorchDispatchModes sit: in the forward, `_CachingMode` runs
# each op, asks the policy, and keeps a detached alias of the outputs the policy saves, keyed by the op
# and its call count; in the recomputation, `_CachedMode` hands those back instead of running the op (and
# runs the others). Autograd records on whatever they return, so the recomputed graph saves the cached
# tensors. A cached output is handed back once (a second backward through the region is refused, as in
# torch), and `detach` is not counted. In-place ops always run: handing back a cached result would skip
# the write.

_SAC_MISMATCH = ("This can happen if the operations in the checkpointed region are nondeterministic or depend "
                 "on global state that changed between forward and backward.")
_RECOMPUTE = object()
_CONSUMED = object()


class _CachingMode(Mode):
    level = "below"

    def __init__(self, policy_fn, storage):
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter = defaultdict(int)

    def dispatch(self, op, inputs, params):
        out = redispatch(op, inputs, params)
        if op.name in SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                OpCall(op, len(inputs)), *inputs, *params)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVED_POLICIES:
            self.storage[op][idx] = tree_map(lambda x: _VersionWrapper(_detach(x)), out)
        else:
            self.storage[op][idx] = _RECOMPUTE
        return out


class _CachedMode(Mode):
    level = "below"

    def __init__(self, storage, allow_cache_entry_mutation=False):
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter = defaultdict(int)

    def __enter__(self):
        self.func_counter.clear()  # so a second backward is told "an extra time", not "not found"
        return super().__enter__()

    def dispatch(self, op, inputs, params):
        if op.name in SAC_IGNORED_OPS:
            return redispatch(op, inputs, params)
        idx = self.func_counter[op]
        self.func_counter[op] += 1
        func = OpCall(op, len(inputs))
        entries = self.storage.get(op)
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. {_SAC_MISMATCH}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but not found in "
                               f"storage. {_SAC_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any "
                               "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return redispatch(op, inputs, params)
        entries[idx] = _CONSUMED
        return tree_map(lambda w: w.get_val(self.allow_cache_entry_mutation), entry)


def _op_of(op):
    """The registered op an entry of a policy list names (an `OpCall` as modes see it, or the op)."""
    return op.op if isinstance(op, OpCall) else op


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The two contexts (for `checkpoint`'s ``context_fn``) of selective activation checkpointing.

    Args:
        policy_fn_or_list: a function ``policy(ctx, op, *args, **kwargs)`` returning a `CheckpointPolicy`
            (or a bool: True is MUST_SAVE) for each op of the region, or a list of ops whose outputs are
            saved (MUST_SAVE) while every other op is recomputed (PREFER_RECOMPUTE). An op is what a mode
            sees (an `OpCall`, printed ``aten.mm.default``; ops compare equal by the op they call).
        allow_cache_entry_mutation (bool): allow in-place changes to the saved outputs (default: refuse
            them in backward).

    Example::

        >>> context_fn = functools.partial(create_selective_checkpoint_contexts, policy_fn)
        >>> out = checkpoint(fn, x, y, use_reentrant=False, context_fn=context_fn)
    """
    if isinstance(policy_fn_or_list, list):
        from .._dispatch import OpDef

        for op in policy_fn_or_list:
            if not isinstance(op, (OpCall, OpDef)):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. ")
        saved = {_op_of(op) for op in policy_fn_or_list}

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if _op_of(op) in saved else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
