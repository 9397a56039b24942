"""torch.distributed.elastic.multiprocessing.errors: `record`, `ErrorHandler`, `ChildFailedError`.

A worker whose entry point is decorated with `@record` writes the exception that ends it to the JSON file
named by TORCHELASTIC_ERROR_FILE (the launcher sets it per rank), in torch's format; the launcher reads
these files to report which rank failed first, with its traceback (`ChildFailedError.format_msg`).
"""

import functools
import json
import os
import signal
import socket
import time
import traceback

__all__ = ["record", "ErrorHandler", "ChildFailedError", "ProcessFailure", "get_error_handler"]


class ErrorHandler:
    """Writes an exception to the error file named by TORCHELASTIC_ERROR_FILE (torch's JSON layout)."""

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self):
        pass

    def record_exception(self, e):
        path = self._get_error_file_path()
        if not path:
            return
        data = {"message": {"message": f"{type(e).__name__}: {e}",
                            "extraInfo": {"py_callstack": traceback.format_exc(),
                                          "timestamp": str(int(time.time()))}}}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            json.dump(data, fh)


def get_error_handler():
    return ErrorHandler()


def record(fn=None, error_handler=None):
    """Decorate a worker's entry point so the exception that ends it is written to the rank's error file.

    Example::

        >>> @record
        ... def main():
        ...     ...
    """
    if error_handler is None:
        error_handler = get_error_handler()

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            error_handler.initialize()
            try:
                return f(*args, **kwargs)
            except SystemExit as se:
                if se.code == 0:
                    return None
                raise
            except Exception as e:
                error_handler.record_exception(e)
                raise
        return wrapper
    return wrap(fn) if fn is not None else wrap


class ProcessFailure:
    """One failed rank: its exit code, pid, error file and (when the file exists) message and traceback."""

    def __init__(self, local_rank, pid, exitcode, error_file, rank=None, timestamp=None):
        self.local_rank, self.pid, self.exitcode, self.error_file = local_rank, pid, exitcode, error_file
        self.rank = local_rank if rank is None else rank
        self.message, self.traceback = "", None
        self.timestamp = int(timestamp or time.time())
        if error_file and os.path.isfile(error_file):
            with open(error_file) as fh:
                data = json.load(fh)
            msg = data.get("message", {})
            self.message = msg.get("message", "")
            self.traceback = msg.get("extraInfo", {}).get("py_callstack")
            self.timestamp = int(msg.get("extraInfo", {}).get("timestamp", self.timestamp))
        elif exitcode is not None and exitcode < 0:
            try:
                name = signal.Signals(-exitcode).name
            except ValueError:
                name = f"<Unknown signal {-exitcode}>"
            self.message = f"Signal {-exitcode} ({name}) received by PID {pid}"

    def signal_name(self):
        return signal.Signals(-self.exitcode).name if self.exitcode is not None and self.exitcode < 0 else ""

    def timestamp_isoformat(self):
        return time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(self.timestamp))


class ChildFailedError(Exception):
    """Raised by the launcher when ranks fail: its message names the first failure (root cause) and the
    others, as torchrun's does."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        super().__init__(self.format_msg())

    def get_first_failure(self):
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim="=", section_delim="-"):
        title = f"{self.name} FAILED"
        root_rank, root = self.get_first_failure()
        others = [self._entry(i + 1, r, f) for i, (r, f) in enumerate(sorted(self.failures.items()))
                  if r != root_rank]
        width = 60
        lines = ["", boarder_delim * width, title, section_delim * width, "Failures:"]
        lines += others or ["  <NO_OTHER_FAILURES>"]
        lines += [section_delim * width, "Root Cause (first observed failure):", self._entry(0, root_rank, root),
                  boarder_delim * width]
        return "\n".join(lines)

    def _entry(self, idx, rank, f):
        if f.error_file and os.path.isfile(f.error_file):
            tb = (f.traceback or f.message).rstrip("\n").replace("\n", "\n  ")
            error_file = f.error_file
        else:
            error_file = "<N/A>"
            tb = f.message or "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        return (f"[{idx}]:\n  time      : {f.timestamp_isoformat()}\n  host      : {socket.getfqdn()}\n"
                f"  rank      : {rank} (local_rank: {f.local_rank})\n"
                f"  exitcode  : {f.exitcode} (pid: {f.pid})\n  error_file: {error_file}\n  traceback : {tb}")
