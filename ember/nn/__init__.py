"""ember.nn: Modules, Parameters, layers, losses, `functional`, `init` and `utils` (torch.nn's API)."""

from . import functional as functional
from . import init as init
from . import parallel as parallel  # area M: torch.nn.parallel and torch.nn.DataParallel
from . import parameter as parameter
from . import utils as utils
from .modules import *  # noqa: F403 - the layer classes, as torch.nn exports them
from .modules import __all__ as _modules_all
from .parallel import DataParallel as DataParallel  # area M
from .parameter import Buffer as Buffer
from .parameter import Parameter as Parameter
from .parameter import UninitializedBuffer as UninitializedBuffer
from .parameter import UninitializedParameter as UninitializedParameter

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "parameter", "functional",
           "init", "utils", "DataParallel", *_modules_all]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
