"""What an agent's tool calls do to a vault: one implementation under the MCP server (local)
and the sidecar's `agent.*` socket methods (when the sidecar runs, writes go through it).

An agent's typed memory goes through the same code as the extraction pass's items: PROGRAM.md's
types, the secret rules (memory/extraction/secrets.py), the update logic (memory/update/logic.py: NOOP, UPDATE,
ADD, SUPERSEDE with history, confidence below the threshold to inbox/), the wiki contract and one
journaled run (memory/update/workspace.py). What differs is only what an agent can get wrong that a
model's item cannot: it names paths, entities and superseded notes itself, so each is checked
here first, and anything wrong is refused with an `AgentError` that says what to change; nothing
is written or logged for a refused call.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from palinode_vault.core.entities import canonical_ref, ref_of_path, slugify, split_ref
from palinode_vault.kinds import BY_NAME, MEMORY_FOLDERS, TYPE_KIND, top_folder
from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.extraction.extract import ExtractResult, assert_no_secrets, extract_turns, memory_types
from palinode_vault.memory.extraction.session import Session, daily_entry
from palinode_vault.memory.extraction.transcript import parse_transcript
from palinode_vault.memory.update.logic import Item, Outcome, Updater, similar_for
from palinode_vault.memory.update.workspace import Workspace, frontmatter_of, now_utc, set_keys
from palinode_vault.memory.weekly.corrections import pass_label
from palinode_vault.memory.weekly.oplog import Operation
from palinode_vault.pathsafe import PathOutsideVault, vault_relative
from palinode_vault.program import load_program
from palinode_vault.vault import Vault

MAX_SUPERSEDES = 5
MAX_ENTITIES = 20
MAX_READ_CHARS = 200_000
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".md", ".txt")  # what a transcript is; never any file an agent names


class AgentError(ValueError):
    """A tool call the vault refuses: the message tells the agent what to change."""


class SaveRequest(BaseModel):
    """One typed memory from an agent (palinode_save, socket `agent.save`)."""

    model_config = ConfigDict(extra="forbid")
    type: str = Field(max_length=40, description="PersonMemory, ProjectSnapshot, Decision, Insight, ResearchRef or ActionItem")
    title: str = Field(
        min_length=1, max_length=200, description="short and specific; a person's or project's name for those types"
    )
    text: str = Field(min_length=1, max_length=100_000, description="the memory, standalone and specific")
    entities: list[str] = Field(
        default_factory=list,
        max_length=MAX_ENTITIES,
        description="canonical refs of existing notes it is about, e.g. person/priya-nair, project/field-kit",
    )
    rationale: str = Field(default="", max_length=100_000, description="why (decisions), or the person's role (people)")
    alternatives: str = Field(default="", max_length=100_000, description="options that lost, and why (decisions)")
    confidence: float = Field(
        default=0.8, ge=0.0, le=1.0, description="below PROGRAM.md's threshold (0.6) the memory waits in inbox/"
    )
    supersedes: list[str] = Field(
        default_factory=list,
        max_length=MAX_SUPERSEDES,
        description="paths, refs or ids of decisions/insights/research this one replaces (archived, with history)",
    )
    replaces: str = Field(
        default="", max_length=500, description="person/project notes: the text of the fact line this one replaces"
    )
    due: str = Field(default="", max_length=10, description="ActionItem: due date YYYY-MM-DD")


class SessionEndRequest(BaseModel):
    """The end of an agent's session (palinode_session_end, socket `agent.session_end`)."""

    model_config = ConfigDict(extra="forbid")
    session_id: str = Field(default="", max_length=200)
    summary: str = Field(default="", max_length=100_000)
    decisions: list[str] = Field(default_factory=list, max_length=10)
    blockers: list[str] = Field(default_factory=list, max_length=10)
    project: str = Field(default="", max_length=200, description="the project the session was about (name or project/slug)")
    transcript_path: str = Field(default="", max_length=4096)
    transcript: str = Field(default="", max_length=5_000_000)


def client_source(client: str | None) -> str:
    """The `source` of an agent's operations in logs/operations.jsonl: `mcp:{client name}`."""
    name = slugify(client or "") or "unknown-client"
    return f"mcp:{name[:60]}"


def _limit(vault: Vault) -> int:
    agent = getattr(load_program(vault.root).settings, "agent", None)
    return agent.max_content_chars if agent is not None else 20_000


def _refuse_secrets(fields: dict[str, str]) -> None:
    """Refuse a call that carries a secret, naming only its kind and the field."""
    for name, value in fields.items():
        kinds = [k for k in secrets.secret_kinds_in(value or "") if k != "redacted secret"]
        if kinds:
            raise AgentError(
                f"refused: {name} holds a secret ({kinds[0]}); secrets are never saved. "
                "Remove it and call again; nothing was written or logged."
            )


def _check_size(vault: Vault, fields: dict[str, str]) -> None:
    limit = _limit(vault)
    total = sum(len(v or "") for v in fields.values())
    if total > limit:
        raise AgentError(
            f"refused: {total} characters, more than PROGRAM.md's agent.max_content_chars ({limit}). "
            "Save the memory itself, short and specific, not a document; nothing was written."
        )


def _display_name(vault: Vault, path: str) -> str:
    note = vault.state.notes.get(path)
    if note is None:
        return ""
    return str((note.frontmatter or {}).get("name") or note.title or "")


def note_for(vault: Vault, name: str) -> str | None:
    """The note a path, entity ref or id names (`decisions/x.md`, `decision/x`, `decision-x`)."""
    name = name.strip()
    state = vault.state
    if name.endswith(".md") or "/" in name and name.split("/", 1)[0] in MEMORY_FOLDERS:
        try:
            rel = vault_relative(vault.root, name)
        except PathOutsideVault:
            return None
        for candidate in (rel, rel + ".md"):
            if candidate in state.notes:
                return candidate
    ref = canonical_ref(name)
    if ref and state.entity_path(ref):
        return state.entity_path(ref)
    for path, note in state.notes.items():
        if str((note.frontmatter or {}).get("id") or "") == name:
            return path
    return None


def check_save(vault: Vault, req: SaveRequest) -> tuple[Item, list[str]]:
    """(the item for the update logic, the paths it supersedes), or AgentError."""
    program = load_program(vault.root)
    types = memory_types(program)
    if req.type not in types:
        raise AgentError(f"unknown type {req.type!r}; PROGRAM.md's types are {', '.join(types)}")
    fields = {
        "title": req.title,
        "text": req.text,
        "rationale": req.rationale,
        "alternatives": req.alternatives,
        "replaces": req.replaces,
        "due": req.due,
        "entities": " ".join(req.entities),
        "supersedes": " ".join(req.supersedes),
    }
    _refuse_secrets(fields)
    _check_size(vault, fields)
    if not slugify(req.title):
        raise AgentError("the title has no letters or digits to name a file with")
    if req.due and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", req.due):
        raise AgentError(f"due must be a date YYYY-MM-DD, not {req.due!r}")
    own_kind = TYPE_KIND.get(req.type)
    own_ref = f"{own_kind}/{slugify(req.title)}" if own_kind else None
    entities: list[tuple[str, str]] = []
    unresolved = []
    for raw in req.entities:
        ref = canonical_ref(raw)
        if ref is None or split_ref(ref)[0] not in TYPE_KIND.values():
            raise AgentError(
                f"entity {raw!r} is not a canonical ref kind/slug with kind one of "
                f"{', '.join(TYPE_KIND.values())} (e.g. person/priya-nair)"
            )
        path = vault.state.entity_path(ref)
        if path is None and ref != own_ref:
            unresolved.append(ref)
            continue
        if ref not in [r for r, _ in entities]:
            entities.append((ref, _display_name(vault, path) if path else req.title))
    if unresolved:
        raise AgentError(
            f"refused: no note in the vault for {', '.join(unresolved)}. Find the right ref with "
            "palinode_search or palinode_orphan_repair, save that person or project first "
            "(palinode_save type PersonMemory/ProjectSnapshot), or leave the entity out; nothing was written."
        )
    superseded = []
    for raw in req.supersedes:
        path = note_for(vault, raw)
        if path is None:
            raise AgentError(
                f"supersedes {raw!r} names no note in the vault (give a path such as "
                "decisions/x.md, a ref decision/x or an id decision-x); nothing was written"
            )
        if own_kind in (None, "person", "project") or top_folder(path) != BY_NAME[own_kind].folder:
            raise AgentError(
                f"a {req.type} cannot supersede {path}: only a decision, insight or research note "
                "supersedes one of its own kind (for a fact in a person or project note, use replaces)"
            )
        if str((vault.state.notes[path].frontmatter or {}).get("status") or "") == "archived":
            raise AgentError(f"{path} is archived already; search for the memory that replaced it")
        superseded.append(path)
    item = Item(
        req.type,
        req.title.strip(),
        req.text.strip(),
        req.confidence,
        entities,
        req.rationale.strip(),
        req.alternatives.strip(),
        req.due.strip(),
        req.replaces.strip(),
    )
    return item, superseded


def _summary(outcome: Outcome) -> str:
    if outcome.op == "NOOP":
        return f"NOOP: already in {outcome.path}"
    if outcome.op == "INBOX":
        return f"INBOX {outcome.path}: {outcome.reason}"
    return f"{outcome.op} {outcome.path}"


def save(
    vault: Vault,
    req: SaveRequest,
    source: str,
    *,
    index: Any = None,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    write: Any = None,
) -> dict[str, Any]:
    """File one typed memory as PROGRAM.md's update logic decides; one journaled run
    (`write(ws, label)` as in `extract_turns`)."""
    if not vault.loaded:
        vault.load()
    now = now or dt.datetime.now(dt.UTC)
    item, superseded = check_save(vault, req)
    program = load_program(vault.root)
    ws = Workspace(vault)
    similar, how = similar_for(vault, index)
    updater = Updater(vault, ws, program.settings, similar, source, now)
    for path in superseded:
        live = updater.successor(path)
        if live not in superseded:
            # retiring history again would point it at the new note and leave the decision that
            # replaced it, still in force, saying the opposite
            raise AgentError(
                f"{path} was replaced already by {live}, which is still in force; supersede {live} "
                "(or name both); nothing was written"
            )
    if superseded:
        updater.resolve_entities(item)
        outcome = updater._supersede(item, superseded[0], None)  # noqa: SLF001 - the agent named the old note
        if outcome.op == "SUPERSEDE" and outcome.path:
            _supersede_more(ws, updater, item, outcome.path, superseded[1:], now)
    else:
        outcome = updater.apply(item)
    assert_no_secrets(ws)
    out: dict[str, Any] = {
        "op": outcome.op,
        "path": outcome.path,
        "summary": _summary(outcome),
        "reason": outcome.reason,
        "outcomes": [o.to_json() for o in updater.outcomes],
        "similarity": how,
    }
    diffs = ws.diffs()
    if dry_run:
        ws.restore()
        out.update(written=[], run=None, diff="".join(diffs[p] for p in sorted(diffs)))
        return out
    written, conflicts, run = (write or Workspace.commit)(ws, pass_label("extract", source))
    out.update(written=written, conflicts=conflicts, run=run)
    if conflicts:
        out["summary"] += f" (not written, changed on disk meanwhile: {', '.join(conflicts)}; call again)"
    return out


def _supersede_more(ws: Workspace, updater: Updater, item: Item, new_path: str, olds: list[str], now: dt.datetime) -> None:
    """Further notes the new memory replaces: archived with `superseded_by`, listed in `supersedes`."""
    new_text = ws.text(new_path) or ""
    new_id = str(frontmatter_of(new_text).get("id") or "")
    ids = [str(x) for x in frontmatter_of(new_text).get("supersedes") or []]
    for old in olds:
        old_text = ws.text(old) or ""
        old_id = str(frontmatter_of(old_text).get("id") or "")
        ws.put(
            old,
            set_keys(old_text, {"status": "archived", "superseded_by": new_id, "last_updated": now_utc(now)}),
            f"superseded by {new_id}",
        )
        updater._out("ARCHIVE", item, old, f"superseded by {new_id}")  # noqa: SLF001 - logged like the first
        if old_id and old_id not in ids:
            ids.append(old_id)
    ws.put(new_path, set_keys(ws.text(new_path) or "", {"supersedes": ids}), "supersedes")


def read_transcript(vault: Vault, path: str) -> str:
    """The text of a transcript file an agent names (Claude Code's JSONL and the other formats)."""
    file = Path(path).expanduser()
    if not file.is_absolute():
        raise AgentError(f"transcript_path must be an absolute path, not {path!r}")
    if file.suffix.lower() not in TRANSCRIPT_SUFFIXES:
        raise AgentError(f"transcript_path must be a transcript file ({', '.join(TRANSCRIPT_SUFFIXES)}), not {file.name!r}")
    if ".palinode" in file.parts:
        raise AgentError("transcript_path points into .palinode/, which holds no transcripts")
    try:
        size = file.stat().st_size
    except OSError as exc:
        raise AgentError(f"cannot read the transcript {path}: {exc.strerror or exc}") from exc
    if not file.is_file():
        raise AgentError(f"the transcript {path} is not a file")
    if size > 20_000_000:
        raise AgentError(f"the transcript {path} is {size} bytes; more than 20 MB is not read")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AgentError(f"the transcript {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def session_end(
    vault: Vault,
    req: SessionEndRequest,
    source: str,
    *,
    generator: Any = None,
    index: Any = None,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    write: Any = None,
) -> dict[str, Any]:
    """`generator`: the extraction model, or a function that loads it (called only for a transcript).

    The extraction pass over the transcript (what the agent did not save itself), the agent's
    summary, decisions and blockers as typed memories, a line in daily/{date}.md: one run."""
    if not vault.loaded:
        vault.load()
    now = now or dt.datetime.now(dt.UTC)
    fields = {
        "summary": req.summary,
        "decisions": " ".join(req.decisions),
        "blockers": " ".join(req.blockers),
        "project": req.project,
        "session_id": req.session_id,
    }
    _refuse_secrets(fields)
    _check_size(vault, fields)
    text = req.transcript or (read_transcript(vault, req.transcript_path) if req.transcript_path else "")
    turns = parse_transcript(text) if text else []
    if not (turns or req.summary.strip() or req.decisions or req.blockers):
        raise AgentError("nothing to file: give a summary, decisions, blockers, or the transcript")
    program = load_program(vault.root)
    project_path = None
    if req.project:
        project_path = note_for(
            vault, req.project if "/" in req.project or req.project.startswith("project-") else f"project/{req.project}"
        )
        if project_path is None or top_folder(project_path) != "projects":
            raise AgentError(
                f"no project note for {req.project!r}; give project/slug of a note in projects/ "
                "(palinode_list category=project), or leave project out"
            )
    session = Session(slugify(req.session_id)[:40] or now.strftime("%H%M%S"))
    ws = Workspace(vault, extra_folders=frozenset({"daily"}))
    if turns:
        from palinode_vault.models import ModelUnavailable

        try:
            result = extract_turns(
                vault,
                turns,
                generator=generator() if callable(generator) else generator,
                source=source,
                now=now,
                ws=ws,
                commit=False,
            )
        except ModelUnavailable as exc:
            ws.restore()
            raise AgentError(
                f"the transcript needs the local extraction model, which is not available ({exc}); "
                "call again without the transcript, with your summary and decisions"
            ) from exc
    else:
        result = ExtractResult([], 0)
    updater = Updater(vault, ws, program.settings, similar_for(vault, index)[0], source, now)
    threshold = program.settings.extraction.confidence_threshold
    for decision in req.decisions:
        if decision.strip():
            title = " ".join(decision.split()[:8])
            updater.apply(Item("Decision", title, decision.strip(), max(threshold, 0.8)))
    if project_path:
        ref = ref_of_path(project_path) or ""
        name = _display_name(vault, project_path)
        lines = ([f"Session: {req.summary.strip()}"] if req.summary.strip() else []) + [
            f"Blocked: {b.strip()}" for b in req.blockers if b.strip()
        ]
        for line in lines:
            updater._update_collection(Item("ProjectSnapshot", name, line, 1.0, [(ref, name)]), project_path)  # noqa: SLF001
    elif req.summary.strip() or req.blockers:
        body = req.summary.strip() + "".join(f"\n\nBlocked: {b.strip()}" for b in req.blockers if b.strip())
        updater.apply(Item("Insight", f"Session {session.id} {now.date().isoformat()}", body.strip(), threshold))
    result.outcomes.extend(updater.outcomes)
    daily = f"daily/{now.date().isoformat()}.md"
    current = ws.text(daily)
    once = list({(o.op, o.path): o for o in reversed(result.outcomes)}.values())[::-1]  # first of each (op, path)
    entry = daily_entry(session, ExtractResult(once, result.withheld_secrets), now)
    if req.summary.strip():
        entry = entry.rstrip("\n") + "\n" + secrets.redact(f"Summary: {req.summary.strip()}")[0] + "\n"
    new = (current.rstrip("\n") + "\n\n" if current else f"# {now.strftime('%A %d %B %Y')}\n\n") + entry
    ws.put(daily, new, f"session {session.id} ended", allow=frozenset({"daily"}))
    ws.log(Operation("SESSION_END", None, daily, None, source, f"{len(result.outcomes)} outcome(s)"))
    assert_no_secrets(ws)
    diffs = ws.diffs()
    out: dict[str, Any] = {
        "outcomes": [o.to_json() for o in result.outcomes],
        "daily": daily,
        "withheld_secrets": result.withheld_secrets,
        "turns": len(turns),
        "summary": "; ".join(_summary(o) for o in result.outcomes if o.op != "WITHHELD") or "no new memories",
    }
    if dry_run:
        ws.restore()
        out.update(written=[], run=None, diff="".join(diffs[p] for p in sorted(diffs)))
        return out
    written, conflicts, run = (write or Workspace.commit)(ws, pass_label("session.end", session.id))
    out.update(written=written, conflicts=conflicts, run=run)
    return out
