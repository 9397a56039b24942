"""ember.cuda: what a CPU-only torch install answers, so scripts that probe for a GPU run unchanged.

Queries say there is no GPU; seeding functions are no-ops (there is no GPU generator to seed); anything
that needs a GPU raises torch's "Torch not compiled with CUDA enabled".
"""

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "empty_cache", "synchronize", "current_device", "get_device_name", "set_device", "device"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def manual_seed(seed):
    """No GPU generator exists; like torch without CUDA, this silently does nothing."""


def manual_seed_all(seed):
    """No GPU generators exist; like torch without CUDA, this silently does nothing."""


def seed():
    """No GPU generator exists; nothing to seed."""


def seed_all():
    """No GPU generators exist; nothing to seed."""


def empty_cache():
    """No GPU memory is cached; nothing to free."""


def _fail(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


synchronize = current_device = get_device_name = get_device_properties = set_device = _fail
get_device_capability = memory_allocated = max_memory_allocated = memory_reserved = _fail


class device:
    """Context manager selecting a GPU: there is none, so entering it fails like torch."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        _fail()

    def __exit__(self, *exc):
        return False


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    if name == "amp":  # area M: the deprecated torch.cuda.amp (a disabled GradScaler), loaded on first use
        import importlib

        return importlib.import_module(".amp", __name__)

    return missing_attribute(__name__)(name)
