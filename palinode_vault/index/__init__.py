"""The search index of a vault: hybrid search, duplicates, related notes, link repair.

`VAULT/.palinode/index.db` holds an FTS5 keyword row per note and sqlite-vec vectors of every
note's chunks; it is derived from the files and can be rebuilt from them at any time. Without
llama.cpp, a model file or sqlite-vec it works keyword-only and says so.

    from palinode_vault.index import open_index, refresh, search, dedup
    index = open_index(vault_root)
    refresh(index, vault)            # bring it in line with the files (embeds only new text)
    search(index, "why postgres")    # {"mode", "results": [{"path", "score", "title", "snippet"}]}
    dedup(index, draft_text)         # [Suggestion(path, similarity, strong)]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from palinode_vault.index.hybrid import MODES, Filters, fuse, search
from palinode_vault.index.meaning import (
    NoVectors,
    Suggestion,
    dedup,
    linked_paths,
    lint_candidates,
    related,
    repair_candidates,
    topic_coverage,
)
from palinode_vault.index.model import ModelSlot
from palinode_vault.index.store import Index, UpdateReport, index_path, is_daily

if TYPE_CHECKING:
    from palinode_vault.vault import Vault

__all__ = [
    "MODES",
    "Filters",
    "Index",
    "ModelSlot",
    "NoVectors",
    "Suggestion",
    "UpdateReport",
    "dedup",
    "add_lint_candidates",
    "fuse",
    "index_path",
    "is_daily",
    "lint_candidates",
    "linked_paths",
    "open_index",
    "refresh",
    "related",
    "repair_candidates",
    "search",
    "text_reader",
    "topic_coverage",
]


def open_index(root: str | Path, *, model_path: str | Path | None = None, model: ModelSlot | None = None, embedder=None) -> Index:
    """Open (or create) the index of the vault at `root`."""
    return Index(root, model=model, model_path=model_path, embedder=embedder)


def text_reader(vault: Vault):
    """`read(path)` -> the note's normalised text, or None when it cannot be read."""
    from palinode_vault.vault import NoteText

    def read(path: str) -> str | None:
        got = vault.read(path)
        return got.text if isinstance(got, NoteText) else None

    return read


def refresh(index: Index, vault: Vault, progress=None, embed: bool = True, embed_seconds: float | None = None) -> UpdateReport:
    """Bring the index in line with the vault's files (loading the vault if needed).

    Keywords are always brought up to date; embedding stops after about `embed_seconds`
    (None: embed everything; 0 or `embed=False`: nothing)."""
    import time

    if not vault.loaded:
        vault.load(progress)
    deadline = None if embed_seconds is None else time.monotonic() + embed_seconds
    return index.sync(vault.state.notes, text_reader(vault), progress, embed=embed and embed_seconds != 0, deadline=deadline)


def add_lint_candidates(vault: Vault, report: dict) -> None:
    """Give the broken-link findings of a `lint --json` report (the first 100) a ranked
    `candidates` list, when the vault has an index (no vault load, no model). Without one the report is left as it is; any failure here
    leaves it as it is too (lint must keep working)."""
    broken = [f for f in report.get("findings", []) if f.get("check") == "broken_link"]
    if not broken or not index_path(vault.root).is_file():
        return
    try:
        index = Index(vault.root, model_path=vault.settings.embedding_model)
        try:
            lint_candidates(index, broken)
        finally:
            index.close()
    except Exception:  # noqa: BLE001 - candidates are a bonus; the findings stand without them
        return
