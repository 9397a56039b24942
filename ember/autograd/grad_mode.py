"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

The flags are thread-local, as in torch: a `no_grad` block in one thread does not switch off recording in
another. The dispatcher reads `state.enabled` on every op, so it is a plain attribute of a
`threading.local` subclass whose class attributes are the defaults each new thread starts with.
"""

import functools
import inspect

__all__ = [
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled", "set_multithreading_enabled", "enforce_grad_layout_policy",
]


from .._grad_state import state  # (the state is below the dispatcher; this is the API over it)


def is_grad_enabled():
    """True when operations are being recorded for autograd."""
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _DecoratorContextManager:
    """A context manager that can also decorate a function (or generator function)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("Cannot decorate classes; it is ambiguous")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                except StopIteration as e:
                    return e.value
                while True:
                    try:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                    except StopIteration as e:
                        return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A decorator context manager that also decorates without parentheses: `@no_grad` as `@no_grad()`
    (torch's class of the same name)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording inside the block (or the decorated function)."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording inside the block, even within `no_grad`."""

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = True

    def __exit__(self, *exc):
        state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off. Takes effect at once (usable as a plain call) and, used as a context
    manager, restores the previous mode on exit."""

    def __init__(self, mode):
        self.prev = state.enabled
        self.mode = bool(mode)
        state.enabled = self.mode

    def __call__(self, func):
        state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors: they can never be saved for
    backward later (torch's error), which is what lets torch skip version counting for them."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode_or_fn=True):
        if callable(mode_or_fn) and not isinstance(mode_or_fn, bool):
            return cls()(mode_or_fn)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = (state.enabled, state.inference)
        self.pushed = None
        if self.mode:
            if not state.inference:
                from .._modes import push_mode
                from ._inference import InferenceModeHandler

                self.pushed = InferenceModeHandler()
                push_mode(self.pushed)
            state.enabled, state.inference = False, True
        else:  # as torch's InferenceMode(false): grad recording on, whatever it was
            state.enabled, state.inference = True, False

    def __exit__(self, *exc):
        state.enabled, state.inference = self.prev
        if self.pushed is not None:
            from .._modes import pop_mode

            pop_mode(self.pushed)

    def clone(self):
        return self.__class__(self.mode)


# ---- settings that are context managers too (torch.autograd.grad_mode) --------------------------------------


class _FlagSetting(_DecoratorContextManager):
    """A per-thread flag set on construction and restored on exit (or when used as a decorator)."""

    _flag = None

    def __init__(self, mode):
        self.prev = getattr(state, self._flag)
        setattr(state, self._flag, bool(mode))
        self.mode = mode

    def __call__(self, orig_func):
        setattr(state, self._flag, self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        setattr(state, self._flag, self.prev)

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_FlagSetting):
    """Context manager (or function) that turns multithreaded backwards on or off.

    torch runs each device's part of a backward on its own thread; ember's engine always runs on the calling
    thread, so on a CPU the setting changes nothing but is kept and restored as torch keeps it.
    """

    _flag = "multithreading"


class enforce_grad_layout_policy(_FlagSetting):
    """Context manager (or function) that controls the gradient layout contract.

    With ``enable=True`` (the default), a gradient accumulated into a fresh ``.grad`` is laid out like its
    parameter; with ``False``, ``.grad`` keeps the incoming gradient's layout, as torch's stolen gradient
    does. Thread-local.
    """

    _flag = "grad_layout_enforced"

    def __init__(self, enable=True):
        super().__init__(enable)
