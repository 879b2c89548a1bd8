"""Writing notes safely: atomic, conflict-checked, journaled for undo.

Every write goes: journal entry (write-ahead, fsynced) -> temp file beside the note (fsynced,
same mode) -> re-read the note and compare with the bytes the edit was computed from ->
`os.replace`. A crash at any point leaves the note either before or after, never partial;
leftover temp files are removed on the next start (`clean_temp_files`), and the journal can
undo whatever did land.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

TEMP_MARK = ".palinode-tmp-"


def sha256_bytes(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Conflict(Exception):
    """The file changed between reading it and writing it; nothing was written."""

    def __init__(self, path: str):
        super().__init__(f"{path} changed on disk since it was read; not written (run again)")
        self.path = path


@dataclass(frozen=True)
class Edit:
    """New bytes for one vault file, valid only while the file still has `old_hash`."""

    path: str  # vault-relative
    old_hash: str | None  # sha256 of the bytes the edit was computed from (None: new file)
    new_bytes: bytes
    reason: str = ""


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def write_atomic(root: Path, edit: Edit) -> None:
    """Replace one file atomically if it still has the expected content; raise Conflict if not."""
    target = root / edit.path
    folder = target.parent
    folder.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    tmp = folder / f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(edit.new_bytes)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        current = _read(target)
        if sha256_bytes(current) != edit.old_hash:
            raise Conflict(edit.path)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder)


def _writer_alive(name: str) -> bool:
    """True when the temp file's name carries the pid of a process that is still running.

    Such a file may be in flight (a `fix` from the CLI while the sidecar starts, or the other
    way round): removing it would make that writer's `os.replace` fail.
    """
    rest = name.split(TEMP_MARK, 1)[1]
    pid_text = rest.split("-", 1)[0]
    if not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except PermissionError:
        return True  # the process exists (another user's)
    except (ProcessLookupError, OverflowError, ValueError):
        return False
    return True


def clean_temp_files(root: Path) -> list[str]:
    """Remove temp files a crashed writer left behind. Returns their vault-relative paths.

    Temp files of a writer that is still running are left alone.
    """
    removed = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".obsidian", ".trash")]
        for name in filenames:
            if TEMP_MARK in name and not _writer_alive(name):
                full = Path(dirpath) / name
                try:
                    full.unlink()
                    removed.append(full.relative_to(root).as_posix())
                except OSError:
                    pass
    return removed


# --- the journal ----------------------------------------------------------------------------


def journal_dir(root: Path) -> Path:
    return root / ".palinode" / "journal"


class Run:
    """One journaled unit (a `fix`, a consolidation, a sidecar batch) that `undo` reverts whole."""

    def __init__(self, root: Path, label: str):
        self.root = root
        self.label = label
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        self.id = f"{stamp}-{secrets.token_hex(3)}"
        self.written: list[str] = []
        self.conflicts: list[str] = []
        self._file: Path | None = None

    def _append(self, record: dict) -> None:
        if self._file is None:
            folder = journal_dir(self.root)
            folder.mkdir(parents=True, exist_ok=True)
            self._file = folder / f"{self.id}.jsonl"
            header = {"run": self.id, "label": self.label, "time": dt.datetime.now(dt.timezone.utc).isoformat()}
            with open(self._file, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(header) + "\n")
        with open(self._file, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def record_applied(self, path: str, before: bytes | None, after: bytes, reason: str) -> None:
        """Journal an edit another writer has applied for us (the plugin, through Obsidian's
        editor, for a file open there), so `undo` reverts it like our own writes and the
        self-review does not take it for the person's edit.

        Recorded after the plugin confirms, not before like `write`: the plugin may refuse (the
        person typed), and a run of refused edits would be an `undo` that restores nothing.
        """
        self._append({"path": path, "before": None if before is None else base64.b64encode(before).decode("ascii"),
                      "before_hash": sha256_bytes(before), "after_hash": sha256_bytes(after), "reason": reason})
        self.written.append(path)

    def write(self, edit: Edit) -> bool:
        """Journal then write one edit. False (and recorded as a conflict) if the file moved on."""
        if os.path.islink(self.root / edit.path):
            self.conflicts.append(edit.path)  # os.replace would turn the link into a copy
            return False
        before = _read(self.root / edit.path)
        if sha256_bytes(before) != edit.old_hash:
            self.conflicts.append(edit.path)
            return False
        self._append(
            {
                "path": edit.path,
                "before": None if before is None else base64.b64encode(before).decode("ascii"),
                "before_hash": edit.old_hash,
                "after_hash": sha256_bytes(edit.new_bytes),
                "reason": edit.reason,
            }
        )
        try:
            write_atomic(self.root, edit)
        except Conflict:
            self.conflicts.append(edit.path)
            return False
        self.written.append(edit.path)
        return True


@dataclass
class UndoResult:
    run: str | None
    label: str | None
    restored: list[str]
    skipped: list[tuple[str, str]]  # (path, why)


def _runs(root: Path) -> list[Path]:
    folder = journal_dir(root)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.jsonl") if not p.name.endswith(".undone.jsonl"))


def undo_last(root: Path) -> UndoResult:
    """Revert the most recent journaled run that is not undone yet.

    A file is restored only if it still has the content the run wrote; a file the person has
    edited since is left alone and reported.
    """
    runs = _runs(root)
    if not runs:
        return UndoResult(None, None, [], [])
    path = runs[-1]
    if not path.name.endswith(".undoing.jsonl"):
        # Say "being undone" before touching a file, so a watching sidecar that sees the
        # restored files knows them for an undo (and a crash mid-undo resumes here next time).
        undoing = path.with_name(path.name[: -len(".jsonl")] + ".undoing.jsonl")
        os.replace(path, undoing)
        path = undoing
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except ValueError:
            # A crash while appending leaves a cut last line; its write had not started (the
            # file is replaced only after the line is fsynced), so there is nothing to undo.
            break
    if not lines:
        lines = [{"run": path.stem}]
    header, entries = lines[0], lines[1:]
    restored: list[str] = []
    skipped: list[tuple[str, str]] = []
    for entry in reversed(entries):
        rel = entry["path"]
        current = _read(root / rel)
        current_hash = sha256_bytes(current)
        if current_hash == entry["before_hash"]:
            continue  # the write never landed (a crash between journal and replace)
        if current_hash != entry["after_hash"]:
            skipped.append((rel, "changed since it was written; left as it is"))
            continue
        before = None if entry["before"] is None else base64.b64decode(entry["before"])
        if before is None:
            # the run created this file: move it aside rather than delete it
            aside = root / ".palinode" / "undone" / f"{header['run']}" / rel
            aside.parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / rel, aside)
        else:
            write_atomic(root, Edit(rel, current_hash, before, "undo"))
        restored.append(rel)
    os.replace(path, path.with_name(path.name[: -len(".undoing.jsonl")] + ".undone.jsonl"))
    return UndoResult(header["run"], header.get("label"), sorted(restored), skipped)



def recently_undone(root: Path, within_seconds: float = 3600.0) -> dict[str, set[str]]:
    """Files restored by an undo in the last hour: path -> the hashes undo restored them to.

    The sidecar uses this to leave a restored file alone instead of fixing it straight back.
    """
    import time

    folder = journal_dir(root)
    if not folder.is_dir():
        return {}
    cutoff = time.time() - within_seconds
    restored: dict[str, set[str]] = {}
    for path in [*folder.glob("*.undone.jsonl"), *folder.glob("*.undoing.jsonl")]:
        try:
            if path.stat().st_mtime < cutoff:
                continue
            lines = path.read_text(encoding="utf-8").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if entry.get("before_hash"):
                restored.setdefault(entry["path"], set()).add(entry["before_hash"])
    return restored
