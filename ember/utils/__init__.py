"""ember.utils: data loading and other utilities, mirroring ``torch.utils``."""

from . import data as data
from . import hooks as hooks


def __getattr__(name):
    # submodules load on first use (checkpoint, _pytree, _python_dispatch, ...), as `import ember` must stay
    # fast; torch's are loaded by `import torch`, so scripts reach them as attributes
    import importlib
    import importlib.util

    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
