"""ember.utils: data loading and other utilities, mirroring ``torch.utils``."""

from . import data as data
from . import hooks as hooks


def __getattr__(name):  # (checkpointing, issue 21) loaded on first use, as `import ember` must stay fast
    if name == "checkpoint":
        from . import checkpoint

        return checkpoint
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
