"""Sessions for agents on the socket: turns collected, and at session end an extraction pass,
a line in `daily/{date}.md` (a log, no frontmatter), and the session itself persisted as a typed
memory: an UPDATE of the project it was about (`## Recent Changes`), or an Insight when it was
about no project. The index embeds whatever was written when it next syncs the files.
"""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from typing import Any

from palinode_vault.core.entities import slugify
from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.extraction.extract import ExtractResult, extract_turns
from palinode_vault.memory.extraction.transcript import Turn
from palinode_vault.memory.update.logic import Item, Updater, keyword_similar
from palinode_vault.memory.update.workspace import Workspace
from palinode_vault.memory.weekly.corrections import pass_label
from palinode_vault.memory.weekly.oplog import Operation
from palinode_vault.program import load_program
from palinode_vault.vault import Vault

MAX_TURNS = 500


@dataclass
class Session:
    id: str
    turns: list[Turn] = field(default_factory=list)
    started: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))


class Sessions:
    """Open sessions by id (in memory; a session that never ends leaves nothing behind)."""

    def __init__(self) -> None:
        self._open: dict[str, Session] = {}
        self._lock = threading.Lock()

    def turn(self, session: str, role: str, content: str) -> None:
        with self._lock:
            s = self._open.setdefault(session, Session(session))
            if len(s.turns) >= MAX_TURNS:
                s.turns.pop(0)
            s.turns.append(Turn(role if role in ("user", "assistant", "system") else "user", content))

    def pop(self, session: str) -> Session | None:
        with self._lock:
            return self._open.pop(session, None)

    def peek(self, session: str) -> Session | None:
        with self._lock:
            return self._open.get(session)


def daily_entry(session: Session, result: ExtractResult, when: dt.datetime) -> str:
    """The log lines for the daily note: what the session left behind (never a secret)."""
    lines = [f"## {when.strftime('%H:%M')} session {session.id}"]
    filed = [(o, o.path) for o in result.outcomes if o.path and o.op != "NOOP"]
    if not filed:
        lines.append("No new memories.")
    for o, path in filed:
        stem = path.rsplit("/", 1)[-1][:-3]
        lines.append(f"- {o.op.lower()} {o.type}: [[{stem}]]")
    if result.withheld_secrets:
        lines.append(f"- {result.withheld_secrets} secret(s) withheld")
    text = "\n".join(lines) + "\n"
    return secrets.redact(text)[0]


def end_session(
    vault: Vault,
    session: Session,
    *,
    generator: Any = None,
    dry_run: bool = False,
    now: dt.datetime | None = None,
    write: Any = None,
) -> ExtractResult:
    """Extraction over the session, the daily log line and the session memory: one journaled run
    (`write(ws, label)` as in `extract_turns`)."""
    now = now or dt.datetime.now(dt.UTC)
    ws = Workspace(vault, extra_folders=frozenset({"daily"}))
    source = f"session-{slugify(session.id) or 'unnamed'}"
    result = extract_turns(vault, session.turns, generator=generator, source=source, now=now, ws=ws, commit=False, dry_run=False)
    # the session as a typed memory
    program = load_program(vault.root)
    titles = [o for o in result.outcomes if o.op not in ("NOOP",) and o.path]
    if titles:
        updater = Updater(vault, ws, program.settings, keyword_similar(vault), source, now)
        projects = [o.path for o in result.outcomes if o.path and o.path.startswith("projects/")]
        summary = "Session: " + "; ".join(f"{o.op.lower()} {o.path}" for o in titles)
        if projects:
            item = Item(
                "ProjectSnapshot",
                projects[0].rsplit("/", 1)[-1][:-3],
                summary,
                1.0,
                [(f"project/{projects[0].rsplit('/', 1)[-1][:-3]}", "")],
            )
            outcome = updater._update_collection(item, projects[0])
        else:
            item = Item(
                "Insight",
                f"Session {session.id} {now.date().isoformat()}",
                summary,
                program.settings.extraction.confidence_threshold,
            )
            outcome = updater._add(item, "session summary")
        result.outcomes.append(outcome)
    daily = f"daily/{now.date().isoformat()}.md"
    current = ws.text(daily)
    entry = daily_entry(session, result, now)
    text = (current.rstrip("\n") + "\n\n" if current else f"# {now.strftime('%A %d %B %Y')}\n\n") + entry
    ws.put(daily, text, f"session {session.id} ended", allow=frozenset({"daily"}))
    ws.log(Operation("SESSION_END", None, daily, None, source, f"{len(result.outcomes)} outcome(s)"))
    result.diffs = ws.diffs()
    if dry_run:
        ws.restore()
    else:
        result.written, result.conflicts, result.run = (write or Workspace.commit)(ws, pass_label("session.end", session.id))
    return result
