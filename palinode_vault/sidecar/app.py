"""The sidecar's state machine: findings kept current, automatic fixes, renames, editor safety.

Rules it keeps (issue #3, PROGRAM.md):
- It writes on its own only machine-owned surfaces (the See also footer, `cross_refs:`) and
  entity refs after a rename, and only in memory-tier files. Everything else is a finding.
- It never races the editor: a file changed less than `quiet_seconds` ago is left alone until
  quiet; a file open in Obsidian is edited through the plugin (`apply_edit`) or after it closes.
- Its own writes never start another round: it remembers the bytes it wrote and recognises them
  when the watcher reports them.
- All vault work runs under one lock in a worker thread, so the socket stays responsive.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import heapq
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from palinode_vault.core import frontmatter as fm
from palinode_vault.core.entities import canonical_ref, expected_id, ref_of_path
from palinode_vault.core.findings import Finding
from palinode_vault.core.fix import CROSS_REFS, FOOTER, fixable, plan_fix
from palinode_vault.core.lint import Analysis, analysis_for, lint_note
from palinode_vault.core.note import parse_note
from palinode_vault.core.text import apply_spans, normalise, sha256_text
from palinode_vault.core.vault_state import entity_entries
from palinode_vault.kinds import is_memory_path
from palinode_vault.maintenance import lint_context, memory_file_count, odd_entities
from palinode_vault.settings import Settings
from palinode_vault.vault import NoteText, Vault, is_note
from palinode_vault.writer import (
    UPKEEP_LABEL,
    Edit,
    Run,
    clean_temp_files,
    listen_for_writes,
    recently_undone,
    sha256_bytes,
    sha256_of,
)

log = logging.getLogger(__name__)


@dataclass
class EditorState:
    active: str | None = None
    open: set[str] = field(default_factory=set)
    last_keystroke: float | None = None  # time.time() seconds
    connection: Any = None  # the plugin connection that reported it (for apply_edit)


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@dataclass
class PlannedEdit:
    edit: Edit
    new_text: str  # normalised text after the edit (what the plugin would write)
    old_text_hash: str  # hash of the normalised text the edit was computed from
    reasons: list[str]
    old_bytes: bytes = b""  # the file as read when planned (journaled if the plugin applies it)


class Sidecar:
    """One vault, watched and served. Create, `await start()`, and let the server call in."""

    def __init__(self, settings: Settings, notify: Callable[[str, dict], Any] | None = None):
        self.settings = settings
        self.vault = Vault(settings)
        self.root = self.vault.root
        self.notify = notify or (lambda method, params: None)
        self.lock = asyncio.Lock()
        self.findings: dict[str, list[Finding]] = {}
        self._by_check: dict[str, int] = {}  # findings per check, kept with `findings` (status reads it)
        self.analysis: Analysis | None = None
        self.editors: dict[int, EditorState] = {}  # per connection: one client never clears another's
        self.changed_at: dict[str, float] = {}  # path -> monotonic time of the last outside change
        self.due: dict[str, float] = {}  # path -> monotonic time its automatic fix may run
        self.own_writes: dict[str, str] = {}  # path -> sha256 of the bytes we last wrote
        self._stop_listening: Callable[[], None] | None = None
        self.write_failures: dict[str, str] = {}  # path -> why the last automatic fix could not write it
        self.held: dict[str, str | None] = {}  # path -> hash an undo restored; left alone until it changes
        self.ref_renames: dict[str, str] = {}  # old entity ref -> new one
        # old entity ref -> the notes that used it when it was renamed; a rename is applied only
        # to them and forgotten once they are done (a new note under the old name is not touched)
        self.rename_users: dict[str, set[str]] = {}
        self.id_renames: dict[str, str] = {}  # old memory id -> new one
        self.last_write: dict[str, Any] | None = None
        self.last_error: str | None = None
        self.busy: str | None = None
        self.writes = 0
        self._wake = asyncio.Event()
        self.ready = asyncio.Event()  # set once the first scan is done
        self._tasks: list[asyncio.Task] = []
        self.request_edit: Callable[[Any, dict], Any] | None = None  # set by the server wiring
        self.index_worker: Any = None  # the search index's background updater (see _start_index)
        self.index_error: str | None = None

    # --- running vault work ------------------------------------------------------------------

    async def run(self, func: Callable, *args: Any) -> Any:
        """Run vault work in a thread, one piece at a time."""
        async with self.lock:
            return await asyncio.to_thread(func, *args)

    async def start(self) -> None:
        """Clean up after a crash, load the vault, compute findings, start the fix scheduler."""
        self._stop_listening = listen_for_writes(self.root, self._heard_write)
        removed = clean_temp_files(self.root)
        if removed:
            log.warning("removed %d temp files left by an interrupted write", len(removed))
        self.busy = "scan"

        def progress(phase: str, done: int, total: int) -> None:
            self.notify("progress", {"phase": phase, "done": done, "total": total})

        await self.run(self.vault.load, progress)
        await self.run(self._recheck_all)
        self.busy = None
        self.notify("findings.changed", self._findings_event(list(self.findings)))
        # Bring machine-owned surfaces up to date, leaving recently changed files alone.
        now = time.monotonic()
        wall = time.time()
        for path in self._machine_fix_candidates():
            stat = self.vault.stats.get(path)
            age = wall - stat.mtime_ns / 1e9 if stat else 1e9
            self.due[path] = now + max(0.0, self.settings.quiet_seconds - age)
        self._tasks.append(asyncio.create_task(self._fix_scheduler(), name="palinode-fix-scheduler"))
        if os.environ.get("PALINODE_WEEKLY_CONSOLIDATION", "1") != "0":  # PROGRAM.md's weekday, Sunday by default
            from palinode_vault.sidecar.memory_methods import weekly_consolidation

            self._tasks.append(asyncio.create_task(weekly_consolidation(self), name="palinode-weekly-consolidation"))
        self.ready.set()
        self._wake.set()
        self._start_index()

    async def stop(self) -> None:
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None
        await self._stop_index()
        try:
            await self.run(self.vault.flush_cache)
        except Exception:  # noqa: BLE001 - the cache is derived data
            log.exception("could not save the parse cache")
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001
                pass
        self._tasks.clear()

    # --- findings ------------------------------------------------------------------------

    def _recheck_all(self) -> None:
        self.findings = {}
        self._by_check = {}
        self._recheck(set(self.vault.state.notes) | set(self.vault.state.unreadable))

    def _recheck(self, paths: set[str]) -> set[str]:
        state = self.vault.state
        before = self.analysis.generation if self.analysis else None
        self.analysis = analysis_for(state, self.analysis)
        if before is not None and before != self.analysis.generation:
            # names changed (a note came or went, a title or id changed): cross_refs and
            # duplicate ids of any memory note may differ now
            paths = paths | set(state.memory_paths())
        ctx = lint_context(self.vault)
        changed = set()
        for path in paths:
            if path in state.notes or path in state.unreadable:
                new = lint_note(state, path, ctx, self.analysis)
            else:
                new = []
            old = self.findings.get(path, [])
            for f in old:
                self._by_check[f.check] -= 1
            for f in new:
                self._by_check[f.check] = self._by_check.get(f.check, 0) + 1
            if [f.to_json() for f in new] != [f.to_json() for f in old]:
                changed.add(path)
            if new:
                self.findings[path] = new
            else:
                self.findings.pop(path, None)
        return changed

    def all_findings(self, first: int | None = None) -> list[Finding]:
        """Every finding by path, line and check (with `first`, only the first that many)."""
        return in_order([f for items in self.findings.values() for f in items], first)

    def finding_counts(self) -> tuple[dict[str, int], int]:
        """(findings by check, total), kept as findings change: this runs on the event loop, and
        one note of half a million broken links must not make it count them every time."""
        by_check = {check: n for check, n in sorted(self._by_check.items()) if n > 0}
        return by_check, sum(by_check.values())

    def _findings_event(self, paths: list[str]) -> dict[str, Any]:
        by_check, total = self.finding_counts()
        return {"paths": sorted(paths), "counts": by_check, "total": total}

    # --- changes from the watcher -----------------------------------------------------------

    async def on_changes(self, added: set[str], modified: set[str], deleted: set[str]) -> None:
        """Process one watcher batch: renames, own writes, refresh, findings, scheduling."""
        await self.ready.wait()
        delay = 0.2
        while True:
            try:
                async with self.lock:
                    # copies: an attempt cut short by EMFILE must not leave the next one less to do
                    await asyncio.to_thread(self._apply_changes, set(added), set(modified), set(deleted))
                break
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
                # Out of file descriptors (a flood of connections, another process): the person's
                # save must not be dropped. Wait and take the same batch again.
                self.last_error = f"out of file descriptors while reading changes; retrying in {delay:.1f} s"
                log.warning(self.last_error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        self._wake.set()

    def _apply_changes(self, added: set[str], modified: set[str], deleted: set[str]) -> None:
        state = self.vault.state
        # A name that is not UTF-8 is only refreshed (an `unreadable` finding under a printable
        # stand-in); it goes no further: every later step encodes paths.
        undecodable = {p for p in added | modified | deleted if not _utf8(p)}
        added, modified, deleted = added - undecodable, modified - undecodable, deleted - undecodable
        # A folder moved out of the vault (or deleted) is reported as the folder alone: its notes go too.
        gone_folders = [d for d in deleted if d not in state.notes and not (self.root / d).exists()]
        for folder in gone_folders:
            deleted |= {p for p in state.notes if p.startswith(folder + "/")}
        # Renames: a note deleted and a note added with the same text in one batch.
        renames: list[tuple[str, str]] = []
        for old in sorted(deleted):
            note = state.notes.get(old)
            if note is None:
                continue
            for new in sorted(added):
                if is_note(new) and new not in state.notes:
                    read = self.vault.read(new)
                    if isinstance(read, NoteText) and read.text_hash == note.text_hash:
                        renames.append((old, new))
                        break
        # Our own writes come back through the watcher: recognise them and do not schedule them
        # again. They are still refreshed: a write the plugin applied is not in the state yet.
        own: set[str] = set()
        for path in list(modified | added):
            expected = self.own_writes.get(path)
            if expected is None:
                continue
            try:
                current = sha256_bytes((self.root / path).read_bytes())
            except OSError:
                current = None
            if current == expected:
                modified.discard(path)
                added.discard(path)
                self.own_writes.pop(path, None)
                own.add(path)
        paths = added | modified | deleted
        if not paths and not own and not undecodable:
            return
        affected = self.vault.refresh(paths | own | undecodable, store=False)
        self._index_changed(paths | own)
        now = time.monotonic()
        wall = time.time()
        for path in added | modified:
            if is_note(path):
                # The quiet period counts from the save itself, not from when we got to it.
                stat = self.vault.stats.get(path)
                saved_ago = max(0.0, wall - stat.mtime_ns / 1e9) if stat else 0.0
                self.changed_at[path] = now - min(saved_ago, self.settings.quiet_seconds)
        # (an atomic replace, like undo's, is reported as an addition)
        restored = recently_undone(self.root) if added | modified else {}
        for path in added | modified:
            current = None
            if path in restored:
                try:
                    current = sha256_bytes((self.root / path).read_bytes())
                except OSError:
                    pass
            if current is not None and current in restored[path]:
                self.held[path] = current  # an undo put it back: do not fix it straight again
            else:
                self.held.pop(path, None)  # changed since: kept current as usual
        self._forget_renames_to({p for p in added if is_note(p)} - {new for _, new in renames})
        for old, new in renames:
            self._record_rename(old, new)
        changed = self._recheck(affected | paths)
        for path in added | modified:
            if is_memory_path(path) and path in state.notes and path not in self.held:
                self.due[path] = self.changed_at.get(path, now) + self.settings.quiet_seconds
        if changed:
            self.notify("findings.changed", self._findings_event(sorted(changed)))

    # --- renames ------------------------------------------------------------------------

    def _record_rename(self, old: str, new: str) -> int:
        """Remember that entity refs to `old` now mean `new`; schedule the notes that use them."""
        old_ref, new_ref = ref_of_path(old), ref_of_path(new)
        if not old_ref or not new_ref or old_ref == new_ref:
            return 0
        self.ref_renames[old_ref] = new_ref
        for key, value in list(self.ref_renames.items()):
            if value == old_ref:  # a -> b then b -> c: a -> c
                self.ref_renames[key] = new_ref
        old_id, new_id = expected_id(old), expected_id(new)
        if old_id and new_id:
            self.id_renames[old_id] = new_id
        now = time.monotonic()
        users = self.rename_users.setdefault(old_ref, set())
        users |= self.rename_users.pop(new_ref, set())  # a -> b then b -> c: b's users follow too
        for key, value in list(self.ref_renames.items()):
            if value == new_ref and key != old_ref:
                self.rename_users.setdefault(key, set())
        count = 0
        for path, note in self.vault.state.notes.items():
            refs = {canonical_ref(e) for e in entity_entries(note)}
            mine = path == new and (note.frontmatter or {}).get("id") == old_id
            if old_ref in refs or mine:
                count += 1
                users.add(path)
                self.due[path] = max(now, self.changed_at.get(path, 0) + self.settings.quiet_seconds)
        self._wake.set()
        return count

    def _renamed(self, path: str, entry: str) -> str:
        """`entry` as a pending rename has it, for a note that used the old name at the time."""
        ref = canonical_ref(entry) or ""
        new = self.ref_renames.get(ref)
        if new is None or path not in self.rename_users.get(ref, ()):
            return entry
        if self.vault.state.entity_path(ref) is not None:
            return entry  # the old name is a note again: the ref means that note now
        return new

    def _rename_done(self, path: str) -> None:
        """`path` is up to date with every rename: forget the renames no note waits for."""
        for ref, users in list(self.rename_users.items()):
            users.discard(path)
            if not users:
                del self.rename_users[ref]
                self.ref_renames.pop(ref, None)

    def _forget_renames_to(self, added: set[str]) -> None:
        """A note created under a renamed-away name ends that rename: its `entities:` are the
        person's, not a stale spelling to rewrite."""
        for path in added:
            ref = ref_of_path(path)
            if ref and ref in self.ref_renames:
                self.ref_renames.pop(ref, None)
                self.rename_users.pop(ref, None)
            old_id = expected_id(path)
            if old_id:
                self.id_renames.pop(old_id, None)

    async def rename(self, old: str, new: str) -> int:
        """The plugin's rename event (Obsidian renamed or moved a note)."""
        async with self.lock:
            await asyncio.to_thread(self.vault.refresh, {old, new})
            state = self.vault.state
            if old in state.notes or new not in state.notes:
                # Nothing was renamed (both exist, or the new one does not): rewrite no refs.
                return 0
            count = self._record_rename(old, new)
            changed = self._recheck({old, new})
        if changed:
            self.notify("findings.changed", self._findings_event(sorted(changed)))
        self._wake.set()
        return count

    # --- automatic fixes -------------------------------------------------------------------

    def _allowed(self) -> set[str]:
        allow = set()
        if self.settings.auto_fix_footer:
            allow.add(FOOTER)
        if self.settings.auto_fix_cross_refs:
            allow.add(CROSS_REFS)
        return allow

    def _machine_fix_candidates(self) -> list[str]:
        kinds = {"footer_stale": FOOTER, "cross_refs_stale": CROSS_REFS, "wiki_drift": FOOTER}
        allow = self._allowed()
        out = []
        for path, items in self.findings.items():
            if is_memory_path(path) and any(kinds.get(f.check) in allow for f in items):
                out.append(path)
        return out

    def plan_machine_edit(self, path: str) -> PlannedEdit | None:
        """The one edit that applies pending renames and refreshes machine-owned surfaces."""
        state = self.vault.state
        read = self.vault.read(path)
        if not isinstance(read, NoteText):
            return None
        if path in self.held:
            if self.held[path] == sha256_bytes(read.raw_bytes):
                return None
            del self.held[path]
        note = state.notes.get(path)
        if note is None or note.text_hash != read.text_hash:
            self.vault.refresh({path})
            note = state.notes.get(path)
        if note is None or note.text_hash != read.text_hash or fixable(note) is not None or odd_entities(note):
            # The refresh read the file again and found other text: plan only from one read
            # (the file changed; the watcher brings it back when it is quiet).
            return None
        reasons: list[str] = []
        spans = []
        data = note.frontmatter or {}
        entries = entity_entries(note)
        renamed = [self._renamed(path, e) for e in entries]
        block = note.fm_block  # entities and an id are read from it, so it is there when they are
        if renamed != entries and block is not None:
            spans.append(fm.set_key(read.text, block, "entities", renamed))
            reasons.append("entities: follow a rename")
        else:
            self._rename_done(path)  # no rename left to apply here
        old_id = data.get("id")
        if (
            isinstance(old_id, str)
            and old_id in self.id_renames
            and expected_id(path) == self.id_renames[old_id]
            and block is not None
        ):
            spans.append(fm.set_key(read.text, block, "id", self.id_renames[old_id]))
            reasons.append("id follows the rename")
        raw1, text1, note1 = read.raw, read.text, note
        if spans:
            raw1 = apply_spans(read.raw, read.shape, spans)
            text1, _ = normalise(raw1)
            note1 = parse_note(path, text1, sha256_text(text1))
            state.upsert_note(note1)  # so the footer is planned from the renamed entities
        shape1 = normalise(raw1)[1]
        plan = plan_fix(state, note1, text1, analysis_for(state, self.analysis))
        allow = self._allowed()
        raw2 = apply_spans(raw1, shape1, plan.only(allow))
        reasons += [r for r, k in zip(plan.reasons, plan.kinds) if k in allow]
        if note1 is not note:
            state.upsert_note(note)  # the disk still has the old text until the write lands
        if raw2 == read.raw:
            return None
        new_text = normalise(raw2)[0]
        edit = Edit(path, sha256_bytes(read.raw_bytes), raw2.encode("utf-8"), "; ".join(reasons))
        return PlannedEdit(edit, new_text, read.text_hash, reasons, read.raw_bytes)

    def _plan_batch(self, paths: list[str]) -> list[PlannedEdit]:
        return [p for p in map(self._plan_one, paths) if p]

    def _plan_one(self, path: str) -> PlannedEdit | None:
        """`plan_machine_edit`, but one note that cannot be planned (unreadable, vanished) is
        reported and skipped, never the end of the whole batch."""
        try:
            return self.plan_machine_edit(path)
        except Exception as exc:  # noqa: BLE001 - one note must not drop the others
            log.warning("cannot plan a fix for %s: %s", path, exc)
            self.last_error = f"{path} not fixed: {exc}"
            return None

    def _heard_write(self, path: str, digest: str | None) -> None:
        """The writer wrote `path` in this process (any pass, method or undo): its watcher event
        is ours, known by the hash the writer recorded (writer.listen_for_writes)."""
        if digest is None:
            self.own_writes.pop(path, None)
        else:
            self.own_writes[path] = digest

    async def after_write(self, paths: list[str], reason: str, run: str | None = None) -> None:
        """What follows every write a method or pass made: count it, re-check the notes it
        touched, tell the clients (`wrote`, then `findings.changed`)."""
        if not paths:
            return
        self.record_write(paths, run)
        changed = await self.run(self._recheck, set(paths))
        self.notify("wrote", {"paths": list(paths), "reason": reason})
        self.notify("findings.changed", self._findings_event(sorted(changed)))

    def record_write(self, paths: list[str], run: str | None) -> None:
        """Count a write (automatic, by the plugin, or by a method) for `status`."""
        if paths:
            self.writes += len(paths)
            self.last_write = {"time": dt.datetime.now(dt.UTC).isoformat(), "paths": list(paths), "run": run}

    def _write(self, planned: list[PlannedEdit], run: Run) -> list[str]:
        written_before, conflicts_before = len(run.written), len(run.conflicts)
        for item in planned:
            if run.write(item.edit):
                self._rename_done(item.edit.path)
        written = run.written[written_before:]
        conflicts = run.conflicts[conflicts_before:]
        for path, reason in run.failed.items():
            if self.write_failures.get(path) != reason:
                log.warning("not written: %s: %s", path, reason)
                self.last_error = f"{path} not written: {reason}"
            self.write_failures[path] = reason
        if written:
            self.vault.refresh(set(written), store=False)
            self.record_write(written, run.id)
        if conflicts:
            self.vault.refresh(set(conflicts), store=False)
        return written

    def live_editors(self) -> list[EditorState]:
        """The editor states of connections still open (a closed one's state goes with it)."""
        for key, state in list(self.editors.items()):
            if state.connection is not None and getattr(state.connection, "closed", False):
                del self.editors[key]
        return list(self.editors.values())

    @property
    def editor(self) -> EditorState:
        """Every live connection's editor state together: files open anywhere, the note typed
        in most recently. (For reading; `set_editor` changes one connection's own state.)"""
        editors = self.live_editors()
        latest = max(editors, key=lambda e: e.last_keystroke or 0.0, default=EditorState())
        return EditorState(latest.active, set().union(*(e.open for e in editors)), latest.last_keystroke, latest.connection)

    def editor_with(self, path: str) -> EditorState | None:
        """The live editor that has `path` open (the one to ask to apply an edit to it)."""
        return next((e for e in self.live_editors() if path in e.open and e.connection is not None), None)

    def _ready(self, now: float) -> tuple[list[str], float | None]:
        """Paths whose automatic fix may run now, and when to look again."""
        quiet = self.settings.quiet_seconds
        typing: dict[str, float] = {}  # path -> last keystroke in it, on any connection
        for state in self.live_editors():
            if state.active and state.last_keystroke is not None and time.time() - state.last_keystroke < quiet:
                typing[state.active] = max(typing.get(state.active, 0.0), state.last_keystroke)
        ready, next_at = [], None
        for path, at in list(self.due.items()):
            at = max(at, self.changed_at.get(path, 0) + quiet)
            if path in typing:
                at = max(at, now + quiet - (time.time() - typing[path]))
            if at <= now:
                ready.append(path)
            else:
                next_at = at if next_at is None else min(next_at, at)
        return ready, next_at

    async def _fix_scheduler(self) -> None:
        """Sleep until the next file is quiet (no polling), then fix what is due.

        Nothing may end this loop but cancellation: an error is recorded in `status` and the
        loop goes on (a dead scheduler would leave every later fix pending forever).
        """
        while True:
            # Clear before looking: a change that arrives from here on sets it again, so the
            # wait below cannot miss it (it did when a cache flush ran between look and wait).
            self._wake.clear()
            ready, next_at = self._ready(time.monotonic())
            if ready:
                try:
                    await self._fix_due(ready)
                except Exception as exc:  # noqa: BLE001 - keep serving; say what failed
                    self.last_error = f"automatic fix failed: {exc}"
                    log.exception("automatic fix failed")
                    await asyncio.sleep(0.5)  # do not spin on a fix that keeps failing
                continue
            timeout = None if next_at is None else max(0.0, next_at - time.monotonic())
            if timeout is None or timeout > 1.0:
                try:
                    await self.run(self.vault.flush_cache)  # idle: now SQLite may have its turn
                except Exception as exc:  # noqa: BLE001 - the cache is derived data
                    self.last_error = f"saving the parse cache failed: {exc}"
                    log.exception("saving the parse cache failed")
                if self._wake.is_set():
                    continue  # something came in while the cache was written
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass

    FIX_CHUNK = 200  # files per lock hold: a first start on a big vault must not stall the socket

    async def _fix_due(self, paths: list[str]) -> None:
        for path in paths:
            self.due.pop(path, None)
        run = Run(self.root, UPKEEP_LABEL)  # one journaled unit for the whole batch, for undo
        try:
            await self._fix_batch(paths, run)
        finally:
            run.close()  # an undo waiting for this batch may go now

    async def _fix_batch(self, paths: list[str], run: Run) -> None:
        via_plugin: list[PlannedEdit] = []
        for i in range(0, len(paths), self.FIX_CHUNK):
            chunk = paths[i : i + self.FIX_CHUNK]
            async with self.lock:
                # Taken off `due`, so say so in `status` while a large batch is planned and written.
                was_busy, self.busy = self.busy, self.busy or "fix"
                try:
                    planned = await asyncio.to_thread(self._plan_batch, chunk)
                    direct = [p for p in planned if p.edit.path not in self.editor.open]
                    via_plugin += [p for p in planned if p.edit.path in self.editor.open]
                    written = await asyncio.to_thread(self._write, direct, run) if direct else []
                    changed = await asyncio.to_thread(self._recheck, set(written)) if written else set()
                finally:
                    self.busy = was_busy
            if written:
                self.notify("wrote", {"paths": written, "reason": "machine-owned surfaces kept current"})
            if changed:
                self.notify("findings.changed", self._findings_event(sorted(changed)))
        for item in via_plugin:
            await self._edit_through_plugin(item, run)

    def schedule_machine_fixes(self) -> int:
        """Queue every note whose machine-owned surfaces are stale (e.g. auto-fixes switched on)."""
        now = time.monotonic()
        paths = self._machine_fix_candidates()
        for path in paths:
            if path not in self.held:
                self.due.setdefault(path, now)
        self._wake.set()
        return len(paths)

    async def _edit_through_plugin(self, item: PlannedEdit, run: Run) -> None:
        """Ask the plugin to apply an edit to an open file, journaled in `run` once applied;
        if it cannot, try again later."""
        path = item.edit.path
        ok = False
        holder = self.editor_with(path)
        if self.request_edit is not None and holder is not None:
            try:
                answer = await self.request_edit(
                    holder.connection,
                    {"path": path, "old_hash": item.old_text_hash, "new_text": item.new_text},
                )
                ok = bool(isinstance(answer, dict) and answer.get("applied"))
            except Exception as exc:  # noqa: BLE001 - the plugin may be gone
                log.info("apply_edit for %s failed: %s", path, exc)
        if ok:
            after = item.new_text.encode("utf-8")  # what the plugin writes: the normalised text
            self.own_writes[path] = sha256_of(after)  # before the journal: the watcher may see it first
            self._rename_done(path)
            await asyncio.to_thread(run.record_applied, path, item.old_bytes, after, item.edit.reason)
            self.record_write([path], run.id)
            self.notify("wrote", {"paths": [path], "reason": "applied by the plugin in the open editor"})
        else:
            self.due[path] = time.monotonic() + self.settings.quiet_seconds
            self._wake.set()

    def set_editor(self, active: str | None, open_paths: list[str], last_keystroke_ms: float | None, connection: Any) -> None:
        """Set the editor state of `connection` (only its own: another client's stays)."""
        key = id(connection)
        before = self.editors.get(key, EditorState()).open
        self.editors[key] = EditorState(
            active, set(open_paths), (last_keystroke_ms / 1000.0) if last_keystroke_ms else None, connection
        )
        if before - set(open_paths):
            self._wake.set()

    # --- status -------------------------------------------------------------------------

    def status(self, port: int | None) -> dict[str, Any]:
        state = self.vault.state
        by_check, _ = self.finding_counts()
        links = sum(len(n.links) for n in state.notes.values())
        unresolved = sum(t.count(None) for t in state.resolved.values())
        return {
            "version": _version(),
            "pid": os.getpid(),
            "port": port,
            "vault": str(self.root),
            "counts": {
                "markdown_files": len(state.notes) + len(state.unreadable),
                "memory_files": memory_file_count(state),
                "links": links,
                "unresolved": unresolved,
                "orphans": by_check.get("orphan", 0),
            },
            "findings": by_check,
            "last_write": self.last_write,
            "last_error": self.last_error,
            "writes": self.writes,
            "busy": self.busy,
            "pending": len(self.due),
            "index": self._index_status(),
        }

    # --- search index: a background updater (palinode_vault.index.worker) -------------------

    def _start_index(self) -> None:
        """Start keeping `.palinode/index.db` current in a worker thread (PALINODE_NO_INDEX=1: off)."""
        if os.environ.get("PALINODE_NO_INDEX") == "1":
            self.index_error = "the search index is switched off (PALINODE_NO_INDEX=1)"
            return
        from palinode_vault.index.worker import IndexWorker

        loop = asyncio.get_running_loop()

        def notify(method: str, params: dict) -> None:
            loop.call_soon_threadsafe(self.notify, method, params)

        try:
            self.index_worker = IndexWorker(
                self.root,
                model_path=self.settings.embedding_model,
                notify=notify,
                snapshot=lambda: self.vault.state.notes,
                max_bytes=self.settings.max_note_bytes,
                last_keystroke=lambda: self.editor.last_keystroke,
            )
            self.index_worker.start(full=True)
        except Exception as exc:  # noqa: BLE001 - serve without search rather than not at all
            self.index_worker = None
            self.index_error = f"the search index cannot be opened: {exc}"
            log.exception("search index unavailable")

    async def _stop_index(self) -> None:
        worker, self.index_worker = self.index_worker, None
        if worker is not None:
            await asyncio.to_thread(worker.stop)

    def _index_changed(self, paths: set[str]) -> None:
        if self.index_worker is not None:
            self.index_worker.enqueue(paths)

    def _index_status(self) -> dict[str, Any]:
        if self.index_worker is None:
            return {
                "mode": "keyword",
                "driver": None,
                "model": None,
                "reason": self.index_error or "the search index is not started yet",
            }
        return self.index_worker.describe()


def in_order(findings: list[Finding], first: int | None = None) -> list[Finding]:
    """Findings by path, line and check; with `first`, only the first that many (half a million
    sorted at once is one long C call holding the GIL, and the event loop waits for it)."""
    key = lambda f: (f.path, f.line, f.check)  # noqa: E731
    if first is not None and len(findings) > first:
        return heapq.nsmallest(first, findings, key=key)
    return sorted(findings, key=key)


def _version() -> str:
    from palinode_vault import __version__

    return __version__
