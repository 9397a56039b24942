"""Every layer class lives at torch's module path (`torch.nn.modules.activation.MultiheadAttention`), so
pickles of whole models and `torch.serialization.add_safe_globals([torch.nn.modules.x.Y])` lists written for
torch name ember's classes."""

import importlib
import io
import pickle

import pytest
import torch

import ember


def _torch_classes():
    for name in sorted(dir(torch.nn)):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module) and cls.__module__.startswith("torch.nn.modules"):
            yield name, cls


@pytest.mark.parametrize("name,cls", list(_torch_classes()), ids=lambda v: v if isinstance(v, str) else "")
def test_layer_lives_at_torchs_module_path(name, cls):
    ours = getattr(ember.nn, name)
    path = "ember" + cls.__module__[len("torch"):]
    assert ours.__module__ == path
    assert getattr(importlib.import_module(path), name) is ours


def test_whole_model_pickle_round_trips_between_torch_and_ember():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.MultiheadAttention(4, 2), torch.nn.Upsample(2),
                                torch.nn.InstanceNorm1d(4), torch.nn.PixelShuffle(2), torch.nn.Fold((4, 4), 2))
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    ours = ember.load(buf, weights_only=False)  # the pickle names torch's classes: ember's load maps them
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in model]
    assert type(ours[1]) is ember.nn.MultiheadAttention
    assert pickle.loads(pickle.dumps(ours[1].out_proj)).out_features == 4
