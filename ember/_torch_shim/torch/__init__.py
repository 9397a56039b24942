"""`import torch` in a child process of `ember run`: install the torch alias, then hand back ember.

This file is found only through the `ember/_torch_shim` entry that `ember run` adds to `sys.path`, which
`spawn` and `forkserver` children copy from their parent before they import the main script or unpickle
anything (NOTE [ The alias in child processes ] in ember/_torch_alias.py). Imported under any other name
(`ember._torch_shim.torch`, by a tool walking packages) it does nothing.
"""

if __name__ == "torch":
    import importlib

    from ember._torch_alias import install

    install()  # drops this module from sys.modules; the alias's finder now answers `torch`
    importlib.import_module("torch")  # leaves sys.modules["torch"] = ember, which this import then returns
