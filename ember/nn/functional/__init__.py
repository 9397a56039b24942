"""ember.nn.functional: the stateless functions behind the layers (torch.nn.functional's API)."""

from .activation import *  # noqa: F403
from .activation import __all__ as _a
from .conv import *  # noqa: F403
from .conv import __all__ as _c
from .loss import *  # noqa: F403
from .loss import __all__ as _l
from .norm import *  # noqa: F403
from .norm import __all__ as _n
from .sampling import *  # noqa: F403
from .sampling import __all__ as _s

__all__ = [*_a, *_c, *_l, *_n, *_s]
from ._attention import multi_head_attention_forward as multi_head_attention_forward  # noqa: E402
from ._attention import scaled_dot_product_attention as scaled_dot_product_attention  # noqa: E402

__all__ += ["multi_head_attention_forward", "scaled_dot_product_attention"]
from ._grouped import ScalingType as ScalingType  # noqa: E402  (area N)
from ._grouped import SwizzleType as SwizzleType  # noqa: E402
from ._grouped import grouped_mm as grouped_mm  # noqa: E402

__all__ += ["grouped_mm", "ScalingType", "SwizzleType"]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
