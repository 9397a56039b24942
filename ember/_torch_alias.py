"""`import torch` resolving to ember, for `ember run script.py`.

NOTE [ The torch alias ]
A meta-path finder answers every import of `torch` or `torch.<sub>` with the ember module of the same
path (`torch.nn.functional` -> `ember.nn.functional`), so a script's `import torch.nn as nn` gets
ember's module object itself and `isinstance` checks agree. A torch submodule ember does not have fails
with "ember does not implement torch.<sub> yet" instead of a confusing ModuleNotFoundError about ember.
It is installed only by `ember run` (or `install()`); importing ember alone changes nothing.

Installing it also turns the names ember prints into torch's (NOTE [ One switch for printed names ] in
ember/_naming.py): the switch is set, and every class ember has loaded or loads later has its `__module__`
spelled `torch...` (`<class 'torch.nn.modules.linear.Linear'>`). Pickles then name classes `torch.x.y`,
which the alias resolves back to ember (and torch itself can read).

NOTE [ The alias in child processes ]
A `fork` child inherits the alias with the parent's memory. A `spawn` child (macOS and Windows default) and
a `forkserver` server are fresh interpreters: they import the main script (as `__mp_main__`) and unpickle
the process object, both naming `torch`, with nothing of ember loaded. What they do inherit, before either
step, is the parent's `sys.path` (multiprocessing's preparation data, and the forkserver's `sys_path`).
So `install()` puts the directory `ember/_torch_shim` first on `sys.path`; it holds a package named
`torch` whose `__init__` installs the alias in the child and returns ember. In the parent the finder below
answers `torch` before `sys.path` is searched, so the shim is never used there. This covers every child
that multiprocessing starts (`Process`, `Pool`, `concurrent.futures.ProcessPoolExecutor`, DataLoader
workers, `torch.multiprocessing.spawn`). It needs no environment variable and no .pth file, so `import
ember` in a process that did not ask for the alias stays plain; an unrelated `python other.py` started
with `subprocess` is not a child of multiprocessing and keeps its own `import torch`.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

from . import _naming

__all__ = ["install", "uninstall", "missing_attribute"]


class _Loader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _RenamingLoader(importlib.machinery.SourceFileLoader):
    """Loads an ember module as usual, then spells its classes' `__module__` with `torch`."""

    def exec_module(self, module):
        super().exec_module(module)
        _rename_classes(module, "ember", "torch")


class TorchAlias(importlib.abc.MetaPathFinder):
    """Maps `torch[.x.y]` to `ember[.x.y]`; loads ember modules imported later with torch's class names."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("ember."):
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
                spec.loader = _RenamingLoader(fullname, spec.origin)
            return spec
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
_SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_shim")


def _rename_classes(module, old, new):
    """Spell `old[.x]` as `new[.x]` in the `__module__` of every class in `module`'s namespace."""
    for value in list(vars(module).values()):
        name = getattr(value, "__module__", None) if isinstance(value, type) else None
        if isinstance(name, str) and (name == old or name.startswith(old + ".")):
            try:
                value.__module__ = new + name[len(old):]
            except (AttributeError, TypeError):  # a built-in type re-exported by an ember module
                pass


def _rename_loaded(old, new):
    for name, module in list(sys.modules.items()):
        if module is not None and (name == "ember" or name.startswith("ember.")):
            _rename_classes(module, old, new)


def install():
    """Make `import torch` (and its submodules) load ember, here and in child processes, with torch's
    names."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    if _SHIM_DIR not in sys.path:
        sys.path.insert(0, _SHIM_DIR)  # NOTE [ The alias in child processes ]
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]  # a real torch imported earlier must not shadow the alias
    _naming.prefix = "torch"
    _rename_loaded("ember", "torch")


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    while _SHIM_DIR in sys.path:
        sys.path.remove(_SHIM_DIR)
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    _naming.prefix = "ember"
    _rename_loaded("torch", "ember")


def missing_attribute(module_name):
    """A module-level `__getattr__` for `module_name` (e.g. "ember.nn"): an attribute ember does not have
    fails naming the torch attribute a script asked for (`ember does not implement torch.nn.Foo yet`)."""
    torch_name = "torch" + module_name[len("ember"):]

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        raise AttributeError(f"ember does not implement {torch_name}.{name} yet")
    return __getattr__
