"""The file watcher (watchfiles): which changes matter, batched as watchfiles reports them."""

from __future__ import annotations

import os
from pathlib import Path

from watchfiles import Change, DefaultFilter

from palinode_vault.kinds import IGNORED_DIRS
from palinode_vault.writer import TEMP_MARK


class VaultFilter(DefaultFilter):
    """Notes and attachments only: no dot-folders (.palinode, .obsidian, .trash, .git),
    no dot-files, no temp files of ours or of editors."""

    def __init__(self, root: Path):
        super().__init__(ignore_dirs=tuple(IGNORED_DIRS) + DefaultFilter.ignore_dirs)
        self.root = str(root)

    def __call__(self, change: Change, path: str) -> bool:
        rel = os.path.relpath(path, self.root)
        if rel.startswith(".."):
            return False
        parts = rel.split(os.sep)
        if any(p.startswith(".") for p in parts) or TEMP_MARK in parts[-1]:
            return False
        if parts[-1].endswith(("~", ".swp", ".tmp")):
            return False
        return super().__call__(change, path)


def relative_changes(root: Path, changes: set[tuple[Change, str]]) -> tuple[set[str], set[str], set[str]]:
    """(added, modified, deleted) vault-relative '/' paths of one watchfiles batch."""
    added: set[str] = set()
    modified: set[str] = set()
    deleted: set[str] = set()
    for change, path in changes:
        rel = Path(os.path.relpath(path, root)).as_posix()
        {Change.added: added, Change.modified: modified, Change.deleted: deleted}[change].add(rel)
    # a path both deleted and added in one batch was replaced (atomic save): a modification
    replaced = added & deleted
    return added - replaced, modified | replaced, deleted - replaced
