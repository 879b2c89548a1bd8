"""The sidecar's JSON-RPC methods (docs/PROTOCOL.md), registered on a Dispatcher."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from palinode_vault import results as r
from palinode_vault.core.entities import canonical_ref
from palinode_vault.core.findings import CHECKS
from palinode_vault.core.fix import fixable
from palinode_vault.core.graph import backlinks, build_graph, neighbourhood
from palinode_vault.core.repair import name_candidates
from palinode_vault.core.vault_state import entity_entries
from palinode_vault.maintenance import fix as run_fix
from palinode_vault.maintenance import memory_file_count, repair_links
from palinode_vault.maintenance import undo as run_undo
from palinode_vault.pathsafe import PathOutsideVault, vault_relative
from palinode_vault.server import BUSY, NOT_FOUND, Connection, Dispatcher, PalinodeError
from palinode_vault.sidecar.app import Sidecar, in_order
from palinode_vault.vault import NoteText

MAX_FINDINGS = 10_000  # findings in one answer; `truncated` counts the rest (counts stay whole)
MAX_NODES = 2_000  # nodes in one graph.neighbourhood answer; `truncated` counts the rest


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoParams(_Params):
    pass


class PathParams(_Params):
    path: str


class LintParams(_Params):
    path: str | None = None
    checks: list[str] | None = None


class FixParams(_Params):
    path: str | None = None
    dry_run: bool = False


class NeighbourhoodParams(_Params):
    path: str
    depth: int = Field(default=1, ge=1, le=2)


class RepairCandidatesParams(_Params):
    path: str | None = None
    target: str = Field(min_length=1, max_length=1000)


class RepairParams(_Params):
    path: str
    target: str = Field(min_length=1, max_length=1000)
    new_target: str
    dry_run: bool = False


class UndoParams(_Params):
    run: str | None = Field(
        default=None,
        max_length=64,
        description="the run to revert (a `run` an earlier answer gave); without it, the newest run",
    )


class EditorParams(_Params):
    active: str | None = None
    open: list[str] = Field(default_factory=list, max_length=1000)
    last_keystroke: float | None = None


class RenameParams(_Params):
    old_path: str
    new_path: str


class SettingsSetParams(_Params):
    quiet_seconds: float | None = Field(default=None, ge=0, le=3600)
    auto_fixes: dict[Literal["footer", "cross_refs"], bool] | None = None


def register(dispatcher: Dispatcher, sidecar: Sidecar, server_port: Callable[[], int | None]) -> None:
    """Register every method on `dispatcher`, bound to `sidecar`."""
    root = sidecar.root
    graph_cache: dict[str, Any] = {}

    def vault_file(raw: str) -> str:
        """A vault-relative path that may be a note: inside the vault, not in a dot-folder."""
        rel = vault_relative(root, raw)
        if any(part.startswith(".") for part in rel.split("/")):
            raise PathOutsideVault(raw, "paths inside dot-folders such as .palinode are not notes")
        return rel

    def note_path(raw: str, must_exist: bool = True) -> str:
        rel = vault_file(raw)
        state = sidecar.vault.state
        if must_exist and rel not in state.notes and rel not in state.unreadable:
            raise PalinodeError(NOT_FOUND, f"no note at {rel!r} in this vault")
        return rel

    def graph():
        state = sidecar.vault.state
        if graph_cache.get("generation") != state.generation:
            graph_cache["graph"] = build_graph(state)
            graph_cache["generation"] = state.generation
        return graph_cache["graph"]

    async def status(params: NoParams, conn: Connection) -> dict:
        return sidecar.status(server_port())

    def bounded(findings: list, total: int | None = None) -> dict:
        """At most MAX_FINDINGS findings in an answer (one note of half a million broken links
        would otherwise make an answer of a hundred megabytes); `truncated` says how many more."""
        total = len(findings) if total is None else total
        out: dict[str, Any] = {"findings": [f.to_json() for f in findings[:MAX_FINDINGS]]}
        if total > MAX_FINDINGS:
            out["truncated"] = total - MAX_FINDINGS
        return out

    # The bodies below run in a worker thread under the vault lock (`sidecar.run`): the loop keeps
    # answering /health, handshakes and small requests while a huge note's answer is built.

    async def lint(params: LintParams, conn: Connection) -> dict:
        unknown = [c for c in params.checks or [] if c not in CHECKS]
        if unknown:
            raise PalinodeError(-32602, f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECKS)}")
        rel = note_path(params.path) if params.path else None

        def work() -> dict:
            from palinode_vault.core.lint import counts

            if rel:
                findings = list(sidecar.findings.get(rel, []))
            else:
                findings = [f for items in sidecar.findings.values() for f in items]
            if params.checks:
                wanted = set(params.checks)
                findings = [f for f in findings if f.check in wanted]
            by_check, total = counts(findings), len(findings)
            if not rel:
                findings = in_order(findings, MAX_FINDINGS)
            return {"total_files": memory_file_count(sidecar.vault.state), **bounded(findings, total), "counts": by_check}

        return await sidecar.run(work)

    async def fix(params: FixParams, conn: Connection) -> dict:
        paths = [note_path(params.path)] if params.path else None
        result = await sidecar.run(lambda: run_fix(sidecar.vault, paths, dry_run=params.dry_run, label="fix"))
        await sidecar.after_write(result.written, "fix", result.run)
        return {**result.to_json(), "diff": result.diff, "run": result.run}

    async def note_findings(params: PathParams, conn: Connection) -> dict:
        rel = note_path(params.path)
        found = await sidecar.run(lambda: bounded(list(sidecar.findings.get(rel, []))))
        return {"path": rel, **found}

    async def note_info(params: PathParams, conn: Connection) -> dict:
        # on the loop: a few frontmatter values, small whatever the note's size
        rel = note_path(params.path)
        note = sidecar.vault.state.notes.get(rel)
        if note is None:
            return {"path": rel, "title": rel, "category": None, "entities": [], "cross_refs": [], "hash": None}
        data = note.frontmatter or {}
        refs = data.get("cross_refs") or []
        return {
            "path": rel,
            "title": note.title,
            "category": data.get("category") if isinstance(data.get("category"), str) else None,
            "entities": [canonical_ref(e) or e for e in entity_entries(note)],
            "cross_refs": [str(r) for r in refs] if isinstance(refs, list) else [],
            "hash": note.text_hash,
        }

    async def note_backlinks(params: PathParams, conn: Connection) -> dict:
        rel = note_path(params.path)
        return {"path": rel, "backlinks": await sidecar.run(lambda: backlinks(graph(), rel))}

    async def graph_neighbourhood(params: NeighbourhoodParams, conn: Connection) -> dict:
        rel = note_path(params.path)
        return await sidecar.run(lambda: neighbourhood(graph(), rel, params.depth, max_nodes=MAX_NODES))

    async def repair_candidates(params: RepairCandidatesParams, conn: Connection) -> dict:
        rel = note_path(params.path) if params.path else None
        worker = sidecar.index_worker
        if worker is None:
            found = await sidecar.run(name_candidates, sidecar.vault.state, params.target)
            return {"target": params.target, "candidates": [{"path": c.path, "score": c.score, "why": c.why} for c in found]}
        # names blended with meaning (palinode_vault.index): the link text read in its sentence
        from palinode_vault.index import repair_candidates as blended
        from palinode_vault.index import text_reader

        found, why_names = await sidecar.run(
            lambda: blended(worker.reader, sidecar.vault.state, params.target, path=rel, read=text_reader(sidecar.vault))
        )
        out = {"target": params.target, "candidates": [{"path": c.path, "score": c.score, "why": c.why} for c in found]}
        if why_names:
            out["note"] = why_names
        return out

    async def link_repair(params: RepairParams, conn: Connection) -> dict:
        rel = note_path(params.path)
        new = note_path(params.new_target)

        def work() -> dict:
            note = sidecar.vault.state.notes.get(rel)
            if note is not None and note.fm_error is not None:
                raise PalinodeError(-32602, fixable(note) or "frontmatter does not parse")
            return repair_links(sidecar.vault, params.target, new, [rel], dry_run=params.dry_run)

        result = await sidecar.run(work)
        await sidecar.after_write(result["written"], "link repair", result["run"])
        return result

    async def undo(params: UndoParams, conn: Connection) -> dict:
        result = await sidecar.run(run_undo, sidecar.vault, params.run)
        if result.refused:
            raise PalinodeError(BUSY, f"not undone: {result.refused}")
        await sidecar.after_write(result.restored, "undo")
        return {"restored": result.restored, "run": result.run, "skipped": [{"path": p, "reason": r} for p, r in result.skipped]}

    async def editor_state(params: EditorParams, conn: Connection) -> dict:
        active = vault_file(params.active) if params.active else None
        open_paths = [vault_file(p) for p in params.open]
        sidecar.set_editor(active, open_paths, params.last_keystroke, conn)
        return {"ok": True}

    async def rename(params: RenameParams, conn: Connection) -> dict:
        old = vault_file(params.old_path)
        new = vault_file(params.new_path)
        count = await sidecar.rename(old, new)
        # give the scheduler a moment: unopened, quiet files are written right away
        await asyncio.sleep(0)
        return {"written": [], "refs_updated": count, "scheduled": count}

    async def settings_get(params: NoParams, conn: Connection) -> dict:
        s = sidecar.settings
        return {
            "quiet_seconds": s.quiet_seconds,
            "auto_fixes": {"footer": s.auto_fix_footer, "cross_refs": s.auto_fix_cross_refs},
            "models": {"embedding": s.embedding_model, "generation": s.generation_model},
        }

    async def settings_set(params: SettingsSetParams, conn: Connection) -> dict:
        s = sidecar.settings
        if params.quiet_seconds is not None:
            s.quiet_seconds = params.quiet_seconds
        if params.auto_fixes:
            s.auto_fix_footer = params.auto_fixes.get("footer", s.auto_fix_footer)
            s.auto_fix_cross_refs = params.auto_fixes.get("cross_refs", s.auto_fix_cross_refs)
            sidecar.schedule_machine_fixes()  # notes already stale get fixed now, not at their next change
        sidecar._wake.set()
        return await settings_get(NoParams(), conn)

    def when_ready(handler):
        """Methods that read the vault wait for the first scan; `status` answers at once."""

        async def wrapped(params, conn):
            await sidecar.ready.wait()
            return await handler(params, conn)

        return wrapped

    dispatcher.register("status", status, NoParams, r.StatusResult)
    dispatcher.register("editor.state", editor_state, EditorParams, r.Ok)
    dispatcher.register("settings.get", settings_get, NoParams, r.SidecarSettings)
    dispatcher.register("settings.set", settings_set, SettingsSetParams, r.SidecarSettings)
    for name, handler, params_model, result_model in (
        ("lint", lint, LintParams, r.LintResult),
        ("fix", fix, FixParams, r.FixResult),
        ("note.findings", note_findings, PathParams, r.NoteFindings),
        ("note.info", note_info, PathParams, r.NoteInfo),
        ("note.backlinks", note_backlinks, PathParams, r.Backlinks),
        ("graph.neighbourhood", graph_neighbourhood, NeighbourhoodParams, r.Neighbourhood),
        ("link.repair_candidates", repair_candidates, RepairCandidatesParams, r.RepairCandidates),
        ("link.repair", link_repair, RepairParams, r.FixResult),
        ("undo", undo, UndoParams, r.UndoResult),
        ("rename", rename, RenameParams, r.RenameResult),
    ):
        dispatcher.register(name, when_ready(handler), params_model, result_model)
    _register_index_methods(dispatcher, sidecar, note_path, when_ready)
    from palinode_vault.sidecar.memory_methods import register_memory

    register_memory(dispatcher, sidecar)
    from palinode_vault.sidecar.agent_methods import register_agent

    register_agent(dispatcher, sidecar)  # an MCP server's writes (palinode_vault/mcp/)


# --- the search index: search, dedup_suggest, related (palinode_vault.index) -------------------


class SearchParams(_Params):
    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=10, ge=1, le=200)
    mode: Literal["hybrid", "keyword", "vector"] | None = None
    category: str | None = None
    status: str | None = None
    folder: str | None = None
    since: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    until: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    include_daily: bool = False
    include_archived: bool = False


class DedupParams(_Params):
    path: str | None = None
    text: str | None = Field(default=None, max_length=200_000)
    category: str | None = None
    limit: int = Field(default=5, ge=1, le=100)


class RelatedParams(_Params):
    path: str
    limit: int = Field(default=10, ge=1, le=100)


def _register_index_methods(dispatcher: Dispatcher, sidecar: Sidecar, note_path, when_ready) -> None:
    """search, dedup_suggest and related over the sidecar's index (its reader connection)."""
    from palinode_vault.index import NoVectors, dedup, related, search
    from palinode_vault.server import NOT_AVAILABLE

    def index():
        worker = sidecar.index_worker
        if worker is None:
            raise PalinodeError(NOT_AVAILABLE, sidecar.index_error or "the search index is not started yet; retry shortly")
        return worker.reader

    def meaning(func):
        try:
            return func()
        except NoVectors as exc:
            raise PalinodeError(NOT_AVAILABLE, f"needs an embedding model: {exc}") from exc

    async def search_method(params: SearchParams, conn: Connection) -> dict:
        from palinode_vault.memory.weekly import access

        idx = index()
        args = params.model_dump()
        query = args.pop("query")
        session = access.connection_session(conn.state, conn.id)

        def work() -> dict:
            found = search(idx, query, **args)
            # what sessions find, for the weekly core-drift check (memory/weekly/access.py)
            access.record(sidecar.root, "search", session, [r.get("path") for r in found.get("results", [])])
            return found

        return await asyncio.to_thread(work)

    async def dedup_method(params: DedupParams, conn: Connection) -> dict:
        if (params.path is None) == (params.text is None):
            raise PalinodeError(-32602, "give exactly one of 'path' or 'text'")
        idx = index()
        rel, text = None, params.text
        if params.path is not None:
            rel = note_path(params.path)
            read = sidecar.vault.read(rel)
            if not isinstance(read, NoteText):
                raise PalinodeError(NOT_FOUND, f"{rel} cannot be read: {read.message}")
            text = read.text
        found = await asyncio.to_thread(
            meaning, lambda: dedup(idx, text or "", category=params.category, limit=params.limit, exclude_path=rel)
        )
        return {"results": [s.to_json() for s in found]}

    async def related_method(params: RelatedParams, conn: Connection) -> dict:
        idx = index()
        rel = note_path(params.path)
        found = await sidecar.run(meaning, lambda: related(idx, sidecar.vault.state, rel, limit=params.limit))
        return {"results": [{"path": s.path, "similarity": s.similarity} for s in found]}

    dispatcher.register("search", when_ready(search_method), SearchParams, r.SearchResult)
    dispatcher.register("dedup_suggest", when_ready(dedup_method), DedupParams, r.DedupResult)
    dispatcher.register("related", when_ready(related_method), RelatedParams, r.RelatedResult)
