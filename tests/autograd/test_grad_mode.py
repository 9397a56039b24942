"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode — as context managers, decorators
(including generators) and plain calls, their thread-locality, and inference tensors with torch's errors."""

import threading

import numpy as np
import pytest
from helpers import T, arr, same


def test_no_grad_enable_grad_nesting():
    def body(lib):
        x = T(lib, arr(2), True)
        out = []
        with lib.no_grad():
            out.append((lib.is_grad_enabled(), (x * 2).requires_grad))
            with lib.enable_grad():
                out.append((lib.is_grad_enabled(), (x * 2).requires_grad))
            out.append(lib.is_grad_enabled())
        out.append(lib.is_grad_enabled())
        return out
    same(body)


def test_decorators_and_generators():
    def body(lib):
        x = T(lib, arr(2), True)

        @lib.no_grad()
        def f():
            return (x * 2).requires_grad, lib.is_grad_enabled()

        @lib.no_grad()
        def gen():
            yield lib.is_grad_enabled()
            yield (x * 2).requires_grad

        @lib.enable_grad()
        def g():
            return lib.is_grad_enabled()

        @lib.set_grad_enabled(False)
        def h():
            return lib.is_grad_enabled()

        with lib.no_grad():
            inner = g()
        return f(), list(gen()), lib.is_grad_enabled(), inner, h(), lib.is_grad_enabled()
    same(body)


def test_set_grad_enabled_plain_call_and_context():
    def body(lib):
        out = []
        lib.set_grad_enabled(False)
        out.append(lib.is_grad_enabled())
        lib.set_grad_enabled(True)
        out.append(lib.is_grad_enabled())
        with lib.set_grad_enabled(False):
            out.append(lib.is_grad_enabled())
        out.append(lib.is_grad_enabled())
        with lib.no_grad():
            with lib.set_grad_enabled(True):
                out.append(lib.is_grad_enabled())
            out.append(lib.is_grad_enabled())
        return out
    same(body)


def test_no_grad_restores_on_exception():
    def body(lib):
        try:
            with lib.no_grad():
                raise ValueError("boom")
        except ValueError:
            pass
        return lib.is_grad_enabled()
    same(body)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_grad_modes_are_thread_local(mode):
    def body(lib):
        seen = {}
        started, release = threading.Event(), threading.Event()

        def worker():
            started.wait()
            x = lib.ones(2, requires_grad=True)
            seen["worker"] = (lib.is_grad_enabled(), (x * 2).requires_grad, lib.is_inference_mode_enabled())
            release.set()

        t = threading.Thread(target=worker)
        t.start()
        cm = {"no_grad": lambda: lib.no_grad(), "inference_mode": lambda: lib.inference_mode(),
              "set_grad_enabled": lambda: lib.set_grad_enabled(False)}[mode]()
        with cm:
            started.set()
            release.wait()
            seen["main"] = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
        t.join()
        return seen["worker"], seen["main"]
    same(body)


def test_new_thread_starts_with_grad_enabled():
    def body(lib):
        out = {}
        with lib.no_grad():
            t = threading.Thread(target=lambda: out.setdefault("v", lib.is_grad_enabled()))
            t.start()
            t.join()
        return out["v"]
    same(body)


# ---- inference mode ----------------------------------------------------------------------------------


def test_inference_tensors():
    def body(lib):
        x = T(lib, arr(3), True)
        n = lib.ones(3)
        with lib.inference_mode():
            a = lib.ones(3)
            b = x * 2
            d = n.view(3)
            f = n + 1
            g = a.view(3)
            state = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
            a.add_(1)
            n.add_(1)
            with lib.inference_mode(False):
                inner = (lib.is_grad_enabled(), lib.is_inference_mode_enabled(), (n + 1).is_inference())
        return (a.is_inference(), b.is_inference(), b.requires_grad, d.is_inference(), f.is_inference(),
                g.is_inference(), state, inner, (a * 2).is_inference(), a.clone().is_inference(),
                x.is_inference(), a.data.is_inference(), n, lib.is_inference_mode_enabled())
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib, a, x: (a * x).sum().backward(),
    lambda lib, a, x: a.add_(1),
    lambda lib, a, x: a.requires_grad_(),
    lambda lib, a, x: (a + x).sum().backward() or x.grad,
    lambda lib, a, x: x.mul(a),
    lambda lib, a, x: a.sum().backward(),
    lambda lib, a, x: (a.clone().requires_grad_() * 2).sum().backward(),
])
def test_inference_tensor_errors(case):
    def body(lib):
        x = T(lib, arr(3), True)
        with lib.inference_mode():
            a = lib.ones(3) * 2
        return case(lib, a, x)
    same(body)


def test_inference_mode_decorators():
    def body(lib):
        @lib.inference_mode
        def f():
            return lib.ones(2).is_inference(), lib.is_inference_mode_enabled()

        @lib.inference_mode()
        def g():
            return lib.ones(2).is_inference()

        @lib.inference_mode(False)
        def h():
            return lib.ones(2).is_inference(), lib.is_grad_enabled()

        with lib.no_grad():
            with lib.inference_mode(False):
                nested = lib.is_grad_enabled()
        return f(), g(), h(), nested, lib.is_inference_mode_enabled()
    same(body)


def test_inference_mode_inside_no_grad_and_back():
    def body(lib):
        with lib.no_grad():
            with lib.inference_mode():
                a = lib.ones(2)
            after = lib.is_grad_enabled()
        return a.is_inference(), after, lib.is_grad_enabled()
    same(body)


def test_no_grad_results_are_not_inference():
    def body(lib):
        x = T(lib, np.ones(2, np.float32), True)
        with lib.no_grad():
            y = x * 2
        return y.is_inference(), y.requires_grad, (y * x).requires_grad
    same(body)
