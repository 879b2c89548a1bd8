"""Keeping the index current inside the sidecar: a background thread, so the socket stays
responsive while notes are chunked and embedded.

The worker reads and parses changed files itself (it never touches the sidecar's vault state
from its thread, except to copy the list of notes once at start), commits in batches, and
reports `progress` notifications. Queries use a second connection (WAL: readers never wait
for the writer) and the same loaded model.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from palinode_vault.core.note import Note, parse_note
from palinode_vault.index.model import ModelSlot
from palinode_vault.index.store import Index
from palinode_vault.vault import NoteText, is_note, read_note_text

log = logging.getLogger(__name__)

Notify = Callable[[str, dict], Any]
#: No keystroke for this long and the person counts as away: the bulk index may use every core.
IDLE_SECONDS = 60.0


def machine_busy(own_threads: int) -> bool:
    """True when other programs keep at least one core busy (1-minute load average less our own
    threads); False where the load average is unknown (Windows)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return False
    return load - own_threads >= 1.0


class Pace:
    """How many threads the bulk index uses: every core while the person is away and the machine
    otherwise idle, one the moment they type (or something else needs the CPU).

    `last_keystroke()` gives the time (`time.time()`) of the editor's last keystroke, or None."""

    def __init__(
        self,
        last_keystroke: Callable[[], float | None] | None = None,
        cores: int | None = None,
        idle_seconds: float = IDLE_SECONDS,
        busy: Callable[[int], bool] = machine_busy,
    ) -> None:
        self.last_keystroke = last_keystroke or (lambda: None)
        self.busy = busy
        self.cores = max(1, cores or os.cpu_count() or 1)
        self.idle_seconds = idle_seconds
        self.threads = 1
        self.why = "starting"

    def __call__(self) -> int:
        typed = self.last_keystroke()
        if typed is not None and time.time() - typed < self.idle_seconds:
            self.threads, self.why = 1, "the person is typing: one thread"
        elif self.busy(self.threads):
            self.threads, self.why = 1, "the machine is busy with other programs: one thread"
        else:
            self.threads, self.why = self.cores, f"idle: all {self.cores} cores"
        return self.threads


class IndexWorker:
    """Owns the sidecar's index: a writer thread and a reader for queries."""

    def __init__(
        self,
        root: Path,
        *,
        model_path: str | None = None,
        notify: Notify | None = None,
        snapshot: Callable[[], Mapping[str, Note]] | None = None,
        max_bytes: int = 10 * 1024 * 1024,
        model: ModelSlot | None = None,
        last_keystroke: Callable[[], float | None] | None = None,
    ) -> None:
        self.root = Path(root)
        self.model = model or ModelSlot(model_path)
        self.notify = notify or (lambda method, params: None)
        self.snapshot = snapshot
        self.max_bytes = max_bytes
        self.writer = Index(self.root, model=self.model)
        self.reader = Index(self.root, model=self.model)
        self.pace = Pace(last_keystroke)
        self.writer.threads_now = self.pace
        self.progress: dict[str, Any] | None = None  # the running phase, with rate and time left
        self._phase_start: tuple[str, float, int] | None = None
        self.busy: str | None = None
        self.last_error: str | None = None
        self.last_report: dict[str, Any] | None = None
        self._paths: set[str] = set()
        self._full = False
        self._closing = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="palinode-index", daemon=True)
        self._last_notify = 0.0

    # -- control ------------------------------------------------------------------------

    def start(self, full: bool = True) -> None:
        """Start the thread; `full` first brings the whole index in line with the vault."""
        with self._cond:
            self._full = full
        self._thread.start()

    def enqueue(self, paths: set[str] | list[str]) -> None:
        """Files that changed, appeared or disappeared (vault-relative)."""
        notes = {p for p in paths if is_note(p)}
        if not notes:
            return
        with self._cond:
            self._paths |= notes
            self._cond.notify()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the current batch (work done so far is committed) and close."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self.writer.stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        for index in (self.writer, self.reader):
            try:
                index.close()
            except Exception:  # noqa: BLE001 - closing twice or from another thread
                pass

    def interrupt(self, timeout: float = 30.0) -> bool:
        """Stop the work under way after its current batch (what is committed stays), then go on
        as before (a cancelled reindex job). Notes it had not reached are indexed again at their
        next change or reindex. False when the work did not stop within `timeout`."""
        self.writer.stop.set()
        try:
            deadline = time.monotonic() + timeout
            while self.busy is not None and time.monotonic() < deadline:
                time.sleep(0.02)
            return self.busy is None
        finally:
            if not self._closing:
                self.writer.stop.clear()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until no work is queued or running (tests, benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                if not self._paths and not self._full and self.busy is None:
                    return True
            time.sleep(0.02)
        return False

    def describe(self) -> dict[str, Any]:
        """The `index` part of `status`."""
        try:
            info = self.reader.describe()
        except Exception as exc:  # noqa: BLE001
            info = {"mode": "keyword", "driver": None, "model": None, "reason": f"index unavailable: {exc}"}
        info["busy"] = self.busy
        info["last_error"] = self.last_error
        info["progress"] = dict(self.progress) if self.progress else None
        info["threads"] = {"now": self.pace.threads, "why": self.pace.why}
        return info

    # -- the thread ---------------------------------------------------------------------

    def _progress(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if self._phase_start is None or self._phase_start[0] != phase or done < self._phase_start[2]:
            self._phase_start = (phase, now, done)
        _, since, first = self._phase_start
        rate = (done - first) / (now - since) if now > since and done > first else None
        left = round((total - done) / rate, 1) if rate and done < total else (0.0 if done >= total else None)
        self.progress = {
            "phase": phase,
            "done": done,
            "total": total,
            "per_second": round(rate, 2) if rate else None,
            "seconds_left": left,
        }
        if done >= total or done == 0 or now - self._last_notify >= 0.5:
            self._last_notify = now
            self.notify("progress", dict(self.progress))

    def _read(self, path: str) -> str | None:
        got = read_note_text(self.root, path, self.max_bytes)
        return got.text if isinstance(got, NoteText) else None

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closing and not self._full and not self._paths:
                    self._cond.wait()
                if self._closing:
                    return
                full, paths = self._full, self._paths
                self._full, self._paths = False, set()
                self.busy = "index"
            try:
                if full and self.snapshot is not None:
                    report = self.writer.sync(self._copy_snapshot(), self._read, self._progress)
                else:
                    report = self.writer.update(self._changes(paths), self._read, self._progress)
                self.last_report = report.to_json()
                self.last_error = None
            except Exception as exc:  # noqa: BLE001 - keep serving keyword search; say what failed
                self.last_error = f"indexing failed: {exc}"
                log.exception("indexing failed")
            finally:
                with self._cond:
                    self.busy = None
                    self.progress = None
                    self._phase_start = None

    def _copy_snapshot(self) -> dict[str, Note]:
        snapshot = self.snapshot
        assert snapshot is not None, "called only when the sidecar gave a snapshot"
        for _ in range(20):  # the sidecar may be changing its dict in another thread
            try:
                return dict(snapshot())
            except RuntimeError:
                time.sleep(0.01)
        return dict(snapshot())

    def _changes(self, paths: set[str]) -> dict[str, Note | None]:
        changes: dict[str, Note | None] = {}
        for path in sorted(paths):
            text = self._read(path) if (self.root / path).is_file() else None
            if text is None:
                changes[path] = None
                continue
            from palinode_vault.core.text import sha256_text

            changes[path] = parse_note(path, text, sha256_text(text))
        return changes
