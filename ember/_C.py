"""ember._C: the module torch's C-implemented classes name as theirs (`torch._C.Generator`).

Only the names a script sees through `type(...)`, a repr or a pickle live here: `Generator`, whose class
prints as `<class 'torch._C.Generator'>` in torch, and `_LinAlgError` (torch.linalg.LinAlgError). Anything
else fails naming the torch attribute asked for.
"""

from ._generator import Generator as Generator
from ._ops.lapack import _LinAlgError as _LinAlgError
from ._torch_alias import missing_attribute

__getattr__ = missing_attribute(__name__)
