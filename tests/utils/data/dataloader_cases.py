"""Datasets and comparison helpers shared by the ember.utils.data tests.

The datasets return NumPy data only, so one instance feeds ember's and torch's DataLoader alike, and they
live in a module of their own (importing neither torch nor the tests) so spawned workers can import them.
"""

import ctypes
import os
import random
import signal
import time

import numpy as np


class Squares:
    """Map-style: sample i is {"x": float32 [i, i*i, -i], "i": i, "name": "s<i>"}."""

    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.array([i, i * i, -i], np.float32), "i": i, "name": f"s{i}"}


class Faulty:
    """Map-style over range(n) that misbehaves at index `at`: raise, key, exit, kill, segv or sleep."""

    def __init__(self, mode, n=8, at=3):
        self.mode, self.n, self.at = mode, n, at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.at:
            if self.mode == "raise":
                raise ValueError(f"bad item {i}")
            if self.mode == "key":
                raise KeyError(i)
            if self.mode == "exit":
                os._exit(3)
            if self.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.mode == "segv":
                ctypes.string_at(0)
            if self.mode == "sleep":
                time.sleep(1.5)
        return np.array([i], np.int64)


class WorkerRandom:
    """Sample i: (worker id, worker seed, NumPy draw, Python `random` draw) in the worker (ember's or
    torch's) that loads it."""

    def __init__(self, n=8, delay=0.0):
        self.n, self.delay = n, delay

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        from ember.utils.data import get_worker_info

        time.sleep(self.delay)  # lets every worker take a share of the tasks
        info = get_worker_info()
        if info is None:  # a worker of torch's DataLoader
            import torch.utils.data

            info = torch.utils.data.get_worker_info()
        return info.id, info.seed, int(np.random.randint(2 ** 31)), random.random()


def same_batch(e, t, path="batch"):
    """ember batch `e` equals torch batch `t`: containers of the same kinds, tensors via assert_same."""
    import torch
    from compare import assert_same

    if isinstance(t, torch.Tensor):
        assert_same(e, t, path=path)
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t), f"{path}: {e!r} vs torch {t!r}"
        for k in t:
            same_batch(e[k], t[k], f"{path}[{k!r}]")
    elif isinstance(t, (list, tuple)):
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t), f"{path}: {e!r} vs torch {t!r}"
        for i, (ee, tt) in enumerate(zip(e, t, strict=True)):
            same_batch(ee, tt, f"{path}[{i}]")
    else:
        assert type(e) is type(t) and e == t, f"{path}: {e!r} vs torch {t!r}"
