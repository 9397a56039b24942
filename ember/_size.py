"""ember.Size: the tuple subclass that `Tensor.shape` and `Tensor.size()` return."""

from . import _naming

__all__ = ["Size"]


class Size(tuple):
    """A tuple of dimension sizes that prints like ``ember.Size([2, 3])``."""

    __slots__ = ()
    __module__ = "ember"

    def __repr__(self):
        return f"{_naming.prefix}.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __reduce__(self):
        return (Size, (tuple(self),))
