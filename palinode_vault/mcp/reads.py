"""The agent's read tools over a loaded vault and its index: session start (the core set),
search, read, list, dedup, orphan repair, related, lint, and consolidation as a dry run.

Reads never write a note. Session start and search are recorded in `.palinode/access.jsonl`
(paths only, never the query) for the weekly core-drift check, as the CLI and the socket do.
"""

from __future__ import annotations

from typing import Any

from palinode_vault.core.entities import ref_of_path
from palinode_vault.kinds import BY_NAME, is_memory_path, memory_type, top_folder
from palinode_vault.mcp.ops import MAX_READ_CHARS, AgentError
from palinode_vault.memory.update.logic import keyword_similar
from palinode_vault.memory.weekly import access
from palinode_vault.pathsafe import PathOutsideVault, vault_relative
from palinode_vault.program import load_program
from palinode_vault.vault import NoteText, Vault

KINDS = tuple(BY_NAME)
NEXT_STEPS = (
    "Before writing a memory: palinode_search for it, then palinode_dedup_suggest with the draft "
    "(similarity 0.90 or more: it is already there, update rather than add). Save with palinode_save "
    "(typed; the vault decides NOOP/UPDATE/ADD/SUPERSEDE and the path). For a link whose target does not "
    "exist, palinode_orphan_repair. At the end, palinode_session_end with a summary (and the transcript "
    "path when you have one). Never save secrets. The rules: the PROGRAM.md resource or the "
    "memory-manager prompt."
)


def note_path(vault: Vault, raw: str) -> str:
    """A vault-relative note path an agent gave, or AgentError (outside the vault, a dot-folder,
    no such note)."""
    try:
        rel = vault_relative(vault.root, raw)
    except PathOutsideVault as exc:
        raise AgentError(f"{raw!r} is not a path inside the vault: {exc}") from exc
    if any(part.startswith(".") for part in rel.split("/")):
        raise AgentError(f"{raw!r} is inside a dot-folder; only notes can be read")
    state = vault.state
    for candidate in (rel, rel + ".md"):
        if candidate in state.notes:
            return candidate
    raise AgentError(f"no note at {rel!r}; palinode_list or palinode_search give the paths")


def session_start(vault: Vault, session: str) -> dict[str, Any]:
    from palinode_vault.memory.weekly.core_memory import core_set

    result = core_set(vault)
    access.record(vault.root, "core", session, [f["path"] for f in result.files])
    notes = [{"path": f["path"], "title": f["title"], "text": result.texts.get(f["path"], "")} for f in result.files]
    return {
        "session": session,
        "core": notes,
        "chars": result.chars,
        "max_chars": result.max_chars,
        "left_out": result.left_out,
        "next": NEXT_STEPS,
    }


def search(
    vault: Vault,
    index: Any,
    session: str,
    query: str,
    *,
    category: str | None = None,
    limit: int = 10,
    mode: str | None = None,
    include_archived: bool = False,
) -> dict[str, Any]:
    from palinode_vault.index import search as run_search

    if category and category not in KINDS:
        raise AgentError(f"unknown category {category!r}; one of {', '.join(KINDS)}")
    result = run_search(index, query, limit=limit, mode=mode, category=category, include_archived=include_archived)
    access.record(vault.root, "search", session, [r.get("path") for r in result["results"]])
    return result


def read(vault: Vault, path: str) -> dict[str, Any]:
    rel = note_path(vault, path)
    got = vault.read(rel)
    if not isinstance(got, NoteText):
        raise AgentError(f"{rel} cannot be read: {got.message}")
    note = vault.state.notes[rel]
    text = got.text
    return {
        "path": rel,
        "title": note.title,
        "ref": ref_of_path(rel),
        "frontmatter": _plain(note.frontmatter or {}),
        "text": text[:MAX_READ_CHARS],
        "truncated": len(text) > MAX_READ_CHARS,
    }


def _plain(value: Any) -> Any:
    """Frontmatter as JSON (dates become ISO strings)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def list_notes(
    vault: Vault, *, category: str | None = None, core: bool | None = None, status: str | None = None, limit: int = 200
) -> dict[str, Any]:
    if category and category not in KINDS + ("inbox",):
        raise AgentError(f"unknown category {category!r}; one of {', '.join(KINDS + ('inbox',))}")
    out = []
    for path in sorted(vault.state.notes):
        if not is_memory_path(path) or path.count("/") != 1:
            continue
        note = vault.state.notes[path]
        data = note.frontmatter or {}
        folder = top_folder(path)
        if category == "inbox" and folder != "inbox":
            continue
        if category and category != "inbox" and folder != BY_NAME[category].folder:
            continue
        if core is not None and (data.get("core") is True) != core:
            continue
        if status is not None and str(data.get("status") or "") != status:
            continue
        out.append(
            {
                "path": path,
                "title": note.title,
                "type": memory_type(data) or "",
                "status": str(data.get("status") or ""),
                "core": data.get("core") is True,
                "last_updated": _plain(data.get("last_updated")),
            }
        )
    return {"notes": out[:limit], "total": len(out), "truncated": len(out) > limit}


def dedup(vault: Vault, index: Any, text: str, *, category: str | None = None, limit: int = 5) -> dict[str, Any]:
    """The closest notes to a draft; `strong` at PROGRAM.md's update.strong_duplicate (0.90).
    Without vectors, keyword similarity, and the answer says so."""
    from palinode_vault.index import NoVectors
    from palinode_vault.index import dedup as run_dedup

    if category and category not in KINDS:
        raise AgentError(f"unknown category {category!r}; one of {', '.join(KINDS)}")
    strong = load_program(vault.root).settings.update.strong_duplicate
    try:
        found = run_dedup(index, text, category=category, limit=limit)
        return {"results": [s.to_json() for s in found], "strong_at": strong, "method": "meaning (embeddings)"}
    except NoVectors as exc:
        kind = BY_NAME.get(category or "")
        type_name = kind.schema if kind else None
        hits = keyword_similar(vault)(text, type_name)[:limit]
        return {
            "results": [{"path": p, "similarity": s, "strong": s >= strong} for p, s in hits],
            "strong_at": strong,
            "method": f"keywords only ({exc}); fall back to palinode_search mode=keyword and judge",
        }


def orphan_repair(vault: Vault, index: Any, link_text: str, *, path: str | None = None, limit: int = 5) -> dict[str, Any]:
    from palinode_vault.index import repair_candidates, text_reader

    source = note_path(vault, path) if path else None
    found, note = repair_candidates(index, vault.state, link_text, path=source, read=text_reader(vault), limit=limit)
    out: dict[str, Any] = {"target": link_text, "candidates": [{"path": c.path, "score": c.score, "why": c.why} for c in found]}
    if note:
        out["note"] = note
    return out


def related(vault: Vault, index: Any, path: str, *, limit: int = 10) -> dict[str, Any]:
    from palinode_vault.index import NoVectors
    from palinode_vault.index import related as run_related

    rel = note_path(vault, path)
    try:
        found = run_related(index, vault.state, rel, limit=limit)
    except NoVectors as exc:
        raise AgentError(f"related needs the embedding model: {exc}; use palinode_search instead") from exc
    return {"path": rel, "results": [{"path": s.path, "similarity": s.similarity} for s in found]}


def lint(vault: Vault, path: str | None = None) -> dict[str, Any]:
    from palinode_vault.maintenance import lint as run_lint

    paths = [note_path(vault, path)] if path else None
    report = run_lint(vault, paths)
    data = report.to_json()
    data["findings"] = data["findings"][:500]
    return data


def consolidate_dry_run(vault: Vault) -> dict[str, Any]:
    """The weekly consolidation as a dry run: planned operations and diffs, nothing written."""
    from palinode_vault.memory.weekly.consolidate import consolidate

    result = consolidate(vault, dry_run=True, generator=False, embedder=False)
    return {
        "operations": result.operations,
        "diff": "".join(result.diffs[p] for p in sorted(result.diffs)),
        "dry_run": True,
        "note": "consolidation that writes is the person's or the sidecar's weekly run",
    }
