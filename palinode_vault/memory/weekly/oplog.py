"""logs/operations.jsonl: one JSON line per memory operation (PROGRAM.md "The operations log").

`{"time", "op", "type", "path", "confidence", "source", "reason"}`. Lines are appended through
the journaled writer as part of the pass that made them, so `undo` of that pass removes them too.
A withheld secret is logged as WITHHELD with its kind in `reason`, never its value.

`SKIP` is a step that could not run, with why; the extraction pass also logs as SKIP a statement
of the person's that looked like a memory but was not filed (`unfiled_reason`: why, and the
statement in short, secrets never), which the weekly self-review reads back (`unfiled_statement`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from palinode_vault.writer import Edit, sha256_bytes

LOG_PATH = "logs/operations.jsonl"
UNFILED_CHARS = 160  # a statement is logged this short at most
_UNFILED = re.compile(r'^not extracted \((?P<why>[^()]*)\): "(?P<text>.*)"$', re.S)


@dataclass
class Operation:
    op: str
    type: str | None
    path: str | None
    confidence: float | None
    source: str
    reason: str
    time: str = ""

    def line(self) -> str:
        data = asdict(self)
        data["time"] = self.time or utc_now()
        ordered = {k: data[k] for k in ("time", "op", "type", "path", "confidence", "source", "reason")}
        return json.dumps(ordered, ensure_ascii=False)


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines text; other lines (cut, hand-edited) are skipped."""
    out = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def read_log(root: Path) -> list[dict[str, Any]]:
    """Every readable line of the log (bad lines are skipped)."""
    path = root / LOG_PATH
    if not path.is_file():
        return []
    return json_lines(path.read_text(encoding="utf-8", errors="replace"))


def append_edit(root: Path, ops: Iterable[Operation], reason: str = "operations log") -> Edit | None:
    """An Edit appending `ops` to the log (None when there is nothing to log)."""
    lines = [op.line() for op in ops]
    if not lines:
        return None
    path = root / LOG_PATH
    before = path.read_bytes() if path.is_file() else None
    text = b"" if before is None else before
    if text and not text.endswith(b"\n"):
        text += b"\n"
    new = text + ("\n".join(lines) + "\n").encode("utf-8")
    return Edit(LOG_PATH, sha256_bytes(before), new, reason)


def unfiled_reason(why: str, statement: str) -> str:
    """The SKIP reason for a statement of the person's that no item was filed for. The caller has
    checked `statement` for secrets; it is shortened here."""
    why = why.replace("(", "").replace(")", "")  # the parentheses delimit it
    text = " ".join(statement.split())
    if len(text) > UNFILED_CHARS:
        text = text[: UNFILED_CHARS - 1].rstrip() + "…"
    return f'not extracted ({why}): "{text}"'


def unfiled_statement(entry: dict[str, Any]) -> tuple[str, str] | None:
    """(why, statement) of a log line written with `unfiled_reason`; None for any other line."""
    if entry.get("op") != "SKIP":
        return None
    m = _UNFILED.match(str(entry.get("reason") or ""))
    return (m.group("why"), m.group("text")) if m else None
