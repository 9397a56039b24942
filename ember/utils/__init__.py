"""ember.utils: data loading and other utilities, mirroring ``torch.utils``."""

from . import data as data
from . import hooks as hooks


def __getattr__(name):  # (checkpointing, issue 21) loaded on first use, as `import ember` must stay fast
    if name == "checkpoint":
        import importlib

        return importlib.import_module(__name__ + ".checkpoint")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
