"""The weekly self-review (PROGRAM.md "Self-improvement"): proposes PROGRAM.md edits, never makes them.

It reads the week's `logs/operations.jsonl` and checks two things the log can show:
- extraction too eager: memories ADDed and then archived (or rejected from the inbox) within the
  same week, `schema_gap_min` times or more → propose raising the confidence threshold;
- schema gaps: items whose type was unclear (filed as the less committal type) with the same
  proposed type `schema_gap_min` times or more → propose covering that type.
A proposal is an Insight in `inbox/program-change-{date}.md` with `status: review`, the reason,
and the edit as a unified diff against the PROGRAM.md in use; the operation is logged as PROPOSE.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections import Counter
from typing import Any

from palinode_vault.memory.oplog import read_log

_GAP = re.compile(r"type unclear \('([^']+)'\)")


def _day(entry: dict[str, Any]) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(entry.get("time", ""))[:10])
    except ValueError:
        return None


def findings(log: list[dict[str, Any]], today: dt.date, window_days: int, gap_min: int) -> list[tuple[str, str, list[str]]]:
    """(kind, reason, evidence) for each check that points to a change."""
    week = [e for e in log if (d := _day(e)) and 0 <= (today - d).days <= window_days]
    out = []
    added = {e.get("path") for e in week if e.get("op") == "ADD"}
    retired = [e for e in week if e.get("op") in ("ARCHIVE", "SUPERSEDE") and
               any(p and str(e.get("path", "")).endswith(p.rsplit("/", 1)[-1]) for p in added)]
    if len(retired) >= gap_min:
        out.append(("eager", f"{len(retired)} memories added this week were archived again within the week",
                    [f"logs/operations.jsonl {e.get('time')} {e.get('op')} {e.get('path')}" for e in retired][:10]))
    gaps = Counter(m.group(1) for e in week if (m := _GAP.search(str(e.get("reason", "")))))
    for name, n in gaps.items():
        if n >= gap_min:
            out.append(("gap:" + name, f"the model proposed type '{name}' {n} times this week and none of the types fitted",
                        [f"logs/operations.jsonl {e.get('time')} {e.get('path')}" for e in week if name in str(e.get("reason", ""))][:10]))
    return out


def proposed_text(program_text: str, kind: str, reason: str, today: dt.date, threshold: float) -> str:
    """PROGRAM.md with the proposed edit and its change-log comment."""
    note = f"<!-- {today.isoformat()}: {reason}. -->\n"
    text = program_text
    if kind == "eager":
        new = round(min(0.95, threshold + 0.1), 2)
        text = re.sub(r"(confidence_threshold:\s*)([0-9.]+)", lambda m: f"{m.group(1)}{new}", text, count=1)
        text = text.replace(f"At or above **{threshold}**", f"At or above **{new}**").replace(f"Below {threshold}:", f"Below {new}:")
        note = f"<!-- {today.isoformat()}: Raised the confidence threshold from {threshold} to {new}: {reason}. -->\n"
    else:
        name = kind.split(":", 1)[1]
        text = text.replace("### Never extract", f"- **{name}**: proposed as a new kind of memory; decide its type "
                            "(a new schema, or a wider existing one).\n\n### Never extract", 1)
    anchor = "## Identity"
    return text.replace(anchor, note + "\n" + anchor, 1) if anchor in text else text + "\n" + note


def weekly_review(cons) -> None:
    """Stage proposals (inbox/program-change-{date}.md) in a Consolidation's workspace."""
    from palinode_vault.memory.update import Item, render_new
    from palinode_vault.memory.workspace import set_keys

    s = cons.s
    log = read_log(cons.vault.root)
    found = findings(log, cons.today, s.consolidation.window_days, s.self_improvement.schema_gap_min)
    if not found:
        return
    kind, reason, evidence = found[0]
    path = f"inbox/program-change-{cons.today.isoformat()}.md"
    if cons.ws.exists(path):
        return
    before = cons.program.text
    after = proposed_text(before, kind, reason, cons.today, s.extraction.confidence_threshold)
    diff = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/PROGRAM.md", "b/PROGRAM.md"))
    body = (f"Reason: {reason}.\n\nEvidence:\n" + "".join(f"- {e}\n" for e in evidence) +
            "\nApprove by applying the diff to PROGRAM.md yourself; palinode-vault never edits it.\n\n```diff\n" + diff + "```")
    item = Item("Insight", f"Program change {cons.today.isoformat()}", body, 0.5)
    text = render_new(item, path, cons.now, cons.vault, True, cons.source)
    text = set_keys(text, {"id": f"insight-program-change-{cons.today.isoformat()}", "evidence_refs": ["logs/operations"]})
    cons.ws.put(path, text, "proposed PROGRAM.md change")
    cons.op("PROPOSE", path, reason, "Insight")
