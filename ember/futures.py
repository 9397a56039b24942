"""ember.futures: torch.futures' `Future`, what asynchronous collectives and DDP comm hooks return.

A `Future` holds a value (or an exception) once completed. `then(cb)` returns a new future completed
with `cb(self)` when this one completes (at once if it already has). `wait()` blocks until completion
and returns the value (raising the stored exception).

NOTE [ Futures that complete on wait ]
ember has no background thread driving communication: a non-blocking MPI request progresses when it is
tested or waited on. So a future may be given a `_wait_fn` by whoever made it (a collective's work handle):
`wait()` on an incomplete future calls it, and it completes the future (running the callbacks, which
complete the futures `then` made). A future made by `then` waits by waiting on its parent. A plain
`Future()` with nobody to complete it raises on `wait()` instead of hanging.
"""

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A placeholder for the result of an asynchronous computation (torch.futures.Future)."""

    def __init__(self, *, devices=None):
        self._done = False
        self._value = None
        self._exception = None
        self._callbacks = []
        self._wait_fn = None

    def done(self):
        """Whether the future has a value or an exception."""
        return self._done

    def wait(self):
        """Block until the future completes; return its value or raise its exception."""
        if not self._done and self._wait_fn is not None:
            fn, self._wait_fn = self._wait_fn, None
            fn()
        if not self._done:
            raise RuntimeError("Future.wait(): the future was never completed and nothing can complete it")
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        """The value of a completed future (raising its exception if it holds one)."""
        if not self._done:
            raise RuntimeError("Future.value(): the future has not completed yet")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, result):
        """Complete the future with `result` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with the exception `result`; `wait()` and `value()` raise it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, exception):
        if self._done:
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                               "only be marked completed once.")
        self._done, self._value, self._exception = True, value, exception
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def then(self, callback):
        """A new future completed with `callback(self)` once this future completes."""
        child = Future()

        def run(fut):
            try:
                child.set_result(callback(fut))
            except Exception as e:  # the callback's failure is the child's result
                child.set_exception(RuntimeError(
                    f"Got the following error when running the callback: {type(e).__name__}: {e}"))

        if self._done:
            run(self)
        else:
            self._callbacks.append(run)
            child._wait_fn = self._wait_quietly
        return child

    def add_done_callback(self, callback):
        """Run `callback(self)` once the future completes (at once if it has)."""
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def _wait_quietly(self):
        try:
            self.wait()
        except Exception:
            pass  # (the exception reaches the children through their callbacks)


def collect_all(futures):
    """A future completed with the list of `futures` once all of them have completed."""
    out = Future()
    futures = list(futures)

    def finish():
        for f in futures:
            f._wait_quietly()

    out._wait_fn = lambda: (finish(), out._done or out.set_result(futures))
    if all(f.done() for f in futures):
        out.set_result(futures)
    return out


def wait_all(futures):
    """Wait for every future and return their values (raising the first exception met)."""
    return [f.wait() for f in futures]
