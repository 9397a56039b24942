"""torch.stft / torch.istft (and their Tensor methods) against torch: every argument (n_fft, hop_length,
win_length, window, center, pad_mode, normalized, onesided, return_complex, length), values, dtypes,
gradients through both, torch's warnings and errors."""

import warnings

import numpy as np
import pytest
from compare import assert_same_error, check

rng = np.random.default_rng(0)
SIG = rng.standard_normal((2, 40))
SIG1 = rng.standard_normal(37).astype(np.float32)


def _win(lib, n, kind="hann"):
    return {"hann": lib.hann_window, "hamming": lib.hamming_window, "ones": lambda n: lib.ones(n)}[kind](n).to(
        lib.float64)


STFT_ARGS = [dict(n_fft=8), dict(n_fft=8, hop_length=3, win_length=6), dict(n_fft=8, normalized=True),
             dict(n_fft=8, center=False), dict(n_fft=8, onesided=False), dict(n_fft=8, pad_mode="constant"),
             dict(n_fft=8, pad_mode="replicate", hop_length=5), dict(n_fft=7, hop_length=2, win_length=5),
             dict(n_fft=8, center=False, align_to_window=True, win_length=6)]


@pytest.mark.parametrize("kw", STFT_ARGS, ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_stft(kw, batched):
    def fn(lib, x):
        w = _win(lib, kw.get("win_length", kw["n_fft"]))
        return lib.stft(x if batched else x[0], window=w, return_complex=True, **kw)
    check(lambda lib, x: lib.view_as_real(fn(lib, x)), SIG, grad=True)


def test_stft_real_output_and_method():
    check(lambda lib, x: x.stft(8, window=lib.hann_window(8), return_complex=False), SIG1)
    check(lambda lib, x: lib.view_as_real(lib.stft(x.to(lib.complex64), 8, window=lib.hann_window(8))), SIG1)
    check(lambda lib, x: lib.view_as_real(lib.stft(x, 8, window=lib.hann_window(8).to(lib.complex64))), SIG1)


ISTFT_ARGS = [dict(n_fft=8), dict(n_fft=8, hop_length=3, win_length=6), dict(n_fft=8, normalized=True),
              dict(n_fft=8, center=False), dict(n_fft=8, onesided=False), dict(n_fft=8, length=35),
              dict(n_fft=8, length=50), dict(n_fft=8, return_complex=True, onesided=False)]


@pytest.mark.parametrize("kw", ISTFT_ARGS, ids=str)
def test_istft_roundtrip(kw):
    def fn(lib, x):
        w = _win(lib, kw.get("win_length", kw["n_fft"]))
        skw = {k: v for k, v in kw.items() if k not in ("length", "return_complex")}
        spec = lib.stft(x, window=w, return_complex=True, **skw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = lib.istft(spec * 1.5, window=w, **kw)
        return lib.view_as_real(y) if y.is_complex() else y
    check(fn, SIG, grad=True)


ERRORS = [
    lambda lib, x: lib.stft(x, 8),  # no return_complex for a real input
    lambda lib, x: lib.stft(x, 80, return_complex=True),
    lambda lib, x: lib.stft(x.long(), 8, return_complex=True),
    lambda lib, x: lib.stft(x, 8, window=lib.ones(3), return_complex=True),
    lambda lib, x: lib.stft(x, 8, hop_length=0, window=lib.ones(8), return_complex=True),
    lambda lib, x: lib.stft(x, 8, win_length=9, return_complex=True),
    lambda lib, x: lib.stft(x.reshape(1, 1, -1), 8, return_complex=True),
    lambda lib, x: lib.stft(x, 8, align_to_window=True, return_complex=True),
    lambda lib, x: lib.stft(x.to(lib.complex64), 8, onesided=True, window=lib.ones(8)),
    lambda lib, x: lib.istft(x, 8),
    lambda lib, x: lib.istft(lib.zeros(5, 7, dtype=lib.complex64), 8, window=lib.zeros(8)),
    lambda lib, x: lib.istft(lib.zeros(0, 7, dtype=lib.complex64), 8),
    lambda lib, x: lib.istft(lib.zeros(4, 7, dtype=lib.complex64), 8, window=lib.ones(8)),
    lambda lib, x: lib.istft(lib.zeros(5, 7, dtype=lib.complex64), 8, window=lib.ones(7)),
    lambda lib, x: lib.istft(lib.zeros(5, 7, dtype=lib.complex64), 8, hop_length=9, window=lib.ones(8)),
    lambda lib, x: lib.istft(lib.zeros(5, dtype=lib.complex64), 8, window=lib.ones(8)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(ERRORS[i], SIG1)


WARNING_CALLS = [
    "lib.stft(x, 8, return_complex=True)",
    "lib.stft(x, 8, window=lib.ones(8), return_complex=False)",
    "lib.istft(lib.stft(x, 8, window=lib.ones(8), return_complex=True), 8)",
]


def _warnings_of(lib_name, call):
    """The (category, message) of each warning `call` gives on its first use in a fresh process (torch's
    TORCH_WARN_ONCE warns once per process, so the oracle runs in its own)."""
    import subprocess
    import sys

    code = (f"import warnings, numpy as np\nimport {lib_name} as lib\nx = lib.from_numpy(np.arange(37.0))\n"
            f"with warnings.catch_warnings(record=True) as got:\n    warnings.simplefilter('always')\n"
            f"    {call}\nfor w in got:\n    print(w.category.__name__, '|', str(w.message).split(' (Triggered')[0]"
            f".replace(chr(10), ' '))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if line)


@pytest.mark.parametrize("call", WARNING_CALLS)
def test_warnings(call):
    """The same warnings, class and text, as torch's on a first call."""
    assert _warnings_of("ember", call) == _warnings_of("torch", call)
