"""The one error of ember.accelerator: there is no accelerator (See NOTE [ No accelerator ])."""


def no_accelerator(*args, **kwargs):
    raise RuntimeError("Cannot access accelerator device when none is available.")
