"""Variable-length sequences for the recurrent layers: PackedSequence and the (un)packing/padding helpers.

A PackedSequence holds the time steps of a batch of sequences sorted by decreasing length, packed row by
row: the rows of step t are the first `batch_sizes[t]` sequences' elements at t. nn.RNN / LSTM / GRU run
on it directly (see NOTE [ Packed layout of a recurrent layer ] in ember/_ops/rnn.py).

Packing and padding are single differentiable index ops (a boolean-mask gather / an index_put into a
padded tensor), never a Python loop over sequences' elements.
"""

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ..._ops.creation import arange
from ..._ops.creation import tensor as _tensor
from ..._ops.shape import cat
from ..._ops.sorting import _argsort
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    r"""Holds the data and list of `batch_sizes` of a packed sequence.

    Instances should be made by :func:`pack_padded_sequence` or :func:`pack_sequence`, not by hand.

    Attributes:
        data (Tensor): the packed rows, (sum(batch_sizes), *)
        batch_sizes (Tensor): int64, how many sequences are active at each time step
        sorted_indices (Tensor, optional): the order in which the sequences were sorted
        unsorted_indices (Tensor, optional): its inverse, to restore the original order
    """

    __module__ = "ember.nn.utils.rnn"

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args, **kwargs):
        return self

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=_dt("float64"))

    def float(self):
        return self.to(dtype=_dt("float32"))

    def half(self):
        return self.to(dtype=_dt("float16"))

    def long(self):
        return self.to(dtype=_dt("int64"))

    def int(self):
        return self.to(dtype=_dt("int32"))

    def short(self):
        return self.to(dtype=_dt("int16"))

    def char(self):
        return self.to(dtype=_dt("int8"))

    def byte(self):
        return self.to(dtype=_dt("uint8"))

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _dt(name):
    from ... import _dtypes

    return getattr(_dtypes, name)


def _int64(values):
    return _tensor(np.asarray(values, dtype=np.int64))


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    out = permutation.new_empty(permutation.shape)  # torch: scatter arange into an empty tensor
    return out.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


# ---- packing ---------------------------------------------------------------------------------------------


def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu "
                               f"{_word(lengths)} tensor")
        return np.asarray(lengths.tolist(), dtype=np.int64)  # host metadata, as torch reads it
    return np.asarray([int(v) for v in lengths], dtype=np.int64)


def _word(t):
    from ..._dispatch import dtype_word

    return dtype_word(t.dtype)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    r"""Packs a Tensor containing padded sequences of variable length.

    Args:
        input (Tensor): padded batch, (T, B, *) or (B, T, *) with `batch_first`.
        lengths (Tensor or list(int)): the length of each sequence.
        batch_first (bool): whether `input` is batch-major.
        enforce_sorted (bool): if True, `lengths` must be sorted in decreasing order; if False the batch is
            sorted here and the permutation kept in the result.
    """
    lens = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = _argsort(lens, 0, True, stable=False)  # torch.sort(lengths, descending=True): its tie order
        lens = lens[order]
        sorted_indices = _int64(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    T, B = input.shape[0], input.shape[1]
    if lens.size != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} (batch_size={B})")
    if lens.size and (np.diff(lens) > 0).any():
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lens.size and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if lens.size and lens[0] > T:
        raise RuntimeError(f"Expected lengths to be at most the sequence length {T}, but got {lens[0]}")
    steps = int(lens[0]) if lens.size else 0
    # time-major: row-major order of the True cells is the packed order
    mask = arange(steps).unsqueeze(1) < _int64(lens).unsqueeze(0)
    data = input[:steps][mask]
    batch_sizes = mask.sum(1)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    r"""Pads a packed batch of variable length sequences; the inverse of :func:`pack_padded_sequence`.

    Returns:
        (padded Tensor, int64 Tensor of the lengths), in the original order of the batch.
    """
    bs = sequence.batch_sizes
    n = bs.numel()
    T = n
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {T}")
        T = total_length
    B = int(bs[0]) if n else 0
    data = sequence.data
    mask = arange(B).unsqueeze(0) < bs.unsqueeze(1)  # (steps, B): which sequences are alive at each step
    if T > n:
        mask = cat([mask, mask.new_zeros((T - n, B))])
    padded = data.new_full((T, B, *data.shape[1:]), padding_value).index_put((mask,), data)
    lengths = mask.sum(0)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        return padded.index_select(0 if batch_first else 1, unsorted), lengths.index_select(0, unsorted)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    r"""Pads a list of variable length Tensors (L_i, *) to (max L, B, *) or, with `batch_first`, (B, max L, *).

    Args:
        padding_side (str): "right" (default) or "left": where the padding goes.
    """
    from ..._ops.shape import cat

    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    lens = np.array([s.shape[0] for s in sequences], dtype=np.int64)
    L, B = int(lens.max()), len(sequences)
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    sequences = tuple(_fit_trailing(s, trailing) for s in sequences)
    batch = np.repeat(np.arange(B), lens)
    within = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
    if padding_side == "left":
        within = within + np.repeat(L - lens, lens)
    index = (_int64(batch), _int64(within)) if batch_first else (_int64(within), _int64(batch))
    shape = (B, L, *trailing) if batch_first else (L, B, *trailing)
    data = cat(sequences) if B > 1 else first
    return data.new_full(shape, padding_value).index_put(index, data)


def _fit_trailing(s, trailing):
    """`s` broadcast to (len(s), *trailing) (the first sequence's trailing dims), as torch copies it."""
    out = (s.shape[0], *trailing)
    src = tuple(s.shape)
    if src == out:
        return s
    n = max(len(out), len(src))
    wide = []
    for k in range(n, 0, -1):
        a = out[-k] if k <= len(out) else 1
        b = src[-k] if k <= len(src) else 1
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                               f"dimension {n - k}")
        wide.append(max(a, b))
    if tuple(wide) != out:
        raise RuntimeError(f"output with shape {list(out)} doesn't match the broadcast shape {wide}")
    return s.expand(*out)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    r"""Unpads a padded Tensor into a list of variable length Tensors (the inverse of :func:`pad_sequence`)."""
    if not batch_first:  # torch transposes the caller's tensor in place; out of place until Tensor.transpose_ exists
        inplace = getattr(padded_sequences, "transpose_", None)
        padded_sequences = inplace(0, 1) if inplace is not None else padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    idx = arange(max_length)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    r"""Packs a list of variable length Tensors (L_i, *) into a PackedSequence."""
    lengths = _int64([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    r"""Unpacks a PackedSequence into a list of variable length Tensors."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)

