"""Core memory: the `core: true` notes handed to every session at its start (PROGRAM.md).

Assembled in PROGRAM.md's order — the person's own profile, standing decisions, active projects,
inner-circle people — each group most recently updated first, within `core.max_chars`. A note
that would overflow the budget is left out and reported for review.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from palinode_vault.kinds import is_memory_path, kind_of_path, top_folder
from palinode_vault.program import load_program
from palinode_vault.vault import NoteText, Vault


@dataclass
class CoreSet:
    files: list[dict[str, str]] = field(default_factory=list)
    chars: int = 0
    max_chars: int = 0
    left_out: list[dict[str, Any]] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "chars": self.chars, "max_chars": self.max_chars, "left_out": self.left_out}


def _updated(data: dict[str, Any]) -> str:
    value = data.get("last_updated") or data.get("last_contact") or data.get("created") or ""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)


def date_of(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()
    except ValueError:
        return None


def doubtful(path: str, data: dict[str, Any], today: dt.date, quiet_days: int) -> str | None:
    """Why a `core: true` note breaks PROGRAM.md's core policy (None when it fits)."""
    kind = kind_of_path(path)
    name = kind.name if kind else None
    status = str(data.get("status") or "")
    if status in ("archived", "completed", "paused"):
        return f"status is {status}"
    if name == "research":
        return "research references stay core: false"
    if name == "person" and core_group(path, data) != 0:
        contact = date_of(data.get("last_contact"))
        if contact and (today - contact).days >= quiet_days:
            return f"no contact for {(today - contact).days} days (>= {quiet_days})"
    return None


def core_group(path: str, data: dict[str, Any]) -> int | None:
    kind = kind_of_path(path)
    name = kind.name if kind else None
    role = str(data.get("role") or "").lower()
    if name == "person" and (role == "self" or role.startswith("self ") or role.startswith("self—") or role.startswith("self —")):
        return 0
    if name == "decision":
        return 1
    if name == "project":
        return 2
    if name == "person":
        return 3
    return 4  # insights and others marked core by the person: last


def core_set(vault: Vault) -> CoreSet:
    """The core set within the budget PROGRAM.md states (read afresh)."""
    program = load_program(vault.root)
    budget = program.settings.core.max_chars
    if not vault.loaded:
        vault.load()
    candidates = []
    for path, note in vault.state.notes.items():
        data = note.frontmatter or {}
        if not is_memory_path(path) or top_folder(path) == "inbox" or data.get("core") is not True:
            continue
        if str(data.get("status") or "") == "archived":
            continue
        group = core_group(path, data)
        if doubtful(path, data, vault.settings.today(), program.settings.core.quiet_days):
            group = 5  # breaks the policy: only if room is left
        candidates.append((group, _updated(data), path, note.title))
    # most recently updated first within each group
    ordered = sorted(candidates, key=lambda c: (c[0], _neg(c[1])))
    out = CoreSet(max_chars=budget)
    for _, _, path, title in ordered:
        read = vault.read(path)
        if not isinstance(read, NoteText):
            continue
        size = len(read.text)
        if out.chars + size > budget:
            out.left_out.append(
                {
                    "path": path,
                    "title": title,
                    "chars": size,
                    "reason": f"would overflow core.max_chars ({budget}); review whether it is still core",
                }
            )
            continue
        out.files.append({"path": path, "title": title})
        out.texts[path] = read.text
        out.chars += size
    return out


def _neg(stamp: str) -> tuple:
    # sort descending by timestamp string inside an ascending sort
    return tuple(-ord(ch) for ch in stamp)
