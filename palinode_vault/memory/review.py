"""The person's review of `inbox/` (PROGRAM.md "Confidence"): approve or reject a waiting memory.

Approving moves the note into its type's folder and ends its review: a Decision or a
ProjectSnapshot becomes `status: active`, any other type loses `status: review`; a Decision that
waited because it would supersede another (`review_supersedes`, written by the update logic)
retires that one in the same run, as filing it would have. A PersonMemory or
ProjectSnapshot about a person or project the vault already has a note for is merged into that
note instead (the update logic adds what is new to the right section), and the inbox note is
archived as approved. One whose `review_about` is empty (the code could not read whom it is about)
is approved only with the person's `about` (or the name they wrote there): merged into that one's
note, or filed as a new note of that name. Approving with `as_type` first re-writes the note as the type the person says
it is (retype.py: the new type's keys and sections from the note's own words, the old type's own
keys such as a Decision's `review_supersedes` dropped), then files it as a note of that type.
Approving a decision with `supersedes` (the person naming the active decisions it replaces; the
review reason names the closest) retires those too, as a SUPERSEDE would have; with `keep_active`
(the person saying it replaces none of the decisions the update logic named) it retires none. A
Decision that waited on an active decision's subject, and so may replace it or add to it
(`review_may_supersede`, written by the update logic, which cannot tell the two apart), is
approved only with one of the two answers.
Rejecting archives the note in `archive/inbox/` with `status: archived` and
`archived_reason: rejected`; nothing is ever deleted. Each is one journaled run that `undo`
reverts, and one line of `logs/operations.jsonl` (APPROVE or REJECT).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from palinode_vault.core.entities import canonical_ref, entity_refs, ref_of_path, slugify
from palinode_vault.kinds import BY_NAME, INBOX_FOLDER, MEMORY_TYPES, TYPE_KIND, memory_type, type_named
from palinode_vault.memory.retype import STATEMENT_SECTIONS, retype
from palinode_vault.memory.update.logic import Item, Updater, memory_path, retire_superseded, similar_for
from palinode_vault.memory.update.statements import plain
from palinode_vault.memory.update.workspace import (
    Workspace,
    body_of,
    frontmatter_of,
    now_utc,
    section_bounds,
    set_keys,
    without_key,
)
from palinode_vault.memory.weekly.corrections import review_label
from palinode_vault.memory.weekly.oplog import Operation
from palinode_vault.pathsafe import PathOutsideVault, vault_relative
from palinode_vault.program import load_program
from palinode_vault.vault import Vault

ARCHIVE = f"archive/{INBOX_FOLDER}"


class ReviewError(ValueError):
    """The path is not an inbox note waiting for review; the message says which and why."""


@dataclass
class Reviewed:
    path: str  # where the note is now (or the note it was merged into)
    written: list[str] = field(default_factory=list)
    run: str | None = None
    conflicts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "written": self.written, "run": self.run}


def _number(value: Any) -> float | None:
    """A frontmatter value as a number, or None (a hand-edited `confidence: high` is not one)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def waiting(vault: Vault) -> list[dict[str, Any]]:
    """The inbox notes waiting for review, oldest first."""
    if not vault.loaded:
        vault.load()
    out = []
    for path, note in vault.state.notes.items():
        data = note.frontmatter or {}
        if path.startswith(INBOX_FOLDER + "/") and path.count("/") == 1 and str(data.get("status")) == "review":
            since = str(data.get("last_updated") or data.get("created") or "")[:10]
            out.append(
                {
                    "path": path,
                    "title": note.title,
                    "type": memory_type(data) or "Insight",
                    "confidence": _number(data.get("confidence")),
                    "since": since,
                    # a person or project memory naming nobody: approving it needs who or what (--about)
                    "needs_about": "review_about" in data and not str(data.get("review_about") or "").strip(),
                    # a decision that may replace these or add to them: approving it needs which
                    "may_replace": _decision_paths(data.get("review_may_supersede")),
                }
            )
    return sorted(out, key=lambda x: (x["since"], x["path"]))


def _decision_paths(value: Any) -> list[str]:
    """A frontmatter list of decision notes (`decisions/x.md`), anything else in it left out
    (numbers, nulls, blanks, paths elsewhere or escaping the vault: a hand edit or a hostile note
    asks nothing about them; approving with `supersedes` checks the decision named)."""
    folder = BY_NAME["decision"].folder + "/"
    if not isinstance(value, list):
        return []
    return [
        x
        for x in value
        if isinstance(x, str)
        and x.startswith(folder)
        and x.count("/") == 1
        and x.endswith(".md")
        and ".." not in x
        and "\\" not in x
    ]


def _checked_note(ws: Workspace, path: str, folder: str, status: str, what: str) -> tuple[str, dict[str, Any]]:
    """The text and frontmatter of the note `path` directly in `folder` with `status`, or a
    ReviewError saying why not. Symlinks resolved: through a symlinked folder an approval would
    move, retire or delete a file outside the vault."""
    if not path.startswith(folder + "/") or path.count("/") != 1 or not path.endswith(".md"):
        raise ReviewError(f"{path} is not a note in {folder}/")
    try:
        vault_relative(ws.root, path)
    except PathOutsideVault as exc:
        raise ReviewError(f"{path}: {exc.reason}") from None
    if (ws.root / path).is_symlink():
        raise ReviewError(f"{path} is a symlink; name the note it points to")
    text = ws.text(path)
    if text is None:
        raise ReviewError(f"{path} does not exist")
    data = frontmatter_of(text)
    if str(data.get("status")) != status:
        raise ReviewError(f"{path} is not {what} (its status is {data.get('status')!r}, not {status!r})")
    return text, data


def _waiting_note(ws: Workspace, path: str) -> tuple[str, dict[str, Any]]:
    return _checked_note(ws, path, INBOX_FOLDER, "review", "waiting for review")


def _archive(ws: Workspace, path: str, text: str, reason: str, why: str) -> str:
    dst = f"{ARCHIVE}/{path.split('/', 1)[1]}"
    n = 2
    while ws.exists(dst):
        dst, n = f"{ARCHIVE}/{path.split('/', 1)[1][:-3]}-{n}.md", n + 1
    ws.move(path, dst, why, text=set_keys(text, {"status": "archived", "archived_reason": reason}))
    return dst


def _statement(text: str, type_name: str) -> str:
    """The words an inbox PersonMemory/ProjectSnapshot holds: its first section's text, links as
    their text (the update links the names again where they belong)."""
    bounds = section_bounds(text, STATEMENT_SECTIONS[type_name][0])
    words = text[bounds[0] : bounds[1]] if bounds else body_of(text)
    words = re.sub(r"^#+ .*$", "", words, flags=re.M)
    return " ".join(plain(words).split())


def memory_type_named(name: str) -> str:
    """The memory type `name` names (ignoring case; a kind's name too), or a ReviewError listing them."""
    found = type_named(name)
    if found is None:
        raise ReviewError(f"{name!r} is not a memory type; approve it as one of {', '.join(MEMORY_TYPES)}")
    return found


#: the longest name a person may give as who or what a memory is about
ABOUT_MAX = 120


def _checked_about(path: str, value: Any, given: str) -> str:
    """`value` (the `about` given, or the note's own `review_about`) as a name, stripped; "" for
    none; a ReviewError for what cannot name a note."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ReviewError(f"{path}: review_about must be a name (text), not {type(value).__name__}")
    name = " ".join(value.split())
    if len(name) > ABOUT_MAX or any(ord(c) < 32 or c in "[]|#^" for c in value if c not in "\t\n"):
        raise ReviewError(f"{path}: {given} {value[:60]!r} cannot name a note (at most {ABOUT_MAX} characters, no [ ] | # ^)")
    if name and not slugify(name.rsplit("/", 1)[-1].removesuffix(".md")):
        raise ReviewError(f"{path}: {given} {name!r} has no letters or digits to name a note by")
    return name


def _about_target(ws: Workspace, updater: Updater, kind: str, name: str) -> tuple[str | None, str]:
    """(the existing person or project note `name` says, its display name): a vault path in the
    kind's folder, an entity ref (`person/x`), or a name, slug or alias; (None, name) for a new one."""
    folder = BY_NAME[kind].folder
    if "/" in name or name.endswith(".md"):  # a note or a ref, never a new name: names hold no "/"
        ref = canonical_ref(name) if name.startswith(kind + "/") else None
        path = ws.vault.state.entity_path(ref) if ref else name if name.endswith(".md") else f"{name}.md"
        if not path or not path.startswith(folder + "/") or path.count("/") != 1 or not ws.exists(path):
            raise ReviewError(f"{name} is no note in {folder}/; name the {kind} by its note or by a new name")
        if (ws.root / path).is_symlink():  # a write through it would land outside the vault
            raise ReviewError(f"{path} is a symlink; name the note it points to")
    else:
        path = updater.find_entity_file(kind, name, []) or ""
    if not path:
        return None, name
    data = frontmatter_of(ws.text(path) or "")
    return path, str(data.get("name") or path.rsplit("/", 1)[1][:-3])


def approve(
    vault: Vault,
    path: str,
    now: dt.datetime | None = None,
    as_type: str | None = None,
    supersedes: Sequence[str] = (),
    keep_active: bool = False,
    about: str | None = None,
) -> Reviewed:
    """Accept the inbox note `path` as a memory (see the module docstring); `as_type`: the memory
    type the person says it is, when the one it waits as is wrong; `supersedes`: the active
    decisions (vault paths) the person says this decision replaces, retired in the same run;
    `keep_active`: the person says it replaces none of the decisions it names (`review_supersedes`,
    `supersedes`): they stay active; `about`: who or what a person or project memory is about (a
    note of theirs, by path, ref or name, or a new name), which one whose `review_about` is empty
    needs (or the person writes it there)."""
    now = now or dt.datetime.now(dt.UTC)
    wanted = memory_type_named(as_type) if as_type is not None else None
    if not vault.loaded:
        vault.load()
    ws = Workspace(vault, extra_folders=frozenset({"archive"}))
    text, data = _waiting_note(ws, path)
    type_name = memory_type(data) or "Insight"
    retyped = ""
    if wanted is not None and wanted != type_name:
        text = retype(vault, path, text, type_name, wanted, now)
        data = frontmatter_of(text)
        retyped = f"; its type changed from {type_name} to {wanted} by the person"
        type_name = wanted
    asked = _decision_paths(data.get("review_may_supersede")) if type_name == "Decision" else []
    if asked and not supersedes and not keep_active:
        raise ReviewError(
            f"{path} may replace {', '.join(asked)} or add to it: say which (inbox approve NOTE --supersedes "
            f"{asked[0]} if it replaces it, --keep-active if it adds to it)"
        )
    if keep_active and type_name == "Decision":  # it replaces nothing it names: only what the person names below
        text = without_key(set_keys(text, {"supersedes": []}), "review_supersedes")
        data = frontmatter_of(text)
    if supersedes:
        if type_name != "Decision":
            raise ReviewError(f"{path} is a {type_name}: only a decision supersedes a decision (approve it --as Decision)")
        ids = [_active_decision_id(ws, old) for old in dict.fromkeys(supersedes)]
        listed = data.get("supersedes")
        before = [x for x in listed if isinstance(x, str) and x] if isinstance(listed, list) else []
        named = data.get("review_supersedes")
        waiting = [x for x in named if isinstance(x, str)] if isinstance(named, list) else []
        text = set_keys(
            text,
            {
                "supersedes": list(dict.fromkeys([*before, *ids])),
                "review_supersedes": list(dict.fromkeys([*waiting, *supersedes])),
            },
        )
        data = frontmatter_of(text)
    kind = TYPE_KIND[type_name]
    stamp = now_utc(now)
    said_about = _checked_about(path, about, "about") if about is not None else ""
    said_about = said_about or _checked_about(path, data.get("review_about"), "review_about")
    if about is not None and kind not in ("person", "project"):
        raise ReviewError(
            f"{path} is a {type_name}: only a person or project memory is about someone (approve it --as PersonMemory)"
        )
    if kind in ("person", "project") and "review_about" in data and not said_about:
        raise ReviewError(
            f"{path} names no {kind} the vault knows: say who or what it is about (inbox approve NOTE --about NAME, "
            "or write the name in its review_about), or approve it --as Insight"
        )
    named_path = ""  # a new person or project the person named: this note, filed under that name
    if kind in ("person", "project"):
        program = load_program(vault.root)
        updater = Updater(vault, ws, program.settings, similar_for(vault)[0], "review", now)
        refs = [(r, "") for r in entity_refs(data)]  # odd items (numbers, nulls) name no entity
        if said_about:
            target, name = _about_target(ws, updater, kind, said_about)
            # the note's other people or projects stay mentioned, but the first of its kind is who
            # it is about (the update logic takes that one): the one the person named
            refs = ([(ref_of_path(target) or "", name)] if target else []) + [r for r in refs if not r[0].startswith(kind + "/")]
            retyped = f" as about {name}{retyped}"
        else:
            heading = re.search(r"^# +(.+)$", body_of(text), re.M)  # the file on disk, whatever the watcher has seen
            name = str(data.get("name") or (heading.group(1).strip() if heading else path.rsplit("/", 1)[1][:-3]))
            target = updater.find_entity_file(kind, name, refs)
        if target is not None and target != path:
            outcome = updater.apply(Item(type_name, name, _statement(text, type_name), 1.0, refs))
            dst = _archive(ws, path, text, "approved", f"approved: merged into {target}")
            ws.log(
                Operation(
                    "APPROVE",
                    type_name,
                    target,
                    None,
                    "review",
                    f"{path} approved: {outcome.op} of {target}; the inbox note is archived as {dst}{retyped}",
                )
            )
            return _commit(ws, target, review_label("approve", path))
        if said_about:  # a new one: every word of this note kept, under the name the person gave
            text = _named_after(text, name)
            named_path = updater.free_path(type_name, name, inbox=False)
    folder_path = named_path or memory_path(type_name, path.split("/", 1)[1][:-3], now.date())
    dst, n = folder_path, 2
    while ws.exists(dst):
        dst, n = f"{folder_path[:-3]}-{n}.md", n + 1
    slug = re.sub(r"^\d{4}-\d{2}-\d{2}-", "", dst.rsplit("/", 1)[1][:-3]) if kind == "research" else dst.rsplit("/", 1)[1][:-3]
    keys = {"id": f"{kind}-{slug}", "last_updated": stamp}  # the id follows the name (x-2 when x is taken)
    for key in ("review_reason", "review_supersedes", "review_may_supersede", "review_about"):  # answered by the approval
        text = without_key(text, key)
    retired = _retire_replaced(ws, data, keys["id"], stamp) if type_name == "Decision" else []
    if type_name in ("Decision", "ProjectSnapshot"):
        new = set_keys(text, {**keys, "status": "active"})
    else:
        new = set_keys(without_key(text, "status"), keys)
    ws.move(path, dst, f"approved from {path}", text=new)
    also = f"; superseded {', '.join(retired)}" if retired else ""
    ws.log(
        Operation("APPROVE", type_name, dst, data.get("confidence"), "review", f"{path} approved by the person{retyped}{also}")
    )
    return _commit(ws, dst, review_label("approve", path))


def _named_after(text: str, name: str) -> str:
    """The note as one about `name`: its `name:` and its title (the first `# ` heading)."""
    text = set_keys(text, {"name": name})
    body = body_of(text)
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)  # the title
    if at is not None:
        lines[at] = f"# {name}"
    return text[: len(text) - len(body)] + "\n".join(lines)


def _active_decision_id(ws: Workspace, old: str) -> str:
    """The id of the active decision `old` the person names as replaced, or a ReviewError saying
    why it cannot be (not in decisions/, a symlink, missing, not active, no id)."""
    _, data = _checked_note(ws, old, BY_NAME["decision"].folder, "active", "an active decision")
    old_id = data.get("id")
    if not isinstance(old_id, str) or not old_id:
        raise ReviewError(f"{old} has no id to record in supersedes; give it one (palinode-vault fix)")
    return old_id


def _retire_replaced(ws: Workspace, data: dict[str, Any], new_id: str, stamp: str) -> list[str]:
    """Archive the active decisions an approved decision replaces, as filing it would have
    (`status: archived`, `superseded_by`): the notes named in `review_supersedes` (written by the
    update logic) whose id the decision's `supersedes` lists, else the one active decision each
    `supersedes` id belongs to. A path outside decisions/, a note that is not active, or an id
    that more than one note has (a hand-kept vault may repeat one) is left alone."""
    folder = BY_NAME["decision"].folder + "/"
    listed, named = data.get("supersedes"), data.get("review_supersedes")
    ids = {x for x in listed if isinstance(x, str) and x} if isinstance(listed, list) else set()
    paths = [x for x in named if isinstance(x, str)] if isinstance(named, list) else []
    if not paths:  # an older inbox note: the decision each id belongs to, where only one has it
        by_id: dict[str, list[str]] = {}
        for p, note in sorted(ws.vault.state.notes.items()):
            if p.startswith(folder) and p.count("/") == 1:
                by_id.setdefault(str((note.frontmatter or {}).get("id") or ""), []).append(p)
        paths = [by_id[i][0] for i in sorted(ids) if len(by_id.get(i, [])) == 1]
    retired = []
    for old in dict.fromkeys(paths):
        if not old.startswith(folder) or old.count("/") != 1 or not old.endswith(".md"):
            continue
        try:
            vault_relative(ws.root, old)
        except PathOutsideVault:
            continue
        old_text = ws.text(old)
        old_data = frontmatter_of(old_text or "")
        if old_text is None or (ws.root / old).is_symlink() or str(old_data.get("status")) != "active":
            continue
        if str(old_data.get("id") or "") not in ids:
            continue
        retire_superseded(ws, old, old_text, new_id, stamp)
        retired.append(old)
    return retired


def reject(vault: Vault, path: str, now: dt.datetime | None = None) -> Reviewed:
    """Archive the inbox note `path`: the person does not want it remembered."""
    if not vault.loaded:
        vault.load()
    ws = Workspace(vault, extra_folders=frozenset({"archive"}))
    text, data = _waiting_note(ws, path)
    dst = _archive(ws, path, set_keys(text, {"last_updated": now_utc(now)}), "rejected", "rejected by the person")
    ws.log(
        Operation(
            "REJECT",
            memory_type(data) or "",
            dst,
            data.get("confidence"),
            "review",
            f"{path} rejected by the person; archived, never deleted",
        )
    )
    return _commit(ws, dst, review_label("reject", path))


def _commit(ws: Workspace, path: str, label: str) -> Reviewed:
    written, conflicts, run = ws.commit(label)
    return Reviewed(path, written, run, conflicts)
