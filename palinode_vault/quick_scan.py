"""`scan` of a vault where nothing changed, answered from the parse cache with few imports.

A warm `scan` used to import the parser, the linter, pydantic and PyYAML (about 0.3 s) only to
find that the stored report still held. Here the stored summary is keyed by a fingerprint that
needs none of them: every file's path, size and mtime (before exclusions), what the walk could
not read, the texts exclusions are made from (`.obsidian/app.json`, `.palinode/ignore`,
PROGRAM.md), PROGRAM.md itself, today's date, the note size limit and the parser and package
versions. It covers everything the full report's fingerprint (`Vault.fingerprint`) covers,
so it can only be stricter.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from palinode_vault import __version__
from palinode_vault.cache import PARSER_VERSION, ParseCache, Undecodable, decode_summary, encode_summary
from palinode_vault.exclusions import source_texts
from palinode_vault.files import MAX_NOTE_BYTES, FileStat, walk_with_problems
from palinode_vault.program import program_path

if TYPE_CHECKING:
    from palinode_vault.core.vault_state import Unreadable

RESULT_NAME = "scan-summary"


def fingerprint(
    root: Path,
    today: dt.date,
    walked: tuple[list[FileStat], list[Unreadable]] | None = None,
    max_note_bytes: int = MAX_NOTE_BYTES,
) -> str:
    """A hash of everything `scan`'s summary depends on (see the module's docstring); `walked`:
    the vault's `walk_with_problems`, when the caller has it (else the vault is walked here)."""
    digest = hashlib.sha256()
    digest.update(f"{__version__}|{PARSER_VERSION}|{max_note_bytes}|{today.isoformat()}\0".encode())
    try:
        digest.update(program_path(root).read_bytes())
    except OSError as exc:
        digest.update(f"unreadable PROGRAM.md: {exc}".encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    for text in source_texts(root):
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    files, problems = walked if walked is not None else walk_with_problems(root)
    for f in files:
        digest.update(f"{f.path}\0{f.size}\0{f.mtime_ns}\n".encode("utf-8", "surrogatepass"))
    for p in problems:
        digest.update(f"!{p.path}\0{p.message}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def stored_summary(root: Path, key: str) -> dict[str, Any] | None:
    """The summary stored under exactly this fingerprint, or None (absent, stale, or a row that
    does not check: crafted, foreign or corrupt)."""
    if not (root / ".palinode" / "cache.db").is_file():
        return None  # never scanned: do not create the cache just to look
    cache = ParseCache(root)
    try:
        blob = cache.result(RESULT_NAME, key)
    finally:
        cache.close()
    if blob is None:
        return None
    try:
        return {**decode_summary(blob), "parsed": 0}
    except Undecodable:
        return None


def store_summary(root: Path, key: str, summary: dict[str, Any]) -> None:
    """Remember `summary` under the fingerprint taken before it was computed (a file changed
    meanwhile makes the next fingerprint differ, so a stale summary is never served)."""
    cache = ParseCache(root)
    try:
        cache.store_result(RESULT_NAME, key, encode_summary(summary))
    finally:
        cache.close()
