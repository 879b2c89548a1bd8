"""Lint: every check, computed from a VaultState. Pure; findings carry `path:line`.

`lint_note` checks one note against the vault (what the sidecar reruns after a change);
`lint_vault` adds the checks that need the whole vault (duplicate ids, orphans).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from palinode_vault.core import footer as footer_mod
from palinode_vault.core.crossrefs import MentionIndex
from palinode_vault.core.crossrefs import compute as compute_cross_refs
from palinode_vault.core.entities import canonical_ref, expected_id, ref_of_path, slugify, split_ref
from palinode_vault.core.findings import ERROR, Finding
from palinode_vault.core.note import Link, Note
from palinode_vault.core.program import ProgramSettings
from palinode_vault.core.resolve import anchor_exists
from palinode_vault.core.schemas import schema_of_category, validate_memory
from palinode_vault.core.vault_state import VaultState, entity_entries
from palinode_vault.kinds import BY_NAME, INBOX_FOLDER, KINDS, REQUIRED_MEMORY_KEYS, is_memory_path, kind_of_path, top_folder


@dataclass(frozen=True)
class LintContext:
    """What lint needs besides the vault: today's date and PROGRAM.md's numbers."""

    now: dt.date
    program: ProgramSettings


class Analysis:
    """Derived, vault-wide data that lint and fix share (rebuilt when the state changes)."""

    def __init__(self, state: VaultState):
        self.state = state
        self.generation = state.names_generation
        self.mentions = MentionIndex({p: n for p, n in state.notes.items() if is_memory_path(p)})
        ids: dict[str, list[str]] = defaultdict(list)
        for path in state.memory_paths():
            data = state.notes[path].frontmatter or {}
            if isinstance(data.get("id"), str):
                ids[data["id"]].append(path)
        self.duplicate_ids = {k: sorted(v) for k, v in ids.items() if len(v) > 1}


def analysis_for(state: VaultState, cached: Analysis | None = None) -> Analysis:
    if cached is not None and cached.generation == state.names_generation and cached.state is state:
        return cached
    return Analysis(state)


# --- the wiki contract --------------------------------------------------------------------


@dataclass
class WikiPlan:
    """How a memory note's two surfaces should look, and what disagrees now."""

    entities_now: list[str]  # as written
    entities_fixed: list[str]  # canonical, corrected, with missing ones added
    missing: list[tuple[Link, str]]  # body links whose ref is not in entities
    uncanonical: list[tuple[str, str | None]]  # (as written, canonical or None)
    mismatched: list[tuple[str, str]]  # (entity, body ref that replaces it)
    uncovered: list[str]  # entities with no inline body link
    footer_links: list[str]  # what the footer should list


def _entities_list(note: Note) -> list[str]:
    return entity_entries(note)


def _infer_canonical(state: VaultState, entry: str) -> str | None:
    kind, slug = split_ref(entry)
    if kind is not None:
        return canonical_ref(entry)
    # no kind: accept it only if exactly one entity file has this slug
    matches = [r for r in (f"{k}/{slugify(slug)}" for k in BY_NAME if k != "daily") if state.entity_path(r)]
    return matches[0] if len(matches) == 1 else None


def wiki_plan(state: VaultState, path: str) -> WikiPlan:
    note = state.notes[path]
    own = ref_of_path(path)
    targets = state.resolved.get(path) or []
    written = _entities_list(note)
    canonical: list[str] = []
    uncanonical: list[tuple[str, str | None]] = []
    for entry in written:
        fixed = _infer_canonical(state, entry)
        if fixed != entry:
            uncanonical.append((entry, fixed))
        canonical.append(fixed or entry)

    inline_refs: dict[str, Link] = {}
    unresolved_slugs: set[str] = set()
    for link, target in zip(note.links, targets):
        if link.kind == "property" or link.is_embed and target and not target.lower().endswith(".md"):
            continue
        ref = state.link_ref(link, target)
        if ref is None:
            # a footer link is the footer's own output, not a body link that covers an entity
            if target is None and not link.in_footer:
                unresolved_slugs.add(slugify(link.target.rsplit("/", 1)[-1]))
            continue
        if ref == own or ref.split("/", 1)[0] not in BY_NAME or ref.startswith("daily/"):
            continue
        if not link.in_footer:
            inline_refs.setdefault(ref, link)

    entity_set = set(canonical)
    missing = [(link, ref) for ref, link in inline_refs.items() if ref not in entity_set]

    def covered(ref: str) -> bool:
        if ref in inline_refs:
            return True
        if state.entity_path(ref) is None:  # no file yet: a link with the same slug covers it
            return split_ref(ref)[1] in unresolved_slugs
        return False

    uncovered = [r for r in dict.fromkeys(canonical) if r != own and not covered(r)]
    # Same kind, similar slug, one side missing its partner: the body's form wins.
    mismatched: list[tuple[str, str]] = []
    for ent in list(uncovered):
        ekind, eslug = split_ref(ent)
        for _link, ref in missing:
            rkind, rslug = split_ref(ref)
            if rkind == ekind and state.entity_path(ent) is None and (rslug.startswith(eslug) or eslug.startswith(rslug)):
                mismatched.append((ent, ref))
                break
    replaced = {old: new for old, new in mismatched}
    fixed_list: list[str] = []
    for ref in canonical:
        ref = replaced.get(ref, ref)
        if ref not in fixed_list:
            fixed_list.append(ref)
    for _, ref in missing:
        if ref not in fixed_list:
            fixed_list.append(ref)
    uncovered_after = [r for r in uncovered if r not in replaced]
    footer_links = []
    for ref in uncovered_after:
        if not canonical_ref(ref):
            continue
        file = state.entity_path(ref)
        # a footer link must land on the entity's file from this note (Obsidian's rules)
        footer_links.append(state.resolver.link_path(file, path) if file else split_ref(ref)[1])
    return WikiPlan(written, fixed_list, missing, uncanonical, mismatched, uncovered_after, footer_links)


# --- checks ---------------------------------------------------------------------------------


def _entities_line(note: Note) -> int:
    return note.key_line("entities")


def _key_line(note: Note, key: str) -> int:
    return note.key_line(key)


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
        except ValueError:
            return None
    return None


def lint_note(state: VaultState, path: str, ctx: LintContext, analysis: Analysis) -> list[Finding]:
    """Findings for one note (everything but orphans, which need the whole graph)."""
    if path in state.unreadable:
        item = state.unreadable[path]
        return [Finding("unreadable", path, item.line, item.message)]
    note = state.notes[path]
    out: list[Finding] = []
    memory = is_memory_path(path)
    if note.fm_error is not None:
        err = note.fm_error
        out.append(
            Finding(
                "invalid_frontmatter",
                path,
                err.line,
                f"{err.message}; fix the YAML by hand (palinode-vault never rewrites this file until it parses)",
                column=err.column,
            )
        )
    elif memory and note.frontmatter is None:
        out.append(
            Finding(
                "missing_frontmatter", path, 1, "memory file has no frontmatter; add id and category (see PROGRAM.md schemas)"
            )
        )
    elif memory:
        out.extend(_schema_findings(note, analysis))
        out.extend(_wiki_findings(state, note))
        out.extend(_lifecycle_findings(state, note, ctx))
        expected = compute_cross_refs(note, analysis.mentions)
        current = (note.frontmatter or {}).get("cross_refs")
        if (current or expected) and current != expected:
            out.append(
                Finding(
                    "cross_refs_stale",
                    path,
                    _key_line(note, "cross_refs") if current is not None else 1,
                    f"cross_refs should be {expected} (machine-generated; run palinode-vault fix)",
                    fixable=True,
                )
            )
    out.extend(_link_findings(state, note, fixable=memory and note.fm_error is None))
    if is_orphan(state, path):
        out.append(
            Finding(
                "orphan", path, 1, "no links in or out; link it from a related note or let palinode-vault related suggest some"
            )
        )
    return out


def _schema_findings(note: Note, analysis: Analysis) -> list[Finding]:
    data = note.frontmatter or {}
    path = note.path
    out = []
    missing = [k for k in REQUIRED_MEMORY_KEYS if k not in data]
    if missing:
        out.append(
            Finding("schema", path, 1, f"missing required key(s) {', '.join(missing)}; every memory file carries id and category")
        )
        return out
    kind = kind_of_path(path)
    category = data.get("category")
    schema = schema_of_category(category)
    if schema is None:
        names = ", ".join(k.name for k in KINDS if k.schema)
        out.append(Finding("schema", path, _key_line(note, "category"), f"category '{category}' is not one of {names}"))
        return out
    if top_folder(path) != INBOX_FOLDER and kind is not None and kind.name != category:
        out.append(
            Finding(
                "schema",
                path,
                _key_line(note, "category"),
                f"category is '{category}' but files in {kind.folder}/ are {kind.name}",
            )
        )
        return out
    # `type:` is optional (Palinode's files have none); where present it names the same schema
    written_type = data.get("type")
    if written_type is not None and written_type != schema:
        out.append(
            Finding(
                "schema",
                path,
                _key_line(note, "type"),
                f"type is '{written_type}' but category '{category}' means {schema}; category decides (fix or drop type)",
                severity="warning",
            )
        )
    for problem in validate_memory(data, schema):
        out.append(
            Finding("schema", path, _key_line(note, problem.split("'")[1] if "'" in problem else "id"), f"{schema}: {problem}")
        )
    want_id = expected_id(path)
    if want_id and data.get("id") != want_id and top_folder(path) != INBOX_FOLDER:
        out.append(
            Finding(
                "schema",
                path,
                _key_line(note, "id"),
                f"id is '{data.get('id')}' but this file's id should be '{want_id}' ({{kind}}-{{slug}})",
                severity="warning",
            )
        )
    others = analysis.duplicate_ids.get(str(data.get("id")))
    if others:
        rest = [p for p in others if p != path]
        out.append(
            Finding(
                "duplicate_id",
                path,
                _key_line(note, "id"),
                f"id '{data.get('id')}' is also used by {', '.join(rest)}; give each memory its own id",
            )
        )
    return out


def _wiki_findings(state: VaultState, note: Note) -> list[Finding]:
    plan = wiki_plan(state, note.path)
    path = note.path
    out = []
    line = _entities_line(note)
    for entry, fixed in plan.uncanonical:
        if fixed:
            out.append(
                Finding(
                    "wiki_drift",
                    path,
                    line,
                    f"entity '{entry}' is not canonical; write it as '{fixed}'",
                    target=entry,
                    fixable=True,
                )
            )
        else:
            out.append(
                Finding(
                    "wiki_drift",
                    path,
                    line,
                    f"entity '{entry}' has no known kind; use kind/slug with a kind from PROGRAM.md (person, project, decision, insight, research)",
                    target=entry,
                )
            )
    for old, new in plan.mismatched:
        out.append(
            Finding(
                "wiki_drift",
                path,
                line,
                f"entities says '{old}' but the body links '{new}'; the body wins: fix replaces the entity",
                target=old,
                fixable=True,
            )
        )
    for link, ref in plan.missing:
        if any(new == ref for _, new in plan.mismatched):
            continue
        out.append(
            Finding(
                "wiki_drift",
                path,
                link.line,
                f"body links {ref} but entities: does not list it; fix adds it",
                column=link.column,
                target=link.target,
                fixable=True,
            )
        )
    has_footer = note.footer is not None
    if plan.footer_links and not has_footer:
        for ref in plan.uncovered:
            out.append(
                Finding(
                    "wiki_drift",
                    path,
                    line,
                    f"entity {ref} has no body link; link it inline where it matters, or fix adds it to the See also footer",
                    target=ref,
                    fixable=True,
                )
            )
    elif not footer_mod.is_current(note, plan.footer_links) and (has_footer or plan.footer_links):
        why = (
            "uses Palinode's old marker"
            if note.footer and note.footer.legacy
            else f"should list {plan.footer_links or 'nothing (remove it)'}"
        )
        out.append(
            Finding(
                "footer_stale",
                path,
                note.footer.line if note.footer else 1,
                f"the See also footer {why}; it is machine-owned: fix rewrites it",
                fixable=True,
            )
        )
    return out


def _lifecycle_findings(state: VaultState, note: Note, ctx: LintContext) -> list[Finding]:
    data = note.frontmatter or {}
    path = note.path
    out = []
    status = str(data.get("status") or "")
    if data.get("superseded_by") and status != "archived":
        out.append(
            Finding(
                "superseded_not_archived",
                path,
                _key_line(note, "status" if "status" in data else "superseded_by"),
                f"superseded_by is '{data['superseded_by']}' but status is '{status or 'unset'}'; set status: archived (only archived leaves recall)",
            )
        )
    updated = _as_date(data.get("last_updated")) or _as_date(data.get("created")) or _as_date(data.get("date"))
    pruning = ctx.program.pruning
    if top_folder(path) == INBOX_FOLDER:
        if status == "review" and updated and (ctx.now - updated).days > pruning.inbox_days:
            out.append(
                Finding(
                    "inbox_stale",
                    path,
                    _key_line(note, "status"),
                    f"waiting for review for {(ctx.now - updated).days} days (> {pruning.inbox_days}); file it or let consolidation archive it as stale",
                )
            )
    elif (
        status != "archived"
        and updated
        and (ctx.now - updated).days > pruning.stale_days
        and not _recently_referenced(state, path, ctx.now, pruning.stale_days)
    ):
        out.append(
            Finding(
                "stale",
                path,
                _key_line(note, "last_updated"),
                f"not updated for {(ctx.now - updated).days} days (> {pruning.stale_days}); review it (never auto-archived)",
            )
        )
    if data.get("core") is True:
        reason = None
        kind = kind_of_path(path)
        if status in ("archived", "completed"):
            reason = f"status is {status}"
        elif kind is not None and kind.name == "person":
            contact = _as_date(data.get("last_contact"))
            if contact and (ctx.now - contact).days > ctx.program.core.quiet_days:
                reason = f"last contact {(ctx.now - contact).days} days ago (> {ctx.program.core.quiet_days})"
        elif kind is not None and kind.name == "research":
            reason = "research references stay core: false"
        if reason:
            out.append(Finding("core_review", path, _key_line(note, "core"), f"core: true but {reason}; consider core: false"))
    return out


def _recently_referenced(state: VaultState, path: str, now: dt.date, days: int) -> bool:
    """PROGRAM.md: "not referenced or updated in 90 days". A link or entity ref from a note
    updated within the window counts as a reference (daily notes count by their date)."""
    for source in state.incoming.get(path, {}):
        note = state.notes.get(source)
        if note is None:
            continue
        data = note.frontmatter or {}
        when = _as_date(data.get("last_updated")) or _as_date(data.get("created")) or _as_date(data.get("date"))
        if when is None:
            when = _as_date(note.stem[:10])  # daily/2026-11-30.md and research/2026-11-05-x.md
        if when is not None and (now - when).days <= days:
            return True
    return False


def _link_findings(state: VaultState, note: Note, fixable: bool) -> list[Finding]:
    out = []
    path = note.path
    for link, target in zip(note.links, state.resolved.get(note.path) or []):
        written = link.target + (f"#{link.subpath}" if link.subpath else "")
        if target is None:
            label = state.label_target(link) if link.kind in ("wiki", "embed", "property") else None
            if label is not None:
                stem = label.rsplit("/", 1)[-1][:-3]
                out.append(
                    Finding(
                        "unresolvable_label",
                        path,
                        link.line,
                        f"[[{written}]] does not resolve in Obsidian (aliases and titles are not link targets); write [[{stem}|{link.display or link.target}]]",
                        column=link.column,
                        target=written,
                        fixable=fixable and link.kind != "property",
                        extra={"suggestion": label},
                    )
                )
            else:
                out.append(
                    Finding(
                        "broken_link",
                        path,
                        link.line,
                        f"link target '{link.target}' does not exist; create it, or run palinode-vault repair to pick an existing note",
                        column=link.column,
                        target=written,
                    )
                )
            continue
        if link.subpath and target in state.notes:
            t = state.notes[target]
            if not anchor_exists(link.subpath, t.headings, t.block_ids, t.text_hash):
                what = "block" if link.subpath.startswith("^") else "heading"
                out.append(
                    Finding(
                        "broken_anchor",
                        path,
                        link.line,
                        f"{target} has no {what} '{link.subpath}'",
                        column=link.column,
                        target=written,
                    )
                )
    return out


# --- the whole vault ------------------------------------------------------------------------


def is_orphan(state: VaultState, path: str) -> bool:
    """No links in or out: no links or entities of its own, and nobody links to it or lists it."""
    note = state.notes.get(path)
    if note is None or note.links or entity_entries(note):
        return False
    return not any(src != path for src in state.incoming.get(path, {}))


def orphans(state: VaultState) -> list[str]:
    """Notes with no links in or out (body, embeds, properties and entities all count)."""
    return sorted(p for p in state.notes if is_orphan(state, p))


def lint_vault(
    state: VaultState, ctx: LintContext, analysis: Analysis | None = None, paths: Iterable[str] | None = None
) -> list[Finding]:
    """All findings, or those of some notes; sorted by path and line."""
    analysis = analysis_for(state, analysis)
    wanted = set(paths) if paths is not None else None
    out: list[Finding] = []
    for path in sorted(set(state.notes) | set(state.unreadable)):
        if wanted is None or path in wanted:
            out.extend(lint_note(state, path, ctx, analysis))
    out.sort(key=lambda f: (f.path, f.line, f.check))
    return out


def counts(findings: Iterable[Finding]) -> dict[str, int]:
    result: dict[str, int] = defaultdict(int)
    for f in findings:
        result[f.check] += 1
    return dict(sorted(result.items()))


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)
