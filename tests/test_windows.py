"""Window functions against torch: torch.hann_window & co. (periodic / symmetric, every float dtype, the
empty and one-sample windows, requires_grad) and torch.signal.windows, values, dtypes and errors."""

import pytest
from compare import assert_same_error, check

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 33])
@pytest.mark.parametrize("name", WINDOWS)
def test_window(name, n, periodic, dtype):
    check(lambda lib: getattr(lib, name)(n, periodic, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.hamming_window(7, False, 0.6, 0.3, dtype=lib.float64),
    lambda lib: lib.kaiser_window(9, True, 5.0), lambda lib: lib.kaiser_window(9, False, 0.0),
    lambda lib: lib.hann_window(6, requires_grad=True), lambda lib: lib.blackman_window(4, periodic=False),
    lambda lib: lib.hann_window(5) * 2])
def test_window_arguments(call):
    check(call)


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("bad", [lambda lib, f: f(-1), lambda lib, f: f(4, dtype=lib.int64),
                                 lambda lib, f: f(4, dtype=lib.int32)])
def test_window_errors(name, bad):
    assert_same_error(lambda lib: bad(lib, getattr(lib, name)))


SIGNAL = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "hamming", "hann", "kaiser", "nuttall"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
@pytest.mark.parametrize("name", SIGNAL)
def test_signal_window(name, n, sym, dtype):
    check(lambda lib: getattr(lib.signal.windows, name)(n, sym=sym, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("call", [
    lambda lib: lib.signal.windows.general_cosine(6, a=[0.5, 0.3, 0.2], dtype=lib.float64),
    lambda lib: lib.signal.windows.general_hamming(6, alpha=0.6),
    lambda lib: lib.signal.windows.exponential(6, center=1.0, sym=False, tau=2.0),
    lambda lib: lib.signal.windows.gaussian(9, std=2.5), lambda lib: lib.signal.windows.kaiser(9, beta=3.0),
    lambda lib: lib.signal.windows.hann(5, requires_grad=True)])
def test_signal_window_arguments(call):
    check(call)


@pytest.mark.parametrize("call", [
    lambda lib: lib.signal.windows.gaussian(6, std=-1), lambda lib: lib.signal.windows.hann(6, dtype=lib.float16),
    lambda lib: lib.signal.windows.exponential(6, tau=0), lambda lib: lib.signal.windows.exponential(6, center=1.0),
    lambda lib: lib.signal.windows.kaiser(6, beta=-1.0), lambda lib: lib.signal.windows.cosine(-2),
    lambda lib: lib.signal.windows.general_cosine(6, a=[]), lambda lib: lib.signal.windows.general_cosine(6, a=3)])
def test_signal_window_errors(call):
    assert_same_error(call)
