"""The weekly consolidation pass (PROGRAM.md "Consolidation"), as one journaled run.

Steps, in order: daily notes → project summaries (status sections and Follow-ups, with the
specifics kept), processed daily notes moved to `archive/daily/`, decision supersession,
cross-project patterns, entity maintenance, pruning (stale flags, stale inbox items archived),
the core review, and the weekly self-review (improve.py). Every number comes from PROGRAM.md's
settings block, read afresh. `dry_run` computes every operation and diff and writes nothing.

Judgement calls go to the local model only where the rules in code cannot decide (is a newer
decision that mentions an older one replacing it?); without a model, such a pair is "unclear":
both stay active and an Insight describes the tension, as PROGRAM.md says.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from palinode_vault.core.entities import entity_refs, ref_of_path, slugify, split_ref
from palinode_vault.core.note import Note
from palinode_vault.core.prose import sentences, wikilinks
from palinode_vault.kinds import INBOX_FOLDER, memory_type
from palinode_vault.memory.extraction import cues
from palinode_vault.memory.extraction.mentions import link_mentions
from palinode_vault.memory.update.logic import Item, Updater, keyword_similar, render_new
from palinode_vault.memory.update.workspace import (
    Workspace,
    append_to_section,
    body_of,
    frontmatter_of,
    now_utc,
    replace_section,
    section_bounds,
    set_keys,
)
from palinode_vault.memory.weekly.core_memory import date_of, doubtful
from palinode_vault.memory.weekly.corrections import pass_label
from palinode_vault.memory.weekly.oplog import Operation, read_log
from palinode_vault.program import load_program
from palinode_vault.vault import Vault

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAILY = re.compile(r"^daily/(\d{4}-\d{2}-\d{2})\.md$")
_TODO = re.compile(r"^\s*(?:[-*]\s*\[ \]\s*|TODO:?\s*)(.+)$", re.M)


def next_run(today: dt.date, weekday: str) -> dt.date:
    """The next date (today included) that falls on PROGRAM.md's consolidation weekday."""
    target = WEEKDAYS.index(weekday)
    return today + dt.timedelta(days=(target - today.weekday()) % 7)


def is_due(root, today: dt.date) -> bool:
    """True on the consolidation weekday when no consolidation has run today (sidecar schedule)."""
    settings = load_program(root).settings
    if WEEKDAYS[today.weekday()] != settings.consolidation.weekday:
        return False
    stamp = today.isoformat()
    return not any(str(op.get("source", "")).startswith(f"consolidation-{stamp}") for op in read_log(root))


@dataclass
class ConsolidationResult:
    operations: list[dict[str, Any]] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    run: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"operations": self.operations, "written": self.written, "diffs": self.diffs}


def _sentences(text: str) -> list[str]:
    return sentences(" ".join(text.split()))


def _paragraphs(text: str) -> list[str]:
    text = re.sub(r"^#{1,6}[ \t].*$", "", text, flags=re.M)  # headings are labels, not facts
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _short(paragraph: str, limit: int = 320) -> str:
    out = ""
    for s in _sentences(paragraph):
        if out and len(out) + len(s) + 1 > limit:
            break
        out = f"{out} {s}".strip()
    return out or paragraph[:limit]


def _names(path: str, data: dict[str, Any], title: str) -> list[str]:
    stem = path.rsplit("/", 1)[-1][:-3]
    names = {str(data.get("name") or ""), title, stem, stem.replace("-", " ")}
    aliases = data.get("aliases")
    names |= {a for a in (aliases if isinstance(aliases, list) else [aliases]) if isinstance(a, str)}
    return [n for n in names if len(n.strip()) >= 4]


class Consolidation:
    def __init__(self, vault: Vault, generator: Any = None, now: dt.datetime | None = None, embedder: Any = None):
        self.vault = vault
        self.program = load_program(vault.root)
        self.s = self.program.settings
        self.today = vault.settings.today()
        self.now = now or dt.datetime.combine(self.today, dt.time(6, 0), dt.UTC)
        self.source = f"consolidation-{self.today.isoformat()}"
        self.ws = Workspace(vault, extra_folders=frozenset({"archive", "daily"}))
        self.ops: list[dict[str, Any]] = []
        self.generator = generator
        self._gen = None
        self.embedder = embedder  # None: the default (loaded when needed); False: none
        self.skipped: set[str] = set()

    # --- helpers ---------------------------------------------------------------------------

    def op(self, op: str, path: str | None, reason: str, type_name: str | None = None) -> None:
        self.ops.append({"op": op, "path": path, "reason": reason})
        self.ws.log(Operation(op, type_name, path, None, self.source, reason))

    def notes_in(self, folder: str) -> Iterator[tuple[str, Note]]:
        for path, note in sorted(self.vault.state.notes.items()):
            if path.startswith(folder + "/") and path.count("/") == 1:
                yield path, note

    def writable(self, path: str) -> bool:
        note = self.vault.state.notes.get(path)
        return note is not None and note.fm_error is None and note.frontmatter is not None

    def model(self):
        if self.generator is False:
            return None
        if self._gen is None:
            from palinode_vault.memory.extraction.extract import load_generator

            self._gen = load_generator(self.generator)
        return self._gen

    def setting(self, section: str, key: str) -> Any:
        """A number of PROGRAM.md's settings block that older copies of the file may lack: None
        (and the step that needs it says so once, as a SKIP) when the vault's PROGRAM.md has no such key."""
        value = (getattr(self.s, section).model_extra or {}).get(key)
        if value is None and f"{section}.{key}" not in self.skipped:
            self.skipped.add(f"{section}.{key}")
            self.op(
                "SKIP",
                None,
                f"PROGRAM.md's settings block has no {section}.{key}; the step that needs it did not run "
                "(add it from the PROGRAM.md shipped with palinode-vault)",
            )
        return value

    def embedder_or_none(self):
        """The embedding model for meaning comparisons, or None (logged once as a SKIP, with why)."""
        if "embedder" in self.skipped:
            return None
        if self.embedder is False:
            self.skipped.add("embedder")
            self.op("SKIP", None, "cross-project patterns: no embedding model (turned off for this run)")
            return None
        if self.embedder is None or hasattr(self.embedder, "get") and not hasattr(self.embedder, "embed_many"):
            from palinode_vault.models import Embedder, ModelUnavailable

            try:
                self.embedder = (
                    self.embedder.get() if self.embedder is not None else Embedder(self.vault.settings.embedding_model)
                )
            except ModelUnavailable as exc:
                self.skipped.add("embedder")
                self.op("SKIP", None, f"cross-project patterns need the embedding model: {exc}")
                self.embedder = False
                return None
        return self.embedder

    def mentions(self, text: str, path: str, names: list[str], note_links: list[str]) -> bool:
        stem = path.rsplit("/", 1)[-1][:-3].lower()
        if any(target.strip().lower().rsplit("/", 1)[-1] == stem for target in note_links):
            return True
        return any(re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text, re.I) for n in names)

    # --- the steps ---------------------------------------------------------------------------

    def run(self, dry_run: bool, write: Any = None) -> ConsolidationResult:
        dailies = self.daily_notes()
        self.project_summaries(dailies)
        self.entity_maintenance(dailies)
        self.move_dailies(dailies)
        self.supersession()
        self.patterns(dailies)
        self.pruning()
        self.core_review()
        from palinode_vault.memory.weekly.improve import weekly_review

        weekly_review(self)
        result = ConsolidationResult(self.ops)
        result.diffs = self.ws.diffs()
        if dry_run:
            self.ws.restore()
        else:
            label = pass_label("consolidate", self.today.isoformat())
            result.written, result.conflicts, result.run = (write or Workspace.commit)(self.ws, label)
        return result

    def daily_notes(self) -> list[tuple[dt.date, str, str]]:
        """(date, path, text) of the daily notes to consolidate: before today (today's log waits)."""
        out = []
        for path in sorted(self.vault.state.notes):
            m = _DAILY.match(path)
            if not m:
                continue
            try:
                day = dt.date.fromisoformat(m.group(1))
            except ValueError:
                continue
            if day < self.today:
                out.append((day, path, self.ws.text(path) or ""))
        return out

    def project_summaries(self, dailies) -> None:
        for path, note in self.notes_in("projects"):
            data = note.frontmatter or {}
            if path.endswith("-history.md") or data.get("status") == "archived":
                continue
            names = _names(path, data, note.title)
            found: list[tuple[dt.date, str, str]] = []
            for day, dpath, text in dailies:
                links = [name for name, _label in wikilinks(text)]
                for para in _paragraphs(text):
                    plinks = [name for name, _label in wikilinks(para)]
                    if self.mentions(para, path, names, plinks):
                        found.append((day, dpath, para))
                del links
            if not found:
                continue
            if not self.writable(path):
                self.op(
                    "FLAG",
                    path,
                    "mentioned in the week's daily notes but its frontmatter is missing or does not parse; not updated",
                )
                continue
            self.write_project(path, found)

    def write_project(self, path: str, found: list[tuple[dt.date, str, str]]) -> None:
        text = self.ws.text(path) or ""
        existing = body_of(text)

        def new(line: str) -> bool:
            core = line.split(": ", 1)[-1]
            return not any(fuzz.partial_ratio(core.lower(), old.lower()) >= 92 for old in existing.splitlines() if old.strip())

        changes = [f"- {day.isoformat()}: {_short(p)}" for day, _, p in found]
        recent = [c for c in changes if new(c)]
        decisions, lessons, blockers, todos = [], [], [], []
        for day, _, para in found:
            for s in _sentences(para):
                # the sentence's wording, as the extraction reads it (cue_words/<lang>.toml)
                if cues.type_by_wording(s, ["Decision"]):
                    decisions.append(f"- {day.isoformat()}: {s}")
                if cues.type_by_wording(s, ["Insight"]):
                    lessons.append(f"- {day.isoformat()}: {s}")
                if cues.says(s, cues.load().blockers):
                    blockers.append(f"- {s}")
            for m in _TODO.finditer(para):
                todos.append(f"- [ ] {m.group(1).strip()}")
        # Status: three to seven bullets, newest first; the old Status is kept in the history note.
        status = [f"- {day.isoformat()}: {_short(p)}" for day, _, p in sorted(found, key=lambda f: f[0], reverse=True)][:7]
        old_bounds = section_bounds(text, "Status")
        old_status = text[old_bounds[0] : old_bounds[1]].strip() if old_bounds else ""
        if len(status) < 3 and old_status:
            status += [f"- (before {found[0][0].isoformat()}) {' '.join(old_status.split())[:300]}"]
        if not recent and not [d for d in decisions if new(d)] and not [t for t in todos if new(t)]:
            self.op("NOOP", path, f"{len(found)} daily mention(s), all already summarised", "ProjectSnapshot")
            return
        if old_status and "\n".join(status) != old_status:
            updater = Updater(self.vault, self.ws, self.s, keyword_similar(self.vault), self.source, self.now)
            updater._history_append(path, "Status", old_status.replace("\n", " ")[:400], "Rewritten by the weekly consolidation.")
        text = replace_section(text, "Status", status)
        text = append_to_section(text, "Recent Changes", recent)
        text = append_to_section(text, "Blockers", [b for b in dict.fromkeys(blockers) if new(b)])
        text = append_to_section(text, "Follow-ups", [t for t in dict.fromkeys(todos) if new(t)])
        text = append_to_section(text, "Key Decisions", [d for d in dict.fromkeys(decisions) if new(d)])
        text = append_to_section(text, "Lessons Learned", [x for x in dict.fromkeys(lessons) if new(x)])
        text = set_keys(text, {"last_updated": now_utc(self.now)})
        self.ws.put(path, text, "weekly consolidation of daily notes")
        days = sorted({d.isoformat() for d, _, _ in found})
        self.op("UPDATE", path, f"consolidated {len(found)} mention(s) from daily notes {', '.join(days)}", "ProjectSnapshot")

    def move_dailies(self, dailies) -> None:
        for day, path, _ in dailies:
            dst = f"archive/{path}"
            if self.ws.exists(dst):
                self.op("FLAG", path, f"{dst} exists already; left in daily/")
                continue
            self.ws.move(path, dst, "processed by the weekly consolidation")
            self.op("MOVE", dst, f"daily note {day.isoformat()} consolidated")

    def entity_maintenance(self, dailies) -> None:
        # last_contact brought forward to the latest daily note naming the person
        for path, note in self.notes_in("people"):
            data = note.frontmatter or {}
            if not self.writable(path) or data.get("status") == "archived":
                continue
            # an exchange is a link to them or their full name; a first name in passing is not
            names = [n for n in {str(data.get("name") or ""), note.title} if " " in n.strip()]
            latest = None
            for day, _dpath, text in dailies:
                links = [name for name, _label in wikilinks(text)]
                if self.mentions(text, path, names, links):
                    latest = day if latest is None or day > latest else latest
            current = date_of(data.get("last_contact"))
            if latest and (current is None or latest > current):
                text = set_keys(self.ws.text(path) or "", {"last_contact": latest.isoformat()})
                self.ws.put(path, text, "last_contact from daily notes")
                self.op("UPDATE", path, f"last_contact {current} -> {latest}", "PersonMemory")
        # recurring people/projects that have no file yet: named in entities somewhere, linked in 2+ dailies
        wanted: dict[str, int] = {}
        labels: dict[str, list[str]] = {}  # slug -> the names the links show ("Lena Fischer")
        for _day, dpath, text in dailies:
            seen = set()
            for name, shown in wikilinks(text):
                target = name.strip()
                if self.vault.state.resolver.resolve(target, dpath) is not None:
                    continue
                slug = slugify(target.rsplit("/", 1)[-1])
                seen.add(slug)
                for label in (shown, None if "-" in target or "/" in target else target):
                    if label and label.strip() not in labels.setdefault(slug, []):
                        labels[slug].append(label.strip())
            for slug in seen:
                wanted[slug] = wanted.get(slug, 0) + 1
        listed: dict[str, str] = {}
        for path in self.vault.state.memory_paths():
            for e in entity_refs(self.vault.state.notes[path].frontmatter):
                kind, slug = split_ref(e)
                if kind in ("person", "project"):
                    listed.setdefault(slug, kind)
        for slug, count in sorted(wanted.items()):
            kind = listed.get(slug)
            if count < 2 or kind is None or self.vault.state.entity_path(f"{kind}/{slug}"):
                continue
            type_name = "PersonMemory" if kind == "person" else "ProjectSnapshot"
            full = [n for n in labels.get(slug, []) if slugify(n) == slug]  # "Tomás Reyes" keeps its accent
            title = full[0] if full else slug.replace("-", " ").title()
            path = f"{'people' if kind == 'person' else 'projects'}/{slug}.md"
            item = Item(type_name, title, f"Recurs in {count} daily notes this week; created by the weekly consolidation.", 0.7)
            self.ws.put(path, render_new(item, path, self.now, self.vault, False, self.source), "recurring entity without a file")
            self.op("ADD", path, f"{kind} linked in {count} daily notes this week had no file", type_name)
            # its earlier mentions in memory notes get linked, in this same journaled run
            names = list(dict.fromkeys([title, slug.replace("-", " ")] + [n for n in labels.get(slug, []) if " " in n]))
            link_mentions(self, f"{kind}/{slug}", path, names)

    def supersession(self) -> None:
        decisions = {p: n for p, n in self.notes_in("decisions") if self.writable(p)}
        by_id = {str((n.frontmatter or {}).get("id")): p for p, n in decisions.items()}
        active = {p for p, n in decisions.items() if (n.frontmatter or {}).get("status") != "archived"}
        handled: set[frozenset[str]] = set()
        for path in sorted(active):
            data = decisions[path].frontmatter or {}
            newer_id = str(data.get("superseded_by") or "")
            newer = by_id.get(newer_id)
            if newer and newer != path:
                self.retire_decision(path, newer, "superseded_by names a newer decision")
                handled.add(frozenset((path, newer)))
        for path in sorted(active):
            data = decisions[path].frontmatter or {}
            for old_id in data.get("supersedes") or []:
                old = by_id.get(str(old_id))
                if old and old in active and frozenset((path, old)) not in handled:
                    self.retire_decision(old, path, "the newer decision lists it in supersedes")
                    handled.add(frozenset((path, old)))
        # pairs about the same project where one refers to the other
        for a in sorted(active):
            na = decisions[a]
            ents_a = set(entity_refs(na.frontmatter))
            for b in sorted(active):
                if a == b or frozenset((a, b)) in handled:
                    continue
                nb = decisions[b]
                ents_b = set(entity_refs(nb.frontmatter))
                projects = {e for e in ents_a & ents_b if e.startswith("project/")}
                ref_b = ref_of_path(b)
                if (
                    not projects
                    or ref_b not in ents_a
                    and not any(self.vault.state.resolve_link(link, a) == b for link in na.links)
                ):
                    continue  # a does not refer to b
                handled.add(frozenset((a, b)))
                body = body_of(self.ws.text(a) or "")
                other = [nb.title.lower(), b.rsplit("/", 1)[-1][:-3]]
                if not any(cues.says_replaces(s) and any(o in s.lower() for o in other) for s in _sentences(body)):
                    self.op("KEEP", a, f"complements {b} (same project, no sign of replacement); both stay active")
                    continue
                verdict = self.judge(a, b)
                if verdict == "replaces":
                    self.retire_decision(b, a, "the newer decision replaces it (model judgement, replacement wording)")
                elif verdict == "complements":
                    self.op("KEEP", a, f"complements {b} (model judgement); both stay active")
                else:
                    self.tension(a, b)

    def judge(self, newer: str, older: str) -> str:
        gen = self.model()
        if gen is None:
            return "unclear"
        schema = {
            "type": "object",
            "properties": {"relation": {"type": "string", "enum": ["replaces", "complements", "unclear"]}},
            "required": ["relation"],
        }
        system = (
            "You compare two decisions about the same project. Answer 'replaces' only if the NEW decision "
            "plainly replaces the OLD one, 'complements' if both can stand, else 'unclear'."
        )
        user = f"NEW:\n{body_of(self.ws.text(newer) or '')[:1200]}\n\nOLD:\n{body_of(self.ws.text(older) or '')[:1200]}"
        from palinode_vault.models import ModelUnavailable

        try:
            answer, finish = gen.generate_json(system, user, schema, 16)
        except ModelUnavailable:
            raise  # no model at all is the person's to know (a lazily loaded one fails here)
        except Exception:  # noqa: BLE001 - a model failure leaves the pair unclear
            return "unclear"
        if finish != "stop" or not isinstance(answer, dict):
            return "unclear"
        return str(answer.get("relation")) if answer.get("relation") in ("replaces", "complements") else "unclear"

    def retire_decision(self, old: str, newer: str, why: str) -> None:
        old_text = self.ws.text(old) or ""
        new_text = self.ws.text(newer) or ""
        old_id = str(frontmatter_of(old_text).get("id") or "")
        new_id = str(frontmatter_of(new_text).get("id") or "")
        self.ws.put(
            old,
            set_keys(old_text, {"status": "archived", "superseded_by": new_id, "last_updated": now_utc(self.now)}),
            f"superseded by {new_id}",
        )
        supers = [str(x) for x in frontmatter_of(new_text).get("supersedes") or []]
        if old_id and old_id not in supers:
            self.ws.put(newer, set_keys(new_text, {"supersedes": supers + [old_id]}), f"supersedes {old_id}")
        self.op("SUPERSEDE", old, f"archived, superseded by {new_id}: {why}", "Decision")

    def tension(self, a: str, b: str) -> None:
        ta, tb = (self.vault.state.notes[p].title for p in (a, b))
        sa, sb = a.rsplit("/", 1)[-1][:-3], b.rsplit("/", 1)[-1][:-3]
        title = f"Tension between {ta} and {tb}"
        path = f"insights/tension-{sa}-{sb}"[:70].rstrip("-") + ".md"
        if self.ws.exists(path):
            return
        item = Item(
            "Insight",
            title,
            f"[[{sa}]] may replace [[{sb}]], or both may stand; consolidation could not tell. "
            "Both stay active until a person decides.",
            0.6,
            [(f"decision/{sa}", ""), (f"decision/{sb}", "")],
        )
        self.ws.put(path, render_new(item, path, self.now, self.vault, False, self.source), "unclear supersession")
        self.op("ADD", path, f"unclear whether {a} replaces {b}; both stay active", "Insight")

    def patterns(self, dailies) -> None:
        from palinode_vault.memory.weekly.patterns import find_patterns

        find_patterns(self, dailies)

    def pruning(self) -> None:
        p = self.s.pruning
        state = self.vault.state
        recent_sources = set()
        for path, note in state.notes.items():
            updated = date_of((note.frontmatter or {}).get("last_updated"))
            if updated and (self.today - updated).days <= p.stale_days:
                recent_sources.add(path)
        for path in sorted(state.memory_paths()):
            note = state.notes[path]
            data = note.frontmatter or {}
            status = str(data.get("status") or "")
            updated = date_of(data.get("last_updated")) or date_of(data.get("created")) or date_of(data.get("date"))
            if path.startswith(INBOX_FOLDER + "/"):
                if status == "review" and updated and (self.today - updated).days > p.inbox_days and self.writable(path):
                    text = set_keys(self.ws.text(path) or "", {"status": "archived", "archived_reason": "stale"})
                    dst = f"archive/{path}"
                    if not self.ws.exists(dst):
                        self.ws.move(path, dst, "unreviewed inbox item archived as stale", text=text)
                        self.op(
                            "ARCHIVE",
                            dst,
                            f"inbox item unreviewed for {(self.today - updated).days} days (> {p.inbox_days})",
                            memory_type(data) or "",
                        )
                continue
            if status == "archived" or not updated or (self.today - updated).days <= p.stale_days:
                continue
            ref = ref_of_path(path)
            referenced = any(
                src != path
                and ((state.incoming.get(path) or Counter())[src] > 0 or ref in entity_refs(state.notes[src].frontmatter))
                for src in recent_sources
            )
            if not referenced:
                self.op(
                    "FLAG",
                    path,
                    f"stale: not updated for {(self.today - updated).days} days (> {p.stale_days}) and not referenced; review it",
                )

    def core_review(self) -> None:
        every = self.s.core.review_every_days
        last = None
        for entry in read_log(self.vault.root):
            if entry.get("op") == "CORE_REVIEW":
                day = date_of(str(entry.get("time", ""))[:10])
                last = day if last is None or (day and day > last) else last
        if last is not None and (self.today - last).days < every:
            return
        demoted = 0
        for path in sorted(self.vault.state.memory_paths()):
            note = self.vault.state.notes[path]
            data = note.frontmatter or {}
            if data.get("core") is not True or path.startswith(INBOX_FOLDER + "/"):
                continue
            data = frontmatter_of(self.ws.text(path) or "") or data
            why = doubtful(path, data, self.today, self.s.core.quiet_days)
            if why and self.writable(path):
                self.ws.put(path, set_keys(self.ws.text(path) or "", {"core": False}), f"core review: {why}")
                self.op("DEMOTE", path, f"core: false ({why})")
                demoted += 1
            elif why:
                self.op("FLAG", path, f"core review: {why}; frontmatter cannot be edited automatically")
        self.op("CORE_REVIEW", None, f"core set reviewed; {demoted} demoted (every {every} days)")


def consolidate(
    vault: Vault,
    *,
    dry_run: bool = False,
    generator: Any = None,
    now: dt.datetime | None = None,
    embedder: Any = None,
    write: Any = None,
) -> ConsolidationResult:
    """Run the weekly consolidation on `vault` (its settings' `now` is today).

    `generator`: the model for judgement calls (None: the default; False: rules in code only).
    `embedder`: the embedding model for the pattern pass, an Embedder or the index's ModelSlot
    (None: the default MiniLM, loaded when needed; False: no pattern pass, logged as SKIP).
    `write(ws, label)` writes the run (default `ws.commit`; see memory/update/planned.py).
    """
    if not vault.loaded:
        vault.load()
    return Consolidation(vault, generator, now, embedder).run(dry_run, write)
