"""ember.testing: torch.testing's public API (`assert_close`, `make_tensor`, the deprecated `assert_allclose`)."""

from ._comparison import assert_allclose as assert_allclose
from ._comparison import assert_close as assert_close
from ._creation import make_tensor as make_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
