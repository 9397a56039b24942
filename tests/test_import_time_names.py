"""What a single-process CPU script touches at import or set-up time, as on a CPU-only torch: the
distributed names, DataParallel / DistributedDataParallel, and a CUDA GradScaler that disables itself."""

import warnings

import numpy as np
import pytest
import torch
from compare import normalize_message

import ember


def _outcome(fn, lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = ("ok", normalize_message(repr(fn(lib))))
        except Exception as err:  # noqa: BLE001 - compared below
            r = (type(err).__name__, normalize_message(str(err)))
    return r, [(x.category.__name__, normalize_message(str(x.message))) for x in w]


CASES = [
    lambda lib: lib.distributed.is_initialized(),
    lambda lib: lib.distributed.get_rank(),
    lambda lib: lib.distributed.get_world_size(),
    lambda lib: lib.distributed.barrier(),
    lambda lib: lib.distributed.all_reduce(lib.ones(1)),
    lambda lib: lib.distributed.all_reduce(lib.ones(1), op=lib.distributed.ReduceOp.SUM),
    lambda lib: lib.distributed.destroy_process_group(),
    lambda lib: (lib.distributed.ReduceOp.MAX, lib.distributed.ReduceOp.AVG.value),
    lambda lib: __import__(lib.__name__ + ".nn.parallel", fromlist=["x"]).DistributedDataParallel(lib.nn.Linear(1, 1)),
    lambda lib: lib.nn.parallel.DataParallel(lib.nn.Linear(2, 2)).device_ids,
    lambda lib: sorted(lib.nn.DataParallel(lib.nn.Linear(2, 2)).state_dict()),
    lambda lib: lib.nn.DataParallel(lib.nn.Linear(2, 2)),
    lambda lib: lib.amp.GradScaler("cuda").is_enabled(),
    lambda lib: lib.amp.GradScaler("cuda", enabled=False).is_enabled(),
    lambda lib: lib.cuda.amp.GradScaler(enabled=True).state_dict(),
    lambda lib: lib.cuda.amp.GradScaler().get_scale(),
    lambda lib: (lambda s: (s.load_state_dict({}), s.state_dict(), s._get_growth_tracker()))(lib.amp.GradScaler()),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_import_time_names(i):
    assert _outcome(CASES[i], ember) == _outcome(CASES[i], torch)


def test_data_parallel_forward_and_backward_match():
    w = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    grads = []
    for lib in (torch, ember):
        m = lib.nn.Linear(4, 3, bias=False)
        with lib.no_grad():
            m.weight.copy_(lib.from_numpy(w))
        out = lib.nn.DataParallel(m)(lib.from_numpy(x))
        out.sum().backward()
        grads.append((out.detach().numpy(), m.weight.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-6)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-6)


def test_disabled_grad_scaler_is_a_pass_through():
    """The usual loop (`scale(loss).backward()`, `step`, `update`) gives the same weights as without a scaler."""
    w0 = np.array([1.0, -2.0, 0.5], np.float32)
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = lib.amp.GradScaler("cuda")
        p = lib.nn.Parameter(lib.from_numpy(w0.copy()))
        opt = lib.optim.SGD([p], lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = (p * p).sum()
            scaled = scaler.scale(loss)
            assert scaled is loss
            scaled.backward()
            scaler.unscale_(opt)
            assert scaler.step(opt) is None
            scaler.update()
        results.append((p.detach().numpy().copy(), [normalize_message(str(c.message)) for c in caught]))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1] == results[0][1]


def test_script_header_imports():
    from ember.distributed import destroy_process_group, init_process_group  # noqa: F401
    from ember.nn.parallel import DistributedDataParallel  # noqa: F401

    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        init_process_group("nccl")


class _GeneratorProbe:
    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.lib.random.thread_safe_generator() is None


def test_thread_safe_generator_outside_thread_workers():
    for lib in (torch, ember):
        assert lib.thread_safe_generator is lib.random.thread_safe_generator
        assert lib.random.thread_safe_generator() is None
        loader = lib.utils.data.DataLoader(_GeneratorProbe(lib), num_workers=1)
        assert [bool(b) for b in loader] == [True, True]
