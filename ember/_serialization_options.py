"""The settings and registries of torch.serialization beyond save/load themselves.

`LoadEndianness` and the default load byte order, the crc32 switch, `skip_data`, the storage-location
package registry (`register_package`, `location_tag`), and the small helpers torch.serialization exports
(`SourceChangeWarning`, `mkdtemp`, `check_module_version_greater_or_equal`, ...). ember/serialization.py
re-exports them and reads the settings on its slow paths (one lookup per save or load, none per tensor).
"""

import shutil
import tempfile
import threading
import warnings
from contextlib import contextmanager
from enum import Enum

from ._naming import named

__all__ = ["SourceChangeWarning", "mkdtemp", "register_package", "check_module_version_greater_or_equal",
           "validate_cuda_device", "validate_hpu_device", "location_tag", "normalize_storage_type",
           "storage_to_tensor_type", "LoadEndianness", "get_crc32_options", "set_crc32_options",
           "get_default_load_endianness", "set_default_load_endianness", "skip_data"]


class SourceChangeWarning(Warning):
    """Warned when the source of a class saved in a legacy checkpoint has changed since it was saved."""


@contextmanager
def mkdtemp():
    """A temporary directory for the `with` block, removed afterwards."""
    path = tempfile.mkdtemp()
    try:
        yield path
    finally:
        shutil.rmtree(path)


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    """Whether `module.__version__` is at least `req_version_tuple` (each field cast to the tuple's type).

    A version string that does not parse raises a RuntimeError, or with ``error_if_malformed=False`` warns and
    counts as met.
    """
    try:
        fields = module.__version__.split(".")
        version = tuple(type(req)(fields[i]) for i, req in enumerate(req_version_tuple))
        return version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed '{module.__version__}' and cannot be "
                   f"compared with tuple {str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        return True


# ---- byte order and crc32 ---------------------------------------------------------------------------------

class LoadEndianness(Enum):
    """The byte order assumed for a checkpoint that carries no byte-order record."""

    NATIVE = 1
    LITTLE = 2
    BIG = 3


_config = {"endianness": None, "compute_crc32": True}


def get_default_load_endianness():
    """The byte order assumed when a checkpoint has no byte-order record (None: little-endian)."""
    return _config["endianness"]


def set_default_load_endianness(endianness):
    """Set the byte order assumed when a checkpoint has no byte-order record (a `LoadEndianness` or None)."""
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config["endianness"] = endianness


def get_crc32_options():
    """Whether `save` computes and writes the crc32 of each record (default True)."""
    return _config["compute_crc32"]


def set_crc32_options(compute_crc32):
    """Set whether `save` computes the crc32 of each record (False writes 0; `load` reads the file either way)."""
    _config["compute_crc32"] = compute_crc32


def fallback_byteorder(native):
    """The byte order of a checkpoint without a byte-order record: "little", "big", or `native`."""
    endianness = _config["endianness"]
    if endianness is None or endianness is LoadEndianness.LITTLE:
        return "little"
    if endianness is LoadEndianness.BIG:
        return "big"
    if endianness is LoadEndianness.NATIVE:
        return native
    raise ValueError("Invalid load endianness type")


# ---- skip_data --------------------------------------------------------------------------------------------

_tls = threading.local()


def skipping_data():
    """Whether a `skip_data` block is active in this thread."""
    return getattr(_tls, "skip_data", False)


class skip_data:
    """Context manager that skips writing and reading storage bytes in `save` / `load`.

    Saving writes each storage's record with its size but zero bytes in place of the data; loading builds
    the tensors the checkpoint describes with storages whose bytes are not read (zero-filled in ember).

    Args:
        materialize_fake_tensors (bool): torch's option for fake tensors; ember has none, so it changes nothing.
    """

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._old = skipping_data()
        _tls.skip_data = True

    def __exit__(self, type, value, tb):  # noqa: A002 - the context-manager protocol's name
        _tls.skip_data = self._old


# ---- storage locations: the package registry ----------------------------------------------------------------

def _cpu_tag(obj):
    if obj.device.type == "cpu":
        return "cpu"


def _cpu_deserialize(obj, location):
    if location == "cpu":
        return obj


_package_registry = [(10, _cpu_tag, _cpu_deserialize)]


def register_package(priority, tagger, deserializer):
    """Register a tagger (storage -> location string or None, at save time) and a deserializer ((storage,
    location) -> storage or None, at load time), run in order of `priority` (lower first)."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda entry: entry[0])


def location_tag(storage):
    """The location string a storage is saved with (the first registered tagger that names one)."""
    for _, tagger, _ in _package_registry:
        location = tagger(storage)
        if location:
            return location
    raise RuntimeError(f"don't know how to determine data location of {type(storage).__module__}."
                       f"{type(storage).__qualname__}")


def registered_restore(storage, location):
    """The storage the registered deserializers give for `location`, or None when none takes it."""
    for _, _, deserializer in _package_registry:
        result = deserializer(storage, location)
        if result is not None:
            return result
    return None


def validate_cuda_device(location):
    """The CUDA device index of a location; fails as on a CPU-only torch."""
    raise RuntimeError(named(
        "Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is False. If you are "
        "running on a CPU-only machine, please use ember.load with map_location=ember.device('cpu') to map your "
        "storages to the CPU."))


def validate_hpu_device(location):
    """The HPU device index of a location; fails, as ember has no HPU backend."""
    raise RuntimeError(named(
        "The HPU device module is not registered. If you are running on a CPU-only machine, please use "
        "ember.load with map_location=ember.device('cpu') to map your storages to the CPU."))


def normalize_storage_type(storage_type):
    """The `ember.<Name>` of a storage type."""
    import ember

    return getattr(ember, storage_type.__name__)


def storage_to_tensor_type(storage):
    """The legacy tensor type of a legacy typed storage (`FloatStorage` -> `FloatTensor`)."""
    import importlib

    storage_type = type(storage)
    module = importlib.import_module(storage_type.__module__)
    return getattr(module, storage_type.__name__.replace("Storage", "Tensor"))
