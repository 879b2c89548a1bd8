"""`palinode-vault mcp --vault PATH`: the vault as an agent's memory, over MCP (stdio).

Built on the official SDK (`mcp` 2.x, `MCPServer`). The tools are the ones PROGRAM.md tells an
agent to call; each has a JSON schema from its annotated parameters and answers with structured
content (a JSON object). What the tools do lives in `ops.py` (writes) and `reads.py` (reads);
this module only routes:

- **Writes through one door.** When a sidecar serves the vault (`.palinode/sidecar.json` and its
  lock held), `palinode_save` and `palinode_session_end` are sent to it as the socket methods
  `agent.save` / `agent.session_end`, so its journal, undo, pushes to the plugin and watcher see
  them as its own writes. Otherwise they run here, with the same writer the CLI uses (atomic,
  conflict-checked, one journaled run per call).
- **State** is loaded once (vault from the parse cache, index, models) and brought up to date before
  every call: the vault's files are re-stat'ed and only changed ones re-read (`Vault.refresh`, as
  the sidecar does for its watcher's batches), so an edit the person made between two calls is
  seen by the next. The index is synced only when something changed since its last sync, and only
  when no sidecar keeps it.

All vault work runs on one worker thread, so calls never overlap and the protocol stays live.
A refused call is an MCP tool error (`isError`) with a message saying what to change; an
unexpected failure is reported without a traceback (the SDK logs it on stderr).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field, ValidationError

from palinode_vault import results as r
from palinode_vault.mcp.ops import AgentError, SaveRequest, SessionEndRequest, client_source

log = logging.getLogger(__name__)

SERVER_NAME = "palinode-vault"
INSTRUCTIONS = (
    "This server is the person's long-term memory (an Obsidian vault managed by palinode-vault). "
    "Call palinode_session_start first: it hands you the core memories and what to call next. Search "
    "before you save; save typed memories with palinode_save and let the vault decide the operation; "
    "end with palinode_session_end. Never save secrets. PROGRAM.md (resource palinode://program, prompt "
    "memory-manager) holds the rules."
)


Category = Literal["person", "project", "decision", "insight", "research"]

# A file whose mtime is this close to the moment it was stat'ed may change again without its stat
# changing (coarse timestamps: 2 s on FAT, 1 s on older HFS+/ext3): it is read again next call.
RACY_NS = 2_000_000_000


class VaultService:
    """Routes tool calls to the sidecar (writes, when it runs) or to this process's vault."""

    def __init__(self, root: Path, embedding_model: str | None = None):
        self.root = Path(root).resolve()
        self.embedding_model = embedding_model
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="palinode-mcp")
        self._pass_lock = threading.Lock()  # one write pass at a time (one model in memory)
        self._index: Any = None
        self._index_error: str | None = None
        self._index_stale = True  # the vault changed since the index was last synced with it
        self._loaded: Any = None  # the Vault, kept for the life of the server (worker thread only)
        self._racy: set[str] = set()  # files stat'ed within RACY_NS of their mtime: read again next call
        self.session: str | None = None

    # --- where writes go ----------------------------------------------------------------------

    def sidecar(self):
        """The running sidecar's discovery info, or None (no file, or its lock is not held)."""
        from palinode_vault.server import holder, read_discovery

        try:
            info = read_discovery(self.root)
        except Exception:  # noqa: BLE001 - an unreadable discovery file: no sidecar to talk to
            return None
        if info is None or holder(self.root) is None:
            return None
        return info

    async def call_sidecar(self, info: Any, method: str, params: dict[str, Any], timeout: float = 600.0) -> Any:
        """One JSON-RPC call on the sidecar's socket (Bearer token, loopback)."""
        from websockets.asyncio.client import connect

        url = f"ws://127.0.0.1:{info.port}/rpc"
        async with connect(
            url, additional_headers={"Authorization": f"Bearer {info.token}"}, open_timeout=10, max_size=64 * 1024 * 1024
        ) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), timeout))
                if message.get("id") != 1 or "method" in message:
                    continue  # notifications (wrote, findings.changed) are not our answer
                if "error" in message:
                    raise AgentError(str(message["error"].get("message") or message["error"]))
                return message.get("result")

    # --- this process's vault -----------------------------------------------------------------

    def _vault(self):
        """The vault, up to date with the disk: loaded once, then every file re-stat'ed and the
        changed, new, deleted (and recently stat'ed) ones re-read. Worker thread only."""
        from palinode_vault.settings import Settings
        from palinode_vault.vault import Vault, walk

        vault = self._loaded
        checked = time.time_ns()
        if vault is None:
            vault = Vault(Settings(vault=self.root, embedding_model=self.embedding_model))
            vault.load()
            files = list(vault.stats.values())
            self._index_stale = True
        else:
            files = walk(self.root)
            seen = {f.path for f in files}
            changed = {f.path for f in files if vault.stats.get(f.path) != f} | (set(vault.stats) - seen) | self._racy
            if changed:
                # refresh compares text hashes: a re-read file whose text is the same costs no parse,
                # and the index needs a sync only when a note's text changed, came or went
                def texts() -> dict[str, str | None]:
                    return {p: getattr(vault.state.notes.get(p), "text_hash", None) for p in changed}

                before = texts()
                vault.refresh(changed)
                if texts() != before:
                    self._index_stale = True
        self._racy = {f.path for f in files if f.mtime_ns >= checked - RACY_NS}
        self._loaded = vault
        return vault

    def _index_for(self, vault: Any, sync: bool) -> Any:
        if self._index is None and self._index_error is None:
            try:
                from palinode_vault.index import open_index

                self._index = open_index(self.root, model_path=self.embedding_model)
            except Exception as exc:  # noqa: BLE001 - no sqlite-vec or model: search says why
                self._index_error = str(exc)
        if self._index is None:
            raise AgentError(f"the search index cannot be opened: {self._index_error}")
        if sync and self._index_stale:
            from palinode_vault.index import text_reader

            self._index.sync(vault.state.notes, text_reader(vault), embed=True)
            self._index_stale = False
        return self._index

    def _on_worker(self, job: Callable[[], Any], *, writes: bool) -> Any:
        """Run `job` on the worker thread. A write that fails, or any unexpected failure, may
        leave the kept vault differing from the disk in ways a re-stat cannot see (a pass that
        changed the state in memory, then stopped): the next call loads it afresh."""

        def guarded():
            try:
                return job()
            except AgentError:
                if writes:
                    self._loaded = None
                raise
            except BaseException:
                self._loaded = None
                raise

        return asyncio.wrap_future(self._worker.submit(guarded))

    async def run(self, work: Callable[..., Any], *, index: bool = False) -> Any:
        """`work(vault)` or `work(vault, index)` on the worker thread, on the up-to-date vault."""
        keep_index = index and self.sidecar() is None

        def job():
            vault = self._vault()
            return work(vault, self._index_for(vault, keep_index)) if index else work(vault)

        return await self._on_worker(job, writes=False)

    async def write(self, method: str, params: dict[str, Any], local: Callable[[Any, Any, Any], Any]) -> Any:
        """A write: through the sidecar when it runs, else here (index kept up to date first):
        `local(vault, index, write)`, a pass that writes with `write(ws, label)`."""
        info = self.sidecar()
        if info is not None:
            result = await self.call_sidecar(info, method, params)
            if isinstance(result, dict):
                result["via"] = "sidecar"
            return result

        # The worker thread is this server's vault lock: it refreshes and snapshots the vault and
        # writes; the pass itself (the model, embeddings) runs beside it, so reads keep answering
        # while a transcript is extracted (memory/update/planned.py).
        def locked(fn: Callable[[], Any]) -> Any:
            return self._worker.submit(fn).result()

        def prepare():
            vault = self._vault()
            try:
                index = self._index_for(vault, True)
            except AgentError:
                index = None  # keyword similarity, as the extraction pass falls back
            return vault, index

        def whole():
            from palinode_vault.memory.update.planned import StalePlan, plan_then_write

            with self._pass_lock:
                vault, index = locked(prepare)
                try:
                    result = plan_then_write(vault, lambda snap, write: local(snap, index, write), locked=locked)
                except StalePlan as exc:
                    raise AgentError(str(exc)) from None
                except AgentError:
                    raise
                except BaseException:
                    self._loaded = None  # a write that failed midway: load afresh next time
                    self._index_stale = True
                    raise
            if result.get("written"):
                self._index_stale = True  # the write refreshed the vault; the index follows next call
            return result

        result = await asyncio.to_thread(whole)
        result["via"] = "local"
        return result

    def close(self) -> None:
        self._worker.shutdown(wait=False)
        if self._index is not None:
            try:
                self._index.close()
            except Exception:  # noqa: BLE001
                pass


def _client_name(ctx: Any) -> str:
    try:
        params = ctx.session.client_params
        return params.client_info.name if params is not None else ""
    except AttributeError:
        return ""


async def _guard(call) -> CallToolResult:
    """Run a tool body; refused input becomes a tool error with its message, never a traceback.

    The answer goes out as it is (structured content, and the same JSON as text for clients that
    read only text); the SDK validates it against the tool's result model in palinode_vault/results.py,
    which is also the tool's published `outputSchema` (`Annotated[CallToolResult, Model]`)."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        result = await call
        text = json.dumps(result, ensure_ascii=False, indent=2, default=str)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)
    except AgentError as exc:
        raise ToolError(str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ToolError(f"invalid {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    except ToolError:
        raise
    except Exception as exc:  # noqa: BLE001 - a bug or a missing part: said in one line, traceback on stderr
        log.exception("tool call failed")
        raise ToolError(f"failed: {type(exc).__name__}: {exc} (details in the server log on stderr)") from None


def build_server(root: Path, embedding_model: str | None = None, generator: Any = None):
    """The MCP server for the vault at `root` (tools, the PROGRAM.md resource and prompt)."""
    from mcp.types import ToolAnnotations

    from palinode_vault import __version__
    from palinode_vault.mcp import ops, reads
    from palinode_vault.memory.weekly import access
    from palinode_vault.program import program_path

    ReadOnly = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    Writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
    service = VaultService(root, embedding_model)
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__)
    server.palinode_service = service  # type: ignore[attr-defined]  # tests and the CLI close it

    def memo():
        """The extraction model behind a memory of its answers (memory/update/planned.py), loaded at the
        first prompt: `generator`, else PROGRAM.md's model server or the default model."""
        from palinode_vault.memory.extraction.extract import load_generator
        from palinode_vault.memory.update.planned import MemoGenerator
        from palinode_vault.program import load_program

        return MemoGenerator(generator if generator is not None else (lambda: load_generator(None, load_program(root))))

    def session() -> str:
        if service.session is None:
            service.session = access.new_session("mcp")
        return service.session

    @server.tool(annotations=ReadOnly)
    async def palinode_session_start() -> Annotated[CallToolResult, r.SessionStartResult]:
        """Start a session: returns the core memories (core: true notes, within PROGRAM.md's core budget)
        with their full text, and what to call next. Call this once, first."""
        session_id = service.session = access.new_session("mcp")
        return await _guard(service.run(lambda v: reads.session_start(v, session_id)))

    @server.tool(annotations=ReadOnly)
    async def palinode_search(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="what to look for, in words")],
        category: Annotated[Category | None, Field(description="only notes of this kind")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="how many results")] = 10,
        mode: Annotated[
            Literal["hybrid", "keyword", "vector"] | None,
            Field(description="default hybrid when the embedding model is there, else keyword"),
        ] = None,
        include_archived: Annotated[bool, Field(description="also retired (archived) memories")] = False,
    ) -> Annotated[CallToolResult, r.SearchResult]:
        """Search the memory (keywords and meaning). Use before saving anything, to find what the vault
        already holds. Results: path, title, score, snippet; archived memories are left out unless asked."""
        return await _guard(
            service.run(
                lambda v, i: reads.search(
                    v, i, session(), query, category=category, limit=limit, mode=mode, include_archived=include_archived
                ),
                index=True,
            )
        )

    @server.tool(annotations=ReadOnly)
    async def palinode_read(
        path: Annotated[str, Field(min_length=1, max_length=1000, description="vault-relative, e.g. people/priya-nair.md")],
    ) -> Annotated[CallToolResult, r.ReadResult]:
        """Read one note: its frontmatter and full text. Paths outside the vault are refused."""
        return await _guard(service.run(lambda v: reads.read(v, path)))

    @server.tool(annotations=ReadOnly)
    async def palinode_list(
        category: Annotated[Category | Literal["inbox"] | None, Field(description="only this kind (or inbox)")] = None,
        core: Annotated[bool | None, Field(description="only core (true) or non-core (false) notes")] = None,
        status: Annotated[str | None, Field(max_length=40, description="only this status (active, archived, review...)")] = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 200,
    ) -> Annotated[CallToolResult, r.ListResult]:
        """List memory notes (path, title, type, status, core, last_updated), filtered."""
        return await _guard(service.run(lambda v: reads.list_notes(v, category=category, core=core, status=status, limit=limit)))

    @server.tool(annotations=ReadOnly)
    async def palinode_dedup_suggest(
        text: Annotated[str, Field(min_length=1, max_length=20000, description="the draft memory")],
        category: Annotated[Category | None, Field(description="compare only with this kind")] = None,
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
    ) -> Annotated[CallToolResult, r.ToolDedupResult]:
        """Before creating a memory, pass the draft: the closest existing notes with their similarity.
        `strong` (similarity 0.90 or more, PROGRAM.md) almost always means the memory exists: update, not add."""
        return await _guard(service.run(lambda v, i: reads.dedup(v, i, text, category=category, limit=limit), index=True))

    @server.tool(annotations=ReadOnly)
    async def palinode_orphan_repair(
        link_text: Annotated[str, Field(min_length=1, max_length=1000, description="the link target that does not exist")],
        path: Annotated[str | None, Field(max_length=1000, description="the note holding the link, for context")] = None,
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
    ) -> Annotated[CallToolResult, r.RepairCandidates]:
        """Candidate notes for a link whose target does not exist (name similarity and meaning).
        Rewrite the link to the right one, or create the target from what the candidates say."""
        return await _guard(service.run(lambda v, i: reads.orphan_repair(v, i, link_text, path=path, limit=limit), index=True))

    @server.tool(annotations=Writes)
    async def palinode_save(
        ctx: Context,
        type: Annotated[
            str, Field(max_length=40, description="PersonMemory, ProjectSnapshot, Decision, Insight, ResearchRef or ActionItem")
        ],
        title: Annotated[
            str, Field(min_length=1, max_length=200, description="short and specific; for a person or project, its name")
        ],
        text: Annotated[
            str,
            Field(
                min_length=1, max_length=100000, description="the memory itself, standalone and specific (one fact or decision)"
            ),
        ],
        entities: Annotated[
            list[str],
            Field(
                max_length=20, description="canonical refs of existing notes it is about: person/priya-nair, project/field-kit"
            ),
        ] = [],  # noqa: B006
        rationale: Annotated[str, Field(max_length=100000, description="why (decisions); the person's role (people)")] = "",
        alternatives: Annotated[str, Field(max_length=100000, description="options that lost, and why (decisions)")] = "",
        confidence: Annotated[
            float, Field(ge=0.0, le=1.0, description="how sure; below 0.6 it waits in inbox/ for the person")
        ] = 0.8,
        supersedes: Annotated[
            list[str],
            Field(max_length=5, description="decisions/insights this replaces (path, ref or id): archived, never deleted"),
        ] = [],  # noqa: B006
        replaces: Annotated[
            str,
            Field(max_length=500, description="person/project: the text of the fact this replaces (moved to the history note)"),
        ] = "",
        due: Annotated[str, Field(max_length=10, description="ActionItem: due date YYYY-MM-DD")] = "",
    ) -> Annotated[CallToolResult, r.AgentSaveResult]:
        """Save a typed memory. The vault applies PROGRAM.md's update logic and answers what it did:
        `ADD decisions/x.md`, `NOOP: already in ...`, `UPDATE ...`, `SUPERSEDE ...` (old one archived),
        `INBOX ...` (confidence below 0.6: the person reviews it). It picks the path, links entities
        and writes the See-also footer. Refused with a reason: secrets (the kind is named), unknown
        types, entities with no note, a supersedes naming nothing, oversized text. Journaled: undo reverts it."""

        async def call():
            req = SaveRequest(
                type=type,
                title=title,
                text=text,
                entities=entities,
                rationale=rationale,
                alternatives=alternatives,
                confidence=confidence,
                supersedes=supersedes,
                replaces=replaces,
                due=due,
            )
            client = _client_name(ctx)
            return await service.write(
                "agent.save",
                {**req.model_dump(), "client": client},
                lambda v, i, w: ops.save(v, req, client_source(client), index=i, write=w),
            )

        return await _guard(call())

    @server.tool(annotations=Writes)
    async def palinode_session_end(
        ctx: Context,
        summary: Annotated[str, Field(max_length=100000, description="what happened this session, in a few sentences")] = "",
        decisions: Annotated[
            list[str], Field(max_length=10, description="decisions made (each saved as a Decision unless already remembered)")
        ] = [],  # noqa: B006
        blockers: Annotated[list[str], Field(max_length=10, description="what is stuck")] = [],  # noqa: B006
        project: Annotated[str, Field(max_length=200, description="the project it was about: project/slug")] = "",
        transcript_path: Annotated[
            str,
            Field(
                max_length=4096,
                description="absolute path of the session transcript (Claude Code JSONL, JSONL of {role, content}, or text)",
            ),
        ] = "",
        session_id: Annotated[str, Field(max_length=200)] = "",
    ) -> Annotated[CallToolResult, r.AgentSessionEndResult]:
        """End the session: appends to daily/{date}.md, files the summary as a typed memory (the
        project's Recent Changes, or an Insight), saves the decisions, and runs the local extraction
        pass over the transcript for what you did not save yourself. One journaled run."""

        async def call():
            req = SessionEndRequest(
                summary=summary,
                decisions=decisions,
                blockers=blockers,
                project=project,
                transcript_path=transcript_path,
                session_id=session_id or (service.session or ""),
            )
            client = _client_name(ctx)
            model = memo()  # one per call: a re-plan reuses its answers
            return await service.write(
                "agent.session_end",
                {**req.model_dump(), "client": client},
                lambda v, i, w: ops.session_end(v, req, client_source(client), generator=model, index=i, write=w),
            )

        return await _guard(call())

    @server.tool(annotations=ReadOnly)
    async def palinode_related(
        path: Annotated[str, Field(min_length=1, max_length=1000, description="vault-relative note path")],
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
    ) -> Annotated[CallToolResult, r.ToolRelatedResult]:
        """Notes close in meaning to a note that are not linked with it: links worth adding."""
        return await _guard(service.run(lambda v, i: reads.related(v, i, path, limit=limit), index=True))

    @server.tool(annotations=ReadOnly)
    async def palinode_lint(
        path: Annotated[str | None, Field(max_length=1000, description="one note; omit for the whole vault")] = None,
    ) -> Annotated[CallToolResult, r.LintResult]:
        """Check the wiki contract and schemas (drift between entities and links, broken links, missing
        frontmatter...). Findings name file, line and check."""
        return await _guard(service.run(lambda v: reads.lint(v, path)))

    @server.tool(annotations=ReadOnly)
    async def palinode_consolidate() -> Annotated[CallToolResult, r.ToolConsolidateResult]:
        """The weekly consolidation as a DRY RUN only: every planned operation and diff, nothing written.
        The run that writes is the person's (palinode-vault consolidate) or the sidecar's weekly one."""
        return await _guard(service.run(reads.consolidate_dry_run))

    def program_text() -> str:
        return program_path(service.root).read_text(encoding="utf-8")

    @server.resource(
        "palinode://program",
        name="PROGRAM.md",
        mime_type="text/markdown",
        description="The memory manager's rules: what to remember, schemas, update logic, wiki contract.",
    )
    def program_resource() -> str:
        return program_text()

    @server.prompt("memory-manager", description="Act as the vault's memory manager, following PROGRAM.md.")
    def memory_manager() -> str:
        return (
            "You manage the person's long-term memory through the palinode_* tools. Follow these rules "
            "exactly (PROGRAM.md):\n\n" + program_text()
        )

    return server


def run_stdio(root: Path, embedding_model: str | None = None) -> None:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    import anyio

    logging.basicConfig(level=logging.WARNING)
    server = build_server(root, embedding_model)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        server.palinode_service.close()
