"""ember.random: seeding and saving the default generator, and `fork_rng` (torch.random's API).

The functions here act on `ember.default_generator` (see ember/_generator.py); they are also exported at
ember's top level (`ember.manual_seed`, `ember.get_rng_state`, ...).
"""

import contextlib

from ._device import check_device
from ._device import device as _device
from ._generator import Generator, default_generator

__all__ = ["default_generator", "Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng", "thread_safe_generator"]


def manual_seed(seed):
    """Seed the default generator; returns it. Same seed, same numbers (torch's numbers where the stream
    matches, see ember/_generator.py)."""
    if isinstance(seed, float):
        seed = int(seed)
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator from a non-deterministic source; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (torch's layout: torch.set_rng_state accepts it)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from `get_rng_state()`."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Run a block with its own random stream: the default generator's state is restored on exit.

    Args:
        devices: accelerator devices whose generators to fork too; ember computes on the CPU only, so
            naming any fails as in a CPU-only torch.
        enabled: if False, the block runs without forking.
    """
    device_type = _device(device_type).type
    if not enabled:
        yield
        return
    for d in list(devices or ()):
        check_device(_device(device_type, d) if isinstance(d, int) else d)
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)


def thread_safe_generator():
    """The generator for random numbers in a DataLoader *thread* worker (its thread-local generator), or None
    elsewhere (the default generator is then used). ember's DataLoader workers are processes, so this is
    None except under a worker whose `worker_method` is "thread".

    Example::

        >>> ember.randint(0, 10, (5,), generator=ember.random.thread_safe_generator())
    """
    from .utils.data import get_worker_info

    info = get_worker_info()
    if info is not None and getattr(info, "worker_method", None) == "thread" and getattr(info, "rng", None):
        return info.rng.torch_generator
    return None
