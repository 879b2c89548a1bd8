"""An inbox note re-written as another memory type: the person's correction of its type when
approving it (`review.approve(..., as_type=...)`, PROGRAM.md "Confidence").

The local model and the statement judge type a waiting memory right about two times in three, so
the person may say what it is. Re-typing changes only what the type decides and keeps what the
note says and where it came from:

- frontmatter: `category`, `type` and `id` become the new type's; the
  keys that say something only about the old type are dropped (`own_keys`: a Decision's
  `supersedes`, `superseded_by` and `review_supersedes`, an Insight's `recurrence_count`, a
  PersonMemory's `name`, `role` and `last_contact` ...); the new type's keys the note lacks are
  added as filing a new memory writes them (`update.render_new`), dated when the note was written
  (its `created` or `last_updated`) rather than when it is approved; every other key (confidence,
  entities, evidence, provenance, the person's own) stays byte for byte. Re-typed as a person or
  project memory naming none of its kind among its entities, it gets an empty `review_about`:
  its title is no one's name, so approving it needs whom or what it is about.
- body: rendered in the new type's sections (`render_new`) from the note's own words: the text
  under its title and its statement section become the new statement, a Decision's Rationale and
  Alternatives Rejected fill a Decision's, and every other section is kept under its heading (in
  the new type's section of that name where it has one). Only what `render_new` writes where a
  conversation said nothing is left behind (its placeholders, and a "first noted" line where the
  new type writes its own); nothing is made up.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from palinode_vault.core.entities import entity_refs
from palinode_vault.core.frontmatter import find_block, key_spans
from palinode_vault.core.schemas import SCHEMAS, Memory
from palinode_vault.kinds import TYPE_KIND
from palinode_vault.memory.update.logic import Item, keep_reasons, note_id, render_new
from palinode_vault.memory.update.statements import without_footer
from palinode_vault.memory.update.workspace import append_to_section, body_of, frontmatter_of, set_keys, without_key
from palinode_vault.vault import Vault

# Where what a memory states sits (render_new); an Insight's is the text under its title. A
# hand-written decision may call its statement "Decision".
STATEMENT_SECTIONS: dict[str, tuple[str, ...]] = {
    "Decision": ("Statement", "Decision"),
    "Insight": (),
    "PersonMemory": ("Context",),
    "ProjectSnapshot": ("What This Is",),
    "ResearchRef": ("Summary",),
}
# Keys any memory may carry whatever its type (core/schemas.py declares them on one schema only):
# how sure, when and from what it was noted, other names. Never dropped by a change of type.
_ANY_TYPE = frozenset({"confidence", "created", "evidence_refs", "source_url", "source_file", "date", "tags", "aliases"})
# The review's own keys: approval answers them (review.approve), re-typing leaves them to it.
_REVIEW_KEYS = frozenset({"status", "review_reason"})
# What render_new writes where the conversation said nothing: not the person's words.
_PLACEHOLDERS = frozenset({"Not stated in the conversation.", "None recorded."})
_FIRST_NOTED = re.compile(r"^- \d{4}-\d{2}-\d{2}: first noted(?: \(.*\))?\.$")
_TITLE_PREFIX = re.compile(r"^(?:Decision|Insight):[ \t]*", re.I)
_H1 = re.compile(r"^# +(.+?)[ \t]*$", re.M)
_H2 = re.compile(r"^## +(.+?)[ \t]*$", re.M)


def own_keys(type_name: str) -> frozenset[str]:
    """The frontmatter keys that say something only about a memory of this type."""
    declared = set(SCHEMAS[type_name].model_fields) - set(Memory.model_fields) - _ANY_TYPE
    if type_name == "Decision":
        declared.add("review_supersedes")  # the decision approving it retires (update logic)
        declared.add("review_may_supersede")  # the decision the person is asked whether it replaces
    return frozenset(declared)


@dataclass
class Words:
    """A note's body in parts: its title, the text under the title, and each `##` section."""

    title: str
    lead: str
    sections: list[tuple[str, str]] = field(default_factory=list)  # (heading, content), in order


def words_of(body: str, fallback_title: str) -> Words:
    """The parts of a note's body (the machine-owned footer left out: fixing writes it again)."""
    body = without_footer(body)
    h1 = _H1.search(body)
    title = _TITLE_PREFIX.sub("", h1.group(1)).strip() if h1 else ""
    before = body[: h1.start()].strip() if h1 else ""
    rest = body[h1.end() :] if h1 else body
    heads = list(_H2.finditer(rest))
    lead = rest[: heads[0].start()] if heads else rest
    words = Words(title or fallback_title, "\n\n".join(x for x in (before, lead.strip()) if x))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(rest)
        words.sections.append((m.group(1), rest[m.end() : end].strip("\n")))
    return words


def _kept(content: str, new_type: str) -> str:
    """A section's content less what render_new wrote where nothing was said."""
    if content.strip() in _PLACEHOLDERS:
        return ""
    if TYPE_KIND[new_type] in ("person", "project"):  # it writes its own "first noted" line
        content = "\n".join(x for x in content.split("\n") if not _FIRST_NOTED.match(x.strip()))
    return content.strip("\n") if content.strip() else ""


def retype(vault: Vault, path: str, text: str, old_type: str, new_type: str, now: dt.datetime) -> str:
    """The inbox note `path` (`text`, a memory of `old_type`) re-written as a `new_type` (see the
    module docstring); still `status: review`, for review.approve to file."""
    data = frontmatter_of(text)
    stem = path.rsplit("/", 1)[-1][:-3]
    words = words_of(body_of(text), str(data.get("name") or stem))
    statement_heads = {h.lower() for h in STATEMENT_SECTIONS[old_type]}
    statement = [words.lead] + [c for h, c in words.sections if h.lower() in statement_heads]
    others = [(h, _kept(c, new_type)) for h, c in words.sections if h.lower() not in statement_heads]
    item = Item(new_type, words.title, "\n\n".join(x.strip() for x in statement if x.strip()), 1.0)
    if new_type == "Decision":
        taken = {h.lower(): c for h, c in others if c}
        item.rationale = taken.get("rationale", "")
        item.alternatives = taken.get("alternatives rejected", "")
        others = [(h, c) for h, c in others if h.lower() not in ("rationale", "alternatives rejected")]
        keep_reasons(item)  # from the statement's own "because ...", as filing a decision does
    rendered = render_new(item, path, _noted(data, now), vault, True, "review")
    body = body_of(rendered)
    for heading, content in others:
        if content:
            body = append_to_section(body, heading, content.split("\n"))
    head = _frontmatter(text, rendered, old_type, new_type, path)
    kind = TYPE_KIND[new_type]
    if kind in ("person", "project") and not any(r.startswith(kind + "/") for r in entity_refs(data)):
        # the note names no person (project) of its own: its title is no one's name, so the
        # approval asks whom it is about (review.approve), as for an extracted memory naming nobody
        head = set_keys(head, {"review_about": ""})
    return head + body


def _noted(data: dict, now: dt.datetime) -> dt.datetime:
    """When the note was written (its `created`, else `last_updated`), else `now`."""
    for key in ("created", "last_updated"):
        value = data.get(key)
        if isinstance(value, dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
        try:
            stamp = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            continue
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)
    return now


def _frontmatter(text: str, rendered: str, old_type: str, new_type: str, path: str) -> str:
    """The note's frontmatter block as a `new_type`'s (see the module docstring)."""
    for key in sorted(own_keys(old_type) - own_keys(new_type)):
        text = without_key(text, key)
    kind = TYPE_KIND[new_type]
    text = set_keys(text, {"id": note_id(kind, path), "category": kind, "type": new_type})
    have = set(frontmatter_of(text))
    new_block = find_block(rendered)
    assert new_block is not None, "render_new writes frontmatter"
    added = "".join(
        rendered[s.start : s.end] for k, s in key_spans(rendered, new_block).items() if k not in have and k not in _REVIEW_KEYS
    )
    block = find_block(text)
    assert block is not None, "an inbox note waiting for review has frontmatter"
    return text[: block.content_end] + added + text[block.content_end : block.end]
