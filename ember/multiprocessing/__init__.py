"""ember.multiprocessing: Python's `multiprocessing` plus torch's helpers (torch.multiprocessing's API).

Everything in `multiprocessing` is re-exported (`Process`, `Queue`, `Pool`, `get_context`,
`set_start_method`, ...), with `spawn` / `start_processes` / `ProcessContext` to run a function in N
processes and join them, and the sharing-strategy switches. Under `ember run` every child process these
start, whatever the start method, imports ember for `torch` (NOTE [ The alias in child processes ]).

Importing it registers ember's tensor reducer with multiprocessing, as importing torch.multiprocessing does:
a tensor sent through a queue, a pipe or as a Process argument moves to shared memory and travels as a
handle, so the receiver's in-place writes are seen by the sender (NOTE [ Shared storages ] in
ember/_shared_memory.py). `set_sharing_strategy` picks how the memory is shared.
"""

import multiprocessing
import sys
from multiprocessing import *  # noqa: F403

from .._shared_memory import register_reductions as _register_reductions
from .spawn import (
    ENV_VAR_PARALLEL_START,
    ProcessContext,
    ProcessException,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "SpawnContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "ENV_VAR_PARALLEL_START"]
__all__ += multiprocessing.__all__

if sys.platform in ("darwin", "win32"):
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (one of `get_all_sharing_strategies()`)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, "
                             f"expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """Return the current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """Return a set of sharing strategies supported on a current system."""
    return _all_sharing_strategies


_register_reductions()
