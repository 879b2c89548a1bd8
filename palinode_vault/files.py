"""The files of a vault as Obsidian shows them: the walk, with what it could not look at.

Kept apart from `vault.py` (reading and parsing) so that a command answering from the cache
(`quick_scan.py`) walks the vault without importing the parser.
"""

from __future__ import annotations

import os
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from palinode_vault.kinds import IGNORED_DIRS
from palinode_vault.pathsafe import inside_private

if TYPE_CHECKING:
    from palinode_vault.core.vault_state import Unreadable

MAX_NOTE_BYTES = 10 * 1024 * 1024  # the default limit: larger notes are findings, not parsed


def _unreadable(path: str, message: str) -> Unreadable:
    from palinode_vault.core.vault_state import Unreadable  # only when a problem is met

    return Unreadable(path, message)


@dataclass(frozen=True)
class FileStat:
    path: str  # vault-relative, '/'-separated
    size: int
    mtime_ns: int


def is_note(path: str) -> bool:
    return path.lower().endswith(".md")


def safe_name(rel: str) -> str | None:
    """None when `rel` is valid UTF-8 text; else a printable stand-in (a file name that is not
    UTF-8 comes from the OS as lone surrogates, which crash every later encode)."""
    if rel.isascii():
        return None
    try:
        rel.encode("utf-8")
        return None
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def walk_with_problems(root: Path) -> tuple[list[FileStat], list[Unreadable]]:
    """Every file Obsidian would show (no dot-files or dot-folders, no symlinked folders), and
    what could not be looked at: a folder that cannot be listed, a name that is not UTF-8, a
    note that is not a regular file (a FIFO would hang a read, a device would never end).

    A symlinked file counts only when it points to a regular file inside the vault and not into
    `.palinode/`, `.obsidian/` or `.git/` (the sidecar's token is not a note).
    """
    out: list[FileStat] = []
    problems: list[Unreadable] = []
    root_real = os.path.realpath(root)
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            if prefix:  # the vault root itself is checked by the caller
                problems.append(
                    _unreadable(
                        safe_name(prefix[:-1]) or prefix[:-1],
                        f"folder cannot be read ({exc.strerror or exc}); its notes are not checked",
                    )
                )
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in IGNORED_DIRS:
                continue
            rel = prefix + name
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    if not (real == root_real or real.startswith(root_real + os.sep)) or os.path.isdir(real):
                        continue  # outside the vault, or a folder link that could loop
                    if inside_private(root, real):
                        continue  # into .palinode/, .obsidian/ or .git/: never a note
                    st = os.stat(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    shown = safe_name(rel)
                    if shown is not None:
                        problems.append(
                            _unreadable(shown, "folder name is not valid UTF-8; rename it (its notes are not checked)")
                        )
                        continue
                    stack.append((entry.path, rel + "/"))
                    continue
                else:
                    st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                if is_note(name):
                    problems.append(_unreadable(safe_name(rel) or rel, f"cannot be read: {exc.strerror or exc}"))
                continue
            shown = safe_name(rel)
            if shown is not None:
                if is_note(shown):
                    problems.append(_unreadable(shown, "file name is not valid UTF-8; rename it"))
                continue
            if not stat_module.S_ISREG(st.st_mode):
                if is_note(rel):
                    problems.append(_unreadable(rel, "not a regular file (a FIFO, device or socket named .md); not read"))
                continue
            out.append(FileStat(rel, st.st_size, st.st_mtime_ns))
    out.sort(key=lambda f: f.path)
    problems.sort(key=lambda u: u.path)
    return out, problems


def walk(root: Path) -> list[FileStat]:
    """The vault's files (see `walk_with_problems`)."""
    return walk_with_problems(root)[0]
