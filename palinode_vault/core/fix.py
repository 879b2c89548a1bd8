"""Fixes as edit plans: the spans that bring a memory note in line with the wiki contract.

Both surfaces change in one plan: missing entities (canonical form), label links rewritten to
the resolvable `[[slug|Label]]`, the auto-footer, and `cross_refs:`. Only memory-tier notes whose
frontmatter parses are fixed; everything else is a finding for the person.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from palinode_vault.core import footer as footer_mod
from palinode_vault.core import frontmatter as fm
from palinode_vault.core.crossrefs import compute as compute_cross_refs
from palinode_vault.core.entities import odd_entities_value
from palinode_vault.core.lint import Analysis, wiki_plan
from palinode_vault.core.note import Link, Note, parse_note
from palinode_vault.core.text import Span
from palinode_vault.core.vault_state import VaultState
from palinode_vault.kinds import is_memory_path

# What each span of a plan changes. The sidecar applies only the machine-owned kinds on its own.
ENTITIES, CROSS_REFS, LABELS, FOOTER, LINK_REPAIR = "entities", "cross_refs", "labels", "footer", "link_repair"
MACHINE_OWNED = frozenset([CROSS_REFS, FOOTER])


@dataclass
class FixPlan:
    path: str
    spans: list[Span] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # parallel to spans

    def add(self, span: Span, kind: str, reason: str) -> None:
        self.spans.append(span)
        self.kinds.append(kind)
        self.reasons.append(reason)

    def only(self, kinds: set[str] | frozenset[str]) -> list[Span]:
        """The spans of these kinds."""
        return [s for s, k in zip(self.spans, self.kinds) if k in kinds]


def fixable(note: Note) -> str | None:
    """Why a note is not fixed automatically (None when it may be)."""
    if not is_memory_path(note.path):
        return "structural file: palinode-vault only fixes memory-tier files"
    if note.fm_error is not None:
        return f"frontmatter does not parse (line {note.fm_error.line}); fix it by hand first"
    if note.frontmatter is None or note.fm_block is None:
        return "no frontmatter; add id and category first"
    return None


def _link_text(state: VaultState, link: Link, target_file: str, source: str, table: bool) -> str:
    # the bare name when it resolves to this very file from here, else the shortest path that does
    name = state.resolver.link_path(target_file, source)
    sub = f"#{link.subpath}" if link.subpath else ""
    shown = link.display if link.display is not None else link.target
    bar = "\\|" if table else "|"
    bang = "!" if link.kind == "embed" else ""
    return f"{bang}[[{name}{sub}{bar}{shown}]]"


def plan_fix(state: VaultState, note: Note, text: str, analysis: Analysis) -> FixPlan:
    """The spans that fix `note`, whose normalised text is `text` (empty plan when clean)."""
    plan = FixPlan(note.path)
    if fixable(note) is not None:
        return plan
    block = note.fm_block
    assert block is not None
    data = note.frontmatter or {}

    wiki = wiki_plan(state, note.path)
    # an `entities:` value a person wrote that is no ref list is left as written (lint reports it)
    if wiki.entities_fixed != wiki.entities_now and odd_entities_value(data) is None:
        added = [r for r in wiki.entities_fixed if r not in wiki.entities_now]
        plan.add(
            fm.set_key(text, block, "entities", wiki.entities_fixed),
            ENTITIES,
            "entities: " + (f"added {', '.join(added)}" if added else "canonical form"),
        )

    targets = state.resolved.get(note.path) or []
    for link, target in zip(note.links, targets):
        if target is not None or link.in_footer or link.kind not in ("wiki", "embed"):
            continue
        if "[" in link.target or "]" in link.target:
            continue  # [[[Alice Smith]]: no rewrite gives a link that parses back the same
        label = state.label_target(link)
        if label is None or not label.lower().endswith(".md"):
            continue
        line_start = text.rfind("\n", 0, link.start) + 1
        table = text[line_start : link.start].lstrip().startswith("|") or "\\|" in text[link.start : link.end]
        plan.add(
            Span(link.start, link.end, _link_text(state, link, label, note.path, table)),
            LABELS,
            f"[[{link.target}]] -> resolvable link to {label}",
        )

    # cross_refs follow the body as it will read after the label rewrites: `[[Ali]]` becoming
    # `[[alice-smith|Ali]]` puts the slug's words in the text (else a second fix changes them).
    labels = plan.only({LABELS})
    mentioning = parse_note(note.path, apply_to_text(text, labels)) if labels else note
    expected_refs = compute_cross_refs(mentioning, analysis.mentions)
    current_refs = data.get("cross_refs")
    if (current_refs or expected_refs) and current_refs != expected_refs:
        plan.add(fm.set_key(text, block, "cross_refs", expected_refs), CROSS_REFS, "cross_refs updated")

    span = footer_mod.footer_span(text, note, wiki.footer_links)
    if span is not None and not _changes_the_text_around(note, text, plan.spans, span):
        plan.add(span, FOOTER, "See also footer " + ("migrated" if note.footer and note.footer.legacy else "updated"))
    return plan


def _body_links(note: Note) -> list[tuple[str, str, str | None]]:
    return [(link.target, link.kind, link.display) for link in note.links if not link.in_footer]


def _changes_the_text_around(note: Note, text: str, spans: list[Span], footer: Span) -> bool:
    """Whether writing the footer would change which links the rest of the note holds.

    It can when an inline construct crosses the footer: a code span opened before it and closed
    after it pairs its backticks differently once the footer's lines go, and turns `[[code]]`
    into a link. Such a footer is left as it is (lint keeps saying it is stale): rewriting it
    would change the person's text and the next fix would change cross_refs again.
    """
    without = parse_note(note.path, apply_to_text(text, spans))
    with_footer = parse_note(note.path, apply_to_text(text, [*spans, footer]))
    return _body_links(without) != _body_links(with_footer)


def apply_to_text(text: str, spans: list[Span]) -> str:
    """Apply spans to normalised text (for previews and tests; files go through core.text)."""
    out = []
    pos = 0
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        out.append(text[pos : span.start])
        out.append(span.new)
        pos = span.end
    out.append(text[pos:])
    return "".join(out)


def plan_link_repair(state: VaultState, note: Note, text: str, target: str, new_path: str) -> FixPlan:
    """Point every link written as `target` (e.g. 'mira-okonkow#Notes') at `new_path` instead."""
    plan = FixPlan(note.path)
    for link in note.links:
        written = link.target + (f"#{link.subpath}" if link.subpath else "")
        if link.in_footer or link.kind == "property" or (written != target and link.target != target):
            continue
        if link.kind in ("md", "md_embed"):
            raw = text[link.start : link.end]
            close = raw.rfind("](")
            href = new_path.replace(" ", "%20") + (f"#{link.subpath}" if link.subpath else "")
            new = raw[: close + 2] + href + ")"
        else:
            name = state.resolver.link_path(new_path, note.path)
            sub = f"#{link.subpath}" if link.subpath else ""
            shown = f"|{link.display}" if link.display is not None else ""
            new = f"{'!' if link.kind == 'embed' else ''}[[{name}{sub}{shown}]]"
        plan.add(Span(link.start, link.end, new), LINK_REPAIR, f"link '{written}' -> {new_path}")
    return plan
