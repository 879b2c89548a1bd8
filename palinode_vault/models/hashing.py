"""SHA-256 of model files, cached by path, size and mtime (models can be gigabytes)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from palinode_vault.models.packaged import cache_dir

_CACHE_NAME = "sha256.json"


def file_sha256(path: Path) -> str:
    """Return the hex SHA-256 of `path`, reusing a cached value while size and mtime match."""
    path = path.resolve()
    stat = path.stat()
    key = str(path)
    stamp = [stat.st_size, stat.st_mtime_ns]
    cache_file = cache_dir() / _CACHE_NAME
    cache = _read(cache_file)
    entry = cache.get(key)
    if isinstance(entry, dict) and entry.get("stamp") == stamp:
        return str(entry["sha256"])
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    cache[key] = {"stamp": stamp, "sha256": value}
    _write(cache_file, cache)
    return value


def _read(cache_file: Path) -> dict:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(cache_file: Path, cache: dict) -> None:
    # Best effort: a read-only cache folder only costs re-hashing next time.
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_name(f".{cache_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, cache_file)
    except OSError:
        pass
