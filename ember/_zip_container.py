"""The zip container of a checkpoint, byte for byte as torch's writer (miniz, inline_container.cc) lays it out.

NOTE [ Zip layout of a checkpoint ]
Every record is stored uncompressed under one top-level folder (the file's stem, or `archive` for a buffer),
in the order `data.pkl`, `.format_version`, `.storage_alignment`, `byteorder`, `data/0`, `data/1`, ...,
`version`, `.data/serialization_id`. A record is a local header (no sizes, flag 0x808: sizes follow in a
data descriptor, UTF-8 names) whose extra field `FB` + length + `Z` padding puts the payload on a 64-byte
boundary, so storages can be mapped straight from the file (`mmap=True`); then the payload and a data
descriptor (CRC-32 and sizes; none for an empty record, which also lacks flag 0x8). Records past 4 GiB, or
of 4 GiB or more, carry a zip64 extra field before the padding and a 64-bit data descriptor, and the file
always ends with a zip64 end record, its locator and the classic end record, as miniz writes them in zip64
mode. Reading goes through `zipfile` for the central directory and then straight to the payload offsets,
without CRC checks (torch does not check them either).
"""

import os
import struct
import zlib

import numpy as np

__all__ = []

_ALIGN = 64
_U32 = 0xFFFFFFFF
_MINIZ = (". This is an internal miniz error. If you are seeing this error, there is a high likelihood that your "
          "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was transferred "
          "incorrectly, or the file was modified after saving.")
_MAX_VERSION = 10


def archive_name(path):
    """torch's archive folder for a file path: the last path component without its extension."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0] if "." in base else base
    if not stem:
        raise RuntimeError(f"invalid file name: {path}")
    return stem


# ---- writing ------------------------------------------------------------------------------------------------

def _zip64_extra(size, offset):
    fields = []
    if size >= _U32:
        fields += [size, size]
    if offset >= _U32:
        fields.append(offset)
    if not fields:
        return b""
    return struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields)


class ZipWriter:
    """Writes records sequentially to a binary file object; `finish()` writes the central directory."""

    compute_crc32 = True  # (`ember.serialization.set_crc32_options(False)` writes 0)

    def __init__(self, f, name):
        self._f = f
        self._pos = 0
        self._name = name
        self._entries = []  # (name bytes, crc, size, header offset)

    def _write(self, data):
        self._f.write(data)
        self._pos += len(data) if isinstance(data, bytes) else data.nbytes

    def write_record(self, name, data):
        """Append record `name` holding `data` (bytes or a 1-D uint8 array, written without a copy)."""
        full = f"{self._name}/{name}".encode("utf-8")
        size = len(data) if isinstance(data, bytes) else data.nbytes
        offset = self._pos
        crc = zlib.crc32(data) if size and self.compute_crc32 else 0
        extra = _zip64_extra(size, offset)
        start = offset + 30 + len(full) + len(extra) + 4
        pad = (-start) % _ALIGN
        extra += b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x808 if size else 0x800
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, flags, 0, 0, 0, 0, 0, 0, len(full), len(extra)))
        self._write(full + extra)
        if size:
            self._write(memoryview(data) if not isinstance(data, bytes) else data)
            if extra.startswith(b"\x01\x00"):
                self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
            else:
                self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
        self._entries.append((full, crc, size, offset))

    def finish(self):
        cd_start = self._pos
        for full, crc, size, offset in self._entries:
            extra = _zip64_extra(size, offset)
            flags = 0x808 if size else 0x800
            s32 = size if size < _U32 else 0xFFFFFFFF  # the real values are in the zip64 extra field
            o32 = offset if offset < _U32 else 0xFFFFFFFF
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 45 if extra else 0, flags, 0, 0, 0, crc,
                                    s32, s32, len(full), len(extra), 0, 0, 0, 0, o32) + full + extra)
        cd_size, n = self._pos - cd_start, len(self._entries)
        eocd64 = self._pos
        self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, n, n, cd_size, cd_start))
        self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF), min(cd_size, 0xFFFFFFFF),
                                min(cd_start, 0xFFFFFFFF), 0))
        self._f.flush()


# ---- reading ------------------------------------------------------------------------------------------------

def _miniz_error(what):
    return RuntimeError(f"PytorchStreamReader failed {what}{_MINIZ}")


class ZipReader:
    """Random access to the records of a checkpoint held in the seekable binary file `f`."""

    def __init__(self, f):
        self._f = f
        start = f.tell()
        size = f.seek(0, os.SEEK_END)
        f.seek(start)
        if size - start < 22:
            raise _miniz_error("reading zip archive: not a ZIP archive")
        import zipfile

        self._zipfile = zipfile
        try:
            self._zip = zipfile.ZipFile(f)
        except zipfile.BadZipFile as e:
            what = "failed finding central directory" if "not a zip file" in str(e) else \
                "invalid header or archive is corrupted"
            raise _miniz_error(f"reading zip archive: {what}") from None
        infos = self._zip.infolist()
        if not infos:
            raise _miniz_error("reading zip archive: failed finding central directory")
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self.prefix = first.split("/", 1)[0] + "/"
        self._infos = {i.filename: i for i in infos}
        self._check_version()

    def _check_version(self):
        name = ".data/version" if self.has_record(".data/version") else "version"
        if not self.has_record(name):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could this error message '
                               "be improved?  If so, please report an enhancement request to PyTorch.)")
        text = self.get_record(name).decode("ascii", "replace").strip()
        try:
            version = int(text)
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {text} as Long.") from None
        if version < 1:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the minimum supported version for "
                "reading is 1. Your PyTorch script module file is too old. Please regenerate it with latest version "
                "of PyTorch to mitigate this issue.")
        if version > _MAX_VERSION:
            raise RuntimeError(
                f"Attempted to read a PyTorch file with version {version}, but the maximum supported version for "
                f"reading is {_MAX_VERSION}. The version of your PyTorch installation may be too old, please upgrade "
                "PyTorch to latest version to mitigate this issue.")

    def has_record(self, name):
        return self.prefix + name in self._infos

    def get_all_records(self):
        n = len(self.prefix)
        return [k[n:] for k in self._infos if k.startswith(self.prefix)]

    def _info(self, name):
        info = self._infos.get(self.prefix + name)
        if info is None:
            raise _miniz_error(f"locating file {name}: file not found")
        return info

    def get_record_offset(self, name):
        """Where the payload of record `name` starts in the file (after its local header)."""
        info = self._info(name)
        self._f.seek(info.header_offset)
        head = self._f.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise _miniz_error(f"reading file {name}: invalid header or archive is corrupted")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        return info.header_offset + 30 + name_len + extra_len

    def record_size(self, name):
        return self._info(name).file_size

    def is_stored(self, name):
        return self._info(name).compress_type == self._zipfile.ZIP_STORED

    def get_record(self, name):
        """The payload of record `name` as bytes."""
        out = self.read_into(name, np.empty(self.record_size(name), np.uint8))
        return out.tobytes()

    def read_into(self, name, out):
        """Fill the 1-D uint8 array `out` with the payload of record `name`."""
        info = self._info(name)
        if info.compress_type != self._zipfile.ZIP_STORED:
            data = self._zip.read(info)
            out[:] = np.frombuffer(data, np.uint8)
            return out
        self._f.seek(self.get_record_offset(name))
        view, done = memoryview(out), 0
        readinto = getattr(self._f, "readinto", None)
        while done < out.size:
            if readinto is not None:
                n = readinto(view[done:])
            else:
                chunk = self._f.read(out.size - done)
                n = len(chunk)
                view[done:done + n] = chunk
            if not n:
                raise _miniz_error(f"reading file {name}: file read failed")
            done += n
        return out

    def serialization_id(self):
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") else ""
