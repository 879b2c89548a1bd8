"""The parse cache: `VAULT/.palinode/cache.db`, keyed by path, size, mtime and content hash.

A second run over an unchanged vault parses nothing: a note whose size and mtime match is taken
from the cache without being read; one whose stat changed is read and hashed, and reparsed only
if its content changed. The cache is derived data: delete it any time. A vault where
`.palinode/` cannot be written (read-only media) simply runs without it.
"""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

from palinode_vault.core.note import Note

# Bump when Note's shape or the parser's output changes, so old rows are ignored.
PARSER_VERSION = 8


def dumps(note: Note) -> bytes:
    """A note as the cache stores it (parse workers send notes to the parent in this form too)."""
    return pickle.dumps(note, protocol=5)


class ParseCache:
    def __init__(self, root: Path):
        self.db: sqlite3.Connection | None = None
        self.rows: dict[str, tuple[int, int, str, bytes]] = {}
        folder = root / ".palinode"
        try:
            folder.mkdir(exist_ok=True)
            self.db = sqlite3.connect(folder / "cache.db", timeout=5)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS notes (path TEXT PRIMARY KEY, size INTEGER, "
                "mtime_ns INTEGER, hash TEXT, version INTEGER, data BLOB)"
            )
            self.db.execute("CREATE TABLE IF NOT EXISTS results (name TEXT PRIMARY KEY, fingerprint TEXT, data BLOB)")
        except (OSError, sqlite3.Error):
            self.db = None  # read-only vault: run uncached

    def load(self) -> None:
        """Read every row once (one query is much faster than one per note)."""
        if self.db is None:
            return
        try:
            cur = self.db.execute(
                "SELECT path, size, mtime_ns, hash, data FROM notes WHERE version = ?", (PARSER_VERSION,)
            )
            self.rows = {row[0]: (row[1], row[2], row[3], row[4]) for row in cur}
        except sqlite3.Error:
            self.rows = {}

    def by_stat(self, path: str, size: int, mtime_ns: int) -> Note | None:
        row = self.rows.get(path)
        if row and row[0] == size and row[1] == mtime_ns:
            return pickle.loads(row[3])
        return None

    def by_hash(self, path: str, text_hash: str) -> Note | None:
        row = self.rows.get(path)
        if row and row[2] == text_hash:
            return pickle.loads(row[3])
        return None

    def store(self, items: list[tuple[Note, int, int]]) -> None:
        """Remember parsed notes with the stat they were read at."""
        self.store_pickled([(n.path, size, mtime, n.text_hash, dumps(n)) for n, size, mtime in items])

    def store_pickled(self, rows: list[tuple[str, int, int, str, bytes]]) -> None:
        """Rows of (path, size, mtime_ns, text hash, `dumps(note)`), already pickled by the caller."""
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

    def result(self, name: str, fingerprint: str):
        """A whole-vault result stored for exactly this fingerprint, or None."""
        if self.db is None:
            return None
        try:
            row = self.db.execute("SELECT fingerprint, data FROM results WHERE name = ?", (name,)).fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[0] != fingerprint:
            return None
        return pickle.loads(row[1])

    def store_result(self, name: str, fingerprint: str, value) -> None:
        if self.db is None:
            return
        try:
            with self.db:
                self.db.execute(
                    "INSERT OR REPLACE INTO results VALUES (?, ?, ?)",
                    (name, fingerprint, pickle.dumps(value, protocol=5)),
                )
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
