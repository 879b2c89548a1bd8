"""What palinode-vault answers, as pydantic models: every socket method (docs/PROTOCOL.md) and
every MCP tool (issue 21).

These models are the one statement of the results. The MCP server publishes each tool's model as
its `outputSchema`, and the SDK validates every tool result against it. `scripts/gen_protocol.py` writes
the plugin's TypeScript types and PROTOCOL.md's results table from them (CI checks both are
current), and with `PALINODE_CHECK_RESULTS=1` (the test suite sets it) the dispatcher validates
every answer against its method's model, so a handler that drifts from its model fails a test
instead of surprising the plugin. Handlers keep returning plain dicts: validation is a check,
not a conversion, and costs nothing when off.

Objects are closed (`extra="forbid"`) except where the answer is open by design (the index's
counts, a job's result), so a field added to a handler without its model fails.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Ok(_Result):
    ok: Literal[True]


# --- findings, lint, fix ------------------------------------------------------------------------


class Finding(_Result):
    """One lint finding on a note. `target` is set on link findings: the link text as written."""

    check: str
    severity: Literal["error", "warning", "info"]
    path: str
    line: int
    column: int
    message: str
    target: str | None = None
    fixable: bool
    suggestion: str | None = Field(default=None, description="unresolvable_label: the link that would resolve")


class NoteFindings(_Result):
    path: str
    findings: list[Finding]
    truncated: int | None = Field(default=None, description="findings left out past the answer's bound")


class LintResult(_Result):
    total_files: int
    findings: list[Finding]
    counts: dict[str, int]
    truncated: int | None = None


class Skipped(_Result):
    path: str
    reason: str


class FixResult(_Result):
    written: list[str]
    unchanged: int
    skipped: list[Skipped]
    diff: str
    run: str | None = Field(default=None, description="the journaled run that wrote them (for `undo` with `run`)")


# --- notes and the graph ------------------------------------------------------------------------


class NoteInfo(_Result):
    path: str
    title: str
    category: str | None
    entities: list[str] = Field(description="canonical entity refs (`person/alice-smith`)")
    cross_refs: list[str]
    hash: str | None


class Backlink(_Result):
    path: str
    title: str
    category: str | None
    kinds: dict[str, int]


class Backlinks(_Result):
    path: str
    backlinks: list[Backlink]


class GraphNode(_Result):
    id: str
    path: str | None
    title: str
    category: str | None
    resolved: bool


class GraphEdge(_Result):
    source: str
    target: str
    kind: str
    count: int


class Neighbourhood(_Result):
    center: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: int | None = None


class RepairCandidate(_Result):
    path: str
    score: float
    why: str


class RepairCandidates(_Result):
    target: str
    candidates: list[RepairCandidate]
    note: str | None = Field(default=None, description="why names alone were used")


class UndoResult(_Result):
    restored: list[str]
    run: str | None
    skipped: list[Skipped]


class RenameResult(_Result):
    written: list[str]
    refs_updated: int
    scheduled: int


# --- settings and status ------------------------------------------------------------------------


class AutoFixes(_Result):
    footer: bool
    cross_refs: bool


class ModelSettings(_Result):
    embedding: str | None
    generation: str | None


class SidecarSettings(_Result):
    quiet_seconds: float
    auto_fixes: AutoFixes
    models: ModelSettings


class Counts(_Result):
    markdown_files: int
    memory_files: int
    links: int
    unresolved: int
    orphans: int


class LastWrite(_Result):
    time: str
    paths: list[str]
    run: str | None


class Coverage(_Result):
    """How much of the vault vector search sees."""

    notes: int
    with_vectors: int
    fraction: float


class IndexProgress(_Result):
    phase: str
    done: int
    total: int
    per_second: float | None
    seconds_left: float | None


class IndexThreads(_Result):
    now: int
    why: str


class IndexStatus(BaseModel):
    """The search index in `status`. Open: the store adds its counts (notes, chunks, vectors,
    pending) and the worker its state; only `mode` and `reason` are always there."""

    model_config = ConfigDict(extra="allow")
    mode: Literal["hybrid", "keyword"]
    driver: str | None
    model: str | None
    reason: str | None
    dimensions: int | None = None
    path: str | None = None
    notes: int | None = None
    chunks: int | None = None
    vectors: int | None = None
    pending: int | None = None
    coverage: Coverage | None = None
    busy: str | None = None
    last_error: str | None = None
    progress: IndexProgress | None = None
    threads: IndexThreads | None = None


class StatusResult(_Result):
    version: str
    pid: int
    port: int | None
    vault: str
    counts: Counts
    findings: dict[str, int]
    last_write: LastWrite | None
    last_error: str | None
    writes: int
    busy: str | None
    pending: int = Field(description="notes waiting for their automatic fix")
    index: IndexStatus


# --- search, dedup, related ---------------------------------------------------------------------


class SearchHit(_Result):
    path: str
    score: float
    title: str
    snippet: str


class SearchResult(_Result):
    mode: str
    results: list[SearchHit]
    vectors: Coverage | None = None
    note: str | None = None


class DedupHit(_Result):
    path: str
    similarity: float
    strong: bool


class DedupResult(_Result):
    results: list[DedupHit]


class RelatedHit(_Result):
    path: str
    similarity: float


class RelatedResult(_Result):
    results: list[RelatedHit]


# --- the memory manager -------------------------------------------------------------------------


class ExtractItem(_Result):
    """One outcome of a pass: ADD, UPDATE, SUPERSEDE, ARCHIVE, NOOP, INBOX, ..."""

    op: str
    type: str | None
    path: str | None
    confidence: float | None
    reason: str


class ExtractResult(_Result):
    items: list[ExtractItem]
    withheld_secrets: int
    model_calls_under_lock: int = 0
    conflicts: list[str] | None = None
    diff: str | None = Field(default=None, description="dry_run: the unified diff of what would be written")


class Operation(_Result):
    """One consolidation operation as PROGRAM.md names them (UPDATE, SUPERSEDE, ARCHIVE, FLAG, ...)."""

    op: str
    path: str | None
    reason: str


class ConsolidateResult(_Result):
    operations: list[Operation]
    written: list[str]


class JobInfo(_Result):
    """A long piece of work in the sidecar (PROTOCOL.md, "Jobs")."""

    id: str
    kind: str
    state: Literal["running", "done", "failed", "cancelled"]
    done: int
    total: int
    message: str
    cancellable: bool
    seconds: float
    result: Any = Field(default=None, description="when done: what the method without `.start` answers")
    error: str | None = None


class JobList(_Result):
    jobs: list[JobInfo]


class InboxItem(_Result):
    """One inbox note waiting for the person's review (`status: review`)."""

    path: str
    title: str
    type: str
    confidence: float | None = Field(description="the note's `confidence:`; null when it is not a number")
    since: str = Field(description='the date it has waited since (YYYY-MM-DD), or "" when the note has none')
    needs_about: bool = Field(
        description="a person or project memory naming nobody the vault knows: approving it needs `about` (who or what)"
    )
    may_replace: list[str] = Field(
        description="a decision that may replace these active decisions or add to them: approving it needs "
        "`supersedes` (it replaces them) or `keep_active` (it adds to them)"
    )


class InboxList(_Result):
    items: list[InboxItem]


class InboxReviewResult(_Result):
    """An approved or rejected inbox note: where it is now, what was written, the journal run."""

    path: str
    written: list[str]
    run: str | None


class CoreFile(_Result):
    path: str
    title: str


class CoreResult(_Result):
    files: list[CoreFile]
    chars: int


class _AgentWrite(_Result):
    """What an agent's write answers besides its own fields: the files written as one journaled
    run (`undo` reverts it), or with `dry_run` the diff instead."""

    outcomes: list[ExtractItem]
    summary: str
    written: list[str]
    run: str | None
    conflicts: list[str] | None = Field(default=None, description="files changed on disk meanwhile: not written")
    diff: str | None = None
    via: Literal["sidecar", "local"] | None = Field(
        default=None, description="MCP only: written by the sidecar serving the vault, or by the MCP server itself"
    )


class AgentSessionEndResult(_AgentWrite):
    """`agent.session_end` (the `palinode_session_end` tool): the pass's outcomes, the daily note the
    session's summary went to, and what was written."""

    daily: str
    withheld_secrets: int
    turns: int


class AgentSaveResult(_AgentWrite):
    """`agent.save` (the `palinode_save` tool): the operation the vault chose for the memory."""

    op: str
    path: str | None
    reason: str
    similarity: str


# --- what the sidecar sends unasked: notifications, and its one request to the plugin -----------


class FindingsChanged(_Result):
    paths: list[str]
    counts: dict[str, int]
    total: int


class Progress(_Result):
    """`phase`: scan, index, embed, consolidate, or a job's kind."""

    phase: str
    done: int
    total: int
    per_second: float | None = None
    seconds_left: float | None = None


class Wrote(_Result):
    paths: list[str]
    reason: str


class JobProgress(_Result):
    id: str
    kind: str
    done: int
    total: int
    message: str


class JobDone(_Result):
    id: str
    kind: str
    state: Literal["done", "failed", "cancelled"]
    result: Any = None
    error: str | None = None


#: Every notification the sidecar pushes (no `id`), by method name.
NOTIFICATIONS: dict[str, type[BaseModel]] = {
    "findings.changed": FindingsChanged,
    "progress": Progress,
    "wrote": Wrote,
    "job.progress": JobProgress,
    "job.done": JobDone,
}


class ApplyEditParams(_Result):
    """`apply_edit`, the sidecar's request to the plugin: replace an open note's text in the
    editor when the note still has `old_hash` (so the person's undo history keeps it)."""

    path: str
    old_hash: str
    new_text: str


class ApplyEditResult(_Result):
    applied: bool
    reason: str | None = None


def check_notification(method: str, params: Any) -> None:
    """Raise ValueError when a notification's params are not what its model says (tests)."""
    model = NOTIFICATIONS.get(method)
    if model is None:
        raise ValueError(f"notification {method!r} has no model in palinode_vault/results.py")
    model.model_validate(params)


# --- MCP tools (palinode_vault/mcp/server.py): each tool's structured result --------------------


class CoreNote(_Result):
    path: str
    title: str
    text: str


class CoreLeftOut(_Result):
    path: str
    title: str
    chars: int
    reason: str


class SessionStartResult(_Result):
    """`palinode_session_start`: the core memories with their full text, within PROGRAM.md's budget."""

    session: str
    core: list[CoreNote]
    chars: int
    max_chars: int
    left_out: list[CoreLeftOut] = Field(description="core notes past the budget")
    next: str = Field(description="what to call next")


class ReadResult(_Result):
    """`palinode_read`: one note, its frontmatter as JSON (dates as ISO strings) and its text."""

    path: str
    title: str
    ref: str | None = Field(description="its canonical entity ref, when it is a person or project note")
    frontmatter: dict[str, Any]
    text: str
    truncated: bool


class ListedNote(_Result):
    path: str
    title: str
    type: str
    status: str
    core: bool
    last_updated: Any = Field(description="as written: an ISO date or time string, or null")


class ListResult(_Result):
    notes: list[ListedNote]
    total: int
    truncated: bool


class ToolDedupResult(_Result):
    """`palinode_dedup_suggest`: `strong` at PROGRAM.md's strong_duplicate; `method` says whether
    meaning (embeddings) or keywords alone were compared."""

    results: list[DedupHit]
    strong_at: float
    method: str


class ToolRelatedResult(_Result):
    path: str
    results: list[RelatedHit]


class ToolConsolidateResult(_Result):
    """`palinode_consolidate`: a dry run only; the consolidation that writes is the person's."""

    operations: list[Operation]
    diff: str
    dry_run: Literal[True]
    note: str
