"""`spawn` / `start_processes`: run `fn(i, *args)` in N processes and join them (torch.multiprocessing.spawn).

If a process fails, the others are terminated and the parent raises `ProcessRaisedException` carrying the
child's traceback, or `ProcessExitedException` with its exit code or signal, with torch's messages. Each
child writes its traceback to its own temporary file (one-shot, no queue to deadlock on), as torch's does.
"""

import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

log = logging.getLogger(__name__)

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Exception raised when a process failed due to an exception raised by the code."""


class ProcessExitedException(ProcessException):
    """Exception raised when a process failed due to signal or exited with a specific code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _set_pdeathsig(sig):
    """Linux: have the kernel send `sig` to this process when its parent dies (torch does it in C)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(sig))  # 1 is PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _wrap(fn, i, args, error_file):
    _set_pdeathsig(signal.SIGINT)  # non-daemonic children end when their parent does
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # SIGINT; killed by the parent, do nothing
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:  # the parent re-raises it with the original traceback
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout):
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Join the processes; True once all are joined, False if some are still running.

        If one exited with a non-zero status, the others are terminated (after `grace_period` seconds, if
        given) and the failure is raised: `ProcessRaisedException` with the child's traceback, or
        `ProcessExitedException` naming its exit code or signal.
        """
        if len(self.sentinels) == 0:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return len(self.sentinels) == 0
        self._stop_all(grace_period)
        raise self._failure(error_index)

    def _stop_all(self, grace_period):
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL",
                            process.pid)
                process.kill()
            process.join()

    def _failure(self, error_index):
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                return ProcessExitedException(f"process {error_index:d} terminated with signal {name}",
                                              error_index=error_index, error_pid=failed.pid,
                                              exit_code=exitcode, signal_name=name)
            return ProcessExitedException(f"process {error_index:d} terminated with exit code {exitcode:d}",
                                          error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n" + original_trace
        return ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes running `fn(i, *args)` with `start_method`; join them unless `join=False`
    (then return the `ProcessContext`). With "forkserver" and TORCH_MP_PARALLEL_START=1 they start in
    parallel, as in torch."""
    start_parallel = start_method == "forkserver" and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1"
    mp = multiprocessing.get_context(start_method)
    error_files = [None] * nprocs
    processes = [None] * nprocs

    def start_process(i):
        tf = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle", delete=False)
        tf.close()
        os.unlink(tf.name)  # the file exists only if the child failed with an exception
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        return i, process, tf.name

    if start_parallel:
        with ThreadPoolExecutor(max_workers=nprocs) as executor:
            futures = [executor.submit(start_process, i) for i in range(nprocs)]
            started = [f.result() for f in as_completed(futures)]
    else:
        started = [start_process(i) for i in range(nprocs)]
    for idx, process, tf_name in started:
        error_files[idx], processes[idx] = tf_name, process
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    r"""Spawns ``nprocs`` processes that run ``fn`` with ``args``.

    If one of the processes exits with a non-zero exit status, the remaining processes are killed and an
    exception is raised with the cause of termination. An exception raised in a child is forwarded with its
    traceback.

    Args:
        fn (function): called as ``fn(i, *args)`` in each process, ``i`` its index. It must be defined at the
            top level of a module so it can be pickled.
        args (tuple): arguments passed to ``fn``.
        nprocs (int): number of processes to spawn.
        join (bool): perform a blocking join on all processes.
        daemon (bool): the spawned processes' daemon flag.
        start_method (str): (deprecated) always ``spawn``; use ``start_processes()`` for another.

    Returns:
        None if ``join`` is ``True``, :class:`~ProcessContext` if ``join`` is ``False``

    Example::

        >>> def work(rank, n):
        ...     print(rank, ember.ones(n).sum())
        >>> ember.multiprocessing.spawn(work, args=(3,), nprocs=2)
    """
    if start_method != "spawn":
        msg = (f"This method only supports start_method=spawn (got: {start_method}).\n"
               "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)")
        warnings.warn(msg, FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
