"""`import torch` resolving to ember, for `ember run script.py`.

NOTE [ The torch alias ]
A meta-path finder answers every import of `torch` or `torch.<sub>` with the ember module of the same
path (`torch.nn.functional` -> `ember.nn.functional`), so a script's `import torch.nn as nn` gets
ember's module object itself and `isinstance` checks agree. A torch submodule ember does not have fails
with "ember does not implement torch.<sub> yet" instead of a confusing ModuleNotFoundError about ember.
It is installed only by `ember run` (or `install()`); importing ember alone changes nothing.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "uninstall", "missing_attribute"]


class _Loader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class TorchAlias(importlib.abc.MetaPathFinder):
    """Maps `torch[.x.y]` to `ember[.x.y]`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        target_name = "ember" + fullname[len("torch"):]
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name and (e.name == target_name or target_name.startswith(e.name + ".")):
                raise ModuleNotFoundError(f"ember does not implement {fullname} yet", name=fullname) from None
            raise
        return importlib.util.spec_from_loader(fullname, _Loader(module), is_package=hasattr(module, "__path__"))


_finder = TorchAlias()


def install():
    """Make `import torch` (and its submodules) load ember."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]  # a real torch imported earlier must not shadow the alias


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]


def missing_attribute(module_name):
    """A module-level `__getattr__` for `module_name` (e.g. "ember.nn"): an attribute ember does not have
    fails naming the torch attribute a script asked for (`ember does not implement torch.nn.Foo yet`)."""
    torch_name = "torch" + module_name[len("ember"):]

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        raise AttributeError(f"ember does not implement {torch_name}.{name} yet")
    return __getattr__
