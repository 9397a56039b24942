"""Custom autograd Functions, compared with torch: ctx API, node naming, saved tensors and their version
checks, needs_input_grad, mark_dirty, mark_non_differentiable, set_materialize_grads, setup_context,
once_differentiable, vjp, and the errors for bad backward results."""

import numpy as np
import pytest
from helpers import T, arr, same


def fns(lib):
    """The Function classes of these tests, defined against `lib`."""
    F = lib.autograd.Function

    class MyFn(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * ctx.k * x.sign(), None

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3 / 3.0

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x ** 2

    class SaveOut(F):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            y, = ctx.saved_tensors
            return g * y

    class Two(F):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1, g2)
            return g1 * 2 + g2 * 3

    class TwoNoMat(Two):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    class Ext(F):
        @staticmethod
        def forward(a, k):
            return a * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            a, k = inputs
            ctx.k = k
            ctx.save_for_backward(a, output)

        @staticmethod
        def backward(ctx, g):
            a, out = ctx.saved_tensors
            return g * ctx.k, None

    class Vjp(F):
        @staticmethod
        def forward(ctx, a):
            return a * 5

        @staticmethod
        def vjp(ctx, g):
            return g * 5

    return dict(MyFn=MyFn, Cube=Cube, SaveOut=SaveOut, Two=Two, TwoNoMat=TwoNoMat, Ext=Ext, Vjp=Vjp)


def test_basic_apply_and_node_naming():
    def body(lib):
        f = fns(lib)
        x = T(lib, arr(3), True)
        y = f["MyFn"].apply(x, 3)
        node = y.grad_fn
        info = (type(node).__name__, node.name(), repr(y).split("grad_fn=")[1], repr(node).split(" object")[0],
                len(node.next_functions), type(node).__module__, isinstance(node, lib.autograd.function.FunctionCtx),
                isinstance(node, lib.autograd.graph.Node))
        y.sum().backward()
        return info, x.grad
    same(body)


@pytest.mark.parametrize("name", ["Cube", "SaveOut", "Ext", "Vjp"])
def test_gradients(name):
    def body(lib):
        x = T(lib, arr(4), True)
        f = fns(lib)[name]
        y = f.apply(x, 2.0) if name == "Ext" else f.apply(x)
        (y * y).sum().backward()
        return y, x.grad
    same(body)


def test_matches_builtin_sigmoid_as_in_the_seed():
    def body(lib):
        class CustomSigmoid(lib.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                output = 1 / (1 + lib.exp(-input))
                ctx.save_for_backward(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                output, = ctx.saved_tensors
                return grad_output * output * (1 - output)

        x = T(lib, arr(5), True)
        CustomSigmoid.apply(x).sum().backward()
        x2 = T(lib, arr(5), True)
        lib.sigmoid(x2).sum().backward()
        return x.grad, x2.grad
    same(body)


def test_multiple_outputs_and_materialize_grads():
    def body(lib):
        f = fns(lib)
        x = T(lib, arr(2), True)
        a, b = f["Two"].apply(x)
        a.sum().backward()
        seen = a.grad_fn.seen
        x2 = T(lib, arr(2), True)
        c, d = f["TwoNoMat"].apply(x2)
        c.sum().backward()
        return a.grad_fn is b.grad_fn, b.output_nr, seen, x.grad, x2.grad
    same(body)


def test_needs_input_grad_and_no_grad_apply():
    def body(lib):
        seen = []

        class G(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                seen.append((ctx.needs_input_grad, lib.is_grad_enabled()))
                return a + b

            @staticmethod
            def backward(ctx, g):
                return g, g, None

        x = T(lib, arr(2), True)
        r1 = G.apply(x, lib.ones(2), 3)
        with lib.no_grad():
            r2 = G.apply(x, lib.ones(2), 3)
        return seen, r1.requires_grad, r2.requires_grad, r2.grad_fn
    same(body)


def test_identity_output_is_a_view_and_dirty_inputs():
    def body(lib):
        class Id(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = T(lib, arr(2), True)
        y = Id.apply(x)
        first = (y is x, y._base is x, y.is_leaf)
        y.sum().backward()
        z = x * 1
        w = Dirty.apply(z)
        second = (w is z, type(z.grad_fn).__name__, z._version)
        w.sum().backward()
        return first, second, x.grad
    same(body)


def test_dirty_leaf_error():
    def body(lib):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g

        Dirty.apply(T(lib, arr(2), True))
    same(body)


def test_non_differentiable_outputs():
    def body(lib):
        class ND(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                i = a.argmax()
                m = a > 0
                ctx.mark_non_differentiable(m)
                return a * 1, i, m

            @staticmethod
            def backward(ctx, g, gi, gm):
                return g

        x = T(lib, arr(3), True)
        v, i, m = ND.apply(x)
        return v.requires_grad, i.requires_grad, m.requires_grad, i.grad_fn, m.grad_fn
    same(body)


def test_saved_tensor_version_check_and_freeing():
    def body(lib):
        f = fns(lib)
        x = T(lib, arr(3), True)
        z = x * 1
        y = f["Cube"].apply(z)
        z.mul_(2)
        y.sum().backward()
    same(body)

    def body2(lib):
        f = fns(lib)
        x = T(lib, arr(3), True)
        y = f["SaveOut"].apply(x)
        y.add_(1)
        y.sum().backward()
    same(body2)

    def body3(lib):
        f = fns(lib)
        x = T(lib, arr(3), True)
        y = f["Cube"].apply(x)
        before = y.grad_fn.saved_tensors
        y.sum().backward()
        y.grad_fn.saved_tensors  # noqa: B018 - the access itself must raise (freed saved tensors)
        return before
    same(body3)


@pytest.mark.parametrize("ret", ["short", "long", "wrong_shape", "broadcast", "float", "nontensor_grad", "double",
                                 "extra_none", "both"])
def test_backward_result_checks(ret):
    def body(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return {"short": lambda: g, "long": lambda: (g, None, g), "wrong_shape": lambda: (g[:1], None),
                        "broadcast": lambda: (lib.ones(3, 2), None), "float": lambda: (1.0, None),
                        "nontensor_grad": lambda: (g, lib.ones(1)), "double": lambda: (g.double(), None),
                        "extra_none": lambda: (g, None, None), "both": lambda: (g, None)}[ret]()

        if ret == "both":
            Bad.vjp = staticmethod(lambda ctx, g: (g, None))
        x = T(lib, arr(2), True)
        Bad.apply(x, 2).sum().backward()
        return x.grad, x.grad.dtype
    same(body)


def test_base_class_errors_and_legacy_use():
    same(lambda lib: lib.autograd.Function.forward(None))
    same(lambda lib: lib.autograd.Function.backward(None))

    def legacy(lib):
        class L(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            L()(lib.ones(1))
    same(legacy)


def test_once_differentiable():
    def body(lib):
        from importlib import import_module

        once = import_module(lib.__name__ + ".autograd.function").once_differentiable

        class Once(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 2

            @staticmethod
            @once
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 2 * a * g, lib.is_grad_enabled()

        class Once1(Once):
            @staticmethod
            @once
            def backward(ctx, g):
                a, = ctx.saved_tensors
                return 2 * a * g

        x = T(lib, arr(3, dtype=np.float64), True)
        gx, = lib.autograd.grad(Once1.apply(x).sum(), x, create_graph=True)
        go = T(lib, np.ones(3), True)
        gx2, = lib.autograd.grad(Once1.apply(x), x, go, create_graph=True)
        out = (gx, gx.grad_fn, gx2.requires_grad)
        gx2.sum().backward()
        return out
    same(body)


def test_function_gradcheck():
    def body(lib):
        x = T(lib, arr(3, dtype=np.float64), True)
        return lib.autograd.gradcheck(fns(lib)["Cube"].apply, (x,)), \
            lib.autograd.gradgradcheck(fns(lib)["Cube"].apply, (x,))
    same(body)


def test_function_ctx_class_is_exported():
    def body(lib):
        from importlib import import_module

        mod = import_module(lib.__name__ + ".autograd.function")
        return mod.FunctionCtx.__name__, lib.autograd.Function.__module__.replace("torch", "ember"), \
            lib.autograd.Function.vjp is lib.autograd.Function.backward
    same(body)
