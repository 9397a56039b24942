"""safetensors files for ember tensors, written and read directly (no dependency on the `safetensors` package).

NOTE [ The safetensors format ]
A file is an 8-byte little-endian header length N, N bytes of JSON, then the tensor bytes. The JSON maps each
name to {"dtype": "F32" | "BF16" | ..., "shape": [...], "data_offsets": [begin, end]} (offsets into the byte
buffer after the header) and may hold "__metadata__", a str -> str dict. As the reference writer does, tensors
are laid out by decreasing dtype rank then name, the JSON is compact, and it is padded with spaces to a multiple
of 8 bytes, so a file written here is byte-identical to one from `safetensors.torch.save_file`. Tensors must be
contiguous and must not share memory (the format has no views); loading gives each tensor its own memory.
"""

import json
import os
import struct

import numpy as np

from .. import _dtypes
from .._naming import named
from .._storage import _address, _flat_bytes
from .._tensor import Tensor, _wrap

__all__ = ["save_file", "load_file", "save", "load", "SafetensorError"]

# ember dtype name -> safetensors name, in the reference writer's order (higher rank first in the file)
_NAMES = {"uint64": "U64", "int64": "I64", "float64": "F64", "complex64": "C64", "float32": "F32", "uint32": "U32",
          "int32": "I32", "bfloat16": "BF16", "float16": "F16", "uint16": "U16", "int16": "I16", "int8": "I8",
          "uint8": "U8", "bool": "BOOL"}
_RANK = {name: i for i, name in enumerate(_NAMES)}
_DTYPES = {v: k for k, v in _NAMES.items()}
_MAX_HEADER = 100_000_000


class SafetensorError(Exception):
    """A malformed safetensors file or an unsupported tensor (the reference library's error class name)."""


# ---- writing ------------------------------------------------------------------------------------------------

def _check_tensors(tensors):
    if not isinstance(tensors, dict):
        raise ValueError(named(f"Expected a dict of [str, ember.Tensor] but received {type(tensors)}"))
    groups = {}
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(named(f"Key `{k}` is invalid, expected ember.Tensor but received {type(v)}"))
        if v.dtype.name not in _NAMES:
            raise ValueError(f"Key `{k}` has dtype {v.dtype}, which the safetensors format cannot hold")
        flat = _flat_bytes(v._data)
        if flat.size:
            groups.setdefault((_address(flat), flat.size), set()).add(k)
    failing = [names for names in groups.values() if len(names) > 1]
    if failing:
        raise RuntimeError(
            f"""
            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: {failing}.
            A potential way to correctly save your model is to use `save_model`.
            More information at https://huggingface.co/docs/safetensors/torch_shared_tensors
            """  # noqa: E501 - the reference message, verbatim
        )
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you"
                " are trying to save tensors which are reference of each other in which case it's recommended to save"
                " only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to"
                " pack it before saving."
            )


def _layout(tensors, metadata):
    """(header bytes including the 8-byte length, [(array to write), ...]) for `tensors`."""
    _check_tensors(tensors)
    header = {}
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of str to str")
        header["__metadata__"] = metadata
    order = sorted(tensors, key=lambda k: (_RANK[tensors[k].dtype.name], k))
    offset, chunks = 0, []
    for k in order:
        a = np.ascontiguousarray(tensors[k]._data)
        end = offset + a.nbytes
        header[k] = {"dtype": _NAMES[tensors[k].dtype.name], "shape": list(a.shape), "data_offsets": [offset, end]}
        chunks.append(a.reshape(-1).view(np.uint8))
        offset = end
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, chunks


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding `tensors` (a dict of name -> contiguous Tensor).

    Args:
        tensors (Dict[str, Tensor]): the tensors to store.
        metadata (Dict[str, str], optional): free text stored in the header.
    """
    header, chunks = _layout(tensors, metadata)
    return header + b"".join(c.tobytes() for c in chunks)


def save_file(tensors, filename, metadata=None):
    """Saves `tensors` (a dict of name -> contiguous Tensor) to `filename` in the safetensors format.

    The write is atomic, as `ember.save`'s (see NOTE [ Atomic saves ] in ember/serialization.py).

    Example:
        >>> save_file({"embedding": ember.zeros(512, 1024)}, "model.safetensors")
    """
    from ..serialization import _atomic_write

    header, chunks = _layout(tensors, metadata)

    def write(fh):
        fh.write(header)
        for c in chunks:
            fh.write(memoryview(c))

    _atomic_write(os.fspath(filename), write)


# ---- reading ------------------------------------------------------------------------------------------------

def _parse_header(head_len, read_header, data_len):
    if head_len > _MAX_HEADER:
        raise SafetensorError("Error while deserializing header: HeaderTooLarge")
    if head_len > data_len:
        raise SafetensorError("Error while deserializing header: MetadataIncompleteBuffer")
    try:
        header = json.loads(read_header(head_len).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorError(f"Error while deserializing header: InvalidHeaderDeserialization: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: InvalidHeaderDeserialization")
    header.pop("__metadata__", None)
    buffer_len = data_len - head_len
    spans = []
    for name, info in header.items():
        try:
            dtype = getattr(_dtypes, _DTYPES[info["dtype"]])
            shape = [int(s) for s in info["shape"]]
            begin, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise SafetensorError(f"Error while deserializing header: invalid entry for tensor {name!r}") from None
        if any(s < 0 for s in shape) or not 0 <= begin <= end <= buffer_len:
            raise SafetensorError(f"Error while deserializing header: InvalidOffset({name})")
        if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != end - begin:
            raise SafetensorError(f"Error while deserializing header: TensorInvalidInfo for {name}")
        spans.append((begin, end, name, dtype, shape))
    covered = 0
    for begin, end, name, _, _ in sorted(spans):
        if begin != covered:
            raise SafetensorError(f"Error while deserializing header: InvalidOffset({name})")
        covered = end
    if covered != buffer_len:
        raise SafetensorError("Error while deserializing header: MetadataIncompleteBuffer")
    return spans


def _tensor(flat, dtype, shape):
    return _wrap(flat.view(_dtypes.to_numpy(dtype)).reshape(shape))


def load(data):
    """The tensors of a safetensors file given as bytes (each with its own memory)."""
    if len(data) < 8:
        raise SafetensorError("Error while deserializing header: HeaderTooSmall")
    (head_len,) = struct.unpack("<Q", data[:8])
    spans = _parse_header(head_len, lambda n: bytes(data[8:8 + n]), len(data) - 8)
    base = 8 + head_len
    out = {}
    for begin, end, name, dtype, shape in spans:
        out[name] = _tensor(np.frombuffer(data, np.uint8, end - begin, base + begin).copy(), dtype, shape)
    return {name: out[name] for name in _header_order(spans)}


def load_file(filename, device="cpu"):
    """Loads a safetensors file into a dict of name -> Tensor (on the CPU: other devices fail as in torch)."""
    from .._device import check_device

    check_device(device)
    with open(filename, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(0)
        head = f.read(8)
        if len(head) < 8:
            raise SafetensorError("Error while deserializing header: HeaderTooSmall")
        (head_len,) = struct.unpack("<Q", head)
        spans = _parse_header(head_len, f.read, size - 8)
        base, out = 8 + head_len, {}
        for begin, end, name, dtype, shape in sorted(spans):
            flat = np.empty(end - begin, np.uint8)
            f.seek(base + begin)
            if f.readinto(memoryview(flat)) != flat.size:
                raise SafetensorError("Error while deserializing header: MetadataIncompleteBuffer")
            out[name] = _tensor(flat, dtype, shape)
    return {name: out[name] for name in _header_order(spans)}


def _header_order(spans):
    return sorted(s[2] for s in spans)  # the reference library returns tensors by name
