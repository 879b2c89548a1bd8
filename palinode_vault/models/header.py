"""Read a GGUF file's scalar metadata (architecture, sizes) without loading the model.

`gguf.GGUFReader` parses every tensor and the whole vocabulary (half a second for a
small model); `models list` needs three numbers, so this reads the key-value section
and skips arrays.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, BinaryIO

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def read_metadata(path: Path) -> dict[str, Any]:
    """Scalar and string key-values of the GGUF at `path` (arrays are skipped).

    Raises ValueError when the file is not GGUF (v2 or v3).
    """
    with Path(path).open("rb") as handle:
        magic, version = struct.unpack("<4sI", handle.read(8))
        if magic != b"GGUF" or version not in (2, 3):
            raise ValueError(f"{path} is not a GGUF v2/v3 file")
        _tensors, count = struct.unpack("<QQ", handle.read(16))
        found: dict[str, Any] = {}
        for _ in range(count):
            key = _string(handle)
            kind = _u32(handle)
            if kind == _ARRAY:
                _skip_array(handle)
            else:
                found[key] = _value(handle, kind)
        return found


def embedding_length(path: Path) -> int | None:
    """`<arch>.embedding_length`, or None when the file cannot be read."""
    try:
        meta = read_metadata(path)
    except (OSError, ValueError, struct.error):
        return None
    value = meta.get(f"{meta.get('general.architecture', '')}.embedding_length")
    return int(value) if value is not None else None


def _u32(handle: BinaryIO) -> int:
    return struct.unpack("<I", handle.read(4))[0]


def _string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    return handle.read(length).decode("utf-8", "replace")


def _value(handle: BinaryIO, kind: int) -> Any:
    if kind == _STRING:
        return _string(handle)
    fmt = _SCALARS.get(kind)
    if fmt is None:
        raise ValueError(f"unknown GGUF value type {kind}")
    return struct.unpack(fmt, handle.read(struct.calcsize(fmt)))[0]


def _skip_array(handle: BinaryIO) -> None:
    kind = _u32(handle)
    (count,) = struct.unpack("<Q", handle.read(8))
    if kind == _STRING:
        for _ in range(count):
            (length,) = struct.unpack("<Q", handle.read(8))
            handle.seek(length, 1)
    elif kind == _ARRAY:
        for _ in range(count):
            _skip_array(handle)
    else:
        fmt = _SCALARS.get(kind)
        if fmt is None:
            raise ValueError(f"unknown GGUF array element type {kind}")
        handle.seek(struct.calcsize(fmt) * count, 1)
