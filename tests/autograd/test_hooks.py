"""Hooks against torch: tensor hooks (replacing the gradient), post-accumulate-grad hooks, Node pre/post hooks
(also on AccumulateGrad), their firing order, handles' remove(), saved_tensors_hooks, queue_callback."""

import numpy as np
from helpers import T, arr, same


def test_firing_order_of_every_hook_kind():
    def body(lib):
        log = []
        x = T(lib, np.array([1.0, 2.0, 3.0], np.float32), True)
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi, go)))
        y.grad_fn.register_prehook(lambda go: log.append(("pre", go)))
        y.register_hook(lambda g: log.append(("tensor", g)))
        y.retain_grad()
        y.register_hook(lambda g: log.append(("tensor2", g)))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append(("acc post", gi, go)))
        acc.register_prehook(lambda go: log.append(("acc pre", go)))
        x.register_hook(lambda g: log.append(("leaf", g)))
        x.register_post_accumulate_grad_hook(lambda p: log.append(("post acc", p.grad.clone())))
        y.sum().backward()
        return log, y.grad, acc.variable is x, acc.name(), acc.next_functions
    same(body)


def test_tensor_hook_replaces_gradient_and_remove():
    def body(lib):
        x = T(lib, arr(3), True)
        h = x.register_hook(lambda g: g * 10)
        y = x * 2
        hy = y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        g1 = x.grad.clone()
        h.remove()
        hy.remove()
        x.grad = None
        y = x * 2
        (y * y).sum().backward()
        return g1, x.grad
    same(body)


def test_node_hooks_replace_and_remove():
    def body(lib):
        x = T(lib, arr(3), True)
        y = x.exp()
        h1 = y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        y.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        h1.remove()
        x.grad = None
        y.sum().backward()
        return g1, x.grad
    same(body)


def test_hooks_in_autograd_grad():
    def body(lib):
        log = []
        x = T(lib, arr(3), True)
        x.register_hook(lambda g: log.append("leaf") or g * 2)
        z = T(lib, arr(3, seed=1), True)
        z.register_hook(lambda g: log.append("other leaf"))
        y = (x * z).sum()
        return lib.autograd.grad(y, x), log, x.grad
    same(body)


def test_hook_errors():
    same(lambda lib: lib.ones(2).register_hook(lambda g: g))
    same(lambda lib: (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: p))
    same(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(lambda p: p))


def test_hooks_registered_before_inplace():
    def body(lib):
        log = []
        x = T(lib, arr(3), True)
        y = x * 2
        y.register_hook(lambda g: log.append(("before", g)))
        y.retain_grad()
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", g)))
        (y * y).sum().backward()
        return log, y.grad, x.grad
    same(body)


def test_saved_tensors_hooks():
    def body(lib):
        log = []

        def pack(t):
            log.append(("pack", tuple(t.shape)))
            return t * 1

        def unpack(t):
            log.append(("unpack", tuple(t.shape)))
            return t

        x = T(lib, arr(3), True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).sum()
            z = x.exp().sum()
        (y + z).backward()
        return log, x.grad
    same(body)


def test_disable_saved_tensors_hooks():
    def body(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    same(body)


def test_queue_callback():
    def body(lib):
        log = []
        engine = lib.autograd.Variable._execution_engine
        x = T(lib, arr(3), True)
        y = x * 3

        def cb():
            log.append(("cb", x.grad.clone()))

        y.register_hook(lambda g: engine.queue_callback(cb))
        y.sum().backward()
        return log
    same(body)
    same(lambda lib: lib.autograd.Variable._execution_engine.queue_callback(lambda: 1))


def test_variable_alias():
    def body(lib):
        t = lib.ones(2)
        v = lib.autograd.Variable(t, requires_grad=True)
        return v is t, isinstance(t, lib.autograd.Variable), v.requires_grad
    same(body)


def test_register_multi_grad_hook():
    def body(lib):
        log = []
        a, b = T(lib, arr(2), True), T(lib, arr(2, seed=1), True)
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda gs: log.append(gs))
        (a * 2).sum().backward()
        (a * b).sum().backward()
        return log
    same(body)
