"""The person's corrections of the memory manager's writes, read from the journal and the vault.

Every memory pass is one journaled run (`.palinode/journal/{run}.jsonl`, header label
`extract …`, `session.end …` or `consolidate …`, see `PASS_LABELS`); each entry records the file's
hash before and after the write. Obsidian edits are not journaled, so a person's edit shows as a
break in a file's chain of hashes. From that, for the runs of the last `window_days`:

- **reverted**: the person undid the pass (`palinode-vault undo`: the run is `*.undone.jsonl`);
  one correction per memory file it had written.
- **edited**: a memory the pass created (outside `inbox/`) changed afterwards by someone other
  than a journaled writer: the next journaled write does not start from the bytes the pass left,
  or the file on disk is not them.
- **archived**: a memory the pass created now carries `status: archived`, and no manager
  operation archived it.
- **rejected**: a memory the pass created is gone, and no journaled write removed it, or the
  person rejected it with `inbox reject` (review.py: a journaled run labelled `reject {path}`). An
  inbox item the person approved (moved into its folder by hand, or with `inbox approve`) is not a
  correction.

Files the pass only updated (a person or project note) are not counted as edited: the person
writes in those notes too, and the journal does not keep the bytes the pass left to tell whose
lines changed.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palinode_vault.core import frontmatter as fm
from palinode_vault.kinds import INBOX_FOLDER, is_memory_path, kind_of_path, memory_type
from palinode_vault.writer import entry_problem, journal_dir, own_journal, sha256_bytes

#: The journal labels of memory passes: `extract {source}`, `session.end {id}`, `consolidate {date}`.
PASS_LABELS = ("extract", "session.end", "consolidate")


def pass_label(kind: str, detail: str) -> str:
    """The journal label of a memory pass (the one place the labels are made)."""
    assert kind in PASS_LABELS
    return f"{kind} {detail}"[:80]


def review_label(action: str, path: str) -> str:
    """The journal label of the person's review of an inbox note (`approve` or `reject`)."""
    return f"{action} {path}"


def is_pass(label: str) -> bool:
    return label.split(" ", 1)[0] in PASS_LABELS


@dataclass
class Correction:
    kind: str  # reverted | edited | archived | rejected
    path: str
    type: str  # the memory's type (PersonMemory, Decision, ...)
    run: str  # the run of the pass that wrote it
    time: str  # when the pass ran

    def evidence(self) -> str:
        return f".palinode/journal/{self.run} {self.time[:19]} {self.kind} {self.path}"


@dataclass
class _Run:
    id: str
    label: str
    time: str
    undone: bool
    entries: list[dict[str, Any]]


def _runs(root: Path) -> list[_Run]:
    folder = journal_dir(root)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        name = path.name
        undone = name.endswith(".undone.jsonl")
        if name.endswith(".undoing.jsonl"):
            continue  # an undo in progress (or cut short): not settled either way
        lines = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                lines.append(json.loads(line))
            except ValueError:
                break
        if not lines or not isinstance(lines[0], dict):
            continue
        head = lines[0]
        if not own_journal(root, head):
            continue  # carried in with the vault, or crafted: its paths are not ours to read
        out.append(
            _Run(
                str(head.get("run") or name.split(".", 1)[0]),
                str(head.get("label") or ""),
                str(head.get("time") or ""),
                undone,
                [e for e in lines[1:] if isinstance(e, dict) and entry_problem(root, e) is None],
            )
        )
    return out


def _in_window(stamp: str, today: dt.date, window_days: int) -> bool:
    try:
        day = dt.date.fromisoformat(stamp[:10])
    except ValueError:
        return False
    return 0 <= (today - day).days <= window_days


def _type_of(path: str, data: bytes | None) -> str:
    if data is not None:
        text = data.decode("utf-8", "replace").replace("\r\n", "\n")
        block = fm.find_block(text)
        if block is not None:
            parsed, error = fm.parse(text, block)
            found = memory_type(parsed) if error is None and isinstance(parsed, dict) else None
            if found:
                return found
    kind = kind_of_path(path)
    return (kind.schema if kind else None) or "Insight"


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def find(root: Path, state: Any, today: dt.date, window_days: int, manager_ops: list[dict[str, Any]]) -> list[Correction]:
    """The corrections of the passes run in the window (see the module docstring).

    `state` is the loaded vault state (to find an approved inbox item by its id); `manager_ops`
    the operations log, so an archive or move the manager made itself is not taken for the person's.
    """
    runs = _runs(root)
    out: list[Correction] = []
    by_manager = {(str(o.get("op")), str(o.get("path"))) for o in manager_ops}
    active = [r for r in runs if not r.undone]
    rejected = {r.label.split(" ", 1)[1] for r in active if r.label.startswith(review_label("reject", ""))}
    for run in runs:
        if not is_pass(run.label) or not _in_window(run.time, today, window_days):
            continue
        if run.undone:
            for entry in run.entries:
                path = entry["path"]
                if not is_memory_path(path) or entry.get("after_hash") is None:
                    continue
                before = base64.b64decode(entry["before"]) if entry.get("before") else None
                aside = _read(root / ".palinode" / "undone" / run.id / path) if before is None else None
                out.append(Correction("reverted", path, _type_of(path, before or aside), run.id, run.time))
            continue
        later = [r for r in active if r.id > run.id]
        for entry in run.entries:
            path = entry["path"]
            if entry.get("before") is not None or entry.get("after_hash") is None or not is_memory_path(path):
                continue  # only the memories this pass created
            if path in rejected:  # the person said no with `inbox reject` (a journaled move)
                out.append(Correction("rejected", path, _type_of(path, _read(root / "archive" / path)), run.id, run.time))
                continue
            found = _after(root, path, entry["after_hash"], later)
            if found is None:
                continue
            kind, current = found
            inbox = path.startswith(INBOX_FOLDER + "/")
            data = _frontmatter(current)
            if kind == "gone":
                if inbox and _approved(state, path, root, entry, run):
                    continue
                if ("MOVE", path) in by_manager or ("ARCHIVE", f"archive/{path}") in by_manager:
                    continue
                out.append(Correction("rejected", path, _type_of(path, None), run.id, run.time))
            elif data.get("status") == "archived":
                if ("ARCHIVE", path) in by_manager or ("SUPERSEDE", path) in by_manager:
                    continue
                out.append(Correction("archived", path, (memory_type(data) or _type_of(path, None)), run.id, run.time))
            elif not inbox:
                out.append(Correction("edited", path, (memory_type(data) or _type_of(path, None)), run.id, run.time))
    return out


def _after(root: Path, path: str, after_hash: str, later: list[_Run]) -> tuple[str, bytes | None] | None:
    """("gone" | "changed", current bytes) when someone outside the journal changed the file after
    the pass wrote it; None when every change since is a journaled write."""
    expected = after_hash
    for run in later:
        for entry in run.entries:
            if entry["path"] != path:
                continue
            if entry.get("before_hash") != expected:
                current = _read(root / path)
                return ("gone" if current is None else "changed"), current
            expected = entry.get("after_hash") or ""
    current = _read(root / path)
    if expected is None:
        return None  # a journaled write removed it (a move, an undo-able delete)
    if current is None:
        return "gone", None
    if sha256_bytes(current) != expected:
        return "changed", current
    return None


def _frontmatter(data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    block = fm.find_block(text)
    if block is None:
        return {}
    parsed, error = fm.parse(text, block)
    return parsed or {} if error is None else {}


def _approved(state: Any, path: str, root: Path, entry: dict[str, Any], run: _Run) -> bool:
    """An inbox item that left the inbox because the person approved it: its id lives on outside
    inbox/ and is not archived."""
    stem = path.rsplit("/", 1)[-1][:-3]
    for other, note in state.notes.items():
        if other.startswith(INBOX_FOLDER + "/") or not is_memory_path(other):
            continue
        data = note.frontmatter or {}
        ident = str(data.get("id") or "")
        if (ident.endswith("-" + stem) or other.rsplit("/", 1)[-1][:-3] == stem) and data.get("status") != "archived":
            return True
    return False
