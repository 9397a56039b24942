"""ember.distributed: torch.distributed's namespace. For now, what a single-process script touches.

NOTE [ distributed is not available yet ]
Scripts written for one machine and many call `torch.distributed.is_available()` before touching process
groups (`if dist.is_available() and dist.is_initialized(): ...`). ember has no process groups or
collectives yet (they are to run over MPI, see docs/architecture.md), so it answers False: the answer a
torch built without distributed support gives, which sends such scripts down their single-process path.
When process groups exist this returns True.

NOTE [ Import-time names of torch.distributed ]
A single-process script may still name the distributed API at its top (`from torch.distributed import
init_process_group, destroy_process_group`) and never call it, or call the queries that answer without a
process group. So these names exist: `is_initialized()` is False, and the calls that need the default
process group (`get_rank`, `get_world_size`, `barrier`, `all_reduce`, ...) raise torch's ValueError for an
uninitialized group, as torch does before `init_process_group`. Making a group (`init_process_group`,
`new_group`) fails saying ember does not implement it yet. Any other name fails naming what was asked for.
"""

import enum

from .._torch_alias import missing_attribute

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "new_group",
           "get_rank", "get_world_size", "barrier", "all_reduce", "all_gather", "broadcast", "reduce",
           "all_gather_object", "broadcast_object_list", "get_backend", "ReduceOp"]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available():
    """Whether the distributed package can be used: False until ember has process groups.

    See NOTE [ distributed is not available yet ].
    """
    return False


def is_initialized():
    """Whether the default process group has been initialized: never, in ember yet."""
    return False


def _not_implemented(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"ember does not implement torch.distributed.{name} yet")
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "Make a process group: not implemented yet (NOTE [ Import-time names of torch.distributed ])."
    return fn


def _needs_group(name):
    def fn(*args, **kwargs):
        raise ValueError(_NOT_INITIALIZED)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "Needs the default process group, which is never initialized yet: raises torch's ValueError."
    return fn


init_process_group = _not_implemented("init_process_group")
new_group = _not_implemented("new_group")
get_rank = _needs_group("get_rank")
get_world_size = _needs_group("get_world_size")
get_backend = _needs_group("get_backend")
barrier = _needs_group("barrier")
all_reduce = _needs_group("all_reduce")
all_gather = _needs_group("all_gather")
broadcast = _needs_group("broadcast")
reduce = _needs_group("reduce")
all_gather_object = _needs_group("all_gather_object")
broadcast_object_list = _needs_group("broadcast_object_list")


def destroy_process_group(group=None):
    """Destroy a process group; with none initialized, torch's AssertionError."""
    raise AssertionError("Process group cannot be None")


class _RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


_RedOpType.__name__ = _RedOpType.__qualname__ = "RedOpType"


class ReduceOp:
    """The reduction operations of collectives (`ReduceOp.SUM`, ...), members of `ReduceOp.RedOpType`."""

    RedOpType = _RedOpType
    SUM, AVG, PRODUCT, MIN, MAX = _RedOpType.SUM, _RedOpType.AVG, _RedOpType.PRODUCT, _RedOpType.MIN, _RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = _RedOpType.BAND, _RedOpType.BOR, _RedOpType.BXOR, _RedOpType.PREMUL_SUM


__getattr__ = missing_attribute(__name__)
