"""ember.amp: torch.amp's names. For now only `GradScaler` for an accelerator device, which on a CPU-only
machine disables itself with torch's warning and passes everything through (NOTE [ A disabled GradScaler ]).
Autocast and the "cpu" GradScaler come with mixed precision (issue 21); asking for them says so.
"""

from .._torch_alias import missing_attribute
from .grad_scaler import GradScaler as GradScaler

__all__ = ["GradScaler"]

__getattr__ = missing_attribute(__name__)
