"""A module that wraps a helper with `fx.wrap` at its top level, as torch requires (for test_fx_core)."""

import math

import torch

import ember


def scaled(x):
    return x * len(x.shape)


torch.fx.wrap("scaled")
ember.fx.wrap("scaled")


def make(lib):
    def f(x):
        return scaled(x) * math.sqrt(x.shape[0])
    return f
