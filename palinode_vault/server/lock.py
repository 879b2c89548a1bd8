"""One sidecar per vault: an advisory lock on `VAULT/.palinode/sidecar.lock`.

The lock is `fcntl.flock` on a file descriptor kept open for the life of the process, so the
kernel releases it when the process dies in any way (even `kill -9`): a stale lock cannot
block the next start. The pid written inside is only for messages.
The file itself is never deleted: unlinking a lock file lets two processes lock two
different inodes at once.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["VaultLocked", "VaultLock", "lock_path", "holder"]

FILENAME = "sidecar.lock"


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


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


class VaultLock:
    """The single-instance lock. `acquire()` raises `VaultLocked` naming the holder's pid.

    Use as a context manager, or call `acquire()` / `release()`.
    """

    def __init__(self, vault: Path) -> None:
        self.vault = Path(vault)
        self.path = lock_path(self.vault)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock without waiting, or raise `VaultLocked`."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise VaultLocked(self.vault, pid) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Let go of the lock (also happens when the process exits)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)  # informative only: nobody holds it now
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> VaultLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def holder(vault: Path) -> int | None:
    """The pid of the process holding the vault's lock, 0 if held but pid unknown, None if free.

    It probes with a shared lock for an instant; a sidecar starting in that very instant
    would be refused, so call it for status, not in a loop.
    """
    path = lock_path(vault)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd) or 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
