"""A pass's pending edits: section-level text changes, wiki-contract finishing, one journaled Run.

Every pass (extraction, session end, consolidation) collects its changes here first. `finish`
runs the vault core's fix plan over every touched memory file (entities and body links in the
same edit, the auto-footer, `cross_refs:`), `diffs` shows what would change, and `commit` writes
it all as one `Run` (created files, moved files and the operations log included) so that
`palinode-vault undo` reverts the pass whole.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import re
from dataclasses import dataclass
from typing import Any

from palinode_vault.core import frontmatter as fm
from palinode_vault.core.fix import apply_to_text, plan_fix
from palinode_vault.core.lint import analysis_for
from palinode_vault.core.note import parse_note
from palinode_vault.core.text import Span, apply_spans, normalise, sha256_text
from palinode_vault.kinds import MEMORY_FOLDERS, is_memory_path, top_folder
from palinode_vault.maintenance import note_diff
from palinode_vault.memory.weekly.oplog import LOG_PATH, Operation, append_edit
from palinode_vault.vault import NoteText, Vault
from palinode_vault.writer import Edit, Run, sha256_bytes

PROGRAM_FILE = "PROGRAM.md"


class UnsafePath(ValueError):
    """A pass tried to write outside the folders it may write (never the model's choice)."""


def check_writable(path: str, extra_folders: frozenset[str] = frozenset()) -> str:
    """`path` if a pass may write it: a memory folder (or `extra_folders`), never PROGRAM.md."""
    parts = path.split("/")
    if (
        not path
        or path.startswith("/")
        or any(p in ("", ".", "..") or p.startswith(".") for p in parts)
        or path == PROGRAM_FILE
        or parts[-1].lower() == "program.md"
    ):
        raise UnsafePath(f"refusing to write {path!r}")
    if top_folder(path) not in MEMORY_FOLDERS | extra_folders:
        raise UnsafePath(f"refusing to write {path!r}: outside the memory folders")
    return path


@dataclass
class Pending:
    path: str
    before: bytes | None  # bytes on disk when first read (None: new file)
    raw: str | None  # raw text before (for mapping edits back byte-exactly)
    shape: Any
    old_text: str | None  # normalised text before
    text: str | None  # normalised text now (None: deleted)
    reasons: list[str]
    raw_bytes: bytes | None = None  # exact bytes for a moved file (set by `move`)


def now_utc(now: dt.datetime | None = None) -> str:
    value = now or dt.datetime.now(dt.UTC)
    return value.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Workspace:
    """Pending changes to one vault, applied together."""

    def __init__(self, vault: Vault, extra_folders: frozenset[str] = frozenset()):
        self.vault = vault
        self.root = vault.root
        self.extra = extra_folders
        self.pending: dict[str, Pending] = {}
        self.ops: list[Operation] = []
        self.finished = False

    # --- reading ---------------------------------------------------------------------------

    def _load(self, path: str) -> Pending:
        if path not in self.pending:
            full = self.root / path
            if full.is_file():
                read = self.vault.read(path)
                if not isinstance(read, NoteText):
                    raise UnsafePath(f"{path} cannot be read: {read.message}")
                self.pending[path] = Pending(path, read.raw_bytes, read.raw, read.shape, read.text, read.text, [])
            else:
                self.pending[path] = Pending(path, None, None, None, None, None, [])
        return self.pending[path]

    def text(self, path: str) -> str | None:
        """The note's normalised text as this pass sees it (None: does not exist)."""
        return self._load(path).text

    def exists(self, path: str) -> bool:
        return self.text(path) is not None

    # --- changing --------------------------------------------------------------------------

    def put(self, path: str, text: str, reason: str, allow: frozenset[str] = frozenset()) -> None:
        check_writable(path, self.extra | allow)
        item = self._load(path)
        item.text = text
        item.reasons.append(reason)
        self.finished = False

    def delete(self, path: str, reason: str, allow: frozenset[str] = frozenset()) -> None:
        check_writable(path, self.extra | allow)
        item = self._load(path)
        item.text = None
        item.reasons.append(reason)
        self.finished = False

    def move(self, src: str, dst: str, reason: str, allow: frozenset[str] = frozenset(), text: str | None = None) -> None:
        """Stage a move: `dst` gets `src`'s bytes (or `text`), `src` is removed; undo restores both."""
        item = self._load(src)
        if item.text is None:
            raise UnsafePath(f"{src} does not exist")
        if self.exists(dst):
            raise UnsafePath(f"{dst} exists already; not overwritten")
        self.put(dst, text if text is not None else item.text, reason, allow)
        if text is None and item.before is not None and item.text == item.old_text:
            self.pending[dst].raw_bytes = item.before
        self.delete(src, reason, allow)

    def log(self, op: Operation) -> None:
        self.ops.append(op)

    def changed(self) -> list[str]:
        return sorted(p for p, item in self.pending.items() if item.text != item.old_text)

    # --- the wiki contract -----------------------------------------------------------------

    def finish(self) -> None:
        """Bring every touched memory file in line with the wiki contract (in memory)."""
        state = self.vault.state
        for path in self.changed():
            item = self.pending[path]
            if item.text is None:
                state.remove(path)
            else:
                state.upsert_note(parse_note(path, item.text, sha256_text(item.text)))
        analysis = analysis_for(state)
        for path in self.changed():
            item = self.pending[path]
            if item.text is None or not is_memory_path(path):
                continue
            note = state.notes[path]
            plan = plan_fix(state, note, item.text, analysis)
            if plan.spans:
                item.text = apply_to_text(item.text, plan.spans)
                state.upsert_note(parse_note(path, item.text, sha256_text(item.text)))
        self.finished = True

    def restore(self) -> None:
        """Make the vault's in-memory state match the disk again (after a dry run)."""
        touched = set(self.pending)
        if touched:
            self.vault.refresh(touched)

    # --- output ----------------------------------------------------------------------------

    def _new_bytes(self, item: Pending) -> bytes | None:
        if item.text is None:
            return None
        if item.raw_bytes is not None:
            return item.raw_bytes
        if item.raw is None:
            return item.text.encode("utf-8")
        old = item.old_text or ""
        new = item.text
        start = 0
        limit = min(len(old), len(new))
        while start < limit and old[start] == new[start]:
            start += 1
        end_old, end_new = len(old), len(new)
        while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
            end_old -= 1
            end_new -= 1
        raw = apply_spans(item.raw, item.shape, [Span(start, end_old, new[start:end_new])])
        return raw.encode("utf-8")

    def diffs(self) -> dict[str, str]:
        if not self.finished:
            self.finish()
        out = {}
        for path in self.changed():
            item = self.pending[path]
            new = self._new_bytes(item)
            out[path] = note_diff(path, item.raw or "", new.decode("utf-8") if new is not None else "")
        return out

    def commit(self, label: str) -> tuple[list[str], list[str], str | None]:
        """Write everything as one journaled run: (written paths, conflicts, run id)."""
        if not self.finished:
            self.finish()
        run = Run(self.root, label)
        conflicts: list[str] = []
        for path in self.changed():
            item = self.pending[path]
            new = self._new_bytes(item)
            reason = "; ".join(item.reasons)[:500]
            if new is None:
                if not delete_journaled(run, path, item.before, reason):
                    conflicts.append(path)
            elif not run.write(Edit(path, sha256_bytes(item.before), new, reason)):
                conflicts.append(path)
        log_edit = append_edit(self.root, self.ops)
        if log_edit is not None and not run.write(log_edit):
            conflicts.append(LOG_PATH)
        touched = set(self.pending) | ({LOG_PATH} if log_edit else set())
        self.vault.refresh(touched)
        return sorted(run.written), conflicts, (run.id if run.written else None)


def delete_journaled(run: Run, path: str, before: bytes | None, reason: str) -> bool:
    """Remove a file inside a journaled run so that `undo` puts it back.

    The journal entry records the old bytes and `after_hash: null`; `writer.undo_last` restores
    any entry whose file is in its after-state, and a missing file is the after-state of a
    delete. (Run has no delete of its own yet; this uses its journal format as documented.)
    """
    full = run.root / path
    current = full.read_bytes() if full.is_file() else None
    if current is None or sha256_bytes(current) != sha256_bytes(before):
        run.conflicts.append(path)
        return False
    run._append(
        {  # noqa: SLF001 - same record format as Run.write
            "path": path,
            "before": base64.b64encode(current).decode("ascii"),
            "before_hash": sha256_bytes(current),
            "after_hash": None,
            "reason": reason,
        }
    )
    os.unlink(full)
    run.written.append(path)
    return True


# --- section and frontmatter editing on normalised text ----------------------------------------

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$", re.M)
FOOTER_MARK = "<!-- palinode:see-also -->"


def section_bounds(text: str, heading: str) -> tuple[int, int] | None:
    """(content start, content end) of the `## heading` section, or None."""
    for m in _HEADING.finditer(text):
        if len(m.group(1)) == 2 and m.group(2).strip().lower() == heading.lower():
            start = text.find("\n", m.end())
            start = len(text) if start == -1 else start + 1
            end = len(text)
            for n in _HEADING.finditer(text, start):
                if len(n.group(1)) <= 2:
                    end = n.start()
                    break
            footer = text.find(FOOTER_MARK, start)
            if footer != -1 and footer < end:
                end = footer
            return start, end
    return None


def _body_end(text: str) -> int:
    footer = text.find(FOOTER_MARK)
    return footer if footer != -1 else len(text)


def append_to_section(text: str, heading: str, lines: list[str]) -> str:
    """Add lines at the end of a `## heading` section (created before the footer if missing)."""
    if not lines:
        return text
    block = "".join(line.rstrip("\n") + "\n" for line in lines)
    bounds = section_bounds(text, heading)
    if bounds is None:
        at = _body_end(text)
        before = text[:at]
        sep = "" if before.endswith("\n\n") or not before else ("\n" if before.endswith("\n") else "\n\n")
        after = text[at:]
        return before + sep + f"## {heading}\n" + block + ("\n" if after else "") + after
    start, end = bounds
    content = text[start:end]
    stripped = content.rstrip("\n")
    trailing = content[len(stripped) :]
    if not stripped.strip():
        return text[:start] + block + (trailing if trailing else "") + text[end:]
    return text[:start] + stripped + "\n" + block + (trailing[1:] if trailing.startswith("\n") else trailing) + text[end:]


def replace_section(text: str, heading: str, lines: list[str]) -> str:
    """Replace the content of a `## heading` section (created if missing)."""
    bounds = section_bounds(text, heading)
    if bounds is None:
        return append_to_section(text, heading, lines)
    start, end = bounds
    content = text[start:end]
    trailing = "\n" if content.endswith("\n\n") or end < len(text) and text[end:].startswith("#") else ""
    return text[:start] + "".join(line + "\n" for line in lines) + trailing + text[end:]


def set_keys(text: str, values: dict[str, Any]) -> str:
    """Set top-level frontmatter keys one span at a time (other keys stay byte for byte)."""
    for key, value in values.items():
        block = fm.find_block(text)
        if block is None:
            raise ValueError("no frontmatter")
        span = fm.set_key(text, block, key, value)
        new = span.new
        if isinstance(value, str) and _STAMP.fullmatch(value):
            new = new.replace(f'"{value}"', value)  # timestamps plain, as PROGRAM.md writes them
        text = text[: span.start] + new + text[span.end :]
    return text


def without_key(text: str, key: str) -> str:
    """The text with one top-level frontmatter key and its lines removed (others byte for byte)."""
    block = fm.find_block(text)
    span = fm.key_spans(text, block).get(key) if block else None
    return text if span is None else text[: span.start] + text[span.end :]


def frontmatter_of(text: str) -> dict[str, Any]:
    block = fm.find_block(text)
    if block is None:
        return {}
    data, error = fm.parse(text, block)
    return data or {} if error is None else {}


def body_of(text: str) -> str:
    block = fm.find_block(text)
    return text[block.end :] if block else text


def normalised(raw: str) -> str:
    return normalise(raw)[0]
