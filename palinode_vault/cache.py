"""The parse cache: `VAULT/.palinode/cache.db`, keyed by path, size, mtime and content hash.

A second run over an unchanged vault parses nothing: a note whose size and mtime match is taken
from the cache without being read; one whose stat changed is read and hashed, and reparsed only
if its content changed. The cache is derived data: delete it any time. A vault where
`.palinode/` cannot be written (read-only media) simply runs without it.

`.palinode/` travels with the vault (git, sync tools, a downloaded vault), so a row is hostile
until checked. Rows are MessagePack (data only, never code: no pickle), each sealed with a
keyed BLAKE2b tag whose key lives outside the vault, in this user's data folder. A row whose tag
does not match (crafted, copied from another machine, corrupt) or that does not decode into the
shape written is dropped and its note parsed again; it is never fatal.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import os
import secrets
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack

from palinode_vault.core.findings import Finding
from palinode_vault.pathsafe import open_private, private_database

if TYPE_CHECKING:
    from palinode_vault.core.note import Note

# Bump when Note's shape or the parser's output changes, so old rows are ignored.
PARSER_VERSION = 13
TAG_BYTES = 16

# MessagePack extension codes for the YAML values JSON-like data lacks.
_EXT_DATE, _EXT_DATETIME, _EXT_SET, _EXT_TUPLE, _EXT_BIGINT = 1, 2, 3, 4, 5


class Undecodable(ValueError):
    """A cache row that is not what this version writes; the note is parsed again."""


# --- the key that seals rows --------------------------------------------------------------------

_KEY: bytes | None = None


def _key_path() -> Path:
    from platformdirs import user_data_dir

    return Path(os.environ.get("PALINODE_CACHE_KEY_DIR") or user_data_dir("palinode-vault")) / "cache.key"


def seal_key() -> bytes:
    """This user's cache key (created 0600 on first use); a process-only key where it cannot be
    stored, which makes the cache last one run but never trusts a row it did not write."""
    global _KEY
    if _KEY is not None:
        return _KEY
    path = _key_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            fd = None
        if fd is not None:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
        fd = open_private(path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            key = handle.read(64)
        if len(key) < 32:
            raise ValueError("short key")
    except (OSError, ValueError):
        key = secrets.token_bytes(32)
    _KEY = key
    return key


def _tag(data: bytes) -> bytes:
    return hashlib.blake2b(data, key=seal_key(), digest_size=TAG_BYTES).digest()


def seal(data: bytes) -> bytes:
    """`data` with its tag in front, as rows are stored."""
    return _tag(data) + data


def unseal(blob: Any) -> bytes:
    """The data of a sealed row, or `Undecodable` when the tag does not match."""
    if not isinstance(blob, bytes) or len(blob) < TAG_BYTES:
        raise Undecodable("not a sealed row")
    data = blob[TAG_BYTES:]
    if not hmac.compare_digest(blob[:TAG_BYTES], _tag(data)):
        raise Undecodable("tag does not match")
    return data


# --- values: MessagePack with a few extension types ---------------------------------------------


def _default(value: Any) -> msgpack.ExtType:
    if isinstance(value, dt.datetime):
        return msgpack.ExtType(_EXT_DATETIME, value.isoformat().encode())
    if isinstance(value, dt.date):
        return msgpack.ExtType(_EXT_DATE, value.isoformat().encode())
    if isinstance(value, (set, frozenset)):
        return msgpack.ExtType(_EXT_SET, _pack(list(value)))
    if isinstance(value, tuple):
        return msgpack.ExtType(_EXT_TUPLE, _pack(list(value)))
    if isinstance(value, int) and not isinstance(value, bool):
        return msgpack.ExtType(_EXT_BIGINT, str(value).encode())
    raise TypeError(f"cannot cache a {type(value).__name__}")


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _EXT_DATETIME:
        return dt.datetime.fromisoformat(data.decode())
    if code == _EXT_DATE:
        return dt.date.fromisoformat(data.decode())
    if code == _EXT_SET:
        return set(_unpack(data))
    if code == _EXT_TUPLE:
        return tuple(_unpack(data))
    if code == _EXT_BIGINT:
        return int(data.decode())
    raise Undecodable(f"unknown extension {code}")


def _pack(value: Any) -> bytes:
    # strict_types: a tuple is not silently stored as a list (it comes back as the tuple it was).
    return msgpack.packb(value, default=_default, strict_types=True, use_bin_type=True)


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, ext_hook=_ext_hook, raw=False, strict_map_key=False)


# --- notes ----------------------------------------------------------------------------------------


def encode_note(note: Note) -> bytes | None:
    """A note as the cache stores it, sealed; None for a value the format cannot hold (the
    note is simply not cached)."""
    err, block, foot = note.fm_error, note.fm_block, note.footer
    row = [
        note.path,
        note.text_hash,
        note.frontmatter,
        None if err is None else [err.message, err.line, err.column],
        None if block is None else [block.start, block.content_start, block.content_end, block.end],
        note.title,
        [list(h) for h in note.headings],
        sorted(note.block_ids),
        [list(link) for link in note.links],
        None if foot is None else list(foot),
        note.body_start,
        [list(c) for c in note.code],
        note.full_parse,
        note.mention_text,
        note.key_lines,
    ]
    try:
        return seal(_pack(row))
    except (TypeError, ValueError, OverflowError):
        return None


def decode_note(blob: bytes, path: str) -> Note:
    """The note of a sealed row for `path`; `Undecodable` when it is not a row we wrote for it."""
    # Imported here, not at the top: `quick_scan` reads stored summaries without the parser.
    from palinode_vault.core import frontmatter as fm
    from palinode_vault.core.note import Footer, Link, Note

    try:
        (
            p,
            text_hash,
            front,
            err,
            block,
            title,
            headings,
            block_ids,
            links,
            foot,
            body_start,
            code,
            full_parse,
            mention_text,
            key_lines,
        ) = _unpack(unseal(blob))
        if p != path or not isinstance(text_hash, str) or not isinstance(front, (dict, type(None))):
            raise Undecodable("row of another note")
        return Note(
            p,
            text_hash,
            front,
            None if err is None else fm.FrontmatterError(*err),
            None if block is None else fm.Block(*block),
            title,
            [tuple(h) for h in headings],
            frozenset(block_ids),
            [tuple.__new__(Link, link) for link in links],
            None if foot is None else Footer(*foot),
            body_start,
            [tuple(c) for c in code],
            full_parse,
            mention_text,
            key_lines,
        )
    except Undecodable:
        raise
    except Exception as exc:  # noqa: BLE001 - any malformed row is just dropped
        raise Undecodable(f"malformed row: {exc}") from None


def encode_report(total_files: int, findings: list[Finding], summary: dict[str, Any]) -> bytes | None:
    rows = [[f.check, f.path, f.line, f.message, f.severity, f.column, f.target, f.fixable, f.extra] for f in findings]
    try:
        return seal(_pack([total_files, rows, summary]))
    except (TypeError, ValueError, OverflowError):
        return None


def decode_report(blob: bytes) -> tuple[int, list[Finding], dict[str, Any]]:
    try:
        total, rows, summary = _unpack(unseal(blob))
        if not isinstance(total, int) or not isinstance(summary, dict):
            raise Undecodable("not a report")
        return total, [Finding(*row) for row in rows], summary
    except Undecodable:
        raise
    except Exception as exc:  # noqa: BLE001
        raise Undecodable(f"malformed report: {exc}") from None


def encode_summary(summary: dict[str, Any]) -> bytes | None:
    """`scan`'s summary as `quick_scan` stores it, sealed."""
    try:
        return seal(_pack(summary))
    except (TypeError, ValueError, OverflowError):
        return None


def decode_summary(blob: bytes) -> dict[str, Any]:
    try:
        summary = _unpack(unseal(blob))
    except Undecodable:
        raise
    except Exception as exc:  # noqa: BLE001
        raise Undecodable(f"malformed summary: {exc}") from None
    if not isinstance(summary, dict):
        raise Undecodable("not a summary")
    return summary


# --- the database -----------------------------------------------------------------------------


class ParseCache:
    def __init__(self, root: Path):
        self.db: sqlite3.Connection | None = None
        self.rows: dict[str, tuple[int, int, str, bytes]] = {}
        self.dropped = 0  # rows refused while loading (crafted, foreign or corrupt)
        try:
            # SQLite follows symlinks: a planted one is refused rather than written through
            target = private_database(root, "cache.db")
            self.db = sqlite3.connect(target, timeout=5)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS notes (path TEXT PRIMARY KEY, size INTEGER, "
                "mtime_ns INTEGER, hash TEXT, version INTEGER, data BLOB)"
            )
            self.db.execute("CREATE TABLE IF NOT EXISTS results (name TEXT PRIMARY KEY, fingerprint TEXT, data BLOB)")
        except (OSError, sqlite3.Error):
            if self.db is not None:
                self.db.close()
            self.db = None  # read-only vault, or a cache.db that is not one: run uncached

    def load(self) -> None:
        """Read every row once (one query is much faster than one per note)."""
        if self.db is None:
            return
        rows: dict[str, tuple[int, int, str, bytes]] = {}
        try:
            cur = self.db.execute("SELECT path, size, mtime_ns, hash, data FROM notes WHERE version = ?", (PARSER_VERSION,))
            for path, size, mtime, digest, data in cur:
                if (
                    isinstance(path, str)
                    and isinstance(size, int)
                    and isinstance(mtime, int)
                    and isinstance(digest, str)
                    and isinstance(data, bytes)
                ):
                    rows[path] = (size, mtime, digest, data)
                else:
                    self.dropped += 1
        except sqlite3.Error:
            rows = {}
        self.rows = rows

    def _decode(self, path: str, data: bytes) -> Note | None:
        try:
            return decode_note(data, path)
        except Undecodable:
            self.dropped += 1
            self.rows.pop(path, None)  # parsed again and stored afresh
            return None

    def by_stat(self, path: str, size: int, mtime_ns: int) -> Note | None:
        row = self.rows.get(path)
        if row and row[0] == size and row[1] == mtime_ns:
            return self._decode(path, row[3])
        return None

    def by_hash(self, path: str, text_hash: str) -> Note | None:
        row = self.rows.get(path)
        if row and row[2] == text_hash:
            note = self._decode(path, row[3])
            return note if note is not None and note.text_hash == text_hash else None
        return None

    def store(self, items: list[tuple[Note, int, int]]) -> None:
        """Remember parsed notes with the stat they were read at."""
        rows = []
        for note, size, mtime in items:
            data = encode_note(note)
            if data is not None:
                rows.append((note.path, size, mtime, note.text_hash, data))
        self.store_encoded(rows)

    def store_encoded(self, rows: list[tuple[str, int, int, str, bytes]]) -> None:
        """Rows of (path, size, mtime_ns, text hash, `encode_note(note)`), encoded by the caller."""
        if self.db is None or not rows:
            return
        try:
            with self.db:
                self.db.executemany(
                    "INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?, ?, ?)",
                    [(path, size, mtime, digest, PARSER_VERSION, data) for path, size, mtime, digest, data in rows],
                )
        except sqlite3.Error:
            pass

    def forget(self, paths: list[str]) -> None:
        if self.db is None or not paths:
            return
        try:
            with self.db:
                self.db.executemany("DELETE FROM notes WHERE path = ?", [(p,) for p in paths])
        except sqlite3.Error:
            pass

    def result(self, name: str, fingerprint: str) -> bytes | None:
        """The sealed blob of a whole-vault result stored for exactly this fingerprint, or None."""
        if self.db is None:
            return None
        try:
            row = self.db.execute("SELECT fingerprint, data FROM results WHERE name = ?", (name,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[0] != fingerprint or not isinstance(row[1], bytes):
            return None
        return row[1]

    def store_result(self, name: str, fingerprint: str, blob: bytes | None) -> None:
        if self.db is None or blob is None:
            return
        try:
            with self.db:
                self.db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?)", (name, fingerprint, blob))
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
