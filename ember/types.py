"""ember.types: the type aliases torch.types gives annotations (`Number`, `Device`, `FileLike`, ...)."""

import os
from typing import IO, Any, TypeAlias, Union  # noqa: F401 - re-exported as torch.types does

from ._device import device as _device
from ._size import Size as Size
from ._storage import UntypedStorage as Storage
from ._tensor import Tensor as Tensor

__all__ = ["Number", "Device", "FileLike", "IntLikeType", "FloatLikeType", "BoolLikeType", "Storage", "Size",
           "Tensor", "PySymType", "py_sym_types", "SymInt", "SymFloat", "SymBool"]


class _Symbolic:
    """A symbolic scalar of traced shapes: ember has no symbolic shapes yet, so none is ever made."""

    __module__ = "ember"  # (torch's are top-level classes: torch.SymInt)


class SymInt(_Symbolic):
    """Placeholder type of a symbolic int (see `_Symbolic`)."""

    __module__ = "ember"


class SymFloat(_Symbolic):
    """Placeholder type of a symbolic float (see `_Symbolic`)."""

    __module__ = "ember"


class SymBool(_Symbolic):
    """Placeholder type of a symbolic bool (see `_Symbolic`)."""

    __module__ = "ember"


Number: TypeAlias = int | float | bool
Device: TypeAlias = _device | str | int | None
FileLike: TypeAlias = Union[str, os.PathLike[str], IO[bytes]]
IntLikeType: TypeAlias = int | SymInt
FloatLikeType: TypeAlias = float | SymFloat
BoolLikeType: TypeAlias = bool | SymBool
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType: TypeAlias = SymInt | SymFloat | SymBool


def __getattr__(name):  # NOTE [ The torch alias ]: an attribute ember lacks fails naming torch's
    from ember._torch_alias import missing_attribute

    return missing_attribute(__name__)(name)
