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
        super().__init__(ignore_dirs=(*IGNORED_DIRS, *DefaultFilter.ignore_dirs))
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


def _files_under(directory: str, keep: VaultFilter | None) -> list[str]:
    """The files a folder that just appeared holds. A folder moved into the vault is reported as
    the folder alone, and a note written into a brand-new folder before the watcher has a watch on
    it is not reported at all (inotify adds the watch after the folder's own event)."""
    out = []
    for top, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if keep is None or keep(Change.added, os.path.join(top, d))]
        out += [p for f in files if keep is None or keep(Change.added, p := os.path.join(top, f))]
    return out


def relative_changes(
    root: Path, changes: set[tuple[Change, str]], keep: VaultFilter | None = None
) -> tuple[set[str], set[str], set[str]]:
    """(added, modified, deleted) vault-relative '/' paths of one watchfiles batch; a folder that
    appeared counts as its files (`keep` filters them as the watcher does)."""
    added: set[str] = set()
    modified: set[str] = set()
    deleted: set[str] = set()
    for change, path in changes:
        if change == Change.added and os.path.isdir(path):
            added.update(Path(os.path.relpath(p, root)).as_posix() for p in _files_under(path, keep))
            continue
        rel = Path(os.path.relpath(path, root)).as_posix()
        {Change.added: added, Change.modified: modified, Change.deleted: deleted}[change].add(rel)
    # a path both deleted and added in one batch was replaced (atomic save): a modification
    replaced = added & deleted
    return added - replaced, modified | replaced, deleted - replaced
