"""`ember.signal`: torch.signal (its `windows` module)."""

from . import windows as windows
