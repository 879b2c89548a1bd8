"""Linking the earlier mentions of an entity that just got its file (PROGRAM.md "Entity
maintenance": "create the file, and link the earlier mentions").

Only memory-tier notes are edited: structural files (daily logs, archive/, the home page) are logs
and are never dressed up. In each memory note that names the entity in plain text, the first
plain mention becomes a wikilink and the entity joins `entities:`, both in the same staged text,
so the pass writes both surfaces in one edit (the workspace's wiki-contract finishing then checks
them with `core.fix.plan_fix`). A note that already links the entity only gets its entity added.
Mentions inside code, comments, links, headings, the frontmatter and the auto-footer are not
mentions.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from palinode_vault.core.entities import entity_refs, odd_entities_value, slugify
from palinode_vault.core.note import parse_note
from palinode_vault.kinds import is_memory_path, memory_type
from palinode_vault.memory.extraction.cues import full_names
from palinode_vault.memory.update.workspace import frontmatter_of, set_keys

if TYPE_CHECKING:  # the pass that runs these steps (consolidate.py imports this module)
    from palinode_vault.memory.weekly.weekly_pass import WeeklyPass

_COMMENT = re.compile(r"<!--.*?-->|%%.*?%%", re.S)
_HEADING_LINE = re.compile(r"^#{1,6}[ \t].*$", re.M)


def name_pattern(name: str) -> re.Pattern[str] | None:
    """A whole-word pattern for a name: several words match in any case; a single word only as
    written with its capital (a common word in lower case is not a name)."""
    name = " ".join(name.split())
    if len(name) < 3:
        return None
    words = name.split(" ")
    body = r"\s+".join(re.escape(w) for w in words)
    flags = re.I if len(words) > 1 else 0
    if len(words) == 1 and not name[:1].isupper():
        return None
    return re.compile(r"(?<![\w\[|/-])" + body + r"(?![\w\]-])", flags)


def _excluded(text: str, note: Any) -> list[tuple[int, int]]:
    spans = [(0, note.body_start)] + list(note.code)
    spans += [(link.start, link.end) for link in note.links]
    spans += [(m.start(), m.end()) for m in _COMMENT.finditer(text)]
    spans += [(m.start(), m.end()) for m in _HEADING_LINE.finditer(text)]
    if note.footer is not None:
        spans.append((note.footer.start, note.footer.end))
    return spans


def first_plain_mention(text: str, note: Any, names: list[str]) -> tuple[int, int] | None:
    """(start, end) of the earliest plain mention of any of `names`, or None."""
    cut = _excluded(text, note)
    best = None
    for name in names:
        pattern = name_pattern(name)
        if pattern is None:
            continue
        for m in pattern.finditer(text, note.body_start):
            if any(a < m.end() and m.start() < b for a, b in cut):
                continue
            if best is None or m.start() < best[0]:
                best = (m.start(), m.end())
            break
    return best


def links_to(note: Any, slug: str) -> bool:
    for link in note.links:
        if link.in_footer or link.kind == "property":
            continue
        target = link.target.strip().lower()
        if target.endswith(".md"):
            target = target[:-3]
        if slugify(target.rsplit("/", 1)[-1]) == slug:
            return True
    return False


def link_mentions(cons: WeeklyPass, ref: str, new_path: str, names: list[str]) -> list[str]:
    """Link the plain mentions of `ref` (whose file `new_path` this pass creates) in the memory
    notes of the vault; returns the paths staged. Logged as UPDATE, one line per note."""
    slug = ref.split("/", 1)[1]
    changed = []
    for path in sorted(cons.vault.state.notes):
        if path == new_path or not is_memory_path(path) or path.endswith("-history.md") or not cons.writable(path):
            continue
        text = cons.ws.text(path)
        if text is None:
            continue
        data = frontmatter_of(text)
        if not data or data.get("status") == "archived":
            continue
        odd = odd_entities_value(data)
        if odd:  # a value a person wrote for a reason we cannot see: not rewritten
            cons.op("SKIP", path, f"not linked to {ref}: {odd}", memory_type(data))
            continue
        entities = entity_refs(data)
        note = parse_note(path, text)
        has_entity = ref in entities
        if links_to(note, slug):
            if has_entity:
                continue
            new = set_keys(text, {"entities": entities + [ref]})
            why = f"entities: added {ref} (the note links it; its file was just created)"
        else:
            span = first_plain_mention(text, note, names)
            if span is None:
                continue
            start, end = span
            shown = text[start:end]
            link = f"[[{slug}]]" if shown == slug else f"[[{slug}|{shown}]]"
            new = text[:start] + link + text[end:]
            if not has_entity:
                new = set_keys(new, {"entities": entities + [ref]})
            why = f"linked the earlier mention '{shown}' of {ref}" + ("" if has_entity else " and added the entity")
        cons.ws.put(path, new, why)
        cons.op("UPDATE", path, why, memory_type(data))
        changed.append(path)
    return changed


def known_entities(state: Any) -> list[tuple[str, str, list[str]]]:
    """(ref, display name, names) of the people and projects the vault has files for: their
    `name`, title, aliases and slug words; archived notes and history notes left out."""
    from palinode_vault.core.entities import ref_of_path

    out = []
    for path, note in sorted(state.notes.items()):
        if not path.startswith(("people/", "projects/")) or path.count("/") != 1 or path.endswith("-history.md"):
            continue
        data = note.frontmatter or {}
        ref = ref_of_path(path)
        if ref is None or data.get("status") == "archived":
            continue
        display = str(data.get("name") or note.title)
        names = [display, note.title, path.rsplit("/", 1)[-1][:-3].replace("-", " ")] + [
            str(a) for a in data.get("aliases") or []
        ]
        out.append((ref, display, list(dict.fromkeys(n for n in names if n))))
    return out


def unknown_full_names(text: str, known: list[tuple[str, str, list[str]]]) -> list[str]:
    """The full names `text` writes (cues.full_names) that are no known entity's name."""
    names = {n.lower() for _, shown, ns in known for n in (shown, *ns)}
    return [n for n in full_names(text) if n.lower() not in names]


def _spans(text: str, name: str) -> list[tuple[int, int]]:
    """Where `name` stands in `text` as whole words."""
    out, at = [], text.find(name)
    while at >= 0:
        end = at + len(name)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            out.append((at, end))
        at = text.find(name, at + 1)
    return out


def mentioned(text: str, known: list[tuple[str, str, list[str]]], kind: str | None = None) -> list[tuple[str, str]]:
    """(ref, name as written) of the known entities `text` names, in the order they appear. A
    known name inside a full name the vault does not know is another person's ("Elena" of
    "Elena Sousa", when the vault knows Elena Vasquez): a new name never lands on a known note."""
    others = [span for n in unknown_full_names(text, known) for span in _spans(text, n)]
    found = []
    for ref, _, names in known:
        if kind and not ref.startswith(kind + "/"):
            continue
        hits = [
            (m.start(), m.group(0))
            for n in names
            if (p := name_pattern(n))
            for m in p.finditer(text)
            if not any(a <= m.start() and m.end() <= b for a, b in others)
        ]
        if hits:
            found.append((min(hits)[0], ref, min(hits)[1]))
    return [(ref, shown) for _, ref, shown in sorted(found)]
