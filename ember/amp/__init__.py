"""ember.amp: torch.amp's names: `autocast` (automatic mixed precision, ember/amp/autocast_mode.py),
`custom_fwd`/`custom_bwd`, `is_autocast_available` and `GradScaler` (dynamic loss scaling,
ember/amp/grad_scaler.py).
"""

from .._torch_alias import missing_attribute
from . import autocast_mode as autocast_mode
from . import grad_scaler as grad_scaler
from .autocast_mode import autocast as autocast
from .autocast_mode import custom_bwd as custom_bwd
from .autocast_mode import custom_fwd as custom_fwd
from .autocast_mode import is_autocast_available as is_autocast_available
from .grad_scaler import GradScaler as GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]

__getattr__ = missing_attribute(__name__)
