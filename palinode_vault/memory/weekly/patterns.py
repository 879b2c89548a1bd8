"""Cross-project patterns by meaning (PROGRAM.md "Cross-project insights").

The week's statements (sentences of the daily notes, and of decisions and research notes updated
in the window) are embedded with the embedding model (all-MiniLM-L6-v2 by default, the same model
as the index). A pattern is a group of statements alike in meaning that comes from at least
`consolidation.pattern_min_mentions` different contexts. A statement's context is the project its
paragraph links or names; without one, the daily note's session heading ("## 15:10 session —
intake forms" → "intake forms"); for a memory note, its first project entity, else the note.

Grouping is deterministic: every statement is a candidate centre, its group is the statements at
or above `consolidation.pattern_similarity` to it; the group with the most contexts (then the
highest confidence, then the earliest centre) is taken, its statements removed, and so on. A group
whose statements all link the same person or project is one thread followed over several sessions,
not a pattern, and is not taken.
The Insight's confidence is the weakest link: the lowest similarity of one of its statements to
the group's centre (the statement the others were gathered around). At or above PROGRAM.md's
confidence threshold it is filed in `insights/`; below, it waits in `inbox/` with `status: review`.

A statement at least `pattern_similarity` close to an existing Insight (its title and first
paragraph; the closest Insight when several are) is new evidence for it: the Insight gets the
`evidence_refs` and a higher `recurrence_count`, and the statement starts no new pattern.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from palinode_vault.core.entities import entity_refs, ref_of_path, slugify
from palinode_vault.core.prose import STOP, links_as_read, list_item, wikilinks
from palinode_vault.core.prose import sentences as split_sentences
from palinode_vault.kinds import INBOX_FOLDER, memory_type
from palinode_vault.memory.update.logic import Item, render_new
from palinode_vault.memory.update.workspace import body_of, now_utc, set_keys
from palinode_vault.memory.weekly.core_memory import date_of

if TYPE_CHECKING:  # the pass that runs these steps (consolidate.py imports this module)
    from palinode_vault.memory.weekly.weekly_pass import WeeklyPass

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
_FOOTER = re.compile(r"<!-- palinode:see-also -->.*?<!-- /palinode:see-also -->", re.S)
_COMMENT = re.compile(r"<!--.*?-->|%%.*?%%", re.S)
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
MIN_WORDS = 6  # shorter sentences carry too little meaning to group ("Nothing blocking so far.")


@dataclass
class Statement:
    text: str  # the sentence, links shown as their labels
    source: str  # the note it came from (vault path)
    ref: str  # its evidence ref: daily/2026-11-24, decision/x
    day: dt.date | None
    context: str  # a project path, a session topic, or the note
    links: tuple[str, ...]  # memory files linked in its paragraph
    about: frozenset[str] = frozenset()  # slugs of everything its paragraph links (files or not yet)


@dataclass
class Pattern:
    centre: int  # the statement the others were gathered around
    members: list[int]
    contexts: list[str]
    confidence: float  # the lowest similarity of a statement to the group's centre


def plain(text: str) -> str:
    """Markdown to the words a reader sees: link labels kept, code and comments out."""
    text = _CODE.sub(" ", _COMMENT.sub(" ", _FOOTER.sub(" ", text)))
    return links_as_read(text)


def sentences(paragraph: str) -> list[str]:
    out = []
    # a wrapped line continues its sentence; a list item starts a new one (a line break to the splitter)
    joined = ""
    for line in paragraph.split("\n"):
        joined += ("\n" if joined and list_item(line) else " ") + " ".join(line.split())
    for s in split_sentences(joined):
        if len(s.split()) >= MIN_WORDS and not s.upper().startswith("TODO"):
            out.append(" ".join(s.split()))
    return out


def _topic(heading: str) -> str:
    """'09:40 session — offline sprint planning' → 'offline sprint planning'."""
    parts = re.split(r"\s+[—–-]\s+", heading, maxsplit=1)
    return (parts[1] if len(parts) == 2 else heading).strip().lower()


class Statements:
    """Collects the week's statements with their contexts."""

    def __init__(self, cons: WeeklyPass):
        self.cons = cons
        self.state = cons.vault.state
        self.items: list[Statement] = []
        self.projects = {
            p: self._names(p, n)
            for p, n in cons.notes_in("projects")
            if not p.endswith("-history.md") and (n.frontmatter or {}).get("status") != "archived"
        }

    @staticmethod
    def _names(path: str, note: Any) -> list[str]:
        data = note.frontmatter or {}
        stem = path.rsplit("/", 1)[-1][:-3]
        names = {str(data.get("name") or ""), note.title, stem.replace("-", " ")}
        names |= {str(a) for a in data.get("aliases") or []}
        return sorted(n for n in names if len(n.strip()) >= 4)

    def _resolved(self, paragraph: str, source: str) -> list[str]:
        out = []
        for name, _label in wikilinks(paragraph):
            target = self.state.resolver.resolve(name.strip(), source)
            if target and target not in out:
                out.append(target)
        return out

    def _project_of(self, paragraph: str, links: list[str]) -> str | None:
        for target in links:
            if target in self.projects:
                return target
        text = plain(paragraph)
        for path, names in sorted(self.projects.items()):
            if any(re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text, re.I) for n in names):
                return path
        return None

    def add_daily(self, day: dt.date, path: str, text: str) -> None:
        heading = ""
        for block in re.split(r"(?m)^(?=#{1,6}[ \t])", text):
            first = block.split("\n", 1)[0]
            m = _HEADING.match(first)
            body = block
            if m:
                heading = m.group(2) if len(m.group(1)) >= 2 else heading
                body = block.split("\n", 1)[1] if "\n" in block else ""
            for para in re.split(r"\n\s*\n", body):
                if not para.strip():
                    continue
                links = self._resolved(para, path)
                project = self._project_of(para, links)
                context = project or (f"{path[:-3]}: {_topic(heading)}" if heading else path[:-3])
                for s in sentences(plain(para)):
                    self.items.append(Statement(s, path, path[:-3], day, context, tuple(links), _about(para)))

    def add_memory(self, path: str, text: str) -> None:
        data = self.state.notes[path].frontmatter or {}
        projects = [e for e in entity_refs(data) if e.startswith("project/")]
        project = self.state.entity_path(projects[0]) if projects else None
        context = project or path
        body = body_of(text)
        links = self._resolved(body, path)
        day = date_of(data.get("last_updated")) or date_of(data.get("created"))
        for para in re.split(r"\n\s*\n", re.sub(r"(?m)^#{1,6}[ \t].*$", "", body)):
            for s in sentences(plain(para)):
                self.items.append(
                    Statement(
                        s,
                        path,
                        ref_of_path(path) or path[:-3],
                        day,
                        context,
                        tuple(links),
                        _about(body) | {path.rsplit("/", 1)[-1][:-3]},
                    )
                )


def _about(text: str) -> frozenset[str]:
    return frozenset(slugify(name.strip().rsplit("/", 1)[-1]) for name, _label in wikilinks(text))


def group(
    vectors: Any, contexts: list[str], threshold: float, need: int, about: list[frozenset[str]] | None = None
) -> list[Pattern]:
    """Groups of statements alike in meaning from at least `need` contexts (see the module doc).

    A group whose statements all link one same thing (`about`: a person, a project) is one thread
    followed across sessions, not a pattern across contexts, and is not taken."""
    import numpy as np

    n = len(contexts)
    if n == 0:
        return []
    sims = np.asarray(vectors, dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    left = set(range(n))
    out: list[Pattern] = []
    while True:
        best = None
        for i in sorted(left):
            members = [j for j in sorted(left) if j == i or sims[i, j] >= threshold]
            ctx = sorted({contexts[j] for j in members})
            if len(ctx) < need or about and frozenset.intersection(*(about[j] for j in members)):
                continue
            weakest = min(float(sims[i, j]) for j in members if j != i)
            score = (len(ctx), weakest, -i)
            if best is None or score > best[0]:
                best = (score, i, members, ctx)
        if best is None:
            return out
        (_, weakest, _), centre, members, ctx = best
        out.append(Pattern(centre, members, ctx, round(weakest, 2)))
        left -= set(members)


def _label(cons: WeeklyPass, context: str) -> str:
    note = cons.vault.state.notes.get(context)
    return note.title if note is not None else context


def _title(centre: str, others: list[str], names: list[str]) -> str:
    """What the statements say alike: the longest run of words of the most typical one that at
    least half of them share (project names left out); else its opening clause."""
    toks = lambda t: [w.lower() for w in re.findall(r"[\w'’-]+", t)]  # noqa: E731
    sets = [set(toks(o)) for o in others]
    skip = {w for n in names for w in toks(n)}
    runs: list[list[str]] = [[]]
    for w in re.findall(r"[\w'’-]+", centre):
        if w.lower() not in skip and (1 + sum(w.lower() in x for x in sets)) * 2 >= 1 + len(others):
            runs[-1].append(w)
        elif runs[-1]:
            runs.append([])
    for run in runs:
        while run and run[0].lower() in STOP:
            run.pop(0)
        while run and run[-1].lower() in STOP:
            run.pop()
    best = max(runs, key=lambda r: len([w for w in r if w.lower() not in STOP]))
    if len([w for w in best if w.lower() not in STOP]) >= 2:
        phrase = " ".join(best[:10])
    else:
        phrase = " ".join(re.split(r"[.;:!?,]\s", centre.strip() + " ", maxsplit=1)[0].split()[:8]).strip(" .,;:")
    return "Recurring: " + phrase[:1].upper() + phrase[1:]


def _insight_lead(text: str) -> str:
    """An Insight's statement: its title line and first paragraph."""
    body = plain(body_of(text)).strip()
    paras = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    title = paras[0].lstrip("# ").replace("Insight:", "").strip() if paras else ""
    first = next((p for p in paras[1:] if not p.startswith("#")), "")
    return f"{title}. {first}"[:1000]


def find_patterns(cons: WeeklyPass, dailies: list[tuple[dt.date, str, str]]) -> None:
    """The pattern pass of a Consolidation: new Insights and new evidence for existing ones."""
    s = cons.s
    need = s.consolidation.pattern_min_mentions
    threshold = cons.setting("consolidation", "pattern_similarity")
    most = cons.setting("consolidation", "pattern_max_per_run")
    if threshold is None or most is None:
        return
    embedder = cons.embedder_or_none()
    if embedder is None:
        return
    found = Statements(cons)
    for day, path, text in dailies:
        found.add_daily(day, path, text)
    window = s.consolidation.window_days
    for folder in ("decisions", "research"):
        for path, note in cons.notes_in(folder):
            data = note.frontmatter or {}
            updated = date_of(data.get("last_updated")) or date_of(data.get("created"))
            if data.get("status") != "archived" and updated and 0 <= (cons.today - updated).days <= window:
                found.add_memory(path, cons.ws.text(path) or "")
    statements = found.items
    insights = []
    for folder in ("insights", INBOX_FOLDER):
        for path, note in cons.notes_in(folder):
            data = note.frontmatter or {}
            if (
                memory_type(data) == "Insight"
                and data.get("status") != "archived"
                and cons.writable(path)
                and not path.startswith(f"{INBOX_FOLDER}/program-change-")
                and not path.startswith(f"{INBOX_FOLDER}/core-change-")
            ):
                insights.append(path)
    if not statements:
        return
    texts = [st.text for st in statements] + [_insight_lead(cons.ws.text(p) or "") for p in insights]
    vectors = embedder.embed_many(texts)
    sv, iv = vectors[: len(statements)], vectors[len(statements) :]
    # existing insights: a statement that says the same again is new evidence for the insight it
    # is closest to (one insight per statement)
    taken: set[int] = set()
    nearest: dict[int, list[int]] = {}
    if insights:
        for i in range(len(statements)):
            scores = [float(iv[k] @ sv[i]) for k in range(len(insights))]
            k = max(range(len(insights)), key=lambda x: (scores[x], -x))
            if scores[k] >= threshold:
                taken.add(i)
                nearest.setdefault(k, []).append(i)
    for k, path in enumerate(insights):
        if not path.startswith("insights/") or k not in nearest:
            continue
        data = cons.vault.state.notes[path].frontmatter or {}
        evidence = [str(e) for e in data.get("evidence_refs") or []]
        close = nearest[k]
        new = [r for r in dict.fromkeys(statements[i].ref for i in close) if r not in evidence]
        if not new:
            continue
        refs = evidence + new
        text = set_keys(
            cons.ws.text(path) or "",
            {
                "recurrence_count": max(int(data.get("recurrence_count") or 1), len(refs)),
                "evidence_refs": refs,
                "last_updated": now_utc(cons.now),
            },
        )
        cons.ws.put(path, text, "pattern seen again")
        cons.op("UPDATE", path, f"pattern seen again in {', '.join(new)} (meaning similarity >= {threshold})", "Insight")
    # new patterns among the statements no insight already covers
    free = [i for i in range(len(statements)) if i not in taken]
    patterns = group(sv[free], [statements[i].context for i in free], threshold, need, [statements[i].about for i in free])
    for pattern in patterns[:most]:
        members = [free[m] for m in pattern.members]
        covered = next((p for k, p in enumerate(insights) if max(float(iv[k] @ sv[i]) for i in members) >= threshold), None)
        if covered:
            continue  # an inbox item already holds it, waiting for the person
        file_pattern(cons, [statements[i] for i in members], statements[free[pattern.centre]], pattern, embedder)


def file_pattern(cons: WeeklyPass, members: list[Statement], centre: Statement, pattern: Pattern, embedder: Any) -> None:
    """Stage the Insight for one pattern: insights/ at or above the confidence threshold, else inbox/."""
    s = cons.s
    threshold = s.extraction.confidence_threshold
    inbox = pattern.confidence < threshold
    ordered = sorted(members, key=lambda m: (m.day or dt.date.min, m.source))
    notes = cons.vault.state.notes
    names = [n for c in pattern.contexts if c in notes for n in Statements._names(c, notes[c])]
    title = _title(centre.text, [m.text for m in members if m is not centre], names)
    folder = INBOX_FOLDER if inbox else "insights"
    path = f"{folder}/{slugify(title)[:60].strip('-')}.md"
    if cons.ws.exists(path) or cons.ws.exists(f"insights/{slugify(title)[:60].strip('-')}.md"):
        return
    projects = [c for c in pattern.contexts if c in cons.vault.state.notes and c.startswith("projects/")]
    entities: list[tuple[str, str]] = []
    for p in projects + sorted({link for m in members for link in m.links if link.startswith("people/")}):
        ref = ref_of_path(p)
        if ref and ref not in [r for r, _ in entities]:
            entities.append((ref, ""))
    labels = [f"[[{c.rsplit('/', 1)[-1][:-3]}]]" if c in projects else _label(cons, c) for c in pattern.contexts]
    model = getattr(embedder, "path", None)
    lines = [
        f"Statements alike in meaning came up in {len(pattern.contexts)} different contexts: {', '.join(labels)}. "
        f"Lowest similarity to the most typical statement {pattern.confidence:.2f} ({getattr(model, 'name', 'embedding model')}).",
        "",
    ]
    for m in ordered:
        lines.append(f'- {m.day.isoformat() if m.day else m.ref} ({_label(cons, m.context)}): "{m.text}"')
    lines += [
        "",
        "Consolidation saw only that these statements resemble each other. If they are one pattern, "
        "say here what it teaches and when it applies.",
    ]
    item = Item("Insight", title, "\n".join(lines), pattern.confidence, entities)
    text = render_new(item, path, cons.now, cons.vault, inbox, cons.source)
    refs = list(dict.fromkeys(m.ref for m in ordered))
    text = set_keys(text, {"recurrence_count": len(pattern.contexts), "evidence_refs": refs})
    cons.ws.put(path, text, "pattern across contexts")
    why = f"pattern in {len(pattern.contexts)} contexts, confidence {pattern.confidence:.2f}"
    if inbox:
        cons.op("INBOX", path, f"{why} (below {threshold}); filed for review", "Insight")
    else:
        cons.op("ADD", path, why, "Insight")
