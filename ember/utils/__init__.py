"""ember.utils: data loading and other utilities, mirroring ``torch.utils``."""

from . import data as data
from . import hooks as hooks
