"""The weekly self-review (PROGRAM.md "Self-improvement"): proposes changes, never makes them.

It reads the week's `logs/operations.jsonl`, the journal of the memory passes (corrections.py)
and the access record of sessions (access.py), and checks what PROGRAM.md's "What the weekly pass
checks" lists:

- **extraction too eager**: memories ADDed and then archived by the manager within the week,
  `schema_gap_min` times or more → propose raising the confidence threshold;
- **schema gaps**: items whose type was unclear with the same proposed type `schema_gap_min`
  times or more → propose covering that type;
- **repeated corrections**: the person reverted, edited, archived or rejected the manager's new
  memories of one type, or its writes to one file, `correction_min` times or more in the week →
  propose a stricter rule for that type, or leaving that file to the person;
- **facts explained again and never extracted**: the extraction pass logs as SKIP each statement
  of the person's that looked like a memory and got no item (extract.py). Such statements from
  `correction_min` or more different sessions of the week that say the same thing (MiniLM cosine,
  or shared content words when no embedding model is available, at or above
  `self_improvement.restated`,
  grouped as the pattern pass groups), and that no memory filed this week says too → propose
  adding that kind of fact to "Always extract", naming the statements, sessions and dates;
- **core drift**, judged only when at least `core_sessions_min` sessions started this week (a
  session starts with a `core` call): core notes that no search found and nothing updated this
  week → propose `core: false`; non-core notes in the search results of every session, or NOOPed
  facts the person explained again in `correction_min` different sessions → propose `core: true`.

PROGRAM.md changes are one proposal, `inbox/program-change-{date}.md`: an Insight with
`status: review`, each reason, and the edits as one unified diff against the PROGRAM.md in use,
change-log comment included. Core changes are `inbox/core-change-{date}.md`, each with its reason
and the frontmatter diff to apply. Both are logged as PROPOSE; neither PROGRAM.md nor any `core:`
flag is changed here (the monthly core review's automatic DEMOTE is consolidate.py's).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from palinode_vault.core.entities import ref_of_path
from palinode_vault.core.prose import sentences, stems
from palinode_vault.kinds import INBOX_FOLDER, is_memory_path
from palinode_vault.maintenance import note_diff
from palinode_vault.memory.extraction import secrets
from palinode_vault.memory.update.workspace import body_of, set_keys
from palinode_vault.memory.weekly import access, corrections
from palinode_vault.memory.weekly.core_memory import date_of
from palinode_vault.memory.weekly.oplog import read_log, unfiled_statement
from palinode_vault.memory.weekly.patterns import group, plain

if TYPE_CHECKING:  # the pass that runs these steps (consolidate.py imports this module)
    from palinode_vault.memory.weekly.weekly_pass import WeeklyPass

_GAP = re.compile(r"type unclear \('([^']+)'\)")


@dataclass
class Finding:
    """One reason to change PROGRAM.md."""

    kind: str  # eager | gap:<Type> | type:<Type> | file:<path> | unfiled:<Type>
    reason: str
    evidence: list[str] = field(default_factory=list)
    count: int = 0
    example: str = ""  # unfiled: the person's statement, short


@dataclass
class CoreChange:
    path: str
    core: bool  # the proposed value
    reason: str


def _day(entry: dict[str, Any]) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(entry.get("time", ""))[:10])
    except ValueError:
        return None


def in_week(log: list[dict[str, Any]], today: dt.date, window_days: int) -> list[dict[str, Any]]:
    return [e for e in log if (d := _day(e)) and 0 <= (today - d).days <= window_days]


def findings(log: list[dict[str, Any]], today: dt.date, window_days: int, gap_min: int) -> list[Finding]:
    """The checks the operations log alone can answer: extraction too eager, schema gaps."""
    week = in_week(log, today, window_days)
    out = []
    added = {e.get("path") for e in week if e.get("op") == "ADD"}
    retired = [
        e
        for e in week
        if e.get("op") in ("ARCHIVE", "SUPERSEDE")
        and any(p and str(e.get("path", "")).endswith(p.rsplit("/", 1)[-1]) for p in added)
    ]
    if len(retired) >= gap_min:
        out.append(
            Finding(
                "eager",
                f"{len(retired)} memories added this week were archived again within the week",
                [f"logs/operations.jsonl {e.get('time')} {e.get('op')} {e.get('path')}" for e in retired][:10],
                len(retired),
            )
        )
    gaps = Counter(m.group(1) for e in week if (m := _GAP.search(str(e.get("reason", "")))))
    for name, n in sorted(gaps.items()):
        if n >= gap_min:
            out.append(
                Finding(
                    "gap:" + name,
                    f"the model proposed type '{name}' {n} times this week and none of the types fitted",
                    [f"logs/operations.jsonl {e.get('time')} {e.get('path')}" for e in week if name in str(e.get("reason", ""))][
                        :10
                    ],
                    n,
                )
            )
    return out


def correction_findings(found: list[corrections.Correction], least: int) -> list[Finding]:
    """Repeated corrections: by memory type, and by file."""
    out = []
    by_type: dict[str, list[corrections.Correction]] = defaultdict(list)
    by_path: dict[str, list[corrections.Correction]] = defaultdict(list)
    for c in found:
        by_type[c.type].append(c)
        by_path[c.path].append(c)
    for name, items in sorted(by_type.items()):
        if len(items) >= least:
            kinds = Counter(c.kind for c in items)
            said = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            out.append(
                Finding(
                    "type:" + name,
                    f"the person corrected {len(items)} {name} memories the manager wrote this week ({said})",
                    [c.evidence() for c in items][:10],
                    len(items),
                )
            )
    for path, items in sorted(by_path.items()):
        if len(items) >= least:
            out.append(
                Finding(
                    "file:" + path,
                    f"the person corrected the manager's writes to {path} {len(items)} times this week",
                    [c.evidence() for c in items][:10],
                    len(items),
                )
            )
    return out


# --- facts explained again and never extracted -----------------------------------------------------

FILED = ("ADD", "UPDATE", "INBOX", "SUPERSEDE")
MAX_UNFILED_FINDINGS = 3  # one proposal stays readable


def _short(text: str, chars: int = 100) -> str:
    text = " ".join(text.split()).replace("--", "–")  # never closes the change-log comment
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def lexical_vectors(texts: list[str]) -> Any:
    """Unit vectors of the texts' content-word stems: their dot product is a cosine of shared words,
    the stand-in for meaning when no embedding model is available."""
    import numpy as np

    sets = [stems(t) for t in texts]
    vocab = {w: i for i, w in enumerate(sorted(set().union(*sets)))} if sets else {}
    out = np.zeros((len(texts), max(1, len(vocab))), dtype=np.float32)
    for row, words in enumerate(sets):
        for w in words:
            out[row, vocab[w]] = 1.0
        if words:
            out[row] /= np.sqrt(len(words))
    return out


def _filed_sentences(cons: WeeklyPass, week_ops: list[dict[str, Any]]) -> list[str]:
    """The sentences of the memories filed this week (by the log, and by this consolidation)."""
    paths = sorted({str(o["path"]) for o in week_ops + cons.ops if o.get("op") in FILED and o.get("path")})
    out: list[str] = []
    for path in paths:
        if not is_memory_path(path):
            continue
        try:
            text = cons.ws.text(path)
        except Exception:  # noqa: BLE001 - a note moved or unreadable since: nothing to compare
            text = None
        if not text:
            continue
        for line in sentences(plain(body_of(text))):
            line = line.strip().lstrip("#-*+ ").strip()
            if len(line.split()) >= 3 and len(stems(line)) >= 2:  # a name alone ("Harbor app.") says nothing
                out.append(line)
    return out[:2000]


def unfiled_findings(cons: WeeklyPass, week_ops: list[dict[str, Any]], least: int, threshold: float) -> list[Finding]:
    """Statements the extraction pass logged as not extracted (SKIP, oplog.unfiled_reason) in at
    least `least` different sessions this week that say the same thing (embedding cosine, or shared
    words without a model, at or above `threshold`), and that no memory filed this week covers."""
    least = max(2, least)  # explained *again*: two sessions at the very least
    said = [(e, u[1]) for e in week_ops if (u := unfiled_statement(e)) and not secrets.secret_kinds_in(u[1])]
    if len({str(e.get("source")) for e, _ in said}) < least:
        return []
    texts = [t for _, t in said]
    filed = _filed_sentences(cons, week_ops)
    embedder = cons.embedder_or_none()
    vectors = embedder.embed_many(texts + filed) if embedder is not None else lexical_vectors(texts + filed)
    sv, fv = vectors[: len(texts)], vectors[len(texts) :]
    out = []
    for pattern in group(sv, [str(e.get("source")) for e, _ in said], threshold, least):
        members = sorted(pattern.members, key=lambda i: (str(said[i][0].get("time")), i))
        if len(filed) and max(float((fv @ sv[i]).max()) for i in members) >= threshold:
            continue  # a memory filed this week says it: extraction caught it in the end
        first: dict[str, int] = {}
        for i in members:
            first.setdefault(str(said[i][0].get("source")), i)
        named = ", ".join(f'"{_short(said[i][1])}" ({source}, {str(said[i][0].get("time"))[:10]})' for source, i in first.items())
        types = Counter(str(said[i][0].get("type") or "") for i in members if said[i][0].get("type"))
        type_name = types.most_common(1)[0][0] if types else cons.s.extraction.uncertain_type
        out.append(
            Finding(
                "unfiled:" + type_name,
                f"the person explained the same thing in {len(first)} sessions this week and extraction filed "
                f"nothing for it: {named}",
                [f"logs/operations.jsonl {said[i][0].get('time')} SKIP {said[i][0].get('source')}" for i in members][:10],
                len(first),
                _short(said[members[0]][1]),
            )
        )
    return out[:MAX_UNFILED_FINDINGS]


# --- the PROGRAM.md proposal -----------------------------------------------------------------------


def _add_to_section(text: str, heading: str, lines: list[str]) -> str:
    """Append lines at the end of a `### heading` section of PROGRAM.md (before the next heading)."""
    m = re.search(rf"^### {re.escape(heading)}[ \t]*\n", text, re.M)
    if not m:
        return text
    nxt = re.compile(r"^#{1,3} ", re.M).search(text, m.end())
    end = nxt.start() if nxt else len(text)
    body = text[m.end() : end].rstrip("\n")
    return text[: m.end()] + body + "\n\n" + "".join(line + "\n" for line in lines) + "\n" + text[end:]


def proposed_text(program_text: str, found: list[Finding], today: dt.date, threshold: float) -> str:
    """PROGRAM.md with every proposed edit and one change-log comment giving the reasons."""
    text = program_text
    notes: list[str] = []
    rules: list[str] = []  # new rules for the model, in "Significance threshold" (read by every extraction pass)
    always: list[str] = []  # kinds of fact to extract, in "Always extract"
    for f in found:
        if f.kind == "eager":
            new = round(min(0.95, threshold + 0.1), 2)
            text = re.sub(r"(confidence_threshold:\s*)([0-9.]+)", rf"\g<1>{new}", text, count=1)
            text = text.replace(f"At or above **{threshold}**", f"At or above **{new}**").replace(
                f"Below {threshold}:", f"Below {new}:"
            )
            notes.append(f"Raised the confidence threshold from {threshold} to {new}: {f.reason}")
        elif f.kind.startswith("gap:"):
            name = f.kind.split(":", 1)[1]
            text = text.replace(
                "### Never extract",
                f"- **{name}**: proposed as a new kind of memory; decide its type "
                "(a new schema, or a wider existing one).\n\n### Never extract",
                1,
            )
            notes.append(f"Proposed the kind '{name}': {f.reason}")
        elif f.kind.startswith("type:"):
            name = f.kind.split(":", 1)[1]
            rules.append(
                f"- **{name}**: the person keeps correcting these ({f.count} this week). File a {name} only when "
                "the person states it outright and it will matter in later sessions; when in doubt, leave it out."
            )
            notes.append(f"Stricter about {name}: {f.reason}")
        elif f.kind.startswith("file:"):
            path = f.kind.split(":", 1)[1]
            rules.append(
                f"- `{path}`: the person keeps correcting what is written there ({f.count} times this week). "
                "Leave it to the person: file new facts about it to `inbox/` for review."
            )
            notes.append(f"Leave {path} to the person: {f.reason}")
        elif f.kind.startswith("unfiled:"):
            name = f.kind.split(":", 1)[1]
            always.append(
                f"- **{name}: facts the person had to explain again.** Extract them even when they look minor, "
                f'like "{f.example}" (said in {f.count} sessions in the week to {today.isoformat()}, never extracted).'
            )
            notes.append(f"Added to Always extract a {name} fact extraction kept missing: {f.reason}")
    if always:
        text = _add_to_section(text, "Always extract", always)
    if rules:
        text = _add_to_section(text, "Significance threshold", rules)
    comment = f"<!-- {today.isoformat()}: " + "\n     ".join(f"{n}." for n in notes) + " -->\n"
    anchor = "## Identity"
    return text.replace(anchor, comment + "\n" + anchor, 1) if anchor in text else text + "\n" + comment


# --- core drift ------------------------------------------------------------------------------------


def core_changes(cons: WeeklyPass, week_ops: list[dict[str, Any]], least: int, sessions_min: int) -> tuple[list[CoreChange], int]:
    """(proposed core changes, sessions this week); nothing is judged below `sessions_min` sessions."""
    sessions = access.week(access.read(cons.vault.root), cons.today, cons.s.consolidation.window_days)
    started = [s for s in sessions.values() if s.started]
    if len(started) < sessions_min:
        return [], len(started)
    found_any = set().union(*(s.found for s in sessions.values())) if sessions else set()
    quiet_ops = ("NOOP", "FLAG", "SKIP", "KEEP", "DEMOTE")
    touched = {str(o.get("path")) for o in week_ops + cons.ops if o.get("op") not in quiet_ops}
    demoted = {o["path"] for o in cons.ops if o["op"] == "DEMOTE"}
    window = cons.s.consolidation.window_days
    out: list[CoreChange] = []
    for path in sorted(cons.vault.state.memory_paths()):
        if path.startswith(INBOX_FOLDER + "/") or path.endswith("-history.md") or path in demoted:
            continue
        data = cons.vault.state.notes[path].frontmatter or {}
        if data.get("status") == "archived":
            continue
        updated = date_of(data.get("last_updated")) or date_of(data.get("last_contact"))
        recent = updated is not None and 0 <= (cons.today - updated).days <= window
        if data.get("core") is True:
            if path not in found_any and path not in touched and not recent:
                out.append(
                    CoreChange(path, False, f"no search found it and nothing updated it in {len(started)} sessions this week")
                )
            continue
        every = sum(1 for s in started if path in s.found)
        if every == len(started):
            out.append(
                CoreChange(path, True, f"it was in the search results of every session this week ({every} of {len(started)})")
            )
    noops: dict[str, set[str]] = defaultdict(set)
    for o in week_ops:
        if o.get("op") == "NOOP" and o.get("path"):
            noops[str(o["path"])].add(str(o.get("source")))
    for path, sources in sorted(noops.items()):
        note = cons.vault.state.notes.get(path)
        if (
            len(sources) >= least
            and note is not None
            and is_memory_path(path)
            and (note.frontmatter or {}).get("core") is not True
            and path not in [c.path for c in out]
        ):
            out.append(
                CoreChange(
                    path,
                    True,
                    f"the person explained it again in {len(sources)} sessions this week and the "
                    "vault already had it (NOOP each time): sessions should start with it",
                )
            )
    return out, len(started)


# --- staging the proposals -------------------------------------------------------------------------


def _proposal_item(cons: WeeklyPass, path: str, ident: str, title: str, body: str, evidence: list[str]) -> None:
    from palinode_vault.memory.update.logic import Item, render_new

    item = Item("Insight", title, body, 0.5)
    text = render_new(item, path, cons.now, cons.vault, True, cons.source)
    cons.ws.put(path, set_keys(text, {"id": ident, "evidence_refs": evidence}), title)


def weekly_review(cons) -> None:
    """Stage the week's proposals (inbox/program-change-{date}.md, inbox/core-change-{date}.md) in a
    Consolidation's workspace."""
    s = cons.s
    window = s.consolidation.window_days
    log = read_log(cons.vault.root)
    week_ops = in_week(log, cons.today, window)
    found = findings(log, cons.today, window, s.self_improvement.schema_gap_min)
    least = cons.setting("self_improvement", "correction_min")
    if least is not None:
        fixes = corrections.find(cons.vault.root, cons.vault.state, cons.today, window, log)
        found += correction_findings(fixes, least)
        if any(unfiled_statement(e) for e in week_ops):
            # "the same thing" has its own number: pattern_similarity (0.5) groups themes, far
            # looser than one fact said again (MiniLM: rewordings 0.81-0.95, two facts about one
            # project 0.49, a fact against its project note's unrelated line 0.65)
            same = cons.setting("self_improvement", "restated")
            if same is not None:
                found += unfiled_findings(cons, week_ops, least, float(same))
    stamp = cons.today.isoformat()
    if found:
        path = f"{INBOX_FOLDER}/program-change-{stamp}.md"
        if not cons.ws.exists(path):
            before = cons.program.text
            after = proposed_text(before, found, cons.today, s.extraction.confidence_threshold)
            diff = note_diff("PROGRAM.md", before, after)
            reasons = "".join(f"- {f.reason}.\n" for f in found)
            evidence = list(dict.fromkeys(e for f in found for e in f.evidence))[:20]
            body = (
                f"Reasons:\n{reasons}\nEvidence:\n"
                + "".join(f"- {e}\n" for e in evidence)
                + "\nApprove by applying the diff to PROGRAM.md yourself; palinode-vault never edits it.\n\n```diff\n"
                + diff
                + "```"
            )
            _proposal_item(cons, path, f"insight-program-change-{stamp}", f"Program change {stamp}", body, ["logs/operations"])
            cons.op("PROPOSE", path, "; ".join(f.reason for f in found)[:400], "Insight")
    sessions_min = cons.setting("self_improvement", "core_sessions_min")
    if least is None or sessions_min is None:
        return
    changes, sessions = core_changes(cons, week_ops, least, sessions_min)
    if not changes:
        return
    path = f"{INBOX_FOLDER}/core-change-{stamp}.md"
    if cons.ws.exists(path):
        return
    lines, diffs = [], []
    for c in changes:
        stem = c.path.rsplit("/", 1)[-1][:-3]
        lines.append(f"- [[{stem}]]: `core: {str(not c.core).lower()}` → `core: {str(c.core).lower()}`: {c.reason}.")
        text = cons.ws.text(c.path) or ""
        new = set_keys(text, {"core": c.core})
        diffs.append(note_diff(c.path, text, new))
    body = (
        f"The weekly review's core-drift check, from {sessions} sessions this week (recorded in "
        f"`{access.ACCESS_PATH}`) and the operations log:\n\n"
        + "\n".join(lines)
        + "\n\nApprove a change by setting `core:` in the note's frontmatter as below; palinode-vault does not "
        "change these itself.\n\n```diff\n" + "".join(diffs) + "```"
    )
    refs = [r for c in changes if (r := ref_of_path(c.path))]
    _proposal_item(cons, path, f"insight-core-change-{stamp}", f"Core changes {stamp}", body, refs)
    cons.op(
        "PROPOSE",
        path,
        f"{len(changes)} core change(s): " + "; ".join(f"{c.path} core: {str(c.core).lower()}" for c in changes)[:380],
        "Insight",
    )
