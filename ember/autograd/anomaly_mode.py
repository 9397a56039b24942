"""Anomaly detection: the forward stack trace of the op whose backward failed, and NaN checks."""

import traceback
import warnings

from . import graph

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_enabled = graph._anomaly  # shared flag: graph.record captures traces while it is on
_check_nan = [True]


def is_anomaly_enabled():
    return _enabled[0]


def is_anomaly_check_nan_enabled():
    return _check_nan[0]


def capture_trace():
    return "".join(traceback.format_stack()[:-3])


class set_detect_anomaly:
    """Turn anomaly detection on or off (takes effect at once; restores on exit as a context manager)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_enabled[0], _check_nan[0])
        _enabled[0], _check_nan[0] = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _enabled[0], _check_nan[0] = self.prev


class detect_anomaly:
    """Context manager (or decorator) enabling anomaly detection inside."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_enabled[0], _check_nan[0])
        _enabled[0], _check_nan[0] = True, self.check_nan

    def __exit__(self, *exc):
        _enabled[0], _check_nan[0] = self.prev

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def run_checked(node, grads):
    """Run `node` printing the forward trace if it fails, and refuse NaN gradients."""
    try:
        out = node.apply(grads)
    except Exception:
        if node._anomaly_trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                          f"{node._anomaly_trace}", UserWarning, stacklevel=2)
        raise
    if _check_nan[0]:

        for i, g in enumerate(out):
            if g is not None and (g.is_floating_point() or g.is_complex()) and bool(g.isnan().any()):
                if node._anomaly_trace:
                    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the "
                                  f"error:\n{node._anomaly_trace}", UserWarning, stacklevel=2)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return out
