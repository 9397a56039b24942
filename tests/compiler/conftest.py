"""The first torch.compile (and ember.compile, which mirrors it) turns off distributions' default argument
validation for the whole process (torch's TorchPatcher); put it back after each test here so the tests
that follow in the same worker see the default."""

import pytest
import torch

import ember


@pytest.fixture(autouse=True)
def _restore_distribution_validation():
    saved = (torch.distributions.Distribution._validate_args, ember.distributions.Distribution._validate_args)
    yield
    torch.distributions.Distribution.set_default_validate_args(saved[0])
    ember.distributions.Distribution.set_default_validate_args(saved[1])
