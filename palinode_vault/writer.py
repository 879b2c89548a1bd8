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
import re
import secrets
import stat as st
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from palinode_vault.pathsafe import (
    NOT_NOTES,
    PathOutsideVault,
    UnsafePrivatePath,
    inside_private,
    open_private,
    private_dir,
    vault_relative,
)

TEMP_MARK = ".palinode-tmp-"
NAME_BYTES = 255  # the longest file name most file systems allow
UNDO_WAIT_SECONDS = 10.0  # how long undo waits for a run that is still being written
#: The label of the sidecar's automatic upkeep runs (machine-owned surfaces kept current).
UPKEEP_LABEL = "sidecar"
_RUN_ID = re.compile(r"^[0-9]{8}T[0-9]{12}Z-[0-9a-f]{6}$")


def sha256_bytes(data: bytes | None) -> str | None:
    return None if data is None else sha256_of(data)


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class NotWritable(OSError):
    """One file that cannot be written (read-only, outside the vault, not a regular file, a name
    too long, a full disk); `reason` says which. Nothing was written to it."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


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
    """A file's bytes, None when it does not exist; `NotWritable` for anything but a regular
    file (a FIFO would hang the read, a device would never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not st.S_ISREG(os.fstat(fd).st_mode):
            raise NotWritable(str(path), "not a regular file; left alone")
        return handle.read()


def _temp_name(name: str) -> str:
    """A temp name beside `name` that fits in a file name even when `name` itself is as long as
    the file system allows (a 249-byte name is legal; adding the mark to it is not)."""
    suffix = f"{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}"
    room = NAME_BYTES - 1 - len(suffix.encode())
    stem = name.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
    return f".{stem}{suffix}"


def _refuse_escape(root: Path, rel: str) -> None:
    try:
        vault_relative(root, rel)
    except PathOutsideVault as exc:
        raise NotWritable(str(rel), exc.reason) from None


def checked_target(root: Path, rel: str) -> Path:
    """The absolute path for writing vault-relative `rel`, or `NotWritable` saying why not:
    outside the vault (also through a symlinked folder), in `.palinode/`, `.obsidian/`, `.git/`,
    a symlink, not a regular file, or read-only."""
    try:
        vault_relative(root, rel)
    except PathOutsideVault as exc:
        raise NotWritable(str(rel), exc.reason) from None
    target = Path(root) / rel
    if inside_private(root, os.path.realpath(target)) or rel.split("/", 1)[0] in NOT_NOTES:
        raise NotWritable(rel, "inside .palinode/, .obsidian/ or .git/; not a note")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise NotWritable(rel, f"cannot be read: {exc.strerror or exc}") from None
    if st.S_ISLNK(info.st_mode):
        raise NotWritable(rel, "a symlink; writing would replace the link with a copy")
    if not st.S_ISREG(info.st_mode):
        raise NotWritable(rel, "not a regular file; left alone")
    if not info.st_mode & st.S_IWUSR or not os.access(target, os.W_OK):
        raise NotWritable(rel, "read-only; left alone (make it writable to let palinode-vault fix it)")
    return target


# Who hears of each file this process writes in a vault (the sidecar): the hash of the bytes as
# the journal records them, so nobody reads a file back to learn what was written (a save landing
# in between would be taken for our own write and never get its automatic fix).
WriteListener = Callable[[str, "str | None"], None]  # (vault-relative path, sha256 or None: gone)
_write_listeners: dict[str, WriteListener] = {}


def listen_for_writes(root: Path, listener: WriteListener) -> Callable[[], None]:
    """Tell `listener` of every write this process makes under `root`; returns the way to stop."""
    key = str(Path(root).resolve())
    _write_listeners[key] = listener

    def stop() -> None:
        if _write_listeners.get(key) is listener:
            del _write_listeners[key]

    return stop


def _announce(root: Path, path: str, digest: str | None) -> None:
    if _write_listeners:
        listener = _write_listeners.get(str(Path(root).resolve()))
        if listener is not None:
            listener(path, digest)


def write_atomic(root: Path, edit: Edit) -> None:
    """Replace one file atomically if it still has the expected content; raise Conflict if not,
    `NotWritable` (with the reason) when it cannot be written."""
    target = checked_target(root, edit.path)
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            mode = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        tmp = folder / _temp_name(target.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0), mode)
    except OSError as exc:
        raise NotWritable(edit.path, f"cannot be written: {exc.strerror or exc}") from None
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
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, NotWritable):
            raise NotWritable(edit.path, f"cannot be written: {exc.strerror or exc}") from None
        raise
    _announce(root, edit.path, sha256_of(edit.new_bytes))
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


def _vault_id(root: Path) -> str:
    """What binds a journal to its vault: the vault's real path."""
    return os.path.realpath(root)


def _run_lock(folder: Path, run_id: str):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from filelock import FileLock

    return FileLock(str(folder / f"{run_id}.lock"), mode=0o600, thread_local=False)


class Run:
    """One journaled unit (a `fix`, a consolidation, a sidecar batch) that `undo` reverts whole.

    While a run is being written it holds a lock beside its journal, so an `undo` waits for it
    (or refuses) instead of undoing half a run. `close()` lets go (so does the process ending);
    a run that wrote nothing leaves no journal behind for `undo` to "undo".
    """

    def __init__(self, root: Path, label: str):
        self.root = root
        self.label = label
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.id = f"{stamp}-{secrets.token_hex(3)}"
        self.written: list[str] = []
        self.conflicts: list[str] = []
        self.failed: dict[str, str] = {}  # path -> why it could not be written
        self._file: Path | None = None
        self._lock = None

    def _append(self, record: dict) -> None:
        if "path" in record:
            # Every journaled change (memory passes' deletes too) names a checked vault path: a
            # symlinked folder must not lead a write or a delete outside the vault.
            _refuse_escape(self.root, record["path"])
        if self._file is None:
            folder = private_dir(self.root, "journal")
            self._lock = lock = _run_lock(folder, self.id)
            lock.acquire()
            self._file = folder / f"{self.id}.jsonl"
            header = {
                "run": self.id,
                "label": self.label,
                "time": dt.datetime.now(dt.UTC).isoformat(),
                "vault": _vault_id(self.root),
            }
            self._write_line(header, create=True)
        self._write_line(record)

    def _write_line(self, record: dict, create: bool = False) -> None:
        flags = os.O_WRONLY | os.O_APPEND | ((os.O_CREAT | os.O_EXCL) if create else 0)
        assert self._file is not None, "set when the run's first record is written"
        fd = open_private(self._file, flags)
        with os.fdopen(fd, "ab") as handle:
            handle.write((json.dumps(record) + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def close(self) -> None:
        """End the run: drop an empty journal (nothing landed) and let `undo` have it."""
        if self._file is not None and not self.written:
            try:
                self._file.unlink()
            except OSError:
                pass
        if self._lock is not None:
            lock, self._lock = self._lock, None
            lock.release(force=True)
            try:
                os.unlink(lock.lock_file)
            except OSError:
                pass

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def record_applied(self, path: str, before: bytes | None, after: bytes, reason: str) -> None:
        """Journal an edit another writer has applied for us (the plugin, through Obsidian's
        editor, for a file open there), so `undo` reverts it like our own writes and the
        self-review does not take it for the person's edit.

        Recorded after the plugin confirms, not before like `write`: the plugin may refuse (the
        person typed), and a run of refused edits would be an `undo` that restores nothing.
        """
        vault_relative(self.root, path)
        self._append(
            {
                "path": path,
                "before": None if before is None else base64.b64encode(before).decode("ascii"),
                "before_hash": sha256_bytes(before),
                "after_hash": sha256_bytes(after),
                "reason": reason,
            }
        )
        self.written.append(path)
        _announce(self.root, path, sha256_of(after))

    def write(self, edit: Edit) -> bool:
        """Journal then write one edit. False when it was not written: recorded as a conflict
        (the file moved on) or in `failed` with the reason (it cannot be written)."""
        try:
            target = checked_target(self.root, edit.path)
            before = _read(target)
        except NotWritable as exc:
            self.failed[edit.path] = exc.reason
            return False
        except OSError as exc:
            self.failed[edit.path] = f"cannot be read: {exc.strerror or exc}"
            return False
        if sha256_bytes(before) != edit.old_hash:
            self.conflicts.append(edit.path)
            return False
        try:
            self._append(
                {
                    "path": edit.path,
                    "before": None if before is None else base64.b64encode(before).decode("ascii"),
                    "before_hash": edit.old_hash,
                    "after_hash": sha256_bytes(edit.new_bytes),
                    "reason": edit.reason,
                }
            )
        except OSError as exc:
            self.failed[edit.path] = f"the journal cannot be written ({exc}); nothing written"
            return False
        try:
            write_atomic(self.root, edit)
        except Conflict:
            self.conflicts.append(edit.path)
            return False
        except NotWritable as exc:
            self.failed[edit.path] = exc.reason
            return False
        self.written.append(edit.path)
        return True


@dataclass
class UndoResult:
    run: str | None
    label: str | None
    restored: list[str]
    skipped: list[tuple[str, str]]  # (path, why)
    refused: str | None = None  # why nothing was undone (a run still being written, a foreign journal)


def _runs(root: Path) -> list[Path]:
    try:
        folder = private_dir(root, "journal", create=False)
    except (FileNotFoundError, UnsafePrivatePath):
        return []
    return sorted(
        p for p in folder.glob("*.jsonl") if not p.name.endswith(".undone.jsonl") and not p.is_symlink() and p.is_file()
    )


def _journal_lines(path: Path, first_only: bool = False) -> list:
    lines: list = []
    try:
        fd = open_private(path, os.O_RDONLY)
        with os.fdopen(fd, "rb") as handle:
            text = (handle.readline(1 << 20) if first_only else handle.read()).decode("utf-8", "replace")
    except OSError:
        return []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except ValueError:
            # A crash while appending leaves a cut last line; its write had not started (the
            # file is replaced only after the line is fsynced), so there is nothing to undo.
            break
    return lines


def _header(lines: list) -> dict:
    return lines[0] if lines and isinstance(lines[0], dict) and "path" not in lines[0] else {}


def own_journal(root: Path, header: object) -> bool:
    """True when a journal's header says it was written for this vault."""
    return isinstance(header, dict) and header.get("vault") == _vault_id(root)


def _latest_own_run(root: Path) -> Path | None:
    """The newest journal written for this vault. One written for another folder (a vault
    carried here with its .palinode/, or a crafted one) is never replayed: its paths and bytes
    are not ours. A run still being written has no line yet only for an instant; it counts."""
    for path in reversed(_runs(root)):
        lines = _journal_lines(path, first_only=True)
        if not lines:
            run_id = path.name.split(".", 1)[0]
            lock = path.parent / f"{run_id}.lock"
            if lock.exists():
                return path
            continue
        if _header(lines).get("vault") == _vault_id(root):
            return path
    return None


def entry_problem(root: Path, entry: object) -> str | None:
    """Why a journal entry cannot be undone (None: it can). Every path is checked like a path a
    client sends: a crafted journal must not reach a file outside the vault."""
    if not isinstance(entry, dict):
        return "not a journal entry"
    rel = entry.get("path")
    if not isinstance(rel, str):
        return "no path"
    for key in ("before_hash", "after_hash"):
        if entry.get(key) is not None and not isinstance(entry.get(key), str):
            return f"{key} is not a hash"
    if entry.get("before") is not None and not isinstance(entry.get("before"), str):
        return "before is not text"
    try:
        if vault_relative(root, rel) != rel:
            return "path is not in its plain form"
    except PathOutsideVault as exc:
        return exc.reason
    return None


def undo_last(root: Path) -> UndoResult:
    """Revert the most recent journaled run that is not undone yet.

    A file is restored only if it still has the content the run wrote; a file the person has
    edited since is left alone and reported. A run still being written is waited for (up to
    `UNDO_WAIT_SECONDS`), then refused; a journal written for another vault is refused.
    """
    path = _latest_own_run(root)
    if path is None:
        return UndoResult(None, None, [], [])
    return _undo_locked(root, path)


def undo_run(root: Path, run_id: str) -> UndoResult:
    """Revert the run `run_id` (what a client remembers of the person's last action), even when
    runs came after it.

    A later run that wrote one of its files stands in the way. The sidecar's own upkeep
    (`UPKEEP_LABEL`: footers, cross_refs) is derived from the files, so such an upkeep run is
    undone first, newest first; any other later run refuses, naming it, and nothing is undone.
    Without this, the upkeep the sidecar writes a second after an approve or a reject is what
    "undo" would revert, and the person's action would stay.
    """
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        return UndoResult(None, None, [], [], refused=f"{str(run_id)[:80]!r} is not a run id")
    # journal names begin with their run's time: the named run and the ones after it are all we read
    since = [p for p in _runs(root) if p.name.split(".", 1)[0] >= run_id]
    own = [(p, _header(lines), lines) for p in since if own_journal(root, _header(lines := _journal_lines(p)))]
    at = next((i for i, (p, _, _) in enumerate(own) if p.name.split(".", 1)[0] == run_id), None)
    if at is None:
        return UndoResult(run_id, None, [], [], refused=f"run {run_id} is not in the journal (undone already?)")

    def files(lines: list) -> set[str]:
        return {e["path"] for e in lines[1:] if isinstance(e, dict) and isinstance(e.get("path"), str)}

    mine = files(own[at][2])
    upkeep: list[Path] = []
    for path, header, lines in own[at + 1 :]:
        if not files(lines) & mine:
            continue
        if header.get("label") != UPKEEP_LABEL:
            label = header.get("label") if isinstance(header.get("label"), str) else "another run"
            return UndoResult(
                run_id,
                None,
                [],
                [],
                refused=f"a later run ({label}, {path.name.split('.', 1)[0]}) changed its files; undo that first",
            )
        upkeep.append(path)
    restored: set[str] = set()
    skipped: list[tuple[str, str]] = []
    for path in [*reversed(upkeep), own[at][0]]:
        result = _undo_locked(root, path)
        if result.refused:
            return UndoResult(run_id, None, sorted(restored), skipped, refused=result.refused)
        restored.update(result.restored)
        skipped += result.skipped
    label = own[at][1].get("label")
    return UndoResult(run_id, label if isinstance(label, str) else None, sorted(restored), skipped)


def _undo_locked(root: Path, path: Path) -> UndoResult:
    """Undo the run journaled in `path`, holding its lock (waiting for it while it is written)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from filelock import Timeout

    run_id = path.name.split(".", 1)[0]
    lock = _run_lock(path.parent, run_id) if _RUN_ID.match(run_id) else None
    if lock is not None:
        try:
            lock.acquire(timeout=UNDO_WAIT_SECONDS)
        except Timeout:
            return UndoResult(run_id, None, [], [], refused="a run is still being written; undo again when it ends")
    try:
        return _undo_run(root, path, run_id)
    finally:
        if lock is not None:
            lock.release(force=True)
            try:
                os.unlink(lock.lock_file)
            except OSError:
                pass


def _undo_run(root: Path, path: Path, run_id: str) -> UndoResult:
    lines = _journal_lines(path)
    header = _header(lines)
    entries = lines[1:] if header else lines
    label = header.get("label") if isinstance(header.get("label"), str) else None
    if header.get("vault") != _vault_id(root):
        return UndoResult(run_id, label, [], [], refused=f"{path.name} was not written for this vault; not undone")
    if not path.name.endswith(".undoing.jsonl"):
        # Say "being undone" before touching a file, so a watching sidecar that sees the
        # restored files knows them for an undo (and a crash mid-undo resumes here next time).
        undoing = path.with_name(path.name[: -len(".jsonl")] + ".undoing.jsonl")
        os.replace(path, undoing)
        path = undoing
    restored: list[str] = []
    skipped: list[tuple[str, str]] = []
    for entry in reversed(entries):
        problem = entry_problem(root, entry)
        if problem is not None:
            skipped.append((str(entry.get("path") if isinstance(entry, dict) else entry)[:200], f"not undone: {problem}"))
            continue
        rel = entry["path"]
        try:
            target = checked_target(root, rel)
            current = _read(target)
        except NotWritable as exc:
            skipped.append((rel, exc.reason))
            continue
        current_hash = sha256_bytes(current)
        if current_hash == entry.get("before_hash"):
            continue  # the write never landed (a crash between journal and replace)
        if current_hash != entry.get("after_hash"):
            skipped.append((rel, "changed since it was written; left as it is"))
            continue
        try:
            before = None if entry.get("before") is None else base64.b64decode(entry["before"], validate=True)
        except ValueError:
            skipped.append((rel, "not undone: its journal entry is damaged"))
            continue
        if before is not None and sha256_bytes(before) != entry.get("before_hash"):
            skipped.append((rel, "not undone: its journal entry does not match its hash"))
            continue
        try:
            if before is None:
                # the run created this file: move it aside rather than delete it
                aside = private_dir(root, "undone", run_id) / rel
                aside.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                os.replace(target, aside)
                _announce(root, rel, None)
            else:
                write_atomic(root, Edit(rel, current_hash, before, "undo"))
        except (NotWritable, Conflict, OSError) as exc:
            skipped.append((rel, getattr(exc, "reason", None) or f"not undone: {exc}"))
            continue
        restored.append(rel)
    os.replace(path, path.with_name(path.name[: -len(".undoing.jsonl")] + ".undone.jsonl"))
    return UndoResult(run_id, label, sorted(restored), skipped)


def recently_undone(root: Path, within_seconds: float = 3600.0) -> dict[str, set[str]]:
    """Files restored by an undo in the last hour: path -> the hashes undo restored them to.

    The sidecar uses this to leave a restored file alone instead of fixing it straight back.
    """
    import time

    try:
        folder = private_dir(root, "journal", create=False)
    except (FileNotFoundError, UnsafePrivatePath):
        return {}
    cutoff = time.time() - within_seconds
    restored: dict[str, set[str]] = {}
    for path in [*folder.glob("*.undone.jsonl"), *folder.glob("*.undoing.jsonl")]:
        try:
            if path.lstat().st_mtime < cutoff:
                continue
        except OSError:
            continue
        lines = _journal_lines(path)
        if _header(lines).get("vault") != _vault_id(root):
            continue
        for entry in lines[1:]:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("before_hash"), str):
                restored.setdefault(entry["path"], set()).add(entry["before_hash"])
    return restored
