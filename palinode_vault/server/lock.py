"""One sidecar per vault: a lock on `VAULT/.palinode/sidecar.lock`, through `filelock`.

`filelock` locks with `fcntl.flock` where it exists and `msvcrt.locking` on Windows: the lock
is held on a file descriptor kept open for the life of the process, so the operating system
releases it when the process dies in any way (even `kill -9`) and a stale lock cannot block the
next start. On a platform with neither it falls back to a lock file holding the owner's pid,
which it takes over when that process is gone.

The pid of the holder goes in `sidecar.pid` beside it, for messages only (`filelock` truncates
the lock file when it opens it). Both files are opened without following a symlink: a crafted
`.palinode/` must not make `serve` truncate a file elsewhere.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from palinode_vault.pathsafe import UnsafePrivatePath, open_private, private_dir, read_private

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "only soft file lock is available": said in the docstring
    from filelock import FileLock, Timeout

__all__ = ["VaultLocked", "VaultLock", "lock_path", "holder"]

FILENAME = "sidecar.lock"
PID_FILENAME = "sidecar.pid"


class VaultLocked(RuntimeError):
    """Another process already runs a sidecar on this vault."""

    def __init__(self, vault: Path, pid: int | None) -> None:
        self.vault = vault
        self.pid = pid
        who = f"pid {pid}" if pid else "a process whose pid is not written yet"
        stop = f"stop it first (kill {pid})" if pid else "stop it first"
        super().__init__(f"a sidecar already runs on {vault}: {who} holds {lock_path(vault)}; {stop}")


def lock_path(vault: Path) -> Path:
    """Where the lock file of `vault` lives."""
    return Path(vault) / ".palinode" / FILENAME


def _pid_path(vault: Path) -> Path:
    return Path(vault) / ".palinode" / PID_FILENAME


def _read_pid(vault: Path) -> int | None:
    try:
        text = read_private(_pid_path(vault), 32).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None


def _write_pid(vault: Path, pid: int | None) -> None:
    try:
        fd = open_private(_pid_path(vault), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    except OSError:
        return  # informative only
    try:
        if pid is not None:
            os.write(fd, f"{pid}\n".encode())
    finally:
        os.close(fd)


def _file_lock(vault: Path) -> FileLock:
    """The lock object, after checking that neither `.palinode/` nor the lock file is a symlink."""
    private_dir(vault)
    path = lock_path(vault)
    if os.path.islink(path):
        raise UnsafePrivatePath(f"{path} is a symlink; palinode-vault does not follow it (delete it)")
    return FileLock(str(path), timeout=0, mode=0o600, thread_local=False)


class VaultLock:
    """The single-instance lock. `acquire()` raises `VaultLocked` naming the holder's pid.

    Use as a context manager, or call `acquire()` / `release()`.
    """

    def __init__(self, vault: Path) -> None:
        self.vault = Path(vault)
        self.path = lock_path(self.vault)
        self._lock: FileLock | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._lock is not None

    def acquire(self) -> None:
        """Take the lock without waiting, or raise `VaultLocked`."""
        if self._lock is not None:
            return
        lock = _file_lock(self.vault)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise VaultLocked(self.vault, _read_pid(self.vault)) from None
        _write_pid(self.vault, os.getpid())
        self._lock = lock

    def release(self) -> None:
        """Let go of the lock (also happens when the process exits)."""
        if self._lock is None:
            return
        lock, self._lock = self._lock, None
        try:
            _write_pid(self.vault, None)  # informative only: nobody holds it now
        finally:
            lock.release(force=True)

    def __enter__(self) -> VaultLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def holder(vault: Path) -> int | None:
    """The pid of the process holding the vault's lock, 0 if held but pid unknown, None if free.

    It probes by taking the lock for an instant; a sidecar starting in that very instant
    would be refused, so call it for status, not in a loop.
    """
    if not lock_path(vault).exists():
        return None
    try:
        lock = _file_lock(vault)
        lock.acquire(timeout=0)
    except Timeout:
        return _read_pid(vault) or 0
    except OSError:
        return None  # cannot even open it (read-only vault, a symlink): nobody serves from here
    lock.release(force=True)
    return None
