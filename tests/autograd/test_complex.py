"""Complex gradients against torch: the conjugate Wirtinger convention (NOTE [ Complex gradients ]) for
holomorphic ops, real-valued functions of complex inputs, real <-> complex casts, and double backward."""

import numpy as np
import pytest
from helpers import graph_names, same

_rng = np.random.default_rng(0)
Z = (_rng.standard_normal(4) + 1j * _rng.standard_normal(4)).astype(np.complex64)
W = (_rng.standard_normal(4) + 1j * _rng.standard_normal(4)).astype(np.complex64)

CASES = {
    "mul": lambda lib, z, w: z * w,
    "mul_python_complex": lambda lib, z, w: z * (1 + 2j),
    "div": lambda lib, z, w: z / w,
    "add_sub": lambda lib, z, w: z + w - 2 * z,
    "exp": lambda lib, z, w: z.exp() * w,
    "log": lambda lib, z, w: z.log(),
    "sin_cos": lambda lib, z, w: z.sin() + z.cos(),
    "tanh": lambda lib, z, w: z.tanh(),
    "sigmoid": lambda lib, z, w: z.sigmoid(),
    "sqrt_rsqrt": lambda lib, z, w: z.sqrt() + z.rsqrt(),
    "pow_square": lambda lib, z, w: z ** 3 + z.square(),
    "reciprocal": lambda lib, z, w: z.reciprocal(),
    "matmul": lambda lib, z, w: z.view(2, 2) @ w.view(2, 2),
    "sum_mean": lambda lib, z, w: (z.sum() + z.mean()) * w,
    "prod_cumsum": lambda lib, z, w: z.prod() * z.cumsum(0),
    "cat_index": lambda lib, z, w: lib.cat([z[1:], w]) * 2,
    "conj": lambda lib, z, w: z.conj().resolve_conj() * w,
    "conj_physical": lambda lib, z, w: z.conj_physical() * w,
    "abs_back_to_complex": lambda lib, z, w: z.abs().to(z.dtype) * w,
    "real_input": lambda lib, z, w: z.abs() * w,
    "vdot": lambda lib, z, w: lib.vdot(z, w) * w + z.vdot(w * 2j),
    "sgn": lambda lib, z, w: z.sgn() * w + z.sgn().real * 2,
}


@pytest.mark.parametrize("name", list(CASES))
def test_complex_gradients_match_torch(name):
    def body(lib):
        z = lib.from_numpy(Z.copy()).requires_grad_()
        w = lib.from_numpy(W.copy()).requires_grad_()
        out = CASES[name](lib, z, w)
        out.abs().sum().backward()
        return tuple(None if t.grad is None else t.grad.resolve_conj() for t in (z, w))
    same(body)


def test_real_input_through_complex_ops():
    """A real leaf cast to complex gets the real part of the complex gradient, as in torch."""
    def body(lib):
        x = lib.from_numpy(Z.real.copy()).requires_grad_()
        ((x.to(lib.complex64).tanh() * 1j) * (2 - 1j)).abs().sum().backward()
        return x.grad
    same(body)


def test_complex_double_backward():
    def body(lib):
        z = lib.from_numpy(Z.copy()).requires_grad_()
        (g,) = lib.autograd.grad((z.exp() * z).abs().sum(), z, create_graph=True)
        g.abs().sum().backward()
        return g.detach().resolve_conj(), z.grad.resolve_conj()
    same(body)


def test_conj_is_identity_on_real_tensors():
    def body(lib):
        x = lib.ones(3)
        return x.conj() is x, x.is_conj(), x.conj_physical()
    same(body)


VIEW_CASES = {
    "real_imag": lambda lib, z, w: z.real * 2 + z.imag * 3 * w.real,
    "functions": lambda lib, z, w: lib.real(z) - lib.imag(w),
    "view_as_real": lambda lib, z, w: lib.view_as_real(z * w).sum(-1),
    "view_as_complex": lambda lib, z, w: lib.view_as_complex(lib.view_as_real(z) * 2) * w,
    "strided": lambda lib, z, w: lib.view_as_real(z.view(2, 2).t()).sum(),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_complex_views_match_torch(name):
    """real / imag / view_as_real / view_as_complex: values, strides, graph names and gradients."""
    def body(lib):
        z = lib.from_numpy(Z.copy()).requires_grad_()
        w = lib.from_numpy(W.copy()).requires_grad_()
        out = VIEW_CASES[name](lib, z, w)
        names = graph_names(out.grad_fn)
        out.abs().sum().backward()
        return out.detach(), names, z.grad.resolve_conj(), w.grad.resolve_conj()
    same(body)


def test_complex_views_share_memory_and_version():
    def body(lib):
        z = lib.from_numpy(Z.copy())
        r, v = z.real, lib.view_as_real(z)
        r.mul_(2)
        z.imag = lib.zeros(4)
        return z, v, r._base is z, r.stride(), z.imag.storage_offset(), z._version, v._version
    same(body)


@pytest.mark.parametrize("case", [
    lambda lib: lib.ones(3).imag,
    lambda lib: lib.view_as_real(lib.ones(3)),
    lambda lib: lib.view_as_complex(lib.ones(3, 3)),
    lambda lib: lib.view_as_complex(lib.ones(2, 3).t()),
    lambda lib: lib.view_as_complex(lib.ones(2, 4)[:, 1:3]),
    lambda lib: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64)),
    lambda lib: (lambda x: x.real is x)(lib.ones(3)),
])
def test_complex_view_errors_and_real_tensors(case):
    same(case)


def test_inplace_on_a_complex_view_with_grad_is_refused_not_wrong():
    """torch rewrites the history of the complex base; ember cannot yet, and says so instead."""
    import ember

    z = ember.from_numpy(Z.copy()).requires_grad_() * 1
    with pytest.raises(NotImplementedError, match="view_as_real view of a complex tensor"):
        z.real.mul_(2)


@pytest.mark.parametrize("name", list(CASES))
def test_complex_gradcheck(name):
    """gradcheck on complex inputs (NOTE [ Complex gradcheck ]) passes for every case, as in torch."""
    def body(lib):
        z = lib.from_numpy(Z.astype(np.complex128)).requires_grad_()
        w = lib.from_numpy(W.astype(np.complex128)).requires_grad_()
        return lib.autograd.gradcheck(lambda z, w: CASES[name](lib, z, w), (z, w))
    same(body)


def test_complex_gradcheck_catches_an_unconjugated_gradient():
    def body(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                (z,) = ctx.saved_tensors
                return g * 2 * z  # torch's convention needs g * conj(2 z)

        z = lib.from_numpy(Z.astype(np.complex128)).requires_grad_()
        return lib.autograd.gradcheck(Square.apply, (z,), raise_exception=False)
    same(body)
