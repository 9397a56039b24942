"""The bounded fuzz run of the default suite (fixed seed) and checks of the fuzzer itself.

3000 drawn cases take a few seconds of CPU; `python -m tests.fuzz --cases N --seed S` runs longer.
"""

import numpy as np
import pytest

from . import core, known

CASES = 3000


def test_bounded_fuzz_run_has_no_unlisted_mismatch():
    result = core.fuzz(CASES, seed=0)
    assert result.cases == CASES
    assert not result.unexplained, core.summary(result, max_repro=10)


def test_cases_are_reproducible_from_seed_and_number():
    pool = core.ops()
    a = core.draw(np.random.default_rng([3, 17]), pool)
    b = core.draw(np.random.default_rng([3, 17]), pool)
    assert (a.op, a.kwargs, a.layouts, a.grad, a.what) == (b.op, b.kwargs, b.layouts, b.grad, b.what)
    for x, y in zip(a.inputs, b.inputs):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("layout", ["T", "step", "expand", "as_strided"])
def test_layouts_rebuild_the_values(layout):
    """A laid-out input has the drawn values and the layout's strides, in ember and torch alike."""
    import torch

    import ember
    x = np.arange(12.0).reshape(3, 4)
    if layout == "expand":
        x = np.repeat(x[:1], 3, axis=0)
    lay = (layout, 0) if layout == "expand" else (layout,)
    base = core._base(x, lay)
    for lib in (ember, torch):
        v = core._view(lib, lib.from_numpy(base.copy()), lay, x.shape)
        np.testing.assert_array_equal(v.numpy(), x)
        assert not v.is_contiguous()


def test_reproducer_reproduces_a_mismatch():
    """The printed reproducer, run as is, fails the same way the case did (a listed stride mismatch)."""
    pool = core.ops()
    for k in range(CASES):
        case = core.draw(np.random.default_rng([0, k]), pool)
        found = core.run(case)
        if found and found[0] == "stride":
            break
    else:
        raise AssertionError("no stride mismatch left to reproduce: update this test")
    case = core.shrink(case, "stride")
    with pytest.raises(AssertionError, match="stride"):
        exec(core.reproducer(case), {"ml_dtypes": core.ml_dtypes})


def test_every_listed_mismatch_has_a_reason():
    for entry in known.KNOWN:
        assert len(entry) == 4 and entry[3].strip()


@pytest.mark.parametrize("n", [2, 3])
def test_polygamma_of_integer_extremes_ends(n):
    """Found by the fuzzer: polygamma summed one step per unit below 10, so an int32 extreme made 2**31
    steps (NOTE [ polygamma far below zero ])."""
    from compare import check
    x = np.array([-2147483647, -5, 1, 7], np.int32)
    check(lambda lib, x: lib.polygamma(n, x), x)
