"""A directory `ember run` puts on `sys.path`, holding a `torch` package that turns on the torch alias.

See NOTE [ The alias in child processes ] in ember/_torch_alias.py. Nothing here is meant to be imported
as `ember._torch_shim...`; doing so does nothing.
"""
