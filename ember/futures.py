"""ember.futures: torch.futures' `Future`, the handle an asynchronous result is delivered through.

`ember.distributed`'s `Work.get_future()` returns one; DDP communication hooks chain `then` callbacks on
it. A Future is completed once, by `set_result` or `set_exception`; `wait()` blocks until then and
returns the value (or raises the exception); callbacks added with `then` / `add_done_callback` run in
the thread that completes it (or at once, if it is already complete).
"""

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A placeholder for a result computed asynchronously (torch.futures.Future).

    Args:
        devices: accepted for torch compatibility (CPU only).

    Example::

        >>> fut = ember.futures.Future()
        >>> fut.set_result(3)
        >>> fut.then(lambda f: f.value() + 1).wait()
        4
    """

    def __init__(self, *, devices=None):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._value = None
        self._exception = None
        self._callbacks = []
        self._waiter = None  # a function that makes progress until the future completes (Work.wait)

    def done(self):
        """Whether the future has a result or an exception."""
        return self._event.is_set()

    def wait(self):
        """Block until the value is ready; return it, or raise the exception it was completed with."""
        if not self._event.is_set() and self._waiter is not None:
            self._waiter()
        self._event.wait()
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        """The value of an already completed future (raises its exception if it failed)."""
        if self._exception is not None:
            raise self._exception
        return self._value

    def _complete(self, value, exception):
        with self._lock:
            if self._event.is_set():
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exception = value, exception
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        """Complete the future with `result` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with the exception `result`; `wait()` will raise it."""
        if not isinstance(result, BaseException):
            raise TypeError("Future.set_exception expects an exception")
        self._complete(None, result)

    def add_done_callback(self, callback):
        """Run `callback(self)` once the future completes (now, if it has)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new Future completed with `callback(self)` once this one completes."""
        fut = Future()
        fut._waiter = self.wait

        def run(f):
            try:
                fut.set_result(callback(f))
            except Exception as e:  # noqa: BLE001 - delivered through the chained future
                fut.set_exception(e)
        self.add_done_callback(run)
        return fut


def collect_all(futures):
    """A Future completed with the list of `futures` once all of them are complete."""
    out = Future()
    out._waiter = lambda: [f.wait() for f in futures]
    remaining = [len(futures)]
    lock = threading.Lock()

    def one(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(list(futures))
    if not futures:
        out.set_result([])
    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures):
    """Wait for all `futures` and return their values (the first exception is raised)."""
    return [f.wait() for f in futures]
